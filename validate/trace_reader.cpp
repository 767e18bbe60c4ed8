// Streaming Chrome trace reader (validate/trace_reader.h).
#include "validate/trace_reader.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <unordered_map>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include <fmt/format.h>

#include "profiler/session_io.h"
#include "validate/json_scan.h"

namespace xb {

// ---------------------------------------------------------------------------------------------
// NameTable

namespace {

/// FxHash-style hash over 8-byte words. Long strings are sampled (length, first 16, middle 8 and
/// last 16 bytes): names that differ elsewhere only share a bucket chain, and intern() compares
/// whole strings anyway.
/// MurmurHash3's 64-bit finaliser: every input bit reaches the low bits used for the slots.
inline std::uint64_t fmix(std::uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 33);
}

std::uint64_t hash_bytes(std::string_view s) {
  constexpr std::uint64_t k = 0x517cc1b727220a95ull;
  std::uint64_t h = s.size() * k;
  const char* p = s.data();
  std::size_t n = s.size();
  auto mix = [&](const char* at) {
    std::uint64_t w;
    std::memcpy(&w, at, 8);
    h = (((h << 5) | (h >> 59)) ^ w) * k;
  };
  if (n > 40) {
    mix(p);
    mix(p + 8);
    mix(p + n / 2);
    mix(p + n - 16);
    mix(p + n - 8);
    return fmix(h);
  }
  while (n >= 8) {
    mix(p);
    p += 8;
    n -= 8;
  }
  if (n > 0) {
    std::uint64_t w = 0;
    std::memcpy(&w, p, n);
    h = (((h << 5) | (h >> 59)) ^ w) * k;
  }
  return fmix(h);
}

}  // namespace

NameTable::NameTable() : slots_(64, 0) {}

std::uint32_t NameTable::find(std::string_view s) const {
  const std::uint64_t h = hash_bytes(s);
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = h & mask;; i = (i + 1) & mask) {
    const std::uint32_t slot = slots_[i];
    if (slot == 0) return npos;
    if (hashes_[slot - 1] == h && strings_[slot - 1] == s) return slot - 1;
  }
}

std::uint32_t NameTable::intern(std::string_view s) {
  const std::uint64_t h = hash_bytes(s);
  std::size_t mask = slots_.size() - 1;
  for (std::size_t i = h & mask;; i = (i + 1) & mask) {
    const std::uint32_t slot = slots_[i];
    if (slot == 0) {
      const auto id = static_cast<std::uint32_t>(strings_.size());
      strings_.emplace_back(s);
      hashes_.push_back(h);
      slots_[i] = id + 1;
      if (strings_.size() * 2 > slots_.size()) grow();
      return id;
    }
    if (hashes_[slot - 1] == h && strings_[slot - 1] == s) return slot - 1;
  }
}

void NameTable::grow() {
  std::vector<std::uint32_t> next(slots_.size() * 2, 0);
  const std::size_t mask = next.size() - 1;
  for (std::uint32_t id = 0; id < strings_.size(); ++id) {
    std::size_t i = hashes_[id] & mask;
    while (next[i] != 0) i = (i + 1) & mask;
    next[i] = id + 1;
  }
  slots_.swap(next);
}

const char* to_string(TraceCat cat) {
  switch (cat) {
    case TraceCat::Kernel: return "kernel";
    case TraceCat::Memcpy: return "gpu_memcpy";
    case TraceCat::Memset: return "gpu_memset";
    case TraceCat::Runtime: return "cuda_runtime";
    case TraceCat::Driver: return "cuda_driver";
    case TraceCat::UserAnnotation: return "user_annotation";
    case TraceCat::CpuOp: return "cpu_op";
    case TraceCat::GpuUserAnnotation: return "gpu_user_annotation";
    case TraceCat::Sync: return "cuda_sync";
  }
  return "unknown";
}

std::string TraceLane::describe() const {
  const std::string p = pid_text.empty() ? std::to_string(pid) : "\"" + pid_text + "\"";
  const std::string t = tid_text.empty() ? std::to_string(tid) : "\"" + tid_text + "\"";
  return "pid " + p + " tid " + t;
}

// ---------------------------------------------------------------------------------------------
// Reader

