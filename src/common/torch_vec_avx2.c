/* torch_vec_avx2.c: torch's AVX2 build of exp/pow/sin/cos (SLEEF u10, 8 floats
 * or 4 doubles per vector); the body is torch_vec_body.h. Runs only when
 * torch_cpu_capability_get_ chose AVX2 for this CPU. */
#include "torch_vec.h"

#if defined(__x86_64__) && defined(__AVX2__)
#include <immintrin.h>
#include <sleef.h>

#define TV_SUFFIX(name) name##_avx2_
#define TV_LANES 8
#define TV_LANES_D 4
#define TV_PS __m256
#define TV_PD __m256d
#define TV_LOAD_PS _mm256_loadu_ps
#define TV_STORE_PS _mm256_storeu_ps
#define TV_LOAD_PD _mm256_loadu_pd
#define TV_STORE_PD _mm256_storeu_pd
#define TV_SET1_PS _mm256_set1_ps
#define TV_EXPF Sleef_expf8_u10avx2
#define TV_POWF Sleef_powf8_u10avx2
#define TV_SINF Sleef_sinf8_u10avx2
#define TV_COSF Sleef_cosf8_u10avx2
#define TV_EXPD Sleef_expd4_u10avx2
#define TV_SIND Sleef_sind4_u10avx2
#define TV_COSD Sleef_cosd4_u10avx2
#include "torch_vec_body.h"
#endif
