// Why a fixture's samples spread: the NVML clock-event (throttle) reasons and clocks read before
// and after its sampling (FixtureTiming::gpu_before/gpu_after), in words for summary.md, the console
// and events.json. Plain C++; CPU-tested in tests/cpu/test_noise_causes.cpp.
#pragma once

#include <string>
#include <vector>

#include "bench/core/fixture_records.h"

namespace xb {

/// A relative SM or memory clock change between the two snapshots above which the clocks are said
/// to have moved: 2% (the H200's power-capped GEMMs oscillate over 1500 to 1680 MHz, docs/qualify.md;
/// a snapshot is one reading, so smaller moves are within one oscillation's reading).
inline constexpr double kClockMoved = 0.02;

/// What NVML saw around one fixture's sampling.
struct NoiseCauses {
  bool read = false;                 ///< both snapshots were read (else causes is empty)
  std::vector<std::string> reasons;  ///< NVML reason names set before or after (throttle_reason_names)
  /// In words, in this order, each where it applies: "power cap (SwPowerCap)", "thermal slowdown
  /// (SwThermalSlowdown, HwThermalSlowdown)", "hardware slowdown (HwSlowdown, HwPowerBrakeSlowdown)",
  /// "SM clock moved 1980 -> 1620 MHz", "memory clock moved A -> B MHz".
  std::vector<std::string> causes;
  /// One line: the causes joined with "; ", or why none is named: "NVML saw no throttle reason and
  /// steady clocks (SM 1980 MHz): other processes or the host" / "NVML not read: <error>".
  std::string text() const;
  std::string why_not;                ///< when !read: the snapshots' error
  int sm_before = -1, sm_after = -1;  ///< SM clock, MHz (-1 not read)
};

/// The causes of `t`'s spread (see NoiseCauses).
NoiseCauses noise_causes(const FixtureTiming& t);

/// The samples' relative standard deviation (a fraction) above which the console and summary.md
/// say why `t`'s samples spread (noise_causes), whether or not the median converged: the
/// fixture's noise target, t.stopping.max_noise_fraction, taken as an RSD. Not the stopping rule
/// (which bounds the median's interval, not the spread): a threshold of its own that reads the
/// same number, so that a spread is explained wherever it exceeds the precision the user asked for.
inline double spread_note_rsd(const FixtureTiming& t) { return t.stopping.max_noise_fraction; }

}  // namespace xb
