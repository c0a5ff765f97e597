/* sincos_dd.h: double-double sin/cos of p * w_k and rotations, for the
 * anchors of the sinusoid and RoPE recurrences (sinusoidal.c, rope_fast.c).
 *
 * A double-double is hi + lo with |lo| <= ulp(hi)/2 (~106-bit mantissa). The
 * recurrences need the (sin, cos) they start from to be right to well under a
 * double ULP; sinl/cosl did that in ~150 ns per value (their Payne-Hanek
 * reduction), which made them most of a table's cost. These do it with
 * vectors: angle p * w in double-double, reduction mod 2 pi by a three-part
 * 2 pi, a Taylor series (to x^23) on a quarter of the angle, two angle
 * doublings. Error <= ~1e-22 absolute for |p * w| < 2^40 (tests/test_kernels.c
 * checks it against sinl/cosl). Only +, -, *, and fma (one rounding) are used,
 * in the same order on every path, so the scalar, AVX2 and AVX-512 builds give
 * the same bits. */
#ifndef POSENC_SINCOS_DD_H
#define POSENC_SINCOS_DD_H

#include "kernels.h"

#include <math.h>

/* n (sin, cos) pairs in double-double, as four arrays of n doubles. */
typedef struct {
    double *s_hi, *s_lo, *c_hi, *c_lo;
} posenc_dd_sincos_;

/* Largest |p * w| the reduction is exact enough for (n * 2pi products stay exact). */
#define POSENC_SINCOS_DD_MAX_ANGLE 0x1p40

/* Whether positions up to |p| <= most_abs, with frequencies w[0..n), stay in
 * the range above: |p| < 2^53 (exact doubles) and |p| max|w| < MAX_ANGLE.
 * Callers fall back to per-element long double evaluation otherwise. */
bool posenc_sincos_dd_covers_(long double most_abs, const long double *w, size_t n);
/* The same test with max|w| given (a caller that keeps it: a RoPE plan). */
bool posenc_sincos_dd_covers_top_(long double most_abs, long double top_abs_w);
/* w[k] as double-doubles: w_hi[k] + w_lo[k] == w[k] (exact for 64-bit long
 * doubles; to 106 bits where long double is wider). */
void posenc_split_dd_(const long double *w, size_t n, double *w_hi, double *w_lo);

/* out[k] = (sin, cos)(p * (w_hi[k] + w_lo[k])) for k < n. p must be an integer
 * below 2^53 in magnitude and |p * w| < POSENC_SINCOS_DD_MAX_ANGLE. */
void posenc_sincos_dd_(posenc_kernel_path path, size_t n, double p, const double *w_hi,
                       const double *w_lo, const posenc_dd_sincos_ *out);
/* run_s[k], run_c[k] = (sin, cos)(p * (w_hi[k] + w_lo[k])) in double, off by
 * ~13 x 2^-53 at most (measured: test_sincos_dd; the near-tie check of RoPE
 * allows POSENC_RUN_ERROR) (a quarter of the work of posenc_sincos_dd_: its reduction, then
 * double arithmetic), same bits on every path; for a position alone, whose
 * double-double nothing would step from. Same domain as posenc_sincos_dd_. */
void posenc_sincos_run_(posenc_kernel_path path, size_t n, double p, const double *w_hi, const double *w_lo,
                        double *run_s, double *run_c);
/* state[k] = state[k] rotated by by[k]: the (sin, cos) of the summed angles. */
void posenc_rotate_dd_(posenc_kernel_path path, size_t n, const posenc_dd_sincos_ *state,
                       const posenc_dd_sincos_ *by);

/* The double step of the recurrence (recurrence.h) over pairs [0, n): run =
 * run rotated by step, products and sums rounded separately (same bits on
 * every path). */
void posenc_rotate_run_path_(posenc_kernel_path path, size_t n, const double *step_s, const double *step_c,
                             double *run_s, double *run_c);
/* s_out[k] = (float)(run_s[k] * scale_s), c_out[k] = (float)(run_c[k] * scale_c)
 * for k < n (RoPE's f32 cos/sin of a token; same bits on every path). Returns
 * whether one of them may be misrounded: its double lies within
 * POSENC_RUN_ERROR * max(|scale_s|, |scale_c|) (the recurrence's error bound)
 * of the midpoint between two floats, so the exact value may round the other
 * way (posenc_f32_near_tie_). A few values in a million; the caller then
 * recomputes those from double-doubles (rope_fast.c). */
