/* test_sincos_dd.c: the double-double sin/cos behind the sinusoid and RoPE
 * anchors (src/common/sincos_dd.h, an internal interface: this test includes it).
 * - accuracy against references that are exact enough to judge it:
 *   long double sinl/cosl at angles p*w that are exact in long double (w with
 *   24 significant bits), tolerance 1e-19 (sinl's own error is ~5e-20), and,
 *   where GCC's __float128 is available, quadmath's sinq/cosq (113 bits) with
 *   tolerance 1e-25 + |p w| 2^-100 (the reduction's error grows with n);
 * - rotations: 32 chained rotations by 64w land on the direct value at 2048w
 *   (the anchor chain of one sinusoid block), within 32 x 1e-25;
 * - the scalar, AVX2 and AVX-512 builds give the same bits (n = 515: vector
 *   bodies and scalar leftovers);
 * - posenc_sincos_run_ (double (sin, cos) for a position alone) against the
 *   double-doubles over 3000 positions x 515 pairs (p up to 2^39, angles up to
 *   ~2^39): off by < 2^-48 (the worst measured is 13 x 2^-53; 2^-48 is 32 x 2^-53),
 *   256x inside the 2^-42 that RoPE's near-tie check
 *   assumes for it (POSENC_RUN_ERROR), and the same bits on every path. */
#include "check.h"
#include "sincos_dd.h"

#ifdef POSENC_HAVE_QUADMATH
#include <quadmath.h>
#endif

enum { N = 515 };
static const posenc_kernel_path paths[] = {POSENC_PATH_SCALAR, POSENC_PATH_AVX2, POSENC_PATH_AVX512};

typedef struct {
    double v[4][N];
} dd_arrays;

static posenc_dd_sincos_ view(dd_arrays *a) { return (posenc_dd_sincos_){a->v[0], a->v[1], a->v[2], a->v[3]}; }

/* Frequencies of a d = 1030 vaswani table, split into double-doubles. */
static void vaswani_frequencies(double *w_hi, double *w_lo) {
    for (int k = 0; k < N; k++) {
        long double w = expl(-((long double)k * 2 / (2 * N)) * logl(10000.0L));
        w_hi[k] = (double)w;
        w_lo[k] = (double)(w - (long double)w_hi[k]);
    }
}

static void test_against_sinl(void) {
    static double w_hi[N], w_lo[N];
    static dd_arrays out;
    for (int k = 0; k < N; k++) { /* 24-bit frequencies: p*w exact in long double for p < 2^40 */
        long double w = expl(-((long double)k * 2 / (2 * N)) * logl(10000.0L));
        w_hi[k] = ldexp(nearbyint(ldexp((double)w, 23 - ilogb((double)w))), ilogb((double)w) - 23);
        w_lo[k] = 0.0;
    }
    const double ps[] = {0, 1, 64, 2047, 2048, 65504, 1e6, 16777215, 2147483653.0, 1e11};
    for (size_t pi = 0; pi < sizeof ps / sizeof ps[0]; pi++) {
        posenc_dd_sincos_ o = view(&out);
        posenc_sincos_dd_(POSENC_PATH_SCALAR, N, ps[pi], w_hi, w_lo, &o);
        /* the values agree far below a double's precision, so the check compares their
         * differences (dd - sinl/cosl, taken in long double) with 0: row 0 sin, row 1 cos */
        static double diff[2 * N], zero[2 * N], tol[2 * N];
        for (int k = 0; k < N; k++) {
            long double x = (long double)ps[pi] * w_hi[k];
            diff[k] = (double)((long double)o.s_hi[k] + o.s_lo[k] - sinl(x));
            diff[N + k] = (double)((long double)o.c_hi[k] + o.c_lo[k] - cosl(x));
            tol[k] = tol[N + k] = 1e-19; /* sinl's own error */
        }
        char label[96];
        snprintf(label, sizeof label, "p=%.0f: dd - sinl/cosl (row 0 sin, 1 cos), tol 1e-19", ps[pi]);
        size_t shape[2] = {2, N};
        check_within(label, diff, zero, tol, 2 * N, shape, 2);
    }
}

