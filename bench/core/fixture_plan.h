// Which fixtures a run has: the registered benchmarks (bench/core/api.h) crossed with the command
// line's ops, dtypes and sizes. Plain C++.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/core/options.h"

namespace xb {

/// Fixture name "<op>/<dtype>/<n>", also the user annotation around each timed call.
std::string fixture_name(const std::string& op, const std::string& dtype, std::int64_t n);

/// One fixture of a run: op x dtype x size.
struct FixtureSpec {
  std::string op;
  std::string dtype;
  std::int64_t size = 0;
};

/// The fixtures of `options` over the registered benchmarks (bench/core/api.h): op x dtype x size,
/// in that nesting order; no --op: every benchmark; no --dtype: each one's first dtype; no --size:
/// its own sizes, else kDefaultSizes. Throws UsageError for an unknown op or an op that takes
/// none of the given dtypes.
std::vector<FixtureSpec> fixture_specs(const BenchOptions& options);

}  // namespace xb
