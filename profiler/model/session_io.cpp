// raw_session.json strict parser and checks (profiler/model/session_io.h, docs/formats.md); the writer
// is in profiler/model/session_write.cpp.
#include "profiler/model/session_io.h"
#include "profiler/model/session_json.h"

#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <optional>
#include <sstream>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "common/json_text.h"
#include "common/strict_json.h"

namespace xb {
namespace {

using nlohmann::json;

// ---------------------------------------------------------------------------------------------
// Parsing.
//
// nlohmann's SAX interface drives one pass over the text. "records" and "ranges" elements (the
// bulk of a session) are collected into a reusable FlatObject and converted on the spot; the
// small rest (crossbench, meta, event_timings, fixtures) is built as an nlohmann::json tree.
// The tree goes through common/strict_json.h's accessors, the flat records through accessors of
// their own shape that fail in strict_json's words; both name the object ("raw_session:
// records[12]") and the key in every error.

/// Where a record or range sits, e.g. {"records", 12} -> "records[12]"; formatted only on error
/// (the flat accessors run for every field of every record).
struct Loc {
  std::string_view name;
  std::ptrdiff_t index = -1;
  std::string str() const { return index < 0 ? std::string(name) : fmt::format("{}[{}]", name, index); }
};

/// Throws InputError("raw_session: <where>: <what>") (strict_json's wording).
[[noreturn]] void fail(const Loc& where, const std::string& what) {
  strict_json::fail("raw_session: " + where.str(), what);
}

/// The name of an object for strict_json's accessors: "raw_session: meta", "raw_session: fixtures[3]".
std::string where(std::string_view name, std::ptrdiff_t index = -1) { return "raw_session: " + Loc{name, index}.str(); }

/// One scalar or (for grid/block) an array of scalars inside a flat record object.
struct FlatValue {
  enum class Type : std::uint8_t { Null, Bool, Int, Uint, Float, String, Array, Object };
  Type type = Type::Null;
  bool boolean = false;
  std::int64_t i = 0;
  std::uint64_t u = 0;
  double d = 0;
  std::string s;
  std::vector<FlatValue> items;  // Array: its scalar elements
  bool nested = false;           // Array holding arrays/objects (never valid here)
};

/// The keys and values of one record or range object; slots are reused between elements.
struct FlatObject {
  std::vector<std::pair<std::string, FlatValue>> fields;
  std::size_t size = 0;
  void clear() { size = 0; }
  /// Appends a slot for `key`. A repeated key gets a second slot; find() returns the last one,
  /// so the last value wins, as in nlohmann::json.
  FlatValue& add(const std::string& key) {
    if (size == fields.size()) fields.emplace_back();
    fields[size].first = key;
    return reset(fields[size++].second);
  }
  const FlatValue* find(std::string_view key) const {
    for (std::size_t k = size; k-- > 0;) {
      if (fields[k].first == key) return &fields[k].second;
    }
    return nullptr;
  }
  static FlatValue& reset(FlatValue& v) {
    v.type = FlatValue::Type::Null;
    v.items.clear();
    v.nested = false;
    return v;
  }
};

// -- strict_json's accessors over FlatObject, in its words ------------------------------------

const FlatValue& require(const FlatObject& obj, const char* key, const Loc& where) {
  const FlatValue* v = obj.find(key);
  if (v == nullptr) fail(where, strict_json::missing_key_text(key));
  return *v;
}

/// `v` as an Int; `key` and `element` (-1: not an array's) name it in a failure.
template <typename Int>
Int to_int(const FlatValue& v, const Loc& where, const char* key, std::ptrdiff_t element = -1) {
  const bool is_unsigned = v.type == FlatValue::Type::Uint;
  if (!is_unsigned && v.type != FlatValue::Type::Int) {
    fail(where, strict_json::not_a_text(strict_json::value_name(key, element), "an integer"));
  }
  if (const std::optional<Int> fit = strict_json::fit_integer<Int>(is_unsigned, v.u, v.i)) return *fit;
  fail(where, strict_json::out_of_range_text<Int>(strict_json::value_name(key, element), is_unsigned, v.u, v.i));
}

template <typename Int>
Int get_int(const FlatObject& obj, const char* key, const Loc& where) {
  return to_int<Int>(require(obj, key, where), where, key);
}

std::string get_string(const FlatObject& obj, const char* key, const Loc& where) {
  const FlatValue& v = require(obj, key, where);
  if (v.type != FlatValue::Type::String) fail(where, strict_json::not_a_text(strict_json::value_name(key), "a string"));
  return v.s;
}

void get_int3(const FlatObject& obj, const char* key, const Loc& where, std::int32_t (&out)[3]) {
  const FlatValue& v = require(obj, key, where);
  if (v.type != FlatValue::Type::Array || v.nested || v.items.size() != 3) {
    fail(where, strict_json::not_a_text(strict_json::value_name(key), "an array of 3 integers"));
  }
  for (std::size_t k = 0; k < 3; ++k) out[k] = to_int<std::int32_t>(v.items[k], where, key, static_cast<int>(k));
}

// -- converters ------------------------------------------------------------------------------

namespace sj = strict_json;

DeviceInfo parse_device(const json& j, const std::string& w) {
  DeviceInfo d;
  d.id = sj::need_integer<std::uint32_t>(j, "id", w);
  d.name = sj::need_string(j, "name", w);
  d.total_global_mem = sj::need_integer<std::uint64_t>(j, "total_global_mem", w);
  d.compute_major = sj::need_integer<int>(j, "compute_major", w);
  d.compute_minor = sj::need_integer<int>(j, "compute_minor", w);
  d.num_sms = sj::need_integer<int>(j, "num_sms", w);
  d.max_threads_per_block = sj::need_integer<int>(j, "max_threads_per_block", w);
  d.max_threads_per_multiprocessor = sj::need_integer<int>(j, "max_threads_per_multiprocessor", w);
  d.regs_per_block = sj::need_integer<int>(j, "regs_per_block", w);
  d.regs_per_multiprocessor = sj::need_integer<int>(j, "regs_per_multiprocessor", w);
  d.warp_size = sj::need_integer<int>(j, "warp_size", w);
  d.shared_mem_per_block = sj::need_integer<std::uint64_t>(j, "shared_mem_per_block", w);
  d.shared_mem_per_block_optin = sj::need_integer<std::uint64_t>(j, "shared_mem_per_block_optin", w);
  d.shared_mem_per_multiprocessor = sj::need_integer<std::uint64_t>(j, "shared_mem_per_multiprocessor", w);
  d.l2_cache_bytes = sj::need_integer<std::uint64_t>(j, "l2_cache_bytes", w);
  return d;
}

SessionMeta parse_meta(const json& j) {
  const std::string w = where("meta");
  SessionMeta m;
  m.tool = sj::need_string(j, "tool", w);
  m.created_utc = sj::need_string(j, "created_utc", w);
  m.window_start_ns = sj::need_integer<std::int64_t>(j, "window_start_ns", w);
  m.window_end_ns = sj::need_integer<std::int64_t>(j, "window_end_ns", w);
  m.dropped_records = sj::need_integer<std::uint64_t>(j, "dropped_records", w);
  m.discarded_by_schedule = sj::need_integer<std::uint64_t>(j, "discarded_by_schedule", w);
  m.cuda_driver_version = sj::need_integer<int>(j, "cuda_driver_version", w);
  m.cuda_runtime_version = sj::need_integer<int>(j, "cuda_runtime_version", w);
  m.cupti_version = sj::need_integer<std::uint32_t>(j, "cupti_version", w);
  m.cublas_version = sj::need_integer<int>(j, "cublas_version", w);
  if (j.contains("activity_source")) {
    m.activity_source = sj::need_string(j, "activity_source", w);
    if (m.activity_source != "cupti" && m.activity_source != "none") {
      sj::fail(w, "activity_source must be \"cupti\" or \"none\", not \"" + m.activity_source + "\"");
    }
  }
  m.process_id = sj::need_integer<std::uint32_t>(j, "process_id", w);
  m.schedule_wait = sj::need_integer<int>(j, "schedule_wait", w);
  m.schedule_warmup = sj::need_integer<int>(j, "schedule_warmup", w);
  m.schedule_active = sj::need_integer<int>(j, "schedule_active", w);
  const json& devices = sj::need_array(j, "devices", w);
  m.devices.reserve(devices.size());
  for (std::size_t i = 0; i < devices.size(); ++i) {
    m.devices.push_back(parse_device(devices[i], where("meta.devices", static_cast<std::ptrdiff_t>(i))));
  }
  // Every other key is the client's metadata, kept as text for the client to read (in key order:
  // nlohmann's objects are sorted).
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (is_session_meta_key(it.key())) continue;
    if (const std::string error = metadata_key_error(it.key()); !error.empty()) sj::fail(w, error);
    m.metadata.push_back(MetadataBlock{it.key(), it.value().dump(-1, ' ', false, json::error_handler_t::replace)});
  }
  return m;
}

RawRecord parse_record(const FlatObject& j, const Loc& w) {
  RawRecord r;
  try {
    r.kind = raw_kind_from_string(get_string(j, "kind", w));
  } catch (const std::invalid_argument& e) {
    fail(w, e.what());
  }
  if (r.kind != RawKind::ExternalCorrelation) {
    r.start_ns = get_int<std::int64_t>(j, "start_ns", w);
    r.end_ns = get_int<std::int64_t>(j, "end_ns", w);
  }
  r.correlation_id = get_int<std::uint32_t>(j, "correlation_id", w);
  switch (r.kind) {
    case RawKind::Kernel:
    case RawKind::Memcpy:
    case RawKind::Memset:
    case RawKind::Synchronization:
      r.device_id = get_int<std::uint32_t>(j, "device_id", w);
      r.context_id = get_int<std::uint32_t>(j, "context_id", w);
      r.stream_id = get_int<std::uint32_t>(j, "stream_id", w);
      // Optional (sessions before graph mode have neither): CUDA graph node and graph ids.
      if (r.kind != RawKind::Synchronization) {
        if (const auto* v = j.find("graph_node_id")) r.graph_node_id = to_int<std::uint64_t>(*v, w, "graph_node_id");
        if (const auto* v = j.find("graph_id")) r.graph_id = to_int<std::uint32_t>(*v, w, "graph_id");
      }
      break;
    default:
      break;
  }
  switch (r.kind) {
    case RawKind::Kernel:
      r.name = get_string(j, "name", w);
      get_int3(j, "grid", w, r.grid);
      get_int3(j, "block", w, r.block);
      r.registers_per_thread = get_int<std::int32_t>(j, "registers_per_thread", w);
      r.static_shared_bytes = get_int<std::int32_t>(j, "static_shared_bytes", w);
      r.dynamic_shared_bytes = get_int<std::int32_t>(j, "dynamic_shared_bytes", w);
      break;
    case RawKind::Memcpy:
      r.bytes = get_int<std::uint64_t>(j, "bytes", w);
      r.copy_kind = get_int<std::uint32_t>(j, "copy_kind", w);
      break;
    case RawKind::Memset:
      r.bytes = get_int<std::uint64_t>(j, "bytes", w);
      r.memset_value = get_int<std::uint32_t>(j, "memset_value", w);
      break;
    case RawKind::Runtime:
    case RawKind::Driver:
      r.name = get_string(j, "name", w);
      r.cbid = get_int<std::uint32_t>(j, "cbid", w);
      r.process_id = get_int<std::uint32_t>(j, "process_id", w);
      r.thread_id = get_int<std::uint32_t>(j, "thread_id", w);
      r.return_value = get_int<std::int32_t>(j, "return_value", w);
      break;
    case RawKind::Synchronization:
      r.sync_type = get_int<std::uint32_t>(j, "sync_type", w);
      break;
    case RawKind::ExternalCorrelation:
      r.external_kind = get_int<std::uint32_t>(j, "external_kind", w);
      r.external_id = get_int<std::uint64_t>(j, "external_id", w);
      break;
  }
  return r;
}

HostRange parse_range(const FlatObject& j, const Loc& w) {
  HostRange r;
  r.id = get_int<std::uint64_t>(j, "id", w);
  r.parent_id = get_int<std::uint64_t>(j, "parent_id", w);
  r.name = get_string(j, "name", w);
  try {
    r.category = range_category_from_string(get_string(j, "category", w));
  } catch (const std::invalid_argument& e) {
    fail(w, e.what());
  }
  r.start_ns = get_int<std::int64_t>(j, "start_ns", w);
  r.end_ns = get_int<std::int64_t>(j, "end_ns", w);
  r.process_id = get_int<std::uint32_t>(j, "process_id", w);
  r.thread_id = get_int<std::uint32_t>(j, "thread_id", w);
  return r;
}

StepTiming parse_timing(const json& j, const std::string& w) {
  StepTiming t;
  t.fixture = sj::need_string(j, "fixture", w);
  t.step = sj::need_integer<std::int64_t>(j, "step", w);
  t.range_id = sj::need_integer<std::uint64_t>(j, "range_id", w);
  t.event_ns = sj::need_integer<std::int64_t>(j, "event_ns", w);
  if (j.contains("launches")) t.launches = sj::need_integer<int>(j, "launches", w);
  return t;
}

/// A fixture: its name; the object itself is the client's, kept as text.
FixtureBlock parse_fixture(const json& j, const std::string& w) {
  FixtureBlock f;
  f.name = sj::need_string(j, "name", w);
  f.json = j.dump(-1, ' ', false, json::error_handler_t::replace);
  return f;
}

/// SAX handler: a JSON tree for everything except the elements of the top-level "records" and
/// "ranges" arrays, which are converted one by one as they end.
class SessionSax : public nlohmann::json_sax<json> {
 public:
  json root;
  std::vector<RawRecord> records;
  std::vector<HostRange> ranges;

