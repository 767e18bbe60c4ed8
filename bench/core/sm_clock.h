// The SM clock each sample ran at, from the blocking kernel's readings of its SM's own counters
// (kernels/sm_counters.h), as nvbench measures its clock (nvbench/detail/gpu_frequency: clock64
// cycles over %globaltimer ns between two readings of one SM) but without a kernel of its own in
// the timed stream: the readings come from the blocking kernel that already precedes every held
// sample. Plain C++, CPU-tested in tests/cpu/test_sm_clock.cpp; docs/metrics.md ("SM clock per
// sample") states the rules.
//
// Sample i's window runs from its blocking kernel's release reading to the start reading of
// sample i + 1's blocking kernel: it holds sample i's timed work (and, in cold mode, its L2 flush)
// and also the host's wait for the stop event and its next launch. Units: ns, cycles, MHz.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "kernels/sm_counters.h"

namespace xb {

/// A window longer than this many times its sample's event interval is dominated by the host's gap
/// (sync, bookkeeping, next launch) rather than the sample's work: its clock is not recorded. The
/// clock of an idle SM need not be the clock of a busy one, and a clock that is mostly the idle
/// gap's is not the sample's; dropped rather than marked so that every number in the array is a
/// clock measured mostly over the sample's own work (one array for every reader).
constexpr double kClockWindowMaxEventFactor = 2.0;

/// A window shorter than this is not recorded, ns: %globaltimer ticks about every microsecond on
/// recent GPUs (kernels/global_timer.cuh), so two readings are each up to ~1 us off, at most 1%
/// of 200 us.
constexpr std::int64_t kClockWindowMinNs = 200'000;

/// Why samples have no clock (their array entries are null), counted per fixture.
struct SmClockAbsent {
  int other_sm = 0;      ///< the window's two readings came from different SMs (clock64 not comparable)
  int host_gap = 0;      ///< window > kClockWindowMaxEventFactor x the sample's event interval
  int short_window = 0;  ///< window < kClockWindowMinNs
  int unreadable = 0;    ///< a reading was not written, or the counters did not advance
  int last = 0;          ///< the fixture's last sample: no later blocking kernel closes its window
  /// All of them: the number of null entries.
  int total() const { return other_sm + host_gap + short_window + unreadable + last; }
};

/// Per-sample clocks of one fixture and why some are absent.
struct SampleClocks {
  std::vector<std::optional<double>> mhz;  ///< one per sample, MHz rounded to 0.1; nullopt: absent
  SmClockAbsent absent;
};

/// The SM clock over one window, MHz: (to.clock64 - from.clock64) / (to.globaltimer_ns -
/// from.globaltimer_ns) x 1000, rounded to 0.1 MHz; nullopt, with `why` counted, when the readings
/// are of different SMs, either is unwritten, a counter did not advance, the window is shorter
/// than kClockWindowMinNs or longer than kClockWindowMaxEventFactor x `event_ns`.
std::optional<double> window_sm_clock_mhz(const SmCounters& from, const SmCounters& to, std::int64_t event_ns,
                                          SmClockAbsent& why);

/// Clocks of consecutive held samples: `readings[i]` are sample i's blocking kernel's, `event_ns[i]`
/// its whole event interval (all its calls), ns. Sample i's window is readings[i].release ->
/// readings[i + 1].start; the last sample has none (absent.last = 1). Throws std::invalid_argument
/// when the two vectors differ in length.
SampleClocks sample_sm_clocks(const std::vector<BlockReadings>& readings, const std::vector<std::int64_t>& event_ns);

/// A fixture's clock range over the samples that have one (summary.md, events.json stats.sm_clock,
/// bench compare and qualify).
struct SmClockRange {
  std::size_t samples = 0;  ///< samples with a clock
  double min_mhz = 0, median_mhz = 0, max_mhz = 0;
};

/// The range of the present entries of `mhz`; nullopt when none is present.
std::optional<SmClockRange> sm_clock_range(const std::vector<std::optional<double>>& mhz);

/// Whether two ranges' medians differ by more than `tolerance` (a fraction of the smaller): the
/// runs' clocks differ (qualify's report; 0.02 there, wider than the rounding and the timer's 1%).
bool sm_clocks_differ(const SmClockRange& a, const SmClockRange& b, double tolerance);

}  // namespace xb
