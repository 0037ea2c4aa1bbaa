// The peers of the kernel benchmarks: what a C programmer would write without SIMD.
// Each conversion computes exactly what SampleConversion's reference formulas define
// (NaN to 0, clamp, scale, round half to even, saturate), one sample per iteration,
// with the compiler's auto-vectoriser switched off for the loop. kernel-bench checks
// that every SIMD kernel and its scalar peer produce identical output before timing.
#ifndef CBASELINES_H
#define CBASELINES_H
#include <stddef.h>
#include <stdint.h>

void cb_float_to_int16(const float *src, int16_t *dst, size_t n);
void cb_float_to_int24(const float *src, int32_t *dst, size_t n);
/// int24 in the top 24 bits (what libsndfile's sf_write_int takes for 24-bit files).
void cb_float_to_int24_left_justified(const float *src, int32_t *dst, size_t n);
void cb_float_to_int32(const float *src, int32_t *dst, size_t n);
void cb_float_to_fixed8_24(const float *src, int32_t *dst, size_t n);
/// dst[frame * channels + channel] = src[channel][frame]
void cb_interleave(const float *const *src, size_t channels, size_t frames, float *dst);
/// Interleaved 16-bit PCM, what a stream of s16 writes: dst[frame * channels + channel].
void cb_encode_int16_interleaved(const float *const *src, size_t channels, size_t frames, int16_t *dst);
/// What LevelMeter.measure computes, one sample per iteration: peak |x|, sum of x*x (as float,
/// widened at the end like the meter), and how many samples have |x| >= 1.
void cb_measure(const float *src, size_t n, float *peak, double *sum_squares, long *clips);
/// memcpy, behind a call the optimiser cannot see through.
void cb_memcpy(void *dst, const void *src, size_t bytes);
/// The deferred-delivery peer: copies one block of planar channels into a planar ring laid out
/// like AudioBlockRing (channel c at c * capacity_frames), at `offset`, wrapping at the end.
void cb_copy_block_into_ring(const float *const *src, size_t channels, size_t frames, float *ring,
                             size_t capacity_frames, size_t offset);

#endif
