// Streaming JSON scanner (validate/json_scan.h).
#include "validate/json_scan.h"

#include "profiler/json_text.h"
#include "profiler/session_io.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

#include <zlib.h>

namespace xb::scan {

namespace {

constexpr std::size_t kChunk = std::size_t{16} << 20;  // bytes read per refill

std::string printable(char ch) {
  const auto u = static_cast<unsigned char>(ch);
  if (u >= 0x20 && u < 0x7F) return std::string("'") + ch + "'";
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02X", u);
  return buf;
}

/// A plain file read with read(2).
class FileSource final : public Source {
 public:
  explicit FileSource(int fd) : fd_(fd) {}
  ~FileSource() override { ::close(fd_); }

 protected:
  std::size_t read(char* dst, std::size_t n) override {
    for (;;) {
      const ssize_t got = ::read(fd_, dst, n);
      if (got >= 0) return static_cast<std::size_t>(got);
      if (errno == EINTR) continue;
      throw ScanError(std::string("read error: ") + std::strerror(errno), nullptr);
    }
  }

 private:
  int fd_;
};

/// A plain file mapped in windows of 64 MB (moved forward as the parser consumes it): no copy
/// through read(2), and only one window resident at a time.
class MappedSource final : public Source {
 public:
  MappedSource(int fd, std::uint64_t size) : fd_(fd), size_(size) {
    page_ = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    window_ = std::uint64_t{64} << 20;
  }
  ~MappedSource() override {
    unmap();
    if (fd_ >= 0) ::close(fd_);
  }
  /// Gives the descriptor up (the caller reads it another way).
  int take_fd() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  /// Maps the window holding byte `keep_off` of the file; returns false when mapping fails.
  bool map_at(std::uint64_t keep_off, bool grow) {
    const std::uint64_t start = keep_off & ~(page_ - 1);
    if (grow) window_ *= 2;
    const std::uint64_t len = std::min<std::uint64_t>(window_, size_ - start);
    unmap();
    if (len == 0) {
      map_ = nullptr;
      begin_ = end_ = nullptr;
      base_ = start;
      eof_ = true;
      return true;
    }
    void* m = ::mmap(nullptr, static_cast<std::size_t>(len), PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd_, static_cast<off_t>(start));
    if (m == MAP_FAILED) return false;
    ::madvise(m, static_cast<std::size_t>(len), MADV_SEQUENTIAL);
    map_ = static_cast<char*>(m);
    map_len_ = static_cast<std::size_t>(len);
    begin_ = map_;
    end_ = map_ + len;
    base_ = start;
    eof_ = start + len == size_;
    return true;
  }
  const char* advance(const char* keep) {
    const std::uint64_t keep_off = base_ + static_cast<std::uint64_t>(keep - begin_);
    const bool stuck = (keep_off & ~(page_ - 1)) == base_;  // no progress: a unit larger than the window
    if (!map_at(keep_off, stuck)) throw ScanError(std::string("cannot map the file: ") + std::strerror(errno), nullptr);
    return begin_ + (keep_off - base_);
  }

 protected:
  std::size_t read(char*, std::size_t) override { return 0; }

 private:
  void unmap() {
    if (map_) ::munmap(map_, map_len_);
    map_ = nullptr;
  }
  int fd_;
  std::uint64_t size_, page_, window_;
  char* map_ = nullptr;
  std::size_t map_len_ = 0;
};

/// Inflates gzip data coming from a file descriptor or from memory. Concatenated gzip members
/// are read one after the other, as gzip(1) does.
class GzipSource final : public Source {
 public:
  GzipSource(int fd, std::string_view mem) : fd_(fd), mem_(mem) {
    gzip_ = true;
    if (inflateInit2(&z_, 16 + MAX_WBITS) != Z_OK) throw ScanError("cannot initialise zlib", nullptr);
    if (fd_ < 0) {
      z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(mem_.data()));
      z_.avail_in = static_cast<uInt>(std::min<std::size_t>(mem_.size(), std::numeric_limits<uInt>::max()));
      mem_used_ = z_.avail_in;
    } else {
      in_.resize(std::size_t{1} << 20);
    }
  }
  ~GzipSource() override {
    inflateEnd(&z_);
    if (fd_ >= 0) ::close(fd_);
  }

