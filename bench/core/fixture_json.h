// JSON of the harness's records (bench/core/fixture_records.h) as raw_session.json, events.json and
// the traces write them (docs/formats.md): internal to crossbench (nlohmann stays out of the
// installed headers; this one is not installed).
#pragma once

#include <nlohmann/json.hpp>

#include "bench/core/fixture_records.h"
#include "common/stats.h"

namespace xb {

/// JSON of one NVML clock sample (meta.gpu's at_start and at_end, a fixture timing's gpu_before and
/// gpu_after): valid, sm_clock_mhz, mem_clock_mhz, temperature_c, power_w, throttle_reasons,
/// throttled, and error when not empty. Throws std::invalid_argument for a non-finite power.
nlohmann::json gpu_sample_json(const GpuClockSample& sample);

/// JSON of a fixture's sample statistics (events.json's and the qualify report's "stats", all in
/// ns but rsd, a fraction): count, median_ns, min_ns, max_ns, mean_ns, stddev_ns, mad_ns, q1_ns,
/// q3_ns, rsd.
nlohmann::json sample_stats_json(const SampleStats& stats);

/// JSON of a fixture's SM clock range (events.json's stats.sm_clock, the qualify report's fixtures'
/// sm_clock): samples, min_mhz, median_mhz, max_mhz (bench/core/sm_clock.h).
nlohmann::json sm_clock_range_json(const SmClockRange& range);

/// JSON of the session's NVML facts (raw_session.json's "meta.gpu" and the traces' top-level
/// "gpu"): source, error, uuid, pci_bus_id, driver_version, power_limit_w, sm_clock_max_mhz,
/// mem_clock_max_mhz and the clock samples at_start and at_end. Throws std::invalid_argument for a
/// non-finite power value.
nlohmann::json gpu_meta_json(const GpuMeta& gpu);

/// JSON of a fixture's timing block (raw_session.json and events.json share it). Throws
/// std::invalid_argument for a non-finite value.
nlohmann::json fixture_timing_json(const FixtureTiming& timing);

/// JSON of a work signature (a fixture's "work": recorded, why, handed_stream, streams,
/// cross_stream_waits, covered, summary, items[] of kind, name, stream, where, after_start,
/// before_end, bytes, duration_ns; docs/formats.md).
nlohmann::json work_signature_json(const WorkSignature& work);

/// A fixture as raw_session.json and events.json write it: name, op, dtype, size, flops, bytes,
/// verified, max_rel_error, "reference": false when it has none, plus "timing" (when sampled),
/// "work" (when probed or refused), "graph_replay_items" (graph mode) and "error" (when it failed). Throws
/// std::invalid_argument for a non-finite number.
nlohmann::json fixture_json(const FixtureInfo& fixture);

/// Reads back the fixture object fixture_json writes, as raw_session.json's fixture blocks and
/// events.json's "fixtures" entries hold it (keys only events.json writes, such as stats and steps,
/// are not read), strictly, with read_fixtures' checks. `index`: its place in the file's list;
/// `file`: the file's name in messages. Throws InputError("<file>: fixtures[index]: ...") naming
/// the first problem.
FixtureInfo parse_fixture_json(const nlohmann::json& fixture, std::size_t index,
                               const std::string& file = "raw_session");

}  // namespace xb
