/* rope_identify.c: "which RoPE is this?" (posenc_rope_identify, posenc.h 4b).
 *
 * Steps, each from the values alone:
 *  1. layout: HF's duplicated halves (column k == column k + R/2), ggml's
 *     interleaved (cos, sin) pairs or vLLM's cat(cos, sin) (c^2 + s^2 constant
 *     per pair), else one value per pair;
 *  2. per pair: the angle's slope w_k (unwrapped atan2 phase fitted by least
 *     squares when cos and sin are both there; the recurrence
 *     f(t+1) + f(t-1) = 2 cos(w) f(t) when only one is), its phase and the
 *     magnitude; then the integer position offset (and, for one table,
 *     whether it is cos or sin) that explains every pair's phase;
 *  3. the profile w_k against base^(-2k/R): base from the leading pairs, then
 *     the per-pair factor w(base)/w_k names the scheme (flat 1: none; flat f:
 *     linear; 1 rising to f linearly in k: YaRN; linearly in the frequency:
 *     Llama 3; anything else: per-pair factors, LongRoPE-like);
 *  4. candidates (snapped to round numbers) regenerated with
 *     posenc_rope_table_f32 in each arithmetic, rounded to the values' grid
 *     and compared value by value in ULPs: the best names the arithmetic.
 * This file runs the steps in order; the values and layout tests are in
 * rope_identify_values.c, the fits of steps 2-3 in rope_identify_fit.c, the
 * scheme of step 3 in rope_identify_profile.c, step 4 in rope_identify_score.c (rope_identify_internal.h). Calls rope.c's public
 * table function; nothing calls back. */
#include "rope_identify_internal.h"

#include <stdlib.h>
#include <string.h>

void posenc_rope_identity_free(posenc_rope_identity *id) {
    if (!id) return;
    free(id->inv_freq);
    free(id->pair_factor);
    free(id->long_pair_factor);
    memset(id, 0, sizeof *id);
}

/* ---- the entry point -------------------------------------------------------- */

typedef struct {
    grid2d c, s;
    double *pc, *ps, *w, *phi, *mag, *buf, *rho; /* rho: expected relative error of w_k */
    double *wl, *vote;                           /* LongRoPE switch: slopes after it, [T] votes */
    bool *ok;
    float *fc, *fs;
} work;

/* The rows before a LongRoPE switch and the rows from it on (the long rows' first position
   is long_offset), as two targets over the same values. */
static void split_at_switch(const target *tg, size_t t_switch, size_t T, size_t K, int64_t long_offset,
                            target *before, target *after) {
    *before = *after = *tg;
    before->rows = t_switch;
    after->rows = T - t_switch;
    after->offset = long_offset;
    if (after->cos_v) after->cos_v += t_switch * K;
    if (after->sin_v) after->sin_v += t_switch * K;
}

static void work_free(work *wk) {
    free(wk->c.v), free(wk->s.v), free(wk->pc), free(wk->ps), free(wk->w), free(wk->phi), free(wk->mag);
    free(wk->buf), free(wk->ok), free(wk->fc), free(wk->fs), free(wk->rho), free(wk->wl), free(wk->vote);
}

