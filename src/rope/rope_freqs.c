/* rope_freqs.c: RoPE parameters, inverse frequencies and attention factor for
 * every context-extension scheme (HF transformers' ROPE_INIT_FUNCTIONS).
 *
 * PRECISE mode evaluates each scheme's formula in long double and rounds once
 * to double. TORCH_COMPAT mode repeats HF's float32 tensor steps one by one
 * (each binary op rounded to float32, Python scalars converted to float32 at
 * the op, `base ** x` exactly as torch's pow kernel: SLEEF vector blocks and
 * a scalar powf tail, torch_vec.h), so that the frequencies equal HF's bits. */
#include "rope_internal.h"

#include "../common/torch_vec.h"
#include <stdlib.h>
#include <string.h>

static const char *const scaling_names[] = {"none", "linear", "ntk", "dynamic", "yarn", "longrope", "llama3"};

const char *posenc_rope_scaling_name(posenc_rope_scaling scaling) {
    if ((int)scaling < 0 || (int)scaling > POSENC_ROPE_LLAMA3) return "?";
    return scaling_names[scaling];
}

posenc_status posenc_rope_scaling_parse(const char *name, posenc_rope_scaling *out, posenc_error *err) {
    RETURN_IF_NULL(name, err);
    RETURN_IF_NULL(out, err);
    for (int i = 0; i <= POSENC_ROPE_LLAMA3; i++)
        if (strcmp(name, scaling_names[i]) == 0) {
            *out = (posenc_rope_scaling)i;
            return posenc_ok_(err);
        }
    if (strcmp(name, "default") == 0) { /* HF's name for "none" */
        *out = POSENC_ROPE_NONE;
        return posenc_ok_(err);
    }
    return posenc_fail_(err, POSENC_ERR_INVALID_ARGUMENT,
                        "unknown RoPE scaling type '%.64s' (choose none|linear|ntk|dynamic|yarn|"
                        "longrope|llama3)", name);
}

void posenc_rope_params_default(posenc_rope_params *params, int32_t head_dim) {
    if (!params) return;
    memset(params, 0, sizeof *params);
    params->head_dim = head_dim;
    params->rotary_dim = 0;
    params->partial_rotary_factor = 1.0;
    params->base = 10000.0;
    params->scaling = POSENC_ROPE_NONE;
    params->factor = 1.0;
    params->beta_fast = 32.0;
    params->beta_slow = 1.0;
    params->truncate = 1;
    params->low_freq_factor = 1.0;
    params->high_freq_factor = 4.0;
    params->longrope_select = POSENC_LONGROPE_BY_SEQ_LEN;
    params->mode = POSENC_MODE_PRECISE;
}

static bool needs_factor_at_least_one(posenc_rope_scaling s) {
    return s == POSENC_ROPE_NTK || s == POSENC_ROPE_DYNAMIC || s == POSENC_ROPE_YARN ||
           s == POSENC_ROPE_LLAMA3;
}

