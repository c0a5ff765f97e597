/* alibi.c: ALiBi slopes and the dense / per-row bias generators.
 *
 * The generators are deliberately small scalar loops: they are the reference
 * that SIMD versions (kernels family) are checked against. */
#include "bias_internal.h"
#include "../common/kernels.h"

#include "../common/torch_math.h"

/* Largest power of two <= n (n >= 1). */
static int32_t floor_power_of_two(int32_t n) {
    int32_t c = 1;
    while (c <= n / 2) c *= 2;
    return c;
}

static posenc_status check_slope_request(int32_t heads, double max_bias, int32_t head_offset,
                                         int32_t *total_heads, posenc_mode mode,
                                         size_t out_count, posenc_error *err) {
    RETURN_ERROR_IF(mode != POSENC_MODE_PRECISE && mode != POSENC_MODE_TORCH_COMPAT, err,
                    POSENC_ERR_INVALID_ARGUMENT, "unknown mode %d", (int)mode);
    RETURN_ERROR_IF(heads <= 0, err, POSENC_ERR_INVALID_ARGUMENT, "heads must be > 0, got %d",
                    heads);
    RETURN_ERROR_IF(!posenc_is_finite_(max_bias) || max_bias <= 0.0, err,
                    POSENC_ERR_INVALID_ARGUMENT, "max_bias must be finite and > 0, got %g",
                    max_bias);
    RETURN_ERROR_IF(head_offset < 0, err, POSENC_ERR_INVALID_ARGUMENT,
                    "head_offset must be >= 0, got %d", head_offset);
    if (*total_heads == 0) {
        RETURN_ERROR_IF(head_offset != 0, err, POSENC_ERR_INVALID_ARGUMENT,
                        "total_heads 0 means 'heads', which needs head_offset 0, got %d",
                        head_offset);
        *total_heads = heads;
    }
    RETURN_ERROR_IF(*total_heads < 0, err, POSENC_ERR_INVALID_ARGUMENT,
                    "total_heads must be >= 0, got %d", *total_heads);
    RETURN_ERROR_IF((int64_t)head_offset + heads > *total_heads, err, POSENC_ERR_INVALID_ARGUMENT,
                    "heads [%d, %lld) do not fit in total_heads %d", head_offset,
                    (long long)head_offset + heads, *total_heads);
    RETURN_ERROR_IF(out_count < (size_t)heads, err, POSENC_ERR_BUFFER_TOO_SMALL,
                    "output holds %zu slopes, need %d", out_count, heads);
    return POSENC_OK;
}

/* Exponent e with slope_h = 2^-e, as an exact rational evaluated in long double. */
static long double slope_exponent(int32_t h, double max_bias, int32_t total_heads) {
    int32_t c = floor_power_of_two(total_heads);
    if (h < c) return (long double)max_bias * (long double)(h + 1) / (long double)c;
    return (long double)max_bias * (long double)(2 * (h - c) + 1) / (2.0L * (long double)c);
}

/* BLOOM build_alibi_tensor: base = torch.tensor(2 ** (-B/c), float32) (a Python
 * double rounded to float32), slopes = torch.pow(base, k) in float32; the
 * extra heads use base 2 ** (-B/2c) and odd k. */
static float torch_compat_slope(int32_t h, double max_bias, int32_t total_heads) {
    int32_t c = floor_power_of_two(total_heads);
    if (h < c) return torch_powf((float)pow(2.0, -max_bias / c), (float)(h + 1));
    return torch_powf((float)pow(2.0, -max_bias / (2.0 * c)), (float)(2 * (h - c) + 1));
}

static double slope_of(int32_t h, double max_bias, int32_t total_heads, posenc_mode mode) {
    if (mode == POSENC_MODE_TORCH_COMPAT) return torch_compat_slope(h, max_bias, total_heads);
    return (double)exp2l(-slope_exponent(h, max_bias, total_heads));
}

