// Raw records -> event model (profiler/model/event_model.h).
#include "profiler/model/event_model.h"

#include <cxxabi.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
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
    throw std::invalid_argument(
        fmt::format("build_session: {}[{}] ends before it starts ({} < {} ns)", what, index, end_ns, start_ns));
  }
}

/// Asks for transparent huge pages on a vector's reserved storage before it is filled: one fault
/// per 2 MB instead of one per 4 kB page (page faults cost microseconds each on a VM). A no-op
/// for small vectors and where unsupported.
template <typename T>
void huge_pages(const std::vector<T>& v) {
#ifdef MADV_HUGEPAGE
  constexpr std::uintptr_t k2M = std::uintptr_t{1} << 21;
  const std::size_t bytes = v.capacity() * sizeof(T);
  if (bytes < 4 * k2M) return;
  const auto data = reinterpret_cast<std::uintptr_t>(v.data());
  const std::uintptr_t b = (data + k2M - 1) & ~(k2M - 1);
  const std::uintptr_t e = (data + bytes) & ~(k2M - 1);
  if (e > b) ::madvise(reinterpret_cast<void*>(b), e - b, MADV_HUGEPAGE);
#else
  (void)v;
#endif
}

/// Per correlation id slots. CUPTI's correlation ids are dense (one counter per process), so
/// when they span at most a few times as many values as there are records the slots are a flat
/// array indexed by id - lo (no hashing, no node per id); otherwise a hash map. `T{}` is an unused
/// slot, and for_each visits the used ones (in id order when flat).
template <typename T>
class CorrSlots {
 public:
  CorrSlots(std::uint32_t lo, std::uint32_t hi, std::size_t keys) {
    const std::uint64_t span = keys == 0 ? 0 : std::uint64_t{hi} - lo + 1;
    if (keys != 0 && span <= 4 * std::uint64_t{keys} + 4096) {
      lo_ = lo;
      flat_.reserve(static_cast<std::size_t>(span));
      huge_pages(flat_);
      flat_.assign(static_cast<std::size_t>(span), T{});
      dense_ = true;
    } else {
      map_.reserve(keys);
    }
  }
  /// The slot of `id` (created unused when new). In flat mode `id` must lie in [lo, hi].
  T& operator[](std::uint32_t id) { return dense_ ? flat_[id - lo_] : map_[id]; }
  /// The slot of `id`, or nullptr when it was never created.
  const T* find(std::uint32_t id) const {
    if (dense_) return id >= lo_ && id - lo_ < flat_.size() ? &flat_[id - lo_] : nullptr;
    const auto it = map_.find(id);
    return it == map_.end() ? nullptr : &it->second;
  }
  bool sorted_iteration() const { return dense_; }
  template <typename F>
  void for_each(F f) const {
    if (dense_) {
      for (std::size_t i = 0; i < flat_.size(); ++i) f(static_cast<std::uint32_t>(lo_ + i), flat_[i]);
    } else {
      for (const auto& [id, slot] : map_) f(id, slot);
    }
  }

 private:
  bool dense_ = false;
  std::uint32_t lo_ = 0;
  std::vector<T> flat_;
  std::unordered_map<std::uint32_t, T> map_;
};

/// External id of a correlation id: state 0 = no ExternalCorrelation record, 1 = from a record of
/// another kind (the first one seen), 2 = from a CUSTOM0 record (the first one seen).
struct ExtSlot {
  std::uint64_t id = 0;
  std::uint8_t state = 0;
};

/// correlation id -> external id, preferring CUSTOM0 records, otherwise the first record seen.
void fill_external(const std::vector<RawRecord>& records, CorrSlots<ExtSlot>& ext) {
  for (const RawRecord& r : records) {
    if (r.kind != RawKind::ExternalCorrelation) continue;
    ExtSlot& e = ext[r.correlation_id];
    const bool custom0 = r.external_kind == kExternalKindCustom0;
    if (e.state == 0 || (custom0 && e.state == 1))
      e = ExtSlot{r.external_id, static_cast<std::uint8_t>(custom0 ? 2 : 1)};
  }
}

