/* rope_multi.c: multi-axis RoPE (Qwen2-VL M-RoPE sections, Qwen3-VL
 * interleaved sections, N-D axial) and Qwen2-VL's position-id builder. */
#include "rope_fast.h"

#include <stdlib.h>
#include <string.h>

static posenc_status check_sections(const posenc_mrope_sections *sec, int32_t pairs, posenc_error *err) {
    RETURN_IF_NULL(sec, err);
    RETURN_ERROR_IF(sec->kind != POSENC_MROPE_SECTIONS && sec->kind != POSENC_MROPE_INTERLEAVED &&
                        sec->kind != POSENC_MROPE_AXIAL,
                    err, POSENC_ERR_INVALID_ARGUMENT, "unknown multi-axis RoPE kind %d", (int)sec->kind);
    RETURN_ERROR_IF(sec->axes < 1 || sec->axes > POSENC_MROPE_MAX_AXES, err, POSENC_ERR_INVALID_ARGUMENT,
                    "axes must be in [1, %d], got %d", POSENC_MROPE_MAX_AXES, sec->axes);
    int64_t sum = 0;
    for (int32_t a = 0; a < sec->axes; a++) {
        RETURN_ERROR_IF(sec->sizes[a] < 0, err, POSENC_ERR_INVALID_ARGUMENT, "section %d must be >= 0, got %d", a,
                        sec->sizes[a]);
        RETURN_ERROR_IF(sec->kind == POSENC_MROPE_AXIAL && sec->sizes[a] == 0, err, POSENC_ERR_INVALID_ARGUMENT,
                        "axial section %d must be >= 1 pair, got 0", a);
        sum += sec->sizes[a];
    }
    RETURN_ERROR_IF(sum != pairs, err, POSENC_ERR_INVALID_ARGUMENT,
                    "sections must add up to rotary_dim/2 = %d pairs, got %lld", pairs, (long long)sum);
    return POSENC_OK;
}

/* axis[k] and inv[k] for every pair. */
static posenc_status pair_map(const posenc_rope_params *params, const posenc_mrope_sections *sec, int32_t pairs,
                              int32_t *axis, long double *inv, posenc_error *err) {
    if (sec->kind == POSENC_MROPE_AXIAL) {
        int32_t k = 0;
        for (int32_t a = 0; a < sec->axes; a++) {
            posenc_rope_params sub = *params; /* each axis is a 1-D RoPE over 2*s_a channels */
            sub.head_dim = 2 * sec->sizes[a];
            sub.rotary_dim = 0;
            sub.partial_rotary_factor = 1.0;
            FORWARD_IF_ERROR(rope_frequencies_ld_(&sub, 0, inv + k, (size_t)sec->sizes[a], NULL, err));
            for (int32_t j = 0; j < sec->sizes[a]; j++) axis[k + j] = a;
            k += sec->sizes[a];
        }
        return POSENC_OK;
    }
    FORWARD_IF_ERROR(rope_frequencies_ld_(params, 0, inv, (size_t)pairs, NULL, err));
    if (sec->kind == POSENC_MROPE_SECTIONS) {
        int32_t k = 0;
        for (int32_t a = 0; a < sec->axes; a++)
            for (int32_t j = 0; j < sec->sizes[a]; j++) axis[k++] = a;
    } else { /* Qwen3-VL apply_interleaved_mrope: T by default, H at 1,4,7.. < 3*s1, W at 2,5,8.. < 3*s2 */
        for (int32_t k = 0; k < pairs; k++) {
            axis[k] = 0;
            for (int32_t a = 1; a < sec->axes; a++)
                if (k % 3 == a && k < 3 * sec->sizes[a]) axis[k] = a;
        }
    }
    return POSENC_OK;
}

