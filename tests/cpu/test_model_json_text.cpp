// The hand-written JSON text writer behind the exporters: escaping, numbers, chunking.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <iterator>
#include <limits>
#include <random>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "common/json_text.h"
#include "common/units.h"

namespace xb {
namespace {

std::string write_string(const std::string& s, std::size_t chunk = 1 << 20) {
  std::ostringstream out;
  detail::JsonOut o(out, chunk);
  o.string(s);
  o.finish();
  return out.str();
}

TEST(ModelJsonText, EscapesAndParsesBack) {
  const std::string samples[] = {
      "",
      "plain",
      "exactly8",
      "sixteen chars ok",
      "void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<float>>",
      "quote\" in the middle of a long-enough string",
      "back\\slash at offset nine......",
      "tab\tnewline\ncr\rbell\x07 del\x7f",
      "\xC2\xB5s \xE2\x86\x92 \xF0\x9F\x98\x80 multi-byte after eight"};
  for (const std::string& s : samples) {
    const std::string text = write_string(s);
    EXPECT_EQ(nlohmann::json::parse(text).get<std::string>(), s) << text;
  }
  EXPECT_EQ(write_string("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\n\\u0001\"");
  // Invalid UTF-8 (lone continuation, truncated sequence, overlong, surrogate) becomes U+FFFD.
  EXPECT_EQ(nlohmann::json::parse(write_string("x\x80y\xC3")).get<std::string>(), "x\xEF\xBF\xBDy\xEF\xBF\xBD");
  EXPECT_EQ(nlohmann::json::parse(write_string("\xC0\xAF\xED\xA0\x80")).get<std::string>(),
            "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(ModelJsonText, RandomStringsAlwaysParse) {
  std::mt19937 rng(12345);
  const std::string pieces[] = {"a",
                                "Z",
                                "<",
                                ">",
                                ",",
                                " ",
                                "\"",
                                "\\",
                                "\n",
                                "\x01",
                                "\x1f",
                                "\x7f",
                                "\xC2\xB5",
                                "\xE2\x86\x92",
                                "\xF0\x9F\x98\x80",
                                "\x80",
                                "\xFF",
                                "\xC3"};
  for (int round = 0; round < 2000; ++round) {
    std::string s;
    bool valid = true;
    const int len = static_cast<int>(rng() % 40);
    for (int k = 0; k < len; ++k) {
      const std::size_t pick = rng() % std::size(pieces);
      valid &= pick < 15;
      s += pieces[pick];
    }
    const std::string text = write_string(s, 64);
    nlohmann::json parsed;
    ASSERT_NO_THROW(parsed = nlohmann::json::parse(text)) << text;
    if (valid) {
      EXPECT_EQ(parsed.get<std::string>(), s);
    }
  }
}

TEST(ModelJsonText, NumbersMatchReferenceFormatting) {
  std::mt19937_64 rng(7);
  std::ostringstream out;
  std::string expected;
  {
    detail::JsonOut o(out, 64);  // tiny chunk: exercises draining between items
    const std::int64_t edge[] = {0,
                                 1,
                                 -1,
                                 9,
                                 10,
                                 99,
                                 100,
                                 999,
                                 1000,
                                 -1000,
                                 std::numeric_limits<std::int64_t>::max(),
                                 std::numeric_limits<std::int64_t>::min()};
    for (std::int64_t v : edge) {
      o.integer(v);
      o.ch(' ');
      o.us(v);
      o.ch(' ');
      expected += fmt::format("{} {} ", v, format_us(v));
    }
    for (int i = 0; i < 5000; ++i) {
      const auto v = static_cast<std::int64_t>(rng() >> (rng() % 64));
      const std::uint64_t u = rng() >> (rng() % 64);
      o.integer(v);
      o.ch(' ');
      o.integer(u);
      o.ch(' ');
      o.us(-v);
      o.ch(' ');
      o.integer(static_cast<std::int32_t>(v));
      o.ch(' ');
      expected += fmt::format("{} {} {} {} ", v, u, format_us(-v), static_cast<std::int32_t>(v));
    }
    o.number(2105.7064323815503);
    expected += "2105.7064323815503";
    EXPECT_THROW(o.number(std::numeric_limits<double>::quiet_NaN()), std::invalid_argument);
    EXPECT_THROW(o.number(-std::numeric_limits<double>::infinity()), std::invalid_argument);
    o.finish();
  }
  EXPECT_EQ(out.str(), expected);
}

TEST(ModelJsonText, HugeStringGrowsTheBuffer) {
  const std::string big(100000, 'x');
  EXPECT_EQ(write_string(big, 16), "\"" + big + "\"");
}

}  // namespace
}  // namespace xb
