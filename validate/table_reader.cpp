// key_averages()-style table reader (validate/table_reader.h).
#include "validate/table_reader.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "common/errors.h"
#include "common/strict_json.h"
#include "validate/json_scan.h"

namespace xb {

std::string TableData::where(const TableRowData& r) const {
  return fmt::format("{} {} {} '{}'", file, json ? "row" : "line", r.line, r.name);
}

namespace {

using json = nlohmann::json;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool is_rule(std::string_view line) {
  line = trim(line);
  if (line.size() < 3) return false;
  bool dash = false;
  for (char ch : line) {
    if (ch == '-')
      dash = true;
    else if (ch != ' ')
      return false;
  }
  return dash;
}

/// A decimal "[-]digits[.digits]": value and number of fraction digits. False when malformed.
bool decimal_text(std::string_view s, double& value, int& decimals) {
  if (s.empty()) return false;
  std::size_t i = 0;
  if (s[0] == '-') i = 1;
  const std::size_t int_start = i;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  if (i == int_start || i - int_start > 18) return false;
  decimals = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    const std::size_t f = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    if (i == f) return false;
    decimals = static_cast<int>(i - f);
  }
  if (i != s.size() || decimals > 9) return false;
  // Exact: digits as an integer, then one division by 10^decimals.
  long double mant = 0;
  for (char ch : s)
    if (ch >= '0' && ch <= '9') mant = mant * 10 + (ch - '0');
  value = static_cast<double>(mant / std::pow(10.0L, decimals));
  if (s[0] == '-') value = -value;
  return true;
}

/// "12.345us" / "1.234ms" / "2.000s" / "5ns" -> ns with its resolution.
std::optional<TableTime> time_text(std::string_view cell) {
  double unit = 0;
  std::string_view num;
  auto ends = [&](std::string_view suffix) {
    return cell.size() > suffix.size() && cell.substr(cell.size() - suffix.size()) == suffix;
  };
  if (ends("us")) {
    unit = 1e3;
    num = cell.substr(0, cell.size() - 2);
  } else if (ends("ms")) {
    unit = 1e6;
    num = cell.substr(0, cell.size() - 2);
  } else if (ends("ns")) {
    unit = 1;
    num = cell.substr(0, cell.size() - 2);
  } else if (ends("s")) {
    unit = 1e9;
    num = cell.substr(0, cell.size() - 1);
  } else {
    return std::nullopt;
  }
  double v = 0;
  int dec = 0;
  if (!decimal_text(num, v, dec)) return std::nullopt;
  TableTime t;
  t.ns = v * unit;
  t.res_ns = unit / std::pow(10.0, dec);
  if (!std::isfinite(t.ns)) return std::nullopt;
  return t;
}

bool is_nan_text(std::string_view s) {
  std::string l(s);
  for (char& ch : l) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  while (!l.empty() && l.back() == '%') l.pop_back();
  if (!l.empty() && (l[0] == '-' || l[0] == '+')) l.erase(0, 1);
  return l == "nan" || l == "inf" || l == "infinity";
}

// ---------------------------------------------------------------------------------------------
// Text tables

enum class Col {
  Name,
  SelfCpuPct,
  SelfCpu,
  CpuTotalPct,
  CpuTotal,
  CpuAvg,
  SelfCuda,
  SelfCudaPct,
  CudaTotal,
  CudaAvg,
  Calls,
  Median,
  Min,
  Max,
  CpuMem,
  SelfCpuMem,
  DevMem,
  SelfDevMem,
  NodeId,
  Overload,
  Shapes,
  Source,
  Flops,
  Other
};

/// "12.34 KB" / "-1.00 MB" / "0 B" (PyTorch's _format_memory: 1024-based, 2 decimals) -> bytes.
bool memory_text(std::string_view cell, double& bytes, double& res) {
  const std::size_t sp = cell.find(' ');
  if (sp == std::string_view::npos) return false;
  const std::string_view unit = cell.substr(sp + 1);
  double scale = 0;
  if (unit == "B")
    scale = 1;
  else if (unit == "KB")
    scale = 1024.0;
  else if (unit == "MB")
    scale = 1024.0 * 1024;
  else if (unit == "GB")
    scale = 1024.0 * 1024 * 1024;
  else
    return false;
  double v = 0;
  int dec = 0;
  if (!decimal_text(cell.substr(0, sp), v, dec)) return false;
  bytes = v * scale;
  res = scale * std::pow(10.0, -dec);
  return true;
}

/// "Total FLOPs", "Total KFLOPs", ... "Total PFLOPs": the scale of the column's cells (FLOPs per
/// printed unit; _build_table's auto_scale_flops). 0 when `h` is not such a header.
double flops_scale(std::string_view h) {
  constexpr std::string_view kTotal = "Total ";
  if (h.substr(0, kTotal.size()) != kTotal) return 0;
  const std::string_view u = h.substr(kTotal.size());
  static const std::pair<std::string_view, double> units[] = {{"FLOPs", 1},    {"KFLOPs", 1e3},  {"MFLOPs", 1e6},
                                                              {"GFLOPs", 1e9}, {"TFLOPs", 1e12}, {"PFLOPs", 1e15}};
  for (const auto& [name, scale] : units)
    if (u == name) return scale;
  return 0;
}

/// Maps a header cell to a column; `device` receives the device label ("CUDA", "Device", ...).
Col column_of(std::string_view h, std::string& device) {
  if (h == "Name") return Col::Name;
  if (h == "Self CPU %") return Col::SelfCpuPct;
  if (h == "Self CPU") return Col::SelfCpu;
  if (h == "CPU total %") return Col::CpuTotalPct;
  if (h == "CPU total") return Col::CpuTotal;
  if (h == "CPU time avg") return Col::CpuAvg;
  if (h == "# of Calls") return Col::Calls;
  if (h == "Median") return Col::Median;
  if (h == "Min") return Col::Min;
  if (h == "Max") return Col::Max;
  if (h == "Node ID") return Col::NodeId;
  if (h == "Overload Name") return Col::Overload;
  if (h == "Input Shapes") return Col::Shapes;
  if (h == "Source Location") return Col::Source;
  if (flops_scale(h) > 0) return Col::Flops;
  if (h == "CPU Mem") return Col::CpuMem;
  if (h == "Self CPU Mem") return Col::SelfCpuMem;
  // "<DEVICE> Mem" / "Self <DEVICE> Mem" (CUDA, XPU, MTIA, PRIVATEUSE1, ...).
  constexpr std::string_view kMem = " Mem";
  if (h.size() > kMem.size() && h.substr(h.size() - kMem.size()) == kMem) {
    const std::string_view dev = h.substr(0, h.size() - kMem.size());
    if (dev.substr(0, 5) == "Self " && dev.find(' ', 5) == std::string_view::npos) return Col::SelfDevMem;
    if (dev.find(' ') == std::string_view::npos) return Col::DevMem;
    return Col::Other;
  }
  // Device columns: "Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg" (also "Device",
  // "XPU", ... in other PyTorch versions/backends). Memory columns ("Self CUDA Mem") are other.
  auto device_of = [&](std::string_view word) {
    if (word.empty() || word == "CPU" || word.find(' ') != std::string_view::npos) return false;
    device = std::string(word);
    return true;
  };
  constexpr std::string_view kSelf = "Self ";
  if (h.substr(0, kSelf.size()) == kSelf) {
    std::string_view rest = h.substr(kSelf.size());
    if (rest.size() > 2 && rest.substr(rest.size() - 2) == " %") {
      if (device_of(rest.substr(0, rest.size() - 2))) return Col::SelfCudaPct;
    } else if (device_of(rest)) {
      return Col::SelfCuda;
    }
    return Col::Other;
  }
  constexpr std::string_view kTotal = " total", kAvg = " time avg";
  if (h.size() > kTotal.size() && h.substr(h.size() - kTotal.size()) == kTotal &&
      device_of(h.substr(0, h.size() - kTotal.size())))
    return Col::CudaTotal;
  if (h.size() > kAvg.size() && h.substr(h.size() - kAvg.size()) == kAvg &&
      device_of(h.substr(0, h.size() - kAvg.size())))
    return Col::CudaAvg;
  return Col::Other;
}

/// The lines of `text` (a "\r\n" end read as "\n").
std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  for (std::size_t pos = 0; pos <= text.size();) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view l = text.substr(pos, nl - pos);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    lines.push_back(l);
    pos = nl + 1;
  }
  return lines;
}

