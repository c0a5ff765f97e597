/* position.c: the position schemes: how each one enters the model (added to
 * or concatenated with the token embedding, rotating q and k, biasing the
 * attention logits) and its backward. Every encoding value comes from
 * posenc.h; this file only wires the library's tables into the model. */
#include "lab_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void sinusoid_params(const lab_config *c, posenc_sinusoid_params *p) {
    posenc_sinusoid_params_default(p, lab_pe_width(c)); /* interleaved, Vaswani, 10000, precise */
}

posenc_status lab_scheme_prepare(lab_model *m, posenc_error *err) {
    const lab_config *c = &m->cfg;
    if (c->scheme == LAB_POS_ALIBI) {
        m->alibi_slopes = malloc(sizeof(float) * (size_t)c->heads);
        if (!m->alibi_slopes) return lab_fail(err, POSENC_ERR_OUT_OF_MEMORY, "out of memory");
        return posenc_alibi_slopes_f32(c->heads, c->alibi_max_bias, 0, 0, POSENC_MODE_PRECISE, m->alibi_slopes,
                                       (size_t)c->heads, err);
    }
    if (c->scheme == LAB_POS_SPARSE) { /* fixed channel mask, a pure function of the seed */
        m->sparse_mask = malloc(sizeof(float) * (size_t)c->d_model);
        if (!m->sparse_mask) return lab_fail(err, POSENC_ERR_OUT_OF_MEMORY, "out of memory");
        for (int32_t i = 0; i < c->d_model; i++) {
            double u = (double)(lab_splitmix64(c->seed ^ (0xA5A5A5A5ull + (uint64_t)i)) >> 11) * 0x1.0p-53;
            m->sparse_mask[i] = u < c->sparse_keep ? 1.0f : 0.0f;
        }
    }
    return POSENC_OK;
}

/* Sinusoid rows 0..rows-1 (cached, grown on demand: training reuses one table). */
posenc_status lab_sinusoid_rows(lab_model *m, int64_t rows, posenc_error *err) {
    if ((size_t)rows <= m->sin_cache_rows) return POSENC_OK;
    posenc_sinusoid_params p;
    sinusoid_params(&m->cfg, &p);
    size_t count = (size_t)rows * (size_t)p.dim;
    float *t = malloc(count * sizeof(float));
    if (!t) return lab_fail(err, POSENC_ERR_OUT_OF_MEMORY, "out of memory: sinusoid table of %lld rows", (long long)rows);
    posenc_positions pos = posenc_positions_range(0, (size_t)rows);
    posenc_exec ex;
    posenc_exec_default(&ex);
    ex.threads = 1;
    posenc_status st = posenc_sinusoid_table_exec(&p, &pos, POSENC_DTYPE_F32, t, count, &ex, err);
    if (st) {
        free(t);
        return st;
    }
    free(m->sin_cache);
    m->sin_cache = t;
    m->sin_cache_rows = (size_t)rows;
    return POSENC_OK;
}

