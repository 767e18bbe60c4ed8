// NVML facts in crossbench's records: GpuSnapshot/GpuStaticInfo (kernels/nvml_probe.h) converted
// to the harness's plain GpuClockSample/GpuMeta (bench/core/fixture_records.h), their JSON, and the
// recorder `bench` uses to put the GPU's facts and its clocks at the start and end of a recording
// into the session's meta (docs/formats.md, "meta.gpu").
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "bench/core/fixture_records.h"
#include "kernels/nvml_probe.h"

namespace xb {

/// The snapshot as the event model stores it (host_time_ns is not kept; throttled =
/// is_throttled(throttle_reasons)). Unread values stay -1.
GpuClockSample to_clock_sample(const GpuSnapshot& snapshot);

/// meta.gpu from the static facts and the two snapshots (GpuStaticInfo's name and
/// cuda_driver_version are not copied: meta.devices[].name and meta.cuda_driver_version hold them).
GpuMeta to_gpu_meta(const GpuStaticInfo& info, const GpuSnapshot& at_start, const GpuSnapshot& at_end);

/// {"valid", "error" (only when not valid), "sm_clock_mhz", "mem_clock_mhz", "temperature_c",
/// "power_w", "throttle_reasons" (the mask), "throttle_reason_names" (throttle_reason_names()),
/// "throttled", "host_time_ns"}: the keys of a GpuClockSample in raw_session.json plus the names
/// and the time. Unread values are -1, never NaN.
nlohmann::json to_json(const GpuSnapshot& snapshot);

/// {"name", "uuid", "driver_version", "pci_bus_id", "cuda_driver_version", "power_limit_w",
/// "sm_clock_max_mhz", "mem_clock_max_mhz", "source", "error"}.
nlohmann::json to_json(const GpuStaticInfo& info);

/// Opens NVML for a GPU and reads it at once (the start snapshot); fill() reads it again (the end
/// snapshot) and attaches both with the static facts to a session as meta.gpu. Never throws for
/// NVML: without it meta.gpu.source says why.
///
///   GpuMetaRecorder gpu_meta;             // before profiler.start()
///   RawSession raw = profiler.stop();
///   gpu_meta.fill(raw.meta);
class GpuMetaRecorder {
 public:
  /// The calling thread's current CUDA device (cudaGetDevice, cudaDeviceGetPCIBusId).
  GpuMetaRecorder();
  explicit GpuMetaRecorder(const std::string& pci_bus_id);

  /// Reads the end snapshot now and attaches meta.gpu (attach_gpu_meta).
  void fill(SessionMeta& meta) const;
  /// The open NVML adapter, e.g. for per-fixture snapshots.
  const Nvml& nvml() const { return nvml_; }
  const GpuSnapshot& at_start() const { return at_start_; }

 private:
  Nvml nvml_;
  GpuSnapshot at_start_;
};

}  // namespace xb