/// The table time that column `c` fills in `row` (nullptr for a column that is not a time).
TableTime* time_field(TableRowData& row, Col c) {
  switch (c) {
    case Col::SelfCpu:
      return &row.self_cpu;
    case Col::CpuTotal:
      return &row.cpu_total;
    case Col::CpuAvg:
      return &row.cpu_avg;
    case Col::SelfCuda:
      return &row.self_cuda;
    case Col::CudaTotal:
      return &row.cuda_total;
    case Col::CudaAvg:
      return &row.cuda_avg;
    case Col::Median:
      return &row.median;
    case Col::Min:
      return &row.min;
    case Col::Max:
      return &row.max;
    default:
      return nullptr;
  }
}

/// A column's place in the rule: where its dashes start and how many there are.
struct Slot {
  std::size_t start, width;
};

/// Reads a key_averages() text table (parse_text): one method per phase (header, column slots,
/// columns, rows, totals) over the state they share.
struct TextTableParser {
  const std::string& label;
  std::vector<std::string_view> lines;
  std::string not_table;
  TableData t;
  std::size_t rule = 0;     ///< index of the rule above the header line
  std::vector<Slot> slots;  ///< the columns' places in that rule
  std::size_t ncols = 0;    ///< set once the header is read
  bool aligned = false;     ///< cells can be read by position (the header lines up with the rule)
  std::vector<Col> cols;
  std::vector<std::string> headers;
  double flops_per_unit = 0;
  std::size_t shapes_width = 0;