std::uint64_t lookup(const CorrSlots<ExtSlot>& ext, std::uint32_t corr) {
  const ExtSlot* e = ext.find(corr);
  return e == nullptr ? 0 : e->id;
}

/// Sorts by `less` unless already sorted (CUPTI delivers each kind mostly in order); stable, so
/// full ties keep delivery order.
template <typename T, typename Less>
void sort_if_needed(std::vector<T>& v, Less less) {
  if (!std::is_sorted(v.begin(), v.end(), less)) std::stable_sort(v.begin(), v.end(), less);
}

}  // namespace

const char* trace_category(DeviceActivityKind kind) {
  switch (kind) {
    case DeviceActivityKind::Kernel:
      return "kernel";
    case DeviceActivityKind::Memcpy:
      return "gpu_memcpy";
    case DeviceActivityKind::Memset:
      return "gpu_memset";
  }
  return "unknown";
}

const std::string& DemangleCache::get(const std::string& mangled) {
  std::uint64_t a = 0, b = 0;
  std::memcpy(&a, mangled.data(), std::min<std::size_t>(8, mangled.size()));
  if (mangled.size() > 8) std::memcpy(&b, mangled.data() + mangled.size() - 8, 8);
  const std::uint64_t key = (a * 0x9E3779B97F4A7C15ull) ^ (b + mangled.size() * 0xC2B2AE3D27D4EB4Full);
  Memo& m = memo_[(key >> 58) & 63];
  if (m.entry != nullptr && m.key == key && m.entry->first == mangled) return m.entry->second;
  auto it = names_.find(mangled);
  if (it == names_.end()) it = names_.emplace(mangled, demangle(mangled)).first;
  m.key = key;
  m.entry = &*it;  // unordered_map nodes never move
  return it->second;
}

std::string demangle(const std::string& name) {
  if (name.size() < 2 || name[0] != '_' || name[1] != 'Z') return name;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), std::free);
  if (status != 0 || !out) return name;
  return std::string(out.get());
}

std::string memcpy_name(std::uint32_t copy_kind) {
  // CUpti_ActivityMemcpyKind; PyTorch/Kineto spell them "Memcpy <Kind> (<src> -> <dst>)".
  switch (copy_kind) {
    case 1:
      return "Memcpy HtoD (Host -> Device)";
    case 2:
      return "Memcpy DtoH (Device -> Host)";
    case 3:
      return "Memcpy HtoA (Host -> Array)";
    case 4:
      return "Memcpy AtoH (Array -> Host)";
    case 5:
      return "Memcpy AtoA (Array -> Array)";
    case 6:
      return "Memcpy AtoD (Array -> Device)";
    case 7:
      return "Memcpy DtoA (Device -> Array)";
    case 8:
      return "Memcpy DtoD (Device -> Device)";
    case 9:
      return "Memcpy HtoH (Host -> Host)";
    case 10:
      return "Memcpy PtoP (Device -> Device)";
    default:
      return "Memcpy Unknown";
  }
}

std::string sync_name(std::uint32_t sync_type) {
  // CUpti_ActivitySynchronizationType.
  switch (sync_type) {
    case 1:
      return "Event Synchronize";
    case 2:
      return "Stream Wait Event";
    case 3:
      return "Stream Synchronize";
    case 4:
      return "Context Synchronize";
    default:
      return "Unknown Synchronize";
  }
}

