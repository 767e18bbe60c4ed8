// raw_session.json writer (profiler/model/session_io.h, docs/formats.md): the session streamed one record
// per line, the client's metadata and fixtures as the text given, and the "crossbench" block every
// output shares.
// The strict parser is in profiler/model/session_io.cpp.
#include "profiler/model/session_io.h"
#include "profiler/model/session_json.h"

#include <cstddef>
#include <string_view>

#include <fmt/format.h>

#include "common/json_text.h"

namespace xb {
namespace {

using nlohmann::json;

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
              {"activity_source", m.activity_source},
              {"process_id", m.process_id},
              {"schedule_wait", m.schedule_wait},
              {"schedule_warmup", m.schedule_warmup},
              {"schedule_active", m.schedule_active},
              {"devices", std::move(devices)}};
}

/// meta_to_json plus the client's metadata blocks, each parsed back so that it takes its place
/// among the profiler's keys in nlohmann's key order (what a replay reads back: the same bytes).
json meta_with_metadata(const SessionMeta& m) {
  json j = meta_to_json(m);
  for (const MetadataBlock& b : m.metadata) {
    if (const std::string error = metadata_key_error(b.key); !error.empty()) {
      throw std::invalid_argument("write_raw_session: " + error);
    }
    json value = json::parse(b.json, nullptr, false);
    if (value.is_discarded()) throw std::invalid_argument("write_raw_session: metadata \"" + b.key + "\" is not JSON");
    j[b.key] = std::move(value);
  }
  return j;
}

template <std::size_t N, typename Int>
void field(detail::JsonOut& o, const char (&key)[N], Int value) {
  o.lit(key);
  o.integer(value);
}

void int3(detail::JsonOut& o, const std::int32_t (&v)[3]) {
  o.ch('[');
  o.integer(v[0]);
  o.ch(',');
  o.integer(v[1]);
  o.ch(',');
  o.integer(v[2]);
  o.ch(']');
}

void write_record(detail::JsonOut& o, const RawRecord& r) {
  o.lit("{\"kind\":\"");
  o.raw(to_string(r.kind));
  o.ch('"');
  if (r.kind != RawKind::ExternalCorrelation) {
    field(o, ",\"start_ns\":", r.start_ns);
    field(o, ",\"end_ns\":", r.end_ns);
  }
  field(o, ",\"correlation_id\":", r.correlation_id);
  switch (r.kind) {
    case RawKind::Kernel:
    case RawKind::Memcpy:
    case RawKind::Memset:
    case RawKind::Synchronization:
      field(o, ",\"device_id\":", r.device_id);
      field(o, ",\"context_id\":", r.context_id);
      field(o, ",\"stream_id\":", r.stream_id);
      if (r.graph_node_id != 0) field(o, ",\"graph_node_id\":", r.graph_node_id);
      if (r.graph_id != 0) field(o, ",\"graph_id\":", r.graph_id);
      break;
    default:
      break;
  }
  switch (r.kind) {
    case RawKind::Kernel:
      o.lit(",\"name\":");
      o.string(r.name);
      o.lit(",\"grid\":");
      int3(o, r.grid);
      o.lit(",\"block\":");
      int3(o, r.block);
      field(o, ",\"registers_per_thread\":", r.registers_per_thread);
      field(o, ",\"static_shared_bytes\":", r.static_shared_bytes);
      field(o, ",\"dynamic_shared_bytes\":", r.dynamic_shared_bytes);
      break;
    case RawKind::Memcpy:
      field(o, ",\"bytes\":", r.bytes);
      field(o, ",\"copy_kind\":", r.copy_kind);
      break;
    case RawKind::Memset:
      field(o, ",\"bytes\":", r.bytes);
      field(o, ",\"memset_value\":", r.memset_value);
      break;
    case RawKind::Runtime:
    case RawKind::Driver:
      o.lit(",\"name\":");
      o.string(r.name);
      field(o, ",\"cbid\":", r.cbid);
      field(o, ",\"process_id\":", r.process_id);
      field(o, ",\"thread_id\":", r.thread_id);
      field(o, ",\"return_value\":", r.return_value);
      break;
    case RawKind::Synchronization:
      field(o, ",\"sync_type\":", r.sync_type);
      break;
    case RawKind::ExternalCorrelation:
      field(o, ",\"external_kind\":", r.external_kind);
      field(o, ",\"external_id\":", r.external_id);
      break;
  }
  o.ch('}');
}

void write_range(detail::JsonOut& o, const HostRange& r) {
  field(o, "{\"id\":", r.id);
  field(o, ",\"parent_id\":", r.parent_id);
  o.lit(",\"name\":");
  o.string(r.name);
  o.lit(",\"category\":\"");
  o.raw(to_string(r.category));
  o.ch('"');
  field(o, ",\"start_ns\":", r.start_ns);
  field(o, ",\"end_ns\":", r.end_ns);
  field(o, ",\"process_id\":", r.process_id);
  field(o, ",\"thread_id\":", r.thread_id);
  o.ch('}');
}

}  // namespace

json meta_block(const SessionMeta& meta, const std::string& format) {
  return json{
      {"format", format},
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
      {"activity_source", meta.activity_source},
      {"schedule", {{"wait", meta.schedule_wait}, {"warmup", meta.schedule_warmup}, {"active", meta.schedule_active}}}};
}

void write_raw_session(const RawSession& session, std::ostream& out) {
  for (const FixtureBlock& f : session.fixtures) {
    if (!json::accept(f.json)) throw std::invalid_argument("write_raw_session: fixture " + f.name + " is not JSON");
  }
  json timings = json::array();
  for (const StepTiming& t : session.event_timings) {
    timings.push_back(json{{"fixture", t.fixture},
                           {"step", t.step},
                           {"range_id", t.range_id},
                           {"event_ns", t.event_ns},
                           {"launches", t.launches}});
  }

  detail::JsonOut o(out);
  o.lit("{\"crossbench\": ");
  o.raw(meta_block(session.meta, "raw_session").dump(-1, ' ', false, json::error_handler_t::replace));
  o.lit(",\n\"meta\": ");
  o.raw(meta_with_metadata(session.meta).dump(-1, ' ', false, json::error_handler_t::replace));
  o.lit(",\n\"records\": [");
  for (std::size_t i = 0; i < session.records.size(); ++i) {
    if (i == 0) {
      o.ch('\n');
    } else {
      o.lit(",\n");
    }
    write_record(o, session.records[i]);
  }
  o.lit("],\n\"ranges\": [");
  for (std::size_t i = 0; i < session.ranges.size(); ++i) {
    if (i == 0) {
      o.ch('\n');
    } else {
      o.lit(",\n");
    }
    write_range(o, session.ranges[i]);
  }
  o.lit("],\n\"event_timings\": ");
  o.raw(timings.dump(-1, ' ', false, json::error_handler_t::replace));
  o.lit(",\n\"fixtures\": [");  // each as the client wrote it, as one compact JSON array would be
  for (std::size_t i = 0; i < session.fixtures.size(); ++i) {
    if (i > 0) o.ch(',');
    o.raw(session.fixtures[i].json);
  }
  o.ch(']');
  o.lit("}\n");
  o.finish();
}

}  // namespace xb
