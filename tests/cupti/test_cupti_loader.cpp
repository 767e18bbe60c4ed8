// libcupti is loaded at run time (profiler/adapters/cupti_api.h), so a missing CUPTI library is a clear
// ProfilerError and never stops bench from starting (event-only mode, --no-cupti, still works).
// No GPU needed. ctest runs this executable twice: once as is (cupti_loader: the toolkit's library
// loads), once with XB_CUPTI_LIBRARY naming a file that does not exist (cupti_missing) and once
// with a copy of the library loaded before (cupti_preloaded).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <climits>
#include <cstdlib>
#include <string>

#include "../common/run_command.h"
#include "profiler/adapters/cupti_source.h"
#include "profiler/model/profiler.h"

namespace xb {
namespace {

bool library_forced_missing() {
  const char* forced = std::getenv("XB_CUPTI_LIBRARY");
  return forced != nullptr && std::string(forced).find("does-not-exist") != std::string::npos;
}

TEST(CuptiLoader, BenchDoesNotLinkLibcupti) {
  const auto [code, out] = testing::run_command(std::string("ldd ") + XB_BENCH_EXE);
  ASSERT_EQ(code, 0) << out;
  EXPECT_EQ(out.find("libcupti"), std::string::npos) << out;
}

TEST(CuptiLoader, TheToolkitsLibraryLoadsWithoutAGpu) {
  if (library_forced_missing()) GTEST_SKIP() << "this run names a missing library";
  // Creating the source loads the library and makes CUPTI's first call. Without a GPU driver that
  // call fails (CUPTI answers, e.g. CUPTI_ERROR_UNKNOWN), which still proves the library loaded.
  try {
    make_cupti_source();
  } catch (const ProfilerError& e) {
    EXPECT_EQ(std::string(e.what()).find("cannot load the CUPTI library"), std::string::npos) << e.what();
  }
  const char* nvtx = std::getenv("NVTX_INJECTION64_PATH");
  ASSERT_NE(nvtx, nullptr) << "NVTX was not pointed at the loaded libcupti";
  EXPECT_NE(std::string(nvtx).find("libcupti"), std::string::npos) << nvtx;
}

// A process that already holds a libcupti (PyTorch loads its own for its profiler) gets that
// copy, not a second one: ctest's cupti_preloaded loads a copy of the toolkit's library from
// another folder first (XB_TEST_PRELOAD_CUPTI), and the source must pick that file.
TEST(CuptiLoader, TheCopyAlreadyInTheProcessIsUsed) {
  const char* preload = std::getenv("XB_TEST_PRELOAD_CUPTI");
  if (preload == nullptr) GTEST_SKIP() << "run with XB_TEST_PRELOAD_CUPTI=<a copy of libcupti.so.N>";
  ASSERT_NE(dlopen(preload, RTLD_NOW | RTLD_LOCAL), nullptr) << dlerror();
  try {
    make_cupti_source();
  } catch (const ProfilerError& e) {  // no GPU: CUPTI's first call fails, the library loaded
    EXPECT_EQ(std::string(e.what()).find("cannot load the CUPTI library"), std::string::npos) << e.what();
  }
  const char* nvtx = std::getenv("NVTX_INJECTION64_PATH");  // the loaded library's file
  ASSERT_NE(nvtx, nullptr);
  char want[PATH_MAX], got[PATH_MAX];
  ASSERT_NE(realpath(preload, want), nullptr);
  ASSERT_NE(realpath(nvtx, got), nullptr);
  EXPECT_EQ(std::string(got), std::string(want));
}

TEST(CuptiLoader, AMissingLibraryIsAClearProfilerError) {
  if (!library_forced_missing()) GTEST_SKIP() << "run with XB_CUPTI_LIBRARY=/does-not-exist/libcupti.so";
  for (int attempt = 0; attempt < 2; ++attempt) {  // the same message every time
    try {
      make_cupti_source();
      FAIL() << "make_cupti_source succeeded without a CUPTI library";
    } catch (const ProfilerError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("cannot load the CUPTI library"), std::string::npos) << what;
      EXPECT_NE(what.find("does-not-exist"), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
  EXPECT_EQ(std::getenv("NVTX_INJECTION64_PATH"), nullptr) << "NVTX must not be pointed at a missing CUPTI";
  // The event-only source still works.
  Profiler prof(make_null_source());
  prof.start();
  prof.begin_fixture(Schedule{0, 0, 1});
  prof.begin_step();
  prof.end_step();
  const RawSession s = prof.stop();
  EXPECT_EQ(s.meta.activity_source, "none");
}

}  // namespace
}  // namespace xb
