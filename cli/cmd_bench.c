/* cmd_bench.c: `posenc bench`: time posenc's kernels, the machine's memset and
 * memcpy bandwidth, and the Python peers (NumPy, PyTorch) in one run, and print
 * a table of ratios. Timings are medians of --reps runs after one warm-up.
 * The memory group runs analyze / diff / signal on large tables as child
 * processes and reports each one's peak RSS (issue 13.10). */
#define _GNU_SOURCE /* popen, clock_gettime, madvise under -std=c11 */
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#ifndef POSENC_BENCH_PEERS_DEFAULT
#define POSENC_BENCH_PEERS_DEFAULT "bench/peers.py"
#endif

static const cli_option bench_options[] = {
    {"only", "LIST", "comma list of groups: sinusoid,rope,bias,memory,identify,decode (default all); \"lab\" alone: the training "
                     "lab (cli/lab/cmd_lab.c)"},
    {"threads", "LIST", "comma list of thread counts, default 1,2"},
    {"reps", "N", "timed repetitions per measurement (median reported), >= 5, default 7"},
    {"path", "P", "kernel path: auto (default) | scalar | avx2 | avx512"},
    {"no-peers", NULL, "skip the Python peers"},
    {"python", "EXE", "interpreter for the peers (torch 2.13, numpy), default $POSENC_PYTHON, else python3"},
    {"peers-script", "FILE", "peer script, default the source tree's bench/peers.py"},
    {"mem-mib", "N", "buffer size for memset/memcpy bandwidth, default 256"},
    {"memory-rows", "N", "memory group: rows of its [N x 1024] float32 tables, default 50000 (205 MB each, "
                         "4 files in a temporary folder)"},
    {"identify-rows", "N", "identify group: rows of its [N x 128] caches, default 131072"},
    {"timeline", NULL, "after the table, one traced run per kernel and thread count > 1: each worker's start "
                       "latency, work and wait (posenc_exec.trace)"},
    {NULL, NULL, NULL}};

enum { MEM_WRITE = 0, MEM_READ_WRITE = 1 };
enum { ALLOC_REUSE = 0, ALLOC_FRESH = 1, ALLOC_HUGE = 2 };

typedef struct bench_case bench_case;
struct bench_case {
    const char *group;    /* for --only */
    const char *name;     /* row label */
    size_t bytes;         /* size of the buffer the kernel writes (or updates in place) */
    int memory;           /* MEM_WRITE: GB/s = bytes/t; MEM_READ_WRITE: GB/s = 2*bytes/t */
    int alloc;            /* buffer reused (pre-faulted) or allocated fresh each run */
    posenc_status (*run)(const bench_case *c, void *state, void *buf, const posenc_exec *exec, posenc_error *err);
    int variant;          /* kernel-specific selector (layout, dtype) */
    const char *peers[3]; /* peers.py workload names, NULL-terminated */
    /* optional: what the calls share, made once before the repetitions (NULL
     * with err filled on failure) and freed after them: a plan */
    void *(*prepare)(const posenc_exec *exec, posenc_error *err);
    void (*release)(void *state);
};

/* ---- kernels under test ----------------------------------------------- */

static posenc_status run_sinusoid(const bench_case *c, void *state, void *buf, const posenc_exec *exec,
                                  posenc_error *err) {
    (void)c;
    if (state) return posenc_sinusoid_plan_table(state, POSENC_DTYPE_F32, buf, (size_t)8192 * 1024, exec, err);
    posenc_sinusoid_params p;
    posenc_sinusoid_params_default(&p, 1024);
    posenc_positions pos = posenc_positions_range(0, 8192);
    return posenc_sinusoid_table_exec(&p, &pos, POSENC_DTYPE_F32, buf, (size_t)8192 * 1024, exec, err);
}

/* q [tokens][32 heads][128] in place, base 10000, positions ids (NULL: 0..tokens-1).
 * variant bit 0: half-split layout; bit 1: bf16 data; bit 2: f16 data. */
static posenc_status rotate_q(const bench_case *c, void *buf, size_t tokens, const int64_t *ids,
                              const posenc_exec *exec, posenc_error *err) {
    posenc_rope_params p;
    posenc_rope_params_default(&p, 128);
    posenc_rope_view v = posenc_rope_view_contiguous(tokens, 32, 128);
    return posenc_rope_apply_exec(&p, 0, (c->variant & 1) ? POSENC_LAYOUT_HALF : POSENC_LAYOUT_INTERLEAVED, &v,
                                  ids, 0,
                                  (c->variant & 4)   ? POSENC_DTYPE_F16
                                  : (c->variant & 2) ? POSENC_DTYPE_BF16
                                                     : POSENC_DTYPE_F32,
                                  buf, tokens * 32 * 128, exec, err);
}

/* the RoPE rows: q [4096][32][128], positions 0..4095 */
static posenc_status run_rope(const bench_case *c, void *state, void *buf, const posenc_exec *exec,
                              posenc_error *err) {
    (void)state;
    return rotate_q(c, buf, 4096, NULL, exec, err);
}

/* [32 heads][2048 queries][2048 keys] f32, queries = keys = 0..2047.
 * variant 0: ALiBi causal form with BLOOM's 32-head slopes; 1: T5 bidirectional
 * (32 buckets, max distance 128) with a fixed table. */
static posenc_status run_bias(const bench_case *c, void *state, void *buf, const posenc_exec *exec,
                              posenc_error *err) {
    (void)state;
    float slopes[32], table[32 * 32];
    posenc_positions pos = posenc_positions_range(0, 2048);
    size_t n = (size_t)32 * 2048 * 2048;
    if (c->variant == 0) {
        posenc_status st = posenc_alibi_slopes_f32(32, 8.0, 0, 0, POSENC_MODE_PRECISE, slopes, 32, err);
        if (st != POSENC_OK) return st;
        return posenc_alibi_bias_f32_exec(slopes, 32, POSENC_ALIBI_CAUSAL, &pos, &pos, buf, n, exec, err);
    }
    for (int i = 0; i < 32 * 32; i++) table[i] = (float)(i % 97) * 0.01f - 0.5f;
    posenc_t5_params p;
    posenc_t5_params_default(&p);
    return posenc_t5_bias_f32_exec(&p, table, 32, &pos, &pos, buf, n, exec, err);
}

