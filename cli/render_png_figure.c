/* render_png_figure.c: a heat map as a PNG a person can read on its own: title,
 * axes with tick labels, axis names and a colorbar with numbers. Text and lines
 * are drawn with cairo (fonts through fontconfig); the cells are the exact
 * colormap pixels of cli_heatmap_cells_rgb, copied in unscaled, so the picture
 * still says the exact colour of every cell. The pixels are then encoded with
 * libpng like every posenc PNG (tEXt chunks give the title, range and layout). */
#include "cli.h"

#include <cairo.h>
#include <fontconfig/fontconfig.h>
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
    double start = ceil(a->first / step) * step;
    char label[32];
    for (double v = start; v < a->first + a->count; v += step) {
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
    double step = nice_step(hi - lo, 6);
    char label[32];
    for (double v = ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step) {
        double p = y1 - (v - lo) / (hi - lo) * (y1 - y0);
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

    cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height);
    unsigned char *rgb = malloc((size_t)width * (size_t)height * 3);
    if (cairo_surface_status(surface) != CAIRO_STATUS_SUCCESS || !rgb) {
        cairo_surface_destroy(surface);
        free(rgb);
        free(cells);
        return cli_fail(command, EXIT_RUNTIME, NULL, "out of memory for a %d x %d picture", width, height);
    }
    cr = cairo_create(surface);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    cairo_select_font_face(cr, FONT_FAMILY, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_source_rgb(cr, 0.13, 0.13, 0.13);
    cairo_set_line_width(cr, 1);
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
    cairo_destroy(cr);
    cairo_to_rgb(surface, rgb, width, height);
    cairo_surface_destroy(surface);
    /* Hand back the font caches cairo and fontconfig keep for the whole process, so
     * each picture leaves nothing allocated (leak checkers stay clean; the next
     * picture re-reads the font configuration, a few ms). Needs every cairo object
     * destroyed and no other thread drawing: the tool draws on one thread. */
    cairo_debug_reset_static_data();
    FcFini();

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
