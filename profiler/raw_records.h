// Raw activity records: a plain C++ mirror of the CUPTI activity records crossbench collects,
// plus the host ranges and cudaEvent timings recorded beside them. No CUDA or CUPTI headers here:
// the CUPTI adapter (profiler/cupti_collector.cpp) fills these, and everything downstream
// (event model, exporters, validator, replay) only sees these types.
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

  // ExternalCorrelation: CUPTI emits one before each API record made while an id is pushed.
  std::uint32_t external_kind = 0;  ///< CUpti_ExternalCorrelationKind value
  std::uint64_t external_id = 0;
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
  std::string fixture;          ///< fixture name, e.g. "matmul/bf16/4096"
  std::int64_t step = 0;        ///< ProfilerStep number
  std::uint64_t range_id = 0;   ///< id of the "ProfilerStep#N" HostRange
  std::int64_t event_ns = 0;    ///< cudaEventElapsedTime, converted to ns (0.5 us resolution)
  int launches = 1;             ///< workload calls between the two events (hot mode: the batch)
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

/// GPU state read through NVML at one moment (bench/core/fixtures.cpp fills it; kernels/nvml_probe.h).
struct GpuClockSample {
  bool valid = false;             ///< false: NVML unavailable or a read failed (see error)
  std::string error;
  int sm_clock_mhz = 0;
  int mem_clock_mhz = 0;
  int temperature_c = 0;
  double power_w = 0;
  std::uint64_t throttle_reasons = 0;  ///< nvmlClocksEventReasons bit mask
  bool throttled = false;              ///< a power, thermal or hardware slowdown reason was set
};

/// NVML facts about the session's GPU (bench fills them from kernels/nvml_probe.h; the profiler
/// itself never calls NVML). A value that could not be read is "" or -1 (in a sample: -1 with
/// valid = false). A session recorded before these fields existed reads back with source
/// "not recorded", "" and -1, and samples left at their defaults (valid = false).
struct GpuMeta {
  std::string source = "not recorded";  ///< "nvml", "unavailable: <why>" or "not recorded"
  std::string error;                    ///< static reads that failed; "" when all succeeded
  std::string uuid;                     ///< "GPU-xxxxxxxx-xxxx-..." (nvmlDeviceGetUUID)
  std::string pci_bus_id;               ///< as cudaDeviceGetPCIBusId gives it, e.g. "0000:19:00.0"
  std::string driver_version;           ///< display driver, e.g. "580.159.04"
  double power_limit_w = -1;            ///< enforced power limit, W
  int sm_clock_max_mhz = -1;            ///< maximum (boost) SM clock, MHz
  int mem_clock_max_mhz = -1;           ///< maximum memory clock, MHz
  GpuClockSample at_start;              ///< read just before recording started (valid = false if not)
  GpuClockSample at_end;                ///< read just after recording stopped
};

/// Session-level facts written into every output's metadata.
struct SessionMeta {
  std::string tool = "crossbench";
  /// Where device records came from: "cupti", or "none" in event-only mode (bench --no-cupti),
  /// where the session has host ranges and cudaEvent times but no activity records.
  std::string activity_source = "cupti";
  std::string created_utc;               ///< ISO 8601
  std::int64_t window_start_ns = 0;      ///< recording window on the CUPTI clock, ns
  std::int64_t window_end_ns = 0;
  std::uint64_t dropped_records = 0;     ///< sum of cuptiActivityGetNumDroppedRecords
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
  GpuMeta gpu;                           ///< NVML facts, clocks at start and end
};

/// How one fixture was sampled (bench/core/fixtures.cpp; docs/metrics.md defines each field).
struct FixtureTiming {
  std::string mode;              ///< "hot" or "cold"; empty in sessions recorded before timing modes
  bool blocking = true;          ///< samples were queued behind the blocking kernel
  bool graph = false;            ///< each sample replayed a CUDA graph of its calls (bench --graph)
  int launches_per_sample = 1;   ///< hot mode: calls between the events; cold mode: 1
  int rotation = 1;              ///< cold mode: input copies used in turn (1 = no rotation)
  double max_noise = 0;          ///< stopping rule's target relative standard deviation, fraction
  int min_samples = 0;
  double min_time_s = 0, max_time_s = 0;
  std::string stop;              ///< "converged" or "timed out" (noise target not met)
  double sampling_s = 0;         ///< wall time spent sampling
  std::vector<double> samples_ns;  ///< every sample, per call (event interval / launches), in order
  bool warmed_up = false;        ///< --warmup ran and reached a steady state
  bool cold_start = false;       ///< flagged: not warmed up and the first samples were slower
  double early_slowdown = 0;     ///< median of the first tenth of samples / median of all - 1
  GpuClockSample gpu_before, gpu_after;  ///< NVML before and after sampling
};

/// One benchmark fixture (op x dtype x size) and its verified result.
struct FixtureInfo {
  std::string name;    ///< "<op>/<dtype>/<size>", e.g. "addmm_bias1d/bf16/4096"
  std::string op;      ///< matmul, add, addmm, addmm_bias1d
  std::string dtype;   ///< bf16, fp16, fp32
  std::int64_t size = 0;      ///< square problem size n (n x n tensors; GEMMs are n x n x n)
  double flops = 0;           ///< floating-point operations per call (docs/metrics.md)
  double bytes = 0;           ///< minimum bytes moved per call (docs/metrics.md)
  bool verified = false;      ///< result matched the host reference
  double max_rel_error = 0;   ///< ||out - ref|| / ||ref|| over the checked elements
  FixtureTiming timing;       ///< empty (mode "") when the fixture failed before sampling
  std::string error;          ///< why the fixture failed; empty when it ran
  /// false: the benchmark gave no reference check (bench/core/api.h Instance::verify), so
  /// `verified` is false without a failure; files say "reference": false, the validator "not run".
  bool has_reference = true;
};

/// Everything one recording produced, in delivery order. This is what `raw_session.json` holds
/// and what `bench --replay` reads back.
struct RawSession {
  SessionMeta meta;
  std::vector<RawRecord> records;
  std::vector<HostRange> ranges;
  std::vector<StepTiming> event_timings;
  std::vector<FixtureInfo> fixtures;
};

}  // namespace xb
