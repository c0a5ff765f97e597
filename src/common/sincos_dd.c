/* sincos_dd.c: the path dispatch of the double-double sin/cos kernels
 * (sincos_dd_scalar.c, sincos_dd_avx2.c, sincos_dd_avx512.c) and the helpers
 * that prepare their inputs. */
#include "sincos_dd.h"

#include <math.h>

bool posenc_sincos_dd_covers_(long double most_abs, const long double *w, size_t n) {
    long double top = 0;
    for (size_t k = 0; k < n; k++)
        if (fabsl(w[k]) > top) top = fabsl(w[k]);
    return posenc_sincos_dd_covers_top_(most_abs, top);
}

bool posenc_sincos_dd_covers_top_(long double most_abs, long double top_abs_w) {
    return most_abs < 0x1p53L && most_abs * top_abs_w < (long double)POSENC_SINCOS_DD_MAX_ANGLE;
}

void posenc_split_dd_(const long double *w, size_t n, double *w_hi, double *w_lo) {
    for (size_t k = 0; k < n; k++) {
        w_hi[k] = (double)w[k];
        w_lo[k] = (double)(w[k] - (long double)w_hi[k]);
    }
}

void posenc_sincos_dd_(posenc_kernel_path path, size_t n, double p, const double *w_hi,
                       const double *w_lo, const posenc_dd_sincos_ *out) {
    if (path == POSENC_PATH_AVX512) posenc_sincos_dd_avx512_(n, p, w_hi, w_lo, out);
    else if (path == POSENC_PATH_AVX2) posenc_sincos_dd_avx2_(n, p, w_hi, w_lo, out);
    else posenc_sincos_dd_scalar_(n, p, w_hi, w_lo, out);
}

void posenc_sincos_run_(posenc_kernel_path path, size_t n, double p, const double *w_hi, const double *w_lo,
                        double *run_s, double *run_c) {
    if (path == POSENC_PATH_AVX512) posenc_sincos_run_avx512_(n, p, w_hi, w_lo, run_s, run_c);
    else if (path == POSENC_PATH_AVX2) posenc_sincos_run_avx2_(n, p, w_hi, w_lo, run_s, run_c);
    else posenc_sincos_run_scalar_(n, p, w_hi, w_lo, run_s, run_c);
}

void posenc_rotate_dd_(posenc_kernel_path path, size_t n, const posenc_dd_sincos_ *state,
                       const posenc_dd_sincos_ *by) {
    if (path == POSENC_PATH_AVX512) posenc_rotate_dd_avx512_(n, state, by);
    else if (path == POSENC_PATH_AVX2) posenc_rotate_dd_avx2_(n, state, by);
    else posenc_rotate_dd_scalar_(n, state, by);
}

void posenc_rotate_run_path_(posenc_kernel_path path, size_t n, const double *step_s, const double *step_c,
                             double *run_s, double *run_c) {
    if (path == POSENC_PATH_AVX512) posenc_rotate_run_avx512_(n, step_s, step_c, run_s, run_c);
    else if (path == POSENC_PATH_AVX2) posenc_rotate_run_avx2_(n, step_s, step_c, run_s, run_c);
    else posenc_rotate_run_scalar_(n, step_s, step_c, run_s, run_c);
}

bool posenc_run_to_f32_(posenc_kernel_path path, size_t n, const double *run_s, const double *run_c,
                        double scale_s, double scale_c, float *s_out, float *c_out) {
    if (path == POSENC_PATH_AVX512) return posenc_run_to_f32_avx512_(n, run_s, run_c, scale_s, scale_c, s_out, c_out);
    if (path == POSENC_PATH_AVX2) return posenc_run_to_f32_avx2_(n, run_s, run_c, scale_s, scale_c, s_out, c_out);
    return posenc_run_to_f32_scalar_(n, run_s, run_c, scale_s, scale_c, s_out, c_out);
}

float posenc_f32_from_dd_(double hi, double lo) {
    float r = (float)hi;
    double rd = (double)r;
    /* hi a float (then hi + lo is within a double ULP of it), or nothing to add */
    if (rd == hi || lo == 0.0) return r;
    /* hi lies between r and the float beyond it; m is their midpoint (exact in
     * double), and hi - m is exact (Sterbenz), so t has the sign of hi + lo - m */
    float beyond = nextafterf(r, hi > rd ? INFINITY : -INFINITY);
    double m = 0.5 * (rd + (double)beyond);
    double t = (hi - m) + lo;
    if (t == 0.0) return (float)m; /* exactly halfway: (float) rounds to even */
    bool up = t > 0.0;             /* hi + lo above the midpoint */
    return (up == (beyond > r)) ? beyond : r;
}

/* (hi + lo) * scale as a double-double: the product's rounding error by fma */
static float scaled_dd_to_f32(double hi, double lo, double scale) {
    double p = hi * scale;
    double e = fma(hi, scale, -p) + lo * scale;
    return posenc_f32_from_dd_(p, e);
}

void posenc_sincos_f32_exact_(double p, double w_hi, double w_lo, double scale_s, double scale_c, float *s,
                              float *c) {
    double sh, sl, ch, cl;
    posenc_dd_sincos_ out = {&sh, &sl, &ch, &cl};
    posenc_sincos_dd_scalar_(1, p, &w_hi, &w_lo, &out);
    *s = scaled_dd_to_f32(sh, sl, scale_s);
    *c = scaled_dd_to_f32(ch, cl, scale_c);
}
