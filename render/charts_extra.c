/* charts_extra.c: pictures of the other families, computed with the library:
 * ALiBi and T5 bias maps and profiles, RoPE scaling bands, precision audits. */
#include "render.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TWO_PI 6.283185307179586476925 /* C11 has no M_PI */
#define MAX_BIAS_LEN 4096               /* a [len x len] map beyond this is only averaged away */

void cli_bias_request_default(cli_bias_request *q) {
    memset(q, 0, sizeof *q);
    q->heads = 8;
    q->max_bias = 8;
    q->len = 64;
    posenc_t5_params_default(&q->t5);
}

int cli_bias_table(const char *command, const cli_bias_request *q, cli_table *t) {
    memset(t, 0, sizeof *t);
    if (q->len < 1 || q->len > MAX_BIAS_LEN)
        return cli_fail(command, EXIT_USAGE, NULL, "--len must be in [1, %d] for a bias map, got %lld", MAX_BIAS_LEN,
                        (long long)q->len);
    size_t n = (size_t)q->len, count = n * n;
    posenc_error err = {0};
    posenc_positions pos = posenc_positions_range(0, n);
    t->values = malloc(sizeof(double) * count);
    float *row = malloc(sizeof(float) * n);
    int32_t *buckets = q->scheme == 1 ? malloc(sizeof(int32_t) * count) : NULL;
    if (!t->values || !row || (q->scheme == 1 && !buckets)) {
        free(row), free(buckets), cli_table_free(t);
        return cli_fail(command, EXIT_RUNTIME, NULL, "out of memory");
    }
    t->rows = t->cols = n;
    posenc_status st = POSENC_OK;
    if (q->scheme == 0) {
        float *slopes = malloc(sizeof(float) * (q->heads > 0 ? (size_t)q->heads : 1));
        if (q->head < 0 || q->head >= q->heads) {
            free(slopes), free(row), cli_table_free(t);
            return cli_fail(command, EXIT_USAGE, NULL, "--head must be in [0, %d), got %d", q->heads, q->head);
        }
        st = slopes ? posenc_alibi_slopes_f32(q->heads, q->max_bias, 0, 0, POSENC_MODE_PRECISE, slopes,
                                              (size_t)q->heads, &err)
                    : POSENC_ERR_OUT_OF_MEMORY;
        posenc_alibi_form form = q->symmetric ? POSENC_ALIBI_SYMMETRIC : POSENC_ALIBI_CAUSAL;
        for (size_t i = 0; i < n && st == POSENC_OK; i++) {
            st = posenc_alibi_bias_row_f32(slopes[q->head], form, (double)i, &pos, row, n, &err);
            for (size_t j = 0; j < n && st == POSENC_OK; j++)
                t->values[i * n + j] = (!q->symmetric && j > i) ? NAN : row[j]; /* future keys are masked */
        }
        if (st == POSENC_OK) {
            snprintf(t->name, sizeof t->name, "alibi head %d of %d", q->head, q->heads);
            snprintf(t->about, sizeof t->about, "ALiBi %s bias, slope 2^%g = %g, max_bias %g, %lld queries x keys%s",
                     q->symmetric ? "-m|i-j|" : "m(j-i)", log2(slopes[q->head]), slopes[q->head], q->max_bias,
                     (long long)q->len, q->symmetric ? "" : "; grey = future keys (masked)");
        }
        free(slopes);
    } else {
        st = posenc_t5_bucket_matrix_i32(&q->t5, &pos, &pos, buckets, count, &err);
        for (size_t i = 0; i < count && st == POSENC_OK; i++) t->values[i] = buckets[i];
        snprintf(t->name, sizeof t->name, "t5 buckets");
        snprintf(t->about, sizeof t->about, "T5 %s relative-position bucket of key - query, %d buckets, max_distance %d",
                 q->t5.bidirectional ? "bidirectional" : "unidirectional", q->t5.num_buckets, q->t5.max_distance);
    }
    free(row);
    free(buckets);
    if (st != POSENC_OK) {
        cli_table_free(t);
        return err.status ? cli_fail_status(command, &err) : cli_fail(command, EXIT_RUNTIME, NULL, "out of memory");
    }
    return EXIT_OK;
}

