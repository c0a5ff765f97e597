/* rope_rotate_body.h: the vector RoPE rotation of rope_kernels.h, written once
 * for AVX2 and AVX-512. The including file defines
 *   vecf                 __m256 or __m512 (GNU vector types: + - * work)
 *   LANES                floats per vector
 *   VF_LOAD(p), VF_STORE(p, v)   unaligned float loads/stores
 *   VF_SWAP_PAIRS(x)     (x1 x0 x3 x2 ...)
 *   VF_SUM(a, b), VF_DIFF(a, b)  a + b, a - b rounded once (the bits of + and -)
 *   VF_DUP(p)            LANES/2 floats from p, each twice: (p0 p0 p1 p1 ...)
 *   VF_NEG_EVEN(x)       (-x0 x1 -x2 x3 ...) (sign flip: exact)
 *   VF_EVENS(x, y), VF_ODDS(x, y)   the even / odd elements of the 2 x LANES
 *                        floats x then y, in order
 *   load_f16, store_f16  LANES f16 values <-> vecf (ISA conversions; store_f16
 *                        may leave NaN payloads, made canonical after the token)
 *   veci, VI_ZERO(), vi_absmax(acc, v), vi_above(acc, limit)   a running max
 *     of |bits| per lane (integer compare) and whether any lane exceeds limit
 *   VI_LOAD(p), VI_STORE(p, v)   2 x LANES 16-bit values
 *   bf16_even(w), bf16_odd(w)    the even / odd bf16 elements of w widened to f32
 *                        (a shift, an AND: the lanes stay where they are)
 *   bf16_round(v)        posenc_f32_to_bf16's rounding (u + 0x7fff + lsb), the
 *                        result in the top 16 bits (finite lanes: see words_above)
 *   bf16_join(e, o)      the top halves of e and o as 2 x LANES bf16 values,
 *                        e's at even places (a shift, an AND, an OR)
 *   vw_absmax(acc, w), vw_above(acc, big)   the same over 16-bit values
 *   ROPE_RESIDENT_MAX    how many vectors of cos/sin a kernel may keep in
 *                        registers across a token's heads (AVX-512 has 32)
 *   ROPE_ISA             avx2 or avx512: the kernels are rope_rotate_token_<dtype>_<ROPE_ISA>_
 * and, for the AVX512_BF16 build (rope_avx512bf16.c, ROPE_BF16_ONLY: its bf16
 * kernel alone), ROPE_NATIVE_BF16 with bf16_round_join(e, o) (both rounded and
 * joined by the ISA), bf16_words_outside(v, n, big) (a head's inputs above big
 * or below what the ISA rounding allows) and cos_sin_tiny(c, s, P);
 * and builds with -ffp-contract=off (a fused a*c - b*s would change the bits).
 *
 * bf16 never leaves its lanes: an element pair (2j, 2j+1) of a 2 x LANES
 * vector is 32-bit lane j, so a shift and an AND widen the evens and the odds,
 * and the rounded results go back with a shift, an AND and an OR; no permute.
 * Interleaved pairs are exactly (even, odd); half-split pairs rotate evens
 * with evens and odds with odds, against cos/sin split the same way (per
 * token). cos/sin (and their duplicated or split forms) stay in registers over
 * all heads when they fit (ROPE_RESIDENT_MAX; a head of 128 channels on
 * AVX-512), else they are read from the token's scratch.
 * Leftover pairs go to the scalar kernels (rope_apply.c).
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

#define ALWAYS_INLINE static inline __attribute__((always_inline))
/* Makes v opaque to the compiler, so it keeps v in a register instead of
 * reading cos/sin from memory again in every head (which it may, as the
 * values are equal). */
/* Each head asks for the bytes ROPE_PREFETCH_BYTES ahead (a prefetch for
 * writing, one per 64-byte line). The half-split loops read each head as two
 * interleaved streams 256 bytes apart, which the hardware prefetcher of this
 * AMD core does not run far enough ahead of: f32 half-split went 0.58-0.64 ->
 * 0.80-0.92 of the in-place ceiling, interleaved 0.89-0.93 -> 1.01-1.02
 * (q[4096,32,128], one thread; 4, 8, 16 and 32 KiB tried, 8 the best). A
 * prefetch past the end of x is harmless (it never faults). */
