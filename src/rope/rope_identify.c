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
 * Calls rope.c's public table function; nothing calls back. */
#include "rope_internal.h"

#include <stdlib.h>
#include <string.h>

#define TWO_PI 6.283185307179586
#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static const char *const layout_names[] = {"auto", "hf", "vllm", "ggml", "plain"};
static const char *const arith_names[] = {"exact", "hf-f32", "ggml-f32"};

const char *posenc_rope_cache_layout_name(posenc_rope_cache_layout layout) {
    return (int)layout >= 0 && (int)layout <= POSENC_CACHE_PLAIN ? layout_names[layout] : "?";
}

const char *posenc_rope_arith_name(posenc_rope_arith arith) {
    return (int)arith >= 0 && (int)arith < POSENC_ROPE_ARITHS ? arith_names[arith] : "?";
}

void posenc_rope_identity_free(posenc_rope_identity *id) {
    if (!id) return;
    free(id->inv_freq);
    free(id->pair_factor);
    free(id->long_pair_factor);
    memset(id, 0, sizeof *id);
}

/* ---- values and their grid ---------------------------------------------- */

typedef struct {
    size_t rows, width;
    double *v; /* [rows][width] */
} grid2d;

static posenc_status load_2d(const posenc_array *a, const char *what, grid2d *g, posenc_error *err) {
    RETURN_ERROR_IF(a->dtype != POSENC_DTYPE_F32 && a->dtype != POSENC_DTYPE_F64 && a->dtype != POSENC_DTYPE_F16 &&
                        a->dtype != POSENC_DTYPE_BF16,
                    err, POSENC_ERR_INVALID_ARGUMENT, "%s must be f32, f64, f16 or bf16, got %s", what,
                    posenc_dtype_name(a->dtype));
    int first = 0;
    while (a->ndim - first > 2 && a->shape[first] == 1) first++;
    RETURN_ERROR_IF(a->ndim - first != 2, err, POSENC_ERR_INVALID_ARGUMENT,
                    "%s must be [positions, channels] (leading size-1 dims allowed), got rank %d", what, a->ndim);
    g->rows = a->shape[first];
    g->width = a->shape[first + 1];
    RETURN_ERROR_IF(g->rows < 3, err, POSENC_ERR_INVALID_ARGUMENT, "%s has %zu positions; at least 3 are needed",
                    what, g->rows);
    RETURN_ERROR_IF(g->width < 1, err, POSENC_ERR_INVALID_ARGUMENT, "%s has no channels", what);
    posenc_array f;
    FORWARD_IF_ERROR(posenc_array_to_f64(a, &f, err));
    g->v = f.data;
    for (size_t i = 0; i < f.count; i++)
        if (!isfinite(g->v[i])) {
            double bad = g->v[i];
            free(g->v);
            g->v = NULL;
            return posenc_fail_(err, POSENC_ERR_INVALID_ARGUMENT, "%s value at [%zu, %zu] is %g: a RoPE cache is finite",
                                what, i / g->width, i % g->width, bad);
        }
    return POSENC_OK;
}

/* The narrowest grid every value lies on: the array's own 16-bit dtype, or for
 * wider arrays bf16 / f16 when every value converts back unchanged. */
static posenc_dtype find_grid(posenc_dtype dtype, const double *v, size_t n) {
    if (dtype == POSENC_DTYPE_F16 || dtype == POSENC_DTYPE_BF16) return dtype;
    bool bf = true, h = true;
    for (size_t i = 0; i < n && (bf || h); i++) {
        float f = (float)v[i];
        bf = bf && posenc_bf16_to_f32(posenc_f32_to_bf16(f)) == f;
        h = h && posenc_f16_to_f32(posenc_f32_to_f16(f)) == f;
    }
    return bf ? POSENC_DTYPE_BF16 : h ? POSENC_DTYPE_F16 : POSENC_DTYPE_F32;
}

/* A value rounded to the grid (what the cache would hold). */
static float on_grid(posenc_dtype grid, float f) {
    if (grid == POSENC_DTYPE_BF16) return posenc_bf16_to_f32(posenc_f32_to_bf16(f));
    if (grid == POSENC_DTYPE_F16) return posenc_f16_to_f32(posenc_f32_to_f16(f));
    return f;
}

