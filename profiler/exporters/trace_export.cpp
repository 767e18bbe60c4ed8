// Chrome trace exporters (profiler/exporters/trace_export.h, docs/formats.md "trace_only.json", "full.json").
//
// Both writers stream JSON text through detail::JsonStream (no JSON tree for traceEvents), with
// timestamps written as exact microsecond text relative to meta.window_start_ns.
#include "profiler/exporters/trace_export.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/json_text.h"
#include "profiler/model/session_io.h"
#include "profiler/model/session_json.h"

namespace xb {
namespace {

using detail::JsonOut;

/// deviceProperties in PyTorch/Kineto's field names and order.
std::string device_properties(const SessionMeta& meta) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const DeviceInfo& d : meta.devices) {
    list.push_back(nlohmann::ordered_json{{"id", d.id},
                                          {"name", d.name},
                                          {"totalGlobalMem", d.total_global_mem},
                                          {"computeMajor", d.compute_major},
                                          {"computeMinor", d.compute_minor},
                                          {"maxThreadsPerBlock", d.max_threads_per_block},
                                          {"maxThreadsPerMultiprocessor", d.max_threads_per_multiprocessor},
                                          {"regsPerBlock", d.regs_per_block},
                                          {"warpSize", d.warp_size},
                                          {"sharedMemPerBlock", d.shared_mem_per_block},
                                          {"numSms", d.num_sms},
                                          {"regsPerMultiprocessor", d.regs_per_multiprocessor},
                                          {"sharedMemPerBlockOptin", d.shared_mem_per_block_optin},
                                          {"sharedMemPerMultiprocessor", d.shared_mem_per_multiprocessor}});
  }
  return list.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

/// Lanes seen while writing, for the metadata events. Consecutive events mostly share a lane, so
/// the last insertion is cached to keep the std::set cost off the hot path.
class Lanes {
 public:
  void host(std::uint32_t pid, std::uint32_t tid) { add(host_, last_host_, pid, tid); }
  void device(std::uint32_t dev, std::uint32_t stream) { add(device_, last_device_, dev, stream); }
  const std::set<std::pair<std::uint32_t, std::uint32_t>>& host_lanes() const { return host_; }
  const std::set<std::pair<std::uint32_t, std::uint32_t>>& device_lanes() const { return device_; }

 private:
  using Lane = std::pair<std::uint32_t, std::uint32_t>;
  static void add(std::set<Lane>& set, Lane& last, std::uint32_t a, std::uint32_t b) {
    const Lane lane{a, b};
    if (lane == last && !set.empty()) return;
    set.insert(lane);
    last = lane;
  }
  std::set<Lane> host_, device_;
  Lane last_host_{}, last_device_{};
};

/// Streams one Chrome trace document: header keys, the traceEvents array, trailing keys.
class TraceWriter {
 public:
  TraceWriter(std::ostream& out, std::int64_t base_ns) : o_(out), base_ns_(base_ns) {}

