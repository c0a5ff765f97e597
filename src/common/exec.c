/* exec.c: execution options (kernel path, threads) and the row-splitting
 * thread helper, on top of cpu.c's probes and threadpool.c's workers. No
 * global mutable state: every call resolves its own options; the environment
 * is only read. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "kernels.h"
#include "threadpool_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void posenc_exec_default(posenc_exec *exec) {
    if (!exec) return;
    exec->threads = 0;
    exec->path = POSENC_PATH_AUTO;
    exec->pool = NULL;
    exec->trace = NULL;
}

static const char *const path_names[] = {"auto", "scalar", "avx2", "avx512"};

const char *posenc_kernel_path_name(posenc_kernel_path path) {
    return (unsigned)path < 4 ? path_names[path] : "?";
}

posenc_status posenc_kernel_path_parse(const char *name, posenc_kernel_path *out,
                                       posenc_error *err) {
    RETURN_IF_NULL(name, err);
    RETURN_IF_NULL(out, err);
    for (int i = 0; i < 4; i++)
        if (strcmp(name, path_names[i]) == 0) {
            *out = (posenc_kernel_path)i;
            return posenc_ok_(err);
        }
    return posenc_fail_(err, POSENC_ERR_INVALID_ARGUMENT,
                        "kernel path must be auto, scalar, avx2 or avx512, got '%s'", name);
}

posenc_status posenc_exec_resolve_(const posenc_exec *exec, posenc_exec *out, bool *exact_threads,
                                   posenc_error *err) {
    RETURN_IF_NULL(out, err);
    *exact_threads = false;
    posenc_exec e;
    posenc_exec_default(&e);
    if (exec) e = *exec;
    RETURN_ERROR_IF(e.threads < 0 || e.threads > POSENC_MAX_THREADS, err,
                    POSENC_ERR_INVALID_ARGUMENT, "threads must be 0 (auto) or 1..%d, got %d",
                    POSENC_MAX_THREADS, (int)e.threads);
    RETURN_ERROR_IF((unsigned)e.path > POSENC_PATH_AVX512, err, POSENC_ERR_INVALID_ARGUMENT,
                    "unknown kernel path %d", (int)e.path);
    if (e.path == POSENC_PATH_AUTO) {
        const char *env = getenv("POSENC_KERNEL_PATH");
        if (env && *env) {
            posenc_kernel_path p;
            RETURN_ERROR_IF(posenc_kernel_path_parse(env, &p, NULL) != POSENC_OK, err,
                            POSENC_ERR_INVALID_ARGUMENT,
                            "POSENC_KERNEL_PATH must be auto, scalar, avx2 or avx512, got '%s'",
                            env);
            e.path = p;
        }
    }
    if (e.path == POSENC_PATH_AUTO) {
        e.path = posenc_kernel_path_supported(POSENC_PATH_AVX512) ? POSENC_PATH_AVX512
                 : posenc_kernel_path_supported(POSENC_PATH_AVX2) ? POSENC_PATH_AVX2
                                                                   : POSENC_PATH_SCALAR;
    }
    RETURN_ERROR_IF(!posenc_kernel_path_supported(e.path), err, POSENC_ERR_UNSUPPORTED,
                    "kernel path %s is not supported by this CPU or build",
                    posenc_kernel_path_name(e.path));
    if (e.threads == 0) {
        const char *env = getenv("POSENC_THREADS");
        if (env && *env) {
            char *end = NULL;
            long n = strtol(env, &end, 10);
            RETURN_ERROR_IF(*end != '\0' || n < 1 || n > POSENC_MAX_THREADS, err,
                            POSENC_ERR_INVALID_ARGUMENT,
                            "POSENC_THREADS must be an integer in 1..%d, got '%s'",
                            POSENC_MAX_THREADS, env);
            e.threads = (int32_t)n;
            *exact_threads = true;
        } else {
            e.threads = e.pool ? posenc_threadpool_size(e.pool) : posenc_cpu_count();
        }
    }
    *out = e;
    return posenc_ok_(err);
}

posenc_status posenc_exec_resolve(const posenc_exec *exec, posenc_exec *out, posenc_error *err) {
    bool exact;
    return posenc_exec_resolve_(exec, out, &exact, err);
}

int32_t posenc_threads_for_bytes_(const posenc_exec_run_ *run, size_t bytes) {
    int32_t threads = run->exec.threads;
    if (run->exact_threads) return threads;
    size_t most = bytes / ((size_t)256 << 10);
    if (most < 1) most = 1;
    return (size_t)threads > most ? (int32_t)most : threads;
}

/* ---- the parallel loop ---------------------------------------------------- */

