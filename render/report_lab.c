/* report_lab.c: the report's "Measured here" section: from the lab's result
 * lines (docs/lab-experiments.md), a picture per result file (bits per byte, or
 * task accuracy, vs evaluation length), the claims table over every run, and a
 * trained learned position table next to the sinusoid of the same shape.
 * `posenc report --lab FILE` reads FILE; plain `posenc report` reads the files
 * `posenc lab run NAME` writes by default (lab-NAME.jsonl here) when there are any. */
#define _POSIX_C_SOURCE 200809L /* access */
#include "render.h"
#include "experiments.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

size_t cli_lab_default_results(char names[][64], size_t max) {
    size_t n = 0;
    for (size_t i = 0; lab_experiment_names[i] && n < max; i++) {
        snprintf(names[n], 64, "lab-%s.jsonl", lab_experiment_names[i]);
        if (access(names[n], F_OK) == 0) n++;
    }
    return n;
}

/* Markdown table rows -> HTML table (cells escaped). */
static void markdown_table_html(cli_buffer *b, const char *md) {
    cli_buffer_puts(b, "<table>\n");
    int row = 0;
    for (const char *line = md; *line; row++) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        if (len > 3 && strncmp(line, "|---", 4) != 0) {
            cli_buffer_puts(b, "<tr>");
            const char *cell = line + 1, *stop = line + len;
            while (cell < stop) {
                const char *bar = memchr(cell, '|', (size_t)(stop - cell));
                if (!bar) break;
                char text[1024];
                size_t n = (size_t)(bar - cell) < sizeof text - 1 ? (size_t)(bar - cell) : sizeof text - 1;
                memcpy(text, cell, n);
                text[n] = '\0';
                cli_buffer_puts(b, row == 0 ? "<th>" : "<td>");
                cli_buffer_escape(b, text);
                cli_buffer_puts(b, row == 0 ? "</th>" : "</td>");
                cell = bar + 1;
            }
            cli_buffer_puts(b, "</tr>\n");
        }
        line += len + (end ? 1 : 0);
    }
    cli_buffer_puts(b, "</table>\n");
}

/* The metric a file's picture shows: bits per byte for text runs, else task accuracy. */
static const char *picture_metric(const cJSON *runs) {
    bool accuracy = false;
    const cJSON *run, *e;
    cJSON_ArrayForEach(run, runs) cJSON_ArrayForEach(e, cJSON_GetObjectItem(run, "evals")) {
        if (cJSON_IsNumber(cJSON_GetObjectItem(e, "bpb"))) return "bpb";
        accuracy |= cJSON_IsNumber(cJSON_GetObjectItem(e, "accuracy"));
    }
    return accuracy ? "accuracy" : NULL;
}

static void inline_svg(cli_buffer *html, const cli_buffer *svg) {
    const char *start = svg->data ? strstr(svg->data, "<svg") : NULL; /* inline, no XML prologue */
    if (start) cli_buffer_append(html, start, svg->len - (size_t)(start - svg->data));
}

/* The first run (in file order) with a trained learned table: scheme "learned" first, then any. */
static const cJSON *learned_run(const cJSON *runs) {
    const cJSON *run, *any = NULL;
    cJSON_ArrayForEach(run, runs) {
        const cJSON *t = cJSON_GetObjectItem(run, "position_table"), *scheme = cJSON_GetObjectItem(run, "scheme");
        if (!cJSON_IsObject(t)) continue;
        if (cJSON_IsString(scheme) && strcmp(scheme->valuestring, "learned") == 0) return run;
        if (!any) any = run;
    }
    return any;
}

/* The trained table as a cli_table (EXIT_* code; a malformed table is an error naming the run). */
static int table_from_run(const char *command, const char *path, const cJSON *run, cli_table *t) {
    memset(t, 0, sizeof *t);
    const cJSON *pt = cJSON_GetObjectItem(run, "position_table"), *id = cJSON_GetObjectItem(run, "id");
    const cJSON *shape = cJSON_GetObjectItem(pt, "shape"), *values = cJSON_GetObjectItem(pt, "values");
    const cJSON *r = cJSON_GetArrayItem(shape, 0), *c = cJSON_GetArrayItem(shape, 1);
    double rows = cJSON_IsNumber(r) ? r->valuedouble : 0, cols = cJSON_IsNumber(c) ? c->valuedouble : 0;
    if (!(rows >= 1 && cols >= 1 && rows * cols <= (double)LAB_RESULT_TABLE_MAX && rows == (size_t)rows &&
          cols == (size_t)cols) || cJSON_GetArraySize(shape) != 2 || !cJSON_IsArray(values) ||
        (double)cJSON_GetArraySize(values) != rows * cols)
        return cli_fail(command, EXIT_RUNTIME, NULL, "%s: run %s has a malformed position_table (shape and values disagree)",
                        path, cJSON_IsString(id) ? id->valuestring : "?");
    t->rows = (size_t)rows, t->cols = (size_t)cols;
    t->values = malloc(sizeof *t->values * t->rows * t->cols);
    if (!t->values) return cli_fail(command, EXIT_RUNTIME, NULL, "out of memory");
    size_t k = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, values) t->values[k++] = cJSON_IsNumber(v) ? v->valuedouble : 0;
    snprintf(t->name, sizeof t->name, "learned, trained (%s)", cJSON_IsString(id) ? id->valuestring : "?");
    return EXIT_OK;
}

