/* rope_avx512.c: AVX-512 RoPE rotation of all heads of one token, f32, bf16
 * and f16 data (16 channels per vector). Compiled with -mavx512f/bw/dq/vl
 * -ffp-contract=off: products and sums round separately, as in the scalar
 * reference (rope_apply.c), so every path gives the same bits. */
#include "kernels.h"
#include "rope_fast.h"

#if defined(__AVX512F__)
#include <immintrin.h>

static inline __m512 load_bf16(const uint16_t *p) {
    __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
}

/* posenc_f32_to_bf16 on 16 lanes: NaN -> quiet (top bits | 0x40), else round
 * to nearest even by adding 0x7fff + lsb. */
static inline void store_bf16(uint16_t *p, __m512 v) {
    __m512i u = _mm512_castps_si512(v);
    __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)),
                                            _mm512_set1_epi32(0x7f800000));
    __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    __m512i r = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff))), 16);
    __m512i q = _mm512_or_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40));
    r = _mm512_mask_mov_epi32(r, nan, q);
    _mm256_storeu_si256((__m256i *)p, _mm512_cvtepi32_epi16(r));
}

/* f16 lanes: vcvtph2ps (exact; it quiets signalling NaNs, which the first
 * product would do anyway) and vcvtps2ph with round-to-nearest-even, which
 * equals posenc_f32_to_f16 on all 2^32 inputs except NaNs, made canonical
 * (sign | 0x7e00) here as that function does (checked exhaustively once). */
static inline __m512 load_f16(const uint16_t *p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p));
}
static inline void store_f16(uint16_t *p, __m512 v) {
    __m256i h = _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    __m512i sign = _mm512_and_si512(_mm512_srli_epi32(_mm512_castps_si512(v), 16), _mm512_set1_epi32(0x8000));
    __m256i canonical = _mm512_cvtepi32_epi16(_mm512_or_si512(sign, _mm512_set1_epi32(0x7e00)));
    _mm256_storeu_si256((__m256i *)p, _mm256_mask_mov_epi16(h, nan, canonical));
}

/* interleaved: out = x * (c,c) + swap(x) * (-s,s): even a*c + b*(-s) = ac - bs, odd b*c + a*s */
static inline __m512 rot_interleaved(__m512 x, const float *dup, size_t pairs, size_t i) {
    __m512 cd = _mm512_loadu_ps(dup + i), sd = _mm512_loadu_ps(dup + 2 * pairs + i);
    return _mm512_add_ps(_mm512_mul_ps(x, cd), _mm512_mul_ps(_mm512_permute_ps(x, 0xB1), sd));
}

void rope_rotate_token_f32_avx512_(void *x, size_t heads, size_t head_stride, int32_t pairs,
                                   posenc_layout layout, const float *c, const float *s, const float *dup) {
    const size_t P = (size_t)pairs;
    for (size_t h = 0; h < heads; h++) {
        float *v = (float *)x + h * head_stride;
        if (layout == POSENC_LAYOUT_HALF) {
            size_t k = 0;
            for (; k + 16 <= P; k += 16) {
                __m512 a = _mm512_loadu_ps(v + k), b = _mm512_loadu_ps(v + P + k);
                __m512 ck = _mm512_loadu_ps(c + k), sk = _mm512_loadu_ps(s + k);
                _mm512_storeu_ps(v + k, _mm512_sub_ps(_mm512_mul_ps(a, ck), _mm512_mul_ps(b, sk)));
                _mm512_storeu_ps(v + P + k, _mm512_add_ps(_mm512_mul_ps(b, ck), _mm512_mul_ps(a, sk)));
            }
            if (k < P) rope_rotate_pairs_f32_(v, pairs, (int32_t)k, layout, c, s);
        } else {
            size_t i = 0;
            for (; i + 16 <= 2 * P; i += 16) _mm512_storeu_ps(v + i, rot_interleaved(_mm512_loadu_ps(v + i), dup, P, i));
            if (i < 2 * P) rope_rotate_pairs_f32_(v, pairs, (int32_t)(i / 2), layout, c, s);
        }
    }
}

/* bf16 and f16 share the loop; f16 is a compile-time constant in each caller */
static inline __m512 load16(const uint16_t *p, bool f16) { return f16 ? load_f16(p) : load_bf16(p); }
static inline void store16(uint16_t *p, __m512 v, bool f16) {
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
            for (; k + 16 <= P; k += 16) {
                __m512 a = load16(v + k, f16), b = load16(v + P + k, f16);
                __m512 ck = _mm512_loadu_ps(c + k), sk = _mm512_loadu_ps(s + k);
                store16(v + k, _mm512_sub_ps(_mm512_mul_ps(a, ck), _mm512_mul_ps(b, sk)), f16);
                store16(v + P + k, _mm512_add_ps(_mm512_mul_ps(b, ck), _mm512_mul_ps(a, sk)), f16);
            }
            if (k < P) rope_rotate_pairs_16_(v, pairs, (int32_t)k, layout, c, s, f16);
        } else {
            size_t i = 0;
            for (; i + 16 <= 2 * P; i += 16) store16(v + i, rot_interleaved(load16(v + i, f16), dup, P, i), f16);
            if (i < 2 * P) rope_rotate_pairs_16_(v, pairs, (int32_t)(i / 2), layout, c, s, f16);
        }
    }
}

void rope_rotate_token_bf16_avx512_(void *x, size_t heads, size_t head_stride, int32_t pairs,
                                    posenc_layout layout, const float *c, const float *s, const float *dup) {
    rotate_token_16(x, heads, head_stride, pairs, layout, c, s, dup, false);
}

void rope_rotate_token_f16_avx512_(void *x, size_t heads, size_t head_stride, int32_t pairs,
                                   posenc_layout layout, const float *c, const float *s, const float *dup) {
    rotate_token_16(x, heads, head_stride, pairs, layout, c, s, dup, true);
}
#else
/* Built without the ISA flags (not x86-64): never selected (posenc_kernel_path_supported). */
void rope_rotate_token_f32_avx512_(void *x, size_t heads, size_t head_stride, int32_t pairs,
                                   posenc_layout layout, const float *c, const float *s, const float *dup) {
    (void)dup;
    rope_rotate_token_f32_(x, heads, head_stride, pairs, layout, c, s);
}
void rope_rotate_token_bf16_avx512_(void *x, size_t heads, size_t head_stride, int32_t pairs,
                                    posenc_layout layout, const float *c, const float *s, const float *dup) {
    (void)dup;
    for (size_t h = 0; h < heads; h++)
        rope_rotate_pairs_16_((uint16_t *)x + h * head_stride, pairs, 0, layout, c, s, false);
}
void rope_rotate_token_f16_avx512_(void *x, size_t heads, size_t head_stride, int32_t pairs,
                                   posenc_layout layout, const float *c, const float *s, const float *dup) {
    (void)dup;
    for (size_t h = 0; h < heads; h++)
        rope_rotate_pairs_16_((uint16_t *)x + h * head_stride, pairs, 0, layout, c, s, true);
}
#endif