/* Pieces per thread: workers claim pieces from a shared counter instead of
 * owning a fixed 1/n of the rows, so a worker that starts late (a pool
 * wake-up costs ~40-90 us on this VM) or runs slower (its vCPU shared with the
 * host) takes fewer pieces instead of making the others wait. Measured on the
 * 2-vCPU machine (docs/kernels.md, "Two threads"): with halves, T5 bias
 * workers ran 15.3 and 8.8 ms and the faster waited 6.5 ms. 8 keeps a
 * piece's tail wait under 1/8 of a share while a piece stays many rows. */
#define PIECES_PER_THREAD 8

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* One loop's pieces: piece i is rows [blocks * i / pieces, blocks * (i + 1) / pieces)
 * x grain, clipped to count. Boundaries fall on whole blocks of `grain`, so a
 * kernel whose rows depend only on their block gives the same bytes for any
 * claiming order, thread count or timing. */
typedef struct {
    posenc_range_fn_ fn;
    void *ctx;
    size_t count, grain, blocks, pieces;
    _Atomic size_t next;
    posenc_exec_trace *trace; /* NULL, or each worker's first claim, last piece's end, rows */
} claimed_loop;

static void run_claimed(void *vloop, size_t worker) {
    claimed_loop *loop = vloop;
    int64_t t0 = loop->trace ? now_ns() : 0;
    size_t rows = 0;
    for (;;) {
        size_t i = atomic_fetch_add_explicit(&loop->next, 1, memory_order_relaxed);
        if (i >= loop->pieces) break;
        size_t b = loop->blocks * i / loop->pieces * loop->grain;
        size_t e = loop->blocks * (i + 1) / loop->pieces * loop->grain;
        if (e > loop->count) e = loop->count;
        loop->fn(loop->ctx, worker, b, e);
        rows += e - b;
    }
    /* each worker writes only its own slots; the submitter reads them after the join */
    if (loop->trace && worker < POSENC_TRACE_MAX_CHUNKS) {
        loop->trace->start_ns[worker] = t0;
        loop->trace->end_ns[worker] = now_ns();
        loop->trace->items[worker] = rows;
    }
}

typedef struct {
    claimed_loop *loop;
    size_t worker;
} spawned_worker;

static void *run_spawned(void *arg) {
    const spawned_worker *w = arg;
    run_claimed(w->loop, w->worker);
    return NULL;
}

void posenc_parallel_for_(const posenc_exec_run_ *run, int32_t threads, size_t count, size_t grain,
                          posenc_range_fn_ fn, void *ctx) {
    if (count == 0) return;
    posenc_exec_trace *trace = run ? run->exec.trace : NULL;
    if (trace) {
        memset(trace, 0, sizeof *trace);
        trace->submit_ns = now_ns();
    }
    if (grain == 0) grain = 1;
    size_t blocks = (count + grain - 1) / grain;
    size_t n = threads < 1 ? 1 : (size_t)threads;
    posenc_threadpool *pool = run ? run->exec.pool : NULL;
    if (pool && n > (size_t)posenc_threadpool_size(pool)) n = (size_t)posenc_threadpool_size(pool);
    if (n > blocks) n = blocks;
    if (n > POSENC_MAX_THREADS) n = POSENC_MAX_THREADS;
    size_t pieces = n == 1 ? 1 : n * PIECES_PER_THREAD < blocks ? n * PIECES_PER_THREAD : blocks;
    claimed_loop loop = {fn, ctx, count, grain, blocks, pieces, 0, trace};
    if (trace) {
        trace->chunks = (int32_t)n;
        trace->pooled = pool && n > 1;
    }
    if (n == 1) {
        run_claimed(&loop, 0);
    } else if (pool) {
        posenc_threadpool_run_(pool, n, run_claimed, &loop);
    } else {
        spawned_worker parts[POSENC_MAX_THREADS];
        pthread_t ids[POSENC_MAX_THREADS];
        bool started[POSENC_MAX_THREADS] = {false};
        for (size_t t = 0; t < n; t++) parts[t] = (spawned_worker){&loop, t};
        for (size_t t = 1; t < n; t++) started[t] = pthread_create(&ids[t], NULL, run_spawned, &parts[t]) == 0;
        run_spawned(&parts[0]);
        /* a thread that did not start leaves its pieces to the others: same results */
        for (size_t t = 1; t < n; t++)
            if (started[t]) pthread_join(ids[t], NULL);
        if (trace)
            for (size_t t = 1; t < n && t < POSENC_TRACE_MAX_CHUNKS; t++)
                if (!started[t]) trace->start_ns[t] = trace->end_ns[t] = trace->submit_ns;
    }
    if (trace) trace->done_ns = now_ns();
}
