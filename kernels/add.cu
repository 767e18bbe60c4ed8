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
// What a build carries: bench's own add is the size classes' configurations (kAddSizeClasses:
// the lean kernel with default hints at 128 and 256 threads, with its standard V = 1 fallback and
// the scalar kernel for unaligned pointers); launch_add refuses every other configuration. The
// tuning space's variants (add_tuning_space: V = 2 and 4, the other cache policies, the lean
// kernel's plain policy), which exist for `bench tune-add` and the race with PyTorch's add
// (tools/lab/), are instantiated only with -DXB_LAB=ON (XB_LAB defined).
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
#include "kernels/cuda_check.h"
#include "kernels/launch_grid.h"

namespace xb {
namespace {

constexpr int kAddMaxThreadsPerBlock = 512;
constexpr int kVectorBytes = 16;

// fp32 arithmetic for every dtype, one rounding of the result (as PyTorch's opmath_t).
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_float(float x) { return x; }

template <typename T>
__device__ __forceinline__ T from_float(float x);
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}
template <>
__device__ __forceinline__ __half from_float<__half>(float x) {
  return __float2half_rn(x);
}
template <>
__device__ __forceinline__ float from_float<float>(float x) {
  return x;
}

// Adds two 16-byte vectors of T lane by lane.
__device__ __forceinline__ uint4 add_vector(uint4 a, uint4 b, __nv_bfloat16) {
  uint4 out;
  const auto* pa = reinterpret_cast<const __nv_bfloat162*>(&a);
  const auto* pb = reinterpret_cast<const __nv_bfloat162*>(&b);
  auto* po = reinterpret_cast<__nv_bfloat162*>(&out);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 fa = __bfloat1622float2(pa[i]);
    const float2 fb = __bfloat1622float2(pb[i]);
    po[i] = __float22bfloat162_rn(make_float2(fa.x + fb.x, fa.y + fb.y));
  }
  return out;
}

__device__ __forceinline__ uint4 add_vector(uint4 a, uint4 b, __half) {
  uint4 out;
  const auto* pa = reinterpret_cast<const __half2*>(&a);
  const auto* pb = reinterpret_cast<const __half2*>(&b);
  auto* po = reinterpret_cast<__half2*>(&out);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 fa = __half22float2(pa[i]);
    const float2 fb = __half22float2(pb[i]);
    po[i] = __float22half2_rn(make_float2(fa.x + fb.x, fa.y + fb.y));
  }
  return out;
}

__device__ __forceinline__ uint4 add_vector(uint4 a, uint4 b, float) {
  uint4 out;
  out.x = __float_as_uint(__uint_as_float(a.x) + __uint_as_float(b.x));
  out.y = __float_as_uint(__uint_as_float(a.y) + __uint_as_float(b.y));
  out.z = __float_as_uint(__uint_as_float(a.z) + __uint_as_float(b.z));
  out.w = __float_as_uint(__uint_as_float(a.w) + __uint_as_float(b.w));
  return out;
}

// 16-byte load and store with the cache hints of AddCachePolicy (PTX ISA, "ld", "st";
// .L2::256B needs sm_80+: older architectures get the plain read-only load instead).
template <AddCachePolicy P>
__device__ __forceinline__ uint4 load16(const uint4* p) {
  if constexpr (P == AddCachePolicy::Default) {
    return __ldg(p);
  } else if constexpr (P == AddCachePolicy::Plain) {
    // Written out in PTX: from `*p` through a const __restrict__ pointer NVVM emits the read-only
    // ld.global.nc as for __ldg (seen in this file's PTX), so "plain" loaded what "default" did;
    // PyTorch's add loads with a plain LDG.E.128 (speed-2026-12-01/run8). tests/cpu/check_add_ptx.py
    // keeps each policy's loads what its comment in add.h says.
    uint4 v;
    asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
  } else if constexpr (P == AddCachePolicy::Streaming) {
    return __ldcs(p);
  } else {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
    return __ldg(p);  // no .L2::256B before sm_80: the plain read-only load
#else
    uint4 v;
    if constexpr (P == AddCachePolicy::Prefetch256) {
      asm volatile("ld.global.nc.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                   : "l"(p));
    } else {
      asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                   : "l"(p));
    }
    return v;
#endif
  }
}

