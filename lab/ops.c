/* ops.c: the model's operations, each a forward/backward pair (llm.c's habit:
 * forward keeps what backward needs, backward accumulates with +=). Matrix
 * products go through OpenBLAS cblas_sgemm, called single-threaded (the model
 * pins OpenBLAS to 1 thread) on a partition of the work that is fixed by the
 * shapes (row blocks, output-feature blocks, (batch, head) pairs), so the bits
 * never depend on how many of the lab's threads run the tasks. */
#include "lab_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ROW_BLOCK 128 /* rows per layernorm / softmax task */
/* Rows per matmul task and output features per weight-gradient task. Each
 * task packs the whole weight (or the whole input, for dW) again, so larger
 * blocks pack less per flop: on the lab's shapes OpenBLAS's sgemm ran at
 * 83-88 GFLOP/s with 128 / 64 and 88-96 with 256 / 128 (CPU time, best of 5,
 * docs/benchmarks.md), while 2048 rows still make 8 row tasks for 2 threads. */
#define MATMUL_ROWS 256
#define OUT_BLOCK 128
#define COL_BLOCK 32  /* channels per layernorm weight-gradient task */

static size_t blocks(size_t n, size_t block) { return (n + block - 1) / block; }
static size_t min_size(size_t a, size_t b) { return a < b ? a : b; }

/* The element-wise loops that are compute-bound (GELU's forward, the softmax
 * rows, layernorm's rows) are also built for AVX-512 and AVX2 and chosen when the process
 * starts (GCC and clang's target_clones, through an ifunc): the baseline
 * x86-64 build has 4-wide SSE only. The same operations run in the same order
 * in every clone (no FMA contraction: -ffp-contract=off for the lab), so the
 * bits do not depend on the CPU. */
#ifndef LAB_VECTOR_CLONES /* -DLAB_VECTOR_CLONES= builds the baseline only (to compare the bits) */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__linux__)
#define LAB_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define LAB_VECTOR_CLONES
#endif
#endif

/* ---- matmul ---- */
typedef struct {
    float *out, *dinp, *dw, *db;
    const float *inp, *w, *b, *dout;
    size_t n;
    int32_t in, outdim;
    size_t row_tasks;
} matmul_ctx;

static void matmul_forward_task(void *ctx_, size_t task, int32_t thread) {
    (void)thread;
    matmul_ctx *c = ctx_;
    size_t r0 = task * MATMUL_ROWS, rows = min_size(MATMUL_ROWS, c->n - r0);
    float *out = c->out + r0 * (size_t)c->outdim;
    float beta = 0.0f;
    if (c->b) {
        for (size_t r = 0; r < rows; r++) memcpy(out + r * (size_t)c->outdim, c->b, sizeof(float) * (size_t)c->outdim);
        beta = 1.0f;
    }
    lab_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)rows, c->outdim, c->in, 1.0f,
                c->inp + r0 * (size_t)c->in, c->in, c->w, c->in, beta, out, c->outdim);
}

void lab_matmul_forward(lab_pool *pool, float *out, const float *inp, const float *w, const float *b,
                        size_t n, int32_t in, int32_t outdim) {
    matmul_ctx c = {.out = out, .inp = inp, .w = w, .b = b, .n = n, .in = in, .outdim = outdim};
    lab_pool_run(pool, blocks(n, MATMUL_ROWS), matmul_forward_task, &c);
}

/* Tasks 0 .. weight_tasks-1 are the weight gradients (each a product over all
 * rows, the long ones), then the row blocks of the input gradient: claimed in
 * that order, the short row tasks fill in behind the long ones instead of one
 * long task finishing alone (small model, 2 threads: backward 1.16x -> see
 * docs/lab.md). Each task writes its own outputs, so the order keeps the bits. */
static void matmul_backward_task(void *ctx_, size_t task, int32_t thread) {
    (void)thread;
    matmul_ctx *c = ctx_;
    size_t weight_tasks = blocks((size_t)c->outdim, OUT_BLOCK);
    if (task >= weight_tasks) { /* dinp rows = dout rows @ W (overwritten: saves a memset per call) */
        if (!c->dinp) return;
        size_t r0 = (task - weight_tasks) * MATMUL_ROWS, rows = min_size(MATMUL_ROWS, c->n - r0);
        lab_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, c->in, c->outdim, 1.0f,
                    c->dout + r0 * (size_t)c->outdim, c->outdim, c->w, c->in, 0.0f,
                    c->dinp + r0 * (size_t)c->in, c->in);
        return;
    }
    /* dW[o0:o0+k] += dout[:, o0:o0+k]^T inp; db likewise, rows summed in order */
    size_t o0 = task * OUT_BLOCK, outs = min_size(OUT_BLOCK, (size_t)c->outdim - o0);
    lab_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)outs, c->in, (int)c->n, 1.0f, c->dout + o0,
                c->outdim, c->inp, c->in, 1.0f, c->dw + o0 * (size_t)c->in, c->in);
    if (c->db) { /* rows in order, each row's slice contiguous */
        double sum[OUT_BLOCK] = {0};
        for (size_t r = 0; r < c->n; r++) {
            const float *row = c->dout + r * (size_t)c->outdim + o0;
            for (size_t o = 0; o < outs; o++) sum[o] += row[o];
        }
        for (size_t o = 0; o < outs; o++) c->db[o0 + o] += (float)sum[o];
    }
}

