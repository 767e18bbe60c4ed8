// `bench ab`: two workloads compared under the same GPU state. Sequential runs of two fixtures
// see different clocks (a GEMM under its power cap drifts by several percent within seconds), so
// a small difference, such as a fused bias epilogue's cost over the plain GEMM, needs the two
// interleaved: blocks of launches of A and B alternate (A B B A ...) in one profiler session.
// Each block is one sample of the sampling core (timed_sample, bench/core/measure.h): one active
// profiler step timed by a cudaEvent pair, whose device time comes from the step's CUPTI records
// (step_metrics, profiler/model/step_metrics.h; the pairing is in bench/core/blocks.h).
#pragma once

namespace xb {

/// `bench ab --op A,B [--size N] [--dtype D] [--rounds N] [--launches N] [--warmup-s S] [--out FILE]`
/// (argv[0] = "ab"). Both workloads at size n (default 4096) and dtype (default bf16); the GPU is
/// kept busy with both for warmup-s seconds (default 2: to the power-capped clock a long run
/// settles at), then `rounds` (default 30) rounds, round r running a block of `launches` (default
/// 10) back-to-back calls of A then of B (B then A on odd rounds). Each block is one timed_sample
/// (annotation "<op>/<dtype>/<n>", queued behind the blocking kernel when launches <= kMaxBatch,
/// else, since CUDA's launch queue would fill, not held). Per block: device time per call = the
/// sum of its step's device activities' durations / launches; cudaEvent time per call = the
/// step's event interval / launches. Reports each op's median over rounds of both and the median
/// over rounds of B/A (paired), as markdown and, with --out, JSON written atomically. Throws
/// UsageError for bad input, no device or sizes that do not fit; ProfilerError when CUPTI cannot
/// start, dropped records, or a block has fewer device activities than calls; CudaError on a
/// failed CUDA call; returns 0.
int ab_command(int argc, const char* const* argv);

}  // namespace xb