/* Two heat maps side by side: the learned table as trained, and the sinusoid of the same shape. */
static int learned_next_to_sinusoid(const char *command, const cJSON *run, const char *path, cli_buffer *html) {
    cli_table learned, sinusoid;
    int rc = table_from_run(command, path, run, &learned);
    if (rc != EXIT_OK) return rc;
    rc = cli_table_make(command, "sinusoidal", (int64_t)learned.rows, (int32_t)learned.cols, &sinusoid);
    if (rc != EXIT_OK) {
        cli_table_free(&learned);
        return rc;
    }
    const cJSON *id = cJSON_GetObjectItem(run, "id"), *steps = cJSON_GetObjectItem(run, "steps");
    cli_buffer_puts(html, "<h3>A trained learned table next to the sinusoid</h3>\n<p>");
    char words[400];
    snprintf(words, sizeof words,
             "Left: the position table (wpe, %zu positions x %zu channels) that run %s learned in %.0f steps from a "
             "random start; right: the sinusoid of the same shape (Vaswani et al.). Rows are positions (top = first), "
             "columns channels; RdBu, white = 0, each with its own range.",
             learned.rows, learned.cols, cJSON_IsString(id) ? id->valuestring : "?",
             cJSON_IsNumber(steps) ? steps->valuedouble : 0.0);
    cli_buffer_escape(html, words);
    cli_buffer_puts(html, "</p>\n<div class=\"grid\">\n");
    const cli_table *pair[2] = {&learned, &sinusoid};
    for (int i = 0; i < 2 && rc == EXIT_OK; i++) {
        cli_heatmap_style style = {.colormap = CLI_CMAP_RDBU, .colorbar = true};
        cli_buffer svg = {0};
        rc = cli_draw_heatmap(command, pair[i], &style, true, 512, &svg);
        if (rc == EXIT_OK) {
            cli_buffer_puts(html, "<figure class=\"lab-table\">");
            inline_svg(html, &svg);
            cli_buffer_puts(html, "<figcaption>");
            cli_buffer_escape(html, i == 0 ? pair[i]->name : "sinusoidal (fixed)");
            cli_buffer_puts(html, "</figcaption></figure>\n");
        }
        cli_buffer_free(&svg);
    }
    cli_buffer_puts(html, "</div>\n");
    cli_table_free(&learned);
    cli_table_free(&sinusoid);
    return rc;
}

