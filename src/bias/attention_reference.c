/* attention_reference.c: multi-head scaled dot-product attention, naive and
 * readable (llm.c style), with each positional scheme applied where it acts.
 * It is the oracle that fast kernels are tested against: every dot product,
 * softmax and weighted sum is accumulated in double, rounded once to f32.
 *
 * Steps for one head h and one query a (position i):
 *   1. (ROPE) rotate q[h][a] by i and every k[h][b] by j    -> q', k'
 *      (posenc_rope_apply_f32: f32 rotation, as the RoPE family and models do)
 *   2. logit_b = scale * (q'.k'_b  [+ q.a_K[idx_ab]  SHAW])
 *                [+ ALiBi or T5 bias]  [+ logit_bias[h][a][b]]
 *   3. causal: keys with j > i get weight exactly 0
 *   4. w = softmax(logits)                (max-subtracted, in double)
 *   5. out = sum_b w_b (v_b  [+ a_V[idx_ab]  SHAW]) */
#include "bias_internal.h"

#include <stdlib.h>
#include <string.h>

void posenc_attention_config_default(posenc_attention_config *config, int32_t heads,
                                     int32_t head_dim, size_t query_len, size_t key_len) {
    if (!config) return;
    memset(config, 0, sizeof *config);
    config->heads = heads;
    config->head_dim = head_dim;
    config->query_len = query_len;
    config->key_len = key_len;
    config->scale = head_dim > 0 ? 1.0 / sqrt((double)head_dim) : 1.0;
    config->scheme = POSENC_ATTENTION_NONE;
    config->alibi_form = POSENC_ALIBI_CAUSAL;
    posenc_t5_params_default(&config->t5);
    posenc_rope_params_default(&config->rope, head_dim);
    config->rope_layout = POSENC_LAYOUT_HALF;
}

static posenc_status check_scheme(const posenc_attention_config *c, posenc_error *err) {
    switch (c->scheme) {
    case POSENC_ATTENTION_NONE:
        return POSENC_OK;
    case POSENC_ATTENTION_ALIBI:
        RETURN_ERROR_IF(c->alibi_slopes == NULL, err, POSENC_ERR_NULL_POINTER,
                        "scheme ALIBI needs alibi_slopes ([heads] floats)");
        RETURN_ERROR_IF(c->alibi_form != POSENC_ALIBI_CAUSAL &&
                            c->alibi_form != POSENC_ALIBI_SYMMETRIC,
                        err, POSENC_ERR_INVALID_ARGUMENT,
                        "alibi_form must be CAUSAL (0) or SYMMETRIC (1), got %d",
                        (int)c->alibi_form);
        return POSENC_OK;
    case POSENC_ATTENTION_T5:
        RETURN_ERROR_IF(c->t5_table == NULL, err, POSENC_ERR_NULL_POINTER,
                        "scheme T5 needs t5_table ([num_buckets, heads] floats)");
        return posenc_t5_check(&c->t5, err);
    case POSENC_ATTENTION_SHAW:
        RETURN_ERROR_IF(c->shaw_clip < 0, err, POSENC_ERR_INVALID_ARGUMENT,
                        "shaw_clip k must be >= 0, got %d", c->shaw_clip);
        RETURN_ERROR_IF(c->shaw_clip > (1 << 30), err, POSENC_ERR_LIMIT,
                        "shaw_clip k must be <= 2^30, got %d", c->shaw_clip);
        RETURN_ERROR_IF(c->shaw_key_table == NULL, err, POSENC_ERR_NULL_POINTER,
                        "scheme SHAW needs shaw_key_table ([2k+1, head_dim] floats)");
        return POSENC_OK;
    case POSENC_ATTENTION_ROPE:
        RETURN_ERROR_IF(c->rope.head_dim != c->head_dim, err, POSENC_ERR_INVALID_ARGUMENT,
                        "rope.head_dim must equal head_dim = %d, got %d", c->head_dim,
                        c->rope.head_dim);
        RETURN_ERROR_IF(c->rope_layout != POSENC_LAYOUT_INTERLEAVED &&
                            c->rope_layout != POSENC_LAYOUT_HALF,
                        err, POSENC_ERR_INVALID_ARGUMENT, "rope_layout must be INTERLEAVED (0) "
                        "or HALF (1), got %d", (int)c->rope_layout);
        return posenc_rope_check(&c->rope, NULL, err);
    }
    return posenc_fail_(err, POSENC_ERR_INVALID_ARGUMENT, "unknown attention scheme %d",
                        (int)c->scheme);
}

