// Google Benchmark fixtures: one per op x dtype x size, each timed by cudaEvent pairs (manual
// time) and recorded by the CUPTI profiler in ProfilerStep#N ranges.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "bench/cli.h"
#include "kernels/blocking.h"
#include "profiler/profiler.h"

namespace xb {

/// Shared state of all fixtures in one `bench` run. Outlives benchmark::RunSpecifiedBenchmarks.
struct BenchContext {
  Profiler* profiler = nullptr;
  Schedule schedule;
  bool warmup = false;
  cudaStream_t stream = nullptr;
  BlockingKernel* blocking = nullptr;
  std::set<std::string> recorded;       ///< fixtures already added to the session
  std::vector<std::string> errors;      ///< fixtures that failed (wrong result, CUDA error, ...)
};

/// Fixture name "<op>/<dtype>/<n>", also the user annotation around each timed call.
std::string fixture_name(const std::string& op, const std::string& dtype, std::int64_t n);

/// Registers one benchmark per op x dtype x size of `options`, in that nesting order.
void register_fixtures(const BenchOptions& options, BenchContext& context);

}  // namespace xb
