/* analysis_fit.c: recover a sinusoid / RoPE model (layout, pair order,
 * frequencies, start position, base, angle formation) from data alone.
 * Used by `posenc analyze`, the diff diagnosis and the signal check. */
#include "analysis_internal.h"
#include "../io/io_internal.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

#define TWO_PI 6.283185307179586476925286766559

posenc_status posenc_f64_table_from_array_(const posenc_array *a, const char *what,
                                           posenc_f64_table_ *out, posenc_error *err) {
    RETURN_IF_NULL(a, err);
    memset(out, 0, sizeof *out);
    RETURN_ERROR_IF(a->ndim < 1, err, POSENC_ERR_INVALID_ARGUMENT,
                    "%s must have at least one axis, got a scalar", what);
    RETURN_ERROR_IF(posenc_dtype_size(a->dtype) == 0, err, POSENC_ERR_INVALID_ARGUMENT,
                    "%s has an unknown dtype %d", what, (int)a->dtype);
    size_t cols = a->shape[a->ndim - 1];
    RETURN_ERROR_IF(a->count == 0 || cols == 0, err, POSENC_ERR_INVALID_ARGUMENT,
                    "%s is empty (%zu elements, %zu channels)", what, a->count, cols);
    RETURN_IF_NULL(a->data, err);
    out->rows = a->count / cols;
    out->cols = cols;
    out->array = a;
    out->f64 = a->dtype == POSENC_DTYPE_F64 ? a->data : NULL;
    out->f32 = a->dtype == POSENC_DTYPE_F32 ? a->data : NULL;
    return posenc_ok_(err);
}

void posenc_f64_table_of_(const double *data, size_t rows, size_t cols, posenc_array *array, posenc_f64_table_ *out) {
    memset(array, 0, sizeof *array);
    array->dtype = POSENC_DTYPE_F64;
    array->ndim = 2;
    array->shape[0] = rows, array->shape[1] = cols;
    array->count = rows * cols;
    array->data = (void *)(uintptr_t)data; /* read only: the view never writes */
    *out = (posenc_f64_table_){rows, cols, array, data, NULL};
}

const double *posenc_table_row_(const posenc_f64_table_ *t, size_t r, double *scratch) {
    if (t->f64) return t->f64 + r * t->cols;
    posenc_read_f64_(t->array, r * t->cols, t->cols, scratch);
    return scratch;
}

void posenc_read_f64_(const posenc_array *a, size_t first, size_t count, double *out) {
    if (a->dtype == POSENC_DTYPE_F64) {
        memcpy(out, (const double *)a->data + first, count * sizeof(double));
    } else if (a->dtype == POSENC_DTYPE_F32) { /* the common case, without a switch per element */
        const float *in = (const float *)a->data + first;
        for (size_t i = 0; i < count; i++) out[i] = in[i];
    } else {
        for (size_t i = 0; i < count; i++) out[i] = posenc_array_get_f64_(a, first + i);
    }
}

double posenc_angle_noise_for_dtype_(posenc_dtype dtype) {
    switch (dtype) {
    case POSENC_DTYPE_F64: return 1e-12;
    case POSENC_DTYPE_F16: return 0x1p-9;
    case POSENC_DTYPE_BF16: return 0x1p-6;
    default: return 0x1p-22; /* f32: sin and cos each off by half an ulp */
    }
}

const char *posenc_angle_formation_name(posenc_angle_formation formation) {
    switch (formation) {
    case POSENC_ANGLE_EXACT: return "exact";
    case POSENC_ANGLE_F32: return "float32";
    case POSENC_ANGLE_F16: return "float16";
    case POSENC_ANGLE_BF16: return "bfloat16";
    case POSENC_ANGLE_UNKNOWN: break;
    }
    return "unknown";
}

void posenc_sinusoid_fit_free(posenc_sinusoid_fit *fit) {
    if (!fit) return;
    free(fit->frequencies);
    memset(fit, 0, sizeof *fit);
    fit->first_zero_row = -1;
}

