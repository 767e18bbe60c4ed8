// Files not of one profile (validate/one_profile.h, issue 37 item 5): refused in one line, never
// findings. The generated mismatch corpus: every committed real (trace, table) pair must not
// contradict itself (no false alarm), and every table against every other export's traces
// (tests/data/torch-h200, torch-h200-corpus, torch-matrix corpus and holdout, the oracle's CPU
// exports and tables, the H200 check_profile outputs and crossbench run folders under results/)
// must be recognised, up to the few pairs whose figures cannot tell (counted and bounded).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "validate/one_profile.h"
#include "validate/validator.h"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

const fs::path kData = XB_TEST_DATA_DIR;
const fs::path kRepo = fs::path(XB_TEST_DATA_DIR).parent_path().parent_path();

/// One profile's exports: its traces and the tables printed from it.
struct Export {
  std::vector<fs::path> traces, tables;
};

json read_json(const fs::path& p) {
  std::ifstream in(p);
  return json::parse(in);
}

/// Every committed real export, found by the folders' own layout (not hand-picked).
std::vector<Export> real_exports() {
  std::vector<Export> out;
  // <stem>.json or <stem>.json.gz beside <stem>.txt.
  for (const fs::path& dir :
       {kData / "torch-h200", kData / "torch-h200-corpus", kRepo / "tests/torch_oracle/data/cpu-torch2.11"}) {
    std::vector<fs::path> tables;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".txt") tables.push_back(e.path());
    std::sort(tables.begin(), tables.end());
    for (const auto& t : tables) {
      fs::path trace = fs::path(t).replace_extension(".json");
      if (!fs::exists(trace)) trace += ".gz";
      if (fs::exists(trace)) out.push_back({{trace}, {t}});
    }
  }
  // The matrix: <export>.meta.json names every table <export>.<set>.txt.
  for (const char* batch : {"corpus", "holdout"}) {
    std::vector<fs::path> metas;
    for (const auto& e : fs::directory_iterator(kData / "torch-matrix" / batch)) {
      const std::string name = e.path().filename().string();
      if (name.size() > 10 && name.compare(name.size() - 10, 10, ".meta.json") == 0) metas.push_back(e.path());
    }
    std::sort(metas.begin(), metas.end());
    for (const auto& m : metas) {
      const std::string stem = m.string().substr(0, m.string().size() - 10);
      Export x{{stem + ".json.gz"}, {}};
      const json meta = read_json(m);
      for (const auto& [set, call] : meta["tables"].items()) x.tables.push_back(stem + "." + set + ".txt");
      out.push_back(std::move(x));
    }
  }
  // The oracle's CPU tables: index.json pairs each with its profile's trace.
  const fs::path cpu = kRepo / "tests/torch_oracle/data/cpu-tables";
  std::vector<Export> by_trace;
  const json index = read_json(cpu / "index.json");
  for (const auto& t : index["tables"]) {
    const fs::path trace = cpu / t["trace"].get<std::string>();
    auto it = std::find_if(by_trace.begin(), by_trace.end(), [&](const Export& x) { return x.traces[0] == trace; });
    if (it == by_trace.end()) it = by_trace.insert(by_trace.end(), Export{{trace}, {}});
    it->tables.push_back(cpu / t["table"].get<std::string>());
  }
  out.insert(out.end(), by_trace.begin(), by_trace.end());
  // check_profile's outputs on the H200, and crossbench run folders (both traces, both tables).
  const fs::path results = XB_RESULTS_DIR;
  for (const char* d :
       {"h200/final-2026-12-01/torch-check/one_call", "h200/final-2026-12-01/torch-check/handler/step_4"})
    out.push_back({{results / d / "trace.json"}, {results / d / "table.txt"}});
  for (const fs::path& d : {results / "h200/2026-11-29-e2e", results / "sessions/h200-nvtx", kData / "harness-session"})
    out.push_back({{d / "full.json", d / "trace_only.json"}, {d / "table.txt", d / "table.json"}});
  return out;
}