  TextTableParser(std::string_view text, const std::string& label_)
      : label(label_),
        lines(split_lines(text)),
        not_table(fmt::format("{}: not a key_averages() table: no '-----' rule followed by a header line with "
                              "\"Name\" and \"# of Calls\"",
                              label_)) {
    t.path = label;
    t.file = std::filesystem::path(label).filename().string();
  }

  [[noreturn]] void fail(std::size_t line, const std::string& what) const {
    throw InputError(fmt::format("{}: line {}: {}", label, line, what));
  }

  TableData parse() {
    find_header();
    read_slots();
    read_columns();
    const std::size_t i = read_rows();
    if (i >= lines.size())
      throw InputError(fmt::format("{}: truncated table: no closing '-----' rule after the rows", label));
    read_totals(i);
    return std::move(t);
  }

  // The header: a rule, a line naming the columns, a rule. Above it _build_table may print
  // "=====" + table(header=...) and "=====" + the top_level_events_only sentence.
  void find_header() {
    rule = lines.size();
    for (std::size_t i = 0; i + 2 < lines.size(); ++i) {
      if (is_rule(lines[i]) && lines[i + 1].find("Name") != std::string_view::npos && is_rule(lines[i + 2])) {
        rule = i;
        break;
      }
    }
    if (rule == lines.size()) throw InputError(not_table);
    for (std::size_t i = 0; i < rule; ++i) {
      const std::string_view l = trim(lines[i]);
      if (l.empty() || l.find_first_not_of('=') == std::string_view::npos) continue;
      if (l == "This report only display top-level ops statistics") {
        t.top_level_only = true;
      } else if (i > 0 && trim(lines[i - 1]).substr(0, 3) == "===") {
        t.header_text += (t.header_text.empty() ? "" : "\n") + std::string(l);
      }
    }
  }

  // Column slots from the rule: _build_table's add_column writes "-" * width + two spaces per
  // column and pads every cell to its width (right-aligned; Source Location left-aligned).
  void read_slots() {
    const std::string_view r = lines[rule];
    std::size_t k = 0;
    while (k < r.size()) {
      if (r[k] != '-') {
        ++k;
        continue;
      }
      const std::size_t b = k;
      while (k < r.size() && r[k] == '-') ++k;
      slots.push_back({b, k - b});
    }
  }

  // Cells of a line by position: column k starts where column k-1 ended plus two spaces; a cell
  // wider than its column (a header such as "Self CUDA Mem", a path under the swapped FLOPs
  // column) runs on to the next run of two spaces and shifts the rest, as str.format does.
  void split_pos(std::string_view line, std::vector<std::string_view>& out) const {
    out.assign(slots.size(), std::string_view());
    std::size_t pos = slots.empty() ? 0 : slots[0].start;
    for (std::size_t k = 0; k < slots.size(); ++k) {
      if (pos >= line.size()) return;
      std::size_t end = std::min(line.size(), pos + slots[k].width);
      if (k + 1 == slots.size()) end = line.size();
      while (end < line.size() && !(line[end] == ' ' && (end + 1 >= line.size() || line[end + 1] == ' '))) ++end;
      out[k] = trim(line.substr(pos, end - pos));
      pos = end + 2;
    }
  }