  /// Writes everything up to and including `"traceEvents": [`.
  void begin(const SessionMeta& meta, const char* format, bool distributed_info) {
    for (const MetadataBlock& b : meta.metadata) {
      if (const std::string error = metadata_key_error(b.key); !error.empty())
        throw std::invalid_argument("trace: " + error);
      if (!nlohmann::json::accept(b.json)) throw std::invalid_argument("trace: metadata \"" + b.key + "\" is not JSON");
    }
    o_.lit("{\"schemaVersion\": 1,\n\"crossbench\": ");
    o_.raw(meta_block(meta, format).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    o_.lit(",\n\"deviceProperties\": ");
    o_.raw(device_properties(meta));
    if (distributed_info) {
      // One process, one GPU: rank 0 of 1 (HTA reads the rank from here). No backend is named,
      // since no collective library is involved.
      o_.lit(",\n\"distributedInfo\": {\"rank\": 0, \"world_size\": 1}");
    }
    // Kineto's top-level version keys, so tools that read PyTorch traces find them.
    o_.lit(",\n\"cuda_driver_version\": ");
    o_.integer(meta.cuda_driver_version);
    o_.lit(",\n\"cuda_runtime_version\": ");
    o_.integer(meta.cuda_runtime_version);
    o_.lit(",\n\"cupti_version\": ");
    o_.integer(meta.cupti_version);
    // The client's metadata, in key order, each as given (Kineto writes addMetadata's the same
    // way); crossbench's harness puts the GPU's NVML facts here ("gpu").
    for (const MetadataBlock& b : meta.metadata) {
      o_.lit(",\n");
      o_.string(b.key);
      o_.lit(": ");
      o_.raw(b.json);
    }
    o_.lit(",\n\"displayTimeUnit\": \"ms\",\n\"baseTimeNanoseconds\": ");
    o_.integer(meta.window_start_ns);
    o_.lit(",\n\"traceEvents\": [");
  }

  /// Room for one event's text besides its category and name strings: the keys, the numbers and
  /// the args of any event below (at most about 540 bytes).
  static constexpr std::size_t kEventRoom = 640;
  /// Room for a complete() event named `name` with its args.
  static std::size_t room(std::string_view cat, std::string_view name) {
    return kEventRoom + cat.size() + JsonOut::string_room(name.size());
  }

  /// Starts one array element ("{" with the separating comma) at p.
  char* open(char* p) {
    if (first_) {
      first_ = false;
      return JsonOut::put_lit(p, "\n{");
    }
    return JsonOut::put_lit(p, ",\n{");
  }

  /// `"ph":"X","cat":cat,"name":name,"pid":pid,"tid":tid,"ts":..,"dur":..,"args":{` at p (args
  /// open; the caller writes them and closes with "}}"). The caller made room(cat, name).
  char* complete(char* p, std::string_view cat, std::string_view name, std::uint64_t pid, std::uint64_t tid,
                 std::int64_t start_ns, std::int64_t end_ns) {
    p = open(p);
    p = JsonOut::put_lit(p, "\"ph\":\"X\",\"cat\":\"");
    p = JsonOut::put_raw(p, cat);
    p = JsonOut::put_lit(p, "\",\"name\":");
    p = JsonOut::put_string(p, name);
    p = pid_tid(p, pid, tid);
    p = JsonOut::put_lit(p, ",\"ts\":");
    p = JsonOut::put_us(p, start_ns - base_ns_);
    p = JsonOut::put_lit(p, ",\"dur\":");
    p = JsonOut::put_us(p, end_ns - start_ns);
    return JsonOut::put_lit(p, ",\"args\":{");
  }

  /// An ac2g flow endpoint at p: "s" on the launch lane or "f" (binding "e") on the device lane.
  /// Needs kEventRoom.
  char* flow(char* p, bool start, std::uint32_t id, std::uint64_t pid, std::uint64_t tid, std::int64_t ts_ns) {
    p = open(p);
    if (start) {
      p = JsonOut::put_lit(p, "\"ph\":\"s\",\"id\":");
    } else {
      p = JsonOut::put_lit(p, "\"ph\":\"f\",\"id\":");
    }
    p = JsonOut::put_integer(p, id);
    p = pid_tid(p, pid, tid);
    p = JsonOut::put_lit(p, ",\"ts\":");
    p = JsonOut::put_us(p, ts_ns - base_ns_);
    if (start) return JsonOut::put_lit(p, ",\"cat\":\"ac2g\",\"name\":\"ac2g\"}");
    return JsonOut::put_lit(p, ",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}");
  }

  /// A metadata event: {"name":meta,"ph":"M","ts":0.000,"pid","tid","args":{key: text or number}}.
  void metadata(std::string_view meta, std::uint64_t pid, std::uint64_t tid, std::string_view key,
                const std::string* text, std::uint64_t number) {
    char* p = o_.begin(kEventRoom);
    p = open(p);
    p = JsonOut::put_lit(p, "\"name\":\"");
    o_.commit(p);
    o_.raw(meta);
    o_.lit("\",\"ph\":\"M\",\"ts\":");
    o_.us(0);
    o_.commit(pid_tid(o_.begin(kEventRoom), pid, tid));
    o_.lit(",\"args\":{\"");
    o_.raw(key);
    o_.lit("\":");
    if (text != nullptr) {
      o_.string(*text);
    } else {
      o_.integer(number);
    }
    o_.lit("}}");
  }

  /// Process/thread name, label and sort-index events for every lane seen.
  void lane_metadata(const Lanes& lanes, const std::string& process_name) {
    const std::string cpu = "CPU";
    bool have_pid = false;
    std::uint32_t last_pid = 0;
    for (const auto& [pid, tid] : lanes.host_lanes()) {
      if (!have_pid || pid != last_pid) {
        metadata("process_name", pid, 0, "name", &process_name, 0);
        metadata("process_labels", pid, 0, "labels", &cpu, 0);
        metadata("process_sort_index", pid, 0, "sort_index", nullptr, pid);
        last_pid = pid;
        have_pid = true;
      }
      const std::string thread = fmt::format("thread {} ({})", tid, process_name);
      metadata("thread_name", pid, tid, "name", &thread, 0);
      metadata("thread_sort_index", pid, tid, "sort_index", nullptr, tid);
    }
    have_pid = false;
    for (const auto& [dev, stream] : lanes.device_lanes()) {
      if (!have_pid || dev != last_pid) {
        const std::string gpu = fmt::format("GPU {}", dev);
        metadata("process_name", dev, 0, "name", &gpu, 0);
        metadata("process_labels", dev, 0, "labels", &gpu, 0);
        metadata("process_sort_index", dev, 0, "sort_index", nullptr, 5000000ull + dev);
        last_pid = dev;
        have_pid = true;
      }
      const std::string name = fmt::format("stream {}", stream);
      metadata("thread_name", dev, stream, "name", &name, 0);
      metadata("thread_sort_index", dev, stream, "sort_index", nullptr, stream);
    }
  }

  /// Closes traceEvents; the caller may add more keys through out(), then calls finish().
  void end_events() { o_.lit("\n]"); }
  JsonOut& out() { return o_; }
  void finish() {
    o_.lit("}\n");
    o_.finish();
  }

 private:
  static char* pid_tid(char* p, std::uint64_t pid, std::uint64_t tid) {
    p = JsonOut::put_lit(p, ",\"pid\":");
    p = JsonOut::put_integer(p, pid);
    p = JsonOut::put_lit(p, ",\"tid\":");
    return JsonOut::put_integer(p, tid);
  }

  JsonOut o_;
  std::int64_t base_ns_;
  bool first_ = true;
};

/// ,"graph node id":N,"graph id":N at p, for work a CUDA graph launched (CUPTI's graphNodeId and
/// graphId, non-zero); nothing otherwise.
char* graph_args(char* p, const RawRecord& raw) {
  if (raw.graph_node_id != 0) {
    p = JsonOut::put_lit(p, ",\"graph node id\":");
    p = JsonOut::put_integer(p, raw.graph_node_id);
  }
  if (raw.graph_id != 0) {
    p = JsonOut::put_lit(p, ",\"graph id\":");
    p = JsonOut::put_integer(p, raw.graph_id);
  }
  return p;
}

/// Device activity args after "args":{ (and after "External id" when the caller wrote it), at p:
/// device, context, stream, correlation, then the per-kind extras PyTorch writes (within
/// TraceWriter::kEventRoom).
char* device_args(char* p, bool leading_comma, std::uint32_t device, std::uint32_t context, std::uint32_t stream,
                  std::uint32_t correlation, const RawRecord* raw) {
  if (leading_comma) {
    p = JsonOut::put_lit(p, ",\"device\":");
  } else {
    p = JsonOut::put_lit(p, "\"device\":");
  }
  p = JsonOut::put_integer(p, device);
  p = JsonOut::put_lit(p, ",\"context\":");
  p = JsonOut::put_integer(p, context);
  p = JsonOut::put_lit(p, ",\"stream\":");
  p = JsonOut::put_integer(p, stream);
  p = JsonOut::put_lit(p, ",\"correlation\":");
  p = JsonOut::put_integer(p, correlation);
  if (raw == nullptr) return p;
  if (raw->kind == RawKind::Kernel) {
    p = JsonOut::put_lit(p, ",\"registers per thread\":");
    p = JsonOut::put_integer(p, raw->registers_per_thread);
    p = JsonOut::put_lit(p, ",\"shared memory\":");
    p = JsonOut::put_integer(p, static_cast<std::int64_t>(raw->static_shared_bytes) + raw->dynamic_shared_bytes);
    p = JsonOut::put_lit(p, ",\"grid\":[");
    p = JsonOut::put_integer(p, raw->grid[0]);
    *p++ = ',';
    p = JsonOut::put_integer(p, raw->grid[1]);
    *p++ = ',';
    p = JsonOut::put_integer(p, raw->grid[2]);
    p = JsonOut::put_lit(p, "],\"block\":[");
    p = JsonOut::put_integer(p, raw->block[0]);
    *p++ = ',';
    p = JsonOut::put_integer(p, raw->block[1]);
    *p++ = ',';
    p = JsonOut::put_integer(p, raw->block[2]);
    *p++ = ']';
    p = graph_args(p, *raw);
  } else if (raw->kind == RawKind::Memcpy || raw->kind == RawKind::Memset) {
    p = JsonOut::put_lit(p, ",\"bytes\":");
    p = JsonOut::put_integer(p, raw->bytes);
    // bytes per ns == GB/s (Kineto's formula); 0 for a zero-length interval instead of Inf.
    const std::int64_t dur = raw->end_ns - raw->start_ns;
    p = JsonOut::put_lit(p, ",\"memory bandwidth (GB/s)\":");
    p = JsonOut::put_number(p, dur > 0 ? static_cast<double>(raw->bytes) / static_cast<double>(dur) : 0.0);
    p = graph_args(p, *raw);
  }
  return p;
}

/// (range index, device, stream) of a gpu_user_annotation span.
struct SpanKey {
  std::size_t range;
  std::uint32_t device, stream;
  bool operator==(const SpanKey& o) const { return range == o.range && device == o.device && stream == o.stream; }
};
struct SpanKeyHash {
  std::size_t operator()(const SpanKey& k) const {
    std::uint64_t h = k.range * 0x9E3779B97F4A7C15ull;
    h ^= (static_cast<std::uint64_t>(k.device) << 32 | k.stream) + 0x7F4A7C15ull + (h << 6) + (h >> 2);
    return static_cast<std::size_t>(h);
  }
};

const char* api_category(bool driver) { return driver ? "cuda_driver" : "cuda_runtime"; }

/// gpu_user_annotation: per user_annotation range and (device, stream), first start to last end
/// of the device work launched anywhere in its subtree.
struct AnnotationSpan {
  std::size_t range;  ///< index into Session::ranges
  std::uint32_t device, stream;
  std::int64_t start_ns, end_ns;
};

/// Every annotation span of the session, ordered by (range, device, stream).
std::vector<AnnotationSpan> annotation_spans(const Session& session) {
  std::unordered_map<std::uint64_t, std::size_t> index_of;
  index_of.reserve(session.ranges.size());
  for (std::size_t i = 0; i < session.ranges.size(); ++i) index_of.emplace(session.ranges[i].id, i);
  std::vector<AnnotationSpan> spans;
  std::unordered_map<SpanKey, std::size_t, SpanKeyHash> slot_of;  // (range, device, stream) -> spans index
  std::tuple<std::uint64_t, std::uint32_t, std::uint32_t> last_key{0, 0, 0};
  std::vector<std::size_t> last_slots;  // slots of the last (external id, device, stream)
  bool have_last = false;
  for (const DeviceActivity& a : session.device) {
    if (a.external_id == 0) continue;
    const auto key = std::make_tuple(a.external_id, a.device_id, a.stream_id);
    if (!have_last || key != last_key) {
      last_slots.clear();
      auto it = index_of.find(a.external_id);
      for (std::size_t guard = 0; it != index_of.end() && guard < session.ranges.size(); ++guard) {
        const HostRange& r = session.ranges[it->second];
        if (r.category == RangeCategory::UserAnnotation) {
          const auto [slot, inserted] = slot_of.emplace(SpanKey{it->second, a.device_id, a.stream_id}, spans.size());
          if (inserted) spans.push_back(AnnotationSpan{it->second, a.device_id, a.stream_id, a.start_ns, a.end_ns});
          last_slots.push_back(slot->second);
        }
        if (r.parent_id == 0 || r.parent_id == r.id) break;
        it = index_of.find(r.parent_id);
      }
      last_key = key;
      have_last = true;
    }
    for (std::size_t s : last_slots) {
      spans[s].start_ns = std::min(spans[s].start_ns, a.start_ns);
      spans[s].end_ns = std::max(spans[s].end_ns, a.end_ns);
    }
  }
  std::sort(spans.begin(), spans.end(), [](const AnnotationSpan& x, const AnnotationSpan& y) {
    return std::tie(x.range, x.device, x.stream) < std::tie(y.range, y.device, y.stream);
  });
  return spans;
}

/// The device activities, each with its flow endpoints in one run: one "s" per launch call and one
/// "f" per activity.
void write_device_activities(TraceWriter& w, const Session& session, Lanes& lanes) {
  JsonOut& o = w.out();
  std::vector<bool> flow_started(session.api.size(), false);
  for (const DeviceActivity& a : session.device) {
    const char* cat = trace_category(a.kind);
    // The event and its two flow endpoints in one run.
    char* p = o.begin(TraceWriter::room(cat, a.name) + 2 * TraceWriter::kEventRoom);
    p = w.complete(p, cat, a.name, a.device_id, a.stream_id, a.start_ns, a.end_ns);
    p = JsonOut::put_lit(p, "\"External id\":");
    p = JsonOut::put_integer(p, a.external_id);
    p = device_args(p, true, a.device_id, a.context_id, a.stream_id, a.correlation_id, a.raw);
    p = JsonOut::put_lit(p, "}}");
    if (a.launch >= 0 && static_cast<std::size_t>(a.launch) < session.api.size()) {
      // One "s" per launch call and one "f" per activity: a cudaGraphLaunch owns every activity
      // of its graph under one correlation id (Kineto writes its flows the same way).
      const auto li = static_cast<std::size_t>(a.launch);
      const ApiCall& launch = session.api[li];
      if (!flow_started[li]) {
        flow_started[li] = true;
        p = w.flow(p, true, a.correlation_id, launch.process_id, launch.thread_id, launch.start_ns);
      }
      p = w.flow(p, false, a.correlation_id, a.device_id, a.stream_id, a.start_ns);
    }
    o.commit(p);
    lanes.device(a.device_id, a.stream_id);
  }
}

}  // namespace

void write_trace_only(const RawSession& raw, std::ostream& out) {
  TraceWriter w(out, raw.meta.window_start_ns);
  JsonOut& o = w.out();
  w.begin(raw.meta, "trace_only", false);
  Lanes lanes;
  DemangleCache names;
  std::string memcpy_text;
  const std::string memset_text = "Memset (Device)";

  for (const RawRecord& r : raw.records) {
    switch (r.kind) {
      case RawKind::Kernel:
      case RawKind::Memcpy:
      case RawKind::Memset: {
        const char* cat = r.kind == RawKind::Kernel   ? "kernel"
                          : r.kind == RawKind::Memcpy ? "gpu_memcpy"
                                                      : "gpu_memset";
        const std::string* name = &memset_text;
        if (r.kind == RawKind::Kernel) {
          name = &names.get(r.name);
        } else if (r.kind == RawKind::Memcpy) {
          memcpy_text = memcpy_name(r.copy_kind);
          name = &memcpy_text;
        }
        char* p = o.begin(TraceWriter::room(cat, *name));
        p = w.complete(p, cat, *name, r.device_id, r.stream_id, r.start_ns, r.end_ns);
        p = device_args(p, false, r.device_id, r.context_id, r.stream_id, r.correlation_id, &r);
        o.commit(JsonOut::put_lit(p, "}}"));
        lanes.device(r.device_id, r.stream_id);
        break;
      }
      case RawKind::Runtime:
      case RawKind::Driver: {
        const char* cat = api_category(r.kind == RawKind::Driver);
        char* p = o.begin(TraceWriter::room(cat, r.name));
        p = w.complete(p, cat, r.name, r.process_id, r.thread_id, r.start_ns, r.end_ns);
        p = JsonOut::put_lit(p, "\"cbid\":");
        p = JsonOut::put_integer(p, r.cbid);
        p = JsonOut::put_lit(p, ",\"correlation\":");
        p = JsonOut::put_integer(p, r.correlation_id);
        o.commit(JsonOut::put_lit(p, "}}"));
        lanes.host(r.process_id, r.thread_id);
        break;
      }
      case RawKind::Synchronization: {
        const std::string name = sync_name(r.sync_type);
        char* p = o.begin(TraceWriter::room("cuda_sync", name));
        p = w.complete(p, "cuda_sync", name, r.device_id, r.stream_id, r.start_ns, r.end_ns);
        p = device_args(p, false, r.device_id, r.context_id, r.stream_id, r.correlation_id, nullptr);
        o.commit(JsonOut::put_lit(p, "}}"));
        lanes.device(r.device_id, r.stream_id);
        break;
      }
      case RawKind::ExternalCorrelation:
        break;  // written to "externalCorrelations" below
    }
  }
  for (const HostRange& r : raw.ranges) {
    const char* cat = to_string(r.category);
    char* p = o.begin(TraceWriter::room(cat, r.name));
    p = w.complete(p, cat, r.name, r.process_id, r.thread_id, r.start_ns, r.end_ns);
    p = JsonOut::put_lit(p, "\"External id\":");
    p = JsonOut::put_integer(p, r.id);
    p = JsonOut::put_lit(p, ",\"Parent id\":");
    p = JsonOut::put_integer(p, r.parent_id);
    o.commit(JsonOut::put_lit(p, "}}"));
    lanes.host(r.process_id, r.thread_id);
  }
  w.lane_metadata(lanes, raw.meta.tool);
  w.end_events();

  o.lit(",\n\"externalCorrelations\": [");
  bool first = true;
  for (const RawRecord& r : raw.records) {
    if (r.kind != RawKind::ExternalCorrelation) continue;
    char* p = o.begin(TraceWriter::kEventRoom);
    if (first) {
      p = JsonOut::put_lit(p, "\n{\"correlation\":");
    } else {
      p = JsonOut::put_lit(p, ",\n{\"correlation\":");
    }
    first = false;
    p = JsonOut::put_integer(p, r.correlation_id);
    p = JsonOut::put_lit(p, ",\"External id\":");
    p = JsonOut::put_integer(p, r.external_id);
    p = JsonOut::put_lit(p, ",\"kind\":");
    p = JsonOut::put_integer(p, r.external_kind);
    *p++ = '}';
    o.commit(p);
  }
  o.lit("\n]");
  w.finish();
}

void write_full_trace(const Session& session, std::ostream& out) {
  TraceWriter w(out, session.meta.window_start_ns);
  JsonOut& o = w.out();
  w.begin(session.meta, "full", true);
  Lanes lanes;

  for (const HostRange& r : session.ranges) {
    const char* cat = to_string(r.category);
    char* p = o.begin(TraceWriter::room(cat, r.name));
    p = w.complete(p, cat, r.name, r.process_id, r.thread_id, r.start_ns, r.end_ns);
    p = JsonOut::put_lit(p, "\"External id\":");
    p = JsonOut::put_integer(p, r.id);
    o.commit(JsonOut::put_lit(p, "}}"));
    lanes.host(r.process_id, r.thread_id);
  }
  for (const ApiCall& c : session.api) {
    const char* cat = api_category(c.driver);
    char* p = o.begin(TraceWriter::room(cat, c.name));
    p = w.complete(p, cat, c.name, c.process_id, c.thread_id, c.start_ns, c.end_ns);
    p = JsonOut::put_lit(p, "\"External id\":");
    p = JsonOut::put_integer(p, c.external_id);
    p = JsonOut::put_lit(p, ",\"cbid\":");
    p = JsonOut::put_integer(p, c.cbid);
    p = JsonOut::put_lit(p, ",\"correlation\":");
    p = JsonOut::put_integer(p, c.correlation_id);
    o.commit(JsonOut::put_lit(p, "}}"));
    lanes.host(c.process_id, c.thread_id);
  }
  write_device_activities(w, session, lanes);

  for (const AnnotationSpan& s : annotation_spans(session)) {
    const HostRange& r = session.ranges[s.range];
    char* p = o.begin(TraceWriter::room("gpu_user_annotation", r.name));
    p = w.complete(p, "gpu_user_annotation", r.name, s.device, s.stream, s.start_ns, s.end_ns);
    p = JsonOut::put_lit(p, "\"External id\":");
    p = JsonOut::put_integer(p, r.id);
    o.commit(JsonOut::put_lit(p, "}}"));
    lanes.device(s.device, s.stream);
  }

  for (const SyncEvent& e : session.syncs) {
    char* p = o.begin(TraceWriter::room("cuda_sync", e.name));
    p = w.complete(p, "cuda_sync", e.name, e.device_id, e.stream_id, e.start_ns, e.end_ns);
    p = JsonOut::put_lit(p, "\"External id\":");
    p = JsonOut::put_integer(p, e.external_id);
    p = JsonOut::put_lit(p, ",\"device\":");
    p = JsonOut::put_integer(p, e.device_id);
    p = JsonOut::put_lit(p, ",\"stream\":");
    p = JsonOut::put_integer(p, e.stream_id);
    p = JsonOut::put_lit(p, ",\"correlation\":");
    p = JsonOut::put_integer(p, e.correlation_id);
    o.commit(JsonOut::put_lit(p, "}}"));
    lanes.device(e.device_id, e.stream_id);
  }

  w.lane_metadata(lanes, session.meta.tool);
  w.end_events();
  w.finish();
}

}  // namespace xb
