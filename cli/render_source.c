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
    free(t->rope_long_frequencies);
    memset(t, 0, sizeof *t);
}

static const char *const kind_names[] = {"sinusoidal", "index", "normalized", "rope", "learned", NULL};
enum { KIND_SINUSOIDAL, KIND_INDEX, KIND_NORMALIZED, KIND_ROPE, KIND_LEARNED };

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
        t->has_sinusoid = true;
        t->sinusoid = *p;
        snprintf(t->about, sizeof t->about, "sinusoidal, %lld positions from %lld, dim %d, base %g, %s frequencies, %s layout",
                 (long long)len, (long long)start, p->dim, p->base, cli_freqs_name(p->freqs), cli_layout_name(p->layout));
    } else {
        snprintf(t->about, sizeof t->about, "%s baseline: every channel holds %s, %lld positions, dim %d",
                 kind_names[kind], kind == 1 ? "the position p" : "p/(len-1)", (long long)len, p->dim);
    }
    return EXIT_OK;
}

static int allocate(const char *command, int64_t len, int32_t dim, cli_table *t) {
    memset(t, 0, sizeof *t);
    posenc_error err = {0};
    size_t count;
    if (posenc_table_count((size_t)len, dim, &count, &err) != POSENC_OK) return cli_fail_status(command, &err);
    if (count > MAX_CELLS)
        return cli_fail(command, EXIT_USAGE, "draw a smaller table (pictures average it down anyway)",
                        "%lld x %d = %zu cells is more than the %zu this command computes", (long long)len, dim, count,
                        MAX_CELLS);
    t->values = malloc(sizeof(double) * count);
    if (!t->values) return cli_fail(command, EXIT_RUNTIME, NULL, "out of memory");
    t->rows = (size_t)len;
    t->cols = (size_t)dim;
    return EXIT_OK;
}

/* RoPE drawn as its [positions][R] table: the R/2 cosines, then the R/2 sines
 * (HF's cos|sin halves), attention factor folded in as HF's tables do. */
static int compute_rope(const char *command, int64_t len, int64_t start, const posenc_rope_params *p, cli_table *t) {
    posenc_error err = {0};
    int32_t rotary = 0;
    if (posenc_rope_check(p, &rotary, &err) != POSENC_OK) return cli_fail_status(command, &err);
    int rc = allocate(command, len, rotary, t);
    if (rc != EXIT_OK) return rc;
    size_t pairs = (size_t)rotary / 2, count = (size_t)len * pairs;
    double *cs = malloc(sizeof(double) * count * 2);
    t->frequencies = malloc(sizeof(double) * pairs);
    posenc_positions pos = posenc_positions_range(start, (size_t)len);
    if (!cs || !t->frequencies) {
        free(cs);
        cli_table_free(t);
        return cli_fail(command, EXIT_RUNTIME, NULL, "out of memory");
    }
    /* seq_len = the drawn length: what DYNAMIC scaling sees */
    if (posenc_rope_frequencies(p, start + len, t->frequencies, pairs, NULL, &err) != POSENC_OK ||
        posenc_rope_table_f64(p, start + len, &pos, 1, cs, cs + count, count, &err) != POSENC_OK) {
        free(cs);
        cli_table_free(t);
        return cli_fail_status(command, &err);
    }
    for (size_t r = 0; r < (size_t)len; r++)
        for (size_t k = 0; k < pairs; k++) {
            t->values[r * (size_t)rotary + k] = cs[r * pairs + k];
            t->values[r * (size_t)rotary + pairs + k] = cs[count + r * pairs + k];
        }
    free(cs);
    t->pairs = pairs;
    t->first_position = start;
    t->layout = POSENC_LAYOUT_HALF;
    t->is_rope = true;
    t->rope_head_dim = p->head_dim;
    t->rope_base = p->base;
    t->rope_factor = p->factor;
    t->rope_scaling = p->scaling;
    t->rope_original_max = p->original_max_position;
    snprintf(t->name, sizeof t->name, "rope");
    snprintf(t->about, sizeof t->about,
             "RoPE cos|sin of each pair's angle, %lld positions, head_dim %d, base %g, scaling %s%s", (long long)len,
             p->head_dim, p->base, posenc_rope_scaling_name(p->scaling), p->scaling ? " (factor in the flags)" : "");
    return EXIT_OK;
}

