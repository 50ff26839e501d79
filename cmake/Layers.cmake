# Layers.cmake - the controller as one static library per layer, linked only downward.
#
#   levee_layer(NAME SOURCES src... [LIBS lib...] [PRIVATE_LIBS lib...])
#       The library levee_NAME of userspace/NAME/. It links the layer declared before it
#       (PUBLIC) and LIBS (PUBLIC), PRIVATE_LIBS privately.
#       With LEVEE_CHECK_HEADERS, every header of the layer is also compiled on its own
#       against the layer's root (levee_NAME_headers): a header that includes a higher
#       layer, or does not include what it uses, fails even if no .cpp of its layer
#       includes it.
#   levee_use_layer(TARGET NAME)
#       TARGET (a test, a tool, the binary) links levee_NAME and compiles against its
#       include root.
#
# Of the datapath, only bpf/shared/ (levee_abi.h and the rules compiled into both sides)
# is on a layer's include path: the program's own headers (maps.h, parse.h, ...) do not
# compile in the controller.
#
# Includes are spelled from userspace/ ("core/result.hpp", "policy/config.hpp"). Each
# layer compiles against an include root of its own, a directory in the build tree that
# holds links to its own folder and those of the layers below it, and nothing else: an
# #include of a higher layer's header does not compile ("cli/app.hpp: No such file or
# directory"). The layers are declared lowest first, in userspace/CMakeLists.txt; that
# order is the only list of them.

function(levee_layer name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;PRIVATE_LIBS" ${ARGN})
  get_property(below GLOBAL PROPERTY LEVEE_LAYERS)
  set(root "${PROJECT_BINARY_DIR}/layers/${name}")
  file(REMOVE_RECURSE "${root}")
  file(MAKE_DIRECTORY "${root}")
  foreach(layer IN LISTS below ITEMS ${name})
    file(CREATE_LINK "${PROJECT_SOURCE_DIR}/userspace/${layer}" "${root}/${layer}" SYMBOLIC)
  endforeach()

  add_library(levee_${name} STATIC ${ARG_SOURCES})
  target_include_directories(levee_${name} PRIVATE "${root}" "${PROJECT_SOURCE_DIR}/bpf/shared")
  list(LENGTH below n)
  if(n GREATER 0)
    list(GET below -1 prev)
    target_link_libraries(levee_${name} PUBLIC levee_${prev})
  endif()
  target_link_libraries(levee_${name} PUBLIC ${ARG_LIBS} PRIVATE ${ARG_PRIVATE_LIBS})
  set_property(TARGET levee_${name} PROPERTY LEVEE_INCLUDE_ROOT "${root}")
  if(LEVEE_CHECK_HEADERS)
    levee_check_headers(${name} "${root}")
  endif()
  set_property(GLOBAL APPEND PROPERTY LEVEE_LAYERS ${name})
endfunction()

function(levee_use_layer target name)
  if(NOT TARGET levee_${name})
    get_property(layers GLOBAL PROPERTY LEVEE_LAYERS)
    message(FATAL_ERROR "levee_use_layer(${target} ${name}): no layer '${name}' (layers: ${layers})")
  endif()
  target_link_libraries(${target} PRIVATE levee_${name})
  target_include_directories(${target} PRIVATE "$<TARGET_PROPERTY:levee_${name},LEVEE_INCLUDE_ROOT>"
                                               "${PROJECT_SOURCE_DIR}/bpf/shared")
endfunction()

# One translation unit per header of a layer, that includes it and nothing else.
function(levee_check_headers name root)
  file(GLOB headers RELATIVE "${PROJECT_SOURCE_DIR}/userspace" CONFIGURE_DEPENDS
       "${PROJECT_SOURCE_DIR}/userspace/${name}/*.hpp")
  set(units "")
  foreach(h IN LISTS headers)
    string(MAKE_C_IDENTIFIER "${h}" id)
    set(unit "${PROJECT_BINARY_DIR}/layers/check/${id}.cpp")
    file(CONFIGURE OUTPUT "${unit}" CONTENT "#include \"${h}\"  // compiles on its own, in its layer\n")
    list(APPEND units "${unit}")
  endforeach()
  add_library(levee_${name}_headers OBJECT ${units})
  target_include_directories(levee_${name}_headers PRIVATE "${root}" "${PROJECT_SOURCE_DIR}/bpf/shared")
  target_link_libraries(levee_${name}_headers PRIVATE levee_${name})
  get_target_property(private_libs levee_${name} LINK_LIBRARIES)
  target_link_libraries(levee_${name}_headers PRIVATE ${private_libs})
endfunction()
