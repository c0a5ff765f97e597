/* rope_apply.c: the scalar RoPE rotation kernels (rope_kernels.h): the
 * reference every vector kernel must match bit for bit, and the leftover pairs
 * of the vector kernels. Built without FMA flags, so a*c - b*s is two rounded
 * products and one rounded difference, as in HF. */
#include "rope_kernels.h"

void rope_rotate_pairs_f32_(float *v, int32_t pairs, int32_t first_pair, posenc_layout layout,
                            const float *cos_k, const float *sin_k) {
    const bool half = layout == POSENC_LAYOUT_HALF;
    for (int32_t k = first_pair; k < pairs; k++) {
        float *pa = half ? v + k : v + 2 * k, *pb = half ? v + pairs + k : v + 2 * k + 1;
        float a = *pa, b = *pb, c = cos_k[k], s = sin_k[k];
        float ac = a * c, bs = b * s, bc = b * c, as = a * s;
        *pa = ac - bs;
        *pb = bc + as;
    }
}

void rope_rotate_pairs_16_(uint16_t *v, int32_t pairs, int32_t first_pair, posenc_layout layout,
                           const float *cos_k, const float *sin_k, bool f16) {
    const bool half = layout == POSENC_LAYOUT_HALF;
    for (int32_t k = first_pair; k < pairs; k++) {
        uint16_t *pa = half ? v + k : v + 2 * k, *pb = half ? v + pairs + k : v + 2 * k + 1;
        float a = f16 ? posenc_f16_to_f32(*pa) : posenc_bf16_to_f32(*pa);
        float b = f16 ? posenc_f16_to_f32(*pb) : posenc_bf16_to_f32(*pb), c = cos_k[k], s = sin_k[k];
        float ac = a * c, bs = b * s, bc = b * c, as = a * s;
        *pa = f16 ? posenc_f32_to_f16(ac - bs) : posenc_f32_to_bf16(ac - bs);
        *pb = f16 ? posenc_f32_to_f16(bc + as) : posenc_f32_to_bf16(bc + as);
    }
}

void rope_rotate_token_f32_(void *x, size_t heads, size_t head_stride, int32_t pairs, posenc_layout layout,
                            const float *cos_k, const float *sin_k, const float *dup) {
    (void)dup;
    for (size_t h = 0; h < heads; h++) rope_rotate_pairs_f32_((float *)x + h * head_stride, pairs, 0, layout, cos_k, sin_k);
}

void rope_rotate_token_f16_(void *x, size_t heads, size_t head_stride, int32_t pairs, posenc_layout layout,
                            const float *cos_k, const float *sin_k, const float *dup) {
    (void)dup;
    for (size_t h = 0; h < heads; h++)
        rope_rotate_pairs_16_((uint16_t *)x + h * head_stride, pairs, 0, layout, cos_k, sin_k, true);
}

void rope_rotate_token_bf16_(void *x, size_t heads, size_t head_stride, int32_t pairs, posenc_layout layout,
                             const float *cos_k, const float *sin_k, const float *dup) {
    (void)dup;
    for (size_t h = 0; h < heads; h++)
        rope_rotate_pairs_16_((uint16_t *)x + h * head_stride, pairs, 0, layout, cos_k, sin_k, false);
}
