// `bench calibrate`'s options and their command line. Plain C++ (no CUDA): CPU-tested in
// tests/cpu/test_sweep.cpp. The options and the measurement: bench/core/ceilings.h.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "bench/core/ceilings.h"  // CalibrateOptions

namespace xb {

/// Parses `bench calibrate` arguments (argv[0] = "calibrate"). Throws UsageError; returns
/// std::nullopt when --help was printed.
std::optional<CalibrateOptions> parse_calibrate_args(int argc, const char* const* argv);

}  // namespace xb
