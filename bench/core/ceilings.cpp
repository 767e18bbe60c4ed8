#include "bench/core/ceilings.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "common/strict_json.h"
#include "common/text_file.h"

namespace xb {
namespace {

using json = nlohmann::json;

void require_finite(double v, const char* what) {
  if (!std::isfinite(v)) throw std::invalid_argument(std::string(what) + " is not finite");
}

void require_roof(const Roof& roof) {
  require_finite(roof.peak_tflops, "roof peak_tflops");
  require_finite(roof.bandwidth_gbps, "roof bandwidth_gbps");
  if (roof.peak_tflops <= 0 || roof.bandwidth_gbps <= 0) {
    throw std::invalid_argument(fmt::format("roof needs peak_tflops > 0 and bandwidth_gbps > 0 (got {}, {})",
                                            roof.peak_tflops, roof.bandwidth_gbps));
  }
}

}  // namespace

double Roof::ridge_intensity() const {
  require_roof(*this);
  return peak_tflops * 1e3 / bandwidth_gbps;
}

double compute_time_ns(double flops, const Roof& roof) {
  require_roof(roof);
  require_finite(flops, "flops");
  if (flops < 0) throw std::invalid_argument("flops must be >= 0");
  // flops / (peak_tflops * 1e12 FLOP/s) s = flops / (peak_tflops * 1e3) ns.
  return flops / (roof.peak_tflops * 1e3);
}

double memory_time_ns(double bytes, const Roof& roof) {
  require_roof(roof);
  require_finite(bytes, "bytes");
  if (bytes < 0) throw std::invalid_argument("bytes must be >= 0");
  // bytes / (bandwidth_gbps * 1e9 B/s) s = bytes / bandwidth_gbps ns.
  return bytes / roof.bandwidth_gbps;
}

double roofline_bound_ns(double flops, double bytes, const Roof& roof) {
  return std::max(compute_time_ns(flops, roof), memory_time_ns(bytes, roof));
}

double attainable_tflops(double intensity, const Roof& roof) {
  require_roof(roof);
  require_finite(intensity, "intensity");
  if (intensity < 0) throw std::invalid_argument("intensity must be >= 0");
  // intensity FLOP/B x bandwidth_gbps 1e9 B/s = intensity * bandwidth_gbps / 1e3 TFLOP/s.
  return std::min(roof.peak_tflops, intensity * roof.bandwidth_gbps / 1e3);
}

DatasheetFigures datasheet_for(const std::string& gpu_name) {
  DatasheetFigures d;
  // Dense figures (the datasheets print bf16/fp16 Tensor Core rates "with sparsity"; dense is
  // half). fp32 is the non-tensor FP32 rate: crossbench's fp32 GEMMs run without TF32.
  if (gpu_name == "NVIDIA H200") {
    d.known = true;
    d.source =
        "NVIDIA H200 Tensor Core GPU datasheet, H200 SXM: 4.8 TB/s HBM3e; BF16/FP16 Tensor Core "
        "1,979 TFLOPS with sparsity (989 dense); FP32 67 TFLOPS";
    d.bandwidth_gbps = 4800;
    d.tflops = {{"bf16", 989}, {"fp16", 989}, {"fp32", 67}};
  } else if (gpu_name == "NVIDIA H100 80GB HBM3") {
    d.known = true;
    d.source =
        "NVIDIA H100 Tensor Core GPU datasheet, H100 SXM: 3.35 TB/s; BF16/FP16 Tensor Core "
        "1,979 TFLOPS with sparsity (989 dense); FP32 67 TFLOPS";
    d.bandwidth_gbps = 3350;
    d.tflops = {{"bf16", 989}, {"fp16", 989}, {"fp32", 67}};
  } else if (gpu_name == "NVIDIA H100 PCIe") {
    d.known = true;
    d.source =
        "NVIDIA H100 Tensor Core GPU datasheet, H100 PCIe: 2 TB/s; BF16/FP16 Tensor Core "
        "1,513 TFLOPS with sparsity (756 dense); FP32 51 TFLOPS";
    d.bandwidth_gbps = 2000;
    d.tflops = {{"bf16", 756}, {"fp16", 756}, {"fp32", 51}};
  }
  return d;
}

double Calibration::bandwidth_gbps() const {
  if (!(copy.gbps > 0) || !std::isfinite(copy.gbps)) {
    throw std::invalid_argument("calibration has no copy bandwidth");
  }
  return copy.gbps;
}

double Calibration::gemm_tflops(const std::string& dtype) const {
  double best = 0;
  for (const GemmCeiling& g : gemm) {
    if (g.dtype == dtype) best = std::max(best, g.tflops);
  }
  if (!(best > 0)) throw std::invalid_argument("calibration has no GEMM ceiling for dtype " + dtype);
  return best;
}

Roof Calibration::roof(const std::string& dtype) const { return Roof{gemm_tflops(dtype), bandwidth_gbps()}; }

double Calibration::clock_bandwidth_gbps() const {
  if (mem_clock_max_mhz <= 0 || memory_bus_width_bits <= 0) return 0;
  // MHz x 1e6 /s x 2 transfers x bits / 8 B, in GB/s: mhz * 2 * bits / 8 / 1e3.
  return static_cast<double>(mem_clock_max_mhz) * 2.0 * memory_bus_width_bits / 8.0 / 1e3;
}

namespace {

json number(double v, const std::string& what) {
  if (!std::isfinite(v)) throw std::invalid_argument(what + " is not finite");
  return v;
}

}  // namespace

void write_calibration_json(const Calibration& c, std::ostream& out) {
  json clocks = json::array();
  for (const ClockReading& r : c.clocks) {
    clocks.push_back(
        {{"when", r.when}, {"sm_mhz", r.sm_mhz}, {"mem_mhz", r.mem_mhz}, {"temperature_c", r.temperature_c}});
  }
  json gemm = json::array();
  for (const GemmCeiling& g : c.gemm) {
    gemm.push_back({{"dtype", g.dtype},
                    {"n", g.n},
                    {"calls", g.calls},
                    {"median_ns", number(g.median_ns, "gemm median_ns")},
                    {"min_ns", number(g.min_ns, "gemm min_ns")},
                    {"tflops", number(g.tflops, "gemm tflops")}});
  }
  json ceilings = {{"bandwidth_gbps", number(c.copy.gbps, "copy gbps")}, {"gemm_tflops", json::object()}};
  for (const GemmCeiling& g : c.gemm) ceilings["gemm_tflops"][g.dtype] = c.gemm_tflops(g.dtype);
  const DatasheetFigures d = datasheet_for(c.gpu_name);
  json datasheet = nullptr;
  if (d.known) datasheet = {{"source", d.source}, {"bandwidth_gbps", d.bandwidth_gbps}, {"tflops", d.tflops}};
  json doc = {{"crossbench", {{"format", "ceilings"}, {"version", 1}, {"created_utc", c.created_utc}}},
              {"device",
               {{"name", c.gpu_name},
                {"index", c.device_index},
                {"pci_bus_id", c.pci_bus_id},
                {"compute_capability", fmt::format("{}.{}", c.compute_major, c.compute_minor)},
                {"sm_count", c.sm_count},
                {"total_global_mem", c.total_global_mem},
                {"driver_version", c.driver_version},
                {"cuda_driver_version", c.cuda_driver_version},
                {"cuda_runtime_version", c.cuda_runtime_version},
                {"cublas_version", c.cublas_version},
                {"memory_bus_width_bits", c.memory_bus_width_bits}}},
              {"clocks",
               {{"source", c.clock_source},
                {"sm_max_mhz", c.sm_clock_max_mhz},
                {"mem_max_mhz", c.mem_clock_max_mhz},
                {"readings", clocks}}},
              {"ceilings", ceilings},
              {"copy",
               {{"method",
                 "cudaMemcpyAsync device to device, sampled by the sampling core in hot mode (batched calls behind the "
                 "blocking kernel), median per-call time"},
                {"buffer_bytes", c.copy.buffer_bytes},
                {"moved_bytes", c.copy.moved_bytes},
                {"calls", c.copy.calls},
                {"median_ns", number(c.copy.median_ns, "copy median_ns")},
                {"min_ns", number(c.copy.min_ns, "copy min_ns")},
                {"gbps", number(c.copy.gbps, "copy gbps")}}},
              {"gemm", gemm},
              {"datasheet", datasheet},
              {"clock_bandwidth_gbps", number(c.clock_bandwidth_gbps(), "clock bandwidth")},
              {"notes", c.notes}};
  out << doc.dump(1) << '\n';
}

void write_calibration_markdown(const Calibration& c, std::ostream& out) {
  const DatasheetFigures d = datasheet_for(c.gpu_name);
  out << "# crossbench calibration\n\n";
  if (!c.notes.empty()) out << "**" << c.notes << "**\n\n";
  out << fmt::format("- GPU: {} (device {}, PCI {}, compute capability {}.{}, {} SMs)\n", c.gpu_name, c.device_index,
                     c.pci_bus_id, c.compute_major, c.compute_minor, c.sm_count);
  out << fmt::format("- driver {} (CUDA driver API {}), runtime {}, cuBLAS {}\n",
                     c.driver_version.empty() ? "unknown" : c.driver_version, c.cuda_driver_version,
                     c.cuda_runtime_version, c.cublas_version);
  out << fmt::format("- measured: {}\n", c.created_utc);
  out << fmt::format("- clocks ({}): SM max {} MHz, memory max {} MHz\n", c.clock_source, c.sm_clock_max_mhz,
                     c.mem_clock_max_mhz);
  for (const ClockReading& r : c.clocks) {
    out << fmt::format("  - {}: SM {} MHz, memory {} MHz, {} C\n", r.when, r.sm_mhz, r.mem_mhz, r.temperature_c);
  }
  out << "\n| ceiling | measured | datasheet | measured / datasheet |\n| --- | ---: | ---: | ---: |\n";
  const auto ratio = [](double a, double b) {
    return b > 0 ? fmt::format("{:.1f}%", 100.0 * a / b) : std::string("-");
  };
  out << fmt::format("| copy bandwidth, GB/s (read + written) | {:.0f} | {} | {} |\n", c.copy.gbps,
                     d.known ? fmt::format("{:.0f}", d.bandwidth_gbps) : "-", ratio(c.copy.gbps, d.bandwidth_gbps));
  std::vector<std::string> seen;
  for (const GemmCeiling& g : c.gemm) {
    if (std::find(seen.begin(), seen.end(), g.dtype) != seen.end()) continue;
    seen.push_back(g.dtype);
    const double best = c.gemm_tflops(g.dtype);
    const auto it = d.tflops.find(g.dtype);
    const double sheet = it == d.tflops.end() ? 0.0 : it->second;
    out << fmt::format("| {} GEMM, TFLOP/s (best size) | {:.1f} | {} | {} |\n", g.dtype, best,
                       sheet > 0 ? fmt::format("{:.0f}", sheet) : "-", ratio(best, sheet));
  }
  if (c.clock_bandwidth_gbps() > 0) {
    out << fmt::format("\nBandwidth from the memory clock and bus width (2 x {} MHz x {} bit / 8): {:.0f} GB/s.\n",
                       c.mem_clock_max_mhz, c.memory_bus_width_bits, c.clock_bandwidth_gbps());
  }
  if (d.known) out << "\nDatasheet: " << d.source << ".\n";
  out << fmt::format(
      "\nCopy: {} MiB copied per call ({} MiB read + written), {} calls, median {:.3f} us, best {:.3f} us.\n",
      c.copy.buffer_bytes >> 20, c.copy.moved_bytes >> 20, c.copy.calls, c.copy.median_ns / 1e3, c.copy.min_ns / 1e3);
  out << "\n| GEMM | n | calls | median (us) | best (us) | TFLOP/s (median) |\n| --- | ---: | ---: | ---: | ---: | "
         "---: |\n";
  for (const GemmCeiling& g : c.gemm) {
    out << fmt::format("| {} | {} | {} | {:.3f} | {:.3f} | {:.1f} |\n", g.dtype, g.n, g.calls, g.median_ns / 1e3,
                       g.min_ns / 1e3, g.tflops);
  }
}

namespace {

// ceilings.json's readers: common/strict_json.h's, with "ceilings: " in front of every path.
std::string in_ceilings(const std::string& where) { return "ceilings: " + where; }

const json& at(const json& j, const char* key, const std::string& where) {
  return strict_json::need(j, key, in_ceilings(where));
}

double get_number(const json& j, const char* key, const std::string& where) {
  return strict_json::need_number(j, key, in_ceilings(where));
}

std::int64_t get_int(const json& j, const char* key, const std::string& where) {
  return strict_json::need_int(j, key, in_ceilings(where), std::numeric_limits<std::int64_t>::min(),
                               std::numeric_limits<std::int64_t>::max());
}

std::string get_string(const json& j, const char* key, const std::string& where) {
  return strict_json::need_string(j, key, in_ceilings(where));
}

int get_small_int(const json& j, const char* key, const std::string& where) {
  return static_cast<int>(strict_json::need_int(j, key, in_ceilings(where), -1, 1000000000));
}

}  // namespace

Calibration parse_calibration_json(const std::string& text) {
  const json doc = strict_json::parse_json(text, "ceilings");
  const json& meta = at(doc, "crossbench", "top level");
  if (get_string(meta, "format", "crossbench") != "ceilings") {
    throw InputError("ceilings: crossbench.format is not \"ceilings\"");
  }
  if (get_int(meta, "version", "crossbench") != 1) throw InputError("ceilings: crossbench.version is not 1");
  Calibration c;
  c.created_utc = get_string(meta, "created_utc", "crossbench");
  const json& dev = at(doc, "device", "top level");
  c.gpu_name = get_string(dev, "name", "device");
  c.device_index = get_small_int(dev, "index", "device");
  c.pci_bus_id = get_string(dev, "pci_bus_id", "device");
  const std::string cc = get_string(dev, "compute_capability", "device");
  if (std::sscanf(cc.c_str(), "%d.%d", &c.compute_major, &c.compute_minor) != 2) {
    throw InputError("ceilings: device.compute_capability: not \"major.minor\"");
  }
  c.sm_count = get_small_int(dev, "sm_count", "device");
  const std::int64_t mem = get_int(dev, "total_global_mem", "device");
  if (mem < 0) throw InputError("ceilings: device.total_global_mem: negative");
  c.total_global_mem = static_cast<std::uint64_t>(mem);
  c.driver_version = get_string(dev, "driver_version", "device");
  c.cuda_driver_version = get_small_int(dev, "cuda_driver_version", "device");
  c.cuda_runtime_version = get_small_int(dev, "cuda_runtime_version", "device");
  c.cublas_version = get_small_int(dev, "cublas_version", "device");
  c.memory_bus_width_bits = get_small_int(dev, "memory_bus_width_bits", "device");
  const json& clocks = at(doc, "clocks", "top level");
  c.clock_source = get_string(clocks, "source", "clocks");
  c.sm_clock_max_mhz = get_small_int(clocks, "sm_max_mhz", "clocks");
  c.mem_clock_max_mhz = get_small_int(clocks, "mem_max_mhz", "clocks");
  const json& readings = strict_json::need_array(clocks, "readings", in_ceilings("clocks"));
  for (std::size_t i = 0; i < readings.size(); ++i) {
    const std::string where = fmt::format("clocks.readings[{}]", i);
    ClockReading r;
    r.when = get_string(readings[i], "when", where);
    r.sm_mhz = get_small_int(readings[i], "sm_mhz", where);
    r.mem_mhz = get_small_int(readings[i], "mem_mhz", where);
    r.temperature_c = get_small_int(readings[i], "temperature_c", where);
    c.clocks.push_back(std::move(r));
  }
  const json& copy = at(doc, "copy", "top level");
  const std::int64_t buffer = get_int(copy, "buffer_bytes", "copy");
  const std::int64_t moved = get_int(copy, "moved_bytes", "copy");
  if (buffer <= 0 || moved <= 0) throw InputError("ceilings: copy: buffer_bytes and moved_bytes must be > 0");
  c.copy.buffer_bytes = static_cast<std::uint64_t>(buffer);
  c.copy.moved_bytes = static_cast<std::uint64_t>(moved);
  c.copy.calls = get_small_int(copy, "calls", "copy");
  c.copy.median_ns = get_number(copy, "median_ns", "copy");
  c.copy.min_ns = get_number(copy, "min_ns", "copy");
  c.copy.gbps = get_number(copy, "gbps", "copy");
  if (!(c.copy.gbps > 0)) throw InputError("ceilings: copy.gbps: must be > 0");
  const json& gemm = strict_json::need_array(doc, "gemm", in_ceilings("top level"));
  for (std::size_t i = 0; i < gemm.size(); ++i) {
    const std::string where = fmt::format("gemm[{}]", i);
    GemmCeiling g;
    g.dtype = get_string(gemm[i], "dtype", where);
    g.n = get_int(gemm[i], "n", where);
    g.calls = get_small_int(gemm[i], "calls", where);
    g.median_ns = get_number(gemm[i], "median_ns", where);
    g.min_ns = get_number(gemm[i], "min_ns", where);
    g.tflops = get_number(gemm[i], "tflops", where);
    if (g.n < 1 || !(g.tflops > 0)) throw InputError("ceilings: " + where + ": n and tflops must be > 0");
    c.gemm.push_back(std::move(g));
  }
  if (doc.contains("notes") && doc["notes"].is_string()) c.notes = doc["notes"].get<std::string>();
  return c;
}

Calibration read_calibration(const std::filesystem::path& path) {
  return parse_text_file(path, parse_calibration_json);
}

}  // namespace xb
