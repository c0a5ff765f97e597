/* main.c: `posenc` entry point: global flags and dispatch to subcommands. */
#include "cli.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"table", cmd_table, "write an additive position table (sinusoidal, baselines, ...)"},
    {"rope", cmd_rope, "RoPE: frequencies (every scaling scheme), apply to q/k, explain a model config"},
    /* @@CLI_DISPATCH_ROPE@@ */
    /* */
    /* */
    {"bias", cmd_bias, "write an attention bias or relative index matrix (alibi, t5, shaw)"},
    /* @@CLI_DISPATCH_BIAS@@ */
    /* */
    /* */
    {"compose", cmd_compose, "token embeddings + positions (add / concat), and the position-signal check"},
    /* @@CLI_DISPATCH_LEARNED@@ */
    /* */
    /* */
    {"analyze", cmd_analyze, "health of a table: range, norms, frequencies, uniqueness, linearity"},
    {"diff", cmd_diff, "compare two tables and diagnose why they differ"},
    {"precision", cmd_precision, "what bf16/f16/f32 does to positions, angles and logits"},
    {"signal", cmd_signal, "was a position signal added to token embeddings? how?"},
    /* @@CLI_DISPATCH_ANALYSIS@@ */
    /* */
    /* */
    {"plot", cmd_plot, "draw one picture: heat map (PNG/SVG), curves, surface, spectrum, ..."},
    {"report", cmd_report, "write one offline HTML report with every picture (run with no flags)"},
    /* @@CLI_DISPATCH_RENDER@@ */
    /* */
    /* */
    {"bench", cmd_bench, "time kernels vs memory bandwidth and NumPy/PyTorch peers"},
    {"lab", cmd_lab, "train a small Transformer with any position scheme; eval at any length"},
    /* @@CLI_DISPATCH_KERNELS@@ */
    /* */
    /* */
    /* @@CLI_DISPATCH_FUZZ@@ */
    /* */
    /* */
    {NULL, NULL, NULL}};

static void usage(FILE *to) {
    fprintf(to, "posenc %s: Transformer positional encodings, computed exactly\n\n"
                "usage: posenc COMMAND [options]     (posenc COMMAND --help for details)\n\n"
                "commands:\n", posenc_version());
    for (int i = 0; commands[i].name; i++) fprintf(to, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(to, "\nexit codes: 0 success, 1 runtime error (I/O, malformed file), 2 usage error\n");
}

int main(int argc, char **argv) {
    /* A full disk or `ulimit -f` must surface as a write error (and a removed
     * temporary file), not kill the process with SIGXFSZ. */
    signal(SIGXFSZ, SIG_IGN);
    if (strcmp(posenc_version(), POSENC_VERSION_STRING) != 0) {
        fprintf(stderr, "posenc: library version %s does not match tool version %s\n", posenc_version(),
                POSENC_VERSION_STRING);
        return EXIT_RUNTIME;
    }
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
        printf("posenc %s\n", posenc_version());
        return EXIT_OK;
    }
    for (int i = 0; commands[i].name; i++)
        if (strcmp(argv[1], commands[i].name) == 0) return commands[i].run(argc - 2, argv + 2);
    fprintf(stderr, "posenc: unknown command '%s'\nhint: posenc --help lists the commands\n", argv[1]);
    return EXIT_USAGE;
}
