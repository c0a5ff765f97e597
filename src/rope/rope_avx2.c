/* rope_avx2.c: the AVX2 build of rope_rotate_body.h, 8 channels per vector
 * (f16 through F16C). Compiled with -mavx2 -mfma -mf16c -ffp-contract=off:
 * products and sums round separately, as in the scalar reference
 * (rope_apply.c), so every path gives the same bits. */
#include "rope_kernels.h"

#define ROPE_ISA avx2 /* the kernels are rope_rotate_token_{f32,f16,bf16}_avx2_ */
#if defined(__AVX2__)
#include <immintrin.h>

/* bf16 in its lanes (rope_rotate_body.h): a 32-bit lane holds elements 2j
 * (low half) and 2j+1 (high half). */
#define VI_LOAD(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define VI_STORE(p, v) _mm256_storeu_si256((__m256i *)(void *)(p), (v))
static inline __m256 bf16_even(__m256i w) { return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16)); }
static inline __m256 bf16_odd(__m256i w) {
    return _mm256_castsi256_ps(_mm256_and_si256(w, _mm256_set1_epi32((int32_t)0xffff0000u)));
}
/* posenc_f32_to_bf16's round to nearest even, for finite lanes: + 0x7fff + lsb */
static inline __m256i bf16_round(__m256 v) {
    __m256i u = _mm256_castps_si256(v);
    __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    return _mm256_add_epi32(u, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff)));
}
static inline __m256i bf16_join(__m256i e, __m256i o) {
    return _mm256_or_si256(_mm256_srli_epi32(e, 16), _mm256_and_si256(o, _mm256_set1_epi32((int32_t)0xffff0000u)));
}
/* a running max of 16-bit |bits| (the sign bits cleared), and whether a lane
 * is above big (<= 0x7fff: the signed compare is the unsigned one) */
static inline __m256i vw_absmax(__m256i acc, __m256i w) {
    return _mm256_max_epu16(acc, _mm256_and_si256(w, _mm256_set1_epi16(0x7fff)));
}
static inline bool vw_above(__m256i acc, uint32_t big) {
    __m256i over = _mm256_cmpgt_epi16(acc, _mm256_set1_epi16((short)big));
    return !_mm256_testz_si256(over, over);
}

/* f16 lanes with F16C (see rope_avx512.c): exact widening, round-to-nearest-even
 * narrowing; NaNs keep their payload here, and a token whose check saw a NaN
 * gets its NaNs made canonical (0x7e00) by rope_fast.c's canonical_nans. */
static inline __m256 load_f16(const uint16_t *p) { return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p)); }
static inline void store_f16(uint16_t *p, __m256 v) {
    _mm_storeu_si128((__m128i *)p, _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

typedef __m256 vecf;
#define LANES 8
#define VF_LOAD(p) _mm256_loadu_ps(p)
#define VF_STORE(p, v) _mm256_storeu_ps((p), (v))
#define VF_SWAP_PAIRS(x) _mm256_permute_ps((x), 0xB1)
#define VF_SUM(a, b) ((a) + (b))
#define VF_DIFF(a, b) ((a) - (b))
#define VF_DUP(p) \
    _mm256_permutevar8x32_ps(_mm256_castps128_ps256(_mm_loadu_ps(p)), _mm256_set_epi32(3, 3, 2, 2, 1, 1, 0, 0))
#define VF_NEG_EVEN(x) \
    _mm256_castsi256_ps(_mm256_xor_si256(_mm256_castps_si256(x), _mm256_set1_epi64x((int64_t)0x80000000u)))
/* (x0 x2 y0 y2 | x4 x6 y4 y6), then the middle 64-bit pieces swapped */
#define VF_EVENS(x, y) \
    _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps((x), (y), 0x88)), 0xD8))
#define VF_ODDS(x, y) \
    _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps((x), (y), 0xDD)), 0xD8))
/* cos/sin vectors kept in registers across a token's heads (16 ymm) */
#define ROPE_RESIDENT_MAX 8
typedef __m256i veci;
#define VI_ZERO() _mm256_setzero_si256()
static inline __m256i vi_absmax(__m256i acc, __m256 v) {
    return _mm256_max_epu32(acc, _mm256_and_si256(_mm256_castps_si256(v), _mm256_set1_epi32(0x7fffffff)));
}
/* lanes hold |bits| <= 0x7fffffff, so the signed compare is the unsigned one */
static inline bool vi_above(__m256i acc, uint32_t limit) {
    __m256i over = _mm256_cmpgt_epi32(acc, _mm256_set1_epi32((int32_t)limit));
    return _mm256_movemask_ps(_mm256_castsi256_ps(over)) != 0;
}
#endif
#include "rope_rotate_body.h"
