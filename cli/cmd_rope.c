/* cmd_rope.c: `posenc rope freqs|apply|explain|identify|compare`: RoPE frequencies, in-place
 * rotation of q/k arrays stored as .npy, and a model config in plain words
 * (cmd_rope_explain.c). */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The one list of RoPE frequency flags: `rope freqs` and `rope apply` take all
 * of them (apply adds its own below). A flag overrides the --config value. */
#define ROPE_FREQUENCY_OPTIONS                                                                                   \
    {"config", "FILE", "read the model's settings from config.json or model.gguf (the flags below override)"},  \
    CLI_ASSUME_OPTION,                                                                                           \
    {"layer-type", "NAME", "with --config: the layer kind to use (e.g. sliding_attention; default: the first)"}, \
    {"dim", "D", "head_dim (channels per head); required unless --config"},                                      \
    {"base", "B", "rope_theta, default 10000"},                                                                  \
    {"max-pos", "N", "max_position_embeddings (dynamic; the yarn/longrope/llama3 defaults)"},                   \
    {"seq-len", "L", "sequence length for dynamic NTK / longrope selection (freqs: 0 = trained length; apply: "  \
                     "default max position + 1)"},                                                               \
    {"layout", "L", "half (= neox, HF rotate_half) | interleaved (= gptj, ggml NORMAL); default: the "         \
                    "config's family, else half"},                                                               \
    CLI_ROPE_SCALING_OPTIONS

static const cli_option freqs_options[] = {
    ROPE_FREQUENCY_OPTIONS,
    {"json", NULL, "print one JSON object (inv_freq, attention_factor, layout, layer types, ...)"},
    {"o", "OUT", "write inv_freq as OUT.npy / OUT.csv (float64)"},
    {NULL, NULL, NULL}};

static const cli_option apply_options[] = {
    ROPE_FREQUENCY_OPTIONS,
    {"in", "X.npy", "input [T,H,D] or [T,D]: float32 or float16 (or uint16 bf16 bits with --bf16); with --config "
                    "D is the head (DeepSeek: 192, the rotated channels last) or the rotated part"},
    {"start", "S", "position of the first token (default 0); tokens get S, S+1, ..."},
    {"positions", "P.npy", "explicit int64/int32 positions, one per token (any sign)"},
    {"inverse", NULL, "undo a rotation (rotate by -angle, divide by the attention factor)"},
    {"shift", NULL, "re-rotate cached keys by the given positions as deltas (no attention factor)"},
    {"bf16", NULL, "the input is uint16 holding bfloat16 bits (output likewise)"},
    {"mrope", "S0,S1[,S2[,S3]]", "multi-axis RoPE: pairs per position axis (Qwen2-VL: 16,24,24), summing to R/2; "
                                 "--positions then holds [axes, T] int ids (without it every axis gets the "
                                 "token's position); float32 input. A config with M-RoPE (Qwen2-VL, Qwen3-VL) "
                                 "gives its own sections and kind when --positions holds [axes, T]"},
    {"mrope-kind", "K", "with --mrope: sections (default; Qwen2-VL, ggml MROPE) | interleaved (Qwen3-VL, ggml "
                        "IMROPE)"},
    {"allow-nonfinite", NULL, "write the output even where a rotated value is inf or NaN (default: refuse, "
                              "naming the first one)"},
    {"max-bytes", "N", "refuse inputs larger than N bytes (default 4 GiB)"},
    {"o", "OUT", "output .npy (same shape and dtype as the input)"},
    {NULL, NULL, NULL}};



/* Frequency settings of a request; owns the longrope lists and the config. */
typedef struct {
    posenc_rope_params params;
    posenc_model_config config;
    bool have_config;
    int layer_type;          /* index into config.layer_types, or 0 */
    posenc_layout layout;
    int32_t attention_head_dim; /* channels of the head the config describes (>= params.head_dim) */
    int32_t rotary_offset;      /* first rotated channel in it */
    int64_t seq_len;
    bool seq_len_given;
    cli_rope_scaling flags;  /* owns the --short/long-factors lists */
} rope_request;

static void request_free(rope_request *q) {
    cli_rope_scaling_free(&q->flags);
    if (q->have_config) posenc_model_config_free(&q->config);
}

