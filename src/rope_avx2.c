/* rope_avx2.c: the AVX2 build of rope_rotate_body.h, 8 channels per vector
 * (f16 through F16C). Compiled with -mavx2 -mfma -mf16c -ffp-contract=off:
 * products and sums round separately, as in the scalar reference
 * (rope_apply.c), so every path gives the same bits. */
#include "rope_kernels.h"

#define ROTATE_F32 rope_rotate_token_f32_avx2_
#define ROTATE_F16 rope_rotate_token_f16_avx2_
#define ROTATE_BF16 rope_rotate_token_bf16_avx2_
#if defined(__AVX2__)
#include <immintrin.h>

typedef __m256 vecf;
typedef uint32_t vecu __attribute__((vector_size(32)));
typedef int32_t veci __attribute__((vector_size(32)));
#define LANES 8
#define VF_LOAD(p) _mm256_loadu_ps(p)
#define VF_STORE(p, v) _mm256_storeu_ps((p), (v))
#define VF_SWAP_PAIRS(x) _mm256_permute_ps((x), 0xB1)
#define VU_SET(x) ((vecu)_mm256_set1_epi32((int)(x)))
#define VU_LOAD16(p) ((vecu)_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(p))))
#define VF_LOAD_F16(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p)))
#define VU_F16_BITS(v) \
    ((vecu)_mm256_cvtepu16_epi32(_mm256_cvtps_ph((v), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)))
/* lanes <= 0xffff: packus keeps them, the permute gathers the two 128-bit halves */
static inline void store_u16(uint16_t *p, vecu u) {
    __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32((__m256i)u, (__m256i)u), 0x08);
    _mm_storeu_si128((__m128i *)p, _mm256_castsi256_si128(packed));
}
#endif
#include "rope_rotate_body.h"
