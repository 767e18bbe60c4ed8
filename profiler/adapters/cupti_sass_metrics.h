// The SASS metrics pass of the counter collector (profiler/adapters/cupti_counters.cpp): CUPTI's SASS
// metrics API (cupti_sass_metrics.h) patches each kernel's SASS to count instructions by opcode,
// the only way CUPTI counts smsp__sass_thread_inst_executed_op_*: the range profiler accepts those
// names but reports 0 for them (H200, CUDA 13.0). Internal to the CUPTI adapters: included only by
// cupti_counters.cpp and cupti_sass_metrics.cpp.
#pragma once

#include <cuda.h>
#include <cupti.h>
#include <cstdint>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace xb {

/// CUPTI's text for `r` ("CUPTI_ERROR_..."), or "CUPTI error <n>" (profiler/adapters/cupti_counters.cpp).
std::string cupti_result_name(CUptiResult r);

/// One SASS metrics configuration on a device. Not thread-safe.
class SassMetricsPass {
 public:
  /// Looks the SASS metrics functions up in the loaded libcupti (cuptiProfilerInitialize must
  /// have been called), checks the device (cuptiProfilerDeviceSupported, CUPTI_PROFILER_SASS_METRICS),
  /// logs the chip's SASS metrics through `note`, resolves each SassMetrics metric of
  /// counter_metrics() (its name before the first '.'; unknown ones go to rejected()) and sets the
  /// configuration (GPU-level totals). Throws ProfilerError, one line, when any of that fails or
  /// no metric is offered.
  SassMetricsPass(int device, CUcontext ctx, const std::string& chip, std::function<void(const std::string&)> note);
  ~SassMetricsPass();
  SassMetricsPass(const SassMetricsPass&) = delete;
  SassMetricsPass& operator=(const SassMetricsPass&) = delete;

  /// Enables SASS patching (lazy: each kernel patched at its first launch inside), runs `work`,
  /// waits for the device, reads every patched instruction's counts, disables patching, and
  /// returns metric name (counter_metrics()'s, with ".sum") -> total over all instructions and
  /// launches; every accepted metric is present (0 when nothing counted it). Throws ProfilerError
  /// on a CUPTI or CUDA error, and what `work` throws (patching disabled first).
  std::map<std::string, double> collect(const std::function<void()>& work);

  const std::vector<std::string>& accepted() const { return accepted_; }
  const std::map<std::string, std::string>& rejected() const { return rejected_; }

 private:
  void call(const char* what, CUptiResult r) const;

  std::function<void(const std::string&)> note_;
  int device_;
  CUcontext ctx_;
  bool configured_ = false;
  std::vector<std::string> accepted_;                // counter_metrics() names, in order
  std::map<std::uint64_t, std::string> id_to_name_;  // SASS metric id -> accepted name
  std::map<std::string, std::string> rejected_;
};

}  // namespace xb