/* Parse every frequency flag into q: the config (if any) first, then the
 * flags over it, then posenc_rope_resolve: the same derivation either way. */
static int parse_frequency_flags(const cli_args *a, const char *cmd, rope_request *q) {
    memset(q, 0, sizeof *q);
    posenc_rope_params *p = &q->params;
    posenc_rope_params_default(p, 0);
    q->layout = POSENC_LAYOUT_HALF;
    unsigned given = 0;
    if (cli_has(a, "config")) {
        int rc = cli_read_rope_config(cmd, a, &q->config);
        if (rc != EXIT_OK) return rc;
        q->have_config = true;
        const posenc_model_config *c = &q->config;
        *p = c->rope;
        given = c->rope_given;
        q->layout = c->layout;
        q->attention_head_dim = c->attention_head_dim;
        q->rotary_offset = c->rotary_offset;
        if (cli_has(a, "layer-type")) {
            const char *name = cli_string(a, "layer-type", "");
            int found = -1;
            for (int i = 0; i < c->layer_type_count; i++)
                if (strcmp(c->layer_types[i].name, name) == 0) found = i;
            if (found < 0)
                return cli_fail(cmd, EXIT_USAGE, c->layer_type_count ? "see posenc rope explain" : NULL,
                                "--layer-type %s: the config has %s", name,
                                c->layer_type_count ? "other layer kinds" : "one kind of layer only");
            q->layer_type = found;
            *p = c->layer_types[found].rope;
            if (found > 0) given = POSENC_ROPE_GIVEN_FACTOR | POSENC_ROPE_GIVEN_ORIGINAL;
        }
        if (c->warnings & POSENC_CONFIG_WARN_DUPLICATE_KEY)
            cli_note(cmd, "warning: %s has '%s' more than once; the last one is used (as Python's json does)",
                     cli_string(a, "config", ""), c->duplicate_key); /* the file named, the key escaped */
    } else if (cli_has(a, "layer-type")) {
        return cli_fail(cmd, EXIT_USAGE, NULL, "--layer-type needs --config");
    }
    int64_t max_pos = p->max_position;
    int32_t dim = p->head_dim;
    if (!cli_int32(a, "dim", INT32_MIN, INT32_MAX, &dim) || !cli_double(a, "base", &p->base) ||
        !cli_int64(a, "max-pos", INT64_MIN, INT64_MAX, &max_pos) ||
        !cli_int64(a, "seq-len", INT64_MIN, INT64_MAX, &q->seq_len) ||
        !cli_get_layout(a, "layout", &q->layout))
        return EXIT_USAGE;
    if (!cli_has(a, "dim") && !q->have_config)
        return cli_fail(cmd, EXIT_USAGE, "e.g. --dim 128, or --config config.json", "--dim is required (or --config)");
    if (dim <= 0) return cli_fail(cmd, EXIT_USAGE, NULL, "--dim must be > 0, got %d", dim);
    if (cli_has(a, "seq-len") && q->seq_len < 0)
        return cli_fail(cmd, EXIT_USAGE, NULL, "--seq-len must be >= 0, got %lld", (long long)q->seq_len);
    if (cli_has(a, "max-pos") && max_pos <= 0)
        return cli_fail(cmd, EXIT_USAGE, NULL, "--max-pos must be > 0, got %lld", (long long)max_pos);
    if (cli_has(a, "dim") && q->have_config && dim != p->head_dim) { /* a different head: the config's placement is moot */
        q->attention_head_dim = dim;
        q->rotary_offset = 0;
    }
    p->head_dim = dim;
    if (!q->have_config || cli_has(a, "dim")) q->attention_head_dim = dim;
    p->max_position = max_pos;
    q->seq_len_given = cli_has(a, "seq-len");
    q->flags.params = *p;
    q->flags.given = given;
    int rc = cli_rope_scaling_parse(cmd, a, &q->flags);
    if (rc != EXIT_OK) return rc;
    *p = q->flags.params;
    given = q->flags.given;
    posenc_error err = {0};
    unsigned warnings = 0;
    if (posenc_rope_resolve(p, given, &warnings, &err) != POSENC_OK) /* a limit hit by a typed option is a usage error (2) */
        return q->have_config ? cli_fail_status(cmd, &err) : cli_fail_allocation(cmd, &err, "see --help for the accepted values");
    if ((warnings & POSENC_CONFIG_WARN_NO_ORIGINAL) && !q->have_config)
        fprintf(stderr, "posenc %s: note: no --original-max; %s uses --max-pos %lld in its place (as HF does)\n", cmd,
                posenc_rope_scaling_name(p->scaling), (long long)p->max_position);
    if (q->attention_head_dim < p->head_dim) q->attention_head_dim = p->head_dim;
    return EXIT_OK;
}

