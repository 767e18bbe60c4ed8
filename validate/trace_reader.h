// Reading Chrome/Kineto traces for the validator: crossbench's trace_only.json and full.json, and
// PyTorch's export_chrome_trace() output, plain or gzipped (.json.gz, detected by content).
//
// The reader streams the file through a strict single-pass scanner (validate/json_scan.h) and
// keeps only what the checks use: "X" events of the device, API, host-range, GPU-annotation and
// sync categories, ac2g flow endpoints, externalCorrelations, the recording window and the
// "crossbench" metadata block. Everything else is validated as JSON and skipped.
//
// Units: nanoseconds. Trace "ts"/"dur" are microseconds; they are converted exactly from their
// decimal text (no binary floating point), and times are made absolute with
// baseTimeNanoseconds: start_ns = baseTimeNanoseconds + ts * 1000.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace xb {

/// Interned strings shared by every file of one validation, so that names compare as integers.
class NameTable {
 public:
  NameTable();
  /// The id of `s`, adding it when new. Ids are dense from 0.
  std::uint32_t intern(std::string_view s);
  /// The id of `s`, or npos when it was never interned.
  std::uint32_t find(std::string_view s) const;
  /// The string of an id (valid while the table lives).
  const std::string& str(std::uint32_t id) const { return strings_[id]; }
  std::size_t size() const { return strings_.size(); }
  static constexpr std::uint32_t npos = 0xFFFFFFFFu;

 private:
  void grow();
  std::vector<std::string> strings_;
  std::vector<std::uint32_t> slots_;  // open addressing: id + 1, 0 = empty
  std::vector<std::uint64_t> hashes_;
};

/// Trace event categories the validator uses ("cat" of "X" events). PyTorch's older spellings
/// ("Kernel", "Memcpy", "Memset", "Runtime") map to the same values.
enum class TraceCat : std::uint8_t {
  Kernel,             ///< "kernel"
  Memcpy,             ///< "gpu_memcpy"
  Memset,             ///< "gpu_memset"
  Runtime,            ///< "cuda_runtime"
  Driver,             ///< "cuda_driver"
  UserAnnotation,     ///< "user_annotation" (record_function ranges, ProfilerStep#N)
  CpuOp,              ///< "cpu_op"
  GpuUserAnnotation,  ///< "gpu_user_annotation": an annotation's span on a device lane
  Sync,               ///< "cuda_sync"
  /// "overhead": Kineto's own work (Activity Buffer Request, Lazy Function Loading, Runtime
  /// Triggered Module Loading, Buffer Flush), written on pid -1 / tid 0 without args.
  Overhead,
};

/// The category name as written in traces ("kernel", "gpu_memcpy", ...).
const char* to_string(TraceCat cat);
/// Kernel, memcpy or memset: work that ran on the device.
inline bool is_device(TraceCat c) { return c == TraceCat::Kernel || c == TraceCat::Memcpy || c == TraceCat::Memset; }
/// A CUDA runtime or driver API call.
inline bool is_api(TraceCat c) { return c == TraceCat::Runtime || c == TraceCat::Driver; }
/// A host range: user annotation or CPU op.
inline bool is_range(TraceCat c) { return c == TraceCat::UserAnnotation || c == TraceCat::CpuOp; }

/// One "X" event of a used category.
struct TraceEvent {
  std::int64_t start_ns = 0;  ///< absolute ns (baseTimeNanoseconds + ts)
  std::int64_t dur_ns = 0;
  /// args.correlation (device activities, API calls, syncs). Host ranges have none, so theirs
  /// holds args["Parent id"] (crossbench trace_only ranges) instead: read it with parent_id().
  std::uint64_t correlation = 0;
  std::uint64_t external_id = 0;  ///< args["External id"]; 0 = none
  std::uint32_t name = 0;         ///< NameTable id
  std::uint32_t lane = 0;         ///< index into TraceData::lanes
  std::uint32_t index = 0;        ///< position in traceEvents, for messages
  TraceCat cat = TraceCat::Kernel;
  std::uint8_t flags = 0;  ///< kHas* bits
  static constexpr std::uint8_t kHasCorrelation = 1, kHasExternal = 2, kHasParent = 4;
  std::int64_t end_ns() const { return start_ns + dur_ns; }
  bool has(std::uint8_t bit) const { return (flags & bit) != 0; }
  /// A host range's args["Parent id"] (0 when it has none).
  std::uint64_t parent_id() const { return has(kHasParent) ? correlation : 0; }
};
static_assert(sizeof(TraceEvent) <= 48, "TraceEvent is read millions of times: keep it small");

