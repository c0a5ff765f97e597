/* test_threadpool.c: posenc_threadpool (posenc.h, section 9): argument errors,
 * sizes, exec resolution, and many jobs in a row and from two caller threads at
 * once (calls sharing a pool take turns), for the sinusoid, RoPE and ALiBi
 * drivers, each compared bit for bit with the same call made without a pool.
 * Short on purpose: scripts/test runs it under ThreadSanitizer. */
#define _GNU_SOURCE /* unsetenv */
#include "check.h"
#include "../src/common/kernels.h" /* posenc_parallel_for_: the claiming of pieces */

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <stdbool.h>
#include <stdlib.h>

typedef struct {
    posenc_threadpool *pool;
    const float *want;
    int mismatches;
    float *first_bad; /* a copy of the first table that differed (check.h is not thread-safe: the main
                         thread compares it) */
} pool_caller;

enum { CALLER_ROWS = 4096, CALLER_DIM = 256 };

/* After the callers: where the first differing table of a caller differs. */
static void report_caller(const char *label, const pool_caller *c) {
    size_t shape[2] = {CALLER_ROWS, CALLER_DIM};
    if (c->first_bad) check_same(label, c->first_bad, c->want, (size_t)CALLER_ROWS * CALLER_DIM, CHECK_F32, shape, 2);
}

static void *pool_caller_main(void *varg) {
    pool_caller *c = varg;
    posenc_sinusoid_params p;
    posenc_sinusoid_params_default(&p, 256);
    posenc_positions pos = posenc_positions_range(3, 4096); /* 4 MiB: split over 2 */
    float *got = malloc(sizeof(float) * 4096 * 256);
    posenc_exec e;
    posenc_exec_default(&e);
    e.pool = c->pool;
    for (int i = 0; i < 40; i++) {
        if (posenc_sinusoid_table_exec(&p, &pos, POSENC_DTYPE_F32, got, 4096 * 256, &e, NULL) != POSENC_OK ||
            memcmp(got, c->want, sizeof(float) * 4096 * 256) != 0) {
            if (c->mismatches++ == 0 && (c->first_bad = malloc(sizeof(float) * 4096 * 256)) != NULL)
                memcpy(c->first_bad, got, sizeof(float) * 4096 * 256);
        }
    }
    free(got);
    return NULL;
}

static void test_threadpool(void) {
    posenc_threadpool *pool = (posenc_threadpool *)&pool; /* must be reset to NULL on error */
    posenc_error err = {0};
    CHECK(posenc_threadpool_create(-1, &pool, &err) == POSENC_ERR_INVALID_ARGUMENT && pool == NULL &&
          strstr(err.message, "got -1"), "[X6] pool of -1 threads: INVALID_ARGUMENT, *out = NULL (%s)", err.message);
    CHECK(posenc_threadpool_create(POSENC_MAX_THREADS + 1, &pool, &err) == POSENC_ERR_INVALID_ARGUMENT &&
          strstr(err.message, "257"), "[X6] pool of 257 threads: INVALID_ARGUMENT (%s)", err.message);
    CHECK(posenc_threadpool_create(2, NULL, &err) == POSENC_ERR_NULL_POINTER, "[X7] NULL out: NULL_POINTER");
    CHECK(posenc_threadpool_size(NULL) == 0, "size of NULL pool is 0");
    posenc_threadpool_free(NULL);
    posenc_status st = posenc_threadpool_create(0, &pool, &err);
    int32_t size = posenc_threadpool_size(pool);
    CHECK(st == POSENC_OK && size == posenc_cpu_count(), "pool of 0 threads = the usable cores (%d, want %d)",
          (int)size, (int)posenc_cpu_count());
    posenc_threadpool_free(pool);
    CHECK(posenc_threadpool_create(2, &pool, &err) == POSENC_OK && posenc_threadpool_size(pool) == 2,
          "pool of 2 created");
    posenc_exec e, r;
    posenc_exec_default(&e);
    CHECK(e.pool == NULL, "default exec has no pool");
    e.pool = pool;
    unsetenv("POSENC_THREADS");
    CHECK(posenc_exec_resolve(&e, &r, &err) == POSENC_OK && r.threads == 2 && r.pool == pool,
          "threads 0 with a pool of 2 resolves to 2 threads on that pool");

    posenc_sinusoid_params p;
    posenc_sinusoid_params_default(&p, 256);
    posenc_positions pos = posenc_positions_range(3, 4096);
    float *want = malloc(sizeof(float) * 4096 * 256);
    posenc_exec one = {1, POSENC_PATH_AUTO, NULL, NULL};
    CHECK(posenc_sinusoid_table_exec(&p, &pos, POSENC_DTYPE_F32, want, 4096 * 256, &one, &err) == POSENC_OK,
          "reference table, 1 thread, no pool");
    posenc_threadpool *single = NULL;
    st = posenc_threadpool_create(1, &single, &err);
    pool_caller alone = {single, want, 0, NULL};
    if (st == POSENC_OK) pool_caller_main(&alone); /* 2 threads asked, the pool of 1 caps them */
    CHECK(st == POSENC_OK && posenc_threadpool_size(single) == 1 && alone.mismatches == 0,
          "pool of 1 (no helper threads): 40 tables == no pool (%d differ)", alone.mismatches);
    report_caller("pool of 1: first differing table vs no pool", &alone);
    free(alone.first_bad);
    posenc_threadpool_free(single);
    pool_caller callers[2] = {{pool, want, 0, NULL}, {pool, want, 0, NULL}};
    pool_caller_main(&callers[0]);
    CHECK(callers[0].mismatches == 0, "40 tables in a row on the pool == no pool, bit for bit (%d differ)",
          callers[0].mismatches);
    report_caller("40 tables in a row: first differing table vs no pool", &callers[0]);
    free(callers[0].first_bad);
    callers[0].first_bad = NULL;
    callers[0].mismatches = 0;
    pthread_t other;
    bool started = pthread_create(&other, NULL, pool_caller_main, &callers[1]) == 0;
    pool_caller_main(&callers[0]);
    if (started) pthread_join(other, NULL);
    CHECK(started && callers[0].mismatches == 0 && callers[1].mismatches == 0,
          "2 callers x 40 tables sharing one pool == no pool (%d + %d differ)", callers[0].mismatches,
          callers[1].mismatches);
    report_caller("2 callers, caller 0: first differing table vs no pool", &callers[0]);
    report_caller("2 callers, caller 1: first differing table vs no pool", &callers[1]);
    free(callers[0].first_bad);
    free(callers[1].first_bad);
    free(want);
    posenc_threadpool_free(pool);
}

