// Error check for CUPTI calls: XB_CUPTI(call) throws ProfilerError with file:line, the call text,
// and CUPTI's error name and string. Only included by CUPTI adapter sources.
#pragma once

#include <cupti.h>

#include "profiler/adapters/cupti_api.h"

#include <string>

#include "profiler/model/profiler.h"

namespace xb::detail {

/// Builds "file:line: call failed: CUPTI_ERROR_X: description".
inline std::string cupti_error_message(CUptiResult result, const char* call, const char* file, int line) {
  const char* text = nullptr;
  if (cupti().cuptiGetResultString(result, &text) != CUPTI_SUCCESS || text == nullptr) text = "unknown";
  return std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " + text;
}

}  // namespace xb::detail

#define XB_CUPTI(call)                                                                                           \
  do {                                                                                                           \
    const CUptiResult xb_cupti_result_ = (call);                                                                 \
    if (xb_cupti_result_ != CUPTI_SUCCESS) {                                                                     \
      throw ::xb::ProfilerError(::xb::detail::cupti_error_message(xb_cupti_result_, #call, __FILE__, __LINE__)); \
    }                                                                                                            \
  } while (0)
