/* rope_identify_compare.c: where a cache departs from a model's config
 * (posenc_rope_identity_compare, posenc.h 4b). The identity (rope_identify.c)
 * says what the cache is; this regenerates the config's table in each
 * arithmetic and names each way the cache differs as a kind with numbers.
 * No words: the tool (cli/identify_words.c) and the Python package word them.
 * Calls the public table, frequency and residual functions; nothing calls back. */
#include "rope_internal.h"

#include <stdlib.h>
#include <string.h>

static const char *const kind_names[] = {"?",         "rotary_dim",     "dynamic_length", "offset",
                                         "magnitude", "longrope_list",  "switch_scheme",  "switch_at",
                                         "switch_factors", "frequencies", "imrope_still", "imrope_residual",
                                         "grid",      "unexplained"};

const char *posenc_rope_departure_kind_name(posenc_rope_departure_kind kind) {
    return (int)kind > 0 && (size_t)kind < sizeof kind_names / sizeof kind_names[0] ? kind_names[kind] : "?";
}

/* A new departure of `kind` (all numbers cleared, max_ulp -1), or NULL past the
 * array's end (counted in departures_dropped, so a caller can say so). */
static posenc_rope_departure *add(posenc_rope_comparison *out, posenc_rope_departure_kind kind) {
    if (out->departure_count >= POSENC_ROPE_MAX_DEPARTURES) {
        out->departures_dropped++;
        return NULL;
    }
    posenc_rope_departure *d = &out->departures[out->departure_count++];
    memset(d, 0, sizeof *d);
    d->kind = kind;
    d->first = d->last = -1;
    d->max_ulp = -1;
    return d;
}

/* YaRN's m(s, M) = 0.1 M ln s + 1 (1 for s <= 1): HF's get_mscale */
static double get_mscale(double s, double m) { return s <= 1 ? 1.0 : 0.1 * m * log(s) + 1.0; }

/* Which reading of the attention factor the measured magnitude is. DeepSeek's
 * magnitude is m(s, mscale) / m(s, mscale_all_dim) (mscale_all_dim's part goes to the
 * softmax scale): name the reading an engine took instead. */
static void magnitude_reading(posenc_rope_departure *d, const posenc_rope_params *cfg, double got, double want,
                              double tol) {
    d->reading = fabs(got - 1) <= tol && want != 1 ? POSENC_MAGNITUDE_DROPPED
                 : fabs(want - 1) <= tol            ? POSENC_MAGNITUDE_ADDED
                                                    : POSENC_MAGNITUDE_OTHER;
    if (cfg->scaling != POSENC_ROPE_YARN || !(cfg->mscale > 0 || cfg->mscale_all_dim > 0)) return;
    double s = cfg->factor;
    d->alt[0] = get_mscale(s, 1), d->alt[1] = get_mscale(s, cfg->mscale), d->alt[2] = get_mscale(s, cfg->mscale_all_dim);
    const double readings[] = {d->alt[0], d->alt[1], d->alt[2], 1.0};
    for (int i = 0; i < 4; i++)
        if (fabs(got - readings[i]) <= tol * readings[i]) {
            d->reading = POSENC_MAGNITUDE_YARN_DEFAULT + i;
            return;
        }
    d->reading = POSENC_MAGNITUDE_MSCALE_NONE;
}

/* A cache whose slopes change at one row (LongRoPE short -> long) against the config. */
static void switch_departures(posenc_rope_comparison *out, const posenc_rope_identity *id,
                              const posenc_rope_params *cfg) {
    posenc_rope_departure *d;
    if (cfg->scaling != POSENC_ROPE_LONGROPE) {
        if ((d = add(out, POSENC_DEPART_SWITCH_SCHEME))) d->position = id->switch_position;
        return;
    }
    if ((d = add(out, POSENC_DEPART_SWITCH_AT))) {
        d->position = id->switch_position;
        d->config_position = cfg->original_max_position;
        d->reading = id->long_offset == 0;
    }
    /* the lists themselves against the config's */
    int32_t K = id->rotary_dim / 2;
    for (int side = 0; side < 2 && cfg->factors_count == (size_t)K; side++) {
        const double *got = side ? id->long_pair_factor : id->pair_factor;
        const double *want = side ? cfg->long_factors : cfg->short_factors;
        if (!got || !want) continue;
        double worst = 0;
        int32_t first = -1;
        for (int32_t k = 0; k < K; k++) {
            /* the fit's noise: float32 inv_freq rounding (~1e-7) plus the phase noise of a slow pair */
            double span = (double)(side ? id->rows - (id->switch_position - id->offset) : id->switch_position - id->offset);
            double noise = 1e-6 + 8 * 0x1p-24 / fmax(id->inv_freq[k] * span, 1e-30);
            double rel = fabs(got[k] / want[k] - 1);
            if (rel > 1e-4 + noise) {
                if (first < 0) first = k;
                worst = fmax(worst, rel);
            }
        }
        if ((d = add(out, POSENC_DEPART_SWITCH_FACTORS))) d->side = side, d->first = first, d->worst = worst;
    }
}

