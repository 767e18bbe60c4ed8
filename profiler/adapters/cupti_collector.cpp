// CUPTI adapter: the only translation unit that talks to CUPTI. It collects activity records
// through the asynchronous buffer API and copies them into RawRecord (profiler/model/raw_records.h).
// Reference: CUPTI documentation, "Activity API" (cuptiActivityRegisterCallbacks,
// cuptiActivityFlushAll, cuptiActivityGetNextRecord, cuptiActivityGetNumDroppedRecords) and
// "Callback API" (cuptiSubscribe, cuptiEnableDomain with CUPTI_CB_DOMAIN_NVTX).
//
// NVTX: the user's NVTX push/pop ranges are recorded through CUPTI's NVTX callbacks. They only
// fire when NVTX hands its calls to CUPTI, i.e. when NVTX_INJECTION64_PATH names libcupti at the
// process's first NVTX call; make_cupti_source sets it (unless already set, e.g. by Nsight
// Systems). Each such range becomes a HostRange (user annotation) whose id is pushed as the CUPTI
// external id while it is open, exactly like the profiler's own ranges, so kernels launched
// inside it are attributed to it in the table and both exports.
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <dlfcn.h>
#include <generated_nvtx_meta.h>
#include <nvtx3/nvToolsExt.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iterator>
#include <map>
#include <mutex>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "kernels/cuda_check.h"
#include "profiler/adapters/cupti_api.h"
#include "profiler/adapters/cupti_check.h"
#include "profiler/adapters/cupti_source.h"
#include "profiler/adapters/nvtx_mirror.h"
#include "profiler/model/profiler.h"

