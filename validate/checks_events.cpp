// event_vs_cupti, verified: the cudaEvent times of events.json against the CUPTI spans of the same
// steps, and the fixtures' verification results (validate/checks.h).
#include "validate/checks.h"

#include <algorithm>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "common/stats.h"

namespace xb::vd {

// ---------------------------------------------------------------------------------------------
// event_vs_cupti, verified

namespace {

/// The device activities of one step: first start, last end, and which activities they are
/// (event indices in the view).
struct StepSpan {
  std::int64_t first = 0, second = 0;  ///< first start, last end, ns
  std::uint32_t first_event = kNone, last_event = kNone;
  std::vector<std::int64_t> streams;  ///< the lanes' tids (device lanes: the stream) of its activities
};

/// Per step range (event index in A): first start and last end of the device activities under
/// it. `is_step(range)` names the step ranges. `by_launch_time`: an activity tied to no range
/// (launched from another host thread, which no range of the profiler's covers) counts in the step
/// whose range holds its launch call's start: a launch's work made on a thread of its own (and
/// joined before it returns) is inside the step's events, so it belongs in the step's span too.
template <class IsStep>
std::unordered_map<std::uint32_t, StepSpan> step_spans(const View& v, IsStep&& is_step, bool by_launch_time = false) {
  std::vector<std::uint32_t> by_start;  // the step ranges, by start (by_launch_time)
  if (by_launch_time) {
    for (std::uint32_t r : v.rng)
      if (is_step(r)) by_start.push_back(r);
    std::sort(by_start.begin(), by_start.end(),
              [&](std::uint32_t a, std::uint32_t b) { return v.ev(a).start_ns < v.ev(b).start_ns; });
  }
  const auto step_at = [&](std::int64_t t) -> std::uint32_t {
    auto it = std::upper_bound(by_start.begin(), by_start.end(), t,
                               [&](std::int64_t x, std::uint32_t r) { return x < v.ev(r).start_ns; });
    if (it == by_start.begin()) return kNone;
    const std::uint32_t r = *std::prev(it);
    return t < v.ev(r).end_ns() ? r : kNone;
  };
  std::vector<std::uint32_t> step_of(v.t->events.size(), kNone - 1);  // kNone - 1 = not yet known
  auto find = [&](std::uint32_t r) {
    std::vector<std::uint32_t> chain;
    std::uint32_t result = kNone;
    for (int guard = 0; r != kNone && guard < 512; ++guard) {
      if (step_of[r] != kNone - 1) {
        result = step_of[r];
        break;
      }
      chain.push_back(r);
      if (is_step(r)) {
        result = r;
        break;
      }
      r = v.parent[r];
    }
    for (auto c : chain) step_of[c] = result;
    return result;
  };
  std::unordered_map<std::uint32_t, StepSpan> spans;
  std::uint32_t last_r = kNone;
  StepSpan* span = nullptr;
  for (std::uint32_t i : v.dev) {
    const TraceEvent& a = v.ev(i);
    std::uint32_t r = attributed_range(v, a);
    if (r == kNone && by_launch_time) {
      const std::uint32_t api = v.api_corr.first(a.correlation);
      if (api != kNone) r = step_at(v.ev(api).start_ns);
    }
    if (r == kNone) continue;
    if (r != last_r) {
      last_r = r;
      const std::uint32_t s = find(r);
      span = s == kNone ? nullptr : &spans.emplace(s, StepSpan{a.start_ns, a.end_ns(), i, i, {}}).first->second;
    }
    if (!span) continue;
    const std::int64_t stream = v.t->lanes[a.lane].tid;
    if (std::find(span->streams.begin(), span->streams.end(), stream) == span->streams.end())
      span->streams.push_back(stream);
    if (a.start_ns < span->first) {
      span->first = a.start_ns;
      span->first_event = i;
    }
    if (a.end_ns() > span->second) {
      span->second = a.end_ns();
      span->last_event = i;
    }
  }
  return spans;
}

/// The spans of events.json's recorded steps in trace A (step_spans by launch time), keyed by the
/// step range's event index.
std::unordered_map<std::uint32_t, StepSpan> recorded_step_spans(const View& A, const EventsData& ev) {
  std::unordered_set<std::uint32_t> step_ranges;
  for (const auto& f : ev.fixtures)
    for (const auto& s : f.steps)
      if (std::uint32_t r = A.rng_ext.first(s.range_id); r != kNone) step_ranges.insert(r);
  return step_spans(
      A, [&](std::uint32_t r) { return step_ranges.count(r) != 0; }, true);
}

/// A synchronizing launch's step (no blocking kernel): the time the GPU idles inside the event
/// interval while the host works, from the trace's own host and device timestamps (one clock):
/// before the first device activity, from the step range's start (just before the start event
/// is recorded) to the end of the API call that launched that activity; after the last one, from
/// its end to the end of the host range it was launched in (the call returns, then the stop
/// event is recorded). Either part is 0 when the trace lacks the call or the range.
double sync_host_gap_ns(const View& v, std::uint32_t step_range, const StepSpan& span) {
  double gap = 0;
  if (span.first_event != kNone) {
    const std::uint32_t api = v.api_corr.first(v.ev(span.first_event).correlation);
    if (api != kNone)
      gap += static_cast<double>(std::max<std::int64_t>(0, v.ev(api).end_ns() - v.ev(step_range).start_ns));
  }
  if (span.last_event != kNone) {
    const std::uint32_t range = attributed_range(v, v.ev(span.last_event));
    if (range != kNone) gap += static_cast<double>(std::max<std::int64_t>(0, v.ev(range).end_ns() - span.second));
  }
  return gap;
}

}  // namespace

PairedVerdict judge_pairs(const std::vector<double>& diffs_ns, double tolerance_ns, double confidence) {
  PairedVerdict v;
  v.diff = median_interval(diffs_ns, confidence);
  std::vector<double> abs_diff;
  abs_diff.reserve(diffs_ns.size());
  for (double d : diffs_ns) abs_diff.push_back(std::fabs(d));
  v.abs_median = compute_stats(abs_diff).median;
  const std::string interval =
      v.diff.bounded ? fmt::format("the {:.0f}% interval of the median event - CUPTI difference, {} .. {} ns,",
                                   confidence * 100, num(v.diff.low), num(v.diff.high))
                     : fmt::format("with {} pairs too few to bound the median at {:.0f}%, their range {} .. {} ns",
                                   diffs_ns.size(), confidence * 100, num(v.diff.low), num(v.diff.high));
  if (v.abs_median > tolerance_ns) {
    v.status = CheckStatus::Failed;
    v.reason =
        fmt::format("median |event - CUPTI| {} ns above the tolerance {} ns", num(v.abs_median), num(tolerance_ns));
  } else if (std::max(std::fabs(v.diff.low), std::fabs(v.diff.high)) > tolerance_ns) {
    v.status = CheckStatus::NotClaimed;
    v.reason = fmt::format("the pairs are unstable: {} reaches beyond +-{} ns", interval, num(tolerance_ns));
  }
  return v;
}

namespace {

/// Reference medians of calls outside the profiler (EventsData::Kind::OtherCalls): find this
/// trace's workload, report both.
void report_other_calls(const Model& m, CheckLog& log, ValidationReport& report) {
  const View& A = m.A();
  const EventsData& ev = *m.events;
  std::set<std::string> annots;
  for (std::uint32_t i : A.rng)
    if (A.ev(i).cat == TraceCat::UserAnnotation && !is_profiler_step(m.names.str(A.ev(i).name)))
      annots.insert(m.names.str(A.ev(i).name));
  std::vector<const EventRun*> cand;
  for (const EventRun& r : ev.runs)
    if (annots.count(r.op)) cand.push_back(&r);
  if (cand.size() > 1) {
    // Tell sizes apart by the trace's file name ("<n>_<dtype>_<op>.json", as the reference names them).
    const std::string& f = A.file();
    std::vector<const EventRun*> by_name;
    for (const EventRun* r : cand)
      if (f.rfind(std::to_string(r->n) + "_", 0) == 0) by_name.push_back(r);
    cand = by_name;
  }
  if (cand.size() != 1)
    return log.not_run(
        "", fmt::format("cannot tell which run of {} the trace {} is ({} candidates)", ev.file, A.file(), cand.size()));
  const EventRun& run = *cand[0];
  const auto spans = step_spans(A, [&](std::uint32_t r) { return is_profiler_step(m.names.str(A.ev(r).name)); });
  std::vector<std::int64_t> cupti;
  for (const auto& [s, sp] : spans) cupti.push_back(sp.second - sp.first);  // StepSpan: last end - first start
  const double cu = median_of(cupti);
  const std::string subject = fmt::format("{} n={}", run.op, run.n);
  report.figures[checks::kEventVsCupti] = {{"workload", subject},
                                           {"event_median_ns_other_calls", run.median_ns},
                                           {"cupti_step_span_median_ns", cu},
                                           {"steps", cupti.size()}};
  return log.not_run(subject,
                     fmt::format("{} holds cudaEvent times of other calls (median {} over calls outside the profiler), "
                                 "not of the {} profiled steps, so the same iterations cannot be compared; for "
                                 "reference: median CUPTI step span {} (first device start to last device end "
                                 "per ProfilerStep), difference {}",
                                 ev.file, us(run.median_ns), cupti.size(), us(cu), us(run.median_ns - cu)));
}

/// One fixture's steps paired with their CUPTI spans, per call.
struct FixturePairs {
  std::vector<std::int64_t> event_ns;
  std::vector<double> event_call, cupti_call, diff_call, sync_gap_call;
  bool usable = true;
};

// Per-iteration pairing: each step's cudaEvent interval against the CUPTI span (first device
// start to last device end) of the activities launched inside that same step, both divided by
// the step's launches (per call).
FixturePairs pair_steps(const Model& m, const std::unordered_map<std::uint32_t, StepSpan>& spans, const EventFixture& f,
                        CheckLog& log) {
  const View& A = m.A();
  const EventsData& ev = *m.events;
  FixturePairs p;
  for (const auto& s : f.steps) {
    const std::string subject = fmt::format("{} step {}", f.name, s.step);
    p.event_ns.push_back(s.event_ns);
    const std::uint32_t r = A.rng_ext.first(s.range_id);
    if (r == kNone) {
      log.fail(subject, fmt::format("a ProfilerStep range with External id {} in {}", s.range_id, A.file()), "none",
               ev.file + " names a step range that the trace does not have");
      p.usable = false;
      continue;
    }
    if (A.ev(r).cat != TraceCat::UserAnnotation || !is_profiler_step(m.names.str(A.ev(r).name)))
      log.fail(subject, fmt::format("range {} is a user_annotation 'ProfilerStep#N'", s.range_id),
               fmt::format("{} '{}'", to_string(A.ev(r).cat), m.names.str(A.ev(r).name)),
               ev.file + " range_id is not a ProfilerStep range");
    auto sp = spans.find(r);
    if (sp == spans.end()) {
      log.fail(subject, fmt::format("device activity under range {}", s.range_id), "none",
               "no device activity in the trace is attributed to this step");
      p.usable = false;
      continue;
    }
    const double n = s.launches;
    const double e = static_cast<double>(s.event_ns) / n;
    const double c = static_cast<double>(sp->second.second - sp->second.first) / n;
    p.event_call.push_back(e);
    p.cupti_call.push_back(c);
    p.diff_call.push_back(e - c);
    if (!f.sync.empty()) p.sync_gap_call.push_back(sync_host_gap_ns(A, r, sp->second) / n);
  }
  return p;
}

/// A fixture's tolerance of event - CUPTI per call, and the allowances it holds.
struct FixtureTolerance {
  bool cold = false, sync = false, cross = false;
  double sync_gap = 0, latency_allowance = 0, cross_allowance = 0, tol = 0;
};

FixtureTolerance fixture_tolerance(const EventFixture& f, const FixturePairs& p, const ValidateOptions& opts,
                                   double event_median) {
  FixtureTolerance t;
  // A cold step keeps the event pair's fixed cost whole, spread over its calls (one call: files
  // before the batched cold samples of 2026-12-01, or a benchmark with one instance).
  t.cold = f.mode == "cold";
  // A synchronizing launch's step (no blocking kernel): the GPU idles while the host launches,
  // so the event interval also holds the host's time before the first and after the last device
  // activity (sync_host_gap_ns, median per call) and the idle GPU's front-end latency
  // (event_cold_allowance_ns per step, as a cold step).
  t.sync = !f.sync.empty();
  t.sync_gap = t.sync ? compute_stats(p.sync_gap_call).median : 0.0;
  t.latency_allowance = (t.cold || t.sync)
                            ? static_cast<double>(opts.event_cold_allowance_ns) / std::max(1, f.steps.front().launches)
                            : 0.0;
  // A call that crosses streams (forked to a side stream and joined back): the events also hold
  // the cross-stream waits at the step's edges, the activities' span does not.
  t.cross = f.work_recorded && f.work_cross_stream_waits > 0;
  t.cross_allowance =
      t.cross ? static_cast<double>(opts.event_cross_stream_allowance_ns) / std::max(1, f.steps.front().launches) : 0.0;
  t.tol = std::max(static_cast<double>(opts.event_abs_tol_ns), opts.event_rel_tol * event_median) +
          t.latency_allowance + t.sync_gap + t.cross_allowance;
  return t;
}

/// The pairs' figures and verdict of one fixture: logged, and added to `fig`.
void judge_fixture(const EventFixture& f, const FixturePairs& p, const ValidateOptions& opts, CheckLog& log,
                   json& fig) {
  const SampleStats es = compute_stats(p.event_call), cs = compute_stats(p.cupti_call), ds = compute_stats(p.diff_call);
  const FixtureTolerance t = fixture_tolerance(f, p, opts, es.median);
  const PairedVerdict verdict = judge_pairs(p.diff_call, t.tol);
  const double abs_med = verdict.abs_median;
  const MedianInterval& di = verdict.diff;
  const std::string numbers = fmt::format(
      "{} steps{}: per call, median cudaEvent {} ns, median CUPTI span {} ns; event - CUPTI per step: median {} ns "
      "({:.0f}% interval {} .. {}{}; quartiles {} .. {}, min {}, max {}), median |event - CUPTI| {} ns ({:.2f}%), "
      "tolerance {} ns{}{}{}",
      f.steps.size(),
      f.mode.empty() ? "" : fmt::format(" ({} mode, {} launches per step)", f.mode, f.steps.front().launches),
      num(es.median), num(cs.median), num(ds.median), di.confidence * 100, num(di.low), num(di.high),
      di.bounded ? "" : ", too few pairs to bound it: their range", num(ds.q1), num(ds.q3), num(ds.min), num(ds.max),
      num(abs_med), es.median > 0 ? 100.0 * abs_med / es.median : 0.0, num(t.tol),
      t.sync ? fmt::format(" (the launch synchronizes, {}: no blocking kernel; includes the {} ns per-sample front-end "
                           "allowance over {} calls, {} ns, and the host's launch time outside the device activities, "
                           "median {} ns per call)",
                           f.sync, opts.event_cold_allowance_ns, f.steps.front().launches, num(t.latency_allowance),
                           num(t.sync_gap))
      : t.cold ? fmt::format(" (cold mode: includes the {} ns per-sample allowance over {} calls, {} ns)",
                             opts.event_cold_allowance_ns, f.steps.front().launches, num(t.latency_allowance))
               : "",
      t.cross ? fmt::format(" (the call crosses streams, {} waits: includes the {} ns per-step cross-stream allowance "
                            "over {} calls, {} ns)",
                            f.work_cross_stream_waits, opts.event_cross_stream_allowance_ns, f.steps.front().launches,
                            num(t.cross_allowance))
              : "",
      f.stop == "timed out" ? "; the fixture's median missed its precision target (stopping rule timed out), which "
                              "does not bear on this paired check"
                            : "");
  fig.push_back(
      {{"fixture", f.name},
       {"mode", f.mode},
       {"steps", f.steps.size()},
       {"launches_per_step", f.steps.front().launches},
       {"event_median_ns", es.median},
       {"cupti_median_ns", cs.median},
       {"diff_ns",
        {{"median", ds.median}, {"q1", ds.q1}, {"q3", ds.q3}, {"min", ds.min}, {"max", ds.max}, {"mad", ds.mad}}},
       {"diff_median_ci_ns",
        {{"confidence", di.confidence},
         {"low", di.low},
         {"high", di.high},
         {"bounded", di.bounded},
         {"batches", di.batches}}},
       {"abs_diff_median_ns", abs_med},
       {"tolerance_ns", t.tol},
       {"claimed", verdict.status == CheckStatus::Passed},
       {"not_claimed", verdict.status == CheckStatus::NotClaimed},
       {"reason", verdict.reason},
       {"fixture_timed_out", f.stop == "timed out"},
       {"sync", f.sync.empty() ? json(nullptr) : json(f.sync)},
       {"sync_host_gap_ns", t.sync_gap},
       {"throttled", f.throttled}});
  if (verdict.status == CheckStatus::Failed)
    log.fail(f.name, fmt::format("median |event - CUPTI| per call within {} ns", num(t.tol)),
             fmt::format("{} ns", num(abs_med)), numbers);
  else if (verdict.status == CheckStatus::NotClaimed)
    log.not_claimed(f.name, "median within tolerance, not claimed: " + verdict.reason + ": " + numbers);
  else
    log.pass(f.name, numbers);
}

}  // namespace

void check_event_vs_cupti(const Model& m, const ValidateOptions& opts, CheckLog& log, ValidationReport& report) {
  if (!m.events) return log.not_run("", "no event times given (events.json)");
  const View& A = m.A();
  const EventsData& ev = *m.events;
  if (ev.kind == EventsData::Kind::OtherCalls) return report_other_calls(m, log, report);
  const auto& fixtures = ev.fixtures;
  if (fixtures.empty()) return log.not_run("", ev.file + " has no fixtures");
  const auto spans = recorded_step_spans(A, ev);
  json fig = json::array();
  for (const auto& f : fixtures) {
    if (!f.error.empty()) {
      log.not_run(f.name, "the fixture failed in the bench: " + f.error);
      continue;
    }
    if (f.steps.empty()) {
      log.not_run(f.name, ev.file + " has no steps for this fixture");
      continue;
    }
    if (f.graph && f.work_allocations > 0) {
      log.not_judged(f.name, fmt::format("graph mode with {} stream-ordered allocations per call (cudaMallocAsync/"
                                         "cudaFreeAsync): the graph's memory nodes take device time that no activity "
                                         "record shows, so the CUPTI span cannot account for the event interval",
                                         f.work_allocations));
      continue;
    }
    const FixturePairs p = pair_steps(m, spans, f, log);
    const double ev_med = median_of(p.event_ns);
    if (f.has_median && f.median_ns != ev_med)
      log.fail(f.name + " median_ns", fmt::format("{} (median of steps[].event_ns)", num(ev_med)), num(f.median_ns),
               ev.file + " median_ns is not the median of its steps");
    if (!p.usable) continue;
    judge_fixture(f, p, opts, log, fig);
  }
  report.figures[checks::kEventVsCupti] = std::move(fig);
}

void check_work_signature(const Model& m, CheckLog& log) {
  if (!m.events) return log.not_run("", "no event times given (events.json carries the work signatures)");
  if (m.events->kind != EventsData::Kind::PerStep)
    return log.not_run("", m.events->file + " carries no work signatures");
  if (m.events->fixtures.empty()) return log.not_run("", m.events->file + " has no fixtures");
  const auto refused_fixture = [](const EventFixture& f) { return f.error.rfind("refused", 0) == 0; };
  if (std::none_of(m.events->fixtures.begin(), m.events->fixtures.end(),
                   [&](const EventFixture& f) { return f.has_work || refused_fixture(f); }))
    return log.not_run("", m.events->file +
                               " records no work signatures (written before the work-signature probe, "
                               "2026-12-04, or by another recorder)");
  // The recorded steps' spans (with their streams), from the first trace, when there is one.
  std::optional<std::unordered_map<std::uint32_t, StepSpan>> spans;
  if (!m.traces.empty()) spans = recorded_step_spans(m.A(), *m.events);
  for (const auto& f : m.events->fixtures) {
    const bool refused = refused_fixture(f);
    if (!f.has_work) {
      if (refused) {  // refused without its signature: still the cause of the fixture's failure
        log.fail(f.name, "one call's work ordered between the events on the handed stream", "refused", f.error);
      } else {
        log.not_run(f.name, m.events->file +
                                " records no work signature for it (written before the probe, or the "
                                "fixture failed before it)");
      }
      continue;
    }
    if (!f.work_recorded) {
      log.not_run(f.name, "its work signature was not recorded: " + f.work_why);
      continue;
    }
    if (!f.work_covered || refused) {
      log.fail(f.name, "every device activity of one call ordered between the events on the handed stream",
               f.work_summary, refused ? f.error : "the fixture was timed although its work is not between the events");
      continue;
    }
    // Every recorded eager step: no device work on the legacy or per-thread default stream unless
    // the probed call put work there too (the probe sees one call: a call that reaches for a
    // default stream now and then is caught here). Other streams are not compared: a call may use
    // a fresh side stream each time (a stream pool), and cold mode's instances streams of their
    // own. Graph replays are left out: the driver places their nodes.
    if (!f.graph && spans) {
      bool moved = false;
      for (const auto& st : f.steps) {
        const std::uint32_t r = m.A().rng_ext.first(st.range_id);
        const auto sp = r == kNone ? spans->end() : spans->find(r);
        if (sp == spans->end()) continue;  // event_vs_cupti reports a step without device work
        for (std::int64_t stream : sp->second.streams) {
          const auto is = [stream](const std::vector<std::uint32_t>& ids) {
            return std::find(ids.begin(), ids.end(), stream) != ids.end();
          };
          if (!is(f.work_default_stream_ids) || is(f.work_stream_ids)) continue;
          log.fail(fmt::format("{} step {}", f.name, st.step),
                   fmt::format("no device work on a default stream the probed call did not use ({})",
                               fmt::join(f.work_default_stream_ids, ", ")),
                   fmt::format("work on stream {}", stream),
                   "a recorded call ran work on a default stream, which the probed call did not: its work varies "
                   "from call to call, and the events on the handed stream do not see that work");
          moved = true;
          break;
        }
      }
      if (moved) continue;
    }
    log.pass(f.name, "one call enqueues " + f.work_summary +
                         (f.graph_replay_items >= 0
                              ? fmt::format("; one graph replay enqueued the same work ({} device activities)",
                                            f.graph_replay_items)
                              : ""));
  }
}

void check_verified(const Model& m, CheckLog& log) {
  if (!m.events) return log.not_run("", "no event times given (events.json carries the verification results)");
  if (m.events->kind != EventsData::Kind::PerStep)
    return log.not_run("", m.events->file + " carries no verification results");
  if (m.events->fixtures.empty()) return log.not_run("", m.events->file + " has no fixtures");
  for (const auto& f : m.events->fixtures) {
    if (f.error.rfind("not run: ", 0) == 0) {  // after a device fault or hang (bench/core/device_failure.h)
      log.not_run(f.name, "the fixture did not run: " + f.error.substr(9));
      continue;
    }
    if (!f.has_reference) {
      log.not_run(f.name, "the benchmark gives no reference check (Instance::verify): its result is not verified");
      continue;
    }
    if (f.verified)
      log.pass(f.name, fmt::format("result matched the host reference (max_rel_error {})", num(f.max_rel_error)));
    else
      log.fail(f.name, "verified: true", fmt::format("verified: false (max_rel_error {})", num(f.max_rel_error)),
               "the kernel's result did not match the host reference");
  }
}

}  // namespace xb::vd
