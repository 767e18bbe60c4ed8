// `bench ab`: two workloads compared under the same GPU state. Sequential runs of two fixtures
// see different clocks (a GEMM under its power cap drifts by several percent within seconds), so
// a small difference, such as a fused bias epilogue's cost over the plain GEMM, needs the two
// interleaved: blocks of launches of A and B alternate (A B B A ...) in one CUPTI session and
// each block's device time comes from its activity records.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "profiler/raw_records.h"

namespace xb {

/// Durations (ns) of the device activities (kernels, memcpys, memsets) launched under each
/// external id: joins each activity's correlation id to the CUSTOM0 ExternalCorrelation record
/// of its launch (the kind the CUPTI source pushes; a library's own kinds are ignored).
/// Activities without one are left out.
std::map<std::uint64_t, std::vector<double>> device_durations_by_external_id(const std::vector<RawRecord>& records);

/// `bench ab --op A,B [--size N] [--dtype D] [--rounds N] [--launches N] [--warmup-s S] [--out FILE]`
/// (argv[0] = "ab"). Both workloads at size n (default 4096) and dtype (default bf16); the GPU is
/// kept busy with both for warmup-s seconds (default 2: to the power-capped clock a long run
/// settles at), then `rounds` (default 30) rounds, round r running a block of `launches` (default
/// 10) back-to-back calls of A then of B (B then A on odd rounds). Per block: device time per call
/// = the sum of its device activities' durations / launches. Reports each op's median over
/// rounds and the median over rounds of B/A (paired), as markdown and, with --out, JSON written
/// atomically. Throws UsageError for bad input, no device or sizes that do not fit;
/// ProfilerError when CUPTI cannot start or records are missing; returns 0.
int ab_command(int argc, const char* const* argv);

}  // namespace xb
