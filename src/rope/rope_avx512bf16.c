/* rope_avx512bf16.c: the bf16 kernel of rope_avx512.c with the rounding done
 * by AVX512_BF16's vcvtne2ps2bf16 (one instruction for 32 values, then one
 * vpermw back to element order) instead of five integer steps per vector;
 * chosen by rope_fast.c on the avx512 path when the CPU has AVX512_BF16.
 * Same bits as every other path: vcvtne2ps2bf16 rounds to nearest even like
 * posenc_f32_to_bf16 for every zero and normal f32, but takes an f32
 * subnormal as zero. So no result may be subnormal, which the inputs settle:
 * an input is 0 or |a| >= 2^-60 (a head with a smaller one goes to the scalar
 * kernel, like a head above big) and a cos/sin is 0 or >= 2^-43 (else the
 * token goes to rope_avx512.c's kernel); then each product is 0 or >= 2^-103,
 * a multiple of 2^-126, so their sum or difference is 0 or >= 2^-126. Real
 * q/k values and cos/sin tables never come near (2^-60 ~ 8.7e-19). */
#include "rope_kernels.h"

#define ROPE_ISA avx512bf16 /* the kernel is rope_rotate_token_bf16_avx512bf16_ */
#define ROPE_BF16_ONLY
#if defined(__AVX512F__) && defined(__AVX512BF16__)
/* Plain vaddps / vsubps: here the products fill the multiply pipes and the
 * add pipes carry only one conversion and one permute per 32 values, so the
 * sum goes there (rope_avx512_vectors.h's fused form is for f16's
 * conversions). Register-only mix of this kernel on Zen 4: 4.4-4.6 cycles per
 * 16 values with the adds, 5.2-5.3 with the fused form. */
#define VF_SUM(a, b) ((a) + (b))
#define VF_DIFF(a, b) ((a) - (b))
#include "rope_avx512_vectors.h"
#define ROPE_NATIVE_BF16 1

#define TINY_BF16_BITS 0x2180u     /* 2^-60 */
#define TINY_F32_BITS 0x2a000000u  /* 2^-43 */

/* e's values at the even places, o's at the odd ones, rounded to bf16 */
static inline __m512i bf16_round_join(__m512 e, __m512 o) {
    static const uint16_t order[32] = {0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23,
                                       8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31};
    __m512i both = (__m512i)_mm512_cvtne2ps_pbh(o, e); /* e's 16 values, then o's */
    return _mm512_permutexvar_epi16(_mm512_loadu_si512((const void *)order), both);
}

/* Whether one of the n bf16 values at v has |bits| above big or below 2^-60
 * (zero included): |bits| - 2^-60 wraps those below to the top, so one
 * unsigned maximum sees both ends. */
static inline bool bf16_words_outside(const uint16_t *v, size_t n, uint32_t big) {
    const __m512i magnitude = _mm512_set1_epi16(0x7fff), tiny = _mm512_set1_epi16((short)TINY_BF16_BITS);
    __m512i most = _mm512_setzero_si512();
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
        most = _mm512_max_epu16(most, _mm512_sub_epi16(_mm512_and_si512(_mm512_loadu_si512((const void *)(v + i)), magnitude), tiny));
    bool outside = _mm512_cmpgt_epu16_mask(most, _mm512_set1_epi16((short)(big - TINY_BF16_BITS))) != 0;
    for (; i < n; i++) outside |= (uint16_t)((v[i] & 0x7fffu) - TINY_BF16_BITS) > big - TINY_BF16_BITS;
    return outside;
}

/* Whether a cos or sin of the token is nonzero below 2^-43 */
static inline bool cos_sin_tiny(const float *c, const float *s, size_t P) {
    const __m512i magnitude = _mm512_set1_epi32(0x7fffffff), one = _mm512_set1_epi32(1);
    __m512i least = _mm512_set1_epi32(-1);
    size_t i = 0;
    for (; i + 16 <= P; i += 16) {
        __m512i a = _mm512_and_si512(_mm512_castps_si512(_mm512_loadu_ps(c + i)), magnitude);
        __m512i b = _mm512_and_si512(_mm512_castps_si512(_mm512_loadu_ps(s + i)), magnitude);
        least = _mm512_min_epu32(least, _mm512_min_epu32(_mm512_sub_epi32(a, one), _mm512_sub_epi32(b, one)));
    }
    bool tiny = _mm512_cmplt_epu32_mask(least, _mm512_set1_epi32((int)(TINY_F32_BITS - 1))) != 0;
    for (; i < P; i++) {
        uint32_t a = rope_abs_bits_(c[i]), b = rope_abs_bits_(s[i]);
        tiny |= (a != 0 && a < TINY_F32_BITS) || (b != 0 && b < TINY_F32_BITS);
    }
    return tiny;
}
#endif
#include "rope_rotate_body.h"
