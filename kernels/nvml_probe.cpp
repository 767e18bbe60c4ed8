// NVML adapter (kernels/nvml_probe.h): libnvidia-ml.so.1 loaded with dlopen, its C ABI called
// through dlsym.
//
// nvml.h values relied on (NVML 12.2, NVIDIA/go-nvml gen/nvml/nvml.h):
//   nvmlReturn_t          NVML_SUCCESS = 0 (every other value is an error)
//   nvmlClockType_t       NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2
//   nvmlTemperatureSensors_t NVML_TEMPERATURE_GPU = 0
//   nvmlDevice_t          an opaque pointer (struct nvmlDevice_st*)
//   buffer sizes          NVML_DEVICE_NAME_V2_BUFFER_SIZE 96, NVML_DEVICE_UUID_V2_BUFFER_SIZE 96,
//                         NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80
//   signatures            nvmlReturn_t f(nvmlDevice_t, unsigned int*) for power usage and the
//                         enforced power limit (mW); (nvmlDevice_t, nvmlClockType_t, unsigned int*)
//                         for clocks (MHz); (nvmlDevice_t, unsigned long long*) for the clock
//                         event reasons; (char*, unsigned int) for strings.
#include "kernels/nvml_probe.h"

#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <utility>

#include <cuda_runtime_api.h>

namespace xb {

namespace {

constexpr int kNvmlSuccess = 0;
constexpr int kClockSm = 1;
constexpr int kClockMem = 2;
constexpr int kTemperatureGpu = 0;
constexpr unsigned kNameBufferSize = 96;
constexpr unsigned kUuidBufferSize = 96;
constexpr unsigned kDriverVersionBufferSize = 80;

using Device = void*;  // nvmlDevice_t

std::string hex(std::uint64_t v) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(v));
  return text;
}

/// Joins failures as "a; b".
void append(std::string& errors, const std::string& what) {
  if (!errors.empty()) errors += "; ";
  errors += what;
}

}  // namespace

std::vector<std::string> throttle_reason_names(std::uint64_t mask) {
  static constexpr std::pair<std::uint64_t, const char*> kNames[] = {
      {clocks_event::kGpuIdle, "GpuIdle"},
      {clocks_event::kApplicationsClocksSetting, "ApplicationsClocksSetting"},
      {clocks_event::kSwPowerCap, "SwPowerCap"},
      {clocks_event::kHwSlowdown, "HwSlowdown"},
      {clocks_event::kSyncBoost, "SyncBoost"},
      {clocks_event::kSwThermalSlowdown, "SwThermalSlowdown"},
      {clocks_event::kHwThermalSlowdown, "HwThermalSlowdown"},
      {clocks_event::kHwPowerBrakeSlowdown, "HwPowerBrakeSlowdown"},
      {clocks_event::kDisplayClockSetting, "DisplayClockSetting"},
  };
  std::vector<std::string> names;
  for (int bit = 0; bit < 64; ++bit) {
    const std::uint64_t b = std::uint64_t{1} << bit;
    if ((mask & b) == 0) continue;
    const char* name = nullptr;
    for (const auto& [value, text] : kNames) {
      if (value == b) name = text;
    }
    names.push_back(name != nullptr ? std::string(name) : hex(b));
  }
  return names;
}

bool is_throttled(std::uint64_t mask) { return (mask & clocks_event::kThrottling) != 0; }

// ---------------------------------------------------------------------------------------------

struct Nvml::Impl {
  std::string library;
  std::string pci_bus_id;
  std::string status;
  void* lib = nullptr;
  bool initialized = false;
  bool ok = false;
  Device device = nullptr;

  // Required: without these nothing can be read.
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  int (*by_pci)(const char*, Device*) = nullptr;
  // Optional: a missing one fails only the value it reads.
  int (*clock)(Device, int, unsigned*) = nullptr;
  int (*max_clock)(Device, int, unsigned*) = nullptr;
  int (*supported_mem_clocks)(Device, unsigned*, unsigned*) = nullptr;
  int (*supported_sm_clocks)(Device, unsigned, unsigned*, unsigned*) = nullptr;
  int (*temperature)(Device, int, unsigned*) = nullptr;
  int (*power_usage)(Device, unsigned*) = nullptr;
  int (*power_limit)(Device, unsigned*) = nullptr;
  int (*event_reasons)(Device, unsigned long long*) = nullptr;
  const char* event_reasons_name = "nvmlDeviceGetCurrentClocksEventReasons";
  int (*name)(Device, char*, unsigned) = nullptr;
  int (*uuid)(Device, char*, unsigned) = nullptr;
  int (*driver)(char*, unsigned) = nullptr;
  int (*cuda_driver)(int*) = nullptr;
  const char* cuda_driver_name = "nvmlSystemGetCudaDriverVersion";

  template <typename F>
  void find(F& fn, const char* symbol) {
    fn = reinterpret_cast<F>(dlsym(lib, symbol));
  }