int cli_draw_bias_profile(const char *command, const cli_bias_request *q, cli_buffer *out) {
    posenc_error err = {0};
    int rc = EXIT_OK;
    if (q->scheme == 0) {
        int32_t shown = q->heads < 8 ? q->heads : 8;
        if (shown < 1) return cli_fail(command, EXIT_USAGE, NULL, "--heads must be >= 1, got %d", q->heads);
        double slopes[64];
        int32_t heads = q->heads < 64 ? q->heads : 64;
        if (posenc_alibi_slopes_f64(heads, q->max_bias, 0, q->heads, POSENC_MODE_PRECISE, slopes, (size_t)heads, &err) !=
            POSENC_OK)
            return cli_fail_status(command, &err);
        size_t n = (size_t)(q->len > 1 ? q->len : 2);
        double *x = malloc(sizeof(double) * n * (size_t)(shown + 1));
        if (!x) return cli_fail(command, EXIT_RUNTIME, NULL, "out of memory");
        cli_series series[8];
        char names[8][48];
        for (size_t k = 0; k < n; k++) x[k] = (double)k;
        for (int32_t h = 0; h < shown; h++) {
            /* spread the drawn heads over the schedule: first, ..., last */
            int32_t head = shown == 1 ? 0 : (int32_t)((int64_t)h * (q->heads - 1) / (shown - 1));
            double *y = x + n * (size_t)(h + 1);
            for (size_t k = 0; k < n; k++) y[k] = -slopes[head < 64 ? head : 63] * (double)k;
            snprintf(names[h], sizeof names[h], "head %d (m = %.4g)", head, slopes[head < 64 ? head : 63]);
            series[h] = (cli_series){names[h], x, y, n};
        }
        char sub[160];
        snprintf(sub, sizeof sub, "%d heads, max_bias %g: each head forgets distance at its own rate (m = 2^(-8h/H))",
                 q->heads, q->max_bias);
        cli_chart ch = {.title = "ALiBi: bias added to the attention score against distance", .subtitle = sub,
                        .xlabel = "distance i - j (tokens back)", .ylabel = "bias -m(i-j)", .series = series,
                        .series_count = (size_t)shown};
        rc = cli_chart_svg(command, &ch, out);
        free(x);
        return rc;
    }
    int64_t span = q->t5.max_distance * 2;
    size_t n = (size_t)(2 * span + 1);
    double *buf = malloc(sizeof(double) * n * 3);
    if (!buf) return cli_fail(command, EXIT_RUNTIME, NULL, "out of memory");
    double *x = buf, *bi = buf + n, *uni = buf + 2 * n;
    posenc_t5_params b = q->t5, u = q->t5;
    b.bidirectional = 1;
    u.bidirectional = 0;
    for (size_t i = 0; i < n && rc == EXIT_OK; i++) {
        int32_t kb = 0, ku = 0;
        x[i] = (double)((int64_t)i - span);
        if (posenc_t5_bucket(&b, (int64_t)i - span, &kb, &err) != POSENC_OK ||
            posenc_t5_bucket(&u, (int64_t)i - span, &ku, &err) != POSENC_OK)
            rc = cli_fail_status(command, &err);
        bi[i] = kb, uni[i] = ku;
    }
    if (rc == EXIT_OK) {
        cli_series series[2] = {{"bidirectional (encoder)", x, bi, n}, {"unidirectional (decoder)", x, uni, n}};
        cli_mark marks[2] = {{(double)-q->t5.max_distance, "-max_distance"}, {(double)q->t5.max_distance, "max_distance"}};
        char sub[160];
        snprintf(sub, sizeof sub, "%d buckets: exact for small distances, logarithmic up to max_distance %d, then one bucket",
                 q->t5.num_buckets, q->t5.max_distance);
        cli_chart ch = {.title = "T5: which learned bias each relative position uses", .subtitle = sub,
                        .xlabel = "relative position r = key - query", .ylabel = "bucket", .series = series,
                        .series_count = 2, .xmarks = marks, .xmark_count = 2};
        rc = cli_chart_svg(command, &ch, out);
    }
    free(buf);
    return rc;
}

