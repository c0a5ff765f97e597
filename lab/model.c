/* model.c: the lab model: parameter table, initialization, activation layout,
 * forward and backward passes (pre-LayerNorm decoder, GELU MLP, causal
 * softmax attention, tied or untied output). */
#include "lab_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const group_names[LAB_GROUPS] = {"tok", "pos", "attn", "mlp", "norm", "head"};
const char *lab_group_name(int group) { return group >= 0 && group < LAB_GROUPS ? group_names[group] : "?"; }

static void add_tensor(lab_model *m, int id, const char *name, const char *group, int decay, int ndim, size_t d0,
                       size_t d1, size_t d2) {
    lab_tensor_slot *s = &m->slots[id];
    s->present = 1;
    s->info.name = name;
    s->info.group = group;
    s->info.decay = decay;
    s->info.ndim = ndim;
    size_t dims[3] = {d0, d1, d2};
    s->info.count = 1;
    for (int i = 0; i < ndim; i++) {
        s->info.shape[i] = dims[i];
        s->info.count *= dims[i];
    }
    s->offset = m->param_count;
    m->param_count += s->info.count;
    m->order[m->tensor_count++] = s;
}

static void build_table(lab_model *m) {
    const lab_config *c = &m->cfg;
    size_t L = (size_t)c->layers, C = (size_t)c->d_model, F = (size_t)c->d_ff, V = (size_t)c->vocab;
    add_tensor(m, T_WTE, "wte", "tok", 1, 2, V, (size_t)lab_wte_width(c), 0);
    switch (c->scheme) {
    case LAB_POS_LEARNED: add_tensor(m, T_WPE, "wpe", "pos", 0, 2, (size_t)lab_table_rows(c), C, 0); break;
    case LAB_POS_HYBRID: {
        size_t ld = c->hybrid_learned_dim ? (size_t)c->hybrid_learned_dim : C / 2;
        add_tensor(m, T_WPE, "wpe", "pos", 0, 2, (size_t)lab_table_rows(c), ld, 0);
        break;
    }
    case LAB_POS_T5: add_tensor(m, T_T5, "t5_bias", "pos", 0, 2, (size_t)c->t5_buckets, (size_t)c->heads, 0); break;
    case LAB_POS_CONCAT:
        add_tensor(m, T_CONCAT_PROJ, "concat_proj.weight", "pos", 1, 2, C, C + (size_t)lab_pe_width(c), 0);
        break;
    case LAB_POS_FREQ_SCALE: add_tensor(m, T_FREQ_SCALE, "freq_scale", "pos", 0, 1, 1, 0, 0); break;
    case LAB_POS_GRU:
        add_tensor(m, T_GRU_WIH, "gru.weight_ih", "pos", 1, 2, 3 * C, C, 0);
        add_tensor(m, T_GRU_WHH, "gru.weight_hh", "pos", 1, 2, 3 * C, C, 0);
        add_tensor(m, T_GRU_BIH, "gru.bias_ih", "pos", 0, 1, 3 * C, 0, 0);
        add_tensor(m, T_GRU_BHH, "gru.bias_hh", "pos", 0, 1, 3 * C, 0, 0);
        break;
    default: break;
    }
    add_tensor(m, T_LN1_W, "blocks.ln_1.weight", "norm", 0, 2, L, C, 0);
    add_tensor(m, T_LN1_B, "blocks.ln_1.bias", "norm", 0, 2, L, C, 0);
    add_tensor(m, T_QKV_W, "blocks.attn.qkv.weight", "attn", 1, 3, L, 3 * C, C);
    add_tensor(m, T_QKV_B, "blocks.attn.qkv.bias", "attn", 0, 2, L, 3 * C, 0);
    add_tensor(m, T_PROJ_W, "blocks.attn.proj.weight", "attn", 1, 3, L, C, C);
    add_tensor(m, T_PROJ_B, "blocks.attn.proj.bias", "attn", 0, 2, L, C, 0);
    add_tensor(m, T_LN2_W, "blocks.ln_2.weight", "norm", 0, 2, L, C, 0);
    add_tensor(m, T_LN2_B, "blocks.ln_2.bias", "norm", 0, 2, L, C, 0);
    add_tensor(m, T_FC_W, "blocks.mlp.fc.weight", "mlp", 1, 3, L, F, C);
    add_tensor(m, T_FC_B, "blocks.mlp.fc.bias", "mlp", 0, 2, L, F, 0);
    add_tensor(m, T_FCPROJ_W, "blocks.mlp.proj.weight", "mlp", 1, 3, L, C, F);
    add_tensor(m, T_FCPROJ_B, "blocks.mlp.proj.bias", "mlp", 0, 2, L, C, 0);
    if (c->scheme == LAB_POS_SHAW) {
        size_t rows = 2 * (size_t)c->shaw_clip + 1, hd = C / (size_t)c->heads;
        add_tensor(m, T_SHAW_K, "blocks.attn.shaw_k", "pos", 0, 3, L, rows, hd);
        add_tensor(m, T_SHAW_V, "blocks.attn.shaw_v", "pos", 0, 3, L, rows, hd);
    }
    add_tensor(m, T_LNF_W, "ln_f.weight", "norm", 0, 1, C, 0, 0);
    add_tensor(m, T_LNF_B, "ln_f.bias", "norm", 0, 1, C, 0, 0);
    if (!c->tied) add_tensor(m, T_LM_HEAD, "lm_head.weight", "head", 1, 2, V, C, 0);
}

