/* test_t5.c: T5 relative position buckets against the HF goldens (64x64 grid
 * and the -300..300 line, bidirectional and not), the worked examples of
 * conventions.md section 8.1, the bucket matrix with query/key offsets, the
 * bias gather, shift invariance and every rejected parameter. The exhaustive
 * comparison with PyTorch itself is tests/py/test_t5_torch.py. */
#include "check.h"

static posenc_t5_params t5(int32_t nb, int32_t md, int32_t bidir) {
    posenc_t5_params p = {nb, md, bidir};
    return p;
}

static void test_examples(void) {
    int64_t r[] = {-1000, -128, -127, -64, -32, -16, -15, -12, -8, -7, -1, 0, 1, 7, 8, 12, 15, 16, 32, 64, 127, 128, 1000};
    int32_t bi[] = {15, 15, 15, 14, 12, 10, 9, 9, 8, 7, 1, 0, 17, 23, 24, 25, 25, 26, 28, 30, 31, 31, 31};
    int32_t uni[] = {31, 31, 31, 26, 21, 16, 15, 12, 8, 7, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    int bad_bi = 0, bad_uni = 0;
    posenc_t5_params pb = t5(32, 128, 1), pu = t5(32, 128, 0);
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++) {
        int32_t b;
        posenc_t5_bucket(&pb, r[i], &b, NULL);
        if (b != bi[i]) bad_bi++, printf("    r=%lld: bidirectional %d, want %d\n", (long long)r[i], b, bi[i]);
        posenc_t5_bucket(&pu, r[i], &b, NULL);
        if (b != uni[i]) bad_uni++, printf("    r=%lld: unidirectional %d, want %d\n", (long long)r[i], b, uni[i]);
    }
    CHECK(bad_bi == 0, "conventions 8.1 bidirectional examples (23 values): %d wrong", bad_bi);
    CHECK(bad_uni == 0, "conventions 8.1 unidirectional examples (23 values): %d wrong", bad_uni);
    /* unidirectional bucket -> smallest distance n = -r (conventions 8.1) */
    int first[32];
    for (int b = 0; b < 32; b++) first[b] = -1;
    for (int n = 0; n < 2000; n++) {
        int32_t b;
        posenc_t5_bucket(&pu, -n, &b, NULL);
        if (first[b] < 0) first[b] = n;
    }
    int want_first[15] = {19, 21, 24, 27, 31, 35, 40, 46, 52, 59, 67, 77, 87, 99, 113};
    int ok = 1;
    for (int b = 0; b <= 16; b++) ok &= first[b] == b;
    for (int b = 17; b < 32; b++) ok &= first[b] == want_first[b - 17];
    CHECK(ok, "unidirectional bucket boundaries 17:19 18:21 ... 31:113 (got 17:%d 24:%d 31:%d)", first[17], first[24], first[31]);
    /* monotone: bucket never decreases with distance, in each direction */
    int mono = 1;
    int32_t prev_pos = -1, prev_neg = -1;
    for (int64_t n = 0; n < 100000; n++) {
        int32_t bp, bn;
        posenc_t5_bucket(&pb, n, &bp, NULL);
        posenc_t5_bucket(&pb, -n, &bn, NULL);
        if ((n > 0 && bp < prev_pos) || bn < prev_neg) mono = 0;
        prev_pos = n > 0 ? bp : prev_pos;
        prev_neg = bn;
    }
    CHECK(mono, "buckets are non-decreasing in |r| for r = 0..1e5 in both directions");
    /* An exact boundary, where the evaluation details decide: 100 buckets,
     * max_distance 5000, unidirectional, r = -500: ln(10)/ln(100)*50 is 25
     * exactly; HF's float32 path gives 75, and so does glibc's double log, but
     * numpy's float64 log (1 ULP low) truncates 24.999999999999993 to 74. */
    posenc_t5_params p100 = t5(100, 5000, 0);
    int32_t b500;
    posenc_t5_bucket(&p100, -500, &b500, NULL);
    CHECK(b500 == 75, "(100, 5000, unidirectional) r=-500: bucket %d (HF/torch 75; numpy float64 gives 74)", b500);
    /* and one where glibc's float64 evaluation is the one that differs */
    posenc_t5_params p1000 = t5(1000, 100000, 0);
    int32_t b19975;
    posenc_t5_bucket(&p1000, -19975, &b19975, NULL);
    CHECK(b19975 == 848, "(1000, 100000, unidirectional) r=-19975: bucket %d (HF/torch 848; glibc float64 log gives 847)", b19975);
    int32_t huge;
    posenc_t5_bucket(&pb, ((int64_t)1 << 62) - 1, &huge, NULL);
    CHECK(huge == 31, "r = 2^62-1 clamps to the last bucket (31), got %d", huge);
}

