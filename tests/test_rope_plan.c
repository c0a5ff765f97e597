/* test_rope_plan.c: a RoPE plan (posenc_rope_plan_create / _apply / _free)
 * gives the bytes of posenc_rope_apply_exec with the same params and seq_len,
 * and the same errors with the same messages.
 *
 *   - Bytes: 7 configurations (precise default, partial rotary, YaRN with an
 *     attention factor, dynamic NTK past the trained length, Llama 3,
 *     torch-compat, ggml) x f32/f16/bf16 x both layouts x forward/inverse x
 *     4 kinds of positions (none: 0..T-1; a run from 1000 over 700 tokens,
 *     which crosses anchors and the 512-token block; scattered ids; one token)
 *     x every supported path x 1 and 2 threads: memcmp equal to the unplanned
 *     call on the same input. The plan is made once (on the default path) and
 *     used on every path: its steps must not depend on the path.
 *   - Decoding: 300 steps of one token each through the plan equal one call
 *     over the 300 tokens (the near-tie rule: a token's cos/sin do not depend
 *     on how calls are cut).
 *   - Threads: 4 threads apply one plan at once, each to its own q, and get the
 *     one-thread bytes (a plan is read-only; TSan runs this test).
 *   - Signed zeros: the inverse at position 0 gives the same bits on every
 *     route (contiguous, alone, scattered, plan, multi-axis).
 *   - Errors: bad params fail at create with posenc_rope_check's message and
 *     *out NULL; a NULL plan, a bad dtype, a view past x_count, a bad layout
 *     and a positions overflow give apply_exec's status and message; free(NULL)
 *     returns.
 */
#include "check.h"

#include <pthread.h>

enum { D = 128, H = 4, T = 700, DECODE = 300 };

static void fill(void *x, size_t count, posenc_dtype dtype, uint32_t seed) {
    uint32_t s = seed * 2654435761u + 12345u;
    for (size_t i = 0; i < count; i++) {
        s = s * 1664525u + 1013904223u;
        float v = ((float)(s >> 8) / 16777216.0f - 0.5f) * 6.0f;
        if (dtype == POSENC_DTYPE_F32) ((float *)x)[i] = v;
        else if (dtype == POSENC_DTYPE_F16) ((uint16_t *)x)[i] = posenc_f32_to_f16(v);
        else ((uint16_t *)x)[i] = posenc_f32_to_bf16(v);
    }
}

typedef struct {
    const char *name;
    posenc_rope_params params;
    int64_t seq_len;
} config;

static int make_configs(config *c) {
    int n = 0;
    posenc_rope_params p;
    posenc_rope_params_default(&p, D);
    c[n++] = (config){"precise default", p, 0};
    posenc_rope_params_default(&p, D);
    p.rotary_dim = 64;
    p.base = 500000;
    c[n++] = (config){"partial rotary 64 of 128, base 5e5", p, 0};
    posenc_rope_params_default(&p, D);
    p.scaling = POSENC_ROPE_YARN;
    p.factor = 4;
    p.original_max_position = 4096;
    p.attention_factor = 1.25;
    c[n++] = (config){"yarn x4, attention 1.25", p, 0};
    posenc_rope_params_default(&p, D);
    p.scaling = POSENC_ROPE_DYNAMIC;
    p.factor = 2;
    p.max_position = 512;
    c[n++] = (config){"dynamic ntk x2 at seq_len 3000 (trained 512)", p, 3000};
    posenc_rope_params_default(&p, D);
    p.scaling = POSENC_ROPE_LLAMA3;
    p.factor = 8;
    p.original_max_position = 8192;
    p.base = 500000;
    c[n++] = (config){"llama3 x8", p, 0};
    posenc_rope_params_default(&p, D);
    p.mode = POSENC_MODE_TORCH_COMPAT;
    c[n++] = (config){"torch-compat", p, 0};
    posenc_rope_params_default(&p, D);
    p.mode = POSENC_MODE_GGML;
    c[n++] = (config){"ggml", p, 0};
    return n;
}

static size_t elem_size(posenc_dtype d) { return d == POSENC_DTYPE_F32 ? 4 : 2; }

