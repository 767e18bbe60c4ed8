// The trace reader's fast paths (internal to validate/, included by validate/trace_scan.cpp only):
// header-only so that they inline into the Reader's loop as before the split.
#pragma once

#include <cstring>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "validate/trace_scan.h"

namespace xb::trace_detail {

// ---------------------------------------------------------------------------------------------
// Fast path: one traceEvents element parsed with plain pointer loops over a window known to hold
// plenty of bytes. It accepts a strict subset of JSON (strings without escapes or non-ASCII
// bytes, nesting up to 8 levels) and fills the same RawEvent as the slow path; on anything else
// (or the end of the window) it returns nullptr and the strict slow path parses the element
// again, producing the same result or the precise error.
namespace fast {

#define XB_ALWAYS_INLINE inline __attribute__((always_inline))

XB_ALWAYS_INLINE const char* ws(const char* p, const char* e) {
  while (p < e && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) ++p;
  return p;
}

/// A plain string at p ('"'): ASCII 0x20..0x7F without escapes.
XB_ALWAYS_INLINE const char* str(const char* p, const char* e, std::string_view& out) {
  if (p >= e || *p != '"') return nullptr;
  const char* s = ++p;
#ifdef __SSE2__
  // 16 bytes at a time: stop at '"', '\\', a control byte or a non-ASCII byte.
  const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'), space = _mm_set1_epi8(0x20);
  while (e - p >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i stop = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)),
                                      _mm_cmplt_epi8(v, space));  // signed: bytes >= 0x80 are < 0x20 too
    const int mask = _mm_movemask_epi8(stop);
    if (mask != 0) {
      p += __builtin_ctz(static_cast<unsigned>(mask));
      break;
    }
    p += 16;
  }
#endif
  while (e - p >= 8) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    if (!scan::detail::word_is_plain(w)) break;
    p += 8;
  }
  while (p < e) {
    const auto ch = static_cast<unsigned char>(*p);
    if (scan::detail::kPlain[ch]) {
      ++p;
      continue;
    }
    if (ch == '"') {
      out = std::string_view(s, static_cast<std::size_t>(p - s));
      return p + 1;
    }
    return nullptr;
  }
  return nullptr;
}

inline bool digit(char ch) { return ch >= '0' && ch <= '9'; }

/// Value of 8 decimal digits already reduced to 0..9 per byte, the first digit in the lowest byte
/// (little-endian load of the text): three multiplications instead of eight (simdjson's
/// parse_eight_digits_unrolled).
XB_ALWAYS_INLINE std::uint64_t eight_digits(std::uint64_t v) {
  v = v * 10 + (v >> 8);
  return (((v & 0x000000FF000000FFull) * 0x000F424000000064ull) +
          (((v >> 16) & 0x000000FF000000FFull) * 0x0000271000000001ull)) >>
         32;
}

/// The run of ASCII digits at p: appends them to `mant` (mod 2^64) and counts them; returns the
/// first byte after the run. Eight bytes at a time while at least eight remain in the window.
XB_ALWAYS_INLINE const char* digit_run(const char* p, const char* e, std::uint64_t& mant, std::size_t& count) {
  static constexpr std::uint64_t kPow10[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};
  while (e - p >= 8) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    // Digits become 0..9; any other byte gets a bit in its high nibble, either directly or once 6
    // is added (a carry out of a non-digit byte only disturbs the bytes after it).
    const std::uint64_t t = w ^ 0x3030303030303030ull;
    const std::uint64_t stop = (t | (t + 0x0606060606060606ull)) & 0xF0F0F0F0F0F0F0F0ull;
    if (stop == 0) {
      mant = mant * 100000000u + eight_digits(t);
      count += 8;
      p += 8;
      continue;
    }
    const unsigned k = static_cast<unsigned>(__builtin_ctzll(stop)) >> 3;  // digits before the stop
    if (k != 0) {
      // Shift the k digits to the top bytes: the zero bytes below act as leading zeros.
      mant = mant * kPow10[k] + eight_digits(t << (8 * (8 - k)));
      count += k;
      p += k;
    }
    return p;
  }
  while (p < e && digit(*p)) {
    mant = mant * 10 + static_cast<unsigned>(*p - '0');
    ++count;
    ++p;
  }
  return p;
}

