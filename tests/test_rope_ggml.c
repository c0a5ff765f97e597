/* test_rope_ggml.c: POSENC_MODE_GGML against ggml's own CPU RoPE output, the
 * 24 ggml_rope_* goldens of tests/golden (ggml d99724f2 = v0.21.0, NORMAL and
 * NEOX, plain / linear 0.25 / YaRN, n_dims 64 and 32, positions 0.. and
 * 1000..). Tolerance: none. Every rotated value must equal ggml's bits, on
 * every kernel path and thread count (the ggml kernel is one scalar body).
 * Also: the ggml table is ggml's cache (cosf/sinf of the float32 theta chain),
 * its frequencies are the chain at position 1, and what ggml cannot do is
 * refused by name. Before this mode existed the closest (torch-compat) was
 * off by up to ~1e-4 at position 1000: test_rope_golden.c's tolerance. */
#include "check.h"

#include <math.h>
#include <stdbool.h>

#define T 37
#define H 3
#define D 64

static float input_x[T * H * D];

static void golden_f32(const char *dir, const char *name, float *out) {
    double *g = check_load_golden(dir, name, NULL);
    for (int i = 0; i < T * H * D; i++) out[i] = (float)g[i];
    free(g);
}

static void test_goldens(const char *dir) {
    static const char *const kinds[] = {"plain", "linear0.25", "yarn"};
    static float want[T * H * D], got[T * H * D];
    int identical = 0;
    for (int neox = 0; neox < 2; neox++)
        for (int kind = 0; kind < 3; kind++)
            for (int nd = 64; nd >= 32; nd -= 32)
                for (int start = 0; start <= 1000; start += 1000) {
                    char file[120];
                    snprintf(file, sizeof file, "ggml_rope_%s_%s_ndims%d_pos%d", neox ? "neox" : "normal",
                             kinds[kind], nd, start);
                    golden_f32(dir, file, want);
                    posenc_rope_params p;
                    posenc_rope_params_default(&p, D);
                    p.mode = POSENC_MODE_GGML;
                    p.rotary_dim = nd;
                    if (kind > 0) { /* freq_scale 0.25 */
                        p.scaling = kind == 1 ? POSENC_ROPE_LINEAR : POSENC_ROPE_YARN;
                        p.factor = 4;
                        p.original_max_position = 4096; /* YaRN: n_ctx_orig */
                    }
                    int64_t pos[T];
                    for (int t = 0; t < T; t++) pos[t] = start + t;
                    posenc_rope_view v = posenc_rope_view_contiguous(T, H, D);
                    posenc_layout layout = neox ? POSENC_LAYOUT_HALF : POSENC_LAYOUT_INTERLEAVED;
                    bool all = true;
                    for (int path = POSENC_PATH_SCALAR; path <= POSENC_PATH_AVX512; path++)
                        for (int threads = 1; threads <= 3; threads += 2) {
                            posenc_exec ex;
                            posenc_exec_default(&ex);
                            ex.path = (posenc_kernel_path)path;
                            ex.threads = threads;
                            memcpy(got, input_x, sizeof got);
                            posenc_error err = {0};
                            posenc_status st = posenc_rope_apply_exec(&p, 0, layout, &v, pos, 0, POSENC_DTYPE_F32,
                                                                      got, T * H * D, &ex, &err);
                            if (st == POSENC_ERR_UNSUPPORTED) continue; /* this CPU lacks the path */
                            char label[200];
                            snprintf(label, sizeof label, "%s, mode ggml, path %s, %d thread(s)", file,
                                     posenc_kernel_path_name(ex.path), threads);
                            CHECK(st == POSENC_OK, "%s: %s", label, err.message);
                            size_t dims[3] = {T, H, D};
                            all = check_same(label, got, want, T * H * D, CHECK_F32, dims, 3) && all;
                        }
                    identical += all;
                }
    CHECK(identical == 24, "ggml goldens reproduced bit for bit: %d of 24", identical);
}

/* The table is ggml's cache: cosf/sinf of the float32 chain p * ts * ts ...,
 * written out here independently (plain RoPE, R = 64). */
