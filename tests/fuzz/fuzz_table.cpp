// libFuzzer target for the table reader (validate/table_reader.h): key_averages().table() text,
// crossbench's table.txt and table.json. Any input must parse or raise InputError, never crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "profiler/model/session_io.h"
#include "validate/table_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const xb::TableData t = xb::parse_table(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.txt");
    for (const auto& r : t.rows) (void)t.where(r);
  } catch (const xb::InputError&) {}
  return 0;
}
