# The fuzz targets' sources, shared by the libFuzzer build (tests/fuzz/CMakeLists.txt)
# and the normal test suite, which replays their inputs (tests/CMakeLists.txt).
set(weir_fuzz_target_sources
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_support.cpp
  ${CMAKE_CURRENT_LIST_DIR}/targets.cpp
  ${CMAKE_CURRENT_LIST_DIR}/seeds.cpp
  ${CMAKE_CURRENT_LIST_DIR}/frame_target.cpp
  ${CMAKE_CURRENT_LIST_DIR}/batch_body_target.cpp
  ${CMAKE_CURRENT_LIST_DIR}/coordinate_target.cpp
  ${CMAKE_CURRENT_LIST_DIR}/segment_target.cpp
  ${CMAKE_CURRENT_LIST_DIR}/config_yaml_target.cpp
  ${CMAKE_CURRENT_LIST_DIR}/config_env_target.cpp)
