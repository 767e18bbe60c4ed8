// libFuzzer target for the events reader (validate/events_reader.h): crossbench's events.json
// and PyTorch reference summary.json. Any input must parse or raise InputError, never crash,
// hang or leak.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "profiler/model/session_io.h"
#include "validate/events_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const xb::EventsData ev =
        xb::parse_events(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.json");
    (void)ev;
  } catch (const xb::InputError&) {}
  return 0;
}
