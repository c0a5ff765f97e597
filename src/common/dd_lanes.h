/* dd_lanes.h: double-double arithmetic on one vector of lanes, shared by
 * sincos_dd_body.h (every path's anchors) and the AVX-512 sinusoid kernel,
 * which computes the next anchor while it writes rows (sinusoid_avx512.c): one
 * definition, so both give the same bits. The including file defines
 *   vec          double, __m256d or __m512d (GNU vector types: + - * work)
 *   V_SET(x)     broadcast a double
 *   V_FMA(a,b,c) a*b+c with one rounding
 *   V_ROUND(x)   nearest integer, ties to even
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
/* 1/k! as double-doubles (mpmath, 300 bits), k = 0..23 */
static const double inv_factorial[24][2] = {
    {0x1p0, 0.0}, {0x1p0, 0.0}, {0x1p-1, 0.0},
    {0x1.5555555555555p-3, 0x1.5555555555555p-57}, {0x1.5555555555555p-5, 0x1.5555555555555p-59},
    {0x1.1111111111111p-7, 0x1.1111111111111p-63}, {0x1.6c16c16c16c17p-10, -0x1.f49f49f49f49fp-65},
    {0x1.a01a01a01a01ap-13, 0x1.a01a01a01a01ap-73}, {0x1.a01a01a01a01ap-16, 0x1.a01a01a01a01ap-76},
    {0x1.71de3a556c734p-19, -0x1.c154f8ddc6c00p-73}, {0x1.27e4fb7789f5cp-22, 0x1.cbbc05b4fa99ap-76},
    {0x1.ae64567f544e4p-26, -0x1.c062e06d1f209p-80}, {0x1.1eed8eff8d898p-29, -0x1.2aec959e14c06p-83},
    {0x1.6124613a86d09p-33, 0x1.f28e0cc748ebep-87}, {0x1.93974a8c07c9dp-37, 0x1.05d6f8a2efd1fp-92},
    {0x1.ae7f3e733b81fp-41, 0x1.1d8656b0ee8cbp-97}, {0x1.ae7f3e733b81fp-45, 0x1.1d8656b0ee8cbp-101},
    {0x1.952c77030ad4ap-49, 0x1.ac981465ddc6cp-103}, {0x1.6827863b97d97p-53, 0x1.eec01221a8b0bp-107},
    {0x1.2f49b46814157p-57, 0x1.2650f61dbdcb4p-112}, {0x1.e542ba4020225p-62, 0x1.ea72b4afe3c2fp-120},
    {0x1.71b8ef6dcf572p-66, -0x1.d043ae40c4647p-120}, {0x1.0ce396db7f853p-70, -0x1.aebcdbd20331cp-124},
    {0x1.761b41316381ap-75, -0x1.3423c7d91404fp-130},
};
/* 2 pi = TWO_PI_1 + TWO_PI_2 + TWO_PI_3 (to 2e-49) */
#define TWO_PI_1 0x1.921fb54442d18p+2
#define TWO_PI_2 0x1.1a62633145c07p-52
#define TWO_PI_3 (-0x1.f1976b7ed8fbcp-108)
#define INV_TWO_PI 0x1.45f306dc9c883p-3

/* sum_{j=0..11} (-1)^j z^j / (2j + first)!  by Horner: terms j >= 6 in double
 * (they are below z^6/12! ~ 3e-11 of the sum, so double's rounding there costs
 * < 1e-26), then j = 5..0 in double-double. */
static inline void alternating_series(vec zh, vec zl, int first, vec *h, vec *l) {
    vec tail = V_SET(-inv_factorial[22 + first][0]);
    for (int j = 10; j >= 6; j--)
        tail = tail * zh + V_SET(((j % 2) ? -1.0 : 1.0) * inv_factorial[2 * j + first][0]);
    vec sh = tail, sl = V_SET(0.0);
    for (int j = 5; j >= 0; j--) {
        double sign = (j % 2) ? -1.0 : 1.0;
        dd_mul(sh, sl, zh, zl, &sh, &sl);
        dd_add(sh, sl, V_SET(sign * inv_factorial[2 * j + first][0]),
               V_SET(sign * inv_factorial[2 * j + first][1]), &sh, &sl);
    }
    *h = sh;
    *l = sl;
}

