/* write_ceiling.c: where the time of writing one buffer goes, for the
 * sinusoid table's ceiling (docs/benchmarks.md, "The sinusoid on two threads").
 *
 * `posenc bench` compares a table writer with memset of the same buffer. On a
 * machine whose L3 holds a large part of that buffer (here 32 MiB of L3, a
 * 32 MiB table), memset returns with part of its writes still in the cache and
 * leaves them for whatever runs next; the table's streaming stores go past the
 * cache and are done when the call returns. This program times, on 1..N
 * threads, each writer three ways:
 *   clean     from a flushed buffer (nothing of it in any cache);
 *   after     right after a memset of the buffer (pays for memset's leftovers);
 *   charged   from a flushed buffer, plus writing back what it left in the
 *             cache (a flush right after, less the time a flush of a clean
 *             buffer takes).
 * Writers: memset, a streaming-store memset, the planned sinusoid table and
 * the unplanned one (posenc_sinusoid_plan_table, posenc_sinusoid_table_exec).
 *
 *   build/bench/bench_write_ceiling [--mib N] [--threads T] [--reps R]
 *
 * Medians of R repetitions, alternating the writers, so a change of the
 * machine's bandwidth in the middle touches all of them alike. x86-64 only
 * (clflush, streaming stores); elsewhere it says so and exits 0. */
#define _GNU_SOURCE
#include "posenc.h"
#include "bench_timing.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__SSE2__)
#include <emmintrin.h>

enum { W_MEMSET, W_STREAM, W_PLANNED, W_TABLE, W_COUNT, FLUSH = W_COUNT };
static const char *const writer_names[W_COUNT] = {"memset", "memset, streaming stores", "table, planned",
                                                  "table"};

typedef struct {
    char *buf;
    size_t bytes;
    int threads;
    pthread_barrier_t start, done;
    int op; /* what the helpers run next; -1 ends them */
    posenc_sinusoid_plan *plan;
    posenc_sinusoid_params params;
    posenc_positions positions;
    posenc_exec exec;
    size_t count; /* floats in the table */
} bench_state;

/* thread `part`'s share of a memset / streaming memset / flush */
static void run_part(bench_state *s, int part) {
    size_t chunk = s->bytes / (size_t)s->threads, at = chunk * (size_t)part;
    char *p = s->buf + at;
    if (s->op == W_MEMSET) {
        memset(p, 0x5a, chunk);
    } else if (s->op == W_STREAM) {
        __m128i v = _mm_set1_epi8(0x5a);
        for (size_t i = 0; i + 16 <= chunk; i += 16) _mm_stream_si128((__m128i *)(void *)(p + i), v);
        _mm_sfence();
    } else {
        for (size_t i = 0; i < chunk; i += 64) _mm_clflush(p + i);
        _mm_mfence();
    }
}

static void *helper(void *arg) {
    bench_state *s = ((void **)arg)[0];
    int part = (int)(intptr_t)((void **)arg)[1];
    for (;;) {
        pthread_barrier_wait(&s->start);
        if (s->op < 0) return NULL;
        run_part(s, part);
        pthread_barrier_wait(&s->done);
    }
}

/* one pass of op on all threads; the tables run on posenc's own pool */
static int run_op(bench_state *s, int op) {
    posenc_error err;
    posenc_status st = POSENC_OK;
    if (op == W_PLANNED) st = posenc_sinusoid_plan_table(s->plan, POSENC_DTYPE_F32, s->buf, s->count, &s->exec, &err);
    else if (op == W_TABLE)
        st = posenc_sinusoid_table_exec(&s->params, &s->positions, POSENC_DTYPE_F32, s->buf, s->count, &s->exec, &err);
    else {
        s->op = op;
        if (s->threads > 1) pthread_barrier_wait(&s->start);
        run_part(s, 0);
        if (s->threads > 1) pthread_barrier_wait(&s->done);
    }
    if (st != POSENC_OK) fprintf(stderr, "bench_write_ceiling: %s\n", err.message);
    return st == POSENC_OK ? 0 : -1;
}