#ifndef ROPE_PREFETCH_BYTES
#define ROPE_PREFETCH_BYTES 8192
#endif
#define PREFETCH_AHEAD(p, bytes) \
    for (size_t pf_ = 0; pf_ < (bytes); pf_ += 64) __builtin_prefetch((const char *)(p) + ROPE_PREFETCH_BYTES + pf_, 1, 3)
#define KEEP_IN_REGISTER(v) __asm__("" : "+v"(v))

ALWAYS_INLINE vecf load_data(const void *v, size_t i, const int kind) {
    if (kind == DATA_F32) return VF_LOAD((const float *)v + i);
    return load_f16((const uint16_t *)v + i);
}

ALWAYS_INLINE void store_data(void *v, size_t i, vecf x, const int kind) {
    if (kind == DATA_F32) VF_STORE((float *)v + i, x);
    else store_f16((uint16_t *)v + i, x);
}

/* Whether one of the n 16-bit values at v has |bits| above big: a head whose
 * inputs all stay within big (rope_kernels.h: its rotation cannot overflow
 * the dtype) and are finite cannot produce inf/NaN, so the vector loops need
 * no check; a head above it (rare) goes to the scalar kernel, which finds
 * what happened. */
ALWAYS_INLINE bool words_above(const uint16_t *v, size_t n, uint32_t big) {
    veci acc = VI_ZERO();
    size_t i = 0;
    for (; i + 2 * LANES <= n; i += 2 * LANES) acc = vw_absmax(acc, VI_LOAD(v + i));
    bool above = vw_above(acc, big);
    for (; i < n; i++) above |= (uint32_t)(v[i] & 0x7fffu) > big;
    return above;
}

/* The scalar kernels for pairs first..P-1 of one head (a call: only on the
 * rare or short paths, which is what lets cos/sin stay in registers). */
static inline unsigned rotate_scalar(void *v, int32_t pairs, size_t first_pair, posenc_layout layout,
                                     const float *c, const float *s, uint32_t big_bits, const int kind) {
    if (kind == DATA_F32) return rope_rotate_pairs_f32_(v, pairs, (int32_t)first_pair, layout, c, s, big_bits);
    return rope_rotate_pairs_16_(v, pairs, (int32_t)first_pair, layout, c, s, kind == DATA_F16, big_bits);
}

/* ---- f32 / f16 ----------------------------------------------------------------
 * f32: the non-finite check of rope_kernels.h rides on the loop (a running max
 * of the inputs' |bits|: an AND and a max per vector); f16 checks each head's
 * inputs first (words_above). NV: vectors of cos/sin per head kept in
 * registers (a constant), 0: read from memory. */

/* rotate_run (and bf16's *_run): NV vectors (= all pairs) per head, cos/sin in registers,
 * heads h.. until an f16 head needs the scalar kernel; they return where they
 * stopped. No call inside: a call clobbers every vector register, and with
 * one in the loop (even never taken) the compiler kept cos/sin on the stack
 * and read them again for every product (bf16 half-split: 0.66 of its
 * ceiling, 0.89 without the call). acc: f32's running max of |bits|. */
ALWAYS_INLINE size_t rotate_run(void *x, size_t h, size_t heads, size_t head_stride, const float *c,
                                const float *s, uint32_t big_bits, veci *acc, const int kind, const bool half,
                                const int NV) {
    /* the pair count as a constant: the head's check and prefetch unroll */
    const size_t elem = kind == DATA_F32 ? 4 : 2, P = half ? (size_t)NV * LANES : (size_t)NV * LANES / 2;
    vecf cr[ROPE_RESIDENT_MAX / 2 + 1], sr[ROPE_RESIDENT_MAX / 2 + 1];
    for (int j = 0; j < NV; j++) {
        /* interleaved: x * (c, c) + swap(x) * (-s, s): even a*c + b*(-s) = ac - bs, odd b*c + a*s;
         * NV then counts vectors of channels */
        cr[j] = half ? VF_LOAD(c + j * LANES) : VF_DUP(c + j * LANES / 2);
        sr[j] = half ? VF_LOAD(s + j * LANES) : VF_NEG_EVEN(VF_DUP(s + j * LANES / 2));
        KEEP_IN_REGISTER(cr[j]);
        KEEP_IN_REGISTER(sr[j]);
    }
    veci most = *acc;
    for (; h < heads; h++) {
        char *v = (char *)x + h * head_stride * elem;
        if (kind == DATA_F16 && __builtin_expect(words_above((const uint16_t *)v, 2 * P, big_bits), 0)) break;
        PREFETCH_AHEAD(v, 2 * P * elem);
        for (int j = 0; j < NV; j++) {
            const size_t k = (size_t)j * LANES;
            if (half) {
                vecf a = load_data(v, k, kind), b = load_data(v, P + k, kind);
                store_data(v, k, VF_DIFF(a * cr[j], b * sr[j]), kind);
                store_data(v, P + k, VF_SUM(b * cr[j], a * sr[j]), kind);
                if (kind == DATA_F32) most = vi_absmax(vi_absmax(most, a), b);
            } else {
                vecf xv = load_data(v, k, kind);
                store_data(v, k, VF_SUM(xv * cr[j], VF_SWAP_PAIRS(xv) * sr[j]), kind);
                if (kind == DATA_F32) most = vi_absmax(most, xv);
            }
        }
    }
    *acc = most;
    return h;
}

