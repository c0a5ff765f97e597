/* rope_fast.h: the RoPE apply driver (rope_fast.c) and its SIMD kernels. Not installed. */
#ifndef POSENC_ROPE_FAST_H
#define POSENC_ROPE_FAST_H

#include "rope_internal.h"

typedef enum { ROPE_DATA_F32, ROPE_DATA_F16, ROPE_DATA_BF16 } rope_data_kind_;

/* cos/sin of one token (rope.c): forward = attention * R(theta); inverse =
 * R(-theta) / attention; unit = R(theta) with no magnitude (shift). */
void rope_token_cos_sin_(const rope_plan_ *plan, long double pos, int inverse, bool unit, float *c, float *s);

/* Rotate view (already validated) in place on the path/threads of exec (NULL =
 * defaults and environment). positions NULL = 0..tokens-1. */
posenc_status rope_apply_fast_(const rope_plan_ *plan, posenc_layout layout, const posenc_rope_view *view,
                               const int64_t *positions, int inverse, bool unit, rope_data_kind_ kind,
                               void *x, const posenc_exec *exec, posenc_error *err);

/* Multi-axis RoPE (rope_multi.c validates): plan->inv holds each pair's
 * frequency, axis[k] its axis, positions is [axes][view->tokens]; per pair
 * cos/sin of +-position * inv times attention (1/attention inverse), then the
 * same vector kernels and threads as rope_apply_fast_ (default exec). */
posenc_status rope_apply_mrope_fast_(const rope_plan_ *plan, const int32_t *axis, posenc_layout layout,
                                     const posenc_rope_view *view, const int64_t *positions, int inverse, float *x,
                                     posenc_error *err);

/* cos/sin tables ([count][pairs] each, times scale) for a range of positions in
 * precise mode by the anchored recurrence, threaded; applies when
 * rope_table_fast_applies_ says so (range positions whose |p| < 2^53 and
 * |p w| < 2^40). f32 (wide = false) tables hold exactly the cos/sin that
 * rope_apply_fast_ uses for the same positions. */
bool rope_table_fast_applies_(const rope_plan_ *plan, const posenc_positions *positions);
posenc_status rope_table_fast_(const rope_plan_ *plan, const posenc_positions *positions, double scale, bool wide,
                               void *cos_out, void *sin_out, posenc_error *err);

/* Pairs first_pair..pairs-1 of one head (scalar, in a file built without FMA so
 * the last bits match rope_rotate_token_f32_); the vector kernels' leftovers. */
void rope_rotate_pairs_f32_(float *v, int32_t pairs, int32_t first_pair, posenc_layout layout,
                            const float *cos_k, const float *sin_k);
void rope_rotate_pairs_16_(uint16_t *v, int32_t pairs, int32_t first_pair, posenc_layout layout,
                           const float *cos_k, const float *sin_k, bool f16); /* f16, else bf16 */

/* Vector kernels: all heads of one token. dup (interleaved only) holds
 * [c0 c0 c1 c1 ...] then [-s0 s0 -s1 s1 ...] (2 * pairs floats each). Each
 * output is one product pair and one add/subtract in f32, never fused. */
void rope_rotate_token_f32_avx2_(void *x, size_t heads, size_t head_stride, int32_t pairs,
                                 posenc_layout layout, const float *c, const float *s, const float *dup);
void rope_rotate_token_bf16_avx2_(void *x, size_t heads, size_t head_stride, int32_t pairs,
                                  posenc_layout layout, const float *c, const float *s, const float *dup);
void rope_rotate_token_f16_avx2_(void *x, size_t heads, size_t head_stride, int32_t pairs,
                                 posenc_layout layout, const float *c, const float *s, const float *dup);
void rope_rotate_token_f16_avx512_(void *x, size_t heads, size_t head_stride, int32_t pairs,
                                   posenc_layout layout, const float *c, const float *s, const float *dup);
void rope_rotate_token_f32_avx512_(void *x, size_t heads, size_t head_stride, int32_t pairs,
                                   posenc_layout layout, const float *c, const float *s, const float *dup);
void rope_rotate_token_bf16_avx512_(void *x, size_t heads, size_t head_stride, int32_t pairs,
                                    posenc_layout layout, const float *c, const float *s, const float *dup);

#endif
