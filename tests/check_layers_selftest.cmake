# check_layers_selftest.cmake -- check_layers.cmake refuses what it is meant
# to refuse.  Builds two small trees in WORK (lil.h copied from SRC): one
# where src/base/ defines a public function, which must fail, and one where
# src/api/ defines it and src/base/ only an internal lil__ function, which
# must pass.  Run: cmake -DSRC=<repo> -DWORK=<dir> -P tests/check_layers_selftest.cmake
foreach(v SRC WORK)
  if(NOT ${v})
    message(FATAL_ERROR "set -D${v}=...")
  endif()
endforeach()

function(make_tree dir base_text api_text)
  file(REMOVE_RECURSE "${dir}")
  file(MAKE_DIRECTORY "${dir}/src/base" "${dir}/src/api")
  configure_file("${SRC}/include/lil/lil.h" "${dir}/include/lil/lil.h" COPYONLY)
  file(WRITE "${dir}/src/base/x.c" "${base_text}")
  file(WRITE "${dir}/src/api/y.c" "${api_text}")
endfunction()

function(run_check dir out_rc out_text)
  execute_process(COMMAND ${CMAKE_COMMAND} -DSRC=${dir}
                          -P ${CMAKE_CURRENT_LIST_DIR}/check_layers.cmake
                  RESULT_VARIABLE rc OUTPUT_VARIABLE text ERROR_VARIABLE text)
  set(${out_rc} ${rc} PARENT_SCOPE)
  set(${out_text} "${text}" PARENT_SCOPE)
endfunction()

set(def "const char *lil_version(void)\n{\n    return \"0\";\n}\n")
set(internal "const char *lil__version(void)\n{\n    return \"0\";\n}\n")

make_tree("${WORK}/bad" "${def}" "")
run_check("${WORK}/bad" rc text)
if(rc EQUAL 0 OR NOT text MATCHES "src/base/x.c: defines lil_version")
  message(FATAL_ERROR "a public function defined in src/base/ was not refused:\n${text}")
endif()

make_tree("${WORK}/good" "${internal}" "${def}")
run_check("${WORK}/good" rc text)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "a public function defined in src/api/ was refused:\n${text}")
endif()
file(REMOVE_RECURSE "${WORK}/bad" "${WORK}/good")
message(STATUS "layers self-test: a public function outside src/api/ is refused")
