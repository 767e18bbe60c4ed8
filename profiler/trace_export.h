// Chrome trace exporters (docs/formats.md): trace-only, written straight from raw records, and
// the full PyTorch/Kineto-layout export, written from the event model.
#pragma once

#include <ostream>

#include "profiler/event_model.h"
#include "profiler/raw_records.h"

namespace xb {

/// trace_only.json: one pass over raw.records and raw.ranges, no correlation joins.
void write_trace_only(const RawSession& raw, std::ostream& out);

/// full.json: host ranges, API calls, device activities with External id, ac2g flows,
/// gpu_user_annotation spans, sync events, lane names, deviceProperties.
void write_full_trace(const Session& session, std::ostream& out);

}  // namespace xb
