// Writes a recorded session's outputs and validates them, for tests that check that the table and
// both exports agree (the validator's cross-checks) on a session they built or replayed.
#pragma once

#include <filesystem>
#include <sstream>
#include <string>

#include "profiler/exporters/outputs.h"
#include "profiler/model/raw_records.h"
#include "validate/validator.h"

namespace xb::testing {

/// Writes `raw`'s files into `dir` (write_profile_outputs; `dir` is emptied first and left in
/// place for further checks) and validates table.json, full.json and trace_only.json there (no
/// events.json: the cudaEvent checks report not run). Returns "" when validation passes, else
/// the validator's printed summary, so `EXPECT_EQ(validate_outputs(raw, dir), "")` shows why.
inline std::string validate_outputs(const RawSession& raw, const std::filesystem::path& dir) {
  std::filesystem::remove_all(dir);
  write_profile_outputs(raw, dir);
  ValidateInputs in;
  in.traces = {dir / "full.json", dir / "trace_only.json"};
  in.table = dir / "table.json";
  const ValidationReport report = validate_files(in);
  if (report.passed()) return "";
  std::ostringstream summary;
  print_summary(report, summary);
  return summary.str();
}

}  // namespace xb::testing
