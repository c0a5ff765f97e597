/* sincos_dd_body.h: the double-double arithmetic of sincos_dd.h, written once
 * for every path. The including file defines
 *   vec          double, __m256d or __m512d (GNU vector types: + - * work)
 *   LANES        doubles per vec
 *   V_SET(x)     broadcast a double
 *   V_LOAD(p), V_STORE(p, v)
 *   V_FMA(a,b,c) a*b+c with one rounding
 *   V_ROUND(x)   nearest integer, ties to even
 *   V_STORE_F32(p, v)  LANES floats: each double of v rounded once to float
 *   SINCOS_DD, ROTATE_DD, ROTATE_RUN, RUN_TO_F32   the names of the functions to define
 * and builds with -ffp-contract=off (a fused a*b+c would change the bits). The
 * vector builds hand their last n % LANES items to the scalar build. */

#include "dd_lanes.h"

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

static inline void sincos_lanes(vec p, vec wh, vec wl, vec *s_hi, vec *s_lo, vec *c_hi, vec *c_lo) {
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
    quick_two_sum(rh, rl, &rh, &rl);
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

static inline void store_lanes(const posenc_dd_sincos_ *out, size_t k, vec sh, vec sl, vec ch, vec cl) {
    V_STORE(out->s_hi + k, sh);
    V_STORE(out->s_lo + k, sl);
    V_STORE(out->c_hi + k, ch);
    V_STORE(out->c_lo + k, cl);
}
/* the arrays from item k on */
static inline posenc_dd_sincos_ from_item(const posenc_dd_sincos_ *a, size_t k) {
    return (posenc_dd_sincos_){a->s_hi + k, a->s_lo + k, a->c_hi + k, a->c_lo + k};
}

void SINCOS_DD(size_t n, double p, const double *w_hi, const double *w_lo,
               const posenc_dd_sincos_ *out) {
    size_t k = 0;
    for (; k + LANES <= n; k += LANES) {
        vec sh, sl, ch, cl;
        sincos_lanes(V_SET(p), V_LOAD(w_hi + k), V_LOAD(w_lo + k), &sh, &sl, &ch, &cl);
        store_lanes(out, k, sh, sl, ch, cl);
    }
    if (k < n) {
        posenc_dd_sincos_ rest = from_item(out, k);
        posenc_sincos_dd_scalar_(n - k, p, w_hi + k, w_lo + k, &rest);
    }
}

void ROTATE_DD(size_t n, const posenc_dd_sincos_ *state, const posenc_dd_sincos_ *by) {
    size_t k = 0;
    for (; k + LANES <= n; k += LANES) {
        vec sh = V_LOAD(state->s_hi + k), sl = V_LOAD(state->s_lo + k);
        vec ch = V_LOAD(state->c_hi + k), cl = V_LOAD(state->c_lo + k);
        vec bsh = V_LOAD(by->s_hi + k), bsl = V_LOAD(by->s_lo + k);
        vec bch = V_LOAD(by->c_hi + k), bcl = V_LOAD(by->c_lo + k);
        vec ns_h, ns_l, nc_h, nc_l;
        rotate_dd_lanes(sh, sl, ch, cl, bsh, bsl, bch, bcl, &ns_h, &ns_l, &nc_h, &nc_l);
        store_lanes(state, k, ns_h, ns_l, nc_h, nc_l);
    }
    if (k < n) {
        posenc_dd_sincos_ rest_state = from_item(state, k), rest_by = from_item(by, k);
        posenc_rotate_dd_scalar_(n - k, &rest_state, &rest_by);
    }
}

/* recurrence.h's double step for pairs [0, n): two rounded products and a
 * rounded sum or difference, as posenc_rotate_run_ (no FMA anywhere). */
void ROTATE_RUN(size_t n, const double *step_s, const double *step_c, double *run_s, double *run_c) {
    size_t k = 0;
    for (; k + LANES <= n; k += LANES) {
        vec s = V_LOAD(run_s + k), c = V_LOAD(run_c + k), ss = V_LOAD(step_s + k), sc = V_LOAD(step_c + k);
        V_STORE(run_s + k, s * sc + c * ss);
        V_STORE(run_c + k, c * sc - s * ss);
    }
    if (k < n) posenc_rotate_run_scalar_(n - k, step_s + k, step_c + k, run_s + k, run_c + k);
}

/* s_out[k] = (float)(run_s[k] * scale_s), c_out[k] likewise: a product in
 * double rounded once to float, as C's cast does. */
void RUN_TO_F32(size_t n, const double *run_s, const double *run_c, double scale_s, double scale_c, float *s_out,
                float *c_out) {
    size_t k = 0;
    const vec vs = V_SET(scale_s), vc = V_SET(scale_c);
    for (; k + LANES <= n; k += LANES) {
        V_STORE_F32(s_out + k, V_LOAD(run_s + k) * vs);
        V_STORE_F32(c_out + k, V_LOAD(run_c + k) * vc);
    }
    for (; k < n; k++) {
        s_out[k] = (float)(run_s[k] * scale_s);
        c_out[k] = (float)(run_c[k] * scale_c);
    }
}
