#define _GNU_SOURCE /* setenv, unsetenv */
/* test_kernels_fast.c: the RoPE and bias fast paths.
 * - RoPE apply: every path x thread count gives the same bits as scalar x 1
 *   (f32/bf16/f16, both layouts, head sizes with vector leftovers, strided
 *   views, NaN payloads in bf16, contiguous and explicit positions, inverse);
 *   inputs holding NaN/inf are rotated all the same and reported
 *   (POSENC_ERR_NONFINITE, the same message on every path);
 * - RoPE non-finite results: f32/f16/bf16 x both layouts x every path x 1 and
 *   2 threads: an overflowing rotation returns POSENC_ERR_NONFINITE naming the
 *   first bad cell, a normal one succeeds, both bit-identical to scalar x 1;
 * - RoPE precise cos/sin from the anchored rotation: the rotated values equal
 *   an independent long double rotation within 1 f32 ULP of cos/sin + rounding;
 * - ALiBi / T5 range fills equal the element-by-element definition bit for bit
 *   on every path x thread count (incl. cached decoding offsets). */
#include "check.h"

#include <stdlib.h>

static const posenc_kernel_path paths[] = {POSENC_PATH_SCALAR, POSENC_PATH_AVX2, POSENC_PATH_AVX512};

static uint32_t rng = 12345;
static float rnd(void) {
    rng = rng * 1664525u + 1013904223u;
    return (float)((rng >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static void test_rope_paths(void) {
    const struct {
        int head_dim, rotary;
        size_t tokens, heads, row_pad;
        posenc_dtype dtype;
        int explicit_positions, inverse;
    } cases[] = {
        {128, 0, 1100, 8, 0, POSENC_DTYPE_F32, 0, 0},   /* 3 blocks of 512 tokens */
        {128, 0, 1100, 8, 0, POSENC_DTYPE_BF16, 0, 0},
        {96, 80, 700, 3, 40, POSENC_DTYPE_F32, 0, 1},   /* 40 pairs: leftovers; strided rows; inverse */
        {96, 80, 700, 3, 40, POSENC_DTYPE_BF16, 1, 0},  /* explicit (non-contiguous) positions */
        {128, 0, 1100, 4, 0, POSENC_DTYPE_F32, 2, 1},   /* packed runs of 250 positions, inverse */
        {64, 0, 1100, 4, 0, POSENC_DTYPE_BF16, 2, 0},
        {64, 0, 600, 4, 0, POSENC_DTYPE_F16, 0, 0},
        {96, 80, 700, 3, 40, POSENC_DTYPE_F16, 1, 1},   /* f16 leftovers, ids, inverse, special values */
        {10, 6, 530, 5, 3, POSENC_DTYPE_F32, 0, 0},     /* 3 pairs: all leftovers */
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
        for (int layout = 0; layout < 2; layout++) {
            posenc_rope_params p;
            posenc_rope_params_default(&p, cases[ci].head_dim);
            p.rotary_dim = cases[ci].rotary;
            posenc_rope_view v = posenc_rope_view_contiguous(cases[ci].tokens, cases[ci].heads, cases[ci].head_dim);
            v.row_stride += cases[ci].row_pad;
            size_t count = v.tokens * v.row_stride, esize = posenc_dtype_size(cases[ci].dtype);
            int64_t *pos = malloc(sizeof *pos * v.tokens);
            for (size_t t = 0; t < v.tokens; t++)
                pos[t] = cases[ci].explicit_positions == 1 ? (int64_t)(t * t % 9973) - 50
                         : cases[ci].explicit_positions == 2 ? (int64_t)(t / 250 * 9000 + t % 250)
                                                             : (int64_t)t + 77;
            void *x0 = malloc(count * esize), *ref = malloc(count * esize), *got = malloc(count * esize);
            for (size_t i = 0; i < count; i++) {
                float f = rnd() * 3;
                if (cases[ci].dtype == POSENC_DTYPE_F32) ((float *)x0)[i] = f;
                else ((uint16_t *)x0)[i] = cases[ci].dtype == POSENC_DTYPE_BF16 ? posenc_f32_to_bf16(f) : posenc_f32_to_f16(f);
            }
            if (cases[ci].dtype == POSENC_DTYPE_BF16) ((uint16_t *)x0)[5] = 0x7fc1; /* NaN payload survives */
            if (cases[ci].dtype == POSENC_DTYPE_F16) { /* NaNs (quiet, signalling, negative), infinities, the
                                                         * largest finite (rotation may overflow), subnormals, zeros */
                static const uint16_t special[] = {0x7e01, 0x7c01, 0xfd55, 0x7c00, 0xfc00, 0x7bff, 0xfbff,
                                                   0x0001, 0x83ff, 0x0000, 0x8000, 0x0400};
                for (size_t i = 0; i < 12 * 40; i++) ((uint16_t *)x0)[(i * 7919) % count] = special[i % 12];
            }
            posenc_error err = {0}, ref_err = {0};
            memcpy(ref, x0, count * esize);
            posenc_exec e = {1, POSENC_PATH_SCALAR, NULL, NULL};
            /* the bf16 NaN payload and the f16 specials sit in rotated channels: reported, rotated all the same */
            posenc_status want = cases[ci].dtype == POSENC_DTYPE_F32 ? POSENC_OK : POSENC_ERR_NONFINITE;
            posenc_status st_ref = posenc_rope_apply_exec(&p, 0, (posenc_layout)layout, &v, pos, cases[ci].inverse,
                                                          cases[ci].dtype, ref, count, &e, &ref_err);
            if (st_ref != want) {
                CHECK(0, "rope scalar run: %s (want %s)", ref_err.message, posenc_strerror(want));
                continue;
            }
            size_t shape[2] = {v.tokens, v.row_stride};
            for (int pi = 0; pi < 3; pi++) {
                if (!posenc_kernel_path_supported(paths[pi])) continue;
                for (int threads = 1; threads <= 3; threads += 2) {
                    memcpy(got, x0, count * esize);
                    posenc_exec ex = {threads, paths[pi], NULL, NULL};
                    posenc_status st = posenc_rope_apply_exec(&p, 0, (posenc_layout)layout, &v, pos, cases[ci].inverse,
                                                              cases[ci].dtype, got, count, &ex, &err);
                    char label[200];
                    snprintf(label, sizeof label, "rope D=%d R=%d T=%zu H=%zu %s %s%s%s: %s x %d == scalar x 1",
                             cases[ci].head_dim, cases[ci].rotary, v.tokens, v.heads,
                             posenc_dtype_name(cases[ci].dtype), layout ? "half" : "interleaved",
                             cases[ci].explicit_positions == 1   ? " ids"
                             : cases[ci].explicit_positions == 2 ? " runs"
                                                                 : "",
                             cases[ci].inverse ? " inverse" : "", posenc_kernel_path_name(paths[pi]), threads);
                    CHECK(st == st_ref && (st == POSENC_OK || strcmp(err.message, ref_err.message) == 0),
                          "%s: status %s (scalar %s), same message: \"%s\"", label, posenc_strerror(st),
                          posenc_strerror(st_ref), st == POSENC_OK ? "" : err.message);
                    check_same(label, got, ref, count, check_kind_of(cases[ci].dtype), shape, 2);
                }
            }
            free(pos);
            free(x0);
            free(ref);
            free(got);
        }
}

/* RoPE on q with a single channel pair set: out = (cos, sin) * |x| of the angle;
 * compare with long double cosl/sinl per token (cos/sin must be within 1 ULP,
 * the product adds one rounding: 2 ULP of the f32 result, |x| = 1 exact). */
static void test_rope_precision(void) {
    /* starts 0 and 1e6: one run; -1: packed runs of 300 (the recurrence restarts
     * at each); -2: runs of 3 (per-token evaluation) */
    const int64_t starts[] = {0, 1000000, -1, -2};
    for (int si = 0; si < 4; si++)
        for (int pi = 0; pi < 3; pi++) {
            if (!posenc_kernel_path_supported(paths[pi])) continue;
            enum { T = 2100, D = 128 };
            posenc_rope_params p;
            posenc_rope_params_default(&p, D);
            float *x = malloc(sizeof *x * T * D);
            for (size_t i = 0; i < (size_t)T * D; i++) x[i] = (i % 2 == 0) ? 1.0f : 0.0f; /* (a, b) = (1, 0) */
            int64_t *pos = malloc(sizeof *pos * T);
            for (int t = 0; t < T; t++)
                pos[t] = starts[si] >= 0 ? starts[si] + t : starts[si] == -1 ? 5000 * (t / 300) + t % 300 + 7
                                                                              : 1000 * (t / 3) + t % 3;
            posenc_rope_view v = posenc_rope_view_contiguous(T, 1, D);
            posenc_exec e = {2, paths[pi], NULL, NULL};
            posenc_error err = {0};
            posenc_rope_apply_exec(&p, 0, POSENC_LAYOUT_INTERLEAVED, &v, pos, 0, POSENC_DTYPE_F32, x, (size_t)T * D, &e, &err);
            float *want = malloc(sizeof *want * T * D);
            for (int t = 0; t < T; t++)
                for (int k = 0; k < 64; k++) {
                    /* the exact formula's frequency (base^(-2k/R) in long double, as the
                     * library keeps it), not inv[k] rounded to double: at p = 1e6 that
                     * rounding alone moves values near a zero of cos/sin by several ULP */
                    long double angle = (long double)pos[t] * expl(-(2.0L * k / D) * logl(10000.0L));
                    /* a' = 1*c - 0*s = c, b' = 0*c + 1*s = s: exact products, so = f32 cos/sin */
                    want[t * D + 2 * k] = (float)cosl(angle);
                    want[t * D + 2 * k + 1] = (float)sinl(angle);
                }
            char label[160];
            snprintf(label, sizeof label, "rope precise cos/sin via rotation, %s, positions %s, vs cosl/sinl rounded "
                     "once (tol 1, the precise-mode contract)", posenc_kernel_path_name(paths[pi]),
                     starts[si] == 0 ? "0.." : starts[si] > 0 ? "1e6.." : starts[si] == -1 ? "in runs of 300" : "in runs of 3");
            size_t shape[2] = {T, D};
            check_ulp_within(label, x, want, (size_t)T * D, shape, 2, 1);
            free(want);
            free(x);
            free(pos);
        }
}

/* Value i of a buffer of f32 / f16 / bf16 bits, as a float, and the reverse. */
static float value_at(const void *x, posenc_dtype dtype, size_t i) {
    if (dtype == POSENC_DTYPE_F32) return ((const float *)x)[i];
    uint16_t u = ((const uint16_t *)x)[i];
    return dtype == POSENC_DTYPE_F16 ? posenc_f16_to_f32(u) : posenc_bf16_to_f32(u);
}
static void put_value(void *x, posenc_dtype dtype, size_t i, float f) {
    if (dtype == POSENC_DTYPE_F32) ((float *)x)[i] = f;
    else ((uint16_t *)x)[i] = dtype == POSENC_DTYPE_F16 ? posenc_f32_to_f16(f) : posenc_f32_to_bf16(f);
}

/* Non-finite results (issue 13): f32/f16/bf16 x both layouts x every path x 1
 * and 2 threads (the trace proves the split), [1100 tokens][4 heads][64],
 * positions 5.., YaRN with attention factor 2. Scenarios: none planted (must
 * succeed); a pair big enough that x 2 overflows the dtype at token 1050 (the
 * second thread's tokens); the same plus one at token 300 (the first thread's:
 * it must win); a NaN input at token 700; a value at token 800 large enough to
 * be looked at but not to overflow. The first bad cell expected is found
 * by scanning the scalar x 1 output independently; every run must return the
 * same status and message and the same bits. */
static void test_rope_nonfinite(void) {
    enum { T = 1100, H = 4, D = 64, P = D / 2 };
    const posenc_dtype dtypes[3] = {POSENC_DTYPE_F32, POSENC_DTYPE_F16, POSENC_DTYPE_BF16};
    const char *scenario_names[5] = {"finite", "overflow at token 1050", "overflow at 300 and 1050", "NaN input at 700",
                                     "large but finite at 800"};
    const size_t count = (size_t)T * H * D;
    int64_t *pos = malloc(sizeof *pos * T);
    for (int t = 0; t < T; t++) pos[t] = t + 5;
    posenc_rope_params p;
    posenc_rope_params_default(&p, D);
    p.scaling = POSENC_ROPE_YARN;
    p.factor = 4.0;
    p.original_max_position = 4096;
    p.attention_factor = 2.0;
    posenc_rope_view v = posenc_rope_view_contiguous(T, H, D);
    for (int di = 0; di < 3; di++)
        for (int layout = 0; layout < 2; layout++)
            for (int sc = 0; sc < 5; sc++) {
                posenc_dtype dt = dtypes[di];
                size_t esize = posenc_dtype_size(dt);
                void *x0 = malloc(count * esize), *ref = malloc(count * esize), *got = malloc(count * esize);
                for (size_t i = 0; i < count; i++) put_value(x0, dt, i, rnd() * 3);
                /* x 2 overflows: f16 2 * 40000 > 65504; f32 and bf16 2 * 3e38 > 3.4e38 */
                float big = dt == POSENC_DTYPE_F16 ? 40000.0f : 3e38f;
                size_t partner17 = layout == POSENC_LAYOUT_HALF ? 17 + P : 16; /* channel 17's pair */
                if (sc == 1 || sc == 2)
                    for (int j = 0; j < 2; j++) put_value(x0, dt, (1050 * H + 2) * D + (j ? 17 : partner17), big);
                if (sc == 2)
                    for (int j = 0; j < 2; j++) put_value(x0, dt, (300 * H + 3) * D + (j ? 5 : 5 ^ 1), -big);
                if (sc == 3) put_value(x0, dt, (700 * H + 1) * D + 40, NAN);
                /* (big / 2.2, 0) x 2 stays below the limit but above the inputs the kernels
                 * may skip looking at: the results are checked and pass */
                if (sc == 4) put_value(x0, dt, (800 * H + 1) * D + 6, big / 2.2f);
                memcpy(ref, x0, count * esize);
                posenc_error ref_err = {0}, err = {0};
                posenc_exec e1 = {1, POSENC_PATH_SCALAR, NULL, NULL};
                posenc_status st_ref =
                    posenc_rope_apply_exec(&p, 0, (posenc_layout)layout, &v, pos, 0, dt, ref, count, &e1, &ref_err);
                char what[160];
                snprintf(what, sizeof what, "non-finite %s %s, %s", posenc_dtype_name(dt),
                         layout ? "half" : "interleaved", scenario_names[sc]);
                /* the first inf/NaN of the scalar output, in (token, head, channel) order */
                size_t bad = count;
                for (size_t i = 0; i < count && bad == count; i++)
                    if (!isfinite(value_at(ref, dt, i))) bad = i;
                if (sc == 0 || sc == 4) {
                    CHECK(st_ref == POSENC_OK && bad == count, "%s: scalar x 1 succeeds, all finite (%s)", what,
                          st_ref == POSENC_OK ? "ok" : ref_err.message);
                } else {
                    size_t t = bad / (H * D), h = bad / D % H, ch = bad % D;
                    float val = bad < count ? value_at(ref, dt, bad) : 0.0f;
                    char head[160];
                    snprintf(head, sizeof head, "rotated value at token %zu (position %zu), head %zu, channel %zu is %s:",
                             t, t + 5, h, ch, isnan(val) ? "nan" : val > 0 ? "inf" : "-inf");
                    size_t want_t = sc == 1 ? 1050 : sc == 2 ? 300 : 700;
                    const char *cause = sc == 3 ? (dt == POSENC_DTYPE_BF16 ? "holds inf or NaN, or values above"
                                                                             : "already holds inf or NaN")
                                        : dt == POSENC_DTYPE_BF16 ? "overflow"
                                                                  : dt == POSENC_DTYPE_F16 ? "overflows f16 (largest finite 65504)"
                                                                                           : "overflows f32";
                    CHECK(st_ref == POSENC_ERR_NONFINITE && t == want_t && strncmp(ref_err.message, head, strlen(head)) == 0 &&
                              strstr(ref_err.message, cause),
                          "%s: scalar x 1 names the first bad cell [%zu, %zu, %zu] (want token %zu) and '%s': \"%s\"",
                          what, t, h, ch, want_t, cause, ref_err.message);
                }
                size_t shape[3] = {T, H, D};
                for (int pi = 0; pi < 3; pi++) {
                    if (!posenc_kernel_path_supported(paths[pi])) continue;
                    for (int threads = 1; threads <= 2; threads++) {
                        memcpy(got, x0, count * esize);
                        posenc_exec_trace trace;
                        posenc_exec ex = {threads, paths[pi], NULL, &trace};
                        posenc_status st =
                            posenc_rope_apply_exec(&p, 0, (posenc_layout)layout, &v, pos, 0, dt, got, count, &ex, &err);
                        char label[200];
                        snprintf(label, sizeof label, "%s: %s x %d == scalar x 1", what,
                                 posenc_kernel_path_name(paths[pi]), threads);
                        CHECK(st == st_ref && trace.chunks == threads &&
                                  (st == POSENC_OK || strcmp(err.message, ref_err.message) == 0),
                              "%s: status %s, %d chunks, same message", label, posenc_strerror(st), (int)trace.chunks);
                        check_same(label, got, ref, count, check_kind_of(dt), shape, 3);
                    }
                }
                free(x0), free(ref), free(got);
            }
    free(pos);
}

static void test_bias_paths(void) {
    enum { H = 5 };
    float slopes[H] = {0.5f, 0.25f, 0.0625f, 0.00390625f, 0.7071068f};
    const struct { size_t lq, lk; int64_t q0, k0; } shapes[] = {{300, 300, 0, 0}, {7, 333, 326, 0}, {130, 77, 5, 900}};
    posenc_t5_params tp;
    posenc_t5_params_default(&tp);
    float table[32 * H];
    for (int i = 0; i < 32 * H; i++) table[i] = rnd();
    for (int si = 0; si < 3; si++)
        for (int kind = 0; kind < 3; kind++) { /* ALiBi causal, ALiBi symmetric, T5 */
            size_t lq = shapes[si].lq, lk = shapes[si].lk, n = H * lq * lk;
            posenc_positions q = posenc_positions_range(shapes[si].q0, lq), k = posenc_positions_range(shapes[si].k0, lk);
            float *want = malloc(n * sizeof *want), *got = malloc(n * sizeof *got);
            for (int h = 0; h < H; h++) /* the definitions, element by element */
                for (size_t a = 0; a < lq; a++)
                    for (size_t b = 0; b < lk; b++) {
                        int64_t d = (shapes[si].k0 + (int64_t)b) - (shapes[si].q0 + (int64_t)a);
                        float v;
                        if (kind == 0) v = (float)((long double)slopes[h] * d);
                        else if (kind == 1) v = (float)(-(long double)slopes[h] * fabsl((long double)d));
                        else {
                            int32_t bucket = 0;
                            posenc_t5_bucket(&tp, d, &bucket, NULL);
                            v = table[bucket * H + h];
                        }
                        want[((size_t)h * lq + a) * lk + b] = v;
                    }
            for (int pi = 0; pi < 3; pi++) {
                if (!posenc_kernel_path_supported(paths[pi])) continue;
                for (int threads = 1; threads <= 3; threads += 2) {
                    memset(got, 0xff, n * sizeof *got);
                    posenc_exec e = {threads, paths[pi], NULL, NULL};
                    posenc_error err = {0};
                    posenc_status st = kind < 2 ? posenc_alibi_bias_f32_exec(slopes, H, (posenc_alibi_form)kind, &q, &k,
                                                                             got, n, &e, &err)
                                                : posenc_t5_bias_f32_exec(&tp, table, H, &q, &k, got, n, &e, &err);
                    char label[160];
                    snprintf(label, sizeof label, "%s [%d x %zu x %zu] q0=%lld k0=%lld: %s x %d == definition",
                             kind == 0 ? "alibi causal" : kind == 1 ? "alibi symmetric" : "t5", H, lq, lk,
                             (long long)shapes[si].q0, (long long)shapes[si].k0, posenc_kernel_path_name(paths[pi]),
                             threads);
                    size_t shape[3] = {H, lq, lk};
                    CHECK(st == POSENC_OK, "%s: %s", label, st == POSENC_OK ? "ok" : err.message);
                    check_same(label, got, want, n, CHECK_F32, shape, 3);
                }
            }
            free(want);
            free(got);
        }
}

/* RoPE cos/sin tables over a range of positions (the anchored recurrence):
 * - f32 = the cos/sin that apply uses (apply on (1, 0) pairs returns c and s
 *   exactly), on every path x {1, 2} threads, with YaRN's attention factor;
 * - f32 within 1 ULP of the per-element path (the same positions as ids);
 * - f64 within 2^-60 + |p w| 2^-63 of the per-element long double path
 *   (that path's own angle rounding is |p w| 2^-64; the recurrence's ~1e-25). */
static void test_rope_tables(void) {
    enum { T = 1500, D = 64, P = D / 2 };
    const int64_t start = 70000;
    posenc_rope_params p;
    posenc_rope_params_default(&p, D);
    p.scaling = POSENC_ROPE_YARN;
    p.factor = 4.0;
    p.original_max_position = 4096;
    posenc_positions range = posenc_positions_range(start, T);
    int64_t *ids = malloc(sizeof *ids * T);
    for (int t = 0; t < T; t++) ids[t] = start + t;
    posenc_positions as_ids = posenc_positions_ids(ids, T);
    float *c = malloc(sizeof(float) * T * P), *sn = malloc(sizeof(float) * T * P);
    float *c_ids = malloc(sizeof(float) * T * P), *s_ids = malloc(sizeof(float) * T * P);
    double *cd = malloc(sizeof(double) * T * P), *sd = malloc(sizeof(double) * T * P);
    double *cd_ids = malloc(sizeof(double) * T * P), *sd_ids = malloc(sizeof(double) * T * P);
    posenc_error err = {0};
    CHECK(posenc_rope_table_f32(&p, 0, &as_ids, 1, c_ids, s_ids, T * P, &err) == POSENC_OK &&
          posenc_rope_table_f64(&p, 0, &as_ids, 1, cd_ids, sd_ids, T * P, &err) == POSENC_OK,
          "per-element tables (ids) made: %s", err.message);
    for (int pi = 0; pi < 3; pi++)
        for (int threads = 1; threads <= 2; threads++) {
            if (!posenc_kernel_path_supported(paths[pi])) continue;
            setenv("POSENC_KERNEL_PATH", posenc_kernel_path_name(paths[pi]), 1);
            char n[8];
            snprintf(n, sizeof n, "%d", threads);
            setenv("POSENC_THREADS", n, 1);
            posenc_status st = posenc_rope_table_f32(&p, 0, &range, 1, c, sn, T * P, &err);
            posenc_status st64 = posenc_rope_table_f64(&p, 0, &range, 1, cd, sd, T * P, &err);
            float *x = malloc(sizeof *x * T * D);
            for (size_t i = 0; i < (size_t)T * D; i++) x[i] = (i % 2 == 0) ? 1.0f : 0.0f;
            posenc_rope_view v = posenc_rope_view_contiguous(T, 1, D);
            posenc_exec e = {threads, paths[pi], NULL, NULL};
            posenc_status sa = posenc_rope_apply_exec(&p, 0, POSENC_LAYOUT_INTERLEAVED, &v, ids, 0, POSENC_DTYPE_F32, x,
                                                      (size_t)T * D, &e, &err);
            float *xc = malloc(sizeof(float) * T * P), *xs = malloc(sizeof(float) * T * P);
            double *tol = malloc(sizeof(double) * T * P);
            for (size_t i = 0; i < (size_t)T * P; i++) {
                xc[i] = x[2 * i], xs[i] = x[2 * i + 1]; /* apply on (1, 0) pairs returns (c, s) exactly */
                double angle = (double)(start + (int64_t)(i / P)) * 1.0; /* |p w| <= p: w <= 1 */
                tol[i] = 0x1p-60 + angle * 0x1p-63;
            }
            const char *path = posenc_kernel_path_name(paths[pi]);
            char label[160];
            size_t shape[2] = {T, P};
            CHECK(st == POSENC_OK && sa == POSENC_OK && st64 == POSENC_OK, "%s x %d: tables and apply succeed: %s",
                  path, threads, err.message);
            snprintf(label, sizeof label, "%s x %d: f32 RoPE cos table == cos used by apply", path, threads);
            check_same(label, xc, c, (size_t)T * P, CHECK_F32, shape, 2);
            snprintf(label, sizeof label, "%s x %d: f32 RoPE sin table == sin used by apply", path, threads);
            check_same(label, xs, sn, (size_t)T * P, CHECK_F32, shape, 2);
            snprintf(label, sizeof label, "%s x %d: f32 cos table (range) vs per-element (ids)", path, threads);
            check_ulp_within(label, c, c_ids, (size_t)T * P, shape, 2, 1);
            snprintf(label, sizeof label, "%s x %d: f32 sin table (range) vs per-element (ids)", path, threads);
            check_ulp_within(label, sn, s_ids, (size_t)T * P, shape, 2, 1);
            snprintf(label, sizeof label, "%s x %d: f64 cos table (range) vs per-element (ids), tol 2^-60 + p 2^-63",
                     path, threads);
            check_within(label, cd, cd_ids, tol, (size_t)T * P, shape, 2);
            snprintf(label, sizeof label, "%s x %d: f64 sin table (range) vs per-element (ids), tol 2^-60 + p 2^-63",
                     path, threads);
            check_within(label, sd, sd_ids, tol, (size_t)T * P, shape, 2);
            free(xc), free(xs), free(tol);
            free(x);
        }
    unsetenv("POSENC_KERNEL_PATH");
    unsetenv("POSENC_THREADS");
    free(ids);
    free(c);
    free(sn);
    free(c_ids);
    free(s_ids);
    free(cd);
    free(sd);
    free(cd_ids);
    free(sd_ids);
}

/* Multi-axis RoPE through the threaded vector driver: every path x {1, 3}
 * threads == scalar x 1, bit for bit (sections, interleaved and axial kinds,
 * distinct t/h/w positions, forward and inverse, both layouts, 40-pair heads
 * with vector leftovers). */
static void test_mrope_paths(void) {
    enum { T = 700, H = 3, D = 80 };
    const posenc_mrope_sections kinds[3] = {{POSENC_MROPE_SECTIONS, 3, {10, 15, 15, 0}},
                                            {POSENC_MROPE_INTERLEAVED, 3, {14, 13, 13, 0}},
                                            {POSENC_MROPE_AXIAL, 2, {20, 20, 0, 0}}};
    int64_t *pos = malloc(sizeof *pos * 3 * T);
    for (size_t i = 0; i < 3 * (size_t)T; i++) pos[i] = (int64_t)((i * 37) % 1009);
    size_t count = (size_t)T * H * D;
    float *x0 = malloc(sizeof(float) * count), *ref = malloc(sizeof(float) * count), *got = malloc(sizeof(float) * count);
    for (size_t i = 0; i < count; i++) x0[i] = rnd() * 2;
    posenc_rope_view v = posenc_rope_view_contiguous(T, H, D);
    posenc_rope_params p;
    posenc_rope_params_default(&p, D);
    posenc_error err = {0};
    for (int kind = 0; kind < 3; kind++)
        for (int layout = 0; layout < 2; layout++)
            for (int inverse = 0; inverse < 2; inverse++) {
                setenv("POSENC_KERNEL_PATH", "scalar", 1);
                setenv("POSENC_THREADS", "1", 1);
                memcpy(ref, x0, sizeof(float) * count);
                posenc_status st = posenc_mrope_apply_f32(&p, &kinds[kind], (posenc_layout)layout, &v, pos, inverse,
                                                          ref, count, &err);
                for (int pi = 0; pi < 3; pi++)
                    for (int threads = 1; threads <= 3; threads += 2) {
                        if (!posenc_kernel_path_supported(paths[pi])) continue;
                        setenv("POSENC_KERNEL_PATH", posenc_kernel_path_name(paths[pi]), 1);
                        setenv("POSENC_THREADS", threads == 1 ? "1" : "3", 1);
                        memcpy(got, x0, sizeof(float) * count);
                        posenc_status st2 = posenc_mrope_apply_f32(&p, &kinds[kind], (posenc_layout)layout, &v, pos,
                                                                   inverse, got, count, &err);
                        char label[160];
                        snprintf(label, sizeof label, "M-RoPE kind %d %s%s: %s x %d == scalar x 1", kind,
                                 layout ? "half" : "interleaved", inverse ? " inverse" : "",
                                 posenc_kernel_path_name(paths[pi]), threads);
                        size_t shape[3] = {T, H, D};
                        CHECK(st == POSENC_OK && st2 == POSENC_OK, "%s: both succeed", label);
                        check_same(label, got, ref, count, CHECK_F32, shape, 3);
                    }
            }
    unsetenv("POSENC_KERNEL_PATH");
    unsetenv("POSENC_THREADS");
    free(pos);
    free(x0);
    free(ref);
    free(got);
}

int main(void) {
    test_rope_paths();
    test_rope_nonfinite();
    test_rope_precision();
    test_rope_tables();
    test_mrope_paths();
    test_bias_paths();
    return check_finish();
}
