/* rope_2d.c: 2-D RoPE over an image's patch grid (posenc.h section 4c):
 * Pixtral's alternating frequencies and Qwen2-VL's axial halves, in the patch
 * order the runtime feeds its attention. */
#include "rope_internal.h"

#include "../common/torch_vec.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ROPE2D_MAX_SIDE ((int64_t)1 << 20)

void posenc_rope2d_params_default(posenc_rope2d_params *params, int32_t head_dim) {
    if (!params) return;
    memset(params, 0, sizeof *params);
    params->kind = POSENC_ROPE2D_PIXTRAL;
    params->head_dim = head_dim;
    params->base = 10000.0;
    params->merge = 1;
    params->window = 0;
    params->mode = POSENC_MODE_PRECISE;
}

const char *posenc_rope2d_kind_name(posenc_rope2d_kind kind) {
    switch (kind) {
    case POSENC_ROPE2D_PIXTRAL: return "pixtral";
    case POSENC_ROPE2D_AXIAL: return "axial";
    case POSENC_ROPE2D_DINOV3: return "dinov3";
    }
    return "?";
}

posenc_status posenc_rope2d_check(const posenc_rope2d_params *p, posenc_error *err) {
    RETURN_ERROR_IF(!p, err, POSENC_ERR_NULL_POINTER, "2-D RoPE params are NULL");
    RETURN_ERROR_IF(p->kind != POSENC_ROPE2D_PIXTRAL && p->kind != POSENC_ROPE2D_AXIAL && p->kind != POSENC_ROPE2D_DINOV3,
                    err, POSENC_ERR_INVALID_ARGUMENT, "2-D RoPE kind %d is not pixtral (0), axial (1) or dinov3 (2)",
                    (int)p->kind);
    /* both runtimes split the D/2 pairs evenly between the axes (an odd split breaks their cat()) */
    RETURN_ERROR_IF(p->head_dim < 4 || p->head_dim > POSENC_ROPE_MAX_HEAD_DIM || p->head_dim % 4 != 0, err,
                    POSENC_ERR_INVALID_ARGUMENT,
                    "2-D RoPE head_dim %d must be a multiple of 4 in 4..%d (half the pairs per axis)", (int)p->head_dim,
                    POSENC_ROPE_MAX_HEAD_DIM);
    RETURN_ERROR_IF(!isfinite(p->base) || !(p->base > 1.0), err, POSENC_ERR_INVALID_ARGUMENT,
                    "2-D RoPE base %g must be finite and > 1", p->base);
    RETURN_ERROR_IF(p->merge < 1 || p->merge > 1024, err, POSENC_ERR_INVALID_ARGUMENT,
                    "2-D RoPE merge %d must be in 1..1024", (int)p->merge);
    RETURN_ERROR_IF(p->window < 0 || p->window > (1 << 20), err, POSENC_ERR_INVALID_ARGUMENT,
                    "2-D RoPE window %d must be in 0..2^20 (0: no windows)", (int)p->window);
    if (p->kind == POSENC_ROPE2D_DINOV3) { /* torch.arange(0, 1, 4 / D) has ceil(1 / (4 / D)) entries, in double */
        double entries = ceil(1.0 / (4.0 / (double)p->head_dim));
        RETURN_ERROR_IF(entries != (double)(p->head_dim / 4), err, POSENC_ERR_INVALID_ARGUMENT,
                        "2-D RoPE head_dim %d: DINOv3's torch.arange(0, 1, 4 / %d) has %.0f frequencies, not %d "
                        "(its cos/sin would not fit the head)", (int)p->head_dim, (int)p->head_dim, entries,
                        (int)(p->head_dim / 4));
        RETURN_ERROR_IF(p->merge != 1 || p->window != 0, err, POSENC_ERR_INVALID_ARGUMENT,
                        "2-D RoPE merge %d / window %d: DINOv3 orders its patches in raster order only", (int)p->merge,
                        (int)p->window);
    }
    RETURN_ERROR_IF(p->mode == POSENC_MODE_GGML, err, POSENC_ERR_UNSUPPORTED,
                    "2-D RoPE in ggml mode: posenc does not reproduce ggml's vision RoPE");
    RETURN_ERROR_IF(p->mode != POSENC_MODE_PRECISE && p->mode != POSENC_MODE_TORCH_COMPAT, err,
                    POSENC_ERR_INVALID_ARGUMENT, "2-D RoPE mode %d is not precise or torch-compat", (int)p->mode);
    return POSENC_OK;
}