/* m * 10^e with m an integer in 1..100, within tol relative: the bases people pick. */
static bool near_round(double x, double tol, double *rounded) {
    if (!(x > 0) || !isfinite(x)) return false;
    double e = floor(log10(x)) - 1;
    double m = x / pow(10, e);
    double mr = nearbyint(m);
    if (mr < 1 || fabs(m - mr) > tol * m) return false;
    *rounded = mr * pow(10, e);
    return true;
}

static bool is_round(double x, double *rounded) { return near_round(x, 1e-3, rounded); }

bool posenc_fit_model_frequencies_(const posenc_sinusoid_fit *fit, double *out) {
    if (!fit->found || !fit->base_is_round || fit->pairs < 1) return false;
    long double lb = logl((long double)fit->base);
    for (int32_t k = 0; k < fit->pairs; k++) {
        long double e = fit->freqs == POSENC_FREQS_T2T
                            ? (fit->pairs > 1 ? -(long double)k / (fit->pairs - 1) : 0.0L)
                            : -2.0L * k / (2.0L * fit->pairs);
        out[k] = (double)((long double)fit->scale * expl(e * lb));
    }
    return true;
}

/* Least-squares line y = a + b x over the given points. */
static void fit_line(const double *x, const double *y, size_t n, double *a, double *b) {
    double sx = 0, sy = 0;
    for (size_t i = 0; i < n; i++) sx += x[i], sy += y[i];
    double mx = sx / (double)n, my = sy / (double)n, sxx = 0, sxy = 0;
    for (size_t i = 0; i < n; i++) sxx += (x[i] - mx) * (x[i] - mx), sxy += (x[i] - mx) * (y[i] - my);
    *b = sxx > 0 ? sxy / sxx : 0;
    *a = my - *b * mx;
}

/* Classify the angle error: thresholds are the relative error one rounding
 * step of each dtype can cause (with headroom for accumulated products, as
 * in ggml's theta *= theta_scale recurrence). */
static posenc_angle_formation classify(double abs_error, double rel_error, double noise) {
    if (abs_error <= noise) return POSENC_ANGLE_EXACT;
    if (rel_error <= 64 * 0x1p-24) return POSENC_ANGLE_F32;
    if (rel_error <= 4 * 0x1p-11) return POSENC_ANGLE_F16;
    if (rel_error <= 4 * 0x1p-8) return POSENC_ANGLE_BF16;
    return POSENC_ANGLE_UNKNOWN;
}

/* Max wrapped angle error against exact angles p*w (p = start + row), and the
 * largest error beyond the noise floor relative to the angle. */
static void angle_errors(const double *theta, const unsigned char *valid, size_t rows, size_t pairs, double start,
                         const double *model, double noise, double *worst_out, double *rel_out) {
    double worst = 0, worst_rel = 0;
    for (size_t r = 0; r < rows; r++) {
        if (!valid[r]) continue;
        double p = start + (double)r;
        for (size_t k = 0; k < pairs; k++) {
            double exact = (double)((long double)p * (long double)model[k]);
            double e = fabs(posenc_wrap_angle_(theta[r * pairs + k] - exact));
            if (e > worst) worst = e;
            if (e > noise && fabs(exact) > 0) {
                double rel = (e - noise) / fabs(exact);
                if (rel > worst_rel) worst_rel = rel;
            }
        }
    }
    *worst_out = worst, *rel_out = worst_rel;
}

/* Max error against angles formed in dtype: dtype(dtype(p) * dtype(w)). */
static double formed_residual(const double *theta, const unsigned char *valid, size_t rows, size_t pairs, double start,
                              const double *w, posenc_dtype dt) {
    double worst = 0;
    for (size_t r = 0; r < rows; r++) {
        if (!valid[r]) continue;
        double p = posenc_round_to_dtype(start + (double)r, dt);
        for (size_t k = 0; k < pairs; k++) {
            double f = posenc_round_to_dtype(p * posenc_round_to_dtype(w[k], dt), dt);
            double e = isfinite(f) ? fabs(posenc_wrap_angle_(theta[r * pairs + k] - f)) : INFINITY;
            if (!(e <= worst)) worst = e;
        }
    }
    return worst;
}

