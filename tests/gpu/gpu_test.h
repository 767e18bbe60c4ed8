// Shared fixture for tests that need a CUDA device: skips (message "no CUDA device: ...", which
// ctest's SKIP_REGULAR_EXPRESSION matches) when none is present.
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "bench/core/device.h"
#include "bench/core/measure.h"

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

/// A short measurement for GPU tests: batches of `batch` calls, 20 recorded steps, at least
/// `min_samples` samples and `min_time_s` seconds, at most 2 s.
inline MeasureConfig short_measure_config(int batch, int min_samples, double min_time_s) {
  MeasureConfig cfg;
  cfg.batch = batch;
  cfg.schedule = Schedule{0, 0, 20};
  cfg.stopping.min_samples = min_samples;
  cfg.stopping.min_time_s = min_time_s;
  cfg.stopping.max_time_s = 2;
  return cfg;
}

}  // namespace xb::testing