  // Cells split at runs of two or more spaces (a hand-aligned table): from the right, the rest
  // is the name (which may itself contain spaces, even double ones).
  void split_right(std::string_view line, std::vector<std::string_view>& out, std::size_t lineno) const {
    out.assign(ncols, std::string_view());
    std::string_view rest = trim(line);
    for (std::size_t k = out.size() - 1; k >= 1; --k) {
      const std::size_t sep = rest.rfind("  ");
      if (sep == std::string_view::npos) fail(lineno, fmt::format("row has fewer than {} columns", out.size()));
      out[k] = trim(rest.substr(sep));
      rest = trim(rest.substr(0, sep));
    }
    out[0] = rest;
  }

  /// The header line's cells: by position when they line up with the rule (sets `aligned`).
  std::vector<std::string_view> header_cells() {
    std::vector<std::string_view> cells;
    split_pos(lines[rule + 1], cells);
    aligned = !cells.empty() && std::none_of(cells.begin(), cells.end(), [](std::string_view h) { return h.empty(); });
    if (!aligned) {
      // A header not aligned with its rule (hand-made): cells separated by runs of two spaces.
      cells.clear();
      std::string_view line = trim(lines[rule + 1]);
      for (std::size_t k = 0; k < line.size();) {
        std::size_t j = line.find("  ", k);
        if (j == std::string_view::npos) j = line.size();
        cells.push_back(trim(line.substr(k, j - k)));
        k = j;
        while (k < line.size() && (line[k] == ' ' || line[k] == '\t')) ++k;
      }
    }
    return cells;
  }

  /// The columns named by the header line, and which the table has.
  void read_columns() {
    int name_col = -1, calls_col = -1;
    for (std::string_view h : header_cells()) {
      const std::size_t k = headers.size();
      headers.emplace_back(h);
      std::string device;
      const Col c = column_of(h, device);
      if (c != Col::Other && std::find(cols.begin(), cols.end(), c) != cols.end())
        fail(rule + 2, fmt::format("column \"{}\" appears twice", h));
      cols.push_back(c);
      if (!device.empty()) t.device_label = device;
      if (c == Col::Name) name_col = static_cast<int>(k);
      if (c == Col::Calls) calls_col = static_cast<int>(k);
      if (c == Col::Flops) flops_per_unit = flops_scale(h);
    }
    if (name_col != 0 || calls_col < 0 || cols.size() < 2) throw InputError(not_table);
    ncols = cols.size();
    aligned = aligned && slots.size() == ncols;
    auto has = [&](Col c) { return std::find(cols.begin(), cols.end(), c) != cols.end(); };
    t.has_cpu = has(Col::SelfCpu) && has(Col::CpuTotal);
    t.has_cuda = has(Col::SelfCuda) && has(Col::CudaTotal);
    t.has_pct = has(Col::SelfCpuPct) || has(Col::SelfCudaPct);
    t.has_avg = has(Col::CpuAvg) || has(Col::CudaAvg);
    t.has_stats = has(Col::Median) && has(Col::Min) && has(Col::Max);
    t.has_mem = has(Col::CpuMem) || has(Col::SelfCpuMem);
    t.has_shapes = has(Col::Shapes);
    t.has_stack = has(Col::Source);
    t.has_overload = has(Col::Overload);
    t.has_node_id = has(Col::NodeId);
    t.has_flops = has(Col::Flops);
    shapes_width =
        t.has_shapes && aligned
            ? slots[static_cast<std::size_t>(std::find(cols.begin(), cols.end(), Col::Shapes) - cols.begin())].width
            : 0;
  }

