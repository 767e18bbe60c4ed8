// Helpers the table checks share (checks_table.cpp: kernel_stats, table_rows;
// checks_table_totals.cpp: table_totals): how a text table prints a time, which of the trace's
// rows a text table lacks and which of key_averages().table()'s options left each out, and when
// a grouped table's groups may be cut. Internal.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "validate/checks.h"

namespace xb::vd {

/// A time as the table prints it: PyTorch's _format_time (3 decimals of us, ms or s) for a text
/// table (`res` > 0, its print resolution in ns), integer ns for table.json (res 0). `ns` in ns.
std::string print_time(double ns, double res);

/// Why a row of the trace is not in a text table.
enum class AbsentWhy {
  TopLevel,  ///< top_level_events_only=True and its first event has a CPU parent (reproduced)
  RowLimit,  ///< below the table's last row under its sort key: cut by row_limit (reproduced)
  Unknown,   ///< the table may have been cut in a way the trace does not reproduce (`reason`)
  Missing,   ///< PyTorch's _build_table would have printed it
};

/// A row (or, in a table judged group by group, a group) of the trace that the table lacks.
struct Absent {
  RowKey key;
  std::uint32_t shapes = kNone;  ///< its group's shapes (Model::by_shapes), else kNone
  AbsentWhy why = AbsentWhy::Missing;
  std::string reason;  ///< the rule or option that left it out (not for Missing)
};

/// Which of the trace's rows a text table shows, as PyTorch's _build_table selects them: rows
/// sorted (stably, descending) by the sort key, those whose first event has a CPU parent skipped
/// under top_level_events_only, then the first row_limit printed. The sort key is the column the
/// table is ordered by (or key_averages' first-seen order for sort_by=None), row_limit its
/// number of rows; both are read off the table, the values from the trace.
struct TableCut {
  std::vector<Absent> absent;  ///< sorted by key
  std::string sort_key;        ///< sort_by as PyTorch spells it ("cuda_time_total", "None"); "" unknown
  std::size_t printed = 0;     ///< rows the table prints (its row_limit when that cut it)
  std::size_t top_level = 0, row_limit = 0, unknown = 0, missing = 0;  ///< absent rows by why
  /// Rows left out by an option (top_level, row_limit, unknown): the table's sums cannot reach
  /// its totals.
  std::size_t cut() const { return top_level + row_limit + unknown; }
  /// The options that left rows out, as a phrase ("top_level_events_only=True and row_limit=10
  /// (sort_by='cuda_time_total')"); "" when none did.
  std::string options() const;
  /// How many rows each option left out ("12 by top_level_events_only=True (their first event
  /// has a CPU parent), 40 by row_limit=10 (sort_by='count': they rank after the last row)").
  std::string counts() const;
};
TableCut table_cut(const Model& m);

/// Why a grouped table judged by name (group_by_stack_n, group_by_overload_name, or input shapes
/// the trace does not carry) may sum a name's groups short of the trace: groups cut by row_limit
/// or top_level_events_only. "" when the table shows every group (or is judged group by group).
std::string groups_may_be_cut(const Model& m);

}  // namespace xb::vd
