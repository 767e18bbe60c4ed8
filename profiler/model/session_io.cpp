// raw_session.json strict parser and checks (profiler/model/session_io.h, docs/formats.md); the writer
// is in profiler/model/session_write.cpp.
#include "profiler/model/session_io.h"
#include "profiler/model/session_json.h"

#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <sstream>
#include <string_view>
#include <type_traits>
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
// Both shapes go through the same strict accessors, which name the object ("records[12]") and
// the key in every error.

/// Where a value sits, e.g. {"records", 12} -> "records[12]"; formatted only on error.
struct Loc {
  std::string_view name;
  std::ptrdiff_t index = -1;
  std::string str() const { return index < 0 ? std::string(name) : fmt::format("{}[{}]", name, index); }
};

[[noreturn]] void fail(const Loc& where, const std::string& what) {
  throw InputError("raw_session: " + where.str() + ": " + what);
}

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

// -- strict accessors over nlohmann::json -----------------------------------------------------

const json& require(const json& obj, const char* key, const Loc& where) {
  const auto it = obj.find(key);
  if (it == obj.end()) fail(where, fmt::format("missing key \"{}\"", key));
  return *it;
}

const json& require_object(const json& parent, const char* key, const Loc& where) {
  const json& v = require(parent, key, where);
  if (!v.is_object()) fail(where, fmt::format("key \"{}\" must be an object", key));
  return v;
}

const json& require_array(const json& parent, const char* key, const Loc& where) {
  const json& v = require(parent, key, where);
  if (!v.is_array()) fail(where, fmt::format("key \"{}\" must be an array", key));
  return v;
}

/// Names a value inside an object in error messages: key "grid" or key "grid"[1]; formatted only
/// on error (the accessors run for every field of every record).
struct What {
  const char* key;
  int element = -1;
  std::string str() const {
    return element < 0 ? fmt::format("key \"{}\"", key) : fmt::format("key \"{}\"[{}]", key, element);
  }
};

/// Checks an integer (given as unsigned or signed) against Int's range.
template <typename Int>
Int checked_int(bool is_unsigned, std::uint64_t u, std::int64_t i, const Loc& where, const What& what) {
  if (is_unsigned) {
    if (u <= static_cast<std::uint64_t>(std::numeric_limits<Int>::max())) return static_cast<Int>(u);
    fail(where, fmt::format("{} = {} is out of range", what.str(), u));
  }
  if constexpr (std::is_signed_v<Int>) {
    if (i >= static_cast<std::int64_t>(std::numeric_limits<Int>::min()) &&
        i <= static_cast<std::int64_t>(std::numeric_limits<Int>::max())) {
      return static_cast<Int>(i);
    }
  } else {
    if (i >= 0 && static_cast<std::uint64_t>(i) <= std::numeric_limits<Int>::max()) return static_cast<Int>(i);
  }
  fail(where, fmt::format("{} = {} is out of range", what.str(), i));
}

template <typename Int>
Int to_int(const json& v, const Loc& where, const What& what) {
  if (v.is_number_unsigned()) return checked_int<Int>(true, v.get<std::uint64_t>(), 0, where, what);
  if (v.is_number_integer()) return checked_int<Int>(false, 0, v.get<std::int64_t>(), where, what);
  fail(where, what.str() + " must be an integer");
}

template <typename Int>
Int get_int(const json& obj, const char* key, const Loc& where) {
  return to_int<Int>(require(obj, key, where), where, What{key});
}

double get_double(const json& obj, const char* key, const Loc& where) {
  const json& v = require(obj, key, where);
  if (!v.is_number()) fail(where, fmt::format("key \"{}\" must be a number", key));
  const double d = v.get<double>();
  if (!std::isfinite(d)) fail(where, fmt::format("key \"{}\" is not finite", key));
  return d;
}

bool get_bool(const json& obj, const char* key, const Loc& where) {
  const json& v = require(obj, key, where);
  if (!v.is_boolean()) fail(where, fmt::format("key \"{}\" must be a boolean", key));
  return v.get<bool>();
}

std::string get_string(const json& obj, const char* key, const Loc& where) {
  const json& v = require(obj, key, where);
  if (!v.is_string()) fail(where, fmt::format("key \"{}\" must be a string", key));
  return v.get<std::string>();
}

void require_is_object(const json& v, const Loc& where) {
  if (!v.is_object()) fail(where, "must be an object");
}

// -- the same accessors over FlatObject -------------------------------------------------------

const FlatValue& require(const FlatObject& obj, const char* key, const Loc& where) {
  const FlatValue* v = obj.find(key);
  if (v == nullptr) fail(where, fmt::format("missing key \"{}\"", key));
  return *v;
}

template <typename Int>
Int to_int(const FlatValue& v, const Loc& where, const What& what) {
  if (v.type == FlatValue::Type::Uint) return checked_int<Int>(true, v.u, 0, where, what);
  if (v.type == FlatValue::Type::Int) return checked_int<Int>(false, 0, v.i, where, what);
  fail(where, what.str() + " must be an integer");
}

