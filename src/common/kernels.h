/* kernels.h: private interface between entry points and the SIMD kernels
 * (scalar / AVX2 / AVX-512 builds of the same arithmetic) and the thread pool.
 * The *_avx2.c and *_avx512.c files are compiled with per-file -m flags
 * (top-level CMakeLists.txt) and are only ever called after the run-time probe. */
#ifndef POSENC_KERNELS_H
#define POSENC_KERNELS_H

#include "internal.h"

/* Whether the CPU runs the avx512 path and has AVX512_BF16 (cpu.c): the avx512
 * path's bf16 RoPE kernel then rounds with it (rope_avx512bf16.c). */
bool posenc_cpu_has_avx512bf16_(void);
/* The CPU quota of a cgroup, in whole cores rounded up, from its cgroup v2
 * cpu.max file, or else its v1 cpu.cfs_quota_us and cpu.cfs_period_us; 0 when
 * unlimited, absent or unreadable (posenc_cpu_count reads the process's own;
 * the paths are parameters so a test can hand it files). */
long posenc_cpu_quota_(const char *cpu_max_path, const char *quota_path, const char *period_path);

/* Work function for posenc_parallel_for_: worker number `worker` (0..threads-1,
 * for per-worker scratch the caller allocated) handles items [begin, end). */
typedef void (*posenc_range_fn_)(void *ctx, size_t worker, size_t begin, size_t end);
struct posenc_exec_run_;

/* Run fn over [0, count) on at most `threads` workers: the range is cut into
 * up to 8 pieces per worker whose boundaries are multiples of `grain` items
 * (so the cut never changes what a block computes), and each worker claims the
 * next unclaimed piece until none is left, so a worker that starts late or
 * runs slower takes fewer. fn may be called several times per worker, never
 * concurrently for one worker. Worker 0 is the calling thread, the others
 * run->exec.pool's workers if set (at most its size), else threads started for
 * this call; one that cannot be started leaves its pieces to the others.
 * Results never depend on threads or timing. */
void posenc_parallel_for_(const struct posenc_exec_run_ *run, int32_t threads, size_t count,
                          size_t grain, posenc_range_fn_ fn, void *ctx);

/* Resolved execution options of one call. exact_threads: the count came from
 * POSENC_THREADS, which tests use to force every split, even of tiny outputs. */
typedef struct posenc_exec_run_ {
    posenc_exec exec; /* exec.pool, when set, runs posenc_parallel_for_'s chunks */
    bool exact_threads;
} posenc_exec_run_;

posenc_status posenc_exec_resolve_(const posenc_exec *exec, posenc_exec *out, bool *exact_threads,
                                   posenc_error *err);
static inline posenc_status posenc_exec_run_resolve_(const posenc_exec *exec, posenc_exec_run_ *run,
                                                    posenc_error *err) {
    return posenc_exec_resolve_(exec, &run->exec, &run->exact_threads, err);
}
/* Threads worth using for `bytes` of output: at least 256 KiB per thread,
 * unless POSENC_THREADS forced the count. */
int32_t posenc_threads_for_bytes_(const posenc_exec_run_ *run, size_t bytes);

/* ---- sinusoidal rows (precise mode, contiguous positions) ---------------- */

/* Rows of a clean table (dim == 2 * pairs) between two anchors. run_s/run_c hold
 * the double (sin, cos) of the first row on entry; row 0 is stored from them and
 * each next row rotates them by the step (step_s, step_c) = (sin w, cos w):
 *   s' = s*step_c + c*step_s,  c' = c*step_c - s*step_s   (no FMA: same bits everywhere). */
typedef struct {
    int32_t pairs;
    posenc_layout layout;
    posenc_dtype dtype; /* F32 or F64 */
    bool stream;        /* non-temporal stores (rows 64-byte aligned) */
    const double *step_s, *step_c;
} posenc_sinusoid_rows_;

/* The double run drifts up to ~64 * 2.3e-16 between anchors, so a sine or
 * cosine near +-1 can come out a few ULPs past it (-1.0000000000000016 at
 * position 582197, dim 14; found by fuzz_table). f64 outputs are clamped to
 * [-1, 1]: never farther from the true value, and |value| <= 1 holds as users
 * assume. f32 needs nothing: the drift is far below half a float ULP at 1. */
static inline double posenc_clamp_unit_(double v) { return v > 1.0 ? 1.0 : v < -1.0 ? -1.0 : v; }

typedef void (*posenc_sinusoid_rows_fn_)(const posenc_sinusoid_rows_ *plan, double *run_s,
                                         double *run_c, void *out, size_t rows);
/* Pairs first_pair..pairs-1 of row r (rotating first when r > 0); the vector
 * kernels call it for their leftover pairs. Lives in a file built without FMA:
 * GCC 12 fuses scalar a*b+c*d into vfmsubadd in -mfma files even with
 * -ffp-contract=off, which would change the last bit. */
void posenc_sinusoid_row_tail_(const posenc_sinusoid_rows_ *plan, double *run_s, double *run_c,
                               void *out, size_t r, int32_t first_pair);
void posenc_sinusoid_rows_scalar_(const posenc_sinusoid_rows_ *plan, double *run_s,
                                  double *run_c, void *out, size_t rows);
void posenc_sinusoid_rows_avx2_(const posenc_sinusoid_rows_ *plan, double *run_s, double *run_c,
                                void *out, size_t rows);
void posenc_sinusoid_rows_avx512_(const posenc_sinusoid_rows_ *plan, double *run_s,
                                  double *run_c, void *out, size_t rows);

/* ---- streaming copies (bias fills) ---------------------------------------- */

/* dst[0..n) = src[0..n) with non-temporal stores where dst is aligned; call
 * posenc_store_fence_ before the data is handed to another thread. */
void posenc_stream_copy_f32_avx2_(float *dst, const float *src, size_t n);
void posenc_stream_copy_f32_avx512_(float *dst, const float *src, size_t n);
void posenc_store_fence_(void);

/* ---- bias fast paths (bias_fast.c); false = not applicable (not ranges) --- */

bool posenc_alibi_bias_fast_(const float *slopes, int32_t heads, posenc_alibi_form form,
                             const posenc_positions *queries, const posenc_positions *keys, float *out,
                             const posenc_exec *exec, posenc_status *status, posenc_error *err);
bool posenc_t5_bias_fast_(const posenc_t5_params *params, const float *table, int32_t heads,
                          const posenc_positions *queries, const posenc_positions *keys, float *out,
                          const posenc_exec *exec, posenc_status *status, posenc_error *err);

#endif
