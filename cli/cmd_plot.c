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
    {"at", "P,P,...", "positions for `curves`, default 10,50 (those inside the table)"},
    {"max-cells", "N", "average blocks so a heat map has at most N cells a side (default 512)"},
    {"cell-pixels", "N", "pixels per heat-map cell in a PNG (default: fit about 640 px)"},
    {"max-bytes", "N", "refuse input tables larger than N bytes (default 4 GiB)"},
    {"o", "OUT", "output picture: OUT.png (heatmap, bias) or OUT.svg (every chart)"},
    {NULL, NULL, NULL}};

static const char *const charts[] = {"heatmap", "curves", "surface", "similarity", "spectrum", "variance", "norm", "bias",
                                     NULL};
static const char *const chart_help[] = {
    "position x channel heat map (PNG or SVG with axes)", "values across channels for chosen positions (--at)",
    "the table as a 3-D surface (projected mesh, SVG)", "cosine similarity against distance between positions",
    "wavelength of each sin/cos pair against the table length", "per-position variance across channels",
    "per-position L2 norm", "a [query x key] bias matrix from TABLE.npy as a heat map"};

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
           "  posenc plot heatmap table.npy -o table.svg\n");
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
    case 0: return cli_draw_heatmap("plot", t, &style, svg, (size_t)max_cells, out);
    case 1: {
        size_t rows[10], count = 0;
        if (cli_has(a, "at")) {
            int rc = cli_parse_rows("plot", cli_string(a, "at", ""), t, rows, 10, &count);
            if (rc != EXIT_OK) return rc;
        } else {
            const int64_t want[] = {10, 50}; /* position 0 is a plain 0,1,0,1 zigzag */
            for (size_t i = 0; i < 2; i++)
                if (want[i] < (int64_t)t->rows) rows[count++] = (size_t)want[i];
        }
        return cli_draw_curves("plot", t, rows, count, out);
    }
    case 2: return cli_draw_surface("plot", t, style.colormap, out);
    case 3: return cli_draw_similarity("plot", one, 1, out);
    case 4: return cli_draw_spectrum("plot", t, out);
    case 5: return cli_draw_row_stat("plot", one, 1, false, out);
    case 6: return cli_draw_row_stat("plot", one, 1, true, out);
    case 7: {
        cli_grid g = {t->values, t->rows, t->cols};
        cli_reduced r;
        int rc = cli_grid_reduce("plot", &g, (size_t)max_cells, (size_t)max_cells, &r);
        if (rc != EXIT_OK) return rc;
        cli_report_reduction("plot", chart_name, &g, &r);
        char title[128];
        snprintf(title, sizeof title, "%s: attention bias added to the score", t->name);
        cli_axes_text text = {title, t->about, "key position j", "query position i", 0, 0};
        rc = svg ? cli_heatmap_svg("plot", &r, &style, &text, out) : cli_heatmap_png("plot", &r, &style, title, out);
        cli_reduced_free(&r);
        return rc;
    }
    }
    return cli_fail("plot", EXIT_USAGE, NULL, "unknown chart");
}

int cmd_plot(int argc, char **argv) {
    if (argc >= 1 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0)) {
        plot_help();
        return EXIT_OK;
    }
    if (argc < 1 || argv[0][0] == '-')
        return cli_fail("plot", EXIT_USAGE, "posenc plot --help lists the charts", "name a chart first: heatmap, curves, surface, "
                        "similarity, spectrum, variance, norm or bias");
    int chart = -1;
    for (int i = 0; charts[i]; i++)
        if (strcmp(argv[0], charts[i]) == 0) chart = i;
    if (chart < 0)
        return cli_fail("plot", EXIT_USAGE, "posenc plot --help lists the charts",
                        "unknown chart '%s' (choose heatmap|curves|surface|similarity|spectrum|variance|norm|bias)", argv[0]);
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
    if (png && chart != 0 && chart != 7)
        return cli_fail("plot", EXIT_USAGE, "name the output OUT.svg", "the %s chart is drawn as SVG only", charts[chart]);
    if (chart == 7 && a.positional_count == 0)
        return cli_fail("plot", EXIT_USAGE, "e.g. posenc plot bias bias.npy -o bias.png",
                        "the bias chart draws a [query x key] matrix file");
    cli_table t;
    if ((rc = cli_table_from_args("plot", &a, &t)) != EXIT_OK) return rc;
    cli_buffer out = {0};
    rc = draw(charts[chart], chart, &a, &t, svg, &out);
    if (rc == EXIT_OK) rc = cli_buffer_write("plot", out_path, &out);
    if (rc == EXIT_OK) fprintf(stderr, "posenc plot: wrote %s (%s of %s)\n", out_path, charts[chart], t.name);
    cli_buffer_free(&out);
    cli_table_free(&t);
    return rc;
}
