#include "cbaselines.h"
#include <math.h>
#include <string.h>

// One sample per iteration: no vectorising, no interleaving of iterations.
#define SCALAR_LOOP _Pragma("clang loop vectorize(disable) interleave(disable)")

static inline int32_t round_clamped(float x, float limit) {
    if (x != x) return 0;                       // NaN
    if (x < -1.0f) x = -1.0f;
    if (x > 1.0f) x = 1.0f;
    long r = lrintf(x * limit);                 // exact scale (a power of two); rounds half to even
    return r >= (long)limit ? (int32_t)((long)limit - 1) : (int32_t)r;  // only the top can overflow
}

void cb_float_to_int16(const float *src, int16_t *dst, size_t n) {
    SCALAR_LOOP
    for (size_t i = 0; i < n; i++) dst[i] = (int16_t)round_clamped(src[i], 32768.0f);
}

void cb_float_to_int24(const float *src, int32_t *dst, size_t n) {
    SCALAR_LOOP
    for (size_t i = 0; i < n; i++) dst[i] = round_clamped(src[i], 8388608.0f);
}

void cb_float_to_int24_left_justified(const float *src, int32_t *dst, size_t n) {
    SCALAR_LOOP
    for (size_t i = 0; i < n; i++) dst[i] = (int32_t)((uint32_t)round_clamped(src[i], 8388608.0f) << 8);
}

void cb_float_to_int32(const float *src, int32_t *dst, size_t n) {
    SCALAR_LOOP
    for (size_t i = 0; i < n; i++) {
        float x = src[i];
        if (x != x) { dst[i] = 0; continue; }
        if (x < -1.0f) x = -1.0f;
        if (x > 1.0f) x = 1.0f;
        float y = x * 2147483648.0f;
        dst[i] = y >= 2147483648.0f ? INT32_MAX : (int32_t)lrintf(y);
    }
}

void cb_float_to_fixed8_24(const float *src, int32_t *dst, size_t n) {
    SCALAR_LOOP
    for (size_t i = 0; i < n; i++) {
        float x = src[i];
        if (x != x) { dst[i] = 0; continue; }
        float y = x * 16777216.0f;
        if (y >= 2147483648.0f) dst[i] = INT32_MAX;
        else if (y < -2147483648.0f) dst[i] = INT32_MIN;
        else dst[i] = (int32_t)lrintf(y);
    }
}

void cb_interleave(const float *const *src, size_t channels, size_t frames, float *dst) {
    for (size_t f = 0; f < frames; f++) {
        SCALAR_LOOP
        for (size_t c = 0; c < channels; c++) dst[f * channels + c] = src[c][f];
    }
}

void cb_encode_int16_interleaved(const float *const *src, size_t channels, size_t frames, int16_t *dst) {
    for (size_t f = 0; f < frames; f++) {
        SCALAR_LOOP
        for (size_t c = 0; c < channels; c++) dst[f * channels + c] = (int16_t)round_clamped(src[c][f], 32768.0f);
    }
}

void cb_measure(const float *src, size_t n, float *peak, double *sum_squares, long *clips) {
    float p = 0, sum = 0;
    long c = 0;
    SCALAR_LOOP
    for (size_t i = 0; i < n; i++) {
        float x = src[i], m = fabsf(x);
        p = m > p ? m : p;
        sum += x * x;
        c += m >= 1.0f;
    }
    *peak = p;
    *sum_squares = sum;
    *clips = c;
}

void cb_memcpy(void *dst, const void *src, size_t bytes) { memcpy(dst, src, bytes); }

void cb_copy_block_into_ring(const float *const *src, size_t channels, size_t frames, float *ring,
                             size_t capacity_frames, size_t offset) {
    size_t first = capacity_frames - offset < frames ? capacity_frames - offset : frames;
    for (size_t c = 0; c < channels; c++) {
        float *plane = ring + c * capacity_frames;
        memcpy(plane + offset, src[c], first * sizeof(float));
        if (first < frames) memcpy(plane, src[c] + first, (frames - first) * sizeof(float));
    }
}