  // One row's cells; "" when they read, else what is wrong.
  std::string read_row(const std::vector<std::string_view>& cells, TableRowData& row) const {
    row.name = std::string(cells[0]);
    if (row.name.empty()) return "row without a name";
    row.cut = row.name.size() > 3 && row.name.compare(row.name.size() - 3, 3, "...") == 0;
    // _build_table prints the FLOPs cell before the Source Location cell although its header
    // comes after it (PyTorch 2.0-2.x): with both columns, the cell under "Source Location"
    // holds the FLOPs ("--" or a number) and the one under "Total FLOPs" the first frame.
    std::vector<Col> cc = cols;
    const auto src = std::find(cc.begin(), cc.end(), Col::Source), fl = std::find(cc.begin(), cc.end(), Col::Flops);
    if (src != cc.end() && fl != cc.end() && src < fl) {
      double x = 0;
      int dec = 0;
      const std::string_view under_src = cells[static_cast<std::size_t>(src - cc.begin())];
      if (under_src == "--" || decimal_text(under_src, x, dec)) std::swap(*src, *fl);
    }
    for (std::size_t k = 1; k < cc.size(); ++k) {
      std::string err = read_cell(cc[k], cells[k], headers[k], row);
      if (!err.empty()) return err;
    }
    return "";
  }

  /// One cell `v` of column `c` (header `hk`) into `row`; "" when it reads, else what is wrong.
  std::string read_cell(Col c, std::string_view v, const std::string& hk, TableRowData& row) const {
    switch (c) {
      case Col::Other:
        return "";
      case Col::Overload:
        row.overload_name = std::string(v);
        return "";
      case Col::Shapes:
        row.input_shapes = std::string(v);
        row.shapes_cut = v.size() >= shapes_width;
        return "";
      case Col::Source:
        if (!v.empty()) row.stack.emplace_back(v);
        return "";
      case Col::Flops:
      case Col::NodeId:
      case Col::CpuMem:
      case Col::SelfCpuMem:
      case Col::DevMem:
      case Col::SelfDevMem:
        return read_amount_cell(c, v, hk, row);
      default:
        break;
    }
    if (is_nan_text(v) && c != Col::SelfCpuPct && c != Col::CpuTotalPct && c != Col::SelfCudaPct)
      return fmt::format("column \"{}\" is {}: NaN/Infinity is not a value", hk, std::string(v));
    if (c == Col::Calls) {
      double calls = 0;
      int dec = 0;
      if (!decimal_text(v, calls, dec) || dec != 0 || calls < 0)
        return fmt::format("column \"# of Calls\" is '{}', not a count", std::string(v));
      row.calls = static_cast<std::int64_t>(calls);
      return "";
    }
    if (c == Col::SelfCpuPct || c == Col::CpuTotalPct || c == Col::SelfCudaPct) {
      TablePct p;
      if (v == "NaN") {
        p.nan = true;
      } else if (v == "0") {
        // _build_table's CPU total % of an async event is the integer 0, printed "0".
        p.async_zero = true;
      } else {
        double x = 0;
        int dec = 0;
        if (v.size() < 2 || v.back() != '%' || !decimal_text(v.substr(0, v.size() - 1), x, dec))
          return fmt::format("column \"{}\" is '{}', not a percentage", hk, std::string(v));
        p.pct = x;
        p.res = std::pow(10.0, -dec);
      }
      (c == Col::SelfCpuPct ? row.self_cpu_pct : c == Col::CpuTotalPct ? row.cpu_total_pct : row.self_cuda_pct) = p;
      return "";
    }
    const auto tv = time_text(v);
    if (!tv) return fmt::format("column \"{}\" is '{}', not a time (a number with us, ms or s)", hk, std::string(v));
    if (TableTime* field = time_field(row, c)) *field = *tv;
    return "";
  }

  /// A FLOPs, Node ID or memory cell (read_cell).
  std::string read_amount_cell(Col c, std::string_view v, const std::string& hk, TableRowData& row) const {
    if (c == Col::Flops) {
      if (v == "--" || v.empty()) return "";  // "--": no FLOPs for this row
      double x = 0;
      int dec = 0;
      if (!decimal_text(v, x, dec)) return fmt::format("column \"{}\" is '{}', not a FLOP count", hk, std::string(v));
      row.flops = x * flops_per_unit;
      return "";
    }
    if (c == Col::NodeId) {
      double x = 0;
      int dec = 0;
      if (!decimal_text(v, x, dec) || dec != 0)
        return fmt::format("column \"Node ID\" is '{}', not an integer", std::string(v));
      row.node_id = static_cast<std::int64_t>(x);
      return "";
    }
    double b = 0, res = 0;
    if (!memory_text(v, b, res))
      return fmt::format("column \"{}\" is '{}', not a memory size (B, KB, MB, GB)", hk, std::string(v));
    (c == Col::CpuMem       ? row.cpu_mem
     : c == Col::SelfCpuMem ? row.self_cpu_mem
     : c == Col::DevMem     ? row.dev_mem
                            : row.self_dev_mem) = b;
    row.mem_res = std::max(row.mem_res, res);
    return "";
  }

