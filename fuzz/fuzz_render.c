/* fuzz_render.c: the tool's renderers (render/render_png.c, render_png_figure.c,
 * render_svg.c) on extreme tables (issue 26 item 4: a constant 1e16 table hung the
 * colorbar's `v += step` loop; a +-1.7e308 range made "-nan" coordinates).
 *
 * Input: the tail carves the shape (1..40 x 1..40), a mode and a colormap; the
 * head gives doubles. Modes: 0 the raw doubles (NaN/inf included); 1 one constant
 * (the first double) everywhere; 2 a few-ulp range around it (base + k ulps);
 * 3 a huge range (+-DBL_MAX scaled by the input bytes); 4 sparse: zeros with a few
 * of the doubles. The reduced grid then goes through the plain heat-map PNG, the
 * figure PNG (axes, colorbar with numbers), the heat-map SVG, the 3-D surface SVG,
 * a line chart SVG and the band chart PNG of the rows' means.
 *
 * Promises: every call returns 0, 1 or 2 (no hang: libFuzzer's -timeout); an SVG
 * written with 0 holds no "nan" or "inf" in a geometry attribute (fuzz_common.h); buffers are
 * freeable; the same input renders the same SVG bytes twice (deterministic; the
 * cairo PNGs, ~10x slower, are drawn once). */
#include "fuzz_common.h"
#include "fuzz_data.h"

#include "render.h"

#include <float.h>
#include <math.h>

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    FILE *null_out = fopen("/dev/null", "w"); /* the renderers' messages are not the fuzzer's business */
    if (null_out) stderr = null_out;
    return 0;
}

static void render_all(const cli_reduced *r, const cli_heatmap_style *style, const double *x, const double *y,
                       const double *lo, const double *hi, size_t n, cli_buffer out[6], int rc[6], bool png) {
    cli_axes_text text = {"fuzz", "sub", "channel", "position", 0, 0};
    rc[0] = png ? cli_heatmap_png("fuzz", r, style, "fuzz", &out[0]) : 0;
    rc[1] = png ? cli_heatmap_png_figure("fuzz", r, style, &text, &out[1]) : 0;
    rc[2] = cli_heatmap_svg("fuzz", r, style, &text, &out[2]);
    rc[3] = cli_surface_svg("fuzz", r, style->colormap, &text, &out[3]);
    cli_series s = {"means", x, y, n};
    cli_chart chart = {"t", "s", "x", "y", &s, 1, NULL, 0, NULL, NULL, 0, 0, false, false, 0, 0};
    rc[4] = cli_chart_svg("fuzz", &chart, &out[4]);
    cli_band_series bs = {"means", "#1f77b4", x, y, lo, hi, n, 0};
    cli_band_chart band = {"t", "x", "y", &bs, 1, false, 0, 0};
    rc[5] = png ? cli_band_chart_png("fuzz", &band, &out[5]) : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_data f = fuzz_data_make(data, size);
    size_t rows = (size_t)fuzz_range_u64(&f, 1, 40), cols = (size_t)fuzz_range_u64(&f, 1, 40);
    if (size > 4096) return 0; /* the doubles repeat over the cells: a longer input only runs slower */
    int mode = (int)fuzz_range_u64(&f, 0, 4);
    cli_heatmap_style style = {.colormap = fuzz_bool(&f) ? CLI_CMAP_VIRIDIS : CLI_CMAP_RDBU, .colorbar = fuzz_bool(&f)};
    size_t given = f.size / sizeof(double);
    double first = 1e16;
    if (given) memcpy(&first, data, sizeof first);
    size_t n = rows * cols;
    double *v = malloc(n * sizeof *v), *x = malloc(rows * 5 * sizeof *x);
    if (!v || !x) {
        free(v), free(x);
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        double d = 0;
        if (given) memcpy(&d, data + (i % given) * sizeof d, sizeof d);
        switch (mode) {
        case 0: v[i] = d; break;
        case 1: v[i] = isfinite(first) ? first : 1e16; break;
        case 2: v[i] = isfinite(first) ? first + (double)(i % 7) * fabs(first) * DBL_EPSILON : 1e16 + 2.0 * (double)(i % 7); break;
        case 3: v[i] = (i % 2 ? DBL_MAX : -DBL_MAX) * (isfinite(d) ? fmin(1, fabs(d) + 0.5) : 1); break;
        default: v[i] = i % 5 == 0 && isfinite(d) ? d : 0; break;
        }
    }
    cli_grid g = {v, rows, cols};
    cli_reduced r;
    int rrc = cli_grid_reduce("fuzz", &g, 32, 32, &r);
    FUZZ_REQUIRE(rrc == 0 || rrc == 1 || rrc == 2, "grid reduce exit %d", rrc);
    if (rrc == 0) {
        /* the chart data: the reduced rows' means (finite ones), x = row index */
        double *y = x + rows, *lo = y + rows, *hi = lo + rows;
        size_t m = 0;
        for (size_t i = 0; i < r.rows && m < rows; i++) {
            double s = 0;
            for (size_t j = 0; j < r.cols; j++) s += r.values[i * r.cols + j] / (double)r.cols;
            if (!isfinite(s)) continue;
            x[m] = (double)i, y[m] = s, lo[m] = s, hi[m] = s;
            m++;
        }
        cli_buffer out[6], again[6];
        int rc[6], rc2[6];
        memset(out, 0, sizeof out);
        memset(again, 0, sizeof again);
        render_all(&r, &style, x, y, lo, hi, m, out, rc, true);
        render_all(&r, &style, x, y, lo, hi, m, again, rc2, false);
        for (int k = 0; k < 6; k++) {
            FUZZ_REQUIRE(rc[k] == 0 || rc[k] == 1 || rc[k] == 2, "renderer %d exit %d", k, rc[k]);
            bool svg = k == 2 || k == 3 || k == 4;
            FUZZ_REQUIRE(!svg || (rc[k] == rc2[k] && out[k].len == again[k].len &&
                                  (out[k].len == 0 || memcmp(out[k].data, again[k].data, out[k].len) == 0)),
                         "renderer %d is not deterministic", k);
            if (rc[k] == 0 && (k == 2 || k == 3 || k == 4))
                FUZZ_REQUIRE(!fuzz_svg_bad_geometry(out[k].data, out[k].len), "renderer %d wrote nan/inf geometry (mode %d)", k, mode);
            cli_buffer_free(&out[k]);
            cli_buffer_free(&again[k]);
        }
        cli_reduced_free(&r);
    }
    free(v);
    free(x);
    return 0;
}
