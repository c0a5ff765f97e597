/* test_sinusoidal.c: sinusoidal tables against properties, the first article's
 * worked example, and every sinusoidal peer golden (PyTorch tutorial, fairseq,
 * tatp22 1-D); sinusoid plans against the plain table, bit for bit. Precision
 * against mpmath lives in py/test_sinusoid_mpmath.py. Run on every kernel path
 * x thread count (tests/CMakeLists.txt). */
#include "check.h"

static posenc_sinusoid_params params_of(int32_t dim, posenc_freqs freqs, posenc_layout layout,
                                        posenc_odd_policy odd, posenc_mode mode) {
    posenc_sinusoid_params p;
    posenc_sinusoid_params_default(&p, dim);
    p.freqs = freqs;
    p.layout = layout;
    p.odd = odd;
    p.mode = mode;
    return p;
}

/* Our table as doubles (computed in `dtype`, widened). Caller frees. */
static double *table_as_f64(const posenc_sinusoid_params *p, const posenc_positions *pos,
                            posenc_dtype dtype) {
    size_t n = pos->count * (size_t)p->dim;
    void *buf = malloc(n * 8);
    double *out = malloc(n * 8);
    posenc_error err = {0};
    if (posenc_sinusoid_table(p, pos, dtype, buf, n, &err) != POSENC_OK) {
        printf("FAIL: table: %s\n", err.message);
        exit(EXIT_FAILURE);
    }
    for (size_t i = 0; i < n; i++)
        out[i] = dtype == POSENC_DTYPE_F32 ? ((float *)buf)[i] : ((double *)buf)[i];
    free(buf);
    return out;
}

/* max ULP distance between float32 tables (given as doubles), rows in [row0, row1) */
static int64_t max_ulp(const double *a, const double *b, size_t rows, size_t cols, size_t skip_row) {
    int64_t worst = 0;
    for (size_t r = 0; r < rows; r++) {
        if (r == skip_row) continue;
        for (size_t c = 0; c < cols; c++) {
            int64_t u = check_ulp_f32((float)a[r * cols + c], (float)b[r * cols + c]);
            if (u > worst) worst = u;
        }
    }
    return worst;
}

static void test_properties(void) {
    posenc_sinusoid_params p = params_of(4, POSENC_FREQS_VASWANI, POSENC_LAYOUT_INTERLEAVED,
                                         POSENC_ODD_ERROR, POSENC_MODE_PRECISE);
    posenc_positions pos = posenc_positions_range(0, 2);
    double *t = table_as_f64(&p, &pos, POSENC_DTYPE_F64);
    /* first article, worked example: d=4, pos=1 -> [sin 1, cos 1, sin 0.01, cos 0.01] */
    double want_row1[4] = {0.8414709848078965, 0.5403023058681398, 0.009999833334166664,
                           0.9999500004166653};
    double want_row0[4] = {0, 1, 0, 1};
    check_close("article d=4 pos=0 is [0,1,0,1]", t, want_row0, 4, 4, 0, 0);
    check_close("article d=4 pos=1 ~ [0.841, 0.540, 0.010, 1.000]", t + 4, want_row1, 4, 4, 1e-15, 0);
    free(t);

    /* range and distinct rows for a realistic table */
    p.dim = 128;
    pos = posenc_positions_range(0, 2048);
    t = table_as_f64(&p, &pos, POSENC_DTYPE_F64);
    double lo = 0, hi = 0, closest = INFINITY;
    for (size_t i = 0; i < 2048 * 128; i++) {
        if (t[i] < lo) lo = t[i];
        if (t[i] > hi) hi = t[i];
    }
    for (size_t r = 1; r < 2048; r++) { /* consecutive rows are the closest pairs */
        double d2 = 0;
        for (size_t c = 0; c < 128; c++) d2 += (t[r * 128 + c] - t[(r - 1) * 128 + c]) * (t[r * 128 + c] - t[(r - 1) * 128 + c]);
        if (d2 < closest) closest = d2;
    }
    CHECK(lo >= -1.0 && hi <= 1.0, "values in [-1, 1]: min %.17g max %.17g", lo, hi);
    CHECK(sqrt(closest) > 0.5, "consecutive rows distinct: smallest distance %.3f (> 0.5)", sqrt(closest));
    /* recurrence rows (between the anchors every POSENC_RECURRENCE_ANCHOR = 64 rows,
     * src/common/recurrence.h) agree with direct evaluation via explicit ids */
    int64_t ids[5] = {1, 31, 33, 1000, 2047};
    posenc_positions explicit_pos = posenc_positions_ids(ids, 5);
    double *direct = table_as_f64(&p, &explicit_pos, POSENC_DTYPE_F64);
    double from_range[5 * 128];
    for (int i = 0; i < 5; i++) memcpy(from_range + i * 128, t + ids[i] * 128, 128 * sizeof(double));
    /* recurrence drift bound: row 2047 is 63 steps past its anchor, < 64 x 2.3e-16
     * (recurrence.h), plus anchors 1e-15: 1.6e-14 < 2e-14 */
    check_close("range (recurrence) rows == explicit-position rows", from_range, direct, 5 * 128, 128, 2e-14, 0);
    free(direct);
    free(t);

    /* half layout is a fixed permutation of interleaved */
    posenc_sinusoid_params h = p;
    h.layout = POSENC_LAYOUT_HALF;
    pos = posenc_positions_range(3, 5);
    double *a = table_as_f64(&p, &pos, POSENC_DTYPE_F64), *b = table_as_f64(&h, &pos, POSENC_DTYPE_F64);
    double perm[5 * 128];
    for (int r = 0; r < 5; r++)
        for (int k = 0; k < 64; k++) {
            perm[r * 128 + k] = a[r * 128 + 2 * k];
            perm[r * 128 + 64 + k] = a[r * 128 + 2 * k + 1];
        }
    check_close("half layout == interleaved with channels permuted", b, perm, 5 * 128, 128, 0, 0);
    free(a);
    free(b);

    /* real-valued positions: p=2.5 lies between rows, sin(2.5 w) */
    double vals[1] = {2.5};
    posenc_positions vp = posenc_positions_values(vals, 1);
    double *v = table_as_f64(&p, &vp, POSENC_DTYPE_F64);
    double want[2] = {sin(2.5), cos(2.5)};
    check_close("real position 2.5, pair 0 = (sin 2.5, cos 2.5)", v, want, 2, 2, 1e-16, 0);
    free(v);
}

