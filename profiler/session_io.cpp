// raw_session.json writer and strict parser (profiler/session_io.h, docs/formats.md).
#include "profiler/session_io.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <string_view>
#include <type_traits>

#include <fmt/format.h>

#include "profiler/json_text.h"

namespace xb {
namespace {

using nlohmann::json;
using detail::append_int;
using detail::append_raw;
using detail::append_string;

// ---------------------------------------------------------------------------------------------
// Writing

json device_to_json(const DeviceInfo& d) {
  return json{{"id", d.id},
              {"name", d.name},
              {"total_global_mem", d.total_global_mem},
              {"compute_major", d.compute_major},
              {"compute_minor", d.compute_minor},
              {"num_sms", d.num_sms},
              {"max_threads_per_block", d.max_threads_per_block},
              {"max_threads_per_multiprocessor", d.max_threads_per_multiprocessor},
              {"regs_per_block", d.regs_per_block},
              {"regs_per_multiprocessor", d.regs_per_multiprocessor},
              {"warp_size", d.warp_size},
              {"shared_mem_per_block", d.shared_mem_per_block},
              {"shared_mem_per_block_optin", d.shared_mem_per_block_optin},
              {"shared_mem_per_multiprocessor", d.shared_mem_per_multiprocessor},
              {"l2_cache_bytes", d.l2_cache_bytes}};
}

json meta_to_json(const SessionMeta& m) {
  json devices = json::array();
  for (const DeviceInfo& d : m.devices) devices.push_back(device_to_json(d));
  return json{{"tool", m.tool},
              {"created_utc", m.created_utc},
              {"window_start_ns", m.window_start_ns},
              {"window_end_ns", m.window_end_ns},
              {"dropped_records", m.dropped_records},
              {"discarded_by_schedule", m.discarded_by_schedule},
              {"cuda_driver_version", m.cuda_driver_version},
              {"cuda_runtime_version", m.cuda_runtime_version},
              {"cupti_version", m.cupti_version},
              {"cublas_version", m.cublas_version},
              {"process_id", m.process_id},
              {"schedule_wait", m.schedule_wait},
              {"schedule_warmup", m.schedule_warmup},
              {"schedule_active", m.schedule_active},
              {"devices", std::move(devices)}};
}

void check_finite(double value, const std::string& what) {
  if (!std::isfinite(value)) {
    throw std::invalid_argument("write_raw_session: " + what + " is not finite (JSON has no NaN/Inf)");
  }
}

template <typename Int>
void field(fmt::memory_buffer& b, std::string_view key, Int value) {
  append_raw(b, ",\"");
  append_raw(b, key);
  append_raw(b, "\":");
  append_int(b, value);
}

void int3(fmt::memory_buffer& b, std::string_view key, const std::int32_t (&v)[3]) {
  append_raw(b, ",\"");
  append_raw(b, key);
  append_raw(b, "\":[");
  append_int(b, v[0]);
  b.push_back(',');
  append_int(b, v[1]);
  b.push_back(',');
  append_int(b, v[2]);
  b.push_back(']');
}

void write_record(fmt::memory_buffer& b, const RawRecord& r) {
  append_raw(b, "{\"kind\":\"");
  append_raw(b, to_string(r.kind));
  b.push_back('"');
  if (r.kind != RawKind::ExternalCorrelation) {
    field(b, "start_ns", r.start_ns);
    field(b, "end_ns", r.end_ns);
  }
  field(b, "correlation_id", r.correlation_id);
  switch (r.kind) {
    case RawKind::Kernel:
    case RawKind::Memcpy:
    case RawKind::Memset:
    case RawKind::Synchronization:
      field(b, "device_id", r.device_id);
      field(b, "context_id", r.context_id);
      field(b, "stream_id", r.stream_id);
      break;
    default:
      break;
  }
  switch (r.kind) {
    case RawKind::Kernel:
      append_raw(b, ",\"name\":");
      append_string(b, r.name);
      int3(b, "grid", r.grid);
      int3(b, "block", r.block);
      field(b, "registers_per_thread", r.registers_per_thread);
      field(b, "static_shared_bytes", r.static_shared_bytes);
      field(b, "dynamic_shared_bytes", r.dynamic_shared_bytes);
      break;
    case RawKind::Memcpy:
      field(b, "bytes", r.bytes);
      field(b, "copy_kind", r.copy_kind);
      break;
    case RawKind::Memset:
      field(b, "bytes", r.bytes);
      field(b, "memset_value", r.memset_value);
      break;
    case RawKind::Runtime:
    case RawKind::Driver:
      append_raw(b, ",\"name\":");
      append_string(b, r.name);
      field(b, "cbid", r.cbid);
      field(b, "process_id", r.process_id);
      field(b, "thread_id", r.thread_id);
      field(b, "return_value", r.return_value);
      break;
    case RawKind::Synchronization:
      field(b, "sync_type", r.sync_type);
      break;
    case RawKind::ExternalCorrelation:
      field(b, "external_kind", r.external_kind);
      field(b, "external_id", r.external_id);
      break;
  }
  b.push_back('}');
}

void write_range(fmt::memory_buffer& b, const HostRange& r) {
  append_raw(b, "{\"id\":");
  append_int(b, r.id);
  field(b, "parent_id", r.parent_id);
  append_raw(b, ",\"name\":");
  append_string(b, r.name);
  append_raw(b, ",\"category\":\"");
  append_raw(b, to_string(r.category));
  b.push_back('"');
  field(b, "start_ns", r.start_ns);
  field(b, "end_ns", r.end_ns);
  field(b, "process_id", r.process_id);
  field(b, "thread_id", r.thread_id);
  b.push_back('}');
}

// ---------------------------------------------------------------------------------------------
// Parsing: every accessor names the object it reads ("records[12]") and the key.

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw InputError("raw_session: " + where + ": " + what);
}

const json& require(const json& obj, const char* key, const std::string& where) {
  const auto it = obj.find(key);
  if (it == obj.end()) fail(where, fmt::format("missing key \"{}\"", key));
  return *it;
}

const json& require_object(const json& parent, const char* key, const std::string& where) {
  const json& v = require(parent, key, where);
  if (!v.is_object()) fail(where, fmt::format("key \"{}\" must be an object", key));
  return v;
}

const json& require_array(const json& parent, const char* key, const std::string& where) {
  const json& v = require(parent, key, where);
  if (!v.is_array()) fail(where, fmt::format("key \"{}\" must be an array", key));
  return v;
}

/// Converts a JSON value to Int, checking type and range; `what` names it in errors.
template <typename Int>
Int to_int(const json& v, const std::string& where, const std::string& what) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u <= static_cast<std::uint64_t>(std::numeric_limits<Int>::max())) return static_cast<Int>(u);
  } else if (v.is_number_integer()) {
    const auto i = v.get<std::int64_t>();
    if constexpr (std::is_signed_v<Int>) {
      if (i >= static_cast<std::int64_t>(std::numeric_limits<Int>::min()) &&
          i <= static_cast<std::int64_t>(std::numeric_limits<Int>::max())) {
        return static_cast<Int>(i);
      }
    } else {
      if (i >= 0 && static_cast<std::uint64_t>(i) <= std::numeric_limits<Int>::max()) {
        return static_cast<Int>(i);
      }
    }
  } else {
    fail(where, what + " must be an integer");
  }
  fail(where, what + " = " + v.dump() + " is out of range");
}

