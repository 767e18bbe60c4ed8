// A synthetic recorded session for the speed benchmarks (tests/perf/validate_bench.cpp,
// tests/perf/postproc_bench.cpp): shaped like a real one, built without a GPU.
#pragma once

#include <cstdint>

#include "profiler/model/raw_records.h"

namespace xb {

/// A session of `kernels` kernels, rounded up to whole steps of 100: per step one
/// "ProfilerStep#N" user annotation > one fixture annotation > 10 `aten::` CPU ops > 10 kernels
/// each; per kernel an ExternalCorrelation record (CUSTOM0, the CPU op's id), its
/// cudaLaunchKernel runtime record and the kernel record, in that delivery order, on one
/// stream. Kernel names are PyTorch, cuBLAS and Triton names of 26 to 243 characters (114 on
/// average); one cudaEvent timing per step. Times in ns from window_start_ns = 10^12.
RawSession synthetic_session(std::int64_t kernels);

}  // namespace xb
