/* table_kinds.c: `posenc table --kind learned|xl|2d|3d|hybrid`. cmd_table parses
 * the options and hands over here; each kind accepts only the flags it reads,
 * so a misplaced flag is an error instead of being silently ignored. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CMD "table"

/* Which flags each kind reads: the one place that says it. A flag outside its
 * kind's list is an error naming the flag and the kind (never silently ignored). */
static const char *const always_allowed[] = {"kind", "o", "max-bytes", NULL};
static const char *const flags_sinusoidal[] = {"len", "dim", "base", "freqs", "layout", "start", "positions", "odd",
                                               "dtype", "precise", "torch-compat", "freq-scale", NULL};
static const char *const flags_baseline[] = {"len", "dim", "start", "positions", "dtype", NULL};
static const char *const flags_xl[] = {"len", "dim", "clamp", "precise", "torch-compat", "dtype", NULL};
static const char *const flags_grid[] = {"grid", "dim", "split", "precise", "torch-compat", "dtype", NULL};
static const char *const flags_learned[] = {"len", "dim", "start", "positions", "input-ids", "pad-id",
                                            "attention-mask", "past-length", "seed", "sigma", "padding-idx", "table",
                                            "past-end", "keep-prefix", "resize", NULL};
static const char *const flags_hybrid[] = {"len", "start", "positions", "dim", "learned-dim", "table", "seed", "sigma",
                                           "past-end", "base", "freqs", "layout", "odd", NULL};

static const struct {
    const char *kind;
    const char *const *flags;
} kind_flags[] = {{"sinusoidal", flags_sinusoidal}, {"index", flags_baseline}, {"normalized", flags_baseline},
                  {"learned", flags_learned},       {"xl", flags_xl},          {"2d", flags_grid},
                  {"3d", flags_grid},               {"hybrid", flags_hybrid}};
#define KIND_COUNT (sizeof kind_flags / sizeof kind_flags[0])

int cli_table_kind_check(const cli_args *a, const char *kind) {
    const char *const *allowed = NULL;
    for (size_t k = 0; k < KIND_COUNT && !allowed; k++)
        if (strcmp(kind_flags[k].kind, kind) == 0) allowed = kind_flags[k].flags;
    if (!allowed) {
        char list[160] = "";
        for (size_t k = 0; k < KIND_COUNT; k++) {
            strncat(list, kind_flags[k].kind, sizeof list - strlen(list) - 1);
            if (k + 1 < KIND_COUNT) strncat(list, "|", sizeof list - strlen(list) - 1);
        }
        return cli_fail(CMD, EXIT_USAGE, NULL, "unknown --kind '%s' (choose %s)", kind, list);
    }
    for (int i = 0; a->options[i].name; i++) {
        if (!a->seen[i]) continue;
        const char *name = a->options[i].name;
        bool ok = false;
        for (int j = 0; always_allowed[j] && !ok; j++) ok = strcmp(always_allowed[j], name) == 0;
        for (int j = 0; allowed[j] && !ok; j++) ok = strcmp(allowed[j], name) == 0;
        if (!ok)
            return cli_fail(CMD, EXIT_USAGE, "see posenc table --help for which kind reads it",
                            "--%s does not apply to --kind %s", name, kind);
    }
    if (!cli_has(a, "o")) return cli_fail(CMD, EXIT_USAGE, NULL, "-o OUT.npy|OUT.csv is required");
    return EXIT_OK;
}

static int require(const cli_args *a, const char *name, const char *kind, const char *hint) {
    if (cli_has(a, name)) return EXIT_OK;
    return cli_fail(CMD, EXIT_USAGE, hint, "--%s is required for --kind %s", name, kind);
}

/* Write an array, then say what was written (stderr, like cmd_table). */
static int write_result(const cli_args *a, const posenc_array *out) {
    const char *path = cli_string(a, "o", "-");
    int rc = cli_write_array(CMD, path, out);
    if (rc == EXIT_OK && strcmp(path, "-") != 0) {
        fputs("posenc table: wrote ", stderr);
        cli_put_escaped(stderr, path);
        fputs(" [", stderr);
        for (int i = 0; i < out->ndim; i++) fprintf(stderr, "%s%zu", i ? " x " : "", out->shape[i]);
        fprintf(stderr, "] %s\n", posenc_dtype_name(out->dtype));
    }
    return rc;
}