static posenc_status check_scheme(const posenc_rope_params *p, int32_t rotary_dim, posenc_error *err) {
    const char *name = posenc_rope_scaling_name(p->scaling);
    if (p->scaling == POSENC_ROPE_NONE) return POSENC_OK;
    RETURN_ERROR_IF(!isfinite(p->factor) || p->factor <= 0.0, err, POSENC_ERR_INVALID_ARGUMENT,
                    "factor must be finite and > 0 for scaling=%s, got %g", name, p->factor);
    RETURN_ERROR_IF(needs_factor_at_least_one(p->scaling) && p->factor < 1.0, err,
                    POSENC_ERR_INVALID_ARGUMENT,
                    "factor must be >= 1 for scaling=%s (it extends the context; use linear to "
                    "compress positions), got %g", name, p->factor);
    switch (p->scaling) {
    case POSENC_ROPE_DYNAMIC:
        RETURN_ERROR_IF(p->max_position <= 0, err, POSENC_ERR_INVALID_ARGUMENT,
                        "scaling=dynamic needs max_position (max_position_embeddings) > 0, got %lld",
                        (long long)p->max_position);
        break;
    case POSENC_ROPE_YARN:
        RETURN_ERROR_IF(p->original_max_position <= 0, err, POSENC_ERR_INVALID_ARGUMENT,
                        "scaling=yarn needs original_max_position (the trained context) > 0, got %lld",
                        (long long)p->original_max_position);
        RETURN_ERROR_IF(!isfinite(p->beta_fast) || !isfinite(p->beta_slow) || p->beta_slow <= 0.0, err,
                        POSENC_ERR_INVALID_ARGUMENT,
                        "beta_fast and beta_slow must be finite and > 0, got %g and %g", p->beta_fast,
                        p->beta_slow);
        /* equal betas run in HF (the ramp spans floor..ceil of one correction dim, or its 0.001 guard): Kimi K2
         * publishes beta_fast = beta_slow = 1 */
        RETURN_ERROR_IF(p->beta_fast < p->beta_slow, err, POSENC_ERR_INVALID_ARGUMENT,
                        "beta_fast must be >= beta_slow, got beta_fast=%g beta_slow=%g", p->beta_fast,
                        p->beta_slow);
        RETURN_ERROR_IF(!isfinite(p->mscale) || p->mscale < 0.0, err, POSENC_ERR_INVALID_ARGUMENT,
                        "mscale must be finite and >= 0 (0 = unset), got %g", p->mscale);
        RETURN_ERROR_IF(!isfinite(p->mscale_all_dim) || p->mscale_all_dim < 0.0, err,
                        POSENC_ERR_INVALID_ARGUMENT,
                        "mscale_all_dim must be finite and >= 0 (0 = unset), got %g", p->mscale_all_dim);
        break;
    case POSENC_ROPE_LONGROPE:
        RETURN_ERROR_IF(p->original_max_position <= 0, err, POSENC_ERR_INVALID_ARGUMENT,
                        "scaling=longrope needs original_max_position (the trained context) > 0, "
                        "got %lld", (long long)p->original_max_position);
        RETURN_ERROR_IF(!p->short_factors || !p->long_factors, err, POSENC_ERR_INVALID_ARGUMENT,
                        "scaling=longrope needs both short and long factor lists");
        RETURN_ERROR_IF(p->factors_count != (size_t)(rotary_dim / 2), err, POSENC_ERR_INVALID_ARGUMENT,
                        "longrope factor lists must have rotary_dim/2 = %d entries, got %zu",
                        rotary_dim / 2, p->factors_count);
        for (size_t i = 0; i < p->factors_count; i++) {
            RETURN_ERROR_IF(!isfinite(p->short_factors[i]) || p->short_factors[i] <= 0.0, err,
                            POSENC_ERR_INVALID_ARGUMENT,
                            "short factor %zu must be finite and > 0, got %g", i, p->short_factors[i]);
            RETURN_ERROR_IF(!isfinite(p->long_factors[i]) || p->long_factors[i] <= 0.0, err,
                            POSENC_ERR_INVALID_ARGUMENT,
                            "long factor %zu must be finite and > 0, got %g", i, p->long_factors[i]);
        }
        RETURN_ERROR_IF((int)p->longrope_select < 0 || (int)p->longrope_select > 2, err,
                        POSENC_ERR_INVALID_ARGUMENT, "unknown longrope selection %d",
                        (int)p->longrope_select);
        break;
    case POSENC_ROPE_LLAMA3:
        RETURN_ERROR_IF(p->original_max_position <= 0, err, POSENC_ERR_INVALID_ARGUMENT,
                        "scaling=llama3 needs original_max_position (the trained context) > 0, got %lld",
                        (long long)p->original_max_position);
        RETURN_ERROR_IF(!isfinite(p->low_freq_factor) || p->low_freq_factor <= 0.0 ||
                            !isfinite(p->high_freq_factor),
                        err, POSENC_ERR_INVALID_ARGUMENT,
                        "low_freq_factor must be finite and > 0 and high_freq_factor finite, got %g and %g",
                        p->low_freq_factor, p->high_freq_factor);
        /* equal factors are legal (Llama 4 Scout: 1 and 1; HF only warns): no blend band */
        RETURN_ERROR_IF(p->high_freq_factor < p->low_freq_factor, err, POSENC_ERR_INVALID_ARGUMENT,
                        "high_freq_factor must be >= low_freq_factor, got high=%g low=%g",
                        p->high_freq_factor, p->low_freq_factor);
        break;
    default:
        break;
    }
    if (p->scaling == POSENC_ROPE_YARN || p->scaling == POSENC_ROPE_LONGROPE)
        RETURN_ERROR_IF(!isfinite(p->attention_factor) || p->attention_factor < 0.0, err,
                        POSENC_ERR_INVALID_ARGUMENT,
                        "attention_factor must be finite and > 0 (0 = derive), got %g", p->attention_factor);
    return POSENC_OK;
}

