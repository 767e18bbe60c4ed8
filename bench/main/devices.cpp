// `--devices`: one child process per device, then the devices side by side (see devices.h).
#include "bench/main/devices.h"

#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>

#include "bench/cli/cli.h"
#include "bench/core/interrupt.h"
#include "bench/core/run_dir.h"
#include "bench/qualify/device_compare.h"
#include "bench/qualify/qualify_aggregate.h"
#include "bench/qualify/qualify_files.h"
#include "bench/sweep/sweep.h"
#include "common/atomic_file.h"
#include "profiler/model/session_io.h"

extern char** environ;

namespace xb {

namespace fs = std::filesystem;

const char* to_string(DevicesCommand c) {
  switch (c) {
    case DevicesCommand::Bench:
      return "bench";
    case DevicesCommand::Sweep:
      return "sweep";
    case DevicesCommand::Qualify:
      return "qualify";
  }
  return "bench";
}

DeviceSelection parse_device_list(const std::string& text) {
  DeviceSelection s;
  if (text == "all") {
    s.all = true;
    return s;
  }
  if (text.empty()) throw UsageError("empty --devices list (give device indices, e.g. 0,1, or all)");
  std::set<int> seen;
  for (const std::string& item : split_list(text)) {
    const bool digits = !item.empty() && item.size() <= 4 &&
                        std::all_of(item.begin(), item.end(), [](char c) { return c >= '0' && c <= '9'; });
    const int index = digits ? std::atoi(item.c_str()) : -1;
    if (!digits || index > kMaxDeviceIndex) {
      throw UsageError(fmt::format("--devices: '{}' is not a device index (0..{}) or all", item, kMaxDeviceIndex));
    }
    if (!seen.insert(index).second) throw UsageError(fmt::format("--devices: device {} is listed twice", index));
    s.indices.push_back(index);
  }
  return s;
}

std::vector<int> resolve_devices(const DeviceSelection& selection, int count) {
  if (selection.all) {
    if (count <= 0) throw UsageError("--devices all: no CUDA device found");
    std::vector<int> all(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) all[static_cast<std::size_t>(i)] = i;
    return all;
  }
  for (int i : selection.indices) {
    if (count >= 0 && i >= count) {
      throw UsageError(
          count == 0 ? fmt::format("--devices {}: no CUDA device found", i)
                     : fmt::format("--devices {}: this machine has {} CUDA device(s) (0..{})", i, count, count - 1));
    }
  }
  return selection.indices;
}

std::optional<std::string> take_option(std::vector<std::string>& args, const std::string& flag) {
  std::optional<std::string> value;
  for (std::size_t i = 0; i < args.size();) {
    std::optional<std::string> found;
    std::size_t take = 0;
    if (args[i] == flag) {
      if (i + 1 >= args.size()) throw UsageError(flag + " needs a value");
      found = args[i + 1];
      take = 2;
    } else if (args[i].rfind(flag + "=", 0) == 0) {
      found = args[i].substr(flag.size() + 1);
      take = 1;
    }
    if (!found) {
      ++i;
      continue;
    }
    if (value) throw UsageError(flag + " is given twice");
    value = found;
    args.erase(args.begin() + static_cast<std::ptrdiff_t>(i), args.begin() + static_cast<std::ptrdiff_t>(i + take));
  }
  return value;
}

std::string child_visible_devices(int index, const char* parent) {
  if (parent == nullptr) return std::to_string(index);
  const std::vector<std::string> entries = split_list(parent);
  if (index < 0 || static_cast<std::size_t>(index) >= entries.size() ||
      entries[static_cast<std::size_t>(index)].empty()) {
    throw UsageError(
        fmt::format("--devices {}: CUDA_VISIBLE_DEVICES='{}' names no device {} (this process sees devices 0..{})",
                    index, parent, index, static_cast<int>(entries.size()) - 1));
  }
  return entries[static_cast<std::size_t>(index)];
}

ChildRunner spawn_runner(const std::string& program) {
  return [program](const std::vector<std::string>& args, const std::string& visible) -> int {
    std::vector<std::string> argv_s{program};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    // This environment with CUDA_VISIBLE_DEVICES replaced.
    std::vector<std::string> env_s;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
      if (std::strncmp(*e, "CUDA_VISIBLE_DEVICES=", 21) != 0) env_s.emplace_back(*e);
    }
    env_s.push_back("CUDA_VISIBLE_DEVICES=" + visible);
    std::vector<char*> envp;
    for (std::string& e : env_s) envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_t pid = 0;
    const int rc = ::posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(), envp.data());
    if (rc != 0) {
      std::fprintf(stderr, "bench: error: cannot start a child for device %s: %s\n", visible.c_str(),
                   std::strerror(rc));
      return 127;
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
      if (errno != EINTR) return 127;
    }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return 1;
  };
}

