// The lab's tests of the add kernel's tuning space (tools/lab/add_tuning), built into
// xb_gpu_tests with -DXB_LAB=ON alone (tests/CMakeLists.txt): every configuration of the space
// bit for bit over the spans of tests/gpu/add_check.h, the space's contents, and that
// launch_add_tuning refuses what launch_add refuses. Each test skips without a CUDA device.
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/add.h"
#include "kernels/cuda_raii.h"
#include "tests/gpu/add_check.h"
#include "tests/gpu/gpu_test.h"
#include "tools/lab/add_tuning/add_tuning.h"

// In xb::testing, beside tests/gpu/add_check.h's helpers and the GpuTest fixtures.
namespace xb::testing {
namespace {

class AddTuningSpace : public GpuTestWithParam<AddSpan> {};

// Spans up to 200k elements under every configuration of the tuning space (vectors per thread,
// block size, cache hints, the whole-chunk, partial-chunk, grid-stride and tail paths of each,
// the lean kernel's instantiations of both policies); bench's size classes run in
// test_kernels.cpp through launch_add.
TEST_P(AddTuningSpace, BitExactOnEveryElementAndWritesNothingElse) {
  const AddSpan s = GetParam();
  if (s.count > kAddSpanEveryConfigMax) return;  // bench's own configuration: test_kernels.cpp
  for (const AddLaunchConfig& config : add_tuning_space()) check_add_span(s, config, launch_add_tuning);
}

INSTANTIATE_TEST_SUITE_P(Spans, AddTuningSpace, ::testing::ValuesIn(add_spans()), add_span_name);

TEST_F(GpuTest, AddTuningSpaceIsEveryCombinationOnce) {
  const std::vector<AddLaunchConfig> space = add_tuning_space();
  std::set<std::string> names;
  for (const AddLaunchConfig& c : space) names.insert(to_string(c));
  // 3 vectors per thread x 5 block sizes x 5 cache policies, then the lean kernel's 8.
  EXPECT_EQ(space.size(), 83u);
  EXPECT_EQ(names.size(), 83u);
  EXPECT_EQ(names.count("v1/t128/plain"), 1u);
  for (const char* lean :
       {"v1/t128/default/lean", "v1/t128/plain/lean", "v1/t256/default/lean", "v1/t256/plain/lean",
        "v1/t128/default/lean/r10", "v1/t128/plain/lean/r10", "v1/t256/default/lean/r6", "v1/t256/plain/lean/r6"}) {
    EXPECT_EQ(names.count(lean), 1u) << lean;
  }
  EXPECT_EQ(names.count("v1/t32/default"), 1u);
  EXPECT_EQ(names.count("v4/t512/prefetch256-streaming"), 1u);
  // Every configuration of the space runs (the bit-exact tests above check what each computes).
  Stream stream;
  DeviceBuffer buf(4096);
  for (const AddLaunchConfig& c : space) {
    EXPECT_NO_THROW(launch_add_tuning(DType::FP32, buf.get(), buf.get(), buf.get(), 16, stream.get(), c))
        << to_string(c);
  }
  stream.synchronize();
}

// The checks are launch_add's (kernels/add_kernels.cuh, check_add_config): a configuration
// outside the templates' shapes is refused here too.
TEST_F(GpuTest, AddTuningRefusesConfigurationsOutsideTheSpace) {
  Stream stream;
  DeviceBuffer buf(4096);
  AddLaunchConfig bad = add_tuning_space().front();
  bad.vectors_per_thread = 3;
  EXPECT_THROW(launch_add_tuning(DType::FP32, buf.get(), buf.get(), buf.get(), 16, stream.get(), bad),
               std::invalid_argument);
  bad = add_tuning_space().front();
  bad.kernel = AddKernelVariant::Lean;
  bad.threads_per_block = 64;
  EXPECT_THROW(launch_add_tuning(DType::FP32, buf.get(), buf.get(), buf.get(), 16, stream.get(), bad),
               std::invalid_argument);
}

}  // namespace
}  // namespace xb::testing