static int create_array(const cli_args *a, posenc_dtype dtype, int ndim, const size_t *shape, posenc_array *out) {
    posenc_error err = {0};
    if (posenc_array_create(out, dtype, ndim, shape, cli_max_bytes(a), &err) == POSENC_OK) return EXIT_OK;
    return cli_fail_allocation(CMD, &err, "lower the sizes, or raise --max-bytes");
}

/* ---- xl ----------------------------------------------------------------- */

static int table_xl(const cli_args *a) {
    int rc;
    if ((rc = require(a, "len", "xl", "--len is klen = mem_len + qlen")) ||
        (rc = require(a, "dim", "xl", "e.g. --dim 64")))
        return rc;
    int64_t klen = 0, clamp = -1;
    int32_t dim = 0;
    cli_dtype_choice dtype;
    cli_dtype_default(&dtype);
    posenc_mode mode = POSENC_MODE_PRECISE;
    if (!cli_int64(a, "len", 1, INT64_MAX, &klen) || !cli_int32(a, "dim", 1, INT32_MAX, &dim) ||
        !cli_int64(a, "clamp", 0, INT64_MAX, &clamp) || !cli_get_dtype(a, "dtype", &dtype) || !cli_get_mode(a, &mode))
        return EXIT_USAGE;
    if (dim % 2) return cli_fail(CMD, EXIT_USAGE, NULL, "--dim must be even for --kind xl ([sin | cos] halves), got %d", dim);
    size_t shape[2] = {(size_t)klen, (size_t)dim};
    posenc_array out;
    if ((rc = create_array(a, dtype.compute, 2, shape, &out))) return rc;
    posenc_error err = {0};
    if (posenc_xl_relative_table(dim, (size_t)klen, clamp, mode, out.dtype, out.data, out.count, &err) != POSENC_OK)
        rc = cli_fail_status(CMD, &err);
    if (!rc) rc = cli_widen_bf16(CMD, &dtype, &out);
    if (!rc) rc = write_result(a, &out);
    posenc_array_free(&out);
    return rc;
}

/* ---- 2d / 3d ------------------------------------------------------------- */

/* Parse "6x5" / "4x3x2": exactly `axes` positive decimal sizes joined by 'x'. */
static int parse_grid(const char *text, int axes, size_t *shape) {
    const char *p = text;
    for (int i = 0; i < axes; i++) {
        if (*p < '0' || *p > '9')
            return cli_fail(CMD, EXIT_USAGE, axes == 2 ? "e.g. --grid 6x5" : "e.g. --grid 4x3x2",
                            "--grid must be %s with positive integer sizes, got '%s'", axes == 2 ? "HxW" : "TxHxW",
                            text);
        unsigned long long v = 0;
        while (*p >= '0' && *p <= '9') {
            if (v > (1ULL << 40)) break;
            v = v * 10 + (unsigned long long)(*p++ - '0');
        }
        if (v == 0 || v > (1ULL << 24))
            return cli_fail(CMD, EXIT_USAGE, NULL, "--grid size %d must be in [1, 2^24], got '%s'", i + 1, text);
        shape[i] = (size_t)v;
        if (i + 1 < axes) {
            if (*p != 'x')
                return cli_fail(CMD, EXIT_USAGE, axes == 2 ? "e.g. --grid 6x5" : "e.g. --grid 4x3x2",
                                "--grid must be %s (%d sizes joined by 'x'), got '%s'", axes == 2 ? "HxW" : "TxHxW",
                                axes, text);
            p++;
        }
    }
    if (*p != '\0')
        return cli_fail(CMD, EXIT_USAGE, axes == 2 ? "e.g. --grid 6x5" : "e.g. --grid 4x3x2",
                        "--grid must be %s (%d sizes joined by 'x'), got '%s'", axes == 2 ? "HxW" : "TxHxW", axes,
                        text);
    return EXIT_OK;
}

