// Which fixtures a run has (see fixture_plan.h).
#include "bench/core/fixture_plan.h"

#include <fmt/format.h>

#include <algorithm>

#include "bench/core/api.h"

namespace xb {

std::string fixture_name(const std::string& op, const std::string& dtype, std::int64_t n) {
  return fmt::format("{}/{}/{}", op, dtype, n);
}

std::vector<FixtureSpec> fixture_specs(const BenchOptions& options) {
  std::vector<FixtureSpec> specs;
  std::vector<std::string> ops = options.ops;
  if (ops.empty()) {
    for (const BenchmarkDef& b : registered_benchmarks()) ops.push_back(b.name);
  }
  for (const std::string& op : ops) {
    const BenchmarkDef* def = find_benchmark(op);
    if (def == nullptr) throw UsageError("unknown op '" + op + "'");
    std::vector<std::string> dtypes;
    if (options.dtypes.empty()) {
      dtypes.push_back(def->dtypes.front());
    } else {
      for (const std::string& d : options.dtypes) {
        if (std::find(def->dtypes.begin(), def->dtypes.end(), d) != def->dtypes.end()) dtypes.push_back(d);
      }
      if (dtypes.empty()) {
        throw UsageError(fmt::format("{} takes none of the dtypes {} (it takes {})", op, fmt::join(options.dtypes, ","),
                                     fmt::join(def->dtypes, ",")));
      }
    }
    const std::vector<std::int64_t>& sizes = !options.sizes.empty() ? options.sizes
                                             : !def->sizes.empty()  ? def->sizes
                                                                    : kDefaultSizes;
    for (std::int64_t n : sizes) {
      if (def->max_size > 0 && n > def->max_size) {
        throw UsageError(fmt::format("size '{}' is too large for {} (at most {})", n, op, def->max_size));
      }
    }
    for (const std::string& dtype : dtypes) {
      for (std::int64_t n : sizes) specs.push_back({op, dtype, n});
    }
  }
  return specs;
}

}  // namespace xb
