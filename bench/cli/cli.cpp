#include "bench/cli/cli.h"
#include "bench/core/fixture_plan.h"
#include "common/cli_style.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>

#include "bench/core/api.h"

namespace xb {
namespace {

/// A setting's default as the help prints it: 0.5, 10, 3.
std::string number_text(double v) { return fmt::format("{:g}", v); }

/// Joins repeated list options ("--size 64 --size 128" or "--size 64,128") into one list.
std::vector<std::string> flatten(const std::vector<std::string>& values, const char* what) {
  std::vector<std::string> out;
  for (const std::string& v : values) {
    for (std::string& item : split_list(v)) {
      if (item.empty()) throw UsageError(std::string("empty item in ") + what + " list '" + v + "'");
      out.push_back(std::move(item));
    }
  }
  if (out.empty()) throw UsageError(std::string("empty ") + what + " list");
  return out;
}

template <typename Parse>
std::vector<std::string> checked_names(const std::vector<std::string>& values, const char* what, Parse parse) {
  std::vector<std::string> names = flatten(values, what);
  std::set<std::string> seen;
  for (const std::string& name : names) {
    try {
      parse(name);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    if (!seen.insert(name).second) throw UsageError(std::string("duplicate ") + what + " '" + name + "'");
  }
  return names;
}

/// Google Benchmark reports a bad value of these flags with lines of its own (or ignores it):
/// check them first, so that bad input gets bench's one-line error and exit code 2.
void check_benchmark_flag(const std::string& arg) {
  const auto eq = arg.find('=');
  const std::string flag = arg.substr(0, eq);
  const std::string value = eq == std::string::npos ? "" : arg.substr(eq + 1);
  if (flag == "--benchmark_repetitions") {
    const bool digits = !value.empty() && value.size() < 7 &&
                        std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits || std::stoi(value) < 1) {
      throw UsageError("--benchmark_repetitions needs a positive integer, not '" + value + "'");
    }
  } else if (flag == "--benchmark_min_time") {
    // "0.5", "0.5s" (seconds) or "10x" (iterations), as Google Benchmark 1.8 reads it.
    std::string number = value;
    if (!number.empty() && (number.back() == 's' || number.back() == 'x')) number.pop_back();
    char* end = nullptr;
    const double v = number.empty() ? -1 : std::strtod(number.c_str(), &end);
    if (number.empty() || end != number.c_str() + number.size() || !(v > 0) || v > 1e6) {
      throw UsageError(
          "--benchmark_min_time needs a positive number of seconds (0.5, 0.5s) or iterations (10x), not '" + value +
          "'");
    }
  } else if (flag == "--benchmark_format" || flag == "--benchmark_out_format") {
    if (value != "console" && value != "json" && value != "csv") {
      throw UsageError(flag + " must be console, json or csv, not '" + value + "'");
    }
  }
}

}  // namespace

std::vector<std::string> split_list(const std::string& text, char sep) {
  std::vector<std::string> items;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, sep)) items.push_back(item);
  if (!text.empty() && text.back() == sep) items.emplace_back();
  return items;
}

std::string join_list(const std::vector<std::string>& values) {
  std::string joined;
  for (const std::string& v : values) joined += (joined.empty() ? "" : ",") + v;
  return joined;
}

std::string program_name(const char* argv0) {
  const std::string name = std::filesystem::path(argv0 != nullptr ? argv0 : "").filename().string();
  return name.empty() ? std::string("bench") : name;
}

std::string shell_command(const std::vector<std::string>& words) {
  std::string line;
  for (const std::string& w : words) {
    const bool plain = !w.empty() && std::all_of(w.begin(), w.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             std::strchr("_@%+=:,./-", c) != nullptr;
    });
    if (!line.empty()) line += ' ';
    if (plain) {
      line += w;
      continue;
    }
    line += '\'';
    for (char c : w) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += '\'';
  }
  return line;
}

