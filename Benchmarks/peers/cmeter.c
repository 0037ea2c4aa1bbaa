/*
 * cmeter: the minimal C JACK client the benchmarks compare `jackhost run --meter` with.
 *
 * It does the same real-time work as jackhost's meter, reduced to its core: it registers
 * N input ports (in_1 ... in_N), connects system:capture_i to in_i after activation, and
 * on every cycle fetches each port's buffer and scans it for its peak. With --frames it
 * processes exactly that many frames (the last cycle is cut to the frame) and then exits,
 * like `jackhost --duration`.
 *
 * Real-time rules, as in jackhost: the process callback does no allocation, no lock and
 * no system call. Results leave it through relaxed atomics; the main thread polls them.
 *
 * Optional:
 *   --callback-time  times every callback with CLOCK_MONOTONIC, exactly as jackhost's
 *                    CallbackTimer does (callback_timer.h: 0.1 us buckets, p50/p99/max).
 *   --rt-malloc      positive control for the RealtimeSanitizer case: malloc/free inside
 *                    the callback, which the sanitizer must report.
 *   --metadata       sets pretty-name and order on every port, as jackhost does (used to show
 *                    that the exit deadlock with many ports is JACK's, not Swift's).
 *   --poll-us N      how long the main thread sleeps between checks for the end (default 1000).
 *                    This matters more than it should: on the benchmark VM (haltpoll cpuidle)
 *                    an idle thread's wakeups speed up the freewheel ping-pong between jackd and
 *                    the process thread, so case 1 also runs cmeter with the poll that gives
 *                    jackhost's wakeup rate (see BENCHMARKS.md, finding F7).
 * RealtimeSanitizer hooks are weak, as in jackhost's shim: an ordinary build pays a branch.
 *
 * Output at exit (stdout): "cmeter cycles=N frames=F channels=C peak=P", and with
 * --callback-time, "callback_us count=N p50=.. p99=.. max=.." on stderr.
 */
#include "callback_timer.h"
#include <jack/jack.h>
#include <jack/metadata.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void __rtsan_realtime_enter(void) __attribute__((weak));
extern void __rtsan_realtime_exit(void) __attribute__((weak));


static jack_client_t *client;
static jack_port_t **ports;
static float *peaks;                 /* per channel, written by the process thread only */
static int channels;
static long long frame_limit = -1;   /* -1: no limit */
static long long delivered;          /* process thread only */
static atomic_llong cycles;
static atomic_llong frames_done;
static atomic_int limit_reached;
static atomic_int server_gone;
static volatile sig_atomic_t stop_requested;
static int time_callbacks;
static int rt_malloc;
static int set_metadata;

static int process(jack_nframes_t nframes, void *arg) {
    (void)arg;
    if (__rtsan_realtime_enter) __rtsan_realtime_enter();
    uint64_t began = time_callbacks ? cbt_now_ns() : 0;
    long long deliverable = nframes;
    if (frame_limit >= 0 && frame_limit - delivered < deliverable) deliverable = frame_limit - delivered;
    if (deliverable > 0) {
        for (int c = 0; c < channels; c++) {
            const float *in = jack_port_get_buffer(ports[c], nframes);
            float peak = peaks[c];
            for (long long i = 0; i < deliverable; i++) {
                float m = in[i] < 0 ? -in[i] : in[i];
                if (m > peak) peak = m;
            }
            peaks[c] = peak;
        }
        if (rt_malloc) {
            void *volatile p = malloc(64);
            free(p);
        }
        delivered += deliverable;
        atomic_fetch_add_explicit(&frames_done, deliverable, memory_order_relaxed);
        if (frame_limit >= 0 && delivered >= frame_limit) atomic_store_explicit(&limit_reached, 1, memory_order_release);
    }
    atomic_fetch_add_explicit(&cycles, 1, memory_order_relaxed);
    if (time_callbacks) {
        cbt_record(cbt_now_ns() - began);
    }
    if (__rtsan_realtime_exit) __rtsan_realtime_exit();
    return 0;
}

static void on_shutdown(void *arg) {
    (void)arg;
    atomic_store(&server_gone, 1);
}

static void on_signal(int sig) {
    (void)sig;
    stop_requested = 1;
}

