// The add kernels (add.h) and their launchers as templates, shared by the two translation units
// that instantiate them: kernels/add.cu, bench's add (the size classes' configurations,
// AddInstances::SizeClasses), and the team's tools/lab/add_tuning/add_tuning.cu (the whole tuning
// space, AddInstances::TuningSpace; built with the lab's targets only, tools/lab/README.md). The
// design and the evidence behind each choice: add.cu's top comment.
//
// Everything here has internal linkage (an unnamed namespace in a header, on purpose): each of the
// two .cu files compiles its own kernels into its own fatbinary, so bench's build holds no lab
// kernel and a program that links both (bench with tune-add, xb_add_shim) holds two distinct
// copies of the size classes' kernels rather than one name defined twice.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

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
    // ld.global.nc as for __ldg (seen in add.cu's PTX), so "plain" loaded what "default" did;
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

// AddKernelVariant::Lean (add.cu's top comment): one vector per thread, B threads
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

// Which instantiations a launcher below carries. SizeClasses: the default cache policy, V = 1 and
// the lean kernel's default policy (bench's size classes, their V = 1 fallback and the scalar
// kernel); TuningSpace: also V = 2 and 4, the other four policies and the lean kernel's plain policy.
enum class AddInstances { SizeClasses, TuningSpace };

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

