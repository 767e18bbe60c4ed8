// `--devices LIST|all` for bench, bench sweep and bench qualify (docs/qualify.md "Several GPUs"):
// the command runs once per device, each in a child process of its own (this executable again,
// with CUDA_VISIBLE_DEVICES naming that one device, so CUPTI, NVML and the clocks are per device
// and a device's failure cannot take the others down), one after the other, into OUT/device-<N>/;
// then the devices are compared side by side (devices.md, devices.json; device_compare.h) and, for
// qualify, merged into one fleet report (aggregate.*; bench/qualify/qualify_aggregate.h).
// Without --devices nothing changes. Plain C++ (POSIX); the device count comes from the caller.
// A command of the bench executable (its commands library, bench/CMakeLists.txt): the comparison
// is qualify's gate, so a program built on xb::main refuses --devices (bench/run/entry_point.cpp);
// whether arguments hold --devices is has_devices_option (bench/cli/cli.h).
//
// Why sequential: devices of one node share the host's CPU, PCIe switches and power budget, so
// running them at once would measure their contention, not each GPU.
// Why CUDA_VISIBLE_DEVICES rather than cudaSetDevice: CUPTI's activity buffers, NVML's handle and
// the runtime's primary context are per process; a child that sees one device cannot record another.
#pragma once

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace xb {

/// The commands that take --devices.
enum class DevicesCommand { Bench, Sweep, Qualify };
/// "bench", "sweep", "qualify".
const char* to_string(DevicesCommand c);

/// --devices' value.
struct DeviceSelection {
  bool all = false;
  std::vector<int> indices;  ///< in the order given (all: empty)
};

/// Highest device index --devices accepts.
constexpr int kMaxDeviceIndex = 1023;

/// Parses "all" or a comma-separated list of device indices ("0", "0,2,3"): decimal integers in
/// 0..kMaxDeviceIndex, no duplicate, no empty item. Throws UsageError naming the item.
DeviceSelection parse_device_list(const std::string& text);

/// The devices to run: all -> 0..count-1; a list -> itself, each index below `count` when count
/// >= 0 (count < 0: not known, not checked). Throws UsageError ("--devices 3: this machine has 2
/// CUDA devices (0..1)").
std::vector<int> resolve_devices(const DeviceSelection& selection, int count);

/// Takes `flag VALUE` or `flag=VALUE` out of `args`; returns VALUE, nullopt when absent. Throws
/// UsageError when it is given twice or without a value.
std::optional<std::string> take_option(std::vector<std::string>& args, const std::string& flag);

/// CUDA_VISIBLE_DEVICES for the child that runs device `index` as this process numbers it: the
/// index-th entry of this process's CUDA_VISIBLE_DEVICES (`parent`, null when unset), so a Slurm
/// allocation's "2,3" keeps meaning physical GPUs 2 and 3 (entries may be UUIDs or MIG ids), else
/// the index itself. Throws UsageError when `parent` has no such entry.
std::string child_visible_devices(int index, const char* parent);

/// Runs one child: `args` (argv[1..]) with CUDA_VISIBLE_DEVICES set to `visible_devices`, waits for
/// it and returns its exit code (128 + signal when a signal ended it).
using ChildRunner = std::function<int(const std::vector<std::string>& args, const std::string& visible_devices)>;

/// The real runner: posix_spawn of this executable (/proc/self/exe) with argv[0] = `program`, in
/// this process's group (Ctrl-C and Slurm's signals reach the child too), stdout and stderr shared.
/// Returns 127 when it cannot be started.
ChildRunner spawn_runner(const std::string& program);

/// `bench [sweep|qualify] ... --devices LIST|all [--out OUT] ...`: `args` are the command's
/// arguments after its name (after "bench" for the plain run). Checks them with the command's own
/// parser first (bad input: UsageError / InputError, nothing written; --help prints the command's
/// help and returns 0), refuses what cannot be split per device (bench: --benchmark_out=; qualify:
/// --update-baseline, --from-run, --aggregate), resolves the devices (`count_devices`, called
/// unless the run is a --replay of a recorded session, which needs no GPU and takes a list),
/// creates OUT (default as the command's), runs each device through `runner` into OUT/device-<N>
/// in order, stops after a child ended by SIGINT/SIGTERM or one of ours, then reads every device
/// folder back and writes OUT/devices.md and OUT/devices.json (and, for qualify, OUT/aggregate.*).
/// Progress and the summary go to `log`. Returns: 128 + signal when interrupted; 2 when the first
/// device failed with a usage error (nothing kept); for bench and sweep 1 when any device failed or
/// is flagged, else 0; for qualify the fleet report's code (1 regression or failure, 3
/// inconclusive), 1 when a device is flagged or failed.
int run_on_devices(DevicesCommand command, const std::string& program, std::vector<std::string> args,
                   const std::function<int()>& count_devices, const ChildRunner& runner, std::ostream& log);

}  // namespace xb