/* NV == 0: any pair count, cos/sin read from memory (interleaved: from dup,
 * scratch for 4P floats, filled here). */
ALWAYS_INLINE unsigned rotate_heads(void *x, size_t heads, size_t head_stride, int32_t pairs, posenc_layout layout,
                                    const float *c, const float *s, float *dup, uint32_t big_bits, const int kind,
                                    const int NV) {
    const size_t P = (size_t)pairs, elem = kind == DATA_F32 ? 4 : 2;
    const bool half = layout == POSENC_LAYOUT_HALF;
    veci acc = VI_ZERO();
    unsigned flags = 0;
    if (NV) {
        size_t h = half ? rotate_run(x, 0, heads, head_stride, c, s, big_bits, &acc, kind, true, NV)
                        : rotate_run(x, 0, heads, head_stride, c, s, big_bits, &acc, kind, false, NV);
        while (h < heads) { /* an f16 head above big */
            flags |= rotate_scalar((char *)x + h * head_stride * elem, pairs, 0, layout, c, s, big_bits, kind);
            h = half ? rotate_run(x, h + 1, heads, head_stride, c, s, big_bits, &acc, kind, true, NV)
                     : rotate_run(x, h + 1, heads, head_stride, c, s, big_bits, &acc, kind, false, NV);
        }
    } else if (half) {
        const size_t n = P / LANES * LANES; /* pairs done in vectors */
        for (size_t h = 0; h < heads; h++) {
            char *v = (char *)x + h * head_stride * elem;
            if (kind == DATA_F16 && __builtin_expect(words_above((const uint16_t *)v, 2 * P, big_bits), 0)) {
                flags |= rotate_scalar(v, pairs, 0, POSENC_LAYOUT_HALF, c, s, big_bits, kind);
                continue;
            }
            PREFETCH_AHEAD(v, 2 * P * elem);
            for (size_t k = 0; k < n; k += LANES) {
                vecf a = load_data(v, k, kind), b = load_data(v, P + k, kind);
                vecf ck = VF_LOAD(c + k), sk = VF_LOAD(s + k);
                store_data(v, k, VF_DIFF(a * ck, b * sk), kind);
                store_data(v, P + k, VF_SUM(b * ck, a * sk), kind);
                if (kind == DATA_F32) acc = vi_absmax(vi_absmax(acc, a), b);
            }
            if (n < P) flags |= rotate_scalar(v, pairs, n, POSENC_LAYOUT_HALF, c, s, big_bits, kind);
        }
    } else {
        const size_t n = 2 * P / LANES * LANES; /* channels done in vectors */
        for (size_t i = 0; i < n; i += LANES) {
            VF_STORE(dup + i, VF_DUP(c + i / 2));
            VF_STORE(dup + 2 * P + i, VF_NEG_EVEN(VF_DUP(s + i / 2)));
        }
        for (size_t h = 0; h < heads; h++) {
            char *v = (char *)x + h * head_stride * elem;
            if (kind == DATA_F16 && __builtin_expect(words_above((const uint16_t *)v, 2 * P, big_bits), 0)) {
                flags |= rotate_scalar(v, pairs, 0, POSENC_LAYOUT_INTERLEAVED, c, s, big_bits, kind);
                continue;
            }
            PREFETCH_AHEAD(v, 2 * P * elem);
            for (size_t i = 0; i < n; i += LANES) {
                vecf xv = load_data(v, i, kind);
                store_data(v, i, VF_SUM(xv * VF_LOAD(dup + i), VF_SWAP_PAIRS(xv) * VF_LOAD(dup + 2 * P + i)), kind);
                if (kind == DATA_F32) acc = vi_absmax(acc, xv);
            }
            if (n < 2 * P) flags |= rotate_scalar(v, pairs, n / 2, POSENC_LAYOUT_INTERLEAVED, c, s, big_bits, kind);
        }
    }
    if (kind == DATA_F32)
        flags |= (vi_above(acc, ROPE_FINITE_BITS_F32) ? ROPE_BAD_INPUT : 0u) |
                 (vi_above(acc, big_bits) ? ROPE_MAYBE_OVERFLOW : 0u);
    return flags;
}

