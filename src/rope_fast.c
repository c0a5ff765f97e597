/* rope_fast.c: the threaded, vectorized driver behind every in-place RoPE
 * apply (rope.c validates, then calls rope_apply_fast_).
 *
 * cos/sin per (token, pair) are computed once per token and reused across its
 * heads. For a contiguous run of positions in precise mode they come from the
 * rotation scheme of the sinusoid fast path: tokens are cut in blocks of
 * ROPE_BLOCK starting at the call's first token (the thread grain, so the split
 * never changes a value); a block starts from the double-double (sin, cos) of
 * its first position (sincos_dd.h), every ROPE_ANCHOR tokens that double-double
 * is rotated by ANCHOR*w_k, and the tokens in between by a double rotation by
 * w_k (drift < 64 * 2.3e-16, far below half an f32 ULP of any |value| > 2^-20).
 * Other positions (or |p| >= 2^53, |p w| >= 2^40) and TORCH_COMPAT mode take
 * rope_token_cos_sin_ per token. The cos/sin code is the same on every path;
 * the rotation kernels (scalar rope_apply.c, rope_avx2.c, rope_avx512.c) give
 * the same bits, so results do not depend on the path or the thread count. */
#include "kernels.h"
#include "rope_fast.h"
#include "sincos_dd.h"

#include <stdlib.h>
#include <string.h>

#define ROPE_BLOCK 512
#define ROPE_ANCHOR 64

void rope_rotate_pairs_f32_(float *v, int32_t pairs, int32_t first_pair, posenc_layout layout,
                            const float *cos_k, const float *sin_k) {
    for (int32_t k = first_pair; k < pairs; k++) { /* same operations as rope_rotate_token_f32_ */
        float *pa = layout == POSENC_LAYOUT_HALF ? v + k : v + 2 * k;
        float *pb = layout == POSENC_LAYOUT_HALF ? v + pairs + k : v + 2 * k + 1;
        float a = *pa, b = *pb, c = cos_k[k], s = sin_k[k];
        float ac = a * c, bs = b * s, bc = b * c, as = a * s;
        *pa = ac - bs;
        *pb = bc + as;
    }
}

void rope_rotate_pairs_bf16_(uint16_t *v, int32_t pairs, int32_t first_pair, posenc_layout layout,
                             const float *cos_k, const float *sin_k) {
    for (int32_t k = first_pair; k < pairs; k++) {
        uint16_t *pa = layout == POSENC_LAYOUT_HALF ? v + k : v + 2 * k;
        uint16_t *pb = layout == POSENC_LAYOUT_HALF ? v + pairs + k : v + 2 * k + 1;
        float a = posenc_bf16_to_f32(*pa), b = posenc_bf16_to_f32(*pb), c = cos_k[k], s = sin_k[k];
        float ac = a * c, bs = b * s, bc = b * c, as = a * s;
        *pa = posenc_f32_to_bf16(ac - bs);
        *pb = posenc_f32_to_bf16(bc + as);
    }
}

/* Scalar f16/bf16: widen the rotary channels, rotate in f32, round once. */
static void rotate_token_16_scalar(void *x, size_t heads, size_t head_stride, int32_t pairs,
                                   posenc_layout layout, const float *c, const float *s,
                                   float *scratch, bool f16) {
    size_t r = 2 * (size_t)pairs;
    for (size_t h = 0; h < heads; h++) {
        uint16_t *v = (uint16_t *)x + h * head_stride;
        for (size_t i = 0; i < r; i++) scratch[i] = f16 ? posenc_f16_to_f32(v[i]) : posenc_bf16_to_f32(v[i]);
        rope_rotate_token_f32_(scratch, 1, r, pairs, layout, c, s);
        for (size_t i = 0; i < r; i++) v[i] = f16 ? posenc_f32_to_f16(scratch[i]) : posenc_f32_to_bf16(scratch[i]);
    }
}

typedef struct {
    const rope_plan_ *plan;
    posenc_layout layout;
    const posenc_rope_view *view;
    const int64_t *positions;
    int inverse;
    bool unit;
    rope_data_kind_ kind;
    void *x;
    posenc_kernel_path path;
    bool recur;                     /* contiguous positions in precise mode */
    double first;                   /* position of token 0 when recur */
    double scale_c, scale_s;        /* cos/sin multipliers (inverse: 1/a and -1/a) */
    const double *w_hi, *w_lo;      /* w_k as double-doubles */
    posenc_dd_sincos_ rot;          /* (sin, cos)(ANCHOR * w_k), double-double */
    const double *step_s, *step_c;  /* sin w_k, cos w_k */
    char *scratch;                  /* per worker, worker_bytes each */
    size_t worker_bytes;
} rope_job;

