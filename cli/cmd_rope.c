/* cmd_rope.c: `posenc rope freqs|apply|explain`: RoPE frequencies, in-place
 * rotation of q/k arrays stored as .npy, and a model config in plain words
 * (cmd_rope_explain.c). */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cli_option freqs_options[] = {
    {"dim", "D", "head_dim (channels per head); required unless --config"},
    {"config", "FILE", "read the model's settings from config.json or model.gguf (flags below override)"},
    {"base", "B", "rope_theta, default 10000"},
    {"scaling", "S", "none | linear | ntk | dynamic | yarn | longrope | llama3 (default none)"},
    {"factor", "F", "scaling factor (context extension ratio)"},
    {"original-max", "N", "trained context L0 (yarn, longrope, llama3)"},
    {"max-pos", "N", "max_position_embeddings (dynamic; longrope/yarn defaults)"},
    {"seq-len", "L", "sequence length for dynamic NTK / longrope selection (0 = trained length)"},
    {"beta-fast", "X", "yarn: rotations of the last kept pair, default 32"},
    {"beta-slow", "X", "yarn: rotations of the first interpolated pair, default 1"},
    {"mscale", "X", "yarn (DeepSeek): mscale"},
    {"mscale-all-dim", "X", "yarn (DeepSeek): mscale_all_dim"},
    {"attention-factor", "X", "explicit cos/sin magnitude (yarn, longrope)"},
    {"no-truncate", NULL, "yarn: do not floor/ceil the correction range (HF truncate=False)"},
    {"low-freq-factor", "X", "llama3, default 1"},
    {"high-freq-factor", "X", "llama3, default 4"},
    {"short-factors", "F.npy", "longrope: short factor list (rotary_dim/2 floats)"},
    {"long-factors", "F.npy", "longrope: long factor list (rotary_dim/2 floats)"},
    {"longrope", "SEL", "longrope list: by-seq-len (default: long iff seq-len > original-max) | short | long"},
    {"rotary-dim", "R", "rotate only the first R channels (partial rotary), even, <= dim"},
    {"partial", "F", "partial_rotary_factor: rotary dim = int(dim * F)"},
    {"torch-compat", NULL, "HF's float32 arithmetic (bit-identical to transformers on CPU)"},
    {"precise", NULL, "long double formulas rounded once (default)"},
    {"json", NULL, "print one JSON object (inv_freq, attention_factor, ...)"},
    {"o", "OUT", "write inv_freq as OUT.npy / OUT.csv (float64)"},
    {NULL, NULL, NULL}};

/* apply takes every frequency flag plus its own */
static const cli_option apply_options[] = {
    {"in", "X.npy", "input [T,H,D] or [T,D]: float32 or float16 (or uint16 bf16 bits with --bf16)"},
    {"start", "S", "position of the first token (default 0); tokens get S, S+1, ..."},
    {"positions", "P.npy", "explicit int64/int32 positions, one per token (any sign)"},
    {"layout", "L", "half (= neox, HF rotate_half; default) | interleaved (= gptj, ggml NORMAL)"},
    {"inverse", NULL, "undo a rotation (rotate by -angle, divide by the attention factor)"},
    {"shift", NULL, "re-rotate cached keys by the given positions as deltas (no attention factor)"},
    {"bf16", NULL, "the input is uint16 holding bfloat16 bits (output likewise)"},
    {"dim", "D", "head_dim; must equal the input's last axis if given"},
    {"config", "FILE", "model config.json or .gguf"},
    {"base", "B", "rope_theta, default 10000"},
    {"scaling", "S", "none | linear | ntk | dynamic | yarn | longrope | llama3"},
    {"factor", "F", "scaling factor"},
    {"original-max", "N", "trained context L0"},
    {"max-pos", "N", "max_position_embeddings"},
    {"seq-len", "L", "sequence length for dynamic / longrope (default: max position + 1)"},
    {"beta-fast", "X", "yarn beta_fast"},
    {"beta-slow", "X", "yarn beta_slow"},
    {"mscale", "X", "yarn mscale"},
    {"mscale-all-dim", "X", "yarn mscale_all_dim"},
    {"attention-factor", "X", "explicit cos/sin magnitude"},
    {"no-truncate", NULL, "yarn truncate=False"},
    {"low-freq-factor", "X", "llama3 low_freq_factor"},
    {"high-freq-factor", "X", "llama3 high_freq_factor"},
    {"short-factors", "F.npy", "longrope short factors"},
    {"long-factors", "F.npy", "longrope long factors"},
    {"longrope", "SEL", "by-seq-len | short | long"},
    {"rotary-dim", "R", "partial rotary dim"},
    {"partial", "F", "partial_rotary_factor"},
    {"torch-compat", NULL, "HF's float32 arithmetic"},
    {"precise", NULL, "precise cos/sin (default)"},
    {"max-bytes", "N", "refuse inputs larger than N bytes (default 4 GiB)"},
    {"o", "OUT", "output .npy (same shape and dtype as the input)"},
    {NULL, NULL, NULL}};