/// Reads an integer key into Int, checking type and range.
template <typename Int>
Int get_int(const json& obj, const char* key, const std::string& where) {
  return to_int<Int>(require(obj, key, where), where, fmt::format("key \"{}\"", key));
}

double get_double(const json& obj, const char* key, const std::string& where) {
  const json& v = require(obj, key, where);
  if (!v.is_number()) fail(where, fmt::format("key \"{}\" must be a number", key));
  const double d = v.get<double>();
  if (!std::isfinite(d)) fail(where, fmt::format("key \"{}\" is not finite", key));
  return d;
}

bool get_bool(const json& obj, const char* key, const std::string& where) {
  const json& v = require(obj, key, where);
  if (!v.is_boolean()) fail(where, fmt::format("key \"{}\" must be a boolean", key));
  return v.get<bool>();
}

std::string get_string(const json& obj, const char* key, const std::string& where) {
  const json& v = require(obj, key, where);
  if (!v.is_string()) fail(where, fmt::format("key \"{}\" must be a string", key));
  return v.get<std::string>();
}

void get_int3(const json& obj, const char* key, const std::string& where, std::int32_t (&out)[3]) {
  const json& v = require(obj, key, where);
  if (!v.is_array() || v.size() != 3) fail(where, fmt::format("key \"{}\" must be an array of 3 integers", key));
  for (std::size_t k = 0; k < 3; ++k) {
    out[k] = to_int<std::int32_t>(v[k], where, fmt::format("key \"{}\"[{}]", key, k));
  }
}

