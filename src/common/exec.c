/* exec.c: execution options (kernel path, threads), the CPU probe and the
 * row-splitting thread helper. No global mutable state: every call resolves
 * its own options; the environment is only read. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "kernels.h"
#include "threadpool_internal.h"

#include <pthread.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

int posenc_kernel_path_supported(posenc_kernel_path path) {
    switch (path) {
    case POSENC_PATH_AUTO:
    case POSENC_PATH_SCALAR: return 1;
#if defined(__x86_64__) && defined(__GNUC__)
    case POSENC_PATH_AVX2: {
        /* F16C (f16 RoPE) is on every AVX2 CPU; asked through cpuid because
         * clang 14's __builtin_cpu_supports does not know "f16c" */
        unsigned eax, ebx, ecx = 0, edx;
        bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C);
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && f16c;
    }
    case POSENC_PATH_AVX512:
        __builtin_cpu_init();
        return posenc_kernel_path_supported(POSENC_PATH_AVX2) &&
               __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
#endif
    default: return 0;
    }
}

int32_t posenc_cpu_count(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) return 1;
    return n > POSENC_MAX_THREADS ? POSENC_MAX_THREADS : (int32_t)n;
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

typedef struct {
    posenc_range_fn_ fn;
    void *ctx;
    posenc_chunk_ part;
} spawned_chunk;

static void *run_spawned(void *arg) {
    spawned_chunk *c = arg;
    c->fn(c->ctx, c->part.worker, c->part.begin, c->part.end);
    return NULL;
}

/* ---- the per-thread timeline (posenc_exec_trace) ---- */

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

typedef struct {
    posenc_range_fn_ fn;
    void *ctx;
    posenc_exec_trace *trace;
} traced_job;

/* Each worker writes only its own slots; the submitter reads them after the
 * join or the pool's completion handshake. */
static void run_traced(void *vjob, size_t worker, size_t begin, size_t end) {
    const traced_job *job = vjob;
    int64_t t0 = now_ns();
    job->fn(job->ctx, worker, begin, end);
    int64_t t1 = now_ns();
    if (worker < POSENC_TRACE_MAX_CHUNKS) {
        job->trace->start_ns[worker] = t0;
        job->trace->end_ns[worker] = t1;
        job->trace->items[worker] = end - begin;
    }
}

static void parallel_for_untraced(const posenc_exec_run_ *run, int32_t threads, size_t count, size_t grain,
                                  posenc_range_fn_ fn, void *ctx, posenc_exec_trace *trace);

void posenc_parallel_for_(const posenc_exec_run_ *run, int32_t threads, size_t count, size_t grain,
                          posenc_range_fn_ fn, void *ctx) {
    posenc_exec_trace *trace = run ? run->exec.trace : NULL;
    if (!trace || count == 0) {
        parallel_for_untraced(run, threads, count, grain, fn, ctx, NULL);
        return;
    }
    memset(trace, 0, sizeof *trace);
    traced_job job = {fn, ctx, trace};
    trace->submit_ns = now_ns();
    parallel_for_untraced(run, threads, count, grain, run_traced, &job, trace);
    trace->done_ns = now_ns();
}

static void parallel_for_untraced(const posenc_exec_run_ *run, int32_t threads, size_t count, size_t grain,
                                  posenc_range_fn_ fn, void *ctx, posenc_exec_trace *trace) {
    if (count == 0) return;
    if (grain == 0) grain = 1;
    size_t blocks = (count + grain - 1) / grain;
    size_t n = threads < 1 ? 1 : (size_t)threads;
    posenc_threadpool *pool = run ? run->exec.pool : NULL;
    if (pool && n > (size_t)posenc_threadpool_size(pool)) n = (size_t)posenc_threadpool_size(pool);
    if (n > blocks) n = blocks;
    if (n > POSENC_MAX_THREADS) n = POSENC_MAX_THREADS;
    if (trace) {
        trace->chunks = (int32_t)n;
        trace->pooled = pool && n > 1;
    }
    if (n == 1) {
        fn(ctx, 0, 0, count);
        return;
    }
    posenc_chunk_ parts[POSENC_MAX_THREADS] = {{0}};
    for (size_t t = 0; t < n; t++) {
        size_t b0 = blocks * t / n, b1 = blocks * (t + 1) / n;
        parts[t] = (posenc_chunk_){t, b0 * grain, b1 * grain < count ? b1 * grain : count};
    }
    if (pool) {
        posenc_threadpool_run_(pool, parts, n, fn, ctx);
        return;
    }
    spawned_chunk chunks[POSENC_MAX_THREADS] = {{0}};
    pthread_t ids[POSENC_MAX_THREADS];
    bool started[POSENC_MAX_THREADS];
    for (size_t t = 0; t < n; t++) chunks[t] = (spawned_chunk){fn, ctx, parts[t]};
    for (size_t t = 1; t < n; t++)
        started[t] = pthread_create(&ids[t], NULL, run_spawned, &chunks[t]) == 0;
    run_spawned(&chunks[0]);
    for (size_t t = 1; t < n; t++) {
        if (started[t]) pthread_join(ids[t], NULL);
        else run_spawned(&chunks[t]); /* degrade to fewer threads, same results */
    }
}