template <AddCachePolicy P>
__device__ __forceinline__ void store16(uint4* p, uint4 v) {
  if constexpr (P == AddCachePolicy::Streaming || P == AddCachePolicy::Prefetch256Streaming) {
    __stcs(p, v);
  } else {
    *p = v;
  }
}

// Requires a, b, out 16-byte aligned. Block b's chunk is the V * blockDim.x vectors from
// b * V * blockDim.x (grid-stride over chunks); thread t loads vectors t, t + blockDim.x, ... of
// its chunk, all of a and b before adding any (V loads of each in flight), then stores. Then the
// remaining count % kPerVector elements, one per thread, by the lowest thread indices.
template <typename T, int V, AddCachePolicy P>
__global__ void __launch_bounds__(kAddMaxThreadsPerBlock)
    add_vectorized_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out, std::int64_t count) {
  constexpr int kPerVector = kVectorBytes / static_cast<int>(sizeof(T));
  const std::int64_t vectors = count / kPerVector;
  const std::int64_t chunk = static_cast<std::int64_t>(blockDim.x) * V;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * chunk;
  const auto* a_vec = reinterpret_cast<const uint4*>(a);
  const auto* b_vec = reinterpret_cast<const uint4*>(b);
  auto* out_vec = reinterpret_cast<uint4*>(out);
  for (std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * chunk; base < vectors; base += stride) {
    const std::int64_t first = base + threadIdx.x;
    uint4 va[V];
    uint4 vb[V];
    if (base + chunk <= vectors) {  // whole chunk: no bounds checks
#pragma unroll
      for (int j = 0; j < V; ++j) {
        va[j] = load16<P>(a_vec + first + j * blockDim.x);
        vb[j] = load16<P>(b_vec + first + j * blockDim.x);
      }
#pragma unroll
      for (int j = 0; j < V; ++j) store16<P>(out_vec + first + j * blockDim.x, add_vector(va[j], vb[j], T{}));
    } else {
#pragma unroll
      for (int j = 0; j < V; ++j) {
        if (first + j * blockDim.x < vectors) {
          va[j] = load16<P>(a_vec + first + j * blockDim.x);
          vb[j] = load16<P>(b_vec + first + j * blockDim.x);
        }
      }
#pragma unroll
      for (int j = 0; j < V; ++j) {
        if (first + j * blockDim.x < vectors) {
          store16<P>(out_vec + first + j * blockDim.x, add_vector(va[j], vb[j], T{}));
        }
      }
    }
  }
  const std::int64_t tail = vectors * kPerVector + static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (tail < count) {
    out[tail] = from_float<T>(to_float(a[tail]) + to_float(b[tail]));
  }
}

// V = 1 when the vectors fit 32-bit indices (every size bench takes): one vector per thread, no
// grid-stride loop and 32-bit index arithmetic, so that a tiny launch (4096 elements: 512
// vectors) runs only the load, add and store; the tail as in add_vectorized_kernel.
template <typename T, AddCachePolicy P>
__global__ void __launch_bounds__(kAddMaxThreadsPerBlock)
    add_flat_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out, int count) {
  constexpr int kPerVector = kVectorBytes / static_cast<int>(sizeof(T));
  const int vectors = count / kPerVector;
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < vectors) {
    const uint4 va = load16<P>(reinterpret_cast<const uint4*>(a) + i);
    const uint4 vb = load16<P>(reinterpret_cast<const uint4*>(b) + i);
    store16<P>(reinterpret_cast<uint4*>(out) + i, add_vector(va, vb, T{}));
  }
  if (i < count - vectors * kPerVector) {  // the tail: count % kPerVector elements
    const int t = vectors * kPerVector + i;
    out[t] = from_float<T>(to_float(a[t]) + to_float(b[t]));
  }
}

