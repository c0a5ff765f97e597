/* test_kernels.c: execution options and the fast sinusoid path.
 * - exec options: names, parsing, resolution, errors (bad env, bad values);
 * - every kernel path x thread count gives the same bits as scalar on 1 thread
 *   (tables large enough to use several blocks, threads and streaming stores);
 *   (3 threads on a posenc_threadpool included);
 * - the fast path's f32 values are within 1 ULP of sinl/cosl evaluated per
 *   element in long double and rounded once (the precise mode's contract);
 * - f64 values never leave [-1, 1] (the clamp after the double run). */
#define _GNU_SOURCE /* setenv, unsetenv */
#include "check.h"

#include <stdlib.h>

static const posenc_kernel_path paths[] = {POSENC_PATH_SCALAR, POSENC_PATH_AVX2, POSENC_PATH_AVX512};

static void test_exec_options(void) {
    posenc_exec e, r;
    posenc_error err = {0};
    posenc_exec_default(&e);
    CHECK(e.threads == 0 && e.path == POSENC_PATH_AUTO, "defaults: threads 0 (auto), path auto");
    CHECK(posenc_cpu_count() >= 1, "cpu count %d >= 1", (int)posenc_cpu_count());
    unsetenv("POSENC_KERNEL_PATH");
    unsetenv("POSENC_THREADS");
    CHECK(posenc_exec_resolve(NULL, &r, &err) == POSENC_OK && r.threads == posenc_cpu_count() &&
              r.path != POSENC_PATH_AUTO && posenc_kernel_path_supported(r.path),
          "NULL exec resolves to %d threads on %s", (int)r.threads, posenc_kernel_path_name(r.path));
    for (int i = 0; i < 3; i++) {
        posenc_kernel_path p;
        CHECK(posenc_kernel_path_parse(posenc_kernel_path_name(paths[i]), &p, &err) == POSENC_OK && p == paths[i],
              "path name round trip: %s (supported here: %d)", posenc_kernel_path_name(paths[i]),
              posenc_kernel_path_supported(paths[i]));
    }
    posenc_kernel_path p;
    CHECK(posenc_kernel_path_parse("sse9", &p, &err) == POSENC_ERR_INVALID_ARGUMENT && strstr(err.message, "'sse9'"),
          "[X2] unknown path name rejected: \"%s\"", err.message);
    e.threads = -1;
    CHECK(posenc_exec_resolve(&e, &r, &err) == POSENC_ERR_INVALID_ARGUMENT && strstr(err.message, "got -1"),
          "[X1] threads -1 rejected: \"%s\"", err.message);
    e.threads = 0;
    e.path = (posenc_kernel_path)9;
    CHECK(posenc_exec_resolve(&e, &r, &err) == POSENC_ERR_INVALID_ARGUMENT && strstr(err.message, "9"),
          "[X2] path 9 rejected: \"%s\"", err.message);
    setenv("POSENC_KERNEL_PATH", "fast", 1);
    CHECK(posenc_exec_resolve(NULL, &r, &err) == POSENC_ERR_INVALID_ARGUMENT && strstr(err.message, "'fast'"),
          "[X3] POSENC_KERNEL_PATH=fast rejected: \"%s\"", err.message);
    setenv("POSENC_KERNEL_PATH", "scalar", 1);
    setenv("POSENC_THREADS", "3", 1);
    CHECK(posenc_exec_resolve(NULL, &r, &err) == POSENC_OK && r.path == POSENC_PATH_SCALAR && r.threads == 3,
          "env scalar/3 honoured: %s/%d", posenc_kernel_path_name(r.path), (int)r.threads);
    e.path = POSENC_PATH_AVX2;
    e.threads = 1;
    posenc_status st = posenc_exec_resolve(&e, &r, &err);
    CHECK(posenc_kernel_path_supported(POSENC_PATH_AVX2) ? st == POSENC_OK && r.path == POSENC_PATH_AVX2 && r.threads == 1
                                                         : st == POSENC_ERR_UNSUPPORTED,
          "[X5] explicit exec beats the environment (or reports unsupported): %s", posenc_strerror(st));
    setenv("POSENC_THREADS", "0", 1);
    CHECK(posenc_exec_resolve(NULL, &r, &err) == POSENC_ERR_INVALID_ARGUMENT && strstr(err.message, "'0'"),
          "[X4] POSENC_THREADS=0 rejected: \"%s\"", err.message);
    unsetenv("POSENC_KERNEL_PATH");
    unsetenv("POSENC_THREADS");
    /* a table call reports a bad environment instead of computing silently */
    setenv("POSENC_KERNEL_PATH", "avx1024", 1);
    posenc_sinusoid_params sp;
    posenc_sinusoid_params_default(&sp, 8);
    posenc_positions pos = posenc_positions_range(0, 2);
    float out[16];
    CHECK(posenc_sinusoid_table_f32(&sp, &pos, out, 16, &err) == POSENC_ERR_INVALID_ARGUMENT,
          "table call with POSENC_KERNEL_PATH=avx1024 fails: \"%s\"", err.message);
    unsetenv("POSENC_KERNEL_PATH");
}

