/* test_alibi.c: ALiBi slopes against the four public schedules (original
 * get_slopes, BLOOM, MPT gen_slopes, ggml soft_max_ext) and the BLOOM / ggml
 * goldens; bias forms, rows, cached-decoding offsets, shift invariance, errors.
 * ggml's softmax outputs are reproduced through the reference attention in
 * test_attention.c. */
#include "check.h"

/* ---- independent re-statements of the peers' slope code (double / float) ---- */

/* ofirpress get_slopes (recursive), Python floats = double. */
static void original_slopes(int n, double *out) {
    int c = 1;
    while (c * 2 <= n) c *= 2;
    double start = pow(2.0, -pow(2.0, -(log2((double)c) - 3)));
    for (int i = 0; i < c; i++) out[i] = start * pow(start, i);
    if (c == n) return;
    double extra[1024];
    original_slopes(2 * c, extra); /* get_slopes(2c)[0::2][:n-c] */
    for (int j = 0; j < n - c; j++) out[c + j] = extra[2 * j];
}

/* MPT / llm-foundry gen_slopes(n, alibi_bias_max=8) in double. */
static void mpt_slopes(int n, double max_bias, double *out) {
    int N = 1;
    while (N < n) N *= 2;
    double s[1024];
    for (int i = 1; i <= N; i++) s[i - 1] = 1.0 / pow(2.0, i * (max_bias / N));
    if (N == n) {
        memcpy(out, s, sizeof(double) * (size_t)n);
        return;
    }
    int k = 0;
    for (int i = 1; i < N && k < n; i += 2) out[k++] = s[i];
    for (int i = 0; i < N && k < n; i += 2) out[k++] = s[i];
}

/* ggml_compute_forward_soft_max_f32: float32 powf as ggml writes it. */
static float ggml_slope(int h, int n_head, float max_bias) {
    int n_head_log2 = 1 << (int)floor(log2((double)n_head));
    float m0 = powf(2.0f, -(max_bias) / (float)n_head_log2);
    float m1 = powf(2.0f, -(max_bias / 2.0f) / (float)n_head_log2);
    return h < n_head_log2 ? powf(m0, (float)(h + 1)) : powf(m1, (float)(2 * (h - n_head_log2) + 1));
}

static int64_t ulp64(double a, double b) {
    int64_t ia, ib;
    memcpy(&ia, &a, 8);
    memcpy(&ib, &b, 8);
    int64_t d = ia - ib;
    return d < 0 ? -d : d;
}

