#include "bench/core/interrupt.h"

#include <csignal>

namespace xb {
namespace {

volatile std::sig_atomic_t g_signal = 0;
// The actions install_interrupt_handlers replaced, for restore_interrupt_handlers.
struct sigaction g_previous_int {
}, g_previous_term{};
bool g_installed = false;

extern "C" void on_signal(int sig) {
  if (g_signal != 0) {
    // Second signal: give up on a clean stop.
    std::signal(sig, SIG_DFL);
    std::raise(sig);
    return;
  }
  g_signal = sig;
}

}  // namespace

void install_interrupt_handlers() {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, g_installed ? nullptr : &g_previous_int);
  sigaction(SIGTERM, &action, g_installed ? nullptr : &g_previous_term);
  g_installed = true;
}

void restore_interrupt_handlers() noexcept {
  if (g_installed) {
    sigaction(SIGINT, &g_previous_int, nullptr);
    sigaction(SIGTERM, &g_previous_term, nullptr);
    g_installed = false;
  }
  g_signal = 0;
}

int interrupt_signal() noexcept { return g_signal; }

void throw_if_interrupted() {
  if (g_signal != 0) throw Interrupted{g_signal};
}

int interrupted_exit_code(int signal) noexcept { return 128 + signal; }

}  // namespace xb
