// The interrupt flag: a handled SIGINT/SIGTERM is recorded, not fatal; the run then stops between
// samples (bench/core/fixtures_gpu.cpp) and exits with 128 + signal. A second signal kills.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>

#include "bench/core/interrupt.h"

namespace xb {
namespace {

TEST(Interrupt, HandledSignalIsRecordedAndThrownBetweenSamples) {
  EXPECT_EXIT(
      {
        install_interrupt_handlers();
        if (interrupt_signal() != 0) std::exit(3);
        std::raise(SIGTERM);  // handled: the process lives on
        if (interrupt_signal() != SIGTERM) std::exit(4);
        try {
          throw_if_interrupted();
          std::exit(5);
        } catch (const Interrupted& i) {
          std::exit(i.signal == SIGTERM ? interrupted_exit_code(i.signal) : 6);
        }
      },
      ::testing::ExitedWithCode(143), "");
}

TEST(Interrupt, SecondSignalKills) {
  EXPECT_EXIT(
      {
        install_interrupt_handlers();
        std::raise(SIGINT);
        std::raise(SIGINT);  // default action now
        std::exit(0);
      },
      ::testing::KilledBySignal(SIGINT), "");
}

// crossbench.bench (Python) restores the caller's handlers after a run: the handler that was
// there before comes back, and a signal of the run is forgotten.
TEST(Interrupt, RestorePutsBackThePreviousHandlerAndClearsTheSignal) {
  EXPECT_EXIT(
      {
        static volatile std::sig_atomic_t seen = 0;
        // The death test's child inherits what earlier tests of this process installed: start clean.
        restore_interrupt_handlers();
        std::signal(SIGTERM, [](int) { seen = 1; });
        install_interrupt_handlers();
        install_interrupt_handlers();  // twice (bench qualify runs twice): the first saved action stays
        std::raise(SIGTERM);
        if (interrupt_signal() != SIGTERM || seen != 0) std::exit(3);
        restore_interrupt_handlers();
        if (interrupt_signal() != 0) std::exit(4);
        std::raise(SIGTERM);  // the caller's handler again
        std::exit(seen == 1 && interrupt_signal() == 0 ? 0 : 5);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(Interrupt, ExitCodes) {
  EXPECT_EQ(interrupted_exit_code(SIGINT), 130);
  EXPECT_EQ(interrupted_exit_code(SIGTERM), 143);
}

}  // namespace
}  // namespace xb