size_t lab_config_param_count(const lab_config *config) {
    lab_model *m = calloc(1, sizeof *m);
    if (!m) return SIZE_MAX;
    m->cfg = *config;
    build_table(m);
    size_t n = m->param_count;
    free(m);
    return n;
}

/* FNV-1a of a tensor name: the per-tensor seed depends on the name only, so
 * adding a tensor (or a scheme) never changes another tensor's initial values. */
static uint64_t name_hash(const char *name) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *name; name++) h = (h ^ (uint8_t)*name) * 0x100000001b3ull;
    return h;
}

/* Normal init through the library's counter-based N(0, sigma) generator, one
 * seed per tensor: splitmix64(seed ^ hash(name)). */
static posenc_status init_params(lab_model *m, posenc_error *err) {
    const lab_config *c = &m->cfg;
    double proj_sigma = c->init_sigma / sqrt(2.0 * c->layers); /* GPT-2's residual projections */
    for (size_t i = 0; i < m->tensor_count; i++) {
        lab_tensor_slot *s = m->order[i];
        int id = (int)(s - m->slots);
        float *p = m->params + s->offset;
        double sigma = -1; /* < 0: constant */
        float constant = 0.0f;
        switch (id) {
        case T_WTE: case T_QKV_W: case T_FC_W: case T_LM_HEAD: case T_CONCAT_PROJ: case T_T5: case T_SHAW_K: case T_SHAW_V: sigma = c->init_sigma; break;
        case T_PROJ_W: case T_FCPROJ_W: sigma = proj_sigma; break;
        case T_WPE: sigma = c->learned_sigma; break;
        case T_GRU_WIH: case T_GRU_WHH: case T_GRU_BIH: case T_GRU_BHH:
            sigma = 1.0 / sqrt(3.0 * c->d_model); /* variance of torch's U(-1/sqrt(C), 1/sqrt(C)) */
            break;
        case T_LN1_W: case T_LN2_W: case T_LNF_W: case T_FREQ_SCALE: constant = 1.0f; break;
        default: break;
        }
        if (sigma >= 0) {
            posenc_status st = posenc_learned_init_f32(lab_splitmix64(c->seed ^ name_hash(s->info.name)), sigma,
                                                       POSENC_NO_PADDING, s->info.count, 1, p, s->info.count, err);
            if (st) return st;
        } else {
            for (size_t k = 0; k < s->info.count; k++) p[k] = constant;
        }
    }
    return POSENC_OK;
}

posenc_status lab_model_create(const lab_config *config, int32_t threads, lab_model **out, posenc_error *err) {
    if (!out) return lab_fail(err, POSENC_ERR_NULL_POINTER, "out is NULL");
    *out = NULL;
    posenc_status st = lab_config_check(config, err);
    if (st) return st;
    if (threads < 0 || threads > POSENC_MAX_THREADS)
        return lab_fail(err, POSENC_ERR_INVALID_ARGUMENT, "threads must be in 0..%d, got %d", POSENC_MAX_THREADS, threads);
    if (threads == 0) {
        posenc_exec e;
        st = posenc_exec_resolve(NULL, &e, err);
        if (st) return st;
        threads = e.threads;
    }
    /* OpenBLAS runs single-threaded inside each of our tasks: the task
     * partition (fixed by the shapes) then decides every bit (blas.c). */
    st = lab_blas_load(err);
    if (st) return st;
    lab_model *m = calloc(1, sizeof *m);
    if (!m) return lab_fail(err, POSENC_ERR_OUT_OF_MEMORY, "out of memory allocating the model");
    m->cfg = *config;
    build_table(m);
    size_t n = m->param_count;
    m->params = calloc(n, sizeof(float));
    m->grads = calloc(n, sizeof(float));
    m->adam_m = calloc(n, sizeof(float));
    m->adam_v = calloc(n, sizeof(float));
    m->pool = lab_pool_create(threads);
    if (!m->params || !m->grads || !m->adam_m || !m->adam_v || !m->pool) {
        lab_model_free(m);
        return lab_fail(err, POSENC_ERR_OUT_OF_MEMORY, "out of memory allocating %zu parameters", n);
    }
    if ((st = init_params(m, err)) != POSENC_OK || (st = lab_scheme_prepare(m, err)) != POSENC_OK) {
        lab_model_free(m);
        return st;
    }
    *out = m;
    return POSENC_OK;
}