int cli_draw_rope_bands(const char *command, int32_t head_dim, double base, posenc_rope_scaling scaling, double factor,
                        int64_t original_max, cli_buffer *out) {
    static const posenc_rope_scaling schemes[] = {POSENC_ROPE_LINEAR, POSENC_ROPE_NTK, POSENC_ROPE_YARN,
                                                  POSENC_ROPE_LLAMA3};
    posenc_error err = {0};
    posenc_rope_params p;
    posenc_rope_params_default(&p, head_dim);
    p.base = base;
    int32_t rotary = 0;
    if (posenc_rope_check(&p, &rotary, &err) != POSENC_OK) return cli_fail_status(command, &err);
    if (!(factor > 1)) return cli_fail(command, EXIT_USAGE, NULL, "--factor must be > 1 to draw scaling, got %g", factor);
    /* the extended context is an integer position count */
    if (!((double)original_max * factor < 0x1p62))
        return cli_fail(command, EXIT_USAGE, NULL, "--factor %g x --original-max %lld = %g positions, must be < 2^62",
                        factor, (long long)original_max, (double)original_max * factor);
    size_t pairs = (size_t)rotary / 2;
    double *buf = malloc(sizeof(double) * pairs * 6);
    if (!buf) return cli_fail(command, EXIT_RUNTIME, NULL, "out of memory");
    double *plain = buf, *wavelength = buf + pairs, *ratio[4] = {buf + 2 * pairs, buf + 3 * pairs, buf + 4 * pairs,
                                                                buf + 5 * pairs};
    int rc = EXIT_OK;
    if (posenc_rope_frequencies(&p, 0, plain, pairs, NULL, &err) != POSENC_OK) rc = cli_fail_status(command, &err);
    for (size_t k = 0; k < pairs; k++) wavelength[k] = TWO_PI / plain[k];
    int selected = -1;
    cli_series series[4];
    for (int s = 0; s < 4 && rc == EXIT_OK; s++) {
        posenc_rope_params q = p;
        q.scaling = schemes[s];
        q.factor = factor;
        q.original_max_position = original_max;
        if (posenc_rope_frequencies(&q, (int64_t)(original_max * factor), ratio[s], pairs, NULL, &err) != POSENC_OK) {
            rc = cli_fail_status(command, &err);
            break;
        }
        for (size_t k = 0; k < pairs; k++) ratio[s][k] /= plain[k];
        series[s] = (cli_series){posenc_rope_scaling_name(schemes[s]), wavelength, ratio[s], pairs};
        if (schemes[s] == scaling) selected = s;
    }
    if (rc == EXIT_OK && selected < 0)
        rc = cli_fail(command, EXIT_USAGE, "choose linear, ntk, yarn or llama3", "no scaling bands for --scaling %s",
                      posenc_rope_scaling_name(scaling));
    cli_band bands[3 * 64];
    size_t band_count = 0;
    static const char *const tone_names[] = {"kept", "blended", "interpolated"};
    for (size_t k = 0; k < pairs && rc == EXIT_OK; k++) {
        double r = ratio[selected][k];
        int tone = fabs(r - 1) < 1e-9 ? 0 : fabs(r * factor - 1) < 1e-9 ? 2 : 1;
        /* a band edge sits halfway (geometrically) between two pairs' wavelengths */
        double lo = k == 0 ? wavelength[0] : sqrt(wavelength[k - 1] * wavelength[k]);
        double hi = k + 1 == pairs ? wavelength[k] : sqrt(wavelength[k] * wavelength[k + 1]);
        if (band_count && bands[band_count - 1].tone == tone) bands[band_count - 1].x1 = hi;
        else if (band_count < sizeof bands / sizeof *bands) bands[band_count++] = (cli_band){lo, hi, tone_names[tone], tone};
    }
    if (rc == EXIT_OK) {
        char trained[64], extended[64], title[128], sub[200];
        snprintf(trained, sizeof trained, "trained %lld", (long long)original_max);
        snprintf(extended, sizeof extended, "extended %lld", (long long)(original_max * factor));
        cli_mark marks[2] = {{(double)original_max, trained}, {original_max * factor, extended}};
        snprintf(title, sizeof title, "RoPE scaling: what each pair's frequency is multiplied by (factor %g)", factor);
        snprintf(sub, sizeof sub,
                 "head_dim %d, base %g; bands: %s's kept / blended / interpolated pairs; x = the pair's original wavelength",
                 head_dim, base, posenc_rope_scaling_name(scaling));
        cli_chart ch = {.title = title, .subtitle = sub, .xlabel = "wavelength 2π/ω of the pair (positions, log scale)",
                        .ylabel = "scaled ω / original ω", .series = series, .series_count = 4, .bands = bands,
                        .band_count = band_count, .xmarks = marks, .xmark_count = 2, .log_x = true};
        rc = cli_chart_svg(command, &ch, out);
    }
    free(buf);
    return rc;
}