TEST(OneProfile, GeneratedMismatchCorpus) {
  const std::vector<Export> exports = real_exports();
  xb::NameTable names;
  std::vector<xb::vd::TraceFigures> figures;
  std::vector<std::size_t> owner;  // export index per trace
  for (std::size_t i = 0; i < exports.size(); ++i)
    for (const auto& t : exports[i].traces) {
      figures.push_back(xb::vd::trace_figures(xb::read_trace(t, names), names));
      owner.push_back(i);
    }
  std::size_t real = 0, mismatched = 0, recognised = 0, tables = 0;
  std::vector<std::string> missed;
  for (std::size_t i = 0; i < exports.size(); ++i)
    for (const auto& path : exports[i].tables) {
      ++tables;
      const xb::TableData tb = xb::read_table(path);
      for (std::size_t k = 0; k < figures.size(); ++k) {
        const auto ev = xb::vd::compare_table(tb, figures[k], names);
        if (owner[k] == i) {
          ++real;
          // No figure of a real pair contradicts its trace: not merely below the threshold.
          EXPECT_EQ(ev.disagree, 0u) << path << " against its own " << figures[k].file << ": " << ev.first;
          EXPECT_FALSE(ev.not_one_profile()) << path;
        } else {
          ++mismatched;
          if (ev.not_one_profile())
            ++recognised;
          else
            missed.push_back(path.filename().string() + " vs " + figures[k].file +
                             fmt::format(" ({} contradict, {} agree)", ev.disagree, ev.agree));
        }
      }
    }
  std::printf(
      "one profile: %zu exports, %zu traces, %zu tables; %zu real pairs, 0 refused; %zu mismatched pairs, "
      "%zu recognised, %zu not\n",
      exports.size(), figures.size(), tables, real, mismatched, recognised, mismatched - recognised);
  for (const auto& m : missed) std::printf("  not recognised: %s\n", m.c_str());
  EXPECT_GE(exports.size(), 150u);
  EXPECT_GE(real, 1000u);
  // The pairs the figures cannot tell apart: empty top-level tables of CPU profiles of one
  // workload, and two schedule cycles of one session whose few rows share figures.
  EXPECT_LE(mismatched - recognised, 14u);
}

/// The README's example: a table of the 4096 profile given with the 64 profile's trace.
TEST(OneProfile, TableOfAnotherProfileIsRefusedInOneLine) {
  xb::ValidateInputs in;
  in.traces = {kData / "torch-h200/64_bf16_add.json"};
  in.table = kData / "torch-h200/4096_bf16_add.txt";
  try {
    xb::validate_files(in);
    FAIL() << "validated";
  } catch (const xb::InputError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos);
    EXPECT_NE(what.find("4096_bf16_add.txt is not a table of 64_bf16_add.json's profile"), std::string::npos) << what;
    EXPECT_NE(what.find("0 agree"), std::string::npos) << what;
    EXPECT_EQ(what.find("pytorch#"), std::string::npos) << what;
  }
  in.table = kData / "torch-h200/64_bf16_add.txt";
  EXPECT_TRUE(xb::validate_files(in).passed());
}

/// One corrupted cell of a table of this profile stays a finding: the check meant for it fails.
TEST(OneProfile, OneWrongCellIsAFindingNotAMismatch) {
  const fs::path dir = fs::temp_directory_path() / ("xb_one_profile_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ifstream src(kData / "torch-h200/4096_bf16_matmul.txt");
  std::string text((std::istreambuf_iterator<char>(src)), std::istreambuf_iterator<char>());
  const std::string cell = "536.287us";  // the GEMM kernel row's Self CUDA
  const auto at = text.find(cell);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, cell.size(), "537.287us");
  std::ofstream(dir / "t.txt") << text;
  xb::ValidateInputs in;
  in.traces = {kData / "torch-h200/4096_bf16_matmul.json"};
  in.table = dir / "t.txt";
  const auto r = xb::validate_files(in);
  EXPECT_FALSE(r.passed());
  fs::remove_all(dir);
}

/// Two traces of different sessions, and a crossbench file of another recording.
TEST(OneProfile, TracesOfTwoSessionsAndCrossbenchWindows) {
  xb::ValidateInputs in;
  in.traces = {kData / "torch-h200/64_bf16_add.json", kData / "torch-h200/4096_bf16_add.json"};
  try {
    xb::validate_files(in);
    FAIL() << "validated";
  } catch (const xb::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("are not of one profiling session"), std::string::npos) << e.what();
  }
  const fs::path run = kData / "harness-session";
  in.traces = {run / "full.json", run / "trace_only.json"};
  in.table = run / "table.json";
  EXPECT_NO_THROW(xb::validate_files(in));
  const fs::path dir = fs::temp_directory_path() / ("xb_one_profile_w_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  json t = read_json(run / "table.json");
  t["crossbench"]["window_start_ns"] = t["crossbench"]["window_start_ns"].get<std::int64_t>() + 5;
  std::ofstream(dir / "table.json") << t.dump();
  in.table = dir / "table.json";
  try {
    xb::validate_files(in);
    FAIL() << "validated";
  } catch (const xb::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("are not of one recording"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

}  // namespace