static void test_goldens(const char *dir) {
    for (int bidir = 1; bidir >= 0; bidir--) {
        char name[128], label[128];
        posenc_t5_params p = t5(32, 128, bidir);
        snprintf(name, sizeof name, "hf_t5_bucket_grid64_bidir%d", bidir);
        double *want = check_load_golden(dir, name, NULL);
        int64_t grid[64 * 64];
        posenc_positions q = posenc_positions_range(0, 64);
        posenc_t5_bucket_matrix_i64(&p, &q, &q, grid, 64 * 64, NULL);
        double got[64 * 64];
        for (int i = 0; i < 64 * 64; i++) got[i] = (double)grid[i];
        snprintf(label, sizeof label, "HF T5 buckets [64,64] bidirectional=%d (integers: exact)", bidir);
        check_close(label, got, want, 64 * 64, 64, 0, 0);
        free(want);

        snprintf(name, sizeof name, "hf_t5_bucket_line_m300_p300_bidir%d", bidir);
        want = check_load_golden(dir, name, NULL);
        /* r = key - query = -300..300: one query at 300, keys 0..600 */
        int32_t line[601];
        posenc_positions q1 = posenc_positions_range(300, 1), k = posenc_positions_range(0, 601);
        posenc_t5_bucket_matrix_i32(&p, &q1, &k, line, 601, NULL);
        double got_line[601];
        for (int i = 0; i < 601; i++) got_line[i] = line[i];
        snprintf(label, sizeof label, "HF T5 buckets r=-300..300 bidirectional=%d (exact)", bidir);
        check_close(label, got_line, want, 601, 601, 0, 0);
        free(want);
    }
}

static void test_matrix_and_bias(void) {
    posenc_t5_params p;
    posenc_t5_params_default(&p);
    CHECK(p.num_buckets == 32 && p.max_distance == 128 && p.bidirectional == 1, "defaults: 32 buckets, 128, bidirectional");
    /* cached decoding: 3 new queries at positions 40..42 vs 43 cached keys; ids path too */
    posenc_positions q = posenc_positions_range(40, 3), k = posenc_positions_range(0, 43);
    int32_t m32[3 * 43];
    int64_t m64[3 * 43];
    posenc_t5_bucket_matrix_i32(&p, &q, &k, m32, 3 * 43, NULL);
    posenc_t5_bucket_matrix_i64(&p, &q, &k, m64, 3 * 43, NULL);
    int64_t qids[3] = {40, 41, 42};
    posenc_positions qi = posenc_positions_ids(qids, 3);
    int32_t mids[3 * 43];
    posenc_t5_bucket_matrix_i32(&p, &qi, &k, mids, 3 * 43, NULL);
    int ok = 1, same = 1;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 43; b++) {
            int32_t want;
            posenc_t5_bucket(&p, b - (40 + a), &want, NULL);
            if (m32[a * 43 + b] != want || mids[a * 43 + b] != want) ok = 0;
            if (m64[a * 43 + b] != m32[a * 43 + b]) same = 0;
        }
    CHECK(ok, "cached decoding: queries 40..42 (range and ids) vs keys 0..42 give bucket(j - i)");
    CHECK(same, "i32 and i64 matrices agree");

    /* shift invariance: all positions + 1000 */
    posenc_positions q0 = posenc_positions_range(0, 50), qs = posenc_positions_range(1000, 50);
    int32_t base[2500], shifted[2500];
    for (int bidir = 0; bidir < 2; bidir++) {
        p.bidirectional = bidir;
        posenc_t5_bucket_matrix_i32(&p, &q0, &q0, base, 2500, NULL);
        posenc_t5_bucket_matrix_i32(&p, &qs, &qs, shifted, 2500, NULL);
        size_t t5_shape[2] = {50, 50};
        check_same(bidir ? "T5 buckets (bidirectional): positions +1000 give the same matrix"
                         : "T5 buckets (causal): positions +1000 give the same matrix",
                   shifted, base, 2500, CHECK_I32, t5_shape, 2);
    }
    p.bidirectional = 1;

    /* bias gather against a direct loop: table[b][h] = 100 b + h makes every value traceable */
    enum { H = 3, LQ = 4, LK = 7 };
    float table[32 * H], bias[H * LQ * LK];
    for (int b = 0; b < 32; b++)
        for (int h = 0; h < H; h++) table[b * H + h] = (float)(100 * b + h);
    posenc_positions cq = posenc_positions_range(5, LQ), ck = posenc_positions_range(0, LK);
    posenc_t5_bias_f32(&p, table, H, &cq, &ck, bias, H * LQ * LK, NULL);
    ok = 1;
    for (int h = 0; h < H; h++)
        for (int a = 0; a < LQ; a++)
            for (int b = 0; b < LK; b++) {
                int32_t bucket;
                posenc_t5_bucket(&p, b - (5 + a), &bucket, NULL);
                if (bias[(h * LQ + a) * LK + b] != table[bucket * H + h]) ok = 0;
            }
    CHECK(ok, "bias [heads=3, 4, 7] == table[bucket(j-i)][h] (direct loop, cross-attention-like offsets)");
}

