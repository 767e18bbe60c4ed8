// The trace reader's internals (validate/trace_reader.h; internal to validate/, not installed):
// the parsed fields of one traceEvents element (RawEvent) and the streaming Reader. Its parsing
// (the JSON state machine, the strict slow path, the fast paths of validate/trace_fast.h) is in
// validate/trace_scan.cpp; the event assembly (lanes, names, flows, the window, the finished
// TraceData) and the entry points are in validate/trace_reader.cpp.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "validate/json_scan.h"
#include "validate/trace_reader.h"

namespace xb::trace_detail {

using scan::Cursor;
using scan::Number;
using scan::ScanError;

/// set_fast_paths_for_testing's switch.
extern bool g_fast_paths;

/// Wrong shape (valid JSON, but not what a trace event must carry).
struct ShapeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class CatKind : std::uint8_t { Used, Trace, Flow, Python, Other };

/// s == text, for a literal: a compare of known length, which the compiler inlines (a
/// string_view == would call memcmp with a run-time length).
template <std::size_t N>
inline bool is(std::string_view s, const char (&text)[N]) {
  return s.size() == N - 1 && std::memcmp(s.data(), text, N - 1) == 0;
}

/// Maps a "cat" string to a used category (PyTorch's old capitalised names included).
inline bool cat_of(std::string_view s, TraceCat& out, CatKind& kind) {
  kind = CatKind::Used;
  switch (s.size()) {
    case 6:
      if (is(s, "kernel") || is(s, "Kernel")) {
        out = TraceCat::Kernel;
        return true;
      }
      if (is(s, "cpu_op")) {
        out = TraceCat::CpuOp;
        return true;
      }
      if (is(s, "Memcpy")) {
        out = TraceCat::Memcpy;
        return true;
      }
      if (is(s, "Memset")) {
        out = TraceCat::Memset;
        return true;
      }
      break;
    case 10:
      if (is(s, "gpu_memcpy")) {
        out = TraceCat::Memcpy;
        return true;
      }
      if (is(s, "gpu_memset")) {
        out = TraceCat::Memset;
        return true;
      }
      break;
    case 12:
      if (is(s, "cuda_runtime")) {
        out = TraceCat::Runtime;
        return true;
      }
      break;
    case 11:
      if (is(s, "cuda_driver")) {
        out = TraceCat::Driver;
        return true;
      }
      break;
    case 15:
      if (is(s, "user_annotation")) {
        out = TraceCat::UserAnnotation;
        return true;
      }
      if (is(s, "python_function")) {
        kind = CatKind::Python;
        return false;
      }
      break;
    case 19:
      if (is(s, "gpu_user_annotation")) {
        out = TraceCat::GpuUserAnnotation;
        return true;
      }
      break;
    case 9:
      if (is(s, "cuda_sync")) {
        out = TraceCat::Sync;
        return true;
      }
      break;
    case 7:
      if (is(s, "Runtime")) {
        out = TraceCat::Runtime;
        return true;
      }
      break;
    case 8:
      if (is(s, "overhead")) {
        out = TraceCat::Overhead;
        return true;
      }
      break;
    case 5:
      if (is(s, "Trace")) {
        kind = CatKind::Trace;
        return false;
      }
      break;
    case 4:
      if (is(s, "ac2g")) {
        kind = CatKind::Flow;
        return false;
      }
      break;
    default:
      break;
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
  bool has_ph, has_cat, has_name, has_bp, id_text, has_dims;
  std::string_view ph, cat, name, bp;
  std::string_view dims;  ///< args["Input Dims"] as written (record_shapes), when has_dims
  Number ts, dur, id;
  Id pid, tid;
  Number ext, corr, parent;
  /// Set by the layout fast path when the pid and tid tokens were byte for byte those of a
  /// known lane (LaneTokens): the lane, without converting them; kNoLane otherwise.
  std::uint32_t known_lane;
  RawEvent() { reset(); }
  void reset() {
    has_ph = has_cat = has_name = has_bp = id_text = has_dims = false;
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

class Reader {
 public:
  Reader(scan::Source& src, std::string label, NameTable& names, TraceData& out)
      : src_(src), label_(std::move(label)), names_(names), t_(out) {}

  void run();

 private:
  enum class State { Start, Member, AfterValue, Events, EventsNext, ExtCorr, ExtCorrNext, End, Done };

  void step(Cursor& c);
  // step()'s states, one each (trace_scan.cpp).
  void start(Cursor& c);
  void after_value(Cursor& c);
  void events(Cursor& c);
  void events_next(Cursor& c);
  void ext_corr(Cursor& c);
  void ext_corr_next(Cursor& c);
  void end(Cursor& c);
  void member(Cursor& c);
  void parse_event(Cursor& c, RawEvent& e);
  void parse_args(Cursor& c, RawEvent& e);
  void parse_id(Cursor& c, Id& id, std::string& scratch);
  void commit(const RawEvent& e);
  void ext_corr_entry(Cursor& c);
  std::uint32_t lane(const Id& pid, const Id& tid);
  /// The event's lane: the one the layout fast path recognized, else lane(pid, tid).
  std::uint32_t lane_of(const RawEvent& e) {
    return e.known_lane != RawEvent::kNoLane ? e.known_lane : lane(e.pid, e.tid);
  }
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
  /// input_shapes_text() of an "Input Dims" arg, interned.
  std::uint32_t intern_shapes(std::string_view dims) { return names_.intern(input_shapes_text(dims)); }
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
    return ch == '"' || ch == '{' || ch == '[' || ch == '-' || (ch >= '0' && ch <= '9') || ch == 't' || ch == 'f' ||
           ch == 'n';
  }

  scan::Source& src_;
  std::string label_;
  NameTable& names_;
  TraceData& t_;

  State state_ = State::Start;
  const char* where_ = "";  ///< array being read, for messages
  std::size_t index_ = 0;   ///< element index in it
  bool saw_events_ = false;
  /// The document is a top-level array of events: torch.autograd.profiler's own JSON
  /// (EventList.export_chrome_trace), read as TraceData::eventlist.
  bool array_root_ = false;
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

}  // namespace xb::trace_detail
