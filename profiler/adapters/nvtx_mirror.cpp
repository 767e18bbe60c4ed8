// NVTX adapter (profiler/adapters/nvtx_mirror.h).
#include "profiler/adapters/nvtx_mirror.h"

#include <nvtx3/nvToolsExt.h>

#include <atomic>

namespace xb {
namespace {

std::atomic<const void*> g_domain{nullptr};
std::atomic<bool> g_own_cupti{false};

nvtxDomainHandle_t domain() {
  // Created once; NVTX initializes its tool injection on this first call (it reads
  // NVTX_INJECTION64_PATH then; see profiler/adapters/cupti_collector.cpp).
  static const nvtxDomainHandle_t handle = [] {
    const nvtxDomainHandle_t h = nvtxDomainCreateA(kNvtxDomain);
    g_domain.store(h);
    return h;
  }();
  return handle;
}

class NvtxMirror final : public RangeMirror {
 public:
  void push(const std::string& name) noexcept override {
    if (g_own_cupti.load(std::memory_order_relaxed)) return;
    nvtxEventAttributes_t attr{};
    attr.version = NVTX_VERSION;
    attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attr.message.ascii = name.c_str();
    nvtxDomainRangePushEx(domain(), &attr);
  }
  void pop() noexcept override {
    if (g_own_cupti.load(std::memory_order_relaxed)) return;
    nvtxDomainRangePop(domain());
  }
};

}  // namespace

std::unique_ptr<RangeMirror> make_nvtx_mirror() { return std::make_unique<NvtxMirror>(); }

void set_nvtx_tool_is_own_cupti(bool own) { g_own_cupti.store(own); }

const void* crossbench_nvtx_domain() { return g_domain.load(); }

}  // namespace xb
