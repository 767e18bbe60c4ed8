// `bench calibrate` and the cold-mode copy bound on a real GPU: both time device-to-device copies
// with the sampling core (bench/core/fixtures.h: measure_copy), calibrate's GEMMs too. Checks the
// figures are real durations and consistent with each other, not their values. Skips without a
// device.
#include <gtest/gtest.h>

#include "../common/run_command.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "gpu_test.h"

namespace xb {
namespace {

using xb::testing::GpuTest;

TEST_F(GpuTest, CalibrateTimesCopyAndGemmsThroughTheSamplingCore) {
  const auto dir = std::filesystem::temp_directory_path() / "xb_gpu_calibrate";
  std::filesystem::remove_all(dir);
  const auto [code, text] =
      xb::testing::run_command(std::string(XB_BENCH_EXE) +
                               " calibrate --dtype bf16 --gemm-size 512,1024 --copy-mib 64 --calls 5"
                               " --warmup-ms 10 --out " +
                               dir.string());
  ASSERT_EQ(code, 0) << text;
  EXPECT_NE(text.find("samples of"), std::string::npos) << text;  // the core's samples, per line
  nlohmann::json doc;
  std::ifstream(dir / "ceilings.json") >> doc;
  ASSERT_TRUE(doc.contains("copy")) << doc.dump(1);
  const auto& copy = doc["copy"];
  EXPECT_EQ(copy["buffer_bytes"].get<std::uint64_t>(), 64u << 20);
  EXPECT_GE(copy["calls"].get<int>(), 5);  // at least --calls samples of at least one call
  EXPECT_GT(copy["min_ns"].get<double>(), 0.0);
  EXPECT_LE(copy["min_ns"].get<double>(), copy["median_ns"].get<double>());
  EXPECT_NEAR(copy["gbps"].get<double>(), 2.0 * (64 << 20) / copy["median_ns"].get<double>(),
              1e-6 * copy["gbps"].get<double>());
  ASSERT_EQ(doc["gemm"].size(), 2u);
  for (const auto& g : doc["gemm"]) {
    EXPECT_EQ(g["dtype"], "bf16");
    EXPECT_GE(g["calls"].get<int>(), 5);
    EXPECT_GT(g["min_ns"].get<double>(), 0.0);
    EXPECT_LE(g["min_ns"].get<double>(), g["median_ns"].get<double>());
    EXPECT_GT(g["tflops"].get<double>(), 0.0);
  }
  // Clocks: idle, after the copy, after each GEMM, at the end.
  ASSERT_TRUE(doc.contains("clocks")) << doc.dump(1);
  EXPECT_NE(doc.dump().find("right after the copy's samples"), std::string::npos) << doc.dump(1);
  EXPECT_NE(doc.dump().find("right after the bf16 GEMM 1024 samples"), std::string::npos) << doc.dump(1);
  std::filesystem::remove_all(dir);
}

TEST_F(GpuTest, ColdModeMeasuresTheCopyBoundThroughTheSamplingCore) {
  const auto out = std::filesystem::temp_directory_path() / "xb_gpu_cold_bound";
  std::filesystem::remove_all(out);
  const auto [code, text] =
      xb::testing::run_command(std::string(XB_BENCH_EXE) +
                               " --op add --dtype bf16 --size 4096 --mode cold --active-steps 3 --out " + out.string());
  EXPECT_EQ(code, 0) << text;
  // "device-to-device copy B GB/s (cudaMemcpyAsync M GB/s, copy kernel K GB/s; ...)": B = max(M, K).
  const std::regex line(R"(device-to-device copy (\d+) GB/s \(cudaMemcpyAsync (\d+) GB/s, copy kernel (\d+) GB/s)");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(text, m, line)) << text;
  const double best = std::stod(m[1]), memcpy = std::stod(m[2]), kernel = std::stod(m[3]);
  EXPECT_GT(memcpy, 0.0);
  EXPECT_GT(kernel, 0.0);
  EXPECT_NEAR(best, std::max(memcpy, kernel), 1.0);
  std::filesystem::remove_all(out);
}

}  // namespace
}  // namespace xb