std::int64_t parse_size(const std::string& item) {
  const bool digits =
      !item.empty() && std::all_of(item.begin(), item.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits) {
    if (item.size() > 1 && item[0] == '-') throw UsageError("size '" + item + "' is negative");
    throw UsageError("size '" + item + "' is not a positive integer");
  }
  errno = 0;
  const unsigned long long value = std::strtoull(item.c_str(), nullptr, 10);
  if (errno == ERANGE || value > static_cast<unsigned long long>(kMaxSize)) {
    throw UsageError("size '" + item + "' is too large (at most " + std::to_string(kMaxSize) + ")");
  }
  if (value == 0) throw UsageError("size '0' must be at least 1");
  return static_cast<std::int64_t>(value);
}

void check_out_file(const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty()) throw UsageError("empty --out file name");
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw UsageError("--out " + path + " is a folder; give a file name");
  const fs::path folder = fs::path(path).parent_path();
  if (!folder.empty() && !fs::is_directory(folder, ec)) {
    throw UsageError("--out " + path + ": folder " + folder.string() + " does not exist");
  }
}

std::vector<std::int64_t> parse_size_list(const std::string& text) {
  std::vector<std::int64_t> sizes;
  std::set<std::int64_t> seen;
  for (const std::string& item : flatten({text}, "size")) {
    const std::int64_t n = parse_size(item);
    if (!seen.insert(n).second) throw UsageError("duplicate size '" + item + "'");
    sizes.push_back(n);
  }
  return sizes;
}

namespace {

/// One end of a size range; UsageError names the range it came from.
std::int64_t range_end(const std::string& text, const std::string& item) {
  try {
    return parse_size(text);
  } catch (const UsageError& e) {
    throw UsageError(std::string(e.what()) + " in size range '" + item + "'");
  }
}

}  // namespace

std::vector<std::int64_t> parse_size_spec(const std::string& text) {
  if (text.empty()) throw UsageError("empty size list");
  std::vector<std::int64_t> sizes;
  std::set<std::int64_t> seen;
  auto add = [&](std::int64_t n, const std::string& item) {
    if (n > kMaxSquareSize) {
      throw UsageError("size " + std::to_string(n) + " (from '" + item + "') is too large (at most " +
                       std::to_string(kMaxSquareSize) + ": the sweep's ops are n x n)");
    }
    if (!seen.insert(n).second) throw UsageError("duplicate size " + std::to_string(n) + " (from '" + item + "')");
    sizes.push_back(n);
  };
  for (const std::string& item : split_list(text, ',')) {
    if (item.empty()) throw UsageError("empty item in size list '" + text + "'");
    if (item.find(':') == std::string::npos) {
      for (std::int64_t n : parse_size_list(item)) add(n, item);
      continue;
    }
    const std::vector<std::string> f = split_list(item, ':');
    if (f.size() != 3) {
      throw UsageError("size range '" + item + "' is not START:END:x2 (e.g. 64:16384:x2)");
    }
    const std::int64_t start = range_end(f[0], item);
    const std::int64_t end = range_end(f[1], item);
    if (f[2] != "x2") {
      throw UsageError("size range '" + item + "': step '" + f[2] +
                       "' is not supported; ranges go by powers of two (x2)");
    }
    if (end < start)
      throw UsageError("size range '" + item + "': end " + std::to_string(end) + " is below start " +
                       std::to_string(start));
    std::int64_t n = start;
    while (n < end) n *= 2;  // end <= kMaxSize = 2^40, so no overflow
    if (n != end) {
      throw UsageError("size range '" + item + "': end " + std::to_string(end) + " is not start " +
                       std::to_string(start) + " times a power of two");
    }
    for (n = start; n <= end; n *= 2) add(n, item);
  }
  return sizes;
}