/* RoPE and ALiBi through the pool: same bits as without. */
static void test_other_drivers(void) {
    posenc_threadpool *pool = NULL;
    CHECK(posenc_threadpool_create(2, &pool, NULL) == POSENC_OK, "pool of 2 for RoPE and ALiBi");
    posenc_exec with = {2, POSENC_PATH_AUTO, pool, NULL}, without = {2, POSENC_PATH_AUTO, NULL, NULL};
    posenc_rope_params rp;
    posenc_rope_params_default(&rp, 128);
    enum { T = 2048, H = 4, D = 128 };
    posenc_rope_view view = posenc_rope_view_contiguous(T, H, D);
    float *a = malloc(sizeof(float) * T * H * D), *b = malloc(sizeof(float) * T * H * D);
    for (size_t i = 0; i < (size_t)T * H * D; i++) a[i] = b[i] = (float)((i * 2654435761u) % 1000) / 500.0f - 1.0f;
    posenc_status s1 = posenc_rope_apply_exec(&rp, 0, POSENC_LAYOUT_HALF, &view, NULL, 0, POSENC_DTYPE_F32, a,
                                              (size_t)T * H * D, &with, NULL);
    posenc_status s2 = posenc_rope_apply_exec(&rp, 0, POSENC_LAYOUT_HALF, &view, NULL, 0, POSENC_DTYPE_F32, b,
                                              (size_t)T * H * D, &without, NULL);
    size_t rope_shape[3] = {T, H, D};
    CHECK(s1 == POSENC_OK && s2 == POSENC_OK, "RoPE [2048 x 4 x 128] with and without the pool succeed");
    check_same("RoPE [2048 x 4 x 128] on the pool == without", a, b, (size_t)T * H * D, CHECK_F32, rope_shape, 3);
    free(a);
    free(b);
    enum { L = 512, HEADS = 4 };
    float slopes[HEADS];
    posenc_alibi_slopes_f32(HEADS, 8.0, 0, HEADS, POSENC_MODE_PRECISE, slopes, HEADS, NULL);
    posenc_positions q = posenc_positions_range(0, L), k = posenc_positions_range(0, L);
    float *x = malloc(sizeof(float) * HEADS * L * L), *y = malloc(sizeof(float) * HEADS * L * L);
    s1 = posenc_alibi_bias_f32_exec(slopes, HEADS, POSENC_ALIBI_CAUSAL, &q, &k, x, (size_t)HEADS * L * L, &with, NULL);
    s2 = posenc_alibi_bias_f32_exec(slopes, HEADS, POSENC_ALIBI_CAUSAL, &q, &k, y, (size_t)HEADS * L * L, &without,
                                    NULL);
    size_t alibi_shape[3] = {HEADS, L, L};
    CHECK(s1 == POSENC_OK && s2 == POSENC_OK, "ALiBi [4 x 512 x 512] with and without the pool succeed");
    check_same("ALiBi [4 x 512 x 512] on the pool == without", x, y, (size_t)HEADS * L * L, CHECK_F32, alibi_shape, 3);
    free(x);
    free(y);
    posenc_threadpool_free(pool);
}

/* posenc_exec.trace: one entry per chunk, consistent times, items that add up
 * to the rows, the same bits as an untraced call (with a pool and without). */
