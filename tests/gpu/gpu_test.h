// Shared fixture for tests that need a CUDA device: skips (message "no CUDA device: ...", which
// ctest's SKIP_REGULAR_EXPRESSION matches) when none is present.
#pragma once

#include <string>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

namespace xb::testing {

class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess || count == 0) {
      const std::string why = status != cudaSuccess
                                  ? std::string(cudaGetErrorName(status)) + ": " +
                                        cudaGetErrorString(status)
                                  : std::string("cudaGetDeviceCount returned 0");
      (void)cudaGetLastError();
      GTEST_SKIP() << "no CUDA device: " << why;
    }
  }
};

/// The same fixture for value-parameterized tests.
template <typename Param>
class GpuTestWithParam : public GpuTest, public ::testing::WithParamInterface<Param> {};

}  // namespace xb::testing
