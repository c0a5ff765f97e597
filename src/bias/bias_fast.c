/* bias_fast.c: threaded ALiBi and T5 bias generation for range positions.
 *
 * With queries q0.. and keys k0.. both ranges, bias[h][a][b] depends only on
 * the distance d = (k0 + b) - (q0 + a), so each head's [Lq, Lk] plane is a
 * Toeplitz matrix: row a is the slice V_h[Lq-1-a .. Lq-1-a+Lk) of one vector
 * V_h[j] = value(d = D0 + j), D0 = k0 - q0 - (Lq-1), j < Lq + Lk - 1. V_h is
 * computed with the reference formula (ALiBi: alibi.c's bias_value in long
 * double, rounded once; T5: t5_bucket.c's posenc_t5_bucket_of_ then the table lookup), so every
 * output is bit-identical to the element-by-element reference; the fill is a
 * copy from cache, written with streaming stores on the AVX2/AVX-512 paths.
 * Rows (h, a) are split across threads; any split gives the same bytes. */
#include "bias_internal.h"
#include "../common/kernels.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    size_t heads, lq, lk, span; /* span = Lq + Lk - 1 = entries of each V_h */
    float *v;                   /* [heads][span] */
    float *out;
    posenc_kernel_path path;
    /* value sources for V */
    const float *slopes;
    posenc_alibi_form form;
    const int32_t *buckets; /* T5: bucket of each distance, [span] */
    const float *table;     /* T5: [num_buckets][heads] */
    int64_t d0;
} toeplitz_job;

static void alibi_values(void *vjob, size_t worker, size_t begin, size_t end) {
    const toeplitz_job *job = vjob;
    (void)worker;
    for (size_t h = begin; h < end; h++) {
        long double slope = job->slopes[h];
        for (size_t j = 0; j < job->span; j++) {
            long double d = (long double)(job->d0 + (int64_t)j); /* = bias_value in alibi.c */
            job->v[h * job->span + j] = job->form == POSENC_ALIBI_SYMMETRIC ? (float)(-slope * fabsl(d))
                                                                           : (float)(slope * d);
        }
    }
}

static void t5_values(void *vjob, size_t worker, size_t begin, size_t end) {
    const toeplitz_job *job = vjob;
    (void)worker;
    for (size_t h = begin; h < end; h++)
        for (size_t j = 0; j < job->span; j++)
            job->v[h * job->span + j] = job->table[(size_t)job->buckets[j] * job->heads + h];
}

static void fill_rows(void *vjob, size_t worker, size_t begin, size_t end) {
    const toeplitz_job *job = vjob;
    (void)worker;
    for (size_t row = begin; row < end; row++) { /* row = h * Lq + a */
        size_t h = row / job->lq, a = row % job->lq;
        const float *src = job->v + h * job->span + (job->lq - 1 - a);
        float *dst = job->out + row * job->lk;
        if (job->path == POSENC_PATH_AVX512) posenc_stream_copy_f32_avx512_(dst, src, job->lk);
        else if (job->path == POSENC_PATH_AVX2) posenc_stream_copy_f32_avx2_(dst, src, job->lk);
        else memcpy(dst, src, job->lk * sizeof *dst);
    }
    if (job->path != POSENC_PATH_SCALAR) posenc_store_fence_();
}

static posenc_status run_toeplitz(toeplitz_job *job, posenc_range_fn_ values, const posenc_exec *exec,
                                  posenc_error *err) {
    posenc_exec_run_ run;
    FORWARD_IF_ERROR(posenc_exec_run_resolve_(exec, &run, err));
    job->path = run.exec.path;
    size_t count = 0;
    FORWARD_IF_ERROR(posenc_checked_count_(job->heads, job->span, "heads x (Lq + Lk - 1)", &count, err));
    job->v = malloc(count * sizeof *job->v);
    RETURN_ERROR_IF(!job->v, err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %zu bias values", count);
    posenc_parallel_for_(&run, posenc_threads_for_bytes_(&run, count * 64), job->heads, 1, values, job);
    size_t rows = job->heads * job->lq;
    posenc_parallel_for_(&run, posenc_threads_for_bytes_(&run, rows * job->lk * sizeof(float)), rows, 1, fill_rows, job);
    free(job->v);
    return POSENC_OK;
}

static bool is_range(const posenc_positions *p) { return p->ids == NULL && p->values == NULL; }

bool posenc_alibi_bias_fast_(const float *slopes, int32_t heads, posenc_alibi_form form,
                             const posenc_positions *queries, const posenc_positions *keys, float *out,
                             const posenc_exec *exec, posenc_status *status, posenc_error *err) {
    if (!is_range(queries) || !is_range(keys)) return false;
    toeplitz_job job = {(size_t)heads, queries->count, keys->count, queries->count + keys->count - 1, NULL, out,
                        POSENC_PATH_SCALAR, slopes, form, NULL, NULL,
                        keys->start - queries->start - (int64_t)(queries->count - 1)};
    *status = run_toeplitz(&job, alibi_values, exec, err);
    return true;
}

bool posenc_t5_bias_fast_(const posenc_t5_params *params, const float *table, int32_t heads,
                          const posenc_positions *queries, const posenc_positions *keys, float *out,
                          const posenc_exec *exec, posenc_status *status, posenc_error *err) {
    if (!is_range(queries) || !is_range(keys)) return false;
    size_t span = queries->count + keys->count - 1;
    int32_t *buckets = malloc(span * sizeof *buckets);
    if (!buckets) {
        *status = posenc_fail_(err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %zu buckets", span);
        return true;
    }
    int64_t d0 = keys->start - queries->start - (int64_t)(queries->count - 1);
    for (size_t j = 0; j < span; j++) buckets[j] = posenc_t5_bucket_of_(params, d0 + (int64_t)j);
    toeplitz_job job = {(size_t)heads, queries->count, keys->count, span, NULL, out,
                        POSENC_PATH_SCALAR, NULL, POSENC_ALIBI_CAUSAL, buckets, table, d0};
    *status = run_toeplitz(&job, t5_values, exec, err);
    free(buckets);
    return true;
}