  bool null() override {
    return scalar([](FlatValue&) {}, [] { return json(nullptr); });
  }
  bool boolean(bool v) override {
    return scalar(
        [&](FlatValue& f) {
          f.type = FlatValue::Type::Bool;
          f.boolean = v;
        },
        [&] { return json(v); });
  }
  bool number_integer(number_integer_t v) override {
    return scalar(
        [&](FlatValue& f) {
          f.type = FlatValue::Type::Int;
          f.i = v;
        },
        [&] { return json(v); });
  }
  bool number_unsigned(number_unsigned_t v) override {
    return scalar(
        [&](FlatValue& f) {
          f.type = FlatValue::Type::Uint;
          f.u = v;
        },
        [&] { return json(v); });
  }
  bool number_float(number_float_t v, const string_t&) override {
    return scalar(
        [&](FlatValue& f) {
          f.type = FlatValue::Type::Float;
          f.d = v;
        },
        [&] { return json(v); });
  }
  bool string(string_t& v) override {
    return scalar(
        [&](FlatValue& f) {
          f.type = FlatValue::Type::String;
          f.s.swap(v);
        },
        [&] { return json(std::move(v)); });
  }
  bool binary(binary_t&) override { return true; }  // never produced by JSON text

  bool key(string_t& k) override {
    if (flat_ != Flat::None) {
      if (flat_depth_ == 1) key_.swap(k);
    } else {
      key_.swap(k);
    }
    return true;
  }