void lab_model_free(lab_model *m) {
    if (!m) return;
    free(m->params);
    free(m->grads);
    free(m->adam_m);
    free(m->adam_v);
    free(m->sparse_mask);
    free(m->alibi_slopes);
    free(m->sin_cache);
    free(m->act_block);
    free(m->scratch);
    free(m->grad_block);
    lab_pool_free(m->pool);
    free(m);
}

const lab_config *lab_model_config(const lab_model *m) { return &m->cfg; }
size_t lab_model_param_count(const lab_model *m) { return m->param_count; }
size_t lab_tensor_count(const lab_model *m) { return m->tensor_count; }
float *lab_params(lab_model *m) { return m->params; }

posenc_status lab_model_copy_weights(lab_model *dst, const lab_model *src, posenc_error *err) {
    if (!dst || !src) return lab_fail(err, POSENC_ERR_NULL_POINTER, "model is NULL");
    if (dst->tensor_count != src->tensor_count)
        return lab_fail(err, POSENC_ERR_INVALID_ARGUMENT, "the models have %zu and %zu tensors", dst->tensor_count,
                        src->tensor_count);
    for (size_t i = 0; i < dst->tensor_count; i++) {
        const lab_tensor_info *a = &src->order[i]->info, *b = &dst->order[i]->info;
        int same = strcmp(a->name, b->name) == 0 && a->ndim == b->ndim;
        for (int d = 0; same && d < a->ndim; d++) same = a->shape[d] == b->shape[d];
        if (!same)
            return lab_fail(err, POSENC_ERR_INVALID_ARGUMENT,
                            "tensor %zu differs: %s [%zu elements] in the source, %s [%zu] here (a table sized by the context?)",
                            i, a->name, a->count, b->name, b->count);
    }
    for (size_t i = 0; i < dst->tensor_count; i++)
        memcpy(dst->params + dst->order[i]->offset, src->params + src->order[i]->offset,
               dst->order[i]->info.count * sizeof(float));
    memset(dst->grads, 0, dst->param_count * sizeof(float));
    memset(dst->adam_m, 0, dst->param_count * sizeof(float));
    memset(dst->adam_v, 0, dst->param_count * sizeof(float));
    dst->step = 0;
    dst->have_forward = 0;
    return POSENC_OK;
}
float *lab_grads(lab_model *m) { return m->grads; }
int64_t lab_model_step(const lab_model *m) { return m->step; }
void lab_zero_grad(lab_model *m) { memset(m->grads, 0, m->param_count * sizeof(float)); }

const lab_tensor_info *lab_tensor(const lab_model *m, size_t i, float **param, float **grad) {
    if (i >= m->tensor_count) {
        if (param) *param = NULL;
        if (grad) *grad = NULL;
        return NULL;
    }
    const lab_tensor_slot *s = m->order[i];
    if (param) *param = m->params + s->offset;
    if (grad) *grad = m->grads + s->offset;
    return &s->info;
}

/* ---- activation layout ----
 * Floats kept for one training step (B sequences of T tokens, L layers, C =
 * d_model, F = d_ff, H heads, V vocab, P = position-table width):
 *   B T (2 C + P + V + F + 6) + L B T (8 C + 2 F + 4) + L B H T^2
 * plus scheme extras (t5 buckets B T^2 ints, concat B T (C+P), gru 12 B T C).
 * Evaluation keeps one layer's worth (L = 1 in the per-layer terms) and no
 * attention probabilities (a T^2 scratch per thread instead). */
typedef struct {
    char *base;
    size_t used;
} carver;

static void *carve(carver *k, size_t bytes) {
    void *p = k->base ? k->base + k->used : NULL;
    k->used += (bytes + 63) & ~(size_t)63;
    return p;
}

