/* cmd_lab_run.c: `posenc lab run|plan|merge|plot|claims` (issue 16, docs/lab.md
 * "Experiments"). The experiments live in lab/experiments.c; here: options,
 * the result files (one JSON object per line), progress, Ctrl-C, pictures. */
#define _POSIX_C_SOURCE 200809L /* sigaction, fileno, clock_gettime */
#include "cli.h"
#include "experiments.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
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

static bool has_id(const cJSON *runs, const char *id) {
    const cJSON *r;
    cJSON_ArrayForEach(r, runs) if (strcmp(cJSON_GetObjectItem(r, "id")->valuestring, id) == 0) return true;
    return false;
}

/* A text run's line names its corpus (corpus_bytes, corpus_fnv1a64): a line
 * measured on other bytes than `corpus` is refused, so that one file never mixes
 * two corpora (lab claims would count their seeds together). EXIT_* code. */
static int check_corpus(const cJSON *runs, const lab_corpus *corpus, const char *out) {
    const cJSON *r;
    cJSON_ArrayForEach(r, runs) {
        const cJSON *bytes = cJSON_GetObjectItem(r, "corpus_bytes"), *hash = cJSON_GetObjectItem(r, "corpus_fnv1a64");
        if (!cJSON_IsNumber(bytes)) continue; /* a task run: no corpus */
        bool same = bytes->valuedouble == (double)corpus->size &&
                    (!cJSON_IsString(hash) || strcmp(hash->valuestring, corpus->hash) == 0);
        if (!same)
            return cli_fail("lab run", EXIT_USAGE, "resume with the same --text files, or write to another -o",
                            "%s holds %s, measured on another corpus (%.0f bytes, hash %s) than this one (%zu bytes, "
                            "hash %s): resuming would mix two corpora in one file",
                            out, cJSON_GetObjectItem(r, "id")->valuestring, bytes->valuedouble,
                            cJSON_IsString(hash) ? hash->valuestring : "not recorded", corpus->size, corpus->hash);
    }
    return EXIT_OK;
}

/* An upper estimate of one result line: the curves (every step), the evaluations
 * and a learned table (6 digits a value) at most. */
static unsigned long long line_estimate(const lab_run_spec *s) {
    unsigned long long cells = (unsigned long long)s->config.context * (unsigned long long)s->config.d_model;
    if (cells > LAB_RESULT_TABLE_MAX) cells = LAB_RESULT_TABLE_MAX;
    return 16384 + 64ull * (unsigned long long)lab_run_total_steps(s) + 16 * cells;
}

/* The folder of path (for statvfs and the lock), in dir[size]. */
static void folder_of(const char *path, char *dir, size_t size) {
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(dir, size, ".");
    else if (slash == path) snprintf(dir, size, "/");
    else snprintf(dir, size, "%.*s", (int)(slash - path), path);
}

/* Before minutes of computing: the rewrite after the run holds the old file and
 * the new one (old bytes + the new line) at once, so the folder needs room for
 * the whole new file. EXIT_RUNTIME with the bytes needed when it has not. */
static int check_free_space(const char *out, const lab_run_spec *s) {
    char dir[4096];
    folder_of(out, dir, sizeof dir);
    struct statvfs fs;
    struct stat st;
    if (statvfs(dir, &fs) != 0) return EXIT_OK; /* unknown: the write itself still fails cleanly */
    unsigned long long old = stat(out, &st) == 0 ? (unsigned long long)st.st_size : 0;
    unsigned long long need = old + line_estimate(s), avail = (unsigned long long)fs.f_bavail * fs.f_frsize;
    if (avail >= need) return EXIT_OK;
    return cli_fail("lab run", EXIT_RUNTIME, "free some space, or write to another -o (then join with lab merge)",
                    "not enough free space in %s for %s: run %s needs %llu bytes (the results, %llu bytes, rewritten "
                    "with up to %llu more for the new line), %llu are available; nothing was run",
                    dir, out, s->id, need, old, line_estimate(s), avail);
}

/* Exclusive advisory lock on out's folder (the file itself is replaced by a rename,
 * so its own lock would not outlive a write): two lab run processes on one results
 * file then read-merge-rename one after the other, and every finished run stays.
 * Returns the fd to close, or -1 (said on stderr) where the file system has no locks. */
