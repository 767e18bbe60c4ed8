// The work signature of one call: what a launch enqueues (kernels, memcpys, memsets), on which
// stream each ran, and whether each is ordered between the start and the end event on the stream
// the launch was handed, derived from the CUPTI activity records of one probed call. A cudaEvent
// pair on the handed stream times exactly the work ordered between its two events; work outside
// them (a kernel on the legacy default stream, a side stream never joined back) is invisible to it.
//
// Ordering model (CUDA Programming Guide, "Streams", "Events", "Default stream"): work on one
// stream runs in enqueue order (CUPTI correlation ids increase with enqueue order);
// cudaEventRecord(e, X) followed by cudaStreamWaitEvent(Y, e) orders everything enqueued on X
// before the record ahead of everything enqueued on Y after the wait (CUPTI's cudaEventSyncId
// pairs the CUDA_EVENT record with the SYNCHRONIZATION record of the wait); the legacy default
// stream is implicitly ordered with every blocking stream, and the per-thread default stream with
// the legacy one. Streams whose flags are unknown are taken to be non-blocking: an ordering this
// model cannot prove is reported, never assumed.
//
// Plain C++ (the event-model layer): the CUPTI adapter collects the records (ActivitySource::
// begin_probe/end_probe, Profiler::end_probe), the harness derives and keeps the signature
// (events.json fixtures[].work). Units: ns.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "profiler/model/raw_records.h"

namespace xb {

/// What is known of the handed stream besides the records.
struct HandedStream {
  bool legacy = false;    ///< the handed stream is the legacy default stream (stream 0, cudaStreamLegacy)
  bool blocking = false;  ///< created without cudaStreamNonBlocking (implicitly ordered with the legacy stream)
};

/// Where a piece of work ran, relative to the handed stream.
enum class StreamRole { Handed, LegacyDefault, PerThreadDefault, Other };
/// "handed stream", "legacy default stream", "per-thread default stream", "another stream".
const char* to_string(StreamRole role);
/// Inverse of to_string(StreamRole). Throws std::invalid_argument for an unknown name.
StreamRole stream_role_from_string(const std::string& name);

/// One device activity of the probed call.
struct WorkItem {
  RawKind kind = RawKind::Kernel;  ///< Kernel, Memcpy or Memset
  std::string
      name;  ///< kernel name (as CUPTI reports it); "Memcpy DtoH (Device -> Host)" / "Memset (Device)" (event_model.h)
  std::uint32_t stream_id = 0;       ///< CUPTI stream id
  std::uint32_t correlation_id = 0;  ///< of the API call that enqueued it (enqueue order)
  StreamRole role = StreamRole::Other;
  bool after_start = false;  ///< ordered after the start event on the handed stream
  bool before_end = false;   ///< ordered before the end event on the handed stream
  std::uint64_t bytes = 0;   ///< memcpy / memset bytes
  std::int64_t duration_ns = 0;
  bool covered() const { return after_start && before_end; }
};

/// The work signature of one call (see the file comment).
struct WorkSignature {
  /// The signature could be derived; else `why` says what was missing (not judged).
  bool recorded = false;
  std::string why;
  std::uint32_t handed_stream_id = 0;
  /// CUPTI ids of the legacy and the per-thread default stream (of the probing thread), from the
  /// probe's markers: the validator looks for work on them in every recorded step.
  std::uint32_t legacy_stream_id = 0, per_thread_stream_id = 0;
  /// The handed stream is the legacy default stream or a blocking one: another stream's work may
  /// be ordered with it implicitly (when that stream is blocking), which the records cannot show.
  bool handed_orders_blocking_streams = false;
  std::vector<WorkItem> items;  ///< in enqueue order
  int streams = 0;              ///< distinct streams the call's work ran on
  int cross_stream_waits = 0;   ///< cudaStreamWaitEvent calls the call made that order its work
  /// Stream-ordered allocations and frees the call made on the probing thread (cudaMallocAsync,
  /// cudaMallocFromPoolAsync, cudaFreeAsync): captured into a graph they become memory nodes, whose
  /// device time no activity record shows.
  int stream_ordered_allocations = 0;
  /// Host wall time the probe took, s (the call, the device wait, CUPTI's flush and this
  /// derivation): its cost to a run. Set by the harness (bench/core/measure.h probe_work).
  double probe_s = 0;
  /// Every item is ordered between the two events (true when recorded and nothing is outside).
  bool covered() const;
  /// The items not covered, in order.
  std::vector<const WorkItem*> uncovered() const;
  /// One line: "2 kernels, 1 memcpy on 2 streams, 2 cross-stream waits; all of it between the events".
  std::string summary() const;
};

/// Derives the signature of the call probed between the harness's markers. `probe.records` must
/// hold the runtime API records of the probe window; the markers are cudaEventRecord calls made
/// by `probe.thread_id` in the window: the first three on the handed stream, the legacy default
/// stream and the per-thread default stream (their CUDA_EVENT records name those streams' CUPTI
/// ids), the last one the end event on the handed stream. API records outside [window_start_ns,
/// window_end_ns] and device records of other correlation ids are ignored. Never throws: a probe
/// without its markers gives recorded = false and the reason.
WorkSignature derive_work_signature(const ProbeRecords& probe, const HandedStream& handed);

/// The one-line refusal of a signature that is not covered ("" when covered or not recorded):
/// what ran where and why the events cannot see it, and the fix.
std::string work_refusal(const WorkSignature& s);

/// Graph mode: "" when one replay of the captured graph enqueues the same device work as `calls`
/// eager calls (the multiset of kind and name, memcpy/memset bytes included), else a one-line
/// refusal saying what the graph lacks or adds.
std::string graph_refusal(const WorkSignature& eager, int calls, const WorkSignature& replay);

}  // namespace xb
