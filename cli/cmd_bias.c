/* cmd_bias.c: `posenc bias alibi|t5|shaw`: write an attention-bias tensor or
 * a relative-position index matrix to a file. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cli_option alibi_options[] = {
    {"heads", "H", "number of attention heads (slope schedule), required"},
    {"len", "N", "sequence length (queries = keys = 0..N-1), required"},
    {"max-bias", "B", "ALiBi bias strength, default 8 (the paper, BLOOM, MPT, ggml)"},
    {"form", "F", "causal: m*(j-i), mask j>i yourself (default) | symmetric: -m*|i-j| (ggml)"},
    {"torch-compat", NULL, "BLOOM's float32 slopes bit for bit (default: correctly rounded 2^-x)"},
    {"json", NULL, "print {\"heads\", \"max_bias\", \"slopes\"} as JSON on stdout (-o optional)"},
    {"max-bytes", "N", "refuse outputs larger than N bytes (default 4 GiB; env POSENC_MAX_BYTES)"},
    {"o", "OUT", "output file: OUT.npy (f32 [heads, N, N]), OUT.csv, or - for CSV"},
    {NULL, NULL, NULL}};

static const cli_option t5_options[] = {
    {"len", "N", "query length (query positions 0..N-1), required"},
    {"key-len", "M", "key length (key positions 0..M-1), default N"},
    {"buckets", "B", "num_buckets, default 32 (even and >= 4 unless --unidirectional)"},
    {"max-distance", "D", "max_distance, default 128 (must exceed the exact-bucket count)"},
    {"unidirectional", NULL, "decoder buckets (future keys -> 0); default bidirectional"},
    {"max-bytes", "N", "refuse outputs larger than N bytes (default 4 GiB; env POSENC_MAX_BYTES)"},
    {"o", "OUT", "output file: OUT.npy (int64 [N, M], bucket of r = key - query), OUT.csv, or -"},
    {NULL, NULL, NULL}};

static const cli_option deberta_options[] = {
    {"len", "N", "query length (query positions 0..N-1), required"},
    {"key-len", "M", "key length (key positions 0..M-1), default N"},
    {"buckets", "B", "position_buckets: 0 = none (default; DeBERTa v1), DeBERTa-v3 256"},
    {"max-relative", "R", "max_relative_positions (resolved: a config's < 1 is max_position_embeddings), default 512"},
    {"output", "W", "relative (bucket of r = query - key, default) | c2p | p2c (rows of rel_embeddings)"},
    {"max-bytes", "N", "refuse outputs larger than N bytes (default 4 GiB; env POSENC_MAX_BYTES)"},
    {"o", "OUT", "output file: OUT.npy (int64 [N, M]), OUT.csv, or -"},
    {NULL, NULL, NULL}};

static const cli_option shaw_options[] = {
    {"len", "N", "sequence length (queries = keys = 0..N-1), required"},
    {"clip", "K", "maximum relative distance k >= 0, required"},
    {"max-bytes", "N", "refuse outputs larger than N bytes (default 4 GiB; env POSENC_MAX_BYTES)"},
    {"o", "OUT", "output file: OUT.npy (int32 [N, N], clip(j-i, -k, k) + k), OUT.csv, or -"},
    {NULL, NULL, NULL}};

static void bias_usage(FILE *to) {
    fprintf(to, "usage: posenc bias alibi|t5|deberta|shaw [options] -o OUT.npy   (posenc bias KIND --help)\n\n"
                "  alibi  ALiBi bias [heads, N, N] (f32) and its slopes\n"
                "  t5     T5 relative position buckets [N, M] (int64)\n"
                "  deberta  DeBERTa relative positions / c2p / p2c rows [N, M] (int64)\n"
                "  shaw   Shaw et al. clipped relative indices [N, N] (int32)\n");
}

/* Parse the options common to the three kinds; *help set when --help. */
static int parse(cli_args *a, const char *command, const cli_option *options, int argc,
                 char **argv, bool *help) {
    int rc = cli_parse(a, command, options, argc, argv, 0);
    *help = rc == EXIT_OK && a->help;
    if (rc == EXIT_OK && !a->help && !cli_has(a, "o") && !cli_has(a, "json"))
        return cli_fail(command, EXIT_USAGE, NULL, "-o OUT.npy|OUT.csv is required");
    return rc;
}

