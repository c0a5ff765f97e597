/* sincos_dd_avx512.c: AVX-512 build of sincos_dd_body.h, 8 pairs per vector. */
#include "sincos_dd.h"

#if defined(__AVX512F__)
#include <immintrin.h>

typedef __m512d vec;
#define LANES 8
#define V_SET(x) _mm512_set1_pd(x)
#define V_LOAD(p) _mm512_loadu_pd(p)
#define V_STORE(p, v) _mm512_storeu_pd((p), (v))
#define V_FMA(a, b, c) _mm512_fmadd_pd((a), (b), (c))
#define V_ROUND(x) _mm512_roundscale_pd((x), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define SINCOS_DD posenc_sincos_dd_avx512_
#define SINCOS_RUN posenc_sincos_run_avx512_
#define ROTATE_DD posenc_rotate_dd_avx512_
#define ROTATE_RUN posenc_rotate_run_avx512_
#define RUN_TO_F32 posenc_run_to_f32_avx512_
#define V_STORE_F32(p, v) _mm256_storeu_ps((p), _mm512_cvtpd_ps(v))
#define V_F32_DIFFER(a, b) _mm256_movemask_ps(_mm256_cmp_ps(_mm512_cvtpd_ps(a), _mm512_cvtpd_ps(b), _CMP_NEQ_UQ))
#include "sincos_dd_body.h"
#else
/* Built without the ISA flags (not x86-64): never selected, see posenc_kernel_path_supported. */
void posenc_sincos_dd_avx512_(size_t n, double p, const double *w_hi, const double *w_lo,
                              const posenc_dd_sincos_ *out) {
    posenc_sincos_dd_scalar_(n, p, w_hi, w_lo, out);
}
void posenc_rotate_dd_avx512_(size_t n, const posenc_dd_sincos_ *state, const posenc_dd_sincos_ *by) {
    posenc_rotate_dd_scalar_(n, state, by);
}
void posenc_sincos_run_avx512_(size_t n, double p, const double *w_hi, const double *w_lo, double *run_s,
                               double *run_c) {
    posenc_sincos_run_scalar_(n, p, w_hi, w_lo, run_s, run_c);
}
void posenc_rotate_run_avx512_(size_t n, const double *step_s, const double *step_c, double *run_s, double *run_c) {
    posenc_rotate_run_scalar_(n, step_s, step_c, run_s, run_c);
}
bool posenc_run_to_f32_avx512_(size_t n, const double *run_s, const double *run_c, double scale_s, double scale_c,
                              float *s_out, float *c_out) {
    return posenc_run_to_f32_scalar_(n, run_s, run_c, scale_s, scale_c, s_out, c_out);
}
#endif