// AddKernelVariant::Lean (the comment at the top of this file): one vector per thread, B threads
// per block, thread i of the grid adds vector i. `vectors` = count / kPerVector and `tail` =
// count % kPerVector come from the host. Full: the grid has exactly `vectors` threads (no bounds
// check); Tail: tail > 0 (the lowest `tail` threads add one element each after the vectors).
template <typename T, int B, AddCachePolicy P, bool Full, bool Tail>
__global__ void __launch_bounds__(B) add_lean_kernel(const T* __restrict__ a, const T* __restrict__ b,
                                                     T* __restrict__ out, unsigned int vectors, unsigned int tail) {
  const unsigned int i = blockIdx.x * static_cast<unsigned int>(B) + threadIdx.x;
  if (Full || i < vectors) {
    const uint4 va = load16<P>(reinterpret_cast<const uint4*>(a) + i);
    const uint4 vb = load16<P>(reinterpret_cast<const uint4*>(b) + i);
    store16<P>(reinterpret_cast<uint4*>(out) + i, add_vector(va, vb, T{}));
  }
  if constexpr (Tail) {
    if (i < tail) {
      constexpr unsigned int kPerVector = kVectorBytes / sizeof(T);
      const unsigned int t = vectors * kPerVector + i;
      out[t] = from_float<T>(to_float(a[t]) + to_float(b[t]));
    }
  }
}

// Any alignment: one element per thread per step.
template <typename T>
__global__ void __launch_bounds__(kAddMaxThreadsPerBlock)
    add_scalar_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out, std::int64_t count) {
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = first; i < count; i += stride) {
    out[i] = from_float<T>(to_float(a[i]) + to_float(b[i]));
  }
}

template <typename T, int V, AddCachePolicy P>
void launch_vectorized(const T* a, const T* b, T* out, std::int64_t count, cudaStream_t stream,
                       const AddLaunchConfig& config) {
  constexpr std::int64_t kPerVector = kVectorBytes / sizeof(T);
  // The tail needs count % kPerVector (< 8) threads, which block 0 always has.
  const std::int64_t chunks = (count / kPerVector + V - 1) / V;
  const dim3 grid(grid_for(chunks, config.threads_per_block, config.max_blocks));
  if constexpr (V == 1) {
    // Flat when one pass covers every vector with 32-bit indices.
    const std::int64_t threads = static_cast<std::int64_t>(grid.x) * config.threads_per_block;
    if (count <= std::numeric_limits<int>::max() - kPerVector && threads >= chunks) {
      add_flat_kernel<T, P><<<grid, dim3(static_cast<unsigned int>(config.threads_per_block)), 0, stream>>>(
          a, b, out, static_cast<int>(count));
      return;
    }
  }
  add_vectorized_kernel<T, V, P>
      <<<grid, dim3(static_cast<unsigned int>(config.threads_per_block)), 0, stream>>>(a, b, out, count);
}

template <typename T, int V>
void dispatch_policy(const T* a, const T* b, T* out, std::int64_t count, cudaStream_t stream,
                     const AddLaunchConfig& config) {
  switch (config.cache) {
    case AddCachePolicy::Default:
      return launch_vectorized<T, V, AddCachePolicy::Default>(a, b, out, count, stream, config);
#ifdef XB_LAB  // the tuning space's other policies (the top of this file)
    case AddCachePolicy::Streaming:
      return launch_vectorized<T, V, AddCachePolicy::Streaming>(a, b, out, count, stream, config);
    case AddCachePolicy::Prefetch256:
      return launch_vectorized<T, V, AddCachePolicy::Prefetch256>(a, b, out, count, stream, config);
    case AddCachePolicy::Prefetch256Streaming:
      return launch_vectorized<T, V, AddCachePolicy::Prefetch256Streaming>(a, b, out, count, stream, config);
    case AddCachePolicy::Plain:
      return launch_vectorized<T, V, AddCachePolicy::Plain>(a, b, out, count, stream, config);
#endif
    default:
      break;
  }
  throw std::invalid_argument("launch_add: invalid cache policy");
}

