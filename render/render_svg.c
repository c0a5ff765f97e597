/* render_svg.c: SVG charts written by hand: line charts (axes, ticks, labels,
 * legend, title, shaded bands, reference lines), labelled heat maps, and a
 * 3-D surface drawn as a projected mesh. Every SVG is standalone and also
 * valid inline in HTML (no ids, so several can share one page). */
#include "render.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                      "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};
static const char *const band_fill[] = {"#2ca02c", "#ff9f1c", "#d62728"};
static const char font[] = "font-family=\"DejaVu Sans,Helvetica,Arial,sans-serif\"";

/* "Nice" tick step (1, 2, 5 x 10^k) giving about `target` ticks over span. */
static double nice_step(double span, int target) {
    if (!isfinite(span)) span = DBL_MAX; /* a range across most of the doubles */
    double raw = span / target, mag = pow(10, floor(log10(raw))), f = raw / mag;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

size_t cli_axis_ticks(double lo, double hi, double step, double *ticks, size_t max) {
    size_t n = 0;
    if (!(step > 0) || !isfinite(step) || !isfinite(lo) || !isfinite(hi)) return 0;
    /* tick k is (first + k) x step, counted with an integer: `v += step` never
     * advances once step is below v's precision (a constant 1e16 table) */
    double first = ceil(lo / step - 1e-9);
    for (int k = 0; k < CLI_MAX_TICKS * 4 && n < max; k++) {
        double v = (first + k) * step;
        if (!(v <= hi + step * 1e-9) || !isfinite(v)) break; /* near DBL_MAX, hi + step*1e-9 is inf */
        if (n && v <= ticks[n - 1]) continue; /* first + k rounded to the previous one */
        ticks[n++] = v;
    }
    return n;
}

/* Shortest label for a tick on a grid of `step` ("0.25", "1e-06", "4096"). */
static void tick_label(char *out, size_t n, double v, double step) {
    if (fabs(v) < step * 1e-9) v = 0;
    double a = fabs(v);
    if (v != 0 && (a >= 1e6 || a < 1e-3)) {
        snprintf(out, n, "%.3g", v);
        return;
    }
    int decimals = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
    if (decimals > 6) decimals = 6;
    snprintf(out, n, "%.*f", decimals, v);
}

typedef struct {
    double lo, hi;   /* data-space range (log10 of it on a log axis) */
    double p0, p1;   /* pixel range */
    bool log;
} axis_map;

static double to_px(const axis_map *a, double v) {
    double u = a->log ? log10(v) : v;
    return a->p0 + cli_unit(u, a->lo, a->hi) * (a->p1 - a->p0);
}

static void widen(double *lo, double *hi, bool log) {
    if (!(*lo <= *hi)) *lo = 0, *hi = 1;
    if (*lo == *hi) {
        double d = log ? 0.5 : (fabs(*lo) > 0 ? fabs(*lo) * 0.1 : 0.5);
        *lo -= d, *hi += d;
        /* a value near DBL_MAX widens past it: keep the range finite */
        *lo = fmax(*lo, -DBL_MAX), *hi = fmin(*hi, DBL_MAX);
    }
}

/* Ticks and labels for one axis; horizontal axes put labels below, vertical left. */
static void draw_axis(cli_buffer *b, const axis_map *a, bool horizontal, double cross, double other0,
                      double other1, const char *cls) {
    cli_buffer_printf(b, "<g class=\"axis %s\">\n", cls);
    double lo = a->lo, hi = a->hi;
    double step = a->log ? 1 : nice_step(hi - lo, horizontal ? 8 : 6);
    if (a->log && hi - lo > 12) step = ceil((hi - lo) / 8);
    double ticks[CLI_MAX_TICKS];
    size_t count = cli_axis_ticks(lo, hi, step, ticks, CLI_MAX_TICKS);
    for (size_t i = 0; i < count; i++) {
        double t = ticks[i];
        double v = a->log ? pow(10, t) : t;
        double px = a->p0 + cli_unit(t, lo, hi) * (a->p1 - a->p0);
        char label[48];
        tick_label(label, sizeof label, v, a->log ? v : step);
        if (horizontal)
            cli_buffer_printf(b,
                              "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#e4e4e4\"/>"
                              "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#333\"/>"
                              "<text class=\"tick\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\" font-size=\"11\">%s</text>\n",
                              px, other0, px, other1, px, cross, px, cross + 5, px, cross + 17, label);
        else
            cli_buffer_printf(b,
                              "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#e4e4e4\"/>"
                              "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#333\"/>"
                              "<text class=\"tick\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\" font-size=\"11\">%s</text>\n",
                              other0, px, other1, px, cross - 5, px, cross, px, cross - 8, px + 4, label);
    }
    cli_buffer_puts(b, "</g>\n");
}

static void draw_titles(cli_buffer *b, int width, const char *title, const char *subtitle) {
    if (title) {
        cli_buffer_printf(b, "<text class=\"title\" x=\"%d\" y=\"22\" text-anchor=\"middle\" font-size=\"16\" font-weight=\"bold\">",
                          width / 2);
        cli_buffer_escape(b, title);
        cli_buffer_puts(b, "</text>\n");
    }
    if (subtitle) {
        cli_buffer_printf(b, "<text class=\"subtitle\" x=\"%d\" y=\"40\" text-anchor=\"middle\" font-size=\"12\" fill=\"#555\">",
                          width / 2);
        cli_buffer_escape(b, subtitle);
        cli_buffer_puts(b, "</text>\n");
    }
}

static void draw_axis_labels(cli_buffer *b, double x0, double x1, double y0, double y1, const char *xlabel,
                             const char *ylabel) {
    if (xlabel) {
        cli_buffer_printf(b, "<text class=\"xlabel\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"13\">",
                          (x0 + x1) / 2, y1 + 38);
        cli_buffer_escape(b, xlabel);
        cli_buffer_puts(b, "</text>\n");
    }
    if (ylabel) {
        cli_buffer_printf(b,
                          "<text class=\"ylabel\" transform=\"translate(%.1f %.1f) rotate(-90)\" text-anchor=\"middle\" "
                          "font-size=\"13\">",
                          x0 - 52, (y0 + y1) / 2);
        cli_buffer_escape(b, ylabel);
        cli_buffer_puts(b, "</text>\n");
    }
}

static bool usable(double v, bool log) { return isfinite(v) && (!log || v > 0); }

/* Series s lies on an earlier series (same x, every y within 1.5 px on the plot):
 * return that one's index so s is drawn dashed on top of it and the legend says
 * so, else SIZE_MAX. Two lines in one place would otherwise show only the last. */
static size_t overlapped_series(const cli_chart *ch, const axis_map *ay, size_t s) {
    const cli_series *a = &ch->series[s];
    for (size_t j = 0; j < s; j++) {
        const cli_series *o = &ch->series[j];
        if (o->count != a->count || a->count == 0) continue;
        bool same = true;
        for (size_t i = 0; i < a->count && same; i++) {
            bool ua = usable(a->y[i], ch->log_y), uo = usable(o->y[i], ch->log_y);
            same = a->x[i] == o->x[i] && ua == uo && (!ua || fabs(to_px(ay, a->y[i]) - to_px(ay, o->y[i])) < 1.5);
        }
        if (same) return j;
    }
    return SIZE_MAX;
}

int cli_chart_svg(const char *command, const cli_chart *ch, cli_buffer *b) {
    int width = ch->width ? ch->width : 760, height = ch->height ? ch->height : 420;
    double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
    size_t points = 0;
    for (size_t s = 0; s < ch->series_count; s++)
        for (size_t i = 0; i < ch->series[s].count; i++) {
            double x = ch->series[s].x[i], y = ch->series[s].y[i];
            if (!usable(x, ch->log_x) || !usable(y, ch->log_y)) continue;
            xlo = fmin(xlo, x), xhi = fmax(xhi, x), ylo = fmin(ylo, y), yhi = fmax(yhi, y);
            points++;
        }
    if (points == 0)
        return cli_fail(command, EXIT_RUNTIME, NULL, "chart '%s' has no finite%s point to draw",
                        ch->title ? ch->title : "", ch->log_y || ch->log_x ? " positive" : "");
    for (size_t i = 0; i < ch->band_count; i++) {
        if (usable(ch->bands[i].x0, ch->log_x)) xlo = fmin(xlo, ch->bands[i].x0);
        if (usable(ch->bands[i].x1, ch->log_x)) xhi = fmax(xhi, ch->bands[i].x1);
    }
    for (size_t i = 0; i < ch->xmark_count; i++)
        if (usable(ch->xmarks[i].value, ch->log_x)) xlo = fmin(xlo, ch->xmarks[i].value), xhi = fmax(xhi, ch->xmarks[i].value);
    for (size_t i = 0; i < ch->ymark_count; i++)
        if (usable(ch->ymarks[i].value, ch->log_y)) ylo = fmin(ylo, ch->ymarks[i].value), yhi = fmax(yhi, ch->ymarks[i].value);
    if (ch->log_x) xlo = log10(xlo), xhi = log10(xhi);
    if (ch->log_y) ylo = log10(ylo), yhi = log10(yhi);
    widen(&xlo, &xhi, ch->log_x);
    widen(&ylo, &yhi, ch->log_y);
    double pad = (yhi / 2 - ylo / 2) * 0.1; /* 5% of the range, which may exceed DBL_MAX */
    ylo = fmax(ylo - pad, -DBL_MAX), yhi = fmin(yhi + pad, DBL_MAX);
    bool legend = ch->series_count > 1; /* one series: the title names it */
    double y0 = ch->subtitle ? 52 : 36, y1 = height - 52;
    axis_map ay = {ylo, yhi, y1, y0, ch->log_y};
    size_t *under = malloc(sizeof *under * (ch->series_count ? ch->series_count : 1));
    if (!under) return cli_fail(command, EXIT_RUNTIME, NULL, "out of memory while drawing");
    size_t longest = 0;
    for (size_t s = 0; s < ch->series_count; s++) {
        under[s] = overlapped_series(ch, &ay, s);
        size_t n = ch->series[s].name ? strlen(ch->series[s].name) : 0;
        if (under[s] != SIZE_MAX && ch->series[under[s]].name) n += 12 + strlen(ch->series[under[s]].name);
        if (n > longest) longest = n;
    }
    double legend_w = 52 + 6.8 * (double)(longest < 12 ? 12 : longest > 40 ? 40 : longest);
    double x0 = 72, x1 = width - (legend ? legend_w : 24);
    axis_map ax = {xlo, xhi, x0, x1, ch->log_x};

    cli_buffer_printf(b,
                      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"posenc-chart\" width=\"%d\" height=\"%d\" "
                      "viewBox=\"0 0 %d %d\" %s>\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
                      width, height, width, height, font);
    draw_titles(b, width, ch->title, ch->subtitle);
    for (size_t i = 0; i < ch->band_count; i++) {
        const cli_band *bd = &ch->bands[i];
        double a = to_px(&ax, fmax(bd->x0, ch->log_x ? pow(10, xlo) : xlo)), z = to_px(&ax, bd->x1);
        cli_buffer_printf(b,
                          "<g class=\"band\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
                          "fill-opacity=\"0.14\"/><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"11\" "
                          "fill=\"%s\">",
                          a, y0, fmax(z - a, 0.5), y1 - y0, band_fill[bd->tone % 3], (a + z) / 2, y0 + 14,
                          band_fill[bd->tone % 3]);
        cli_buffer_escape(b, bd->label ? bd->label : "");
        cli_buffer_puts(b, "</text></g>\n");
    }
    draw_axis(b, &ax, true, y1, y0, y1, "x");
    draw_axis(b, &ay, false, x0, x0, x1, "y");
    cli_buffer_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#333\"/>\n", x0,
                      y0, x1 - x0, y1 - y0);
    for (size_t i = 0; i < ch->xmark_count + ch->ymark_count; i++) {
        bool vertical = i < ch->xmark_count;
        const cli_mark *m = vertical ? &ch->xmarks[i] : &ch->ymarks[i - ch->xmark_count];
        if (!usable(m->value, vertical ? ch->log_x : ch->log_y)) continue;
        double p = to_px(vertical ? &ax : &ay, m->value);
        if (vertical)
            cli_buffer_printf(b, "<g class=\"mark\"><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\" "
                                 "stroke-dasharray=\"5 4\"/><text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"#444\">",
                              p, y0, p, y1, p + 4, y1 - 8);
        else
            cli_buffer_printf(b, "<g class=\"mark\"><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\" "
                                 "stroke-dasharray=\"5 4\"/><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"11\" fill=\"#444\">",
                              x0, p, x1, p, x1 - 6, p - 4);
        cli_buffer_escape(b, m->label ? m->label : "");
        cli_buffer_puts(b, "</text></g>\n");
    }
    /* more points than pixels only bloats the file: draw every stride-th (and say so) */
    size_t most = 0;
    for (size_t s = 0; s < ch->series_count; s++) most = ch->series[s].count > most ? ch->series[s].count : most;
    size_t stride = most > 4000 ? (most + 3999) / 4000 : 1;
    if (stride > 1)
        cli_buffer_printf(b, "<text class=\"reduction\" x=\"%.1f\" y=\"%d\" text-anchor=\"end\" font-size=\"11\" "
                             "fill=\"#555\">1 point in %zu drawn (of %zu)</text>\n",
                          x1, height - 8, stride, most);
    for (size_t s = 0; s < ch->series_count; s++) {
        const cli_series *se = &ch->series[s];
        const char *color = palette[s % 10];
        cli_buffer_puts(b, "<path class=\"series\" data-name=\"");
        cli_buffer_escape(b, se->name ? se->name : "");
        cli_buffer_printf(b, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"%s\" stroke-linejoin=\"round\"%s d=\"", color,
                          under[s] != SIZE_MAX ? "2.2" : "1.8", under[s] != SIZE_MAX ? " stroke-dasharray=\"7 6\"" : "");
        bool pen = false;
        for (size_t i = 0; i < se->count; i += (i + stride < se->count || i + 1 == se->count) ? stride : se->count - 1 - i) {
            if (!usable(se->x[i], ch->log_x) || !usable(se->y[i], ch->log_y)) {
                pen = false; /* a gap, never a line through a missing value */
                continue;
            }
            cli_buffer_printf(b, "%c%.2f %.2f ", pen ? 'L' : 'M', to_px(&ax, se->x[i]), to_px(&ay, se->y[i]));
            pen = true;
        }
        cli_buffer_puts(b, "\"/>\n");
        if (se->count <= 40) /* few points: show them */
            for (size_t i = 0; i < se->count; i++)
                if (usable(se->x[i], ch->log_x) && usable(se->y[i], ch->log_y))
                    cli_buffer_printf(b, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"2.6\" fill=\"%s\"/>", to_px(&ax, se->x[i]),
                                      to_px(&ay, se->y[i]), color);
    }
    if (legend) {
        cli_buffer_puts(b, "<g class=\"legend\">\n");
        for (size_t s = 0; s < ch->series_count && s < 24; s++) {
            double y = y0 + 10 + 18.0 * (double)s;
            cli_buffer_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"3\"%s/>"
                                 "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\">",
                              x1 + 12, y, x1 + 34, y, palette[s % 10],
                              under[s] != SIZE_MAX ? " stroke-dasharray=\"5 3\"" : "", x1 + 40, y + 4);
            cli_buffer_escape(b, ch->series[s].name ? ch->series[s].name : "");
            if (under[s] != SIZE_MAX) {
                cli_buffer_puts(b, " (overlaps ");
                cli_buffer_escape(b, ch->series[under[s]].name ? ch->series[under[s]].name : "");
                cli_buffer_puts(b, ")");
            }
            cli_buffer_puts(b, "</text>\n");
        }
        cli_buffer_puts(b, "</g>\n");
    }
    free(under);
    draw_axis_labels(b, x0, x1, y0, y1, ch->xlabel, ch->ylabel);
    cli_buffer_puts(b, "</svg>\n");
    return b->failed ? cli_fail(command, EXIT_RUNTIME, NULL, "out of memory while drawing") : EXIT_OK;
}

