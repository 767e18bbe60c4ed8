// Roofline arithmetic, the regime rules and the calibration record (ceilings.json) behind
// `bench sweep` and `bench calibrate`. Plain C++ (no CUDA): tested on the CPU with hand-computed
// points. Formulas, units and thresholds are documented in docs/metrics.md ("Sweeps").
//
// Units: times in ns; rates in 10^12 FLOP/s (TFLOP/s) and 10^9 B/s (GB/s, which is bytes per ns);
// intensity in FLOP per byte.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace xb {

/// The two ceilings one point is judged against: dense GEMM throughput of its dtype and device
/// memory bandwidth (bytes read + written), both measured by `bench calibrate`.
struct Roof {
  double peak_tflops = 0;     ///< 10^12 FLOP/s
  double bandwidth_gbps = 0;  ///< 10^9 B/s = B/ns
  /// Ridge point, FLOP/B: peak_tflops * 1e3 / bandwidth_gbps (the intensity at which both terms
  /// of the roofline take equal time). Throws std::invalid_argument unless both are > 0.
  double ridge_intensity() const;
};

/// Compute term of the roofline, ns: flops / (peak_tflops * 1e3). Throws std::invalid_argument
/// for flops < 0 or peak_tflops <= 0 (or non-finite inputs).
double compute_time_ns(double flops, const Roof& roof);
/// Memory term of the roofline, ns: bytes / bandwidth_gbps. Throws like compute_time_ns.
double memory_time_ns(double bytes, const Roof& roof);
/// Roofline bound, ns: max(compute_time_ns, memory_time_ns) (Williams, Waterman, Patterson,
/// "Roofline", CACM 2009: attainable = min(peak, intensity x bandwidth)).
double roofline_bound_ns(double flops, double bytes, const Roof& roof);
/// Attainable TFLOP/s at `intensity` FLOP/B: min(peak_tflops, intensity * bandwidth_gbps / 1e3).
double attainable_tflops(double intensity, const Roof& roof);

/// Where a point's time goes (docs/metrics.md, "Regime"):
enum class Regime {
  Overhead,     ///< GPU busy fraction under the threshold: the host/launch path sets the pace
  Memory,       ///< busy enough, and the memory term of the roofline is the larger
  Compute,      ///< busy enough, and the compute term is the larger (or equal)
  NotMeasured,  ///< the point failed (wrong result, error): no timing
};
/// "overhead-bound", "memory-bound", "compute-bound", "not measured".
const char* to_string(Regime regime);

/// Thresholds of the regime rules.
struct RegimeRules {
  /// A point is overhead-bound when its GPU busy fraction is below this: by default 0.5, i.e. the
  /// GPU idles for more of the back-to-back window than it works.
  double busy_threshold = 0.5;
};

/// The rule: busy < rules.busy_threshold -> Overhead; else compute_ns >= memory_ns -> Compute;
/// else Memory. Throws std::invalid_argument for a busy fraction outside [0, 1.5] or negative
/// times (busy may exceed 1 by clock skew between host and device timestamps; above 1.5 the input
/// is wrong), or a threshold outside (0, 1].
Regime classify(double busy, double compute_ns, double memory_ns, const RegimeRules& rules);

/// Everything measured for one sweep point (op x dtype x size), per call. Produced by
/// measure_points (bench/sweep/sweep.h) from a recorded session.
struct PointMeasurement {
  std::string fixture;  ///< "<op>/<dtype>/<n>"
  std::string op;
  std::string dtype;
  std::int64_t n = 0;
  double flops = 0;  ///< per call, docs/metrics.md
  double bytes = 0;  ///< per call: each input read once, each output written once
  bool verified = false;
  double max_rel_error = 0;    ///< -1 when the output held non-finite values
  bool measured = false;       ///< false: no timing (failed point); the fields below are 0
  std::string note;            ///< why not measured, or "" when measured
  int steps = 0;               ///< active (recorded) timed steps
  double kernel_ns = 0;        ///< CUPTI device time per call, median over the active steps
  double event_ns = 0;         ///< cudaEvent time per call, median over the active steps
  double host_api_ns = 0;      ///< CUDA API time inside the op's cpu_op range, median
  double host_op_ns = 0;       ///< wall time of the op's cpu_op range (all host work), median
  int eager_calls = 0;         ///< calls in the back-to-back (eager) window
  double eager_window_ns = 0;  ///< eager window wall time
  double eager_device_ns = 0;  ///< device time inside the eager window
  int graph_steps = 0;         ///< active steps of the graph fixture (0: not measured in graph mode)
  double graph_event_ns = 0;   ///< cudaEvent time per call, CUDA-graph replay, median (0: none)
  double graph_kernel_ns = 0;  ///< CUPTI device time per call, CUDA-graph replay, median (0: none)
};

/// A point with its derived metrics.
struct PointMetrics {
  PointMeasurement m;
  Roof roof;                     ///< ceilings used
  double busy = 0;               ///< eager_device_ns / eager_window_ns
  double intensity = 0;          ///< flops / bytes, FLOP/B
  double tflops = 0;             ///< achieved: flops / kernel_ns / 1e3
  double gbps = 0;               ///< achieved: bytes / kernel_ns
  double compute_ns = 0;         ///< compute_time_ns
  double memory_ns = 0;          ///< memory_time_ns
  double bound_ns = 0;           ///< roofline_bound_ns
  double roofline_fraction = 0;  ///< bound_ns / kernel_ns (1 = on the roof)
  Regime regime = Regime::NotMeasured;
};

