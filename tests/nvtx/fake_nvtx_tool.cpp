// A minimal NVTX tool for tests/nvtx/test_nvtx_mirror.cpp: loaded by NVTX through
// NVTX_INJECTION64_PATH, exactly as Nsight Systems' injection library is, it records every
// domain creation, domain range push and pop. Not thread-safe (the test is single-threaded).
#include <nvtx3/nvToolsExt.h>

#include <string>
#include <vector>

namespace {

struct Seen {
  std::vector<std::string> domains;  // names given to nvtxDomainCreateA, in order
  std::vector<std::string> log;      // "push <domain>/<message>" or "pop <domain>"
};
Seen g_seen;
int g_domain_tokens[8];

nvtxDomainHandle_t handle_of(std::size_t index) {
  return reinterpret_cast<nvtxDomainHandle_t>(&g_domain_tokens[index % 8]);
}
nvtxDomainHandle_t NVTX_API fake_domain_create(const char* name) {
  g_seen.domains.emplace_back(name);
  return handle_of(g_seen.domains.size() - 1);
}
std::string domain_name(nvtxDomainHandle_t d) {
  for (std::size_t i = 0; i < g_seen.domains.size(); ++i) {
    if (handle_of(i) == d) return g_seen.domains[i];
  }
  return "?";
}
int NVTX_API fake_push(nvtxDomainHandle_t d, const nvtxEventAttributes_t* attr) {
  const bool ascii = attr != nullptr && attr->messageType == NVTX_MESSAGE_TYPE_ASCII;
  g_seen.log.push_back("push " + domain_name(d) + "/" + (ascii ? attr->message.ascii : "?"));
  return 0;
}
int NVTX_API fake_pop(nvtxDomainHandle_t d) {
  g_seen.log.push_back("pop " + domain_name(d));
  return 0;
}

}  // namespace

extern "C" {

/// NVTX's tool entry point (nvtx3/nvtxDetail/nvtxInit.h): installs the three handlers.
__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table) {
  const auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (callbacks == nullptr) return 0;
  NvtxFunctionTable table = nullptr;
  unsigned int size = 0;
  if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size) || table == nullptr) return 0;
  if (size <= NVTX_CBID_CORE2_DomainCreateA) return 0;
  *table[NVTX_CBID_CORE2_DomainCreateA] = reinterpret_cast<NvtxFunctionPointer>(&fake_domain_create);
  *table[NVTX_CBID_CORE2_DomainRangePushEx] = reinterpret_cast<NvtxFunctionPointer>(&fake_push);
  *table[NVTX_CBID_CORE2_DomainRangePop] = reinterpret_cast<NvtxFunctionPointer>(&fake_pop);
  return 1;
}

/// What the tool saw, for the test (found with dlsym).
__attribute__((visibility("default"))) const std::vector<std::string>* fake_nvtx_domains() { return &g_seen.domains; }
__attribute__((visibility("default"))) const std::vector<std::string>* fake_nvtx_log() { return &g_seen.log; }

}  // extern "C"