/* the sinusoid row's plan (posenc_sinusoid_plan): frequencies and anchors once */
static void *prepare_sinusoid_plan(const posenc_exec *exec, posenc_error *err) {
    posenc_sinusoid_params p;
    posenc_sinusoid_params_default(&p, 1024);
    posenc_positions pos = posenc_positions_range(0, 8192);
    posenc_sinusoid_plan *plan = NULL;
    return posenc_sinusoid_plan_create(&p, &pos, exec, &plan, err) == POSENC_OK ? plan : NULL;
}
static void release_sinusoid_plan(void *plan) { posenc_sinusoid_plan_free(plan); }

static const bench_case cases[] = {
    {"sinusoid", "sinusoid 8192x1024 f32 (buffer reused)", (size_t)32 << 20, MEM_WRITE, ALLOC_REUSE,
     run_sinusoid, 0, {"sin_numpy_f64", "sin_numpy_f32", "sin_torch"}, NULL, NULL},
    {"sinusoid", "sinusoid 8192x1024 f32 (buffer reused, planned)", (size_t)32 << 20, MEM_WRITE, ALLOC_REUSE,
     run_sinusoid, 0, {NULL}, prepare_sinusoid_plan, release_sinusoid_plan},
    {"sinusoid", "sinusoid 8192x1024 f32 (fresh malloc)", (size_t)32 << 20, MEM_WRITE, ALLOC_FRESH,
     run_sinusoid, 0, {NULL}, NULL, NULL},
    {"sinusoid", "sinusoid 8192x1024 f32 (fresh, MADV_HUGEPAGE)", (size_t)32 << 20, MEM_WRITE,
     ALLOC_HUGE, run_sinusoid, 0, {NULL}, NULL, NULL},
    {"rope", "RoPE in place q[4096x32x128] f32 interleaved", (size_t)64 << 20, MEM_READ_WRITE, ALLOC_REUSE,
     run_rope, 0, {"rope_torch_thd_f32", NULL}, NULL, NULL},
    {"rope", "RoPE in place q[4096x32x128] f32 half-split", (size_t)64 << 20, MEM_READ_WRITE, ALLOC_REUSE,
     run_rope, 1, {"rope_torch_hf_f32", NULL}, NULL, NULL},
    {"rope", "RoPE in place q[4096x32x128] bf16 interleaved", (size_t)32 << 20, MEM_READ_WRITE, ALLOC_REUSE,
     run_rope, 2, {"rope_torch_thd_bf16", NULL}, NULL, NULL},
    {"rope", "RoPE in place q[4096x32x128] bf16 half-split", (size_t)32 << 20, MEM_READ_WRITE, ALLOC_REUSE,
     run_rope, 3, {"rope_torch_hf_bf16", NULL}, NULL, NULL},
    {"rope", "RoPE in place q[4096x32x128] f16 interleaved", (size_t)32 << 20, MEM_READ_WRITE, ALLOC_REUSE,
     run_rope, 4, {NULL}, NULL, NULL},
    {"rope", "RoPE in place q[4096x32x128] f16 half-split", (size_t)32 << 20, MEM_READ_WRITE, ALLOC_REUSE,
     run_rope, 5, {NULL}, NULL, NULL},
    {"bias", "ALiBi bias [32x2048x2048] f32 (buffer reused)", (size_t)512 << 20, MEM_WRITE, ALLOC_REUSE,
     run_bias, 0, {"alibi_torch", NULL}, NULL, NULL},
    {"bias", "T5 bias [32x2048x2048] f32 (buffer reused)", (size_t)512 << 20, MEM_WRITE, ALLOC_REUSE,
     run_bias, 1, {"t5_torch", NULL}, NULL, NULL},
    {NULL, NULL, 0, 0, 0, NULL, 0, {NULL}, NULL, NULL}};

