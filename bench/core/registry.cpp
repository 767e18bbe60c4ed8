// The process-wide benchmark registry behind bench/core/api.h (register_benchmark, XB_BENCHMARK).
#include <stdexcept>
#include <utility>

#include "bench/core/api.h"

namespace xb {
namespace {

/// Function-local so that registrations from static initializers in any translation unit find
/// it constructed (Google Benchmark's registry is built the same way).
std::vector<BenchmarkDef>& registry() {
  static std::vector<BenchmarkDef> benchmarks;
  return benchmarks;
}

}  // namespace

Registration register_benchmark(const std::string& name, Factory make) {
  if (name.empty()) throw std::invalid_argument("register_benchmark: empty name");
  if (name.find_first_of("/, ") != std::string::npos) {
    throw std::invalid_argument("register_benchmark: name '" + name + "' has a '/', ',' or space");
  }
  if (!make) throw std::invalid_argument("register_benchmark: " + name + " has no factory");
  if (find_benchmark(name) != nullptr)
    throw std::invalid_argument("register_benchmark: " + name + " is registered twice");
  BenchmarkDef def;
  def.name = name;
  def.make = std::move(make);
  registry().push_back(std::move(def));
  return Registration(registry().size() - 1);
}

const std::vector<BenchmarkDef>& registered_benchmarks() { return registry(); }

const BenchmarkDef* find_benchmark(const std::string& name) {
  for (const BenchmarkDef& b : registry()) {
    if (b.name == name) return &b;
  }
  return nullptr;
}

Registration& Registration::dtypes(std::vector<std::string> names) {
  if (names.empty()) throw std::invalid_argument("register_benchmark: " + def().name + ": empty dtype list");
  registry().at(index_).dtypes = std::move(names);
  return *this;
}
Registration& Registration::sizes(std::vector<std::int64_t> sizes) {
  for (std::int64_t n : sizes) {
    if (n < 1) throw std::invalid_argument("register_benchmark: " + def().name + ": sizes must be at least 1");
  }
  registry().at(index_).sizes = std::move(sizes);
  return *this;
}
Registration& Registration::flops(PointFigure f) {
  registry().at(index_).flops = std::move(f);
  return *this;
}
Registration& Registration::bytes(PointFigure f) {
  registry().at(index_).bytes = std::move(f);
  return *this;
}
Registration& Registration::device_bytes(PointFigure f) {
  registry().at(index_).device_bytes = std::move(f);
  return *this;
}
Registration& Registration::max_size(std::int64_t n) {
  if (n < 1) throw std::invalid_argument("register_benchmark: " + def().name + ": max_size must be at least 1");
  registry().at(index_).max_size = n;
  return *this;
}
Registration& Registration::rotation(int n) {
  if (n < 0) throw std::invalid_argument("register_benchmark: " + def().name + ": rotation must be at least 0");
  registry().at(index_).rotation = n;
  return *this;
}
Registration& Registration::sync(bool on) {
  registry().at(index_).sync = on;
  return *this;
}
const BenchmarkDef& Registration::def() const { return registry().at(index_); }

}  // namespace xb
