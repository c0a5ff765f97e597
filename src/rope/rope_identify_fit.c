/* rope_identify_fit.c: the fits of "which RoPE is this?" (posenc.h 4b), from the values
 * alone: each pair's slope, phase and magnitude (from cos and sin, or from one function by
 * its recurrence), the integer position offset, the base from the leading pairs, round
 * numbers, and the row where LongRoPE's short factors switch to long ones. Pure numerics:
 * calls no other file of identify. */
#include "rope_identify_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- 2. per-pair slope, phase, magnitude ---------------------------------- */

/* Least squares line y = a + b x over x = 0..n-1. */
static void fit_line(const double *y, size_t n, double *a, double *b) {
    double mx = (double)(n - 1) / 2.0, my = 0, sxy = 0, sxx = 0;
    for (size_t i = 0; i < n; i++) my += y[i];
    my /= (double)n;
    for (size_t i = 0; i < n; i++) {
        double dx = (double)i - mx;
        sxy += dx * (y[i] - my);
        sxx += dx * dx;
    }
    *b = sxy / sxx;
    *a = my - *b * mx;
}

/* x - 2 pi n into (-pi, pi]. Not fmod: fit_offset calls this ~K times per candidate offset
 * and fmod's exact remainder was a fifth of a [512, 65536] table's time; the rounding of
 * x / 2 pi costs under 1e-16 x here, far below the milliradians the fits resolve. */
double rope_id_wrap_pi_(double x) {
    x -= TWO_PI * nearbyint(x / TWO_PI);
    if (x > M_PI) x -= TWO_PI;
    if (x <= -M_PI) x += TWO_PI;
    return x;
}

/* Both functions: unwrapped atan2 phase, fitted line. */
void rope_id_pair_from_both_(const double *c, const double *s, size_t n, double *phase_buf, double *w, double *phi,
                             double *mag) {
    double prev = atan2(s[0], c[0]), acc = prev;
    phase_buf[0] = prev;
    double m = hypot(c[0], s[0]);
    for (size_t t = 1; t < n; t++) {
        double p = atan2(s[t], c[t]);
        acc += rope_id_wrap_pi_(p - prev);
        prev = p;
        phase_buf[t] = acc;
        m += hypot(c[t], s[t]);
    }
    fit_line(phase_buf, n, phi, w);
    *mag = m / (double)n;
}

/* One function f(t) = A cos(w t + phi): cos w from the recurrence, then A and
 * phi by least squares on cos(w t), sin(w t). */
void rope_id_pair_from_one_(const double *f, size_t n, double *w, double *phi, double *mag) {
    double num = 0, den = 0;
    for (size_t t = 1; t + 1 < n; t++) {
        num += f[t] * (f[t + 1] + f[t - 1]);
        den += 2.0 * f[t] * f[t];
    }
    double cw = den > 0 ? num / den : 1.0;
    cw = cw > 1 ? 1 : cw < -1 ? -1 : cw;
    *w = acos(cw);
    /* the recurrence loses low frequencies (cos w ~ 1 - w^2/2 under the
     * rounding noise): refine w, a, b by Gauss-Newton on a cos(wt) + b sin(wt) */
    double a = f[0], b = 0;
    for (int iter = 0; iter < 8; iter++) {
        double scc = 0, sss = 0, scs = 0, fc = 0, fs = 0;
        for (size_t t = 0; t < n; t++) {
            double ct = cos(*w * (double)t), st = sin(*w * (double)t);
            scc += ct * ct, sss += st * st, scs += ct * st, fc += f[t] * ct, fs += f[t] * st;
        }
        double det = scc * sss - scs * scs;
        if (!(fabs(det) > 1e-12 * scc * sss)) { /* w ~ 0: no second basis function */
            a = fc / scc, b = 0;
        } else {
            a = (fc * sss - fs * scs) / det, b = (fs * scc - fc * scs) / det;
        }
        double num_w = 0, den_w = 0;
        for (size_t t = 0; t < n; t++) {
            double x = *w * (double)t, ct = cos(x), st = sin(x);
            double r = f[t] - (a * ct + b * st), d = (double)t * (-a * st + b * ct);
            num_w += r * d, den_w += d * d;
        }
        double step = den_w > 0 ? num_w / den_w : 0;
        if (!isfinite(step)) break;
        double nw = *w + step;
        if (nw < 0) nw = -nw, b = -b; /* cos(-wt + phi) = cos(wt - phi) */
        *w = nw;
        if (fabs(step) <= 1e-15 * (*w + 1e-300)) break;
    }
    /* f = a cos + b sin = A cos(w t + phi), A cos phi = a, -A sin phi = b */
    *mag = hypot(a, b);
    *phi = atan2(-b, a);
}