namespace {

using scan::Cursor;
using scan::Number;
using scan::ScanError;

bool g_fast_paths = true;

/// Wrong shape (valid JSON, but not what a trace event must carry).
struct ShapeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class CatKind : std::uint8_t { Used, Trace, Flow, Other };

/// s == text, for a literal: a compare of known length, which the compiler inlines (a
/// string_view == would call memcmp with a run-time length).
template <std::size_t N>
inline bool is(std::string_view s, const char (&text)[N]) {
  return s.size() == N - 1 && std::memcmp(s.data(), text, N - 1) == 0;
}

/// Maps a "cat" string to a used category (PyTorch's old capitalised names included).
bool cat_of(std::string_view s, TraceCat& out, CatKind& kind) {
  kind = CatKind::Used;
  switch (s.size()) {
    case 6:
      if (is(s, "kernel") || is(s, "Kernel")) { out = TraceCat::Kernel; return true; }
      if (is(s, "cpu_op")) { out = TraceCat::CpuOp; return true; }
      if (is(s, "Memcpy")) { out = TraceCat::Memcpy; return true; }
      if (is(s, "Memset")) { out = TraceCat::Memset; return true; }
      break;
    case 10:
      if (is(s, "gpu_memcpy")) { out = TraceCat::Memcpy; return true; }
      if (is(s, "gpu_memset")) { out = TraceCat::Memset; return true; }
      break;
    case 12:
      if (is(s, "cuda_runtime")) { out = TraceCat::Runtime; return true; }
      break;
    case 11:
      if (is(s, "cuda_driver")) { out = TraceCat::Driver; return true; }
      break;
    case 15:
      if (is(s, "user_annotation")) { out = TraceCat::UserAnnotation; return true; }
      break;
    case 19:
      if (is(s, "gpu_user_annotation")) { out = TraceCat::GpuUserAnnotation; return true; }
      break;
    case 9:
      if (is(s, "cuda_sync")) { out = TraceCat::Sync; return true; }
      break;
    case 7:
      if (is(s, "Runtime")) { out = TraceCat::Runtime; return true; }
      break;
    case 5:
      if (is(s, "Trace")) { kind = CatKind::Trace; return false; }
      break;
    case 4:
      if (is(s, "ac2g")) { kind = CatKind::Flow; return false; }
      break;
    default: break;
  }
  kind = CatKind::Other;
  return false;
}

/// A pid or tid value: an integer or a string.
struct Id {
  bool set = false;
  bool text = false;
  Number num;
  std::string_view str;
};

/// The fields of one traceEvents entry, as parsed (views into the window or scratch buffers).
/// Fields are read only when their has_/present()/set flag says so; reset() clears just the
/// flags (zeroing the whole struct per element costs more than parsing small events).
struct RawEvent {
  static constexpr std::uint32_t kNoLane = 0xFFFFFFFFu;
  bool has_ph, has_cat, has_name, has_bp, id_text;
  std::string_view ph, cat, name, bp;
  Number ts, dur, id;
  Id pid, tid;
  Number ext, corr, parent;
  /// Set by the layout fast path when the pid and tid tokens were byte for byte those of a
  /// known lane (LaneTokens): the lane, without converting them; kNoLane otherwise.
  std::uint32_t known_lane;
  RawEvent() { reset(); }
  void reset() {
    has_ph = has_cat = has_name = has_bp = id_text = false;
    ts.b = dur.b = id.b = ext.b = corr.b = parent.b = nullptr;
    pid.set = tid.set = false;
    known_lane = kNoLane;
  }
};

/// The numeric pid and tid tokens (at most 8 bytes each, as loaded little-endian and masked to
/// their length) of a lane seen before. Equal bytes followed by ',' are the same valid JSON
/// numbers, hence the same lane.
struct LaneTokens {
  std::uint32_t lane = RawEvent::kNoLane;
  std::uint8_t pid_len = 0, tid_len = 0;
  std::uint64_t pid_word = 0, pid_mask = 0, tid_word = 0, tid_mask = 0;
};


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
          (((v >> 16) & 0x000000FF000000FFull) * 0x0000271000000001ull)) >> 32;
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
    case '{': return skip_container(p, e, depth, '}');
    case '[': return skip_container(p, e, depth, ']');
    case 't': return e - p >= 4 && std::memcmp(p, "true", 4) == 0 ? p + 4 : nullptr;
    case 'f': return e - p >= 5 && std::memcmp(p, "false", 5) == 0 ? p + 5 : nullptr;
    case 'n': return e - p >= 4 && std::memcmp(p, "null", 4) == 0 ? p + 4 : nullptr;
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
    if (key.size() == 11 && (std::memcmp(key.data(), "External id", 11) == 0 || std::memcmp(key.data(), "correlation", 11) == 0)) {
      if (!is_num) return nullptr;
      if (!(p = num(p, e, key[0] == 'E' ? ev.ext : ev.corr))) return nullptr;
    } else if (key.size() == 9 && std::memcmp(key.data(), "Parent id", 9) == 0) {
      if (!is_num) return nullptr;
      if (!(p = num(p, e, ev.parent))) return nullptr;
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
        default: break;
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
      if (key.size() == 11 || key.size() == 9) return nullptr;  // a used key spelt differently: general path
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

class Reader {
 public:
  Reader(scan::Source& src, std::string label, NameTable& names, TraceData& out)
      : src_(src), label_(std::move(label)), names_(names), t_(out) {}

  void run();

 private:
  enum class State { Start, Member, AfterValue, Events, EventsNext, ExtCorr, ExtCorrNext, End, Done };

  void step(Cursor& c);
  void member(Cursor& c);
  void parse_event(Cursor& c, RawEvent& e);
  void parse_args(Cursor& c, RawEvent& e);
  void parse_id(Cursor& c, Id& id, std::string& scratch);
  void commit(const RawEvent& e);
  void ext_corr_entry(Cursor& c);
  std::uint32_t lane(const Id& pid, const Id& tid);
  /// The event's lane: the one the layout fast path recognized, else lane(pid, tid).
  std::uint32_t lane_of(const RawEvent& e) { return e.known_lane != RawEvent::kNoLane ? e.known_lane : lane(e.pid, e.tid); }
  /// names_.intern() behind a small cache keyed by length and the first and last 8 bytes (most
  /// names repeat: a few kernels, one launch call); a hit is confirmed by comparing the text.
  std::uint32_t intern_name(std::string_view s) {
    std::uint64_t a = 0, b = 0;
    std::memcpy(&a, s.data(), std::min<std::size_t>(8, s.size()));
    if (s.size() > 8) std::memcpy(&b, s.data() + s.size() - 8, 8);
    const std::uint64_t key = (a * 0x9E3779B97F4A7C15ull) ^ (b + s.size() * 0xC2B2AE3D27D4EB4Full);
    NameMemo& m = name_memo_[(key >> 58) & 63];
    if (m.key == key && m.id != kNoLane && names_.str(m.id) == s) return m.id;
    m.key = key;
    m.id = names_.intern(s);
    return m.id;
  }
  std::uint32_t lane_slow(const Id& pid, const Id& tid);
  std::int64_t id_value(const Id& id, const char* what, std::string* text);
  void finish();

  [[noreturn]] void shape(const std::string& what) const { throw ShapeError(what); }
  /// A value that should be a number: NaN/Infinity and other non-JSON get the scanner's error,
  /// a valid JSON value of another type is a shape error.
  [[noreturn]] void not_number(Cursor& c, const std::string& what) const {
    const char ch = *c.p;
    if (ch == 'N' || ch == 'I' || ch == '-' || !json_value_start(ch)) scan::unexpected(c, "a number");
    shape(what);
  }
  /// Same for a value that should be a string.
  [[noreturn]] void not_string(Cursor& c, const std::string& what) const {
    if (!json_value_start(*c.p)) scan::unexpected(c, "a string");
    shape(what);
  }
  static bool json_value_start(char ch) {
    return ch == '"' || ch == '{' || ch == '[' || ch == '-' || (ch >= '0' && ch <= '9') || ch == 't' || ch == 'f' || ch == 'n';
  }

  scan::Source& src_;
  std::string label_;
  NameTable& names_;
  TraceData& t_;

  State state_ = State::Start;
  const char* where_ = "";  ///< array being read, for messages
  std::size_t index_ = 0;   ///< element index in it
  bool saw_events_ = false;
  bool slow_next_ = false;  ///< the fast path refused the next element
  bool have_trace_span_ = false;
  std::int64_t trace_start_rel_ = 0, trace_end_rel_ = 0;
  bool have_window_end_ = false;
  std::int64_t window_end_rel_ = 0;

  std::string s_key_, s_ph_, s_cat_, s_name_, s_bp_, s_pid_, s_tid_, s_tmp_;

  // Lanes: small linear table with a last-hit cache, a hash map beyond 32 lanes.
  std::int64_t last_pid_ = 0, last_tid_ = 0;
  std::uint32_t last_lane_ = 0;
  bool have_last_ = false;
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> lane_map_;
  /// The last two lanes by their raw pid/tid tokens.
  static constexpr std::uint32_t kNoLane = 0xFFFFFFFFu;
  struct LaneMemo {
    std::uint32_t lane = kNoLane;
    bool pid_str = false, tid_str = false;
    std::uint8_t pid_len = 0, tid_len = 0;
    char pid[24] = {}, tid[24] = {};
  };
  LaneMemo lane_memo_[2];
  int memo_next_ = 0;
  struct NumMemo {
    std::uint32_t lane = kNoLane;
    std::int64_t pid = 0, tid = 0;
  };
  NumMemo num_memo_[2];
  int num_next_ = 0;
  /// The tokens of the last two numeric lanes lane() resolved, for the layout fast path.
  LaneTokens lane_tokens_[2];
  int tokens_next_ = 0;
  void remember_tokens(const Number& pid, const Number& tid, std::uint32_t lane);
  struct NameMemo {
    std::uint64_t key = 0;
    std::uint32_t id = kNoLane;
  };
  NameMemo name_memo_[64];
};

void Reader::parse_id(Cursor& c, Id& id, std::string& scratch) {
  id.set = true;
  const char ch = scan::peek(c);
  if (ch == '"') {
    id.text = true;
    id.str = scan::string(c, scratch);
  } else if (ch == '-' || (ch >= '0' && ch <= '9')) {
    id.text = false;
    id.num = scan::number(c);
  } else {
    scan::skip_value(c, 1);
    id.set = false;
  }
}

void Reader::parse_args(Cursor& c, RawEvent& e) {
  if (scan::peek(c) != '{') {
    scan::skip_value(c, 1);
    return;
  }
  ++c.p;
  if (scan::peek(c) == '}') {
    ++c.p;
    return;
  }
  for (;;) {
    scan::skip_ws(c);
    const std::string_view key = scan::string(c, s_key_);
    scan::expect(c, ':', "':'");
    const char ch = scan::peek(c);
    const bool num = ch == '-' || (ch >= '0' && ch <= '9');
    if (key.size() == 11 && key == "External id") {
      if (!num) not_number(c, "args[\"External id\"] is not a number");
      e.ext = scan::number(c);
    } else if (key.size() == 11 && key == "correlation") {
      if (!num) not_number(c, "args.correlation is not a number");
      e.corr = scan::number(c);
    } else if (key.size() == 9 && key == "Parent id") {
      if (!num) not_number(c, "args[\"Parent id\"] is not a number");
      e.parent = scan::number(c);
    } else {
      scan::skip_value(c, 2);
    }
    const char d = scan::peek(c);
    ++c.p;
    if (d == ',') continue;
    if (d == '}') return;
    --c.p;
    scan::unexpected(c, "',' or '}'");
  }
}

void Reader::parse_event(Cursor& c, RawEvent& e) {
  if (scan::peek(c) != '{') {
    if (*c.p == ']' || *c.p == ',') scan::unexpected(c, "an event object");
    scan::skip_value(c, 1);
    shape("not an object");
  }
  ++c.p;
  if (scan::peek(c) == '}') {
    ++c.p;
    return;
  }
  for (;;) {
    scan::skip_ws(c);
    const std::string_view key = scan::string(c, s_key_);
    scan::expect(c, ':', "':'");
    const char ch = scan::peek(c);
    const bool str = ch == '"';
    const bool num = ch == '-' || (ch >= '0' && ch <= '9');
    switch (key.size()) {
      case 2:
        if (key == "ph") {
          if (!str) not_string(c, "\"ph\" is not a string");
          e.ph = scan::string(c, s_ph_);
          e.has_ph = true;
        } else if (key == "ts") {
          if (!num) not_number(c, "\"ts\" is not a number");
          e.ts = scan::number(c);
        } else if (key == "id") {
          if (num) {
            e.id = scan::number(c);
          } else {
            e.id_text = true;
            scan::skip_value(c, 1);
          }
        } else if (key == "bp") {
          if (!str) not_string(c, "\"bp\" is not a string");
          e.bp = scan::string(c, s_bp_);
          e.has_bp = true;
        } else {
          scan::skip_value(c, 1);
        }
        break;
      case 3:
        if (key == "cat") {
          if (!str) not_string(c, "\"cat\" is not a string");
          e.cat = scan::string(c, s_cat_);
          e.has_cat = true;
        } else if (key == "pid") {
          parse_id(c, e.pid, s_pid_);
        } else if (key == "tid") {
          parse_id(c, e.tid, s_tid_);
        } else if (key == "dur") {
          if (!num) not_number(c, "\"dur\" is not a number");
          e.dur = scan::number(c);
        } else {
          scan::skip_value(c, 1);
        }
        break;
      case 4:
        if (key == "name") {
          if (!str) not_string(c, "\"name\" is not a string");
          e.name = scan::string(c, s_name_);
          e.has_name = true;
        } else if (key == "args") {
          parse_args(c, e);
        } else {
          scan::skip_value(c, 1);
        }
        break;
      default: scan::skip_value(c, 1); break;
    }
    const char d = scan::peek(c);
    ++c.p;
    if (d == ',') continue;
    if (d == '}') return;
    --c.p;
    scan::unexpected(c, "',' or '}'");
  }
}

std::int64_t Reader::id_value(const Id& id, const char* what, std::string* text) {
  if (!id.text) return scan::to_i64(id.num, what);
  // String ids (Kineto's "Spans", "Traces"): interned, kept as negative numbers.
  if (text) *text = std::string(id.str);
  return -1 - static_cast<std::int64_t>(names_.intern(id.str));
}

/// Raw text of a pid/tid token (a number's digits or a string's contents) with its kind.
std::string_view id_text(const Id& id) {
  return id.text ? id.str : std::string_view(id.num.b, static_cast<std::size_t>(id.num.e - id.num.b));
}

void Reader::remember_tokens(const Number& pid, const Number& tid, std::uint32_t lane) {
  const auto pid_len = static_cast<std::size_t>(pid.e - pid.b), tid_len = static_cast<std::size_t>(tid.e - tid.b);
  if (pid_len == 0 || pid_len > 8 || tid_len == 0 || tid_len > 8) return;
  LaneTokens t;
  t.lane = lane;
  t.pid_len = static_cast<std::uint8_t>(pid_len);
  t.tid_len = static_cast<std::uint8_t>(tid_len);
  std::memcpy(&t.pid_word, pid.b, pid_len);
  std::memcpy(&t.tid_word, tid.b, tid_len);
  t.pid_mask = pid_len == 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * pid_len)) - 1;
  t.tid_mask = tid_len == 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * tid_len)) - 1;
  for (const LaneTokens& k : lane_tokens_) {
    if (k.lane == lane && k.pid_len == t.pid_len && k.tid_len == t.tid_len && k.pid_word == t.pid_word && k.tid_word == t.tid_word)
      return;
  }
  lane_tokens_[tokens_next_] = t;
  tokens_next_ ^= 1;
}

