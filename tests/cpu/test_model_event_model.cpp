// build_session: joins (external ids, launches), names, order, duplicates.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "profiler/model/event_model.h"
#include "test_model_session.h"

namespace xb {
namespace {

using namespace xb::testing;

const DeviceActivity& find_device(const Session& s, std::uint32_t corr) {
  const auto it =
      std::find_if(s.device.begin(), s.device.end(), [&](const DeviceActivity& a) { return a.correlation_id == corr; });
  if (it == s.device.end()) throw std::runtime_error("no activity with that correlation");
  return *it;
}

TEST(ModelEventModel, JoinsExternalIdsAndLaunches) {
  const RawSession raw = sample_session();
  const Session s = build_session(raw);
  ASSERT_EQ(s.ranges.size(), 3u);
  ASSERT_EQ(s.api.size(), 6u);
  ASSERT_EQ(s.device.size(), 5u);
  ASSERT_EQ(s.syncs.size(), 1u);
  EXPECT_TRUE(s.duplicate_correlations.empty());
  EXPECT_EQ(s.meta.window_start_ns, kBase);
  EXPECT_EQ(s.event_timings.size(), 1u);

  // API calls: sorted by start, external id from the CUSTOM0 record.
  for (std::size_t i = 1; i < s.api.size(); ++i) EXPECT_LE(s.api[i - 1].start_ns, s.api[i].start_ns);
  const ApiCall& launch_ex = s.api[2];
  EXPECT_EQ(launch_ex.name, "cuLaunchKernelEx");
  EXPECT_TRUE(launch_ex.driver);
  EXPECT_EQ(launch_ex.external_id, 3u) << "CUSTOM0 must win over the OPENACC record";
  EXPECT_EQ(launch_ex.device_work, 1);
  EXPECT_EQ(s.api[0].external_id, 3u);
  EXPECT_EQ(s.api.back().name, "cudaStreamSynchronize");
  EXPECT_EQ(s.api.back().external_id, 1u);
  EXPECT_EQ(s.api.back().device_work, 0);

  // Device activities: names, external ids, launch indices.
  for (std::size_t i = 1; i < s.device.size(); ++i) EXPECT_LE(s.device[i - 1].start_ns, s.device[i].start_ns);
  const DeviceActivity& memcpy = find_device(s, 10);
  EXPECT_EQ(memcpy.kind, DeviceActivityKind::Memcpy);
  EXPECT_EQ(memcpy.name, "Memcpy DtoD (Device -> Device)");
  EXPECT_EQ(memcpy.external_id, 3u);
  ASSERT_GE(memcpy.launch, 0);
  EXPECT_EQ(s.api[static_cast<std::size_t>(memcpy.launch)].name, "cudaMemcpyAsync");
  ASSERT_NE(memcpy.raw, nullptr);
  EXPECT_EQ(memcpy.raw->bytes, 4096u);
  EXPECT_EQ(find_device(s, 11).name, "Memset (Device)");
  const DeviceActivity& add = find_device(s, 13);
  EXPECT_EQ(add.name, kAddDemangled);
  EXPECT_EQ(add.duration_ns(), 2000);
  EXPECT_EQ(s.api[static_cast<std::size_t>(add.launch)].correlation_id, 13u);
  const DeviceActivity& step_kernel = find_device(s, 15);
  EXPECT_EQ(step_kernel.name, "kernel(float*)");
  EXPECT_EQ(step_kernel.external_id, 1u);
  EXPECT_EQ(find_device(s, 12).name, kNvjet);

  EXPECT_EQ(s.syncs[0].name, "Stream Synchronize");
  EXPECT_EQ(s.syncs[0].external_id, 1u);
  EXPECT_EQ(s.syncs[0].stream_id, 7u);
}

TEST(ModelEventModel, UnlaunchedActivityHasNoLaunch) {
  RawSession raw;
  raw.records.push_back(device(RawKind::Kernel, 77, 0, 10, "k"));
  const Session s = build_session(raw);
  ASSERT_EQ(s.device.size(), 1u);
  EXPECT_EQ(s.device[0].launch, -1);
  EXPECT_EQ(s.device[0].external_id, 0u);
}

TEST(ModelEventModel, DetectsDuplicatesAndPrefersRuntimeLaunch) {
  RawSession raw;
  // corr 20: one launch, two device records (e.g. a graph launch) -> duplicate.
  raw.records.push_back(api(RawKind::Runtime, "cudaGraphLaunch", 311, 20, 0, 100));
  raw.records.push_back(device(RawKind::Kernel, 20, 200, 300, "a"));
  raw.records.push_back(device(RawKind::Kernel, 20, 300, 400, "b"));
  // corr 21: driver record delivered (and started) first, runtime second -> runtime is the launch.
  raw.records.push_back(api(RawKind::Driver, "cuLaunchKernel", 307, 21, 500, 600));
  raw.records.push_back(api(RawKind::Runtime, "cudaLaunchKernel", 211, 21, 510, 590));
  raw.records.push_back(device(RawKind::Kernel, 21, 700, 800, "c"));
  // corr 22: clean.
  raw.records.push_back(api(RawKind::Runtime, "cudaLaunchKernel", 211, 22, 900, 950));
  raw.records.push_back(device(RawKind::Kernel, 22, 1000, 1100, "d"));
  const Session s = build_session(raw);
  EXPECT_EQ(s.duplicate_correlations, (std::vector<std::uint32_t>{20, 21}));
  const DeviceActivity& c = find_device(s, 21);
  ASSERT_GE(c.launch, 0);
  EXPECT_FALSE(s.api[static_cast<std::size_t>(c.launch)].driver);
  EXPECT_EQ(s.api[static_cast<std::size_t>(c.launch)].device_work, 1);
  EXPECT_EQ(s.api[0].name, "cudaGraphLaunch");
  EXPECT_EQ(s.api[0].device_work, 2);
}

TEST(ModelEventModel, OrderIsDeterministicOnTies) {
  RawSession raw;
  raw.records.push_back(device(RawKind::Kernel, 31, 0, 10, "b"));
  raw.records.push_back(device(RawKind::Kernel, 30, 0, 10, "a"));
  raw.ranges.push_back(range(9, 0, "r9", RangeCategory::CpuOp, 0, 5));
  raw.ranges.push_back(range(8, 0, "r8", RangeCategory::CpuOp, 0, 5));
  const Session s = build_session(raw);
  EXPECT_EQ(s.device[0].correlation_id, 30u);
  EXPECT_EQ(s.ranges[0].id, 8u);
}

TEST(ModelEventModel, RejectsEndBeforeStart) {
  RawSession raw;
  raw.records.push_back(device(RawKind::Kernel, 1, 100, 50, "k"));
  EXPECT_THROW(build_session(raw), std::invalid_argument);
  RawSession raw2;
  raw2.ranges.push_back(range(1, 0, "r", RangeCategory::CpuOp, 10, 5));
  EXPECT_THROW(build_session(raw2), std::invalid_argument);
}

}  // namespace
}  // namespace xb