void lab_matmul_backward(lab_pool *pool, float *dinp, float *dw, float *db, const float *dout,
                         const float *inp, const float *w, size_t n, int32_t in, int32_t outdim) {
    matmul_ctx c = {.dinp = dinp, .dw = dw, .db = db, .dout = dout, .inp = inp, .w = w, .n = n,
                    .in = in, .outdim = outdim, .row_tasks = blocks(n, MATMUL_ROWS)};
    lab_pool_run(pool, c.row_tasks + blocks((size_t)outdim, OUT_BLOCK), matmul_backward_task, &c);
}

/* ---- layernorm (eps 1e-5, as torch) ---- */
/* Row sums in LN_LANES interleaved double partial sums, added in lane order,
 * then the tail: the serial sum was a chain of dependent adds the compiler
 * could not vectorise (layernorm was 5% of the default model's step). Since
 * issue 43; the bits differ from the serial sum's in the last place. */
#define LN_LANES 8
static inline double lanes_sum(const float *v, int32_t n) {
    double p[LN_LANES] = {0}, s = 0.0;
    int32_t full = n - n % LN_LANES, i = 0;
    for (; i < full; i += LN_LANES)
        for (int l = 0; l < LN_LANES; l++) p[l] += v[i + l];
    for (int l = 0; l < LN_LANES; l++) s += p[l];
    for (; i < n; i++) s += v[i];
    return s;
}
static inline double lanes_sum_sq_dev(const float *v, double m, int32_t n) {
    double p[LN_LANES] = {0}, s = 0.0;
    int32_t full = n - n % LN_LANES, i = 0;
    for (; i < full; i += LN_LANES)
        for (int l = 0; l < LN_LANES; l++) p[l] += (v[i + l] - m) * (v[i + l] - m);
    for (int l = 0; l < LN_LANES; l++) s += p[l];
    for (; i < n; i++) s += (v[i] - m) * (v[i] - m);
    return s;
}
typedef struct {
    float *out, *mean, *rstd, *dinp, *dw, *db;
    const float *inp, *w, *b, *dout, *cmean, *crstd;
    size_t n;
    int32_t c;
} ln_ctx;

LAB_VECTOR_CLONES static void ln_forward_task(void *ctx_, size_t task, int32_t thread) {
    (void)thread;
    ln_ctx *x = ctx_;
    size_t r0 = task * ROW_BLOCK, r1 = min_size(r0 + ROW_BLOCK, x->n);
    for (size_t r = r0; r < r1; r++) {
        const float *in = x->inp + r * (size_t)x->c;
        double s = lanes_sum(in, x->c);
        double m = s / x->c;
        double ss = lanes_sum_sq_dev(in, m, x->c);
        float rs = (float)(1.0 / sqrt(ss / x->c + 1e-5));
        float mf = (float)m;
        float *out = x->out + r * (size_t)x->c;
        for (int32_t i = 0; i < x->c; i++) out[i] = (in[i] - mf) * rs * x->w[i] + x->b[i];
        x->mean[r] = mf;
        x->rstd[r] = rs;
    }
}

void lab_layernorm_forward(lab_pool *pool, float *out, float *mean, float *rstd, const float *inp,
                           const float *w, const float *b, size_t n, int32_t c) {
    ln_ctx x = {.out = out, .mean = mean, .rstd = rstd, .inp = inp, .w = w, .b = b, .n = n, .c = c};
    lab_pool_run(pool, blocks(n, ROW_BLOCK), ln_forward_task, &x);
}

LAB_VECTOR_CLONES static void ln_backward_rows_task(void *ctx_, size_t task, int32_t thread) {
    (void)thread;
    ln_ctx *x = ctx_;
    size_t r0 = task * ROW_BLOCK, r1 = min_size(r0 + ROW_BLOCK, x->n);
    for (size_t r = r0; r < r1; r++) {
        const float *in = x->inp + r * (size_t)x->c, *dout = x->dout + r * (size_t)x->c;
        float m = x->cmean[r], rs = x->crstd[r];
        double dm_l[LN_LANES] = {0}, dnn_l[LN_LANES] = {0}, dmean = 0.0, dnorm_norm = 0.0;
        int32_t full = x->c - x->c % LN_LANES, i = 0;
        for (; i < full; i += LN_LANES)
            for (int l = 0; l < LN_LANES; l++) {
                float norm = (in[i + l] - m) * rs, dnorm = dout[i + l] * x->w[i + l];
                dm_l[l] += dnorm;
                dnn_l[l] += dnorm * norm;
            }
        for (int l = 0; l < LN_LANES; l++) {
            dmean += dm_l[l];
            dnorm_norm += dnn_l[l];
        }
        for (; i < x->c; i++) {
            float norm = (in[i] - m) * rs, dnorm = dout[i] * x->w[i];
            dmean += dnorm;
            dnorm_norm += dnorm * norm;
        }
        float dm = (float)(dmean / x->c), dnn = (float)(dnorm_norm / x->c);
        float *dinp = x->dinp + r * (size_t)x->c;
        for (i = 0; i < x->c; i++) {
            float norm = (in[i] - m) * rs, dnorm = dout[i] * x->w[i];
            dinp[i] += (dnorm - dm - norm * dnn) * rs;
        }
    }
}

