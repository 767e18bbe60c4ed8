// NVML facts in crossbench's records (bench/core/gpu_meta.h).
#include "bench/core/gpu_meta.h"

namespace xb {

GpuClockSample to_clock_sample(const GpuSnapshot& s) {
  GpuClockSample c;
  c.valid = s.valid;
  c.error = s.error;
  c.sm_clock_mhz = s.sm_clock_mhz;
  c.mem_clock_mhz = s.mem_clock_mhz;
  c.temperature_c = s.temperature_c;
  c.power_w = s.power_w;
  c.throttle_reasons = s.throttle_reasons;
  c.throttled = is_throttled(s.throttle_reasons);
  return c;
}

GpuMeta to_gpu_meta(const GpuStaticInfo& info, const GpuSnapshot& at_start, const GpuSnapshot& at_end) {
  GpuMeta g;
  g.source = info.source;
  g.error = info.error;
  g.uuid = info.uuid;
  g.pci_bus_id = info.pci_bus_id;
  g.driver_version = info.driver_version;
  g.power_limit_w = info.power_limit_w;
  g.sm_clock_max_mhz = info.sm_clock_max_mhz;
  g.mem_clock_max_mhz = info.mem_clock_max_mhz;
  g.at_start = to_clock_sample(at_start);
  g.at_end = to_clock_sample(at_end);
  return g;
}

nlohmann::json to_json(const GpuSnapshot& s) {
  nlohmann::json j{{"valid", s.valid},
                   {"sm_clock_mhz", s.sm_clock_mhz},
                   {"mem_clock_mhz", s.mem_clock_mhz},
                   {"temperature_c", s.temperature_c},
                   {"power_w", s.power_w},
                   {"throttle_reasons", s.throttle_reasons},
                   {"throttle_reason_names", throttle_reason_names(s.throttle_reasons)},
                   {"throttled", is_throttled(s.throttle_reasons)},
                   {"host_time_ns", s.host_time_ns}};
  if (!s.error.empty()) j["error"] = s.error;
  return j;
}

nlohmann::json to_json(const GpuStaticInfo& i) {
  return nlohmann::json{{"name", i.name},
                        {"uuid", i.uuid},
                        {"driver_version", i.driver_version},
                        {"pci_bus_id", i.pci_bus_id},
                        {"cuda_driver_version", i.cuda_driver_version},
                        {"power_limit_w", i.power_limit_w},
                        {"sm_clock_max_mhz", i.sm_clock_max_mhz},
                        {"mem_clock_max_mhz", i.mem_clock_max_mhz},
                        {"source", i.source},
                        {"error", i.error}};
}

GpuMetaRecorder::GpuMetaRecorder() : GpuMetaRecorder(current_cuda_device_pci_bus_id()) {}

GpuMetaRecorder::GpuMetaRecorder(const std::string& pci_bus_id) : nvml_(pci_bus_id), at_start_(nvml_.snapshot()) {}

void GpuMetaRecorder::fill(SessionMeta& meta) const {
  const GpuSnapshot at_end = nvml_.snapshot();
  attach_gpu_meta(meta, to_gpu_meta(nvml_.static_info(), at_start_, at_end));
}

}  // namespace xb