static void test_errors(void) {
    posenc_sinusoid_params p = params_of(65, POSENC_FREQS_VASWANI, POSENC_LAYOUT_INTERLEAVED,
                                         POSENC_ODD_ERROR, POSENC_MODE_PRECISE);
    posenc_positions pos = posenc_positions_range(0, 4);
    float out[4 * 66];
    posenc_error err = {0};
    posenc_status st = posenc_sinusoid_table_f32(&p, &pos, out, 4 * 66, &err);
    CHECK(st == POSENC_ERR_INVALID_ARGUMENT && strstr(err.message, "dim must be even for layout=interleaved, got 65"),
          "odd dim rejected: \"%s\"", err.message);
    p.dim = 64;
    double bad_bases[] = {0.0, -5.0, 1.0, NAN, INFINITY};
    for (int i = 0; i < 5; i++) {
        p.base = bad_bases[i];
        st = posenc_sinusoid_table_f32(&p, &pos, out, 4 * 66, &err);
        CHECK(st == POSENC_ERR_INVALID_ARGUMENT && strstr(err.message, "base"), "base %g rejected: \"%s\"",
              bad_bases[i], err.message);
    }
    p.base = 10000;
    st = posenc_sinusoid_table_f32(&p, &pos, out, 10, &err);
    CHECK(st == POSENC_ERR_BUFFER_TOO_SMALL, "small buffer rejected: \"%s\"", err.message);
    posenc_positions neg = posenc_positions_range(-1, 4);
    st = posenc_sinusoid_table_f32(&p, &neg, out, 4 * 66, &err);
    CHECK(st == POSENC_ERR_INVALID_ARGUMENT && strstr(err.message, "-1"), "negative start rejected: \"%s\"", err.message);
    size_t count;
    st = posenc_table_count(SIZE_MAX / 2, 64, &count, &err);
    CHECK(st == POSENC_ERR_SIZE_OVERFLOW, "len x dim overflow detected: \"%s\"", err.message);
    p.dim = 0;
    st = posenc_sinusoid_table_f32(&p, &pos, out, 4 * 66, &err);
    CHECK(st == POSENC_ERR_INVALID_ARGUMENT && strstr(err.message, "got 0"), "dim 0 rejected: \"%s\"", err.message);
    st = posenc_sinusoid_table_f32(NULL, &pos, out, 4 * 66, &err);
    CHECK(st == POSENC_ERR_NULL_POINTER, "NULL params rejected: \"%s\"", err.message);
}

