/* rope_rotate_body.h: the vector RoPE rotation of rope_kernels.h, written once
 * for AVX2 and AVX-512. The including file defines
 *   vecf                 __m256 or __m512 (GNU vector types: + - * work)
 *   LANES                floats per vector
 *   VF_LOAD(p), VF_STORE(p, v)   unaligned float loads/stores
 *   VF_SWAP_PAIRS(x)     (x1 x0 x3 x2 ...)
 *   load_f16, store_f16, load_bf16, store_bf16   LANES 16-bit values <-> vecf
 *     (ISA-specific: written with that ISA's conversions and masks, which
 *     measured 10-100% faster than one generic version in GNU vector code;
 *     store_f16 may leave NaN payloads, made canonical after the token)
 *   veci, VI_ZERO(), vi_absmax(acc, v), vi_above(acc, limit)   a running max
 *     of |bits| per lane (integer compare) and whether any lane exceeds limit
 *   store_bf16(p, v, flags) also raises the non-finite flags of its lanes
 *   ROPE_ISA             avx2 or avx512: the kernels are rope_rotate_token_<dtype>_<ROPE_ISA>_
 * and builds with -ffp-contract=off (a fused a*c - b*s would change the bits).
 * Leftover pairs (pairs % LANES) go to the scalar kernels below (rope_apply.c).
 * Built without the ISA flags (LANES undefined, not x86-64), the three kernels
 * forward to the scalar ones; they are never selected there
 * (posenc_kernel_path_supported). */

enum { DATA_F32, DATA_F16, DATA_BF16 }; /* a compile-time constant in each kernel */

#define ROPE_KERNEL_NAME_(dtype, isa) rope_rotate_token_##dtype##_##isa##_
#define ROPE_KERNEL_NAME(dtype, isa) ROPE_KERNEL_NAME_(dtype, isa)
#define ROTATE_F32 ROPE_KERNEL_NAME(f32, ROPE_ISA)
#define ROTATE_F16 ROPE_KERNEL_NAME(f16, ROPE_ISA)
#define ROTATE_BF16 ROPE_KERNEL_NAME(bf16, ROPE_ISA)

#ifdef LANES

static inline vecf load_data(const void *v, size_t i, const int kind) {
    if (kind == DATA_F32) return VF_LOAD((const float *)v + i);
    return kind == DATA_F16 ? load_f16((const uint16_t *)v + i) : load_bf16((const uint16_t *)v + i);
}

/* bf16 stores raise *flags themselves (their NaN compare is the check) */
static inline void store_data(void *v, size_t i, vecf x, const int kind, unsigned *flags) {
    if (kind == DATA_F32) VF_STORE((float *)v + i, x);
    else if (kind == DATA_F16) store_f16((uint16_t *)v + i, x);
    else store_bf16((uint16_t *)v + i, x, flags);
}

static inline unsigned rotate_leftover(void *v, int32_t pairs, size_t first_pair, posenc_layout layout,
                                       const float *c, const float *s, uint32_t big_bits, const int kind) {
    if (kind == DATA_F32) return rope_rotate_pairs_f32_(v, pairs, (int32_t)first_pair, layout, c, s, big_bits);
    return rope_rotate_pairs_16_(v, pairs, (int32_t)first_pair, layout, c, s, kind == DATA_F16, big_bits);
}

/* The non-finite check of rope_kernels.h: f32 inputs or f16 results feed a
 * running max of |bits| (an AND and a max per vector, no branch); bf16 stores
 * raise the flags from the compare they make anyway. */
