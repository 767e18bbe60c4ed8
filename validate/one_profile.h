// Whether the files given together are of one profile (issue 37 item 5). A table printed from
// another profile than its trace, two traces of different sessions, or a crossbench file of
// another recording is unusable input, refused in one line (InputError, exit 2), never turned
// into findings that blame the files or PyTorch. docs/validator.md "Files of one profile".
//
// The rule reads only figures that PyTorch's key_averages() takes from the trace's events without
// any of its nesting arithmetic (torch/autograd/profiler_util.py, PyTorch 2.11): a device row's
// Self CUDA is the sum of its activities' durations, a host row's CPU total the sum of its events'
// durations, the Self CUDA footer the sum of every device activity (FunctionEvent.
// self_device_time_total, cpu_time_total; _build_table's totals, taken over all events before
// row_limit). A table of the trace's profile agrees with them whatever PyTorch's defects; a table
// of another profile contradicts them almost everywhere. So a table is refused only when its
// contradicting figures outnumber its agreeing ones two to one: one corrupted cell of a table of
// this profile stays a finding of the check meant for it, while the few figures two recordings of
// one workload share by chance (a kernel's time on the GPU's timer ticks) do not hide a mismatch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "validate/events_reader.h"
#include "validate/table_reader.h"
#include "validate/trace_reader.h"

namespace xb::vd {

/// What a trace fixes about every table of its profile, per display name ("ProfilerStep#N" is
/// "ProfilerStep*"). Built in one pass (and one sort of the host events), independent of any table.
struct TraceFigures {
  struct Name {
    std::int64_t events = 0;         ///< events of this name, every category
    std::int64_t device_ns = 0;      ///< durations of its device activities (kernel, memcpy, memset)
    bool device_only = true;         ///< no host event nor GPU span has this name
    std::int64_t host_ns = 0;        ///< durations of its host events (ranges, API calls, overhead)
    std::int64_t host_outer_ns = 0;  ///< of those, the events inside no other host event of this name
    std::uint32_t host_cats = 0;     ///< one bit per TraceCat of its host events
  };
  std::string file;                                 ///< the trace's file name, for messages
  std::unordered_map<std::uint32_t, Name> by_name;  ///< display name id -> figures
  std::vector<std::uint32_t> names;                 ///< display name ids, in first-seen order
  std::int64_t device_ns = 0;                       ///< every device activity's duration, summed
  std::size_t device_events = 0;
  std::int64_t host_ns = 0;       ///< every host event's duration, summed
  std::int64_t ops_cover_ns = 0;  ///< time covered by CPU ops and API calls (their union)
};

/// The figures of trace `t` (names interned into `names`, which read `t`).
TraceFigures trace_figures(const TraceData& t, NameTable& names);

/// A table's figures that the trace fixes, compared with it.
struct ProfileEvidence {
  std::size_t agree = 0;     ///< figures the table prints as the trace implies
  std::size_t disagree = 0;  ///< figures no table of the trace's profile can print
  std::string first;         ///< the first contradiction, in words
  /// True when the table is not of the trace's profile: contradictions outnumber agreements 2:1.
  bool not_one_profile() const { return disagree > 0 && disagree >= 2 * agree; }
};

/// Compares table `tb` with trace figures `tr` (`names`: the table the figures were interned in).
ProfileEvidence compare_table(const TableData& tb, const TraceFigures& tr, const NameTable& names);

/// Throws InputError (one line: which files, how many figures contradict, an example) when the
/// files given together are not of one profile: the table against the primary (first) trace by
/// compare_table (unless both carry a crossbench window, which decides); two traces whose events' time ranges do not
/// meet (two exports of one session hold the same events) or whose crossbench windows start apart; a crossbench
/// table.json or events.json whose window starts apart from the primary trace's.
void require_one_profile(const std::vector<TraceData>& traces, const TableData* table, const EventsData* events,
                         NameTable& names);

}  // namespace xb::vd