/* ---- timing ------------------------------------------------------------- */

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int compare_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(double *t, int n) {
    qsort(t, (size_t)n, sizeof *t, compare_double);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* Huge-page-advised allocation: first touch then faults 2 MiB at a time. */
static void *alloc_huge(size_t bytes) {
    size_t huge = (size_t)2 << 20, rounded = (bytes + huge - 1) / huge * huge;
    void *p = aligned_alloc(huge, rounded);
#ifdef MADV_HUGEPAGE
    if (p) madvise(p, rounded, MADV_HUGEPAGE);
#endif
    return p;
}

/* Median ms of one case; -1 with err filled on failure. A reused buffer is
 * pre-faulted and filled with 0x3c bytes (f32 ~0.0115, bf16 ~0.0115: in-place
 * kernels see ordinary finite data).
 *
 * ceiling_gbs (reused buffers only, else left alone): the machine's rate for
 * the same traffic, measured between the kernel's repetitions on `threads`
 * threads: memset of the same buffer for a writer, the simplest in-place loop
 * (x *= 1, read + write) over the same buffer for an in-place kernel.
 * Interleaving matters here: this VM's bandwidth swings 2x within minutes
 * (memset on 1 thread 19-40 GB/s in one afternoon), so a ceiling taken a
 * minute earlier can flatter or sink a kernel by that much. */
enum { BW_MEMSET, BW_MEMCPY, BW_STREAM, BW_COMPUTE, BW_IN_PLACE, BW_IN_PLACE_PREFETCH, BW_IN_PLACE_NT };
static double bandwidth_pass_ms(char *dst, const char *src, size_t bytes, int threads, int kind);

static double time_case(const bench_case *c, const posenc_exec *exec, int reps, int threads, double *best,
                        double *ceiling_gbs, posenc_error *err) {
    double t[64], base[64];
    void *reused = NULL;
    bool paired = ceiling_gbs && c->alloc == ALLOC_REUSE;
    /* every way of moving the row's traffic that this file knows; the ceiling is the fastest
     * pass of any of them (issue 43: one slow loop was no ceiling, the kernels beat it) */
    static const int write_kinds[] = {BW_MEMSET, BW_STREAM}, in_place_kinds[] = {BW_IN_PLACE, BW_IN_PLACE_PREFETCH,
                                                                                 BW_IN_PLACE_NT};
    const int *kinds = c->memory == MEM_READ_WRITE ? in_place_kinds : write_kinds;
    int nkinds = c->memory == MEM_READ_WRITE ? 3 : 2;
    if (c->alloc == ALLOC_REUSE) {
        if (!(reused = alloc_huge(c->bytes))) {
            snprintf(err->message, sizeof err->message, "cannot allocate %zu bytes", c->bytes);
            return -1;
        }
        memset(reused, 0x3c, c->bytes);
    }
    void *state = NULL;
    if (c->prepare && !(state = c->prepare(exec, err))) {
        free(reused);
        return -1;
    }
    for (int i = -1; i < reps; i++) { /* i == -1: warm-up */
        double t0 = now_ms();
        void *buf = reused;
        if (c->alloc == ALLOC_FRESH) buf = malloc(c->bytes);
        if (c->alloc == ALLOC_HUGE) buf = alloc_huge(c->bytes);
        if (!buf) {
            snprintf(err->message, sizeof err->message, "cannot allocate %zu bytes", c->bytes);
            if (c->release) c->release(state);
            free(reused);
            return -1;
        }
        posenc_status st = c->run(c, state, buf, exec, err);
        double ms = now_ms() - t0;
        if (buf != reused) free(buf);
        if (st != POSENC_OK) {
            if (c->release) c->release(state);
            free(reused);
            return -1;
        }
        double b = 0;
        if (paired) {
            for (int k = 0; k < nkinds && b >= 0; k++) {
                double pass = bandwidth_pass_ms(reused, NULL, c->bytes, threads, kinds[k]);
                b = pass < 0 ? -1 : k == 0 || pass < b ? pass : b;
            }
            if (b < 0) paired = false; /* a thread did not start: no ceiling rather than a wrong one */
            /* memset ends its timed window with part of its writes still in the
             * cache (up to the L3's size: ~10 MB of a 32 MB buffer here, measured in
             * docs/benchmarks.md); an untimed pass of the kernel pays for them, so the
             * next timed pass starts as it would in a loop of its own */
            else if (c->run(c, state, buf, exec, err) != POSENC_OK) {
                if (c->release) c->release(state);
                free(reused);
                return -1;
            }
        }
        if (i >= 0) t[i] = ms, base[i] = b;
    }
    if (c->release) c->release(state);
    free(reused);
    if (paired) { /* the best pass of all: a kernel's best is held to it */
        qsort(base, (size_t)reps, sizeof *base, compare_double);
        *ceiling_gbs = (double)c->bytes * (c->memory == MEM_READ_WRITE ? 2 : 1) / (base[0] * 1e6);
    }
    double median = median_of(t, reps); /* sorts t */
    *best = t[0];
    return median;
}

/* A RoPE row's arithmetic alone: the same 4096 tokens (the same cos/sin work)
 * as 4 calls of 1024 tokens on a q[1024][32][128] that stays in the L3 (16 MiB
 * in f32, 8 MiB in bf16/f16), median ms after a warm-up; -1 with err filled on
 * failure. The row's ceiling time over it is the best x ceiling the kernel's
 * arithmetic allows: below 1, the row is bound by arithmetic, not by memory
 * (bench/rope_compute_floor.c takes the same measure against flushed buffers).
 * The 4 calls' set-up (a few us each) counts, so it errs low. */
enum { CACHED_TOKENS = 1024 };
static double rope_cached_ms(const bench_case *c, const posenc_exec *exec, int reps, posenc_error *err) {
    const size_t bytes = c->bytes / (4096 / CACHED_TOKENS);
    void *buf = alloc_huge(bytes);
    int64_t *ids = malloc(4096 * sizeof *ids);
    double t[64], median = -1;
    if (!buf || !ids) {
        snprintf(err->message, sizeof err->message, "cannot allocate %zu bytes", bytes);
        goto done;
    }
    memset(buf, 0x3c, bytes);
    for (int64_t i = 0; i < 4096; i++) ids[i] = i;
    for (int r = -1; r < reps; r++) { /* r == -1: warm-up (brings q into the cache) */
        double t0 = now_ms();
        for (size_t k = 0; k < 4096 / CACHED_TOKENS; k++)
            if (rotate_q(c, buf, CACHED_TOKENS, ids + k * CACHED_TOKENS, exec, err) != POSENC_OK) goto done;
        if (r >= 0) t[r] = now_ms() - t0;
    }
    median = median_of(t, reps);
done:
    free(ids);
    free(buf);
    return median;
}

/* ---- memory bandwidth (the ceiling every kernel is compared with) ------ */


/* memset with non-temporal stores (what the kernels use for big outputs);
 * plain memset where SSE2 is missing. */
static void stream_set(char *dst, size_t bytes, int value) {
#if defined(__SSE2__)
    size_t head = (size_t)(-(uintptr_t)dst & 15);
    if (head > bytes) head = bytes;
    memset(dst, value, head);
    __m128i v = _mm_set1_epi8((char)value);
    size_t i = head;
    for (; i + 16 <= bytes; i += 16) _mm_stream_si128((__m128i *)(dst + i), v);
    _mm_sfence();
    memset(dst + i, value, bytes - i);
#else
    memset(dst, value, bytes);
#endif
}

/* Pure compute, no memory traffic: 8 independent multiply-add chains per
 * thread; `bytes` is the iteration count. The result goes to dst[0..7] so the
 * loop is not optimised away. */
static void compute_chains(char *dst, size_t iterations) {
    double x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    for (size_t i = 0; i < iterations; i++)
        for (int k = 0; k < 8; k++) x[k] = x[k] * 0.999999 + 1e-6;
    double sum = 0;
    for (int k = 0; k < 8; k++) sum += x[k];
    memcpy(dst, &sum, sizeof sum);
}

/* In place: read every 32-bit word, add 0, write it back (bits unchanged for any
 * dtype; a float multiply by 1 would quiet the signalling NaNs two bf16 values can
 * form). Issue 43: the old ceiling, `x *= 1` as the shipped build compiles it (no
 * -march: one 16-byte SSE multiply per 4 floats), ran at 0.5-0.6 of this loop on
 * the same buffer, and the RoPE kernels (AVX-512, a write prefetch 8 KiB ahead)
 * beat it. Here: 4 x 32 bytes per step, with regular stores, regular stores plus
 * a write prefetch 8 KiB ahead, or non-temporal stores; the row's ceiling is the
 * fastest of the three. `zero` comes through a volatile so the add stays. */
static const volatile int32_t bench_zero = 0;

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
__attribute__((target("avx2,prfchw"))) static size_t in_place_avx2(char *p, size_t bytes, int kind) {
    __m256i z = _mm256_set1_epi32(bench_zero);
    size_t i = 0;
    for (; i + 128 <= bytes; i += 128) {
        if (kind == BW_IN_PLACE_PREFETCH) {
            __builtin_prefetch(p + i + 8192, 1, 3);
            __builtin_prefetch(p + i + 8192 + 64, 1, 3);
        }
        __m256i v[4];
        for (int k = 0; k < 4; k++)
            v[k] = _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(const void *)(p + i + 32 * k)), z);
        for (int k = 0; k < 4; k++) {
            if (kind == BW_IN_PLACE_NT && ((uintptr_t)p & 31) == 0)
                _mm256_stream_si256((__m256i *)(void *)(p + i + 32 * k), v[k]);
            else _mm256_storeu_si256((__m256i *)(void *)(p + i + 32 * k), v[k]);
        }
    }
    if (kind == BW_IN_PLACE_NT) _mm_sfence();
    return i;
}
#endif