static size_t layout_acts(const lab_config *c, int32_t B, int32_t T, int train, char *base, lab_acts *a) {
    carver k = {base, 0};
    size_t BT = (size_t)B * (size_t)T, C = (size_t)c->d_model, F = (size_t)c->d_ff, V = (size_t)c->vocab;
    size_t H = (size_t)c->heads, L = train ? (size_t)c->layers : 1, P = (size_t)lab_pe_width(c);
    lab_acts z;
    memset(&z, 0, sizeof z);
    z.B = B;
    z.T = T;
    z.train = train;
    z.pos = carve(&k, BT * sizeof(int64_t));
    z.tokens = carve(&k, BT * sizeof(int32_t));
    z.targets = carve(&k, BT * sizeof(int32_t));
    if (c->scheme == LAB_POS_T5 || c->scheme == LAB_POS_SHAW) z.buckets = carve(&k, BT * (size_t)T * sizeof(int32_t));
    z.encoded = carve(&k, BT * C * sizeof(float));
    if (P) z.pe = carve(&k, BT * P * sizeof(float));
    if (c->scheme == LAB_POS_CONCAT) z.concat_in = carve(&k, BT * (C + P) * sizeof(float));
    if (c->scheme == LAB_POS_GRU) z.gru = carve(&k, (BT * 6 * C + BT * 3 * C + (size_t)B * ((size_t)T + 1) * C) * sizeof(float));
    z.ln1 = carve(&k, L * BT * C * sizeof(float));
    z.ln1_mean = carve(&k, L * BT * sizeof(float));
    z.ln1_rstd = carve(&k, L * BT * sizeof(float));
    z.qkv = carve(&k, L * BT * 3 * C * sizeof(float));
    z.att = train ? carve(&k, L * (size_t)B * H * (size_t)T * (size_t)T * sizeof(float)) : NULL;
    z.atty = carve(&k, L * BT * C * sizeof(float));
    z.res1 = carve(&k, L * BT * C * sizeof(float));
    z.ln2 = carve(&k, L * BT * C * sizeof(float));
    z.ln2_mean = carve(&k, L * BT * sizeof(float));
    z.ln2_rstd = carve(&k, L * BT * sizeof(float));
    z.fch = carve(&k, L * BT * F * sizeof(float));
    z.fch_tanh = train ? carve(&k, L * BT * F * sizeof(float)) : NULL; /* evaluation needs no backward */
    z.fch_gelu = carve(&k, BT * F * sizeof(float));
    z.res2 = carve(&k, L * BT * C * sizeof(float));
    z.lnf = carve(&k, BT * C * sizeof(float));
    z.lnf_mean = carve(&k, BT * sizeof(float));
    z.lnf_rstd = carve(&k, BT * sizeof(float));
    z.probs = carve(&k, BT * V * sizeof(float));
    z.layer_stride_bt_c = train ? BT * C : 0;
    z.layer_stride_bt_3c = train ? BT * 3 * C : 0;
    z.layer_stride_bt_f = train ? BT * F : 0;
    z.layer_stride_bt = train ? BT : 0;
    z.layer_stride_att = train ? (size_t)B * H * (size_t)T * (size_t)T : 0;
    if (a) *a = z;
    return k.used;
}

size_t lab_activation_bytes(const lab_config *c, int32_t batch, int32_t seq_len) {
    return layout_acts(c, batch, seq_len, 1, NULL, NULL);
}

static posenc_status ensure_acts(lab_model *m, int32_t B, int32_t T, int train, posenc_error *err) {
    const lab_config *c = &m->cfg;
    size_t bytes = layout_acts(c, B, T, train, NULL, NULL);
    if (bytes > m->act_bytes) {
        free(m->act_block);
        m->act_block = malloc(bytes);
        m->act_bytes = m->act_block ? bytes : 0;
        if (!m->act_block) return lab_fail(err, POSENC_ERR_OUT_OF_MEMORY, "out of memory: %zu bytes of activations for batch %d x length %d", bytes, B, T);
    }
    layout_acts(c, B, T, train, m->act_block, &m->acts);
    size_t per = (size_t)T * (size_t)T + (size_t)T;
    size_t threads = (size_t)lab_pool_threads(m->pool);
    if (per * threads > m->scratch_per_thread * threads || !m->scratch) {
        free(m->scratch);
        m->scratch = malloc(per * threads * sizeof(float));
        if (!m->scratch) return lab_fail(err, POSENC_ERR_OUT_OF_MEMORY, "out of memory: attention scratch for length %d", T);
        m->scratch_per_thread = per;
    }
    return POSENC_OK;
}

static void attention_args(lab_model *m, lab_attention_args *aa) {
    const lab_config *c = &m->cfg;
    lab_acts *a = &m->acts;
    memset(aa, 0, sizeof *aa);
    aa->B = a->B;
    aa->T = a->T;
    aa->C = c->d_model;
    aa->H = c->heads;
    aa->causal = c->causal;
    aa->pos = a->pos;
    if (c->scheme == LAB_POS_ALIBI) aa->alibi_slopes = m->alibi_slopes;
    if (c->scheme == LAB_POS_T5) {
        aa->t5_table = lab_param_ptr(m, T_T5);
        aa->buckets = a->buckets;
        aa->t5_buckets = c->t5_buckets;
    }
    if (c->scheme == LAB_POS_SHAW) {
        aa->shaw_index = a->buckets;
        aa->shaw_clip = c->shaw_clip;
    }
    aa->scratch = m->scratch;
    aa->scratch_per_thread = m->scratch_per_thread;
}

