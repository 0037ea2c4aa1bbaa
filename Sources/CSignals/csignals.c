#include "csignals.h"
#include <signal.h>
#include <string.h>

static volatile sig_atomic_t stop_requests = 0;
static volatile sig_atomic_t last_signal = 0;

// Only counts: closing files and clients happens on a normal thread that polls
// csignals_stop_requests().
static void on_stop_signal(int signo) {
    last_signal = signo;
    stop_requests = stop_requests + 1;
}

void csignals_install_stop_handlers(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(SIGINT, &action, NULL);
    sigaction(SIGTERM, &action, NULL);

    struct sigaction ignore;
    memset(&ignore, 0, sizeof ignore);
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, NULL);
}

int csignals_stop_requests(void) { return stop_requests; }
int csignals_last_signal(void) { return last_signal; }
