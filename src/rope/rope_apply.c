/* rope_apply.c: the scalar RoPE rotation kernels (rope_kernels.h): the
 * reference every vector kernel must match bit for bit, and the leftover pairs
 * of the vector kernels. Built without FMA flags, so a*c - b*s is two rounded
 * products and one rounded difference, as in HF.
 *
 * The non-finite check: f32 ORs two compares of each input into the loop
 * (a running max would need SSE4.1's pmaxud, and made this loop 2.3x slower
 * on SSE2); 16-bit data first checks a head's inputs against big_bits and
 * tracks the results' max only for heads above it (rare: huge or non-finite
 * inputs), since that tracking costs the conversion-bound loop ~10%. */
#include "rope_kernels.h"

static inline uint32_t max_u32(uint32_t a, uint32_t b) { return a > b ? a : b; }

/* One pair: a*c - b*s, b*c + a*s, two products then one add/subtract. */
#define ROTATE_PAIR(pa, pb, c, s, load, store, ra, rb)                                                          \
    float a = load(*(pa)), b = load(*(pb));                                                                     \
    float ac = a * (c), bs = b * (s), bc = b * (c), as = a * (s);                                               \
    float ra = ac - bs, rb = bc + as;                                                                           \
    *(pa) = store(ra);                                                                                          \
    *(pb) = store(rb)
#define AS_IS(v) (v)

/* Rotated 16-bit inputs of one head (pairs first..pairs-1) with |bits| above
 * big (|bits| < 2^15: the signed compare is the unsigned one, and vectorizes). */
static bool bits16_above(const uint16_t *v, int32_t pairs, int32_t first, bool half, uint32_t big) {
    int over = 0;
    const int32_t lo = half ? first : 2 * first, hi = half ? pairs : 2 * pairs;
    for (int32_t i = lo; i < hi; i++) over |= (int32_t)(v[i] & 0x7fffu) > (int32_t)big;
    if (half)
        for (int32_t i = lo; i < hi; i++) over |= (int32_t)(v[pairs + i] & 0x7fffu) > (int32_t)big;
    return over != 0;
}


/* f32: two predicates OR-reduced in the rotation loop itself (compares GCC
 * vectorizes with SSE2, unlike a running max: pmaxud is SSE4.1). */
unsigned rope_rotate_pairs_f32_(float *v, int32_t pairs, int32_t first_pair, posenc_layout layout,
                                const float *cos_k, const float *sin_k, uint32_t big_bits) {
    const bool half = layout == POSENC_LAYOUT_HALF;
    const int32_t big = (int32_t)big_bits, inf = (int32_t)ROPE_FINITE_BITS_F32;
    int over = 0, nonfinite = 0;
    for (int32_t k = first_pair; k < pairs; k++) {
        float *pa = half ? v + k : v + 2 * k, *pb = half ? v + pairs + k : v + 2 * k + 1;
        int32_t ia = (int32_t)rope_abs_bits_(*pa), ib = (int32_t)rope_abs_bits_(*pb);
        over |= (ia > big) | (ib > big);
        nonfinite |= (ia > inf) | (ib > inf);
        ROTATE_PAIR(pa, pb, cos_k[k], sin_k[k], AS_IS, AS_IS, ra, rb);
    }
    return (nonfinite ? ROPE_BAD_INPUT : 0u) | (over ? ROPE_MAYBE_OVERFLOW : 0u);
}

unsigned rope_rotate_pairs_16_(uint16_t *v, int32_t pairs, int32_t first_pair, posenc_layout layout,
                               const float *cos_k, const float *sin_k, bool f16, uint32_t big_bits) {
    const bool half = layout == POSENC_LAYOUT_HALF;
    const bool exact = bits16_above(v, pairs, first_pair, half, big_bits);
    uint32_t out = 0;
    for (int32_t k = first_pair; k < pairs; k++) {
        uint16_t *pa = half ? v + k : v + 2 * k, *pb = half ? v + pairs + k : v + 2 * k + 1;
        if (f16) {
            ROTATE_PAIR(pa, pb, cos_k[k], sin_k[k], posenc_f16_to_f32, posenc_f32_to_f16, ra, rb);
            if (exact) out = max_u32(out, max_u32(rope_abs_bits_(ra), rope_abs_bits_(rb)));
        } else {
            ROTATE_PAIR(pa, pb, cos_k[k], sin_k[k], posenc_bf16_to_f32, posenc_f32_to_bf16, ra, rb);
            if (exact) out = max_u32(out, max_u32(rope_abs_bits_(ra), rope_abs_bits_(rb)));
        }
    }
    return rope_flags_16_(out, f16 ? ROPE_FINITE_BITS_F16 : ROPE_FINITE_BITS_BF16);
}

unsigned rope_rotate_token_f32_(void *x, size_t heads, size_t head_stride, int32_t pairs, posenc_layout layout,
                                const float *cos_k, const float *sin_k, float *scratch, uint32_t big_bits) {
    (void)scratch;
    unsigned flags = 0;
    for (size_t h = 0; h < heads; h++)
        flags |= rope_rotate_pairs_f32_((float *)x + h * head_stride, pairs, 0, layout, cos_k, sin_k, big_bits);
    return flags;
}