  // Rows: until the next rule. With a Source Location column, each row is followed by one line
  // per further stack frame (every cell empty but the last) and one blank line. Returns the
  // closing rule's index (lines.size() when there is none).
  std::size_t read_rows() {
    std::size_t i = rule + 3;
    std::vector<std::string_view> cells;
    for (; i < lines.size() && !is_rule(lines[i]); ++i) {
      const std::string_view line = lines[i];
      if (trim(line).empty()) continue;
      const std::size_t lineno = i + 1;
      if (aligned)
        split_pos(line, cells);
      else
        split_right(line, cells, lineno);
      if (cells[0].empty() && t.has_stack && !t.rows.empty()) {
        t.rows.back().stack.emplace_back(trim(line));  // a further frame of the row above
        continue;
      }
      TableRowData row;
      row.line = lineno;
      std::string err = read_row(cells, row);
      if (!err.empty() && aligned) {
        // Not aligned as _build_table aligns: try the cells split at runs of spaces.
        TableRowData again;
        again.line = lineno;
        split_right(line, cells, lineno);
        if (!read_row(cells, again).empty()) fail(lineno, err);
        row = std::move(again);
      } else if (!err.empty()) {
        fail(lineno, err);
      }
      t.rows.push_back(std::move(row));
    }
    return i;
  }

  // Totals after the closing rule (at index `i`).
  void read_totals(std::size_t i) {
    for (++i; i < lines.size(); ++i) {
      const std::string_view l = trim(lines[i]);
      constexpr std::string_view kCpu = "Self CPU time total:";
      auto total = [&](std::string_view rest, TableTime& out, bool& flag) {
        const std::string_view v = trim(rest);
        if (is_nan_text(v)) fail(i + 1, "total is NaN/Infinity");
        const auto tv = time_text(v);
        if (!tv) fail(i + 1, fmt::format("total '{}' is not a time", std::string(v)));
        out = *tv;
        flag = true;
      };
      if (l.substr(0, kCpu.size()) == kCpu) {
        total(l.substr(kCpu.size()), t.self_cpu_total, t.has_self_cpu_total);
      } else if (l.substr(0, 5) == "Self " && l.find(" time total:") != std::string_view::npos) {
        const std::size_t at = l.find(" time total:");
        t.device_label = std::string(l.substr(5, at - 5));
        total(l.substr(at + 12), t.self_cuda_total, t.has_self_cuda_total);
      }
    }
  }
};

TableData parse_text(std::string_view text, const std::string& label) { return TextTableParser(text, label).parse(); }

// ---------------------------------------------------------------------------------------------
// table.json

