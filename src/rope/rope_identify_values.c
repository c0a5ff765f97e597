/* rope_identify_values.c: a cache's values for "which RoPE is this?" (posenc.h 4b): loaded
 * as doubles (finite, [T, W]), the narrowest grid they lie on and its residual unit, and the
 * layout tests (HF's equal halves, GPT-J's equal neighbours, one magnitude per pair, a
 * pass-through tail). Calls nothing of identify's; everything of identify calls it. */
#include "rope_identify_internal.h"

#include <stdlib.h>
#include <string.h>

/* The names of the layouts and arithmetics (every identify file words its errors with them). */
static const char *const layout_names[] = {"auto", "hf", "vllm", "ggml", "plain"};
static const char *const arith_names[] = {"exact", "hf-f32", "ggml-f32"};

const char *posenc_rope_cache_layout_name(posenc_rope_cache_layout layout) {
    return (int)layout >= 0 && (int)layout <= POSENC_CACHE_PLAIN ? layout_names[layout] : "?";
}

const char *posenc_rope_arith_name(posenc_rope_arith arith) {
    return (int)arith >= 0 && (int)arith < POSENC_ROPE_ARITHS ? arith_names[arith] : "?";
}

/* ---- values and their grid ---------------------------------------------- */


posenc_status rope_id_load_2d_(const posenc_array *a, const char *what, grid2d *g, posenc_error *err) {
    RETURN_ERROR_IF(a->dtype != POSENC_DTYPE_F32 && a->dtype != POSENC_DTYPE_F64 && a->dtype != POSENC_DTYPE_F16 &&
                        a->dtype != POSENC_DTYPE_BF16,
                    err, POSENC_ERR_INVALID_ARGUMENT, "%s must be f32, f64, f16 or bf16, got %s", what,
                    posenc_dtype_name(a->dtype));
    int first = 0;
    while (a->ndim - first > 2 && a->shape[first] == 1) first++;
    RETURN_ERROR_IF(a->ndim - first != 2, err, POSENC_ERR_INVALID_ARGUMENT,
                    "%s must be [positions, channels] (leading size-1 dims allowed), got rank %d", what, a->ndim);
    g->rows = a->shape[first];
    g->width = a->shape[first + 1];
    RETURN_ERROR_IF(g->rows < 3, err, POSENC_ERR_INVALID_ARGUMENT, "%s has %zu positions; at least 3 are needed",
                    what, g->rows);
    RETURN_ERROR_IF(g->width < 1, err, POSENC_ERR_INVALID_ARGUMENT, "%s has no channels", what);
    posenc_array f;
    FORWARD_IF_ERROR(posenc_array_to_f64(a, &f, err));
    g->v = f.data;
    for (size_t i = 0; i < f.count; i++)
        if (!isfinite(g->v[i])) {
            double bad = g->v[i];
            free(g->v);
            g->v = NULL;
            return posenc_fail_(err, POSENC_ERR_INVALID_ARGUMENT, "%s value at [%zu, %zu] is %g: a RoPE cache is finite",
                                what, i / g->width, i % g->width, bad);
        }
    return POSENC_OK;
}

/* The narrowest grid every value lies on: the array's own 16-bit dtype, or for
 * wider arrays bf16 / f16 when every value converts back unchanged. */
posenc_dtype rope_id_find_grid_(posenc_dtype dtype, const double *v, size_t n) {
    if (dtype == POSENC_DTYPE_F16 || dtype == POSENC_DTYPE_BF16) return dtype;
    bool bf = true, h = true;
    for (size_t i = 0; i < n && (bf || h); i++) {
        float f = (float)v[i];
        bf = bf && posenc_bf16_to_f32(posenc_f32_to_bf16(f)) == f;
        h = h && posenc_f16_to_f32(posenc_f32_to_f16(f)) == f;
    }
    return bf ? POSENC_DTYPE_BF16 : h ? POSENC_DTYPE_F16 : POSENC_DTYPE_F32;
}