/* A huge max_bias makes 2^(-B (h+1)/c) underflow to 0 (below 2^-1074 in f64,
 * 2^-149 in f32): that head would silently get no position signal at all.
 * Found by fuzz_bias; refused instead. */
#define SLOPE_UNDERFLOW_MESSAGE "max_bias %g makes the slope of head %d underflow to 0 (no position signal)"

posenc_status posenc_alibi_slopes_f64(int32_t heads, double max_bias, int32_t head_offset,
                                      int32_t total_heads, posenc_mode mode, double *out,
                                      size_t out_count, posenc_error *err) {
    RETURN_IF_NULL(out, err);
    FORWARD_IF_ERROR(check_slope_request(heads, max_bias, head_offset, &total_heads, mode,
                                         out_count, err));
    for (int32_t h = 0; h < heads; h++) {
        out[h] = slope_of(head_offset + h, max_bias, total_heads, mode);
        RETURN_ERROR_IF(!(out[h] > 0.0), err, POSENC_ERR_INVALID_ARGUMENT, SLOPE_UNDERFLOW_MESSAGE,
                        max_bias, head_offset + h);
    }
    return posenc_ok_(err);
}

posenc_status posenc_alibi_slopes_f32(int32_t heads, double max_bias, int32_t head_offset,
                                      int32_t total_heads, posenc_mode mode, float *out,
                                      size_t out_count, posenc_error *err) {
    RETURN_IF_NULL(out, err);
    FORWARD_IF_ERROR(check_slope_request(heads, max_bias, head_offset, &total_heads, mode,
                                         out_count, err));
    /* PRECISE: long double -> float is the single rounding (not via double) */
    for (int32_t h = 0; h < heads; h++) {
        out[h] = mode == POSENC_MODE_TORCH_COMPAT
                     ? torch_compat_slope(head_offset + h, max_bias, total_heads)
                     : (float)exp2l(-slope_exponent(head_offset + h, max_bias, total_heads));
        RETURN_ERROR_IF(!(out[h] > 0.0f), err, POSENC_ERR_INVALID_ARGUMENT, SLOPE_UNDERFLOW_MESSAGE,
                        max_bias, head_offset + h);
    }
    return posenc_ok_(err);
}

static inline float bias_value(long double slope, posenc_alibi_form form, long double query,
                               long double key) {
    long double distance = key - query;
    if (form == POSENC_ALIBI_SYMMETRIC) return (float)(-slope * fabsl(distance));
    return (float)(slope * distance);
}

static posenc_status check_form(posenc_alibi_form form, posenc_error *err) {
    RETURN_ERROR_IF(form != POSENC_ALIBI_CAUSAL && form != POSENC_ALIBI_SYMMETRIC, err,
                    POSENC_ERR_INVALID_ARGUMENT,
                    "ALiBi form must be CAUSAL (0) or SYMMETRIC (1), got %d", (int)form);
    return POSENC_OK;
}

static posenc_status alibi_bias(const float *slopes, int32_t heads, posenc_alibi_form form,
                                const posenc_positions *queries, const posenc_positions *keys,
                                float *out, size_t out_count, const posenc_exec *exec,
                                posenc_error *err) {
    RETURN_IF_NULL(slopes, err);
    RETURN_IF_NULL(out, err);
    RETURN_ERROR_IF(heads <= 0, err, POSENC_ERR_INVALID_ARGUMENT, "heads must be > 0, got %d",
                    heads);
    FORWARD_IF_ERROR(check_form(form, err));
    FORWARD_IF_ERROR(posenc_check_named_positions_(queries, "query", false, err));
    FORWARD_IF_ERROR(posenc_check_named_positions_(keys, "key", false, err));
    for (int32_t h = 0; h < heads; h++)
        RETURN_ERROR_IF(!isfinite(slopes[h]), err, POSENC_ERR_INVALID_ARGUMENT,
                        "slope of head %d must be finite, got %g", h, (double)slopes[h]);
    size_t need = 0;
    FORWARD_IF_ERROR(posenc_count3_((size_t)heads, queries->count, keys->count,
                                    "heads x query_len x key_len", &need, err));
    RETURN_ERROR_IF(out_count < need, err, POSENC_ERR_BUFFER_TOO_SMALL,
                    "output holds %zu elements, bias [%d x %zu x %zu] needs %zu", out_count,
                    heads, queries->count, keys->count, need);
    posenc_status fast = POSENC_OK; /* ranges: threaded Toeplitz fill, same values (bias_fast.c) */
    if (posenc_alibi_bias_fast_(slopes, heads, form, queries, keys, out, exec, &fast, err))
        return fast == POSENC_OK ? posenc_ok_(err) : fast;
    float *o = out;
    for (int32_t h = 0; h < heads; h++)
        for (size_t a = 0; a < queries->count; a++) {
            long double i = posenc_position_at_(queries, a);
            for (size_t b = 0; b < keys->count; b++)
                *o++ = bias_value(slopes[h], form, i, posenc_position_at_(keys, b));
        }
    return posenc_ok_(err);
}