namespace xb {
namespace {

/// The activity kinds bench records, with their CuptiKindBits bit.
constexpr std::pair<CUpti_ActivityKind, unsigned> kKinds[] = {
    {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, kCuptiKernel},
    {CUPTI_ACTIVITY_KIND_MEMCPY, kCuptiMemcpy},
    {CUPTI_ACTIVITY_KIND_MEMSET, kCuptiMemset},
    {CUPTI_ACTIVITY_KIND_RUNTIME, kCuptiRuntime},
    {CUPTI_ACTIVITY_KIND_DRIVER, kCuptiDriver},
    {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, kCuptiSync},
    {CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, kCuptiExternal},
};
// API calls that only query state and launch no device work: not recorded. cuBLASLt makes about
// a dozen of them per GEMM (cuKernelGetAttribute, cudaGetDevice, ...); recording them was most of
// CUPTI's per-launch host cost (bench overhead on the H200, results/h200/vs-torch-2026-11-29).
// The activity kinds RUNTIME and DRIVER are enabled first; these calls then turn single APIs off
// (cuptiActivityEnableRuntimeApi/DriverApi; the kind must not be re-enabled afterwards). The event
// and stream queries: the sampling device's waits poll them until their deadline
// (kernels/cuda_wait.h), and a record per poll would bury a step's records; the synchronize that
// ends each wait is recorded as before.
constexpr CUpti_CallbackId kQuietDriverApis[] = {
    CUPTI_DRIVER_TRACE_CBID_cuKernelGetAttribute,  CUPTI_DRIVER_TRACE_CBID_cuKernelGetName,
    CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent,       CUPTI_DRIVER_TRACE_CBID_cuFuncGetAttribute,
    CUPTI_DRIVER_TRACE_CBID_cuCtxGetDevice,        CUPTI_DRIVER_TRACE_CBID_cuDeviceGetAttribute,
    CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress_v2,   CUPTI_DRIVER_TRACE_CBID_cuStreamGetCaptureInfo_v2,
    CUPTI_DRIVER_TRACE_CBID_cuFuncGetName,         CUPTI_DRIVER_TRACE_CBID_cuCtxGetId,
    CUPTI_DRIVER_TRACE_CBID_cuPointerGetAttribute, CUPTI_DRIVER_TRACE_CBID_cuLibraryGetKernel,
    CUPTI_DRIVER_TRACE_CBID_cuModuleGetFunction,   CUPTI_DRIVER_TRACE_CBID_cuEventQuery,
    CUPTI_DRIVER_TRACE_CBID_cuStreamQuery,
};
constexpr CUpti_CallbackId kQuietRuntimeApis[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020,           CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaPeekAtLastError_v3020,     CUPTI_RUNTIME_TRACE_CBID_cudaDeviceGetAttribute_v5000,
    CUPTI_RUNTIME_TRACE_CBID_cudaFuncGetAttributes_v3020,   CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v10010,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceProperties_v3020, CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020,          CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_v3020,
};
/// What the work-signature probe needs besides CUDA_EVENT records (ActivitySource::begin_probe).
constexpr unsigned kProbeKinds = kCuptiKernel | kCuptiMemcpy | kCuptiMemset | kCuptiRuntime | kCuptiSync;
constexpr CUpti_ExternalCorrelationKind kExternalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
static_assert(static_cast<std::uint32_t>(kExternalKind) == kProfilerExternalKind,
              "attribute_api_by_time writes the kind the NVTX ranges' external ids carry");
constexpr std::size_t kAlign = 8;  // CUPTI requires 8-byte aligned activity buffers

/// Strips CUPTI's "_v7000"-style version suffix: "cudaLaunchKernel_v7000" -> "cudaLaunchKernel".
std::string strip_version_suffix(std::string name) {
  const auto pos = name.rfind("_v");
  if (pos != std::string::npos && pos + 2 < name.size() &&
      name.find_first_not_of("0123456789", pos + 2) == std::string::npos) {
    name.erase(pos);
  }
  return name;
}

/// Copies the fields every device-activity record (kernel, memcpy, memset) carries.
template <typename Record>
void copy_device_fields(const Record& a, RawRecord& r) {
  r.start_ns = static_cast<std::int64_t>(a.start);
  r.end_ns = static_cast<std::int64_t>(a.end);
  r.correlation_id = a.correlationId;
  r.device_id = a.deviceId;
  r.context_id = a.contextId;
  r.stream_id = a.streamId;
  r.graph_node_id = a.graphNodeId;
  r.graph_id = a.graphId;
}

class CuptiSource;
std::atomic<CuptiSource*> g_active{nullptr};  // CUPTI allows one set of buffer callbacks

/// The activity buffers on_buffer_requested handed to CUPTI and not yet given back, for every
/// session of the process (a buffer may complete after its session ended). CUPTI keeps one pair
/// of buffer callbacks per process, and start() replaces another client's pair (PyTorch's Kineto
/// in crossbench.bench from Python): CUPTI may then complete a buffer that client requested through
/// ours. Such a buffer is left alone (Kineto allocated it and frees it itself): freeing it here
/// would be an invalid or double free. Never destroyed: CUPTI may call back during exit.
std::mutex g_buffers_mutex;
std::unordered_set<const void*>& own_buffers() {
  static auto* buffers = new std::unordered_set<const void*>();
  return *buffers;
}

/// One open range on a host thread, innermost last: the profiler's (pushed through
/// push_external_id, domain kProfilerFrame) and the user's NVTX push/pop ranges.
struct Frame {
  std::uint64_t id = 0;          ///< range id; 0: an NVTX range opened while not recording
  const void* domain = nullptr;  ///< NVTX domain handle (nullptr = default domain)
  bool external = false;         ///< its id was pushed as a CUPTI external id
  std::size_t index = 0;         ///< into the source's NVTX ranges
  std::uint64_t session = 0;     ///< the source session that recorded it
};
const char kProfilerFrameTag = 0;
const void* const kProfilerFrame = &kProfilerFrameTag;
thread_local std::vector<Frame> t_frames;

class CuptiSource final : public ActivitySource {
 public:
  CuptiSource(std::size_t buffer_bytes, std::size_t max_buffers, unsigned kinds, std::size_t overflow_buffers)
      : buffer_bytes_(buffer_bytes), max_buffers_(max_buffers), overflow_buffers_(overflow_buffers), kinds_(kinds) {
    CuptiSource* expected = nullptr;
    if (!g_active.compare_exchange_strong(expected, this)) {
      throw ProfilerError("a CUPTI profiler session is already active in this process");
    }
    // The first CUPTI call: it fails here, before any output exists, when another tool (Nsight
    // Systems, Nsight Compute) holds CUPTI (CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED).
    try {
      XB_CUPTI(cupti().cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM));
    } catch (...) {
      g_active.store(nullptr);
      throw;
    }
  }
  ~CuptiSource() override {
    if (enabled_) {
      try {
        stop();
      } catch (...) {}
    }
    unsubscribe();
    g_active.store(nullptr);
  }

