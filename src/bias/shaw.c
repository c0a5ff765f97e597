/* shaw.c: Shaw et al. relative positions (tensor2tensor
 * _generate_relative_positions_matrix and _generate_relative_positions_embeddings):
 * the clipped index matrix and the gather of [2k+1, depth] tables. */
#include "bias_internal.h"

#include <string.h>

/* The clip both entry points take (one check, one message). */
static posenc_status check_clip(int32_t clip, posenc_error *err) {
    RETURN_ERROR_IF(clip < 0, err, POSENC_ERR_INVALID_ARGUMENT, "clip k must be >= 0, got %d", clip);
    /* 2k must fit int32: k = 2^30 gave index 2^31 = -2^31 (found by fuzz_bias) */
    RETURN_ERROR_IF(clip >= (1 << 30), err, POSENC_ERR_LIMIT, "clip k must be < 2^30, got %d", clip);
    return POSENC_OK;
}

posenc_status posenc_shaw_relative_indices_i32(int32_t clip, const posenc_positions *queries,
                                               const posenc_positions *keys, int32_t *out,
                                               size_t out_count, posenc_error *err) {
    RETURN_IF_NULL(out, err);
    FORWARD_IF_ERROR(check_clip(clip, err));
    FORWARD_IF_ERROR(posenc_check_named_positions_(queries, "query", true, err));
    FORWARD_IF_ERROR(posenc_check_named_positions_(keys, "key", true, err));
    size_t need = 0;
    FORWARD_IF_ERROR(
        posenc_count3_(1, queries->count, keys->count, "query_len x key_len", &need, err));
    RETURN_ERROR_IF(out_count < need, err, POSENC_ERR_BUFFER_TOO_SMALL,
                    "output holds %zu elements, [%zu x %zu] needs %zu", out_count,
                    queries->count, keys->count, need);
    for (size_t a = 0; a < queries->count; a++) {
        int64_t i = posenc_integer_position_at_(queries, a);
        for (size_t b = 0; b < keys->count; b++) {
            int64_t d = posenc_integer_position_at_(keys, b) - i;
            if (d < -clip) d = -clip;
            if (d > clip) d = clip;
            out[a * keys->count + b] = (int32_t)(d + clip);
        }
    }
    return posenc_ok_(err);
}

posenc_status posenc_shaw_gather_f32(const int32_t *indices, size_t count, int32_t clip,
                                     const float *table, int32_t depth, float *out,
                                     size_t out_count, posenc_error *err) {
    RETURN_IF_NULL(indices, err);
    RETURN_IF_NULL(table, err);
    RETURN_IF_NULL(out, err);
    FORWARD_IF_ERROR(check_clip(clip, err));
    RETURN_ERROR_IF(depth <= 0, err, POSENC_ERR_INVALID_ARGUMENT, "depth must be > 0, got %d",
                    depth);
    RETURN_ERROR_IF(count == 0, err, POSENC_ERR_INVALID_ARGUMENT,
                    "index count must be > 0, got 0");
    size_t need = 0;
    FORWARD_IF_ERROR(posenc_checked_count_(count, (size_t)depth, "count x depth", &need, err));
    RETURN_ERROR_IF(out_count < need, err, POSENC_ERR_BUFFER_TOO_SMALL,
                    "output holds %zu elements, [%zu x %d] needs %zu", out_count, count, depth,
                    need);
    for (size_t t = 0; t < count; t++)
        RETURN_ERROR_IF(indices[t] < 0 || indices[t] > 2 * clip, err, POSENC_ERR_OUT_OF_RANGE,
                        "index %zu must be in [0, 2k] = [0, %d], got %d", t, 2 * clip,
                        indices[t]);
    for (size_t t = 0; t < count; t++)
        memcpy(out + t * (size_t)depth, table + (size_t)indices[t] * (size_t)depth,
               (size_t)depth * sizeof(float));
    return posenc_ok_(err);
}