/* The residual unit: the grid's spacing for values in [0.5, 1) (f32 2^-24,
 * bf16 2^-8, f16 2^-11; a format with m stored mantissa bits steps by 2^-(m+1)
 * there: bf16 stores 7), the ULP of a cos/sin near its peak, where most of a
 * cos table's values lie. A ULP count of the value itself would explode near
 * the zeros of cos/sin, where one angle error crosses thousands of tiny ULPs. */
static double grid_unit(posenc_dtype grid) {
    return grid == POSENC_DTYPE_BF16 ? 0x1p-8 : grid == POSENC_DTYPE_F16 ? 0x1p-11 : 0x1p-24;
}

/* The rounding a value may carry and still be the same RoPE, in absolute terms: 4 units of
 * f32 / f16 (the cache's value and ours may round to neighbours, and the engine's cos/sin may
 * be 1-2 f32 ULPs from ours); 2 units of bf16 = 2^-7, one bf16 step of [1, 2), where a
 * magnitude above 1 puts the peak values (f32's ULPs vanish against bf16's step). */
static double grid_slack(posenc_dtype grid) { return (grid == POSENC_DTYPE_BF16 ? 2.0 : 4.0) * grid_unit(grid); }

/* ---- 1. layout ------------------------------------------------------------ */

static bool halves_equal(const grid2d *g) {
    if (g->width % 2) return false;
    size_t h = g->width / 2;
    for (size_t t = 0; t < g->rows; t++)
        for (size_t k = 0; k < h; k++)
            if (g->v[t * g->width + k] != g->v[t * g->width + k + h]) return false;
    return true;
}

/* Columns 2k and 2k + 1 equal at every row, and some column changing: each value twice in a
 * row, GPT-J's repeat_interleave layout (cos(freqs).repeat_interleave(2)). */
static bool neighbours_equal(const grid2d *g) {
    if (g->width % 2) return false;
    bool moves = false;
    for (size_t t = 0; t < g->rows; t++)
        for (size_t k = 0; k + 1 < g->width; k += 2) {
            const double *row = g->v + t * g->width;
            if (row[k] != row[k + 1]) return false;
            moves = moves || row[k] != g->v[k];
        }
    return moves;
}

/* c^2 + s^2 of every pair within `tol` (relative) of the first row's. */
static bool norm_constant(const grid2d *g, bool interleaved, double tol) {
    if (g->width % 2) return false;
    size_t h = g->width / 2;
    double ref = -1;
    for (size_t t = 0; t < g->rows; t++)
        for (size_t k = 0; k < h; k++) {
            const double *row = g->v + t * g->width;
            double c = interleaved ? row[2 * k] : row[k], s = interleaved ? row[2 * k + 1] : row[k + h];
            double n = c * c + s * s;
            if (ref < 0) ref = n;
            if (!(ref > 0) || fabs(n - ref) > tol * ref) return false;
        }
    return true;
}

/* Trailing columns where every row holds cos 1 (and sin 0 when s is given): the pass-through
 * channels of a partial rotary kept in a full-width cache. */
static size_t passthrough_tail(const grid2d *c, const grid2d *s) {
    size_t p = 0;
    while (p < c->width) {
        size_t j = c->width - 1 - p;
        bool pass = true;
        for (size_t t = 0; t < c->rows && pass; t++)
            pass = c->v[t * c->width + j] == 1.0 && (!s || s->v[t * s->width + j] == 0.0);
        if (!pass) break;
        p++;
    }
    return p;
}

/* Drop the last p columns in place. */
static void drop_tail(grid2d *g, size_t p) {
    size_t w = g->width - p;
    for (size_t t = 1; t < g->rows; t++) memmove(g->v + t * w, g->v + t * g->width, sizeof *g->v * w);
    g->width = w;
}

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
static double wrap_pi(double x) {
    x -= TWO_PI * nearbyint(x / TWO_PI);
    if (x > M_PI) x -= TWO_PI;
    if (x <= -M_PI) x += TWO_PI;
    return x;
}

