/*
 * cfair: the fair C peer for `jackhost run --meter --record F --stream -o PATH` (issue 25, item 1).
 *
 * cmeter (beside it) only scans for peaks, so a callback comparison against it cannot tell a
 * regression from work that cmeter does not do. cfair does the same real-time work as jackhost's
 * meter + recorder + stream, written as plain C the way a careful JACK programmer would write it:
 *
 *   - N input ports (in_1 ... in_N), connected from system:capture_i after activation.
 *   - Meter: per cycle and per channel, the peak of |x| and the sum of squares (SSE, 8 lanes; the
 *     block's float sum is added to a double running total). Levels are published to the main thread with relaxed atomic stores, as jackhost's
 *     meter does; the main thread prints the overall peak and RMS at exit.
 *   - Recorder: every channel is copied (memcpy, wrap handled) into a single-producer /
 *     single-consumer ring, planar (one power-of-two region per channel, one pair of frame
 *     indices for the whole ring, one release store per cycle). A writer thread drains it,
 *     interleaves the frames and write()s raw float32 (the bytes of a float WAV's data chunk)
 *     to the --record file.
 *   - Stream: a second copy of every channel into a second ring of the same kind, drained by a
 *     second thread that writes channel-major blocks (each channel's run in turn, as jackhost's
 *     non-interleaved stream does) to the --stream path (a FIFO, a file or /dev/null).
 *   - When a ring is full the cycle's frames are dropped for that consumer and counted, as in
 *     jackhost's real-time (drop-on-full) delivery.
 *   - Time: every cycle reads the server's frame time and microseconds (jack_get_cycle_times),
 *     counts a jump in frame time as skipped frames, and sends the block's time with its frames
 *     (a header per block in each ring, read by the writer), as jackhost stamps every block it
 *     hands on (Benchmarks/FINDINGS.md, F11: at 2 channels this read is the largest single part
 *     of the callback, a line the server writes every cycle). --no-times leaves it out, for the
 *     comparison F11 makes.
 *
 * Real-time rules: the process callback does no allocation, no lock and no system call. The
 * writer threads are not woken from it; they poll, sleeping between polls for one period clamped
 * to 1 ms ... 10 ms, which is what jackhost's deferred consumers do (SessionFactory.makeRunners).
 * Each ring holds 2 s of audio rounded up to a power of two, like jackhost's default ring
 * (CaptureConfiguration.deferredRingSeconds).
 *
 * --callback-time times every callback with CLOCK_MONOTONIC at entry and exit into the
 * histogram of callback_timer.h, exactly as cmeter and jackhost's CallbackTimer do (the clock reads are the first and
 * last things in the callback, around the buffer lookups and all the work).
 * With --frames N it processes exactly N frames (the last cycle is cut to the frame), then lets
 * both writers drain and exits, like `jackhost --duration`.
 *
 * Output at exit (stdout): "cfair cycles=N frames=F channels=C peak=P rms=R recorded=B streamed=S
 * dropped=D" (bytes written by each writer, frames dropped by both rings), and with
 * --callback-time "callback_us count=N p50=.. p99=.. max=.. period_us=.." on stderr.
 *
 * Build: gcc -O2 -Wall -o cfair cfair.c $(pkg-config --cflags --libs jack) -lpthread -lm
 */
#include <errno.h>
#include <fcntl.h>
#include "callback_timer.h"
#include <jack/jack.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__SSE__)
#include <emmintrin.h>
#endif

#define RING_SECONDS 2.0
#define DRAIN_FRAMES 4096   /* the most frames a writer takes from its ring at once */

/* ---- Lock-free SPSC ring, planar: region c holds channel c, all regions share the indices ---- */

/* What travels with each block: its first frame on the server's clock, its length, its time. */
struct block_header {
    jack_nframes_t frame_time;
    jack_nframes_t frames;
    jack_time_t usecs;
};