posenc_status lab_position_table_memory(lab_model *m, int64_t rows, lab_table_memory *out, posenc_error *err) {
    const lab_config *c = &m->cfg;
    memset(out, 0, sizeof *out);
    if (!lab_has_fixed_table(c)) return POSENC_OK;
    if (rows < 1) return lab_fail(err, POSENC_ERR_INVALID_ARGUMENT, "position table memory needs rows >= 1, got %lld", (long long)rows);
    posenc_status st = lab_sinusoid_rows(m, rows, err);
    if (st) return st;
    size_t P = (size_t)lab_pe_width(c), R = (size_t)rows, nonzeros = 0, kept = 0, all_nonzeros = 0, all_kept = 0;
    for (size_t k = 0; k < P; k++) {
        size_t in_column = 0, unmasked = 0;
        for (size_t r = 0; r < R; r++) { /* the value lab_encode_forward adds (sparse: times the mask) */
            float v = m->sin_cache[r * P + k];
            unmasked += v != 0.0f;
            if (c->scheme == LAB_POS_SPARSE) v *= m->sparse_mask[k];
            in_column += v != 0.0f;
        }
        nonzeros += in_column;
        kept += in_column > 0;
        all_nonzeros += unmasked;
        all_kept += unmasked > 0;
    }
    /* the mask keeps each channel with probability sparse_keep, independently of the seed's draw */
    double keep = c->scheme == LAB_POS_SPARSE ? c->sparse_keep : 1.0;
    out->expected_nonzeros = c->scheme == LAB_POS_SPARSE ? keep * (double)all_nonzeros : (double)nonzeros;
    out->expected_kept = c->scheme == LAB_POS_SPARSE ? keep * (double)all_kept : (double)kept;
    out->rows = rows;
    out->cols = (int64_t)P;
    out->nonzeros = (int64_t)nonzeros;
    out->kept_channels = (int64_t)kept;
    out->dense_bytes = R * P * sizeof(float);
    out->csr_bytes = nonzeros * (sizeof(float) + sizeof(int32_t)) + (R + 1) * sizeof(int32_t);
    out->bitmask_bytes = R * ((P + 7) / 8) + nonzeros * sizeof(float);
    out->columns_bytes = kept * sizeof(int32_t) + R * kept * sizeof(float);
    out->coo64_bytes = nonzeros * (2 * sizeof(int64_t) + sizeof(float)) + 2 * sizeof(int64_t);
    return POSENC_OK;
}

int64_t lab_max_position(const lab_acts *a) {
    int64_t mx = 0;
    for (size_t i = 0; i < (size_t)a->B * (size_t)a->T; i++) mx = a->pos[i] > mx ? a->pos[i] : mx;
    return mx;
}

int lab_has_fixed_table(const lab_config *c) {
    return c->scheme == LAB_POS_SINUSOIDAL || c->scheme == LAB_POS_SPARSE || c->scheme == LAB_POS_CONCAT ||
           c->scheme == LAB_POS_HALF_CONCAT || c->scheme == LAB_POS_GRU;
}

/* pe[i] = sinusoid(pos[i]) through the cached table. */
static posenc_status gather_sinusoid(lab_model *m, lab_acts *a, float *pe, posenc_error *err) {
    int32_t P = lab_pe_width(&m->cfg);
    posenc_status st = lab_sinusoid_rows(m, lab_max_position(a) + 1, err);
    if (st) return st;
    for (size_t i = 0; i < (size_t)a->B * (size_t)a->T; i++)
        memcpy(pe + i * (size_t)P, m->sin_cache + (size_t)a->pos[i] * (size_t)P, sizeof(float) * (size_t)P);
    return POSENC_OK;
}

