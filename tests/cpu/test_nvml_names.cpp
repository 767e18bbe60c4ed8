// NVML adapter without a GPU (kernels/nvml_probe.h, bench/core/gpu_meta.h): clock-event reason names
// and the throttling rule on known masks, JSON of unread snapshots, and an adapter that cannot
// open a device reporting why instead of throwing.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "bench/core/fixture_json.h"
#include "bench/core/fixture_records.h"
#include "bench/core/gpu_meta.h"
#include "kernels/nvml_probe.h"
#include "profiler/model/session_io.h"

namespace xb {
namespace {

using nlohmann::json;
using Names = std::vector<std::string>;

/// True when `j` (recursively) holds a non-finite number. nlohmann dumps NaN/Inf as null.
bool has_non_finite(const json& j) {
  if (j.is_number_float()) return !std::isfinite(j.get<double>());
  if (j.is_structured()) {
    for (const json& v : j) {
      if (has_non_finite(v)) return true;
    }
  }
  return false;
}

TEST(NvmlNames, EachNvmlBitHasItsName) {
  // Values of nvml.h's nvmlClocksEventReason* (NVML 12.2).
  EXPECT_EQ(throttle_reason_names(0x1), Names{"GpuIdle"});
  EXPECT_EQ(throttle_reason_names(0x2), Names{"ApplicationsClocksSetting"});
  EXPECT_EQ(throttle_reason_names(0x4), Names{"SwPowerCap"});
  EXPECT_EQ(throttle_reason_names(0x8), Names{"HwSlowdown"});
  EXPECT_EQ(throttle_reason_names(0x10), Names{"SyncBoost"});
  EXPECT_EQ(throttle_reason_names(0x20), Names{"SwThermalSlowdown"});
  EXPECT_EQ(throttle_reason_names(0x40), Names{"HwThermalSlowdown"});
  EXPECT_EQ(throttle_reason_names(0x80), Names{"HwPowerBrakeSlowdown"});
  EXPECT_EQ(throttle_reason_names(0x100), Names{"DisplayClockSetting"});
}

TEST(NvmlNames, MasksListBitsLowestFirstAndUnknownBitsInHex) {
  EXPECT_TRUE(throttle_reason_names(0).empty());
  EXPECT_EQ(throttle_reason_names(0x5), (Names{"GpuIdle", "SwPowerCap"}));
  EXPECT_EQ(throttle_reason_names(0x1FF).size(), 9u);
  EXPECT_EQ(throttle_reason_names(0x600), (Names{"0x200", "0x400"}));
  EXPECT_EQ(throttle_reason_names(0x8000000000000004ull), (Names{"SwPowerCap", "0x8000000000000000"}));
}

TEST(NvmlNames, ThrottledMeansPowerOrThermalOrHardwareSlowdown) {
  EXPECT_FALSE(is_throttled(0));
  for (std::uint64_t bit : {0x4ull, 0x8ull, 0x20ull, 0x40ull, 0x80ull}) EXPECT_TRUE(is_throttled(bit)) << bit;
  // Idle, application clocks, sync boost and display clocks are settings, not throttling.
  for (std::uint64_t bit : {0x1ull, 0x2ull, 0x10ull, 0x100ull, 0x200ull}) EXPECT_FALSE(is_throttled(bit)) << bit;
  EXPECT_FALSE(is_throttled(0x1 | 0x2 | 0x10 | 0x100));
  EXPECT_TRUE(is_throttled(0x1 | 0x4));  // idle bit set beside a power cap: still throttled
  EXPECT_EQ(clocks_event::kThrottling, 0xECull);
}

TEST(NvmlNames, InvalidSnapshotJsonHasNoNaN) {
  const GpuSnapshot s;  // nothing read
  const json j = to_json(s);
  EXPECT_FALSE(has_non_finite(j));
  EXPECT_EQ(j.at("valid"), false);
  EXPECT_EQ(j.at("power_w"), -1.0);
  EXPECT_EQ(j.at("sm_clock_mhz"), -1);
  EXPECT_EQ(j.at("throttle_reasons"), 0);
  EXPECT_EQ(j.at("throttle_reason_names"), json::array());
  EXPECT_EQ(j.at("throttled"), false);
  // The text itself: JSON has no NaN or Infinity, and dump() would write null for them.
  const std::string text = j.dump();
  EXPECT_EQ(text.find("null"), std::string::npos) << text;
  EXPECT_EQ(text.find("NaN"), std::string::npos) << text;

  const json info = to_json(GpuStaticInfo{});
  EXPECT_FALSE(has_non_finite(info));
  EXPECT_EQ(info.dump().find("null"), std::string::npos);
}

TEST(NvmlNames, SnapshotJsonNamesItsReasons) {
  GpuSnapshot s;
  s.valid = true;
  s.sm_clock_mhz = 1545;
  s.mem_clock_mhz = 3201;
  s.temperature_c = 61;
  s.power_w = 698.25;
  s.throttle_reasons = clocks_event::kSwPowerCap | clocks_event::kGpuIdle;
  s.host_time_ns = 1'795'941'585'294'218'963;
  const json j = to_json(s);
  EXPECT_EQ(j.at("throttle_reason_names"), (json{"GpuIdle", "SwPowerCap"}));
  EXPECT_EQ(j.at("throttle_reasons"), 5);
  EXPECT_EQ(j.at("throttled"), true);
  EXPECT_EQ(j.at("power_w"), 698.25);
  EXPECT_EQ(j.at("host_time_ns"), 1'795'941'585'294'218'963);
  EXPECT_FALSE(j.contains("error"));
}

TEST(NvmlNames, SnapshotJsonUsesTheSessionSampleKeys) {
  // to_json(GpuSnapshot) = the keys raw_session.json gives a GpuClockSample, plus the names and
  // the time; the shared keys hold the same values.
  GpuSnapshot s;
  s.sm_clock_mhz = 1980;
  s.power_w = 120.5;
  s.throttle_reasons = clocks_event::kHwSlowdown;
  s.error = "nvmlDeviceGetTemperature(NVML_TEMPERATURE_GPU) returned 3";
  GpuMeta g;
  g.at_start = to_clock_sample(s);
  const json sample = gpu_meta_json(g).at("at_start");
  json mine = to_json(s);
  mine.erase("throttle_reason_names");
  mine.erase("host_time_ns");
  EXPECT_EQ(mine, sample);
}

TEST(NvmlNames, GpuMetaFromStaticInfoAndSnapshots) {
  GpuStaticInfo info;
  info.name = "NVIDIA H200";
  info.uuid = "GPU-12345678-abcd-ef01-2345-6789abcdef01";
  info.driver_version = "580.159.04";
  info.pci_bus_id = "0000:19:00.0";
  info.cuda_driver_version = 13000;
  info.power_limit_w = 700;
  info.sm_clock_max_mhz = 1980;
  info.mem_clock_max_mhz = 3201;
  info.source = "nvml";
  GpuSnapshot start, end;
  start.valid = end.valid = true;
  start.sm_clock_mhz = 345;
  start.throttle_reasons = clocks_event::kGpuIdle;
  end.sm_clock_mhz = 1545;
  end.throttle_reasons = clocks_event::kSwPowerCap;
  const GpuMeta g = to_gpu_meta(info, start, end);
  EXPECT_EQ(g.source, "nvml");
  EXPECT_EQ(g.uuid, info.uuid);
  EXPECT_EQ(g.pci_bus_id, info.pci_bus_id);
  EXPECT_EQ(g.driver_version, info.driver_version);
  EXPECT_EQ(g.power_limit_w, 700);
  EXPECT_EQ(g.sm_clock_max_mhz, 1980);
  EXPECT_EQ(g.mem_clock_max_mhz, 3201);
  EXPECT_EQ(g.at_start.sm_clock_mhz, 345);
  EXPECT_FALSE(g.at_start.throttled);
  EXPECT_EQ(g.at_end.sm_clock_mhz, 1545);
  EXPECT_TRUE(g.at_end.throttled);
  EXPECT_TRUE(g.at_end.valid);
}

TEST(NvmlProbe, MissingLibraryIsReportedNotThrown) {
  const Nvml nvml("0000:00:00.0", "libxb-no-such-nvml.so.1");
  EXPECT_FALSE(nvml.available());
  EXPECT_EQ(nvml.status(), "unavailable: libxb-no-such-nvml.so.1 not loadable");
  const GpuSnapshot s = nvml.snapshot();
  EXPECT_FALSE(s.valid);
  EXPECT_EQ(s.error, nvml.status());
  EXPECT_EQ(s.sm_clock_mhz, -1);
  EXPECT_GT(s.host_time_ns, 0);
  const GpuStaticInfo info = nvml.static_info();
  EXPECT_EQ(info.source, nvml.status());
  EXPECT_EQ(info.pci_bus_id, "0000:00:00.0");
  EXPECT_EQ(info.power_limit_w, -1);
}

TEST(NvmlProbe, UnknownDeviceIsReportedNotThrown) {
  // The real library where there is one (then the bus id matches no GPU), else not loadable:
  // unavailable either way, with the reason.
  const Nvml nvml("ffff:ff:1f.7");
  EXPECT_FALSE(nvml.available());
  EXPECT_EQ(nvml.status().rfind("unavailable: ", 0), 0u) << nvml.status();
  EXPECT_FALSE(nvml.snapshot().valid);
  const Nvml no_bus("");
  EXPECT_FALSE(no_bus.available());
  EXPECT_NE(no_bus.status().find("no PCI bus id"), std::string::npos) << no_bus.status();
}

TEST(NvmlProbe, RecorderWithoutNvmlFillsTheReason) {
  const GpuMetaRecorder recorder("ffff:ff:1f.7");
  SessionMeta session_meta;
  recorder.fill(session_meta);
  const GpuMeta gpu = read_gpu_meta(session_meta);  // the block it attached, read back
  EXPECT_EQ(gpu.source, recorder.nvml().status());
  EXPECT_EQ(gpu.source.rfind("unavailable: ", 0), 0u);
  EXPECT_FALSE(gpu.at_start.valid);
  EXPECT_FALSE(gpu.at_end.valid);
  EXPECT_EQ(gpu.at_end.error, gpu.source);
  EXPECT_FALSE(has_non_finite(gpu_meta_json(gpu)));
}

TEST(NvmlProbe, MovedAdapterKeepsItsState) {
  Nvml a("0000:00:00.0", "libxb-no-such-nvml.so.1");
  const std::string status = a.status();
  Nvml b(std::move(a));
  EXPECT_EQ(b.status(), status);
  EXPECT_FALSE(b.available());
}

}  // namespace
}  // namespace xb
