# check_docs.cmake -- the repository's documents point only at what it holds.
# Run: cmake -DSRC=<repo> -P tests/check_docs.cmake
#
#   1. Every relative link of docs/*.md and README.md (outside ``` blocks)
#      names a file that exists, relative to the document; a link with an
#      anchor into a Markdown file names one of its headings (GitHub's
#      anchors: lower case, punctuation dropped, blanks as '-', a repeated
#      heading with -1, -2, ...).
#   2. No text file of the repository cites a document that is not in it
#      (the names of outside documents are listed in `outside` below), and
#      every "docs/<name>.md" a file mentions exists.
#
# Markdown is read whole and split on ``` at the start of a line after ';',
# '[' and ']' are replaced (CMake lists split on ';' and group on brackets).

cmake_minimum_required(VERSION 3.13)
set(bad "")

# Text with ';', '[' and ']' made harmless for CMake lists, and back.
function(md_escape text out)
  string(REPLACE ";" "<SC>" text "${text}")
  string(REPLACE "[" "<LB>" text "${text}")
  string(REPLACE "]" "<RB>" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

function(md_unescape text out)
  string(REPLACE "<SC>" ";" text "${text}")
  string(REPLACE "<LB>" "[" text "${text}")
  string(REPLACE "<RB>" "]" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

# The parts of a Markdown file outside ``` blocks, joined (escaped).
function(md_prose file out)
  file(READ "${file}" text)
  md_escape("${text}" text)
  string(REPLACE "\n```" ";" parts "\n${text}")
  set(prose "")
  set(i 0)
  foreach(part IN LISTS parts)
    math(EXPR odd "${i} % 2")
    if(odd EQUAL 0)
      string(APPEND prose "${part}\n")
    endif()
    math(EXPR i "${i} + 1")
  endforeach()
  set(${out} "${prose}" PARENT_SCOPE)
endfunction()

# GitHub's anchors of the headings of a Markdown file.
function(md_anchors file out)
  md_prose("${file}" prose)
  string(REGEX MATCHALL "\n#+ [^\n]*" heads "\n${prose}")
  set(anchors "")
  foreach(h IN LISTS heads)
    string(REGEX REPLACE "^\n#+ " "" h "${h}")
    md_unescape("${h}" h)
    string(STRIP "${h}" h)
    string(TOLOWER "${h}" h)
    string(REGEX REPLACE "[^a-z0-9 _-]" "" h "${h}")
    string(REPLACE " " "-" h "${h}")
    set(a "${h}")
    set(k 0)
    while(a IN_LIST anchors)
      math(EXPR k "${k} + 1")
      set(a "${h}-${k}")
    endwhile()
    list(APPEND anchors "${a}")
  endforeach()
  set(${out} "${anchors}" PARENT_SCOPE)
endfunction()

# 1. Links.
file(GLOB docs "${SRC}/docs/*.md")
list(APPEND docs "${SRC}/README.md")
set(nlinks 0)
foreach(doc IN LISTS docs)
  file(RELATIVE_PATH rel "${SRC}" "${doc}")
  get_filename_component(dir "${doc}" DIRECTORY)
  md_prose("${doc}" prose)
  string(REGEX MATCHALL "<RB>\\([^) \t\n]+\\)" links "${prose}")
  foreach(link IN LISTS links)
    string(REGEX REPLACE "^<RB>\\((.*)\\)$" "\\1" target "${link}")
    md_unescape("${target}" target)
    if(target MATCHES "^[a-z]+:")
      continue()
    endif()
    math(EXPR nlinks "${nlinks} + 1")
    string(REGEX REPLACE "#.*" "" path "${target}")
    set(anchor "")
    if(target MATCHES "#(.*)$")
      set(anchor "${CMAKE_MATCH_1}")
    endif()
    if(path STREQUAL "")
      set(file "${doc}")
    else()
      get_filename_component(file "${dir}/${path}" ABSOLUTE)
    endif()
    if(NOT EXISTS "${file}")
      string(APPEND bad "  ${rel}: (${target}): no such file\n")
      continue()
    endif()
    if(anchor AND file MATCHES "\\.md$")
      md_anchors("${file}" anchors)
      if(NOT anchor IN_LIST anchors)
        string(APPEND bad "  ${rel}: (${target}): no such heading\n")
      endif()
    endif()
  endforeach()
endforeach()

# 2. Citations.
set(outside "loopspec-contract" "letitloop-api" "../shared" "shared/reference"
            "STYLE B.")
file(GLOB_RECURSE texts
  "${SRC}/src/*" "${SRC}/include/*" "${SRC}/cli/*" "${SRC}/tests/*"
  "${SRC}/fuzz/*.c" "${SRC}/fuzz/*.h" "${SRC}/fuzz/*.txt" "${SRC}/bench/*"
  "${SRC}/bindings/*" "${SRC}/examples/*" "${SRC}/scripts/*" "${SRC}/cmake/*"
  "${SRC}/docs/*")
list(APPEND texts "${SRC}/README.md" "${SRC}/CMakeLists.txt" "${SRC}/CMakePresets.json"
     "${SRC}/.clang-tidy" "${SRC}/.clang-format")
list(FILTER texts EXCLUDE REGEX "/__pycache__/|\\.pyc$|/check_docs\\.cmake$")
foreach(f IN LISTS texts)
  if(NOT EXISTS "${f}" OR IS_DIRECTORY "${f}")
    continue()
  endif()
  file(RELATIVE_PATH rel "${SRC}" "${f}")
  file(READ "${f}" text)
  foreach(name IN LISTS outside)
    string(FIND "${text}" "${name}" at)
    if(NOT at EQUAL -1)
      string(APPEND bad "  ${rel}: cites '${name}', which is not in the repository\n")
    endif()
  endforeach()
  string(REGEX MATCHALL "docs/[a-z_]+\\.md" cited "${text}")
  list(REMOVE_DUPLICATES cited)
  foreach(c IN LISTS cited)
    if(NOT EXISTS "${SRC}/${c}")
      string(APPEND bad "  ${rel}: cites ${c}, which does not exist\n")
    endif()
  endforeach()
endforeach()

if(bad)
  message(FATAL_ERROR "documents that point nowhere:\n${bad}")
endif()
message(STATUS "docs: ${nlinks} links resolve; nothing cites a document outside the repository")
