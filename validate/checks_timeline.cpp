// no_dropped_records and the timeline checks: durations_positive, stream_overlap,
// launch_before_kernel, recording_window, lane_order (validate/checks.h).
#include "validate/checks.h"

#include <algorithm>
#include <optional>

namespace xb::vd {

std::vector<const View*> report_order(const Model& m) {
  std::vector<const View*> views;
  for (const View& v : m.views) views.push_back(&v);
  if (views.size() == 2 && views[1]->t->format == "trace_only") std::swap(views[0], views[1]);
  return views;
}

// ---------------------------------------------------------------------------------------------
// no_dropped_records

void check_dropped(const Model& m, CheckLog& log) {
  struct FileCounts {
    std::string file;
    std::optional<std::uint64_t> dropped, oor;
  };
  std::vector<FileCounts> files;
  auto from_meta = [](const std::string& file, const json& meta) {
    FileCounts f{file, std::nullopt, std::nullopt};
    if (!meta.is_object()) return f;
    auto get = [&](const char* key) -> std::optional<std::uint64_t> {
      auto it = meta.find(key);
      if (it == meta.end() || !it->is_number_integer()) return std::nullopt;
      if (it->is_number_unsigned()) return it->get<std::uint64_t>();
      return it->get<std::int64_t>() < 0
                 ? std::nullopt
                 : std::optional<std::uint64_t>(static_cast<std::uint64_t>(it->get<std::int64_t>()));
    };
    f.dropped = get("dropped_records");
    f.oor = get("out_of_range_records");
    return f;
  };
  if (m.table) files.push_back(from_meta(m.table->file, m.table->meta));
  const std::vector<const View*> views = report_order(m);
  for (const View* v : views) {
    FileCounts f = from_meta(v->file(), v->t->meta);
    if (!f.dropped) f.dropped = v->t->dropped_records;
    if (!f.oor) f.oor = v->t->out_of_range_records;
    files.push_back(f);
  }
  if (m.events) files.push_back(from_meta(m.events->file, m.events->meta));
  std::string all, without;
  bool same = true, any = false;
  std::optional<std::uint64_t> first;
  for (const FileCounts& f : files) {
    if (!f.dropped) {
      without += (without.empty() ? "" : ", ") + f.file;
      continue;
    }
    any = true;
    all += fmt::format("{}{} {}", all.empty() ? "" : ", ", f.file, *f.dropped);
    if (!first) first = f.dropped;
    if (*f.dropped != *first) same = false;
    if (*f.dropped != 0)
      log.fail(f.file, "crossbench.dropped_records = 0", fmt::format("{}", *f.dropped),
               "CUPTI dropped activity records: the tables and traces are incomplete");
    if (f.oor && *f.oor != 0)
      log.fail(f.file, "out_of_range_records = 0", fmt::format("{}", *f.oor),
               "records outside the recording window were discarded: the tables and traces are incomplete");
  }
  if (!any)
    return log.not_run(
        "", fmt::format("no dropped-record count in the metadata of {} (Kineto's exports do not record one)", without));
  if (!same)
    log.fail("all files", "the same crossbench.dropped_records in every file", all,
             "the files disagree on dropped records: they come from different sessions");
  const bool any_oor = std::any_of(files.begin(), files.end(), [](const FileCounts& f) { return f.oor.has_value(); });
  log.pass_if_clean("all files", "crossbench.dropped_records: " + all +
                                     (any_oor ? "; out-of-range counts 0" : "; no file records an out-of-range count"));
  if (!without.empty()) log.note(without, "no dropped-record count in this file's metadata");
}

// ---------------------------------------------------------------------------------------------
// Timeline checks

void check_durations(const Model& m, CheckLog& log) {
  std::string counts;
  std::size_t n = 0;
  const std::vector<const View*> views = report_order(m);
  for (const View* v : views) {
    for (const TraceEvent& e : v->t->events) {
      if (e.dur_ns > 0) continue;
      if (is_device(e.cat))
        log.fail(v->file() + ": " + act_subject(m, e), "dur > 0", fmt::format("dur = {} ns", e.dur_ns),
                 "device activity with a non-positive duration");
      else if (e.dur_ns < 0)
        log.fail(
            fmt::format("{}: {} '{}' (traceEvents[{}])", v->file(), to_string(e.cat), m.names.str(e.name), e.index),
            "dur >= 0", fmt::format("dur = {} ns", e.dur_ns), "event with a negative duration");
    }
    n += v->dev.size();
    counts += fmt::format("{}{} device activities in {}", counts.empty() ? "" : ", ", v->dev.size(), v->file());
  }
  if (n == 0 && !no_device_reason(m).empty()) {
    // The host events are judged; the device's durations are not in the files.
    std::size_t host = 0;
    for (const View* v : views) host += v->t->events.size();
    log.pass_if_clean(fmt::format("{} host events", host), "no event's duration < 0");
    device_not_recorded(m, log, "device activities");
    return;
  }
  if (n == 0) return log.not_run("", "no device activity in the traces");
  log.pass_if_clean(counts, "every device activity's duration > 0, no event's < 0");
}

namespace {

/// Calls visit(lane, event) for the events `evs` of each lane in `less` order. Lanes whose events
/// already come in that order in the file (the usual case) are visited in one pass without
/// copying; the others are collected and sorted.
template <class Less, class Visit>
std::size_t per_lane_in_order(const View& v, const std::vector<std::uint32_t>& evs, Less&& less, Visit&& visit) {
  const std::size_t nl = v.t->lanes.size();
  std::vector<std::uint32_t> last(nl, kNone);
  std::vector<char> sorted(nl, 1);
  std::uint32_t prev_i = kNone;
  for (std::uint32_t i : evs) {
    const std::uint32_t l = v.ev(i).lane;
    const std::uint32_t p = prev_i != kNone && v.ev(prev_i).lane == l ? prev_i : last[l];
    if (p != kNone && less(i, p)) sorted[l] = 0;
    last[l] = i;
    prev_i = i;
  }
  std::size_t used = 0;
  for (std::uint32_t l = 0; l < nl; ++l) used += last[l] != kNone;
  if (std::all_of(sorted.begin(), sorted.end(), [](char c) { return c != 0; })) {
    for (std::uint32_t i : evs) visit(v.ev(i).lane, i);
    return used;
  }
  std::vector<std::vector<std::uint32_t>> rest(nl);
  for (std::uint32_t i : evs) {
    const std::uint32_t l = v.ev(i).lane;
    if (sorted[l])
      visit(l, i);
    else
      rest[l].push_back(i);
  }
  for (std::uint32_t l = 0; l < nl; ++l) {
    if (rest[l].empty()) continue;
    std::sort(rest[l].begin(), rest[l].end(), less);
    for (std::uint32_t i : rest[l]) visit(l, i);
  }
  return used;
}

json latency_figures(std::vector<std::int64_t> lat) {
  if (lat.empty()) return json::object();
  const std::size_t n = lat.size();
  double sum = 0;
  std::int64_t lo = lat[0], hi = lat[0];
  for (auto x : lat) {
    sum += static_cast<double>(x);
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  // Nearest-rank percentiles, selected in O(n).
  auto q = [&](double p) {
    const std::size_t k =
        static_cast<std::size_t>(std::min<double>(static_cast<double>(n - 1), p * static_cast<double>(n - 1) + 0.5));
    std::nth_element(lat.begin(), lat.begin() + static_cast<std::ptrdiff_t>(k), lat.end());
    return lat[k];
  };
  const std::int64_t p50 = q(0.5), p90 = q(0.9), p99 = q(0.99);
  return {{"count", n},
          {"min_ns", lo},
          {"p50_ns", p50},
          {"p90_ns", p90},
          {"p99_ns", p99},
          {"max_ns", hi},
          {"mean_ns", sum / static_cast<double>(n)}};
}

}  // namespace

/// True when the device of a PyTorch (Kineto) trace's device lane (pid = device id) has compute
/// capability 9.0 or more per the trace's deviceProperties. crossbench's own traces never launch
/// with PDL, so an overlap there stays a failure.
static bool pdl_capable(const View& v, std::uint32_t lane) {
  if (!v.t->format.empty()) return false;
  const TraceLane& l = v.t->lanes[lane];
  if (!l.pid_text.empty()) return false;
  const auto it = v.t->compute_capability.find(l.pid);
  return it != v.t->compute_capability.end() && it->second >= 90;
}

void check_overlap(const Model& m, CheckLog& log) {
  std::string counts;
  std::size_t total = 0, graph_overlaps = 0, pdl_overlaps = 0;
  std::int64_t graph_overlap_max = 0, pdl_overlap_max = 0;
  const std::vector<const View*> views = report_order(m);
  for (const View* v : views) {
    std::vector<std::uint32_t> prev(v->t->lanes.size(), kNone);  // per lane: the one ending last so far
    const std::size_t used = per_lane_in_order(
        *v, v->dev,
        [&](std::uint32_t a, std::uint32_t b) {
          const TraceEvent &x = v->ev(a), &y = v->ev(b);
          if (x.start_ns != y.start_ns) return x.start_ns < y.start_ns;
          if (x.end_ns() != y.end_ns()) return x.end_ns() < y.end_ns();
          return x.correlation < y.correlation;
        },
        [&](std::uint32_t lane, std::uint32_t i) {
          const TraceEvent& e = v->ev(i);
          std::uint32_t& pv = prev[lane];
          if (pv != kNone && e.start_ns < v->ev(pv).end_ns()) {
            const TraceEvent& p = v->ev(pv);
            const std::int64_t overlap = p.end_ns() - e.start_ns;
            if (p.correlation == e.correlation && overlap <= kGraphNodeOverlapNs &&
                graph_launch(m, *v, e.correlation)) {
              ++graph_overlaps;  // two nodes of one graph replay (kGraphNodeOverlapNs)
              graph_overlap_max = std::max(graph_overlap_max, overlap);
              if (e.end_ns() > p.end_ns()) pv = i;
              return;
            }
            if (pdl_capable(*v, e.lane)) {
              // Programmatic dependent launch (cudaLaunchAttributeProgrammaticStreamSerialization,
              // compute capability >= 9.0): the next kernel of a stream may start before the
              // previous one ends (cuDNN's sm90 kernels do). Legal, so reported with its amount.
              ++pdl_overlaps;
              pdl_overlap_max = std::max(pdl_overlap_max, overlap);
              if (e.end_ns() > p.end_ns()) pv = i;
              return;
            }
            if (v->t->format.empty() && v->t->compute_capability.empty()) {
              log.not_judged(fmt::format("{}: {}: {}", v->file(), v->t->lanes[e.lane].describe(), act_subject(m, e)),
                             fmt::format("{} ns overlap with the previous activity on its stream, and the trace has no "
                                         "deviceProperties: programmatic dependent launch (compute capability >= 9.0) "
                                         "cannot be told from an inconsistency",
                                         overlap));
              if (e.end_ns() > p.end_ns()) pv = i;
              return;
            }
            log.fail(fmt::format("{}: {}: {}", v->file(), v->t->lanes[e.lane].describe(), act_subject(m, e)),
                     fmt::format("start >= {} (end of {})", ts_text(*v, p.end_ns()), act_subject(m, p)),
                     fmt::format("start {} ({} ns overlap)", ts_text(*v, e.start_ns), p.end_ns() - e.start_ns),
                     "two activities on one stream overlap");
          }
          if (pv == kNone || e.end_ns() > v->ev(pv).end_ns()) pv = i;
        });
    total += used;
    counts += fmt::format("{}{} (device, stream) lanes in {}", counts.empty() ? "" : ", ", used, v->file());
  }
  if (total == 0) {
    if (device_not_recorded(m, log)) return;
    return log.not_run("", "no device activity in the traces");
  }
  if (graph_overlaps > 0) {
    counts += fmt::format("; {} overlaps of consecutive nodes of one graph launch, at most {} ns (allowed up to {} ns)",
                          graph_overlaps, graph_overlap_max, kGraphNodeOverlapNs);
  }
  if (pdl_overlaps > 0) {
    log.note(fmt::format("{} overlaps", pdl_overlaps),
             fmt::format("programmatic dependent launch overlap: {} activities start before the previous one on their "
                         "stream ends, by at most {} ns (compute capability >= 9.0: a kernel launched with "
                         "cudaLaunchAttributeProgrammaticStreamSerialization may start early; measured on the H200: "
                         "results/h200/pdl-2026-12-03)",
                         pdl_overlaps, pdl_overlap_max));
    counts += fmt::format("; {} programmatic dependent launch overlaps, at most {} ns", pdl_overlaps, pdl_overlap_max);
  }
  log.pass_if_clean(counts, pdl_overlaps + graph_overlaps == 0
                                ? "the activities on each stream never overlap"
                                : "no two activities on a stream overlap, but for the graph-node and programmatic "
                                  "dependent launch overlaps counted");
}

void check_launch_before(const Model& m, CheckLog& log, ValidationReport& report) {
  std::string counts;
  std::size_t total = 0;
  std::vector<std::int64_t> latency;  // primary trace
  const std::vector<const View*> views = report_order(m);
  for (const View* v : views) {
    std::size_t n = 0;
    const bool primary = v == &m.A();
    if (primary) latency.reserve(v->dev.size());
    for (std::uint32_t i : v->dev) {
      const TraceEvent& e = v->ev(i);
      const std::uint32_t l = v->api_corr.only(e.correlation);
      if (l == kNone) continue;  // attribution reports it
      ++n;
      const TraceEvent& launch = v->ev(l);
      if (primary) latency.push_back(e.start_ns - launch.start_ns);
      if (e.start_ns < launch.start_ns)
        log.fail(
            v->file() + ": " + act_subject(m, e),
            fmt::format("start >= {} (start of launch '{}')", ts_text(*v, launch.start_ns), m.names.str(launch.name)),
            fmt::format("start {} ({} ns before its launch)", ts_text(*v, e.start_ns), launch.start_ns - e.start_ns),
            "device activity starts before the call that launched it");
    }
    total += n;
    counts += fmt::format("{}{} launched activities in {}", counts.empty() ? "" : ", ", n, v->file());
  }
  if (total == 0) {
    if (device_not_recorded(m, log)) return;
    return log.not_run("", "no device activity with a launch call in the traces");
  }
  const json fig = latency_figures(std::move(latency));
  std::string dist;
  if (!fig.empty())
    dist = fmt::format(
        "; launch latency in {} (activity start - launch call start: launch to kernel start, including "
        "the blocking kernel's hold) over {}: min {} ns, median {} ns, "
        "p90 {} ns, p99 {} ns, max {} ns",
        m.A().file(), fig["count"].get<std::size_t>(), fig["min_ns"].get<std::int64_t>(),
        fig["p50_ns"].get<std::int64_t>(), fig["p90_ns"].get<std::int64_t>(), fig["p99_ns"].get<std::int64_t>(),
        fig["max_ns"].get<std::int64_t>());
  report.figures[checks::kLaunchBeforeKernel] = {{"file", m.A().file()}, {"launch_latency", fig}};
  log.pass_if_clean(counts, "each starts after its launch call starts" + dist);
  if (log.failures() != 0 && !dist.empty()) log.note(m.A().file(), dist.substr(2));
}

void check_window(const Model& m, CheckLog& log) {
  std::size_t ran = 0;
  std::string counts;
  for (const View& v : m.views) {
    const TraceData& t = *v.t;
    if (!t.has_window) {
      log.not_run(v.file(),
                  "no recording window in its metadata (crossbench.window_start_ns/window_end_ns, or Kineto's "
                  "\"Trace\" span and \"Record Window End\")");
      continue;
    }
    ++ran;
    const std::string window =
        fmt::format("[{}, {}] ({})", ts_text(v, t.window_start_ns), ts_text(v, t.window_end_ns), t.window_source);
    for (const TraceEvent& e : t.events) {
      if (e.start_ns >= t.window_start_ns && e.end_ns() <= t.window_end_ns) continue;
      log.fail(fmt::format("{}: {} '{}' (traceEvents[{}])", v.file(), to_string(e.cat), m.names.str(e.name), e.index),
               "inside the recording window " + window,
               fmt::format("ts {} to {}", ts_text(v, e.start_ns), ts_text(v, e.end_ns())),
               "event outside the recording window");
    }
    for (const TraceFlow& f : t.flows) {
      if (f.ts_ns >= t.window_start_ns && f.ts_ns <= t.window_end_ns) continue;
      log.fail(fmt::format("{}: ac2g \"{}\" id {} (traceEvents[{}])", v.file(), f.start ? "s" : "f", f.id, f.index),
               "inside the recording window " + window, fmt::format("ts {}", ts_text(v, f.ts_ns)),
               "flow event outside the recording window");
    }
    counts += fmt::format("{}{}: {} events and {} flow events inside {}", counts.empty() ? "" : "; ", v.file(),
                          t.events.size(), t.flows.size(), window);
  }
  if (ran == 0) return;
  log.pass_if_clean(counts, "no event outside the recording window");
}

void check_lane_order(const Model& m, CheckLog& log) {
  std::string counts;
  std::size_t total = 0;
  for (const View& v : m.views) {
    const auto by_corr = [&](std::uint32_t a, std::uint32_t b) {
      const TraceEvent &x = v.ev(a), &y = v.ev(b);
      if (x.correlation != y.correlation) return x.correlation < y.correlation;
      return a < b;
    };
    auto run = [&](const std::vector<std::uint32_t>& evs, const char* what) {
      std::vector<std::uint32_t> latest(v.t->lanes.size(), kNone);  // the earlier-launched event that starts latest
      return per_lane_in_order(v, evs, by_corr, [&](std::uint32_t lane, std::uint32_t i) {
        const TraceEvent& e = v.ev(i);
        std::uint32_t& lt = latest[lane];
        if (lt != kNone && e.start_ns < v.ev(lt).start_ns && e.correlation != v.ev(lt).correlation) {
          const TraceEvent& p = v.ev(lt);
          log.fail(
              fmt::format("{}: {}: {}", v.file(), v.t->lanes[e.lane].describe(), act_subject(m, e)),
              fmt::format("start >= {} (start of {}, correlation {} < {})", ts_text(v, p.start_ns), act_subject(m, p),
                          p.correlation, e.correlation),
              fmt::format("start {} ({} ns earlier)", ts_text(v, e.start_ns), p.start_ns - e.start_ns),
              fmt::format("timestamps not monotonic on the lane: {} in correlation (launch) order start out of order",
                          what));
        }
        if (lt == kNone || e.start_ns >= v.ev(lt).start_ns) lt = i;
      });
    };
    const std::size_t nd = run(v.dev, "device activities"), nh = run(v.api, "API calls");
    total += nd + nh;
    counts += fmt::format("{}{}: {} streams, {} host threads", counts.empty() ? "" : "; ", v.file(), nd, nh);
  }
  if (total == 0) return log.not_run("", "no device activity or API call in the traces");
  log.pass_if_clean(counts, "on every stream and host thread, start times follow correlation (launch) order");
  device_not_recorded(m, log, "streams");
}

}  // namespace xb::vd
