// `bench sweep` on the GPU: runs every point, records it with CUPTI, writes the run folder (as
// `bench` does) plus ceilings.json, calibration.md, sweep.json, sweep.csv and sweep.md.
#pragma once

namespace xb {

/// `bench sweep ARGS` (argv[0] = "sweep"). Per point (op x dtype x size, in that nesting order):
/// create the workload (random inputs), verify it against the host fp64 reference
/// (Workload::verify: every element for n <= 256, else 16 sampled rows), warm up back to back for
/// --warmup-ms, record one eager window (calls enqueued back to back, no synchronization in
/// between), then the timed schedule (blocking kernel + cudaEvent pair per call, as `bench`).
/// Progress: one line per point with elapsed time and an estimate of the time left.
/// Returns 0 when every point ran and validation passed, 1 otherwise; throws UsageError /
/// InputError for bad input before anything is written (exit 2).
int sweep_command(int argc, const char* const* argv);

}  // namespace xb
