/* rope_avx512.c: the AVX-512 build of rope_rotate_body.h, 16 channels per
 * vector. Compiled with -mavx512f/bw/dq/vl -ffp-contract=off: products and sums
 * round separately, as in the scalar reference (rope_apply.c), so every path
 * gives the same bits. */
#include "rope_kernels.h"

#define ROTATE_F32 rope_rotate_token_f32_avx512_
#define ROTATE_F16 rope_rotate_token_f16_avx512_
#define ROTATE_BF16 rope_rotate_token_bf16_avx512_
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
