/* dd_lanes.h: double-double arithmetic on one vector of lanes, shared by
 * sincos_dd_body.h (every path's anchors) and the AVX-512 sinusoid kernel,
 * which rotates the next anchor while it writes rows (sinusoid_avx512.c): one
 * definition, so both give the same bits. The including file defines
 *   vec          double, __m256d or __m512d (GNU vector types: + - * work)
 *   V_FMA(a,b,c) a*b+c with one rounding
 * and builds with -ffp-contract=off (a fused a*b+c would change the bits). */
#ifndef POSENC_DD_LANES_H
#define POSENC_DD_LANES_H

/* (s, e) with s + e == a + b exactly */
static inline void two_sum(vec a, vec b, vec *s, vec *e) {
    vec sum = a + b, bb = sum - a;
    *e = (a - (sum - bb)) + (b - bb);
    *s = sum;
}
/* same, when |a| >= |b| */
static inline void quick_two_sum(vec a, vec b, vec *s, vec *e) {
    vec sum = a + b;
    *e = b - (sum - a);
    *s = sum;
}
static inline void dd_mul(vec ah, vec al, vec bh, vec bl, vec *h, vec *l) {
    vec p = ah * bh;
    vec e = V_FMA(ah, bh, -p) + (ah * bl + al * bh);
    quick_two_sum(p, e, h, l);
}
static inline void dd_add(vec ah, vec al, vec bh, vec bl, vec *h, vec *l) {
    vec s, e;
    two_sum(ah, bh, &s, &e);
    e = e + (al + bl);
    quick_two_sum(s, e, h, l);
}

/* (s, c) = (sin, cos)(a + b) from (sin, cos) a = (sh + sl, ch + cl) and
 * (sin, cos) b = (bsh + bsl, bch + bcl) */
static inline void rotate_dd_lanes(vec sh, vec sl, vec ch, vec cl, vec bsh, vec bsl, vec bch, vec bcl, vec *s_h,
                                   vec *s_l, vec *c_h, vec *c_l) {
    vec ah, al, bh, bl;
    dd_mul(sh, sl, bch, bcl, &ah, &al); /* sin(a+b) = sin a cos b + cos a sin b */
    dd_mul(ch, cl, bsh, bsl, &bh, &bl);
    dd_add(ah, al, bh, bl, s_h, s_l);
    dd_mul(ch, cl, bch, bcl, &ah, &al); /* cos(a+b) = cos a cos b - sin a sin b */
    dd_mul(sh, sl, bsh, bsl, &bh, &bl);
    dd_add(ah, al, -bh, -bl, c_h, c_l);
}
#endif
