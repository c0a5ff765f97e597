/* report.c: `posenc report` page: one self-contained HTML file (no network)
 * holding every picture, the statistics tables, the data of the interactive
 * tools as JSON, and the project's own JavaScript (render/report.js, embedded).
 * Sections are independent functions in one list, so new families plug in. */
#include "render.h"
#include "report_assets.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Interactive tables are averaged down to at most this many cells a side:
 * the page stays small (about 10 bytes per value) and smooth to zoom. */
#define REPORT_MAX_CELLS 256

typedef struct {
    const cli_report_request *req;
    cli_buffer *html;
    const char *command;
} report;

static cli_colormap colormap_for(const report *r, const cli_table *t) {
    if (r->req->colormap >= 0) return (cli_colormap)r->req->colormap;
    for (size_t i = 0; i < t->rows * t->cols; i++)
        if (t->values[i] < 0) return CLI_CMAP_RDBU;
    return CLI_CMAP_VIRIDIS; /* nothing below 0: a diverging map would waste its red half */
}

static void look(cli_buffer *b, const char *text) {
    cli_buffer_puts(b, "<p class=\"look\"><b>What to look at:</b> ");
    cli_buffer_puts(b, text); /* trusted: written in this file */
    cli_buffer_puts(b, "</p>\n");
}

static void open_section(report *r, const char *id, const char *title) {
    cli_buffer_printf(r->html, "<section id=\"%s\">\n<h2>", id);
    cli_buffer_escape(r->html, title);
    cli_buffer_puts(r->html, "</h2>\n");
}

static void figure(report *r, const cli_buffer *svg, const char *caption) {
    cli_buffer_puts(r->html, "<figure>");
    cli_buffer_append(r->html, svg->data, svg->len);
    if (caption) {
        cli_buffer_puts(r->html, "<figcaption>");
        cli_buffer_escape(r->html, caption);
        cli_buffer_puts(r->html, "</figcaption>");
    }
    cli_buffer_puts(r->html, "</figure>\n");
}

static int section_overview(report *r) {
    cli_buffer *b = r->html;
    open_section(r, "overview", "How to read this report");
    if (r->req->default_comparison) {
        cli_buffer_puts(b, "<p>This report compares ways of telling a Transformer <em>where</em> each token is, all at "
                           "the same size so the pictures line up:</p>\n<ul>\n");
    } else {
        cli_buffer_puts(b, "<p>The tables in this report:</p>\n<ul>\n");
    }
    for (size_t i = 0; i < r->req->count; i++) {
        cli_buffer_puts(b, "<li><b>");
        cli_buffer_escape(b, r->req->tables[i]->name);
        cli_buffer_puts(b, "</b>: ");
        cli_buffer_escape(b, r->req->tables[i]->about);
        cli_buffer_puts(b, "</li>\n");
    }
    cli_buffer_puts(b, "</ul>\n");
    for (size_t i = 0; i < r->req->count; i++) { /* --config: which layers carry which encoding */
        const char *text = r->req->tables[i]->layers;
        if (!text[0]) continue;
        cli_buffer_puts(b, "<h3 id=\"layers\">Layers of ");
        cli_buffer_escape(b, r->req->tables[i]->name);
        cli_buffer_puts(b, "</h3>\n<table class=\"layers\"><tr><th>layers</th><th>position encoding</th></tr>\n");
        for (const char *line = text; *line;) {
            const char *end = strchr(line, '\n'), *colon = strstr(line, ": ");
            size_t n = end ? (size_t)(end - line) : strlen(line);
            char cell[512];
            size_t head = colon && colon < line + n ? (size_t)(colon - line) : n;
            snprintf(cell, sizeof cell, "%.*s", (int)head, line);
            cli_buffer_puts(b, "<tr><td>");
            cli_buffer_escape(b, cell);
            cli_buffer_puts(b, "</td><td>");
            snprintf(cell, sizeof cell, "%.*s", head < n ? (int)(n - head - 2) : 0, head < n ? line + head + 2 : "");
            cli_buffer_escape(b, cell);
            cli_buffer_puts(b, "</td></tr>\n");
            line += n + (end != NULL);
        }
        cli_buffer_puts(b, "</table>\n");
    }
    if (!r->req->default_comparison) {
        look(b, "the <a href=\"#heatmaps\">heat map</a> for structure (stripes = waves, smooth gradient = slow "
                "channels), the <a href=\"#similarity\">similarity curve</a> for whether distant positions stay "
                "distinguishable, and the <a href=\"#health\">health table</a> for NaN/inf and exploding norms.");
    } else
    look(b, "in the <a href=\"#heatmaps\">heat maps</a>, the sinusoidal table's left channels flicker fast and its "
            "right channels change slowly: every position gets a unique mix of fast and slow waves, like the hands of "
            "a clock. RoPE uses the same clock but <em>rotates</em> queries and keys instead of adding a vector, so "
            "attention sees only the distance (<a href=\"#rope\">RoPE scaling</a> shows how long-context models "
            "slow the clock down). The learned table starts as noise: nothing in it knows that 5 is near 6 until "
            "training puts it there. The <em>index</em> baseline grows without bound and the <em>normalized</em> one "
            "changes meaning with the length. Then compare the <a href=\"#similarity\">similarity curves</a>: "
            "sinusoidal and RoPE rows become less alike as positions move apart, learned noise is unrelated at every "
            "distance, and every baseline row points the same way (cosine 1). ALiBi and T5 add nothing to the "
            "tokens; they bias the attention scores by distance (<a href=\"#bias\">bias maps</a>).");
    cli_buffer_puts(b, "<p class=\"note\">Everything here is computed by posenc and drawn by its own code; the file needs "
                       "no network. Tools: hover the heat map for exact values, drag the 3-D surface, pick positions to "
                       "compare.</p>\n</section>\n");
    return EXIT_OK;
}

