/* sinusoid_rows.c: the portable rows kernel of the precise sinusoid (one pair
 * at a time, from the anchor values by the double rotation). The AVX2 and
 * AVX-512 builds (sinusoid_avx2.c, sinusoid_avx512.c) finish each row's odd
 * pairs with posenc_sinusoid_row_tail_; sinusoidal.c picks the kernel. */
#include "../common/internal.h"
#include "../common/kernels.h"
#include "../common/recurrence.h"

void posenc_sinusoid_row_tail_(const posenc_sinusoid_rows_ *plan, double *run_s, double *run_c,
                               void *out, size_t r, int32_t first_pair) {
    const int32_t pairs = plan->pairs;
    const bool half = plan->layout == POSENC_LAYOUT_HALF;
    const size_t dim = 2 * (size_t)pairs;
    if (r > 0) posenc_rotate_run_(plan->step_s, plan->step_c, run_s, run_c, (size_t)first_pair, (size_t)pairs);
    for (int32_t k = first_pair; k < pairs; k++) {
        size_t sc = half ? (size_t)k : 2 * (size_t)k, cc = half ? (size_t)(pairs + k) : sc + 1;
        if (plan->dtype == POSENC_DTYPE_F32) {
            ((float *)out)[r * dim + sc] = (float)run_s[k];
            ((float *)out)[r * dim + cc] = (float)run_c[k];
        } else {
            ((double *)out)[r * dim + sc] = posenc_clamp_unit_(run_s[k]);
            ((double *)out)[r * dim + cc] = posenc_clamp_unit_(run_c[k]);
        }
    }
}

void posenc_sinusoid_rows_scalar_(const posenc_sinusoid_rows_ *plan, double *run_s,
                                  double *run_c, void *out, size_t rows) {
    for (size_t r = 0; r < rows; r++) posenc_sinusoid_row_tail_(plan, run_s, run_c, out, r, 0);
}