static void test_schedules(void) {
    /* conventions.md section 7.1 worked values (exact binary fractions) */
    struct { int n; double want[12]; } ex[] = {
        {8, {0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625}},
        {6, {0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125}},
        {5, {0.25, 0.0625, 0.015625, 0.00390625, 0.5}},
        {12, {0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625,
              0.70710678118654752, 0.35355339059327376, 0.17677669529663688, 0.08838834764831844}},
    };
    for (size_t e = 0; e < sizeof ex / sizeof ex[0]; e++) {
        double got[12];
        posenc_alibi_slopes_f64(ex[e].n, 8.0, 0, 0, POSENC_MODE_PRECISE, got, 12, NULL);
        char label[64];
        snprintf(label, sizeof label, "conventions 7.1 slopes, n=%d", ex[e].n);
        /* 1e-16 relative: the irrational sqrt(2) entries are printed to 17 digits */
        check_close(label, got, ex[e].want, (size_t)ex[e].n, (size_t)ex[e].n, 0, 1e-16);
    }
    /* every head count 1..256, max_bias 8: original (double), MPT (double), ggml (float powf) */
    int64_t worst_orig = 0, worst_mpt = 0, worst_ggml = 0, worst_ggml_compat = 0, excess_orig = 0, excess_ggml = 0;
    int64_t worst_compat = 0, excess_compat = 0;
    int at_orig = 0, at_mpt = 0, at_ggml = 0;
    for (int n = 1; n <= 256; n++) {
        double ours[256], orig[512], mpt[256];
        float ours32[256], compat32[256];
        int c = 1;
        while (c * 2 <= n) c *= 2;
        posenc_alibi_slopes_f64(n, 8.0, 0, 0, POSENC_MODE_PRECISE, ours, 256, NULL);
        posenc_alibi_slopes_f32(n, 8.0, 0, 0, POSENC_MODE_PRECISE, ours32, 256, NULL);
        posenc_alibi_slopes_f32(n, 8.0, 0, 0, POSENC_MODE_TORCH_COMPAT, compat32, 256, NULL);
        original_slopes(n, orig);
        mpt_slopes(n, 8.0, mpt);
        for (int h = 0; h < n; h++) {
            /* original: start * start^h with a rounded start: error grows like h/2 ULP */
            int64_t u = ulp64(ours[h], orig[h]);
            if (u > worst_orig) worst_orig = u, at_orig = n;
            if (u - (h / 2 + 2) > excess_orig) excess_orig = u - (h / 2 + 2);
            u = ulp64(ours[h], mpt[h]);
            if (u > worst_mpt) worst_mpt = u, at_mpt = n;
            float g = ggml_slope(h, n, 8.0f);
            u = check_ulp_f32(ours32[h], g);
            if (u > worst_ggml) worst_ggml = u, at_ggml = n;
            int k = h < c ? h + 1 : 2 * (h - c) + 1; /* the power ggml raises its rounded base to */
            if (u - (k / 2 + 1) > excess_ggml) excess_ggml = u - (k / 2 + 1);
            u = check_ulp_f32(compat32[h], g);
            if (u > worst_ggml_compat) worst_ggml_compat = u;
            u = check_ulp_f32(compat32[h], ours32[h]);
            if (u > worst_compat) worst_compat = u;
            if (u - (k / 2 + 1) > excess_compat) excess_compat = u - (k / 2 + 1);
        }
    }
    /* Peers that raise a rounded base to the power k carry ~k/2 ULP of error
     * (relative error of base^k is k times the base's); MPT computes each
     * 2^-m directly and is within a rounding or two. A wrong schedule (wrong
     * head order, wrong exponent) is millions of ULP away. */
    CHECK(excess_orig == 0, "original get_slopes (double, start^k) vs ours, n=1..256: max %lld ULP of f64 at n=%d (tol k/2+2 ULP for power k)",
          (long long)worst_orig, at_orig);
    CHECK(worst_mpt <= 2, "MPT gen_slopes (double) vs ours, n=1..256: max %lld ULP of f64 (n=%d; tol 2)",
          (long long)worst_mpt, at_mpt);
    CHECK(excess_ggml == 0, "ggml powf schedule (float, m0^k) vs ours PRECISE, n=1..256: max %lld ULP of f32 at n=%d (tol k/2+1)",
          (long long)worst_ggml, at_ggml);
    CHECK(excess_compat == 0, "TORCH_COMPAT vs PRECISE, n=1..256: max %lld ULP (tol k/2+1 for power k, as documented)",
          (long long)worst_compat);
    CHECK(worst_ggml_compat <= 1, "ggml powf schedule vs ours TORCH_COMPAT (same construction), n=1..256: max %lld ULP (tol 1: glibc powf vs SLEEF powf)",
          (long long)worst_ggml_compat);
    /* other max_bias values: MPT's alibi_bias_max and ggml's max_bias agree with ours */
    double biases[3] = {4.0, 12.0, 16.0};
    int64_t worst = 0;
    for (int b = 0; b < 3; b++)
        for (int n = 1; n <= 64; n++) {
            double ours[64], mpt[64];
            posenc_alibi_slopes_f64(n, biases[b], 0, 0, POSENC_MODE_PRECISE, ours, 64, NULL);
            mpt_slopes(n, biases[b], mpt);
            for (int h = 0; h < n; h++)
                if (ulp64(ours[h], mpt[h]) > worst) worst = ulp64(ours[h], mpt[h]);
        }
    CHECK(worst <= 2, "max_bias 4/12/16, n=1..64 vs MPT gen_slopes: max %lld ULP of f64 (tol 2)", (long long)worst);

    /* tensor-parallel slice: heads [8, 12) of 12 == full[8:12]; a slice that does not fit fails */
    float full[12], slice[4];
    posenc_alibi_slopes_f32(12, 8.0, 0, 12, POSENC_MODE_PRECISE, full, 12, NULL);
    posenc_alibi_slopes_f32(4, 8.0, 8, 12, POSENC_MODE_PRECISE, slice, 4, NULL);
    check_same("slice heads [8,12) of 12 == full schedule [8:12]", slice, full + 8, 4, CHECK_F32, NULL, 0);
}

