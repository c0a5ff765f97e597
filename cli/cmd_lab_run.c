/* cmd_lab_run.c: `posenc lab run|plan|merge|plot|claims` (issue 16, docs/lab.md
 * "Experiments"). The experiments live in lab/experiments.c; here: options,
 * the result files (one JSON object per line), progress, Ctrl-C, pictures. */
#define _POSIX_C_SOURCE 200809L /* sigaction, fileno, clock_gettime */
#include "cli.h"
#include "experiments.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The one piece of process state: Ctrl-C (or SIGTERM) asks the current run to
 * stop (a signal handler can only set a flag); it holds the signal's number,
 * so the exit code can be 128 + it, as a shell reports a death by it. */
static volatile sig_atomic_t stop_requested = 0;
static void on_interrupt(int sig) { stop_requested = sig; }

static double seconds_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Read JSON-lines files into one array (NULL on error, message printed). */
struct cJSON *cli_lab_read_results(const char *command, const char *const *paths, int count, bool missing_ok) {
    cJSON *all = cJSON_CreateArray();
    for (int f = 0; f < count; f++) {
        posenc_error err = {0};
        void *data = NULL;
        size_t size = 0;
        if (missing_ok && access(paths[f], F_OK) != 0) continue;
        if (posenc_file_read_all(paths[f], 0, &data, &size, &err) != POSENC_OK) {
            cli_fail_status(command, &err);
            cJSON_Delete(all);
            return NULL;
        }
        char *text = data, *line = text;
        int line_no = 1;
        bool ends_in_newline = size == 0 || text[size - 1] == '\n';
        for (size_t i = 0; i <= size; i++) {
            if (i < size && text[i] != '\n') continue;
            if (i < size) text[i] = '\0';
            else if (ends_in_newline || *line == '\0') break;
            if (i == size) { /* last line without newline: a run cut short by a crash */
                fprintf(stderr, "posenc %s: %s line %d has no newline: ignored (unfinished write)\n", command, paths[f], line_no);
                break;
            }
            if (*line) {
                cJSON *run = cJSON_Parse(line);
                if (!run || !cJSON_IsString(cJSON_GetObjectItem(run, "id"))) {
                    cJSON_Delete(run);
                    cli_fail(command, EXIT_RUNTIME, NULL, "%s line %d is not a lab result (JSON object with an id)", paths[f], line_no);
                    free(data);
                    cJSON_Delete(all);
                    return NULL;
                }
                cJSON_AddItemToArray(all, run);
            }
            line = text + i + 1;
            line_no++;
        }
        free(data);
    }
    return all;
}

static bool has_id(const cJSON *runs, const char *id) {
    const cJSON *r;
    cJSON_ArrayForEach(r, runs) if (strcmp(cJSON_GetObjectItem(r, "id")->valuestring, id) == 0) return true;
    return false;
}

typedef struct {
    double started;
    int64_t done_before, total;
    size_t index, count;
    const char *id;
    bool tty;
} progress_state;

static void on_progress(void *ctx, int64_t step, int64_t steps, double loss) {
    progress_state *p = ctx;
    (void)steps;
    if (!p->tty || step % 5) return;
    double done = (double)(p->done_before + step), elapsed = seconds_now() - p->started;
    double eta = done > 0 ? elapsed * ((double)p->total - done) / done : 0;
    fprintf(stderr, "\r[%zu/%zu] %-36s step %5lld  bpb %.3f  ETA %3dm%02ds ", p->index + 1, p->count, p->id,
            (long long)step, loss / log(2.0), (int)(eta / 60), (int)fmod(eta, 60));
}

static const cli_option run_options[] = {
    {"quick", NULL, "the small size (extrapolate: <= 10 minutes on 2 idle cores)"},
    {"seeds", "N", "seeds per configuration (default 1 with --quick, else 3)"},
    {"only", "ID", "run only the run with this id (see `posenc lab plan`)"},
    {"o", "FILE", "results, one JSON object per line (default lab-NAME.jsonl)"},
    {"resume", NULL, "append to FILE, skipping runs already in it"},
    {"text", "FILE", "training/validation text instead of the default corpus (more files as extra arguments)"},
    {"threads", "N", "worker threads (results do not depend on it)"},
    {NULL, NULL, NULL}};

