// The console table `bench` prints (Google Benchmark's display reporter, replaced). Google
// Benchmark's ConsoleReporter does not fit a GPU harness that runs each fixture's whole
// measurement as one benchmark iteration:
// - its context comes from the library and ends with "***WARNING*** Library was built as DEBUG"
//   wherever the library was compiled without NDEBUG (Debian's and Ubuntu's libbenchmark-dev:
//   the line is compiled into reporter.cc, whatever crossbench's own build type), and it prints the
//   host's CPU caches first, which say nothing about a GPU timing;
// - its CPU column is the iteration's CPU time (the whole measurement, about 1 s) and Iterations
//   is 1, the one measure() call;
// - it prints counters with SI prefixes (0.00209 TFLOP/s as "TFLOP/s=2.09141m").
// Building Google Benchmark from source in Release would only remove the first line; this
// reporter fixes all three and works with the system's library as it is (1.7.1 on Debian 12,
// 1.8.x on Ubuntu 24.04). --benchmark_format=json or csv keeps Google Benchmark's own reporters,
// and benchmark.json keeps Google Benchmark's fields (iterations 1), with the per-call figures as
// counters (fixtures.h kCallsCounter, kCpuPerCallCounter). docs/metrics.md describes the columns.
#pragma once

#include <benchmark/benchmark.h>

#include <string>
#include <utility>
#include <vector>

namespace xb {

/// Google Benchmark display reporter of `bench`: the GPU's context lines, then the host's (CPU
/// count and clock, load average, a CPU-scaling note), then one row per fixture:
///   Benchmark   Time (median per call)   CPU (host CPU time per timed call)   Iterations (calls
///   timed)   counters as name=value in plain decimal (TFLOP/s, GB/s, rsd_pct, ...).
/// Time and CPU are in the benchmark's time unit (us for bench's fixtures). A row without the
/// fixture counters (a benchmark not registered by bench) shows Google Benchmark's own figures.
/// No colour (Google Benchmark's colour printer is internal). Not thread-safe, as Google
/// Benchmark's reporters.
class ConsoleReporter : public benchmark::BenchmarkReporter {
 public:
  /// `gpu_context`: (key, value) lines printed first, e.g. {"gpu_name", "NVIDIA H200"}.
  explicit ConsoleReporter(std::vector<std::pair<std::string, std::string>> gpu_context = {})
      : gpu_context_(std::move(gpu_context)) {}
  bool ReportContext(const Context& context) override;
  void ReportRuns(const std::vector<Run>& runs) override;

 private:
  std::vector<std::pair<std::string, std::string>> gpu_context_;
  std::size_t name_width_ = 10;
  bool printed_header_ = false;
};

/// A counter value in plain decimal with 4 significant digits ("0.002091", "3888", "1.25e+06"
/// beyond 1e6): never Google Benchmark's SI prefixes.
std::string plain_number(double value);

}  // namespace xb