 protected:
  std::size_t read(char* dst, std::size_t n) override {
    z_.next_out = reinterpret_cast<Bytef*>(dst);
    z_.avail_out = static_cast<uInt>(std::min<std::size_t>(n, std::numeric_limits<uInt>::max()));
    const uInt want = z_.avail_out;
    while (z_.avail_out == want) {
      if (z_.avail_in == 0 && !fill()) {
        if (in_member_) throw ScanError("truncated gzip stream (unexpected end of file)", nullptr);
        break;
      }
      const int rc = inflate(&z_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        // Another member may follow (concatenated gzip files), as gzip(1) reads them.
        in_member_ = false;
        if (z_.avail_in == 0 && !fill()) break;
        if (inflateReset(&z_) != Z_OK) throw ScanError("corrupt gzip stream", nullptr);
        in_member_ = true;
      } else if (rc == Z_BUF_ERROR) {
        if (z_.avail_in != 0) throw ScanError("corrupt gzip stream", nullptr);
      } else if (rc != Z_OK) {
        throw ScanError(std::string("corrupt gzip stream: ") + (z_.msg ? z_.msg : "inflate failed"), nullptr);
      }
    }
    return want - z_.avail_out;
  }

 private:
  bool fill() {
    if (fd_ < 0) {
      if (mem_used_ >= mem_.size()) return false;
      const std::size_t left = mem_.size() - mem_used_;
      z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(mem_.data() + mem_used_));
      z_.avail_in = static_cast<uInt>(std::min<std::size_t>(left, std::numeric_limits<uInt>::max()));
      mem_used_ += z_.avail_in;
      return true;
    }
    for (;;) {
      const ssize_t got = ::read(fd_, in_.data(), in_.size());
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) throw ScanError(std::string("read error: ") + std::strerror(errno), nullptr);
      if (got == 0) return false;
      z_.next_in = reinterpret_cast<Bytef*>(in_.data());
      z_.avail_in = static_cast<uInt>(got);
      return true;
    }
  }

  int fd_;
  std::string_view mem_;
  std::size_t mem_used_ = 0;
  std::vector<char> in_;
  z_stream z_{};
  bool in_member_ = true;  ///< inside a gzip member: end of input now is a truncation
};

/// Plain memory: the whole input is the window.
class MemorySource final : public Source {
 public:
  explicit MemorySource(std::string_view data) {
    begin_ = data.data();
    end_ = data.data() + data.size();
    eof_ = true;
  }

 protected:
  std::size_t read(char*, std::size_t) override { return 0; }
};

bool is_gzip_magic(const unsigned char* p, std::size_t n) { return n >= 2 && p[0] == 0x1f && p[1] == 0x8b; }

}  // namespace

const char* Source::refill(const char* keep) {
  if (eof_) return keep;
  if (auto* mapped = dynamic_cast<MappedSource*>(this)) return mapped->advance(keep);
  const std::size_t kept = static_cast<std::size_t>(end_ - keep);
  const std::size_t keep_off = static_cast<std::size_t>(keep - begin_);
  if (buf_.empty()) {
    buf_.resize(kChunk);
  } else if (keep_off == 0 && kept == buf_.size()) {
    buf_.resize(buf_.size() * 2);  // one unit larger than the window: grow it
  }
  if (kept != 0 && keep != buf_.data()) std::memmove(buf_.data(), keep, kept);
  base_ += keep_off;
  std::size_t have = kept;
  // Fill at least some new bytes (or hit the end of input).
  while (have < buf_.size()) {
    const std::size_t got = read(buf_.data() + have, buf_.size() - have);
    if (got == 0) {
      eof_ = true;
      break;
    }
    have += got;
    if (have - kept >= kChunk / 4) break;
  }
  begin_ = buf_.data();
  end_ = buf_.data() + have;
  return begin_;
}

