// `bench tune-add`: measures every configuration of our add kernel (kernels/add.h: vectors per
// thread, block size, cache hints) at each size and dtype on the current GPU, with the kernel
// durations from CUPTI activity records, and shows which one bench's add_launch_config picks and
// how far it is from the fastest. The evidence behind add_launch_config's table (kernels/add.cu).
// Every measurement is a sample of the sampling core (timed_sample, bench/core/measure.h) and its
// device time per call comes from the step's records (step_metrics, profiler/model/step_metrics.h).
#pragma once

namespace xb {

/// `bench tune-add [--dtype LIST] [--size LIST] [--launches N] [--passes N] [--out FILE]`
/// (argv[0] = "tune-add"). For each dtype (default bf16,fp16,fp32) and size n (default
/// 1024,2048,4096,8192,16384; n x n elements, random inputs): 0.3 s of untimed launches, then,
/// in one profiler session, `passes` (default 3) round-robin passes over the tuning space, each
/// config one unrecorded sample of 3 launches then one recorded sample of `launches` (default 20)
/// back-to-back launches (hot: the same buffers every launch, as the fixtures run; queued behind
/// the blocking kernel when launches <= kMaxBatch). Per config: device time per call of a pass =
/// the sum of its step's kernel durations / launches; reported is the median over passes, and
/// bandwidth (3 n^2 e bytes / that time), as markdown on stdout and, with --out, JSON written
/// atomically (with the cudaEvent time per call's median over passes too). Throws UsageError for
/// bad input, no device or sizes that do not fit in device memory (checked before any
/// measurement), ProfilerError when CUPTI cannot start, drops records or a pass has not exactly
/// one kernel per launch, CudaError on a failed CUDA call; returns 0.
int tune_add_command(int argc, const char* const* argv);

}  // namespace xb
