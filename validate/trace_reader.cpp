// Streaming Chrome trace reader (validate/trace_reader.h).
#include "validate/trace_reader.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <unordered_map>

#include <fmt/format.h>

#include "profiler/session_io.h"
#include "validate/json_scan.h"

namespace xb {

// ---------------------------------------------------------------------------------------------
// NameTable

namespace {

/// FxHash-style hash over 8-byte words: fast for the 10..200-byte names traces carry.
std::uint64_t hash_bytes(std::string_view s) {
  constexpr std::uint64_t k = 0x517cc1b727220a95ull;
  std::uint64_t h = s.size() * k;
  const char* p = s.data();
  std::size_t n = s.size();
  while (n >= 8) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    h = (((h << 5) | (h >> 59)) ^ w) * k;
    p += 8;
    n -= 8;
  }
  if (n > 0) {
    std::uint64_t w = 0;
    std::memcpy(&w, p, n);
    h = (((h << 5) | (h >> 59)) ^ w) * k;
  }
  return h ^ (h >> 29);
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

/// Wrong shape (valid JSON, but not what a trace event must carry).
struct ShapeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class CatKind : std::uint8_t { Used, Trace, Flow, Other };

/// Maps a "cat" string to a used category (PyTorch's old capitalised names included).
bool cat_of(std::string_view s, TraceCat& out, CatKind& kind) {
  kind = CatKind::Used;
  switch (s.size()) {
    case 6:
      if (s == "kernel" || s == "Kernel") { out = TraceCat::Kernel; return true; }
      if (s == "cpu_op") { out = TraceCat::CpuOp; return true; }
      if (s == "Memcpy") { out = TraceCat::Memcpy; return true; }
      if (s == "Memset") { out = TraceCat::Memset; return true; }
      break;
    case 10:
      if (s == "gpu_memcpy") { out = TraceCat::Memcpy; return true; }
      if (s == "gpu_memset") { out = TraceCat::Memset; return true; }
      break;
    case 12:
      if (s == "cuda_runtime") { out = TraceCat::Runtime; return true; }
      break;
    case 11:
      if (s == "cuda_driver") { out = TraceCat::Driver; return true; }
      break;
    case 15:
      if (s == "user_annotation") { out = TraceCat::UserAnnotation; return true; }
      break;
    case 19:
      if (s == "gpu_user_annotation") { out = TraceCat::GpuUserAnnotation; return true; }
      break;
    case 9:
      if (s == "cuda_sync") { out = TraceCat::Sync; return true; }
      break;
    case 7:
      if (s == "Runtime") { out = TraceCat::Runtime; return true; }
      break;
    case 5:
      if (s == "Trace") { kind = CatKind::Trace; return false; }
      break;
    case 4:
      if (s == "ac2g") { kind = CatKind::Flow; return false; }
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
struct RawEvent {
  bool has_ph = false, has_cat = false, has_name = false, has_bp = false, id_text = false;
  std::string_view ph, cat, name, bp;
  Number ts, dur, id;
  Id pid, tid;
  Number ext, corr, parent;
};

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
  std::int64_t id_value(const Id& id, const char* what, std::string* text);
  void finish();

  [[noreturn]] void shape(const std::string& what) const { throw ShapeError(what); }

  scan::Source& src_;
  std::string label_;
  NameTable& names_;
  TraceData& t_;

  State state_ = State::Start;
  const char* where_ = "";  ///< array being read, for messages
  std::size_t index_ = 0;   ///< element index in it
  bool saw_events_ = false;
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
      if (!num) shape("args[\"External id\"] is not a number");
      e.ext = scan::number(c);
    } else if (key.size() == 11 && key == "correlation") {
      if (!num) shape("args.correlation is not a number");
      e.corr = scan::number(c);
    } else if (key.size() == 9 && key == "Parent id") {
      if (!num) shape("args[\"Parent id\"] is not a number");
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
          if (!str) shape("\"ph\" is not a string");
          e.ph = scan::string(c, s_ph_);
          e.has_ph = true;
        } else if (key == "ts") {
          if (!num) shape("\"ts\" is not a number");
          e.ts = scan::number(c);
        } else if (key == "id") {
          if (num) {
            e.id = scan::number(c);
          } else {
            e.id_text = true;
            scan::skip_value(c, 1);
          }
        } else if (key == "bp") {
          if (!str) shape("\"bp\" is not a string");
          e.bp = scan::string(c, s_bp_);
          e.has_bp = true;
        } else {
          scan::skip_value(c, 1);
        }
        break;
      case 3:
        if (key == "cat") {
          if (!str) shape("\"cat\" is not a string");
          e.cat = scan::string(c, s_cat_);
          e.has_cat = true;
        } else if (key == "pid") {
          parse_id(c, e.pid, s_pid_);
        } else if (key == "tid") {
          parse_id(c, e.tid, s_tid_);
        } else if (key == "dur") {
          if (!num) shape("\"dur\" is not a number");
          e.dur = scan::number(c);
        } else {
          scan::skip_value(c, 1);
        }
        break;
      case 4:
        if (key == "name") {
          if (!str) shape("\"name\" is not a string");
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

std::uint32_t Reader::lane(const Id& pid_id, const Id& tid_id) {
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
        trace_end_rel_ = trace_start_rel_ + scan::us_to_ns(e.dur, "dur");
        have_trace_span_ = true;
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
    ev.name = names_.intern(e.name);
    ev.lane = lane(e.pid, e.tid);
    ev.index = static_cast<std::uint32_t>(std::min<std::size_t>(index_, 0xFFFFFFFFu));
    if (e.corr.present()) {
      ev.correlation = scan::to_u64(e.corr, "args.correlation");
      ev.flags |= TraceEvent::kHasCorrelation;
    } else if (is_device(cat) || is_api(cat)) {
      shape(fmt::format("{} event without \"args.correlation\"", e.cat));
    }
    if (e.ext.present()) {
      ev.external_id = scan::to_u64(e.ext, "args[\"External id\"]");
      ev.flags |= TraceEvent::kHasExternal;
    }
    if (e.parent.present()) {
      ev.parent_id = scan::to_u64(e.parent, "args[\"Parent id\"]");
      ev.flags |= TraceEvent::kHasParent;
    }
    t_.events.push_back(ev);
  } else if (kind == 's' || kind == 'f') {
    if (!e.has_cat || e.cat != "ac2g") return;
    if (e.id_text) shape("ac2g flow \"id\" is not a number");
    if (!e.id.present()) shape("ac2g flow without \"id\"");
    if (!e.ts.present()) shape("missing \"ts\"");
    if (!e.pid.set) shape("missing \"pid\"");
    if (!e.tid.set) shape("missing \"tid\"");
    TraceFlow f;
    f.start = kind == 's';
    f.id = scan::to_u64(e.id, "id");
    f.ts_ns = scan::us_to_ns(e.ts, "ts");
    f.lane = lane(e.pid, e.tid);
    f.index = static_cast<std::uint32_t>(std::min<std::size_t>(index_, 0xFFFFFFFFu));
    f.bp_e = e.has_bp && e.bp == "e";
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
        if (!num) shape("\"correlation\" is not a number");
        corr = scan::number(c);
      } else if (key == "External id") {
        if (!num) shape("\"External id\" is not a number");
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
    case State::ExtCorr: ext_corr_entry(c); state_ = State::ExtCorrNext; return;
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
  for (const TraceEvent& e : t_.events) {
    std::int64_t end = 0;
    if (__builtin_add_overflow(e.start_ns, e.dur_ns, &end))
      throw InputError(fmt::format("{}: traceEvents[{}]: ts + dur overflows", label_, e.index));
  }
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
      if (b > a) {
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
      if (!ec && !src->gzip()) d.events.reserve(static_cast<std::size_t>(size / 200));
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