struct ring {
    /* Producer's line: the write indices (frames and headers). */
    _Alignas(64) atomic_size_t write_pos;
    atomic_size_t header_write;
    /* Consumer's line. */
    _Alignas(64) atomic_size_t read_pos;
    atomic_size_t header_read;
    _Alignas(64) float *data;   /* channels * capacity floats */
    size_t capacity;            /* frames, a power of two */
    size_t mask;
    int channels;
    struct block_header *headers;   /* header_mask + 1 of them: one per 16 frames of the ring */
    size_t header_mask;
    atomic_llong dropped;       /* frames */
};

static int ring_init(struct ring *r, int channels, size_t min_frames) {
    size_t capacity = 1;
    while (capacity < min_frames) capacity <<= 1;
    r->capacity = capacity;
    r->mask = capacity - 1;
    r->channels = channels;
    r->data = NULL;
    if (posix_memalign((void **)&r->data, 64, (size_t)channels * capacity * sizeof(float))) return -1;
    memset(r->data, 0, (size_t)channels * capacity * sizeof(float));   /* fault every page in now */
    r->header_mask = capacity / 16 - 1;
    r->headers = calloc(r->header_mask + 1, sizeof *r->headers);
    if (!r->headers) return -1;
    atomic_init(&r->write_pos, 0);
    atomic_init(&r->read_pos, 0);
    atomic_init(&r->header_write, 0);
    atomic_init(&r->header_read, 0);
    atomic_init(&r->dropped, 0);
    return 0;
}

/* Real-time: copies `frames` frames of every channel in, with the block's header, or drops them
 * all if either does not fit. */
static inline void ring_push(struct ring *r, const float *const *in, size_t frames, const struct block_header *header) {
    size_t w = atomic_load_explicit(&r->write_pos, memory_order_relaxed);
    size_t rd = atomic_load_explicit(&r->read_pos, memory_order_acquire);
    size_t hw = atomic_load_explicit(&r->header_write, memory_order_relaxed);
    int timed = header != NULL;
    if (r->capacity - (w - rd) < frames
        || (timed && hw - atomic_load_explicit(&r->header_read, memory_order_acquire) > r->header_mask)) {
        atomic_fetch_add_explicit(&r->dropped, (long long)frames, memory_order_relaxed);
        return;
    }
    size_t offset = w & r->mask;
    size_t first = r->capacity - offset < frames ? r->capacity - offset : frames;
    for (int c = 0; c < r->channels; c++) {
        float *region = r->data + (size_t)c * r->capacity;
        memcpy(region + offset, in[c], first * sizeof(float));
        if (first < frames) memcpy(region, in[c] + first, (frames - first) * sizeof(float));
    }
    if (timed) {
        r->headers[hw & r->header_mask] = *header;
        atomic_store_explicit(&r->header_write, hw + 1, memory_order_release);
    }
    atomic_store_explicit(&r->write_pos, w + frames, memory_order_release);
}

/* ---- State ---- */

static jack_client_t *client;
static jack_port_t **ports;
static const float **inputs;          /* per channel, this cycle's buffers (process thread only) */
static int channels;
static long long frame_limit = -1;    /* -1: no limit */
static long long delivered;           /* process thread only */
static struct ring record_ring, stream_ring;

/* Meter: running totals belong to the process thread; the atomics are what the display reads. */
static float *total_peak;
static double *total_sum_squares;
static _Atomic uint32_t *published_peak_bits;
static _Atomic uint64_t *published_sum_bits;
static atomic_llong metered_frames;

static atomic_llong cycles;
static atomic_llong frames_done;
static atomic_int limit_reached;
static atomic_int server_gone;
static atomic_int writers_stop;       /* set once no more frames will come */
static volatile sig_atomic_t stop_requested;

static int time_callbacks;
static int stamp_blocks = 1;          /* --no-times clears it */
static jack_nframes_t expected_frame_time;   /* process thread only */
static int have_expected;             /* process thread only */
static atomic_llong skipped_frames;   /* jumps in the server's frame time */

