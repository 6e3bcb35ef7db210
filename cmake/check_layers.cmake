# Fails when an include runs from a lower layer to a higher one, or between
# two folders of the same layer; when a layer that must not use CAF includes
# CAF, directly or through one of the project's headers; or when a source
# file lies in no layer. Run by every build (target weir_layer_check):
#   cmake -DSOURCE_DIR=<repo> [-DMIN_FILES=n] -P cmake/check_layers.cmake
#
# The layers, lowest first (docs/architecture.md, "Layout"):
#   0  files/                         named files read without blocking, PEM
#   1  config/  wire/                 the configuration; the wire codec and the records it carries
#   2  wab/  sinks/  client/          storage, sinks, the client library
#   3  messages/                      actor messages and protocols
#   4  observability/                 log, metrics, status
#   5  actors/
#   6  runtime/                       threads, CPUs, actor settings, the pipeline's wiring
#   7  transport/                     listeners, sessions, TLS, socket access, cluster links
#   8  daemon/                        the process: main, signals, reload, startup checks
#   9  tools/  bench/  examples/      the other binaries, client examples
# Outside the layers: tests/, cmake/, build*/ and hidden folders.
if(NOT SOURCE_DIR)
  message(FATAL_ERROR "check_layers.cmake: pass -DSOURCE_DIR=<repository root>")
endif()

# Longest prefix first (client/include/weir before client/).
set(layer_units files config wire client/include/weir client wab sinks messages observability actors runtime transport
    daemon tools bench examples)
set(layer_of_files 0)
set(layer_of_config 1)
set(layer_of_wire 1)
set(layer_of_wab 2)
set(layer_of_sinks 2)
set(layer_of_client/include/weir 2)
set(layer_of_client 2)
set(layer_of_messages 3)
set(layer_of_observability 4)
set(layer_of_actors 5)
set(layer_of_runtime 6)
set(layer_of_transport 7)
set(layer_of_daemon 8)
set(layer_of_tools 9)
set(layer_of_bench 9)
set(layer_of_examples 9)
# Units that must not use CAF, directly or through a header they include.
set(no_caf_units files config wire client/include/weir client wab sinks observability examples)
set(source_globs *.cpp *.hpp *.h *.ipp *.inc)

# The unit a repository path belongs to (empty when none). `path` is
# normalised first, so "wab/../actors/x.hpp" is in actors/.
function(unit_of path out)
  cmake_path(NORMAL_PATH path OUTPUT_VARIABLE path)
  foreach(unit ${layer_units})
    if(path STREQUAL unit)
      set(${out} "${unit}" PARENT_SCOPE)
      return()
    endif()
    string(LENGTH "${unit}/" n)
    string(SUBSTRING "${path}" 0 ${n} head)
    if(head STREQUAL "${unit}/")
      set(${out} "${unit}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  set(${out} "" PARENT_SCOPE)
endfunction()

# The project files a file includes, as repository paths ("weir/x.hpp" is the
# client's public header; <...> includes of a layer folder count as well), and
# whether it includes CAF itself.
function(includes_of file out_includes out_caf)
  file(STRINGS "${SOURCE_DIR}/${file}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
  set(found "")
  set(caf FALSE)
  foreach(line ${lines})
    if(NOT line MATCHES "#[ \t]*include[ \t]*[<\"]([^>\"]+)[>\"]")
      continue()
    endif()
    set(target "${CMAKE_MATCH_1}")
    if(target MATCHES "^caf/")
      set(caf TRUE)
      continue()
    endif()
    if(target MATCHES "^weir/")
      set(target "client/include/${target}")
    endif()
    unit_of("${target}" unit)
    if(NOT unit STREQUAL "" OR line MATCHES "\"")
      cmake_path(NORMAL_PATH target)
      list(APPEND found "${target}")
    endif()
  endforeach()
  set(${out_includes} "${found}" PARENT_SCOPE)
  set(${out_caf} ${caf} PARENT_SCOPE)
endfunction()

# Whether `file` reaches CAF through its includes (memoised per run).
function(reaches_caf file out)
  get_property(known GLOBAL PROPERTY "caf_${file}" SET)
  if(known)
    get_property(v GLOBAL PROPERTY "caf_${file}")
    set(${out} ${v} PARENT_SCOPE)
    return()
  endif()
  set_property(GLOBAL PROPERTY "caf_${file}" FALSE)  # a cycle ends here
  set(result FALSE)
  if(EXISTS "${SOURCE_DIR}/${file}")
    includes_of("${file}" deps direct)
    if(direct)
      set(result TRUE)
    else()
      foreach(dep ${deps})
        reaches_caf("${dep}" via)
        if(via)
          set(result TRUE)
          break()
        endif()
      endforeach()
    endif()
  endif()
  set_property(GLOBAL PROPERTY "caf_${file}" ${result})
  set(${out} ${result} PARENT_SCOPE)
endfunction()

# Every source file of the repository but those outside the layers.
set(all_sources "")
file(GLOB top_entries RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/*")
list(SORT top_entries)
foreach(entry ${top_entries})
  if(entry MATCHES "^(tests|cmake|build.*|\\..*)$")
    continue()
  endif()
  foreach(glob ${source_globs})
    if(IS_DIRECTORY "${SOURCE_DIR}/${entry}")
      file(GLOB_RECURSE found RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/${entry}/${glob}")
    else()
      file(GLOB found RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/${entry}")
      list(FILTER found INCLUDE REGEX "\\.(cpp|hpp|h|ipp|inc)$")
    endif()
    list(APPEND all_sources ${found})
  endforeach()
endforeach()
list(REMOVE_DUPLICATES all_sources)
list(SORT all_sources)

set(violations "")
set(checked 0)
foreach(source ${all_sources})
  unit_of("${source}" from)
  if(from STREQUAL "")
    list(APPEND violations "${source}: in no layer (docs/architecture.md, \"Layout\")")
    continue()
  endif()
  math(EXPR checked "${checked} + 1")
  list(FIND no_caf_units "${from}" no_caf)
  includes_of("${source}" targets direct_caf)
  if(direct_caf AND NOT no_caf EQUAL -1)
    list(APPEND violations "${source}: ${from} must not use CAF, and includes it")
  endif()
  foreach(target ${targets})
    unit_of("${target}" to)
    if(to STREQUAL "")
      list(APPEND violations "${source}: includes \"${target}\", which is in no layer")
      continue()
    endif()
    # One top folder is one family: client/ may include its own public header.
    string(REGEX REPLACE "/.*" "" to_family "${to}")
    string(REGEX REPLACE "/.*" "" from_family "${from}")
    set(up FALSE)
    if(layer_of_${to} GREATER layer_of_${from})
      set(up TRUE)  # never, not even within one top folder
    elseif(layer_of_${to} EQUAL layer_of_${from} AND NOT to_family STREQUAL from_family)
      set(up TRUE)  # sideways between folders of one layer
    endif()
    if(up)
      list(APPEND violations
           "${source}: ${from} (layer ${layer_of_${from}}) includes \"${target}\" from ${to} (layer ${layer_of_${to}})")
    endif()
    if(NOT no_caf EQUAL -1)
      reaches_caf("${target}" via)
      if(via)
        list(APPEND violations "${source}: ${from} must not use CAF, and reaches it through \"${target}\"")
      endif()
    endif()
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
