// xb::main (bench/core/api.h) and the error policy every bench command shares (run_command).
#include <filesystem>
#include <iostream>
#include <string>

#include "bench/cli/cli.h"
#include "bench/core/api.h"
#include "bench/core/device.h"
#include "bench/devices/devices.h"
#include "bench/core/run_dir.h"
#include "bench/run/bench_run.h"
#include "profiler/profiler.h"
#include "profiler/session_io.h"

namespace xb {

int run_command(const char* argv0, bool cupti_hint, const std::function<int()>& command) {
  const std::string program = program_name(argv0);
  try {
    return command();
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

int run_main(int argc, char** argv, const std::string& help_footer) {
  // --devices: this program again per device (bench/devices/devices.h), each a plain run.
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (has_devices_option(args)) {
    return run_on_devices(DevicesCommand::Bench, argv[0], args, cuda_device_count, spawn_runner(argv[0]), std::cout);
  }
  const auto opt = parse_bench_args(argc, argv, help_footer);
  if (!opt) return 0;
  return run_bench(*opt, plan_from_options(*opt), argv[0]);
}

int main(int argc, char** argv) {
  return run_command(argc > 0 ? argv[0] : nullptr, true, [&] { return run_main(argc, argv, ""); });
}

}  // namespace xb