/* A value rounded to the grid (what the cache would hold). */
float rope_id_on_grid_(posenc_dtype grid, float f) {
    if (grid == POSENC_DTYPE_BF16) return posenc_bf16_to_f32(posenc_f32_to_bf16(f));
    if (grid == POSENC_DTYPE_F16) return posenc_f16_to_f32(posenc_f32_to_f16(f));
    return f;
}

/* The residual unit: the grid's spacing for values in [0.5, 1) (f32 2^-24,
 * bf16 2^-8, f16 2^-11; a format with m stored mantissa bits steps by 2^-(m+1)
 * there: bf16 stores 7), the ULP of a cos/sin near its peak, where most of a
 * cos table's values lie. A ULP count of the value itself would explode near
 * the zeros of cos/sin, where one angle error crosses thousands of tiny ULPs. */
double rope_id_grid_unit_(posenc_dtype grid) {
    return grid == POSENC_DTYPE_BF16 ? 0x1p-8 : grid == POSENC_DTYPE_F16 ? 0x1p-11 : 0x1p-24;
}

/* The rounding a value may carry and still be the same RoPE, in absolute terms: 4 units of
 * f32 / f16 (the cache's value and ours may round to neighbours, and the engine's cos/sin may
 * be 1-2 f32 ULPs from ours); 2 units of bf16 = 2^-7, one bf16 step of [1, 2), where a
 * magnitude above 1 puts the peak values (f32's ULPs vanish against bf16's step). */
double rope_id_grid_slack_(posenc_dtype grid) { return (grid == POSENC_DTYPE_BF16 ? 2.0 : 4.0) * rope_id_grid_unit_(grid); }

/* ---- 1. layout ------------------------------------------------------------ */

bool rope_id_halves_equal_(const grid2d *g) {
    if (g->width % 2) return false;
    size_t h = g->width / 2;
    for (size_t t = 0; t < g->rows; t++)
        for (size_t k = 0; k < h; k++)
            if (g->v[t * g->width + k] != g->v[t * g->width + k + h]) return false;
    return true;
}

/* Columns 2k and 2k + 1 equal at every row, and some column changing: each value twice in a
 * row, GPT-J's repeat_interleave layout (cos(freqs).repeat_interleave(2)). */
bool rope_id_neighbours_equal_(const grid2d *g) {
    if (g->width % 2) return false;
    bool moves = false;
    for (size_t t = 0; t < g->rows; t++)
        for (size_t k = 0; k + 1 < g->width; k += 2) {
            const double *row = g->v + t * g->width;
            if (row[k] != row[k + 1]) return false;
            moves = moves || row[k] != g->v[k];
        }
    return moves;
}

/* c^2 + s^2 of every pair within `tol` (relative) of the first row's. */
bool rope_id_norm_constant_(const grid2d *g, bool interleaved, double tol) {
    if (g->width % 2) return false;
    size_t h = g->width / 2;
    double ref = -1;
    for (size_t t = 0; t < g->rows; t++)
        for (size_t k = 0; k < h; k++) {
            const double *row = g->v + t * g->width;
            double c = interleaved ? row[2 * k] : row[k], s = interleaved ? row[2 * k + 1] : row[k + h];
            double n = c * c + s * s;
            if (ref < 0) ref = n;
            if (!(ref > 0) || fabs(n - ref) > tol * ref) return false;
        }
    return true;
}

/* Trailing columns where every row holds cos 1 (and sin 0 when s is given): the pass-through
 * channels of a partial rotary kept in a full-width cache. */
size_t rope_id_passthrough_tail_(const grid2d *c, const grid2d *s) {
    size_t p = 0;
    while (p < c->width) {
        size_t j = c->width - 1 - p;
        bool pass = true;
        for (size_t t = 0; t < c->rows && pass; t++)
            pass = c->v[t * c->width + j] == 1.0 && (!s || s->v[t * s->width + j] == 0.0);
        if (!pass) break;
        p++;
    }
    return p;
}

/* Drop the last p columns in place. */
void rope_id_drop_tail_(grid2d *g, size_t p) {
    size_t w = g->width - p;
    for (size_t t = 1; t < g->rows; t++) memmove(g->v + t * w, g->v + t * g->width, sizeof *g->v * w);
    g->width = w;
}
