/* lab_results.c: reading `posenc lab run` result files (one JSON object per line),
 * for lab run --resume, merge, claims, plot and report --lab (docs/lab.md
 * "Result files"). Streamed a line at a time, so memory is one line plus what
 * each run keeps, not the file several times over; every number is checked
 * (finite, in range) as it is read, so no picture or table is drawn from inf or
 * 1e308; out of memory is reported as such, never as a malformed line. */
#define _POSIX_C_SOURCE 200809L /* getline, fdopen */
#include "base.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- a JSON syntax check that allocates nothing: when cJSON (which allocates)
 * fails on a line this accepts, the failure was memory, not the line ---- */
typedef struct {
    const char *p, *end;
} scan;

static void skip_space(scan *s) {
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\r' || *s->p == '\n')) s->p++;
}

static bool scan_value(scan *s, int depth);

static bool scan_string(scan *s) {
    if (s->p >= s->end || *s->p != '"') return false;
    for (s->p++; s->p < s->end; s->p++) {
        if (*s->p == '"') return s->p++, true;
        if ((unsigned char)*s->p < 0x20) return false;
        if (*s->p == '\\' && ++s->p >= s->end) return false;
    }
    return false;
}

static bool scan_number(scan *s) {
    const char *start = s->p;
    if (s->p < s->end && *s->p == '-') s->p++;
    while (s->p < s->end && ((*s->p >= '0' && *s->p <= '9') || *s->p == '.' || *s->p == 'e' || *s->p == 'E' ||
                             *s->p == '+' || *s->p == '-'))
        s->p++;
    return s->p > start;
}

static bool scan_word(scan *s, const char *w) {
    size_t n = strlen(w);
    if ((size_t)(s->end - s->p) < n || strncmp(s->p, w, n) != 0) return false;
    s->p += n;
    return true;
}

static bool scan_value(scan *s, int depth) {
    if (depth > 1000) return false; /* cJSON's CJSON_NESTING_LIMIT */
    skip_space(s);
    if (s->p >= s->end) return false;
    char c = *s->p;
    if (c == '"') return scan_string(s);
    if (c == '{' || c == '[') {
        char close = c == '{' ? '}' : ']';
        s->p++;
        skip_space(s);
        if (s->p < s->end && *s->p == close) return s->p++, true;
        for (;;) {
            if (c == '{') {
                skip_space(s);
                if (!scan_string(s)) return false;
                skip_space(s);
                if (s->p >= s->end || *s->p++ != ':') return false;
            }
            if (!scan_value(s, depth + 1)) return false;
            skip_space(s);
            if (s->p >= s->end) return false;
            if (*s->p == close) return s->p++, true;
            if (*s->p++ != ',') return false;
        }
    }
    if (c == 't') return scan_word(s, "true");
    if (c == 'f') return scan_word(s, "false");
    if (c == 'n') return scan_word(s, "null");
    return scan_number(s);
}

static bool looks_like_json(const char *line, size_t len) {
    scan s = {line, line + len};
    if (!scan_value(&s, 0)) return false;
    skip_space(&s);
    return s.p == s.end;
}

/* ---- value checks ---- */
static int compare_keys(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The first key given twice in object (NULL if none; "" when out of memory, said
 * by the caller): which of the two a reader takes is a guess (cJSON the first,
 * Python the last), so such a line is refused. Sorted, so a hostile object of a
 * million keys costs n log n. */
static const char *duplicate_key(const cJSON *object, bool *oom) {
    size_t n = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, object) n++;
    if (n < 2) return NULL;
    const char **keys = malloc(n * sizeof *keys);
    if (!keys) {
        *oom = true;
        return NULL;
    }
    n = 0;
    cJSON_ArrayForEach(c, object) keys[n++] = c->string ? c->string : "";
    qsort(keys, n, sizeof *keys, compare_keys);
    const char *dup = NULL;
    for (size_t i = 1; i < n && !dup; i++)
        if (strcmp(keys[i - 1], keys[i]) == 0) dup = keys[i];
    free(keys);
    return dup;
}

#define LAB_NUMBER_LIMIT 1e15 /* no count, size, time or metric of a lab run comes near it */

/* The first number in item (depth first) that is not finite or beyond the limit,
 * or a metric out of its range (bpb* >= 0, accuracy in [0, 1]); its key in *key. */
