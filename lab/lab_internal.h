/* lab_internal.h: the lab's model layout, ops and pool (not public; tests use it). */
#ifndef POSENC_LAB_INTERNAL_H
#define POSENC_LAB_INTERNAL_H

#include "lab.h"

#include <cblas.h> /* the enums and blasint only: OpenBLAS itself is loaded by blas.c */
#include <stddef.h>
#include <stdint.h>

/* ---- worker pool (parallel.c) ---- */
typedef struct lab_pool lab_pool;
typedef void (*lab_task_fn)(void *ctx, size_t task, int32_t thread_id);
lab_pool *lab_pool_create(int32_t threads);
void lab_pool_free(lab_pool *pool);
int32_t lab_pool_threads(const lab_pool *pool);
/* Run fn(ctx, t, thread) for t < tasks; returns when all are done. */
void lab_pool_run(lab_pool *pool, size_t tasks, lab_task_fn fn, void *ctx);

/* ---- per-phase profile (lab_model_profile; names in model.c) ---- */
enum {
    LAB_PH_ENCODE, LAB_PH_LN1, LAB_PH_QKV, LAB_PH_ROPE, LAB_PH_ATTN, LAB_PH_PROJ, LAB_PH_LN2, LAB_PH_FC,
    LAB_PH_GELU, LAB_PH_FCPROJ, LAB_PH_LNF, LAB_PH_HEAD, LAB_PH_XENT,
    LAB_PH_XENT_B, LAB_PH_HEAD_B, LAB_PH_LNF_B, LAB_PH_GELU_RE, LAB_PH_FCPROJ_B, LAB_PH_GELU_B, LAB_PH_FC_B,
    LAB_PH_LN2_B, LAB_PH_PROJ_B, LAB_PH_ATTN_B, LAB_PH_ROPE_B, LAB_PH_QKV_B, LAB_PH_LN1_B, LAB_PH_ENCODE_B,
    LAB_PH_GRAD_NORM, LAB_PH_ADAMW,
    LAB_PH_COUNT
};
typedef struct lab_profile {
    int on;
    double cpu[LAB_PH_COUNT], wall[LAB_PH_COUNT];
    int64_t calls[LAB_PH_COUNT];
} lab_profile;
typedef struct lab_prof_mark {
    double cpu, wall;
} lab_prof_mark;
lab_prof_mark lab_prof_now(void);
void lab_prof_add(lab_profile *p, int phase, lab_prof_mark since);
/* Time the statement(s) as `phase` of model m's profile when it is on. */
#define LAB_PHASE(m, phase, ...)                                                                                    \
    do {                                                                                                            \
        lab_prof_mark lab_t0_ = (m)->prof.on ? lab_prof_now() : (lab_prof_mark){0, 0};                             \
        __VA_ARGS__;                                                                                                \
        if ((m)->prof.on) lab_prof_add(&(m)->prof, (phase), lab_t0_);                                               \
    } while (0)

/* ---- parameter tensors ---- */
enum {
    T_WTE = 0,
    T_WPE,            /* learned [rows][C]; hybrid [rows][learned_dim] */
    T_T5,             /* [buckets][H] */
    T_CONCAT_PROJ,    /* [C][C + pe_dim] */
    T_FREQ_SCALE,     /* [1] */
    T_GRU_WIH, T_GRU_WHH, T_GRU_BIH, T_GRU_BHH, /* [3C][C], [3C][C], [3C], [3C] */
    T_LN1_W, T_LN1_B, T_QKV_W, T_QKV_B, T_PROJ_W, T_PROJ_B,
    T_LN2_W, T_LN2_B, T_FC_W, T_FC_B, T_FCPROJ_W, T_FCPROJ_B,
    T_LNF_W, T_LNF_B,
    T_SHAW_K, T_SHAW_V, /* [L][2k+1][head_dim] */
    T_LM_HEAD,
    T_COUNT
};

typedef struct lab_tensor_slot {
    lab_tensor_info info;
    size_t offset; /* into the flat arrays */
    int present;
} lab_tensor_slot;

/* Activations of one forward pass, pointers into one allocation. Per-layer
 * arrays are [L][...] when training and share one slot (stride 0) in
 * evaluation, where nothing is kept for a backward pass. */