static inline unsigned rotate_token(void *x, size_t heads, size_t head_stride, int32_t pairs, posenc_layout layout,
                                    const float *c, const float *s, float *dup, uint32_t big_bits, const int kind) {
    const size_t P = (size_t)pairs;
    if (layout == POSENC_LAYOUT_HALF) {
        const size_t nv = P % LANES == 0 ? P / LANES : 0;
        if (nv == 4 && 8 <= ROPE_RESIDENT_MAX) return rotate_heads(x, heads, head_stride, pairs, layout, c, s, dup, big_bits, kind, 4);
        if (nv == 2 && 4 <= ROPE_RESIDENT_MAX) return rotate_heads(x, heads, head_stride, pairs, layout, c, s, dup, big_bits, kind, 2);
        if (nv == 1) return rotate_heads(x, heads, head_stride, pairs, layout, c, s, dup, big_bits, kind, 1);
        return rotate_heads(x, heads, head_stride, pairs, layout, c, s, dup, big_bits, kind, 0);
    }
    const size_t nv = 2 * P % LANES == 0 ? 2 * P / LANES : 0; /* vectors of channels */
    if (nv == 8 && 16 <= ROPE_RESIDENT_MAX)
        return rotate_heads(x, heads, head_stride, pairs, layout, c, s, dup, big_bits, kind, 8);
    if (nv == 4 && 8 <= ROPE_RESIDENT_MAX)
        return rotate_heads(x, heads, head_stride, pairs, layout, c, s, dup, big_bits, kind, 4);
    if (nv == 2) return rotate_heads(x, heads, head_stride, pairs, layout, c, s, dup, big_bits, kind, 2);
    return rotate_heads(x, heads, head_stride, pairs, layout, c, s, dup, big_bits, kind, 0);
}

/* ---- bf16 ---------------------------------------------------------------------
 * Each head's inputs are checked first (words_above); the loops then round
 * without looking. NG: groups of cos/sin kept in registers. */

/* 2 x LANES results: e at the even places, o at the odd ones */
#ifdef ROPE_NATIVE_BF16
#define BF16_ROUND_JOIN(e, o) bf16_round_join((e), (o))
/* A head goes to rope_avx512.c's kernel (integer rounding, its own check)
 * when an input is above big, or is 0 or tiny (rope_avx512bf16.c: a tiny one
 * could make a result an f32 subnormal, which the native rounding flushes to
 * zero; 0 is harmless, but one compare catches both). */
#define BF16_HEAD_NEEDS_SCALAR(v, n, big) bf16_words_outside((v), (n), (big))
#define BF16_HEAD_ELSEWHERE(v, layout) \
    rope_rotate_token_bf16_avx512_((v), 1, 0, pairs, (layout), c, s, scratch, big_bits)
#else
#define BF16_ROUND_JOIN(e, o) bf16_join(bf16_round(e), bf16_round(o))
#define BF16_HEAD_NEEDS_SCALAR(v, n, big) words_above((v), (n), (big))
#define BF16_HEAD_ELSEWHERE(v, layout) rotate_scalar((v), pairs, 0, (layout), c, s, big_bits, DATA_BF16)
#endif
#define STORE_BF16_PAIRS(p, e, o) VI_STORE((p), BF16_ROUND_JOIN((e), (o)))

/* interleaved: group j = pairs j*LANES .. +LANES-1 = 2 x LANES channels.
 * bf16_interleaved_run: NG groups (= all pairs) per head, as half_run. */