std::unique_ptr<Source> Source::open_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) throw std::runtime_error("missing (no such file)");
    throw std::runtime_error(std::string("cannot open: ") + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) throw std::runtime_error("cannot open (a directory, not a file)");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(std::string("cannot open: ") + std::strerror(errno));
  unsigned char magic[2] = {0, 0};
  ssize_t got = 0;
  do {
    got = ::pread(fd, magic, 2, 0);
  } while (got < 0 && errno == EINTR);
  std::unique_ptr<Source> src;
  if (got == 2 && is_gzip_magic(magic, 2)) {
    src = std::make_unique<GzipSource>(fd, std::string_view{});
  } else if (S_ISREG(st.st_mode) && st.st_size > 0) {
    auto mapped = std::make_unique<MappedSource>(fd, static_cast<std::uint64_t>(st.st_size));
    if (mapped->map_at(0, false)) return mapped;
    src = std::make_unique<FileSource>(mapped->take_fd());  // not mappable (some file systems): read(2)
  } else {
    src = std::make_unique<FileSource>(fd);
  }
  src->begin_ = src->end_ = nullptr;
  src->refill(nullptr);
  return src;
}

std::unique_ptr<Source> Source::from_memory(std::string_view data) {
  if (is_gzip_magic(reinterpret_cast<const unsigned char*>(data.data()), data.size())) {
    auto src = std::make_unique<GzipSource>(-1, data);
    src->refill(nullptr);
    return src;
  }
  return std::make_unique<MemorySource>(data);
}

std::string read_input(const std::string& path) {
  try {
    return read_all(path);
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw InputError(path + ": " + e.what());
  }
}

std::string read_all(const std::string& path) {
  auto src = Source::open_file(path);
  std::string out;
  const char* p = src->begin();
  for (;;) {
    out.append(p, static_cast<std::size_t>(src->end() - p));
    if (src->eof()) break;
    p = src->refill(src->end());
  }
  return out;
}

// ---------------------------------------------------------------------------------------------

namespace detail {
const std::uint8_t kPlain[256] = {
#define R1(i) ((i) >= 0x20 && (i) < 0x80 && (i) != '"' && (i) != '\\' ? 1 : 0)
#define R4(i) R1(i), R1(i + 1), R1(i + 2), R1(i + 3)
#define R16(i) R4(i), R4(i + 4), R4(i + 8), R4(i + 12)
#define R64(i) R16(i), R16(i + 16), R16(i + 32), R16(i + 48)
    R64(0), R64(64), R64(128), R64(192)
#undef R64
#undef R16
#undef R4
#undef R1
};
}  // namespace detail

void unexpected(const Cursor& c, const char* wanted) {
  if (c.p == c.end) c.more();
  const char ch = *c.p;
  if (ch == 'N' || ch == 'I' || (ch == '-' && c.end - c.p > 1 && c.p[1] == 'I'))
    throw ScanError(std::string("NaN/Infinity is not valid JSON (expected ") + wanted + ")", c.p);
  throw ScanError("unexpected " + printable(ch) + ", expected " + wanted, c.p);
}