void require_is_object(const json& v, const std::string& where) {
  if (!v.is_object()) fail(where, "must be an object");
}

DeviceInfo parse_device(const json& j, const std::string& w) {
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
  const std::string w = "meta";
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
  m.process_id = get_int<std::uint32_t>(j, "process_id", w);
  m.schedule_wait = get_int<int>(j, "schedule_wait", w);
  m.schedule_warmup = get_int<int>(j, "schedule_warmup", w);
  m.schedule_active = get_int<int>(j, "schedule_active", w);
  const json& devices = require_array(j, "devices", w);
  m.devices.reserve(devices.size());
  for (std::size_t i = 0; i < devices.size(); ++i) {
    m.devices.push_back(parse_device(devices[i], fmt::format("meta.devices[{}]", i)));
  }
  return m;
}

RawRecord parse_record(const json& j, const std::string& w) {
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

HostRange parse_range(const json& j, const std::string& w) {
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

StepTiming parse_timing(const json& j, const std::string& w) {
  require_is_object(j, w);
  StepTiming t;
  t.fixture = get_string(j, "fixture", w);
  t.step = get_int<std::int64_t>(j, "step", w);
  t.range_id = get_int<std::uint64_t>(j, "range_id", w);
  t.event_ns = get_int<std::int64_t>(j, "event_ns", w);
  return t;
}

FixtureInfo parse_fixture(const json& j, const std::string& w) {
  require_is_object(j, w);
  FixtureInfo f;
  f.name = get_string(j, "name", w);
  f.op = get_string(j, "op", w);
  f.dtype = get_string(j, "dtype", w);
  f.size = get_int<std::int64_t>(j, "size", w);
  f.flops = get_double(j, "flops", w);
  f.bytes = get_double(j, "bytes", w);
  f.verified = get_bool(j, "verified", w);
  f.max_rel_error = get_double(j, "max_rel_error", w);
  return f;
}

}  // namespace

json meta_block(const SessionMeta& meta, const std::string& format) {
  return json{{"format", format},
              {"version", 1},
              {"created_utc", meta.created_utc},
              {"dropped_records", meta.dropped_records},
              {"discarded_by_schedule", meta.discarded_by_schedule},
              {"window_start_ns", meta.window_start_ns},
              {"window_end_ns", meta.window_end_ns},
              {"cuda_driver_version", meta.cuda_driver_version},
              {"cuda_runtime_version", meta.cuda_runtime_version},
              {"cupti_version", meta.cupti_version},
              {"cublas_version", meta.cublas_version},
              {"schedule",
               {{"wait", meta.schedule_wait}, {"warmup", meta.schedule_warmup}, {"active", meta.schedule_active}}}};
}

void write_raw_session(const RawSession& session, std::ostream& out) {
  json fixtures = json::array();
  for (const FixtureInfo& f : session.fixtures) {
    check_finite(f.flops, "fixture " + f.name + " flops");
    check_finite(f.bytes, "fixture " + f.name + " bytes");
    check_finite(f.max_rel_error, "fixture " + f.name + " max_rel_error");
    fixtures.push_back(json{{"name", f.name},
                            {"op", f.op},
                            {"dtype", f.dtype},
                            {"size", f.size},
                            {"flops", f.flops},
                            {"bytes", f.bytes},
                            {"verified", f.verified},
                            {"max_rel_error", f.max_rel_error}});
  }
  json timings = json::array();
  for (const StepTiming& t : session.event_timings) {
    timings.push_back(
        json{{"fixture", t.fixture}, {"step", t.step}, {"range_id", t.range_id}, {"event_ns", t.event_ns}});
  }

  detail::JsonStream stream(out);
  fmt::memory_buffer& b = stream.buf();
  append_raw(b, "{\"crossbench\": ");
  append_raw(b, meta_block(session.meta, "raw_session").dump());
  append_raw(b, ",\n\"meta\": ");
  append_raw(b, meta_to_json(session.meta).dump());
  append_raw(b, ",\n\"records\": [");
  for (std::size_t i = 0; i < session.records.size(); ++i) {
    append_raw(b, i == 0 ? "\n" : ",\n");
    write_record(b, session.records[i]);
    stream.maybe_flush();
  }
  append_raw(b, "],\n\"ranges\": [");
  for (std::size_t i = 0; i < session.ranges.size(); ++i) {
    append_raw(b, i == 0 ? "\n" : ",\n");
    write_range(b, session.ranges[i]);
    stream.maybe_flush();
  }
  append_raw(b, "],\n\"event_timings\": ");
  append_raw(b, timings.dump());
  append_raw(b, ",\n\"fixtures\": ");
  append_raw(b, fixtures.dump());
  append_raw(b, "}\n");
  stream.finish();
}

RawSession parse_raw_session(const std::string& text) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::parse_error& e) {
    throw InputError(std::string("raw_session: not valid JSON: ") + e.what());
  }
  if (!root.is_object()) throw InputError("raw_session: top level must be an object");

  const json& block = require_object(root, "crossbench", "top level");
  const std::string format = get_string(block, "format", "crossbench");
  if (format != "raw_session") {
    fail("crossbench", "format is \"" + format + "\", expected \"raw_session\"");
  }
  const auto version = get_int<std::int64_t>(block, "version", "crossbench");
  if (version != 1) fail("crossbench", fmt::format("unsupported version {}", version));

  RawSession s;
  s.meta = parse_meta(require_object(root, "meta", "top level"));

  const json& records = require_array(root, "records", "top level");
  s.records.reserve(records.size());
  for (std::size_t i = 0; i < records.size(); ++i) {
    s.records.push_back(parse_record(records[i], fmt::format("records[{}]", i)));
  }
  const json& ranges = require_array(root, "ranges", "top level");
  s.ranges.reserve(ranges.size());
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    s.ranges.push_back(parse_range(ranges[i], fmt::format("ranges[{}]", i)));
  }
  const json& timings = require_array(root, "event_timings", "top level");
  for (std::size_t i = 0; i < timings.size(); ++i) {
    s.event_timings.push_back(parse_timing(timings[i], fmt::format("event_timings[{}]", i)));
  }
  const json& fixtures = require_array(root, "fixtures", "top level");
  for (std::size_t i = 0; i < fixtures.size(); ++i) {
    s.fixtures.push_back(parse_fixture(fixtures[i], fmt::format("fixtures[{}]", i)));
  }
  return s;
}

RawSession read_raw_session(const std::filesystem::path& path) {
  const std::string text = read_text_file(path);
  try {
    return parse_raw_session(text);
  } catch (const InputError& e) {
    throw InputError(path.string() + ": " + e.what());
  }
}

std::string read_text_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError(path.string() + ": cannot open (a directory)");
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw InputError(path.string() + ": cannot open");
  const std::streamoff size = in.tellg();
  std::string text;
  if (size > 0) {
    text.resize(static_cast<std::size_t>(size));
    in.seekg(0);
    in.read(text.data(), size);
    if (in.gcount() != size) throw InputError(path.string() + ": read failed");
  }
  return text;
}

}  // namespace xb
