// The counter pass on the GPU (run_counter_pass_on_gpu, counter_pass.h): the registered
// benchmarks' factories, the CUPTI collector, counters.json.
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include "bench/core/api.h"
#include "bench/core/counter_pass.h"
#include "bench/core/run_dir.h"
#include "common/atomic_file.h"
#include "kernels/cuda_check.h"
#include "profiler/adapters/cupti_counter_collector.h"

namespace xb {

CounterSession run_counter_pass_on_gpu(const std::vector<FixtureSpec>& fixtures, cudaStream_t stream,
                                       const std::filesystem::path& dir, std::ostream& out, int idle_before_pass_ms,
                                       int idle_between_calls_ms, int calls) {
  if (idle_before_pass_ms < 0)
    throw std::invalid_argument("run_counter_pass_on_gpu: idle_before_pass_ms must be at least 0");
  if (idle_between_calls_ms < 0) {
    throw std::invalid_argument("run_counter_pass_on_gpu: idle_between_calls_ms must be at least 0");
  }
  if (calls < 1) throw std::invalid_argument("run_counter_pass_on_gpu: calls must be at least 1");
  int device = 0, l2 = 0;
  XB_CUDA(cudaGetDevice(&device));
  XB_CUDA(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  cudaDeviceProp prop{};
  XB_CUDA(cudaGetDeviceProperties(&prop, device));

  std::vector<CounterJob> jobs;
  for (const FixtureSpec& spec : fixtures) {
    const BenchmarkDef* def = find_benchmark(spec.op);
    if (def == nullptr) continue;  // the plan was checked before the timing pass
    const Point p{spec.op, spec.dtype, spec.size};
    CounterJob job;
    job.fixture.name = fixture_name(spec.op, spec.dtype, spec.size);
    job.fixture.op = spec.op;
    job.fixture.dtype = spec.dtype;
    job.fixture.size = spec.size;
    job.fixture.model_flops = def->flops ? def->flops(p) : 0.0;
    job.fixture.model_bytes = def->bytes ? def->bytes(p) : 0.0;
    job.make_call = [def, p, stream]() -> std::function<void()> {
      auto instance = std::make_shared<Instance>(def->make(p, stream));
      if (!instance->launch)
        throw std::runtime_error("the benchmark's factory returned an instance without a launch function");
      return [instance, stream] { instance->launch(stream); };
    };
    jobs.push_back(std::move(job));
  }

  // XB_COUNTERS_LOG: where the adapter logs each CUPTI call and metric ("-" = stderr).
  std::unique_ptr<std::ofstream> log_file;
  std::ostream* log = nullptr;
  if (const char* where = std::getenv("XB_COUNTERS_LOG"); where != nullptr && *where != '\0') {
    if (std::string(where) == "-") {
      log = &std::cerr;
    } else {
      log_file = std::make_unique<std::ofstream>(where, std::ios::app);
      if (*log_file) log = log_file.get();
    }
  }
  CounterSession s = run_counter_pass(
      jobs, [device, log] { return make_cupti_counter_collector(device, log); },
      [stream] { XB_CUDA(cudaStreamSynchronize(stream)); }, calls,
      idle_before_pass_ms == 0 ? std::function<void()>{}
                               : [idle_before_pass_ms] { std::this_thread::sleep_for(std::chrono::milliseconds(idle_before_pass_ms)); },
      idle_between_calls_ms == 0 ? std::function<void()>{} : [stream, idle_between_calls_ms] {
        XB_CUDA(cudaStreamSynchronize(stream));
        std::this_thread::sleep_for(std::chrono::milliseconds(idle_between_calls_ms));
      });
  s.created_utc = utc_time("%Y-%m-%dT%H:%M:%SZ");
  s.gpu_name = prop.name;
  s.l2_bytes = static_cast<std::uint64_t>(l2);
  if (s.method.empty()) s.method = "CUPTI range profiler (not started)";
  if (idle_before_pass_ms > 0)
    s.method += fmt::format("; the device idle {} ms before each replay pass", idle_before_pass_ms);
  if (idle_between_calls_ms > 0) {
    s.method += fmt::format("; the stream synchronized and the device idle {} ms between consecutive calls",
                            idle_between_calls_ms);
  }
  write_file_atomic(dir / "counters.json", [&](std::ostream& o) { write_counters_json(s, o); });
  print_counter_table(s, out);
  return s;
}

}  // namespace xb