int cli_lab_report_section(const char *command, const char *const *paths, size_t count, bool found, cli_buffer *html) {
    cJSON *all = cJSON_CreateArray();
    const char *used[CLI_LAB_MAX_RESULTS];
    cJSON *per_file[CLI_LAB_MAX_RESULTS] = {NULL};
    size_t files = 0;
    const cJSON *learned = NULL;
    const char *learned_path = NULL;
    int rc = all ? EXIT_OK : cli_fail(command, EXIT_RUNTIME, NULL, "out of memory");
    for (size_t i = 0; i < count && i < CLI_LAB_MAX_RESULTS && rc == EXIT_OK; i++) {
        cJSON *runs = cli_lab_read_results(command, &paths[i], 1, false, 0);
        if (!runs) {
            rc = EXIT_RUNTIME; /* the reader named the file and line */
            break;
        }
        if (cJSON_GetArraySize(runs) == 0) {
            cJSON_Delete(runs);
            if (found) {
                cli_note(command, "%s holds no lab runs: skipped", paths[i]);
                continue;
            }
            rc = cli_lab_no_runs(command, paths[i]);
            break;
        }
        used[files] = paths[i];
        per_file[files++] = runs;
    }
    if (rc == EXIT_OK && files > 0) {
        cli_buffer_puts(html, "<section id=\"lab\">\n<h2>Measured here: trained short, tested long</h2>\n<p>");
        cli_buffer_escape(html, "Small byte-level Transformers trained by posenc lab with each position scheme at one length "
                                "and evaluated at longer ones (docs/lab-experiments.md). ");
        cli_buffer_escape(html, found ? "Results found here (the files posenc lab run writes by default): "
                                      : "Results: ");
        for (size_t f = 0; f < files; f++) {
            cli_buffer_printf(html, "%s<code>", f ? ", " : "");
            cli_buffer_escape(html, used[f]);
            cli_buffer_printf(html, "</code> (%d run%s)", cJSON_GetArraySize(per_file[f]),
                              cJSON_GetArraySize(per_file[f]) == 1 ? "" : "s");
        }
        cli_buffer_puts(html, ".</p>\n");
    }
    for (size_t f = 0; f < files && rc == EXIT_OK; f++) {
        const char *metric = picture_metric(per_file[f]);
        cli_note(command, "Measured here: %s (%d runs)", used[f], cJSON_GetArraySize(per_file[f]));
        if (metric) {
            cli_buffer svg = {0};
            rc = cli_lab_plot_svg(command, per_file[f], used[f], NULL, metric, &svg);
            if (rc == EXIT_OK) {
                cli_buffer_puts(html, "<figure>");
                inline_svg(html, &svg);
                cli_buffer_puts(html, "<figcaption>");
                cli_buffer_escape(html, used[f]);
                cli_buffer_puts(html, strcmp(metric, "bpb") == 0
                                          ? ": validation bits per byte vs evaluation length (log x); band: min-max over seeds."
                                          : ": exact-match accuracy vs task size (log x); band: min-max over seeds.");
                cli_buffer_puts(html, "</figcaption></figure>\n");
            }
            cli_buffer_free(&svg);
        }
        /* the shared-target protocol's pictures (issue 28), where the runs carry them: where
           a scheme breaks (bits per byte by context at the longest length) and what its
           attention does at L and 4L (entropy per layer and head) */
        static const char *const extra[][2] = {
            {"by_context", ": bits per byte by context before the target, at the longest length (windows view of the shared "
                           "targets; log x); band: min-max over seeds."},
            {"entropy", ": attention entropy (nats) per head, layer by layer, at the training length L and at 4L; band: "
                        "min-max over seeds."}};
        for (size_t k = 0; k < 2 && rc == EXIT_OK && metric && strcmp(metric, "bpb") == 0; k++) {
            bool has = false;
            const cJSON *run, *e;
            cJSON_ArrayForEach(run, per_file[f]) {
                has |= k == 1 && cJSON_IsArray(cJSON_GetObjectItem(run, "attention"));
                cJSON_ArrayForEach(e, cJSON_GetObjectItem(run, "evals")) has |= k == 0 && cJSON_IsArray(cJSON_GetObjectItem(e, "bpb_by_context"));
            }
            if (!has) continue;
            cli_buffer svg = {0};
            rc = cli_lab_plot_svg(command, per_file[f], used[f], NULL, extra[k][0], &svg);
            if (rc == EXIT_OK) {
                cli_buffer_puts(html, "<figure>");
                inline_svg(html, &svg);
                cli_buffer_puts(html, "<figcaption>");
                cli_buffer_escape(html, used[f]);
                cli_buffer_puts(html, extra[k][1]);
                cli_buffer_puts(html, "</figcaption></figure>\n");
            }
            cli_buffer_free(&svg);
        }
        if (!learned) learned = learned_run(per_file[f]), learned_path = used[f];
        /* move the runs into the one array the claims read (pointers stay valid) */
        while (cJSON_GetArraySize(per_file[f]) > 0) cJSON_AddItemToArray(all, cJSON_DetachItemFromArray(per_file[f], 0));
    }
    if (rc == EXIT_OK && files > 0) {
        posenc_error err = {0};
        char *table = NULL;
        cli_buffer_puts(html, "<h3>The articles' claims</h3>\n");
        if (lab_claims_markdown(all, &table, NULL, &err) != POSENC_OK) rc = cli_fail_status(command, &err);
        if (table) markdown_table_html(html, table);
        free(table);
        if (rc == EXIT_OK && learned) rc = learned_next_to_sinusoid(command, learned, learned_path, html);
        cli_buffer_puts(html, "</section>\n");
    }
    for (size_t f = 0; f < files; f++) cJSON_Delete(per_file[f]);
    cJSON_Delete(all);
    return rc;
}