static inline uint32_t float_bits(float f) { uint32_t u; memcpy(&u, &f, sizeof u); return u; }
static inline uint64_t double_bits(double d) { uint64_t u; memcpy(&u, &d, sizeof u); return u; }
static inline float bits_float(uint32_t u) { float f; memcpy(&f, &u, sizeof f); return f; }
static inline double bits_double(uint64_t u) { double d; memcpy(&d, &u, sizeof d); return d; }

/* Real-time: peak and sum of squares of one channel's block. On x86-64 with SSE (every x86-64
 * CPU; no run-time dispatch), 8 lanes in two registers each; elsewhere 8 independent scalar lanes.
 * Compilers do not vectorise the float sum on their own (it would reorder the additions). */
static inline void measure(const float *restrict x, size_t n, float *peak_out, float *sum_out) {
    size_t i = 0;
    float p = 0, s = 0;
#if defined(__SSE__)
    const __m128 abs_mask = _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff));
    __m128 peak0 = _mm_setzero_ps(), peak1 = _mm_setzero_ps();
    __m128 sum0 = _mm_setzero_ps(), sum1 = _mm_setzero_ps();
    for (; i + 8 <= n; i += 8) {
        __m128 a = _mm_loadu_ps(x + i), b = _mm_loadu_ps(x + i + 4);
        peak0 = _mm_max_ps(peak0, _mm_and_ps(a, abs_mask));
        peak1 = _mm_max_ps(peak1, _mm_and_ps(b, abs_mask));
        sum0 = _mm_add_ps(sum0, _mm_mul_ps(a, a));
        sum1 = _mm_add_ps(sum1, _mm_mul_ps(b, b));
    }
    float lanes[4];
    _mm_storeu_ps(lanes, _mm_max_ps(peak0, peak1));
    for (int k = 0; k < 4; k++) p = lanes[k] > p ? lanes[k] : p;
    _mm_storeu_ps(lanes, _mm_add_ps(sum0, sum1));
    s = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
#else
    float peak[8] = {0}, sum[8] = {0};
    for (; i + 8 <= n; i += 8) {
        for (int k = 0; k < 8; k++) {
            float v = x[i + k], m = fabsf(v);
            peak[k] = m > peak[k] ? m : peak[k];
            sum[k] += v * v;
        }
    }
    for (int k = 0; k < 8; k++) {
        p = peak[k] > p ? peak[k] : p;
        s += sum[k];
    }
#endif
    for (; i < n; i++) {
        float m = fabsf(x[i]);
        p = m > p ? m : p;
        s += x[i] * x[i];
    }
    *peak_out = p;
    *sum_out = s;
}

