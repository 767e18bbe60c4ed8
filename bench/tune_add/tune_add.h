// `bench tune-add`: measures every configuration of our add kernel (kernels/add.h: vectors per
// thread, block size, cache hints) at each size and dtype on the current GPU, with the kernel
// durations from CUPTI activity records, and shows which one bench's add_launch_config picks and
// how far it is from the fastest. The evidence behind add_launch_config's table (kernels/add.cu).
#pragma once

namespace xb {

/// `bench tune-add [--dtype LIST] [--size LIST] [--launches N] [--passes N] [--out FILE]`
/// (argv[0] = "tune-add"). For each dtype (default bf16,fp16,fp32) and size n (default
/// 1024,2048,4096,8192,16384; n x n elements, random inputs): 0.3 s of untimed launches, then
/// `passes` (default 3) round-robin
/// passes over the tuning space, each config 3 untimed launches then `launches` (default 20)
/// back-to-back timed ones (hot: the same buffers every launch, as the fixtures run). Reports per
/// config the median kernel duration (ns) and bandwidth (3 n^2 e bytes / duration) as markdown on
/// stdout and, with --out, JSON written atomically. Throws UsageError for bad input, no device or
/// sizes that do not fit in device memory (checked before any measurement),
/// ProfilerError when CUPTI cannot start, CudaError on a failed CUDA call; returns 0.
int tune_add_command(int argc, const char* const* argv);

}  // namespace xb
