// Fault corpus (issue 3): the recorded H200 session (results/sessions/h200-small-2026-11-29) is replayed
// into a clean run folder; a generator then applies one corruption at a time to a copy of its
// files, and each corrupted folder must be caught by the check meant for that corruption (the
// test asserts the check's name). The clean folder must pass. The test prints the mutation score.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "bench/core/run_dir.h"
#include "profiler/model/session_io.h"
#include "validate/validator.h"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

const fs::path kSession = fs::path(XB_RESULTS_DIR) / "sessions" / "h200-small-2026-11-29" / "raw_session.json";

/// The four validated files of a run folder, as JSON.
struct Files {
  json table, trace_only, full, events;
};

json load(const fs::path& p) {
  std::ifstream in(p);
  return json::parse(in);
}

void save(const fs::path& p, const json& j) { std::ofstream(p) << j.dump() << '\n'; }

// ---------------------------------------------------------------------------------------------
// Finding things in a trace

bool is_x(const json& e, const char* cat) { return e.value("ph", "") == "X" && e.value("cat", "") == cat; }

std::uint64_t corr_of(const json& e) { return e["args"]["correlation"].get<std::uint64_t>(); }

/// Index of the "X" event of category `cat` with this correlation id.
std::size_t find_x(const json& trace, const char* cat, std::uint64_t corr) {
  const json& evs = trace["traceEvents"];
  for (std::size_t i = 0; i < evs.size(); ++i)
    if (is_x(evs[i], cat) && evs[i]["args"].value("correlation", std::uint64_t{0}) == corr) return i;
  throw std::runtime_error(fmt::format("test: no {} event with correlation {}", cat, corr));
}

/// The launch call (cuda_runtime or cuda_driver) of a correlation id.
std::size_t find_launch(const json& trace, std::uint64_t corr) {
  const json& evs = trace["traceEvents"];
  for (std::size_t i = 0; i < evs.size(); ++i)
    if ((is_x(evs[i], "cuda_runtime") || is_x(evs[i], "cuda_driver")) &&
        evs[i]["args"].value("correlation", std::uint64_t{0}) == corr)
      return i;
  throw std::runtime_error(fmt::format("test: no launch with correlation {}", corr));
}

std::size_t find_flow(const json& trace, const char* ph, std::uint64_t id) {
  const json& evs = trace["traceEvents"];
  for (std::size_t i = 0; i < evs.size(); ++i)
    if (evs[i].value("ph", "") == ph && evs[i].value("cat", "") == "ac2g" && evs[i].value("id", std::uint64_t{0}) == id)
      return i;
  throw std::runtime_error(fmt::format("test: no ac2g \"{}\" with id {}", ph, id));
}

/// Kernels of full.json on one stream, in start order: (correlation, ts, dur).
struct K {
  std::uint64_t corr;
  double ts, dur;
  std::string name;
};
std::vector<K> kernels(const json& trace) {
  std::vector<K> out;
  for (const auto& e : trace["traceEvents"])
    if (is_x(e, "kernel"))
      out.push_back({corr_of(e), e["ts"].get<double>(), e["dur"].get<double>(), e["name"].get<std::string>()});
  std::sort(out.begin(), out.end(), [](const K& a, const K& b) { return a.ts < b.ts; });
  return out;
}

/// Sets a field of the kernel `corr` in both traces (and moves full.json's "f" flow with "ts").
void set_kernel(Files& f, std::uint64_t corr, const char* key, double value) {
  for (json* t : {&f.full, &f.trace_only}) (*t)["traceEvents"][find_x(*t, "kernel", corr)][key] = value;
  if (std::string(key) == "ts") f.full["traceEvents"][find_flow(f.full, "f", corr)]["ts"] = value;
}

void erase_at(json& trace, std::vector<std::size_t> idx) {
  std::sort(idx.rbegin(), idx.rend());
  for (std::size_t i : idx) trace["traceEvents"].erase(i);
}

json& table_row(json& table, const std::string& kind, const std::string& name) {
  for (auto& r : table["rows"])
    if (r["kind"] == kind && r["name"] == name) return r;
  throw std::runtime_error("test: no table row " + kind + " '" + name + "'");
}

// ---------------------------------------------------------------------------------------------
// The corpus

/// One corruption: its name, the check that must catch it, and how to apply it (to the JSON, or
/// to the folder's files directly).
struct Mutation {
  std::string name;
  std::string check;  ///< a name of xb::checks; "input" for unusable input (InputError)
  std::function<void(Files&)> apply;
  std::function<void(const fs::path&)> apply_files;  ///< when set, runs after the JSON is written
};