/// One ac2g flow endpoint ("ph": "s" at the launch call, "f" at the device activity).
struct TraceFlow {
  std::uint64_t id = 0;    ///< the correlation id
  std::int64_t ts_ns = 0;  ///< absolute ns
  std::uint32_t lane = 0;
  std::uint32_t index = 0;  ///< position in traceEvents
  bool start = false;       ///< "s" (true) or "f"
  bool bp_e = false;        ///< "bp": "e"
};

/// A (pid, tid) lane. Numeric ids are kept as numbers; string ids (Kineto writes "Spans") as text.
struct TraceLane {
  std::int64_t pid = 0, tid = 0;
  std::string pid_text, tid_text;  ///< set when the id was a string
  /// "pid 578 tid 578" (or the string ids).
  std::string describe() const;
};

/// Everything the validator uses from one trace file.
struct TraceData {
  std::string path;                ///< as given, for messages
  std::string file;                ///< file name
  nlohmann::json meta;             ///< the "crossbench" block, or null
  std::string format;              ///< crossbench.format ("trace_only", "full") or "" for other tools
  bool has_base = false;           ///< baseTimeNanoseconds was present
  std::int64_t base_ns = 0;        ///< baseTimeNanoseconds (0 when absent)
  std::vector<TraceEvent> events;  ///< used "X" events, in file order
  std::vector<TraceFlow> flows;    ///< ac2g endpoints, in file order
  std::vector<TraceLane> lanes;
  /// Compute capability per device id (major * 10 + minor), from Kineto's "deviceProperties"
  /// (computeMajor, computeMinor); empty when the trace has none.
  std::map<std::int64_t, int> compute_capability;
  /// python_function events (torch.profiler with_stack): counted, not kept.
  std::size_t python_functions = 0;
  /// Host ranges' args["Input Dims"] (record_shapes): (index into events, NameTable id of the
  /// shapes as key_averages(group_by_input_shape=True) keys them, input_shapes_text()), in
  /// event order; ranges without the arg are not listed.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> input_shapes;
  bool has_ext_corr = false;  ///< the file has an "externalCorrelations" array
  /// externalCorrelations: (correlation, External id) pairs, in file order.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ext_corr;
  /// Recording window (absolute ns), from crossbench.window_start_ns/window_end_ns or, for
  /// Kineto traces, from the "Trace" span's start and the "Record Window End" instant.
  bool has_window = false;
  std::int64_t window_start_ns = 0, window_end_ns = 0;
  std::string window_source;  ///< where the window came from, for messages
  /// Data-loss counters from the metadata (absent when the file does not record them).
  std::optional<std::uint64_t> dropped_records, out_of_range_records;
  std::size_t trace_events = 0;  ///< entries in traceEvents, all phases
  bool gzip = false;             ///< the file was gzip-compressed
  /// torch.autograd.profiler's own JSON (profiler_util.py EventList.export_chrome_trace, where
  /// Kineto is unavailable): a top-level array of the FunctionEvents by name, thread and time,
  /// read as host ranges; no categories, ids, runtime calls or device records.
  bool eventlist = false;
  std::uint64_t bytes = 0;  ///< uncompressed bytes read
};

/// An op's input shapes as PyTorch keys and prints them (`str(KinetoEvent.shapes())`), from
/// the JSON text of its "Input Dims" arg (valid JSON): one list of sizes per input, `[]` for an
/// input that is not a list of integers (a scalar, None, a string, and a TensorList, whose
/// entries are lists: shapes() does not hold a list's sizes). "[[2, 3], [], [4]]"; a value that
/// is not an array gives "[]".
std::string input_shapes_text(std::string_view dims_json);

/// Reads a trace file (plain or gzip). Throws InputError (common/errors.h) with a one-line
/// message naming the file and what is wrong: missing, not JSON (with byte offset and, inside
/// traceEvents, the element index), truncated, NaN/Infinity, a used event lacking "ts", "dur",
/// "name", "pid", "tid" or (device and API events) "args.correlation", values out of range.
TraceData read_trace(const std::filesystem::path& path, NameTable& names);

/// Same, from memory; `label` stands for the file name in messages.
TraceData parse_trace(std::string_view data, const std::string& label, NameTable& names);

/// For tests: with false, every element goes through the strict scanner instead of the fast
/// paths (which must give identical results). Not thread-safe; default true.
void set_fast_paths_for_testing(bool enabled);

}  // namespace xb
