// Google Benchmark fixtures: one per op x dtype x size, each timed by cudaEvent pairs (manual
// time) and recorded by the CUPTI profiler in ProfilerStep#N ranges.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "bench/cli.h"
#include "bench/sampling.h"
#include "kernels/blocking.h"
#include "kernels/cuda_raii.h"
#include "kernels/workload.h"
#include "profiler/profiler.h"
#include "profiler/stats.h"

namespace xb {

/// Device-to-device copy bandwidth measured two ways, each in bytes/ns (= GB/s), counting bytes
/// read + written over the fastest call. 0 = not measured.
struct CopyBandwidth {
  double memcpy_bytes_per_ns = 0;  ///< cudaMemcpyAsync, cudaMemcpyDeviceToDevice
  double kernel_bytes_per_ns = 0;  ///< our SM copy kernel (kernels/copy.h: launch_copy)
  /// The bound on cold-mode rates: the better of the two, bytes/ns. Neither path alone is one:
  /// on the H200 our add kernel ran 1.7% above the cudaMemcpyAsync rate (issue 4).
  double best_bytes_per_ns() const { return std::max(memcpy_bytes_per_ns, kernel_bytes_per_ns); }
};

/// Shared state of all fixtures in one `bench` run. Outlives benchmark::RunSpecifiedBenchmarks.
struct BenchContext {
  Profiler* profiler = nullptr;
  Schedule schedule;
  bool warmup = false;
  cudaStream_t stream = nullptr;
  BlockingKernel* blocking = nullptr;   ///< null: --no-blocking
  std::string mode = "hot";             ///< "hot" or "cold" (BenchOptions::mode)
  int batch = 0;                        ///< hot mode launches per sample, 0 = auto
  StoppingRule::Config stopping;        ///< noise-based stopping rule
  std::size_t l2_bytes = 0;             ///< L2 size of the device (cudaDevAttrL2CacheSize)
  const DeviceBuffer* flush = nullptr;  ///< cold mode: L2 flush buffer (at least 2x l2_bytes)
  CopyBandwidth copy;                   ///< cold mode: measured D2D copy bandwidth (0s otherwise)
  std::function<GpuClockSample()> read_gpu;  ///< NVML snapshot; may be empty
  double power_limit_w = 0;             ///< NVML enforced power limit, W (0 = unknown)
  std::set<std::string> recorded;       ///< fixtures already added to the session
  /// Per fixture name: a stopping rule that replaces `stopping` for that fixture (bench qualify:
  /// a suite's per-fixture noise target).
  std::map<std::string, StoppingRule::Config> stopping_by_fixture;
  /// Per fixture name: a known delay, ns, added to every call (--slow-fixture; SampleSpec::delay_ns).
  std::map<std::string, std::int64_t> delay_ns_by_fixture;
  std::vector<std::string> errors;      ///< fixtures that failed (wrong result, CUDA error, ...)
};

/// Device-to-device copy bandwidth of a 256 MiB buffer filled with random data
/// (launch_random_fill), two ways: cudaMemcpyAsync and our copy kernel (launch_copy). Each path
/// makes 25 calls back to back on `stream`, with a cudaEvent recorded before the first and after
/// each, so that consecutive events time one call and the host's launch gap stays outside every
/// interval but the first; the first 5 calls are untimed (lazy loading, clocks). Each rate is bytes
/// read + written (2 x 256 MiB) over its fastest call; best_bytes_per_ns() bounds any achievable
/// rate from above (docs/metrics.md). Throws CudaError (e.g. out of memory), std::runtime_error
/// when a timed call's event interval is not positive.
CopyBandwidth measure_copy_bandwidth(cudaStream_t stream);

/// What one sample does (see timed_call).
struct SampleSpec {
  int launches = 1;                     ///< workload calls between the events
  bool blocking = true;                 ///< queue everything behind the blocking kernel
  const DeviceBuffer* flush = nullptr;  ///< overwrite this buffer (L2 flush) before the start event
  /// > 0: after each workload call, a spin kernel of this many ns (kernels/spin_delay.h) inside
  /// the annotation, in its own "xb::delay" CPU op range (--slow-fixture, for testing the gate).
  std::int64_t delay_ns = 0;
};

/// Result of one timed call.
struct TimedCall {
  std::int64_t event_ns = 0;  ///< cudaEvent interval, ns (all launches of the sample)
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

/// General form: `spec.launches` calls of `w` between the events, each inside its own CPU op
/// range (all inside one annotation); with spec.flush, the flush buffer is overwritten first
/// (outside the event interval and the profiler step); without spec.blocking, nothing holds the
/// stream (`blocking` may then be null). Same errors as above, plus std::invalid_argument for
/// spec.launches < 1.
TimedCall timed_sample(Workload& w, Profiler& prof, BlockingKernel* blocking, const Event& start,
                       const Event& stop, const std::string& annotation, const std::string& op_name,
                       const SampleSpec& spec);

/// Fixture name "<op>/<dtype>/<n>", also the user annotation around each timed call.
std::string fixture_name(const std::string& op, const std::string& dtype, std::int64_t n);

/// One fixture of a run: op x dtype x size.
struct FixtureSpec {
  std::string op;
  std::string dtype;
  std::int64_t size = 0;
};

/// The fixtures of `options`: op x dtype x size, in that nesting order.
std::vector<FixtureSpec> fixture_specs(const BenchOptions& options);

/// Registers one benchmark per fixture, in the given order. Throws std::invalid_argument for an
/// unknown op or dtype.
void register_fixtures(const std::vector<FixtureSpec>& fixtures, BenchContext& context);

/// Registers one benchmark per op x dtype x size of `options`, in that nesting order.
void register_fixtures(const BenchOptions& options, BenchContext& context);

}  // namespace xb
