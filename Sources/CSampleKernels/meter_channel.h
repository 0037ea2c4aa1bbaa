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

struct jh_meter_channel {
    // Published by the real-time thread (relaxed stores), read by displays.
    _Atomic uint32_t window_peak_bits;
    _Atomic uint32_t total_peak_bits;
    _Atomic uint64_t total_sum_bits;
    _Atomic int64_t frames;
    _Atomic int64_t clips;
    // The real-time thread's own running values.
    float window_peak;
    float total_peak;
    double total_sum;
    int64_t clip_count;
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct jh_meter_channel) == 64, "one cache line per channel");

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

/// Real-time: one block's measurement of one channel into its state. The window peak is
/// published when it grows, and when a new window starts (so a display sees the restart).
static inline void jh_meter_channel_add(struct jh_meter_channel *state, size_t frames, float peak, double sum,
                                        int clipped, int new_window) {
    if (new_window) state->window_peak = 0;
    if (peak > state->window_peak) {
        state->window_peak = peak;
        atomic_store_explicit(&state->window_peak_bits, jh_float_bits(peak), memory_order_relaxed);
    } else if (new_window) {
        atomic_store_explicit(&state->window_peak_bits, jh_float_bits(state->window_peak), memory_order_relaxed);
    }
    if (peak > state->total_peak) {
        state->total_peak = peak;
        atomic_store_explicit(&state->total_peak_bits, jh_float_bits(peak), memory_order_relaxed);
    }
    state->total_sum += sum;
    atomic_store_explicit(&state->total_sum_bits, jh_double_bits(state->total_sum), memory_order_relaxed);
    // The real-time thread is the only writer: a load and a store, not a locked add.
    atomic_store_explicit(&state->frames,
                          atomic_load_explicit(&state->frames, memory_order_relaxed) + (int64_t)frames,
                          memory_order_relaxed);
    if (clipped > 0) {
        state->clip_count += clipped;
        atomic_store_explicit(&state->clips, state->clip_count, memory_order_relaxed);
    }
}

#endif
