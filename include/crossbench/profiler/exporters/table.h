// The key_averages()-style table (docs/formats.md, "table.json"), built from the event model.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "common/stats.h"  // median_of, which the table uses (and bench through this header)
#include "profiler/model/event_model.h"

namespace xb {

/// One row: all events of one (name, kind). Times in ns.
struct TableRow {
  std::string name;
  std::string kind;  ///< kernel, gpu_memcpy, gpu_memset, user_annotation, cpu_op, cuda_runtime, cuda_driver
  std::int64_t calls = 0;
  std::int64_t self_cpu_ns = 0;
  std::int64_t cpu_total_ns = 0;
  std::int64_t self_cuda_ns = 0;
  std::int64_t cuda_total_ns = 0;
  double self_cpu_pct = 0;
  double cpu_total_pct = 0;
  double self_cuda_pct = 0;
  double median_ns = 0;  ///< of per-call durations (device time for device rows, CPU total otherwise)
  std::int64_t min_ns = 0;
  std::int64_t max_ns = 0;
  double cpu_time_avg_ns() const { return calls ? double(cpu_total_ns) / double(calls) : 0.0; }
  double cuda_time_avg_ns() const { return calls ? double(cuda_total_ns) / double(calls) : 0.0; }
  bool is_device() const { return kind == "kernel" || kind == "gpu_memcpy" || kind == "gpu_memset"; }
};

/// The whole table: rows plus the two totals the percentages are taken of (ns).
struct Table {
  std::vector<TableRow> rows;  ///< sorted by cuda_total_ns descending, then name, then kind
  std::int64_t self_cpu_total_ns = 0;
  std::int64_t self_cuda_total_ns = 0;
};

/// Builds the table (definitions in docs/formats.md). Sync events are not rows. Host-range
/// children are found through parent_id (ranges) and external_id (API calls); a range's Self CPU
/// is clamped at 0 (children longer than the parent, e.g. clock skew) and every percentage at
/// 100, so no row can exceed 100%.
Table build_table(const Session& session);

/// PyTorch's text layout (right-aligned columns of width 12 separated by two spaces, times as
/// "<us with 3 decimals>us", percentages with 2 decimals) plus Median/Min/Max columns after
/// "# of Calls" and the two totals. The name column is as wide as the longest name + 4; names
/// longer than 120 characters are cut to 117 + "..." (text only).
void write_table_text(const Table& table, std::ostream& out);

/// table.json, with the session's metadata block.
void write_table_json(const Table& table, const SessionMeta& meta, std::ostream& out);

}  // namespace xb
