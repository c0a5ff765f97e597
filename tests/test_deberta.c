/* test_deberta.c: DeBERTa relative positions (posenc_deberta_*, posenc.h 5.3b).
 * The v3 parameters (256 buckets, max_relative_positions 512) and the oracle's
 * (8, 16) over every distance |r| <= 2^20, against a reference computed here in
 * long double (logl, 64-bit mantissa): away from a bucket boundary the float32
 * path must give exactly ceil(x) + mid; within 2^-18 x of an integer (where
 * float32 rounding can move the ceiling) it must give the value torch 2.13's
 * make_log_bucket_position gives, listed below (derived with mpmath at 40
 * digits against transformers 5.18's function over 0..2^20: the 33 (v3) and 1
 * (8/16) distances where the framework's float32 answer differs from real
 * arithmetic; every other near distance must match real arithmetic; two more
 * depend on torch's float32 log, MKL's or SLEEF's: v3_sleef). ctest runs it
 * with POSENC_TORCH_MKL unset (SLEEF); tests/oracle/test_oracle_hf.py runs it
 * with torch's MKL and compares the whole range with the framework again. */
#include "check.h"

#include <stdbool.h>

typedef struct {
    int64_t r, bucket;
} flip;

/* torch's bucket where real arithmetic differs (r > 0; -r is its mirror) */
static const flip v3_flips[] = {
    {65317, 700},  {83928, 723},  {92579, 732},   {126998, 761}, {129797, 763}, {143176, 772}, {157934, 781},
    {159665, 782}, {163184, 784}, {297197, 839},  {317284, 845}, {324277, 847}, {327831, 848}, {331424, 849},
    {342441, 852}, {403269, 867}, {421241, 871},  {440014, 875}, {464661, 880}, {518174, 890}, {547199, 895},
    {577850, 900}, {651461, 911}, {680494, 915},  {687952, 916}, {726487, 921}, {864910, 938}, {893661, 940},
    {954062, 946}, {964518, 948}, {1007503, 951}, {1029708, 953}, {1040994, 954}};
static const flip small_flips[] = {{911350, 32}};
/* the two v3 distances where torch's float32 log decides between its builds: with MKL (vmsLn, every x86-64 wheel:
 * the values above) and without (SLEEF's logf, which is what posenc uses when POSENC_TORCH_MKL is unset) */
static const flip v3_sleef[] = {{403269, 868}, {485369, 884}};

static posenc_deberta_params dp(int32_t buckets, int32_t max_rel) {
    posenc_deberta_params p = {buckets, max_rel};
    return p;
}

static void test_examples(void) {
    posenc_deberta_params v3 = dp(256, 512);
    static const int64_t r[] = {0, 1, 128, 129, 200, 511, 512, 1000, 65317, 1000000, -1, -200, -1000};
    static const int64_t bucket[] = {0, 1, 128, 129, 169, 255, 256, 317, 700, 951, -1, -169, -317};
    static const int32_t c2p[] = {256, 257, 384, 385, 425, 511, 511, 511, 511, 511, 255, 87, 0};
    static const int32_t p2c[] = {256, 255, 128, 127, 87, 1, 0, 0, 0, 0, 257, 425, 511};
    int bad = 0;
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++) {
        int64_t b = 0;
        int32_t c = -1, p = -1;
        posenc_deberta_bucket(&v3, r[i], &b, NULL);
        posenc_deberta_index(&v3, r[i], &c, &p, NULL);
        if (b != bucket[i] || c != c2p[i] || p != p2c[i]) {
            bad++;
            printf("    r=%lld: bucket %lld c2p %d p2c %d, want %lld %d %d\n", (long long)r[i], (long long)b, c, p,
                   (long long)bucket[i], c2p[i], p2c[i]);
        }
    }
    CHECK(bad == 0, "v3 (256, 512): the 13 worked examples of posenc.h 5.3b (%d wrong)", bad);
    CHECK(posenc_deberta_span(&v3) == 256, "v3 span = 256 (table 512 rows)");
    posenc_deberta_params v1 = dp(0, 512);
    CHECK(posenc_deberta_span(&v1) == 512, "unbucketed span = max_relative_positions 512");
}

