// The harness's records of a session: the GPU's NVML facts (GpuMeta), how each fixture was sampled
// (FixtureTiming) and what it was (FixtureInfo). The profiler does not know these types: the
// harness attaches them to a RawSession as the client's metadata block "gpu" and as fixture blocks
// (profiler/model/raw_records.h, after Kineto's addMetadata), and reads them back from there. Every reader
// of a recorded session that needs them (bench --replay, the run folder, sweep, qualify) goes
// through read_recorded_session / read_fixtures / read_gpu_meta. JSON: bench/core/fixture_json.h;
// keys and meaning: docs/formats.md ("meta.gpu", "fixtures").
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "bench/core/sm_clock.h"
#include "bench/core/stopping_rule.h"
#include "bench/core/timing_mode.h"
#include "common/stats.h"
#include "profiler/model/raw_records.h"
#include "profiler/model/work_signature.h"

namespace xb {

/// GPU state read through NVML at one moment (bench/core/fixtures_gpu.cpp fills it; kernels/nvml_probe.h).
struct GpuClockSample {
  bool valid = false;  ///< false: NVML unavailable or a read failed (see error)
  std::string error;
  int sm_clock_mhz = 0;
  int mem_clock_mhz = 0;
  int temperature_c = 0;
  double power_w = 0;
  std::uint64_t throttle_reasons = 0;  ///< nvmlClocksEventReasons bit mask
  bool throttled = false;              ///< a power, thermal or hardware slowdown reason was set
};

/// NVML facts about the session's GPU (bench fills them from kernels/nvml_probe.h; the profiler
/// never calls NVML). A value that could not be read is "" or -1 (in a sample: -1 with
/// valid = false). A session recorded before these fields existed reads back with source
/// "not recorded", "" and -1, and samples left at their defaults (valid = false).
struct GpuMeta {
  std::string source = "not recorded";  ///< "nvml", "unavailable: <why>" or "not recorded"
  std::string error;                    ///< static reads that failed; "" when all succeeded
  std::string uuid;                     ///< "GPU-xxxxxxxx-xxxx-..." (nvmlDeviceGetUUID)
  std::string pci_bus_id;               ///< as cudaDeviceGetPCIBusId gives it, e.g. "0000:19:00.0"
  std::string driver_version;           ///< display driver, e.g. "580.159.04"
  double power_limit_w = -1;            ///< enforced power limit, W
  int sm_clock_max_mhz = -1;            ///< maximum (boost) SM clock, MHz
  int mem_clock_max_mhz = -1;           ///< maximum memory clock, MHz
  GpuClockSample at_start;              ///< read just before recording started (valid = false if not)
  GpuClockSample at_end;                ///< read just after recording stopped
};

/// How one fixture was sampled (bench/core/measure.cpp; docs/metrics.md defines each field).
struct FixtureTiming {
  /// Empty in sessions recorded before timing modes, and for a fixture that failed before sampling.
  std::optional<TimingMode> mode;
  bool blocking = true;  ///< samples were queued behind the blocking kernel
  bool graph = false;    ///< each sample replayed a CUDA graph of its calls (bench --graph)
  /// The launch synchronizes with the device: "declared" (.sync(), sync=True), "detected"
  /// (measure.h launch_synchronizes), "" (it does not). Sampled without the blocking kernel then.
  std::string sync;
  /// The launch was declared to synchronize (.sync(), sync=True), whether or not it did: a
  /// declared launch that did not is timed behind the blocking kernel (sync "").
  bool sync_declared = false;
  /// Calls timed behind the blocking kernel before one was caught synchronizing (HoldWatch); 0:
  /// found after the setup call (or not at all).
  std::int64_t sync_found_after = 0;
  int launches_per_sample = 1;  ///< hot mode: calls between the events; cold mode: 1
  int rotation = 1;             ///< cold mode: input copies used in turn (1 = no rotation)
  /// The stopping rule's settings the fixture was sampled under (bench/core/stopping_rule.h), all
  /// 0 until sampling starts (a fixture that failed before). max_noise_fraction: the half-width of
  /// the median's interval at `confidence` (common/stats.h median_interval); in sessions recorded
  /// before that rule (confidence 0), the samples' relative standard deviation. JSON keys
  /// "max_noise", "min_samples", "min_time_s", "max_time_s" (docs/formats.md).
  StoppingSettings stopping{0, 0, 0, 0};
  double confidence = 0;  ///< level of the median's interval (0.95); 0: recorded before, RSD rule
  /// Minimum length of the median interval's batches, s (common/stats.h batches_in_span):
  /// kDriftBatchS once NVML saw a power or thermal limit holding the clock; 0: none.
  double batch_min_s = 0;
  std::optional<StopReason> stop;        ///< none before sampling ended (or a failed fixture)
  double sampling_s = 0;                 ///< wall time spent sampling
  std::vector<double> samples_ns;        ///< every sample, per call (event interval / launches), in order
  bool warmed_up = false;                ///< --warmup ran and reached a steady state
  bool cold_start = false;               ///< flagged: not warmed up and the first samples were slower
  double early_slowdown = 0;             ///< median of the first tenth of samples / median of all - 1
  GpuClockSample gpu_before, gpu_after;  ///< NVML before and after sampling
  /// The SM clock each sample ran at, MHz, one per samples_ns in the same order, nullopt (JSON
  /// null) where not measured (bench/core/sm_clock.h, why in sm_clock_absent). Recorded only for
  /// eager samples held by the blocking kernel: empty (the JSON key absent) in graph mode, with
  /// --no-blocking, for a launch that synchronizes, and in sessions recorded before 2026-12-05.
  std::vector<std::optional<double>> sample_sm_clock_mhz;
  SmClockAbsent sm_clock_absent;  ///< why entries of sample_sm_clock_mhz are null (all 0 when empty)
};

/// The median's interval of a fixture's samples (common/stats.h median_interval) as its stopping
/// rule computed it: at the level it used (95% for sessions recorded before that rule, confidence
/// 0), its batches at least batch_min_s long over sampling_s. Throws std::invalid_argument when it
/// has no samples.
MedianInterval fixture_median_interval(const FixtureTiming& t);

/// What the fixture's launch did against the blocking kernel, in one clause after its name (the
/// console and summary.md): timed without it because the launch synchronizes (declared, detected
/// after the setup call, or caught during sampling after `sync_found_after` calls), or declared
/// .sync() but timed behind it because it did not; "" for an undeclared asynchronous launch.
std::string sync_note(const FixtureTiming& t);

/// The fixture's per-sample SM clocks in one line (summary.md, the qualify report): "1755.0 /
/// 1980.0 / 1980.0 MHz (min / median / max) over 119 of 120 samples; absent: 1 last" or "none
/// measured in its 120 samples; absent: ..."; "" when not recorded (t.sample_sm_clock_mhz empty).
std::string sm_clock_text(const FixtureTiming& t);

/// One benchmark fixture (op x dtype x size) and its verified result.
struct FixtureInfo {
  std::string name;          ///< "<op>/<dtype>/<size>", e.g. "addmm_bias1d/bf16/4096"
  std::string op;            ///< matmul, add, addmm, addmm_bias1d, or a registered benchmark's name
  std::string dtype;         ///< bf16, fp16, fp32
  std::int64_t size = 0;     ///< square problem size n (n x n tensors; GEMMs are n x n x n)
  double flops = 0;          ///< floating-point operations per call (docs/metrics.md)
  double bytes = 0;          ///< minimum bytes moved per call (docs/metrics.md)
  bool verified = false;     ///< result matched the host reference
  double max_rel_error = 0;  ///< ||out - ref|| / ||ref|| over the checked elements
  FixtureTiming timing;      ///< empty (mode "") when the fixture failed before sampling
  std::string error;         ///< why the fixture failed; empty when it ran
  /// false: the benchmark gave no reference check (bench/core/api.h Instance::verify), so
  /// `verified` is false without a failure; files say "reference": false, the validator "not run".
  bool has_reference = true;
  /// What one call enqueues (bench/core/measure.h probe_work): recorded = false with the reason
  /// when not probed; files written before the probe existed read back as not recorded, saying so
  /// (is_recorded_before_probe).
  WorkSignature work;
  /// Graph mode: device activities one replay of the captured graph enqueued; -1: not probed.
  int graph_replay_items = -1;
};

/// Whether `work` was read from a session recorded before the work-signature probe existed (its
/// fixtures have no "work": not written back, and summary.md does not list them).
bool is_recorded_before_probe(const WorkSignature& work);

/// The metadata key the GPU's facts go under: raw_session.json's "meta.gpu", the traces' "gpu".
inline constexpr const char* kGpuMetadataKey = "gpu";

/// The metadata key of the run's own facts: {"command": the bench command line as given}.
inline constexpr const char* kRunMetadataKey = "run";

/// Attaches the command line that recorded the session (metadata block "run"), so that a replay
/// can say which command it replays.
void attach_command(SessionMeta& meta, const std::string& command);

/// The command line attach_command recorded; "" when the session has none (recorded before
/// 2026-12-03, or by a client that does not say). Throws InputError for a malformed block.
std::string read_command(const SessionMeta& meta);

/// Attaches `gpu` to the session as metadata block "gpu" (replacing one already there). Throws
/// std::invalid_argument for a non-finite power (JSON has no NaN/Inf).
void attach_gpu_meta(SessionMeta& meta, const GpuMeta& gpu);

/// The fixture as the profiler carries it (Profiler::add_fixture, RawSession::fixtures): its name
/// and the JSON object fixture_json.h's fixture_json writes. Throws std::invalid_argument when
/// flops, bytes, max_rel_error or a timing value is not finite.
FixtureBlock fixture_block(const FixtureInfo& fixture);

/// Metadata block "gpu" read back strictly (every key, docs/formats.md); GpuMeta's defaults
/// (source "not recorded") when the session has none. Throws InputError("raw_session: meta.gpu: ...").
GpuMeta read_gpu_meta(const SessionMeta& meta);

/// The session's fixture blocks read back strictly, each checked (size >= 1; flops, bytes and
/// max_rel_error >= 0; timing launches_per_sample and rotation >= 1, samples > 0). Throws
/// InputError("raw_session: fixtures[i]: ...") naming the first problem.
std::vector<FixtureInfo> read_fixtures(const RawSession& raw);

/// parse_raw_session, then the harness's blocks read and checked (read_gpu_meta, read_fixtures)
/// and written back in their canonical form, with a "gpu" block ("not recorded") where the session
/// had none: what bench --replay writes is what bench itself writes. Throws InputError.
RawSession parse_recorded_session(const std::string& text);

/// Reads and parses a file as parse_recorded_session; throws InputError naming the file.
RawSession read_recorded_session(const std::filesystem::path& path);

}  // namespace xb