static void test_goldens(const char *dir) {
    posenc_array shape;
    /* PyTorch tutorial, float32. torch-compat copies its float32 steps and calls the same
     * SLEEF functions torch's vectorized kernels call, so the tables are bit-identical. */
    const struct { const char *name; int d, len; } tut[] = {
        {"tutorial_pe_d64_len50_float32", 64, 50}, {"tutorial_pe_d1024_len64_float32", 1024, 64}};
    for (int i = 0; i < 2; i++) {
        double *g = check_load_golden(dir, tut[i].name, &shape);
        posenc_positions pos = posenc_positions_range(0, (size_t)tut[i].len);
        posenc_sinusoid_params p = params_of(tut[i].d, POSENC_FREQS_VASWANI, POSENC_LAYOUT_INTERLEAVED,
                                             POSENC_ODD_ERROR, POSENC_MODE_TORCH_COMPAT);
        double *ours = table_as_f64(&p, &pos, POSENC_DTYPE_F32);
        int64_t u = max_ulp(ours, g, (size_t)tut[i].len, (size_t)tut[i].d, SIZE_MAX);
        CHECK(u == 0, "%s torch-compat: max %lld ULP (tol 0: same SLEEF functions, same operation order)", tut[i].name, (long long)u);
        free(ours);
        /* precise vs torch: torch's float32 angle p*w is off by <= p*2^-24 rad (p < 64),
         * plus the rounding of w: tolerance 64 * 2^-23 ~ 7.6e-6 absolute. */
        p.mode = POSENC_MODE_PRECISE;
        ours = table_as_f64(&p, &pos, POSENC_DTYPE_F32);
        check_close(tut[i].name, ours, g, shape.count, (size_t)tut[i].d, 7.7e-6, 0);
        free(ours);
        posenc_array_free(&shape);
    }
    /* tutorial in float64: only double rounding in torch's exp/sin, so 1e-13 absolute */
    double *g = check_load_golden(dir, "tutorial_pe_d64_len50_float64", &shape);
    posenc_positions pos50 = posenc_positions_range(0, 50);
    posenc_sinusoid_params p = params_of(64, POSENC_FREQS_VASWANI, POSENC_LAYOUT_INTERLEAVED,
                                         POSENC_ODD_ERROR, POSENC_MODE_PRECISE);
    double *ours = table_as_f64(&p, &pos50, POSENC_DTYPE_F64);
    check_close("tutorial_pe_d64_len50_float64 precise f64", ours, g, shape.count, 64, 1e-13, 0);
    free(ours);
    p.mode = POSENC_MODE_TORCH_COMPAT;
    ours = table_as_f64(&p, &pos50, POSENC_DTYPE_F64);
    check_close("tutorial_pe_d64_len50_float64 torch-compat f64", ours, g, shape.count, 64, 1e-15, 0);
    free(ours);
    posenc_array_free(&shape);

    /* fairseq get_embedding: t2t frequencies, half layout, pad policy for odd d.
     * Row padding_idx=1 is zeroed by fairseq (a lookup concern, not the table's); skipped. */
    const struct { const char *name; int d; size_t skip; } fs[] = {
        {"fairseq_sinusoidal_get_embedding_n50_d64_pad1", 64, 1},
        {"fairseq_sinusoidal_get_embedding_n50_d65_pad1", 65, 1},
        {"fairseq_sinusoidal_get_embedding_n50_d64_padNone", 64, SIZE_MAX}};
    for (int i = 0; i < 3; i++) {
        g = check_load_golden(dir, fs[i].name, &shape);
        p = params_of(fs[i].d, POSENC_FREQS_T2T, POSENC_LAYOUT_HALF, POSENC_ODD_PAD, POSENC_MODE_TORCH_COMPAT);
        ours = table_as_f64(&p, &pos50, POSENC_DTYPE_F32);
        int64_t u = max_ulp(ours, g, 50, (size_t)fs[i].d, fs[i].skip);
        CHECK(u == 0, "%s torch-compat: max %lld ULP (tol 0: same SLEEF functions, same operation order)", fs[i].name, (long long)u);
        if (fs[i].skip == 1) {
            double zero = 0;
            for (int c = 0; c < fs[i].d; c++) zero = fmax(zero, fabs(g[fs[i].d + c]));
            CHECK(zero == 0, "%s: padding row 1 is all zero in the golden (skipped above)", fs[i].name);
        }
        p.mode = POSENC_MODE_PRECISE;
        double *precise = table_as_f64(&p, &pos50, POSENC_DTYPE_F32);
        if (fs[i].skip == 1) memset(precise + fs[i].d, 0, sizeof(double) * (size_t)fs[i].d);
        check_close(fs[i].name, precise, g, shape.count, (size_t)fs[i].d, 7.7e-6, 0);
        free(precise);
        free(ours);
        posenc_array_free(&shape);
    }
    /* fairseq forward on tokens [[5,6,7,8,1,1],[1,1,9,10,11,12]], pad=1: real tokens get
     * rows 2,3,...; pads get the zero row. Built here from explicit position ids. */
    g = check_load_golden(dir, "fairseq_sinusoidal_forward_d64_pad1_tokens2x6", &shape);
    int64_t ids[12] = {2, 3, 4, 5, 1, 1, 1, 1, 2, 3, 4, 5};
    posenc_positions ip = posenc_positions_ids(ids, 12);
    p = params_of(64, POSENC_FREQS_T2T, POSENC_LAYOUT_HALF, POSENC_ODD_ERROR, POSENC_MODE_TORCH_COMPAT);
    ours = table_as_f64(&p, &ip, POSENC_DTYPE_F32);
    for (int r = 0; r < 12; r++)
        if (ids[r] == 1) memset(ours + r * 64, 0, 64 * sizeof(double));
    int64_t u = max_ulp(ours, g, 12, 64, SIZE_MAX);
    CHECK(u == 0, "fairseq forward (explicit ids, pad rows zero): max %lld ULP (tol 0)", (long long)u);
    free(ours);
    posenc_array_free(&shape);

    /* tatp22 1-D: inv_freq = 1/10000^(2i/ch') in float32 with ch' = ch rounded up to even,
     * positions < 10: float32 angle error < 10 * 2^-24 * 2, so 2e-6 absolute. */
    const struct { const char *name; int d; } tp[] = {{"tatp22_pe1d_len10_ch16", 16}, {"tatp22_pe1d_len10_ch15", 15}};
    for (int i = 0; i < 2; i++) {
        g = check_load_golden(dir, tp[i].name, &shape);
        posenc_positions pos10 = posenc_positions_range(0, 10);
        p = params_of(tp[i].d, POSENC_FREQS_VASWANI, POSENC_LAYOUT_INTERLEAVED, POSENC_ODD_ROUND_UP,
                      POSENC_MODE_PRECISE);
        ours = table_as_f64(&p, &pos10, POSENC_DTYPE_F32);
        check_close(tp[i].name, ours, g, shape.count, (size_t)tp[i].d, 2e-6, 0);
        free(ours);
        posenc_array_free(&shape);
    }
}

