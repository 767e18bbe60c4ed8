// ns <-> us text conversions (common/units.h).
#include "common/units.h"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace xb {

std::string format_us(std::int64_t ns) {
  const bool negative = ns < 0;
  const std::uint64_t magnitude =
      negative ? std::uint64_t{0} - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
  return fmt::format("{}{}.{:03}", negative ? "-" : "", magnitude / 1000, magnitude % 1000);
}

std::int64_t us_to_ns(double us) {
  const double ns = us * 1000.0;
  // Beyond +-2^63 llround is undefined; anything past 2^53 is no longer exact anyway.
  if (!std::isfinite(ns) || std::fabs(ns) >= 9.2e18) {
    throw std::invalid_argument(fmt::format("us_to_ns: {} us is not a representable time", us));
  }
  return std::llround(ns);
}

}  // namespace xb
