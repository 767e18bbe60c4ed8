// CUPTI adapter of the counter pass (profiler/model/counters.h): with cupti_sass_metrics.cpp, the only
// code that talks to CUPTI's profiling APIs. Range profiler (cupti_range_profiler.h) in auto range
// mode, one range per kernel launch, with user replay: the caller's work (the counter pass: K calls
// back to back) is run once per pass the metrics need, after the caller's before_pass (the counter
// pass: K unprofiled warm-up calls, so that the profiled calls run in the steady state of hot mode,
// as Nsight Compute's --cache-control none on back-to-back launches does; kernel replay would save
// and restore memory around each kernel and replay it alone); metric names are checked and evaluated with the
// profiler host API (cupti_profiler_host.h). Then, after range profiling is disabled, the SASS
// metrics pass (cupti_sass_metrics.h) counts the SASS FLOP instructions. Reference: CUPTI documentation, "CUPTI Range
// Profiling API" and "CUPTI Profiler Host API"; the CUDA Toolkit headers named above. Why the range profiler and not PM
// sampling: docs/metrics.md ("Hardware counters").
//
// libcupti is loaded at run time (profiler/adapters/cupti_api.h); these entry points are looked up in the
// same library, separately, so that a libcupti without them still serves the activity profiler.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <ostream>
#include <string>
#include <vector>

#include "profiler/adapters/cupti_api.h"
#include "profiler/adapters/cupti_counter_collector.h"
#include "profiler/adapters/cupti_sass_metrics.h"
#include "profiler/model/counters.h"
#include "profiler/model/profiler.h"

namespace xb {
namespace {

// An X-macro list, one function a line.
// clang-format off
#define XB_CUPTI_PROFILING_FUNCTIONS(X)           \
  X(cuptiProfilerInitialize)                      \
  X(cuptiProfilerDeInitialize)                    \
  X(cuptiDeviceGetChipName)                       \
  X(cuptiProfilerGetCounterAvailability)          \
  X(cuptiProfilerDeviceSupported)                 \
  X(cuptiProfilerHostInitialize)                  \
  X(cuptiProfilerHostDeinitialize)                \
  X(cuptiProfilerHostGetMetricProperties)         \
  X(cuptiProfilerHostConfigAddMetrics)            \
  X(cuptiProfilerHostGetConfigImageSize)          \
  X(cuptiProfilerHostGetConfigImage)              \
  X(cuptiProfilerHostGetNumOfPasses)              \
  X(cuptiProfilerHostEvaluateToGpuValues)         \
  X(cuptiProfilerHostGetRangeName)                \
  X(cuptiRangeProfilerEnable)                     \
  X(cuptiRangeProfilerDisable)                    \
  X(cuptiRangeProfilerGetCounterDataSize)         \
  X(cuptiRangeProfilerCounterDataImageInitialize) \
  X(cuptiRangeProfilerSetConfig)                  \
  X(cuptiRangeProfilerStart)                      \
  X(cuptiRangeProfilerStop)                       \
  X(cuptiRangeProfilerDecodeData)                 \
  X(cuptiRangeProfilerGetCounterDataInfo)
// clang-format on

/// The profiling entry points of the loaded libcupti.
struct ProfilingApi {
#define XB_CUPTI_POINTER(f) decltype(&::f) f = nullptr;
  XB_CUPTI_PROFILING_FUNCTIONS(XB_CUPTI_POINTER)
#undef XB_CUPTI_POINTER
};

/// Looks the profiling functions up in the libcupti cupti() loaded. Throws ProfilerError naming
/// the library and the missing functions (a CUPTI older than CUDA 12.6 has no range profiler).
const ProfilingApi& profiling_api() {
  static const std::pair<ProfilingApi, std::string> loaded = []() -> std::pair<ProfilingApi, std::string> {
    std::string why;
    void* lib = reopen_cupti(why);
    if (lib == nullptr) return {ProfilingApi{}, why};
    ProfilingApi api;
    std::string missing;
    XB_CUPTI_PROFILING_FUNCTIONS(XB_CUPTI_RESOLVE)
    if (!missing.empty()) {
      return {ProfilingApi{},
              cupti().path + " has no range profiler (lacks " + missing + "; CUDA 12.6 or later needed)"};
    }
    return {api, ""};
  }();
  if (!loaded.second.empty()) throw ProfilerError("hardware counters unavailable: " + loaded.second);
  return loaded.first;
}

std::string result_name(CUptiResult r) { return cupti_result_name(r); }

class CuptiCounterCollector final : public CounterCollector {
 public:
  CuptiCounterCollector(int device, std::ostream* log) : api_(profiling_api()), log_(log), device_(device) {
    try {
      init();
    } catch (...) {
      teardown();
      throw;
    }
  }
  ~CuptiCounterCollector() override { teardown(); }

