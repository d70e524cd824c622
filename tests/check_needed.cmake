# check_needed.cmake -- the CTest test liblil_needs_no_libcrypto: liblil.so
# has no libcrypto.so in its DT_NEEDED, so a process that links it does not
# load and relocate libcrypto at start-up (src/base/crypto_dl.h).  Skipped
# when the build fell back to linking libcrypto.so (no libcrypto.a).
#
#   cmake -DLIB=liblil.so -DSTATIC=ON|OFF [-DREADELF=..] [-DOBJDUMP=..] -P check_needed.cmake
if(NOT STATIC)
  message("SKIPPED: liblil.so links libcrypto.so (libcrypto.a was not found "
          "or LIL_CRYPTO_STATIC is OFF)")
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
if(needed MATCHES "libcrypto\\.so")
  message(FATAL_ERROR "${LIB} needs libcrypto.so:\n${needed}")
endif()
message("ok: ${LIB} does not need libcrypto.so")
