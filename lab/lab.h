/* lab.h: posenc lab, a small byte-level decoder-only Transformer that trains
 * on the CPU with every position scheme of posenc pluggable. Built on posenc.h
 * only: every encoding (sinusoid tables, RoPE rotations and their inverse,
 * ALiBi slopes and biases, T5 buckets, Shaw indices, learned gathers and their backward,
 * hybrid and frequency-scaled tables) comes from the library.
 *
 * Typical use (an experiment runner):
 *
 *   lab_config cfg;  lab_config_default(&cfg);  cfg.scheme = LAB_POS_ROPE;
 *   lab_model *m;    lab_model_create(&cfg, &m, &err);
 *   lab_train_options opt; lab_train_options_default(&opt); opt.steps = 500;
 *   lab_byte_source src = {bytes, size};
 *   lab_train(m, &opt, lab_byte_batch, &src, on_step, ctx, &err);
 *   lab_eval_options ev; lab_eval_options_default(&ev); ev.seq_len = 512;
 *   ev.rope_scaling = POSENC_ROPE_YARN; ev.rope_factor = 4;
 *   double loss; lab_eval_bytes(m, &ev, bytes, size, &loss, &err);
 *   lab_checkpoint_save(m, "run.safetensors", &err);
 *   lab_model_free(m);
 *
 * Errors use posenc's status codes and posenc_error (messages name the bad
 * value). Nothing here keeps global mutable state except OpenBLAS's thread
 * count, which lab_model_create pins to 1 (see docs/lab.md, determinism). */
#ifndef POSENC_LAB_H
#define POSENC_LAB_H

#include "posenc.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Position schemes (names for lab_scheme_parse in brackets). */
typedef enum lab_scheme {
    LAB_POS_NONE = 0,        /* [none] NoPE: no position signal */
    LAB_POS_SINUSOIDAL = 1,  /* [sinusoidal] sinusoid table added to the token embedding
                                (token_scale_sqrt_d: token embedding times sqrt(d_model)) */
    LAB_POS_LEARNED = 2,     /* [learned] learned absolute table [context][d_model],
                                init N(0, learned_sigma), past-end policy learned_past_end */
    LAB_POS_ROPE = 3,        /* [rope] rotary on q and k (layout, rotary_dim, base) */
    LAB_POS_ALIBI = 4,       /* [alibi] linear bias slope_h (j - i) on the logits */
    LAB_POS_T5 = 5,          /* [t5] learned bias per (bucket, head), shared by all layers */
    LAB_POS_CONCAT = 6,      /* [concat] concat(token [d_model], sinusoid [pe_dim]) @ W_proj */
    LAB_POS_HALF_CONCAT = 7, /* [half-concat] concat(token [d/2], sinusoid [d/2]), no projection */
    LAB_POS_HYBRID = 8,      /* [hybrid] first hybrid_learned_dim channels learned, rest sinusoid */
    LAB_POS_FREQ_SCALE = 9,  /* [freq-scale] sinusoid at angles p (s w_k), s learned (init 1) */
    LAB_POS_GRU = 10,        /* [gru] GRU over the sinusoid, initial state = first token's
                                embedding; its outputs are added */
    LAB_POS_SPARSE = 11,     /* [sparse] sinusoid times a fixed random channel mask
                                (keep probability sparse_keep) */
    LAB_POS_INDEX = 12,      /* [index] every channel = p (article baseline) */
    LAB_POS_NORMALIZED = 13, /* [normalized] every channel = p/(len-1) */
    LAB_POS_SHAW = 14,       /* [shaw] Shaw et al. relative key/value embeddings per layer,
                                distances clipped at shaw_clip */
    LAB_POS_COUNT_ = 15
} lab_scheme;

/* "none", "sinusoidal", ...; NULL for an unknown value. */
const char *lab_scheme_name(lab_scheme scheme);
/* Parse a scheme name; the message lists the known names. */
posenc_status lab_scheme_parse(const char *name, lab_scheme *out, posenc_error *err);

