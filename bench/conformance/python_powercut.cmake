# The conformance benchmark's copy of lil's Python module for power cuts
# (engines/lil_py_powercut.c): the module's sources and the library's
# objects, plus the test harness's fault table, with every store the module
# opens routed through it.  Written to
# <build>/bench/conformance/pypc/lil/_lil*.so, which the adapter imports
# through LIL_PYTHON_EXT_DIR; the package's own module is untouched.
# Included from bindings/python/CMakeLists.txt (the module's target and
# Python's are defined there) when the tests and benchmarks are built.
set(conf_py ${PROJECT_SOURCE_DIR}/bindings/python)
# The wrapper on its own (in the compilation database, so linted); the
# module's other sources are compiled a second time for this copy and kept
# out of the database, as lil_python_cli's are.
add_library(conf_lil_py_wrap OBJECT
  ${PROJECT_SOURCE_DIR}/bench/conformance/engines/lil_py_powercut.c)
set_target_properties(conf_lil_py_wrap PROPERTIES POSITION_INDEPENDENT_CODE ON
  C_VISIBILITY_PRESET hidden)
target_include_directories(conf_lil_py_wrap PRIVATE ${PROJECT_SOURCE_DIR}/include
  ${PROJECT_SOURCE_DIR}/tests/harness)
lil_warnings(conf_lil_py_wrap)
Python3_add_library(conf_lil_py_powercut MODULE WITH_SOABI
  ${conf_py}/_lilmodule.c ${conf_py}/_lil_store.c ${conf_py}/_lil_run.c
  ${conf_py}/_lil_loop.c ${conf_py}/_lil_supervise.c
  ${PROJECT_SOURCE_DIR}/tests/harness/faults.c
  $<TARGET_OBJECTS:conf_lil_py_wrap> $<TARGET_OBJECTS:lil_obj>)
set_target_properties(conf_lil_py_powercut PROPERTIES OUTPUT_NAME _lil
  LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bench/conformance/pypc/lil
  C_VISIBILITY_PRESET hidden
  EXPORT_COMPILE_COMMANDS OFF
  LINK_DEPENDS ${conf_py}/_lil.map)
target_include_directories(conf_lil_py_powercut PRIVATE ${PROJECT_SOURCE_DIR}/include
  ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/tests/harness)
target_compile_definitions(conf_lil_py_powercut PRIVATE _GNU_SOURCE)
target_link_libraries(conf_lil_py_powercut PRIVATE PkgConfig::JANSSON PkgConfig::ISAL
  Threads::Threads ${CMAKE_DL_LIBS})
lil_link_archive_or(conf_lil_py_powercut "${LIL_YAML_A}" PkgConfig::YAML)
lil_link_archive_or(conf_lil_py_powercut "${LIL_CRYPTO_A}" OpenSSL::Crypto)
target_link_options(conf_lil_py_powercut PRIVATE
  "LINKER:--version-script=${conf_py}/_lil.map" "LINKER:--wrap=lil_store_open")
lil_warnings(conf_lil_py_powercut)
