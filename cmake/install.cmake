# `cmake --install BUILD [--prefix DIR]` installs:
#   bin/bench, bin/validate                        (RPATH keeps the CUDA toolkit's library folders)
#   lib/libcrossbench_common.a                     the bottom layer (errors, units, statistics, JSON, files)
#   lib/libcrossbench_profiler_model.a             the event model; _exporters: table and traces;
#   lib/libcrossbench_profiler_exporters.a         _adapters: the CUPTI collector and the NVTX mirror
#   lib/libcrossbench_profiler_adapters.a          crossbench::profiler_core = model + exporters,
#                                                  crossbench::profiler = all three
#   lib/libcrossbench_bench.a (+ its parts)        crossbench::bench: the measuring API and harness (xb::main):
#                                                  the measuring core only; bench's commands (sweep, qualify,
#                                                  --devices, calibrate, ab, overhead) are in bin/bench alone
#   include/crossbench/                            the repository's include/crossbench as it is: the public
#                                                  headers, included by their layer's path
#                                                  ("common/errors.h", "profiler/model/profiler.h",
#                                                  "profiler/exporters/outputs.h", "bench/core/api.h": the
#                                                  measuring API); every other header is private (it lives
#                                                  beside its sources)
#   lib/cmake/crossbench/                          the package: find_package(crossbench) finds CUDAToolkit,
#                                                  nlohmann_json and fmt for the targets' link dependencies
# examples/benchmark_my_kernel builds against it; ctest install_example (label cpu) proves that.
include(CMakePackageConfigHelpers)

set(XB_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/crossbench)

set_target_properties(bench validate PROPERTIES INSTALL_RPATH_USE_LINK_PATH TRUE)
install(TARGETS bench validate RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# crossbench::bench is a static library whose parts (the harness core, the kernels, the
# validator) are exported beside it for its link line; only bench/core/api.h is a public header.
# The commands' libraries (xb_bench_sweep_gpu, ..., xb_bench_main_gpu) are linked into bin/bench and not
# installed: a user's benchmark links the measuring core.
install(TARGETS xb_common xb_profiler_model xb_profiler_exporters xb_profiler_adapters xb_profiler_core xb_profiler
  xb_bench_run_gpu xb_bench_cli xb_bench_core_gpu xb_kernels xb_validate EXPORT crossbenchTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
# The public headers are where they live: include/crossbench. No CUDA or CUPTI header beyond
# cuda_runtime_api.h, no nlohmann, no harness type; ctest installed_headers checks all three.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/crossbench DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

install(EXPORT crossbenchTargets NAMESPACE crossbench:: DESTINATION ${XB_PACKAGE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/crossbenchConfig.cmake.in
  ${PROJECT_BINARY_DIR}/crossbenchConfig.cmake INSTALL_DESTINATION ${XB_PACKAGE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/crossbenchConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/crossbenchConfig.cmake ${PROJECT_BINARY_DIR}/crossbenchConfigVersion.cmake
  DESTINATION ${XB_PACKAGE_DIR})
