/* hybrid.c: the two variants the third source article names in §5.1: a hybrid
 * table (learned low channels, fixed sinusoid high channels) and a sinusoid
 * whose angle rates carry a learnable scalar scale, with its gradient. */
#include "../common/internal.h"

#include <stdlib.h>
#include <string.h>

posenc_status posenc_hybrid_table_f32(const float *learned, size_t learned_rows,
                                      int32_t learned_dim, const posenc_sinusoid_params *params,
                                      const posenc_positions *positions, posenc_past_end policy,
                                      float *out, size_t out_count, posenc_error *err) {
    RETURN_IF_NULL(params, err);
    FORWARD_IF_ERROR(posenc_sinusoid_check(params, NULL, err));
    FORWARD_IF_ERROR(posenc_check_positions_(positions, err));
    RETURN_ERROR_IF(positions->values != NULL, err, POSENC_ERR_INVALID_ARGUMENT,
                    "hybrid positions must be integers (a learned table has no row between rows)");
    RETURN_ERROR_IF(learned_dim < 0 || learned_dim > params->dim, err, POSENC_ERR_INVALID_ARGUMENT,
                    "learned_dim must be in [0, dim=%d], got %d", params->dim, learned_dim);
    RETURN_ERROR_IF(learned_dim > 0 && learned == NULL, err, POSENC_ERR_NULL_POINTER,
                    "learned must not be NULL when learned_dim = %d", learned_dim);
    size_t count = positions->count;
    int64_t *ids = malloc(sizeof *ids * count);
    float *rows = learned_dim > 0 ? malloc(sizeof *rows * count * (size_t)learned_dim) : NULL;
    if (!ids || (learned_dim > 0 && !rows)) {
        free(ids);
        free(rows);
        return posenc_fail_(err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %zu hybrid rows", count);
    }
    for (size_t r = 0; r < count; r++)
        ids[r] = positions->ids ? positions->ids[r] : positions->start + (int64_t)r;
    /* gather first: a past-the-end position fails before out is written */
    posenc_status st = POSENC_OK;
    if (learned_dim > 0)
        st = posenc_learned_gather_f32(learned, learned_rows, learned_dim, ids, count, policy, rows,
                                       count * (size_t)learned_dim, err);
    if (st == POSENC_OK)
        st = posenc_sinusoid_table_f32(params, positions, out, out_count, err);
    if (st == POSENC_OK && learned_dim > 0) /* rows is NULL when no channel is learned: no offset into it */
        for (size_t r = 0; r < count; r++)
            memcpy(out + r * (size_t)params->dim, rows + r * (size_t)learned_dim,
                   sizeof(float) * (size_t)learned_dim);
    free(ids);
    free(rows);
    return st == POSENC_OK ? posenc_ok_(err) : st;
}

static posenc_status check_scale(const posenc_sinusoid_params *params, double scale,
                                 posenc_error *err) {
    RETURN_IF_NULL(params, err);
    RETURN_ERROR_IF(!isfinite(scale) || scale <= 0, err, POSENC_ERR_INVALID_ARGUMENT,
                    "frequency scale must be finite and > 0, got %g", scale);
    RETURN_ERROR_IF(params->mode != POSENC_MODE_PRECISE, err, POSENC_ERR_UNSUPPORTED,
                    "the frequency-scale table is computed in precise mode only, got mode %d",
                    (int)params->mode);
    return POSENC_OK;
}

posenc_status posenc_freq_scale_table_f32(const posenc_sinusoid_params *params, double scale,
                                          const posenc_positions *positions, float *out,
                                          size_t out_count, posenc_error *err) {
    FORWARD_IF_ERROR(check_scale(params, scale, err));
    FORWARD_IF_ERROR(posenc_check_positions_(positions, err));
    /* sin(p (s w)) = sin((s p) w): the table at real positions s*p (one extra
     * double rounding of s*p, 2^-53 relative, far below float32 resolution) */
    double *values = malloc(sizeof *values * positions->count);
    RETURN_ERROR_IF(!values, err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %zu positions",
                    positions->count);
    for (size_t r = 0; r < positions->count; r++)
        values[r] = scale * (double)posenc_position_at_(positions, r);
    posenc_positions scaled = posenc_positions_values(values, positions->count);
    posenc_status st = posenc_sinusoid_table_f32(params, &scaled, out, out_count, err);
    free(values);
    return st;
}

posenc_status posenc_freq_scale_gradient(const posenc_sinusoid_params *params, double scale,
                                         const posenc_positions *positions, const float *grad_out,
                                         size_t grad_count, double *out_grad, posenc_error *err) {
    FORWARD_IF_ERROR(check_scale(params, scale, err));
    FORWARD_IF_ERROR(posenc_check_positions_(positions, err));
    RETURN_IF_NULL(grad_out, err);
    RETURN_IF_NULL(out_grad, err);
    int32_t pairs = 0;
    FORWARD_IF_ERROR(posenc_sinusoid_check(params, &pairs, err));
    size_t need;
    FORWARD_IF_ERROR(posenc_table_count(positions->count, params->dim, &need, err));
    RETURN_ERROR_IF(grad_count < need, err, POSENC_ERR_BUFFER_TOO_SMALL,
                    "gradient holds %zu elements, table [%zu x %d] needs %zu", grad_count,
                    positions->count, params->dim, need);
    double *w = malloc(sizeof *w * (size_t)pairs);
    RETURN_ERROR_IF(!w, err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %d frequencies", pairs);
    posenc_status st = posenc_sinusoid_frequencies_f64(params, w, (size_t)pairs, err);
    if (st != POSENC_OK) {
        free(w);
        return st;
    }
    long double total = 0;
    size_t d = (size_t)params->dim;
    for (size_t r = 0; r < positions->count; r++) {
        long double p = posenc_position_at_(positions, r);
        const float *g = grad_out + r * d;
        for (int32_t k = 0; k < pairs; k++) {
            size_t sc = params->layout == POSENC_LAYOUT_HALF ? (size_t)k : 2 * (size_t)k;
            size_t cc = params->layout == POSENC_LAYOUT_HALF ? (size_t)(pairs + k) : 2 * (size_t)k + 1;
            long double pw = p * (long double)w[k], angle = (long double)scale * pw;
            /* d sin(s p w)/ds = p w cos(s p w);  d cos(s p w)/ds = -p w sin(s p w);
             * channels cut by odd=round_up (>= dim) carry no gradient */
            if (sc < d) total += (long double)g[sc] * pw * cosl(angle);
            if (cc < d) total -= (long double)g[cc] * pw * sinl(angle);
        }
    }
    free(w);
    *out_grad = (double)total;
    return posenc_ok_(err);
}