/* One table on one path/thread count; NULL if the path is unsupported. */
static void *table_on_at(const posenc_sinusoid_params *p, const posenc_positions *pos, posenc_dtype dtype,
                         posenc_kernel_path path, int threads, posenc_threadpool *pool, size_t *bytes,
                         size_t misalign) {
    if (!posenc_kernel_path_supported(path)) return NULL;
    size_t count = pos->count * (size_t)p->dim;
    *bytes = count * posenc_dtype_size(dtype);
    /* 64-byte aligned so large tables take the streaming-store branch; misaligned
     * by `misalign` bytes to take the staged copy instead (result moved back) */
    char *mem = aligned_alloc(64, (*bytes + misalign + 63) / 64 * 64);
    void *out = mem + misalign;
    memset(out, 0xff, *bytes);
    posenc_exec e = {threads, path, pool, NULL};
    posenc_error err = {0};
    posenc_status st = posenc_sinusoid_table_exec(p, pos, dtype, out, count, &e, &err);
    if (misalign) memmove(mem, out, *bytes);
    out = mem;
    if (st != POSENC_OK) {
        printf("FAIL: table on %s/%d: %s\n", posenc_kernel_path_name(path), threads, err.message);
        exit(EXIT_FAILURE);
    }
    return out;
}

static void *table_on(const posenc_sinusoid_params *p, const posenc_positions *pos, posenc_dtype dtype,
                      posenc_kernel_path path, int threads, size_t *bytes) {
    return table_on_at(p, pos, dtype, path, threads, NULL, bytes, 0);
}

