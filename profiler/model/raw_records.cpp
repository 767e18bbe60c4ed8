// String names of RawKind and RangeCategory (the names used in raw_session.json and traces), and
// the client metadata blocks of a session.
#include "profiler/model/raw_records.h"

#include <algorithm>
#include <iterator>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "profiler/model/session_json.h"

namespace xb {

const char* to_string(RawKind kind) {
  switch (kind) {
    case RawKind::Kernel:
      return "kernel";
    case RawKind::Memcpy:
      return "memcpy";
    case RawKind::Memset:
      return "memset";
    case RawKind::Runtime:
      return "runtime";
    case RawKind::Driver:
      return "driver";
    case RawKind::Synchronization:
      return "synchronization";
    case RawKind::ExternalCorrelation:
      return "external_correlation";
  }
  return "unknown";
}

RawKind raw_kind_from_string(const std::string& name) {
  static constexpr RawKind kAll[] = {RawKind::Kernel,
                                     RawKind::Memcpy,
                                     RawKind::Memset,
                                     RawKind::Runtime,
                                     RawKind::Driver,
                                     RawKind::Synchronization,
                                     RawKind::ExternalCorrelation};
  for (RawKind kind : kAll) {
    if (name == to_string(kind)) return kind;
  }
  throw std::invalid_argument("unknown record kind \"" + name + "\"");
}

const char* to_string(RangeCategory category) {
  switch (category) {
    case RangeCategory::UserAnnotation:
      return "user_annotation";
    case RangeCategory::CpuOp:
      return "cpu_op";
  }
  return "unknown";
}

RangeCategory range_category_from_string(const std::string& name) {
  if (name == "user_annotation") return RangeCategory::UserAnnotation;
  if (name == "cpu_op") return RangeCategory::CpuOp;
  throw std::invalid_argument("unknown range category \"" + name + "\"");
}

std::string metadata_key_error(const std::string& key) {
  // raw_session.json's "meta" keys (session_write.cpp) and a trace's top-level keys
  // (trace_export.cpp): a block may take neither, so no file gets a key twice.
  static const char* const kTraceKeys[] = {"schemaVersion",   "crossbench",          "deviceProperties",
                                           "distributedInfo", "displayTimeUnit",     "baseTimeNanoseconds",
                                           "traceEvents",     "externalCorrelations"};
  if (key.empty()) return "metadata key is empty";
  const bool trace_key = std::find(std::begin(kTraceKeys), std::end(kTraceKeys), key) != std::end(kTraceKeys);
  if (is_session_meta_key(key) || trace_key) return "metadata key \"" + key + "\" is one the profiler writes itself";
  return "";
}

void set_metadata(SessionMeta& meta, const std::string& key, std::string json) {
  if (const std::string error = metadata_key_error(key); !error.empty()) throw std::invalid_argument(error);
  if (!nlohmann::json::accept(json)) throw std::invalid_argument("metadata \"" + key + "\" is not one JSON value");
  auto it = std::lower_bound(meta.metadata.begin(), meta.metadata.end(), key,
                             [](const MetadataBlock& b, const std::string& k) { return b.key < k; });
  if (it != meta.metadata.end() && it->key == key) {
    it->json = std::move(json);
  } else {
    meta.metadata.insert(it, MetadataBlock{key, std::move(json)});
  }
}

const MetadataBlock* find_metadata(const SessionMeta& meta, const std::string& key) {
  for (const MetadataBlock& b : meta.metadata) {
    if (b.key == key) return &b;
  }
  return nullptr;
}

}  // namespace xb