std::uint32_t Reader::lane(const Id& pid_id, const Id& tid_id) {
  // Numeric ids decoded by the fast path: compare values with the last two lanes.
  if (!pid_id.text && !tid_id.text && pid_id.num.simple && tid_id.num.simple && pid_id.num.frac == 0 && tid_id.num.frac == 0) {
    const std::int64_t pid = pid_id.num.neg ? -static_cast<std::int64_t>(pid_id.num.mant) : static_cast<std::int64_t>(pid_id.num.mant);
    const std::int64_t tid = tid_id.num.neg ? -static_cast<std::int64_t>(tid_id.num.mant) : static_cast<std::int64_t>(tid_id.num.mant);
    for (const NumMemo& memo : num_memo_) {
      if (memo.lane != kNoLane && memo.pid == pid && memo.tid == tid) {
        remember_tokens(pid_id.num, tid_id.num, memo.lane);
        return memo.lane;
      }
    }
    const std::uint32_t found = lane_slow(pid_id, tid_id);
    num_memo_[num_next_] = {found, pid, tid};
    num_next_ ^= 1;
    remember_tokens(pid_id.num, tid_id.num, found);
    return found;
  }
  // Most events repeat one of the last two lanes (host thread, device stream): compare the raw
  // tokens with theirs before converting anything.
  const std::string_view pt = id_text(pid_id), tt = id_text(tid_id);
  for (LaneMemo& memo : lane_memo_) {
    if (memo.lane != kNoLane && memo.pid_str == pid_id.text && memo.tid_str == tid_id.text && memo.pid_len == pt.size() &&
        memo.tid_len == tt.size() && std::memcmp(memo.pid, pt.data(), pt.size()) == 0 &&
        std::memcmp(memo.tid, tt.data(), tt.size()) == 0)
      return memo.lane;
  }
  const std::uint32_t found = lane_slow(pid_id, tid_id);
  if (pt.size() <= sizeof(LaneMemo::pid) && tt.size() <= sizeof(LaneMemo::tid)) {
    LaneMemo& memo = lane_memo_[memo_next_];
    memo_next_ ^= 1;
    memo.lane = found;
    memo.pid_str = pid_id.text;
    memo.tid_str = tid_id.text;
    memo.pid_len = static_cast<std::uint8_t>(pt.size());
    memo.tid_len = static_cast<std::uint8_t>(tt.size());
    std::memcpy(memo.pid, pt.data(), pt.size());
    std::memcpy(memo.tid, tt.data(), tt.size());
  }
  return found;
}

