/* charts.c: what each picture shows, computed from a table in the tool:
 * heat maps, surfaces, value-vs-channel curves, the wavelength spectrum,
 * similarity against distance, and per-position variance and norm. */
#include "render.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TWO_PI 6.283185307179586476925 /* C11 has no M_PI */

static cli_grid grid_of(const cli_table *t) { return (cli_grid){t->values, t->rows, t->cols}; }

int cli_draw_heatmap(const char *command, const cli_table *t, const cli_heatmap_style *style, bool svg,
                     size_t max_cells, cli_buffer *out) {
    cli_grid g = grid_of(t);
    cli_reduced r;
    int rc = cli_grid_reduce(command, &g, max_cells, max_cells, &r);
    if (rc != EXIT_OK) return rc;
    cli_report_reduction(command, "heatmap", &g, &r);
    char title[160], subtitle[240];
    snprintf(title, sizeof title, "%s: position x channel", t->name);
    int n = snprintf(subtitle, sizeof subtitle, "%s", t->about);
    if ((r.row_block > 1 || r.col_block > 1) && n > 0 && (size_t)n < sizeof subtitle)
        snprintf(subtitle + n, sizeof subtitle - (size_t)n, "; each cell = mean of %zu x %zu", r.row_block, r.col_block);
    cli_axes_text text = {title, subtitle, "channel", "position", 0, (double)t->first_position};
    rc = svg ? cli_heatmap_svg(command, &r, style, &text, out) : cli_heatmap_png_figure(command, &r, style, &text, out);
    cli_reduced_free(&r);
    return rc;
}

int cli_draw_surface(const char *command, const cli_table *t, cli_colormap map, cli_buffer *out) {
    cli_grid g = grid_of(t);
    cli_reduced r;
    /* a mesh denser than 64 x 64 is a solid blur of edges */
    int rc = cli_grid_reduce(command, &g, 64, 64, &r);
    if (rc != EXIT_OK) return rc;
    cli_report_reduction(command, "surface", &g, &r);
    char title[160], subtitle[240];
    snprintf(title, sizeof title, "%s: the table as a surface", t->name);
    snprintf(subtitle, sizeof subtitle, "%s%s", t->about,
             r.row_block > 1 || r.col_block > 1 ? " (block averages)" : "");
    cli_axes_text text = {title, subtitle, "channel", "position", 0, (double)t->first_position};
    rc = cli_surface_svg(command, &r, map, &text, out);
    cli_reduced_free(&r);
    return rc;
}

int cli_parse_rows(const char *command, const char *list, const cli_table *t, size_t *rows, size_t max,
                   size_t *count) {
    *count = 0;
    const char *p = list;
    while (*p) {
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (end == p || errno || (*end != ',' && *end != '\0'))
            return cli_fail(command, EXIT_USAGE, "e.g. --at 0,10,50", "--at must be a comma-separated list of positions, got '%s'",
                            list);
        if (v < t->first_position || (unsigned long long)(v - t->first_position) >= t->rows)
            return cli_fail(command, EXIT_USAGE, NULL, "position %lld is outside the table (positions %lld..%lld)", v,
                            (long long)t->first_position, (long long)(t->first_position + (int64_t)t->rows - 1));
        if (*count >= max) return cli_fail(command, EXIT_USAGE, NULL, "at most %zu positions per chart", max);
        rows[(*count)++] = (size_t)(v - t->first_position);
        p = *end ? end + 1 : end;
    }
    if (*count == 0) return cli_fail(command, EXIT_USAGE, "e.g. --at 0,10,50", "--at lists no position");
    return EXIT_OK;
}

