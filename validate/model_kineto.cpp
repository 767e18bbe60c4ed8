// What PyTorch's and Kineto's own rules say a trace can show (validate/model.h): which records a
// trace holds, established before any check runs (establish_evidence), and which annotation's GPU
// span a device activity extends (span_annotation). Each rule cites the source it follows
// (PyTorch 2.11 and the Kineto it ships; read, not copied).
#include <algorithm>
#include <cctype>
#include <map>

#include <fmt/format.h>

#include "validate/model.h"

namespace xb::vd {

bool launches_device_work(const std::string& api) {
  std::string s(api);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s.find("launch") != std::string::npos || s.find("memcpy") != std::string::npos ||
         s.find("memset") != std::string::npos;
}

// ---------------------------------------------------------------------------------------------
// What the files can show

namespace {

/// Why a PyTorch trace records no device activity although it launches device work, or "".
/// torch/csrc/profiler/kineto_shim.cpp: ProfilerActivity.CPU enables Kineto's kCpuTypes (CPU_OP,
/// USER_ANNOTATION, EXTERNAL_CORRELATION, CUDA_RUNTIME, CUDA_DRIVER, PYTHON_FUNCTION, ...), and
/// only ProfilerActivity.CUDA its kCudaTypes (CONCURRENT_KERNEL, GPU_MEMCPY, GPU_MEMSET,
/// GPU_USER_ANNOTATION, OVERHEAD): a profile without CUDA has the runtime calls, with the ac2g
/// flow starts Kineto writes on them, and none of the device work they launched. The legacy
/// torch.autograd.profiler.profile(use_device="cuda") profiles with CPU activities only too
/// (torch/autograd/profiler.py: use_kineto=False gives ProfilerState.KINETO_GPU_FALLBACK and
/// kineto_activities {CPU}), and its export_chrome_trace writes that same Kineto JSON
/// (kineto_results.save where Kineto is available). Where it is not, the export is
/// EventList.export_chrome_trace's array of CPU functions (TraceData::eventlist), which records
/// no device activity either.
std::string no_device_records(const View& v, const NameTable& names) {
  if (v.t->eventlist)
    // profiler_util.py EventList.export_chrome_trace writes each FunctionEvent's name, thread and
    // times (and a "cpu_to_cuda" flow start per legacy kernel): no device record at all.
    return fmt::format(
        "{} is torch.autograd.profiler's own JSON (EventList.export_chrome_trace, written where Kineto is "
        "unavailable, as by torch.autograd.profiler_legacy.profile): CPU functions by name, thread and time, no "
        "runtime call or device record",
        v.file());
  if (!v.t->format.empty()) return "";  // crossbench's own traces: their metadata says what they hold
  if (!v.dev.empty() || !v.span.empty() || !v.sync.empty() || !v.ovh.empty()) return "";
  std::size_t launches = 0;
  for (std::uint32_t i : v.api) launches += launches_device_work(names.str(v.ev(i).name)) ? 1 : 0;
  std::size_t starts = 0;
  for (const TraceFlow& f : v.t->flows) starts += f.start ? 1 : 0;
  if (launches == 0 && starts == 0) return "";  // no device work launched: nothing is missing
  return fmt::format(
      "{} records no device activity (profiled without ProfilerActivity.CUDA, as torch.profiler with "
      "activities=[CPU] or the legacy torch.autograd.profiler.profile): {} of its API calls launch device work and no "
      "kernel, memcpy, memset or GPU span was recorded",
      v.file(), launches);
}

/// Why the table's device columns are the legacy profiler's per-op cudaEvent times, or "".
/// torch/autograd/profiler.py _parse_kineto_results: with use_device="cuda" and
/// ProfilerState.KINETO_GPU_FALLBACK every CPU event with a cudaEvent time
/// (KinetoEvent.cuda_elapsed_us) gets it as its one kernel (FunctionEvent.is_legacy);
/// profiler_util.py FunctionEvent.device_time_total counts a legacy event's own kernel only, and
/// _build_table prints the device columns and sums the Self CUDA total over legacy rows. Kineto
/// with ProfilerActivity.CUDA has device records for every row with device time, and without it
/// no device time at all (use_device None: FunctionEvent.device_time_total 0): so a table whose
/// device time stands on host rows alone, beside a trace without device records, is the legacy
/// profiler's.
std::string legacy_device_columns(const Model& m) {
  if (!m.table || m.table->json || !m.table->has_cuda || m.views.empty() || m.A().no_device.empty()) return "";
  bool device_time = false;
  for (const TableRowData& r : m.table->rows) {
    const bool cuda = r.self_cuda.ns != 0 || r.cuda_total.ns != 0;
    const bool cpu = r.self_cpu.ns != 0 || r.cpu_total.ns != 0;
    if (cuda && !cpu) return "";  // a device row: a profile with device records, not this trace's
    device_time = device_time || cuda;
  }
  if (!device_time) return "";
  return fmt::format(
      "the {} columns of {} are the legacy profiler's per-op cudaEvent times (torch.autograd.profiler.profile("
      "use_device=\"cuda\") without use_kineto; ProfilerState.KINETO_GPU_FALLBACK, FunctionEvent.is_legacy), which "
      "{} does not carry",
      m.table->device_label, m.table->file, m.A().file());
}

}  // namespace

void establish_evidence(Model& m) {
  for (View& v : m.views) v.no_device = no_device_records(v, m.names);
  m.legacy_device = legacy_device_columns(m);
}

std::string no_device_reason(const Model& m) {
  if (m.views.empty()) return "";
  for (const View& v : m.views)
    if (v.no_device.empty()) return "";
  return m.views[0].no_device;
}

// ---------------------------------------------------------------------------------------------
// Names Kineto's export writes as "unknown"

bool kineto_renames(const std::string& name) {
  return std::any_of(name.begin(), name.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u >= 0x7f;  // std::isprint in the "C" locale: 0x20 to 0x7e
  });
}

