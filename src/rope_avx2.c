/* rope_avx2.c: AVX2 RoPE rotation of all heads of one token, f32 and bf16
 * data (8 channels per vector). Compiled with -mavx2 -mfma -ffp-contract=off:
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

void rope_rotate_token_bf16_avx2_(void *x, size_t heads, size_t head_stride, int32_t pairs,
                                  posenc_layout layout, const float *c, const float *s, const float *dup) {
    const size_t P = (size_t)pairs;
    for (size_t h = 0; h < heads; h++) {
        uint16_t *v = (uint16_t *)x + h * head_stride;
        if (layout == POSENC_LAYOUT_HALF) {
            size_t k = 0;
            for (; k + 8 <= P; k += 8) {
                __m256 a = load_bf16(v + k), b = load_bf16(v + P + k);
                __m256 ck = _mm256_loadu_ps(c + k), sk = _mm256_loadu_ps(s + k);
                store_bf16(v + k, _mm256_sub_ps(_mm256_mul_ps(a, ck), _mm256_mul_ps(b, sk)));
                store_bf16(v + P + k, _mm256_add_ps(_mm256_mul_ps(b, ck), _mm256_mul_ps(a, sk)));
            }
            if (k < P) rope_rotate_pairs_bf16_(v, pairs, (int32_t)k, layout, c, s);
        } else {
            size_t i = 0;
            for (; i + 8 <= 2 * P; i += 8) store_bf16(v + i, rot_interleaved(load_bf16(v + i), dup, P, i));
            if (i < 2 * P) rope_rotate_pairs_bf16_(v, pairs, (int32_t)(i / 2), layout, c, s);
        }
    }
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
        rope_rotate_pairs_bf16_((uint16_t *)x + h * head_stride, pairs, 0, layout, c, s);
}
#endif