/// True for the bytes that may end a number inside an object or array: ',', '}', ']' (one
/// table load instead of three compares).
struct ClosesNumber {
  bool table[256] = {};
  constexpr ClosesNumber() : table() {
    table[static_cast<unsigned char>(',')] = true;
    table[static_cast<unsigned char>('}')] = true;
    table[static_cast<unsigned char>(']')] = true;
  }
};
inline constexpr ClosesNumber kClosesNumber{};
XB_ALWAYS_INLINE bool closes_number(char d) { return kClosesNumber.table[static_cast<unsigned char>(d)]; }

/// A number at p, validated as RFC 8259 requires and followed by a delimiter; plain decimals of
/// up to 18 digits are decoded on the way (Number::simple).
XB_ALWAYS_INLINE const char* num(const char* p, const char* e, Number& n) {
  n.b = p;
  // The common forms first: an integer or a plain decimal ("123", "1234.567") with a leading
  // digit 1..9 and a ',', '}' or ']' right after it. Anything else takes the general path below.
  if (e - p >= 40 && *p >= '1' && *p <= '9') {
    std::uint64_t mant = 0;
    std::size_t digits = 0;
    const char* q = digit_run(p, e, mant, digits);
    if (q < e && closes_number(*q)) {
      n.integral = true;
      n.neg = false;
      n.frac = 0;
      n.e = q;
      n.mant = mant;
      n.simple = digits <= 18;
      return q;
    }
    if (q < e && *q == '.' && q + 1 < e && digit(q[1])) {
      const std::size_t before = digits;
      const char* f = digit_run(q + 1, e, mant, digits);
      if (f < e && closes_number(*f)) {
        n.integral = false;
        n.neg = false;
        n.frac = static_cast<std::uint8_t>(std::min<std::size_t>(digits - before, 255));
        n.e = f;
        n.mant = mant;
        n.simple = digits <= 18;
        return f;
      }
    }
  }
  n.integral = true;
  n.neg = false;
  n.frac = 0;
  std::uint64_t mant = 0;
  std::size_t digits = 0;
  if (p < e && *p == '-') {
    n.neg = true;
    ++p;
  }
  if (p >= e) return nullptr;
  if (*p == '0') {
    ++p;
  } else if (*p >= '1' && *p <= '9') {
    p = digit_run(p, e, mant, digits);
  } else {
    return nullptr;
  }
  if (p < e && *p == '.') {
    n.integral = false;
    ++p;
    if (p >= e || !digit(*p)) return nullptr;
    const std::size_t before = digits;
    p = digit_run(p, e, mant, digits);
    n.frac = static_cast<std::uint8_t>(std::min<std::size_t>(digits - before, 255));
  }
  bool exponent = false;
  if (p < e && (*p == 'e' || *p == 'E')) {
    exponent = true;
    n.integral = false;
    ++p;
    if (p < e && (*p == '+' || *p == '-')) ++p;
    if (p >= e || !digit(*p)) return nullptr;
    while (p < e && digit(*p)) ++p;
  }
  if (p >= e) return nullptr;
  const char d = *p;
  if (!(d == ',' || d == '}' || d == ']' || d == ' ' || d == '\n' || d == '\r' || d == '\t')) return nullptr;
  n.e = p;
  n.mant = mant;
  n.simple = !exponent && digits <= 18;
  return p;
}

const char* skip(const char* p, const char* e, int depth);

inline const char* skip_container(const char* p, const char* e, int depth, char close) {
  if (depth > 8) return nullptr;
  ++p;
  p = ws(p, e);
  if (p < e && *p == close) return p + 1;
  for (;;) {
    if (close == '}') {
      if (p >= e || *p != '"') return nullptr;
      std::string_view k;
      if (!(p = str(p, e, k))) return nullptr;
      p = ws(p, e);
      if (p >= e || *p != ':') return nullptr;
      p = ws(p + 1, e);
    }
    if (!(p = skip(p, e, depth + 1))) return nullptr;
    p = ws(p, e);
    if (p >= e) return nullptr;
    if (*p == ',') {
      p = ws(p + 1, e);
      continue;
    }
    if (*p == close) return p + 1;
    return nullptr;
  }
}

