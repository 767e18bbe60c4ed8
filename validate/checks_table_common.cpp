// Helpers the table checks share (checks_table_common.h).
#include "validate/checks_table_common.h"

#include <algorithm>
#include <set>

namespace xb::vd {

namespace {

/// Column a text table looks sorted by (non-increasing over its rows), for telling rows cut by
/// key_averages().table(row_limit=N) from missing ones. -1 when none.
int sort_column(const TableData& tb) {
  if (tb.json || tb.rows.size() < 2) return -1;
  auto value = [](const TableRowData& r, int c) {
    switch (c) {
      case 0:
        return r.cuda_total.ns;
      case 1:
        return r.self_cuda.ns;
      case 2:
        return r.cpu_total.ns;
      case 3:
        return r.self_cpu.ns;
      case 4:
        return static_cast<double>(r.calls);
      case 5:
        return r.cpu_avg.ns;
      case 6:
        return r.cuda_avg.ns;
      case 7:
        return r.cpu_mem;
      case 8:
        return r.self_cpu_mem;
      case 9:
        return r.dev_mem;
      case 10:
        return r.self_dev_mem;
      default:
        return r.flops;
    }
  };
  // Sort keys of key_averages().table(sort_by=...): the five the trace gives, then those it
  // does not (averages, memory, FLOPs).
  for (int c = 0; c < 12; ++c) {
    if ((c == 5 || c == 6) && !tb.has_avg) continue;
    if (c >= 7 && c <= 10 && !tb.has_mem) continue;
    if (c == 11 && !tb.has_flops) continue;
    bool ok = true, varies = false;
    for (std::size_t i = 1; i < tb.rows.size() && ok; ++i) {
      ok = value(tb.rows[i], c) <= value(tb.rows[i - 1], c) + 1e-9;
      varies = varies || value(tb.rows[i], c) != value(tb.rows[i - 1], c);
    }
    if (ok && varies) return c;
  }
  return -1;
}

/// Reason a (kind, name) of the trace may be absent from a text table: printed with a row_limit
/// and sorted by a column this name's value does not beat. "" when it should have been there.
std::string cut_by_row_limit(const TableData& tb, const Expected& e) {
  if (tb.top_level_only)
    return "the table was printed with key_averages().table(top_level_events_only=True): only rows whose events "
           "have no CPU parent are shown";
  const int c = sort_column(tb);
  if (c < 0 && tb.rows.size() == 100)
    return "the table has 100 rows, key_averages().table()'s default row_limit: rows past it are not printed";
  if (c < 0 && tb.rows.size() >= 1)
    return fmt::format(
        "the table's {} rows are in no order the validator can see (sort_by=None keeps first-seen order; "
        "a memory or FLOPs key without its column prints none): it was probably cut by "
        "key_averages().table(row_limit=...)",
        tb.rows.size());
  if (c < 0) return "";
  static const char* const cols[] = {"CUDA total",   "Self CUDA",    "CPU total",       "Self CPU",
                                     "# of Calls",   "CPU time avg", "CUDA time avg",   "CPU Mem",
                                     "Self CPU Mem", "device Mem",   "Self device Mem", "FLOPs"};
  if (c >= 5)
    return fmt::format(
        "the table is sorted by {}, which the validator does not derive from the trace, and shows {} rows: "
        "this name was probably cut by key_averages().table(row_limit=...)",
        cols[c], tb.rows.size());
  const double mine = c == 0   ? static_cast<double>(e.cuda_total)
                      : c == 1 ? static_cast<double>(e.self_cuda)
                      : c == 2 ? static_cast<double>(e.cpu_total)
                      : c == 3 ? static_cast<double>(e.self_cpu)
                               : static_cast<double>(e.calls);
  const TableRowData& last = tb.rows.back();
  const double theirs = c == 0   ? last.cuda_total.ns
                        : c == 1 ? last.self_cuda.ns
                        : c == 2 ? last.cpu_total.ns
                        : c == 3 ? last.self_cpu.ns
                                 : static_cast<double>(last.calls);
  if (mine > theirs + 0.5) return "";
  return fmt::format(
      "the table is sorted by {} and this name's ({}) does not exceed its last row's ({}): it was "
      "probably cut by key_averages().table(row_limit=...)",
      cols[c], num(mine), num(theirs));
}

}  // namespace

std::string print_time(double ns, double res) {
  if (res <= 0) return fmt::format("{} ns", static_cast<long long>(std::llround(ns)));
  const double u = ns / 1000.0;
  if (std::fabs(u) >= 1e6) return fmt::format("{:.3f}s", u / 1e6);
  if (std::fabs(u) >= 1e3) return fmt::format("{:.3f}ms", u / 1e3);
  return fmt::format("{:.3f}us", u);
}

std::vector<Absent> absent_rows(const Model& m) {
  std::vector<Absent> out;
  if (!m.table) return out;
  const TableData& tb = *m.table;
  std::set<RowKey> seen;
  for (const RowMatch& mt : m.matches)
    if (mt.matched) seen.insert(mt.key);
  const std::uint32_t steps = m.names.find("ProfilerStep*");
  const bool step_rows =
      std::any_of(seen.begin(), seen.end(), [&](const RowKey& k) { return m.derived.aliases.count(k) != 0; });
  std::size_t host_names = 0;  // names the trace gives rows (aliases of single steps left out)
  for (const auto& kv : m.derived.rows)
    if (!m.derived.aliases.count(kv.first)) ++host_names;
  for (const auto& kv : m.derived.rows) {
    const RowKey& k = kv.first;  // (not a structured binding: lambdas below capture it)
    const Expected& e = kv.second;
    if (seen.count(k) || m.derived.aliases.count(k)) continue;
    // Rows whose names the trace writes "unknown" stand for those events (match_renamed_rows).
    if (std::any_of(m.matches.begin(), m.matches.end(), [&](const RowMatch& mt) { return mt.renamed && mt.key == k; }))
      continue;
    if (step_rows && k.first == TraceCat::UserAnnotation && k.second == steps) continue;  // listed step by step
    // GPU-span rows: crossbench's tables never have them, and PyTorch's only for annotations its
    // trace has gpu_user_annotation events of.
    if (k.first == TraceCat::GpuUserAnnotation) {
      const auto shown = [&](std::uint32_t i) {
        const std::uint32_t n = m.A().ev(i).name;
        return (n < m.derived.disp.size() ? m.derived.disp[n] : n) == k.second;
      };
      if (tb.json || !m.A().t->format.empty() || std::none_of(m.A().span.begin(), m.A().span.end(), shown)) continue;
    }
    // An ambiguous cut row stands for one of several names: not absent.
    if (std::any_of(m.matches.begin(), m.matches.end(),
                    [&](const RowMatch& mt) { return mt.ambiguous && mt.key.first == k.first; }) &&
        tb.rows.size() == m.matches.size()) {
      bool covered = false;
      for (std::size_t i = 0; i < tb.rows.size() && !covered; ++i) {
        const auto& r = tb.rows[i];
        if (!m.matches[i].ambiguous || !r.cut) continue;
        const std::string prefix = r.name.substr(0, r.name.size() - 3);
        covered = m.names.str(k.second).compare(0, prefix.size(), prefix) == 0;
      }
      if (covered) continue;
    }
    std::string reason = tb.json ? std::string() : cut_by_row_limit(tb, e);
    // A PyTorch text table with fewer rows than its trace has names may have been cut by
    // row_limit under a sort key it does not show (flops or memory without their columns, or
    // sort_by=None: first-seen order), so an absent name proves nothing there.
    if (reason.empty() && !tb.json && m.A().t->format.empty() && tb.rows.size() < host_names)
      reason = fmt::format(
          "the table has {} rows for {} names of the trace: row_limit may have cut it under a sort key "
          "it does not show (flops, memory without its column, or sort_by=None)",
          tb.rows.size(), host_names);
    out.push_back({k, reason});
  }
  std::sort(out.begin(), out.end(), [](const Absent& a, const Absent& b) { return a.key < b.key; });
  return out;
}

std::string groups_may_be_cut(const Model& m) {
  const TableData& tb = *m.table;
  if (!tb.grouped()) return "";
  if (tb.top_level_only) return "printed with top_level_events_only=True";
  if (sort_column(tb) >= 0) return "sorted, so row_limit may have cut some of a name's groups";
  if (tb.rows.size() == 100) return "100 rows, the default row_limit: later groups may be cut";
  return "";
}

}  // namespace xb::vd
