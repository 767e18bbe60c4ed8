// postproc_bench: speed of the profiler's post-processing (docs/performance.md; issue 7,
// "Post-processing"; tools/lab/bench_postproc.sh). A benchmark, not a test: it reports figures.
//
// For each size and repetition a fresh child process pinned to one CPU builds a synthetic session
// (tests/perf/synthetic_session.h: per kernel an ExternalCorrelation record, its cudaLaunchKernel
// record and the kernel record, under ProfilerStep#N > annotation > aten:: CPU op ranges), then
// times once each what bench does after a recording (profiler/exporters/outputs.cpp):
//   build_session          raw records -> event model (profiler/model/event_model.h)
//   build_table            event model -> key_averages()-style table (profiler/exporters/table.h)
//   write_table_text/json  the table as table.txt and table.json
//   write_trace_only       trace_only.json, straight from the raw records
//   write_full_trace       full.json, from the event model
// Every writer runs into a counting ostream that discards the bytes ("null": the formatting cost
// alone), and the two trace writers also into a real file written as bench writes it
// (write_file_atomic into --dir). A fresh process per repetition measures what a real run pays
// (first-touch page faults of new memory included), and the sizes are interleaved, so a noisy
// neighbour affects all of them alike.
// Reported: best and median of R wall times, kernels per second at best, the lowest CPU and kernel
// (system) times, output sizes, peak memory (the children's largest ru_maxrss: the
// raw session, the event model, the table and the writers' buffers together), and a markdown table.
//
//   postproc_bench [--sizes N,N,...] [--repeat R] [--cpu C] [--dir DIR]
//   defaults: 50,000 to 1,000,000 kernels, R = 5, CPU 0 (-1: not pinned), DIR under the temp folder
//
// Targets (issue 7): at 50,000 kernels the table (build_table + both writers) in <= 0.1 s and both
// exports together (write_trace_only + build_session + write_full_trace) in <= 0.5 s, into the
// counting stream and to files; at 1,000,000 kernels the full export (build_session +
// write_full_trace) in <= 1 s on one core, judged on the counting stream: written to a file it
// adds the kernel's page-cache time, which on a VM can exceed the exporter's own cost several
// times over and varies from run to run (the figures show it separately); growth linear (time at
// the largest size / time at the smallest <= 1.1 x the ratio of their kernel counts, the file
// variant shown for reference). Exit status 0 when all are met, 1 otherwise, 2 on usage errors.
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
#include <iostream>
#include <optional>
#include <sstream>
#include <streambuf>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/atomic_file.h"
#include "profiler/exporters/table.h"
#include "profiler/exporters/trace_export.h"
#include "profiler/model/event_model.h"
#include "profiler/model/raw_records.h"
#include "tests/perf/synthetic_session.h"

namespace fs = std::filesystem;

namespace {

/// A stream buffer that counts what is written and keeps none of it.
class CountingBuf final : public std::streambuf {
 public:
  std::uint64_t bytes = 0;