static const char *const scaling_choices[] = {"none", "linear", "ntk", "dynamic", "yarn", "longrope", "llama3", "default", NULL};
static const char *const longrope_choices[] = {"by-seq-len", "short", "long", NULL};

/* Frequency settings of a request; owns the longrope lists and the config. */
typedef struct {
    posenc_rope_params params;
    posenc_model_config config;
    bool have_config;
    int64_t seq_len;
    bool seq_len_given;
    double *short_list, *long_list;
} rope_request;

static void request_free(rope_request *q) {
    free(q->short_list);
    free(q->long_list);
    if (q->have_config) posenc_config_free(&q->config);
}

static int read_factor_list(const char *cmd, const char *path, double **out, size_t *count) {
    posenc_error err = {0};
    posenc_array a, f;
    if (posenc_npy_read(path, 0, &a, &err) != POSENC_OK) return cli_fail_status(cmd, &err);
    int rc = EXIT_OK;
    if (a.ndim != 1 || (a.dtype != POSENC_DTYPE_F32 && a.dtype != POSENC_DTYPE_F64)) {
        rc = cli_fail(cmd, EXIT_USAGE, "np.save(path, np.array(factors, dtype=np.float64))",
                      "factor list %s must be a 1-D float32/float64 array, got rank %d %s", path, a.ndim,
                      posenc_dtype_name(a.dtype));
    } else if (posenc_array_to_f64(&a, &f, &err) != POSENC_OK) {
        rc = cli_fail_status(cmd, &err);
    } else {
        *out = f.data;
        *count = f.count;
    }
    posenc_array_free(&a);
    return rc;
}