static int section_heatmaps(report *r) {
    cli_buffer *b = r->html;
    open_section(r, "heatmaps", "Heat maps: position x channel");
    /* the words name only what this page shows: the baselines are in the default comparison only */
    look(b, r->req->default_comparison
                ? "rows are positions (top = first), columns are channels. With RdBu, white is exactly 0, red negative, "
                  "blue positive; viridis runs dark (low) to yellow (high). Zoom into the top-left corner of the "
                  "sinusoidal table to see the fastest waves; grey cells would be NaN or inf."
                : "rows are positions (top = first), columns are channels. With RdBu, white is exactly 0, red negative, "
                  "blue positive; viridis runs dark (low) to yellow (high). Zoom into the top-left corner to see the "
                  "fastest waves; grey cells would be NaN or inf.");
    cli_buffer_puts(b, "<div class=\"tool heatmap-tool\" data-table=\"0\"></div>\n<h3>Static pictures (PNG with "
                       "colorbar, as <code>posenc plot heatmap</code> writes them)</h3>\n<div class=\"grid\">\n");
    for (size_t i = 0; i < r->req->count; i++) {
        const cli_table *t = r->req->tables[i];
        cli_heatmap_style style = {.colormap = colormap_for(r, t), .colorbar = true};
        cli_buffer png = {0};
        int rc = cli_draw_heatmap(r->command, t, &style, false, 512, &png);
        if (rc != EXIT_OK) return rc;
        cli_buffer_puts(b, "<figure><img class=\"heatmap-png\" alt=\"heat map of ");
        cli_buffer_escape(b, t->name);
        cli_buffer_puts(b, "\" src=\"data:image/png;base64,");
        cli_buffer_base64(b, png.data, png.len);
        cli_buffer_free(&png);
        cli_buffer_puts(b, "\"><figcaption>");
        cli_buffer_escape(b, t->name);
        cli_buffer_printf(b, " (%s)</figcaption></figure>\n", cli_colormap_names[style.colormap]);
    }
    cli_buffer_puts(b, "</div>\n");
    cli_heatmap_style style = {.colormap = colormap_for(r, r->req->tables[0]), .colorbar = true};
    cli_buffer svg = {0};
    int rc = cli_draw_heatmap(r->command, r->req->tables[0], &style, true, 512, &svg);
    if (rc == EXIT_OK) figure(r, &svg, "The first table with axes and a colorbar (posenc plot heatmap ... -o FILE.svg).");
    cli_buffer_free(&svg);
    cli_buffer_puts(b, "</section>\n");
    return rc;
}

