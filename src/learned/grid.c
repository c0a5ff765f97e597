/* grid.c: sinusoid tables over 2-D / 3-D grids (images, video), as the tatp22
 * package and the third source article split the channels between axes, grid
 * position builders, and Transformer-XL's relative sinusoid R.
 *
 * Both tatp22 and Transformer-XL form inv_k = 1 / 10000^(arange(0, c, 2)/c) in
 * float32 torch (pow, not the tutorial's exp); TORCH_COMPAT repeats those
 * float32 steps with SLEEF's powf/sinf/cosf, the functions torch's vectorized
 * CPU kernels call (see torch_math.h). */
#include "../common/internal.h"

#include "../common/torch_math.h"
#include <stdlib.h>

/* inv_k = 1 / powf(10000, f32(2k) / c) in float32, k < c/2 (tatp22, XL). */
static float torch_inv_freq(int32_t k, int32_t c) {
    float exponent = (float)(2 * k) / (float)c;
    return 1.0f / torch_powf(10000.0f, exponent);
}

static posenc_status check_mode_dtype(posenc_mode mode, posenc_dtype dtype, posenc_error *err) {
    RETURN_ERROR_IF(mode != POSENC_MODE_PRECISE && mode != POSENC_MODE_TORCH_COMPAT, err,
                    POSENC_ERR_INVALID_ARGUMENT, "unknown mode %d", (int)mode);
    RETURN_ERROR_IF(dtype != POSENC_DTYPE_F32 && dtype != POSENC_DTYPE_F64 &&
                        dtype != POSENC_DTYPE_F16 && dtype != POSENC_DTYPE_BF16,
                    err, POSENC_ERR_INVALID_ARGUMENT,
                    "table dtype must be f32, f64, f16 or bf16, got %s", posenc_dtype_name(dtype));
    return POSENC_OK;
}

/* ---- Transformer-XL R ---------------------------------------------------- */

