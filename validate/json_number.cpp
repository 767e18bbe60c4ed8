// The number conversions of the streaming JSON scanner (validate/json_scan.h): a validated number
// token to int64, uint64, double, or a time in us to ns, exactly and with overflow checks. Split
// from json_scan.cpp (the token scanner), which finds the tokens these convert.
#include "validate/json_scan.h"

#include "common/json_text.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

namespace xb::scan {

namespace {

/// Decimal parts of a validated number token.
struct Decimal {
  bool neg = false;
  std::uint64_t mant = 0;  ///< significant digits (up to 19)
  int exp10 = 0;           ///< value = mant * 10^exp10
  bool overflow = false;   ///< more digits than fit: use the double path
};

Decimal decimal(const Number& n) {
  Decimal d;
  const char* p = n.b;
  if (*p == '-') {
    d.neg = true;
    ++p;
  }
  int digits = 0;
  int dropped = 0;  // integer digits dropped after 19 significant ones
  auto add = [&](char ch, bool frac) {
    if (digits == 0 && ch == '0') {
      if (frac) --d.exp10;
      return;
    }
    if (digits < 19) {
      d.mant = d.mant * 10 + static_cast<unsigned>(ch - '0');
      ++digits;
      if (frac) --d.exp10;
    } else {
      if (ch != '0') d.overflow = true;
      if (!frac) ++dropped;
    }
  };
  while (p < n.e && *p >= '0' && *p <= '9') add(*p++, false);
  if (p < n.e && *p == '.') {
    ++p;
    while (p < n.e && *p >= '0' && *p <= '9') add(*p++, true);
  }
  d.exp10 += dropped;
  if (p < n.e && (*p == 'e' || *p == 'E')) {
    ++p;
    bool eneg = false;
    if (*p == '+' || *p == '-') eneg = *p++ == '-';
    long e = 0;
    while (p < n.e && *p >= '0' && *p <= '9') {
      if (e < 100000) e = e * 10 + (*p - '0');
      ++p;
    }
    d.exp10 += static_cast<int>(eneg ? -e : e);
  }
  return d;
}

using xb::detail::kPow10;

/// mant * 10^shift as a signed 64-bit integer, rounding half away from zero for shift < 0.
/// Returns false when out of range.
bool scaled(const Decimal& d, int shift, std::int64_t& out) {
  std::uint64_t v;
  if (d.mant == 0) {
    out = 0;
    return true;
  }
  if (shift >= 0) {
    if (shift > 19) return false;
    const std::uint64_t f = kPow10[shift];
    if (d.mant > std::numeric_limits<std::uint64_t>::max() / f) return false;
    v = d.mant * f;
  } else {
    if (shift < -19) {
      out = 0;
      return true;
    }
    const std::uint64_t f = kPow10[-shift];
    v = d.mant / f;
    const std::uint64_t rem = d.mant % f;
    if (rem >= f - rem) ++v;  // rem >= f/2 without overflow
  }
  const std::uint64_t lim = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (v > lim + (d.neg ? 1u : 0u)) return false;
  out = d.neg ? static_cast<std::int64_t>(0 - v) : static_cast<std::int64_t>(v);
  return true;
}

double strtod_token(const Number& n) {
  char buf[64];
  const std::size_t len = static_cast<std::size_t>(n.e - n.b);
  if (len < sizeof buf) {
    std::memcpy(buf, n.b, len);
    buf[len] = '\0';
    return std::strtod(buf, nullptr);
  }
  return std::strtod(std::string(n.b, n.e).c_str(), nullptr);
}

[[noreturn]] void out_of_range(const Number& n, const char* what, const char* kind) {
  throw ScanError(std::string("\"") + what + "\" (" +
                      std::string(n.b, std::min<std::size_t>(40, static_cast<std::size_t>(n.e - n.b))) + ") is " + kind,
                  n.b);
}

}  // namespace

/// Plain integer tokens of up to 18 digits: the common case, converted without decimal().
inline bool small_int(const Number& n, std::int64_t& v) {
  if (!n.integral || n.e - n.b > 18) return false;
  const char* p = n.b;
  const bool neg = *p == '-';
  if (neg) ++p;
  std::int64_t x = 0;
  for (; p < n.e; ++p) x = x * 10 + (*p - '0');
  v = neg ? -x : x;
  return true;
}

std::int64_t to_i64_general(const Number& n, const char* what) {
  if (n.simple && n.frac == 0) return n.neg ? -static_cast<std::int64_t>(n.mant) : static_cast<std::int64_t>(n.mant);
  if (std::int64_t v; small_int(n, v)) return v;
  const Decimal d = decimal(n);
  if (d.overflow) out_of_range(n, what, "out of range");
  std::int64_t v = 0;
  if (d.exp10 >= 0) {
    if (!scaled(d, d.exp10, v)) out_of_range(n, what, "out of range");
    return v;
  }
  if (d.mant == 0) return 0;
  if (d.exp10 < -19 || d.mant % kPow10[-d.exp10] != 0) out_of_range(n, what, "not an integer");
  Decimal q = d;
  q.mant = d.mant / kPow10[-d.exp10];
  if (!scaled(q, 0, v)) out_of_range(n, what, "out of range");
  return v;
}

std::uint64_t to_u64_general(const Number& n, const char* what) {
  if (n.simple && n.frac == 0 && (!n.neg || n.mant == 0)) return n.mant;
  if (std::int64_t v; small_int(n, v) && v >= 0) return static_cast<std::uint64_t>(v);
  const Decimal d = decimal(n);
  if (d.neg && d.mant != 0) out_of_range(n, what, "negative");
  if (d.overflow) out_of_range(n, what, "out of range");
  if (d.exp10 >= 0) {
    if (d.mant == 0) return 0;
    if (d.exp10 > 19 || d.mant > std::numeric_limits<std::uint64_t>::max() / kPow10[d.exp10])
      out_of_range(n, what, "out of range");
    return d.mant * kPow10[d.exp10];
  }
  const std::uint64_t f = d.exp10 < -19 ? 0 : kPow10[-d.exp10];
  if (d.mant == 0) return 0;
  if (f == 0 || d.mant % f != 0) out_of_range(n, what, "not an integer");
  return d.mant / f;
}

double to_double(const Number& n, const char* what) {
  const double v = strtod_token(n);
  if (!std::isfinite(v)) out_of_range(n, what, "out of range");
  return v;
}

std::int64_t us_to_ns_general(const Number& n, const char* what) {
  if (n.simple && n.frac <= 3 && n.mant < 1000000000000000ull) {
    static constexpr std::int64_t kScale[4] = {1000, 100, 10, 1};
    const std::int64_t v = static_cast<std::int64_t>(n.mant) * kScale[n.frac];
    return n.neg ? -v : v;
  }
  // Plain decimal with at most 3 fraction digits and at most 15 integer digits.
  if (!(n.e - n.b > 24)) {
    const char* p = n.b;
    bool neg = false;
    if (*p == '-') {
      neg = true;
      ++p;
    }
    std::int64_t ip = 0;
    const char* ds = p;
    // Only the first 15 digits are accumulated (more would overflow int64 from the 19th on:
    // shared/reproducers/fuzz_trace-json_scan-718-overflow.bin); longer runs take the general path.
    while (p < n.e && *p >= '0' && *p <= '9') {
      if (p - ds < 15) ip = ip * 10 + (*p - '0');
      ++p;
    }
    if (p - ds <= 15) {
      std::int64_t frac = 0;
      int nf = 0;
      bool fast = true;
      if (p < n.e && *p == '.') {
        ++p;
        while (p < n.e && *p >= '0' && *p <= '9') {
          if (nf == 3) {
            fast = false;
            break;
          }
          frac = frac * 10 + (*p++ - '0');
          ++nf;
        }
      }
      if (fast && p == n.e) {
        while (nf < 3) {
          frac *= 10;
          ++nf;
        }
        const std::int64_t v = ip * 1000 + frac;
        return neg ? -v : v;
      }
    }
  }
  const Decimal d = decimal(n);
  std::int64_t v = 0;
  if (!d.overflow && scaled(d, d.exp10 + 3, v)) return v;
  if (d.overflow) {
    const double ns = strtod_token(n) * 1000.0;
    if (std::isfinite(ns) && std::fabs(ns) < 9.2e18) return std::llround(ns);
  }
  out_of_range(n, what, "out of range as a time in ns");
}

nlohmann::json number_value(const Number& n) {
  if (n.integral) {
    const Decimal d = decimal(n);
    if (!d.overflow) {
      if (!d.neg) {
        if (d.exp10 == 0 || d.mant == 0) return nlohmann::json(d.mant);
      } else {
        std::int64_t v = 0;
        if (scaled(d, d.exp10, v)) return nlohmann::json(v);
      }
    }
  }
  return nlohmann::json(to_double(n, "number"));
}

}  // namespace xb::scan
