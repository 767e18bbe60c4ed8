// The per-sample SM clock (bench/core/sm_clock.h) on a real GPU: measure() behind the real
// blocking kernel records one clock per sample, and each recorded clock lies within the GPU's
// supported SM clock range (NVML) and within kNvmlToleranceFraction of NVML's current SM clock
// read before and after sampling. Also: the blocking kernel's timeout still ends it (no release
// reading then), and --no-blocking records no clocks. Skips without a CUDA device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/core/measure.h"
#include "gpu_test.h"
#include "kernels/blocking.h"
#include "kernels/cuda_raii.h"
#include "kernels/nvml_probe.h"
#include "kernels/spin_delay.h"

namespace xb {
namespace {

using SmClockGpu = testing::GpuTest;

/// A recorded clock may differ from NVML's reading by this fraction: the device timer's steps
/// (about 1 us, so up to 1% of a 200-us window, sm_clock.h) plus a DVFS step between NVML's
/// instant and the window (15 MHz, under 1% at 1980 MHz), with room for one more.
constexpr double kNvmlToleranceFraction = 0.03;
/// The supported range is widened by the timer's 1% alone.
constexpr double kRangeToleranceFraction = 0.01;

/// Samples of 4 spin kernels of 100 us: 400-us event intervals, windows well over 200 us.
MeasureConfig clock_config() { return testing::short_measure_config(4, 100, 0.3); }

TEST_F(SmClockGpu, EachSampleClockIsSupportedAndMatchesNvml) {
  Nvml nvml(current_cuda_device_pci_bus_id());
  if (!nvml.available()) GTEST_SKIP() << "NVML " << nvml.status() << ": nothing to check the clocks against";
  std::string error;
  const std::vector<int> supported = nvml.supported_sm_clocks_mhz(error);
  const GpuStaticInfo info = nvml.static_info();
  ASSERT_TRUE(!supported.empty() || info.sm_clock_max_mhz > 0) << "NVML lists no SM clock: " << error;
  const double lo = supported.empty() ? 1.0 : *std::min_element(supported.begin(), supported.end());
  const double hi = supported.empty() ? info.sm_clock_max_mhz : *std::max_element(supported.begin(), supported.end());

  Stream stream;
  BlockingKernel blocking;
  warm_up_spin_delay(stream.get());
  const auto dev = make_cuda_sample_device(stream.get(), &blocking, nullptr);
  Profiler prof(make_null_source());
  const GpuSnapshot before = nvml.snapshot();
  const Measurement m =
      measure({[&] { enqueue_spin_delay(stream.get(), 100'000); }}, prof, *dev, "clock", "xb::clock", clock_config());
  const GpuSnapshot after = nvml.snapshot();
  ASSERT_TRUE(before.valid && after.valid) << before.error << after.error;

  const FixtureTiming& t = m.timing;
  ASSERT_TRUE(t.blocking);
  ASSERT_EQ(t.sample_sm_clock_mhz.size(), t.samples_ns.size());
  std::printf("%zu samples: %s; NVML SM clock %d -> %d MHz, supported %.0f..%.0f MHz\n", t.samples_ns.size(),
              sm_clock_text(t).c_str(), before.sm_clock_mhz, after.sm_clock_mhz, lo, hi);
  const auto range = sm_clock_range(t.sample_sm_clock_mhz);
  ASSERT_TRUE(range) << "no sample got a clock: " << sm_clock_text(t);
  // Most windows must give a clock, else the rule (one SM for both readings) fails its purpose.
  EXPECT_GE(range->samples * 2, t.samples_ns.size()) << sm_clock_text(t);
  const double nvml_lo = std::min(before.sm_clock_mhz, after.sm_clock_mhz) * (1 - kNvmlToleranceFraction);
  const double nvml_hi = std::max(before.sm_clock_mhz, after.sm_clock_mhz) * (1 + kNvmlToleranceFraction);
  for (std::size_t i = 0; i < t.sample_sm_clock_mhz.size(); ++i) {
    if (!t.sample_sm_clock_mhz[i]) continue;
    const double mhz = *t.sample_sm_clock_mhz[i];
    EXPECT_GE(mhz, lo * (1 - kRangeToleranceFraction)) << "sample " << i;
    EXPECT_LE(mhz, hi * (1 + kRangeToleranceFraction)) << "sample " << i;
    EXPECT_GE(mhz, nvml_lo) << "sample " << i << " against NVML " << before.sm_clock_mhz;
    EXPECT_LE(mhz, nvml_hi) << "sample " << i << " against NVML " << after.sm_clock_mhz;
  }
}

TEST_F(SmClockGpu, NoBlockingKernelNoClocks) {
  Stream stream;
  warm_up_spin_delay(stream.get());
  const auto dev = make_cuda_sample_device(stream.get(), nullptr, nullptr);  // --no-blocking
  Profiler prof(make_null_source());
  const Measurement m =
      measure({[&] { enqueue_spin_delay(stream.get(), 100'000); }}, prof, *dev, "clock", "xb::clock", clock_config());
  EXPECT_FALSE(m.timing.blocking);
  EXPECT_TRUE(m.timing.sample_sm_clock_mhz.empty());
}

TEST_F(SmClockGpu, TheBlockingKernelStillTimesOutAndThenHasNoReleaseReading) {
  Stream stream;
  BlockingKernel blocking;
  blocking.block(stream.get(), 1'000'000);  // 1 ms, never released
  stream.synchronize();
  EXPECT_TRUE(blocking.timed_out());
  const BlockReadings r = blocking.readings();
  EXPECT_EQ(r.start.written, 1u);
  EXPECT_EQ(r.release.written, 0u);
  // Released normally: both readings, one SM, counters advancing.
  blocking.block(stream.get());
  blocking.release();
  stream.synchronize();
  EXPECT_FALSE(blocking.timed_out());
  const BlockReadings ok = blocking.readings();
  EXPECT_EQ(ok.start.written, 1u);
  EXPECT_EQ(ok.release.written, 1u);
  EXPECT_GE(ok.release.globaltimer_ns, ok.start.globaltimer_ns);
  EXPECT_GE(ok.release.clock64, ok.start.clock64);
}

}  // namespace
}  // namespace xb