static int process(jack_nframes_t nframes, void *arg) {
    (void)arg;
    uint64_t began = time_callbacks ? cbt_now_ns() : 0;
    for (int c = 0; c < channels; c++) inputs[c] = jack_port_get_buffer(ports[c], nframes);
    struct block_header stamp, *header = NULL;
    if (stamp_blocks) {
        jack_time_t next_usecs;
        float period_usecs;
        if (jack_get_cycle_times(client, &stamp.frame_time, &stamp.usecs, &next_usecs, &period_usecs) != 0) {
            stamp.frame_time = jack_last_frame_time(client);
            stamp.usecs = 0;
        }
        int32_t jump = (int32_t)(stamp.frame_time - expected_frame_time);
        if (have_expected && jump > 0) atomic_fetch_add_explicit(&skipped_frames, jump, memory_order_relaxed);
        expected_frame_time = stamp.frame_time + nframes;
        have_expected = 1;
        stamp.frames = nframes;
        header = &stamp;
    }
    long long deliverable = nframes;
    if (frame_limit >= 0 && frame_limit - delivered < deliverable) deliverable = frame_limit - delivered;
    if (deliverable > 0) {
        size_t n = (size_t)deliverable;
        for (int c = 0; c < channels; c++) {
            float peak, sum;
            measure(inputs[c], n, &peak, &sum);
            if (peak > total_peak[c]) {
                total_peak[c] = peak;
                atomic_store_explicit(&published_peak_bits[c], float_bits(peak), memory_order_relaxed);
            }
            total_sum_squares[c] += sum;
            atomic_store_explicit(&published_sum_bits[c], double_bits(total_sum_squares[c]), memory_order_relaxed);
        }
        atomic_fetch_add_explicit(&metered_frames, deliverable, memory_order_relaxed);
        ring_push(&record_ring, inputs, n, header);
        ring_push(&stream_ring, inputs, n, header);
        delivered += deliverable;
        atomic_fetch_add_explicit(&frames_done, deliverable, memory_order_relaxed);
        if (frame_limit >= 0 && delivered >= frame_limit) atomic_store_explicit(&limit_reached, 1, memory_order_release);
    }
    atomic_fetch_add_explicit(&cycles, 1, memory_order_relaxed);
    if (time_callbacks) {
        cbt_record(cbt_now_ns() - began);
    }
    return 0;
}

/* ---- Writer threads ---- */

struct writer {
    struct ring *ring;
    int fd;
    int interleave;        /* 1: frame-major (the recorder's file), 0: channel-major blocks (the stream) */
    useconds_t poll_us;
    float *scratch;        /* DRAIN_FRAMES * channels */
    long long bytes;
    long long stamped_frames;   /* frames of the block headers read */
    int failed;            /* errno of a failed write; the thread then only drains */
};

static int write_all(int fd, const void *buffer, size_t length) {
    const char *p = buffer;
    while (length > 0) {
        ssize_t n = write(fd, p, length);
        if (n < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        p += n;
        length -= (size_t)n;
    }
    return 0;
}

static void *writer_main(void *arg) {
    struct writer *wr = arg;
    struct ring *r = wr->ring;
    const int nch = r->channels;
    for (;;) {
        /* Read the stop flag before the index: a stop seen here means every frame is in. */
        int stopping = atomic_load_explicit(&writers_stop, memory_order_acquire);
        size_t w = atomic_load_explicit(&r->write_pos, memory_order_acquire);
        size_t rd = atomic_load_explicit(&r->read_pos, memory_order_relaxed);
        if (w == rd) {
            if (stopping) break;
            usleep(wr->poll_us);
            continue;
        }
        while (w != rd) {
            size_t offset = rd & r->mask;
            size_t n = w - rd;
            if (n > DRAIN_FRAMES) n = DRAIN_FRAMES;
            if (n > r->capacity - offset) n = r->capacity - offset;   /* contiguous in every region */
            if (wr->interleave) {
                for (int c = 0; c < nch; c++) {
                    const float *src = r->data + (size_t)c * r->capacity + offset;
                    float *dst = wr->scratch + c;
                    for (size_t i = 0; i < n; i++) dst[i * (size_t)nch] = src[i];
                }
            } else {
                for (int c = 0; c < nch; c++)
                    memcpy(wr->scratch + (size_t)c * n, r->data + (size_t)c * r->capacity + offset, n * sizeof(float));
            }
            atomic_store_explicit(&r->read_pos, rd + n, memory_order_release);
            rd += n;
            /* The headers of the blocks written so far: their frames are what a file's time
             * reference and a sidecar would be made from; here they are only consumed. */
            size_t hw = atomic_load_explicit(&r->header_write, memory_order_acquire);
            size_t hr = atomic_load_explicit(&r->header_read, memory_order_relaxed);
            for (; hr != hw; hr++) wr->stamped_frames += r->headers[hr & r->header_mask].frames;
            atomic_store_explicit(&r->header_read, hr, memory_order_release);
            size_t length = n * (size_t)nch * sizeof(float);
            if (!wr->failed) {
                int error = write_all(wr->fd, wr->scratch, length);
                if (error) wr->failed = error;
                else wr->bytes += (long long)length;
            }
        }
    }
    return NULL;
}

/* ---- Main ---- */

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
            "usage: cfair -s SERVER [-n NAME] -c CHANNELS --record FILE [--stream PATH] [--frames N]\n"
            "       [--callback-time] [--no-times] [--no-connect] [--source-prefix PREFIX] [--poll-us N]\n");
    exit(2);
}