  bool start_object(std::size_t) override {
    if (flat_ != Flat::None) {
      if (flat_depth_ == 0) {
        object_.clear();
      } else if (flat_depth_ == 1) {
        current_array_ = &object_.add(key_);             // content collected like an array's, but the type
        current_array_->type = FlatValue::Type::Object;  // stays Object, so every accessor rejects it
      } else if (flat_depth_ == 2) {
        current_array_->nested = true;
      }
      ++flat_depth_;
      return true;
    }
    push(json::object());
    return true;
  }

  bool end_object() override {
    if (flat_ != Flat::None) {
      if (--flat_depth_ == 0) finish_element();
      return true;
    }
    stack_.pop_back();
    return true;
  }

  bool start_array(std::size_t) override {
    if (flat_ != Flat::None) {
      if (flat_depth_ == 0) element_not_object();
      if (flat_depth_ == 1) {
        current_array_ = &object_.add(key_);
        current_array_->type = FlatValue::Type::Array;
      } else if (flat_depth_ == 2) {
        current_array_->nested = true;
      }
      ++flat_depth_;
      return true;
    }
    if (stack_.size() == 1 && stack_.back()->is_object() && (key_ == "records" || key_ == "ranges")) {
      flat_ = key_ == "records" ? Flat::Records : Flat::Ranges;
      if (stack_.back()->contains(key_)) sj::fail("raw_session", fmt::format("duplicate key \"{}\"", key_));
      (*stack_.back())[key_] = json::array();  // marks the key as present for the shape checks
      flat_depth_ = 0;
      index_ = 0;
      return true;
    }
    push(json::array());
    return true;
  }