static void html_position(cli_buffer *b, int64_t p) {
    if (p < 0) cli_buffer_puts(b, "<td>none</td>");
    else cli_buffer_printf(b, "<td>%lld</td>", (long long)p);
}

int cli_draw_precision(const char *command, const posenc_sinusoid_params *params, int64_t max_pos, cli_buffer *svg,
                       cli_buffer *html) {
    static const posenc_dtype dtypes[3] = {POSENC_DTYPE_F32, POSENC_DTYPE_BF16, POSENC_DTYPE_F16};
    posenc_precision_report reports[3];
    memset(reports, 0, sizeof reports);
    posenc_error err = {0};
    int rc = EXIT_OK;
    for (int d = 0; d < 3 && rc == EXIT_OK; d++)
        if (posenc_precision_audit(params, dtypes[d], max_pos, &reports[d], &err) != POSENC_OK)
            rc = cli_fail_status(command, &err);
    double *x = rc == EXIT_OK ? malloc(sizeof(double) * (size_t)reports[0].pairs) : NULL;
    if (rc == EXIT_OK && !x) rc = cli_fail(command, EXIT_RUNTIME, NULL, "out of memory");
    if (rc == EXIT_OK && svg) {
        for (int32_t k = 0; k < reports[0].pairs; k++) x[k] = k;
        cli_series series[3];
        for (int d = 0; d < 3; d++)
            series[d] = (cli_series){posenc_dtype_name(dtypes[d]), x, reports[d].angle_error, (size_t)reports[d].pairs};
        char sub[200];
        snprintf(sub, sizeof sub,
                 "angle p·ω formed in each dtype, positions 0..%lld, dim %d, base %g; zero error (exact) is not drawn",
                 (long long)max_pos, params->dim, params->base);
        cli_mark marks[1] = {{0.1, "0.1 rad: the pair's direction is visibly wrong"}};
        cli_chart ch = {.title = "Precision audit: worst angle error of each sin/cos pair", .subtitle = sub,
                        .xlabel = "pair index k (fast -> slow)", .ylabel = "worst |angle error| (radians, log scale)",
                        .series = series, .series_count = 3, .ymarks = marks, .ymark_count = 1, .log_y = true};
        rc = cli_chart_svg(command, &ch, svg);
    }
    if (rc == EXIT_OK && html) {
        cli_buffer_puts(html, "<table class=\"stats\"><tr><th>dtype</th><th>first inexact position</th>"
                              "<th>first overflow</th><th>first repeated angle vector</th><th>first repeated table row</th>"
                              "<th>logit error at max position (angles in dtype)</th>"
                              "<th>logit error (table stored in dtype)</th></tr>\n");
        for (int d = 0; d < 3; d++) {
            const posenc_precision_report *r = &reports[d];
            cli_buffer_printf(html, "<tr><td>%s</td>", posenc_dtype_name(dtypes[d]));
            if (r->first_inexact_position < 0) cli_buffer_puts(html, "<td>none</td>");
            else cli_buffer_printf(html, "<td>%lld (becomes %.17g)</td>", (long long)r->first_inexact_position,
                                   r->first_inexact_rounds_to);
            html_position(html, r->first_overflow_position);
            if (r->first_angle_collision < 0) cli_buffer_puts(html, "<td>none</td>");
            else cli_buffer_printf(html, "<td>%lld = %lld</td>", (long long)r->first_angle_collision,
                                   (long long)r->angle_collision_with);
            if (r->first_table_collision < 0)
                cli_buffer_printf(html, "<td>none up to %lld</td>", (long long)r->table_search_limit);
            else cli_buffer_printf(html, "<td>%lld = %lld</td>", (long long)r->first_table_collision,
                                   (long long)r->table_collision_with);
            cli_buffer_printf(html, "<td>%.3g</td><td>%.3g</td></tr>\n", r->logit_error_angle, r->logit_error_table);
        }
        cli_buffer_printf(html, "</table>\n<p class=\"note\">Positions 0..%lld, dim %d, base %g. Logit error: unit query "
                                "at the max position against a unit key at 0.</p>\n",
                          (long long)max_pos, params->dim, params->base);
    }
    free(x);
    for (int d = 0; d < 3; d++) posenc_precision_report_free(&reports[d]);
    return rc;
}

