// `bench qualify --aggregate DIR...` (docs/qualify.md "A fleet"): many qualifications, one per node
// of a fleet or per device of a node (each a qualify.json), merged into one report with a verdict
// per node: aggregate.md (people), aggregate.xml (JUnit: CI dashboards), aggregate.json (programs).
// `bench qualify --devices` writes the same report over its device folders. Plain C++ (no CUDA);
// CPU-tested in tests/cpu/test_qualify_aggregate.cpp.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace xb {

/// One qualify.json read back: what the fleet report needs of it.
struct QualifySummary {
  std::filesystem::path file;
  std::string label;  ///< where it was found: "<DIR's name>/<folder under DIR>", e.g. "fleet/node-a/device-0"
  std::string node;   ///< qualify.json's host, else the first folder of label under DIR
  std::string created_utc, suite;
  std::string result;  ///< "pass", "regression", "failed" or "inconclusive"
  int exit_code = 0;
  std::string warning;  ///< the allowed mismatch; "" when none
  std::string gpu_name, gpu_uuid, gpu_pci_bus_id, driver_version;
  bool validation_passed = true;  ///< every run folder of it validated
  struct Fixture {
    std::string key, verdict, reason;
    std::optional<double> baseline_median_ns, now_median_ns, delta_pct;
  };
  std::vector<Fixture> fixtures;
};

/// Parses a qualify.json (docs/formats.md). Strict on what it reads: crossbench.format "qualify",
/// version 1; result one of the four, exit_code 0..255, suite.name, environment's gpu_name,
/// gpu_uuid and driver_version (gpu_pci_bus_id and host optional: older files lack them), runs[] with
/// validation_passed, fixtures[] with key, verdict (one of Verdict's names), reason and the medians
/// and delta_pct as numbers or null; other keys are ignored. Throws InputError("qualify.json: ...").
QualifySummary parse_qualify_summary(std::string_view text);
/// Reads and parses a file; throws InputError naming the file.
QualifySummary read_qualify_summary(const std::filesystem::path& file);

/// The qualify.json files of each argument: a qualify.json file itself, or every file named
/// qualify.json under a folder (at most 8 levels down), in path order; labels and nodes set. Throws
/// InputError when an argument does not exist, a folder holds none, the same file is reached
/// twice, or a file does not parse.
std::vector<QualifySummary> collect_qualifications(const std::vector<std::filesystem::path>& paths);

/// One node's verdict: the worst of its qualifications.
struct NodeVerdict {
  std::string node;
  std::string result;                ///< worst of its entries: failed > regression > inconclusive > pass
  int exit_code = 0;                 ///< 1 failed or regression, 3 inconclusive, 0 pass
  std::vector<std::size_t> entries;  ///< indices into FleetReport::entries
};

/// One fixture across every qualification.
struct FleetFixture {
  std::string key;
  std::size_t regression = 0, improvement = 0, unchanged = 0, inconclusive = 0, failed = 0, recorded = 0;
  std::string worst_verdict;  ///< failed > regression > inconclusive > improvement > unchanged > recorded
  std::string worst_label;    ///< the entry with the largest delta (or the worst verdict without one)
  std::optional<double> min_delta_pct, median_delta_pct, max_delta_pct;  ///< over entries with a delta
};

/// The merged report.
struct FleetReport {
  std::string created_utc;
  std::string suite;
  std::vector<QualifySummary> entries;
  std::vector<NodeVerdict> nodes;      ///< in first-seen order
  std::vector<FleetFixture> fixtures;  ///< in first-seen order
  std::string result;                  ///< worst over the nodes
  int exit_code = 0;                   ///< 1 failed or regression, 3 inconclusive only, 0 pass
};

/// The result ranking above as an exit code: "failed" and "regression" 1, "inconclusive" 3, "pass" 0.
int exit_code_of_result(const std::string& result);

/// Merges `entries` (non-empty). Throws InputError when they qualify different suites (a fleet
/// report compares like with like) or when two come from one file.
FleetReport aggregate_qualifications(std::vector<QualifySummary> entries, const std::string& created_utc);

/// aggregate.md: the result, the nodes with their verdicts, every qualification (node, label, GPU,
/// UUID, PCI bus id, result, counts), the fixtures across the fleet (verdict counts, delta range,
/// worst entry).
void write_fleet_markdown(const FleetReport& report, std::ostream& out);
/// aggregate.xml (JUnit): one <testsuite name="node.<node>"> per node with its result and GPUs as
/// properties, one test case per qualification and fixture (classname "<node>.<label>", name the
/// fixture key; regression -> failure, failed -> error, inconclusive -> skipped) and one per
/// qualification for its run folders' validation.
void write_fleet_junit(const FleetReport& report, std::ostream& out);
/// aggregate.json: crossbench {format "qualify-aggregate", version 1, created_utc}, suite, result,
/// exit_code, nodes[], entries[], fixtures[] (docs/formats.md).
void write_fleet_json(const FleetReport& report, std::ostream& out);
/// Writes the three files into `dir` (atomically each).
void write_fleet_reports(const FleetReport& report, const std::filesystem::path& dir);

/// `bench qualify --aggregate PATH... [--out DIR]`: collects, merges and writes into `out`
/// (created as a run folder; it must not exist or be empty), prints the node verdicts to `log`.
/// Returns the report's exit code. Throws InputError / UsageError (exit 2, nothing written).
int qualify_aggregate_command(const std::vector<std::filesystem::path>& paths, const std::filesystem::path& out,
                              std::ostream& log);

}  // namespace xb