static void test_identical_bits(posenc_threadpool *pool) {
    const struct {
        int dim;
        size_t len;
        int64_t start;
        posenc_layout layout;
        posenc_dtype dtype;
        posenc_odd_policy odd;
        size_t misalign;
    } cases[] = {
        {1024, 8192, 0, POSENC_LAYOUT_INTERLEAVED, POSENC_DTYPE_F32, POSENC_ODD_ERROR, 0}, /* 32 MiB: streams */
        {1024, 4100, 5, POSENC_LAYOUT_INTERLEAVED, POSENC_DTYPE_F32, POSENC_ODD_ERROR, 16}, /* 16 MiB, staged */
        {2048, 2100, 0, POSENC_LAYOUT_HALF, POSENC_DTYPE_F64, POSENC_ODD_ERROR, 8},
        {1024, 8192, 0, POSENC_LAYOUT_HALF, POSENC_DTYPE_F32, POSENC_ODD_ERROR, 0},
        /* 544 pairs: eight groups of 64 pairs then one of 32 down the rows (streams) */
        {1088, 4000, 3, POSENC_LAYOUT_INTERLEAVED, POSENC_DTYPE_F32, POSENC_ODD_ERROR, 0},
        {1088, 4000, 0, POSENC_LAYOUT_HALF, POSENC_DTYPE_F32, POSENC_ODD_ERROR, 0},
        {512, 5000, 12345, POSENC_LAYOUT_INTERLEAVED, POSENC_DTYPE_F64, POSENC_ODD_ERROR, 0}, /* 19.5 MiB f64 */
        {100, 4500, 7, POSENC_LAYOUT_HALF, POSENC_DTYPE_F32, POSENC_ODD_ERROR, 0},           /* 50 pairs: tails */
        {66, 3000, 0, POSENC_LAYOUT_INTERLEAVED, POSENC_DTYPE_F64, POSENC_ODD_ERROR, 0},
        {65, 4100, 3, POSENC_LAYOUT_HALF, POSENC_DTYPE_F32, POSENC_ODD_PAD, 0},             /* generic path */
        {64, 4100, 0, POSENC_LAYOUT_INTERLEAVED, POSENC_DTYPE_BF16, POSENC_ODD_ERROR, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        posenc_sinusoid_params p;
        posenc_sinusoid_params_default(&p, cases[c].dim);
        p.layout = cases[c].layout;
        p.odd = cases[c].odd;
        posenc_positions pos = posenc_positions_range(cases[c].start, cases[c].len);
        size_t bytes = 0, b2 = 0;
        void *ref = table_on(&p, &pos, cases[c].dtype, POSENC_PATH_SCALAR, 1, &bytes);
        for (int i = 0; i < 3; i++)
            for (int threads = 1; threads <= 4; threads++) { /* 4: 3 threads on the pool */
                void *got = table_on_at(&p, &pos, cases[c].dtype, paths[i], threads == 4 ? 3 : threads,
                                        threads == 4 ? pool : NULL, &b2, cases[c].misalign);
                if (!got) {
                    printf("  skip %s (not supported on this CPU)\n", posenc_kernel_path_name(paths[i]));
                    break;
                }
                char label[200];
                snprintf(label, sizeof label, "d=%d len=%zu start=%lld%s %s %s: %s x %d threads%s == scalar x 1",
                         cases[c].dim, cases[c].len, (long long)cases[c].start,
                         cases[c].misalign ? " (output misaligned)" : "",
                         cases[c].layout == POSENC_LAYOUT_HALF ? "half" : "interleaved",
                         posenc_dtype_name(cases[c].dtype), posenc_kernel_path_name(paths[i]),
                         threads == 4 ? 3 : threads, threads == 4 ? " on a pool" : "");
                size_t cols = bytes / posenc_dtype_size(cases[c].dtype) / cases[c].len, shape[2] = {cases[c].len, cols};
                check_same(label, got, ref, bytes / posenc_dtype_size(cases[c].dtype), check_kind_of(cases[c].dtype),
                           shape, 2);
                free(got);
            }
        free(ref);
    }
}

/* f32 fast path vs per-element long double evaluation rounded once: <= 1 ULP
 * (the precise mode's contract); worst case printed. Rows sampled across
 * blocks and anchors, at small and at large positions. */
static void test_precision(void) {
    const int64_t starts[] = {0, 1000000, (1 << 24) - 9000};
    for (int i = 0; i < 3; i++)
        for (int pi = 0; pi < 3; pi++) {
            posenc_sinusoid_params p;
            posenc_sinusoid_params_default(&p, 1024);
            posenc_positions pos = posenc_positions_range(starts[i], 9000);
            size_t bytes;
            float *t = table_on(&p, &pos, POSENC_DTYPE_F32, paths[pi], 2, &bytes);
            if (!t) continue;
            double w[512];
            posenc_sinusoid_frequencies_f64(&p, w, 512, NULL);
            long double wl[512];
            for (int k = 0; k < 512; k++) /* same long double frequencies as the library */
                wl[k] = expl(-((long double)k * 2 / 1024) * logl(10000.0L));
            enum { SAMPLED = (9000 + 36) / 37 }; /* rows 0, 37, 74, ...: across blocks and anchors */
            float *got = malloc(sizeof(float) * SAMPLED * 1024), *want = malloc(sizeof(float) * SAMPLED * 1024);
            if (!got || !want) {
                fprintf(stderr, "out of memory for the precision samples\n");
                exit(1);
            }
            for (size_t r = 0, row = 0; r < 9000; r += 37, row++)
                for (int k = 0; k < 512; k++) {
                    long double angle = (long double)(starts[i] + (int64_t)r) * wl[k];
                    size_t at = row * 1024 + 2 * (size_t)k;
                    want[at] = (float)sinl(angle), want[at + 1] = (float)cosl(angle);
                    got[at] = t[r * 1024 + 2 * (size_t)k], got[at + 1] = t[r * 1024 + 2 * (size_t)k + 1];
                }
            char label[160];
            snprintf(label, sizeof label, "%s start=%lld, every 37th row, vs sinl/cosl rounded once (tol 1: precise-mode "
                     "contract)", posenc_kernel_path_name(paths[pi]), (long long)starts[i]);
            size_t shape[2] = {SAMPLED, 1024};
            check_ulp_within(label, got, want, (size_t)SAMPLED * 1024, shape, 2, 1);
            free(got), free(want);
            free(t);
        }
}

/* |sin|, |cos| <= 1 in f64 tables: the double run between anchors drifts a
 * few ULPs, and before the clamp position 582197 (dim 14, pair 5) came out
 * -1.0000000000000016 (fuzz_table, CI). That row on every path and both
 * layouts (odd dim 15 too: the per-element store), then positions 0..2^20 for
 * every even dim up to 32 on the default path. */
static void test_unit_range(void) {
    const posenc_layout layouts[] = {POSENC_LAYOUT_INTERLEAVED, POSENC_LAYOUT_HALF};
    for (int pi = 0; pi < 3; pi++)
        for (int li = 0; li < 2; li++)
            for (int dim = 14; dim <= 15; dim++) {
                posenc_sinusoid_params p;
                posenc_sinusoid_params_default(&p, dim);
                p.layout = layouts[li];
                p.odd = POSENC_ODD_PAD;
                posenc_positions pos = posenc_positions_range(581632, 4096);
                size_t bytes;
                double *t = table_on(&p, &pos, POSENC_DTYPE_F64, paths[pi], 1, &bytes);
                if (!t) continue;
                size_t sin_ch = li == 0 ? 10 : 5; /* pair 5's sine */
                double v = t[565 * (size_t)dim + sin_ch], worst = 0.0;
                for (size_t i = 0; i < bytes / sizeof(double); i++) worst = fmax(worst, fabs(t[i]));
                CHECK(worst <= 1.0 && v == -1.0, "%s %s dim %d f64: max |value| %.17g <= 1, position 582197 pair 5 sin = %.17g",
                      posenc_kernel_path_name(paths[pi]), li == 0 ? "interleaved" : "half", dim, worst, v);
                free(t);
            }
    for (int dim = 2; dim <= 32; dim += 2) {
        posenc_sinusoid_params p;
        posenc_sinusoid_params_default(&p, dim);
        const size_t len = (size_t)1 << 20;
        posenc_positions pos = posenc_positions_range(0, len);
        double *t = malloc(sizeof(double) * len * (size_t)dim);
        CHECK(t && posenc_sinusoid_table_f64(&p, &pos, t, len * (size_t)dim, NULL) == POSENC_OK, "dim %d table", dim);
        double worst = 0.0;
        for (size_t i = 0; t && i < len * (size_t)dim; i++) worst = fmax(worst, fabs(t[i]));
        CHECK(worst <= 1.0, "dim %d, positions 0..2^20, f64: max |value| %.17g <= 1", dim, worst);
        free(t);
    }
}

int main(void) {
    test_exec_options();
    test_unit_range();
    posenc_threadpool *pool = NULL;
    if (posenc_threadpool_create(3, &pool, NULL) != POSENC_OK) return EXIT_FAILURE;
    test_identical_bits(pool);
    posenc_threadpool_free(pool);
    test_precision();
    return check_finish();
}
