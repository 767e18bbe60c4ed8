// The add kernel's tuning space (lab code, tools/lab/README.md): every configuration the add
// kernel's templates (kernels/add_kernels.cuh) can run, and a launcher for all of them. bench's
// own add (kernels/add.h, launch_add) runs the size classes' configurations alone; `bench
// tune-add`, xb_add_shim (tools/lab/add_vs_torch.py) and the lab's GPU tests run these.
#pragma once

#include <cstdint>
#include <vector>

#include <cuda_runtime_api.h>

#include "kernels/add.h"
#include "kernels/workload.h"

namespace xb {

/// Every configuration of the tuning space, with the current device's max_blocks: the 75
/// standard ones (3 vectors per thread x 5 block sizes x 5 cache policies), then the 8 lean ones
/// (v1 x 128, 256 threads x default, plain x no residency cap, the block size's cap: 10 blocks of
/// 128 or 6 of 256 per SM). Every size class of add_size_class_configs is one of them. Throws
/// CudaError.
std::vector<AddLaunchConfig> add_tuning_space();

/// launch_add (kernels/add.h: the arguments, the paths, what is refused and thrown) for any
/// configuration of add_tuning_space, not only the size classes'. Each configuration launches the
/// same kernel code as launch_add's (the same templates, instantiated in this library).
void launch_add_tuning(DType dtype, const void* a, const void* b, void* out, std::int64_t count, cudaStream_t stream,
                       const AddLaunchConfig& config);

}  // namespace xb