static int section_compare(report *r) {
    open_section(r, "compare", "Compare positions across channels");
    look(r->html, r->req->default_comparison
                      ? "pick positions (type them, or use the + buttons). In the sinusoidal table, nearby positions agree "
                        "on the slow right-hand channels and differ on the fast left-hand ones; that difference is how "
                        "attention can tell them apart. In the baselines every channel carries the same number."
                      : "pick positions (type them, or use the + buttons). Nearby positions agree on the slow channels "
                        "and differ on the fast ones; that difference is how attention can tell them apart.");
    cli_buffer_puts(r->html, "<div class=\"tool compare-tool\" data-positions=\"0, 10\"></div>\n");
    const cli_table *t = r->req->tables[0];
    size_t rows[3], count = 0;
    const size_t want[3] = {10, 50, 100};
    for (size_t i = 0; i < 3; i++)
        if (want[i] < t->rows) rows[count++] = want[i];
    if (count == 0) rows[count++] = 0;
    cli_buffer svg = {0};
    int rc = cli_draw_curves(r->command, t, rows, count, &svg);
    if (rc == EXIT_OK) figure(r, &svg, "Static version (posenc plot curves --at 10,50,100).");
    cli_buffer_free(&svg);
    cli_buffer_puts(r->html, "</section>\n");
    return rc;
}

static int section_surface(report *r) {
    open_section(r, "surface", "The table as a 3-D surface");
    look(r->html, r->req->default_comparison
                      ? "turn the surface by dragging. The sinusoidal surface is a ripple whose wavelength stretches from "
                        "left to right; a baseline is a tilted plane (index: steep, normalized: from 0 to 1)."
                      : "turn the surface by dragging. Ripples along the channels are the pairs' waves, fast to slow; a "
                        "tilted plane would be a plain position counter.");
    cli_buffer_puts(r->html, "<div class=\"tool surface-tool\" data-table=\"0\"></div>\n");
    const cli_table *t = r->req->tables[0];
    cli_buffer svg = {0};
    int rc = cli_draw_surface(r->command, t, colormap_for(r, t), &svg);
    if (rc == EXIT_OK) figure(r, &svg, "Static version (posenc plot surface).");
    cli_buffer_free(&svg);
    cli_buffer_puts(r->html, "</section>\n");
    return rc;
}

static int section_similarity(report *r) {
    open_section(r, "similarity", "How alike are two positions?");
    look(r->html, "a good encoding starts at 1 (a position is like itself) and falls as the distance grows, so "
                  "nearby tokens look related and far ones distinct. A flat line at 1 means every position points "
                  "the same way.");
    cli_buffer svg = {0};
    int rc = cli_draw_similarity(r->command, r->req->tables, r->req->count, &svg);
    if (rc == EXIT_OK)
        figure(r, &svg, r->req->default_comparison
                            ? "RoPE's curve lies exactly on the sinusoidal one (same frequencies, and a rotation keeps "
                              "lengths), and the two baselines overlap at 1."
                            : NULL);
    cli_buffer_free(&svg);
    cli_buffer_puts(r->html, "</section>\n");
    return rc;
}

static int section_spectrum(report *r) {
    const cli_table *t = NULL;
    for (size_t i = 0; i < r->req->count && !t; i++)
        if (r->req->tables[i]->frequencies) t = r->req->tables[i];
    if (!t) return EXIT_OK; /* nothing with frequencies to show */
    open_section(r, "spectrum", "Wavelengths: the clock hands");
    look(r->html, "each sin/cos pair turns at its own speed; the wavelengths grow geometrically from 2π to about "
                  "2π·base. Pairs above the table-length line never complete a turn inside the table: they act as "
                  "slow, almost linear position counters.");
    cli_buffer svg = {0};
    int rc = cli_draw_spectrum(r->command, t, &svg);
    if (rc == EXIT_OK) figure(r, &svg, NULL);
    cli_buffer_free(&svg);
    cli_buffer_puts(r->html, "</section>\n");
    return rc;
}

