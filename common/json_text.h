// Internal helper for writing JSON text by hand (trace exporters, raw session writer). Not part of
// the public model API: only profiler/*.cpp include this.
//
// JsonOut writes into a fixed chunk buffer with a raw pointer and drains it into an std::ostream
// when full, so multi-hundred-megabyte traces are written without building a JSON tree and
// without per-append overhead. Every method reserves the room it needs itself.
#pragma once

#include <cstdint>
#include <cstring>
#include <ostream>
#include <stdexcept>
#include <string_view>
#include <type_traits>
#include <vector>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include <fmt/format.h>

namespace xb::detail {

/// 10^0 .. 10^19: every power of ten a uint64_t holds (the writer's digit count here and the
/// reader's exact decimal scaling in validate/json_scan.cpp).
inline constexpr std::uint64_t kPow10[20] = {1ull,
                                             10ull,
                                             100ull,
                                             1000ull,
                                             10000ull,
                                             100000ull,
                                             1000000ull,
                                             10000000ull,
                                             100000000ull,
                                             1000000000ull,
                                             10000000000ull,
                                             100000000000ull,
                                             1000000000000ull,
                                             10000000000000ull,
                                             100000000000000ull,
                                             1000000000000000ull,
                                             10000000000000000ull,
                                             100000000000000000ull,
                                             1000000000000000000ull,
                                             10000000000000000000ull};

/// Length of the valid UTF-8 sequence starting at s[i] (2..4), or 0 when it is not valid UTF-8
/// (overlong forms, surrogates and code points past U+10FFFF are invalid).
inline std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  std::size_t len = 0;
  std::uint32_t min_cp = 0;
  std::uint32_t cp = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
    min_cp = 0x80;
    cp = b0 & 0x1Fu;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    min_cp = 0x800;
    cp = b0 & 0x0Fu;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    min_cp = 0x10000;
    cp = b0 & 0x07u;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0u) != 0x80u) return 0;
    cp = (cp << 6) | (b & 0x3Fu);
  }
  if (cp < min_cp || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

/// A chunked JSON text writer over an std::ostream. Call finish() at the end; it throws
/// std::runtime_error when the stream failed. Destroying it without finish() drops the tail.
class JsonOut {
 public:
  explicit JsonOut(std::ostream& out, std::size_t chunk = std::size_t{1} << 20)
      : out_(out), buf_(chunk), p_(buf_.data()), end_(buf_.data() + buf_.size()) {}
  JsonOut(const JsonOut&) = delete;
  JsonOut& operator=(const JsonOut&) = delete;
  ~JsonOut() = default;

  /// Makes room for n more bytes: drains the buffer, and grows it for a single item larger than it.
  void reserve(std::size_t n) {
    if (static_cast<std::size_t>(end_ - p_) < n) make_room(n);
  }

  /// A string literal (already valid JSON text, e.g. `,"ts":`); N includes the terminating NUL.
  template <std::size_t N>
  void lit(const char (&text)[N]) {
    reserve(N - 1);
    std::memcpy(p_, text, N - 1);
    p_ += N - 1;
  }

  /// Raw JSON text of any length.
  void raw(std::string_view text) {
    reserve(text.size());
    std::memcpy(p_, text.data(), text.size());
    p_ += text.size();
  }

  void ch(char c) {
    reserve(1);
    *p_++ = c;
  }

  /// An integer in decimal.
  template <typename Int>
  void integer(Int value) {
    reserve(kMaxInteger);
    p_ = put_integer(p_, value);
  }

  /// `ns` as microseconds with exactly three decimals ("-0.005" for -5), by integer arithmetic;
  /// the whole int64 range, INT64_MIN included.
  void us(std::int64_t ns) {
    reserve(kMaxUs);
    p_ = put_us(p_, ns);
  }

  /// A finite double in its shortest round-trip form; throws std::invalid_argument for NaN or
  /// infinity (JSON has neither).
  void number(double value) {
    reserve(kMaxNumber);
    p_ = put_number(p_, value);
  }

  /// `s` as a quoted JSON string: escapes quotes, backslashes and control characters, and
  /// replaces bytes that are not valid UTF-8 with U+FFFD, so the output always parses.
  void string(std::string_view s) {
    reserve(string_room(s.size()));
    p_ = put_string(p_, s);
  }

  // Unchecked writing for hot loops: begin(n) makes room for n bytes and returns the write
  // position, the put_* functions below write at a position and return the new one (a local
  // pointer stays in a register; the members would be reloaded after every store), and
  // commit() ends the run. The caller bounds n: literals by their length, integers by
  // kMaxInteger, microseconds by kMaxUs, doubles by kMaxNumber, strings by string_room().
  static constexpr std::size_t kMaxInteger = 21;
  static constexpr std::size_t kMaxUs = 26;
  static constexpr std::size_t kMaxNumber = 40;
  static constexpr std::size_t string_room(std::size_t size) { return size * 6 + 2; }  // every byte as \u00XX
  char* begin(std::size_t n) {
    reserve(n);
    return p_;
  }
  void commit(char* p) { p_ = p; }

  /// A string literal (valid JSON text); N includes the terminating NUL.
  template <std::size_t N>
  static char* put_lit(char* p, const char (&text)[N]) {
    std::memcpy(p, text, N - 1);
    return p + N - 1;
  }
  static char* put_raw(char* p, std::string_view text) {
    std::memcpy(p, text.data(), text.size());
    return p + text.size();
  }
  /// An integer in decimal (at most kMaxInteger bytes).
  template <typename Int>
  static char* put_integer(char* p, Int value) {
    static_assert(std::is_integral_v<Int>, "integer() takes integers");
    if constexpr (std::is_signed_v<Int>) {
      if (value < 0) {
        *p++ = '-';
        return write_decimal(p, std::uint64_t{0} - static_cast<std::uint64_t>(static_cast<std::int64_t>(value)));
      }
    }
    return write_decimal(p, static_cast<std::uint64_t>(value));
  }
  /// A finite double in its shortest round-trip form (at most kMaxNumber bytes); throws
  /// std::invalid_argument for NaN or infinity.
  static char* put_number(char* p, double value) {
    if (!(value == value) || value - value != 0.0) {
      throw std::invalid_argument("cannot write NaN or infinity as JSON");
    }
    return fmt::format_to(p, "{}", value);
  }
  /// `ns` as microseconds with exactly three decimals (at most kMaxUs bytes).
  static char* put_us(char* p, std::int64_t ns) {
    std::uint64_t magnitude = static_cast<std::uint64_t>(ns);
    if (ns < 0) {
      *p++ = '-';
      magnitude = std::uint64_t{0} - magnitude;
    }
    p = write_decimal(p, magnitude / 1000);
    const auto frac = static_cast<unsigned>(magnitude % 1000);
    p[0] = '.';
    p[1] = static_cast<char>('0' + frac / 100);
    std::memcpy(p + 2, kDigitPairs + 2 * (frac % 100), 2);
    return p + 4;
  }
  /// Writes `s` at p as a quoted JSON string of at most string_room(s.size()) bytes, as string()
  /// does.
  static char* put_string(char* p, std::string_view s) {
    *p++ = '"';
    for (std::size_t i = 0; i < s.size();) {
#ifdef __SSE2__
      // Fast path: copy 16 plain ASCII bytes at a time (no control char, quote, backslash or
      // byte >= 0x80 among them); the store may run past the string's end into reserved room.
      {
        const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'), space = _mm_set1_epi8(0x20);
        while (i + 16 <= s.size()) {
          const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + i));
          // Signed compare: bytes >= 0x80 count as < 0x20 too.
          const __m128i stop =
              _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)), _mm_cmplt_epi8(v, space));
          _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v);
          const int mask = _mm_movemask_epi8(stop);
          if (mask != 0) {
            const int plain = __builtin_ctz(static_cast<unsigned>(mask));
            p += plain;
            i += static_cast<std::size_t>(plain);
            break;
          }
          p += 16;
          i += 16;
        }
      }