static void add_into(float *dst, const float *src, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] += src[i];
}

void lab_eval_options_default(lab_eval_options *o) {
    memset(o, 0, sizeof *o);
    o->batch = 4;
    o->rope_scaling = LAB_ROPE_AS_TRAINED;
    o->rope_factor = 0.0;
    o->learned_past_end_override = (posenc_past_end)-1;
}

posenc_status lab_forward(lab_model *m, const int32_t *tokens, const int32_t *targets, const int64_t *positions,
                          int32_t B, int32_t T, const lab_eval_options *eval, int want_backward, float *logits_out,
                          double *loss_out, posenc_error *err) {
    const lab_config *c = &m->cfg;
    if (!tokens) return lab_fail(err, POSENC_ERR_NULL_POINTER, "tokens is NULL");
    if (B < 1 || T < 1) return lab_fail(err, POSENC_ERR_INVALID_ARGUMENT, "batch and length must be >= 1, got %d x %d", B, T);
    if ((size_t)T > 65536) return lab_fail(err, POSENC_ERR_LIMIT, "length %d is above the lab's 65536", T);
    lab_eval_options defaults;
    lab_eval_options_default(&defaults);
    if (!eval) eval = &defaults;
    m->have_forward = 0;
    posenc_status st = ensure_acts(m, B, T, want_backward ? 1 : 0, err);
    if (st) return st;
    lab_acts *a = &m->acts;
    size_t BT = (size_t)B * (size_t)T, C = (size_t)c->d_model, F = (size_t)c->d_ff, V = (size_t)c->vocab;
    for (size_t i = 0; i < BT; i++) {
        if (tokens[i] < 0 || tokens[i] >= c->vocab)
            return lab_fail(err, POSENC_ERR_OUT_OF_RANGE, "token %d at index %zu is outside the vocabulary 0..%d",
                            tokens[i], i, c->vocab - 1);
        if (targets && (targets[i] < -1 || targets[i] >= c->vocab))
            return lab_fail(err, POSENC_ERR_OUT_OF_RANGE, "target %d at index %zu is outside -1..%d", targets[i], i,
                            c->vocab - 1);
        a->tokens[i] = tokens[i];
        a->targets[i] = targets ? targets[i] : -1;
        a->pos[i] = positions ? positions[i] : eval->position_offset + (int64_t)(i % (size_t)T);
        if (a->pos[i] < 0) return lab_fail(err, POSENC_ERR_OUT_OF_RANGE, "position %lld at index %zu is negative", (long long)a->pos[i], i);
    }
    a->learned_policy = (int)eval->learned_past_end_override >= 0 ? eval->learned_past_end_override : c->learned_past_end;
    if (c->scheme == LAB_POS_ROPE) {
        int32_t hd = c->d_model / c->heads;
        posenc_rope_params *p = &a->rope;
        /* training (eval NULL) and evaluation take the same path: the config's
           scaling unless the eval options override it */
        if ((st = lab_rope_params(c, eval, p, err)) != POSENC_OK) return st;
        int64_t maxpos = lab_max_position(a);
        double af = 1.0, dummy[1];
        (void)dummy;
        double *inv = malloc(sizeof(double) * (size_t)hd);
        if (!inv) return lab_fail(err, POSENC_ERR_OUT_OF_MEMORY, "out of memory");
        st = posenc_rope_frequencies(p, maxpos + 1, inv, (size_t)hd, &af, err);
        free(inv);
        if (st) return st;
        a->rope_attention_factor = af;
        a->rope_seq_len = maxpos + 1;
    }
    LAB_PHASE(m, LAB_PH_ENCODE, st = lab_encode_forward(m, a, err));
    if (st) return st;
    lab_attention_args aa;
    attention_args(m, &aa);
    lab_pool *pool = m->pool;
    for (int32_t l = 0; l < c->layers; l++) {
        size_t lc = (size_t)l * a->layer_stride_bt_c, l3 = (size_t)l * a->layer_stride_bt_3c;
        size_t lf = (size_t)l * a->layer_stride_bt_f, lb = (size_t)l * a->layer_stride_bt;
        const float *input = l == 0 ? a->encoded : a->res2 + (size_t)(l - 1) * a->layer_stride_bt_c;
        float *qkv = a->qkv + l3;
        LAB_PHASE(m, LAB_PH_LN1, lab_layernorm_forward(pool, a->ln1 + lc, a->ln1_mean + lb, a->ln1_rstd + lb, input,
                              lab_param_ptr(m, T_LN1_W) + (size_t)l * C, lab_param_ptr(m, T_LN1_B) + (size_t)l * C, BT, (int32_t)C));
        LAB_PHASE(m, LAB_PH_QKV, lab_matmul_forward(pool, qkv, a->ln1 + lc, lab_param_ptr(m, T_QKV_W) + (size_t)l * 3 * C * C,
                           lab_param_ptr(m, T_QKV_B) + (size_t)l * 3 * C, BT, (int32_t)C, (int32_t)(3 * C)));
        if (c->scheme == LAB_POS_ROPE) {
            LAB_PHASE(m, LAB_PH_ROPE, st = lab_rope_qk(m, a, qkv, 0, err));
            if (st) return st;
        }
        if (c->scheme == LAB_POS_SHAW) {
            size_t per = (2 * (size_t)c->shaw_clip + 1) * (C / (size_t)c->heads);
            aa.shaw_k = lab_param_ptr(m, T_SHAW_K) + (size_t)l * per;
            aa.shaw_v = lab_param_ptr(m, T_SHAW_V) + (size_t)l * per;
        }
        LAB_PHASE(m, LAB_PH_ATTN, lab_attention_forward(pool, &aa, a->atty + lc, a->att ? a->att + (size_t)l * a->layer_stride_att : NULL, qkv));
        LAB_PHASE(m, LAB_PH_PROJ,
                  lab_matmul_forward(pool, a->res1 + lc, a->atty + lc, lab_param_ptr(m, T_PROJ_W) + (size_t)l * C * C,
                                     lab_param_ptr(m, T_PROJ_B) + (size_t)l * C, BT, (int32_t)C, (int32_t)C);
                  add_into(a->res1 + lc, input, BT * C));
        LAB_PHASE(m, LAB_PH_LN2, lab_layernorm_forward(pool, a->ln2 + lc, a->ln2_mean + lb, a->ln2_rstd + lb, a->res1 + lc,
                              lab_param_ptr(m, T_LN2_W) + (size_t)l * C, lab_param_ptr(m, T_LN2_B) + (size_t)l * C, BT, (int32_t)C));
        LAB_PHASE(m, LAB_PH_FC, lab_matmul_forward(pool, a->fch + lf, a->ln2 + lc, lab_param_ptr(m, T_FC_W) + (size_t)l * F * C,
                           lab_param_ptr(m, T_FC_B) + (size_t)l * F, BT, (int32_t)C, (int32_t)F));
        LAB_PHASE(m, LAB_PH_GELU, lab_gelu_forward(pool, a->fch_gelu, a->fch_tanh ? a->fch_tanh + lf : NULL, a->fch + lf, BT * F));
        LAB_PHASE(m, LAB_PH_FCPROJ,
                  lab_matmul_forward(pool, a->res2 + lc, a->fch_gelu, lab_param_ptr(m, T_FCPROJ_W) + (size_t)l * C * F,
                                     lab_param_ptr(m, T_FCPROJ_B) + (size_t)l * C, BT, (int32_t)F, (int32_t)C);
                  add_into(a->res2 + lc, a->res1 + lc, BT * C));
    }
    const float *last = a->res2 + (size_t)(c->layers - 1) * a->layer_stride_bt_c;
    LAB_PHASE(m, LAB_PH_LNF, lab_layernorm_forward(pool, a->lnf, a->lnf_mean, a->lnf_rstd, last, lab_param_ptr(m, T_LNF_W),
                          lab_param_ptr(m, T_LNF_B), BT, (int32_t)C));
    const float *head = c->tied ? lab_param_ptr(m, T_WTE) : lab_param_ptr(m, T_LM_HEAD);
    LAB_PHASE(m, LAB_PH_HEAD, lab_matmul_forward(pool, a->probs, a->lnf, head, NULL, BT, (int32_t)C, (int32_t)V));
    if (logits_out) memcpy(logits_out, a->probs, BT * V * sizeof(float));
    LAB_PHASE(m, LAB_PH_XENT, a->loss = lab_softmax_xent_forward(pool, a->probs, a->probs, a->targets, BT, (int32_t)V, &a->valid_targets));
    if (loss_out) *loss_out = a->loss;
    m->have_forward = want_backward ? 1 : 0;
    return POSENC_OK;
}

