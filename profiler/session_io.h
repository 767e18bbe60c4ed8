// (De)serialization of a RawSession as `raw_session.json` (docs/formats.md).
#pragma once

#include <filesystem>
#include <ostream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "profiler/raw_records.h"

namespace xb {

/// Unusable input (missing file, not JSON, wrong shape). Callers map it to exit code 2.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The "crossbench" metadata block every output file carries (docs/formats.md).
nlohmann::json meta_block(const SessionMeta& meta, const std::string& format);

/// Serializes a session: only the fields each record kind carries are written.
void write_raw_session(const RawSession& session, std::ostream& out);

/// Parses raw_session.json text. Throws InputError naming what is wrong (not JSON, missing key,
/// wrong type, unknown kind).
RawSession parse_raw_session(const std::string& text);

/// Reads and parses a file; throws InputError naming the file.
RawSession read_raw_session(const std::filesystem::path& path);

/// Reads a whole file into a string; throws InputError("<path>: cannot open") when it can't.
std::string read_text_file(const std::filesystem::path& path);

}  // namespace xb