/* Vertical colorbar as stacked rects (gradients would need document-unique ids). */
static void draw_colorbar(cli_buffer *b, cli_colormap map, double lo, double hi, double x, double y0, double y1) {
    cli_buffer_puts(b, "<g class=\"colorbar\">\n");
    const int steps = 64;
    for (int i = 0; i < steps; i++) {
        unsigned char c[3];
        cli_colormap_rgb(map, 1.0 - (i + 0.5) / steps, c);
        double ya = y0 + (y1 - y0) * i / steps;
        cli_buffer_printf(b, "<rect x=\"%.1f\" y=\"%.2f\" width=\"16\" height=\"%.2f\" fill=\"#%02x%02x%02x\"/>", x, ya,
                          (y1 - y0) / steps + 0.3, c[0], c[1], c[2]);
    }
    cli_buffer_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"16\" height=\"%.1f\" fill=\"none\" stroke=\"#333\"/>\n", x,
                      y0, y1 - y0);
    axis_map a = {lo, hi, y1, y0, false};
    double step = nice_step(hi - lo, 6), ticks[CLI_MAX_TICKS];
    size_t count = cli_axis_ticks(lo, hi, step, ticks, CLI_MAX_TICKS);
    for (size_t i = 0; i < count; i++) {
        double t = ticks[i];
        char label[48];
        tick_label(label, sizeof label, t, step);
        double p = to_px(&a, t);
        cli_buffer_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>"
                             "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" font-size=\"11\">%s</text>\n",
                          x + 16, p, x + 20, p, x + 23, p + 4, label);
    }
    cli_buffer_puts(b, "</g>\n");
}

