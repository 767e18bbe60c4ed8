// Per-sample SM clocks from the blocking kernel's counter readings (see sm_clock.h).
#include "bench/core/sm_clock.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "common/stats.h"

namespace xb {

std::optional<double> window_sm_clock_mhz(const SmCounters& from, const SmCounters& to, std::int64_t event_ns,
                                          SmClockAbsent& why) {
  if (from.written == 0 || to.written == 0 || to.clock64 <= from.clock64 || to.globaltimer_ns <= from.globaltimer_ns) {
    ++why.unreadable;
    return std::nullopt;
  }
  if (from.smid != to.smid) {
    ++why.other_sm;
    return std::nullopt;
  }
  const std::uint64_t window_ns = to.globaltimer_ns - from.globaltimer_ns;
  if (window_ns < static_cast<std::uint64_t>(kClockWindowMinNs)) {
    ++why.short_window;
    return std::nullopt;
  }
  if (static_cast<double>(window_ns) > kClockWindowMaxEventFactor * static_cast<double>(event_ns)) {
    ++why.host_gap;
    return std::nullopt;
  }
  // cycles per ns = GHz; x 1000 = MHz.
  const double mhz = static_cast<double>(to.clock64 - from.clock64) / static_cast<double>(window_ns) * 1000.0;
  return std::round(mhz * 10.0) / 10.0;
}

SampleClocks sample_sm_clocks(const std::vector<BlockReadings>& readings, const std::vector<std::int64_t>& event_ns) {
  if (readings.size() != event_ns.size())
    throw std::invalid_argument("sample_sm_clocks: one reading and one event interval per sample");
  SampleClocks c;
  c.mhz.reserve(readings.size());
  for (std::size_t i = 0; i + 1 < readings.size(); ++i)
    c.mhz.push_back(window_sm_clock_mhz(readings[i].release, readings[i + 1].start, event_ns[i], c.absent));
  if (!readings.empty()) {
    c.mhz.emplace_back();
    c.absent.last = 1;
  }
  return c;
}

std::optional<SmClockRange> sm_clock_range(const std::vector<std::optional<double>>& mhz) {
  std::vector<double> present;
  for (const auto& m : mhz)
    if (m) present.push_back(*m);
  if (present.empty()) return std::nullopt;
  const SampleStats st = compute_stats(present);
  return SmClockRange{present.size(), st.min, st.median, st.max};
}

bool sm_clocks_differ(const SmClockRange& a, const SmClockRange& b, double tolerance) {
  const double lo = std::min(a.median_mhz, b.median_mhz);
  return lo > 0 && std::fabs(a.median_mhz - b.median_mhz) > tolerance * lo;
}

}  // namespace xb
