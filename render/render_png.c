/* render_png.c: colormaps, block-averaging of large tables, and PNG heat maps
 * through libpng. The PNG is built in memory and written atomically. */
#include "render.h"

#include <math.h>
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const cli_colormap_names[] = {"rdbu", "viridis", NULL};
/* Mid grey: absent from both maps (RdBu's middle is near-white, viridis has no grey). */
const unsigned char cli_nonfinite_rgb[3] = {128, 128, 128};

/* ColorBrewer RdBu-11 (matplotlib's "RdBu": negative red, positive blue) and
 * viridis sampled at 9 even stops (matplotlib/R). Linear between stops, exact at them. */
static const unsigned char rdbu_stops[11][3] = {
    {0x67, 0x00, 0x1f}, {0xb2, 0x18, 0x2b}, {0xd6, 0x60, 0x4d}, {0xf4, 0xa5, 0x82},
    {0xfd, 0xdb, 0xc7}, {0xf7, 0xf7, 0xf7}, {0xd1, 0xe5, 0xf0}, {0x92, 0xc5, 0xde},
    {0x43, 0x93, 0xc3}, {0x21, 0x66, 0xac}, {0x05, 0x30, 0x61}};
static const unsigned char viridis_stops[9][3] = {
    {0x44, 0x01, 0x54}, {0x47, 0x2d, 0x7b}, {0x3b, 0x52, 0x8b}, {0x2c, 0x72, 0x8e}, {0x21, 0x90, 0x8c},
    {0x27, 0xad, 0x81}, {0x5d, 0xc8, 0x63}, {0xaa, 0xdc, 0x32}, {0xfd, 0xe7, 0x25}};

void cli_colormap_rgb(cli_colormap map, double t, unsigned char rgb[3]) {
    const unsigned char(*stops)[3] = map == CLI_CMAP_RDBU ? rdbu_stops : viridis_stops;
    int n = map == CLI_CMAP_RDBU ? 11 : 9;
    if (!(t >= 0)) t = 0; /* also catches NaN: callers draw non-finite cells themselves */
    if (t > 1) t = 1;
    double x = t * (n - 1);
    int i = (int)x;
    if (i >= n - 1) i = n - 2;
    double f = x - i;
    for (int c = 0; c < 3; c++) rgb[c] = (unsigned char)lround(stops[i][c] + f * (stops[i + 1][c] - stops[i][c]));
}

void cli_reduced_free(cli_reduced *r) {
    free(r->values);
    memset(r, 0, sizeof *r);
}

int cli_grid_reduce(const char *command, const cli_grid *grid, size_t max_rows, size_t max_cols,
                    cli_reduced *out) {
    memset(out, 0, sizeof *out);
    if (grid->rows == 0 || grid->cols == 0)
        return cli_fail(command, EXIT_USAGE, NULL, "the table is empty (%zu x %zu): nothing to draw", grid->rows,
                        grid->cols);
    if (max_rows == 0 || max_cols == 0) return cli_fail(command, EXIT_USAGE, NULL, "picture size must be > 0");
    out->row_block = (grid->rows + max_rows - 1) / max_rows;
    out->col_block = (grid->cols + max_cols - 1) / max_cols;
    out->rows = (grid->rows + out->row_block - 1) / out->row_block;
    out->cols = (grid->cols + out->col_block - 1) / out->col_block;
    out->values = malloc(sizeof(double) * out->rows * out->cols);
    if (!out->values) return cli_fail(command, EXIT_RUNTIME, NULL, "out of memory");
    out->vmin = INFINITY;
    out->vmax = -INFINITY;
    for (size_t r = 0; r < out->rows; r++) {
        for (size_t c = 0; c < out->cols; c++) {
            double sum = 0;
            size_t n = 0;
            bool bad = false;
            for (size_t i = r * out->row_block; i < grid->rows && i < (r + 1) * out->row_block; i++)
                for (size_t j = c * out->col_block; j < grid->cols && j < (c + 1) * out->col_block; j++) {
                    double v = grid->values[i * grid->cols + j];
                    if (!isfinite(v)) bad = true;
                    sum += v;
                    n++;
                }
            double mean = bad ? NAN : sum / (double)n;
            if (isfinite(mean)) {
                if (mean < out->vmin) out->vmin = mean;
                if (mean > out->vmax) out->vmax = mean;
            } else {
                mean = NAN; /* the sum of huge finite values can overflow too */
                out->nonfinite++;
            }
            out->values[r * out->cols + c] = mean;
        }
    }
    if (out->nonfinite == out->rows * out->cols) {
        cli_reduced_free(out);
        return cli_fail(command, EXIT_RUNTIME, "check the table: every value is NaN or infinite",
                        "no finite value to draw in a %zu x %zu table", grid->rows, grid->cols);
    }
    return EXIT_OK;
}

