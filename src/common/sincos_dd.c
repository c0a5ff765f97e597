/* sincos_dd.c: the path dispatch of the double-double sin/cos kernels
 * (sincos_dd_scalar.c, sincos_dd_avx2.c, sincos_dd_avx512.c) and the helpers
 * that prepare their inputs. */
#include "sincos_dd.h"

#include <math.h>

bool posenc_sincos_dd_covers_(long double most_abs, const long double *w, size_t n) {
    long double top = 0;
    for (size_t k = 0; k < n; k++)
        if (fabsl(w[k]) > top) top = fabsl(w[k]);
    return most_abs < 0x1p53L && most_abs * top < (long double)POSENC_SINCOS_DD_MAX_ANGLE;
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

void posenc_rotate_dd_(posenc_kernel_path path, size_t n, const posenc_dd_sincos_ *state,
                       const posenc_dd_sincos_ *by) {
    if (path == POSENC_PATH_AVX512) posenc_rotate_dd_avx512_(n, state, by);
    else if (path == POSENC_PATH_AVX2) posenc_rotate_dd_avx2_(n, state, by);
    else posenc_rotate_dd_scalar_(n, state, by);
}
