// The validator: reads a run folder's files back (table.json, trace_only.json, full.json,
// events.json; docs/formats.md), or PyTorch profiler exports (one or two Chrome traces from
// export_chrome_trace, plain or gzipped, and the key_averages().table() text), and proves they
// agree. Never looks at in-memory profiler objects, so it checks exactly what a user (or PyTorch
// tooling) would read. docs/validator.md describes every check, its inputs and tolerance.
//
// Modelled on cutlass tools/profiler: every check has a name (namespace xb::checks), every
// outcome is one value of CheckStatus, and every failure says which check, which subject
// (kernel, row, fixture, stream), what was expected and what was found.
//
// Units: nanoseconds (integers) internally; trace microseconds are converted once with us_to_ns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace xb {

/// Names of the checks, as they appear in CheckResult::check and validation.json.
namespace checks {
/// Per device-activity (kind, name): count, total, median, min, max agree between the table and
/// each trace (text tables: count, total and average, within their print resolution).
inline constexpr const char* kKernelStats = "kernel_stats";
/// Every table row names events of the trace (cut names by prefix; ambiguous cuts are reported)
/// and its calls, Self CPU, CPU total, Self CUDA and CUDA total equal what the trace implies.
inline constexpr const char* kTableRows = "table_rows";
/// Table arithmetic per kind of row: Self CUDA over device rows and over the host ranges that
/// launched them equals the Self CUDA total; Self CPU over host rows equals the Self CPU total;
/// percentages and averages match their values; no row above 100%; a parent's CUDA total is at
/// least the sum of its children's.
inline constexpr const char* kTableTotals = "table_totals";
/// An annotation's GPU span (first kernel start to last kernel end) is not kernel time: a table
/// row showing it as Self CUDA above the kernels under it fails (pytorch#130730); trace
/// gpu_user_annotation events span exactly their device work.
inline constexpr const char* kAnnotationSpan = "annotation_span";
/// Per correlation id: the activity has exactly one launch call, the activity and its launch name
/// the same host range (through the correlation -> External id maps only), that range exists,
/// and a second trace has the same activity, launch and range.
inline constexpr const char* kAttribution = "attribution";
/// Exactly one ac2g "s"/"f" pair per launched device activity, on the right lanes and
/// timestamps; a flow start on a launch/memcpy/memset call with no device record fails, one on a
/// call that launches no device work (a synchronize) is a note.
inline constexpr const char* kFlows = "flows";
/// Dropped and out-of-range record counts in the files' metadata are 0 and agree.
inline constexpr const char* kNoDroppedRecords = "no_dropped_records";
/// No device activity with dur <= 0 (and no event with dur < 0).
inline constexpr const char* kDurationsPositive = "durations_positive";
/// Device activities on one (device, stream) lane never overlap.
inline constexpr const char* kStreamOverlap = "stream_overlap";
/// No device activity starts before its launch call starts; reports the launch latency
/// distribution.
inline constexpr const char* kLaunchBeforeKernel = "launch_before_kernel";
/// No event lies outside the recording window of the trace metadata.
inline constexpr const char* kRecordingWindow = "recording_window";
/// Timestamps are monotonic per lane: on each stream, activities in launch (correlation) order
/// start in non-decreasing time; on each host thread, API calls in correlation order too.
inline constexpr const char* kLaneOrder = "lane_order";
/// Per fixture: median cudaEvent step time vs median CUPTI step span, within tolerance.
inline constexpr const char* kEventVsCupti = "event_vs_cupti";
/// Every fixture's result matched the host reference (events.json "verified").
inline constexpr const char* kVerified = "verified";
/// Per fixture: every device activity of one call (events.json "work", probed before sampling) is
/// ordered between the cudaEvents on the handed stream, and graph mode's replay enqueued the same
/// work; a fixture refused for it fails here with the refusal.
inline constexpr const char* kWorkSignature = "work_signature";
/// The roofline's model against the hardware counters of the counter pass (counters.json):
/// memory-bound fixtures whose bytes exceed the L2, DRAM bytes within tolerance; compute-bound
/// ones, FLOPs within tolerance of the model, or, for bench's GEMMs whose kernel name gives a CTA
/// tile, of the FLOPs that tile executes (tile quantization; the text says so). Not run without a
/// counter pass.
inline constexpr const char* kModelVsCounters = "model_vs_counters";
/// Not a check of the report: the name the fault corpus uses for unusable input (InputError,
/// exit code 2), which stops validation before any check runs.
inline constexpr const char* kInput = "input";
}  // namespace checks