void cli_report_reduction(const char *command, const char *what, const cli_grid *grid, const cli_reduced *r) {
    if (r->row_block > 1 || r->col_block > 1)
        fprintf(stderr,
                "posenc %s: %s: %zu x %zu table is too large to draw cell by cell; showing %zu x %zu averages of "
                "%zu x %zu blocks\n",
                command, what, grid->rows, grid->cols, r->rows, r->cols, r->row_block, r->col_block);
    if (r->nonfinite)
        fprintf(stderr, "posenc %s: %s: %zu cell(s) hold NaN or inf; drawn in grey (#808080)\n", command, what,
                r->nonfinite);
}

void cli_heatmap_range(const cli_heatmap_style *style, const cli_reduced *r, double *lo, double *hi) {
    if (style->has_range) {
        *lo = style->vmin;
        *hi = style->vmax;
    } else if (style->colormap == CLI_CMAP_RDBU) { /* diverging: white is exactly 0 */
        double m = fmax(fabs(r->vmin), fabs(r->vmax));
        if (m == 0) m = 1;
        *lo = -m;
        *hi = m;
    } else {
        *lo = r->vmin;
        *hi = r->vmax;
        if (*lo == *hi) *lo -= 0.5, *hi += 0.5;
        if (*lo == *hi) { /* +-0.5 is below the precision of a value near 1e16 */
            double d = fabs(*lo) * 0x1p-40;
            *lo -= d, *hi += d;
        }
    }
}

double cli_unit(double v, double lo, double hi) {
    double span = hi / 2 - lo / 2; /* halves: hi - lo overflows for +-1.7e308 */
    if (!(span > 0)) return 0.5;
    return (v / 2 - lo / 2) / span;
}

static void png_append(png_structp png, png_bytep data, png_size_t size) {
    cli_buffer_append(png_get_io_ptr(png), data, size);
}
static void png_flush_nothing(png_structp png) { (void)png; }