posenc_status posenc_alibi_bias_f32(const float *slopes, int32_t heads, posenc_alibi_form form,
                                    const posenc_positions *queries,
                                    const posenc_positions *keys, float *out, size_t out_count,
                                    posenc_error *err) {
    return alibi_bias(slopes, heads, form, queries, keys, out, out_count, NULL, err);
}

posenc_status posenc_alibi_bias_f32_exec(const float *slopes, int32_t heads, posenc_alibi_form form,
                                         const posenc_positions *queries,
                                         const posenc_positions *keys, float *out, size_t out_count,
                                         const posenc_exec *exec, posenc_error *err) {
    return alibi_bias(slopes, heads, form, queries, keys, out, out_count, exec, err);
}

posenc_status posenc_alibi_bias_row_f32(float slope, posenc_alibi_form form,
                                        double query_position, const posenc_positions *keys,
                                        float *out, size_t out_count, posenc_error *err) {
    RETURN_IF_NULL(out, err);
    FORWARD_IF_ERROR(check_form(form, err));
    RETURN_ERROR_IF(!isfinite(slope), err, POSENC_ERR_INVALID_ARGUMENT,
                    "slope must be finite, got %g", (double)slope);
    RETURN_ERROR_IF(!posenc_is_finite_(query_position), err, POSENC_ERR_INVALID_ARGUMENT,
                    "query_position must be finite, got %g", query_position);
    FORWARD_IF_ERROR(posenc_check_named_positions_(keys, "key", false, err));
    RETURN_ERROR_IF(out_count < keys->count, err, POSENC_ERR_BUFFER_TOO_SMALL,
                    "output holds %zu elements, the row needs %zu", out_count, keys->count);
    for (size_t b = 0; b < keys->count; b++)
        out[b] = bias_value(slope, form, (long double)query_position, posenc_position_at_(keys, b));
    return posenc_ok_(err);
}

posenc_status posenc_alibi_key_positions_from_mask(const int64_t *mask, size_t len, int64_t *out,
                                                   size_t out_count, posenc_error *err) {
    RETURN_IF_NULL(mask, err);
    RETURN_IF_NULL(out, err);
    RETURN_ERROR_IF(len == 0, err, POSENC_ERR_INVALID_ARGUMENT, "mask length must be > 0, got 0");
    RETURN_ERROR_IF(out_count < len, err, POSENC_ERR_BUFFER_TOO_SMALL,
                    "output holds %zu positions, mask has %zu", out_count, len);
    for (size_t t = 0; t < len; t++)
        RETURN_ERROR_IF(mask[t] != 0 && mask[t] != 1, err, POSENC_ERR_INVALID_ARGUMENT,
                        "mask[%zu] must be 0 or 1, got %lld", t, (long long)mask[t]);
    int64_t seen = 0;
    for (size_t t = 0; t < len; t++) {
        seen += mask[t];
        out[t] = (seen - 1) * mask[t];
    }
    return posenc_ok_(err);
}