// One lean instantiation. `residency`: launch_add's add_residency request for a capped
// configuration (capacity_bytes > 0), its dynamic shared memory and carveout hint passed through
// cudaLaunchKernelEx so that the hint is this launch's alone (a launch attribute takes precedence
// over the function's, which other configurations' launches keep); a default AddResidency: no cap.
template <typename... Params, typename... Args>
void launch_lean_instance(void (*kernel)(Params...), dim3 grid, dim3 block, const AddResidency& residency,
                          cudaStream_t stream, Args... args) {
  if (residency.capacity_bytes == 0) {
    kernel<<<grid, block, 0, stream>>>(args...);
    return;
  }
  cudaLaunchAttribute attribute = {};
  attribute.id = cudaLaunchAttributePreferredSharedMemoryCarveout;
  attribute.val.sharedMemCarveout = static_cast<unsigned int>(residency.carveout_percent);
  cudaLaunchConfig_t launch = {};
  launch.gridDim = grid;
  launch.blockDim = block;
  launch.dynamicSmemBytes = residency.dynamic_smem_bytes;
  launch.stream = stream;
  launch.attrs = &attribute;
  launch.numAttrs = 1;
  XB_CUDA(cudaLaunchKernelEx(&launch, kernel, args...));
}

template <typename T, int B, AddCachePolicy P>
void launch_lean_shape(const T* a, const T* b, T* out, unsigned int vectors, unsigned int tail, unsigned int blocks,
                       const AddResidency& r, cudaStream_t stream) {
  const bool full = vectors > 0 && vectors % static_cast<unsigned int>(B) == 0;
  const dim3 grid(blocks), block(static_cast<unsigned int>(B));
  if (full) {
    if (tail > 0) {
      return launch_lean_instance(add_lean_kernel<T, B, P, true, true>, grid, block, r, stream, a, b, out, vectors,
                                  tail);
    }
    return launch_lean_instance(add_lean_kernel<T, B, P, true, false>, grid, block, r, stream, a, b, out, vectors,
                                tail);
  }
  if (tail > 0) {
    return launch_lean_instance(add_lean_kernel<T, B, P, false, true>, grid, block, r, stream, a, b, out, vectors,
                                tail);
  }
  launch_lean_instance(add_lean_kernel<T, B, P, false, false>, grid, block, r, stream, a, b, out, vectors, tail);
}

template <typename T, AddCachePolicy P>
void launch_lean_policy(const T* a, const T* b, T* out, unsigned int vectors, unsigned int tail, unsigned int blocks,
                        cudaStream_t stream, int threads_per_block, const AddResidency& r) {
  if (threads_per_block == 128) return launch_lean_shape<T, 128, P>(a, b, out, vectors, tail, blocks, r, stream);
  return launch_lean_shape<T, 256, P>(a, b, out, vectors, tail, blocks, r, stream);
}