/* Parse every frequency flag into q (after --config, so flags override). */
static int parse_frequency_flags(const cli_args *a, const char *cmd, rope_request *q) {
    memset(q, 0, sizeof *q);
    posenc_rope_params *p = &q->params;
    posenc_rope_params_default(p, 0);
    if (cli_has(a, "config")) {
        posenc_error err = {0};
        if (posenc_config_read(cli_string(a, "config", ""), 0, &q->config, &err) != POSENC_OK)
            return cli_fail(cmd, EXIT_RUNTIME, NULL, "%s (%s)", err.message, posenc_strerror(err.status));
        q->have_config = true;
        *p = q->config.rope;
        if (q->config.warnings & POSENC_CONFIG_WARN_FREQ_TENSOR)
            fprintf(stderr, "posenc %s: warning: the GGUF's rope_freqs tensor (per-pair divisors) is not read; "
                            "see posenc rope explain\n", cmd);
    }
    int scaling = -1, select = -1;
    int64_t orig = p->original_max_position, max_pos = p->max_position, rotary = p->rotary_dim;
    int32_t dim = p->head_dim;
    if (!cli_int32(a, "dim", INT32_MIN, INT32_MAX, &dim) || !cli_double(a, "base", &p->base) ||
        !cli_choice(a, "scaling", scaling_choices, &scaling) || !cli_double(a, "factor", &p->factor) ||
        !cli_int64(a, "original-max", INT64_MIN, INT64_MAX, &orig) || !cli_int64(a, "max-pos", INT64_MIN, INT64_MAX, &max_pos) ||
        !cli_int64(a, "seq-len", INT64_MIN, INT64_MAX, &q->seq_len) || !cli_double(a, "beta-fast", &p->beta_fast) ||
        !cli_double(a, "beta-slow", &p->beta_slow) || !cli_double(a, "mscale", &p->mscale) ||
        !cli_double(a, "mscale-all-dim", &p->mscale_all_dim) || !cli_double(a, "attention-factor", &p->attention_factor) ||
        !cli_double(a, "low-freq-factor", &p->low_freq_factor) || !cli_double(a, "high-freq-factor", &p->high_freq_factor) ||
        !cli_choice(a, "longrope", longrope_choices, &select) || !cli_int64(a, "rotary-dim", INT32_MIN, INT32_MAX, &rotary) ||
        !cli_double(a, "partial", &p->partial_rotary_factor))
        return EXIT_USAGE;
    if (!cli_has(a, "dim") && !q->have_config)
        return cli_fail(cmd, EXIT_USAGE, "e.g. --dim 128, or --config config.json", "--dim is required (or --config)");
    if (dim <= 0) return cli_fail(cmd, EXIT_USAGE, NULL, "--dim must be > 0, got %d", dim);
    if (cli_has(a, "seq-len") && q->seq_len < 0)
        return cli_fail(cmd, EXIT_USAGE, NULL, "--seq-len must be >= 0, got %lld", (long long)q->seq_len);
    if (cli_has(a, "original-max") && orig <= 0)
        return cli_fail(cmd, EXIT_USAGE, NULL, "--original-max must be > 0, got %lld", (long long)orig);
    if (cli_has(a, "max-pos") && max_pos <= 0)
        return cli_fail(cmd, EXIT_USAGE, NULL, "--max-pos must be > 0, got %lld", (long long)max_pos);
    if (cli_has(a, "rotary-dim") && rotary <= 0)
        return cli_fail(cmd, EXIT_USAGE, NULL, "--rotary-dim must be > 0, got %lld", (long long)rotary);
    if (cli_has(a, "rotary-dim") && cli_has(a, "partial"))
        return cli_fail(cmd, EXIT_USAGE, NULL, "give --rotary-dim or --partial, not both");
    if (cli_has(a, "partial")) p->rotary_dim = 0;
    if (cli_has(a, "precise") && cli_has(a, "torch-compat"))
        return cli_fail(cmd, EXIT_USAGE, NULL, "give --precise or --torch-compat, not both");
    p->head_dim = dim;
    p->original_max_position = orig;
    p->max_position = max_pos;
    p->rotary_dim = (int32_t)rotary;
    q->seq_len_given = cli_has(a, "seq-len");
    if (scaling >= 0) p->scaling = scaling == 7 ? POSENC_ROPE_NONE : (posenc_rope_scaling)scaling;
    if (select >= 0) p->longrope_select = (posenc_rope_longrope_select)select;
    if (cli_has(a, "no-truncate")) p->truncate = 0;
    if (cli_has(a, "torch-compat")) p->mode = POSENC_MODE_TORCH_COMPAT;
    if (cli_has(a, "precise")) p->mode = POSENC_MODE_PRECISE;
    if (p->scaling == POSENC_ROPE_NONE && cli_has(a, "factor"))
        return cli_fail(cmd, EXIT_USAGE, "add --scaling linear|ntk|dynamic|yarn|longrope|llama3",
                        "--factor %g has no effect with --scaling none", p->factor);
    if (cli_has(a, "short-factors") != cli_has(a, "long-factors"))
        return cli_fail(cmd, EXIT_USAGE, NULL, "give both --short-factors and --long-factors");
    if (cli_has(a, "short-factors")) {
        size_t ns = 0, nl = 0;
        int rc = read_factor_list(cmd, cli_string(a, "short-factors", ""), &q->short_list, &ns);
        if (rc == EXIT_OK) rc = read_factor_list(cmd, cli_string(a, "long-factors", ""), &q->long_list, &nl);
        if (rc != EXIT_OK) return rc;
        if (ns != nl)
            return cli_fail(cmd, EXIT_USAGE, NULL, "--short-factors has %zu entries but --long-factors has %zu", ns, nl);
        p->short_factors = q->short_list;
        p->long_factors = q->long_list;
        p->factors_count = ns;
    }
    posenc_error err = {0};
    if (posenc_rope_check(p, NULL, &err) != POSENC_OK) return cli_fail_status(cmd, &err);
    return EXIT_OK;
}

