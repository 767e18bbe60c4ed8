// Elementwise add kernels (see add.h).
//
// Design: each thread adds V (vectors_per_thread) 16-byte vectors (8 bf16/fp16 or 4 fp32
// elements each) of a and b, converted to fp32 and rounded once, and stores 16 bytes per vector;
// consecutive threads touch consecutive vectors (coalesced), and all 2V loads are issued before
// the first add. The grid covers the whole tensor (a grid-stride loop covers what exceeds the
// grid limit). The tail (count % elements-per-vector, at most 7 elements) is added by the first
// threads after the loop. Pointers that are not all 16-byte aligned take a scalar kernel.
//
// Which configuration bench uses: `bench tune-add` timed all 36 (V 1/2/4 x 128/256/512 threads x
// 4 cache policies) with CUPTI on an H200 (results/h200/tune-2026-11-29: bf16, fp16, fp32 at
// 1024^2..16384^2, hot, medians of 60 launches; PyTorch's add timed in the same call). From
// 4096^2 up (DRAM-bound) all 36 lie within 3.5% of each other (1.4% from 8192^2), and the fastest
// is PyTorch's median time -1.5%..+0.5% (bf16 16384^2: 367.4 us, 4.38 TB/s, 91% of the 4.8 TB/s
// HBM3e peak): the kernel runs at the memory's bound, and no configuration, cache hint or fetch
// size moves it further. Below (L2-resident, 1.8-12 us) the spread between configurations is
// up to 18%. V=1 with 256 threads and default hints was the standard kernel's best single choice
// (bench's until the lean kernel below): 0.6% over the per-size fastest on average, 3.5% at most
// (fp16 1024^2, 1.85 vs 1.79 us). Earlier single-size
// measurements (bf16 16384^2): a persistent grid of SMs x resident blocks with a grid-stride loop
// reached 4.11 TB/s, a data-sized grid 4.35 TB/s, so the grid is sized to the data.
//
// The lean variant (AddKernelVariant::Lean, tuning-space names ending "/lean"; issue 19): from
// one launcher, PyTorch's vectorized_elementwise_kernel<8> (128 threads, one 16-byte vector per
// thread) stayed 0.3% faster at 16384^2 and 3-4% at 256^2 (bf16, fp16) than add_flat_kernel with
// the same shape (results/h200/speed-2026-12-01, run6), so what remained was in the kernel's
// code, not its launch shape. add_lean_kernel takes out of the per-thread work what the host or
// the compiler can decide: the block size is a template argument and its __launch_bounds__ (as
// PyTorch's C10_LAUNCH_BOUNDS_1(128)), the vector and tail counts come from the host (no
// division in the kernel), the index is 32-bit unsigned, and separate instantiations drop the
// bounds check where every thread of the grid has a vector (vectors % threads == 0: 256^2 and
// 16384^2 at 128 and 256 threads) and the tail where count % elements-per-vector == 0. The
// arithmetic is the standard kernel's (fp32, one rounding), so results stay bit-identical to
// PyTorch's.
//
// Which configuration bench uses (add_launch_config, kAddSizeClasses): the lean kernel, 128
// threads up to 256^2 elements, 256 threads above (capped at 6 blocks per SM above 3072^2: the
// residency paragraph below). Evidence: results/h200/speed-2026-12-01/run7
// (tools/lab/add_vs_torch.py, both kernels launched from one Python loop on one stream, 4
// interleaved rounds, eager and CUDA-graph launches, bf16/fp16/fp32, ratio to PyTorch's per-call
// CUPTI kernel time): at 64^2 and 256^2 v1/t128/default/lean 0.94-0.98 (v1/t256/default, the
// previous single choice, 1.01-1.06; t256/lean 0.96-1.01); at 1024^2 v1/t256/default/lean
// 0.93-1.00 (t128/lean 0.96-1.09: its grid of 1024 blocks of 128 threads loses to 512 of 256); at
// 4096^2 and 16384^2 (DRAM-bound) every configuration lies within 0.5% of the others, t256/lean
// 1.007-1.009 and 1.003 for bf16/fp16, 0.993-0.998 for fp32.
//
// The residency cap (AddLaunchConfig::blocks_per_sm, names ending "/rN"; issue 19): neither the
// launch shape, the load instruction (PyTorch's LDG.E.128 against our LDG.E.128.CONSTANT: the
// plain policy, speed-2026-12-02/run4, changes nothing), the load order nor the output buffer
// explained PyTorch's 0.3-0.9% at bf16/fp16 4096^2 and 16384^2; its kernel runs at 75% occupancy
// (34 registers), ours at 100%. Holding ours to fewer resident blocks per SM with unused dynamic
// shared memory and a 100 KB carveout (add_residency; 156 KB left to L1) gives, at
// 4096^2..16384^2, 0.979-1.002 of PyTorch's time with 10 x 128 threads and 0.979-0.998 with
// 6 x 256 in every dtype, against 1.003-1.009 uncapped (bf16, fp16); 16 x 128 (no cap, the same
// carveout) runs as uncapped, 8 x 128 (50%) 1.03-1.06 (speed-2026-12-02, run5 and run6: 6
// interleaved rounds, eager and graph). An earlier 75% cap (reverted in 28bf624) changed nothing:
// it pinned the carveout at the most shared memory, leaving L1 28 KB, likely too little for the
// loads in flight. Fewer warps in flight per SM, fewer DRAM streams competing for open rows, is
// the likely reason the cap helps; it is measured, not modelled. Where the data fits the L2 the
// cap loses: 2048^2 6 x 256 0.95-1.01 against uncapped 0.95-1.00, 3072^2 bf16/fp16 1.00-1.01
// against 0.98-1.00. So bench's third size class, above 3072^2 elements, is
// v1/t256/default/lean/r6: with it every size from 64^2 to 16384^2 measured 0.95-0.999 of
// PyTorch's in every dtype (run7; 4.41 TB/s at bf16 16384^2).
//
// What this file carries: bench's own add, the size classes' configurations (kAddSizeClasses:
// the lean kernel with default hints at 128 and 256 threads, with its standard V = 1 fallback and
// the scalar kernel for unaligned pointers); launch_add refuses every other configuration. The
// kernels and launchers are templates in add_kernels.cuh; the tuning space's other variants
// (add_tuning_space: V = 2 and 4, the other cache policies, the lean kernel's plain policy), which
// exist for `bench tune-add` and the race with PyTorch's add, are instantiated by the team's
// tools/lab/add_tuning/ (launch_add_tuning; tools/lab/README.md), not here.
//
// Resource use, nvcc 13.0 -O3 -arch=sm_90 -Xptxas -v (the Release build's flags), no stack, no
// spills in any instantiation: V=1 22-30 registers (fp32 22-26, bf16/fp16 29-30); V=2 32;
// V=4 59-62 (at most 1024 resident threads per SM, each with 8 loads in flight);
// add_scalar_kernel 16 (bf16/fp16), 32 (fp32); add_lean_kernel 22 (fp32), 23-28 (bf16), 26-30 (fp16).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "kernels/add.h"
#include "kernels/add_kernels.cuh"
#include "kernels/cuda_check.h"
#include "kernels/launch_grid.h"