int main(int argc, char **argv) {
    const char *server = NULL, *name = "cfair", *prefix = "system:capture_";
    const char *record_path = NULL, *stream_path = "/dev/null";
    int connect_ports = 1;
    long poll_us = 0;   /* 0: one period, clamped to 1 ms ... 10 ms */
    channels = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-s") && v) { server = v; i++; }
        else if (!strcmp(a, "-n") && v) { name = v; i++; }
        else if (!strcmp(a, "-c") && v) { channels = atoi(v); i++; }
        else if (!strcmp(a, "--frames") && v) { frame_limit = atoll(v); i++; }
        else if (!strcmp(a, "--record") && v) { record_path = v; i++; }
        else if (!strcmp(a, "--stream") && v) { stream_path = v; i++; }
        else if (!strcmp(a, "--source-prefix") && v) { prefix = v; i++; }
        else if (!strcmp(a, "--callback-time")) time_callbacks = 1;
        else if (!strcmp(a, "--no-times")) stamp_blocks = 0;
        else if (!strcmp(a, "--no-connect")) connect_ports = 0;
        else if (!strcmp(a, "--poll-us") && v) { poll_us = atol(v); i++; }
        else usage();
    }
    if (channels < 1 || channels > 1024 || !record_path || poll_us < 0 || poll_us > 1000000) usage();
    signal(SIGPIPE, SIG_IGN);   /* a stream reader that goes away is a failed write, not a death */

    int record_fd = open(record_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (record_fd < 0) { perror("cfair: --record"); return 1; }
    int stream_fd = open(stream_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (stream_fd < 0) { perror("cfair: --stream"); return 1; }

    jack_status_t status;
    jack_options_t options = JackNoStartServer | (server ? JackServerName : 0);
    client = server ? jack_client_open(name, options, &status, server) : jack_client_open(name, options, &status);
    if (!client) {
        fprintf(stderr, "cfair: cannot open a client on server %s (status 0x%x)\n", server ? server : "(default)", status);
        return 1;
    }
    jack_nframes_t period = jack_get_buffer_size(client);
    jack_nframes_t rate = jack_get_sample_rate(client);
    if (poll_us == 0) {
        double seconds = (double)period / (double)rate;
        poll_us = (long)(1e6 * (seconds < 0.001 ? 0.001 : seconds > 0.010 ? 0.010 : seconds));
    }

    /* Everything the callback touches is allocated and written before activation. */
    ports = calloc((size_t)channels, sizeof *ports);
    inputs = calloc((size_t)channels, sizeof *inputs);
    total_peak = calloc((size_t)channels, sizeof *total_peak);
    total_sum_squares = calloc((size_t)channels, sizeof *total_sum_squares);
    published_peak_bits = calloc((size_t)channels, sizeof *published_peak_bits);
    published_sum_bits = calloc((size_t)channels, sizeof *published_sum_bits);
    if (!ports || !inputs || !total_peak || !total_sum_squares || !published_peak_bits || !published_sum_bits || !cbt_init())
        return 1;
    size_t ring_frames = (size_t)(RING_SECONDS * rate);
    if (ring_frames < 8 * (size_t)period) ring_frames = 8 * (size_t)period;
    if (ring_init(&record_ring, channels, ring_frames) || ring_init(&stream_ring, channels, ring_frames)) {
        fprintf(stderr, "cfair: cannot allocate the rings\n");
        return 1;
    }
    struct writer recorder = {.ring = &record_ring, .fd = record_fd, .interleave = 1, .poll_us = (useconds_t)poll_us};
    struct writer streamer = {.ring = &stream_ring, .fd = stream_fd, .interleave = 0, .poll_us = (useconds_t)poll_us};
    recorder.scratch = malloc((size_t)DRAIN_FRAMES * (size_t)channels * sizeof(float));
    streamer.scratch = malloc((size_t)DRAIN_FRAMES * (size_t)channels * sizeof(float));
    if (!recorder.scratch || !streamer.scratch) return 1;

    jack_set_process_callback(client, process, NULL);
    jack_on_shutdown(client, on_shutdown, NULL);
    for (int c = 0; c < channels; c++) {
        char port_name[32];
        snprintf(port_name, sizeof port_name, "in_%d", c + 1);
        ports[c] = jack_port_register(client, port_name, JACK_DEFAULT_AUDIO_TYPE, JackPortIsInput, 0);
        if (!ports[c]) {
            fprintf(stderr, "cfair: cannot register %s\n", port_name);
            return 1;
        }
    }
    pthread_t recorder_thread, stream_thread;
    if (pthread_create(&recorder_thread, NULL, writer_main, &recorder) ||
        pthread_create(&stream_thread, NULL, writer_main, &streamer)) {
        fprintf(stderr, "cfair: cannot start the writer threads\n");
        return 1;
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    if (jack_activate(client)) {
        fprintf(stderr, "cfair: cannot activate\n");
        return 1;
    }
    if (connect_ports) {
        for (int c = 0; c < channels; c++) {
            char source[320];
            snprintf(source, sizeof source, "%s%d", prefix, c + 1);
            if (jack_connect(client, source, jack_port_name(ports[c])))
                fprintf(stderr, "cfair: warning: cannot connect %s\n", source);
        }
    }
    /* The display side: a real client would draw the published levels here. */
    while (!stop_requested && !atomic_load(&server_gone) && !atomic_load_explicit(&limit_reached, memory_order_acquire))
        usleep(1000);
    int gone = atomic_load(&server_gone);
    if (!gone) jack_deactivate(client);   /* no process callback runs after this */
    atomic_store_explicit(&writers_stop, 1, memory_order_release);
    pthread_join(recorder_thread, NULL);
    pthread_join(stream_thread, NULL);
    close(record_fd);
    close(stream_fd);

    float peak = 0;
    double sum = 0;
    for (int c = 0; c < channels; c++) {
        float p = bits_float(atomic_load_explicit(&published_peak_bits[c], memory_order_relaxed));
        if (p > peak) peak = p;
        sum += bits_double(atomic_load_explicit(&published_sum_bits[c], memory_order_relaxed));
    }
    long long metered = atomic_load(&metered_frames);
    double rms = metered > 0 ? sqrt(sum / ((double)metered * channels)) : 0;
    long long dropped = atomic_load(&record_ring.dropped) + atomic_load(&stream_ring.dropped);
    printf("cfair cycles=%lld frames=%lld channels=%d peak=%g rms=%g recorded=%lld streamed=%lld dropped=%lld stamped=%lld skipped=%lld\n",
           (long long)atomic_load(&cycles), (long long)atomic_load(&frames_done), channels, peak, rms, recorder.bytes,
           streamer.bytes, dropped, recorder.stamped_frames, (long long)atomic_load(&skipped_frames));
    if (recorder.failed) fprintf(stderr, "cfair: recording failed: %s\n", strerror(recorder.failed));
    if (streamer.failed) fprintf(stderr, "cfair: stream failed: %s\n", strerror(streamer.failed));
    if (time_callbacks)
        cbt_print(1e6 * period / (double)rate);
    if (!gone) jack_client_close(client);
    fflush(stdout);
    return gone ? 3 : (recorder.failed ? 4 : 0);
}
