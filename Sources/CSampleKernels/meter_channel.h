// meter_channel.h (private to CSampleKernels)
//
// The layout of jh_meter_channel and its real-time update, shared by the portable
// accumulator (meter_state.c) and the AVX2 block kernel (sample_kernels.c) so both update a
// channel in exactly the same way.
#ifndef JACKHOST_METER_CHANNEL_H
#define JACKHOST_METER_CHANNEL_H

#include "jackhost_sample_kernels.h"

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

// Published by the real-time thread (relaxed stores), read by displays. The real-time thread is
// the only writer, so it reads its running values back from these (relaxed loads, plain moves on
// x86) instead of keeping private copies: 32 bytes a channel, two channels to a cache line. The
// callback touches every channel's state every cycle, and at small widths those lines are what
// it waits for (Benchmarks/FINDINGS.md, F10): 64 bytes a channel before.
struct jh_meter_channel {
    _Atomic uint32_t window_peak_bits;
    _Atomic uint32_t total_peak_bits;
    _Atomic uint64_t total_sum_bits;
    _Atomic int64_t frames;
    _Atomic int64_t clips;
} __attribute__((aligned(32)));

_Static_assert(sizeof(struct jh_meter_channel) == 32, "two channels per cache line");

static inline uint32_t jh_float_bits(float value) {
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    return bits;
}

static inline uint64_t jh_double_bits(double value) {
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    return bits;
}

static inline float jh_bits_float(uint32_t bits) {
    float value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

static inline double jh_bits_double(uint64_t bits) {
    double value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

/// Real-time: one block's measurement of one channel into its state. The window peak is
/// published when it grows, and when a new window starts (so a display sees the restart).
static inline void jh_meter_channel_add(struct jh_meter_channel *state, size_t frames, float peak, double sum,
                                        int clipped, int new_window) {
    // The real-time thread is the only writer: each update is a load and a store, not a locked
    // read-modify-write.
    float window = new_window ? 0.0f : jh_bits_float(atomic_load_explicit(&state->window_peak_bits, memory_order_relaxed));
    if (peak > window) {
        atomic_store_explicit(&state->window_peak_bits, jh_float_bits(peak), memory_order_relaxed);
    } else if (new_window) {
        atomic_store_explicit(&state->window_peak_bits, jh_float_bits(window), memory_order_relaxed);
    }
    if (peak > jh_bits_float(atomic_load_explicit(&state->total_peak_bits, memory_order_relaxed)))
        atomic_store_explicit(&state->total_peak_bits, jh_float_bits(peak), memory_order_relaxed);
    double total = jh_bits_double(atomic_load_explicit(&state->total_sum_bits, memory_order_relaxed)) + sum;
    atomic_store_explicit(&state->total_sum_bits, jh_double_bits(total), memory_order_relaxed);
    atomic_store_explicit(&state->frames,
                          atomic_load_explicit(&state->frames, memory_order_relaxed) + (int64_t)frames,
                          memory_order_relaxed);
    if (clipped > 0)
        atomic_store_explicit(&state->clips, atomic_load_explicit(&state->clips, memory_order_relaxed) + clipped,
                              memory_order_relaxed);
}

#endif
