// The CUPTI activity source: the adapter that fills in the event model's raw records from CUPTI
// (profiler/adapters/cupti_collector.cpp) through the model's ActivitySource seam
// (profiler/model/profiler.h). No CUDA or CUPTI headers here.
#pragma once

#include <cstddef>
#include <memory>

#include "profiler/model/profiler.h"

namespace xb {

/// The CUPTI activity source (profiler/adapters/cupti_collector.cpp). `buffer_bytes` per CUPTI buffer,
/// `max_buffers` of them outstanding, then up to `overflow_buffers` smaller ones
/// (activity_buffer_bytes; beyond those CUPTI drops records and counts them). Loads
/// libcupti at run time (profiler/adapters/cupti_api.h; XB_CUPTI_LIBRARY names another file) and points
/// NVTX at it (docs/formats.md, "NVTX ranges"). Throws ProfilerError when the library cannot be
/// loaded, when another tool already holds CUPTI, or when CUPTI cannot be initialized;
/// std::invalid_argument for a buffer under 4 KiB. `kinds` (CuptiKindBits) selects what is
/// recorded; a session without all of them is incomplete (the validator will say so): for cost
/// measurements only.
std::unique_ptr<ActivitySource> make_cupti_source(std::size_t buffer_bytes = 8u << 20, std::size_t max_buffers = 256,
                                                  unsigned kinds = kCuptiAllKinds,
                                                  std::size_t overflow_buffers = kOverflowBuffers);

}  // namespace xb