int cli_draw_rope_long(const char *command, const cli_table *t, cli_buffer *out) {
    if (!t->rope_long_frequencies || t->rope_long_context < 2 || t->pairs == 0)
        return cli_fail(command, EXIT_USAGE, NULL, "'%s' has no long-context frequencies to draw", t->name);
    /* three pairs whose unscaled wavelength is nearest L0/4, L0 and 4 L0: below,
     * at and beyond the trained context, where scaling schemes differ most */
    double l0 = t->rope_original_max > 0 ? (double)t->rope_original_max : (double)t->rope_long_context / 4;
    double rotary = 2.0 * (double)t->pairs;
    size_t chosen[3], count = 0;
    const double targets[3] = {l0 / 4, l0, 4 * l0};
    for (size_t i = 0; i < 3; i++) {
        size_t best = 0;
        double best_gap = INFINITY;
        for (size_t k = 0; k < t->pairs; k++) {
            double wavelength = 6.283185307179586 * pow(t->rope_base, 2.0 * (double)k / rotary);
            double gap = fabs(log(wavelength / targets[i]));
            if (gap < best_gap) best_gap = gap, best = k;
        }
        if (count == 0 || chosen[count - 1] != best) chosen[count++] = best;
    }
    /* turns made by position p, p w / 2 pi, on log-log axes: every pair is a line of
     * slope 1, and a scaled pair lies below its unscaled line by its scale factor */
    enum { SAMPLES = 400 };
    double first = 16, last = (double)t->rope_long_context;
    if (last <= first) first = 1;
    double *buf = malloc(sizeof(double) * SAMPLES * (1 + 2 * count));
    if (!buf) return cli_fail(command, EXIT_RUNTIME, NULL, "out of memory");
    double *x = buf;
    for (size_t i = 0; i < SAMPLES; i++) x[i] = first * pow(last / first, (double)i / (SAMPLES - 1));
    cli_series series[6];
    char names[6][48];
    for (size_t c = 0; c < count; c++) {
        size_t k = chosen[c];
        double scaled = t->rope_long_frequencies[k], plain = pow(t->rope_base, -2.0 * (double)k / rotary);
        double *yp = buf + SAMPLES * (1 + 2 * c), *ys = yp + SAMPLES;
        for (size_t i = 0; i < SAMPLES; i++) yp[i] = x[i] * plain / 6.283185307179586, ys[i] = x[i] * scaled / 6.283185307179586;
        snprintf(names[2 * c], sizeof names[2 * c], "pair %zu unscaled", k);
        snprintf(names[2 * c + 1], sizeof names[2 * c + 1], "pair %zu model (x%.3g)", k, scaled / plain);
        series[2 * c] = (cli_series){names[2 * c], x, yp, SAMPLES};
        series[2 * c + 1] = (cli_series){names[2 * c + 1], x, ys, SAMPLES};
    }
    cli_mark xmarks[2] = {{l0, "trained context"}, {last, "longest context"}};
    cli_mark ymarks[1] = {{1, "one full turn"}};
    char title[160];
    snprintf(title, sizeof title, "%s: turns of each pair up to its longest context", t->name);
    cli_chart ch = {.title = title,
                    .subtitle = "p w / 2 pi for pairs below, at and beyond the trained context; model = the config's scaled frequencies",
                    .xlabel = "position p (log scale)", .ylabel = "turns p w / 2 pi (log scale)",
                    .series = series, .series_count = 2 * count, .xmarks = t->rope_original_max > 0 ? xmarks : xmarks + 1,
                    .xmark_count = t->rope_original_max > 0 ? 2 : 1, .ymarks = ymarks, .ymark_count = 1,
                    .log_x = true, .log_y = true, .width = 900, .height = 460};
    int rc = cli_chart_svg(command, &ch, out);
    free(buf);
    return rc;
}
