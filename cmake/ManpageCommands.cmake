# cmake -DLEVEE=path/to/levee -DOUT=commands.h2m -P ManpageCommands.cmake
#
# Writes a help2man include file with a COMMANDS section: every command's (and
# subcommand's) own --help, verbatim, so levee(8) has every option without a copy of
# them to keep in step by hand. Commands are read from the "Subcommands:" lists CLI11
# prints, two levels deep (levee deny import).

# The lines of a help text as a roff block: backslashes and leading dots and quotes
# escaped, hyphens as \- (so they are searchable and copyable as ASCII).
function(levee_roff_block TEXT OUT)
  string(REPLACE "\\" "\\e" TEXT "${TEXT}")
  string(REPLACE "-" "\\-" TEXT "${TEXT}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" TEXT "${TEXT}")
  string(STRIP "${TEXT}" TEXT)
  set(${OUT} ".nf\n${TEXT}\n.fi\n" PARENT_SCOPE)
endfunction()

function(levee_help OUT)
  execute_process(COMMAND ${LEVEE} ${ARGN} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "levee ${ARGN} --help failed (${rc}): cannot write the COMMANDS of levee(8)")
  endif()
  set(${OUT} "${help}" PARENT_SCOPE)
endfunction()

# The names under "Subcommands:" in a help text: indented words up to a blank line.
function(levee_subcommands HELP OUT)
  set(names)
  if(HELP MATCHES "\nSubcommands:\n(.*)")
    string(REGEX REPLACE "\n\n.*" "" block "${CMAKE_MATCH_1}")
    string(REPLACE "\n" ";" lines "${block}")
    foreach(line IN LISTS lines)
      if(line MATCHES "^  ([a-z][a-z0-9-]*)( |$)")
        list(APPEND names ${CMAKE_MATCH_1})
      endif()
    endforeach()
  endif()
  set(${OUT} ${names} PARENT_SCOPE)
endfunction()

set(roff "[COMMANDS]\n")
levee_help(top)
levee_subcommands("${top}" commands)
if(NOT commands)
  message(FATAL_ERROR "levee --help lists no subcommands: its layout changed, adapt ${CMAKE_CURRENT_LIST_FILE}")
endif()
foreach(command IN LISTS commands)
  levee_help(help ${command})
  levee_roff_block("${help}" block)
  string(APPEND roff ".SS \"levee ${command}\"\n${block}")
  levee_subcommands("${help}" subcommands)
  foreach(sub IN LISTS subcommands)
    levee_help(subhelp ${command} ${sub})
    levee_roff_block("${subhelp}" block)
    string(APPEND roff ".SS \"levee ${command} ${sub}\"\n${block}")
  endforeach()
endforeach()
file(WRITE ${OUT} "${roff}")
