/* cmd_report.c: `posenc report`: one offline HTML page with every picture.
 * With no flags it compares the standard encodings at one size. */
#define _XOPEN_SOURCE 700 /* realpath, to print the absolute path to open */
#include "cli.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cli_option report_options[] = {
    CLI_TABLE_OPTIONS,
    {"cmap", "MAP", "colormap for every heat map: rdbu | viridis (default: rdbu if a table has negative values)"},
    {"max-bytes", "N", "refuse input tables larger than N bytes (default 4 GiB)"},
    {"o", "OUT", "output file, default report.html"},
    {"lab", "RESULTS", "the \"Measured here\" section from these posenc lab results (JSON lines); default: the "
                       "lab-NAME.jsonl files `posenc lab run NAME` wrote here, when there are any"},
    {"no-lab", NULL, "leave the \"Measured here\" section out"},
    {"identify", "CACHE.npy", "add \"Which RoPE is this?\" for this cos/sin cache (posenc rope identify; it is also "
                              "the report's table unless one is given)"},
    {"sin", "S.npy", "with --identify: the sin table beside an HF / plain cos cache"},
    {"cache-layout", "L", "with --identify: auto (default) | hf | vllm | ggml | plain"},
    {NULL, NULL, NULL}};

static void report_help(void) {
    printf("usage: posenc report [TABLE.npy | encoding flags | --config config.json] [-o report.html]\n\n"
           "Write one self-contained HTML file (opens offline, no network): heat maps you can zoom\n"
           "and hover, a 3-D surface you can turn, a tool to compare positions, similarity,\n"
           "wavelength and health charts, and a statistics table. With no flags it compares five\n"
           "encodings at 128 positions x 64 channels (sinusoidal, RoPE, learned, and the index and\n"
           "normalized baselines) and adds RoPE scaling bands and ALiBi and T5 attention biases.\n"
           "When this folder holds lab results at their default place (lab-NAME.jsonl, written by\n"
           "`posenc lab run NAME`), the comparison also gets a \"Measured here\" section from them.\n\n");
    cli_print_options(report_options);
    printf("\nexamples:\n"
           "  posenc report                                  # the comparison; prints the file to open\n"
           "  posenc report --len 512 --dim 128 -o pe.html    # one sinusoidal table (plus nothing else)\n"
           "  posenc report my_table.npy -o mine.html         # any [positions x channels] table\n"
           "  posenc report --config llama/config.json        # a model's RoPE and its scaling bands\n"
           "  posenc report --lab lab-extrapolate.jsonl       # the comparison plus what the lab measured\n"
           "  posenc report --identify cos.npy --sin sin.npy  # which RoPE made this cache, with pictures\n");
}

/* The default comparison: the same size for every kind, so pictures line up. */
static const char *const default_kinds[] = {"sinusoidal", "rope", "learned", "index", "normalized"};
#define DEFAULT_LEN 128
#define DEFAULT_DIM 64
#define MAX_TABLES 8

