// Internal to validate/: a strict, streaming JSON scanner for large Chrome traces.
//
// Source is a refillable window over a byte stream (a plain file, a gzip file, or memory). The
// scanning functions work on a Cursor into that window and throw NeedMore when they reach the end
// of the window before the value ends and more input may follow; the caller then keeps the bytes
// from the start of the unit it was parsing (one trace event, one top-level member), refills and
// parses that unit again. Units commit their results only once complete, so a retry is safe.
//
// The grammar is RFC 8259 in full (strings with escapes, surrogate pairs and valid UTF-8, number
// syntax, literals, nesting capped at kMaxDepth): anything else throws ScanError with the byte
// position. NaN and Infinity are rejected with their own message. Nothing here allocates on the
// hot path except when a string carries escapes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace xb::scan {

/// Deepest nesting of arrays/objects accepted (deeper input is an error, never a stack overflow).
inline constexpr int kMaxDepth = 256;

/// The window ended inside a value and more input may follow: refill and retry the unit.
struct NeedMore {};

/// Malformed input at `at` (a pointer into the current window; nullptr when unknown).
struct ScanError : std::runtime_error {
  ScanError(const std::string& what, const char* where) : std::runtime_error(what), at(where) {}
  const char* at;
};

/// A refillable window over a byte stream: plain file, gzip file (detected by its magic bytes),
/// or memory (plain or gzip). Offsets are into the decompressed stream.
class Source {
 public:
  /// Opens a file. Throws std::runtime_error("missing (no such file)", "cannot open: ...",
  /// "a directory") with no path prefix; the caller adds the path.
  static std::unique_ptr<Source> open_file(const std::string& path);
  /// A view of memory (not copied: `data` must outlive the Source); gzip data is inflated.
  static std::unique_ptr<Source> from_memory(std::string_view data);

  virtual ~Source() = default;
  const char* begin() const { return begin_; }
  const char* end() const { return end_; }
  /// No input follows end().
  bool eof() const { return eof_; }
  /// Byte offset of a pointer into the current window.
  std::uint64_t offset(const char* p) const { return base_ + static_cast<std::uint64_t>(p - begin_); }
  /// Drops the bytes before `keep`, reads more after end() (growing the window when `keep` is
  /// already its start and it is full) and returns where `keep`'s byte now is. Throws ScanError
  /// on a read or decompression error.
  const char* refill(const char* keep);
  /// True when the stream was gzip.
  bool gzip() const { return gzip_; }

 protected:
  Source() = default;
  /// Reads up to n bytes into dst; 0 = end of input. Throws ScanError on failure.
  virtual std::size_t read(char* dst, std::size_t n) = 0;

  std::vector<char> buf_;
  const char* begin_ = nullptr;
  const char* end_ = nullptr;
  bool eof_ = false;
  bool gzip_ = false;
  std::uint64_t base_ = 0;
};

/// Reads a whole (plain or gzip) file into a string. Throws std::runtime_error as open_file and
/// ScanError on a corrupt gzip stream.
std::string read_all(const std::string& path);
/// read_all, with any failure rethrown as InputError("<path>: <what>") (exit code 2 in the CLIs).
std::string read_input(const std::string& path);

/// The scanning position: [p, end) is what is left of the window.
struct Cursor {
  const char* p;
  const char* end;
  bool eof;
  /// Called at the end of the window: NeedMore, or a truncation error when nothing follows.
  [[noreturn]] void more() const {
    if (!eof) throw NeedMore{};
    throw ScanError("unexpected end of input (the file is truncated)", p);
  }
  bool at_end() const { return p == end; }
};

[[noreturn]] void unexpected(const Cursor& c, const char* wanted);

inline void skip_ws(Cursor& c) {
  for (;;) {
    if (c.p == c.end) c.more();
    const char ch = *c.p;
    if (ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t') {
      ++c.p;
      continue;
    }
    return;
  }
}

/// Skips whitespace and returns the next byte (not consumed).
inline char peek(Cursor& c) {
  skip_ws(c);
  return *c.p;
}

/// Skips whitespace and consumes `ch`, or throws naming `wanted`.
inline void expect(Cursor& c, char ch, const char* wanted) {
  skip_ws(c);
  if (*c.p != ch) unexpected(c, wanted);
  ++c.p;
}

/// Parses the string starting at c.p (which must be '"'). The result views the window when the
/// string has no escapes, else `scratch`; it stays valid until the next refill or reuse of
/// `scratch`.
std::string_view string_slow(Cursor& c, const char* start, std::string& scratch);

