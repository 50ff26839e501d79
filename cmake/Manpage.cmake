# levee(8), made from the binary's own --help by help2man, with the material of
# dist/man/levee.h2m (description, files, examples) and every command's --help
# (cmake/ManpageCommands.cmake): the page cannot fall behind the options. Installed
# gzip-compressed, as Debian's policy wants pages.
#
# Not in sanitizer or fuzzer builds: running their levee at build time may report a leak
# and fail the build, and nothing is installed from them.
find_program(HELP2MAN help2man)
if(LEVEE_SANITIZE OR LEVEE_FUZZ)
  set(LEVEE_MANPAGE OFF)
elseif(NOT HELP2MAN)
  message(STATUS "help2man not found: no levee(8), and no package (apt-get install help2man)")
  set(LEVEE_MANPAGE OFF)
else()
  set(LEVEE_MANPAGE ON)
endif()

if(LEVEE_MANPAGE)
  set(_man_dir ${PROJECT_BINARY_DIR}/man)
  # gzip -n: no name or time stamp in the file, so a rebuild makes the same bytes.
  add_custom_command(
    OUTPUT ${_man_dir}/levee.8.gz
    COMMAND ${CMAKE_COMMAND} -DLEVEE=$<TARGET_FILE:levee> -DOUT=${_man_dir}/commands.h2m -P
            ${PROJECT_SOURCE_DIR}/cmake/ManpageCommands.cmake
    COMMAND ${HELP2MAN} --section=8 --no-info --name "XDP flood filter: per-source limits at the NIC driver"
            --version-string=${PROJECT_VERSION} --include=${PROJECT_SOURCE_DIR}/dist/man/levee.h2m
            --include=${_man_dir}/commands.h2m --output=${_man_dir}/levee.8 $<TARGET_FILE:levee>
    COMMAND gzip -9nf ${_man_dir}/levee.8
    DEPENDS levee ${PROJECT_SOURCE_DIR}/dist/man/levee.h2m ${PROJECT_SOURCE_DIR}/cmake/ManpageCommands.cmake
    COMMENT "levee(8) from levee --help (help2man)"
    VERBATIM)
  add_custom_target(levee_manpage ALL DEPENDS ${_man_dir}/levee.8.gz)
  install(FILES ${_man_dir}/levee.8.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man8)
endif()