static void usage(void) {
    fprintf(stderr,
            "usage: cmeter -s SERVER [-n NAME] -c CHANNELS [--frames N] [--callback-time] [--rt-malloc]\n"
            "       [--no-connect] [--source-prefix PREFIX] [--metadata] [--poll-us N]\n");
    exit(2);
}

int main(int argc, char **argv) {
    const char *server = NULL, *name = "cmeter", *prefix = "system:capture_";
    int connect_ports = 1;
    long poll_us = 1000;
    channels = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-s") && v) { server = v; i++; }
        else if (!strcmp(a, "-n") && v) { name = v; i++; }
        else if (!strcmp(a, "-c") && v) { channels = atoi(v); i++; }
        else if (!strcmp(a, "--frames") && v) { frame_limit = atoll(v); i++; }
        else if (!strcmp(a, "--source-prefix") && v) { prefix = v; i++; }
        else if (!strcmp(a, "--callback-time")) time_callbacks = 1;
        else if (!strcmp(a, "--rt-malloc")) rt_malloc = 1;
        else if (!strcmp(a, "--metadata")) set_metadata = 1;
        else if (!strcmp(a, "--no-connect")) connect_ports = 0;
        else if (!strcmp(a, "--poll-us") && v) { poll_us = atol(v); i++; }
        else usage();
    }
    if (channels < 1 || channels > 1024 || poll_us < 1 || poll_us > 1000000) usage();

    /* Everything the callback touches is allocated and written before activation. */
    ports = calloc((size_t)channels, sizeof *ports);
    peaks = calloc((size_t)channels, sizeof *peaks);
        if (!ports || !peaks || !cbt_init()) return 1;

    jack_status_t status;
    jack_options_t options = JackNoStartServer | (server ? JackServerName : 0);
    client = server ? jack_client_open(name, options, &status, server) : jack_client_open(name, options, &status);
    if (!client) {
        fprintf(stderr, "cmeter: cannot open a client on server %s (status 0x%x)\n", server ? server : "(default)", status);
        return 1;
    }
    jack_set_process_callback(client, process, NULL);
    jack_on_shutdown(client, on_shutdown, NULL);
    for (int c = 0; c < channels; c++) {
        char port_name[32];
        snprintf(port_name, sizeof port_name, "in_%d", c + 1);
        ports[c] = jack_port_register(client, port_name, JACK_DEFAULT_AUDIO_TYPE, JackPortIsInput, 0);
        if (!ports[c]) {
            fprintf(stderr, "cmeter: cannot register %s\n", port_name);
            return 1;
        }
        if (set_metadata) {
            char pretty[32], order[16];
            snprintf(pretty, sizeof pretty, "Input %d", c + 1);
            snprintf(order, sizeof order, "%d", c + 1);
            jack_uuid_t uuid = jack_port_uuid(ports[c]);
            jack_set_property(client, uuid, JACK_METADATA_PRETTY_NAME, pretty, "text/plain");
            jack_set_property(client, uuid, JACK_METADATA_ORDER, order, "http://www.w3.org/2001/XMLSchema#int");
        }
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    if (jack_activate(client)) {
        fprintf(stderr, "cmeter: cannot activate\n");
        return 1;
    }
    if (connect_ports) {
        for (int c = 0; c < channels; c++) {
            char source[320];
            snprintf(source, sizeof source, "%s%d", prefix, c + 1);
            if (jack_connect(client, source, jack_port_name(ports[c])))
                fprintf(stderr, "cmeter: warning: cannot connect %s\n", source);
        }
    }
    while (!stop_requested && !atomic_load(&server_gone) && !atomic_load_explicit(&limit_reached, memory_order_acquire))
        usleep((useconds_t)poll_us);
    int gone = atomic_load(&server_gone);
    if (!gone) jack_deactivate(client);
    float peak = 0;
    for (int c = 0; c < channels; c++) if (peaks[c] > peak) peak = peaks[c];
    printf("cmeter cycles=%lld frames=%lld channels=%d peak=%g\n", (long long)atomic_load(&cycles),
           (long long)atomic_load(&frames_done), channels, peak);
    if (time_callbacks)
        cbt_print(1e6 * jack_get_buffer_size(client) / (double)jack_get_sample_rate(client));
    if (!gone) jack_client_close(client);
    fflush(stdout);
    return gone ? 3 : 0;
}