std::uint32_t Reader::lane_slow(const Id& pid_id, const Id& tid_id) {
  std::string pid_text, tid_text;
  const std::int64_t pid = id_value(pid_id, "pid", &pid_text);
  const std::int64_t tid = id_value(tid_id, "tid", &tid_text);
  if (have_last_ && pid == last_pid_ && tid == last_tid_) return last_lane_;
  std::uint32_t found = 0xFFFFFFFFu;
  if (t_.lanes.size() <= 32) {
    for (std::uint32_t i = 0; i < t_.lanes.size(); ++i)
      if (t_.lanes[i].pid == pid && t_.lanes[i].tid == tid) {
        found = i;
        break;
      }
  } else {
    const std::uint64_t key = static_cast<std::uint64_t>(pid) * 0x9E3779B97F4A7C15ull ^ static_cast<std::uint64_t>(tid);
    auto it = lane_map_.find(key);
    if (it != lane_map_.end())
      for (auto i : it->second)
        if (t_.lanes[i].pid == pid && t_.lanes[i].tid == tid) found = i;
  }
  if (found == 0xFFFFFFFFu) {
    if (t_.lanes.size() >= 0xFFFFFFF0u) shape("too many lanes");
    found = static_cast<std::uint32_t>(t_.lanes.size());
    TraceLane l;
    l.pid = pid;
    l.tid = tid;
    l.pid_text = pid_text;
    l.tid_text = tid_text;
    t_.lanes.push_back(std::move(l));
    if (t_.lanes.size() == 33) {
      for (std::uint32_t i = 0; i < t_.lanes.size(); ++i) {
        const auto& x = t_.lanes[i];
        lane_map_[static_cast<std::uint64_t>(x.pid) * 0x9E3779B97F4A7C15ull ^ static_cast<std::uint64_t>(x.tid)].push_back(i);
      }
    } else if (t_.lanes.size() > 33) {
      lane_map_[static_cast<std::uint64_t>(pid) * 0x9E3779B97F4A7C15ull ^ static_cast<std::uint64_t>(tid)].push_back(found);
    }
  }
  have_last_ = true;
  last_pid_ = pid;
  last_tid_ = tid;
  last_lane_ = found;
  return found;
}