static int table_grid(const cli_args *a, int axes) {
    const char *kind = axes == 2 ? "2d" : "3d";
    int rc;
    if ((rc = require(a, "grid", kind, axes == 2 ? "e.g. --grid 6x5" : "e.g. --grid 4x3x2")) ||
        (rc = require(a, "dim", kind, "--dim is the total channel count C")))
        return rc;
    static const char *const split_names[] = {"tatp22", "even", NULL};
    int32_t dim = 0;
    int split = 0;
    cli_dtype_choice dtype;
    cli_dtype_default(&dtype);
    posenc_mode mode = POSENC_MODE_PRECISE;
    size_t shape[4];
    if (!cli_int32(a, "dim", 1, INT32_MAX, &dim) || !cli_choice(a, "split", split_names, &split) ||
        !cli_get_dtype(a, "dtype", &dtype) || !cli_get_mode(a, &mode))
        return EXIT_USAGE;
    if ((rc = parse_grid(cli_string(a, "grid", ""), axes, shape))) return rc;
    posenc_error err = {0};
    int32_t per_axis;
    posenc_grid_split gs = split ? POSENC_GRID_SPLIT_EVEN : POSENC_GRID_SPLIT_TATP22;
    if (posenc_grid_axis_channels(axes, dim, gs, &per_axis, &err) != POSENC_OK) return cli_fail_status(CMD, &err);
    shape[axes] = (size_t)dim;
    posenc_array out;
    if ((rc = create_array(a, dtype.compute, axes + 1, shape, &out))) return rc;
    if (posenc_grid_table(axes, shape, dim, gs, mode, out.dtype, out.data, out.count, &err) != POSENC_OK)
        rc = cli_fail_status(CMD, &err);
    if (!rc) rc = cli_widen_bf16(CMD, &dtype, &out);
    if (!rc) rc = write_result(a, &out);
    posenc_array_free(&out);
    return rc;
}

/* ---- learned and hybrid ----------------------------------------------------- */

/* Read a learned table as float32. A valid .npy that is not a [rows x dim]
 * float table is bad input (exit 2); I/O errors and malformed files exit 1. */
static int load_table(const cli_args *a, posenc_array *out) {
    posenc_error err = {0};
    if (posenc_learned_read(cli_string(a, "table", ""), cli_max_bytes(a), out, &err) == POSENC_OK) return EXIT_OK;
    return cli_fail_status(CMD, &err);
}

/* --attention-mask M.npy: same shape as the ids, 1 = real token, 0 = padding. */
static int read_mask(const cli_args *a, const posenc_array *ids, uint8_t **mask) {
    *mask = NULL;
    if (!cli_has(a, "attention-mask")) return EXIT_OK;
    const char *path = cli_string(a, "attention-mask", "");
    posenc_error err = {0};
    posenc_array m;
    if (posenc_npy_read(path, cli_max_bytes(a), &m, &err) != POSENC_OK) return cli_fail_status(CMD, &err);
    int rc = EXIT_OK;
    if (m.ndim != ids->ndim || m.shape[0] != ids->shape[0] || (m.ndim == 2 && m.shape[1] != ids->shape[1]))
        rc = cli_fail(CMD, EXIT_USAGE, NULL, "--attention-mask %s must have the shape of the input ids (%zu%s%zu), got rank %d",
                      path, ids->shape[0], ids->ndim == 2 ? " x " : "", ids->ndim == 2 ? ids->shape[1] : (size_t)0, m.ndim);
    else if (m.dtype != POSENC_DTYPE_I64 && m.dtype != POSENC_DTYPE_I32 && m.dtype != POSENC_DTYPE_U8)
        rc = cli_fail(CMD, EXIT_USAGE, NULL, "--attention-mask %s must be int64, int32 or uint8 (0/1), got %s", path,
                      posenc_dtype_name(m.dtype));
    else if (!(*mask = malloc(m.count)))
        rc = cli_fail(CMD, EXIT_RUNTIME, NULL, "out of memory");
    for (size_t i = 0; !rc && i < m.count; i++) {
        int64_t v = m.dtype == POSENC_DTYPE_I64   ? ((int64_t *)m.data)[i]
                    : m.dtype == POSENC_DTYPE_I32 ? ((int32_t *)m.data)[i]
                                                  : ((uint8_t *)m.data)[i];
        if (v != 0 && v != 1)
            rc = cli_fail(CMD, EXIT_USAGE, NULL, "--attention-mask %s must hold 0 or 1, got %lld at index %zu", path,
                          (long long)v, i);
        else
            (*mask)[i] = (uint8_t)v;
    }
    posenc_array_free(&m);
    if (rc) {
        free(*mask);
        *mask = NULL;
    }
    return rc;
}

