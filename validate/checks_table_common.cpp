// Helpers the table checks share (checks_table_common.h).
#include "validate/checks_table_common.h"

#include <algorithm>
#include <set>
#include <utility>

namespace xb::vd {

namespace {

/// Sort keys of key_averages().table(sort_by=...) by the column that shows them, in the order a
/// table's columns are tried; kFirstSeen is sort_by=None (key_averages' own order).
enum Col : int {
  kCudaTotal,
  kSelfCuda,
  kCpuTotal,
  kSelfCpu,
  kCount,
  kCpuAvg,
  kCudaAvg,
  kCpuMem,
  kSelfCpuMem,
  kDevMem,
  kSelfDevMem,
  kFlops,
  kFirstSeen,
};

const char* sort_by_of(int c) {
  static const char* const keys[] = {"'cuda_time_total'",
                                     "'self_cuda_time_total'",
                                     "'cpu_time_total'",
                                     "'self_cpu_time_total'",
                                     "'count'",
                                     "'cpu_time'",
                                     "'cuda_time'",
                                     "'cpu_memory_usage'",
                                     "'self_cpu_memory_usage'",
                                     "'cuda_memory_usage'",
                                     "'self_cuda_memory_usage'",
                                     "'flops'",
                                     "None"};
  return keys[c];
}

const char* column_of(int c) {
  static const char* const cols[] = {
      "CUDA total", "Self CUDA",    "CPU total",  "Self CPU",        "# of Calls", "CPU time avg",    "CUDA time avg",
      "CPU Mem",    "Self CPU Mem", "device Mem", "Self device Mem", "FLOPs",      "first-seen order"};
  return cols[c];
}

/// A row's printed value in column c and its print resolution.
std::pair<double, double> printed(const TableRowData& r, int c) {
  switch (c) {
    case kCudaTotal:
      return {r.cuda_total.ns, r.cuda_total.res_ns};
    case kSelfCuda:
      return {r.self_cuda.ns, r.self_cuda.res_ns};
    case kCpuTotal:
      return {r.cpu_total.ns, r.cpu_total.res_ns};
    case kSelfCpu:
      return {r.self_cpu.ns, r.self_cpu.res_ns};
    case kCount:
      return {static_cast<double>(r.calls), 0};
    case kCpuAvg:
      return {r.cpu_avg.ns, r.cpu_avg.res_ns};
    case kCudaAvg:
      return {r.cuda_avg.ns, r.cuda_avg.res_ns};
    case kCpuMem:
      return {r.cpu_mem, r.mem_res};
    case kSelfCpuMem:
      return {r.self_cpu_mem, r.mem_res};
    case kDevMem:
      return {r.dev_mem, r.mem_res};
    case kSelfDevMem:
      return {r.self_dev_mem, r.mem_res};
    default:
      return {r.flops, 0};
  }
}

/// The trace's value of sort key c for a row, as PyTorch sorts it (its printed figures: the
/// overhead double count included); false for keys the trace does not carry (memory, FLOPs).
bool traced(const Expected& e, int c, double& out) {
  const double n = e.calls > 0 ? static_cast<double>(e.calls) : 1.0;
  switch (c) {
    case kCudaTotal:
      out = e.cuda_total_pt();
      return true;
    case kSelfCuda:
      out = e.self_cuda_pt();
      return true;
    case kCpuTotal:
      out = static_cast<double>(e.cpu_total);
      return true;
    case kSelfCpu:
      out = static_cast<double>(e.self_cpu);
      return true;
    case kCount:
      out = static_cast<double>(e.calls);
      return true;
    case kCpuAvg:
      out = static_cast<double>(e.cpu_total) / n;
      return true;
    case kCudaAvg:
      out = e.cuda_total_pt() / n;
      return true;
    default:
      return false;
  }
}

/// The table prints column c.
bool printed_col(const TableData& tb, int c) {
  if (c == kCpuAvg || c == kCudaAvg) return tb.has_avg;
  if (c >= kCpuMem && c <= kSelfDevMem) return tb.has_mem;
  if (c == kFlops) return tb.has_flops;
  return c < kFlops;
}

/// Column c is non-increasing over the table's rows and not constant: the table may be sorted by it.
bool ordered(const TableData& tb, int c) {
  if (tb.rows.size() < 2 || !printed_col(tb, c)) return false;
  bool varies = false;
  for (std::size_t i = 1; i < tb.rows.size(); ++i) {
    const double a = printed(tb.rows[i - 1], c).first, b = printed(tb.rows[i], c).first;
    if (b > a + 1e-9) return false;
    varies = varies || a != b;
  }
  return varies;
}

/// Row a's first event comes before row b's in PyTorch's event list.
bool seen_before(const Expected& a, const Expected& b) {
  if (a.first_start != b.first_start) return a.first_start < b.first_start;
  if (a.first_end != b.first_end) return a.first_end > b.first_end;
  return a.first_ev < b.first_ev;
}

/// One row of the trace the table could show.
struct Cand {
  RowKey key;
  std::uint32_t shapes;
  const Expected* e;
};

}  // namespace

std::string print_time(double ns, double res) {
  if (res <= 0) return fmt::format("{} ns", static_cast<long long>(std::llround(ns)));
  const double u = ns / 1000.0;
  if (std::fabs(u) >= 1e6) return fmt::format("{:.3f}s", u / 1e6);
  if (std::fabs(u) >= 1e3) return fmt::format("{:.3f}ms", u / 1e3);
  return fmt::format("{:.3f}us", u);
}

std::string TableCut::options() const {
  std::string s;
  const auto add = [&](const std::string& x) { s += (s.empty() ? "" : " and ") + x; };
  if (top_level != 0) add("top_level_events_only=True");
  if (row_limit != 0) add(fmt::format("row_limit={} (sort_by={})", printed, sort_key));
  if (unknown != 0) add("row_limit under a sort key the trace does not reproduce");
  return s;
}

std::string TableCut::counts() const {
  std::string s;
  const auto add = [&](const std::string& x) { s += (s.empty() ? "" : ", ") + x; };
  if (top_level != 0)
    add(fmt::format("{} by top_level_events_only=True (their first event has a CPU parent)", top_level));
  if (row_limit != 0)
    add(fmt::format("{} by row_limit={} (sort_by={}: they rank after the last row)", row_limit, printed, sort_key));
  if (unknown != 0) add(fmt::format("{} probably by row_limit under a sort key the trace does not reproduce", unknown));
  return s;
}

namespace {

/// table_cut's state, one method per phase: what the table shows, the trace's rows it could
/// show, those absent for a reason other than row_limit, then row_limit's sort key and cut.
struct Cutter {
  const Model& m;
  const TableData& tb;
  TableCut& out;
  std::set<std::pair<RowKey, std::uint32_t>> seen;
  std::vector<std::size_t> covering;  // rows that stand for several rows of the trace
  std::vector<Cand> cands;
  std::size_t n_cands = 0;
  std::vector<Cand> rest;  // absent, not left out by top_level_events_only
  // The row_limit phase's state.
  std::vector<int> keys;
  std::vector<const Expected*> shown;  // printed rows with figures, in table order
  int chosen = -1, fallback = -1;

