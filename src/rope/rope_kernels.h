/* rope_kernels.h: the RoPE rotation kernels, the bottom layer of the RoPE files:
 *   rope.c (entry points, checks) -> rope_fast.c (driver: threads, cos/sin per
 *   token) -> rope_cos_sin.c, sincos_dd.h, and these kernels.
 * Kernels call nothing above them: rope_apply.c holds the scalar kernels (and
 * the scalar leftovers of the vector ones), rope_avx2.c and rope_avx512.c build
 * the one vector body rope_rotate_body.h. Not installed. */
#ifndef POSENC_ROPE_KERNELS_H
#define POSENC_ROPE_KERNELS_H

#include "../common/internal.h"

#include <string.h>

/* Rotate all `heads` vectors of one token in place: x[h * head_stride + c],
 * pair k = (k, k + pairs) (HALF) or (2k, 2k + 1) (INTERLEAVED), with per-pair
 * cos_k/sin_k. scratch: 4 * pairs floats the vector kernels may use for
 * cos/sin rearranged (duplicated for interleaved pairs, split by even and odd
 * pair for bf16) when those do not fit in registers; the scalar ones ignore it. Each output is one a*c - b*s
 * or b*c + a*s in f32, two products then one add/subtract, never fused (HF's
 * order), so every kernel gives the same bits. f16/bf16 data is widened exactly,
 * rotated in f32 and rounded once (posenc_f32_to_f16 / posenc_f32_to_bf16). */
typedef unsigned (*rope_rotate_fn_)(void *x, size_t heads, size_t head_stride, int32_t pairs,
                                    posenc_layout layout, const float *cos_k, const float *sin_k, float *scratch,
                                    uint32_t big_bits);

/* Every kernel returns what it saw in the token, for POSENC_ERR_NONFINITE,
 * from values already in registers (the loops are memory- or ALU-bound, so
 * the check is one running max per vector, or rides on a compare the store
 * makes anyway); the driver reads the token back only when a flag is set.
 * f32 data, from the inputs' max |bits|: ROPE_BAD_INPUT: a rotated channel
 *   held inf/NaN, so its pair's results are inf/NaN too; ROPE_MAYBE_OVERFLOW:
 *   an input above big_bits (|x| >= FLT_MAX / (2 x the cos/sin magnitude),
 *   rare), whose rotation may overflow: the driver looks at the results.
 * f16/bf16 data, from the f32 results before rounding: ROPE_BAD_OUTPUT: one
 *   rounds to inf or is NaN; ROPE_BAD_INPUT: one is inf/NaN in f32, which a
 *   non-finite input always causes and a finite one only by overflowing f32.
 *   big_bits is then in the data's own 16-bit format: inputs up to it cannot
 *   overflow (the scalar kernels skip the tracking for such heads).
 * (Checking f16/bf16 inputs too cost those kernels ~15% at one thread.) */
#define ROPE_BAD_INPUT 1u
#define ROPE_BAD_OUTPUT 2u
#define ROPE_MAYBE_OVERFLOW 4u
/* Largest |f32 bits| that stays finite in each dtype (f16/bf16: below the
 * midpoint that round-to-nearest-even carries to inf: 65520 for f16). */
#define ROPE_FINITE_BITS_F32 0x7f7fffffu
#define ROPE_FINITE_BITS_F16 0x477fefffu
#define ROPE_FINITE_BITS_BF16 0x7f7f7fffu

static inline uint32_t rope_abs_bits_(float v) {
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    return u & 0x7fffffffu;
}
static inline unsigned rope_flags_16_(uint32_t out_max, uint32_t limit) {
    return (out_max > ROPE_FINITE_BITS_F32 ? ROPE_BAD_INPUT : 0u) | (out_max > limit ? ROPE_BAD_OUTPUT : 0u);
}

/* scalar (rope_apply.c): the reference; scratch unused */
unsigned rope_rotate_token_f32_(void *x, size_t heads, size_t head_stride, int32_t pairs, posenc_layout layout,
                            const float *cos_k, const float *sin_k, float *scratch,
                                 uint32_t big_bits);