  bool end_array() override {
    if (flat_ != Flat::None) {
      if (flat_depth_ == 0) {
        flat_ = Flat::None;
      } else {
        --flat_depth_;
      }
      return true;
    }
    stack_.pop_back();
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& ex) override {
    throw InputError("raw_session: " + strict_json::parse_error_text(ex, input_size));
  }

  std::size_t input_size = 0;  ///< bytes being parsed, for parse_error_text's "truncated"

 private:
  enum class Flat { None, Records, Ranges };

  template <typename SetFlat, typename MakeJson>
  bool scalar(SetFlat&& set_flat, MakeJson&& make_json) {
    if (flat_ != Flat::None) {
      if (flat_depth_ == 0) element_not_object();
      if (flat_depth_ == 1) {
        set_flat(object_.add(key_));
      } else if (flat_depth_ == 2) {
        current_array_->items.emplace_back();
        set_flat(current_array_->items.back());
      }
      return true;
    }
    insert(make_json());
    return true;
  }

  void insert(json&& value) {
    if (stack_.empty()) {
      root = std::move(value);
    } else if (stack_.back()->is_array()) {
      stack_.back()->push_back(std::move(value));
    } else {
      (*stack_.back())[key_] = std::move(value);
    }
  }

  void push(json&& container) {
    if (stack_.empty()) {
      root = std::move(container);
      stack_.push_back(&root);
    } else if (stack_.back()->is_array()) {
      stack_.back()->push_back(std::move(container));
      stack_.push_back(&stack_.back()->back());
    } else {
      json& slot = (*stack_.back())[key_];
      slot = std::move(container);
      stack_.push_back(&slot);
    }
  }