static void rotate_token(const rope_job *job, void *row, const float *c, const float *s, float *dup) {
    const posenc_rope_view *v = job->view;
    int32_t pairs = job->plan->pairs;
    if (job->kind == ROPE_DATA_F16 || job->path == POSENC_PATH_SCALAR) {
        if (job->kind == ROPE_DATA_F32)
            rope_rotate_token_f32_(row, v->heads, v->head_stride, pairs, job->layout, c, s);
        else
            rotate_token_16_scalar(row, v->heads, v->head_stride, pairs, job->layout, c, s, dup,
                                   job->kind == ROPE_DATA_F16);
        return;
    }
    if (job->layout == POSENC_LAYOUT_INTERLEAVED) /* (c, c) and (-s, +s) per pair, for whole vectors */
        for (int32_t k = 0; k < pairs; k++) {
            dup[2 * k] = dup[2 * k + 1] = c[k];
            dup[2 * pairs + 2 * k] = -s[k];
            dup[2 * pairs + 2 * k + 1] = s[k];
        }
    bool bf16 = job->kind == ROPE_DATA_BF16;
    if (job->path == POSENC_PATH_AVX512) {
        if (bf16) rope_rotate_token_bf16_avx512_(row, v->heads, v->head_stride, pairs, job->layout, c, s, dup);
        else rope_rotate_token_f32_avx512_(row, v->heads, v->head_stride, pairs, job->layout, c, s, dup);
    } else {
        if (bf16) rope_rotate_token_bf16_avx2_(row, v->heads, v->head_stride, pairs, job->layout, c, s, dup);
        else rope_rotate_token_f32_avx2_(row, v->heads, v->head_stride, pairs, job->layout, c, s, dup);
    }
}

static void rope_worker(void *vjob, size_t worker, size_t begin, size_t end) {
    const rope_job *job = vjob;
    const int32_t pairs = job->plan->pairs;
    const size_t P = (size_t)pairs;
    char *mem = job->scratch + worker * job->worker_bytes;
    double *dd = (double *)mem, *run_s = dd + 4 * P, *run_c = run_s + P;
    posenc_dd_sincos_ anchor = {dd, dd + P, dd + 2 * P, dd + 3 * P};
    float *c = (float *)(run_c + P), *s = c + P, *dup = s + P; /* dup: 4 * pairs */
    size_t elem = job->kind == ROPE_DATA_F32 ? 4 : 2;
    for (size_t b = begin; b < end; b += ROPE_BLOCK) {
        size_t block_end = b + ROPE_BLOCK < end ? b + ROPE_BLOCK : end;
        if (job->recur) /* exact: |first + b| < 2^53 checked */
            posenc_sincos_dd_(job->path, P, job->first + (double)b, job->w_hi, job->w_lo, &anchor);
        for (size_t t = b; t < block_end; t++) {
            if (job->recur) {
                bool at_anchor = (t - b) % ROPE_ANCHOR == 0;
                if (at_anchor && t != b) posenc_rotate_dd_(job->path, P, &anchor, &job->rot);
                for (int32_t k = 0; k < pairs; k++) {
                    if (at_anchor) { /* hi = the double-double rounded to double */
                        run_s[k] = anchor.s_hi[k];
                        run_c[k] = anchor.c_hi[k];
                    } else {
                        double ns = run_s[k] * job->step_c[k] + run_c[k] * job->step_s[k];
                        run_c[k] = run_c[k] * job->step_c[k] - run_s[k] * job->step_s[k];
                        run_s[k] = ns;
                    }
                    c[k] = (float)(run_c[k] * job->scale_c);
                    s[k] = (float)(run_s[k] * job->scale_s);
                }
            } else {
                long double pos = job->positions ? (long double)job->positions[t] : (long double)t;
                rope_token_cos_sin_(job->plan, pos, job->inverse, job->unit, c, s);
            }
            rotate_token(job, (char *)job->x + t * job->view->row_stride * elem, c, s, dup);
        }
    }
}