static void in_place_pass(char *p, size_t bytes, int kind) {
    size_t i = 0;
#if defined(__x86_64__) && defined(__GNUC__)
    if (__builtin_cpu_supports("avx2")) i = in_place_avx2(p, bytes, kind);
#else
    (void)kind;
#endif
    for (; i + 4 <= bytes; i += 4) {
        int32_t v;
        memcpy(&v, p + i, 4);
        v += bench_zero;
        memcpy(p + i, &v, 4);
    }
}

typedef struct {
    char *dst;
    const char *src;
    size_t bytes;
    int kind;
    _Atomic int *go;
    double t0, t1; /* this thread's own start and end, ms */
} bw_task;

static void *bw_worker(void *arg) {
    bw_task *p = arg;
    static const int fill = 0x5a;
    while (!atomic_load(p->go)) sched_yield(); /* thread start-up is not part of the time */
    p->t0 = now_ms();
    if (p->kind == BW_MEMCPY) memcpy(p->dst, p->src, p->bytes);
    else if (p->kind == BW_STREAM) stream_set(p->dst, p->bytes, fill);
    else if (p->kind == BW_COMPUTE) compute_chains(p->dst, p->bytes);
    else if (p->kind >= BW_IN_PLACE) in_place_pass(p->dst, p->bytes, p->kind);
    else memset(p->dst, fill + (int)(p->bytes & 7), p->bytes);
    p->t1 = now_ms();
    return NULL;
}

/* ms of one pass of `kind` over `bytes` split across `threads` threads: from
 * the first thread's start to the last one's end, after a barrier, so starting
 * the threads is not counted (the kernels run on a pool that is already up).
 * BW_COMPUTE: `bytes` iterations per thread. -1 if a thread cannot start. */
static double bandwidth_pass_ms(char *dst, const char *src, size_t bytes, int threads, int kind) {
    bw_task parts[16];
    pthread_t ids[16];
    _Atomic int go = 0;
    size_t chunk = kind == BW_COMPUTE ? bytes : bytes / (size_t)threads;
    for (int k = 0; k < threads; k++) {
        size_t at = kind == BW_COMPUTE ? 64 * (size_t)k : chunk * (size_t)k;
        parts[k] = (bw_task){dst + at, src ? src + at : NULL, chunk, kind, &go, 0, 0};
    }
    int started = 1;
    while (started < threads && pthread_create(&ids[started], NULL, bw_worker, &parts[started]) == 0) started++;
    atomic_store(&go, 1);
    bw_worker(&parts[0]);
    double first = parts[0].t0, last = parts[0].t1;
    for (int k = 1; k < started; k++) {
        pthread_join(ids[k], NULL);
        if (parts[k].t0 < first) first = parts[k].t0;
        if (parts[k].t1 > last) last = parts[k].t1;
    }
    return started < threads ? -1 : last - first;
}

/* GB/s (bytes set or copied per second, as peer-baselines.md counts them); for
 * BW_COMPUTE, G multiply-adds per second (bytes = iterations of 8 chains per
 * thread, so every thread does the same work and perfect scaling doubles it). */
static double bandwidth(char *dst, const char *src, size_t bytes, int threads, int reps, int kind) {
    double t[64];
    for (int i = -1; i < reps; i++) {
        double ms = bandwidth_pass_ms(dst, src, bytes, threads, kind);
        if (ms < 0) return -1;
        if (i >= 0) t[i] = ms;
    }
    double amount = kind == BW_COMPUTE ? 8.0 * (double)bytes * threads : (double)bytes;
    return amount / (median_of(t, reps) * 1e6);
}

/* One traced run (posenc_exec.trace) of a case on a pool: each worker's start
 * latency after the loop was handed out, its work, and its wait for the slowest. */
static void print_timeline(const bench_case *c, posenc_exec *exec, int threads) {
    posenc_exec_trace trace;
    posenc_error err = {0};
    void *buf = alloc_huge(c->bytes);
    if (!buf || posenc_threadpool_create(threads, &exec->pool, &err) != POSENC_OK) {
        free(buf);
        printf("| %s | %d | (cannot run: %s) |\n", c->name, threads, err.message);
        return;
    }
    memset(buf, 0x3c, c->bytes);
    exec->threads = threads;
    exec->trace = &trace;
    void *state = c->prepare ? c->prepare(exec, &err) : NULL;
    posenc_status st = c->prepare && !state ? err.status : POSENC_OK;
    if (st == POSENC_OK) st = c->run(c, state, buf, exec, &err); /* warm-up: pool threads awake, pages mapped */
    if (st == POSENC_OK) st = c->run(c, state, buf, exec, &err);
    if (c->release) c->release(state);
    exec->trace = NULL;
    posenc_threadpool_free(exec->pool);
    exec->pool = NULL;
    free(buf);
    if (st != POSENC_OK) {
        printf("| %s | %d | (failed: %s) |\n", c->name, threads, err.message);
        return;
    }
    double total = (double)(trace.done_ns - trace.submit_ns) / 1e3;
    for (int w = 0; w < trace.chunks && w < POSENC_TRACE_MAX_CHUNKS; w++)
        printf("| %s | %d | %d | %zu | %.1f | %.1f | %.1f | %.1f |\n", w ? "" : c->name, threads, w,
               trace.items[w], (double)(trace.start_ns[w] - trace.submit_ns) / 1e3,
               (double)(trace.end_ns[w] - trace.start_ns[w]) / 1e3,
               (double)(trace.done_ns - trace.end_ns[w]) / 1e3, total);
}

