// Chrome trace exporters (docs/formats.md): trace-only, written straight from raw records, and
// the full PyTorch/Kineto-layout export, written from the event model.
#pragma once

#include <ostream>

#include "profiler/model/event_model.h"
#include "profiler/model/raw_records.h"

namespace xb {

/// trace_only.json: one pass over raw.records and raw.ranges, no correlation joins (kernel names
/// are demangled and memcpy/memset/sync records named as in the full trace, so names match).
/// Events in record order, then ranges, then lane metadata; ExternalCorrelation records go to
/// "externalCorrelations". The client's metadata blocks are top-level keys after "cupti_version".
/// Streams text (no JSON tree); throws std::runtime_error when the stream fails,
/// std::invalid_argument for a metadata block with a reserved key or text that is not JSON.
void write_trace_only(const RawSession& raw, std::ostream& out);

/// full.json: host ranges, API calls, device activities with External id (each followed by its
/// ac2g "s"/"f" pair when it has a launch), gpu_user_annotation spans (per user_annotation range
/// and device/stream, over the device work launched anywhere in its subtree), sync events, lane
/// metadata, deviceProperties, distributedInfo, the client's metadata blocks as write_trace_only.
/// Streams text; throws std::runtime_error when the stream fails, std::invalid_argument as
/// write_trace_only.
void write_full_trace(const Session& session, std::ostream& out);

}  // namespace xb
