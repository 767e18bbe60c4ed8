// Raw activity records: a plain C++ mirror of the CUPTI activity records crossbench collects,
// plus the host ranges and cudaEvent timings recorded beside them, and what a client (crossbench's
// harness, a user's program) attaches as already-serialized JSON: metadata blocks and fixtures.
// No CUDA or CUPTI headers here: the CUPTI adapter (profiler/adapters/cupti_collector.cpp) fills these,
// and everything downstream (event model, exporters, validator, replay) only sees these types.
//
// Units: every timestamp and duration is in nanoseconds on the CUPTI clock (cuptiGetTimestamp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace xb {

/// Kind of a raw activity record; each names the CUPTI_ACTIVITY_KIND_* it mirrors.
enum class RawKind {
  Kernel,               ///< CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL (CUpti_ActivityKernel10)
  Memcpy,               ///< CUPTI_ACTIVITY_KIND_MEMCPY (CUpti_ActivityMemcpy6)
  Memset,               ///< CUPTI_ACTIVITY_KIND_MEMSET (CUpti_ActivityMemset4)
  Runtime,              ///< CUPTI_ACTIVITY_KIND_RUNTIME (CUpti_ActivityAPI)
  Driver,               ///< CUPTI_ACTIVITY_KIND_DRIVER (CUpti_ActivityAPI)
  Synchronization,      ///< CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (CUpti_ActivitySynchronization2)
  ExternalCorrelation,  ///< CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION
};

/// Stable lower-case name of a RawKind ("kernel", "memcpy", ...), used in the session JSON.
const char* to_string(RawKind kind);
/// Inverse of to_string(RawKind). Throws std::invalid_argument for an unknown name.
RawKind raw_kind_from_string(const std::string& name);

/// One CUPTI activity record. Fields that a kind does not carry stay at their defaults.
struct RawRecord {
  RawKind kind = RawKind::Kernel;
  std::int64_t start_ns = 0;  ///< CUPTI start timestamp, ns (0 for ExternalCorrelation)
  std::int64_t end_ns = 0;    ///< CUPTI end timestamp, ns (0 for ExternalCorrelation)
  std::uint32_t correlation_id = 0;

  // Device activities (Kernel, Memcpy, Memset) and Synchronization.
  std::uint32_t device_id = 0;
  std::uint32_t context_id = 0;
  std::uint32_t stream_id = 0;
  /// Device activities launched through a CUDA graph (cudaGraphLaunch): CUPTI's graphNodeId and
  /// graphId (CUpti_ActivityKernel10, Memcpy6, Memset4); 0 for work not launched by a graph.
  std::uint64_t graph_node_id = 0;
  std::uint32_t graph_id = 0;

  /// Kernel: the name CUPTI reports (mangled for C++ kernels). Runtime/Driver: the API function
  /// name (e.g. "cudaLaunchKernel", "cuLaunchKernelEx"), resolved through cuptiGetCallbackName.
  std::string name;

  // Kernel only.
  std::int32_t grid[3] = {0, 0, 0};
  std::int32_t block[3] = {0, 0, 0};
  std::int32_t registers_per_thread = 0;
  std::int32_t static_shared_bytes = 0;
  std::int32_t dynamic_shared_bytes = 0;

  // Memcpy / Memset.
  std::uint64_t bytes = 0;
  std::uint32_t copy_kind = 0;  ///< CUpti_ActivityMemcpyKind value (8 = DTOD, 1 = HTOD, 2 = DTOH)
  std::uint32_t memset_value = 0;

  // Runtime / Driver API calls.
  std::uint32_t cbid = 0;  ///< CUPTI callback id of the API function
  std::uint32_t process_id = 0;
  std::uint32_t thread_id = 0;  ///< OS thread id as CUPTI reports it (truncated to 32 bits)
  std::int32_t return_value = 0;

  // Synchronization.
  std::uint32_t sync_type = 0;  ///< CUpti_ActivitySynchronizationType value
  /// cudaEventSyncId of a wait (cudaStreamWaitEvent) or event synchronization: pairs it with the
  /// event record it waits for (profiler/model/work_signature.h). Used by the work-signature probe only;
  /// not written to raw_session.json.
  std::uint64_t event_sync_id = 0;

  // ExternalCorrelation: CUPTI emits one before each API record made while an id is pushed.
  std::uint32_t external_kind = 0;  ///< CUpti_ExternalCorrelationKind value
  std::uint64_t external_id = 0;
};

/// One cudaEventRecord as CUPTI saw it (CUPTI_ACTIVITY_KIND_CUDA_EVENT, CUpti_ActivityCudaEvent2).
struct EventRecordOp {
  std::uint32_t correlation_id = 0;  ///< of the cudaEventRecord call
  std::uint32_t stream_id = 0;       ///< CUPTI stream id of the stream the event was recorded on
  std::uint64_t sync_id = 0;         ///< cudaEventSyncId: pairs it with the waits on this record
};

/// Everything an activity source recorded while one call was probed (the work signature,
/// profiler/model/work_signature.h): the activity records delivered since the probe began (RawRecord,
/// with Synchronization::event_sync_id set) and the event records; the profiler adds the window
/// and the probing thread. `available` false: the source cannot probe (event-only mode, a CUPTI
/// without CUDA_EVENT records), `why` says so.
struct ProbeRecords {
  bool available = false;
  std::string why;
  std::vector<RawRecord> records;
  std::vector<EventRecordOp> event_records;
  std::int64_t window_start_ns = 0, window_end_ns = 0;  ///< the probe window, on the records' clock
  std::uint32_t thread_id = 0;                          ///< the thread that probed (OS thread id)
};