static int section_rope(report *r) {
    const cli_table *model = NULL;
    for (size_t i = 0; i < r->req->count; i++)
        if (r->req->tables[i]->is_rope && r->req->tables[i]->rope_factor > 1 &&
            (r->req->tables[i]->rope_scaling == POSENC_ROPE_LINEAR || r->req->tables[i]->rope_scaling == POSENC_ROPE_NTK ||
             r->req->tables[i]->rope_scaling == POSENC_ROPE_YARN || r->req->tables[i]->rope_scaling == POSENC_ROPE_LLAMA3) &&
            r->req->tables[i]->rope_original_max > 0)
            model = r->req->tables[i];
    bool any = r->req->default_comparison || model;
    for (size_t i = 0; i < r->req->count; i++) any |= r->req->tables[i]->is_rope;
    if (!any) return EXIT_OK;
    open_section(r, "rope", "RoPE and long context: slowing the clock");
    look(r->html, "RoPE turns each pair of query/key channels by position x frequency, so a query-key score depends on "
                  "their distance only. A model trained on 8192 tokens has never seen the slow pairs complete a turn; "
                  "to read 8x longer texts, scaling schemes divide frequencies by up to the factor. Linear divides "
                  "all of them (blurring the fast, local pairs), NTK bends the base, YaRN and Llama 3 keep the fast "
                  "pairs (green), interpolate the slow ones (red) and blend in between (amber).");
    cli_buffer svg = {0};
    int rc;
    if (model) {
        rc = cli_draw_rope_bands(r->command, model->rope_head_dim, model->rope_base, model->rope_scaling,
                                 model->rope_factor, model->rope_original_max, &svg);
        if (rc == EXIT_OK) figure(r, &svg, "This table's own RoPE settings, with the other schemes at the same factor.");
        if (rc == EXIT_OK && model->rope_long_frequencies) {
            cli_buffer_free(&svg);
            rc = cli_draw_rope_long(r->command, model, &svg);
            if (rc == EXIT_OK)
                figure(r, &svg, "The model's RoPE from position 16 to the longest context it claims, sampled: a "
                                "pair's model line turning slower than its unscaled line is the scaling at work; pairs "
                                "the scheme keeps lie on their unscaled line.");
        }
    } else {
        rc = cli_draw_rope_bands(r->command, 128, 500000, POSENC_ROPE_LLAMA3, 8, 8192, &svg);
        if (rc == EXIT_OK)
            figure(r, &svg, "Llama 3.1's settings: head_dim 128, base 500000, factor 8, trained on 8192 tokens "
                            "(posenc plot rope-bands).");
    }
    cli_buffer_free(&svg);
    cli_buffer_puts(r->html, "</section>\n");
    return rc;
}

static int bias_map(report *r, const cli_bias_request *q, cli_colormap map, const char *caption) {
    cli_table t;
    int rc = cli_bias_table(r->command, q, &t);
    if (rc != EXIT_OK) return rc;
    cli_grid g = {t.values, t.rows, t.cols};
    cli_reduced red;
    rc = cli_grid_reduce(r->command, &g, 256, 256, &red);
    if (rc == EXIT_OK) {
        cli_heatmap_style style = {.colormap = map, .colorbar = true};
        char title[128];
        snprintf(title, sizeof title, "%s", t.name);
        cli_axes_text text = {title, t.about, "key position j", "query position i", 0, 0};
        cli_buffer svg = {0};
        rc = cli_heatmap_svg(r->command, &red, &style, &text, &svg);
        if (rc == EXIT_OK) figure(r, &svg, caption);
        cli_buffer_free(&svg);
        cli_reduced_free(&red);
    }
    cli_table_free(&t);
    return rc;
}

static int section_bias(report *r) {
    if (!r->req->default_comparison) return EXIT_OK;
    open_section(r, "bias", "ALiBi and T5: position as a bias on attention scores");
    look(r->html, "these schemes add nothing to the token vectors. ALiBi subtracts slope x distance from each score: "
                  "head 0 (steep) attends locally, the last heads (flat) see far back, and nothing is learned, so it "
                  "extrapolates to longer inputs. T5 learns one bias per bucket: exact buckets for the nearest "
                  "tokens, logarithmically wider ones further away, one shared bucket beyond max_distance.");
    cli_bias_request q;
    cli_bias_request_default(&q);
    q.len = (int64_t)(r->req->tables[0]->rows < 256 ? r->req->tables[0]->rows : 256);
    cli_buffer svg = {0};
    int rc = bias_map(r, &q, CLI_CMAP_RDBU, "ALiBi, causal, head 0 of 8 (posenc plot bias --scheme alibi).");
    if (rc == EXIT_OK) rc = cli_draw_bias_profile(r->command, &q, &svg);
    if (rc == EXIT_OK) figure(r, &svg, NULL);
    cli_buffer_free(&svg);
    q.scheme = 1;
    if (rc == EXIT_OK) rc = bias_map(r, &q, CLI_CMAP_VIRIDIS, "T5 encoder buckets (posenc plot bias --scheme t5).");
    if (rc == EXIT_OK) rc = cli_draw_bias_profile(r->command, &q, &svg);
    if (rc == EXIT_OK) figure(r, &svg, NULL);
    cli_buffer_free(&svg);
    cli_buffer_puts(r->html, "</section>\n");
    return rc;
}

