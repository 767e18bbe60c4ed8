// The validator's checks (internal to validate/, not installed): how a check reports
// (CheckLog), the helpers they share, and one function per check, grouped in files by family:
// checks_table.cpp (kernel_stats, table_rows, table_totals), checks_attribution.cpp
// (annotation_span, attribution, flows), checks_timeline.cpp (no_dropped_records,
// durations_positive, stream_overlap, launch_before_kernel, recording_window, lane_order) and
// checks_events.cpp (event_vs_cupti, verified). validate/check_list.cpp lists them (the one place
// a check is named), validate/validator.cpp runs that list.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/stats.h"
#include "common/units.h"
#include "validate/model.h"
#include "validate/validator.h"

namespace xb::vd {

using json = nlohmann::json;

/// A double as fmt's shortest text ("12.5").
std::string num(double d);
/// ns as microseconds with three decimals ("591.005 us"), fractional ns kept.
std::string us(double ns);

/// event_vs_cupti's verdict on one fixture, judged on its paired per-call differences alone
/// (d_i = event_i - CUPTI_i per step, in step order), whatever the spread of the samples themselves:
/// - Failed: the median of |d_i| is above `tolerance_ns`;
/// - NotClaimed: the median is within, but the pairs are unstable: the median's
///   distribution-free interval of the d_i at `confidence` (common/stats.h median_interval,
///   widened for drift; with too few pairs to bound it, the range of all d_i) reaches beyond
///   +-tolerance_ns;
/// - Passed (claimed): otherwise.
/// The one rule of "not claimed": the validator, summary.md and the console all report this.
struct PairedVerdict {
  CheckStatus status = CheckStatus::Passed;
  MedianInterval diff;    ///< interval of the median of d_i, ns
  double abs_median = 0;  ///< median |d_i|, ns
  std::string reason;     ///< why not claimed or failed, one phrase; "" when claimed
};
/// Throws std::invalid_argument for no differences or a non-finite one.
PairedVerdict judge_pairs(const std::vector<double>& diffs_ns, double tolerance_ns, double confidence = 0.95);

// ---------------------------------------------------------------------------------------------
// Collecting results

/// Collects one check's results; caps the number of Failed results.
class CheckLog {
 public:
  CheckLog(ValidationReport& report, const char* check, std::size_t cap) : report_(report), check_(check), cap_(cap) {}

  void fail(std::string subject, std::string expected, std::string found, std::string message, std::string cause = "") {
    ++failures_;
    if (cap_ != 0 && failures_ > cap_) return;
    add(CheckStatus::Failed, std::move(subject), std::move(expected), std::move(found), std::move(message));
    report_.checks.back().cause = std::move(cause);
  }
  void pass(std::string subject, std::string message) {
    ++passes_;
    add(CheckStatus::Passed, std::move(subject), "", "", std::move(message));
  }
  /// Something worth saying that is not a failure (a passed result, "note: ..."); does not count
  /// as a pass for pass_if_clean.
  void note(std::string subject, std::string message) {
    add(CheckStatus::Passed, std::move(subject), "", "", "note: " + std::move(message));
  }
  /// The check ran, but its evidence is unstable (the reason in `message`): reported, not claimed.
  void not_claimed(std::string subject, std::string message) {
    add(CheckStatus::NotClaimed, std::move(subject), "", "", std::move(message));
  }
  /// A construct the model does not cover: `what` names it ("not judged: " is prepended).
  void not_judged(std::string subject, std::string what) {
    add(CheckStatus::NotJudged, std::move(subject), "", "", "not judged: " + std::move(what));
  }
  void not_run(std::string subject, std::string message) {
    ++not_runs_;
    add(CheckStatus::NotRun, std::move(subject), "", "", std::move(message));
  }
  /// Adds a Passed result when nothing failed (and nothing passed explicitly).
  void pass_if_clean(std::string subject, std::string message) {
    if (failures_ == 0 && passes_ == 0) pass(std::move(subject), std::move(message));
  }
  std::size_t failures() const { return failures_; }
  void close() {
    if (cap_ != 0 && failures_ > cap_)
      add(CheckStatus::Failed, fmt::format("({} more)", failures_ - cap_), "", "",
          fmt::format("{} more failures of {} not listed ({} in all)", failures_ - cap_, check_, failures_));
  }