static void test_formations(const double *theta, const unsigned char *valid, size_t rows, size_t pairs, double start,
                            double noise, posenc_sinusoid_fit *fit, double *w) {
    static const posenc_dtype dts[] = {POSENC_DTYPE_F32, POSENC_DTYPE_F16, POSENC_DTYPE_BF16};
    static const posenc_angle_formation forms[] = {POSENC_ANGLE_F32, POSENC_ANGLE_F16, POSENC_ANGLE_BF16};
    for (int c = 0; c < 2; c++) {
        posenc_freqs conv = c ? POSENC_FREQS_T2T : POSENC_FREQS_VASWANI;
        double reading = c ? fit->base_t2t : fit->base_vaswani, base;
        if (!near_round(reading, 1e-2, &base)) continue;
        posenc_sinusoid_fit trial = *fit;
        trial.freqs = conv, trial.base = base, trial.base_is_round = 1;
        if (!posenc_fit_model_frequencies_(&trial, w)) continue;
        for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
            if (formed_residual(theta, valid, rows, pairs, start, w, dts[d]) > 2 * noise) continue;
            fit->freqs = conv, fit->base = base, fit->base_is_round = 1, fit->formation = forms[d];
            angle_errors(theta, valid, rows, pairs, start, w, noise, &fit->angle_error, &fit->angle_relative_error);
            return;
        }
    }
}

/* The start position from per-pair intercepts: lowest frequency first (no
 * 2*pi ambiguity while start*w < pi), then refined through higher frequencies
 * while the current estimate pins the branch to within a quarter turn. */
static double locate_start(const double *icpt, const double *model, size_t pairs) {
    size_t lo = 0;
    for (size_t k = 1; k < pairs; k++)
        if (fabs(model[k]) < fabs(model[lo])) lo = k;
    double s = model[lo] != 0 ? icpt[lo] / model[lo] : 0;
    for (size_t iter = 0; iter < pairs; iter++) {
        size_t best = pairs; /* next-higher frequency not yet used */
        for (size_t k = 0; k < pairs; k++)
            if (fabs(model[k]) > fabs(model[lo]) && (best == pairs || fabs(model[k]) < fabs(model[best]))) best = k;
        if (best == pairs) break;
        double w = model[best];
        double n = nearbyint((s * w - icpt[best]) / TWO_PI);
        double s2 = (icpt[best] + TWO_PI * n) / w;
        if (fabs(s2 - s) * fabs(w) > 0.25 * TWO_PI) break; /* branch no longer pinned */
        s = s2;
        lo = best;
    }
    return s;
}