void Reader::commit(const RawEvent& e) {
  if (!e.has_ph) shape("missing \"ph\"");
  const std::string_view ph = e.ph;
  if (ph.size() != 1) return;
  const char kind = ph[0];
  if (kind == 'X') {
    if (!e.has_cat) return;
    TraceCat cat{};
    CatKind ck;
    const bool used = cat_of(e.cat, cat, ck);
    if (ck == CatKind::Trace) {
      // Kineto's profiler span: the start of the recording window.
      if (!have_trace_span_ && e.ts.present() && e.dur.present()) {
        trace_start_rel_ = scan::us_to_ns(e.ts, "ts");
        if (!__builtin_add_overflow(trace_start_rel_, scan::us_to_ns(e.dur, "dur"), &trace_end_rel_)) have_trace_span_ = true;
      }
      return;
    }
    if (!used) return;
    if (!e.has_name) shape("missing \"name\"");
    if (!e.ts.present()) shape("missing \"ts\"");
    if (!e.dur.present()) shape("missing \"dur\"");
    if (!e.pid.set) shape("missing \"pid\"");
    if (!e.tid.set) shape("missing \"tid\"");
    TraceEvent ev;
    ev.cat = cat;
    ev.start_ns = scan::us_to_ns(e.ts, "ts");
    ev.dur_ns = scan::us_to_ns(e.dur, "dur");
    ev.name = intern_name(e.name);
    ev.lane = lane_of(e);
    ev.index = static_cast<std::uint32_t>(std::min<std::size_t>(index_, 0xFFFFFFFFu));
    if (is_range(cat)) {
      if (e.parent.present()) {
        ev.correlation = scan::to_u64(e.parent, "args[\"Parent id\"]");  // see TraceEvent::parent_id()
        ev.flags |= TraceEvent::kHasParent;
      }
    } else if (e.corr.present()) {
      ev.correlation = scan::to_u64(e.corr, "args.correlation");
      ev.flags |= TraceEvent::kHasCorrelation;
    } else if (is_device(cat) || is_api(cat)) {
      shape(fmt::format("{} event without \"args.correlation\"", e.cat));
    }
    if (e.ext.present()) {
      ev.external_id = scan::to_u64(e.ext, "args[\"External id\"]");
      ev.flags |= TraceEvent::kHasExternal;
    }

    t_.events.push_back(ev);
  } else if (kind == 's' || kind == 'f') {
    if (!e.has_cat || !is(e.cat, "ac2g")) return;
    if (e.id_text) shape("ac2g flow \"id\" is not a number");
    if (!e.id.present()) shape("ac2g flow without \"id\"");
    if (!e.ts.present()) shape("missing \"ts\"");
    if (!e.pid.set) shape("missing \"pid\"");
    if (!e.tid.set) shape("missing \"tid\"");
    TraceFlow f;
    f.start = kind == 's';
    f.id = scan::to_u64(e.id, "id");
    f.ts_ns = scan::us_to_ns(e.ts, "ts");
    f.lane = lane_of(e);
    f.index = static_cast<std::uint32_t>(std::min<std::size_t>(index_, 0xFFFFFFFFu));
    f.bp_e = e.has_bp && is(e.bp, "e");
    t_.flows.push_back(f);
  } else if (kind == 'i' || kind == 'I') {
    if (e.has_name && e.name == "Record Window End" && e.ts.present()) {
      window_end_rel_ = scan::us_to_ns(e.ts, "ts");
      have_window_end_ = true;
    }
  }
}

