/* cmd_lab_plot.c: `posenc lab plot`: metric vs evaluation length (log x, one
 * line per configuration, min-max band over seeds) or training curves, as SVG
 * or PNG (chosen by the output's extension, like `posenc plot`). The pictures
 * are drawn by render/lab_plot.c. */
#include "cli.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

static const cli_option plot_options[] = {
    {"o", "FILE", "picture to write: FILE.svg or FILE.png (required)"},
    {"experiment", "NAME", "only runs of this experiment"},
    {"metric", "M", "bpb (default) | bpb_sliding | accuracy | answer_bits (task runs: bits per answer token) | passkey_accuracy | passkey_bits | curve (training bits per byte "
                    "vs step) | by_context (bits per byte vs context at the longest length) | context (context use: the same targets "
                    "scored with exactly c bytes of context, c = 1 .. 16L; issue 42) | entropy | distance "
                    "(attention per layer and head at L and 4L)"},
    {NULL, NULL, NULL}};

int cmd_lab_plot(int argc, char **argv) {
    cli_args a;
    int rc = cli_parse(&a, "lab plot", plot_options, argc, argv, 1);
    if (rc != EXIT_OK) return rc;
    if (a.help || a.positional_count < 1 || !cli_has(&a, "o")) {
        printf("usage: posenc lab plot RESULTS.jsonl -o OUT.svg|OUT.png [--experiment NAME] [--metric M]\n\n");
        cli_print_options(plot_options);
        return a.help ? EXIT_OK : EXIT_USAGE;
    }
    const char *out = cli_string(&a, "o", "");
    bool svg = cli_path_ends_with(out, ".svg"), png = cli_path_ends_with(out, ".png");
    if (!svg && !png)
        return cli_fail("lab plot", EXIT_USAGE, "name the output OUT.svg or OUT.png", "cannot tell the picture format of '%s'",
                        out);
    cli_buffer b = {0};
    const char *only = cli_string(&a, "experiment", NULL), *metric = cli_string(&a, "metric", "bpb");
    const char *path = a.positional[0];
    cJSON *runs = NULL; /* the reader names a bad file and line, or a file with no run */
    rc = cli_lab_read_runs("lab plot", &path, 1, strcmp(metric, "curve") == 0 ? CLI_LAB_KEEP_CURVE : 0, &runs);
    if (rc != EXIT_OK) return rc;
    rc = svg ? cli_lab_plot_svg("lab plot", runs, path, only, metric, &b)
             : cli_lab_plot_png("lab plot", runs, path, only, metric, &b);
    cJSON_Delete(runs);
    if (rc == EXIT_OK) rc = cli_buffer_write("lab plot", out, &b);
    if (rc == EXIT_OK) cli_note("lab plot", "wrote %s (%s)", out, metric);
    cli_buffer_free(&b);
    return rc;
}