  [[noreturn]] void element_not_object() const {
    fail(Loc{flat_ == Flat::Records ? "records" : "ranges", static_cast<std::ptrdiff_t>(index_)}, "is not an object");
  }

  void finish_element() {
    const Loc where{flat_ == Flat::Records ? "records" : "ranges", static_cast<std::ptrdiff_t>(index_)};
    if (flat_ == Flat::Records) {
      records.push_back(parse_record(object_, where));
    } else {
      ranges.push_back(parse_range(object_, where));
    }
    ++index_;
  }

  std::vector<json*> stack_;
  std::string key_;
  Flat flat_ = Flat::None;
  int flat_depth_ = 0;  // 0: in the array, 1: in an element, 2: in an element's array/object
  std::size_t index_ = 0;
  FlatObject object_;
  FlatValue* current_array_ = nullptr;
};

}  // namespace

RawSession parse_raw_session(const std::string& text) {
  SessionSax sax;
  sax.input_size = text.size();
  try {
    json::sax_parse(text, &sax);
  } catch (const json::exception& e) {
    throw InputError("raw_session: " + strict_json::parse_error_text(e, text.size()));
  }
  const json& root = sax.root;
  if (!root.is_object()) sj::fail("raw_session", "is not an object");
  if (!root.contains("crossbench") && root.contains("traceEvents"))
    throw InputError(
        "a Chrome trace (PyTorch's export_chrome_trace, or a run folder's full.json / trace_only.json), not a "
        "raw_session.json: check it with validate --trace FILE");

  const std::string top = "raw_session";
  sj::check_header(root, "raw_session", top);

  RawSession s;
  s.meta = parse_meta(sj::need_object(root, "meta", top));
  sj::need_array(root, "records", top);  // present and an array; elements were converted while parsing
  sj::need_array(root, "ranges", top);
  s.records = std::move(sax.records);
  s.ranges = std::move(sax.ranges);
  const json& timings = sj::need_array(root, "event_timings", top);
  for (std::size_t i = 0; i < timings.size(); ++i) {
    s.event_timings.push_back(parse_timing(timings[i], where("event_timings", static_cast<std::ptrdiff_t>(i))));
  }
  const json& fixtures = sj::need_array(root, "fixtures", top);
  for (std::size_t i = 0; i < fixtures.size(); ++i) {
    s.fixtures.push_back(parse_fixture(fixtures[i], where("fixtures", static_cast<std::ptrdiff_t>(i))));
  }
  check_raw_session(s);
  return s;
}

