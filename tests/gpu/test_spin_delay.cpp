// The spin-delay kernel behind --slow-fixture (kernels/spin_delay.h): it spins for the requested
// time within 10%, and a bench run with --slow-fixture grows that fixture's per-call time by
// about the delay.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "kernels/blocking.h"
#include "kernels/cuda_check.h"
#include "kernels/cuda_raii.h"
#include "kernels/spin_delay.h"
#include "tests/common/run_command.h"
#include "tests/gpu/gpu_test.h"

namespace xb {
namespace {

using xb::testing::GpuTest;

class SpinDelay : public GpuTest {};

/// Median per-call time, ns, of `calls` back-to-back delays of `delay_ns`, queued behind the
/// blocking kernel (so that the host's launch gap stays outside the events), over 7 repetitions.
double per_call_ns(std::int64_t delay_ns, int calls) {
  Stream stream;
  BlockingKernel blocking;
  warm_up_spin_delay(stream.get());
  Event start, stop;
  std::vector<double> per_call;
  for (int rep = 0; rep < 7; ++rep) {
    blocking.block(stream.get());
    start.record(stream.get());
    for (int i = 0; i < calls; ++i) enqueue_spin_delay(stream.get(), delay_ns);
    stop.record(stream.get());
    blocking.release();
    stop.synchronize();
    EXPECT_FALSE(blocking.timed_out());
    per_call.push_back(static_cast<double>(stop.elapsed_ms_since(start)) * 1e6 / calls);
  }
  std::sort(per_call.begin(), per_call.end());
  return per_call[per_call.size() / 2];
}

TEST_F(SpinDelay, SpinsForTheRequestedTimeWithinTenPercent) {
  // Per call: the spin plus the GPU's gap between two dependent kernels (about 1 us), hence
  // delays of 50 us and more for a 10% bound.
  for (const std::int64_t us : {50, 200, 1000}) {
    const double got = per_call_ns(us * 1000, 10);
    EXPECT_GE(got, 0.99 * static_cast<double>(us) * 1000) << us << " us requested";
    EXPECT_LE(got, 1.10 * static_cast<double>(us) * 1000) << us << " us requested";
  }
}

TEST_F(SpinDelay, ZeroDelayIsShortAndBadDelaysThrow) {
  EXPECT_LT(per_call_ns(0, 20), 5000.0);
  Stream stream;
  EXPECT_THROW(enqueue_spin_delay(stream.get(), -1), std::invalid_argument);
  EXPECT_THROW(enqueue_spin_delay(stream.get(), kMaxSpinDelayNs + 1), std::invalid_argument);
  stream.synchronize();
}

TEST_F(SpinDelay, SlowFixtureGrowsThePerCallTimeByTheDelay) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("xb-slow-fixture-" + std::to_string(::getpid()));
  fs::remove_all(root);
  auto median_of = [&](const std::string& extra, const std::string& name) {
    const fs::path out = root / name;
    const auto [code, text] =
        xb::testing::run_command(std::string(XB_BENCH_EXE) + " --op add --size 4096 --min-time 0.3 --max-time 1 " +
                                 extra + " --out " + out.string());
    EXPECT_EQ(code, 0) << text;
    std::ifstream in(out / "events.json");
    const nlohmann::json j = nlohmann::json::parse(in);
    return j["fixtures"][0]["stats"]["median_ns"].get<double>();
  };
  const double plain = median_of("", "plain");
  const double slowed = median_of("--slow-fixture add/bf16/4096=20", "slowed");
  // 20 us of spin plus the GPU's gap between two dependent kernels (about 1 us on the H200).
  EXPECT_GE(slowed - plain, 19'000.0) << plain << " -> " << slowed;
  EXPECT_LE(slowed - plain, 24'000.0) << plain << " -> " << slowed;
  fs::remove_all(root);
}

}  // namespace
}  // namespace xb
