#define _GNU_SOURCE /* setenv, unsetenv */
/* test_kernels_fast.c: the RoPE and bias fast paths.
 * - RoPE apply: every path x thread count gives the same bits as scalar x 1
 *   (f32/bf16/f16, both layouts, head sizes with vector leftovers, strided
 *   views, NaN payloads in bf16, contiguous and explicit positions, inverse);
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

static size_t first_diff(const void *a, const void *b, size_t bytes) {
    for (size_t i = 0; i < bytes; i++)
        if (((const unsigned char *)a)[i] != ((const unsigned char *)b)[i]) return i;
    return bytes;
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
            posenc_error err = {0};
            memcpy(ref, x0, count * esize);
            posenc_exec e = {1, POSENC_PATH_SCALAR, NULL, NULL};
            if (posenc_rope_apply_exec(&p, 0, (posenc_layout)layout, &v, pos, cases[ci].inverse, cases[ci].dtype, ref,
                                       count, &e, &err) != POSENC_OK) {
                CHECK(0, "rope scalar run: %s", err.message);
                continue;
            }
            for (int pi = 0; pi < 3; pi++) {
                if (!posenc_kernel_path_supported(paths[pi])) continue;
                for (int threads = 1; threads <= 3; threads += 2) {
                    memcpy(got, x0, count * esize);
                    posenc_exec ex = {threads, paths[pi], NULL, NULL};
                    posenc_status st = posenc_rope_apply_exec(&p, 0, (posenc_layout)layout, &v, pos, cases[ci].inverse,
                                                              cases[ci].dtype, got, count, &ex, &err);
                    size_t d = first_diff(got, ref, count * esize);
                    CHECK(st == POSENC_OK && d == count * esize,
                          "rope D=%d R=%d T=%zu H=%zu %s %s%s%s: %s x %d == scalar x 1 bit for bit (first diff byte %zu of %zu)",
                          cases[ci].head_dim, cases[ci].rotary, v.tokens, v.heads, posenc_dtype_name(cases[ci].dtype),
                          layout ? "half" : "interleaved",
                          cases[ci].explicit_positions == 1 ? " ids" : cases[ci].explicit_positions == 2 ? " runs" : "",
                          cases[ci].inverse ? " inverse" : "", posenc_kernel_path_name(paths[pi]), threads, d,
                          count * esize);
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
            double inv[64];
            posenc_rope_frequencies(&p, 0, inv, 64, NULL, &err);
            int64_t worst = 0;
            for (int t = 0; t < T; t++)
                for (int k = 0; k < 64; k++) {
                    /* the exact formula's frequency (base^(-2k/R) in long double, as the
                     * library keeps it), not inv[k] rounded to double: at p = 1e6 that
                     * rounding alone moves values near a zero of cos/sin by several ULP */
                    long double angle = (long double)pos[t] * expl(-(2.0L * k / D) * logl(10000.0L));
                    /* a' = 1*c - 0*s = c, b' = 0*c + 1*s = s: exact products, so = f32 cos/sin */
                    int64_t u = check_ulp_f32(x[t * D + 2 * k], (float)cosl(angle));
                    int64_t w = check_ulp_f32(x[t * D + 2 * k + 1], (float)sinl(angle));
                    if (u > worst) worst = u;
                    if (w > worst) worst = w;
                }
            CHECK(worst <= 1, "rope precise cos/sin via rotation, %s, positions %s: max %lld ULP vs cosl/sinl "
                  "rounded once (tol 1, the precise-mode contract)", posenc_kernel_path_name(paths[pi]),
                  starts[si] == 0 ? "0.." : starts[si] > 0 ? "1e6.." : starts[si] == -1 ? "in runs of 300" : "in runs of 3",
                  (long long)worst);
            free(x);
            free(pos);
        }
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
                    size_t d = first_diff(got, want, n * sizeof *got);
                    CHECK(st == POSENC_OK && d == n * sizeof *got,
                          "%s [%d x %zu x %zu] q0=%lld k0=%lld: %s x %d == definition bit for bit (first diff byte %zu)",
                          kind == 0 ? "alibi causal" : kind == 1 ? "alibi symmetric" : "t5", H, lq, lk,
                          (long long)shapes[si].q0, (long long)shapes[si].k0, posenc_kernel_path_name(paths[pi]),
                          threads, d);
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
            size_t same = 0;
            int64_t worst = 0;
            double worst64 = 0;
            for (size_t i = 0; i < (size_t)T * P; i++) {
                same += memcmp(&x[2 * i], &c[i], 4) == 0 && memcmp(&x[2 * i + 1], &sn[i], 4) == 0;
                int64_t u = check_ulp_f32(c[i], c_ids[i]), w = check_ulp_f32(sn[i], s_ids[i]);
                if (u > worst) worst = u;
                if (w > worst) worst = w;
                double angle = (double)(start + (int64_t)(i / P)) * 1.0; /* |p w| <= p: w <= 1 */
                double tol = 0x1p-60 + angle * 0x1p-63;
                double d1 = fabs(cd[i] - cd_ids[i]) / tol, d2 = fabs(sd[i] - sd_ids[i]) / tol;
                if (d1 > worst64) worst64 = d1;
                if (d2 > worst64) worst64 = d2;
            }
            CHECK(st == POSENC_OK && sa == POSENC_OK && same == (size_t)T * P,
                  "%s x %d: f32 RoPE table == cos/sin used by apply, %zu of %d pairs bit for bit",
                  posenc_kernel_path_name(paths[pi]), threads, same, T * P);
            CHECK(worst <= 1, "%s x %d: f32 table (range) vs per-element (ids): max %lld ULP (tol 1)",
                  posenc_kernel_path_name(paths[pi]), threads, (long long)worst);
            CHECK(st64 == POSENC_OK && worst64 <= 1.0,
                  "%s x %d: f64 table (range) vs per-element (ids): max %.3f x tol (2^-60 + p 2^-63)",
                  posenc_kernel_path_name(paths[pi]), threads, worst64);
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
                        size_t d = first_diff(got, ref, sizeof(float) * count);
                        CHECK(st == POSENC_OK && st2 == POSENC_OK && d == sizeof(float) * count,
                              "M-RoPE kind %d %s%s: %s x %d == scalar x 1 bit for bit (first diff byte %zu)", kind,
                              layout ? "half" : "interleaved", inverse ? " inverse" : "",
                              posenc_kernel_path_name(paths[pi]), threads, d);
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
    test_rope_precision();
    test_rope_tables();
    test_mrope_paths();
    test_bias_paths();
    return check_finish();
}
