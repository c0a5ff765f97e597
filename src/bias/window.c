/* window.c: the windowed 2D relative position bias of Swin, BEiT and SwinV2 (posenc.h 5.3c): which learned row
 * each (query, key) patch pair of a window reads, and SwinV2's log-spaced coordinates fed to its bias MLP.
 *
 * Why float32 step by step in the coordinates: transformers builds them on a float32 tensor with in-place
 * division, * 8, abs + 1, log2 and / log2(8), each rounded to float32; copying the steps gives its bits. */
#include "bias_internal.h"

#include <math.h>

static posenc_status check_side(int32_t side, const char *name, posenc_error *err) {
    RETURN_ERROR_IF(side < 1 || side > POSENC_WINDOW_MAX, err, POSENC_ERR_INVALID_ARGUMENT,
                    "%s must be in 1..%d patches, got %d", name, POSENC_WINDOW_MAX, (int)side);
    return POSENC_OK;
}

int64_t posenc_window_table_rows(int32_t window_height, int32_t window_width, int cls) {
    if (window_height < 1 || window_height > POSENC_WINDOW_MAX || window_width < 1 || window_width > POSENC_WINDOW_MAX)
        return 0;
    return (int64_t)(2 * window_height - 1) * (2 * window_width - 1) + (cls ? 3 : 0);
}

posenc_status posenc_window_relative_index_i64(int32_t window_height, int32_t window_width, int cls, int64_t *out,
                                               size_t out_count, posenc_error *err) {
    FORWARD_IF_ERROR(check_side(window_height, "window_height", err));
    FORWARD_IF_ERROR(check_side(window_width, "window_width", err));
    RETURN_IF_NULL(out, err);
    int64_t area = (int64_t)window_height * window_width, n = area + (cls ? 1 : 0);
    RETURN_ERROR_IF(n * n > ((int64_t)1 << 31), err, POSENC_ERR_INVALID_ARGUMENT,
                    "window %d x %d%s gives an index matrix of %lld x %lld entries (over 2^31)", (int)window_height,
                    (int)window_width, cls ? " + cls" : "", (long long)n, (long long)n);
    RETURN_ERROR_IF(out_count < (size_t)(n * n), err, POSENC_ERR_BUFFER_TOO_SMALL,
                    "out_count %zu is less than the %lld x %lld index matrix", out_count, (long long)n,
                    (long long)n);
    int64_t width = 2 * (int64_t)window_width - 1, rows = posenc_window_table_rows(window_height, window_width, 0);
    int64_t lead = cls ? 1 : 0;
    for (int64_t i = 0; i < area; i++) {
        int64_t yi = i / window_width, xi = i % window_width;
        int64_t *row = out + (i + lead) * n + lead;
        for (int64_t j = 0; j < area; j++) {
            int64_t yj = j / window_width, xj = j % window_width;
            row[j] = (yi - yj + window_height - 1) * width + (xi - xj + window_width - 1);
        }
    }
    if (cls) { /* BEiT: cls to token, token to cls, cls to cls after the offsets' rows */
        for (int64_t j = 0; j < n; j++) out[j] = rows;
        for (int64_t i = 1; i < n; i++) out[i * n] = rows + 1;
        out[0] = rows + 2;
    }
    return posenc_ok_(err);
}

/* One coordinate: d / (P - 1) (P = 0: no division), * 8, sign * log2(|t| + 1) / 3, each step in float32. */
static float log_coord(int32_t d, int32_t divisor) {
    float t = (float)d;
    if (divisor > 0) t = t / (float)divisor;
    t = t * 8.0f;
    float a = fabsf(t) + 1.0f;
    float l = (float)log2((double)a); /* double's log2 rounded once: float32's correctly rounded log2 here */
    float s = t > 0.0f ? 1.0f : t < 0.0f ? -1.0f : 0.0f;
    return s * l / 3.0f;
}

