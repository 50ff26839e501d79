# levee_bpf_skeleton(<name> SOURCE <file.bpf.c>)
#
# Compiles one BPF C file with clang -target bpf and turns the object into a libbpf
# skeleton header with bpftool. Yields an INTERFACE target <name>_skel whose include
# directory holds <name>.skel.h, so a C++ target that links it embeds the object.
# Header edits trigger a rebuild through clang's depfile.

find_program(BPF_CLANG NAMES clang clang-19 clang-16 clang-14 REQUIRED)
find_program(BPFTOOL NAMES bpftool PATHS /usr/sbin /sbin REQUIRED)

# clang -target bpf does not search the multiarch directory that holds asm/types.h.
execute_process(COMMAND ${CMAKE_C_COMPILER} -print-multiarch
                OUTPUT_VARIABLE LEVEE_MULTIARCH OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT LEVEE_MULTIARCH)
  set(LEVEE_MULTIARCH "${CMAKE_SYSTEM_PROCESSOR}-linux-gnu")
endif()

set(LEVEE_BPF_CFLAGS -target bpf -mcpu=v3 -O2 -g -Wall -Wextra -Werror
    -Wno-unused-parameter -Wno-missing-field-initializers
    -I${PROJECT_SOURCE_DIR}/bpf -I${PROJECT_SOURCE_DIR}/bpf/shared -I/usr/include/${LEVEE_MULTIARCH})

function(levee_bpf_skeleton name)
  cmake_parse_arguments(ARG "" "SOURCE" "" ${ARGN})
  get_filename_component(src "${ARG_SOURCE}" ABSOLUTE)
  set(outdir "${CMAKE_CURRENT_BINARY_DIR}/bpf")
  set(obj "${outdir}/${name}.bpf.o")
  set(skel "${outdir}/${name}.skel.h")
  file(MAKE_DIRECTORY "${outdir}")
  add_custom_command(
    OUTPUT "${obj}"
    COMMAND ${BPF_CLANG} ${LEVEE_BPF_CFLAGS} -MD -MF "${obj}.d" -c "${src}" -o "${obj}"
    DEPENDS "${src}"
    DEPFILE "${obj}.d"
    COMMENT "BPF ${name}.bpf.o"
    VERBATIM)
  add_custom_command(
    OUTPUT "${skel}"
    COMMAND ${BPFTOOL} gen skeleton "${obj}" name "${name}" > "${skel}"
    DEPENDS "${obj}"
    COMMENT "skeleton ${name}.skel.h"
    VERBATIM)
  add_custom_target(${name}_skel_gen DEPENDS "${skel}")
  add_library(${name}_skel INTERFACE)
  add_dependencies(${name}_skel ${name}_skel_gen)
  target_include_directories(${name}_skel INTERFACE "${outdir}")
  target_link_libraries(${name}_skel INTERFACE PkgConfig::LIBBPF)
  set_property(TARGET ${name}_skel PROPERTY LEVEE_BPF_OBJECT "${obj}")
endfunction()
