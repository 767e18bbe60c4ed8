// ns <-> us text conversions (profiler/units.h).
#include "profiler/units.h"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "profiler/json_text.h"

namespace xb {

std::string format_us(std::int64_t ns) {
  fmt::memory_buffer buf;
  detail::append_us(buf, ns);
  return fmt::to_string(buf);
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