  /// CUPTI's documented default timestamp on Linux: clock_gettime(CLOCK_REALTIME), in ns
  /// (cupti_activity.h, cuptiActivityRegisterTimestampCallback).
  static std::uint64_t CUPTIAPI realtime_ns() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
  }

  void start() override {
    // The timestamp source is process-wide too, and another client may have replaced it: PyTorch's
    // profiler (Kineto) registers one returning TSC ticks, not ns, at each of its starts (its
    // CuptiActivityProfiler, "use_cupti_tsc"), so after a torch.profiler session every CUPTI
    // timestamp crossbench read was in ticks (on the H200's 2.1 GHz host, kernels 2.1x too long
    // against the cudaEvents). Register CUPTI's own default again, before enabling any kind as
    // CUPTI requires. Kineto registers its own again at its next start. A CUPTI that refuses a
    // timestamp callback (WSL) keeps its default, which is this clock.
    cupti().cuptiActivityRegisterTimestampCallback(&CuptiSource::realtime_ns);
    // The callbacks find the live source through g_active. They are registered at every start,
    // not once per process: CUPTI keeps one pair per process, and another client of the same
    // CUPTI copy (PyTorch's profiler, Kineto, registers its own at each start and may finalize
    // CUPTI when done) may have replaced ours since the last session (crossbench.bench, Python).
    XB_CUPTI(
        cupti().cuptiActivityRegisterCallbacks(&CuptiSource::on_buffer_requested, &CuptiSource::on_buffer_completed));
    for (const auto& [kind, bit] : kKinds) {
      if ((kinds_ & bit) == 0) continue;
      const CUptiResult result = cupti().cuptiActivityEnable(kind);
      if (result != CUPTI_SUCCESS) {
        for (const auto& kind_bit : kKinds) cupti().cuptiActivityDisable(kind_bit.first);
        const char* text = nullptr;
        cupti().cuptiGetResultString(result, &text);
        throw ProfilerError(std::string("cannot enable CUPTI activity collection (") + (text ? text : "unknown") +
                            "); is another profiler such as Nsight Systems attached?");
      }
    }
    if ((kinds_ & kCuptiDriver) != 0) {
      for (CUpti_CallbackId cbid : kQuietDriverApis) XB_CUPTI(cupti().cuptiActivityEnableDriverApi(cbid, 0));
    }
    if ((kinds_ & kCuptiRuntime) != 0) {
      for (CUpti_CallbackId cbid : kQuietRuntimeApis) XB_CUPTI(cupti().cuptiActivityEnableRuntimeApi(cbid, 0));
    }
    // NVTX callbacks: CUPTI allows one subscriber per process, so the subscription lasts this
    // session only (stop() unsubscribes): another profiler in the process, such as PyTorch's
    // (Kineto subscribes when it starts), can subscribe after a crossbench run. When someone else
    // holds it, the session simply has no user NVTX ranges.
    if ((kinds_ & kCuptiNvtx) != 0) {
      CUpti_SubscriberHandle subscriber{};
      if (cupti().cuptiSubscribe(&subscriber, &CuptiSource::on_nvtx, nullptr) == CUPTI_SUCCESS) {
        subscriber_ = subscriber;
        if (cupti().cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_NVTX) != CUPTI_SUCCESS) unsubscribe();
      }
    }
    {
      std::lock_guard<std::mutex> lock(nvtx_mutex_);
      ++session_;
      nvtx_ranges_.clear();
      recording_ = true;
    }
    enabled_ = true;
    // CUDA_EVENT records for the work-signature probe, on for the whole session: turning the kind
    // on and off around each probe cost up to ~0.1 s a probe on the H200 (results/h200/
    // user-patterns-2026-12-04, signature-cost); outside a probe consume() drops them at once.
    event_records_on_ =
        probe_supported() && cupti().cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CUDA_EVENT) == CUPTI_SUCCESS;
  }

  std::vector<RawRecord> stop() override {
    unsubscribe();
    // After a device fault or a hung call (cuda_unusable, kernels/cuda_check.h) a flush or disable
    // may fail: tolerated, so that the records CUPTI delivered before are kept and the run folder
    // of the fixtures before the fault is still written.
    const auto check = [](CUptiResult result, const char* call, int line) {
      if (result != CUPTI_SUCCESS && !cuda_unusable())
        throw ProfilerError(detail::cupti_error_message(result, call, __FILE__, line));
    };
    check(cupti().cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll", __LINE__);
    for (const auto& [kind, bit] : kKinds) {
      if ((kinds_ & bit) != 0) check(cupti().cuptiActivityDisable(kind), "cuptiActivityDisable", __LINE__);
    }
    if (event_records_on_) cupti().cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CUDA_EVENT);
    event_records_on_ = false;
    enabled_ = false;
    check(cupti().cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll", __LINE__);
    {
      std::lock_guard<std::mutex> lock(nvtx_mutex_);
      recording_ = false;
      const std::int64_t end = now_ns();
      for (HostRange& r : nvtx_ranges_) {
        if (r.end_ns == 0) r.end_ns = end;  // still open: ends with the session
      }
    }
    std::lock_guard<std::mutex> lock(mutex_);
    return std::exchange(records_, {});
  }

  // The work-signature probe: CUDA_EVENT records are on for the whole session where the probe is
  // supported (start()); the records of a probe's window are the ones delivered after its mark (a
  // record cannot be delivered before its API call starts).
  bool can_probe() const override { return event_records_on_; }
  void begin_probe() override {
    std::lock_guard<std::mutex> lock(mutex_);
    probe_mark_ = records_.size();
    probe_events_.clear();
    probing_ = event_records_on_;
  }

  ProbeRecords end_probe() override {
    ProbeRecords p;
    bool probing = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      probing = probing_;
    }
    if (!probing) {
      p.why = !enabled_                               ? "the profiler is not recording"
              : (kinds_ & kProbeKinds) != kProbeKinds ? "this session records only some activity kinds"
                                                      : "this CUPTI cannot record CUDA_EVENT activity with "
                                                        "cudaEventSyncId (CUPTI 12.8 or newer), which the probe needs";
      return p;
    }
    // Not under mutex_: the flush delivers buffers through on_buffer_completed, which takes it.
    const CUptiResult flushed = cupti().cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    std::lock_guard<std::mutex> lock(mutex_);
    probing_ = false;
    if (flushed != CUPTI_SUCCESS) {
      const char* text = nullptr;
      cupti().cuptiGetResultString(flushed, &text);
      p.why = std::string("cuptiActivityFlushAll failed (") + (text ? text : "unknown") + ")";
      return p;
    }
    p.available = true;
    p.records.assign(records_.begin() + static_cast<std::ptrdiff_t>(std::min(probe_mark_, records_.size())),
                     records_.end());
    p.event_records = std::exchange(probe_events_, {});
    return p;
  }

  std::vector<HostRange> take_ranges() override {
    std::lock_guard<std::mutex> lock(nvtx_mutex_);
    return std::exchange(nvtx_ranges_, {});
  }

  std::uint64_t innermost_range() const override {
    // Only this session's ranges: an NVTX range left open from an earlier session is not in it.
    for (auto it = t_frames.rbegin(); it != t_frames.rend(); ++it) {
      if (it->id != 0 && (it->domain == kProfilerFrame || it->session == session_)) return it->id;
    }
    return 0;
  }

  std::uint64_t dropped_records() const override { return dropped_.load(); }

  std::int64_t now_ns() const override {
    std::uint64_t ts = 0;
    XB_CUPTI(cupti().cuptiGetTimestamp(&ts));
    return static_cast<std::int64_t>(ts);
  }

  void push_external_id(std::uint64_t id) override {
    XB_CUPTI(cupti().cuptiActivityPushExternalCorrelationId(kExternalKind, id));
    t_frames.push_back(Frame{id, kProfilerFrame, true, 0, 0});
  }
  void pop_external_id() override {
    std::uint64_t last = 0;
    XB_CUPTI(cupti().cuptiActivityPopExternalCorrelationId(kExternalKind, &last));
    exit_range();
  }
  // The profiler's own ranges: noted for innermost_range (an NVTX range opened inside one nests
  // under it) but not pushed to CUPTI; the profiler ties API records to them by time.
  void enter_range(std::uint64_t id) override { t_frames.push_back(Frame{id, kProfilerFrame, false, 0, 0}); }
  void exit_range() override {
    for (auto it = t_frames.rbegin(); it != t_frames.rend(); ++it) {
      if (it->domain == kProfilerFrame) {
        t_frames.erase(std::next(it).base());
        break;
      }
    }
  }

  void describe(SessionMeta& meta) const override {
    cudaDriverGetVersion(&meta.cuda_driver_version);
    cudaRuntimeGetVersion(&meta.cuda_runtime_version);
    XB_CUPTI(cupti().cuptiGetVersion(&meta.cupti_version));
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
    meta.devices.clear();
    for (int d = 0; d < count; ++d) {
      cudaDeviceProp p{};
      if (cudaGetDeviceProperties(&p, d) != cudaSuccess) continue;
      DeviceInfo info;
      info.id = static_cast<std::uint32_t>(d);
      info.name = p.name;
      info.total_global_mem = p.totalGlobalMem;
      info.compute_major = p.major;
      info.compute_minor = p.minor;
      info.num_sms = p.multiProcessorCount;
      info.max_threads_per_block = p.maxThreadsPerBlock;
      info.max_threads_per_multiprocessor = p.maxThreadsPerMultiProcessor;
      info.regs_per_block = p.regsPerBlock;
      info.regs_per_multiprocessor = p.regsPerMultiprocessor;
      info.warp_size = p.warpSize;
      info.shared_mem_per_block = p.sharedMemPerBlock;
      info.shared_mem_per_block_optin = p.sharedMemPerBlockOptin;
      info.shared_mem_per_multiprocessor = p.sharedMemPerMultiprocessor;
      info.l2_cache_bytes = static_cast<std::uint64_t>(p.l2CacheSize);
      meta.devices.push_back(std::move(info));
    }
  }

 private:
  static void CUPTIAPI on_buffer_requested(uint8_t** buffer, size_t* size, size_t* max_num_records) {
    CuptiSource* self = g_active.load();
    *buffer = nullptr;
    *size = 0;
    *max_num_records = 0;
    if (self == nullptr) return;
    const std::size_t bytes = activity_buffer_bytes(self->outstanding_.load(), self->buffer_bytes_, self->max_buffers_,
                                                    self->overflow_buffers_);
    if (bytes == 0) return;  // CUPTI drops (and counts) what it cannot store
    void* p = std::aligned_alloc(kAlign, bytes);
    if (p == nullptr) return;
    {
      std::lock_guard<std::mutex> lock(g_buffers_mutex);
      own_buffers().insert(p);
    }
    ++self->outstanding_;
    *buffer = static_cast<uint8_t*>(p);
    *size = bytes;
  }

  static void CUPTIAPI on_buffer_completed(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t /*size*/,
                                           size_t valid_size) {
    if (buffer == nullptr) return;
    {
      std::lock_guard<std::mutex> lock(g_buffers_mutex);
      if (own_buffers().erase(buffer) == 0) return;  // another CUPTI client's buffer (see own_buffers)
    }
    CuptiSource* self = g_active.load();
    if (self != nullptr) {
      self->consume(buffer, valid_size);
      size_t dropped = 0;
      if (cupti().cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS) {
        self->dropped_ += dropped;
      }
      --self->outstanding_;
    }
    std::free(buffer);
  }

  /// CUPTI NVTX callback (any host thread). Push: records a HostRange (while a session records)
  /// and pushes its id as the external id; pop: ends the innermost range of the same domain.
  /// Ranges in crossbench's own domain are the profiler's (profiler/adapters/nvtx_mirror.h): skipped.
  static void CUPTIAPI on_nvtx(void* /*userdata*/, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                               const void* cbdata) {
    if (domain != CUPTI_CB_DOMAIN_NVTX || cbdata == nullptr) return;
    const void* params = static_cast<const CUpti_NvtxData*>(cbdata)->functionParams;
    if (params == nullptr) return;
    switch (cbid) {
      case CUPTI_CBID_NVTX_nvtxRangePushA:
        push_nvtx(nullptr, static_cast<const nvtxRangePushA_params*>(params)->message);
        break;
      case CUPTI_CBID_NVTX_nvtxRangePushW:  // wide message: recorded unnamed, so its pop matches
        push_nvtx(nullptr, nullptr);
        break;
      case CUPTI_CBID_NVTX_nvtxRangePushEx:
        push_nvtx(nullptr, message_of(static_cast<const nvtxRangePushEx_params*>(params)->eventAttrib));
        break;
      case CUPTI_CBID_NVTX_nvtxDomainRangePushEx: {
        const auto* p = static_cast<const nvtxDomainRangePushEx_params*>(params);
        if (p->domain != nullptr && p->domain == crossbench_nvtx_domain()) break;
        push_nvtx(p->domain, message_of(p->core.eventAttrib));
        break;
      }
      case CUPTI_CBID_NVTX_nvtxRangePop:
        pop_nvtx(nullptr);
        break;
      case CUPTI_CBID_NVTX_nvtxDomainRangePop: {
        const auto* p = static_cast<const nvtxDomainRangePop_params*>(params);
        if (p->domain != nullptr && p->domain == crossbench_nvtx_domain()) break;
        pop_nvtx(p->domain);
        break;
      }
      default:
        break;
    }
  }

  static const char* message_of(const nvtxEventAttributes_t* attr) {
    if (attr != nullptr && attr->messageType == NVTX_MESSAGE_TYPE_ASCII) return attr->message.ascii;
    return nullptr;  // registered or wide strings: not resolved
  }

  static void push_nvtx(const void* domain, const char* message) {
    Frame frame;
    frame.domain = domain;
    CuptiSource* self = g_active.load();
    if (self != nullptr) {
      std::lock_guard<std::mutex> lock(self->nvtx_mutex_);
      if (self->recording_ && (self->kinds_ & kCuptiNvtx) != 0) {
        HostRange r;
        r.id = kSourceRangeIdBase + self->next_nvtx_id_++;
        r.parent_id = self->innermost_range();
        r.name = message != nullptr && message[0] != '\0' ? message : "(unnamed NVTX range)";
        r.category = RangeCategory::UserAnnotation;
        r.start_ns = self->now_ns();
        r.process_id = static_cast<std::uint32_t>(::getpid());
        r.thread_id = static_cast<std::uint32_t>(::syscall(SYS_gettid));
        frame.id = r.id;
        frame.index = self->nvtx_ranges_.size();
        frame.session = self->session_;
        self->nvtx_ranges_.push_back(std::move(r));
      }
    }
    if (frame.id != 0) {
      frame.external = cupti().cuptiActivityPushExternalCorrelationId(kExternalKind, frame.id) == CUPTI_SUCCESS;
    }
    t_frames.push_back(frame);
  }

  static void pop_nvtx(const void* domain) {
    for (auto it = t_frames.rbegin(); it != t_frames.rend(); ++it) {
      if (it->domain != domain) continue;
      const Frame frame = *it;
      t_frames.erase(std::next(it).base());
      if (frame.external) {
        std::uint64_t last = 0;
        cupti().cuptiActivityPopExternalCorrelationId(kExternalKind, &last);
      }
      CuptiSource* self = g_active.load();
      if (self != nullptr && frame.id != 0) {
        std::lock_guard<std::mutex> lock(self->nvtx_mutex_);
        if (self->recording_ && frame.session == self->session_ && frame.index < self->nvtx_ranges_.size()) {
          self->nvtx_ranges_[frame.index].end_ns = self->now_ns();
        }
      }
      return;
    }
    // A pop without a push seen here (pushed before the subscription): nothing to end.
  }

  const std::string& api_name(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
    auto key = std::make_pair(static_cast<int>(domain), static_cast<std::uint32_t>(cbid));
    auto it = names_.find(key);
    if (it == names_.end()) {
      const char* name = nullptr;
      std::string text = cupti().cuptiGetCallbackName(domain, cbid, &name) == CUPTI_SUCCESS && name
                             ? strip_version_suffix(name)
                             : "api#" + std::to_string(cbid);
      it = names_.emplace(key, std::move(text)).first;
    }
    return it->second;
  }

  void consume(uint8_t* buffer, size_t valid_size) {
    std::lock_guard<std::mutex> lock(mutex_);
    CUpti_Activity* record = nullptr;
    while (cupti().cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
      RawRecord r;
      switch (record->kind) {
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        case CUPTI_ACTIVITY_KIND_KERNEL: {
          const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
          r.kind = RawKind::Kernel;
          copy_device_fields(*k, r);
          r.name = k->name ? k->name : "";
          r.grid[0] = k->gridX;
          r.grid[1] = k->gridY;
          r.grid[2] = k->gridZ;
          r.block[0] = k->blockX;
          r.block[1] = k->blockY;
          r.block[2] = k->blockZ;
          r.registers_per_thread = k->registersPerThread;
          r.static_shared_bytes = k->staticSharedMemory;
          r.dynamic_shared_bytes = k->dynamicSharedMemory;
          break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY: {
          const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
          r.kind = RawKind::Memcpy;
          copy_device_fields(*m, r);
          r.bytes = m->bytes;
          r.copy_kind = m->copyKind;
          break;
        }
        case CUPTI_ACTIVITY_KIND_MEMSET: {
          const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
          r.kind = RawKind::Memset;
          copy_device_fields(*m, r);
          r.bytes = m->bytes;
          r.memset_value = m->value;
          break;
        }
        case CUPTI_ACTIVITY_KIND_RUNTIME:
        case CUPTI_ACTIVITY_KIND_DRIVER: {
          const auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(record);
          const bool driver = record->kind == CUPTI_ACTIVITY_KIND_DRIVER;
          r.kind = driver ? RawKind::Driver : RawKind::Runtime;
          r.start_ns = static_cast<std::int64_t>(a->start);
          r.end_ns = static_cast<std::int64_t>(a->end);
          r.correlation_id = a->correlationId;
          r.cbid = a->cbid;
          r.process_id = a->processId;
          r.thread_id = a->threadId;
          r.return_value = static_cast<std::int32_t>(a->returnValue);
          r.name = api_name(driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API, a->cbid);
          break;
        }
        case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
          const auto* s = reinterpret_cast<const CUpti_ActivitySynchronization2*>(record);
          r.kind = RawKind::Synchronization;
          r.start_ns = static_cast<std::int64_t>(s->start);
          r.end_ns = static_cast<std::int64_t>(s->end);
          r.correlation_id = s->correlationId;
          r.context_id = s->contextId;
          r.stream_id = s->streamId;
          r.sync_type = static_cast<std::uint32_t>(s->type);
          r.event_sync_id = s->cudaEventSyncId;
          break;
        }
        case CUPTI_ACTIVITY_KIND_CUDA_EVENT: {  // kept during a work-signature probe only
          const auto* e = reinterpret_cast<const CUpti_ActivityCudaEvent2*>(record);
          if (probing_) probe_events_.push_back(EventRecordOp{e->correlationId, e->streamId, e->cudaEventSyncId});
          continue;
        }
        case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
          const auto* e = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
          r.kind = RawKind::ExternalCorrelation;
          r.correlation_id = e->correlationId;
          r.external_kind = static_cast<std::uint32_t>(e->externalKind);
          r.external_id = e->externalId;
          break;
        }
        default:
          continue;  // kinds we did not enable
      }
      records_.push_back(std::move(r));
    }
  }

  /// Whether this session can probe: the kinds the probe reads are recorded, and this CUPTI has
  /// CUpti_ActivityCudaEvent2 and the cudaEventSyncId of CUpti_ActivitySynchronization2, which
  /// came with CUPTI API version 26 (CUDA 12.8; cupti_version.h): an older CUPTI (another copy
  /// loaded first, PyTorch's) delivers records without them.
  bool probe_supported() const {
    std::uint32_t version = 0;
    return enabled_ && (kinds_ & kProbeKinds) == kProbeKinds && cupti().cuptiGetVersion(&version) == CUPTI_SUCCESS &&
           version >= 26;
  }

  /// Ends this session's NVTX subscription, if it has one (never throws).
  void unsubscribe() noexcept {
    if (subscriber_ != nullptr) {
      cupti().cuptiUnsubscribe(subscriber_);
      subscriber_ = nullptr;
    }
  }

  std::size_t buffer_bytes_;
  std::size_t max_buffers_;
  std::size_t overflow_buffers_;  ///< smaller buffers past max_buffers_ (activity_buffer_bytes)
  unsigned kinds_;                ///< CuptiKindBits
  bool enabled_ = false;
  bool event_records_on_ = false;                ///< CUDA_EVENT records enabled (start(), for the probe)
  CUpti_SubscriberHandle subscriber_ = nullptr;  ///< this session's NVTX subscription, if any
  std::atomic<std::size_t> outstanding_{0};
  std::atomic<std::uint64_t> dropped_{0};
  std::mutex mutex_;
  std::vector<RawRecord> records_;
  // Work-signature probe (guarded by mutex_): where its records start, its event records.
  bool probing_ = false;
  std::size_t probe_mark_ = 0;
  std::vector<EventRecordOp> probe_events_;
  std::map<std::pair<int, std::uint32_t>, std::string> names_;
  // NVTX ranges of the current session (guarded by nvtx_mutex_; callbacks come from any thread).
  std::mutex nvtx_mutex_;
  bool recording_ = false;
  std::atomic<std::uint64_t> session_{0};  // written under nvtx_mutex_, read by innermost_range too
  std::uint64_t next_nvtx_id_ = 0;
  std::vector<HostRange> nvtx_ranges_;
};