typedef struct lab_config {
    int32_t vocab;        /* 256 bytes + task tokens; default 256 */
    int32_t layers;       /* default 4 */
    int32_t d_model;      /* default 128 */
    int32_t heads;        /* d_model % heads == 0; default 4 */
    int32_t d_ff;         /* default 4 d_model */
    int32_t context;      /* training length T (and the learned table's rows); default 128 */
    int32_t tied;         /* 1: output layer = token embedding (default); 0: own lm_head */
    int32_t causal;       /* 1: decoder (default); 0: bidirectional (for property tests) */
    uint64_t seed;        /* initialization and batch sampling; default 1 */
    double init_sigma;    /* N(0, sigma) init of matrices and token embedding; default 0.02 */
    lab_scheme scheme;
    /* scheme knobs (ignored by schemes that do not use them) */
    int32_t token_scale_sqrt_d;        /* sinusoidal: multiply token embedding by sqrt(d_model) */
    double learned_sigma;              /* learned / hybrid: default 0.02 */
    posenc_past_end learned_past_end;  /* learned / hybrid past the table: ERROR (default) or CLAMP */
    posenc_layout rope_layout;         /* default HALF */
    int32_t rope_rotary_dim;           /* 0 = whole head */
    double rope_base;                  /* default 10000 */
    double alibi_max_bias;             /* default 8 */
    int32_t t5_buckets;                /* default 32 */
    int32_t t5_max_distance;           /* default 128 */
    int32_t pe_dim;                    /* concat: sinusoid channels; 0 = d_model */
    int32_t hybrid_learned_dim;        /* hybrid: 0 = d_model/2 */
    double sparse_keep;                /* sparse: probability a channel is kept; default 0.1 */
    int32_t shaw_clip;                 /* shaw: clip distance k (tables of 2k+1 rows); default 16 */
    int64_t random_positions;          /* > 0: train on sorted random subsets of [0, N)
                                          (Ruoss et al. 2023); evaluation uses 0..T-1 */
    /* RoPE scaling the model is trained with (and evaluated with unless the eval
     * options override it): part of the model, so it applies in the forward and
     * the backward of training and is saved in / loaded from checkpoints. Every
     * cos/sin comes from lab_rope_params -> posenc_rope_apply_exec, the same path
     * evaluation takes. The usual use is Chen et al.'s PI fine-tune: a model
     * trained at L, fine-tuned at context 2L with rope_scaling=linear,
     * rope_factor=2, rope_original_context=L. */
    posenc_rope_scaling rope_scaling;  /* NONE (default), LINEAR, NTK, DYNAMIC, YARN, LLAMA3
                                          (LONGROPE needs per-pair lists: evaluation only) */
    double rope_factor;                /* s; default 1 */
    int32_t rope_original_context;     /* L0 = original_max_position (YARN, LLAMA3) and
                                          max_position (DYNAMIC); 0 = context */
    double rope_beta_fast, rope_beta_slow; /* YARN ramp, defaults 32 and 1 */
    double rope_attention_factor;      /* YARN cos/sin magnitude; 0 = derive (0.1 ln s + 1) */
    double rope_low_freq_factor, rope_high_freq_factor; /* LLAMA3, defaults 1 and 4 */
} lab_config;

/* Defaults above; the ~826k-parameter model (4 layers, d 128, 4 heads, T 128). */
void lab_config_default(lab_config *config);
/* Validate (messages name the value: "d_model 130 is not divisible by heads 4"). */
posenc_status lab_config_check(const lab_config *config, posenc_error *err);
/* One-line text form "key=value ..." (stored in checkpoints); returns chars written. */
size_t lab_config_format(const lab_config *config, char *out, size_t out_size);

typedef struct lab_model lab_model;

/* Allocate parameters, gradients, AdamW state and initialize from config->seed.
 * threads: worker threads (0 = POSENC_THREADS or the usable cores, posenc_cpu_count); results do
 * not depend on it. */
posenc_status lab_model_create(const lab_config *config, int32_t threads, lab_model **out,
                               posenc_error *err);
