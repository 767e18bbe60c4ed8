// The add kernel checked bit for bit over spans of memory (tests/gpu/test_kernels.cpp: bench's
// size classes through launch_add; tests/gpu/lab/test_add_tuning.cpp: the tuning space through
// the lab's launch_add_tuning). Needs a CUDA device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "kernels/add.h"
#include "kernels/workload.h"

namespace xb::testing {

/// `count` elements of `dtype` at byte offsets into three buffers, added by one launch.
struct AddSpan {
  DType dtype;
  std::int64_t count;
  std::size_t a_offset;  // bytes
  std::size_t b_offset;
  std::size_t out_offset;
  int max_blocks = 0;  // > 0: cap the grid, so that the grid-stride loops make several passes
};

/// Spans up to this many elements run under every configuration a test checks; longer ones under
/// the configuration bench picks for them (add_launch_config).
constexpr std::int64_t kAddSpanEveryConfigMax = 200000;

/// The spans the add tests run, per dtype: aligned counts with tails of 0..7 elements (one
/// element up to 12000007 > 3072^2: bench's residency-capped class), grids capped at 3 blocks
/// (grid-stride passes), each pointer unaligned in turn and all three (the scalar path), 16-byte
/// but not 256-byte aligned pointers.
std::vector<AddSpan> add_spans();

/// gtest's name of a span ("bf16_count4097_off16_32_48", "_grid3" with a capped grid).
std::string add_span_name(const ::testing::TestParamInfo<AddSpan>& span_info);

/// launch_add's signature: bench's launch_add or the lab's launch_add_tuning.
using AddLauncher = void (*)(DType, const void*, const void*, void*, std::int64_t, cudaStream_t,
                             const AddLaunchConfig&);

/// Runs `config` (its max_blocks replaced by the span's, when > 0) through `launch` over the span
/// on random inputs (fixed seeds) and checks every element bit-exact against the fp32 reference,
/// and that the 64 elements after the span keep their NaN poison (gtest failures, not exceptions).
void check_add_span(const AddSpan& s, AddLaunchConfig config, AddLauncher launch);

}  // namespace xb::testing
