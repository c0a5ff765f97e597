/* render.h: the drawing library of the posenc tool (render/): colour maps, heat maps
 * as PNG (libpng, cairo for text) and SVG, chart layouts, the tables they draw, and the
 * self-contained HTML report with its JavaScript and CSS. It uses posenc.h, base/base.h
 * and, for the report's "Measured here" section, the lab's experiments.h; it includes
 * nothing from cli/ (docs/architecture.md). The names keep the tool's cli_ prefix. */
#ifndef POSENC_RENDER_H
#define POSENC_RENDER_H

#include "base.h"

/* Colormaps: RdBu (diverging, red < 0 < blue, drawn centered on 0) and viridis. */
typedef enum { CLI_CMAP_RDBU = 0, CLI_CMAP_VIRIDIS = 1 } cli_colormap;
extern const char *const cli_colormap_names[]; /* {"rdbu", "viridis", NULL} */
/* t in [0,1] (clamped) -> rgb; the color for a non-finite value is cli_nonfinite_rgb. */
void cli_colormap_rgb(cli_colormap map, double t, unsigned char rgb[3]);
extern const unsigned char cli_nonfinite_rgb[3];

/* A borrowed row-major grid of doubles: rows x cols (positions x channels). */
typedef struct {
    const double *values;
    size_t rows, cols;
} cli_grid;

/* A grid averaged down in blocks of row_block x col_block cells (owned). */
typedef struct {
    double *values;
    size_t rows, cols, row_block, col_block;
    double vmin, vmax;     /* finite range of the reduced values */
    size_t nonfinite;      /* reduced cells holding NaN/inf (drawn in cli_nonfinite_rgb) */
} cli_reduced;
/* Average blocks so the result fits max_rows x max_cols; a block with any
 * non-finite value stays non-finite (so bad values stay visible). EXIT_* code;
 * an empty grid or one with no finite value is an error (message printed). */
int cli_grid_reduce(const char *command, const cli_grid *grid, size_t max_rows, size_t max_cols,
                    cli_reduced *out);
void cli_reduced_free(cli_reduced *r);
/* Say on stderr when a picture shows block averages rather than cells. */
void cli_report_reduction(const char *command, const char *what, const cli_grid *grid,
                          const cli_reduced *r);

typedef struct {
    cli_colormap colormap;
    bool has_range;        /* use vmin/vmax instead of the data range */
    double vmin, vmax;
    bool colorbar;         /* add a colorbar strip on the right */
    int cell_pixels;       /* >= 1: pixels per cell side (0 = choose) */
} cli_heatmap_style;

/* Color range for a style: RdBu is symmetric about 0 (+-max|v|), viridis spans min..max. */
void cli_heatmap_range(const cli_heatmap_style *style, const cli_reduced *r, double *lo, double *hi);
/* Where v lies in [lo, hi] as 0..1, without overflow for any finite lo < hi
 * (+-1.7e308); 0.5 when the range is empty (a constant table is drawn in the middle). */
double cli_unit(double v, double lo, double hi);
/* Encode a heat map (cells, optional colorbar) as PNG bytes into *png. The
 * tEXt chunks record the title, the value range and any reduction. */
int cli_heatmap_png(const char *command, const cli_reduced *r, const cli_heatmap_style *style,
                    const char *title, cli_buffer *png);
/* The cells (and colorbar strip when style->colorbar) as packed RGB rows (malloc'd). */
int cli_heatmap_cells_rgb(const char *command, const cli_reduced *r, const cli_heatmap_style *style,
                          unsigned char **rgb, int *width, int *height);
/* Encode RGB rows as a heat-map PNG with tEXt chunks (title, range, reduction and,
 * when layout_note is not NULL, a "Layout" chunk saying where the cells are). */
int cli_heatmap_encode(const char *command, const cli_reduced *r, const cli_heatmap_style *style, const char *title,
                       const unsigned char *rgb, int width, int height, int cell_pixels, const char *layout_note,
                       cli_buffer *png);

