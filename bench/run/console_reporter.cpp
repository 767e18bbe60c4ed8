// bench's console table (see console_reporter.h).
#include "bench/run/console_reporter.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <ostream>
#include <type_traits>

#include "bench/core/fixtures.h"

namespace xb {
namespace {

/// Google Benchmark 1.8.0 renamed Run::error_occurred / error_message to skipped / skip_message
/// (an enum: 0 = not skipped); both spellings, chosen at compile time.
template <class R, class = void>
struct HasSkipped : std::false_type {};
template <class R>
struct HasSkipped<R, std::void_t<decltype(std::declval<const R&>().skip_message)>> : std::true_type {};

template <class R>
bool failed(const R& run, std::string& why) {
  if constexpr (HasSkipped<R>::value) {
    if (static_cast<int>(run.skipped) == 0) return false;
    why = run.skip_message;
  } else {
    if (!run.error_occurred) return false;
    why = run.error_message;
  }
  return true;
}

const benchmark::Counter* counter(const benchmark::BenchmarkReporter::Run& run, const char* name) {
  const auto it = run.counters.find(name);
  return it == run.counters.end() ? nullptr : &it->second;
}

}  // namespace

std::string plain_number(double value) {
  if (!std::isfinite(value)) return fmt::format("{}", value);
  const double a = std::fabs(value);
  if (a != 0 && (a >= 1e6 || a < 1e-4)) return fmt::format("{:.4g}", value);
  // Fixed notation with 4 significant digits (at least 0 decimals): 3888, 2.091, 0.002091.
  const int digits = a == 0 ? 0 : std::max(0, 3 - static_cast<int>(std::floor(std::log10(a))));
  return fmt::format("{:.{}f}", value, digits);
}

bool ConsoleReporter::ReportContext(const Context& context) {
  name_width_ = std::max<std::size_t>(context.name_field_width, 10);
  printed_header_ = false;
  std::ostream& out = GetErrorStream();  // where Google Benchmark prints its context
  const std::time_t now = std::time(nullptr);
  char date[64] = "";
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S%z", std::localtime(&now));
  out << date << "\n";
  if (Context::executable_name != nullptr) out << "Running " << Context::executable_name << "\n";
  for (const auto& [key, value] : gpu_context_) out << key << ": " << value << "\n";
  // The host below the GPU: it runs the launches and the harness, not the timed work. Its caches
  // are left out (Google Benchmark's JSON output still has them).
  const benchmark::CPUInfo& cpu = context.cpu_info;
  out << fmt::format("host: {} CPU{} at {:.0f} MHz", cpu.num_cpus, cpu.num_cpus > 1 ? "s" : "",
                     cpu.cycles_per_second / 1e6);
  if (!cpu.load_avg.empty()) {
    out << ", load average";
    for (std::size_t i = 0; i < cpu.load_avg.size(); ++i)
      out << (i == 0 ? " " : ", ") << fmt::format("{:.2f}", cpu.load_avg[i]);
  }
  out << "\n";
  if (cpu.scaling == benchmark::CPUInfo::ENABLED) {
    out << "host: CPU frequency scaling is enabled: it affects the CPU column (host time), not the GPU times\n";
  }
  out.flush();
  return true;
}

void ConsoleReporter::ReportRuns(const std::vector<Run>& runs) {
  std::ostream& out = GetOutputStream();
  if (!printed_header_) {
    printed_header_ = true;
    const std::string header =
        fmt::format("{:<{}} {:>13} {:>13} {:>12}", "Benchmark", name_width_, "Time", "CPU", "Iterations");
    out << std::string(header.size() + 20, '-') << "\n"
        << header << " Counters\n"
        << std::string(header.size() + 20, '-') << "\n";
  }
  for (const Run& run : runs) {
    out << fmt::format("{:<{}} ", run.benchmark_name(), name_width_);
    std::string why;
    if (failed(run, why)) {
      out << "ERROR OCCURRED: '" << why << "'\n";
      continue;
    }
    const char* unit = benchmark::GetTimeUnitString(run.time_unit);
    const bool percent = run.run_type == Run::RT_Aggregate && run.aggregate_unit == benchmark::kPercentage;
    const benchmark::Counter* calls = counter(run, kCallsCounter);
    const benchmark::Counter* cpu = counter(run, kCpuPerCallCounter);
    // Time: Google Benchmark's manual time per iteration, which bench sets to the median per call.
    const double time = run.GetAdjustedRealTime();
    const std::string time_text =
        percent ? fmt::format("{:.2f} %", time * 100) : fmt::format("{} {}", plain_number(time), unit);
    std::string cpu_text, iterations_text;
    if (calls != nullptr && cpu != nullptr) {
      // The counter is us per call; the column is in the row's time unit (us for bench).
      const double us_to_unit = benchmark::GetTimeUnitMultiplier(run.time_unit) / 1e6;
      cpu_text = percent ? fmt::format("{:.2f} %", cpu->value * 100)
                         : fmt::format("{} {}", plain_number(cpu->value * us_to_unit), unit);
      iterations_text = fmt::format("{:.0f}", calls->value);
    } else {
      cpu_text = percent ? fmt::format("{:.2f} %", run.GetAdjustedCPUTime() * 100)
                         : fmt::format("{} {}", plain_number(run.GetAdjustedCPUTime()), unit);
      iterations_text = fmt::format("{}", run.iterations);
    }
    out << fmt::format("{:>13} {:>13} {:>12}", time_text, cpu_text, iterations_text);
    for (const auto& [name, c] : run.counters) {
      if (name == kCallsCounter || name == kCpuPerCallCounter) continue;
      out << " " << name << "=" << plain_number(c.value);
    }
    if (!run.report_label.empty()) out << " " << run.report_label;
    out << "\n";
  }
  out.flush();
}

}  // namespace xb