TableData parse_json_table(std::string_view text, const std::string& label) {
  const json doc = strict_json::parse_json(text, label);
  TableData t;
  t.path = label;
  t.file = std::filesystem::path(label).filename().string();
  t.json = true;
  auto bad = [&](const std::string& what) -> void { throw InputError(label + ": " + what); };
  if (!doc.is_object()) bad("top level is not a JSON object");
  auto meta = doc.find("crossbench");
  if (meta == doc.end() || !meta->is_object()) bad("not a crossbench table.json (no \"crossbench\" metadata block)");
  auto fmt_it = meta->find("format");
  if (fmt_it == meta->end() || !fmt_it->is_string()) bad("crossbench.format is missing");
  if (*fmt_it != "table")
    bad(fmt::format("crossbench.format is \"{}\", expected \"table\"", fmt_it->get<std::string>()));
  if (auto v = meta->find("version"); v != meta->end() && !(v->is_number_integer() && v->get<std::int64_t>() == 1))
    bad(fmt::format("unsupported crossbench.version {}", v->dump()));
  t.meta = *meta;
  auto num = [&](const json& obj, const char* key, const std::string& where) -> double {
    auto it = obj.find(key);
    if (it == obj.end()) bad(fmt::format("{}missing \"{}\"", where, key));
    if (!it->is_number()) bad(fmt::format("{}\"{}\" is not a number", where, key));
    const double v = it->get<double>();
    if (!std::isfinite(v)) bad(fmt::format("{}\"{}\" is not finite", where, key));
    return v;
  };
  auto integer = [&](const json& obj, const char* key, const std::string& where) -> double {
    auto it = obj.find(key);
    if (it == obj.end()) bad(fmt::format("{}missing \"{}\"", where, key));
    if (!it->is_number_integer()) {
      if (it->is_number_float()) {
        const double d = it->get<double>();
        if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e15) return d;
      }
      bad(fmt::format("{}\"{}\" is not an integer", where, key));
    }
    return it->is_number_unsigned() ? static_cast<double>(it->get<std::uint64_t>())
                                    : static_cast<double>(it->get<std::int64_t>());
  };
  t.self_cpu_total = {integer(doc, "self_cpu_total_ns", ""), 0};
  t.self_cuda_total = {integer(doc, "self_cuda_total_ns", ""), 0};
  t.has_self_cpu_total = t.has_self_cuda_total = true;
  t.has_cpu = t.has_cuda = t.has_pct = t.has_avg = t.has_stats = true;
  auto rows = doc.find("rows");
  if (rows == doc.end()) bad("missing \"rows\"");
  if (!rows->is_array()) bad("\"rows\" is not an array");
  t.rows.reserve(rows->size());
  for (std::size_t i = 0; i < rows->size(); ++i) {
    const json& r = (*rows)[i];
    const std::string where = fmt::format("rows[{}]: ", i);
    if (!r.is_object()) bad(where + "not an object");
    TableRowData row;
    row.line = i + 1;
    auto str = [&](const char* key) {
      auto it = r.find(key);
      if (it == r.end()) bad(fmt::format("{}missing \"{}\"", where, key));
      if (!it->is_string()) bad(fmt::format("{}\"{}\" is not a string", where, key));
      return it->get<std::string>();
    };
    row.name = str("name");
    row.kind = str("kind");
    const double calls = integer(r, "calls", where);
    if (calls < 0) bad(where + "\"calls\" is negative");
    row.calls = static_cast<std::int64_t>(calls);
    row.self_cpu = {integer(r, "self_cpu_ns", where), 0};
    row.cpu_total = {integer(r, "cpu_total_ns", where), 0};
    row.self_cuda = {integer(r, "self_cuda_ns", where), 0};
    row.cuda_total = {integer(r, "cuda_total_ns", where), 0};
    row.self_cpu_pct = {num(r, "self_cpu_pct", where), 0, false};
    row.cpu_total_pct = {num(r, "cpu_total_pct", where), 0, false};
    row.self_cuda_pct = {num(r, "self_cuda_pct", where), 0, false};
    row.cpu_avg = {
        r.contains("cpu_time_avg_ns") ? num(r, "cpu_time_avg_ns", where) : (calls > 0 ? row.cpu_total.ns / calls : 0),
        0};
    row.cuda_avg = {r.contains("cuda_time_avg_ns") ? num(r, "cuda_time_avg_ns", where)
                                                   : (calls > 0 ? row.cuda_total.ns / calls : 0),
                    0};
    row.median = {num(r, "median_ns", where), 0};
    row.min = {integer(r, "min_ns", where), 0};
    row.max = {integer(r, "max_ns", where), 0};
    t.rows.push_back(std::move(row));
  }
  return t;
}

}  // namespace

TableData parse_table(std::string_view data, const std::string& label) {
  std::size_t i = 0;
  while (i < data.size() && (data[i] == ' ' || data[i] == '\n' || data[i] == '\r' || data[i] == '\t')) ++i;
  if (i < data.size() && data[i] == '{') return parse_json_table(data, label);
  if (data.find('\0') != std::string_view::npos) throw InputError(label + ": not a key_averages() table (binary data)");
  return parse_text(data, label);
}

TableData read_table(const std::filesystem::path& path) {
  const std::string p = path.string();
  return parse_table(scan::read_input(p), p);
}

}  // namespace xb