/* ---- SVG charts (render/render_svg.c) ---- */
/* The ticks of an axis on a grid of `step`: k x step for the integers k with
 * lo - step*1e-9 <= k x step <= hi + step*1e-9, increasing, at most max (and at most
 * 4 x CLI_MAX_TICKS candidates looked at). Counted with an integer, so a step below
 * the values' precision ends (with the distinct ticks) instead of looping forever;
 * 0 for a non-finite lo, hi or step. */
#define CLI_MAX_TICKS 64
size_t cli_axis_ticks(double lo, double hi, double step, double *ticks, size_t max);
typedef struct {
    const char *name;
    const double *x, *y;
    size_t count;
} cli_series;
typedef struct {
    double x0, x1;
    const char *label;
    int tone; /* 0 kept (green), 1 blended (amber), 2 interpolated (red) */
} cli_band;
typedef struct {
    double value;
    const char *label;
} cli_mark;
typedef struct {
    const char *title, *subtitle, *xlabel, *ylabel;
    const cli_series *series;
    size_t series_count;
    const cli_band *bands;
    size_t band_count;
    const cli_mark *xmarks, *ymarks; /* dashed reference lines */
    size_t xmark_count, ymark_count;
    bool log_x, log_y;
    int width, height; /* 0 = 760 x 420 */
} cli_chart;
/* Line chart with axes, ticks, labels, legend and title, as a standalone SVG. */
int cli_chart_svg(const char *command, const cli_chart *chart, cli_buffer *out);

typedef struct {
    const char *title, *subtitle, *xlabel, *ylabel;
    double x_first, y_first; /* label of the first column/row (e.g. key/query 0) */
} cli_axes_text;
/* Heat map with axes and a colorbar: the cells are an embedded PNG. */
int cli_heatmap_svg(const char *command, const cli_reduced *r, const cli_heatmap_style *style,
                    const cli_axes_text *text, cli_buffer *out);
/* Heat map PNG a person can read alone: title, subtitle, axes with tick labels
 * and names, and a colorbar with numbers (text drawn with cairo); the cells keep
 * their exact colormap pixels. The "Layout" tEXt chunk says where they are. */
int cli_heatmap_png_figure(const char *command, const cli_reduced *r, const cli_heatmap_style *style,
                           const cli_axes_text *text, cli_buffer *png);
/* Line chart with a shaded band per series (posenc lab plot: mean line, min-max
 * band over seeds), drawn with cairo: title, frame, grid, tick labels (log x at
 * the data's x values, or a nice linear step), axis names and a legend. */
typedef struct {
    const char *name;
    const char *color;             /* "#rrggbb" */
    const double *x, *mid, *lo, *hi; /* count points each, x ascending */
    size_t count;
    int dash;                      /* 0 solid, 1 dashed, 2 dotted, 3 dash-dot, 4 long dashes: tells apart
                                      series that share a colour */
} cli_band_series;
typedef struct {
    const char *title, *xlabel, *ylabel;
    const cli_band_series *series;
    size_t series_count;
    bool log_x;                    /* log2 axis; x must be > 0 */
    int width, height;             /* 0 = 900 x 520 */
} cli_band_chart;
int cli_band_chart_png(const char *command, const cli_band_chart *chart, cli_buffer *png);
/* Encode packed RGB rows as a PNG with Title, Description and Software tEXt chunks. */
int cli_png_encode_rgb(const char *command, const unsigned char *rgb, int width, int height, const char *title,
                       const char *description, cli_buffer *png);
/* 3-D surface z = grid[row][col] as a projected, painter-sorted mesh. */
int cli_surface_svg(const char *command, const cli_reduced *r, cli_colormap map,
                    const cli_axes_text *text, cli_buffer *out);

