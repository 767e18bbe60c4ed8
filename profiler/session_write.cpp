// raw_session.json writer (profiler/session_io.h, docs/formats.md): the session streamed one record
// per line, and the JSON blocks events.json and the traces share with it (meta, fixtures, GPU).
// The strict parser is in profiler/session_io.cpp.
#include "profiler/session_io.h"
#include "profiler/session_json.h"

#include <cmath>
#include <cstddef>
#include <string_view>

#include <fmt/format.h>

#include "profiler/json_text.h"

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
              {"devices", std::move(devices)},
              {"gpu", gpu_meta_json(m.gpu)}};
}

void check_finite(double value, const std::string& what) {
  if (!std::isfinite(value)) {
    throw std::invalid_argument("write_raw_session: " + what + " is not finite (JSON has no NaN/Inf)");
  }
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
              {"activity_source", meta.activity_source},
              {"schedule",
               {{"wait", meta.schedule_wait}, {"warmup", meta.schedule_warmup}, {"active", meta.schedule_active}}}};
}

json gpu_sample_json(const GpuClockSample& g) {
  check_finite(g.power_w, "GPU power");
  json j{{"valid", g.valid},
         {"sm_clock_mhz", g.sm_clock_mhz},
         {"mem_clock_mhz", g.mem_clock_mhz},
         {"temperature_c", g.temperature_c},
         {"power_w", g.power_w},
         {"throttle_reasons", g.throttle_reasons},
         {"throttled", g.throttled}};
  if (!g.error.empty()) j["error"] = g.error;
  return j;
}

json fixture_timing_json(const FixtureTiming& t) {
  for (double v : {t.max_noise, t.min_time_s, t.max_time_s, t.sampling_s, t.early_slowdown}) check_finite(v, "fixture timing");
  for (double v : t.samples_ns) check_finite(v, "fixture timing sample");
  json j{{"mode", t.mode},
              {"blocking", t.blocking},
              {"launches_per_sample", t.launches_per_sample},
              {"rotation", t.rotation},
              {"max_noise", t.max_noise},
              {"min_samples", t.min_samples},
              {"min_time_s", t.min_time_s},
              {"max_time_s", t.max_time_s},
              {"stop", t.stop},
              {"sampling_s", t.sampling_s},
              {"samples_ns", t.samples_ns},
              {"warmed_up", t.warmed_up},
              {"cold_start", t.cold_start},
              {"early_slowdown", t.early_slowdown},
              {"gpu_before", gpu_sample_json(t.gpu_before)},
              {"gpu_after", gpu_sample_json(t.gpu_after)}};
  if (t.graph) j["graph"] = true;  // optional key: absent means eager launches
  return j;
}

json fixture_json(const FixtureInfo& f) {
  check_finite(f.flops, "fixture " + f.name + " flops");
  check_finite(f.bytes, "fixture " + f.name + " bytes");
  check_finite(f.max_rel_error, "fixture " + f.name + " max_rel_error");
  json fj{{"name", f.name},
          {"op", f.op},
          {"dtype", f.dtype},
          {"size", f.size},
          {"flops", f.flops},
          {"bytes", f.bytes},
          {"verified", f.verified},
          {"max_rel_error", f.max_rel_error}};
  if (!f.has_reference) fj["reference"] = false;  // written only when false: older files read as true
  if (!f.timing.mode.empty()) fj["timing"] = fixture_timing_json(f.timing);
  if (!f.error.empty()) fj["error"] = f.error;
  return fj;
}

void write_raw_session(const RawSession& session, std::ostream& out) {
  json fixtures = json::array();
  for (const FixtureInfo& f : session.fixtures) fixtures.push_back(fixture_json(f));
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
  o.raw(meta_to_json(session.meta).dump(-1, ' ', false, json::error_handler_t::replace));
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
  o.lit(",\n\"fixtures\": ");
  o.raw(fixtures.dump(-1, ' ', false, json::error_handler_t::replace));
  o.lit("}\n");
  o.finish();
}

json gpu_meta_json(const GpuMeta& g) {
  check_finite(g.power_limit_w, "GPU power limit");
  return json{{"source", g.source},
              {"error", g.error},
              {"uuid", g.uuid},
              {"pci_bus_id", g.pci_bus_id},
              {"driver_version", g.driver_version},
              {"power_limit_w", g.power_limit_w},
              {"sm_clock_max_mhz", g.sm_clock_max_mhz},
              {"mem_clock_max_mhz", g.mem_clock_max_mhz},
              {"at_start", gpu_sample_json(g.at_start)},
              {"at_end", gpu_sample_json(g.at_end)}};
}

}  // namespace xb
