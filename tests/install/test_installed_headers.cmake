# ctest installed_headers (label cpu): `cmake --install` of this build into a fresh prefix, then
# every installed include/crossbench/profiler header is read: the profiler's public headers are the
# event model and the profiler only (issue 15, README "Layout"), so none may name a harness type
# (FixtureInfo, FixtureTiming, GpuMeta, GpuClockSample, StoppingRule: bench/core/harness_records.h
# and bench/core/stopping_rule.h hold them) nor include nlohmann (the internal headers that do,
# session_json.h and strict_json.h, json_text.h, and the CUPTI ones, must not be installed).
#
# cmake -DBUILD_DIR=... -DWORK_DIR=... -P test_installed_headers.cmake
cmake_minimum_required(VERSION 3.24)
foreach(var BUILD_DIR WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "test_installed_headers.cmake: -D${var}=... is missing")
  endif()
endforeach()

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix}
  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "installed_headers: cmake --install failed (${rc}): ${err}")
endif()

set(dir ${prefix}/include/crossbench/profiler)
file(GLOB headers ${dir}/*.h)
list(LENGTH headers count)
if(count LESS 5 OR NOT EXISTS ${dir}/raw_records.h OR NOT EXISTS ${dir}/profiler.h)
  message(FATAL_ERROR "installed_headers: ${dir} holds ${count} headers, not the profiler's")
endif()
foreach(internal cupti_check.h cupti_api.h json_text.h session_json.h strict_json.h)
  if(EXISTS ${dir}/${internal})
    message(FATAL_ERROR "installed_headers: the internal header ${internal} was installed")
  endif()
endforeach()
set(found "")
foreach(h ${headers})
  file(STRINGS ${h} lines REGEX "FixtureInfo|FixtureTiming|GpuMeta|GpuClockSample|StoppingRule|nlohmann")
  get_filename_component(name ${h} NAME)
  foreach(line ${lines})
    string(APPEND found "\n  ${name}: ${line}")
  endforeach()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})
if(found)
  message(FATAL_ERROR "installed_headers: the profiler's installed headers name a harness type or nlohmann:${found}")
endif()
message(STATUS "ok: ${count} installed profiler headers, no harness type, no nlohmann")
