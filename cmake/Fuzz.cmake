# Fuzz.cmake - the libFuzzer harnesses of tests/fuzz, built with -DLEVEE_FUZZ=ON only.
#
#   levee_fuzzer(NAME SOURCES src... [LAYER layer] [LIBS lib...])
#       The harness levee_fuzz_NAME from SOURCES (one file named by its subject,
#       tests/fuzz/NAME_fuzz.cpp), linking the layer it exercises (cmake/Layers.cmake)
#       and LIBS. Its seed corpus is tests/fuzz/corpus/NAME/ and its dictionary, if there
#       is one, tests/fuzz/NAME.dict; scripts/fuzz.sh runs every harness declared here
#       (the list is written to the build tree, fuzzers.txt), and ctest replays each
#       seed corpus once (label fuzz).
#
# With LEVEE_FUZZ every host target, the layers included, is compiled with coverage for
# libFuzzer (fuzzer-no-link), AddressSanitizer and UBSan, and UBSan never recovers: a
# finding aborts the input that hit it, and libFuzzer saves that input. Only the
# harnesses link libFuzzer's main. The BPF object is built as always (its own flags).

if(LEVEE_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang" OR NOT CMAKE_C_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "LEVEE_FUZZ=ON needs clang for libFuzzer, and this build compiles with "
                        "${CMAKE_CXX_COMPILER} (${CMAKE_CXX_COMPILER_ID}): configure a fresh build directory with "
                        "-DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 (Debian: apt-get install clang-14 "
                        "libfuzzer-14-dev), or run scripts/fuzz.sh, which does")
  endif()
  if(LEVEE_SANITIZE)
    message(FATAL_ERROR "LEVEE_FUZZ=ON builds with address,undefined already; leave LEVEE_SANITIZE empty")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
  include(CheckCXXSourceCompiles)
  set(CMAKE_REQUIRED_LINK_OPTIONS -fsanitize=fuzzer)
  check_cxx_source_compiles(
    "#include <cstddef>\n#include <cstdint>\nextern \"C\" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }"
    LEVEE_HAVE_LIBFUZZER)
  unset(CMAKE_REQUIRED_LINK_OPTIONS)
  if(NOT LEVEE_HAVE_LIBFUZZER)
    message(FATAL_ERROR "LEVEE_FUZZ=ON: ${CMAKE_CXX_COMPILER} cannot link -fsanitize=fuzzer; "
                        "install libFuzzer (Debian: apt-get install libfuzzer-14-dev)")
  endif()
  add_custom_target(levee_fuzzers)
  set_property(GLOBAL PROPERTY LEVEE_FUZZER_LIST "")
  # At the end of the configure, after every levee_fuzzer() wherever it is.
  cmake_language(DEFER DIRECTORY "${PROJECT_SOURCE_DIR}" CALL levee_write_fuzzer_list)
endif()

function(levee_fuzzer name)
  cmake_parse_arguments(ARG "" "LAYER" "SOURCES;LIBS" ${ARGN})
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "levee_fuzzer(${name}): no SOURCES")
  endif()
  set(target levee_fuzz_${name})
  add_executable(${target} ${ARG_SOURCES})
  set_target_properties(${target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}/fuzz")
  target_link_options(${target} PRIVATE -fsanitize=fuzzer)
  # The fuzzers may read the datapath's own headers (parse.h, compiled as C): tests, not
  # the controller.
  target_include_directories(${target} PRIVATE "${PROJECT_SOURCE_DIR}/bpf" "${PROJECT_SOURCE_DIR}/bpf/shared")
  if(ARG_LAYER)
    levee_use_layer(${target} ${ARG_LAYER})
  endif()
  target_link_libraries(${target} PRIVATE ${ARG_LIBS})
  add_dependencies(levee_fuzzers ${target})

  set(corpus "${PROJECT_SOURCE_DIR}/tests/fuzz/corpus/${name}")
  set_property(GLOBAL APPEND PROPERTY LEVEE_FUZZER_LIST "${name} $<TARGET_FILE:${target}> ${corpus}")
  # The seed corpus (regression inputs included) replayed once: no fuzzing, seconds.
  if(EXISTS "${corpus}")
    add_test(NAME fuzz.${name}.corpus COMMAND ${target} -runs=0 "${corpus}")
    set_tests_properties(fuzz.${name}.corpus PROPERTIES LABELS fuzz
                         ENVIRONMENT "ASAN_OPTIONS=halt_on_error=1;UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1")
  endif()
endfunction()

# The harnesses as scripts/fuzz.sh reads them: one line each, "NAME BINARY CORPUS".
function(levee_write_fuzzer_list)
  get_property(list GLOBAL PROPERTY LEVEE_FUZZER_LIST)
  list(JOIN list "\n" lines)
  file(GENERATE OUTPUT "${PROJECT_BINARY_DIR}/fuzz/fuzzers.txt" CONTENT "${lines}\n")
endfunction()
