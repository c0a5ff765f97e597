/* bench_timing.h: what the standalone programs of bench/ share: a monotonic
 * clock in ms, the median of a set of timings and a huge-page-advised buffer
 * (posenc bench, cli/cmd_bench.c, keeps its own copies: the tool's rooms include
 * nothing outside them, tests/py/test_file_calls.py).
 * Static functions in a header, so each program still builds from one .c file.
 * Include after defining _GNU_SOURCE (clock_gettime, madvise). */
#ifndef POSENC_BENCH_TIMING_H
#define POSENC_BENCH_TIMING_H

#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

static inline double bench_now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static inline int bench_compare_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of t[0..n-1] (n >= 1); sorts t. */
static inline double bench_median(double *t, int n) {
    qsort(t, (size_t)n, sizeof *t, bench_compare_double);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* 2 MiB-aligned and huge-page advised, so a buffer of tens of MiB is not timed
 * through TLB misses (a 64 MiB q on 4 KiB pages ran 30-50% slower here); free()
 * releases it. NULL if out of memory. */
static inline void *bench_alloc_huge(size_t bytes) {
    size_t huge = (size_t)2 << 20, rounded = (bytes + huge - 1) / huge * huge;
    void *p = aligned_alloc(huge, rounded);
#ifdef MADV_HUGEPAGE
    if (p) madvise(p, rounded, MADV_HUGEPAGE);
#endif
    return p;
}

#endif
