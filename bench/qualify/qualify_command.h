// `bench qualify` on the GPU: runs a suite (one bench run folder per mode), validates every run
// folder, gates each fixture against a baseline and writes the reports (the gate and the files are
// plain C++: bench/gate/gate.h, qualify_files.h, qualify_report.h; docs/qualify.md).
#pragma once

#include "bench/qualify/qualify_files.h"

namespace xb {

/// The GPU and software this process would run on: devices[0] name and the CUDA versions as the
/// CUPTI source records them (cudaGetDeviceProperties, cudaDriverGetVersion,
/// cudaRuntimeGetVersion), cublasLtGetVersion, and NVML's UUID, driver, power limit and maximum
/// clocks (empty / -1 without NVML), put into a SessionMeta as a recording would and read with
/// environment_of; the clock samples are not read (valid = false). Throws CudaError.
RunEnvironment probe_environment();

/// `bench qualify ARGS` (argv[0] = "qualify"). Reads and checks the suite and the baseline, and
/// compares the baseline's environment with this GPU's before running anything: a bad input or a
/// refused mismatch throws UsageError / InputError (exit 2) with nothing written. Then runs each
/// mode of the suite into DIR/run-<mode> (bench/run/bench_run.h, the suite's warm-up and per-fixture
/// stopping rules, --slow-fixture delays), or reads the --from-run folders instead, and finishes
/// with finish_qualification. Returns the exit code: 0 all pass, 1 regression, failed fixture or
/// validation failure, 3 inconclusive only.
int qualify_command(int argc, const char* const* argv);

}  // namespace xb