/// Points NVTX at libcupti (NVTX_INJECTION64_PATH) unless something else, such as Nsight
/// Systems, already set it. NVTX reads the variable at the process's first NVTX call, so this
/// must run before it (make_cupti_source calls it; docs/formats.md, "NVTX").
void ensure_nvtx_injection() {
  if (std::getenv("NVTX_INJECTION64_PATH") != nullptr) return;
  const std::string& path = cupti().path;
  if (!path.empty() && setenv("NVTX_INJECTION64_PATH", path.c_str(), 0) == 0) set_nvtx_tool_is_own_cupti(true);
}

}  // namespace

void* reopen_cupti(std::string& why) noexcept {
  std::string path;
  try {
    path = cupti().path;
  } catch (const std::exception& e) {
    why = e.what();
    return nullptr;
  }
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (lib == nullptr) lib = dlopen(path.c_str(), RTLD_NOW);
  if (lib == nullptr) why = "cannot reopen " + path;
  return lib;
}

const CuptiApi& cupti() {
  // Loaded once; a failure is kept and rethrown, so every caller sees the same message.
  static const std::pair<CuptiApi, std::string> loaded = []() -> std::pair<CuptiApi, std::string> {
    // (file, dlopen flags) in order. Without XB_CUPTI_LIBRARY the copy already in the process
    // comes first (RTLD_NOLOAD of the soname loads nothing): CUPTI keeps process-wide state (one
    // subscriber, one pair of buffer callbacks, the activity kinds enabled), and two copies in one
    // process would each believe they own it. PyTorch loads its own libcupti (the pip package
    // nvidia-cuda-cupti-*) for its profiler; crossbench.bench from Python then uses that copy.
    std::vector<std::pair<std::string, int>> candidates;
    if (const char* forced = std::getenv("XB_CUPTI_LIBRARY")) {
      candidates.emplace_back(forced, RTLD_NOW | RTLD_GLOBAL);
    } else {
      candidates.emplace_back(XB_CUPTI_SONAME, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
      candidates.emplace_back(XB_CUPTI_SONAME, RTLD_NOW | RTLD_GLOBAL);
      candidates.emplace_back(XB_CUPTI_BUILD_PATH, RTLD_NOW | RTLD_GLOBAL);
      candidates.emplace_back("libcupti.so", RTLD_NOW | RTLD_GLOBAL);
    }
    std::string tried;
    for (const auto& [name, flags] : candidates) {
      void* lib = dlopen(name.c_str(), flags);
      if (lib == nullptr && (flags & RTLD_NOLOAD) != 0) {
        dlerror();  // not loaded yet: not a failure worth reporting
        continue;
      }
      if (lib == nullptr) {
        const char* why = dlerror();
        tried += (tried.empty() ? "" : "; ") + std::string(why ? why : name + ": not loaded");
        continue;
      }
      CuptiApi api;
      std::string missing;
      XB_CUPTI_FUNCTIONS(XB_CUPTI_RESOLVE)
      if (!missing.empty()) {
        tried += (tried.empty() ? "" : "; ") + name + " lacks " + missing;
        continue;  // keep it loaded: unloading a library CUDA may use is not worth the risk
      }
      Dl_info info{};
      api.path = dladdr(reinterpret_cast<void*>(api.cuptiSubscribe), &info) != 0 && info.dli_fname != nullptr
                     ? info.dli_fname
                     : name;
      return {std::move(api), ""};
    }
    return {CuptiApi{}, "cannot load the CUPTI library (" + tried + ")"};
  }();
  if (!loaded.second.empty()) throw ProfilerError(loaded.second);
  return loaded.first;
}

std::unique_ptr<ActivitySource> make_cupti_source(std::size_t buffer_bytes, std::size_t max_buffers, unsigned kinds,
                                                  std::size_t overflow_buffers) {
  if (buffer_bytes < 4096) throw std::invalid_argument("CUPTI buffer must be at least 4 KiB");
  ensure_nvtx_injection();  // before the process's first NVTX call, whatever this session records
  return std::make_unique<CuptiSource>(buffer_bytes, max_buffers, kinds, overflow_buffers);
}

}  // namespace xb
