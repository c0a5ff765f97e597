/* rope_identify_score.c: candidates of "which RoPE is this?" (posenc.h 4b) regenerated
 * with rope.c's table functions in each arithmetic, rounded to the cache's grid and scored
 * value by value in ULPs; the residual gate; the search among nearby round candidates
 * (refine); and the public residual functions (posenc_rope_cache_residual,
 * posenc_rope_identity_pair_residual). Uses rope_identify_values.c and rope_identify_fit.c. */
#include "rope_identify_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- 4. candidates and their ULPs ----------------------------------------- */


/* The residual gate: what a value may differ by and still be the same RoPE. The grid's
 * rounding (4 units: a regenerated value and the cache's may round to neighbours, and the
 * engine's cos/sin may be 1-2 f32 ULPs from ours) plus the float32 angle's rounding, which
 * grows with the angle: w p rounded to f32 (2^-24 relative) and w itself computed by another
 * engine's pow (a few f32 ULPs) give 8 x 2^-24 |angle| in all. Scaled by the magnitude. */
static double gate_bound(double slack, double magnitude, double angle) {
    return fmax(magnitude, 1.0) * (slack + 8.0 * 0x1p-24 * fabs(angle));
}


/* max ULP and count of differing values of params in `mode` (and, when pair_ulp is
 * not NULL, each pair's max ULP, raised, not reset); false if refused. */
bool rope_id_score_(const target *tg, posenc_rope_params params, posenc_mode mode, float *cbuf, float *sbuf,
                    int64_t *max_ulp, size_t *differ) {
    return rope_id_score_pairs_(tg, params, mode, cbuf, sbuf, max_ulp, differ, NULL, NULL);
}
bool rope_id_score_pairs_(const target *tg, posenc_rope_params params, posenc_mode mode, float *cbuf, float *sbuf,
                          int64_t *max_ulp, size_t *differ, int64_t *pair_ulp, gate_result *gate) {
    params.mode = mode;
    posenc_positions pos =
        tg->ids ? posenc_positions_ids(tg->ids, tg->rows) : posenc_positions_range(tg->offset, tg->rows);
    posenc_error e = {0};
    size_t n = tg->rows * (size_t)tg->pairs;
    posenc_status st =
        mode == POSENC_MODE_TORCH_COMPAT && tg->torch_copies == 1
            ? rope_table_torch_f32_(&params, (int64_t)tg->rows + tg->offset, &pos, 1, 1, cbuf, sbuf, n, &e)
            : posenc_rope_table_f32(&params, (int64_t)tg->rows + tg->offset, &pos, 1, cbuf, sbuf, n, &e);
    if (st != POSENC_OK) return false;
    double *wg = NULL, att = 1;
    if (gate) { /* the scheme's frequencies, for each value's angle */
        wg = malloc(sizeof *wg * (size_t)tg->pairs);
        if (!wg || posenc_rope_frequencies(&params, (int64_t)tg->rows + tg->offset, wg, (size_t)tg->pairs, &att, &e) !=
                       POSENC_OK) {
            free(wg);
            return false;
        }
        gate->over = 0, gate->worst_ratio = 0, gate->worst_row = 0, gate->worst_pair = 0;
    }
    int64_t worst = 0;
    size_t bad = 0;
    for (int f = 0; f < 2; f++) {
        const double *want = f ? tg->sin_v : tg->cos_v;
        const float *got = f ? sbuf : cbuf;
        if (!want) continue;
        double unit = rope_id_grid_unit_(tg->grid);
        for (size_t i = 0; i < n; i++) {
            double g = (double)rope_id_on_grid_(tg->grid, got[i]);
            if (g != want[i]) {
                bad++;
                /* a value far off any cos/sin (a table of huge numbers, say) saturates: the cast of a
                 * double past 2^63 is undefined (found by fuzz_identify) */
                double du = ceil(fabs(g - want[i]) / unit);
                int64_t d = du < 0x1p62 ? (int64_t)du : INT64_MAX;
                if (d > worst) worst = d;
                size_t k = i % (size_t)tg->pairs, t = i / (size_t)tg->pairs;
                if (pair_ulp && d > pair_ulp[k]) pair_ulp[k] = d;
                if (gate && !(tg->still && tg->still[k] == 0)) {
                    double at = tg->ids ? (double)tg->ids[t] : (double)tg->offset + (double)t;
                    double ratio = fabs(g - want[i]) / gate_bound(rope_id_grid_slack_(tg->grid), fabs(att), wg[k] * at);
                    if (ratio > 1) gate->over++;
                    if (ratio > gate->worst_ratio) gate->worst_ratio = ratio, gate->worst_row = t, gate->worst_pair = (int32_t)k;
                }
            }
        }
    }
    free(wg);
    *max_ulp = worst;
    *differ = bad;
    return true;
}