namespace {

/// Reads 4 hex digits at c.p.
unsigned hex4(Cursor& c) {
  unsigned v = 0;
  for (int i = 0; i < 4; ++i) {
    if (c.p == c.end) c.more();
    const char h = *c.p;
    unsigned d;
    if (h >= '0' && h <= '9') d = static_cast<unsigned>(h - '0');
    else if (h >= 'a' && h <= 'f') d = static_cast<unsigned>(h - 'a' + 10);
    else if (h >= 'A' && h <= 'F') d = static_cast<unsigned>(h - 'A' + 10);
    else throw ScanError("invalid \\u escape in string", c.p);
    v = v * 16 + d;
    ++c.p;
  }
  return v;
}

void put_utf8(std::string& out, unsigned cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

/// Validates one UTF-8 sequence at c.p (first byte >= 0x80) and returns its length.
std::size_t utf8_len(Cursor& c) {
  const auto b0 = static_cast<unsigned char>(*c.p);
  std::size_t len;
  unsigned cp, min_cp;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
    cp = b0 & 0x1Fu;
    min_cp = 0x80;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    cp = b0 & 0x0Fu;
    min_cp = 0x800;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    cp = b0 & 0x07u;
    min_cp = 0x10000;
  } else {
    throw ScanError("invalid UTF-8 in string", c.p);
  }
  if (static_cast<std::size_t>(c.end - c.p) < len) c.more();
  for (std::size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(c.p[k]);
    if ((b & 0xC0u) != 0x80u) throw ScanError("invalid UTF-8 in string", c.p);
    cp = (cp << 6) | (b & 0x3Fu);
  }
  if (cp < min_cp || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
    throw ScanError("invalid UTF-8 in string", c.p);
  return len;
}

}  // namespace

std::string_view string_slow(Cursor& c, const char* start, std::string& scratch) {
  // c.p is at the first byte that is not plain ASCII. Copy what came before only once an escape
  // forces decoding; otherwise keep viewing the window.
  bool copying = false;
  const char* run = start;  // start of the not-yet-copied run
  for (;;) {
    if (c.p == c.end) c.more();
    const auto ch = static_cast<unsigned char>(*c.p);
    if (detail::kPlain[ch]) {
      ++c.p;
      continue;
    }
    if (ch == '"') {
      if (!copying) {
        const std::string_view v(start, static_cast<std::size_t>(c.p - start));
        ++c.p;
        return v;
      }
      scratch.append(run, static_cast<std::size_t>(c.p - run));
      ++c.p;
      return scratch;
    }
    if (ch >= 0x80) {
      c.p += utf8_len(c);
      continue;
    }
    if (ch < 0x20) throw ScanError("control character in string (must be escaped)", c.p);
    // Backslash escape.
    if (!copying) {
      scratch.clear();
      copying = true;
    }
    scratch.append(run, static_cast<std::size_t>(c.p - run));
    const char* esc = c.p;
    ++c.p;
    if (c.p == c.end) c.more();
    const char e = *c.p++;
    switch (e) {
      case '"': scratch += '"'; break;
      case '\\': scratch += '\\'; break;
      case '/': scratch += '/'; break;
      case 'b': scratch += '\b'; break;
      case 'f': scratch += '\f'; break;
      case 'n': scratch += '\n'; break;
      case 'r': scratch += '\r'; break;
      case 't': scratch += '\t'; break;
      case 'u': {
        unsigned cp = hex4(c);
        if (cp >= 0xDC00 && cp <= 0xDFFF) throw ScanError("lone low surrogate in \\u escape", esc);
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          if (c.end - c.p < 2) c.more();
          if (c.p[0] != '\\' || c.p[1] != 'u') throw ScanError("high surrogate not followed by a low one", esc);
          c.p += 2;
          const unsigned lo = hex4(c);
          if (lo < 0xDC00 || lo > 0xDFFF) throw ScanError("high surrogate not followed by a low one", esc);
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        put_utf8(scratch, cp);
        break;
      }
      default: throw ScanError("invalid escape in string", esc);
    }
    run = c.p;
  }
}

Number number(Cursor& c) {
  Number n;
  if (c.p == c.end) c.more();
  n.b = c.p;
  const char* p = c.p;
  auto need = [&]() {
    if (p == c.end) {
      c.p = p;
      c.more();
    }
  };
  // Decoded on the way, as the trace reader's fast path does (Number::simple): the digits as one
  // integer (mod 2^64; only used when there are at most 18) and how many follow the point.
  std::uint64_t mant = 0;
  unsigned digits = 0, frac = 0;
  need();
  if (*p == '-') {
    n.neg = true;
    ++p;
    need();
  }
  if (*p == 'I' || *p == 'N') throw ScanError("NaN/Infinity is not valid JSON", n.b);
  if (*p == '0') {
    ++p;
  } else if (*p >= '1' && *p <= '9') {
    while (true) {
      mant = mant * 10 + static_cast<unsigned>(*p - '0');
      ++digits;
      ++p;
      need();
      if (*p < '0' || *p > '9') break;
    }
  } else {
    c.p = p;
    unexpected(c, "a digit");
  }
  need();
  bool exponent = false;
  if (*p == '.') {
    n.integral = false;
    ++p;
    need();
    if (*p < '0' || *p > '9') {
      c.p = p;
      unexpected(c, "a digit after '.'");
    }
    while (true) {
      mant = mant * 10 + static_cast<unsigned>(*p - '0');
      ++digits;
      ++frac;
      ++p;
      need();
      if (*p < '0' || *p > '9') break;
    }
  }
  if (*p == 'e' || *p == 'E') {
    n.integral = false;
    exponent = true;
    ++p;
    need();
    if (*p == '+' || *p == '-') {
      ++p;
      need();
    }
    if (*p < '0' || *p > '9') {
      c.p = p;
      unexpected(c, "a digit in the exponent");
    }
    while (true) {
      ++p;
      need();
      if (*p < '0' || *p > '9') break;
    }
  }
  // A number must end at a delimiter (a following letter or digit would be garbage).
  const char d = *p;
  if (!(d == ',' || d == '}' || d == ']' || d == ' ' || d == '\n' || d == '\r' || d == '\t')) {
    c.p = p;
    unexpected(c, "',', '}' or ']' after a number");
  }
  n.e = p;
  n.simple = !exponent && digits <= 18;
  n.frac = static_cast<std::uint8_t>(std::min(frac, 255u));
  n.mant = mant;
  c.p = p;
  return n;
}

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
  throw ScanError(std::string("\"") + what + "\" (" + std::string(n.b, std::min<std::size_t>(40, static_cast<std::size_t>(n.e - n.b))) +
                      ") is " + kind,
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

void literal(Cursor& c) {
  const char* kw = nullptr;
  switch (*c.p) {
    case 't': kw = "true"; break;
    case 'f': kw = "false"; break;
    case 'n': kw = "null"; break;
    default: unexpected(c, "a JSON value");
  }
  const std::size_t len = std::strlen(kw);
  if (static_cast<std::size_t>(c.end - c.p) < len) {
    // Compare what is there, so garbage is reported before asking for more input.
    if (std::memcmp(c.p, kw, static_cast<std::size_t>(c.end - c.p)) != 0) unexpected(c, "a JSON value");
    c.more();
  }
  if (std::memcmp(c.p, kw, len) != 0) unexpected(c, "a JSON value");
  c.p += len;
}

void skip_value(Cursor& c, int depth) {
  std::string scratch;
  const char ch = peek(c);
  switch (ch) {
    case '"': string(c, scratch); return;
    case '{': {
      if (depth >= kMaxDepth) throw ScanError("nesting deeper than 256 levels", c.p);
      ++c.p;
      if (peek(c) == '}') {
        ++c.p;
        return;
      }
      for (;;) {
        skip_ws(c);
        string(c, scratch);
        expect(c, ':', "':'");
        skip_value(c, depth + 1);
        const char d = peek(c);
        ++c.p;
        if (d == ',') continue;
        if (d == '}') return;
        --c.p;
        unexpected(c, "',' or '}'");
      }
    }
    case '[': {
      if (depth >= kMaxDepth) throw ScanError("nesting deeper than 256 levels", c.p);
      ++c.p;
      if (peek(c) == ']') {
        ++c.p;
        return;
      }
      for (;;) {
        skip_value(c, depth + 1);
        const char d = peek(c);
        ++c.p;
        if (d == ',') continue;
        if (d == ']') return;
        --c.p;
        unexpected(c, "',' or ']'");
      }
    }
    default:
      if (ch == '-' || (ch >= '0' && ch <= '9')) {
        number(c);
        return;
      }
      literal(c);
  }
}

nlohmann::json value(Cursor& c, int depth) {
  std::string scratch;
  const char ch = peek(c);
  switch (ch) {
    case '"': return nlohmann::json(std::string(string(c, scratch)));
    case '{': {
      if (depth >= kMaxDepth) throw ScanError("nesting deeper than 256 levels", c.p);
      ++c.p;
      nlohmann::json obj = nlohmann::json::object();
      if (peek(c) == '}') {
        ++c.p;
        return obj;
      }
      for (;;) {
        skip_ws(c);
        std::string key(string(c, scratch));
        expect(c, ':', "':'");
        obj[key] = value(c, depth + 1);
        const char d = peek(c);
        ++c.p;
        if (d == ',') continue;
        if (d == '}') return obj;
        --c.p;
        unexpected(c, "',' or '}'");
      }
    }
    case '[': {
      if (depth >= kMaxDepth) throw ScanError("nesting deeper than 256 levels", c.p);
      ++c.p;
      nlohmann::json arr = nlohmann::json::array();
      if (peek(c) == ']') {
        ++c.p;
        return arr;
      }
      for (;;) {
        arr.push_back(value(c, depth + 1));
        const char d = peek(c);
        ++c.p;
        if (d == ',') continue;
        if (d == ']') return arr;
        --c.p;
        unexpected(c, "',' or ']'");
      }
    }
    case 't': literal(c); return true;
    case 'f': literal(c); return false;
    case 'n': literal(c); return nullptr;
    default: break;
  }
  if (ch == '-' || (ch >= '0' && ch <= '9')) {
    const Number n = number(c);
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
  unexpected(c, "a JSON value");
}

}  // namespace xb::scan
