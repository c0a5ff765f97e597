/* blas.c: the lab's matrix products through OpenBLAS, loaded when the lab
 * first needs it (dlopen), not when posenc starts.
 *
 * Linked directly, OpenBLAS's constructor started a thread per core in every
 * posenc process, even `posenc table`; under an address-space limit
 * (ulimit -v 100000) that thread failed to get its buffers and spun, so every
 * command hung at 100% CPU. Loaded here, only the commands that train or
 * evaluate a model load it, and with OPENBLAS_NUM_THREADS=1 unless the
 * caller set it: the lab runs sgemm single-threaded inside its own tasks
 * anyway (ops.c), so OpenBLAS's own threads were never used.
 *
 * OpenBLAS also mallocs a 128 MiB buffer in each thread that calls sgemm and,
 * when that fails, retries forever: under `ulimit -v 200000` a training run
 * hung (glibc's arena lock, OpenBLAS's blas_memory_alloc). Below the address
 * space one sgemm thread needs (LAB_BLAS_MIN_ADDRESS_SPACE) the lab refuses,
 * naming the limit, instead of starting. A limit above it with several
 * threads and a big model can still be too small: OpenBLAS gives no way to
 * ask (docs/lab.md).
 *
 * The resolved entry points are written once (pthread_once) and only read
 * afterwards. */
#define _GNU_SOURCE /* setenv */
#include "lab_internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>

#define LAB_BLAS_LIBRARY "libopenblas.so.0"
/* OpenBLAS's per-thread buffer (128 MiB + a page on x86-64) plus the program
 * and a small model: a 195 MiB limit hung, 390 MiB ran (2 threads, d_model 16) */
#define LAB_BLAS_MIN_ADDRESS_SPACE ((rlim_t)264 << 20)

typedef void (*sgemm_fn)(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE, blasint, blasint, blasint,
                         float, const float *, blasint, const float *, blasint, float, float *, blasint);
typedef void (*set_threads_fn)(int);

static pthread_once_t blas_once = PTHREAD_ONCE_INIT;
static sgemm_fn blas_sgemm;
static char blas_problem[200];

static void blas_load_once(void) {
    if (!getenv("OPENBLAS_NUM_THREADS")) setenv("OPENBLAS_NUM_THREADS", "1", 0);
    void *lib = dlopen(LAB_BLAS_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        snprintf(blas_problem, sizeof blas_problem, "%s", why ? why : "not found");
        return;
    }
    set_threads_fn set_threads = (set_threads_fn)(uintptr_t)dlsym(lib, "openblas_set_num_threads");
    sgemm_fn sgemm = (sgemm_fn)(uintptr_t)dlsym(lib, "cblas_sgemm");
    if (!sgemm) {
        snprintf(blas_problem, sizeof blas_problem, "%s has no cblas_sgemm", LAB_BLAS_LIBRARY);
        return;
    }
    if (set_threads) set_threads(1); /* the caller's OPENBLAS_NUM_THREADS too: the bits depend on it */
    blas_sgemm = sgemm;
}

posenc_status lab_blas_load(posenc_error *err) {
    struct rlimit limit;
    if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
        limit.rlim_cur < LAB_BLAS_MIN_ADDRESS_SPACE)
        return lab_fail(err, POSENC_ERR_LIMIT,
                        "the lab needs at least %llu MiB of address space (OpenBLAS reserves 128 MiB in each "
                        "thread that multiplies matrices, and retries forever when it cannot), but this process may "
                        "use %llu MiB (ulimit -v %llu): raise the limit",
                        (unsigned long long)(LAB_BLAS_MIN_ADDRESS_SPACE >> 20),
                        (unsigned long long)(limit.rlim_cur >> 20), (unsigned long long)(limit.rlim_cur >> 10));
    pthread_once(&blas_once, blas_load_once);
    if (blas_sgemm) return POSENC_OK;
    return lab_fail(err, POSENC_ERR_UNSUPPORTED,
                    "the lab needs OpenBLAS (%s) and cannot load it: %s; install libopenblas0-pthread",
                    LAB_BLAS_LIBRARY, blas_problem);
}

void lab_sgemm(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, blasint m, blasint n,
               blasint k, float alpha, const float *a, blasint lda, const float *b, blasint ldb, float beta, float *c,
               blasint ldc) {
    /* through pthread_once every time (after the first, an acquire load): the lab's workers may
     * be the first to call (tests drive the ops without a model), and reading blas_sgemm before
     * the once would race with the thread that writes it (TSan, test_lab_grad) */
    pthread_once(&blas_once, blas_load_once);
    if (!blas_sgemm) { /* model creation checks first: not reached */
        fprintf(stderr, "posenc lab: cannot load OpenBLAS (%s): %s\n", LAB_BLAS_LIBRARY, blas_problem);
        abort();
    }
    blas_sgemm(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