/* Every |r| <= 2^20 against the long double reference and the listed flips. */
static void full_range(int32_t buckets, int32_t max_rel, const flip *flips, size_t nflips) {
    posenc_deberta_params p = dp(buckets, max_rel);
    const int64_t n = (int64_t)1 << 20, mid = buckets / 2;
    const long double denom = logl((long double)(max_rel - 1) / (long double)mid);
    int64_t far = 0, near = 0, far_bad = 0, near_bad = 0, flips_seen = 0, sym_bad = 0, mono_bad = 0, index_bad = 0;
    int64_t prev = -1, span = posenc_deberta_span(&p);
    const char *math = "?";
    bool mkl = posenc_torch_math(&math, NULL, NULL) == POSENC_OK && strcmp(math, "mkl-vml") == 0;
    if (buckets == 256) printf("  float32 log: %s (POSENC_TORCH_MKL %s)\n", math, mkl ? "set" : "unset");
    for (int64_t r = 0; r <= n; r++) {
        int64_t b = 0, bm = 0;
        int32_t c2p = 0, p2c = 0;
        posenc_deberta_bucket(&p, r, &b, NULL);
        posenc_deberta_bucket(&p, -r, &bm, NULL);
        posenc_deberta_index(&p, r, &c2p, &p2c, NULL);
        if (bm != -b) sym_bad++;
        if (b < prev) mono_bad++;
        prev = b;
        int64_t wc = b + span < 0 ? 0 : b + span > 2 * span - 1 ? 2 * span - 1 : b + span;
        int64_t wp = -b + span < 0 ? 0 : -b + span > 2 * span - 1 ? 2 * span - 1 : -b + span;
        if (c2p != wc || p2c != wp) index_bad++;
        int64_t want;
        if (r <= mid) {
            want = r;
            far++;
        } else {
            long double x = logl((long double)r / (long double)mid) / denom * (long double)(mid - 1);
            want = (int64_t)ceill(x) + mid;
            long double gap = fabsl(x - roundl(x));
            if (gap > ldexpl(x, -18)) {
                far++;
                if (b != want) {
                    if (far_bad++ < 5) printf("    r=%lld: %lld, reference %lld (x = %.12Lf)\n", (long long)r,
                                              (long long)b, (long long)want, x);
                }
                continue;
            }
            near++;
            for (size_t k = 0; k < nflips; k++)
                if (flips[k].r == r) want = flips[k].bucket, flips_seen++;
            if (buckets == 256 && !mkl)
                for (size_t k = 0; k < 2; k++)
                    if (v3_sleef[k].r == r) want = v3_sleef[k].bucket;
        }
        if (b != want) {
            if (near_bad++ < 5) printf("    r=%lld: %lld, want %lld\n", (long long)r, (long long)b, (long long)want);
        }
    }
    CHECK(far_bad == 0, "(%d, %d): %lld distances away from a boundary = ceil(logl quotient) + mid (%lld wrong)",
          buckets, max_rel, (long long)far, (long long)far_bad);
    CHECK(near_bad == 0 && flips_seen == (int64_t)nflips,
          "(%d, %d): %lld near-boundary distances = real arithmetic, except the %zu listed torch float32 values "
          "(%lld wrong, %lld listed seen)", buckets, max_rel, (long long)near, nflips, (long long)near_bad,
          (long long)flips_seen);
    CHECK(sym_bad == 0, "(%d, %d): bucket(-r) = -bucket(r) for |r| <= 2^20 (%lld not)", buckets, max_rel,
          (long long)sym_bad);
    CHECK(mono_bad == 0, "(%d, %d): buckets never decrease with r (%lld drops)", buckets, max_rel, (long long)mono_bad);
    CHECK(index_bad == 0, "(%d, %d): c2p = clamp(bucket + span), p2c = clamp(span - bucket) in [0, %lld] (%lld wrong)",
          buckets, max_rel, (long long)(2 * span - 1), (long long)index_bad);
}

static void test_unbucketed(void) {
    posenc_deberta_params v1 = dp(0, 512);
    int bad = 0;
    for (int64_t r = -3000; r <= 3000; r++) {
        int64_t b = 0;
        int32_t c = 0, p = 0;
        posenc_deberta_bucket(&v1, r, &b, NULL);
        posenc_deberta_index(&v1, r, &c, &p, NULL);
        int64_t wc = r + 512 < 0 ? 0 : r + 512 > 1023 ? 1023 : r + 512;
        int64_t wp = 512 - r < 0 ? 0 : 512 - r > 1023 ? 1023 : 512 - r;
        if (b != r || c != wc || p != wp) bad++;
    }
    CHECK(bad == 0, "no buckets (v1, 512): bucket = r, c2p = clamp(r + 512, 0, 1023), p2c = clamp(512 - r) (%d wrong)",
          bad);
    int64_t b = 0;
    posenc_deberta_params v3 = dp(256, 512);
    posenc_deberta_bucket(&v3, ((int64_t)1 << 62) - 1, &b, NULL);
    int64_t bn = 0;
    posenc_deberta_bucket(&v3, -(((int64_t)1 << 62) - 1), &bn, NULL);
    CHECK(b > 1000 && b < 5000 && bn == -b, "v3 at r = 2^62 - 1: bucket %lld (finite, mirrored %lld)", (long long)b,
          (long long)bn);
}

