// The SASS metrics pass (see cupti_sass_metrics.h). Reference: CUPTI documentation, "CUPTI SASS
// Metrics API", and the CUDA Toolkit's cupti_sass_metrics.h; the entry points are looked up in the
// loaded libcupti on their own, so that a libcupti without them still serves the range profiler.
#include "profiler/adapters/cupti_sass_metrics.h"

#include <cuda_runtime_api.h>
#include <cupti_profiler_target.h>
#include <cupti_sass_metrics.h>
#include <cupti_target.h>
#include <dlfcn.h>

#include <cstdlib>
#include <utility>

#include "profiler/adapters/cupti_api.h"
#include "profiler/model/counters.h"
#include "profiler/model/profiler.h"

namespace xb {
namespace {

// An X-macro list, one function a line.
// clang-format off
#define XB_CUPTI_SASS_FUNCTIONS(X)     \
  X(cuptiProfilerDeviceSupported)      \
  X(cuptiSassMetricsGetNumOfMetrics)   \
  X(cuptiSassMetricsGetMetrics)        \
  X(cuptiSassMetricsGetProperties)     \
  X(cuptiSassMetricsSetConfig)         \
  X(cuptiSassMetricsUnsetConfig)       \
  X(cuptiSassMetricsEnable)            \
  X(cuptiSassMetricsDisable)           \
  X(cuptiSassMetricsGetDataProperties) \
  X(cuptiSassMetricsFlushData)
// clang-format on

struct SassApi {
#define XB_CUPTI_POINTER(f) decltype(&::f) f = nullptr;
  XB_CUPTI_SASS_FUNCTIONS(XB_CUPTI_POINTER)
#undef XB_CUPTI_POINTER
};

/// The SASS metrics entry points of the loaded libcupti; throws ProfilerError naming what is missing.
const SassApi& sass_api() {
  static const std::pair<SassApi, std::string> loaded = []() -> std::pair<SassApi, std::string> {
    std::string why;
    void* lib = reopen_cupti(why);
    if (lib == nullptr) return {SassApi{}, why};
    SassApi api;
    std::string missing;
    XB_CUPTI_SASS_FUNCTIONS(XB_CUPTI_RESOLVE)
    if (!missing.empty()) return {SassApi{}, cupti().path + " has no SASS metrics API (lacks " + missing + ")"};
    return {api, ""};
  }();
  if (!loaded.second.empty()) throw ProfilerError("SASS metrics unavailable: " + loaded.second);
  return loaded.first;
}

}  // namespace

void SassMetricsPass::call(const char* what, CUptiResult r) const {
  note_(std::string(what) + " -> " + (r == CUPTI_SUCCESS ? "CUPTI_SUCCESS" : cupti_result_name(r)));
  if (r != CUPTI_SUCCESS)
    throw ProfilerError(std::string("SASS metrics: ") + what + " failed: " + cupti_result_name(r));
}

SassMetricsPass::SassMetricsPass(int device, CUcontext ctx, const std::string& chip,
                                 std::function<void(const std::string&)> note)
    : note_(std::move(note)), device_(device), ctx_(ctx) {
  const SassApi& api = sass_api();
  auto sup = cupti_params<CUpti_Profiler_DeviceSupported_Params>(CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE);
  sup.cuDevice = device;
  sup.api = CUPTI_PROFILER_SASS_METRICS;
  call("cuptiProfilerDeviceSupported (SASS metrics)", api.cuptiProfilerDeviceSupported(&sup));
  if (sup.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
    throw ProfilerError("SASS metrics: CUPTI says device " + std::to_string(device) +
                        " does not support them (support level " + std::to_string(sup.isSupported) + ")");
  }
  // The chip's list, logged: what to use when a name of ours is refused.
  auto num =
      cupti_params<CUpti_SassMetrics_GetNumOfMetrics_Params>(CUpti_SassMetrics_GetNumOfMetrics_Params_STRUCT_SIZE);
  num.pChipName = chip.c_str();
  if (api.cuptiSassMetricsGetNumOfMetrics(&num) == CUPTI_SUCCESS && num.numOfMetrics > 0) {
    std::vector<CUpti_SassMetrics_MetricDetails> list(num.numOfMetrics);
    auto get = cupti_params<CUpti_SassMetrics_GetMetrics_Params>(CUpti_SassMetrics_GetMetrics_Params_STRUCT_SIZE);
    get.pChipName = chip.c_str();
    get.numOfMetrics = list.size();
    get.pMetricsList = list.data();
    if (api.cuptiSassMetricsGetMetrics(&get) == CUPTI_SUCCESS) {
      std::string names;
      for (const auto& m : list)
        names += std::string(names.empty() ? "" : ", ") + (m.pMetricName ? m.pMetricName : "?");
      note_("SASS metrics of " + chip + " (" + std::to_string(list.size()) + "): " + names);
    }
  }
  std::vector<CUpti_SassMetrics_Config> configs;
  for (const CounterMetric& m : counter_metrics()) {
    if (m.source != CounterSource::SassMetrics) continue;
    const std::string base = m.name.substr(0, m.name.find('.'));
    auto props =
        cupti_params<CUpti_SassMetrics_GetProperties_Params>(CUpti_SassMetrics_GetProperties_Params_STRUCT_SIZE);
    props.pChipName = chip.c_str();
    props.pMetricName = base.c_str();
    const CUptiResult r = api.cuptiSassMetricsGetProperties(&props);
    if (r != CUPTI_SUCCESS) {
      rejected_[m.name] = "cuptiSassMetricsGetProperties: " + cupti_result_name(r);
      note_("SASS metric rejected: " + m.name + " (" + rejected_[m.name] + ")");
      continue;
    }
    accepted_.push_back(m.name);
    id_to_name_[props.metric.metricId] = m.name;
    note_("SASS metric accepted: " + m.name + " (id " + std::to_string(props.metric.metricId) + ", " +
          (props.metric.pMetricDescription ? props.metric.pMetricDescription : "") + ")");
    CUpti_SassMetrics_Config c{};
    c.metricId = props.metric.metricId;
    c.outputGranularity = CUPTI_SASS_METRICS_OUTPUT_GRANULARITY_GPU;
    configs.push_back(c);
  }
  if (configs.empty()) throw ProfilerError("SASS metrics: the chip " + chip + " offers none of the SASS FLOP metrics");
  auto set = cupti_params<CUpti_SassMetricsSetConfig_Params>(CUpti_SassMetricsSetConfig_Params_STRUCT_SIZE);
  set.numOfMetricConfig = configs.size();
  set.pConfigs = configs.data();
  set.deviceIndex = static_cast<std::uint32_t>(device);
  call("cuptiSassMetricsSetConfig", api.cuptiSassMetricsSetConfig(&set));
  configured_ = true;
}

SassMetricsPass::~SassMetricsPass() {
  if (!configured_) return;
  auto unset = cupti_params<CUpti_SassMetricsUnsetConfig_Params>(CUpti_SassMetricsUnsetConfig_Params_STRUCT_SIZE);
  unset.deviceIndex = static_cast<std::uint32_t>(device_);
  sass_api().cuptiSassMetricsUnsetConfig(&unset);
}

std::map<std::string, double> SassMetricsPass::collect(const std::function<void()>& work) {
  const SassApi& api = sass_api();
  auto enable = cupti_params<CUpti_SassMetricsEnable_Params>(CUpti_SassMetricsEnable_Params_STRUCT_SIZE);
  enable.ctx = ctx_;
  enable.enableLazyPatching = 1;  // patch only the kernels `work` launches, at their first launch
  call("cuptiSassMetricsEnable", api.cuptiSassMetricsEnable(&enable));
  auto disable = [&]() {
    auto d = cupti_params<CUpti_SassMetricsDisable_Params>(CUpti_SassMetricsDisable_Params_STRUCT_SIZE);
    d.ctx = ctx_;
    const CUptiResult r = api.cuptiSassMetricsDisable(&d);
    note_(std::string("cuptiSassMetricsDisable -> ") + (r == CUPTI_SUCCESS ? "CUPTI_SUCCESS" : cupti_result_name(r)) +
          ", dropped records " + std::to_string(d.numOfDroppedRecords));
    return r;
  };
  std::map<std::string, double> totals;
  for (const std::string& a : accepted_) totals[a] = 0;
  try {
    work();
    const cudaError_t sync = cudaDeviceSynchronize();
    if (sync != cudaSuccess)
      throw ProfilerError(std::string("SASS metrics: cudaDeviceSynchronize: ") + cudaGetErrorString(sync));
    auto props =
        cupti_params<CUpti_SassMetricsGetDataProperties_Params>(CUpti_SassMetricsGetDataProperties_Params_STRUCT_SIZE);
    props.ctx = ctx_;
    call("cuptiSassMetricsGetDataProperties", api.cuptiSassMetricsGetDataProperties(&props));
    note_("SASS records " + std::to_string(props.numOfPatchedInstructionRecords) + ", instances " +
          std::to_string(props.numOfInstances));
    if (props.numOfPatchedInstructionRecords > 0 && props.numOfInstances > 0) {
      std::vector<CUpti_SassMetrics_InstanceValue> values(props.numOfPatchedInstructionRecords * props.numOfInstances);
      std::vector<CUpti_SassMetrics_Data> records(props.numOfPatchedInstructionRecords);
      for (std::size_t i = 0; i < records.size(); ++i) {
        records[i].structSize = sizeof(CUpti_SassMetrics_Data);
        records[i].pInstanceValues = values.data() + i * props.numOfInstances;
      }
      auto flush = cupti_params<CUpti_SassMetricsFlushData_Params>(CUpti_SassMetricsFlushData_Params_STRUCT_SIZE);
      flush.ctx = ctx_;
      flush.numOfPatchedInstructionRecords = records.size();
      flush.numOfInstances = props.numOfInstances;
      flush.pMetricsData = records.data();
      call("cuptiSassMetricsFlushData", api.cuptiSassMetricsFlushData(&flush));
      for (CUpti_SassMetrics_Data& rec : records) {
        // The CUPTI sample frees each record's function name: CUPTI allocates it for the caller.
        std::free(const_cast<char*>(rec.functionName));
        rec.functionName = nullptr;
      }
      for (const CUpti_SassMetrics_InstanceValue& v : values) {
        const auto it = id_to_name_.find(v.metricId);
        if (it != id_to_name_.end()) totals[it->second] += static_cast<double>(v.value);
      }
    }
  } catch (...) {
    disable();
    throw;
  }
  const CUptiResult off = disable();
  if (off != CUPTI_SUCCESS)
    throw ProfilerError("SASS metrics: cuptiSassMetricsDisable failed: " + cupti_result_name(off));
  return totals;
}

}  // namespace xb
