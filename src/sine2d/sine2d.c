/* sine2d.c: DETR's fixed 2D sine table (posenc.h 6f). The TORCH_COMPAT path copies the float32 steps of
 * transformers' *SinePositionEmbedding.build_sine_position_embedding (5.18), because the table is built in float32
 * there and every rounding (the normalized position, the exponent, torch.pow, the quotient) shows in the output. */
#include "../common/internal.h"
#include "../common/torch_math.h"
#include "../common/torch_vec.h"

#include <math.h>
#include <stdlib.h>

#define SINE2D_MAX_FEATS (1 << 20)
#define SINE2D_MAX_SIDE ((int64_t)1 << 24)

void posenc_sine2d_params_default(posenc_sine2d_params *params, int32_t num_pos_feats) {
    if (!params) return;
    posenc_sine2d_params p = {0};
    p.num_pos_feats = num_pos_feats;
    p.temperature_y = p.temperature_x = 10000.0;
    p.normalize = 1;
    p.offset = 0.0;
    p.eps = 1e-6;
    p.scale = 2.0 * 3.14159265358979323846;
    p.layout = POSENC_SINE2D_DETR;
    p.mode = POSENC_MODE_PRECISE;
    *params = p;
}

posenc_status posenc_sine2d_check(const posenc_sine2d_params *p, posenc_error *err) {
    RETURN_ERROR_IF(!p, err, POSENC_ERR_NULL_POINTER, "sine2d: params is NULL");
    RETURN_ERROR_IF(p->num_pos_feats < 2 || p->num_pos_feats > SINE2D_MAX_FEATS || p->num_pos_feats % 2 != 0, err,
                    POSENC_ERR_INVALID_ARGUMENT,
                    "sine2d: num_pos_feats %d must be even and in 2..2^20 (each axis takes sin, cos pairs)",
                    (int)p->num_pos_feats);
    RETURN_ERROR_IF(!isfinite(p->temperature_y) || p->temperature_y <= 0.0, err, POSENC_ERR_INVALID_ARGUMENT,
                    "sine2d: temperature_y %g must be finite and > 0", p->temperature_y);
    RETURN_ERROR_IF(!isfinite(p->temperature_x) || p->temperature_x <= 0.0, err, POSENC_ERR_INVALID_ARGUMENT,
                    "sine2d: temperature_x %g must be finite and > 0", p->temperature_x);
    RETURN_ERROR_IF(p->normalize != 0 && p->normalize != 1, err, POSENC_ERR_INVALID_ARGUMENT,
                    "sine2d: normalize %d must be 0 or 1", (int)p->normalize);
    if (p->normalize) {
        RETURN_ERROR_IF(!isfinite(p->scale), err, POSENC_ERR_INVALID_ARGUMENT, "sine2d: scale %g must be finite",
                        p->scale);
        RETURN_ERROR_IF(!isfinite(p->eps) || p->eps < 0.0, err, POSENC_ERR_INVALID_ARGUMENT,
                        "sine2d: eps %g must be finite and >= 0", p->eps);
        RETURN_ERROR_IF(!isfinite(p->offset) || p->offset < 0.0 || p->offset >= 1.0, err,
                        POSENC_ERR_INVALID_ARGUMENT, "sine2d: offset %g must be in [0, 1)", p->offset);
    }
    RETURN_ERROR_IF(p->exponent_by_product != 0 && p->exponent_by_product != 1, err, POSENC_ERR_INVALID_ARGUMENT,
                    "sine2d: exponent_by_product %d must be 0 or 1", (int)p->exponent_by_product);
    RETURN_ERROR_IF(p->layout != POSENC_SINE2D_DETR && p->layout != POSENC_SINE2D_RTDETR, err,
                    POSENC_ERR_INVALID_ARGUMENT, "sine2d: layout %d is not one posenc computes (0: DETR, 1: RT-DETR)",
                    (int)p->layout);
    RETURN_ERROR_IF(p->layout == POSENC_SINE2D_RTDETR && p->normalize, err, POSENC_ERR_INVALID_ARGUMENT,
                    "sine2d: normalize %d with the RT-DETR layout, whose positions are 0-based grid indices",
                    (int)p->normalize);
    RETURN_ERROR_IF(p->layout == POSENC_SINE2D_RTDETR && p->mode == POSENC_MODE_TORCH_COMPAT, err,
                    POSENC_ERR_INVALID_ARGUMENT,
                    "sine2d: mode TORCH_COMPAT with the RT-DETR layout: the framework builds that table in float64, "
                    "which PRECISE reproduces; there are no float32 steps to copy");
    RETURN_ERROR_IF(p->mode != POSENC_MODE_PRECISE && p->mode != POSENC_MODE_TORCH_COMPAT, err,
                    POSENC_ERR_INVALID_ARGUMENT, "sine2d: mode %d must be PRECISE (0) or TORCH_COMPAT (1)",
                    (int)p->mode);
    return POSENC_OK;
}

