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

/* The same for doubles. */
static inline int64_t check_ulp_f64(double a, double b) {
    int64_t ia, ib;
    memcpy(&ia, &a, 8);
    memcpy(&ib, &b, 8);
    if (ia < 0) ia = INT64_MIN - ia;
    if (ib < 0) ib = INT64_MIN - ib;
    uint64_t d = ia > ib ? (uint64_t)ia - (uint64_t)ib : (uint64_t)ib - (uint64_t)ia;
    return d > INT64_MAX ? INT64_MAX : (int64_t)d;
}

/* The same for IEEE half / bfloat16 bit patterns (both are sign-magnitude). */
static inline int64_t check_ulp_16(uint16_t a, uint16_t b) {
    int32_t ia = a & 0x8000 ? -(int32_t)(a & 0x7fff) : (int32_t)a;
    int32_t ib = b & 0x8000 ? -(int32_t)(b & 0x7fff) : (int32_t)b;
    return ia > ib ? ia - ib : ib - ia;
}

/* "[r, c]" (or "[i, j, k]") for flat index i of an array of the given shape;
 * "[i]" when shape is NULL or ndim < 2. */
static inline void check_index_text(char *out, size_t size, size_t flat, const size_t *shape, int ndim) {
    if (!shape || ndim < 2) {
        snprintf(out, size, "[%zu]", flat);
        return;
    }
    size_t idx[8] = {0}, rest = flat;
    if (ndim > 8) ndim = 8;
    for (int d = ndim - 1; d >= 0; d--) {
        size_t extent = shape[d] ? shape[d] : 1;
        idx[d] = rest % extent;
        rest /= extent;
    }
    size_t n = (size_t)snprintf(out, size, "[");
    for (int d = 0; d < ndim && n < size; d++) n += (size_t)snprintf(out + n, size - n, "%s%zu", d ? ", " : "", idx[d]);
    if (n < size) snprintf(out + n, size - n, "]");
}

/* Element kinds for check_same (F16 / BF16: uint16 bit patterns of those
 * formats, printed as their values). */
typedef enum { CHECK_F32, CHECK_F64, CHECK_I32, CHECK_I64, CHECK_U16, CHECK_U8, CHECK_F16, CHECK_BF16 } check_kind;

static inline size_t check_kind_size_(check_kind k) {
    return k == CHECK_F64 || k == CHECK_I64                            ? 8
           : k == CHECK_F32 || k == CHECK_I32                          ? 4
           : k == CHECK_U16 || k == CHECK_F16 || k == CHECK_BF16 ? 2
                                                                       : 1;
}

/* The check kind of a posenc dtype's elements (F32, F64, F16, BF16; else bytes). */
static inline check_kind check_kind_of(posenc_dtype dtype) {
    switch (dtype) {
    case POSENC_DTYPE_F32: return CHECK_F32;
    case POSENC_DTYPE_F64: return CHECK_F64;
    case POSENC_DTYPE_F16: return CHECK_F16;
    case POSENC_DTYPE_BF16: return CHECK_BF16;
    case POSENC_DTYPE_I32: return CHECK_I32;
    case POSENC_DTYPE_I64: return CHECK_I64;
    default: return CHECK_U8;
    }
}

static inline void check_value_text_(char *out, size_t size, const void *base, size_t i, check_kind k) {
    const unsigned char *p = (const unsigned char *)base + i * check_kind_size_(k);
    float f;
    double d;
    int32_t i32;
    int64_t i64;
    uint16_t u16;
    switch (k) {
    case CHECK_F32: memcpy(&f, p, 4), snprintf(out, size, "%.9g", (double)f); break;
    case CHECK_F64: memcpy(&d, p, 8), snprintf(out, size, "%.17g", d); break;
    case CHECK_I32: memcpy(&i32, p, 4), snprintf(out, size, "%d", (int)i32); break;
    case CHECK_I64: memcpy(&i64, p, 8), snprintf(out, size, "%lld", (long long)i64); break;
    case CHECK_U16: memcpy(&u16, p, 2), snprintf(out, size, "0x%04x", (unsigned)u16); break;
    case CHECK_U8: snprintf(out, size, "%u", (unsigned)*p); break;
    case CHECK_F16:
    case CHECK_BF16:
        memcpy(&u16, p, 2);
        snprintf(out, size, "%.6g (0x%04x)", (double)(k == CHECK_F16 ? posenc_f16_to_f32(u16) : posenc_bf16_to_f32(u16)),
                 (unsigned)u16);
        break;
    }
}

