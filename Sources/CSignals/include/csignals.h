// Async-signal-safe stop handling for jackhost.
//
// Why this is C: a signal handler may only touch `volatile sig_atomic_t` data
// and call async-signal-safe functions. Swift cannot promise either (globals are
// lazily initialised behind a lock), so the handler lives here and only counts.
#ifndef CSIGNALS_H
#define CSIGNALS_H

/// Installs handlers for SIGINT and SIGTERM that only count deliveries, and
/// ignores SIGPIPE so a closed pipe surfaces as EPIPE from write(2).
void csignals_install_stop_handlers(void);

/// The number of SIGINT/SIGTERM deliveries since installation.
int csignals_stop_requests(void);

/// The last stop signal number received, or 0.
int csignals_last_signal(void);

#endif