/* Qwen3-VL (interleaved M-RoPE) read from llama.cpp's cache: the pairs no t/h/w section claims under
 * ggml's IMROPE rule (t at k%3==0 < 3 s0, h at k%3==1 < 3 s1, w at k%3==2 < 3 s2) come from a 4th
 * stream, 0 for text tokens, where HF's apply_interleaved_mrope keeps them on t (the token's position).
 * When exactly those pairs hold angle 0 at every row, name them and how far the cache with them put
 * back to the config's values is from the config in ggml's arithmetic. */
static posenc_status imrope_departures(posenc_rope_comparison *out, const posenc_rope_identity *id,
                                       const posenc_array *cache, const posenc_array *sin_table,
                                       const posenc_mrope_sections *im, const posenc_rope_params *cfg, int32_t r) {
    if (!im || im->kind != POSENC_MROPE_INTERLEAVED || sin_table || id->layout != POSENC_CACHE_GGML ||
        cache->dtype != POSENC_DTYPE_F32 || cache->ndim != 2 || cache->shape[1] != (size_t)r || id->rotary_dim != r ||
        r < 2)
        return POSENC_OK;
    const int32_t K = r / 2, *s = im->sizes;
    const int64_t T = (int64_t)cache->shape[0];
    const float *v = cache->data;
    int32_t first = -1, last = -1, count = 0;
    bool still = true, runs = true;
    for (int32_t k = 0; k < K; k++) {
        bool claimed = (k % 3 == 0 && k < 3 * (int64_t)s[0]) || (k % 3 == 1 && k < 3 * (int64_t)s[1]) ||
                       (k % 3 == 2 && k < 3 * (int64_t)s[2]);
        if (claimed) continue;
        if (last >= 0 && k != last + 1) runs = false;
        if (first < 0) first = k;
        last = k, count++;
        for (int64_t t = 0; t < T && still; t++) still = v[t * r + 2 * k] == 1.0f && v[t * r + 2 * k + 1] == 0.0f;
    }
    if (!count || !still || T < 2) return POSENC_OK;
    /* the cache with those pairs put back to the config's ggml values */
    posenc_rope_params q = *cfg;
    q.mode = POSENC_MODE_GGML;
    size_t n = (size_t)T * (size_t)K;
    float *cs = malloc(sizeof *cs * n), *sn = malloc(sizeof *sn * n);
    double *wk = malloc(sizeof *wk * (size_t)K), att = 1;
    posenc_array patched = {0};
    posenc_error e = {0};
    if (!cs || !sn || !wk) {
        free(cs), free(sn), free(wk);
        return POSENC_ERR_OUT_OF_MEMORY;
    }
    bool ok = posenc_array_create(&patched, POSENC_DTYPE_F32, 2, cache->shape, 0, &e) == POSENC_OK &&
              posenc_rope_table_f32(&q, T, &(posenc_positions){.count = (size_t)T, .start = 0}, 1, cs, sn, n, &e) ==
                  POSENC_OK;
    int64_t ulp = -1;
    size_t differ = 1;
    if (ok) {
        float *pv = patched.data;
        memcpy(pv, v, sizeof *pv * cache->count);
        for (int32_t k = first; k <= last; k++)
            for (int64_t t = 0; t < T; t++) pv[t * r + 2 * k] = cs[t * K + k], pv[t * r + 2 * k + 1] = sn[t * K + k];
        ok = posenc_rope_cache_residual(&patched, NULL, POSENC_CACHE_GGML, 0, 0, &q, &ulp, &differ, &e) == POSENC_OK;
    }
    double w = ok && posenc_rope_frequencies(cfg, 0, wk, (size_t)K, &att, &e) == POSENC_OK ? wk[first] : 0;
    posenc_array_free(&patched);
    free(cs), free(sn), free(wk);
    if (!ok || !runs) return POSENC_OK;
    posenc_rope_departure *d = add(out, POSENC_DEPART_IMROPE_STILL);
    if (d) {
        d->first = first, d->last = last, d->got = w, d->differ = differ, d->max_ulp = ulp;
        for (int i = 0; i < 3; i++) d->sections[i] = s[i];
    }
    if (differ != 0 && (d = add(out, POSENC_DEPART_IMROPE_RESIDUAL)))
        d->first = first, d->last = last, d->differ = differ, d->max_ulp = ulp;
    return POSENC_OK;
}