posenc_status posenc_rope_check(const posenc_rope_params *params, int32_t *out_rotary_dim,
                                posenc_error *err) {
    RETURN_IF_NULL(params, err);
    const posenc_rope_params *p = params;
    int32_t d = p->head_dim;
    RETURN_ERROR_IF(d < 2, err, POSENC_ERR_INVALID_ARGUMENT, "head_dim must be >= 2, got %d", d);
    RETURN_ERROR_IF(d > POSENC_ROPE_MAX_HEAD_DIM, err, POSENC_ERR_LIMIT, "head_dim must be <= %d, got %d",
                    POSENC_ROPE_MAX_HEAD_DIM, d);
    int32_t r = p->rotary_dim;
    if (r == 0) {
        RETURN_ERROR_IF(!isfinite(p->partial_rotary_factor) || p->partial_rotary_factor <= 0.0 ||
                            p->partial_rotary_factor > 1.0,
                        err, POSENC_ERR_INVALID_ARGUMENT,
                        "partial_rotary_factor must be in (0, 1], got %g", p->partial_rotary_factor);
        r = (int32_t)((double)d * p->partial_rotary_factor); /* HF: int(head_dim * factor) */
    }
    RETURN_ERROR_IF(r < 0, err, POSENC_ERR_INVALID_ARGUMENT, "rotary_dim must be >= 0, got %d", r);
    RETURN_ERROR_IF(r > d, err, POSENC_ERR_INVALID_ARGUMENT,
                    "rotary_dim must be <= head_dim (%d), got %d", d, r);
    RETURN_ERROR_IF(r % 2 != 0 || r < 2, err, POSENC_ERR_INVALID_ARGUMENT,
                    "rotary_dim must be even and >= 2 (channels rotate in pairs), got %d%s", r,
                    p->rotary_dim == 0 ? " (from head_dim * partial_rotary_factor)" : "");
    RETURN_ERROR_IF(!isfinite(p->base) || p->base <= 1.0, err, POSENC_ERR_INVALID_ARGUMENT,
                    "base (rope_theta) must be finite and > 1, got %g", p->base);
    RETURN_ERROR_IF((int)p->scaling < 0 || (int)p->scaling > POSENC_ROPE_LLAMA3, err,
                    POSENC_ERR_INVALID_ARGUMENT, "unknown RoPE scaling %d", (int)p->scaling);
    RETURN_ERROR_IF(p->mode != POSENC_MODE_PRECISE && p->mode != POSENC_MODE_TORCH_COMPAT &&
                        p->mode != POSENC_MODE_GGML, err,
                    POSENC_ERR_INVALID_ARGUMENT, "unknown mode %d", (int)p->mode);
    FORWARD_IF_ERROR(check_scheme(p, r, err));
    if (out_rotary_dim) *out_rotary_dim = r;
    return posenc_ok_(err);
}

/* m(s, c) of YaRN / DeepSeek: 1 if s <= 1 else 0.1 c ln s + 1. */
static double yarn_get_mscale(double s, double c) { return s <= 1.0 ? 1.0 : 0.1 * c * log(s) + 1.0; }

static double attention_factor_of(const posenc_rope_params *p) {
    if (p->scaling == POSENC_ROPE_YARN) {
        if (p->attention_factor > 0.0) return p->attention_factor;
        if (p->mscale > 0.0 && p->mscale_all_dim > 0.0)
            return yarn_get_mscale(p->factor, p->mscale) / yarn_get_mscale(p->factor, p->mscale_all_dim);
        return yarn_get_mscale(p->factor, 1.0);
    }
    if (p->scaling == POSENC_ROPE_LONGROPE) {
        if (p->attention_factor > 0.0) return p->attention_factor;
        if (p->factor <= 1.0) return 1.0;
        return sqrt(1.0 + log(p->factor) / log((double)p->original_max_position));
    }
    return 1.0;
}