int cli_draw_curves(const char *command, const cli_table *t, const size_t *rows, size_t count, cli_buffer *out) {
    if (count > 10) return cli_fail(command, EXIT_USAGE, NULL, "at most 10 positions per chart, got %zu", count);
    /* Interleaved sin/cos: neighbouring channels alternate between sin and cos, so one
     * line through all channels is a solid zigzag band at any real dim; draw the sin
     * (even) and cos (odd) channels as two smooth lines per position instead. */
    bool split = t->frequencies && t->layout == POSENC_LAYOUT_INTERLEAVED && t->cols % 2 == 0 && t->cols >= 4;
    size_t per_line = split ? t->cols / 2 : t->cols, lines = split ? 2 : 1;
    double *buf = malloc(sizeof(double) * per_line * (lines + lines * count));
    if (!buf) return cli_fail(command, EXIT_RUNTIME, NULL, "out of memory");
    cli_series series[20];
    char names[20][56];
    for (size_t l = 0; l < lines; l++) {
        double *x = buf + l * per_line;
        for (size_t j = 0; j < per_line; j++) x[j] = (double)(split ? 2 * j + l : j);
        for (size_t s = 0; s < count; s++) {
            size_t k = s * lines + l; /* legend order: p0 sin, p0 cos, p10 sin, ... */
            double *y = buf + lines * per_line + k * per_line;
            const double *row = t->values + rows[s] * t->cols;
            for (size_t j = 0; j < per_line; j++) y[j] = split ? row[2 * j + l] : row[j];
            snprintf(names[k], sizeof names[k], "position %lld%s", (long long)(t->first_position + (int64_t)rows[s]),
                     !split ? "" : l == 0 ? ", sin (even ch.)" : ", cos (odd ch.)");
            series[k] = (cli_series){names[k], x, y, per_line};
        }
    }
    char title[160];
    snprintf(title, sizeof title, "%s: values across channels", t->name);
    cli_chart ch = {.title = title, .subtitle = t->about, .xlabel = "channel", .ylabel = "value",
                    .series = series, .series_count = count * lines};
    int rc = cli_chart_svg(command, &ch, out);
    free(buf);
    return rc;
}

int cli_draw_spectrum(const char *command, const cli_table *t, cli_buffer *out) {
    if (!t->frequencies)
        return cli_fail(command, EXIT_USAGE, "draw it from encoding flags, e.g. posenc plot spectrum --dim 64 -o s.svg",
                        "'%s' carries no frequencies (a spectrum needs a sinusoidal or rotary encoding)", t->name);
    double *buf = malloc(sizeof(double) * t->pairs * 2);
    if (!buf) return cli_fail(command, EXIT_RUNTIME, NULL, "out of memory");
    double *k = buf, *wavelength = buf + t->pairs;
    for (size_t i = 0; i < t->pairs; i++) k[i] = (double)i, wavelength[i] = TWO_PI / t->frequencies[i];
    cli_series s = {"wavelength 2π/ω (positions)", k, wavelength, t->pairs};
    cli_mark marks[2] = {{(double)t->rows, "table length"}, {TWO_PI, "2π: shortest wavelength"}};
    char title[160];
    snprintf(title, sizeof title, "%s: wavelength of each sin/cos pair", t->name);
    cli_chart ch = {.title = title, .subtitle = "pairs above the 'table length' line never finish one turn inside the table",
                    .xlabel = "pair index k", .ylabel = "wavelength (positions, log scale)", .series = &s,
                    .series_count = 1, .ymarks = marks, .ymark_count = 2, .log_y = true};
    int rc = cli_chart_svg(command, &ch, out);
    free(buf);
    return rc;
}