posenc_status posenc_xl_relative_table(int32_t dim, size_t klen, int64_t clamp_len, posenc_mode mode,
                                       posenc_dtype dtype, void *out, size_t out_count,
                                       posenc_error *err) {
    RETURN_IF_NULL(out, err);
    FORWARD_IF_ERROR(check_mode_dtype(mode, dtype, err));
    RETURN_ERROR_IF(dim <= 0 || dim % 2 != 0, err, POSENC_ERR_INVALID_ARGUMENT,
                    "dim must be even and > 0 for the XL [sin | cos] layout, got %d", dim);
    RETURN_ERROR_IF(klen == 0, err, POSENC_ERR_INVALID_ARGUMENT, "klen must be > 0, got 0");
    RETURN_ERROR_IF(klen > ((size_t)1 << 53), err, POSENC_ERR_LIMIT,
                    "klen must be <= 2^53 (exact distances), got %zu", klen);
    size_t need;
    FORWARD_IF_ERROR(posenc_table_count(klen, dim, &need, err));
    RETURN_ERROR_IF(out_count < need, err, POSENC_ERR_BUFFER_TOO_SMALL,
                    "output holds %zu elements, R [%zu x %d] needs %zu", out_count, klen, dim, need);
    int64_t *dist = malloc(sizeof *dist * klen);
    RETURN_ERROR_IF(!dist, err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %zu distances", klen);
    for (size_t r = 0; r < klen; r++) {
        int64_t p = (int64_t)(klen - 1 - r);
        dist[r] = clamp_len >= 0 && p > clamp_len ? clamp_len : p;
    }
    posenc_status st = POSENC_OK;
    if (mode == POSENC_MODE_PRECISE) {
        posenc_sinusoid_params params;
        posenc_sinusoid_params_default(&params, dim);
        params.layout = POSENC_LAYOUT_HALF;
        posenc_positions pos = posenc_positions_ids(dist, klen);
        st = posenc_sinusoid_table(&params, &pos, dtype, out, out_count, err);
    } else {
        int32_t half = dim / 2;
        for (size_t r = 0; r < klen; r++) {
            float p = (float)dist[r]; /* pos_seq is a float32 arange */
            for (int32_t k = 0; k < half; k++) {
                float angle = p * torch_inv_freq(k, dim); /* torch.ger: one float32 product */
                size_t base = r * (size_t)dim;
                posenc_store_real_(out, dtype, base + (size_t)k, (double)torch_sinf(angle));
                posenc_store_real_(out, dtype, base + (size_t)(half + k), (double)torch_cosf(angle));
            }
        }
    }
    free(dist);
    return st == POSENC_OK ? posenc_ok_(err) : st;
}

/* ---- multi-dimensional grids ---------------------------------------------- */

posenc_status posenc_grid_axis_channels(int axes, int32_t channels, posenc_grid_split split,
                                        int32_t *out_c, posenc_error *err) {
    RETURN_IF_NULL(out_c, err);
    RETURN_ERROR_IF(axes < 1 || axes > 3, err, POSENC_ERR_INVALID_ARGUMENT,
                    "number of grid axes must be 1, 2 or 3, got %d", axes);
    RETURN_ERROR_IF(channels <= 0, err, POSENC_ERR_INVALID_ARGUMENT,
                    "channels must be > 0, got %d", channels);
    RETURN_ERROR_IF(channels > (1 << 28), err, POSENC_ERR_LIMIT, "channels must be <= 2^28, got %d",
                    channels);
    if (split == POSENC_GRID_SPLIT_TATP22) {
        /* c = ceil(C / (2n)) * 2 */
        *out_c = ((channels + 2 * axes - 1) / (2 * axes)) * 2;
    } else if (split == POSENC_GRID_SPLIT_EVEN) {
        RETURN_ERROR_IF(channels % (2 * axes) != 0, err, POSENC_ERR_INVALID_ARGUMENT,
                        "channels must be a multiple of %d for the even split over %d axes "
                        "(whole sin/cos pairs per axis), got %d",
                        2 * axes, axes, channels);
        *out_c = channels / axes;
    } else {
        return posenc_fail_(err, POSENC_ERR_INVALID_ARGUMENT, "unknown grid split %d", (int)split);
    }
    return POSENC_OK;
}

posenc_status posenc_grid_count(int axes, const size_t *shape, int32_t channels, size_t *out_count,
                                posenc_error *err) {
    RETURN_IF_NULL(shape, err);
    RETURN_IF_NULL(out_count, err);
    RETURN_ERROR_IF(axes < 1 || axes > 3, err, POSENC_ERR_INVALID_ARGUMENT,
                    "number of grid axes must be 1, 2 or 3, got %d", axes);
    RETURN_ERROR_IF(channels <= 0, err, POSENC_ERR_INVALID_ARGUMENT,
                    "channels must be > 0, got %d", channels);
    size_t n = (size_t)channels;
    for (int a = 0; a < axes; a++) {
        RETURN_ERROR_IF(shape[a] == 0, err, POSENC_ERR_INVALID_ARGUMENT,
                        "grid axis %d size must be > 0, got 0", a);
        RETURN_ERROR_IF(shape[a] > ((size_t)1 << 24), err, POSENC_ERR_LIMIT,
                        "grid axis %d size must be <= 2^24 (exact float32 positions), got %zu", a,
                        shape[a]);
        FORWARD_IF_ERROR(posenc_checked_count_(n, shape[a], "grid cells x channels", &n, err));
    }
    *out_count = n;
    return POSENC_OK;
}

posenc_status posenc_grid_positions(int axes, const size_t *shape, int64_t *out, size_t out_count,
                                    posenc_error *err) {
    RETURN_IF_NULL(out, err);
    size_t cells;
    FORWARD_IF_ERROR(posenc_grid_count(axes, shape, 1, &cells, err));
    size_t need;
    FORWARD_IF_ERROR(posenc_checked_count_(cells, (size_t)axes, "cells x axes", &need, err));
    RETURN_ERROR_IF(out_count < need, err, POSENC_ERR_BUFFER_TOO_SMALL,
                    "output holds %zu elements, [%zu cells x %d axes] needs %zu", out_count, cells,
                    axes, need);
    for (size_t i = 0; i < cells; i++) {
        size_t rest = i;
        for (int a = axes - 1; a >= 0; a--) {
            out[i * (size_t)axes + (size_t)a] = (int64_t)(rest % shape[a]);
            rest /= shape[a];
        }
    }
    return posenc_ok_(err);
}

/* emb[x][0..c-1] for x < size: interleaved sin/cos at w_k = 10000^(-2k/c), as doubles. */
static posenc_status axis_embedding(posenc_mode mode, int32_t c, size_t size, double *emb,
                                    posenc_error *err) {
    if (mode == POSENC_MODE_PRECISE) {
        posenc_sinusoid_params params;
        posenc_sinusoid_params_default(&params, c);
        posenc_positions pos = posenc_positions_range(0, size);
        return posenc_sinusoid_table_f64(&params, &pos, emb, size * (size_t)c, err);
    }
    for (int32_t k = 0; k < c / 2; k++) {
        float inv = torch_inv_freq(k, c);
        for (size_t x = 0; x < size; x++) {
            float angle = (float)x * inv; /* einsum("i,j->ij"): one float32 product */
            emb[x * (size_t)c + 2 * (size_t)k] = torch_sinf(angle);
            emb[x * (size_t)c + 2 * (size_t)k + 1] = torch_cosf(angle);
        }
    }
    return POSENC_OK;
}

posenc_status posenc_grid_table(int axes, const size_t *shape, int32_t channels,
                                posenc_grid_split split, posenc_mode mode, posenc_dtype dtype,
                                void *out, size_t out_count, posenc_error *err) {
    RETURN_IF_NULL(out, err);
    FORWARD_IF_ERROR(check_mode_dtype(mode, dtype, err));
    int32_t c;
    FORWARD_IF_ERROR(posenc_grid_axis_channels(axes, channels, split, &c, err));
    size_t need;
    FORWARD_IF_ERROR(posenc_grid_count(axes, shape, channels, &need, err));
    RETURN_ERROR_IF(out_count < need, err, POSENC_ERR_BUFFER_TOO_SMALL,
                    "output holds %zu elements, the grid table needs %zu", out_count, need);
    double *emb[3] = {NULL, NULL, NULL};
    posenc_status st = POSENC_OK;
    for (int a = 0; a < axes && st == POSENC_OK; a++) {
        emb[a] = malloc(sizeof(double) * shape[a] * (size_t)c); /* shape[a] <= 2^24, c <= 2^28 */
        st = emb[a] ? axis_embedding(mode, c, shape[a], emb[a], err)
                    : posenc_fail_(err, POSENC_ERR_OUT_OF_MEMORY,
                                   "cannot allocate axis %d table [%zu x %d]", a, shape[a], c);
    }
    if (st == POSENC_OK) {
        size_t cells = need / (size_t)channels;
        size_t x[3] = {0, 0, 0};
        for (size_t i = 0; i < cells; i++) {
            size_t rest = i;
            for (int a = axes - 1; a >= 0; a--) {
                x[a] = rest % shape[a];
                rest /= shape[a];
            }
            size_t base = i * (size_t)channels;
            /* axes concatenated in order, surplus cut from the end */
            for (int32_t ch = 0; ch < channels; ch++) {
                int a = ch / c;
                posenc_store_real_(out, dtype, base + (size_t)ch,
                                   emb[a][x[a] * (size_t)c + (size_t)(ch - a * c)]);
            }
        }
    }
    for (int a = 0; a < 3; a++) free(emb[a]);
    return st == POSENC_OK ? posenc_ok_(err) : st;
}