int cli_heatmap_svg(const char *command, const cli_reduced *r, const cli_heatmap_style *style,
                    const cli_axes_text *text, cli_buffer *b) {
    cli_heatmap_style cells = *style;
    cells.colorbar = false;
    cells.cell_pixels = 0;
    cli_buffer png = {0};
    int rc = cli_heatmap_png(command, r, &cells, text->title, &png);
    if (rc != EXIT_OK) return rc;
    int width = 760, height = 520;
    double x0 = 72, x1 = width - 110, y0 = text->subtitle ? 52 : 36, y1 = height - 52;
    double lo, hi;
    cli_heatmap_range(style, r, &lo, &hi);
    cli_buffer_printf(b,
                      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"posenc-heatmap\" width=\"%d\" height=\"%d\" "
                      "viewBox=\"0 0 %d %d\" %s>\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
                      width, height, width, height, font);
    draw_titles(b, width, text->title, text->subtitle);
    cli_buffer_printf(b, "<image x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" preserveAspectRatio=\"none\" "
                         "style=\"image-rendering:pixelated\" href=\"data:image/png;base64,",
                      x0, y0, x1 - x0, y1 - y0);
    cli_buffer_base64(b, png.data, png.len);
    cli_buffer_puts(b, "\"/>\n");
    cli_buffer_free(&png);
    /* cell edges in table units: column j spans [x_first + j, x_first + j + 1) */
    double cols = (double)(r->cols * r->col_block), rows = (double)(r->rows * r->row_block);
    axis_map ax = {text->x_first, text->x_first + cols, x0, x1, false};
    axis_map ay = {text->y_first, text->y_first + rows, y0, y1, false};
    draw_axis(b, &ax, true, y1, y1, y1, "x");
    draw_axis(b, &ay, false, x0, x0, x0, "y");
    cli_buffer_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#333\"/>\n", x0,
                      y0, x1 - x0, y1 - y0);
    if (style->colorbar) draw_colorbar(b, style->colormap, lo, hi, x1 + 14, y0, y1);
    draw_axis_labels(b, x0, x1, y0, y1, text->xlabel, text->ylabel);
    cli_buffer_puts(b, "</svg>\n");
    return b->failed ? cli_fail(command, EXIT_RUNTIME, NULL, "out of memory while drawing") : EXIT_OK;
}