namespace {

/// argv for a command's own parser: {name, args...}.
struct Argv {
  std::vector<std::string> strings;
  std::vector<const char*> pointers;
  Argv(const std::string& name, const std::vector<std::string>& args) : strings{name} {
    strings.insert(strings.end(), args.begin(), args.end());
    for (const std::string& s : strings) pointers.push_back(s.c_str());
  }
  int argc() const { return static_cast<int>(pointers.size()); }
  const char* const* argv() const { return pointers.data(); }
};

/// What the parent needs of the command's own options.
struct Checked {
  bool help = false;    ///< --help was printed
  bool replay = false;  ///< bench --replay: no GPU needed
  fs::path default_out;
};

/// Checks the command's arguments with its own parser (and, for qualify, reads the suite and the
/// baseline), so that bad input is one line and exit 2 before any folder or child exists.
Checked check_command(DevicesCommand command, const std::string& program, const std::vector<std::string>& args) {
  Checked c;
  switch (command) {
    case DevicesCommand::Bench: {
      const Argv a(program, args);
      const auto o = parse_bench_args(a.argc(), a.argv());
      if (!o) return Checked{true, false, {}};
      for (const std::string& g : o->benchmark_args) {
        if (g.rfind("--benchmark_out=", 0) == 0) {
          throw UsageError(
              "--benchmark_out names one file; with --devices each device's folder has its own benchmark.json");
        }
      }
      c.replay = o->replay.has_value();
      c.default_out = default_run_dir();
      break;
    }
    case DevicesCommand::Sweep: {
      const Argv a("sweep", args);
      if (!parse_sweep_args(a.argc(), a.argv())) return Checked{true, false, {}};
      c.default_out = default_run_dir();
      break;
    }
    case DevicesCommand::Qualify: {
      const Argv a("qualify", args);
      const auto o = parse_qualify_args(a.argc(), a.argv());
      if (!o) return Checked{true, false, {}};
      if (o->update_baseline) {
        throw UsageError("--update-baseline records one baseline from one device; run it without --devices");
      }
      if (!o->from_runs.empty()) throw UsageError("--from-run gates recorded folders; it takes no --devices");
      if (!o->aggregate.empty()) throw UsageError("--aggregate merges recorded qualifications; it takes no --devices");
      (void)read_suite(o->suite);
      (void)read_baseline(o->baseline);
      c.default_out = default_qualify_dir();
      break;
    }
  }
  return c;
}

}  // namespace