  /// Calls `fn(args...)` when it was found; appends "<symbol> returned <code>" or "<library> has
  /// no <symbol>" to `errors` unless it returned NVML_SUCCESS. NVML's one check (STYLE.md).
  template <typename F, typename... Args>
  bool call(std::string& errors, const char* symbol, F fn, Args... args) const {
    if (fn == nullptr) {
      append(errors, library + " has no " + symbol);
      return false;
    }
    const int rc = fn(args...);
    if (rc != kNvmlSuccess) append(errors, std::string(symbol) + " returned " + std::to_string(rc));
    return rc == kNvmlSuccess;
  }

  ~Impl() {
    // nvmlShutdown's code is not reported: a destructor has nowhere to report it, and NVML's
    // reference count is released either way.
    if (initialized) (void)shutdown();
    if (lib != nullptr) dlclose(lib);
  }
};

Nvml::Nvml(const std::string& pci_bus_id, const std::string& library) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.library = library;
  m.pci_bus_id = pci_bus_id;
  if (pci_bus_id.empty()) {
    m.status = "unavailable: no PCI bus id (the CUDA device could not be queried)";
    return;
  }
  m.lib = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (m.lib == nullptr) {
    m.status = "unavailable: " + library + " not loadable";
    return;
  }
  m.find(m.init, "nvmlInit_v2");
  m.find(m.shutdown, "nvmlShutdown");
  m.find(m.by_pci, "nvmlDeviceGetHandleByPciBusId_v2");
  for (const auto& [missing, symbol] :
       {std::pair{m.init == nullptr, "nvmlInit_v2"}, std::pair{m.shutdown == nullptr, "nvmlShutdown"},
        std::pair{m.by_pci == nullptr, "nvmlDeviceGetHandleByPciBusId_v2"}}) {
    if (missing) {
      m.status = "unavailable: " + library + " has no " + symbol;
      return;
    }
  }
  m.find(m.clock, "nvmlDeviceGetClockInfo");
  m.find(m.max_clock, "nvmlDeviceGetMaxClockInfo");
  m.find(m.supported_mem_clocks, "nvmlDeviceGetSupportedMemoryClocks");
  m.find(m.supported_sm_clocks, "nvmlDeviceGetSupportedGraphicsClocks");
  m.find(m.temperature, "nvmlDeviceGetTemperature");
  m.find(m.power_usage, "nvmlDeviceGetPowerUsage");
  m.find(m.power_limit, "nvmlDeviceGetEnforcedPowerLimit");
  m.find(m.name, "nvmlDeviceGetName");
  m.find(m.uuid, "nvmlDeviceGetUUID");
  m.find(m.driver, "nvmlSystemGetDriverVersion");
  // Newer name first, then the one older drivers' libraries export.
  m.event_reasons_name = "nvmlDeviceGetCurrentClocksEventReasons";
  m.find(m.event_reasons, m.event_reasons_name);
  if (m.event_reasons == nullptr) {
    m.event_reasons_name = "nvmlDeviceGetCurrentClocksThrottleReasons";
    m.find(m.event_reasons, m.event_reasons_name);
  }
  if (m.event_reasons == nullptr) {
    m.event_reasons_name = "nvmlDeviceGetCurrentClocksEventReasons (nor nvmlDeviceGetCurrentClocksThrottleReasons)";
  }
  m.cuda_driver_name = "nvmlSystemGetCudaDriverVersion_v2";
  m.find(m.cuda_driver, m.cuda_driver_name);
  if (m.cuda_driver == nullptr) {
    m.cuda_driver_name = "nvmlSystemGetCudaDriverVersion";
    m.find(m.cuda_driver, m.cuda_driver_name);
  }

  if (const int rc = m.init(); rc != kNvmlSuccess) {
    m.status = "unavailable: nvmlInit_v2 returned " + std::to_string(rc);
    return;
  }
  m.initialized = true;
  if (const int rc = m.by_pci(pci_bus_id.c_str(), &m.device); rc != kNvmlSuccess) {
    m.status = "unavailable: nvmlDeviceGetHandleByPciBusId_v2(" + pci_bus_id + ") returned " + std::to_string(rc);
    return;
  }
  m.status = "nvml";
  m.ok = true;
}

Nvml::~Nvml() = default;
Nvml::Nvml(Nvml&&) noexcept = default;
Nvml& Nvml::operator=(Nvml&&) noexcept = default;

bool Nvml::available() const { return impl_ != nullptr && impl_->ok; }

const std::string& Nvml::status() const {
  static const std::string moved_from = "unavailable: moved from";
  return impl_ != nullptr ? impl_->status : moved_from;
}