static int rope_freqs(int argc, char **argv) {
    cli_args a;
    int rc = cli_parse(&a, "rope freqs", freqs_options, argc, argv, 0);
    if (rc != EXIT_OK) return rc;
    if (a.help) {
        printf("usage: posenc rope freqs (--dim D | --config FILE) [options] [--json] [-o inv_freq.npy]\n\n"
               "Inverse frequencies (radians per position) and the cos/sin attention factor.\n\n");
        cli_print_options(freqs_options);
        printf("\nexamples:\n  posenc rope freqs --dim 128 --base 500000 --scaling llama3 --factor 8 --original-max 8192 --json\n"
               "  posenc rope freqs --config config.json -o inv_freq.npy\n");
        return EXIT_OK;
    }
    rope_request q;
    if ((rc = parse_frequency_flags(&a, "rope freqs", &q)) != EXIT_OK) {
        request_free(&q);
        return rc;
    }
    int32_t r = 0;
    posenc_rope_check(&q.params, &r, NULL);
    size_t shape[1] = {(size_t)(r / 2)};
    posenc_array inv;
    posenc_error err = {0};
    double att = 1.0;
    if (posenc_array_create(&inv, POSENC_DTYPE_F64, 1, shape, 0, &err) != POSENC_OK ||
        posenc_rope_frequencies(&q.params, q.seq_len, inv.data, shape[0], &att, &err) != POSENC_OK) {
        rc = cli_fail_status("rope freqs", &err);
        request_free(&q);
        return rc;
    }
    const double *w = inv.data;
    if (cli_has(&a, "o")) rc = cli_write_array("rope freqs", cli_string(&a, "o", "-"), &inv);
    if (rc == EXIT_OK && cli_has(&a, "json")) {
        printf("{\"head_dim\": %d, \"rotary_dim\": %d, \"base\": %.17g, \"scaling\": \"%s\", \"factor\": %.17g, "
               "\"mode\": \"%s\", \"seq_len\": %lld, \"attention_factor\": %.17g, \"inv_freq\": [",
               q.params.head_dim, r, q.params.base, posenc_rope_scaling_name(q.params.scaling), q.params.factor,
               q.params.mode == POSENC_MODE_TORCH_COMPAT ? "torch-compat" : "precise", (long long)q.seq_len, att);
        for (size_t k = 0; k < shape[0]; k++) printf("%s%.17g", k ? ", " : "", w[k]);
        printf("]}\n");
    } else if (rc == EXIT_OK && !cli_has(&a, "o")) {
        printf("# %s, head_dim %d, rotary_dim %d, base %g, attention factor %.9g\n# pair  inv_freq  wavelength\n",
               posenc_rope_scaling_name(q.params.scaling), q.params.head_dim, r, q.params.base, att);
        for (size_t k = 0; k < shape[0]; k++) printf("%zu %.17g %.9g\n", k, w[k], 6.283185307179586 / w[k]);
    }
    posenc_array_free(&inv);
    request_free(&q);
    return rc;
}

/* ---- apply ---- */

static int read_positions_exact(const char *path, size_t tokens, int64_t **out) {
    int64_t *ids = NULL;
    double *values = NULL;
    size_t count = 0;
    int rc = cli_read_positions("rope apply", path, &ids, &values, &count);
    if (rc == EXIT_OK && values)
        rc = cli_fail("rope apply", EXIT_USAGE, "save them as int64", "positions in %s must be integers, got floats", path);
    else if (rc == EXIT_OK && count != tokens)
        rc = cli_fail("rope apply", EXIT_USAGE, NULL, "positions file %s has %zu entries but the input has %zu tokens",
                      path, count, tokens);
    free(values);
    if (rc != EXIT_OK) {
        free(ids);
        return rc;
    }
    *out = ids;
    return EXIT_OK;
}

