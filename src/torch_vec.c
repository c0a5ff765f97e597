/* torch_vec.c: see torch_vec.h. Compiled without -mavx2: only this function
 * is built for AVX2+FMA (target attribute) and it runs only after a CPU check. */
#include "torch_vec.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

__attribute__((target("avx2,fma"))) __m256 Sleef_sinf8_u10avx2(__m256);
__attribute__((target("avx2,fma"))) __m256 Sleef_cosf8_u10avx2(__m256);

__attribute__((target("avx2,fma"))) static void block8_avx2(const float *x, float *c, float *s) {
    __m256 v = _mm256_loadu_ps(x);
    _mm256_storeu_ps(c, Sleef_cosf8_u10avx2(v));
    _mm256_storeu_ps(s, Sleef_sinf8_u10avx2(v));
}

bool torch_cos_sin_block8_(const float *x, float *c, float *s) {
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return false;
    block8_avx2(x, c, s);
    return true;
}
#else
bool torch_cos_sin_block8_(const float *x, float *c, float *s) {
    (void)x;
    (void)c;
    (void)s;
    return false;
}
#endif
