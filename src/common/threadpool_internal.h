/* threadpool_internal.h: what exec.c's posenc_parallel_for_ needs of a pool. */
#ifndef POSENC_THREADPOOL_INTERNAL_H
#define POSENC_THREADPOOL_INTERNAL_H

#include "kernels.h"

/* One contiguous piece of a posenc_parallel_for_ job. */
typedef struct {
    size_t worker, begin, end;
} posenc_chunk_;

/* Run chunks[0] on the caller and chunks[i] on helper i - 1 (count <= pool
 * size); returns when all are done. */
void posenc_threadpool_run_(posenc_threadpool *pool, const posenc_chunk_ *chunks, size_t count,
                            posenc_range_fn_ fn, void *ctx);

#endif