/* Integer positions from --len/--start, --positions or --input-ids (RoBERTa).
 * out_shape gets the leading dims ([count], or [batch, seq] for 2-D ids). */
typedef struct {
    int64_t *ids;
    size_t count;
    int ndim;
    size_t shape[2];
} position_list;

static int read_positions(const cli_args *a, const char *kind, position_list *pl) {
    memset(pl, 0, sizeof *pl);
    int sources = cli_has(a, "len") + cli_has(a, "positions") + cli_has(a, "input-ids");
    if (sources != 1)
        return cli_fail(CMD, EXIT_USAGE, "e.g. --len 50, --positions P.npy or --input-ids IDS.npy",
                        "--kind %s needs exactly one of --len, --positions, --input-ids (got %d)", kind, sources);
    if (cli_has(a, "start") && !cli_has(a, "len"))
        return cli_fail(CMD, EXIT_USAGE, NULL, "--start goes with --len");
    static const char *const ids_only[] = {"pad-id", "attention-mask", "past-length", NULL};
    for (int i = 0; ids_only[i]; i++)
        if (cli_has(a, ids_only[i]) && !cli_has(a, "input-ids"))
            return cli_fail(CMD, EXIT_USAGE, NULL, "--%s goes with --input-ids", ids_only[i]);
    pl->ndim = 1;
    if (cli_has(a, "len")) {
        int64_t len = 0, start = 0;
        if (!cli_int64(a, "len", 1, (int64_t)1 << 40, &len) || !cli_int64(a, "start", 0, (int64_t)1 << 53, &start))
            return EXIT_USAGE;
        if ((uint64_t)len > cli_max_bytes(a) / sizeof(int64_t))
            return cli_fail(CMD, EXIT_USAGE, "lower --len, or raise --max-bytes",
                            "--len %lld positions exceed the size limit of %zu bytes", (long long)len, cli_max_bytes(a));
        pl->count = pl->shape[0] = (size_t)len;
        if (!(pl->ids = malloc(sizeof *pl->ids * pl->count))) return cli_fail(CMD, EXIT_RUNTIME, NULL, "out of memory");
        for (size_t i = 0; i < pl->count; i++) pl->ids[i] = start + (int64_t)i;
        return EXIT_OK;
    }
    if (cli_has(a, "positions")) {
        double *values = NULL;
        int rc = cli_read_positions(CMD, cli_string(a, "positions", ""), &pl->ids, &values, &pl->count);
        free(values);
        if (rc) return rc;
        if (!pl->ids)
            return cli_fail(CMD, EXIT_USAGE, "save int64 positions",
                            "--kind %s needs integer positions (a learned table has no rows between rows), got floats",
                            kind);
        pl->shape[0] = pl->count;
        return EXIT_OK;
    }
    /* --input-ids: [seq] or [batch, seq] integer token ids */
    const char *path = cli_string(a, "input-ids", "");
    int64_t pad = 1, past = 0;
    uint8_t *mask = NULL;
    if (!cli_int64(a, "pad-id", 0, INT64_MAX / 4, &pad) || !cli_int64(a, "past-length", 0, INT64_MAX / 4, &past))
        return EXIT_USAGE;
    posenc_error err = {0};
    posenc_array ids;
    if (posenc_npy_read(path, cli_max_bytes(a), &ids, &err) != POSENC_OK) return cli_fail_status(CMD, &err);
    int rc = EXIT_OK;
    if ((ids.ndim != 1 && ids.ndim != 2) || ids.count == 0)
        rc = cli_fail(CMD, EXIT_USAGE, NULL, "input ids %s must be a non-empty [seq] or [batch, seq] array, got rank %d "
                      "with %zu elements", path, ids.ndim, ids.count);
    else if (ids.dtype != POSENC_DTYPE_I64 && ids.dtype != POSENC_DTYPE_I32)
        rc = cli_fail(CMD, EXIT_USAGE, NULL, "input ids %s must be int64 or int32, got %s", path,
                      posenc_dtype_name(ids.dtype));
    int64_t *tokens = rc ? NULL : malloc(sizeof *tokens * ids.count);
    pl->ids = rc ? NULL : malloc(sizeof *pl->ids * ids.count);
    if (!rc && (!tokens || !pl->ids)) rc = cli_fail(CMD, EXIT_RUNTIME, NULL, "out of memory");
    if (!rc) {
        for (size_t i = 0; i < ids.count; i++)
            tokens[i] = ids.dtype == POSENC_DTYPE_I64 ? ((int64_t *)ids.data)[i] : ((int32_t *)ids.data)[i];
        pl->ndim = ids.ndim;
        pl->shape[0] = ids.shape[0];
        pl->shape[1] = ids.ndim == 2 ? ids.shape[1] : 0;
        size_t batch = ids.ndim == 2 ? ids.shape[0] : 1, seq = ids.ndim == 2 ? ids.shape[1] : ids.shape[0];
        pl->count = ids.count;
        rc = read_mask(a, &ids, &mask);
        if (!rc && posenc_positions_from_input_ids(tokens, mask, batch, seq, pad, past, pl->ids, pl->count, &err) !=
                       POSENC_OK)
            rc = cli_fail_status(CMD, &err);
    }
    free(mask);
    free(tokens);
    posenc_array_free(&ids);
    return rc;
}

