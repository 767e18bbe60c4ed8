// The work signature of one probed call (profiler/model/work_signature.h): the call's device work and
// the happens-before closure of its stream, event-record and event-wait records.
#include "profiler/model/work_signature.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include "profiler/model/event_model.h"

namespace xb {
namespace {

/// CUpti_ActivitySynchronizationType: CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT.
constexpr std::uint32_t kStreamWaitEvent = 2;
constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();

std::string plural(std::size_t n, const char* word) { return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s"); }

/// "kernel 'name'", "memcpy DtoH of 4 B", shortened to a line's worth.
std::string item_text(const WorkItem& w) {
  if (w.kind == RawKind::Kernel) {
    std::string n = demangle(w.name);
    if (n.size() > 80) n = n.substr(0, 77) + "...";
    return fmt::format("kernel '{}'", n);
  }
  return fmt::format("{} of {} B", w.name, w.bytes);
}

/// Why the events cannot see `w`, in the words of the refusal.
const char* relation_text(const WorkItem& w) {
  if (w.after_start && !w.before_end) return "is not joined back (the end event does not wait for it)";
  if (!w.after_start && w.before_end) return "does not wait for the handed stream (it can run before the start event)";
  return "does not wait for the handed stream and is not joined back";
}

/// A cross-stream wait inside the probed call: the group whose event it waits for, the waiting
/// group, and the correlation ids of the event record and of the wait.
struct Edge {
  std::int64_t from_group, to_group;
  std::int64_t record_corr, wait_corr;
};

/// Forward closure: from[g] = the position on g after which work is ordered after the start
/// event. Backward closure: upto[g] = the position on g before which work is ordered before the
/// end event. Each wait moves one stream's bound; a fixpoint over the (few) edges. Group -1 is the
/// handed stream's (and the default streams ordered with it).
struct OrderBounds {
  std::map<std::int64_t, std::int64_t> from, upto;
  std::int64_t from_of(std::int64_t g) const {
    const auto it = from.find(g);
    return it == from.end() ? kNever : it->second;
  }
  std::int64_t upto_of(std::int64_t g) const {
    const auto it = upto.find(g);
    return it == upto.end() ? std::int64_t{-1} : it->second;
  }
};

OrderBounds order_bounds(const std::vector<Edge>& edges, std::int64_t c_start, std::int64_t c_end) {
  OrderBounds b;
  b.from = {{-1, c_start}};
  b.upto = {{-1, c_end}};
  for (bool changed = true; changed;) {
    changed = false;
    for (const Edge& e : edges) {
      if (b.from_of(e.from_group) < e.record_corr && e.wait_corr < b.from_of(e.to_group)) {
        b.from[e.to_group] = e.wait_corr;
        changed = true;
      }
      if (e.wait_corr < b.upto_of(e.to_group) && e.record_corr > b.upto_of(e.from_group)) {
        b.upto[e.from_group] = e.record_corr;
        changed = true;
      }
    }
  }
  return b;
}

}  // namespace

const char* to_string(StreamRole role) {
  switch (role) {
    case StreamRole::Handed:
      return "handed stream";
    case StreamRole::LegacyDefault:
      return "legacy default stream";
    case StreamRole::PerThreadDefault:
      return "per-thread default stream";
    case StreamRole::Other:
      break;
  }
  return "another stream";
}

StreamRole stream_role_from_string(const std::string& name) {
  for (StreamRole r : {StreamRole::Handed, StreamRole::LegacyDefault, StreamRole::PerThreadDefault, StreamRole::Other})
    if (name == to_string(r)) return r;
  throw std::invalid_argument("unknown stream role \"" + name + "\"");
}

bool WorkSignature::covered() const {
  return recorded && std::all_of(items.begin(), items.end(), [](const WorkItem& w) { return w.covered(); });
}

std::vector<const WorkItem*> WorkSignature::uncovered() const {
  std::vector<const WorkItem*> out;
  for (const WorkItem& w : items)
    if (!w.covered()) out.push_back(&w);
  return out;
}

std::string WorkSignature::summary() const {
  if (!recorded) return "not recorded: " + why;
  std::size_t kernels = 0, copies = 0, sets = 0;
  for (const WorkItem& w : items) {
    kernels += w.kind == RawKind::Kernel;
    copies += w.kind == RawKind::Memcpy;
    sets += w.kind == RawKind::Memset;
  }
  if (items.empty()) return "no device work";
  std::vector<std::string> parts;
  if (kernels > 0) parts.push_back(plural(kernels, "kernel"));
  if (copies > 0) parts.push_back(plural(copies, "memcpy"));
  if (sets > 0) parts.push_back(plural(sets, "memset"));
  std::string text = fmt::format("{}", fmt::join(parts, ", "));
  const bool all_handed =
      std::all_of(items.begin(), items.end(), [](const WorkItem& w) { return w.role == StreamRole::Handed; });
  text += all_handed ? " on the handed stream" : fmt::format(" on {} streams", streams);
  if (cross_stream_waits > 0)
    text += fmt::format(", {}", plural(static_cast<std::size_t>(cross_stream_waits), "cross-stream wait"));
  if (stream_ordered_allocations > 0)
    text +=
        fmt::format(", {}", plural(static_cast<std::size_t>(stream_ordered_allocations), "stream-ordered allocation"));
  const std::size_t outside = uncovered().size();
  text += outside == 0 ? "; all of it between the events"
                       : fmt::format("; {} not between the events", plural(outside, "item"));
  return text;
}

WorkSignature derive_work_signature(const ProbeRecords& probe, const HandedStream& handed) {
  WorkSignature s;
  if (!probe.available) {
    s.why = probe.why.empty() ? "the activity source cannot probe a call" : probe.why;
    return s;
  }
  // The markers: this thread's cudaEventRecord calls in the window, in call order.
  std::vector<std::uint32_t> markers;
  for (const RawRecord& r : probe.records) {
    if (r.kind == RawKind::Runtime && r.thread_id == probe.thread_id && r.name == "cudaEventRecord" &&
        r.start_ns >= probe.window_start_ns && r.start_ns <= probe.window_end_ns)
      markers.push_back(r.correlation_id);
  }
  std::sort(markers.begin(), markers.end());
  std::unordered_map<std::uint32_t, const EventRecordOp*> record_by_corr;
  for (const EventRecordOp& e : probe.event_records) record_by_corr[e.correlation_id] = &e;
  const auto stream_of_marker = [&](std::size_t i) -> const EventRecordOp* {
    const auto it = record_by_corr.find(markers[i]);
    return it == record_by_corr.end() ? nullptr : it->second;
  };
  if (markers.size() < 4 || !stream_of_marker(0) || !stream_of_marker(1) || !stream_of_marker(2) ||
      !stream_of_marker(markers.size() - 1)) {
    s.why = fmt::format(
        "the probe's marker events were not recorded ({} of at least 4 cudaEventRecord calls with "
        "their CUDA_EVENT records)",
        markers.size());
    return s;
  }
  const std::uint32_t c_start = markers.front(), c_end = markers.back();
  const std::uint32_t handed_id = stream_of_marker(0)->stream_id;
  const std::uint32_t legacy_id = stream_of_marker(1)->stream_id;
  const std::uint32_t per_thread_id = stream_of_marker(2)->stream_id;
  if (stream_of_marker(markers.size() - 1)->stream_id != handed_id) {
    s.why = "the probe's end marker was recorded on another stream than its start marker";
    return s;
  }
  s.handed_stream_id = handed_id;
  s.handed_orders_blocking_streams = handed.legacy || handed.blocking;
  s.legacy_stream_id = legacy_id;
  s.per_thread_stream_id = per_thread_id;
  // Ordering groups: streams implicitly ordered with each other in enqueue order share a group.
  const bool legacy_joins = handed.legacy || handed.blocking || legacy_id == handed_id;
  const bool per_thread_joins = handed.legacy || legacy_id == handed_id;
  const auto group = [&](std::uint32_t stream) -> std::int64_t {
    if (stream == handed_id || (legacy_joins && stream == legacy_id) || (per_thread_joins && stream == per_thread_id))
      return -1;
    return stream;
  };
  const auto inside = [&](std::uint32_t corr) { return corr > c_start && corr < c_end; };
  // Event records by sync id (the markers' included) and the waits of the window.
  std::unordered_map<std::uint64_t, const EventRecordOp*> record_by_sync;
  for (const EventRecordOp& e : probe.event_records)
    if (e.correlation_id >= c_start && e.correlation_id <= c_end) record_by_sync[e.sync_id] = &e;
  std::vector<Edge> edges;
  for (const RawRecord& r : probe.records) {
    if (r.kind != RawKind::Synchronization || r.sync_type != kStreamWaitEvent || !inside(r.correlation_id)) continue;
    const auto it = record_by_sync.find(r.event_sync_id);
    if (it == record_by_sync.end()) continue;  // waits for an event recorded before the call: already complete
    edges.push_back({group(it->second->stream_id), group(r.stream_id), it->second->correlation_id, r.correlation_id});
  }
  s.cross_stream_waits = static_cast<int>(edges.size());
  const OrderBounds bounds = order_bounds(edges, c_start, c_end);
  std::set<std::uint32_t> streams;
  for (const RawRecord& r : probe.records) {
    if (!inside(r.correlation_id)) continue;
    if (r.kind == RawKind::Runtime &&
        (r.name == "cudaMallocAsync" || r.name == "cudaMallocFromPoolAsync" || r.name == "cudaFreeAsync"))
      ++s.stream_ordered_allocations;
    if (r.kind != RawKind::Kernel && r.kind != RawKind::Memcpy && r.kind != RawKind::Memset) continue;
    WorkItem w;
    w.kind = r.kind;
    w.name = r.kind == RawKind::Kernel   ? r.name
             : r.kind == RawKind::Memcpy ? memcpy_name(r.copy_kind)
                                         : "Memset (Device)";
    w.stream_id = r.stream_id;
    w.correlation_id = r.correlation_id;
    w.role = r.stream_id == handed_id       ? StreamRole::Handed
             : r.stream_id == legacy_id     ? StreamRole::LegacyDefault
             : r.stream_id == per_thread_id ? StreamRole::PerThreadDefault
                                            : StreamRole::Other;
    const std::int64_t g = group(r.stream_id);
    w.after_start = static_cast<std::int64_t>(r.correlation_id) > bounds.from_of(g);
    w.before_end = static_cast<std::int64_t>(r.correlation_id) < bounds.upto_of(g);
    w.bytes = r.bytes;
    w.duration_ns = r.end_ns - r.start_ns;
    streams.insert(r.stream_id);
    s.items.push_back(std::move(w));
  }
  // Enqueue order (correlation id; a graph's nodes share theirs and keep delivery order).
  std::stable_sort(s.items.begin(), s.items.end(),
                   [](const WorkItem& a, const WorkItem& b) { return a.correlation_id < b.correlation_id; });
  s.streams = static_cast<int>(streams.size());
  s.recorded = true;
  return s;
}

std::string work_refusal(const WorkSignature& s) {
  const std::vector<const WorkItem*> out = s.uncovered();
  if (!s.recorded || out.empty()) return "";
  const WorkItem& w = *out.front();
  std::string more;
  if (out.size() > 1) more = fmt::format(" (and {} more not between the events)", plural(out.size() - 1, "item"));
  if (w.role == StreamRole::Other && s.handed_orders_blocking_streams)
    more +=
        "; were that stream a blocking one, the legacy default stream would order it implicitly, but the records "
        "do not say whether it is, so the order cannot be proved";
  return fmt::format(
      "refused: one call enqueues work the cudaEvents on the handed stream cannot see: {} on {} (stream {}) {}{}; "
      "the events time only work ordered between them on the handed stream (stream {}): enqueue it on the stream the "
      "launch is handed, or order it between the events (cudaEventRecord on the handed stream and "
      "cudaStreamWaitEvent on yours before it, cudaEventRecord on yours and cudaStreamWaitEvent on the handed stream "
      "after it)",
      item_text(w),
      w.role == StreamRole::Other ? std::string("another stream") : std::string("the ") + to_string(w.role),
      w.stream_id, relation_text(w), more, s.handed_stream_id);
}

std::string graph_refusal(const WorkSignature& eager, int calls, const WorkSignature& replay) {
  using Key = std::tuple<int, std::string, std::uint64_t>;  // kind, name, bytes
  std::map<Key, long> diff;                                 // replay count - expected count
  for (const WorkItem& w : eager.items) diff[Key{static_cast<int>(w.kind), w.name, w.bytes}] -= calls;
  for (const WorkItem& w : replay.items) diff[Key{static_cast<int>(w.kind), w.name, w.bytes}] += 1;
  std::vector<std::string> lacks, adds;
  const auto text = [](const Key& k, long n) {
    WorkItem w;
    w.kind = static_cast<RawKind>(std::get<0>(k));
    w.name = std::get<1>(k);
    w.bytes = std::get<2>(k);
    return fmt::format("{} x{}", item_text(w), n);
  };
  for (const auto& [k, n] : diff) {
    if (n < 0) lacks.push_back(text(k, -n));
    if (n > 0) adds.push_back(text(k, n));
  }
  if (lacks.empty() && adds.empty()) return "";
  std::string what;
  if (!lacks.empty())
    what += fmt::format("the graph lacks {} (work that ran at capture time or on a stream outside the capture)",
                        fmt::join(lacks, ", "));
  if (!adds.empty()) what += fmt::format("{}the graph adds {}", what.empty() ? "" : "; ", fmt::join(adds, ", "));
  return fmt::format(
      "refused in graph mode: one replay of the captured graph enqueues other device work than the {} eager "
      "{} it holds: {}; a graph-mode time would not be the time of the call: run it without --graph",
      calls, calls == 1 ? "call" : "calls", what);
}

}  // namespace xb