// The lean kernel when one pass of 32-bit indices covers `count` within max_blocks; otherwise the
// standard V = 1 path. launch_add has checked the configuration (128/256 threads, default/plain)
// and made its residency request (`residency`, launch_lean_instance).
template <typename T>
void launch_lean(const T* a, const T* b, T* out, std::int64_t count, cudaStream_t stream, const AddLaunchConfig& config,
                 const AddResidency& residency) {
  constexpr std::int64_t kPerVector = kVectorBytes / sizeof(T);
  const std::int64_t vectors = count / kPerVector;
  const std::int64_t threads = config.threads_per_block;
  const std::int64_t blocks = std::max<std::int64_t>(1, (vectors + threads - 1) / threads);  // >= 1 for the tail
  if (count > std::numeric_limits<int>::max() - kPerVector || blocks > config.max_blocks) {
    return dispatch_policy<T, 1>(a, b, out, count, stream, config);
  }
  const auto v = static_cast<unsigned int>(vectors);
  const auto tail = static_cast<unsigned int>(count % kPerVector);
  const auto g = static_cast<unsigned int>(blocks);
#ifdef XB_LAB  // the lean kernel's plain policy: the tuning space's (the top of this file)
  if (config.cache == AddCachePolicy::Plain) {
    return launch_lean_policy<T, AddCachePolicy::Plain>(a, b, out, v, tail, g, stream, config.threads_per_block,
                                                        residency);
  }
#endif
  launch_lean_policy<T, AddCachePolicy::Default>(a, b, out, v, tail, g, stream, config.threads_per_block, residency);
}

template <typename T>
void launch_typed(const void* a, const void* b, void* out, std::int64_t count, cudaStream_t stream,
                  const AddLaunchConfig& config, const AddResidency& residency) {
  const auto* ta = static_cast<const T*>(a);
  const auto* tb = static_cast<const T*>(b);
  auto* tout = static_cast<T*>(out);
  if (aligned16(a) && aligned16(b) && aligned16(out)) {
    if (config.kernel == AddKernelVariant::Lean) {
      launch_lean<T>(ta, tb, tout, count, stream, config, residency);
      XB_CUDA_LAST();
      return;
    }
    switch (config.vectors_per_thread) {
      case 1:
        dispatch_policy<T, 1>(ta, tb, tout, count, stream, config);
        break;
#ifdef XB_LAB  // V = 2 and 4: the tuning space's (the top of this file)
      case 2:
        dispatch_policy<T, 2>(ta, tb, tout, count, stream, config);
        break;
      case 4:
        dispatch_policy<T, 4>(ta, tb, tout, count, stream, config);
        break;
#endif
      default:
        throw std::invalid_argument("launch_add: vectors_per_thread must be 1, 2 or 4");
    }
  } else {
    const dim3 grid(grid_for(count, config.threads_per_block, config.max_blocks));
    add_scalar_kernel<T>
        <<<grid, dim3(static_cast<unsigned int>(config.threads_per_block)), 0, stream>>>(ta, tb, tout, count);
  }
  XB_CUDA_LAST();
}

constexpr int kThreadChoices[] = {32, 64, 128, 256, 512};
constexpr int kVectorChoices[] = {1, 2, 4};
constexpr AddCachePolicy kPolicyChoices[] = {AddCachePolicy::Default, AddCachePolicy::Streaming,
                                             AddCachePolicy::Prefetch256, AddCachePolicy::Prefetch256Streaming,
                                             AddCachePolicy::Plain};

// The lean kernel's instantiations (launch_lean_policy, launch_lean_shape).
constexpr int kLeanThreadChoices[] = {128, 256};
constexpr AddCachePolicy kLeanPolicyChoices[] = {AddCachePolicy::Default, AddCachePolicy::Plain};
// The tuning space's residency cap per lean block size (blocks per SM; the top of this file says
// why): 10 x 128 and 6 x 256 threads, 62.5% and 75% of the H200 SM's 2048.
constexpr int lean_residency_cap(int threads_per_block) { return threads_per_block == 128 ? 10 : 6; }
// add_residency's target capacity (a supported shared-memory size on sm_90; the measured one).
constexpr int kResidencyCapacityBytes = 100 * 1024;
// Shared memory is allocated to blocks in units of this many bytes (sm_80, sm_90).
constexpr int kSharedAllocationUnit = 128;

template <typename T, std::size_t N>
constexpr bool one_of(const T (&choices)[N], T value) {
  for (const T& c : choices) {
    if (c == value) return true;
  }
  return false;
}

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