static void test_baselines(void) {
    posenc_positions pos = posenc_positions_range(0, 5);
    float out[5 * 3];
    posenc_error err = {0};
    CHECK(posenc_baseline_table(POSENC_KIND_INDEX, 3, &pos, POSENC_DTYPE_F32, out, 15, &err) == POSENC_OK &&
              out[0] == 0 && out[3 * 4] == 4 && out[14] == 4,
          "index baseline: row p holds p in every channel");
    CHECK(posenc_baseline_table(POSENC_KIND_NORMALIZED, 3, &pos, POSENC_DTYPE_F32, out, 15, &err) == POSENC_OK &&
              out[0] == 0 && out[3 * 2] == 0.5f && out[14] == 1.0f,
          "normalized baseline: p/(len-1), last row 1");
}

static void test_dtypes(void) {
    posenc_sinusoid_params p = params_of(64, POSENC_FREQS_VASWANI, POSENC_LAYOUT_INTERLEAVED,
                                         POSENC_ODD_ERROR, POSENC_MODE_PRECISE);
    posenc_positions pos = posenc_positions_range(100, 20);
    double *ref = table_as_f64(&p, &pos, POSENC_DTYPE_F64);
    uint16_t half[20 * 64], bf[20 * 64];
    posenc_error err = {0};
    posenc_sinusoid_table(&p, &pos, POSENC_DTYPE_F16, half, 20 * 64, &err);
    posenc_sinusoid_table(&p, &pos, POSENC_DTYPE_BF16, bf, 20 * 64, &err);
    double h[20 * 64], b[20 * 64];
    for (int i = 0; i < 20 * 64; i++) {
        h[i] = posenc_f16_to_f32(half[i]);
        b[i] = posenc_bf16_to_f32(bf[i]);
    }
    /* one rounding: half an ULP relative, 2^-11 for f16 and 2^-8 for bf16 (|v| <= 1) */
    check_close("f16 table = exact rounded once (<= 2^-11 rel)", h, ref, 20 * 64, 64, 3e-8, 4.9e-4);
    check_close("bf16 table = exact rounded once (<= 2^-8 rel)", b, ref, 20 * 64, 64, 0, 3.91e-3);
    free(ref);
}

