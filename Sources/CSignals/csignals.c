#include "csignals.h"
#include <signal.h>
#include <string.h>

static volatile sig_atomic_t stop_requests = 0;
static volatile sig_atomic_t last_signal = 0;
static volatile sig_atomic_t status_requests = 0;
static volatile sig_atomic_t take_stop_requests = 0;

// Only counts: closing files and clients happens on a normal thread that polls
// csignals_stop_requests(). A second signal during finalisation only counts again.
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

static void install(int signo, void (*handler)(int)) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = handler;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(signo, &action, NULL);
}

void csignals_install_stop_handlers(void) {
    install(SIGINT, on_stop_signal);
    install(SIGTERM, on_stop_signal);
    install(SIGHUP, on_stop_signal);
    install(SIGUSR1, on_status_signal);
    install(SIGPIPE, SIG_IGN);
}

// Only with --signal-trigger: SIGUSR2 otherwise keeps its default action.
void csignals_install_take_stop_handler(void) { install(SIGUSR2, on_take_stop_signal); }

int csignals_take_stop_requests(void) { return take_stop_requests; }

int csignals_stop_requests(void) { return stop_requests; }
int csignals_last_signal(void) { return last_signal; }
int csignals_status_requests(void) { return status_requests; }
