// Devices side by side (see device_compare.h).
#include "bench/qualify/device_compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include <nlohmann/json.hpp>

#include "bench/gate/report_format.h"
#include "bench/qualify/qualify_aggregate.h"
#include "common/stats.h"
#include "profiler/model/session_io.h"

namespace xb {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

/// Rank of a device status for the whole report, worst highest.
int status_rank(const std::string& s) {
  if (s == "failed") return 3;
  if (s == "off") return 2;
  if (s == "inconclusive") return 1;
  return 0;
}

std::string text_or_unknown(const std::string& s) { return s.empty() ? std::string("unknown") : s; }

/// The median of `values` (non-empty), as common/stats.h computes it.
double median_of(const std::vector<double>& values) { return compute_stats(values).median; }

}  // namespace

const FixtureRecord* DeviceOutcome::find(const std::string& key) const {
  for (const FixtureRecord& f : fixtures) {
    if (f.key() == key) return &f;
  }
  return nullptr;
}

bool DevicesReport::any_flagged() const {
  return std::any_of(status.begin(), status.end(), [](const std::string& s) { return s == "off"; });
}

void load_device_folder(DeviceOutcome& d, bool qualify) {
  std::error_code ec;
  if (!fs::is_directory(d.dir, ec)) {
    d.error = fmt::format("no folder {} (the child exited with {})", d.dir.string(), d.exit_code);
    return;
  }
  try {
    std::vector<fs::path> run_dirs;
    if (qualify) {
      for (const fs::directory_entry& e : fs::directory_iterator(d.dir)) {
        if (e.is_directory() && e.path().filename().string().rfind("run-", 0) == 0) run_dirs.push_back(e.path());
      }
      std::sort(run_dirs.begin(), run_dirs.end());
      if (fs::exists(d.dir / "qualify.json")) d.qualify_result = read_qualify_summary(d.dir / "qualify.json").result;
      if (run_dirs.empty()) throw InputError(d.dir.string() + ": no run-<mode> folder");
    } else {
      run_dirs.push_back(d.dir);
    }
    for (const fs::path& dir : run_dirs) {
      const LoadedRun run = load_run(dir);
      if (d.run_folders == 0) d.environment = environment_of(run.meta);
      ++d.run_folders;
      d.run_folders_failed += run.validation.passed() ? 0 : 1;
      for (const FixtureRecord& f : run.fixtures) d.fixtures.push_back(f);
    }
    d.loaded = true;
  } catch (const std::exception& e) {
    d.error = e.what();
    d.loaded = false;
  }
}