/* ---- tables to draw (render/render_source.c) and chart builders (render/charts.c) ---- */
typedef struct {
    char name[64];        /* "sinusoidal", "index", ..., or the file name */
    char about[200];      /* one line: how it was made */
    double *values;       /* rows x cols, owned */
    size_t rows, cols;
    int64_t first_position;
    double *frequencies;  /* per pair (radians/position) when known, else NULL */
    size_t pairs;
    posenc_layout layout;
    bool is_rope;         /* a cos|sin table of RoPE angles */
    /* RoPE settings (is_rope): what the scaling-bands chart needs */
    int32_t rope_head_dim;
    double rope_base, rope_factor;
    posenc_rope_scaling rope_scaling;
    int64_t rope_original_max;
    /* --config: the model's (scaled) frequencies at its longest context, for the
     * long-range chart; NULL when the config gives no context length */
    double *rope_long_frequencies; /* pairs entries, owned */
    int64_t rope_long_context;     /* max_position_embeddings, else factor x L0 */
    bool has_sinusoid;    /* made from sinusoid_params (precision audits use them) */
    posenc_sinusoid_params sinusoid;
    char layers[1024];    /* --config: which layers carry which encoding, one folded run per line */
} cli_table;
void cli_table_free(cli_table *t);
/* The kinds a table can be computed as, in this order (cli_table_compute's kind). */
enum { CLI_TABLE_SINUSOIDAL, CLI_TABLE_INDEX, CLI_TABLE_NORMALIZED, CLI_TABLE_ROPE, CLI_TABLE_LEARNED };
extern const char *const cli_table_kind_names[]; /* {"sinusoidal", "index", "normalized", "rope", "learned", NULL} */
/* A sinusoid table (CLI_TABLE_SINUSOIDAL) or a baseline (CLI_TABLE_INDEX, CLI_TABLE_NORMALIZED) of
 * len positions from start; at most 2^24 cells. EXIT_* code, message printed. */
int cli_table_compute(const char *command, int kind, int64_t len, const posenc_sinusoid_params *p, int64_t start,
                      cli_table *t);
/* RoPE drawn as its [positions][R] table: the R/2 cosines, then the R/2 sines. */
int cli_table_rope(const char *command, int64_t len, int64_t start, const posenc_rope_params *p, cli_table *t);
/* A learned table as it starts training: N(0, sigma^2), the project's seeded recipe. */
int cli_table_learned(const char *command, int64_t len, int32_t dim, uint64_t seed, double sigma, cli_table *t);
/* A 2-D (or 1-D: one row) .npy table, as doubles. */
int cli_table_read(const char *command, const char *path, size_t max_bytes, cli_table *t);
/* A model without RoPE: its first layer's bias as a [query x key] table, its learned
 * table's untrained initialisation, or a constant (path names the config). */
int cli_table_from_model(const char *command, const posenc_model *m, int64_t len, int64_t start, const char *path,
                         cli_table *t);
/* Compute one named kind at len x dim with default parameters (for the report). */
int cli_table_make(const char *command, const char *kind, int64_t len, int32_t dim, cli_table *t);

int cli_draw_heatmap(const char *command, const cli_table *t, const cli_heatmap_style *style, bool svg,
                     size_t max_cells, cli_buffer *out);
int cli_draw_surface(const char *command, const cli_table *t, cli_colormap map, cli_buffer *out);
/* Values across channels for the chosen rows (table row indices). */
int cli_draw_curves(const char *command, const cli_table *t, const size_t *rows, size_t count, cli_buffer *out);
int cli_draw_spectrum(const char *command, const cli_table *t, cli_buffer *out);
/* Mean cosine similarity of rows p and p+k against distance k, one series per table. */
int cli_draw_similarity(const char *command, const cli_table *const *tables, size_t count, cli_buffer *out);
/* Per-position variance across channels (norm = false) or L2 norm (norm = true). */
int cli_draw_row_stat(const char *command, const cli_table *const *tables, size_t count, bool norm,
                      cli_buffer *out);
/* Parse "0,10,50" into table row indices (positions minus first_position). */
int cli_parse_rows(const char *command, const char *list, const cli_table *t, size_t *rows, size_t max,
                   size_t *count);

