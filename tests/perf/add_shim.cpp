// libxb_add_shim.so: crossbench's add kernel (kernels/add.h) behind a C ABI, so that a Python
// script can launch it through ctypes from the same loop, on the same torch stream and inside the
// same torch.profiler session as PyTorch's add (tools/lab/add_vs_torch.py, issue 19). A developer
// benchmark's tool, not part of the product: tests/perf/CMakeLists.txt builds it only when asked
// (`cmake --build build --target xb_add_shim` -> build/libxb_add_shim.so).
//
// Codes, as the functions below take them:
// - dtype: xb_add_dtype("bf16" | "fp16" | "fp32") (xb::DType's value: 0, 1, 2);
// - threads: threads per block; vectors: 16-byte vectors per thread; policy: 1 + the
//   xb::AddCachePolicy value (1 default .. 5 plain); variant: 1 + the xb::AddKernelVariant value
//   (1 standard, 2 lean), so that 0 can mean "bench's own"; xb_add_parse turns a tuning-space
//   name ("v1/t128/default", "v1/t256/default/lean/r6", `bench tune-add`'s names) into the four
//   and the residency cap. A value <= 0 takes add_launch_config(dtype, count)'s (bench's) choice
//   for that field; blocks_per_sm (AddLaunchConfig's: 0 none) takes bench's when < 0.
// - max_blocks (xb_add_launch only): the grid's cap in blocks (AddLaunchConfig::max_blocks; <= 0:
//   the device's grid limit, bench's). A cap below what one vector per thread needs makes the
//   standard kernel loop over the chunks (grid-stride) and sends the lean kernel's configurations
//   to it too: a persistent launch (e.g. 132 SMs x 8 blocks), for add_vs_torch.py's "NAME@gBLOCKS".
// Every function returns 0 or a cudaError_t (cudaErrorInvalidValue for bad arguments) and never
// lets an exception out; xb_add_last_error() then holds the message of this thread's last failure.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include <cuda_runtime_api.h>

#include "kernels/add.h"
#include "kernels/cuda_check.h"
#include "kernels/workload.h"
#include "tools/lab/add_tuning/add_tuning.h"

#define XB_ADD_SHIM_API extern "C" __attribute__((visibility("default")))

namespace {

thread_local std::string g_last_error;

xb::DType dtype_of(int code) {
  for (const xb::DType d : xb::kAllDTypes) {
    if (static_cast<int>(d) == code) return d;
  }
  throw std::invalid_argument("dtype code " + std::to_string(code) + " (expected 0 bf16, 1 fp16, 2 fp32)");
}

int policy_code(xb::AddCachePolicy p) { return 1 + static_cast<int>(p); }
int variant_code(xb::AddKernelVariant k) { return 1 + static_cast<int>(k); }

// xb::CudaError carries the failure as text ("...failed: <error name>: <error string>", as
// kernels/cuda_check.h formats it), not the code. A code field there would rebuild every object
// of the project for this developer tool; the error path here can afford to find the code whose
// name the message quotes.
cudaError_t status_of(const xb::CudaError& e) {
  const std::string what = e.what();
  for (int code = 1; code <= static_cast<int>(cudaErrorUnknown); ++code) {
    const auto status = static_cast<cudaError_t>(code);
    const std::string quoted = std::string("failed: ") + cudaGetErrorName(status) + ":";
    if (what.find(quoted) != std::string::npos) return status;
  }
  return cudaErrorUnknown;
}

// Runs `body`, turning what it throws into a return code and this thread's last error.
template <typename F>
int guarded(const char* function, F&& body) {
  try {
    body();
    return cudaSuccess;
  } catch (const xb::CudaError& e) {
    g_last_error = std::string(function) + ": " + e.what();
    return static_cast<int>(status_of(e));
  } catch (const std::invalid_argument& e) {
    g_last_error = std::string(function) + ": " + e.what();
    return static_cast<int>(cudaErrorInvalidValue);
  } catch (const std::exception& e) {
    g_last_error = std::string(function) + ": " + e.what();
    return static_cast<int>(cudaErrorUnknown);
  }
}

// add_launch_config(dtype, count) queries the device (its grid limit) and is meant for set-up, not
// for every launch: its result is kept per (device, dtype, count).
xb::AddLaunchConfig bench_config(xb::DType dtype, std::int64_t count) {
  static std::mutex mutex;
  static std::map<std::tuple<int, int, std::int64_t>, xb::AddLaunchConfig> cache;
  int device = 0;
  XB_CUDA(cudaGetDevice(&device));
  const auto key = std::make_tuple(device, static_cast<int>(dtype), count);
  const std::lock_guard<std::mutex> lock(mutex);
  const auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  const xb::AddLaunchConfig config = xb::add_launch_config(dtype, count);
  cache.emplace(key, config);
  return config;
}

// bench's configuration for (dtype, count) with each field given > 0 replaced.
xb::AddLaunchConfig resolve(xb::DType dtype, std::int64_t count, int threads, int vectors, int policy, int variant,
                            int blocks_per_sm) {
  xb::AddLaunchConfig config = bench_config(dtype, count);
  if (blocks_per_sm >= 0) config.blocks_per_sm = blocks_per_sm;
  if (threads > 0) config.threads_per_block = threads;
  if (vectors > 0) config.vectors_per_thread = vectors;
  if (policy > 0) config.cache = static_cast<xb::AddCachePolicy>(policy - 1);  // launch_add_tuning checks the value
  if (variant > 0) config.kernel = static_cast<xb::AddKernelVariant>(variant - 1);  // launch_add_tuning checks it too
  return config;
}

void copy_name(const std::string& name, char* out, std::size_t out_len) {
  if (out == nullptr || out_len <= name.size()) {
    throw std::invalid_argument("name buffer of " + std::to_string(out_len) + " bytes; '" + name + "' needs " +
                                std::to_string(name.size() + 1));
  }
  std::memcpy(out, name.c_str(), name.size() + 1);
}

}  // namespace

