/* cmd_plot.c: `posenc plot CHART`: one picture from encoding flags or a table file. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cli_option plot_options[] = {
    CLI_TABLE_OPTIONS,
    {"cmap", "MAP", "heat-map colormap: rdbu (diverging, centred on 0; default) | viridis"},
    {"no-colorbar", NULL, "leave out the colorbar strip"},
    {"vmin", "V", "value drawn at the bottom of the colormap (with --vmax)"},
    {"vmax", "V", "value drawn at the top of the colormap (with --vmin)"},
    {"at", "P,P,...", "positions for `curves`, default 10,50 (those inside the table; else the first row)"},
    {"max-cells", "N", "average blocks so a heat map has at most N cells a side (default 512)"},
    {"cell-pixels", "N", "pixels per heat-map cell in a PNG (default: fit about 640 px)"},
    {"scheme", "S", "bias, bias-profile: alibi (default) | t5"},
    {"heads", "H", "alibi: number of heads (slope schedule), default 8"},
    {"head", "H", "alibi: the head drawn by `bias`, default 0"},
    {"max-bias", "B", "alibi: bias strength, default 8"},
    {"symmetric", NULL, "alibi: -m|i-j| (ggml) instead of causal m(j-i) with future keys masked"},
    {"buckets", "N", "t5: num_buckets, default 32"},
    {"max-distance", "D", "t5: max_distance, default 128"},
    {"unidirectional", NULL, "t5: decoder buckets (default bidirectional)"},
    {"max-pos", "P", "precision: audit positions 0..P, default 65504 (largest finite f16)"},
    {"max-bytes", "N", "refuse input tables larger than N bytes (default 4 GiB)"},
    {"o", "OUT", "output picture: OUT.png (heatmap, bias) or OUT.svg (every chart)"},
    {NULL, NULL, NULL}};

static const char *const charts[] = {"heatmap", "curves",     "surface",    "similarity", "spectrum", "variance",
                                     "norm",    "bias",       "bias-profile", "rope-bands", "precision", NULL};
enum { HEATMAP, CURVES, SURFACE, SIMILARITY, SPECTRUM, VARIANCE, NORM, BIAS, BIAS_PROFILE, ROPE_BANDS, PRECISION };
static const char *const chart_help[] = {
    "position x channel heat map (PNG or SVG with axes)", "values across channels for chosen positions (--at)",
    "the table as a 3-D surface (projected mesh, SVG)", "cosine similarity against distance between positions",
    "wavelength of each sin/cos pair against the table length", "per-position variance across channels",
    "per-position L2 norm", "ALiBi (one head) or T5 bucket map [query x key], or a bias matrix TABLE.npy",
    "ALiBi bias against distance per head, or T5 bucket against relative position",
    "RoPE scaling: each pair's frequency multiplier, kept/blended/interpolated bands",
    "precision audit: worst angle error per pair in f32, bf16 and f16"};

static void plot_help(void) {
    printf("usage: posenc plot CHART [TABLE.npy | encoding flags] [options] -o OUT.png|OUT.svg\n\n"
           "Draw one picture of a positional encoding. Without a table file the table is\n"
           "computed from the encoding flags (default: sinusoidal, 128 positions x 64 channels).\n\ncharts:\n");
    for (int i = 0; charts[i]; i++) printf("  %-12s %s\n", charts[i], chart_help[i]);
    printf("\noptions:\n");
    cli_print_options(plot_options);
    printf("\nexamples:\n"
           "  posenc plot heatmap --len 100 --dim 128 --cmap viridis -o pe.png\n"
           "  posenc plot curves --dim 512 --at 0,10 -o curves.svg\n"
           "  posenc plot surface --len 50 --dim 64 -o surface.svg\n"
           "  posenc plot heatmap table.npy -o table.svg\n"
           "  posenc plot bias --scheme alibi --heads 8 --head 0 --len 64 -o alibi.png\n"
           "  posenc plot rope-bands --scaling llama3 --factor 8 --original-max 8192 -o bands.svg\n"
           "  posenc plot precision --dim 128 --max-pos 65536 -o precision.svg\n");
}

static int draw(const char *chart_name, int chart, const cli_args *a, const cli_table *t, bool svg, cli_buffer *out) {
    cli_heatmap_style style = {.colormap = CLI_CMAP_RDBU, .colorbar = !cli_has(a, "no-colorbar")};
    int cmap = 0;
    if (!cli_choice(a, "cmap", cli_colormap_names, &cmap)) return EXIT_USAGE;
    style.colormap = (cli_colormap)cmap;
    if (cli_has(a, "vmin") != cli_has(a, "vmax"))
        return cli_fail("plot", EXIT_USAGE, NULL, "give both --vmin and --vmax, or neither");
    if (cli_has(a, "vmin")) {
        if (!cli_double(a, "vmin", &style.vmin) || !cli_double(a, "vmax", &style.vmax)) return EXIT_USAGE;
        if (!(style.vmin < style.vmax))
            return cli_fail("plot", EXIT_USAGE, NULL, "--vmin must be less than --vmax, got %g and %g", style.vmin,
                            style.vmax);
        style.has_range = true;
    }
    int64_t max_cells = 512;
    int32_t cell_pixels = 0;
    if (!cli_int64(a, "max-cells", 2, 4096, &max_cells) || !cli_int32(a, "cell-pixels", 1, 16, &cell_pixels))
        return EXIT_USAGE;
    style.cell_pixels = cell_pixels;
    const cli_table *one[1] = {t};
    switch (chart) {
    case HEATMAP: return cli_draw_heatmap("plot", t, &style, svg, (size_t)max_cells, out);
    case CURVES: {
        size_t rows[10], count = 0;
        if (cli_has(a, "at")) {
            int rc = cli_parse_rows("plot", cli_string(a, "at", ""), t, rows, 10, &count);
            if (rc != EXIT_OK) return rc;
        } else {
            const int64_t want[] = {10, 50}; /* position 0 is a plain 0,1,0,1 zigzag */
            for (size_t i = 0; i < 2; i++)
                if (want[i] < (int64_t)t->rows) rows[count++] = (size_t)want[i];
            if (count == 0) rows[count++] = 0; /* a table of <= 10 rows: its first row, not "nothing to draw" */
        }
        return cli_draw_curves("plot", t, rows, count, out);
    }
    case SURFACE: return cli_draw_surface("plot", t, style.colormap, out);
    case SIMILARITY: return cli_draw_similarity("plot", one, 1, out);
    case SPECTRUM: return cli_draw_spectrum("plot", t, out);
    case VARIANCE: return cli_draw_row_stat("plot", one, 1, false, out);
    case NORM: return cli_draw_row_stat("plot", one, 1, true, out);
    case BIAS: {
        if (strstr(t->name, "t5") && !cli_has(a, "cmap")) style.colormap = CLI_CMAP_VIRIDIS; /* bucket ids: not signed */
        cli_grid g = {t->values, t->rows, t->cols};
        cli_reduced r;
        int rc = cli_grid_reduce("plot", &g, (size_t)max_cells, (size_t)max_cells, &r);
        if (rc != EXIT_OK) return rc;
        /* causal ALiBi: the NaN cells are the mask by design, not bad values */
        size_t nonfinite = r.nonfinite;
        if (nonfinite && strstr(t->about, "future keys (masked)")) {
            fprintf(stderr, "posenc plot: %s: keys after the query are masked (causal); drawn in grey\n", chart_name);
            r.nonfinite = 0;
        }
        cli_report_reduction("plot", chart_name, &g, &r);
        r.nonfinite = nonfinite;
        char title[128];
        snprintf(title, sizeof title, "%s: %s", t->name,
                 strstr(t->name, "t5") ? "bucket of each (query, key)" : "attention bias added to the score");
        cli_axes_text text = {title, t->about, "key position j", "query position i", 0, 0};
        rc = svg ? cli_heatmap_svg("plot", &r, &style, &text, out) : cli_heatmap_png_figure("plot", &r, &style, &text, out);
        cli_reduced_free(&r);
        return rc;
    }
    }
    return cli_fail("plot", EXIT_USAGE, NULL, "unknown chart");
}