static void ln_backward_cols_task(void *ctx_, size_t task, int32_t thread) {
    (void)thread;
    ln_ctx *x = ctx_;
    size_t c0 = task * COL_BLOCK, c1 = min_size(c0 + COL_BLOCK, (size_t)x->c);
    double dw[COL_BLOCK] = {0}, db[COL_BLOCK] = {0};
    for (size_t r = 0; r < x->n; r++) {
        const float *in = x->inp + r * (size_t)x->c, *dout = x->dout + r * (size_t)x->c;
        for (size_t i = c0; i < c1; i++) {
            float norm = (in[i] - x->cmean[r]) * x->crstd[r];
            dw[i - c0] += dout[i] * norm;
            db[i - c0] += dout[i];
        }
    }
    for (size_t i = c0; i < c1; i++) {
        x->dw[i] += (float)dw[i - c0];
        x->db[i] += (float)db[i - c0];
    }
}

void lab_layernorm_backward(lab_pool *pool, float *dinp, float *dw, float *db, const float *dout,
                            const float *inp, const float *w, const float *mean, const float *rstd,
                            size_t n, int32_t c) {
    ln_ctx x = {.dinp = dinp, .dw = dw, .db = db, .dout = dout, .inp = inp, .w = w, .cmean = mean,
                .crstd = rstd, .n = n, .c = c};
    lab_pool_run(pool, blocks(n, ROW_BLOCK), ln_backward_rows_task, &x);
    lab_pool_run(pool, blocks((size_t)c, COL_BLOCK), ln_backward_cols_task, &x);
}

/* ---- e^x ----
 * e^x with no libm call, so the GELU and softmax loops vectorise: glibc's expf
 * is a call per element, and GELU and the attention and output softmaxes spent
 * most of their time outside sgemm in it (and in the serial sums beside it) (docs/benchmarks.md,
 * the lab step's profile). e^x = 2^n e^r with n = round(x log2 e) (by the
 * 1.5 * 2^23 shift), r = x - n ln2 in two parts (ln2_hi has 16 significant
 * bits, so n ln2_hi is exact for |n| < 256), e^r by its Taylor series to r^7
 * (truncation < 1e-8 relative for |r| <= ln2/2) and 2^n built in the exponent
 * field. x is clamped to [-87, 88] (a NaN passes the compares and gives NaN):
 * the softmax's arguments are <= 0, and below -87 e^x < 2^-125 is nothing next
 * to the row's largest term, 1; GELU's tanh saturates to +-1 long before. Against glibc's expf: within 2 ulp (lab
 * test_lab_grad checks it on a sweep). The bits differ from expf's, so runs
 * before and after this change differ in the last bits. */
static inline float exp_fast(float x) {
    x = x < -87.0f ? -87.0f : x;
    x = x > 88.0f ? 88.0f : x;
    float t = x * 1.44269504088896341f + 12582912.0f; /* + 1.5 * 2^23: rounds to an integer */
    float n = t - 12582912.0f;
    float r = x - n * 0.693145751953125f;
    r = r - n * 1.428606820309417232e-06f;
    float p = 1.0f / 5040.0f;
    p = p * r + 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    union {
        float f;
        uint32_t u;
    } tb = {t}, scale;
    scale.u = (tb.u - 0x4B400000u + 127u) << 23; /* the integer in t's low bits, as 2^n */
    return p * scale.f;
}

float lab_exp_fast(float x) { return exp_fast(x); }

/* ---- GELU, tanh approximation (torch nn.GELU(approximate='tanh')) ---- */
#define GELU_K 0.7978845608028654f /* sqrt(2/pi) */
typedef struct {
    float *out, *tanh_out;
    const float *inp, *dout, *tanh_in;
    size_t count;
} gelu_ctx;
#define ELEM_BLOCK 16384

/* tanh through one e^x: glibc's tanhf (expm1f inside) was a third of a
 * training step; 1 - 2/(e^(2u) + 1) has an absolute error of a few f32 ulps
 * of 1, which is what GELU and its derivative need (they add t to 1).
 * Each piece runs in passes (2u, e^(2u), then the rest), all vectorised since
 * e^x is exp_fast (glibc's expf, a call, was 3/4 of GELU's time). Every
 * element sees the same operations in the same order as the one-loop form,
 * so the bits are those of the one-loop form (fp-contract is off in ISO C
 * mode; test_lab_grad checks them). */
#define GELU_PIECE 512

/* e = e^(2u), u = sqrt(2/pi) (x + 0.044715 x^3), for x[0..n) */
static void gelu_exp_2u(float *restrict e, const float *restrict x, size_t n) {
    for (size_t i = 0; i < n; i++) {
        float u = GELU_K * (x[i] + 0.044715f * x[i] * x[i] * x[i]);
        e[i] = 2.0f * u;
    }
    for (size_t i = 0; i < n; i++) e[i] = exp_fast(e[i]);
}