  Cutter(const Model& model, TableCut& o) : m(model), tb(*model.table), out(o) {}

  // What the table shows: matched (name[, group]) keys; a cut name or cut shapes cell that fits
  // several stands for each of them.
  void read_shown() {
    for (const RowMatch& mt : m.matches)
      if (mt.matched) seen.insert({mt.key, m.by_shapes ? mt.shapes : kNone});
    for (std::size_t i = 0; i < tb.rows.size() && i < m.matches.size(); ++i) {
      const RowMatch& mt = m.matches[i];
      if ((mt.ambiguous && tb.rows[i].cut) || (m.by_shapes && mt.matched && mt.shapes == kNone)) covering.push_back(i);
    }
  }

  bool covered(const RowKey& k, std::uint32_t shapes) const {
    for (std::size_t i : covering) {
      const RowMatch& mt = m.matches[i];
      const TableRowData& r = tb.rows[i];
      if (mt.ambiguous && mt.key.first == k.first &&
          m.names.str(k.second).compare(0, r.name.size() - 3, r.name, 0, r.name.size() - 3) == 0)
        return true;
      if (mt.matched && mt.key == k && shapes != kNone &&
          m.names.str(shapes).compare(0, r.input_shapes.size(), r.input_shapes) == 0)
        return true;
    }
    return false;
  }

