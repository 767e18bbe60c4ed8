// SIGINT/SIGTERM during a bench run: the handler only records the signal; the timing loop checks
// it between samples, abandons the fixture it is in, skips the rest, and the run then writes
// every completed fixture's results (each file written whole, atomically) and exits with
// 128 + the signal number (130 for SIGINT, 143 for SIGTERM), as shells report a signal death.
#pragma once

namespace xb {

/// Thrown by the timing loop when a signal arrived: the current fixture is abandoned.
struct Interrupted {
  int signal = 0;
};

/// Installs the SIGINT and SIGTERM handlers (sigaction, SA_RESTART). A second signal of either
/// kind restores the default action first, so pressing Ctrl-C twice still kills the process.
void install_interrupt_handlers();
/// Puts back the SIGINT and SIGTERM actions that install_interrupt_handlers replaced and forgets
/// any signal that arrived: for a process that goes on after a run (crossbench.bench from Python,
/// whose own Ctrl-C handling must work again). No effect on the actions when none were installed.
void restore_interrupt_handlers() noexcept;
/// The signal that arrived (SIGINT or SIGTERM), or 0.
int interrupt_signal() noexcept;
/// Throws Interrupted when a signal arrived.
void throw_if_interrupted();
/// The exit code for an interrupted run: 128 + signal.
int interrupted_exit_code(int signal) noexcept;

}  // namespace xb
