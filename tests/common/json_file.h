// Test helper: a JSON file read whole (nlohmann::json throws on a missing or malformed file, which
// fails the test that reads it).
#pragma once

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

namespace xb::testing {

/// The JSON document in `path`.
inline nlohmann::json read_json(const std::filesystem::path& path) {
  nlohmann::json j;
  std::ifstream(path) >> j;
  return j;
}

}  // namespace xb::testing