  // GPU-span rows: crossbench's tables never have them, and PyTorch's only for annotations its
  // trace has gpu_user_annotation events of.
  bool span_shown(const RowKey& k) const {
    if (tb.json || !m.A().t->format.empty()) return false;
    return std::any_of(m.A().span.begin(), m.A().span.end(), [&](std::uint32_t i) {
      const std::uint32_t n = m.A().ev(i).name;
      return (n < m.derived.disp.size() ? m.derived.disp[n] : n) == k.second;
    });
  }

  void read_cands() {
    if (m.by_shapes) {
      for (const auto& [g, e] : m.derived.groups) cands.push_back({g.row(), g.shapes, &e});
    } else {
      for (const auto& [k, e] : m.derived.rows)
        if (!m.derived.aliases.count(k)) cands.push_back({k, kNone, &e});
    }
    n_cands = cands.size();
  }

  // The absent candidates: those top_level_events_only left out go to out, the rest to rest.
  void sift(std::uint32_t steps, bool step_rows) {
    for (const Cand& c : cands) {
      if (seen.count({c.key, c.shapes})) continue;
      // Rows whose names the trace writes "unknown" stand for those events (match_renamed_rows).
      if (std::any_of(m.matches.begin(), m.matches.end(),
                      [&](const RowMatch& mt) { return mt.renamed && mt.key == c.key; }))
        continue;
      if (step_rows && c.key.first == TraceCat::UserAnnotation && c.key.second == steps) continue;  // step by step
      if (c.key.first == TraceCat::GpuUserAnnotation && !span_shown(c.key)) continue;
      if (covered(c.key, c.shapes)) continue;
      if (!tb.json && tb.top_level_only && c.e->first_has_parent) {
        out.absent.push_back({c.key, c.shapes, AbsentWhy::TopLevel,
                              "printed with key_averages().table(top_level_events_only=True), and the row's first "
                              "event has a CPU parent"});
        ++out.top_level;
        continue;
      }
      rest.push_back(c);
    }
  }

  // The sort key: a column the table is ordered by (or the rows' first-seen order) under which
  // every absent row ranks at or after the last row.
  void read_keys() {
    for (int c = kCudaTotal; c <= kFlops; ++c)
      if (ordered(tb, c)) keys.push_back(c);
    for (const RowMatch& mt : m.matches)
      if (const Expected* e = m.expected(mt)) shown.push_back(e);
    bool first_seen = shown.size() >= 2 && shown.size() + 1 >= tb.rows.size();
    for (std::size_t i = 1; i < shown.size() && first_seen; ++i) first_seen = seen_before(*shown[i - 1], *shown[i]);
    if (first_seen) keys.push_back(kFirstSeen);
  }

  std::pair<double, double> cut_value(int c) const {  // the last row's value, and half its print resolution
    double v = 0, res = 0;
    bool any = false;
    for (const TableRowData& r : tb.rows) {
      const auto [x, rx] = printed(r, c);
      if (!any || x < v) v = x, res = rx;
      any = true;
    }
    return std::make_pair(v, res / 2 + 1e-6);
  }

  bool fits(int c, const Cand& x, std::string* why) const {
    if (c == kFirstSeen) {
      const bool ok = seen_before(*shown.back(), *x.e);
      if (why) *why = "its first event comes after the last row's in key_averages' order";
      return ok;
    }
    double mine = 0;
    if (!traced(*x.e, c, mine)) return false;
    const auto [theirs, tol] = cut_value(c);
    if (why)
      *why = fmt::format("its {} ({}) does not exceed the last row's ({})", column_of(c), num(mine), num(theirs));
    return mine <= theirs + tol;
  }

  void choose_key() {
    for (int c : keys) {
      double dummy = 0;
      if (c != kFirstSeen && !traced(*rest[0].e, c, dummy)) continue;
      if (std::all_of(rest.begin(), rest.end(), [&](const Cand& x) { return fits(c, x, nullptr); })) {
        chosen = c;
        break;
      }
    }
    for (int c : keys) {
      double dummy = 0;
      if (c == kFirstSeen || traced(*rest[0].e, c, dummy)) {
        fallback = c;
        break;
      }
    }
  }