/* YaRN correction range (HF: Python float64 math). */
static void yarn_range(const posenc_rope_params *p, int32_t r, double *low, double *high) {
    const double two_pi = 6.283185307179586;
    double l0 = (double)p->original_max_position;
    double lo = (double)r * log(l0 / (p->beta_fast * two_pi)) / (2.0 * log(p->base));
    double hi = (double)r * log(l0 / (p->beta_slow * two_pi)) / (2.0 * log(p->base));
    if (p->truncate) {
        lo = floor(lo);
        hi = ceil(hi);
    }
    if (lo < 0.0) lo = 0.0;
    if (hi > (double)(r - 1)) hi = (double)(r - 1);
    if (lo == hi) hi += 0.001; /* HF's guard against a zero-width ramp */
    *low = lo;
    *high = hi;
}

/* base' of NTK / dynamic NTK (Python float64 in HF). */
static double ntk_base(const posenc_rope_params *p, int32_t r, int64_t seq_len) {
    if (r <= 2) return p->base; /* one pair: w_0 = 1 whatever the base */
    double s = p->factor;
    if (p->scaling == POSENC_ROPE_DYNAMIC) {
        double l = (double)(seq_len > p->max_position ? seq_len : p->max_position);
        s = p->factor * l / (double)p->max_position - (p->factor - 1.0);
    }
    return p->base * pow(s, (double)r / (double)(r - 2));
}

static const double *longrope_list(const posenc_rope_params *p, int64_t seq_len) {
    bool use_long = p->longrope_select == POSENC_LONGROPE_LONG ||
                    (p->longrope_select == POSENC_LONGROPE_BY_SEQ_LEN && seq_len > p->original_max_position);
    return use_long ? p->long_factors : p->short_factors;
}

static void frequencies_precise(const posenc_rope_params *p, int32_t r, int64_t seq_len, long double *out) {
    int32_t pairs = r / 2;
    long double base = (long double)p->base;
    if (p->scaling == POSENC_ROPE_NTK || p->scaling == POSENC_ROPE_DYNAMIC)
        base = (long double)ntk_base(p, r, seq_len);
    long double log_base = logl(base), f = (long double)p->factor;
    double low = 0, high = 1;
    if (p->scaling == POSENC_ROPE_YARN) yarn_range(p, r, &low, &high);
    const double *ext = p->scaling == POSENC_ROPE_LONGROPE ? longrope_list(p, seq_len) : NULL;
    const long double two_pi = 6.283185307179586476925286766559L;
    for (int32_t k = 0; k < pairs; k++) {
        long double w = expl(-((long double)(2 * k) / (long double)r) * log_base);
        switch (p->scaling) {
        case POSENC_ROPE_LINEAR:
            w /= f;
            break;
        case POSENC_ROPE_YARN: {
            long double ramp = ((long double)k - low) / ((long double)high - low);
            if (ramp < 0) ramp = 0;
            if (ramp > 1) ramp = 1;
            w = w / f * ramp + w * (1 - ramp); /* ramp 0: extrapolate (keep), 1: interpolate */
            break;
        }
        case POSENC_ROPE_LONGROPE:
            w /= (long double)ext[k];
            break;
        case POSENC_ROPE_LLAMA3: {
            long double l0 = (long double)p->original_max_position, wavelen = two_pi / w;
            long double lo = (long double)p->low_freq_factor, hi = (long double)p->high_freq_factor;
            if (wavelen > l0 / lo) {
                w /= f;
            } else if (!(wavelen < l0 / hi) && hi > lo) { /* hi == lo: no band (HF: 0/0 at the one edge) */
                long double s = (l0 / wavelen - lo) / (hi - lo);
                w = (1 - s) * w / f + s * w;
            }
            break;
        }
        default:
            break;
        }
        out[k] = w;
    }
}

/* HF's float32 steps. Each statement is one torch op (no fused multiply-add:
 * the build is ISO C, where GCC does not contract, and we keep one op per
 * statement for clang). */