static double median(double *v, size_t n) {
    for (size_t i = 1; i < n; i++) /* insertion sort: n = pairs */
        for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static posenc_status identify(const posenc_array *table, const posenc_array *sin_table,
                              posenc_rope_cache_layout layout, posenc_rope_identity *out, work *wk,
                              posenc_error *err) {
    FORWARD_IF_ERROR(rope_id_load_2d_(table, "cache", &wk->c, err));
    if (sin_table) {
        FORWARD_IF_ERROR(rope_id_load_2d_(sin_table, "sin table", &wk->s, err));
        RETURN_ERROR_IF(wk->s.rows != wk->c.rows || wk->s.width != wk->c.width, err, POSENC_ERR_INVALID_ARGUMENT,
                        "sin table is [%zu, %zu] but the cos table is [%zu, %zu]", wk->s.rows, wk->s.width,
                        wk->c.rows, wk->c.width);
    }
    out->grid = rope_id_find_grid_(table->dtype, wk->c.v, wk->c.rows * wk->c.width);
    /* a full-width cache of a partial rotary: HF's halves hold only on the rotated channels,
     * the rest hold cos 1 / sin 0 at every row. Taken off when what remains is an HF cache. */
    if ((layout == POSENC_CACHE_AUTO || layout == POSENC_CACHE_HF) && !rope_id_halves_equal_(&wk->c)) {
        size_t p = rope_id_passthrough_tail_(&wk->c, sin_table ? &wk->s : NULL);
        if (p > 0 && p + 2 <= wk->c.width && (wk->c.width - p) % 2 == 0) {
            rope_id_drop_tail_(&wk->c, p);
            if (sin_table) rope_id_drop_tail_(&wk->s, p);
            if (rope_id_halves_equal_(&wk->c) && (!sin_table || rope_id_halves_equal_(&wk->s))) {
                out->passthrough = (int32_t)p;
                if (layout == POSENC_CACHE_AUTO) layout = POSENC_CACHE_HF;
            } else { /* not a partial HF cache: put the columns back (they are all 1 / 0) */
                size_t w = wk->c.width, W0 = w + p;
                for (size_t t = wk->c.rows; t-- > 0;) {
                    memmove(wk->c.v + t * W0, wk->c.v + t * w, sizeof *wk->c.v * w);
                    for (size_t j = w; j < W0; j++) wk->c.v[t * W0 + j] = 1.0;
                    if (sin_table) {
                        memmove(wk->s.v + t * W0, wk->s.v + t * w, sizeof *wk->s.v * w);
                        for (size_t j = w; j < W0; j++) wk->s.v[t * W0 + j] = 0.0;
                    }
                }
                wk->c.width = W0;
                if (sin_table) wk->s.width = W0;
            }
        }
    }
    size_t T = wk->c.rows, W = wk->c.width;
    /* GPT-J's repeat_interleave cache: no layout here holds it (ggml interleaves cos with sin) */
    RETURN_ERROR_IF((layout == POSENC_CACHE_AUTO || layout == POSENC_CACHE_PLAIN) && !rope_id_halves_equal_(&wk->c) &&
                        rope_id_neighbours_equal_(&wk->c) && (!sin_table || rope_id_neighbours_equal_(&wk->s)),
                    err, POSENC_ERR_INVALID_ARGUMENT,
                    "columns 2k and 2k + 1 are equal at every row: a GPT-J repeat_interleave cache (each pair's "
                    "value twice in a row), a layout identify does not read; give its even columns [:, ::2] as a "
                    "plain cache");
    double tol = out->grid == POSENC_DTYPE_BF16 ? 0.02 : out->grid == POSENC_DTYPE_F16 ? 4e-3 : 1e-5;
    double eps = out->grid == POSENC_DTYPE_BF16 ? 0x1p-8 : out->grid == POSENC_DTYPE_F16 ? 0x1p-10 : 0x1p-23;
    /* 1. layout */
    if (layout == POSENC_CACHE_AUTO) {
        if (sin_table) layout = rope_id_halves_equal_(&wk->c) && rope_id_halves_equal_(&wk->s) ? POSENC_CACHE_HF : POSENC_CACHE_PLAIN;
        else if (rope_id_halves_equal_(&wk->c)) layout = POSENC_CACHE_HF;
        else if (rope_id_norm_constant_(&wk->c, true, tol)) layout = POSENC_CACHE_GGML;
        else if (rope_id_norm_constant_(&wk->c, false, tol)) layout = POSENC_CACHE_VLLM;
        else layout = POSENC_CACHE_PLAIN;
    }
    RETURN_ERROR_IF(layout != POSENC_CACHE_PLAIN && W % 2, err, POSENC_ERR_INVALID_ARGUMENT,
                    "a %s cache has an even width, got %zu", posenc_rope_cache_layout_name(layout), W);
    RETURN_ERROR_IF(sin_table && (layout == POSENC_CACHE_VLLM || layout == POSENC_CACHE_GGML), err,
                    POSENC_ERR_INVALID_ARGUMENT, "a %s cache holds cos and sin itself; give no separate sin table",
                    posenc_rope_cache_layout_name(layout));
    out->layout = layout;
    int32_t K = (int32_t)(layout == POSENC_CACHE_PLAIN ? W : W / 2);
    RETURN_ERROR_IF(K > POSENC_ROPE_MAX_HEAD_DIM / 2, err, POSENC_ERR_INVALID_ARGUMENT,
                    "%d pairs is more than any RoPE head (at most %d)", K, POSENC_ROPE_MAX_HEAD_DIM / 2);
    out->rotary_dim = 2 * K;
    out->rows = (int64_t)T;
    bool two = sin_table || layout == POSENC_CACHE_VLLM || layout == POSENC_CACHE_GGML;
    size_t n = T * (size_t)K;
    wk->pc = malloc(sizeof *wk->pc * n);
    wk->ps = two ? malloc(sizeof *wk->ps * n) : NULL;
    wk->w = calloc((size_t)K, sizeof *wk->w);
    wk->phi = calloc((size_t)K, sizeof *wk->phi);
    wk->mag = calloc((size_t)K, sizeof *wk->mag);
    wk->rho = calloc((size_t)K, sizeof *wk->rho);
    wk->ok = calloc((size_t)K, sizeof *wk->ok);
    wk->buf = malloc(sizeof *wk->buf * (T > (size_t)K ? T : (size_t)K)); /* phases of one pair, or the K magnitudes */
    wk->fc = malloc(sizeof *wk->fc * n);
    wk->fs = malloc(sizeof *wk->fs * n);
    RETURN_ERROR_IF(!wk->pc || (two && !wk->ps) || !wk->w || !wk->phi || !wk->mag || !wk->rho || !wk->ok || !wk->buf ||
                        !wk->fc || !wk->fs,
                    err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate the work arrays of a [%zu, %zu] cache", T, W);
    /* per pair, pair-major ([K][T]) for the fits */
    for (size_t t = 0; t < T; t++)
        for (int32_t k = 0; k < K; k++) {
            const double *row = wk->c.v + t * W;
            double cv, sv = 0;
            switch (layout) {
            case POSENC_CACHE_GGML: cv = row[2 * k], sv = row[2 * k + 1]; break;
            case POSENC_CACHE_VLLM: cv = row[k], sv = row[k + K]; break;
            default: cv = row[k], sv = sin_table ? wk->s.v[t * W + (size_t)k] : 0; break;
            }
            wk->pc[(size_t)k * T + t] = cv;
            if (two) wk->ps[(size_t)k * T + t] = sv;
        }
    /* the row-major copies are no longer read: a [512, 65536] table held 256 MiB in them */
    free(wk->c.v), free(wk->s.v);
    wk->c.v = wk->s.v = NULL;
    out->has_cos = 1;
    out->has_sin = two;
    if (two) { /* one rotation: c^2 + s^2 is one magnitude^2 across the pairs of a row (a LongRoPE
                * switch changes it between rows, never inside one). Tolerance: the grid's rounding
                * (c^2 + s^2 moves by under 2 units per value; twice the slack) or 1e-4 relative for
                * f32, which leaves room for a cache recovered from a rotation by least squares. */
        double rel = fmax(2 * rope_id_grid_slack_(out->grid), 1e-4);
        for (size_t t = 0; t < T; t++) {
            double lo = INFINITY, hi = -INFINITY;
            int32_t klo = 0, khi = 0;
            for (int32_t k = 0; k < K; k++) {
                double c = wk->pc[(size_t)k * T + t], sv = wk->ps[(size_t)k * T + t], m2 = c * c + sv * sv;
                if (m2 < lo) lo = m2, klo = k;
                if (m2 > hi) hi = m2, khi = k;
            }
            RETURN_ERROR_IF(!(hi - lo <= rel * fmax(hi, 1e-30)), err, POSENC_ERR_INVALID_ARGUMENT,
                            "cos and sin are no one rotation: at row %zu, cos^2 + sin^2 is %.6g at pair %d and %.6g at "
                            "pair %d (a RoPE cache keeps one magnitude across a row's pairs: a cos and a sin from "
                            "different bases or positions, or a wrong layout?)",
                            t, lo, klo, hi, khi);
        }
    }
    /* 2. per pair */
    for (int32_t k = 0; k < K; k++) {
        const double *c = wk->pc + (size_t)k * T;
        if (two) rope_id_pair_from_both_(c, wk->ps + (size_t)k * T, T, wk->buf, &wk->w[k], &wk->phi[k], &wk->mag[k]);
        else rope_id_pair_from_one_(c, T, &wk->w[k], &wk->phi[k], &wk->mag[k]);
        /* reliable: enough turning over the rows to see the slope */
        /* expected relative error of w_k: phase noise over the span (two
         * functions); one function sees low frequencies only through the
         * curvature of less than a turn, so its error grows like 1/(wT)^2 */
        double turn = wk->w[k] * (double)T;
        wk->rho[k] = turn > 0 ? (two ? eps / turn : 8 * eps / fmin(turn, 1.0) / fmin(turn, 1.0) / fmin(turn, 1.0)) + 1e-7
                              : 1;
        wk->ok[k] = turn > 0 && (two ? turn > 1e-3 : turn > 1.0 || wk->rho[k] < 1e-4);
    }
    size_t t_switch = 0; /* LongRoPE: the row where the long factors start (0: none) */
    if (two && T >= 16) {
        wk->vote = malloc(sizeof *wk->vote * (T > (size_t)K ? T : (size_t)K));
        RETURN_ERROR_IF(!wk->vote, err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %zu rows", T);
        t_switch = rope_id_find_switch_(wk->pc, wk->ps, T, K, wk->w, wk->phi, wk->buf, wk->vote);
    }
    if (t_switch) { /* refit each side: short slopes (and phase, magnitude) before, long after */
        wk->wl = calloc((size_t)K, sizeof *wk->wl);
        out->long_pair_factor = calloc((size_t)K, sizeof *out->long_pair_factor);
        RETURN_ERROR_IF(!wk->wl || !out->long_pair_factor, err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %d pairs",
                        K);
        double m_short = 0, m_long = 0;
        double *phi_after = wk->vote; /* [K] <= [T]: the long side's phase at its first row */
        for (int32_t k = 0; k < K; k++) {
            const double *c = wk->pc + (size_t)k * T, *sn = wk->ps + (size_t)k * T;
            rope_id_unwrapped_phase_(c, sn, T, wk->buf);
            double at0;
            rope_id_fit_segment_(wk->buf, 0, t_switch, &wk->w[k], &wk->phi[k]);
            rope_id_fit_segment_(wk->buf, t_switch, T, &wk->wl[k], &at0);
            phi_after[k] = rope_id_wrap_pi_(at0 + wk->wl[k] * (double)t_switch);
            for (size_t t = 0; t < T; t++) *(t < t_switch ? &m_short : &m_long) += hypot(c[t], sn[t]);
            double turn = wk->w[k] * (double)t_switch;
            wk->rho[k] = turn > 0 ? eps / turn + 1e-7 : 1;
            wk->ok[k] = turn > 1e-3;
        }
        bool *ok_after = (bool *)wk->fc; /* scratch: K flags */
        for (int32_t k = 0; k < K; k++) ok_after[k] = wk->wl[k] * (double)(T - t_switch) > 1e-3;
        rope_id_fit_offset_(wk->wl, phi_after, ok_after, K, 0.0, &out->long_offset);
        out->magnitude = m_short / ((double)t_switch * K);
        out->long_magnitude = m_long / ((double)(T - t_switch) * K);
    } else {
        /* one table: the amplitude fit is sharp only for pairs that turn many times over the rows */
        size_t nm = 0;
        for (int32_t k = 0; k < K; k++)
            if (wk->w[k] * (double)T > 20 * TWO_PI) wk->buf[nm++] = wk->mag[k];
        if (nm == 0) memcpy(wk->buf, wk->mag, sizeof *wk->mag * (size_t)K), nm = (size_t)K;
        out->magnitude = median(wk->buf, nm);
        if (two) { /* exact magnitude from the values, not the fits */
            double m = 0;
            for (size_t i = 0; i < n; i++) m += hypot(wk->pc[i], wk->ps[i]);
            out->magnitude = m / (double)n;
        }
    }
    double e_cos = rope_id_fit_offset_(wk->w, wk->phi, wk->ok, K, 0.0, &out->offset);
    if (!two) { /* one table: cos(w p) or sin(w p) = cos(w p - pi/2) */
        int64_t o_sin;
        double e_sin = rope_id_fit_offset_(wk->w, wk->phi, wk->ok, K, -M_PI / 2, &o_sin);
        out->ambiguous |= POSENC_IDENTIFY_COS_OR_SIN;
        if (e_sin < e_cos) {
            out->offset = o_sin;
            out->has_cos = 0;
            out->has_sin = 1;
        }
    }
    /* positions before 0: no engine builds such a cache, but one table (cos is even) read backwards
     * fits them: rows T-1..0 of a cos table are positions -(T-1)..0. Name what fits instead of
     * failing later to regenerate a table at negative positions. */
    if (out->offset < 0 && !two) {
        bool first_m1 = true, last_1 = true; /* every pair's row 0 at -1 / last row at 1 (1e-2: any grid) */
        for (int32_t k = 0; k < K; k++) {
            first_m1 = first_m1 && fabs(wk->pc[(size_t)k * T] + out->magnitude) < 1e-2;
            last_1 = last_1 && fabs(wk->pc[(size_t)k * T + T - 1] - out->magnitude) < 1e-2;
        }
        RETURN_ERROR_IF(first_m1 != last_1, err, POSENC_ERR_INVALID_ARGUMENT,
                        "row 0 fits position %lld (positions %lld..%lld), and a RoPE cache starts at 0 or later: %s",
                        (long long)out->offset, (long long)out->offset, (long long)out->offset + (long long)T - 1,
                        last_1 ? "the last row is 1 in every pair, as position 0 is: rows in reverse order (a cos "
                                 "table read backwards fits negative positions, cos being even)"
                               : "row 0 is -1 in every pair: the table is negated (-cos)");
    }
    /* 3. profile */
    profile_in pin = {K, 2 * K, wk->w, wk->ok, wk->rho};
    double base, w0;
    rope_id_fit_base_(&pin, &base, &w0);
    out->inv_freq = malloc(sizeof *out->inv_freq * (size_t)K);
    out->pair_factor = malloc(sizeof *out->pair_factor * (size_t)K);
    RETURN_ERROR_IF(!out->inv_freq || !out->pair_factor, err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %d pairs", K);
    for (int32_t k = 0; k < K; k++) {
        out->inv_freq[k] = wk->w[k];
        double w_base = pow(base, -2.0 * k / (2.0 * K));
        out->pair_factor[k] = wk->ok[k] ? w_base / wk->w[k] : NAN;
    }
    /* the profile: factor f of the last reliable pair vs the first */
    int32_t first = -1, last = -1;
    for (int32_t k = 0; k < K; k++)
        if (wk->ok[k]) {
            if (first < 0) first = k;
            last = k;
        }
    if (first < 0 && two) { /* phases that fall with the row: name what was seen */
        int32_t back = 0;
        bool c1 = true, s1 = true;
        for (int32_t k = 0; k < K; k++) {
            back += -wk->w[k] * (double)T > 1e-3;
            double c0 = wk->pc[(size_t)k * T], s0 = wk->ps[(size_t)k * T];
            c1 = c1 && fabs(c0 - 1) < 1e-2 && fabs(s0) < 1e-2;
            s1 = s1 && fabs(c0) < 1e-2 && fabs(s0 - 1) < 1e-2;
        }
        RETURN_ERROR_IF(back > 0, err, POSENC_ERR_INVALID_ARGUMENT,
                        "%d of %d pairs turn backwards (the angle falls row by row; in RoPE it grows with the "
                        "position): %s",
                        back, K,
                        c1   ? "row 0 is cos 1, sin 0: the sin is negated"
                        : s1 ? "row 0 is cos 0, sin 1: cos and sin are swapped"
                             : "rows in reverse order, or a negated / swapped sin with positions not from 0");
    }
    RETURN_ERROR_IF(first < 0, err, POSENC_ERR_INVALID_ARGUMENT,
                    "no pair turns enough over %zu positions to measure its frequency", T);
    RETURN_ERROR_IF(K > 1 && !(base > 1.0 + 1e-9), err, POSENC_ERR_INVALID_ARGUMENT,
                    "the pair frequencies do not fall with the pair index (fitted base %g): not a RoPE cache in the "
                    "%s layout", base, posenc_rope_cache_layout_name(layout));
    if (K == 1) out->ambiguous |= POSENC_IDENTIFY_ONE_PAIR;
    posenc_rope_params p;
    rope_id_profile_scheme_(out, &p, &base, wk->w, wk->ok, wk->rho, wk->wl, K, two, t_switch, first, last);
    /* magnitude: the scheme's own, else explicit */
    {
        double own = 1;
        posenc_error e = {0};
        /* the scheme's own magnitude at the cache's dims (a 2-dim stand-in is refused by YaRN's ramp) */
        if (p.scaling == POSENC_ROPE_LONGROPE ||
            posenc_rope_frequencies(&p, 0, wk->buf, (size_t)K, &own, &e) != POSENC_OK)
            own = 1;
        /* one table: the magnitude comes from a least-squares amplitude (~1e-5 off at 131072 rows
         * of a slow pair), not from c^2 + s^2 */
        double mtol = out->grid == POSENC_DTYPE_F32 ? (two ? 1e-6 : 1e-4) : 8e-3;
        if (fabs(out->magnitude - own) > mtol * own) p.attention_factor = rope_id_snap_round_(out->magnitude, 1e-5);
    }
    /* 4. arithmetics */
    target tg = {wk->pc, two ? wk->ps : NULL, T, K, out->offset, out->grid, NULL, layout == POSENC_CACHE_VLLM ? 1 : 2,
                 out->inv_freq};
    if (!two && !out->has_cos) tg.cos_v = NULL, tg.sin_v = wk->pc;
    /* the fits above are pair-major; the table is row-major: transpose once */
    double *rm_c = malloc(sizeof *rm_c * n), *rm_s = two ? malloc(sizeof *rm_s * n) : NULL;
    RETURN_ERROR_IF(!rm_c || (two && !rm_s), err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate a [%zu, %d] table", T, K);
    for (int32_t k = 0; k < K; k++)
        for (size_t t = 0; t < T; t++) {
            rm_c[t * (size_t)K + (size_t)k] = wk->pc[(size_t)k * T + t];
            if (two) rm_s[t * (size_t)K + (size_t)k] = wk->ps[(size_t)k * T + t];
        }
    if (tg.cos_v) tg.cos_v = rm_c;
    if (tg.sin_v) tg.sin_v = two ? rm_s : rm_c;
    out->values = (tg.cos_v ? n : 0) + (tg.sin_v ? n : 0);
    int best = -1;
    static const posenc_mode modes[POSENC_ROPE_ARITHS] = {POSENC_MODE_PRECISE, POSENC_MODE_TORCH_COMPAT,
                                                          POSENC_MODE_GGML};
    if (!t_switch) p = rope_id_refine_(&tg, p, out->pair_factor, K, base, wk->fc, wk->fs, &out->ntk_base, &out->ntk_factor);
    if (p.attention_factor > 0 && p.scaling != POSENC_ROPE_LONGROPE) {
        /* the magnitude was made explicit against the first-guess parameters; refine may have
         * found the factor whose own magnitude it is (a noisy one-table profile: 3.84 -> 4) */
        posenc_rope_params q = p;
        double own = 1;
        posenc_error e = {0};
        q.attention_factor = 0;
        double mtol = out->grid == POSENC_DTYPE_F32 ? (two ? 1e-6 : 1e-4) : 8e-3;
        if (posenc_rope_frequencies(&q, 0, wk->buf, (size_t)K, &own, &e) == POSENC_OK &&
            fabs(out->magnitude - own) <= mtol * own)
            p.attention_factor = 0;
    }
    if (p.scaling != POSENC_ROPE_NONE && p.scaling != POSENC_ROPE_LONGROPE && p.factor == 1) { /* no scaling at all */
        p.scaling = POSENC_ROPE_NONE;
        p.original_max_position = 0;
    }
    if (p.scaling == POSENC_ROPE_NONE) {
        out->ambiguous |= POSENC_IDENTIFY_NTK_IS_BASE;
        out->ambiguous &= ~(POSENC_IDENTIFY_YARN_CONTEXT | POSENC_IDENTIFY_LLAMA3_BANDS);
    }
    if (p.scaling == POSENC_ROPE_YARN && p.original_max_position > 0) { /* the ramp of the final candidate */
        double R = 2.0 * K, lb = log(p.base), l0 = (double)p.original_max_position;
        out->yarn_low = fmax(floor(R * log(l0 / (p.beta_fast * TWO_PI)) / (2 * lb)), 0);
        out->yarn_high = fmin(ceil(R * log(l0 / (p.beta_slow * TWO_PI)) / (2 * lb)), R - 1);
        out->yarn_context_lo = fmax(TWO_PI * p.beta_fast * exp(2 * lb * out->yarn_low / R),
                                    TWO_PI * p.beta_slow * exp(2 * lb * (out->yarn_high - 1) / R));
        out->yarn_context_hi = fmin(TWO_PI * p.beta_fast * exp(2 * lb * (out->yarn_low + 1) / R),
                                    TWO_PI * p.beta_slow * exp(2 * lb * out->yarn_high / R));
        out->ramp_first = (int32_t)out->yarn_low + 1; /* strictly inside the ramp */
        out->ramp_last = (int32_t)fmin(out->yarn_high - 1, K - 1);
        out->ambiguous |= POSENC_IDENTIFY_YARN_CONTEXT;
    }
    if (p.scaling == POSENC_ROPE_LLAMA3 && p.original_max_position > 0) {
        out->llama3_wave_lo = (double)p.original_max_position / p.high_freq_factor;
        out->llama3_wave_hi = (double)p.original_max_position / p.low_freq_factor;
        out->ambiguous |= POSENC_IDENTIFY_LLAMA3_BANDS;
    }
    if (p.scaling != POSENC_ROPE_YARN) out->ambiguous &= ~POSENC_IDENTIFY_YARN_CONTEXT;
    if (p.scaling != POSENC_ROPE_LLAMA3) out->ambiguous &= ~POSENC_IDENTIFY_LLAMA3_BANDS;
    double mtol_long = out->grid == POSENC_DTYPE_F32 ? 1e-6 : 8e-3;
    for (int a = 0; a < POSENC_ROPE_ARITHS; a++) {
        if (t_switch) { /* each side with its own list and magnitude */
            target before, after;
            split_at_switch(&tg, t_switch, T, K, out->long_offset, &before, &after);
            posenc_rope_params ps_ = p, pl = p;
            ps_.longrope_select = POSENC_LONGROPE_SHORT;
            pl.longrope_select = POSENC_LONGROPE_LONG;
            pl.attention_factor =
                fabs(out->long_magnitude - 1) > mtol_long ? rope_id_snap_round_(out->long_magnitude, 1e-5) : 0;
            int64_t u1, u2;
            size_t d1, d2;
            if (!rope_id_score_(&before, ps_, modes[a], wk->fc, wk->fs, &u1, &d1) ||
                !rope_id_score_(&after, pl, modes[a], wk->fc, wk->fs, &u2, &d2)) {
                out->max_ulp[a] = -1;
                continue;
            }
            out->max_ulp[a] = u1 > u2 ? u1 : u2;
            out->differ[a] = d1 + d2;
            if (best < 0 || out->differ[a] < out->differ[best] ||
                (out->differ[a] == out->differ[best] && out->max_ulp[a] < out->max_ulp[best]))
                best = a;
            continue;
        }
        if (!rope_id_score_(&tg, p, modes[a], wk->fc, wk->fs, &out->max_ulp[a], &out->differ[a])) {
            out->max_ulp[a] = -1;
            continue;
        }
        if (best < 0 || out->differ[a] < out->differ[best] ||
            (out->differ[a] == out->differ[best] && out->max_ulp[a] < out->max_ulp[best]))
            best = a;
    }
    if (best < 0) {
        free(rm_c);
        free(rm_s);
        return posenc_fail_(err, POSENC_ERR_INVALID_ARGUMENT,
                            "the fitted %s RoPE (base %g, factor %g) cannot be regenerated in any arithmetic",
                            posenc_rope_scaling_name(p.scaling), p.base, p.factor);
    }
    /* the gate: every word above rests on this candidate; a value it leaves further off than
     * the grid and float32 angles allow means the words are not the table's */
    {
        gate_result g = {0, 0, 0, 0}, g2 = {0, 0, 0, 0};
        int64_t u;
        size_t d;
        bool ok;
        posenc_rope_params q = p;
        if (p.scaling == POSENC_ROPE_LONGROPE) q.short_factors = q.long_factors = out->pair_factor;
        if (t_switch) {
            target before, after;
            split_at_switch(&tg, t_switch, T, K, out->long_offset, &before, &after);
            posenc_rope_params ps_ = q, pl = q;
            pl.long_factors = out->long_pair_factor;
            ps_.longrope_select = POSENC_LONGROPE_SHORT;
            pl.longrope_select = POSENC_LONGROPE_LONG;
            pl.attention_factor =
                fabs(out->long_magnitude - 1) > mtol_long ? rope_id_snap_round_(out->long_magnitude, 1e-5) : 0;
            ok = rope_id_score_pairs_(&before, ps_, modes[best], wk->fc, wk->fs, &u, &d, NULL, &g) &&
                 rope_id_score_pairs_(&after, pl, modes[best], wk->fc, wk->fs, &u, &d, NULL, &g2);
            if (g2.over) {
                g2.worst_row += t_switch;
                if (!g.over || g2.worst_ratio > g.worst_ratio) g.worst_ratio = g2.worst_ratio, g.worst_row = g2.worst_row,
                                                              g.worst_pair = g2.worst_pair;
                g.over += g2.over;
            }
        } else {
            ok = rope_id_score_pairs_(&tg, q, modes[best], wk->fc, wk->fs, &u, &d, NULL, &g);
        }
        free(rm_c);
        free(rm_s);
        if (!ok) g.over = 1, g.worst_ratio = INFINITY;
        if (g.over) {
            bool half = out->grid != POSENC_DTYPE_F32;
            return posenc_fail_(
                err, POSENC_ERR_INVALID_ARGUMENT,
                "%s: the best fit (%s, base %.6g, %s, %s layout) leaves %zu of %zu values beyond what the %s "
                "grid and f32 angles allow (worst: row %zu, pair %d, %.2g x)%s",
                half && !two ? "cannot tell from one half-precision table" : "not a RoPE cache",
                posenc_rope_scaling_name(p.scaling), p.base, posenc_rope_arith_name((posenc_rope_arith)best),
                posenc_rope_cache_layout_name(layout), g.over, out->values, posenc_dtype_name(out->grid), g.worst_row,
                g.worst_pair, g.worst_ratio,
                half && !two ? "; give --sin" : "");
        }
    }
    int ties = 0;
    for (int a = 0; a < POSENC_ROPE_ARITHS; a++)
        ties += out->max_ulp[a] >= 0 && out->differ[a] == out->differ[best] && out->max_ulp[a] == out->max_ulp[best];
    if (ties > 1) out->ambiguous |= POSENC_IDENTIFY_ARITH;
    if (out->differ[best]) out->ambiguous |= POSENC_IDENTIFY_NOT_EXACT;
    out->arith = (posenc_rope_arith)best;
    p.mode = modes[best];
    if (p.scaling == POSENC_ROPE_LONGROPE) p.short_factors = p.long_factors = out->pair_factor;
    if (t_switch) p.long_factors = out->long_pair_factor;
    out->params = p;
    return POSENC_OK;
}

posenc_status posenc_rope_identify(const posenc_array *table, const posenc_array *sin_table,
                                   posenc_rope_cache_layout layout, posenc_rope_identity *out, posenc_error *err) {
    RETURN_IF_NULL(table, err);
    RETURN_IF_NULL(out, err);
    memset(out, 0, sizeof *out);
    RETURN_ERROR_IF((int)layout < 0 || (int)layout > POSENC_CACHE_PLAIN, err, POSENC_ERR_INVALID_ARGUMENT,
                    "unknown cache layout %d", (int)layout);
    work wk;
    memset(&wk, 0, sizeof wk);
    posenc_status st = identify(table, sin_table, layout, out, &wk, err);
    work_free(&wk);
    if (st != POSENC_OK) {
        posenc_rope_identity_free(out);
        return st;
    }
    return posenc_ok_(err);
}