static void test_trace(void) {
    posenc_threadpool *pool = NULL;
    CHECK(posenc_threadpool_create(2, &pool, NULL) == POSENC_OK, "pool of 2 for the trace");
    posenc_sinusoid_params p;
    posenc_sinusoid_params_default(&p, 256);
    enum { ROWS = 4096, DIM = 256 };
    posenc_positions pos = posenc_positions_range(0, ROWS);
    float *a = malloc(sizeof(float) * ROWS * DIM), *b = malloc(sizeof(float) * ROWS * DIM);
    for (int pooled = 0; pooled < 2; pooled++) {
        posenc_exec_trace trace;
        memset(&trace, 0xff, sizeof trace);
        posenc_exec plain = {2, POSENC_PATH_AUTO, pooled ? pool : NULL, NULL}, traced = plain;
        traced.trace = &trace;
        posenc_status s1 = posenc_sinusoid_table_exec(&p, &pos, POSENC_DTYPE_F32, a, (size_t)ROWS * DIM, &plain, NULL);
        posenc_status s2 = posenc_sinusoid_table_exec(&p, &pos, POSENC_DTYPE_F32, b, (size_t)ROWS * DIM, &traced, NULL);
        size_t items = 0;
        bool times = trace.chunks == 2 && trace.pooled == pooled;
        for (int i = 0; times && i < trace.chunks; i++) {
            items += trace.items[i];
            times = trace.start_ns[i] >= trace.submit_ns && trace.end_ns[i] >= trace.start_ns[i] &&
                    trace.done_ns >= trace.end_ns[i];
        }
        size_t shape[2] = {ROWS, DIM};
        check_same(pooled ? "traced table (pool) == untraced" : "traced table (no pool) == untraced", b, a,
                   (size_t)ROWS * DIM, CHECK_F32, shape, 2);
        CHECK(s1 == POSENC_OK && s2 == POSENC_OK && times && items == ROWS,
              "trace (%s): %d chunks, %zu rows, worker 1 started %.1f us after submit, busy %.1f / %.1f us",
              pooled ? "pool" : "no pool", trace.chunks, items,
              trace.chunks > 1 ? (double)(trace.start_ns[1] - trace.submit_ns) / 1e3 : -1.0,
              (double)(trace.end_ns[0] - trace.start_ns[0]) / 1e3,
              trace.chunks > 1 ? (double)(trace.end_ns[1] - trace.start_ns[1]) / 1e3 : -1.0);
    }
    free(a);
    free(b);
    posenc_threadpool_free(pool);
}

/* Pieces are claimed, not assigned: a worker held up on its first piece (as
 * by a late wake-up or a busy vCPU) leaves the rest to the other, every row is
 * still done exactly once, and every piece starts on a multiple of the grain. */
typedef struct {
    _Atomic int hits[1000];
    _Atomic int misaligned, slow_started, other_rows;
} claim_probe;

static void probe_piece(void *vctx, size_t worker, size_t begin, size_t end) {
    claim_probe *p = vctx;
    if (begin % 10 != 0) atomic_fetch_add(&p->misaligned, 1);
    if (worker == 0 && atomic_exchange(&p->slow_started, 1) == 0) {
        /* held up until the other worker has done more than half the rows (a started
         * thread can take ms to run on a loaded host), at most 5 s */
        struct timespec nap = {0, 1000 * 1000};
        for (int i = 0; i < 5000 && atomic_load(&p->other_rows) <= 500; i++) nanosleep(&nap, NULL);
    }
    for (size_t i = begin; i < end; i++) atomic_fetch_add(&p->hits[i], 1);
    if (worker != 0) atomic_fetch_add(&p->other_rows, (int)(end - begin));
}

static void test_claimed_pieces(void) {
    posenc_threadpool *pool = NULL;
    CHECK(posenc_threadpool_create(2, &pool, NULL) == POSENC_OK, "pool of 2 for the claiming test");
    for (int pooled = 0; pooled < 2; pooled++) {
        static claim_probe probe; /* 4 KB: kept off the stack */
        memset(&probe, 0, sizeof probe);
        posenc_exec_trace trace;
        posenc_exec_run_ run = {{2, POSENC_PATH_SCALAR, pooled ? pool : NULL, &trace}, true};
        posenc_parallel_for_(&run, 2, 1000, 10, probe_piece, &probe);
        int once = 0;
        for (int i = 0; i < 1000; i++) once += atomic_load(&probe.hits[i]) == 1;
        CHECK(once == 1000 && atomic_load(&probe.misaligned) == 0 && trace.chunks == 2 &&
                  trace.items[0] + trace.items[1] == 1000 && trace.items[1] > trace.items[0],
              "claimed pieces (%s): %d of 1000 rows done once, pieces on the grain, worker 0 (held up on its first "
              "piece, if it got one) did %zu rows, worker 1 %zu",
              pooled ? "pool" : "no pool", once, trace.items[0], trace.items[1]);
    }
    posenc_threadpool_free(pool);
}

int main(void) {
    test_threadpool();
    test_other_drivers();
    test_trace();
    test_claimed_pieces();
    return check_finish();
}
