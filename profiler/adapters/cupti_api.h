// CUPTI, loaded at run time: crossbench does not link libcupti, so bench starts, and times with
// cudaEvents alone (--no-cupti), on a machine where the CUPTI library is missing; the profiler
// then fails with a clear ProfilerError instead of the dynamic loader refusing to start the
// program. Only included by CUPTI adapter sources (profiler/adapters/cupti_collector.cpp, cupti_check.h).
#pragma once

#include <cupti.h>

#include <cstddef>
#include <string>

namespace xb {

/// Every CUPTI function crossbench calls. decltype(&::f) is unevaluated, so naming the functions
/// here creates no link dependency on libcupti.
// An X-macro list, one function a line.
// clang-format off
#define XB_CUPTI_FUNCTIONS(X)               \
  X(cuptiActivityDisable)                   \
  X(cuptiActivityEnable)                    \
  X(cuptiActivityEnableDriverApi)           \
  X(cuptiActivityEnableRuntimeApi)          \
  X(cuptiActivityFlushAll)                  \
  X(cuptiActivityGetNextRecord)             \
  X(cuptiActivityGetNumDroppedRecords)      \
  X(cuptiActivityPopExternalCorrelationId)  \
  X(cuptiActivityPushExternalCorrelationId) \
  X(cuptiActivityRegisterCallbacks)         \
  X(cuptiActivityRegisterTimestampCallback) \
  X(cuptiEnableDomain)                      \
  X(cuptiGetCallbackName)                   \
  X(cuptiGetResultString)                   \
  X(cuptiGetTimestamp)                      \
  X(cuptiGetVersion)                        \
  X(cuptiSetThreadIdType)                   \
  X(cuptiSubscribe)                         \
  X(cuptiUnsubscribe)
// clang-format on

/// The loaded CUPTI library's entry points (same names and signatures as in cupti.h).
struct CuptiApi {
#define XB_CUPTI_POINTER(f) decltype(&::f) f = nullptr;
  XB_CUPTI_FUNCTIONS(XB_CUPTI_POINTER)
#undef XB_CUPTI_POINTER
  std::string path;  ///< the file loaded, e.g. "/usr/local/cuda/lib64/libcupti.so.13"
};

/// Loads CUPTI on first use (thread-safe) and returns its entry points. Tries, in order: the
/// file named by XB_CUPTI_LIBRARY when that is set (and only it), else the libcupti.so.<CUDA major>
/// already loaded in the process (e.g. PyTorch's; RTLD_NOLOAD), libcupti.so.<CUDA major>
/// through the dynamic loader's search (LD_LIBRARY_PATH, the program's RUNPATH, ...), the build's
/// CUPTI library path, and libcupti.so. Throws ProfilerError naming every place tried and the
/// loader's reason when none loads or a function is missing; later calls throw the same.
const CuptiApi& cupti();

/// Resolves one name of a function-table X-macro (XB_CUPTI_FUNCTIONS and the counter pass's
/// tables): `api.f` from the dlopen handle `lib`, a name not found appended to the string
/// `missing`. Expands where those three are in scope, with <dlfcn.h> included.
#define XB_CUPTI_RESOLVE(f)                                  \
  api.f = reinterpret_cast<decltype(api.f)>(dlsym(lib, #f)); \
  if (api.f == nullptr) missing += std::string(missing.empty() ? "" : ", ") + #f;

/// The library cupti() loaded, opened again (RTLD_NOLOAD first) so that a further table of its
/// functions can be resolved with XB_CUPTI_RESOLVE. Returns nullptr with `why` set when cupti()
/// failed or the file cannot be opened. Never throws.
void* reopen_cupti(std::string& why) noexcept;

/// A CUPTI parameter struct zeroed, with its structSize set (CUPTI's versioning of its structs).
template <class Params>
Params cupti_params(std::size_t struct_size) {
  Params p{};
  p.structSize = struct_size;
  return p;
}

}  // namespace xb