/* r = p * w - n 2pi in [-pi, pi] (+ tiny) as a double-double, to ~1e-30 */
static inline void reduce_lanes(vec p, vec wh, vec wl, vec *r_hi, vec *r_lo) {
    /* x = p * w, exact product of p and w_hi plus p * w_lo */
    vec xh = p * wh;
    vec xl = V_FMA(p, wh, -xh) + p * wl;
    quick_two_sum(xh, xl, &xh, &xl);
    /* r = x - n 2pi: n * TWO_PI_1 and n * TWO_PI_2 as exact products; xh - n*TWO_PI_1
     * is exact (Sterbenz: the two are within a factor 2 whenever n != 0) */
    vec n = V_ROUND(xh * V_SET(INV_TWO_PI));
    vec ph = n * V_SET(TWO_PI_1), pl = V_FMA(n, V_SET(TWO_PI_1), -ph);
    vec qh = n * V_SET(TWO_PI_2), ql = V_FMA(n, V_SET(TWO_PI_2), -qh);
    vec rh, rl;
    two_sum(xh - ph, -qh, &rh, &rl);
    rl = rl + (((xl - pl) - ql) - n * V_SET(TWO_PI_3));
    quick_two_sum(rh, rl, r_hi, r_lo);
}

/* (sin, cos)(p * w) in double, off by at most 13 x 2^-53 over 3M test values
 * (test_sincos_dd; RoPE's near-tie check allows 2^-42 for it):
 * sincos_lanes' reduction, then the same series and doublings in double. For a
 * token alone (rope_fast.c), whose double-double anchor nothing would step from:
 * about a quarter of sincos_lanes' work. */
static inline void sincos_double_lanes(vec p, vec wh, vec wl, vec *s, vec *c) {
    vec rh, rl;
    reduce_lanes(p, wh, wl, &rh, &rl);
    vec y = (rh + rl) * V_SET(0.25), z = y * y; /* |y| <= pi/4 + tiny */
    /* sin y / y = sum_j (-1)^j z^j / (2j+1)!, j <= 10; cos y = sum_j (-1)^j z^j / (2j)!,
     * j <= 11 (the terms left are < 1e-24), by Horner */
    vec ss = V_SET(inv_factorial[21][0]), cs = V_SET(-inv_factorial[22][0]) * z + V_SET(inv_factorial[20][0]);
    for (int j = 9; j >= 0; j--) {
        double sign = (j % 2) ? -1.0 : 1.0;
        ss = ss * z + V_SET(sign * inv_factorial[2 * j + 1][0]);
        cs = cs * z + V_SET(sign * inv_factorial[2 * j][0]);
    }
    vec sh = ss * y, ch = cs;
    for (int i = 0; i < 2; i++) { /* sin 2y = 2 sin y cos y, cos 2y = 1 - 2 sin^2 y */
        vec t = V_SET(2.0) * sh * ch;
        ch = V_SET(1.0) - V_SET(2.0) * (sh * sh);
        sh = t;
    }
    *s = sh;
    *c = ch;
}

static inline void sincos_lanes(vec p, vec wh, vec wl, vec *s_hi, vec *s_lo, vec *c_hi, vec *c_lo) {
    vec rh, rl;
    reduce_lanes(p, wh, wl, &rh, &rl);
    /* y = r/4 (|y| <= pi/4 + tiny), z = y^2: sin y = y * S(z), cos y = C(z) */
    vec yh = rh * V_SET(0.25), yl = rl * V_SET(0.25), zh, zl, sh, sl, ch, cl;
    dd_mul(yh, yl, yh, yl, &zh, &zl);
    alternating_series(zh, zl, 1, &sh, &sl);
    dd_mul(sh, sl, yh, yl, &sh, &sl);
    alternating_series(zh, zl, 0, &ch, &cl);
    /* two doublings: sin 2y = 2 sin y cos y, cos 2y = 1 - 2 sin^2 y */
    for (int i = 0; i < 2; i++) {
        vec th, tl, uh, ul;
        dd_mul(sh, sl, ch, cl, &th, &tl);
        dd_mul(sh, sl, sh, sl, &uh, &ul);
        dd_add(V_SET(1.0), V_SET(0.0), uh * V_SET(-2.0), ul * V_SET(-2.0), &ch, &cl);
        sh = th * V_SET(2.0);
        sl = tl * V_SET(2.0);
    }
    *s_hi = sh;
    *s_lo = sl;
    *c_hi = ch;
    *c_lo = cl;
}
#endif
