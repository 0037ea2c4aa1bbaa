// Async-signal-safe signal handling for jackhost.
//
// Why this is C: a signal handler may only touch `volatile sig_atomic_t` data and call
// async-signal-safe functions. Swift cannot promise either (globals are lazily initialised
// behind a lock), so the handlers live here and only count. docs/RELIABILITY.md lists every
// signal and what jackhost does with it.
#ifndef CSIGNALS_H
#define CSIGNALS_H

#include <signal.h>

/// Installs, for every signal whose default action would end the process, a handler that only
/// counts, so that jackhost finalises its take instead of dying:
/// - SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU, SIGPWR, SIGSTKFLT,
///   SIGIO and SIGRTMIN to SIGRTMAX ask to stop (``csignals_stop_requests``);
/// - SIGUSR1 asks for a progress line, or starts a take with --signal-trigger;
/// - SIGUSR2 ends a take with --signal-trigger (counted, and otherwise only reported);
/// and ignores SIGPIPE, SIGXFSZ and SIGTTOU, so that they surface as EPIPE, EFBIG and a
/// terminal write. The crash signals (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP,
/// SIGSYS) stay with the Swift runtime's backtracer. Idempotent: counts survive reinstalling.
/// `jackhost`'s main calls it before anything else.
void csignals_install_stop_handlers(void);

/// Every signal whose disposition ``csignals_install_stop_handlers`` changes, for a child
/// process that must start with them at their defaults (posix_spawnattr_setsigdefault).
void csignals_handled_set(sigset_t *set);

/// Puts every signal back to its default action, for commands that never poll the counters
/// (`info`, `plugin`, `completions`); a stop signal that arrived meanwhile is raised again, so it
/// acts as it would have without the handlers.
void csignals_restore_defaults(void);

/// The number of stop signals delivered since installation.
int csignals_stop_requests(void);

/// The last stop signal number received, or 0.
int csignals_last_signal(void);

/// The number of SIGUSR1 deliveries since installation.
int csignals_status_requests(void);

/// The number of SIGUSR2 deliveries since installation.
int csignals_take_stop_requests(void);

#endif