/* Bit-for-bit equality of n elements (floats as bits: -0 != 0, NaN payloads
 * count). Prints how many differ and, at the first one, where (multi-dim when
 * shape is given), both values and the ULP distance for the float kinds. */
static inline int check_same(const char *label, const void *got, const void *want, size_t n, check_kind kind,
                             const size_t *shape, int ndim) {
    size_t es = check_kind_size_(kind), bad = 0, first = 0;
    for (size_t i = 0; i < n; i++)
        if (memcmp((const unsigned char *)got + i * es, (const unsigned char *)want + i * es, es) != 0)
            if (bad++ == 0) first = i;
    if (bad == 0) {
        check_report_(1, "%s: all %zu equal, bit for bit", label, n);
        return 1;
    }
    char where[96], g[48], w[48], ulp[48] = "";
    check_index_text(where, sizeof where, first, shape, ndim);
    check_value_text_(g, sizeof g, got, first, kind);
    check_value_text_(w, sizeof w, want, first, kind);
    const unsigned char *gp = (const unsigned char *)got + first * es, *wp = (const unsigned char *)want + first * es;
    if (kind == CHECK_F32) {
        float a, b;
        memcpy(&a, gp, 4);
        memcpy(&b, wp, 4);
        snprintf(ulp, sizeof ulp, " (%lld ULP)", (long long)check_ulp_f32(a, b));
    } else if (kind == CHECK_F64) {
        double a, b;
        memcpy(&a, gp, 8);
        memcpy(&b, wp, 8);
        snprintf(ulp, sizeof ulp, " (%lld ULP)", (long long)check_ulp_f64(a, b));
    } else if (kind == CHECK_F16 || kind == CHECK_BF16) {
        uint16_t a, b;
        memcpy(&a, gp, 2);
        memcpy(&b, wp, 2);
        snprintf(ulp, sizeof ulp, " (%lld ULP)", (long long)check_ulp_16(a, b));
    }
    check_report_(0, "%s: %zu of %zu differ; first at %s: got %s, want %s%s", label, bad, n, where, g, w, ulp);
    return 0;
}

/* Compare got vs want (doubles) with |got-want| <= atol + rtol*|want| (NaN
 * matches only NaN). Prints the worst difference and where, the tolerance, how
 * many elements are beyond it and, on failure, the first of them with both
 * values (rows x `cols` columns; use check_near for other shapes). */
static inline int check_near(const char *label, const double *got, const double *want, size_t n, const size_t *shape,
                             int ndim, double atol, double rtol) {
    double worst = 0, worst_excess = -1;
    size_t where = 0, bad = 0, first = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs(got[i] - want[i]);
        if (isnan(got[i]) != isnan(want[i])) d = INFINITY;
        if (isnan(got[i]) && isnan(want[i])) d = 0;
        double tol = atol + rtol * fabs(want[i]);
        if (d > tol && bad++ == 0) first = i;
        if (d - tol > worst_excess) {
            worst_excess = d - tol;
            where = i;
        }
        if (d > worst) worst = d;
    }
    char at[96], at_first[96];
    check_index_text(at, sizeof at, where, shape, ndim);
    check_index_text(at_first, sizeof at_first, first, shape, ndim);
    if (bad == 0)
        check_report_(1, "%-58s max|diff| %.3g at %s (ours %.9g, ref %.9g); tol %.1g+%.1g*|ref|; 0 bad", label, worst, at,
                      n ? got[where] : 0.0, n ? want[where] : 0.0, atol, rtol);
    else
        check_report_(0, "%-58s max|diff| %.3g at %s; tol %.1g+%.1g*|ref|; %zu of %zu bad, first at %s: ours %.17g, "
                      "ref %.17g (|diff| %.3g > %.3g)", label, worst, at, atol, rtol, bad, n, at_first, got[first],
                      want[first], fabs(got[first] - want[first]), atol + rtol * fabs(want[first]));
    return bad == 0;
}

/* Every |got - want| <= max_ulp float32 ULPs (NaN matches only NaN). Prints
 * the worst distance and where, and on failure how many are beyond it and
 * the first of them with both values. */