/* LongRoPE without a switch inside the cache: HF picks the list by the sequence's length (long
 * past the original context), llama.cpp by its context size (long when n_ctx exceeds it, at every
 * position): compare against the list the cache holds (set in *cfg); *note = the reading when
 * that list is not HF's for this many rows (-1: none). */
static posenc_status pick_longrope_list(const posenc_rope_identity *id, posenc_rope_params *cfg, int32_t r,
                                        int *note) {
    *note = -1;
    if (!(r == id->rotary_dim && cfg->scaling == POSENC_ROPE_LONGROPE &&
          cfg->longrope_select == POSENC_LONGROPE_BY_SEQ_LEN && id->switch_position == 0 && cfg->short_factors &&
          cfg->long_factors))
        return POSENC_OK;
    int32_t K = r / 2;
    double *w = malloc(sizeof *w * (size_t)K), att, worst[2] = {INFINITY, INFINITY};
    if (!w) return POSENC_ERR_OUT_OF_MEMORY;
    for (int side = 0; side < 2; side++) {
        posenc_rope_params q = *cfg;
        q.longrope_select = side ? POSENC_LONGROPE_LONG : POSENC_LONGROPE_SHORT;
        posenc_error e = {0};
        if (posenc_rope_frequencies(&q, 0, w, (size_t)K, &att, &e) != POSENC_OK) continue;
        worst[side] = 0;
        for (int32_t k = 0; k < K; k++)
            if (id->inv_freq[k] > 0) worst[side] = fmax(worst[side], fabs(id->inv_freq[k] / w[k] - 1));
    }
    free(w);
    bool hf_long = id->rows + id->offset > cfg->original_max_position;
    int side = worst[1] < worst[0];
    if (!isfinite(worst[side])) return POSENC_OK;
    cfg->longrope_select = side ? POSENC_LONGROPE_LONG : POSENC_LONGROPE_SHORT;
    if (side != hf_long)
        *note = side && id->layout == POSENC_CACHE_VLLM ? POSENC_LONGROPE_LIST_LONG_VLLM
                : side                                  ? POSENC_LONGROPE_LIST_LONG_CONTEXT
                                                        : POSENC_LONGROPE_LIST_SHORT_PAST;
    return POSENC_OK;
}

/* dynamic NTK fixed at one length: an engine that builds one table for its longest sequence
 * (vLLM: once, at max_position x factor) holds the config's NTK base at that length at every
 * position, where HF recomputes the base per sequence (and keeps the plain base up to
 * max_position tokens). Solve the length from the fitted base and regenerate the table at that
 * length in HF's float32 arithmetic. True when that explains the cache's frequencies. */