int run_on_devices(DevicesCommand command, const std::string& program, std::vector<std::string> args,
                   const std::function<int()>& count_devices, const ChildRunner& runner, std::ostream& log) {
  const std::optional<std::string> devices_text = take_option(args, "--devices");
  if (!devices_text) throw UsageError("no --devices given");
  const DeviceSelection selection = parse_device_list(*devices_text);
  const std::optional<std::string> out_text = take_option(args, "--out");
  if (out_text && out_text->empty()) throw UsageError("empty --out folder");
  const Checked checked = check_command(command, program, args);
  if (checked.help) return 0;
  const fs::path out = out_text ? fs::path(*out_text) : checked.default_out;
  check_run_dir(out);
  // A replay needs no GPU: its list is taken as given (the layout without a device).
  const std::vector<int> devices = resolve_devices(selection, checked.replay && !selection.all ? -1 : count_devices());
  const char* parent_visible = std::getenv("CUDA_VISIBLE_DEVICES");
  std::vector<std::string> visible;
  for (int i : devices) visible.push_back(child_visible_devices(i, parent_visible));

  create_run_dir(out);
  RunDirClaim claim(out);
  install_interrupt_handlers();
  std::vector<DeviceOutcome> outcomes;
  for (std::size_t k = 0; k < devices.size(); ++k) {
    DeviceOutcome d;
    d.index = devices[k];
    d.visible_devices = visible[k];
    d.dir = out / ("device-" + std::to_string(d.index));
    std::vector<std::string> child;
    if (command != DevicesCommand::Bench) child.emplace_back(to_string(command));
    child.insert(child.end(), args.begin(), args.end());
    child.insert(child.end(), {"--out", d.dir.string()});
    std::vector<std::string> shown{program};
    shown.insert(shown.end(), child.begin(), child.end());
    log << fmt::format("\n== device {} ({} of {}, CUDA_VISIBLE_DEVICES={}): {}\n", d.index, k + 1, devices.size(),
                       d.visible_devices, shell_command(shown));
    log.flush();
    d.exit_code = runner(child, d.visible_devices);
    log << fmt::format("== device {}: exit {}\n", d.index, d.exit_code);
    std::error_code ec;
    if (k == 0 && d.exit_code == 2 && !fs::exists(d.dir, ec)) {
      // The child said what was wrong (a usage error applies to every device): nothing is kept.
      return 2;
    }
    outcomes.push_back(std::move(d));
    const int code = outcomes.back().exit_code;
    if (interrupt_signal() != 0 || code == 130 || code == 143) break;
  }
  claim.keep();

  for (DeviceOutcome& d : outcomes) load_device_folder(d, command == DevicesCommand::Qualify);
  DevicesReport report = compare_devices(to_string(command), std::move(outcomes));
  report.created_utc = utc_time("%Y-%m-%dT%H:%M:%SZ");
  report.host = host_name();
  write_file_atomic(out / "devices.md", [&](std::ostream& s) { write_devices_markdown(report, s); });
  write_file_atomic(out / "devices.json", [&](std::ostream& s) { write_devices_json(report, s); });
  int code = report.exit_code;
  std::string fleet_line;
  if (command == DevicesCommand::Qualify) {
    std::vector<fs::path> qualifications;
    for (const DeviceOutcome& d : report.devices) {
      if (fs::exists(d.dir / "qualify.json")) qualifications.push_back(d.dir / "qualify.json");
    }
    if (qualifications.empty()) {
      code = 1;
      fleet_line = "no device wrote a qualify.json";
    } else {
      // A device whose qualify.json cannot be read is reported as failed above; the fleet report
      // merges the readable ones.
      std::vector<QualifySummary> entries;
      for (const fs::path& f : qualifications) {
        try {
          entries.push_back(collect_qualifications({f}).front());
        } catch (const InputError& e) {
          log << "bench: " << e.what() << "\n";
        }
      }
      if (!entries.empty()) {
        const FleetReport fleet = aggregate_qualifications(std::move(entries), report.created_utc);
        write_fleet_reports(fleet, out);
        fleet_line =
            fmt::format("against the baseline: {} (aggregate.md, aggregate.xml, aggregate.json)", fleet.result);
        code = code == 1 || fleet.exit_code == 1 ? 1 : fleet.exit_code;
      } else {
        code = 1;
      }
    }
  }
  release_run_dir(out);

  log << fmt::format("\ndevices side by side ({}): {}\n", to_string(command), devices_result(report));
  for (std::size_t i = 0; i < report.devices.size(); ++i) {
    const DeviceOutcome& d = report.devices[i];
    log << fmt::format("  device {} {} {} {}: {}{}\n", d.index,
                       d.environment.gpu_name.empty() ? "?" : d.environment.gpu_name, d.environment.gpu_uuid,
                       d.environment.gpu_pci_bus_id, report.status[i], d.loaded ? "" : " (" + d.error + ")");
  }
  for (const FixtureAcross& row : report.fixtures) {
    for (std::size_t i = 0; i < row.cells.size(); ++i) {
      if (row.cells[i].flagged()) {
        log << fmt::format("  FLAGGED: device {} {}: {} ({:+.2f}% against the others)\n", report.devices[i].index,
                           row.key, row.cells[i].status, row.cells[i].delta * 100);
      }
    }
  }
  if (!fleet_line.empty()) log << fleet_line << "\n";
  log << "run folder: " << out.string() << " (devices.md, devices.json)\n";
  if (const int sig = interrupt_signal(); sig != 0) return interrupted_exit_code(sig);
  for (const DeviceOutcome& d : report.devices) {
    if (d.exit_code == 130 || d.exit_code == 143) return d.exit_code;
  }
  return code;
}

}  // namespace xb
