// sample_kernels.c
//
// AVX2 float32 -> wire-format kernels (see include/jackhost_sample_kernels.h for why they
// are in C). Each conversion is defined by the scalar reference formulas in
// SampleConversion.swift: NaN to 0, clamp, scale by a power of two (exact), round half to
// even, saturate. Here the rounding is one cvtps2dq, which rounds with MXCSR's mode:
// round-to-nearest-even, the IEEE default that Swift and C never change.
//
// Layout of the work: every format has an 8-lane "store8" (convert 8 floats, write
// 8 samples); the loops below are written once and inlined per format with the format a
// compile-time constant, so each public entry point's switch picks a fully specialised loop.
// Interleaving transposes 8 channels x 8 frames in registers and writes whole frames.
#include "jackhost_sample_kernels.h"
#include "meter_channel.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int jh_sample_kernels_avx2 = 0;

size_t jh_wire_bytes_per_sample(jh_wire_format format) {
    switch (format) {
    case JH_WIRE_INT16: return 2;
    case JH_WIRE_INT24_PACKED: return 3;
    default: return 4;
    }
}

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

/// Whether the CPU has AVX2, found once before main (-1 until then).
static int jh_cpu_avx2 = -1;

static int jh_detect_cpu_avx2(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") ? 1 : 0;
}

// A plain load after start-up: the meter's precondition asks it every cycle, and asking the
// CPU each time (__builtin_cpu_init) cost the real-time thread a call chain per cycle.
int jh_sample_kernels_cpu_has_avx2(void) {
    return jh_cpu_avx2 >= 0 ? jh_cpu_avx2 : jh_detect_cpu_avx2();
}

// Runs before main (and before any Swift code), so the flags are plain globals by the time
// anything reads them: no lazy initialisation on any thread.
__attribute__((constructor)) static void jh_sample_kernels_detect(void) {
    jh_cpu_avx2 = jh_detect_cpu_avx2();
    const char *choice = getenv("JACKHOST_SIMD");
    int portable = choice != NULL && strcmp(choice, "portable") == 0;
    jh_sample_kernels_avx2 = !portable && jh_cpu_avx2;
}

#define AVX2_INLINE static inline __attribute__((target("avx2"), always_inline))
#define AVX2_FUNCTION __attribute__((target("avx2")))

// --- One vector of 8 samples -------------------------------------------------------------

/// NaN lanes become +0 (a NaN is the only value unordered with itself).
AVX2_INLINE __m256 zero_nan(__m256 x) {
    return _mm256_and_ps(x, _mm256_cmp_ps(x, x, _CMP_ORD_Q));
}

/// clamp(x, lower, upper) * scale, rounded half to even; NaN already removed.
/// max/min before the multiply: the scale is a power of two, so the product is exact.
AVX2_INLINE __m256i clamp_scale_round(__m256 x, float lower, float upper, float scale) {
    __m256 clamped = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(lower)), _mm256_set1_ps(upper));
    return _mm256_cvtps_epi32(_mm256_mul_ps(clamped, _mm256_set1_ps(scale)));
}

/// cvtps2dq answers 0x80000000 for every lane >= 2^31; flipping all bits of those lanes
/// gives 0x7FFFFFFF, the saturated top. Lanes below -2^31 are already 0x80000000.
AVX2_INLINE __m256i saturate_top(__m256i rounded, __m256 scaled) {
    __m256 over = _mm256_cmp_ps(scaled, _mm256_set1_ps(2147483648.0f), _CMP_GE_OQ);
    return _mm256_xor_si256(rounded, _mm256_castps_si256(over));
}

/// 24-bit lanes; the top is clamped to 1 - 2^-23 (exact), which maps to 8388607, so no
/// lane can round up out of range.
AVX2_INLINE __m256i int24_lanes(__m256 x) {
    return clamp_scale_round(zero_nan(x), -1.0f, 8388607.0f / 8388608.0f, 8388608.0f);
}