static int64_t max_position(const position_list *pl) {
    int64_t m = 0;
    for (size_t i = 0; i < pl->count; i++)
        if (pl->ids[i] > m) m = pl->ids[i];
    return m;
}

static const char *const past_end_names[] = {"error", "clamp", "resize", NULL};

/* Resize `table` in place (a new array) to new_rows, keeping `keep` prefix rows. */
static int resize_table(const cli_args *a, posenc_array *table, size_t new_rows, size_t keep) {
    posenc_error err = {0};
    size_t shape[2] = {new_rows, table->shape[1]};
    posenc_array out;
    int rc = create_array(a, POSENC_DTYPE_F32, 2, shape, &out);
    if (rc) return rc;
    if (posenc_learned_resize_f32(table->data, table->shape[0], (int32_t)table->shape[1], keep, out.data, new_rows,
                                  out.count, &err) != POSENC_OK) {
        posenc_array_free(&out);
        return cli_fail_status(CMD, &err);
    }
    posenc_array_free(table);
    *table = out;
    return EXIT_OK;
}

/* Gather rows of `table` at the positions; output [count x dim] or [batch, seq, dim]. */
static int gather_and_write(const cli_args *a, const posenc_array *table, const position_list *pl, posenc_past_end pe) {
    size_t shape[3] = {pl->shape[0], pl->shape[1], 0};
    shape[pl->ndim] = table->shape[1];
    posenc_array out;
    int rc = create_array(a, POSENC_DTYPE_F32, pl->ndim + 1, shape, &out);
    if (rc) return rc;
    posenc_error err = {0};
    if (posenc_learned_gather_f32(table->data, table->shape[0], (int32_t)table->shape[1], pl->ids, pl->count, pe,
                                  out.data, out.count, &err) != POSENC_OK)
        /* OUT_OF_RANGE exits 1 (docs/errors.md): the table is shorter than the positions */
        rc = err.status == POSENC_ERR_OUT_OF_RANGE
                 ? cli_fail(CMD, EXIT_RUNTIME,
                            strstr(err.message, "past the end") ? "use --past-end clamp or --past-end resize" : NULL,
                            "%s (%s)", err.message, posenc_strerror(err.status))
                 : cli_fail_status(CMD, &err);
    if (!rc) rc = write_result(a, &out);
    posenc_array_free(&out);
    return rc;
}