static void expect(posenc_status st, posenc_status want, const posenc_error *e, const char *needle, const char *what) {
    CHECK(st == want && strstr(e->message, needle) != NULL, "%s -> %s: \"%s\"", what, posenc_strerror(st), e->message);
}

static void test_errors(void) {
    posenc_error e;
    int32_t b, out[16];
    posenc_t5_params p;
    p = t5(1, 128, 0);
    expect(posenc_t5_bucket(&p, 3, &b, &e), POSENC_ERR_INVALID_ARGUMENT, &e, "num_buckets must be >= 2, got 1", "unidirectional 1 bucket");
    p = t5(0, 128, 0);
    expect(posenc_t5_bucket(&p, 3, &b, &e), POSENC_ERR_INVALID_ARGUMENT, &e, "got 0", "0 buckets");
    p = t5(2, 128, 1);
    expect(posenc_t5_bucket(&p, 3, &b, &e), POSENC_ERR_INVALID_ARGUMENT, &e, "num_buckets must be >= 4 when bidirectional, got 2", "[B7] bidirectional 2 buckets");
    p = t5(33, 128, 1);
    expect(posenc_t5_bucket(&p, 3, &b, &e), POSENC_ERR_INVALID_ARGUMENT, &e, "num_buckets must be even when bidirectional, got 33", "[B8] bidirectional odd 33");
    p = t5(33, 128, 0);
    posenc_status st = posenc_t5_bucket(&p, -100, &b, &e);
    /* max_exact 16: 16 + trunc(ln(100/16) / ln(128/16) * 17) = 16 + 14 */
    CHECK(st == POSENC_OK && b == 30, "unidirectional odd 33 accepted (bucket(-100) = %d, want 30)", b);
    /* The log branch past 2^63 before truncation: max_distance = max_exact + 1
     * makes the divisor ~1e-9 (fuzz_bias found the undefined conversion; x86
     * gave a negative bucket). Far distances belong in the last bucket. */
    const int32_t many = 2147483646, exact = many / 2;
    p = t5(many, exact + 1, 0);
    st = posenc_t5_bucket(&p, -(((int64_t)1 << 62) - 1), &b, &e);
    CHECK(st == POSENC_OK && b == many - 1, "%d buckets, max_distance %d, r = -(2^62 - 1): bucket %d, want %d", many,
          exact + 1, b, many - 1);
    p = t5(many, many / 4 + 1, 1); /* max_exact = many / 4 per direction */
    st = posenc_t5_bucket(&p, ((int64_t)1 << 62) - 1, &b, &e);
    CHECK(st == POSENC_OK && b == many - 1, "bidirectional, r = 2^62 - 1: bucket %d, want %d", b, many - 1);
    st = posenc_t5_bucket(&p, -(((int64_t)1 << 62) - 1), &b, &e);
    CHECK(st == POSENC_OK && b == many / 2 - 1, "bidirectional, r = -(2^62 - 1): bucket %d, want %d", b, many / 2 - 1);
    p = t5(32, 0, 1);
    expect(posenc_t5_bucket(&p, 3, &b, &e), POSENC_ERR_INVALID_ARGUMENT, &e, "max_distance must be > 0, got 0", "max_distance 0");
    p = t5(32, -5, 1);
    expect(posenc_t5_bucket(&p, 3, &b, &e), POSENC_ERR_INVALID_ARGUMENT, &e, "got -5", "max_distance -5");
    p = t5(32, 8, 1);
    expect(posenc_t5_bucket(&p, 3, &b, &e), POSENC_ERR_INVALID_ARGUMENT, &e, "max_distance must be > max_exact = 8 (num_buckets 32, bidirectional), got 8", "[B9] max_distance == max_exact");
    p = t5(32, 16, 0);
    expect(posenc_t5_bucket(&p, 3, &b, &e), POSENC_ERR_INVALID_ARGUMENT, &e, "max_exact = 16", "unidirectional max_distance == max_exact");
    p = t5(32, 128, 2);
    expect(posenc_t5_bucket(&p, 3, &b, &e), POSENC_ERR_INVALID_ARGUMENT, &e, "bidirectional must be 0 or 1, got 2", "bidirectional 2");
    p = t5(32, 128, 1);
    expect(posenc_t5_bucket(&p, (int64_t)1 << 62, &b, &e), POSENC_ERR_INVALID_ARGUMENT, &e, "|r| < 2^62", "[B10] r = 2^62");
    posenc_positions p4 = posenc_positions_range(0, 4), p0 = posenc_positions_range(0, 0);
    double vals[2] = {0.5, 1.5};
    posenc_positions pr = posenc_positions_values(vals, 2);
    expect(posenc_t5_bucket_matrix_i32(&p, &p0, &p4, out, 16, &e), POSENC_ERR_INVALID_ARGUMENT, &e, "query length must be > 0, got 0", "query length 0");
    expect(posenc_t5_bucket_matrix_i32(&p, &p4, &p0, out, 16, &e), POSENC_ERR_INVALID_ARGUMENT, &e, "key length must be > 0, got 0", "key length 0");
    expect(posenc_t5_bucket_matrix_i32(&p, &pr, &p4, out, 16, &e), POSENC_ERR_INVALID_ARGUMENT, &e, "query positions must be integers", "[B11] real positions");
    expect(posenc_t5_bucket_matrix_i32(&p, &p4, &p4, out, 15, &e), POSENC_ERR_BUFFER_TOO_SMALL, &e, "needs 16", "small buffer");
    float table[32], bias[16];
    expect(posenc_t5_bias_f32(&p, table, 0, &p4, &p4, bias, 16, &e), POSENC_ERR_INVALID_ARGUMENT, &e, "heads must be > 0, got 0", "bias heads 0");
    expect(posenc_t5_bias_f32(&p, NULL, 1, &p4, &p4, bias, 16, &e), POSENC_ERR_NULL_POINTER, &e, "table must not be NULL", "NULL table");
    posenc_positions huge = posenc_positions_range(0, (size_t)1 << 40);
    expect(posenc_t5_bias_f32(&p, table, 1 << 20, &huge, &huge, bias, 16, &e), POSENC_ERR_SIZE_OVERFLOW, &e, "overflows", "size overflow");
}

int main(void) {
    test_examples();
    test_matrix_and_bias();
    test_errors();
    const char *dir = check_golden_dir();
    test_goldens(dir);
    return check_finish();
}