/// 16-bit lanes of one vector (widened to int32), for JH_WIRE_INT16.
AVX2_INLINE __m256i int16_lanes(__m256 x) {
    // 1 - 2^-15 maps to 32767, so the later pack never saturates.
    return clamp_scale_round(zero_nan(x), -1.0f, 32767.0f / 32768.0f, 32768.0f);
}

/// Converts 8 floats to `format` and writes exactly 8 samples (8 * bytes) at `out`.
AVX2_INLINE void store8(jh_wire_format format, __m256 x, unsigned char *out) {
    switch (format) {
    case JH_WIRE_FLOAT32:
        _mm256_storeu_ps((float *)out, x);
        break;
    case JH_WIRE_INT16: {
        __m256i lanes = int16_lanes(x);
        __m128i packed = _mm_packs_epi32(_mm256_castsi256_si128(lanes), _mm256_extracti128_si256(lanes, 1));
        _mm_storeu_si128((__m128i *)out, packed);
        break;
    }
    case JH_WIRE_INT24_PACKED: {
        // Per 128-bit half: keep bytes 0-2 of each int32 (12 bytes, then 4 zeros); then move
        // the upper half's 12 bytes down next to the lower half's: 24 contiguous bytes.
        const __m256i pick = _mm256_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1,
                                              0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1);
        __m256i bytes = _mm256_shuffle_epi8(int24_lanes(x), pick);
        __m256i packed = _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 7, 7));
        _mm_storeu_si128((__m128i *)out, _mm256_castsi256_si128(packed));
        _mm_storel_epi64((__m128i *)(out + 16), _mm256_extracti128_si256(packed, 1));
        break;
    }
    case JH_WIRE_INT32: {
        // The reference clamps to [-1, 1] first; unclamped gives the same: below -1 the scaled
        // value is < -2^31, which cvtps2dq already answers with INT32_MIN, and above 1 it is
        // >= 2^31, which saturate_top turns into INT32_MAX. Two instructions fewer.
        __m256 scaled = _mm256_mul_ps(zero_nan(x), _mm256_set1_ps(2147483648.0f));
        _mm256_storeu_si256((__m256i *)out, saturate_top(_mm256_cvtps_epi32(scaled), scaled));
        break;
    }
    case JH_WIRE_FIXED8_24: {
        // No clamp: 8.24 spans [-128, 128); outside it (and +-inf) saturates.
        __m256 scaled = _mm256_mul_ps(zero_nan(x), _mm256_set1_ps(16777216.0f));
        _mm256_storeu_si256((__m256i *)out, saturate_top(_mm256_cvtps_epi32(scaled), scaled));
        break;
    }
    case JH_WIRE_INT24_IN_INT32:
        _mm256_storeu_si256((__m256i *)out, int24_lanes(x));
        break;
    case JH_WIRE_INT24_LEFT_JUSTIFIED:
        _mm256_storeu_si256((__m256i *)out, _mm256_slli_epi32(int24_lanes(x), 8));
        break;
    }
}

/// Converts `lanes` (< 8) floats from `samples` and writes exactly `lanes` samples at `out`.
/// Tails go through the same store8, so they cannot round differently.
AVX2_INLINE void store_partial(jh_wire_format format, const float samples[8], size_t lanes, unsigned char *out) {
    float padded[8] = {0};
    unsigned char converted[32];
    memcpy(padded, samples, lanes * sizeof(float));
    store8(format, _mm256_loadu_ps(padded), converted);
    memcpy(out, converted, lanes * jh_wire_bytes_per_sample(format));
}

// --- Loops ---------------------------------------------------------------------------------