/* PRECISE: one axis of n positions, F channels, written at out[k * stride + i * step]. */
static void axis_precise(const posenc_sine2d_params *p, double temperature, int64_t n, float *out, size_t plane,
                         size_t step_i, size_t count_j, size_t step_j) {
    int32_t f = p->num_pos_feats;
    for (int32_t k = 0; k < f; k++) {
        double d = pow(temperature, (double)(2 * (k / 2)) / (double)f);
        for (int64_t i = 0; i < n; i++) {
            double pos = (double)(i + 1);
            if (p->normalize) pos = (pos - p->offset) / ((double)n + p->eps) * p->scale;
            double a = pos / d;
            float v = (float)((k & 1) ? cos(a) : sin(a));
            float *row = out + (size_t)k * plane + (size_t)i * step_i;
            for (size_t j = 0; j < count_j; j++) row[j * step_j] = v;
        }
    }
}

/* RT-DETR: rows y * W + x of 2F channels, [sin y | cos y | sin x | cos x], each Q = F/2 wide, in double. */
static void rtdetr_table(const posenc_sine2d_params *p, int64_t height, int64_t width, float *out) {
    int32_t f = p->num_pos_feats, q = f / 2;
    size_t row = 2 * (size_t)f;
    for (int axis = 0; axis < 2; axis++) {
        double t = axis ? p->temperature_x : p->temperature_y;
        int64_t n = axis ? width : height;
        for (int32_t j = 0; j < q; j++) {
            double w = 1.0 / pow(t, (double)j / (double)q); /* omega = 1 / T^(j/Q), as the framework forms it */
            for (int64_t i = 0; i < n; i++) {
                double a = (double)i * w;
                float sv = (float)sin(a), cv = (float)cos(a);
                size_t first = (size_t)axis * (size_t)f + (size_t)j;
                /* every cell of row i (y axis) or column i (x axis) */
                int64_t cells = axis ? height : width;
                for (int64_t c = 0; c < cells; c++) {
                    size_t r = axis ? (size_t)c * (size_t)width + (size_t)i : (size_t)i * (size_t)width + (size_t)c;
                    out[r * row + first] = sv;
                    out[r * row + first + (size_t)q] = cv;
                }
            }
        }
    }
}

/* TORCH_COMPAT: the float32 steps (posenc.h 6f); dim holds F floats of scratch. */
static void axis_torch(const posenc_sine2d_params *p, double temperature, int64_t n, float *dim, float *out,
                       size_t plane, size_t step_i, size_t count_j, size_t step_j) {
    int32_t f = p->num_pos_feats;
    float two_over_f = (float)(2.0 / (double)f); /* python's 2 / embedding_dim, then a float32 scalar */
    for (int32_t k = 0; k < f; k++) {
        float half = (float)(k / 2);
        dim[k] = p->exponent_by_product ? half * two_over_f : (2.0f * half) / (float)f;
    }
    torch_pow_base_f32_(torch_cpu_capability_get_(), (float)temperature, dim, dim, (size_t)f);
    float denom = (float)n + (float)p->eps;
    for (int64_t i = 0; i < n; i++) {
        float pos = (float)(i + 1);
        if (p->normalize) pos = ((pos - (float)p->offset) / denom) * (float)p->scale;
        for (int32_t k = 0; k < f; k++) {
            float a = pos / dim[k];
            float v = (k & 1) ? torch_cosf(a) : torch_sinf(a);
            float *row = out + (size_t)k * plane + (size_t)i * step_i;
            for (size_t j = 0; j < count_j; j++) row[j * step_j] = v;
        }
    }
}

