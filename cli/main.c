/* main.c: `posenc` entry point: global flags and dispatch to subcommands. */
#define _POSIX_C_SOURCE 200809L /* sigaction */
#include "cli.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdbool.h>
#include <string.h>

typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"table", cmd_table, "write an additive position table (sinusoidal, baselines, ...)"},
    {"rope", cmd_rope, "RoPE: frequencies (every scaling scheme), apply to q/k, explain a model config"},
    {"bias", cmd_bias, "write an attention bias or relative index matrix (alibi, t5, shaw)"},
    {"compose", cmd_compose, "token embeddings + positions (add / concat), and the position-signal check"},
    {"analyze", cmd_analyze, "health of a table: range, norms, frequencies, uniqueness, linearity"},
    {"diff", cmd_diff, "compare two tables and diagnose why they differ"},
    {"precision", cmd_precision, "what bf16/f16/f32 does to positions, angles and logits"},
    {"signal", cmd_signal, "was a position signal added to token embeddings? how?"},
    {"plot", cmd_plot, "draw one picture: heat map (PNG/SVG), curves, surface, spectrum, ..."},
    {"report", cmd_report, "write one offline HTML report with every picture (run with no flags)"},
    {"bench", cmd_bench, "time kernels vs memory bandwidth and NumPy/PyTorch peers"},
    {"lab", cmd_lab, "train a small Transformer with any position scheme; eval at any length"},
    {NULL, NULL, NULL}};

static void usage(FILE *to) {
    fprintf(to, "posenc %s: Transformer positional encodings, computed exactly\n\n"
                "usage: posenc COMMAND [options]     (posenc COMMAND --help for details)\n\n"
                "commands:\n", posenc_version());
    for (int i = 0; commands[i].name; i++) fprintf(to, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(to, "\nexit codes: 0 success, 1 runtime error (I/O, malformed file), 2 usage error\n");
}

/* Temporary output files being written, for the signal handler below. The
 * tool's one piece of global mutable state, because a signal handler receives
 * no argument: registered once with the library before anything is written,
 * after which only the library's lock-free slot updates change it. Where the
 * file system supports O_TMPFILE the output has no name until it is complete
 * and the slots hold at most the instant between link and rename. */
static posenc_temp_files temp_files;

#if !defined(POSENC_CLI_IN_PROCESS)
static void remove_temp_files_and_die(int sig) {
    posenc_temp_files_remove(&temp_files); /* unlink(2) only: async-signal-safe */
    signal(sig, SIG_DFL);
    raise(sig); /* die of the same signal, so the parent sees why */
}

#endif

static void install_signal_handlers(void) {
    posenc_temp_files_register(&temp_files);
#if defined(POSENC_CLI_IN_PROCESS)
    /* in-process (fuzz_cli): the harness owns the signals; libFuzzer's -timeout
     * watchdog is a SIGALRM timer that these handlers would turn into a death */
#else
    static const int fatal[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGALRM, SIGUSR1, SIGUSR2,
                                SIGXCPU, SIGVTALRM, SIGPROF};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = remove_temp_files_and_die;
    sigfillset(&sa.sa_mask); /* one handler at a time */
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) {
        struct sigaction old;
        /* a signal ignored by whoever started us (nohup) stays ignored */
        if (sigaction(fatal[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
        sigaction(fatal[i], &sa, NULL);
    }
    /* A full disk or `ulimit -f` must surface as a write error (and a removed
     * temporary file), not kill the process with SIGXFSZ; a closed pipe on
     * stdout likewise becomes EPIPE, reported with exit 1. */
    signal(SIGXFSZ, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
#endif
}

/* Every command's stdout is checked here, once, at the end: a write error
 * latched by the stream (full disk, file-size limit, closed pipe) or one that
 * only the final flush or close reveals turns a success into exit 1. A command
 * that already failed keeps its own exit code and message. */
static int finish_stdout(int rc) {
    errno = 0;
    int e = 0;
    bool failed = false;
    if (fflush(stdout) != 0) failed = true, e = errno;
    if (ferror(stdout)) failed = true;
#if !defined(POSENC_CLI_IN_PROCESS) /* the fuzzer calls main again and again */
    if (fclose(stdout) != 0 && !failed) failed = true, e = errno;
#endif
    if (!failed) return rc;
    if (rc == EXIT_OK)
        fprintf(stderr, "posenc: cannot write standard output: %s\n", e ? strerror(e) : "write error");
    return rc == EXIT_OK ? EXIT_RUNTIME : rc;
}

static int run_command(int argc, char **argv) {
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
    fputs("posenc: unknown command '", stderr);
    cli_put_escaped(stderr, argv[1]);
    fputs("'\nhint: posenc --help lists the commands\n", stderr);
    return EXIT_USAGE;
}

int main(int argc, char **argv) {
    install_signal_handlers();
    return finish_stdout(run_command(argc, argv));
}
