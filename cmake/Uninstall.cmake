# Uninstall.cmake -- remove every file a `cmake --install` wrote.
#
#   cmake -DMANIFEST=<build>/install_manifest.txt -P Uninstall.cmake
#
# The target `uninstall` (Install.cmake) runs it.  Each line of MANIFEST is
# a file installed; each is removed (a file already gone is said and
# skipped), then the directories left empty under them are not touched:
# the prefix may be shared with other packages.
if(NOT EXISTS "${MANIFEST}")
  message(FATAL_ERROR "uninstall: no ${MANIFEST}: nothing was installed from this build")
endif()
file(STRINGS "${MANIFEST}" files)
foreach(f IN LISTS files)
  if(IS_SYMLINK "${f}" OR EXISTS "${f}")
    message(STATUS "Removing ${f}")
    file(REMOVE "${f}")
    if(IS_SYMLINK "${f}" OR EXISTS "${f}")
      message(FATAL_ERROR "uninstall: cannot remove ${f}")
    endif()
  else()
    message(STATUS "Already gone: ${f}")
  endif()
endforeach()
