// Strict JSON readers (see strict_json.h).
#include "common/strict_json.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <utility>

#include "common/errors.h"

namespace xb::strict_json {

/// Keeps a message on one line: control characters (a JSON parser quoting a newline it read, ...)
/// become spaces, and it is cut at `max_chars` characters.
std::string one_line(std::string text, std::size_t max_chars) {
  for (char& c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  if (text.size() > max_chars) text = text.substr(0, max_chars < 3 ? 0 : max_chars - 3) + "...";
  return text;
}

std::string one_line(std::string text) { return one_line(std::move(text), 400); }

std::string value_name(const char* key, std::ptrdiff_t element) {
  return element < 0 ? fmt::format("\"{}\"", key) : fmt::format("\"{}\"[{}]", key, element);
}

std::string missing_key_text(const char* key) { return fmt::format("missing key \"{}\"", key); }

std::string not_a_text(const std::string& name, const char* kind) { return name + " is not " + kind; }

std::string out_of_range_text(const std::string& name, const std::string& value, const std::string& lo,
                              const std::string& hi) {
  return fmt::format("{} = {} is out of range [{}, {}]", name, value, lo, hi);
}

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw InputError(one_line(where + ": " + what));
}

/// Quotes a value read from the input for a message (cut, one line).
std::string quote_input(const std::string& s) { return "'" + (s.size() > 60 ? s.substr(0, 57) + "..." : s) + "'"; }

std::string parse_error_text(const json::exception& e, std::size_t input_size) {
  const auto* pe = dynamic_cast<const json::parse_error*>(&e);
  if (pe == nullptr || pe->byte == 0) return one_line(std::string("not valid JSON: ") + e.what());
  const std::size_t at = pe->byte - 1;  // nlohmann counts bytes from 1
  if (at >= input_size) return fmt::format("not valid JSON: truncated at byte {}", input_size);
  // nlohmann's what(): "[json.exception.parse_error.101] parse error at line 1, column 5: syntax
  // error while parsing value - invalid literal; last read: 'tru!'": keep the middle.
  std::string what = e.what();
  if (const auto colon = what.find(": "); colon != std::string::npos) what.erase(0, colon + 2);
  if (const auto last = what.find("; last read"); last != std::string::npos) what.erase(last);
  return one_line(fmt::format("not valid JSON: {} at byte {}", what, at));
}

json parse_json(std::string_view text, const std::string& where) {
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    fail(where, parse_error_text(e, text.size()));
  }
}

const json& need(const json& obj, const char* key, const std::string& where) {
  if (!obj.is_object()) fail(where, "is not an object");
  const auto it = obj.find(key);
  if (it == obj.end()) fail(where, missing_key_text(key));
  return *it;
}

const json& need_object(const json& obj, const char* key, const std::string& where) {
  const json& v = need(obj, key, where);
  if (!v.is_object()) fail(where, not_a_text(value_name(key), "an object"));
  return v;
}

const json& need_array(const json& obj, const char* key, const std::string& where) {
  const json& v = need(obj, key, where);
  if (!v.is_array()) fail(where, not_a_text(value_name(key), "an array"));
  return v;
}

std::string need_string(const json& obj, const char* key, const std::string& where) {
  const json& v = need(obj, key, where);
  if (!v.is_string()) fail(where, not_a_text(value_name(key), "a string"));
  return v.get<std::string>();
}

bool need_bool(const json& obj, const char* key, const std::string& where) {
  const json& v = need(obj, key, where);
  if (!v.is_boolean()) fail(where, not_a_text(value_name(key), "true or false"));
  return v.get<bool>();
}

double need_number(const json& obj, const char* key, const std::string& where) {
  const json& v = need(obj, key, where);
  if (!v.is_number()) fail(where, not_a_text(value_name(key), "a number"));
  const double d = v.get<double>();
  if (!std::isfinite(d)) fail(where, fmt::format("\"{}\" is not finite", key));
  return d;
}

/// An integer in [lo, hi] (no fraction, no exponent form that parses as a float).
std::int64_t need_int(const json& obj, const char* key, const std::string& where, std::int64_t lo, std::int64_t hi) {
  const json& v = need(obj, key, where);
  if (!v.is_number_integer()) fail(where, not_a_text(value_name(key), "an integer"));
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(hi) || (lo > 0 && u < static_cast<std::uint64_t>(lo))) {
      fail(where, out_of_range_text(value_name(key), std::to_string(u), std::to_string(lo), std::to_string(hi)));
    }
    return static_cast<std::int64_t>(u);
  }
  const auto i = v.get<std::int64_t>();
  if (i < lo || i > hi) {
    fail(where, out_of_range_text(value_name(key), std::to_string(i), std::to_string(lo), std::to_string(hi)));
  }
  return i;
}

/// Only these keys may appear in `obj` (user-written files: a typo must not be ignored).
void only_keys(const json& obj, std::initializer_list<const char*> keys, const std::string& where) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool known = false;
    for (const char* k : keys) known = known || it.key() == k;
    if (!known) fail(where, fmt::format("unknown key {}", quote_input(it.key())));
  }
}

/// crossbench {"format": format, "version": 1}.
void check_header(const json& doc, const char* format, const std::string& where) {
  if (!doc.is_object()) fail(where, "not a JSON object");
  const json& cb = need_object(doc, "crossbench", where);
  const std::string f = need_string(cb, "format", where + ": crossbench");
  if (f != format) fail(where, fmt::format("crossbench.format is {}, expected \"{}\"", quote_input(f), format));
  const std::int64_t v = need_int(cb, "version", where + ": crossbench", 0, std::numeric_limits<std::int64_t>::max());
  if (v != 1) fail(where, fmt::format("crossbench.version {} is not supported (this bench reads version 1)", v));
}

}  // namespace xb::strict_json
