/* rope_identify_profile.c: step 3 of "which RoPE is this?" (posenc.h 4b): the scheme from
 * the profile. Each pair's factor w_k(base) / measured w_k, over the reliable pairs: flat 1
 * is no scaling, flat f linear, 1 rising to f linearly in k YaRN (its ramp ends give L0 for
 * betas 32/1), linearly in the frequency Llama 3 (band edges give L0 for low/high 1/4),
 * anything else per-pair factors (LongRoPE-like; with a switch row, both lists). Calls the
 * fits (rope_identify_fit.c) only. */
#include "rope_identify_internal.h"

#include <stdlib.h>
#include <string.h>

void rope_id_profile_scheme_(posenc_rope_identity *out, posenc_rope_params *params, double *base_io, const double *w,
                             const bool *ok, const double *rho, const double *wl, int32_t K, bool two, size_t t_switch,
                             int32_t first, int32_t last) {
    double base = *base_io;
    posenc_rope_params p;
    posenc_rope_params_default(&p, 2 * K);
    p.base = rope_id_snap_round_(base, 2e-4);
    double f_first = out->pair_factor[first], f_last = out->pair_factor[last];
    out->ramp_first = out->ramp_last = -1;
    out->yarn_low = out->yarn_high = 0;
    double flat = 1e-4;
    bool all_flat = true;
    for (int32_t k = first; k <= last; k++)
        if (ok[k]) all_flat = all_flat && fabs(out->pair_factor[k] / f_first - 1) < flat + 4 * rho[k];
    double profile_res = 0;
    if (all_flat) {
        if (fabs(f_first - 1) < flat) {
            p.scaling = POSENC_ROPE_NONE;
            out->ambiguous |= POSENC_IDENTIFY_NTK_IS_BASE;
        } else {
            p.scaling = POSENC_ROPE_LINEAR;
            p.factor = rope_id_snap_round_(f_first, 1e-3);
        }
        for (int32_t k = first; k <= last; k++)
            if (ok[k]) profile_res = fmax(profile_res, fabs(out->pair_factor[k] / f_first - 1));
    } else if (fabs(f_first - 1) < flat && f_last > 1) {
        double f = rope_id_snap_round_(f_last, 1e-3);
        /* ramp pairs: strictly between kept (1) and scaled (f) */
        double ks[4096], rs[4096], ws[4096];
        int nr = 0;
        for (int32_t k = first; k <= last && nr < 4096; k++) {
            if (!ok[k]) continue;
            double inv = 1.0 / out->pair_factor[k];
            double ramp = (1.0 - inv) / (1.0 - 1.0 / f); /* 0 kept .. 1 scaled */
            double band = 1e-3 + 4 * rho[k] / (1.0 - 1.0 / f);
            if (ramp > band && ramp < 1 - band) {
                if (out->ramp_first < 0) out->ramp_first = k;
                out->ramp_last = k;
                ks[nr] = k, rs[nr] = ramp, ws[nr] = pow(base, -2.0 * k / (2.0 * K));
                nr++;
            }
        }
        /* YaRN: ramp linear in k; Llama 3: 1 - ramp = s linear in w */
        double yres = INFINITY, lres = INFINITY, ya = 0, yb = 0, la = 0, lb = 0;
        if (nr >= 2) {
            for (int pass = 0; pass < 2; pass++) {
                double *x = pass ? ws : ks, mx = 0, my = 0, sxy = 0, sxx = 0;
                for (int i = 0; i < nr; i++) mx += x[i], my += rs[i];
                mx /= nr, my /= nr;
                for (int i = 0; i < nr; i++) sxy += (x[i] - mx) * (rs[i] - my), sxx += (x[i] - mx) * (x[i] - mx);
                double b = sxy / sxx, a = my - b * mx, worst = 0;
                for (int i = 0; i < nr; i++) worst = fmax(worst, fabs(a + b * x[i] - rs[i]));
                if (pass) lres = worst, la = a, lb = b;
                else yres = worst, ya = a, yb = b;
            }
        }
        double lo_k = nr >= 2 ? -ya / yb : (out->ramp_first >= 0 ? out->ramp_first - 0.5 : 0);
        double hi_k = nr >= 2 ? (1 - ya) / yb : lo_k + 1;
        bool yarn_ints = nr >= 2 && fabs(lo_k - round(lo_k)) < 0.02 && fabs(hi_k - round(hi_k)) < 0.02;
        bool is_yarn = nr < 3 ? yarn_ints || nr < 2 : yres <= lres;
        p.factor = f;
        if (is_yarn) {
            p.scaling = POSENC_ROPE_YARN;
            out->yarn_low = round(lo_k), out->yarn_high = round(hi_k);
            profile_res = nr >= 2 ? yres : 0;
            /* L0 for betas 32 / 1: low = floor(R ln(L0/(2 pi 32)) / (2 ln b)), high = ceil(.. beta 1) */
            double R = 2.0 * K, lb_ = log(p.base);
            double l_lo = fmax(TWO_PI * 32 * exp(2 * lb_ * out->yarn_low / R),
                               TWO_PI * exp(2 * lb_ * (out->yarn_high - 1) / R));
            double l_hi = fmin(TWO_PI * 32 * exp(2 * lb_ * (out->yarn_low + 1) / R),
                               TWO_PI * exp(2 * lb_ * out->yarn_high / R));
            out->yarn_context_lo = l_lo, out->yarn_context_hi = l_hi;
            p.original_max_position = (int64_t)rope_id_pow2_in_(l_lo, l_hi, round(0.5 * (l_lo + l_hi)));
            out->ambiguous |= POSENC_IDENTIFY_YARN_CONTEXT;
        } else {
            p.scaling = POSENC_ROPE_LLAMA3;
            profile_res = lres;
            /* s = 1 - ramp = -la' ... : ramp = la + lb w; s = 0 (ramp 1) at the low edge */
            double w_scaled_edge = (1 - la) / lb, w_kept_edge = -la / lb;
            out->llama3_wave_lo = TWO_PI / w_kept_edge;  /* L0 / high */
            out->llama3_wave_hi = TWO_PI / w_scaled_edge; /* L0 / low */
            p.low_freq_factor = 1, p.high_freq_factor = 4;
            p.original_max_position = (int64_t)rope_id_pow2_in_(out->llama3_wave_hi * 0.97, out->llama3_wave_hi * 1.03,
                                                       round(out->llama3_wave_hi));
            out->ambiguous |= POSENC_IDENTIFY_LLAMA3_BANDS;
        }
    }
    /* a profile that rises from 1 but follows neither YaRN's ramp nor Llama 3's bands (misfit
     * of several percent: Phi-3's long factors fit YaRN to 22%) is a per-pair factor list; with
     * cos and sin both present only (a one-table profile is noisier: refine's candidates judge it) */
    bool per_pair = !all_flat && !(fabs(f_first - 1) < flat && f_last > 1);
    if (!per_pair && two && (p.scaling == POSENC_ROPE_YARN || p.scaling == POSENC_ROPE_LLAMA3) && profile_res > 0.05) {
        per_pair = true;
        out->ramp_first = out->ramp_last = -1;
        out->yarn_low = out->yarn_high = 0;
        out->yarn_context_lo = out->yarn_context_hi = 0;
        out->llama3_wave_lo = out->llama3_wave_hi = 0;
        p.low_freq_factor = 1, p.high_freq_factor = 4;
        out->ambiguous &= ~(POSENC_IDENTIFY_YARN_CONTEXT | POSENC_IDENTIFY_LLAMA3_BANDS);
    }
    if (per_pair && !t_switch) {
        /* per-pair factors: LongRoPE-like; the list is the measured profile against a base the
         * data cannot fix (w_k = base^(-2k/R) / f_k: the base and a smooth list trade off). The
         * leading-pair fit assumes f_1 = f_0; factors that rise from pair 0 (every LongRoPE list
         * seen) make it an upper bound, so the base is the largest common RoPE base at or below
         * it (within 3%), else that fit snapped to a round number */
        if (two) { /* one table: the leading fit stands (refine's candidates judge it: an NTK base) */
            static const double common[] = {1e4, 1e5, 5e5, 1e6, 5e6, 1e7, 1e8};
            double b = rope_id_snap_round_(base, 0.03);
            for (size_t i = 0; i < sizeof common / sizeof common[0]; i++)
                if (common[i] <= base * 1.03) b = common[i];
            if (b < base * 1.03 && b > 1) base = b;
            p.base = base;
            for (int32_t k = 0; k < K; k++)
                out->pair_factor[k] = ok[k] ? pow(base, -2.0 * k / (2.0 * K)) / w[k] : NAN;
            out->ambiguous |= POSENC_IDENTIFY_LONGROPE_BASE;
        }
        p.scaling = POSENC_ROPE_LONGROPE;
        profile_res = 0;
        for (int32_t k = 0; k < K; k++)
            if (!ok[k]) out->pair_factor[k] = k ? out->pair_factor[k - 1] : 1;
        p.short_factors = p.long_factors = out->pair_factor;
        p.factors_count = (size_t)K;
        p.original_max_position = 4096;
        p.factor = 1;
        p.longrope_select = POSENC_LONGROPE_SHORT;
    }
    if (t_switch) { /* both lists, measured; the switch is the original context */
        p.scaling = POSENC_ROPE_LONGROPE;
        out->ramp_first = out->ramp_last = -1;
        /* factor lists rise from the first pair on, which bends the base fit: the base is
         * the round number within 3% (a smooth factor profile and the base trade off). The
         * factors stay as measured: the cache shows float32 inv_freq, whose rounding hides
         * the float32 factor behind it (measured within ~3e-7 of the config's lists) */
        base = rope_id_snap_round_(base, 0.03);
        p.base = base;
        for (int32_t k = 0; k < K; k++) {
            double w_base = pow(base, -2.0 * k / (2.0 * K));
            out->pair_factor[k] = ok[k] ? w_base / w[k] : (k ? out->pair_factor[k - 1] : 1);
            double lf = wl[k] > 0 ? w_base / wl[k] : NAN;
            out->long_pair_factor[k] = isfinite(lf) ? lf : (k ? out->long_pair_factor[k - 1] : 1);
        }
        p.short_factors = out->pair_factor;
        p.long_factors = out->long_pair_factor;
        p.factors_count = (size_t)K;
        p.factor = 1;
        p.original_max_position = out->offset + (int64_t)t_switch;
        p.longrope_select = POSENC_LONGROPE_BY_SEQ_LEN;
        out->switch_position = out->offset + (int64_t)t_switch;
        p.original_max_position = out->switch_position;
        out->ambiguous &= ~POSENC_IDENTIFY_NTK_IS_BASE;
        profile_res = 0;
    }
    out->profile_residual = profile_res;
    *params = p;
    *base_io = base;
}
