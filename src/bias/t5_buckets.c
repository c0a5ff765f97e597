/* t5_buckets.c: T5 relative position buckets, the [q, k] bucket matrix and
 * the bias gather from a [num_buckets, heads] table.
 *
 * Why float32 and SLEEF: HF computes the logarithmic branch as
 *   max_exact + (torch.log(n.float() / max_exact) / math.log(max_distance / max_exact)
 *                * (num_buckets - max_exact)).to(torch.long)
 * on float32 tensors: the Python double divisor and the integer factor are
 * cast to float32 by type promotion, and torch's CPU log is SLEEF's 1-ULP
 * float32 log (Sleef_logf8_u10; its scalar purecfma twin returns the same
 * bits). Truncation makes every rounding step visible exactly when a value
 * lands on a bucket boundary (n = 16, 32, 64 for the T5 defaults), so we copy
 * the operation order instead of using double: with glibc's float64 log,
 * (1000 buckets, 100000, unidirectional) r = -19975 gives 847 where HF gives
 * 848 (tests/test_t5.c). */
#include "bias_internal.h"
#include "../common/kernels.h"

#include <stdlib.h>

/* Exported by libsleef, declared by sleef.h only under FP_FAST_FMA. */
float Sleef_logf1_u10purecfma(float);

void posenc_t5_params_default(posenc_t5_params *params) {
    if (!params) return;
    params->num_buckets = 32;
    params->max_distance = 128;
    params->bidirectional = 1;
}

posenc_status posenc_t5_check(const posenc_t5_params *params, posenc_error *err) {
    RETURN_IF_NULL(params, err);
    int32_t nb = params->num_buckets;
    RETURN_ERROR_IF(params->bidirectional != 0 && params->bidirectional != 1, err,
                    POSENC_ERR_INVALID_ARGUMENT, "bidirectional must be 0 or 1, got %d",
                    params->bidirectional);
    if (params->bidirectional) {
        RETURN_ERROR_IF(nb < 4, err, POSENC_ERR_INVALID_ARGUMENT,
                        "num_buckets must be >= 4 when bidirectional, got %d (each direction "
                        "needs an exact bucket; the reference divides by zero)", nb);
        RETURN_ERROR_IF(nb % 2 != 0, err, POSENC_ERR_INVALID_ARGUMENT,
                        "num_buckets must be even when bidirectional, got %d (the reference "
                        "uses %d per direction and never fills bucket %d)", nb, nb / 2, nb - 1);
    } else {
        RETURN_ERROR_IF(nb < 2, err, POSENC_ERR_INVALID_ARGUMENT,
                        "num_buckets must be >= 2, got %d (the reference divides by zero)", nb);
    }
    int32_t half = params->bidirectional ? nb / 2 : nb;
    int32_t max_exact = half / 2;
    RETURN_ERROR_IF(params->max_distance <= 0, err, POSENC_ERR_INVALID_ARGUMENT,
                    "max_distance must be > 0, got %d", params->max_distance);
    RETURN_ERROR_IF(params->max_distance <= max_exact, err, POSENC_ERR_INVALID_ARGUMENT,
                    "max_distance must be > max_exact = %d (num_buckets %d%s), got %d", max_exact,
                    nb, params->bidirectional ? ", bidirectional" : "", params->max_distance);
    return POSENC_OK;
}

/* The bucket of r for checked params (HF _relative_position_bucket). */
static int32_t bucket_of(const posenc_t5_params *p, int64_t r) {
    int32_t nb = p->num_buckets;
    int32_t ret = 0;
    int64_t n;
    if (p->bidirectional) {
        nb /= 2;
        if (r > 0) ret += nb;
        n = r < 0 ? -r : r;
    } else {
        n = r < 0 ? -r : 0;
    }
    int32_t max_exact = nb / 2;
    if (n < max_exact) return ret + (int32_t)n;
    /* float32 steps, in HF's order (see the file comment) */
    float ratio = (float)n / (float)max_exact;
    float divisor = (float)log((double)p->max_distance / (double)max_exact);
    float scaled = Sleef_logf1_u10purecfma(ratio) / divisor * (float)(nb - max_exact);
    /* Past the last bucket before converting: with max_distance just above
     * max_exact and many buckets, scaled can exceed 2^63 (fuzz_bias), where the
     * conversion is undefined (torch's x86 cast gives INT64_MIN, a negative bucket). */
    if ((double)scaled >= (double)(nb - 1 - max_exact)) return ret + nb - 1; /* both exact in double */
    int64_t large = (int64_t)max_exact + (int64_t)scaled; /* truncation toward zero */
    return ret + (int32_t)large;
}

posenc_status posenc_t5_bucket(const posenc_t5_params *params, int64_t relative_position,
                               int32_t *out_bucket, posenc_error *err) {
    RETURN_IF_NULL(out_bucket, err);
    FORWARD_IF_ERROR(posenc_t5_check(params, err));
    const int64_t limit = (int64_t)1 << 62;
    RETURN_ERROR_IF(relative_position <= -limit || relative_position >= limit, err,
                    POSENC_ERR_INVALID_ARGUMENT,
                    "relative_position must satisfy |r| < 2^62, got %lld",
                    (long long)relative_position);
    *out_bucket = bucket_of(params, relative_position);
    return posenc_ok_(err);
}