std::vector<Mutation> corpus(const Files& clean) {
  namespace c = xb::checks;
  const std::vector<K> ks = kernels(clean.full);
  // Two kernels that follow each other on the stream, of different names (launched by different ops).
  std::size_t a = 0;
  while (a + 1 < ks.size() && ks[a].name == ks[a + 1].name) ++a;
  const K k0 = ks.at(a), k1 = ks.at(a + 1);
  std::vector<Mutation> m;

  m.push_back({"shifted kernel timestamp (before its launch call)", c::kLaunchBeforeKernel,
               [=](Files& f) {
                 const json& launch = f.full["traceEvents"][find_launch(f.full, k0.corr)];
                 set_kernel(f, k0.corr, "ts", launch["ts"].get<double>() - 1.0);
               },
               nullptr});
  m.push_back({"dropped kernel", c::kKernelStats,
               [=](Files& f) {
                 erase_at(f.full, {find_x(f.full, "kernel", k0.corr), find_flow(f.full, "f", k0.corr),
                                   find_flow(f.full, "s", k0.corr)});
               },
               nullptr});
  m.push_back(
      {"duplicated kernel", c::kKernelStats,
       [=](Files& f) { f.full["traceEvents"].push_back(f.full["traceEvents"][find_x(f.full, "kernel", k0.corr)]); },
       nullptr});
  m.push_back({"swapped correlation ids", c::kAttribution,
               [=](Files& f) {
                 auto& evs = f.full["traceEvents"];
                 const std::size_t i = find_x(f.full, "kernel", k0.corr), j = find_x(f.full, "kernel", k1.corr);
                 evs[i]["args"]["correlation"] = k1.corr;
                 evs[j]["args"]["correlation"] = k0.corr;
               },
               nullptr});
  m.push_back({"kernel re-attributed to another op", c::kAttribution,
               [=](Files& f) {
                 auto& evs = f.full["traceEvents"];
                 const auto other = evs[find_x(f.full, "kernel", k1.corr)]["args"]["External id"];
                 evs[find_x(f.full, "kernel", k0.corr)]["args"]["External id"] = other;
                 evs[find_launch(f.full, k0.corr)]["args"]["External id"] = other;
               },
               nullptr});
  m.push_back(
      {"missing flow end", c::kFlows, [=](Files& f) { erase_at(f.full, {find_flow(f.full, "f", k0.corr)}); }, nullptr});
  m.push_back({"orphan flow start on a launch call (its kernel and flow end gone)", c::kFlows,
               [=](Files& f) {
                 erase_at(f.full, {find_x(f.full, "kernel", k0.corr), find_flow(f.full, "f", k0.corr)});
               },
               nullptr});
  m.push_back({"zero duration", c::kDurationsPositive, [=](Files& f) { set_kernel(f, k0.corr, "dur", 0.0); }, nullptr});
  m.push_back(
      {"negative duration", c::kDurationsPositive, [=](Files& f) { set_kernel(f, k0.corr, "dur", -1.0); }, nullptr});
  m.push_back({"overlapping kernels on one stream", c::kStreamOverlap,
               [=](Files& f) { set_kernel(f, k0.corr, "dur", k1.ts - k0.ts + 0.5); }, nullptr});
  m.push_back({"table row count off by one", c::kKernelStats,
               [=](Files& f) {
                 json& r = table_row(f.table, "kernel", k0.name);
                 r["calls"] = r["calls"].get<std::int64_t>() + 1;
               },
               nullptr});
  m.push_back(
      {"table total off by 1 us", c::kTableTotals,
       [=](Files& f) { f.table["self_cuda_total_ns"] = f.table["self_cuda_total_ns"].get<std::int64_t>() + 1000; },
       nullptr});
  m.push_back({"annotation counted as kernel time", c::kAnnotationSpan,
               [=](Files& f) {
                 // The fixture annotation of k0's step shows its GPU span as Self CUDA, as PyTorch does.
                 const std::uint64_t ext =
                     f.full["traceEvents"][find_x(f.full, "kernel", k0.corr)]["args"]["External id"];
                 std::string annot;
                 for (const auto& e : f.trace_only["traceEvents"])
                   if (is_x(e, "cpu_op") && e["args"]["External id"] == ext) {
                     const std::uint64_t parent = e["args"]["Parent id"];
                     for (const auto& r : f.trace_only["traceEvents"])
                       if (is_x(r, "user_annotation") && r["args"]["External id"] == parent) annot = r["name"];
                   }
                 double span_us = 0;
                 for (const auto& e : f.full["traceEvents"])
                   if (is_x(e, "gpu_user_annotation") && e["name"] == annot) span_us += e["dur"].get<double>();
                 table_row(f.table, "user_annotation", annot)["self_cuda_ns"] =
                     static_cast<std::int64_t>(span_us * 1000 + 0.5);
               },
               nullptr});
  m.push_back({"microseconds written as nanoseconds", c::kRecordingWindow,
               [=](Files& f) {
                 json& e = f.full["traceEvents"][find_x(f.full, "kernel", k0.corr)];
                 e["ts"] = e["ts"].get<double>() * 1000.0;
                 e["dur"] = e["dur"].get<double>() * 1000.0;
               },
               nullptr});
  m.push_back({"truncated file", c::kInput, nullptr, [](const fs::path& dir) {
                 const fs::path p = dir / "full.json";
                 const auto size = fs::file_size(p);
                 fs::resize_file(p, size / 2);
               }});
  m.push_back({"dropped-record count non-zero", c::kNoDroppedRecords,
               [](Files& f) {
                 for (json* j : {&f.table, &f.trace_only, &f.full, &f.events})
                   (*j)["crossbench"]["dropped_records"] = 5;
               },
               nullptr});
  // Beyond the list.
  m.push_back({"kernel moved after a later-launched kernel", c::kLaneOrder,
               [=](Files& f) { set_kernel(f, k0.corr, "ts", k1.ts + k1.dur + 0.5); }, nullptr});
  m.push_back({"event outside the recording window", c::kRecordingWindow,
               [](Files& f) {
                 f.full["crossbench"]["window_end_ns"] =
                     f.full["crossbench"]["window_start_ns"].get<std::int64_t>() + 1000;
               },
               nullptr});
  m.push_back({"external correlation to an unknown range", c::kAttribution,
               [=](Files& f) {
                 for (auto& x : f.trace_only["externalCorrelations"])
                   if (x["correlation"] == k0.corr) x["External id"] = 999999;
               },
               nullptr});
  m.push_back({"flow start off its launch call", c::kFlows,
               [=](Files& f) {
                 json& s = f.full["traceEvents"][find_flow(f.full, "s", k0.corr)];
                 s["ts"] = s["ts"].get<double>() + 0.001;
               },
               nullptr});
  m.push_back({"GPU annotation span wider than its kernels", c::kAnnotationSpan,
               [](Files& f) {
                 for (auto& e : f.full["traceEvents"])
                   if (is_x(e, "gpu_user_annotation")) {
                     e["dur"] = e["dur"].get<double>() + 5.0;
                     break;
                   }
               },
               nullptr});
  m.push_back({"row percentage above 100%", c::kTableTotals,
               [](Files& f) { f.table["rows"][0]["self_cpu_pct"] = 101.0; }, nullptr});
  m.push_back({"host row CPU total off", c::kTableRows,
               [](Files& f) {
                 for (auto& r : f.table["rows"])
                   if (r["kind"] == "cpu_op") {
                     r["cpu_total_ns"] = r["cpu_total_ns"].get<std::int64_t>() + 1;
                     break;
                   }
               },
               nullptr});
  m.push_back({"cudaEvent times off by 3x", c::kEventVsCupti,
               [](Files& f) {
                 for (auto& s : f.events["fixtures"][0]["steps"]) s["event_ns"] = s["event_ns"].get<std::int64_t>() * 3;
                 f.events["fixtures"][0].erase("median_ns");
               },
               nullptr});
  m.push_back(
      {"unverified result", c::kVerified, [](Files& f) { f.events["fixtures"][0]["verified"] = false; }, nullptr});
  m.push_back({"NaN in a trace", c::kInput, nullptr, [](const fs::path& dir) {
                 std::ifstream in(dir / "trace_only.json");
                 std::stringstream ss;
                 ss << in.rdbuf();
                 std::string text = ss.str();
                 const auto at = text.find("\"dur\":");
                 text.replace(at, text.find(',', at) - at, "\"dur\":NaN");
                 std::ofstream(dir / "trace_only.json") << text;
               }});
  return m;
}