void check_raw_session(const RawSession& s) {
  const auto bad = [](const std::string& what) { throw InputError("raw_session: " + what); };
  if (s.meta.window_end_ns < s.meta.window_start_ns) {
    bad(fmt::format("meta: window ends before it starts ({} < {} ns)", s.meta.window_end_ns, s.meta.window_start_ns));
  }
  // Times beyond 2^62 ns (146 years) are no recording's, and the validator's trace reader refuses
  // them (validate/trace_reader.cpp): a session holding one could be replayed but its outputs not
  // validated.
  constexpr std::int64_t kMaxTimestampNs = std::int64_t{1} << 62;
  if (s.meta.window_end_ns > kMaxTimestampNs) {
    bad(fmt::format("meta: window end {} ns is out of range (at most 2^62 ns)", s.meta.window_end_ns));
  }
  if (s.meta.schedule_wait < 0 || s.meta.schedule_warmup < 0 || s.meta.schedule_active < 0) {
    bad("meta: negative schedule step count");
  }
  for (std::size_t i = 0; i < s.records.size(); ++i) {
    const RawRecord& r = s.records[i];
    if (r.kind == RawKind::ExternalCorrelation) continue;
    if (r.start_ns < 0 || r.end_ns < r.start_ns || r.end_ns > kMaxTimestampNs) {
      bad(fmt::format("records[{}]: timestamps start {} ns, end {} ns (need 0 <= start <= end <= 2^62)", i, r.start_ns,
                      r.end_ns));
    }
  }
  std::unordered_map<std::uint64_t, std::uint64_t> parent_of;
  for (std::size_t i = 0; i < s.ranges.size(); ++i) {
    const HostRange& r = s.ranges[i];
    if (r.id == 0) bad(fmt::format("ranges[{}]: id 0 (ids start at 1)", i));
    if (!parent_of.emplace(r.id, r.parent_id).second) bad(fmt::format("ranges[{}]: duplicate id {}", i, r.id));
    if (r.start_ns < 0 || r.end_ns < r.start_ns || r.end_ns > kMaxTimestampNs) {
      bad(fmt::format("ranges[{}]: timestamps start {} ns, end {} ns (need 0 <= start <= end <= 2^62)", i, r.start_ns,
                      r.end_ns));
    }
  }
  for (const auto& [id, parent] : parent_of) {
    std::uint64_t at = parent;
    for (std::size_t hops = 0; at != 0; ++hops) {
      const auto it = parent_of.find(at);
      if (it == parent_of.end()) bad(fmt::format("range {}: parent {} does not exist", id, at));
      if (hops > parent_of.size()) bad(fmt::format("range {}: parent links form a cycle", id));
      at = it->second;
    }
  }
  std::unordered_set<std::string> fixture_names;
  for (std::size_t i = 0; i < s.fixtures.size(); ++i) {
    const FixtureBlock& f = s.fixtures[i];
    if (!fixture_names.insert(f.name).second) bad(fmt::format("fixtures[{}]: duplicate fixture '{}'", i, f.name));
  }
  for (std::size_t i = 0; i < s.event_timings.size(); ++i) {
    const StepTiming& t = s.event_timings[i];
    if (t.event_ns <= 0) bad(fmt::format("event_timings[{}]: event_ns {} is not positive", i, t.event_ns));
    if (t.launches < 1) bad(fmt::format("event_timings[{}]: launches {} is below 1", i, t.launches));
    if (fixture_names.count(t.fixture) == 0) {
      bad(fmt::format("event_timings[{}]: unknown fixture '{}'", i, t.fixture));
    }
    if (parent_of.count(t.range_id) == 0) {
      bad(fmt::format("event_timings[{}]: range {} does not exist", i, t.range_id));
    }
  }
}

RawSession read_raw_session(const std::filesystem::path& path) { return parse_text_file(path, parse_raw_session); }

}  // namespace xb
