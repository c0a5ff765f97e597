/* ggml_rope_dump.c: ggml's own CPU RoPE (ggml_rope_ext, ggml_rope_multi) on the
 * parameters llama.cpp derives for real model configs, dumped as .npy for the
 * committed fixtures in tests/fixtures/ggml (issue 24, item 4). posenc is not
 * called here: every value written is ggml's output.
 *
 *   ggml_rope_dump PLAN.json OUTDIR
 *
 * PLAN.json (written by tests/ggml/regenerate.py) lists the fixtures and, per
 * fixture, the exact ggml call: mode (0 NORMAL, 2 NEOX, 8 MROPE, 40 IMROPE),
 * head_dim, n_dims, freq_base, freq_scale, ext_factor, attn_factor, beta_fast,
 * beta_slow, n_ctx_orig, sections (multi-axis), freq_factors (or null). Every
 * float in it is a float32 value printed exactly, so (float)double is the value.
 *
 * Per fixture it writes
 *   NAME_cache.npy  f32 [rows, n_dims]: ggml's cos/sin per pair as ggml's own
 *       per-token cache holds it, (cos, sin) of pair k at 2k, 2k + 1. Made by
 *       rotating x = (1, 0) in every pair at positions 0..rows-1 (NORMAL: x[2k] = 1;
 *       NEOX/MROPE/IMROPE: x[k] = 1), whose rotation is (x0 c - x1 s, x0 s + x1 c) =
 *       (mscale cos, mscale sin) exactly (the products with 0 and 1 are exact);
 *       NEOX's (k, k + R/2) output is re-interleaved into pairs. M-RoPE text
 *       tokens: streams (p, p, p, 0), as llama.cpp's llm_graph_input_pos sets them.
 *   NAME_apply.npy  f32 [tokens, heads, head_dim]: ggml's rotation of the golden
 *       input formula (tests/golden/README.md) at positions pos0.. (M-RoPE: the
 *       positions in NAME_positions.npy, int32 [4, tokens]).
 * and input_dD.npy, the input formula [tokens, heads, D], once per head_dim. An entry may
 * give its own "rows" and "apply": false (the planted deviations: the cache only).
 * One thread; a ggml context per call. Exit 0, or 1 with a message. */
#include "ggml-cpu.h"
#include "ggml.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char name[96];
    int mode, head_dim, n_dims, n_ctx_orig, sections[4];
    float freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow;
    float *freq_factors; /* n_dims / 2 entries or NULL */
} rope_call;

static int fail(const char *what, const char *detail) {
    fprintf(stderr, "ggml_rope_dump: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    return 1;
}

/* numpy .npy v1.0, C order; descr "<f4" or "<i4" */
static int write_npy(const char *dir, const char *name, const char *descr, const void *data, size_t elem,
                     const int64_t *shape, int ndim) {
    char path[1024], header[256], dims[128] = "";
    snprintf(path, sizeof path, "%s/%s", dir, name);
    size_t n = 1;
    for (int i = 0; i < ndim; i++) {
        char one[32];
        snprintf(one, sizeof one, "%lld%s", (long long)shape[i], ndim == 1 ? "," : i + 1 < ndim ? ", " : "");
        strcat(dims, one);
        n *= (size_t)shape[i];
    }
    int len = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, dims);
    int total = 10 + len + 1;
    int pad = (64 - total % 64) % 64;
    FILE *f = fopen(path, "wb");
    if (!f) return fail("cannot write", path);
    uint16_t hlen = (uint16_t)(len + pad + 1);
    fwrite("\x93NUMPY\x01\x00", 1, 8, f);
    fwrite(&hlen, 2, 1, f);
    fwrite(header, 1, (size_t)len, f);
    for (int i = 0; i < pad; i++) fputc(' ', f);
    fputc('\n', f);
    size_t wrote = fwrite(data, elem, n, f);
    if (fclose(f) != 0 || wrote != n) return fail("short write", path);
    return 0;
}

/* ggml rotates x [D, H, T] (ggml's ne order = C [T][H][D]) at positions pos
 * (T entries, or 4 T for multi-axis) in one thread; x is overwritten. */
