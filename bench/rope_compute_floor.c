/* rope_compute_floor.c: whether each in-place RoPE kernel is bound by memory
 * or by its own arithmetic on this machine, for the x-ceiling figures of
 * `posenc bench` (docs/benchmarks.md, "RoPE: memory or arithmetic").
 *
 * On one thread, for each dtype x layout, alternating within every repetition:
 *   memory    q[4096x32x128] in place, positions 0..4095: posenc bench's row;
 *   cached    the same 4096 tokens (the same cos/sin work) as 8 calls of 512
 *             tokens on a q[512x32x128] that stays in the L3 after the first
 *             call (4 MiB in f16/bf16, 8 MiB in f32): the kernel's own rate
 *             with memory mostly out of the way;
 *   ceiling   x *= 1 over the full buffer, read + write: posenc bench's
 *             in-place ceiling.
 * memory and ceiling each start from a flushed buffer (x86-64: clflush).
 * Each figure is the median of R repetitions. "x ceiling" = ceiling / memory
 * (as posenc bench prints it); "floor x ceiling" = ceiling / cached: what the
 * kernel could reach if its arithmetic overlapped the memory traffic
 * perfectly. When cached is slower than the ceiling, the kernel cannot reach
 * the ceiling on this machine whatever its memory access does.
 *
 *   build/bench/bench_rope_compute_floor [--reps R]
 *
 * The per-call set-up of the 8 small calls (frequencies and the first
 * anchors: a few us each) is inside "cached", so its floor is slightly
 * pessimistic. */
#define _GNU_SOURCE /* madvise */
#include "posenc.h"
#include "bench_timing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) && defined(__SSE2__)
#include <emmintrin.h>
#endif

enum { TOKENS = 4096, HEADS = 32, DIM = 128, CACHED_TOKENS = 512, MAX_REPS = 99 };

/* Every line of the buffer out of the caches, so the memory row and the
 * ceiling both start from DRAM: with a q about the L3's size, whatever ran
 * just before would otherwise decide how much of it is still cached. */
static void flush(const void *p, size_t bytes) {
#if defined(__x86_64__) && defined(__SSE2__)
    for (size_t i = 0; i < bytes; i += 64) _mm_clflush((const char *)p + i);
    _mm_mfence();
#else
    (void)p, (void)bytes; /* elsewhere: no flush; the rows then depend on their order */
#endif
}

/* posenc bench's in-place ceiling: every float read, multiplied by 1, written
 * back (the factor through a volatile so the loop stays). */
static void scale_in_place(float *x, size_t n) {
    static const volatile float one = 1.0f;
    const float f = one;
    for (size_t i = 0; i < n; i++) x[i] *= f;
}

/* positions first .. first + count - 1 on a [count][HEADS][DIM] buffer (as
 * an explicit list in both rows, so both take the same cos/sin path) */
static int rotate(posenc_dtype dtype, posenc_layout layout, void *x, size_t count, int64_t first) {
    posenc_rope_params p;
    posenc_rope_params_default(&p, DIM);
    posenc_rope_view v = posenc_rope_view_contiguous(count, HEADS, DIM);
    int64_t *ids = malloc(count * sizeof *ids);
    if (!ids) return -1;
    for (size_t t = 0; t < count; t++) ids[t] = first + (int64_t)t;
    posenc_exec exec;
    posenc_exec_default(&exec);
    exec.threads = 1;
    posenc_error err;
    posenc_status st = posenc_rope_apply_exec(&p, 0, layout, &v, ids, 0, dtype, x, count * HEADS * DIM, &exec, &err);
    free(ids);
    if (st != POSENC_OK) fprintf(stderr, "rope_compute_floor: %s\n", err.message);
    return st == POSENC_OK ? 0 : -1;
}

int main(int argc, char **argv) {
    int reps = 15;
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && !strcmp(argv[i], "--reps")) reps = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--reps R]   (R in 1..%d)\n", argv[0], MAX_REPS);
            return 2;
        }
    }
    if (reps < 1 || reps > MAX_REPS) {
        fprintf(stderr, "rope_compute_floor: --reps must be in 1..%d, got %d\n", MAX_REPS, reps);
        return 2;
    }
    static const struct {
        posenc_dtype dtype;
        size_t elem;
        const char *name;
    } dtypes[] = {{POSENC_DTYPE_F32, 4, "f32"}, {POSENC_DTYPE_BF16, 2, "bf16"}, {POSENC_DTYPE_F16, 2, "f16"}};
    const size_t n = (size_t)TOKENS * HEADS * DIM;
    printf("One thread; q[%dx%dx%d] in place; medians of %d repetitions (ms).\n\n", TOKENS, HEADS, DIM, reps);
    printf("| kernel | memory | cached (8 x %d tokens) | ceiling | x ceiling | floor x ceiling | bound by |\n",
           CACHED_TOKENS);
    printf("|---|---|---|---|---|---|---|\n");
    for (int d = 0; d < 3; d++)
        for (int half = 0; half < 2; half++) {
            const size_t bytes = n * dtypes[d].elem;
            float *full = bench_alloc_huge(bytes), *small = bench_alloc_huge(bytes / (TOKENS / CACHED_TOKENS));
            if (!full || !small) {
                fprintf(stderr, "rope_compute_floor: cannot allocate %zu bytes\n", bytes);
                return 1;
            }
            /* 0x3c00 in each 16-bit half: 1.0 in f16, 0.0078 in bf16, a small finite f32 */
            memset(full, 0x3c, bytes);
            memset(small, 0x3c, bytes / (TOKENS / CACHED_TOKENS));
            posenc_layout layout = half ? POSENC_LAYOUT_HALF : POSENC_LAYOUT_INTERLEAVED;
            double memory[MAX_REPS], cached[MAX_REPS], ceiling[MAX_REPS];
            for (int r = -1; r < reps; r++) { /* r == -1: warm-up */
                flush(full, bytes);
                double t0 = bench_now_ms();
                if (rotate(dtypes[d].dtype, layout, full, TOKENS, 0)) return 1;
                double t1 = bench_now_ms();
                flush(full, bytes);
                double t1b = bench_now_ms();
                scale_in_place(full, bytes / sizeof(float));
                double t2 = bench_now_ms();
                /* the small q back into the cache (untimed), then the timed pass */
                if (rotate(dtypes[d].dtype, layout, small, CACHED_TOKENS, 0)) return 1;
                double t3 = bench_now_ms();
                for (int k = 0; k < TOKENS / CACHED_TOKENS; k++)
                    if (rotate(dtypes[d].dtype, layout, small, CACHED_TOKENS, (int64_t)k * CACHED_TOKENS)) return 1;
                double t4 = bench_now_ms();
                if (r >= 0) memory[r] = t1 - t0, ceiling[r] = t2 - t1b, cached[r] = t4 - t3;
            }
            double m = bench_median(memory, reps), c = bench_median(cached, reps), e = bench_median(ceiling, reps);
            printf("| %s %s | %.2f | %.2f | %.2f | %.2f | %.2f | %s |\n", dtypes[d].name,
                   half ? "half-split" : "interleaved", m, c, e, e / m, e / c, c > e ? "arithmetic" : "memory");
            fflush(stdout);
            free(full);
            free(small);
        }
    printf("\nx ceiling = ceiling / memory; floor x ceiling = ceiling / cached (the best this kernel's\n"
           "arithmetic allows); bound by: arithmetic when cached is slower than the ceiling.\n");
    return 0;
}