/* The runtime's 1-D frequencies: Pixtral's D-channel f_i (i < D/2), Qwen2-VL's D/2-channel w_j (j < D/4). */
static posenc_status base_frequencies(const posenc_rope2d_params *p, long double *inv, size_t count,
                                      posenc_error *err) {
    if (p->kind == POSENC_ROPE2D_DINOV3) { /* w_j = 1 / base ** arange(0, 1, 4 / D), j < D/4 (count) */
        if (p->mode == POSENC_MODE_PRECISE) {
            for (size_t j = 0; j < count; j++) inv[j] = powl((long double)p->base, -4.0L * (long double)j / p->head_dim);
            return POSENC_OK;
        }
        float *e = malloc(2 * count * sizeof *e);
        RETURN_ERROR_IF(!e, err, POSENC_ERR_OUT_OF_MEMORY, "2-D RoPE: cannot allocate %zu frequencies", count);
        float *w = e + count;
        double step = 4.0 / (double)p->head_dim; /* arange: start + step * j in double, then float32 */
        for (size_t j = 0; j < count; j++) e[j] = (float)(step * (double)j);
        torch_pow_base_f32_(torch_cpu_capability_get_(), (float)p->base, e, w, count);
        for (size_t j = 0; j < count; j++) inv[j] = 1.0f / w[j];
        free(e);
        return POSENC_OK;
    }
    posenc_rope_params rp;
    posenc_rope_params_default(&rp, p->kind == POSENC_ROPE2D_PIXTRAL ? p->head_dim : p->head_dim / 2);
    rp.base = p->base;
    rp.mode = p->mode;
    return rope_frequencies_ld_(&rp, 0, inv, count, NULL, err);
}

/* Pair k's axis and frequency (index into the base frequencies). */
static void pair_of(const posenc_rope2d_params *p, int32_t k, int32_t *axis, int32_t *freq) {
    int32_t q = p->head_dim / 4;
    *axis = k >= q;
    int32_t j = k % q;
    *freq = p->kind == POSENC_ROPE2D_PIXTRAL ? 2 * j + *axis : j;
}

posenc_status posenc_rope2d_pair_map(const posenc_rope2d_params *p, int32_t *axis_of_pair, double *inv_freq,
                                     size_t out_count, posenc_error *err) {
    FORWARD_IF_ERROR(posenc_rope2d_check(p, err));
    size_t pairs = (size_t)p->head_dim / 2;
    RETURN_ERROR_IF(out_count < pairs, err, POSENC_ERR_BUFFER_TOO_SMALL,
                    "2-D RoPE pair map: out_count %zu < %zu pairs", out_count, pairs);
    long double *inv = malloc(pairs * sizeof *inv);
    RETURN_ERROR_IF(!inv, err, POSENC_ERR_OUT_OF_MEMORY, "2-D RoPE pair map: cannot allocate %zu frequencies", pairs);
    posenc_status st = base_frequencies(p, inv, p->kind == POSENC_ROPE2D_PIXTRAL ? pairs : pairs / 2, err);
    for (int32_t k = 0; st == POSENC_OK && k < (int32_t)pairs; k++) {
        int32_t a, f;
        pair_of(p, k, &a, &f);
        if (axis_of_pair) axis_of_pair[k] = a;
        if (inv_freq) inv_freq[k] = (double)inv[f];
    }
    free(inv);
    return st;
}

static posenc_status check_grid(const posenc_rope2d_params *p, int64_t rows, int64_t cols, posenc_error *err) {
    FORWARD_IF_ERROR(posenc_rope2d_check(p, err));
    RETURN_ERROR_IF(rows < 1 || rows > ROPE2D_MAX_SIDE, err, POSENC_ERR_INVALID_ARGUMENT,
                    "2-D RoPE rows %lld must be in 1..2^20", (long long)rows);
    RETURN_ERROR_IF(cols < 1 || cols > ROPE2D_MAX_SIDE, err, POSENC_ERR_INVALID_ARGUMENT,
                    "2-D RoPE cols %lld must be in 1..2^20", (long long)cols);
    RETURN_ERROR_IF(rows % p->merge || cols % p->merge, err, POSENC_ERR_INVALID_ARGUMENT,
                    "2-D RoPE grid %lld x %lld is not a multiple of merge %d on each side (the runtime's "
                    "spatial-merge reshape fails)", (long long)rows, (long long)cols, (int)p->merge);
    return POSENC_OK;
}

/* DINOv3's patch-centre coordinate of index i of n along an axis (get_patches_center_coordinates), exact, and as its
 * float32 steps give it: 2 * ((i + 0.5) / n) - 1 in [-1, 1]. */
static long double dinov3_coord(int64_t i, int64_t n) { return (long double)(2 * i + 1) / (long double)n - 1.0L; }
static float dinov3_coord_f32(int64_t i, int64_t n) { return 2.0f * ((float)i + 0.5f) / (float)n - 1.0f; }