static void test_bloom_goldens(const char *dir) {
    int heads_list[4] = {8, 12, 20, 32};
    for (int t = 0; t < 4; t++) {
        int n = heads_list[t];
        char name[128], label[128];
        snprintf(name, sizeof name, "hf_bloom_alibi_slopes_nhead%d", n);
        double *want = check_load_golden(dir, name, NULL);
        float got[32], compat[32];
        posenc_alibi_slopes_f32(n, 8.0, 0, 0, POSENC_MODE_PRECISE, got, 32, NULL);
        posenc_alibi_slopes_f32(n, 8.0, 0, 0, POSENC_MODE_TORCH_COMPAT, compat, 32, NULL);
        int64_t worst = 0, worst_compat = 0;
        for (int h = 0; h < n; h++) {
            int64_t u = check_ulp_f32(got[h], (float)want[h]);
            if (u > worst) worst = u;
            u = check_ulp_f32(compat[h], (float)want[h]);
            if (u > worst_compat) worst_compat = u;
        }
        CHECK(worst_compat == 0, "BLOOM slopes n=%d, TORCH_COMPAT: max %lld ULP (tol 0: same float32 ops)", n, (long long)worst_compat);
        /* BLOOM raises f32(2^(-8/c)) to powers up to c: ~c/4 ULP from the correctly rounded slope */
        CHECK(worst <= n / 4 + 1, "BLOOM slopes n=%d, PRECISE: max %lld ULP from BLOOM (tol n/4+1 = %d: BLOOM's rounded base)",
              n, (long long)worst, n / 4 + 1);
        free(want);

        snprintf(name, sizeof name, "hf_bloom_alibi_nhead%d_len64", n);
        want = check_load_golden(dir, name, NULL);
        /* BLOOM's bias = slope * key position: the CAUSAL form for query position 0 */
        float bias[32 * 64];
        double got64[32 * 64];
        posenc_positions q = posenc_positions_range(0, 1), k = posenc_positions_range(0, 64);
        posenc_alibi_bias_f32(compat, n, POSENC_ALIBI_CAUSAL, &q, &k, bias, sizeof bias / 4, NULL);
        for (int i = 0; i < n * 64; i++) got64[i] = bias[i];
        snprintf(label, sizeof label, "BLOOM build_alibi_tensor n=%d [n,1,64], TORCH_COMPAT slopes", n);
        check_close(label, got64, want, (size_t)n * 64, 64, 0, 0);
        posenc_alibi_bias_f32(got, n, POSENC_ALIBI_CAUSAL, &q, &k, bias, sizeof bias / 4, NULL);
        for (int i = 0; i < n * 64; i++) got64[i] = bias[i];
        snprintf(label, sizeof label, "BLOOM n=%d [n,1,64], PRECISE slopes", n);
        /* the slope difference above (<= n/4+1 ULP of f32 = (n/4+1) * 1.2e-7 relative) carries over to m*j */
        check_close(label, got64, want, (size_t)n * 64, 64, 0, (n / 4 + 1.5) * 1.2e-7);
        free(want);
    }
    /* left-padded batch: row 1 mask [0]*5 + [1]*11 */
    double *want = check_load_golden(dir, "hf_bloom_alibi_nhead12_padded_batch2_len16", NULL);
    int64_t masks[2][16], keypos[2][16];
    for (int t = 0; t < 16; t++) masks[0][t] = 1, masks[1][t] = t >= 5;
    float slopes[12], bias[12 * 16];
    double got[24 * 16];
    posenc_alibi_slopes_f32(12, 8.0, 0, 0, POSENC_MODE_TORCH_COMPAT, slopes, 12, NULL);
    posenc_positions q = posenc_positions_range(0, 1);
    for (int b = 0; b < 2; b++) {
        posenc_alibi_key_positions_from_mask(masks[b], 16, keypos[b], 16, NULL);
        posenc_positions k = posenc_positions_ids(keypos[b], 16);
        posenc_alibi_bias_f32(slopes, 12, POSENC_ALIBI_CAUSAL, &q, &k, bias, 12 * 16, NULL);
        for (int i = 0; i < 12 * 16; i++) got[b * 12 * 16 + i] = bias[i];
    }
    CHECK(keypos[1][4] == 0 && keypos[1][5] == 0 && keypos[1][6] == 1 && keypos[1][15] == 10,
          "BLOOM key positions for mask [0]*5+[1]*11: [0 0 0 0 0 0 1 ... 10]");
    check_close("BLOOM left-padded batch [2*12,1,16], TORCH_COMPAT (mask -> positions -> bias)", got, want, 24 * 16, 16, 0, 0);
    free(want);

    /* ggml slopes derived from the soft_max_ext probe (~1e-7 relative per the manifest) */
    int ggml_heads[3] = {8, 12, 32};
    for (int t = 0; t < 3; t++) {
        char name[128], label[128];
        snprintf(name, sizeof name, "ggml_alibi_slopes_derived_nhead%d", ggml_heads[t]);
        double *derived = check_load_golden(dir, name, NULL);
        double ours[32];
        posenc_alibi_slopes_f64(ggml_heads[t], 8.0, 0, 0, POSENC_MODE_PRECISE, ours, 32, NULL);
        snprintf(label, sizeof label, "ggml derived slopes n=%d (ln(p1/p0)/2^q, float32 softmax)", ggml_heads[t]);
        /* derivation from float32 probabilities: the manifest states ~1e-6 relative */
        check_close(label, ours, derived, (size_t)ggml_heads[t], (size_t)ggml_heads[t], 0, 2e-6);
        free(derived);
    }
}