template <typename Int>
Int get_int(const FlatObject& obj, const char* key, const Loc& where) {
  return to_int<Int>(require(obj, key, where), where, What{key});
}

std::string get_string(const FlatObject& obj, const char* key, const Loc& where) {
  const FlatValue& v = require(obj, key, where);
  if (v.type != FlatValue::Type::String) fail(where, fmt::format("key \"{}\" must be a string", key));
  return v.s;
}

void require_is_object(const FlatObject&, const Loc&) {}  // checked while collecting

template <typename Obj>
void get_int3(const Obj& obj, const char* key, const Loc& where, std::int32_t (&out)[3]) {
  const auto& v = require(obj, key, where);
  bool ok = false;
  if constexpr (std::is_same_v<Obj, json>) {
    ok = v.is_array() && v.size() == 3;
  } else {
    ok = v.type == FlatValue::Type::Array && !v.nested && v.items.size() == 3;
  }
  if (!ok) fail(where, fmt::format("key \"{}\" must be an array of 3 integers", key));
  for (std::size_t k = 0; k < 3; ++k) {
    if constexpr (std::is_same_v<Obj, json>) {
      out[k] = to_int<std::int32_t>(v[k], where, What{key, static_cast<int>(k)});
    } else {
      out[k] = to_int<std::int32_t>(v.items[k], where, What{key, static_cast<int>(k)});
    }
  }
}

// -- converters ------------------------------------------------------------------------------

DeviceInfo parse_device(const json& j, const Loc& w) {
  require_is_object(j, w);
  DeviceInfo d;
  d.id = get_int<std::uint32_t>(j, "id", w);
  d.name = get_string(j, "name", w);
  d.total_global_mem = get_int<std::uint64_t>(j, "total_global_mem", w);
  d.compute_major = get_int<int>(j, "compute_major", w);
  d.compute_minor = get_int<int>(j, "compute_minor", w);
  d.num_sms = get_int<int>(j, "num_sms", w);
  d.max_threads_per_block = get_int<int>(j, "max_threads_per_block", w);
  d.max_threads_per_multiprocessor = get_int<int>(j, "max_threads_per_multiprocessor", w);
  d.regs_per_block = get_int<int>(j, "regs_per_block", w);
  d.regs_per_multiprocessor = get_int<int>(j, "regs_per_multiprocessor", w);
  d.warp_size = get_int<int>(j, "warp_size", w);
  d.shared_mem_per_block = get_int<std::uint64_t>(j, "shared_mem_per_block", w);
  d.shared_mem_per_block_optin = get_int<std::uint64_t>(j, "shared_mem_per_block_optin", w);
  d.shared_mem_per_multiprocessor = get_int<std::uint64_t>(j, "shared_mem_per_multiprocessor", w);
  d.l2_cache_bytes = get_int<std::uint64_t>(j, "l2_cache_bytes", w);
  return d;
}

SessionMeta parse_meta(const json& j) {
  const Loc w{"meta"};
  SessionMeta m;
  m.tool = get_string(j, "tool", w);
  m.created_utc = get_string(j, "created_utc", w);
  m.window_start_ns = get_int<std::int64_t>(j, "window_start_ns", w);
  m.window_end_ns = get_int<std::int64_t>(j, "window_end_ns", w);
  m.dropped_records = get_int<std::uint64_t>(j, "dropped_records", w);
  m.discarded_by_schedule = get_int<std::uint64_t>(j, "discarded_by_schedule", w);
  m.cuda_driver_version = get_int<int>(j, "cuda_driver_version", w);
  m.cuda_runtime_version = get_int<int>(j, "cuda_runtime_version", w);
  m.cupti_version = get_int<std::uint32_t>(j, "cupti_version", w);
  m.cublas_version = get_int<int>(j, "cublas_version", w);
  if (j.contains("activity_source")) {
    m.activity_source = get_string(j, "activity_source", w);
    if (m.activity_source != "cupti" && m.activity_source != "none") {
      fail(w, "activity_source must be \"cupti\" or \"none\", not \"" + m.activity_source + "\"");
    }
  }
  m.process_id = get_int<std::uint32_t>(j, "process_id", w);
  m.schedule_wait = get_int<int>(j, "schedule_wait", w);
  m.schedule_warmup = get_int<int>(j, "schedule_warmup", w);
  m.schedule_active = get_int<int>(j, "schedule_active", w);
  const json& devices = require_array(j, "devices", w);
  m.devices.reserve(devices.size());
  for (std::size_t i = 0; i < devices.size(); ++i) {
    m.devices.push_back(parse_device(devices[i], Loc{"meta.devices", static_cast<std::ptrdiff_t>(i)}));
  }
  // Every other key is the client's metadata, kept as text for the client to read (in key order:
  // nlohmann's objects are sorted).
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (is_session_meta_key(it.key())) continue;
    if (const std::string error = metadata_key_error(it.key()); !error.empty()) fail(w, error);
    m.metadata.push_back(MetadataBlock{it.key(), it.value().dump(-1, ' ', false, json::error_handler_t::replace)});
  }
  return m;
}