  // Why an absent row that fits no sort key may still have been cut; "" when nothing suggests it.
  std::string unknown_reason() const {
    // A PyTorch text table with fewer rows than its trace has rows may have been cut under a
    // sort key the validator cannot order by (memory or FLOPs, a key whose column is not
    // printed): an absent row proves nothing there.
    const bool may_hide = m.A().t->format.empty() && tb.rows.size() < n_cands;
    const int undecided = keys.empty() ? -1 : keys[0];
    if (undecided >= 0 && fallback < 0)
      return fmt::format(
          "the table is sorted by {}, which the trace does not carry, and shows {} rows: it was probably cut by "
          "key_averages().table(row_limit=...)",
          column_of(undecided), tb.rows.size());
    if (keys.empty() && tb.rows.size() == 100)
      return "the table has 100 rows, key_averages().table()'s default row_limit: rows past it are not printed";
    if (keys.empty() && !tb.rows.empty())
      return fmt::format(
          "the table's {} rows are in no order the validator can see (sort_by=None keeps first-seen order; a "
          "memory or FLOPs key without its column prints none): it was probably cut by "
          "key_averages().table(row_limit=...)",
          tb.rows.size());
    if (may_hide)
      return fmt::format(
          "the table has {} rows for {} rows of the trace: row_limit may have cut it under a sort key it does not "
          "show (flops, memory without its column)",
          tb.rows.size(), n_cands);
    return "";
  }

  void classify() {
    for (const Cand& x : rest) {
      std::string why;
      if (chosen >= 0) {
        fits(chosen, x, &why);
        out.absent.push_back({x.key, x.shapes, AbsentWhy::RowLimit, why});
        ++out.row_limit;
        continue;
      }
      if (fallback >= 0 && fits(fallback, x, &why)) {
        out.absent.push_back({x.key, x.shapes, AbsentWhy::RowLimit, why});
        ++out.row_limit;
        continue;
      }
      const std::string reason = unknown_reason();
      if (reason.empty()) {
        out.absent.push_back({x.key, x.shapes, AbsentWhy::Missing, why});
        ++out.missing;
      } else {
        out.absent.push_back({x.key, x.shapes, AbsentWhy::Unknown, reason});
        ++out.unknown;
      }
    }
    if (out.row_limit != 0) out.sort_key = sort_by_of(chosen >= 0 ? chosen : fallback);
  }
};

}  // namespace

TableCut table_cut(const Model& m) {
  TableCut out;
  if (!m.table) return out;
  Cutter cut(m, out);
  out.printed = cut.tb.rows.size();
  cut.read_shown();
  const std::uint32_t steps = m.names.find("ProfilerStep*");
  const bool step_rows = std::any_of(cut.seen.begin(), cut.seen.end(),
                                     [&](const auto& s) { return m.derived.aliases.count(s.first) != 0; });
  cut.read_cands();
  cut.sift(steps, step_rows);
  if (cut.tb.json) {
    for (const Cand& c : cut.rest) out.absent.push_back({c.key, c.shapes, AbsentWhy::Missing, ""});
    out.missing = cut.rest.size();
  }
  if (!cut.rest.empty() && !cut.tb.json) {
    cut.read_keys();
    cut.choose_key();
    cut.classify();
  }
  std::sort(out.absent.begin(), out.absent.end(),
            [](const Absent& a, const Absent& b) { return a.key != b.key ? a.key < b.key : a.shapes < b.shapes; });
  return out;
}

std::string groups_may_be_cut(const Model& m) {
  const TableData& tb = *m.table;
  if (!tb.grouped() || m.by_shapes) return "";
  if (tb.top_level_only) return "printed with top_level_events_only=True";
  for (int c = kCudaTotal; c <= kFlops; ++c)
    if (ordered(tb, c)) return "sorted, so row_limit may have cut some of a name's groups";
  if (tb.rows.size() == 100) return "100 rows, the default row_limit: later groups may be cut";
  return "";
}

}  // namespace xb::vd