static inline int check_ulp_within(const char *label, const float *got, const float *want, size_t n,
                                   const size_t *shape, int ndim, int64_t max_ulp) {
    int64_t worst = 0;
    size_t where = 0, bad = 0, first = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t u = isnan(got[i]) || isnan(want[i]) ? (isnan(got[i]) && isnan(want[i]) ? 0 : INT64_MAX)
                                                    : check_ulp_f32(got[i], want[i]);
        if (u > max_ulp && bad++ == 0) first = i;
        if (u > worst) worst = u, where = i;
    }
    char at[96], at_first[96];
    check_index_text(at, sizeof at, where, shape, ndim);
    check_index_text(at_first, sizeof at_first, first, shape, ndim);
    if (bad == 0)
        check_report_(1, "%s: max %lld ULP at %s (ours %.9g, ref %.9g); tol %lld ULP; 0 bad", label, (long long)worst,
                      at, n ? (double)got[where] : 0.0, n ? (double)want[where] : 0.0, (long long)max_ulp);
    else
        check_report_(0, "%s: max %lld ULP at %s; tol %lld ULP; %zu of %zu bad, first at %s: ours %.9g, ref %.9g "
                      "(%lld ULP)", label, (long long)worst, at, (long long)max_ulp, bad, n, at_first,
                      (double)got[first], (double)want[first], (long long)check_ulp_f32(got[first], want[first]));
    return bad == 0;
}

/* Every |got - want| <= tol[i], a tolerance per element (NaN matches only NaN);
 * reports like check_near, the worst and first excess in units of tol[i]. */
static inline int check_within(const char *label, const double *got, const double *want, const double *tol, size_t n,
                               const size_t *shape, int ndim) {
    double worst = 0;
    size_t where = 0, bad = 0, first = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs(got[i] - want[i]);
        if (isnan(got[i]) != isnan(want[i])) d = INFINITY;
        if (isnan(got[i]) && isnan(want[i])) d = 0;
        if (d > tol[i] && bad++ == 0) first = i;
        if (d / tol[i] > worst) worst = d / tol[i], where = i;
    }
    char at[96], at_first[96];
    check_index_text(at, sizeof at, where, shape, ndim);
    check_index_text(at_first, sizeof at_first, first, shape, ndim);
    if (bad == 0)
        check_report_(1, "%s: max |diff| %.3f x tol at %s (ours %.17g, ref %.17g, tol %.3g); 0 bad", label, worst, at,
                      n ? got[where] : 0.0, n ? want[where] : 0.0, n ? tol[where] : 0.0);
    else
        check_report_(0, "%s: max |diff| %.3g x tol at %s; %zu of %zu bad, first at %s: ours %.17g, ref %.17g "
                      "(|diff| %.3g > tol %.3g)", label, worst, at, bad, n, at_first, got[first], want[first],
                      fabs(got[first] - want[first]), tol[first]);
    return bad == 0;
}

/* check_near for a [n / cols, cols] table (cols 0 = one column). */
static inline int check_close(const char *label, const double *got, const double *want, size_t n,
                       size_t cols, double atol, double rtol) {
    size_t shape[2] = {cols ? n / cols : n, cols ? cols : 1};
    return check_near(label, got, want, n, shape, 2, atol, rtol);
}

/* check_near for float32 arrays (widened exactly). */
static inline int check_near_f32(const char *label, const float *got, const float *want, size_t n, const size_t *shape,
                                 int ndim, double atol, double rtol) {
    double *g = (double *)malloc((n ? n : 1) * sizeof(double)), *w = (double *)malloc((n ? n : 1) * sizeof(double));
    if (!g || !w) {
        free(g), free(w);
        check_report_(0, "%s: out of memory for the comparison", label);
        return 0;
    }
    for (size_t i = 0; i < n; i++) g[i] = got[i], w[i] = want[i];
    int ok = check_near(label, g, w, n, shape, ndim, atol, rtol);
    free(g), free(w);
    return ok;
}

/* Folder of the peer goldens (tests/golden, part of the repository). A missing
 * folder is a broken checkout, never a reason to skip: the test fails here. */
static inline const char *check_golden_dir(void) {
    const char *dir = getenv("POSENC_GOLDEN_DIR");
#ifdef POSENC_GOLDEN_DIR_DEFAULT
    if (!dir || !*dir) dir = POSENC_GOLDEN_DIR_DEFAULT;
#endif
    char probe[4096];
    snprintf(probe, sizeof probe, "%s/manifest.json", dir ? dir : "");
    FILE *f = dir ? fopen(probe, "rb") : NULL;
    if (!f) {
        printf("FAIL: golden folder not found (%s): tests/golden is part of the repository; "
               "POSENC_GOLDEN_DIR overrides it\n",
               dir ? dir : "unset");
        exit(EXIT_FAILURE);
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