/* Bytes of the backward's gradient buffers for batch B, length T (ensure_grad_buffers). */
static size_t grad_buffer_bytes(const lab_config *c, int32_t B, int32_t T) {
    size_t BT = (size_t)B * (size_t)T, C = (size_t)c->d_model, F = (size_t)c->d_ff;
    size_t t5 = c->scheme == LAB_POS_T5 ? (size_t)B * (size_t)c->heads * (size_t)c->t5_buckets : 0;
    size_t shaw = c->scheme == LAB_POS_SHAW ? (size_t)B * (size_t)c->heads * 2 * (2 * (size_t)c->shaw_clip + 1) *
                                                (C / (size_t)c->heads) : 0;
    return (BT * (2 * C + 3 * C + 2 * F) + t5 + shaw) * sizeof(float);
}

size_t lab_training_memory_bytes(const lab_model *m, int32_t batch, int32_t seq_len) {
    const lab_config *c = &m->cfg;
    size_t table = lab_has_fixed_table(c) ? (size_t)seq_len * (size_t)lab_pe_width(c) * sizeof(float) : 0;
    return 4 * m->param_count * sizeof(float) + layout_acts(c, batch, seq_len, 1, NULL, NULL) +
           grad_buffer_bytes(c, batch, seq_len) + table;
}

