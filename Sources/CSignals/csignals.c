#include "csignals.h"
#include <signal.h>
#include <stddef.h>
#include <string.h>

static volatile sig_atomic_t stop_requests = 0;
static volatile sig_atomic_t last_signal = 0;
static volatile sig_atomic_t status_requests = 0;
static volatile sig_atomic_t take_stop_requests = 0;
static volatile sig_atomic_t installed = 0;
// stop_requests when the handlers were last installed: only later ones are raised again.
static volatile sig_atomic_t stops_at_install = 0;

// The handlers only count: closing files and clients happens on a normal thread that polls the
// counters. A second signal during finalisation only counts again.
static void on_stop_signal(int signo) {
    last_signal = signo;
    stop_requests = stop_requests + 1;
}

static void on_status_signal(int signo) {
    (void)signo;
    status_requests = status_requests + 1;
}

static void on_take_stop_signal(int signo) {
    (void)signo;
    take_stop_requests = take_stop_requests + 1;
}

// Signals whose default action ends the process and that jackhost turns into "finalise and stop":
// the usual three, Ctrl-\ (which would otherwise reach the Swift runtime's backtracer and freeze
// the JACK client long enough for the server to drop it), timers and resource limits someone may
// point at any process, and the rarely used ones that would kill a take just the same.
static const int stop_signals[] = {
    SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU, SIGPWR, SIGSTKFLT, SIGIO,
};

// Signals ignored, each for a reason (docs/RELIABILITY.md lists them):
// - SIGPIPE: a closed pipe surfaces as EPIPE from write(2), which the stream reports;
// - SIGXFSZ: a file past RLIMIT_FSIZE surfaces as EFBIG, a write failure that keeps the file valid;
// - SIGTTOU: a background jackhost writing meters to a terminal with `stty tostop` keeps running
//   instead of stopping (a stopped JACK client is dropped by the server).
static const int ignored_signals[] = {SIGPIPE, SIGXFSZ, SIGTTOU};

static void install(int signo, void (*handler)(int)) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = handler;
    sigfillset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(signo, &action, NULL);
}

void csignals_install_stop_handlers(void) {
    for (size_t i = 0; i < sizeof stop_signals / sizeof stop_signals[0]; i++) install(stop_signals[i], on_stop_signal);
    // The real-time signals end a process by default too; nothing in jackhost or its libraries
    // uses them (glibc keeps the two below SIGRTMIN for itself).
    for (int signo = SIGRTMIN; signo <= SIGRTMAX; signo++) install(signo, on_stop_signal);
    for (size_t i = 0; i < sizeof ignored_signals / sizeof ignored_signals[0]; i++) install(ignored_signals[i], SIG_IGN);
    install(SIGUSR1, on_status_signal);
    install(SIGUSR2, on_take_stop_signal);
    if (!installed) stops_at_install = stop_requests;
    installed = 1;
}

void csignals_handled_set(sigset_t *set) {
    sigemptyset(set);
    for (size_t i = 0; i < sizeof stop_signals / sizeof stop_signals[0]; i++) sigaddset(set, stop_signals[i]);
    for (int signo = SIGRTMIN; signo <= SIGRTMAX; signo++) sigaddset(set, signo);
    for (size_t i = 0; i < sizeof ignored_signals / sizeof ignored_signals[0]; i++) sigaddset(set, ignored_signals[i]);
    sigaddset(set, SIGUSR1);
    sigaddset(set, SIGUSR2);
}

void csignals_restore_defaults(void) {
    if (!installed) return;
    sigset_t set;
    csignals_handled_set(&set);
    for (int signo = 1; signo < NSIG; signo++) {
        if (sigismember(&set, signo) == 1) install(signo, SIG_DFL);
    }
    installed = 0;
    // A stop that arrived while the handlers were in place acts now, as it would have.
    if (stop_requests > stops_at_install && last_signal > 0) raise(last_signal);
}

int csignals_take_stop_requests(void) { return take_stop_requests; }
int csignals_stop_requests(void) { return stop_requests; }
int csignals_last_signal(void) { return last_signal; }
int csignals_status_requests(void) { return status_requests; }