/// One contiguous run: 16 samples per iteration (two independent vectors), then the tail.
AVX2_INLINE void convert_run(jh_wire_format format, const float *source, unsigned char *out, size_t count) {
    const size_t bytes = jh_wire_bytes_per_sample(format);
    size_t index = 0;
    for (; index + 16 <= count; index += 16) {
        store8(format, _mm256_loadu_ps(source + index), out + index * bytes);
        store8(format, _mm256_loadu_ps(source + index + 8), out + (index + 8) * bytes);
    }
    for (; index + 8 <= count; index += 8) store8(format, _mm256_loadu_ps(source + index), out + index * bytes);
    if (index < count) store_partial(format, source + index, count - index, out + index * bytes);
}

/// Transposes an 8x8 block of floats held as 8 rows.
AVX2_INLINE void transpose8x8(__m256 rows[8]) {
    __m256 pairs[8], quads[8];
    for (int i = 0; i < 8; i += 2) {
        pairs[i] = _mm256_unpacklo_ps(rows[i], rows[i + 1]);
        pairs[i + 1] = _mm256_unpackhi_ps(rows[i], rows[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) {
        quads[i] = _mm256_shuffle_ps(pairs[i], pairs[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
        quads[i + 1] = _mm256_shuffle_ps(pairs[i], pairs[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
        quads[i + 2] = _mm256_shuffle_ps(pairs[i + 1], pairs[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
        quads[i + 3] = _mm256_shuffle_ps(pairs[i + 1], pairs[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (int i = 0; i < 4; i++) {
        rows[i] = _mm256_permute2f128_ps(quads[i], quads[i + 4], 0x20);
        rows[i + 4] = _mm256_permute2f128_ps(quads[i], quads[i + 4], 0x31);
    }
}

/// Eight 16-bit channels x 8 frames: convert the channel rows, pack them to 16 bits in pairs,
/// then transpose with word/dword/qword unpacks. Half the shuffles of transposing floats
/// first (20 against 40 per 64 samples), which is what limits the float path on 16-bit output.
AVX2_INLINE void interleave8_int16(const float *const *rows, size_t frame, unsigned char *out, size_t frame_stride) {
    __m256i pairs[4];
    for (int pair = 0; pair < 4; pair++)   // per 128-bit half h: row 2p frames 4h..4h+3, then row 2p+1's
        pairs[pair] = _mm256_packs_epi32(int16_lanes(_mm256_loadu_ps(rows[2 * pair] + frame)),
                                         int16_lanes(_mm256_loadu_ps(rows[2 * pair + 1] + frame)));
    // Rows 0-3 and 4-7, frames 4h, 4h+1 (a) and 4h+2, 4h+3 (b), channel order within each frame.
    __m256i even = _mm256_unpacklo_epi16(pairs[0], pairs[1]), odd = _mm256_unpackhi_epi16(pairs[0], pairs[1]);
    __m256i low_a = _mm256_unpacklo_epi16(even, odd), low_b = _mm256_unpackhi_epi16(even, odd);
    even = _mm256_unpacklo_epi16(pairs[2], pairs[3]);
    odd = _mm256_unpackhi_epi16(pairs[2], pairs[3]);
    __m256i high_a = _mm256_unpacklo_epi16(even, odd), high_b = _mm256_unpackhi_epi16(even, odd);
    // Each result: one whole frame (8 channels, 16 bytes) per 128-bit half: frames k and k + 4.
    __m256i frames[4] = {
        _mm256_unpacklo_epi64(low_a, high_a), _mm256_unpackhi_epi64(low_a, high_a),
        _mm256_unpacklo_epi64(low_b, high_b), _mm256_unpackhi_epi64(low_b, high_b),
    };
    for (int k = 0; k < 4; k++) {
        _mm_storeu_si128((__m128i *)(out + k * frame_stride), _mm256_castsi256_si128(frames[k]));
        _mm_storeu_si128((__m128i *)(out + (k + 4) * frame_stride), _mm256_extracti128_si256(frames[k], 1));
    }
}

/// Interleaves channels [first, first + group) of every frame, group <= 8, in blocks of
/// 8 frames: load 8 frames of each channel, transpose, write each frame's run of `group`
/// samples. A short group reads zero rows and writes only its own samples.
AVX2_INLINE void interleave_group(jh_wire_format format, const float *const *channels, size_t channel_count,
                                  size_t first, size_t group, size_t frames, unsigned char *out) {
    const size_t bytes = jh_wire_bytes_per_sample(format);
    const size_t frame_stride = channel_count * bytes;
    size_t frame = 0;
    if (format == JH_WIRE_INT16 && group == 8) {
        for (; frame + 8 <= frames; frame += 8)
            interleave8_int16(channels + first, frame, out + frame * frame_stride + first * bytes, frame_stride);
    }
    for (; frame + 8 <= frames; frame += 8) {
        __m256 rows[8];
        for (size_t row = 0; row < 8; row++)
            rows[row] = row < group ? _mm256_loadu_ps(channels[first + row] + frame) : _mm256_setzero_ps();
        transpose8x8(rows);
        unsigned char *base = out + frame * frame_stride + first * bytes;
        if (group == 8) {
            for (size_t row = 0; row < 8; row++) store8(format, rows[row], base + row * frame_stride);
        } else {
            for (size_t row = 0; row < 8; row++) {
                float lanes[8];
                _mm256_storeu_ps(lanes, rows[row]);
                store_partial(format, lanes, group, base + row * frame_stride);
            }
        }
    }
    for (; frame < frames; frame++) {
        float lanes[8];
        for (size_t channel = 0; channel < group; channel++) lanes[channel] = channels[first + channel][frame];
        store_partial(format, lanes, group, out + frame * frame_stride + first * bytes);
    }
}

/// Stereo: zip the two channels in registers and write whole vectors of interleaved samples.
AVX2_INLINE void interleave_stereo(jh_wire_format format, const float *left, const float *right, size_t frames,
                                   unsigned char *out) {
    const size_t bytes = jh_wire_bytes_per_sample(format);
    size_t frame = 0;
    for (; frame + 8 <= frames; frame += 8) {
        __m256 l = _mm256_loadu_ps(left + frame), r = _mm256_loadu_ps(right + frame);
        __m256 low = _mm256_unpacklo_ps(l, r), high = _mm256_unpackhi_ps(l, r);   // per 128-bit half
        store8(format, _mm256_permute2f128_ps(low, high, 0x20), out + 2 * frame * bytes);
        store8(format, _mm256_permute2f128_ps(low, high, 0x31), out + (2 * frame + 8) * bytes);
    }
    for (; frame < frames; frame++) {
        float pair[8] = {left[frame], right[frame]};
        store_partial(format, pair, 2, out + 2 * frame * bytes);
    }
}

AVX2_INLINE void encode_specialised(jh_wire_format format, const float *const *channels, size_t channel_count,
                                    size_t frames, int interleaved, unsigned char *out) {
    const size_t bytes = jh_wire_bytes_per_sample(format);
    if (!interleaved || channel_count == 1) {
        for (size_t channel = 0; channel < channel_count; channel++)
            convert_run(format, channels[channel], out + channel * frames * bytes, frames);
    } else if (channel_count == 2) {
        interleave_stereo(format, channels[0], channels[1], frames, out);
    } else {
        // Whole groups of 8 first, then the short group; groups write disjoint samples.
        for (size_t first = 0; first < channel_count; first += 8) {
            size_t group = channel_count - first < 8 ? channel_count - first : 8;
            interleave_group(format, channels, channel_count, first, group, frames, out);
        }
    }
}

// --- Entry points: one specialised copy of each loop per format ----------------------------

#define FOR_EACH_FORMAT(format, CALL) \
    switch (format) { \
    case JH_WIRE_FLOAT32: CALL(JH_WIRE_FLOAT32); break; \
    case JH_WIRE_INT16: CALL(JH_WIRE_INT16); break; \
    case JH_WIRE_INT24_PACKED: CALL(JH_WIRE_INT24_PACKED); break; \
    case JH_WIRE_INT32: CALL(JH_WIRE_INT32); break; \
    case JH_WIRE_FIXED8_24: CALL(JH_WIRE_FIXED8_24); break; \
    case JH_WIRE_INT24_IN_INT32: CALL(JH_WIRE_INT24_IN_INT32); break; \
    case JH_WIRE_INT24_LEFT_JUSTIFIED: CALL(JH_WIRE_INT24_LEFT_JUSTIFIED); break; \
    }

AVX2_FUNCTION void jh_avx2_convert(jh_wire_format format, const float *source, void *destination, size_t count) {
#define CONVERT(constant) convert_run(constant, source, (unsigned char *)destination, count)
    FOR_EACH_FORMAT(format, CONVERT)
#undef CONVERT
}

AVX2_FUNCTION void jh_avx2_encode(jh_wire_format format, const float *const *channels, size_t channel_count,
                                  size_t frames, int interleaved, void *destination) {
#define ENCODE(constant) encode_specialised(constant, channels, channel_count, frames, interleaved, (unsigned char *)destination)
    FOR_EACH_FORMAT(format, ENCODE)
#undef ENCODE
}

// --- Prefetching (any CPU) ----------------------------------------------------------------

// --- The meter ------------------------------------------------------------------------------

// Compiled without FMA on purpose: x*x + sum must round twice, as the portable Swift code does.
/// One channel's peak, sum of squares and clip count, in the order the header documents.
AVX2_FUNCTION static inline void jh_avx2_measure_one(const float *source, size_t frames, float *peak_out,
                                                     double *sum_out, int *clips_out) {
    const __m256 sign = _mm256_set1_ps(-0.0f), one = _mm256_set1_ps(1.0f);
    const size_t vector_frames = frames & ~(size_t)7;
    __m256 peak_lanes = _mm256_setzero_ps(), square_lanes = _mm256_setzero_ps();
    __m256i clip_lanes = _mm256_setzero_si256();
    for (size_t index = 0; index < vector_frames; index += 8) {
        __m256 x = _mm256_loadu_ps(source + index);
        __m256 magnitude = _mm256_andnot_ps(sign, x);
        peak_lanes = _mm256_max_ps(magnitude, peak_lanes);   // a NaN magnitude keeps the old peak
        square_lanes = _mm256_add_ps(square_lanes, _mm256_mul_ps(x, x));
        // A true compare is all ones, -1 as an integer: subtracting it counts.
        clip_lanes = _mm256_sub_epi32(clip_lanes, _mm256_castps_si256(_mm256_cmp_ps(magnitude, one, _CMP_GE_OQ)));
    }
    // Horizontal steps in the documented order (see the header).
    __m128 halves = _mm_add_ps(_mm256_castps256_ps128(square_lanes), _mm256_extractf128_ps(square_lanes, 1));
    __m128 pairs = _mm_add_ps(halves, _mm_movehl_ps(halves, halves));
    double sum = (double)_mm_cvtss_f32(_mm_add_ss(pairs, _mm_shuffle_ps(pairs, pairs, 1)));
    __m128 peak_halves = _mm_max_ps(_mm256_castps256_ps128(peak_lanes), _mm256_extractf128_ps(peak_lanes, 1));
    peak_halves = _mm_max_ps(peak_halves, _mm_movehl_ps(peak_halves, peak_halves));
    float peak = _mm_cvtss_f32(_mm_max_ss(peak_halves, _mm_shuffle_ps(peak_halves, peak_halves, 1)));
    __m128i clip_halves = _mm_add_epi32(_mm256_castsi256_si128(clip_lanes), _mm256_extracti128_si256(clip_lanes, 1));
    clip_halves = _mm_add_epi32(clip_halves, _mm_unpackhi_epi64(clip_halves, clip_halves));
    int clipped = _mm_cvtsi128_si32(clip_halves) + _mm_cvtsi128_si32(_mm_shuffle_epi32(clip_halves, 1));
    for (size_t index = vector_frames; index < frames; index++) {
        float x = source[index], magnitude = __builtin_fabsf(x);
        if (magnitude > peak) peak = magnitude;   // NaN compares false: ignored
        float square = x * x;
        sum += (double)square;
        clipped += magnitude >= 1.0f;
    }
    *peak_out = peak;
    *sum_out = sum;
    *clips_out = clipped;
}

AVX2_FUNCTION void jh_avx2_measure_channels(const float *const *channels, size_t channel_count, size_t frames,
                                            float *peaks, double *sums, int *clips) {
    for (size_t channel = 0; channel < channel_count; channel++)
        jh_avx2_measure_one(channels[channel], frames, peaks + channel, sums + channel, clips + channel);
}

AVX2_FUNCTION void jh_avx2_meter_block(jh_meter_channel *states, const float *const *channels, size_t channel_count,
                                       size_t frames, int new_window) {
    for (size_t channel = 0; channel < channel_count; channel++) {
        float peak;
        double sum;
        int clipped;
        jh_avx2_measure_one(channels[channel], frames, &peak, &sum, &clipped);
        jh_meter_channel_add(states + channel, frames, peak, sum, clipped, new_window);
    }
}

// --- Streaming copies (SSE2: every x86_64, no dispatch needed) ------------------------------

void jh_copy_floats_streaming(float *destination, const float *source, size_t count) {
    size_t index = 0;
    // movntps needs a 16-byte-aligned destination: plain stores up to the first one.
    while (index < count && ((uintptr_t)(destination + index) & 15) != 0) {
        destination[index] = source[index];
        index++;
    }
    for (; index + 16 <= count; index += 16) {   // one 64-byte line per iteration
        _mm_stream_ps(destination + index, _mm_loadu_ps(source + index));
        _mm_stream_ps(destination + index + 4, _mm_loadu_ps(source + index + 4));
        _mm_stream_ps(destination + index + 8, _mm_loadu_ps(source + index + 8));
        _mm_stream_ps(destination + index + 12, _mm_loadu_ps(source + index + 12));
    }
    for (; index + 4 <= count; index += 4) _mm_stream_ps(destination + index, _mm_loadu_ps(source + index));
    for (; index < count; index++) destination[index] = source[index];
}

void jh_store_fence(void) { _mm_sfence(); }

#else  // not x86: no AVX2; the portable Swift kernels always run.

void jh_avx2_measure_channels(const float *const *channels, size_t channel_count, size_t frames,
                              float *peaks, double *sums, int *clips) {
    (void)channels; (void)channel_count; (void)frames; (void)peaks; (void)sums; (void)clips;
    abort();
}

void jh_avx2_meter_block(jh_meter_channel *states, const float *const *channels, size_t channel_count,
                         size_t frames, int new_window) {
    (void)states; (void)channels; (void)channel_count; (void)frames; (void)new_window;
    abort();
}

void jh_copy_floats_streaming(float *destination, const float *source, size_t count) {
    memcpy(destination, source, count * sizeof(float));
}

void jh_store_fence(void) { __atomic_thread_fence(__ATOMIC_RELEASE); }


int jh_sample_kernels_cpu_has_avx2(void) { return 0; }

void jh_avx2_convert(jh_wire_format format, const float *source, void *destination, size_t count) {
    (void)format; (void)source; (void)destination; (void)count;
    abort();   // unreachable: callers check jh_sample_kernels_cpu_has_avx2()
}

void jh_avx2_encode(jh_wire_format format, const float *const *channels, size_t channel_count,
                    size_t frames, int interleaved, void *destination) {
    (void)format; (void)channels; (void)channel_count; (void)frames; (void)interleaved; (void)destination;
    abort();
}

#endif