/// Derives every metric of a measured point (formulas in roofline.h's functions and
/// docs/metrics.md). An unmeasured point gets Regime::NotMeasured and zeros. Throws
/// std::invalid_argument for a measured point with kernel_ns <= 0, eager_window_ns <= 0,
/// eager_device_ns < 0, flops or bytes <= 0, or an invalid roof.
PointMetrics evaluate_point(const PointMeasurement& m, const Roof& roof, const RegimeRules& rules);

/// The crossover of one op and dtype: the first size, ascending, whose regime is not
/// overhead-bound (measured points only).
struct Crossover {
  std::string op;
  std::string dtype;
  std::optional<std::int64_t> size;                    ///< none: every measured size is overhead-bound
  std::optional<std::int64_t> largest_overhead_above;  ///< a larger size that is overhead-bound
                                                       ///< again (non-monotonic sweep), if any
  std::string regime_at_crossover;                     ///< regime of `size` ("" when none)
};

/// One Crossover per (op, dtype), in order of first appearance in `points`.
std::vector<Crossover> find_crossovers(const std::vector<PointMetrics>& points);

// ---------------------------------------------------------------------------------------------
// Datasheet figures and the calibration record.

/// Vendor figures for reference beside the measured ceilings (never used for the regime).
struct DatasheetFigures {
  bool known = false;
  std::string source;                    ///< document the figures come from
  double bandwidth_gbps = 0;             ///< HBM bandwidth, GB/s
  std::map<std::string, double> tflops;  ///< dense (no sparsity) peak per dtype
};

/// Datasheet figures by exact device name ("NVIDIA H200", "NVIDIA H100 80GB HBM3",
/// "NVIDIA H100 PCIe"); known = false for any other name.
DatasheetFigures datasheet_for(const std::string& gpu_name);

/// One NVML clock reading, MHz; -1 where unavailable.
struct ClockReading {
  std::string when;  ///< e.g. "idle, before calibration", "during bf16 GEMM 8192"
  int sm_mhz = -1;
  int mem_mhz = -1;
  int temperature_c = -1;
};

/// Copy ceiling measurement: cudaMemcpyAsync device to device, back to back.
struct CopyCeiling {
  std::uint64_t buffer_bytes = 0;  ///< bytes copied per call
  std::uint64_t moved_bytes = 0;   ///< bytes read + written per call = 2 x buffer_bytes
  int calls = 0;
  double median_ns = 0;  ///< cudaEvent time per call
  double min_ns = 0;
  double gbps = 0;  ///< moved_bytes / median_ns: the ceiling
};

/// GEMM ceiling measurement of one dtype and size: the matmul workload (cuBLASLt, random data).
struct GemmCeiling {
  std::string dtype;
  std::int64_t n = 0;  ///< n x n x n
  int calls = 0;
  double median_ns = 0;
  double min_ns = 0;
  double tflops = 0;  ///< 2 n^3 / median_ns / 1e3
};

/// What `bench calibrate` measured, and on what (ceilings.json, docs/metrics.md).
struct Calibration {
  std::string created_utc;
  std::string gpu_name;
  std::string pci_bus_id;
  int device_index = 0;
  int compute_major = 0;
  int compute_minor = 0;
  int sm_count = 0;
  std::uint64_t total_global_mem = 0;
  std::string driver_version;  ///< NVML's text, e.g. "580.159.04"; "" without NVML
  int cuda_driver_version = 0;
  int cuda_runtime_version = 0;
  int cublas_version = 0;
  std::string clock_source;    ///< "nvml" or why clocks are unavailable
  int sm_clock_max_mhz = -1;   ///< NVML max clock (or cudaDevAttrClockRate when NVML is absent)
  int mem_clock_max_mhz = -1;  ///< NVML max clock (or cudaDevAttrMemoryClockRate)
  int memory_bus_width_bits = -1;
  std::vector<ClockReading> clocks;  ///< idle and under load
  CopyCeiling copy;
  std::vector<GemmCeiling> gemm;
  std::string notes;  ///< free text (e.g. "synthetic")

  /// The measured bandwidth ceiling (copy.gbps). Throws std::invalid_argument when not > 0.
  double bandwidth_gbps() const;
  /// The GEMM ceiling of `dtype`: the largest median-based TFLOP/s over the measured sizes.
  /// Throws std::invalid_argument when `dtype` was not measured.
  double gemm_tflops(const std::string& dtype) const;
  /// {gemm_tflops(dtype), bandwidth_gbps()}.
  Roof roof(const std::string& dtype) const;
  /// Bandwidth from the memory clock and bus width: 2 x mem_clock_max x bus width / 8 (double
  /// data rate), GB/s; 0 when either is unknown.
  double clock_bandwidth_gbps() const;
};

/// ceilings.json (docs/metrics.md). Throws std::invalid_argument for non-finite numbers.
void write_calibration_json(const Calibration& c, std::ostream& out);
/// calibration.md: measured ceilings beside the datasheet figures, clocks, driver.
void write_calibration_markdown(const Calibration& c, std::ostream& out);
/// Parses ceilings.json text; throws InputError (profiler/session_io.h) naming what is wrong.
Calibration parse_calibration_json(const std::string& text);
/// Reads and parses a file; throws InputError naming the file.
Calibration read_calibration(const std::filesystem::path& path);

}  // namespace xb
