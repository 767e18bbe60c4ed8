// Pure helpers of the timing loop (bench/core/fixtures_gpu.cpp): hot-mode batch size, cold-mode input
// rotation, the cold-start measure. No CUDA; CPU-tested in tests/cpu/test_sampling.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "bench/core/options.h"

namespace xb {

/// Hot-mode auto batch: enough launches per sample for about this much GPU time, so that the
/// event pair's fixed cost (2.1 to 2.8 us on the H200, results/h200/timing-2026-11-29) is under 1% of the
/// interval.
constexpr std::int64_t kHotBatchTargetNs = 500'000;

/// Hot-mode launches per sample for a call of `single_ns`: ceil(kHotBatchTargetNs / single_ns),
/// clamped to [1, kMaxBatch]. Throws std::invalid_argument for single_ns <= 0.
int auto_batch(double single_ns);

/// Input copies used in turn in cold mode: for a working set under the L2 size, enough copies to
/// span twice the L2 (ceil(2 l2 / working_set)), at most 16; otherwise 1.
int rotation_copies(std::size_t working_set_bytes, std::size_t l2_bytes);

/// Cold mode calls every instance once per sample, after one L2 flush (measure()): no call finds
/// its inputs in the L2, and the event pair's fixed cost (about 2.3 us per sample on the H200,
/// results/h200/core-2026-12-01: the gap from the start event to the first kernel and from the last
/// kernel to the stop event) is spread over the calls. This many calls at least, where memory allows.
constexpr int kColdCallsPerSample = 8;
/// Device memory a cold fixture's instances may take together, bytes (4 GiB).
constexpr std::size_t kColdMemoryBudget = std::size_t{4} << 30;

/// Instances of a cold-mode fixture: max(rotation_copies(working_set_bytes, l2_bytes),
/// kColdCallsPerSample), at most kColdMemoryBudget / instance_bytes, at least 1. With
/// instance_bytes 0 (unknown): rotation_copies alone (1, one call per sample, when the working
/// set is unknown too: a benchmark without device bytes and bytes per call).
int cold_copies(std::size_t working_set_bytes, std::size_t instance_bytes, std::size_t l2_bytes);

/// How far the first samples sit from the rest: median of the first twentieth of the samples
/// (3 to 50 of them) / median of all - 1; 0 for fewer than 6 samples. A fixture sampled without
/// a steady warm-up is flagged cold when its magnitude is above 2% (either sign: an idle H200
/// starts GEMMs at boost clock, 12% faster than once its power cap engages).
double early_slowdown(const std::vector<double>& samples_ns);

}  // namespace xb