posenc_status posenc_mrope_pair_map(const posenc_rope_params *params, const posenc_mrope_sections *sections,
                                    int32_t *axis_of_pair, double *inv_freq, size_t out_count, posenc_error *err) {
    int32_t r = 0;
    FORWARD_IF_ERROR(posenc_rope_check(params, &r, err));
    FORWARD_IF_ERROR(check_sections(sections, r / 2, err));
    RETURN_IF_NULL(axis_of_pair, err);
    RETURN_IF_NULL(inv_freq, err);
    RETURN_ERROR_IF(out_count < (size_t)(r / 2), err, POSENC_ERR_BUFFER_TOO_SMALL,
                    "pair map needs rotary_dim/2 = %d entries, out_count is %zu", r / 2, out_count);
    long double *w = malloc(sizeof *w * (size_t)(r / 2));
    RETURN_ERROR_IF(!w, err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %d frequencies", r / 2);
    posenc_status st = pair_map(params, sections, r / 2, axis_of_pair, w, err);
    for (int32_t k = 0; st == POSENC_OK && k < r / 2; k++) inv_freq[k] = (double)w[k];
    free(w);
    return st == POSENC_OK ? posenc_ok_(err) : st;
}

posenc_status posenc_mrope_apply_f32(const posenc_rope_params *params, const posenc_mrope_sections *sections,
                                     posenc_layout layout, const posenc_rope_view *view, const int64_t *positions,
                                     int inverse, float *x, size_t x_count, posenc_error *err) {
    int32_t r = 0;
    FORWARD_IF_ERROR(posenc_rope_check(params, &r, err));
    FORWARD_IF_ERROR(check_sections(sections, r / 2, err));
    RETURN_ERROR_IF(params->mode == POSENC_MODE_GGML, err, POSENC_ERR_UNSUPPORTED,
                    "multi-axis RoPE has no ggml mode yet (ggml's MROPE/IMROPE arithmetic is not "
                    "reproduced); use mode precise or torch-compat");
    RETURN_ERROR_IF(!positions && view && view->tokens > 0, err, POSENC_ERR_NULL_POINTER,
                    "positions must not be NULL");
    double attention = 1.0;
    int32_t pairs = r / 2;
    size_t n = (size_t)pairs;
    int32_t *axis = malloc(sizeof *axis * n);
    long double *inv = malloc(sizeof *inv * n);
    posenc_status st = POSENC_OK;
    if (!axis || !inv) st = posenc_fail_(err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %d pairs", pairs);
    if (st == POSENC_OK) st = pair_map(params, sections, pairs, axis, inv, err);
    if (st == POSENC_OK) {
        double *tmp = malloc(sizeof *tmp * n); /* for the attention factor of the whole configuration */
        if (!tmp) st = posenc_fail_(err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %d pairs", pairs);
        else st = posenc_rope_frequencies(params, 0, tmp, n, &attention, err);
        free(tmp);
    }
    rope_plan_ plan;
    memset(&plan, 0, sizeof plan);
    plan.head_dim = params->head_dim;
    plan.rotary_dim = r;
    plan.pairs = pairs;
    plan.mode = params->mode;
    plan.attention = attention;
    plan.inv = inv;
    /* the checks every apply shares (rope.c), positions [axes][tokens] */
    if (st == POSENC_OK) st = rope_check_apply_(&plan, layout, view, positions, (size_t)sections->axes, x, x_count, err);
    if (st == POSENC_OK && view->tokens > 0)
        st = rope_apply_mrope_fast_(&plan, axis, layout, view, positions, inverse, x, err);
    free(axis);
    free(inv);
    return st == POSENC_OK ? posenc_ok_(err) : st;
}

posenc_status posenc_mrope_position_ids(const posenc_mrope_segment *segments, size_t segment_count, int64_t *out,
                                        size_t out_count, size_t *out_total, posenc_error *err) {
    RETURN_ERROR_IF(!segments && segment_count > 0, err, POSENC_ERR_NULL_POINTER, "segments must not be NULL");
    const int64_t max_tokens = (int64_t)1 << 40;
    int64_t total = 0;
    for (size_t i = 0; i < segment_count; i++) {
        const posenc_mrope_segment *s = &segments[i];
        int64_t n;
        if (s->is_grid) {
            RETURN_ERROR_IF(s->grid_t <= 0 || s->grid_h <= 0 || s->grid_w <= 0 || s->grid_t > max_tokens ||
                                s->grid_h > max_tokens || s->grid_w > max_tokens,
                            err, POSENC_ERR_INVALID_ARGUMENT,
                            "segment %zu: grid must be >= 1 in each axis and <= 2^40, got %lldx%lldx%lld", i,
                            (long long)s->grid_t, (long long)s->grid_h, (long long)s->grid_w);
            RETURN_ERROR_IF(s->grid_t * s->grid_h > max_tokens / s->grid_w, err, POSENC_ERR_LIMIT,
                            "segment %zu: grid %lldx%lldx%lld exceeds 2^40 tokens", i, (long long)s->grid_t,
                            (long long)s->grid_h, (long long)s->grid_w);
            n = s->grid_t * s->grid_h * s->grid_w;
        } else {
            RETURN_ERROR_IF(s->length < 0 || s->length > max_tokens, err, POSENC_ERR_INVALID_ARGUMENT,
                            "segment %zu: text length must be in [0, 2^40], got %lld", i, (long long)s->length);
            n = s->length;
        }
        RETURN_ERROR_IF(total > max_tokens - n, err, POSENC_ERR_LIMIT, "sequence exceeds 2^40 tokens");
        total += n;
    }
    if (out_total) *out_total = (size_t)total;
    if (!out && out_count == 0) return posenc_ok_(err); /* size query */
    RETURN_IF_NULL(out, err);
    size_t need;
    FORWARD_IF_ERROR(posenc_checked_count_(3, (size_t)total, "3 x tokens", &need, err));
    RETURN_ERROR_IF(out_count < need, err, POSENC_ERR_BUFFER_TOO_SMALL,
                    "position ids need 3 x %lld = %zu entries, out_count is %zu", (long long)total, need, out_count);
    size_t i = 0, stride = (size_t)total;
    int64_t next = 0;
    for (size_t g = 0; g < segment_count; g++) {
        const posenc_mrope_segment *s = &segments[g];
        if (!s->is_grid) {
            for (int64_t j = 0; j < s->length; j++, i++) out[i] = out[stride + i] = out[2 * stride + i] = next + j;
            next += s->length;
            continue;
        }
        for (int64_t ti = 0; ti < s->grid_t; ti++)
            for (int64_t hi = 0; hi < s->grid_h; hi++)
                for (int64_t wi = 0; wi < s->grid_w; wi++, i++) {
                    out[i] = next + ti;
                    out[stride + i] = next + hi;
                    out[2 * stride + i] = next + wi;
                }
        int64_t m = s->grid_t > s->grid_h ? s->grid_t : s->grid_h;
        if (s->grid_w > m) m = s->grid_w;
        next += m; /* 1 + the largest id used */
    }
    return posenc_ok_(err);
}