static int lock_folder(const char *out) {
    char dir[4096];
    folder_of(out, dir, sizeof dir);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc = fd < 0 ? -1 : 0;
    /* a Ctrl-C during the wait (EINTR) must not lose the finished run: wait on */
    while (fd >= 0 && (rc = flock(fd, LOCK_EX)) != 0 && errno == EINTR) {}
    if (rc != 0) {
        fprintf(stderr, "posenc lab run: cannot lock ");
        cli_put_escaped(stderr, dir);
        fprintf(stderr, " (%s): another lab run writing the same file at this moment could drop a run\n", strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    return fd;
}

/* One line of the results file as merge_line reads it: its bytes are kept for the
 * rewrite and the run (without its big arrays) for the id and corpus checks. */
typedef struct {
    cli_buffer bytes;
    cJSON *runs;
} merge_read;

static int merge_read_line(void *ctx, cJSON *run, const char *line, size_t len, const char *path, long line_no) {
    merge_read *m = ctx;
    (void)line_no;
    cJSON_DeleteItemFromObject(run, "grad_norms");
    cJSON_DeleteItemFromObject(run, "curve");
    cJSON_DeleteItemFromObject(run, "position_table");
    cJSON_DeleteItemFromObject(run, "evals");
    cli_buffer_append(&m->bytes, line, len);
    cli_buffer_append(&m->bytes, "\n", 1);
    if (m->bytes.failed || !cJSON_AddItemToArray(m->runs, run)) {
        cJSON_Delete(run);
        return cli_fail("lab run", EXIT_RUNTIME, "free memory", "out of memory reading %s", path);
    }
    return EXIT_OK;
}

/* Add one finished run's line to out under the folder lock: the file is read again,
 * once (another process may have added runs since), the line is appended unless that
 * run is already there, and the whole is written atomically. A last line without its
 * newline (an unfinished write) is left out of the rewrite, as every reader ignores it.
 * EXIT_* code; *kept_other when another process had written the same run. */
static int merge_line(const char *out, const char *id, const char *json, const lab_corpus *corpus, bool *kept_other) {
    *kept_other = false;
    int lock = lock_folder(out);
    posenc_error err = {0};
    merge_read now = {{0}, cJSON_CreateArray()};
    int rc = now.runs ? EXIT_OK : cli_fail("lab run", EXIT_RUNTIME, "free memory", "out of memory");
    if (rc == EXIT_OK) rc = cli_lab_each_result("lab run", out, true, merge_read_line, &now);
    if (rc == EXIT_OK && has_id(now.runs, id)) *kept_other = true;
    else if (rc == EXIT_OK && corpus->bytes) rc = check_corpus(now.runs, corpus, out);
    if (rc == EXIT_OK && !*kept_other) {
        const void *parts[3] = {now.bytes.data ? (const void *)now.bytes.data : "", json, "\n"};
        size_t sizes[3] = {now.bytes.len, strlen(json), 1};
        if (posenc_file_write_atomic(out, parts, sizes, 3, &err) != POSENC_OK) rc = cli_fail_status("lab run", &err);
    }
    cli_buffer_free(&now.bytes);
    cJSON_Delete(now.runs);
    if (lock >= 0) close(lock); /* releases the lock */
    return rc;
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
    {"corpus", "NAME", "fortunes (default) or pystdlib: the Python standard library's .py files and the license texts"},
    {"threads", "N", "worker threads (results do not depend on it)"},
    {"ids", NULL, "lab plan: print only the run ids, one a line (the Ray driver, scripts/lab_ray.py, reads them)"},
    {"tuned", "FILE", "each scheme's learning rate (RoPE: and base) chosen on the dev split by a `lab run tune` file "
                      "(docs/lab-experiments.md \"Fair tuning\")"},
    {NULL, NULL, NULL}};

/* --tuned FILE: the plan's text runs take the learning rate (and RoPE base) the tuning
 * rows of FILE chose on the dev split (lab_tuning_apply). EXIT_* code, message printed. */
static int apply_tuned(const char *command, cli_args *a, lab_run_spec *runs, size_t count) {
    if (!cli_has(a, "tuned")) return EXIT_OK;
    const char *path = cli_string(a, "tuned", "");
    cJSON *rows = cli_lab_read_results(command, &path, 1, false, 0);
    if (!rows) return EXIT_USAGE;
    posenc_error err = {0};
    const char *slash = strrchr(path, '/');
    posenc_status st = lab_tuning_apply(rows, slash ? slash + 1 : path, runs, count, &err);
    cJSON_Delete(rows);
    return st == POSENC_OK ? EXIT_OK : cli_fail_status(command, &err);
}

/* A finished run of the file trained at another learning rate (or RoPE base) than this
 * plan's run of the same id: --resume would keep it as this plan's run, mixing tuned and
 * untuned rows under one id. Its message, or EXIT_OK. */
static int check_same_training(const cJSON *finished, const lab_run_spec *r, const char *out) {
    const cJSON *row;
    cJSON_ArrayForEach(row, finished) {
        if (strcmp(cJSON_GetObjectItem(row, "id")->valuestring, r->id) != 0) continue;
        const cJSON *lr = cJSON_GetObjectItem(row, "lr"), *base = cJSON_GetObjectItem(row, "rope_base");
        bool lr_differs = cJSON_IsNumber(lr) && fabs(lr->valuedouble - r->train.lr) > 1e-12 * fabs(r->train.lr);
        bool base_differs = cJSON_IsNumber(base) && r->config.scheme == LAB_POS_ROPE &&
                            fabs(base->valuedouble - r->config.rope_base) > 1e-9 * r->config.rope_base;
        if (lr_differs || base_differs) {
            char had[64] = "", has[64] = "";
            if (cJSON_IsNumber(base)) snprintf(had, sizeof had, ", rope base %g", base->valuedouble);
            if (r->config.scheme == LAB_POS_ROPE) snprintf(has, sizeof has, ", rope base %g", r->config.rope_base);
            return cli_fail("lab run", EXIT_USAGE, "resume with the same --tuned file (or none), or write to another -o",
                            "%s holds %s trained at lr %g%s, this plan's run is at lr %g%s", out, r->id,
                            cJSON_IsNumber(lr) ? lr->valuedouble : 0.0, had, r->train.lr, has);
        }
    }
    return EXIT_OK;
}

static int lab_run(int argc, char **argv) {
    cli_args a;
    int rc = cli_parse(&a, "lab run", run_options, argc, argv, CLI_MAX_POSITIONAL);
    if (rc != EXIT_OK) return rc;
    if (a.help || a.positional_count < 1) {
        printf("usage: posenc lab run NAME [--quick] [--seeds N] [--only ID] [-o FILE] [--resume] [--tuned FILE] [--text FILE [FILE...] | --corpus pystdlib]\n\n"
               "Experiments: extrapolate context-extension integration article-claims length-generalization fairness demo tiny tiny-extension\n"
               "headline headline-early (issue 42: L = 256, 6000 / 2000 steps; docs/lab-experiments.md \"Headline regime\")\n"
               "lookup tiny-lookup (associative recall at L..16L) tune tiny-tune (lr per scheme on the dev split; then --tuned FILE)\n"
               "(docs/lab.md). Ctrl-C stops after keeping the finished runs; --resume continues.\n\n");
        cli_print_options(run_options);
        return a.help ? EXIT_OK : EXIT_USAGE;
    }
    if (cli_has(&a, "ids"))
        return cli_fail("lab run", EXIT_USAGE, "posenc lab plan NAME --ids lists them", "--ids belongs to lab plan, not lab run");
    const char *name = a.positional[0];
    int32_t seeds = 0, threads = 0;
    if (!cli_int32(&a, "seeds", 1, 100, &seeds) || !cli_int32(&a, "threads", 0, POSENC_MAX_THREADS, &threads)) return EXIT_USAGE;
    posenc_error err = {0};
    lab_run_spec *runs = NULL;
    size_t count = 0;
    if (lab_experiment_plan(name, cli_has(&a, "quick"), seeds, &runs, &count, &err) != POSENC_OK)
        return cli_fail_status("lab run", &err);
    if ((rc = apply_tuned("lab run", &a, runs, count)) != EXIT_OK) {
        free(runs);
        return rc;
    }
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
    const char *corpus_name = cli_string(&a, "corpus", "fortunes");
    bool pystdlib = strcmp(corpus_name, "pystdlib") == 0;
    if (!pystdlib && strcmp(corpus_name, "fortunes") != 0) {
        free(runs);
        return cli_fail("lab run", EXIT_USAGE, "--corpus fortunes or --corpus pystdlib", "unknown corpus '%s'", corpus_name);
    }
    if (pystdlib && (cli_has(&a, "text") || a.positional_count > 1)) {
        free(runs);
        return cli_fail("lab run", EXIT_USAGE, "give one of them", "--corpus pystdlib and --text both name the text");
    }
    cJSON *finished = cli_lab_read_results("lab run", &out, 1, true, 0);
    if (!finished) {
        free(runs);
        return EXIT_RUNTIME;
    }
    bool needs_text = false, found = only == NULL;
    int64_t total = 0;
    for (size_t i = 0; i < count; i++) {
        bool skip = (only && strcmp(runs[i].id, only) != 0) || has_id(finished, runs[i].id);
        if ((rc = check_same_training(finished, &runs[i], out)) != EXIT_OK) {
            free(runs);
            cJSON_Delete(finished);
            return rc;
        }
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
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_interrupt;
    /* a signal the parent ignores stays ignored (a shell starts background jobs
       with SIGINT ignored, nohup SIGHUP): Ctrl-C in the terminal is not for them */
    if (sigaction(SIGINT, NULL, &old) == 0 && old.sa_handler != SIG_IGN) sigaction(SIGINT, &sa, NULL);
    if (sigaction(SIGTERM, NULL, &old) == 0 && old.sa_handler != SIG_IGN) sigaction(SIGTERM, &sa, NULL);
    lab_corpus corpus = {0};
    if (needs_text) {
        const char *paths[CLI_MAX_POSITIONAL + 1];
        int n = 0;
        if (cli_has(&a, "text")) paths[n++] = cli_string(&a, "text", "");
        for (int i = 1; i < a.positional_count; i++) paths[n++] = a.positional[i];
        posenc_status cst = pystdlib ? lab_corpus_load_pystdlib(NULL, NULL, (size_t)2 << 20, &corpus, &err)
                                     : lab_corpus_load(paths, n, n ? (size_t)64 * 1024 : (size_t)2 << 20, &corpus, &err);
        if (cst != POSENC_OK) {
            free(runs);
            cJSON_Delete(finished);
            return cli_fail_status("lab run", &err);
        }
        cli_note("lab run", "%s: %zu bytes from %d files (train %zu, validation %zu, hash %s)",
                pystdlib ? LAB_PYSTDLIB_DIR " + " LAB_LICENSES_DIR : n ? "text" : LAB_CORPUS_DEFAULT_DIR, corpus.size,
                corpus.files, corpus.train_size, corpus.valid_size, corpus.hash);
        if ((rc = check_corpus(finished, &corpus, out)) != EXIT_OK) {
            free(runs);
            cJSON_Delete(finished);
            lab_corpus_free(&corpus);
            return rc;
        }
    }
    /* The file is rewritten whole (posenc_file_write_atomic: temporary, fsync,
     * rename) after each finished run, from what it holds at that moment, under a
     * lock (merge_line): a full disk, a signal or a kill at any moment leaves it as
     * it was after the last finished run, whole lines only (an append could leave
     * half a line), and other lab run processes writing the same file keep theirs. */
    bool existed = access(out, F_OK) == 0;
    progress_state prog = {seconds_now(), 0, total, 0, count, "", isatty(fileno(stderr)) != 0};
    lab_run_progress hooks = {on_progress, &prog, &stop_requested};
    size_t written = 0;
    for (size_t i = 0; i < count && rc == EXIT_OK && !stop_requested; i++) {
        if ((only && strcmp(runs[i].id, only) != 0) || has_id(finished, runs[i].id)) continue;
        prog.index = i;
        prog.id = runs[i].id;
        if ((rc = check_free_space(out, &runs[i])) != EXIT_OK) break;
        char *json = NULL;
        if (lab_run_execute(&runs[i], &corpus, threads, &hooks, &json, &err) != POSENC_OK) {
            if (stop_requested) break;
            rc = cli_fail_status("lab run", &err);
            break;
        }
        bool kept_other = false;
        rc = merge_line(out, runs[i].id, json, &corpus, &kept_other);
        free(json);
        if (rc != EXIT_OK) break;
        if (kept_other)
            fprintf(stderr, "posenc lab run: %s was finished by another process meanwhile: its line is kept, this one "
                    "dropped\n", runs[i].id);
        prog.done_before += lab_run_total_steps(&runs[i]);
        written++;
        if (prog.tty) fprintf(stderr, "\r%*s\r", 100, "");
        fprintf(stderr, "posenc lab run: [%zu/%zu] %s done (%.0f s elapsed)\n", i + 1, count, runs[i].id,
                seconds_now() - prog.started);
    }
    if (stop_requested) {
        if (written == 0 && !existed) /* a new file and no run finished: nothing was written */
            fputc('\n', stderr), cli_note("lab run", "interrupted before the first run finished; %s was not created", out);
        else
            fputc('\n', stderr), cli_note("lab run", "interrupted; %s keeps every finished run (%zu from this invocation; "
                    "continue with --resume)", out, written);
        rc = 128 + (int)stop_requested;
    }
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
        printf("usage: posenc lab plan NAME [--quick] [--seeds N] [--ids] [--tuned FILE]\n\nOne self-contained command per run, for GNU parallel or a\n"
               "Slurm array; join the outputs with `posenc lab merge`. --ids: the run ids only. On Ray:\n"
               "scripts/lab_ray.py NAME -o OUT.jsonl [--address ADDR] (docs/lab-experiments.md).\n");
        return a.help ? EXIT_OK : EXIT_USAGE;
    }
    int32_t seeds = 0;
    if (!cli_int32(&a, "seeds", 1, 100, &seeds)) return EXIT_USAGE;
    posenc_error err = {0};
    lab_run_spec *runs = NULL;
    size_t count = 0;
    if (lab_experiment_plan(a.positional[0], cli_has(&a, "quick"), seeds, &runs, &count, &err) != POSENC_OK)
        return cli_fail_status("lab plan", &err);
    if ((rc = apply_tuned("lab plan", &a, runs, count)) != EXIT_OK) { /* refused here, not in every command */
        free(runs);
        return rc;
    }
    if (cli_has(&a, "ids")) {
        for (size_t i = 0; i < count; i++) printf("%s\n", runs[i].id);
        free(runs);
        return EXIT_OK;
    }
    for (size_t i = 0; i < count; i++) {
        char file[128];
        snprintf(file, sizeof file, "%s", runs[i].id);
        for (char *c = file; *c; c++)
            if (*c == ':' || *c == '=') *c = '_';
        printf("posenc lab run %s%s", a.positional[0], cli_has(&a, "quick") ? " --quick" : "");
        if (seeds) printf(" --seeds %d", seeds);
        if (cli_has(&a, "text")) printf(" --text '%s'", cli_string(&a, "text", ""));
        if (cli_has(&a, "corpus")) printf(" --corpus '%s'", cli_string(&a, "corpus", ""));
        if (cli_has(&a, "tuned")) printf(" --tuned '%s'", cli_string(&a, "tuned", ""));
        printf(" --threads 1 --resume --only '%s' -o 'results/%s.jsonl'\n", runs[i].id, file);
    }
    free(runs);
    return EXIT_OK;
}

static const cli_option merge_options[] = {{"o", "FILE", "merged results (required); a run id seen twice is kept once"}, {NULL, NULL, NULL}};
static const cli_option claims_options[] = {
    {"o", "FILE", "write the table to FILE instead of stdout"},
    {"list", NULL, "print the claim list itself (fixed before the runs: docs/lab-experiments.md) and no verdicts"},
    {NULL, NULL, NULL}};

typedef struct {
    cJSON *ids; /* the ids kept so far (strings) */
    cli_buffer out;
    size_t dropped;
} merge_ctx;

/* One line of a merge input: kept byte for byte unless its id was seen before. */
static int merge_line_in(void *ctx, cJSON *run, const char *line, size_t len, const char *path, long line_no) {
    merge_ctx *m = ctx;
    (void)path, (void)line_no;
    const char *id = cJSON_GetObjectItem(run, "id")->valuestring;
    const cJSON *seen;
    bool dup = false;
    cJSON_ArrayForEach(seen, m->ids) dup |= strcmp(seen->valuestring, id) == 0;
    if (dup) m->dropped++;
    else {
        cJSON *copy = cJSON_CreateString(id);
        if (!copy || !cJSON_AddItemToArray(m->ids, copy)) {
            cJSON_Delete(copy);
            m->out.failed = true;
        }
        cli_buffer_append(&m->out, line, len);
        cli_buffer_append(&m->out, "\n", 1);
    }
    cJSON_Delete(run);
    return m->out.failed ? cli_fail("lab merge", EXIT_RUNTIME, "free memory", "out of memory merging") : EXIT_OK;
}

static int lab_merge(int argc, char **argv) {
    cli_args a;
    int rc = cli_parse(&a, "lab merge", merge_options, argc, argv, CLI_MAX_POSITIONAL);
    if (rc != EXIT_OK) return rc;
    if (a.help || !cli_has(&a, "o") || a.positional_count < 1) {
        printf("usage: posenc lab merge -o OUT.jsonl FILE.jsonl...\n");
        return a.help ? EXIT_OK : EXIT_USAGE;
    }
    /* streamed: the kept lines' bytes (the output) and their ids are all that is held */
    merge_ctx m = {cJSON_CreateArray(), {0}, 0};
    if (!m.ids) return cli_fail("lab merge", EXIT_RUNTIME, NULL, "out of memory");
    for (int i = 0; i < a.positional_count && rc == EXIT_OK; i++)
        rc = cli_lab_each_result("lab merge", a.positional[i], false, merge_line_in, &m);
    if (rc == EXIT_OK && m.out.failed) rc = cli_fail("lab merge", EXIT_RUNTIME, "free memory", "out of memory merging");
    if (rc == EXIT_OK) rc = cli_buffer_write("lab merge", cli_string(&a, "o", ""), &m.out);
    if (rc == EXIT_OK)
        fprintf(stderr, "posenc lab merge: %d runs written, %zu duplicates dropped\n", cJSON_GetArraySize(m.ids), m.dropped);
    cli_buffer_free(&m.out);
    cJSON_Delete(m.ids);
    return rc;
}


/* One line on stderr: how many of the table's claims these runs measured, so a
 * reader of a small experiment's table knows the "not measured" rows are expected. */
static void say_claims_measured(const lab_claims_count *n, const char *out) {
    fprintf(stderr, "posenc lab claims: %s%s%d of %d claims measured by these runs (%d supported, %d contradicted, %d "
                    "inconclusive; %d tested, Holm-adjusted at 5%% family-wise)%s\n",
            out ? out : "", out ? ": " : "", n->measured, n->rows, n->supported, n->contradicted,
            n->measured - n->supported - n->contradicted, n->tested,
            n->measured < n->rows ? "; the rest need their own experiments (lab run extrapolate, context-extension, "
                                    "integration, article-claims: docs/lab-experiments.md)"
                                  : "");
}

static int lab_claims(int argc, char **argv) {
    cli_args a;
    int rc = cli_parse(&a, "lab claims", claims_options, argc, argv, CLI_MAX_POSITIONAL);
    if (rc != EXIT_OK) return rc;
    if (!a.help && cli_has(&a, "list")) {
        if (a.positional_count > 0)
            return cli_fail("lab claims", EXIT_USAGE, "posenc lab claims --list", "--list prints the claim list and reads no results");
        posenc_error err = {0};
        char *list = NULL;
        if (lab_claims_table(NULL, 1, &list, NULL, &err) != POSENC_OK) return cli_fail_status("lab claims", &err);
        if (cli_has(&a, "o")) {
            cli_buffer b = {0};
            cli_buffer_puts(&b, list);
            rc = cli_buffer_write("lab claims", cli_string(&a, "o", ""), &b);
            cli_buffer_free(&b);
        } else fputs(list, stdout);
        free(list);
        return rc;
    }
    if (a.help || a.positional_count < 1) {
        printf("usage: posenc lab claims RESULTS.jsonl... [-o claims.md]\n       posenc lab claims --list [-o list.md]\n\n"
               "The articles' claims, the measured evidence and a verdict (Holm-adjusted across the tested claims).\n"
               "Every file must hold at least one run (lab run writes them).\n\n");
        cli_print_options(claims_options);
        return a.help ? EXIT_OK : EXIT_USAGE;
    }
    /* a file with no run is refused (as report --lab does), not read as a table of "not measured" */
    cJSON *runs = NULL;
    if ((rc = cli_lab_read_runs("lab claims", a.positional, a.positional_count, 0, &runs)) != EXIT_OK) return rc;
    posenc_error err = {0};
    char *table = NULL;
    lab_claims_count count;
    if (lab_claims_markdown(runs, &table, &count, &err) != POSENC_OK) rc = cli_fail_status("lab claims", &err);
    else if (cli_has(&a, "o")) {
        cli_buffer b = {0};
        cli_buffer_puts(&b, table);
        rc = cli_buffer_write("lab claims", cli_string(&a, "o", ""), &b);
        cli_buffer_free(&b);
        if (rc == EXIT_OK) say_claims_measured(&count, cli_string(&a, "o", ""));
    } else {
        fputs(table, stdout);
        say_claims_measured(&count, NULL);
    }
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