/* A plan's table has the bits of posenc_sinusoid_table_exec: shapes with
 * partial blocks and chunks, offsets, both layouts, odd dims, every dtype, big
 * enough (>= 16 MiB) for the streaming and staged routes; a plan made on one
 * path gives the same bits used from another; reuse; refusals name why. */
static void test_plans(void) {
    const struct {
        int32_t dim;
        posenc_layout layout;
        posenc_odd_policy odd;
        int64_t start;
        size_t rows;
        posenc_dtype dtype;
        size_t misalign; /* elements: an output not 64-byte aligned takes the staged route */
    } cases[] = {
        {64, POSENC_LAYOUT_INTERLEAVED, POSENC_ODD_ERROR, 0, 3000, POSENC_DTYPE_F32, 0},
        {64, POSENC_LAYOUT_HALF, POSENC_ODD_ERROR, 77, 1025, POSENC_DTYPE_F64, 0},
        {33, POSENC_LAYOUT_INTERLEAVED, POSENC_ODD_PAD, 500, 700, POSENC_DTYPE_F32, 0},
        {48, POSENC_LAYOUT_HALF, POSENC_ODD_ERROR, 5, 2100, POSENC_DTYPE_BF16, 0},
        {40, POSENC_LAYOUT_INTERLEAVED, POSENC_ODD_ERROR, 9, 130, POSENC_DTYPE_F16, 0},
        {1024, POSENC_LAYOUT_INTERLEAVED, POSENC_ODD_ERROR, 0, 4100, POSENC_DTYPE_F32, 0}, /* 16.8 MB: streamed */
        {1024, POSENC_LAYOUT_HALF, POSENC_ODD_ERROR, 3, 4100, POSENC_DTYPE_F32, 1},        /* staged */
        {16, POSENC_LAYOUT_INTERLEAVED, POSENC_ODD_ERROR, 0, 1, POSENC_DTYPE_F32, 0},
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        posenc_sinusoid_params p = params_of(cases[ci].dim, POSENC_FREQS_VASWANI, cases[ci].layout, cases[ci].odd,
                                             POSENC_MODE_PRECISE);
        posenc_positions pos = posenc_positions_range(cases[ci].start, cases[ci].rows);
        size_t n = cases[ci].rows * (size_t)cases[ci].dim, es = posenc_dtype_size(cases[ci].dtype);
        size_t bytes = ((n + 16) * es + 63) / 64 * 64; /* C11: a multiple of the alignment */
        char *want_mem = aligned_alloc(64, bytes), *got_mem = aligned_alloc(64, bytes);
        char *want = want_mem + cases[ci].misalign * es, *got = got_mem + cases[ci].misalign * es;
        posenc_error err = {0};
        CHECK(posenc_sinusoid_table_exec(&p, &pos, cases[ci].dtype, want, n, NULL, &err) == POSENC_OK,
              "plan case %zu: the table: %s", ci, err.message);
        posenc_sinusoid_plan *plan = NULL;
        CHECK(posenc_sinusoid_plan_create(&p, &pos, NULL, &plan, &err) == POSENC_OK, "plan case %zu: %s", ci,
              err.message);
        for (int round = 0; round < 2 && plan; round++) { /* reuse gives the same bytes */
            memset(got, 0x55, n * es);
            CHECK_STATUS(posenc_sinusoid_plan_table(plan, cases[ci].dtype, got, n, NULL, &err), POSENC_OK);
            size_t differ = 0;
            for (size_t i = 0; i < n * es; i++) differ += want[i] != got[i];
            CHECK(differ == 0, "plan dim %d %s start %lld rows %zu %s%s, call %d: same bytes as the table (%zu differ)",
                  cases[ci].dim, cases[ci].layout == POSENC_LAYOUT_HALF ? "half" : "interleaved",
                  (long long)cases[ci].start, cases[ci].rows, posenc_dtype_name(cases[ci].dtype),
                  cases[ci].misalign ? " unaligned" : "", round + 1, differ);
        }
        /* used from every path this CPU has, the plan made on the default one */
        for (int path = POSENC_PATH_SCALAR; plan && path <= POSENC_PATH_AVX512; path++) {
            if (!posenc_kernel_path_supported((posenc_kernel_path)path)) continue;
            posenc_exec e;
            posenc_exec_default(&e);
            e.path = (posenc_kernel_path)path;
            e.threads = 2;
            memset(got, 0x55, n * es);
            CHECK_STATUS(posenc_sinusoid_plan_table(plan, cases[ci].dtype, got, n, &e, &err), POSENC_OK);
            CHECK(memcmp(want, got, n * es) == 0, "plan dim %d rows %zu used on path %s x 2: same bytes",
                  cases[ci].dim, cases[ci].rows, posenc_kernel_path_name(e.path));
        }
        if (ci == 0 && plan) {
            CHECK_STATUS(posenc_sinusoid_plan_table(plan, POSENC_DTYPE_F32, got, n - 1, NULL, &err),
                         POSENC_ERR_BUFFER_TOO_SMALL);
            CHECK(strstr(err.message, "needs") != NULL, "plan: short output named: \"%s\"", err.message);
        }
        posenc_sinusoid_plan_free(plan);
        free(want_mem);
        free(got_mem);
    }
    posenc_sinusoid_params p = params_of(64, POSENC_FREQS_VASWANI, POSENC_LAYOUT_INTERLEAVED, POSENC_ODD_ERROR,
                                         POSENC_MODE_PRECISE);
    posenc_sinusoid_plan *plan = (posenc_sinusoid_plan *)&p; /* must be set to NULL on failure */
    posenc_error err = {0};
    int64_t ids[3] = {1, 5, 9};
    posenc_positions by_id = posenc_positions_ids(ids, 3);
    CHECK_STATUS(posenc_sinusoid_plan_create(&p, &by_id, NULL, &plan, &err), POSENC_ERR_UNSUPPORTED);
    CHECK(plan == NULL && strstr(err.message, "ids"), "plan of ids refused by name, *out NULL: \"%s\"", err.message);
    posenc_positions far = posenc_positions_range((int64_t)1 << 50, 10);
    p.base = 1.0001;
    CHECK_STATUS(posenc_sinusoid_plan_create(&p, &far, NULL, &plan, &err), POSENC_ERR_UNSUPPORTED);
    CHECK(strstr(err.message, "2^40") != NULL, "plan past the recurrence's range refused: \"%s\"", err.message);
    p.base = 10000;
    p.mode = POSENC_MODE_TORCH_COMPAT;
    posenc_positions pos = posenc_positions_range(0, 10);
    CHECK_STATUS(posenc_sinusoid_plan_create(&p, &pos, NULL, &plan, &err), POSENC_ERR_UNSUPPORTED);
    CHECK(strstr(err.message, "torch-compat") != NULL, "torch-compat plan refused: \"%s\"", err.message);
    p.mode = POSENC_MODE_PRECISE;
    p.dim = 63;
    CHECK_STATUS(posenc_sinusoid_plan_create(&p, &pos, NULL, &plan, &err), POSENC_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(posenc_sinusoid_plan_create(&p, &pos, NULL, NULL, &err), POSENC_ERR_NULL_POINTER);
    CHECK_STATUS(posenc_sinusoid_plan_table(NULL, POSENC_DTYPE_F32, &p, 1, NULL, &err), POSENC_ERR_NULL_POINTER);
    posenc_sinusoid_plan_free(NULL);
}

int main(void) {
    test_plans();
    test_properties();
    test_errors();
    test_baselines();
    test_dtypes();
    const char *dir = check_golden_dir();
    test_goldens(dir);
    return check_finish();
}
