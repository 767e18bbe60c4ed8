// String names of RawKind and RangeCategory (the names used in raw_session.json and traces).
#include "profiler/raw_records.h"

#include <stdexcept>

namespace xb {

const char* to_string(RawKind kind) {
  switch (kind) {
    case RawKind::Kernel: return "kernel";
    case RawKind::Memcpy: return "memcpy";
    case RawKind::Memset: return "memset";
    case RawKind::Runtime: return "runtime";
    case RawKind::Driver: return "driver";
    case RawKind::Synchronization: return "synchronization";
    case RawKind::ExternalCorrelation: return "external_correlation";
  }
  return "unknown";
}

RawKind raw_kind_from_string(const std::string& name) {
  static constexpr RawKind kAll[] = {RawKind::Kernel,  RawKind::Memcpy,          RawKind::Memset,
                                     RawKind::Runtime, RawKind::Driver,          RawKind::Synchronization,
                                     RawKind::ExternalCorrelation};
  for (RawKind kind : kAll) {
    if (name == to_string(kind)) return kind;
  }
  throw std::invalid_argument("unknown record kind \"" + name + "\"");
}

const char* to_string(RangeCategory category) {
  switch (category) {
    case RangeCategory::UserAnnotation: return "user_annotation";
    case RangeCategory::CpuOp: return "cpu_op";
  }
  return "unknown";
}

RangeCategory range_category_from_string(const std::string& name) {
  if (name == "user_annotation") return RangeCategory::UserAnnotation;
  if (name == "cpu_op") return RangeCategory::CpuOp;
  throw std::invalid_argument("unknown range category \"" + name + "\"");
}

}  // namespace xb