static int section_precision(report *r) {
    const cli_table *t = NULL;
    for (size_t i = 0; i < r->req->count && !t; i++)
        if (r->req->tables[i]->has_sinusoid) t = r->req->tables[i];
    if (!t) return EXIT_OK;
    open_section(r, "precision", "Precision: what float32, bfloat16 and float16 do to positions");
    look(r->html, "the angle p x w is formed in the storage dtype. bfloat16 has 8 significant bits: position 257 is "
                  "already stored as 256, and the fast pairs' angles are off by whole radians, so distinct positions "
                  "get identical encodings (the 'first repeated' columns). float16 overflows at 65520. float32 stays "
                  "below 0.01 rad here, but its error also grows with the position.");
    cli_buffer svg = {0}, table = {0};
    /* 16384 positions: the audit costs O(positions x pairs) per dtype and shows every effect but f16 overflow */
    int rc = cli_draw_precision(r->command, &t->sinusoid, 16384, &svg, &table);
    if (rc == EXIT_OK) {
        figure(r, &svg, NULL);
        cli_buffer_append(r->html, table.data, table.len);
    }
    cli_buffer_free(&svg);
    cli_buffer_free(&table);
    cli_buffer_puts(r->html, "</section>\n");
    return rc;
}

/* A statistic as the table prints it: 6 significant digits, and exactly 0 for a
 * value below the rounding of its computation (|v| <= 1e-12 x the scale of the
 * numbers it came from), so a zero variance prints 0, not 3.07e-31. */
static void stat_cell(cli_buffer *b, double v, double scale) {
    if (!isfinite(v)) cli_buffer_puts(b, "<td>–</td>");
    else if (fabs(v) <= 1e-12 * scale) cli_buffer_puts(b, "<td>0</td>");
    else cli_buffer_printf(b, "<td>%.6g</td>", v);
}

/* What the library's analysis says about one table (the health table's last rows). */
typedef struct {
    bool ok;
    posenc_health h;
    char error[sizeof(((posenc_error *)0)->message)];
} table_health;

static void analyze_for_report(const cli_table *t, table_health *out) {
    posenc_array view = {POSENC_DTYPE_F64, 2, {t->rows, t->cols}, t->rows * t->cols, t->values};
    posenc_health_options opt = {.max_rows_pairs = 512, .max_offset = 1};
    posenc_error err = {0};
    out->ok = posenc_health_analyze(&view, &opt, &out->h, &err) == POSENC_OK;
    snprintf(out->error, sizeof out->error, "%s", out->ok ? "" : err.message);
}

