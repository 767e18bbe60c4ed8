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

namespace {

/// `bench NAME ...` runs NAME's command with argv from NAME on.
struct Subcommand {
  const char* name;
  int (*run)(int argc, const char* const* argv);
};
constexpr Subcommand kSubcommands[] = {
    {"sweep", sweep_command},       {"calibrate", calibrate_command}, {"overhead", overhead_command},
    {"qualify", qualify_command},   {"tune-add", tune_add_command},   {"ab", ab_command},
};

/// The subcommand that argv[1] names, or nullptr for the plain `bench`.
const Subcommand* find_subcommand(int argc, char** argv) {
  if (argc < 2) return nullptr;
  for (const Subcommand& s : kSubcommands) {
    if (std::string(argv[1]) == s.name) return &s;
  }
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  // Subcommands (bench/sweep_run.h, bench/calibrate.h, bench/overhead.h, bench/qualify_run.h,
  // bench/tune_add.h, bench/ab.h); anything else is the plain `bench` (bench/bench_run.h).
  const Subcommand* sub = find_subcommand(argc, argv);
  try {
    if (sub != nullptr) return sub->run(argc - 1, argv + 1);
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
    std::cerr << "bench: error: CUPTI: " << e.what()
              << (sub == nullptr ? " (to time with cudaEvents alone, rerun with --no-cupti)" : "") << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "bench: error: " << e.what() << "\n";
    return 1;
  }
}