/* Both functions: unwrapped atan2 phase, fitted line. */
static void pair_from_both(const double *c, const double *s, size_t n, double *phase_buf, double *w, double *phi,
                           double *mag) {
    double prev = atan2(s[0], c[0]), acc = prev;
    phase_buf[0] = prev;
    double m = hypot(c[0], s[0]);
    for (size_t t = 1; t < n; t++) {
        double p = atan2(s[t], c[t]);
        acc += wrap_pi(p - prev);
        prev = p;
        phase_buf[t] = acc;
        m += hypot(c[t], s[t]);
    }
    fit_line(phase_buf, n, phi, w);
    *mag = m / (double)n;
}

/* One function f(t) = A cos(w t + phi): cos w from the recurrence, then A and
 * phi by least squares on cos(w t), sin(w t). */
static void pair_from_one(const double *f, size_t n, double *w, double *phi, double *mag) {
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
static double fit_offset(const double *w, const double *phi, const bool *ok, int32_t pairs, double shift,
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
        double e = wrap_pi(w[best_k] * (double)o + shift - phi[best_k]);
        if (fabs(e) > 0.05) continue;
        double sum = 0;
        for (int32_t k = 0; k < pairs && sum < best; k++)
            if (ok[k]) {
                double d = wrap_pi(w[k] * (double)o + shift - phi[k]);
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

static double snap_round(double x, double rel) {
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

static double pow2_in(double lo, double hi, double fallback) {
    for (double p = 256; p <= (double)(1 << 30); p *= 2)
        if (p >= lo && p <= hi) return p;
    for (double m = 1024; m <= (double)(1 << 30); m += 1024)
        if (m >= lo && m <= hi) return m;
    return fallback;
}

typedef struct {
    int32_t pairs, r;
    const double *w;
    const bool *ok;
    const double *sig; /* expected relative error of each w_k */
} profile_in;

/* base and global scale from the leading pairs: log w_k = a - (2k/R) ln b over
 * the longest prefix that stays on one line. */
static void fit_base(const profile_in *p, double *base, double *w0) {
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

/* ---- 4. candidates and their ULPs ----------------------------------------- */

typedef struct {
    const double *cos_v, *sin_v; /* [T][K] per pair (either may be NULL) */
    size_t rows;
    int32_t pairs;
    int64_t offset;
    posenc_dtype grid;
    const int64_t *ids; /* positions of the rows (NULL: offset, offset + 1, ...) */
    int torch_copies;   /* the table torch's cos/sin ran over (TORCH_COMPAT): 2 = HF's emb
                           [T, R]; 1 = vLLM's freqs [T, R/2] (its blocks differ when R/2 is
                           not a multiple of torch's vector width) */
    const double *still; /* measured w per pair (NULL: none): pairs measured at exactly 0 never
                            turn (a position stream held at 0) and are left out of the gate */
} target;

/* The residual gate: what a value may differ by and still be the same RoPE. The grid's
 * rounding (4 units: a regenerated value and the cache's may round to neighbours, and the
 * engine's cos/sin may be 1-2 f32 ULPs from ours) plus the float32 angle's rounding, which
 * grows with the angle: w p rounded to f32 (2^-24 relative) and w itself computed by another
 * engine's pow (a few f32 ULPs) give 8 x 2^-24 |angle| in all. Scaled by the magnitude. */
static double gate_bound(double slack, double magnitude, double angle) {
    return fmax(magnitude, 1.0) * (slack + 8.0 * 0x1p-24 * fabs(angle));
}

typedef struct { /* values beyond gate_bound: count, and the worst one (in bounds) */
    size_t over;
    size_t worst_row;
    int32_t worst_pair;
    double worst_ratio;
} gate_result;

/* max ULP and count of differing values of params in `mode` (and, when pair_ulp is
 * not NULL, each pair's max ULP, raised, not reset); false if refused. */
static bool score_pairs(const target *tg, posenc_rope_params params, posenc_mode mode, float *cbuf, float *sbuf,
                        int64_t *max_ulp, size_t *differ, int64_t *pair_ulp, gate_result *gate);
static bool score(const target *tg, posenc_rope_params params, posenc_mode mode, float *cbuf, float *sbuf,
                  int64_t *max_ulp, size_t *differ) {
    return score_pairs(tg, params, mode, cbuf, sbuf, max_ulp, differ, NULL, NULL);
}
static bool score_pairs(const target *tg, posenc_rope_params params, posenc_mode mode, float *cbuf, float *sbuf,
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
        double unit = grid_unit(tg->grid);
        for (size_t i = 0; i < n; i++) {
            double g = (double)on_grid(tg->grid, got[i]);
            if (g != want[i]) {
                bad++;
                int64_t d = (int64_t)ceil(fabs(g - want[i]) / unit);
                if (d > worst) worst = d;
                size_t k = i % (size_t)tg->pairs, t = i / (size_t)tg->pairs;
                if (pair_ulp && d > pair_ulp[k]) pair_ulp[k] = d;
                if (gate && !(tg->still && tg->still[k] == 0)) {
                    double at = tg->ids ? (double)tg->ids[t] : (double)tg->offset + (double)t;
                    double ratio = fabs(g - want[i]) / gate_bound(grid_slack(tg->grid), fabs(att), wg[k] * at);
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
static posenc_rope_params refine(const target *tg, posenc_rope_params p, const double *pair_factor, int32_t K,
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
        if (score(&sub, p, m2 ? POSENC_MODE_GGML : POSENC_MODE_TORCH_COMPAT, cbuf, sbuf, &ulp, &bad) && bad < best_bad)
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
                if (score(&sub, q, m2 ? POSENC_MODE_GGML : POSENC_MODE_TORCH_COMPAT, cbuf, sbuf, &ulp, &bad) &&
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
                    if (!score(&sub, q, m2 ? POSENC_MODE_GGML : POSENC_MODE_TORCH_COMPAT, cbuf, sbuf, &ulp, &bad))
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
            if (score(&sub, q, m2 ? POSENC_MODE_GGML : POSENC_MODE_TORCH_COMPAT, cbuf, sbuf, &ulp, &bad) &&
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

/* ---- LongRoPE's short/long switch ------------------------------------------ */

/* Unwrapped atan2 phase of one pair. */
static void unwrapped_phase(const double *c, const double *s, size_t n, double *out) {
    double prev = atan2(s[0], c[0]), acc = prev;
    out[0] = acc;
    for (size_t t = 1; t < n; t++) {
        double p = atan2(s[t], c[t]);
        acc += wrap_pi(p - prev);
        prev = p;
        out[t] = acc;
    }
}

/* Least-squares line over rows [a, b) of y: slope and value at row 0. */
static void fit_segment(const double *y, size_t a, size_t b, double *slope, double *at0) {
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
static size_t find_switch(const double *pc, const double *ps, size_t T, int32_t K, const double *w, const double *phi,
                          double *phase, double *vote) {
    int voters = 0;
    for (size_t t = 0; t < T; t++) vote[t] = 0;
    double half = 0.5 * (double)T;
    for (int32_t k = 0; k < K; k++) {
        unwrapped_phase(pc + (size_t)k * T, ps + (size_t)k * T, T, phase);
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

/* ---- the entry point -------------------------------------------------------- */

typedef struct {
    grid2d c, s;
    double *pc, *ps, *w, *phi, *mag, *buf, *rho; /* rho: expected relative error of w_k */
    double *wl, *vote;                           /* LongRoPE switch: slopes after it, [T] votes */
    bool *ok;
    float *fc, *fs;
} work;

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
    FORWARD_IF_ERROR(load_2d(table, "cache", &wk->c, err));
    if (sin_table) {
        FORWARD_IF_ERROR(load_2d(sin_table, "sin table", &wk->s, err));
        RETURN_ERROR_IF(wk->s.rows != wk->c.rows || wk->s.width != wk->c.width, err, POSENC_ERR_INVALID_ARGUMENT,
                        "sin table is [%zu, %zu] but the cos table is [%zu, %zu]", wk->s.rows, wk->s.width,
                        wk->c.rows, wk->c.width);
    }
    out->grid = find_grid(table->dtype, wk->c.v, wk->c.rows * wk->c.width);
    /* a full-width cache of a partial rotary: HF's halves hold only on the rotated channels,
     * the rest hold cos 1 / sin 0 at every row. Taken off when what remains is an HF cache. */
    if ((layout == POSENC_CACHE_AUTO || layout == POSENC_CACHE_HF) && !halves_equal(&wk->c)) {
        size_t p = passthrough_tail(&wk->c, sin_table ? &wk->s : NULL);
        if (p > 0 && p + 2 <= wk->c.width && (wk->c.width - p) % 2 == 0) {
            drop_tail(&wk->c, p);
            if (sin_table) drop_tail(&wk->s, p);
            if (halves_equal(&wk->c) && (!sin_table || halves_equal(&wk->s))) {
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
    RETURN_ERROR_IF((layout == POSENC_CACHE_AUTO || layout == POSENC_CACHE_PLAIN) && !halves_equal(&wk->c) &&
                        neighbours_equal(&wk->c) && (!sin_table || neighbours_equal(&wk->s)),
                    err, POSENC_ERR_INVALID_ARGUMENT,
                    "columns 2k and 2k + 1 are equal at every row: a GPT-J repeat_interleave cache (each pair's "
                    "value twice in a row), a layout identify does not read; give its even columns [:, ::2] as a "
                    "plain cache");
    double tol = out->grid == POSENC_DTYPE_BF16 ? 0.02 : out->grid == POSENC_DTYPE_F16 ? 4e-3 : 1e-5;
    double eps = out->grid == POSENC_DTYPE_BF16 ? 0x1p-8 : out->grid == POSENC_DTYPE_F16 ? 0x1p-10 : 0x1p-23;
    /* 1. layout */
    if (layout == POSENC_CACHE_AUTO) {
        if (sin_table) layout = halves_equal(&wk->c) && halves_equal(&wk->s) ? POSENC_CACHE_HF : POSENC_CACHE_PLAIN;
        else if (halves_equal(&wk->c)) layout = POSENC_CACHE_HF;
        else if (norm_constant(&wk->c, true, tol)) layout = POSENC_CACHE_GGML;
        else if (norm_constant(&wk->c, false, tol)) layout = POSENC_CACHE_VLLM;
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
        double rel = fmax(2 * grid_slack(out->grid), 1e-4);
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
        if (two) pair_from_both(c, wk->ps + (size_t)k * T, T, wk->buf, &wk->w[k], &wk->phi[k], &wk->mag[k]);
        else pair_from_one(c, T, &wk->w[k], &wk->phi[k], &wk->mag[k]);
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
        t_switch = find_switch(wk->pc, wk->ps, T, K, wk->w, wk->phi, wk->buf, wk->vote);
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
            unwrapped_phase(c, sn, T, wk->buf);
            double at0;
            fit_segment(wk->buf, 0, t_switch, &wk->w[k], &wk->phi[k]);
            fit_segment(wk->buf, t_switch, T, &wk->wl[k], &at0);
            phi_after[k] = wrap_pi(at0 + wk->wl[k] * (double)t_switch);
            for (size_t t = 0; t < T; t++) *(t < t_switch ? &m_short : &m_long) += hypot(c[t], sn[t]);
            double turn = wk->w[k] * (double)t_switch;
            wk->rho[k] = turn > 0 ? eps / turn + 1e-7 : 1;
            wk->ok[k] = turn > 1e-3;
        }
        bool *ok_after = (bool *)wk->fc; /* scratch: K flags */
        for (int32_t k = 0; k < K; k++) ok_after[k] = wk->wl[k] * (double)(T - t_switch) > 1e-3;
        fit_offset(wk->wl, phi_after, ok_after, K, 0.0, &out->long_offset);
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
    double e_cos = fit_offset(wk->w, wk->phi, wk->ok, K, 0.0, &out->offset);
    if (!two) { /* one table: cos(w p) or sin(w p) = cos(w p - pi/2) */
        int64_t o_sin;
        double e_sin = fit_offset(wk->w, wk->phi, wk->ok, K, -M_PI / 2, &o_sin);
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
    fit_base(&pin, &base, &w0);
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
    double f_first = out->pair_factor[first], f_last = out->pair_factor[last];
    posenc_rope_params p;
    posenc_rope_params_default(&p, 2 * K);
    p.base = snap_round(base, 2e-4);
    out->ramp_first = out->ramp_last = -1;
    out->yarn_low = out->yarn_high = 0;
    double flat = 1e-4;
    bool all_flat = true;
    for (int32_t k = first; k <= last; k++)
        if (wk->ok[k]) all_flat = all_flat && fabs(out->pair_factor[k] / f_first - 1) < flat + 4 * wk->rho[k];
    double profile_res = 0;
    if (all_flat) {
        if (fabs(f_first - 1) < flat) {
            p.scaling = POSENC_ROPE_NONE;
            out->ambiguous |= POSENC_IDENTIFY_NTK_IS_BASE;
        } else {
            p.scaling = POSENC_ROPE_LINEAR;
            p.factor = snap_round(f_first, 1e-3);
        }
        for (int32_t k = first; k <= last; k++)
            if (wk->ok[k]) profile_res = fmax(profile_res, fabs(out->pair_factor[k] / f_first - 1));
    } else if (fabs(f_first - 1) < flat && f_last > 1) {
        double f = snap_round(f_last, 1e-3);
        /* ramp pairs: strictly between kept (1) and scaled (f) */
        double ks[4096], rs[4096], ws[4096];
        int nr = 0;
        for (int32_t k = first; k <= last && nr < 4096; k++) {
            if (!wk->ok[k]) continue;
            double inv = 1.0 / out->pair_factor[k];
            double ramp = (1.0 - inv) / (1.0 - 1.0 / f); /* 0 kept .. 1 scaled */
            double band = 1e-3 + 4 * wk->rho[k] / (1.0 - 1.0 / f);
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
            p.original_max_position = (int64_t)pow2_in(l_lo, l_hi, round(0.5 * (l_lo + l_hi)));
            out->ambiguous |= POSENC_IDENTIFY_YARN_CONTEXT;
        } else {
            p.scaling = POSENC_ROPE_LLAMA3;
            profile_res = lres;
            /* s = 1 - ramp = -la' ... : ramp = la + lb w; s = 0 (ramp 1) at the low edge */
            double w_scaled_edge = (1 - la) / lb, w_kept_edge = -la / lb;
            out->llama3_wave_lo = TWO_PI / w_kept_edge;  /* L0 / high */
            out->llama3_wave_hi = TWO_PI / w_scaled_edge; /* L0 / low */
            p.low_freq_factor = 1, p.high_freq_factor = 4;
            p.original_max_position = (int64_t)pow2_in(out->llama3_wave_hi * 0.97, out->llama3_wave_hi * 1.03,
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
            double b = snap_round(base, 0.03);
            for (size_t i = 0; i < sizeof common / sizeof common[0]; i++)
                if (common[i] <= base * 1.03) b = common[i];
            if (b < base * 1.03 && b > 1) base = b;
            p.base = base;
            for (int32_t k = 0; k < K; k++)
                out->pair_factor[k] = wk->ok[k] ? pow(base, -2.0 * k / (2.0 * K)) / wk->w[k] : NAN;
            out->ambiguous |= POSENC_IDENTIFY_LONGROPE_BASE;
        }
        p.scaling = POSENC_ROPE_LONGROPE;
        profile_res = 0;
        for (int32_t k = 0; k < K; k++)
            if (!wk->ok[k]) out->pair_factor[k] = k ? out->pair_factor[k - 1] : 1;
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
        base = snap_round(base, 0.03);
        p.base = base;
        for (int32_t k = 0; k < K; k++) {
            double w_base = pow(base, -2.0 * k / (2.0 * K));
            out->pair_factor[k] = wk->ok[k] ? w_base / wk->w[k] : (k ? out->pair_factor[k - 1] : 1);
            double lf = wk->wl[k] > 0 ? w_base / wk->wl[k] : NAN;
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
        if (fabs(out->magnitude - own) > mtol * own) p.attention_factor = snap_round(out->magnitude, 1e-5);
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
    if (!t_switch) p = refine(&tg, p, out->pair_factor, K, base, wk->fc, wk->fs, &out->ntk_base, &out->ntk_factor);
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
            target before = tg, after = tg;
            before.rows = t_switch;
            after.rows = T - t_switch;
            after.offset = out->long_offset;
            if (after.cos_v) after.cos_v += t_switch * (size_t)K;
            if (after.sin_v) after.sin_v += t_switch * (size_t)K;
            posenc_rope_params ps_ = p, pl = p;
            ps_.longrope_select = POSENC_LONGROPE_SHORT;
            pl.longrope_select = POSENC_LONGROPE_LONG;
            pl.attention_factor =
                fabs(out->long_magnitude - 1) > mtol_long ? snap_round(out->long_magnitude, 1e-5) : 0;
            int64_t u1, u2;
            size_t d1, d2;
            if (!score(&before, ps_, modes[a], wk->fc, wk->fs, &u1, &d1) ||
                !score(&after, pl, modes[a], wk->fc, wk->fs, &u2, &d2)) {
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
        if (!score(&tg, p, modes[a], wk->fc, wk->fs, &out->max_ulp[a], &out->differ[a])) {
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
            target before = tg, after = tg;
            before.rows = t_switch;
            after.rows = T - t_switch;
            after.offset = out->long_offset;
            if (after.cos_v) after.cos_v += t_switch * (size_t)K;
            if (after.sin_v) after.sin_v += t_switch * (size_t)K;
            posenc_rope_params ps_ = q, pl = q;
            pl.long_factors = out->long_pair_factor;
            ps_.longrope_select = POSENC_LONGROPE_SHORT;
            pl.longrope_select = POSENC_LONGROPE_LONG;
            pl.attention_factor =
                fabs(out->long_magnitude - 1) > mtol_long ? snap_round(out->long_magnitude, 1e-5) : 0;
            ok = score_pairs(&before, ps_, modes[best], wk->fc, wk->fs, &u, &d, NULL, &g) &&
                 score_pairs(&after, pl, modes[best], wk->fc, wk->fs, &u, &d, NULL, &g2);
            if (g2.over) {
                g2.worst_row += t_switch;
                if (!g.over || g2.worst_ratio > g.worst_ratio) g.worst_ratio = g2.worst_ratio, g.worst_row = g2.worst_row,
                                                              g.worst_pair = g2.worst_pair;
                g.over += g2.over;
            }
        } else {
            ok = score_pairs(&tg, q, modes[best], wk->fc, wk->fs, &u, &d, NULL, &g);
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
    posenc_status st = load_2d(table, "cache", &c, err);
    if (st == POSENC_OK && sin_table) st = load_2d(sin_table, "sin table", &s, err);
    /* a full-width cache of a partial rotary: its pass-through tail (cos 1, sin 0) is no part of R */
    size_t want_w = layout == POSENC_CACHE_PLAIN ? (size_t)r / 2 : (size_t)r;
    if (st == POSENC_OK && (layout == POSENC_CACHE_HF || layout == POSENC_CACHE_PLAIN) && c.width > want_w &&
        (!sin_table || s.width == c.width) && passthrough_tail(&c, sin_table ? &s : NULL) >= c.width - want_w) {
        size_t p = c.width - want_w;
        drop_tail(&c, p);
        if (sin_table) drop_tail(&s, p);
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
        target tg = {rc,   two ? rs : NULL, T, (int32_t)K, offset, find_grid(table->dtype, c.v, T * W),
                     NULL, layout == POSENC_CACHE_VLLM ? 1 : 2, NULL};
        if (!two && table_is_sin) tg.cos_v = NULL, tg.sin_v = rc;
        if (!score(&tg, *params, params->mode, fc, fs, max_ulp, differ))
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
    posenc_status st = load_2d(table, "cache", &c, err);
    if (st == POSENC_OK && sin_table) st = load_2d(sin_table, "sin table", &s, err);
    if (st == POSENC_OK && id->passthrough > 0 && c.width == (size_t)id->rotary_dim + (size_t)id->passthrough &&
        (!sin_table || s.width == c.width) && passthrough_tail(&c, sin_table ? &s : NULL) >= (size_t)id->passthrough) {
        drop_tail(&c, (size_t)id->passthrough);
        if (sin_table) drop_tail(&s, (size_t)id->passthrough);
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
                                      ? snap_round(id->long_magnitude, 1e-5)
                                      : 0;
            ok = score_pairs(&before, ps, modes[arith], fc, fs, &ulp, &differ, pair_max_ulp, NULL) &&
                 score_pairs(&after, pl, modes[arith], fc, fs, &ulp, &differ, pair_max_ulp, NULL);
        } else {
            ok = score_pairs(&tg, p, modes[arith], fc, fs, &ulp, &differ, pair_max_ulp, NULL);
        }
        if (!ok)
            st = posenc_fail_(err, POSENC_ERR_INVALID_ARGUMENT, "the fitted parameters cannot make a table in %s",
                              posenc_rope_arith_name(arith));
    }
    free(c.v), free(s.v), free(rc), free(rs), free(fc), free(fs);
    return st == POSENC_OK ? posenc_ok_(err) : st;
}
