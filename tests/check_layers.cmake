# check_layers.cmake -- the arrows between the library's folders run one
# way (docs/internals.md).  Every '#include "dir/..."' of a file in src/<A>/
# must name a folder A may use; cli/ uses only <lil/lil.h> and its own
# headers.  Run: cmake -DSRC=<repo> -P tests/check_layers.cmake
#
# Layers, bottom up: base, os, journal, store (with its backends in
# store/file/ and store/pg/), engine; json is a side module (jansson), used
# from lang and engine up.  The loop runtime sits on the engine: the spec
# front end (loopspec) on lang; effects; agents on effects; the runner
# (loop) on all of them; replay tooling and the queue on the runner (lil
# verify's dry runs open a temporary store: replay uses store too).
# supervise (lil_supervise) sits on engine.  history (the read API's folds:
# facts, events, waiting) sits on the runner and the engine.  api/, at the
# top, defines every public lil_* function (checked below) and may include
# anything.
set(allowed_base      base)
set(allowed_os        os base)
set(allowed_journal   journal os base)
set(allowed_store     store journal os base)
set(allowed_json      json base)
set(allowed_engine    engine store os json base)
set(allowed_lang      lang json base)
set(allowed_loopspec  loopspec lang os json base)
set(allowed_effects   effects lang os json base)
set(allowed_agents    agents effects lang os json base)
set(allowed_loop      loop agents effects loopspec lang engine os json base)
set(allowed_replay    replay loop agents effects loopspec lang engine store os json base)
set(allowed_queue     queue loop loopspec engine store os json base)
set(allowed_supervise supervise engine store journal os base)
set(allowed_history   history loop loopspec lang engine store os json base)
set(allowed_api       api history queue replay supervise loop agents effects loopspec lang engine
                      store journal os json base)
set(folders base os journal store json engine lang loopspec effects agents loop replay
            queue supervise history api)

set(bad "")
foreach(dir ${folders})
  file(GLOB_RECURSE files "${SRC}/src/${dir}/*.c" "${SRC}/src/${dir}/*.h")
  foreach(f ${files})
    file(STRINGS "${f}" incs REGEX "^#include \"[a-z_]+/")
    foreach(line ${incs})
      string(REGEX REPLACE "^#include \"([a-z_]+)/.*" "\\1" to "${line}")
      list(FIND allowed_${dir} "${to}" ok)
      if(ok EQUAL -1)
        file(RELATIVE_PATH rel "${SRC}" "${f}")
        string(APPEND bad "  ${rel}: ${line} (${dir} may use: ${allowed_${dir}})\n")
      endif()
    endforeach()
  endforeach()
endforeach()

# No file of src/ sits outside the folders above.
file(GLOB loose "${SRC}/src/*.c" "${SRC}/src/*.h")
foreach(f ${loose})
  file(RELATIVE_PATH rel "${SRC}" "${f}")
  string(APPEND bad "  ${rel}: a file outside the layers' folders\n")
endforeach()

# The runner reaches the store through the engine's calls only.
file(GLOB runner_files "${SRC}/src/loop/*.c" "${SRC}/src/loop/*.h")
foreach(f ${runner_files})
  file(STRINGS "${f}" calls REGEX "ops->[a-z_]+\\(")
  foreach(line ${calls})
    file(RELATIVE_PATH rel "${SRC}" "${f}")
    string(STRIP "${line}" line)
    string(APPEND bad "  ${rel}: ${line} (the runner calls the engine, not the store)\n")
  endforeach()
endforeach()

# The command uses the library through lil.h only (and its own cli/mcp/,
# cli/serve/).
file(GLOB cli_files "${SRC}/cli/*.c" "${SRC}/cli/*.h" "${SRC}/cli/mcp/*.c"
     "${SRC}/cli/mcp/*.h" "${SRC}/cli/serve/*.c" "${SRC}/cli/serve/*.h")
foreach(f ${cli_files})
  file(STRINGS "${f}" incs REGEX "^#include \"[a-z_]+/")
  foreach(line ${incs})
    if(line MATCHES "^#include \"(mcp|serve)/")
      continue()
    endif()
    file(RELATIVE_PATH rel "${SRC}" "${f}")
    string(APPEND bad "  ${rel}: ${line} (cli/ uses only <lil/lil.h>)\n")
  endforeach()
endforeach()

# Every public function (a LIL_API name of lil.h) is defined in src/api/
# only: a line at column 0 that names one, followed by '(', in any other
# file of src/ is a definition (or a declaration) out of place.
file(STRINGS "${SRC}/include/lil/lil.h" decls REGEX "^LIL_API .*lil_[a-z0-9_]+\\(")
set(public "")
foreach(line ${decls})
  string(REGEX MATCH "[ *](lil_[a-z0-9][a-z0-9_]*)\\(" m "${line}")
  if(m)
    list(APPEND public "${CMAKE_MATCH_1}")
  endif()
endforeach()
if(NOT public)
  string(APPEND bad "  include/lil/lil.h: no LIL_API function found\n")
endif()
file(GLOB_RECURSE lib_files "${SRC}/src/*.c" "${SRC}/src/*.h")
foreach(f ${lib_files})
  file(RELATIVE_PATH rel "${SRC}" "${f}")
  if(rel MATCHES "^src/api/")
    continue()
  endif()
  file(STRINGS "${f}" defs REGEX "^[a-z].*lil_[a-z0-9_]+\\(")
  foreach(line ${defs})
    string(REGEX MATCH "[ *](lil_[a-z0-9][a-z0-9_]*)\\(" m "${line}")
    if(m)
      list(FIND public "${CMAKE_MATCH_1}" i)
      if(NOT i EQUAL -1)
        string(APPEND bad
          "  ${rel}: defines ${CMAKE_MATCH_1} (public functions live in src/api/)\n")
      endif()
    endif()
  endforeach()
endforeach()

if(bad)
  message(FATAL_ERROR "against the layers:\n${bad}")
endif()
message(STATUS "layers: every include runs down the layers")
