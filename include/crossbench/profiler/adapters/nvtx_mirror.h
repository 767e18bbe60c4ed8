// NVTX adapter: mirrors crossbench's host ranges as NVTX ranges, so that Nsight Systems (or any
// NVTX tool) shows the same ranges as crossbench's table and exports. The only translation unit
// that includes the NVTX headers (nvtx3, header-only, shipped with the CUDA Toolkit).
//
// Ranges are pushed in their own NVTX domain, "crossbench" (kNvtxDomain), so that the CUPTI
// collector, which records the user's NVTX ranges as annotations, can tell them from ours.
// Reference: NVTX documentation, nvtx3/nvToolsExt.h (nvtxDomainCreateA, nvtxDomainRangePushEx,
// nvtxDomainRangePop).
#pragma once

#include <memory>
#include <string>

#include "profiler/model/profiler.h"

namespace xb {

/// Name of the NVTX domain crossbench's own ranges are pushed in.
inline constexpr const char* kNvtxDomain = "crossbench";

/// A RangeMirror that pushes each recorded host range as an NVTX range in the "crossbench"
/// domain (message = the range's name) and pops it when the range ends. Without an NVTX tool
/// attached each call costs a few ns (NVTX's no-op stubs). When the process's NVTX tool is the
/// libcupti that crossbench itself injected (see set_nvtx_tool_is_own_cupti), nobody would see the
/// ranges (the collector skips this domain), so the mirror does nothing. Never throws.
std::unique_ptr<RangeMirror> make_nvtx_mirror();

/// Called by make_cupti_source when it pointed NVTX_INJECTION64_PATH at libcupti itself: NVTX's
/// only tool is then crossbench's collector, and mirrors skip their pushes.
void set_nvtx_tool_is_own_cupti(bool own);

/// The "crossbench" domain's handle (nvtxDomainHandle_t, as an opaque pointer) once a mirror has
/// pushed its first range; nullptr before that or when no NVTX tool is attached. Never creates
/// the domain, so an NVTX tool's callback may call it. The CUPTI collector compares against it
/// to skip crossbench's own ranges.
const void* crossbench_nvtx_domain();

}  // namespace xb