typedef struct {
    double depth;
    size_t cell;
} quad;

static int by_depth(const void *a, const void *b) {
    double da = ((const quad *)a)->depth, db = ((const quad *)b)->depth;
    return (da < db) - (da > db); /* farthest first */
}

int cli_surface_svg(const char *command, const cli_reduced *r, cli_colormap map, const cli_axes_text *text,
                    cli_buffer *b) {
    if (r->rows < 2 || r->cols < 2)
        return cli_fail(command, EXIT_USAGE, NULL, "a surface needs at least 2 x 2 cells, got %zu x %zu", r->rows,
                        r->cols);
    int width = 760, height = 520;
    double yaw = -0.6, pitch = 0.5, scale = 200, cx = width / 2.0, cy = height / 2.0 + 20;
    double lo = r->vmin, hi = r->vmax; /* cli_unit: a constant table is drawn flat, in the middle */
    size_t n = r->rows * r->cols;
    double *sx = malloc(sizeof(double) * n * 3);
    quad *quads = malloc(sizeof(quad) * (r->rows - 1) * (r->cols - 1));
    if (!sx || !quads) {
        free(sx), free(quads);
        return cli_fail(command, EXIT_RUNTIME, NULL, "out of memory");
    }
    double *sy = sx + n, *depth = sy + n;
    double cyaw = cos(yaw), syaw = sin(yaw), cp = cos(pitch), sp = sin(pitch);
    for (size_t i = 0; i < r->rows; i++)
        for (size_t j = 0; j < r->cols; j++) {
            double v = r->values[i * r->cols + j];
            double x = (double)j / (double)(r->cols - 1) * 2 - 1, y = (double)i / (double)(r->rows - 1) * 2 - 1;
            double z = isfinite(v) ? (cli_unit(v, lo, hi) - 0.5) * 0.8 : 0;
            double xr = x * cyaw - y * syaw, yr = x * syaw + y * cyaw;
            double yt = yr * cp - z * sp, zt = yr * sp + z * cp;
            sx[i * r->cols + j] = cx + scale * xr;
            sy[i * r->cols + j] = cy - scale * zt;
            depth[i * r->cols + j] = yt;
        }
    size_t q = 0;
    for (size_t i = 0; i + 1 < r->rows; i++)
        for (size_t j = 0; j + 1 < r->cols; j++) {
            size_t k = i * r->cols + j;
            quads[q].depth = depth[k] + depth[k + 1] + depth[k + r->cols] + depth[k + r->cols + 1];
            quads[q++].cell = k;
        }
    qsort(quads, q, sizeof *quads, by_depth);
    cli_buffer_printf(b,
                      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"posenc-surface\" width=\"%d\" height=\"%d\" "
                      "viewBox=\"0 0 %d %d\" %s>\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
                      width, height, width, height, font);
    draw_titles(b, width, text->title, text->subtitle);
    cli_buffer_puts(b, "<g class=\"mesh\" stroke=\"#222\" stroke-opacity=\"0.25\" stroke-width=\"0.5\">\n");
    for (size_t t = 0; t < q; t++) {
        size_t k = quads[t].cell, c[4] = {k, k + 1, k + r->cols + 1, k + r->cols};
        double mean = 0;
        bool bad = false;
        for (int e = 0; e < 4; e++) {
            double v = r->values[c[e]];
            bad |= !isfinite(v);
            mean += v / 4;
        }
        unsigned char rgb[3];
        if (bad) memcpy(rgb, cli_nonfinite_rgb, 3);
        else cli_colormap_rgb(map, cli_unit(mean, lo, hi), rgb);
        cli_buffer_printf(b, "<path d=\"M%.1f %.1fL%.1f %.1fL%.1f %.1fL%.1f %.1fZ\" fill=\"#%02x%02x%02x\"/>\n", sx[c[0]],
                          sy[c[0]], sx[c[1]], sy[c[1]], sx[c[2]], sy[c[2]], sx[c[3]], sy[c[3]], rgb[0], rgb[1], rgb[2]);
    }
    cli_buffer_puts(b, "</g>\n");
    /* axis names at the mid-points of the first row (channels) and first column (positions) */
    size_t last_col = r->cols - 1, last_row = (r->rows - 1) * r->cols;
    cli_buffer_printf(b, "<g class=\"axis-names\" font-size=\"13\" fill=\"#222\">"
                         "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
                      (sx[0] + sx[last_col]) / 2, fmax(sy[0], sy[last_col]) + 30);
    cli_buffer_escape(b, text->xlabel ? text->xlabel : "channel");
    cli_buffer_printf(b, " %g..%g &#8594;</text><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", text->x_first,
                      text->x_first + (double)(r->cols * r->col_block) - 1, (sx[0] + sx[last_row]) / 2,
                      fmax(sy[0], sy[last_row]) + 30);
    cli_buffer_escape(b, text->ylabel ? text->ylabel : "position");
    cli_buffer_printf(b, " %g..%g &#8594;</text><text x=\"%d\" y=\"%d\">height and colour = value, %.4g (low) to %.4g (high)</text></g>\n",
                      text->y_first, text->y_first + (double)(r->rows * r->row_block) - 1, 20, height - 14, lo, hi);
    cli_buffer_puts(b, "</svg>\n");
    free(sx);
    free(quads);
    return b->failed ? cli_fail(command, EXIT_RUNTIME, NULL, "out of memory while drawing") : EXIT_OK;
}
