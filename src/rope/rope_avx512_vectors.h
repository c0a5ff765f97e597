/* rope_avx512_vectors.h: the AVX-512 vectors of rope_rotate_body.h (see its
 * list), shared by rope_avx512.c and rope_avx512bf16.c. Included only by those
 * two files, after rope_kernels.h. */
#if defined(__AVX512F__)
#include <immintrin.h>

/* bf16 in its lanes (rope_rotate_body.h): a 32-bit lane holds elements 2j
 * (low half) and 2j+1 (high half). */
#define VI_LOAD(p) _mm512_loadu_si512((const void *)(p))
#define VI_STORE(p, v) _mm512_storeu_si512((void *)(p), (v))
static inline __m512 bf16_even(__m512i w) { return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16)); }
static inline __m512 bf16_odd(__m512i w) {
    return _mm512_castsi512_ps(_mm512_and_si512(w, _mm512_set1_epi32((int32_t)0xffff0000u)));
}
/* posenc_f32_to_bf16's round to nearest even, for finite lanes: + 0x7fff + lsb */
static inline __m512i bf16_round(__m512 v) {
    __m512i u = _mm512_castps_si512(v);
    __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    return _mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff)));
}
static inline __m512i bf16_join(__m512i e, __m512i o) {
    return _mm512_or_si512(_mm512_srli_epi32(e, 16), _mm512_and_si512(o, _mm512_set1_epi32((int32_t)0xffff0000u)));
}
/* a running max of 16-bit |bits| (the sign bits cleared), and whether a lane is above big */
static inline __m512i vw_absmax(__m512i acc, __m512i w) {
    return _mm512_max_epu16(acc, _mm512_and_si512(w, _mm512_set1_epi16(0x7fff)));
}
static inline bool vw_above(__m512i acc, uint32_t big) {
    return _mm512_cmpgt_epu16_mask(acc, _mm512_set1_epi16((short)big)) != 0;
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
/* a + b and a - b, each rounded once, as a * 1 + b (a * 1 is exact): the
 * same bits as vaddps, on the multiply pipes. On Zen 4 the conversions,
 * permutes and adds share two of its four FP pipes and the products the
 * other two; moving the add made f16 interleaved RoPE 6% faster (measured).
 * A file whose kernels convert little (rope_avx512bf16.c) defines its own
 * plain add and subtract first. */
#ifndef VF_SUM
#define VF_SUM(a, b) _mm512_fmadd_ps((a), _mm512_set1_ps(1.0f), (b))
#define VF_DIFF(a, b) _mm512_fmsub_ps((a), _mm512_set1_ps(1.0f), (b))
#endif
#define VF_DUP(p) \
    _mm512_permutexvar_ps(_mm512_set_epi32(7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0), \
                          _mm512_castps256_ps512(_mm256_loadu_ps(p)))
#define VF_NEG_EVEN(x) \
    _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(x), _mm512_set1_epi64((int64_t)0x80000000u)))
#define VF_EVENS(x, y) \
    _mm512_permutex2var_ps((x), _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0), (y))
#define VF_ODDS(x, y) \
    _mm512_permutex2var_ps((x), _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1), (y))
/* cos/sin vectors kept in registers across a token's heads (32 zmm) */
#define ROPE_RESIDENT_MAX 16
typedef __m512i veci;
#define VI_ZERO() _mm512_setzero_si512()
static inline __m512i vi_absmax(__m512i acc, __m512 v) {
    return _mm512_max_epu32(acc, _mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32(0x7fffffff)));
}
static inline bool vi_above(__m512i acc, uint32_t limit) {
    return _mm512_cmpgt_epu32_mask(acc, _mm512_set1_epi32((int32_t)limit)) != 0;
}
#endif