/* Charts computed from their own flags rather than from a position table. */
static int draw_computed(int chart, const cli_args *a, cli_table *t, cli_buffer *out) {
    const char *table_only[] = {"kind", "freqs", "layout", "start", "seed", "sigma", "config", "assume"};
    for (size_t i = 0; i < sizeof table_only / sizeof *table_only; i++)
        if (cli_has(a, table_only[i]))
            return cli_fail("plot", EXIT_USAGE, NULL, "--%s does not apply to the %s chart", table_only[i], charts[chart]);
    static const char *const bands_flags[] = {"scaling", "factor", "original-max", NULL};
    const char *rope_flag = cli_rope_scaling_flag_given(a, chart == ROPE_BANDS ? bands_flags : NULL);
    if (rope_flag) return cli_fail("plot", EXIT_USAGE, NULL, "--%s does not apply to the %s chart", rope_flag, charts[chart]);
    if (chart == ROPE_BANDS) {
        int32_t dim = 128;
        double base = 500000, factor = 8;
        int64_t original = 8192;
        posenc_error err = {0};
        posenc_rope_scaling scaling = POSENC_ROPE_LLAMA3;
        if (!cli_int32(a, "dim", 2, 1 << 16, &dim) || !cli_double(a, "base", &base) || !cli_double(a, "factor", &factor) ||
            !cli_int64(a, "original-max", 1, INT64_MAX / 1024, &original))
            return EXIT_USAGE;
        if (cli_has(a, "scaling") && posenc_rope_scaling_parse(cli_string(a, "scaling", ""), &scaling, &err) != POSENC_OK)
            return cli_fail_status("plot", &err);
        return cli_draw_rope_bands("plot", dim, base, scaling, factor, original, out);
    }
    if (chart == PRECISION) {
        int32_t dim = 64;
        int64_t max_pos = 65504; /* the largest finite f16: f16 angles stay finite */
        posenc_sinusoid_params p;
        if (!cli_int32(a, "dim", 2, 1 << 16, &dim) || !cli_int64(a, "max-pos", 1, (int64_t)1 << 31, &max_pos))
            return EXIT_USAGE;
        posenc_sinusoid_params_default(&p, dim);
        if (!cli_double(a, "base", &p.base)) return EXIT_USAGE;
        return cli_draw_precision("plot", &p, max_pos, out, NULL);
    }
    cli_bias_request q;
    cli_bias_request_default(&q);
    int scheme = 0;
    static const char *const schemes[] = {"alibi", "t5", NULL};
    if (!cli_choice(a, "scheme", schemes, &scheme) || !cli_int32(a, "heads", 1, 1 << 16, &q.heads) ||
        !cli_int32(a, "head", 0, 1 << 16, &q.head) || !cli_double(a, "max-bias", &q.max_bias) ||
        !cli_int64(a, "len", 1, INT64_MAX, &q.len) || !cli_int32(a, "buckets", 1, 1 << 20, &q.t5.num_buckets) ||
        !cli_int32(a, "max-distance", 1, INT32_MAX, &q.t5.max_distance))
        return EXIT_USAGE;
    q.scheme = scheme;
    q.symmetric = cli_has(a, "symmetric");
    q.t5.bidirectional = !cli_has(a, "unidirectional");
    if (chart == BIAS_PROFILE) return cli_draw_bias_profile("plot", &q, out);
    return cli_bias_table("plot", &q, t);
}