// Whether `config` is a size class's (any max_blocks): what a build without XB_LAB instantiates.
[[maybe_unused]] bool size_class_config(const AddLaunchConfig& config) {
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

#ifdef XB_LAB
std::vector<AddLaunchConfig> add_tuning_space() {
  const int max_blocks = device_max_grid_x("add_tuning_space");
  std::vector<AddLaunchConfig> space;
  for (int v : kVectorChoices) {
    for (int t : kThreadChoices) {
      for (AddCachePolicy p : kPolicyChoices) space.push_back(AddLaunchConfig{max_blocks, t, v, p});
    }
  }
  for (bool cap : {false, true}) {
    for (int t : kLeanThreadChoices) {
      for (AddCachePolicy p : kLeanPolicyChoices) {
        space.push_back(AddLaunchConfig{max_blocks, t, 1, p, AddKernelVariant::Lean, cap ? lean_residency_cap(t) : 0});
      }
    }
  }
  return space;
}
#endif

void launch_add(DType dtype, const void* a, const void* b, void* out, std::int64_t count, cudaStream_t stream,
                const AddLaunchConfig& config) {
  if (count < 0) throw std::invalid_argument("launch_add: count " + std::to_string(count) + " < 0");
  if (config.max_blocks < 1 || config.threads_per_block < 1) {
    throw std::invalid_argument("launch_add: config not initialized (call add_launch_config)");
  }
  if (config.threads_per_block % 32 != 0 || config.threads_per_block > kAddMaxThreadsPerBlock) {
    throw std::invalid_argument("launch_add: threads_per_block " + std::to_string(config.threads_per_block) +
                                " is not a multiple of 32 in 32.." + std::to_string(kAddMaxThreadsPerBlock));
  }
  if (!one_of(kVectorChoices, config.vectors_per_thread)) {
    throw std::invalid_argument("launch_add: vectors_per_thread must be 1, 2 or 4");
  }
  if (!one_of(kPolicyChoices, config.cache)) throw std::invalid_argument("launch_add: invalid cache policy");
  if (config.kernel == AddKernelVariant::Lean) {
    if (config.vectors_per_thread != 1 || !one_of(kLeanThreadChoices, config.threads_per_block) ||
        !one_of(kLeanPolicyChoices, config.cache)) {
      throw std::invalid_argument(
          "launch_add: the lean kernel runs v1 with 128 or 256 threads and the default or plain "
          "policy, not " +
          to_string(config));
    }
  } else if (config.kernel != AddKernelVariant::Standard) {
    throw std::invalid_argument("launch_add: invalid kernel variant");
  }
  if (config.blocks_per_sm < 0 || (config.blocks_per_sm > 0 && config.kernel != AddKernelVariant::Lean)) {
    throw std::invalid_argument("launch_add: a residency cap (blocks_per_sm " + std::to_string(config.blocks_per_sm) +
                                ") needs the lean kernel and a value >= 0");
  }
#ifndef XB_LAB
  if (!size_class_config(config)) {
    throw std::invalid_argument("launch_add: " + to_string(config) +
                                " is a configuration of the tuning space, built only with -DXB_LAB=ON; this build runs "
                                "bench's size classes (add_size_class_configs)");
  }
#endif
  // Made once per launch, here, so that a cap add_residency refuses is refused on every path.
  const AddResidency residency =
      config.blocks_per_sm > 0 ? add_residency(config.blocks_per_sm, config.threads_per_block) : AddResidency{};
  if (count == 0) return;
  switch (dtype) {
    case DType::BF16:
      return launch_typed<__nv_bfloat16>(a, b, out, count, stream, config, residency);
    case DType::FP16:
      return launch_typed<__half>(a, b, out, count, stream, config, residency);
    case DType::FP32:
      return launch_typed<float>(a, b, out, count, stream, config, residency);
  }
  throw std::invalid_argument("launch_add: invalid dtype");
}

}  // namespace xb