ALWAYS_INLINE size_t bf16_interleaved_run(uint16_t *x, size_t h, size_t heads, size_t head_stride,
                                          const float *c, const float *s, uint32_t big_bits, const int NG) {
    const size_t P = (size_t)NG * LANES; /* a constant, as in rotate_run */
    vecf cr[ROPE_RESIDENT_MAX / 2 + 1], sr[ROPE_RESIDENT_MAX / 2 + 1];
    for (int j = 0; j < NG; j++) {
        cr[j] = VF_LOAD(c + j * LANES), sr[j] = VF_LOAD(s + j * LANES);
        KEEP_IN_REGISTER(cr[j]);
        KEEP_IN_REGISTER(sr[j]);
    }
    for (; h < heads; h++) {
        uint16_t *v = x + h * head_stride;
        if (__builtin_expect(BF16_HEAD_NEEDS_SCALAR(v, 2 * P, big_bits), 0)) break;
        PREFETCH_AHEAD(v, 4 * P);
        for (int j = 0; j < NG; j++) {
            veci w = VI_LOAD(v + 2 * j * LANES);
            vecf a = bf16_even(w), b = bf16_odd(w);
            STORE_BF16_PAIRS(v + 2 * j * LANES, VF_DIFF(a * cr[j], b * sr[j]), VF_SUM(b * cr[j], a * sr[j]));
        }
    }
    return h;
}

ALWAYS_INLINE unsigned bf16_interleaved_heads(uint16_t *x, size_t heads, size_t head_stride, int32_t pairs,
                                              const float *c, const float *s, float *scratch, uint32_t big_bits,
                                              const int NG) {
    (void)scratch; /* only the native build's fallback uses it */
    const size_t P = (size_t)pairs;
    unsigned flags = 0;
    if (NG) {
        for (size_t h = bf16_interleaved_run(x, 0, heads, head_stride, c, s, big_bits, NG); h < heads;
             h = bf16_interleaved_run(x, h + 1, heads, head_stride, c, s, big_bits, NG))
            flags |= BF16_HEAD_ELSEWHERE(x + h * head_stride, POSENC_LAYOUT_INTERLEAVED);
        return flags;
    }
    const size_t n = P / LANES * LANES; /* pairs done in vectors */
    for (size_t h = 0; h < heads; h++) {
        uint16_t *v = x + h * head_stride;
        if (__builtin_expect(BF16_HEAD_NEEDS_SCALAR(v, 2 * P, big_bits), 0)) {
            flags |= BF16_HEAD_ELSEWHERE(v, POSENC_LAYOUT_INTERLEAVED);
            continue;
        }
        PREFETCH_AHEAD(v, 4 * P);
        for (size_t k = 0; k < n; k += LANES) {
            veci w = VI_LOAD(v + 2 * k);
            vecf a = bf16_even(w), b = bf16_odd(w);
            vecf ck = VF_LOAD(c + k), sk = VF_LOAD(s + k);
            STORE_BF16_PAIRS(v + 2 * k, VF_DIFF(a * ck, b * sk), VF_SUM(b * ck, a * sk));
        }
        if (n < P) flags |= rotate_scalar(v, pairs, n, POSENC_LAYOUT_INTERLEAVED, c, s, big_bits, DATA_BF16);
    }
    return flags;
}

/* half-split: group j = pairs j*2L .. +2L-1: a = channels k.., b = P + k..; the
 * evens of a rotate with the evens of b against the evens of cos/sin.
 * bf16_half_run: NG groups (= all pairs) per head, cos/sin in registers, heads
 * h.. until one needs the other kernel; returns where it stopped. No call
 * inside, so nothing makes the compiler keep cos/sin on the stack (a call
 * clobbers every vector register: with one in the loop, each product read
 * its cos/sin from memory and bf16 half-split ran at 0.66 of its ceiling). */