namespace {

/// The registered benchmarks' names (bench/core/api.h), for messages.
std::string known_ops() {
  std::vector<std::string> names;
  for (const BenchmarkDef& b : registered_benchmarks()) names.push_back(b.name);
  return names.empty() ? std::string("none is registered") : join_list(names);
}

/// Every dtype some registered benchmark takes, in first-seen order.
std::vector<std::string> known_dtypes() {
  std::vector<std::string> out;
  for (const BenchmarkDef& b : registered_benchmarks()) {
    for (const std::string& d : b.dtypes) {
      if (std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> parse_op_list(const std::vector<std::string>& values) {
  return checked_names(values, "op", [](const std::string& s) {
    if (find_benchmark(s) == nullptr)
      throw std::invalid_argument("unknown op '" + s + "' (known: " + known_ops() + ")");
  });
}

std::vector<std::string> parse_dtype_list(const std::vector<std::string>& values) {
  return checked_names(values, "dtype", [](const std::string& s) {
    const std::vector<std::string> known = known_dtypes();
    if (std::find(known.begin(), known.end(), s) == known.end()) {
      throw std::invalid_argument("unknown dtype '" + s + "' (known: " + join_list(known) + ")");
    }
  });
}

std::pair<std::string, double> parse_slow_fixture(const std::string& item) {
  const std::size_t eq = item.rfind('=');
  if (eq == std::string::npos) {
    throw UsageError("--slow-fixture '" + item + "' is not NAME=US (e.g. matmul/bf16/4096=20)");
  }
  const std::string name = item.substr(0, eq);
  const std::string us_text = item.substr(eq + 1);
  const std::vector<std::string> parts = split_list(name, '/');
  if (parts.size() != 3) {
    throw UsageError("--slow-fixture '" + item + "': fixture name '" + name + "' is not op/dtype/size");
  }
  try {
    parse_op_list({parts[0]});
    parse_dtype_list({parts[1]});
  } catch (const UsageError& e) {
    throw UsageError("--slow-fixture '" + item + "': " + e.what());
  }
  const std::int64_t n = parse_size(parts[2]);
  const bool number = !us_text.empty() && us_text.find_first_not_of("0123456789.") == std::string::npos &&
                      std::count(us_text.begin(), us_text.end(), '.') <= 1 && us_text != ".";
  const double us = number ? std::strtod(us_text.c_str(), nullptr) : 0.0;
  if (!number || !(us > 0) || us > kMaxSlowFixtureUs) {
    throw UsageError("--slow-fixture '" + item + "': delay '" + us_text +
                     "' is not a number of microseconds in (0, 1000000]");
  }
  return {fixture_name(parts[0], parts[1], n), us};
}

bool parse_command_line(CLI::App& app, int argc, const char* const* argv, std::string (*tidy)(std::string)) {
  cli::apply_style(app, XB_VERSION);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return false;
  } catch (const CLI::CallForVersion& e) {
    std::cout << e.what() << "\n";
    return false;
  } catch (const CLI::ParseError& e) {
    const std::string message = cli::parse_error_message(app, e, argc, argv);
    throw UsageError(tidy != nullptr ? tidy(message) : message);
  }
  return true;
}

bool has_devices_option(const std::vector<std::string>& args) {
  return std::any_of(args.begin(), args.end(),
                     [](const std::string& a) { return a == "--devices" || a.rfind("--devices=", 0) == 0; });
}

std::optional<BenchOptions> parse_bench_args(int argc, const char* const* argv, const std::string& footer,
                                             bool devices_option) {
  BenchOptions opt;
  for (int i = 0; i < argc; ++i) opt.command += (i == 0 ? "" : " ") + std::string(argv[i]);
  // Google Benchmark's own flags pass through untouched.
  std::vector<const char*> ours{argv[0]};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--benchmark_", 0) == 0) {
      check_benchmark_flag(arg);
      opt.benchmark_args.push_back(arg);
    } else {
      ours.push_back(argv[i]);
    }
  }

  CLI::App app{"crossbench: GPU kernel timings cross-validated between cudaEvent and CUPTI"};
  app.name(program_name(argv[0]));
  app.set_version_flag("--version", std::string("crossbench ") + XB_VERSION);
  if (!footer.empty()) app.footer(footer);
  std::vector<std::string> sizes, ops, dtypes, slow;
  std::string out, replay;
  app.add_option("--size", sizes, "comma-separated sizes n (default: the benchmark's own, else 64,4096)");
  app.add_option("--op", ops, "comma-separated benchmarks: " + known_ops() + " (default all)");
  app.add_option("--dtype", dtypes,
                 "comma-separated dtypes: " + join_list(known_dtypes()) + " (default: each benchmark's first)");
  app.add_flag("--warmup", opt.warmup, "run each fixture until its event time is steady first");
  app.add_option("--wait-steps", opt.wait_steps, "schedule: unrecorded steps per fixture (default 1)");
  app.add_option("--warmup-steps", opt.warmup_steps, "schedule: recorded-then-discarded steps per fixture (default 2)");
  app.add_option("--active-steps", opt.active_steps, "schedule: recorded steps per fixture (default 20)");
  std::string mode = to_string(opt.mode);
  app.add_option("--mode", mode,
                 "hot: back-to-back launches per sample, time divided by launches (default); "
                 "cold: L2 flushed before each sample, which then calls each input copy (up to 16) once");
  app.add_option("--batch", opt.batch, "hot mode: launches per sample (default: auto, ~0.5 ms of GPU time)");
  // The defaults are StoppingSettings' (bench/core/stopping_rule.h), said in the help from there.
  StoppingSettings& st = opt.stopping;
  double max_noise_pct = st.max_noise_fraction * 100;
  app.add_option("--max-noise", max_noise_pct,
                 "stop sampling once the median is known to within this, percent: the half-width of its 95% "
                 "distribution-free interval, widened for drift (default " +
                     number_text(max_noise_pct) + "; docs/metrics.md)");
  app.add_option("--min-samples", st.min_samples,
                 "stopping rule: at least this many samples (default " + std::to_string(st.min_samples) + ")");
  app.add_option("--min-time", st.min_time_s,
                 "stopping rule: at least this many seconds of sampling (default " + number_text(st.min_time_s) + ")");
  app.add_option("--max-time", st.max_time_s,
                 "stopping rule: at most this many seconds per fixture; the output says when the precision target was "
                 "not met (default " +
                     number_text(st.max_time_s) + ")");
  app.add_flag("--no-blocking",
               "enqueue samples without the blocking kernel (the launch gap then falls inside the event interval)");
  app.add_flag("--graph", opt.graph,
               "graph mode: capture each fixture's sample (the batch in hot mode, the call in cold mode) into a "
               "CUDA graph once and replay it with one cudaGraphLaunch per sample");
  app.add_flag("--no-work-signature",
               "skip the probe of what one call enqueues (its kernels, copies and streams) before sampling, which "
               "refuses work the handed stream's events cannot see; for measuring the probe's cost");
  app.add_flag("--no-cupti",
               "event-only mode: time with cudaEvents alone, no CUPTI; validation reports the CUPTI checks as not run");
  app.add_flag("--counters", opt.counters,
               "after the timing pass, a counter pass of its own (CUPTI range profiler, 16 back-to-back calls per "
               "fixture, replayed): "
               "DRAM bytes, FLOPs and throughput per kernel in counters.json, against the model");
  app.add_option("--out", out, "run folder to create (default results/runs/<UTC time>-<pid>)");
  app.add_option("--slow-fixture", slow,
                 "add a known delay of US microseconds to every call of fixture NAME "
                 "(op/dtype/size; a spin kernel after each call), to test a regression gate");
  app.add_option("--replay", replay, "regenerate table, exports and validation from a raw_session.json (no GPU)");
  // bench's main hands a run with --devices to bench/main/devices.h before this parser sees
  // it; the option is here for --help.
  std::string devices;
  if (devices_option) {
    app.add_option("--devices", devices,
                   "run on each device in its own process into OUT/device-N, validated, and compare the "
                   "devices side by side (OUT/devices.md, devices.json)");
  }
  if (!parse_command_line(app, static_cast<int>(ours.size()), ours.data())) return std::nullopt;
  if (!sizes.empty()) {
    opt.sizes = parse_size_list(join_list(sizes));
  } else if (app.count("--size") > 0) {
    throw UsageError("empty size list");
  }
  if (!ops.empty()) opt.ops = parse_op_list(ops);
  if (!dtypes.empty()) opt.dtypes = parse_dtype_list(dtypes);
  if (opt.wait_steps < 0 || opt.wait_steps > 100000) throw UsageError("--wait-steps must be in 0..100000");
  if (opt.warmup_steps < 0 || opt.warmup_steps > 100000) {
    throw UsageError("--warmup-steps must be in 0..100000");
  }
  if (opt.active_steps < 1 || opt.active_steps > 100000) {
    throw UsageError("--active-steps must be in 1..100000");
  }
  opt.blocking = app.count("--no-blocking") == 0;
  opt.cupti = app.count("--no-cupti") == 0;
  opt.work_signature = app.count("--no-work-signature") == 0;
  if (const auto m = timing_mode_named(mode)) {
    opt.mode = *m;
  } else {
    throw UsageError("unknown mode '" + mode + "' (choose hot or cold)");
  }
  if (opt.batch < 0 || opt.batch > kMaxBatch) {
    throw UsageError("--batch must be in 0..." + std::to_string(kMaxBatch) + " (0 = auto)");
  }
  if (opt.mode == TimingMode::Cold && app.count("--batch") > 0) {
    throw UsageError("--batch applies to --mode hot; a cold sample is one launch");
  }
  if (!(max_noise_pct > 0 && max_noise_pct <= 100)) throw UsageError("--max-noise must be in (0, 100] percent");
  st.max_noise_fraction = max_noise_pct / 100;
  if (st.min_samples < 2 || st.min_samples > 1000000) throw UsageError("--min-samples must be in 2..1000000");
  if (!(st.min_time_s >= 0 && st.min_time_s <= 600)) throw UsageError("--min-time must be in 0..600 seconds");
  if (!(st.max_time_s > 0 && st.max_time_s <= 3600)) throw UsageError("--max-time must be in (0, 3600] seconds");
  if (st.max_time_s < st.min_time_s) throw UsageError("--max-time must be at least --min-time");
  if (opt.counters && !opt.cupti)
    throw UsageError("--counters uses CUPTI's profiling API; it cannot go with --no-cupti");
  if (app.count("--out") > 0 && out.empty()) throw UsageError("empty --out folder");
  if (app.count("--replay") > 0 && replay.empty()) throw UsageError("empty --replay file name");
  if (!out.empty()) opt.out = out;
  if (!replay.empty()) opt.replay = std::filesystem::path(replay);
  if (opt.replay) {
    for (const char* flag :
         {"--size", "--op", "--dtype", "--warmup", "--wait-steps", "--warmup-steps", "--active-steps", "--mode",
          "--batch", "--max-noise", "--min-samples", "--min-time", "--max-time", "--no-blocking", "--no-cupti",
          "--no-work-signature", "--slow-fixture", "--graph", "--counters"}) {
      if (app.count(flag) > 0) {
        throw UsageError(std::string("--replay regenerates a recorded session; it takes no ") + flag);
      }
    }
    if (!opt.benchmark_args.empty()) {
      throw UsageError("--replay runs no benchmark; it takes no " + opt.benchmark_args.front());
    }
  }
  for (const std::string& item : slow) {
    // Whether NAME is a fixture of this run is checked against the run's plan (bench/run/bench_run_gpu.cpp).
    auto [name, us] = parse_slow_fixture(item);
    if (!opt.slow_fixtures_us.emplace(name, us).second) throw UsageError("--slow-fixture names " + name + " twice");
  }
  return opt;
}

}  // namespace xb