static double dot(const double *a, const double *b, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

int cli_draw_similarity(const char *command, const cli_table *const *tables, size_t count, cli_buffer *out) {
    if (count == 0 || count > 10) return cli_fail(command, EXIT_USAGE, NULL, "1 to 10 tables per chart, got %zu", count);
    cli_series series[10];
    double *bufs[10] = {0};
    int rc = EXIT_OK;
    for (size_t s = 0; s < count && rc == EXIT_OK; s++) {
        const cli_table *t = tables[s];
        /* distances 0..D, averaging over up to 64 start positions keeps this O(64 * D * dim) */
        size_t maxd = t->rows - 1 < 1024 ? t->rows - 1 : 1024;
        bufs[s] = malloc(sizeof(double) * (maxd + 1) * 2 + sizeof(double) * t->rows);
        if (!bufs[s]) {
            rc = cli_fail(command, EXIT_RUNTIME, NULL, "out of memory");
            break;
        }
        double *x = bufs[s], *y = x + maxd + 1, *norms = y + maxd + 1;
        for (size_t i = 0; i < t->rows; i++) norms[i] = sqrt(dot(t->values + i * t->cols, t->values + i * t->cols, t->cols));
        for (size_t d = 0; d <= maxd; d++) {
            double sum = 0;
            size_t n = 0;
            for (size_t p = 0; p < 64 && p + d < t->rows; p++) { /* zero rows have no direction: skipped */
                double den = norms[p] * norms[p + d];
                if (den > 0) sum += dot(t->values + p * t->cols, t->values + (p + d) * t->cols, t->cols) / den, n++;
            }
            x[d] = (double)d;
            y[d] = n ? sum / (double)n : NAN;
        }
        series[s] = (cli_series){t->name, x, y, maxd + 1};
    }
    if (rc == EXIT_OK) {
        cli_mark zero = {0, "orthogonal"};
        cli_chart ch = {.title = "Cosine similarity of two positions against their distance",
                        .subtitle = "mean of cos(row p, row p+k) over start positions p < 64 (rows of zeros skipped)", .xlabel = "distance k (positions)",
                        .ylabel = "cosine similarity", .series = series, .series_count = count, .ymarks = &zero,
                        .ymark_count = 1};
        rc = cli_chart_svg(command, &ch, out);
    }
    for (size_t s = 0; s < count; s++) free(bufs[s]);
    return rc;
}

int cli_draw_row_stat(const char *command, const cli_table *const *tables, size_t count, bool norm, cli_buffer *out) {
    if (count == 0 || count > 10) return cli_fail(command, EXIT_USAGE, NULL, "1 to 10 tables per chart, got %zu", count);
    cli_series series[10];
    double *bufs[10] = {0};
    int rc = EXIT_OK;
    for (size_t s = 0; s < count; s++) {
        const cli_table *t = tables[s];
        bufs[s] = malloc(sizeof(double) * t->rows * 2);
        if (!bufs[s]) {
            rc = cli_fail(command, EXIT_RUNTIME, NULL, "out of memory");
            break;
        }
        double *x = bufs[s], *y = x + t->rows;
        for (size_t i = 0; i < t->rows; i++) {
            const double *row = t->values + i * t->cols;
            double mean = 0, sq = 0;
            for (size_t j = 0; j < t->cols; j++) mean += row[j];
            mean /= (double)t->cols;
            for (size_t j = 0; j < t->cols; j++) sq += norm ? row[j] * row[j] : (row[j] - mean) * (row[j] - mean);
            x[i] = (double)(t->first_position + (int64_t)i);
            y[i] = norm ? sqrt(sq) : sq / (double)t->cols;
        }
        series[s] = (cli_series){t->name, x, y, t->rows};
    }
    /* norms spanning more than 100x (index baseline vs unit-norm tables) share a log axis, so each stays visible */
    double lo = INFINITY, hi = 0;
    for (size_t s = 0; s < count && rc == EXIT_OK; s++)
        for (size_t i = 0; i < series[s].count; i++)
            if (series[s].y[i] > 0 && isfinite(series[s].y[i])) lo = fmin(lo, series[s].y[i]), hi = fmax(hi, series[s].y[i]);
    bool log_y = norm && hi > 100 * lo;
    if (rc == EXIT_OK) {
        cli_chart ch = {.title = norm ? "Length (L2 norm) of each position's vector" : "Variance across channels, per position",
                        .subtitle = norm ? "a constant norm means no position shouts louder than another"
                                         : "population variance of each row (the second article's health check)",
                        .xlabel = "position", .ylabel = norm ? (log_y ? "L2 norm (log scale; 0 not drawn)" : "L2 norm") : "variance",
                        .series = series, .series_count = count, .log_y = log_y};
        rc = cli_chart_svg(command, &ch, out);
    }
    for (size_t s = 0; s < count; s++) free(bufs[s]);
    return rc;
}
