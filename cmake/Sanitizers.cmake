# LIL_SANITIZE=address,undefined | thread: applied to every target.
if(LIL_SANITIZE)
  add_compile_options(-fsanitize=${LIL_SANITIZE} -fno-omit-frame-pointer
                      -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${LIL_SANITIZE})
endif()
if(LIL_FUZZ)
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
