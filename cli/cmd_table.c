/* cmd_table.c: `posenc table`: write an additive position table to a file. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cli_option table_options[] = {
    {"kind", "KIND", "sinusoidal (default) | index | normalized | learned | xl | 2d | 3d | hybrid"},
    {"len", "N", "number of positions (rows), required unless --positions"},
    {"dim", "D", "channels per position, required"},
    {"base", "B", "frequency base, default 10000"},
    {"freqs", "CONV", CLI_FREQS_NAMES "; default vaswani"},
    {"layout", "L", CLI_LAYOUT_NAMES "; default interleaved (sin,cos pairs); half = all sin, then all cos"},
    {"start", "S", "first position, default 0 (fairseq/RoBERTa: padding_idx+1)"},
    {"positions", "P.npy", "explicit positions: 1-D int64/int32, or float64/float32 for real ones"},
    {"odd", "POLICY", "odd dim: " CLI_ODD_NAMES "; default error"},
    {"dtype", "T", CLI_DTYPE_NAMES "; default f32"},
    {"precise", NULL, "extended-precision angles, <= 1 ULP in f32 (default)"},
    {"torch-compat", NULL, "PyTorch's float32 arithmetic (matches the tutorial/fairseq bit for bit or 1 ULP)"},
    {"max-bytes", "N", "refuse outputs larger than N bytes (default 4 GiB; env POSENC_MAX_BYTES)"},
    {"o", "OUT", "output file: OUT.npy, OUT.csv, or - for CSV on stdout"},
    /* kinds learned, xl, 2d, 3d, hybrid (cli/table_kinds.c); each rejects the flags it does not use */
    {"freq-scale", "S", "sinusoidal: multiply every frequency by S > 0 (learnable scale), precise f32"},
    {"seed", "S", "learned/hybrid: RNG seed (splitmix64 + Box-Muller, see posenc.h), default 0"},
    {"sigma", "X", "learned/hybrid: init N(0, X^2), default 0.02"},
    {"padding-idx", "P", "learned (create): zero row P (RoBERTa: 1)"},
    {"table", "T.npy", "learned/hybrid: an existing [rows x dim] learned table to gather from / resize"},
    {"input-ids", "IDS.npy", "learned: token ids [seq] or [batch, seq]; positions built RoBERTa-style"},
    {"pad-id", "P", "learned --input-ids: padding token id, default 1"},
    {"attention-mask", "M.npy", "learned --input-ids: 1 = real token, 0 = pad (instead of ids == pad-id)"},
    {"past-length", "K", "learned --input-ids: tokens already in the cache (positions shift by K)"},
    {"past-end", "POLICY", "learned/hybrid: positions past the table: error (default) | clamp | resize"},
    {"keep-prefix", "K", "learned resize: leave the first K rows alone (RoBERTa: 2), default 0"},
    {"resize", "N", "learned --table: write the table resized to N rows (linear interpolation)"},
    {"learned-dim", "L", "hybrid: learned channels 0..L-1, sinusoid for the rest"},
    {"clamp", "C", "xl: clamp relative distances to <= C"},
    {"grid", "HxW", "2d: HxW, 3d: TxHxW (positive sizes)"},
    {"split", "S", "2d/3d channel split: tatp22 (default, ceil(C/2n)*2 per axis) | even (C/n, C multiple of 2n)"},
    {NULL, NULL, NULL}};

static void table_help(void) {
    printf("usage: posenc table --dim D (--len N [--start S] | --positions P.npy) [options] -o OUT.npy|OUT.csv\n"
           "       posenc table --kind learned|xl|2d|3d|hybrid ... (see the examples; docs/learned.md)\n\n"
           "Write a [positions x dim] additive positional-encoding table.\n\n");
    cli_print_options(table_options);
    printf("\nexamples:\n"
           "  posenc table --len 50 --dim 64 -o pe.npy                 # PyTorch tutorial table\n"
           "  posenc table --len 50 --dim 64 --freqs t2t --layout half --start 2 -o fs.npy  # fairseq, padding_idx=1\n"
           "  posenc table --kind index --len 8 --dim 4 -o -           # the naive baseline\n"
           "  posenc table --kind learned --len 514 --dim 768 --seed 1 --padding-idx 1 -o wpe.npy\n"
           "  posenc table --kind learned --table wpe.npy --input-ids ids.npy --pad-id 1 -o rows.npy\n"
           "  posenc table --kind learned --table wpe.npy --resize 1026 --keep-prefix 2 -o long.npy\n"
           "  posenc table --kind xl --len 16 --dim 64 --clamp 8 -o r.npy     # Transformer-XL R\n"
           "  posenc table --kind 2d --grid 6x5 --dim 12 --torch-compat -o img.npy   # tatp22 bit for bit\n"
           "  posenc table --kind 3d --grid 4x3x2 --dim 24 --split even -o vid.npy\n"
           "  posenc table --kind hybrid --len 50 --dim 64 --learned-dim 16 --seed 3 -o hy.npy\n");
}

typedef struct {
    posenc_table_kind kind;
    int32_t dim;
    int64_t len, start;
    cli_dtype_choice dtype;
    posenc_sinusoid_params params;
    int64_t *ids;
    double *values;
    size_t count;
} table_request;