static int section_health(report *r) {
    cli_buffer *b = r->html;
    open_section(r, "health", "Health check: variance and norm per position");
    if (!r->req->default_comparison)
        look(b, "a sinusoidal or RoPE row always has the same length, because each sin² + cos² = 1, so no position is "
                "louder than another. In the table, watch for NaN/inf and for a cosine near 1: two positions that point "
                "the same way. The row PE(p+k) = M(k) PE(p) checks that moving k positions is a fixed rotation of every "
                "pair, whatever p is (residual ~1e-14, rounding).");
    else
    look(b, "the second article's check. A sinusoidal row always has the same length, √(dim/2), because each "
            "sin² + cos² = 1, so no position is louder than another; its variance across channels rises over the "
            "first positions (the slow channels all start near sin 0 = 0, cos 0 = 1) and then levels off. The index "
            "baseline's norm grows with the position; both baselines have zero variance across channels, i.e. every "
            "channel says the same thing. In the table, watch for NaN/inf and for a cosine near 1: two positions "
            "that point the same way. The row PE(p+k) = M(k) PE(p) is the first article's key property: for a sinusoidal "
            "table, moving k positions is a fixed rotation M(k) of every pair, whatever p is (residual ~1e-14, rounding).");
    cli_buffer svg = {0};
    int rc = cli_draw_row_stat(r->command, r->req->tables, r->req->count, false, &svg);
    if (rc == EXIT_OK) figure(r, &svg, NULL);
    cli_buffer_free(&svg);
    if (rc == EXIT_OK) rc = cli_draw_row_stat(r->command, r->req->tables, r->req->count, true, &svg);
    if (rc == EXIT_OK) figure(r, &svg, NULL);
    cli_buffer_free(&svg);
    if (rc != EXIT_OK) return rc;
    /* one column per table and one row per measure, so the table stays as wide as
     * the page for any number of encodings (no sideways scrolling) */
    size_t n = r->req->count;
    table_health *health = calloc(n, sizeof *health);
    if (!health) return cli_fail(r->command, EXIT_RUNTIME, NULL, "out of memory");
    for (size_t i = 0; i < n; i++) analyze_for_report(r->req->tables[i], &health[i]);
    cli_buffer_puts(b, "<table class=\"stats\"><tr><th>measure</th>");
    for (size_t i = 0; i < n; i++) {
        cli_buffer_puts(b, "<th>");
        cli_buffer_escape(b, r->req->tables[i]->name);
        cli_buffer_puts(b, "</th>");
    }
    cli_buffer_puts(b, "</tr>\n<tr><td>shape</td>");
    for (size_t i = 0; i < n; i++) cli_buffer_printf(b, "<td>%zu x %zu</td>", r->req->tables[i]->rows, r->req->tables[i]->cols);
    static const char *const names[] = {"min", "max", "mean |v|", "mean variance", "smallest norm", "largest norm",
                                        "most similar two positions (cosine)"};
    for (size_t m = 0; m < sizeof names / sizeof *names; m++) {
        cli_buffer_printf(b, "</tr>\n<tr><td>%s</td>", names[m]);
        for (size_t i = 0; i < n; i++) {
            if (!health[i].ok) {
                cli_buffer_puts(b, "<td>–</td>");
                continue;
            }
            /* every number from the library's analysis (posenc analyze): one definition */
            const posenc_health *h = &health[i].h;
            double variance = 0, amp = fmax(fabs(h->min), fabs(h->max)); /* amp: the scale of the values */
            size_t counted = 0;
            for (size_t p = 0; p < h->rows; p++)
                if (isfinite(h->row_variance[p])) variance += h->row_variance[p], counted++;
            const double value[] = {h->min, h->max, h->mean_abs, counted ? variance / (double)counted : NAN,
                                    h->norm_min, h->norm_max, h->max_cosine};
            const double scale[] = {amp, amp, amp, amp * amp, h->norm_max, h->norm_max, 1};
            stat_cell(b, value[m], scale[m]);
        }
    }
    /* the library's analysis (posenc analyze): closest pair and the fitted sinusoid model */
    cli_buffer_puts(b, "</tr>\n<tr><td>closest two positions (distance)</td>");
    for (size_t i = 0; i < n; i++) {
        const table_health *th = &health[i];
        size_t first = (size_t)r->req->tables[i]->first_position;
        if (th->ok) cli_buffer_printf(b, "<td>%zu and %zu: %.4g</td>", th->h.closest_a + first, th->h.closest_b + first,
                                      th->h.closest_distance);
        else cli_buffer_puts(b, "<td>–</td>");
    }
    cli_buffer_puts(b, "</tr>\n<tr><td>sinusoid model found</td>");
    for (size_t i = 0; i < n; i++) {
        const table_health *th = &health[i];
        if (th->ok && th->h.fit.found)
            cli_buffer_printf(b, "<td>yes: %d pairs, base %.6g (%s)</td>", th->h.fit.pairs, th->h.fit.base,
                              cli_freqs_name(th->h.fit.freqs));
        else if (th->ok) cli_buffer_puts(b, "<td>no</td>");
        else {
            cli_buffer_puts(b, "<td>");
            cli_buffer_escape(b, th->error);
            cli_buffer_puts(b, "</td>");
        }
    }
    cli_buffer_puts(b, "</tr>\n<tr><td>PE(p+k) = M(k) PE(p): worst residual</td>");
    for (size_t i = 0; i < n; i++) {
        if (health[i].ok && health[i].h.linearity_available) cli_buffer_printf(b, "<td>%.2g</td>", health[i].h.linearity_worst);
        else cli_buffer_puts(b, "<td>–</td>");
    }
    cli_buffer_puts(b, "</tr>\n<tr><td>NaN/inf cells</td>");
    for (size_t i = 0; i < n; i++) {
        if (health[i].ok) cli_buffer_printf(b, "<td>%zu</td>", health[i].h.nonfinite);
        else cli_buffer_puts(b, "<td>–</td>");
        if (health[i].ok) posenc_health_free(&health[i].h);
    }
    cli_buffer_puts(b, "</tr>\n");
    free(health);
    cli_buffer_puts(b, "</table>\n<p class=\"note\">Cosine and closest pair (Euclidean) over the first 512 positions; "
                       "variance is the population variance across the channels of one position, averaged over positions. "
                       "Every number comes from the library's analysis (<code>posenc analyze</code>).</p>\n"
                       "</section>\n");
    return EXIT_OK;
}