posenc_status posenc_fit_angles_(const double *theta, const unsigned char *valid, size_t rows,
                                 size_t pairs, double noise, posenc_sinusoid_fit *fit,
                                 posenc_error *err) {
    fit->found = 0;
    fit->pairs = (int32_t)pairs;
    fit->noise = noise;
    size_t nvalid = 0;
    for (size_t r = 0; r < rows; r++) nvalid += valid[r] != 0;
    if (nvalid < 3 || pairs == 0) return posenc_ok_(err); /* too little to fit */
    free(fit->frequencies);
    fit->frequencies = calloc(pairs, sizeof(double));
    double *xs = malloc(rows * sizeof(double)), *ys = malloc(rows * sizeof(double));
    double *icpt = malloc(pairs * sizeof(double)), *model = malloc(pairs * sizeof(double));
    double *ks = malloc(pairs * sizeof(double)), *lw = malloc(pairs * sizeof(double));
    double *trial_w = malloc(pairs * sizeof(double));
    if (!fit->frequencies || !xs || !ys || !icpt || !model || !ks || !lw || !trial_w) {
        free(xs), free(ys), free(icpt), free(model), free(ks), free(lw), free(trial_w);
        return posenc_fail_(err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate the fit of %zu pairs", pairs);
    }
    /* 1. per pair: coarse step from consecutive valid rows, then unwrap
     * around that line and refine slope (frequency) and intercept by least squares. */
    for (size_t k = 0; k < pairs; k++) {
        double step = 0;
        size_t nstep = 0, r0 = rows;
        for (size_t r = 0; r < rows; r++) {
            if (!valid[r]) continue;
            if (r0 == rows) r0 = r;
            if (r + 1 < rows && valid[r + 1]) {
                step += posenc_wrap_angle_(theta[(r + 1) * pairs + k] - theta[r * pairs + k]);
                nstep++;
            }
        }
        step = nstep ? step / (double)nstep : 0;
        size_t n = 0;
        for (size_t r = r0; r < rows; r++) {
            if (!valid[r]) continue;
            double pred = theta[r0 * pairs + k] + (double)(r - r0) * step;
            xs[n] = (double)r;
            ys[n] = pred + posenc_wrap_angle_(theta[r * pairs + k] - pred);
            n++;
        }
        fit_line(xs, ys, n, &icpt[k], &fit->frequencies[k]);
        icpt[k] = posenc_wrap_angle_(icpt[k]);
    }
    /* 2. geometric law w_k = scale * ratio^k and the two conventions' bases */
    size_t npos = 0;
    for (size_t k = 0; k < pairs; k++)
        if (fit->frequencies[k] > 0) ks[npos] = (double)k, lw[npos] = log(fit->frequencies[k]), npos++;
    fit->ratio = NAN, fit->scale = NAN, fit->base = NAN, fit->base_vaswani = NAN, fit->base_t2t = NAN;
    fit->geometric_error = INFINITY;
    if (npos == pairs && pairs >= 2) {
        /* weighted by w^2: the angle noise is absolute, so a small w is known
         * only to a large relative error and must not steer the ratio */
        double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
        for (size_t k = 0; k < pairs; k++) {
            double wt = fit->frequencies[k] * fit->frequencies[k];
            sw += wt, sx += wt * ks[k], sy += wt * lw[k];
        }
        double mx = sx / sw, my = sy / sw;
        for (size_t k = 0; k < pairs; k++) {
            double wt = fit->frequencies[k] * fit->frequencies[k];
            sxx += wt * (ks[k] - mx) * (ks[k] - mx), sxy += wt * (ks[k] - mx) * (lw[k] - my);
        }
        double b = sxx > 0 ? sxy / sxx : 0, a = my - b * mx;
        fit->ratio = exp(b);
        double rs;
        fit->scale = is_round(exp(a), &rs) ? rs : exp(a); /* 1, or a round interpolation factor */
        fit->geometric_error = 0;
        double w_noise = 10 * noise / (double)nvalid; /* what one pair's slope can be off by */
        for (size_t k = 0; k < pairs; k++) {
            double g = exp(a) * pow(fit->ratio, (double)k);
            double rel = fabs(fit->frequencies[k] - g) / (g + w_noise);
            if (rel > fit->geometric_error) fit->geometric_error = rel;
        }
        fit->base_vaswani = pow(fit->ratio, -(double)pairs);
        fit->base_t2t = pow(fit->ratio, -(double)(pairs - 1));
        double rv = 0, rt = 0;
        bool v = is_round(fit->base_vaswani, &rv), t = is_round(fit->base_t2t, &rt);
        fit->freqs = (t && !v) ? POSENC_FREQS_T2T : POSENC_FREQS_VASWANI;
        fit->base = (t && !v) ? fit->base_t2t : fit->base_vaswani;
        fit->base_is_round = (v || t) && fit->geometric_error < 1e-2;
        if (fit->base_is_round) fit->base = (t && !v) ? rt : rv;
    } else if (pairs == 1) {
        fit->scale = fit->frequencies[0];
        fit->geometric_error = 0;
    }
    /* 3. the start position (see locate_start), with the exact model when the base is round */
    fit->found = 1; /* from here on the fit exists; the checks below grade it */
    bool exact_model = posenc_fit_model_frequencies_(fit, model);
    if (!exact_model) memcpy(model, fit->frequencies, pairs * sizeof(double));
    double s = locate_start(icpt, model, pairs);
    /* 3b. noisy angles (a rotation applied in bf16) blur the small frequencies
     * and with them the base estimate: try round bases within 1% and keep one
     * whose exact model reproduces the angles within the noise. */
    if (!exact_model && pairs >= 2) {
        for (int c = 0; c < 2 && !exact_model; c++) {
            posenc_sinusoid_fit trial = *fit;
            trial.freqs = c ? POSENC_FREQS_T2T : POSENC_FREQS_VASWANI;
            trial.base_is_round = near_round(c ? fit->base_t2t : fit->base_vaswani, 1e-2, &trial.base);
            if (!trial.base_is_round || !posenc_fit_model_frequencies_(&trial, trial_w)) continue;
            double ts = locate_start(icpt, trial_w, pairs), te, tr;
            if (fabs(ts - nearbyint(ts)) >= 0.01) continue;
            angle_errors(theta, valid, rows, pairs, nearbyint(ts), trial_w, noise, &te, &tr);
            if (te > 4 * noise) continue;
            fit->freqs = trial.freqs, fit->base = trial.base, fit->base_is_round = 1;
            memcpy(model, trial_w, pairs * sizeof(double));
            exact_model = true;
            s = ts;
        }
    }
    fit->start = s;
    fit->start_is_integer = fabs(s - nearbyint(s)) < 0.01;
    double start = fit->start_is_integer ? nearbyint(s) : s;
    if (fit->start_is_integer) fit->start = start + 0.0; /* no -0 */
    /* 4. angle error against the model, and how the angles were formed */
    angle_errors(theta, valid, rows, pairs, start, model, noise, &fit->angle_error, &fit->angle_relative_error);
    fit->formation = (exact_model && fit->start_is_integer)
                         ? classify(fit->angle_error, fit->angle_relative_error, noise)
                         : (fit->angle_error <= noise ? POSENC_ANGLE_EXACT : POSENC_ANGLE_UNKNOWN);
    /* 5. hypothesis test: angles formed exactly as dtype(dtype(p) * dtype(w)) for a
     * round base near the estimate. A bf16-formed table shifts the estimated base
     * by up to ~2^-8, so an exact reproduction (within 2 noise floors) is what
     * decides, not the estimate. */
    if (fit->start_is_integer && fit->formation != POSENC_ANGLE_EXACT && pairs >= 2)
        test_formations(theta, valid, rows, pairs, start, noise, fit, model);
    /* pairs of unit norm whose angles are not linear in the row (a complex
     * freqs_cis table flattened the wrong way, noise, ...): no sinusoid model */
    if (fit->formation == POSENC_ANGLE_UNKNOWN && fit->angle_error > 0.5) fit->found = 0;
    free(xs), free(ys), free(icpt), free(model), free(ks), free(lw), free(trial_w);
    return posenc_ok_(err);
}

/* Max relative deviation of pair norms from their mean, for one pairing. */
static double pair_norm_spread(const posenc_f64_table_ *t, size_t rows, size_t cols, size_t pairs,
                               posenc_layout layout, const unsigned char *valid, double *amplitude) {
    double sum = 0;
    size_t n = 0;
    for (size_t r = 0; r < rows; r++) {
        if (!valid[r]) continue;
        for (size_t k = 0; k < pairs; k++) {
            size_t a = layout == POSENC_LAYOUT_HALF ? k : 2 * k, b = layout == POSENC_LAYOUT_HALF ? k + pairs : 2 * k + 1;
            sum += hypot(posenc_table_at_(t, r * cols + a), posenc_table_at_(t, r * cols + b));
            n++;
        }
    }
    double amp = n ? sum / (double)n : 0, worst = 0;
    for (size_t r = 0; r < rows && amp > 0; r++) {
        if (!valid[r]) continue;
        for (size_t k = 0; k < pairs; k++) {
            size_t a = layout == POSENC_LAYOUT_HALF ? k : 2 * k, b = layout == POSENC_LAYOUT_HALF ? k + pairs : 2 * k + 1;
            double d = fabs(hypot(posenc_table_at_(t, r * cols + a), posenc_table_at_(t, r * cols + b)) - amp) / amp;
            if (!(d <= worst)) worst = d; /* NaN propagates as "worst" */
        }
    }
    *amplitude = amp;
    return amp > 0 ? worst : INFINITY;
}

posenc_status posenc_fit_table_f64_(const posenc_f64_table_ *t, double noise, posenc_sinusoid_fit *fit,
                                    posenc_error *err) {
    size_t rows = t->rows, cols = t->cols;
    memset(fit, 0, sizeof *fit);
    fit->first_zero_row = -1;
    fit->formation = POSENC_ANGLE_UNKNOWN;
    if (cols < 2 || rows < 3) return posenc_ok_(err);
    unsigned char *valid = malloc(rows);
    RETURN_ERROR_IF(!valid, err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %zu row flags", rows);
    for (size_t r = 0; r < rows; r++) {
        bool zero = true, finite = true;
        for (size_t c = 0; c < cols; c++) {
            double v = posenc_table_at_(t, r * cols + c);
            if (v != 0) zero = false;
            if (!isfinite(v)) finite = false;
        }
        valid[r] = !zero && finite;
        if (zero) {
            if (fit->zero_rows++ == 0) fit->first_zero_row = (int64_t)r;
        }
    }
    /* An odd dim carries one extra channel; the t2t/fairseq pad is all zeros. */
    size_t pairs = cols / 2;
    fit->extra_channels = (int32_t)(cols % 2);
    if (cols % 2) {
        for (size_t r = 0; r < rows; r++)
            if (posenc_table_at_(t, r * cols + cols - 1) != 0) { free(valid); return posenc_ok_(err); }
    }
    double amp_i = 0, amp_h = 0;
    double spread_i = pair_norm_spread(t, rows, cols, pairs, POSENC_LAYOUT_INTERLEAVED, valid, &amp_i);
    double spread_h = pair_norm_spread(t, rows, cols, pairs, POSENC_LAYOUT_HALF, valid, &amp_h);
    posenc_layout layout = spread_h < spread_i ? POSENC_LAYOUT_HALF : POSENC_LAYOUT_INTERLEAVED;
    double spread = layout == POSENC_LAYOUT_HALF ? spread_h : spread_i;
    /* 1e-2: a bf16-stored table has pair norms off by up to ~2^-8 */
    if (!(spread < 1e-2)) { free(valid); return posenc_ok_(err); }
    double *theta = malloc(rows * pairs * sizeof(double));
    if (!theta) { free(valid); return posenc_fail_(err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate angles"); }
    /* Pair order: the right one makes the angles grow with the row. */
    double trend = 0;
    for (size_t r = 0; r + 1 < rows; r++) {
        if (!valid[r] || !valid[r + 1]) continue;
        for (size_t k = 0; k < pairs; k++) {
            size_t a = layout == POSENC_LAYOUT_HALF ? k : 2 * k, b = layout == POSENC_LAYOUT_HALF ? k + pairs : 2 * k + 1;
            trend += posenc_wrap_angle_(atan2(posenc_table_at_(t, (r + 1) * cols + a), posenc_table_at_(t, (r + 1) * cols + b)) -
                                        atan2(posenc_table_at_(t, r * cols + a), posenc_table_at_(t, r * cols + b)));
        }
    }
    int cos_first = trend < 0;
    for (size_t r = 0; r < rows; r++)
        for (size_t k = 0; k < pairs; k++) {
            size_t a = layout == POSENC_LAYOUT_HALF ? k : 2 * k, b = layout == POSENC_LAYOUT_HALF ? k + pairs : 2 * k + 1;
            double u = posenc_table_at_(t, r * cols + a), v = posenc_table_at_(t, r * cols + b);
            theta[r * pairs + k] = cos_first ? atan2(v, u) : atan2(u, v);
        }
    posenc_status st = posenc_fit_angles_(theta, valid, rows, pairs, noise, fit, err);
    fit->layout = layout;
    fit->cos_first = cos_first;
    fit->amplitude = layout == POSENC_LAYOUT_HALF ? amp_h : amp_i;
    fit->pair_norm_error = spread;
    free(theta);
    free(valid);
    return st;
}

posenc_status posenc_sinusoid_fit_table(const posenc_array *table, double noise,
                                        posenc_sinusoid_fit *out, posenc_error *err) {
    RETURN_IF_NULL(out, err);
    memset(out, 0, sizeof *out);
    out->first_zero_row = -1;
    RETURN_ERROR_IF(!(noise >= 0) || !isfinite(noise), err, POSENC_ERR_INVALID_ARGUMENT,
                    "noise must be finite and >= 0, got %g", noise);
    posenc_f64_table_ t;
    FORWARD_IF_ERROR(posenc_f64_table_from_array_(table, "table", &t, err));
    if (noise == 0) noise = posenc_angle_noise_for_dtype_(table->dtype);
    posenc_status st = posenc_fit_table_f64_(&t, noise, out, err);
    return st;
}

posenc_status posenc_sinusoid_fit_rope_angles(const posenc_array *x, const posenc_array *y,
                                              posenc_sinusoid_fit *out, posenc_error *err) {
    RETURN_IF_NULL(x, err);
    RETURN_IF_NULL(y, err);
    RETURN_IF_NULL(out, err);
    memset(out, 0, sizeof *out);
    out->first_zero_row = -1;
    out->formation = POSENC_ANGLE_UNKNOWN;
    bool same = x->ndim == y->ndim && x->count == y->count;
    for (int i = 0; same && i < x->ndim; i++) same = x->shape[i] == y->shape[i];
    RETURN_ERROR_IF(!same || x->ndim < 2 || x->ndim > 3, err, POSENC_ERR_INVALID_ARGUMENT,
                    "RoPE input and output must have the same [T,D] or [T,H,D] shape, got rank %d (%zu "
                    "elements) and rank %d (%zu elements)", x->ndim, x->count, y->ndim, y->count);
    posenc_f64_table_ tx, ty;
    FORWARD_IF_ERROR(posenc_f64_table_from_array_(x, "RoPE input", &tx, err));
    posenc_status st = posenc_f64_table_from_array_(y, "RoPE output", &ty, err);
    if (st != POSENC_OK) return st;
    size_t T = x->shape[0], H = x->ndim == 3 ? x->shape[1] : 1, D = x->shape[x->ndim - 1];
    /* rotated channels: everything before the trailing run of untouched ones */
    size_t R = D;
    while (R > 0) {
        bool unchanged = true;
        for (size_t i = 0; i < T * H && unchanged; i++)
            unchanged = posenc_table_at_(&tx, i * D + R - 1) == posenc_table_at_(&ty, i * D + R - 1);
        if (!unchanged) break;
        R--;
    }
    /* pairs must lie inside the D channels: with D odd and the last channel
     * changed, rounding R up read channel D (heap overflow found by fuzz_analysis) */
    if (R % 2) R = R + 1 <= D ? R + 1 : R - 1;
    size_t K = R / 2;
    double *theta = NULL;
    unsigned char *valid = NULL;
    if (K == 0 || T < 3) goto done;
    double best_spread = INFINITY, best_amp = 0;
    posenc_layout best = POSENC_LAYOUT_INTERLEAVED;
    for (int l = 0; l < 2; l++) {
        posenc_layout layout = l ? POSENC_LAYOUT_HALF : POSENC_LAYOUT_INTERLEAVED;
        double sum_ratio = 0, lo = INFINITY, hi = 0;
        size_t n = 0;
        for (size_t i = 0; i < T * H; i++)
            for (size_t k = 0; k < K; k++) {
                size_t a = l ? k : 2 * k, b = l ? k + K : 2 * k + 1;
                double nx = hypot(posenc_table_at_(&tx, i * D + a), posenc_table_at_(&tx, i * D + b));
                if (nx < 1e-3) continue; /* too small to measure a ratio */
                double ratio = hypot(posenc_table_at_(&ty, i * D + a), posenc_table_at_(&ty, i * D + b)) / nx;
                sum_ratio += ratio, n++;
                if (ratio < lo) lo = ratio;
                if (ratio > hi) hi = ratio;
            }
        double amp = n ? sum_ratio / (double)n : 0;
        double spread = amp > 0 ? (hi - lo) / amp : INFINITY;
        if (spread < best_spread) best_spread = spread, best_amp = amp, best = layout;
    }
    if (!(best_spread < 1e-2)) goto done;
    theta = malloc(T * K * sizeof(double));
    valid = malloc(T);
    if (!theta || !valid) {
        st = posenc_fail_(err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %zu x %zu angles", T, K);
        goto done;
    }
    for (size_t t = 0; t < T; t++) {
        valid[t] = 1;
        for (size_t k = 0; k < K; k++) {
            size_t a = best == POSENC_LAYOUT_HALF ? k : 2 * k, b = best == POSENC_LAYOUT_HALF ? k + K : 2 * k + 1;
            double cross = 0, dot = 0;
            for (size_t h = 0; h < H; h++) {
                size_t row = (t * H + h) * D;
                double xa = posenc_table_at_(&tx, row + a), xb = posenc_table_at_(&tx, row + b);
                double ya = posenc_table_at_(&ty, row + a), yb = posenc_table_at_(&ty, row + b);
                cross += xa * yb - xb * ya;
                dot += xa * ya + xb * yb;
            }
            theta[t * K + k] = atan2(cross, dot);
            if (!isfinite(theta[t * K + k])) valid[t] = 0;
        }
    }
    /* Angles from cross/dot products carry a few float32 roundings of |y|,
     * relative to the pair norm: 16 * 2^-24 covers the peer's own rounding. A
     * rotation applied or stored in low precision also spreads the pair norms;
     * its angles are then as noisy as the norms, so the floor follows them. */
    st = posenc_fit_angles_(theta, valid, T, K, fmax(16 * 0x1p-24, best_spread), out, err);
    out->layout = best;
    out->amplitude = best_amp;
    out->pair_norm_error = best_spread;
    out->extra_channels = (int32_t)(D - R);
done:
    free(theta);
    free(valid);
    return st;
}

posenc_status posenc_rope_cache_to_table(const posenc_array *cos, const posenc_array *sin, posenc_array *out,
                                         int *out_repeat, posenc_error *err) {
    RETURN_IF_NULL(cos, err);
    RETURN_IF_NULL(sin, err);
    RETURN_IF_NULL(out, err);
    memset(out, 0, sizeof *out);
    posenc_f64_table_ c, s;
    FORWARD_IF_ERROR(posenc_f64_table_from_array_(cos, "cos cache", &c, err));
    posenc_status st = posenc_f64_table_from_array_(sin, "sin cache", &s, err);
    if (st != POSENC_OK) {
        return st;
    }
    if (c.rows != s.rows || c.cols != s.cols) {
        st = posenc_fail_(err, POSENC_ERR_INVALID_ARGUMENT, "cos cache is [%zu x %zu] but sin cache is [%zu x %zu]",
                          c.rows, c.cols, s.rows, s.cols);
        goto done;
    }
    /* which repetition do both caches show exactly? */
    size_t D = c.cols, K = D;
    int repeat = -1;
    bool half = D % 2 == 0, inter = D % 2 == 0;
    for (size_t r = 0; r < c.rows && (half || inter); r++)
        for (size_t k = 0; k < D / 2; k++) {
            size_t row = r * D;
#define CACHE_AT(t, i) posenc_table_at_(&(t), row + (i))
            half &= CACHE_AT(c, k) == CACHE_AT(c, k + D / 2) && CACHE_AT(s, k) == CACHE_AT(s, k + D / 2);
            inter &= CACHE_AT(c, 2 * k) == CACHE_AT(c, 2 * k + 1) && CACHE_AT(s, 2 * k) == CACHE_AT(s, 2 * k + 1);
#undef CACHE_AT
        }
    if (half || inter) K = D / 2, repeat = half ? POSENC_LAYOUT_HALF : POSENC_LAYOUT_INTERLEAVED;
    size_t shape[2] = {c.rows, 2 * K};
    /* keep the caches' float dtype: the fit's noise floor depends on it (copies are exact) */
    posenc_dtype dt = cos->dtype == POSENC_DTYPE_F32 || cos->dtype == POSENC_DTYPE_F16 || cos->dtype == POSENC_DTYPE_BF16
                          ? cos->dtype : POSENC_DTYPE_F64;
    st = posenc_array_create(out, dt, 2, shape, (size_t)-1, err);
    if (st != POSENC_OK) goto done;
    for (size_t r = 0; r < c.rows; r++)
        for (size_t k = 0; k < K; k++) {
            size_t src = repeat == POSENC_LAYOUT_INTERLEAVED ? 2 * k : k;
            posenc_store_real_(out->data, dt, r * 2 * K + k, posenc_table_at_(&s, r * D + src));
            posenc_store_real_(out->data, dt, r * 2 * K + K + k, posenc_table_at_(&c, r * D + src));
        }
    if (out_repeat) *out_repeat = repeat;
done:
    return st == POSENC_OK ? posenc_ok_(err) : st;
}