/* ---- peers ---------------------------------------------------------------- */

/* Run one peer workload; returns its median ms, or -1 (and a reason) if skipped. */
/* ---- memory: peak RSS of the analysis commands (issue 13.10) ------------------ */

enum { MEMORY_DIM = 1024 };

/* The four inputs, [rows][1024] float32: a = sinusoid table, b = the same from
 * position 1 (diff), tok = N(0, 1) token embeddings and inp = 16 tok + a
 * (signal), as tests/py/test_cli_memory.py makes them. Runs in a forked child,
 * so this process's peak RSS (which a later exec'd child inherits as its
 * ru_maxrss floor) stays small. 0 on success. */
static int write_memory_inputs(const char *dir, size_t rows) {
    char path[4096];
    posenc_error err = {0};
    posenc_array t = {0}, u = {0};
    size_t shape[2] = {rows, MEMORY_DIM}, n = rows * MEMORY_DIM;
    posenc_sinusoid_params p;
    posenc_sinusoid_params_default(&p, MEMORY_DIM);
    posenc_status st = posenc_array_create(&t, POSENC_DTYPE_F32, 2, shape, 0, &err);
    if (st == POSENC_OK) st = posenc_array_create(&u, POSENC_DTYPE_F32, 2, shape, 0, &err);
    posenc_positions from0 = posenc_positions_range(0, rows), from1 = posenc_positions_range(1, rows);
    if (st == POSENC_OK) st = posenc_sinusoid_table_f32(&p, &from0, t.data, n, &err);
    if (st == POSENC_OK) snprintf(path, sizeof path, "%s/a.npy", dir), st = posenc_npy_write(path, &t, &err);
    float *a = t.data, *tok = u.data;
    /* N(0, 1) token embeddings from the library's reproducible initializer */
    if (st == POSENC_OK) st = posenc_learned_init_f32(1, 1.0, POSENC_NO_PADDING, rows, MEMORY_DIM, tok, n, &err);
    if (st == POSENC_OK) snprintf(path, sizeof path, "%s/tok.npy", dir), st = posenc_npy_write(path, &u, &err);
    for (size_t i = 0; st == POSENC_OK && i < n; i++) a[i] = 16.0f * tok[i] + a[i];
    if (st == POSENC_OK) snprintf(path, sizeof path, "%s/inp.npy", dir), st = posenc_npy_write(path, &t, &err);
    if (st == POSENC_OK) st = posenc_sinusoid_table_f32(&p, &from1, u.data, n, &err);
    if (st == POSENC_OK) snprintf(path, sizeof path, "%s/b.npy", dir), st = posenc_npy_write(path, &u, &err);
    if (st != POSENC_OK) fprintf(stderr, "posenc bench: memory inputs: %s\n", err.message);
    posenc_array_free(&t);
    posenc_array_free(&u);
    return st == POSENC_OK ? 0 : 1;
}

/* Fork; the child restores the signal mask and runs work(dir, rows) or
 * execs this program (/proc/self/exe) with argv, stdout to /dev/null and
 * stderr to err_path. Waits with wait4: *ms wall, *peak ru_maxrss bytes.
 * Returns the child's exit status (128 + signal if killed, 127 if it could not
 * start). */