static int ggml_run(const rope_call *c, float *x, int64_t T, int64_t H, const int32_t *pos) {
    const int multi = c->mode == GGML_ROPE_TYPE_MROPE || c->mode == GGML_ROPE_TYPE_IMROPE;
    const int64_t npos = multi ? 4 * T : T;
    size_t bytes = (size_t)(T * H * c->head_dim) * sizeof(float) * 2 + (size_t)npos * 4 + (size_t)c->n_dims * 4 +
                   (8u << 20);
    struct ggml_init_params ip = {bytes, NULL, false};
    struct ggml_context *ctx = ggml_init(ip);
    if (!ctx) return fail("ggml_init failed", c->name);
    struct ggml_tensor *a = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, c->head_dim, H, T);
    struct ggml_tensor *p = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, npos);
    memcpy(a->data, x, (size_t)(T * H * c->head_dim) * sizeof(float));
    memcpy(p->data, pos, (size_t)npos * sizeof(int32_t));
    struct ggml_tensor *ff = NULL;
    if (c->freq_factors) {
        ff = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, c->n_dims / 2);
        memcpy(ff->data, c->freq_factors, (size_t)(c->n_dims / 2) * sizeof(float));
    }
    struct ggml_tensor *out;
    if (multi) {
        int sections[4];
        memcpy(sections, c->sections, sizeof sections);
        out = ggml_rope_multi(ctx, a, p, ff, c->n_dims, sections, c->mode, c->n_ctx_orig, c->freq_base,
                              c->freq_scale, c->ext_factor, c->attn_factor, c->beta_fast, c->beta_slow);
    } else {
        out = ggml_rope_ext(ctx, a, p, ff, c->n_dims, c->mode, c->n_ctx_orig, c->freq_base, c->freq_scale,
                            c->ext_factor, c->attn_factor, c->beta_fast, c->beta_slow);
    }
    struct ggml_cgraph *g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, out);
    if (ggml_graph_compute_with_ctx(ctx, g, 1) != GGML_STATUS_SUCCESS) {
        ggml_free(ctx);
        return fail("ggml_graph_compute failed", c->name);
    }
    memcpy(x, out->data, (size_t)(T * H * c->head_dim) * sizeof(float));
    ggml_free(ctx);
    return 0;
}

/* the golden input formula: float32(sin(0.37 t + 1.3 h + 0.11 d) (1 + 0.01 d)) in double */
static void input_formula(float *x, int64_t T, int64_t H, int D) {
    for (int64_t t = 0; t < T; t++)
        for (int64_t h = 0; h < H; h++)
            for (int d = 0; d < D; d++)
                x[(t * H + h) * D + d] = (float)(sin(0.37 * (double)t + 1.3 * (double)h + 0.11 * (double)d) *
                                                 (1.0 + 0.01 * (double)d));
}

static double num(const cJSON *o, const char *key, int *bad) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v)) {
        *bad = 1;
        fprintf(stderr, "ggml_rope_dump: plan entry lacks number '%s'\n", key);
        return 0;
    }
    return v->valuedouble;
}

