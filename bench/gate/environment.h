// What a timing depends on besides the code (the GPU, its driver and libraries, power limit and
// clocks), read from a recorded session and compared between two runs: shared by `bench qualify`
// (a run against its baseline) and `bench compare` (run B against run A).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/core/fixture_records.h"
#include "profiler/model/session_io.h"

namespace xb {

/// What a timing depends on besides the code: the GPU and the software under it.
struct RunEnvironment {
  std::string gpu_name;  ///< devices[0].name, e.g. "NVIDIA H200"
  std::string gpu_uuid;  ///< NVML; "" when unavailable
  /// cudaDeviceGetPCIBusId, e.g. "00000000:19:00.0": which board of a node; "" when unknown (files
  /// written before it was recorded)
  std::string gpu_pci_bus_id;
  std::string driver_version;  ///< NVML display driver, e.g. "580.159.04"; "" when unavailable
  int cuda_driver_version = 0;
  int cuda_runtime_version = 0;
  int cublas_version = 0;
  std::uint32_t cupti_version = 0;
  double power_limit_w = -1;
  int sm_clock_max_mhz = -1;
  int mem_clock_max_mhz = -1;
  GpuClockSample clocks_at_start, clocks_at_end;  ///< NVML at the start and end of the recording
};

/// The environment recorded in a session's meta.
RunEnvironment environment_of(const SessionMeta& meta);

/// One difference between a baseline's environment and a run's.
struct EnvironmentDifference {
  std::string what;      ///< "GPU name", "driver", "CUDA driver", "CUDA runtime", "cuBLAS", ...
  std::string baseline;  ///< the baseline's value, as text
  std::string now;       ///< the run's value
  bool refuses = false;  ///< a difference that makes the comparison meaningless (see compare_environments)
};

/// Differences, refusing first: GPU name, display driver, CUDA driver, CUDA runtime and cuBLAS
/// versions refuse (another GPU, or other libraries under the same code); GPU UUID and PCI bus id
/// (another board of the same model: a baseline matches by model), CUPTI version, power limit and
/// maximum clocks are reported only. An empty or
/// unknown (0, -1) value on either side is not compared.
std::vector<EnvironmentDifference> compare_environments(const RunEnvironment& baseline, const RunEnvironment& now);

/// One line naming every refusing difference: "baseline FILE was recorded on another GPU or
/// software: GPU name 'A' (baseline) vs 'B' (this run); ...". "" when none refuses.
std::string mismatch_line(const std::vector<EnvironmentDifference>& differences, const std::string& baseline_file);

/// The environment block of a baseline (full_clocks: every NVML field of the clock samples) and of
/// the qualify.json report (valid, SM clock and throttle reasons only).
nlohmann::json environment_json(const RunEnvironment& e, bool full_clocks);

}  // namespace xb