ALWAYS_INLINE size_t bf16_half_run(uint16_t *x, size_t h, size_t heads, size_t head_stride,
                                   const float *c, const float *s, uint32_t big_bits, const int NG) {
    const size_t P = (size_t)NG * 2 * LANES; /* a constant, as in rotate_run */
    vecf ce[ROPE_RESIDENT_MAX / 4 + 1], co[ROPE_RESIDENT_MAX / 4 + 1], se[ROPE_RESIDENT_MAX / 4 + 1],
        so[ROPE_RESIDENT_MAX / 4 + 1];
    for (int j = 0; j < NG; j++) {
        const float *cj = c + 2 * j * LANES, *sj = s + 2 * j * LANES;
        ce[j] = VF_EVENS(VF_LOAD(cj), VF_LOAD(cj + LANES)), co[j] = VF_ODDS(VF_LOAD(cj), VF_LOAD(cj + LANES));
        se[j] = VF_EVENS(VF_LOAD(sj), VF_LOAD(sj + LANES)), so[j] = VF_ODDS(VF_LOAD(sj), VF_LOAD(sj + LANES));
        KEEP_IN_REGISTER(ce[j]);
        KEEP_IN_REGISTER(co[j]);
        KEEP_IN_REGISTER(se[j]);
        KEEP_IN_REGISTER(so[j]);
    }
    for (; h < heads; h++) {
        uint16_t *v = x + h * head_stride;
        if (__builtin_expect(BF16_HEAD_NEEDS_SCALAR(v, 2 * P, big_bits), 0)) break;
        PREFETCH_AHEAD(v, 4 * P);
        veci lo[ROPE_RESIDENT_MAX / 4 + 1], hi[ROPE_RESIDENT_MAX / 4 + 1];
        for (int j = 0; j < NG; j++) {
            veci wa = VI_LOAD(v + 2 * j * LANES), wb = VI_LOAD(v + P + 2 * j * LANES);
            vecf ae = bf16_even(wa), ao = bf16_odd(wa), be = bf16_even(wb), bo = bf16_odd(wb);
            lo[j] = BF16_ROUND_JOIN(VF_DIFF(ae * ce[j], be * se[j]), VF_DIFF(ao * co[j], bo * so[j]));
            hi[j] = BF16_ROUND_JOIN(VF_SUM(be * ce[j], ae * se[j]), VF_SUM(bo * co[j], ao * so[j]));
        }
        for (int j = 0; j < NG; j++) VI_STORE(v + 2 * j * LANES, lo[j]); /* in address order */
        for (int j = 0; j < NG; j++) VI_STORE(v + P + 2 * j * LANES, hi[j]);
    }
    return h;
}

/* NG == 0: any pair count; cos/sin split into scratch (4P floats). */
ALWAYS_INLINE unsigned bf16_half_heads(uint16_t *x, size_t heads, size_t head_stride, int32_t pairs, const float *c,
                                       const float *s, float *scratch, uint32_t big_bits, const int NG) {
    const size_t P = (size_t)pairs;
    unsigned flags = 0;
    if (NG) {
        for (size_t h = bf16_half_run(x, 0, heads, head_stride, c, s, big_bits, NG); h < heads;
             h = bf16_half_run(x, h + 1, heads, head_stride, c, s, big_bits, NG))
            flags |= BF16_HEAD_ELSEWHERE(x + h * head_stride, POSENC_LAYOUT_HALF);
        return flags;
    }
    float *split = scratch;
    const size_t n = P / (2 * LANES) * (2 * LANES); /* pairs done in vectors */
    for (size_t k = 0; k < n; k += 2 * LANES) {
        VF_STORE(split + k, VF_EVENS(VF_LOAD(c + k), VF_LOAD(c + k + LANES)));
        VF_STORE(split + k + LANES, VF_ODDS(VF_LOAD(c + k), VF_LOAD(c + k + LANES)));
        VF_STORE(split + 2 * P + k, VF_EVENS(VF_LOAD(s + k), VF_LOAD(s + k + LANES)));
        VF_STORE(split + 2 * P + k + LANES, VF_ODDS(VF_LOAD(s + k), VF_LOAD(s + k + LANES)));
    }
    for (size_t h = 0; h < heads; h++) {
        uint16_t *v = x + h * head_stride;
        if (__builtin_expect(BF16_HEAD_NEEDS_SCALAR(v, 2 * P, big_bits), 0)) {
            flags |= BF16_HEAD_ELSEWHERE(v, POSENC_LAYOUT_HALF);
            continue;
        }
        PREFETCH_AHEAD(v, 4 * P);
        for (size_t k = 0; k < n; k += 2 * LANES) {
            veci wa = VI_LOAD(v + k), wb = VI_LOAD(v + P + k);
            vecf ae = bf16_even(wa), ao = bf16_odd(wa), be = bf16_even(wb), bo = bf16_odd(wb);
            vecf cek = VF_LOAD(split + k), cok = VF_LOAD(split + k + LANES);
            vecf sek = VF_LOAD(split + 2 * P + k), sok = VF_LOAD(split + 2 * P + k + LANES);
            STORE_BF16_PAIRS(v + k, VF_DIFF(ae * cek, be * sek), VF_DIFF(ao * cok, bo * sok));
            STORE_BF16_PAIRS(v + P + k, VF_SUM(be * cek, ae * sek), VF_SUM(bo * cok, ao * sok));
        }
        if (n < P) flags |= rotate_scalar(v, pairs, n, POSENC_LAYOUT_HALF, c, s, big_bits, DATA_BF16);
    }
    return flags;
}

