#define _POSIX_C_SOURCE 200809L
/* config.c: lab configuration: defaults, validation, text form, scheme names. */
#include "lab_internal.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const scheme_names[LAB_POS_COUNT_] = {
    "none", "sinusoidal", "learned", "rope", "alibi", "t5", "concat", "half-concat",
    "hybrid", "freq-scale", "gru", "sparse", "index", "normalized", "shaw"};

posenc_status lab_fail(posenc_error *err, posenc_status status, const char *fmt, ...) {
    if (err) {
        err->status = status;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return status;
}

uint64_t lab_splitmix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

const char *lab_scheme_name(lab_scheme scheme) {
    return (unsigned)scheme < LAB_POS_COUNT_ ? scheme_names[scheme] : NULL;
}

posenc_status lab_scheme_parse(const char *name, lab_scheme *out, posenc_error *err) {
    for (int i = 0; i < LAB_POS_COUNT_; i++)
        if (name && strcmp(name, scheme_names[i]) == 0) {
            *out = (lab_scheme)i;
            return POSENC_OK;
        }
    char list[256] = "";
    for (int i = 0; i < LAB_POS_COUNT_; i++) {
        strncat(list, scheme_names[i], sizeof list - strlen(list) - 1);
        if (i + 1 < LAB_POS_COUNT_) strncat(list, ", ", sizeof list - strlen(list) - 1);
    }
    return lab_fail(err, POSENC_ERR_INVALID_ARGUMENT, "unknown position scheme '%s' (known: %s)",
                    name ? name : "(null)", list);
}

void lab_config_default(lab_config *c) {
    memset(c, 0, sizeof *c);
    c->vocab = 256;
    c->layers = 4;
    c->d_model = 128;
    c->heads = 4;
    c->d_ff = 512;
    c->context = 128;
    c->tied = 1;
    c->causal = 1;
    c->seed = 1;
    c->init_sigma = 0.02;
    c->scheme = LAB_POS_NONE;
    c->learned_sigma = POSENC_LEARNED_SIGMA_DEFAULT;
    c->learned_past_end = POSENC_PAST_END_ERROR;
    c->rope_layout = POSENC_LAYOUT_HALF;
    c->alibi_max_bias = 8.0;
    c->t5_buckets = 32;
    c->t5_max_distance = 128;
    c->sparse_keep = 0.1;
    c->shaw_clip = 16;
    /* the RoPE settings start at the library's own defaults (HF's) */
    posenc_rope_params rope;
    posenc_rope_params_default(&rope, 0);
    c->rope_base = rope.base;
    c->rope_scaling = rope.scaling;
    c->rope_factor = rope.factor;
    c->rope_beta_fast = rope.beta_fast;
    c->rope_beta_slow = rope.beta_slow;
    c->rope_low_freq_factor = rope.low_freq_factor;
    c->rope_high_freq_factor = rope.high_freq_factor;
}

posenc_status lab_rope_params(const lab_config *c, const lab_eval_options *eval, posenc_rope_params *p,
                              posenc_error *err) {
    if (!c || !p) return lab_fail(err, POSENC_ERR_NULL_POINTER, "config or params is NULL");
    if (c->heads < 1 || c->d_model % c->heads != 0)
        return lab_fail(err, POSENC_ERR_INVALID_ARGUMENT, "d_model %d is not divisible by heads %d", c->d_model, c->heads);
    int32_t hd = c->d_model / c->heads;
    posenc_rope_params_default(p, hd);
    p->rotary_dim = c->rope_rotary_dim;
    p->base = c->rope_base;
    int as_trained = !eval || eval->rope_scaling == LAB_ROPE_AS_TRAINED;
    p->scaling = as_trained ? c->rope_scaling : eval->rope_scaling;
    p->factor = eval && eval->rope_factor > 0 ? eval->rope_factor : c->rope_factor;
    int64_t L0 = c->rope_original_context > 0 ? c->rope_original_context : c->context;
    p->original_max_position = L0;
    p->max_position = L0; /* dynamic NTK grows the base past the original context */
    p->beta_fast = c->rope_beta_fast;
    p->beta_slow = c->rope_beta_slow;
    p->attention_factor = c->rope_attention_factor;
    p->low_freq_factor = c->rope_low_freq_factor;
    p->high_freq_factor = c->rope_high_freq_factor;
    if (p->scaling == POSENC_ROPE_LONGROPE) {
        if (!eval || as_trained || !eval->rope_longrope_factors)
            return lab_fail(err, POSENC_ERR_INVALID_ARGUMENT, "longrope needs rope_longrope_factors (rotary_dim/2 values)");
        int32_t r = c->rope_rotary_dim ? c->rope_rotary_dim : hd;
        p->short_factors = p->long_factors = eval->rope_longrope_factors;
        p->factors_count = (size_t)r / 2;
        p->longrope_select = POSENC_LONGROPE_LONG;
    }
    return posenc_rope_check(p, NULL, err);
}

int32_t lab_pe_width(const lab_config *c) {
    switch (c->scheme) {
    case LAB_POS_CONCAT: return c->pe_dim > 0 ? c->pe_dim : c->d_model;
    case LAB_POS_HALF_CONCAT: return c->d_model / 2;
    case LAB_POS_SINUSOIDAL: case LAB_POS_LEARNED: case LAB_POS_HYBRID: case LAB_POS_FREQ_SCALE:
    case LAB_POS_GRU: case LAB_POS_SPARSE: case LAB_POS_INDEX: case LAB_POS_NORMALIZED:
        return c->d_model;
    default: return 0;
    }
}

int32_t lab_wte_width(const lab_config *c) {
    return c->scheme == LAB_POS_HALF_CONCAT ? c->d_model - c->d_model / 2 : c->d_model;
}

int64_t lab_table_rows(const lab_config *c) {
    return c->random_positions > c->context ? c->random_positions : c->context;
}

posenc_status lab_config_check(const lab_config *c, posenc_error *err) {
    const posenc_status bad = POSENC_ERR_INVALID_ARGUMENT;
    if (!c) return lab_fail(err, POSENC_ERR_NULL_POINTER, "config is NULL");
    if (c->vocab < 2 || c->vocab > 65536) return lab_fail(err, bad, "vocab must be in 2..65536, got %d", c->vocab);
    if (c->layers < 1 || c->layers > 64) return lab_fail(err, bad, "layers must be in 1..64, got %d", c->layers);
    if (c->d_model < 2 || c->d_model > 8192) return lab_fail(err, bad, "d_model must be in 2..8192, got %d", c->d_model);
    if (c->heads < 1 || c->heads > c->d_model)
        return lab_fail(err, bad, "heads must be in 1..d_model (%d), got %d", c->d_model, c->heads);
    if (c->d_model % c->heads != 0)
        return lab_fail(err, bad, "d_model %d is not divisible by heads %d", c->d_model, c->heads);
    if (c->d_ff < 1 || c->d_ff > 65536) return lab_fail(err, bad, "d_ff must be in 1..65536, got %d", c->d_ff);
    if (c->context < 1 || c->context > 65536)
        return lab_fail(err, bad, "context must be in 1..65536, got %d", c->context);
    if ((c->tied != 0 && c->tied != 1) || (c->causal != 0 && c->causal != 1) ||
        (c->token_scale_sqrt_d != 0 && c->token_scale_sqrt_d != 1))
        return lab_fail(err, bad, "tied, causal and token_scale_sqrt_d must be 0 or 1, got %d, %d, %d", c->tied, c->causal,
                        c->token_scale_sqrt_d);
    if (!(c->init_sigma >= 0 && isfinite(c->init_sigma)))
        return lab_fail(err, bad, "init_sigma must be finite and >= 0, got %g", c->init_sigma);
    if (!lab_scheme_name(c->scheme)) return lab_fail(err, bad, "unknown scheme value %d", (int)c->scheme);
    if (c->random_positions < 0 || c->random_positions > ((int64_t)1 << 24))
        return lab_fail(err, bad, "random_positions must be in 0..2^24, got %lld", (long long)c->random_positions);
    if (c->random_positions > 0 && c->random_positions < c->context)
        return lab_fail(err, bad, "random_positions %lld must be >= context %d (positions are a subset of [0, N))",
                        (long long)c->random_positions, c->context);
    if (c->scheme != LAB_POS_ROPE && c->rope_scaling != POSENC_ROPE_NONE)
        return lab_fail(err, bad, "rope scaling %s needs scheme rope, got %s", posenc_rope_scaling_name(c->rope_scaling),
                        lab_scheme_name(c->scheme));
    int32_t hd = c->d_model / c->heads;
    switch (c->scheme) {
    case LAB_POS_LEARNED: case LAB_POS_HYBRID:
        if (!(c->learned_sigma >= 0 && isfinite(c->learned_sigma)))
            return lab_fail(err, bad, "learned_sigma must be finite and >= 0, got %g", c->learned_sigma);
        if (c->learned_past_end != POSENC_PAST_END_ERROR && c->learned_past_end != POSENC_PAST_END_CLAMP)
            return lab_fail(err, bad, "learned past-end policy must be refuse or clamp, got %d", (int)c->learned_past_end);
        if (c->scheme == LAB_POS_HYBRID && (c->hybrid_learned_dim < 0 || c->hybrid_learned_dim > c->d_model))
            return lab_fail(err, bad, "hybrid learned dim must be in 0..d_model (%d), got %d", c->d_model,
                            c->hybrid_learned_dim);
        break;
    case LAB_POS_ROPE: {
        int32_t r = c->rope_rotary_dim ? c->rope_rotary_dim : hd;
        if (hd % 2 != 0 && c->rope_rotary_dim == 0)
            return lab_fail(err, bad, "rope needs an even head dim, got head dim %d (d_model %d / heads %d)", hd,
                            c->d_model, c->heads);
        if (r < 2 || r > hd || r % 2 != 0)
            return lab_fail(err, bad, "rope rotary dim must be even and in 2..head dim %d, got %d", hd, r);
        if (c->rope_layout != POSENC_LAYOUT_HALF && c->rope_layout != POSENC_LAYOUT_INTERLEAVED)
            return lab_fail(err, bad, "rope layout must be half or interleaved, got %d", (int)c->rope_layout);
        if (c->rope_scaling == POSENC_ROPE_LONGROPE || strcmp(posenc_rope_scaling_name(c->rope_scaling), "?") == 0)
            return lab_fail(err, bad,
                            "rope scaling for training must be none, linear, ntk, dynamic, yarn or llama3, got %s (%d) "
                            "(longrope's per-pair factor lists are an evaluation option)",
                            posenc_rope_scaling_name(c->rope_scaling), (int)c->rope_scaling);
        if (c->rope_original_context < 0 || c->rope_original_context > 65536)
            return lab_fail(err, bad, "rope original context must be in 0..65536 (0 = context), got %d", c->rope_original_context);
        posenc_rope_params p;
        return lab_rope_params(c, NULL, &p, err);
    }
    case LAB_POS_ALIBI: {
        float slopes[1];
        (void)slopes;
        if (!(c->alibi_max_bias > 0 && isfinite(c->alibi_max_bias)))
            return lab_fail(err, bad, "alibi max bias must be finite and > 0, got %g", c->alibi_max_bias);
        break;
    }
    case LAB_POS_T5: {
        posenc_t5_params t;
        t.num_buckets = c->t5_buckets;
        t.max_distance = c->t5_max_distance;
        t.bidirectional = c->causal ? 0 : 1;
        return posenc_t5_check(&t, err);
    }
    case LAB_POS_SHAW:
        if (c->shaw_clip < 0 || c->shaw_clip > 65536) return lab_fail(err, bad, "shaw clip must be in 0..65536, got %d", c->shaw_clip);
        break;
    case LAB_POS_CONCAT:
        if (c->pe_dim < 0 || c->pe_dim > 8192) return lab_fail(err, bad, "pe_dim must be in 0..8192, got %d", c->pe_dim);
        if (lab_pe_width(c) % 2 != 0) return lab_fail(err, bad, "concat pe_dim must be even, got %d", lab_pe_width(c));
        break;
    case LAB_POS_HALF_CONCAT:
        if (c->tied) return lab_fail(err, bad, "half-concat has a d_model/2 token embedding: needs tied=0");
        if ((c->d_model / 2) % 2 != 0)
            return lab_fail(err, bad, "half-concat needs d_model/2 even (whole sin/cos pairs), got d_model %d", c->d_model);
        break;
    case LAB_POS_SPARSE:
        if (!(c->sparse_keep >= 0 && c->sparse_keep <= 1))
            return lab_fail(err, bad, "sparse keep probability must be in [0, 1], got %g", c->sparse_keep);
        /* fall through */
    case LAB_POS_SINUSOIDAL: case LAB_POS_FREQ_SCALE: case LAB_POS_GRU:
        if (c->d_model % 2 != 0) return lab_fail(err, bad, "%s needs an even d_model, got %d", lab_scheme_name(c->scheme), c->d_model);
        break;
    default: break;
    }
    return POSENC_OK;
}

/* key=value text, every field, in one fixed order (checkpoint metadata). */
size_t lab_config_format(const lab_config *c, char *out, size_t size) {
    int n = snprintf(out, size,
                     "vocab=%d layers=%d d_model=%d heads=%d d_ff=%d context=%d tied=%d causal=%d seed=%llu "
                     "init_sigma=%.17g scheme=%s token_scale_sqrt_d=%d learned_sigma=%.17g learned_past_end=%d "
                     "rope_layout=%d rope_rotary_dim=%d rope_base=%.17g alibi_max_bias=%.17g t5_buckets=%d "
                     "t5_max_distance=%d pe_dim=%d hybrid_learned_dim=%d sparse_keep=%.17g random_positions=%lld shaw_clip=%d "
                     "rope_scaling=%s rope_factor=%.17g rope_original_context=%d rope_beta_fast=%.17g rope_beta_slow=%.17g "
                     "rope_attention_factor=%.17g rope_low_freq_factor=%.17g rope_high_freq_factor=%.17g",
                     c->vocab, c->layers, c->d_model, c->heads, c->d_ff, c->context, c->tied, c->causal,
                     (unsigned long long)c->seed, c->init_sigma, lab_scheme_name(c->scheme) ? lab_scheme_name(c->scheme) : "?",
                     c->token_scale_sqrt_d, c->learned_sigma, (int)c->learned_past_end, (int)c->rope_layout,
                     c->rope_rotary_dim, c->rope_base, c->alibi_max_bias, c->t5_buckets, c->t5_max_distance,
                     c->pe_dim, c->hybrid_learned_dim, c->sparse_keep, (long long)c->random_positions, c->shaw_clip,
                     posenc_rope_scaling_name(c->rope_scaling), c->rope_factor, c->rope_original_context,
                     c->rope_beta_fast, c->rope_beta_slow, c->rope_attention_factor, c->rope_low_freq_factor,
                     c->rope_high_freq_factor);
    return n < 0 ? 0 : (size_t)n;
}

/* An integer config field: the whole value is a decimal integer in [lo, hi]
 * (a checkpoint's text is data: "1e300", "nan" or "3.5" must not reach a cast). */
static posenc_status int_field(const char *k, const char *v, int64_t lo, int64_t hi, int64_t *out, posenc_error *err) {
    char *end = NULL;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (end == v || *end != '\0' || errno == ERANGE || x < lo || x > hi)
        return lab_fail(err, POSENC_ERR_FORMAT, "config field '%s=%.40s' is not an integer in %lld..%lld", k, v,
                        (long long)lo, (long long)hi);
    *out = x;
    return POSENC_OK;
}

posenc_status lab_config_parse_text(const char *text, lab_config *c, posenc_error *err) {
    lab_config_default(c);
    char buf[2048];
    if (strlen(text) >= sizeof buf) return lab_fail(err, POSENC_ERR_FORMAT, "config text too long (%zu bytes)", strlen(text));
    strcpy(buf, text);
    for (char *save = NULL, *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq) return lab_fail(err, POSENC_ERR_FORMAT, "config field '%.60s' has no '='", tok);
        *eq = 0;
        const char *k = tok, *v = eq + 1;
        char *end = NULL;
        double d = strtod(v, &end);
        int numeric = end && *end == 0 && end != v;
        /* every number finite, used by the scheme or not: --init copies the whole
           config into a new model, where a field may come into use */
        if (numeric && !isfinite(d))
            return lab_fail(err, POSENC_ERR_FORMAT, "config field '%s=%.40s' is not a finite number", k, v);
        /* strtod reads C's hex floats ("0x10" = 16); lab_config_format writes decimal, so a hex value is an
           edit, refused rather than read as another number (the tool's options refuse it too, C8) */
        const char *digits = v + (v[0] == '+' || v[0] == '-');
        if (numeric && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X'))
            return lab_fail(err, POSENC_ERR_FORMAT, "config field '%s=%.40s' is not a decimal number", k, v);
        int64_t i = 0;
        posenc_status st = POSENC_OK;
        /* int32 fields: range only (lab_config_check says what each may be) */
#define INT_FIELD(name) else if (strcmp(k, #name) == 0) { \
            if ((st = int_field(k, v, INT32_MIN, INT32_MAX, &i, err)) == POSENC_OK) c->name = (int32_t)i; }
#define DBL_FIELD(name) else if (strcmp(k, #name) == 0) { \
            if (numeric) c->name = d; \
            else st = lab_fail(err, POSENC_ERR_FORMAT, "config field '%s=%.40s' is not a number", k, v); }
        if (strcmp(k, "scheme") == 0) {
            st = lab_scheme_parse(v, &c->scheme, err);
        } else if (strcmp(k, "seed") == 0) {
            errno = 0;
            unsigned long long seed = strtoull(v, &end, 10);
            if (end == v || *end || errno == ERANGE || v[0] == '-')
                st = lab_fail(err, POSENC_ERR_FORMAT, "config field 'seed=%.40s' is not an unsigned 64-bit integer", v);
            c->seed = seed;
        } else if (strcmp(k, "random_positions") == 0) {
            if ((st = int_field(k, v, INT64_MIN, INT64_MAX, &i, err)) == POSENC_OK) c->random_positions = i;
        } else if (strcmp(k, "learned_past_end") == 0) {
            if ((st = int_field(k, v, INT32_MIN, INT32_MAX, &i, err)) == POSENC_OK) c->learned_past_end = (posenc_past_end)(int)i;
        } else if (strcmp(k, "rope_layout") == 0) {
            if ((st = int_field(k, v, INT32_MIN, INT32_MAX, &i, err)) == POSENC_OK) c->rope_layout = (posenc_layout)(int)i;
        } else if (strcmp(k, "rope_scaling") == 0) {
            st = posenc_rope_scaling_parse(v, &c->rope_scaling, err);
        }
        INT_FIELD(vocab) INT_FIELD(layers) INT_FIELD(d_model) INT_FIELD(heads) INT_FIELD(d_ff)
        INT_FIELD(context) INT_FIELD(tied) INT_FIELD(causal) INT_FIELD(token_scale_sqrt_d)
        INT_FIELD(rope_rotary_dim) INT_FIELD(t5_buckets) INT_FIELD(t5_max_distance) INT_FIELD(pe_dim)
        INT_FIELD(hybrid_learned_dim) INT_FIELD(shaw_clip) INT_FIELD(rope_original_context)
        DBL_FIELD(init_sigma) DBL_FIELD(learned_sigma) DBL_FIELD(rope_base) DBL_FIELD(alibi_max_bias)
        DBL_FIELD(sparse_keep) DBL_FIELD(rope_factor) DBL_FIELD(rope_beta_fast) DBL_FIELD(rope_beta_slow)
        DBL_FIELD(rope_attention_factor) DBL_FIELD(rope_low_freq_factor) DBL_FIELD(rope_high_freq_factor)
        else st = lab_fail(err, POSENC_ERR_FORMAT, "config field '%.40s' is unknown", k);
#undef INT_FIELD
#undef DBL_FIELD
        if (st) return st;
    }
    return lab_config_check(c, err);
}

/* Sorted distinct values in [0, range): selection sampling (Knuth's algorithm S). */
void lab_random_positions(uint64_t seed, int64_t step, int32_t b, int64_t range, int32_t T, int64_t *out) {
    uint64_t state = lab_splitmix64(seed ^ 0x5bd1e995ull) ^ lab_splitmix64((uint64_t)step * 0x9E3779B97F4A7C15ull + (uint64_t)b);
    int32_t chosen = 0;
    for (int64_t v = 0; v < range && chosen < T; v++) {
        state = lab_splitmix64(state);
        double u = (double)(state >> 11) * 0x1.0p-53;
        if ((double)(range - v) * u < (double)(T - chosen)) out[chosen++] = v;
    }
}