void lab_model_free(lab_model *model);
const lab_config *lab_model_config(const lab_model *model);
size_t lab_model_param_count(const lab_model *model);
/* Bytes of activations kept for a training step of batch B, length T (the
 * formula is in docs/lab.md and lab_activation_floats). */
size_t lab_activation_bytes(const lab_config *config, int32_t batch, int32_t seq_len);

/* Memory of a model's fixed position table (schemes sinusoidal, sparse, concat,
 * half-concat, gru): the table rows 0..rows-1 exactly as the forward pass adds
 * it (the sinusoid, times the channel mask for sparse), stored densely and in
 * four standard sparse layouts, each sized from the table's actual nonzeros
 * (docs/lab-experiments.md, "the memory half"). cols = 0: the scheme has no
 * fixed table (nothing else is set). */
typedef struct lab_table_memory {
    int64_t rows, cols;
    int64_t nonzeros;      /* entries != 0 */
    int64_t kept_channels; /* columns with at least one nonzero */
    size_t dense_bytes;    /* rows x cols float32 (what the engine stores) */
    size_t csr_bytes;      /* CSR: float32 value + int32 column per nonzero, int32 row pointers (rows + 1) */
    size_t bitmask_bytes;  /* one bit per entry (rows x ceil(cols / 8) bytes) + float32 per nonzero */
    size_t columns_bytes;  /* kept columns only: int32 index per kept column + rows x kept float32 */
    size_t coo64_bytes;    /* TensorFlow's tf.sparse.SparseTensor (the article's framework): int64 [nonzeros][2]
                              indices + float32 values + int64 [2] dense shape */
    double expected_nonzeros, expected_kept; /* in expectation over the sparse scheme's random channel mask
                                                (keep probability x the unmasked table's counts; every
                                                layout's size is linear in them); other schemes: the counts */
} lab_table_memory;
/* Fills *out for the model's table at `rows` rows (grows the engine's sinusoid cache to rows). */
posenc_status lab_position_table_memory(lab_model *model, int64_t rows, lab_table_memory *out, posenc_error *err);
/* Bytes a training step of batch x seq_len holds: parameters, gradients and the
 * two AdamW moments (4 x 4 bytes per parameter), the kept activations
 * (lab_activation_bytes), the backward's gradient buffers and the fixed
 * position table of seq_len rows stored densely, as the engine does. Leaves
 * out the per-thread attention scratch ((T^2 + T) floats per thread) and the
 * allocator's overhead. */
size_t lab_training_memory_bytes(const lab_model *model, int32_t batch, int32_t seq_len);

/* ---- tensors (for tests, checkpoints, analysis) ---- */
typedef struct lab_tensor_info {
    const char *name;  /* checkpoint name, e.g. "wpe", "blocks.attn_qkv.weight" */
    int ndim;
    size_t shape[4];
    size_t count;
    const char *group; /* gradient-norm group: tok, pos, attn, mlp, norm, head */
    int decay;         /* 1: AdamW weight decay applies */
} lab_tensor_info;
size_t lab_tensor_count(const lab_model *model);
/* Info, parameter data and gradient of tensor i (NULL pointers when i is out of range). */
const lab_tensor_info *lab_tensor(const lab_model *model, size_t i, float **param, float **grad);
/* All parameters / gradients as one flat array of lab_model_param_count floats. */
float *lab_params(lab_model *model);
float *lab_grads(lab_model *model);

/* ---- forward / backward on explicit batches ----
 * tokens, targets: [batch][seq_len] ints; target -1 = ignored. positions
 * (may be NULL): [batch][seq_len] int64 absolute positions; NULL = offset +
 * 0..seq_len-1 for every sequence. logits_out (may be NULL): [batch][seq_len][vocab].
 * *loss_out: mean cross entropy over the non-ignored targets (nats). */
