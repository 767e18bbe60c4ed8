// Reading a whole file as text, for every reader of every layer (raw_session.json, counters.json,
// the validator's inputs, bench's suites and ceilings). Plain C++.
#pragma once

#include <filesystem>
#include <string>

namespace xb {

/// Reads a whole file into a string (bytes as they are); throws InputError (common/errors.h)
/// "<path>: cannot open[: why]" when it can't, "<path>: read failed" when the read stops short.
std::string read_text_file(const std::filesystem::path& path);

}  // namespace xb