#ifdef POSENC_HAVE_QUADMATH
static void test_against_quadmath(void) {
    static double w_hi[N], w_lo[N];
    static dd_arrays out;
    vaswani_frequencies(w_hi, w_lo);
    const double ps[] = {0, 1, 64, 2047, 2048, 65504, 1e6, 16777215, 2147483653.0, 1e11};
    for (size_t pi = 0; pi < sizeof ps / sizeof ps[0]; pi++) {
        posenc_dd_sincos_ o = view(&out);
        posenc_sincos_dd_(POSENC_PATH_SCALAR, N, ps[pi], w_hi, w_lo, &o);
        static double diff[2 * N], zero[2 * N], tol[2 * N]; /* differences in __float128, row 0 sin, 1 cos */
        for (int k = 0; k < N; k++) {
            __float128 x = (__float128)ps[pi] * ((__float128)w_hi[k] + w_lo[k]);
            diff[k] = (double)((__float128)o.s_hi[k] + o.s_lo[k] - sinq(x));
            diff[N + k] = (double)((__float128)o.c_hi[k] + o.c_lo[k] - cosq(x));
            tol[k] = tol[N + k] = 1e-25 + (double)fabsq(x) * 0x1p-100;
        }
        char label[96];
        snprintf(label, sizeof label, "p=%.0f: dd - quadmath (row 0 sin, 1 cos), tol 1e-25 + |pw| 2^-100", ps[pi]);
        size_t shape[2] = {2, N};
        check_within(label, diff, zero, tol, 2 * N, shape, 2);
    }
}
#endif

static void test_anchor_chain(void) {
    static double w_hi[N], w_lo[N];
    static dd_arrays chain, rot, direct;
    vaswani_frequencies(w_hi, w_lo);
    posenc_dd_sincos_ c = view(&chain), r = view(&rot), d = view(&direct);
    posenc_sincos_dd_(POSENC_PATH_SCALAR, N, 0x1p30, w_hi, w_lo, &c);
    posenc_sincos_dd_(POSENC_PATH_SCALAR, N, 64, w_hi, w_lo, &r);
    for (int i = 0; i < 32; i++) posenc_rotate_dd_(POSENC_PATH_SCALAR, N, &c, &r);
    posenc_sincos_dd_(POSENC_PATH_SCALAR, N, 0x1p30 + 2048, w_hi, w_lo, &d);
    /* hi and lo differences of close values are exact in long double. Tolerance: the
     * start and the direct value each within 1e-25 + |p w| 2^-100 (w <= 1, the quadmath
     * bound above), plus 32 rotations each off by rot(64 w)'s 1e-25 + 64 2^-100 */
    long double tol = 2 * (1e-25L + (0x1p30L + 2048) * 0x1p-100L) + 32 * (1e-25L + 64 * 0x1p-100L);
    static double diff[2 * N], zero[2 * N], tols[2 * N]; /* chain - direct, row 0 sin, 1 cos */
    for (int k = 0; k < N; k++) {
        diff[k] = (double)(((long double)c.s_hi[k] - d.s_hi[k]) + ((long double)c.s_lo[k] - d.s_lo[k]));
        diff[N + k] = (double)(((long double)c.c_hi[k] - d.c_hi[k]) + ((long double)c.c_lo[k] - d.c_lo[k]));
        tols[k] = tols[N + k] = (double)tol;
    }
    size_t shape[2] = {2, N};
    check_within("2^30 + 32 rotations by 64w - direct 2^30 + 2048 (row 0 sin, 1 cos), tol: the two end values' "
                 "error bounds + 32 rotation errors", diff, zero, tols, 2 * N, shape, 2);
}