inline const char* skip(const char* p, const char* e, int depth) {
  if (p >= e) return nullptr;
  switch (*p) {
    case '"': {
      std::string_view v;
      return str(p, e, v);
    }
    case '{':
      return skip_container(p, e, depth, '}');
    case '[':
      return skip_container(p, e, depth, ']');
    case 't':
      return e - p >= 4 && std::memcmp(p, "true", 4) == 0 ? p + 4 : nullptr;
    case 'f':
      return e - p >= 5 && std::memcmp(p, "false", 5) == 0 ? p + 5 : nullptr;
    case 'n':
      return e - p >= 4 && std::memcmp(p, "null", 4) == 0 ? p + 4 : nullptr;
    default: {
      Number n;
      return num(p, e, n);
    }
  }
}

/// pid/tid: a number or a plain string.
XB_ALWAYS_INLINE const char* id(const char* p, const char* e, Id& out) {
  if (p >= e) return nullptr;
  out.set = true;
  if (*p == '"') {
    out.text = true;
    return str(p, e, out.str);
  }
  out.text = false;
  return num(p, e, out.num);
}

inline const char* args(const char* p, const char* e, RawEvent& ev) {
  if (p >= e || *p != '{') return skip(p, e, 1);
  p = ws(p + 1, e);
  if (p < e && *p == '}') return p + 1;
  for (;;) {
    if (p >= e || *p != '"') return nullptr;
    std::string_view key;
    if (!(p = str(p, e, key))) return nullptr;
    p = ws(p, e);
    if (p >= e || *p != ':') return nullptr;
    p = ws(p + 1, e);
    if (p >= e) return nullptr;
    const bool is_num = *p == '-' || digit(*p);
    if (key.size() == 11 &&
        (std::memcmp(key.data(), "External id", 11) == 0 || std::memcmp(key.data(), "correlation", 11) == 0)) {
      if (!is_num) return nullptr;
      if (!(p = num(p, e, key[0] == 'E' ? ev.ext : ev.corr))) return nullptr;
    } else if (key.size() == 9 && std::memcmp(key.data(), "Parent id", 9) == 0) {
      if (!is_num) return nullptr;
      if (!(p = num(p, e, ev.parent))) return nullptr;
    } else if (key.size() == 10 && std::memcmp(key.data(), "Input Dims", 10) == 0) {
      const char* from = p;
      if (!(p = skip(p, e, 2))) return nullptr;
      ev.dims = std::string_view(from, static_cast<std::size_t>(p - from));
      ev.has_dims = true;
    } else if (!(p = skip(p, e, 2))) {
      return nullptr;
    }
    p = ws(p, e);
    if (p >= e) return nullptr;
    if (*p == ',') {
      p = ws(p + 1, e);
      continue;
    }
    if (*p == '}') return p + 1;
    return nullptr;
  }
}