static posenc_status ensure_grad_buffers(lab_model *m, posenc_error *err) {
    const lab_config *c = &m->cfg;
    lab_acts *a = &m->acts;
    size_t BT = (size_t)a->B * (size_t)a->T, C = (size_t)c->d_model, F = (size_t)c->d_ff;
    size_t t5 = c->scheme == LAB_POS_T5 ? (size_t)a->B * (size_t)c->heads * (size_t)c->t5_buckets : 0;
    size_t need = grad_buffer_bytes(c, a->B, a->T);
    if (need > m->grad_bytes) {
        free(m->grad_block);
        m->grad_block = malloc(need);
        m->grad_bytes = m->grad_block ? need : 0;
        if (!m->grad_block) return lab_fail(err, POSENC_ERR_OUT_OF_MEMORY, "out of memory: %zu bytes of gradient buffers", need);
    }
    float *p = m->grad_block;
    m->d_resid = p;
    p += BT * C;
    m->d_buf_c = p;
    p += BT * C;
    m->d_qkv = p;
    p += BT * 3 * C;
    m->d_fch = p;
    p += BT * F;
    m->d_bigger = p;
    p += BT * F;
    m->t5_partial = NULL;
    if (t5) m->t5_partial = p;
    p += t5;
    m->shaw_partial = c->scheme == LAB_POS_SHAW ? p : NULL;
    return POSENC_OK;
}

