// validate_bench: the validator's speed benchmark (docs/performance.md; tools/lab/bench_validate.sh).
//
// Generates a synthetic session of N kernels with their launch calls, CPU ops and annotations
// (ProfilerStep#k > user annotation > 10 CPU ops > 10 cudaLaunchKernel + kernel each, one step per
// 100 kernels), writes its exports with the real exporters of profiler/ (trace_only.json,
// full.json, table.json) and events.json, then runs `validate RUN_DIR` on them in a fresh process
// pinned to one CPU and reports its wall time and peak memory (ru_maxrss of that process). It does
// this for N/10 and N kernels to check that the cost grows linearly.
//
//   validate_bench [--kernels N] [--dir DIR] [--validate PATH] [--repeat R] [--cpu C] [--keep]
//
// --cpu C pins validate to CPU C (default 0); on a shared machine pick the quieter core.
//
// Targets (issue 3): N = 1,000,000 validates in <= 2 s on one core, 10x the events costs <= 11x
// the time, peak memory <= 1.5 GB. Exit status 0 when all are met, 1 otherwise, 2 on usage errors.
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/core/run_dir.h"
#include "common/atomic_file.h"
#include "profiler/exporters/table.h"
#include "profiler/exporters/trace_export.h"
#include "profiler/model/event_model.h"
#include "profiler/model/raw_records.h"
#include "tests/perf/synthetic_session.h"

namespace fs = std::filesystem;

