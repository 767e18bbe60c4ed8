// The roofline's ceilings and arithmetic, and the calibration record: what `bench calibrate` measured on a GPU (copy
// bandwidth and GEMM ceilings, clocks, driver; ceilings.json) beside the vendor's datasheet figures. Shared by the
// commands that judge against ceilings (sweep, qualify) and the one that measures them
// (calibrate). Plain C++ (no CUDA): CPU-tested in tests/cpu/test_roofline.cpp and fuzzed
// (tests/fuzz/fuzz_ceilings.cpp). Formulas and the file format: docs/metrics.md ("Ceilings").
//
// Units: times in ns; rates in 10^12 FLOP/s (TFLOP/s) and 10^9 B/s (GB/s); clocks in MHz.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
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
/// Parses ceilings.json text; throws InputError (common/errors.h) naming what is wrong.
Calibration parse_calibration_json(const std::string& text);
/// Reads and parses a file; throws InputError naming the file.
Calibration read_calibration(const std::filesystem::path& path);

/// What a calibration measures (bench calibrate's options, parsed in bench/calibrate/calibrate_args.h;
/// bench sweep's defaults when it is given no --ceilings).
struct CalibrateOptions {
  std::vector<std::string> dtypes{"bf16", "fp16", "fp32"};
  std::vector<std::int64_t> gemm_sizes{4096, 8192};  ///< GEMM ceiling = best median over these
  std::int64_t copy_mib = 1024;                      ///< bytes copied per call, MiB (read + written: twice that)
  int calls = 20;          ///< minimum samples per measurement (the sampling core's stopping rule)
  double warmup_ms = 200;  ///< back-to-back warm-up before the copy measurement
  /// GEMM ceilings are measured as the sweep measures its points: after `cooldown_ms` of idle
  /// GPU and `gemm_warmup_ms` of warm-up. Under sustained back-to-back GEMMs the H200's power
  /// limit lowers its SM clock (1545 MHz seen after 200 ms at 8192, against 1980 MHz boost) and
  /// the rate by ~15%, which would put short-burst points above the "ceiling".
  double cooldown_ms = 500;
  double gemm_warmup_ms = 20;
  std::filesystem::path out;  ///< folder for ceilings.json and calibration.md
};

/// Measures on the current device (docs/metrics.md, "Ceilings"). Every timing goes through the
/// sampling core in hot mode (bench/core/measure.h, with no profiler recording:
/// measure_unrecorded in bench/core/fixtures.h): a sample is a batch of back-to-back calls queued
/// behind the blocking kernel (batch sized for about 0.5 ms of GPU time), per-call time =
/// interval / calls; at least opt.calls samples, then until their RSD is at most 0.5% or 1 s of
/// sampling has passed. A ceiling is the per-call median.
///  - copy: opt.copy_mib MiB copied device to device with cudaMemcpyAsync from random data
///    (measure_copy, the measurement of bench's cold-mode bound) after opt.warmup_ms of
///    back-to-back warm-up; ceiling = 2 x bytes / median per-call time (read + written).
///  - GEMM: for each dtype and size, the matmul workload (cuBLASLt, uniform random inputs in
///    [-1, 1), the same code path as the sweep's matmul points), sampled after an idle cool-down
///    of opt.cooldown_ms and opt.gemm_warmup_ms of warm-up (the conditions of a sweep point: a
///    burst ceiling, not the power-capped sustained rate); a dtype's ceiling is the best median
///    TFLOP/s over the sizes.
///  - NVML clocks (SM, memory, temperature) idle before, right after each measurement's last
///    sample (the clocks it ran at), and at the end.
/// Prints one line per measurement to `log` (with the samples taken, and a note when the noise
/// target was missed or NVML saw a clock slowdown). Throws CudaError/CublasError on CUDA
/// failures, std::runtime_error when the blocking kernel timed out, and UsageError when a buffer
/// does not fit in device memory.
Calibration run_calibration(const CalibrateOptions& opt, std::ostream& log);

}  // namespace xb