namespace {

/// How many records of each kind a session holds, and the range of their correlation ids: what
/// sizes the session's vectors and correlation slots.
struct RecordCounts {
  std::size_t api = 0, device = 0, sync = 0, ext = 0;
  std::uint32_t lo = 0xFFFFFFFFu, hi = 0;  // correlation ids of all records
};

RecordCounts count_records(const std::vector<RawRecord>& records) {
  RecordCounts n;
  for (const RawRecord& r : records) {
    n.api += r.kind == RawKind::Runtime || r.kind == RawKind::Driver ? 1 : 0;
    n.device += r.kind == RawKind::Kernel || r.kind == RawKind::Memcpy || r.kind == RawKind::Memset ? 1 : 0;
    n.sync += r.kind == RawKind::Synchronization ? 1 : 0;
    n.ext += r.kind == RawKind::ExternalCorrelation ? 1 : 0;
    n.lo = std::min(n.lo, r.correlation_id);
    n.hi = std::max(n.hi, r.correlation_id);
  }
  return n;
}

/// Every record but the external correlations becomes the session's API call, device activity or
/// synchronization, with its External id (`ext`) and, for kernels, its demangled name. Throws
/// InputError for a record whose interval is not valid.
void convert_records(const RawSession& raw, const RecordCounts& n, const CorrSlots<ExtSlot>& ext, Session& s) {
  DemangleCache demangled;
  s.api.reserve(n.api);
  s.device.reserve(n.device);
  s.syncs.reserve(n.sync);
  huge_pages(s.api);
  huge_pages(s.device);
  for (std::size_t i = 0; i < raw.records.size(); ++i) {
    const RawRecord& r = raw.records[i];
    if (r.kind == RawKind::ExternalCorrelation) continue;
    check_interval(r.start_ns, r.end_ns, "records", i);
    switch (r.kind) {
      case RawKind::Runtime:
      case RawKind::Driver: {
        ApiCall& c = s.api.emplace_back();
        c.driver = r.kind == RawKind::Driver;
        c.name = r.name;
        c.start_ns = r.start_ns;
        c.end_ns = r.end_ns;
        c.process_id = r.process_id;
        c.thread_id = r.thread_id;
        c.correlation_id = r.correlation_id;
        c.cbid = r.cbid;
        c.external_id = lookup(ext, r.correlation_id);
        break;
      }
      case RawKind::Kernel:
      case RawKind::Memcpy:
      case RawKind::Memset: {
        DeviceActivity& a = s.device.emplace_back();
        if (r.kind == RawKind::Kernel) {
          a.kind = DeviceActivityKind::Kernel;
          a.name = demangled.get(r.name);
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
        break;
      }
      case RawKind::Synchronization: {
        SyncEvent& e = s.syncs.emplace_back();
        e.name = sync_name(r.sync_type);
        e.start_ns = r.start_ns;
        e.end_ns = r.end_ns;
        e.device_id = r.device_id;
        e.stream_id = r.stream_id;
        e.correlation_id = r.correlation_id;
        e.external_id = lookup(ext, r.correlation_id);
        break;
      }
      case RawKind::ExternalCorrelation:
        break;
    }
  }
}

/// Deterministic order: start time, then correlation id (runtime before driver), then the
/// remaining identifying fields; stable_sort keeps delivery order for full ties.
void sort_records(Session& s) {
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
}

/// Each device activity's launching call (by correlation id: runtime preferred over driver, then
/// the earliest), each call's count of device work, and the correlation ids that more than one API
/// or device record carries (Session::duplicate_correlations, ascending).
void link_launches(Session& s, const RecordCounts& n) {
  struct Corr {
    std::int64_t launch = -1;
    int api = 0;
    int device = 0;
  };
  CorrSlots<Corr> corr(n.lo, n.hi, s.api.size() + s.device.size());
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
  auto& dups = s.duplicate_correlations;
  corr.for_each([&](std::uint32_t id, const Corr& c) {
    if (c.api > 1 || c.device > 1) dups.push_back(id);
  });
  if (!corr.sorted_iteration()) std::sort(dups.begin(), dups.end());
}

}  // namespace

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
  const RecordCounts n = count_records(raw.records);
  CorrSlots<ExtSlot> ext(n.lo, n.hi, n.ext);
  fill_external(raw.records, ext);
  convert_records(raw, n, ext, s);
  sort_records(s);
  link_launches(s, n);
  return s;
}

}  // namespace xb
