// The validator: reads a run folder's files back (table.json, trace_only.json, full.json,
// events.json; docs/formats.md) and proves they agree. Never looks at in-memory profiler objects,
// so it checks exactly what a user (or PyTorch tooling) would read.
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
/// Per device-activity (kind, name): count, total, median, min, max agree exactly between
/// table.json, trace_only.json and full.json.
inline constexpr const char* kKernelStats = "kernel_stats";
/// Per correlation id: the activity, its launch call and its external id (annotation/op) are the
/// same in trace_only.json and full.json; every external id names an existing host range.
inline constexpr const char* kAttribution = "attribution";
/// full.json: exactly one ac2g "s"/"f" pair per launched device activity, on the right lanes and
/// timestamps; no flow without an activity.
inline constexpr const char* kFlows = "flows";
/// crossbench.dropped_records is 0 in every file and the files agree.
inline constexpr const char* kNoDroppedRecords = "no_dropped_records";
/// No device activity with dur <= 0.
inline constexpr const char* kDurationsPositive = "durations_positive";
/// Device activities on one (device, stream) lane never overlap.
inline constexpr const char* kStreamOverlap = "stream_overlap";
/// No device activity starts before its launch call starts.
inline constexpr const char* kLaunchBeforeKernel = "launch_before_kernel";
/// table.json: Self CUDA totals and percentages add up; parents' CUDA total >= children's.
inline constexpr const char* kTableTotals = "table_totals";
/// Per fixture: median cudaEvent step time vs median CUPTI step span, within tolerance.
inline constexpr const char* kEventVsCupti = "event_vs_cupti";
/// Every fixture's result matched the host reference (events.json "verified").
inline constexpr const char* kVerified = "verified";
}  // namespace checks

/// Outcome of one check on one subject.
enum class CheckStatus {
  Passed,  ///< the check ran and the files agree
  Failed,  ///< the check ran and found a disagreement
  NotRun,  ///< the check could not run (no data for it); never counted as passed
};

/// "passed", "failed", "not_run" (the spelling used in validation.json).
const char* to_string(CheckStatus status);
/// Inverse of to_string(CheckStatus). Throws std::invalid_argument for an unknown name.
CheckStatus check_status_from_string(const std::string& name);

/// One outcome: which check, on what, what was expected and what was found.
struct CheckResult {
  std::string check;     ///< one of xb::checks, e.g. "kernel_stats"
  std::string subject;   ///< kernel/row/fixture/lane the result is about ("" = the whole check)
  std::string expected;  ///< expected value, as text ("" when not applicable)
  std::string found;     ///< value found, as text ("" when not applicable)
  std::string message;   ///< human explanation (for passes: what was verified)
  CheckStatus status = CheckStatus::NotRun;
};

/// Numbers of results by status.
struct CheckCounts {
  std::size_t passed = 0;
  std::size_t failed = 0;
  std::size_t not_run = 0;
};

/// Everything one validation produced. A check contributes one Passed result when it found
/// nothing wrong (event_vs_cupti and verified: one per fixture), one Failed result per
/// disagreement (capped, see ValidateOptions::max_failures_per_check), or NotRun results.
struct ValidationReport {
  std::string run_dir;                           ///< folder that was validated
  std::vector<CheckResult> checks;               ///< in check order
  std::map<std::string, std::string> tolerances; ///< check name -> tolerance it applied, as text
  nlohmann::json source_meta;  ///< "crossbench" block of the validated full.json (null if none)

  /// True when no result is Failed (NotRun results do not fail a run).
  bool passed() const;
  /// Results by status.
  CheckCounts counts() const;
  /// Results of one check, in report order.
  std::vector<const CheckResult*> results_of(const std::string& check) const;
  /// Worst status of one check: Failed if any result failed, else Passed if any passed, else
  /// NotRun (also when the check has no result).
  CheckStatus status_of(const std::string& check) const;
};

/// Knobs of the validation. The defaults are what `validate` and `bench` use; the report's
/// tolerance texts state the values applied.
struct ValidateOptions {
  /// event_vs_cupti passes when |event - cupti| <= max(event_abs_tol_ns, event_rel_tol * event).
  std::int64_t event_abs_tol_ns = 5000;
  double event_rel_tol = 0.05;
  /// table_totals: tolerance, in percentage points, of percentage sums and per-row percentages.
  double pct_tol = 0.01;
  /// At most this many Failed results per check; the rest are summarised in one more Failed
  /// result. 0 = no cap.
  std::size_t max_failures_per_check = 50;
};

/// Reads table.json, trace_only.json, full.json and events.json from `dir` and runs every check.
/// Throws InputError (profiler/session_io.h) naming the file and what is wrong when a file is
/// missing, is not JSON, has the wrong "crossbench.format", or lacks a field the checks need.
ValidationReport validate_run_dir(const std::filesystem::path& dir, const ValidateOptions& opts = {});

/// The validation.json document (docs/formats.md) of a report.
nlohmann::json report_json(const ValidationReport& report);

/// Writes report_json(report) to `out` (indented, trailing newline).
void write_report_json(const ValidationReport& report, std::ostream& out);

/// Writes validation.json atomically. `dir_or_file`: an existing folder (the file is written as
/// <folder>/validation.json) or a file path. Returns the path written. Throws
/// std::runtime_error when the file cannot be written.
std::filesystem::path write_report_json(const ValidationReport& report,
                                        const std::filesystem::path& dir_or_file);

/// Short human summary: the verdict, the checks that passed, one line per failed (and not-run)
/// result with check, subject, expected and found, the per-fixture event_vs_cupti numbers and
/// tolerance, then the counts.
void print_summary(const ValidationReport& report, std::ostream& out);

}  // namespace xb
