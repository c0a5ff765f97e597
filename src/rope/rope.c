/* rope.c: the RoPE entry points: cos/sin tables, in-place application
 * (f32/f16/bf16, exec), inverse rotation and the delta re-rotation of cached
 * keys. The top layer: it validates, then calls down to the driver
 * (rope_fast.c) and the per-token cos/sin (rope_cos_sin.c). */
#include "rope_fast.h"

#include "../common/f32_angle.h"
#include <stdlib.h>
#include <string.h>

posenc_rope_view posenc_rope_view_contiguous(size_t tokens, size_t heads, int32_t head_dim) {
    posenc_rope_view v;
    size_t d = head_dim > 0 ? (size_t)head_dim : 0;
    v.tokens = tokens;
    v.heads = heads;
    v.head_stride = d;
    v.row_stride = heads * d; /* overflow is caught by rope_check_view_ via x_count */
    return v;
}

posenc_status rope_check_view_(const posenc_rope_view *view, int32_t head_dim, size_t x_count,
                               posenc_error *err) {
    RETURN_IF_NULL(view, err);
    size_t d = (size_t)head_dim;
    if (view->tokens == 0) return POSENC_OK;
    RETURN_ERROR_IF(view->heads == 0, err, POSENC_ERR_INVALID_ARGUMENT, "heads must be >= 1, got 0");
    RETURN_ERROR_IF(view->heads > 1 && view->head_stride < d, err, POSENC_ERR_INVALID_ARGUMENT,
                    "head_stride must be >= head_dim (%d) so heads do not overlap, got %zu", head_dim,
                    view->head_stride);
    size_t row_span, last;
    FORWARD_IF_ERROR(posenc_checked_count_(view->heads - 1, view->head_stride, "heads x head_stride",
                                           &row_span, err));
    RETURN_ERROR_IF(row_span > SIZE_MAX - d, err, POSENC_ERR_SIZE_OVERFLOW, "view row size overflows");
    row_span += d;
    RETURN_ERROR_IF(view->tokens > 1 && view->row_stride < row_span, err, POSENC_ERR_INVALID_ARGUMENT,
                    "row_stride must be >= %zu ((heads-1)*head_stride + head_dim) so tokens do not "
                    "overlap, got %zu", row_span, view->row_stride);
    FORWARD_IF_ERROR(posenc_checked_count_(view->tokens - 1, view->row_stride, "tokens x row_stride", &last,
                                           err));
    RETURN_ERROR_IF(last > SIZE_MAX - row_span, err, POSENC_ERR_SIZE_OVERFLOW, "view size overflows");
    RETURN_ERROR_IF(last + row_span > x_count, err, POSENC_ERR_BUFFER_TOO_SMALL,
                    "the view reaches element %zu but x_count is %zu", last + row_span, x_count);
    return POSENC_OK;
}

posenc_status rope_check_torch_angle_(posenc_mode mode, const long double *inv, int32_t pairs,
                                     long double max_abs_position, posenc_error *err) {
    if (mode != POSENC_MODE_TORCH_COMPAT) return POSENC_OK;
    float w_max = 0.0f;
    for (int32_t k = 0; k < pairs; k++) w_max = fmaxf(w_max, fabsf((float)inv[k]));
    return posenc_check_f32_angle_(max_abs_position, w_max, "inverse frequency", "use the precise mode", err);
}

