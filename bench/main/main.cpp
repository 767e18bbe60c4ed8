// The `bench` executable's main(), the roof of bench/: the one file that includes every command
// (a program built on the measuring API gets xb::main instead, bench/run/entry_point.cpp).
// bench: runs the fixtures, records them with CUPTI, writes the run folder and validates it.
// Exit codes: 0 success, 1 validation failed or a fixture failed, 2 usage or input error.
#include <iostream>
#include <string>
#include <vector>

#include "bench/ab/ab.h"
#include "bench/calibrate/calibrate.h"
#include "bench/cli/cli.h"
#include "bench/compare/compare_report.h"
#include "bench/core/device.h"
#include "bench/main/devices.h"
#include "bench/overhead/overhead.h"
#include "bench/qualify/qualify_command.h"
#include "bench/run/bench_run.h"
#include "bench/run/builtin_ops.h"
#include "bench/sweep/sweep_command.h"

using namespace xb;

#ifdef XB_LAB
namespace xb {
/// `bench tune-add`: the team's tuning command, lab code built with -DXB_LAB=ON alone
/// (tools/lab/tune_add/tune_add.h, linked into this executable from tools/lab/tune_add/).
int tune_add_command(int argc, const char* const* argv);
}  // namespace xb
#endif

namespace {

/// `bench NAME ...` runs NAME's command with argv from NAME on.
struct Subcommand {
  const char* name;
  int (*run)(int argc, const char* const* argv);
  const char* what;
};
constexpr Subcommand kSubcommands[] = {
    {"sweep", sweep_command, "sizes from overhead- to compute-bound: roofline, crossovers (docs/metrics.md)"},
    {"calibrate", calibrate_command, "this GPU's copy and GEMM ceilings (ceilings.json)"},
    {"qualify", qualify_command, "release qualification of a suite against a stored baseline (docs/qualify.md)"},
    {"compare", compare_command,
     "is run B faster or slower than run A? SAME/FASTER/SLOWER/AMBIGUOUS (docs/compare.md)"},
    {"ab", ab_command, "two ops interleaved in one session: the paired ratio B / A"},
    {"overhead", overhead_command, "the profiler's cost per launch, against CUPTI alone and no profiler"},
#ifdef XB_LAB  // the team's tuning command: -DXB_LAB=ON (tools/lab/README.md)
    {"tune-add", tune_add_command, "every configuration of the add kernel timed by CUPTI"},
#endif
};

/// The subcommand that argv[1] names, or nullptr for the plain `bench`.
const Subcommand* find_subcommand(int argc, char** argv) {
  if (argc < 2) return nullptr;
  for (const Subcommand& s : kSubcommands) {
    if (std::string(argv[1]) == s.name) return &s;
  }
  return nullptr;
}

std::string subcommand_help() {
  std::string text = "Subcommands (bench NAME --help for each):\n";
  for (const Subcommand& s : kSubcommands)
    text += "  " + std::string(s.name) + std::string(12 - std::string(s.name).size(), ' ') + s.what + "\n";
  text +=
      "bench, sweep and qualify take --devices LIST|all: each device in its own process into OUT/device-N,\n"
      "then the devices side by side in OUT/devices.md (docs/qualify.md, \"Several GPUs\")\n"
      "Google Benchmark's own --benchmark_* flags (e.g. --benchmark_out=FILE, --benchmark_filter=REGEX) pass\n"
      "through to it; XB_CUPTI_LIBRARY=FILE names the libcupti to load (default: the toolkit's)\n";
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  register_builtin_ops();
  const Subcommand* sub = find_subcommand(argc, argv);
  // --devices for bench, sweep and qualify: this executable again per device, each a run of the
  // command (bench/main/devices.h). A program built on xb::main has no --devices (run_main).
  if (sub == nullptr || std::string(sub->name) == "sweep" || std::string(sub->name) == "qualify") {
    const std::vector<std::string> args(argv + (sub == nullptr ? 1 : 2), argv + argc);
    if (has_devices_option(args)) {
      const DevicesCommand command = sub == nullptr                      ? DevicesCommand::Bench
                                     : std::string(sub->name) == "sweep" ? DevicesCommand::Sweep
                                                                         : DevicesCommand::Qualify;
      return run_command(argv[0], false, [&] {
        return run_on_devices(command, argv[0], args, cuda_device_count, spawn_runner(argv[0]), std::cout);
      });
    }
  }
  // Only the plain bench has --no-cupti; subcommands that need CUPTI say what failed. A
  // subcommand's errors name it ("bench sweep: error: ..."), as its --help header does.
  const std::string program = sub != nullptr ? program_name(argv[0]) + " " + sub->name : std::string(argv[0]);
  return run_command(program.c_str(), sub == nullptr, [&] {
    return sub != nullptr ? sub->run(argc - 1, argv + 1) : run_main(argc, argv, subcommand_help(), true);
  });
}
