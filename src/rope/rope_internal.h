/* rope_internal.h: pieces shared by the RoPE source files. Not installed. */
#ifndef POSENC_ROPE_INTERNAL_H
#define POSENC_ROPE_INTERNAL_H

#include "../common/internal.h"

/* Largest head_dim accepted (keeps every per-pair scratch buffer small). */
#define POSENC_ROPE_MAX_HEAD_DIM (1 << 16)

/* POSENC_MODE_GGML: ggml's float32 RoPE knobs (rope_ggml.c). */
typedef struct {
    float freq_base, theta_scale, freq_scale, ext_factor, attn_factor;
    float corr[2];       /* YaRN correction dims (floorf/ceilf, clamped) */
    float *freq_factors; /* [pairs] divisors of theta (LLAMA3, LONGROPE), or NULL */
} rope_ggml_;

/* Validated geometry + frequencies of one RoPE configuration. */
typedef struct {
    int32_t head_dim;
    int32_t rotary_dim; /* R */
    int32_t pairs;      /* R / 2 */
    posenc_mode mode;
    double attention;   /* cos/sin magnitude */
    long double *inv;   /* [pairs]; PRECISE: long double formula values; TORCH_COMPAT:
                           HF's float32 values; GGML: ggml's angle at position 1 */
    long double inv_abs_max; /* max |inv[k]| */
    rope_ggml_ ggml;    /* GGML mode only */
} rope_plan_;

/* Check params and compute frequencies into a malloc'd plan (free with rope_plan_free_). */
posenc_status rope_plan_create_(const posenc_rope_params *params, int64_t seq_len, rope_plan_ *plan,
                                posenc_error *err);
void rope_plan_free_(rope_plan_ *plan);

/* In TORCH_COMPAT mode, refuse positions whose float32 angle p*w overflows
 * (cos/sin would be NaN; f32_angle.h); a no-op in the precise mode. */
posenc_status rope_check_torch_angle_(posenc_mode mode, const long double *inv, int32_t pairs,
                                     long double max_abs_position, posenc_error *err);
/* In GGML mode, refuse what ggml's float32 steps cannot hold: an angle that
 * overflows at the largest |position| (angles grow with |p|, so that row
 * decides) or divides by a frequency factor rounded to 0, and a magnitude
 * that overflows; a no-op in the other modes (found by fuzz_rope). */
posenc_status rope_check_ggml_angle_(const rope_plan_ *plan, long double max_abs_position, posenc_error *err);
/* Every check of an in-place apply, shared by all entry points (1-D and
 * multi-axis): layout, view against x_count, x, and the torch-compat angle for
 * positions ([position_rows][view->tokens]; NULL = 0..tokens-1). */
posenc_status rope_check_apply_(const rope_plan_ *plan, posenc_layout layout, const posenc_rope_view *view,
                                const int64_t *positions, size_t position_rows, const void *x, size_t x_count,
                                posenc_error *err);
/* cos/sin of pos * inv[k] for k < pairs, each times `scale`, rounded to f32,
 * the way `mode` prescribes (rope_cos_sin.c). */
void rope_cos_sin_f32_(posenc_mode mode, const long double *inv, int32_t pairs, long double pos,
                       double scale, float *cos_out, float *sin_out);
/* TORCH_COMPAT cos/sin of row `row` of the table torch ran cos()/sin() over for
 * `positions` (the whole list matters: torch's vector blocks span rows, see
 * rope.c): copies 2 = HF's emb = cat(freqs, freqs) [T, R]; copies 1 = the
 * freqs [T, R/2] themselves (vLLM's _compute_cos_sin_cache). */
void rope_torch_cos_sin_row_(const long double *inv, int32_t pairs, int copies, const posenc_positions *positions,
                             size_t row, double scale, float *cos_out, float *sin_out);
/* TORCH_COMPAT cos/sin of one multi-axis token as HF computes them (SECTIONS: each
 * axis' full row, then the pairs of that axis; INTERLEAVED: the mixed row), pos[a] the
 * token's position on axis a; tmp holds 2 * pairs floats. */
void rope_torch_mrope_cos_sin_(const long double *inv, int32_t pairs, const int32_t *axis, bool interleaved,
                               const long double *pos, double scale, float *cos_out, float *sin_out, float *tmp);
/* posenc_rope_table_f32 in TORCH_COMPAT mode with torch's cos/sin run over the
 * [T, copies * R/2] table (see above); copies 2 is posenc_rope_table_f32's. */
posenc_status rope_table_torch_f32_(const posenc_rope_params *params, int64_t seq_len,
                                    const posenc_positions *positions, int fold_attention, int copies,
                                    float *cos_out, float *sin_out, size_t out_count, posenc_error *err);

/* cos/sin of one token (rope_cos_sin.c): forward = attention * R(theta);
 * inverse = R(-theta) / attention; unit = R(theta) with no magnitude (shift). */
void rope_token_cos_sin_(const rope_plan_ *plan, long double pos, int inverse, bool unit, float *c, float *s);

/* posenc_rope_frequencies into long double (what the plan keeps). */
posenc_status rope_frequencies_ld_(const posenc_rope_params *params, int64_t seq_len, long double *inv,
                                   size_t out_count, double *attention_factor, posenc_error *err);

/* GGML mode (rope_ggml.c): knobs from params (freq_factors: [R/2] divisors or
 * NULL; copied as float32); refuses what ggml cannot do (dynamic NTK, YaRN
 * truncate 0). Free with rope_ggml_free_. */
posenc_status rope_ggml_init_(const posenc_rope_params *p, int32_t r, const long double *freq_factors,
                              rope_ggml_ *g, posenc_error *err);
void rope_ggml_free_(rope_ggml_ *g);
/* ggml's cos/sin magnitude: attn_factor, times 1 + 0.1 logf(1/freq_scale) under YaRN. */
float rope_ggml_mscale_(const rope_ggml_ *g);
/* ggml's float32 angle of each pair at one position. */
void rope_ggml_angles_(const rope_ggml_ *g, int32_t pairs, long double pos, float *theta_out);
/* ggml's cache entries: cosf(theta) m, sinf(theta) m sin_sign (m = mscale when
 * magnitude, else 1). */
void rope_ggml_cos_sin_(const rope_ggml_ *g, int32_t pairs, long double pos, bool magnitude, float sin_sign,
                        float *c, float *s);

/* Check a view against a head_dim and a buffer size. */
posenc_status rope_check_view_(const posenc_rope_view *view, int32_t head_dim, size_t x_count,
                               posenc_error *err);

#endif
