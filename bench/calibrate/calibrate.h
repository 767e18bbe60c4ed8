// `bench calibrate`: measures the ceilings a sweep is judged against on the GPU in use (device to
// device copy bandwidth, dense GEMM throughput per dtype on random data) and records the GPU, its
// clocks (NVML, loaded with dlopen when present) and the driver. The measurement (run_calibration),
// the record and its file format are the measuring core's (bench/core/ceilings.h), which sweep shares.
#pragma once

namespace xb {

/// `bench calibrate ARGS` (argv[0] = "calibrate"): parses, checks the device and memory, creates
/// the folder, measures, writes ceilings.json and calibration.md. Returns the exit code (0);
/// throws UsageError for bad input before anything is written.
int calibrate_command(int argc, const char* const* argv);

}  // namespace xb