int cmd_plot(int argc, char **argv) {
    if (argc >= 1 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0)) {
        plot_help();
        return EXIT_OK;
    }
    if (argc < 1 || argv[0][0] == '-')
        return cli_fail("plot", EXIT_USAGE, "posenc plot --help lists the charts", "name a chart first: heatmap, curves, surface, "
                        "similarity, spectrum, variance, norm, bias, bias-profile, rope-bands or precision");
    int chart = -1;
    for (int i = 0; charts[i]; i++)
        if (strcmp(argv[0], charts[i]) == 0) chart = i;
    if (chart < 0)
        return cli_fail("plot", EXIT_USAGE, "posenc plot --help lists the charts",
                        "unknown chart '%s' (choose heatmap|curves|surface|similarity|spectrum|variance|norm|bias|bias-profile|"
                        "rope-bands|precision)", argv[0]);
    cli_args a;
    int rc = cli_parse(&a, "plot", plot_options, argc - 1, argv + 1, 1);
    if (rc != EXIT_OK) return rc;
    if (a.help) {
        plot_help();
        return EXIT_OK;
    }
    const char *out_path = cli_string(&a, "o", NULL);
    if (!out_path) return cli_fail("plot", EXIT_USAGE, NULL, "-o OUT.png|OUT.svg is required");
    bool svg = cli_path_ends_with(out_path, ".svg"), png = cli_path_ends_with(out_path, ".png");
    if (!svg && !png)
        return cli_fail("plot", EXIT_USAGE, "name the output OUT.png or OUT.svg", "cannot tell the picture format of '%s'",
                        out_path);
    if (png && chart != HEATMAP && chart != BIAS)
        return cli_fail("plot", EXIT_USAGE, "name the output OUT.svg", "the %s chart is drawn as SVG only", charts[chart]);
    cli_table t;
    memset(&t, 0, sizeof t);
    cli_buffer out = {0};
    if (chart == BIAS_PROFILE || chart == ROPE_BANDS || chart == PRECISION || (chart == BIAS && a.positional_count == 0)) {
        rc = draw_computed(chart, &a, &t, &out);
        if (chart == BIAS && rc == EXIT_OK) rc = draw(charts[chart], chart, &a, &t, svg, &out);
    } else {
        const char *own[] = {"scheme", "heads", "head", "max-bias", "symmetric", "buckets", "max-distance",
                             "unidirectional", "max-pos"};
        for (size_t i = 0; i < sizeof own / sizeof *own; i++)
            if (cli_has(&a, own[i]))
                return cli_fail("plot", EXIT_USAGE, NULL, "--%s does not apply to the %s chart%s", own[i], charts[chart],
                                chart == BIAS ? " of a table file" : "");
        if ((rc = cli_table_from_args("plot", &a, &t)) != EXIT_OK) return rc;
        rc = draw(charts[chart], chart, &a, &t, svg, &out);
    }
    if (rc == EXIT_OK) rc = cli_buffer_write("plot", out_path, &out);
    if (rc == EXIT_OK)
        cli_note("plot", "wrote %s (%s%s%s)", out_path, charts[chart], t.name[0] ? " of " : "", t.name);
    cli_buffer_free(&out);
    cli_table_free(&t);
    return rc;
}
