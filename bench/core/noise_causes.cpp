// Why a fixture is noisy (see noise_causes.h).
#include "bench/core/noise_causes.h"

#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "kernels/nvml_probe.h"

namespace xb {
namespace {

std::string joined(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

bool moved(int before, int after) {
  return before > 0 && after > 0 && std::fabs(static_cast<double>(after - before)) > kClockMoved * before;
}

}  // namespace

std::string NoiseCauses::text() const {
  if (!read) return "NVML not read" + (why_not.empty() ? std::string() : ": " + why_not);
  if (!causes.empty()) return joined(causes, "; ");
  return fmt::format("NVML saw no throttle reason and steady clocks (SM {} MHz): other processes or the host",
                     sm_before);
}

NoiseCauses noise_causes(const FixtureTiming& t) {
  NoiseCauses c;
  const GpuClockSample& b = t.gpu_before;
  const GpuClockSample& a = t.gpu_after;
  c.read = b.valid && a.valid;
  if (!c.read) {
    c.why_not = !b.valid ? b.error : a.error;
    return c;
  }
  c.sm_before = b.sm_clock_mhz;
  c.sm_after = a.sm_clock_mhz;
  const std::uint64_t mask = b.throttle_reasons | a.throttle_reasons;
  c.reasons = throttle_reason_names(mask);
  namespace ce = clocks_event;
  const auto group = [&](const char* what, std::uint64_t bits) {
    if ((mask & bits) != 0)
      c.causes.push_back(fmt::format("{} ({})", what, joined(throttle_reason_names(mask & bits), ", ")));
  };
  group("power cap", ce::kSwPowerCap);
  group("thermal slowdown", ce::kSwThermalSlowdown | ce::kHwThermalSlowdown);
  group("hardware slowdown", ce::kHwSlowdown | ce::kHwPowerBrakeSlowdown);
  if (moved(b.sm_clock_mhz, a.sm_clock_mhz))
    c.causes.push_back(fmt::format("SM clock moved {} -> {} MHz", b.sm_clock_mhz, a.sm_clock_mhz));
  if (moved(b.mem_clock_mhz, a.mem_clock_mhz)) {
    c.causes.push_back(fmt::format("memory clock moved {} -> {} MHz", b.mem_clock_mhz, a.mem_clock_mhz));
  }
  return c;
}

}  // namespace xb
