// Unit conversions. Internal unit: nanoseconds (integers). Chrome traces and tables show
// microseconds with exactly three decimals, so ns -> us text -> ns round-trips exactly.
#pragma once

#include <cstdint>
#include <string>

namespace xb {

/// Formats ns as microseconds with three decimals: 1234567 -> "1234.567", -5 -> "-0.005".
std::string format_us(std::int64_t ns);

/// Inverse of format_us for a parsed JSON number: llround(us * 1000). Exact for |us| < 2^43 / 1000.
/// Throws std::invalid_argument for NaN, infinity or a value outside the int64 ns range.
std::int64_t us_to_ns(double us);

}  // namespace xb