 protected:
  std::streamsize xsputn(const char*, std::streamsize n) override {
    bytes += static_cast<std::uint64_t>(n);
    return n;
  }
  int_type overflow(int_type c) override {
    if (!traits_type::eq_int_type(c, traits_type::eof())) ++bytes;
    return traits_type::not_eof(c);
  }
};

/// The timed steps, in the order they run in each repetition, then the sums reported.
enum Step : int {
  kSession,         ///< build_session
  kTableBuild,      ///< build_table
  kTableText,       ///< write_table_text -> null
  kTableJson,       ///< write_table_json -> null
  kTraceNull,       ///< write_trace_only -> null
  kFullNull,        ///< write_full_trace -> null
  kTraceFile,       ///< write_trace_only -> file
  kFullFile,        ///< write_full_trace -> file
  kTable,           ///< build_table + write_table_text + write_table_json (derived)
  kFullExport,      ///< build_session + write_full_trace -> file (derived)
  kFullExportNull,  ///< build_session + write_full_trace -> null (derived)
  kExportsNull,     ///< write_trace_only + build_session + write_full_trace, null (derived)
  kExportsFile,     ///< the same, to files (derived)
  kSteps
};
constexpr const char* kStepNames[kSteps] = {
    "build_session",
    "build_table",
    "write_table_text (null)",
    "write_table_json (null)",
    "write_trace_only (null)",
    "write_full_trace (null)",
    "write_trace_only (file)",
    "write_full_trace (file)",
    "table: build_table + text + json",
    "full export: build_session + write_full_trace (file)",
    "full export: build_session + write_full_trace (null)",
    "both exports (null): trace_only + build_session + full",
    "both exports (file): trace_only + build_session + full",
};

/// Fixed-size record a child sends back through its pipe: one repetition of one size.
struct Result {
  std::int64_t kernels = 0;
  double generate_s = 0;
  double seconds[kSteps] = {};      ///< wall time
  double cpu_seconds[kSteps] = {};  ///< user + system CPU time of the measuring thread
  double sys_seconds[kSteps] = {};  ///< system (kernel) part of it: page faults, write(2)
  std::uint64_t trace_only_bytes = 0, full_bytes = 0, table_text_bytes = 0, table_json_bytes = 0;
  std::uint64_t records = 0, ranges = 0;
  double raw_rss_mb = 0;   ///< VmHWM after generating the raw session
  double peak_rss_mb = 0;  ///< ru_maxrss of the child (filled in by the parent)
  bool ok = false;
  char error[256] = {};
};

double best_of(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }
double median_of(std::vector<double> s) {
  std::sort(s.begin(), s.end());
  const std::size_t m = s.size() / 2;
  return s.size() % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/// VmHWM (peak resident set) of this process from /proc/self/status, in MB; 0 when unreadable.
double vm_hwm_mb() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  double kb = 0;
  while (std::fgets(line, sizeof line, f)) {
    if (std::sscanf(line, "VmHWM: %lf kB", &kb) == 1) break;
  }
  std::fclose(f);
  return kb / 1024.0;
}

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

/// User and system CPU time of the calling thread, s.
struct CpuTime {
  double user = 0, sys = 0;
  static CpuTime now() {
    struct rusage ru {};
    getrusage(RUSAGE_THREAD, &ru);
    return {static_cast<double>(ru.ru_utime.tv_sec) + static_cast<double>(ru.ru_utime.tv_usec) / 1e6,
            static_cast<double>(ru.ru_stime.tv_sec) + static_cast<double>(ru.ru_stime.tv_usec) / 1e6};
  }
};

/// Times one step: wall, CPU and system time into r's slots for `step`.
template <typename F>
void timed(Result& r, int step, F&& f) {
  const CpuTime c0 = CpuTime::now();
  const auto t0 = Clock::now();
  f();
  r.seconds[step] = since(t0);
  const CpuTime c1 = CpuTime::now();
  r.cpu_seconds[step] = (c1.user - c0.user) + (c1.sys - c0.sys);
  r.sys_seconds[step] = c1.sys - c0.sys;
}

/// Runs the measurements for one size once (in the child).
void measure(std::int64_t kernels, const fs::path& dir, Result& r) {
  r.kernels = kernels;
  const auto t0 = Clock::now();
  const xb::RawSession raw = xb::synthetic_session(kernels);
  r.generate_s = since(t0);
  r.records = raw.records.size();
  r.ranges = raw.ranges.size();
  r.raw_rss_mb = vm_hwm_mb();
  fs::create_directories(dir);
  const fs::path trace_path = dir / "trace_only.json", full_path = dir / "full.json";
  fs::remove(trace_path);
  fs::remove(full_path);

  std::optional<xb::Session> session;
  timed(r, kSession, [&] { session.emplace(xb::build_session(raw)); });
  std::optional<xb::Table> table;
  timed(r, kTableBuild, [&] { table.emplace(xb::build_table(*session)); });
  CountingBuf text, json, trace, full;
  {
    std::ostream out(&text);
    timed(r, kTableText, [&] { xb::write_table_text(*table, out); });
  }
  {
    std::ostream out(&json);
    timed(r, kTableJson, [&] { xb::write_table_json(*table, raw.meta, out); });
  }
  {
    std::ostream out(&trace);
    timed(r, kTraceNull, [&] { xb::write_trace_only(raw, out); });
  }
  {
    std::ostream out(&full);
    timed(r, kFullNull, [&] { xb::write_full_trace(*session, out); });
  }
  r.table_text_bytes = text.bytes;
  r.table_json_bytes = json.bytes;
  r.trace_only_bytes = trace.bytes;
  r.full_bytes = full.bytes;
  timed(r, kTraceFile,
        [&] { xb::write_file_atomic(trace_path, [&](std::ostream& o) { xb::write_trace_only(raw, o); }); });
  timed(r, kFullFile,
        [&] { xb::write_file_atomic(full_path, [&](std::ostream& o) { xb::write_full_trace(*session, o); }); });
  if (fs::file_size(trace_path) != r.trace_only_bytes || fs::file_size(full_path) != r.full_bytes) {
    throw std::runtime_error("file and null outputs differ in size");
  }
  fs::remove(trace_path);
  fs::remove(full_path);

  for (double* v : {r.seconds, r.cpu_seconds, r.sys_seconds}) {
    v[kTable] = v[kTableBuild] + v[kTableText] + v[kTableJson];
    v[kFullExport] = v[kSession] + v[kFullFile];
    v[kFullExportNull] = v[kSession] + v[kFullNull];
    v[kExportsNull] = v[kTraceNull] + v[kSession] + v[kFullNull];
    v[kExportsFile] = v[kTraceFile] + v[kSession] + v[kFullFile];
  }
  r.ok = true;
}

/// Forks a child pinned to `cpu` (-1: not pinned) that measures one size once; its result and
/// peak RSS.
Result run_child(std::int64_t kernels, int cpu, const fs::path& dir) {
  Result r;
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  std::cout.flush();
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    ::close(fds[0]);
    if (cpu >= 0) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(cpu, &set);
      sched_setaffinity(0, sizeof set, &set);
    }
    Result mine;
    try {
      measure(kernels, dir / std::to_string(kernels), mine);
    } catch (const std::exception& e) {
      std::snprintf(mine.error, sizeof mine.error, "%s", e.what());
    }
    const char* p = reinterpret_cast<const char*>(&mine);
    std::size_t left = sizeof mine;
    while (left > 0) {
      const ssize_t n = ::write(fds[1], p, left);
      if (n <= 0) _exit(1);
      p += n;
      left -= static_cast<std::size_t>(n);
    }
    _exit(0);
  }
  ::close(fds[1]);
  char* p = reinterpret_cast<char*>(&r);
  std::size_t got = 0;
  while (got < sizeof r) {
    const ssize_t n = ::read(fds[0], p + got, sizeof r - got);
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fds[0]);
  int status = 0;
  struct rusage ru {};
  wait4(pid, &status, 0, &ru);
  if (got != sizeof r) {
    r = Result{};
    std::snprintf(r.error, sizeof r.error, "the measuring child died (status %d)", status);
    return r;
  }
  r.peak_rss_mb = static_cast<double>(ru.ru_maxrss) / 1024.0;
  return r;
}

