/* check.h: a tiny test harness in the llm.c spirit: every comparison prints
 * its evidence (worst difference, where, tolerance) and the program exits
 * non-zero if anything failed. Header-only, static functions. */
#ifndef POSENC_CHECK_H
#define POSENC_CHECK_H

#include "posenc.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int passed;
    int failed;
} check_state;

static check_state check_global_;

#define SKIP_RETURN 77

static inline void check_report_(int ok, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    printf("%s ", ok ? "  ok  " : "  FAIL");
    vprintf(fmt, args);
    printf("\n");
    va_end(args);
    if (ok) check_global_.passed++;
    else check_global_.failed++;
}

#define CHECK(cond, ...) check_report_((cond) ? 1 : 0, __VA_ARGS__)
#define CHECK_STATUS(expr, want)                                                           \
    do {                                                                                   \
        posenc_error e_ = {0};                                                             \
        (void)e_;                                                                          \
        posenc_status s_ = (expr);                                                         \
        CHECK(s_ == (want), "%s -> %s (want %s)", #expr, posenc_strerror(s_),              \
              posenc_strerror(want));                                                      \
    } while (0)

static inline int check_finish(void) {
    printf("%d passed, %d failed\n", check_global_.passed, check_global_.failed);
    return check_global_.failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* Distance in units in the last place between two finite floats. */
static inline int64_t check_ulp_f32(float a, float b) {
    int32_t ia, ib;
    memcpy(&ia, &a, 4);
    memcpy(&ib, &b, 4);
    if (ia < 0) ia = INT32_MIN - ia;
    if (ib < 0) ib = INT32_MIN - ib;
    int64_t d = (int64_t)ia - (int64_t)ib;
    return d < 0 ? -d : d;
}

/* Compare got vs want (doubles) with |got-want| <= atol + rtol*|want|.
 * Prints max abs diff, where (as row, col for `cols` columns), and the tolerance. */
static inline int check_close(const char *label, const double *got, const double *want, size_t n,
                       size_t cols, double atol, double rtol) {
    double worst = 0, worst_excess = -1;
    size_t where = 0, bad = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs(got[i] - want[i]);
        if (isnan(got[i]) != isnan(want[i])) d = INFINITY;
        if (isnan(got[i]) && isnan(want[i])) d = 0;
        double tol = atol + rtol * fabs(want[i]);
        if (d > tol) bad++;
        if (d - tol > worst_excess) {
            worst_excess = d - tol;
            where = i;
        }
        if (d > worst) worst = d;
    }
    if (cols == 0) cols = 1;
    check_report_(bad == 0,
                  "%-58s max|diff| %.3g at [%zu,%zu] (ours %.9g, ref %.9g); tol %.1g+%.1g*|ref|; %zu bad",
                  label, worst, where / cols, where % cols, n ? got[where] : 0.0,
                  n ? want[where] : 0.0, atol, rtol, bad);
    return bad == 0;
}

/* Folder of the peer goldens; NULL (with a message) if absent. */
static inline const char *check_golden_dir(void) {
    const char *dir = getenv("POSENC_GOLDEN_DIR");
#ifdef POSENC_GOLDEN_DIR_DEFAULT
    if (!dir || !*dir) dir = POSENC_GOLDEN_DIR_DEFAULT;
#endif
    char probe[4096];
    snprintf(probe, sizeof probe, "%s/manifest.json", dir ? dir : "");
    FILE *f = dir ? fopen(probe, "rb") : NULL;
    if (!f) {
        printf("SKIP: golden folder not found (%s); set POSENC_GOLDEN_DIR to ../shared/golden\n",
               dir ? dir : "unset");
        return NULL;
    }
    fclose(f);
    return dir;
}

/* Load golden NAME.npy as float64 (count and shape returned); exits on failure. */
static inline double *check_load_golden(const char *dir, const char *name, posenc_array *shape_out) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.npy", dir, name);
    posenc_array a, f;
    posenc_error err = {0};
    if (posenc_npy_read(path, 0, &a, &err) != POSENC_OK ||
        posenc_array_to_f64(&a, &f, &err) != POSENC_OK) {
        printf("FAIL: cannot load golden %s: %s\n", name, err.message);
        exit(EXIT_FAILURE);
    }
    posenc_array_free(&a);
    if (shape_out) *shape_out = f;
    return f.data;
}

/* Parse a .npy 1.0 image made of `dict` (the header text) and data_bytes zero
 * bytes: the way tests feed hand-written, often hostile, headers to the parser. */
static inline posenc_status check_npy_parse_dict(const char *dict, size_t data_bytes, posenc_array *out,
                                                 posenc_error *err) {
    unsigned char buf[1024];
    size_t hl = strlen(dict);
    if (10 + hl + data_bytes > sizeof buf) {
        printf("FAIL: test header too long for check_npy_parse_dict\n");
        exit(EXIT_FAILURE);
    }
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (unsigned char)(hl & 0xff);
    buf[9] = (unsigned char)(hl >> 8);
    memcpy(buf + 10, dict, hl);
    memset(buf + 10 + hl, 0, data_bytes);
    return posenc_npy_parse(buf, 10 + hl + data_bytes, 0, out, err);
}

#endif
