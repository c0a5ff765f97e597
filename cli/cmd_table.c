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
    {"freqs", "CONV", "vaswani (base^(-2k/d), default) | t2t (base^(-k/(d/2-1)), fairseq)"},
    {"layout", "L", "interleaved (sin,cos pairs, default) | half (all sin, then all cos)"},
    {"start", "S", "first position, default 0 (fairseq/RoBERTa: padding_idx+1)"},
    {"positions", "P.npy", "explicit positions: 1-D int64/int32, or float64/float32 for real ones"},
    {"odd", "POLICY", "odd dim: error (default) | pad (zero last channel) | round_up (tatp22)"},
    {"dtype", "T", "f32 (default) | f64 | f16 | bf16 (bf16-rounded values stored as f32) | bf16-bits (<u2)"},
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
    int kind;
    int32_t dim;
    int64_t len, start;
    int dtype_choice;
    posenc_sinusoid_params params;
    int64_t *ids;
    double *values;
    size_t count;
} table_request;

static const char *const kind_names[] = {"sinusoidal", "index", "normalized", "learned", "xl", "2d", "3d",
                                         "hybrid", NULL};
/* flags of the newer kinds that the sinusoidal/index/normalized path does not read */
static const char *const extension_only[] = {"seed", "sigma", "padding-idx", "table", "input-ids", "pad-id",
                                             "attention-mask", "past-length",
                                             "past-end", "keep-prefix", "resize", "learned-dim", "clamp",
                                             "grid", "split", NULL};
static const char *const freqs_names[] = {"vaswani", "t2t", NULL};
static const char *const layout_names[] = {"interleaved", "half", "neox", "gptj", NULL};
static const char *const odd_names[] = {"error", "pad", "round_up", NULL};
static const char *const dtype_names[] = {"f32", "f64", "f16", "bf16", "bf16-bits", NULL};

static int parse_request(const cli_args *a, table_request *q) {
    memset(q, 0, sizeof *q);
    q->dim = 0;
    q->len = 0;
    int freqs = 0, layout = 0, odd = 0;
    if (!cli_choice(a, "kind", kind_names, &q->kind) || !cli_int32(a, "dim", INT32_MIN, INT32_MAX, &q->dim) ||
        !cli_int64(a, "len", INT64_MIN, INT64_MAX, &q->len) ||
        !cli_int64(a, "start", INT64_MIN, INT64_MAX, &q->start) ||
        !cli_choice(a, "freqs", freqs_names, &freqs) || !cli_choice(a, "layout", layout_names, &layout) ||
        !cli_choice(a, "odd", odd_names, &odd) || !cli_choice(a, "dtype", dtype_names, &q->dtype_choice))
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
    if (cli_has(a, "precise") && cli_has(a, "torch-compat"))
        return cli_fail("table", EXIT_USAGE, NULL, "give --precise or --torch-compat, not both");
    posenc_sinusoid_params_default(&q->params, q->dim);
    if (!cli_double(a, "base", &q->params.base)) return EXIT_USAGE;
    q->params.freqs = freqs == 1 ? POSENC_FREQS_T2T : POSENC_FREQS_VASWANI;
    /* neox = half-split, gptj = interleaved: the names RoPE users know */
    q->params.layout = (layout == 1 || layout == 2) ? POSENC_LAYOUT_HALF : POSENC_LAYOUT_INTERLEAVED;
    q->params.odd = (posenc_odd_policy)odd;
    q->params.mode = cli_has(a, "torch-compat") ? POSENC_MODE_TORCH_COMPAT : POSENC_MODE_PRECISE;
    if (!cli_has(a, "o")) return cli_fail("table", EXIT_USAGE, NULL, "-o OUT.npy|OUT.csv is required");
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
    int kind = 0;
    if (!cli_choice(&a, "kind", kind_names, &kind)) return EXIT_USAGE;
    if (kind >= 3) return cmd_table_kind(&a, kind_names[kind]);
    for (int i = 0; extension_only[i]; i++)
        if (cli_has(&a, extension_only[i]))
            return cli_fail("table", EXIT_USAGE, "see posenc table --help for which kind reads it",
                            "--%s does not apply to --kind %s", extension_only[i], kind_names[kind]);
    if (cli_has(&a, "freq-scale") && kind != 0)
        return cli_fail("table", EXIT_USAGE, NULL, "--freq-scale applies to --kind sinusoidal only, got --kind %s",
                        kind_names[kind]);
    table_request q;
    if ((rc = parse_request(&a, &q)) != EXIT_OK) return rc;
    double freq_scale = 1.0;
    if (cli_has(&a, "freq-scale")) {
        if (!cli_double(&a, "freq-scale", &freq_scale)) return EXIT_USAGE;
        if (freq_scale <= 0)
            return cli_fail("table", EXIT_USAGE, NULL, "--freq-scale must be > 0, got %g", freq_scale);
        if (q.params.mode != POSENC_MODE_PRECISE || q.dtype_choice != 0)
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
    /* compute dtype -> file dtype: bf16 is shipped as float32 holding bf16 values */
    static const posenc_dtype compute_dtype[] = {POSENC_DTYPE_F32, POSENC_DTYPE_F64, POSENC_DTYPE_F16,
                                                 POSENC_DTYPE_BF16, POSENC_DTYPE_BF16};
    posenc_dtype dtype = compute_dtype[q.dtype_choice];
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
                       : q.kind == 0 ? posenc_sinusoid_table(&q.params, &pos, dtype, table.data, count, &err)
                                   : posenc_baseline_table(q.kind == 1 ? POSENC_KIND_INDEX : POSENC_KIND_NORMALIZED,
                                                           q.dim, &pos, dtype, table.data, count, &err);
    if (st != POSENC_OK) {
        rc = cli_fail_status("table", &err);
    } else {
        if (q.dtype_choice == 3) { /* bf16 values that numpy can read: widen to f32 */
            posenc_array wide;
            if (posenc_array_create(&wide, POSENC_DTYPE_F32, 2, shape, (size_t)-1, &err) != POSENC_OK) {
                rc = cli_fail_status("table", &err);
                posenc_array_free(&table);
                goto done;
            }
            for (size_t i = 0; i < count; i++)
                ((float *)wide.data)[i] = posenc_bf16_to_f32(((uint16_t *)table.data)[i]);
            posenc_array_free(&table);
            table = wide;
        }
        const char *out = cli_string(&a, "o", "-");
        rc = cli_write_array("table", out, &table);
        if (rc == EXIT_OK && strcmp(out, "-") != 0)
            fprintf(stderr, "posenc table: wrote %s [%zu x %d] %s\n", out, pos.count, q.dim,
                    dtype_names[q.dtype_choice]);
    }
    posenc_array_free(&table);
done:
    free(q.ids);
    free(q.values);
    return rc;
}