static const char *layout_name(posenc_layout layout) {
    return layout == POSENC_LAYOUT_INTERLEAVED ? "interleaved" : "half";
}

/* One JSON member "inv_freq": [...] plus the attention factor, for params p. */
static int print_frequencies_json(const char *cmd, const posenc_rope_params *p, int64_t seq_len) {
    int32_t r = 0;
    posenc_error err = {0};
    if (posenc_rope_check(p, &r, &err) != POSENC_OK) return cli_fail_status(cmd, &err);
    double *w = malloc(sizeof *w * (size_t)(r / 2 > 0 ? r / 2 : 1)), att = 1.0;
    if (!w) return cli_fail(cmd, EXIT_RUNTIME, NULL, "out of memory");
    if (posenc_rope_frequencies(p, seq_len, w, (size_t)(r / 2), &att, &err) != POSENC_OK) {
        free(w);
        return cli_fail_status(cmd, &err);
    }
    printf("\"head_dim\": %d, \"rotary_dim\": %d, \"base\": %.17g, \"scaling\": \"%s\", \"factor\": %.17g, "
           "\"original_max_position\": %lld, \"attention_factor\": %.17g, \"inv_freq\": [",
           p->head_dim, r, p->base, posenc_rope_scaling_name(p->scaling), p->factor,
           (long long)p->original_max_position, att);
    for (int32_t k = 0; k < r / 2; k++) printf("%s%.17g", k ? ", " : "", w[k]);
    printf("]");
    free(w);
    return EXIT_OK;
}

static int print_freqs_json(const rope_request *q, int32_t r, double att, const double *w, size_t pairs) {
    const posenc_model_config *c = &q->config;
    printf("{\"head_dim\": %d, \"rotary_dim\": %d, \"base\": %.17g, \"scaling\": \"%s\", \"factor\": %.17g, "
           "\"mode\": \"%s\", \"seq_len\": %lld, \"attention_factor\": %.17g, \"layout\": \"%s\", "
           "\"attention_head_dim\": %d, \"first_rotated_channel\": %d",
           q->params.head_dim, r, q->params.base, posenc_rope_scaling_name(q->params.scaling), q->params.factor,
           q->params.mode == POSENC_MODE_TORCH_COMPAT ? "torch-compat" : q->params.mode == POSENC_MODE_GGML ? "ggml" : "precise", (long long)q->seq_len, att,
           layout_name(q->layout), q->attention_head_dim, q->rotary_offset);
    if (q->have_config) {
        printf(", \"architecture\": \"%s\", \"family\": \"%s\", \"original_max_position\": %lld, "
               "\"max_position_embeddings\": %lld, \"softmax_head_dim\": %d, \"softmax_scale_factor\": %.17g",
               c->architecture, c->family, (long long)q->params.original_max_position,
               (long long)c->max_position_embeddings, c->softmax_head_dim, c->softmax_scale_factor);
        if (c->layer_type_count > 0) {
            printf(", \"layer_types\": [");
            for (int i = 0; i < c->layer_type_count; i++) {
                const posenc_config_layer_type *t = &c->layer_types[i];
                posenc_rope_params p = i == q->layer_type ? q->params : t->rope;
                p.mode = q->params.mode;
                printf("%s{\"name\": \"%s\", \"layers\": %d, \"sliding_window\": %lld, ", i ? ", " : "", t->name,
                       t->layers, (long long)t->sliding_window);
                int rc = print_frequencies_json("rope freqs", &p, q->seq_len);
                if (rc != EXIT_OK) return rc;
                printf("}");
            }
            printf("]");
        }
    }
    printf(", \"inv_freq\": [");
    for (size_t k = 0; k < pairs; k++) printf("%s%.17g", k ? ", " : "", w[k]);
    printf("]}\n");
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
        rc = print_freqs_json(&q, r, att, w, shape[0]);
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

/* --mrope S0,S1,...: the sections (1..4 axes, each >= 0) */
static int parse_mrope(const cli_args *a, posenc_mrope_sections *sec) {
    memset(sec, 0, sizeof *sec);
    const char *text = cli_string(a, "mrope", ""), *p = text;
    static const char *const kinds[] = {"sections", "interleaved", NULL};
    int kind = 0;
    if (!cli_choice(a, "mrope-kind", kinds, &kind)) return EXIT_USAGE;
    sec->kind = kind ? POSENC_MROPE_INTERLEAVED : POSENC_MROPE_SECTIONS;
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 0 || v > 65536 || sec->axes >= POSENC_MROPE_MAX_AXES || (*end && *end != ','))
            return cli_fail("rope apply", EXIT_USAGE, "e.g. --mrope 16,24,24",
                            "--mrope must list 1 to %d section sizes >= 0, got '%s'", POSENC_MROPE_MAX_AXES, text);
        sec->sizes[sec->axes++] = (int32_t)v;
        p = *end ? end + 1 : end;
    }
    if (sec->axes == 0)
        return cli_fail("rope apply", EXIT_USAGE, "e.g. --mrope 16,24,24", "--mrope needs section sizes, got '%s'",
                        text);
    return EXIT_OK;
}