static int parse_request(const cli_args *a, posenc_table_kind kind, table_request *q) {
    memset(q, 0, sizeof *q);
    q->kind = kind;
    cli_dtype_default(&q->dtype);
    if (!cli_int32(a, "dim", INT32_MIN, INT32_MAX, &q->dim) || !cli_int64(a, "len", INT64_MIN, INT64_MAX, &q->len) ||
        !cli_int64(a, "start", INT64_MIN, INT64_MAX, &q->start) || !cli_get_dtype(a, "dtype", &q->dtype))
        return EXIT_USAGE;
    if (!cli_has(a, "dim"))
        return cli_fail("table", EXIT_USAGE, "e.g. posenc table --len 50 --dim 64 -o pe.npy", "--dim is required");
    if (q->dim <= 0) return cli_fail("table", EXIT_USAGE, NULL, "--dim must be > 0, got %d", q->dim);
    if (cli_has(a, "positions") && (cli_has(a, "len") || cli_has(a, "start")))
        return cli_fail("table", EXIT_USAGE, NULL, "give --positions, or --len/--start, not both");
    if (!cli_has(a, "positions")) {
        if (!cli_has(a, "len"))
            return cli_fail("table", EXIT_USAGE, "e.g. --len 50", "--len is required (or --positions P.npy)");
        if (q->len <= 0) return cli_fail("table", EXIT_USAGE, NULL, "--len must be > 0, got %lld", (long long)q->len);
        if (q->start < 0)
            return cli_fail("table", EXIT_USAGE, NULL, "--start must be >= 0, got %lld", (long long)q->start);
    }
    posenc_sinusoid_params_default(&q->params, q->dim);
    if (!cli_double(a, "base", &q->params.base) || !cli_get_freqs(a, "freqs", &q->params.freqs) ||
        !cli_get_layout(a, "layout", &q->params.layout) || !cli_get_odd(a, "odd", &q->params.odd) ||
        !cli_get_mode(a, &q->params.mode))
        return EXIT_USAGE;
    return EXIT_OK;
}

int cmd_table(int argc, char **argv) {
    cli_args a;
    int rc = cli_parse(&a, "table", table_options, argc, argv, 0);
    if (rc != EXIT_OK) return rc;
    if (a.help) {
        table_help();
        return EXIT_OK;
    }
    const char *kind_name = cli_string(&a, "kind", "sinusoidal");
    if ((rc = cli_table_kind_check(&a, kind_name)) != EXIT_OK) return rc;
    posenc_table_kind kind = strcmp(kind_name, "sinusoidal") == 0 ? POSENC_KIND_SINUSOIDAL
                             : strcmp(kind_name, "index") == 0    ? POSENC_KIND_INDEX
                             : strcmp(kind_name, "normalized") == 0 ? POSENC_KIND_NORMALIZED
                                                                     : (posenc_table_kind)-1;
    if ((int)kind < 0) return cmd_table_kind(&a, kind_name);
    table_request q;
    if ((rc = parse_request(&a, kind, &q)) != EXIT_OK) return rc;
    double freq_scale = 1.0;
    if (cli_has(&a, "freq-scale")) {
        if (!cli_double(&a, "freq-scale", &freq_scale)) return EXIT_USAGE;
        if (freq_scale <= 0)
            return cli_fail("table", EXIT_USAGE, NULL, "--freq-scale must be > 0, got %g", freq_scale);
        if (q.params.mode != POSENC_MODE_PRECISE || q.dtype.compute != POSENC_DTYPE_F32)
            return cli_fail("table", EXIT_USAGE, NULL,
                            "--freq-scale is computed in precise float32 only (no --torch-compat, --dtype f32)");
    }
    if (cli_has(&a, "positions") &&
        (rc = cli_read_positions("table", cli_string(&a, "positions", ""), &q.ids, &q.values, &q.count)) != EXIT_OK)
        goto done;
    posenc_positions pos = q.ids      ? posenc_positions_ids(q.ids, q.count)
                           : q.values ? posenc_positions_values(q.values, q.count)
                                      : posenc_positions_range(q.start, (size_t)q.len);
    posenc_error err = {0};
    posenc_dtype dtype = q.dtype.compute;
    size_t shape[2] = {pos.count, (size_t)q.dim}, count;
    if (posenc_table_count(pos.count, q.dim, &count, &err) != POSENC_OK) {
        rc = cli_fail("table", EXIT_USAGE, "lower --len/--dim", "%s", err.message);
        goto done;
    }
    posenc_array table;
    if (posenc_array_create(&table, dtype, 2, shape, cli_max_bytes(&a), &err) != POSENC_OK) {
        rc = cli_fail_allocation("table", &err, "lower --len/--dim, or raise --max-bytes");
        goto done;
    }
    posenc_status st = cli_has(&a, "freq-scale")
                           ? posenc_freq_scale_table_f32(&q.params, freq_scale, &pos, table.data, count, &err)
                       : q.kind == POSENC_KIND_SINUSOIDAL
                           ? posenc_sinusoid_table(&q.params, &pos, dtype, table.data, count, &err)
                           : posenc_baseline_table(q.kind, q.dim, &pos, dtype, table.data, count, &err);
    if (st != POSENC_OK) {
        rc = cli_fail_status("table", &err);
    } else {
        rc = cli_widen_bf16("table", &q.dtype, &table);
        const char *out = cli_string(&a, "o", "-");
        if (rc == EXIT_OK) rc = cli_write_array("table", out, &table);
        if (rc == EXIT_OK && strcmp(out, "-") != 0)
            cli_note("table", "wrote %s [%zu x %d] %s", out, pos.count, q.dim,
                    q.dtype.name);
    }
    posenc_array_free(&table);
done:
    free(q.ids);
    free(q.values);
    return rc;
}
