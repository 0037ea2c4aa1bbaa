// meter_state.c
//
// The level meter's per-channel state (see jh_meter_channel in the header). Why in C: the
// real-time update of a block is one call over one contiguous array, instead of a Swift loop
// over per-channel objects that each sit on their own lines of the heap. At 2 channels that
// loop and its misses cost more than the measuring (bench case 2c, BENCHMARKS.md).
#include "jackhost_sample_kernels.h"
#include "meter_channel.h"

#include <stdlib.h>

jh_meter_channel *jh_meter_channels_create(size_t count) {
    // Whole cache lines (aligned_alloc wants a multiple of the alignment).
    size_t bytes = ((count ? count : 1) * sizeof(struct jh_meter_channel) + 63) / 64 * 64;
    struct jh_meter_channel *states = aligned_alloc(64, bytes);
    if (states) memset(states, 0, bytes);   // all-zero bits: every atomic 0, every total 0.0
    return states;
}

void jh_meter_channels_destroy(jh_meter_channel *states) { free(states); }

void jh_meter_accumulate(jh_meter_channel *states, size_t count, size_t frames, const float *peaks,
                         const double *sums, const int *clips, int new_window) {
    for (size_t channel = 0; channel < count; channel++)
        jh_meter_channel_add(states + channel, frames, peaks[channel], sums[channel], clips[channel], new_window);
}

jh_meter_reading jh_meter_channel_read(const jh_meter_channel *states, size_t index) {
    const struct jh_meter_channel *state = states + index;
    uint32_t window_bits = atomic_load_explicit(&state->window_peak_bits, memory_order_relaxed);
    uint32_t total_bits = atomic_load_explicit(&state->total_peak_bits, memory_order_relaxed);
    uint64_t sum_bits = atomic_load_explicit(&state->total_sum_bits, memory_order_relaxed);
    jh_meter_reading reading;
    memcpy(&reading.window_peak, &window_bits, sizeof window_bits);
    memcpy(&reading.total_peak, &total_bits, sizeof total_bits);
    memcpy(&reading.total_sum, &sum_bits, sizeof sum_bits);
    reading.frames = atomic_load_explicit(&state->frames, memory_order_relaxed);
    reading.clips = atomic_load_explicit(&state->clips, memory_order_relaxed);
    return reading;
}