/* The integer offset o (searched 0, 1, -1, 2, ... up to 2^20) that best
 * explains phi_k = w_k o + shift over the reliable pairs; returns the summed
 * squared misfit. The highest-frequency pair screens candidates first. */
double rope_id_fit_offset_(const double *w, const double *phi, const bool *ok, int32_t pairs, double shift,
                           int64_t *out) {
    int32_t best_k = -1, used = 0;
    for (int32_t k = 0; k < pairs; k++)
        if (ok[k]) {
            used++;
            if (best_k < 0 || w[k] > w[best_k]) best_k = k;
        }
    double best = INFINITY;
    *out = 0;
    if (best_k < 0) return best;
    for (int64_t i = 0; i <= 2 * (1 << 20); i++) {
        int64_t o = i % 2 ? (i + 1) / 2 : -(i / 2);
        double e = rope_id_wrap_pi_(w[best_k] * (double)o + shift - phi[best_k]);
        if (fabs(e) > 0.05) continue;
        double sum = 0;
        for (int32_t k = 0; k < pairs && sum < best; k++)
            if (ok[k]) {
                double d = rope_id_wrap_pi_(w[k] * (double)o + shift - phi[k]);
                sum += d * d;
            }
        if (sum < best) {
            best = sum;
            *out = o;
        }
        if (best < 1e-6 * used) break; /* within a milliradian everywhere: the smallest such |o| */
    }
    return best;
}

/* ---- 3. profile ------------------------------------------------------------ */

double rope_id_snap_round_(double x, double rel) {
    if (!(x > 0)) return x;
    double digits[] = {1, 2, 3};
    for (int i = 0; i < 3; i++) {
        double e = pow(10.0, floor(log10(x)) - digits[i] + 1);
        double r = round(x / e) * e;
        if (fabs(r - x) <= rel * x) return r;
    }
    double q = round(x * 8) / 8; /* eighths: factors like 2.5, 0.125 */
    if (fabs(q - x) <= rel * x) return q;
    return x;
}

double rope_id_pow2_in_(double lo, double hi, double fallback) {
    for (double p = 256; p <= (double)(1 << 30); p *= 2)
        if (p >= lo && p <= hi) return p;
    for (double m = 1024; m <= (double)(1 << 30); m += 1024)
        if (m >= lo && m <= hi) return m;
    return fallback;
}


/* base and global scale from the leading pairs: log w_k = a - (2k/R) ln b over
 * the longest prefix that stays on one line. */
void rope_id_fit_base_(const profile_in *p, double *base, double *w0) {
    double best_b = 10000, best_a = 0;
    int32_t n = 0;
    double xs[4096], ys[4096];
    for (int32_t k = 0; k < p->pairs && n < 4096; k++) {
        if (!p->ok[k]) continue;
        xs[n] = 2.0 * k / p->r;
        ys[n] = log(p->w[k]);
        n++;
        if (n < 2) continue;
        double mx = 0, my = 0, sxy = 0, sxx = 0;
        for (int32_t i = 0; i < n; i++) mx += xs[i], my += ys[i];
        mx /= n, my /= n;
        for (int32_t i = 0; i < n; i++) sxy += (xs[i] - mx) * (ys[i] - my), sxx += (xs[i] - mx) * (xs[i] - mx);
        double slope = sxy / sxx, a = my - slope * mx, worst = 0;
        for (int32_t i = 0; i < n; i++) worst = fmax(worst, fabs(a + slope * xs[i] - ys[i]));
        if (n > 2 && worst > 2e-5 + 4 * p->sig[k]) break; /* the line bends: a scaled band starts */
        best_b = exp(-slope);
        best_a = a;
    }
    *base = best_b;
    *w0 = exp(best_a);
}

