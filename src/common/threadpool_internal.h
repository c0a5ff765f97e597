/* threadpool_internal.h: what exec.c's posenc_parallel_for_ needs of a pool. */
#ifndef POSENC_THREADPOOL_INTERNAL_H
#define POSENC_THREADPOOL_INTERNAL_H

#include "kernels.h"

/* A pool job's body: worker 0 is the caller, worker i helper i - 1. */
typedef void (*posenc_worker_fn_)(void *ctx, size_t worker);

/* Run fn(ctx, 0) on the caller and fn(ctx, i) on helper i - 1 for i < workers
 * (workers <= pool size); returns when all are done. */
void posenc_threadpool_run_(posenc_threadpool *pool, size_t workers, posenc_worker_fn_ fn, void *ctx);

#endif