static void check_bytes(void) {
    config configs[8];
    int nc = make_configs(configs);
    static const posenc_dtype dtypes[] = {POSENC_DTYPE_F32, POSENC_DTYPE_F16, POSENC_DTYPE_BF16};
    static const posenc_kernel_path paths[] = {POSENC_PATH_SCALAR, POSENC_PATH_AVX2, POSENC_PATH_AVX512};
    int64_t run[T], scattered[T], one = 4097;
    for (int t = 0; t < T; t++) {
        run[t] = 1000 + t;
        scattered[t] = (int64_t)((t * 7919) % 6000);
    }
    struct {
        const char *name;
        const int64_t *ids;
        size_t tokens;
    } kinds[] = {{"0..T-1", NULL, T}, {"run 1000..1699", run, T}, {"scattered ids", scattered, T}, {"one token", &one, 1}};
    const size_t n = (size_t)T * H * D;
    void *want = malloc(n * 4), *got = malloc(n * 4);
    for (int ci = 0; ci < nc; ci++) {
        posenc_error err = {0};
        posenc_rope_plan *plan = NULL;
        posenc_status st = posenc_rope_plan_create(&configs[ci].params, configs[ci].seq_len, &plan, &err);
        CHECK(st == POSENC_OK && plan, "%s: plan made (%s)", configs[ci].name, st ? err.message : "ok");
        if (!plan) continue;
        int cases = 0, differ = 0, status_differ = 0;
        for (size_t d = 0; d < 3; d++)
            for (int half = 0; half < 2; half++)
                for (int inverse = 0; inverse < 2; inverse++)
                    for (size_t k = 0; k < 4; k++)
                        for (size_t pi = 0; pi < 3; pi++)
                            for (int threads = 1; threads <= 2; threads++) {
                                if (!posenc_kernel_path_supported(paths[pi])) continue;
                                posenc_exec ex;
                                posenc_exec_default(&ex);
                                ex.path = paths[pi];
                                ex.threads = threads;
                                posenc_rope_view v = posenc_rope_view_contiguous(kinds[k].tokens, H, D);
                                size_t count = kinds[k].tokens * H * D;
                                posenc_layout layout = half ? POSENC_LAYOUT_HALF : POSENC_LAYOUT_INTERLEAVED;
                                fill(want, count, dtypes[d], (uint32_t)(ci * 100 + (int)k));
                                memcpy(got, want, count * elem_size(dtypes[d]));
                                posenc_error e1 = {0}, e2 = {0};
                                posenc_status s1 = posenc_rope_apply_exec(&configs[ci].params, configs[ci].seq_len,
                                                                          layout, &v, kinds[k].ids, inverse,
                                                                          dtypes[d], want, count, &ex, &e1);
                                posenc_status s2 = posenc_rope_plan_apply(plan, layout, &v, kinds[k].ids, inverse,
                                                                          dtypes[d], got, count, &ex, &e2);
                                cases++;
                                if (s1 != s2 || strcmp(e1.message, e2.message)) status_differ++;
                                if (memcmp(want, got, count * elem_size(dtypes[d]))) {
                                    if (!differ)
                                        printf("  first difference: %s, dtype %d, %s, inverse %d, %s, path %s x%d\n",
                                               configs[ci].name, (int)dtypes[d], half ? "half" : "interleaved",
                                               inverse, kinds[k].name, posenc_kernel_path_name(paths[pi]), threads);
                                    differ++;
                                }
                            }
        CHECK(cases > 0 && differ == 0 && status_differ == 0,
              "%s: plan == apply_exec in %d cases (dtypes x layouts x directions x positions x paths x threads): "
              "%d differ in bytes, %d in status or message", configs[ci].name, cases, differ, status_differ);
        posenc_rope_plan_free(plan);
    }
    free(want);
    free(got);
}

/* one token per call through the plan == one call over all tokens */
static void check_decoding(void) {
    posenc_rope_params p;
    posenc_rope_params_default(&p, D);
    p.base = 500000;
    posenc_error err = {0};
    posenc_rope_plan *plan = NULL;
    CHECK_STATUS(posenc_rope_plan_create(&p, 0, &plan, &err), POSENC_OK);
    const size_t n = (size_t)DECODE * H * D;
    float *whole = malloc(n * 4), *steps = malloc(n * 4);
    fill(whole, n, POSENC_DTYPE_F32, 7);
    memcpy(steps, whole, n * 4);
    int64_t ids[DECODE];
    for (int t = 0; t < DECODE; t++) ids[t] = 123456 + t;
    posenc_rope_view all = posenc_rope_view_contiguous(DECODE, H, D), single = posenc_rope_view_contiguous(1, H, D);
    posenc_status st = posenc_rope_apply_exec(&p, 0, POSENC_LAYOUT_HALF, &all, ids, 0, POSENC_DTYPE_F32, whole, n,
                                              NULL, &err);
    for (int t = 0; st == POSENC_OK && t < DECODE; t++)
        st = posenc_rope_plan_apply(plan, POSENC_LAYOUT_HALF, &single, &ids[t], 0, POSENC_DTYPE_F32,
                                    steps + (size_t)t * H * D, (size_t)H * D, NULL, &err);
    size_t differ = 0;
    for (size_t i = 0; i < n; i++) differ += memcmp(&whole[i], &steps[i], 4) != 0;
    CHECK(st == POSENC_OK && differ == 0,
          "decoding positions 123456..%d one token per plan call == one call over all: %zu of %zu values differ",
          123456 + DECODE - 1, differ, n);
    posenc_rope_plan_free(plan);
    free(whole);
    free(steps);
}