/* tanh(u) from e = e^(2u). The one-loop form saturated to +-1 beyond |u| > 15;
 * the formula itself gives exactly those bits there (u > 15: 2/(e+1) < 2^-25,
 * so 1 minus it rounds to 1; u < -15: e < 2^-24, so e+1 rounds to 1 and the
 * result is -1; exp_fast's clamp to [-87, 88] keeps both sides), so no select
 * is needed and the loop vectorises. Checked against the one-loop form (with
 * glibc's expf then) on every float x; test_lab_grad's sweep is the part kept
 * in CI. */
static inline float tanh_from_exp(float e) { return 1.0f - 2.0f / (e + 1.0f); }

LAB_VECTOR_CLONES static void gelu_forward_task(void *ctx_, size_t task, int32_t thread) {
    (void)thread;
    gelu_ctx *g = ctx_;
    float e[GELU_PIECE];
    size_t i0 = task * ELEM_BLOCK, i1 = min_size(i0 + ELEM_BLOCK, g->count);
    for (size_t p0 = i0; p0 < i1; p0 += GELU_PIECE) {
        size_t n = min_size(GELU_PIECE, i1 - p0);
        const float *restrict x = g->inp + p0;
        float *restrict out = g->out + p0;
        gelu_exp_2u(e, x, n);
        if (g->tanh_out) {
            float *restrict tanh_out = g->tanh_out + p0;
            for (size_t i = 0; i < n; i++) {
                float t = tanh_from_exp(e[i]);
                tanh_out[i] = t;
                out[i] = 0.5f * x[i] * (1.0f + t);
            }
        } else {
            for (size_t i = 0; i < n; i++) out[i] = 0.5f * x[i] * (1.0f + tanh_from_exp(e[i]));
        }
    }
}

static void gelu_recompute_task(void *ctx_, size_t task, int32_t thread) {
    (void)thread;
    gelu_ctx *g = ctx_;
    size_t i0 = task * ELEM_BLOCK, i1 = min_size(i0 + ELEM_BLOCK, g->count);
    for (size_t i = i0; i < i1; i++) g->out[i] = 0.5f * g->inp[i] * (1.0f + g->tanh_in[i]);
}

static void gelu_backward_task(void *ctx_, size_t task, int32_t thread) {
    (void)thread;
    gelu_ctx *g = ctx_;
    size_t i0 = task * ELEM_BLOCK, i1 = min_size(i0 + ELEM_BLOCK, g->count);
    for (size_t i = i0; i < i1; i++) {
        float x = g->inp[i], t = g->tanh_in[i];
        float sech2 = 1.0f - t * t;
        float grad = 0.5f * (1.0f + t) + 0.5f * x * sech2 * GELU_K * (1.0f + 3.0f * 0.044715f * x * x);
        g->out[i] = grad * g->dout[i];
    }
}

void lab_gelu_forward(lab_pool *pool, float *out, float *tanh_out, const float *inp, size_t count) {
    gelu_ctx g = {.out = out, .tanh_out = tanh_out, .inp = inp, .count = count};
    lab_pool_run(pool, blocks(count, ELEM_BLOCK), gelu_forward_task, &g);
}

void lab_gelu_recompute(lab_pool *pool, float *out, const float *inp, const float *tanh_in, size_t count) {
    gelu_ctx g = {.out = out, .inp = inp, .tanh_in = tanh_in, .count = count};
    lab_pool_run(pool, blocks(count, ELEM_BLOCK), gelu_recompute_task, &g);
}

void lab_gelu_backward(lab_pool *pool, float *dinp, const float *inp, const float *tanh_in, const float *dout,
                       size_t count) {
    gelu_ctx g = {.out = dinp, .inp = inp, .tanh_in = tanh_in, .dout = dout, .count = count};
    lab_pool_run(pool, blocks(count, ELEM_BLOCK), gelu_backward_task, &g);
}

/* ---- softmax ---- */
#define SOFTMAX_LANES 16 /* partial maxima and sums: the order of the sum, so the bits, do not depend on the ISA */

/* row[0..n) = softmax(row[0..n)) in place */
LAB_VECTOR_CLONES static void softmax_row(float *restrict row, int32_t n) {
    float m[SOFTMAX_LANES], s[SOFTMAX_LANES];
    for (int l = 0; l < SOFTMAX_LANES; l++) {
        m[l] = -INFINITY;
        s[l] = 0.0f;
    }
    int32_t full = n - n % SOFTMAX_LANES, j;
    for (j = 0; j < full; j += SOFTMAX_LANES)
        for (int l = 0; l < SOFTMAX_LANES; l++) m[l] = row[j + l] > m[l] ? row[j + l] : m[l];
    float mx = -INFINITY;
    for (int l = 0; l < SOFTMAX_LANES; l++) mx = m[l] > mx ? m[l] : mx;
    for (; j < n; j++) mx = row[j] > mx ? row[j] : mx;
    for (j = 0; j < full; j += SOFTMAX_LANES)
        for (int l = 0; l < SOFTMAX_LANES; l++) {
            float e = exp_fast(row[j + l] - mx);
            row[j + l] = e;
            s[l] += e;
        }
    float sum = 0.0f;
    for (; j < n; j++) {
        row[j] = exp_fast(row[j] - mx);
        sum += row[j];
    }
    for (int l = 0; l < SOFTMAX_LANES; l++) sum += s[l];
    float inv = 1.0f / sum;
    for (j = 0; j < n; j++) row[j] *= inv;
}

