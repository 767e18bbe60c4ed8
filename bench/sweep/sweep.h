// `bench sweep` and `bench calibrate`: their command lines, the per-point measurements taken from
// a recorded sweep session, and the sweep outputs (sweep.json, sweep.csv, sweep.md). Plain C++ (no
// CUDA): the GPU side lives in bench/sweep/sweep_command_gpu.cpp and bench/calibrate/calibrate_gpu.cpp.
//
// A sweep session is a raw session (profiler/model/raw_records.h) in which every point (fixture) has
//  - timed steps, as `bench` records them: ProfilerStep#N > "<fixture>" annotation > "xb::<op>"
//    cpu_op > the op's API calls, each with a cudaEvent timing (StepTiming), and
//  - one eager step: ProfilerStep#N > "eager:<fixture>" annotation > R x "xb::<op>" cpu_op, the
//    op enqueued R times back to back with no synchronization in between (docs/metrics.md), and
//  - unless --no-graph, a graph fixture "graph:<fixture>": the same timed schedule with each
//    sample's batch captured once into a CUDA graph and replayed (MeasureConfig::graph), so the
//    launch overhead a graph saves is measured beside the eager launches.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "bench/core/fixture_records.h"
#include "bench/sweep/regime.h"

namespace xb {

/// Everything `bench sweep` was asked to do.
struct SweepOptions {
  std::vector<std::int64_t> sizes;  ///< ascending order of the spec; default 64:16384:x2
  std::vector<std::string> ops{"matmul", "add", "addmm", "addmm_bias1d"};
  std::vector<std::string> dtypes{"bf16"};
  int wait_steps = 1;           ///< timed schedule: unrecorded steps
  int warmup_steps = 1;         ///< timed schedule: recorded-then-discarded steps
  int active_steps = 10;        ///< timed schedule: recorded steps
  int eager_calls = 20;         ///< calls in the eager window (fewer for long calls, at least 3)
  double warmup_ms = 20;        ///< back-to-back warm-up per point before anything is recorded
  double busy_threshold = 0.5;  ///< RegimeRules::busy_threshold
  bool counters = false;        ///< after the points, the counter pass (counters.json; bench/core/counter_pass.h)
  bool graph = true;            ///< also time each point in CUDA-graph mode (--no-graph: skip)
  std::filesystem::path out;    ///< run folder; empty = results/runs/<UTC time>-<pid>
  std::optional<std::filesystem::path> ceilings;  ///< ceilings.json; none: calibrate first
};

/// Parses `bench sweep` arguments (argv[0] = "sweep"). Throws UsageError on bad input; returns
/// std::nullopt when --help was printed.
std::optional<SweepOptions> parse_sweep_args(int argc, const char* const* argv);

/// Name of the eager window's annotation: "eager:<fixture>".
std::string eager_annotation(const std::string& fixture);

/// Name of a point's graph-mode fixture: "graph:<fixture>".
std::string graph_fixture(const std::string& fixture);

/// Launch cost a CUDA graph saves per call, ns: (event_ns - kernel_ns) - (graph_event_ns -
/// graph_kernel_ns), the per-call gap outside the op's kernels, eager minus graph. Unlike the
/// totals it does not move with the GPU's clock between the two measurements. Meaningful only
/// when graph_steps > 0.
double graph_launch_saving_ns(const PointMeasurement& m);

/// Extracts one PointMeasurement per fixture of a sweep session, in fixture order (definitions in
/// docs/metrics.md, "Sweeps"):
///  - kernel_ns: per active timed step, the summed durations of the device activities (kernels,
///    memcpys, memsets) launched inside it; median over the steps.
///  - event_ns: median of the steps' cudaEvent times.
///  - host_api_ns: per step, the length of the union of the CUDA runtime/driver API calls made
///    inside the op's cpu_op range (nested calls counted once); median.
///  - host_op_ns: per step, the cpu_op range's duration; median.
///  - eager window: from the start of the "eager:<fixture>" annotation to the later of its end and
///    the end of the last device activity launched inside it; eager_device_ns sums those
///    activities; eager_calls counts the cpu_op ranges inside it.
///  - graph_event_ns / graph_kernel_ns: as event_ns / kernel_ns, over the active steps of the
///    graph fixture "graph:<fixture>" (FixtureTiming::graph); 0 when there is none. Graph fixtures
///    are not points of their own.
/// A fixture that is not verified, or has no timed steps, is returned with measured = false and a
/// note. Throws InputError when a verified fixture with timed steps has no eager window, or a step
/// has no device activity.
std::vector<PointMeasurement> measure_points(const RawSession& raw);

/// Facts about a point known only while it ran.
struct PointRunInfo {
  std::string verification;  ///< Verification::detail (what was checked, largest error)
  double verify_s = 0;       ///< wall time of the verification, s
  double tolerance = 0;      ///< relative-error bound the check used
  int warmup_calls = 0;
  std::string error;  ///< why the point failed ("" when it ran)
};

/// One sweep, analysed: what `bench sweep` writes as sweep.json / sweep.csv / sweep.md.
struct SweepReport {
  std::string created_utc;
  bool synthetic = false;   ///< true for made-up data (results/sweeps/synthetic-*)
  std::string notes;        ///< shown at the top of sweep.md
  SessionMeta meta;         ///< versions, schedule (from the raw session)
  Calibration calibration;  ///< the ceilings used
  RegimeRules rules;
  SweepOptions settings;  ///< schedule, eager calls, warm-up (sizes/ops/dtypes as run)
  std::vector<PointMetrics> points;
  std::map<std::string, PointRunInfo> run_info;  ///< by fixture name
  std::vector<Crossover> crossovers;
  std::optional<bool> validation_passed;  ///< none: not validated
  std::string validation_summary;         ///< e.g. "24 passed, 0 failed, 0 not run"
  double elapsed_s = 0;                   ///< wall time of the sweep
};

/// Evaluates every measurement against calibration.roof(dtype) and fills points and crossovers.
/// Throws std::invalid_argument (from evaluate_point / Calibration::roof).
void analyse(SweepReport& report, const std::vector<PointMeasurement>& measurements);

/// sweep.json (docs/metrics.md, "sweep.json"). Throws std::invalid_argument for non-finite values.
void write_sweep_json(const SweepReport& report, std::ostream& out);
/// sweep.csv: one header line, one line per point (columns in docs/metrics.md).
void write_sweep_csv(const SweepReport& report, std::ostream& out);
/// sweep.md: ceilings beside the datasheet, the points table, crossovers, rules, plots.
void write_sweep_markdown(const SweepReport& report, std::ostream& out);
/// The short terminal table: one line per point plus the crossovers.
void print_sweep_table(const SweepReport& report, std::ostream& out);

}  // namespace xb
