# ctest install_example (label cpu): `cmake --install` of this build into a fresh prefix, then
# examples/benchmark_my_kernel, examples/cublas_legacy_sgemm, examples/malloc_in_launch and
# examples/user_patterns configured and built against it (find_package(crossbench),
# crossbench::bench), with no GPU needed; the installed bench and validate also run (a replay of
# the recorded H200 session and a validation of the committed H200 run folder).
#
# cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -DGENERATOR=... -DCXX_COMPILER=...
#       -DCUDA_COMPILER=... -DCUDA_ARCHITECTURES=... -P test_install_example.cmake
cmake_minimum_required(VERSION 3.24)
foreach(var BUILD_DIR SOURCE_DIR WORK_DIR GENERATOR CXX_COMPILER CUDA_COMPILER CUDA_ARCHITECTURES)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "test_install_example.cmake: -D${var}=... is missing")
  endif()
endforeach()

# run(what [MAY_FAIL_VALIDATION] command...): the command must exit 0 (or 1, a failed validation
# verdict, with MAY_FAIL_VALIDATION: the installed binaries ran; the validator's tests judge verdicts).
function(run what)
  set(ok_codes 0)
  if(ARGV1 STREQUAL "MAY_FAIL_VALIDATION")
    set(ok_codes 0 1)
    list(REMOVE_AT ARGN 0)
  endif()
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc IN_LIST ok_codes)
    message(FATAL_ERROR "install_example: ${what} failed (${rc}):\n${ARGN}\n${out}\n${err}")
  endif()
  message(STATUS "ok: ${what}")
endfunction()

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

run("cmake --install into ${prefix}" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
foreach(f bin/bench bin/validate include/crossbench/profiler/model/profiler.h include/crossbench/profiler/exporters/outputs.h
          include/crossbench/profiler/exporters/trace_export.h)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "install_example: ${f} was not installed")
  endif()
endforeach()
foreach(f profiler/adapters/cupti_check.h profiler/adapters/cupti_api.h common/json_text.h profiler/model/session_json.h)
  if(EXISTS ${prefix}/include/crossbench/${f})
    message(FATAL_ERROR "install_example: the internal header ${f} was installed")
  endif()
endforeach()
file(GLOB_RECURSE config ${prefix}/*/crossbenchConfig.cmake)
file(GLOB_RECURSE libs ${prefix}/*/libcrossbench_common.a ${prefix}/*/libcrossbench_profiler_model.a
     ${prefix}/*/libcrossbench_profiler_exporters.a ${prefix}/*/libcrossbench_profiler_adapters.a)
list(LENGTH libs nlibs)
if(NOT config OR NOT nlibs EQUAL 4)
  message(FATAL_ERROR "install_example: package config (${config}) or libraries (${libs}) missing")
endif()
# The library a user links holds the measuring core only: no object of bench's commands (sweep,
# qualify, --devices, calibrate, ab, overhead, tune-add) in any installed archive (member names
# are plain text in an ar archive).
file(GLOB_RECURSE archives ${prefix}/*.a)
foreach(archive ${archives})
  file(STRINGS ${archive} members REGEX "(^|[^a-z_])(sweep|sweep_run|roofline|qualify[a-z_]*|report_format|devices|device_compare|calibrate|overhead|ab|tune_add)\\.cpp\\.o")
  if(members)
    message(FATAL_ERROR "install_example: ${archive} holds the commands' objects: ${members}")
  endif()
endforeach()

run("configure examples/benchmark_my_kernel against the installed package"
  ${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/benchmark_my_kernel -B ${WORK_DIR}/example -G ${GENERATOR}
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
  -DCMAKE_CUDA_COMPILER=${CUDA_COMPILER} "-DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCHITECTURES}")
run("build examples/benchmark_my_kernel" ${CMAKE_COMMAND} --build ${WORK_DIR}/example)
if(NOT EXISTS ${WORK_DIR}/example/saxpy)
  message(FATAL_ERROR "install_example: the example executable was not built")
endif()
# A user's program takes the plain run's options; --devices and the commands are the bench
# executable's, refused in one line (exit 2) before any GPU is touched.
foreach(refused "--devices;0:--devices is an option of the bench executable" "sweep;--size;64:'sweep' is not an option of this program")
  string(REPLACE ":" ";" parts "${refused}")
  list(POP_BACK parts expected)
  execute_process(COMMAND ${WORK_DIR}/example/saxpy ${parts} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(FIND "${err}" "${expected}" at)
  if(NOT rc EQUAL 2 OR at EQUAL -1)
    message(FATAL_ERROR "install_example: saxpy ${parts}: exit ${rc} (expected 2), stderr '${err}' (expected '${expected}')")
  endif()
  message(STATUS "ok: saxpy ${parts} refused: ${err}")
endforeach()
# The two examples whose launch synchronizes (issue 30): cuBLAS's handle API, cudaMalloc/cudaFree;
# and the corpus of user code (issue 36), its two programs generated from patterns.json.
# (examples/user_patterns builds both its programs; its second entry checks the second one.)
foreach(example cublas_legacy_sgemm:sgemm malloc_in_launch:malloc_scale user_patterns:user_patterns
        user_patterns:user_patterns_ptds)
  string(REPLACE ":" ";" parts ${example})
  list(GET parts 0 dir)
  list(GET parts 1 exe)
  run("configure examples/${dir} against the installed package"
    ${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/${dir} -B ${WORK_DIR}/${dir} -G ${GENERATOR}
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
    -DCMAKE_CUDA_COMPILER=${CUDA_COMPILER} "-DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCHITECTURES}")
  run("build examples/${dir}" ${CMAKE_COMMAND} --build ${WORK_DIR}/${dir})
  if(NOT EXISTS ${WORK_DIR}/${dir}/${exe})
    message(FATAL_ERROR "install_example: examples/${dir} did not build ${exe}")
  endif()
endforeach()

run("installed bin/validate on results/h200/2026-11-29-e2e" MAY_FAIL_VALIDATION
  ${prefix}/bin/validate ${SOURCE_DIR}/results/h200/2026-11-29-e2e --report ${WORK_DIR}/validation.json)
run("installed bin/bench --replay results/sessions/h200-small/raw_session.json" MAY_FAIL_VALIDATION
  ${prefix}/bin/bench --replay ${SOURCE_DIR}/results/sessions/h200-small/raw_session.json --out ${WORK_DIR}/replayed)
foreach(f ${WORK_DIR}/validation.json ${WORK_DIR}/replayed/full.json ${WORK_DIR}/replayed/table.json)
  if(NOT EXISTS ${f})
    message(FATAL_ERROR "install_example: the installed binaries did not write ${f}")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})