  std::vector<KernelCounters> collect(const std::function<void()>& work,
                                      const std::function<void()>& before_pass) override {
    if (range_ == nullptr) throw ProfilerError("counter pass: range profiling already ended (prepare_sass)");
    auto init = cupti_params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
        CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
    init.pRangeProfilerObject = range_;
    init.counterDataSize = counter_data_.size();
    init.pCounterData = counter_data_.data();
    call("cuptiRangeProfilerCounterDataImageInitialize", api_.cuptiRangeProfilerCounterDataImageInitialize(&init));
    auto set = cupti_params<CUpti_RangeProfiler_SetConfig_Params>(CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
    set.pRangeProfilerObject = range_;
    set.configSize = config_.size();
    set.pConfig = config_.data();
    set.counterDataImageSize = counter_data_.size();
    set.pCounterDataImage = counter_data_.data();
    set.range = CUPTI_AutoRange;        // one range per kernel launch
    set.replayMode = CUPTI_UserReplay;  // we run the work once per pass, after before_pass
    set.maxRangesPerPass = kMaxRanges;
    set.numNestingLevels = 1;
    set.minNestingLevel = 1;
    set.passIndex = 0;
    set.targetNestingLevel = 1;
    call("cuptiRangeProfilerSetConfig", api_.cuptiRangeProfilerSetConfig(&set));
    // CUPTI says after each Stop whether every pass has been submitted; more passes than the
    // config image's count would be a CUPTI or workload fault: stop with an error, never loop on.
    const int max_passes = 2 * (passes_ > 0 ? passes_ : 1) + 2;
    int pass = 0;
    for (bool all_submitted = false; !all_submitted; ++pass) {
      if (pass == max_passes) {
        throw ProfilerError("counter pass: CUPTI still wanted passes after " + std::to_string(pass) +
                            " (the config image needs " + std::to_string(passes_) + ")");
      }
      before_pass();  // outside Start/Stop: not profiled
      auto start = cupti_params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
      start.pRangeProfilerObject = range_;
      call(pass == 0 ? "cuptiRangeProfilerStart" : nullptr, api_.cuptiRangeProfilerStart(&start));
      cudaError_t sync = cudaSuccess;
      try {
        work();
        sync = cudaDeviceSynchronize();
      } catch (...) {
        cudaDeviceSynchronize();
        auto stop = cupti_params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
        stop.pRangeProfilerObject = range_;
        api_.cuptiRangeProfilerStop(&stop);
        throw;
      }
      auto stop = cupti_params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
      stop.pRangeProfilerObject = range_;
      call(pass == 0 ? "cuptiRangeProfilerStop" : nullptr, api_.cuptiRangeProfilerStop(&stop));
      if (sync != cudaSuccess)
        throw ProfilerError(std::string("counter pass: cudaDeviceSynchronize: ") + cudaGetErrorString(sync));
      all_submitted = stop.isAllPassSubmitted != 0;
    }
    note("user replay: " + std::to_string(pass) + " passes (config image: " + std::to_string(passes_) + ")");
    auto decode =
        cupti_params<CUpti_RangeProfiler_DecodeData_Params>(CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
    decode.pRangeProfilerObject = range_;
    call("cuptiRangeProfilerDecodeData", api_.cuptiRangeProfilerDecodeData(&decode));
    if (decode.numOfRangeDropped > 0) {
      throw ProfilerError("counter pass: " + std::to_string(decode.numOfRangeDropped) + " kernels dropped (more than " +
                          std::to_string(kMaxRanges) + " kernels in one collection)");
    }
    auto info = cupti_params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(
        CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
    info.pCounterDataImage = counter_data_.data();
    info.counterDataImageSize = counter_data_.size();
    call("cuptiRangeProfilerGetCounterDataInfo", api_.cuptiRangeProfilerGetCounterDataInfo(&info));
    std::vector<KernelCounters> out;
    std::vector<double> values(metric_ptrs_.size());
    for (std::size_t r = 0; r < info.numTotalRanges; ++r) {
      KernelCounters k;
      auto name =
          cupti_params<CUpti_Profiler_Host_GetRangeName_Params>(CUpti_Profiler_Host_GetRangeName_Params_STRUCT_SIZE);
      name.pCounterDataImage = counter_data_.data();
      name.counterDataImageSize = counter_data_.size();
      name.rangeIndex = r;
      name.delimiter = "/";
      if (api_.cuptiProfilerHostGetRangeName(&name) == CUPTI_SUCCESS && name.pRangeName != nullptr) {
        k.range = name.pRangeName;
        std::free(const_cast<char*>(name.pRangeName));  // the header says the caller frees it
      } else {
        k.range = std::to_string(r);
      }
      auto eval = cupti_params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
          CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
      eval.pHostObject = host_;
      eval.pCounterDataImage = counter_data_.data();
      eval.counterDataImageSize = counter_data_.size();
      eval.rangeIndex = r;
      eval.ppMetricNames = metric_ptrs_.data();
      eval.numMetrics = metric_ptrs_.size();
      eval.pMetricValues = values.data();
      call("cuptiProfilerHostEvaluateToGpuValues", api_.cuptiProfilerHostEvaluateToGpuValues(&eval));
      for (std::size_t m = 0; m < metric_ptrs_.size(); ++m) k.values[metric_ptrs_[m]] = values[m];
      out.push_back(std::move(k));
    }
    return out;
  }

  std::string prepare_sass() override {
    disable_range_profiler();
    if (const char* env = std::getenv("XB_COUNTERS_SASS"); env != nullptr && std::string(env) == "0") {
      return "XB_COUNTERS_SASS=0 (the SASS metrics pass was switched off)";
    }
    try {
      sass_ = std::make_unique<SassMetricsPass>(device_, ctx_, chip_, [this](const std::string& l) { note(l); });
    } catch (const ProfilerError& e) {
      note(e.what());
      return e.what();
    }
    return "";
  }

  std::map<std::string, double> collect_sass(const std::function<void()>& work) override {
    if (!sass_) throw ProfilerError("counter pass: collect_sass without a ready SASS metrics pass");
    return sass_->collect(work);
  }

  void describe(CounterSession& s) const override {
    s.method =
        "CUPTI range profiler (cupti_range_profiler.h): auto range (one range per kernel launch), user "
        "replay (per pass: the fixture's calls back to back after as many unprofiled warm-up calls, no L2 "
        "flush: the steady state of hot mode; per call = totals / calls); metrics evaluated with the "
        "profiler host API (cupti_profiler_host.h); SASS FLOP instructions from the SASS metrics API "
        "(cupti_sass_metrics.h), the fixture's calls patched, after range profiling";
    s.library = cupti().path;
    s.chip = chip_;
    s.passes = passes_;
    s.accepted = accepted_;
    s.rejected = rejected_;
    if (sass_) {  // kept apart: metric_ptrs_ points into accepted_
      for (const std::string& a : sass_->accepted()) s.accepted.push_back(a);
      for (const auto& [name, why] : sass_->rejected()) s.rejected[name] = why;
    }
  }

 private:
  /// Most kernels one collection holds: the counter pass's 16 calls (kCounterCalls,
  /// bench/core/counter_pass.h) of up to 32 kernels each, or the Nsight Compute probe's 64 calls
  /// (XB_PROBE_CALLS) of up to 8.
  static constexpr std::size_t kMaxRanges = 512;

  void note(const std::string& line) const {
    if (log_ != nullptr) *log_ << "counters: " << line << "\n";
  }

  /// Logs the call's result; throws ProfilerError unless it succeeded. Insufficient privileges
  /// get the one line that says what to do.
  /// `what` null: logged only when it failed (the replay loop's per-pass calls).
  void call(const char* what, CUptiResult r) const {
    if (what == nullptr) {
      if (r == CUPTI_SUCCESS) return;
      what = "cuptiRangeProfilerStart/Stop (replay pass)";
    }
    note(std::string(what) + " -> " + (r == CUPTI_SUCCESS ? "CUPTI_SUCCESS" : result_name(r)));
    if (r == CUPTI_SUCCESS) return;
    if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) {
      throw ProfilerError(
          std::string("hardware counters unavailable: ") + what +
          " returned CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: the driver restricts GPU performance counters "
          "to admin users (run as root, or load nvidia with NVreg_RestrictProfilingToAdminUsers=0; "
          "https://developer.nvidia.com/ERR_NVGPUCTRPERM)");
    }
    throw ProfilerError(std::string("hardware counters unavailable: ") + what + " failed: " + result_name(r));
  }

  void init() {
    auto pi = cupti_params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
    call("cuptiProfilerInitialize", api_.cuptiProfilerInitialize(&pi));
    initialized_ = true;
    // The context CUPTI profiles: the primary context of `device_`, current on this thread once the
    // runtime is initialized. cuCtxGetCurrent through the runtime's driver entry point, so that
    // nothing links libcuda.
    if (cudaSetDevice(device_) != cudaSuccess || cudaFree(nullptr) != cudaSuccess) {
      throw ProfilerError("hardware counters unavailable: no usable CUDA device " + std::to_string(device_));
    }
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 12000, cudaEnableDefault, &found) != cudaSuccess ||
        fn == nullptr) {
      throw ProfilerError("hardware counters unavailable: cannot find the driver's cuCtxGetCurrent");
    }
    CUcontext& ctx = ctx_;
    if (reinterpret_cast<CUresult (*)(CUcontext*)>(fn)(&ctx) != CUDA_SUCCESS || ctx == nullptr) {
      throw ProfilerError("hardware counters unavailable: no current CUDA context");
    }
    auto sup = cupti_params<CUpti_Profiler_DeviceSupported_Params>(CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE);
    sup.cuDevice = device_;
    sup.api = CUPTI_PROFILER_RANGE_PROFILING;
    call("cuptiProfilerDeviceSupported", api_.cuptiProfilerDeviceSupported(&sup));
    note("device supported: overall " + std::to_string(sup.isSupported) + ", architecture " +
         std::to_string(sup.architecture) + ", vGPU " + std::to_string(sup.vGpu) + ", confidential compute " +
         std::to_string(sup.confidentialCompute) + " (3 = supported, 2 = disabled, 1 = unsupported)");
    if (sup.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
      throw ProfilerError("hardware counters unavailable: CUPTI says device " + std::to_string(device_) +
                          " does not support range profiling (support level " + std::to_string(sup.isSupported) + ")");
    }
    auto chip = cupti_params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
    chip.deviceIndex = static_cast<std::size_t>(device_);
    call("cuptiDeviceGetChipName", api_.cuptiDeviceGetChipName(&chip));
    chip_ = chip.pChipName != nullptr ? chip.pChipName : "";
    note("chip " + chip_);
    auto avail = cupti_params<CUpti_Profiler_GetCounterAvailability_Params>(
        CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
    avail.ctx = ctx;
    call("cuptiProfilerGetCounterAvailability (size)", api_.cuptiProfilerGetCounterAvailability(&avail));
    availability_.assign(avail.counterAvailabilityImageSize, 0);
    avail.pCounterAvailabilityImage = availability_.data();
    call("cuptiProfilerGetCounterAvailability", api_.cuptiProfilerGetCounterAvailability(&avail));
    auto host = cupti_params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
    host.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    host.pChipName = chip_.c_str();
    host.pCounterAvailabilityImage = availability_.data();
    call("cuptiProfilerHostInitialize", api_.cuptiProfilerHostInitialize(&host));
    host_ = host.pHostObject;
    add_metrics();
    auto size = cupti_params<CUpti_Profiler_Host_GetConfigImageSize_Params>(
        CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
    size.pHostObject = host_;
    call("cuptiProfilerHostGetConfigImageSize", api_.cuptiProfilerHostGetConfigImageSize(&size));
    config_.assign(size.configImageSize, 0);
    auto image =
        cupti_params<CUpti_Profiler_Host_GetConfigImage_Params>(CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
    image.pHostObject = host_;
    image.configImageSize = config_.size();
    image.pConfigImage = config_.data();
    call("cuptiProfilerHostGetConfigImage", api_.cuptiProfilerHostGetConfigImage(&image));
    auto passes =
        cupti_params<CUpti_Profiler_Host_GetNumOfPasses_Params>(CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
    passes.configImageSize = config_.size();
    passes.pConfigImage = config_.data();
    call("cuptiProfilerHostGetNumOfPasses", api_.cuptiProfilerHostGetNumOfPasses(&passes));
    passes_ = static_cast<int>(passes.numOfPasses);
    note("replay passes per kernel: " + std::to_string(passes_));
    auto enable = cupti_params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
    enable.ctx = ctx;
    call("cuptiRangeProfilerEnable", api_.cuptiRangeProfilerEnable(&enable));
    range_ = enable.pRangeProfilerObject;
    auto data = cupti_params<CUpti_RangeProfiler_GetCounterDataSize_Params>(
        CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
    data.pRangeProfilerObject = range_;
    data.pMetricNames = metric_ptrs_.data();
    data.numMetrics = metric_ptrs_.size();
    data.maxNumOfRanges = kMaxRanges;
    data.maxNumRangeTreeNodes = kMaxRanges;
    call("cuptiRangeProfilerGetCounterDataSize", api_.cuptiRangeProfilerGetCounterDataSize(&data));
    counter_data_.assign(data.counterDataSize, 0);
  }

  /// Adds each range profiler metric on its own, so that one the chip refuses is named and left out.
  void add_metrics() {
    for (const CounterMetric& m : counter_metrics()) {
      if (m.source != CounterSource::RangeProfiler) continue;
      const std::string base = m.name.substr(0, m.name.find('.'));
      auto props = cupti_params<CUpti_Profiler_Host_GetMetricProperties_Params>(
          CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE);
      props.pHostObject = host_;
      props.pMetricName = base.c_str();
      const CUptiResult pr = api_.cuptiProfilerHostGetMetricProperties(&props);
      if (pr != CUPTI_SUCCESS) {
        rejected_[m.name] = "cuptiProfilerHostGetMetricProperties: " + result_name(pr);
        note("metric rejected: " + m.name + " (" + rejected_[m.name] + ")");
        continue;
      }
      const char* name = m.name.c_str();
      auto add = cupti_params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(
          CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
      add.pHostObject = host_;
      add.ppMetricNames = &name;
      add.numMetrics = 1;
      const CUptiResult ar = api_.cuptiProfilerHostConfigAddMetrics(&add);
      if (ar != CUPTI_SUCCESS) {
        rejected_[m.name] = "cuptiProfilerHostConfigAddMetrics: " + result_name(ar);
        note("metric rejected: " + m.name + " (" + rejected_[m.name] + ")");
        continue;
      }
      accepted_.push_back(m.name);
      note("metric accepted: " + m.name + " (" + (props.pDescription ? props.pDescription : "") + ", unit " +
           (props.pDimUnit ? props.pDimUnit : "?") + ")");
    }
    std::string missing;
    for (const CounterMetric& m : counter_metrics()) {
      if (m.essential && rejected_.count(m.name) != 0) missing += (missing.empty() ? "" : ", ") + m.name;
    }
    if (!missing.empty())
      throw ProfilerError("hardware counters unavailable: CUPTI refused the essential metrics " + missing);
    for (const std::string& a : accepted_) metric_ptrs_.push_back(a.c_str());
  }

  void disable_range_profiler() noexcept {
    if (range_ != nullptr) {
      auto p = cupti_params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
      p.pRangeProfilerObject = range_;
      const CUptiResult r = api_.cuptiRangeProfilerDisable(&p);
      note(std::string("cuptiRangeProfilerDisable -> ") + (r == CUPTI_SUCCESS ? "CUPTI_SUCCESS" : result_name(r)));
      range_ = nullptr;
    }
  }

  void teardown() noexcept {
    sass_.reset();
    disable_range_profiler();
    if (host_ != nullptr) {
      auto p =
          cupti_params<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
      p.pHostObject = host_;
      api_.cuptiProfilerHostDeinitialize(&p);
      host_ = nullptr;
    }
    if (initialized_) {
      auto p = cupti_params<CUpti_Profiler_DeInitialize_Params>(CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE);
      api_.cuptiProfilerDeInitialize(&p);
      initialized_ = false;
    }
  }

  const ProfilingApi& api_;
  std::ostream* log_;
  int device_;
  CUcontext ctx_ = nullptr;
  bool initialized_ = false;
  std::string chip_;
  int passes_ = 0;
  std::vector<std::uint8_t> availability_;
  std::vector<std::uint8_t> config_;
  std::vector<std::uint8_t> counter_data_;
  CUpti_Profiler_Host_Object* host_ = nullptr;
  CUpti_RangeProfiler_Object* range_ = nullptr;
  std::vector<std::string> accepted_;  // owns the names metric_ptrs_ points into (never resized after)
  std::vector<const char*> metric_ptrs_;
  std::map<std::string, std::string> rejected_;
  std::unique_ptr<SassMetricsPass> sass_;  // after prepare_sass()
};

}  // namespace

std::string cupti_result_name(CUptiResult r) {
  const char* text = nullptr;
  if (cupti().cuptiGetResultString(r, &text) != CUPTI_SUCCESS || text == nullptr)
    return "CUPTI error " + std::to_string(r);
  return text;
}

std::unique_ptr<CounterCollector> make_cupti_counter_collector(int device, std::ostream* log) {
  return std::make_unique<CuptiCounterCollector>(device, log);
}

}  // namespace xb
