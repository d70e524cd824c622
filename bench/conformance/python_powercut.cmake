# The conformance benchmark's copy of lil's Python module for power cuts
# (engines/lil_py_powercut.c): the module's sources and the library's
# objects, plus the test harness's fault table, with every store the module
# opens routed through it.  Written to
# <build>/bench/conformance/pypc/lil/_lil*.so, which the adapter imports
# through LIL_PYTHON_EXT_DIR; the package's own module is untouched.
# Included from bindings/python/CMakeLists.txt (lil_python_module and
# Python are defined there) when the tests and benchmarks are built.

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
lil_python_module(conf_lil_py_powercut ${PROJECT_BINARY_DIR}/bench/conformance/pypc/lil
  ${PROJECT_SOURCE_DIR}/tests/harness/faults.c $<TARGET_OBJECTS:conf_lil_py_wrap>)
set_target_properties(conf_lil_py_powercut PROPERTIES EXPORT_COMPILE_COMMANDS OFF)
target_include_directories(conf_lil_py_powercut PRIVATE ${PROJECT_SOURCE_DIR}/src
  ${PROJECT_SOURCE_DIR}/tests/harness)
target_link_options(conf_lil_py_powercut PRIVATE "LINKER:--wrap=lil_store_open")