/// Every check, in report order.
const std::vector<std::string>& all_checks();

/// Outcome of one check on one subject.
enum class CheckStatus {
  Passed,  ///< the check ran and the files agree
  Failed,  ///< the check ran and found a disagreement
  NotRun,  ///< the check could not run (no data for it); never counted as passed
  /// The check ran, within tolerance, but on evidence too unstable to claim agreement
  /// (event_vs_cupti: the paired differences' interval): neither passed nor failed. Not "noisy",
  /// which names a fixture that missed its precision target (ValidationReport::noisy_fixtures).
  NotClaimed,
  /// The input holds a construct the model does not cover (named in the message, "not judged:
  /// <what>"): neither passed nor failed, counted apart in the verdict.
  NotJudged,
};

/// "passed", "failed", "not_run", "not_claimed", "not_judged" (the spelling used in validation.json).
const char* to_string(CheckStatus status);
/// Inverse of to_string(CheckStatus); also reads "noisy", NotClaimed's name in reports written
/// before 2026-12-05. Throws std::invalid_argument for an unknown name.
CheckStatus check_status_from_string(const std::string& name);

/// One outcome: which check, on what, what was expected and what was found.
struct CheckResult {
  std::string check;     ///< one of xb::checks, e.g. "kernel_stats"
  std::string subject;   ///< kernel/row/fixture/lane the result is about ("" = the whole check)
  std::string expected;  ///< expected value, as text ("" when not applicable)
  std::string found;     ///< value found, as text ("" when not applicable)
  std::string message;   ///< human explanation (for passes: what was verified)
  CheckStatus status = CheckStatus::NotRun;
  /// For a failure whose cause is known (a PyTorch defect): one of xb::causes; "" otherwise.
  std::string cause;
};

/// Known causes of a failure, in words a PyTorch user understands (CheckResult::cause).
namespace causes {
/// An overhead event (Activity Buffer Request, ...) took the External id of the op around it,
/// so PyTorch counted that op's kernels a second time: on the overhead row and up its parents.
inline constexpr const char* kOverheadDoubleCount = "overhead_double_count";
/// pytorch#130730: an annotation's GPU span (first kernel start to last end) shown as Self CUDA.
inline constexpr const char* kAnnotationSpan = "annotation_span";
/// Kineto's JSON export writes a name holding a character that is not printable ASCII (UTF-8,
/// a control character) as "unknown" (libkineto output_json.cpp sanitizeForNonReadableChars),
/// while PyTorch's table keeps it: table and trace disagree on that row's name. The row is
/// still judged against the trace's "unknown" events. A defect of the export: the files
/// disagree, so the verdict stays FAILED, naming it.
inline constexpr const char* kNameWrittenUnknown = "name_written_unknown";
/// True for a cause whose findings leave the files agreeing under PyTorch's own rules, which
/// misreport device time (kOverheadDoubleCount, kAnnotationSpan): the verdict is PYTORCH DEFECTS.
/// False for a defect that makes the files disagree (kNameWrittenUnknown) and for no cause.
bool files_agree_despite(const std::string& cause);
}  // namespace causes

/// Numbers of results by status.
struct CheckCounts {
  std::size_t passed = 0;
  std::size_t failed = 0;
  std::size_t not_run = 0;
  std::size_t not_claimed = 0;
  std::size_t not_judged = 0;
};

