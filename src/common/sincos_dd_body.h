/* sincos_dd_body.h: the double-double arithmetic of sincos_dd.h, written once
 * for every path. The including file defines
 *   vec          double, __m256d or __m512d (GNU vector types: + - * work)
 *   LANES        doubles per vec
 *   V_SET(x)     broadcast a double
 *   V_LOAD(p), V_STORE(p, v)
 *   V_FMA(a,b,c) a*b+c with one rounding
 *   V_ROUND(x)   nearest integer, ties to even
 *   V_STORE_F32(p, v)  LANES floats: each double of v rounded once to float
 *   V_F32_DIFFER(a, b) nonzero if some lane of a and b rounds to different floats
 *   SINCOS_DD, SINCOS_RUN, ROTATE_DD, ROTATE_RUN, RUN_TO_F32   the names of the functions to define
 * and builds with -ffp-contract=off (a fused a*b+c would change the bits). The
 * vector builds hand their last n % LANES items to the scalar build. */

#include "dd_lanes.h"

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

void SINCOS_RUN(size_t n, double p, const double *w_hi, const double *w_lo, double *run_s, double *run_c) {
    size_t k = 0;
    for (; k + LANES <= n; k += LANES) {
        vec s, c;
        sincos_double_lanes(V_SET(p), V_LOAD(w_hi + k), V_LOAD(w_lo + k), &s, &c);
        V_STORE(run_s + k, s);
        V_STORE(run_c + k, c);
    }
    if (k < n) posenc_sincos_run_scalar_(n - k, p, w_hi + k, w_lo + k, run_s + k, run_c + k);
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
bool RUN_TO_F32(size_t n, const double *run_s, const double *run_c, double scale_s, double scale_c, float *s_out,
                float *c_out) {
    size_t k = 0;
    const vec vs = V_SET(scale_s), vc = V_SET(scale_c);
    const double e = posenc_run_error_(scale_s, scale_c);
    const vec ve = V_SET(e);
    int near = 0;
    for (; k + LANES <= n; k += LANES) {
        vec s = V_LOAD(run_s + k) * vs, c = V_LOAD(run_c + k) * vc;
        V_STORE_F32(s_out + k, s);
        V_STORE_F32(c_out + k, c);
        near |= V_F32_DIFFER(s - ve, s + ve) | V_F32_DIFFER(c - ve, c + ve);
    }
    for (; k < n; k++) {
        double s = run_s[k] * scale_s, c = run_c[k] * scale_c;
        s_out[k] = (float)s;
        c_out[k] = (float)c;
        if (posenc_f32_near_tie_(s, e) || posenc_f32_near_tie_(c, e)) near = 1;
    }
    return near != 0;
}