static int rope_apply(int argc, char **argv) {
    cli_args a;
    int rc = cli_parse(&a, "rope apply", apply_options, argc, argv, 0);
    if (rc != EXIT_OK) return rc;
    if (a.help) {
        printf("usage: posenc rope apply --in X.npy [--start S | --positions P.npy] [--layout half|interleaved] "
               "[frequency flags] [--inverse | --shift] -o Y.npy\n\n"
               "Rotate q or k vectors in place (computed in float32; pass-through channels keep their bits).\n\n");
        cli_print_options(apply_options);
        printf("\nexample:\n  posenc rope apply --in q.npy --start 1000 --layout neox --base 500000 -o q_rot.npy\n");
        return EXIT_OK;
    }
    posenc_layout layout = POSENC_LAYOUT_HALF; /* HF rotate_half is the common case */
    if (!cli_get_layout(&a, "layout", &layout)) return EXIT_USAGE;
    if (!cli_has(&a, "in")) return cli_fail("rope apply", EXIT_USAGE, "e.g. --in q.npy", "--in X.npy is required");
    if (!cli_has(&a, "o")) return cli_fail("rope apply", EXIT_USAGE, NULL, "-o Y.npy is required");
    if (cli_has(&a, "start") && cli_has(&a, "positions"))
        return cli_fail("rope apply", EXIT_USAGE, NULL, "give --start or --positions, not both");
    if (cli_has(&a, "inverse") && cli_has(&a, "shift"))
        return cli_fail("rope apply", EXIT_USAGE, NULL, "give --inverse or --shift, not both");
    int64_t start = 0;
    if (!cli_int64(&a, "start", INT64_MIN / 2, INT64_MAX / 2, &start)) return EXIT_USAGE;
    posenc_array x;
    posenc_error err = {0};
    const char *in = cli_string(&a, "in", "");
    if (posenc_npy_read(in, cli_max_bytes(&a), &x, &err) != POSENC_OK) return cli_fail_status("rope apply", &err);
    bool bf16 = cli_has(&a, "bf16");
    posenc_dtype want = bf16 ? POSENC_DTYPE_U16 : x.dtype == POSENC_DTYPE_F16 ? POSENC_DTYPE_F16 : POSENC_DTYPE_F32;
    int64_t *positions = NULL;
    rope_request q;
    memset(&q, 0, sizeof q);
    if (x.dtype != want) {
        rc = cli_fail("rope apply", EXIT_USAGE, bf16 ? "--bf16 expects uint16 bits" : "use float32 or float16 (uint16 bf16 bits with --bf16)",
                      "input %s has dtype %s", in, posenc_dtype_name(x.dtype));
        goto done;
    }
    if (x.ndim != 2 && x.ndim != 3) {
        rc = cli_fail("rope apply", EXIT_USAGE, NULL, "input %s must have shape [T,H,D] or [T,D], got rank %d", in, x.ndim);
        goto done;
    }
    size_t tokens = x.shape[0], heads = x.ndim == 3 ? x.shape[1] : 1, d = x.shape[x.ndim - 1];
    if (d > (size_t)INT32_MAX) {
        rc = cli_fail("rope apply", EXIT_USAGE, NULL, "head dim %zu is too large", d);
        goto done;
    }
    if (cli_has(&a, "dim")) {
        int32_t dim = 0;
        if (!cli_int32(&a, "dim", INT32_MIN, INT32_MAX, &dim)) {
            rc = EXIT_USAGE;
            goto done;
        }
        if ((size_t)dim != d) {
            rc = cli_fail("rope apply", EXIT_USAGE, NULL, "--dim %d does not match the input's last axis (%zu)", dim, d);
            goto done;
        }
    }
    /* head_dim comes from the input */
    char dim_text[32];
    snprintf(dim_text, sizeof dim_text, "%zu", d);
    cli_args with_dim = a;
    for (int i = 0; with_dim.options[i].name; i++)
        if (strcmp(with_dim.options[i].name, "dim") == 0) {
            with_dim.values[i] = dim_text;
            with_dim.seen[i] = true;
        }
    if ((rc = parse_frequency_flags(&with_dim, "rope apply", &q)) != EXIT_OK) goto done;
    if (q.have_config && (size_t)q.config.rope.head_dim != d) {
        rc = cli_fail("rope apply", EXIT_USAGE, "is the input [T,H,D] with D = head_dim?",
                      "the input's last axis is %zu but the config's head_dim is %d", d, q.config.rope.head_dim);
        goto done;
    }
    if (cli_has(&a, "positions")) {
        if ((rc = read_positions_exact(cli_string(&a, "positions", ""), tokens, &positions)) != EXIT_OK) goto done;
    } else {
        positions = malloc(sizeof *positions * (tokens ? tokens : 1));
        if (!positions) {
            rc = cli_fail("rope apply", EXIT_RUNTIME, NULL, "out of memory");
            goto done;
        }
        for (size_t t = 0; t < tokens; t++) positions[t] = start + (int64_t)t;
    }
    if (!q.seq_len_given) { /* HF's dynamic/longrope rule: seq_len = max(position_ids) + 1 */
        int64_t m = 0;
        for (size_t t = 0; t < tokens; t++)
            if (positions[t] + 1 > m) m = positions[t] + 1;
        q.seq_len = m;
    }
    posenc_rope_view view = {tokens, heads, heads * d, d};
    int inverse = cli_has(&a, "inverse");
    posenc_status st;
    if (cli_has(&a, "shift")) {
        if (x.dtype != POSENC_DTYPE_F32) {
            rc = cli_fail("rope apply", EXIT_USAGE, NULL, "--shift works on float32 input, got %s", posenc_dtype_name(x.dtype));
            goto done;
        }
        st = posenc_rope_shift_f32(&q.params, q.seq_len, layout, &view, positions, x.data, x.count, &err);
    } else if (x.dtype == POSENC_DTYPE_F32) {
        st = posenc_rope_apply_f32(&q.params, q.seq_len, layout, &view, positions, inverse, x.data, x.count, &err);
    } else if (x.dtype == POSENC_DTYPE_F16) {
        st = posenc_rope_apply_f16(&q.params, q.seq_len, layout, &view, positions, inverse, x.data, x.count, &err);
    } else {
        st = posenc_rope_apply_bf16(&q.params, q.seq_len, layout, &view, positions, inverse, x.data, x.count, &err);
    }
    if (st != POSENC_OK) {
        rc = cli_fail_status("rope apply", &err);
        goto done;
    }
    rc = cli_write_array("rope apply", cli_string(&a, "o", "-"), &x);
done:
    free(positions);
    request_free(&q);
    posenc_array_free(&x);
    return rc;
}

int cmd_rope(int argc, char **argv) {
    if (argc >= 1 && strcmp(argv[0], "freqs") == 0) return rope_freqs(argc - 1, argv + 1);
    if (argc >= 1 && strcmp(argv[0], "apply") == 0) return rope_apply(argc - 1, argv + 1);
    if (argc >= 1 && strcmp(argv[0], "explain") == 0) return cmd_rope_explain(argc - 1, argv + 1);
    bool help = argc >= 1 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0);
    fprintf(help ? stdout : stderr,
            "usage: posenc rope freqs|apply|explain [options]   (posenc rope SUBCOMMAND --help)\n\n"
            "  freqs    inverse frequencies + attention factor for every scaling scheme\n"
            "  apply    rotate q/k arrays (.npy) in either layout, partial rotary, inverse, shift\n"
            "  explain  a model config (config.json or .gguf) in plain words\n");
    if (help) return EXIT_OK;
    if (argc >= 1) fprintf(stderr, "posenc rope: unknown subcommand '%s'\n", argv[0]);
    return EXIT_USAGE;
}