posenc_status lab_encode_forward(lab_model *m, lab_acts *a, posenc_error *err) {
    const lab_config *c = &m->cfg;
    size_t BT = (size_t)a->B * (size_t)a->T, C = (size_t)c->d_model, T = (size_t)a->T;
    size_t W = (size_t)lab_wte_width(c), P = (size_t)lab_pe_width(c);
    const float *wte = lab_param_ptr(m, T_WTE);
    float scale = c->token_scale_sqrt_d && c->scheme == LAB_POS_SINUSOIDAL ? sqrtf((float)c->d_model) : 1.0f;
    posenc_status st = POSENC_OK;
    posenc_sinusoid_params sp;
    sinusoid_params(c, &sp);
    /* the position part */
    switch (c->scheme) {
    case LAB_POS_SINUSOIDAL: case LAB_POS_SPARSE: case LAB_POS_CONCAT: case LAB_POS_HALF_CONCAT: case LAB_POS_GRU:
        st = gather_sinusoid(m, a, a->pe, err);
        if (!st && c->scheme == LAB_POS_SPARSE)
            for (size_t i = 0; i < BT; i++)
                for (size_t k = 0; k < C; k++) a->pe[i * C + k] *= m->sparse_mask[k];
        break;
    case LAB_POS_INDEX: case LAB_POS_NORMALIZED:
        for (int32_t b = 0; b < a->B && !st; b++) {
            posenc_positions pos = posenc_positions_ids(a->pos + (size_t)b * T, T);
            st = posenc_baseline_table(c->scheme == LAB_POS_INDEX ? POSENC_KIND_INDEX : POSENC_KIND_NORMALIZED,
                                       (int32_t)C, &pos, POSENC_DTYPE_F32, a->pe + (size_t)b * T * C, T * C, err);
        }
        break;
    case LAB_POS_LEARNED:
        st = posenc_learned_gather_f32(lab_param_ptr(m, T_WPE), (size_t)lab_table_rows(c), (int32_t)C, a->pos, BT,
                                       a->learned_policy, a->pe, BT * C, err);
        break;
    case LAB_POS_HYBRID: {
        const lab_tensor_slot *s = &m->slots[T_WPE];
        for (int32_t b = 0; b < a->B && !st; b++) {
            posenc_positions pos = posenc_positions_ids(a->pos + (size_t)b * T, T);
            st = posenc_hybrid_table_f32(lab_param_ptr(m, T_WPE), s->info.shape[0], (int32_t)s->info.shape[1], &sp,
                                         &pos, a->learned_policy, a->pe + (size_t)b * T * C, T * C, err);
        }
        break;
    }
    case LAB_POS_FREQ_SCALE: {
        double s = lab_param_ptr(m, T_FREQ_SCALE)[0];
        if (!(s > 0 && isfinite(s)))
            return lab_fail(err, POSENC_ERR_INVALID_ARGUMENT, "the learned frequency scale became %g (must stay > 0)", s);
        for (int32_t b = 0; b < a->B && !st; b++) {
            posenc_positions pos = posenc_positions_ids(a->pos + (size_t)b * T, T);
            st = posenc_freq_scale_table_f32(&sp, s, &pos, a->pe + (size_t)b * T * C, T * C, err);
        }
        break;
    }
    case LAB_POS_SHAW:
        for (int32_t b = 0; b < a->B && !st; b++) {
            posenc_positions pos = posenc_positions_ids(a->pos + (size_t)b * T, T);
            st = posenc_shaw_relative_indices_i32(c->shaw_clip, &pos, &pos, a->buckets + (size_t)b * T * T, T * T, err);
        }
        break;
    case LAB_POS_T5: {
        posenc_t5_params tp = {c->t5_buckets, c->t5_max_distance, c->causal ? 0 : 1};
        for (int32_t b = 0; b < a->B && !st; b++) {
            posenc_positions pos = posenc_positions_ids(a->pos + (size_t)b * T, T);
            st = posenc_t5_bucket_matrix_i32(&tp, &pos, &pos, a->buckets + (size_t)b * T * T, T * T, err);
        }
        break;
    }
    default: break;
    }
    if (st) return st;
    /* compose */
    if (c->scheme == LAB_POS_CONCAT) {
        for (size_t i = 0; i < BT; i++) {
            float *row = a->concat_in + i * (C + P);
            const float *tok = wte + (size_t)a->tokens[i] * W;
            memcpy(row, tok, sizeof(float) * C);
            memcpy(row + C, a->pe + i * P, sizeof(float) * P);
        }
        lab_matmul_forward(m->pool, a->encoded, a->concat_in, lab_param_ptr(m, T_CONCAT_PROJ), NULL, BT, (int32_t)(C + P),
                           (int32_t)C);
        return POSENC_OK;
    }
    if (c->scheme == LAB_POS_HALF_CONCAT) {
        for (size_t i = 0; i < BT; i++) {
            memcpy(a->encoded + i * C, wte + (size_t)a->tokens[i] * W, sizeof(float) * W);
            memcpy(a->encoded + i * C + W, a->pe + i * P, sizeof(float) * P);
        }
        return POSENC_OK;
    }
    for (size_t i = 0; i < BT; i++) {
        const float *tok = wte + (size_t)a->tokens[i] * W;
        float *out = a->encoded + i * C;
        for (size_t k = 0; k < C; k++) out[k] = tok[k] * scale;
    }
    if (c->scheme == LAB_POS_GRU) {
        size_t B = (size_t)a->B, C3 = 3 * C;
        float *gi = a->gru, *gh = gi + BT * C3, *r = gh + BT * C3, *z = r + BT * C, *nn = z + BT * C, *h = nn + BT * C;
        float *h0 = a->encoded + BT * 0; /* first token's embedding of each sequence: rows b*T */
        float *h0_rows = malloc(sizeof(float) * B * C);
        if (!h0_rows) return lab_fail(err, POSENC_ERR_OUT_OF_MEMORY, "out of memory");
        for (size_t b = 0; b < B; b++) memcpy(h0_rows + b * C, h0 + b * T * C, sizeof(float) * C);
        lab_gru_forward(h, gi, gh, r, z, nn, a->pe, h0_rows, lab_param_ptr(m, T_GRU_WIH), lab_param_ptr(m, T_GRU_WHH),
                        lab_param_ptr(m, T_GRU_BIH), lab_param_ptr(m, T_GRU_BHH), a->B, a->T, (int32_t)C);
        free(h0_rows);
        for (size_t b = 0; b < B; b++)
            for (size_t t = 0; t < T; t++) {
                const float *ht = h + (b * (T + 1) + t + 1) * C;
                float *out = a->encoded + (b * T + t) * C;
                for (size_t k = 0; k < C; k++) out[k] += ht[k];
            }
        return POSENC_OK;
    }
    if (P)
        for (size_t i = 0; i < BT * C; i++) a->encoded[i] += a->pe[i];
    return POSENC_OK;
}