/* The fit snaps to round numbers, but a noisy profile (one function, bf16)
 * can land next to them: score nearby round candidates (factor, original
 * context, scheme) on up to 512 sampled rows in HF and ggml arithmetic and
 * keep the one that reproduces the most values. */
posenc_rope_params rope_id_refine_(const target *tg, posenc_rope_params p, const double *pair_factor, int32_t K,
                                   double raw_base, float *cbuf, float *sbuf, double *ntk_base0, double *ntk_factor) {
    /* rows sampled so that a candidate costs at most ~2^18 values (512 rows of 256 pairs; a
     * [512, 65536] HF table: 16 rows), every candidate's table being regenerated whole */
    size_t cap = (size_t)1 << 18, want = cap / (size_t)K;
    want = want < 16 ? 16 : want > 512 ? 512 : want;
    size_t step = tg->rows > want ? tg->rows / want : 1, m = 0;
    int64_t *ids = malloc(sizeof *ids * (want + 1));
    double *sc = malloc(sizeof *sc * (want + 1) * (size_t)K), *ss = malloc(sizeof *ss * (want + 1) * (size_t)K);
    if (!ids || !sc || !ss) goto done;
    for (size_t t = 0; t < tg->rows && m < want + 1; t += step, m++) {
        ids[m] = tg->offset + (int64_t)t;
        for (int32_t k = 0; k < K; k++) {
            if (tg->cos_v) sc[m * (size_t)K + (size_t)k] = tg->cos_v[t * (size_t)K + (size_t)k];
            if (tg->sin_v) ss[m * (size_t)K + (size_t)k] = tg->sin_v[t * (size_t)K + (size_t)k];
        }
    }
    target sub = {tg->cos_v ? sc : NULL, tg->sin_v ? ss : NULL, m, K, tg->offset, tg->grid, ids, tg->torch_copies, NULL};
    posenc_rope_params best = p;
    size_t best_bad = SIZE_MAX;
    for (int m2 = 0; m2 < 2 && p.scaling != POSENC_ROPE_LONGROPE; m2++) {
        int64_t ulp;
        size_t bad;
        if (rope_id_score_(&sub, p, m2 ? POSENC_MODE_GGML : POSENC_MODE_TORCH_COMPAT, cbuf, sbuf, &ulp, &bad) && bad < best_bad)
            best_bad = bad;
    }
    double f_last = pair_factor[K - 1] > 0 ? pair_factor[K - 1] : p.factor;
    double f_mid = pair_factor[K / 2] > 0 ? pair_factor[K / 2] : p.factor;
    double factors[14] = {p.factor, round(p.factor), round(2 * f_last) / 2, round(f_last), round(f_mid), 2, 4, 8, 16,
                          32, 40, 64, 1.5, 3};
    static const posenc_rope_scaling schemes[4] = {POSENC_ROPE_NONE, POSENC_ROPE_LINEAR, POSENC_ROPE_YARN,
                                                   POSENC_ROPE_LLAMA3};
    /* a base that is no round number may be an NTK base' = b0 s^(R/(R-2)) (HF: in double) */
    static const double nominal[] = {10000, 100000, 500000, 1000000, 5000000, 10000000};
    static const double ntk_s[] = {1.5, 2, 3, 4, 8, 16, 32};
    for (int bi = 0; bi < 6 && best_bad; bi++)
        for (int si = 0; si < 7 && best_bad; si++) {
            double r = 2.0 * K, b = nominal[bi] * pow(ntk_s[si], r / (r - 2));
            if (fabs(b / raw_base - 1) > 2e-3) continue;
            posenc_rope_params q = p;
            q.base = b;
            q.scaling = POSENC_ROPE_NONE;
            q.factor = 1;
            q.short_factors = q.long_factors = NULL;
            q.factors_count = 0;
            int64_t ulp;
            size_t bad;
            for (int m2 = 0; m2 < 2; m2++)
                if (rope_id_score_(&sub, q, m2 ? POSENC_MODE_GGML : POSENC_MODE_TORCH_COMPAT, cbuf, sbuf, &ulp, &bad) &&
                    bad < best_bad)
                    best_bad = bad, best = q, *ntk_base0 = nominal[bi], *ntk_factor = ntk_s[si];
        }
    /* the fitted base and the common RoPE bases within a factor 2 of it: a one-table profile in
     * f16/bf16 lands percents off (512 rows of f16: 9900 for 10000) */
    static const double common_b[] = {1e4, 1e5, 5e5, 1e6, 5e6, 1e7, 1e8};
    double bases[1 + sizeof common_b / sizeof common_b[0]];
    int nb = 0;
    bases[nb++] = p.base;
    for (size_t i = 0; i < sizeof common_b / sizeof common_b[0]; i++)
        if (common_b[i] != p.base && common_b[i] <= 2 * raw_base && common_b[i] >= 0.5 * raw_base)
            bases[nb++] = common_b[i];
    for (int bi = 0; bi < nb && best_bad; bi++)
    for (int si = 0; si < 4 && best_bad; si++)
        for (int fi = 0; fi < 14 && best_bad; fi++) {
            if (schemes[si] == POSENC_ROPE_NONE && fi) break;
            if (schemes[si] != POSENC_ROPE_NONE && !(factors[fi] > 1)) continue;
            bool seen = false;
            for (int j = 0; j < fi; j++) seen = seen || factors[j] == factors[fi];
            if (seen) continue;
            bool ctx = schemes[si] == POSENC_ROPE_YARN || schemes[si] == POSENC_ROPE_LLAMA3;
            for (int li = 0; li < (ctx ? 8 : 1) && best_bad; li++) {
                posenc_rope_params q = p;
                q.base = bases[bi];
                q.scaling = schemes[si];
                q.factor = schemes[si] == POSENC_ROPE_NONE ? 1 : factors[fi];
                q.short_factors = q.long_factors = NULL;
                q.factors_count = 0;
                if (ctx) q.original_max_position = (int64_t)1 << (11 + li); /* 2048 .. 262144 */
                for (int m2 = 0; m2 < 2; m2++) {
                    int64_t ulp;
                    size_t bad;
                    if (!rope_id_score_(&sub, q, m2 ? POSENC_MODE_GGML : POSENC_MODE_TORCH_COMPAT, cbuf, sbuf, &ulp, &bad))
                        continue;
                    if (bad < best_bad) best_bad = bad, best = q;
                }
            }
        }
    if (best_bad) /* the unsnapped base */
        for (int m2 = 0; m2 < 2; m2++) {
            posenc_rope_params q = p;
            q.base = raw_base;
            int64_t ulp;
            size_t bad;
            if (rope_id_score_(&sub, q, m2 ? POSENC_MODE_GGML : POSENC_MODE_TORCH_COMPAT, cbuf, sbuf, &ulp, &bad) &&
                bad < best_bad)
                best_bad = bad, best = q;
        }
    p = best;
done:
    free(ids);
    free(sc);
    free(ss);
    return p;
}