static int measure(int threads, size_t mib, int reps) {
    bench_state s = {0};
    s.threads = threads;
    s.bytes = mib << 20;
    s.count = s.bytes / sizeof(float);
    const int32_t dim = 1024;
    posenc_error err;
    s.buf = aligned_alloc((size_t)2 << 20, s.bytes);
    if (!s.buf) {
        fprintf(stderr, "bench_write_ceiling: cannot allocate %zu MiB\n", mib);
        return 1;
    }
    memset(s.buf, 1, s.bytes); /* fault every page in before timing */
    posenc_sinusoid_params_default(&s.params, dim);
    s.positions.start = 0;
    s.positions.count = s.count / (size_t)dim;
    posenc_threadpool *pool = NULL;
    if (posenc_sinusoid_plan_create(&s.params, &s.positions, NULL, &s.plan, &err) != POSENC_OK ||
        posenc_threadpool_create(threads, &pool, &err) != POSENC_OK) {
        fprintf(stderr, "bench_write_ceiling: %s\n", err.message);
        posenc_sinusoid_plan_free(s.plan);
        free(s.buf);
        return 1;
    }
    posenc_exec_default(&s.exec);
    s.exec.threads = threads;
    s.exec.pool = pool;
    pthread_barrier_init(&s.start, NULL, (unsigned)threads);
    pthread_barrier_init(&s.done, NULL, (unsigned)threads);
    pthread_t ids[POSENC_MAX_THREADS];
    void *args[POSENC_MAX_THREADS][2];
    int started = 1;
    for (; started < threads; started++) {
        args[started][0] = &s;
        args[started][1] = (void *)(intptr_t)started;
        if (pthread_create(&ids[started], NULL, helper, args[started]) != 0) break;
    }
    int rc = started == threads ? 0 : 1;
    double clean[W_COUNT][101], after[W_COUNT][101], charged[W_COUNT][101], flush_clean[101];
    for (int r = 0; r < reps && rc == 0; r++) {
        for (int w = 0; w < W_COUNT && rc == 0; w++) {
            double t0, t1;
            run_op(&s, FLUSH);
            t0 = bench_now_ms();
            rc |= run_op(&s, w);
            clean[w][r] = bench_now_ms() - t0;

            run_op(&s, FLUSH);
            run_op(&s, W_MEMSET);
            t0 = bench_now_ms();
            rc |= run_op(&s, w);
            after[w][r] = bench_now_ms() - t0;

            run_op(&s, FLUSH);
            t0 = bench_now_ms();
            rc |= run_op(&s, w);
            run_op(&s, FLUSH);
            t1 = bench_now_ms();
            charged[w][r] = t1 - t0;
        }
        double t0 = bench_now_ms();
        run_op(&s, FLUSH); /* the buffer is clean after the last flush: this is the bare cost */
        flush_clean[r] = bench_now_ms() - t0;
    }
    if (rc == 0) {
        double bare = bench_median(flush_clean, reps);
        printf("| writer, %zu MiB | threads | clean: ms, GB/s | after a memset: ms | its write-back charged: ms, GB/s |\n"
               "|---|---|---|---|---|\n",
               mib);
        for (int w = 0; w < W_COUNT; w++) {
            double c = bench_median(clean[w], reps), a = bench_median(after[w], reps), g = bench_median(charged[w], reps) - bare;
            printf("| %s | %d | %.3f, %.1f | %.3f | %.3f, %.1f |\n", writer_names[w], threads, c,
                   (double)s.bytes / (c * 1e6), a, g, (double)s.bytes / (g * 1e6));
        }
        printf("(a flush of the clean buffer: %.3f ms, subtracted from \"charged\")\n\n", bare);
    }
    s.op = -1;
    if (threads > 1 && started == threads) pthread_barrier_wait(&s.start);
    for (int k = 1; k < started; k++) pthread_join(ids[k], NULL);
    pthread_barrier_destroy(&s.start);
    pthread_barrier_destroy(&s.done);
    posenc_threadpool_free(pool);
    posenc_sinusoid_plan_free(s.plan);
    free(s.buf);
    return rc;
}

int main(int argc, char **argv) {
    size_t mib = 32;
    int max_threads = 2, reps = 21;
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && !strcmp(argv[i], "--mib")) mib = (size_t)strtoul(argv[++i], NULL, 10);
        else if (i + 1 < argc && !strcmp(argv[i], "--threads")) max_threads = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--reps")) reps = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_write_ceiling [--mib N (4..4096)] [--threads T (1..%d)] [--reps R (5..101)]\n",
                    POSENC_MAX_THREADS);
            return 2;
        }
    }
    if (mib < 4 || mib > 4096 || max_threads < 1 || max_threads > POSENC_MAX_THREADS || reps < 5 || reps > 101) {
        fprintf(stderr, "bench_write_ceiling: --mib 4..4096, --threads 1..%d, --reps 5..101\n", POSENC_MAX_THREADS);
        return 2;
    }
    printf("bench_write_ceiling: medians of %d alternating repetitions, 1 MiB = 2^20 bytes, GB/s = 10^9 bytes/s\n\n",
           reps);
    for (int t = 1; t <= max_threads; t++)
        if (measure(t, mib, reps) != 0) return 1;
    return 0;
}
#else
int main(void) {
    puts("bench_write_ceiling: x86-64 only (clflush, streaming stores); skipped");
    return 0;
}
#endif