static posenc_status check_config(const posenc_attention_config *c, size_t out_count,
                                  const float *weights, size_t weights_count, posenc_error *err) {
    RETURN_ERROR_IF(c->heads <= 0, err, POSENC_ERR_INVALID_ARGUMENT, "heads must be > 0, got %d",
                    c->heads);
    RETURN_ERROR_IF(c->head_dim <= 0, err, POSENC_ERR_INVALID_ARGUMENT,
                    "head_dim must be > 0, got %d", c->head_dim);
    RETURN_ERROR_IF(c->query_len == 0, err, POSENC_ERR_INVALID_ARGUMENT,
                    "query length must be > 0, got 0");
    RETURN_ERROR_IF(c->key_len == 0, err, POSENC_ERR_INVALID_ARGUMENT,
                    "key length must be > 0, got 0");
    posenc_positions q = posenc_positions_range(c->query_start, c->query_len);
    posenc_positions k = posenc_positions_range(c->key_start, c->key_len);
    FORWARD_IF_ERROR(posenc_check_named_positions_(&q, "query", true, err));
    FORWARD_IF_ERROR(posenc_check_named_positions_(&k, "key", true, err));
    RETURN_ERROR_IF(c->causal != 0 && c->causal != 1, err, POSENC_ERR_INVALID_ARGUMENT,
                    "causal must be 0 or 1, got %d", c->causal);
    RETURN_ERROR_IF(c->causal && c->query_start < c->key_start, err, POSENC_ERR_INVALID_ARGUMENT,
                    "causal attention: query position %lld sees no key (keys start at %lld)",
                    (long long)c->query_start, (long long)c->key_start);
    RETURN_ERROR_IF(!posenc_is_finite_(c->scale) || c->scale <= 0.0, err,
                    POSENC_ERR_INVALID_ARGUMENT, "scale must be finite and > 0, got %g", c->scale);
    FORWARD_IF_ERROR(check_scheme(c, err));
    size_t need = 0;
    FORWARD_IF_ERROR(posenc_count3_((size_t)c->heads, c->query_len, (size_t)c->head_dim,
                                    "heads x query_len x head_dim", &need, err));
    RETURN_ERROR_IF(out_count < need, err, POSENC_ERR_BUFFER_TOO_SMALL,
                    "output holds %zu elements, [%d x %zu x %d] needs %zu", out_count, c->heads,
                    c->query_len, c->head_dim, need);
    FORWARD_IF_ERROR(posenc_count3_((size_t)c->heads, c->key_len, (size_t)c->head_dim,
                                    "heads x key_len x head_dim", &need, err));
    FORWARD_IF_ERROR(posenc_count3_((size_t)c->heads, c->query_len, c->key_len,
                                    "heads x query_len x key_len", &need, err));
    RETURN_ERROR_IF(weights != NULL && weights_count < need, err, POSENC_ERR_BUFFER_TOO_SMALL,
                    "weights hold %zu elements, [%d x %zu x %zu] needs %zu", weights_count,
                    c->heads, c->query_len, c->key_len, need);
    return POSENC_OK;
}

/* Copy rows [heads, count, d] of f32 into double; under ROPE, first rotate an
 * f32 copy with the RoPE family's posenc_rope_apply_f32 (row t of head h has
 * position start + t; see posenc.h section 4 for the pair layouts). */