DevicesReport compare_devices(std::string command, std::vector<DeviceOutcome> devices, const GateRules& rules) {
  DevicesReport r;
  r.command = std::move(command);
  r.devices = std::move(devices);
  r.rules = rules;
  const std::size_t n = r.devices.size();
  // Fixtures in first-seen order over the devices.
  std::map<std::string, std::size_t> index;
  for (const DeviceOutcome& d : r.devices) {
    for (const FixtureRecord& f : d.fixtures) {
      if (index.emplace(f.key(), r.fixtures.size()).second) r.fixtures.push_back(FixtureAcross{f.key(), {}});
    }
  }
  const auto usable = [](const FixtureRecord* f) { return f != nullptr && f->error.empty() && !f->samples_ns.empty(); };
  for (FixtureAcross& row : r.fixtures) {
    row.cells.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      DeviceCell& c = row.cells[i];
      const FixtureRecord* mine = r.devices[i].find(row.key);
      if (!usable(mine)) {
        c.status = "missing";
        c.reason = mine == nullptr ? "not recorded on this device" : (mine->error.empty() ? "no samples" : mine->error);
        continue;
      }
      c.present = true;
      c.median_ns = median_of(mine->samples_ns);
      std::vector<double> other_medians;
      double most_different = -1;
      for (std::size_t j = 0; j < n; ++j) {
        const FixtureRecord* theirs = j == i ? nullptr : r.devices[j].find(row.key);
        if (!usable(theirs)) continue;
        ++c.compared;
        other_medians.push_back(median_of(theirs->samples_ns));
        // The other device as the baseline: the gate's thresholds, test and inconclusive rules as
        // against a stored baseline.
        const GateResult g = gate_fixture(*mine, theirs, r.devices[i].environment.gpu_name, rules);
        c.slower += g.verdict == Verdict::Regression ? 1 : 0;
        c.faster += g.verdict == Verdict::Improvement ? 1 : 0;
        c.inconclusive += g.verdict == Verdict::Inconclusive ? 1 : 0;
        if (std::fabs(g.delta) > most_different) {
          most_different = std::fabs(g.delta);
          c.reason = fmt::format("against device {}: {:+.2f}%, {}", r.devices[j].index, g.delta * 100, g.reason);
        }
      }
      if (c.compared == 0) {
        c.status = "alone";
        c.reason = "no other device recorded this fixture";
        continue;
      }
      c.delta = c.median_ns / median_of(other_medians) - 1;
      // More than half of the others the same way: this device is the odd one.
      if (2 * c.slower > c.compared) {
        c.status = "slower";
      } else if (2 * c.faster > c.compared) {
        c.status = "faster";
      } else if (2 * c.inconclusive >= c.compared) {
        c.status = "inconclusive";
      } else {
        c.status = "consistent";
      }
    }
  }
  r.status.assign(n, "consistent");
  for (std::size_t i = 0; i < n; ++i) {
    const DeviceOutcome& d = r.devices[i];
    std::string& s = r.status[i];
    // A child's exit code: bench and sweep 0 or a failure; qualify 1 and 3 are its verdict against
    // the baseline (shown beside), 2 and signals a failure.
    const bool child_failed = r.command == "qualify" ? d.exit_code == 2 || d.exit_code >= 128 : d.exit_code != 0;
    if (!d.loaded || child_failed || d.run_folders_failed > 0 || (d.qualify_result && *d.qualify_result == "failed")) {
      s = "failed";
      continue;
    }
    if (n == 1) {
      s = "alone";
      continue;
    }
    for (const FixtureAcross& row : r.fixtures) {
      const DeviceCell& c = row.cells[i];
      if (c.flagged()) s = "off";
      if (c.status == "inconclusive" && s == "consistent") s = "inconclusive";
    }
  }
  const std::string result = devices_result(r);
  r.exit_code = result == "failed" || result == "off" ? 1 : 0;
  return r;
}

std::string devices_result(const DevicesReport& r) {
  std::string worst = "consistent";
  for (const std::string& s : r.status) {
    if (status_rank(s) > status_rank(worst)) worst = s;
  }
  return worst;
}

void write_devices_markdown(const DevicesReport& r, std::ostream& out) {
  out << "# crossbench devices side by side: " << r.command << "\n\n";
  out << fmt::format("**Result: {}** (exit {}): {} device(s) on {}; created {}\n\n", devices_result(r), r.exit_code,
                     r.devices.size(), text_or_unknown(r.host), r.created_utc);
  const bool qualify = r.command == "qualify";
  out << "| device | CUDA_VISIBLE_DEVICES | GPU | UUID | PCI bus id | exit | run folders | validation |"
      << (qualify ? " against the baseline |" : "") << " status |\n| ---: | --- | --- | --- | --- | ---: | ---: | --- |"
      << (qualify ? " --- |" : "") << " --- |\n";
  for (std::size_t i = 0; i < r.devices.size(); ++i) {
    const DeviceOutcome& d = r.devices[i];
    const std::string validation = !d.loaded ? "unreadable: " + d.error
                                   : d.run_folders_failed == 0
                                       ? std::string("passed")
                                       : fmt::format("FAILED ({} of {})", d.run_folders_failed, d.run_folders);
    out << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |", d.index, markdown_cell(d.visible_devices),
                       markdown_cell(text_or_unknown(d.environment.gpu_name)),
                       markdown_cell(text_or_unknown(d.environment.gpu_uuid)),
                       markdown_cell(text_or_unknown(d.environment.gpu_pci_bus_id)), d.exit_code,
                       markdown_cell(d.dir.filename().string()), markdown_cell(validation));
    if (qualify) out << " " << (d.qualify_result ? *d.qualify_result : std::string("-")) << " |";
    out << " " << r.status[i] << " |\n";
  }
  if (!r.fixtures.empty()) {
    out << "\n## Medians per call (us), each against the other devices'\n\n| fixture |";
    for (const DeviceOutcome& d : r.devices) out << " device " << d.index << " |";
    out << "\n| --- |";
    for (std::size_t i = 0; i < r.devices.size(); ++i) out << " ---: |";
    out << "\n";
    for (const FixtureAcross& row : r.fixtures) {
      out << "| " << markdown_cell(row.key) << " |";
      for (const DeviceCell& c : row.cells) {
        if (!c.present) {
          out << " - |";
        } else if (c.compared == 0) {
          out << fmt::format(" {:.3f} |", c.median_ns / 1e3);
        } else {
          out << fmt::format(" {}{:.3f} ({:+.2f}%){} |", c.flagged() ? "**" : "", c.median_ns / 1e3, c.delta * 100,
                             c.flagged()                  ? " " + c.status + "**"
                             : c.status == "inconclusive" ? " ?"
                                                          : "");
        }
      }
      out << "\n";
    }
    bool any = false;
    for (const FixtureAcross& row : r.fixtures) {
      for (std::size_t i = 0; i < row.cells.size(); ++i) {
        const DeviceCell& c = row.cells[i];
        if (!c.flagged() && c.status != "inconclusive") continue;
        if (!any) out << "\n## Flagged and inconclusive\n\n";
        any = true;
        out << fmt::format(
            "- device {} {}: {} (slower than {}, faster than {}, inconclusive against {} of {} others); {}\n",
            r.devices[i].index, row.key, c.status, c.slower, c.faster, c.inconclusive, c.compared,
            markdown_cell(c.reason));
      }
    }
  }
  out << fmt::format(
      "\nRule: each device's samples of a fixture against each other device's through qualify's gate "
      "(docs/qualify.md: Mann-Whitney U at alpha = {}, threshold {:g}% compute- and memory-bound, {:g}% "
      "overhead-bound, "
      "at least {:g}% when both are power-capped; noisy or throttled is inconclusive). A device is flagged slower "
      "(faster) on a fixture when the gate says regression (improvement) against more than half of the other devices; "
      "with two devices a difference flags both. Delta: its median against the median of the others' medians.\n",
      r.rules.alpha, r.rules.threshold * 100, r.rules.overhead_threshold * 100, r.rules.power_capped_threshold * 100);
}

