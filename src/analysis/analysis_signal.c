/* analysis_signal.c: `posenc signal`: given token embeddings and the model's
 * input embeddings, decide whether a position signal was added (first source
 * article section 5.2), how the tokens were scaled, how strong the signal is,
 * and whether it looks sinusoidal (fits the sin/cos pair model) or learned.
 * Returns codes and numbers (posenc_signal_verdict); the tool words them.
 *
 * Model: inputs[b, t] = a * tokens[b, t] + S(t). With one sequence a is the
 * least-squares fit over everything (S correlates weakly with the tokens, so a
 * is slightly off and snapped to 1 or sqrt(d) within 1%). With B >= 2
 * sequences a is fitted within each position, across the sequences, where S(t)
 * cancels: a = sum (x - mean_b x)(t - mean_b t) / sum (t - mean_b t)^2, and
 * S(t) = mean_b x - a mean_b t. (Flattening [B, T, D] to B*T rows, as before,
 * fitted a sinusoid that restarts every T rows and called it "learned".)
 *
 * Memory: the inputs are read in place, a row at a time; the working set is
 * S ([T, D]: float32 for one float32 sequence, else float64), the per-position
 * token mean for batches, and the fit's angles. */
#include "analysis_diff_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void posenc_signal_report_free(posenc_signal_report *r) {
    if (!r) return;
    posenc_sinusoid_fit_free(&r->fit);
    memset(r, 0, sizeof *r);
}

typedef struct {
    const posenc_array *tokens, *inputs;
    size_t sequences, positions, channels;
    double *row_t, *row_x; /* one row of each, as float64 */
} signal_inputs;

static void read_row(const signal_inputs *in, size_t b, size_t t) {
    size_t first = (b * in->positions + t) * in->channels;
    posenc_read_f64_(in->tokens, first, in->channels, in->row_t);
    posenc_read_f64_(in->inputs, first, in->channels, in->row_x);
}

/* A batch of one sequence [1, T, D] is the same data as [T, D]: the leading 1 is
 * dropped before shapes are compared (a compose output with tokens [T, D]). */
static int squeezed_first_dim(const posenc_array *a) {
    return a->ndim == 3 && a->shape[0] == 1 ? 1 : 0;
}

static posenc_status check_shapes(const posenc_array *tokens, const posenc_array *inputs, posenc_error *err) {
    RETURN_IF_NULL(tokens, err);
    RETURN_IF_NULL(inputs, err);
    RETURN_IF_NULL(tokens->data, err);
    RETURN_IF_NULL(inputs->data, err);
    int st = squeezed_first_dim(tokens), si = squeezed_first_dim(inputs);
    bool same = tokens->ndim - st == inputs->ndim - si;
    for (int i = 0; same && i < tokens->ndim - st; i++) same = tokens->shape[i + st] == inputs->shape[i + si];
    if (!same) {
        char a[96] = "", b[96] = "";
        for (int i = 0, n = 0; i < tokens->ndim && i < POSENC_MAX_DIMS; i++)
            n += snprintf(a + n, sizeof a - (size_t)n, "%s%zu", i ? " x " : "", tokens->shape[i]);
        for (int i = 0, n = 0; i < inputs->ndim && i < POSENC_MAX_DIMS; i++)
            n += snprintf(b + n, sizeof b - (size_t)n, "%s%zu", i ? " x " : "", inputs->shape[i]);
        return posenc_fail_(err, POSENC_ERR_INVALID_ARGUMENT,
                            "shapes do not match: token embeddings are [%s], input embeddings [%s]", a, b);
    }
    RETURN_ERROR_IF(tokens->ndim != 2 && tokens->ndim != 3, err, POSENC_ERR_INVALID_ARGUMENT,
                    "token and input embeddings must be [T, D] or [B, T, D], got rank %d", tokens->ndim);
    RETURN_ERROR_IF(posenc_dtype_size(tokens->dtype) == 0 || posenc_dtype_size(inputs->dtype) == 0, err,
                    POSENC_ERR_INVALID_ARGUMENT, "unknown dtype");
    RETURN_ERROR_IF(tokens->count == 0, err, POSENC_ERR_INVALID_ARGUMENT, "the embeddings are empty (shape has a 0)");
    return POSENC_OK;
}

