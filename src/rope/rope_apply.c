/* rope_apply.c: the scalar RoPE rotation kernels (rope_kernels.h): the
 * reference every vector kernel must match bit for bit, and the leftover pairs
 * of the vector kernels. Built without FMA flags, so a*c - b*s is two rounded
 * products and one rounded difference, as in HF. */
#include "rope_kernels.h"

static inline uint32_t max_u32(uint32_t a, uint32_t b) { return a > b ? a : b; }

void rope_rotate_pairs_f32_(float *v, int32_t pairs, int32_t first_pair, posenc_layout layout,
                            const float *cos_k, const float *sin_k, uint32_t *in_max, uint32_t *out_max) {
    const bool half = layout == POSENC_LAYOUT_HALF;
    uint32_t in = *in_max, out = *out_max;
    for (int32_t k = first_pair; k < pairs; k++) {
        float *pa = half ? v + k : v + 2 * k, *pb = half ? v + pairs + k : v + 2 * k + 1;
        float a = *pa, b = *pb, c = cos_k[k], s = sin_k[k];
        float ac = a * c, bs = b * s, bc = b * c, as = a * s;
        float ra = ac - bs, rb = bc + as;
        *pa = ra;
        *pb = rb;
        in = max_u32(in, max_u32(rope_abs_bits_(a), rope_abs_bits_(b)));
        out = max_u32(out, max_u32(rope_abs_bits_(ra), rope_abs_bits_(rb)));
    }
    *in_max = in;
    *out_max = out;
}

void rope_rotate_pairs_16_(uint16_t *v, int32_t pairs, int32_t first_pair, posenc_layout layout,
                           const float *cos_k, const float *sin_k, bool f16, uint32_t *in_max, uint32_t *out_max) {
    const bool half = layout == POSENC_LAYOUT_HALF;
    uint32_t in = *in_max, out = *out_max;
    for (int32_t k = first_pair; k < pairs; k++) {
        uint16_t *pa = half ? v + k : v + 2 * k, *pb = half ? v + pairs + k : v + 2 * k + 1;
        float a = f16 ? posenc_f16_to_f32(*pa) : posenc_bf16_to_f32(*pa);
        float b = f16 ? posenc_f16_to_f32(*pb) : posenc_bf16_to_f32(*pb), c = cos_k[k], s = sin_k[k];
        float ac = a * c, bs = b * s, bc = b * c, as = a * s;
        float ra = ac - bs, rb = bc + as;
        *pa = f16 ? posenc_f32_to_f16(ra) : posenc_f32_to_bf16(ra);
        *pb = f16 ? posenc_f32_to_f16(rb) : posenc_f32_to_bf16(rb);
        out = max_u32(out, max_u32(rope_abs_bits_(ra), rope_abs_bits_(rb)));
    }
    *in_max = max_u32(in, out); /* 16-bit data: the f32 results stand for the inputs (rope_kernels.h) */
    *out_max = out;
}

unsigned rope_rotate_token_f32_(void *x, size_t heads, size_t head_stride, int32_t pairs, posenc_layout layout,
                                const float *cos_k, const float *sin_k, const float *dup) {
    (void)dup;
    uint32_t in = 0, out = 0;
    for (size_t h = 0; h < heads; h++)
        rope_rotate_pairs_f32_((float *)x + h * head_stride, pairs, 0, layout, cos_k, sin_k, &in, &out);
    return rope_flags_(in, out, ROPE_FINITE_BITS_F32);
}

unsigned rope_rotate_token_f16_(void *x, size_t heads, size_t head_stride, int32_t pairs, posenc_layout layout,
                                const float *cos_k, const float *sin_k, const float *dup) {
    (void)dup;
    uint32_t in = 0, out = 0;
    for (size_t h = 0; h < heads; h++)
        rope_rotate_pairs_16_((uint16_t *)x + h * head_stride, pairs, 0, layout, cos_k, sin_k, true, &in, &out);
    return rope_flags_(in, out, ROPE_FINITE_BITS_F16);
}

unsigned rope_rotate_token_bf16_(void *x, size_t heads, size_t head_stride, int32_t pairs, posenc_layout layout,
                                 const float *cos_k, const float *sin_k, const float *dup) {
    (void)dup;
    uint32_t in = 0, out = 0;
    for (size_t h = 0; h < heads; h++)
        rope_rotate_pairs_16_((uint16_t *)x + h * head_stride, pairs, 0, layout, cos_k, sin_k, false, &in, &out);
    return rope_flags_(in, out, ROPE_FINITE_BITS_BF16);
}