posenc_status rope_check_ggml_angle_(const rope_plan_ *plan, long double max_abs_position, posenc_error *err) {
    if (plan->mode != POSENC_MODE_GGML) return POSENC_OK;
    float m = rope_ggml_mscale_(&plan->ggml);
    RETURN_ERROR_IF(!isfinite(m), err, POSENC_ERR_INVALID_ARGUMENT,
                    "mode ggml: the cos/sin magnitude overflows float32 (%g); use the precise mode", (double)m);
    float *theta = malloc(sizeof *theta * (size_t)plan->pairs);
    RETURN_ERROR_IF(!theta, err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %d angles", plan->pairs);
    rope_ggml_angles_(&plan->ggml, plan->pairs, max_abs_position, theta);
    int32_t bad = -1;
    for (int32_t k = 0; k < plan->pairs && bad < 0; k++)
        if (!isfinite(theta[k])) bad = k;
    free(theta);
    RETURN_ERROR_IF(bad >= 0, err, POSENC_ERR_INVALID_ARGUMENT,
                    "mode ggml: the float32 angle of pair %d at position %.0Lf is not finite (ggml's theta chain, "
                    "its frequency factor or scale overflow float32); use the precise mode", bad, max_abs_position);
    return POSENC_OK;
}

posenc_status rope_check_apply_(const rope_plan_ *plan, posenc_layout layout, const posenc_rope_view *view,
                                const int64_t *positions, size_t position_rows, const void *x, size_t x_count,
                                posenc_error *err) {
    RETURN_ERROR_IF(layout != POSENC_LAYOUT_INTERLEAVED && layout != POSENC_LAYOUT_HALF, err,
                    POSENC_ERR_INVALID_ARGUMENT, "unknown layout %d", (int)layout);
    FORWARD_IF_ERROR(rope_check_view_(view, plan->head_dim, x_count, err));
    RETURN_ERROR_IF(view->tokens > 0 && !x, err, POSENC_ERR_NULL_POINTER, "x must not be NULL");
    FORWARD_IF_ERROR(posenc_check_signed_positions_(positions, position_rows * view->tokens, err)); /* |p| < 2^53 */
    long double max_abs = view->tokens ? (long double)(view->tokens - 1) : 0.0L;
    if (positions) {
        max_abs = 0.0L;
        for (size_t i = 0; i < position_rows * view->tokens; i++)
            max_abs = fmaxl(max_abs, fabsl((long double)positions[i]));
    }
    FORWARD_IF_ERROR(rope_check_ggml_angle_(plan, max_abs, err));
    return rope_check_torch_angle_(plan->mode, plan->inv, plan->pairs, max_abs, err);
}

/* ---- tables ---------------------------------------------------------- */

static posenc_status table_common(const posenc_rope_params *params, int64_t seq_len,
                                  const posenc_positions *positions, int fold_attention, bool wide, int copies,
                                  void *cos_out, void *sin_out, size_t out_count, posenc_error *err) {
    RETURN_IF_NULL(cos_out, err);
    RETURN_IF_NULL(sin_out, err);
    FORWARD_IF_ERROR(posenc_check_positions_(positions, err));
    rope_plan_ plan;
    FORWARD_IF_ERROR(rope_plan_create_(params, seq_len, &plan, err));
    size_t need = 0;
    posenc_status st = posenc_checked_count_(positions->count, (size_t)plan.pairs, "positions x pairs", &need, err);
    if (st == POSENC_OK && need > out_count)
        st = posenc_fail_(err, POSENC_ERR_BUFFER_TOO_SMALL,
                          "cos/sin tables need %zu entries each ([%zu positions][%d pairs]), out_count is %zu",
                          need, positions->count, plan.pairs, out_count);
    if (st == POSENC_OK) {
        long double max_abs = 0.0L;
        for (size_t r = 0; r < positions->count; r++) max_abs = fmaxl(max_abs, fabsl(posenc_position_at_(positions, r)));
        st = rope_check_torch_angle_(plan.mode, plan.inv, plan.pairs, max_abs, err);
        if (st == POSENC_OK) st = rope_check_ggml_angle_(&plan, max_abs, err);
    }
    if (st == POSENC_OK && rope_table_fast_applies_(&plan, positions)) {
        st = rope_table_fast_(&plan, positions, fold_attention ? plan.attention : 1.0, wide, cos_out, sin_out, err);
        rope_plan_free_(&plan);
        return st == POSENC_OK ? posenc_ok_(err) : st;
    }
    float *row = st == POSENC_OK ? malloc(sizeof *row * 2 * (size_t)plan.pairs) : NULL;
    if (st == POSENC_OK && !row) st = posenc_fail_(err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate a table row");
    for (size_t r = 0; st == POSENC_OK && r < positions->count; r++) {
        long double pos = posenc_position_at_(positions, r);
        double scale = fold_attention ? plan.attention : 1.0;
        size_t o = r * (size_t)plan.pairs;
        if (!wide && plan.mode == POSENC_MODE_TORCH_COMPAT) { /* row r of HF's table for these positions */
            rope_torch_cos_sin_row_(plan.inv, plan.pairs, copies, positions, r, scale, (float *)cos_out + o,
                                    (float *)sin_out + o);
            continue;
        }
        if (plan.mode == POSENC_MODE_GGML) { /* ggml's float32 cache entries (widened when wide) */
            float *c = wide ? row : (float *)cos_out + o, *s = wide ? row + plan.pairs : (float *)sin_out + o;
            rope_ggml_cos_sin_(&plan.ggml, plan.pairs, pos, fold_attention != 0, 1.0f, c, s);
            for (int32_t k = 0; wide && k < plan.pairs; k++) {
                ((double *)cos_out)[o + (size_t)k] = c[k];
                ((double *)sin_out)[o + (size_t)k] = s[k];
            }
            continue;
        }
        if (!wide) {
            rope_cos_sin_f32_(plan.mode, plan.inv, plan.pairs, pos, scale, (float *)cos_out + o, (float *)sin_out + o);
            continue;
        }
        double *c = (double *)cos_out + o, *s = (double *)sin_out + o;
        if (plan.mode == POSENC_MODE_TORCH_COMPAT) { /* float32 values, widened */
            rope_torch_cos_sin_row_(plan.inv, plan.pairs, copies, positions, r, scale, row, row + plan.pairs);
            for (int32_t k = 0; k < plan.pairs; k++) {
                c[k] = row[k];
                s[k] = row[plan.pairs + k];
            }
            continue;
        }
        for (int32_t k = 0; k < plan.pairs; k++) {
            long double angle = pos * plan.inv[k];
            c[k] = (double)(cosl(angle) * (long double)scale);
            s[k] = (double)(sinl(angle) * (long double)scale);
        }
    }
    free(row);
    rope_plan_free_(&plan);
    return st == POSENC_OK ? posenc_ok_(err) : st;
}

posenc_status posenc_rope_table_f32(const posenc_rope_params *params, int64_t seq_len,
                                    const posenc_positions *positions, int fold_attention, float *cos_out,
                                    float *sin_out, size_t out_count, posenc_error *err) {
    return table_common(params, seq_len, positions, fold_attention, false, 2, cos_out, sin_out, out_count, err);
}

posenc_status rope_table_torch_f32_(const posenc_rope_params *params, int64_t seq_len,
                                    const posenc_positions *positions, int fold_attention, int copies,
                                    float *cos_out, float *sin_out, size_t out_count, posenc_error *err) {
    RETURN_IF_NULL(params, err);
    RETURN_ERROR_IF(params->mode != POSENC_MODE_TORCH_COMPAT || (copies != 1 && copies != 2), err,
                    POSENC_ERR_INVALID_ARGUMENT, "torch table: mode %d, copies %d", (int)params->mode, copies);
    return table_common(params, seq_len, positions, fold_attention, false, copies, cos_out, sin_out, out_count,
                        err);
}

posenc_status posenc_rope_table_f64(const posenc_rope_params *params, int64_t seq_len,
                                    const posenc_positions *positions, int fold_attention, double *cos_out,
                                    double *sin_out, size_t out_count, posenc_error *err) {
    return table_common(params, seq_len, positions, fold_attention, true, 2, cos_out, sin_out, out_count, err);
}

/* ---- apply ------------------------------------------------------------ */

typedef rope_data_kind_ data_kind; /* rope_fast.h */
#define DATA_F32 ROPE_DATA_F32
#define DATA_F16 ROPE_DATA_F16
#define DATA_BF16 ROPE_DATA_BF16

/* The one checked body behind every 1-D apply entry point (plain, shift, exec):
 * validate everything, then hand over to the driver (rope_fast.c). */
static posenc_status apply_checked(const posenc_rope_params *params, int64_t seq_len, posenc_layout layout,
                                   const posenc_rope_view *view, const int64_t *positions, int inverse,
                                   bool unit, data_kind kind, void *x, size_t x_count, const posenc_exec *exec,
                                   posenc_error *err) {
    rope_plan_ plan;
    FORWARD_IF_ERROR(rope_plan_create_(params, seq_len, &plan, err));
    posenc_status st = rope_check_apply_(&plan, layout, view, positions, 1, x, x_count, err);
    /* threads + SIMD kernels, same bits on every path (rope_fast.c) */
    if (st == POSENC_OK)
        st = rope_apply_fast_(&plan, NULL, layout, view, positions, inverse, unit, kind, x, exec, err);
    rope_plan_free_(&plan);
    return st == POSENC_OK ? posenc_ok_(err) : st;
}

posenc_status posenc_rope_apply_f32(const posenc_rope_params *params, int64_t seq_len, posenc_layout layout,
                                    const posenc_rope_view *view, const int64_t *positions, int inverse,
                                    float *x, size_t x_count, posenc_error *err) {
    return apply_checked(params, seq_len, layout, view, positions, inverse, false, DATA_F32, x, x_count, NULL, err);
}

posenc_status posenc_rope_apply_f16(const posenc_rope_params *params, int64_t seq_len, posenc_layout layout,
                                    const posenc_rope_view *view, const int64_t *positions, int inverse,
                                    uint16_t *x, size_t x_count, posenc_error *err) {
    return apply_checked(params, seq_len, layout, view, positions, inverse, false, DATA_F16, x, x_count, NULL, err);
}

posenc_status posenc_rope_apply_bf16(const posenc_rope_params *params, int64_t seq_len, posenc_layout layout,
                                     const posenc_rope_view *view, const int64_t *positions, int inverse,
                                     uint16_t *x, size_t x_count, posenc_error *err) {
    return apply_checked(params, seq_len, layout, view, positions, inverse, false, DATA_BF16, x, x_count, NULL, err);
}

posenc_status posenc_rope_shift_f32(const posenc_rope_params *params, int64_t seq_len, posenc_layout layout,
                                    const posenc_rope_view *view, const int64_t *deltas, float *x,
                                    size_t x_count, posenc_error *err) {
    RETURN_ERROR_IF(!deltas && view && view->tokens > 0, err, POSENC_ERR_NULL_POINTER,
                    "deltas must not be NULL");
    return apply_checked(params, seq_len, layout, view, deltas, 0, true, DATA_F32, x, x_count, NULL, err);
}

static posenc_status data_kind_of(posenc_dtype dtype, data_kind *kind, posenc_error *err) {
    RETURN_ERROR_IF(dtype != POSENC_DTYPE_F32 && dtype != POSENC_DTYPE_F16 && dtype != POSENC_DTYPE_BF16, err,
                    POSENC_ERR_INVALID_ARGUMENT, "RoPE data dtype must be f32, f16 or bf16, got %s",
                    posenc_dtype_name(dtype));
    *kind = dtype == POSENC_DTYPE_F32 ? DATA_F32 : dtype == POSENC_DTYPE_F16 ? DATA_F16 : DATA_BF16;
    return POSENC_OK;
}

posenc_status posenc_rope_apply_exec(const posenc_rope_params *params, int64_t seq_len, posenc_layout layout,
                                     const posenc_rope_view *view, const int64_t *positions, int inverse,
                                     posenc_dtype dtype, void *x, size_t x_count, const posenc_exec *exec,
                                     posenc_error *err) {
    data_kind kind = DATA_F32;
    FORWARD_IF_ERROR(data_kind_of(dtype, &kind, err));
    return apply_checked(params, seq_len, layout, view, positions, inverse, false, kind, x, x_count, exec, err);
}

/* ---- plans: the per-call set-up done once ---------------------------- */

struct posenc_rope_plan {
    rope_plan_ rope;
    posenc_recurrence_ rec; /* precise mode: every step of the cos/sin recurrence (else mem == NULL) */
};

posenc_status posenc_rope_plan_create(const posenc_rope_params *params, int64_t seq_len, posenc_rope_plan **out,
                                      posenc_error *err) {
    RETURN_IF_NULL(out, err);
    *out = NULL;
    posenc_rope_plan *plan = calloc(1, sizeof *plan);
    RETURN_ERROR_IF(!plan, err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate a RoPE plan");
    posenc_status st = rope_plan_create_(params, seq_len, &plan->rope, err);
    if (st == POSENC_OK && plan->rope.mode == POSENC_MODE_PRECISE)
        st = rope_recurrence_for_plan_(&plan->rope, &plan->rec, err);
    if (st != POSENC_OK) {
        posenc_rope_plan_free(plan);
        return st;
    }
    *out = plan;
    return posenc_ok_(err);
}

posenc_status posenc_rope_plan_apply(const posenc_rope_plan *plan, posenc_layout layout,
                                     const posenc_rope_view *view, const int64_t *positions, int inverse,
                                     posenc_dtype dtype, void *x, size_t x_count, const posenc_exec *exec,
                                     posenc_error *err) {
    RETURN_IF_NULL(plan, err);
    data_kind kind = DATA_F32;
    FORWARD_IF_ERROR(data_kind_of(dtype, &kind, err));
    FORWARD_IF_ERROR(rope_check_apply_(&plan->rope, layout, view, positions, 1, x, x_count, err));
    const posenc_recurrence_ *ready = plan->rec.mem ? &plan->rec : NULL;
    FORWARD_IF_ERROR(rope_apply_fast_(&plan->rope, ready, layout, view, positions, inverse, false, kind, x, exec, err));
    return posenc_ok_(err);
}

void posenc_rope_plan_free(posenc_rope_plan *plan) {
    if (!plan) return;
    rope_plan_free_(&plan->rope);
    posenc_recurrence_free_(&plan->rec);
    free(plan);
}
