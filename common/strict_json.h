// Strict readers for the JSON files crossbench reads through nlohmann::json's DOM: suites,
// baselines and qualify.json (bench qualify, the fleet aggregate), ceilings.json (bench sweep /
// calibrate) and counters.json: every required key with its type and range, and a one-line
// InputError naming where ("suite: fixtures[3]: missing key \"op\""). nlohmann::json's own
// at()/get() throw type errors without the file's path in them, hence these. The one
// implementation of "get this key or fail" for DOM readers; session_io.cpp keeps typed accessors
// of its own because it reads raw_session.json through a flat, allocation-free record scanner
// (FlatObject) as well as the DOM, and its record ids need the full unsigned 64-bit range; the
// validator's readers (validate/) read files other tools write too (PyTorch's, whose integers may
// arrive as 3.0), with a leniency these readers must not have. Internal (not installed:
// cmake/install.cmake).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace xb::strict_json {

using nlohmann::json;

/// `text` on one line: control characters become spaces, cut at 400 characters.
std::string one_line(std::string text);
/// Throws InputError("<where>: <what>") on one line.
[[noreturn]] void fail(const std::string& where, const std::string& what);
/// A value read from the input quoted for a message ('...', cut at 60 characters).
std::string quote_input(const std::string& s);
/// "not valid JSON: <what> at byte N", one line, for nlohmann::json's parse error `e` on an input
/// of `input_size` bytes. N is the 0-based offset where parsing stopped (parse_error::byte - 1,
/// the same offset the validator's trace reader prints); <what> is "truncated" when that is the
/// end of the input, else nlohmann's message without its "[json.exception.parse_error.101] parse
/// error at line L, column C: " prefix and its "; last read: ..." tail. The one wording of a
/// malformed JSON file for every reader that parses through nlohmann (this file, raw_session.json,
/// the validator's events.json and table.json readers).
std::string parse_error_text(const json::exception& e, std::size_t input_size);
/// Parses `text`; fails with "<where>: not valid JSON: <what> at byte N" (parse_error_text).
json parse_json(std::string_view text, const std::string& where);
/// obj[key], failing when missing; the typed variants fail on another type.
const json& need(const json& obj, const char* key, const std::string& where);
const json& need_object(const json& obj, const char* key, const std::string& where);
const json& need_array(const json& obj, const char* key, const std::string& where);
std::string need_string(const json& obj, const char* key, const std::string& where);
bool need_bool(const json& obj, const char* key, const std::string& where);
/// A finite number.
double need_number(const json& obj, const char* key, const std::string& where);
/// An integer in [lo, hi] (no fraction, no exponent form that parses as a float).
std::int64_t need_int(const json& obj, const char* key, const std::string& where, std::int64_t lo, std::int64_t hi);
/// Only these keys may appear in `obj` (user-written files: a typo must not be ignored).
void only_keys(const json& obj, std::initializer_list<const char*> keys, const std::string& where);
/// `doc` is an object with crossbench {"format": format, "version": 1}.
void check_header(const json& doc, const char* format, const std::string& where);

}  // namespace xb::strict_json
