// kernel_stats, table_rows, table_totals: the table against the traces and against itself
// (validate/checks.h).
#include "validate/checks.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "profiler/stats.h"

namespace xb::vd {

// ---------------------------------------------------------------------------------------------
// Helpers of the table checks

namespace {

std::string table_value(double ns, double res) {
  if (res <= 0) return num(ns) + " ns";
  return fmt::format("{} ns (printed to {} ns)", num(ns), num(res));
}

/// A time as the table prints it: PyTorch's _format_time (3 decimals of us, ms or s) for a text
/// table, integer ns for table.json (res 0).
std::string print_time(double ns, double res) {
  if (res <= 0) return fmt::format("{} ns", static_cast<long long>(std::llround(ns)));
  const double u = ns / 1000.0;
  if (std::fabs(u) >= 1e6) return fmt::format("{:.3f}s", u / 1e6);
  if (std::fabs(u) >= 1e3) return fmt::format("{:.3f}ms", u / 1e3);
  return fmt::format("{:.3f}us", u);
}

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

/// Rows the trace implies that a text table does not have, and whether each was plausibly cut
/// by row_limit (cut_by_row_limit's reason, "" when it should have been printed).
struct Absent {
  RowKey key;
  std::string cut_reason;
};
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

/// A table row as the checks judge it. A grouped table (group_by_input_shape, group_by_stack_n,
/// group_by_overload_name: key_averages' key is (name, ..., shapes / stack frames / overload))
/// has one row per group; the groups of one name partition its events, so their sums are the
/// row the name would have ungrouped, and that is what is compared with the trace (the
/// validator keys the trace by name only: per-group figures are not judged).
struct NameRow {
  TableRowData row;  ///< the first group's row with counts and times summed over the groups
  RowMatch match;
  std::size_t groups = 1;  ///< table rows summed
};
std::vector<NameRow> name_rows(const Model& m) {
  const TableData& tb = *m.table;
  std::vector<NameRow> out;
  std::map<std::pair<std::string, RowKey>, std::size_t> at;
  auto add = [](TableTime& a, const TableTime& b) {
    a.ns += b.ns;
    a.res_ns += b.res_ns;
  };
  for (std::size_t i = 0; i < tb.rows.size(); ++i) {
    const TableRowData& r = tb.rows[i];
    const RowMatch& mt = m.matches[i];
    if (!tb.grouped()) {
      out.push_back({r, mt, 1});
      continue;
    }
    const auto [it, fresh] = at.emplace(std::make_pair(r.name, mt.key), out.size());
    if (fresh) {
      out.push_back({r, mt, 1});
      continue;
    }
    NameRow& n = out[it->second];
    ++n.groups;
    n.row.calls += r.calls;
    add(n.row.self_cpu, r.self_cpu);
    add(n.row.cpu_total, r.cpu_total);
    add(n.row.self_cuda, r.self_cuda);
    add(n.row.cuda_total, r.cuda_total);
    const double c = n.row.calls > 0 ? static_cast<double>(n.row.calls) : 1.0;
    n.row.cpu_avg = {n.row.cpu_total.ns / c, n.row.cpu_total.res_ns / c};
    n.row.cuda_avg = {n.row.cuda_total.ns / c, n.row.cuda_total.res_ns / c};
  }
  return out;
}

/// Why a grouped table's sums of one name may fall short of the trace: groups cut by row_limit
/// or top_level_events_only. "" when the table shows every group.
std::string groups_may_be_cut(const Model& m) {
  const TableData& tb = *m.table;
  if (!tb.grouped()) return "";
  if (tb.top_level_only) return "printed with top_level_events_only=True";
  if (sort_column(tb) >= 0) return "sorted, so row_limit may have cut some of a name's groups";
  if (tb.rows.size() == 100) return "100 rows, the default row_limit: later groups may be cut";
  return "";
}

/// The one not-judged line of a grouped table: its groups are judged summed per name.
void note_groups(const Model& m, CheckLog& log, const std::vector<NameRow>& rows) {
  const TableData& tb = *m.table;
  if (!tb.grouped()) return;
  std::size_t multi = 0;
  for (const NameRow& n : rows) multi += n.groups > 1;
  const char* by = tb.has_shapes && tb.has_stack ? "(name, input shapes, stack)"
                   : tb.has_shapes               ? "(name, input shapes)"
                   : tb.has_stack                ? "(name, stack)"
                                                 : "(name, overload name)";
  log.not_judged(
      fmt::format("{} groups", tb.file),
      fmt::format("the split of a grouped table's names into {} groups (key_averages group_by_...; the validator "
                  "keys the trace's events by name only): {} rows, {} names with several groups; each name's groups "
                  "are summed and the sum compared with the trace",
                  by, tb.rows.size(), multi));
}

// ---------------------------------------------------------------------------------------------
// kernel_stats

struct Stats {
  double count = 0, total = 0, median = 0, min = 0, max = 0, avg = 0;
  double res_total = 0, res_median = 0, res_min = 0, res_max = 0, res_avg = 0;
  bool has_stats = true, has_avg = false;
};

std::map<RowKey, Stats> device_stats(const View& v) {
  std::unordered_map<RowKey, std::vector<std::int64_t>, RowKeyHash> durs;
  RowKey last{TraceCat::Sync, kNone};
  std::vector<std::int64_t>* bucket = nullptr;
  for (std::uint32_t i : v.dev) {
    const TraceEvent& e = v.ev(i);
    const RowKey k{e.cat, e.name};
    if (!bucket || k != last) {
      bucket = &durs[k];
      last = k;
    }
    bucket->push_back(e.dur_ns);
  }
  std::map<RowKey, Stats> out;
  for (auto& [k, d] : durs) {
    Stats s;
    s.count = static_cast<double>(d.size());
    std::int64_t total = 0, lo = d[0], hi = d[0];
    for (auto x : d) {
      total += x;
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
    s.total = static_cast<double>(total);
    s.min = static_cast<double>(lo);
    s.max = static_cast<double>(hi);
    s.median = median_of(std::move(d));
    s.avg = s.total / s.count;
    s.has_avg = true;
    out.emplace(k, s);
  }
  return out;
}

}  // namespace

void check_kernel_stats(const Model& m, CheckLog& log) {
  struct Source {
    std::string file;
    std::map<RowKey, Stats> stats;
  };
  std::vector<Source> src;
  if (m.table) {
    const TableData& tb = *m.table;
    Source s{tb.file, {}};
    for (const NameRow& nr : name_rows(m)) {
      const TableRowData& r = nr.row;
      const RowMatch& mt = nr.match;
      if (!is_device(mt.key.first) || (!mt.matched && !mt.ambiguous)) continue;
      if (mt.ambiguous) {
        log.not_judged(tb.where(r), mt.note + "; its count and times are not compared");
        continue;
      }
      const std::string subject = fmt::format("{} '{}'", to_string(mt.key.first), m.names.str(mt.key.second));
      if (s.stats.count(mt.key)) {
        log.fail(subject, fmt::format("one {} row per (name, kind)", tb.file), "duplicate row",
                 fmt::format("{} has the same device row twice", tb.file));
        continue;
      }
      Stats st;
      st.count = static_cast<double>(r.calls);
      st.total = r.self_cuda.ns;
      st.res_total = r.self_cuda.res_ns;
      st.has_stats = tb.has_stats;
      st.median = r.median.ns;
      st.res_median = r.median.res_ns;
      st.min = r.min.ns;
      st.res_min = r.min.res_ns;
      st.max = r.max.ns;
      st.res_max = r.max.res_ns;
      st.has_avg = tb.has_avg && !tb.json;
      st.avg = r.cuda_avg.ns;
      st.res_avg = r.cuda_avg.res_ns;
      s.stats.emplace(mt.key, st);
    }
    src.push_back(std::move(s));
  }
  const std::size_t first_trace = src.size();
  // Traces in file order trace_only, full when both are crossbench's (the historical order).
  const std::vector<const View*> views = report_order(m);
  for (const View* v : views) src.push_back({v->file(), device_stats(*v)});

  std::set<RowKey> keys;
  for (const auto& s : src)
    for (const auto& kv : s.stats) keys.insert(kv.first);
  if (keys.empty()) return log.not_run("", "no device activity (kernel, memcpy, memset) in the table or the traces");

  std::map<RowKey, std::string> absent;  // device names the table lacks -> row_limit reason
  for (const Absent& ab : absent_rows(m))
    if (is_device(ab.key.first)) absent.emplace(ab.key, ab.cut_reason);
  for (const RowKey& k : keys) {
    const std::string subject = fmt::format("{} '{}'", to_string(k.first), m.names.str(k.second));
    const Source* ref = nullptr;
    const Stats* rs = nullptr;
    std::string present, missing;
    for (std::size_t si = 0; si < src.size(); ++si) {
      const Source& s = src[si];
      auto it = s.stats.find(k);
      if (it == s.stats.end() && si == 0 && m.table && first_trace == 1) {
        auto ab = absent.find(k);
        if (ab == absent.end() && !m.table->json) continue;  // an ambiguous cut row stands for it
        if (ab != absent.end() && !ab->second.empty()) {
          log.not_run(subject, fmt::format("not in {}: {}", m.table->file, ab->second));
          continue;
        }
      }
      std::string& list = it == s.stats.end() ? missing : present;
      list += (list.empty() ? "" : ", ") + s.file;
      if (it != s.stats.end() && !ref) {
        ref = &s;
        rs = &it->second;
      }
    }
    if (!missing.empty())
      log.fail(subject,
               fmt::format("present in {}",
                           [&] {
                             std::string all;
                             for (const auto& s : src) all += (all.empty() ? "" : ", ") + s.file;
                             return all;
                           }()),
               fmt::format("missing from {} (present in {})", missing, present),
               "a device activity name is in one file but not another");
    for (const auto& s : src) {
      if (&s == ref) continue;
      auto it = s.stats.find(k);
      if (it == s.stats.end()) continue;
      const Stats& a = *rs;
      const Stats& b = it->second;
      auto cmp = [&](const char* what, double x, double rx, double y, double ry) {
        if (!within(x, rx, y, ry))
          log.fail(
              subject, fmt::format("{} = {} ({})", what, num(x), ref->file),
              fmt::format("{} = {} ({})", what, num(y), s.file),
              fmt::format("{} differs between {} and {}{}", what, ref->file, s.file,
                          rx + ry > 0 ? fmt::format(" beyond the print resolution ({} ns)", num((rx + ry) / 2)) : ""));
      };
      cmp("count", a.count, 0, b.count, 0);
      cmp("total_ns", a.total, a.res_total, b.total, b.res_total);
      if (a.has_stats && b.has_stats) {
        cmp("median_ns", a.median, a.res_median, b.median, b.res_median);
        cmp("min_ns", a.min, a.res_min, b.min, b.res_min);
        cmp("max_ns", a.max, a.res_max, b.max, b.res_max);
      } else if (a.has_avg && b.has_avg) {
        cmp("avg_ns", a.avg, a.res_avg, b.avg, b.res_avg);
      }
    }
  }
  std::string files;
  for (const auto& s : src) files += (files.empty() ? "" : ", ") + s.file;
  const bool stats = !m.table || m.table->has_stats;
  log.pass_if_clean(
      fmt::format("{} device names", keys.size()),
      fmt::format("count, total{} identical in {}", stats ? ", median, min and max" : " and average", files));
  if (!m.table) log.not_run("table", "no table given: only the traces were compared");
  if (m.table && !m.table->has_stats)
    log.note("table",
             fmt::format("{} has no median/min/max columns: count, total and average compared", m.table->file));
  if (m.views.size() < 2) log.not_run("second trace", "one trace given: no second export to compare with");
}

// ---------------------------------------------------------------------------------------------
// table_rows

void check_table_rows(const Model& m, CheckLog& log) {
  if (!m.table) return log.not_run("", "no table given");
  const TableData& tb = *m.table;
  std::set<RowKey> seen;
  std::size_t compared = 0, cut = 0;
  const std::vector<NameRow> judged = name_rows(m);
  note_groups(m, log, judged);
  const std::string partial = groups_may_be_cut(m);
  for (const NameRow& nr : judged) {
    const TableRowData& r = nr.row;
    const RowMatch& mt = nr.match;
    const std::string where =
        nr.groups > 1 ? fmt::format("{} ({} groups summed)", tb.where(r), nr.groups) : tb.where(r);
    if (mt.ambiguous) {
      log.not_judged(where, mt.note);
      continue;
    }
    if (!mt.matched) {
      const bool memory_row =
          r.name == "[memory]" || (r.cut && std::string("[memory]").rfind(r.name.substr(0, r.name.size() - 3), 0) == 0);
      if (!tb.json && memory_row) {
        // profile_memory: PyTorch's row of the [memory] instants inside no op (memory columns,
        // no time); the trace has them as "i" events, which the validator does not read.
        log.not_run(where,
                    "a [memory] row (profile_memory allocations outside any op): memory columns are not checked");
        continue;
      }
      log.fail(where, "events of that name in " + m.A().file(), "none", mt.note);
      continue;
    }
    if (!mt.note.empty()) ++cut;
    if (!seen.insert(mt.key).second) {
      log.fail(where, "one row per (name, kind)", "duplicate row", fmt::format("{} has this row twice", tb.file));
      continue;
    }
    if (is_device(mt.key.first)) continue;  // kernel_stats
    auto ex = m.derived.rows.find(mt.key);
    if (ex == m.derived.rows.end()) {
      log.fail(
          where,
          fmt::format("{} events named '{}' in {}", to_string(mt.key.first), m.names.str(mt.key.second), m.A().file()),
          "none", "the row names nothing in the trace");
      continue;
    }
    ++compared;
    const Expected& e = ex->second;
    const std::string subject = fmt::format("{} ({})", where, to_string(mt.key.first));
    const auto um = m.derived.unmodelled.find(mt.key);
    auto cmp = [&](const char* col, double found, double res, std::int64_t want, std::int64_t ovh = 0) {
      if (within(found, res, static_cast<double>(want))) return;
      if (um != m.derived.unmodelled.end()) {
        log.not_judged(subject, fmt::format("{}: {} = {} against {} from the trace", um->second, col,
                                            print_time(found, res), print_time(static_cast<double>(want), res)));
        return;
      }
      if (col == std::string("Self CPU") && m.A().t->python_functions > 0 && m.A().t->format.empty()) {
        log.not_judged(
            subject,
            fmt::format("a range's Self CPU in a trace with python_function events (with_stack; PyTorch "
                        "2.11 leaves them out of the tree, later versions nest ranges' time under "
                        "them, and the trace does not say which made it): Self CPU = {} against {} "
                        "from the trace, {} python_function events",
                        print_time(found, res), print_time(static_cast<double>(want), res), m.A().t->python_functions));
        return;
      }
      if (!partial.empty() && found < static_cast<double>(want)) {
        log.not_judged(
            subject, fmt::format("a group sum below the trace's in a grouped table that is {}: {} = {}, the trace's {}",
                                 partial, col, print_time(found, res), print_time(static_cast<double>(want), res)));
        return;
      }
      if (ovh != 0 && within(found, res, static_cast<double>(want + ovh))) {
        // PyTorch's own defect: the overhead event took the External id of the op around it.
        const std::string k = e.ovh_kernel != kNone ? m.names.str(m.A().ev(e.ovh_kernel).name) : std::string("?");
        const std::string o = e.ovh_event != kNone ? m.names.str(m.A().ev(e.ovh_event).name) : std::string("?");
        log.fail(subject, fmt::format("{} = {} (the trace's kernels)", col, print_time(static_cast<double>(want), res)),
                 fmt::format("{} = {}", col, print_time(found, res)),
                 fmt::format(
                     "kernel '{}' counted again under overhead event '{}' ({} extra): PyTorch gives Kineto's overhead "
                     "events the External id of the op around them, so that op's kernels are counted twice",
                     k.size() > 60 ? k.substr(0, 57) + "..." : k, o, print_time(static_cast<double>(ovh), res)),
                 causes::kOverheadDoubleCount);
        return;
      }
      log.fail(subject, fmt::format("{} = {} (from {})", col, print_time(static_cast<double>(want), res), m.A().file()),
               fmt::format("{} = {}", col, print_time(found, res)),
               fmt::format("the row's {} is not what the trace's events add up to", col));
    };
    if (r.calls < e.calls && !partial.empty())
      log.not_judged(subject,
                     fmt::format("a group sum below the trace's in a grouped table that is {}: # of Calls = {}, the "
                                 "trace's {}",
                                 partial, r.calls, e.calls));
    else if (r.calls != e.calls && um != m.derived.unmodelled.end())
      log.not_judged(subject, fmt::format("{}: # of Calls = {} against {} events", um->second, r.calls, e.calls));
    else if (r.calls != e.calls)
      log.fail(subject, fmt::format("# of Calls = {} (events in {})", e.calls, m.A().file()),
               fmt::format("{}", r.calls), "the row's call count is not the number of events");
    if (tb.has_cpu) {
      cmp("Self CPU", r.self_cpu.ns, r.self_cpu.res_ns, e.self_cpu);
      cmp("CPU total", r.cpu_total.ns, r.cpu_total.res_ns, e.cpu_total);
    }
    if (tb.has_cuda) {
      cmp("Self CUDA", r.self_cuda.ns, r.self_cuda.res_ns, e.self_cuda, e.ovh_self_cuda);
      cmp("CUDA total", r.cuda_total.ns, r.cuda_total.res_ns, e.cuda_total, e.ovh_cuda_total);
    }
  }
  // Names of the trace without a row (device names: kernel_stats).
  std::size_t cut_rows = 0;
  for (const Absent& ab : absent_rows(m)) {
    if (is_device(ab.key.first)) continue;
    const std::string subject = fmt::format("{} '{}'", to_string(ab.key.first), m.names.str(ab.key.second));
    const std::string grouped_cut = ab.cut_reason.empty() ? groups_may_be_cut(m) : std::string();
    if (!grouped_cut.empty()) {
      log.not_judged(subject, fmt::format("in {} but not in the grouped table {}, which is {}", m.A().file(), tb.file,
                                          grouped_cut));
      continue;
    }
    if (!ab.cut_reason.empty()) {
      ++cut_rows;
      log.not_run(subject, fmt::format("in {} but not in {}: {}", m.A().file(), tb.file, ab.cut_reason));
      continue;
    }
    log.fail(subject, fmt::format("a row in {}", tb.file), "none",
             fmt::format("{} has events of this name", m.A().file()));
  }
  log.pass_if_clean(
      fmt::format("{} rows", tb.rows.size()),
      fmt::format("every row names events of {}{}; {} host/API/span rows: calls, Self CPU, CPU total, Self "
                  "CUDA and CUDA total equal the trace's (within the table's print resolution)",
                  m.A().file(), cut ? fmt::format(" ({} cut names matched by prefix)", cut) : "", compared));
}

// ---------------------------------------------------------------------------------------------
// table_totals

void check_table_totals(const Model& m, const ValidateOptions& opts, CheckLog& log) {
  if (!m.table) return log.not_run("", "no table given");
  const TableData& tb = *m.table;
  const auto& rows = tb.rows;
  const double cpu_t = tb.self_cpu_total.ns, cpu_res = tb.self_cpu_total.res_ns;
  const double cuda_t = tb.self_cuda_total.ns, cuda_res = tb.self_cuda_total.res_ns;
  auto kind_of = [&](std::size_t i) -> std::optional<TraceCat> {
    const RowMatch& mt = m.matches[i];
    if (mt.matched || mt.ambiguous) return mt.key.first;
    return std::nullopt;
  };
  /// Tolerance of a printed percentage of value v (res rv) over total t (res rt).
  auto pct_tol = [&](const TablePct& p, double v, double rv, double t, double rt) {
    if (tb.json) return opts.pct_tol;
    return p.res / 2 + (t > 0 ? 100.0 * (rv / 2) / t + 100.0 * std::fabs(v) * (rt / 2) / (t * t) : 0) + 1e-9;
  };
  std::size_t unknown = 0;
  double dev_sum = 0, dev_res = 0, dev_pct = 0, dev_pct_tol = 0;
  double rng_sum = 0, rng_res = 0;
  double cpu_sum = 0, cpu_sum_res = 0, cpu_pct = 0, cpu_pct_tol = 0;
  std::size_t dev_rows = 0, rng_rows = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const TableRowData& r = rows[i];
    const std::string where = tb.where(r);
    const auto kind = kind_of(i);
    if (!kind) ++unknown;
    if (tb.has_cpu) {
      cpu_sum += r.self_cpu.ns;
      cpu_sum_res += r.self_cpu.res_ns;
      cpu_pct += r.self_cpu_pct.pct;
      cpu_pct_tol += tb.json ? 0 : r.self_cpu_pct.res / 2;
    }
    if (kind && is_device(*kind)) {
      ++dev_rows;
      dev_sum += r.self_cuda.ns;
      dev_res += r.self_cuda.res_ns;
      dev_pct += r.self_cuda_pct.pct;
      dev_pct_tol += tb.json ? 0 : r.self_cuda_pct.res / 2;
    } else if (kind && is_range(*kind)) {
      ++rng_rows;
      rng_sum += r.self_cuda.ns;
      rng_res += r.self_cuda.res_ns;
    }
    // Per row: percentages of their totals, none above 100.
    auto pct_check = [&](const char* col, const TablePct& p, double v, double rv, double t, double rt, bool has) {
      if (!has || p.async_zero) return;  // an async event's CPU total % prints as 0: no value to check
      if (p.nan) {
        if (t != 0)
          log.fail(where, fmt::format("{} = 100 * {} / {}", col, num(v), num(t)), "NaN",
                   fmt::format("{} is NaN though its total is not 0", col));
        return;
      }
      const double tol = pct_tol(p, v, rv, t, rt);
      if (p.pct > 100.0 + tol && !tb.json && col == std::string("CPU total %")) {
        // PyTorch's CPU total of a row counts every event of its name, also events nested in one
        // another (a recursive range, a same-name range with other children): over the Self CPU
        // total that can exceed 100%. The value itself is judged by table_rows.
        log.note(where,
                 fmt::format("CPU total % is {:.2f}%: the row's events nest in one another and each level counts "
                             "(PyTorch's arithmetic, not an inconsistency)",
                             p.pct));
      } else if (p.pct > 100.0 + tol) {
        const bool span = kind && *kind == TraceCat::GpuUserAnnotation && col == std::string("Self CUDA %");
        log.fail(where, fmt::format("{} <= 100%", col),
                 fmt::format("{:.2f}% (= 100 x {} / {})", p.pct, print_time(v, rv), print_time(t, rt)),
                 span
                     ? std::string("row above 100%: the annotation's GPU span is counted as Self CUDA (pytorch#130730)")
                     : fmt::format("row above 100%: its {} exceeds the column's total",
                                   col == std::string("Self CUDA %")  ? "Self CUDA"
                                   : col == std::string("Self CPU %") ? "Self CPU"
                                                                      : "CPU total"),
                 span ? causes::kAnnotationSpan : "");
      }
      if (t > 0) {
        const double want = 100.0 * v / t;
        if (std::fabs(want - p.pct) > tol)
          log.fail(where, fmt::format("{} = 100 * {} / {} = {}", col, num(v), num(t), num(want)),
                   fmt::format("{}%", num(p.pct)), fmt::format("{} does not match its value over the total", col));
      }
    };
    if (tb.has_pct) {
      pct_check("Self CPU %", r.self_cpu_pct, r.self_cpu.ns, r.self_cpu.res_ns, cpu_t, cpu_res,
                tb.has_cpu && tb.has_self_cpu_total);
      pct_check("CPU total %", r.cpu_total_pct, r.cpu_total.ns, r.cpu_total.res_ns, cpu_t, cpu_res,
                tb.has_cpu && tb.has_self_cpu_total);
      pct_check("Self CUDA %", r.self_cuda_pct, r.self_cuda.ns, r.self_cuda.res_ns, cuda_t, cuda_res,
                tb.has_cuda && tb.has_self_cuda_total);
    }
    // Averages.
    if (tb.has_avg && r.calls > 0) {
      const double c = static_cast<double>(r.calls);
      if (tb.has_cpu && !within(r.cpu_avg.ns, r.cpu_avg.res_ns, r.cpu_total.ns / c, r.cpu_total.res_ns / c))
        log.fail(where,
                 fmt::format("CPU time avg = {} / {} = {} ns", num(r.cpu_total.ns), r.calls, num(r.cpu_total.ns / c)),
                 table_value(r.cpu_avg.ns, r.cpu_avg.res_ns), "CPU time avg is not CPU total / # of Calls");
      if (tb.has_cuda && !within(r.cuda_avg.ns, r.cuda_avg.res_ns, r.cuda_total.ns / c, r.cuda_total.res_ns / c))
        log.fail(
            where,
            fmt::format("CUDA time avg = {} / {} = {} ns", num(r.cuda_total.ns), r.calls, num(r.cuda_total.ns / c)),
            table_value(r.cuda_avg.ns, r.cuda_avg.res_ns), "CUDA time avg is not CUDA total / # of Calls");
    }
    // Self <= total, and the shape of each kind's row.
    if (tb.has_cpu && r.self_cpu.ns > r.cpu_total.ns + (r.self_cpu.res_ns + r.cpu_total.res_ns) / 2 + 1e-6)
      log.fail(where, fmt::format("Self CPU <= CPU total ({} ns)", num(r.cpu_total.ns)),
               table_value(r.self_cpu.ns, r.self_cpu.res_ns), "Self CPU above CPU total");
    if (tb.has_cuda && r.self_cuda.ns > r.cuda_total.ns + (r.self_cuda.res_ns + r.cuda_total.res_ns) / 2 + 1e-6)
      log.fail(where, fmt::format("Self CUDA <= CUDA total ({} ns)", num(r.cuda_total.ns)),
               table_value(r.self_cuda.ns, r.self_cuda.res_ns), "Self CUDA above CUDA total");
    if (kind && device_side(*kind)) {
      if (tb.has_cuda && !within(r.self_cuda.ns, r.self_cuda.res_ns, r.cuda_total.ns, r.cuda_total.res_ns))
        log.fail(where, fmt::format("CUDA total = Self CUDA = {} ns", num(r.self_cuda.ns)),
                 table_value(r.cuda_total.ns, r.cuda_total.res_ns),
                 "a device row's Self CUDA and CUDA total must be equal");
      if (tb.has_cpu && (r.self_cpu.ns != 0 || r.cpu_total.ns != 0))
        log.fail(where, "CPU columns 0",
                 fmt::format("Self CPU {} ns, CPU total {} ns", num(r.self_cpu.ns), num(r.cpu_total.ns)),
                 "a device row has no CPU time");
    } else if (kind && is_api(*kind)) {
      if (tb.has_cuda && (r.self_cuda.ns != 0 || r.cuda_total.ns != 0)) {
        // An overhead event nested in the API call took the External id of its op: PyTorch's defect.
        const Expected* ex = nullptr;
        if (m.matches[i].matched)
          if (auto it = m.derived.rows.find(m.matches[i].key); it != m.derived.rows.end()) ex = &it->second;
        const bool ovh = ex && ex->ovh_cuda_total > 0 &&
                         within(r.cuda_total.ns, r.cuda_total.res_ns, static_cast<double>(ex->ovh_cuda_total)) &&
                         within(r.self_cuda.ns, r.self_cuda.res_ns, 0);
        log.fail(where, "CUDA columns 0",
                 fmt::format("Self CUDA {}, CUDA total {}", print_time(r.self_cuda.ns, r.self_cuda.res_ns),
                             print_time(r.cuda_total.ns, r.cuda_total.res_ns)),
                 ovh ? fmt::format("an API call row carries device time: overhead event '{}' nested in it took the "
                                   "External id of the "
                                   "op around it, so that op's kernels are counted again",
                                   m.names.str(m.A().ev(ex->ovh_event).name))
                     : std::string("an API call row has no device time of its own"),
                 ovh ? causes::kOverheadDoubleCount : "");
      }
    }
  }
  // A table cut by row_limit lacks rows: its sums cannot reach the totals.
  std::size_t cut = 0;
  for (const Absent& ab : absent_rows(m)) cut += !ab.cut_reason.empty();
  if (cut == 0 && !groups_may_be_cut(m).empty()) {
    cut = 1;
    log.not_judged("sums over rows",
                   fmt::format("{} is grouped and {}: sums over its rows are not compared with its totals", tb.file,
                               groups_may_be_cut(m)));
  }
  if (cut != 0)
    log.not_run("sums over rows", fmt::format("{} lacks {} rows of the trace that key_averages().table(row_limit=...) "
                                              "probably cut, so sums over its rows are not compared with its totals",
                                              tb.file, cut));
  // Self CUDA per kind of row.
  if (cut == 0 && tb.has_cuda && tb.has_self_cuda_total) {
    if (dev_rows > 0 && !within(dev_sum, dev_res, cuda_t, cuda_res))
      log.fail("Self CUDA over device rows", fmt::format("{} (Self CUDA total)", table_value(cuda_t, cuda_res)),
               fmt::format("{} (sum of {} device rows' Self CUDA)", num(dev_sum), dev_rows),
               "Self CUDA total is not the sum of the device rows (kernels, memcpy, memset)");
    if (dev_rows > 0 && cuda_t > 0 && tb.has_pct &&
        std::fabs(dev_pct - 100.0) > (tb.json ? opts.pct_tol : dev_pct_tol + 1e-9))
      log.fail("Self CUDA % over device rows", fmt::format("100 +- {}", num(tb.json ? opts.pct_tol : dev_pct_tol)),
               num(dev_pct), "device rows' Self CUDA % does not sum to 100");
    if (m.derived.unattributed == 0 && rng_rows > 0) {
      if (!within(rng_sum, rng_res, cuda_t, cuda_res))
        log.fail("Self CUDA over host range rows", fmt::format("{} (Self CUDA total)", table_value(cuda_t, cuda_res)),
                 fmt::format("{} (sum of {} host range rows)", num(rng_sum), rng_rows),
                 "every device activity was launched inside a host range, so the host ranges' Self CUDA must add up to "
                 "the total");
    }
  }
  // Self CPU over all rows.
  if (cut == 0 && tb.has_cpu && tb.has_self_cpu_total) {
    if (!within(cpu_sum, cpu_sum_res, cpu_t, cpu_res))
      log.fail("Self CPU over all rows", fmt::format("{} (Self CPU time total)", table_value(cpu_t, cpu_res)),
               num(cpu_sum), "Self CPU total is not the sum of the rows' Self CPU");
    if (tb.has_pct && cpu_t > 0 && std::fabs(cpu_pct - 100.0) > (tb.json ? opts.pct_tol * 10 : cpu_pct_tol + 1e-9))
      log.fail("Self CPU % over all rows", fmt::format("100 +- {}", num(tb.json ? opts.pct_tol * 10 : cpu_pct_tol)),
               num(cpu_pct), "rows' Self CPU % does not sum to 100");
  }
  // Parent rows' totals >= their children's, with children found through the trace's nesting;
  // only child names whose every instance has one parent name.
  std::map<RowKey, std::vector<std::size_t>> children_of;
  std::map<RowKey, std::size_t> row_of;
  for (std::size_t i = 0; i < rows.size() && !tb.grouped(); ++i)
    if (m.matches[i].matched) row_of.emplace(m.matches[i].key, i);
  if (tb.grouped())
    log.not_judged("parent/child rows",
                   fmt::format("{} has one row per group, not per name: parent and child totals are "
                               "not ordered group by group",
                               tb.file));
  for (const auto& [child, ps] : m.derived.parents) {
    if (ps.size() != 1 || ps.begin()->second == kNone || *ps.begin() == child) continue;
    auto c = row_of.find(child);
    if (c == row_of.end()) continue;
    children_of[*ps.begin()].push_back(c->second);
  }
  std::size_t links = 0;
  for (const auto& [parent, kids] : children_of) {
    auto p = row_of.find(parent);
    if (p == row_of.end()) continue;
    const TableRowData& pr = rows[p->second];
    double cuda = 0, cuda_r = pr.cuda_total.res_ns, cpu = 0, cpu_r = pr.cpu_total.res_ns;
    std::string names;
    for (std::size_t k : kids) {
      cuda += rows[k].cuda_total.ns;
      cuda_r += rows[k].cuda_total.res_ns;
      cpu += rows[k].cpu_total.ns;
      cpu_r += rows[k].cpu_total.res_ns;
      names += (names.empty() ? "'" : ", '") + rows[k].name + "'";
    }
    links += kids.size();
    if (tb.has_cuda && pr.cuda_total.ns + cuda_r / 2 + 1e-6 < cuda)
      log.fail(fmt::format("{} > {}", tb.where(pr), names),
               fmt::format("parent CUDA total >= its children's sum, {} ns", num(cuda)),
               table_value(pr.cuda_total.ns, pr.cuda_total.res_ns),
               "a parent row's CUDA total is below the sum of its children's");
    if (tb.has_cpu && pr.cpu_total.ns + cpu_r / 2 + 1e-6 < cpu)
      log.fail(fmt::format("{} > {}", tb.where(pr), names),
               fmt::format("parent CPU total >= its children's sum, {} ns", num(cpu)),
               table_value(pr.cpu_total.ns, pr.cpu_total.res_ns),
               "a parent row's CPU total is below the sum of its children's");
  }
  if (tb.has_cuda && tb.has_self_cuda_total && cuda_t > 0) {
    double span_sum = 0, api_sum = 0, all_sum = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      all_sum += rows[i].self_cuda.ns;
      const auto kind = kind_of(i);
      if (kind && *kind == TraceCat::GpuUserAnnotation) span_sum += rows[i].self_cuda.ns;
      if (kind && is_api(*kind)) api_sum += rows[i].self_cuda.ns;
    }
    auto pc = [&](double x) { return fmt::format("{:.2f}%", 100.0 * x / cuda_t); };
    std::string parts =
        fmt::format("device rows {} ({}), host range rows {} ({})", us(dev_sum), pc(dev_sum), us(rng_sum), pc(rng_sum));
    if (span_sum > 0) parts += fmt::format(", annotation GPU-span rows {} ({})", us(span_sum), pc(span_sum));
    if (api_sum > 0) parts += fmt::format(", API rows {} ({})", us(api_sum), pc(api_sum));
    log.note("Self CUDA by kind of row", fmt::format("Self CUDA total {}; the column sums to {} over all rows ({}): {}",
                                                     us(cuda_t), us(all_sum), pc(all_sum), parts));
  }
  log.pass_if_clean(
      tb.file,
      fmt::format("Self CUDA total = sum of {} device rows{}; Self CPU total = sum of the rows; "
                  "percentages and averages match their values; no row above 100%; {} parent/child "
                  "row links ordered",
                  dev_rows, m.derived.unattributed == 0 && rng_rows ? " = sum of the host range rows" : "", links));
  if (m.derived.unattributed != 0)
    log.not_run("Self CUDA over host range rows",
                fmt::format("{} device activities in {} have no host range, so host ranges' Self CUDA need not add up "
                            "to the total",
                            m.derived.unattributed, m.A().file()));
  if (unknown != 0)
    log.note(tb.file, fmt::format("{} rows of unknown kind are left out of the per-kind sums", unknown));
}

}  // namespace xb::vd