static void test_paths_identical(void) {
    static double w_hi[N], w_lo[N];
    static dd_arrays got[3], by;
    vaswani_frequencies(w_hi, w_lo);
    posenc_dd_sincos_ b = view(&by);
    posenc_sincos_dd_(POSENC_PATH_SCALAR, N, 64, w_hi, w_lo, &b);
    for (int pi = 0; pi < 3; pi++) {
        if (!posenc_kernel_path_supported(paths[pi])) {
            printf("  skip  %s: not supported here\n", posenc_kernel_path_name(paths[pi]));
            continue;
        }
        posenc_dd_sincos_ g = view(&got[pi]);
        posenc_sincos_dd_(paths[pi], N, 123456789.0, w_hi, w_lo, &g);
        posenc_rotate_dd_(paths[pi], N, &g, &b);
        char label[96];
        snprintf(label, sizeof label, "%s sincos + rotate (n=%d) == scalar (rows s_hi s_lo c_hi c_lo)",
                 posenc_kernel_path_name(paths[pi]), N);
        size_t shape[2] = {4, N};
        check_same(label, &got[pi], &got[0], 4 * N, CHECK_F64, shape, 2);
    }
}

/* positions: small, mid and up to 2^39 (|p w| < 2^40 for w <= 1), deterministic */
static double run_position(int i) {
    uint64_t x = (uint64_t)i * 0x9e3779b97f4a7c15ull;
    x ^= x >> 29;
    if (i < 1000) return (double)i;
    if (i < 2000) return (double)(x % (1u << 20));
    return (double)(x % ((uint64_t)1 << 39));
}

static void test_double_run(void) {
    enum { POSITIONS = 3000 };
    static double w_hi[N], w_lo[N], s[3][N], c[3][N];
    static dd_arrays ref;
    vaswani_frequencies(w_hi, w_lo);
    double worst = 0, worst_p = 0;
    int worst_k = 0;
    size_t differ = 0, values = 0;
    for (int i = 0; i < POSITIONS; i++) {
        double p = run_position(i);
        posenc_dd_sincos_ r = view(&ref);
        posenc_sincos_dd_(POSENC_PATH_SCALAR, N, p, w_hi, w_lo, &r);
        for (int pi = 0; pi < 3; pi++) {
            if (!posenc_kernel_path_supported(paths[pi])) continue;
            posenc_sincos_run_(paths[pi], N, p, w_hi, w_lo, s[pi], c[pi]);
            for (int k = 0; k < N && pi > 0; k++)
                differ += memcmp(&s[pi][k], &s[0][k], 8) != 0 || memcmp(&c[pi][k], &c[0][k], 8) != 0;
        }
        for (int k = 0; k < N; k++) {
            double es = fabs((s[0][k] - ref.v[0][k]) - ref.v[1][k]), ec = fabs((c[0][k] - ref.v[2][k]) - ref.v[3][k]);
            double e = fmax(es, ec);
            values += 2;
            if (e > worst || e != e) {
                worst = e != e ? INFINITY : e;
                worst_p = p;
                worst_k = k;
            }
        }
    }
    CHECK(worst < 0x1p-48, "posenc_sincos_run_ vs double-double over %zu values: worst %.3g = %.2f x 2^-53 at p %.0f "
          "pair %d (bound 2^-48 = 32 x 2^-53)", values, worst, worst * 0x1p53, worst_p, worst_k);
    CHECK(differ == 0, "posenc_sincos_run_: AVX2 and AVX-512 builds == scalar on every value (%zu differ)", differ);
}

int main(void) {
    test_against_sinl();
    test_double_run();
#ifdef POSENC_HAVE_QUADMATH
    test_against_quadmath();
#else
    printf("  skip  quadmath reference: no __float128 / libquadmath in this build\n");
#endif
    test_anchor_chain();
    test_paths_identical();
    return check_finish();
}
