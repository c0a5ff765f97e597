/* cmd_compose.c: `posenc compose`: token embeddings + position encodings
 * ("add": token*scale + PE; "concat": [token*scale | PE] (@ projection)), and
 * the first source article's §5.2 check on a composed batch. */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CMD "compose"

static const cli_option compose_options[] = {
    {"tokens", "TOK.npy", "token embedding table [vocab x d] (float)"},
    {"ids", "IDS.npy", "token ids [seq] or [batch, seq] (int64/int32)"},
    {"mode", "M", "add (token*scale + PE, default) | concat ([token*scale | PE], then --projection)"},
    {"pe", "PE.npy", "position table [rows x pe_dim]; row t goes with position t (default: sinusoid)"},
    {"pe-dim", "D", "width of the default sinusoid PE (default: the token dim)"},
    {"scale", "S", "token scale; add: default sqrt(token dim) (\"Attention Is All You Need\" 3.4; 1 for BERT/GPT-2), concat: default 1"},
    {"projection", "W.npy", "concat: linear map [token_dim + pe_dim x out_dim]"},
    {"batch", "X.npy", "with --check: an already composed batch [batch, seq, d] (or [seq, d]) to inspect"},
    {"check", NULL, "print the position-signal check (first/last and same-id vectors) as JSON"},
    {"atol", "A", "--check: vectors differ when max |diff| > A, default 0"},
    {"max-bytes", "N", "refuse inputs/outputs larger than N bytes (default 4 GiB; env POSENC_MAX_BYTES)"},
    {"o", "OUT", "output file OUT.npy / OUT.csv / - ([batch, seq, out_dim] float32)"},
    {NULL, NULL, NULL}};

static void compose_help(void) {
    printf("usage: posenc compose --tokens TOK.npy --ids IDS.npy [--mode add|concat] [--pe PE.npy] [options] -o OUT.npy\n"
           "       posenc compose --check --batch X.npy [--ids IDS.npy]\n\n"
           "Combine token embeddings with position encodings, and check that a position signal is present:\n"
           "if the first and last tokens' vectors (or two equal tokens' vectors) are identical, no position\n"
           "encoding was added.\n\n");
    cli_print_options(compose_options);
    printf("\nexamples:\n"
           "  posenc compose --tokens tok.npy --ids ids.npy -o x.npy --check\n"
           "  posenc compose --tokens tok.npy --ids ids.npy --mode concat --pe-dim 32 --projection w.npy -o x.npy\n"
           "  posenc compose --check --batch layer0_input.npy --ids ids.npy\n");
}

/* Read a float array of rank in [min_rank, max_rank] as float32. */
static int read_floats(const cli_args *a, const char *flag, int min_rank, int max_rank, posenc_array *out) {
    const char *path = cli_string(a, flag, "");
    posenc_error err = {0};
    posenc_array raw, wide;
    if (posenc_npy_read(path, cli_max_bytes(a), &raw, &err) != POSENC_OK) return cli_fail_status(CMD, &err);
    int rc = EXIT_OK;
    if (raw.ndim < min_rank || raw.ndim > max_rank || raw.count == 0)
        rc = cli_fail(CMD, EXIT_USAGE, NULL, "--%s %s must be a non-empty array of rank %d..%d, got rank %d with %zu elements",
                      flag, path, min_rank, max_rank, raw.ndim, raw.count);
    else if (raw.dtype != POSENC_DTYPE_F32 && raw.dtype != POSENC_DTYPE_F64 && raw.dtype != POSENC_DTYPE_F16)
        rc = cli_fail(CMD, EXIT_USAGE, NULL, "--%s %s must hold floats, got %s", flag, path, posenc_dtype_name(raw.dtype));
    else if (raw.shape[raw.ndim - 1] > INT32_MAX)
        rc = cli_fail(CMD, EXIT_USAGE, NULL, "--%s %s has %zu columns, more than 2^31-1", flag, path,
                      raw.shape[raw.ndim - 1]);
    if (rc || raw.dtype == POSENC_DTYPE_F32) {
        if (rc) posenc_array_free(&raw);
        else *out = raw;
        return rc;
    }
    if (posenc_array_to_f64(&raw, &wide, &err) != POSENC_OK ||
        posenc_array_create(out, POSENC_DTYPE_F32, raw.ndim, raw.shape, (size_t)-1, &err) != POSENC_OK) {
        posenc_array_free(&raw);
        posenc_array_free(&wide);
        return cli_fail_status(CMD, &err);
    }
    for (size_t i = 0; i < raw.count; i++) ((float *)out->data)[i] = (float)((double *)wide.data)[i];
    posenc_array_free(&raw);
    posenc_array_free(&wide);
    return EXIT_OK;
}