/* libpng reports errors by longjmp; nothing local is modified after setjmp. */
static bool encode_png(const unsigned char *rgb, int width, int height, png_text *texts, int text_count,
                       cli_buffer *out) {
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    if (!png) return false;
    png_infop info = png_create_info_struct(png);
    if (!info || setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        return false;
    }
    png_set_write_fn(png, out, png_append, png_flush_nothing);
    png_set_IHDR(png, info, (png_uint_32)width, (png_uint_32)height, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_text(png, info, texts, text_count);
    png_write_info(png, info);
    for (int y = 0; y < height; y++) png_write_row(png, (png_const_bytep)(rgb + (size_t)y * (size_t)width * 3));
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    return !out->failed;
}

int cli_heatmap_cells_rgb(const char *command, const cli_reduced *r, const cli_heatmap_style *style,
                          unsigned char **rgb_out, int *width_out, int *height_out) {
    *rgb_out = NULL;
    size_t longest = r->rows > r->cols ? r->rows : r->cols;
    int s = style->cell_pixels > 0 ? style->cell_pixels : (int)(longest >= 640 ? 1 : 640 / longest);
    if (s > 16 && style->cell_pixels <= 16) s = 16; /* larger only when asked (figures of tiny tables) */
    if ((size_t)s * longest > 8192)
        return cli_fail(command, EXIT_USAGE, "lower --cell-pixels", "picture would be %zu pixels wide or tall",
                        (size_t)s * longest);
    int map_w = (int)r->cols * s, map_h = (int)r->rows * s;
    /* colorbar: a gap, then a strip 1/20 of the picture wide (>= 12 px), full height */
    int bar_gap = style->colorbar ? (map_w / 40 > 6 ? map_w / 40 : 6) : 0;
    int bar_w = style->colorbar ? (map_w / 20 > 12 ? map_w / 20 : 12) : 0;
    int width = map_w + bar_gap + bar_w, height = map_h;
    unsigned char *rgb = malloc((size_t)width * (size_t)height * 3);
    if (!rgb) return cli_fail(command, EXIT_RUNTIME, NULL, "out of memory");
    memset(rgb, 255, (size_t)width * (size_t)height * 3);
    double lo, hi;
    cli_heatmap_range(style, r, &lo, &hi);
    for (size_t i = 0; i < r->rows; i++)
        for (size_t j = 0; j < r->cols; j++) {
            double v = r->values[i * r->cols + j];
            unsigned char c[3];
            if (isfinite(v)) cli_colormap_rgb(style->colormap, cli_unit(v, lo, hi), c);
            else memcpy(c, cli_nonfinite_rgb, 3);
            for (int y = 0; y < s; y++)
                for (int x = 0; x < s; x++)
                    memcpy(rgb + (((i * (size_t)s + (size_t)y) * (size_t)width) + j * (size_t)s + (size_t)x) * 3, c, 3);
        }
    for (int y = 0; y < height && bar_w; y++) { /* top row is hi, bottom row is lo */
        unsigned char c[3];
        cli_colormap_rgb(style->colormap, height > 1 ? 1.0 - (double)y / (height - 1) : 0.5, c);
        for (int x = map_w + bar_gap; x < width; x++) memcpy(rgb + ((size_t)y * (size_t)width + (size_t)x) * 3, c, 3);
    }
    *rgb_out = rgb;
    *width_out = width;
    *height_out = height;
    return EXIT_OK;
}

int cli_heatmap_encode(const char *command, const cli_reduced *r, const cli_heatmap_style *style, const char *title,
                       const unsigned char *rgb, int width, int height, int cell_pixels, const char *layout_note,
                       cli_buffer *png) {
    double lo, hi;
    cli_heatmap_range(style, r, &lo, &hi);
    char range[160], layout[256];
    snprintf(range, sizeof range, "colormap %s from %.9g to %.9g%s", cli_colormap_names[style->colormap], lo, hi,
             style->colorbar ? "; colorbar on the right, top = max" : "");
    snprintf(layout, sizeof layout,
             "rows = positions (top = first), columns = channels; %d px per cell; each cell is the mean of %zu x %zu "
             "table cells; %zu non-finite cell(s) in grey",
             cell_pixels, r->row_block, r->col_block, r->nonfinite);
    png_text texts[5] = {{0}};
    char k0[] = "Title", k1[] = "Description", k2[] = "Comment", k3[] = "Software", k4[] = "Layout";
    char software[] = "posenc " POSENC_VERSION_STRING;
    texts[0].key = k0, texts[0].text = (char *)(title ? title : "posenc heat map");
    texts[1].key = k1, texts[1].text = layout;
    texts[2].key = k2, texts[2].text = range;
    texts[3].key = k3, texts[3].text = software;
    texts[4].key = k4, texts[4].text = (char *)layout_note;
    int count = layout_note ? 5 : 4;
    for (int i = 0; i < count; i++) texts[i].compression = PNG_TEXT_COMPRESSION_NONE;
    if (!encode_png(rgb, width, height, texts, count, png))
        return cli_fail(command, EXIT_RUNTIME, NULL, "PNG encoding failed (out of memory?)");
    return EXIT_OK;
}

int cli_png_encode_rgb(const char *command, const unsigned char *rgb, int width, int height, const char *title,
                       const char *description, cli_buffer *png) {
    png_text texts[3] = {{0}};
    char k0[] = "Title", k1[] = "Description", k2[] = "Software";
    char software[] = "posenc " POSENC_VERSION_STRING;
    texts[0].key = k0, texts[0].text = (char *)(title ? title : "posenc chart");
    texts[1].key = k1, texts[1].text = (char *)(description ? description : "");
    texts[2].key = k2, texts[2].text = software;
    for (int i = 0; i < 3; i++) texts[i].compression = PNG_TEXT_COMPRESSION_NONE;
    if (!encode_png(rgb, width, height, texts, 3, png))
        return cli_fail(command, EXIT_RUNTIME, NULL, "PNG encoding failed (out of memory?)");
    return EXIT_OK;
}

int cli_heatmap_png(const char *command, const cli_reduced *r, const cli_heatmap_style *style, const char *title,
                    cli_buffer *png) {
    unsigned char *rgb;
    int width, height;
    int rc = cli_heatmap_cells_rgb(command, r, style, &rgb, &width, &height);
    if (rc != EXIT_OK) return rc;
    size_t longest = r->rows > r->cols ? r->rows : r->cols;
    int s = style->cell_pixels > 0 ? style->cell_pixels : (int)(longest >= 640 ? 1 : 640 / longest);
    rc = cli_heatmap_encode(command, r, style, title, rgb, width, height, s > 16 ? 16 : s, NULL, png);
    free(rgb);
    return rc;
}