static posenc_status load_rows(const posenc_attention_config *c, const float *in, size_t count,
                               int64_t start, double *out, posenc_error *err) {
    size_t d = (size_t)c->head_dim, n = (size_t)c->heads * count * d;
    if (c->scheme != POSENC_ATTENTION_ROPE) {
        for (size_t t = 0; t < n; t++) out[t] = in[t];
        return POSENC_OK;
    }
    float *rotated = malloc(n * sizeof *rotated);
    int64_t *positions = calloc(count, sizeof *positions);
    posenc_status st = POSENC_OK;
    if (!rotated || !positions) {
        st = posenc_fail_(err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %zu rotated values", n);
    } else {
        memcpy(rotated, in, n * sizeof *rotated);
        for (size_t t = 0; t < count; t++) positions[t] = start + (int64_t)t;
        /* one head at a time: each is a contiguous [count][d] block (RoPE views
         * are token-major, ours is head-major) */
        posenc_rope_view view = posenc_rope_view_contiguous(count, 1, c->head_dim);
        int64_t seq_len = c->key_start + (int64_t)c->key_len;
        for (size_t h = 0; st == POSENC_OK && h < (size_t)c->heads; h++)
            st = posenc_rope_apply_f32(&c->rope, seq_len, c->rope_layout, &view, positions, 0,
                                       rotated + h * count * d, count * d, err);
        for (size_t t = 0; st == POSENC_OK && t < n; t++) out[t] = rotated[t];
    }
    free(rotated);
    free(positions);
    return st;
}

static double dot(const double *a, const double *b, size_t n) {
    double s = 0.0;
    for (size_t t = 0; t < n; t++) s += a[t] * b[t];
    return s;
}

/* Shaw row index clip(j - i, -k, k) + k. */
static size_t shaw_index(int64_t i, int64_t j, int32_t clip) {
    int64_t d = j - i;
    if (d < -clip) d = -clip;
    if (d > clip) d = clip;
    return (size_t)(d + clip);
}

posenc_status posenc_attention_reference_f32(const posenc_attention_config *config,
                                             const float *q, const float *k, const float *v,
                                             float *out, size_t out_count, float *weights,
                                             size_t weights_count, posenc_error *err) {
    RETURN_IF_NULL(config, err);
    RETURN_IF_NULL(q, err);
    RETURN_IF_NULL(k, err);
    RETURN_IF_NULL(v, err);
    RETURN_IF_NULL(out, err);
    FORWARD_IF_ERROR(check_config(config, out_count, weights, weights_count, err));
    const posenc_attention_config *c = config;
    size_t H = (size_t)c->heads, D = (size_t)c->head_dim, LQ = c->query_len, LK = c->key_len;

    double *qd = malloc(H * LQ * D * sizeof *qd);
    double *kd = malloc(H * LK * D * sizeof *kd);
    double *logits = malloc(LK * sizeof *logits);
    float *bias_row = malloc(LK * sizeof *bias_row);
    int32_t *buckets = c->scheme == POSENC_ATTENTION_T5 ? malloc(LQ * LK * sizeof *buckets) : NULL;
    posenc_status st = POSENC_OK;
    if (!qd || !kd || !logits || !bias_row || (c->scheme == POSENC_ATTENTION_T5 && !buckets)) {
        st = posenc_fail_(err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate attention scratch for "
                          "[%zu x %zu x %zu]", H, LQ, LK);
        goto done;
    }
    posenc_positions qpos = posenc_positions_range(c->query_start, LQ);
    posenc_positions kpos = posenc_positions_range(c->key_start, LK);
    if ((st = load_rows(c, q, LQ, c->query_start, qd, err)) != POSENC_OK ||
        (st = load_rows(c, k, LK, c->key_start, kd, err)) != POSENC_OK)
        goto done;
    if (buckets &&
        (st = posenc_t5_bucket_matrix_i32(&c->t5, &qpos, &kpos, buckets, LQ * LK, err)) != POSENC_OK)
        goto done;

    for (size_t h = 0; h < H; h++) {
        for (size_t a = 0; a < LQ; a++) {
            int64_t i = c->query_start + (int64_t)a;
            const double *qa = qd + (h * LQ + a) * D;
            if (c->scheme == POSENC_ATTENTION_ALIBI &&
                (st = posenc_alibi_bias_row_f32(c->alibi_slopes[h], c->alibi_form, (double)i,
                                                &kpos, bias_row, LK, err)) != POSENC_OK)
                goto done;
            /* 1-3: logits of the visible keys (keys 0..visible-1 are at or before i) */
            size_t visible = LK;
            if (c->causal && c->key_start + (int64_t)LK - 1 > i) visible = (size_t)(i - c->key_start) + 1;
            double max_logit = -INFINITY;
            for (size_t b = 0; b < visible; b++) {
                int64_t j = c->key_start + (int64_t)b;
                double s = dot(qa, kd + (h * LK + b) * D, D);
                if (c->scheme == POSENC_ATTENTION_SHAW) {
                    const float *aK = c->shaw_key_table + shaw_index(i, j, c->shaw_clip) * D;
                    for (size_t t = 0; t < D; t++) s += qa[t] * (double)aK[t];
                }
                s *= c->scale;
                if (c->scheme == POSENC_ATTENTION_ALIBI) s += bias_row[b];
                if (c->scheme == POSENC_ATTENTION_T5)
                    s += c->t5_table[(size_t)buckets[a * LK + b] * H + h];
                if (c->logit_bias) s += c->logit_bias[(h * LQ + a) * LK + b];
                logits[b] = s;
                if (s > max_logit) max_logit = s;
            }
            /* 4: softmax over the visible keys; masked keys weigh exactly 0 */
            double total = 0.0;
            for (size_t b = 0; b < visible; b++) {
                logits[b] = exp(logits[b] - max_logit);
                total += logits[b];
            }
            for (size_t b = 0; b < visible; b++) logits[b] /= total;
            if (weights)
                for (size_t b = 0; b < LK; b++)
                    weights[(h * LQ + a) * LK + b] = b < visible ? (float)logits[b] : 0.0f;
            /* 5: weighted sum of values (plus Shaw's value embeddings) */
            for (size_t t = 0; t < D; t++) {
                double acc = 0.0;
                for (size_t b = 0; b < visible; b++) {
                    double val = v[(h * LK + b) * D + t];
                    if (c->scheme == POSENC_ATTENTION_SHAW && c->shaw_value_table)
                        val += c->shaw_value_table[shaw_index(i, c->key_start + (int64_t)b,
                                                              c->shaw_clip) * D + t];
                    acc += logits[b] * val;
                }
                out[(h * LQ + a) * D + t] = (float)acc;
            }
        }
    }
    st = posenc_ok_(err);
done:
    free(qd);
    free(kd);
    free(logits);
    free(bias_row);
    free(buckets);
    return st;
}
