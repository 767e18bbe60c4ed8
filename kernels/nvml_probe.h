// NVML adapter: clocks, temperature, power and clock-event (throttle) reasons of one GPU, and its
// static facts (name, UUID, driver, power limit, maximum clocks). libnvidia-ml.so.1 (the driver's
// library) is loaded with dlopen and its stable C ABI called through dlsym, so neither nvml.h nor
// the library is needed to build, and a machine without them runs on: nothing here throws, a
// missing library or a failing call leaves `valid = false` / `source = "unavailable: ..."` with
// the reason. No NVML types in this header.
//
// Units are in the field names: _mhz, _c (degrees Celsius), _w (watts), _ns.
// Constants and signatures: nvml.h of NVML 12.2 (NVIDIA/go-nvml, gen/nvml/nvml.h, the header
// shipped in cuda-nvml-dev 12.2.140); the values used are listed where they are used.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace xb {

/// nvmlClocksEventReason* bits (nvml.h "nvmlClocksEventReasons"; the same values as the older
/// nvmlClocksThrottleReason* names, which nvml.h keeps as deprecated aliases).
namespace clocks_event {
inline constexpr std::uint64_t kGpuIdle = 0x1;                    ///< nothing runs; clocks drop to idle
inline constexpr std::uint64_t kApplicationsClocksSetting = 0x2;  ///< capped by the application clocks setting
inline constexpr std::uint64_t kSwPowerCap = 0x4;                 ///< software power scaling (power limit)
inline constexpr std::uint64_t kHwSlowdown = 0x8;                 ///< hardware slowdown (factor >= 2)
inline constexpr std::uint64_t kSyncBoost = 0x10;                 ///< held to a sync-boost group's clocks
inline constexpr std::uint64_t kSwThermalSlowdown = 0x20;         ///< software thermal slowdown
inline constexpr std::uint64_t kHwThermalSlowdown = 0x40;         ///< hardware thermal slowdown
inline constexpr std::uint64_t kHwPowerBrakeSlowdown = 0x80;      ///< external power brake asserted
inline constexpr std::uint64_t kDisplayClockSetting = 0x100;      ///< capped by the display clock setting
/// The bits that mean the GPU runs below the clocks it was asked for because of power or heat:
/// SwPowerCap | HwSlowdown | SwThermalSlowdown | HwThermalSlowdown | HwPowerBrakeSlowdown.
inline constexpr std::uint64_t kThrottling =
    kSwPowerCap | kHwSlowdown | kSwThermalSlowdown | kHwThermalSlowdown | kHwPowerBrakeSlowdown;
}  // namespace clocks_event

/// Names of the set bits of an nvmlClocksEventReason mask, lowest bit first: "GpuIdle",
/// "ApplicationsClocksSetting", "SwPowerCap", "HwSlowdown", "SyncBoost", "SwThermalSlowdown",
/// "HwThermalSlowdown", "HwPowerBrakeSlowdown", "DisplayClockSetting"; a bit nvml.h 12.2 does not
/// define is named by its value in hex ("0x200"). Empty for 0 (nvmlClocksEventReasonNone).
std::vector<std::string> throttle_reason_names(std::uint64_t mask);

/// True when `mask` has any of clocks_event::kThrottling. GpuIdle, ApplicationsClocksSetting,
/// SyncBoost and DisplayClockSetting are settings or idleness, not throttling.
bool is_throttled(std::uint64_t mask);

