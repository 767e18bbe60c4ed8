// Devices side by side (`--devices`, docs/qualify.md "Several GPUs"): per fixture, each device's
// samples against every other device's through qualify's noise-aware gate (gate_fixture in
// bench/gate/gate.h; no second gate), a device flagged when it is off most of the others, and
// the two summaries devices.md (people) and devices.json (programs). Plain C++ (no CUDA), CPU-tested
// in tests/cpu/test_devices.cpp.
//
// Units: medians in ns per call; deltas as fractions (0.03 = 3%).
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "bench/gate/gate.h"
#include "bench/qualify/qualify_files.h"

namespace xb {

/// What one device's child process left: its folder read back.
struct DeviceOutcome {
  int index = 0;                ///< the device as the parent numbers it (CUDA's order under its CUDA_VISIBLE_DEVICES)
  std::string visible_devices;  ///< CUDA_VISIBLE_DEVICES the child ran with
  std::filesystem::path dir;    ///< OUT/device-<index>
  int exit_code = 0;            ///< the child's exit code (128 + signal when a signal ended it)
  bool loaded = false;          ///< the folder's run folders were read
  std::string error;            ///< why not loaded (one line); "" when loaded
  RunEnvironment environment;   ///< of its (first) run folder: GPU name, UUID, PCI bus id, ...
  std::vector<FixtureRecord> fixtures;        ///< every fixture of its run folders, keyed by FixtureRecord::key
  std::size_t run_folders = 0;                ///< run folders read (bench, sweep: 1; qualify: one per mode)
  std::size_t run_folders_failed = 0;         ///< of those, how many failed validation
  std::optional<std::string> qualify_result;  ///< bench qualify: qualify.json's result against the baseline
  /// The fixture with this key, or null.
  const FixtureRecord* find(const std::string& key) const;
};

/// One device's fixture against the other devices.
struct DeviceCell {
  bool present = false;          ///< the device has this fixture with samples
  double median_ns = 0;          ///< its median per call
  double delta = 0;              ///< median / (median of the other devices' medians) - 1
  std::size_t compared = 0;      ///< other devices with this fixture
  std::size_t slower = 0;        ///< of those, against how many the gate says regression (this device slower)
  std::size_t faster = 0;        ///< ... improvement (this device faster)
  std::size_t inconclusive = 0;  ///< ... inconclusive (noisy, throttled, too few samples on either side)
  /// "slower", "faster" (flagged: off more than half of the others the same way), "inconclusive"
  /// (the gate could not tell against at least half), "consistent", "alone" (no other device has
  /// it), "missing" (this device has no samples of it).
  std::string status;
  std::string reason;  ///< one line: the gate's reason against the most different device
  bool flagged() const { return status == "slower" || status == "faster"; }
};

/// One fixture across the devices (cells in the order of DevicesReport::devices).
struct FixtureAcross {
  std::string key;
  std::vector<DeviceCell> cells;
};

/// The devices side by side.
struct DevicesReport {
  std::string command;  ///< "bench", "sweep" or "qualify"
  std::string created_utc, host;
  std::vector<DeviceOutcome> devices;
  std::vector<FixtureAcross> fixtures;  ///< in first-seen order over the devices
  GateRules rules;
  /// Per device (same order): "consistent", "off" (a fixture flagged), "inconclusive", "failed"
  /// (the child failed or its folder is unusable or did not validate), "alone" (one device).
  std::vector<std::string> status;
  int exit_code = 0;
  bool any_flagged() const;
};

/// Compares every device's fixtures with the other devices'. For each fixture and each pair of
/// devices (d, e) that both have it: gate_fixture(d's record, e's record as the baseline, d's GPU
/// name, rules). Device d's fixture is flagged "slower" when the gate says regression against more
/// than half of the other devices that have it ("faster" for improvement), so one odd GPU among
/// three or more stands out and the normal ones do not; with two devices a difference flags both (the
/// odd one cannot be told; their baseline comparisons, with qualify, can). exit_code: 1 when a device
/// is flagged or a device failed, else 0 (set_exit_code in devices.h combines it with the children's).
DevicesReport compare_devices(std::string command, std::vector<DeviceOutcome> devices, const GateRules& rules = {});

/// Reads a device's folder: bench and sweep: the folder itself is a run folder; qualify: its
/// run-<mode> folders (and qualify.json's result). Never throws: an unusable folder gives
/// loaded = false and the one-line reason.
void load_device_folder(DeviceOutcome& device, bool qualify);

/// devices.md: the devices (index, CUDA_VISIBLE_DEVICES, GPU, UUID, PCI bus id, exit code,
/// validation, qualify result, status), then per fixture each device's median in us with its delta
/// against the others' and a mark when flagged, then the rule.
void write_devices_markdown(const DevicesReport& report, std::ostream& out);

/// devices.json: crossbench {format "devices", version 1, created_utc}, command, host, exit_code,
/// result ("consistent", "off", "inconclusive", "failed"), rules, devices[], fixtures[] (docs/formats.md).
void write_devices_json(const DevicesReport& report, std::ostream& out);

/// "consistent", "off", "inconclusive" or "failed" for the whole report (worst device; "off" ranks
/// above "inconclusive", "failed" above all).
std::string devices_result(const DevicesReport& report);

}  // namespace xb