static inline unsigned rotate_token(void *x, size_t heads, size_t head_stride, int32_t pairs, posenc_layout layout,
                                    const float *c, const float *s, const float *dup, uint32_t big_bits,
                                    const int kind) {
    const size_t P = (size_t)pairs, elem = kind == DATA_F32 ? 4 : 2;
    veci acc = VI_ZERO();
    unsigned flags = 0;
    /* whole vectors of every head first, the scalar leftovers after: a head loop
     * without calls keeps the constants in registers (measured 5-8% on bf16) */
    if (layout == POSENC_LAYOUT_HALF) {
        for (size_t h = 0; h < heads; h++) {
            char *v = (char *)x + h * head_stride * elem;
            for (size_t k = 0; k + LANES <= P; k += LANES) {
                vecf a = load_data(v, k, kind), b = load_data(v, P + k, kind);
                vecf ck = VF_LOAD(c + k), sk = VF_LOAD(s + k);
                vecf ra = a * ck - b * sk, rb = b * ck + a * sk;
                store_data(v, k, ra, kind, &flags);
                store_data(v, P + k, rb, kind, &flags);
                if (kind == DATA_F32) acc = vi_absmax(vi_absmax(acc, a), b);
                if (kind == DATA_F16) acc = vi_absmax(vi_absmax(acc, ra), rb);
            }
        }
    } else { /* x * (c, c) + swap(x) * (-s, s): even a*c + b*(-s) = ac - bs, odd b*c + a*s */
        for (size_t h = 0; h < heads; h++) {
            char *v = (char *)x + h * head_stride * elem;
            for (size_t i = 0; i + LANES <= 2 * P; i += LANES) {
                vecf xv = load_data(v, i, kind), cd = VF_LOAD(dup + i), sd = VF_LOAD(dup + 2 * P + i);
                vecf r = xv * cd + VF_SWAP_PAIRS(xv) * sd;
                store_data(v, i, r, kind, &flags);
                if (kind == DATA_F32) acc = vi_absmax(acc, xv);
                if (kind == DATA_F16) acc = vi_absmax(acc, r);
            }
        }
    }
    size_t first = layout == POSENC_LAYOUT_HALF ? P / LANES * LANES : 2 * P / LANES * LANES / 2;
    for (size_t h = 0; first < P && h < heads; h++)
        flags |= rotate_leftover((char *)x + h * head_stride * elem, pairs, first, layout, c, s, big_bits, kind);
    if (kind == DATA_F32)
        return flags | (vi_above(acc, ROPE_FINITE_BITS_F32) ? ROPE_BAD_INPUT : 0u) |
               (vi_above(acc, big_bits) ? ROPE_MAYBE_OVERFLOW : 0u);
    const uint32_t limit = kind == DATA_F16 ? ROPE_FINITE_BITS_F16 : ROPE_FINITE_BITS_BF16;
    return flags |
           (vi_above(acc, ROPE_FINITE_BITS_F32) ? ROPE_BAD_INPUT : 0u) | (vi_above(acc, limit) ? ROPE_BAD_OUTPUT : 0u);
}

#define ROTATE_BODY(kind) return rotate_token(x, heads, head_stride, pairs, layout, c, s, dup, big_bits, kind)
#else
#define ROTATE_BODY(kind)                                                                                  \
    return kind == DATA_F32   ? rope_rotate_token_f32_(x, heads, head_stride, pairs, layout, c, s, dup, big_bits)  \
           : kind == DATA_F16 ? rope_rotate_token_f16_(x, heads, head_stride, pairs, layout, c, s, dup, big_bits)  \
                              : rope_rotate_token_bf16_(x, heads, head_stride, pairs, layout, c, s, dup, big_bits)
#endif

unsigned ROTATE_F32(void *x, size_t heads, size_t head_stride, int32_t pairs, posenc_layout layout, const float *c,
                    const float *s, const float *dup, uint32_t big_bits) {
    ROTATE_BODY(DATA_F32);
}
unsigned ROTATE_F16(void *x, size_t heads, size_t head_stride, int32_t pairs, posenc_layout layout, const float *c,
                    const float *s, const float *dup, uint32_t big_bits) {
    ROTATE_BODY(DATA_F16);
}
unsigned ROTATE_BF16(void *x, size_t heads, size_t head_stride, int32_t pairs, posenc_layout layout,
                     const float *c, const float *s, const float *dup, uint32_t big_bits) {
    ROTATE_BODY(DATA_BF16);
}
