// The model's table side (validate/model.h): each table row matched to the trace's rows (by
// name, and by group of input shapes), and prepare(), which builds the whole model.
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "validate/model.h"

namespace xb::vd {

// ---------------------------------------------------------------------------------------------
// Table rows matched to the trace

namespace {

bool kind_from_string(const std::string& k, TraceCat& out) {
  static const std::pair<const char*, TraceCat> kinds[] = {
      {"kernel", TraceCat::Kernel},      {"gpu_memcpy", TraceCat::Memcpy},
      {"gpu_memset", TraceCat::Memset},  {"cuda_runtime", TraceCat::Runtime},
      {"cuda_driver", TraceCat::Driver}, {"user_annotation", TraceCat::UserAnnotation},
      {"cpu_op", TraceCat::CpuOp},       {"gpu_user_annotation", TraceCat::GpuUserAnnotation},
      {"overhead", TraceCat::Overhead}};
  for (const auto& [name, cat] : kinds)
    if (k == name) {
      out = cat;
      return true;
    }
  return false;
}

}  // namespace

bool device_side(TraceCat c) { return is_device(c) || c == TraceCat::GpuUserAnnotation; }

namespace {

/// A text row's calls and times are those of `e` (within the printed resolution; PyTorch's
/// overhead double count allowed): how a cut name or a cut shapes cell is told among candidates.
bool figures_fit(const TableData& tb, const TableRowData& r, const Expected& e) {
  const auto near = [](const TableTime& t, std::int64_t want, std::int64_t extra) {
    const double tol = t.res_ns / 2.0 + 1e-6;
    return std::fabs(t.ns - static_cast<double>(want)) <= tol ||
           std::fabs(t.ns - static_cast<double>(want + extra)) <= tol;
  };
  bool ok = r.calls == e.calls;
  if (ok && tb.has_cpu) ok = near(r.self_cpu, e.self_cpu, 0) && near(r.cpu_total, e.cpu_total, 0);
  if (ok && tb.has_cuda)
    ok = near(r.self_cuda, e.self_cuda, e.ovh_self_cuda) && near(r.cuda_total, e.cuda_total, e.ovh_cuda_total);
  return ok;
}

/// Each matched row of a table with an Input Shapes column to its group of derived.groups: the
/// cell is str(shapes) cut to the column's width (max_shapes_column_width), so a cut cell is
/// matched by prefix and, among several groups, by its figures.
void match_groups(const TableData& tb, const Derived& d, const NameTable& names, std::vector<RowMatch>& out) {
  std::map<GroupKey, std::size_t> by_figures;  // groups picked by their figures -> rows
  for (std::size_t i = 0; i < out.size(); ++i) {
    RowMatch& m = out[i];
    const TableRowData& r = tb.rows[i];
    const std::string& cell = r.input_shapes;
    if (m.ambiguous && r.cut) {
      // A cut name that fits several trace names: the one group whose name, shapes and figures fit.
      const std::string prefix = r.name.substr(0, r.name.size() - 3);
      const bool host = r.self_cpu.ns > 0 || r.cpu_total.ns > 0;
      const bool device = !host && (r.self_cuda.ns > 0 || r.cuda_total.ns > 0);
      std::vector<GroupKey> fits;
      for (const auto& [g, e] : d.groups) {
        if ((host && device_side(g.cat)) || (device && !device_side(g.cat))) continue;
        if (names.str(g.name).compare(0, prefix.size(), prefix) != 0 ||
            names.str(g.shapes).compare(0, cell.size(), cell) != 0)
          continue;
        if (figures_fit(tb, r, e)) fits.push_back(g);
      }
      if (fits.size() == 1) {
        m.ambiguous = false;
        m.matched = true;
        m.key = fits[0].row();
        m.shapes = fits[0].shapes;
        m.note = fmt::format("cut name '{}' fits several trace names; its figures and input shapes are those of '{}'",
                             r.name, names.str(fits[0].name));
        ++by_figures[fits[0]];
      }
      continue;
    }
    if (!m.matched) continue;
    std::vector<std::uint32_t> exact, prefix;
    for (auto it = d.groups.lower_bound({m.key.first, m.key.second, 0});
         it != d.groups.end() && it->first.row() == m.key; ++it) {
      const std::string& s = names.str(it->first.shapes);
      if (s == cell)
        exact.push_back(it->first.shapes);
      else if (s.compare(0, cell.size(), cell) == 0)
        prefix.push_back(it->first.shapes);
    }
    const std::vector<std::uint32_t>& cand = exact.empty() ? prefix : exact;
    if (cand.size() == 1) {
      m.shapes = cand[0];
      continue;
    }
    if (cand.empty()) {
      m.shapes_note = fmt::format("no event named '{}' has the input shapes {} in the trace's Input Dims",
                                  names.str(m.key.second), cell);
      continue;
    }
    std::vector<std::uint32_t> fits;
    for (std::uint32_t sh : cand)
      if (figures_fit(tb, r, d.groups.at({m.key.first, m.key.second, sh}))) fits.push_back(sh);
    if (fits.size() == 1) {
      m.shapes = fits[0];
      ++by_figures[{m.key.first, m.key.second, fits[0]}];
      continue;
    }
    m.shapes_note = fmt::format(
        "the Input Shapes cell '{}' is cut (max_shapes_column_width) and fits {} groups of '{}' in the trace's "
        "Input Dims",
        cell, cand.size(), names.str(m.key.second));
  }
  // Two rows picked by their figures for one group: neither can be told.
  for (std::size_t i = 0; i < out.size(); ++i) {
    RowMatch& m = out[i];
    if (m.shapes == kNone) continue;
    const auto it = by_figures.find({m.key.first, m.key.second, m.shapes});
    if (it == by_figures.end() || it->second < 2) continue;
    m.shapes_note =
        fmt::format("the Input Shapes cell '{}' is cut and its figures fit a group that another row's fit too",
                    tb.rows[i].input_shapes);
    m.shapes = kNone;
  }
}

}  // namespace

/// Matches every table row to a (kind, display name) of the trace. table.json rows carry their
/// kind; text rows are matched by name (exact, or by prefix for a name cut with "..."), on the
/// host side when the row has CPU time, on the device side when it has only device time.
std::vector<RowMatch> match_rows(const TableData& tb, const Derived* d, NameTable& names) {
  std::vector<RowMatch> out(tb.rows.size());
  // Display names present in the trace, per kind.
  std::vector<RowKey> keys;
  if (d) {
    keys.reserve(d->rows.size());
    for (const auto& kv : d->rows) keys.push_back(kv.first);
    std::sort(keys.begin(), keys.end());
  }
  for (std::size_t i = 0; i < tb.rows.size(); ++i) {
    const TableRowData& r = tb.rows[i];
    RowMatch& m = out[i];
    if (tb.json) {
      TraceCat c{};
      if (!kind_from_string(r.kind, c)) {
        m.note = fmt::format("unknown kind \"{}\"", r.kind);
        continue;
      }
      m.matched = true;
      m.key = {c, names.intern(r.name)};
      continue;
    }
    if (!d) {
      m.note = "no trace to tell the row's kind";
      continue;
    }
    const bool host = r.self_cpu.ns > 0 || r.cpu_total.ns > 0;
    const bool device = !host && (r.self_cuda.ns > 0 || r.cuda_total.ns > 0);
    const std::string prefix = r.cut ? r.name.substr(0, r.name.size() - 3) : r.name;
    std::vector<RowKey> exact, by_prefix;
    for (const RowKey& k : keys) {
      if (host && device_side(k.first)) continue;
      if (device && !device_side(k.first)) continue;
      const std::string& s = names.str(k.second);
      if (s == r.name)
        exact.push_back(k);
      else if (r.cut && s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0)
        by_prefix.push_back(k);
    }
    const std::vector<RowKey>& cand = !exact.empty() ? exact : by_prefix;
    if (cand.empty()) {
      m.note = r.cut ? fmt::format("no {} event name starts with '{}'",
                                   host     ? "host"
                                   : device ? "device"
                                            : "",
                                   prefix)
                     : "no event of the trace has this name";
      continue;
    }
    if (cand.size() > 1 && r.cut) {
      // The figures tell the candidates apart: keep those whose expected row (calls, times
      // within the printed resolution; PyTorch's overhead double count allowed) is the printed one.
      std::vector<RowKey> fits;
      for (const RowKey& k : cand) {
        const auto it = d->rows.find(k);
        if (it != d->rows.end() && figures_fit(tb, r, it->second)) fits.push_back(k);
      }
      if (fits.size() == 1) {
        m.matched = true;
        m.key = fits[0];
        m.note = fmt::format("cut name '{}' fits {} trace names; its figures are those of '{}'", r.name, cand.size(),
                             names.str(fits[0].second));
        continue;
      }
    }
    if (cand.size() > 1) {
      m.ambiguous = true;
      std::string list;
      for (std::size_t k = 0; k < cand.size() && k < 6; ++k)
        list += fmt::format("{}{} '{}'", k ? ", " : "", to_string(cand[k].first), names.str(cand[k].second));
      if (cand.size() > 6) list += fmt::format(", ... ({} in all)", cand.size());
      m.note = r.cut ? fmt::format("cut name '{}' is ambiguous: it is the prefix of {} trace names: {}", r.name,
                                   cand.size(), list)
                     : fmt::format("name '{}' matches events of {} kinds: {}", r.name, cand.size(), list);
      // A unique kind still lets the row count in the per-kind sums.
      if (std::all_of(cand.begin(), cand.end(), [&](const RowKey& k) { return k.first == cand[0].first; }))
        m.key = {cand[0].first, kNone};
      continue;
    }
    m.matched = true;
    m.key = cand[0];
    if (exact.empty()) m.note = fmt::format("cut name matched by prefix to '{}'", names.str(cand[0].second));
  }
  // Two rows matched by their figures to one trace name: neither can be told, both ambiguous.
  std::map<RowKey, std::size_t> by_key;
  for (std::size_t i = 0; i < out.size(); ++i)
    if (out[i].matched && tb.rows[i].cut) ++by_key[out[i].key];
  for (std::size_t i = 0; i < out.size(); ++i)
    if (out[i].matched && tb.rows[i].cut && by_key[out[i].key] > 1 &&
        out[i].note.find("its figures") != std::string::npos) {
      out[i].matched = false;
      out[i].ambiguous = true;
      out[i].note = fmt::format(
          "cut name '{}' fits several trace names, and its figures fit one that another row's "
          "figures fit too",
          tb.rows[i].name);
    }
  if (d) match_renamed_rows(tb, *d, names, out);
  return out;
}

// ---------------------------------------------------------------------------------------------
// The model of one validation

void prepare(Model& m) {
  m.views.resize(m.traces.size());
  {
    Phase p("index");
    for (std::size_t i = 0; i < m.traces.size(); ++i) index_view(m.views[i], m.traces[i]);
  }
  // Async rows of a PyTorch text table (CPU total % printed as the integer 0) name the trace's
  // async ranges.
  if (m.table && !m.table->json && !m.views.empty() && m.views[0].t->format.empty())
    for (const TableRowData& r : m.table->rows)
      if (r.cpu_total_pct.async_zero && !r.cut) m.views[0].async_names.insert(m.names.intern(r.name));
  // A table cut by row_limit may not show them: a process group's "<backend>:<collective>" range
  // (ProcessGroupNCCL, ProcessGroupGloo, UCC, MPI) ends on the thread that completes the work, so
  // PyTorch marks it async in every export (tests/data/torch-matrix: nccl:* and gloo:*).
  if (!m.views.empty() && m.views[0].t->format.empty())
    for (std::uint32_t i : m.views[0].rng) {
      const std::string& n = m.names.str(m.views[0].ev(i).name);
      for (const char* prefix : {"nccl:", "gloo:", "ucc:", "mpi:"})
        if (n.rfind(prefix, 0) == 0) m.views[0].async_names.insert(m.views[0].ev(i).name);
    }
  {
    Phase p("parents");
    for (std::size_t i = 0; i < m.views.size(); ++i) {
      const View* other = m.views.size() > 1 ? &m.views[1 - i] : nullptr;
      build_parents(m.views[i], other);
      index_annotations(m.views[i]);
    }
  }
  establish_evidence(m);
  Phase p("derive");
  // key_averages(group_by_input_shape=True) regrouped from the trace's Input Dims (a PyTorch text
  // table with an Input Shapes column and no Source Location or Overload Name column, whose
  // groups the trace cannot carry).
  const TableData* tb = m.table ? &*m.table : nullptr;
  m.by_shapes = tb && !tb->json && tb->has_shapes && !tb->has_stack && !tb->has_overload &&
                m.views[0].t->format.empty() && !m.views[0].t->input_shapes.empty();
  m.derived = derive(m.views[0], m.names, m.by_shapes);
  if (m.table) m.matches = match_rows(*m.table, &m.derived, m.names);
  if (m.by_shapes) match_groups(*m.table, m.derived, m.names, m.matches);
}

const Expected* Model::expected(const RowMatch& mt) const {
  if (!mt.matched) return nullptr;
  if (by_shapes) {
    const auto it = derived.groups.find({mt.key.first, mt.key.second, mt.shapes});
    return mt.shapes == kNone || it == derived.groups.end() ? nullptr : &it->second;
  }
  const auto it = derived.rows.find(mt.key);
  return it == derived.rows.end() ? nullptr : &it->second;
}

}  // namespace xb::vd