/* ---- softmax + cross entropy ---- */
typedef struct {
    float *probs;
    const float *logits;
    const int32_t *targets;
    size_t n;
    int32_t v;
    size_t valid;
    float dloss;
} xent_ctx;

static void xent_forward_task(void *ctx_, size_t task, int32_t thread) {
    (void)thread;
    xent_ctx *x = ctx_;
    size_t r0 = task * ROW_BLOCK, r1 = min_size(r0 + ROW_BLOCK, x->n);
    for (size_t r = r0; r < r1; r++) {
        const float *l = x->logits + r * (size_t)x->v;
        float *p = x->probs + r * (size_t)x->v;
        if (p != l) memcpy(p, l, sizeof(float) * (size_t)x->v);
        softmax_row(p, x->v);
    }
}

double lab_softmax_xent_forward(lab_pool *pool, float *probs, const float *logits, const int32_t *targets,
                                size_t n, int32_t v, size_t *valid_out) {
    xent_ctx x = {.probs = probs, .logits = logits, .n = n, .v = v};
    lab_pool_run(pool, blocks(n, ROW_BLOCK), xent_forward_task, &x);
    double total = 0.0;
    size_t valid = 0;
    if (targets) {
        for (size_t r = 0; r < n; r++) {
            if (targets[r] < 0) continue;
            total += -log((double)probs[r * (size_t)v + (size_t)targets[r]]);
            valid++;
        }
    }
    *valid_out = valid;
    return valid ? total / (double)valid : 0.0;
}

static void xent_backward_task(void *ctx_, size_t task, int32_t thread) {
    (void)thread;
    xent_ctx *x = ctx_;
    size_t r0 = task * ROW_BLOCK, r1 = min_size(r0 + ROW_BLOCK, x->n);
    float scale = x->dloss / (float)x->valid;
    for (size_t r = r0; r < r1; r++) {
        float *d = x->probs + r * (size_t)x->v; /* written in place: dlogits */
        const float *p = x->logits + r * (size_t)x->v;
        int32_t t = x->targets[r];
        if (t < 0) {
            for (int32_t i = 0; i < x->v; i++) d[i] = 0.0f;
            continue;
        }
        for (int32_t i = 0; i < x->v; i++) d[i] = (p[i] - (i == t ? 1.0f : 0.0f)) * scale;
    }
}

void lab_softmax_xent_backward(lab_pool *pool, float *dlogits, const float *probs, const int32_t *targets,
                               size_t n, int32_t v, size_t valid, float dloss) {
    if (valid == 0) {
        memset(dlogits, 0, sizeof(float) * n * (size_t)v);
        return;
    }
    xent_ctx x = {.probs = dlogits, .logits = probs, .targets = targets, .n = n, .v = v, .valid = valid,
                  .dloss = dloss};
    lab_pool_run(pool, blocks(n, ROW_BLOCK), xent_backward_task, &x);
}

/* ---- attention ---- */
/* Query rows per block of the causal products: 64 beat 32 on the lab's shapes
 * (fewer, larger sgemm calls; T 128 and 256, head dim 32, OpenBLAS 0.3.21) */
#define ATTN_ROWS 64
typedef struct {
    const lab_attention_args *a;
    float *atty, *att, *dqkv, *t5_partial, *shaw_partial;
    const float *qkv, *datty, *catt;
} attn_ctx;

static void add_bias_row(const lab_attention_args *a, int32_t b, int32_t h, int32_t i, float *row, int32_t keys,
                         float *tmp) {
    if (a->alibi_slopes) {
        posenc_positions kp = posenc_positions_ids(a->pos + (size_t)b * (size_t)a->T, (size_t)keys);
        /* Arguments were checked when the model was made: this cannot fail. */
        (void)posenc_alibi_bias_row_f32(a->alibi_slopes[h], a->causal ? POSENC_ALIBI_CAUSAL : POSENC_ALIBI_SYMMETRIC,
                                        (double)a->pos[(size_t)b * (size_t)a->T + (size_t)i], &kp, tmp,
                                        (size_t)keys, NULL);
        for (int32_t j = 0; j < keys; j++) row[j] += tmp[j];
    } else if (a->t5_table) {
        const int32_t *bk = a->buckets + ((size_t)b * (size_t)a->T + (size_t)i) * (size_t)a->T;
        for (int32_t j = 0; j < keys; j++) row[j] += a->t5_table[(size_t)bk[j] * (size_t)a->H + (size_t)h];
    }
}

/* Claims go head-major (consecutive claims are different sequences of one
 * head) so the two threads rarely work on the same rows of qkv at once: with
 * the (b, h) order they wrote adjacent head slices of the same rows, and the
 * small model's attention ran 15-20% slower on 2 threads (backward 1.00 vs
 * 0.84 ms per step). The slot, which indexes att, t5 and Shaw partial sums,
 * stays b H + h, so every reduction keeps its order and the bits. */
static size_t attention_slot(const lab_attention_args *a, size_t claim, int32_t *b, int32_t *h) {
    *b = (int32_t)(claim % (size_t)a->B);
    *h = (int32_t)(claim / (size_t)a->B);
    return (size_t)*b * (size_t)a->H + (size_t)*h;
}

