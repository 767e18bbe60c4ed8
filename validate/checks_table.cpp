// kernel_stats, table_rows: the table against the traces (validate/checks.h); table_totals is in
// checks_table_totals.cpp, their shared helpers in checks_table_common.h.
#include "validate/checks.h"

#include <algorithm>
#include <map>
#include <set>

#include "common/stats.h"
#include "validate/checks_table_common.h"

namespace xb::vd {

// ---------------------------------------------------------------------------------------------
// Helpers of kernel_stats and table_rows

namespace {

/// A table row as the checks judge it. A table grouped by input shape whose trace carries Input
/// Dims is judged group by group (Model::by_shapes). Other grouped tables (group_by_stack_n with
/// a Source Location column, group_by_overload_name: key_averages' key is (name, ..., stack
/// frames / overload), which the trace does not carry) have one row per group; the groups of one
/// name partition its events, so their sums are the row the name would have ungrouped, and that
/// is what is compared with the trace.
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
    if (!tb.grouped() || m.by_shapes) {
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

/// The one not-judged line of a grouped table judged by name: why its groups cannot be.
void note_groups(const Model& m, CheckLog& log, const std::vector<NameRow>& rows) {
  const TableData& tb = *m.table;
  if (!tb.grouped() || m.by_shapes) return;
  std::size_t multi = 0;
  for (const NameRow& n : rows) multi += n.groups > 1;
  const std::string why =
      tb.has_stack ? "grouped by (name, Python stack) (key_averages(group_by_stack_n=N) with a Source Location "
                     "column): the Chrome trace carries no per-op stacks"
      : tb.has_overload
          ? "grouped by (name, overload name) (key_averages(group_by_overload_name=True)): the Chrome trace carries "
            "no overload names"
          : "grouped by (name, input shapes) (key_averages(group_by_input_shape=True)), but the trace carries no "
            "\"Input Dims\" (recorded without record_shapes=True)";
  log.not_judged(fmt::format("{} groups", tb.file),
                 fmt::format("the split of the names into groups: {}; {} rows, {} names with several groups; each "
                             "name's groups are summed and the sum compared with the trace",
                             why, tb.rows.size(), multi));
}

/// Subject of a row: the table line, and its group's input shapes when judged by group.
std::string row_subject(const Model& m, const TableRowData& r) {
  return m.by_shapes ? fmt::format("{} {}", m.table->where(r), r.input_shapes) : m.table->where(r);
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

/// One file's device rows: the table's, or a trace's.
struct Source {
  std::string file;
  std::map<RowKey, Stats> stats;
};

/// check_kernel_stats' state, one method per phase: the table's device rows (table_source), each
/// device name's presence in every file (judge_key) and its stats against the first file that
/// has it (compare_stats), and the summary (finish).
struct KernelStats {
  const Model& m;
  CheckLog& log;
  std::vector<Source> src;
  std::size_t first_trace = 0;
  std::map<RowKey, Absent> absent;  // device names the table lacks, and why
  std::size_t left_out = 0;         // by an option of table() (top_level_events_only, row_limit)
  TableCut cut;

  KernelStats(const Model& model, CheckLog& l) : m(model), log(l) {}

  void run() {
    if (m.table) src.push_back(table_source());
    first_trace = src.size();
    // Traces in file order trace_only, full when both are crossbench's (the historical order).
    const std::vector<const View*> views = report_order(m);
    for (const View* v : views) src.push_back({v->file(), device_stats(*v)});

    std::set<RowKey> keys;
    for (const auto& s : src)
      for (const auto& kv : s.stats) keys.insert(kv.first);
    if (keys.empty()) {
      if (device_not_recorded(m, log)) return;
      return log.not_run("", "no device activity (kernel, memcpy, memset) in the table or the traces");
    }

    cut = m.table ? table_cut(m) : TableCut{};
    for (const Absent& ab : cut.absent)
      if (is_device(ab.key.first)) absent.emplace(ab.key, ab);
    for (const RowKey& k : keys) judge_key(k);
    finish(keys.size());
  }

  Source table_source() {
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
    return s;
  }

  /// A device name in every file, its stats against the first file that has it.
  void judge_key(const RowKey& k) {
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
        if (ab != absent.end() && (ab->second.why == AbsentWhy::TopLevel || ab->second.why == AbsentWhy::RowLimit)) {
          ++left_out;
          continue;
        }
        if (ab != absent.end() && ab->second.why == AbsentWhy::Unknown) {
          log.not_run(subject, fmt::format("not in {}: {}", m.table->file, ab->second.reason));
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
      log.fail(subject, fmt::format("present in {}", files()),
               fmt::format("missing from {} (present in {})", missing, present),
               "a device activity name is in one file but not another");
    for (const auto& s : src) {
      if (&s == ref) continue;
      auto it = s.stats.find(k);
      if (it == s.stats.end()) continue;
      compare_stats(subject, *ref, *rs, s, it->second);
    }
  }

  void compare_stats(const std::string& subject, const Source& ref, const Stats& a, const Source& s, const Stats& b) {
    auto cmp = [&](const char* what, double x, double rx, double y, double ry) {
      if (!within(x, rx, y, ry))
        log.fail(
            subject, fmt::format("{} = {} ({})", what, num(x), ref.file),
            fmt::format("{} = {} ({})", what, num(y), s.file),
            fmt::format("{} differs between {} and {}{}", what, ref.file, s.file,
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

  /// Every file's name, comma-separated.
  std::string files() const {
    std::string all;
    for (const auto& s : src) all += (all.empty() ? "" : ", ") + s.file;
    return all;
  }

  void finish(std::size_t names) {
    const bool stats = !m.table || m.table->has_stats;
    log.pass_if_clean(
        fmt::format("{} device names", names),
        fmt::format("count, total{} identical in {}{}", stats ? ", median, min and max" : " and average", files(),
                    left_out ? fmt::format("; {} names not printed, as {} leaves them out", left_out, cut.options())
                             : std::string()));
    if (!m.table) log.not_run("table", "no table given: only the traces were compared");
    if (m.table && !m.table->has_stats)
      log.note("table",
               fmt::format("{} has no median/min/max columns: count, total and average compared", m.table->file));
    if (m.views.size() < 2) log.not_run("second trace", "one trace given: no second export to compare with");
  }
};

}  // namespace

void check_kernel_stats(const Model& m, CheckLog& log) { KernelStats(m, log).run(); }

// ---------------------------------------------------------------------------------------------
// table_rows

namespace {

/// check_table_rows' state, one method per phase: each row matched to the trace (judge_match),
/// its calls and times compared (compare_row, compare_col), the trace's rows the table lacks
/// and the summary (absent_rows).
struct TableRows {
  const Model& m;
  CheckLog& log;
  const TableData& tb;
  std::set<std::pair<RowKey, std::uint32_t>> seen;
  std::size_t compared = 0, cut = 0;
  std::string partial;
  bool device_cols = false;

  TableRows(const Model& model, CheckLog& l) : m(model), log(l), tb(*model.table) {}

  void run() {
    const std::vector<NameRow> judged = name_rows(m);
    note_groups(m, log, judged);
    partial = groups_may_be_cut(m);
    // The legacy profiler's device columns are cudaEvent times no trace carries: its rows' CPU
    // columns and calls are judged, their device columns not.
    device_cols = tb.has_cuda && m.legacy_device.empty();
    if (tb.has_cuda && !device_cols)
      log.not_judged(fmt::format("{} {} columns", tb.file, tb.device_label),
                     fmt::format("{}: Self {} and {} total of its rows are not compared with the trace (their CPU "
                                 "columns and calls are)",
                                 m.legacy_device, tb.device_label, tb.device_label));
    for (const NameRow& nr : judged) {
      const std::string where =
          nr.groups > 1 ? fmt::format("{} ({} groups summed)", tb.where(nr.row), nr.groups) : row_subject(m, nr.row);
      if (const Expected* ep = judge_match(nr, where)) compare_row(nr, where, *ep);
    }
    absent_rows();
  }

  /// The trace's events the row stands for, or null when the row is judged here already (or is
  /// a device row: kernel_stats).
  const Expected* judge_match(const NameRow& nr, const std::string& where) {
    const TableRowData& r = nr.row;
    const RowMatch& mt = nr.match;
    if (mt.renamed)
      // PyTorch's defect (causes::kNameWrittenUnknown): the row is still judged against the
      // trace's "unknown" events (match_renamed_rows).
      log.fail(where, fmt::format("events named '{}' in {}", r.name, m.A().file()),
               fmt::format("none: it writes them \"unknown\" ({} '{}')", to_string(mt.key.first),
                           m.names.str(mt.key.second)),
               "Kineto's JSON export writes a name with a character that is not printable ASCII as \"unknown\" "
               "(libkineto output_json.cpp sanitizeForNonReadableChars); PyTorch's table keeps the name. The row is "
               "judged against the trace's \"unknown\" events",
               causes::kNameWrittenUnknown);
    if (mt.ambiguous) {
      log.not_judged(where, mt.note);
      return nullptr;
    }
    if (!mt.matched) {
      const bool memory_row =
          r.name == "[memory]" || (r.cut && std::string("[memory]").rfind(r.name.substr(0, r.name.size() - 3), 0) == 0);
      if (!tb.json && memory_row) {
        // profile_memory: PyTorch's row of the [memory] instants inside no op (memory columns,
        // no time); the trace has them as "i" events, which the validator does not read.
        log.not_run(where,
                    "a [memory] row (profile_memory allocations outside any op): memory columns are not checked");
        return nullptr;
      }
      log.fail(where, "events of that name in " + m.A().file(), "none", mt.note);
      return nullptr;
    }
    if (!mt.note.empty() && !mt.renamed) ++cut;
    if (m.by_shapes && mt.shapes == kNone) {
      if (mt.shapes_note.find(" is cut") != std::string::npos)
        log.not_judged(where, mt.shapes_note);
      else
        log.fail(where, fmt::format("events of that name and input shapes in {}", m.A().file()), "none",
                 mt.shapes_note);
      return nullptr;
    }
    if (!seen.insert({mt.key, m.by_shapes ? mt.shapes : kNone}).second) {
      log.fail(where, m.by_shapes ? "one row per (name, kind, input shapes)" : "one row per (name, kind)",
               "duplicate row", fmt::format("{} has this row twice", tb.file));
      return nullptr;
    }
    if (is_device(mt.key.first)) return nullptr;  // kernel_stats
    const Expected* ep = m.expected(mt);
    if (!ep)
      log.fail(
          where,
          fmt::format("{} events named '{}' in {}", to_string(mt.key.first), m.names.str(mt.key.second), m.A().file()),
          "none", "the row names nothing in the trace");
    return ep;
  }

  /// A host/API/span row's placement, calls and times against the trace's events.
  void compare_row(const NameRow& nr, const std::string& where, const Expected& e) {
    const TableRowData& r = nr.row;
    const RowMatch& mt = nr.match;
    ++compared;
    const std::string subject = fmt::format("{} ({})", where, to_string(mt.key.first));
    if (tb.top_level_only && !tb.json && e.first_has_parent && m.A().t->format.empty() && nr.groups == 1 &&
        (!tb.grouped() || m.by_shapes)) {
      const TraceEvent& f = m.A().ev(e.first_ev);
      log.fail(subject, "no row: its first event has a CPU parent", "a row",
               fmt::format("printed with top_level_events_only=True, which prints only rows whose first event has no "
                           "CPU parent (_build_table), but its first event (ts {}) is nested in another",
                           ts_text(m.A(), f.start_ns)));
    }
    const auto um = m.derived.unmodelled.find(mt.key);
    const std::string* unmodelled = um != m.derived.unmodelled.end() ? &um->second : nullptr;
    if (r.calls < e.calls && !partial.empty())
      log.not_judged(subject,
                     fmt::format("a group sum below the trace's in a grouped table that is {}: # of Calls = {}, the "
                                 "trace's {}",
                                 partial, r.calls, e.calls));
    else if (r.calls != e.calls && unmodelled)
      log.not_judged(subject, fmt::format("{}: # of Calls = {} against {} events", *unmodelled, r.calls, e.calls));
    else if (r.calls != e.calls)
      log.fail(subject, fmt::format("# of Calls = {} (events in {})", e.calls, m.A().file()),
               fmt::format("{}", r.calls), "the row's call count is not the number of events");
    if (tb.has_cpu) {
      compare_col(subject, e, unmodelled, "Self CPU", r.self_cpu.ns, r.self_cpu.res_ns, e.self_cpu);
      compare_col(subject, e, unmodelled, "CPU total", r.cpu_total.ns, r.cpu_total.res_ns, e.cpu_total);
    }
    if (device_cols) {
      compare_col(subject, e, unmodelled, "Self CUDA", r.self_cuda.ns, r.self_cuda.res_ns, e.self_cuda,
                  e.ovh_self_cuda);
      compare_col(subject, e, unmodelled, "CUDA total", r.cuda_total.ns, r.cuda_total.res_ns, e.cuda_total,
                  e.ovh_cuda_total);
    }
  }

  /// One column of a row against the trace's sum; `unmodelled` is why the trace's sum is not
  /// modelled for this row, or null.
  void compare_col(const std::string& subject, const Expected& e, const std::string* unmodelled, const char* col,
                   double found, double res, std::int64_t want, std::int64_t ovh = 0) {
    if (within(found, res, static_cast<double>(want))) return;
    if (unmodelled) {
      log.not_judged(subject, fmt::format("{}: {} = {} against {} from the trace", *unmodelled, col,
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
      log.not_judged(subject,
                     fmt::format("a group sum below the trace's in a grouped table that is {}: {} = {}, the trace's {}",
                                 partial, col, print_time(found, res), print_time(static_cast<double>(want), res)));
      return;
    }
    if (ovh != 0 && within(found, res, static_cast<double>(want + ovh))) {
      // PyTorch's own defect: the overhead event took the External id of the op around it.
      const std::string k = e.ovh_kernel != kNone ? m.names.str(m.A().ev(e.ovh_kernel).name) : std::string("?");
      const std::string o = e.ovh_event != kNone ? m.names.str(m.A().ev(e.ovh_event).name) : std::string("?");
      log.fail(
          subject, fmt::format("{} = {} (the trace's kernels)", col, print_time(static_cast<double>(want), res)),
          fmt::format("{} = {}", col, print_time(found, res)),
          fmt::format("kernel '{}' counted again under overhead event '{}' ({} extra): PyTorch gives Kineto's overhead "
                      "events the External id of the op around them, so that op's kernels are counted twice",
                      k.size() > 60 ? k.substr(0, 57) + "..." : k, o, print_time(static_cast<double>(ovh), res)),
          causes::kOverheadDoubleCount);
      return;
    }
    log.fail(subject, fmt::format("{} = {} (from {})", col, print_time(static_cast<double>(want), res), m.A().file()),
             fmt::format("{} = {}", col, print_time(found, res)),
             fmt::format("the row's {} is not what the trace's events add up to", col));
  }

  /// Rows of the trace the table lacks (device names: kernel_stats): left out by an option of
  /// table(), or missing; then the summary.
  void absent_rows() {
    const TableCut tc = table_cut(m);
    std::size_t left_out = 0;
    for (const Absent& ab : tc.absent) {
      if (is_device(ab.key.first)) continue;
      const std::string subject =
          fmt::format("{} '{}'{}", to_string(ab.key.first), m.names.str(ab.key.second),
                      ab.shapes != kNone ? fmt::format(" {}", m.names.str(ab.shapes)) : std::string());
      if (ab.why == AbsentWhy::RowLimit || (ab.why == AbsentWhy::TopLevel && partial.empty())) {
        ++left_out;
        continue;
      }
      if (!partial.empty()) {
        log.not_judged(
            subject, fmt::format("in {} but not in the grouped table {}, which is {}", m.A().file(), tb.file, partial));
        continue;
      }
      if (ab.why == AbsentWhy::Unknown) {
        log.not_run(subject, fmt::format("in {} but not in {}: {}", m.A().file(), tb.file, ab.reason));
        continue;
      }
      log.fail(
          subject, fmt::format("a row in {}", tb.file), "none",
          fmt::format("{} has events of this name{}{}", m.A().file(), ab.shapes != kNone ? " and input shapes" : "",
                      ab.reason.empty() ? std::string() : fmt::format(" ({})", ab.reason)));
    }
    if (left_out != 0)
      log.note(tb.file, fmt::format("{} rows of {} (device rows included) are not printed, as PyTorch's _build_table "
                                    "leaves them out: {}",
                                    tc.top_level + tc.row_limit, m.A().file(), tc.counts()));
    log.pass_if_clean(fmt::format("{} rows", tb.rows.size()),
                      fmt::format("every row names {} of {}{}; {} host/API/span rows: calls, Self CPU, CPU total, Self "
                                  "CUDA and CUDA total equal the trace's (within the table's print resolution)",
                                  m.by_shapes ? "events (and input shapes) " : "events", m.A().file(),
                                  cut ? fmt::format(" ({} cut names matched by prefix)", cut) : "", compared));
  }
};

}  // namespace

void check_table_rows(const Model& m, CheckLog& log) {
  if (!m.table) return log.not_run("", "no table given");
  TableRows(m, log).run();
}

}  // namespace xb::vd