static int table_learned(const cli_args *a) {
    int rc;
    int64_t seed = 0, padding = POSENC_NO_PADDING, keep = 0, resize = 0;
    double sigma = POSENC_LEARNED_SIGMA_DEFAULT;
    int32_t dim = 0;
    int past_end = 0;
    if (!cli_int64(a, "seed", 0, INT64_MAX, &seed) || !cli_double(a, "sigma", &sigma) ||
        !cli_int64(a, "padding-idx", 0, INT64_MAX, &padding) || !cli_int64(a, "keep-prefix", 0, INT64_MAX, &keep) ||
        !cli_int64(a, "resize", 1, (int64_t)1 << 31, &resize) || !cli_int32(a, "dim", 1, INT32_MAX, &dim) ||
        !cli_choice(a, "past-end", past_end_names, &past_end))
        return EXIT_USAGE;
    if (!cli_has(a, "table")) {
        /* create a fresh table: rows = --len */
        static const char *const table_only[] = {"start", "positions", "input-ids", "pad-id", "attention-mask",
                                                 "past-length", "past-end", "keep-prefix", "resize", NULL};
        for (int i = 0; table_only[i]; i++)
            if (cli_has(a, table_only[i]))
                return cli_fail(CMD, EXIT_USAGE, "create a table first, then pass it with --table T.npy",
                                "--%s needs --table T.npy (without it --kind learned creates a table)", table_only[i]);
        if ((rc = require(a, "len", "learned", "--len is the number of rows (max positions)")) ||
            (rc = require(a, "dim", "learned", "e.g. --dim 768")))
            return rc;
        if (sigma < 0) return cli_fail(CMD, EXIT_USAGE, NULL, "--sigma must be >= 0, got %g", sigma);
        int64_t rows = 0;
        if (!cli_int64(a, "len", 1, INT64_MAX, &rows)) return EXIT_USAGE;
        if (padding != POSENC_NO_PADDING && padding >= rows)
            return cli_fail(CMD, EXIT_USAGE, NULL, "--padding-idx must be < --len %lld, got %lld", (long long)rows,
                            (long long)padding);
        size_t shape[2] = {(size_t)rows, (size_t)dim};
        posenc_array out;
        if ((rc = create_array(a, POSENC_DTYPE_F32, 2, shape, &out))) return rc;
        posenc_error err = {0};
        if (posenc_learned_init_f32((uint64_t)seed, sigma, padding, (size_t)rows, dim, out.data, out.count, &err) !=
            POSENC_OK)
            rc = cli_fail_status(CMD, &err);
        if (!rc) rc = write_result(a, &out);
        posenc_array_free(&out);
        return rc;
    }
    static const char *const create_only[] = {"seed", "sigma", "padding-idx", NULL};
    for (int i = 0; create_only[i]; i++)
        if (cli_has(a, create_only[i]))
            return cli_fail(CMD, EXIT_USAGE, NULL, "--%s applies when creating a table, not with --table", create_only[i]);
    posenc_array table;
    if ((rc = load_table(a, &table))) return rc;
    if (cli_has(a, "dim") && (size_t)dim != table.shape[1]) {
        rc = cli_fail(CMD, EXIT_USAGE, "drop --dim, or pass the matching table",
                      "--dim %d does not match the table %s, which has %zu columns", dim, cli_string(a, "table", ""),
                      table.shape[1]);
    } else if (cli_has(a, "resize")) {
        if (cli_has(a, "len") || cli_has(a, "positions") || cli_has(a, "input-ids") || cli_has(a, "past-end"))
            rc = cli_fail(CMD, EXIT_USAGE, NULL, "--resize writes the resized table; give no positions with it");
        else if ((rc = resize_table(a, &table, (size_t)resize, (size_t)keep)) == EXIT_OK)
            rc = write_result(a, &table);
    } else {
        position_list pl = {0};
        if (cli_has(a, "keep-prefix") && past_end != 2)
            rc = cli_fail(CMD, EXIT_USAGE, NULL, "--keep-prefix goes with --resize or --past-end resize");
        else if ((rc = read_positions(a, "learned", &pl)) == EXIT_OK) {
            int64_t top = max_position(&pl);
            if (past_end == 2 && (uint64_t)top >= table.shape[0])
                rc = resize_table(a, &table, (size_t)top + 1, (size_t)keep);
            if (!rc)
                rc = gather_and_write(a, &table, &pl, past_end == 1 ? POSENC_PAST_END_CLAMP : POSENC_PAST_END_ERROR);
        }
        free(pl.ids);
    }
    posenc_array_free(&table);
    return rc;
}