/* Required positive integer option --name. */
static bool positive(const cli_args *a, const char *command, const char *name, const char *hint,
                     int64_t *out) {
    if (!cli_has(a, name)) {
        cli_fail(command, EXIT_USAGE, hint, "--%s is required", name);
        return false;
    }
    if (!cli_int64(a, name, INT64_MIN, INT64_MAX, out)) return false;
    if (*out <= 0) {
        cli_fail(command, EXIT_USAGE, NULL, "--%s must be > 0, got %lld", name, (long long)*out);
        return false;
    }
    return true;
}

/* Allocate the output array (limit from --max-bytes). */
static int create_output(const cli_args *a, const char *command, posenc_dtype dtype, int ndim,
                         const size_t *shape, posenc_array *out) {
    posenc_error err = {0};
    if (posenc_array_create(out, dtype, ndim, shape, cli_max_bytes(a), &err) != POSENC_OK)
        return cli_fail_allocation(command, &err, "lower the sizes, or raise --max-bytes");
    return EXIT_OK;
}

static int write_output(const cli_args *a, const char *command, const posenc_array *array) {
    const char *path = cli_string(a, "o", "-");
    int rc = cli_write_array(command, path, array);
    if (rc == EXIT_OK && strcmp(path, "-") != 0) {
        fprintf(stderr, "posenc %s: wrote ", command);
        cli_put_escaped(stderr, path);
        fputs(" [", stderr);
        for (int d = 0; d < array->ndim; d++) fprintf(stderr, "%s%zu", d ? " x " : "", array->shape[d]);
        fprintf(stderr, "] %s\n", posenc_dtype_name(array->dtype));
    }
    return rc;
}

static int run_alibi(int argc, char **argv) {
    const char *cmd = "bias alibi";
    cli_args a;
    bool help;
    int rc = parse(&a, cmd, alibi_options, argc, argv, &help);
    if (rc != EXIT_OK || help) {
        if (help) {
            printf("usage: posenc bias alibi --heads H --len N [--max-bias B] [--form causal|symmetric] [--json] -o OUT.npy\n\n"
                   "ALiBi bias out[h][i][j] for query i, key j, slope m_h = 2^(-B(h+1)/c) (c = largest\n"
                   "power of two <= H; extra heads take the odd steps of the 2c schedule).\n"
                   "causal: m(j-i), positive above the diagonal -- mask those keys; BLOOM's m*j and\n"
                   "MPT's m(j-N+1) differ from it by a per-row constant (same softmax under causal masking).\n\n");
            cli_print_options(alibi_options);
            printf("\nexample:\n  posenc bias alibi --heads 12 --len 64 --json -o alibi.npy\n");
        }
        return rc;
    }
    static const char *const forms[] = {"causal", "symmetric", NULL};
    int form = 0;
    int64_t heads = 0, len = 0;
    double max_bias = 8.0;
    if (!positive(&a, cmd, "heads", "e.g. --heads 12", &heads) ||
        !positive(&a, cmd, "len", "e.g. --len 64", &len) || !cli_double(&a, "max-bias", &max_bias) ||
        !cli_choice(&a, "form", forms, &form))
        return EXIT_USAGE;
    posenc_mode mode = POSENC_MODE_PRECISE;
    if (!cli_get_mode(&a, &mode)) return EXIT_USAGE;
    if (heads > INT32_MAX) return cli_fail(cmd, EXIT_USAGE, NULL, "--heads must be <= %d, got %lld", INT32_MAX, (long long)heads);
    posenc_error err = {0};
    float *slopes = malloc(sizeof *slopes * (size_t)heads);
    if (!slopes) return cli_fail(cmd, EXIT_RUNTIME, NULL, "out of memory for %lld slopes", (long long)heads);
    if (posenc_alibi_slopes_f32((int32_t)heads, max_bias, 0, 0, mode, slopes, (size_t)heads, &err) != POSENC_OK) {
        free(slopes);
        return cli_fail_status(cmd, &err);
    }
    posenc_array out = {0};
    if (cli_has(&a, "o")) {
        size_t shape[3] = {(size_t)heads, (size_t)len, (size_t)len};
        if ((rc = create_output(&a, cmd, POSENC_DTYPE_F32, 3, shape, &out)) != EXIT_OK) goto done;
        posenc_positions pos = posenc_positions_range(0, (size_t)len);
        if (posenc_alibi_bias_f32(slopes, (int32_t)heads, form ? POSENC_ALIBI_SYMMETRIC : POSENC_ALIBI_CAUSAL,
                                  &pos, &pos, out.data, out.count, &err) != POSENC_OK) {
            rc = cli_fail_status(cmd, &err);
            goto done;
        }
    }
    if (cli_has(&a, "o")) rc = write_output(&a, cmd, &out);
    if (rc == EXIT_OK && cli_has(&a, "json")) { /* only after a successful write; %.9g round-trips f32 */
        printf("{\"heads\": %lld, \"max_bias\": %.17g, \"slopes\": [", (long long)heads, max_bias);
        for (int64_t h = 0; h < heads; h++) printf("%s%.9g", h ? ", " : "", (double)slopes[h]);
        printf("]}\n");
        if (fflush(stdout) != 0) rc = cli_fail(cmd, EXIT_RUNTIME, NULL, "cannot write stdout");
    }
done:
    posenc_array_free(&out);
    free(slopes);
    return rc;
}