static int dump_one(const cJSON *e, const char *dir, int64_t rows, int64_t tokens, int64_t heads, int32_t pos0,
                    unsigned char *inputs_written) {
    /* optional per entry: "rows" (cache rows), "apply": false (the cache only: planted deviations) */
    const cJSON *own_rows = cJSON_GetObjectItemCaseSensitive(e, "rows");
    if (cJSON_IsNumber(own_rows)) rows = (int64_t)own_rows->valuedouble;
    const int apply = !cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(e, "apply"));
    rope_call c;
    memset(&c, 0, sizeof c);
    int bad = 0;
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(e, "name");
    if (!cJSON_IsString(nm) || strlen(nm->valuestring) >= sizeof c.name) return fail("plan entry without a name", NULL);
    strcpy(c.name, nm->valuestring);
    c.mode = (int)num(e, "mode", &bad);
    c.head_dim = (int)num(e, "head_dim", &bad);
    c.n_dims = (int)num(e, "n_dims", &bad);
    c.n_ctx_orig = (int)num(e, "n_ctx_orig", &bad);
    c.freq_base = (float)num(e, "freq_base", &bad);
    c.freq_scale = (float)num(e, "freq_scale", &bad);
    c.ext_factor = (float)num(e, "ext_factor", &bad);
    c.attn_factor = (float)num(e, "attn_factor", &bad);
    c.beta_fast = (float)num(e, "beta_fast", &bad);
    c.beta_slow = (float)num(e, "beta_slow", &bad);
    if (bad) return 1;
    if (c.head_dim <= 0 || c.head_dim > 1024 || c.n_dims <= 0 || c.n_dims > c.head_dim || c.n_dims % 2)
        return fail("bad head_dim / n_dims", c.name);
    const int multi = c.mode == GGML_ROPE_TYPE_MROPE || c.mode == GGML_ROPE_TYPE_IMROPE;
    const cJSON *sec = cJSON_GetObjectItemCaseSensitive(e, "sections");
    if (multi) {
        if (cJSON_GetArraySize(sec) != 4) return fail("multi-axis entry needs 4 sections", c.name);
        for (int i = 0; i < 4; i++) c.sections[i] = cJSON_GetArrayItem(sec, i)->valueint;
    }
    const int K = c.n_dims / 2;
    const cJSON *ffj = cJSON_GetObjectItemCaseSensitive(e, "freq_factors");
    float ffbuf[512];
    if (cJSON_IsArray(ffj)) {
        if (cJSON_GetArraySize(ffj) != K) return fail("freq_factors must have n_dims/2 entries", c.name);
        for (int i = 0; i < K; i++) ffbuf[i] = (float)cJSON_GetArrayItem(ffj, i)->valuedouble;
        c.freq_factors = ffbuf;
    }
    const int neox = c.mode != GGML_ROPE_TYPE_NORMAL;
    char file[160];

    /* (a) the cache: x = (1, 0) per pair, one head, positions 0..rows-1 */
    {
        float *x = calloc((size_t)(rows * c.head_dim), sizeof(float));
        float *cache = malloc((size_t)(rows * c.n_dims) * sizeof(float));
        int32_t *pos = malloc((size_t)(4 * rows) * sizeof(int32_t));
        if (!x || !cache || !pos) return fail("out of memory", c.name);
        for (int64_t t = 0; t < rows; t++) {
            for (int k = 0; k < K; k++) x[t * c.head_dim + (neox ? k : 2 * k)] = 1.0f;
            pos[t] = (int32_t)t;
            pos[rows + t] = pos[2 * rows + t] = (int32_t)t;
            pos[3 * rows + t] = 0;
        }
        if (ggml_run(&c, x, rows, 1, pos)) return 1;
        for (int64_t t = 0; t < rows; t++)
            for (int k = 0; k < K; k++) {
                const float *v = x + t * c.head_dim;
                cache[t * c.n_dims + 2 * k] = neox ? v[k] : v[2 * k];
                cache[t * c.n_dims + 2 * k + 1] = neox ? v[k + K] : v[2 * k + 1];
            }
        int64_t shape[2] = {rows, c.n_dims};
        snprintf(file, sizeof file, "%s_cache.npy", c.name);
        int rc = write_npy(dir, file, "<f4", cache, 4, shape, 2);
        free(x);
        free(cache);
        free(pos);
        if (rc) return rc;
    }
    /* (b) ggml's rotation of the input formula */
    if (apply) {
        size_t n = (size_t)(tokens * heads * c.head_dim);
        float *x = malloc(n * sizeof(float));
        int32_t *pos = malloc((size_t)(4 * tokens) * sizeof(int32_t));
        if (!x || !pos) return fail("out of memory", c.name);
        input_formula(x, tokens, heads, c.head_dim);
        int64_t shape3[3] = {tokens, heads, c.head_dim};
        if (c.head_dim < 1024 && !inputs_written[c.head_dim]) {
            snprintf(file, sizeof file, "input_d%d.npy", c.head_dim);
            if (write_npy(dir, file, "<f4", x, 4, shape3, 3)) return 1;
            inputs_written[c.head_dim] = 1;
        }
        for (int64_t t = 0; t < tokens; t++) {
            pos[t] = pos0 + (int32_t)t;
            /* M-RoPE: a 4 x 8 image grid after 5 text tokens, then text again (h, w differ
             * from t), and a 4th stream that is not 0, so every stream shows; 1-D: pos0 + t */
            int32_t g = (int32_t)t - 5;
            int in_grid = g >= 0 && g < 32;
            pos[tokens + t] = in_grid ? pos0 + 5 + g / 8 : pos[t];
            pos[2 * tokens + t] = in_grid ? pos0 + 5 + g % 8 : pos[t];
            pos[3 * tokens + t] = (int32_t)(t % 7);
            if (in_grid && multi) pos[t] = pos0 + 5;
        }
        if (ggml_run(&c, x, tokens, heads, pos)) return 1;
        snprintf(file, sizeof file, "%s_apply.npy", c.name);
        if (write_npy(dir, file, "<f4", x, 4, shape3, 3)) return 1;
        if (multi) {
            int64_t pshape[2] = {4, tokens};
            snprintf(file, sizeof file, "%s_positions.npy", c.name);
            if (write_npy(dir, file, "<i4", pos, 4, pshape, 2)) return 1;
        }
        free(x);
        free(pos);
    }
    printf("%s: mode %d, n_dims %d of %d, written\n", c.name, c.mode, c.n_dims, c.head_dim);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: ggml_rope_dump PLAN.json OUTDIR\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) return fail("cannot read", argv[1]);
    static char text[1 << 20];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = 0;
    cJSON *plan = cJSON_Parse(text);
    if (!plan) return fail("plan is not JSON", argv[1]);
    int bad = 0;
    int64_t rows = (int64_t)num(plan, "rows", &bad), tokens = (int64_t)num(plan, "apply_tokens", &bad),
            heads = (int64_t)num(plan, "apply_heads", &bad);
    int32_t pos0 = (int32_t)num(plan, "apply_pos0", &bad);
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(plan, "fixtures");
    if (bad || !cJSON_IsArray(list) || rows < 3 || tokens < 1 || heads < 1) return fail("bad plan header", argv[1]);
    unsigned char inputs_written[1024] = {0};
    const cJSON *e;
    cJSON_ArrayForEach(e, list) {
        if (dump_one(e, argv[2], rows, tokens, heads, pos0, inputs_written)) {
            cJSON_Delete(plan);
            return 1;
        }
    }
    cJSON_Delete(plan);
    return 0;
}
