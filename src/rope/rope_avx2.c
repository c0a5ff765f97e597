/* rope_avx2.c: the AVX2 build of rope_rotate_body.h, 8 channels per vector
 * (f16 through F16C). Compiled with -mavx2 -mfma -mf16c -ffp-contract=off:
 * products and sums round separately, as in the scalar reference
 * (rope_apply.c), so every path gives the same bits. */
#include "rope_kernels.h"

#define ROPE_ISA avx2 /* the kernels are rope_rotate_token_{f32,f16,bf16}_avx2_ */
#if defined(__AVX2__)
#include <immintrin.h>

static inline __m256 load_bf16(const uint16_t *p) {
    __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}

/* posenc_f32_to_bf16 on 8 lanes, the non-finite check folded into its NaN
 * compare (see rope_avx512.c). |bits| and the limits are non-negative, so the
 * signed compares are the unsigned ones. */
static inline void store_bf16(uint16_t *p, __m256 v, unsigned *flags) {
    __m256i u = _mm256_castps_si256(v), a = _mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff));
    __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    __m256i r = _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff))), 16);
    __m256i big = _mm256_cmpgt_epi32(a, _mm256_set1_epi32((int32_t)ROPE_FINITE_BITS_BF16));
    if (__builtin_expect(!_mm256_testz_si256(big, big), 0)) {
        __m256i nan = _mm256_cmpgt_epi32(a, _mm256_set1_epi32(0x7f800000));
        __m256i nonfinite = _mm256_cmpgt_epi32(a, _mm256_set1_epi32((int32_t)ROPE_FINITE_BITS_F32));
        r = _mm256_blendv_epi8(r, _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40)), nan);
        *flags |= ROPE_BAD_OUTPUT | (_mm256_testz_si256(nonfinite, nonfinite) ? 0u : ROPE_BAD_INPUT);
    }
    __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08); /* values <= 0xffff */
    _mm_storeu_si128((__m128i *)p, _mm256_castsi256_si128(packed));
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
