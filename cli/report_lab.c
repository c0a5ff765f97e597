/* report_lab.c: the report's "Measured here" section (posenc report --lab
 * RESULTS): bits per byte vs evaluation length and the claims table, from the
 * lab's result lines (docs/lab-experiments.md). */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include "cli.h"
#include "experiments.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

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

int cli_lab_report_section(const char *command, const char *results_path, cli_buffer *html) {
    void *data = NULL;
    size_t size = 0;
    posenc_error err = {0};
    if (posenc_file_read_all(results_path, 0, &data, &size, &err) != POSENC_OK) return cli_fail_status(command, &err);
    char *text = malloc(size + 1), *save = NULL; /* the file's bytes are not NUL-terminated */
    if (!text) {
        free(data);
        return cli_fail(command, EXIT_RUNTIME, NULL, "out of memory reading %s", results_path);
    }
    memcpy(text, data, size);
    text[size] = '\0';
    free(data);
    data = text;
    cJSON *runs = cJSON_CreateArray();
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        cJSON *run = cJSON_Parse(line);
        if (!cJSON_IsString(cJSON_GetObjectItem(run, "id"))) {
            cJSON_Delete(run);
            cJSON_Delete(runs);
            free(data);
            return cli_fail(command, EXIT_RUNTIME, NULL, "%s is not a lab result file (JSON lines with an id)", results_path);
        }
        cJSON_AddItemToArray(runs, run);
    }
    free(data);
    cli_buffer_puts(html, "<section id=\"lab\">\n<h2>Measured here: trained short, tested long</h2>\n<p>");
    cli_buffer_escape(html, "Small byte-level Transformers trained by posenc lab with each position scheme at one length and "
                            "evaluated at longer ones (docs/lab-experiments.md). Results: ");
    cli_buffer_escape(html, results_path);
    cli_buffer_puts(html, "</p>\n<figure>");
    cli_buffer svg = {0};
    int rc = cli_lab_plot_svg(command, results_path, NULL, "bpb", &svg);
    if (rc == EXIT_OK) {
        const char *start = svg.data ? strstr(svg.data, "<svg") : NULL; /* inline, no XML prologue */
        if (start) cli_buffer_append(html, start, svg.len - (size_t)(start - svg.data));
    }
    cli_buffer_free(&svg);
    cli_buffer_puts(html, "<figcaption>Validation bits per byte vs evaluation length (log x); band: min-max over seeds."
                          "</figcaption></figure>\n<h3>The articles' claims</h3>\n");
    char *table = NULL;
    if (rc == EXIT_OK && lab_claims_markdown(runs, &table, &err) != POSENC_OK) rc = cli_fail_status(command, &err);
    if (table) markdown_table_html(html, table);
    free(table);
    cJSON_Delete(runs);
    cli_buffer_puts(html, "</section>\n");
    return rc;
}