static const cJSON *bad_number(const cJSON *item, const char **key, const char **dup, bool *oom) {
    if (cJSON_IsObject(item) && !*dup && !*oom) *dup = duplicate_key(item, oom);
    if (cJSON_IsNumber(item)) {
        double v = item->valuedouble;
        const char *k = item->string ? item->string : "";
        bool bad = !isfinite(v) || fabs(v) > LAB_NUMBER_LIMIT || (strncmp(k, "bpb", 3) == 0 && v < 0) ||
                   (strcmp(k, "accuracy") == 0 && (v < 0 || v > 1));
        if (bad) *key = item->string ? item->string : "(array element)";
        return bad ? item : NULL;
    }
    const cJSON *child;
    cJSON_ArrayForEach(child, item) {
        const cJSON *b = bad_number(child, key, dup, oom);
        if (b) return b;
    }
    return NULL;
}

/* UTF-16 text: a NUL byte in every other place and in no other (ASCII text in
 * UTF-16LE or BE), over the first 64 bytes. A line that merely starts with NUL
 * bytes (a file zero-filled by a crash, a binary file) is not. */
static bool utf16_like(const char *line, size_t len) {
    size_t n = len < 64 ? len : 64, nul[2] = {0, 0};
    if (n < 4) return false;
    for (size_t i = 0; i < n; i++) nul[i & 1] += line[i] == '\0';
    size_t half[2] = {(n + 1) / 2, n / 2};
    return (nul[0] == 0 && nul[1] == half[1]) || (nul[1] == 0 && nul[0] == half[0]);
}

/* Words for a line holding NUL bytes that is not UTF-16: where they are. */
static const char *nul_bytes(const char *line, size_t len, char *buf, size_t size) {
    size_t lead = 0, total = 0;
    while (lead < len && line[lead] == '\0') lead++;
    for (size_t i = 0; i < len; i++) total += line[i] == '\0';
    if (lead == len) snprintf(buf, size, "%zu NUL bytes and nothing else: binary data, or a file zero-filled by a crash", len);
    else if (lead > 0)
        snprintf(buf, size, "binary data: it starts with %zu NUL byte%s (%zu in the line)", lead, lead == 1 ? "" : "s",
                 total);
    else snprintf(buf, size, "binary data: it holds %zu NUL byte%s, the first at byte %zu", total,
                  total == 1 ? "" : "s", strlen(line));
    return buf;
}

/* The type each top-level key of a result line must have (lab/experiments.c
 * lab_run_execute writes them): a present key of another type is refused by
 * name, never read as 0 or skipped ("seed": "x" would make --resume and the
 * claims match runs by a seed that is not there). Absent keys are allowed
 * (older files, hand-made test lines). */
typedef enum { KEY_STRING, KEY_COUNT, KEY_NUMBER, KEY_ARRAY, KEY_OBJECT } key_type;
static const struct {
    const char *key;
    key_type type;
} result_keys[] = {
    {"experiment", KEY_STRING},   {"label", KEY_STRING},       {"scheme", KEY_STRING},
    {"posenc_version", KEY_STRING}, {"config", KEY_STRING},    {"data", KEY_STRING},
    {"corpus_fnv1a64", KEY_STRING}, {"seed", KEY_COUNT},        {"params", KEY_COUNT},
    {"train_length", KEY_COUNT},  {"steps", KEY_COUNT},        {"batch", KEY_COUNT},
    {"corpus_bytes", KEY_COUNT},  {"lr", KEY_NUMBER},          {"train_seconds", KEY_NUMBER},
    {"wall_seconds", KEY_NUMBER}, {"unigram_bpb", KEY_NUMBER}, {"curve", KEY_ARRAY},
    {"grad_norms", KEY_ARRAY},    {"evals", KEY_ARRAY},        {"finetunes", KEY_ARRAY},
    {"attention", KEY_ARRAY},     {"position_table", KEY_OBJECT}, {"position_memory", KEY_OBJECT},
    {"context_use", KEY_OBJECT},  {"protocol", KEY_OBJECT},    {"unigram_bpb_se", KEY_NUMBER},
};