static int lab_run(int argc, char **argv) {
    cli_args a;
    int rc = cli_parse(&a, "lab run", run_options, argc, argv, CLI_MAX_POSITIONAL);
    if (rc != EXIT_OK) return rc;
    if (a.help || a.positional_count < 1) {
        printf("usage: posenc lab run NAME [--quick] [--seeds N] [--only ID] [-o FILE] [--resume] [--text FILE [FILE...]]\n\n"
               "Experiments: extrapolate context-extension integration article-claims length-generalization tiny tiny-extension\n"
               "(docs/lab.md). Ctrl-C stops after keeping the finished runs; --resume continues.\n\n");
        cli_print_options(run_options);
        return a.help ? EXIT_OK : EXIT_USAGE;
    }
    const char *name = a.positional[0];
    int32_t seeds = 0, threads = 0;
    if (!cli_int32(&a, "seeds", 1, 100, &seeds) || !cli_int32(&a, "threads", 0, POSENC_MAX_THREADS, &threads)) return EXIT_USAGE;
    posenc_error err = {0};
    lab_run_spec *runs = NULL;
    size_t count = 0;
    if (lab_experiment_plan(name, cli_has(&a, "quick"), seeds, &runs, &count, &err) != POSENC_OK)
        return cli_fail_status("lab run", &err);
    char default_out[96];
    snprintf(default_out, sizeof default_out, "lab-%s.jsonl", name);
    const char *out = cli_string(&a, "o", default_out);
    bool resume = cli_has(&a, "resume");
    if (!cli_has(&a, "o") && (rc = cli_refuse_same_file(&a, out)) != EXIT_OK) { /* the default name */
        free(runs);
        return rc;
    }
    if (!resume && access(out, F_OK) == 0) {
        free(runs);
        return cli_fail("lab run", EXIT_USAGE, "add --resume to continue it, or choose another -o", "%s already exists", out);
    }
    const char *only = cli_string(&a, "only", NULL);
    cJSON *finished = cli_lab_read_results("lab run", &out, 1, true);
    if (!finished) {
        free(runs);
        return EXIT_RUNTIME;
    }
    bool needs_text = false, found = only == NULL;
    int64_t total = 0;
    for (size_t i = 0; i < count; i++) {
        bool skip = (only && strcmp(runs[i].id, only) != 0) || has_id(finished, runs[i].id);
        if (only && strcmp(runs[i].id, only) == 0) found = true;
        if (!skip) needs_text |= runs[i].task < 0, total += lab_run_total_steps(&runs[i]);
    }
    if (!found) {
        free(runs);
        cJSON_Delete(finished);
        return cli_fail("lab run", EXIT_USAGE, "posenc lab plan NAME lists the ids", "no run '%s' in %s", only, name);
    }
    /* from here on Ctrl-C stops cleanly: before the corpus loads, so that no
     * moment of the run is left to the default (die) handler */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_interrupt;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    lab_corpus corpus = {0};
    if (needs_text) {
        const char *paths[CLI_MAX_POSITIONAL + 1];
        int n = 0;
        if (cli_has(&a, "text")) paths[n++] = cli_string(&a, "text", "");
        for (int i = 1; i < a.positional_count; i++) paths[n++] = a.positional[i];
        if (lab_corpus_load(paths, n, n ? (size_t)64 * 1024 : (size_t)2 << 20, &corpus, &err) != POSENC_OK) {
            free(runs);
            cJSON_Delete(finished);
            return cli_fail_status("lab run", &err);
        }
        fprintf(stderr, "posenc lab run: %s: %zu bytes from %d files (train %zu, validation %zu)\n",
                n ? "text" : LAB_CORPUS_DEFAULT_DIR, corpus.size, corpus.files, corpus.train_size, corpus.valid_size);
    }
    /* The file is rewritten whole (posenc_file_write_atomic: temporary, fsync,
     * rename) after each finished run: a full disk, a signal or a kill at any
     * moment leaves it as it was after the last finished run, whole lines only;
     * an append could leave half a line. The results are small next to a run. */
    char *content = NULL;
    size_t content_size = 0;
    bool existed = access(out, F_OK) == 0;
    if (existed) {
        void *old = NULL;
        if (posenc_file_read_all(out, 0, &old, &content_size, &err) != POSENC_OK) {
            rc = cli_fail_status("lab run", &err);
        } else {
            content = old;
            /* a last line without its newline is an unfinished write (the reader above
               ignored it, so that run is done again): the rewrite leaves it out */
            while (content_size && content[content_size - 1] != '\n') content_size--;
        }
    }
    progress_state prog = {seconds_now(), 0, total, 0, count, "", isatty(fileno(stderr)) != 0};
    lab_run_progress hooks = {on_progress, &prog, &stop_requested};
    size_t written = 0;
    for (size_t i = 0; i < count && rc == EXIT_OK && !stop_requested; i++) {
        if ((only && strcmp(runs[i].id, only) != 0) || has_id(finished, runs[i].id)) continue;
        prog.index = i;
        prog.id = runs[i].id;
        char *json = NULL;
        if (lab_run_execute(&runs[i], &corpus, threads, &hooks, &json, &err) != POSENC_OK) {
            if (stop_requested) break;
            rc = cli_fail_status("lab run", &err);
            break;
        }
        size_t len = strlen(json);
        char *grown = realloc(content, content_size + len + 1);
        if (!grown) {
            free(json);
            rc = cli_fail("lab run", EXIT_RUNTIME, NULL, "out of memory keeping the results of %s", out);
            break;
        }
        content = grown;
        memcpy(content + content_size, json, len);
        content[content_size + len] = '\n';
        free(json);
        const void *parts[1] = {content};
        size_t sizes[1] = {content_size + len + 1};
        if (posenc_file_write_atomic(out, parts, sizes, 1, &err) != POSENC_OK) {
            rc = cli_fail_status("lab run", &err);
            break;
        }
        content_size += len + 1;
        prog.done_before += lab_run_total_steps(&runs[i]);
        written++;
        if (prog.tty) fprintf(stderr, "\r%*s\r", 100, "");
        fprintf(stderr, "posenc lab run: [%zu/%zu] %s done (%.0f s elapsed)\n", i + 1, count, runs[i].id,
                seconds_now() - prog.started);
    }
    if (stop_requested) {
        if (written == 0 && !existed) /* a new file and no run finished: nothing was written */
            fprintf(stderr, "\nposenc lab run: interrupted before the first run finished; %s was not created\n", out);
        else
            fprintf(stderr, "\nposenc lab run: interrupted; %s keeps every finished run (%zu from this invocation; "
                    "continue with --resume)\n", out, written);
        rc = 128 + (int)stop_requested;
    }
    free(content);
    lab_corpus_free(&corpus);
    cJSON_Delete(finished);
    free(runs);
    return rc;
}