namespace detail {
/// 1 for bytes that may appear unescaped in a string and end nothing: 0x20..0x7F except '"', '\\'.
extern const std::uint8_t kPlain[256];
inline bool word_is_plain(std::uint64_t w) {
  constexpr std::uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
  const std::uint64_t quote = w ^ (ones * '"'), bslash = w ^ (ones * '\\');
  const std::uint64_t zero_q = (quote - ones) & ~quote & highs;
  const std::uint64_t zero_b = (bslash - ones) & ~bslash & highs;
  const std::uint64_t ctrl = (w - ones * 0x20) & ~w & highs;  // some byte < 0x20
  return ((w & highs) | zero_q | zero_b | ctrl) == 0;
}
}  // namespace detail

inline std::string_view string(Cursor& c, std::string& scratch) {
  if (c.p == c.end) c.more();
  if (*c.p != '"') unexpected(c, "a string");
  const char* start = ++c.p;
  const char* p = c.p;
  for (;;) {
    while (c.end - p >= 8) {
      std::uint64_t w;
      std::memcpy(&w, p, 8);
      if (!detail::word_is_plain(w)) break;
      p += 8;
    }
    if (p == c.end) {
      c.p = p;
      c.more();
    }
    const auto ch = static_cast<unsigned char>(*p);
    if (detail::kPlain[ch]) {
      ++p;
      continue;
    }
    if (ch == '"') {
      c.p = p + 1;
      return std::string_view(start, static_cast<std::size_t>(p - start));
    }
    c.p = p;
    return string_slow(c, start, scratch);
  }
}

/// A validated JSON number token [b, e).
struct Number {
  const char* b = nullptr;
  const char* e = nullptr;
  bool integral = true;  ///< no fraction and no exponent
  /// Set by scanners that decode while validating: the token is [-]digits[.digits] with at most
  /// 18 digits in all, whose value is (neg ? -1 : 1) * mant / 10^frac.
  bool simple = false;
  bool neg = false;
  std::uint8_t frac = 0;
  std::uint64_t mant = 0;
  bool present() const { return b != nullptr; }
};

/// Parses a number at c.p (validating the grammar; NaN/Infinity get their own error).
Number number(Cursor& c);

/// Exact conversions of a number token. Each throws ScanError (at the token) when the value is
/// not representable: `what` names the field in the message. The common decoded forms (Number::
/// simple) convert inline; everything else goes through the general conversions in json_scan.cpp.
std::int64_t to_i64_general(const Number& n, const char* what);
std::uint64_t to_u64_general(const Number& n, const char* what);
std::int64_t us_to_ns_general(const Number& n, const char* what);
inline std::int64_t to_i64(const Number& n, const char* what) {
  if (n.simple && n.frac == 0) return n.neg ? -static_cast<std::int64_t>(n.mant) : static_cast<std::int64_t>(n.mant);
  return to_i64_general(n, what);
}
inline std::uint64_t to_u64(const Number& n, const char* what) {
  if (n.simple && n.frac == 0 && (!n.neg || n.mant == 0)) return n.mant;
  return to_u64_general(n, what);
}
double to_double(const Number& n, const char* what);
/// A number token as a JSON value: an exact unsigned or signed 64-bit integer where it is one,
/// else a double (what nlohmann's parser would give). Throws ScanError when out of range.
nlohmann::json number_value(const Number& n);
/// A microsecond number converted to integer nanoseconds exactly from its decimal text
/// ("5080739996078.23" -> 5080739996078230); more than 3 decimals round half away from zero.
inline std::int64_t us_to_ns(const Number& n, const char* what) {
  if (n.simple && n.frac <= 3 && n.mant < 1000000000000000ull) {
    static constexpr std::int64_t kScale[4] = {1000, 100, 10, 1};
    const std::int64_t v = static_cast<std::int64_t>(n.mant) * kScale[n.frac];
    return n.neg ? -v : v;
  }
  return us_to_ns_general(n, what);
}

/// Skips any value (validating it). `depth` is the nesting level of the enclosing container.
void skip_value(Cursor& c, int depth = 0);
/// Parses any value into a JSON tree (for small blocks such as "crossbench").
nlohmann::json value(Cursor& c, int depth = 0);

/// Consumes "true", "false" or "null" at c.p; throws otherwise.
void literal(Cursor& c);

}  // namespace xb::scan