/* Token t's (row, column) in the runtime's order. */
static void token_position(int64_t t, int64_t cols, int64_t m, int64_t *r, int64_t *c) {
    int64_t per_band = m * cols; /* tokens in a band of m rows */
    int64_t band = t / per_band, in_band = t % per_band;
    int64_t block = in_band / (m * m), in_block = in_band % (m * m);
    *r = band * m + in_block / m;
    *c = block * m + in_block % m;
}

/* Where the runtime puts merge-order token t: itself, or with windows (Qwen2.5-VL's get_vision_window_index) its
 * merge unit moved to the unit's rank in window order (windows of w x w units in raster order, the units of a window
 * in raster order, the windows of the last row / column cut short), the unit's m x m patches kept together. */
static size_t out_index(const posenc_rope2d_params *p, int64_t rows, int64_t cols, size_t t) {
    if (p->window == 0) return t;
    int64_t m = p->merge, w = p->window, uh_n = rows / m, uw_n = cols / m;
    int64_t u = (int64_t)t / (m * m), inner = (int64_t)t % (m * m), uh = u / uw_n, uw = u % uw_n;
    int64_t wh = uh / w, ww = uw / w;
    int64_t height = uh_n - wh * w < w ? uh_n - wh * w : w, width = uw_n - ww * w < w ? uw_n - ww * w : w;
    int64_t rank = wh * w * uw_n + ww * w * height + (uh - wh * w) * width + (uw - ww * w);
    return (size_t)(rank * m * m + inner);
}

posenc_status posenc_rope2d_positions(const posenc_rope2d_params *p, int64_t rows, int64_t cols, int64_t *out,
                                      size_t out_count, posenc_error *err) {
    FORWARD_IF_ERROR(check_grid(p, rows, cols, err));
    RETURN_ERROR_IF(!out, err, POSENC_ERR_NULL_POINTER, "2-D RoPE positions: out is NULL");
    size_t n = (size_t)rows * (size_t)cols;
    RETURN_ERROR_IF(out_count / 2 < n, err, POSENC_ERR_BUFFER_TOO_SMALL,
                    "2-D RoPE positions: out_count %zu < 2 x %zu tokens", out_count, n);
    for (size_t t = 0; t < n; t++) {
        size_t o = out_index(p, rows, cols, t);
        token_position((int64_t)t, cols, p->merge, out + 2 * o, out + 2 * o + 1);
    }
    return POSENC_OK;
}

/* TORCH_COMPAT: angle of flat element e of the tensor HF runs cos()/sin() over, [N, 2, width] with width D/2
 * (Pixtral: every base frequency reordered [f0, f2, .., f1, f3, ..] on both axes) or D/4 (Qwen2-VL: its w on
 * both axes); position_ids.float() times the float32 frequency, one rounding. */
static float torch_angle(const posenc_rope2d_params *p, const long double *inv, int64_t rows, int64_t cols, size_t e) {
    if (p->kind == POSENC_ROPE2D_DINOV3) { /* [N, D] = tile(2) of [N, 2 * D/4]: (2 pi * coord) * w, two roundings */
        size_t d = (size_t)p->head_dim, q = d / 4, t = e / d, c = e % d % (2 * q), a = c / q;
        int64_t r = (int64_t)t / cols, col = (int64_t)t % cols;
        float coord = a ? dinov3_coord_f32(col, cols) : dinov3_coord_f32(r, rows);
        return coord * (float)6.283185307179586 * (float)inv[c % q];
    }
    size_t q = (size_t)p->head_dim / 4, width = p->kind == POSENC_ROPE2D_PIXTRAL ? 2 * q : q;
    size_t t = e / (2 * width), a = e / width % 2, c = e % width;
    int64_t pos[2];
    token_position((int64_t)t, cols, p->merge, &pos[0], &pos[1]);
    size_t f = p->kind == POSENC_ROPE2D_PIXTRAL ? (c < q ? 2 * c : 2 * (c - q) + 1) : c;
    return (float)inv[f] * (float)pos[a];
}

static void precise_table(const posenc_rope2d_params *p, int64_t rows, int64_t cols, size_t n, const long double *inv,
                          long double *axis_inv, float *cos_out, float *sin_out) {
    size_t pairs = (size_t)p->head_dim / 2, q = pairs / 2;
    for (int32_t k = 0; k < (int32_t)pairs; k++) {
        int32_t a, f;
        pair_of(p, k, &a, &f);
        axis_inv[(size_t)a * q + (size_t)k % q] = inv[f];
        if (p->kind == POSENC_ROPE2D_DINOV3) axis_inv[(size_t)a * q + (size_t)k % q] *= 2.0L * 3.14159265358979323846264338327950288L;
    }
    for (size_t t = 0; t < n; t++) {
        int64_t pos[2];
        token_position((int64_t)t, cols, p->merge, &pos[0], &pos[1]);
        size_t o = out_index(p, rows, cols, t);
        long double at[2] = {(long double)pos[0], (long double)pos[1]};
        if (p->kind == POSENC_ROPE2D_DINOV3) { /* a coordinate in [-1, 1], the 2 pi folded into axis_inv */
            at[0] = dinov3_coord(pos[0], rows);
            at[1] = dinov3_coord(pos[1], cols);
        }
        for (size_t a = 0; a < 2; a++) /* pairs [a q, (a + 1) q) are axis a's, in frequency order */
            rope_cos_sin_f32_(POSENC_MODE_PRECISE, axis_inv + a * q, (int32_t)q, at[a], 1.0,
                              cos_out + o * pairs + a * q, sin_out + o * pairs + a * q);
    }
}

