// Reading a whole file as text, for every reader of every layer (raw_session.json, counters.json,
// the validator's inputs, bench's suites and ceilings). Plain C++.
#pragma once

#include <filesystem>
#include <string>

#include "common/errors.h"

namespace xb {

/// Reads a whole file into a string (bytes as they are); throws InputError (common/errors.h)
/// "<path>: cannot open[: why]" when it can't, "<path>: read failed" when the read stops short.
std::string read_text_file(const std::filesystem::path& path);

/// Reads `path` (read_text_file) and returns `parse(text)`; an InputError that `parse` throws comes
/// back with "<path>: " in front of its message, so a reader's message names the file.
template <typename Parse>
auto parse_text_file(const std::filesystem::path& path, Parse&& parse) -> decltype(parse(std::string())) {
  const std::string text = read_text_file(path);
  try {
    return parse(text);
  } catch (const InputError& e) {
    throw InputError(path.string() + ": " + e.what());
  }
}

}  // namespace xb