static int lab_plan(int argc, char **argv) {
    cli_args a;
    int rc = cli_parse(&a, "lab plan", run_options, argc, argv, 1);
    if (rc != EXIT_OK) return rc;
    if (a.help || a.positional_count < 1) {
        printf("usage: posenc lab plan NAME [--quick] [--seeds N]\n\nOne self-contained command per run, for GNU parallel or a\n"
               "Slurm array; join the outputs with `posenc lab merge`.\n");
        return a.help ? EXIT_OK : EXIT_USAGE;
    }
    int32_t seeds = 0;
    if (!cli_int32(&a, "seeds", 1, 100, &seeds)) return EXIT_USAGE;
    posenc_error err = {0};
    lab_run_spec *runs = NULL;
    size_t count = 0;
    if (lab_experiment_plan(a.positional[0], cli_has(&a, "quick"), seeds, &runs, &count, &err) != POSENC_OK)
        return cli_fail_status("lab plan", &err);
    for (size_t i = 0; i < count; i++) {
        char file[128];
        snprintf(file, sizeof file, "%s", runs[i].id);
        for (char *c = file; *c; c++)
            if (*c == ':' || *c == '=') *c = '_';
        printf("posenc lab run %s%s", a.positional[0], cli_has(&a, "quick") ? " --quick" : "");
        if (seeds) printf(" --seeds %d", seeds);
        if (cli_has(&a, "text")) printf(" --text '%s'", cli_string(&a, "text", ""));
        printf(" --threads 1 --resume --only '%s' -o 'results/%s.jsonl'\n", runs[i].id, file);
    }
    free(runs);
    return EXIT_OK;
}

