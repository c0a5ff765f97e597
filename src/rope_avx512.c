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

typedef __m512 vecf;
typedef uint32_t vecu __attribute__((vector_size(64)));
typedef int32_t veci __attribute__((vector_size(64)));
#define LANES 16
#define VF_LOAD(p) _mm512_loadu_ps(p)
#define VF_STORE(p, v) _mm512_storeu_ps((p), (v))
#define VF_SWAP_PAIRS(x) _mm512_permute_ps((x), 0xB1)
#define VU_SET(x) ((vecu)_mm512_set1_epi32((int)(x)))
#define VU_LOAD16(p) ((vecu)_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(p))))
#define VF_LOAD_F16(p) _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(p)))
#define VU_F16_BITS(v) \
    ((vecu)_mm512_cvtepu16_epi32(_mm512_cvtps_ph((v), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)))
/* lanes <= 0xffff: vpmovdw truncates each to its low 16 bits */
static inline void store_u16(uint16_t *p, vecu u) { _mm256_storeu_si256((__m256i *)p, _mm512_cvtepi32_epi16((__m512i)u)); }
#endif
#include "rope_rotate_body.h"