void Reader::ext_corr_entry(Cursor& c) {
  if (scan::peek(c) != '{') {
    if (*c.p == ']' || *c.p == ',') scan::unexpected(c, "an object");
    scan::skip_value(c, 1);
    shape("not an object");
  }
  ++c.p;
  Number corr, ext;
  if (scan::peek(c) != '}') {
    for (;;) {
      scan::skip_ws(c);
      const std::string_view key = scan::string(c, s_key_);
      scan::expect(c, ':', "':'");
      const char ch = scan::peek(c);
      const bool num = ch == '-' || (ch >= '0' && ch <= '9');
      if (key == "correlation") {
        if (!num) not_number(c, "\"correlation\" is not a number");
        corr = scan::number(c);
      } else if (key == "External id") {
        if (!num) not_number(c, "\"External id\" is not a number");
        ext = scan::number(c);
      } else {
        scan::skip_value(c, 2);
      }
      const char d = scan::peek(c);
      ++c.p;
      if (d == ',') continue;
      if (d == '}') break;
      --c.p;
      scan::unexpected(c, "',' or '}'");
    }
  } else {
    ++c.p;
  }
  if (!corr.present()) shape("missing \"correlation\"");
  if (!ext.present()) shape("missing \"External id\"");
  t_.ext_corr.emplace_back(scan::to_u64(corr, "correlation"), scan::to_u64(ext, "External id"));
}

void Reader::member(Cursor& c) {
  scan::skip_ws(c);
  const std::string_view key = scan::string(c, s_tmp_);
  scan::expect(c, ':', "':'");
  const char ch = scan::peek(c);
  if (key == "traceEvents") {
    if (ch != '[') {
      scan::skip_value(c, 1);
      where_ = "";
      shape("\"traceEvents\" is not an array");
    }
    ++c.p;
    saw_events_ = true;
    where_ = "traceEvents";
    index_ = 0;
    if (scan::peek(c) == ']') {
      ++c.p;
      state_ = State::AfterValue;
    } else {
      state_ = State::Events;
    }
    return;
  }
  if (key == "externalCorrelations") {
    if (ch != '[') {
      scan::skip_value(c, 1);
      shape("\"externalCorrelations\" is not an array");
    }
    ++c.p;
    t_.has_ext_corr = true;
    where_ = "externalCorrelations";
    index_ = 0;
    if (scan::peek(c) == ']') {
      ++c.p;
      state_ = State::AfterValue;
    } else {
      state_ = State::ExtCorr;
    }
    return;
  }
  if (key == "crossbench") {
    nlohmann::json meta = scan::value(c, 1);
    if (!meta.is_object()) shape("\"crossbench\" is not an object");
    t_.meta = std::move(meta);
  } else if (key == "baseTimeNanoseconds") {
    if (!(ch == '-' || (ch >= '0' && ch <= '9'))) {
      scan::skip_value(c, 1);
      shape("\"baseTimeNanoseconds\" is not an integer");
    }
    const Number n = scan::number(c);
    t_.base_ns = scan::to_i64(n, "baseTimeNanoseconds");
    t_.has_base = true;
  } else {
    scan::skip_value(c, 1);
  }
  state_ = State::AfterValue;
}

