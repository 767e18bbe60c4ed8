// libFuzzer target for the trace reader (validate/trace_reader.h): any input must either parse or
// raise InputError, never crash, hang or leak. Each input is parsed twice, through the fast paths
// and through the strict scanner alone, and both must agree on what they read (differential).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "profiler/model/session_io.h"
#include "validate/trace_reader.h"

namespace {

struct Outcome {
  bool ok = false;
  std::string error;
  xb::TraceData data;
};

Outcome parse(std::string_view input, bool fast) {
  xb::set_fast_paths_for_testing(fast);
  Outcome o;
  xb::NameTable names;
  try {
    o.data = xb::parse_trace(input, "fuzz.json", names);
    o.ok = true;
  } catch (const xb::InputError& e) {
    o.error = e.what();
  }
  xb::set_fast_paths_for_testing(true);
  return o;
}

bool same_events(const xb::TraceData& a, const xb::TraceData& b) {
  if (a.events.size() != b.events.size() || a.flows.size() != b.flows.size() || a.ext_corr != b.ext_corr ||
      a.lanes.size() != b.lanes.size() || a.base_ns != b.base_ns)
    return false;
  for (std::size_t i = 0; i < a.events.size(); ++i) {
    const auto &x = a.events[i], &y = b.events[i];
    if (x.start_ns != y.start_ns || x.dur_ns != y.dur_ns || x.correlation != y.correlation ||
        x.external_id != y.external_id || x.parent_id() != y.parent_id() || x.name != y.name || x.lane != y.lane ||
        x.cat != y.cat || x.flags != y.flags)
      return false;
  }
  for (std::size_t i = 0; i < a.flows.size(); ++i) {
    const auto &x = a.flows[i], &y = b.flows[i];
    if (x.id != y.id || x.ts_ns != y.ts_ns || x.lane != y.lane || x.start != y.start || x.bp_e != y.bp_e) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const Outcome fast = parse(input, true);
  const Outcome strict = parse(input, false);
  // The fast paths only take what the strict scanner accepts, and read it the same way.
  if (fast.ok != strict.ok) std::abort();
  if (fast.ok && !same_events(fast.data, strict.data)) std::abort();
  return 0;
}