/* [axes, T] positions for --mrope: the file's int ids, or every axis at the token's position */
static int mrope_positions(const cli_args *a, int axes, size_t tokens, const int64_t *one, int64_t **out) {
    int64_t *pos = malloc(sizeof *pos * (size_t)axes * (tokens ? tokens : 1));
    if (!pos) return cli_fail("rope apply", EXIT_RUNTIME, NULL, "out of memory");
    if (!cli_has(a, "positions")) {
        for (int ax = 0; ax < axes; ax++) memcpy(pos + (size_t)ax * tokens, one, sizeof *pos * tokens);
        *out = pos;
        return EXIT_OK;
    }
    const char *path = cli_string(a, "positions", "");
    posenc_array p;
    posenc_error err = {0};
    if (posenc_npy_read(path, cli_max_bytes(a), &p, &err) != POSENC_OK) {
        free(pos);
        return cli_fail_status("rope apply", &err);
    }
    int rc = EXIT_OK;
    if ((p.dtype != POSENC_DTYPE_I64 && p.dtype != POSENC_DTYPE_I32) || p.ndim != 2 || p.shape[0] != (size_t)axes ||
        p.shape[1] != tokens)
        rc = cli_fail("rope apply", EXIT_USAGE, "save them as int64 [axes, T]",
                      "with multi-axis RoPE (%d axes) the positions file %s must be int [%d, %zu] (one row of ids per axis), "
                      "got %s of rank %d [%zu%s]",
                      axes, path, axes, tokens, posenc_dtype_name(p.dtype), p.ndim, p.ndim ? p.shape[0] : 0,
                      p.ndim > 1 ? ", ..." : "");
    for (size_t i = 0; rc == EXIT_OK && i < (size_t)axes * tokens; i++)
        pos[i] = p.dtype == POSENC_DTYPE_I64 ? ((int64_t *)p.data)[i] : ((int32_t *)p.data)[i];
    posenc_array_free(&p);
    if (rc != EXIT_OK) {
        free(pos);
        return rc;
    }
    *out = pos;
    return EXIT_OK;
}

/* The config's own M-RoPE (Qwen2-VL sections, Qwen3-VL interleaved): true and
 * *out when it has one: every section up to the last nonzero one (a zero in the
 * middle gives its axis no pairs, as HF's split does). */
static bool config_mrope(const rope_request *q, posenc_mrope_sections *out) {
    memset(out, 0, sizeof *out);
    if (!q->have_config) return false;
    out->kind = q->config.mrope_interleaved ? POSENC_MROPE_INTERLEAVED : POSENC_MROPE_SECTIONS;
    for (int k = 0; k < POSENC_MROPE_MAX_AXES; k++)
        if (q->config.mrope_sections[k] > 0) out->axes = k + 1;
    for (int k = 0; k < out->axes; k++) out->sizes[k] = q->config.mrope_sections[k];
    return out->axes > 0;
}

