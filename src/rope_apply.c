/* rope_apply.c: the scalar reference rotation kernel. Public entry points
 * (rope.c, rope_multi.c) validate, compute cos/sin once per (token, pair) and
 * call this for all heads of the token; SIMD variants belong beside it and
 * must give the same bits (each output is one a*c - b*s or b*c + a*s in f32,
 * two products then one add/subtract, never fused: that is HF's order). */
#include "rope_internal.h"

void rope_rotate_token_f32_(float *x, size_t heads, size_t head_stride, int32_t pairs,
                            posenc_layout layout, const float *cos_k, const float *sin_k) {
    for (size_t h = 0; h < heads; h++) {
        float *v = x + h * head_stride;
        if (layout == POSENC_LAYOUT_HALF) {
            float *lo = v, *hi = v + pairs;
            for (int32_t k = 0; k < pairs; k++) {
                float a = lo[k], b = hi[k], c = cos_k[k], s = sin_k[k];
                float ac = a * c, bs = b * s, bc = b * c, as = a * s;
                lo[k] = ac - bs;
                hi[k] = bc + as;
            }
        } else {
            for (int32_t k = 0; k < pairs; k++) {
                float a = v[2 * k], b = v[2 * k + 1], c = cos_k[k], s = sin_k[k];
                float ac = a * c, bs = b * s, bc = b * c, as = a * s;
                v[2 * k] = ac - bs;
                v[2 * k + 1] = bc + as;
            }
        }
    }
}
