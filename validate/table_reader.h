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
  bool nan = false;  ///< PyTorch prints "NaN" when the column's total is 0
};

/// One table row. Columns a table does not have stay 0 (see TableData::has_*).
struct TableRowData {
  std::string name;         ///< as printed; may end with "..." when cut
  bool cut = false;         ///< the name ends with "...": it may be a cut prefix of the real name
  std::string kind;         ///< table.json "kind" (kernel, gpu_memcpy, ...); "" in text tables
  std::size_t line = 0;     ///< text: 1-based line number; JSON: rows[] index + 1
  std::int64_t calls = 0;
  TableTime self_cpu, cpu_total, self_cuda, cuda_total, cpu_avg, cuda_avg;
  TablePct self_cpu_pct, cpu_total_pct, self_cuda_pct;
  TableTime median, min, max;  ///< crossbench's extra columns (has_stats)
};

/// A whole table.
struct TableData {
  std::string path;  ///< as given, for messages
  std::string file;  ///< file name
  bool json = false; ///< crossbench table.json (else a text table)
  nlohmann::json meta;  ///< table.json "crossbench" block (null for text)
  std::vector<TableRowData> rows;
  TableTime self_cpu_total, self_cuda_total;
  bool has_cpu = false;        ///< Self CPU / CPU total columns
  bool has_cuda = false;       ///< Self CUDA / CUDA total columns
  bool has_pct = false;        ///< percentage columns
  bool has_avg = false;        ///< CPU/CUDA time avg columns
  bool has_stats = false;      ///< median/min/max columns
  bool has_self_cpu_total = false, has_self_cuda_total = false;
  std::string device_label = "CUDA";  ///< "CUDA" (or "Device", "XPU", ... as printed)
  /// A subject for messages: "table.txt line 7 'aten::mm'" or "table.json row 3 'aten::mm'".
  std::string where(const TableRowData& r) const;
};

/// Reads a table file: JSON when its first non-blank byte is '{' (crossbench table.json), text
/// otherwise. Throws InputError (profiler/session_io.h) naming the file and what is wrong:
/// missing, not a key_averages() table (no rule/header with "Name" and "# of Calls"), a cell
/// that is not a time/percentage/count, NaN or Infinity, a table.json of the wrong format.
TableData read_table(const std::filesystem::path& path);

/// Parses table text or JSON from memory; `label` stands for the file in messages.
TableData parse_table(std::string_view data, const std::string& label);

}  // namespace xb