GpuSnapshot Nvml::snapshot() const {
  GpuSnapshot s;
  s.host_time_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  if (!available()) {
    s.error = status();
    return s;
  }
  const Impl& m = *impl_;
  std::string errors;
  unsigned v = 0;
  if (m.call(errors, "nvmlDeviceGetClockInfo(NVML_CLOCK_SM)", m.clock, m.device, kClockSm, &v)) {
    s.sm_clock_mhz = static_cast<int>(v);
  }
  if (m.call(errors, "nvmlDeviceGetClockInfo(NVML_CLOCK_MEM)", m.clock, m.device, kClockMem, &v)) {
    s.mem_clock_mhz = static_cast<int>(v);
  }
  if (m.call(errors, "nvmlDeviceGetTemperature(NVML_TEMPERATURE_GPU)", m.temperature, m.device, kTemperatureGpu, &v)) {
    s.temperature_c = static_cast<int>(v);
  }
  if (m.call(errors, "nvmlDeviceGetPowerUsage", m.power_usage, m.device, &v)) {
    s.power_w = static_cast<double>(v) / 1000.0;  // mW -> W
  }
  unsigned long long reasons = 0;
  if (m.call(errors, m.event_reasons_name, m.event_reasons, m.device, &reasons)) {
    s.throttle_reasons = static_cast<std::uint64_t>(reasons);
  }
  s.valid = errors.empty();
  s.error = std::move(errors);
  return s;
}

GpuStaticInfo Nvml::static_info() const {
  GpuStaticInfo info;
  info.source = status();
  if (impl_ != nullptr) info.pci_bus_id = impl_->pci_bus_id;
  if (!available()) return info;
  const Impl& m = *impl_;
  std::string errors;
  char text[kNameBufferSize] = {};
  static_assert(kNameBufferSize >= kUuidBufferSize && kNameBufferSize >= kDriverVersionBufferSize);
  // NVML writes a NUL-terminated string on success; the length is bounded anyway.
  const auto read_text = [&](std::size_t size) { return std::string(text, strnlen(text, size)); };
  if (m.call(errors, "nvmlDeviceGetName", m.name, m.device, text, kNameBufferSize)) {
    info.name = read_text(kNameBufferSize);
  }
  if (m.call(errors, "nvmlDeviceGetUUID", m.uuid, m.device, text, kUuidBufferSize)) {
    info.uuid = read_text(kUuidBufferSize);
  }
  if (m.call(errors, "nvmlSystemGetDriverVersion", m.driver, text, kDriverVersionBufferSize)) {
    info.driver_version = read_text(kDriverVersionBufferSize);
  }
  int cuda_version = 0;
  if (m.call(errors, m.cuda_driver_name, m.cuda_driver, &cuda_version)) {
    info.cuda_driver_version = cuda_version;
  }
  unsigned v = 0;
  if (m.call(errors, "nvmlDeviceGetEnforcedPowerLimit", m.power_limit, m.device, &v)) {
    info.power_limit_w = static_cast<double>(v) / 1000.0;  // mW -> W
  }
  if (m.call(errors, "nvmlDeviceGetMaxClockInfo(NVML_CLOCK_SM)", m.max_clock, m.device, kClockSm, &v)) {
    info.sm_clock_max_mhz = static_cast<int>(v);
  }
  if (m.call(errors, "nvmlDeviceGetMaxClockInfo(NVML_CLOCK_MEM)", m.max_clock, m.device, kClockMem, &v)) {
    info.mem_clock_max_mhz = static_cast<int>(v);
  }
  info.error = std::move(errors);
  return info;
}

std::vector<int> Nvml::supported_sm_clocks_mhz(std::string& error) const {
  const Impl& m = *impl_;
  std::vector<int> out;
  if (!m.ok) {
    error = m.status;
    return out;
  }
  std::string errors;
  unsigned mem[256] = {};
  unsigned mem_count = 256;
  if (!m.call(errors, "nvmlDeviceGetSupportedMemoryClocks", m.supported_mem_clocks, m.device, &mem_count, mem)) {
    error = errors;
    return out;
  }
  for (unsigned i = 0; i < mem_count; ++i) {
    unsigned sm[512] = {};
    unsigned sm_count = 512;
    if (m.call(errors, "nvmlDeviceGetSupportedGraphicsClocks", m.supported_sm_clocks, m.device, mem[i], &sm_count,
               sm)) {
      for (unsigned k = 0; k < sm_count; ++k) out.push_back(static_cast<int>(sm[k]));
    }
  }
  error = errors;
  return out;
}

// ---------------------------------------------------------------------------------------------

std::string cuda_device_pci_bus_id(int device) {
  char bus[32] = {};  // "dddd:bb:dd.f" needs 13; NVML's own buffer is 32
  if (cudaDeviceGetPCIBusId(bus, static_cast<int>(sizeof bus), device) != cudaSuccess) {
    (void)cudaGetLastError();  // not sticky; clear it so later checks do not report it
    return "";
  }
  return bus;
}

std::string current_cuda_device_pci_bus_id() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    return "";
  }
  return cuda_device_pci_bus_id(device);
}

}  // namespace xb
