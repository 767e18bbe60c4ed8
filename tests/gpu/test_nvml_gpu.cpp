// The NVML adapter on a real GPU (kernels/nvml_probe.h): the device CUDA uses opens, a snapshot
// is valid with plausible values, the static facts match CUDA's. Skips without a device.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include <cuda_runtime_api.h>

#include "gpu_test.h"
#include "kernels/nvml_probe.h"

namespace xb {
namespace {

using xb::testing::GpuTest;

TEST_F(GpuTest, NvmlOpensTheCudaDevice) {
  const std::string bus = current_cuda_device_pci_bus_id();
  ASSERT_FALSE(bus.empty());
  const Nvml nvml(bus);
  ASSERT_TRUE(nvml.available()) << nvml.status();
  EXPECT_EQ(nvml.status(), "nvml");
}

TEST_F(GpuTest, NvmlSnapshotIsValidAndPlausible) {
  const Nvml nvml(current_cuda_device_pci_bus_id());
  ASSERT_TRUE(nvml.available()) << nvml.status();
  const auto before = std::chrono::system_clock::now().time_since_epoch();
  const GpuSnapshot s = nvml.snapshot();
  ASSERT_TRUE(s.valid) << s.error;
  EXPECT_EQ(s.error, "");
  EXPECT_GE(s.sm_clock_mhz, 100);  // idle clocks are a few hundred MHz, boost about 2000
  EXPECT_LE(s.sm_clock_mhz, 4000);
  EXPECT_GE(s.mem_clock_mhz, 100);
  EXPECT_LE(s.mem_clock_mhz, 20000);
  EXPECT_GE(s.temperature_c, 5);
  EXPECT_LE(s.temperature_c, 110);
  EXPECT_GT(s.power_w, 1.0);
  EXPECT_LT(s.power_w, 2000.0);
  EXPECT_EQ(s.throttle_reasons >> 9, 0u) << "a clock event reason nvml.h 12.2 does not define: " << s.throttle_reasons;
  EXPECT_GE(s.host_time_ns, std::chrono::duration_cast<std::chrono::nanoseconds>(before).count());

  const GpuStaticInfo info = nvml.static_info();
  EXPECT_EQ(info.source, "nvml");
  EXPECT_EQ(info.error, "");
  EXPECT_LE(s.sm_clock_mhz, info.sm_clock_max_mhz);
  EXPECT_LE(s.mem_clock_mhz, info.mem_clock_max_mhz + 1);  // memory clocks may round up by 1 MHz
}

TEST_F(GpuTest, NvmlStaticInfoMatchesCuda) {
  int device = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  cudaDeviceProp prop{};
  ASSERT_EQ(cudaGetDeviceProperties(&prop, device), cudaSuccess);
  int cuda_driver = 0;
  ASSERT_EQ(cudaDriverGetVersion(&cuda_driver), cudaSuccess);

  const Nvml nvml(cuda_device_pci_bus_id(device));
  ASSERT_TRUE(nvml.available()) << nvml.status();
  const GpuStaticInfo info = nvml.static_info();
  EXPECT_EQ(info.error, "");
  // NVML names the physical GPU; under MIG CUDA's name adds the instance ("NVIDIA H200 MIG 1g...").
  EXPECT_FALSE(info.name.empty());
  EXPECT_EQ(std::string(prop.name).rfind(info.name, 0), 0u) << info.name << " vs " << prop.name;
  EXPECT_EQ(info.uuid.rfind("GPU-", 0), 0u) << info.uuid;
  EXPECT_FALSE(info.driver_version.empty());
  EXPECT_EQ(info.cuda_driver_version, cuda_driver);
  EXPECT_EQ(info.pci_bus_id, cuda_device_pci_bus_id(device));
  EXPECT_GT(info.power_limit_w, 10.0);
  EXPECT_LT(info.power_limit_w, 2000.0);
  EXPECT_GE(info.sm_clock_max_mhz, 500);
  EXPECT_LE(info.sm_clock_max_mhz, 4000);
  EXPECT_GE(info.mem_clock_max_mhz, 500);
}

}  // namespace
}  // namespace xb
