// key_averages()-style table (profiler/exporters/table.h, docs/formats.md "table.json").
#include "profiler/exporters/table.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <string_view>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/units.h"
#include "profiler/model/session_io.h"
#include "profiler/model/session_json.h"

namespace xb {
namespace {

/// Names longer than this are cut to kNameCap - 3 characters plus "..." in table.txt, as
/// PyTorch's key_averages().table() does with its default max_name_column_width of 55.
constexpr std::size_t kNameCap = 55;
constexpr int kColumnWidth = 12;  // PyTorch's DEFAULT_COLUMN_WIDTH
constexpr const char* kSpacing = "  ";

struct RowAcc {
  TableRow row;
  std::vector<std::int64_t> samples;  // per-call durations for median/min/max
};

/// Rows by (kind, name). Keys are views of the session's own strings, which outlive the set, so
/// a lookup allocates nothing.
class RowSet {
 public:
  RowAcc& get(std::string_view name, const char* kind) {
    auto& index = index_for(kind);
    const auto [it, inserted] = index.emplace(name, rows_.size());
    if (inserted) {
      rows_.emplace_back();
      rows_.back().row.name = std::string(name);
      rows_.back().row.kind = kind;
    }
    return rows_[it->second];
  }
  std::vector<RowAcc>& rows() { return rows_; }