static void attention_forward_task(void *ctx_, size_t task, int32_t thread) {
    attn_ctx *c = ctx_;
    const lab_attention_args *a = c->a;
    int32_t b, h;
    task = attention_slot(a, task, &b, &h);
    int32_t T = a->T, C = a->C, hd = a->C / a->H;
    size_t ld = 3 * (size_t)C;
    const float *q = c->qkv + (size_t)b * (size_t)T * ld + (size_t)h * (size_t)hd;
    const float *k = q + C, *v = q + 2 * (size_t)C;
    float *scratch = a->scratch + (size_t)thread * a->scratch_per_thread;
    float *S = c->att ? c->att + task * (size_t)T * (size_t)T : scratch;
    float *tmp = scratch + (size_t)T * (size_t)T;
    float scale = 1.0f / sqrtf((float)hd);
    float *out = c->atty + (size_t)b * (size_t)T * (size_t)C + (size_t)h * (size_t)hd;
    /* Causal: rows in blocks of ATTN_ROWS, each block's products only over the
     * keys its last row sees (0 .. r1), so the masked upper triangle is neither
     * multiplied nor read (T 128: 3/4 of the work, T 256: 5/8). Each entry is the
     * same dot product as in the full product, and the P V sums only drop
     * exact zeros, so the bits are those of the full products. */
    int32_t block = a->causal ? ATTN_ROWS : T;
    for (int32_t r0 = 0; r0 < T; r0 += block) {
        int32_t r1 = r0 + block < T ? r0 + block : T, n = a->causal ? r1 : T;
        lab_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, r1 - r0, n, hd, scale, q + (size_t)r0 * ld, (int)ld, k,
                  (int)ld, 0.0f, S + (size_t)r0 * (size_t)T, T);
        for (int32_t i = r0; i < r1; i++) {
            float *row = S + (size_t)i * (size_t)T;
            int32_t keys = a->causal ? i + 1 : T;
            add_bias_row(a, b, h, i, row, keys, tmp);
            if (a->shaw_k) { /* + scale q_i . a_K[idx_ij] */
                const float *qi = q + (size_t)i * ld;
                const int32_t *idx = a->shaw_index + ((size_t)b * (size_t)T + (size_t)i) * (size_t)T;
                for (int32_t j = 0; j < keys; j++) {
                    const float *ak = a->shaw_k + (size_t)idx[j] * (size_t)hd;
                    float d = 0.0f;
                    for (int32_t e = 0; e < hd; e++) d += qi[e] * ak[e];
                    row[j] += scale * d;
                }
            }
            softmax_row(row, keys);
            for (int32_t j = keys; j < T; j++) row[j] = 0.0f; /* the stored maps (lab probe) read whole rows */
        }
        lab_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, r1 - r0, hd, n, 1.0f, S + (size_t)r0 * (size_t)T, T, v,
                  (int)ld, 0.0f, out + (size_t)r0 * (size_t)C, C);
    }
    if (a->shaw_v) /* + sum_j w_ij a_V[idx_ij] */
        for (int32_t i = 0; i < T; i++) {
            const float *w = S + (size_t)i * (size_t)T;
            const int32_t *idx = a->shaw_index + ((size_t)b * (size_t)T + (size_t)i) * (size_t)T;
            float *oi = out + (size_t)i * (size_t)C;
            int32_t keys = a->causal ? i + 1 : T;
            for (int32_t j = 0; j < keys; j++) {
                const float *av = a->shaw_v + (size_t)idx[j] * (size_t)hd;
                for (int32_t e = 0; e < hd; e++) oi[e] += w[j] * av[e];
            }
        }
}

void lab_attention_forward(lab_pool *pool, const lab_attention_args *a, float *atty, float *att,
                           const float *qkv) {
    attn_ctx c = {.a = a, .atty = atty, .att = att, .qkv = qkv};
    lab_pool_run(pool, (size_t)a->B * (size_t)a->H, attention_forward_task, &c);
}