bool posenc_run_to_f32_(posenc_kernel_path path, size_t n, const double *run_s, const double *run_c,
                        double scale_s, double scale_c, float *s_out, float *c_out);

/* A bound on |run - exact| of the recurrence's double (sin, cos) (recurrence.h:
 * at most 63 double rotations from a double-double anchor, each adding < 6e-16
 * for values of magnitude <= 1; 2^-42 = 2.3e-13 leaves a margin of 6x). */
#define POSENC_RUN_ERROR 0x1p-42
/* That bound for values scaled by scale_s and scale_c. */
static inline double posenc_run_error_(double scale_s, double scale_c) {
    return POSENC_RUN_ERROR * fmax(fabs(scale_s), fabs(scale_c));
}

/* Whether v, known to within e of an exact value, may not round to the same
 * float as that value: v - e and v + e round to different floats. */
static inline bool posenc_f32_near_tie_(double v, double e) { return (float)(v - e) != (float)(v + e); }

/* The float nearest hi + lo (ties to even) for a double-double (|lo| <= ulp(hi)):
 * right where (float)hi is not, when hi lies on or within lo of the midpoint
 * between two floats. */
float posenc_f32_from_dd_(double hi, double lo);

/* The float nearest scale * sin(p w) and scale * cos(p w), w = w_hi + w_lo, from
 * the double-double sin/cos (error ~1e-22) and an exact product with scale: the
 * correctly rounded values, for integer |p| < 2^53 with |p w| < MAX_ANGLE. */
void posenc_sincos_f32_exact_(double p, double w_hi, double w_lo, double scale_s, double scale_c, float *s,
                              float *c);
/* The scalar double step for pairs [first, end), for callers that step their
 * own arrays (the sinusoid rows kernels' leftover pairs; sincos_dd_scalar.c). */
void posenc_rotate_run_(const double *step_s, const double *step_c, double *run_s, double *run_c, size_t first,
                        size_t end);

/* the per-path builds behind the functions above (sincos_dd*.c) */
void posenc_sincos_dd_scalar_(size_t n, double p, const double *w_hi, const double *w_lo,
                              const posenc_dd_sincos_ *out);
void posenc_sincos_dd_avx2_(size_t n, double p, const double *w_hi, const double *w_lo,
                            const posenc_dd_sincos_ *out);
void posenc_sincos_dd_avx512_(size_t n, double p, const double *w_hi, const double *w_lo,
                              const posenc_dd_sincos_ *out);
void posenc_sincos_run_scalar_(size_t n, double p, const double *w_hi, const double *w_lo, double *run_s,
                               double *run_c);
void posenc_sincos_run_avx2_(size_t n, double p, const double *w_hi, const double *w_lo, double *run_s,
                             double *run_c);
void posenc_sincos_run_avx512_(size_t n, double p, const double *w_hi, const double *w_lo, double *run_s,
                               double *run_c);
void posenc_rotate_dd_scalar_(size_t n, const posenc_dd_sincos_ *state, const posenc_dd_sincos_ *by);
void posenc_rotate_dd_avx2_(size_t n, const posenc_dd_sincos_ *state, const posenc_dd_sincos_ *by);
void posenc_rotate_dd_avx512_(size_t n, const posenc_dd_sincos_ *state, const posenc_dd_sincos_ *by);
void posenc_rotate_run_scalar_(size_t n, const double *step_s, const double *step_c, double *run_s, double *run_c);
void posenc_rotate_run_avx2_(size_t n, const double *step_s, const double *step_c, double *run_s, double *run_c);
void posenc_rotate_run_avx512_(size_t n, const double *step_s, const double *step_c, double *run_s, double *run_c);
bool posenc_run_to_f32_scalar_(size_t n, const double *run_s, const double *run_c, double scale_s, double scale_c,
                               float *s_out, float *c_out);
bool posenc_run_to_f32_avx2_(size_t n, const double *run_s, const double *run_c, double scale_s, double scale_c,
                             float *s_out, float *c_out);
bool posenc_run_to_f32_avx512_(size_t n, const double *run_s, const double *run_c, double scale_s, double scale_c,
                               float *s_out, float *c_out);

#endif