 private:
  std::unordered_map<std::string_view, std::size_t>& index_for(const char* kind) {
    for (auto& [k, index] : kinds_) {
      if (std::strcmp(k, kind) == 0) return index;
    }
    kinds_.emplace_back(kind, std::unordered_map<std::string_view, std::size_t>{});
    return kinds_.back().second;
  }
  std::vector<std::pair<const char*, std::unordered_map<std::string_view, std::size_t>>> kinds_;
  std::vector<RowAcc> rows_;
};

double percent(std::int64_t part, std::int64_t total) {
  if (total <= 0) return 0.0;
  return std::min(100.0, 100.0 * static_cast<double>(part) / static_cast<double>(total));
}

std::string us_text(std::int64_t ns) { return format_us(ns) + "us"; }
std::string us_text(double ns) { return fmt::format("{:.3f}us", ns / 1000.0); }
std::string pct_text(double pct) { return fmt::format("{:.2f}%", pct); }

/// Row name of a host range: every "ProfilerStep#N" shares the row "ProfilerStep*", as in
/// PyTorch's key_averages(); other names are their own rows.
std::string_view range_row_name(std::string_view name) {
  constexpr std::string_view kStep = "ProfilerStep#";
  if (name.size() > kStep.size() && name.substr(0, kStep.size()) == kStep &&
      name.find_first_not_of("0123456789", kStep.size()) == std::string_view::npos) {
    return "ProfilerStep*";
  }
  return name;
}

}  // namespace

Table build_table(const Session& session) {
  RowSet set;

  // Device rows.
  std::unordered_map<std::uint64_t, std::int64_t> device_ns_by_ext;  // range id -> launched device time
  device_ns_by_ext.reserve(session.ranges.size());
  std::int64_t device_total = 0;
  for (const DeviceActivity& a : session.device) {
    const std::int64_t d = a.duration_ns();
    RowAcc& acc = set.get(a.name, trace_category(a.kind));
    acc.row.calls += 1;
    acc.row.self_cuda_ns += d;
    acc.row.cuda_total_ns += d;
    acc.samples.push_back(d);
    device_total += d;
    if (a.external_id != 0) device_ns_by_ext[a.external_id] += d;
  }

  // API rows; API time also counts as a direct child of the range it ran in.
  std::unordered_map<std::uint64_t, std::int64_t> child_ns_by_range;  // range id -> children's time
  child_ns_by_range.reserve(session.ranges.size());
  for (const ApiCall& c : session.api) {
    const std::int64_t d = c.duration_ns();
    RowAcc& acc = set.get(c.name, c.driver ? "cuda_driver" : "cuda_runtime");
    acc.row.calls += 1;
    acc.row.self_cpu_ns += d;
    acc.row.cpu_total_ns += d;
    acc.samples.push_back(d);
    if (c.external_id != 0) child_ns_by_range[c.external_id] += d;
  }

  // Host ranges: direct children, then device time summed bottom-up over the parent_id tree.
  const std::vector<HostRange>& ranges = session.ranges;
  std::unordered_map<std::uint64_t, std::size_t> index_of;
  index_of.reserve(ranges.size());
  for (std::size_t i = 0; i < ranges.size(); ++i) index_of.emplace(ranges[i].id, i);
  std::vector<std::int64_t> parent(ranges.size(), -1);
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const HostRange& r = ranges[i];
    if (r.parent_id == 0 || r.parent_id == r.id) continue;
    const auto it = index_of.find(r.parent_id);
    if (it == index_of.end()) continue;
    parent[i] = static_cast<std::int64_t>(it->second);
    child_ns_by_range[r.parent_id] += r.end_ns - r.start_ns;
  }
  // Depth of each range (iterative; a malformed parent cycle is cut at ranges.size() steps).
  std::vector<std::size_t> depth(ranges.size(), 0);
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    std::size_t d = 0;
    for (std::int64_t p = parent[i]; p >= 0 && d < ranges.size(); p = parent[static_cast<std::size_t>(p)]) ++d;
    depth[i] = d;
  }
  std::vector<std::size_t> order(ranges.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return depth[a] > depth[b]; });
  std::vector<std::int64_t> subtree_cuda(ranges.size(), 0);
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const auto it = device_ns_by_ext.find(ranges[i].id);
    if (it != device_ns_by_ext.end()) subtree_cuda[i] = it->second;
  }
  for (std::size_t i : order) {  // deepest first, so a child is complete before it is added up
    if (parent[i] >= 0 && depth[i] > depth[static_cast<std::size_t>(parent[i])]) {
      subtree_cuda[static_cast<std::size_t>(parent[i])] += subtree_cuda[i];
    }
  }
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const HostRange& r = ranges[i];
    const std::int64_t d = r.end_ns - r.start_ns;
    const auto child = child_ns_by_range.find(r.id);
    const std::int64_t children = child == child_ns_by_range.end() ? 0 : child->second;
    const auto self_cuda = device_ns_by_ext.find(r.id);
    RowAcc& acc = set.get(range_row_name(r.name), to_string(r.category));
    acc.row.calls += 1;
    acc.row.cpu_total_ns += d;
    acc.row.self_cpu_ns += std::max<std::int64_t>(0, d - children);
    acc.row.self_cuda_ns += self_cuda == device_ns_by_ext.end() ? 0 : self_cuda->second;
    acc.row.cuda_total_ns += subtree_cuda[i];
    acc.samples.push_back(d);
  }

  Table table;
  table.self_cuda_total_ns = device_total;
  for (RowAcc& acc : set.rows()) {
    if (!acc.row.is_device()) table.self_cpu_total_ns += acc.row.self_cpu_ns;
  }
  table.rows.reserve(set.rows().size());
  for (RowAcc& acc : set.rows()) {
    TableRow& row = acc.row;
    row.self_cpu_pct = percent(row.self_cpu_ns, table.self_cpu_total_ns);
    row.cpu_total_pct = percent(row.cpu_total_ns, table.self_cpu_total_ns);
    row.self_cuda_pct = percent(row.self_cuda_ns, table.self_cuda_total_ns);
    if (!acc.samples.empty()) {
      const auto [mn, mx] = std::minmax_element(acc.samples.begin(), acc.samples.end());
      row.min_ns = *mn;
      row.max_ns = *mx;
    }
    row.median_ns = median_of(std::move(acc.samples));
    table.rows.push_back(std::move(row));
  }
  std::sort(table.rows.begin(), table.rows.end(), [](const TableRow& a, const TableRow& b) {
    if (a.cuda_total_ns != b.cuda_total_ns) return a.cuda_total_ns > b.cuda_total_ns;
    if (a.name != b.name) return a.name < b.name;
    return a.kind < b.kind;
  });
  return table;
}

