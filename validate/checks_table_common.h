// Helpers the table checks share (checks_table.cpp: kernel_stats, table_rows;
// checks_table_totals.cpp: table_totals): how a text table prints a time, which of the trace's
// rows a text table lacks and why, and when a grouped table's groups may be cut. Internal.
#pragma once

#include <string>
#include <vector>

#include "validate/checks.h"

namespace xb::vd {

/// A time as the table prints it: PyTorch's _format_time (3 decimals of us, ms or s) for a text
/// table (`res` > 0, its print resolution in ns), integer ns for table.json (res 0). `ns` in ns.
std::string print_time(double ns, double res);

/// Rows the trace implies that a text table does not have, and whether each was plausibly cut
/// by row_limit (cut_by_row_limit's reason, "" when it should have been printed).
struct Absent {
  RowKey key;
  std::string cut_reason;
};
std::vector<Absent> absent_rows(const Model& m);

/// Why a grouped table's sums of one name may fall short of the trace: groups cut by row_limit
/// or top_level_events_only. "" when the table shows every group (or the table is not grouped).
std::string groups_may_be_cut(const Model& m);

}  // namespace xb::vd