posenc_status posenc_window_log_coords_f32(int32_t window_height, int32_t window_width, int32_t pretrained_height,
                                           int32_t pretrained_width, float *out, size_t out_count,
                                           posenc_error *err) {
    FORWARD_IF_ERROR(check_side(window_height, "window_height", err));
    FORWARD_IF_ERROR(check_side(window_width, "window_width", err));
    RETURN_ERROR_IF(pretrained_height < 0 || pretrained_height == 1 || pretrained_height > POSENC_WINDOW_MAX, err,
                    POSENC_ERR_INVALID_ARGUMENT,
                    "pretrained_height must be 0 (none) or 2..%d, got %d%s", POSENC_WINDOW_MAX, (int)pretrained_height,
                    pretrained_height == 1 ? " (the coordinates divide by pretrained - 1 = 0)" : "");
    RETURN_ERROR_IF(pretrained_width < 0 || pretrained_width == 1 || pretrained_width > POSENC_WINDOW_MAX, err,
                    POSENC_ERR_INVALID_ARGUMENT,
                    "pretrained_width must be 0 (none) or 2..%d, got %d%s", POSENC_WINDOW_MAX, (int)pretrained_width,
                    pretrained_width == 1 ? " (the coordinates divide by pretrained - 1 = 0)" : "");
    RETURN_ERROR_IF((pretrained_height > 0) != (pretrained_width > 0), err, POSENC_ERR_INVALID_ARGUMENT,
                    "pretrained_height %d and pretrained_width %d: give both or neither", (int)pretrained_height,
                    (int)pretrained_width);
    /* HF tests the height only, then divides both sides: a window 1 wide under a taller one divides 0 by 0 */
    RETURN_ERROR_IF(pretrained_height == 0 && window_height > 1 && window_width == 1, err,
                    POSENC_ERR_INVALID_ARGUMENT,
                    "window_width 1 under window_height %d: the coordinates divide by window_width - 1 = 0",
                    (int)window_height);
    RETURN_IF_NULL(out, err);
    int64_t rows = posenc_window_table_rows(window_height, window_width, 0);
    RETURN_ERROR_IF(out_count < (size_t)(2 * rows), err, POSENC_ERR_BUFFER_TOO_SMALL,
                    "out_count %zu is less than the %lld x 2 coordinates", out_count, (long long)rows);
    int32_t div_h = pretrained_height > 0 ? pretrained_height - 1 : window_height > 1 ? window_height - 1 : 0;
    int32_t div_w = pretrained_height > 0 ? pretrained_width - 1 : window_height > 1 ? window_width - 1 : 0;
    int64_t r = 0;
    for (int32_t dy = -(window_height - 1); dy < window_height; dy++)
        for (int32_t dx = -(window_width - 1); dx < window_width; dx++, r++) {
            out[2 * r] = log_coord(dy, div_h);
            out[2 * r + 1] = log_coord(dx, div_w);
        }
    return posenc_ok_(err);
}

posenc_status posenc_window_abs_index_i64(int32_t resolution, int32_t resolution_out, int32_t stride, int64_t *out,
                                          size_t out_count, posenc_error *err) {
    FORWARD_IF_ERROR(check_side(resolution, "resolution", err));
    RETURN_ERROR_IF(stride < 1 || stride > resolution, err, POSENC_ERR_INVALID_ARGUMENT,
                    "stride must be in 1..resolution %d, got %d", (int)resolution, (int)stride);
    RETURN_ERROR_IF(resolution_out != (resolution - 1) / stride + 1, err, POSENC_ERR_INVALID_ARGUMENT,
                    "resolution_out must be (resolution - 1) / stride + 1 = %d, got %d",
                    (int)((resolution - 1) / stride + 1), (int)resolution_out);
    RETURN_IF_NULL(out, err);
    int64_t nk = (int64_t)resolution * resolution, nq = (int64_t)resolution_out * resolution_out;
    RETURN_ERROR_IF(nq * nk > ((int64_t)1 << 31), err, POSENC_ERR_INVALID_ARGUMENT,
                    "resolution %d gives an index matrix of %lld x %lld entries (over 2^31)", (int)resolution,
                    (long long)nq, (long long)nk);
    RETURN_ERROR_IF(out_count < (size_t)(nq * nk), err, POSENC_ERR_BUFFER_TOO_SMALL,
                    "out_count %zu is less than the %lld x %lld index matrix", out_count, (long long)nq,
                    (long long)nk);
    for (int64_t q = 0; q < nq; q++) {
        int64_t a = q / resolution_out * stride, b = q % resolution_out * stride;
        for (int64_t k = 0; k < nk; k++) {
            int64_t dy = a - k / resolution, dx = b - k % resolution;
            out[q * nk + k] = (dy < 0 ? -dy : dy) * resolution + (dx < 0 ? -dx : dx);
        }
    }
    return posenc_ok_(err);
}