void write_devices_json(const DevicesReport& r, std::ostream& out) {
  json doc;
  doc["crossbench"] = {{"format", "devices"}, {"version", 1}, {"created_utc", r.created_utc}};
  doc["command"] = r.command;
  doc["host"] = r.host;
  doc["result"] = devices_result(r);
  doc["exit_code"] = r.exit_code;
  doc["rules"] = {{"alpha", r.rules.alpha},
                  {"threshold_pct", r.rules.threshold * 100},
                  {"overhead_threshold_pct", r.rules.overhead_threshold * 100},
                  {"power_capped_threshold_pct", r.rules.power_capped_threshold * 100},
                  {"flag", "regression (improvement) against more than half of the other devices"}};
  json devices = json::array();
  for (std::size_t i = 0; i < r.devices.size(); ++i) {
    const DeviceOutcome& d = r.devices[i];
    devices.push_back({{"index", d.index},
                       {"cuda_visible_devices", d.visible_devices},
                       {"dir", d.dir.string()},
                       {"exit_code", d.exit_code},
                       {"loaded", d.loaded},
                       {"error", d.error},
                       {"gpu_name", d.environment.gpu_name},
                       {"gpu_uuid", d.environment.gpu_uuid},
                       {"gpu_pci_bus_id", d.environment.gpu_pci_bus_id},
                       {"driver_version", d.environment.driver_version},
                       {"run_folders", d.run_folders},
                       {"run_folders_failed_validation", d.run_folders_failed},
                       {"qualify_result", d.qualify_result ? json(*d.qualify_result) : json(nullptr)},
                       {"status", r.status[i]}});
  }
  doc["devices"] = devices;
  json fixtures = json::array();
  for (const FixtureAcross& row : r.fixtures) {
    json cells = json::array();
    for (std::size_t i = 0; i < row.cells.size(); ++i) {
      const DeviceCell& c = row.cells[i];
      cells.push_back({{"device", r.devices[i].index},
                       {"median_ns", c.present ? json(c.median_ns) : json(nullptr)},
                       {"delta_pct", c.present && c.compared > 0 ? json(c.delta * 100) : json(nullptr)},
                       {"compared", c.compared},
                       {"slower_than", c.slower},
                       {"faster_than", c.faster},
                       {"inconclusive", c.inconclusive},
                       {"status", c.status},
                       {"reason", c.reason}});
    }
    fixtures.push_back({{"key", row.key}, {"devices", cells}});
  }
  doc["fixtures"] = fixtures;
  out << doc.dump(1) << "\n";
}

}  // namespace xb