static bool dynamic_length(posenc_rope_comparison *out, const posenc_rope_identity *id, const posenc_array *cache,
                           const posenc_array *sin_table, const posenc_rope_params *cfg, int32_t r) {
    if (!(cfg->scaling == POSENC_ROPE_DYNAMIC && cfg->max_position > 0 && cfg->factor > 1 &&
          id->params.scaling == POSENC_ROPE_NONE && id->offset == 0 && id->params.base > cfg->base * (1 + 1e-6)))
        return false;
    double L0 = (double)cfg->max_position;
    double len = L0 * (pow(id->params.base / cfg->base, (r - 2.0) / r) + cfg->factor - 1) / cfg->factor;
    long long li = llround(len);
    /* HF's (and vLLM's) double steps: base * (factor * L / L0 - (factor - 1)) ** (R / (R - 2)) */
    double b2 = cfg->base * pow(cfg->factor * (double)li / L0 - (cfg->factor - 1), (double)r / (r - 2.0));
    posenc_rope_params q = *cfg;
    q.scaling = POSENC_ROPE_NONE;
    q.factor = 1;
    q.base = b2;
    q.mode = POSENC_MODE_TORCH_COMPAT;
    int64_t u = -1;
    size_t dn = 0;
    posenc_error e = {0};
    if (!(li > cfg->max_position && fabs(len - (double)li) < 0.5 &&
          posenc_rope_cache_residual(cache, sin_table, id->layout, id->has_sin && !id->has_cos, 0, &q, &u, &dn, &e) ==
              POSENC_OK))
        return false;
    posenc_rope_departure *d = add(out, POSENC_DEPART_DYNAMIC_LENGTH);
    if (d) {
        d->position = li, d->got = b2, d->max_ulp = u, d->differ = dn, d->want = cfg->base;
        d->config_position = cfg->max_position;
        d->reading = id->layout == POSENC_CACHE_VLLM && li == llround(L0 * cfg->factor);
    }
    return true;
}