/// One event object at p ('{').
inline const char* event(const char* p, const char* e, RawEvent& ev) {
  if (p >= e || *p != '{') return nullptr;
  p = ws(p + 1, e);
  if (p < e && *p == '}') return p + 1;
  for (;;) {
    if (p >= e || *p != '"') return nullptr;
    std::string_view key;
    if (!(p = str(p, e, key))) return nullptr;
    p = ws(p, e);
    if (p >= e || *p != ':') return nullptr;
    p = ws(p + 1, e);
    if (p >= e) return nullptr;
    const char v = *p;
    const bool is_str = v == '"', is_num = v == '-' || digit(v);
    switch (key.size()) {
      case 2:
        if (key[0] == 'p' && key[1] == 'h') {
          if (!is_str || !(p = str(p, e, ev.ph))) return nullptr;
          ev.has_ph = true;
        } else if (key[0] == 't' && key[1] == 's') {
          if (!is_num || !(p = num(p, e, ev.ts))) return nullptr;
        } else if (key[0] == 'i' && key[1] == 'd') {
          if (is_num) {
            if (!(p = num(p, e, ev.id))) return nullptr;
          } else {
            ev.id_text = true;
            if (!(p = skip(p, e, 1))) return nullptr;
          }
        } else if (key[0] == 'b' && key[1] == 'p') {
          if (!is_str || !(p = str(p, e, ev.bp))) return nullptr;
          ev.has_bp = true;
        } else if (!(p = skip(p, e, 1))) {
          return nullptr;
        }
        break;
      case 3:
        if (std::memcmp(key.data(), "cat", 3) == 0) {
          if (!is_str || !(p = str(p, e, ev.cat))) return nullptr;
          ev.has_cat = true;
        } else if (std::memcmp(key.data(), "pid", 3) == 0) {
          if (!(p = id(p, e, ev.pid))) return nullptr;
        } else if (std::memcmp(key.data(), "tid", 3) == 0) {
          if (!(p = id(p, e, ev.tid))) return nullptr;
        } else if (std::memcmp(key.data(), "dur", 3) == 0) {
          if (!is_num || !(p = num(p, e, ev.dur))) return nullptr;
        } else if (!(p = skip(p, e, 1))) {
          return nullptr;
        }
        break;
      case 4:
        if (std::memcmp(key.data(), "name", 4) == 0) {
          if (!is_str || !(p = str(p, e, ev.name))) return nullptr;
          ev.has_name = true;
        } else if (std::memcmp(key.data(), "args", 4) == 0) {
          if (!(p = args(p, e, ev))) return nullptr;
        } else if (!(p = skip(p, e, 1))) {
          return nullptr;
        }
        break;
      default:
        if (!(p = skip(p, e, 1))) return nullptr;
        break;
    }
    p = ws(p, e);
    if (p >= e) return nullptr;
    if (*p == ',') {
      p = ws(p + 1, e);
      continue;
    }
    if (*p == '}') return p + 1;
    return nullptr;
  }
}

/// Consumes the literal `lit` (compile-time length) at p.
template <std::size_t N>
XB_ALWAYS_INLINE const char* lit(const char* p, const char* e, const char (&text)[N]) {
  constexpr std::size_t n = N - 1;
  static_assert(n >= 2, "literal too short");
  if (static_cast<std::size_t>(e - p) < n) return nullptr;
  // Word compares (the literal's words fold to constants): 8 bytes at a time, the tail overlapping.
  auto word8 = [](const char* at) {
    std::uint64_t w;
    std::memcpy(&w, at, 8);
    return w;
  };
  if constexpr (n >= 8) {
    for (std::size_t i = 0; i + 8 <= n; i += 8)
      if (word8(p + i) != word8(text + i)) return nullptr;
    if constexpr (n % 8 != 0)
      if (word8(p + n - 8) != word8(text + n - 8)) return nullptr;
  } else if constexpr (n >= 4) {
    std::uint32_t a, b, c, d;
    std::memcpy(&a, p, 4);
    std::memcpy(&b, text, 4);
    std::memcpy(&c, p + n - 4, 4);
    std::memcpy(&d, text + n - 4, 4);
    if (a != b || c != d) return nullptr;
  } else {
    for (std::size_t i = 0; i < n; ++i)
      if (p[i] != text[i]) return nullptr;
  }
  return p + n;
}

/// A number at p whose value is not needed: a non-negative integer of 1 to 7 digits followed by
/// ',', '}' or ']' is checked with one 8-byte load; anything else goes through num().
XB_ALWAYS_INLINE const char* skip_num(const char* p, const char* e) {
  if (e - p >= 8) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    const std::uint64_t t = w ^ 0x3030303030303030ull;
    const std::uint64_t stop = (t | (t + 0x0606060606060606ull)) & 0xF0F0F0F0F0F0F0F0ull;
    if (stop != 0) {
      const unsigned k = static_cast<unsigned>(__builtin_ctzll(stop)) >> 3;
      // k digits, no leading zero unless the number is "0", then a delimiter.
      if (k != 0 && (k == 1 || *p != '0') && closes_number(p[k])) return p + k;
    }
  }
  Number n;
  return num(p, e, n);
}