/* The first top-level key of the wrong type, NULL if none; *want says what it should be. */
static const char *mistyped_key(const cJSON *run, const char **want) {
    for (size_t i = 0; i < sizeof result_keys / sizeof result_keys[0]; i++) {
        const cJSON *v = cJSON_GetObjectItem(run, result_keys[i].key);
        if (!v) continue;
        bool ok;
        switch (result_keys[i].type) {
        case KEY_STRING: ok = cJSON_IsString(v), *want = "a string"; break;
        case KEY_COUNT: /* bad_number already checked the range; 2^53: exact in the double JSON gives */
            ok = cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble == floor(v->valuedouble) &&
                 v->valuedouble <= 9007199254740992.0;
            *want = "a whole number >= 0";
            break;
        case KEY_NUMBER: ok = cJSON_IsNumber(v), *want = "a number"; break;
        case KEY_ARRAY: ok = cJSON_IsArray(v), *want = "a list"; break;
        default: ok = cJSON_IsObject(v), *want = "an object"; break;
        }
        if (!ok) return result_keys[i].key;
    }
    return NULL;
}

/* ---- streaming ---- */
#define LAB_MAX_LINE ((size_t)64 << 20) /* a run's line is at most a few MiB (LAB_RESULT_TABLE_MAX values) */

int cli_lab_each_result(const char *command, const char *path, bool missing_ok, cli_lab_line_fn fn, void *ctx) {
    if (missing_ok && access(path, F_OK) != 0) return EXIT_OK;
    /* O_NONBLOCK then fstat: a FIFO or device is refused without blocking */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return cli_fail(command, EXIT_RUNTIME, NULL, "cannot open %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return cli_fail(command, EXIT_RUNTIME, NULL, "%s is not a regular file", path);
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        close(fd);
        return cli_fail(command, EXIT_RUNTIME, NULL, "out of memory opening %s", path);
    }
    char *line = NULL;
    size_t cap = 0;
    long line_no = 0;
    int rc = EXIT_OK;
    for (;;) {
        errno = 0;
        ssize_t got = getline(&line, &cap, f);
        if (got < 0) {
            if (errno == ENOMEM) rc = cli_fail(command, EXIT_RUNTIME, "free memory", "out of memory reading line %ld of %s", line_no + 1, path);
            else if (ferror(f)) rc = cli_fail(command, EXIT_RUNTIME, NULL, "cannot read %s: %s", path, strerror(errno));
            break;
        }
        line_no++;
        size_t len = (size_t)got;
        if (line[len - 1] != '\n') { /* the last line without newline: a run cut short by a crash */
            fprintf(stderr, "posenc %s: ", command);
            cli_put_escaped(stderr, path);
            fprintf(stderr, " line %ld has no newline: ignored (unfinished write)\n", line_no);
            break;
        }
        line[--len] = '\0';
        if (len == 0) continue;
        /* say what the line is when it is recognisably something else */
        char nul_words[96];
        const char *what = len > LAB_MAX_LINE                 ? "longer than 64 MiB"
                           : (line[0] == '\xff' && len > 1 && line[1] == '\xfe') ||
                                     (line[0] == '\xfe' && len > 1 && line[1] == '\xff') || utf16_like(line, len)
                               ? "UTF-16 text (NUL bytes between the characters); lab run writes UTF-8"
                           : strlen(line) != len ? nul_bytes(line, len, nul_words, sizeof nul_words)
                           : strncmp(line, "\xef\xbb\xbf", 3) == 0
                               ? "it starts with a UTF-8 byte order mark, which lab run never writes"
                           : line[0] == '#' || strncmp(line, "//", 2) == 0 || strncmp(line, "/*", 2) == 0
                               ? "a comment: JSON lines have none"
                               : NULL;
        if (what) {
            rc = cli_fail(command, EXIT_RUNTIME, NULL, "%s line %ld is not a lab result (%s)", path, line_no, what);
            break;
        }
        cJSON *run = cJSON_ParseWithLength(line, len);
        if (!run && looks_like_json(line, len)) {
            rc = cli_fail(command, EXIT_RUNTIME, "free memory, or split the file", "out of memory parsing line %ld of %s (%zu bytes)",
                          line_no, path, len);
            break;
        }
        if (!cJSON_IsObject(run) || !cJSON_IsString(cJSON_GetObjectItem(run, "id"))) {
            cJSON_Delete(run);
            rc = cli_fail(command, EXIT_RUNTIME, NULL, "%s line %ld is not a lab result (JSON object with an id)", path, line_no);
            break;
        }
        const char *key = NULL, *dup = NULL;
        bool oom = false;
        const cJSON *bad = bad_number(run, &key, &dup, &oom);
        if (!bad && (dup || oom)) {
            rc = oom ? cli_fail(command, EXIT_RUNTIME, "free memory", "out of memory checking line %ld of %s", line_no, path)
                     : cli_fail(command, EXIT_RUNTIME, "a lab run writes each key once; was the file edited?",
                                "%s line %ld (%s): key \"%s\" is given twice in one object (which one counts would be a guess)",
                                path, line_no, cJSON_GetObjectItem(run, "id")->valuestring, dup);
            cJSON_Delete(run);
            break;
        }
        if (bad) {
            rc = cli_fail(command, EXIT_RUNTIME, "a lab run writes finite values in range; was the file edited?",
                          "%s line %ld (%s): \"%s\" is %s (%.17g)", path, line_no,
                          cJSON_GetObjectItem(run, "id")->valuestring, key,
                          !isfinite(bad->valuedouble) ? "not a finite number" : "out of range", bad->valuedouble);
            cJSON_Delete(run);
            break;
        }
        const char *want = NULL, *wrong = mistyped_key(run, &want);
        if (wrong) {
            rc = cli_fail(command, EXIT_RUNTIME, "a lab run writes each key with one type; was the file edited?",
                          "%s line %ld (%s): \"%s\" must be %s", path, line_no,
                          cJSON_GetObjectItem(run, "id")->valuestring, wrong, want);
            cJSON_Delete(run);
            break;
        }
        rc = fn(ctx, run, line, len, path, line_no); /* takes run */
        if (rc != EXIT_OK) break;
    }
    free(line);
    fclose(f);
    return rc;
}