/* Token ids [seq] or [batch, seq] as int64; batch/seq returned. */
static int read_ids(const cli_args *a, int64_t **ids, size_t *batch, size_t *seq) {
    const char *path = cli_string(a, "ids", "");
    posenc_error err = {0};
    posenc_array raw;
    *ids = NULL;
    if (posenc_npy_read(path, cli_max_bytes(a), &raw, &err) != POSENC_OK) return cli_fail_status(CMD, &err);
    int rc = EXIT_OK;
    if ((raw.ndim != 1 && raw.ndim != 2) || raw.count == 0)
        rc = cli_fail(CMD, EXIT_USAGE, NULL, "--ids %s must be a non-empty [seq] or [batch, seq] array, got rank %d with %zu "
                      "elements", path, raw.ndim, raw.count);
    else if (raw.dtype != POSENC_DTYPE_I64 && raw.dtype != POSENC_DTYPE_I32)
        rc = cli_fail(CMD, EXIT_USAGE, NULL, "--ids %s must be int64 or int32, got %s", path, posenc_dtype_name(raw.dtype));
    else if (!(*ids = malloc(sizeof **ids * raw.count)))
        rc = cli_fail(CMD, EXIT_RUNTIME, NULL, "out of memory");
    if (!rc) {
        for (size_t i = 0; i < raw.count; i++)
            (*ids)[i] = raw.dtype == POSENC_DTYPE_I64 ? ((int64_t *)raw.data)[i] : ((int32_t *)raw.data)[i];
        *batch = raw.ndim == 2 ? raw.shape[0] : 1;
        *seq = raw.shape[raw.ndim - 1];
    }
    posenc_array_free(&raw);
    return rc;
}

static int print_check(const float *x, size_t batch, size_t seq, int32_t dim, const int64_t *ids, double atol) {
    posenc_first_last_report r;
    posenc_error err = {0};
    if (posenc_compose_check_signal_f32(x, batch, seq, dim, ids, atol, &r, &err) != POSENC_OK)
        return cli_fail_status(CMD, &err);
    printf("{\"position_signal\": %s, \"sequences\": %zu, \"first_last_identical\": %zu, "
           "\"first_last_min_diff\": %.9g, \"same_id_pairs\": %zu, \"same_id_identical\": %zu}\n",
           r.position_signal ? "true" : "false", r.sequences, r.first_last_identical, r.first_last_min_diff,
           r.same_id_pairs, r.same_id_identical);
    if (!r.position_signal)
        fprintf(stderr, "posenc compose: no position signal: %s\n",
                r.first_last_identical ? "first and last token vectors are identical"
                                       : "two equal tokens at different positions have identical vectors");
    return EXIT_OK;
}

