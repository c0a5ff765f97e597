/* t5_buckets.c: the T5 [q, k] bucket matrix and the bias gather from a
 * [num_buckets, heads] table, on top of t5_bucket.c's single bucket (its
 * comment says why the arithmetic is float32 and SLEEF). */
#include "bias_internal.h"
#include "../common/kernels.h"

#include <stdlib.h>

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
            int32_t bucket = posenc_t5_bucket_of_(params, posenc_integer_position_at_(keys, b) - i);
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
            int32_t bucket = posenc_t5_bucket_of_(params, posenc_integer_position_at_(keys, b) - i);
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