/* torch's blocks of `lanes` elements count from the tensor's first element and share a range reduction, so each
 * block is computed whole; element (t, a, c) lands in pair k of token t where the runtime's cat() puts it */
static void torch_table(const posenc_rope2d_params *p, int64_t rows, int64_t cols, size_t n, const long double *inv,
                        float *cos_out, float *sin_out) {
    size_t pairs = (size_t)p->head_dim / 2, q = pairs / 2;
    torch_cpu_capability_ cap = torch_cpu_capability_get_();
    size_t lanes = torch_vec_lanes_(cap);
    /* elements per token: Pixtral [2, D/2], Qwen2-VL [2, D/4], DINOv3 the tiled [D] */
    size_t width = p->kind == POSENC_ROPE2D_AXIAL ? q : pairs, total = n * 2 * width;
    for (size_t b = 0; b < total; b += lanes) {
        size_t count = total - b < lanes ? total - b : lanes;
        float x[TORCH_VEC_MAX_LANES], c[TORCH_VEC_MAX_LANES], s[TORCH_VEC_MAX_LANES];
        for (size_t i = 0; i < count; i++) x[i] = torch_angle(p, inv, rows, cols, b + i);
        torch_cos_sin_block_(cap, x, count, c, s);
        for (size_t i = 0; i < count; i++) {
            size_t e = b + i, t = e / (2 * width), a = e / width % 2, col = e % width, k;
            if (p->kind == POSENC_ROPE2D_DINOV3) { /* the first copy of cat(h freqs, w freqs) */
                t = e / (2 * width);
                if (e % (2 * width) >= pairs) continue;
                k = e % (2 * width);
            } else if (p->kind == POSENC_ROPE2D_PIXTRAL) { /* freq_h = chunk 0 of axis 0, freq_w = chunk 1 of axis 1 */
                if ((col >= q) != (a == 1)) continue;
                k = col;
            } else {
                k = a * q + col;
            }
            size_t o = out_index(p, rows, cols, t); /* Qwen2.5-VL permutes the finished rows */
            cos_out[o * pairs + k] = c[i];
            sin_out[o * pairs + k] = s[i];
        }
    }
}

posenc_status posenc_rope2d_table_f32(const posenc_rope2d_params *p, int64_t rows, int64_t cols, float *cos_out,
                                      float *sin_out, size_t out_count, posenc_error *err) {
    FORWARD_IF_ERROR(check_grid(p, rows, cols, err));
    RETURN_ERROR_IF(!cos_out || !sin_out, err, POSENC_ERR_NULL_POINTER, "2-D RoPE table: cos_out or sin_out is NULL");
    size_t n = (size_t)rows * (size_t)cols, pairs = (size_t)p->head_dim / 2, q = pairs / 2;
    RETURN_ERROR_IF(n > SIZE_MAX / pairs, err, POSENC_ERR_SIZE_OVERFLOW,
                    "2-D RoPE table: %zu tokens x %zu pairs overflows size_t", n, pairs);
    RETURN_ERROR_IF(out_count < n * pairs, err, POSENC_ERR_BUFFER_TOO_SMALL,
                    "2-D RoPE table: out_count %zu < %zu tokens x %zu pairs", out_count, n, pairs);
    /* inv: the base frequencies; axis_inv: each axis' q frequencies in pair order (precise mode) */
    long double *inv = malloc(2 * pairs * sizeof *inv);
    RETURN_ERROR_IF(!inv, err, POSENC_ERR_OUT_OF_MEMORY, "2-D RoPE table: cannot allocate %zu frequencies", pairs);
    long double *axis_inv = inv + pairs;
    posenc_status st = base_frequencies(p, inv, p->kind == POSENC_ROPE2D_PIXTRAL ? pairs : q, err);
    if (st == POSENC_OK) {
        if (p->mode == POSENC_MODE_PRECISE)
            precise_table(p, rows, cols, n, inv, axis_inv, cos_out, sin_out);
        else
            torch_table(p, rows, cols, n, inv, cos_out, sin_out);
    }
    free(inv);
    return st;
}
