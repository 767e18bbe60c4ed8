// xb::main (bench/core/api.h) and the error policy every bench command shares (run_command).
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

#include "bench/cli/cli.h"
#include "bench/core/api.h"
#include "bench/core/device_failure.h"
#include "bench/core/run_dir.h"
#include "bench/run/bench_run.h"
#include "kernels/cuda_check.h"
#include "profiler/model/profiler.h"
#include "profiler/model/session_io.h"

namespace xb {

namespace {

/// Ends the process after a hung call (cuda_hung_s): the hung kernel still holds the device, so
/// the CUDA runtime's teardown at exit (and any destructor left that frees device memory) would
/// wait for it forever. The run folder is written and the line printed by now; the streams are
/// flushed, and std::_Exit skips the static destructors and atexit handlers (the driver reclaims
/// the context when the process ends).
[[noreturn]] void exit_past_hung_device(int code) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(code);
}

int run_command_guarded(const std::string& program, bool cupti_hint, const std::function<int()>& command) {
  try {
    return command();
  } catch (const RunEndedByDevice& e) {
    // A device fault or hang ended the run after writing what it could: its one line, as it is.
    std::cerr << e.what() << "\n";
    return 1;
  } catch (const UsageError& e) {
    std::cerr << program << ": error: " << e.what() << "\n";
    return 2;
  } catch (const InputError& e) {
    std::cerr << program << ": error: " << e.what() << "\n";
    return 2;
  } catch (const ProfilerError& e) {
    std::cerr << program << ": error: CUPTI: " << e.what()
              << (cupti_hint ? " (to time with cudaEvents alone, rerun with --no-cupti)" : "") << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << program << ": error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace

int run_command(const char* argv0, bool cupti_hint, const std::function<int()>& command) {
  const int code = run_command_guarded(program_name(argv0), cupti_hint, command);
  if (cuda_hung_s() > 0) exit_past_hung_device(code);
  return code;
}

int run_main(int argc, char** argv, const std::string& help_footer, bool bench_executable) {
  if (!bench_executable) {
    // A user's program links the measuring core (crossbench::bench) only: the commands, and
    // --devices (whose side-by-side comparison is qualify's gate), live in the bench executable's
    // commands library (bench/CMakeLists.txt).
    const std::vector<std::string> args(argv + 1, argv + argc);
    if (has_devices_option(args)) {
      throw UsageError(
          "--devices is an option of the bench executable (bench --devices LIST|all, docs/qualify.md); "
          "run this program once per device with CUDA_VISIBLE_DEVICES=N instead");
    }
    if (!args.empty() && !args.front().empty() && args.front()[0] != '-') {
      throw UsageError("'" + args.front() +
                       "' is not an option of this program, which takes bench's plain-run options "
                       "(--help); commands (sweep, qualify, calibrate, ab, overhead) are commands of the bench "
                       "executable (bench sweep --help, ...)");
    }
  }
  const auto opt = parse_bench_args(argc, argv, help_footer, bench_executable);
  if (!opt) return 0;
  return run_bench(*opt, plan_from_options(*opt), argv[0]);
}

int main(int argc, char** argv) {
  return run_command(argc > 0 ? argv[0] : nullptr, true, [&] { return run_main(argc, argv, ""); });
}

}  // namespace xb