static int run_t5(int argc, char **argv) {
    const char *cmd = "bias t5";
    cli_args a;
    bool help;
    int rc = parse(&a, cmd, t5_options, argc, argv, &help);
    if (rc != EXIT_OK || help) {
        if (help) {
            printf("usage: posenc bias t5 --len N [--key-len M] [--buckets B] [--max-distance D] [--unidirectional] -o OUT.npy\n\n"
                   "T5 bucket ids out[i][j] for relative position r = j - i (key - query), exactly as\n"
                   "HF T5Attention._relative_position_bucket computes them (float32 log branch).\n"
                   "Query and key positions start at 0, as compute_bias without a cache.\n\n");
            cli_print_options(t5_options);
            printf("\nexample:\n  posenc bias t5 --len 64 -o t5.npy        # encoder, 32 buckets, max distance 128\n");
        }
        return rc;
    }
    int64_t len = 0, key_len = 0, buckets = 32, max_distance = 128;
    if (!positive(&a, cmd, "len", "e.g. --len 64", &len)) return EXIT_USAGE;
    key_len = len;
    if (cli_has(&a, "key-len") && !positive(&a, cmd, "key-len", NULL, &key_len)) return EXIT_USAGE;
    if (!cli_int64(&a, "buckets", INT32_MIN, INT32_MAX, &buckets) ||
        !cli_int64(&a, "max-distance", INT32_MIN, INT32_MAX, &max_distance))
        return EXIT_USAGE;
    posenc_t5_params p = {(int32_t)buckets, (int32_t)max_distance, cli_has(&a, "unidirectional") ? 0 : 1};
    posenc_error err = {0};
    if (posenc_t5_check(&p, &err) != POSENC_OK)
        return cli_fail(cmd, EXIT_USAGE, "--buckets sets num_buckets, --max-distance max_distance", "%s", err.message);
    size_t shape[2] = {(size_t)len, (size_t)key_len};
    posenc_array out = {0};
    if ((rc = create_output(&a, cmd, POSENC_DTYPE_I64, 2, shape, &out)) != EXIT_OK) return rc;
    posenc_positions q = posenc_positions_range(0, (size_t)len), k = posenc_positions_range(0, (size_t)key_len);
    if (posenc_t5_bucket_matrix_i64(&p, &q, &k, out.data, out.count, &err) != POSENC_OK)
        rc = cli_fail_status(cmd, &err);
    else
        rc = write_output(&a, cmd, &out);
    posenc_array_free(&out);
    return rc;
}