typedef struct {
    const posenc_rope_plan *plan;
    float *x;
    posenc_status st;
} worker_arg;

static void *worker(void *varg) {
    worker_arg *a = varg;
    posenc_rope_view v = posenc_rope_view_contiguous(T, H, D);
    posenc_error err;
    posenc_exec ex;
    posenc_exec_default(&ex);
    ex.threads = 1;
    a->st = posenc_rope_plan_apply(a->plan, POSENC_LAYOUT_INTERLEAVED, &v, NULL, 0, POSENC_DTYPE_F32, a->x,
                                   (size_t)T * H * D, &ex, &err);
    return NULL;
}

static void check_threads(void) {
    posenc_rope_params p;
    posenc_rope_params_default(&p, D);
    posenc_error err = {0};
    posenc_rope_plan *plan = NULL;
    CHECK_STATUS(posenc_rope_plan_create(&p, 0, &plan, &err), POSENC_OK);
    const size_t n = (size_t)T * H * D;
    float *want = malloc(n * 4);
    fill(want, n, POSENC_DTYPE_F32, 3);
    worker_arg args[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        args[i] = (worker_arg){plan, malloc(n * 4), POSENC_OK};
        memcpy(args[i].x, want, n * 4);
    }
    worker(&(worker_arg){plan, want, POSENC_OK});
    for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, worker, &args[i]);
    int same = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        same += args[i].st == POSENC_OK && !memcmp(args[i].x, want, n * 4);
        free(args[i].x);
    }
    CHECK(same == 4, "4 threads applying one plan at once: %d of 4 equal the one-thread bytes", same);
    free(want);
    posenc_rope_plan_free(plan);
}

static void check_errors(void) {
    posenc_error e1 = {0}, e2 = {0};
    posenc_rope_params p;
    posenc_rope_params_default(&p, D);
    p.base = -3;
    posenc_rope_plan *plan = (posenc_rope_plan *)&p; /* must come back NULL */
    posenc_status s1 = posenc_rope_plan_create(&p, 0, &plan, &e1);
    posenc_status s2 = posenc_rope_check(&p, NULL, &e2);
    CHECK(s1 == POSENC_ERR_INVALID_ARGUMENT && plan == NULL && !strcmp(e1.message, e2.message),
          "bad base: create fails with posenc_rope_check's message (\"%s\") and *out NULL", e1.message);
    CHECK_STATUS(posenc_rope_plan_create(NULL, 0, &plan, &e1), POSENC_ERR_NULL_POINTER);
    posenc_rope_params_default(&p, D);
    CHECK_STATUS(posenc_rope_plan_create(&p, 0, NULL, &e1), POSENC_ERR_NULL_POINTER);
    float x[H * D] = {0};
    posenc_rope_view v = posenc_rope_view_contiguous(1, H, D);
    CHECK_STATUS(posenc_rope_plan_apply(NULL, POSENC_LAYOUT_HALF, &v, NULL, 0, POSENC_DTYPE_F32, x, H * D, NULL, &e1),
                 POSENC_ERR_NULL_POINTER);
    plan = NULL;
    CHECK_STATUS(posenc_rope_plan_create(&p, 0, &plan, &e1), POSENC_OK);
    int64_t huge = (int64_t)1 << 60;
    struct {
        const char *what;
        posenc_layout layout;
        posenc_rope_view view;
        const int64_t *ids;
        posenc_dtype dtype;
        size_t count;
    } bad[] = {
        {"dtype f64", POSENC_LAYOUT_HALF, v, NULL, POSENC_DTYPE_F64, H * D},
        {"x_count one short", POSENC_LAYOUT_HALF, v, NULL, POSENC_DTYPE_F32, H * D - 1},
        {"layout 7", (posenc_layout)7, v, NULL, POSENC_DTYPE_F32, H * D},
        {"position 2^60", POSENC_LAYOUT_HALF, v, &huge, POSENC_DTYPE_F32, H * D},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&e1, 0, sizeof e1);
        memset(&e2, 0, sizeof e2);
        s1 = posenc_rope_plan_apply(plan, bad[i].layout, &bad[i].view, bad[i].ids, 0, bad[i].dtype, x, bad[i].count,
                                    NULL, &e1);
        s2 = posenc_rope_apply_exec(&p, 0, bad[i].layout, &bad[i].view, bad[i].ids, 0, bad[i].dtype, x, bad[i].count,
                                    NULL, &e2);
        CHECK(s1 != POSENC_OK && s1 == s2 && !strcmp(e1.message, e2.message),
              "%s: plan says %s \"%s\", as apply_exec does", bad[i].what, posenc_strerror(s1), e1.message);
    }
    posenc_rope_plan_free(plan);
    posenc_rope_plan_free(NULL); /* a no-op: a crash here fails the test (and ASan watches the free above) */
}

