/* rope_avx512.c: the AVX-512 build of rope_rotate_body.h, 16 channels per
 * vector. Compiled with -mavx512f/bw/dq/vl -ffp-contract=off: products and sums
 * round separately, as in the scalar reference (rope_apply.c), so every path
 * gives the same bits. */
#include "rope_kernels.h"

#define ROPE_ISA avx512 /* the kernels are rope_rotate_token_{f32,f16,bf16}_avx512_ */
#if defined(__AVX512F__)
#include <immintrin.h>

static inline __m512 load_bf16(const uint16_t *p) {
    __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
}

/* posenc_f32_to_bf16 on 16 lanes: round to nearest even by adding 0x7fff +
 * lsb. Lanes that round to inf or are inf/NaN (|bits| above
 * ROPE_FINITE_BITS_BF16, rare) take a branch that quiets NaNs (top bits |
 * 0x40) and raises the flags of rope_kernels.h: the one compare serves both,
 * so the check costs the bf16 kernels nothing. */
static inline void store_bf16(uint16_t *p, __m512 v, unsigned *flags) {
    __m512i u = _mm512_castps_si512(v), a = _mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff));
    __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    __m512i t = _mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff))); /* result in the top half */
    if (__builtin_expect(_mm512_cmpgt_epu32_mask(a, _mm512_set1_epi32(ROPE_FINITE_BITS_BF16)) != 0, 0)) {
        __mmask16 nan = _mm512_cmpgt_epu32_mask(a, _mm512_set1_epi32(0x7f800000));
        t = _mm512_mask_mov_epi32(t, nan, _mm512_or_si512(u, _mm512_set1_epi32(0x400000))); /* top half | 0x40 */
        *flags |= ROPE_BAD_OUTPUT |
                  (_mm512_cmpgt_epu32_mask(a, _mm512_set1_epi32(ROPE_FINITE_BITS_F32)) ? ROPE_BAD_INPUT : 0u);
    }
    /* the top halves of the 16 lanes, in order, into the low 256 bits */
    const __m512i top = _mm512_set_epi16(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 31, 29, 27, 25, 23, 21, 19,
                                         17, 15, 13, 11, 9, 7, 5, 3, 1);
    _mm256_storeu_si256((__m256i *)p, _mm512_castsi512_si256(_mm512_permutexvar_epi16(top, t)));
}

/* f16 lanes: vcvtph2ps (exact; it quiets signalling NaNs, which the first
 * product would do anyway) and vcvtps2ph with round-to-nearest-even, which
 * equals posenc_f32_to_f16 on all 2^32 inputs except NaNs (checked
 * exhaustively once): it keeps their payload, and a token whose check saw a
 * NaN gets its NaNs made canonical (0x7e00) by rope_fast.c's canonical_nans. */
static inline __m512 load_f16(const uint16_t *p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p));
}
static inline void store_f16(uint16_t *p, __m512 v) {
    _mm256_storeu_si256((__m256i *)p, _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

typedef __m512 vecf;
#define LANES 16
#define VF_LOAD(p) _mm512_loadu_ps(p)
#define VF_STORE(p, v) _mm512_storeu_ps((p), (v))
#define VF_SWAP_PAIRS(x) _mm512_permute_ps((x), 0xB1)
typedef __m512i veci;
#define VI_ZERO() _mm512_setzero_si512()
static inline __m512i vi_absmax(__m512i acc, __m512 v) {
    return _mm512_max_epu32(acc, _mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32(0x7fffffff)));
}
static inline bool vi_above(__m512i acc, uint32_t limit) {
    return _mm512_cmpgt_epu32_mask(acc, _mm512_set1_epi32((int32_t)limit)) != 0;
}
#endif
#include "rope_rotate_body.h"