static inline unsigned rotate_token_bf16(uint16_t *x, size_t heads, size_t head_stride, int32_t pairs,
                                         posenc_layout layout, const float *c, const float *s, float *scratch,
                                         uint32_t big_bits) {
    const size_t P = (size_t)pairs;
#ifdef ROPE_NATIVE_BF16
    if (__builtin_expect(cos_sin_tiny(c, s, P), 0)) /* rare: the integer rounding of the AVX-512 build */
        return rope_rotate_token_bf16_avx512_(x, heads, head_stride, pairs, layout, c, s, scratch, big_bits);
#endif
    if (layout == POSENC_LAYOUT_HALF) {
        const size_t ng = P % (2 * LANES) == 0 ? P / (2 * LANES) : 0;
        if (ng == 2 && 8 <= ROPE_RESIDENT_MAX) return bf16_half_heads(x, heads, head_stride, pairs, c, s, scratch, big_bits, 2);
        if (ng == 1) return bf16_half_heads(x, heads, head_stride, pairs, c, s, scratch, big_bits, 1);
        return bf16_half_heads(x, heads, head_stride, pairs, c, s, scratch, big_bits, 0);
    }
    const size_t ng = P % LANES == 0 ? P / LANES : 0;
    if (ng == 4 && 8 <= ROPE_RESIDENT_MAX) return bf16_interleaved_heads(x, heads, head_stride, pairs, c, s, scratch, big_bits, 4);
    if (ng == 2 && 4 <= ROPE_RESIDENT_MAX) return bf16_interleaved_heads(x, heads, head_stride, pairs, c, s, scratch, big_bits, 2);
    if (ng == 1) return bf16_interleaved_heads(x, heads, head_stride, pairs, c, s, scratch, big_bits, 1);
    return bf16_interleaved_heads(x, heads, head_stride, pairs, c, s, scratch, big_bits, 0);
}

#define ROTATE_BODY(kind)                                                                                      \
    return kind == DATA_BF16 ? rotate_token_bf16(x, heads, head_stride, pairs, layout, c, s, scratch, big_bits)   \
                             : rotate_token(x, heads, head_stride, pairs, layout, c, s, scratch, big_bits, kind)
#else
#define ROTATE_BODY(kind)                                                                                  \
    return kind == DATA_F32   ? rope_rotate_token_f32_(x, heads, head_stride, pairs, layout, c, s, scratch, big_bits)  \
           : kind == DATA_F16 ? rope_rotate_token_f16_(x, heads, head_stride, pairs, layout, c, s, scratch, big_bits)  \
                              : rope_rotate_token_bf16_(x, heads, head_stride, pairs, layout, c, s, scratch, big_bits)
#endif

#ifndef ROPE_BF16_ONLY
unsigned ROTATE_F32(void *x, size_t heads, size_t head_stride, int32_t pairs, posenc_layout layout, const float *c,
                    const float *s, float *scratch, uint32_t big_bits) {
    ROTATE_BODY(DATA_F32);
}
unsigned ROTATE_F16(void *x, size_t heads, size_t head_stride, int32_t pairs, posenc_layout layout, const float *c,
                    const float *s, float *scratch, uint32_t big_bits) {
    ROTATE_BODY(DATA_F16);
}
#endif
unsigned ROTATE_BF16(void *x, size_t heads, size_t head_stride, int32_t pairs, posenc_layout layout,
                     const float *c, const float *s, float *scratch, uint32_t big_bits) {
    ROTATE_BODY(DATA_BF16);
}
