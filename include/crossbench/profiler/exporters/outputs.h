// One call that writes a recorded session's files: what a user profiling their own kernels with
// the installed library (find_package(crossbench), crossbench::profiler) needs after
// Profiler::stop(). bench writes the same files plus its own (bench/core/run_dir.h).
#pragma once

#include <filesystem>

#include "profiler/model/raw_records.h"

namespace xb {

/// Writes into `dir` (created when missing), each file atomically (docs/formats.md):
/// raw_session.json (replayable: `bench --replay`), table.txt and table.json (key_averages()-style
/// table), trace_only.json and full.json (Chrome traces; full.json opens in Perfetto and HTA).
/// Throws std::invalid_argument for an inconsistent session, std::runtime_error when a file cannot
/// be written.
void write_profile_outputs(const RawSession& raw, const std::filesystem::path& dir);

}  // namespace xb