posenc_status lab_encode_backward(lab_model *m, lab_acts *a, const float *d, posenc_error *err) {
    const lab_config *c = &m->cfg;
    size_t BT = (size_t)a->B * (size_t)a->T, C = (size_t)c->d_model, T = (size_t)a->T;
    size_t W = (size_t)lab_wte_width(c), P = (size_t)lab_pe_width(c);
    float *dwte = lab_grad_ptr(m, T_WTE);
    posenc_status st = POSENC_OK;
    if (c->scheme == LAB_POS_CONCAT) {
        float *dcat = calloc(BT * (C + P), sizeof(float));
        if (!dcat) return lab_fail(err, POSENC_ERR_OUT_OF_MEMORY, "out of memory");
        lab_matmul_backward(m->pool, dcat, lab_grad_ptr(m, T_CONCAT_PROJ), NULL, d, a->concat_in,
                            lab_param_ptr(m, T_CONCAT_PROJ), BT, (int32_t)(C + P), (int32_t)C);
        for (size_t i = 0; i < BT; i++) {
            float *g = dwte + (size_t)a->tokens[i] * W;
            for (size_t k = 0; k < C; k++) g[k] += dcat[i * (C + P) + k];
        }
        free(dcat);
        return POSENC_OK;
    }
    float scale = c->token_scale_sqrt_d && c->scheme == LAB_POS_SINUSOIDAL ? sqrtf((float)c->d_model) : 1.0f;
    for (size_t i = 0; i < BT; i++) {
        float *g = dwte + (size_t)a->tokens[i] * W;
        for (size_t k = 0; k < W; k++) g[k] += d[i * C + k] * scale;
    }
    switch (c->scheme) {
    case LAB_POS_LEARNED:
        st = posenc_learned_backward_f32(d, a->pos, BT, (int32_t)C, a->learned_policy, POSENC_NO_PADDING,
                                         lab_grad_ptr(m, T_WPE), (size_t)lab_table_rows(c), err);
        break;
    case LAB_POS_HYBRID: {
        const lab_tensor_slot *s = &m->slots[T_WPE];
        size_t ld = s->info.shape[1];
        float *g = malloc(sizeof(float) * BT * (ld ? ld : 1));
        if (!g) return lab_fail(err, POSENC_ERR_OUT_OF_MEMORY, "out of memory");
        for (size_t i = 0; i < BT; i++) memcpy(g + i * ld, d + i * C, sizeof(float) * ld);
        if (ld)
            st = posenc_learned_backward_f32(g, a->pos, BT, (int32_t)ld, a->learned_policy, POSENC_NO_PADDING,
                                             lab_grad_ptr(m, T_WPE), s->info.shape[0], err);
        free(g);
        break;
    }
    case LAB_POS_FREQ_SCALE: {
        posenc_sinusoid_params sp;
        sinusoid_params(c, &sp);
        double s = lab_param_ptr(m, T_FREQ_SCALE)[0], total = 0.0;
        for (int32_t b = 0; b < a->B && !st; b++) {
            posenc_positions pos = posenc_positions_ids(a->pos + (size_t)b * T, T);
            double g = 0.0;
            st = posenc_freq_scale_gradient(&sp, s, &pos, d + (size_t)b * T * C, T * C, &g, err);
            total += g;
        }
        lab_grad_ptr(m, T_FREQ_SCALE)[0] += (float)total;
        break;
    }
    case LAB_POS_GRU: {
        size_t B = (size_t)a->B, C3 = 3 * C;
        float *gi = a->gru, *gh = gi + BT * C3, *r = gh + BT * C3, *z = r + BT * C, *nn = z + BT * C, *h = nn + BT * C;
        float *dx = malloc(sizeof(float) * BT * C), *dh0 = malloc(sizeof(float) * B * C);
        if (!dx || !dh0) {
            free(dx);
            free(dh0);
            return lab_fail(err, POSENC_ERR_OUT_OF_MEMORY, "out of memory");
        }
        int gru_rc = lab_gru_backward(dx, dh0, lab_grad_ptr(m, T_GRU_WIH), lab_grad_ptr(m, T_GRU_WHH), lab_grad_ptr(m, T_GRU_BIH),
                         lab_grad_ptr(m, T_GRU_BHH), d, h, gi, gh, r, z, nn, a->pe, lab_param_ptr(m, T_GRU_WIH),
                         lab_param_ptr(m, T_GRU_WHH), a->B, a->T, (int32_t)C);
        if (gru_rc) {
            free(dx);
            free(dh0);
            return lab_fail(err, POSENC_ERR_OUT_OF_MEMORY, "out of memory in the GRU backward");
        }
        for (size_t b = 0; b < B; b++) { /* h0 = embedding of each sequence's first token */
            float *g = dwte + (size_t)a->tokens[b * T] * W;
            for (size_t k = 0; k < C; k++) g[k] += dh0[b * C + k];
        }
        free(dx);
        free(dh0);
        break;
    }
    default: break;
    }
    return st;
}

