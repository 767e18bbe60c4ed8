// Reading key_averages()-style tables for the validator: crossbench's table.json, and the text
// tables of PyTorch's `prof.key_averages().table()` and crossbench's table.txt.
//
// Text tables print times with a unit ("12.345us", "1.234ms", "2.000s") and percentages with two
// decimals, so every value read from text carries the resolution it was printed at: a check that
// compares it allows half that resolution. Long names are cut ("...") in text tables; the table
// keeps them as printed and marks them, and the validator matches them to trace names by prefix.
//
// Units: nanoseconds (as doubles: averages and medians are fractional).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace xb {

/// A time read from a table: value and the resolution it was printed with (0 = exact).
struct TableTime {
  double ns = 0;
  double res_ns = 0;  ///< "12.345us": 1; "1.234ms": 1000; "2.000s": 1e6; table.json: 0
};

/// A percentage read from a table, with its print resolution (0.01 for "12.34%", 0 for JSON).
struct TablePct {
  double pct = 0;
  double res = 0;
  bool nan = false;         ///< PyTorch prints "NaN" when the column's total is 0
  bool async_zero = false;  ///< the integer "0": PyTorch's CPU total % of an async event (no value)
};

/// One table row. Columns a table does not have stay 0 (see TableData::has_*).
struct TableRowData {
  std::string name;      ///< as printed; may end with "..." when cut
  bool cut = false;      ///< the name ends with "...": it may be a cut prefix of the real name
  std::string kind;      ///< table.json "kind" (kernel, gpu_memcpy, ...); "" in text tables
  std::size_t line = 0;  ///< text: 1-based line number; JSON: rows[] index + 1
  std::int64_t calls = 0;
  TableTime self_cpu, cpu_total, self_cuda, cuda_total, cpu_avg, cuda_avg;
  TablePct self_cpu_pct, cpu_total_pct, self_cuda_pct;
  TableTime median, min, max;  ///< crossbench's extra columns (has_stats)
  /// profile_memory columns ("CPU Mem", "Self CPU Mem", "<DEVICE> Mem", "Self <DEVICE> Mem"):
  /// bytes, with the resolution printed ("12.34 KB": 10.24; "0 B": 1).
  double cpu_mem = 0, self_cpu_mem = 0, dev_mem = 0, self_dev_mem = 0, mem_res = 0;
  double flops = -1;               ///< "Total <unit>FLOPs" cell scaled to FLOPs; -1 for "--"/absent
  std::int64_t node_id = -1;       ///< "Node ID" column (-1 when absent)
  std::string overload_name;       ///< "Overload Name" cell (group_by_overload_name)
  std::string input_shapes;        ///< "Input Shapes" cell as printed (group_by_input_shape)
  bool shapes_cut = false;         ///< the shapes cell fills its column: it may be cut
  std::vector<std::string> stack;  ///< "Source Location" cell and its continuation lines
};

/// A whole table.
struct TableData {
  std::string path;     ///< as given, for messages
  std::string file;     ///< file name
  bool json = false;    ///< crossbench table.json (else a text table)
  nlohmann::json meta;  ///< table.json "crossbench" block (null for text)
  std::vector<TableRowData> rows;
  TableTime self_cpu_total, self_cuda_total;
  bool has_cpu = false;    ///< Self CPU / CPU total columns
  bool has_cuda = false;   ///< Self CUDA / CUDA total columns
  bool has_pct = false;    ///< percentage columns
  bool has_avg = false;    ///< CPU/CUDA time avg columns
  bool has_stats = false;  ///< median/min/max columns
  bool has_self_cpu_total = false, has_self_cuda_total = false;
  bool has_mem = false;       ///< CPU Mem / Self CPU Mem columns (profile_memory)
  bool has_shapes = false;    ///< Input Shapes column: rows are (name, input shapes) groups
  bool has_stack = false;     ///< Source Location column: rows are (name, stack) groups
  bool has_overload = false;  ///< Overload Name column: rows are (name, overload) groups
  bool has_node_id = false;   ///< Node ID column
  bool has_flops = false;     ///< Total <unit>FLOPs column
  /// key_averages().table(top_level_events_only=True): "This report only display top-level ops
  /// statistics" above the header; only rows whose event has no CPU parent are printed.
  bool top_level_only = false;
  std::string header_text;  ///< table(header=...) line(s) printed above the table
  /// True when rows are groups finer than a name (Input Shapes, Source Location, Overload Name).
  bool grouped() const { return has_shapes || has_stack || has_overload; }
  std::string device_label = "CUDA";  ///< "CUDA" (or "Device", "XPU", ... as printed)
  /// A subject for messages: "table.txt line 7 'aten::mm'" or "table.json row 3 'aten::mm'".
  std::string where(const TableRowData& r) const;
};

/// Reads a table file: JSON when its first non-blank byte is '{' (crossbench table.json), text
/// otherwise. Throws InputError (common/errors.h) naming the file and what is wrong:
/// missing, not a key_averages() table (no rule/header with "Name" and "# of Calls"), a cell
/// that is not a time/percentage/count, NaN or Infinity, a table.json of the wrong format.
TableData read_table(const std::filesystem::path& path);

/// Parses table text or JSON from memory; `label` stands for the file in messages.
TableData parse_table(std::string_view data, const std::string& label);

}  // namespace xb