typedef struct {
    const char *command;
    cJSON *all;
    unsigned keep;
    bool kept_learned, kept_any; /* position tables kept so far */
    size_t runs;                 /* runs kept so far */
} collect_ctx;

/* Keep what the readers use: the big per-step and per-cell arrays go, except the
 * curve when asked and the first two position tables (report --lab draws the first
 * learned one, else the first of any scheme). */
static int collect(void *ctx, cJSON *run, const char *line, size_t len, const char *path, long line_no) {
    collect_ctx *c = ctx;
    (void)line, (void)len, (void)path, (void)line_no;
    cJSON_DeleteItemFromObject(run, "grad_norms");
    if (!(c->keep & CLI_LAB_KEEP_CURVE)) cJSON_DeleteItemFromObject(run, "curve");
    if (cJSON_GetObjectItem(run, "position_table")) {
        const cJSON *scheme = cJSON_GetObjectItem(run, "scheme");
        bool learned = cJSON_IsString(scheme) && strcmp(scheme->valuestring, "learned") == 0;
        if ((learned && !c->kept_learned) || !c->kept_any) {
            c->kept_learned |= learned;
            c->kept_any = true;
        } else {
            cJSON_DeleteItemFromObject(run, "position_table");
        }
    }
    if (!cJSON_AddItemToArray(c->all, run)) {
        cJSON_Delete(run);
        return cli_fail(c->command, EXIT_RUNTIME, "free memory", "out of memory keeping the runs of %s", path);
    }
    c->runs++;
    return EXIT_OK;
}

/* The runs of the files into *out (EXIT_* code, message printed); need_runs refuses
 * a file that adds none. */
static int read_results(const char *command, const char *const *paths, int count, bool missing_ok, unsigned keep,
                        bool need_runs, cJSON **out) {
    *out = NULL;
    collect_ctx c = {command, cJSON_CreateArray(), keep, false, false, 0};
    if (!c.all) return cli_fail(command, EXIT_RUNTIME, NULL, "out of memory");
    for (int f = 0; f < count; f++) {
        size_t before = c.runs;
        int rc = cli_lab_each_result(command, paths[f], missing_ok, collect, &c);
        if (rc == EXIT_OK && need_runs && c.runs == before) rc = cli_lab_no_runs(command, paths[f]);
        if (rc != EXIT_OK) {
            cJSON_Delete(c.all);
            return rc;
        }
    }
    *out = c.all;
    return EXIT_OK;
}

struct cJSON *cli_lab_read_results(const char *command, const char *const *paths, int count, bool missing_ok,
                                   unsigned keep) {
    cJSON *runs;
    read_results(command, paths, count, missing_ok, keep, false, &runs);
    return runs;
}

int cli_lab_read_runs(const char *command, const char *const *paths, int count, unsigned keep, struct cJSON **out) {
    return read_results(command, paths, count, false, keep, true, out);
}

int cli_lab_no_runs(const char *command, const char *path) {
    return cli_fail(command, EXIT_USAGE, "posenc lab run NAME -o FILE writes one", "%s holds no lab runs", path);
}