static int run_child(char *const argv[], const char *dir, size_t rows, const sigset_t *mask, const char *err_path,
                     double *ms, double *peak) {
    double t0 = now_ms();
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) return 127;
    if (pid == 0) {
        sigprocmask(SIG_SETMASK, mask, NULL);
        if (!argv) _exit(write_memory_inputs(dir, rows));
        int out = open("/dev/null", O_WRONLY), err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (out >= 0) dup2(out, STDOUT_FILENO);
        if (err >= 0) dup2(err, STDERR_FILENO);
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    int status = 0;
    struct rusage usage;
    memset(&usage, 0, sizeof usage);
    while (wait4(pid, &status, 0, &usage) < 0)
        if (errno != EINTR) return 127;
    *ms = now_ms() - t0;
    *peak = (double)usage.ru_maxrss * 1024.0; /* KiB on Linux */
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/* The memory group: write the inputs once into a temporary folder (always
 * removed, also on error or interruption: SIGINT/SIGTERM/SIGHUP are held
 * while it runs, the children get them, and a held one is delivered after the
 * cleanup), then run each command once and print wall ms, peak RSS and
 * RSS / input. EXIT_* code. */
static bool interrupted(void) {
    sigset_t pending;
    sigpending(&pending);
    return sigismember(&pending, SIGINT) || sigismember(&pending, SIGTERM) || sigismember(&pending, SIGHUP);
}

static int bench_memory(size_t rows) {
    const char *tmp = getenv("TMPDIR");
    char dir[4000], path[4096], err_path[4096]; /* dir + a file name fits a path */
    snprintf(dir, sizeof dir, "%s/posenc-bench-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    sigset_t hold, old;
    sigemptyset(&hold);
    sigaddset(&hold, SIGINT);
    sigaddset(&hold, SIGTERM);
    sigaddset(&hold, SIGHUP);
    sigprocmask(SIG_BLOCK, &hold, &old);
    if (!mkdtemp(dir)) {
        sigprocmask(SIG_SETMASK, &old, NULL);
        return cli_fail("bench", EXIT_RUNTIME, "set TMPDIR to a writable folder", "cannot create %s: %s", dir,
                        strerror(errno));
    }
    snprintf(err_path, sizeof err_path, "%s/stderr.txt", dir);
    double input = (double)rows * MEMORY_DIM * 4 + 128; /* one .npy file (its header is 128 bytes) */
    struct rusage self;
    getrusage(RUSAGE_SELF, &self);
    printf("Peak memory: each command runs once as a child process on [%zu x %d] float32 tables\n"
           "(%.1f MB a file, written once to a temporary folder); peak RSS = wait4's ru_maxrss, which is at\n"
           "least this process's own peak at the fork (%.1f MB). tests/py/test_cli_memory.py bounds RSS by\n"
           "2 x input + 48 MiB.\n\n| command | input MB | wall ms | peak RSS MB | RSS / input |\n|---|---|---|---|---|\n",
           rows, MEMORY_DIM, input / 1e6, (double)self.ru_maxrss * 1024.0 / 1e6);
    fflush(stdout);
    cli_progress progress;
    cli_progress_begin(&progress, "bench", 4);
    cli_progress_step(&progress, 0, "memory: writing the inputs");
    double ms = 0, peak = 0;
    int rc = EXIT_OK, status = run_child(NULL, dir, rows, &old, err_path, &ms, &peak);
    if (status != 0 && !interrupted()) /* interrupted: the child got the signal too, nothing to report */
        rc = cli_fail("bench", EXIT_RUNTIME, "free disk space in TMPDIR, or lower --memory-rows",
                      "cannot write the memory inputs in %s (status %d)", dir, status);
    static const char *names[3] = {"analyze", "diff", "signal"};
    char a[4096], b[4096], tok[4096], inp[4096]; /* the files write_memory_inputs made */
    snprintf(a, sizeof a, "%s/a.npy", dir);
    snprintf(b, sizeof b, "%s/b.npy", dir);
    snprintf(tok, sizeof tok, "%s/tok.npy", dir);
    snprintf(inp, sizeof inp, "%s/inp.npy", dir);
    for (int c = 0; c < 3 && rc == EXIT_OK && !interrupted(); c++) {
        char *analyze[] = {"posenc", "analyze", a, "--max-offset", "1", NULL};
        char *diff[] = {"posenc", "diff", a, b, "--max-offset", "1", NULL};
        char *signal[] = {"posenc", "signal", tok, inp, NULL};
        char *const *argv = c == 0 ? analyze : c == 1 ? diff : signal;
        const char *label = c == 0 ? "analyze A --max-offset 1" : c == 1 ? "diff A B --max-offset 1" : "signal TOK INP";
        double inputs = c == 0 ? input : 2 * input;
        char step[64];
        snprintf(step, sizeof step, "memory: %s", names[c]);
        cli_progress_step(&progress, 1 + c, step);
        status = run_child(argv, dir, rows, &old, err_path, &ms, &peak);
        if (status != 0 && interrupted()) break; /* the child got the signal too: no error to report */
        if (status != 0) {
            char first[256] = "";
            FILE *f = fopen(err_path, "r");
            if (f && fgets(first, sizeof first, f)) first[strcspn(first, "\n")] = '\0';
            if (f) fclose(f);
            rc = cli_fail("bench", EXIT_RUNTIME, NULL, "posenc %s exited with status %d: %s", names[c], status, first);
            break;
        }
        printf("| %s | %.1f | %.0f | %.1f | %.2f |\n", label, inputs / 1e6, ms, peak / 1e6, peak / inputs);
        fflush(stdout);
    }
    cli_progress_end(&progress);
    /* everything in the folder: the inputs, stderr.txt, and a temporary a killed
       child left where the file system has no O_TMPFILE */
    DIR *folder = opendir(dir);
    for (struct dirent *e; folder && (e = readdir(folder)) != NULL;)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
            (size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < sizeof path) /* dir < 4000 bytes: fits */
            unlink(path);
    if (folder) closedir(folder);
    if (rmdir(dir) != 0 && rc == EXIT_OK)
        rc = cli_fail("bench", EXIT_RUNTIME, NULL, "cannot remove %s: %s", dir, strerror(errno));
    printf("\n");
    bool stop = interrupted();
    sigprocmask(SIG_SETMASK, &old, NULL); /* a held signal is delivered here, after the cleanup */
    return stop && rc == EXIT_OK ? EXIT_RUNTIME : rc;
}

/* ---- the command ----------------------------------------------------------- */

static bool parse_list(const char *text, int *out, int *count, int max) {
    *count = 0;
    const char *p = text;
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > 16 || *count >= max) return false;
        out[(*count)++] = (int)v;
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') return false;
    }
    return *count > 0;
}

