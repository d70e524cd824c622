# blueprint_validates.cmake -- one text of `lil new` through the binary.
#
#   cmake -DLIL=<lil> -DYAML=cli/blueprints/<name>.yaml -DOUT=<file> -P ...
#
# `lil new bp-check --blueprint <name> --out OUT` must write the file with
# "@ID@" replaced by bp-check and nothing else changed (it is compiled in as
# it is), and `lil validate --json OUT` must find no error and none of the
# warnings no blueprint may have (vector V42, tests/data/spec/v42-*.yaml).
# from-shell.yaml is the
# text of `lil new --from-shell CMD --until EXPR`: its output is validated.
get_filename_component(name "${YAML}" NAME_WE)
if(name STREQUAL "from-shell")
  set(args --from-shell "test -f ready" --until "state.code == 0")
else()
  set(args --blueprint ${name})
endif()
execute_process(COMMAND "${LIL}" new bp-check ${args} --out "${OUT}" --force
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  list(JOIN args " " shown)
  message(FATAL_ERROR "lil new ${shown}: exit ${rc}\n${out}${err}")
endif()
if(NOT name STREQUAL "from-shell")
  file(READ "${YAML}" want)
  string(REPLACE "@ID@" "bp-check" want "${want}")
  file(READ "${OUT}" got)
  if(NOT got STREQUAL want)
    message(FATAL_ERROR "lil new --blueprint ${name} differs from ${YAML}")
  endif()
endif()
execute_process(COMMAND "${LIL}" validate --json "${OUT}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "lil validate ${OUT}: exit ${rc}\n${out}${err}")
endif()
string(JSON errors GET "${out}" errors)
string(JSON n LENGTH "${out}" diagnostics)
if(NOT errors EQUAL 0)
  message(FATAL_ERROR "${OUT}: ${errors} error(s)\n${out}")
endif()
foreach(i RANGE ${n})
  if(i EQUAL n)
    break()
  endif()
  string(JSON code GET "${out}" diagnostics ${i} code)
  if(code MATCHES "^(ungrounded-exit|cap-only-termination|no-budget)$")
    message(FATAL_ERROR "${OUT}: warning ${code}\n${out}")
  endif()
endforeach()
message(STATUS "${name}: lil new and lil validate ok")
