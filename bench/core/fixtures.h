// Google Benchmark fixtures: one per op x dtype x size, each timed by cudaEvent pairs (manual
// time) and recorded by the CUPTI profiler in ProfilerStep#N ranges.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "bench/core/api.h"
#include "bench/core/device_failure.h"
#include "bench/core/fixture_plan.h"
#include "bench/core/measure.h"
#include "bench/core/options.h"
#include "bench/core/sampling.h"
#include "bench/core/stopping_rule.h"
#include "common/stats.h"
#include "kernels/cuda_raii.h"
#include "profiler/model/profiler.h"

namespace xb {

/// Device-to-device copy bandwidth measured two ways, each in bytes/ns (= GB/s), counting bytes
/// read + written over the fastest per-call sample. 0 = not measured.
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
  SampleDevice* device = nullptr;  ///< the sampling core's device (blocking kernel, events, L2 flush)
  cudaStream_t stream = nullptr;   ///< the stream every instance enqueues on
  MeasureConfig measure;           ///< mode, batch, warm-up, schedule, stopping rule, NVML
  std::size_t l2_bytes = 0;        ///< L2 size of the device (cudaDevAttrL2CacheSize): cold-mode rotation
  CopyBandwidth copy;              ///< cold mode: measured D2D copy bandwidth (0s otherwise)
  std::set<std::string> recorded;  ///< fixtures already added to the session
  /// Per fixture name: a stopping rule that replaces measure.stopping for that fixture (bench
  /// qualify: a suite's per-fixture noise target).
  std::map<std::string, StoppingRule::Config> stopping_by_fixture;
  /// Per fixture name: a known delay, ns, added to every call (--slow-fixture; SampleSpec::delay_ns).
  std::map<std::string, std::int64_t> delay_ns_by_fixture;
  std::vector<std::string> errors;  ///< fixtures that failed (wrong result, CUDA error, ...)
  /// A device fault or hang in one fixture: it is recorded there, and the fixtures after it are
  /// not run (nor counted in `errors`); bench_run_gpu.cpp reports it in one line.
  DeviceFailures device_failures;
};

/// The sampling core outside a recorded session: measure() of `enqueue` (one call on `stream`) in
/// `cfg`'s mode, behind a blocking kernel of its own, with a profiler that records nothing
/// (make_null_source, never started: no step is active). For facts about the GPU that no session
/// holds: the copy bandwidth below, `bench calibrate`'s ceilings. `cfg.mode` must be "hot" (there
/// is no L2 flush buffer). Throws CudaError, and what measure() throws; the blocking kernel is
/// released first.
Measurement measure_unrecorded(cudaStream_t stream, const std::function<void()>& enqueue, const std::string& name,
                               const MeasureConfig& cfg);

/// How a device-to-device copy is made.
enum class CopyPath {
  Memcpy,  ///< cudaMemcpyAsync, cudaMemcpyDeviceToDevice
  Kernel,  ///< our SM copy kernel (kernels/copy.h: launch_copy)
};

/// One device-to-device copy of `bytes` from a buffer of random data (launch_random_fill) to
/// another, by `path`: warm_up_for(`warmup_ms`) (at least 2 calls: lazy loading, idle clocks),
/// then measure_unrecorded with `cfg`. Samples are per call (interval / launches). Used by
/// measure_copy_bandwidth and `bench calibrate` (the copy ceiling). Throws CudaError (e.g. out of
/// memory), std::invalid_argument for bytes == 0, and what measure_unrecorded throws.
Measurement measure_copy(cudaStream_t stream, std::size_t bytes, CopyPath path, double warmup_ms,
                         const MeasureConfig& cfg);

/// The cold-mode bound: device-to-device copy bandwidth of a 256 MiB buffer, both paths, each by
/// measure_copy in hot mode (at least 20 samples, the noise rule, at most 1 s each); each rate is
/// bytes read + written (2 x 256 MiB) over its fastest per-call sample, so best_bytes_per_ns()
/// bounds any achievable rate from above (docs/metrics.md). Throws what measure_copy throws.
CopyBandwidth measure_copy_bandwidth(cudaStream_t stream);

/// Google Benchmark counters every fixture sets besides its figures (benchmark.json; the console
/// reporter, bench/run/console_reporter.h, shows them as its Iterations and CPU columns): the calls
/// timed (samples x calls per sample) and the host CPU time per timed call, us. Google Benchmark's
/// own iteration count is 1 and its CPU time the whole measurement's (measure() runs once).
inline constexpr const char* kCallsCounter = "calls";
inline constexpr const char* kCpuPerCallCounter = "cpu_us_per_call";

/// Registers one benchmark per fixture, in the given order. Throws std::invalid_argument for an
/// unregistered op.
void register_fixtures(const std::vector<FixtureSpec>& fixtures, BenchContext& context);

/// Registers one benchmark per op x dtype x size of `options`, in that nesting order.
void register_fixtures(const BenchOptions& options, BenchContext& context);

}  // namespace xb
