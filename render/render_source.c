/* render_source.c: the tables that `plot` and `report` draw: computed from the
 * library's parameters, or read from a .npy file. Values are held as doubles.
 * Which table the flags ask for is the commands' business (cli/table_args.c). */
#include "render.h"

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

const char *const cli_table_kind_names[] = {"sinusoidal", "index", "normalized", "rope", "learned", NULL};

/* Largest table drawn from flags: 2^24 cells (128 MiB of doubles). */
#define MAX_CELLS ((size_t)1 << 24)

int cli_table_compute(const char *command, int kind, int64_t len, const posenc_sinusoid_params *p, int64_t start,
                      cli_table *t) {
    memset(t, 0, sizeof *t);
    if (kind < CLI_TABLE_SINUSOIDAL || kind > CLI_TABLE_NORMALIZED)
        return cli_fail(command, EXIT_USAGE, NULL, "table kind %d is not a sinusoid or a baseline", kind);
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
    snprintf(t->name, sizeof t->name, "%s", cli_table_kind_names[kind]);
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
                 cli_table_kind_names[kind], kind == 1 ? "the position p" : "p/(len-1)", (long long)len, p->dim);
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
int cli_table_rope(const char *command, int64_t len, int64_t start, const posenc_rope_params *p, cli_table *t) {
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
int cli_table_learned(const char *command, int64_t len, int32_t dim, uint64_t seed, double sigma, cli_table *t) {
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
    for (int k = 0; cli_table_kind_names[k]; k++)
        if (strcmp(kind, cli_table_kind_names[k]) == 0) {
            if (k == CLI_TABLE_ROPE) {
                posenc_rope_params rp;
                posenc_rope_params_default(&rp, dim);
                return cli_table_rope(command, len, 0, &rp, t);
            }
            if (k == CLI_TABLE_LEARNED) return cli_table_learned(command, len, dim, 0, POSENC_LEARNED_SIGMA_DEFAULT, t);
            posenc_sinusoid_params p;
            posenc_sinusoid_params_default(&p, dim);
            return cli_table_compute(command, k, len, &p, 0, t);
        }
    return cli_fail(command, EXIT_USAGE, NULL, "unknown table kind '%s'", kind);
}

int cli_table_read(const char *command, const char *path, size_t max_bytes, cli_table *t) {
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
int cli_table_from_model(const char *command, const posenc_model *m, int64_t len, int64_t start, const char *path,
                         cli_table *t) {
    posenc_layer_scheme s = m->layer_count > 0 ? m->layers[0].scheme : POSENC_LAYER_NOPE;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (s == POSENC_LAYER_LEARNED) {
        int rc = cli_table_learned(command, len, m->config.hidden_size > 0 ? m->config.hidden_size : 64, 0,
                                 POSENC_LEARNED_SIGMA_DEFAULT, t);
        if (rc == EXIT_OK)
            snprintf(t->about, sizeof t->about, "%s: learned table %.60s (%lld rows): its untrained init, the config "
                     "holds no weights", base, m->learned_tensor, (long long)m->learned_size);
        return rc;
    }
    if (s == POSENC_LAYER_SINUSOIDAL) { /* Whisper's encoder: the fixed table itself, as the checkpoint holds it */
        int rc = cli_table_compute(command, POSENC_KIND_SINUSOIDAL, len, &m->sinusoid, start, t);
        if (rc == EXIT_OK)
            snprintf(t->about, sizeof t->about, "%s: the %s fixed sinusoidal table %.60s (%lld rows%s)", base,
                     strcmp(m->layers[0].kind, "encoder") == 0 ? "encoder's" : "model's",
                     m->sinusoid_size ? m->sinusoid_tensor : "(computed per forward pass)",
                     (long long)m->sinusoid_size, m->sinusoid_size ? "" : ": no stored table");
        return rc;
    }
    /* wav2vec2-style: a learned convolution of the features, nothing a config can draw; WavLM: its bucket numbers */
    if (s == POSENC_LAYER_CONV_POSITION && m->wavlm_num_buckets == 0)
        return cli_fail(command, EXIT_RUNTIME, "its positions live in the checkpoint's weights",
                        "%s: '%s' adds a learned convolution of its features (%s), which a config holds no values of",
                        base, m->config.architecture, m->conv_pos_tensor);
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
            } else if (s == POSENC_LAYER_CONV_POSITION) { /* WavLM: bucket of key - query (posenc.h 5.2b) */
                int32_t bucket = 0;
                posenc_t5_params p = {m->wavlm_num_buckets, m->wavlm_max_distance, 1};
                if (posenc_wavlm_bucket(&p, j - i, &bucket, &err) != POSENC_OK) {
                    cli_table_free(t);
                    return cli_fail_status(command, &err);
                }
                v = bucket;
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
    else if (s == POSENC_LAYER_CONV_POSITION)
        snprintf(t->about, sizeof t->about, "%s: WavLM bucket of each (query, key), %d buckets, max distance %d (the "
                 "bias each layer gates; the conv positions are weights)", base, m->wavlm_num_buckets,
                 m->wavlm_max_distance);
    else
        snprintf(t->about, sizeof t->about, "%s: no position encoding in any layer: every position looks the same (a constant table)", base);
    return EXIT_OK;
}
