// The list of checks (validate/checks.h CheckDef): for each, its name, the verdict's words for
// its failures of no known cause, its tolerance as validation.json states it, and what runs it.
// The validator runs them in this order, all_checks() and the report's labels read it: a check
// is added here and nowhere else.
#include <fmt/format.h>

#include "validate/checks.h"

namespace xb::vd {
namespace {

/// Text tables' and JSON files' resolution, the tolerance of several checks.
std::string resolution(const ValidateOptions&) {
  return "text tables: within half the printed resolution (0.5 ns for \"us\" with three decimals, "
         "500 ns for \"ms\", 0.5 ms for \"s\"); JSON files and traces: exact integer ns";
}

std::string exact_ns(const ValidateOptions&) { return "exact (integer ns)"; }

std::string event_vs_cupti_tolerance(const ValidateOptions& opts) {
  return fmt::format(
      "per fixture, pairing each step's cudaEvent interval with the CUPTI span of the same step, both per call "
      "(divided by the step's launches): median over steps of |event - CUPTI| <= max({} ns, {} x median cudaEvent "
      "per call); CUPTI span of a step = first device activity start to last device activity end among activities "
      "whose External id is the step's ProfilerStep range or a range nested in it; judged on these paired differences "
      "alone, whatever the spread of the samples: claimed when the 95% distribution-free interval of the median "
      "event - CUPTI difference (widened for drift; with too few pairs, their range) lies within the tolerance, "
      "else reported not claimed (with the interval); cold-mode fixtures (one launch per sample) get {} ns more "
      "for the GPU "
      "front end's launch and completion latency, which the event interval holds and the kernel span does not; "
      "fixtures whose launch synchronizes with the device (timing.sync, sampled without the blocking kernel) get "
      "the same {} ns per step and the host's launch time outside the step's device activities (from the step's "
      "start to the end of the first activity's launch call, and from the last activity's end to the end of its "
      "host range; median over steps, per call); fixtures whose call crosses streams (work.cross_stream_waits > 0) "
      "get {} ns per step for the cross-stream waits at the step's edges, divided by its calls",
      opts.event_abs_tol_ns, num(opts.event_rel_tol), opts.event_cold_allowance_ns, opts.event_cold_allowance_ns,
      opts.event_cross_stream_allowance_ns);
}

std::string model_vs_counters_tolerance(const ValidateOptions& opts) {
  return fmt::format(
      "memory-bound fixtures (model intensity <= {} FLOP/B) whose model bytes exceed the L2: DRAM bytes read + "
      "written within {}% of the model; compute-bound fixtures (model intensity >= {} FLOP/B): FLOPs (SASS "
      "instructions x their weights + tensor-pipe operations) within {}% of the model, or, for bench's n x n x n GEMMs "
      "whose kernel name gives a CTA tile (tm x tn x tk), within {}% of the tile-padded model 2 pad(n, tm) pad(n, tn) "
      "pad(n, tk) (tile quantization: the FLOPs the kernel executes; passes so are marked)",
      num(opts.counters_memory_max_intensity), num(100 * opts.counters_bytes_tol),
      num(opts.counters_compute_min_intensity), num(100 * opts.counters_flops_tol), num(100 * opts.counters_flops_tol));
}

}  // namespace

const std::vector<CheckDef>& check_list() {
  using O = const ValidateOptions&;
  using R = ValidationReport&;
  static const std::vector<CheckDef> list = {
      {checks::kKernelStats, "kernel statistics differ between the files",
       [](O o) { return "exact: integer ns, median as a double (mean of the two middle values); " + resolution(o); },
       [](const Model& m, O, CheckLog& l, R) { check_kernel_stats(m, l); }},
      {checks::kTableRows, "table rows disagree with the trace", resolution,
       [](const Model& m, O, CheckLog& l, R) { check_table_rows(m, l); }},
      {checks::kTableTotals, "the table's sums, percentages or averages do not add up",
       [](O o) {
         return fmt::format(
             "table.json: percentages within +-{} percentage points, ns totals exact; text: each value within half "
             "its printed resolution, sums within the sum of their terms' half resolutions, percentages within "
             "half a printed digit plus the rounding of the values they are taken of",
             num(o.pct_tol));
       },
       [](const Model& m, O o, CheckLog& l, R) { check_table_totals(m, o, l); }},
      {checks::kAnnotationSpan, "annotation GPU spans disagree with their device time",
       [](O o) {
         return fmt::format(
             "table rows within half their printed resolution; trace gpu_user_annotation spans within {} ns of "
             "their device work's first start and last end",
             o.span_tol_ns);
       },
       [](const Model& m, O o, CheckLog& l, R) { check_annotation_span(m, o, l); }},
      {checks::kAttribution, "device work attributed to different launches or ranges", nullptr,
       [](const Model& m, O, CheckLog& l, R) { check_attribution(m, l); }},
      {checks::kFlows, "launch-to-kernel flow arrows missing or wrong", nullptr,
       [](const Model& m, O, CheckLog& l, R) { check_flows(m, l); }},
      {checks::kNoDroppedRecords, "the profiler dropped records", nullptr,
       [](const Model& m, O, CheckLog& l, R) { check_dropped(m, l); }},
      {checks::kDurationsPositive, "device activities of zero or negative duration", nullptr,
       [](const Model& m, O, CheckLog& l, R) { check_durations(m, l); }},
      {checks::kStreamOverlap, "device activities overlap on one stream", nullptr,
       [](const Model& m, O, CheckLog& l, R) { check_overlap(m, l); }},
      {checks::kLaunchBeforeKernel, "device activities start before their launch call", nullptr,
       [](const Model& m, O, CheckLog& l, R r) { check_launch_before(m, l, r); }},
      {checks::kRecordingWindow, "events outside the recording window", exact_ns,
       [](const Model& m, O, CheckLog& l, R) { check_window(m, l); }},
      {checks::kLaneOrder, "timestamps out of launch order on a lane", exact_ns,
       [](const Model& m, O, CheckLog& l, R) { check_lane_order(m, l); }},
      {checks::kEventVsCupti, "cudaEvent and CUPTI times disagree beyond tolerance", event_vs_cupti_tolerance,
       [](const Model& m, O o, CheckLog& l, R r) { check_event_vs_cupti(m, o, l, r); }},
      {checks::kVerified, "results did not match the host reference", nullptr,
       [](const Model& m, O, CheckLog& l, R) { check_verified(m, l); }},
      {checks::kWorkSignature, "a call enqueues work the handed stream's cudaEvents cannot see",
       [](O) -> std::string {
         return "exact: every device activity of the probed call ordered after the start and before the end event "
                "on the handed stream (events.json work.items[].after_start and before_end)";
       },
       [](const Model& m, O, CheckLog& l, R) { check_work_signature(m, l); }},
      {checks::kModelVsCounters, nullptr, model_vs_counters_tolerance,
       [](const Model& m, O o, CheckLog& l, R r) { check_model_vs_counters(m, o, l, r); }},
  };
  return list;
}

}  // namespace xb::vd