std::string group(std::int64_t n) {
  std::string s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::int64_t> sizes = {50'000, 100'000, 200'000, 500'000, 1'000'000};
  int repeat = 5;
  int cpu = 0;
  fs::path dir = fs::temp_directory_path() / "xb_postproc_bench";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "postproc_bench: " << a << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    try {
      if (a == "--sizes") {
        sizes.clear();
        std::stringstream ss(value());
        for (std::string item; std::getline(ss, item, ',');) sizes.push_back(std::stoll(item));
      } else if (a == "--repeat") {
        repeat = std::stoi(value());
      } else if (a == "--cpu") {
        cpu = std::stoi(value());
      } else if (a == "--dir") {
        dir = value();
      } else {
        std::cerr << "usage: postproc_bench [--sizes N,N,...] [--repeat R] [--cpu C (-1: not pinned)] [--dir DIR]\n";
        return 2;
      }
    } catch (const std::exception&) {
      std::cerr << "postproc_bench: bad value for " << a << '\n';
      return 2;
    }
  }
  if (sizes.empty() || repeat < 1 || std::any_of(sizes.begin(), sizes.end(), [](std::int64_t n) { return n < 100; })) {
    std::cerr << "postproc_bench: need sizes >= 100 and --repeat >= 1\n";
    return 2;
  }
  std::sort(sizes.begin(), sizes.end());
  std::string size_list;
  for (const std::int64_t n : sizes) size_list += (size_list.empty() ? "" : ", ") + group(n);
  std::cout << fmt::format("postproc_bench: sizes {}, best and median of {} runs each, {}; files in {}\n", size_list,
                           repeat, cpu >= 0 ? fmt::format("pinned to CPU {}", cpu) : "not pinned", dir.string());

  // One fresh child per (repetition, size), sizes interleaved.
  struct Point {
    std::int64_t kernels = 0;
    std::vector<Result> runs;
    double peak_rss_mb = 0;
    std::vector<double> step(int s) const {
      std::vector<double> v;
      for (const Result& r : runs) v.push_back(r.seconds[s]);
      return v;
    }
    std::vector<double> cpu(int s) const {
      std::vector<double> v;
      for (const Result& r : runs) v.push_back(r.cpu_seconds[s]);
      return v;
    }
    std::vector<double> sys(int s) const {
      std::vector<double> v;
      for (const Result& r : runs) v.push_back(r.sys_seconds[s]);
      return v;
    }
    double best(int s) const { return best_of(step(s)); }
    double median(int s) const { return median_of(step(s)); }
  };
  std::vector<Point> points;
  for (const std::int64_t n : sizes) points.push_back(Point{n, {}, 0});
  for (int rep = 0; rep < repeat; ++rep) {
    for (Point& p : points) {
      Result r = run_child(p.kernels, cpu, dir);
      if (r.error[0] != '\0' || !r.ok) {
        std::cerr << fmt::format("postproc_bench: {} kernels: {}\n", p.kernels, r.error);
        fs::remove_all(dir);
        return 1;
      }
      p.peak_rss_mb = std::max(p.peak_rss_mb, r.peak_rss_mb);
      p.runs.push_back(r);
    }
  }
  fs::remove_all(dir);

  for (const Point& p : points) {
    const Result& r = p.runs.front();
    std::cout << fmt::format(
        "\n{} kernels ({} records, {} ranges; generated in {:.2f} s; raw session {:.0f} MB, peak memory "
        "{:.0f} MB); trace_only.json {:.1f} MB, full.json {:.1f} MB, table.txt {:.1f} kB, table.json "
        "{:.1f} kB\n",
        group(p.kernels), group(static_cast<std::int64_t>(r.records)), group(static_cast<std::int64_t>(r.ranges)),
        r.generate_s, r.raw_rss_mb, p.peak_rss_mb, static_cast<double>(r.trace_only_bytes) / 1e6,
        static_cast<double>(r.full_bytes) / 1e6, static_cast<double>(r.table_text_bytes) / 1e3,
        static_cast<double>(r.table_json_bytes) / 1e3);
    for (int s = 0; s < kSteps; ++s) {
      std::cout << fmt::format(
          "  {:<56} best {:8.4f} s  median {:8.4f} s  {:>11} kernels/s;  CPU best {:.4f} s (system {:.4f} s)\n",
          kStepNames[s], p.best(s), p.median(s),
          group(static_cast<std::int64_t>(static_cast<double>(p.kernels) / p.best(s))), best_of(p.cpu(s)),
          best_of(p.sys(s)));
    }
  }

  // Markdown summary: seconds, best / median.
  const auto cell = [](const Point& p, int s) { return fmt::format("{:.3f} / {:.3f}", p.best(s), p.median(s)); };
  std::cout
      << "\n| kernels | build_session | table | trace-only export | full export | both exports | both exports to files "
         "(kernel time) | peak memory |\n"
         "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n";
  for (const Point& p : points) {
    std::cout << fmt::format("| {} | {} | {} | {} | {} | {} | {} ({:.2f}) | {:.0f} MB |\n", group(p.kernels),
                             cell(p, kSession), cell(p, kTable), cell(p, kTraceNull), cell(p, kFullExportNull),
                             cell(p, kExportsNull), cell(p, kExportsFile), best_of(p.sys(kExportsFile)), p.peak_rss_mb);
  }
  std::cout
      << "\nSeconds, best / median of " << repeat
      << " runs, each in a fresh process. table = build_table + write_table_text + write_table_json; trace-only export "
         "= "
         "write_trace_only; full export = build_session + write_full_trace; both exports = write_trace_only + "
         "build_session + write_full_trace; all into a counting stream that keeps nothing, except the column \"to "
         "files\" (write_file_atomic, as bench writes them), whose kernel (system) time at best is in parentheses.\n";

  // Targets: the exporters' own cost (counting stream); the same written to files for reference,
  // since the kernel's page-cache time depends on the machine rather than on crossbench.
  bool ok = true;
  const auto find = [&](std::int64_t n) -> const Point* {
    for (const Point& p : points)
      if (p.kernels == n) return &p;
    return nullptr;
  };
  const auto verdict = [](bool met) { return met ? "met" : "MISSED"; };
  std::cout << '\n';
  if (const Point* p = find(50'000)) {
    const double table = p->best(kTable), exports = p->best(kExportsNull), files = p->best(kExportsFile);
    std::cout << fmt::format(
        "  50,000 kernels: table {:.4f} s best, {:.4f} s median (target <= 0.1 s; PyTorch key_averages: "
        "15.4 s): {}\n",
        table, p->median(kTable), verdict(table <= 0.1));
    std::cout << fmt::format(
        "  50,000 kernels: both exports {:.3f} s best, {:.3f} s median; to files {:.3f} s best, {:.3f} s "
        "median (target <= 0.5 s): {}\n",
        exports, p->median(kExportsNull), files, p->median(kExportsFile), verdict(std::max(exports, files) <= 0.5));
    ok = ok && table <= 0.1 && std::max(exports, files) <= 0.5;
  }
  if (const Point* p = find(1'000'000)) {
    const double full = p->best(kFullExportNull), file = p->best(kFullExport);
    std::cout << fmt::format(
        "  1,000,000 kernels: full export {:.3f} s best, {:.3f} s median (CPU {:.3f} s) (target <= 1 s on one "
        "core): {}\n",
        full, p->median(kFullExportNull), best_of(p->cpu(kFullExportNull)), verdict(full <= 1.0));
    std::cout << fmt::format(
        "  1,000,000 kernels: full export to a file {:.3f} s best, {:.3f} s median, of which kernel time {:.3f} "
        "s at best (page cache): {}\n",
        file, p->median(kFullExport), best_of(p->sys(kFullExport)), verdict(file <= 1.0));
    ok = ok && full <= 1.0;
  }
  if (points.size() >= 2) {
    const Point& a = points.front();
    const Point& b = points.back();
    const double size_ratio = static_cast<double>(b.kernels) / static_cast<double>(a.kernels);
    for (const int s : {kSession, kTable, kTraceNull, kFullNull, kExportsNull, kExportsFile}) {
      const double ratio = b.best(s) / a.best(s), ratio_med = b.median(s) / a.median(s);
      const bool linear = std::min(ratio, ratio_med) <= 1.1 * size_ratio;
      std::cout << fmt::format(
          "  growth of {}: {:.1f}x (best) / {:.1f}x (median) for {:.0f}x kernels (target <= {:.0f}x): {}\n",
          kStepNames[s], ratio, ratio_med, size_ratio, 1.1 * size_ratio,
          s == kExportsFile ? (linear ? "met" : "not linear (page cache)") : verdict(linear));
      if (s != kExportsFile) ok = ok && linear;
    }
  }
  return ok ? 0 : 1;
}
