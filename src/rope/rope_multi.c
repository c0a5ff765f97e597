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

/* POSENC_MODE_GGML: ggml CPU's ggml_rope_multi (modes MROPE and IMROPE), from the facts of
 * ggml-cpu/ops.cpp's multi-axis cache: one float32 theta chain per position stream (t, h, w, e),
 * each started at (float)p of its stream and multiplied by theta_scale at every pair whatever
 * stream the pair reads; pair k takes the chain of its stream (MROPE: contiguous sections,
 * then e; IMROPE: h at k%3==1 < 3 s1, w at k%3==2 < 3 s2, t at k%3==0 < 3 s0, else e), then
 * the 1-D pair math (freq factor, YaRN ramp, cosf/sinf times mscale: rope_ggml.c) and the
 * NEOX rotation (k, k + R/2) with ggml's contracted products (as rope_apply.c's ggml kernel). The chain of a stream is exactly the 1-D chain at that stream's
 * position, so rope_ggml_angles_ per stream gives it. VISION (axial) is not reproduced. */
static posenc_status mrope_apply_ggml(const posenc_rope_params *params, const posenc_mrope_sections *sec,
                                      posenc_layout layout, const posenc_rope_view *view, const int64_t *positions,
                                      int inverse, float *x, size_t x_count, posenc_error *err) {
    RETURN_ERROR_IF(sec->kind == POSENC_MROPE_AXIAL, err, POSENC_ERR_UNSUPPORTED,
                    "mode ggml has no axial multi-axis RoPE (ggml's VISION mode pairs channels (k, k + R) over a "
                    "head of 2R and restarts the chain per section: not reproduced); use mode precise or "
                    "torch-compat");
    RETURN_ERROR_IF(layout != POSENC_LAYOUT_HALF, err, POSENC_ERR_INVALID_ARGUMENT,
                    "mode ggml: ggml's MROPE/IMROPE rotate NEOX pairs (k, k + R/2); give layout half, got "
                    "interleaved");
    RETURN_ERROR_IF(!positions && view && view->tokens > 0, err, POSENC_ERR_NULL_POINTER,
                    "positions must not be NULL");
    rope_plan_ plan;
    FORWARD_IF_ERROR(rope_plan_create_(params, 0, &plan, err));
    int32_t K = plan.pairs;
    int32_t *axis = malloc(sizeof *axis * (size_t)K);
    float *ang = malloc(sizeof *ang * (size_t)K * POSENC_MROPE_MAX_AXES), *c = malloc(sizeof *c * (size_t)K),
          *s = malloc(sizeof *s * (size_t)K);
    posenc_status st = POSENC_OK;
    if (!axis || !ang || !c || !s) st = posenc_fail_(err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %d pairs", K);
    int32_t s0 = sec->sizes[0], s1 = sec->axes > 1 ? sec->sizes[1] : 0, s2 = sec->axes > 2 ? sec->sizes[2] : 0;
    for (int32_t k = 0; st == POSENC_OK && k < K; k++) {
        int32_t a;
        if (sec->kind == POSENC_MROPE_SECTIONS) a = k < s0 ? 0 : k < s0 + s1 ? 1 : k < s0 + s1 + s2 ? 2 : 3;
        else a = k % 3 == 1 && k < 3 * s1 ? 1 : k % 3 == 2 && k < 3 * s2 ? 2 : k % 3 == 0 && k < 3 * s0 ? 0 : 3;
        if (a >= sec->axes)
            st = posenc_fail_(err, POSENC_ERR_INVALID_ARGUMENT,
                              "mode ggml: pair %d reads ggml's position stream %d (%s) but the sections give %d "
                              "axes; give %d axes of positions (IMROPE sends pairs past 3 x its sections to the "
                              "4th stream)",
                              k, a, a == 3 ? "e" : "w", sec->axes, a + 1);
        else axis[k] = a;
    }
    if (st == POSENC_OK)
        st = rope_check_apply_(&plan, layout, view, positions, (size_t)sec->axes, x, x_count, err);
    if (st == POSENC_OK && view->tokens > 0) {
        long double most = 0;
        for (size_t i = 0; i < (size_t)sec->axes * view->tokens; i++)
            most = fmaxl(most, fabsl((long double)positions[i]));
        st = rope_check_ggml_angle_(&plan, most, err);
    }
    bool used[POSENC_MROPE_MAX_AXES] = {false, false, false, false};
    for (int32_t k = 0; st == POSENC_OK && k < K; k++) used[axis[k]] = true;
    float m = rope_ggml_mscale_(&plan.ggml), sign = inverse ? -1.0f : 1.0f;
    size_t bad_t = SIZE_MAX, bad_h = 0, bad_c = 0;
    const uint32_t qnan_bits = 0x7fc00000u;
    float qnan;
    memcpy(&qnan, &qnan_bits, sizeof qnan);
    bool bad_input = false;
    for (size_t t = 0; st == POSENC_OK && t < view->tokens; t++) {
        for (int32_t a = 0; a < sec->axes; a++)
            if (used[a])
                rope_ggml_angles_(&plan.ggml, K, (long double)positions[(size_t)a * view->tokens + t],
                                  ang + (size_t)a * (size_t)K);
        for (int32_t k = 0; k < K; k++) {
            float th = ang[(size_t)axis[k] * (size_t)K + (size_t)k];
            c[k] = cosf(th) * m;
            s[k] = sinf(th) * m * sign;
        }
        for (size_t h = 0; h < view->heads; h++) {
            float *v = x + t * view->row_stride + h * view->head_stride;
            for (int32_t k = 0; k < K; k++) {
                float x0 = v[k], x1 = v[k + K]; /* ggml's rotation, first product fused (rope_apply.c) */
                float bs = x1 * s[k], bc = x1 * c[k];
                v[k] = fmaf(x0, c[k], -bs);
                v[k + K] = fmaf(x0, s[k], bc);
                if (isnan(v[k])) v[k] = qnan; /* one positive quiet NaN, as every apply (posenc.h) */
                if (isnan(v[k + K])) v[k + K] = qnan;
                if (bad_t == SIZE_MAX && (!isfinite(v[k]) || !isfinite(v[k + K])))
                    bad_t = t, bad_h = h, bad_c = (size_t)(isfinite(v[k]) ? k + K : k),
                    bad_input = !isfinite(x0) || !isfinite(x1);
            }
        }
    }
    if (st == POSENC_OK && bad_t != SIZE_MAX) { /* the rotation ran to the end; name the first */
        float value = x[bad_t * view->row_stride + bad_h * view->head_stride + bad_c];
        const char *text = isnan(value) ? "nan" : value > 0 ? "inf" : "-inf";
        if (bad_input)
            st = posenc_fail_(err, POSENC_ERR_NONFINITE,
                              "rotated value at token %zu, head %zu, channel %zu is %s: the input of token %zu "
                              "already holds inf or NaN", bad_t, bad_h, bad_c, text, bad_t);
        else
            st = posenc_fail_(err, POSENC_ERR_NONFINITE,
                              "rotated value at token %zu, head %zu, channel %zu is %s: the rotation scaled by "
                              "ggml's magnitude %g overflows f32 (largest finite 3.40282e+38)",
                              bad_t, bad_h, bad_c, text, (double)m);
    }
    free(axis), free(ang), free(c), free(s);
    rope_plan_free_(&plan);
    return st == POSENC_OK ? posenc_ok_(err) : st;
}

posenc_status posenc_mrope_apply_f32(const posenc_rope_params *params, const posenc_mrope_sections *sections,
                                     posenc_layout layout, const posenc_rope_view *view, const int64_t *positions,
                                     int inverse, float *x, size_t x_count, posenc_error *err) {
    int32_t r = 0;
    FORWARD_IF_ERROR(posenc_rope_check(params, &r, err));
    FORWARD_IF_ERROR(check_sections(sections, r / 2, err));
    if (params->mode == POSENC_MODE_GGML)
        return mrope_apply_ggml(params, sections, layout, view, positions, inverse, x, x_count, err);
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
    for (size_t k = 0; st == POSENC_OK && k < n; k++) plan.inv_abs_max = fmaxl(plan.inv_abs_max, fabsl(inv[k]));
    /* the checks every apply shares (rope.c), positions [axes][tokens] */
    if (st == POSENC_OK) st = rope_check_apply_(&plan, layout, view, positions, (size_t)sections->axes, x, x_count, err);
    if (st == POSENC_OK && view->tokens > 0)
        st = rope_apply_mrope_fast_(&plan, axis, sections, layout, view, positions, inverse, x, err);
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