unsigned rope_rotate_token_f16_(void *x, size_t heads, size_t head_stride, int32_t pairs, posenc_layout layout,
                                const float *cos_k, const float *sin_k, float *scratch, uint32_t big_bits) {
    (void)scratch;
    unsigned flags = 0;
    for (size_t h = 0; h < heads; h++)
        flags |= rope_rotate_pairs_16_((uint16_t *)x + h * head_stride, pairs, 0, layout, cos_k, sin_k, true, big_bits);
    return flags;
}

unsigned rope_rotate_token_bf16_(void *x, size_t heads, size_t head_stride, int32_t pairs, posenc_layout layout,
                                 const float *cos_k, const float *sin_k, float *scratch, uint32_t big_bits) {
    (void)scratch;
    unsigned flags = 0;
    for (size_t h = 0; h < heads; h++)
        flags |= rope_rotate_pairs_16_((uint16_t *)x + h * head_stride, pairs, 0, layout, cos_k, sin_k, false, big_bits);
    return flags;
}


/* ---- POSENC_MODE_GGML: ggml's rotation, x0*c - x1*s and x0*s + x1*c with the
 * first product fused (fmaf(x0, c, -(x1*s)), fmaf(x0, s, x1*c)): GCC contracts
 * ggml's C++ kernel so on FMA hardware, and the goldens of ggml d99724f2 match
 * only this form (tests/test_rope_ggml.c). fmaf is exact on every machine. */
static unsigned ggml_rotate_head(void *head, bool f16, bool bits16, int32_t pairs, bool half, const float *cos_k,
                                 const float *sin_k, uint32_t big_bits) {
    uint32_t out = 0;
    int over = 0, nonfinite = 0;
    for (int32_t k = 0; k < pairs; k++) {
        size_t ia = half ? (size_t)k : 2 * (size_t)k, ib = half ? (size_t)(pairs + k) : 2 * (size_t)k + 1;
        float a, b;
        if (!bits16) {
            a = ((float *)head)[ia];
            b = ((float *)head)[ib];
            over |= (int)(rope_abs_bits_(a) > big_bits) | (int)(rope_abs_bits_(b) > big_bits);
            nonfinite |= (int)(rope_abs_bits_(a) > ROPE_FINITE_BITS_F32) | (int)(rope_abs_bits_(b) > ROPE_FINITE_BITS_F32);
        } else {
            uint16_t *h = head;
            a = f16 ? posenc_f16_to_f32(h[ia]) : posenc_bf16_to_f32(h[ia]);
            b = f16 ? posenc_f16_to_f32(h[ib]) : posenc_bf16_to_f32(h[ib]);
        }
        float bs = b * sin_k[k], bc = b * cos_k[k];
        float ra = fmaf(a, cos_k[k], -bs), rb = fmaf(a, sin_k[k], bc);
        if (!bits16) {
            ((float *)head)[ia] = ra;
            ((float *)head)[ib] = rb;
        } else {
            uint16_t *h = head;
            h[ia] = f16 ? posenc_f32_to_f16(ra) : posenc_f32_to_bf16(ra);
            h[ib] = f16 ? posenc_f32_to_f16(rb) : posenc_f32_to_bf16(rb);
            out = max_u32(out, max_u32(rope_abs_bits_(ra), rope_abs_bits_(rb)));
        }
    }
    if (bits16) return rope_flags_16_(out, f16 ? ROPE_FINITE_BITS_F16 : ROPE_FINITE_BITS_BF16);
    return (nonfinite ? ROPE_BAD_INPUT : 0u) | (over ? ROPE_MAYBE_OVERFLOW : 0u);
}

static unsigned ggml_rotate_token(void *x, size_t elem, bool f16, size_t heads, size_t head_stride, int32_t pairs,
                                  posenc_layout layout, const float *cos_k, const float *sin_k, uint32_t big_bits) {
    unsigned flags = 0;
    for (size_t h = 0; h < heads; h++)
        flags |= ggml_rotate_head((char *)x + h * head_stride * elem, f16, elem == 2, pairs,
                                  layout == POSENC_LAYOUT_HALF, cos_k, sin_k, big_bits);
    return flags;
}

unsigned rope_rotate_token_ggml_f32_(void *x, size_t heads, size_t head_stride, int32_t pairs, posenc_layout layout,
                                     const float *cos_k, const float *sin_k, float *scratch, uint32_t big_bits) {
    (void)scratch;
    return ggml_rotate_token(x, 4, false, heads, head_stride, pairs, layout, cos_k, sin_k, big_bits);
}

unsigned rope_rotate_token_ggml_f16_(void *x, size_t heads, size_t head_stride, int32_t pairs, posenc_layout layout,
                                     const float *cos_k, const float *sin_k, float *scratch, uint32_t big_bits) {
    (void)scratch;
    return ggml_rotate_token(x, 2, true, heads, head_stride, pairs, layout, cos_k, sin_k, big_bits);
}

unsigned rope_rotate_token_ggml_bf16_(void *x, size_t heads, size_t head_stride, int32_t pairs, posenc_layout layout,
                                      const float *cos_k, const float *sin_k, float *scratch, uint32_t big_bits) {
    (void)scratch;
    return ggml_rotate_token(x, 2, false, heads, head_stride, pairs, layout, cos_k, sin_k, big_bits);
}