namespace {

/// Writes the run folder's validated files with the real exporters.
void write_exports(const xb::RawSession& raw, const fs::path& dir) {
  fs::create_directories(dir);
  xb::write_file_atomic(dir / "trace_only.json", [&](std::ostream& o) { xb::write_trace_only(raw, o); });
  {
    const xb::Session session = xb::build_session(raw);
    xb::write_file_atomic(dir / "full.json", [&](std::ostream& o) { xb::write_full_trace(session, o); });
    const xb::Table table = xb::build_table(session);
    xb::write_file_atomic(dir / "table.json", [&](std::ostream& o) { xb::write_table_json(table, raw.meta, o); });
  }
  xb::write_file_atomic(dir / "events.json", [&](std::ostream& o) { xb::write_events_json(raw, o); });
}

struct Run {
  int status = -1;
  double seconds = 0;
  double cpu_seconds = 0;  ///< user + system CPU time of the child
  double max_rss_mb = 0;
};

/// Runs `validate DIR` in a child pinned to one CPU; wall time and peak RSS of the child.
Run run_validate(const std::string& exe, const fs::path& dir, int cpu) {
  Run r;
  std::cout.flush();
  std::fflush(stdout);
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof set, &set);
    const std::string out = (dir / "validate.log").string();
    if (!std::freopen(out.c_str(), "w", stdout)) _exit(127);
    const std::string d = dir.string();
    execl(exe.c_str(), exe.c_str(), d.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  struct rusage ru {};
  wait4(pid, &status, 0, &ru);
  const auto t1 = std::chrono::steady_clock::now();
  r.seconds = std::chrono::duration<double>(t1 - t0).count();
  r.max_rss_mb = static_cast<double>(ru.ru_maxrss) / 1024.0;
  r.cpu_seconds = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                  static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  std::int64_t kernels = 1'000'000;
  fs::path dir = fs::temp_directory_path() / "xb_validate_bench";
  std::string exe = (fs::path(argv[0]).parent_path() / "validate").string();
  int repeat = 3;
  int cpu = 0;
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "validate_bench: " << a << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--kernels")
      kernels = std::stoll(value());
    else if (a == "--dir")
      dir = value();
    else if (a == "--validate")
      exe = value();
    else if (a == "--repeat")
      repeat = std::max(1, std::stoi(value()));
    else if (a == "--cpu")
      cpu = std::max(0, std::stoi(value()));
    else if (a == "--keep")
      keep = true;
    else {
      std::cerr
          << "usage: validate_bench [--kernels N] [--dir DIR] [--validate PATH] [--repeat R] [--cpu C] [--keep]\n";
      return 2;
    }
  }
  if (kernels < 1000) {
    std::cerr << "validate_bench: --kernels must be at least 1000\n";
    return 2;
  }
  if (!fs::exists(exe)) {
    std::cerr << "validate_bench: no validate executable at " << exe << " (give --validate PATH)\n";
    return 2;
  }
  std::cout << fmt::format(
      "validate_bench: {} kernels and {} kernels, best of {} runs each, validate pinned to CPU {}\n", kernels / 10,
      kernels, repeat, cpu);
  struct Point {
    std::int64_t kernels;
    std::uint64_t bytes;
    fs::path dir;
    std::vector<double> seconds, cpu_seconds;
    double max_rss_mb = 0;
    static double best_of(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }
    static double median_of(std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
    }
    double best() const { return best_of(seconds); }
    double median() const { return median_of(seconds); }
  };
  std::vector<Point> points;
  bool ok = true;
  for (const std::int64_t n : {kernels / 10, kernels}) {
    const fs::path d = dir / std::to_string(n);
    fs::remove_all(d);
    const auto g0 = std::chrono::steady_clock::now();
    // Generate in a child process: the session takes gigabytes, and a validate child forked from
    // a large parent would count the parent's pages in its peak memory (ru_maxrss).
    std::cout.flush();
    const pid_t gen_pid = fork();
    if (gen_pid == 0) {
      try {
        const xb::RawSession raw = xb::synthetic_session(n);
        write_exports(raw, d);
      } catch (const std::exception& e) {
        std::cerr << "validate_bench: " << e.what() << '\n';
        _exit(1);
      }
      _exit(0);
    }
    int gen_status = 0;
    waitpid(gen_pid, &gen_status, 0);
    if (!WIFEXITED(gen_status) || WEXITSTATUS(gen_status) != 0) {
      std::cerr << "validate_bench: generating the session failed\n";
      return 1;
    }
    std::uint64_t bytes = 0;
    for (const char* f : {"trace_only.json", "full.json", "table.json", "events.json"}) bytes += fs::file_size(d / f);
    const double gen = std::chrono::duration<double>(std::chrono::steady_clock::now() - g0).count();
    std::cout << fmt::format(
        "  {:>9} kernels: {:>7.1f} MB of exports ({:.0f} bytes per kernel), generated in {:.1f} s\n", n,
        static_cast<double>(bytes) / 1e6, static_cast<double>(bytes) / static_cast<double>(n), gen);
    points.push_back({n, bytes, d, {}, {}, 0});
  }
  // Interleaved runs, so that a noisy neighbour affects both sizes alike.
  for (int r = 0; r < repeat; ++r) {
    for (Point& p : points) {
      const Run run = run_validate(exe, p.dir, cpu);
      if (run.status != 0) {
        std::cerr << fmt::format("validate_bench: validate exited with {} on {} (see {})\n", run.status, p.dir.string(),
                                 (p.dir / "validate.log").string());
        ok = false;
      }
      p.seconds.push_back(run.seconds);
      p.cpu_seconds.push_back(run.cpu_seconds);
      p.max_rss_mb = std::max(p.max_rss_mb, run.max_rss_mb);
    }
  }
  for (const Point& p : points) {
    std::cout << fmt::format(
        "  {:>9} kernels: validate best {:.3f} s, median {:.3f} s of {} runs ({:.0f} MB/s at best), peak "
        "memory {:.0f} MB; CPU time (user + system) best {:.3f} s, median {:.3f} s\n",
        p.kernels, p.best(), p.median(), p.seconds.size(), static_cast<double>(p.bytes) / 1e6 / p.best(), p.max_rss_mb,
        Point::best_of(p.cpu_seconds), Point::median_of(p.cpu_seconds));
    if (!keep) fs::remove_all(p.dir);
  }
  const Point& small = points[0];
  const Point& big = points[1];
  const double ratio = big.best() / small.best(), ratio_median = big.median() / small.median();
  const double size_ratio = static_cast<double>(big.kernels) / static_cast<double>(small.kernels);
  const bool time_ok = big.best() <= 2.0, linear_ok = std::min(ratio, ratio_median) <= 1.1 * size_ratio,
             mem_ok = big.max_rss_mb <= 1536;
  std::cout << fmt::format("  time {:.3f} s at best (target <= 2 s): {}\n", big.best(), time_ok ? "met" : "MISSED");
  std::cout << fmt::format(
      "  growth {:.2f}x (best) / {:.2f}x (median) time for {:.0f}x kernels (target <= {:.0f}x): {}\n", ratio,
      ratio_median, size_ratio, 1.1 * size_ratio, linear_ok ? "met" : "MISSED");
  std::cout << fmt::format("  peak memory {:.0f} MB (target <= 1536 MB): {}\n", big.max_rss_mb,
                           mem_ok ? "met" : "MISSED");
  if (!keep) fs::remove_all(dir);
  return ok && time_ok && linear_ok && mem_ok ? 0 : 1;
}
