# check_needed.cmake -- the CTest tests liblil_needs_no_libcrypto,
# liblil_needs_no_libyaml, liblil_needs_no_libcurl and liblil_needs_no_libpq:
# liblil.so has no NAME.so in its DT_NEEDED, so a process that links it does
# not load NAME at start-up (libcrypto and libyaml: linked from libcrypto.a
# and libyaml.a; libcurl: src/effects/curl_dl.h; libpq: src/store/pg/pq_dl.h;
# both loaded through src/base/dl/dl.h).
# Skipped when the
# build fell back to linking NAME.so (no static archive found, or the
# LIL_*_STATIC option is OFF).
#
#   cmake -DLIB=liblil.so -DNAME=libcrypto -DSTATIC=ON|OFF [-DREADELF=..] [-DOBJDUMP=..]
#         -P check_needed.cmake
if(NOT STATIC)
  message("SKIPPED: liblil.so links ${NAME}.so (no static archive, or the "
          "option is OFF)")
  return()
endif()
if(READELF)
  execute_process(COMMAND "${READELF}" -d "${LIB}" OUTPUT_VARIABLE dyn
                  RESULT_VARIABLE rc)
elseif(OBJDUMP)
  execute_process(COMMAND "${OBJDUMP}" -p "${LIB}" OUTPUT_VARIABLE dyn
                  RESULT_VARIABLE rc)
else()
  message(FATAL_ERROR "neither readelf nor objdump was found")
endif()
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cannot read the dynamic section of ${LIB}")
endif()
string(REGEX MATCHALL "NEEDED[^\n]*" needed "${dyn}")
# libc is always there: proof that the entries were read at all
if(NOT needed MATCHES "libc\\.so")
  message(FATAL_ERROR "no NEEDED entries read from ${LIB}:\n${dyn}")
endif()
if(needed MATCHES "${NAME}[.-]")
  message(FATAL_ERROR "${LIB} needs ${NAME}:\n${needed}")
endif()
message("ok: ${LIB} does not need ${NAME}")