/* ---- attention biases, RoPE scaling and precision pictures (render/charts_extra.c) ---- */
typedef struct {
    int scheme;             /* 0 ALiBi, 1 T5 buckets */
    int32_t heads, head;    /* ALiBi: head count (slope schedule) and the head drawn */
    double max_bias;        /* ALiBi B, default 8 */
    bool symmetric;         /* ALiBi -m|i-j| (ggml) instead of causal m(j-i) with j > i masked */
    int64_t len;            /* queries = keys = 0..len-1 */
    posenc_t5_params t5;
} cli_bias_request;
void cli_bias_request_default(cli_bias_request *q);
/* The [len x len] bias of one head (ALiBi; masked keys are NaN, drawn grey) or
 * the T5 bucket matrix, as a drawable table. */
int cli_bias_table(const char *command, const cli_bias_request *q, cli_table *t);
/* ALiBi: bias against distance for every head; T5: bucket against relative position. */
int cli_draw_bias_profile(const char *command, const cli_bias_request *q, cli_buffer *out);
/* Frequency multiplier of every RoPE pair under linear/NTK/YaRN/Llama-3 scaling,
 * against the pair's wavelength, with the kept/blended/interpolated bands of `scaling`
 * and the trained and extended context lengths marked. */
/* A --config table's RoPE over its whole context (0 .. rope_long_context, sampled):
 * cos(p w) of three pairs around the trained context, scaled and unscaled. */
int cli_draw_rope_long(const char *command, const cli_table *t, cli_buffer *out);
int cli_draw_rope_bands(const char *command, int32_t head_dim, double base, posenc_rope_scaling scaling,
                        double factor, int64_t original_max, cli_buffer *out);
/* Precision audit (posenc_precision_audit) for f32, f16 and bf16: worst angle
 * error per pair as a chart (svg may be NULL) and the findings as an HTML table
 * (html may be NULL). */
int cli_draw_precision(const char *command, const posenc_sinusoid_params *params, int64_t max_pos, cli_buffer *svg,
                       cli_buffer *html);

/* ---- the HTML report (render/report.c) ---- */
typedef struct {
    const cli_table *const *tables; /* what the report compares (first = the main one) */
    size_t count;
    int colormap;                   /* -1: rdbu for signed tables, viridis for non-negative */
    const char *command_line;       /* shown in the footer */
    bool default_comparison;        /* run with no flags: explain the comparison */
    const char *const *lab_results; /* lab result files for the "Measured here" section (may be 0) */
    size_t lab_count;
    bool lab_found;                 /* found at the default place: files with no runs are skipped */
    const char *identify, *identify_sin; /* --identify CACHE [--sin S]: the "Which RoPE" section */
    int identify_layout;                 /* posenc_rope_cache_layout */
} cli_report_request;
/* The "Which RoPE is this?" <section> (render/report_identify.c) for a cos/sin cache. */
int cli_identify_report_section(const char *command, const char *path, const char *sin_path, int layout,
                                cli_buffer *html);
/* Build the whole self-contained page (pictures, tables, data, script) into *html. */
int cli_report_html(const char *command, const cli_report_request *req, cli_buffer *html);
/* SVG of lab results (render/lab_plot.c; runs as cli_lab_read_results returns them; path names them
 * in messages): metric vs length or training curves. */
int cli_lab_plot_svg(const char *command, const struct cJSON *runs, const char *path, const char *experiment,
                     const char *metric, cli_buffer *out);
/* The same picture as a PNG (cli_band_chart_png). */
int cli_lab_plot_png(const char *command, const struct cJSON *runs, const char *path, const char *experiment,
                     const char *metric, cli_buffer *out);
/* posenc report [--lab RESULTS]: the "Measured here" <section> (render/report_lab.c)
 * from lab result files; found: they came from the default place, so a file with
 * no runs is skipped with a note instead of failing. */
int cli_lab_report_section(const char *command, const char *const *paths, size_t count, bool found, cli_buffer *html);
/* The default place of lab results: the files `posenc lab run NAME` writes without
 * -o, lab-NAME.jsonl in the current folder, for each experiment NAME in order.
 * Writes the names of those that exist into names[0..max) and returns how many. */
#define CLI_LAB_MAX_RESULTS 8
size_t cli_lab_default_results(char names[][64], size_t max);

#endif
