// The counter pass (bench --counters, bench sweep --counters; docs/metrics.md "Hardware
// counters"): after the timing pass, each fixture's call again, in the steady state of back-to-back
// calls that hot mode times: under CUPTI's range profiler, kCounterCalls calls profiled back to back
// after as many unprofiled warm-up calls, replayed once per pass its metrics need; then the calls
// once more with their kernels SASS-patched for the SASS FLOP instruction counts. Never mixed into timed
// samples: its numbers go to counters.json only. The loop is plain C++ over a CounterCollector
// (profiler/model/counters.h), CPU-tested with a fake one; run_counter_pass_on_gpu is its CUDA side.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "bench/core/fixture_plan.h"
#include "profiler/model/counters.h"

namespace xb {

/// One fixture of the counter pass.
struct CounterJob {
  FixtureCounters fixture;  ///< name, op, dtype, size, model flops and bytes; kernels empty
  /// Creates the fixture's instance and returns what enqueues one call (owning the instance).
  /// May throw: the fixture then gets the exception's message as its error.
  std::function<std::function<void()>()> make_call;
};

/// Calls profiled per fixture (K): back to back, after K unprofiled warm-up calls before each
/// replay pass, so that each profiled call finds the L2 as the calls before it left it (the steady
/// state of hot mode; docs/metrics.md "Hardware counters"). Per-call figures are the K calls'
/// totals / K. 16: at most 16 x 10.7 ms x 2 x 15 passes = 5 s for matmul bf16 16384 on an H200.
inline constexpr int kCounterCalls = 16;

/// Makes the collector; throws ProfilerError saying why there are no counters.
using CollectorFactory = std::function<std::unique_ptr<CounterCollector>()>;

/// Runs the pass: makes the collector once (a ProfilerError from it gives status "unavailable"
/// with its message as the reason, every fixture listed with that error, and no exception). Range
/// profiler, per job: make_call(), one call outside the collection (lazy loading, library
/// heuristics), `sync()`, collector collect() of `calls` back-to-back calls with `calls`
/// unprofiled warm-up calls and `sync()` before each replay pass (no L2 flush: the steady state);
/// a kernel count that is not a whole multiple of `calls` is the fixture's error (every call must
/// launch the same kernels); the instance is released. Then prepare_sass(), and when it says
/// ready, per job without error: make_call(), one unprofiled call, `sync()`, collect_sass() of
/// `calls` calls; otherwise every fixture's sass_error says why. A job that throws gets its error
/// (or sass_error) and the pass goes on. describe() last. `created_utc`, gpu_name and l2_bytes are
/// the caller's to fill. `idle`, when set, is called before each replay pass's warm-up calls, the
/// device idle (everything earlier synchronized): run_counter_pass_on_gpu sleeps there to space
/// the passes. `between_calls`, when set, is called between consecutive calls of every batch of
/// `calls` (warm-up, profiled and SASS alike; never before the first): run_counter_pass_on_gpu
/// synchronizes and sleeps there to space the calls as Nsight Compute's per-kernel collection
/// spaces them. Throws std::invalid_argument for calls < 1.
CounterSession run_counter_pass(const std::vector<CounterJob>& jobs, const CollectorFactory& make_collector,
                                const std::function<void()>& sync, int calls = kCounterCalls,
                                const std::function<void()>& idle = {},
                                const std::function<void()>& between_calls = {});

/// Relative difference measured / model - 1; 0 when both are 0, +inf never (model 0 and measured
/// > 0 give 1).
double relative_to_model(double measured, double model);

/// The terminal table of a pass: per fixture the model's and the counters' bytes and FLOPs per
/// call, their differences in %, intensity from the counters, SM and DRAM throughput; or the one
/// line saying why the pass is unavailable.
void print_counter_table(const CounterSession& session, std::ostream& out);

/// The counter pass of `fixtures` (registered benchmarks, bench/core/api.h) on `stream` and the
/// current device, after everything timed: run_counter_pass with the CUPTI collector and `calls`
/// calls per fixture (bench's and the sweep's pass: kCounterCalls; make_cupti_counter_collector; with XB_COUNTERS_LOG
/// set, "-" for stderr or a file name, every CUPTI call's result and each metric accepted or rejected are logged
/// there), then writes `dir`/counters.json and prints the table to `out`. An unavailable pass is one line, never an
/// exception. `idle_before_pass_ms` > 0: the device idles that long (ms) before each replay pass's
/// warm-up calls, and counters.json's method says so; 0, bench's pass: passes back to back. The
/// fresh-process probe for the Nsight Compute comparison sets it so that its passes are spaced as
/// ncu's application replay spaces them (each ncu pass relaunches the process; docs/metrics.md,
/// "Comparing with Nsight Compute"). `idle_between_calls_ms` > 0: the stream is synchronized and
/// the device idles that long (ms) between consecutive calls of a pass, so that a kernel that
/// draws the GPU to its power limit back to back (the 16384^2 GEMM) runs at the clocks it has
/// under ncu, whose per-kernel collection leaves the GPU idle between kernels; counters.json's
/// method says so. `calls` (K) other than kCounterCalls: the fresh-process probe's medians over more
/// calls (XB_PROBE_CALLS), at most 512 kernels per collection. Throws std::invalid_argument for
/// idle_before_pass_ms < 0, idle_between_calls_ms < 0 or calls < 1, CudaError when the device cannot be queried,
/// std::runtime_error when counters.json cannot be written.
CounterSession run_counter_pass_on_gpu(const std::vector<FixtureSpec>& fixtures, cudaStream_t stream,
                                       const std::filesystem::path& dir, std::ostream& out, int idle_before_pass_ms = 0,
                                       int idle_between_calls_ms = 0, int calls = kCounterCalls);

}  // namespace xb
