/* render_source.c: the tables that `plot` and `report` draw: computed from
 * encoding flags, or read from a .npy file. Values are held as doubles. */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_table_free(cli_table *t) {
    free(t->values);
    free(t->frequencies);
    memset(t, 0, sizeof *t);
}

static const char *const kind_names[] = {"sinusoidal", "index", "normalized", NULL};
static const char *const freqs_names[] = {"vaswani", "t2t", NULL};
static const char *const layout_names[] = {"interleaved", "half", NULL};

/* Largest table drawn from flags: 2^24 cells (128 MiB of doubles). */
#define MAX_CELLS ((size_t)1 << 24)

static int compute(const char *command, int kind, int64_t len, const posenc_sinusoid_params *p, int64_t start,
                   cli_table *t) {
    memset(t, 0, sizeof *t);
    posenc_error err = {0};
    size_t count;
    if (posenc_table_count((size_t)len, p->dim, &count, &err) != POSENC_OK) return cli_fail_status(command, &err);
    if (count > MAX_CELLS)
        return cli_fail(command, EXIT_USAGE, "draw a smaller table (pictures average it down anyway)",
                        "%lld x %d = %zu cells is more than the %zu this command computes", (long long)len, p->dim,
                        count, MAX_CELLS);
    t->values = malloc(sizeof(double) * count);
    if (!t->values) return cli_fail(command, EXIT_RUNTIME, NULL, "out of memory");
    posenc_positions pos = posenc_positions_range(start, (size_t)len);
    posenc_status st = kind == 0 ? posenc_sinusoid_table(p, &pos, POSENC_DTYPE_F64, t->values, count, &err)
                                 : posenc_baseline_table(kind == 1 ? POSENC_KIND_INDEX : POSENC_KIND_NORMALIZED, p->dim,
                                                         &pos, POSENC_DTYPE_F64, t->values, count, &err);
    if (st != POSENC_OK) {
        cli_table_free(t);
        return cli_fail_status(command, &err);
    }
    t->rows = (size_t)len;
    t->cols = (size_t)p->dim;
    t->first_position = start;
    t->layout = p->layout;
    snprintf(t->name, sizeof t->name, "%s", kind_names[kind]);
    if (kind == 0) {
        int32_t pairs = 0;
        posenc_sinusoid_check(p, &pairs, NULL);
        t->frequencies = malloc(sizeof(double) * (size_t)(pairs > 0 ? pairs : 1));
        if (!t->frequencies ||
            posenc_sinusoid_frequencies_f64(p, t->frequencies, (size_t)pairs, &err) != POSENC_OK) {
            cli_table_free(t);
            return err.status ? cli_fail_status(command, &err) : cli_fail(command, EXIT_RUNTIME, NULL, "out of memory");
        }
        t->pairs = (size_t)pairs;
        snprintf(t->about, sizeof t->about, "sinusoidal, %lld positions from %lld, dim %d, base %g, %s frequencies, %s layout",
                 (long long)len, (long long)start, p->dim, p->base, freqs_names[p->freqs], layout_names[p->layout]);
    } else {
        snprintf(t->about, sizeof t->about, "%s baseline: every channel holds %s, %lld positions, dim %d",
                 kind_names[kind], kind == 1 ? "the position p" : "p/(len-1)", (long long)len, p->dim);
    }
    return EXIT_OK;
}

int cli_table_make(const char *command, const char *kind, int64_t len, int32_t dim, cli_table *t) {
    for (int k = 0; kind_names[k]; k++)
        if (strcmp(kind, kind_names[k]) == 0) {
            posenc_sinusoid_params p;
            posenc_sinusoid_params_default(&p, dim);
            return compute(command, k, len, &p, 0, t);
        }
    return cli_fail(command, EXIT_USAGE, NULL, "unknown table kind '%s'", kind);
}

static int read_table(const char *command, const char *path, size_t max_bytes, cli_table *t) {
    memset(t, 0, sizeof *t);
    posenc_error err = {0};
    posenc_array raw, f64;
    if (posenc_npy_read(path, max_bytes, &raw, &err) != POSENC_OK) return cli_fail_status(command, &err);
    int rc = EXIT_OK;
    if (raw.ndim != 2 && raw.ndim != 1)
        rc = cli_fail(command, EXIT_USAGE, "save a [positions x channels] array",
                      "%s must be a 2-D table (or a 1-D row), got rank %d", path, raw.ndim);
    else if (raw.count == 0)
        rc = cli_fail(command, EXIT_USAGE, NULL, "%s is an empty table (shape %zu x %zu): nothing to draw", path,
                      raw.ndim == 2 ? raw.shape[0] : 1, raw.ndim == 2 ? raw.shape[1] : raw.shape[0]);
    if (rc != EXIT_OK) {
        posenc_array_free(&raw);
        return rc;
    }
    posenc_status st = posenc_array_to_f64(&raw, &f64, &err);
    size_t rows = raw.ndim == 2 ? raw.shape[0] : 1, cols = raw.ndim == 2 ? raw.shape[1] : raw.shape[0];
    posenc_array_free(&raw);
    if (st != POSENC_OK) return cli_fail_status(command, &err);
    t->values = f64.data; /* take ownership of the malloc'd data */
    t->rows = rows;
    t->cols = cols;
    const char *base = strrchr(path, '/');
    snprintf(t->name, sizeof t->name, "%s", base ? base + 1 : path);
    snprintf(t->about, sizeof t->about, "table read from %s, %zu x %zu", path, rows, cols);
    return EXIT_OK;
}

int cli_table_from_args(const char *command, const cli_args *a, cli_table *t) {
    memset(t, 0, sizeof *t);
    if (a->positional_count > 0) {
        const char *flags[] = {"kind", "len", "dim", "base", "freqs", "layout", "start"};
        for (size_t i = 0; i < sizeof flags / sizeof *flags; i++)
            if (cli_has(a, flags[i]))
                return cli_fail(command, EXIT_USAGE, NULL, "give a table file or --%s and the other encoding flags, not both",
                                flags[i]);
        return read_table(command, a->positional[0], cli_max_bytes(a), t);
    }
    int kind = 0, freqs = 0, layout = 0;
    int64_t len = 128, start = 0;
    int32_t dim = 64;
    if (!cli_choice(a, "kind", kind_names, &kind) || !cli_choice(a, "freqs", freqs_names, &freqs) ||
        !cli_choice(a, "layout", layout_names, &layout) || !cli_int64(a, "len", 1, INT64_MAX, &len) ||
        !cli_int32(a, "dim", 1, INT32_MAX, &dim) || !cli_int64(a, "start", 0, INT64_MAX, &start))
        return EXIT_USAGE;
    posenc_sinusoid_params p;
    posenc_sinusoid_params_default(&p, dim);
    if (!cli_double(a, "base", &p.base)) return EXIT_USAGE;
    p.freqs = freqs ? POSENC_FREQS_T2T : POSENC_FREQS_VASWANI;
    p.layout = layout ? POSENC_LAYOUT_HALF : POSENC_LAYOUT_INTERLEAVED;
    return compute(command, kind, len, &p, start, t);
}