/* ---- LongRoPE's short/long switch ------------------------------------------ */

/* Unwrapped atan2 phase of one pair. */
void rope_id_unwrapped_phase_(const double *c, const double *s, size_t n, double *out) {
    double prev = atan2(s[0], c[0]), acc = prev;
    out[0] = acc;
    for (size_t t = 1; t < n; t++) {
        double p = atan2(s[t], c[t]);
        acc += rope_id_wrap_pi_(p - prev);
        prev = p;
        out[t] = acc;
    }
}

/* Least-squares line over rows [a, b) of y: slope and value at row 0. */
void rope_id_fit_segment_(const double *y, size_t a, size_t b, double *slope, double *at0) {
    double line_a, line_b;
    fit_line(y + a, b - a, &line_a, &line_b);
    *slope = line_b;
    *at0 = line_a - line_b * (double)a;
}

typedef struct { /* running sums of (1, x, x^2, y, y^2, x y) */
    double n, sx, sxx, sy, syy, sxy;
} sums;

static double sums_sse(const sums *s) {
    if (s->n < 3) return 0;
    double vxx = s->sxx - s->sx * s->sx / s->n, vxy = s->sxy - s->sx * s->sy / s->n,
           vyy = s->syy - s->sy * s->sy / s->n;
    double sse = vxx > 0 ? vyy - vxy * vxy / vxx : vyy;
    return sse > 0 ? sse : 0;
}

/* The row t0 where every pair's phase slope changes at once (a cache holding
 * short factors before t0 and long ones from t0 on), or 0. A pair whose phase
 * leaves its one-line fit by more than float32 angle noise (4e-7 of the angle
 * it reaches, + 0.02 rad) votes: for each t0 the two-line residual (running
 * sums of the one-line residual, t centered) over its one-line residual,
 * summed over the voters; the switch is the minimum when two lines explain
 * all but 1e-4 of every voter's misfit. phase, vote: [T] scratch. */
size_t rope_id_find_switch_(const double *pc, const double *ps, size_t T, int32_t K, const double *w, const double *phi,
                            double *phase, double *vote) {
    int voters = 0;
    for (size_t t = 0; t < T; t++) vote[t] = 0;
    double half = 0.5 * (double)T;
    for (int32_t k = 0; k < K; k++) {
        rope_id_unwrapped_phase_(pc + (size_t)k * T, ps + (size_t)k * T, T, phase);
        double worst = 0, sse1 = 0;
        for (size_t t = 0; t < T; t++) {
            phase[t] -= phi[k] + w[k] * (double)t;
            worst = fmax(worst, fabs(phase[t]));
            sse1 += phase[t] * phase[t];
        }
        if (!(worst > 0.02 + 4e-7 * fabs(w[k]) * (double)T) || !(sse1 > 0)) continue;
        voters++;
        sums all = {0, 0, 0, 0, 0, 0}, left = {0, 0, 0, 0, 0, 0};
        for (size_t t = 0; t < T; t++) {
            double x = (double)t - half, y = phase[t];
            all.n += 1, all.sx += x, all.sxx += x * x, all.sy += y, all.syy += y * y, all.sxy += x * y;
        }
        for (size_t t = 0; t + 3 < T; t++) {
            double x = (double)t - half, y = phase[t];
            left.n += 1, left.sx += x, left.sxx += x * x, left.sy += y, left.syy += y * y, left.sxy += x * y;
            if (t + 1 < 3) continue;
            sums right = {all.n - left.n,     all.sx - left.sx,   all.sxx - left.sxx,
                          all.sy - left.sy,   all.syy - left.syy, all.sxy - left.sxy};
            vote[t + 1] += (sums_sse(&left) + sums_sse(&right)) / sse1;
        }
    }
    if (!voters) return 0;
    size_t best = 0;
    for (size_t t = 3; t + 3 <= T; t++)
        if (best == 0 || vote[t] < vote[best]) best = t;
    return best && vote[best] < 1e-4 * voters ? best : 0;
}
