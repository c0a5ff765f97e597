/* sinusoid_avx2.c: AVX2 build of posenc_sinusoid_rows_scalar_ (4 pairs per
 * vector). Compiled with -mavx2 -mfma -ffp-contract=off: the rotation uses
 * separate multiplies and adds, exactly as the scalar code, so the bits match. */
#include "../common/kernels.h"

#if defined(__AVX2__)
#include <immintrin.h>

static inline void store_ps256(float *p, __m256 v, bool stream) {
    if (stream) _mm256_stream_ps(p, v);
    else _mm256_storeu_ps(p, v);
}
static inline void store_ps128(float *p, __m128 v, bool stream) {
    if (stream) _mm_stream_ps(p, v);
    else _mm_storeu_ps(p, v);
}
static inline void store_pd256(double *p, __m256d v, bool stream) {
    if (stream) _mm256_stream_pd(p, v);
    else _mm256_storeu_pd(p, v);
}

void posenc_sinusoid_rows_avx2_(const posenc_sinusoid_rows_ *plan, double *run_s, double *run_c,
                                void *out, size_t rows) {
    const int32_t pairs = plan->pairs, vec_pairs = pairs & ~3;
    const bool half = plan->layout == POSENC_LAYOUT_HALF, stream = plan->stream;
    const size_t dim = 2 * (size_t)pairs;
    for (size_t r = 0; r < rows; r++) {
        for (int32_t k = 0; k < vec_pairs; k += 4) {
            __m256d s = _mm256_loadu_pd(run_s + k), c = _mm256_loadu_pd(run_c + k);
            if (r > 0) {
                __m256d ss = _mm256_loadu_pd(plan->step_s + k), sc = _mm256_loadu_pd(plan->step_c + k);
                __m256d ns = _mm256_add_pd(_mm256_mul_pd(s, sc), _mm256_mul_pd(c, ss));
                __m256d nc = _mm256_sub_pd(_mm256_mul_pd(c, sc), _mm256_mul_pd(s, ss));
                s = ns;
                c = nc;
                _mm256_storeu_pd(run_s + k, s);
                _mm256_storeu_pd(run_c + k, c);
            }
            if (plan->dtype == POSENC_DTYPE_F32) {
                float *row = (float *)out + r * dim;
                __m128 fs = _mm256_cvtpd_ps(s), fc = _mm256_cvtpd_ps(c);
                if (half) {
                    store_ps128(row + k, fs, stream);
                    store_ps128(row + pairs + k, fc, stream);
                } else {
                    __m256 both = _mm256_set_m128(_mm_unpackhi_ps(fs, fc), _mm_unpacklo_ps(fs, fc));
                    store_ps256(row + 2 * k, both, stream);
                }
            } else {
                double *row = (double *)out + r * dim;
                s = _mm256_min_pd(_mm256_max_pd(s, _mm256_set1_pd(-1.0)), _mm256_set1_pd(1.0)); /* see posenc_clamp_unit_ */
                c = _mm256_min_pd(_mm256_max_pd(c, _mm256_set1_pd(-1.0)), _mm256_set1_pd(1.0));
                if (half) {
                    store_pd256(row + k, s, stream);
                    store_pd256(row + pairs + k, c, stream);
                } else {
                    __m256d lo = _mm256_unpacklo_pd(s, c), hi = _mm256_unpackhi_pd(s, c);
                    store_pd256(row + 2 * k, _mm256_permute2f128_pd(lo, hi, 0x20), stream);
                    store_pd256(row + 2 * k + 4, _mm256_permute2f128_pd(lo, hi, 0x31), stream);
                }
            }
        }
        /* leftover pairs in the scalar file: GCC would fuse them into FMA here */
        if (vec_pairs < pairs) posenc_sinusoid_row_tail_(plan, run_s, run_c, out, r, vec_pairs);
    }
    if (stream) _mm_sfence();
}
#else
/* Built without the ISA flags (not x86-64): never selected, see posenc_kernel_path_supported. */
void posenc_sinusoid_rows_avx2_(const posenc_sinusoid_rows_ *plan, double *run_s, double *run_c, void *out,
        size_t rows) {
    posenc_sinusoid_rows_scalar_(plan, run_s, run_c, out, rows);
}
#endif