void Reader::step(Cursor& c) {
  switch (state_) {
    case State::Start: {
      const char ch = scan::peek(c);
      if (ch != '{') {
        if (ch == '[') shape("top level is an array, not a trace object (expected {\"traceEvents\": [...]})");
        scan::unexpected(c, "'{' (a JSON object)");
      }
      ++c.p;
      if (scan::peek(c) == '}') {
        ++c.p;
        state_ = State::End;
      } else {
        state_ = State::Member;
      }
      return;
    }
    case State::Member: member(c); return;
    case State::AfterValue: {
      where_ = "";
      const char d = scan::peek(c);
      ++c.p;
      if (d == ',') {
        state_ = State::Member;
      } else if (d == '}') {
        state_ = State::End;
      } else {
        --c.p;
        scan::unexpected(c, "',' or '}'");
      }
      return;
    }
    case State::Events: {
      // Fast path over whole elements while the window holds far more than one. Each step()
      // must not commit anything it could re-parse after a NeedMore, so the loop returns when
      // the window runs low and leaves an element the fast path refuses to the slow path.
      constexpr std::ptrdiff_t kSlack = 1 << 16;
      // At the very end of the input (eof and nothing left) the slow path reports the truncation:
      // the fast loop would consume nothing and never leave this state.
      if (g_fast_paths && !slow_next_ && (c.eof ? c.p < c.end : c.end - c.p > kSlack)) {
        c.p = fast::ws(c.p, c.end);
        RawEvent e;
        while (c.eof ? c.p < c.end : c.end - c.p > kSlack) {
          e.reset();
          const char* q = fast::event_layout(c.p, c.end, e, lane_tokens_);
          if (!q) {
            e.reset();
            q = fast::event(c.p, c.end, e);
          }
          if (!q) {
            slow_next_ = true;
            return;
          }
          commit(e);
          ++t_.trace_events;
          q = fast::ws(q, c.end);
          if (q < c.end && *q == ',') {
            ++index_;
            c.p = fast::ws(q + 1, c.end);
            continue;
          }
          c.p = q;
          state_ = State::EventsNext;  // ']' or whatever follows: the slow path handles it
          return;
        }
        return;
      }
      slow_next_ = false;
      RawEvent e;
      parse_event(c, e);
      commit(e);
      ++t_.trace_events;
      state_ = State::EventsNext;
      return;
    }
    case State::EventsNext: {
      const char d = scan::peek(c);
      ++c.p;
      if (d == ',') {
        ++index_;
        state_ = State::Events;
      } else if (d == ']') {
        state_ = State::AfterValue;
      } else {
        --c.p;
        scan::unexpected(c, "',' or ']'");
      }
      return;
    }
    case State::ExtCorr: {
      constexpr std::ptrdiff_t kSlack = 1 << 16;
      // At the very end of the input (eof and nothing left) the slow path reports the truncation:
      // the fast loop would consume nothing and never leave this state.
      if (g_fast_paths && !slow_next_ && (c.eof ? c.p < c.end : c.end - c.p > kSlack)) {
        c.p = fast::ws(c.p, c.end);
        RawEvent e;  // correlation in e.corr, External id in e.ext
        while (c.eof ? c.p < c.end : c.end - c.p > kSlack) {
          e.reset();
          const char* q = fast::ext_corr_layout(c.p, c.end, e);
          if (!q) {
            e.reset();
            q = fast::args(c.p, c.end, e);
          }
          if (!q || *c.p != '{' || !e.corr.present() || !e.ext.present()) {
            slow_next_ = true;
            return;
          }
          t_.ext_corr.emplace_back(scan::to_u64(e.corr, "correlation"), scan::to_u64(e.ext, "External id"));
          q = fast::ws(q, c.end);
          if (q < c.end && *q == ',') {
            ++index_;
            c.p = fast::ws(q + 1, c.end);
            continue;
          }
          c.p = q;
          state_ = State::ExtCorrNext;
          return;
        }
        return;
      }
      slow_next_ = false;
      ext_corr_entry(c);
      state_ = State::ExtCorrNext;
      return;
    }
    case State::ExtCorrNext: {
      const char d = scan::peek(c);
      ++c.p;
      if (d == ',') {
        ++index_;
        state_ = State::ExtCorr;
      } else if (d == ']') {
        state_ = State::AfterValue;
      } else {
        --c.p;
        scan::unexpected(c, "',' or ']'");
      }
      return;
    }
    case State::End: {
      while (c.p != c.end) {
        const char ch = *c.p;
        if (ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t') {
          ++c.p;
          continue;
        }
        throw ScanError("unexpected " + std::string(1, ch) + " after the end of the JSON document", c.p);
      }
      if (!c.eof) throw scan::NeedMore{};
      state_ = State::Done;
      return;
    }
    case State::Done: return;
  }
}

void Reader::run() {
  Cursor c{src_.begin(), src_.end(), src_.eof()};
  while (state_ != State::Done) {
    const char* mark = c.p;
    try {
      step(c);
    } catch (const scan::NeedMore&) {
      const char* kept = src_.refill(mark);
      c = Cursor{kept, src_.end(), src_.eof()};
    } catch (const ScanError& e) {
      std::string in;
      if (*where_) in = fmt::format(" (in {}[{}])", where_, index_);
      if (e.at)
        throw InputError(fmt::format("{}: not JSON: {} at byte {}{}", label_, e.what(), src_.offset(e.at), in));
      throw InputError(fmt::format("{}: not JSON: {}{}", label_, e.what(), in));
    } catch (const ShapeError& e) {
      if (*where_) throw InputError(fmt::format("{}: {}[{}]: {}", label_, where_, index_, e.what()));
      throw InputError(fmt::format("{}: {}", label_, e.what()));
    }
  }
  t_.bytes = src_.offset(src_.end());
  t_.gzip = src_.gzip();
  finish();
}

