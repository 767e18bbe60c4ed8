// `bench overhead`: what recording with the CUPTI profiler costs the host. Wall time of a loop of
// launches at a small size with the profiler off, with CUPTI activity collection only, and with
// the full profiler (CUPTI plus a CPU-op range and external id per launch, as the fixtures
// record them), measured the same way as tools/lab/vs_torch.py measures PyTorch's profiler.
#pragma once

#include <string>

namespace xb {

/// `bench overhead [--op LIST] [--size N] [--launches N] [--reps N] [--breakdown] [--out FILE]`
/// (argv[0] = "overhead"). For each op: a workload of size n (default 64), then `reps` (default
/// 30) repetitions of: synchronize, start a steady clock, `launches` (default 100) enqueues, each
/// inside the profiler's CPU-op range, synchronize, stop the clock. Reports per mode the median
/// wall time (ns) and the ratios over "off" as a markdown table on stdout and, with --out, as
/// JSON written atomically. --breakdown also times CUPTI with subsets of its activity kinds
/// (kernel only; + runtime API; + driver API; all kinds; all + an external id per launch) and
/// prints what each adds per launch (us). Throws UsageError for bad input or no device, ProfilerError when
/// CUPTI cannot start; returns 0.
int overhead_command(int argc, const char* const* argv);

}  // namespace xb