typedef struct lab_eval_options {
    int32_t seq_len;               /* 0 = config context */
    int32_t batch;                 /* sequences per forward pass; default 4 */
    int64_t position_offset;       /* first position (RoPE/ALiBi/T5 offset invariance) */
    posenc_rope_scaling rope_scaling; /* LAB_ROPE_AS_TRAINED (default): the config's
                                         scaling; any other value replaces it (NONE = off) */
    double rope_factor;            /* <= 0 (default 0): the config's rope_factor */
    const double *rope_longrope_factors; /* LONGROPE: rotary_dim/2 per-pair factors (used as the long list) */
    posenc_past_end learned_past_end_override; /* -1 = the config's policy */
    int32_t max_windows;           /* lab_eval_bytes: windows evaluated, 0 = all (non-overlapping) */
} lab_eval_options;
void lab_eval_options_default(lab_eval_options *options);
/* lab_eval_options.rope_scaling: use the model's own scaling (config). */
#define LAB_ROPE_AS_TRAINED ((posenc_rope_scaling)-1)

/* The posenc RoPE parameters a forward pass of this config uses: the config's
 * scaling, or the eval options' override (eval may be NULL: training). The
 * other knobs (original context, YaRN betas and attention factor, Llama 3
 * frequency factors) always come from the config. Validated with
 * posenc_rope_check. */
posenc_status lab_rope_params(const lab_config *config, const lab_eval_options *eval, posenc_rope_params *out,
                              posenc_error *err);

posenc_status lab_forward(lab_model *model, const int32_t *tokens, const int32_t *targets,
                          const int64_t *positions, int32_t batch, int32_t seq_len,
                          const lab_eval_options *eval, int want_backward, float *logits_out,
                          double *loss_out, posenc_error *err);
/* Backward of the last forward called with want_backward = 1; accumulates into
 * the gradients (lab_zero_grad clears them). */
posenc_status lab_backward(lab_model *model, posenc_error *err);
void lab_zero_grad(lab_model *model);

/* ---- training ---- */
typedef struct lab_train_options {
    int64_t steps;         /* total optimizer steps (schedule length) */
    int32_t batch;         /* default 16 */
    double lr;             /* peak learning rate, default 1e-3 */
    double min_lr_ratio;   /* cosine floor as a fraction of lr, default 0.1 */
    int64_t warmup;        /* linear warmup steps, default 20 */
    double beta1, beta2, eps, weight_decay; /* 0.9 0.95 1e-8 0.1 */
    double clip;           /* global grad-norm clip, 0 = off; default 1 */
    const char *checkpoint_path; /* written every checkpoint_every steps and at the end (may be NULL) */
    int64_t checkpoint_every;
} lab_train_options;
void lab_train_options_default(lab_train_options *options);
posenc_status lab_train_options_check(const lab_train_options *options, posenc_error *err);

/* Learning rate at step (0-based): warmup then cosine to min_lr_ratio * lr. */
double lab_lr_at(const lab_train_options *options, int64_t step);
/* One AdamW update of every parameter (decoupled weight decay, bias correction);
 * clips by the global norm first when options->clip > 0. *grad_norm_out gets the
 * norm before clipping (may be NULL). Increments the model's step. */
posenc_status lab_adamw_step(lab_model *model, const lab_train_options *options, double lr,
                             double *grad_norm_out, posenc_error *err);
int64_t lab_model_step(const lab_model *model);

/* Per-group gradient norms (tok, pos, attn, mlp, norm, head) of the current gradients. */
#define LAB_GROUPS 6
const char *lab_group_name(int group);
void lab_group_grad_norms(const lab_model *model, double out[LAB_GROUPS]);

/* A batch provider: fill tokens/targets [batch][seq_len] (and positions, or
 * leave *use_positions 0) for `step`. Must be a pure function of step so
 * that resuming is exact. */
typedef posenc_status (*lab_batch_fn)(void *ctx, int64_t step, int32_t batch, int32_t seq_len,
                                      uint64_t seed, int32_t *tokens, int32_t *targets,
                                      posenc_error *err);
/* Byte stream source: random windows of seq_len+1 bytes, offsets from
 * splitmix64(seed, step, b). */
