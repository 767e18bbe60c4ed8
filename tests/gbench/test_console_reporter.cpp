// bench's console table (bench/run/console_reporter.h) on Google Benchmark's own run: stand-in
// fixtures registered as bench registers its own (one iteration, manual time = the median per
// call, the counters run_fixture sets) go through RunSpecifiedBenchmarks with the reporter, and the
// text is checked: GPU context lines first, no "Library was built as DEBUG" warning (Debian's
// libbenchmark prints one from its own reporter), no CPU-cache block, a CPU column that is the
// host CPU time per call, Iterations that are the calls timed, counters in plain decimal.
#include <benchmark/benchmark.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "bench/core/fixtures.h"
#include "bench/run/console_reporter.h"

namespace xb {
namespace {

/// What run_fixture (bench/core/fixtures_gpu.cpp) reports of a fixture: 2.5 us per call, 12000 calls
/// timed with 0.75 us of host CPU each, 0.00209 TFLOP/s and 3888.16 GB/s.
void stand_in_fixture(benchmark::State& state) {
  for (auto _ : state) state.SetIterationTime(2.5e-6);
  state.counters["TFLOP/s"] = 0.00209141;
  state.counters["GB/s"] = 3888.16;
  state.counters["rsd_pct"] = 0.42;
  state.counters[kCallsCounter] = 12000;
  state.counters[kCpuPerCallCounter] = 0.75;
}

std::string run_console(std::string& context) {
  benchmark::ClearRegisteredBenchmarks();
  benchmark::RegisterBenchmark("saxpy/fp32/4096", stand_in_fixture)
      ->Iterations(1)
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond);
  ConsoleReporter reporter({{"gpu_name", "NVIDIA H200"}, {"gpu_power_limit_w", "700"}});
  std::ostringstream out, err;
  reporter.SetOutputStream(&out);
  reporter.SetErrorStream(&err);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::ClearRegisteredBenchmarks();
  context = err.str();
  return out.str();
}

TEST(ConsoleReporter, GpuContextFirstNoDebugWarningPerCallColumnsAndPlainCounters) {
  std::string context;
  const std::string table = run_console(context);
  const std::string all = context + table;
  EXPECT_EQ(all.find("DEBUG"), std::string::npos) << all;
  EXPECT_EQ(all.find("CPU Caches"), std::string::npos) << all;
  const auto gpu = context.find("gpu_name: NVIDIA H200\ngpu_power_limit_w: 700\n");
  const auto host = context.find("host: ");
  ASSERT_NE(gpu, std::string::npos) << context;
  ASSERT_NE(host, std::string::npos) << context;
  EXPECT_LT(gpu, host) << "the GPU lines come before the host's";

  std::istringstream lines(table);
  std::string line, header, row;
  while (std::getline(lines, line)) {
    if (line.rfind("Benchmark", 0) == 0) header = line;
    if (line.rfind("saxpy/fp32/4096", 0) == 0) row = line;
  }
  ASSERT_FALSE(header.empty()) << table;
  ASSERT_FALSE(row.empty()) << table;
  EXPECT_NE(header.find("Time"), std::string::npos);
  EXPECT_NE(header.find("CPU"), std::string::npos);
  EXPECT_NE(header.find("Iterations"), std::string::npos);
  std::istringstream fields(row);
  std::string name, time, time_unit, cpu, cpu_unit, iterations;
  fields >> name >> time >> time_unit >> cpu >> cpu_unit >> iterations;
  EXPECT_EQ(time, "2.500");  // the manual time: the median per call
  EXPECT_EQ(time_unit, "us");
  EXPECT_EQ(cpu, "0.7500");  // host CPU time per call, not the whole measurement's
  EXPECT_EQ(cpu_unit, "us");
  EXPECT_EQ(iterations, "12000");  // calls timed, not Google Benchmark's one iteration
  EXPECT_NE(row.find("TFLOP/s=0.002091"), std::string::npos) << row;
  EXPECT_NE(row.find("GB/s=3888"), std::string::npos) << row;
  EXPECT_EQ(row.find("m "), std::string::npos) << "an SI prefix: " << row;
  EXPECT_EQ(row.find(kCallsCounter + std::string("=")), std::string::npos) << "shown as Iterations, not a counter";
}

TEST(ConsoleReporter, PlainNumbersHaveNoSiPrefix) {
  EXPECT_EQ(plain_number(0.00209141), "0.002091");
  EXPECT_EQ(plain_number(3888.16), "3888");
  EXPECT_EQ(plain_number(2.09141), "2.091");
  EXPECT_EQ(plain_number(0), "0");
  EXPECT_EQ(plain_number(1.25e7), "1.25e+07");
}

}  // namespace
}  // namespace xb