#endif
      // Copy 8 plain ASCII bytes at a time (no control char, quote, backslash or byte >= 0x80
      // among them).
      while (i + 8 <= s.size()) {
        std::uint64_t word;
        std::memcpy(&word, s.data() + i, 8);
        if (!plain_ascii(word)) break;
        std::memcpy(p, &word, 8);
        p += 8;
        i += 8;
      }
      if (i >= s.size()) break;
      const auto c = static_cast<unsigned char>(s[i]);
      if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
        *p++ = static_cast<char>(c);
        ++i;
        continue;
      }
      if (c >= 0x80) {
        const std::size_t len = utf8_sequence_length(s, i);
        if (len != 0) {
          std::memcpy(p, s.data() + i, len);
          p += len;
          i += len;
        } else {
          std::memcpy(p, "\\ufffd", 6);
          p += 6;
          ++i;
        }
        continue;
      }
      *p++ = '\\';
      switch (c) {
        case '"':
          *p++ = '"';
          break;
        case '\\':
          *p++ = '\\';
          break;
        case '\n':
          *p++ = 'n';
          break;
        case '\r':
          *p++ = 'r';
          break;
        case '\t':
          *p++ = 't';
          break;
        case '\b':
          *p++ = 'b';
          break;
        case '\f':
          *p++ = 'f';
          break;
        default: {
          static constexpr char kHex[] = "0123456789abcdef";
          p[0] = 'u';
          p[1] = '0';
          p[2] = '0';
          p[3] = kHex[c >> 4];
          p[4] = kHex[c & 0xF];
          p += 5;
          break;
        }
      }
      ++i;
    }
    *p++ = '"';
    return p;
  }

  /// Writes everything buffered and flushes; throws std::runtime_error when the stream failed.
  void finish() {
    drain();
    out_.flush();
    if (!out_) throw std::runtime_error("JSON output stream failed");
  }

 private:
  void drain() {
    const std::size_t used = static_cast<std::size_t>(p_ - buf_.data());
    if (used != 0) out_.write(buf_.data(), static_cast<std::streamsize>(used));
    p_ = buf_.data();
  }
  static constexpr char kDigitPairs[] =
      "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
      "8081828384858687888990919293949596979899";

  /// Number of decimal digits of v (1 for 0), from its bit length: no division loop.
  static int decimal_digits(std::uint64_t v) {
    // Digits of the largest value of each bit length 1..64, and 10^k thresholds below which a
    // value of that bit length has one digit fewer.
    static constexpr std::uint8_t kDigitsOfBits[65] = {
        1,  1,  1,  1,  2,  2,  2,  3,  3,  3,  4,  4,  4,  4,  5,  5,  5,  6,  6,  6,  7,  7,
        7,  7,  8,  8,  8,  9,  9,  9,  10, 10, 10, 10, 11, 11, 11, 12, 12, 12, 13, 13, 13, 13,
        14, 14, 14, 15, 15, 15, 16, 16, 16, 16, 17, 17, 17, 18, 18, 18, 19, 19, 19, 19, 20};
    const int bits = v == 0 ? 0 : 64 - __builtin_clzll(v);
    const int digits = kDigitsOfBits[bits];
    return digits - (v < kPow10[digits - 1] ? 1 : 0);
  }

  /// Writes v in decimal at p (at most 20 bytes); returns the end. One and two digits (most ids,
  /// counts and dimensions) inline, longer numbers out of line.
  static char* write_decimal(char* p, std::uint64_t v) {
    if (v < 10) {
      *p = static_cast<char>('0' + v);
      return p + 1;
    }
    if (v < 100) {
      std::memcpy(p, kDigitPairs + 2 * v, 2);
      return p + 2;
    }
    return write_long_decimal(p, v);
  }
  /// write_decimal for v >= 100.
  static char* write_long_decimal(char* p, std::uint64_t v) {
    char* end = p + decimal_digits(v);
    char* q = end;
    while (v > 0xFFFFFFFFu) {
      q -= 2;
      std::memcpy(q, kDigitPairs + 2 * (v % 100), 2);
      v /= 100;
    }
    auto w = static_cast<std::uint32_t>(v);  // 32-bit divisions from here on: cheaper
    while (w >= 100) {
      q -= 2;
      std::memcpy(q, kDigitPairs + 2 * (w % 100), 2);
      w /= 100;
    }
    if (w >= 10) {
      q -= 2;
      std::memcpy(q, kDigitPairs + 2 * w, 2);
    } else {
      *--q = static_cast<char>('0' + w);
    }
    return end;
  }

  /// True when none of the 8 bytes is < 0x20, '"', '\\' or >= 0x80.
  static bool plain_ascii(std::uint64_t w) {
    constexpr std::uint64_t ones = 0x0101010101010101ull;
    constexpr std::uint64_t highs = 0x8080808080808080ull;
    const auto has_zero = [](std::uint64_t x) { return (x - ones) & ~x & highs; };
    const std::uint64_t high = w & highs;                          // bytes >= 0x80
    const std::uint64_t control = (w - ones * 0x20) & ~w & highs;  // bytes < 0x20 (valid when no high bit)
    const std::uint64_t quote = has_zero(w ^ (ones * static_cast<unsigned char>('"')));
    const std::uint64_t backslash = has_zero(w ^ (ones * static_cast<unsigned char>('\\')));
    return (high | control | quote | backslash) == 0;
  }

  void make_room(std::size_t n) {
    drain();
    if (buf_.size() < n) {
      buf_.resize(n);
      p_ = buf_.data();
      end_ = buf_.data() + buf_.size();
    }
  }

  std::ostream& out_;
  std::vector<char> buf_;
  char* p_;
  char* end_;
};

}  // namespace xb::detail
