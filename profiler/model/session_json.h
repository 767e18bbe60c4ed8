// The JSON blocks the session's files share (raw_session.json, events.json, the traces,
// table.json): internal to crossbench (not installed: the public headers carry no JSON library).
// A client that reads its own blocks back out of a session (bench/core/fixture_records.cpp) does
// so with common/strict_json.h's accessors, as raw_session.json's reader does, naming the object
// "raw_session: <where>" so that its failures read as the reader's.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "profiler/model/raw_records.h"

namespace xb {

/// The keys of raw_session.json's "meta" that the profiler writes itself (session_write.cpp):
/// the reader skips them when it collects the client's metadata blocks, and no block may take one.
inline constexpr const char* kSessionMetaKeys[] = {"tool",
                                                   "created_utc",
                                                   "window_start_ns",
                                                   "window_end_ns",
                                                   "dropped_records",
                                                   "discarded_by_schedule",
                                                   "cuda_driver_version",
                                                   "cuda_runtime_version",
                                                   "cupti_version",
                                                   "cublas_version",
                                                   "activity_source",
                                                   "process_id",
                                                   "schedule_wait",
                                                   "schedule_warmup",
                                                   "schedule_active",
                                                   "devices"};

/// True where `key` is one of kSessionMetaKeys.
inline bool is_session_meta_key(std::string_view key) {
  for (const char* k : kSessionMetaKeys) {
    if (key == k) return true;
  }
  return false;
}

/// The "crossbench" metadata block every output file carries (docs/formats.md): format, version
/// 1, created_utc, dropped_records, discarded_by_schedule, window_start_ns, window_end_ns, the
/// CUDA/CUPTI/cuBLAS versions and schedule {wait, warmup, active}.
nlohmann::json meta_block(const SessionMeta& meta, const std::string& format);

}  // namespace xb
