// crossbench's own ops (kernels/workload.h kAllOps) as benchmarks of the public measuring API.
#pragma once

namespace xb {

/// Registers matmul, add, addmm and addmm_bias1d (bf16, fp16, fp32) through register_benchmark,
/// the path a user's benchmark takes: FLOPs and bytes from op_flops/op_bytes, a host fp64
/// reference check as the verification, one Workload per instance. Idempotent.
void register_builtin_ops();

}  // namespace xb