int cmd_bench(int argc, char **argv) {
    cli_args a;
    int rc = cli_parse(&a, "bench", bench_options, argc, argv, 0);
    if (rc != EXIT_OK) return rc;
    if (a.help) {
        printf("usage: posenc bench [--only sinusoid,rope,bias,memory,identify,decode] [--threads 1,2] [--reps N] [--no-peers]\n\n"
               "Time posenc's kernels against memset/memcpy bandwidth and the NumPy/PyTorch peers,\n"
               "all in this run, and print a markdown table of ratios (see docs/benchmarks.md).\n"
               "The memory group runs analyze, diff and signal once each on 205 MB float32 tables\n"
               "and prints their peak RSS (about a minute; --memory-rows for smaller tables).\n"
               "The decode group times one decoding step's RoPE per call, unplanned and planned\n"
               "(posenc_rope_plan), against HF's step in PyTorch.\n\n");
        cli_print_options(bench_options);
        return EXIT_OK;
    }
    int threads[8], nthreads = 0;
    int32_t reps = 7, mem_mib = 256, memory_rows = 50000, identify_rows = 131072;
    if (!parse_list(cli_string(&a, "threads", "1,2"), threads, &nthreads, 8))
        return cli_fail("bench", EXIT_USAGE, "e.g. --threads 1,2", "--threads must list counts in 1..16, got '%s'",
                        cli_string(&a, "threads", ""));
    if (!cli_int32(&a, "reps", 5, 64, &reps) || !cli_int32(&a, "mem-mib", 16, 4096, &mem_mib) ||
        !cli_int32(&a, "memory-rows", 16, 4000000, &memory_rows) ||
        !cli_int32(&a, "identify-rows", 64, 4000000, &identify_rows))
        return EXIT_USAGE;
    posenc_exec exec;
    posenc_exec_default(&exec);
    posenc_error err = {0};
    if (cli_has(&a, "path") && posenc_kernel_path_parse(cli_string(&a, "path", ""), &exec.path, &err) != POSENC_OK)
        return cli_fail_status("bench", &err);
    posenc_exec resolved;
    if (posenc_exec_resolve(&exec, &resolved, &err) != POSENC_OK) return cli_fail_status("bench", &err);
    const char *only = cli_has(&a, "only") ? cli_string(&a, "only", "") : NULL;
    const char *python = cli_string(&a, "python", cli_default_python());
    const char *script = cli_string(&a, "peers-script", POSENC_BENCH_PEERS_DEFAULT);
    bool peers = !cli_has(&a, "no-peers");
    if (only && strcmp(only, "lab") == 0) /* the training lab's own benchmark (cli/lab/cmd_lab.c) */
        return cmd_lab_bench(cli_string(&a, "threads", "1,2"), NULL, reps, peers,
                             python, POSENC_LAB_TORCH_BENCH, false);

    printf("posenc bench %s: kernel path %s, %d usable cores, median of %d runs after 1 warm-up\n\n",
           posenc_version(), posenc_kernel_path_name(resolved.path), (int)posenc_cpu_count(), (int)reps);
    /* first, while this process is small: an exec'd child's ru_maxrss starts at its parent's peak */
    if (cli_list_has(only, "memory") && (rc = bench_memory((size_t)memory_rows)) != EXIT_OK) return rc;
    if (cli_list_has(only, "identify") && (rc = cli_bench_identify((size_t)identify_rows)) != EXIT_OK) return rc;
    if (cli_list_has(only, "decode") && (rc = cli_bench_decode(reps, peers, python, script)) != EXIT_OK) return rc;
    bool kernels = false;
    for (const bench_case *c = cases; c->name; c++) kernels = kernels || cli_list_has(only, c->group);
    if (!kernels) return EXIT_OK;

    size_t mem_bytes = (size_t)mem_mib << 20;
    char *dst = alloc_huge(mem_bytes), *src = alloc_huge(mem_bytes);
    if (!dst || !src) {
        free(dst);
        free(src);
        return cli_fail("bench", EXIT_RUNTIME, "lower --mem-mib", "cannot allocate 2 x %d MiB", mem_mib);
    }
    memset(dst, 1, mem_bytes);
    memset(src, 2, mem_bytes);
    /* progress line on a terminal (base/progress.c): a bandwidth or posenc row weighs 1, a peer 4 (Python start-up) */
    cli_progress progress;
    double units = nthreads, done = 0;
    for (const bench_case *c = cases; c->name; c++)
        for (int t = 0; cli_list_has(only, c->group) && t < nthreads; t++)
            for (int p = -1; p < 3 && (p < 0 || (peers && c->peers[p])); p++)
                units += p < 0 ? 1 : (strncmp(c->peers[p], "sin_numpy", 9) == 0 && threads[t] != 1) ? 0 : 4;
    cli_progress_begin(&progress, "bench", units);
    double memset_gbs[8], memcpy_gbs[8], stream_gbs[8], compute_g[8], in_place_gbs[8];
    printf("Scaling = rate at N threads / rate at %d thread(s), measured in this run: what the machine gives\n"
           "the kernels below. \"compute\" is 8 multiply-add chains per thread, no memory: ~%dx means the\n"
           "vCPUs act as separate cores; ~1x means they share one (SMT siblings or an oversubscribed host).\n\n",
           threads[0], nthreads > 1 ? threads[nthreads - 1] / threads[0] : 1);
    printf("| memory (%d MiB, pre-faulted) | threads | GB/s | scaling |\n|---|---|---|---|\n", mem_mib);
    for (int t = 0; t < nthreads; t++) {
        cli_progress_step(&progress, done++, "memory bandwidth");
        memset_gbs[t] = bandwidth(dst, NULL, mem_bytes, threads[t], reps, BW_MEMSET);
        memcpy_gbs[t] = bandwidth(dst, src, mem_bytes, threads[t], reps, BW_MEMCPY);
        stream_gbs[t] = bandwidth(dst, NULL, mem_bytes, threads[t], reps, BW_STREAM);
        in_place_gbs[t] = 0; /* read + write; the fastest of the three in-place passes */
        for (int k = BW_IN_PLACE; k <= BW_IN_PLACE_NT && in_place_gbs[t] >= 0; k++) {
            double g = 2 * bandwidth(dst, NULL, mem_bytes, threads[t], reps, k);
            in_place_gbs[t] = g < 0 ? -1 : g > in_place_gbs[t] ? g : in_place_gbs[t];
        }
        compute_g[t] = bandwidth(dst, NULL, (size_t)4 << 20, threads[t], reps, BW_COMPUTE); /* ~10 ms */
        if (memset_gbs[t] < 0 || memcpy_gbs[t] < 0 || stream_gbs[t] < 0 || in_place_gbs[t] < 0 || compute_g[t] < 0) {
            cli_progress_end(&progress);
            free(src);
            free(dst);
            return cli_fail("bench", EXIT_RUNTIME, NULL, "cannot start %d threads for the bandwidth probes", threads[t]);
        }
        printf("| memset | %d | %.1f | %.2f |\n| memset, streaming stores | %d | %.1f | %.2f |\n"
               "| memcpy (bytes copied) | %d | %.1f | %.2f |\n| in place, +0 (read + write; best of regular / prefetchw / NT stores) | %d | %.1f | %.2f |\n"
               "| compute (G multiply-adds/s) | %d | %.2f | %.2f |\n",
               threads[t], memset_gbs[t], memset_gbs[t] / memset_gbs[0], threads[t], stream_gbs[t],
               stream_gbs[t] / stream_gbs[0], threads[t], memcpy_gbs[t], memcpy_gbs[t] / memcpy_gbs[0], threads[t],
               in_place_gbs[t], in_place_gbs[t] / in_place_gbs[0], threads[t], compute_g[t], compute_g[t] / compute_g[0]);
    }
    free(src);
    free(dst);
    printf("\nGB/s (from the median) counts bytes written (tables, biases) or 2 x bytes (in-place RoPE: read + write).\n"
           "ceiling = the machine's rate for the same traffic, measured between this row's own repetitions on as\n"
           "many threads, the fastest pass of all of them: memset and streaming memset of the same buffer (writers);\n"
           "in place, every word + 0 over the same buffer with regular stores, with a write prefetch 8 KiB ahead and\n"
           "with non-temporal stores, read + write (in place); \"(table)\": the memory table's (fresh buffers).\n"
           "x ceiling = best GB/s (from the fastest repetition) / ceiling: at most 1 but for noise.\n"
           "arithmetic x ceiling (RoPE rows) = the ceiling's time for this traffic / the same 4096 tokens rotated\n"
           "in 4 calls on a q[1024x32x128] that stays in the L3: the best x ceiling the kernel's arithmetic allows\n"
           "(below 1: this row is bound by its arithmetic, not by memory).\n\n"
           "posenc runs on a posenc_threadpool made once per thread count (as an inference loop would);\n"
           "\"no pool\" is the same call starting its threads per call (posenc_exec.pool = NULL).\n\n"
           "scaling = ms at the first thread count / ms at this one; memset and memcpy scaling are the\n"
           "machine's own in this run (the table above), the ceiling for writers and in-place kernels.\n\n"
           "| workload | threads | posenc ms median (min) | no pool ms | GB/s | ceiling GB/s | x ceiling | arithmetic x ceiling | scaling | memset scaling | memcpy scaling | peer | peer ms | posenc speedup |\n"
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    rc = EXIT_OK;
    for (const bench_case *c = cases; c->name && rc == EXIT_OK; c++) {
        if (!cli_list_has(only, c->group)) continue;
        double first_ms = 0;
        for (int t = 0; t < nthreads; t++) {
            char step_label[160];
            snprintf(step_label, sizeof step_label, "%s, %d thread(s)", c->name, threads[t]);
            cli_progress_step(&progress, done++, step_label);
            exec.threads = threads[t];
            exec.pool = NULL;
            double best = 0, no_pool_best = 0, no_pool_ms = 0, ms = -1;
            if (threads[t] > 1 && posenc_threadpool_create(threads[t], &exec.pool, &err) != POSENC_OK) {
                rc = cli_fail_status("bench", &err);
                break;
            }
            double ceiling = -1;
            ms = time_case(c, &exec, reps, threads[t], &best, &ceiling, &err);
            double cached_ms = 0; /* RoPE rows: the arithmetic alone, on the same pool */
            if (ms >= 0 && c->run == run_rope && (cached_ms = rope_cached_ms(c, &exec, reps, &err)) < 0) ms = -1;
            posenc_threadpool_free(exec.pool);
            exec.pool = NULL;
            if (ms >= 0 && threads[t] > 1) no_pool_ms = time_case(c, &exec, reps, threads[t], &no_pool_best, NULL, &err);
            if (ms < 0 || no_pool_ms < 0) {
                rc = cli_fail("bench", EXIT_RUNTIME, NULL, "%s: %s", c->name, err.message);
                break;
            }
            double gbs = (double)c->bytes * (c->memory == MEM_READ_WRITE ? 2 : 1) / (ms * 1e6);
            char no_pool[32] = "=";
            if (threads[t] > 1) snprintf(no_pool, sizeof no_pool, "%.2f", no_pool_ms);
            if (t == 0) first_ms = ms;
            /* fresh buffers (page faults are the point) have no interleaved ceiling: the table's memset */
            bool table_ceiling = ceiling < 0;
            if (table_ceiling)
                ceiling = c->memory == MEM_READ_WRITE ? in_place_gbs[t]
                          : memset_gbs[t] > stream_gbs[t] ? memset_gbs[t] : stream_gbs[t];
            double best_gbs = (double)c->bytes * (c->memory == MEM_READ_WRITE ? 2 : 1) / (best * 1e6);
            char arithmetic[32] = "";
            if (cached_ms > 0) /* the ceiling's time for this row's traffic over the cached time */
                snprintf(arithmetic, sizeof arithmetic, "%.2f",
                         (double)c->bytes * (c->memory == MEM_READ_WRITE ? 2 : 1) / (ceiling * 1e6) / cached_ms);
            printf("| %s | %d | %.2f (%.2f) | %s | %.1f | %.1f%s | %.2f | %s | %.2f | %.2f | %.2f |", c->name, threads[t],
                   ms, best, no_pool, gbs, ceiling, table_ceiling ? " (table)" : "", best_gbs / ceiling, arithmetic,
                   first_ms / ms, memset_gbs[t] / memset_gbs[0], memcpy_gbs[t] / memcpy_gbs[0]);
            int shown = 0;
            for (int p = 0; peers && p < 3 && c->peers[p]; p++) {
                /* numpy is single-threaded: run it once, on the 1-thread row */
                if (strncmp(c->peers[p], "sin_numpy", 9) == 0 && threads[t] != 1) continue;
                char why[256] = "";
                double peer_ms = cli_bench_run_peer(python, script, c->peers[p], threads[t], reps, why, sizeof why);
                done += 4;
                if (shown++) printf("\n| | | | | | | | | | | |");
                if (peer_ms < 0) printf(" %s | skipped: %s | |", c->peers[p], why);
                else printf(" %s | %.2f | %.1fx |", c->peers[p], peer_ms, peer_ms / ms);
                fflush(stdout);
            }
            if (!shown) printf(" | | |");
            printf("\n");
            fflush(stdout);
        }
    }
    if (rc == EXIT_OK && cli_has(&a, "timeline")) {
        printf("\nTimeline: one traced run per kernel on a pool, after a warm-up run (us from the loop's "
               "hand-out).\n\n| workload | threads | worker | rows/tokens | start latency | work | wait | call |\n"
               "|---|---|---|---|---|---|---|---|\n");
        for (const bench_case *c = cases; c->name; c++)
            for (int t = 0; t < nthreads && cli_list_has(only, c->group) && c->alloc == ALLOC_REUSE; t++)
                if (threads[t] > 1) print_timeline(c, &exec, threads[t]);
    }
    cli_progress_end(&progress);
    return rc;
}
