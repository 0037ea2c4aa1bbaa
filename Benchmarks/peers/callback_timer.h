/*
 * callback_timer.h: the C peers' callback timer, the same histogram as jackhost's CallbackTimer
 * (Sources/JackHost/CallbackTimer.swift): CLOCK_MONOTONIC in nanoseconds at the callback's entry
 * and exit, buckets of 0.1 us below 1 ms and of 1 us from there to 21 ms, the maximum kept
 * exactly. Percentiles are the lower edge of their bucket. Real-time safe once cbt_init has run:
 * the callback reads the clock (a vDSO call, no system call) and increments a bucket.
 *
 * Output: "callback_us count=N p50=2.3 p99=3.1 max=40.2 period_us=P" on stderr.
 */
#ifndef JACKHOST_BENCH_CALLBACK_TIMER_H
#define JACKHOST_BENCH_CALLBACK_TIMER_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { CBT_FINE = 10000, CBT_COARSE = 20000, CBT_BUCKETS = CBT_FINE + CBT_COARSE };

static uint32_t *cbt_buckets;
static uint64_t cbt_max_ns;
static long long cbt_count;

/* Allocates and touches every bucket; 0 on failure. */
static int cbt_init(void) {
    cbt_buckets = calloc(CBT_BUCKETS, sizeof *cbt_buckets);
    return cbt_buckets != NULL;
}

static inline uint64_t cbt_now_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

static inline void cbt_record(uint64_t ns) {
    uint64_t tenths = ns / 100;
    uint64_t index = tenths < CBT_FINE ? tenths : CBT_FINE + ns / 1000 - CBT_FINE / 10;
    cbt_buckets[index < CBT_BUCKETS ? index : CBT_BUCKETS - 1]++;
    if (ns > cbt_max_ns) cbt_max_ns = ns;
    cbt_count++;
}

static double cbt_lower_bound(int index) {
    return index < CBT_FINE ? index / 10.0 : (double)(index - CBT_FINE + CBT_FINE / 10);
}

static double cbt_percentile(double p) {
    if (cbt_count == 0) return 0;
    long long target = (long long)((double)cbt_count * p + 0.999999999);
    long long seen = 0;
    for (int i = 0; i < CBT_BUCKETS; i++) {
        seen += cbt_buckets[i];
        if (seen >= target) return cbt_lower_bound(i);
    }
    return cbt_lower_bound(CBT_BUCKETS - 1);
}

static void cbt_print(double period_us) {
    fprintf(stderr, "callback_us count=%lld p50=%.1f p99=%.1f max=%.1f period_us=%.0f\n", cbt_count,
            cbt_percentile(0.50), cbt_percentile(0.99), (double)(cbt_max_ns / 100) / 10.0, period_us);
}

#endif