class FaultCorpus : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = fs::temp_directory_path() / ("xb_fault_corpus_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    std::ostringstream log;
    ASSERT_EQ(xb::replay_session(kSession, root_ / "clean", log), 0) << log.str();
    clean_ = {load(root_ / "clean" / "table.json"), load(root_ / "clean" / "trace_only.json"),
              load(root_ / "clean" / "full.json"), load(root_ / "clean" / "events.json")};
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  /// Writes the files of a mutated folder.
  static fs::path write(const std::string& name, const Files& f) {
    const fs::path dir = root_ / name;
    fs::create_directories(dir);
    save(dir / "table.json", f.table);
    save(dir / "trace_only.json", f.trace_only);
    save(dir / "full.json", f.full);
    save(dir / "events.json", f.events);
    return dir;
  }

  static fs::path root_;
  static Files clean_;
};

fs::path FaultCorpus::root_;
Files FaultCorpus::clean_;

std::string failed_checks(const xb::ValidationReport& r) {
  std::string out;
  for (const auto& name : xb::all_checks())
    if (r.status_of(name) == xb::CheckStatus::Failed) out += (out.empty() ? "" : ", ") + name;
  return out.empty() ? "none" : out;
}

TEST_F(FaultCorpus, CleanRecordedSessionPasses) {
  const fs::path dir = write("clean_rewritten", clean_);  // the same JSON, rewritten by nlohmann
  const auto r = xb::validate_run_dir(dir);
  std::ostringstream s;
  xb::print_summary(r, s);
  EXPECT_TRUE(r.passed()) << s.str();
  // model_vs_counters: the session had no counter pass; work_signature: it was recorded before the
  // work-signature probe (2026-11-29).
  EXPECT_EQ(r.counts().not_run, 2u) << s.str();
  // The recorded session's short samples (3 active steps, --max-time 0.5) may miss the noise
  // target: event_vs_cupti is then not claimed for those fixtures, never failed.
  for (const auto& name : xb::all_checks()) {
    const auto st = r.status_of(name);
    if (name == xb::checks::kEventVsCupti && st == xb::CheckStatus::NotClaimed) continue;
    if (name == xb::checks::kModelVsCounters || name == xb::checks::kWorkSignature) {
      EXPECT_EQ(st, xb::CheckStatus::NotRun);
      continue;
    }
    EXPECT_EQ(st, xb::CheckStatus::Passed) << name << "\n" << s.str();
  }
}

