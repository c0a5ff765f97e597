/* render_png_figure.c: pictures as PNGs a person can read on their own: a heat
 * map with title, axes with tick labels, axis names and a colorbar with numbers;
 * and (at the end) a line chart with min-max bands and a legend. Text and lines
 * are drawn with cairo (fonts through fontconfig); the cells are the exact
 * colormap pixels of cli_heatmap_cells_rgb, copied in unscaled, so the picture
 * still says the exact colour of every cell. The pixels are then encoded with
 * libpng like every posenc PNG (tEXt chunks give the title, range and layout). */
#include "render.h"

#include <cairo.h>
#include <fontconfig/fontconfig.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FONT_FAMILY "DejaVu Sans"
#define HALF_PI 1.57079632679489661923 /* C11 has no M_PI_2 */
enum { TITLE_PX = 15, TEXT_PX = 12, TICK_LEN = 5, BAR_GAP = 14, BAR_W = 16 };

/* A "nice" tick step (1, 2 or 5 x 10^k) giving at most about `most` ticks over span. */
static double nice_step(double span, int most) {
    if (!(span > 0)) return 1;
    if (!isfinite(span)) span = DBL_MAX; /* a range across most of the doubles */
    double raw = span / most, p = pow(10, floor(log10(raw)));
    double m = raw / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

static double text_width(cairo_t *cr, const char *s) {
    cairo_text_extents_t e;
    cairo_text_extents(cr, s, &e);
    return e.x_advance;
}

/* Draw s with its anchor at (x, y): ax 0 left, 0.5 centre, 1 right; y is the baseline
 * plus vy x the font size (0.35 centres digits on y). */
static void text_at(cairo_t *cr, const char *s, double x, double y, double ax, double vy, double size) {
    cairo_set_font_size(cr, size);
    cairo_move_to(cr, x - ax * text_width(cr, s), y + vy * size);
    cairo_show_text(cr, s);
}

/* Tick label for a value on the colorbar: %g with few digits, and exact 0 for a
 * value within a rounding step of it (so a symmetric range never shows -1e-17). */
static void value_label(char *out, size_t n, double v, double step) {
    if (fabs(v) < step * 1e-6) v = 0;
    snprintf(out, n, "%.4g", v);
}

typedef struct {
    double first, count; /* table index of the first cell, cells of the table on this axis */
    double pixel0, pixels;
} index_axis;

/* Integer index ticks (positions, channels), each at the centre of its cell. */
static void draw_index_ticks(cairo_t *cr, const index_axis *a, bool horizontal, double edge) {
    double step = nice_step(a->count, horizontal ? 8 : 10);
    if (step < 1) step = 1;
    double ticks[CLI_MAX_TICKS];
    size_t count = cli_axis_ticks(a->first, a->first + a->count - 0.5, step, ticks, CLI_MAX_TICKS);
    char label[32];
    for (size_t i = 0; i < count; i++) {
        double v = ticks[i];
        double p = a->pixel0 + (v - a->first + 0.5) / a->count * a->pixels;
        snprintf(label, sizeof label, "%.0f", v);
        if (horizontal) {
            cairo_move_to(cr, p, edge);
            cairo_line_to(cr, p, edge + TICK_LEN);
            cairo_stroke(cr);
            text_at(cr, label, p, edge + TICK_LEN + 2, 0.5, 0.9, TEXT_PX);
        } else {
            cairo_move_to(cr, edge, p);
            cairo_line_to(cr, edge - TICK_LEN, p);
            cairo_stroke(cr);
            text_at(cr, label, edge - TICK_LEN - 3, p, 1, 0.35, TEXT_PX);
        }
    }
}

static void draw_colorbar_numbers(cairo_t *cr, double lo, double hi, double x, double y0, double y1) {
    double step = nice_step(hi - lo, 6), ticks[CLI_MAX_TICKS];
    size_t count = cli_axis_ticks(lo, hi, step, ticks, CLI_MAX_TICKS);
    char label[32];
    for (size_t i = 0; i < count; i++) {
        double v = ticks[i];
        double p = y1 - cli_unit(v, lo, hi) * (y1 - y0);
        cairo_move_to(cr, x, p);
        cairo_line_to(cr, x + TICK_LEN, p);
        cairo_stroke(cr);
        value_label(label, sizeof label, v, step);
        text_at(cr, label, x + TICK_LEN + 3, p, 0, 0.35, TEXT_PX);
    }
}

/* cairo's ARGB32 (native-endian 0xAARRGGBB words) -> packed RGB rows. */
static void cairo_to_rgb(cairo_surface_t *s, unsigned char *rgb, int width, int height) {
    cairo_surface_flush(s);
    const unsigned char *data = cairo_image_surface_get_data(s);
    int stride = cairo_image_surface_get_stride(s);
    for (int y = 0; y < height; y++) {
        const uint32_t *row = (const uint32_t *)(const void *)(data + (size_t)y * (size_t)stride);
        for (int x = 0; x < width; x++) {
            unsigned char *o = rgb + ((size_t)y * (size_t)width + (size_t)x) * 3;
            o[0] = (unsigned char)(row[x] >> 16), o[1] = (unsigned char)(row[x] >> 8), o[2] = (unsigned char)row[x];
        }
    }
}

/* A white width x height canvas (line width 1, the normal face) and the RGB
 * buffer cairo_to_rgb copies it into at the end; on failure nothing is left
 * allocated and the error is reported. */
static int canvas_create(const char *command, int width, int height, cairo_surface_t **surface, cairo_t **cr,
                         unsigned char **rgb) {
    *surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height);
    *rgb = malloc((size_t)width * (size_t)height * 3);
    if (cairo_surface_status(*surface) != CAIRO_STATUS_SUCCESS || !*rgb) {
        cairo_surface_destroy(*surface);
        free(*rgb);
        return cli_fail(command, EXIT_RUNTIME, NULL, "out of memory for a %d x %d picture", width, height);
    }
    *cr = cairo_create(*surface);
    cairo_set_source_rgb(*cr, 1, 1, 1);
    cairo_paint(*cr);
    cairo_set_line_width(*cr, 1);
    cairo_select_font_face(*cr, FONT_FAMILY, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    return EXIT_OK;
}

/* The canvas copied into rgb and released. Then the font caches cairo and
 * fontconfig keep for the whole process are handed back, so each picture
 * leaves nothing allocated (leak checkers stay clean; the next picture
 * re-reads the font configuration, a few ms). Needs every cairo object
 * destroyed and no other thread drawing: the tool draws on one thread. */
static void canvas_finish(cairo_surface_t *surface, cairo_t *cr, unsigned char *rgb, int width, int height) {
    cairo_destroy(cr);
    cairo_to_rgb(surface, rgb, width, height);
    cairo_surface_destroy(surface);
    cairo_debug_reset_static_data();
    FcFini();
}

int cli_heatmap_png_figure(const char *command, const cli_reduced *r, const cli_heatmap_style *style,
                           const cli_axes_text *text, cli_buffer *png) {
    cli_heatmap_style cells_style = *style;
    cells_style.colorbar = false;
    /* a tiny table still gets a map about 320 px across, so the labels fit around it */
    size_t longest = r->rows > r->cols ? r->rows : r->cols;
    if (style->cell_pixels == 0 && longest < 20) cells_style.cell_pixels = (int)(320 / longest);
    int map_w, map_h;
    unsigned char *cells = NULL;
    int rc = cli_heatmap_cells_rgb(command, r, &cells_style, &cells, &map_w, &map_h);
    if (rc != EXIT_OK) return rc;
    /* a long, narrow table (2000 positions x 64 channels) would be a sliver with
     * colliding tick labels: widen (or heighten) the cells by whole pixels instead */
    int sx = map_w / (int)r->cols, sy = map_h / (int)r->rows;
    int kx = map_w < 240 ? (320 + map_w - 1) / map_w : 1, ky = map_h < 120 ? (160 + map_h - 1) / map_h : 1;
    if (kx > 1 || ky > 1) {
        unsigned char *wide = malloc((size_t)map_w * (size_t)kx * (size_t)map_h * (size_t)ky * 3);
        if (!wide) {
            free(cells);
            return cli_fail(command, EXIT_RUNTIME, NULL, "out of memory");
        }
        for (int y = 0; y < map_h * ky; y++)
            for (int x = 0; x < map_w * kx; x++)
                memcpy(wide + ((size_t)y * (size_t)(map_w * kx) + (size_t)x) * 3,
                       cells + ((size_t)(y / ky) * (size_t)map_w + (size_t)(x / kx)) * 3, 3);
        free(cells);
        cells = wide;
        map_w *= kx, map_h *= ky, sx *= kx, sy *= ky;
    }
    double lo, hi;
    cli_heatmap_range(style, r, &lo, &hi);

    /* Measure the text first so the margins fit it. */
    cairo_surface_t *probe = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 1, 1);
    cairo_t *cr = cairo_create(probe);
    cairo_select_font_face(cr, FONT_FAMILY, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, TEXT_PX);
    char widest[64];
    snprintf(widest, sizeof widest, "%.0f", fmax(fabs(text->y_first), fabs(text->y_first + (double)(r->rows * r->row_block))));
    double ytick_w = text_width(cr, widest) + 6, bar_label_w = text_width(cr, "-0.0000e-00");
    cairo_set_font_size(cr, TITLE_PX);
    double title_w = text->title ? text_width(cr, text->title) : 0;
    cairo_set_font_size(cr, TEXT_PX);
    double subtitle_w = text->subtitle ? text_width(cr, text->subtitle) : 0;
    cairo_destroy(cr);
    cairo_surface_destroy(probe);

    int left = (int)ceil(10 + TEXT_PX + 6 + ytick_w + TICK_LEN);
    int top = 10 + (text->title ? TITLE_PX + 8 : 0) + (text->subtitle ? TEXT_PX + 8 : 0) + 4;
    int right = style->colorbar ? (int)ceil(BAR_GAP + BAR_W + TICK_LEN + 3 + bar_label_w * 0.7 + 8) : 12;
    int bottom = TICK_LEN + 2 + TEXT_PX + 8 + TEXT_PX + 12;
    int width = left + map_w + right;
    int need = (int)ceil(fmax(title_w, subtitle_w)) + 20;
    if (width < need) width = need;
    int height = top + map_h + bottom;

    cairo_surface_t *surface = NULL;
    unsigned char *rgb = NULL;
    if ((rc = canvas_create(command, width, height, &surface, &cr, &rgb)) != EXIT_OK) {
        free(cells);
        return rc;
    }
    cairo_set_source_rgb(cr, 0.13, 0.13, 0.13);
    double y = 10;
    if (text->title) {
        cairo_select_font_face(cr, FONT_FAMILY, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
        text_at(cr, text->title, 10, y, 0, 0.8, TITLE_PX);
        cairo_select_font_face(cr, FONT_FAMILY, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
        y += TITLE_PX + 8;
    }
    if (text->subtitle) text_at(cr, text->subtitle, 10, y, 0, 0.8, TEXT_PX);

    /* axes: ticks at cell centres, in table units (blocks cover row_block rows each) */
    index_axis ax = {text->x_first, (double)(r->cols * r->col_block), left, map_w};
    index_axis ay = {text->y_first, (double)(r->rows * r->row_block), top, map_h};
    draw_index_ticks(cr, &ax, true, top + map_h + 0.5);
    draw_index_ticks(cr, &ay, false, left - 0.5);
    if (text->xlabel) text_at(cr, text->xlabel, left + map_w / 2.0, height - 10, 0.5, 0, TEXT_PX);
    if (text->ylabel) {
        cairo_save(cr);
        cairo_translate(cr, 10 + TEXT_PX * 0.8, top + map_h / 2.0);
        cairo_rotate(cr, -HALF_PI);
        text_at(cr, text->ylabel, 0, 0, 0.5, 0, TEXT_PX);
        cairo_restore(cr);
    }
    int bar_x = left + map_w + BAR_GAP;
    if (style->colorbar) draw_colorbar_numbers(cr, lo, hi, bar_x + BAR_W + 0.5, top, top + map_h);
    canvas_finish(surface, cr, rgb, width, height);

    /* exact pixels: the cells, a frame around them, and the colorbar gradient */
    for (int row = 0; row < map_h; row++)
        memcpy(rgb + ((size_t)(top + row) * (size_t)width + (size_t)left) * 3, cells + (size_t)row * (size_t)map_w * 3,
               (size_t)map_w * 3);
    free(cells);
    if (style->colorbar)
        for (int row = 0; row < map_h; row++) {
            unsigned char c[3];
            cli_colormap_rgb(style->colormap, map_h > 1 ? 1.0 - (double)row / (map_h - 1) : 0.5, c);
            for (int x = bar_x; x < bar_x + BAR_W; x++)
                memcpy(rgb + ((size_t)(top + row) * (size_t)width + (size_t)x) * 3, c, 3);
        }

    char layout[200]; /* where the cells are, for readers (and tests) that look up cell colours */
    snprintf(layout, sizeof layout, "cells x=%d y=%d w=%d h=%d sx=%d sy=%d; colorbar x=%d w=%d", left, top, map_w,
             map_h, sx, sy,
             style->colorbar ? bar_x : 0, style->colorbar ? BAR_W : 0);
    rc = cli_heatmap_encode(command, r, style, text->title, rgb, width, height, sx, layout, png);
    free(rgb);
    return rc;
}

/* ---- line chart with min-max bands (posenc lab plot -o X.png) ---- */

static void set_hex(cairo_t *cr, const char *hex, double alpha) {
    unsigned r = 0x44, g = 0x44, b = 0x44;
    if (hex && hex[0] == '#' && strlen(hex) == 7) {
        unsigned long v = strtoul(hex + 1, NULL, 16);
        r = (unsigned)(v >> 16) & 255, g = (unsigned)(v >> 8) & 255, b = (unsigned)v & 255;
    }
    cairo_set_source_rgba(cr, r / 255.0, g / 255.0, b / 255.0, alpha);
}

/* the SVG plot's dash patterns (render/lab_plot.c), the same order */
static void set_dash(cairo_t *cr, int style) {
    static const double patterns[5][4] = {{0}, {7, 4}, {2, 3}, {7, 3, 2, 3}, {14, 4}};
    static const int lengths[5] = {0, 2, 2, 4, 2};
    int k = style >= 0 && style < 5 ? style : 0;
    cairo_set_dash(cr, patterns[k], lengths[k], 0);
}

typedef struct {
    bool log_x;
    double x0, x1, y0, y1;     /* data range (x in log2 units when log_x) */
    double left, top, w, h;    /* plot area in pixels */
} band_frame;

static double frame_px(const band_frame *f, double x) {
    double u = f->log_x ? log2(x) : x;
    return f->left + cli_unit(u, f->x0, f->x1) * f->w;
}
static double frame_py(const band_frame *f, double y) { return f->top + f->h - cli_unit(y, f->y0, f->y1) * f->h; }

/* x ticks: on a log axis the distinct x values of the data (lengths 64, 128, ...)
 * when there are few, else the powers of two in range; on a linear axis a nice step. */
static void draw_band_x_ticks(cairo_t *cr, const cli_band_chart *c, const band_frame *f) {
    double ticks[64];
    size_t n = 0;
    if (c->log_x) {
        for (size_t s = 0; s < c->series_count; s++)
            for (size_t i = 0; i < c->series[s].count; i++) {
                double x = c->series[s].x[i];
                size_t k = 0;
                while (k < n && ticks[k] != x) k++;
                if (k == n && n < sizeof ticks / sizeof *ticks) ticks[n++] = x;
            }
        if (n > 12) {
            n = 0;
            n = cli_axis_ticks(f->x0, f->x1, 1, ticks, sizeof ticks / sizeof *ticks);
            for (size_t i = 0; i < n; i++) ticks[i] = exp2(ticks[i]);
        }
    } else {
        double step = nice_step(f->x1 - f->x0, 8);
        n = cli_axis_ticks(f->x0, f->x1, step, ticks, sizeof ticks / sizeof *ticks);
    }
    char label[32];
    double bottom = f->top + f->h;
    for (size_t i = 0; i < n; i++) {
        double p = frame_px(f, ticks[i]);
        cairo_set_source_rgb(cr, 0.87, 0.87, 0.87);
        cairo_move_to(cr, p, f->top);
        cairo_line_to(cr, p, bottom);
        cairo_stroke(cr);
        cairo_set_source_rgb(cr, 0.13, 0.13, 0.13);
        cairo_move_to(cr, p, bottom);
        cairo_line_to(cr, p, bottom + TICK_LEN);
        cairo_stroke(cr);
        snprintf(label, sizeof label, "%g", ticks[i]);
        text_at(cr, label, p, bottom + TICK_LEN + 2, 0.5, 0.9, TEXT_PX);
    }
}

static void draw_band_y_ticks(cairo_t *cr, const band_frame *f) {
    double step = nice_step(f->y1 - f->y0, 6), ticks[CLI_MAX_TICKS];
    size_t count = cli_axis_ticks(f->y0, f->y1, step, ticks, CLI_MAX_TICKS);
    char label[32];
    for (size_t i = 0; i < count; i++) {
        double v = ticks[i];
        double p = frame_py(f, v);
        cairo_set_source_rgb(cr, 0.87, 0.87, 0.87);
        cairo_move_to(cr, f->left, p);
        cairo_line_to(cr, f->left + f->w, p);
        cairo_stroke(cr);
        cairo_set_source_rgb(cr, 0.13, 0.13, 0.13);
        cairo_move_to(cr, f->left, p);
        cairo_line_to(cr, f->left - TICK_LEN, p);
        cairo_stroke(cr);
        value_label(label, sizeof label, v, step);
        text_at(cr, label, f->left - TICK_LEN - 3, p, 1, 0.35, TEXT_PX);
    }
}

int cli_band_chart_png(const char *command, const cli_band_chart *c, cli_buffer *png) {
    enum { LEGEND_ROW = 20, SWATCH = 24 };
    band_frame f = {c->log_x, INFINITY, -INFINITY, INFINITY, -INFINITY, 0, 0, 0, 0};
    for (size_t s = 0; s < c->series_count; s++)
        for (size_t i = 0; i < c->series[s].count; i++) {
            const cli_band_series *e = &c->series[s];
            if (c->log_x && !(e->x[i] > 0))
                return cli_fail(command, EXIT_USAGE, NULL, "x value %g of '%s' cannot go on a log axis", e->x[i], e->name);
            double x = c->log_x ? log2(e->x[i]) : e->x[i];
            f.x0 = fmin(f.x0, x), f.x1 = fmax(f.x1, x);
            f.y0 = fmin(f.y0, fmin(e->lo[i], e->mid[i])), f.y1 = fmax(f.y1, fmax(e->hi[i], e->mid[i]));
        }
    if (!isfinite(f.x0) || !isfinite(f.y0) || !isfinite(f.x1) || !isfinite(f.y1))
        return cli_fail(command, EXIT_USAGE, NULL, "nothing finite to draw");
    if (!(f.x1 > f.x0)) f.x0 -= 0.5, f.x1 += 0.5;
    if (!(f.y1 > f.y0)) f.y0 -= 0.5, f.y1 += 0.5;
    double pad = 0.1 * (f.y1 / 2 - f.y0 / 2); /* 5% of a range that may exceed DBL_MAX */
    f.y0 = fmax(f.y0 - pad, -DBL_MAX), f.y1 = fmin(f.y1 + pad, DBL_MAX);
    if (c->log_x) pad = 0.03 * (f.x1 - f.x0), f.x0 -= pad, f.x1 += pad;

    /* measure the text so the margins fit it */
    cairo_surface_t *probe = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 1, 1);
    cairo_t *cr = cairo_create(probe);
    cairo_select_font_face(cr, FONT_FAMILY, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, TEXT_PX);
    double legend_w = 0, ytick_w = text_width(cr, "-0.0000");
    for (size_t s = 0; s < c->series_count; s++) legend_w = fmax(legend_w, text_width(cr, c->series[s].name));
    cairo_select_font_face(cr, FONT_FAMILY, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
    cairo_set_font_size(cr, TITLE_PX);
    double title_w = c->title ? text_width(cr, c->title) : 0;
    cairo_destroy(cr);
    cairo_surface_destroy(probe);

    int width = c->width > 0 ? c->width : 900, height = c->height > 0 ? c->height : 520;
    int left = (int)ceil(10 + TEXT_PX + 8 + ytick_w + TICK_LEN);
    int top = 10 + (c->title ? TITLE_PX + 14 : 4);
    int bottom = TICK_LEN + 2 + TEXT_PX + 10 + TEXT_PX + 12;
    int right = (int)ceil(16 + SWATCH + 6 + fmin(legend_w, 320) + 12);
    int need_h = top + 10 + LEGEND_ROW * (int)c->series_count + bottom;
    if (height < need_h) height = need_h;
    if (width < (int)ceil(title_w) + 20) width = (int)ceil(title_w) + 20;
    if (width - left - right < 200) width = left + right + 200;
    f.left = left, f.top = top, f.w = width - left - right, f.h = height - top - bottom;

    cairo_surface_t *surface = NULL;
    unsigned char *rgb = NULL;
    int rc = canvas_create(command, width, height, &surface, &cr, &rgb);
    if (rc != EXIT_OK) return rc;
    draw_band_y_ticks(cr, &f);
    draw_band_x_ticks(cr, c, &f);
    cairo_set_source_rgb(cr, 0.13, 0.13, 0.13);
    if (c->title) {
        cairo_select_font_face(cr, FONT_FAMILY, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
        text_at(cr, c->title, 10, 10, 0, 0.8, TITLE_PX);
        cairo_select_font_face(cr, FONT_FAMILY, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    }
    if (c->xlabel) text_at(cr, c->xlabel, f.left + f.w / 2, height - 10, 0.5, 0, TEXT_PX);
    if (c->ylabel) {
        cairo_save(cr);
        cairo_translate(cr, 10 + TEXT_PX * 0.8, f.top + f.h / 2);
        cairo_rotate(cr, -HALF_PI);
        text_at(cr, c->ylabel, 0, 0, 0.5, 0, TEXT_PX);
        cairo_restore(cr);
    }
    /* bands first (translucent), then the lines and points on top, clipped to the plot */
    cairo_save(cr);
    cairo_rectangle(cr, f.left, f.top, f.w, f.h);
    cairo_clip(cr);
    for (size_t s = 0; s < c->series_count; s++) {
        const cli_band_series *e = &c->series[s];
        if (e->count == 0) continue;
        for (size_t i = 0; i < e->count; i++) cairo_line_to(cr, frame_px(&f, e->x[i]), frame_py(&f, e->hi[i]));
        for (size_t i = e->count; i-- > 0;) cairo_line_to(cr, frame_px(&f, e->x[i]), frame_py(&f, e->lo[i]));
        cairo_close_path(cr);
        set_hex(cr, e->color, 0.18);
        cairo_fill(cr);
    }
    cairo_set_line_width(cr, 2);
    cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
    for (size_t s = 0; s < c->series_count; s++) {
        const cli_band_series *e = &c->series[s];
        set_hex(cr, e->color, 1);
        set_dash(cr, e->dash);
        for (size_t i = 0; i < e->count; i++) cairo_line_to(cr, frame_px(&f, e->x[i]), frame_py(&f, e->mid[i]));
        cairo_stroke(cr);
        set_dash(cr, 0);
        if (e->count <= 32)
            for (size_t i = 0; i < e->count; i++) {
                cairo_arc(cr, frame_px(&f, e->x[i]), frame_py(&f, e->mid[i]), 3, 0, 4 * HALF_PI);
                cairo_fill(cr);
            }
    }
    cairo_restore(cr);
    cairo_set_line_width(cr, 1);
    cairo_set_source_rgb(cr, 0.27, 0.27, 0.27);
    cairo_rectangle(cr, f.left + 0.5, f.top + 0.5, f.w - 1, f.h - 1);
    cairo_stroke(cr);
    /* legend: a thick swatch of each line's colour and its name */
    double lx = f.left + f.w + 16;
    cairo_set_line_width(cr, 4);
    for (size_t s = 0; s < c->series_count; s++) {
        double ly = f.top + 10 + LEGEND_ROW * (double)s;
        set_hex(cr, c->series[s].color, 1);
        set_dash(cr, c->series[s].dash);
        cairo_move_to(cr, lx, ly);
        cairo_line_to(cr, lx + SWATCH, ly);
        cairo_stroke(cr);
        set_dash(cr, 0);
        cairo_set_source_rgb(cr, 0.13, 0.13, 0.13);
        text_at(cr, c->series[s].name, lx + SWATCH + 6, ly, 0, 0.35, TEXT_PX);
    }
    canvas_finish(surface, cr, rgb, width, height);

    /* where things are, for readers (and tests) that look pixels up */
    cli_buffer desc = {0};
    cli_buffer_printf(&desc, "plot x=%d y=%d w=%d h=%d; x %s; legend x=%d y=%d row=%d swatch=%d; series:", left, top,
                      (int)f.w, (int)f.h, c->log_x ? "log2" : "linear", (int)lx, top + 10, LEGEND_ROW, SWATCH);
    for (size_t s = 0; s < c->series_count; s++)
        cli_buffer_printf(&desc, "%s %s=%s", s ? ";" : "", c->series[s].name, c->series[s].color ? c->series[s].color : "");
    cli_buffer_append(&desc, "", 1);
    rc = desc.failed ? cli_fail(command, EXIT_RUNTIME, NULL, "out of memory")
                    : cli_png_encode_rgb(command, rgb, width, height, c->title, desc.data, png);
    cli_buffer_free(&desc);
    free(rgb);
    return rc;
}