static int run_deberta(int argc, char **argv) {
    const char *cmd = "bias deberta";
    cli_args a;
    bool help;
    int rc = parse(&a, cmd, deberta_options, argc, argv, &help);
    if (rc != EXIT_OK || help) {
        if (help) {
            printf("usage: posenc bias deberta --len N [--key-len M] [--buckets B] [--max-relative R] "
                   "[--output relative|c2p|p2c] -o OUT.npy\n\n"
                   "DeBERTa's relative positions out[i][j] for r = i - j (query - key): the log bucket\n"
                   "(HF make_log_bucket_position, float32) or the rows of rel_embeddings the c2p / p2c terms\n"
                   "read (posenc.h 5.3b). Query and key positions start at 0, as build_relative_position.\n\n");
            cli_print_options(deberta_options);
            printf("\nexample:\n  posenc bias deberta --len 8 --buckets 256 --output c2p -o -   # DeBERTa-v3\n");
        }
        return rc;
    }
    int64_t len = 0, key_len = 0, buckets = 0, max_rel = 512;
    if (!positive(&a, cmd, "len", "e.g. --len 64", &len)) return EXIT_USAGE;
    key_len = len;
    if (cli_has(&a, "key-len") && !positive(&a, cmd, "key-len", NULL, &key_len)) return EXIT_USAGE;
    if (!cli_int64(&a, "buckets", INT32_MIN, INT32_MAX, &buckets) ||
        !cli_int64(&a, "max-relative", INT32_MIN, INT32_MAX, &max_rel))
        return EXIT_USAGE;
    static const char *const outputs[] = {"relative", "c2p", "p2c", NULL};
    int what = 0;
    if (!cli_choice(&a, "output", outputs, &what)) return EXIT_USAGE;
    posenc_deberta_params p = {(int32_t)buckets, (int32_t)max_rel};
    posenc_error err = {0};
    if (posenc_deberta_check(&p, &err) != POSENC_OK)
        return cli_fail(cmd, EXIT_USAGE, "--buckets sets position_buckets, --max-relative max_relative_positions", "%s",
                        err.message);
    size_t shape[2] = {(size_t)len, (size_t)key_len};
    posenc_array out = {0};
    if ((rc = create_output(&a, cmd, POSENC_DTYPE_I64, 2, shape, &out)) != EXIT_OK) return rc;
    if (posenc_deberta_matrix_i64(&p, (posenc_deberta_output)what, len, key_len, out.data, out.count, &err) !=
        POSENC_OK)
        rc = cli_fail_status(cmd, &err);
    else
        rc = write_output(&a, cmd, &out);
    posenc_array_free(&out);
    return rc;
}

static int run_shaw(int argc, char **argv) {
    const char *cmd = "bias shaw";
    cli_args a;
    bool help;
    int rc = parse(&a, cmd, shaw_options, argc, argv, &help);
    if (rc != EXIT_OK || help) {
        if (help) {
            printf("usage: posenc bias shaw --len N --clip K -o OUT.npy\n\n"
                   "Shaw et al. (tensor2tensor) relative indices out[i][j] = clip(j - i, -K, K) + K,\n"
                   "rows of the [2K+1, depth] key/value relative embedding tables.\n\n");
            cli_print_options(shaw_options);
            printf("\nexample:\n  posenc bias shaw --len 5 --clip 2 -o -\n");
        }
        return rc;
    }
    int64_t len = 0, clip = 0;
    if (!positive(&a, cmd, "len", "e.g. --len 64", &len)) return EXIT_USAGE;
    if (!cli_has(&a, "clip")) return cli_fail(cmd, EXIT_USAGE, "e.g. --clip 16", "--clip is required");
    if (!cli_int64(&a, "clip", INT64_MIN, INT64_MAX, &clip)) return EXIT_USAGE;
    if (clip < 0) return cli_fail(cmd, EXIT_USAGE, NULL, "--clip must be >= 0, got %lld", (long long)clip);
    if (clip > (1 << 30)) return cli_fail(cmd, EXIT_USAGE, NULL, "--clip must be <= 2^30, got %lld", (long long)clip);
    size_t shape[2] = {(size_t)len, (size_t)len};
    posenc_array out = {0};
    if ((rc = create_output(&a, cmd, POSENC_DTYPE_I32, 2, shape, &out)) != EXIT_OK) return rc;
    posenc_positions pos = posenc_positions_range(0, (size_t)len);
    posenc_error err = {0};
    if (posenc_shaw_relative_indices_i32((int32_t)clip, &pos, &pos, out.data, out.count, &err) != POSENC_OK)
        rc = cli_fail_status(cmd, &err);
    else
        rc = write_output(&a, cmd, &out);
    posenc_array_free(&out);
    return rc;
}

int cmd_bias(int argc, char **argv) {
    if (argc < 1) {
        bias_usage(stderr);
        return EXIT_USAGE;
    }
    if (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0) {
        bias_usage(stdout);
        return EXIT_OK;
    }
    if (strcmp(argv[0], "alibi") == 0) return run_alibi(argc - 1, argv + 1);
    if (strcmp(argv[0], "t5") == 0) return run_t5(argc - 1, argv + 1);
    if (strcmp(argv[0], "shaw") == 0) return run_shaw(argc - 1, argv + 1);
    if (strcmp(argv[0], "deberta") == 0) return run_deberta(argc - 1, argv + 1);
    return cli_fail("bias", EXIT_USAGE, "choose alibi, t5, deberta or shaw", "unknown bias kind '%s'", argv[0]);
}
