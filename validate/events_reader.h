// Reading cudaEvent timings for the validator's event_vs_cupti check: crossbench's events.json
// (one event time per recorded ProfilerStep, tied to the step's range id) and the summary.json of
// PyTorch reference recordings (per workload, the median of cudaEvent times of other calls).
//
// Units: nanoseconds.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace xb {

/// One recorded step's cudaEvent time.
struct EventStep {
  std::int64_t step = 0;       ///< ProfilerStep number
  std::uint64_t range_id = 0;  ///< External id of the step's "ProfilerStep#N" range in the traces
  std::int64_t event_ns = 0;
  int launches = 1;  ///< workload calls between the events (hot mode: the batch)
};

/// One crossbench fixture of events.json.
struct EventFixture {
  std::string name;
  bool verified = false;
  bool has_reference = true;  ///< false ("reference": false): the benchmark gave no reference check
  double max_rel_error = 0;
  bool has_median = false;
  double median_ns = 0;
  std::string mode;        ///< "hot", "cold", or "" (no timing block)
  std::string stop;        ///< stopping rule's end: "converged" or "timed out" (noise target missed)
  bool throttled = false;  ///< NVML showed a throttle reason before or after sampling
  /// timing.sync: "declared" or "detected" when the launch synchronizes with the device (sampled
  /// without the blocking kernel), "" otherwise.
  std::string sync;
  std::string error;  ///< the fixture failed in the bench ("" when it ran)
  std::vector<EventStep> steps;
  /// The fixture's work signature ("work": what one call enqueues, docs/formats.md): present at
  /// all, recorded or why not, its summary, and, from its items, whether every item is ordered
  /// between the events (after_start and before_end) and the call's cross-stream waits.
  bool has_work = false;
  bool work_recorded = false;
  std::string work_why, work_summary;
  bool work_covered = false;
  int work_items = 0, work_streams = 0, work_cross_stream_waits = 0, work_allocations = 0;
  std::vector<std::uint32_t> work_stream_ids;  ///< the streams of the probed call's items (CUPTI ids)
  /// The legacy and per-thread default streams' CUPTI ids the probe saw (work.legacy_stream,
  /// work.per_thread_stream; absent: none).
  std::vector<std::uint32_t> work_default_stream_ids;
  bool graph = false;           ///< timing.graph: samples replayed a CUDA graph
  int graph_replay_items = -1;  ///< graph mode: one replay's device activities; -1: not probed
};

/// One workload of a PyTorch reference summary.json: event statistics over calls that were not
/// profiled (so not the profiled iterations).
struct EventRun {
  std::int64_t n = 0;  ///< problem size
  std::string op;      ///< "matmul", "add", "addmm"
  double median_ns = 0, min_ns = 0, max_ns = 0;
};

/// An events file.
struct EventsData {
  std::string path, file;
  enum class Kind { PerStep, OtherCalls } kind = Kind::PerStep;
  nlohmann::json meta;                 ///< events.json "crossbench" block (null for summary.json)
  std::vector<EventFixture> fixtures;  ///< Kind::PerStep
  std::vector<EventRun> runs;          ///< Kind::OtherCalls
};

/// Reads events.json (crossbench.format "events") or a reference summary.json (top-level
/// "runs" with "event": {"median_us", ...}). Throws InputError naming the file and what is wrong.
EventsData read_events(const std::filesystem::path& path);

/// Same, from memory.
EventsData parse_events(std::string_view text, const std::string& label);

}  // namespace xb