void Reader::finish() {
  if (!saw_events_) throw InputError(label_ + ": missing \"traceEvents\" (not a Chrome trace)");
  auto add = [&](std::int64_t rel, const char* what) {
    std::int64_t abs = 0;
    if (__builtin_add_overflow(rel, t_.base_ns, &abs))
      throw InputError(fmt::format("{}: {} {} ns + baseTimeNanoseconds {} overflows", label_, what, rel, t_.base_ns));
    return abs;
  };
  if (t_.base_ns != 0) {
    for (TraceEvent& e : t_.events) e.start_ns = add(e.start_ns, "ts");
    for (TraceFlow& f : t_.flows) f.ts_ns = add(f.ts_ns, "ts");
  }
  // Times beyond +-2^62 ns (146 years) are no trace's; bounding them keeps every difference the
  // checks take within int64.
  constexpr std::int64_t kLimit = std::int64_t{1} << 62;
  for (const TraceEvent& e : t_.events) {
    std::int64_t end = 0;
    if (__builtin_add_overflow(e.start_ns, e.dur_ns, &end) || e.start_ns > kLimit || e.start_ns < -kLimit || end > kLimit ||
        end < -kLimit)
      throw InputError(fmt::format("{}: traceEvents[{}]: ts/dur out of range ({} ns + {} ns)", label_, e.index, e.start_ns, e.dur_ns));
  }
  for (const TraceFlow& f : t_.flows)
    if (f.ts_ns > kLimit || f.ts_ns < -kLimit)
      throw InputError(fmt::format("{}: traceEvents[{}]: ts out of range ({} ns)", label_, f.index, f.ts_ns));
  if (t_.meta.is_object()) {
    if (auto f = t_.meta.find("format"); f != t_.meta.end() && f->is_string()) t_.format = f->get<std::string>();
    auto u64 = [&](const char* key) -> std::optional<std::uint64_t> {
      auto it = t_.meta.find(key);
      if (it == t_.meta.end() || !it->is_number_integer()) return std::nullopt;
      if (it->is_number_unsigned()) return it->get<std::uint64_t>();
      if (it->get<std::int64_t>() < 0) return std::nullopt;
      return static_cast<std::uint64_t>(it->get<std::int64_t>());
    };
    t_.dropped_records = u64("dropped_records");
    t_.out_of_range_records = u64("out_of_range_records");
    auto ws = t_.meta.find("window_start_ns");
    auto we = t_.meta.find("window_end_ns");
    if (ws != t_.meta.end() && we != t_.meta.end() && ws->is_number_integer() && we->is_number_integer()) {
      const std::int64_t a = ws->get<std::int64_t>(), b = we->get<std::int64_t>();
      if (b > a && a > -kLimit && b < kLimit && (b - a) < kLimit && !(t_.base_ns > kLimit || t_.base_ns < -kLimit)) {
        t_.has_window = true;
        t_.window_start_ns = a;
        t_.window_end_ns = b;
        t_.window_source = "crossbench.window_start_ns/window_end_ns";
      }
    }
  }
  if (!t_.has_window && have_trace_span_) {
    t_.has_window = true;
    t_.window_start_ns = add(trace_start_rel_, "ts");
    t_.window_end_ns = add(have_window_end_ ? std::max(window_end_rel_, trace_end_rel_) : trace_end_rel_, "ts");
    t_.window_source = have_window_end_ ? "the \"Trace\" span's start to the \"Record Window End\" instant"
                                        : "the \"Trace\" span";
  }
}

/// Asks for transparent huge pages on a large buffer (fewer page faults and TLB misses while
/// it fills); a no-op where unsupported.
void huge_pages(void* data, std::size_t bytes) {
#ifdef MADV_HUGEPAGE
  constexpr std::uintptr_t k2M = std::uintptr_t{1} << 21;
  if (bytes < 4 * k2M) return;
  const std::uintptr_t b = (reinterpret_cast<std::uintptr_t>(data) + k2M - 1) & ~(k2M - 1);
  const std::uintptr_t e = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(k2M - 1);
  if (e > b) ::madvise(reinterpret_cast<void*>(b), e - b, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

TraceData read_with(scan::Source& src, const std::string& label, NameTable& names) {
  TraceData t;
  t.path = label;
  t.file = std::filesystem::path(label).filename().string();
  t.events.reserve(1024);
  Reader r(src, label, names, t);
  r.run();
  return t;
}

}  // namespace

void set_fast_paths_for_testing(bool enabled) { g_fast_paths = enabled; }

TraceData read_trace(const std::filesystem::path& path, NameTable& names) {
  const std::string p = path.string();
  std::unique_ptr<scan::Source> src;
  try {
    src = scan::Source::open_file(p);
  } catch (const ScanError& e) {
    throw InputError(p + ": " + e.what());
  } catch (const std::runtime_error& e) {
    throw InputError(p + ": " + e.what());
  }
  // Reserve from the file size: a used trace event takes 100..400 bytes of text.
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  TraceData t;
  try {
    t = [&] {
      TraceData d;
      d.path = p;
      d.file = path.filename().string();
      if (!ec && !src->gzip()) {
        d.events.reserve(static_cast<std::size_t>(size / 250));
        d.flows.reserve(static_cast<std::size_t>(size / 350));
        huge_pages(d.events.data(), d.events.capacity() * sizeof(TraceEvent));
        huge_pages(d.flows.data(), d.flows.capacity() * sizeof(TraceFlow));
      }
      Reader r(*src, p, names, d);
      r.run();
      return d;
    }();
  } catch (const ScanError& e) {  // read/decompression failures during refill
    throw InputError(p + ": " + e.what());
  }
  return t;
}

TraceData parse_trace(std::string_view data, const std::string& label, NameTable& names) {
  std::unique_ptr<scan::Source> src;
  try {
    src = scan::Source::from_memory(data);
    return read_with(*src, label, names);
  } catch (const ScanError& e) {
    throw InputError(label + ": " + e.what());
  }
}

}  // namespace xb
