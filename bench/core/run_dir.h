// The run folder: creating it, and writing every output of one recording into it
// (docs/formats.md). Plain C++: used by `bench` after a GPU run and by `bench --replay`.
#pragma once

#include <filesystem>
#include <ostream>
#include <string>
#include <utility>

#include "bench/core/fixture_records.h"
#include "common/stats.h"
#include "profiler/model/raw_records.h"

namespace xb {

/// The current UTC time formatted with strftime's `format`, e.g. "%Y-%m-%dT%H:%M:%SZ".
std::string utc_time(const char* format);

/// This machine's host name (gethostname), "" when it cannot be read: names the node of a result.
std::string host_name();

/// Default run folder: results/runs/<UTC yyyymmdd-hhmmss>-<pid>.
std::filesystem::path default_run_dir();

/// Checks, creating nothing, that create_run_dir(dir) can succeed: `dir` is an empty folder we
/// can write in, or does not exist and its nearest existing parent is a folder we can create
/// folders in (tried with a probe folder that is removed at once, so a root-owned /proc or a
/// read-only mount is caught even where access() would say yes). Throws UsageError naming
/// `dir` and what is wrong. Commands call it before anything slow or device-dependent, so a bad
/// --out is reported as such on any machine.
void check_run_dir(const std::filesystem::path& dir);

/// Creates `dir` (and parents) and claims it with a marker file created exclusively, so two runs
/// given the same folder cannot both write it. Throws UsageError when it exists and is not an
/// empty folder, is claimed by another run, or cannot be created or written; nothing is left
/// behind in that case (neither `dir` nor the parents it created).
void create_run_dir(const std::filesystem::path& dir);

/// Removes the claim marker once every output is written.
void release_run_dir(const std::filesystem::path& dir);

/// Gives a claimed folder back when the run fails before writing anything: removes the claim
/// marker, then `dir` itself if that left it empty (parents create_run_dir made stay). Never throws.
void abandon_run_dir(const std::filesystem::path& dir) noexcept;

/// Gives a claimed folder back (abandon_run_dir) when it goes out of scope, unless disarmed:
/// the guard a command holds from create_run_dir until its folder has something to keep.
class RunDirClaim {
 public:
  explicit RunDirClaim(std::filesystem::path dir) : dir_(std::move(dir)) {}
  ~RunDirClaim() {
    if (armed_) abandon_run_dir(dir_);
  }
  RunDirClaim(const RunDirClaim&) = delete;
  RunDirClaim& operator=(const RunDirClaim&) = delete;
  /// From now on the folder stays, whatever happens.
  void keep() { armed_ = false; }

 private:
  std::filesystem::path dir_;
  bool armed_ = true;
};

/// Writes raw_session.json, events.json, table.txt, table.json, trace_only.json and full.json,
/// each atomically. Throws std::runtime_error (from write_file_atomic) on I/O failure.
void write_run_outputs(const RawSession& raw, const std::filesystem::path& dir);

/// Writes events.json (per-iteration cudaEvent times per fixture, with medians).
void write_events_json(const RawSession& raw, std::ostream& out);

/// Validates the files in `dir` (validate/validator.h), writes validation.json and summary.md,
/// prints the summary to `out`. Returns 0 when every check that ran passed, else 1.
/// `replayed_from`: the raw session a replay read (summary.md then says the folder is a replay, of
/// that file and of the command that recorded it); empty for a live run.
/// Throws InputError when the folder's files are unusable.
int validate_and_report(const std::filesystem::path& dir, std::ostream& out,
                        const std::filesystem::path& replayed_from = {});

/// `bench --replay FILE`: reads a raw session and regenerates every output in `dir`
/// (created as create_run_dir does), then validates. Returns the exit code (0 or 1).
/// Throws InputError for an unusable FILE, UsageError for an unusable `dir`.
int replay_session(const std::filesystem::path& file, const std::filesystem::path& dir, std::ostream& out);

}  // namespace xb
