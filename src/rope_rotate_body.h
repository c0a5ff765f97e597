/* rope_rotate_body.h: the vector RoPE rotation of rope_kernels.h, written once
 * for AVX2 and AVX-512. The including file defines
 *   vecf, vecu, veci     LANES floats / uint32 / int32 (GNU vector types: + - * & | >> work)
 *   LANES                floats per vector
 *   VF_LOAD(p), VF_STORE(p, v)   unaligned float loads/stores
 *   VF_SWAP_PAIRS(x)     (x1 x0 x3 x2 ...)
 *   VU_SET(x)            broadcast a uint32
 *   VU_LOAD16(p)         LANES uint16 zero-extended to vecu; store_u16(p, u) the reverse (lanes <= 0xffff)
 *   VF_LOAD_F16(p)       LANES f16 widened exactly (F16C)
 *   VU_F16_BITS(v)       v rounded to f16, nearest even, the bits in vecu lanes
 *   ROTATE_F32, ROTATE_F16, ROTATE_BF16          the names of the kernels to define
 * and builds with -ffp-contract=off (a fused a*c - b*s would change the bits).
 * Leftover pairs (pairs % LANES) go to the scalar kernels below (rope_apply.c).
 * Built without the ISA flags (LANES undefined, not x86-64), the three kernels
 * forward to the scalar ones; they are never selected there
 * (posenc_kernel_path_supported). */

enum { DATA_F32, DATA_F16, DATA_BF16 }; /* a compile-time constant in each kernel */

#ifdef LANES

/* bf16 is the top half of an f32: widening is a shift, narrowing is
 * posenc_f32_to_bf16 on every lane: NaN -> quiet (top bits | 0x40), else round
 * to nearest even by adding 0x7fff + lsb. (u & 0x7fffffff) and 0x7f800000 are
 * both non-negative, so the signed compare is the unsigned one. */
static inline vecf load_bf16(const uint16_t *p) { return (vecf)(VU_LOAD16(p) << VU_SET(16)); }
static inline void store_bf16(uint16_t *p, vecf v) {
    vecu u = (vecu)v, top = u >> VU_SET(16);
    vecu nan = (vecu)((veci)(u & VU_SET(0x7fffffff)) > (veci)VU_SET(0x7f800000));
    vecu rounded = (u + ((top & VU_SET(1)) + VU_SET(0x7fff))) >> VU_SET(16);
    store_u16(p, (rounded & ~nan) | ((top | VU_SET(0x40)) & nan));
}

/* f16 by F16C: exact widening (it quiets signalling NaNs, which the first
 * product would do anyway) and round-to-nearest-even narrowing, which equals
 * posenc_f32_to_f16 on all 2^32 inputs except NaNs, made canonical
 * (sign | 0x7e00) here as that function does (checked exhaustively once). */
static inline vecf load_f16(const uint16_t *p) { return VF_LOAD_F16(p); }
static inline void store_f16(uint16_t *p, vecf v) {
    vecu nan = (vecu)(v != v);
    vecu canonical = (((vecu)v >> VU_SET(16)) & VU_SET(0x8000)) | VU_SET(0x7e00);
    store_u16(p, (VU_F16_BITS(v) & ~nan) | (canonical & nan));
}

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
                                   const float *c, const float *s, const int kind) {
    if (first_pair >= (size_t)pairs) return;
    if (kind == DATA_F32) rope_rotate_pairs_f32_(v, pairs, (int32_t)first_pair, layout, c, s);
    else rope_rotate_pairs_16_(v, pairs, (int32_t)first_pair, layout, c, s, kind == DATA_F16);
}

static inline void rotate_token(void *x, size_t heads, size_t head_stride, int32_t pairs, posenc_layout layout,
                                const float *c, const float *s, const float *dup, const int kind) {
    const size_t P = (size_t)pairs, elem = kind == DATA_F32 ? 4 : 2;
    for (size_t h = 0; h < heads; h++) {
        char *v = (char *)x + h * head_stride * elem;
        if (layout == POSENC_LAYOUT_HALF) {
            size_t k = 0;
            for (; k + LANES <= P; k += LANES) {
                vecf a = load_data(v, k, kind), b = load_data(v, P + k, kind);
                vecf ck = VF_LOAD(c + k), sk = VF_LOAD(s + k);
                store_data(v, k, a * ck - b * sk, kind);
                store_data(v, P + k, b * ck + a * sk, kind);
            }
            rotate_leftover(v, pairs, k, layout, c, s, kind);
        } else { /* x * (c, c) + swap(x) * (-s, s): even a*c + b*(-s) = ac - bs, odd b*c + a*s */
            size_t i = 0;
            for (; i + LANES <= 2 * P; i += LANES) {
                vecf xv = load_data(v, i, kind), cd = VF_LOAD(dup + i), sd = VF_LOAD(dup + 2 * P + i);
                store_data(v, i, xv * cd + VF_SWAP_PAIRS(xv) * sd, kind);
            }
            rotate_leftover(v, pairs, i / 2, layout, c, s, kind);
        }
    }
}

#define ROTATE_BODY(kind) rotate_token(x, heads, head_stride, pairs, layout, c, s, dup, kind)
#else
#define ROTATE_BODY(kind)                                                                                  \
    (kind == DATA_F32   ? rope_rotate_token_f32_(x, heads, head_stride, pairs, layout, c, s, dup)           \
     : kind == DATA_F16 ? rope_rotate_token_f16_(x, heads, head_stride, pairs, layout, c, s, dup)           \
                        : rope_rotate_token_bf16_(x, heads, head_stride, pairs, layout, c, s, dup))
#endif

void ROTATE_F32(void *x, size_t heads, size_t head_stride, int32_t pairs, posenc_layout layout, const float *c,
                const float *s, const float *dup) {
    ROTATE_BODY(DATA_F32);
}
void ROTATE_F16(void *x, size_t heads, size_t head_stride, int32_t pairs, posenc_layout layout, const float *c,
                const float *s, const float *dup) {
    ROTATE_BODY(DATA_F16);
}
void ROTATE_BF16(void *x, size_t heads, size_t head_stride, int32_t pairs, posenc_layout layout, const float *c,
                 const float *s, const float *dup) {
    ROTATE_BODY(DATA_BF16);
}