/// libkineto output_json.cpp ChromeTraceLogger::handleActivity passes every activity's name
/// through sanitizeForNonReadableChars, which replaces a name holding any byte std::isprint
/// rejects by "unknown" (kineto#1027, in the Kineto of PyTorch 2.11): a record_function named in
/// UTF-8 is "unknown" in the trace, its user_annotation and its gpu_user_annotation spans alike,
/// while PyTorch's table, printed from its own events, keeps the name.
void match_renamed_rows(const TableData& tb, const Derived& d, NameTable& names, std::vector<RowMatch>& out) {
  if (tb.json) return;
  const std::uint32_t unknown = names.find("unknown");
  if (unknown == NameTable::npos) return;
  std::map<RowKey, std::vector<std::size_t>> by_key;
  for (std::size_t i = 0; i < tb.rows.size(); ++i) {
    const TableRowData& r = tb.rows[i];
    RowMatch& m = out[i];
    if (m.matched || m.ambiguous || !kineto_renames(r.name)) continue;
    const bool host = r.self_cpu.ns != 0 || r.cpu_total.ns != 0;
    std::vector<RowKey> cand;
    for (const auto& kv : d.rows)
      if (kv.first.second == unknown && (host ? !device_side(kv.first.first) : device_side(kv.first.first)))
        cand.push_back(kv.first);
    if (cand.empty()) continue;
    std::sort(cand.begin(), cand.end());
    m.renamed = true;
    m.key = cand[0];
    m.note = fmt::format("'{}' is written \"unknown\" in the trace (Kineto's export keeps printable ASCII names only)",
                         r.name);
    if (cand.size() == 1) {
      m.matched = true;
      by_key[m.key].push_back(i);
    } else {
      m.ambiguous = true;  // "unknown" events of several kinds: the row's kind cannot be told
    }
  }
  for (const auto& [key, rows] : by_key) {
    if (rows.size() < 2) continue;
    for (std::size_t i : rows) {
      out[i].matched = false;
      out[i].ambiguous = true;
      out[i].note = fmt::format(
          "{} rows of the table have names the trace writes \"unknown\" ({} '{}' events): their figures cannot be "
          "told apart",
          rows.size(), to_string(key.first), names.str(key.second));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Which GPU span a device activity extends

void index_annotations(View& v) {
  v.annot_by_start.clear();
  for (std::uint32_t i : v.rng)
    if (v.ev(i).cat == TraceCat::UserAnnotation && !v.is_async(i)) v.annot_by_start.push_back(i);
  std::sort(v.annot_by_start.begin(), v.annot_by_start.end(), [&](std::uint32_t a, std::uint32_t b) {
    const TraceEvent &x = v.ev(a), &y = v.ev(b);
    if (x.lane != y.lane) return x.lane < y.lane;
    if (x.start_ns != y.start_ns) return x.start_ns < y.start_ns;
    return x.end_ns() > y.end_ns();
  });
}

/// Kineto's rule (libkineto GenericActivityProfiler::handleGpuActivity: a device activity extends
/// the GPU_USER_ANNOTATION span of the CPU activity that userCorrelationMap_ gives its correlation
/// id, GpuUserEventMap::insertOrExtendEvent per stream; CuptiActivityProfiler::
/// handleCorrelationActivity fills that map from CUPTI's CUSTOM1 external correlation records).
/// PyTorch pushes a RecordFunction's id onto CUPTI's per-thread CUSTOM1 stack when its scope is
/// USER_SCOPE (record_function, ProfilerStep#N: cat user_annotation) and onto CUSTOM0 (the trace's
/// "External id") otherwise (torch/csrc/profiler/collection.cpp ThreadLocalSubqueue::begin_op). So
/// the span is the innermost user annotation open on the launching thread at the call, whatever
/// the call's External id names: a Triton kernel launched directly or through the driver API (no
/// External id), a cudaGraphLaunch under record_function, or a call linked to an op outside the
/// annotation (torch.compile's graph replay) all extend the span of the annotation around them.
std::uint32_t span_annotation(const View& v, const TraceEvent& activity) {
  const std::uint32_t l = v.api_corr.only(activity.correlation);
  if (l == kNone) {
    // No launch call in the trace: the innermost annotation of the range it is attributed to.
    std::uint32_t out = kNone;
    for_ancestors(v, attributed_range(v, activity), [&](std::uint32_t x) {
      if (out == kNone && v.ev(x).cat == TraceCat::UserAnnotation) out = x;
    });
    return out;
  }
  const TraceEvent& call = v.ev(l);
  // The latest annotation of the call's thread starting at or before it; the innermost one
  // holding the call is it or one of its ancestors (ranges nest by time on a thread).
  auto it = std::upper_bound(v.annot_by_start.begin(), v.annot_by_start.end(), call,
                             [&](const TraceEvent& c, std::uint32_t i) {
                               const TraceEvent& e = v.ev(i);
                               return c.lane != e.lane ? c.lane < e.lane : c.start_ns < e.start_ns;
                             });
  if (it == v.annot_by_start.begin() || v.ev(*(it - 1)).lane != call.lane) return kNone;
  std::uint32_t out = kNone;
  for_ancestors(v, *(it - 1), [&](std::uint32_t x) {
    const TraceEvent& e = v.ev(x);
    if (out == kNone && e.cat == TraceCat::UserAnnotation && !v.is_async(x) && e.start_ns <= call.start_ns &&
        call.end_ns() <= e.end_ns())
      out = x;
  });
  return out;
}

}  // namespace xb::vd
