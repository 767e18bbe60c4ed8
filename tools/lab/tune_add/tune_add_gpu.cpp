#include "tools/lab/tune_add/tune_add.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "bench/cli/cli.h"
#include "bench/core/blocks.h"
#include "bench/core/device.h"
#include "bench/core/measure.h"
#include "common/atomic_file.h"
#include "common/stats.h"
#include "kernels/add.h"
#include "kernels/blocking.h"
#include "kernels/cuda_check.h"
#include "kernels/cuda_raii.h"
#include "kernels/random_fill.h"
#include "profiler/adapters/cupti_source.h"
#include "profiler/model/event_model.h"
#include "profiler/model/profiler.h"
#include "profiler/model/step_metrics.h"
#include "tools/lab/add_tuning/add_tuning.h"

namespace xb {
namespace {

struct TuneOptions {
  std::vector<std::string> dtypes{"bf16", "fp16", "fp32"};
  std::vector<std::int64_t> sizes{1024, 2048, 4096, 8192, 16384};
  int launches = 20;
  int passes = 3;
  std::string out;
};

constexpr int kUntimedLaunches = 3;
constexpr double kWarmMs = 300;  ///< untimed launches per dtype and size before the passes

/// Per config of the tuning space: the median over passes of its device time per call (CUPTI)
/// and of its cudaEvent time per call, ns.
struct ConfigTimes {
  std::vector<double> device_ns, event_ns;
};

/// Times every config in `space` for one dtype and size in one profiler session: per pass and
/// config, one unrecorded sample of kUntimedLaunches calls, then one recorded sample of
/// o.launches calls (timed_sample; the step's device time per call from step_metrics).
ConfigTimes measure(DType dtype, const std::string& dtype_name, std::int64_t n,
                    const std::vector<AddLaunchConfig>& space, const TuneOptions& o, Stream& stream,
                    SampleDevice& device) {
  const std::int64_t count = n * n;
  const std::size_t bytes = static_cast<std::size_t>(count) * dtype_bytes(dtype);
  DeviceBuffer a(bytes), b(bytes), out(bytes);
  launch_random_fill(dtype, a.get(), count, 1, stream.get());
  launch_random_fill(dtype, b.get(), count, 2, stream.get());
  stream.synchronize();
  // The GPU leaves its idle clock before the first config is timed.
  warm_up_for(stream.get(), kWarmMs,
              [&] { launch_add_tuning(dtype, a.get(), b.get(), out.get(), count, stream.get(), space.front()); });
  // Each config is its own fixture: annotation "add/<dtype>/<n>:<config>".
  std::vector<std::string> fixtures;
  for (const AddLaunchConfig& c : space) fixtures.push_back(fmt::format("add/{}/{}:{}", dtype_name, n, to_string(c)));
  SampleSpec untimed, timed;
  untimed.launches = kUntimedLaunches;
  timed.launches = o.launches;
  Profiler profiler(make_cupti_source());
  profiler.start();
  for (int pass = 0; pass < o.passes; ++pass) {
    for (std::size_t c = 0; c < space.size(); ++c) {
      const auto launch = [&, c] {
        launch_add_tuning(dtype, a.get(), b.get(), out.get(), count, stream.get(), space[c]);
      };
      profiler.begin_fixture(Schedule{1, 0, 1});  // a wait step (not recorded), then the timed one
      timed_sample(launch, profiler, device, fixtures[c], "xb::add", untimed);
      timed_sample(launch, profiler, device, fixtures[c], "xb::add", timed);
    }
  }
  XB_CUDA(cudaStreamSynchronize(stream.get()));
  const RawSession raw = profiler.stop();
  if (raw.meta.dropped_records != 0) {
    throw ProfilerError(fmt::format("CUPTI dropped {} records; lower --launches", raw.meta.dropped_records));
  }
  const std::vector<StepMetrics> steps = step_metrics(build_session(raw));
  ConfigTimes t;
  for (std::size_t c = 0; c < space.size(); ++c) {
    // Exactly one kernel per call: the add is a single kernel launch.
    const std::vector<StepMetrics> blocks =
        fixture_blocks(steps, fixtures[c], static_cast<std::size_t>(o.passes), true, "pass");
    t.device_ns.push_back(compute_stats(device_per_call_ns(blocks)).median);
    t.event_ns.push_back(compute_stats(event_per_call_ns(blocks)).median);
  }
  return t;
}

}  // namespace

int tune_add_command(int argc, const char* const* argv) {
  TuneOptions o;
  CLI::App app{"crossbench tune-add: every add kernel configuration timed with CUPTI"};
  app.name("bench tune-add");
  std::vector<std::string> dtypes;
  std::string sizes;
  app.add_option("--dtype", dtypes, "comma-separated dtypes (default bf16,fp16,fp32)");
  app.add_option("--size", sizes, "comma-separated square sizes n (default 1024,2048,4096,8192,16384)");
  app.add_option("--launches", o.launches, "timed launches per config per pass (default 20)");
  app.add_option("--passes", o.passes, "round-robin passes over the configs (default 3)");
  app.add_option("--out", o.out, "also write the figures as JSON to this file");
  if (!parse_command_line(app, argc, argv)) return 0;
  if (!dtypes.empty()) o.dtypes = parse_dtype_list(dtypes);
  if (app.count("--size") > 0) o.sizes = parse_size_list(sizes);
  if (o.launches < 1 || o.launches > 1000) throw UsageError("--launches must be in 1..1000");
  if (o.passes < 1 || o.passes > 100) throw UsageError("--passes must be in 1..100");
  if (app.count("--out") > 0) check_out_file(o.out);
  require_cuda_device();

  std::size_t need = 0;  // the largest dtype and size: a, b and out
  for (const std::string& d : o.dtypes) {
    for (const std::int64_t n : o.sizes)
      need = std::max(need, 3 * static_cast<std::size_t>(n * n) * dtype_bytes(parse_dtype(d)));
  }
  require_device_memory(need, "the largest add of --size/--dtype (3 tensors)");

  Stream stream;
  // Each sample is queued behind the blocking kernel (its calls back to back, the host's launch
  // gaps outside the event interval) unless it could fill CUDA's launch queue (kMaxBatch).
  const bool blocking = o.launches <= kMaxBatch;
  BlockingKernel blocker;  // loads its module (lazy loading) outside any sample
  const std::unique_ptr<SampleDevice> device =
      make_cuda_sample_device(stream.get(), blocking ? &blocker : nullptr, nullptr);
  const std::vector<AddLaunchConfig> space = add_tuning_space();
  nlohmann::json results = nlohmann::json::array();
  for (const std::string& dtype_name : o.dtypes) {
    const DType dtype = parse_dtype(dtype_name);
    for (const std::int64_t n : o.sizes) {
      const ConfigTimes times = measure(dtype, dtype_name, n, space, o, stream, *device);
      const std::vector<double>& medians = times.device_ns;
      const double moved = 3.0 * static_cast<double>(n * n) * static_cast<double>(dtype_bytes(dtype));
      const std::string chosen = to_string(add_launch_config(dtype, n * n));
      std::vector<std::size_t> order(space.size());
      for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return medians[x] < medians[y]; });
      const double best = medians[order.front()];
      double chosen_ns = 0;
      std::cout << fmt::format(
          "\n## add {} {}x{}\n\n| config | median us | GB/s | / fastest |\n| --- | ---: | ---: | ---: |\n", dtype_name,
          n, n);
      nlohmann::json rows = nlohmann::json::array();
      for (std::size_t i : order) {
        const std::string name = to_string(space[i]);
        if (name == chosen) chosen_ns = medians[i];
        std::cout << fmt::format("| {}{} | {:.2f} | {:.0f} | {:.3f} |\n", name, name == chosen ? " (bench)" : "",
                                 medians[i] / 1e3, moved / medians[i], medians[i] / best);
        rows.push_back({{"config", name},
                        {"median_ns", medians[i]},
                        {"gb_per_s", moved / medians[i]},
                        {"event_median_ns", times.event_ns[i]}});
      }
      std::cout << fmt::format("\nfastest {} {:.2f} us; bench's {} {:.2f} us ({:.3f}x)\n",
                               to_string(space[order.front()]), best / 1e3, chosen, chosen_ns / 1e3, chosen_ns / best);
      results.push_back({{"dtype", dtype_name},
                         {"n", n},
                         {"launches", o.launches},
                         {"passes", o.passes},
                         {"blocking", blocking},
                         {"fastest", to_string(space[order.front()])},
                         {"chosen", chosen},
                         {"chosen_over_fastest", chosen_ns / best},
                         {"configs", rows}});
      std::cout.flush();
    }
  }
  if (!o.out.empty()) {
    write_file_atomic(o.out, [&](std::ostream& out) { out << nlohmann::json{{"tune_add", results}}.dump(1) << '\n'; });
  }
  return 0;
}

}  // namespace xb