/* A JSON string that is also safe inside <script>: '<' is written as \u003c. */
static void json_string(cli_buffer *b, const char *text) {
    cli_buffer_puts(b, "\"");
    for (const unsigned char *p = (const unsigned char *)text; *p;) {
        size_t n = cli_utf8_length((const char *)p);
        if (n == 0) cli_buffer_puts(b, "\\ufffd"); /* not UTF-8: the page would not decode */
        else if (*p == '"' || *p == '\\') cli_buffer_printf(b, "\\%c", *p);
        else if (*p < 0x20 || *p == '<') cli_buffer_printf(b, "\\u%04x", *p);
        else cli_buffer_append(b, p, n);
        p += n ? n : 1;
    }
    cli_buffer_puts(b, "\"");
}

/* The data of the interactive tools; NaN/inf become null (JSON has no NaN). */
static int write_data(report *r) {
    cli_buffer *b = r->html;
    cli_buffer_puts(b, "<script type=\"application/json\" id=\"posenc-data\">{\"tables\":[\n");
    for (size_t i = 0; i < r->req->count; i++) {
        const cli_table *t = r->req->tables[i];
        cli_grid g = {t->values, t->rows, t->cols};
        cli_reduced red;
        int rc = cli_grid_reduce(r->command, &g, REPORT_MAX_CELLS, REPORT_MAX_CELLS, &red);
        if (rc != EXIT_OK) return rc;
        cli_report_reduction(r->command, "interactive heat map", &g, &red);
        cli_heatmap_style style = {.colormap = colormap_for(r, t)};
        double lo, hi;
        cli_heatmap_range(&style, &red, &lo, &hi);
        cli_buffer_puts(b, i ? ",{\"name\":" : "{\"name\":");
        json_string(b, t->name);
        cli_buffer_printf(b, ",\"rows\":%zu,\"cols\":%zu,\"first\":%lld,\"rowBlock\":%zu,\"colBlock\":%zu,"
                             "\"cmap\":\"%s\",\"lo\":%.17g,\"hi\":%.17g,\"v\":[",
                          red.rows, red.cols, (long long)t->first_position, red.row_block, red.col_block,
                          cli_colormap_names[style.colormap], lo, hi);
        for (size_t k = 0; k < red.rows * red.cols; k++) {
            double v = red.values[k];
            if (isfinite(v)) cli_buffer_printf(b, k ? ",%.9g" : "%.9g", v);
            else cli_buffer_puts(b, k ? ",null" : "null");
        }
        cli_buffer_puts(b, "]}\n");
        cli_reduced_free(&red);
    }
    cli_buffer_puts(b, "]}</script>\n");
    return EXIT_OK;
}

/* posenc report [--lab RESULTS] (the section itself is render/report_lab.c) */
static int section_lab(report *r) {
    return r->req->lab_count ? cli_lab_report_section(r->command, r->req->lab_results, r->req->lab_count,
                                                      r->req->lab_found, r->html)
                             : EXIT_OK;
}

/* posenc report --identify CACHE (the section itself is render/report_identify.c) */
static int section_identify(report *r) {
    return r->req->identify ? cli_identify_report_section(r->command, r->req->identify, r->req->identify_sin,
                                                          r->req->identify_layout, r->html)
                            : EXIT_OK;
}

typedef struct {
    const char *id, *title;
    int (*write)(report *r);
} section;

/* Order of the page. New families add a line (and a function) here. */
static const section sections[] = {
    {"overview", "How to read", section_overview},
    {"heatmaps", "Heat maps", section_heatmaps},
    {"compare", "Compare positions", section_compare},
    {"surface", "3-D surface", section_surface},
    {"similarity", "Similarity", section_similarity},
    {"spectrum", "Wavelengths", section_spectrum},
    {"rope", "RoPE scaling", section_rope},
    {"bias", "ALiBi & T5", section_bias},
    {"health", "Health", section_health},
    {"precision", "Precision", section_precision},
    {"lab", "Measured here", section_lab},
    {"identify", "Which RoPE", section_identify},
    {NULL, NULL, NULL}};

