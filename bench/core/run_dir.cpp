#include "bench/core/run_dir.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include <fcntl.h>
#include <unistd.h>
#include <fstream>
#include <map>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "bench/core/fixture_json.h"
#include "bench/core/fixture_records.h"
#include "bench/core/noise_causes.h"
#include "bench/core/options.h"
#include "common/atomic_file.h"
#include "common/stats.h"
#include "profiler/exporters/outputs.h"
#include "profiler/exporters/table.h"
#include "profiler/exporters/trace_export.h"
#include "profiler/model/event_model.h"
#include "profiler/model/session_io.h"
#include "profiler/model/session_json.h"
#include "profiler/model/step_metrics.h"
#include "validate/validator.h"

namespace xb {
namespace fs = std::filesystem;

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

std::string utc_time(const char* format) {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[64];
  const std::size_t n = std::strftime(text, sizeof text, format, &utc);
  return std::string(text, n);
}

fs::path default_run_dir() {
  return fs::path("results") / "runs" / (utc_time("%Y%m%d-%H%M%S") + "-" + std::to_string(::getpid()));
}

namespace {

/// Proves that folders can be created in `folder` by creating one and removing it. Throws
/// UsageError naming `dir` (the output folder asked for).
void probe_writable(const fs::path& folder, const fs::path& dir) {
  std::string name = (folder / ".crossbench-probe-XXXXXX").string();
  if (::mkdtemp(name.data()) == nullptr) {
    const int err = errno;
    if (folder == dir) throw UsageError("output folder '" + dir.string() + "' is not writable: " + std::strerror(err));
    throw UsageError("cannot create output folder '" + dir.string() + "' in '" + folder.string() +
                     "': " + std::strerror(err));
  }
  ::rmdir(name.c_str());
}

}  // namespace

void check_run_dir(const fs::path& dir) {
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(dir, ec);
  if (fs::exists(st)) {
    if (!fs::is_directory(fs::status(dir, ec)))
      throw UsageError("output '" + dir.string() + "' exists and is not a folder");
    const bool empty = fs::is_empty(dir, ec);
    if (ec) throw UsageError("output folder '" + dir.string() + "' cannot be read: " + ec.message());
    if (!empty) throw UsageError("output folder '" + dir.string() + "' already exists and is not empty");
    probe_writable(dir, dir);
    return;
  }
  // The nearest existing parent must be a folder we can create folders in.
  fs::path parent = dir.parent_path();
  while (!parent.empty() && !fs::exists(fs::symlink_status(parent, ec))) parent = parent.parent_path();
  if (parent.empty()) parent = ".";
  if (!fs::is_directory(fs::status(parent, ec))) {
    throw UsageError("cannot create output folder '" + dir.string() + "': '" + parent.string() + "' is not a folder");
  }
  probe_writable(parent, dir);
}

void create_run_dir(const fs::path& dir) {
  check_run_dir(dir);
  std::error_code ec;
  const bool existed = fs::exists(dir, ec);
  if (existed && !fs::is_directory(dir, ec)) {
    throw UsageError("output '" + dir.string() + "' exists and is not a folder");
  }
  if (existed && !fs::is_empty(dir, ec)) {
    throw UsageError("output folder '" + dir.string() + "' already exists and is not empty");
  }
  // The topmost folder this call creates, so that a failure removes everything it created.
  fs::path created;
  if (!existed) {
    for (fs::path p = dir; !p.empty() && !fs::exists(fs::symlink_status(p, ec)); p = p.parent_path()) created = p;
  }
  const auto remove_created = [&] {
    if (created.empty()) return;
    for (fs::path p = dir;; p = p.parent_path()) {
      fs::remove(p, ec);  // only removes empty folders
      if (p == created || p.empty()) break;
    }
  };
  if (!existed && !fs::create_directories(dir, ec) && ec) {
    remove_created();
    throw UsageError("cannot create output folder '" + dir.string() + "': " + ec.message());
  }
  // Claim the folder with a marker created exclusively (two runs given the same folder cannot
  // both get it); this also proves it is writable before a long GPU run starts.
  const fs::path claim = dir / ".crossbench-claim";
  const int fd = ::open(claim.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
  if (fd < 0) {
    const int err = errno;
    remove_created();
    if (err == EEXIST) {
      throw UsageError("output folder '" + dir.string() + "' is being written by another run");
    }
    throw UsageError("output folder '" + dir.string() + "' is not writable: " + std::strerror(err));
  }
  ::close(fd);
}

void release_run_dir(const fs::path& dir) {
  std::error_code ec;
  fs::remove(dir / ".crossbench-claim", ec);
}

void abandon_run_dir(const fs::path& dir) noexcept {
  release_run_dir(dir);
  std::error_code ec;
  fs::remove(dir, ec);  // only removes an empty folder
}

void write_events_json(const RawSession& raw, std::ostream& out) {
  nlohmann::json doc;
  doc["crossbench"] = meta_block(raw.meta, "events");
  nlohmann::json fixtures = nlohmann::json::array();
  for (const FixtureInfo& f : read_fixtures(raw)) {
    nlohmann::json steps = nlohmann::json::array();
    std::vector<std::int64_t> times;
    for (const StepTiming& t : raw.event_timings) {
      if (t.fixture != f.name) continue;
      steps.push_back({{"step", t.step}, {"range_id", t.range_id}, {"event_ns", t.event_ns}, {"launches", t.launches}});
      times.push_back(t.event_ns);
    }
    nlohmann::json fj = fixture_json(f);
    fj["steps"] = std::move(steps);
    // Per step (a step holds `launches` calls in hot mode); stats.median_ns below is per call.
    fj["step_median_ns"] = median_of(times);
    if (f.timing.mode && !f.timing.samples_ns.empty()) {
      // Statistics of every sample (per call, ns), computed here from the raw samples.
      const SampleStats st = compute_stats(f.timing.samples_ns);
      const MedianInterval ci = fixture_median_interval(f.timing);
      fj["stats"] = sample_stats_json(st);
      fj["stats"]["median_ci"] = {{"confidence", ci.confidence},
                                  {"low_ns", ci.low},
                                  {"high_ns", ci.high},
                                  {"bounded", ci.bounded},
                                  // JSON has no infinity: an unbounded interval's half-width is null.
                                  {"half_width", ci.bounded ? nlohmann::json(ci.half_width()) : nlohmann::json()},
                                  {"batches", ci.batches},
                                  {"effective_samples", ci.effective_samples}};
      if (const auto range = sm_clock_range(f.timing.sample_sm_clock_mhz))  // recorded per sample
        fj["stats"]["sm_clock"] = sm_clock_range_json(*range);
      fj["stop_rule"] = f.timing.confidence > 0 ? "median_ci" : "rsd";
      fj["noisy"] = f.timing.stop != StopReason::Converged;
      fj["throttled"] = f.timing.gpu_before.throttled || f.timing.gpu_after.throttled;
      const NoiseCauses nc = noise_causes(f.timing);
      fj["noise_causes"] = {
          {"nvml_read", nc.read}, {"throttle_reasons", nc.reasons}, {"causes", nc.causes}, {"text", nc.text()}};
    }
    fixtures.push_back(std::move(fj));
  }
  doc["fixtures"] = std::move(fixtures);
  out << doc.dump(1) << '\n';
}

namespace {

void write_summary(const RawSession& raw, const ValidationReport& report, const fs::path& replayed_from,
                   std::ostream& out) {
  const Session session = build_session(raw);
  const std::vector<StepMetrics> steps = step_metrics(session);
  const std::string gpu = raw.meta.devices.empty() ? "unknown GPU" : raw.meta.devices[0].name;
  const std::string uuid = read_gpu_meta(raw.meta).uuid;
  out << "# crossbench run\n\n";
  if (!replayed_from.empty()) {
    const std::string command = read_command(raw.meta);
    out << fmt::format(
        "- **replay** of `{}` (bench --replay: every file regenerated from the recorded session, "
        "no GPU ran; benchmark.json only a live run writes), recorded by {}\n",
        replayed_from.string(),
        command.empty() ? std::string("a command the session does not name (recorded before 2026-12-03)")
                        : "`" + command + "` (its paths are the recording machine's, not this one's)");
  }
  out << fmt::format("- GPU: {}{}\n- recorded: {}\n- CUDA driver {}, runtime {}, CUPTI {}, cuBLAS {}\n", gpu,
                     uuid.empty() ? "" : " (" + uuid + ")", raw.meta.created_utc, raw.meta.cuda_driver_version,
                     raw.meta.cuda_runtime_version, raw.meta.cupti_version, raw.meta.cublas_version);
  out << fmt::format("- schedule: wait {}, warmup {}, active {}; dropped records: {}\n\n", raw.meta.schedule_wait,
                     raw.meta.schedule_warmup, raw.meta.schedule_active, raw.meta.dropped_records);
  out << "| fixture | verified (rel. error) | samples | spread (RSD) | median known to | precision target met | "
         "cudaEvent per call (us) | CUPTI span per call (us) | event - span (us) | CUPTI kernel sum per call (us) | "
         "TFLOP/s | GB/s |\n";
  out << "| --- | --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n";
  std::vector<std::string> spread_notes, sync_notes, work_notes, clock_notes;
  for (const FixtureInfo& f : read_fixtures(raw)) {
    // What one call enqueued (the work signature), for every fixture that was probed or refused.
    if (f.work.recorded || (!f.work.why.empty() && !is_recorded_before_probe(f.work))) {
      std::string line = fmt::format("- {}: {}", f.name, f.work.summary());
      if (f.graph_replay_items >= 0)
        line +=
            fmt::format("; graph mode: one replay enqueued {} device activities, the same work", f.graph_replay_items);
      if (f.error.rfind("refused", 0) == 0) line += " (refused: see the fixture's error in events.json)";
      work_notes.push_back(std::move(line));
    }
    std::vector<double> ev, span, sum;
    for (const StepMetrics& m : step_metrics_of(steps, f.name)) {
      ev.push_back(m.event_per_call_ns());
      span.push_back(m.span_per_call_ns());
      sum.push_back(m.device_per_call_ns());
    }
    const auto median = [](const std::vector<double>& v) { return v.empty() ? 0.0 : compute_stats(v).median; };
    const double event_ns = median(ev), span_ns = median(span), kernel_ns = median(sum);
    const double tflops = kernel_ns > 0 ? f.flops / kernel_ns / 1e3 : 0.0;  // flop/ns / 1e3 = TFLOP/s
    const double gbps = kernel_ns > 0 ? f.bytes / kernel_ns : 0.0;          // byte/ns = GB/s
    // A fixture that failed or was abandoned before sampling has no samples (and no noise).
    const std::size_t samples = f.timing.samples_ns.size();
    const double rsd = samples == 0 ? 0.0 : compute_stats(f.timing.samples_ns).rsd();
    const std::string noise = samples == 0 ? "-" : fmt::format("{:.2f}%", rsd * 100);
    std::string known = "-";
    if (samples > 0) {
      const MedianInterval ci = fixture_median_interval(f.timing);
      // Batches of a minimum length: a power or thermal limit held the clock (FixtureTiming).
      const std::string batches =
          f.timing.batch_min_s > 0 ? fmt::format(", batches >= {:g} s", f.timing.batch_min_s) : "";
      known = ci.bounded ? fmt::format("+-{:.3f}% ({:.0f}%{})", ci.half_width() * 100, ci.confidence * 100, batches)
                         : fmt::format("unbounded ({:.0f}%{})", ci.confidence * 100, batches);
    }
    // A session recorded before the median-interval rule (confidence 0) stopped on the samples'
    // RSD: its "timed out" is that rule's, which the interval shown beside it does not contradict.
    const std::string rule = f.timing.confidence > 0 ? ""
                                                     : fmt::format(" on RSD > {:.1f}%, the rule it was recorded under",
                                                                   f.timing.stopping.max_noise_fraction * 100);
    const std::string met = !f.timing.stop || samples == 0 ? "-"
                            : f.timing.stop == StopReason::Converged
                                ? "yes"
                                : "NO (" + std::string(to_string(f.timing.stop)) + rule + ")";
    if (!f.timing.sample_sm_clock_mhz.empty()) clock_notes.push_back("- " + f.name + ": " + sm_clock_text(f.timing));
    if (const std::string note = sync_note(f.timing); !note.empty())
      sync_notes.push_back(fmt::format("- {} {}", f.name, note));
    // Why the samples spread: named for every fixture that spread beyond its target or timed out.
    if (samples > 0 && (rsd > spread_note_rsd(f.timing) || f.timing.stop != StopReason::Converged)) {
      spread_notes.push_back(fmt::format("- {}: RSD {:.2f}%: {}", f.name, rsd * 100, noise_causes(f.timing).text()));
    }
    out << fmt::format(
        "| {} | {} ({:.2e}) | {} | {} | {} | {} | {:.3f} | {:.3f} | {:.3f} | {:.3f} | {:.1f} | {:.1f} |\n", f.name,
        f.verified ? "yes" : "NO", f.max_rel_error, samples, noise, known, met, event_ns / 1e3, span_ns / 1e3,
        (event_ns - span_ns) / 1e3, kernel_ns / 1e3, tflops, gbps);
  }
  if (!spread_notes.empty()) {
    out << "\nWhy the samples spread (NVML clock-event reasons and clocks before and after sampling):\n\n";
    for (const std::string& n : spread_notes) out << n << "\n";
  }
  if (!clock_notes.empty()) {
    out << "\nSM clock per sample (min / median / max over the samples that have one, from the blocking kernel's "
           "counters; docs/metrics.md, \"SM clock per sample\"):\n\n";
    for (const std::string& n : clock_notes) out << n << "\n";
  }
  if (!sync_notes.empty()) {
    out << "\nLaunches that synchronize with the device (docs/own-kernel.md):\n\n";
    for (const std::string& n : sync_notes) out << n << "\n";
  }
  if (!work_notes.empty()) {
    out << "\nWhat one call enqueues (the work signature, probed before sampling; docs/metrics.md, \"Work "
           "signature\"):\n\n";
    for (const std::string& n : work_notes) out << n << "\n";
  }
  out << "\nPer call: each recorded step's figure divided by the calls it made (hot mode queues a batch\n"
         "back to back), median over the recorded steps. Samples, spread and \"median known to\": every\n"
         "sample of the stopping rule; the last is the half-width of the median's distribution-free\n"
         "interval at the stated level, widened for drift, which the stopping rule holds to --max-noise\n"
         "(docs/metrics.md, \"Stopping rule\"; \"+-0.000%\": its bounds fall on the median's own value, the\n"
         "event timer counting 0.5 us per sample). cudaEvent: the event interval. CUPTI span: first device\n"
         "activity start to last end in the step; \"event - span\" is the difference of those two medians (the\n"
         "time from the start event to the first activity and from the last to the stop event); the\n"
         "event_vs_cupti check bounds the median of that difference taken step by step, which can differ from\n"
         "it by up to tens of ns (the Validation below). CUPTI kernel sum: the activities' own durations (gaps\n"
         "between calls excluded); TFLOP/s and GB/s use it.\n";
  out << "\n## Validation\n\n";
  print_summary(report, out);
}

}  // namespace

void write_run_outputs(const RawSession& raw, const fs::path& dir) {
  // The profiler's own files (one writer: profiler/exporters/outputs.h), then the harness's event times.
  write_profile_outputs(raw, dir);
  write_file_atomic(dir / "events.json", [&](std::ostream& o) { write_events_json(raw, o); });
}

int validate_and_report(const fs::path& dir, std::ostream& out, const fs::path& replayed_from) {
  const ValidationReport report = validate_run_dir(dir);
  write_report_json(report, dir / "validation.json");
  const RawSession raw = read_recorded_session(dir / "raw_session.json");
  write_file_atomic(dir / "summary.md", [&](std::ostream& o) { write_summary(raw, report, replayed_from, o); });
  print_summary(report, out);
  return report.passed() ? 0 : 1;
}

int replay_session(const fs::path& file, const fs::path& dir, std::ostream& out) {
  check_run_dir(dir);                                  // a bad --out first, before a possibly long read
  const RawSession raw = read_recorded_session(file);  // read and check before creating anything
  try {
    (void)build_session(raw);
  } catch (const std::invalid_argument& e) {
    throw InputError(file.string() + ": " + e.what());
  }
  create_run_dir(dir);
  write_run_outputs(raw, dir);
  release_run_dir(dir);
  out << "replayed " << file.string() << " into " << dir.string() << "\n";
  return validate_and_report(dir, out, file);
}

}  // namespace xb