TEST_F(FaultCorpus, EveryCorruptionIsCaughtByItsCheck) {
  const auto mutations = corpus(clean_);
  ASSERT_GE(mutations.size(), 16u);
  std::size_t detected = 0, index = 0;
  std::ostringstream table;
  for (const Mutation& mu : mutations) {
    Files f = clean_;
    if (mu.apply) mu.apply(f);
    const fs::path dir = write(fmt::format("m{:02}", index++), f);
    if (mu.apply_files) mu.apply_files(dir);
    bool caught = false;
    std::string found;
    try {
      const auto r = xb::validate_run_dir(dir);
      caught = mu.check != xb::checks::kInput && r.status_of(mu.check) == xb::CheckStatus::Failed;
      found = "failed: " + failed_checks(r);
      if (caught) {
        // The failure names what it is about: a subject and expected/found (or a message).
        for (const auto* res : r.results_of(mu.check))
          if (res->status == xb::CheckStatus::Failed) {
            EXPECT_FALSE(res->subject.empty() && res->message.empty()) << mu.name;
            break;
          }
      }
    } catch (const xb::InputError& e) {
      caught = mu.check == xb::checks::kInput && std::string(e.what()).find(".json") != std::string::npos;
      found = std::string("unusable input: ") + e.what();
    }
    detected += caught;
    EXPECT_TRUE(caught) << mu.name << ": expected check '" << mu.check << "' to fail; " << found;
    table << fmt::format("  {:<4} {:<68} {:<22} {}\n", caught ? "ok" : "MISS", mu.name, mu.check, found.substr(0, 160));
  }
  std::cout << "fault corpus (results/sessions/h200-small-2026-11-29 replayed, one corruption at a time):\n"
            << table.str()
            << fmt::format("mutation score: {}/{} corruptions caught by the check meant for them ({:.0f}%)\n", detected,
                           mutations.size(),
                           100.0 * static_cast<double>(detected) / static_cast<double>(mutations.size()));
  EXPECT_EQ(detected, mutations.size());
}

}  // namespace
