/* rope_cos_sin.c: RoPE cos/sin of one token, the way a mode prescribes
 * (rope_internal.h): precise (long double angle, Cody-Waite reduction) or
 * torch-compat (float32 angle, torch's SLEEF blocks). Called by the driver
 * (rope_fast.c) for positions the anchored recurrence does not serve, and by
 * the table entry points (rope.c); calls nothing of the RoPE files. */
#include "rope_internal.h"

#include "torch_math.h"
#include "torch_vec.h"
#include <string.h>

/* 2 pi = TWO_PI_HI + TWO_PI_MID + TWO_PI_LO (to ~2^-146): HI and MID carry 40
 * bits, so n * HI and n * MID are exact in long double for |n| < 2^24. */
#define TWO_PI_HI 0xc90fdaa221000000p-61L
#define TWO_PI_MID 0xd18469898d000000p-102L
#define TWO_PI_LO (-0xeba3f91f1976b7eep-144L)

/* cos and sin of a long double angle, to well under half a float32 ULP:
 * Cody-Waite reduction to [-pi, pi] in long double (exact products, error
 * ~|a| 2^-64), then double cos/sin (< 1 double ULP). sinl/cosl would do the
 * same 10x slower; they remain the path for |a| >= 2^24 * 2 pi. */
static void cos_sin_precise(long double a, double *c, double *s) {
    /* any integer near a / 2 pi will do (r may exceed pi slightly); floor in
     * double avoids nearbyintl's floating-point environment round trip */
    double nd = floor((double)a * 0.15915494309189535 + 0.5);
    long double n = (long double)nd;
    if (fabs(nd) >= 16777216.0) {
        *c = (double)cosl(a);
        *s = (double)sinl(a);
        return;
    }
    long double r = ((a - n * TWO_PI_HI) - n * TWO_PI_MID) - n * TWO_PI_LO;
    double rd = (double)r;
    *c = cos(rd);
    *s = sin(rd);
}

void rope_cos_sin_f32_(posenc_mode mode, const long double *inv, int32_t pairs, long double pos, double scale,
                       float *cos_out, float *sin_out) {
    if (mode == POSENC_MODE_TORCH_COMPAT) {
        float fp = (float)pos, fs = (float)scale;
        for (int32_t k = 0; k < pairs; k++) cos_out[k] = (float)inv[k] * fp; /* inv_freq @ position.float() */
        int32_t k = 0;
        for (; k + 8 <= pairs; k += 8) { /* torch's 8-lane blocks (torch_vec.h) */
            float angle[8];
            memcpy(angle, cos_out + k, sizeof angle);
            if (!torch_cos_sin_block8_(angle, cos_out + k, sin_out + k)) break;
        }
        for (; k < pairs; k++) {
            float angle = cos_out[k];
            cos_out[k] = torch_cosf(angle);
            sin_out[k] = torch_sinf(angle);
        }
        if (scale != 1.0)
            for (k = 0; k < pairs; k++) {
                cos_out[k] = cos_out[k] * fs;
                sin_out[k] = sin_out[k] * fs;
            }
        return;
    }
    for (int32_t k = 0; k < pairs; k++) {
        double c, s;
        cos_sin_precise(pos * inv[k], &c, &s);
        cos_out[k] = (float)(c * scale);
        sin_out[k] = (float)(s * scale);
    }
}

/* cos/sin for one token: forward = attention * R(theta); inverse = R(-theta) /
 * attention; shift = R(theta) with no magnitude. */
void rope_token_cos_sin_(const rope_plan_ *plan, long double pos, int inverse, bool unit, float *c, float *s) {
    double a = unit ? 1.0 : plan->attention;
    if (!inverse) {
        rope_cos_sin_f32_(plan->mode, plan->inv, plan->pairs, pos, a, c, s);
        return;
    }
    if (plan->mode == POSENC_MODE_TORCH_COMPAT) { /* transpose of the forward matrix / a^2 */
        rope_cos_sin_f32_(plan->mode, plan->inv, plan->pairs, pos, a, c, s);
        double a2 = a * a;
        for (int32_t k = 0; k < plan->pairs; k++) {
            c[k] = (float)((double)c[k] / a2);
            s[k] = (float)(-(double)s[k] / a2);
        }
        return;
    }
    rope_cos_sin_f32_(plan->mode, plan->inv, plan->pairs, -pos, 1.0 / a, c, s);
}

