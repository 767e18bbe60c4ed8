// libFuzzer target for bench's ceilings reader (bench/core/ceilings.h parse_calibration_json:
// `bench sweep --ceilings FILE`). Any input must parse or raise InputError, never crash, hang or
// leak; what it accepts must be writable again (sweep.json repeats it) and read back the same.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include "bench/core/ceilings.h"
#include "profiler/model/session_io.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  xb::Calibration c;
  try {
    c = xb::parse_calibration_json(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const xb::InputError&) {
    return 0;
  }
  std::ostringstream first, second;
  xb::write_calibration_json(c, first);  // throws (a finding) if it accepted a non-finite number
  xb::write_calibration_json(xb::parse_calibration_json(first.str()), second);
  if (first.str() != second.str()) std::abort();
  return 0;
}
