// The run environment (environment.h): read from a session, compared, written as JSON.
#include "bench/gate/environment.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "bench/core/fixture_json.h"
#include "common/strict_json.h"

namespace xb {

using nlohmann::json;

RunEnvironment environment_of(const SessionMeta& meta) {
  RunEnvironment e;
  const GpuMeta gpu = read_gpu_meta(meta);
  e.gpu_name = meta.devices.empty() ? std::string() : meta.devices.front().name;
  e.gpu_uuid = gpu.uuid;
  e.gpu_pci_bus_id = gpu.pci_bus_id;
  e.driver_version = gpu.driver_version;
  e.cuda_driver_version = meta.cuda_driver_version;
  e.cuda_runtime_version = meta.cuda_runtime_version;
  e.cublas_version = meta.cublas_version;
  e.cupti_version = meta.cupti_version;
  e.power_limit_w = gpu.power_limit_w;
  e.sm_clock_max_mhz = gpu.sm_clock_max_mhz;
  e.mem_clock_max_mhz = gpu.mem_clock_max_mhz;
  e.clocks_at_start = gpu.at_start;
  e.clocks_at_end = gpu.at_end;
  return e;
}

std::vector<EnvironmentDifference> compare_environments(const RunEnvironment& b, const RunEnvironment& n) {
  std::vector<EnvironmentDifference> out;
  auto text = [&](const char* what, const std::string& bv, const std::string& nv, bool refuses) {
    if (!bv.empty() && !nv.empty() && bv != nv) out.push_back({what, bv, nv, refuses});
  };
  auto number = [&](const char* what, long long bv, long long nv, bool refuses) {
    if (bv > 0 && nv > 0 && bv != nv) out.push_back({what, std::to_string(bv), std::to_string(nv), refuses});
  };
  text("GPU name", b.gpu_name, n.gpu_name, true);
  text("driver", b.driver_version, n.driver_version, true);
  number("CUDA driver version", b.cuda_driver_version, n.cuda_driver_version, true);
  number("CUDA runtime version", b.cuda_runtime_version, n.cuda_runtime_version, true);
  number("cuBLAS version", b.cublas_version, n.cublas_version, true);
  text("GPU UUID", b.gpu_uuid, n.gpu_uuid, false);
  text("GPU PCI bus id", b.gpu_pci_bus_id, n.gpu_pci_bus_id, false);
  number("CUPTI version", b.cupti_version, n.cupti_version, false);
  if (b.power_limit_w > 0 && n.power_limit_w > 0 && std::fabs(b.power_limit_w - n.power_limit_w) > 0.5) {
    out.push_back(
        {"power limit", fmt::format("{:.0f} W", b.power_limit_w), fmt::format("{:.0f} W", n.power_limit_w), false});
  }
  number("max SM clock (MHz)", b.sm_clock_max_mhz, n.sm_clock_max_mhz, false);
  number("max memory clock (MHz)", b.mem_clock_max_mhz, n.mem_clock_max_mhz, false);
  std::stable_partition(out.begin(), out.end(), [](const EnvironmentDifference& d) { return d.refuses; });
  return out;
}

std::string mismatch_line(const std::vector<EnvironmentDifference>& differences, const std::string& baseline_file) {
  std::string parts;
  for (const EnvironmentDifference& d : differences) {
    if (!d.refuses) continue;
    parts +=
        fmt::format("{}{} '{}' (baseline) vs '{}' (this run)", parts.empty() ? "" : "; ", d.what, d.baseline, d.now);
  }
  if (parts.empty()) return "";
  return strict_json::one_line(
      fmt::format("baseline {} was recorded on another GPU or software: {}", baseline_file, parts));
}

json environment_json(const RunEnvironment& e, bool full_clocks) {
  const auto clocks = [&](const GpuClockSample& s) {
    return full_clocks
               ? gpu_sample_json(s)
               : json{{"valid", s.valid}, {"sm_clock_mhz", s.sm_clock_mhz}, {"throttle_reasons", s.throttle_reasons}};
  };
  return json{{"gpu_name", e.gpu_name},
              {"gpu_uuid", e.gpu_uuid},
              {"gpu_pci_bus_id", e.gpu_pci_bus_id},
              {"driver_version", e.driver_version},
              {"cuda_driver_version", e.cuda_driver_version},
              {"cuda_runtime_version", e.cuda_runtime_version},
              {"cublas_version", e.cublas_version},
              {"cupti_version", e.cupti_version},
              {"power_limit_w", std::isfinite(e.power_limit_w) ? e.power_limit_w : -1.0},
              {"sm_clock_max_mhz", e.sm_clock_max_mhz},
              {"mem_clock_max_mhz", e.mem_clock_max_mhz},
              {"clocks_at_start", clocks(e.clocks_at_start)},
              {"clocks_at_end", clocks(e.clocks_at_end)}};
}

}  // namespace xb