 private:
  void add(CheckStatus s, std::string subject, std::string expected, std::string found, std::string message) {
    CheckResult r;
    r.check = check_;
    r.subject = std::move(subject);
    r.expected = std::move(expected);
    r.found = std::move(found);
    r.message = std::move(message);
    r.status = s;
    report_.checks.push_back(std::move(r));
  }
  ValidationReport& report_;
  const char* check_;
  std::size_t cap_;
  std::size_t failures_ = 0, passes_ = 0, not_runs_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Helpers shared by the checks

inline std::string ts_text(const View& v, std::int64_t abs_ns) { return format_us(abs_ns - v.t->base_ns) + " us"; }

inline std::string act_subject(const Model& m, const TraceEvent& e) {
  return fmt::format("{} '{}' (correlation {})", to_string(e.cat), m.names.str(e.name), e.correlation);
}

inline std::string describe(const Model& m, const View& v, const TraceEvent& e) {
  const TraceLane& l = v.t->lanes[e.lane];
  return fmt::format("{} '{}' ts {} dur {} ns on {}", to_string(e.cat), m.names.str(e.name), ts_text(v, e.start_ns),
                     e.dur_ns, l.describe());
}

/// |a - b| within the print resolutions of two values (half of each).
inline bool within(double a, double res_a, double b, double res_b = 0) {
  return std::fabs(a - b) <= (res_a + res_b) / 2.0 + 1e-6;
}

/// The traces in the order the checks list them: trace_only before full when both are
/// crossbench's (the historical order), else as given.
std::vector<const View*> report_order(const Model& m);

/// For a check (or part of one) that needs device records: when no trace records device activity
/// though their API calls launch device work (no_device_reason: profiled without
/// ProfilerActivity.CUDA), logs one "not judged" result on `subject` saying so and returns true.
bool device_not_recorded(const Model& m, CheckLog& log, const std::string& subject = "");

// ---------------------------------------------------------------------------------------------
// The checks, one function each (docs/validator.md)

/// One check in the list of checks (check_list.cpp), the one place a check is named, given its
/// failure label (the verdict's words for its failures of no known cause), its tolerance as text
/// (validation.json "tolerances") and run. The list's order is the report's.
struct CheckDef {
  const char* name;           ///< checks::k* (validator.h)
  const char* failure_label;  ///< e.g. "table rows disagree with the trace"; null: the name says it
  /// The tolerance it applies under `opts`, as text; null: none stated.
  std::string (*tolerance)(const ValidateOptions& opts);
  void (*run)(const Model& m, const ValidateOptions& opts, CheckLog& log, ValidationReport& report);
};
/// Every check, in report order.
const std::vector<CheckDef>& check_list();

void check_kernel_stats(const Model& m, CheckLog& log);
void check_table_rows(const Model& m, CheckLog& log);
void check_table_totals(const Model& m, const ValidateOptions& opts, CheckLog& log);
void check_annotation_span(const Model& m, const ValidateOptions& opts, CheckLog& log);
void check_attribution(const Model& m, CheckLog& log);
void check_flows(const Model& m, CheckLog& log);
void check_dropped(const Model& m, CheckLog& log);
void check_durations(const Model& m, CheckLog& log);
void check_overlap(const Model& m, CheckLog& log);

/// True when correlation id `c` of view `v` belongs to a CUDA graph launch (cudaGraphLaunch,
/// cuGraphLaunch): one correlation id then owns every kernel of the graph, and Kineto writes one
/// flow end per kernel.
bool graph_launch(const Model& m, const View& v, std::uint64_t c);

/// Largest overlap, ns, allowed between consecutive activities of ONE graph launch on one stream.
/// On the H200 (results/h200/graph-2026-12-01), consecutive kernel nodes of a replayed graph
/// overlap in CUPTI's timestamps: mostly by 32 to 96 ns, in 3 of 7,160 kernels by 0.7 to 1.6 us
/// (25 and 61 us kernels). The graph's edges order those kernels, so this is where CUPTI puts the
/// end of one node against the start of the next, not two kernels running together. Eager
/// launches never overlap, and neither do two launches: both still fail at any overlap.
inline constexpr std::int64_t kGraphNodeOverlapNs = 2000;
/// Also records the launch latency distribution in report.figures.
void check_launch_before(const Model& m, CheckLog& log, ValidationReport& report);
void check_window(const Model& m, CheckLog& log);
void check_lane_order(const Model& m, CheckLog& log);
/// Also records the per-fixture figures in report.figures.
void check_event_vs_cupti(const Model& m, const ValidateOptions& opts, CheckLog& log, ValidationReport& report);
void check_verified(const Model& m, CheckLog& log);
/// work_signature: per fixture of events.json, its probed work signature (validator.h kWorkSignature).
void check_work_signature(const Model& m, CheckLog& log);
/// Fixture name -> the distinct names of the kernels its recorded steps ran in the timing pass
/// (events.json's step ranges in the primary trace, kernels attributed to them or to ranges
/// nested in them), in launch order.
using FixtureKernelNames = std::map<std::string, std::vector<std::string>>;
FixtureKernelNames fixture_kernel_names(const Model& m);
/// model_vs_counters on a counter pass, with each fixture's kernel names for the GEMMs' CTA tile
/// (tile quantization: validate/gemm_tile.h). With `figures`, the tile figures of every
/// compute-bound GEMM whose tile was read (useful and executed FLOPs, waste %, tile, kernel) go
/// there as an array (left untouched when there are none).
void check_model_vs_counters(const CountersFile& s, const FixtureKernelNames& kernels, const ValidateOptions& opts,
                             CheckLog& log, json* figures = nullptr);
/// model_vs_counters on the run's counter pass (Model::counters; checks_counters.cpp), the kernel
/// names from the timing pass (fixture_kernel_names); its tile figures go to report.figures.
void check_model_vs_counters(const Model& m, const ValidateOptions& opts, CheckLog& log, ValidationReport& report);

}  // namespace xb::vd
