# ctest installed_headers (label cpu): `cmake --install` of this build into a fresh prefix, then
# every installed header under include/crossbench is read: the public headers are the measuring API
# (bench/core/api.h), the event model and the profiler's front end only, so none may name a harness
# type (FixtureInfo, FixtureTiming, GpuMeta, GpuClockSample, StoppingRule: bench/core/fixture_records.h
# and bench/core/stopping_rule.h hold them), include nlohmann, or include a CUDA or CUPTI header other
# than cuda_runtime_api.h (the internal headers that do, session_json.h, strict_json.h, json_text.h,
# cli_style.h, cupti_*.h, must not be installed).
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
file(GLOB_RECURSE headers ${dir}/*.h)
list(LENGTH headers count)
if(count LESS 5 OR NOT EXISTS ${dir}/model/raw_records.h OR NOT EXISTS ${dir}/model/profiler.h
   OR NOT EXISTS ${prefix}/include/crossbench/common/errors.h)
  message(FATAL_ERROR "installed_headers: ${dir} holds ${count} headers, not the profiler's")
endif()
file(GLOB_RECURSE installed RELATIVE ${prefix}/include/crossbench ${prefix}/include/crossbench/*.h)
foreach(internal cupti_check.h cupti_api.h cupti_sass_metrics.h json_text.h session_json.h strict_json.h cli_style.h)
  foreach(h ${installed})
    get_filename_component(base ${h} NAME)
    if(base STREQUAL internal)
      message(FATAL_ERROR "installed_headers: the internal header ${h} was installed")
    endif()
  endforeach()
endforeach()
file(GLOB_RECURSE headers ${prefix}/include/crossbench/*.h)
list(LENGTH headers count)
set(found "")
foreach(h ${headers})
  file(STRINGS ${h} lines REGEX "FixtureInfo|FixtureTiming|GpuMeta|GpuClockSample|StoppingRule|nlohmann|#include *<(cu|nv)[a-zA-Z_]*\\.h>")
  list(FILTER lines EXCLUDE REGEX "#include *<cuda_runtime_api\\.h>")
  file(RELATIVE_PATH name ${prefix}/include/crossbench ${h})
  foreach(line ${lines})
    string(APPEND found "\n  ${name}: ${line}")
  endforeach()
  # Every crossbench header a public one includes is public too (installed beside it).
  file(STRINGS ${h} quoted REGEX "^#include \"")
  foreach(line ${quoted})
    string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" inc "${line}")
    if(NOT EXISTS ${prefix}/include/crossbench/${inc})
      string(APPEND found "\n  ${name}: includes ${inc}, which is not installed")
    endif()
  endforeach()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})
if(found)
  message(FATAL_ERROR "installed_headers: installed headers name a harness type, nlohmann or a CUDA/CUPTI header:${found}")
endif()
message(STATUS "ok: ${count} installed headers, no harness type, no nlohmann, no CUDA header but cuda_runtime_api.h")
