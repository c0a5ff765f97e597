/* sincos_dd_scalar.c: portable build of sincos_dd_body.h (one double per
 * "vector"; fma() is exact wherever it runs, so this matches the vector builds
 * bit for bit). Its own file, below sincos_dd.c's dispatch, because the AVX2 and
 * AVX-512 files fall back to it when built without their ISA flags. */
#include "sincos_dd.h"

#include <math.h>

typedef double vec;
#define LANES 1
#define V_SET(x) ((double)(x))
#define V_LOAD(p) (*(p))
#define V_STORE(p, v) (*(p) = (v))
#define V_FMA(a, b, c) fma((a), (b), (c))
#define V_ROUND(x) nearbyint(x)
#define SINCOS_DD posenc_sincos_dd_scalar_
#define SINCOS_RUN posenc_sincos_run_scalar_
#define ROTATE_DD posenc_rotate_dd_scalar_
#define ROTATE_RUN posenc_rotate_run_scalar_
#define RUN_TO_F32 posenc_run_to_f32_scalar_
#define V_STORE_F32(p, v) (*(p) = (float)(v))
#define V_F32_DIFFER(a, b) ((float)(a) != (float)(b))
#include "sincos_dd_body.h"

void posenc_rotate_run_(const double *step_s, const double *step_c, double *run_s, double *run_c, size_t first,
                        size_t end) {
    if (first < end) posenc_rotate_run_scalar_(end - first, step_s + first, step_c + first, run_s + first, run_c + first);
}
