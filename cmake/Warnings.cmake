# Warnings checked with gcc 12 and clang 14 (docs/internals.md, "Conventions").
set(LIL_WARNINGS
  -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes
  -Wold-style-definition -Wcast-qual -Wformat=2 -Wundef -Wvla -Wwrite-strings
  -Wnull-dereference -Wimplicit-fallthrough -Wdouble-promotion -Wconversion
  -Wsign-conversion -Werror=implicit-function-declaration
  -Werror=incompatible-pointer-types)
if(LIL_WERROR)
  list(APPEND LIL_WARNINGS -Werror)
endif()

# lil_warnings(target): the project's warning set on one target.
function(lil_warnings target)
  target_compile_options(${target} PRIVATE ${LIL_WARNINGS})
endfunction()