/* A loaded cache [T, W] (and its sin table [T, W], or NULL) as [T, K] cos and
 * sin arrays per pair (rs NULL when the cache holds one function), with f32
 * scratch fc/fs of the same size for regenerating it; the caller frees all four. */
static posenc_status split_cache(const grid2d *c, const grid2d *s, posenc_rope_cache_layout layout, size_t K,
                                 double **rc, double **rs, float **fc, float **fs, posenc_error *err) {
    const size_t T = c->rows, W = c->width, n = T * K;
    const bool two = s || layout == POSENC_CACHE_VLLM || layout == POSENC_CACHE_GGML;
    *rc = malloc(sizeof **rc * n);
    *rs = two ? malloc(sizeof **rs * n) : NULL;
    *fc = malloc(sizeof **fc * n);
    *fs = malloc(sizeof **fs * n);
    if (!*rc || (two && !*rs) || !*fc || !*fs)
        return posenc_fail_(err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate a [%zu, %zu] table", T, K);
    for (size_t t = 0; t < T; t++)
        for (size_t k = 0; k < K; k++) {
            const double *row = c->v + t * W;
            double cv, sv = 0;
            switch (layout) {
            case POSENC_CACHE_GGML: cv = row[2 * k], sv = row[2 * k + 1]; break;
            case POSENC_CACHE_VLLM: cv = row[k], sv = row[k + K]; break;
            default: cv = row[k], sv = s ? s->v[t * W + k] : 0; break;
            }
            (*rc)[t * K + k] = cv;
            if (two) (*rs)[t * K + k] = sv;
        }
    return POSENC_OK;
}

posenc_status posenc_rope_cache_residual(const posenc_array *table, const posenc_array *sin_table,
                                         posenc_rope_cache_layout layout, int table_is_sin, int64_t offset,
                                         const posenc_rope_params *params, int64_t *max_ulp, size_t *differ,
                                         posenc_error *err) {
    RETURN_IF_NULL(table, err);
    RETURN_IF_NULL(params, err);
    RETURN_IF_NULL(max_ulp, err);
    RETURN_IF_NULL(differ, err);
    RETURN_ERROR_IF(layout < POSENC_CACHE_HF || layout > POSENC_CACHE_PLAIN, err, POSENC_ERR_INVALID_ARGUMENT,
                    "give the cache layout (hf, vllm, ggml or plain), got %d", (int)layout);
    int32_t r = 0;
    FORWARD_IF_ERROR(posenc_rope_check(params, &r, err));
    grid2d c = {0, 0, NULL}, s = {0, 0, NULL};
    posenc_status st = rope_id_load_2d_(table, "cache", &c, err);
    if (st == POSENC_OK && sin_table) st = rope_id_load_2d_(sin_table, "sin table", &s, err);
    /* a full-width cache of a partial rotary: its pass-through tail (cos 1, sin 0) is no part of R */
    size_t want_w = layout == POSENC_CACHE_PLAIN ? (size_t)r / 2 : (size_t)r;
    if (st == POSENC_OK && (layout == POSENC_CACHE_HF || layout == POSENC_CACHE_PLAIN) && c.width > want_w &&
        (!sin_table || s.width == c.width) && rope_id_passthrough_tail_(&c, sin_table ? &s : NULL) >= c.width - want_w) {
        size_t p = c.width - want_w;
        rope_id_drop_tail_(&c, p);
        if (sin_table) rope_id_drop_tail_(&s, p);
    }
    size_t T = c.rows, W = c.width, K = layout == POSENC_CACHE_PLAIN ? W : W / 2;
    if (st == POSENC_OK && (2 * K != (size_t)r || (sin_table && (s.rows != T || s.width != W))))
        st = posenc_fail_(err, POSENC_ERR_INVALID_ARGUMENT,
                          "the %s cache [%zu, %zu] holds rotary dim %zu, the parameters give %d",
                          posenc_rope_cache_layout_name(layout), T, W, 2 * K, r);
    bool two = sin_table || layout == POSENC_CACHE_VLLM || layout == POSENC_CACHE_GGML;
    double *rc = NULL, *rs = NULL;
    float *fc = NULL, *fs = NULL;
    if (st == POSENC_OK) st = split_cache(&c, sin_table ? &s : NULL, layout, K, &rc, &rs, &fc, &fs, err);
    if (st == POSENC_OK) {
        target tg = {rc,   two ? rs : NULL, T, (int32_t)K, offset, rope_id_find_grid_(table->dtype, c.v, T * W),
                     NULL, layout == POSENC_CACHE_VLLM ? 1 : 2, NULL};
        if (!two && table_is_sin) tg.cos_v = NULL, tg.sin_v = rc;
        if (!rope_id_score_(&tg, *params, params->mode, fc, fs, max_ulp, differ))
            st = posenc_fail_(err, POSENC_ERR_INVALID_ARGUMENT, "the parameters cannot make a table in mode %d",
                              (int)params->mode);
    }
    free(c.v), free(s.v), free(rc), free(rs), free(fc), free(fs);
    return st == POSENC_OK ? posenc_ok_(err) : st;
}

posenc_status posenc_rope_identity_pair_residual(const posenc_array *table, const posenc_array *sin_table,
                                                 const posenc_rope_identity *id, posenc_rope_arith arith,
                                                 int64_t *pair_max_ulp, size_t pair_count, posenc_error *err) {
    RETURN_IF_NULL(table, err);
    RETURN_IF_NULL(id, err);
    RETURN_IF_NULL(pair_max_ulp, err);
    RETURN_ERROR_IF((int)arith < 0 || (int)arith >= POSENC_ROPE_ARITHS, err, POSENC_ERR_INVALID_ARGUMENT,
                    "unknown arithmetic %d", (int)arith);
    RETURN_ERROR_IF(id->layout < POSENC_CACHE_HF || id->layout > POSENC_CACHE_PLAIN || id->rotary_dim < 2, err,
                    POSENC_ERR_INVALID_ARGUMENT, "the identity holds no fitted cache (layout %d, rotary dim %d)",
                    (int)id->layout, id->rotary_dim);
    size_t K = (size_t)id->rotary_dim / 2;
    RETURN_ERROR_IF(pair_count < K, err, POSENC_ERR_BUFFER_TOO_SMALL, "%zu pairs need %zu slots, got %zu", K, K,
                    pair_count);
    static const posenc_mode modes[POSENC_ROPE_ARITHS] = {POSENC_MODE_PRECISE, POSENC_MODE_TORCH_COMPAT,
                                                          POSENC_MODE_GGML};
    grid2d c = {0, 0, NULL}, s = {0, 0, NULL};
    posenc_status st = rope_id_load_2d_(table, "cache", &c, err);
    if (st == POSENC_OK && sin_table) st = rope_id_load_2d_(sin_table, "sin table", &s, err);
    if (st == POSENC_OK && id->passthrough > 0 && c.width == (size_t)id->rotary_dim + (size_t)id->passthrough &&
        (!sin_table || s.width == c.width) && rope_id_passthrough_tail_(&c, sin_table ? &s : NULL) >= (size_t)id->passthrough) {
        rope_id_drop_tail_(&c, (size_t)id->passthrough);
        if (sin_table) rope_id_drop_tail_(&s, (size_t)id->passthrough);
    }
    size_t T = c.rows, W = c.width;
    posenc_rope_cache_layout layout = id->layout;
    if (st == POSENC_OK && ((layout == POSENC_CACHE_PLAIN ? W : W / 2) != K || (int64_t)T != id->rows ||
                            (sin_table && (s.rows != T || s.width != W))))
        st = posenc_fail_(err, POSENC_ERR_INVALID_ARGUMENT, "the cache [%zu, %zu] is not the one identified ([%lld rows, %zu pairs])",
                          T, W, (long long)id->rows, K);
    bool two = sin_table || layout == POSENC_CACHE_VLLM || layout == POSENC_CACHE_GGML;
    double *rc = NULL, *rs = NULL;
    float *fc = NULL, *fs = NULL;
    if (st == POSENC_OK) st = split_cache(&c, sin_table ? &s : NULL, layout, K, &rc, &rs, &fc, &fs, err);
    if (st == POSENC_OK) {
        for (size_t k = 0; k < K; k++) pair_max_ulp[k] = 0;
        target tg = {rc,   two ? rs : NULL, T, (int32_t)K, id->offset, id->grid, NULL, layout == POSENC_CACHE_VLLM ? 1 : 2,
                     NULL};
        if (!two && !id->has_cos) tg.cos_v = NULL, tg.sin_v = rc;
        posenc_rope_params p = id->params;
        int64_t ulp;
        size_t differ;
        bool ok;
        if (id->switch_position > 0 && id->long_pair_factor) {
            size_t t0 = (size_t)(id->switch_position - id->offset);
            target before = tg, after = tg;
            before.rows = t0;
            after.rows = T - t0;
            after.offset = id->long_offset;
            if (after.cos_v) after.cos_v += t0 * K;
            if (after.sin_v) after.sin_v += t0 * K;
            posenc_rope_params ps = p, pl = p;
            ps.longrope_select = POSENC_LONGROPE_SHORT;
            pl.longrope_select = POSENC_LONGROPE_LONG;
            pl.attention_factor = fabs(id->long_magnitude - 1) > (id->grid == POSENC_DTYPE_F32 ? 1e-6 : 8e-3)
                                      ? rope_id_snap_round_(id->long_magnitude, 1e-5)
                                      : 0;
            ok = rope_id_score_pairs_(&before, ps, modes[arith], fc, fs, &ulp, &differ, pair_max_ulp, NULL) &&
                 rope_id_score_pairs_(&after, pl, modes[arith], fc, fs, &ulp, &differ, pair_max_ulp, NULL);
        } else {
            ok = rope_id_score_pairs_(&tg, p, modes[arith], fc, fs, &ulp, &differ, pair_max_ulp, NULL);
        }
        if (!ok)
            st = posenc_fail_(err, POSENC_ERR_INVALID_ARGUMENT, "the fitted parameters cannot make a table in %s",
                              posenc_rope_arith_name(arith));
    }
    free(c.v), free(s.v), free(rc), free(rs), free(fc), free(fs);
    return st == POSENC_OK ? posenc_ok_(err) : st;
}