namespace xb {
namespace {

// add_residency's target capacity (a supported shared-memory size on sm_90; the measured one).
constexpr int kResidencyCapacityBytes = 100 * 1024;
// Shared memory is allocated to blocks in units of this many bytes (sm_80, sm_90).
constexpr int kSharedAllocationUnit = 128;

// add_launch_config's choice by size class: the first row whose max_count (elements) is at least
// the call's count applies; the evidence is the comment at the top of this file. Rows in ascending
// max_count, the last one kAnyCount (a per-dtype choice would need a table per dtype). The
// static_assert below keeps every row inside the tuning space.
struct AddSizeClass {
  std::int64_t max_count;  ///< elements; the class holds counts up to this, after the row before
  int threads_per_block;
  int vectors_per_thread;
  AddCachePolicy cache;
  AddKernelVariant kernel;
  int blocks_per_sm;  ///< 0 or the block size's lean_residency_cap
};
constexpr std::int64_t kAnyCount = std::numeric_limits<std::int64_t>::max();
constexpr AddSizeClass kAddSizeClasses[] = {
    {256 * 256, 128, 1, AddCachePolicy::Default, AddKernelVariant::Lean, 0},    // up to 256^2: v1/t128/default/lean
    {3072 * 3072, 256, 1, AddCachePolicy::Default, AddKernelVariant::Lean, 0},  // to 3072^2: v1/t256/default/lean
    // above: v1/t256/default/lean/r6
    {kAnyCount, 256, 1, AddCachePolicy::Default, AddKernelVariant::Lean, lean_residency_cap(256)},
};

template <std::size_t N>
constexpr bool valid_size_classes(const AddSizeClass (&table)[N]) {
  for (std::size_t i = 0; i < N; ++i) {
    const AddSizeClass& c = table[i];
    if (!one_of(kThreadChoices, c.threads_per_block) || !one_of(kVectorChoices, c.vectors_per_thread) ||
        !one_of(kPolicyChoices, c.cache) || (i > 0 && c.max_count <= table[i - 1].max_count)) {
      return false;
    }
    if (c.kernel == AddKernelVariant::Lean &&
        (c.vectors_per_thread != 1 || !one_of(kLeanThreadChoices, c.threads_per_block) ||
         !one_of(kLeanPolicyChoices, c.cache))) {
      return false;
    }
    if (c.blocks_per_sm != 0 &&
        (c.kernel != AddKernelVariant::Lean || c.blocks_per_sm != lean_residency_cap(c.threads_per_block))) {
      return false;
    }
  }
  return table[N - 1].max_count == kAnyCount;
}
static_assert(valid_size_classes(kAddSizeClasses),
              "kAddSizeClasses: rows in ascending max_count, the last kAnyCount, each a tuning-space choice");

AddLaunchConfig config_of(const AddSizeClass& row, int max_blocks) {
  AddLaunchConfig config;
  config.max_blocks = max_blocks;
  config.threads_per_block = row.threads_per_block;
  config.vectors_per_thread = row.vectors_per_thread;
  config.cache = row.cache;
  config.kernel = row.kernel;
  config.blocks_per_sm = row.blocks_per_sm;
  return config;
}

// Whether `config` is a size class's (any max_blocks): what this file instantiates.
bool size_class_config(const AddLaunchConfig& config) {
  return std::any_of(std::begin(kAddSizeClasses), std::end(kAddSizeClasses), [&](const AddSizeClass& c) {
    return c.threads_per_block == config.threads_per_block && c.vectors_per_thread == config.vectors_per_thread &&
           c.cache == config.cache && c.kernel == config.kernel && c.blocks_per_sm == config.blocks_per_sm;
  });
}

// add_residency's arithmetic for one device: the SM's maximum shared memory and what the driver
// reserves per block (cudaDevAttrReservedSharedMemoryPerBlock, 1 KB on sm_90).
// A block may ask for at most max_dynamic_per_block bytes without opting in
// (cudaDevAttrMaxSharedMemoryPerBlock, 48 KB), which rules out caps of 1 and 2 blocks per SM.
AddResidency residency_for(int blocks_per_sm, int threads_per_block, int max_shared_per_sm, int reserved_per_block,
                           int max_threads_per_sm, int max_dynamic_per_block) {
  const int capacity = std::min(kResidencyCapacityBytes, max_shared_per_sm);
  // Per block: the capacity's N-th share, in allocation units; one more block must not fit.
  const int per_block = capacity / std::max(blocks_per_sm, 1) / kSharedAllocationUnit * kSharedAllocationUnit;
  if (blocks_per_sm < 1 || threads_per_block < 1 ||
      static_cast<std::int64_t>(blocks_per_sm) * threads_per_block > max_threads_per_sm ||
      per_block < reserved_per_block || per_block - reserved_per_block > max_dynamic_per_block ||
      (blocks_per_sm + 1) * per_block <= capacity) {
    throw std::invalid_argument("add_residency: cannot cap residency at " + std::to_string(blocks_per_sm) +
                                " blocks of " + std::to_string(threads_per_block) + " threads per SM (" +
                                std::to_string(max_threads_per_sm) + " threads, " + std::to_string(capacity) +
                                " bytes of shared memory, at most " + std::to_string(max_dynamic_per_block) +
                                " per block)");
  }
  AddResidency r;
  r.dynamic_smem_bytes = static_cast<std::size_t>(per_block - reserved_per_block);
  // Rounded down: the driver rounds the hint up to the next capacity the SM supports.
  r.carveout_percent = static_cast<int>(static_cast<std::int64_t>(capacity) * 100 / max_shared_per_sm);
  r.capacity_bytes = capacity;
  return r;
}

}  // namespace

const char* to_string(AddCachePolicy policy) {
  switch (policy) {
    case AddCachePolicy::Default:
      return "default";
    case AddCachePolicy::Streaming:
      return "streaming";
    case AddCachePolicy::Prefetch256:
      return "prefetch256";
    case AddCachePolicy::Prefetch256Streaming:
      return "prefetch256-streaming";
    case AddCachePolicy::Plain:
      return "plain";
  }
  return "invalid";
}

const char* to_string(AddKernelVariant variant) {
  switch (variant) {
    case AddKernelVariant::Standard:
      return "standard";
    case AddKernelVariant::Lean:
      return "lean";
  }
  return "invalid";
}

std::string to_string(const AddLaunchConfig& config) {
  return "v" + std::to_string(config.vectors_per_thread) + "/t" + std::to_string(config.threads_per_block) + "/" +
         to_string(config.cache) + (config.kernel == AddKernelVariant::Lean ? "/lean" : "") +
         (config.blocks_per_sm > 0 ? "/r" + std::to_string(config.blocks_per_sm) : "");
}

AddResidency add_residency(int blocks_per_sm, int threads_per_block) {
  static std::mutex mutex;
  static std::map<std::tuple<int, int, int>, AddResidency> cache;
  int device = 0;
  XB_CUDA(cudaGetDevice(&device));
  const std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_tuple(device, blocks_per_sm, threads_per_block);
  if (const auto it = cache.find(key); it != cache.end()) return it->second;
  int max_shared = 0, reserved = 0, max_threads = 0, max_per_block = 0;
  XB_CUDA(cudaDeviceGetAttribute(&max_shared, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
  XB_CUDA(cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, device));
  XB_CUDA(cudaDeviceGetAttribute(&max_threads, cudaDevAttrMaxThreadsPerMultiProcessor, device));
  XB_CUDA(cudaDeviceGetAttribute(&max_per_block, cudaDevAttrMaxSharedMemoryPerBlock, device));
  const AddResidency r =
      residency_for(blocks_per_sm, threads_per_block, max_shared, reserved, max_threads, max_per_block);
  cache.emplace(key, r);
  return r;
}

namespace {

// add_resident_blocks for one instantiation: the occupancy API reads the function's carveout
// attribute (a launch attribute it cannot see), so the hint is set for the query and restored.
template <typename T, int B>
int resident_blocks(int blocks_per_sm) {
  const auto kernel = add_lean_kernel<T, B, AddCachePolicy::Default, true, false>;
  int blocks = 0;
  if (blocks_per_sm <= 0) {
    XB_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, B, 0));
    return blocks;
  }
  const AddResidency r = add_residency(blocks_per_sm, B);
  cudaFuncAttributes before = {};
  XB_CUDA(cudaFuncGetAttributes(&before, kernel));
  XB_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, r.carveout_percent));
  const cudaError_t status = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, B, r.dynamic_smem_bytes);
  XB_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, before.preferredShmemCarveout));
  XB_CUDA(status);
  return blocks;
}