typedef struct lab_acts {
    int32_t B, T, train;
    size_t layer_stride_bt_c, layer_stride_bt_3c, layer_stride_bt_f, layer_stride_bt, layer_stride_att;
    int64_t *pos;      /* [B][T] */
    int32_t *tokens;   /* [B][T] */
    int32_t *targets;  /* [B][T] */
    int32_t *buckets;  /* t5 buckets or shaw indices: [B][T][T] */
    float *encoded;    /* [B][T][C] residual stream input */
    float *pe;         /* [B][T][pe width] position part (sinusoid base for gru) */
    float *concat_in;  /* concat: [B][T][C + pe_dim] */
    float *gru;        /* gru: gi [BT][3C], gh [BT][3C], r, z, n [BT][C], h [B][T+1][C] */
    float *ln1, *ln1_mean, *ln1_rstd, *qkv, *att, *atty, *res1;
    float *ln2, *ln2_mean, *ln2_rstd, *fch, *fch_tanh, *res2;
    float *fch_gelu;   /* [B][T][F], one layer's GELU output (recomputed in the backward) */
    float *lnf, *lnf_mean, *lnf_rstd, *probs; /* probs [BT][V] */
    double loss;
    size_t valid_targets;
    double rope_attention_factor;
    int64_t rope_seq_len;
    posenc_rope_params rope; /* as used by this forward (eval scaling) */
    posenc_past_end learned_policy;
} lab_acts;

struct lab_model {
    lab_config cfg;
    lab_tensor_slot slots[T_COUNT];
    lab_tensor_slot *order[T_COUNT]; /* present tensors, in checkpoint order */
    size_t tensor_count;
    size_t param_count;
    float *params, *grads, *adam_m, *adam_v;
    int64_t step;
    lab_pool *pool;
    float *sparse_mask;   /* [C] 0/1 channel mask (sparse scheme) */
    float *alibi_slopes;  /* [H] */
    float *sin_cache;     /* sinusoid table rows 0..sin_cache_rows-1, width pe_width */
    size_t sin_cache_rows;
    /* activations and backward scratch */
    void *act_block;
    size_t act_bytes;
    lab_acts acts;
    float *scratch;       /* per thread: T*T floats (attention) */
    size_t scratch_per_thread;
    float *d_resid, *d_buf_c, *d_qkv, *d_fch, *d_bigger;
    void *grad_block;
    size_t grad_bytes;
    float *t5_partial;    /* [B*H][buckets] */
    float *shaw_partial;  /* [B*H][2][(2k+1) head_dim] */
    int have_forward;
    lab_profile prof;
};

/* Sizes derived from a config. */
int32_t lab_pe_width(const lab_config *cfg);   /* channels of the position table (0: none) */
int32_t lab_wte_width(const lab_config *cfg);  /* token embedding width */
int64_t lab_table_rows(const lab_config *cfg); /* learned table rows */
/* A tensor's weights and gradient in the model's flat buffers (NULL when the
 * config has no such tensor). Inline: model.c and position.c both read them,
 * and position.c must not call into model.c (model.c calls position.c). */
static inline float *lab_param_ptr(lab_model *m, int id) {
    return m->slots[id].present ? m->params + m->slots[id].offset : NULL;
}
static inline float *lab_grad_ptr(lab_model *m, int id) {
    return m->slots[id].present ? m->grads + m->slots[id].offset : NULL;
}

/* ---- ops (ops.c): forward/backward pairs. Parameter gradients accumulate
 * (+=); input gradients of matmul, gelu and attention (dqkv) are overwritten
 * (=), saving a memset each; layernorm's accumulates (the residual stream). */
/* out[N][O] = inp[N][I] W[O][I]^T + b[O] (b may be NULL) */
void lab_matmul_forward(lab_pool *pool, float *out, const float *inp, const float *w, const float *b,
                        size_t n, int32_t in, int32_t outdim);
void lab_matmul_backward(lab_pool *pool, float *dinp, float *dw, float *db, const float *dout,
                         const float *inp, const float *w, size_t n, int32_t in, int32_t outdim);
void lab_layernorm_forward(lab_pool *pool, float *out, float *mean, float *rstd, const float *inp,
                           const float *w, const float *b, size_t n, int32_t c);
void lab_layernorm_backward(lab_pool *pool, float *dinp, float *dw, float *db, const float *dout,
                            const float *inp, const float *w, const float *mean, const float *rstd,
                            size_t n, int32_t c);
/* GELU keeps tanh(u) (tanh_out, may be NULL in evaluation) so the backward
 * needs no exponential; recompute rebuilds the output from inp and tanh with
 * the forward's own arithmetic (the same bits), so a step keeps one layer's
 * GELU output instead of all of them. */
void lab_gelu_forward(lab_pool *pool, float *out, float *tanh_out, const float *inp, size_t count);
void lab_gelu_recompute(lab_pool *pool, float *out, const float *inp, const float *tanh_in, size_t count);
void lab_gelu_backward(lab_pool *pool, float *dinp, const float *inp, const float *tanh_in, const float *dout,
                       size_t count);
/* The softmaxes' e^x (ops.c: within 2 ulp of expf; exposed for its test). */
float lab_exp_fast(float x);
/* Mean cross entropy over targets >= 0; probs = softmax(logits) (may alias logits). */
double lab_softmax_xent_forward(lab_pool *pool, float *probs, const float *logits, const int32_t *targets,
                                size_t n, int32_t v, size_t *valid_out);
