// format_us / us_to_ns, enum names, atomic file output.
#include <gtest/gtest.h>

#include <unistd.h>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "common/atomic_file.h"
#include "common/units.h"
#include "profiler/model/event_model.h"
#include "profiler/model/raw_records.h"

namespace xb {
namespace {

TEST(ModelUnits, FormatUsEdgeCases) {
  EXPECT_EQ(format_us(0), "0.000");
  EXPECT_EQ(format_us(1), "0.001");
  EXPECT_EQ(format_us(999), "0.999");
  EXPECT_EQ(format_us(1000), "1.000");
  EXPECT_EQ(format_us(1234567), "1234.567");
  EXPECT_EQ(format_us(-5), "-0.005");
  EXPECT_EQ(format_us(-1000), "-1.000");
  EXPECT_EQ(format_us(-1234567), "-1234.567");
  EXPECT_EQ(format_us(std::numeric_limits<std::int64_t>::max()), "9223372036854775.807");
  EXPECT_EQ(format_us(std::numeric_limits<std::int64_t>::min()), "-9223372036854775.808");
}

TEST(ModelUnits, UsToNsRoundTripsFormattedText) {
  const std::int64_t samples[] = {
      0, 1, -1, -5, 999, 1001, 15935, 123456789, -123456789, 5080739996078230LL, 8'000'000'000'000'000LL / 1000};
  for (std::int64_t ns : samples) {
    EXPECT_EQ(us_to_ns(std::stod(format_us(ns))), ns) << ns;
  }
  // Every ns in a window that straddles zero, and a run near a large CUPTI-like timestamp.
  for (std::int64_t ns = -3000; ns <= 3000; ++ns) ASSERT_EQ(us_to_ns(std::stod(format_us(ns))), ns);
  for (std::int64_t ns = 1'790'857'026'000'000LL; ns < 1'790'857'026'002'000LL; ++ns) {
    ASSERT_EQ(us_to_ns(std::stod(format_us(ns))), ns);
  }
  EXPECT_THROW(us_to_ns(std::nan("")), std::invalid_argument);
  EXPECT_THROW(us_to_ns(std::numeric_limits<double>::infinity()), std::invalid_argument);
  EXPECT_THROW(us_to_ns(1e300), std::invalid_argument);
}

TEST(ModelUnits, EnumNamesRoundTrip) {
  for (RawKind k : {RawKind::Kernel, RawKind::Memcpy, RawKind::Memset, RawKind::Runtime, RawKind::Driver,
                    RawKind::Synchronization, RawKind::ExternalCorrelation}) {
    EXPECT_EQ(raw_kind_from_string(to_string(k)), k);
  }
  EXPECT_STREQ(to_string(RawKind::ExternalCorrelation), "external_correlation");
  EXPECT_THROW(raw_kind_from_string("Kernel"), std::invalid_argument);
  EXPECT_EQ(range_category_from_string("user_annotation"), RangeCategory::UserAnnotation);
  EXPECT_EQ(range_category_from_string("cpu_op"), RangeCategory::CpuOp);
  EXPECT_STREQ(to_string(RangeCategory::CpuOp), "cpu_op");
  EXPECT_THROW(range_category_from_string("gpu_user_annotation"), std::invalid_argument);
}

TEST(ModelUnits, NamesOfDeviceWork) {
  EXPECT_EQ(demangle("_Z6kernelPf"), "kernel(float*)");
  EXPECT_EQ(demangle("nvjet_sm90_tst"), "nvjet_sm90_tst");
  EXPECT_EQ(demangle("_Znot_really_mangled$"), "_Znot_really_mangled$");
  EXPECT_EQ(memcpy_name(8), "Memcpy DtoD (Device -> Device)");
  EXPECT_EQ(memcpy_name(1), "Memcpy HtoD (Host -> Device)");
  EXPECT_EQ(memcpy_name(2), "Memcpy DtoH (Device -> Host)");
  EXPECT_EQ(sync_name(3), "Stream Synchronize");
  EXPECT_EQ(sync_name(1), "Event Synchronize");
  EXPECT_EQ(sync_name(4), "Context Synchronize");
  EXPECT_STREQ(trace_category(DeviceActivityKind::Memset), "gpu_memset");
}

class ModelAtomicFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("xb_model_atomic_" + std::to_string(::getpid()) + "_" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  static std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  std::size_t file_count() const {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir_)) ++n;
    return n;
  }
  std::filesystem::path dir_;
};

TEST_F(ModelAtomicFile, WritesAndReplaces) {
  const auto path = dir_ / "out.json";
  write_file_atomic(path, [](std::ostream& o) { o << "old"; });
  EXPECT_EQ(slurp(path), "old");
  write_file_atomic(path, [](std::ostream& o) { o << "new content"; });
  EXPECT_EQ(slurp(path), "new content");
  EXPECT_EQ(file_count(), 1u);
}

TEST_F(ModelAtomicFile, ThrowingWriterLeavesOldFileAndNoTemp) {
  const auto path = dir_ / "out.json";
  write_file_atomic(path, [](std::ostream& o) { o << "old"; });
  EXPECT_THROW(write_file_atomic(path,
                                 [](std::ostream& o) {
                                   o << "half of the new fi";
                                   throw std::logic_error("writer failed");
                                 }),
               std::logic_error);
  EXPECT_EQ(slurp(path), "old");
  EXPECT_EQ(file_count(), 1u);
}

TEST_F(ModelAtomicFile, MissingFolderNamesPath) {
  const auto path = dir_ / "no_such_dir" / "out.json";
  try {
    write_file_atomic(path, [](std::ostream& o) { o << "x"; });
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
  EXPECT_EQ(file_count(), 0u);
}

TEST_F(ModelAtomicFile, FailedStreamIsReported) {
  const auto path = dir_ / "out.json";
  EXPECT_THROW(write_file_atomic(path, [](std::ostream& o) { o.setstate(std::ios::badbit); }), std::runtime_error);
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_EQ(file_count(), 0u);
}

}  // namespace
}  // namespace xb