unsigned rope_rotate_token_f16_(void *x, size_t heads, size_t head_stride, int32_t pairs, posenc_layout layout,
                            const float *cos_k, const float *sin_k, float *scratch,
                                 uint32_t big_bits);
unsigned rope_rotate_token_bf16_(void *x, size_t heads, size_t head_stride, int32_t pairs, posenc_layout layout,
                             const float *cos_k, const float *sin_k, float *scratch,
                                 uint32_t big_bits);
/* POSENC_MODE_GGML (rope_apply.c): ggml's fused rotation, one scalar kernel per
 * dtype on every path (the fma is the point; scratch unused). */
unsigned rope_rotate_token_ggml_f32_(void *x, size_t heads, size_t head_stride, int32_t pairs, posenc_layout layout,
                                     const float *cos_k, const float *sin_k, float *scratch, uint32_t big_bits);
unsigned rope_rotate_token_ggml_f16_(void *x, size_t heads, size_t head_stride, int32_t pairs, posenc_layout layout,
                                     const float *cos_k, const float *sin_k, float *scratch, uint32_t big_bits);
unsigned rope_rotate_token_ggml_bf16_(void *x, size_t heads, size_t head_stride, int32_t pairs, posenc_layout layout,
                                      const float *cos_k, const float *sin_k, float *scratch, uint32_t big_bits);
/* Pairs first_pair..pairs-1 of one head, returning its flags: the vector
 * kernels' leftovers (in a file built without FMA, so the last bits match). */
unsigned rope_rotate_pairs_f32_(float *v, int32_t pairs, int32_t first_pair, posenc_layout layout,
                                const float *cos_k, const float *sin_k, uint32_t big_bits);
unsigned rope_rotate_pairs_16_(uint16_t *v, int32_t pairs, int32_t first_pair, posenc_layout layout,
                               const float *cos_k, const float *sin_k, bool f16, /* f16, else bf16 */
                               uint32_t big_bits);


/* vector builds of rope_rotate_body.h: 8 (AVX2, f16 by F16C) or 16 (AVX-512) channels at a time */
unsigned rope_rotate_token_f32_avx2_(void *x, size_t heads, size_t head_stride, int32_t pairs,
                                 posenc_layout layout, const float *c, const float *s, float *scratch,
                                 uint32_t big_bits);
unsigned rope_rotate_token_f16_avx2_(void *x, size_t heads, size_t head_stride, int32_t pairs,
                                 posenc_layout layout, const float *c, const float *s, float *scratch,
                                 uint32_t big_bits);
unsigned rope_rotate_token_bf16_avx2_(void *x, size_t heads, size_t head_stride, int32_t pairs,
                                  posenc_layout layout, const float *c, const float *s, float *scratch,
                                 uint32_t big_bits);
unsigned rope_rotate_token_f32_avx512_(void *x, size_t heads, size_t head_stride, int32_t pairs,
                                   posenc_layout layout, const float *c, const float *s, float *scratch,
                                 uint32_t big_bits);
unsigned rope_rotate_token_f16_avx512_(void *x, size_t heads, size_t head_stride, int32_t pairs,
                                   posenc_layout layout, const float *c, const float *s, float *scratch,
                                 uint32_t big_bits);
unsigned rope_rotate_token_bf16_avx512_(void *x, size_t heads, size_t head_stride, int32_t pairs,
                                    posenc_layout layout, const float *c, const float *s, float *scratch,
                                 uint32_t big_bits);
/* rope_avx512bf16.c: the avx512 path's bf16 kernel on a CPU with AVX512_BF16 */
unsigned rope_rotate_token_bf16_avx512bf16_(void *x, size_t heads, size_t head_stride, int32_t pairs,
                                        posenc_layout layout, const float *c, const float *s, float *scratch,
                                        uint32_t big_bits);

#endif
