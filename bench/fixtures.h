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
#include "kernels/cuda_raii.h"
#include "kernels/workload.h"
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

/// Result of one timed call.
struct TimedCall {
  std::int64_t event_ns = 0;  ///< cudaEvent interval, ns
  bool recorded = false;      ///< the call was an active (recorded) profiler step
};

/// One cudaEvent-timed call of the workload, inside the profiler's next step. The blocking
/// kernel holds the stream while the start event, the workload and the stop event are queued,
/// so the host's launch gap stays outside the event interval (nvbench's method). Active steps
/// get a "ProfilerStep#N" range holding `annotation` (user annotation) > `op_name` (CPU op),
/// and their event time is added to the session. Throws std::runtime_error when the blocking
/// kernel timed out or the interval is not positive, CudaError on API failure.
TimedCall timed_call(Workload& w, Profiler& prof, BlockingKernel& blocking, const Event& start,
                     const Event& stop, const std::string& annotation, const std::string& op_name);

/// Fixture name "<op>/<dtype>/<n>", also the user annotation around each timed call.
std::string fixture_name(const std::string& op, const std::string& dtype, std::int64_t n);

/// Registers one benchmark per op x dtype x size of `options`, in that nesting order.
void register_fixtures(const BenchOptions& options, BenchContext& context);

}  // namespace xb