/* --check --batch X.npy [--ids IDS.npy] */
static int check_batch(const cli_args *a, double atol) {
    static const char *const disallowed[] = {"tokens", "mode", "pe", "pe-dim", "scale", "projection", "o", NULL};
    for (int i = 0; disallowed[i]; i++)
        if (cli_has(a, disallowed[i]))
            return cli_fail(CMD, EXIT_USAGE, NULL, "--%s does not apply to --check --batch", disallowed[i]);
    posenc_array x;
    int rc = read_floats(a, "batch", 2, 3, &x);
    if (rc) return rc;
    size_t batch = x.ndim == 3 ? x.shape[0] : 1, seq = x.shape[x.ndim - 2];
    int64_t *ids = NULL;
    size_t ib = 0, is = 0;
    if (cli_has(a, "ids") && (rc = read_ids(a, &ids, &ib, &is)) == EXIT_OK && (ib != batch || is != seq))
        rc = cli_fail(CMD, EXIT_USAGE, NULL, "--ids is [%zu x %zu] but the batch is [%zu x %zu] tokens", ib, is, batch, seq);
    if (!rc) rc = print_check(x.data, batch, seq, (int32_t)x.shape[x.ndim - 1], ids, atol);
    free(ids);
    posenc_array_free(&x);
    return rc;
}

