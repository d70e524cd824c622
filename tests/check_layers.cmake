# check_layers.cmake -- the arrows between the library's folders run one
# way (docs/internals.md).  Every '#include "dir/..."' of a file in src/<A>/
# must name a folder A may use; cli/ uses only <lil/lil.h> and its own
# headers.  Run: cmake -DSRC=<repo> -P tests/check_layers.cmake
#
# Layers, bottom up: base, os, journal, store, engine; lang, spec, loop;
# json is a side module (jansson), used from lang and engine up; supervise
# (lil_supervise) sits on engine, beside lang, spec and loop.  api.c, at
# the top, may include anything.
set(allowed_base    base)
set(allowed_os      os base)
set(allowed_journal journal os base)
set(allowed_store   store journal os base)
set(allowed_json    json base)
set(allowed_engine  engine store os json base)
set(allowed_lang    lang json base)
set(allowed_spec    spec lang os json base)
set(allowed_loop    loop spec lang engine store os json base)
set(allowed_supervise supervise engine store journal os base)
set(folders base os journal store json engine lang spec loop supervise)

set(bad "")
foreach(dir ${folders})
  file(GLOB files "${SRC}/src/${dir}/*.c" "${SRC}/src/${dir}/*.h")
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

# The command uses the library through lil.h only.
file(GLOB cli_files "${SRC}/cli/*.c" "${SRC}/cli/*.h")
foreach(f ${cli_files})
  file(STRINGS "${f}" incs REGEX "^#include \"[a-z_]+/")
  foreach(line ${incs})
    file(RELATIVE_PATH rel "${SRC}" "${f}")
    string(APPEND bad "  ${rel}: ${line} (cli/ uses only <lil/lil.h>)\n")
  endforeach()
endforeach()

if(bad)
  message(FATAL_ERROR "includes against the layers:\n${bad}")
endif()
message(STATUS "layers: every include runs down the layers")