/* The rank of the .npy at path, or -1 (the reader that follows says why). */
static int npy_rank(const cli_args *a, const char *path) {
    posenc_array p;
    posenc_error err = {0};
    if (posenc_npy_read(path, cli_max_bytes(a), &p, &err) != POSENC_OK) return -1;
    int rank = p.ndim;
    posenc_array_free(&p);
    return rank;
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
    /* head_dim comes from the input; with --config the input is the whole head (the
     * rotated channels sit at the config's offset) or just the rotated part */
    char dim_text[32];
    snprintf(dim_text, sizeof dim_text, "%zu", d);
    cli_args with_dim = a;
    for (int i = 0; with_dim.options[i].name && !cli_has(&a, "config"); i++)
        if (strcmp(with_dim.options[i].name, "dim") == 0) {
            with_dim.values[i] = dim_text;
            with_dim.seen[i] = true;
        }
    if ((rc = parse_frequency_flags(&with_dim, "rope apply", &q)) != EXIT_OK) goto done;
    size_t offset = 0;
    if (q.have_config && (size_t)q.params.head_dim != d) {
        if ((size_t)q.attention_head_dim != d) {
            rc = cli_fail("rope apply", EXIT_USAGE, "is the input [T,H,D] with D = head_dim?",
                          "the input's last axis is %zu but the config's head_dim is %d%s", d, q.attention_head_dim,
                          q.rotary_offset ? " (or the rotated part alone)" : "");
            goto done;
        }
        offset = (size_t)q.rotary_offset;
    }
    posenc_layout layout = q.layout;
    bool mrope = cli_has(&a, "mrope");
    posenc_mrope_sections sections;
    if (!mrope && cli_has(&a, "mrope-kind")) {
        rc = cli_fail("rope apply", EXIT_USAGE, NULL, "--mrope-kind goes with --mrope");
        goto done;
    }
    if (mrope && ((rc = parse_mrope(&a, &sections)) != EXIT_OK)) goto done;
    posenc_mrope_sections own;
    if (!mrope && config_mrope(&q, &own)) {
        char list[64];
        int n = 0;
        for (int k = 0; k < own.axes; k++) n += snprintf(list + n, sizeof list - (size_t)n, "%s%d", k ? "," : "", own.sizes[k]);
        const char *kind = own.kind == POSENC_MROPE_INTERLEAVED ? "interleaved" : "sections";
        if (cli_has(&a, "positions") && npy_rank(&a, cli_string(&a, "positions", "")) == 2) {
            mrope = true; /* one row of ids per axis: the config's sections and kind, as --mrope would give them */
            sections = own;
            if (!cli_has(&a, "shift") && x.dtype == POSENC_DTYPE_F32) /* else refused just below */
                fprintf(stderr, "posenc rope apply: note: %s is M-RoPE; the positions file holds one row per axis, "
                                "rotated with the config's sections %s (%s), as --mrope %s --mrope-kind %s\n",
                        q.config.family, list, kind, list, kind);
        } else {
            fprintf(stderr, "posenc rope apply: note: %s is M-RoPE (sections %s, %s); one position per token puts "
                            "every axis at it, which is plain RoPE (text tokens); for image or video tokens give "
                            "--positions as int [%d, T], one row per axis\n",
                    q.config.family, list, kind, own.axes);
        }
    }
    if (mrope && (cli_has(&a, "shift") || x.dtype != POSENC_DTYPE_F32)) {
        rc = cli_fail("rope apply", EXIT_USAGE, NULL, "multi-axis RoPE (--mrope, or a config's M-RoPE with [axes, T] "
                      "positions) rotates float32 input (no --shift, --bf16 or float16)");
        goto done;
    }
    if (cli_has(&a, "positions") && !mrope) {
        if ((rc = read_positions_exact(cli_string(&a, "positions", ""), tokens, &positions)) != EXIT_OK) goto done;
    } else {
        positions = malloc(sizeof *positions * (tokens ? tokens : 1));
        if (!positions) {
            rc = cli_fail("rope apply", EXIT_RUNTIME, NULL, "out of memory");
            goto done;
        }
        for (size_t t = 0; t < tokens; t++) positions[t] = start + (int64_t)t;
    }
    if (mrope) { /* positions become [axes, T] */
        int64_t *multi = NULL;
        if (!positions) {
            positions = malloc(sizeof *positions * (tokens ? tokens : 1));
            if (!positions) {
                rc = cli_fail("rope apply", EXIT_RUNTIME, NULL, "out of memory");
                goto done;
            }
            for (size_t t = 0; t < tokens; t++) positions[t] = start + (int64_t)t;
        }
        if ((rc = mrope_positions(&a, sections.axes, tokens, positions, &multi)) != EXIT_OK) goto done;
        free(positions);
        positions = multi;
    }
    if (!q.seq_len_given) { /* HF's dynamic/longrope rule: seq_len = max(position_ids) + 1 */
        int64_t m = 0;
        for (size_t t = 0; t < tokens; t++)
            if (positions[t] + 1 > m) m = positions[t] + 1;
        q.seq_len = m;
    }
    /* the rotated unit [offset, offset + head_dim) of every head, as a strided view */
    posenc_rope_view view = {tokens, heads, heads * d, d};
    size_t element = x.dtype == POSENC_DTYPE_F32 ? 4 : 2;
    void *base = (char *)x.data + offset * element;
    size_t available = x.count > offset ? x.count - offset : 0;
    int inverse = cli_has(&a, "inverse");
    posenc_status st;
    if (cli_has(&a, "shift")) {
        if (x.dtype != POSENC_DTYPE_F32) {
            rc = cli_fail("rope apply", EXIT_USAGE, NULL, "--shift works on float32 input, got %s", posenc_dtype_name(x.dtype));
            goto done;
        }
        st = posenc_rope_shift_f32(&q.params, q.seq_len, layout, &view, positions, base, available, &err);
    } else if (mrope) {
        st = posenc_mrope_apply_f32(&q.params, &sections, layout, &view, positions, inverse, base, available, &err);
    } else if (x.dtype == POSENC_DTYPE_F32) {
        st = posenc_rope_apply_f32(&q.params, q.seq_len, layout, &view, positions, inverse, base, available, &err);
    } else if (x.dtype == POSENC_DTYPE_F16) {
        st = posenc_rope_apply_f16(&q.params, q.seq_len, layout, &view, positions, inverse, base, available, &err);
    } else {
        st = posenc_rope_apply_bf16(&q.params, q.seq_len, layout, &view, positions, inverse, base, available, &err);
    }
    /* issue 13: the library names the first inf/NaN rotated value and why (an
     * overflowing attention factor, or an input that already held inf/NaN); the
     * rotation is complete either way, so --allow-nonfinite just writes it */
    if (st == POSENC_ERR_NONFINITE && !cli_has(&a, "allow-nonfinite")) {
        char hint[160];
        bool from_input = strstr(err.message, "the input of token") != NULL;
        snprintf(hint, sizeof hint, "%s, or pass --allow-nonfinite to write them%s",
                 from_input ? "clean the input" : "choose a smaller attention factor or a wider dtype",
                 offset ? " (channels count from the config's first rotated channel)" : "");
        rc = cli_fail("rope apply", EXIT_USAGE, hint, "%s", err.message);
        goto done;
    }
    if (st != POSENC_OK && st != POSENC_ERR_NONFINITE) {
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
    /* issue 24: which RoPE made a cos/sin cache (cmd_rope_identify.c) */
    if (argc >= 1 && strcmp(argv[0], "identify") == 0) return cmd_rope_identify(argc - 1, argv + 1);
    /* issue 39: do two model files give the same RoPE (cmd_rope_compare.c) */
    if (argc >= 1 && strcmp(argv[0], "compare") == 0) return cmd_rope_compare(argc - 1, argv + 1);
    bool help = argc >= 1 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0);
    fprintf(help ? stdout : stderr,
            "usage: posenc rope freqs|apply|explain|identify|compare [options]   (posenc rope SUBCOMMAND --help)\n\n"
            "  freqs    inverse frequencies + attention factor for every scaling scheme\n"
            "  apply    rotate q/k arrays (.npy) in either layout, partial rotary, inverse, shift\n"
            "  explain  a model config (config.json or .gguf) in plain words\n"
            "  identify which RoPE made a cos/sin cache (layout, scaling, arithmetic; --config: vs a model)\n"
            "  compare  do two model files (config.json, .gguf) give the same RoPE, layer by layer\n");
    if (help) return EXIT_OK;
    if (argc >= 1) fprintf(stderr, "posenc rope: unknown subcommand '%s'\n", argv[0]);
    return EXIT_USAGE;
}