/// The dtype code of "bf16", "fp16" or "fp32", or -1 (xb_add_last_error says why).
XB_ADD_SHIM_API int xb_add_dtype(const char* name) {
  int code = -1;
  const int rc = guarded("xb_add_dtype", [&] {
    if (name == nullptr) throw std::invalid_argument("null dtype name");
    code = static_cast<int>(xb::parse_dtype(name));
  });
  return rc == 0 ? code : -1;
}

/// Enqueues out = a + b over `count` elements on `stream` (a cudaStream_t; null: the legacy
/// default stream) with the configuration the six last arguments select (see the top of this
/// file), through xb::launch_add_tuning (tools/lab/add_tuning: any configuration of the tuning
/// space; bench's own run the same kernel code as launch_add's, the kernel bench times).
/// Capturable into a CUDA graph. Returns 0 or the launch's cudaError_t.
XB_ADD_SHIM_API int xb_add_launch(int dtype, const void* a, const void* b, void* out, long long count, void* stream,
                                  int threads, int vectors, int policy, int variant, int blocks_per_sm,
                                  int max_blocks) {
  return guarded("xb_add_launch", [&] {
    const xb::DType d = dtype_of(dtype);
    if (count > 0 && (a == nullptr || b == nullptr || out == nullptr))
      throw std::invalid_argument("null tensor pointer");
    xb::AddLaunchConfig config = resolve(d, count, threads, vectors, policy, variant, blocks_per_sm);
    if (max_blocks > 0) config.max_blocks = std::min(max_blocks, config.max_blocks);
    xb::launch_add_tuning(d, a, b, out, count, static_cast<cudaStream_t>(stream), config);
  });
}

/// Writes into `name` (`name_len` bytes, NUL included) the configuration xb_add_launch uses for
/// these arguments, as `bench tune-add` names it ("v1/t256/default"); all four <= 0 and blocks_per_sm < 0 give
/// bench's own, add_launch_config(dtype, count). Fails with cudaErrorInvalidValue when the
/// configuration is not one of the tuning space's (tools/lab/add_tuning/add_tuning.h, add_tuning_space).
XB_ADD_SHIM_API int xb_add_config(int dtype, long long count, int threads, int vectors, int policy, int variant,
                                  int blocks_per_sm, char* name, std::size_t name_len) {
  return guarded("xb_add_config", [&] {
    if (count < 0) throw std::invalid_argument("count " + std::to_string(count) + " < 0");
    const std::string chosen =
        xb::to_string(resolve(dtype_of(dtype), count, threads, vectors, policy, variant, blocks_per_sm));
    bool known = false;
    for (const xb::AddLaunchConfig& c : xb::add_tuning_space()) known = known || xb::to_string(c) == chosen;
    if (!known) throw std::invalid_argument("'" + chosen + "' is not in the add kernel's tuning space");
    copy_name(chosen, name, name_len);
  });
}

/// Parses a tuning-space name ("v2/t128/streaming", "v1/t128/plain/lean") into threads per
/// block, vectors per thread, the policy and variant codes and the residency cap (blocks per SM,
/// 0: none) xb_add_launch takes. Fails with
/// cudaErrorInvalidValue, listing the space's names, for any other text.
XB_ADD_SHIM_API int xb_add_parse(const char* name, int* threads, int* vectors, int* policy, int* variant,
                                 int* blocks_per_sm) {
  return guarded("xb_add_parse", [&] {
    if (name == nullptr || threads == nullptr || vectors == nullptr || policy == nullptr || variant == nullptr ||
        blocks_per_sm == nullptr) {
      throw std::invalid_argument("null argument");
    }
    std::string known;
    for (const xb::AddLaunchConfig& c : xb::add_tuning_space()) {
      const std::string text = xb::to_string(c);
      if (text == name) {
        *threads = c.threads_per_block;
        *vectors = c.vectors_per_thread;
        *policy = policy_code(c.cache);
        *variant = variant_code(c.kernel);
        *blocks_per_sm = c.blocks_per_sm;
        return;
      }
      known += (known.empty() ? "" : ", ") + text;
    }
    throw std::invalid_argument(std::string("unknown configuration '") + name + "' (one of: " + known + ")");
  });
}

/// The message of this thread's last failed call ("" before any); valid until the next failure.
XB_ADD_SHIM_API const char* xb_add_last_error() { return g_last_error.c_str(); }
