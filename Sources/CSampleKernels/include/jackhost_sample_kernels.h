// jackhost_sample_kernels.h
//
// AVX2 sample-conversion kernels for JackHost, chosen at run time.
//
// Why C: Swift compiles a whole module for one target CPU (baseline SSE2 on Linux
// x86_64) and has no per-function target attribute, so it cannot hold an AVX2 kernel
// beside a portable one in one binary. C can (`__attribute__((target("avx2")))`), and
// the CPU check runs once, in a constructor, before main. The portable kernels stay in
// Swift (JackHostConsumers/SampleConversion.swift) and define the results: these kernels
// must match them bit for bit, and the tests check that lane by lane.
//
// Every function here is allocation-free, lock-free and makes no system call.
#ifndef JACKHOST_SAMPLE_KERNELS_H
#define JACKHOST_SAMPLE_KERNELS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Output sample layouts, all little-endian, all from JACK's float32.
typedef enum {
    JH_WIRE_FLOAT32 = 0,        ///< IEEE float32, unchanged.
    JH_WIRE_INT16 = 1,          ///< Signed 16-bit PCM.
    JH_WIRE_INT24_PACKED = 2,   ///< Signed 24-bit PCM in 3 bytes.
    JH_WIRE_INT32 = 3,          ///< Signed 32-bit PCM.
    JH_WIRE_FIXED8_24 = 4,      ///< Signed 8.24 fixed point in 32 bits.
    JH_WIRE_INT24_IN_INT32 = 5, ///< Signed 24-bit PCM in the low 24 bits of an int32 (sign-extended).
    JH_WIRE_INT24_LEFT_JUSTIFIED = 6, ///< Signed 24-bit PCM shifted left by 8 in an int32 (libsndfile's int).
} jh_wire_format;

/// Set once before main (a constructor): see jh_sample_kernels_use_avx2.
extern int jh_sample_kernels_avx2;

/// Non-zero when the AVX2 kernels should be used: the CPU supports AVX2 and the environment
/// variable JACKHOST_SIMD was not "portable" at start-up. One load, safe on any thread.
static inline int jh_sample_kernels_use_avx2(void) { return jh_sample_kernels_avx2; }

/// Non-zero when this CPU supports AVX2, whatever JACKHOST_SIMD says (tests use it).
int jh_sample_kernels_cpu_has_avx2(void);

/// Bytes one sample of `format` occupies in the output.
size_t jh_wire_bytes_per_sample(jh_wire_format format);

/// Converts `count` contiguous floats into `format` at `destination` (any alignment).
/// Requires jh_sample_kernels_cpu_has_avx2().
void jh_avx2_convert(jh_wire_format format, const float *source, void *destination, size_t count);

/// Converts `channel_count` planar channels of `frames` samples into `format` at
/// `destination` (any alignment), frame-major (interleaved: L R L R ...) when
/// `interleaved` is non-zero, otherwise one run per channel.
/// Requires jh_sample_kernels_cpu_has_avx2().
void jh_avx2_encode(jh_wire_format format, const float *const *channels, size_t channel_count,
                    size_t frames, int interleaved, void *destination);

/// The meter's measurement of every channel of one block, in one call (a call per 64-frame
/// channel costs more than the work). For each channel c: peaks[c] = the largest |x| (NaN
/// ignored), sums[c] = the sum of x*x and clips[c] = the number of |x| >= 1. The order of the
/// arithmetic is defined, so the portable Swift code (LevelMeter.measure) gets identical bits:
/// 8 float lanes accumulate x*x (multiply, then add; never fused) over the first frames & ~7
/// samples; the lanes are summed as (l0+l4, l1+l5, l2+l6, l3+l7), then (a0+a2, a1+a3), then
/// b0+b1, widened to double; each remaining sample adds (double)(x*x).
/// Requires jh_sample_kernels_cpu_has_avx2(). Real-time safe.
void jh_avx2_measure_channels(const float *const *channels, size_t channel_count, size_t frames,
                              float *peaks, double *sums, int *clips);

/// A level meter's state for one channel: the running values the real-time thread publishes to
/// displays with relaxed atomic stores (and reads back, as their only writer). 32 bytes per
/// channel, two to a cache line, so a block's update touches half a line per channel and nothing
/// else. Opaque: made by
/// jh_meter_channels_create, read by jh_meter_channel_read.
typedef struct jh_meter_channel jh_meter_channel;

/// What a display reads of one channel (each field one relaxed atomic load).
typedef struct {
    float window_peak;    ///< The largest |x| since the window last restarted.
    float total_peak;     ///< The largest |x| since the meter was prepared.
    double total_sum;     ///< The sum of x*x since the meter was prepared.
    long long frames;     ///< Frames measured since the meter was prepared.
    long long clips;      ///< Samples with |x| >= 1 since the meter was prepared.
} jh_meter_reading;

/// `count` zeroed channel states on their own cache lines, or NULL when out of memory.
/// Not real-time safe (it allocates).
jh_meter_channel *jh_meter_channels_create(size_t count);

/// Frees what jh_meter_channels_create returned (NULL is ignored).
void jh_meter_channels_destroy(jh_meter_channel *states);

/// Adds one block's measurements to `count` channels: peaks[c], sums[c] and clips[c] as
/// jh_avx2_measure_channels defines them, over `frames` frames. With `new_window` non-zero the
/// window peak restarts at this block. Real-time safe.
void jh_meter_accumulate(jh_meter_channel *states, size_t count, size_t frames, const float *peaks,
                         const double *sums, const int *clips, int new_window);

/// jh_avx2_measure_channels and jh_meter_accumulate in one pass: each channel is measured and
/// its state updated while its totals are in registers. Identical results to the two calls.
/// Requires jh_sample_kernels_cpu_has_avx2(). Real-time safe.
void jh_avx2_meter_block(jh_meter_channel *states, const float *const *channels, size_t channel_count,
                         size_t frames, int new_window);

/// Channel `index`'s published values. Safe on any thread, beside the real-time writer.
jh_meter_reading jh_meter_channel_read(const jh_meter_channel *states, size_t index);

/// Copies `count` floats for another thread to read later, with non-temporal (streaming)
/// stores where the CPU has them (SSE2, every x86_64): the destination lines are written
/// without first being read into this core's cache, which a cold ring would otherwise cost on
/// every cycle. Not ordered with later stores: call jh_store_fence() before publishing.
/// Real-time safe: no allocation, no lock, no system call.
void jh_copy_floats_streaming(float *destination, const float *source, size_t count);

/// Orders the streaming stores before every later store (sfence), so a reader that sees a
/// later release store sees the copied samples.
void jh_store_fence(void);

#ifdef __cplusplus
}
#endif

#endif