int cmd_report(int argc, char **argv) {
    cli_args a;
    int rc = cli_parse(&a, "report", report_options, argc, argv, 1);
    if (rc != EXIT_OK) return rc;
    if (a.help) {
        report_help();
        return EXIT_OK;
    }
    int cmap = -1;
    if (!cli_choice(&a, "cmap", cli_colormap_names, &cmap)) return EXIT_USAGE;
    const char *out = cli_string(&a, "o", "report.html");
    if (!cli_path_ends_with(out, ".html") && !cli_path_ends_with(out, ".htm"))
        return cli_fail("report", EXIT_USAGE, "e.g. -o report.html", "the report is an HTML file; got '%s'", out);
    if (!cli_has(&a, "o") && (rc = cli_refuse_same_file(&a, out)) != EXIT_OK) return rc; /* the default name */
    if (cli_has(&a, "lab") && cli_has(&a, "no-lab"))
        return cli_fail("report", EXIT_USAGE, NULL, "--lab and --no-lab contradict each other");
    if ((cli_has(&a, "sin") || cli_has(&a, "cache-layout")) && !cli_has(&a, "identify"))
        return cli_fail("report", EXIT_USAGE, "e.g. posenc report --identify cos.npy --sin sin.npy",
                        "--%s goes with --identify", cli_has(&a, "sin") ? "sin" : "cache-layout");
    static const char *const cache_layouts[] = {"auto", "hf", "vllm", "ggml", "plain", NULL};
    int cache_layout = 0;
    if (!cli_choice(&a, "cache-layout", cache_layouts, &cache_layout)) return EXIT_USAGE;
    if (cli_has(&a, "identify") && a.positional_count == 0) { /* the cache is the table drawn */
        a.positional[0] = cli_string(&a, "identify", "");
        a.positional_count = 1;
    }
    bool any_flag = a.positional_count > 0;
    const char *flags[] = {"kind", "len", "dim", "base", "freqs", "layout", "start",
                           "scaling", "factor", "original-max", "seed", "sigma", "config"};
    for (size_t i = 0; i < sizeof flags / sizeof *flags; i++) any_flag |= cli_has(&a, flags[i]);

    cli_table tables[MAX_TABLES];
    const cli_table *list[MAX_TABLES];
    size_t count = 0;
    memset(tables, 0, sizeof tables);
    if (any_flag) {
        rc = cli_table_from_args("report", &a, &tables[0]);
        if (rc == EXIT_OK) count = 1;
    } else {
        for (size_t i = 0; i < sizeof default_kinds / sizeof *default_kinds && rc == EXIT_OK; i++) {
            rc = cli_table_make("report", default_kinds[i], DEFAULT_LEN, DEFAULT_DIM, &tables[count]);
            if (rc == EXIT_OK) count++;
        }
    }
    for (size_t i = 0; i < count; i++) list[i] = &tables[i];
    char command_line[512] = "posenc report";
    for (int i = 0; i < argc && strlen(command_line) + strlen(argv[i]) + 2 < sizeof command_line; i++)
        strcat(strcat(command_line, " "), argv[i]);
    /* lab results: --lab FILE, else (the default comparison only) the files lab run writes by default */
    char found[CLI_LAB_MAX_RESULTS][64];
    const char *lab[CLI_LAB_MAX_RESULTS];
    size_t lab_count = 0;
    bool lab_found = false;
    if (cli_has(&a, "lab")) {
        lab[lab_count++] = cli_string(&a, "lab", "");
    } else if (!any_flag && !cli_has(&a, "no-lab")) {
        lab_count = cli_lab_default_results(found, CLI_LAB_MAX_RESULTS);
        for (size_t i = 0; i < lab_count; i++) lab[i] = found[i];
        lab_found = lab_count > 0;
    }
    cli_buffer html = {0};
    if (rc == EXIT_OK) {
        cli_report_request req = {list,      count,     cmap,
                                  command_line, !any_flag, lab,
                                  lab_count, lab_found, cli_has(&a, "identify") ? cli_string(&a, "identify", "") : NULL,
                                  cli_has(&a, "sin") ? cli_string(&a, "sin", "") : NULL, cache_layout};
        rc = cli_report_html("report", &req, &html);
    }
    if (rc == EXIT_OK) rc = cli_buffer_write("report", out, &html);
    if (rc == EXIT_OK) {
        char full[PATH_MAX];
        cli_note("report", "wrote %s (%zu table%s, %.1f KiB, opens offline)", out, count,
                count == 1 ? "" : "s", (double)html.len / 1024);
        fputs("open: ", stdout);
        cli_put_escaped(stdout, realpath(out, full) ? full : out);
        fputc('\n', stdout);
    }
    cli_buffer_free(&html);
    for (size_t i = 0; i < count; i++) cli_table_free(&tables[i]);
    return rc;
}
