// Raw records -> event model (profiler/event_model.h).
#include "profiler/event_model.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

namespace xb {
namespace {

/// CUpti_ExternalCorrelationKind values (cupti_activity.h). The collector pushes range ids with
/// CUSTOM0; other kinds are only used when no CUSTOM0 record exists for a correlation id.
constexpr std::uint32_t kExternalKindCustom0 = 3;

void check_interval(std::int64_t start_ns, std::int64_t end_ns, const char* what, std::size_t index) {
  if (end_ns < start_ns) {
    throw std::invalid_argument(fmt::format("build_session: {}[{}] ends before it starts ({} < {} ns)",
                                            what, index, end_ns, start_ns));
  }
}

/// correlation id -> external id, preferring CUSTOM0 records, otherwise the first record seen.
std::unordered_map<std::uint32_t, std::uint64_t> external_map(const std::vector<RawRecord>& records) {
  struct Entry {
    std::uint64_t id;
    bool custom0;
  };
  std::unordered_map<std::uint32_t, Entry> entries;
  std::size_t count = 0;
  for (const RawRecord& r : records) count += r.kind == RawKind::ExternalCorrelation ? 1 : 0;
  entries.reserve(count);
  for (const RawRecord& r : records) {
    if (r.kind != RawKind::ExternalCorrelation) continue;
    const bool custom0 = r.external_kind == kExternalKindCustom0;
    const auto [it, inserted] = entries.emplace(r.correlation_id, Entry{r.external_id, custom0});
    if (!inserted && custom0 && !it->second.custom0) it->second = Entry{r.external_id, true};
  }
  std::unordered_map<std::uint32_t, std::uint64_t> ids;
  ids.reserve(entries.size());
  for (const auto& [corr, entry] : entries) ids.emplace(corr, entry.id);
  return ids;
}

/// Sorts by `less` unless already sorted (CUPTI delivers each kind mostly in order); stable, so
/// full ties keep delivery order.
template <typename T, typename Less>
void sort_if_needed(std::vector<T>& v, Less less) {
  if (!std::is_sorted(v.begin(), v.end(), less)) std::stable_sort(v.begin(), v.end(), less);
}

std::uint64_t lookup(const std::unordered_map<std::uint32_t, std::uint64_t>& map, std::uint32_t key) {
  const auto it = map.find(key);
  return it == map.end() ? 0 : it->second;
}

}  // namespace

const char* trace_category(DeviceActivityKind kind) {
  switch (kind) {
    case DeviceActivityKind::Kernel: return "kernel";
    case DeviceActivityKind::Memcpy: return "gpu_memcpy";
    case DeviceActivityKind::Memset: return "gpu_memset";
  }
  return "unknown";
}

std::string demangle(const std::string& name) {
  if (name.size() < 2 || name[0] != '_' || name[1] != 'Z') return name;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status),
                                             std::free);
  if (status != 0 || !out) return name;
  return std::string(out.get());
}

std::string memcpy_name(std::uint32_t copy_kind) {
  // CUpti_ActivityMemcpyKind; PyTorch/Kineto spell them "Memcpy <Kind> (<src> -> <dst>)".
  switch (copy_kind) {
    case 1: return "Memcpy HtoD (Host -> Device)";
    case 2: return "Memcpy DtoH (Device -> Host)";
    case 3: return "Memcpy HtoA (Host -> Array)";
    case 4: return "Memcpy AtoH (Array -> Host)";
    case 5: return "Memcpy AtoA (Array -> Array)";
    case 6: return "Memcpy AtoD (Array -> Device)";
    case 7: return "Memcpy DtoA (Device -> Array)";
    case 8: return "Memcpy DtoD (Device -> Device)";
    case 9: return "Memcpy HtoH (Host -> Host)";
    case 10: return "Memcpy PtoP (Device -> Device)";
    default: return "Memcpy Unknown";
  }
}

std::string sync_name(std::uint32_t sync_type) {
  // CUpti_ActivitySynchronizationType.
  switch (sync_type) {
    case 1: return "Event Synchronize";
    case 2: return "Stream Wait Event";
    case 3: return "Stream Synchronize";
    case 4: return "Context Synchronize";
    default: return "Unknown Synchronize";
  }
}