/// Category of a host range, named as in PyTorch's trace ("user_annotation", "cpu_op").
enum class RangeCategory { UserAnnotation, CpuOp };
/// "user_annotation" or "cpu_op", as in PyTorch traces and raw_session.json.
const char* to_string(RangeCategory category);
/// Throws std::invalid_argument for an unknown name.
RangeCategory range_category_from_string(const std::string& name);

/// A host-side scoped range (record_function-like annotation or a CPU op), recorded by the
/// profiler itself. `id` is also the external id pushed to CUPTI while the range is open, so
/// API records made inside it carry it through ExternalCorrelation records.
struct HostRange {
  std::uint64_t id = 0;         ///< external id, unique in a session, > 0
  std::uint64_t parent_id = 0;  ///< enclosing range's id on the same thread, 0 for none
  std::string name;
  RangeCategory category = RangeCategory::UserAnnotation;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::uint32_t process_id = 0;
  std::uint32_t thread_id = 0;
};

/// cudaEvent timing of one active profiler step: the interval between the start and stop events
/// recorded around the step's workload.
struct StepTiming {
  std::string fixture;         ///< fixture name, e.g. "matmul/bf16/4096"
  std::int64_t step = 0;       ///< ProfilerStep number
  std::uint64_t range_id = 0;  ///< id of the "ProfilerStep#N" HostRange
  std::int64_t event_ns = 0;   ///< cudaEventElapsedTime, converted to ns (0.5 us resolution)
  int launches = 1;            ///< workload calls between the two events (hot mode: the batch)
};

/// Static properties of the device, as PyTorch writes them in "deviceProperties".
struct DeviceInfo {
  std::uint32_t id = 0;
  std::string name;
  std::uint64_t total_global_mem = 0;
  int compute_major = 0;
  int compute_minor = 0;
  int num_sms = 0;
  int max_threads_per_block = 0;
  int max_threads_per_multiprocessor = 0;
  int regs_per_block = 0;
  int regs_per_multiprocessor = 0;
  int warp_size = 0;
  std::uint64_t shared_mem_per_block = 0;
  std::uint64_t shared_mem_per_block_optin = 0;
  std::uint64_t shared_mem_per_multiprocessor = 0;
  std::uint64_t l2_cache_bytes = 0;
};

/// Client metadata (Kineto's `addMetadata(key, value)`, PyTorch's `prof._add_metadata_json(key,
/// value)`): one JSON value, already serialized, under a key of its own. The profiler never reads
/// it: raw_session.json writes it inside "meta" beside the profiler's own keys, the traces at their
/// top level after "cupti_version", each as the text given (docs/formats.md). crossbench's harness
/// attaches the GPU's NVML facts this way (key "gpu", bench/core/fixture_records.h).
struct MetadataBlock {
  std::string key;   ///< not one of the profiler's own keys (metadata_key_error)
  std::string json;  ///< one JSON value as text, e.g. {"uuid":"GPU-..."}
};

/// What the client recorded about one fixture, the group of steps Profiler::begin_fixture starts:
/// its name (StepTiming::fixture refers to it) and one JSON object the profiler exports verbatim
/// as an element of raw_session.json's "fixtures" and never reads. crossbench's harness writes its
/// fixtures this way (bench/core/fixture_records.h).
struct FixtureBlock {
  std::string name;  ///< unique in a session, e.g. "matmul/bf16/4096"
  std::string json;  ///< one JSON object as text; its "name" is `name`
};

/// Session-level facts written into every output's metadata.
struct SessionMeta {
  std::string tool = "crossbench";
  /// Where device records came from: "cupti", or "none" in event-only mode (bench --no-cupti),
  /// where the session has host ranges and cudaEvent times but no activity records.
  std::string activity_source = "cupti";
  std::string created_utc;           ///< ISO 8601
  std::int64_t window_start_ns = 0;  ///< recording window on the CUPTI clock, ns
  std::int64_t window_end_ns = 0;
  std::uint64_t dropped_records = 0;        ///< sum of cuptiActivityGetNumDroppedRecords
  std::uint64_t discarded_by_schedule = 0;  ///< records outside active steps (wait/warmup)
  int cuda_driver_version = 0;
  int cuda_runtime_version = 0;
  std::uint32_t cupti_version = 0;
  int cublas_version = 0;
  std::uint32_t process_id = 0;
  int schedule_wait = 0;
  int schedule_warmup = 0;
  int schedule_active = 0;
  std::vector<DeviceInfo> devices;
  /// The client's metadata, in key order, keys unique (set_metadata keeps it so).
  std::vector<MetadataBlock> metadata;
};

/// Why `key` cannot name client metadata ("" when it can): empty, or one of the keys the profiler
/// writes itself into raw_session.json's "meta" or at a trace's top level.
std::string metadata_key_error(const std::string& key);

/// Adds metadata block `key` -> `json` to `meta`, replacing one of the same key, keeping key
/// order. Throws std::invalid_argument when metadata_key_error(key) is not empty or `json` is not
/// one JSON value.
void set_metadata(SessionMeta& meta, const std::string& key, std::string json);

/// The block named `key`, or nullptr.
const MetadataBlock* find_metadata(const SessionMeta& meta, const std::string& key);

/// Everything one recording produced, in delivery order. This is what `raw_session.json` holds
/// and what `bench --replay` reads back.
struct RawSession {
  SessionMeta meta;
  std::vector<RawRecord> records;
  std::vector<HostRange> ranges;
  std::vector<StepTiming> event_timings;
  std::vector<FixtureBlock> fixtures;  ///< the client's, in the order added
};

}  // namespace xb