static void test_forms(void) {
    float slopes[3] = {0.5f, 0.25f, 0.0625f};
    posenc_positions q = posenc_positions_range(0, 6), k = posenc_positions_range(0, 6);
    float causal[3 * 36], sym[3 * 36];
    posenc_alibi_bias_f32(slopes, 3, POSENC_ALIBI_CAUSAL, &q, &k, causal, 108, NULL);
    posenc_alibi_bias_f32(slopes, 3, POSENC_ALIBI_SYMMETRIC, &q, &k, sym, 108, NULL);
    /* conventions 7.2: m = 0.5, i = 3, keys 0..3 -> [-1.5, -1, -0.5, 0] in both forms */
    double row[4], want[4] = {-1.5, -1, -0.5, 0};
    for (int j = 0; j < 4; j++) row[j] = causal[3 * 6 + j];
    check_close("causal m(j-i), m=0.5, i=3, keys 0..3", row, want, 4, 4, 0, 0);
    for (int j = 0; j < 4; j++) row[j] = sym[3 * 6 + j];
    check_close("symmetric -m|i-j|, m=0.5, i=3, keys 0..3", row, want, 4, 4, 0, 0);
    /* what each form must be, element by element */
    float want_causal[108], want_sym[108];
    for (int h = 0; h < 3; h++)
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 6; j++) {
                size_t at = (size_t)(h * 6 + i) * 6 + (size_t)j;
                want_causal[at] = slopes[h] * (float)(j - i);
                want_sym[at] = -slopes[h] * (float)abs(i - j); /* == causal for j <= i, -causal above */
            }
    size_t form_shape[3] = {3, 6, 6};
    check_same("causal form == m*(j-i) (positive above the diagonal, unmasked)", causal, want_causal, 108, CHECK_F32,
               form_shape, 3);
    check_same("symmetric form == -m|i-j| (= causal for j<=i, -causal for j>i)", sym, want_sym, 108, CHECK_F32, form_shape, 3);

    /* softmax equivalence of m*j (original/BLOOM), m*(j-L+1) (MPT), m*(j-i) under causal masking */
    double worst = 0;
    for (int i = 0; i < 6; i++) {
        double p[3][6], z[3];
        for (int v = 0; v < 3; v++) z[v] = 0;
        for (int j = 0; j <= i; j++) {
            p[0][j] = exp(0.5 * j), p[1][j] = exp(0.5 * (j - 5)), p[2][j] = exp(causal[i * 6 + j]);
            for (int v = 0; v < 3; v++) z[v] += p[v][j];
        }
        for (int j = 0; j <= i; j++)
            for (int v = 1; v < 3; v++) worst = fmax(worst, fabs(p[v][j] / z[v] - p[0][j] / z[0]));
    }
    CHECK(worst < 1e-15, "softmax of m*j, m*(j-L+1), m*(j-i) agree under causal masking: max diff %.2g (tol 1e-15, double rounding)", worst);

    /* rows == dense rows, including cached decoding (queries start at 10) */
    posenc_positions qd = posenc_positions_range(10, 3), kd = posenc_positions_range(0, 13);
    float dense[3 * 3 * 13], r[13];
    posenc_alibi_bias_f32(slopes, 3, POSENC_ALIBI_CAUSAL, &qd, &kd, dense, sizeof dense / 4, NULL);
    float rows[3 * 3 * 13], want_decode[3 * 3 * 13];
    for (int h = 0; h < 3; h++)
        for (int a = 0; a < 3; a++) {
            posenc_alibi_bias_row_f32(slopes[h], POSENC_ALIBI_CAUSAL, 10.0 + a, &kd, r, 13, NULL);
            memcpy(rows + (h * 3 + a) * 13, r, sizeof r);
            for (int b = 0; b < 13; b++) want_decode[(h * 3 + a) * 13 + b] = slopes[h] * (float)(b - 10 - a);
        }
    size_t dense_shape[3] = {3, 3, 13};
    check_same("posenc_alibi_bias_row_f32 rows == the dense tensor", rows, dense, 117, CHECK_F32, dense_shape, 3);
    check_same("cached decoding: queries 10..12 vs keys 0..12 give m*(j-i)", dense, want_decode, 117, CHECK_F32, dense_shape, 3);

    /* shift invariance: all positions + 1000 leave the bias unchanged */
    for (int form = 0; form < 2; form++) {
        posenc_positions qs = posenc_positions_range(1000, 6), ks = posenc_positions_range(1000, 6);
        float shifted[108], base[108];
        posenc_alibi_bias_f32(slopes, 3, (posenc_alibi_form)form, &q, &k, base, 108, NULL);
        posenc_alibi_bias_f32(slopes, 3, (posenc_alibi_form)form, &qs, &ks, shifted, 108, NULL);
        size_t bias_shape[3] = {3, 6, 6};
        check_same(form ? "symmetric bias: positions +1000 give the same tensor" : "causal bias: positions +1000 give the same tensor",
                   shifted, base, 108, CHECK_F32, bias_shape, 3);
    }
    /* large distances: exact product for |j-i| < 2^40 */
    int64_t far[2] = {0, ((int64_t)1 << 40) - 1};
    posenc_positions kf = posenc_positions_ids(far, 2), q0 = posenc_positions_range(0, 1);
    float s1[1] = {0.3f}, fb[2];
    posenc_alibi_bias_f32(s1, 1, POSENC_ALIBI_CAUSAL, &q0, &kf, fb, 2, NULL);
    CHECK(fb[1] == (float)((long double)0.3f * (long double)far[1]), "distance 2^40-1: m*d rounded once (%.9g)", (double)fb[1]);
}

