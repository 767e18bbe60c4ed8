// Strict readers for the JSON files crossbench reads through nlohmann::json's DOM: suites,
// baselines and qualify.json (bench qualify, the fleet aggregate), ceilings.json (bench sweep /
// calibrate), counters.json, and raw_session.json with the client's blocks inside it (the
// harness's "meta.gpu" and fixtures, bench/core/fixture_records.cpp): every required key with its
// type and range, and a one-line InputError naming where ("suite: fixtures[3]: missing key
// \"op\""). nlohmann::json's own at()/get() throw type errors without the file's path in them,
// hence these. The one family of "get this key or fail" accessors and the one wording of their
// failures: raw_session.json's reader reads its records and ranges through a flat,
// allocation-free scanner (FlatObject, profiler/model/session_io.cpp) with accessors of that
// shape, and they say what they find in these words (value_name, not_a_text, out_of_range_text,
// fit_integer). The validator's readers (validate/) read files other tools write too (PyTorch's,
// whose integers may arrive as 3.0), with a leniency these readers must not have. Internal (not
// installed: cmake/install.cmake).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace xb::strict_json {

using nlohmann::json;

/// `text` on one line: control characters become spaces, cut at `max_chars` characters (the last
/// three of them "..."). The one message flattener of every reader and command line.
std::string one_line(std::string text, std::size_t max_chars);
/// one_line at 400 characters, the readers' messages (an overload, not a default argument, so that
/// a command line can pass it as a `std::string (*)(std::string)`).
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
/// An integer of type Int in Int's whole range (std::uint64_t: raw_session.json's ids need all
/// of it); fails "\"key\" is not an integer" or "\"key\" = v is out of range [min, max]".
template <typename Int>
Int need_integer(const json& obj, const char* key, const std::string& where);
/// `doc` is an object with crossbench {"format": format, "version": 1}.
void check_header(const json& doc, const char* format, const std::string& where);

// -- the words of a failure ---------------------------------------------------------------------
// For a reader that checks values of a shape of its own (raw_session.json's flat record scanner),
// so that it says what it finds as the accessors above do.

/// How a message names a value: "\"key\"", or "\"key\"[element]" for an element of an array.
std::string value_name(const char* key, std::ptrdiff_t element = -1);
/// "missing key \"key\"".
std::string missing_key_text(const char* key);
/// "<name> is not <kind>" ("\"id\" is not an integer").
std::string not_a_text(const std::string& name, const char* kind);
/// "<name> = <value> is out of range [lo, hi]".
std::string out_of_range_text(const std::string& name, const std::string& value, const std::string& lo,
                              const std::string& hi);

/// An integer given as `u` (when `is_unsigned`, as nlohmann stores a non-negative one) or as `i`,
/// as an Int when it lies in Int's range; nullopt where it does not.
template <typename Int>
std::optional<Int> fit_integer(bool is_unsigned, std::uint64_t u, std::int64_t i) {
  using Limits = std::numeric_limits<Int>;
  if (is_unsigned) {
    if (u <= static_cast<std::uint64_t>(Limits::max())) return static_cast<Int>(u);
    return std::nullopt;
  }
  if constexpr (Limits::is_signed) {
    if (i >= static_cast<std::int64_t>(Limits::min()) && i <= static_cast<std::int64_t>(Limits::max())) {
      return static_cast<Int>(i);
    }
  } else {
    if (i >= 0 && static_cast<std::uint64_t>(i) <= Limits::max()) return static_cast<Int>(i);
  }
  return std::nullopt;
}

/// out_of_range_text with Int's limits, for a value fit_integer<Int> refused.
template <typename Int>
std::string out_of_range_text(const std::string& name, bool is_unsigned, std::uint64_t u, std::int64_t i) {
  using Limits = std::numeric_limits<Int>;
  return out_of_range_text(name, is_unsigned ? std::to_string(u) : std::to_string(i), std::to_string(Limits::min()),
                           std::to_string(Limits::max()));
}

/// `v` as an Int (named `name` in a failure, `where` the object holding it): fails "<name> is not
/// an integer" or out_of_range_text.
template <typename Int>
Int integer_as(const json& v, const std::string& name, const std::string& where) {
  if (!v.is_number_integer()) fail(where, not_a_text(name, "an integer"));
  const bool is_unsigned = v.is_number_unsigned();
  const std::uint64_t u = is_unsigned ? v.get<std::uint64_t>() : 0;
  const std::int64_t i = is_unsigned ? 0 : v.get<std::int64_t>();
  if (const std::optional<Int> fit = fit_integer<Int>(is_unsigned, u, i)) return *fit;
  fail(where, out_of_range_text<Int>(name, is_unsigned, u, i));
}

template <typename Int>
Int need_integer(const json& obj, const char* key, const std::string& where) {
  return integer_as<Int>(need(obj, key, where), value_name(key), where);
}

}  // namespace xb::strict_json
