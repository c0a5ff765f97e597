/* rope_avx2.c: AVX2 RoPE rotation of all heads of one token, f32, bf16 and
 * f16 data (8 channels per vector; f16 through F16C). Compiled with -mavx2
 * -mfma -mf16c -ffp-contract=off:
 * products and sums round separately, as in the scalar reference
 * (rope_apply.c), so every path gives the same bits. */
#include "kernels.h"
#include "rope_fast.h"

#if defined(__AVX2__)
#include <immintrin.h>

static inline __m256 load_bf16(const uint16_t *p) {
    __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}

/* posenc_f32_to_bf16 on 8 lanes (see rope_avx512.c). (u & 0x7fffffff) and
 * 0x7f800000 are both non-negative, so the signed compare is the unsigned one. */
static inline void store_bf16(uint16_t *p, __m256 v) {
    __m256i u = _mm256_castps_si256(v);
    __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff)),
                                     _mm256_set1_epi32(0x7f800000));
    __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    __m256i r = _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff))), 16);
    __m256i q = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
    r = _mm256_blendv_epi8(r, q, nan);
    __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08); /* values <= 0xffff */
    _mm_storeu_si128((__m128i *)p, _mm256_castsi256_si128(packed));
}

/* f16 lanes with F16C (see rope_avx512.c): exact widening, round-to-nearest-even
 * narrowing, NaNs made canonical (sign | 0x7e00) as posenc_f32_to_f16 does. */
static inline __m256 load_f16(const uint16_t *p) { return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p)); }
static inline void store_f16(uint16_t *p, __m256 v) {
    __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    __m256i sign = _mm256_and_si256(_mm256_srli_epi32(_mm256_castps_si256(v), 16), _mm256_set1_epi32(0x8000));
    __m256i canonical = _mm256_or_si256(sign, _mm256_set1_epi32(0x7e00));
    __m256i fixed = _mm256_blendv_epi8(_mm256_cvtepu16_epi32(h), canonical, nan);
    __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(fixed, fixed), 0x08); /* values <= 0xffff */
    _mm_storeu_si128((__m128i *)p, _mm256_castsi256_si128(packed));
}

static inline __m256 rot_interleaved(__m256 x, const float *dup, size_t pairs, size_t i) {
    __m256 cd = _mm256_loadu_ps(dup + i), sd = _mm256_loadu_ps(dup + 2 * pairs + i);
    return _mm256_add_ps(_mm256_mul_ps(x, cd), _mm256_mul_ps(_mm256_permute_ps(x, 0xB1), sd));
}

void rope_rotate_token_f32_avx2_(void *x, size_t heads, size_t head_stride, int32_t pairs,
                                 posenc_layout layout, const float *c, const float *s, const float *dup) {
    const size_t P = (size_t)pairs;
    for (size_t h = 0; h < heads; h++) {
        float *v = (float *)x + h * head_stride;
        if (layout == POSENC_LAYOUT_HALF) {
            size_t k = 0;
            for (; k + 8 <= P; k += 8) {
                __m256 a = _mm256_loadu_ps(v + k), b = _mm256_loadu_ps(v + P + k);
                __m256 ck = _mm256_loadu_ps(c + k), sk = _mm256_loadu_ps(s + k);
                _mm256_storeu_ps(v + k, _mm256_sub_ps(_mm256_mul_ps(a, ck), _mm256_mul_ps(b, sk)));
                _mm256_storeu_ps(v + P + k, _mm256_add_ps(_mm256_mul_ps(b, ck), _mm256_mul_ps(a, sk)));
            }
            if (k < P) rope_rotate_pairs_f32_(v, pairs, (int32_t)k, layout, c, s);
        } else {
            size_t i = 0;
            for (; i + 8 <= 2 * P; i += 8) _mm256_storeu_ps(v + i, rot_interleaved(_mm256_loadu_ps(v + i), dup, P, i));
            if (i < 2 * P) rope_rotate_pairs_f32_(v, pairs, (int32_t)(i / 2), layout, c, s);
        }
    }
}

/* bf16 and f16 share the loop; f16 is a compile-time constant in each caller */
static inline __m256 load16(const uint16_t *p, bool f16) { return f16 ? load_f16(p) : load_bf16(p); }
static inline void store16(uint16_t *p, __m256 v, bool f16) {
    if (f16) store_f16(p, v);
    else store_bf16(p, v);
}

static inline void rotate_token_16(void *x, size_t heads, size_t head_stride, int32_t pairs, posenc_layout layout,
                                   const float *c, const float *s, const float *dup, const bool f16) {
    const size_t P = (size_t)pairs;
    for (size_t h = 0; h < heads; h++) {
        uint16_t *v = (uint16_t *)x + h * head_stride;
        if (layout == POSENC_LAYOUT_HALF) {
            size_t k = 0;
            for (; k + 8 <= P; k += 8) {
                __m256 a = load16(v + k, f16), b = load16(v + P + k, f16);
                __m256 ck = _mm256_loadu_ps(c + k), sk = _mm256_loadu_ps(s + k);
                store16(v + k, _mm256_sub_ps(_mm256_mul_ps(a, ck), _mm256_mul_ps(b, sk)), f16);
                store16(v + P + k, _mm256_add_ps(_mm256_mul_ps(b, ck), _mm256_mul_ps(a, sk)), f16);
            }
            if (k < P) rope_rotate_pairs_16_(v, pairs, (int32_t)k, layout, c, s, f16);
        } else {
            size_t i = 0;
            for (; i + 8 <= 2 * P; i += 8) store16(v + i, rot_interleaved(load16(v + i, f16), dup, P, i), f16);
            if (i < 2 * P) rope_rotate_pairs_16_(v, pairs, (int32_t)(i / 2), layout, c, s, f16);
        }
    }
}

void rope_rotate_token_bf16_avx2_(void *x, size_t heads, size_t head_stride, int32_t pairs,
                                  posenc_layout layout, const float *c, const float *s, const float *dup) {
    rotate_token_16(x, heads, head_stride, pairs, layout, c, s, dup, false);
}

void rope_rotate_token_f16_avx2_(void *x, size_t heads, size_t head_stride, int32_t pairs,
                                 posenc_layout layout, const float *c, const float *s, const float *dup) {
    rotate_token_16(x, heads, head_stride, pairs, layout, c, s, dup, true);
}
#else
/* Built without the ISA flags (not x86-64): never selected (posenc_kernel_path_supported). */
void rope_rotate_token_f32_avx2_(void *x, size_t heads, size_t head_stride, int32_t pairs,
                                 posenc_layout layout, const float *c, const float *s, const float *dup) {
    (void)dup;
    rope_rotate_token_f32_(x, heads, head_stride, pairs, layout, c, s);
}
void rope_rotate_token_bf16_avx2_(void *x, size_t heads, size_t head_stride, int32_t pairs,
                                  posenc_layout layout, const float *c, const float *s, const float *dup) {
    (void)dup;
    for (size_t h = 0; h < heads; h++)
        rope_rotate_pairs_16_((uint16_t *)x + h * head_stride, pairs, 0, layout, c, s, false);
}
void rope_rotate_token_f16_avx2_(void *x, size_t heads, size_t head_stride, int32_t pairs,
                                 posenc_layout layout, const float *c, const float *s, const float *dup) {
    (void)dup;
    for (size_t h = 0; h < heads; h++)
        rope_rotate_pairs_16_((uint16_t *)x + h * head_stride, pairs, 0, layout, c, s, true);
}
#endif