int cli_report_html(const char *command, const cli_report_request *req, cli_buffer *html) {
    if (req->count == 0) return cli_fail(command, EXIT_USAGE, NULL, "nothing to report");
    for (size_t i = 0; i < req->count; i++)
        if (req->tables[i]->rows == 0 || req->tables[i]->cols == 0)
            return cli_fail(command, EXIT_USAGE, NULL, "table '%s' is empty: nothing to draw", req->tables[i]->name);
    report r = {req, html, command};
    cli_buffer *b = html;
    /* The Content-Security-Policy forbids every network fetch: the page can only use what it carries. */
    cli_buffer_puts(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                       "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; "
                       "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n"
                       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                       "<title>posenc report: positional encodings, seen</title>\n<style>\n");
    cli_buffer_append(b, report_css, sizeof report_css - 1);
    cli_buffer_puts(b, "</style>\n</head>\n<body>\n<header>\n<h1>Positional encodings, seen</h1>\n<p>");
    cli_buffer_escape(b, req->default_comparison
                             ? "How a Transformer can know where each token sits: the sinusoidal table of \"Attention "
                               "Is All You Need\" next to RoPE, a learned table, the ALiBi and T5 attention biases and "
                               "the naive baselines, as pictures you can zoom, turn and compare."
                             : "Pictures and statistics of the table you asked for.");
    /* sections are written first so the navigation lists only those with content */
    cli_buffer body = {0};
    bool written[sizeof sections / sizeof *sections] = {false};
    r.html = &body;
    cli_progress progress; /* big tables take a while: say where it is, on a terminal */
    cli_progress_begin(&progress, command, (double)(sizeof sections / sizeof *sections - 1));
    for (int i = 0; sections[i].id; i++) {
        size_t before = body.len;
        cli_progress_step(&progress, i, sections[i].title);
        int rc = sections[i].write(&r);
        /* A picture the data cannot give (a surface of a 1 x 1 table, the similarity
         * of all-zero rows) leaves its section out, said on the page and on stderr;
         * the rest of the report is drawn. The lab section reads files: its
         * failure (a bad results file) fails the report. */
        if (rc != EXIT_OK && strcmp(sections[i].id, "lab") != 0 && strcmp(sections[i].id, "identify") != 0 &&
            !body.failed) {
            cli_progress_end(&progress);
            fprintf(stderr, "posenc %s: the '%s' section is left out (the reason is above); the rest of the report is drawn\n",
                    command, sections[i].title);
            body.len = before; /* drop what the section had written */
            open_section(&r, sections[i].id, sections[i].title);
            cli_buffer_puts(&body, "<p class=\"note\">Left out: this table cannot give this picture (posenc said why "
                                   "on stderr when it wrote the report).</p>\n</section>\n");
            rc = EXIT_OK;
        }
        if (rc != EXIT_OK) {
            cli_progress_end(&progress);
            cli_buffer_free(&body);
            return rc;
        }
        written[i] = body.len > before;
    }
    cli_progress_end(&progress);
    r.html = b;
    cli_buffer_puts(b, "</p>\n<nav>");
    for (int i = 0; sections[i].id; i++)
        if (written[i]) cli_buffer_printf(b, "<a href=\"#%s\">%s</a>", sections[i].id, sections[i].title);
    cli_buffer_puts(b, "</nav>\n</header>\n<main>\n");
    cli_buffer_append(b, body.data ? body.data : "", body.len);
    if (body.failed) b->failed = true;
    cli_buffer_free(&body);
    cli_buffer_puts(b, "</main>\n<footer>Made by posenc " POSENC_VERSION_STRING " with <code>");
    cli_buffer_escape(b, req->command_line ? req->command_line : "posenc report");
    cli_buffer_puts(b, "</code>. Colormaps: ColorBrewer RdBu, viridis. No network was used or is needed.</footer>\n");
    int rc = write_data(&r);
    if (rc != EXIT_OK) return rc;
    cli_buffer_puts(b, "<script>\n");
    cli_buffer_append(b, report_js, sizeof report_js - 1);
    cli_buffer_puts(b, "</script>\n</body>\n</html>\n");
    return b->failed ? cli_fail(command, EXIT_RUNTIME, NULL, "out of memory while writing the report") : EXIT_OK;
}