int cmd_compose(int argc, char **argv) {
    cli_args a;
    int rc = cli_parse(&a, CMD, compose_options, argc, argv, 0);
    if (rc != EXIT_OK) return rc;
    if (a.help) {
        compose_help();
        return EXIT_OK;
    }
    double atol = 0, scale = 0;
    int mode = 0;
    int32_t pe_dim = 0;
    static const char *const mode_names[] = {"add", "concat", NULL};
    if (!cli_double(&a, "atol", &atol) || !cli_double(&a, "scale", &scale) || !cli_choice(&a, "mode", mode_names, &mode) ||
        !cli_int32(&a, "pe-dim", 1, INT32_MAX, &pe_dim))
        return EXIT_USAGE;
    if (atol < 0) return cli_fail(CMD, EXIT_USAGE, NULL, "--atol must be >= 0, got %g", atol);
    if (cli_has(&a, "batch")) {
        if (!cli_has(&a, "check")) return cli_fail(CMD, EXIT_USAGE, NULL, "--batch goes with --check");
        return check_batch(&a, atol);
    }
    if (!cli_has(&a, "tokens") || !cli_has(&a, "ids"))
        return cli_fail(CMD, EXIT_USAGE, "e.g. posenc compose --tokens tok.npy --ids ids.npy -o x.npy",
                        "--tokens and --ids are required");
    if (!cli_has(&a, "o") && !cli_has(&a, "check"))
        return cli_fail(CMD, EXIT_USAGE, NULL, "-o OUT.npy is required (or --check to only report)");
    if (cli_has(&a, "projection") && mode != 1)
        return cli_fail(CMD, EXIT_USAGE, NULL, "--projection goes with --mode concat");
    if (cli_has(&a, "pe") && cli_has(&a, "pe-dim"))
        return cli_fail(CMD, EXIT_USAGE, NULL, "give --pe PE.npy or --pe-dim D (default sinusoid), not both");

    posenc_array tokens = {0}, pe = {0}, proj = {0}, out = {0};
    int64_t *ids = NULL;
    size_t batch = 0, seq = 0;
    posenc_error err = {0};
    if ((rc = read_floats(&a, "tokens", 2, 2, &tokens)) || (rc = read_ids(&a, &ids, &batch, &seq))) goto done;
    int32_t token_dim = (int32_t)tokens.shape[1];
    /* add scales tokens by sqrt(d) ("Attention Is All You Need" 3.4); the articles' concat does not */
    if (!cli_has(&a, "scale")) scale = mode == 0 ? sqrt((double)token_dim) : 1.0;
    if (cli_has(&a, "pe")) {
        if ((rc = read_floats(&a, "pe", 2, 2, &pe))) goto done;
        if (pe.shape[0] < seq) {
            rc = cli_fail(CMD, EXIT_USAGE, NULL, "--pe has %zu rows, fewer than the %zu positions of a sequence",
                          pe.shape[0], seq);
            goto done;
        }
    } else {
        /* default: the "Attention Is All You Need" table for positions 0..seq-1 */
        size_t shape[2] = {seq, (size_t)(pe_dim ? pe_dim : token_dim)};
        posenc_sinusoid_params params;
        posenc_sinusoid_params_default(&params, (int32_t)shape[1]);
        params.odd = POSENC_ODD_PAD;
        posenc_positions pos = posenc_positions_range(0, seq);
        if (posenc_array_create(&pe, POSENC_DTYPE_F32, 2, shape, cli_max_bytes(&a), &err) != POSENC_OK ||
            posenc_sinusoid_table_f32(&params, &pos, pe.data, pe.count, &err) != POSENC_OK) {
            rc = cli_fail_status(CMD, &err);
            goto done;
        }
    }
    int32_t pd = (int32_t)pe.shape[1], out_dim = token_dim;
    if (mode == 0 && pd != token_dim) {
        rc = cli_fail(CMD, EXIT_USAGE, "add needs equal widths; use --mode concat for different ones",
                      "embedding dims do not match: tokens have %d columns, the position table %d", token_dim, pd);
        goto done;
    }
    if (mode == 1) {
        out_dim = token_dim + pd;
        if (cli_has(&a, "projection")) {
            if ((rc = read_floats(&a, "projection", 2, 2, &proj))) goto done;
            out_dim = (int32_t)proj.shape[1];
        }
    }
    if (proj.data && proj.shape[0] != (size_t)token_dim + (size_t)pd) {
        rc = cli_fail(CMD, EXIT_USAGE, NULL,
                      "embedding dims do not match: --projection has %zu rows, but token dim + PE dim = %d + %d = %lld",
                      proj.shape[0], token_dim, pd, (long long)token_dim + pd);
        goto done;
    }
    for (size_t i = 0; i < batch * seq; i++)
        if (ids[i] < 0 || (uint64_t)ids[i] >= tokens.shape[0]) {
            /* an index outside a table read from a file: exit 1, as POSENC_ERR_OUT_OF_RANGE (docs/errors.md) */
            rc = cli_fail(CMD, EXIT_RUNTIME, NULL,
                          "token id %lld at [%zu, %zu] is outside the vocabulary [0, %zu) of %s (index out of range)",
                          (long long)ids[i], i / seq, i % seq, tokens.shape[0], cli_string(&a, "tokens", ""));
            goto done;
        }
    size_t shape[3] = {batch, seq, (size_t)out_dim};
    if (posenc_array_create(&out, POSENC_DTYPE_F32, 3, shape, cli_max_bytes(&a), &err) != POSENC_OK) {
        rc = cli_fail_status(CMD, &err);
        goto done;
    }
    /* one sequence at a time: position t of every sequence reads PE row t */
    for (size_t b = 0; b < batch && !rc; b++) {
        float *dst = (float *)out.data + b * seq * (size_t)out_dim;
        posenc_status st =
            mode == 0 ? posenc_compose_add_f32(tokens.data, tokens.shape[0], token_dim, ids + b * seq, seq, scale,
                                               pe.data, dst, seq * (size_t)out_dim, &err)
                      : posenc_compose_concat_f32(tokens.data, tokens.shape[0], token_dim, ids + b * seq, seq, scale,
                                                  pe.data, pd, proj.data, proj.data ? proj.shape[0] : 0, out_dim, dst,
                                                  seq * (size_t)out_dim, &err);
        if (st != POSENC_OK) rc = cli_fail_status(CMD, &err);
    }
    if (!rc && cli_has(&a, "check")) rc = print_check(out.data, batch, seq, out_dim, ids, atol);
    if (!rc && cli_has(&a, "o")) {
        const char *path = cli_string(&a, "o", "-");
        rc = cli_write_array(CMD, path, &out);
        if (!rc && strcmp(path, "-") != 0)
            cli_note("compose", "wrote %s [%zu x %zu x %d] f32", path, batch, seq, out_dim);
    }
done:
    posenc_array_free(&tokens);
    posenc_array_free(&pe);
    posenc_array_free(&proj);
    posenc_array_free(&out);
    free(ids);
    return rc;
}
