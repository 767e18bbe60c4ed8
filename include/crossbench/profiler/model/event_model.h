// The event model: one plain C++ view of a recorded session, built once from the raw activity
// records (build_session). The table and the full export read only this; the trace-only export
// reads the raw records directly.
//
// Units: nanoseconds on the CUPTI clock everywhere; exporters convert to microseconds once
// (format_us in common/units.h).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "profiler/model/raw_records.h"

namespace xb {

/// Work that ran on the device.
enum class DeviceActivityKind { Kernel, Memcpy, Memset };
/// "kernel", "gpu_memcpy", "gpu_memset": the trace category PyTorch uses for each kind.
const char* trace_category(DeviceActivityKind kind);

/// A kernel, memcpy or memset, with its launch resolved.
struct DeviceActivity {
  DeviceActivityKind kind = DeviceActivityKind::Kernel;
  std::string name;  ///< demangled kernel name, or "Memcpy DtoD (Device -> Device)", "Memset (Device)"
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::uint32_t device_id = 0;
  std::uint32_t context_id = 0;
  std::uint32_t stream_id = 0;
  std::uint32_t correlation_id = 0;
  std::uint64_t external_id = 0;   ///< innermost host range open at launch; 0 = none
  std::int64_t launch = -1;        ///< index into Session::api of the launching call; -1 = none
  const RawRecord* raw = nullptr;  ///< the record it came from (grid, block, bytes, ...)
  std::int64_t duration_ns() const { return end_ns - start_ns; }
};

/// A CUDA runtime or driver API call on a host thread.
struct ApiCall {
  bool driver = false;  ///< true: driver API (cuLaunchKernelEx, ...); false: runtime API
  std::string name;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::uint32_t process_id = 0;
  std::uint32_t thread_id = 0;
  std::uint32_t correlation_id = 0;
  std::uint32_t cbid = 0;
  std::uint64_t external_id = 0;  ///< innermost host range open during the call; 0 = none
  int device_work = 0;            ///< number of device activities this call launched
  std::int64_t duration_ns() const { return end_ns - start_ns; }
};

/// A synchronization wait (CUPTI_ACTIVITY_KIND_SYNCHRONIZATION), host side.
struct SyncEvent {
  std::string name;  ///< "Event Synchronize", "Stream Synchronize", "Context Synchronize", ...
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::uint32_t device_id = 0;
  std::uint32_t stream_id = 0;
  std::uint32_t correlation_id = 0;
  std::uint64_t external_id = 0;
};

/// The converted session. Vectors are sorted by start time (ties: by id / correlation id), so
/// every consumer sees one order.
struct Session {
  SessionMeta meta;
  std::vector<HostRange> ranges;
  std::vector<ApiCall> api;
  std::vector<DeviceActivity> device;
  std::vector<SyncEvent> syncs;
  std::vector<StepTiming> event_timings;
  /// Correlation ids that had more than one device record or an API record with the same id
  /// twice; kept so the validator can report duplicates rather than hide them.
  std::vector<std::uint32_t> duplicate_correlations;
};

/// Converts raw records into the event model: demangles kernel names, names memcpy/memset,
/// joins ExternalCorrelation records to API calls (correlation id -> external id) and device
/// activities to their launch (correlation id). Keeps a pointer into `raw.records`, so `raw` must
/// outlive the result. Throws std::invalid_argument on records that cannot be converted
/// (end before start on a record with timestamps, or on a range).
///
/// Join rules:
/// - external id of a correlation id: the ExternalCorrelation record of kind CUSTOM0 (value 3,
///   what the collector pushes); without one, the first record of any other kind.
/// - API calls, device activities and sync events take the external id of their correlation id.
/// - launch of a device activity: the API call with its correlation id; when several share it, a
///   runtime call wins over a driver call, then the earliest. Every device activity of that id
///   counts in the launch's device_work.
/// - duplicate_correlations (sorted, unique): ids carried by more than one API record (runtime
///   and driver together included) or by more than one device record.
/// - order: ranges by (start, id); API calls by (start, correlation id, runtime first, thread,
///   end); device activities by (start, correlation id, device, stream, end); syncs by (start,
///   correlation id, device, stream); full ties keep delivery order.
Session build_session(const RawSession& raw);

/// Demangles a CUPTI kernel name (Itanium ABI, names starting with "_Z"); returns it unchanged
/// when it is not mangled or does not demangle.
std::string demangle(const std::string& name);

/// Demangled kernel names, computed once per distinct mangled name (build_session and the
/// trace-only exporter share it). A small direct-mapped memo in front of the map (a session has a
/// handful of distinct kernels) avoids hashing whole names; a hit is confirmed by comparing the
/// text. Not thread-safe.
class DemangleCache {
 public:
  /// demangle(mangled), cached; the reference stays valid for the cache's lifetime.
  const std::string& get(const std::string& mangled);

 private:
  struct Memo {
    std::uint64_t key = 0;
    const std::pair<const std::string, std::string>* entry = nullptr;
  };
  Memo memo_[64];
  std::unordered_map<std::string, std::string> names_;
};

/// PyTorch's memcpy name for a CUpti_ActivityMemcpyKind: "Memcpy DtoD (Device -> Device)"
/// (8), "Memcpy HtoD (Host -> Device)" (1), "Memcpy DtoH (Device -> Host)" (2), ... through
/// "Memcpy PtoP (Device -> Device)" (10); "Memcpy Unknown" for anything else.
std::string memcpy_name(std::uint32_t copy_kind);

/// Name of a CUpti_ActivitySynchronizationType: "Event Synchronize" (1), "Stream Wait Event" (2),
/// "Stream Synchronize" (3), "Context Synchronize" (4), "Unknown Synchronize" otherwise.
std::string sync_name(std::uint32_t sync_type);

}  // namespace xb