posenc_status lab_rope_qk(lab_model *m, lab_acts *a, float *qkv, int inverse, posenc_error *err) {
    const lab_config *c = &m->cfg;
    size_t BT = (size_t)a->B * (size_t)a->T, C = (size_t)c->d_model;
    int32_t hd = c->d_model / c->heads;
    posenc_rope_view v = {BT, (size_t)c->heads, 3 * C, (size_t)hd};
    posenc_exec ex;
    posenc_exec_default(&ex);
    ex.threads = 1;
    for (int part = 0; part < 2; part++) { /* q, then k */
        float *x = qkv + (size_t)part * C;
        size_t count = BT * 3 * C - (size_t)part * C;
        posenc_status st = posenc_rope_apply_exec(&a->rope, a->rope_seq_len, c->rope_layout, &v, a->pos, inverse,
                                                  POSENC_DTYPE_F32, x, count, &ex, err);
        if (st) return st;
    }
    /* Forward multiplies the rotated channels by the attention factor A and the
     * inverse divides by it; the gradient of x -> A R x is A R^T, so undo the 1/A
     * and apply A once more. */
    double af = a->rope_attention_factor;
    if (inverse && af != 1.0) {
        int32_t r = 0;
        (void)posenc_rope_check(&a->rope, &r, NULL);
        float f = (float)(af * af);
        for (size_t i = 0; i < BT; i++)
            for (int part = 0; part < 2; part++)
                for (int32_t h = 0; h < c->heads; h++) {
                    float *x = qkv + i * 3 * C + (size_t)part * C + (size_t)h * (size_t)hd;
                    for (int32_t k = 0; k < r; k++) x[k] *= f;
                }
    }
    return POSENC_OK;
}
