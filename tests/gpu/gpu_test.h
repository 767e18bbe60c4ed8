// Shared fixture for tests that need a CUDA device: skips (message "no CUDA device: ...", which
// ctest's SKIP_REGULAR_EXPRESSION matches) when none is present.
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "bench/core/device.h"

namespace xb::testing {

class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The words bench and the Python module use ("no NVIDIA driver is installed", ...).
    const std::string why = cuda_device_missing();
    if (!why.empty()) GTEST_SKIP() << "no CUDA device: " << why;
  }
};

/// The same fixture for value-parameterized tests.
template <typename Param>
class GpuTestWithParam : public GpuTest, public ::testing::WithParamInterface<Param> {};

}  // namespace xb::testing