template <typename Obj>
RawRecord parse_record(const Obj& j, const Loc& w) {
  require_is_object(j, w);
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
        if (const auto* v = j.find("graph_node_id"))
          r.graph_node_id = to_int<std::uint64_t>(*v, w, What{"graph_node_id"});
        if (const auto* v = j.find("graph_id")) r.graph_id = to_int<std::uint32_t>(*v, w, What{"graph_id"});
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

template <typename Obj>
HostRange parse_range(const Obj& j, const Loc& w) {
  require_is_object(j, w);
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

StepTiming parse_timing(const json& j, const Loc& w) {
  require_is_object(j, w);
  StepTiming t;
  t.fixture = get_string(j, "fixture", w);
  t.step = get_int<std::int64_t>(j, "step", w);
  t.range_id = get_int<std::uint64_t>(j, "range_id", w);
  t.event_ns = get_int<std::int64_t>(j, "event_ns", w);
  if (j.contains("launches")) t.launches = get_int<int>(j, "launches", w);
  return t;
}

/// A fixture: its name; the object itself is the client's, kept as text.
FixtureBlock parse_fixture(const json& j, const Loc& w) {
  require_is_object(j, w);
  FixtureBlock f;
  f.name = get_string(j, "name", w);
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
      if (stack_.back()->contains(key_)) fail(Loc{"top level"}, fmt::format("duplicate key \"{}\"", key_));
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
    fail(Loc{flat_ == Flat::Records ? "records" : "ranges", static_cast<std::ptrdiff_t>(index_)}, "must be an object");
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

namespace raw_session_json {
// The accessors above with the object named by a string (Loc keeps a view of it for the call).
void fail(const std::string& where, const std::string& what) { xb::fail(Loc{where}, what); }
const json& require(const json& obj, const char* key, const std::string& where) {
  return xb::require(obj, key, Loc{where});
}
const json& require_object(const json& obj, const char* key, const std::string& where) {
  return xb::require_object(obj, key, Loc{where});
}
void require_is_object(const json& value, const std::string& where) { xb::require_is_object(value, Loc{where}); }
std::string get_string(const json& obj, const char* key, const std::string& where) {
  return xb::get_string(obj, key, Loc{where});
}
bool get_bool(const json& obj, const char* key, const std::string& where) { return xb::get_bool(obj, key, Loc{where}); }
double get_double(const json& obj, const char* key, const std::string& where) {
  return xb::get_double(obj, key, Loc{where});
}
int get_int(const json& obj, const char* key, const std::string& where) {
  return xb::get_int<int>(obj, key, Loc{where});
}
std::int64_t get_int64(const json& obj, const char* key, const std::string& where) {
  return xb::get_int<std::int64_t>(obj, key, Loc{where});
}
std::uint64_t get_uint64(const json& obj, const char* key, const std::string& where) {
  return xb::get_int<std::uint64_t>(obj, key, Loc{where});
}
}  // namespace raw_session_json

RawSession parse_raw_session(const std::string& text) {
  SessionSax sax;
  sax.input_size = text.size();
  try {
    json::sax_parse(text, &sax);
  } catch (const json::exception& e) {
    throw InputError("raw_session: " + strict_json::parse_error_text(e, text.size()));
  }
  const json& root = sax.root;
  if (!root.is_object()) throw InputError("raw_session: top level must be an object");
  if (!root.contains("crossbench") && root.contains("traceEvents"))
    throw InputError(
        "a Chrome trace (PyTorch's export_chrome_trace, or a run folder's full.json / trace_only.json), not a "
        "raw_session.json: check it with validate --trace FILE");

  const Loc top{"top level"};
  const Loc block_loc{"crossbench"};
  const json& block = require_object(root, "crossbench", top);
  const std::string format = get_string(block, "format", block_loc);
  if (format != "raw_session") fail(block_loc, "format is \"" + format + "\", expected \"raw_session\"");
  const auto version = get_int<std::int64_t>(block, "version", block_loc);
  if (version != 1) fail(block_loc, fmt::format("unsupported version {}", version));

  RawSession s;
  s.meta = parse_meta(require_object(root, "meta", top));
  require_array(root, "records", top);  // present and an array; elements were converted while parsing
  require_array(root, "ranges", top);
  s.records = std::move(sax.records);
  s.ranges = std::move(sax.ranges);
  const json& timings = require_array(root, "event_timings", top);
  for (std::size_t i = 0; i < timings.size(); ++i) {
    s.event_timings.push_back(parse_timing(timings[i], Loc{"event_timings", static_cast<std::ptrdiff_t>(i)}));
  }
  const json& fixtures = require_array(root, "fixtures", top);
  for (std::size_t i = 0; i < fixtures.size(); ++i) {
    s.fixtures.push_back(parse_fixture(fixtures[i], Loc{"fixtures", static_cast<std::ptrdiff_t>(i)}));
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