/* dlogits (may alias probs) = (probs - onehot) * dloss / valid */
void lab_softmax_xent_backward(lab_pool *pool, float *dlogits, const float *probs, const int32_t *targets,
                               size_t n, int32_t v, size_t valid, float dloss);

/* Attention over qkv [B][T][3C] (q | k | v, heads contiguous inside each),
 * softmax probabilities to att [B][H][T][T] (NULL in evaluation: scratch),
 * output atty [B][T][C]. Biases: alibi slopes or t5 table + buckets (or none). */
typedef struct lab_attention_args {
    int32_t B, T, C, H;
    int causal;
    const float *alibi_slopes;  /* [H] or NULL */
    const int64_t *pos;         /* [B][T] (alibi) */
    const float *t5_table;      /* [buckets][H] or NULL */
    const int32_t *buckets;     /* [B][T][T] */
    int32_t t5_buckets;
    const float *shaw_k, *shaw_v; /* this layer's [2k+1][head_dim] tables, or NULL */
    const int32_t *shaw_index;    /* [B][T][T] clipped distance + k */
    int32_t shaw_clip;
    float *scratch;             /* per thread T*T floats */
    size_t scratch_per_thread;
} lab_attention_args;
void lab_attention_forward(lab_pool *pool, const lab_attention_args *a, float *atty, float *att,
                           const float *qkv);
/* dqkv (=), t5_partial [B*H][buckets] (written, reduced by the caller) */
/* shaw_partial [B*H][2][(2k+1) head_dim]: per-task gradients of (a_K, a_V) */
void lab_attention_backward(lab_pool *pool, const lab_attention_args *a, float *dqkv, float *t5_partial,
                            float *shaw_partial, const float *datty, const float *att, const float *qkv);

/* GRU over x [B][T][C] with h0 [B][C]: outputs h [B][T+1][C] (h[b][0] = h0). */
void lab_gru_forward(float *h, float *gi, float *gh, float *r, float *z, float *nn, const float *x,
                     const float *h0, const float *wih, const float *whh, const float *bih,
                     const float *bhh, int32_t B, int32_t T, int32_t C);
/* dout [B][T][C] = dL/dh[b][1..T]; writes dh0 [B][C], dx [B][T][C] (=), accumulates weights.
 * Returns 0, or -1 when its scratch cannot be allocated (nothing accumulated then). */
int lab_gru_backward(float *dx, float *dh0, float *dwih, float *dwhh, float *dbih, float *dbhh,
                      const float *dout, const float *h, const float *gi, const float *gh, const float *r,
                      const float *z, const float *nn, const float *x, const float *wih,
                      const float *whh, int32_t B, int32_t T, int32_t C);

/* ---- positions (position.c) ---- */
posenc_status lab_encode_forward(lab_model *m, lab_acts *a, posenc_error *err);
posenc_status lab_encode_backward(lab_model *m, lab_acts *a, const float *dencoded, posenc_error *err);
/* RoPE on q and k of qkv [B*T][3C] at a->pos; inverse for the backward. */
posenc_status lab_rope_qk(lab_model *m, lab_acts *a, float *qkv, int inverse, posenc_error *err);
posenc_status lab_scheme_prepare(lab_model *m, posenc_error *err); /* slopes, masks */
posenc_status lab_sinusoid_rows(lab_model *m, int64_t rows, posenc_error *err);
/* Does the scheme add a fixed table of sinusoid rows (sinusoidal, sparse, concat, half-concat, gru)? */
int lab_has_fixed_table(const lab_config *cfg);
/* Largest position of the forward's batch (a->pos). */
int64_t lab_max_position(const lab_acts *a);

/* ---- OpenBLAS, loaded on first use (blas.c) ---- */
/* Load it (once per process; OPENBLAS_NUM_THREADS=1 unless set, and pinned to
 * 1 thread): POSENC_ERR_UNSUPPORTED naming the library when it cannot be. */
posenc_status lab_blas_load(posenc_error *err);
/* cblas_sgemm of the loaded OpenBLAS (after lab_blas_load succeeded). */
void lab_sgemm(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, blasint m, blasint n,
               blasint k, float alpha, const float *a, blasint lda, const float *b, blasint ldb, float beta, float *c,
               blasint ldc);

/* ---- misc ---- */
uint64_t lab_splitmix64(uint64_t x);
posenc_status lab_fail(posenc_error *err, posenc_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
posenc_status lab_config_parse_text(const char *text, lab_config *out, posenc_error *err);
/* Parameters a model of this (checked) config has, without allocating them (SIZE_MAX: out of memory). */
size_t lab_config_param_count(const lab_config *config);
/* Random positions of sequence b at step: sorted distinct values in [0, range). */
void lab_random_positions(uint64_t seed, int64_t step, int32_t b, int64_t range, int32_t T, int64_t *out);

#endif