void write_table_text(const Table& table, std::ostream& out) {
  static constexpr const char* kHeaders[] = {
      "Self CPU %", "Self CPU",      "CPU total %", "CPU total", "CPU time avg", "Self CUDA", "Self CUDA %",
      "CUDA total", "CUDA time avg", "# of Calls",  "Median",    "Min",          "Max"};
  constexpr std::size_t kColumns = sizeof(kHeaders) / sizeof(kHeaders[0]);

  std::vector<std::string> names;
  names.reserve(table.rows.size());
  std::size_t longest = 4;  // "Name"
  for (const TableRow& row : table.rows) {
    std::string name = row.name.size() > kNameCap ? row.name.substr(0, kNameCap - 3) + "..." : row.name;
    longest = std::max(longest, name.size());
    names.push_back(std::move(name));
  }
  const std::size_t name_width = longest + 4;

  fmt::memory_buffer buf;
  auto out_it = std::back_inserter(buf);
  const auto separator = [&] {
    fmt::format_to(out_it, "{}{}", std::string(name_width, '-'), kSpacing);
    for (std::size_t c = 0; c < kColumns; ++c) {
      fmt::format_to(out_it, "{}{}", std::string(kColumnWidth, '-'), kSpacing);
    }
    buf.push_back('\n');
  };
  const auto line = [&](const std::string& name, const std::vector<std::string>& cells) {
    fmt::format_to(out_it, "{:>{}}{}", name, name_width, kSpacing);
    for (const std::string& cell : cells) fmt::format_to(out_it, "{:>{}}{}", cell, kColumnWidth, kSpacing);
    buf.push_back('\n');
  };

  separator();
  line("Name", std::vector<std::string>(std::begin(kHeaders), std::end(kHeaders)));
  separator();
  for (std::size_t i = 0; i < table.rows.size(); ++i) {
    const TableRow& r = table.rows[i];
    line(names[i], {pct_text(r.self_cpu_pct), us_text(r.self_cpu_ns), pct_text(r.cpu_total_pct),
                    us_text(r.cpu_total_ns), us_text(r.cpu_time_avg_ns()), us_text(r.self_cuda_ns),
                    pct_text(r.self_cuda_pct), us_text(r.cuda_total_ns), us_text(r.cuda_time_avg_ns()),
                    std::to_string(r.calls), us_text(r.median_ns), us_text(r.min_ns), us_text(r.max_ns)});
  }
  separator();
  fmt::format_to(out_it, "Self CPU time total: {}\n", us_text(table.self_cpu_total_ns));
  fmt::format_to(out_it, "Self CUDA time total: {}\n", us_text(table.self_cuda_total_ns));
  // Median, Min and Max are crossbench's columns (PyTorch's table has none): say what they measure.
  fmt::format_to(out_it,
                 "Median, Min, Max: one call's own duration: host time on CPU rows (ops, annotations, "
                 "API calls), device time on kernel, memcpy and memset rows\n");
  out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
}

void write_table_json(const Table& table, const SessionMeta& meta, std::ostream& out) {
  nlohmann::json rows = nlohmann::json::array();
  for (const TableRow& r : table.rows) {
    rows.push_back({{"name", r.name},
                    {"kind", r.kind},
                    {"calls", r.calls},
                    {"self_cpu_ns", r.self_cpu_ns},
                    {"cpu_total_ns", r.cpu_total_ns},
                    {"self_cuda_ns", r.self_cuda_ns},
                    {"cuda_total_ns", r.cuda_total_ns},
                    {"self_cpu_pct", r.self_cpu_pct},
                    {"cpu_total_pct", r.cpu_total_pct},
                    {"self_cuda_pct", r.self_cuda_pct},
                    {"cpu_time_avg_ns", r.cpu_time_avg_ns()},
                    {"cuda_time_avg_ns", r.cuda_time_avg_ns()},
                    {"median_ns", r.median_ns},
                    {"min_ns", r.min_ns},
                    {"max_ns", r.max_ns}});
  }
  const nlohmann::json doc = {{"crossbench", meta_block(meta, "table")},
                              {"self_cpu_total_ns", table.self_cpu_total_ns},
                              {"self_cuda_total_ns", table.self_cuda_total_ns},
                              {"rows", std::move(rows)}};
  out << doc.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

}  // namespace xb