/* A temperature so small that p / d_k overflows gives inf angles and NaN sines: said, never returned silently. */
static posenc_status finite_table(const posenc_sine2d_params *p, const float *out, size_t n, posenc_error *err) {
    for (size_t i = 0; i < n; i++)
        RETURN_ERROR_IF(!isfinite(out[i]), err, POSENC_ERR_NONFINITE,
                        "sine2d: element %zu is not finite (temperature_y %g, temperature_x %g: an angle overflowed "
                        "float32)", i, p->temperature_y, p->temperature_x);
    return POSENC_OK;
}

posenc_status posenc_sine2d_table_f32(const posenc_sine2d_params *p, int64_t height, int64_t width, float *out,
                                      size_t out_count, posenc_error *err) {
    FORWARD_IF_ERROR(posenc_sine2d_check(p, err));
    RETURN_ERROR_IF(height < 1 || height > SINE2D_MAX_SIDE, err, POSENC_ERR_INVALID_ARGUMENT,
                    "sine2d: height %lld must be in 1..2^24", (long long)height);
    RETURN_ERROR_IF(width < 1 || width > SINE2D_MAX_SIDE, err, POSENC_ERR_INVALID_ARGUMENT,
                    "sine2d: width %lld must be in 1..2^24", (long long)width);
    RETURN_ERROR_IF(!out, err, POSENC_ERR_NULL_POINTER, "sine2d: out is NULL");
    size_t plane = (size_t)height * (size_t)width; /* <= 2^48 */
    size_t channels = 2 * (size_t)p->num_pos_feats;
    RETURN_ERROR_IF(plane > SIZE_MAX / channels, err, POSENC_ERR_SIZE_OVERFLOW,
                    "sine2d: 2 x %d channels x %lld x %lld elements overflow size_t", (int)p->num_pos_feats,
                    (long long)height, (long long)width);
    RETURN_ERROR_IF(out_count < plane * channels, err, POSENC_ERR_BUFFER_TOO_SMALL,
                    "sine2d: out_count %zu is less than the %zu elements of a %d x %lld x %lld table", out_count,
                    plane * channels, (int)channels, (long long)height, (long long)width);
    float *x_out = out + (size_t)p->num_pos_feats * plane;
    size_t w = (size_t)width;
    if (p->layout == POSENC_SINE2D_RTDETR) {
        rtdetr_table(p, height, width, out);
        return finite_table(p, out, plane * channels, err);
    }
    if (p->mode == POSENC_MODE_PRECISE) {
        axis_precise(p, p->temperature_y, height, out, plane, w, w, 1);    /* y: a whole row of the map per value */
        axis_precise(p, p->temperature_x, width, x_out, plane, 1, (size_t)height, w); /* x: a column per value */
        return finite_table(p, out, plane * channels, err);
    }
    float *dim = malloc((size_t)p->num_pos_feats * sizeof *dim);
    RETURN_ERROR_IF(!dim, err, POSENC_ERR_OUT_OF_MEMORY, "sine2d: no memory for %d frequencies", (int)p->num_pos_feats);
    axis_torch(p, p->temperature_y, height, dim, out, plane, w, w, 1);
    axis_torch(p, p->temperature_x, width, dim, x_out, plane, 1, (size_t)height, w);
    free(dim);
    return finite_table(p, out, plane * channels, err);
}
