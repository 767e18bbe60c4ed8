// `bench calibrate`'s options and their command line. Plain C++ (no CUDA): CPU-tested in
// tests/cpu/test_sweep.cpp. The measurement itself: bench/calibrate/calibrate.h.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace xb {

/// Everything `bench calibrate` was asked to do.
struct CalibrateOptions {
  std::vector<std::string> dtypes{"bf16", "fp16", "fp32"};
  std::vector<std::int64_t> gemm_sizes{4096, 8192};  ///< GEMM ceiling = best median over these
  std::int64_t copy_mib = 1024;                      ///< bytes copied per call, MiB (read + written: twice that)
  int calls = 20;          ///< minimum samples per measurement (the sampling core's stopping rule)
  double warmup_ms = 200;  ///< back-to-back warm-up before the copy measurement
  /// GEMM ceilings are measured as the sweep measures its points: after `cooldown_ms` of idle
  /// GPU and `gemm_warmup_ms` of warm-up. Under sustained back-to-back GEMMs the H200's power
  /// limit lowers its SM clock (1545 MHz seen after 200 ms at 8192, against 1980 MHz boost) and
  /// the rate by ~15%, which would put short-burst points above the "ceiling".
  double cooldown_ms = 500;
  double gemm_warmup_ms = 20;
  std::filesystem::path out;  ///< folder for ceilings.json and calibration.md
};

/// Parses `bench calibrate` arguments (argv[0] = "calibrate"). Throws UsageError; returns
/// std::nullopt when --help was printed.
std::optional<CalibrateOptions> parse_calibrate_args(int argc, const char* const* argv);

}  // namespace xb