static void test_table(void) {
    posenc_rope_params p;
    posenc_rope_params_default(&p, 64);
    p.mode = POSENC_MODE_GGML;
    p.base = 500000;
    float c[3 * 32], s[3 * 32];
    int64_t ids[3] = {0, 7, 131071};
    posenc_positions pos = posenc_positions_ids(ids, 3);
    posenc_error err = {0};
    CHECK_STATUS(posenc_rope_table_f32(&p, 0, &pos, 1, c, s, 3 * 32, &err), POSENC_OK);
    float ts = powf(500000.0f, -2.0f / 64.0f);
    int bad = 0;
    for (int r = 0; r < 3; r++) {
        float theta = (float)ids[r];
        for (int k = 0; k < 32; k++) {
            bad += c[r * 32 + k] != cosf(theta) || s[r * 32 + k] != sinf(theta);
            theta *= ts;
        }
    }
    CHECK(bad == 0, "ggml table = cosf/sinf of the float32 theta chain at 0, 7, 131071 (%d differ)", bad);
    double w[32], att = 0;
    CHECK_STATUS(posenc_rope_frequencies(&p, 0, w, 32, &att, &err), POSENC_OK);
    float chain = 1.0f;
    int off = 0;
    for (int k = 0; k < 32; k++, chain *= ts) off += w[k] != (double)chain;
    CHECK(off == 0 && att == 1.0, "ggml frequencies = the chain at position 1 (%d differ), magnitude %g", off, att);
    /* YaRN magnitude: ggml's 1 + 0.1 logf(1/freq_scale) */
    p.scaling = POSENC_ROPE_YARN;
    p.factor = 4;
    p.original_max_position = 4096;
    CHECK_STATUS(posenc_rope_frequencies(&p, 0, w, 32, &att, &err), POSENC_OK);
    CHECK(att == (double)(1.0f + 0.1f * logf(4.0f)), "ggml YaRN magnitude %.9g", att);
}

static void test_refusals(void) {
    posenc_rope_params p;
    posenc_rope_params_default(&p, 64);
    p.mode = POSENC_MODE_GGML;
    p.scaling = POSENC_ROPE_DYNAMIC;
    p.factor = 2;
    p.max_position = 2048;
    double w[32];
    posenc_error err = {0};
    CHECK_STATUS(posenc_rope_frequencies(&p, 0, w, 32, NULL, &err), POSENC_ERR_INVALID_ARGUMENT);
    CHECK(strstr(err.message, "dynamic") != NULL, "[P18] dynamic refused by name: %s", err.message);
    p.scaling = POSENC_ROPE_YARN;
    p.original_max_position = 4096;
    p.truncate = 0;
    CHECK_STATUS(posenc_rope_frequencies(&p, 0, w, 32, NULL, &err), POSENC_ERR_INVALID_ARGUMENT);
    CHECK(strstr(err.message, "truncate") != NULL, "[P18] YaRN truncate=0 refused by name: %s", err.message);
    posenc_rope_params_default(&p, 64);
    p.mode = POSENC_MODE_GGML;
    /* MROPE / IMROPE have a ggml mode (tests/test_rope_ggml_mrope.c); ggml's VISION (axial) does not */
    posenc_mrope_sections sec = {POSENC_MROPE_AXIAL, 2, {16, 16, 0, 0}};
    float x[64] = {0};
    int64_t pos[2] = {0, 0};
    posenc_rope_view v = posenc_rope_view_contiguous(1, 1, 64);
    CHECK_STATUS(posenc_mrope_apply_f32(&p, &sec, POSENC_LAYOUT_HALF, &v, pos, 0, x, 64, &err),
                 POSENC_ERR_UNSUPPORTED);
    CHECK(strstr(err.message, "ggml") != NULL, "[P19] axial multi-axis refuses mode ggml: %s", err.message);
    /* an angle float32 cannot hold is refused, not returned as NaN (found by fuzz_rope: linear factor
     * 7e-38 makes freq_scale 1.4e37, so position 1e6 overflows; the precise mode computes it) */
    posenc_rope_params_default(&p, 64);
    p.mode = POSENC_MODE_GGML;
    p.scaling = POSENC_ROPE_LINEAR;
    p.factor = 7.1175e-38;
    int64_t far_id = 1000000;
    posenc_positions far = posenc_positions_ids(&far_id, 1);
    float c32[32], s32[32];
    err = (posenc_error){0};
    CHECK_STATUS(posenc_rope_table_f32(&p, 0, &far, 0, c32, s32, 32, &err), POSENC_ERR_INVALID_ARGUMENT);
    CHECK(strstr(err.message, "mode ggml: the float32 angle of pair 0 at position 1000000") != NULL,
          "[P18] ggml angle overflow refused by name: %s", err.message);
    float q[64] = {0};
    int64_t at[1] = {1000000};
    posenc_rope_view one = posenc_rope_view_contiguous(1, 1, 64);
    CHECK_STATUS(posenc_rope_apply_f32(&p, 0, POSENC_LAYOUT_HALF, &one, at, 0, q, 64, &err), POSENC_ERR_INVALID_ARGUMENT);
    p.mode = POSENC_MODE_PRECISE;
    CHECK_STATUS(posenc_rope_table_f32(&p, 0, &far, 0, c32, s32, 32, &err), POSENC_OK);
    /* other families keep refusing an unknown mode */
    posenc_sinusoid_params sp;
    posenc_sinusoid_params_default(&sp, 8);
    sp.mode = POSENC_MODE_GGML;
    CHECK(posenc_sinusoid_check(&sp, NULL, &err) != POSENC_OK, "sinusoid tables refuse mode ggml: %s", err.message);
}

int main(void) {
    const char *dir = check_golden_dir();
    double *x = check_load_golden(dir, "input_formula_T37_H3_D64", NULL);
    for (int i = 0; i < T * H * D; i++) input_x[i] = (float)x[i];
    free(x);
    test_goldens(dir);
    test_table();
    test_refusals();
    return check_finish();
}