template <AddInstances I, typename T, int V>
void dispatch_policy(const T* a, const T* b, T* out, std::int64_t count, cudaStream_t stream,
                     const AddLaunchConfig& config) {
  if (config.cache == AddCachePolicy::Default) {
    return launch_vectorized<T, V, AddCachePolicy::Default>(a, b, out, count, stream, config);
  }
  if constexpr (I == AddInstances::TuningSpace) {  // the tuning space's other policies
    switch (config.cache) {
      case AddCachePolicy::Streaming:
        return launch_vectorized<T, V, AddCachePolicy::Streaming>(a, b, out, count, stream, config);
      case AddCachePolicy::Prefetch256:
        return launch_vectorized<T, V, AddCachePolicy::Prefetch256>(a, b, out, count, stream, config);
      case AddCachePolicy::Prefetch256Streaming:
        return launch_vectorized<T, V, AddCachePolicy::Prefetch256Streaming>(a, b, out, count, stream, config);
      case AddCachePolicy::Plain:
        return launch_vectorized<T, V, AddCachePolicy::Plain>(a, b, out, count, stream, config);
      default:
        break;
    }
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
template <AddInstances I, typename T>
void launch_lean(const T* a, const T* b, T* out, std::int64_t count, cudaStream_t stream, const AddLaunchConfig& config,
                 const AddResidency& residency) {
  constexpr std::int64_t kPerVector = kVectorBytes / sizeof(T);
  const std::int64_t vectors = count / kPerVector;
  const std::int64_t threads = config.threads_per_block;
  const std::int64_t blocks = std::max<std::int64_t>(1, (vectors + threads - 1) / threads);  // >= 1 for the tail
  if (count > std::numeric_limits<int>::max() - kPerVector || blocks > config.max_blocks) {
    return dispatch_policy<I, T, 1>(a, b, out, count, stream, config);
  }
  const auto v = static_cast<unsigned int>(vectors);
  const auto tail = static_cast<unsigned int>(count % kPerVector);
  const auto g = static_cast<unsigned int>(blocks);
  if constexpr (I == AddInstances::TuningSpace) {  // the lean kernel's plain policy
    if (config.cache == AddCachePolicy::Plain) {
      return launch_lean_policy<T, AddCachePolicy::Plain>(a, b, out, v, tail, g, stream, config.threads_per_block,
                                                          residency);
    }
  }
  launch_lean_policy<T, AddCachePolicy::Default>(a, b, out, v, tail, g, stream, config.threads_per_block, residency);
}

template <AddInstances I, typename T>
void launch_typed(const void* a, const void* b, void* out, std::int64_t count, cudaStream_t stream,
                  const AddLaunchConfig& config, const AddResidency& residency) {
  const auto* ta = static_cast<const T*>(a);
  const auto* tb = static_cast<const T*>(b);
  auto* tout = static_cast<T*>(out);
  if (aligned16(a) && aligned16(b) && aligned16(out)) {
    if (config.kernel == AddKernelVariant::Lean) {
      launch_lean<I, T>(ta, tb, tout, count, stream, config, residency);
      XB_CUDA_LAST();
      return;
    }
    switch (config.vectors_per_thread) {
      case 1:
        dispatch_policy<I, T, 1>(ta, tb, tout, count, stream, config);
        break;
      case 2:
      case 4:
        if constexpr (I == AddInstances::TuningSpace) {  // V = 2 and 4: the tuning space's
          if (config.vectors_per_thread == 2) {
            dispatch_policy<I, T, 2>(ta, tb, tout, count, stream, config);
          } else {
            dispatch_policy<I, T, 4>(ta, tb, tout, count, stream, config);
          }
          break;
        }
        [[fallthrough]];
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

// The configurations the templates above can run (AddLaunchConfig's fields): the tuning space is
// every combination of them (tools/lab/add_tuning, add_tuning_space), bench's size classes a few.
constexpr int kThreadChoices[] = {32, 64, 128, 256, 512};
constexpr int kVectorChoices[] = {1, 2, 4};
constexpr AddCachePolicy kPolicyChoices[] = {AddCachePolicy::Default, AddCachePolicy::Streaming,
                                             AddCachePolicy::Prefetch256, AddCachePolicy::Prefetch256Streaming,
                                             AddCachePolicy::Plain};

// The lean kernel's instantiations (launch_lean_policy, launch_lean_shape).
constexpr int kLeanThreadChoices[] = {128, 256};
constexpr AddCachePolicy kLeanPolicyChoices[] = {AddCachePolicy::Default, AddCachePolicy::Plain};
// The tuning space's residency cap per lean block size (blocks per SM; add.cu's top comment says
// why): 10 x 128 and 6 x 256 threads, 62.5% and 75% of the H200 SM's 2048.
constexpr int lean_residency_cap(int threads_per_block) { return threads_per_block == 128 ? 10 : 6; }

template <typename T, std::size_t N>
constexpr bool one_of(const T (&choices)[N], T value) {
  for (const T& c : choices) {
    if (c == value) return true;
  }
  return false;
}

// launch_add's checks of `count` and `config`, which every instance set shares: throws
// std::invalid_argument, the message starting with `who`, for count < 0, a configuration not
// initialized or outside what the templates can run (threads per block not a multiple of 32 in
// 32..512, vectors_per_thread not 1, 2 or 4, an unknown policy or variant, a lean configuration
// outside the lean kernel's shapes, a residency cap < 0 or on a standard configuration).
void check_add_config(const char* who, std::int64_t count, const AddLaunchConfig& config) {
  const std::string w = who;
  if (count < 0) throw std::invalid_argument(w + ": count " + std::to_string(count) + " < 0");
  if (config.max_blocks < 1 || config.threads_per_block < 1) {
    throw std::invalid_argument(w + ": config not initialized (call add_launch_config)");
  }
  if (config.threads_per_block % 32 != 0 || config.threads_per_block > kAddMaxThreadsPerBlock) {
    throw std::invalid_argument(w + ": threads_per_block " + std::to_string(config.threads_per_block) +
                                " is not a multiple of 32 in 32.." + std::to_string(kAddMaxThreadsPerBlock));
  }
  if (!one_of(kVectorChoices, config.vectors_per_thread)) {
    throw std::invalid_argument(w + ": vectors_per_thread must be 1, 2 or 4");
  }
  if (!one_of(kPolicyChoices, config.cache)) throw std::invalid_argument(w + ": invalid cache policy");
  if (config.kernel == AddKernelVariant::Lean) {
    if (config.vectors_per_thread != 1 || !one_of(kLeanThreadChoices, config.threads_per_block) ||
        !one_of(kLeanPolicyChoices, config.cache)) {
      throw std::invalid_argument(w +
                                  ": the lean kernel runs v1 with 128 or 256 threads and the default or plain "
                                  "policy, not " +
                                  to_string(config));
    }
  } else if (config.kernel != AddKernelVariant::Standard) {
    throw std::invalid_argument(w + ": invalid kernel variant");
  }
  if (config.blocks_per_sm < 0 || (config.blocks_per_sm > 0 && config.kernel != AddKernelVariant::Lean)) {
    throw std::invalid_argument(w + ": a residency cap (blocks_per_sm " + std::to_string(config.blocks_per_sm) +
                                ") needs the lean kernel and a value >= 0");
  }
}

// launch_add after check_add_config, with instance set I: makes the residency request (once per
// launch, here, so that a cap add_residency refuses is refused on every path, count 0 included),
// then launches nothing for count 0, else the dtype's kernels.
template <AddInstances I>
void launch_add_checked(DType dtype, const void* a, const void* b, void* out, std::int64_t count, cudaStream_t stream,
                        const AddLaunchConfig& config) {
  const AddResidency residency =
      config.blocks_per_sm > 0 ? add_residency(config.blocks_per_sm, config.threads_per_block) : AddResidency{};
  if (count == 0) return;
  switch (dtype) {
    case DType::BF16:
      return launch_typed<I, __nv_bfloat16>(a, b, out, count, stream, config, residency);
    case DType::FP16:
      return launch_typed<I, __half>(a, b, out, count, stream, config, residency);
    case DType::FP32:
      return launch_typed<I, float>(a, b, out, count, stream, config, residency);
  }
  throw std::invalid_argument("launch_add: invalid dtype");
}

}  // namespace
}  // namespace xb
