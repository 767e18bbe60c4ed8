// build_table arithmetic on hand-computed numbers, median_of, text and JSON layout.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "profiler/exporters/table.h"
#include "test_model_session.h"

namespace xb {
namespace {

using namespace xb::testing;

const TableRow& row(const Table& t, const char* name, const char* kind) {
  for (const TableRow& r : t.rows) {
    if (r.name == name && r.kind == kind) return r;
  }
  throw std::runtime_error(std::string("no row ") + name + " / " + kind);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(ModelTable, MedianOf) {
  EXPECT_EQ(median_of({}), 0.0);
  EXPECT_EQ(median_of({7}), 7.0);
  EXPECT_EQ(median_of({5, 1, 3}), 3.0);
  EXPECT_EQ(median_of({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(median_of({10, 1}), 5.5);
  EXPECT_EQ(median_of({9'000'000'000'000'000'000LL, 9'000'000'000'000'000'001LL}), 9.0000000000000000005e18);
}

TEST(ModelTable, HandComputedRows) {
  const RawSession raw = sample_session();
  const Table t = build_table(build_session(raw));
  ASSERT_EQ(t.rows.size(), 13u);
  EXPECT_EQ(t.self_cpu_total_ns, 100000);
  EXPECT_EQ(t.self_cuda_total_ns, 21700);

  const TableRow& step = row(t, "ProfilerStep*", "user_annotation");
  EXPECT_EQ(step.calls, 1);
  EXPECT_EQ(step.cpu_total_ns, 100000);
  EXPECT_EQ(step.self_cpu_ns, 7000);  // 100000 - addmm 88000 - sync 4000 - launch 1000
  EXPECT_EQ(step.self_cuda_ns, 500);  // kernel(float*) launched directly in the step
  EXPECT_EQ(step.cuda_total_ns, 21700);
  EXPECT_DOUBLE_EQ(step.cpu_total_pct, 100.0);
  EXPECT_DOUBLE_EQ(step.self_cpu_pct, 7.0);

  const TableRow& addmm = row(t, "addmm", "user_annotation");
  EXPECT_EQ(addmm.self_cpu_ns, 31000);
  EXPECT_EQ(addmm.cpu_total_ns, 88000);
  EXPECT_EQ(addmm.self_cuda_ns, 0);
  EXPECT_EQ(addmm.cuda_total_ns, 21200);
  EXPECT_DOUBLE_EQ(addmm.cpu_total_pct, 88.0);

  const TableRow& op = row(t, "xb::addmm", "cpu_op");
  EXPECT_EQ(op.self_cpu_ns, 39000);  // 57000 - four API calls (5000 + 2000 + 7000 + 4000)
  EXPECT_EQ(op.cpu_total_ns, 57000);
  EXPECT_EQ(op.self_cuda_ns, 21200);
  EXPECT_EQ(op.cuda_total_ns, 21200);
  EXPECT_EQ(op.median_ns, 57000.0);
  EXPECT_EQ(op.min_ns, 57000);
  EXPECT_EQ(op.max_ns, 57000);

  const TableRow& nvjet = row(t, kNvjet, "kernel");
  EXPECT_EQ(nvjet.self_cuda_ns, 18000);
  EXPECT_EQ(nvjet.cuda_total_ns, 18000);
  EXPECT_EQ(nvjet.self_cpu_ns, 0);
  EXPECT_EQ(nvjet.cpu_total_ns, 0);
  EXPECT_DOUBLE_EQ(nvjet.self_cuda_pct, 100.0 * 18000 / 21700);
  EXPECT_EQ(row(t, "Memcpy DtoD (Device -> Device)", "gpu_memcpy").cuda_total_ns, 1000);
  EXPECT_EQ(row(t, "Memset (Device)", "gpu_memset").cuda_total_ns, 200);

  const TableRow& launch = row(t, "cudaLaunchKernel", "cuda_runtime");
  EXPECT_EQ(launch.calls, 2);
  EXPECT_EQ(launch.self_cpu_ns, 5000);
  EXPECT_EQ(launch.cpu_total_ns, 5000);
  EXPECT_EQ(launch.self_cuda_ns, 0);
  EXPECT_EQ(launch.cuda_total_ns, 0);
  EXPECT_EQ(launch.median_ns, 2500.0);
  EXPECT_EQ(launch.min_ns, 1000);
  EXPECT_EQ(launch.max_ns, 4000);
  EXPECT_DOUBLE_EQ(launch.cpu_time_avg_ns(), 2500.0);
  EXPECT_EQ(row(t, "cuLaunchKernelEx", "cuda_driver").self_cpu_ns, 7000);

  // Sort order: CUDA total descending, then name.
  const std::vector<std::string> expected_order = {"ProfilerStep*",
                                                   "addmm",
                                                   "xb::addmm",
                                                   kNvjet,
                                                   kAddDemangled,
                                                   "Memcpy DtoD (Device -> Device)",
                                                   "kernel(float*)",
                                                   "Memset (Device)",
                                                   "cuLaunchKernelEx",
                                                   "cudaLaunchKernel",
                                                   "cudaMemcpyAsync",
                                                   "cudaMemsetAsync",
                                                   "cudaStreamSynchronize"};
  for (std::size_t i = 0; i < expected_order.size(); ++i) EXPECT_EQ(t.rows[i].name, expected_order[i]) << i;
}

TEST(ModelTable, PercentagesSumTo100) {
  const Table t = build_table(build_session(sample_session()));
  double self_cpu = 0, device_cuda = 0, range_cuda = 0;
  for (const TableRow& r : t.rows) {
    EXPECT_LE(r.self_cpu_pct, 100.0);
    EXPECT_LE(r.cpu_total_pct, 100.0);
    EXPECT_LE(r.self_cuda_pct, 100.0);
    if (r.is_device()) {
      device_cuda += r.self_cuda_pct;
      EXPECT_EQ(r.self_cpu_pct, 0.0);
    } else {
      self_cpu += r.self_cpu_pct;
    }
    if (r.kind == "user_annotation" || r.kind == "cpu_op") range_cuda += r.self_cuda_pct;
    if (r.kind == "cuda_runtime" || r.kind == "cuda_driver") {
      EXPECT_EQ(r.self_cuda_pct, 0.0);
    }
  }
  EXPECT_NEAR(self_cpu, 100.0, 1e-9);
  EXPECT_NEAR(device_cuda, 100.0, 1e-9);
  EXPECT_NEAR(range_cuda, 100.0, 1e-9);
}

TEST(ModelTable, AggregatesRangesByName) {
  RawSession raw = sample_session();
  // A second step, offset by 200000 ns, with the same structure and one longer cpu_op.
  const std::size_t n = raw.ranges.size();
  for (std::size_t i = 0; i < n; ++i) {
    HostRange r = raw.ranges[i];
    r.id += 100;
    if (r.parent_id != 0) r.parent_id += 100;
    r.name = r.name == "ProfilerStep#3" ? "ProfilerStep#4" : r.name;
    r.start_ns += 200000;
    r.end_ns += 200000 + (r.id == 103 ? 1000 : 0);
    raw.ranges.push_back(r);
  }
  const Table t = build_table(build_session(raw));
  const TableRow& op = row(t, "xb::addmm", "cpu_op");
  EXPECT_EQ(op.calls, 2);
  EXPECT_EQ(op.cpu_total_ns, 57000 + 58000);
  EXPECT_EQ(op.self_cpu_ns, 39000 + 58000);  // the second one made no API calls
  EXPECT_EQ(op.median_ns, 57500.0);
  EXPECT_EQ(op.min_ns, 57000);
  EXPECT_EQ(op.max_ns, 58000);
  // Every ProfilerStep#N shares one row, as in PyTorch's key_averages().
  EXPECT_EQ(row(t, "ProfilerStep*", "user_annotation").calls, 2);
}

TEST(ModelTable, TextLayout) {
  Table t = build_table(build_session(sample_session()));
  TableRow long_row;
  long_row.name = std::string(150, 'k');
  long_row.kind = "kernel";
  long_row.calls = 1;
  t.rows.push_back(long_row);
  std::ostringstream out;
  write_table_text(t, out);
  const std::vector<std::string> lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), 3u + t.rows.size() + 4u);
  const std::size_t name_width = 59;  // 55-character cap + 4
  const std::string sep = std::string(name_width, '-') + "  " + [] {
    std::string s;
    for (int i = 0; i < 13; ++i) s += std::string(12, '-') + "  ";
    return s;
  }();
  EXPECT_EQ(lines[0], sep);
  EXPECT_EQ(lines[2], sep);
  EXPECT_EQ(lines[lines.size() - 4], sep);
  EXPECT_EQ(lines[1].substr(0, name_width + 2), std::string(name_width - 4, ' ') + "Name  ");
  EXPECT_NE(lines[1].find("    # of Calls        Median           Min           Max  "), std::string::npos);
  EXPECT_NE(lines[1].find("  CUDA time avg  "), std::string::npos);
  EXPECT_EQ(lines[lines.size() - 3], "Self CPU time total: 100.000us");
  EXPECT_EQ(lines[lines.size() - 2], "Self CUDA time total: 21.700us");
  // The columns PyTorch's table lacks say what they measure.
  EXPECT_EQ(lines[lines.size() - 1].rfind("Median, Min, Max: one call's own duration: host time on CPU rows", 0), 0u);
  // The step row: right-aligned name, then the numbers.
  const std::string& step = lines[3];
  EXPECT_EQ(step.substr(0, name_width), std::string(name_width - 13, ' ') + "ProfilerStep*");
  EXPECT_NE(step.find("         7.00%       7.000us       100.00%     100.000us     100.000us"), std::string::npos)
      << step;
  const std::string& launch = lines[3 + 9];
  EXPECT_NE(launch.find("             2       2.500us       1.000us       4.000us  "), std::string::npos) << launch;
  // The 150-character name is cut to 52 + "..." in the text.
  const std::string& long_line = lines[3 + t.rows.size() - 1];
  EXPECT_EQ(long_line.substr(0, name_width), "    " + std::string(52, 'k') + "...");
  for (std::size_t i = 0; i + 3 < lines.size(); ++i) {  // every line but the three under the table
    EXPECT_EQ(lines[i].substr(lines[i].size() - 2), "  ") << i;
  }
}

TEST(ModelTable, NameColumnFitsShortNames) {
  RawSession raw = sample_session();
  for (RawRecord& r : raw.records) {
    if (r.kind == RawKind::Kernel) r.name = "k" + std::to_string(r.correlation_id);
  }
  const Table t = build_table(build_session(raw));
  std::ostringstream out;
  write_table_text(t, out);
  // Every name is under the 55-character cap: the column is the longest name + 4.
  std::size_t longest = 0;
  for (const TableRow& row : t.rows) longest = std::max(longest, row.name.size());
  ASSERT_LT(longest, 55u);
  const std::size_t width = longest + 4;
  EXPECT_EQ(lines_of(out.str())[0].substr(0, width + 2), std::string(width, '-') + "  ");
}

TEST(ModelTable, JsonMatchesTable) {
  const RawSession raw = sample_session();
  const Table t = build_table(build_session(raw));
  std::ostringstream out;
  write_table_json(t, raw.meta, out);
  const nlohmann::json j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j.at("crossbench").at("format"), "table");
  EXPECT_EQ(j.at("crossbench").at("version"), 1);
  EXPECT_EQ(j.at("crossbench").at("schedule").at("active"), 1);
  EXPECT_EQ(j.at("self_cpu_total_ns"), 100000);
  EXPECT_EQ(j.at("self_cuda_total_ns"), 21700);
  ASSERT_EQ(j.at("rows").size(), t.rows.size());
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const nlohmann::json& r = j["rows"][i];
    EXPECT_EQ(r.at("name"), t.rows[i].name);
    EXPECT_EQ(r.at("kind"), t.rows[i].kind);
    EXPECT_EQ(r.at("calls"), t.rows[i].calls);
    EXPECT_EQ(r.at("self_cpu_ns"), t.rows[i].self_cpu_ns);
    EXPECT_EQ(r.at("cuda_total_ns"), t.rows[i].cuda_total_ns);
    EXPECT_EQ(r.at("median_ns").get<double>(), t.rows[i].median_ns);
    for (const char* key : {"cpu_total_ns", "self_cuda_ns", "self_cpu_pct", "cpu_total_pct", "self_cuda_pct",
                            "cpu_time_avg_ns", "cuda_time_avg_ns", "min_ns", "max_ns"}) {
      EXPECT_TRUE(r.contains(key)) << key;
    }
  }
}

TEST(ModelTable, JsonSurvivesInvalidUtf8Names) {
  RawSession raw = sample_session();
  raw.ranges[2].name = "bad \xFF name";
  const Table t = build_table(build_session(raw));
  std::ostringstream out;
  write_table_json(t, raw.meta, out);
  const nlohmann::json j = nlohmann::json::parse(out.str());
  bool found = false;
  for (const nlohmann::json& r : j.at("rows")) found |= r.at("name") == "bad \xEF\xBF\xBD name";
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace xb