/* The inverse rotation at position 0: sin(-0) = -0 on every route. Before,
 * scattered ids (the per-pair long double route) gave +0 there and a
 * contiguous call -0, so a signed-zero input came out with a route-dependent
 * sign. Input pairs (-0, 1), (1, -0), (-0, -0): zero results whose sign
 * follows sin's. Routes: a contiguous call (0, 1, 2), token 0 alone, scattered
 * ids (0, 5, 9), a plan, and multi-axis RoPE with every axis at the same
 * positions (then equal to 1-D RoPE); both layouts. */
static void check_zero_sign(void) {
    enum { TOK = 3, HH = 2 };
    posenc_rope_params p;
    posenc_rope_params_default(&p, D);
    const size_t n = (size_t)TOK * HH * D;
    float base[TOK * HH * D];
    for (size_t i = 0; i < n; i++) base[i] = (float)(i % 7) * 0.25f - 0.5f;
    for (size_t i = 0; i < 6 * 2; i += 2) { /* the first pairs of head 0, both layouts' partners */
        base[i] = i % 4 ? 1.0f : -0.0f;
        base[i + 1] = i % 4 ? -0.0f : 1.0f;
        base[i / 2] = base[i];
        base[D / 2 + i / 2] = base[i + 1];
    }
    base[10] = base[11] = base[5] = base[D / 2 + 5] = -0.0f;
    int64_t contiguous[TOK] = {0, 1, 2}, scattered[TOK] = {0, 5, 9}, axes3[3 * TOK];
    for (int a = 0; a < 3; a++)
        for (int t = 0; t < TOK; t++) axes3[a * TOK + t] = scattered[t];
    posenc_mrope_sections sec = {POSENC_MROPE_SECTIONS, 3, {16, 24, 24, 0}};
    posenc_rope_plan *plan = NULL;
    posenc_error err = {0};
    CHECK_STATUS(posenc_rope_plan_create(&p, 0, &plan, &err), POSENC_OK);
    for (int half = 0; half < 2; half++) {
        posenc_layout layout = half ? POSENC_LAYOUT_HALF : POSENC_LAYOUT_INTERLEAVED;
        float route[5][TOK * HH * D];
        posenc_rope_view all = posenc_rope_view_contiguous(TOK, HH, D), one = posenc_rope_view_contiguous(1, HH, D);
        for (int r = 0; r < 5; r++) memcpy(route[r], base, sizeof base);
        posenc_status st[5];
        st[0] = posenc_rope_apply_exec(&p, 0, layout, &all, contiguous, 1, POSENC_DTYPE_F32, route[0], n, NULL, &err);
        st[1] = posenc_rope_apply_exec(&p, 0, layout, &one, contiguous, 1, POSENC_DTYPE_F32, route[1], n, NULL, &err);
        st[2] = posenc_rope_apply_exec(&p, 0, layout, &all, scattered, 1, POSENC_DTYPE_F32, route[2], n, NULL, &err);
        st[3] = posenc_rope_plan_apply(plan, layout, &all, scattered, 1, POSENC_DTYPE_F32, route[3], n, NULL, &err);
        st[4] = posenc_mrope_apply_f32(&p, &sec, layout, &all, axes3, 1, route[4], n, &err);
        int same = 1, zeros = 0;
        for (int r = 0; r < 5; r++) same &= st[r] == POSENC_OK && !memcmp(route[r], route[0], (size_t)HH * D * 4);
        for (size_t i = 0; i < (size_t)HH * D; i++) zeros += route[0][i] == 0.0f;
        CHECK(same && zeros >= 6,
              "%s: inverse at position 0, signed-zero inputs: token 0 the same bits on all 5 routes (contiguous, "
              "alone, scattered ids, plan, multi-axis), %d zero outputs", half ? "half-split" : "interleaved", zeros);
    }
    posenc_rope_plan_free(plan);
}

int main(void) {
    check_zero_sign();
    check_bytes();
    check_decoding();
    check_threads();
    check_errors();
    return check_finish();
}
