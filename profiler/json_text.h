// Internal helpers for writing JSON text by hand (streaming exporters, raw session writer).
// Not part of the public model API: only profiler/*.cpp include this.
//
// Everything appends to a fmt::memory_buffer; JsonStream flushes that buffer to an std::ostream in
// large chunks, so multi-hundred-megabyte traces are written without building a JSON tree.
#pragma once

#include <cstdint>
#include <cstring>
#include <ostream>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

namespace xb::detail {

/// Appends `ns` as microseconds with exactly three decimals ("-0.005" for -5). Exact integer
/// arithmetic; handles the whole int64 range, INT64_MIN included.
inline void append_us(fmt::memory_buffer& buf, std::int64_t ns) {
  const bool negative = ns < 0;
  const std::uint64_t magnitude =
      negative ? std::uint64_t{0} - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
  if (negative) buf.push_back('-');
  const fmt::format_int whole(magnitude / 1000);
  buf.append(whole.data(), whole.data() + whole.size());
  const auto frac = static_cast<unsigned>(magnitude % 1000);
  const char digits[4] = {'.', static_cast<char>('0' + frac / 100),
                          static_cast<char>('0' + frac / 10 % 10), static_cast<char>('0' + frac % 10)};
  buf.append(digits, digits + 4);
}

/// Appends an integer in decimal.
template <typename Int>
inline void append_int(fmt::memory_buffer& buf, Int value) {
  const fmt::format_int text(value);
  buf.append(text.data(), text.data() + text.size());
}

/// Appends a finite double in its shortest round-trip form; throws std::invalid_argument for NaN
/// or infinity (JSON has neither).
inline void append_double(fmt::memory_buffer& buf, double value) {
  if (!(value == value) || value - value != 0.0) {
    throw std::invalid_argument("cannot write NaN or infinity as JSON");
  }
  fmt::format_to(std::back_inserter(buf), "{}", value);
}

/// Appends a literal (already valid JSON text, e.g. `,"ts":`).
inline void append_raw(fmt::memory_buffer& buf, std::string_view text) {
  buf.append(text.data(), text.data() + text.size());
}

/// Length of the valid UTF-8 sequence starting at s[i] (1..4), or 0 when it is not valid UTF-8.
inline std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  std::size_t len = 0;
  std::uint32_t min_cp = 0;
  std::uint32_t cp = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2, min_cp = 0x80, cp = b0 & 0x1Fu;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3, min_cp = 0x800, cp = b0 & 0x0Fu;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4, min_cp = 0x10000, cp = b0 & 0x07u;
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

/// Appends `s` as a quoted JSON string: escapes quotes, backslashes and control characters, and
/// replaces bytes that are not valid UTF-8 with U+FFFD, so the output always parses.
inline void append_string(fmt::memory_buffer& buf, std::string_view s) {
  buf.push_back('"');
  std::size_t run_start = 0;
  const auto flush_run = [&](std::size_t end) {
    buf.append(s.data() + run_start, s.data() + end);
  };
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
      ++i;
      continue;
    }
    if (c >= 0x80) {
      const std::size_t len = utf8_sequence_length(s, i);
      if (len != 0) {
        i += len;
        continue;
      }
      flush_run(i);
      append_raw(buf, "\\ufffd");
      run_start = ++i;
      continue;
    }
    flush_run(i);
    switch (c) {
      case '"': append_raw(buf, "\\\""); break;
      case '\\': append_raw(buf, "\\\\"); break;
      case '\n': append_raw(buf, "\\n"); break;
      case '\r': append_raw(buf, "\\r"); break;
      case '\t': append_raw(buf, "\\t"); break;
      case '\b': append_raw(buf, "\\b"); break;
      case '\f': append_raw(buf, "\\f"); break;
      default: fmt::format_to(std::back_inserter(buf), "\\u{:04x}", static_cast<unsigned>(c)); break;
    }
    run_start = ++i;
  }
  flush_run(s.size());
  buf.push_back('"');
}

/// A memory buffer that drains into an ostream whenever it grows past `chunk` bytes.
class JsonStream {
 public:
  explicit JsonStream(std::ostream& out, std::size_t chunk = std::size_t{1} << 20)
      : out_(out), chunk_(chunk) {}
  JsonStream(const JsonStream&) = delete;
  JsonStream& operator=(const JsonStream&) = delete;
  ~JsonStream() = default;  // callers must call finish(); a throwing path drops the rest

  fmt::memory_buffer& buf() { return buf_; }
  /// Writes the buffer out when it is larger than the chunk size.
  void maybe_flush() {
    if (buf_.size() >= chunk_) drain();
  }
  /// Writes everything buffered; throws std::runtime_error when the stream is in a failed state.
  void finish() {
    drain();
    out_.flush();
    if (!out_) throw std::runtime_error("JSON output stream failed");
  }

 private:
  void drain() {
    out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
  }
  std::ostream& out_;
  std::size_t chunk_;
  fmt::memory_buffer buf_;
};

}  // namespace xb::detail
