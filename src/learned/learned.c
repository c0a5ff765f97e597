/* learned.c: learned absolute position tables (BERT, GPT-2, RoBERTa): the
 * reproducible N(0, sigma) initializer, forward gather, backward scatter-add,
 * RoBERTa positions from token ids, and resizing by linear interpolation.
 * The recipe of the initializer is spelled out in posenc.h so that anyone can
 * rebuild a table from its seed without this library. */
#include "../common/internal.h"

#include <string.h>

#define SPLITMIX_GAMMA 0x9E3779B97F4A7C15ULL

static inline uint64_t splitmix64(uint64_t x) {
    x += SPLITMIX_GAMMA;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

/* Draw n: uniform in (0, 1) from the top 53 bits, offset by half a step so
 * that log(u) is always finite. Counter-based: no state carried between draws. */
static inline double uniform_draw(uint64_t seed, uint64_t n) {
    uint64_t bits = splitmix64(seed + n * SPLITMIX_GAMMA) >> 11;
    return ((double)bits + 0.5) * 0x1p-53;
}

static posenc_status check_table_shape(size_t rows, int32_t dim, size_t out_count, size_t *need,
                                       posenc_error *err) {
    RETURN_ERROR_IF(rows == 0, err, POSENC_ERR_INVALID_ARGUMENT, "table rows must be > 0, got 0");
    RETURN_ERROR_IF(dim <= 0, err, POSENC_ERR_INVALID_ARGUMENT, "dim must be > 0, got %d", dim);
    FORWARD_IF_ERROR(posenc_checked_count_(rows, (size_t)dim, "rows x dim", need, err));
    RETURN_ERROR_IF(out_count < *need, err, POSENC_ERR_BUFFER_TOO_SMALL,
                    "output holds %zu elements, table [%zu x %d] needs %zu", out_count, rows, dim,
                    *need);
    return POSENC_OK;
}

posenc_status posenc_learned_init_f32(uint64_t seed, double sigma, int64_t padding_idx, size_t rows,
                                      int32_t dim, float *table, size_t out_count,
                                      posenc_error *err) {
    RETURN_IF_NULL(table, err);
    RETURN_ERROR_IF(!isfinite(sigma) || sigma < 0, err, POSENC_ERR_INVALID_ARGUMENT,
                    "sigma must be finite and >= 0, got %g", sigma);
    size_t n;
    FORWARD_IF_ERROR(check_table_shape(rows, dim, out_count, &n, err));
    RETURN_ERROR_IF(padding_idx != POSENC_NO_PADDING &&
                        (padding_idx < 0 || (uint64_t)padding_idx >= rows),
                    err, POSENC_ERR_OUT_OF_RANGE,
                    "padding_idx must be in [0, %zu) or -1 (none), got %lld", rows,
                    (long long)padding_idx);
    const double two_pi = 6.283185307179586476925286766559;
    for (size_t j = 0; 2 * j < n; j++) {
        double r = sqrt(-2.0 * log(uniform_draw(seed, 2 * (uint64_t)j)));
        double t = two_pi * uniform_draw(seed, 2 * (uint64_t)j + 1);
        table[2 * j] = (float)(sigma * (r * cos(t)));
        if (2 * j + 1 < n) table[2 * j + 1] = (float)(sigma * (r * sin(t)));
        /* a huge sigma overflows float32: refuse rather than return inf cells */
        for (size_t i = 2 * j; i < n && i <= 2 * j + 1; i++)
            RETURN_ERROR_IF(!isfinite(table[i]), err, POSENC_ERR_NONFINITE,
                            "cell [%zu, %zu] = sigma x draw = %g x %.3g overflows float32 (largest 3.4e38); "
                            "sigma must be far below 3.4e38",
                            i / (size_t)dim, i % (size_t)dim, sigma, i == 2 * j ? r * cos(t) : r * sin(t));
    }
    if (padding_idx != POSENC_NO_PADDING)
        memset(table + (size_t)padding_idx * (size_t)dim, 0, sizeof(float) * (size_t)dim);
    return posenc_ok_(err);
}

/* Resolve position i against the table under `policy`; message names i and the value. */
static posenc_status resolve_row(int64_t p, size_t i, size_t rows, posenc_past_end policy,
                                 size_t *row, posenc_error *err) {
    RETURN_ERROR_IF(p < 0, err, POSENC_ERR_OUT_OF_RANGE, "position %zu must be >= 0, got %lld", i,
                    (long long)p);
    if ((uint64_t)p < rows) {
        *row = (size_t)p;
        return POSENC_OK;
    }
    RETURN_ERROR_IF(policy != POSENC_PAST_END_CLAMP, err, POSENC_ERR_OUT_OF_RANGE,
                    "position %zu is %lld, past the end of a learned table of %zu rows "
                    "(max %zu); use past_end=clamp, or resize the table",
                    i, (long long)p, rows, rows - 1);
    *row = rows - 1;
    return POSENC_OK;
}

/* Every position resolves to a row (the error names the first that does not). */
static posenc_status check_rows(const int64_t *positions, size_t count, size_t rows, posenc_past_end policy,
                                posenc_error *err) {
    for (size_t i = 0; i < count; i++) {
        size_t row;
        FORWARD_IF_ERROR(resolve_row(positions[i], i, rows, policy, &row, err));
    }
    return POSENC_OK;
}

static posenc_status check_policy(posenc_past_end policy, posenc_error *err) {
    RETURN_ERROR_IF(policy != POSENC_PAST_END_ERROR && policy != POSENC_PAST_END_CLAMP &&
                        policy != POSENC_PAST_END_RESIZE,
                    err, POSENC_ERR_INVALID_ARGUMENT, "unknown past-the-end policy %d", (int)policy);
    return POSENC_OK;
}

posenc_status posenc_learned_gather_f32(const float *table, size_t rows, int32_t dim,
                                        const int64_t *positions, size_t count,
                                        posenc_past_end policy, float *out, size_t out_count,
                                        posenc_error *err) {
    RETURN_IF_NULL(table, err);
    RETURN_IF_NULL(positions, err);
    RETURN_IF_NULL(out, err);
    FORWARD_IF_ERROR(check_policy(policy, err));
    RETURN_ERROR_IF(count == 0, err, POSENC_ERR_INVALID_ARGUMENT,
                    "number of positions must be > 0, got 0");
    size_t table_n, need;
    FORWARD_IF_ERROR(check_table_shape(rows, dim, SIZE_MAX, &table_n, err));
    FORWARD_IF_ERROR(posenc_checked_count_(count, (size_t)dim, "positions x dim", &need, err));
    RETURN_ERROR_IF(out_count < need, err, POSENC_ERR_BUFFER_TOO_SMALL,
                    "output holds %zu elements, [%zu x %d] needs %zu", out_count, count, dim, need);
    /* check everything first: a failed call leaves out untouched */
    FORWARD_IF_ERROR(check_rows(positions, count, rows, policy, err));
    for (size_t i = 0; i < count; i++) {
        size_t row = 0;
        resolve_row(positions[i], i, rows, policy, &row, NULL);
        memcpy(out + i * (size_t)dim, table + row * (size_t)dim, sizeof(float) * (size_t)dim);
    }
    return posenc_ok_(err);
}

posenc_status posenc_learned_backward_f32(const float *grad_out, const int64_t *positions,
                                          size_t count, int32_t dim, posenc_past_end policy,
                                          int64_t padding_idx, float *grad_table, size_t rows,
                                          posenc_error *err) {
    RETURN_IF_NULL(grad_out, err);
    RETURN_IF_NULL(positions, err);
    RETURN_IF_NULL(grad_table, err);
    FORWARD_IF_ERROR(check_policy(policy, err));
    size_t table_n, grad_n;
    FORWARD_IF_ERROR(check_table_shape(rows, dim, SIZE_MAX, &table_n, err));
    FORWARD_IF_ERROR(posenc_checked_count_(count, (size_t)dim, "positions x dim", &grad_n, err));
    FORWARD_IF_ERROR(check_rows(positions, count, rows, policy, err));
    for (size_t i = 0; i < count; i++) {
        size_t row = 0;
        resolve_row(positions[i], i, rows, policy, &row, NULL);
        if (padding_idx >= 0 && row == (uint64_t)padding_idx) continue;
        float *dst = grad_table + row * (size_t)dim;
        const float *src = grad_out + i * (size_t)dim;
        for (int32_t c = 0; c < dim; c++) dst[c] += src[c];
    }
    return posenc_ok_(err);
}

posenc_status posenc_positions_from_input_ids(const int64_t *ids, const uint8_t *mask, size_t batch,
                                              size_t seq, int64_t pad_id, int64_t past_length,
                                              int64_t *out, size_t out_count, posenc_error *err) {
    RETURN_IF_NULL(ids, err);
    RETURN_IF_NULL(out, err);
    RETURN_ERROR_IF(batch == 0 || seq == 0, err, POSENC_ERR_INVALID_ARGUMENT,
                    "batch and seq must be > 0, got %zu x %zu", batch, seq);
    RETURN_ERROR_IF(pad_id < 0, err, POSENC_ERR_INVALID_ARGUMENT, "pad_id must be >= 0, got %lld",
                    (long long)pad_id);
    RETURN_ERROR_IF(past_length < 0, err, POSENC_ERR_INVALID_ARGUMENT,
                    "past_length must be >= 0, got %lld", (long long)past_length);
    size_t n;
    FORWARD_IF_ERROR(posenc_checked_count_(batch, seq, "batch x seq", &n, err));
    RETURN_ERROR_IF(out_count < n, err, POSENC_ERR_BUFFER_TOO_SMALL,
                    "output holds %zu positions, [%zu x %zu] needs %zu", out_count, batch, seq, n);
    /* the largest position is pad + past + seq: keep it far from int64 overflow */
    RETURN_ERROR_IF((uint64_t)pad_id + (uint64_t)past_length + (uint64_t)seq >= ((uint64_t)1 << 62),
                    err, POSENC_ERR_LIMIT,
                    "pad_id + past_length + seq must be < 2^62, got %lld + %lld + %zu",
                    (long long)pad_id, (long long)past_length, seq);
    for (size_t b = 0; b < batch; b++) {
        int64_t running = 0;
        for (size_t t = 0; t < seq; t++) {
            size_t i = b * seq + t;
            int real = mask ? mask[i] != 0 : ids[i] != pad_id;
            running += real;
            out[i] = real ? running + past_length + pad_id : pad_id;
        }
    }
    return posenc_ok_(err);
}

posenc_status posenc_learned_resize_f32(const float *table, size_t rows, int32_t dim, size_t keep,
                                        float *out, size_t new_rows, size_t out_count,
                                        posenc_error *err) {
    RETURN_IF_NULL(table, err);
    RETURN_IF_NULL(out, err);
    size_t in_n, need;
    FORWARD_IF_ERROR(check_table_shape(rows, dim, SIZE_MAX, &in_n, err));
    RETURN_ERROR_IF(keep >= rows, err, POSENC_ERR_INVALID_ARGUMENT,
                    "keep (prefix rows left alone) must be < rows %zu, got %zu", rows, keep);
    RETURN_ERROR_IF(keep >= new_rows, err, POSENC_ERR_INVALID_ARGUMENT,
                    "new rows must be > keep %zu, got %zu", keep, new_rows);
    FORWARD_IF_ERROR(check_table_shape(new_rows, dim, out_count, &need, err));
    RETURN_ERROR_IF(table == out, err, POSENC_ERR_INVALID_ARGUMENT,
                    "resize cannot work in place (out == table)");
    /* j*(n-1) below must fit in 64 bits */
    RETURN_ERROR_IF(rows > ((size_t)1 << 31) || new_rows > ((size_t)1 << 31), err, POSENC_ERR_LIMIT,
                    "resize supports up to 2^31 rows, got %zu -> %zu", rows, new_rows);
    size_t d = (size_t)dim;
    memcpy(out, table, sizeof(float) * keep * d);
    size_t n = rows - keep, m = new_rows - keep;
    const float *body = table + keep * d;
    float *dst = out + keep * d;
    for (size_t j = 0; j < m; j++) {
        /* x = j (n-1)/(m-1) as an exact rational: integer part and fraction */
        size_t lo = 0;
        double f = 0;
        if (m > 1 && n > 1) {
            uint64_t num = (uint64_t)j * (uint64_t)(n - 1);
            lo = (size_t)(num / (m - 1));
            f = (double)(num % (m - 1)) / (double)(m - 1);
        }
        size_t hi = lo + 1 < n ? lo + 1 : lo;
        for (size_t c = 0; c < d; c++) {
            double a = body[lo * d + c], b = body[hi * d + c];
            dst[j * d + c] = (float)(f == 0 ? a : a + f * (b - a));
        }
    }
    return posenc_ok_(err);
}

posenc_status posenc_learned_read(const char *path, size_t max_bytes, posenc_array *out,
                                  posenc_error *err) {
    RETURN_IF_NULL(path, err);
    RETURN_IF_NULL(out, err);
    memset(out, 0, sizeof *out);
    posenc_array raw;
    FORWARD_IF_ERROR(posenc_npy_read(path, max_bytes, &raw, err));
    posenc_status st = POSENC_OK;
    if (raw.ndim != 2 || raw.count == 0)
        st = posenc_fail_(err, POSENC_ERR_INVALID_ARGUMENT,
                          "learned table %s must be a non-empty 2-D [rows x dim] array, got rank %d "
                          "with %zu elements", path, raw.ndim, raw.count);
    else if (raw.dtype != POSENC_DTYPE_F32 && raw.dtype != POSENC_DTYPE_F64 &&
             raw.dtype != POSENC_DTYPE_F16)
        st = posenc_fail_(err, POSENC_ERR_INVALID_ARGUMENT,
                          "learned table %s must hold floats (f32, f64 or f16), got %s", path,
                          posenc_dtype_name(raw.dtype));
    else if (raw.shape[1] > INT32_MAX)
        st = posenc_fail_(err, POSENC_ERR_LIMIT, "learned table %s has %zu columns, more than 2^31-1",
                          path, raw.shape[1]);
    if (st != POSENC_OK || raw.dtype == POSENC_DTYPE_F32) {
        if (st == POSENC_OK) *out = raw;
        else posenc_array_free(&raw);
        return st == POSENC_OK ? posenc_ok_(err) : st;
    }
    posenc_array wide = {0};
    st = posenc_array_to_f64(&raw, &wide, err);
    if (st == POSENC_OK) st = posenc_array_create(out, POSENC_DTYPE_F32, 2, raw.shape, SIZE_MAX, err);
    if (st == POSENC_OK)
        for (size_t i = 0; i < raw.count; i++) ((float *)out->data)[i] = (float)((double *)wide.data)[i];
    posenc_array_free(&raw);
    posenc_array_free(&wide);
    return st == POSENC_OK ? posenc_ok_(err) : st;
}

posenc_status posenc_learned_write(const char *path, const float *table, size_t rows, int32_t dim,
                                   posenc_error *err) {
    RETURN_IF_NULL(path, err);
    RETURN_IF_NULL(table, err);
    size_t n;
    FORWARD_IF_ERROR(check_table_shape(rows, dim, SIZE_MAX, &n, err));
    /* a non-owning view: posenc_npy_write only reads the array */
    posenc_array view = {0};
    view.dtype = POSENC_DTYPE_F32;
    view.ndim = 2;
    view.shape[0] = rows;
    view.shape[1] = (size_t)dim;
    view.count = n;
    view.data = (void *)(uintptr_t)table;
    return posenc_npy_write(path, &view, err);
}
