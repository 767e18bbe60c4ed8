// The timing loop's pure helpers: hot-mode batch sizing, cold-mode rotation, the cold-start measure.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "bench/core/sampling.h"

namespace xb {
namespace {

TEST(Sampling, AutoBatchFillsHalfAMillisecondWithinTheQueueLimit) {
  EXPECT_EQ(auto_batch(5000), 100);       // 500 us / 5 us
  EXPECT_EQ(auto_batch(196000), 3);       // ceil(500 / 196): a 4096 bf16 GEMM on the H200
  EXPECT_EQ(auto_batch(1.6e6), 1);        // longer than the target: one launch
  EXPECT_EQ(auto_batch(100), kMaxBatch);  // capped: the launch queue behind the blocking kernel
  EXPECT_THROW(auto_batch(0), std::invalid_argument);
  EXPECT_THROW(auto_batch(-1), std::invalid_argument);
}

TEST(Sampling, RotationSpansTwiceTheL2ForSmallWorkingSets) {
  const std::size_t l2 = 50u << 20;
  EXPECT_EQ(rotation_copies(24576, l2), 16);    // capped
  EXPECT_EQ(rotation_copies(12582912, l2), 9);  // ceil(100 MiB / 12 MiB)
  EXPECT_EQ(rotation_copies(l2, l2), 1);        // not under the L2: no rotation
  EXPECT_EQ(rotation_copies(400u << 20, l2), 1);
  EXPECT_EQ(rotation_copies(0, l2), 1);
}

TEST(Sampling, ColdCopiesSpreadTheEventCostWithinTheMemoryBudget) {
  const std::size_t l2 = 50u << 20;
  EXPECT_EQ(cold_copies(24576, 24576, l2), 16);                             // rotation's 16 > 8 calls
  EXPECT_EQ(cold_copies(100u << 20, 100u << 20, l2), kColdCallsPerSample);  // add 4096^2 bf16: 8 x 100 MiB
  EXPECT_EQ(cold_copies(1536u << 20, 1536u << 20, l2), 2);                  // 4 GiB / 1.5 GiB
  EXPECT_EQ(cold_copies(8u << 30, 8u << 30, l2), 1);                        // over the budget alone: still 1
  EXPECT_EQ(cold_copies(24576, 0, l2), 16);                                 // memory unknown: rotation alone
  EXPECT_EQ(cold_copies(0, 0, l2), 1);                                      // nothing known: one call per sample
}

TEST(Sampling, EarlySlowdownSeesBothSigns) {
  std::vector<double> steady(200, 100.0);
  EXPECT_DOUBLE_EQ(early_slowdown(steady), 0.0);
  std::vector<double> boost = steady;  // first 10 samples 12% faster (boost clock before the power cap)
  for (int i = 0; i < 10; ++i) boost[i] = 88.0;
  EXPECT_NEAR(early_slowdown(boost), -0.12, 1e-12);
  std::vector<double> lazy = steady;  // first samples slower (lazy loading, cold caches)
  for (int i = 0; i < 10; ++i) lazy[i] = 150.0;
  EXPECT_NEAR(early_slowdown(lazy), 0.5, 1e-12);
  EXPECT_DOUBLE_EQ(early_slowdown({1, 2, 3}), 0.0);  // too few samples to say
}

}  // namespace
}  // namespace xb
