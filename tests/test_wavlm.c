/* test_wavlm.c: WavLM's relative position buckets (posenc.h 5.2b) against values transformers 5.18's own
 * WavLMAttention._relative_positions_bucket gave (the defaults 320 / 800, and 1000 / 100000 where its float32 sum
 * max_exact + x rounds up past T5's bucket), T5's bucket everywhere else on a line, the matrix, and the errors. */
#include "check.h"

static void test_values(void) {
    /* WavLMAttention(num_buckets=320, max_distance=800)._relative_positions_bucket(torch.tensor(r)) */
    int64_t r[] = {-100000, -800, -799, -200, -81, -80, -79, -1, 0, 1, 79, 80, 81, 200, 799, 800, 100000};
    int32_t want[] = {159, 159, 159, 111, 80, 80, 79, 1, 0, 161, 239, 240, 240, 271, 319, 319, 319};
    posenc_t5_params p = {320, 800, 1};
    int bad = 0;
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++) {
        int32_t b = -1;
        posenc_wavlm_bucket(&p, r[i], &b, NULL);
        if (b != want[i]) bad++, printf("    r=%lld: %d, want %d\n", (long long)r[i], b, want[i]);
    }
    CHECK(bad == 0, "WavLM defaults (320 buckets, 800): 17 values of transformers' function, %d wrong", bad);
    /* num_buckets 1000, max_distance 100000: the four r in -100000..100000 where WavLM's bucket is T5's + 1 */
    posenc_t5_params q = {1000, 100000, 1};
    int64_t rq[] = {-54928, -11568, 11568, 54928};
    int32_t wq[] = {475, 410, 910, 975};
    bad = 0;
    for (size_t i = 0; i < 4; i++) {
        int32_t b = -1, t = -1;
        posenc_wavlm_bucket(&q, rq[i], &b, NULL);
        posenc_t5_bucket(&q, rq[i], &t, NULL);
        if (b != wq[i] || t != wq[i] - 1) bad++, printf("    r=%lld: wavlm %d t5 %d, want %d / %d\n",
                                                        (long long)rq[i], b, t, wq[i], wq[i] - 1);
    }
    CHECK(bad == 0, "1000 buckets, 100000: r = +-11568, +-54928 are T5's bucket + 1 (transformers), %d wrong", bad);
    /* elsewhere on the line the two agree (transformers: exactly 4 differences in -100000..100000) */
    int differ = 0;
    for (int64_t x = -100000; x <= 100000; x++) {
        int32_t b, t;
        posenc_wavlm_bucket(&q, x, &b, NULL);
        posenc_t5_bucket(&q, x, &t, NULL);
        differ += b != t;
    }
    CHECK(differ == 4, "1000 / 100000 over -100000..100000: %d buckets differ from T5's, transformers 4", differ);
}

static void test_matrix_and_errors(void) {
    posenc_t5_params p = {320, 800, 1};
    int64_t out[12];
    posenc_error e = {0};
    CHECK_STATUS(posenc_wavlm_bucket_matrix_i64(&p, 3, 4, out, 12, &e), POSENC_OK);
    int ok = 1;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 4; b++) {
            int32_t want;
            posenc_wavlm_bucket(&p, b - a, &want, NULL);
            ok &= out[a * 4 + b] == want;
        }
    CHECK(ok && out[0] == 0 && out[1] == 161 && out[4] == 1, "matrix [3, 4]: out[a][b] = bucket(b - a)");
    CHECK_STATUS(posenc_wavlm_bucket_matrix_i64(&p, 3, 4, out, 11, &e), POSENC_ERR_BUFFER_TOO_SMALL);
    CHECK(strstr(e.message, "needs 12") != NULL, "small buffer named: %s", e.message);
    CHECK_STATUS(posenc_wavlm_bucket_matrix_i64(&p, 0, 4, out, 12, &e), POSENC_ERR_INVALID_ARGUMENT);
    CHECK(strstr(e.message, "query_len") != NULL, "query_len 0 named: %s", e.message);
    posenc_t5_params causal = {320, 800, 0};
    int32_t b;
    CHECK_STATUS(posenc_wavlm_bucket(&causal, 1, &b, &e), POSENC_ERR_INVALID_ARGUMENT);
    CHECK(strstr(e.message, "bidirectional") != NULL, "bidirectional 0 refused: %s", e.message);
    posenc_t5_params odd = {321, 800, 1};
    CHECK_STATUS(posenc_wavlm_bucket(&odd, 1, &b, &e), POSENC_ERR_INVALID_ARGUMENT);
    CHECK(strstr(e.message, "321") != NULL, "odd num_buckets named: %s", e.message);
    CHECK_STATUS(posenc_wavlm_bucket(&p, (int64_t)1 << 62, &b, &e), POSENC_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(posenc_wavlm_bucket(NULL, 1, &b, &e), POSENC_ERR_NULL_POINTER);
    CHECK_STATUS(posenc_wavlm_bucket(&p, 1, NULL, &e), POSENC_ERR_NULL_POINTER);
}

int main(void) {
    test_values();
    test_matrix_and_errors();
    return check_finish();
}