posenc_status lab_backward(lab_model *m, posenc_error *err) {
    if (!m->have_forward) return lab_fail(err, POSENC_ERR_INVALID_ARGUMENT, "backward needs a forward with want_backward = 1 first");
    const lab_config *c = &m->cfg;
    lab_acts *a = &m->acts;
    posenc_status st = ensure_grad_buffers(m, err);
    if (st) return st;
    lab_pool *pool = m->pool;
    size_t BT = (size_t)a->B * (size_t)a->T, C = (size_t)c->d_model, F = (size_t)c->d_ff, V = (size_t)c->vocab;
    LAB_PHASE(m, LAB_PH_XENT_B, lab_softmax_xent_backward(pool, a->probs, a->probs, a->targets, BT, (int32_t)V, a->valid_targets, 1.0f));
    float *dres = m->d_resid, *dbuf = m->d_buf_c;
    const float *head = c->tied ? lab_param_ptr(m, T_WTE) : lab_param_ptr(m, T_LM_HEAD);
    float *dhead = c->tied ? lab_grad_ptr(m, T_WTE) : lab_grad_ptr(m, T_LM_HEAD);
    LAB_PHASE(m, LAB_PH_HEAD_B, lab_matmul_backward(pool, dbuf, dhead, NULL, a->probs, a->lnf, head, BT, (int32_t)C, (int32_t)V));
    const float *last = a->res2 + (size_t)(c->layers - 1) * a->layer_stride_bt_c;
    LAB_PHASE(m, LAB_PH_LNF_B, memset(dres, 0, BT * C * sizeof(float));
              lab_layernorm_backward(pool, dres, lab_grad_ptr(m, T_LNF_W), lab_grad_ptr(m, T_LNF_B), dbuf, last,
                                     lab_param_ptr(m, T_LNF_W), a->lnf_mean, a->lnf_rstd, BT, (int32_t)C));
    lab_attention_args aa;
    attention_args(m, &aa);
    for (int32_t l = c->layers - 1; l >= 0; l--) {
        size_t lc = (size_t)l * a->layer_stride_bt_c, l3 = (size_t)l * a->layer_stride_bt_3c;
        size_t lf = (size_t)l * a->layer_stride_bt_f, lb = (size_t)l * a->layer_stride_bt;
        const float *input = l == 0 ? a->encoded : a->res2 + (size_t)(l - 1) * a->layer_stride_bt_c;
        size_t wc = (size_t)l * C, wcc = (size_t)l * C * C, wfc = (size_t)l * F * C;
        /* MLP: this layer's GELU output is rebuilt in d_bigger, which the GELU backward then overwrites */
        LAB_PHASE(m, LAB_PH_GELU_RE, lab_gelu_recompute(pool, m->d_bigger, a->fch + lf, a->fch_tanh + lf, BT * F));
        LAB_PHASE(m, LAB_PH_FCPROJ_B, lab_matmul_backward(pool, m->d_fch, lab_grad_ptr(m, T_FCPROJ_W) + wfc, lab_grad_ptr(m, T_FCPROJ_B) + wc, dres,
                            m->d_bigger, lab_param_ptr(m, T_FCPROJ_W) + wfc, BT, (int32_t)F, (int32_t)C));
        LAB_PHASE(m, LAB_PH_GELU_B, lab_gelu_backward(pool, m->d_bigger, a->fch + lf, a->fch_tanh + lf, m->d_fch, BT * F));
        LAB_PHASE(m, LAB_PH_FC_B, lab_matmul_backward(pool, dbuf, lab_grad_ptr(m, T_FC_W) + wfc, lab_grad_ptr(m, T_FC_B) + (size_t)l * F,
                            m->d_bigger, a->ln2 + lc, lab_param_ptr(m, T_FC_W) + wfc, BT, (int32_t)C, (int32_t)F));
        LAB_PHASE(m, LAB_PH_LN2_B, lab_layernorm_backward(pool, dres, lab_grad_ptr(m, T_LN2_W) + wc, lab_grad_ptr(m, T_LN2_B) + wc, dbuf,
                               a->res1 + lc, lab_param_ptr(m, T_LN2_W) + wc, a->ln2_mean + lb, a->ln2_rstd + lb, BT,
                               (int32_t)C));
        /* attention */
        LAB_PHASE(m, LAB_PH_PROJ_B, lab_matmul_backward(pool, dbuf, lab_grad_ptr(m, T_PROJ_W) + wcc, lab_grad_ptr(m, T_PROJ_B) + wc, dres,
                            a->atty + lc, lab_param_ptr(m, T_PROJ_W) + wcc, BT, (int32_t)C, (int32_t)C));
        size_t shaw_per = c->scheme == LAB_POS_SHAW ? (2 * (size_t)c->shaw_clip + 1) * (C / (size_t)c->heads) : 0;
        if (shaw_per) {
            aa.shaw_k = lab_param_ptr(m, T_SHAW_K) + (size_t)l * shaw_per;
            aa.shaw_v = lab_param_ptr(m, T_SHAW_V) + (size_t)l * shaw_per;
        }
        LAB_PHASE(m, LAB_PH_ATTN_B, lab_attention_backward(pool, &aa, m->d_qkv, m->t5_partial, m->shaw_partial, dbuf, a->att + (size_t)l * a->layer_stride_att,
                               a->qkv + l3));
        if (m->t5_partial) { /* reduce the per-(b, h) partial sums in task order */
            float *dt5 = lab_grad_ptr(m, T_T5);
            for (size_t task = 0; task < (size_t)a->B * (size_t)c->heads; task++) {
                size_t h = task % (size_t)c->heads;
                for (int32_t k = 0; k < c->t5_buckets; k++)
                    dt5[(size_t)k * (size_t)c->heads + h] += m->t5_partial[task * (size_t)c->t5_buckets + (size_t)k];
            }
        }
        if (shaw_per) { /* reduce the per-(b, h) partial sums in task order */
            float *dk = lab_grad_ptr(m, T_SHAW_K) + (size_t)l * shaw_per, *dv = lab_grad_ptr(m, T_SHAW_V) + (size_t)l * shaw_per;
            for (size_t task = 0; task < (size_t)a->B * (size_t)c->heads; task++) {
                const float *pk = m->shaw_partial + task * 2 * shaw_per, *pv = pk + shaw_per;
                for (size_t i = 0; i < shaw_per; i++) {
                    dk[i] += pk[i];
                    dv[i] += pv[i];
                }
            }
        }
        if (c->scheme == LAB_POS_ROPE) {
            LAB_PHASE(m, LAB_PH_ROPE_B, st = lab_rope_qk(m, a, m->d_qkv, 1, err));
            if (st) return st;
        }
        LAB_PHASE(m, LAB_PH_QKV_B, lab_matmul_backward(pool, dbuf, lab_grad_ptr(m, T_QKV_W) + (size_t)l * 3 * C * C,
                            lab_grad_ptr(m, T_QKV_B) + (size_t)l * 3 * C, m->d_qkv, a->ln1 + lc,
                            lab_param_ptr(m, T_QKV_W) + (size_t)l * 3 * C * C, BT, (int32_t)C, (int32_t)(3 * C)));
        LAB_PHASE(m, LAB_PH_LN1_B, lab_layernorm_backward(pool, dres, lab_grad_ptr(m, T_LN1_W) + wc, lab_grad_ptr(m, T_LN1_B) + wc, dbuf, input,
                               lab_param_ptr(m, T_LN1_W) + wc, a->ln1_mean + lb, a->ln1_rstd + lb, BT, (int32_t)C));
    }
    LAB_PHASE(m, LAB_PH_ENCODE_B, st = lab_encode_backward(m, a, dres, err));
    m->have_forward = 0;
    return st;
}
