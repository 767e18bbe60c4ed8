// Launches that synchronize with the device (issue 30) on a real GPU: launch_synchronizes tells a
// launch that waits for the stream (cudaStreamSynchronize, cudaFree) from a plain kernel launch
// behind the real blocking kernel, and measure() samples a detected or declared synchronizing
// launch without the blocking kernel, to the same per-call time; one that synchronizes now and
// then is caught during sampling; a declared one that does not is timed behind it.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "bench/core/measure.h"
#include "gpu_test.h"
#include "kernels/blocking.h"
#include "kernels/cuda_check.h"
#include "kernels/cuda_raii.h"
#include "kernels/spin_delay.h"

namespace xb {
namespace {

using SyncGpu = testing::GpuTest;

constexpr std::int64_t kKernelNs = 20'000;  // a 20 us spin kernel per call

/// Batches of 4 calls, 20 recorded steps, 50 samples and 0.2 s at least, 2 s at most.
MeasureConfig short_config() { return testing::short_measure_config(4, 50, 0.2); }

TEST_F(SyncGpu, DetectsALaunchThatWaitsForTheStreamAndNotAPlainKernelLaunch) {
  Stream stream;
  BlockingKernel blocking;
  warm_up_spin_delay(stream.get());
  const auto dev = make_cuda_sample_device(stream.get(), &blocking, nullptr);
  const auto plain = [&] { enqueue_spin_delay(stream.get(), kKernelNs); };
  const auto waits = [&] {
    enqueue_spin_delay(stream.get(), kKernelNs);
    XB_CUDA(cudaStreamSynchronize(stream.get()));
  };
  const auto frees = [&] {
    void* p = nullptr;
    XB_CUDA(cudaMalloc(&p, 1 << 20));
    enqueue_spin_delay(stream.get(), kKernelNs);
    XB_CUDA(cudaFree(p));  // waits for the device
  };
  EXPECT_FALSE(launch_synchronizes(plain, *dev, 0.05));
  EXPECT_TRUE(launch_synchronizes(waits, *dev, 0.05));
  EXPECT_TRUE(launch_synchronizes(frees, *dev, 0.05));
  EXPECT_FALSE(blocking.timed_out());
}

TEST_F(SyncGpu, DetectedAndDeclaredSynchronizingLaunchesAreSampledAlikeWithoutTheBlockingKernel) {
  Stream stream;
  BlockingKernel blocking;
  warm_up_spin_delay(stream.get());
  const auto dev = make_cuda_sample_device(stream.get(), &blocking, nullptr);
  const auto waits = [&] {
    enqueue_spin_delay(stream.get(), kKernelNs);
    XB_CUDA(cudaStreamSynchronize(stream.get()));
  };
  Profiler prof(make_null_source());
  MeasureConfig cfg = short_config();
  const Measurement detected = measure({waits}, prof, *dev, "sync", "xb::sync", cfg);
  EXPECT_EQ(detected.timing.sync, "detected");
  EXPECT_FALSE(detected.timing.blocking);
  cfg.sync = true;
  const Measurement declared = measure({waits}, prof, *dev, "sync", "xb::sync", cfg);
  EXPECT_EQ(declared.timing.sync, "declared");
  EXPECT_FALSE(declared.timing.blocking);
  // Each call: the 20 us kernel plus the host's launch and synchronization (a few us).
  for (const Measurement* m : {&detected, &declared}) {
    EXPECT_GE(m->stats.median, 0.99 * kKernelNs);
    EXPECT_LT(m->stats.median, kKernelNs + 50'000.0);
  }
  EXPECT_LT(std::fabs(declared.stats.median / detected.stats.median - 1), 0.10)
      << "detected " << detected.stats.median << " ns, declared " << declared.stats.median << " ns per call";
}

TEST_F(SyncGpu, ALaunchThatSynchronizesNowAndThenIsCaughtAndADeclarationThatDoesNotHoldIsTimedHeld) {
  Stream stream;
  BlockingKernel blocking;
  warm_up_spin_delay(stream.get());
  const auto dev = make_cuda_sample_device(stream.get(), &blocking, nullptr);
  Profiler prof(make_null_source());
  MeasureConfig cfg = short_config();
  // Every 40th call waits for the stream (a cache that grows): caught during sampling, no failure.
  int calls = 0;
  const auto now_and_then = [&] {
    enqueue_spin_delay(stream.get(), kKernelNs);
    if (++calls % 40 == 0) XB_CUDA(cudaStreamSynchronize(stream.get()));
  };
  const Measurement late = measure({now_and_then}, prof, *dev, "late", "xb::late", cfg);
  EXPECT_EQ(late.timing.sync, "detected");
  EXPECT_FALSE(late.timing.blocking);
  EXPECT_GE(late.timing.sync_found_after, 4);
  EXPECT_GE(late.timing.samples_ns.size(), 50u);
  EXPECT_FALSE(blocking.timed_out());
  // A plain launch declared .sync(): checked, found not to synchronize, timed behind the blocking
  // kernel, to the undeclared figure.
  const auto plain = [&] { enqueue_spin_delay(stream.get(), kKernelNs); };
  cfg.sync = false;
  const Measurement undeclared = measure({plain}, prof, *dev, "plain", "xb::plain", cfg);
  cfg.sync = true;
  const Measurement declared = measure({plain}, prof, *dev, "plain", "xb::plain", cfg);
  EXPECT_TRUE(declared.timing.sync.empty());
  EXPECT_TRUE(declared.timing.blocking);
  EXPECT_TRUE(declared.timing.sync_declared);
  EXPECT_LT(std::fabs(declared.stats.median / undeclared.stats.median - 1), 0.01)
      << "undeclared " << undeclared.stats.median << " ns, declared " << declared.stats.median << " ns per call";
}

}  // namespace
}  // namespace xb
