/* torch_vec_avx512.c: torch's AVX512 build of exp/pow/sin/cos (SLEEF u10, 16
 * floats or 8 doubles per vector); the body is torch_vec_body.h. Runs only
 * when torch_cpu_capability_get_ chose AVX512 (ATEN_CPU_CAPABILITY=avx512). */
#include "torch_vec.h"

#if defined(__x86_64__) && defined(__AVX512F__)
#include <immintrin.h>
#include <sleef.h>

#define TV_SUFFIX(name) name##_avx512_
#define TV_LANES 16
#define TV_LANES_D 8
#define TV_PS __m512
#define TV_PD __m512d
#define TV_LOAD_PS _mm512_loadu_ps
#define TV_STORE_PS _mm512_storeu_ps
#define TV_LOAD_PD _mm512_loadu_pd
#define TV_STORE_PD _mm512_storeu_pd
#define TV_SET1_PS _mm512_set1_ps
#define TV_EXPF Sleef_expf16_u10avx512f
#define TV_POWF Sleef_powf16_u10avx512f
#define TV_SINF Sleef_sinf16_u10avx512f
#define TV_COSF Sleef_cosf16_u10avx512f
#define TV_EXPD Sleef_expd8_u10avx512f
#define TV_SIND Sleef_sind8_u10avx512f
#define TV_COSD Sleef_cosd8_u10avx512f
#include "torch_vec_body.h"
#endif