static const cli_option merge_options[] = {{"o", "FILE", "merged results (required); a run id seen twice is kept once"}, {NULL, NULL, NULL}};

static int lab_merge(int argc, char **argv) {
    cli_args a;
    int rc = cli_parse(&a, "lab merge", merge_options, argc, argv, CLI_MAX_POSITIONAL);
    if (rc != EXIT_OK) return rc;
    if (a.help || !cli_has(&a, "o") || a.positional_count < 1) {
        printf("usage: posenc lab merge -o OUT.jsonl FILE.jsonl...\n");
        return a.help ? EXIT_OK : EXIT_USAGE;
    }
    cJSON *runs = cli_lab_read_results("lab merge", a.positional, a.positional_count, false);
    if (!runs) return EXIT_RUNTIME;
    cli_buffer b = {0};
    cJSON *kept = cJSON_CreateArray(), *r;
    size_t dropped = 0;
    cJSON_ArrayForEach(r, runs) {
        if (has_id(kept, cJSON_GetObjectItem(r, "id")->valuestring)) {
            dropped++;
            continue;
        }
        cJSON_AddItemReferenceToArray(kept, r);
        char *line = cJSON_PrintUnformatted(r);
        if (line) cli_buffer_printf(&b, "%s\n", line);
        else b.failed = true;
        free(line);
    }
    rc = cli_buffer_write("lab merge", cli_string(&a, "o", ""), &b);
    if (rc == EXIT_OK) fprintf(stderr, "posenc lab merge: %d runs written, %zu duplicates dropped\n", cJSON_GetArraySize(kept), dropped);
    cli_buffer_free(&b);
    cJSON_Delete(kept);
    cJSON_Delete(runs);
    return rc;
}


static int lab_claims(int argc, char **argv) {
    cli_args a;
    int rc = cli_parse(&a, "lab claims", merge_options, argc, argv, CLI_MAX_POSITIONAL);
    if (rc != EXIT_OK) return rc;
    if (a.help || a.positional_count < 1) {
        printf("usage: posenc lab claims RESULTS.jsonl... [-o claims.md]\n\nThe articles' claims, the measured evidence and a verdict.\n");
        return a.help ? EXIT_OK : EXIT_USAGE;
    }
    cJSON *runs = cli_lab_read_results("lab claims", a.positional, a.positional_count, false);
    if (!runs) return EXIT_RUNTIME;
    posenc_error err = {0};
    char *table = NULL;
    if (lab_claims_markdown(runs, &table, &err) != POSENC_OK) rc = cli_fail_status("lab claims", &err);
    else if (cli_has(&a, "o")) {
        cli_buffer b = {0};
        cli_buffer_puts(&b, table);
        rc = cli_buffer_write("lab claims", cli_string(&a, "o", ""), &b);
        cli_buffer_free(&b);
    } else fputs(table, stdout);
    free(table);
    cJSON_Delete(runs);
    return rc;
}

int cmd_lab_experiments(int argc, char **argv) {
    if (strcmp(argv[0], "run") == 0) return lab_run(argc - 1, argv + 1);
    if (strcmp(argv[0], "plan") == 0) return lab_plan(argc - 1, argv + 1);
    if (strcmp(argv[0], "merge") == 0) return lab_merge(argc - 1, argv + 1);
    if (strcmp(argv[0], "claims") == 0) return lab_claims(argc - 1, argv + 1);
    if (strcmp(argv[0], "plot") == 0) return cmd_lab_plot(argc - 1, argv + 1);
    return -1;
}
