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
 * POSENC_LAB_BLAS=onednn takes oneDNN's dnnl_sgemm (Debian's libdnnl2, or 3)
 * instead, loaded the same way: on the lab's own shapes it measured 5-30%
 * faster than OpenBLAS 0.3.21 on the Zen 4 VM (docs/benchmarks.md, issue 43),
 * but it is not the default: its bits differ from OpenBLAS's, so runs made
 * with one do not reproduce with the other. oneDNN runs on OpenMP; the lab
 * calls it from its own pool, one product per task, so OMP_NUM_THREADS is set
 * to 1 before it loads (the caller's value too: the bits depend on it).
 * Unset or "openblas": OpenBLAS; anything else is refused, naming the choices.
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
#include <string.h>

#define LAB_BLAS_LIBRARY "libopenblas.so.0"
#define LAB_ONEDNN_LIBRARY "libdnnl.so.2"  /* Debian 12's libdnnl2 (oneDNN 2.x) */
#define LAB_ONEDNN_LIBRARY3 "libdnnl.so.3" /* Debian 13's libdnnl3: dnnl_sgemm is the same call */
/* OpenBLAS's per-thread buffer (128 MiB + a page on x86-64) plus the program
 * and a small model: a 195 MiB limit hung, 390 MiB ran (2 threads, d_model 16) */
#define LAB_BLAS_MIN_ADDRESS_SPACE ((rlim_t)264 << 20)

typedef void (*sgemm_fn)(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE, blasint, blasint, blasint,
                         float, const float *, blasint, const float *, blasint, float, float *, blasint);
typedef void (*set_threads_fn)(int);
/* oneDNN's row-major sgemm (dnnl.h; dnnl_dim_t is int64_t, the status an enum) */
typedef int (*dnnl_sgemm_fn)(char, char, int64_t, int64_t, int64_t, float, const float *, int64_t, const float *,
                             int64_t, float, float *, int64_t);

static pthread_once_t blas_once = PTHREAD_ONCE_INIT;
static sgemm_fn blas_sgemm;
static dnnl_sgemm_fn blas_dnnl;
static char blas_problem[200];
static const char *blas_library = LAB_BLAS_LIBRARY; /* the one chosen, for messages */

static void onednn_load(void) {
    blas_library = LAB_ONEDNN_LIBRARY;
    setenv("OMP_NUM_THREADS", "1", 1);
    void *lib = dlopen(LAB_ONEDNN_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (!lib && (lib = dlopen(LAB_ONEDNN_LIBRARY3, RTLD_NOW | RTLD_LOCAL)) != NULL) blas_library = LAB_ONEDNN_LIBRARY3;
    if (!lib) {
        const char *why = dlerror();
        snprintf(blas_problem, sizeof blas_problem, "%s", why ? why : "not found");
        return;
    }
    dnnl_sgemm_fn sgemm = (dnnl_sgemm_fn)(uintptr_t)dlsym(lib, "dnnl_sgemm");
    if (!sgemm) {
        snprintf(blas_problem, sizeof blas_problem, "%s has no dnnl_sgemm", blas_library);
        return;
    }
    blas_dnnl = sgemm;
}

static void blas_load_once(void) {
    const char *choice = getenv("POSENC_LAB_BLAS");
    if (choice && strcmp(choice, "onednn") == 0) {
        onednn_load();
        return;
    }
    if (choice && *choice && strcmp(choice, "openblas") != 0) {
        blas_library = "POSENC_LAB_BLAS";
        snprintf(blas_problem, sizeof blas_problem, "POSENC_LAB_BLAS is '%.60s'; it must be openblas or onednn",
                 choice);
        return;
    }
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
    if (blas_sgemm || blas_dnnl) return POSENC_OK;
    if (strncmp(blas_library, "libdnnl", 7) == 0)
        return lab_fail(err, POSENC_ERR_UNSUPPORTED,
                        "POSENC_LAB_BLAS=onednn asks for oneDNN (%s or %s), which cannot be loaded: %s; install "
                        "libdnnl2 (or libdnnl3), or unset POSENC_LAB_BLAS for OpenBLAS",
                        LAB_ONEDNN_LIBRARY, LAB_ONEDNN_LIBRARY3, blas_problem);
    if (strcmp(blas_library, LAB_BLAS_LIBRARY) != 0)
        return lab_fail(err, POSENC_ERR_INVALID_ARGUMENT, "%s", blas_problem);
    return lab_fail(err, POSENC_ERR_UNSUPPORTED,
                    "the lab needs OpenBLAS (%s) and cannot load it: %s; install libopenblas0-pthread",
                    LAB_BLAS_LIBRARY, blas_problem);
}

const char *lab_blas_library(void) {
    pthread_once(&blas_once, blas_load_once);
    return blas_sgemm || blas_dnnl ? blas_library : NULL;
}

void lab_sgemm(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, blasint m, blasint n,
               blasint k, float alpha, const float *a, blasint lda, const float *b, blasint ldb, float beta, float *c,
               blasint ldc) {
    /* through pthread_once every time (after the first, an acquire load): the lab's workers may
     * be the first to call (tests drive the ops without a model), and reading blas_sgemm before
     * the once would race with the thread that writes it (TSan, test_lab_grad) */
    pthread_once(&blas_once, blas_load_once);
    if (blas_dnnl) { /* the lab passes row-major only */
        (void)order;
        int status = blas_dnnl(ta == CblasTrans ? 'T' : 'N', tb == CblasTrans ? 'T' : 'N', m, n, k, alpha, a, lda, b,
                               ldb, beta, c, ldc);
        if (status != 0) { /* dnnl_success is 0; the lab's shapes are valid, so this is a bug */
            fprintf(stderr, "posenc lab: dnnl_sgemm failed (status %d) on %d x %d x %d\n", status, m, n, k);
            abort();
        }
        return;
    }
    if (!blas_sgemm) { /* model creation checks first: not reached */
        fprintf(stderr, "posenc lab: cannot load %s: %s\n", blas_library, blas_problem);
        abort();
    }
    blas_sgemm(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