static void attention_backward_task(void *ctx_, size_t task, int32_t thread) {
    attn_ctx *c = ctx_;
    const lab_attention_args *a = c->a;
    int32_t b, h;
    task = attention_slot(a, task, &b, &h);
    int32_t T = a->T, C = a->C, hd = a->C / a->H;
    size_t ld = 3 * (size_t)C, off = (size_t)b * (size_t)T * ld + (size_t)h * (size_t)hd;
    const float *q = c->qkv + off, *k = q + C, *v = q + 2 * (size_t)C;
    float *dq = c->dqkv + off, *dk = dq + C, *dv = dq + 2 * (size_t)C;
    const float *P = c->catt + task * (size_t)T * (size_t)T;
    const float *dO = c->datty + (size_t)b * (size_t)T * (size_t)C + (size_t)h * (size_t)hd;
    float *dS = a->scratch + (size_t)thread * a->scratch_per_thread;
    float scale = 1.0f / sqrtf((float)hd);
    /* Causal: the forward's row blocks. dS and dq by row block over the keys the
     * block sees; dv and dk by key block over the rows that see it (j0 .. T):
     * every skipped term is an exact zero of P or dS, so the bits stay those of
     * the full products (see the forward). */
    int32_t block = a->causal ? ATTN_ROWS : T;
    for (int32_t r0 = 0; r0 < T; r0 += block) {
        int32_t r1 = r0 + block < T ? r0 + block : T, n = a->causal ? r1 : T;
        lab_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, r1 - r0, n, hd, 1.0f, dO + (size_t)r0 * (size_t)C, C, v,
                  (int)ld, 0.0f, dS + (size_t)r0 * (size_t)T, T);
    }
    for (int32_t j0 = 0; j0 < T; j0 += block) {
        int32_t j1 = j0 + block < T ? j0 + block : T, from = a->causal ? j0 : 0;
        lab_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, j1 - j0, hd, T - from, 1.0f, P + (size_t)from * (size_t)T + j0,
                  T, dO + (size_t)from * (size_t)C, C, 0.0f, dv + (size_t)j0 * ld, (int)ld);
    }
    float *t5 = c->t5_partial ? c->t5_partial + task * (size_t)a->t5_buckets : NULL;
    if (t5) memset(t5, 0, sizeof(float) * (size_t)a->t5_buckets);
    size_t shaw_per = a->shaw_k ? (2 * (size_t)a->shaw_clip + 1) * (size_t)hd : 0;
    float *dak = shaw_per ? c->shaw_partial + task * 2 * shaw_per : NULL, *dav = dak ? dak + shaw_per : NULL;
    if (dak) memset(dak, 0, sizeof(float) * 2 * shaw_per);
    for (int32_t i = 0; i < T; i++) {
        float *row = dS + (size_t)i * (size_t)T;
        const float *p = P + (size_t)i * (size_t)T;
        int32_t keys = a->causal ? i + 1 : T;
        if (dak) { /* the a_V path: dP_ij += dO_i . a_V[idx_ij];  d a_V[idx_ij] += P_ij dO_i */
            const float *doi = dO + (size_t)i * (size_t)C;
            const int32_t *idx = a->shaw_index + ((size_t)b * (size_t)T + (size_t)i) * (size_t)T;
            for (int32_t j = 0; j < keys; j++) {
                const float *av = a->shaw_v + (size_t)idx[j] * (size_t)hd;
                float *g = dav + (size_t)idx[j] * (size_t)hd;
                float d = 0.0f;
                for (int32_t e = 0; e < hd; e++) {
                    d += doi[e] * av[e];
                    g[e] += p[j] * doi[e];
                }
                row[j] += d;
            }
        }
        float dot = 0.0f;
        for (int32_t j = 0; j < keys; j++) dot += p[j] * row[j];
        for (int32_t j = 0; j < keys; j++) row[j] = p[j] * (row[j] - dot);
        int32_t seen = a->causal ? (i / block + 1) * block : T; /* the row block's keys: dq and dk read them */
        for (int32_t j = keys; j < seen && j < T; j++) row[j] = 0.0f;
        if (t5) {
            const int32_t *bk = a->buckets + ((size_t)b * (size_t)T + (size_t)i) * (size_t)T;
            for (int32_t j = 0; j < keys; j++) t5[bk[j]] += row[j];
        }
    }
    for (int32_t r0 = 0; r0 < T; r0 += block) {
        int32_t r1 = r0 + block < T ? r0 + block : T, n = a->causal ? r1 : T;
        lab_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, r1 - r0, hd, n, scale, dS + (size_t)r0 * (size_t)T, T, k,
                  (int)ld, 0.0f, dq + (size_t)r0 * ld, (int)ld);
    }
    if (dak) /* the a_K path: dq_i += scale sum_j dS_ij a_K[idx_ij];  d a_K[idx_ij] += scale dS_ij q_i */
        for (int32_t i = 0; i < T; i++) {
            const float *row = dS + (size_t)i * (size_t)T, *qi = q + (size_t)i * ld;
            float *dqi = dq + (size_t)i * ld;
            const int32_t *idx = a->shaw_index + ((size_t)b * (size_t)T + (size_t)i) * (size_t)T;
            int32_t keys = a->causal ? i + 1 : T;
            for (int32_t j = 0; j < keys; j++) {
                const float *ak = a->shaw_k + (size_t)idx[j] * (size_t)hd;
                float *g = dak + (size_t)idx[j] * (size_t)hd;
                float s = scale * row[j];
                for (int32_t e = 0; e < hd; e++) {
                    dqi[e] += s * ak[e];
                    g[e] += s * qi[e];
                }
            }
        }
    for (int32_t j0 = 0; j0 < T; j0 += block) {
        int32_t j1 = j0 + block < T ? j0 + block : T, from = a->causal ? j0 : 0;
        lab_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, j1 - j0, hd, T - from, scale,
                  dS + (size_t)from * (size_t)T + j0, T, q + (size_t)from * ld, (int)ld, 0.0f, dk + (size_t)j0 * ld,
                  (int)ld);
    }
}

void lab_attention_backward(lab_pool *pool, const lab_attention_args *a, float *dqkv, float *t5_partial,
                            float *shaw_partial, const float *datty, const float *att, const float *qkv) {
    attn_ctx c = {.a = a, .dqkv = dqkv, .t5_partial = t5_partial, .shaw_partial = shaw_partial, .datty = datty,
                  .catt = att, .qkv = qkv};
    lab_pool_run(pool, (size_t)a->B * (size_t)a->H, attention_backward_task, &c);
}

/* ---- GRU (torch gate order r, z, n; reset applied after the hidden matmul) ---- */
static float sigmoidf(float x) { return 1.0f / (1.0f + expf(-x)); }

