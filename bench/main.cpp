// bench: runs the fixtures, records them with CUPTI, writes the run folder and validates it.
// Exit codes: 0 success, 1 validation failed or a fixture failed, 2 usage or input error.
#include <iostream>
#include <string>

#include "bench/ab.h"
#include "bench/bench_run.h"
#include "bench/calibrate.h"
#include "bench/cli.h"
#include "bench/overhead.h"
#include "bench/qualify_run.h"
#include "bench/sweep_run.h"
#include "bench/tune_add.h"
#include "profiler/profiler.h"
#include "profiler/session_io.h"

using namespace xb;

int main(int argc, char** argv) {
  try {
    // Subcommands (bench/sweep_run.h, bench/calibrate.h, bench/overhead.h, bench/qualify_run.h,
    // bench/tune_add.h, bench/ab.h); anything else is the plain `bench` (bench/bench_run.h).
    if (argc > 1 && std::string(argv[1]) == "sweep") return sweep_command(argc - 1, argv + 1);
    if (argc > 1 && std::string(argv[1]) == "calibrate") return calibrate_command(argc - 1, argv + 1);
    if (argc > 1 && std::string(argv[1]) == "overhead") return overhead_command(argc - 1, argv + 1);
    if (argc > 1 && std::string(argv[1]) == "qualify") return qualify_command(argc - 1, argv + 1);
    if (argc > 1 && std::string(argv[1]) == "tune-add") return tune_add_command(argc - 1, argv + 1);
    if (argc > 1 && std::string(argv[1]) == "ab") return ab_command(argc - 1, argv + 1);
    const auto opt = parse_bench_args(argc, argv);
    if (!opt) return 0;
    return run_bench(*opt, plan_from_options(*opt), argv[0]);
  } catch (const UsageError& e) {
    std::cerr << "bench: error: " << e.what() << "\n";
    return 2;
  } catch (const InputError& e) {
    std::cerr << "bench: error: " << e.what() << "\n";
    return 2;
  } catch (const ProfilerError& e) {
    // Only the plain bench has --no-cupti; subcommands that need CUPTI say what failed.
    const bool plain = argc < 2 || std::string(argv[1]).rfind("-", 0) == 0;
    std::cerr << "bench: error: CUPTI: " << e.what()
              << (plain ? " (to time with cudaEvents alone, rerun with --no-cupti)" : "") << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "bench: error: " << e.what() << "\n";
    return 1;
  }
}
