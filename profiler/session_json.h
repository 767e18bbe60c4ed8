// The JSON blocks the session's files share (raw_session.json, events.json, the traces,
// table.json): internal to crossbench (not installed: the public headers carry no JSON library).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "profiler/raw_records.h"

namespace xb {

/// The "crossbench" metadata block every output file carries (docs/formats.md): format, version
/// 1, created_utc, dropped_records, discarded_by_schedule, window_start_ns, window_end_ns, the
/// CUDA/CUPTI/cuBLAS versions and schedule {wait, warmup, active}.
nlohmann::json meta_block(const SessionMeta& meta, const std::string& format);

/// JSON of a fixture's timing block (raw_session.json and events.json share it; docs/formats.md).
/// Throws std::invalid_argument for a non-finite value.
nlohmann::json fixture_timing_json(const FixtureTiming& timing);

/// JSON of one NVML clock sample (meta.gpu's at_start and at_end, a fixture timing's gpu_before and
/// gpu_after; docs/formats.md): valid, sm_clock_mhz, mem_clock_mhz, temperature_c, power_w,
/// throttle_reasons, throttled, and error when not empty. Throws std::invalid_argument for a
/// non-finite power.
nlohmann::json gpu_sample_json(const GpuClockSample& sample);

/// JSON of the session's NVML facts, meta.gpu (raw_session.json's "meta" and the traces' top-level
/// "gpu"; docs/formats.md): source, error, uuid, pci_bus_id, driver_version, power_limit_w,
/// sm_clock_max_mhz, mem_clock_max_mhz and the clock samples at_start and at_end. Throws
/// std::invalid_argument for a non-finite power value.
nlohmann::json gpu_meta_json(const GpuMeta& gpu);

/// A fixture as raw_session.json and events.json write it: name, op, dtype, size, flops, bytes,
/// verified, max_rel_error, plus "timing" (when sampled) and "error" (when it failed). Throws
/// std::invalid_argument for a non-finite number.
nlohmann::json fixture_json(const FixtureInfo& fixture);

}  // namespace xb
