// Async-signal-safe stop handling for jackhost.
//
// Why this is C: a signal handler may only touch `volatile sig_atomic_t` data
// and call async-signal-safe functions. Swift cannot promise either (globals are
// lazily initialised behind a lock), so the handlers live here and only count.
#ifndef CSIGNALS_H
#define CSIGNALS_H

/// Installs handlers that only count deliveries:
/// - SIGINT, SIGTERM and SIGHUP (a terminal or ssh session that goes away) ask to stop;
/// - SIGUSR1 asks for a one-line progress report, as dd(1) does;
/// and ignores SIGPIPE so a closed pipe surfaces as EPIPE from write(2).
void csignals_install_stop_handlers(void);

/// The number of SIGINT/SIGTERM/SIGHUP deliveries since installation.
int csignals_stop_requests(void);

/// The last stop signal number received, or 0.
int csignals_last_signal(void);

/// The number of SIGUSR1 deliveries since installation.
int csignals_status_requests(void);

/// Counts SIGUSR2 (which ends a --signal-trigger take) instead of its default action.
void csignals_install_take_stop_handler(void);

/// How many SIGUSR2 have arrived since csignals_install_take_stop_handler.
int csignals_take_stop_requests(void);

#endif