Session build_session(const RawSession& raw) {
  Session s;
  s.meta = raw.meta;
  s.event_timings = raw.event_timings;

  for (std::size_t i = 0; i < raw.ranges.size(); ++i) {
    check_interval(raw.ranges[i].start_ns, raw.ranges[i].end_ns, "ranges", i);
  }
  s.ranges = raw.ranges;
  sort_if_needed(s.ranges, [](const HostRange& a, const HostRange& b) {
    return std::tie(a.start_ns, a.id) < std::tie(b.start_ns, b.id);
  });

  const auto ext = external_map(raw.records);
  std::unordered_map<std::string, std::string> demangled;  // mangled -> demangled, computed once
  std::size_t n_api = 0, n_device = 0, n_sync = 0;
  for (const RawRecord& r : raw.records) {
    n_api += r.kind == RawKind::Runtime || r.kind == RawKind::Driver ? 1 : 0;
    n_device += r.kind == RawKind::Kernel || r.kind == RawKind::Memcpy || r.kind == RawKind::Memset ? 1 : 0;
    n_sync += r.kind == RawKind::Synchronization ? 1 : 0;
  }
  s.api.reserve(n_api);
  s.device.reserve(n_device);
  s.syncs.reserve(n_sync);

  for (std::size_t i = 0; i < raw.records.size(); ++i) {
    const RawRecord& r = raw.records[i];
    if (r.kind == RawKind::ExternalCorrelation) continue;
    check_interval(r.start_ns, r.end_ns, "records", i);
    switch (r.kind) {
      case RawKind::Runtime:
      case RawKind::Driver: {
        ApiCall c;
        c.driver = r.kind == RawKind::Driver;
        c.name = r.name;
        c.start_ns = r.start_ns;
        c.end_ns = r.end_ns;
        c.process_id = r.process_id;
        c.thread_id = r.thread_id;
        c.correlation_id = r.correlation_id;
        c.cbid = r.cbid;
        c.external_id = lookup(ext, r.correlation_id);
        s.api.push_back(std::move(c));
        break;
      }
      case RawKind::Kernel:
      case RawKind::Memcpy:
      case RawKind::Memset: {
        DeviceActivity a;
        if (r.kind == RawKind::Kernel) {
          a.kind = DeviceActivityKind::Kernel;
          auto it = demangled.find(r.name);
          if (it == demangled.end()) it = demangled.emplace(r.name, demangle(r.name)).first;
          a.name = it->second;
        } else if (r.kind == RawKind::Memcpy) {
          a.kind = DeviceActivityKind::Memcpy;
          a.name = memcpy_name(r.copy_kind);
        } else {
          a.kind = DeviceActivityKind::Memset;
          a.name = "Memset (Device)";
        }
        a.start_ns = r.start_ns;
        a.end_ns = r.end_ns;
        a.device_id = r.device_id;
        a.context_id = r.context_id;
        a.stream_id = r.stream_id;
        a.correlation_id = r.correlation_id;
        a.external_id = lookup(ext, r.correlation_id);
        a.raw = &r;
        s.device.push_back(std::move(a));
        break;
      }
      case RawKind::Synchronization: {
        SyncEvent e;
        e.name = sync_name(r.sync_type);
        e.start_ns = r.start_ns;
        e.end_ns = r.end_ns;
        e.device_id = r.device_id;
        e.stream_id = r.stream_id;
        e.correlation_id = r.correlation_id;
        e.external_id = lookup(ext, r.correlation_id);
        s.syncs.push_back(std::move(e));
        break;
      }
      case RawKind::ExternalCorrelation:
        break;
    }
  }

  // Deterministic order: start time, then correlation id (runtime before driver), then the
  // remaining identifying fields; stable_sort keeps delivery order for full ties.
  sort_if_needed(s.api, [](const ApiCall& a, const ApiCall& b) {
    return std::tie(a.start_ns, a.correlation_id, a.driver, a.thread_id, a.end_ns) <
           std::tie(b.start_ns, b.correlation_id, b.driver, b.thread_id, b.end_ns);
  });
  sort_if_needed(s.device, [](const DeviceActivity& a, const DeviceActivity& b) {
    return std::tie(a.start_ns, a.correlation_id, a.device_id, a.stream_id, a.end_ns) <
           std::tie(b.start_ns, b.correlation_id, b.device_id, b.stream_id, b.end_ns);
  });
  sort_if_needed(s.syncs, [](const SyncEvent& a, const SyncEvent& b) {
    return std::tie(a.start_ns, a.correlation_id, a.device_id, a.stream_id) <
           std::tie(b.start_ns, b.correlation_id, b.device_id, b.stream_id);
  });

  // correlation id -> launching call (runtime preferred over driver, then the earliest) and how
  // many API and device records carry it.
  struct Corr {
    std::int64_t launch = -1;
    int api = 0;
    int device = 0;
  };
  std::unordered_map<std::uint32_t, Corr> corr;
  corr.reserve(s.api.size() + s.device.size() / 4);
  for (std::size_t i = 0; i < s.api.size(); ++i) {
    Corr& c = corr[s.api[i].correlation_id];
    ++c.api;
    if (c.launch < 0 || (s.api[static_cast<std::size_t>(c.launch)].driver && !s.api[i].driver)) {
      c.launch = static_cast<std::int64_t>(i);
    }
  }
  for (DeviceActivity& a : s.device) {
    Corr& c = corr[a.correlation_id];
    ++c.device;
    if (c.launch < 0) continue;
    a.launch = c.launch;
    ++s.api[static_cast<std::size_t>(a.launch)].device_work;
  }
  for (const auto& [id, c] : corr) {
    if (c.api > 1 || c.device > 1) s.duplicate_correlations.push_back(id);
  }
  auto& dups = s.duplicate_correlations;
  std::sort(dups.begin(), dups.end());
  return s;
}

}  // namespace xb
