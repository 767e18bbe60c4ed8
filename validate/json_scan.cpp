// Streaming JSON scanner (validate/json_scan.h).
#include "validate/json_scan.h"

#include "common/errors.h"
#include "common/json_text.h"

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
    void* m = ::mmap(nullptr, static_cast<std::size_t>(len), PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd_,
                     static_cast<off_t>(start));
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
    if (h >= '0' && h <= '9')
      d = static_cast<unsigned>(h - '0');
    else if (h >= 'a' && h <= 'f')
      d = static_cast<unsigned>(h - 'a' + 10);
    else if (h >= 'A' && h <= 'F')
      d = static_cast<unsigned>(h - 'A' + 10);
    else
      throw ScanError("invalid \\u escape in string", c.p);
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
  if (cp < min_cp || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) throw ScanError("invalid UTF-8 in string", c.p);
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
      case '"':
        scratch += '"';
        break;
      case '\\':
        scratch += '\\';
        break;
      case '/':
        scratch += '/';
        break;
      case 'b':
        scratch += '\b';
        break;
      case 'f':
        scratch += '\f';
        break;
      case 'n':
        scratch += '\n';
        break;
      case 'r':
        scratch += '\r';
        break;
      case 't':
        scratch += '\t';
        break;
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
      default:
        throw ScanError("invalid escape in string", esc);
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

void literal(Cursor& c) {
  const char* kw = nullptr;
  switch (*c.p) {
    case 't':
      kw = "true";
      break;
    case 'f':
      kw = "false";
      break;
    case 'n':
      kw = "null";
      break;
    default:
      unexpected(c, "a JSON value");
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
    case '"':
      string(c, scratch);
      return;
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
    case '"':
      return nlohmann::json(std::string(string(c, scratch)));
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
    case 't':
      literal(c);
      return true;
    case 'f':
      literal(c);
      return false;
    case 'n':
      literal(c);
      return nullptr;
    default:
      break;
  }
  if (ch == '-' || (ch >= '0' && ch <= '9')) {
    return number_value(number(c));
  }
  unexpected(c, "a JSON value");
}

}  // namespace xb::scan