template <typename T>
int resident_blocks_typed(const AddLaunchConfig& config) {
  if (config.threads_per_block == 128) return resident_blocks<T, 128>(config.blocks_per_sm);
  return resident_blocks<T, 256>(config.blocks_per_sm);
}

}  // namespace

int add_resident_blocks(DType dtype, const AddLaunchConfig& config) {
  if (config.kernel != AddKernelVariant::Lean || !one_of(kLeanThreadChoices, config.threads_per_block)) {
    throw std::invalid_argument("add_resident_blocks: " + to_string(config) + " is not a lean configuration");
  }
  switch (dtype) {
    case DType::BF16:
      return resident_blocks_typed<__nv_bfloat16>(config);
    case DType::FP16:
      return resident_blocks_typed<__half>(config);
    case DType::FP32:
      return resident_blocks_typed<float>(config);
  }
  throw std::invalid_argument("add_resident_blocks: invalid dtype");
}

AddLaunchConfig add_launch_config(DType dtype, std::int64_t count) {
  if (count < 0) throw std::invalid_argument("add_launch_config: count " + std::to_string(count) + " < 0");
  if (dtype != DType::BF16 && dtype != DType::FP16 && dtype != DType::FP32) {
    throw std::invalid_argument("add_launch_config: invalid dtype");
  }
  // The last row holds every count (kAnyCount, checked by the static_assert), so a row is found.
  const AddSizeClass* row = std::find_if(std::begin(kAddSizeClasses), std::end(kAddSizeClasses),
                                         [count](const AddSizeClass& c) { return count <= c.max_count; });
  return config_of(*row, device_max_grid_x("add_launch_config"));
}

std::vector<AddLaunchConfig> add_size_class_configs() {
  const int max_blocks = device_max_grid_x("add_size_class_configs");
  std::vector<AddLaunchConfig> configs;
  for (const AddSizeClass& row : kAddSizeClasses) configs.push_back(config_of(row, max_blocks));
  return configs;
}

void launch_add(DType dtype, const void* a, const void* b, void* out, std::int64_t count, cudaStream_t stream,
                const AddLaunchConfig& config) {
  check_add_config("launch_add", count, config);
  if (!size_class_config(config)) {
    throw std::invalid_argument("launch_add: " + to_string(config) +
                                " is not one of bench's size classes (add_size_class_configs); the tuning space's "
                                "other configurations run through the lab's launch_add_tuning (tools/lab/add_tuning)");
  }
  launch_add_checked<AddInstances::SizeClasses>(dtype, a, b, out, count, stream, config);
}

}  // namespace xb
