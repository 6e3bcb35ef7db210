# Fails when an include runs from a lower layer to a higher one, or between
# two folders of the same layer, or when the storage library or the wire codec
# includes CAF. Run by every build (target weir_layer_check):
#   cmake -DSOURCE_DIR=<repo> [-DMIN_FILES=n] -P cmake/check_layers.cmake
#
# The layers, lowest first (docs/architecture.md, "Layout"):
#   0  config/  messages/wire/        plain data and the wire codec
#   1  messages/                      actor messages and protocols
#   2  wab/  sinks/  client/          storage, sinks, the client library
#   3  observability/                 log, metrics, status
#   4  actors/
#   5  daemon/
#   6  tools/  bench/                 the other binaries
if(NOT SOURCE_DIR)
  message(FATAL_ERROR "check_layers.cmake: pass -DSOURCE_DIR=<repository root>")
endif()

# Longest prefix first: messages/wire/ before messages/.
set(layer_folders config messages/wire messages wab sinks client/include/weir client observability actors daemon tools bench)
set(layer_of_config 0)
set(layer_of_messages/wire 0)
set(layer_of_messages 1)
set(layer_of_wab 2)
set(layer_of_sinks 2)
set(layer_of_client/include/weir 2)
set(layer_of_client 2)
set(layer_of_observability 3)
set(layer_of_actors 4)
set(layer_of_daemon 5)
set(layer_of_tools 6)
set(layer_of_bench 6)
# Folders that must not include CAF.
set(no_caf_folders config messages/wire wab sinks client observability)

# The folder a repository path belongs to (empty when none).
function(folder_of path out)
  foreach(folder ${layer_folders})
    string(LENGTH "${folder}/" n)
    string(SUBSTRING "${path}" 0 ${n} head)
    if(head STREQUAL "${folder}/")
      set(${out} "${folder}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  set(${out} "" PARENT_SCOPE)
endfunction()

set(violations "")
set(checked 0)
foreach(folder ${layer_folders})
  file(GLOB_RECURSE sources RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/${folder}/*.cpp" "${SOURCE_DIR}/${folder}/*.hpp")
  foreach(source ${sources})
    folder_of("${source}" from)
    if(NOT from STREQUAL folder)
      continue()  # a deeper folder's file: checked under that folder
    endif()
    math(EXPR checked "${checked} + 1")
    file(STRINGS "${SOURCE_DIR}/${source}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
    foreach(line ${lines})
      if(line MATCHES "#[ \t]*include[ \t]*<caf/")
        list(FIND no_caf_folders "${from}" i)
        if(NOT i EQUAL -1)
          list(APPEND violations "${source}: ${from}/ must not use CAF: ${line}")
        endif()
        continue()
      endif()
      if(NOT line MATCHES "#[ \t]*include[ \t]*\"([^\"]+)\"")
        continue()
      endif()
      set(target "${CMAKE_MATCH_1}")
      if(target MATCHES "^weir/")
        set(target "client/include/${target}")
      endif()
      folder_of("${target}" to)
      if(to STREQUAL "")
        list(APPEND violations "${source}: includes \"${target}\", which is in no layer")
      elseif(NOT to STREQUAL from)
        string(REGEX REPLACE "^client/include/weir$" "client" to_family "${to}")
        string(REGEX REPLACE "^client/include/weir$" "client" from_family "${from}")
        if(NOT to_family STREQUAL from_family AND NOT layer_of_${to} LESS layer_of_${from})
          list(APPEND violations
               "${source}: ${from}/ (layer ${layer_of_${from}}) includes \"${target}\" from ${to}/ (layer ${layer_of_${to}})")
        endif()
      endif()
    endforeach()
  endforeach()
endforeach()

if(NOT MIN_FILES)
  set(MIN_FILES 50)  # fewer means the glob found the wrong tree
endif()
if(checked LESS MIN_FILES)
  message(FATAL_ERROR "check_layers.cmake: only ${checked} files found under ${SOURCE_DIR}: wrong SOURCE_DIR?")
endif()
if(violations)
  list(LENGTH violations n)
  string(REPLACE ";" "\n  " text "${violations}")
  message(FATAL_ERROR "${n} include(s) against the layering (docs/architecture.md, \"Layout\"):\n  ${text}")
endif()
message(STATUS "layers: ${checked} files, every include goes down")
