/* rope_kernels.h: the RoPE rotation kernels, the bottom layer of the RoPE files:
 *   rope.c (entry points, checks) -> rope_fast.c (driver: threads, cos/sin per
 *   token) -> rope_cos_sin.c, sincos_dd.h, and these kernels.
 * Kernels call nothing above them: rope_apply.c holds the scalar kernels (and
 * the scalar leftovers of the vector ones), rope_avx2.c and rope_avx512.c build
 * the one vector body rope_rotate_body.h. Not installed. */
#ifndef POSENC_ROPE_KERNELS_H
#define POSENC_ROPE_KERNELS_H

#include "../common/internal.h"

/* Rotate all `heads` vectors of one token in place: x[h * head_stride + c],
 * pair k = (k, k + pairs) (HALF) or (2k, 2k + 1) (INTERLEAVED), with per-pair
 * cos_k/sin_k. dup (vector kernels, interleaved only) holds [c0 c0 c1 c1 ...]
 * then [-s0 s0 -s1 s1 ...] (2 * pairs floats each). Each output is one a*c - b*s
 * or b*c + a*s in f32, two products then one add/subtract, never fused (HF's
 * order), so every kernel gives the same bits. f16/bf16 data is widened exactly,
 * rotated in f32 and rounded once (posenc_f32_to_f16 / posenc_f32_to_bf16). */
typedef void (*rope_rotate_fn_)(void *x, size_t heads, size_t head_stride, int32_t pairs, posenc_layout layout,
                                const float *cos_k, const float *sin_k, const float *dup);

/* scalar (rope_apply.c): the reference; dup unused */
void rope_rotate_token_f32_(void *x, size_t heads, size_t head_stride, int32_t pairs, posenc_layout layout,
                            const float *cos_k, const float *sin_k, const float *dup);
void rope_rotate_token_f16_(void *x, size_t heads, size_t head_stride, int32_t pairs, posenc_layout layout,
                            const float *cos_k, const float *sin_k, const float *dup);
void rope_rotate_token_bf16_(void *x, size_t heads, size_t head_stride, int32_t pairs, posenc_layout layout,
                             const float *cos_k, const float *sin_k, const float *dup);
/* Pairs first_pair..pairs-1 of one head: the vector kernels' leftovers (in a
 * file built without FMA, so the last bits match). */
void rope_rotate_pairs_f32_(float *v, int32_t pairs, int32_t first_pair, posenc_layout layout,
                            const float *cos_k, const float *sin_k);
void rope_rotate_pairs_16_(uint16_t *v, int32_t pairs, int32_t first_pair, posenc_layout layout,
                           const float *cos_k, const float *sin_k, bool f16); /* f16, else bf16 */

/* vector builds of rope_rotate_body.h: 8 (AVX2, f16 by F16C) or 16 (AVX-512) channels at a time */
void rope_rotate_token_f32_avx2_(void *x, size_t heads, size_t head_stride, int32_t pairs,
                                 posenc_layout layout, const float *c, const float *s, const float *dup);
void rope_rotate_token_f16_avx2_(void *x, size_t heads, size_t head_stride, int32_t pairs,
                                 posenc_layout layout, const float *c, const float *s, const float *dup);
void rope_rotate_token_bf16_avx2_(void *x, size_t heads, size_t head_stride, int32_t pairs,
                                  posenc_layout layout, const float *c, const float *s, const float *dup);
void rope_rotate_token_f32_avx512_(void *x, size_t heads, size_t head_stride, int32_t pairs,
                                   posenc_layout layout, const float *c, const float *s, const float *dup);
void rope_rotate_token_f16_avx512_(void *x, size_t heads, size_t head_stride, int32_t pairs,
                                   posenc_layout layout, const float *c, const float *s, const float *dup);
void rope_rotate_token_bf16_avx512_(void *x, size_t heads, size_t head_stride, int32_t pairs,
                                    posenc_layout layout, const float *c, const float *s, const float *dup);

#endif
