// Streaming Chrome trace reader (validate/trace_reader.h): the name table, the Reader's event
// assembly (validate/trace_scan.h; its parsing is in validate/trace_scan.cpp) and the entry
// points.
#include "validate/trace_reader.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <unordered_map>

#include <fmt/format.h>

#include "common/errors.h"
#include "validate/trace_scan.h"

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
    case TraceCat::Kernel:
      return "kernel";
    case TraceCat::Memcpy:
      return "gpu_memcpy";
    case TraceCat::Memset:
      return "gpu_memset";
    case TraceCat::Runtime:
      return "cuda_runtime";
    case TraceCat::Driver:
      return "cuda_driver";
    case TraceCat::UserAnnotation:
      return "user_annotation";
    case TraceCat::CpuOp:
      return "cpu_op";
    case TraceCat::GpuUserAnnotation:
      return "gpu_user_annotation";
    case TraceCat::Sync:
      return "cuda_sync";
    case TraceCat::Overhead:
      return "overhead";
  }
  return "unknown";
}

std::string TraceLane::describe() const {
  const std::string p = pid_text.empty() ? std::to_string(pid) : "\"" + pid_text + "\"";
  const std::string t = tid_text.empty() ? std::to_string(tid) : "\"" + tid_text + "\"";
  return "pid " + p + " tid " + t;
}

// ---------------------------------------------------------------------------------------------
// Event assembly

namespace trace_detail {

bool g_fast_paths = true;

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
    if (k.lane == lane && k.pid_len == t.pid_len && k.tid_len == t.tid_len && k.pid_word == t.pid_word &&
        k.tid_word == t.tid_word)
      return;
  }
  lane_tokens_[tokens_next_] = t;
  tokens_next_ ^= 1;
}

std::uint32_t Reader::lane(const Id& pid_id, const Id& tid_id) {
  // Numeric ids decoded by the fast path: compare values with the last two lanes.
  if (!pid_id.text && !tid_id.text && pid_id.num.simple && tid_id.num.simple && pid_id.num.frac == 0 &&
      tid_id.num.frac == 0) {
    const std::int64_t pid =
        pid_id.num.neg ? -static_cast<std::int64_t>(pid_id.num.mant) : static_cast<std::int64_t>(pid_id.num.mant);
    const std::int64_t tid =
        tid_id.num.neg ? -static_cast<std::int64_t>(tid_id.num.mant) : static_cast<std::int64_t>(tid_id.num.mant);
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
    if (memo.lane != kNoLane && memo.pid_str == pid_id.text && memo.tid_str == tid_id.text &&
        memo.pid_len == pt.size() && memo.tid_len == tt.size() && std::memcmp(memo.pid, pt.data(), pt.size()) == 0 &&
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
        lane_map_[static_cast<std::uint64_t>(x.pid) * 0x9E3779B97F4A7C15ull ^ static_cast<std::uint64_t>(x.tid)]
            .push_back(i);
      }
    } else if (t_.lanes.size() > 33) {
      lane_map_[static_cast<std::uint64_t>(pid) * 0x9E3779B97F4A7C15ull ^ static_cast<std::uint64_t>(tid)].push_back(
          found);
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
    TraceCat cat{};
    CatKind ck;
    bool used = false;
    if (e.has_cat) {
      used = cat_of(e.cat, cat, ck);
    } else if (array_root_) {
      // EventList.export_chrome_trace: every FunctionEvent as {"name", "ph": "X", "ts", "dur",
      // "tid", "pid": "CPU functions", "args": {}}, without a category: host ranges.
      cat = TraceCat::CpuOp;
      ck = CatKind::Used;
      used = true;
    } else {
      return;
    }
    if (ck == CatKind::Trace) {
      // Kineto's profiler span: the start of the recording window.
      if (!have_trace_span_ && e.ts.present() && e.dur.present()) {
        trace_start_rel_ = scan::us_to_ns(e.ts, "ts");
        if (!__builtin_add_overflow(trace_start_rel_, scan::us_to_ns(e.dur, "dur"), &trace_end_rel_))
          have_trace_span_ = true;
      }
      return;
    }
    if (ck == CatKind::Python) ++t_.python_functions;  // counted, not kept (with_stack)
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

    if (e.has_dims && is_range(cat))
      t_.input_shapes.emplace_back(static_cast<std::uint32_t>(t_.events.size()), intern_shapes(e.dims));
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
    if (__builtin_add_overflow(e.start_ns, e.dur_ns, &end) || e.start_ns > kLimit || e.start_ns < -kLimit ||
        end > kLimit || end < -kLimit)
      throw InputError(fmt::format("{}: traceEvents[{}]: ts/dur out of range ({} ns + {} ns)", label_, e.index,
                                   e.start_ns, e.dur_ns));
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
    t_.window_source =
        have_window_end_ ? "the \"Trace\" span's start to the \"Record Window End\" instant" : "the \"Trace\" span";
  }
}

}  // namespace trace_detail

namespace {

using scan::ScanError;
using trace_detail::g_fast_paths;
using trace_detail::Reader;

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

std::string input_shapes_text(std::string_view j) {
  const std::size_t n = j.size();
  std::size_t i = 0;
  const auto ws = [&] {
    while (i < n && (j[i] == ' ' || j[i] == '\n' || j[i] == '\r' || j[i] == '\t')) ++i;
  };
  const auto at = [&](char ch) { return i < n && j[i] == ch; };
  // Skips one (valid) JSON value.
  const auto skip = [&] {
    int depth = 0;
    do {
      ws();
      if (i >= n) return;
      const char ch = j[i];
      if (ch == '"') {
        for (++i; i < n && j[i] != '"'; ++i)
          if (j[i] == '\\') ++i;
        ++i;
      } else if (ch == '[' || ch == '{') {
        ++depth;
        ++i;
      } else if (ch == ']' || ch == '}') {
        --depth;
        ++i;
      } else if (ch == ',' || ch == ':') {
        ++i;
      } else {
        while (i < n && std::strchr(",:]} \n\r\t", j[i]) == nullptr) ++i;
      }
    } while (depth > 0);
  };
  // A list of integers at i as Python prints it ("[2, 3]"), or false (i restored).
  const auto int_list = [&](std::string& out) {
    const std::size_t from = i, mark = out.size();
    ++i;  // '['
    out += '[';
    ws();
    if (at(']')) {
      ++i;
      out += ']';
      return true;
    }
    for (bool first = true;; first = false) {
      ws();
      const std::size_t s = i;
      if (at('-')) ++i;
      const std::size_t d = i;
      while (i < n && j[i] >= '0' && j[i] <= '9') ++i;
      if (i == d || at('.') || at('e') || at('E')) {  // not an integer (Python's json: a float, a bool, ...)
        i = from;
        out.resize(mark);
        return false;
      }
      std::string_view v = j.substr(s, i - s);
      if (v == "-0") v = "0";
      if (!first) out += ", ";
      out += v;
      ws();
      if (at(',')) {
        ++i;
        continue;
      }
      ++i;  // ']'
      out += ']';
      return true;
    }
  };
  ws();
  if (!at('[')) return "[]";
  ++i;
  std::string out = "[";
  ws();
  if (!at(']')) {
    for (bool first = true;; first = false) {
      ws();
      if (!first) out += ", ";
      if (!(at('[') && int_list(out))) {
        skip();
        out += "[]";
      }
      ws();
      if (!at(',')) break;
      ++i;
    }
  }
  return out + "]";
}

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