static int table_hybrid(const cli_args *a) {
    int rc;
    if ((rc = require(a, "dim", "hybrid", "--dim is the total width"))) return rc;
    int32_t dim = 0, learned_dim = -1;
    int64_t seed = 0;
    double sigma = POSENC_LEARNED_SIGMA_DEFAULT;
    int past_end = 0;
    posenc_sinusoid_params params;
    if (!cli_int32(a, "dim", 1, INT32_MAX, &dim) || !cli_int32(a, "learned-dim", 0, INT32_MAX, &learned_dim) ||
        !cli_int64(a, "seed", 0, INT64_MAX, &seed) || !cli_double(a, "sigma", &sigma) ||
        !cli_choice(a, "past-end", past_end_names, &past_end))
        return EXIT_USAGE;
    posenc_sinusoid_params_default(&params, dim);
    if (!cli_double(a, "base", &params.base) || !cli_get_freqs(a, "freqs", &params.freqs) ||
        !cli_get_layout(a, "layout", &params.layout) || !cli_get_odd(a, "odd", &params.odd))
        return EXIT_USAGE;
    if (past_end == 2)
        return cli_fail(CMD, EXIT_USAGE, "resize the learned table with --kind learned --resize first",
                        "--kind hybrid takes --past-end error or clamp, got resize");
    if (cli_has(a, "table") && (cli_has(a, "seed") || cli_has(a, "sigma")))
        return cli_fail(CMD, EXIT_USAGE, NULL, "--seed/--sigma create the learned part; not with --table");
    if (sigma < 0) return cli_fail(CMD, EXIT_USAGE, NULL, "--sigma must be >= 0, got %g", sigma);
    position_list pl;
    if ((rc = read_positions(a, "hybrid", &pl))) return rc;
    posenc_array learned = {0};
    if (cli_has(a, "table")) {
        rc = load_table(a, &learned);
        if (!rc && learned_dim >= 0 && (size_t)learned_dim != learned.shape[1])
            rc = cli_fail(CMD, EXIT_USAGE, NULL, "--learned-dim %d does not match the table %s, which has %zu columns",
                          learned_dim, cli_string(a, "table", ""), learned.shape[1]);
        if (!rc && learned.shape[1] > (size_t)dim)
            rc = cli_fail(CMD, EXIT_USAGE, NULL, "the learned table has %zu columns, more than --dim %d",
                          learned.shape[1], dim);
    } else if (learned_dim < 0) {
        rc = cli_fail(CMD, EXIT_USAGE, "e.g. --learned-dim 16 --seed 0", "--kind hybrid needs --table T.npy or --learned-dim L");
    } else if (learned_dim > dim) {
        rc = cli_fail(CMD, EXIT_USAGE, NULL, "--learned-dim must be <= --dim %d, got %d", dim, learned_dim);
    } else if (learned_dim > 0) {
        /* a fresh learned part just long enough for the positions asked for */
        size_t shape[2] = {(size_t)max_position(&pl) + 1, (size_t)learned_dim};
        posenc_error err = {0};
        rc = create_array(a, POSENC_DTYPE_F32, 2, shape, &learned);
        if (!rc && posenc_learned_init_f32((uint64_t)seed, sigma, POSENC_NO_PADDING, shape[0], learned_dim, learned.data,
                                           learned.count, &err) != POSENC_OK)
            rc = cli_fail_status(CMD, &err);
    }
    posenc_array out = {0};
    size_t shape[2] = {pl.count, (size_t)dim};
    if (!rc) rc = create_array(a, POSENC_DTYPE_F32, 2, shape, &out);
    if (!rc) {
        posenc_error err = {0};
        posenc_positions pos = posenc_positions_ids(pl.ids, pl.count);
        int32_t ld = learned.data ? (int32_t)learned.shape[1] : 0;
        if (posenc_hybrid_table_f32(learned.data, learned.data ? learned.shape[0] : 0, ld, &params, &pos,
                                    past_end == 1 ? POSENC_PAST_END_CLAMP : POSENC_PAST_END_ERROR, out.data, out.count,
                                    &err) != POSENC_OK)
            rc = err.status == POSENC_ERR_OUT_OF_RANGE
                     ? cli_fail(CMD, EXIT_RUNTIME, "use --past-end clamp, or a longer table", "%s (%s)", err.message,
                                posenc_strerror(err.status))
                     : cli_fail_status(CMD, &err);
        if (!rc) rc = write_result(a, &out);
    }
    posenc_array_free(&out);
    posenc_array_free(&learned);
    free(pl.ids);
    return rc;
}

int cmd_table_kind(const cli_args *args, const char *kind) {
    if (strcmp(kind, "learned") == 0) return table_learned(args);
    if (strcmp(kind, "xl") == 0) return table_xl(args);
    if (strcmp(kind, "2d") == 0) return table_grid(args, 2);
    if (strcmp(kind, "3d") == 0) return table_grid(args, 3);
    if (strcmp(kind, "hybrid") == 0) return table_hybrid(args);
    return cli_fail(CMD, EXIT_USAGE, NULL, "unknown --kind '%s'", kind);
}