/// One reading of a GPU's state. A value that could not be read is -1 (the mask 0).
struct GpuSnapshot {
  bool valid = false;      ///< every value below was read
  std::string error;       ///< "" when valid; else why not: the failing calls, or why NVML is unavailable
  int sm_clock_mhz = -1;   ///< nvmlDeviceGetClockInfo(NVML_CLOCK_SM), current
  int mem_clock_mhz = -1;  ///< nvmlDeviceGetClockInfo(NVML_CLOCK_MEM), current
  int temperature_c = -1;  ///< nvmlDeviceGetTemperature(NVML_TEMPERATURE_GPU)
  double power_w = -1;     ///< nvmlDeviceGetPowerUsage (mW) / 1000
  /// nvmlDeviceGetCurrentClocksEventReasons (or, from an older driver's library that lacks it,
  /// nvmlDeviceGetCurrentClocksThrottleReasons, its deprecated name): a clocks_event mask.
  std::uint64_t throttle_reasons = 0;
  std::int64_t host_time_ns = 0;  ///< std::chrono::system_clock when the reading began, ns since the Unix epoch
};

/// What does not change while a process runs. A value that could not be read is "" or -1.
struct GpuStaticInfo {
  std::string name;                              ///< nvmlDeviceGetName, e.g. "NVIDIA H200"
  std::string uuid;                              ///< nvmlDeviceGetUUID, "GPU-xxxxxxxx-..."
  std::string driver_version;                    ///< nvmlSystemGetDriverVersion, e.g. "570.124.06"
  std::string pci_bus_id;                        ///< the PCI bus id the device was opened for
  int cuda_driver_version = -1;                  ///< nvmlSystemGetCudaDriverVersion(_v2), e.g. 13000 for 13.0
  double power_limit_w = -1;                     ///< nvmlDeviceGetEnforcedPowerLimit (mW) / 1000
  int sm_clock_max_mhz = -1;                     ///< nvmlDeviceGetMaxClockInfo(NVML_CLOCK_SM)
  int mem_clock_max_mhz = -1;                    ///< nvmlDeviceGetMaxClockInfo(NVML_CLOCK_MEM)
  std::string source = "unavailable: not read";  ///< "nvml" or "unavailable: <why>" (= Nvml::status())
  std::string error;                             ///< "" when every value was read; else the calls that failed
};

/// NVML opened for one GPU. Non-copyable, movable. Every NVML return code is checked; a failure
/// is reported in the result, never thrown. NVML is thread-safe, so are the const methods.
class Nvml {
 public:
  /// Loads `library`, calls nvmlInit_v2 and opens the device with
  /// nvmlDeviceGetHandleByPciBusId_v2(pci_bus_id), e.g. the text cudaDeviceGetPCIBusId gives
  /// ("0000:19:00.0"). On failure available() is false and status() says why.
  explicit Nvml(const std::string& pci_bus_id, const std::string& library = "libnvidia-ml.so.1");
  ~Nvml();  ///< nvmlShutdown (NVML counts nvmlInit_v2 calls), dlclose
  Nvml(Nvml&&) noexcept;
  Nvml& operator=(Nvml&&) noexcept;
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  /// The device is open: snapshot() and static_info() can read it.
  bool available() const;
  /// "nvml" when available, else "unavailable: <why>", e.g. "unavailable: libnvidia-ml.so.1 not
  /// loadable", "unavailable: nvmlInit_v2 returned 9".
  const std::string& status() const;
  /// The GPU's state now (five NVML calls, tens of microseconds).
  GpuSnapshot snapshot() const;
  /// Name, UUID, driver, power limit, maximum clocks.
  GpuStaticInfo static_info() const;
  /// Every SM clock the GPU supports, MHz, over all its supported memory clocks
  /// (nvmlDeviceGetSupportedMemoryClocks, then nvmlDeviceGetSupportedGraphicsClocks for each), in
  /// NVML's order; `error` gets the calls that failed ("" when none). Empty when NVML cannot list them.
  std::vector<int> supported_sm_clocks_mhz(std::string& error) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The PCI bus id of CUDA device `device` (cudaDeviceGetPCIBusId), or "" when it cannot be read
/// (then an Nvml opened for it is unavailable). Never throws.
std::string cuda_device_pci_bus_id(int device);
/// The same for the calling thread's current device (cudaGetDevice).
std::string current_cuda_device_pci_bus_id();

}  // namespace xb