posenc_status posenc_signal_detect(const posenc_array *tokens, const posenc_array *inputs,
                                   posenc_signal_report *r, posenc_error *err) {
    RETURN_IF_NULL(r, err);
    memset(r, 0, sizeof *r);
    r->fit.first_zero_row = -1;
    FORWARD_IF_ERROR(check_shapes(tokens, inputs, err));
    signal_inputs in = {tokens, inputs, tokens->ndim == 3 && inputs->ndim == 3 ? tokens->shape[0] : 1,
                        tokens->shape[tokens->ndim - 2],
                        tokens->shape[tokens->ndim - 1], NULL, NULL};
    size_t B = in.sequences, T = in.positions, D = in.channels, n = T * D;
    r->sequences = B, r->positions = T;
    /* S in float32 when one float32-or-narrower sequence is given: its rounding
     * (2^-24 relative) is inside the fit's noise floor, and it halves the memory */
    bool narrow = B == 1 && tokens->dtype != POSENC_DTYPE_F64 && inputs->dtype != POSENC_DTYPE_F64;
    double *s = narrow ? NULL : calloc(n, sizeof(double)), *mean_t = B > 1 ? calloc(n, sizeof(double)) : NULL;
    float *s32 = narrow ? malloc(n * sizeof(float)) : NULL;
#define S_AT(i) (s ? s[i] : (double)s32[i])
    in.row_t = malloc(2 * D * sizeof(double));
    in.row_x = in.row_t ? in.row_t + D : NULL;
    posenc_status st = POSENC_OK;
    if ((!s && !s32) || (B > 1 && !mean_t) || !in.row_t) {
        st = posenc_fail_(err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate the [%zu x %zu] signal", T, D);
        goto done;
    }
    /* pass 1: sums, finiteness, and per-position means over the sequences (s holds mean x for now) */
    double tt = 0, xt = 0, xx = 0, xmax = 0;
    for (size_t b = 0; b < B; b++)
        for (size_t t = 0; t < T; t++) {
            read_row(&in, b, t);
            for (size_t c = 0; c < D; c++) {
                double tv = in.row_t[c], xv = in.row_x[c];
                if (!isfinite(tv) || !isfinite(xv)) {
                    const char *which = isfinite(tv) ? "input embeddings" : "token embeddings";
                    st = B > 1 ? posenc_fail_(err, POSENC_ERR_INVALID_ARGUMENT,
                                              "non-finite value at sequence %zu, position %zu, channel %zu of the %s", b,
                                              t, c, which)
                               : posenc_fail_(err, POSENC_ERR_INVALID_ARGUMENT,
                                              "non-finite value at row %zu, channel %zu of the %s", t, c, which);
                    goto done;
                }
                tt += tv * tv, xt += xv * tv, xx += xv * xv;
                if (fabs(xv) > xmax) xmax = fabs(xv);
                if (mean_t) s[t * D + c] += xv / (double)B, mean_t[t * D + c] += tv / (double)B;
            }
        }
    /* the token scale: overall (one sequence) or within positions (several) */
    double num = xt, den = tt;
    if (mean_t) {
        for (size_t i = 0; i < n; i++) num -= (double)B * s[i] * mean_t[i], den -= (double)B * mean_t[i] * mean_t[i];
        if (!(den > 1e-12 * tt)) num = xt, den = tt; /* the same tokens in every sequence: no within-position spread */
    }
    double a = den > 0 ? num / den : 0, sq = sqrt((double)D);
    if (fabs(a - 1) < 0.01) a = 1;
    else if (fabs(a - sq) < 0.01 * sq) a = sq, r->scale_is_sqrt_dim = 1;
    r->token_scale = a;
    /* S(t) = mean x - a mean tokens (one sequence: x - a tokens) */
    if (mean_t) {
        for (size_t i = 0; i < n; i++) s[i] -= a * mean_t[i];
    } else {
        for (size_t t = 0; t < T; t++) {
            read_row(&in, 0, t);
            for (size_t c = 0; c < D; c++) {
                double v = in.row_x[c] - a * in.row_t[c];
                if (s) s[t * D + c] = v;
                else s32[t * D + c] = (float)v;
            }
        }
    }
    free(mean_t);
    mean_t = NULL;
    /* pass 2 (several sequences): how far each sequence's residual is from S(t) */
    double total = 0, apart = 0; /* sum over b,t,c of (x - a tok)^2 and of (x - a tok - S)^2 */
    for (size_t b = 0; b < B; b++)
        for (size_t t = 0; t < T; t++) {
            read_row(&in, b, t);
            for (size_t c = 0; c < D; c++) {
                double e = in.row_x[c] - a * in.row_t[c], d = e - S_AT(t * D + c);
                total += e * e, apart += d * d;
            }
        }
    double ss = 0, spread = 0;
    double *mean = in.row_t; /* reuse: mean row of S */
    memset(mean, 0, D * sizeof(double));
    for (size_t i = 0; i < n; i++) ss += S_AT(i) * S_AT(i), mean[i % D] += S_AT(i) / (double)T;
    for (size_t i = 0; i < n; i++) spread += (S_AT(i) - mean[i % D]) * (S_AT(i) - mean[i % D]);
    r->signal_rms = sqrt(ss / (double)n);
    r->relative_residual = xx > 0 ? sqrt(total / xx) : 0;
    r->signal_row_spread = ss > 0 ? sqrt(spread / ss) : 0;
    r->sequence_spread = B > 1 && ss > 0 ? sqrt(apart / ((double)B * ss)) : 0;
    /* float32 inputs carry ~2^-24 relative noise: below 1e-5 there is no signal */
    r->present = r->relative_residual > 1e-5 && r->signal_row_spread > 0.01;
    if (!r->present) {
        r->verdict = r->relative_residual <= 1e-5 ? POSENC_SIGNAL_NONE : POSENC_SIGNAL_CONSTANT;
    } else if (r->sequence_spread > 0.05) {
        r->verdict = POSENC_SIGNAL_PER_SEQUENCE;
    } else {
        double amp = r->signal_rms * sqrt(2.0);
        double noise = 8 * 0x1p-24 * xmax / amp + posenc_angle_noise_for_dtype_(inputs->dtype);
        posenc_array s_array = {s ? POSENC_DTYPE_F64 : POSENC_DTYPE_F32, 2, {T, D}, n, s ? (void *)s : (void *)s32};
        posenc_f64_table_ s_view;
        st = posenc_f64_table_from_array_(&s_array, "signal", &s_view, err);
        if (st == POSENC_OK) st = posenc_fit_table_f64_(&s_view, noise, &r->fit, err);
        r->sinusoidal = st == POSENC_OK && r->fit.found && r->fit.pair_norm_error < 1e-2;
        r->preset = r->sinusoidal ? posenc_sinusoid_fit_preset(&r->fit, 0) : POSENC_PRESET_NONE;
        r->verdict = r->sinusoidal ? POSENC_SIGNAL_SINUSOIDAL : POSENC_SIGNAL_LEARNED;
    }
#undef S_AT
done:
    free(s);
    free(s32);
    free(mean_t);
    free(in.row_t);
    if (st != POSENC_OK) {
        posenc_signal_report_free(r);
        return st;
    }
    return posenc_ok_(err);
}