posenc_status posenc_rope_identity_compare(const posenc_rope_identity *id, const posenc_array *cache,
                                           const posenc_array *sin_table, const posenc_rope_params *config,
                                           const posenc_mrope_sections *imrope, posenc_rope_comparison *out,
                                           posenc_error *err) {
    if (!out) return posenc_fail_(err, POSENC_ERR_INVALID_ARGUMENT, "identity_compare: out is NULL");
    memset(out, 0, sizeof *out);
    if (!id || !cache || !config)
        return posenc_fail_(err, POSENC_ERR_INVALID_ARGUMENT, "identity_compare: %s is NULL",
                         !id ? "identity" : !cache ? "table" : "config");
    if (!id->inv_freq || !id->pair_factor)
        return posenc_fail_(err, POSENC_ERR_INVALID_ARGUMENT, "identity_compare: the identity holds no fit "
                                                           "(not filled by posenc_rope_identify, or freed)");
    posenc_rope_params cfg = *config;
    int32_t r = 0;
    posenc_status st = posenc_rope_check(&cfg, &r, err);
    if (st != POSENC_OK) return st;
    for (int a = 0; a < POSENC_ROPE_ARITHS; a++) out->max_ulp[a] = -1;
    out->rotary_dim = r;
    int list_note = -1;
    if ((st = pick_longrope_list(id, &cfg, r, &list_note)) != POSENC_OK)
        return posenc_fail_(err, st, "identity_compare: out of memory");
    out->config = cfg;
    posenc_rope_departure *d;
    if (r != id->rotary_dim) {
        if ((d = add(out, POSENC_DEPART_ROTARY_DIM)))
            d->got = id->rotary_dim, d->want = r, d->config_position = cfg.head_dim;
        return POSENC_OK;
    }
    static const posenc_mode modes[POSENC_ROPE_ARITHS] = {POSENC_MODE_PRECISE, POSENC_MODE_TORCH_COMPAT,
                                                          POSENC_MODE_GGML};
    int match = -1, within = -1; /* within: a match to within one grid step (not bit for bit) */
    for (int a = 0; a < POSENC_ROPE_ARITHS; a++) {
        posenc_rope_params q = cfg;
        q.mode = modes[a];
        posenc_error e = {0};
        if (posenc_rope_cache_residual(cache, sin_table, id->layout, id->has_sin && !id->has_cos, 0, &q,
                                       &out->max_ulp[a], &out->differ[a], &e) != POSENC_OK)
            out->max_ulp[a] = -1;
        else if (!out->differ[a] && match < 0) match = a;
    }
    /* a 16-bit cache that the config's table reproduces to within one step of the grid: the
     * values that differ sit on a rounding boundary (the engine's float32 and ours round to
     * neighbours). The config then explains every value, and the fit's frequencies, which a
     * one-table half-precision profile measures percents off, back no departure. One step of
     * the grid at [0.5, 1) is one residual unit (f16 2^-11, bf16 2^-8). */
    if (match < 0 && id->grid != POSENC_DTYPE_F32) {
        for (int a = 0; a < POSENC_ROPE_ARITHS; a++)
            if (out->max_ulp[a] >= 0 && out->max_ulp[a] <= 1 && (within < 0 || out->differ[a] < out->differ[within]))
                within = a;
        match = within;
    }
    out->matches = match >= 0;
    out->bit_for_bit = match >= 0 && within < 0;
    out->arith = match >= 0 ? (posenc_rope_arith)match : id->arith;
    bool dyn_len = match < 0 && dynamic_length(out, id, cache, sin_table, &cfg, r);
    /* the config's own frequencies and magnitude (precise), against the measured ones */
    int32_t K = r / 2;
    double *w = malloc(sizeof *w * (size_t)K), att = 1;
    if (!w) return posenc_fail_(err, POSENC_ERR_OUT_OF_MEMORY, "identity_compare: out of memory");
    if ((st = posenc_rope_frequencies(&cfg, id->rows + id->offset, w, (size_t)K, &att, err)) != POSENC_OK) {
        free(w);
        return st;
    }
    out->magnitude = att;
    if (id->offset != 0 && (d = add(out, POSENC_DEPART_OFFSET))) d->position = id->offset;
    /* the magnitude's tolerance: the fit's median over f32 values (~1e-7) or 16-bit ones (~4e-3) */
    double mtol = id->grid == POSENC_DTYPE_F32 ? 2e-6 : 8e-3;
    if (match < 0 && fabs(id->magnitude - att) > mtol * att && (d = add(out, POSENC_DEPART_MAGNITUDE))) {
        d->got = id->magnitude, d->want = att, d->position = id->offset;
        magnitude_reading(d, &cfg, id->magnitude, att, mtol);
    }
    if (list_note >= 0 && (d = add(out, POSENC_DEPART_LONGROPE_LIST)))
        d->reading = list_note, d->config_position = cfg.original_max_position;
    if (id->switch_position > 0) { /* LongRoPE's short/long switch inside the cache */
        switch_departures(out, id, &cfg);
    } else {
        /* frequencies: runs of pairs whose measured w departs from the config's */
        int32_t run0 = -1;
        double worst = 0;
        double unit = id->grid == POSENC_DTYPE_BF16 ? 0x1p-8 : id->grid == POSENC_DTYPE_F16 ? 0x1p-11 : 0x1p-24;
        for (int32_t k = 0; k <= K && match < 0 && !dyn_len; k++) {
            double rel = k < K && id->inv_freq[k] > 0 ? fabs(id->inv_freq[k] / w[k] - 1) : 0;
            /* the fit's noise: the grid's step over the angle the pair turns through the rows */
            double noise = k < K ? 8 * unit / fmax(id->inv_freq[k] * (double)id->rows, 1e-30) : 0;
            bool off = k < K && isfinite(id->pair_factor[k]) && rel > 1e-4 + noise;
            if (off && run0 < 0) run0 = k, worst = 0;
            if (off) worst = fmax(worst, rel);
            if (!off && run0 >= 0) {
                double dw = fabs(id->inv_freq[run0] - w[run0]);
                double p_show = dw > 0 ? ceil(unit / (dw * fmax(id->magnitude, 1e-30))) : 0;
                if ((d = add(out, POSENC_DEPART_FREQUENCIES))) {
                    d->first = run0, d->last = k - 1, d->worst = worst, d->side = id->params.scaling != cfg.scaling;
                    d->shows_at = (double)id->offset + p_show, d->got = id->inv_freq[run0], d->want = w[run0];
                }
                run0 = -1;
            }
        }
        if (match < 0 && (st = imrope_departures(out, id, cache, sin_table, imrope, &cfg, r)) != POSENC_OK) {
            free(w);
            return posenc_fail_(err, st, "identity_compare: out of memory");
        }
    }
    free(w);
    if (id->grid != POSENC_DTYPE_F32 && match < 0 && (d = add(out, POSENC_DEPART_GRID)))
        d->max_ulp = out->max_ulp[1] >= 0 ? out->max_ulp[1] : out->max_ulp[0];
    if (match < 0 && out->departure_count == 0) {
        int best = -1;
        for (int a = 0; a < POSENC_ROPE_ARITHS; a++)
            if (out->max_ulp[a] >= 0 && (best < 0 || out->differ[a] < out->differ[best])) best = a;
        if (best >= 0 && (d = add(out, POSENC_DEPART_UNEXPLAINED)))
            d->arith = (posenc_rope_arith)best, d->differ = out->differ[best], d->max_ulp = out->max_ulp[best];
    }
    return POSENC_OK;
}