/* Shared checks of the matrix/bias functions: params, positions, output size. */
static posenc_status check_grid(const posenc_t5_params *params, const posenc_positions *queries,
                                const posenc_positions *keys, size_t planes, const void *out,
                                size_t out_count, posenc_error *err) {
    RETURN_IF_NULL(out, err);
    FORWARD_IF_ERROR(posenc_t5_check(params, err));
    FORWARD_IF_ERROR(posenc_check_named_positions_(queries, "query", true, err));
    FORWARD_IF_ERROR(posenc_check_named_positions_(keys, "key", true, err));
    size_t need = 0;
    FORWARD_IF_ERROR(posenc_count3_(planes, queries->count, keys->count,
                                    planes > 1 ? "heads x query_len x key_len"
                                               : "query_len x key_len",
                                    &need, err));
    RETURN_ERROR_IF(out_count < need, err, POSENC_ERR_BUFFER_TOO_SMALL,
                    "output holds %zu elements, [%zu x %zu x %zu] needs %zu", out_count, planes,
                    queries->count, keys->count, need);
    return POSENC_OK;
}

/* One loop for both widths: buckets are < num_buckets, so they fit either. */
static void fill_bucket_matrix(const posenc_t5_params *params, const posenc_positions *queries,
                               const posenc_positions *keys, int32_t *out32, int64_t *out64) {
    for (size_t a = 0; a < queries->count; a++) {
        int64_t i = posenc_integer_position_at_(queries, a);
        for (size_t b = 0; b < keys->count; b++) {
            int32_t bucket = bucket_of(params, posenc_integer_position_at_(keys, b) - i);
            if (out32) out32[a * keys->count + b] = bucket;
            else out64[a * keys->count + b] = bucket;
        }
    }
}

posenc_status posenc_t5_bucket_matrix_i32(const posenc_t5_params *params,
                                          const posenc_positions *queries,
                                          const posenc_positions *keys, int32_t *out,
                                          size_t out_count, posenc_error *err) {
    FORWARD_IF_ERROR(check_grid(params, queries, keys, 1, out, out_count, err));
    fill_bucket_matrix(params, queries, keys, out, NULL);
    return posenc_ok_(err);
}

posenc_status posenc_t5_bucket_matrix_i64(const posenc_t5_params *params,
                                          const posenc_positions *queries,
                                          const posenc_positions *keys, int64_t *out,
                                          size_t out_count, posenc_error *err) {
    FORWARD_IF_ERROR(check_grid(params, queries, keys, 1, out, out_count, err));
    fill_bucket_matrix(params, queries, keys, NULL, out);
    return posenc_ok_(err);
}

static posenc_status t5_bias(const posenc_t5_params *params, const float *table, int32_t heads,
                             const posenc_positions *queries, const posenc_positions *keys,
                             float *out, size_t out_count, const posenc_exec *exec,
                             posenc_error *err) {
    RETURN_IF_NULL(table, err);
    RETURN_ERROR_IF(heads <= 0, err, POSENC_ERR_INVALID_ARGUMENT, "heads must be > 0, got %d",
                    heads);
    FORWARD_IF_ERROR(check_grid(params, queries, keys, (size_t)heads, out, out_count, err));
    posenc_status fast = POSENC_OK; /* ranges: threaded Toeplitz fill, same values (bias_fast.c) */
    if (posenc_t5_bias_fast_(params, table, heads, queries, keys, out, exec, &fast, err))
        return fast == POSENC_OK ? posenc_ok_(err) : fast;
    size_t lq = queries->count, lk = keys->count;
    /* bucket once per (query, key), then scatter that table row over the heads */
    for (size_t a = 0; a < lq; a++) {
        int64_t i = posenc_integer_position_at_(queries, a);
        for (size_t b = 0; b < lk; b++) {
            int32_t bucket = bucket_of(params, posenc_integer_position_at_(keys, b) - i);
            const float *row = table + (size_t)bucket * (size_t)heads;
            for (int32_t h = 0; h < heads; h++) out[((size_t)h * lq + a) * lk + b] = row[h];
        }
    }
    return posenc_ok_(err);
}

posenc_status posenc_t5_bias_f32(const posenc_t5_params *params, const float *table,
                                 int32_t heads, const posenc_positions *queries,
                                 const posenc_positions *keys, float *out, size_t out_count,
                                 posenc_error *err) {
    return t5_bias(params, table, heads, queries, keys, out, out_count, NULL, err);
}

posenc_status posenc_t5_bias_f32_exec(const posenc_t5_params *params, const float *table,
                                      int32_t heads, const posenc_positions *queries,
                                      const posenc_positions *keys, float *out, size_t out_count,
                                      const posenc_exec *exec, posenc_error *err) {
    return t5_bias(params, table, heads, queries, keys, out, out_count, exec, err);
}
