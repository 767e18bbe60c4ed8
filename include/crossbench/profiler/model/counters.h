// Hardware counters, the third witness (docs/metrics.md, "Hardware counters"): per kernel, DRAM
// bytes read and written, FLOPs from the SASS and tensor-pipe counters, SM and DRAM throughput as
// % of peak, and the kernel's duration, collected in a pass of their own (CUPTI's range profiler
// replays each kernel, which perturbs timing, so none of these numbers ever enters a timed
// sample). This header is the plain C++ side: the metric table with its FLOP weights, the
// per-call figures derived from raw metric values, counters.json (docs/formats.md), and the
// collector interface the CUPTI adapter implements (profiler/adapters/cupti_counters.cpp) and CPU tests
// fake. No CUDA or CUPTI headers.
//
// Units: bytes, FLOPs (floating-point operations: a fused multiply-add counts 2), ns, percent.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace xb {

/// What a metric's value contributes to.
enum class CounterQuantity {
  DramReadBytes,      ///< bytes read from device memory (HBM)
  DramWriteBytes,     ///< bytes written to device memory
  SassFlops,          ///< FLOPs from a SASS instruction counter: value x weight
  TensorFlops,        ///< FLOPs from a tensor-pipe operation counter: value x weight
  SmThroughputPct,    ///< SM throughput, % of peak sustained over the kernel's elapsed cycles
  DramThroughputPct,  ///< DRAM throughput, % of peak sustained over the kernel's elapsed cycles
  DurationNs,         ///< the kernel's GPU duration, ns
};

/// "dram_read_bytes", "dram_write_bytes", "sass_flops", "tensor_flops", "sm_throughput_pct",
/// "dram_throughput_pct", "duration_ns" (counters.json's spelling).
const char* to_string(CounterQuantity q);

/// Which CUPTI API collects a metric (docs/metrics.md, "Hardware counters").
enum class CounterSource {
  RangeProfiler,  ///< hardware counters: CUPTI's range profiler (cupti_range_profiler.h)
  SassMetrics,    ///< SASS patching: CUPTI's SASS metrics API (cupti_sass_metrics.h); the range
                  ///< profiler accepts these names but counts 0 (H200, CUDA 13.0)
};

/// "range_profiler" or "sass_metrics" (counters.json's spelling).
const char* to_string(CounterSource s);

/// One metric the counter pass asks for (the names are Nsight Compute's and CUPTI's host API's).
struct CounterMetric {
  std::string name;          ///< e.g. "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"
  CounterQuantity quantity;  ///< what its value contributes to
  double weight = 1;         ///< FLOPs per counted instruction or op (SassFlops, TensorFlops); else 1
  bool essential = false;    ///< the pass is useless without it (DRAM bytes, duration)
  CounterSource source = CounterSource::RangeProfiler;  ///< the API that collects it
};

/// Every metric of the counter pass, in collection order, with the FLOP weights and their
/// sources in docs/metrics.md: FADD, FMUL, HADD, HMUL, DADD, DMUL count 1 FLOP per thread
/// instruction, FFMA, HFMA, DFMA 2 (Nsight Compute's roofline sections weight FMA x2); the
/// tensor-pipe counters sm__ops_path_tensor_src_*_dst_* count math operations with a multiply
/// and an add counted separately, i.e. FLOPs (weight 1: n x n x n GEMMs count 2 n^3).
const std::vector<CounterMetric>& counter_metrics();

/// Values of one kernel (one CUPTI range: auto range mode gives one per kernel launch).
struct KernelCounters {
  std::string range;                     ///< CUPTI's range name (auto range: launch index, "0", "1", ...)
  std::map<std::string, double> values;  ///< metric name -> value (only metrics CUPTI accepted)
};

/// Figures of one call (or one kernel), derived from metric values by derive_figures.
struct CounterFigures {
  double dram_read_bytes = 0;
  double dram_write_bytes = 0;
  double dram_bytes = 0;           ///< read + written
  double sass_flops = 0;           ///< sum of SASS counters x weights
  double tensor_flops = 0;         ///< sum of tensor-pipe counters x weights
  double flops = 0;                ///< sass_flops + tensor_flops
  double duration_ns = 0;          ///< sum of the kernels' gpu__time_duration
  double sm_throughput_pct = 0;    ///< duration-weighted mean over the kernels
  double dram_throughput_pct = 0;  ///< duration-weighted mean over the kernels
  /// flops / dram_bytes, FLOP/B; 0 when no DRAM byte was counted.
  double intensity() const { return dram_bytes > 0 ? flops / dram_bytes : 0.0; }
};

/// Per-call figures of `kernels` (all kernels of `calls` calls): sums over the kernels divided by
/// `calls`, throughputs as the duration-weighted mean (plain mean when no duration is known).
/// Metrics not in counter_metrics() are ignored. Throws std::invalid_argument for calls < 1 or a
/// negative or non-finite value.
CounterFigures derive_figures(const std::vector<KernelCounters>& kernels, int calls);