/// Everything one validation produced. A check contributes one Passed result when it found
/// nothing wrong (event_vs_cupti and verified: one per fixture), one Failed result per
/// disagreement (capped, see ValidateOptions::max_failures_per_check), or NotRun results.
struct ValidationReport {
  std::string run_dir;                            ///< folder that was validated ("" for files)
  nlohmann::json inputs;                          ///< {"traces": [...], "table", "events"}: files read
  std::vector<CheckResult> checks;                ///< in check order
  std::map<std::string, std::string> tolerances;  ///< check name -> tolerance it applied, as text
  nlohmann::json source_meta;                     ///< "crossbench" block of the validated full.json (null if none)
  nlohmann::json figures;                         ///< check name -> measured figures (launch latency distribution, ...)
  /// Fixtures whose median missed its precision target (events.json timing.stop "timed out": the
  /// stopping rule ran out of time; bench's `noisy`). Their times are less precise than asked, not
  /// wrong: no check fails for it, and the verdict counts them.
  std::vector<std::string> noisy_fixtures;

  /// True when no result is Failed (NotRun results do not fail a run).
  bool passed() const;
  /// Results by status.
  CheckCounts counts() const;
  /// Results of one check, in report order.
  std::vector<const CheckResult*> results_of(const std::string& check) const;
  /// Worst status of one check: Failed if any result failed, else NotClaimed if any was not
  /// claimed, else Passed if any passed, else NotRun (also when the check has no result).
  CheckStatus status_of(const std::string& check) const;
};

/// Knobs of the validation. The defaults are what `validate` and `bench` use; the report's
/// tolerance texts state the values applied.
struct ValidateOptions {
  /// event_vs_cupti passes when, per call, the median over steps of |event - CUPTI span| is at most
  /// max(event_abs_tol_ns, event_rel_tol * median event time): max(0.5 us, 1%), issue 4's target.
  std::int64_t event_abs_tol_ns = 500;
  double event_rel_tol = 0.01;
  /// Cold mode (one launch per sample): the cudaEvent interval also holds the GPU front end's
  /// launch and completion latency around the single kernel, which CUPTI's kernel span does not;
  /// measured 2.1 to 2.8 us per sample on the H200 at every size (results/h200/timing-2026-11-29).
  /// A cold-mode fixture's tolerance per call is the one above plus this allowance divided by the
  /// calls per step (cold samples hold one call of each instance, bench since 2026-12-01: 8 or
  /// more where memory allows, so 375 ns or less). Hot mode gets none.
  std::int64_t event_cold_allowance_ns = 3000;
  /// A call whose work crosses streams (events.json work.cross_stream_waits > 0: forked to a side
  /// stream and joined back): the event interval also holds the cross-stream waits at each
  /// sample's edges (the start event to the first side-stream activity, the last one to the end
  /// event), which the CUPTI span of the activities does not; per step, divided by its calls.
  /// Between calls of a batch both figures hold them. Measured on the H200 (fork to a side stream,
  /// kernel there, join back, against the same kernel on the handed stream, 4096^2 fp32, hot and
  /// cold): 2.6 to 2.7 us more per step (results/h200/user-patterns-2026-12-04).
  std::int64_t event_cross_stream_allowance_ns = 4000;
  /// table_totals: tolerance, in percentage points, of percentage sums and per-row percentages.
  double pct_tol = 0.01;
  /// At most this many Failed results per check; the rest are summarised in one more Failed
  /// result. 0 = no cap.
  std::size_t max_failures_per_check = 50;
  /// annotation_span: a trace's gpu_user_annotation event may differ from the first start / last
  /// end of its device work by this much at each end (PyTorch's exports differ by 1 ns).
  std::int64_t span_tol_ns = 1;
  /// model_vs_counters: a fixture is memory-bound by the model at intensity (model FLOPs / model
  /// bytes) <= this, FLOP/B (elementwise ops: add is 1/6), compute-bound at >= the next one
  /// (above the H100/H200 bf16 dense ridge, 989 TFLOP/s / 4.8 TB/s = 206 FLOP/B: GEMMs from
  /// n = 768 in bf16). Memory-bound fixtures whose model bytes exceed the L2 compare DRAM bytes
  /// read + written within counters_bytes_tol; compute-bound ones compare FLOPs within
  /// counters_flops_tol (issue 18's targets).
  double counters_memory_max_intensity = 1.0;
  double counters_compute_min_intensity = 256.0;
  double counters_bytes_tol = 0.05;
  double counters_flops_tol = 0.01;
};