typedef struct lab_byte_source {
    const uint8_t *bytes;
    size_t size;
} lab_byte_source;
posenc_status lab_byte_batch(void *ctx, int64_t step, int32_t batch, int32_t seq_len, uint64_t seed,
                             int32_t *tokens, int32_t *targets, posenc_error *err);

typedef struct lab_step_report {
    int64_t step;          /* 1-based count of completed steps */
    double loss, lr, grad_norm;
    double group_norms[LAB_GROUPS];
} lab_step_report;
/* Return non-zero to stop training early. */
typedef int (*lab_step_fn)(void *ctx, const lab_step_report *report);

/* Train from the model's current step to options->steps. A non-finite loss
 * or gradient stops with POSENC_ERR_INVALID_ARGUMENT and a message naming the
 * step and the first non-finite tensor; the parameters are left as before the
 * failing step and the last checkpoint written stays in place. */
posenc_status lab_train(lab_model *model, const lab_train_options *options, lab_batch_fn next_batch,
                        void *batch_ctx, lab_step_fn on_step, void *step_ctx, posenc_error *err);

/* Mean loss over non-overlapping windows of bytes (seq_len+1 each). */
posenc_status lab_eval_bytes(lab_model *model, const lab_eval_options *options, const uint8_t *bytes,
                             size_t size, double *loss_out, posenc_error *err);

/* ---- checkpoints (safetensors; names in docs/lab.md) ----
 * save: parameters, AdamW moments, metadata (config, step, posenc version),
 * written atomically. load_into: the file's config must equal the model's.
 * load: create a model from the file's config. load_memory: the same from the
 * file's bytes (name is what messages call it). Every header field, the config
 * text, each tensor's dtype and shape, and every value (finite; second moments
 * >= 0) is checked, and the config's size is checked against the bytes present
 * before anything of that size is allocated. */
posenc_status lab_checkpoint_save(const lab_model *model, const char *path, posenc_error *err);
posenc_status lab_checkpoint_load_into(lab_model *model, const char *path, posenc_error *err);
posenc_status lab_checkpoint_load(const char *path, int32_t threads, lab_model **out,
                                  posenc_error *err);
posenc_status lab_checkpoint_load_memory(const void *bytes, size_t size, const char *name, int32_t threads,
                                         lab_model **out, posenc_error *err);
/* Start dst from src's trained weights (a fine-tune): every parameter tensor is
 * copied by name; names and shapes must match (so configs may differ only in
 * what no tensor depends on: context for table-free schemes, the RoPE scaling,
 * seed, ...). dst's AdamW moments and step are reset to zero. */
posenc_status lab_model_copy_weights(lab_model *dst, const lab_model *src, posenc_error *err);

/* ---- benchmark helpers ---- */
/* FLOPs of one training step (forward + backward, matmuls and attention). */
double lab_step_flops(const lab_config *config, int32_t batch, int32_t seq_len);
/* The file name of the BLAS the lab multiplies with (libopenblas.so.0, or
 * libdnnl.so.2 under POSENC_LAB_BLAS=onednn: lab/blas.c), loading it first;
 * NULL when it cannot be loaded. */
const char *lab_blas_library(void);
/* Measured single-thread sgemm GFLOP/s on an n x n x n product (median of reps). */
double lab_sgemm_gflops(int n, int reps);
/* Per-phase profile of training steps (`posenc lab bench --profile`): while on,
 * every phase of lab_forward, lab_backward and lab_adamw_step adds the process's
 * CPU time and the wall time it took to its row. Turning it on clears the rows.
 * Phase i's name, totals and call count through lab_profile_phase (0 past the
 * last phase). Off by default; the cost when off is one branch per phase. */
void lab_model_profile(lab_model *model, int on);
int lab_profile_phase(const lab_model *model, int phase, const char **name, double *cpu_s, double *wall_s,
                      int64_t *calls);

#ifdef __cplusplus
}
#endif
#endif /* POSENC_LAB_H */
