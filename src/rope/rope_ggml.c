/* rope_ggml.c: POSENC_MODE_GGML, the float32 steps of ggml's CPU RoPE
 * (ggml-org/ggml src/ggml-cpu/ops.cpp rope_yarn / the per-token cache, and
 * ggml.c's YaRN correction dims), written from the facts of that code:
 *   theta_scale = powf(freq_base, -2.0f / n_dims)
 *   theta_0 = (float)p, theta_{k+1} = theta_k * theta_scale   (float32 chain)
 *   extrap = theta_k / ff_k, interp = freq_scale * extrap
 *   YaRN (ext_factor != 0): ramp over pair index k between the floorf/ceilf
 *     correction dims, theta = interp * (1 - mix) + extrap * mix (one fused
 *     multiply-add, as GCC contracts it in ggml's C++ build), mscale =
 *     attn_factor * (1 + 0.1 logf(1 / freq_scale))
 *   cos = cosf(theta) * mscale, sin = sinf(theta) * mscale (libm's float functions)
 * Checked bit for bit against ggml d99724f2 (v0.21.0) CPU output (tests/golden,
 * test_rope_ggml.c). Called by rope_freqs.c (setup) and rope_cos_sin.c (per
 * token); calls nothing of the RoPE files. */
#include "rope_internal.h"

#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* ggml.c's correction dim: n_dims * logf(n_ctx / (n_rot * 2 pi)) / (2 logf(base)),
 * every step in float32 as C evaluates it there (int operands promote to float). */
static float corr_dim(int32_t n_dims, int64_t n_ctx, float n_rot, float base) {
    float turns = n_rot * 2.0f;
    float denom = turns * (float)M_PI;
    float ratio = (float)n_ctx / denom;
    float num = (float)n_dims * logf(ratio);
    float two_log = 2.0f * logf(base);
    return num / two_log;
}

posenc_status rope_ggml_init_(const posenc_rope_params *p, int32_t r, const long double *freq_factors,
                              rope_ggml_ *g, posenc_error *err) {
    memset(g, 0, sizeof *g);
    RETURN_ERROR_IF(p->scaling == POSENC_ROPE_DYNAMIC, err, POSENC_ERR_INVALID_ARGUMENT,
                    "mode ggml has no dynamic NTK scaling (ggml's base is fixed per model); "
                    "use scaling ntk with the base you want, or mode precise/torch-compat");
    RETURN_ERROR_IF(p->scaling == POSENC_ROPE_YARN && !p->truncate, err, POSENC_ERR_INVALID_ARGUMENT,
                    "mode ggml has no YaRN truncate=0: ggml always floors/ceils the correction dims");
    g->freq_base = (float)p->base;
    g->freq_scale = 1.0f;
    g->ext_factor = 0.0f;
    g->attn_factor = 1.0f;
    if (p->scaling == POSENC_ROPE_LINEAR || p->scaling == POSENC_ROPE_YARN)
        g->freq_scale = 1.0f / (float)p->factor; /* llama.cpp: 1.0f / rope.scaling.factor (an f32 key) */
    if (p->scaling == POSENC_ROPE_YARN) {
        g->ext_factor = 1.0f;
        float lo = floorf(corr_dim(r, p->original_max_position, (float)p->beta_fast, g->freq_base));
        float hi = ceilf(corr_dim(r, p->original_max_position, (float)p->beta_slow, g->freq_base));
        g->corr[0] = lo > 0.0f ? lo : 0.0f;
        g->corr[1] = hi < (float)(r - 1) ? hi : (float)(r - 1);
    }
    g->theta_scale = powf(g->freq_base, -2.0f / (float)r);
    if (freq_factors) {
        g->freq_factors = malloc(sizeof *g->freq_factors * (size_t)(r / 2));
        RETURN_ERROR_IF(!g->freq_factors, err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %d frequency factors",
                        r / 2);
        for (int32_t k = 0; k < r / 2; k++) g->freq_factors[k] = (float)freq_factors[k];
    }
    return POSENC_OK;
}

void rope_ggml_free_(rope_ggml_ *g) {
    if (!g) return;
    free(g->freq_factors);
    g->freq_factors = NULL;
}

/* ggml's rope_yarn_ramp: 1 - clamp((k - low) / max(0.001, high - low), 0, 1). */
static float ramp(const rope_ggml_ *g, int32_t k) {
    float y = ((float)k - g->corr[0]) / fmaxf(0.001f, g->corr[1] - g->corr[0]);
    return 1.0f - fminf(1.0f, fmaxf(0.0f, y));
}

float rope_ggml_mscale_(const rope_ggml_ *g) {
    float m = g->attn_factor;
    if (g->ext_factor != 0.0f) m *= fmaf(0.1f, logf(1.0f / g->freq_scale), 1.0f);
    return m;
}

void rope_ggml_angles_(const rope_ggml_ *g, int32_t pairs, long double pos, float *theta_out) {
    float theta = (float)pos;
    for (int32_t k = 0; k < pairs; k++) {
        float ff = g->freq_factors ? g->freq_factors[k] : 1.0f;
        float extrap = theta / ff;
        float interp = g->freq_scale * extrap;
        float t = interp;
        if (g->ext_factor != 0.0f) {
            float mix = ramp(g, k) * g->ext_factor;
            t = fmaf(interp, 1.0f - mix, extrap * mix);
        }
        theta_out[k] = t;
        theta = theta * g->theta_scale;
    }
}

void rope_ggml_cos_sin_(const rope_ggml_ *g, int32_t pairs, long double pos, bool magnitude, float sin_sign,
                        float *c, float *s) {
    rope_ggml_angles_(g, pairs, pos, c); /* angles parked in c */
    float m = magnitude ? rope_ggml_mscale_(g) : 1.0f;
    for (int32_t k = 0; k < pairs; k++) {
        float t = c[k];
        c[k] = cosf(t) * m;
        s[k] = sinf(t) * m * sin_sign;
    }
}