/// One fixture's counter pass.
struct FixtureCounters {
  std::string name;  ///< fixture name "<op>/<dtype>/<n>"
  std::string op;
  std::string dtype;
  std::int64_t size = 0;
  double model_flops = 0;  ///< what the roofline assumes per call (the fixture's flops in raw_session.json)
  double model_bytes = 0;  ///< what the roofline assumes per call (the fixture's bytes in raw_session.json)
  /// Calls profiled back to back (K, kCounterCalls in bench/core/counter_pass.h), each pass after
  /// as many unprofiled warm-up calls; per-call figures are totals / calls.
  int calls = 1;
  std::vector<KernelCounters> kernels;  ///< every kernel of those calls, in launch order
  std::string error;                    ///< why this fixture has no counters ("" = collected)
  /// The SASS metrics pass: metric name -> total over all kernels of the `calls` calls (SASS
  /// patching counts per instruction, not per launch). Empty when not counted.
  std::map<std::string, double> sass;
  std::string sass_error;  ///< why there are no SASS counts for this fixture ("" = counted)
};

/// Per-call figures of a fixture: derive_figures of its kernels (range profiler) with its SASS
/// totals (`sass`, divided by `calls`) added to sass_flops. Throws as derive_figures does.
CounterFigures derive_figures(const FixtureCounters& fixture);

/// A counter pass: what was collected, how, and for which fixtures (counters.json).
struct CounterSession {
  std::string created_utc;
  /// "collected", or "unavailable" (library, permission, device: `reason` says which; the
  /// timing pass ran anyway).
  std::string status = "collected";
  std::string reason;   ///< one line: why unavailable ("" when collected)
  std::string method;   ///< e.g. "CUPTI range profiler, auto range, kernel replay"
  std::string library;  ///< the CUPTI library file used
  std::string gpu_name;
  std::string chip;            ///< CUPTI's chip name, e.g. "GH100"
  std::uint64_t l2_bytes = 0;  ///< the device's L2 size (cudaDevAttrL2CacheSize)
  int passes = 0;              ///< replay passes per call the range profiler needed for the metrics
  /// The SASS metrics pass: "counted", or "not counted" (`sass_reason` says why: API missing,
  /// device unsupported, no SASS metric offered); independent of `status`.
  std::string sass_status = "not counted";
  std::string sass_reason;
  std::vector<std::string> accepted;            ///< metrics CUPTI accepted
  std::map<std::string, std::string> rejected;  ///< metric -> why CUPTI refused it
  std::vector<FixtureCounters> fixtures;
};

/// Writes counters.json (docs/formats.md): the pass it comes from, the method, the metrics with
/// their quantity and weight, and per fixture the model, every kernel's raw values and the
/// per-call figures (derive_figures). Throws std::invalid_argument for non-finite numbers.
void write_counters_json(const CounterSession& session, std::ostream& out);

/// Parses counters.json text. Requires crossbench.format == "counters", version 1, the keys
/// write_counters_json writes with their JSON types and finite, non-negative numbers; the
/// per-call figures in the file are not read back (derive_figures recomputes them from the raw
/// values). Throws InputError (common/errors.h) naming what is wrong and where.
CounterSession parse_counters_json(const std::string& text);

/// Reads and parses a file; throws InputError naming the file.
CounterSession read_counters_json(const std::filesystem::path& path);

/// Where counter values come from. The CUPTI adapter implements it (make_cupti_counter_collector,
/// profiler/adapters/cupti_counter_collector.h);
/// CPU tests fake it. Not thread-safe; one collection at a time.
class CounterCollector {
 public:
  virtual ~CounterCollector() = default;
  /// Range profiler: profiles `work` (which enqueues the profiled calls; re-callable, same
  /// kernels every time), replaying it once per pass the metrics need and calling `before_pass`
  /// before each pass, outside the collection (the counter pass runs its unprofiled warm-up calls
  /// there and waits for the device). Returns one KernelCounters per kernel launch of one replay,
  /// in launch order.
  /// Throws ProfilerError, and what `work` or `before_pass` throw.
  virtual std::vector<KernelCounters> collect(const std::function<void()>& work,
                                              const std::function<void()>& before_pass) = 0;
  /// Ends range profiling and readies the SASS metrics pass; collect() may not be called after
  /// it. Returns "" when collect_sass can run, else one line saying why not (never throws).
  virtual std::string prepare_sass() = 0;
  /// SASS metrics pass (after prepare_sass() returned ""): runs `work` once with its kernels
  /// SASS-patched and returns metric name -> total over every kernel it launched. Throws
  /// ProfilerError, and what `work` throws.
  virtual std::map<std::string, double> collect_sass(const std::function<void()>& work) = 0;
  /// Fills method, library, chip, passes, accepted and rejected metrics (of both passes) into
  /// `session`.
  virtual void describe(CounterSession& session) const = 0;
};

}  // namespace xb
