// Whether the files given together are of one profile (one_profile.h).
#include "validate/one_profile.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "common/errors.h"
#include "validate/checks_table_common.h"
#include "validate/model.h"

namespace xb::vd {

namespace {

/// Names PyTorch never turns into FunctionEvents (profiler_util.py `_filter_name`): they count in
/// no Self CPU total, so they stay out of the time the ops cover.
bool filtered_by_pytorch(const std::string& name) {
  return name.rfind("profiler::", 0) == 0 || name == "aten::is_leaf" || name == "aten::output_nr" ||
         name == "aten::_version";
}

/// Rows that name no trace event by design: profile_memory's "[memory]" (and "[OutOfMemory]")
/// instants, which the trace holds as instant events, and names that are not ASCII, which
/// PyTorch 2.11 writes into the trace as "unknown" (issue 37).
bool names_no_trace_event(const TableRowData& r) {
  const std::string name = r.cut ? r.name.substr(0, r.name.size() - 3) : r.name;
  for (const char* m : {"[memory]", "[OutOfMemory]"})
    if (r.cut ? std::string(m).rfind(name, 0) == 0 : name == m) return true;
  return std::any_of(name.begin(), name.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80; });
}

/// The union's length of [start, end) intervals.
std::int64_t covered(std::vector<std::pair<std::int64_t, std::int64_t>> iv) {
  if (!std::is_sorted(iv.begin(), iv.end())) std::sort(iv.begin(), iv.end());
  std::int64_t total = 0, start = 0, end = 0;
  bool open = false;
  for (const auto& [s, e] : iv) {
    if (open && s <= end) {
      end = std::max(end, e);
      continue;
    }
    if (open) total += end - start;
    start = s;
    end = e;
    open = true;
  }
  return open ? total + end - start : total;
}

/// A name for a message: quoted, at most 40 characters.
std::string short_name(const std::string& s) { return "'" + (s.size() > 40 ? s.substr(0, 37) + "..." : s) + "'"; }

/// crossbench.window_start_ns of a file's metadata, when it has one.
std::optional<std::int64_t> window_start(const nlohmann::json& meta) {
  if (!meta.is_object()) return std::nullopt;
  const auto it = meta.find("window_start_ns");
  if (it == meta.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<std::int64_t>();
}

/// Counts the table's figures against the trace's.
class Tally {
 public:
  explicit Tally(ProfileEvidence& ev) : ev_(ev) {}
  void agree() { ++ev_.agree; }
  void disagree(const std::string& what) {
    if (ev_.disagree++ == 0) ev_.first = what;
  }
  /// `found` (printed with resolution `res`) against `want`: an agreement only where the print
  /// resolution tells values apart (below 1% of the value), so that "0.000s" proves nothing.
  void compare(const TableTime& found, std::int64_t want, const std::string& what) {
    const double tol = found.res_ns / 2.0 + 0.01;
    if (std::fabs(found.ns - static_cast<double>(want)) > tol)
      disagree(fmt::format("{} {}, the trace's events {}", what, print_time(found.ns, found.res_ns),
                           print_time(static_cast<double>(want), found.res_ns)));
    else if (found.res_ns <= 0.01 * std::fabs(found.ns))
      agree();
  }

 private:
  ProfileEvidence& ev_;
};

}  // namespace

TraceFigures trace_figures(const TraceData& t, NameTable& names) {
  TraceFigures f;
  f.file = t.file;
  const std::uint32_t step = names.intern("ProfilerStep*");
  // Per name id, its slot among the display names (one array lookup per event).
  constexpr std::uint32_t kNoSlot = 0xFFFFFFFFu;
  std::vector<std::uint32_t> slot(names.size(), kNoSlot);
  std::vector<TraceFigures::Name> figs;
  const auto slot_of = [&](std::uint32_t name) {
    if (slot[name] != kNoSlot) return slot[name];
    const std::uint32_t d = is_profiler_step(names.str(name)) ? step : name;
    if (slot[d] == kNoSlot) {
      slot[d] = static_cast<std::uint32_t>(figs.size());
      figs.emplace_back();
      f.names.push_back(d);
    }
    return slot[name] = slot[d];
  };
  struct Span {
    std::uint32_t slot;
    std::int64_t start, end;
  };
  std::vector<Span> host;
  std::vector<std::pair<std::int64_t, std::int64_t>> ops;
  for (const TraceEvent& e : t.events) {
    const std::uint32_t k = slot_of(e.name);
    TraceFigures::Name& n = figs[k];
    ++n.events;
    if (is_device(e.cat)) {
      n.device_ns += e.dur_ns;
      f.device_ns += e.dur_ns;
      ++f.device_events;
      continue;
    }
    n.device_only = false;
    if (e.cat == TraceCat::GpuUserAnnotation) continue;
    // cuda_sync events count in the upper bounds only: whether PyTorch gives them CPU time is not
    // observed (no committed export holds one).
    n.host_ns += e.dur_ns;
    f.host_ns += e.dur_ns;
    if (e.cat == TraceCat::Sync) continue;
    n.host_cats |= 1u << static_cast<unsigned>(e.cat);
    host.push_back({k, e.start_ns, e.end_ns()});
    if ((e.cat == TraceCat::CpuOp || is_api(e.cat)) && !filtered_by_pytorch(names.str(e.name)))
      ops.emplace_back(e.start_ns, e.end_ns());
  }
  // Per name, the events inside no other event of that name: PyTorch's same-name fold
  // (profiler_util.py _remove_dup_nodes) can only remove an event nested in one of its name.
  // The spans grouped by name (a counting sort keeps the file's order within a name), then
  // ordered by start (outer first) where the file does not already order them.
  std::vector<std::size_t> first(figs.size() + 1, 0);
  for (const Span& h : host) ++first[h.slot + 1];
  for (std::size_t k = 1; k < first.size(); ++k) first[k] += first[k - 1];
  std::vector<Span> grouped(host.size());
  std::vector<std::size_t> next(first.begin(), first.end() - 1);
  for (const Span& h : host) grouped[next[h.slot]++] = h;
  const auto before = [](const Span& a, const Span& b) {
    return a.start != b.start ? a.start < b.start : a.end > b.end;
  };
  for (std::size_t k = 0; k < figs.size(); ++k) {
    const auto b = grouped.begin() + static_cast<std::ptrdiff_t>(first[k]);
    const auto e = grouped.begin() + static_cast<std::ptrdiff_t>(first[k + 1]);
    if (!std::is_sorted(b, e, before)) std::sort(b, e, before);
    std::int64_t reach = LLONG_MIN;
    for (auto it = b; it != e; ++it) {
      if (it->end > reach) figs[k].host_outer_ns += it->end - it->start;
      reach = std::max(reach, it->end);
    }
  }
  f.ops_cover_ns = covered(std::move(ops));
  f.by_name.reserve(figs.size());
  for (std::size_t i = 0; i < figs.size(); ++i) f.by_name.emplace(f.names[i], figs[i]);
  return f;
}

ProfileEvidence compare_table(const TableData& tb, const TraceFigures& tr, const NameTable& names) {
  ProfileEvidence ev;
  Tally tally(ev);
  const auto figures_of = [&](const std::string& name) -> const TraceFigures::Name* {
    const std::uint32_t id = names.find(name);
    if (id == NameTable::npos) return nullptr;
    const auto it = tr.by_name.find(id);
    return it == tr.by_name.end() ? nullptr : &it->second;
  };
  for (const TableRowData& r : tb.rows) {
    if (names_no_trace_event(r)) continue;
    const std::string row = "row " + short_name(r.name);
    // A single step's row ("ProfilerStep#3"): only whether the trace has steps.
    const bool one_step = is_profiler_step(r.name);
    const TraceFigures::Name* n = figures_of(one_step ? "ProfilerStep*" : r.name);
    bool present = n != nullptr;
    if (!n && r.cut) {
      const std::string prefix = r.name.substr(0, r.name.size() - 3);
      std::size_t fits = 0;
      for (const std::uint32_t id : tr.names) {
        if (names.str(id).compare(0, prefix.size(), prefix) != 0) continue;
        if (++fits == 1) n = &tr.by_name.at(id);
      }
      present = fits > 0;
      if (fits > 1) n = nullptr;  // ambiguous: present, its figures unknown
    }
    if (!present) {
      tally.disagree(row + " names no event of the trace");
      continue;
    }
    if (!n || one_step) continue;
    if (r.calls > n->events)
      tally.disagree(fmt::format("{}: {} calls, {} such events in the trace", row, r.calls, n->events));
    const bool host = r.self_cpu.ns > 0 || r.cpu_total.ns > 0;
    if (!host && tb.has_cuda && r.self_cuda.ns > 0 && n->device_only && n->device_ns > 0) {
      // A device activity's FunctionEvent: its Self CUDA is its duration (is_device events).
      tally.compare(r.self_cuda, n->device_ns, row + " Self CUDA");
    } else if (host && tb.has_cpu && n->host_cats != 0) {
      // cpu_time_total sums the events' durations; the fold may only drop events nested in one of
      // their name; a grouped table's row is a part of its name's events; a name of two host
      // categories (a cpu_op and a range) may be two rows.
      const double tol = r.cpu_total.res_ns / 2.0 + 0.01;
      const bool whole = !tb.grouped() && (n->host_cats & (n->host_cats - 1)) == 0;
      if (r.cpu_total.ns > static_cast<double>(n->host_ns) + tol) {
        tally.disagree(fmt::format("{} CPU total {}, its events in the trace {}", row,
                                   print_time(r.cpu_total.ns, r.cpu_total.res_ns),
                                   print_time(static_cast<double>(n->host_ns), r.cpu_total.res_ns)));
      } else if (whole && n->host_outer_ns == n->host_ns) {
        tally.compare(r.cpu_total, n->host_ns, row + " CPU total");
      } else if (whole && r.cpu_total.ns < static_cast<double>(n->host_outer_ns) - tol) {
        tally.disagree(fmt::format("{} CPU total {}, its events in the trace at least {}", row,
                                   print_time(r.cpu_total.ns, r.cpu_total.res_ns),
                                   print_time(static_cast<double>(n->host_outer_ns), r.cpu_total.res_ns)));
      }
    }
  }
  // _build_table's totals, over every event (before row_limit): Self CUDA sums the device events'
  // own time; Self CPU sums self times, which telescope to the outermost events' durations: at
  // most every host event's duration, at least the time the ops and API calls cover.
  if (tb.has_cuda && tb.has_self_cuda_total && tr.device_events > 0)
    tally.compare(tb.self_cuda_total, tr.device_ns, "Self CUDA time total");
  if (!tb.has_cuda && tr.device_ns > 0)
    tally.disagree(fmt::format("the table has no CUDA columns, the trace {} device activities", tr.device_events));
  if (tb.has_cpu && tb.has_self_cpu_total) {
    const TableTime& t = tb.self_cpu_total;
    const double tol = t.res_ns / 2.0 + 0.01;
    if (t.ns > static_cast<double>(tr.host_ns) + tol)
      tally.disagree(fmt::format("Self CPU time total {}, every host event of the trace together {}",
                                 print_time(t.ns, t.res_ns), print_time(static_cast<double>(tr.host_ns), t.res_ns)));
    else if (t.ns < static_cast<double>(tr.ops_cover_ns) - tol)
      tally.disagree(fmt::format("Self CPU time total {}, the trace's ops cover {}", print_time(t.ns, t.res_ns),
                                 print_time(static_cast<double>(tr.ops_cover_ns), t.res_ns)));
  }
  return ev;
}

void require_one_profile(const std::vector<TraceData>& traces, const TableData* table, const EventsData* events,
                         NameTable& names) {
  Phase phase("one profile");
  if (traces.empty()) return;
  const TraceData& a = traces[0];
  // crossbench's files carry the recording's window: one recording, one start.
  const auto same_window = [&](const std::string& file, const nlohmann::json& meta) {
    const auto mine = window_start(a.meta), theirs = window_start(meta);
    if (mine && theirs && *mine != *theirs)
      throw InputError(fmt::format(
          "{} and {} are not of one recording: their crossbench windows start {} ns apart (window_start_ns {} and "
          "{}); give the files of one run folder",
          a.file, file, *theirs > *mine ? *theirs - *mine : *mine - *theirs, *mine, *theirs));
  };
  if (traces.size() > 1) {
    const TraceData& b = traces[1];
    same_window(b.file, b.meta);
    // Two exports of one session hold the same events: their time ranges meet.
    const auto range = [](const TraceData& t) {
      std::int64_t lo = LLONG_MAX, hi = LLONG_MIN;
      for (const TraceEvent& e : t.events) {
        lo = std::min(lo, e.start_ns);
        hi = std::max(hi, e.end_ns());
      }
      return std::make_pair(lo, hi);
    };
    const auto ra = range(a), rb = range(b);
    if (!a.events.empty() && !b.events.empty() && (ra.second < rb.first || rb.second < ra.first))
      throw InputError(fmt::format(
          "{} and {} are not of one profiling session: their events lie {} ms apart; give two "
          "exports of one session",
          a.file, b.file,
          fmt::format("{:.3f}", static_cast<double>(std::max(rb.first - ra.second, ra.first - rb.second)) / 1e6)));
  }
  if (events) same_window(events->file, events->meta);
  if (!table) return;
  same_window(table->file, table->meta);
  // crossbench's table.json and trace of one window are of one recording: that settles it (and
  // spares a million-kernel run folder the figures).
  if (window_start(table->meta) && window_start(a.meta)) return;
  const ProfileEvidence ev = compare_table(*table, trace_figures(a, names), names);
  if (!ev.not_one_profile()) return;
  throw InputError(fmt::format(
      "{} is not a table of {}'s profile: {} of the figures the trace fixes contradict it, {} agree{} (e.g. {}); give "
      "the table printed from the profile that exported this trace",
      table->file, a.file, ev.disagree, ev.agree, ev.agree == 1 ? "s" : "", ev.first));
}

}  // namespace xb::vd
