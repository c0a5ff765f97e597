/* analysis_signal.c: `posenc signal`: given token embeddings and the model's
 * input embeddings, decide whether a position signal was added (first source
 * article section 5.2), how the tokens were scaled, how strong the signal is,
 * and whether it looks sinusoidal (fits the sin/cos pair model) or learned. */
#include "analysis_diff_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void posenc_signal_report_free(posenc_signal_report *r) {
    if (!r) return;
    posenc_sinusoid_fit_free(&r->fit);
    memset(r, 0, sizeof *r);
}

posenc_status posenc_detect_position_signal(const posenc_array *tokens, const posenc_array *inputs,
                                            posenc_signal_report *r, posenc_error *err) {
    RETURN_IF_NULL(r, err);
    memset(r, 0, sizeof *r);
    r->fit.first_zero_row = -1;
    posenc_f64_table_ t, x;
    FORWARD_IF_ERROR(posenc_f64_table_from_array_(tokens, "token embeddings", &t, err));
    posenc_status st = posenc_f64_table_from_array_(inputs, "input embeddings", &x, err);
    if (st != POSENC_OK) {
        posenc_f64_table_free_(&t);
        return st;
    }
    if (t.rows != x.rows || t.cols != x.cols) {
        st = posenc_fail_(err, POSENC_ERR_INVALID_ARGUMENT,
                          "shapes do not match: token embeddings are [%zu x %zu], input embeddings [%zu x %zu]",
                          t.rows, t.cols, x.rows, x.cols);
        goto done;
    }
    size_t n = t.rows * t.cols;
    double tt = 0, xt = 0, xx = 0, xmax = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(t.data[i]) || !isfinite(x.data[i])) {
            st = posenc_fail_(err, POSENC_ERR_INVALID_ARGUMENT, "non-finite value at row %zu, channel %zu of the %s",
                              i / t.cols, i % t.cols, isfinite(t.data[i]) ? "input embeddings" : "token embeddings");
            goto done;
        }
        tt += t.data[i] * t.data[i], xt += x.data[i] * t.data[i], xx += x.data[i] * x.data[i];
        if (fabs(x.data[i]) > xmax) xmax = fabs(x.data[i]);
    }
    /* least squares a in x = a t + s; snapped to 1 or sqrt(d) when within 1%
     * (the signal correlates weakly with the tokens, so a is slightly off) */
    double a = tt > 0 ? xt / tt : 0, sq = sqrt((double)t.cols);
    if (fabs(a - 1) < 0.01) a = 1;
    else if (fabs(a - sq) < 0.01 * sq) a = sq, r->scale_is_sqrt_dim = 1;
    r->token_scale = a;
    double *s = malloc(n * sizeof(double)), *mean = calloc(t.cols, sizeof(double));
    if (!s || !mean) {
        free(s), free(mean);
        st = posenc_fail_(err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate the residual");
        goto done;
    }
    double ss = 0;
    for (size_t i = 0; i < n; i++) s[i] = x.data[i] - a * t.data[i], ss += s[i] * s[i], mean[i % t.cols] += s[i];
    for (size_t c = 0; c < t.cols; c++) mean[c] /= (double)t.rows;
    double spread = 0;
    for (size_t i = 0; i < n; i++) spread += (s[i] - mean[i % t.cols]) * (s[i] - mean[i % t.cols]);
    r->signal_rms = sqrt(ss / (double)n);
    r->relative_residual = xx > 0 ? sqrt(ss / xx) : 0;
    r->signal_row_spread = ss > 0 ? sqrt(spread / ss) : 0;
    /* float32 inputs carry ~2^-24 relative noise: below 1e-5 there is no signal */
    r->present = r->relative_residual > 1e-5 && r->signal_row_spread > 0.01;
    if (r->present) {
        double amp = r->signal_rms * sqrt(2.0);
        double noise = 8 * 0x1p-24 * xmax / amp + posenc_angle_noise_for_dtype_(inputs->dtype);
        st = posenc_fit_table_f64_(s, t.rows, t.cols, noise, &r->fit, err);
        r->sinusoidal = st == POSENC_OK && r->fit.found && r->fit.pair_norm_error < 1e-2;
    }
    free(s), free(mean);
    if (st != POSENC_OK) goto done;
    char scale[96];
    snprintf(scale, sizeof scale, "tokens scaled by %.6g%s", a, r->scale_is_sqrt_dim ? " = sqrt(d), as in the tutorial" : "");
    if (!r->present && r->relative_residual <= 1e-5)
        snprintf(r->verdict, sizeof r->verdict, "no position signal: inputs = %.6g x tokens (relative residual %.2g); "
                 "RoPE/ALiBi/NoPE models add nothing at the input", a, r->relative_residual);
    else if (!r->present)
        snprintf(r->verdict, sizeof r->verdict, "a constant vector (rms %.3g) was added to every position: no "
                 "position dependence; %s", r->signal_rms, scale);
    else if (r->sinusoidal) {
        char preset[POSENC_DIFF_TEXT];
        posenc_describe_fit_(&r->fit, 0, preset, sizeof preset);
        snprintf(r->verdict, sizeof r->verdict, "a sinusoidal position signal of amplitude %.4g was added: %.150s; %.60s",
                 r->fit.amplitude, preset, scale);
    } else
        snprintf(r->verdict, sizeof r->verdict, "a learned-looking position signal (rms %.4g, no sin/cos pair "
                 "structure) was added; %s", r->signal_rms, scale);
done:
    posenc_f64_table_free_(&t);
    posenc_f64_table_free_(&x);
    if (st != POSENC_OK) {
        posenc_signal_report_free(r);
        return st;
    }
    return posenc_ok_(err);
}
