// Our elementwise add, out = a + b, for bf16, fp16 and fp32 (the `add` workload).
//
// Semantics match PyTorch's torch.add for these dtypes: each element is converted to fp32, added in
// fp32 and rounded once to the output dtype (round to nearest even), so results are bit-identical
// to at::native::CUDAFunctor_add with alpha = 1.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "kernels/workload.h"

namespace xb {

/// Cache hints of the add kernel's 16-byte loads and stores (PTX ISA 8.x, "ld" / "st"):
enum class AddCachePolicy {
  Default,               ///< ld.global.nc (read-only path), st.global (write-back)
  Streaming,             ///< ld.global.cs / st.global.cs: evict-first, for data used once (__ldcs/__stcs)
  Prefetch256,           ///< ld.global.nc.L2::256B: each miss fetches the whole 256-byte L2 line
  Prefetch256Streaming,  ///< ld.global.nc.L1::no_allocate.L2::256B loads, st.global.cs stores
  Plain,                 ///< ld.global / st.global through L1 (no read-only path), as PyTorch's loads
};

/// "default", "streaming", "prefetch256", "prefetch256-streaming", "plain".
const char* to_string(AddCachePolicy policy);

/// Which kernel code a configuration runs; every variant's results are bit-identical (fp32 add,
/// one rounding). Why the lean variant exists and what it changes: add.cu.
enum class AddKernelVariant {
  Standard,  ///< add_flat_kernel (V = 1) / add_vectorized_kernel: block size and tail read at run time
  Lean,      ///< add_lean_kernel: V = 1 and 128 or 256 threads only, block size a template argument
             ///< (its __launch_bounds__), counts computed by the host, separate instantiations
             ///< without the per-thread bounds check (every thread has a vector) and without the
             ///< tail (count % elements-per-vector == 0); default or plain cache policy only
};

/// "standard", "lean".
const char* to_string(AddKernelVariant variant);

/// Launch geometry and cache hints of the add kernels on one device. A launch gives each thread
/// `vectors_per_thread` 16-byte vectors (one element on the scalar path), all loaded before any
/// is added, in blocks of `threads_per_block`, up to max_blocks blocks; past that, the kernels'
/// grid-stride loops cover the rest. Why a data-sized grid, and how the choice per dtype and
/// size was measured: add.cu.
struct AddLaunchConfig {
  int max_blocks = 0;          ///< cap on blocks per launch (the device's grid x limit)
  int threads_per_block = 0;   ///< a multiple of 32 up to 512 (the tuning space: 32, 64, 128, 256, 512)
  int vectors_per_thread = 1;  ///< 1, 2 or 4 (vector path only)
  AddCachePolicy cache = AddCachePolicy::Default;        ///< vector path only
  AddKernelVariant kernel = AddKernelVariant::Standard;  ///< vector path only
  int blocks_per_sm = 0;  ///< lean kernel only: > 0 caps the blocks resident per SM (add_residency); 0: as many as fit
};

/// "v2/t256/prefetch256": vectors per thread, threads per block, cache policy; "/lean" appended
/// for the lean kernel ("v1/t128/default/lean"), then "/rN" for a residency cap of N blocks per SM
/// ("v1/t256/default/lean/r6").
std::string to_string(const AddLaunchConfig& config);

/// The configuration bench uses for `count` elements of `dtype`: the row of add.cu's size-class
/// table (kAddSizeClasses) that holds `count`, the same for every dtype: the lean kernel with 1
/// vector per thread and default hints, 128 threads up to 256^2 elements, 256 up to 3072^2 and 256
/// capped at 6 resident blocks per SM above, chosen against PyTorch's add on an H200 (add.cu says
/// from which evidence, and by how much). Queries the current device (cudaDevAttrMaxGridDimX);
/// call at setup, not per launch. Throws CudaError; std::invalid_argument for count < 0.
AddLaunchConfig add_launch_config(DType dtype, std::int64_t count);

/// bench's configurations, one per size class of add_launch_config in ascending size
/// (v1/t128/default/lean, v1/t256/default/lean, v1/t256/default/lean/r6), with the current device's
/// max_blocks: the only ones launch_add runs (the rest of the tuning space runs through the team's
/// tools/lab/add_tuning, launch_add_tuning). Throws CudaError.
std::vector<AddLaunchConfig> add_size_class_configs();

/// How launch_add holds a lean launch to `blocks_per_sm` resident blocks per SM on the current
/// device (AddLaunchConfig::blocks_per_sm, add_residency): every block asks for `dynamic_smem_bytes` of dynamic
/// shared memory that it never touches, and the launch for an L1/shared-memory split of
/// `carveout_percent` % of the SM's shared memory (cudaLaunchAttributePreferredSharedMemoryCarveout,
/// a hint the driver rounds up to a capacity the SM supports: 100 KB on sm_90, 156 KB left to L1),
/// so that blocks_per_sm blocks fit in `capacity_bytes` and one more does not. Sizes in bytes.
struct AddResidency {
  std::size_t dynamic_smem_bytes = 0;
  int carveout_percent = 0;
  int capacity_bytes = 0;  ///< the capacity the split aims at: min(100 KB, the SM's maximum); 0: no request
};

/// add_residency(N, T): the request above for N blocks of T threads per SM, from the current
/// device's attributes (kept per device, N and T). Throws std::invalid_argument when N < 1, when
/// N x T exceeds the SM's resident threads (a cap that caps nothing), a block would need more
/// dynamic shared memory than it may ask for without opting in (48 KB: N <= 2) or N blocks and
/// one more cannot be told apart in the capacity; CudaError if a query fails.
AddResidency add_residency(int blocks_per_sm, int threads_per_block);

/// Blocks of a lean `config` resident per SM on the current device, as
/// cudaOccupancyMaxActiveBlocksPerMultiprocessor computes them for the kernel it launches (the
/// full, tail-less instantiation of `dtype` with default hints; the others use as many registers
/// or fewer) with the request of add_residency (config.blocks_per_sm > 0): the check that the
/// cap holds on this GPU (the carveout hint's rounding is the driver's). Throws
/// std::invalid_argument for a standard configuration, CudaError.
int add_resident_blocks(DType dtype, const AddLaunchConfig& config);

/// Enqueues out[i] = a[i] + b[i] for i in [0, count) on `stream`; a, b, out are device pointers
/// to `count` elements of `dtype`; out must not overlap a or b. When all three
/// pointers are 16-byte aligned each thread moves 16 bytes per load/store (8 bf16/fp16 or 4 fp32
/// elements) and the last count % 8 (or % 4) elements take a scalar path; otherwise the whole
/// range takes the scalar path. count == 0 launches nothing. Throws CudaError if the launch fails
/// and std::invalid_argument for count < 0 or a configuration launch_add cannot run (threads per
/// block not a multiple of 32 in 32..512, vectors_per_thread not 1, 2 or 4, an unknown policy or
/// variant, a lean configuration outside the tuning space's lean shapes, a residency cap on a
/// standard configuration or one add_residency refuses; any configuration that is not one of
/// add_size_class_configs: the tuning space's others, tools/lab/add_tuning). A lean configuration whose
/// launch would need more than max_blocks blocks or 32-bit indices past INT_MAX runs the
/// standard V = 1 kernel instead (its grid-stride loop, no residency cap), as the standard flat
/// kernel does.
void launch_add(DType dtype, const void* a, const void* b, void* out, std::int64_t count, cudaStream_t stream,
                const AddLaunchConfig& config);

}  // namespace xb
