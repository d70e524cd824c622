# Install.cmake -- what `cmake --install` writes beside the library, the
# header, lil.pc (src/CMakeLists.txt) and the command (cli/CMakeLists.txt):
#
#  - the CMake package: lib/cmake/lil/lilConfig.cmake, lilConfigVersion.cmake
#    and lilTargets.cmake, so `find_package(lil)` gives the target lil::lil
#    (liblil.so with its include directory);
#  - the bash and zsh completions and the man page lil(1), generated at
#    build time from the help texts of the command (CliDocs.cmake);
#  - the target `uninstall`, which removes every file install_manifest.txt
#    lists (Uninstall.cmake).
#
# The command finds liblil.so through its RPATH $ORIGIN/../lib
# (cli/CMakeLists.txt), so any prefix works without LD_LIBRARY_PATH; under a
# system prefix run `ldconfig` once after installing (README.md).
include(CMakePackageConfigHelpers)

set(LIL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/lil)
install(EXPORT lilTargets NAMESPACE lil:: DESTINATION ${LIL_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/lilConfig.cmake.in
  ${PROJECT_BINARY_DIR}/lilConfig.cmake INSTALL_DESTINATION ${LIL_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/lilConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/lilConfig.cmake
  ${PROJECT_BINARY_DIR}/lilConfigVersion.cmake DESTINATION ${LIL_CMAKE_DIR})

# Completions and the man page, from the command built here (not when
# cross-compiling: the command could not run).
if(NOT CMAKE_CROSSCOMPILING)
  set(LIL_CLI_DOCS ${PROJECT_BINARY_DIR}/cli-docs)
  add_custom_command(
    OUTPUT ${LIL_CLI_DOCS}/lil.bash ${LIL_CLI_DOCS}/_lil ${LIL_CLI_DOCS}/lil.1
    COMMAND ${CMAKE_COMMAND} -E make_directory ${LIL_CLI_DOCS}
    COMMAND ${CMAKE_COMMAND} -DLIL=$<TARGET_FILE:lil_cli> -DOUT=${LIL_CLI_DOCS}
            -DVERSION=${PROJECT_VERSION} -P ${PROJECT_SOURCE_DIR}/cmake/CliDocs.cmake
    DEPENDS lil_cli ${PROJECT_SOURCE_DIR}/cmake/CliDocs.cmake
    COMMENT "Writing lil's completions and man page from its help texts"
    VERBATIM)
  add_custom_target(lil_cli_docs ALL DEPENDS ${LIL_CLI_DOCS}/lil.bash ${LIL_CLI_DOCS}/_lil
                                             ${LIL_CLI_DOCS}/lil.1)
  install(FILES ${LIL_CLI_DOCS}/lil.bash RENAME lil
    DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
  install(FILES ${LIL_CLI_DOCS}/_lil DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/site-functions)
  install(FILES ${LIL_CLI_DOCS}/lil.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endif()

if(NOT TARGET uninstall)
  add_custom_target(uninstall
    COMMAND ${CMAKE_COMMAND} -DMANIFEST=${PROJECT_BINARY_DIR}/install_manifest.txt
            -P ${PROJECT_SOURCE_DIR}/cmake/Uninstall.cmake
    COMMENT "Removing the files of the last `cmake --install`"
    VERBATIM)
endif()
