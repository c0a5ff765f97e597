/* rope_rotate_body.h: the vector RoPE rotation of rope_kernels.h, written once
 * for AVX2 and AVX-512. The including file defines
 *   vecf                 __m256 or __m512 (GNU vector types: + - * work)
 *   LANES                floats per vector
 *   VF_LOAD(p), VF_STORE(p, v)   unaligned float loads/stores
 *   VF_SWAP_PAIRS(x)     (x1 x0 x3 x2 ...)
 *   load_f16, store_f16, load_bf16, store_bf16   LANES 16-bit values <-> vecf
 *     (ISA-specific: written with that ISA's conversions and masks, which
 *     measured 10-100% faster than one generic version in GNU vector code)
 *   veci, VI_ZERO(), vi_absmax(acc, v), vi_above(acc, limit)   a running max
 *     of |bits| per lane (integer compare) and whether any lane exceeds limit
 *   ROTATE_F32, ROTATE_F16, ROTATE_BF16          the names of the kernels to define
 * and builds with -ffp-contract=off (a fused a*c - b*s would change the bits).
 * Leftover pairs (pairs % LANES) go to the scalar kernels below (rope_apply.c).
 * Built without the ISA flags (LANES undefined, not x86-64), the three kernels
 * forward to the scalar ones; they are never selected there
 * (posenc_kernel_path_supported). */

enum { DATA_F32, DATA_F16, DATA_BF16 }; /* a compile-time constant in each kernel */

#ifdef LANES

static inline vecf load_data(const void *v, size_t i, const int kind) {
    if (kind == DATA_F32) return VF_LOAD((const float *)v + i);
    return kind == DATA_F16 ? load_f16((const uint16_t *)v + i) : load_bf16((const uint16_t *)v + i);
}

static inline void store_data(void *v, size_t i, vecf x, const int kind) {
    if (kind == DATA_F32) VF_STORE((float *)v + i, x);
    else if (kind == DATA_F16) store_f16((uint16_t *)v + i, x);
    else store_bf16((uint16_t *)v + i, x);
}

static inline void rotate_leftover(void *v, int32_t pairs, size_t first_pair, posenc_layout layout,
                                   const float *c, const float *s, const int kind, uint32_t *in, uint32_t *out) {
    if (first_pair >= (size_t)pairs) return;
    if (kind == DATA_F32) rope_rotate_pairs_f32_(v, pairs, (int32_t)first_pair, layout, c, s, in, out);
    else rope_rotate_pairs_16_(v, pairs, (int32_t)first_pair, layout, c, s, kind == DATA_F16, in, out);
}

static inline uint32_t limit_bits(const int kind) {
    return kind == DATA_F32 ? ROPE_FINITE_BITS_F32 : kind == DATA_F16 ? ROPE_FINITE_BITS_F16 : ROPE_FINITE_BITS_BF16;
}

/* The f32 results (and f32 inputs) feed running maxima of |bits| (an AND and a
 * max per vector, no branch): the non-finite check of rope_kernels.h. */
static inline unsigned rotate_token(void *x, size_t heads, size_t head_stride, int32_t pairs, posenc_layout layout,
                                    const float *c, const float *s, const float *dup, const int kind) {
    const size_t P = (size_t)pairs, elem = kind == DATA_F32 ? 4 : 2;
    veci in_acc = VI_ZERO(), out_acc = VI_ZERO();
    uint32_t in_tail = 0, out_tail = 0;
    for (size_t h = 0; h < heads; h++) {
        char *v = (char *)x + h * head_stride * elem;
        if (layout == POSENC_LAYOUT_HALF) {
            size_t k = 0;
            for (; k + LANES <= P; k += LANES) {
                vecf a = load_data(v, k, kind), b = load_data(v, P + k, kind);
                vecf ck = VF_LOAD(c + k), sk = VF_LOAD(s + k);
                vecf ra = a * ck - b * sk, rb = b * ck + a * sk;
                store_data(v, k, ra, kind);
                store_data(v, P + k, rb, kind);
                if (kind == DATA_F32) in_acc = vi_absmax(vi_absmax(in_acc, a), b);
                out_acc = vi_absmax(vi_absmax(out_acc, ra), rb);
            }
            rotate_leftover(v, pairs, k, layout, c, s, kind, &in_tail, &out_tail);
        } else { /* x * (c, c) + swap(x) * (-s, s): even a*c + b*(-s) = ac - bs, odd b*c + a*s */
            size_t i = 0;
            for (; i + LANES <= 2 * P; i += LANES) {
                vecf xv = load_data(v, i, kind), cd = VF_LOAD(dup + i), sd = VF_LOAD(dup + 2 * P + i);
                vecf r = xv * cd + VF_SWAP_PAIRS(xv) * sd;
                store_data(v, i, r, kind);
                if (kind == DATA_F32) in_acc = vi_absmax(in_acc, xv);
                out_acc = vi_absmax(out_acc, r);
            }
            rotate_leftover(v, pairs, i / 2, layout, c, s, kind, &in_tail, &out_tail);
        }
    }
    const uint32_t limit = limit_bits(kind);
    if (kind != DATA_F32) in_acc = out_acc; /* the f32 results stand for the inputs (rope_kernels.h) */
    return (vi_above(in_acc, ROPE_FINITE_BITS_F32) ? ROPE_BAD_INPUT : 0u) |
           (vi_above(out_acc, limit) ? ROPE_BAD_OUTPUT : 0u) | rope_flags_(in_tail, out_tail, limit);
}

#define ROTATE_BODY(kind) return rotate_token(x, heads, head_stride, pairs, layout, c, s, dup, kind)
#else
#define ROTATE_BODY(kind)                                                                                  \
    return kind == DATA_F32   ? rope_rotate_token_f32_(x, heads, head_stride, pairs, layout, c, s, dup)    \
           : kind == DATA_F16 ? rope_rotate_token_f16_(x, heads, head_stride, pairs, layout, c, s, dup)    \
                              : rope_rotate_token_bf16_(x, heads, head_stride, pairs, layout, c, s, dup)
#endif

unsigned ROTATE_F32(void *x, size_t heads, size_t head_stride, int32_t pairs, posenc_layout layout, const float *c,
                    const float *s, const float *dup) {
    ROTATE_BODY(DATA_F32);
}
unsigned ROTATE_F16(void *x, size_t heads, size_t head_stride, int32_t pairs, posenc_layout layout, const float *c,
                    const float *s, const float *dup) {
    ROTATE_BODY(DATA_F16);
}
unsigned ROTATE_BF16(void *x, size_t heads, size_t head_stride, int32_t pairs, posenc_layout layout,
                     const float *c, const float *s, const float *dup) {
    ROTATE_BODY(DATA_BF16);
}
