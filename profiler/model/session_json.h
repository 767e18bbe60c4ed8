// The JSON blocks the session's files share (raw_session.json, events.json, the traces,
// table.json), and the strict accessors of raw_session.json's reader for the readers of the
// client's blocks inside it: internal to crossbench (not installed: the public headers carry no
// JSON library).
#pragma once

#include <cstdint>
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

/// raw_session.json's strict accessors (profiler/model/session_io.cpp), for a client that reads its own
/// blocks back out of a session (bench/core/fixture_records.cpp reads "meta.gpu" and "fixtures"):
/// the same rules and the same words as the profiler's own keys. `where` names the object
/// ("fixtures[3]", "meta.gpu"); every failure throws InputError("raw_session: <where>: <what>").
namespace raw_session_json {
[[noreturn]] void fail(const std::string& where, const std::string& what);
/// obj[key]; fails "missing key \"key\"".
const nlohmann::json& require(const nlohmann::json& obj, const char* key, const std::string& where);
/// obj[key] as an object; fails "key \"key\" must be an object" for another type.
const nlohmann::json& require_object(const nlohmann::json& obj, const char* key, const std::string& where);
/// Fails "must be an object" when `value` is not one.
void require_is_object(const nlohmann::json& value, const std::string& where);
std::string get_string(const nlohmann::json& obj, const char* key, const std::string& where);
bool get_bool(const nlohmann::json& obj, const char* key, const std::string& where);
/// A finite number.
double get_double(const nlohmann::json& obj, const char* key, const std::string& where);
/// Integers in range of the type (no fraction); fails "key \"k\" = v is out of range" otherwise.
int get_int(const nlohmann::json& obj, const char* key, const std::string& where);
std::int64_t get_int64(const nlohmann::json& obj, const char* key, const std::string& where);
std::uint64_t get_uint64(const nlohmann::json& obj, const char* key, const std::string& where);
}  // namespace raw_session_json

}  // namespace xb