static void test_matrix(void) {
    posenc_deberta_params p = dp(8, 16);
    int64_t out[24 * 24];
    int bad = 0;
    for (int what = 0; what < 3; what++) {
        posenc_status st = posenc_deberta_matrix_i64(&p, (posenc_deberta_output)what, 24, 24, out, 24 * 24, NULL);
        if (st != POSENC_OK) bad++;
        for (int64_t i = 0; i < 24; i++)
            for (int64_t j = 0; j < 24; j++) {
                int64_t b = 0;
                int32_t c = 0, q = 0;
                posenc_deberta_bucket(&p, i - j, &b, NULL);
                posenc_deberta_index(&p, i - j, &c, &q, NULL);
                int64_t want = what == 0 ? b : what == 1 ? c : q;
                if (out[i * 24 + j] != want) bad++;
            }
    }
    CHECK(bad == 0, "(8, 16) 24 x 24 matrices (relative, c2p, p2c) = the scalar functions at r = i - j (%d wrong)", bad);
    posenc_deberta_matrix_i64(&p, POSENC_DEBERTA_C2P, 1, 24, out, 24, NULL);
    CHECK(out[0] == 8 && out[1] == 7 && out[4] == 4 && out[23] == 0,
          "(8, 16) c2p row of query 0: keys 0, 1, 4, 23 -> rows %lld %lld %lld %lld (want 8 7 4 0)", (long long)out[0],
          (long long)out[1], (long long)out[4], (long long)out[23]);
}

static void expect(posenc_status got, posenc_status want, const posenc_error *e, const char *text, const char *what) {
    CHECK(got == want && strstr(e->message, text) != NULL, "%s refused (%d): %s", what, (int)got, e->message);
}

static void test_errors(void) {
    posenc_error e = {0};
    int64_t b, out[4];
    int32_t c;
    posenc_deberta_params p;
    p = dp(1, 512);
    expect(posenc_deberta_bucket(&p, 3, &b, &e), POSENC_ERR_INVALID_ARGUMENT, &e, "got 1 (mid = 0", "buckets 1");
    p = dp(-1, 512);
    expect(posenc_deberta_bucket(&p, 3, &b, &e), POSENC_ERR_INVALID_ARGUMENT, &e, "got -1", "buckets -1");
    p = dp(256, 0);
    expect(posenc_deberta_bucket(&p, 3, &b, &e), POSENC_ERR_INVALID_ARGUMENT, &e, "max_relative_positions must be in "
           "1..2^30, got 0", "max_relative_positions 0");
    p = dp(256, 129);
    expect(posenc_deberta_bucket(&p, 3, &b, &e), POSENC_ERR_INVALID_ARGUMENT, &e, "exceed position_buckets / 2 + 1 = "
           "129, got 129", "max_relative_positions 129 with 256 buckets");
    p = dp(256, 512);
    expect(posenc_deberta_bucket(&p, (int64_t)1 << 62, &b, &e), POSENC_ERR_INVALID_ARGUMENT, &e, "|r| < 2^62",
           "r = 2^62");
    expect(posenc_deberta_index(&p, 0, NULL, NULL, &e), POSENC_ERR_NULL_POINTER, &e, "both be NULL", "no outputs");
    expect(posenc_deberta_bucket(NULL, 0, &b, &e), POSENC_ERR_NULL_POINTER, &e, "must not be NULL", "NULL params");
    expect(posenc_deberta_matrix_i64(&p, POSENC_DEBERTA_C2P, 2, 3, out, 4, &e), POSENC_ERR_BUFFER_TOO_SMALL, &e,
           "out_count 4 < query_len x key_len = 6", "small buffer");
    expect(posenc_deberta_matrix_i64(&p, (posenc_deberta_output)7, 2, 2, out, 4, &e), POSENC_ERR_INVALID_ARGUMENT, &e,
           "got 7", "unknown output");
    expect(posenc_deberta_matrix_i64(&p, POSENC_DEBERTA_C2P, 0, 2, out, 4, &e), POSENC_ERR_INVALID_ARGUMENT, &e,
           "query_len must be in 1..2^31, got 0", "query_len 0");
    posenc_status st = posenc_deberta_index(&p, 5, &c, NULL, NULL);
    CHECK(st == POSENC_OK && c == 261, "c2p alone (p2c NULL): r=5 -> %d", c);
}

int main(void) {
    test_examples();
    full_range(256, 512, v3_flips, sizeof v3_flips / sizeof v3_flips[0]);
    full_range(8, 16, small_flips, sizeof small_flips / sizeof small_flips[0]);
    test_unbucketed();
    test_matrix();
    test_errors();
    return check_finish();
}