static void expect_error(posenc_status st, posenc_status want, const posenc_error *e, const char *needle,
                         const char *what) {
    CHECK(st == want && strstr(e->message, needle) != NULL, "%s -> %s: \"%s\"", what, posenc_strerror(st), e->message);
}

static void test_errors(void) {
    posenc_error e;
    float out[64];
    expect_error(posenc_alibi_slopes_f32(0, 8, 0, 0, POSENC_MODE_PRECISE, out, 64, &e), POSENC_ERR_INVALID_ARGUMENT, &e, "heads must be > 0, got 0", "[B1] heads 0");
    expect_error(posenc_alibi_slopes_f32(-3, 8, 0, 0, POSENC_MODE_PRECISE, out, 64, &e), POSENC_ERR_INVALID_ARGUMENT, &e, "got -3", "heads -3");
    expect_error(posenc_alibi_slopes_f32(8, 0, 0, 0, POSENC_MODE_PRECISE, out, 64, &e), POSENC_ERR_INVALID_ARGUMENT, &e, "max_bias must be finite and > 0, got 0", "[B2] max_bias 0");
    expect_error(posenc_alibi_slopes_f32(8, NAN, 0, 0, POSENC_MODE_PRECISE, out, 64, &e), POSENC_ERR_INVALID_ARGUMENT, &e, "got nan", "max_bias NaN");
    expect_error(posenc_alibi_slopes_f32(8, INFINITY, 0, 0, POSENC_MODE_PRECISE, out, 64, &e), POSENC_ERR_INVALID_ARGUMENT, &e, "got inf", "max_bias inf");
    expect_error(posenc_alibi_slopes_f32(4, 8, 10, 12, POSENC_MODE_PRECISE, out, 64, &e), POSENC_ERR_INVALID_ARGUMENT, &e, "heads [10, 14) do not fit in total_heads 12", "[B3] slice past the end");
    expect_error(posenc_alibi_slopes_f32(4, 8, -1, 12, POSENC_MODE_PRECISE, out, 64, &e), POSENC_ERR_INVALID_ARGUMENT, &e, "head_offset must be >= 0, got -1", "negative offset");
    expect_error(posenc_alibi_slopes_f32(8, 8, 0, 0, POSENC_MODE_PRECISE, out, 7, &e), POSENC_ERR_BUFFER_TOO_SMALL, &e, "holds 7 slopes, need 8", "small buffer");
    expect_error(posenc_alibi_slopes_f32(8, 8, 0, 0, (posenc_mode)5, out, 64, &e), POSENC_ERR_INVALID_ARGUMENT, &e, "unknown mode 5", "bad mode");
    expect_error(posenc_alibi_slopes_f32(8, 8, 0, 0, POSENC_MODE_PRECISE, NULL, 8, &e), POSENC_ERR_NULL_POINTER, &e, "out must not be NULL", "NULL out");
    float s[2] = {0.5f, NAN};
    posenc_positions p4 = posenc_positions_range(0, 4), p0 = posenc_positions_range(0, 0);
    expect_error(posenc_alibi_bias_f32(s, 2, POSENC_ALIBI_CAUSAL, &p4, &p4, out, 64, &e), POSENC_ERR_INVALID_ARGUMENT, &e, "slope of head 1 must be finite", "[B5] NaN slope");
    expect_error(posenc_alibi_bias_f32(s, 1, POSENC_ALIBI_CAUSAL, &p0, &p4, out, 64, &e), POSENC_ERR_INVALID_ARGUMENT, &e, "query length must be > 0, got 0", "[B12] query length 0");
    expect_error(posenc_alibi_bias_f32(s, 1, POSENC_ALIBI_CAUSAL, &p4, &p0, out, 64, &e), POSENC_ERR_INVALID_ARGUMENT, &e, "key length must be > 0, got 0", "key length 0");
    expect_error(posenc_alibi_bias_f32(s, 0, POSENC_ALIBI_CAUSAL, &p4, &p4, out, 64, &e), POSENC_ERR_INVALID_ARGUMENT, &e, "heads must be > 0, got 0", "bias heads 0");
    expect_error(posenc_alibi_bias_f32(s, 1, (posenc_alibi_form)7, &p4, &p4, out, 64, &e), POSENC_ERR_INVALID_ARGUMENT, &e, "got 7", "[B4] unknown form");
    expect_error(posenc_alibi_bias_f32(s, 1, POSENC_ALIBI_CAUSAL, &p4, &p4, out, 15, &e), POSENC_ERR_BUFFER_TOO_SMALL, &e, "needs 16", "bias buffer too small");
    posenc_positions huge = posenc_positions_range(0, (size_t)1 << 40);
    expect_error(posenc_alibi_bias_f32(s, 1, POSENC_ALIBI_CAUSAL, &huge, &huge, out, 64, &e), POSENC_ERR_SIZE_OVERFLOW, &e, "overflows", "[B19] size overflow");
    expect_error(posenc_alibi_bias_row_f32(0.5f, POSENC_ALIBI_CAUSAL, NAN, &p4, out, 64, &e), POSENC_ERR_INVALID_ARGUMENT, &e, "query_position must be finite", "NaN query position");
    int64_t mask[3] = {1, 2, 1}, pos[3];
    expect_error(posenc_alibi_key_positions_from_mask(mask, 3, pos, 3, &e), POSENC_ERR_INVALID_ARGUMENT, &e, "mask[1] must be 0 or 1, got 2", "[B6] mask value 2");
}

int main(void) {
    test_schedules();
    test_forms();
    test_errors();
    const char *dir = check_golden_dir();
    test_bloom_goldens(dir);
    return check_finish();
}