void lab_gru_forward(float *h, float *gi, float *gh, float *r, float *z, float *nn, const float *x,
                     const float *h0, const float *wih, const float *whh, const float *bih,
                     const float *bhh, int32_t B, int32_t T, int32_t C) {
    size_t C3 = 3 * (size_t)C, hs = ((size_t)T + 1) * (size_t)C;
    size_t n = (size_t)B * (size_t)T;
    lab_matmul_forward(NULL, gi, x, wih, bih, n, C, (int32_t)C3);
    for (int32_t b = 0; b < B; b++) memcpy(h + (size_t)b * hs, h0 + (size_t)b * (size_t)C, sizeof(float) * (size_t)C);
    for (int32_t t = 0; t < T; t++) {
        for (int32_t b = 0; b < B; b++) memcpy(gh + ((size_t)b * (size_t)T + (size_t)t) * C3, bhh, sizeof(float) * C3);
        lab_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, (int)C3, C, 1.0f, h + (size_t)t * (size_t)C, (int)hs,
                    whh, C, 1.0f, gh + (size_t)t * C3, (int)((size_t)T * C3));
        for (int32_t b = 0; b < B; b++) {
            size_t row = (size_t)b * (size_t)T + (size_t)t;
            const float *gir = gi + row * C3, *ghr = gh + row * C3;
            const float *hp = h + (size_t)b * hs + (size_t)t * (size_t)C;
            float *hn = h + (size_t)b * hs + ((size_t)t + 1) * (size_t)C;
            for (int32_t c = 0; c < C; c++) {
                float rv = sigmoidf(gir[c] + ghr[c]);
                float zv = sigmoidf(gir[C + c] + ghr[C + c]);
                float nv = tanhf(gir[2 * C + c] + rv * ghr[2 * C + c]);
                r[row * (size_t)C + (size_t)c] = rv;
                z[row * (size_t)C + (size_t)c] = zv;
                nn[row * (size_t)C + (size_t)c] = nv;
                hn[c] = (1.0f - zv) * nv + zv * hp[c];
            }
        }
    }
}

int lab_gru_backward(float *dx, float *dh0, float *dwih, float *dwhh, float *dbih, float *dbhh,
                      const float *dout, const float *h, const float *gi, const float *gh, const float *r,
                      const float *z, const float *nn, const float *x, const float *wih,
                      const float *whh, int32_t B, int32_t T, int32_t C) {
    (void)gi;
    size_t C3 = 3 * (size_t)C, hs = ((size_t)T + 1) * (size_t)C, n = (size_t)B * (size_t)T;
    float *dgi = calloc(n * C3, sizeof(float)), *dgh = calloc(n * C3, sizeof(float));
    float *dh = calloc((size_t)B * (size_t)C, sizeof(float));
    if (!dgi || !dgh || !dh) {
        free(dgi);
        free(dgh);
        free(dh);
        return -1;
    }
    for (int32_t t = T - 1; t >= 0; t--) {
        for (int32_t b = 0; b < B; b++) {
            size_t row = (size_t)b * (size_t)T + (size_t)t;
            const float *hp = h + (size_t)b * hs + (size_t)t * (size_t)C;
            const float *ghr = gh + row * C3;
            float *dhb = dh + (size_t)b * (size_t)C;
            float *dgir = dgi + row * C3, *dghr = dgh + row * C3;
            for (int32_t c = 0; c < C; c++) {
                size_t e = row * (size_t)C + (size_t)c;
                float g = dhb[c] + dout[e];
                float rv = r[e], zv = z[e], nv = nn[e];
                float dn = g * (1.0f - zv), dz = g * (hp[c] - nv);
                dhb[c] = g * zv; /* direct path to h_{t-1}; matmul path added below */
                float dn_pre = dn * (1.0f - nv * nv);
                float dr_pre = dn_pre * ghr[2 * C + c] * rv * (1.0f - rv);
                float dz_pre = dz * zv * (1.0f - zv);
                dgir[c] = dr_pre;
                dgir[C + c] = dz_pre;
                dgir[2 * C + c] = dn_pre;
                dghr[c] = dr_pre;
                dghr[C + c] = dz_pre;
                dghr[2 * C + c] = dn_pre * rv;
            }
        }
        lab_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, C, (int)C3, 1.0f, dgh + (size_t)t * C3,
                    (int)((size_t)T * C3), whh, C, 1.0f, dh, C);
    }
    memcpy(dh0, dh, sizeof(float) * (size_t)B * (size_t)C);
    for (int32_t b = 0; b < B; b++)
        lab_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)C3, C, T, 1.0f, dgh + (size_t)b * (size_t)T * C3,
                    (int)C3, h + (size_t)b * hs, C, 1.0f, dwhh, C);
    for (size_t o = 0; o < C3; o++) {
        double s = 0.0;
        for (size_t rr = 0; rr < n; rr++) s += dgh[rr * C3 + o];
        dbhh[o] += (float)s;
    }
    memset(dx, 0, sizeof(float) * n * (size_t)C);
    lab_matmul_backward(NULL, dx, dwih, dbih, dgi, x, wih, n, C, (int32_t)C3);
    free(dgi);
    free(dgh);
    free(dh);
    return 0;
}
