// table_totals: the table against itself and the trace's device time (validate/checks.h).
#include "validate/checks.h"

#include <map>
#include <optional>

#include "validate/checks_table_common.h"

namespace xb::vd {

namespace {

std::string table_value(double ns, double res) {
  if (res <= 0) return num(ns) + " ns";
  return fmt::format("{} ns (printed to {} ns)", num(ns), num(res));
}

/// True when the table's footers can be judged against the trace instead of its rows: a PyTorch
/// text table with its own trace.
bool footers_from_trace(const Model& m) { return !m.table->json && m.A().t->format.empty(); }

/// The footers of a table whose rows cannot sum to them (`why`: rows left out, or groups that may
/// be) against the trace: PyTorch's _build_table sums every row, printed or not, so the Self CPU
/// time total is the trace's (Derived::self_cpu_total) and the Self CUDA time total its device
/// time.
void check_footers(const Model& m, const std::string& why, CheckLog& log) {
  const TableData& tb = *m.table;
  if (!footers_from_trace(m)) {
    log.not_run("sums over rows",
                fmt::format("{} {}, so sums over its rows are not compared with its totals", tb.file, why));
    return;
  }
  std::string lenient;  // a construct that makes the trace's Self CPU total uncertain
  if (!m.derived.unmodelled.empty())
    lenient = m.derived.unmodelled.begin()->second;
  else if (m.A().t->python_functions > 0)
    lenient =
        "a trace with python_function events (with_stack; later PyTorch versions nest ranges under them, and "
        "the trace does not say which made it)";
  std::size_t judged = 0, agree = 0;
  const auto footer = [&](const char* what, const TableTime& t, std::int64_t want, const std::string& unsure) {
    const std::string theirs = print_time(static_cast<double>(want), t.res_ns);
    if (within(t.ns, t.res_ns, static_cast<double>(want))) {
      ++judged;
      ++agree;
    } else if (!unsure.empty()) {
      log.not_judged(
          what, fmt::format("{}: {} = {} against {} from the trace", unsure, what, print_time(t.ns, t.res_ns), theirs));
    } else {
      ++judged;
      log.fail(what, fmt::format("{} (the trace's, over every row)", theirs), print_time(t.ns, t.res_ns),
               fmt::format("{} is not the trace's: PyTorch sums it over every row, also those the table does not "
                           "show ({} {})",
                           what, tb.file, why));
    }
  };
  if (tb.has_self_cpu_total) footer("Self CPU time total", tb.self_cpu_total, m.derived.self_cpu_total, lenient);
  if (tb.has_self_cuda_total) footer("Self CUDA time total", tb.self_cuda_total, m.derived.self_cuda_total, "");
  if (judged != 0 && agree == judged)
    log.note("totals", fmt::format("{} {}; its {} the trace's, summed over every row as _build_table does", tb.file,
                                   why, judged == 2 ? "two totals are" : "total is"));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// table_totals

namespace {

/// check_table_totals' phases, one method each, over the sums the per-row pass collects.
struct TotalsCheck {
  const Model& m;
  const ValidateOptions& opts;
  CheckLog& log;
  const TableData& tb;
  const std::vector<TableRowData>& rows;
  const double cpu_t, cpu_res, cuda_t, cuda_res;
  std::size_t unknown = 0;
  double dev_sum = 0, dev_res = 0, dev_pct = 0, dev_pct_tol = 0;
  double rng_sum = 0, rng_res = 0;
  double cpu_sum = 0, cpu_sum_res = 0, cpu_pct = 0, cpu_pct_tol = 0;
  std::size_t dev_rows = 0, rng_rows = 0;

  TotalsCheck(const Model& m_, const ValidateOptions& opts_, CheckLog& log_)
      : m(m_),
        opts(opts_),
        log(log_),
        tb(*m_.table),
        rows(tb.rows),
        cpu_t(tb.self_cpu_total.ns),
        cpu_res(tb.self_cpu_total.res_ns),
        cuda_t(tb.self_cuda_total.ns),
        cuda_res(tb.self_cuda_total.res_ns) {}

  std::optional<TraceCat> kind_of(std::size_t i) const {
    const RowMatch& mt = m.matches[i];
    if (mt.matched || mt.ambiguous) return mt.key.first;
    return std::nullopt;
  }
  /// Tolerance of a printed percentage of value v (res rv) over total t (res rt).
  double pct_tol(const TablePct& p, double v, double rv, double t, double rt) const {
    if (tb.json) return opts.pct_tol;
    return p.res / 2 + (t > 0 ? 100.0 * (rv / 2) / t + 100.0 * std::fabs(v) * (rt / 2) / (t * t) : 0) + 1e-9;
  }
  /// What the trace implies for row i (nullptr when it is not matched to one trace name).
  const Expected* expected_of(std::size_t i) const {
    if (!m.matches[i].matched) return nullptr;
    const auto it = m.derived.rows.find(m.matches[i].key);
    return it != m.derived.rows.end() ? &it->second : nullptr;
  }

  void run() {
    for (std::size_t i = 0; i < rows.size(); ++i) check_row(i);
    // A table that lacks rows (top_level_events_only, row_limit) cannot sum to its totals; its
    // totals are over every row, printed or not (_build_table), so they are the trace's.
    const TableCut tc = table_cut(m);
    const std::string grouped = groups_may_be_cut(m);
    std::size_t cut = tc.cut();
    if (cut == 0 && !grouped.empty()) {
      cut = 1;
      log.not_judged("sums over rows", fmt::format("{} is grouped and {}: sums over its rows are not compared with "
                                                   "its totals",
                                                   tb.file, grouped));
    }
    if (cut != 0)
      check_footers(m,
                    tc.cut() != 0 ? fmt::format("lacks {} rows of the trace ({})", tc.cut(), tc.options())
                                  : fmt::format("is grouped and {}", grouped),
                    log);
    if (cut == 0) check_sums();
    const std::size_t links = check_parents();
    note_self_cuda_by_kind();
    finish(cut, links);
  }

  /// One row: adds it to the sums, then checks its percentages, averages and shape.
  void check_row(std::size_t i) {
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
    if (tb.has_pct) {
      check_pct(i, where, "Self CPU %", r.self_cpu_pct, r.self_cpu.ns, r.self_cpu.res_ns, cpu_t, cpu_res,
                tb.has_cpu && tb.has_self_cpu_total);
      check_pct(i, where, "CPU total %", r.cpu_total_pct, r.cpu_total.ns, r.cpu_total.res_ns, cpu_t, cpu_res,
                tb.has_cpu && tb.has_self_cpu_total);
      check_pct(i, where, "Self CUDA %", r.self_cuda_pct, r.self_cuda.ns, r.self_cuda.res_ns, cuda_t, cuda_res,
                tb.has_cuda && tb.has_self_cuda_total);
    }
    check_row_values(i, where);
  }

  // Per row: percentages of their totals, none above 100.
  void check_pct(std::size_t i, const std::string& where, const char* col, const TablePct& p, double v, double rv,
                 double t, double rt, bool has) {
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
      log.note(where, fmt::format("CPU total % is {:.2f}%: the row's events nest in one another and each level counts "
                                  "(PyTorch's arithmetic, not an inconsistency)",
                                  p.pct));
    } else if (p.pct > 100.0 + tol) {
      const auto kind = kind_of(i);
      const bool self_cuda = col == std::string("Self CUDA %");
      const bool span = kind && *kind == TraceCat::GpuUserAnnotation && self_cuda;
      // An overhead row's Self CUDA holds the kernels of the op around its events a second time
      // (causes::kOverheadDoubleCount; the Self CUDA total does not): the percentage inflated
      // by them is that defect's when the row without them stays within 100%.
      const Expected* ex = self_cuda && !span ? expected_of(i) : nullptr;
      const bool ovh = ex && ex->ovh_self_cuda > 0 && t > 0 &&
                       100.0 * (v - static_cast<double>(ex->ovh_self_cuda)) / t <= 100.0 + tol;
      std::string why;
      if (span)
        why = "row above 100%: the annotation's GPU span is counted as Self CUDA (pytorch#130730)";
      else if (ovh)
        why = fmt::format(
            "row above 100%: its Self CUDA counts {} of kernels a second time under overhead event '{}' (PyTorch "
            "gives it the External id of the op around it); without them it is {:.2f}%",
            print_time(static_cast<double>(ex->ovh_self_cuda), rv), m.names.str(m.A().ev(ex->ovh_event).name),
            100.0 * (v - static_cast<double>(ex->ovh_self_cuda)) / t);
      else
        why = fmt::format("row above 100%: its {} exceeds the column's total", self_cuda ? "Self CUDA"
                                                                               : col == std::string("Self CPU %")
                                                                                   ? "Self CPU"
                                                                                   : "CPU total");
      log.fail(where, fmt::format("{} <= 100%", col),
               fmt::format("{:.2f}% (= 100 x {} / {})", p.pct, print_time(v, rv), print_time(t, rt)), why,
               span  ? causes::kAnnotationSpan
               : ovh ? causes::kOverheadDoubleCount
                     : "");
    }
    if (t > 0) {
      const double want = 100.0 * v / t;
      if (std::fabs(want - p.pct) > tol)
        log.fail(where, fmt::format("{} = 100 * {} / {} = {}", col, num(v), num(t), num(want)),
                 fmt::format("{}%", num(p.pct)), fmt::format("{} does not match its value over the total", col));
    }
  }

  /// Row i's averages, Self <= total, and the shape of its kind's row.
  void check_row_values(std::size_t i, const std::string& where) {
    const TableRowData& r = rows[i];
    const auto kind = kind_of(i);
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
        const Expected* ex = expected_of(i);
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

  /// The sums over rows against the totals, for a table with every row (no cut).
  void check_sums() {
    // Self CUDA per kind of row.
    if (tb.has_cuda && tb.has_self_cuda_total) {
      if (dev_rows > 0 && !within(dev_sum, dev_res, cuda_t, cuda_res))
        log.fail("Self CUDA over device rows", fmt::format("{} (Self CUDA total)", table_value(cuda_t, cuda_res)),
                 fmt::format("{} (sum of {} device rows' Self CUDA)", num(dev_sum), dev_rows),
                 "Self CUDA total is not the sum of the device rows (kernels, memcpy, memset)");
      if (dev_rows > 0 && cuda_t > 0 && tb.has_pct &&
          std::fabs(dev_pct - 100.0) > (tb.json ? opts.pct_tol : dev_pct_tol + 1e-9))
        log.fail("Self CUDA % over device rows", fmt::format("100 +- {}", num(tb.json ? opts.pct_tol : dev_pct_tol)),
                 num(dev_pct), "device rows' Self CUDA % does not sum to 100");
      if (!m.legacy_device.empty() && rng_rows > 0) {
        log.not_judged("Self CUDA over host range rows",
                       m.legacy_device +
                           ": PyTorch's Self CUDA total sums the rows whose first event had a cudaEvent time "
                           "(_build_table, FunctionEventAvg.is_legacy), which the table does not mark");
      } else if (m.derived.unattributed == 0 && rng_rows > 0) {
        if (!within(rng_sum, rng_res, cuda_t, cuda_res))
          log.fail("Self CUDA over host range rows", fmt::format("{} (Self CUDA total)", table_value(cuda_t, cuda_res)),
                   fmt::format("{} (sum of {} host range rows)", num(rng_sum), rng_rows),
                   "every device activity was launched inside a host range, so the host ranges' Self CUDA must add "
                   "up to the total");
      }
    }
    // Self CPU over all rows.
    if (tb.has_cpu && tb.has_self_cpu_total) {
      if (!within(cpu_sum, cpu_sum_res, cpu_t, cpu_res))
        log.fail("Self CPU over all rows", fmt::format("{} (Self CPU time total)", table_value(cpu_t, cpu_res)),
                 num(cpu_sum), "Self CPU total is not the sum of the rows' Self CPU");
      if (tb.has_pct && cpu_t > 0 && std::fabs(cpu_pct - 100.0) > (tb.json ? opts.pct_tol * 10 : cpu_pct_tol + 1e-9))
        log.fail("Self CPU % over all rows", fmt::format("100 +- {}", num(tb.json ? opts.pct_tol * 10 : cpu_pct_tol)),
                 num(cpu_pct), "rows' Self CPU % does not sum to 100");
    }
  }

  // Parent rows' totals >= their children's, with children found through the trace's nesting;
  // only child names whose every instance has one parent name. Returns the links compared.
  std::size_t check_parents() {
    std::map<RowKey, std::vector<std::size_t>> children_of;
    std::map<RowKey, std::size_t> row_of;
    for (std::size_t i = 0; i < rows.size() && !tb.grouped(); ++i)
      if (m.matches[i].matched) row_of.emplace(m.matches[i].key, i);
    if (tb.grouped() && m.by_shapes)
      log.note("parent/child rows", fmt::format("{} has one row per input-shape group: each group is judged against "
                                                "the trace's events (table_rows), parents and children included",
                                                tb.file));
    else if (tb.grouped())
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
      if (tb.has_cuda && m.legacy_device.empty() && pr.cuda_total.ns + cuda_r / 2 + 1e-6 < cuda)
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
    if (links != 0 && tb.has_cuda && !m.legacy_device.empty())
      log.not_judged("parent/child rows",
                     m.legacy_device +
                         ": a parent row's device time against its children's is not compared (their CPU "
                         "totals are)");
    return links;
  }

  /// A note of the Self CUDA column's sum per kind of row.
  void note_self_cuda_by_kind() {
    if (!(tb.has_cuda && tb.has_self_cuda_total && cuda_t > 0)) return;
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

  /// The verdict, and what was left out.
  void finish(std::size_t cut, std::size_t links) {
    log.pass_if_clean(
        tb.file,
        fmt::format(
            "{}; percentages and averages match their values; no row above 100%; {} parent/child "
            "row links ordered",
            cut == 0
                ? fmt::format("Self CUDA total = sum of {} device rows{}; Self CPU total = sum of the rows", dev_rows,
                              m.derived.unattributed == 0 && rng_rows ? " = sum of the host range rows" : "")
            : footers_from_trace(m) ? std::string("rows left out: totals judged against the trace")
                                    : std::string("rows left out: sums over rows not compared"),
            links));
    if (m.derived.unattributed != 0)
      log.not_run("Self CUDA over host range rows",
                  fmt::format("{} device activities in {} have no host range, so host ranges' Self CUDA need not add "
                              "up to the total",
                              m.derived.unattributed, m.A().file()));
    if (unknown != 0)
      log.note(tb.file, fmt::format("{} rows of unknown kind are left out of the per-kind sums", unknown));
  }
};

}  // namespace

void check_table_totals(const Model& m, const ValidateOptions& opts, CheckLog& log) {
  if (!m.table) return log.not_run("", "no table given");
  TotalsCheck(m, opts, log).run();
}

}  // namespace xb::vd