/// Files to validate outside a run folder (`validate --trace FILE [--trace FILE] [--table FILE]
/// [--events FILE]`).
struct ValidateInputs {
  /// One or two Chrome traces of one session (plain or .json.gz). With two, the first is the
  /// primary one (the full export), unless only the other has flows; a crossbench
  /// trace_only.json is always the second.
  std::vector<std::filesystem::path> traces;
  std::filesystem::path table;   ///< table.json or key_averages().table() text; empty = none
  std::filesystem::path events;  ///< events.json or a reference summary.json; empty = none
};

/// Reads table.json, trace_only.json, full.json and events.json from `dir` and runs every check.
/// Throws InputError (common/errors.h) naming the file and what is wrong when a file is
/// missing, is not JSON, has the wrong "crossbench.format", or lacks a field the checks need.
ValidationReport validate_run_dir(const std::filesystem::path& dir, const ValidateOptions& opts = {});

/// Validates traces and optionally a table and event times (ValidateInputs). Checks that lack an
/// input report NotRun with the reason. Throws InputError naming the file and what is wrong when
/// a file is missing or unusable, std::invalid_argument when no trace (or more than two) is given.
ValidationReport validate_files(const ValidateInputs& inputs, const ValidateOptions& opts = {});

/// The validation.json document (docs/formats.md) of a report.
nlohmann::json report_json(const ValidationReport& report);

/// Writes report_json(report) to `out` (indented, trailing newline).
void write_report_json(const ValidationReport& report, std::ostream& out);

/// Writes validation.json atomically. `dir_or_file`: an existing folder (the file is written as
/// <folder>/validation.json) or a file path. Returns the path written. Throws
/// std::runtime_error when the file cannot be written.
std::filesystem::path write_report_json(const ValidationReport& report, const std::filesystem::path& dir_or_file);

/// Where write_report_json(report, `dir_or_file`) writes: <folder>/validation.json for an existing
/// folder, else `dir_or_file` itself.
std::filesystem::path report_json_path(const std::filesystem::path& dir_or_file);

/// The verdict, one line (docs/validator.md "What it prints"): PASSED, PYTORCH DEFECTS or FAILED
/// with its causes, the checks that agree and their results, the noisy fixtures and the results
/// not claimed, not judged and not run, then the inputs. `max_chars` 0: the whole text, as the
/// JSON report's "verdict" and Python's Verdict.verdict hold it. Otherwise it is made to fit that
/// width as the console prints it: the inputs dropped first, then the noisy count's explanation
/// (its own line below gives it), then causes from the end ("and 2 more causes (below)"); the
/// outcome and the counts are never cut.
std::string verdict_line(const ValidationReport& report, std::size_t max_chars = 0);

/// Short human summary (docs/validator.md "What it prints"): the verdict (verdict_line fitted to
/// 160 characters) first, the failures grouped by cause with counts and their first few examples
/// (long names in a subject shortened so that expected and found stay on the line), the results
/// not claimed, the noisy fixtures, the checks that passed, the not-run reasons per check, the
/// per-fixture event_vs_cupti medians, the launch latency, the checks and results counted. Numbers
/// rounded as the table prints them (at most 3 decimals, ns as integers), lines of at most 160
/// characters.
void print_summary(const ValidationReport& report, std::ostream& out);

/// A markdown section: the whole verdict line, then the verdict per check (passed / FAILED / not
/// run) with every failure's subject, expected and found, and the not-run reasons. `title` heads
/// the section.
void write_markdown(const ValidationReport& report, const std::string& title, std::ostream& out);

}  // namespace xb