static posenc_status frequencies_torch(const posenc_rope_params *p, int32_t r, int64_t seq_len, long double *out,
                                       posenc_error *err) {
    int32_t pairs = r / 2;
    double base = p->base;
    if (p->scaling == POSENC_ROPE_NTK || p->scaling == POSENC_ROPE_DYNAMIC) base = ntk_base(p, r, seq_len);
    float fbase = (float)base, ffactor = (float)p->factor;
    double low = 0, high = 1;
    if (p->scaling == POSENC_ROPE_YARN) yarn_range(p, r, &low, &high);
    const double *ext = p->scaling == POSENC_ROPE_LONGROPE ? longrope_list(p, seq_len) : NULL;
    float *powers = malloc(sizeof *powers * (size_t)pairs);
    RETURN_ERROR_IF(!powers, err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %d frequencies", pairs);
    for (int32_t k = 0; k < pairs; k++) powers[k] = (float)(2 * k) / (float)r; /* arange(0, dim, 2).float() / dim */
    torch_pow_base_f32_(torch_cpu_capability_get_(), fbase, powers, powers, (size_t)pairs); /* base ** that */
    for (int32_t k = 0; k < pairs; k++) {
        float pw = powers[k];
        float w = 1.0f / pw;
        switch (p->scaling) {
        case POSENC_ROPE_LINEAR:
            w = w / ffactor;
            break;
        case POSENC_ROPE_YARN: {
            float interp_den = ffactor * pw;
            float interp = 1.0f / interp_den;
            float ramp = ((float)k - (float)low) / (float)(high - low);
            ramp = ramp < 0.0f ? 0.0f : ramp > 1.0f ? 1.0f : ramp;
            float extrap_factor = 1.0f - ramp;
            float one_minus = 1.0f - extrap_factor;
            float a = interp * one_minus;
            float b = w * extrap_factor;
            w = a + b;
            break;
        }
        case POSENC_ROPE_LONGROPE: {
            float den = (float)ext[k] * pw;
            w = 1.0f / den;
            break;
        }
        case POSENC_ROPE_LLAMA3: {
            double l0 = (double)p->original_max_position;
            /* Python scalar / tensor is tensor.reciprocal() * scalar in torch */
            float recip = 1.0f / w;
            float wavelen = recip * (float)6.283185307179586;
            float low_wavelen = (float)(l0 / p->low_freq_factor);
            float high_wavelen = (float)(l0 / p->high_freq_factor);
            float llama = wavelen > low_wavelen ? w / ffactor : w;
            if (!(wavelen < high_wavelen) && !(wavelen > low_wavelen) && p->high_freq_factor > p->low_freq_factor) {
                float recip_wavelen = 1.0f / wavelen;
                float ratio = recip_wavelen * (float)l0;
                float num = ratio - (float)p->low_freq_factor;
                float s = num / (float)(p->high_freq_factor - p->low_freq_factor);
                float t1 = 1.0f - s;
                float t2 = t1 * llama;
                float t3 = t2 / ffactor;
                float t4 = s * llama;
                llama = t3 + t4;
            }
            w = llama;
            break;
        }
        default:
            break;
        }
        out[k] = (long double)w;
    }
    free(powers);
    return POSENC_OK;
}

/* GGML mode knobs. LLAMA3 and LONGROPE reach ggml as per-pair divisors of
 * theta (llama.cpp's rope_freqs tensor): LLAMA3's as llama.cpp's converter computes
 * them (float32 torch steps, below), LONGROPE's the chosen factor list rounded to f32. */
static posenc_status ggml_setup(const posenc_rope_params *p, int32_t r, int64_t seq_len, rope_ggml_ *g,
                                posenc_error *err) {
    int32_t pairs = r / 2;
    long double *ff = NULL;
    if (p->scaling == POSENC_ROPE_LLAMA3 || p->scaling == POSENC_ROPE_LONGROPE) {
        ff = malloc(sizeof *ff * 2 * (size_t)pairs);
        RETURN_ERROR_IF(!ff, err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %d frequency factors", pairs);
        if (p->scaling == POSENC_ROPE_LONGROPE) {
            const double *ext = longrope_list(p, seq_len);
            for (int32_t k = 0; k < pairs; k++) ff[k] = (long double)ext[k];
        } else {
            /* llama.cpp's converter (convert_hf_to_gguf.py, LlamaModel's rope_freqs) in its
             * torch float32 steps: freq = HF's float32 inv_freq; wavelen = reciprocal(freq) *
             * 2 pi; smooth = (reciprocal(wavelen) * L0 - low) / (high - low); factor 1, the
             * scaling factor, or reciprocal((1 - smooth) / factor + smooth) (tensor-scalar
             * ops of 0-d float32 tensors: a python scalar on the left is reciprocal times it).
             * Checked bit for bit against the converter's tensor for Llama 3.1 8B and 3.2 1B
             * (tests/fixtures/ggml). */
            posenc_rope_params plain = *p;
            plain.scaling = POSENC_ROPE_NONE;
            posenc_status fst = frequencies_torch(&plain, r, seq_len, ff + pairs, err);
            if (fst != POSENC_OK) {
                free(ff);
                return fst;
            }
            const float two_pi = (float)6.283185307179586, l0 = (float)p->original_max_position;
            const float low = (float)p->low_freq_factor;
            const float high_wave = (float)((double)p->original_max_position / p->high_freq_factor);
            const float low_wave = (float)((double)p->original_max_position / p->low_freq_factor);
            const float factor = (float)p->factor, span = (float)(p->high_freq_factor - p->low_freq_factor);
            for (int32_t k = 0; k < pairs; k++) {
                float freq = (float)ff[pairs + k], wave = (1.0f / freq) * two_pi, f;
                if (wave < high_wave) {
                    f = 1.0f;
                } else if (wave > low_wave) {
                    f = factor;
                } else {
                    float smooth = ((1.0f / wave) * l0 - low) / span;
                    f = 1.0f / ((1.0f - smooth) / factor + smooth);
                }
                ff[k] = (long double)f;
            }
        }
    }
    posenc_rope_params q = *p;
    if (p->scaling == POSENC_ROPE_NTK) q.base = ntk_base(p, r, seq_len);
    posenc_status st = rope_ggml_init_(&q, r, ff, g, err);
    free(ff);
    if (st == POSENC_OK && (p->scaling == POSENC_ROPE_YARN || p->scaling == POSENC_ROPE_LONGROPE)) {
        /* our attention factor A = ggml's attn_factor x its own YaRN magnitude */
        double a = attention_factor_of(p);
        if (p->scaling == POSENC_ROPE_YARN) {
            bool derived = !(p->attention_factor > 0.0) && !(p->mscale > 0.0 && p->mscale_all_dim > 0.0);
            g->attn_factor = derived ? 1.0f : (float)(a / (double)rope_ggml_mscale_(g));
        } else {
            g->attn_factor = (float)a;
        }
    }
    if (st != POSENC_OK) rope_ggml_free_(g);
    return st;
}

posenc_status rope_frequencies_ld_(const posenc_rope_params *params, int64_t seq_len, long double *inv,
                                   size_t out_count, double *attention_factor, posenc_error *err) {
    int32_t r = 0;
    FORWARD_IF_ERROR(posenc_rope_check(params, &r, err));
    RETURN_ERROR_IF(seq_len < 0, err, POSENC_ERR_INVALID_ARGUMENT, "seq_len must be >= 0, got %lld",
                    (long long)seq_len);
    RETURN_IF_NULL(inv, err);
    RETURN_ERROR_IF(out_count < (size_t)(r / 2), err, POSENC_ERR_BUFFER_TOO_SMALL,
                    "inv_freq needs rotary_dim/2 = %d entries, out_count is %zu", r / 2, out_count);
    double attention = attention_factor_of(params);
    if (params->mode == POSENC_MODE_GGML) { /* ggml's angle at position 1 and its magnitude */
        rope_ggml_ g;
        FORWARD_IF_ERROR(ggml_setup(params, r, seq_len, &g, err));
        float *theta = malloc(sizeof *theta * (size_t)(r / 2));
        if (theta) rope_ggml_angles_(&g, r / 2, 1.0L, theta);
        for (int32_t k = 0; theta && k < r / 2; k++) inv[k] = (long double)theta[k];
        attention = (double)rope_ggml_mscale_(&g);
        rope_ggml_free_(&g);
        RETURN_ERROR_IF(!theta, err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %d angles", r / 2);
        free(theta);
    } else if (params->mode == POSENC_MODE_TORCH_COMPAT) {
        FORWARD_IF_ERROR(frequencies_torch(params, r, seq_len, inv, err));
    } else {
        frequencies_precise(params, r, seq_len, inv);
    }
    /* Each knob is checked on its own above, but extreme combinations still
     * overflow: a factor beyond float32 in TORCH_COMPAT, or an NTK base'
     * = base * factor^(R/(R-2)) that reaches inf (then w_0 = exp(0 * inf) =
     * NaN). Found by fuzz_rope; refuse rather than return NaN/inf tables. */
    for (int32_t k = 0; k < r / 2; k++)
        RETURN_ERROR_IF(!isfinite((double)inv[k]) || inv[k] < 0.0L, err, POSENC_ERR_INVALID_ARGUMENT,
                        "scaling=%s with base %g and factor %g gives inverse frequency %g for pair %d; "
                        "use values within float32 range", posenc_rope_scaling_name(params->scaling),
                        params->base, params->factor, (double)inv[k], k);
    /* the factor multiplies float32 cos/sin: past 1e30 they would overflow to inf */
    RETURN_ERROR_IF(!isfinite(attention) || attention <= 0.0 || attention > 1e30, err, POSENC_ERR_INVALID_ARGUMENT,
                    "scaling=%s with factor %g gives attention factor %g (must be > 0 and <= 1e30)",
                    posenc_rope_scaling_name(params->scaling), params->factor, attention);
    if (attention_factor) *attention_factor = attention;
    return posenc_ok_(err);
}

posenc_status posenc_rope_frequencies(const posenc_rope_params *params, int64_t seq_len, double *inv_freq,
                                      size_t out_count, double *attention_factor, posenc_error *err) {
    int32_t r = 0;
    FORWARD_IF_ERROR(posenc_rope_check(params, &r, err));
    RETURN_IF_NULL(inv_freq, err);
    RETURN_ERROR_IF(out_count < (size_t)(r / 2), err, POSENC_ERR_BUFFER_TOO_SMALL,
                    "inv_freq needs rotary_dim/2 = %d entries, out_count is %zu", r / 2, out_count);
    long double *w = malloc(sizeof *w * (size_t)(r / 2));
    RETURN_ERROR_IF(!w, err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %d frequencies", r / 2);
    posenc_status st = rope_frequencies_ld_(params, seq_len, w, (size_t)(r / 2), attention_factor, err);
    for (int32_t k = 0; st == POSENC_OK && k < r / 2; k++) inv_freq[k] = (double)w[k]; /* rounded once */
    free(w);
    return st;
}

posenc_status rope_plan_create_(const posenc_rope_params *params, int64_t seq_len, rope_plan_ *plan,
                                posenc_error *err) {
    RETURN_IF_NULL(plan, err);
    memset(plan, 0, sizeof *plan);
    int32_t r = 0;
    FORWARD_IF_ERROR(posenc_rope_check(params, &r, err));
    plan->inv = malloc(sizeof *plan->inv * (size_t)(r / 2));
    RETURN_ERROR_IF(!plan->inv, err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %d frequencies", r / 2);
    posenc_status st = rope_frequencies_ld_(params, seq_len, plan->inv, (size_t)(r / 2), &plan->attention, err);
    if (st != POSENC_OK) {
        rope_plan_free_(plan);
        return st;
    }
    for (int32_t k = 0; k < r / 2; k++) plan->inv_abs_max = fmaxl(plan->inv_abs_max, fabsl(plan->inv[k]));
    plan->head_dim = params->head_dim;
    plan->rotary_dim = r;
    plan->pairs = r / 2;
    plan->mode = params->mode;
    if (params->mode == POSENC_MODE_GGML) {
        st = ggml_setup(params, r, seq_len, &plan->ggml, err);
        if (st != POSENC_OK) rope_plan_free_(plan);
        return st;
    }
    return POSENC_OK;
}

void rope_plan_free_(rope_plan_ *plan) {
    if (!plan) return;
    free(plan->inv);
    plan->inv = NULL;
    rope_ggml_free_(&plan->ggml);
}