/* A learned table as it starts training: N(0, sigma^2), the project's seeded recipe. */
static int compute_learned(const char *command, int64_t len, int32_t dim, uint64_t seed, double sigma, cli_table *t) {
    int rc = allocate(command, len, dim, t);
    if (rc != EXIT_OK) return rc;
    size_t count = t->rows * t->cols;
    float *f = malloc(sizeof(float) * count);
    posenc_error err = {0};
    if (!f) {
        cli_table_free(t);
        return cli_fail(command, EXIT_RUNTIME, NULL, "out of memory");
    }
    if (posenc_learned_init_f32(seed, sigma, POSENC_NO_PADDING, t->rows, dim, f, count, &err) != POSENC_OK) {
        free(f);
        cli_table_free(t);
        return cli_fail_status(command, &err);
    }
    for (size_t i = 0; i < count; i++) t->values[i] = f[i];
    free(f);
    snprintf(t->name, sizeof t->name, "learned");
    snprintf(t->about, sizeof t->about,
             "learned-style table at initialization: N(0, %g^2), seed %llu, %lld positions, dim %d (training shapes it; "
             "pass a trained table as TABLE.npy)", sigma, (unsigned long long)seed, (long long)len, dim);
    return EXIT_OK;
}

int cli_table_make(const char *command, const char *kind, int64_t len, int32_t dim, cli_table *t) {
    for (int k = 0; kind_names[k]; k++)
        if (strcmp(kind, kind_names[k]) == 0) {
            if (k == KIND_ROPE) {
                posenc_rope_params rp;
                posenc_rope_params_default(&rp, dim);
                return compute_rope(command, len, 0, &rp, t);
            }
            if (k == KIND_LEARNED) return compute_learned(command, len, dim, 0, POSENC_LEARNED_SIGMA_DEFAULT, t);
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

/* A model without RoPE: its first layer's bias as a [query x key] table (ALiBi head 0, the
 * steepest; T5 bucket numbers), its learned table's untrained initialisation (a config
 * holds no weights), or a constant (no position encoding at all: positions look alike). */
static int table_from_model(const char *command, const posenc_model *m, int64_t len, int64_t start, const char *path,
                            cli_table *t) {
    posenc_layer_scheme s = m->layer_count > 0 ? m->layers[0].scheme : POSENC_LAYER_NOPE;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (s == POSENC_LAYER_LEARNED) {
        int rc = compute_learned(command, len, m->config.hidden_size > 0 ? m->config.hidden_size : 64, 0,
                                 POSENC_LEARNED_SIGMA_DEFAULT, t);
        if (rc == EXIT_OK)
            snprintf(t->about, sizeof t->about, "%s: learned table %.60s (%lld rows): its untrained init, the config "
                     "holds no weights", base, m->learned_tensor, (long long)m->learned_size);
        return rc;
    }
    if (len > 4096) len = 4096; /* a [len x len] bias */
    memset(t, 0, sizeof *t);
    t->rows = (size_t)len;
    t->cols = s == POSENC_LAYER_NOPE ? 2 : (size_t)len; /* the surface needs 2 x 2 cells */
    t->values = calloc(t->rows * t->cols, sizeof *t->values);
    if (!t->values) return cli_fail(command, EXIT_RUNTIME, NULL, "out of memory for a %lld-row table", (long long)len);
    t->first_position = start;
    posenc_error err = {0};
    if (s == POSENC_LAYER_NOPE) /* every position the same: cosine 1 at every distance, which is the point */
        for (size_t k = 0; k < t->rows * t->cols; k++) t->values[k] = 1.0;
    for (int64_t i = 0; i < len && s != POSENC_LAYER_NOPE; i++)
        for (int64_t j = 0; j < len; j++) {
            double v = 0;
            if (s == POSENC_LAYER_ALIBI) {
                v = j <= i ? m->alibi_slopes[0] * (double)(j - i) : 0.0; /* causal: m (j - i), future masked */
            } else {
                int32_t bucket = 0;
                posenc_t5_params p = m->t5;
                if (posenc_t5_bucket(&p, j - i, &bucket, &err) != POSENC_OK) {
                    cli_table_free(t);
                    return cli_fail_status(command, &err);
                }
                v = bucket;
            }
            t->values[(size_t)i * t->cols + (size_t)j] = v;
        }
    snprintf(t->name, sizeof t->name, "%.24s (%s)", m->config.architecture, posenc_layer_scheme_name(s));
    if (s == POSENC_LAYER_ALIBI)
        snprintf(t->about, sizeof t->about, "%s: ALiBi bias of head 0 (slope %.6g), query x key, future keys 0 "
                 "(masked)", base, m->alibi_slopes[0]);
    else if (s == POSENC_LAYER_T5)
        snprintf(t->about, sizeof t->about, "%s: T5 bucket of each (query, key), %d buckets, max distance %d", base,
                 m->t5.num_buckets, m->t5.max_distance);
    else
        snprintf(t->about, sizeof t->about, "%s: no position encoding in any layer: every position looks the same (a constant table)", base);
    return EXIT_OK;
}

/* A model's RoPE, as its config.json or GGUF header describes it. */
static int table_from_config(const char *command, const cli_args *a, cli_table *t) {
    const char *model_flags[] = {"kind", "dim", "base", "freqs", "layout", "scaling", "factor", "original-max", "seed",
                                 "sigma"};
    const char *rope_flag = cli_rope_scaling_flag_given(a, NULL);
    for (size_t i = 0; i < sizeof model_flags / sizeof *model_flags + 1; i++) {
        const char *flag = i < sizeof model_flags / sizeof *model_flags ? model_flags[i] : rope_flag;
        if (flag && cli_has(a, flag))
            return cli_fail(command, EXIT_USAGE, "--config sets the RoPE; --len and --start choose the positions",
                            "--%s cannot be combined with --config", flag);
    }
    int64_t len = 128, start = 0;
    if (!cli_int64(a, "len", 1, INT64_MAX, &len) || !cli_int64(a, "start", 0, INT64_MAX, &start)) return EXIT_USAGE;
    const char *path = cli_string(a, "config", "");
    posenc_model model;
    int read = cli_read_model(command, a, &model);
    if (read != EXIT_OK) return read;
    if (model.rope_count == 0) { /* ALiBi, learned, T5, NoPE: draw what the model has */
        int rc = table_from_model(command, &model, len, start, path, t);
        if (rc == EXIT_OK) cli_model_layers_text(&model, t->layers, sizeof t->layers);
        posenc_model_free(&model);
        return rc;
    }
    posenc_model_config cfg = model.config;
    model.config.factor_storage = NULL; /* moved into cfg */
    char layers[sizeof t->layers];
    cli_model_layers_text(&model, layers, sizeof layers);
    posenc_model_free(&model);
    int rc = compute_rope(command, len, start, &cfg.rope, t);
    if (rc == EXIT_OK) memcpy(t->layers, layers, sizeof layers);
    if (rc == EXIT_OK) {
        const char *base = strrchr(path, '/');
        snprintf(t->name, sizeof t->name, "rope (%.48s)", cfg.architecture[0] ? cfg.architecture : "model");
        snprintf(t->about, sizeof t->about,
                 "RoPE of %s: head_dim %d, theta %g, scaling %s factor %g (L0 %lld), %lld positions from %lld, cos|sin",
                 base ? base + 1 : path, cfg.rope.head_dim, cfg.rope.base, posenc_rope_scaling_name(cfg.rope.scaling),
                 cfg.rope.factor, (long long)cfg.rope.original_max_position, (long long)len, (long long)start);
        /* the frequencies at the longest context the model claims (dynamic schemes
         * depend on it), so the report can show where the scaling acts */
        int64_t longest = cfg.rope.max_position;
        if (longest <= 0 && cfg.rope.original_max_position > 0 && cfg.rope.factor >= 1 &&
            cfg.rope.factor * (double)cfg.rope.original_max_position < 9e15)
            longest = (int64_t)(cfg.rope.factor * (double)cfg.rope.original_max_position);
        if (longest > 1 && t->pairs > 0) {
            t->rope_long_frequencies = malloc(sizeof(double) * t->pairs);
            posenc_error ferr = {0};
            if (t->rope_long_frequencies &&
                posenc_rope_frequencies(&cfg.rope, longest, t->rope_long_frequencies, t->pairs, NULL, &ferr) == POSENC_OK)
                t->rope_long_context = longest;
            else
                free(t->rope_long_frequencies), t->rope_long_frequencies = NULL;
        }
        if (cfg.warnings)
            cli_note(command, "%s: the config has warnings (see posenc rope explain --config %s)", path, path);
    }
    posenc_model_config_free(&cfg);
    return rc;
}

int cli_table_from_args(const char *command, const cli_args *a, cli_table *t) {
    memset(t, 0, sizeof *t);
    if (a->positional_count > 0) {
        const char *flags[] = {"kind", "len", "dim", "base", "freqs", "layout", "start",
                               "scaling", "factor", "original-max", "seed", "sigma", "config"};
        const char *rope_flag = cli_rope_scaling_flag_given(a, NULL);
        for (size_t i = 0; i < sizeof flags / sizeof *flags + 1; i++) {
            const char *flag = i < sizeof flags / sizeof *flags ? flags[i] : rope_flag;
            if (flag && cli_has(a, flag))
                return cli_fail(command, EXIT_USAGE, NULL, "give a table file or --%s and the other encoding flags, not both",
                                flag);
        }
        return read_table(command, a->positional[0], cli_max_bytes(a), t);
    }
    if (cli_has(a, "config")) return table_from_config(command, a, t);
    int kind = 0;
    int64_t len = 128, start = 0;
    int32_t dim = 64;
    posenc_sinusoid_params p;
    posenc_sinusoid_params_default(&p, 1);
    if (!cli_choice(a, "kind", kind_names, &kind) || !cli_get_freqs(a, "freqs", &p.freqs) ||
        !cli_get_layout(a, "layout", &p.layout) || !cli_int64(a, "len", 1, INT64_MAX, &len) ||
        !cli_int32(a, "dim", 1, INT32_MAX, &dim) || !cli_int64(a, "start", 0, INT64_MAX, &start))
        return EXIT_USAGE;
    /* a flag another kind would ignore is an error, never silently dropped */
    static const struct { const char *flag; int kind; } owned[] = {
        {"scaling", KIND_ROPE}, {"factor", KIND_ROPE}, {"original-max", KIND_ROPE}, {"seed", KIND_LEARNED},
        {"sigma", KIND_LEARNED}, {"freqs", KIND_SINUSOIDAL}, {"layout", KIND_SINUSOIDAL}};
    for (size_t i = 0; i < sizeof owned / sizeof *owned; i++)
        if (cli_has(a, owned[i].flag) && owned[i].kind != kind)
            return cli_fail(command, EXIT_USAGE, NULL, "--%s applies to --kind %s, not %s", owned[i].flag,
                            kind_names[owned[i].kind], kind_names[kind]);
    if (cli_rope_scaling_flag_given(a, NULL) && kind != KIND_ROPE)
        return cli_fail(command, EXIT_USAGE, NULL, "--%s applies to --kind rope, not %s", cli_rope_scaling_flag_given(a, NULL),
                        kind_names[kind]);
    if (kind == KIND_LEARNED) {
        int64_t seed = 0;
        double sigma = POSENC_LEARNED_SIGMA_DEFAULT;
        if (!cli_int64(a, "seed", 0, INT64_MAX, &seed) || !cli_double(a, "sigma", &sigma)) return EXIT_USAGE;
        if (cli_has(a, "base") || cli_has(a, "start"))
            return cli_fail(command, EXIT_USAGE, NULL, "--base and --start do not apply to --kind learned");
        return compute_learned(command, len, dim, (uint64_t)seed, sigma, t);
    }
    if (kind == KIND_ROPE) {
        /* the RoPE flags of `rope freqs` (one list, one parser); a bare --scaling draws with
         * factor 4 (llama3: 8) and trained context 8192, stated as if given */
        cli_rope_scaling q = {0};
        posenc_rope_params *rp = &q.params;
        posenc_rope_params_default(rp, dim);
        posenc_error err = {0};
        if (!cli_double(a, "base", &rp->base)) return EXIT_USAGE;
        int rc = cli_rope_scaling_parse(command, a, &q);
        if (rc == EXIT_OK && rp->scaling != POSENC_ROPE_NONE) {
            if (!(q.given & POSENC_ROPE_GIVEN_FACTOR)) rp->factor = rp->scaling == POSENC_ROPE_LLAMA3 ? 8 : 4;
            if (!(q.given & POSENC_ROPE_GIVEN_ORIGINAL)) rp->original_max_position = 8192;
            if (rp->scaling == POSENC_ROPE_DYNAMIC) rp->max_position = rp->original_max_position;
            q.given |= POSENC_ROPE_GIVEN_FACTOR | POSENC_ROPE_GIVEN_ORIGINAL;
        }
        if (rc == EXIT_OK && posenc_rope_resolve(rp, q.given, NULL, &err) != POSENC_OK) rc = cli_fail_status(command, &err);
        if (rc == EXIT_OK) rc = compute_rope(command, len, start, rp, t);
        cli_rope_scaling_free(&q);
        return rc;
    }
    p.dim = dim;
    if (!cli_double(a, "base", &p.base)) return EXIT_USAGE;
    return compute(command, kind, len, &p, start, t);
}