posenc_status rope_apply_fast_(const rope_plan_ *plan, posenc_layout layout, const posenc_rope_view *view,
                               const int64_t *positions, int inverse, bool unit, rope_data_kind_ kind,
                               void *x, const posenc_exec *exec, posenc_error *err) {
    posenc_exec_run_ run;
    FORWARD_IF_ERROR(posenc_exec_run_resolve_(exec, &run, err));
    if (view->tokens == 0) return POSENC_OK;
    const size_t P = (size_t)plan->pairs;
    rope_job job = {plan, layout, view, positions, inverse, unit, kind, x, run.exec.path, false, 0, 1, 1,
                    NULL, NULL, {NULL, NULL, NULL, NULL}, NULL, NULL, NULL, 0};
    job.recur = plan->mode == POSENC_MODE_PRECISE;
    for (size_t t = 1; job.recur && positions && t < view->tokens; t++)
        job.recur = positions[t] == positions[0] + (int64_t)t;
    if (job.recur) { /* the double-double anchors need |p| < 2^53 and |p w| < 2^40 */
        long double first = positions ? (long double)positions[0] : 0.0L, top = 0;
        long double last = first + (long double)(view->tokens - 1);
        long double most = fabsl(first) > fabsl(last) ? fabsl(first) : fabsl(last);
        for (size_t k = 0; k < P; k++)
            if (fabsl(plan->inv[k]) > top) top = fabsl(plan->inv[k]);
        job.recur = most < 0x1p53L && most * top < (long double)POSENC_SINCOS_DD_MAX_ANGLE;
        job.first = (double)first;
    }
    double a = unit ? 1.0 : plan->attention;
    job.scale_c = inverse ? 1.0 / a : a;
    job.scale_s = inverse ? -1.0 / a : a; /* sin(-x) = -sin(x) exactly */
    size_t bytes = view->tokens * view->heads * 2 * P * (kind == ROPE_DATA_F32 ? 4 : 2);
    int32_t threads = posenc_threads_for_bytes_(&run, bytes);
    size_t blocks = (view->tokens + ROPE_BLOCK - 1) / ROPE_BLOCK;
    if ((size_t)threads > blocks && job.recur) threads = (int32_t)blocks;
    /* per worker: anchor (double-double, 4P), run_s, run_c (double), c, s, dup (f32 x 6P) */
    job.worker_bytes = 6 * sizeof(double) * P + 6 * sizeof(float) * P + 64;
    job.worker_bytes = (job.worker_bytes + 63) / 64 * 64;
    size_t shared = 10 * sizeof(double) * P; /* w_hi, w_lo, rot (4P), step_s, step_c, spare (2P) */
    char *mem = malloc(shared + job.worker_bytes * (size_t)threads);
    RETURN_ERROR_IF(!mem, err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate RoPE scratch for %zu pairs", P);
    double *d = (double *)mem, *w_hi = d, *w_lo = d + P, *step_s = d + 6 * P, *step_c = d + 7 * P;
    if (job.recur) {
        for (size_t k = 0; k < P; k++) {
            w_hi[k] = (double)plan->inv[k];
            w_lo[k] = (double)(plan->inv[k] - (long double)w_hi[k]);
        }
        job.rot = (posenc_dd_sincos_){d + 2 * P, d + 3 * P, d + 4 * P, d + 5 * P};
        posenc_sincos_dd_(job.path, P, ROPE_ANCHOR, w_hi, w_lo, &job.rot);
        posenc_dd_sincos_ step = {step_s, d + 8 * P, step_c, d + 9 * P}; /* lo parts unused */
        posenc_sincos_dd_(job.path, P, 1.0, w_hi, w_lo, &step);
    }
    job.w_hi = w_hi;
    job.w_lo = w_lo;
    job.step_s = step_s;
    job.step_c = step_c;
    job.scratch = mem + shared;
    posenc_parallel_for_(&run, threads, view->tokens, job.recur ? ROPE_BLOCK : 16, rope_worker, &job);
    free(mem);
    return POSENC_OK;
}

posenc_status posenc_rope_apply_exec(const posenc_rope_params *params, int64_t seq_len, posenc_layout layout,
                                     const posenc_rope_view *view, const int64_t *positions, int inverse,
                                     posenc_dtype dtype, void *x, size_t x_count, const posenc_exec *exec,
                                     posenc_error *err) {
    RETURN_ERROR_IF(dtype != POSENC_DTYPE_F32 && dtype != POSENC_DTYPE_F16 && dtype != POSENC_DTYPE_BF16, err,
                    POSENC_ERR_INVALID_ARGUMENT, "RoPE data dtype must be f32, f16 or bf16, got %s",
                    posenc_dtype_name(dtype));
    RETURN_ERROR_IF(layout != POSENC_LAYOUT_INTERLEAVED && layout != POSENC_LAYOUT_HALF, err,
                    POSENC_ERR_INVALID_ARGUMENT, "unknown layout %d", (int)layout);
    rope_plan_ plan;
    FORWARD_IF_ERROR(rope_plan_create_(params, seq_len, &plan, err));
    posenc_status st = rope_check_view_(view, plan.head_dim, x_count, err);
    if (st == POSENC_OK && view->tokens > 0 && !x) st = posenc_fail_(err, POSENC_ERR_NULL_POINTER, "x must not be NULL");
    rope_data_kind_ kind = dtype == POSENC_DTYPE_F32 ? ROPE_DATA_F32 : dtype == POSENC_DTYPE_F16 ? ROPE_DATA_F16
                                                                                                : ROPE_DATA_BF16;
    if (st == POSENC_OK) st = rope_apply_fast_(&plan, layout, view, positions, inverse, false, kind, x, exec, err);
    rope_plan_free_(&plan);
    return st == POSENC_OK ? posenc_ok_(err) : st;
}
