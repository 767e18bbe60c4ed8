// libFuzzer target for the raw session reader as `bench --replay` reads raw_session.json:
// parse_recorded_session (bench/core/fixture_records.h), the profiler's parse_raw_session (which
// ends with check_raw_session) and then the harness's fixtures and GPU facts. Any input must parse
// or raise InputError, never crash, hang or leak. A session it accepts must then go through
// everything a replay builds from it without crashing, and round-trip:
//   - writing it and reading that back gives the same text when written again (fixpoint);
//   - check_raw_session accepts it again;
//   - build_session either converts it or throws std::invalid_argument (replay's input error);
//     the table, trace-only and full exports are then written (in memory);
//   - the validator's readers read the JSON exports back (what `validate` does after a replay).
//     table.txt is written but not read back: it prints names as they are (as PyTorch's table
//     does), so a name with a NUL, a line break or a run of spaces cannot survive it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

#include "bench/core/fixture_records.h"
#include "profiler/exporters/table.h"
#include "profiler/exporters/trace_export.h"
#include "profiler/model/event_model.h"
#include "profiler/model/session_io.h"
#include "validate/table_reader.h"
#include "validate/trace_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  xb::RawSession raw;
  try {
    raw = xb::parse_recorded_session(text);
  } catch (const xb::InputError&) {
    return 0;
  }
  xb::check_raw_session(raw);  // accepted once, accepted again (throws = a finding)

  std::ostringstream first;
  xb::write_raw_session(raw, first);
  const xb::RawSession again = xb::parse_recorded_session(first.str());  // what we write, we read
  std::ostringstream second;
  xb::write_raw_session(again, second);
  if (first.str() != second.str()) std::abort();

  xb::Session session;
  try {
    session = xb::build_session(raw);
  } catch (const std::invalid_argument&) {
    return 0;  // replay reports it as an input error (exit 2)
  }
  const xb::Table table = xb::build_table(session);
  std::ostringstream table_text, table_json, trace_only, full;
  xb::write_table_text(table, table_text);
  xb::write_table_json(table, raw.meta, table_json);
  xb::write_trace_only(raw, trace_only);
  xb::write_full_trace(session, full);
  xb::NameTable names;
  (void)xb::parse_trace(trace_only.str(), "trace_only.json", names);
  (void)xb::parse_trace(full.str(), "full.json", names);
  (void)xb::parse_table(table_json.str(), "table.json");
  return 0;
}
