// (De)serialization of a RawSession as `raw_session.json` (docs/formats.md).
#pragma once

#include <filesystem>
#include <ostream>
#include <stdexcept>
#include <string>

#include "common/errors.h"     // InputError, thrown by the readers below
#include "common/text_file.h"  // read_text_file, which the readers below use
#include "profiler/model/raw_records.h"

namespace xb {

/// Serializes a session (streamed, one record per line): only the fields each record kind
/// carries are written; ExternalCorrelation records have no start_ns/end_ns. The client's metadata
/// blocks go into "meta" beside the profiler's keys, its fixtures into "fixtures", each as the text
/// given. Throws std::invalid_argument when a metadata key is the profiler's own or a block's or
/// fixture's text is not JSON, std::runtime_error when the stream fails.
void write_raw_session(const RawSession& session, std::ostream& out);

/// Parses raw_session.json text. Strict: requires crossbench.format == "raw_session" and
/// version 1, every key of docs/formats.md with its JSON type, integers in range of their field
/// (no fractions, no negative unsigned), finite doubles; extra keys are ignored, except in "meta",
/// where each becomes a MetadataBlock (the client's metadata, its text re-serialized compactly),
/// and each "fixtures" element must be an object with a string "name" (the rest is the client's,
/// kept as FixtureBlock::json; bench/core/fixture_records.h reads crossbench's back). Throws
/// InputError naming what is wrong and where ("raw_session: records[12]: missing key
/// \"end_ns\""): not JSON, missing key, wrong type, out of range, unknown kind or category.
RawSession parse_raw_session(const std::string& text);

/// Checks what a session must satisfy before anything is built from it: timestamps
/// 0 <= start <= end, range ids unique and > 0 with existing, acyclic parents, positive event
/// times naming known fixtures and ranges, unique fixture names, a window
/// that ends after it starts. Throws InputError naming the first violation. parse_raw_session
/// calls it.
void check_raw_session(const RawSession& session);

/// Reads and parses a file; throws InputError naming the file.
RawSession read_raw_session(const std::filesystem::path& path);

}  // namespace xb