/// crossbench's exporters write every event with the same keys in the same order and no
/// whitespace; matching those literals skips the per-key parsing. Any difference returns nullptr
/// and the general fast path (then the strict one) takes the element.
XB_ALWAYS_INLINE const char* args_layout(const char* p, const char* e, RawEvent& ev) {
  // p is just past `"args":{`.
  if (p < e && *p == '}') return p + 1;
  for (;;) {
    // Which known key this is, by its first letter, then one literal compare (the literals end
    // with `":`, so none is a prefix of another and the order of the tries does not matter).
    enum class Key { Other, External, Correlation, Parent, Skipped, Array };
    Key known = Key::Other;
    const char* q = nullptr;
    if (e - p >= 2) {
      switch (p[1]) {
        case 'E':
          if ((q = lit(p, e, "\"External id\":"))) known = Key::External;
          break;
        case 'c':
          if ((q = lit(p, e, "\"correlation\":"))) {
            known = Key::Correlation;
          } else if ((q = lit(p, e, "\"context\":")) || (q = lit(p, e, "\"cbid\":"))) {
            known = Key::Skipped;
          }
          break;
        case 'P':
          if ((q = lit(p, e, "\"Parent id\":"))) known = Key::Parent;
          break;
        case 'd':
          if ((q = lit(p, e, "\"device\":"))) known = Key::Skipped;
          break;
        case 's':
          if ((q = lit(p, e, "\"stream\":")) || (q = lit(p, e, "\"shared memory\":"))) known = Key::Skipped;
          break;
        case 'r':
          if ((q = lit(p, e, "\"registers per thread\":"))) known = Key::Skipped;
          break;
        case 'g':
          if ((q = lit(p, e, "\"grid\":["))) known = Key::Array;
          break;
        case 'b':
          if ((q = lit(p, e, "\"block\":["))) known = Key::Array;
          break;
        default:
          break;
      }
    }
    if (known == Key::External) {
      if (!(p = num(q, e, ev.ext))) return nullptr;
    } else if (known == Key::Correlation) {
      if (!(p = num(q, e, ev.corr))) return nullptr;
    } else if (known == Key::Parent) {
      if (!(p = num(q, e, ev.parent))) return nullptr;
    } else if (known == Key::Skipped) {
      if (!(p = skip_num(q, e))) return nullptr;
    } else if (known == Key::Array) {
      // An array of numbers.
      p = q;
      if (p < e && *p == ']') {
        ++p;
      } else {
        for (;;) {
          if (!(p = skip_num(p, e)) || p >= e) return nullptr;
          if (*p == ',') {
            ++p;
            continue;
          }
          if (*p != ']') return nullptr;
          ++p;
          break;
        }
      }
    } else {
      if (p >= e || *p != '"') return nullptr;
      std::string_view key;
      if (!(p = str(p, e, key))) return nullptr;
      if (p >= e || *p != ':') return nullptr;
      // a used key spelt differently, or Input Dims: the general path
      if (key.size() == 11 || key.size() == 9 || (key.size() == 10 && std::memcmp(key.data(), "Input Dims", 10) == 0))
        return nullptr;
      if (!(p = skip(p + 1, e, 2))) return nullptr;
    }
    if (p >= e) return nullptr;
    if (*p == ',') {
      ++p;
      continue;
    }
    if (*p == '}') return p + 1;
    return nullptr;
  }
}

/// An externalCorrelations entry as crossbench writes it: {"correlation":N,"External id":N,"kind":N}.
XB_ALWAYS_INLINE const char* ext_corr_layout(const char* p, const char* e, RawEvent& ev) {
  Number kind;
  if (!(p = lit(p, e, "{\"correlation\":")) || !(p = num(p, e, ev.corr))) return nullptr;
  if (!(p = lit(p, e, ",\"External id\":")) || !(p = num(p, e, ev.ext))) return nullptr;
  if (!(p = lit(p, e, ",\"kind\":")) || !(p = num(p, e, kind))) return nullptr;
  return p < e && *p == '}' ? p + 1 : nullptr;
}

/// At p (just past `"pid":`): the pid token, `,"tid":` and the tid token of one of the `known`
/// lanes, each token followed by ','. Returns the end of the tid token and sets ev's lane, or
/// nullptr (nothing consumed, nothing set) when neither lane matches.
XB_ALWAYS_INLINE const char* known_lane(const char* p, const char* e, const LaneTokens* known, RawEvent& ev) {
  if (e - p < 64) return nullptr;
  std::uint64_t w;
  std::memcpy(&w, p, 8);
  for (int i = 0; i < 2; ++i) {
    const LaneTokens& k = known[i];
    if (k.lane == RawEvent::kNoLane || (w & k.pid_mask) != k.pid_word || p[k.pid_len] != ',') continue;
    const char* q = lit(p + k.pid_len, e, ",\"tid\":");
    if (!q) return nullptr;
    std::uint64_t t;
    std::memcpy(&t, q, 8);
    if ((t & k.tid_mask) != k.tid_word || q[k.tid_len] != ',') continue;
    ev.pid.set = ev.tid.set = true;
    ev.pid.text = ev.tid.text = false;
    ev.known_lane = k.lane;
    return q + k.tid_len;
  }
  return nullptr;
}

/// At p (just past `"pid":`): the pid token, `,"tid":` and the tid token, as one of the `known`
/// lanes (known_lane) or else parsed into ev.pid and ev.tid. Returns the end of the tid token, or
/// nullptr when they do not parse.
XB_ALWAYS_INLINE const char* pid_tid(const char* p, const char* e, const LaneTokens* known, RawEvent& ev) {
  if (const char* q = known_lane(p, e, known, ev)) return q;
  if (!(p = id(p, e, ev.pid))) return nullptr;
  if (!(p = lit(p, e, ",\"tid\":"))) return nullptr;
  return id(p, e, ev.tid);
}

XB_ALWAYS_INLINE const char* event_layout(const char* p, const char* e, RawEvent& ev, const LaneTokens* known) {
  const char* q;
  if ((q = lit(p, e, "{\"ph\":\"X\",\"cat\":"))) {
    ev.ph = std::string_view(p + 7, 1);
    ev.has_ph = true;
    if (!(p = str(q, e, ev.cat))) return nullptr;
    ev.has_cat = true;
    if (!(p = lit(p, e, ",\"name\":")) || p >= e || *p != '"' || !(p = str(p, e, ev.name))) return nullptr;
    ev.has_name = true;
    if (!(p = lit(p, e, ",\"pid\":")) || !(p = pid_tid(p, e, known, ev))) return nullptr;
    if (!(p = lit(p, e, ",\"ts\":")) || !(p = num(p, e, ev.ts))) return nullptr;
    if (!(p = lit(p, e, ",\"dur\":")) || !(p = num(p, e, ev.dur))) return nullptr;
    if (!(p = lit(p, e, ",\"args\":{")) || !(p = args_layout(p, e, ev))) return nullptr;
    return p < e && *p == '}' ? p + 1 : nullptr;
  }
  if ((q = lit(p, e, "{\"ph\":\"s\",\"id\":")) || (q = lit(p, e, "{\"ph\":\"f\",\"id\":"))) {
    ev.ph = std::string_view(p + 7, 1);
    ev.has_ph = true;
    if (!(p = num(q, e, ev.id))) return nullptr;
    if (!(p = lit(p, e, ",\"pid\":")) || !(p = pid_tid(p, e, known, ev))) return nullptr;
    if (!(p = lit(p, e, ",\"ts\":")) || !(p = num(p, e, ev.ts))) return nullptr;
    if (!(p = lit(p, e, ",\"cat\":\"ac2g\",\"name\":\"ac2g\""))) return nullptr;
    ev.cat = std::string_view(p - 19, 4);
    ev.has_cat = true;
    ev.name = std::string_view(p - 5, 4);
    ev.has_name = true;
    if (const char* b = lit(p, e, ",\"bp\":\"e\"")) {
      ev.bp = std::string_view(b - 2, 1);
      ev.has_bp = true;
      p = b;
    }
    return p < e && *p == '}' ? p + 1 : nullptr;
  }
  return nullptr;
}

}  // namespace fast

}  // namespace xb::trace_detail
