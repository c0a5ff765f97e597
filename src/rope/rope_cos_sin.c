/* rope_cos_sin.c: RoPE cos/sin of one token, the way a mode prescribes
 * (rope_internal.h): precise (long double angle, Cody-Waite reduction) or
 * torch-compat (float32 angle, torch's SLEEF blocks). Called by the driver
 * (rope_fast.c) for positions the anchored recurrence does not serve, and by
 * the table entry points (rope.c); calls nothing of the RoPE files. */
#include "rope_internal.h"

#include "../common/sincos_dd.h"
#include "../common/torch_math.h"
#include "../common/torch_vec.h"
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

/* Angle of flat element `flat` of HF's emb = cat(freqs, freqs) tensor
 * [rows x 2*pairs] (copies 2; vLLM's freqs [rows x pairs]: copies 1):
 * inv_freq.float() @ position.float(), one rounding. */
static float torch_emb_angle(const long double *inv, int32_t pairs, int copies, const posenc_positions *positions,
                             size_t flat) {
    size_t width = (size_t)copies * (size_t)pairs;
    float p = (float)posenc_position_at_(positions, flat / width);
    return (float)inv[flat % width % (size_t)pairs] * p;
}

/* torch runs cos() and sin() over emb in vector blocks counted from its first
 * element, and a block's lanes share one range-reduction choice (torch_vec.h),
 * so each block that touches row `row` is rebuilt whole, lanes of the
 * neighbouring rows included. The table keeps the first half of the row. */
void rope_torch_cos_sin_row_(const long double *inv, int32_t pairs, int copies, const posenc_positions *positions,
                             size_t row, double scale, float *cos_out, float *sin_out) {
    torch_cpu_capability_ cap = torch_cpu_capability_get_();
    size_t lanes = torch_vec_lanes_(cap), width = (size_t)copies * (size_t)pairs;
    size_t n = positions->count * width, first = row * width, last = first + (size_t)pairs;
    for (size_t b = first - first % lanes; b < last; b += lanes) {
        size_t count = n - b < lanes ? n - b : lanes;
        float x[TORCH_VEC_MAX_LANES], c[TORCH_VEC_MAX_LANES], s[TORCH_VEC_MAX_LANES];
        for (size_t i = 0; i < count; i++) x[i] = torch_emb_angle(inv, pairs, copies, positions, b + i);
        torch_cos_sin_block_(cap, x, count, c, s);
        for (size_t i = 0; i < count; i++)
            if (b + i >= first && b + i < last) {
                cos_out[b + i - first] = c[i];
                sin_out[b + i - first] = s[i];
            }
    }
    if (scale != 1.0) { /* emb.cos() * attention_scaling, the factor cast to float32 */
        float fs = (float)scale;
        for (int32_t k = 0; k < pairs; k++) {
            cos_out[k] = cos_out[k] * fs;
            sin_out[k] = sin_out[k] * fs;
        }
    }
}

void rope_cos_sin_f32_(posenc_mode mode, const long double *inv, int32_t pairs, long double pos, double scale,
                       float *cos_out, float *sin_out) {
    if (mode == POSENC_MODE_TORCH_COMPAT) { /* one position: a table of one row */
        double p = (double)pos;
        posenc_positions one = {1, 0, NULL, &p};
        rope_torch_cos_sin_row_(inv, pairs, 2, &one, 0, scale, cos_out, sin_out);
        return;
    }
    /* the double-double path is exact enough to round right, for integer positions in its range */
    const bool exact_ok = pos == floorl(pos) && fabsl(pos) < 0x1p53L && pos != 0; /* 0: exact already */
    for (int32_t k = 0; k < pairs; k++) {
        double c, s;
        long double a = pos * inv[k];
        cos_sin_precise(a, &c, &s);
        double cs = c * scale, ss = s * scale;
        cos_out[k] = (float)cs;
        sin_out[k] = (float)ss;
        /* cos_sin_precise's error (angle and reduction ~|a| 2^-63, double cos/sin and
         * the reduced angle's rounding < 2^-50) with a margin of 4; within it of a
         * float midpoint, the float may be one ULP off: round the exact value */
        double e = ((double)fabsl(a) * 0x1p-62 + 0x1p-48) * fabs(scale);
        if ((posenc_f32_near_tie_(cs, e) || posenc_f32_near_tie_(ss, e)) && exact_ok &&
            fabsl(a) < (long double)POSENC_SINCOS_DD_MAX_ANGLE) {
            double w_hi, w_lo;
            posenc_split_dd_(inv + k, 1, &w_hi, &w_lo);
            posenc_sincos_f32_exact_((double)pos, w_hi, w_lo, scale, scale, sin_out + k, cos_out + k);
        }
    }
}

/* Multi-axis RoPE in TORCH_COMPAT mode: the cos/sin of the tensors HF runs cos()/sin() over.
 * Qwen2-VL (SECTIONS) takes emb [3, B, S, R] whole, then picks each pair from its axis' row;
 * Qwen3-VL (INTERLEAVED) interleaves the freqs first and takes the mixed row. The lanes of a
 * torch block share one range reduction (torch_vec.h), so a pair's value depends on its block's
 * neighbours: a pair computed alone (a block of one) was an ULP off once angles grew (~1000). */
void rope_torch_mrope_cos_sin_(const long double *inv, int32_t pairs, const int32_t *axis, bool interleaved,
                               const long double *pos, double scale, float *cos_out, float *sin_out, float *tmp) {
    if (!interleaved) {
        for (int32_t a = 0; a < POSENC_MROPE_MAX_AXES; a++) {
            bool used = false;
            for (int32_t k = 0; k < pairs && !used; k++) used = axis[k] == a;
            if (!used) continue;
            rope_cos_sin_f32_(POSENC_MODE_TORCH_COMPAT, inv, pairs, pos[a], scale, tmp, tmp + pairs);
            for (int32_t k = 0; k < pairs; k++)
                if (axis[k] == a) {
                    cos_out[k] = tmp[k];
                    sin_out[k] = tmp[pairs + k];
                }
        }
        return;
    }
    torch_cpu_capability_ cap = torch_cpu_capability_get_();
    size_t lanes = torch_vec_lanes_(cap), P = (size_t)pairs, n = 2 * P; /* emb = cat(out, out) */
    for (size_t b = 0; b < P; b += lanes) {
        size_t count = n - b < lanes ? n - b : lanes;
        float x[TORCH_VEC_MAX_LANES], c[TORCH_VEC_MAX_LANES], s[TORCH_VEC_MAX_LANES];
        for (size_t i = 0; i < count; i++) {
            size_t k = (b + i) % P; /* position_ids.float(), then one float32 product, as torch_emb_angle */
            x[i] = (float)inv[k] * (float)(double)pos[axis[k]];
        }
        torch_cos_sin_block_(cap, x, count, c, s);
        for (size_t i = 0; i < count && b + i < P; i++) {
            cos_out[b + i] = c[i];
            sin_out[b + i] = s[i];
        }
    }
    if (scale != 1.0) { /* emb.cos() * attention_scaling, the factor cast to float32 */
        float fs = (float)scale;
        for (size_t k = 0; k < P; k++) {
            cos_out[k] = cos_out[k] * fs;
            sin_out[k] = sin_out[k] * fs;
        }
    }
}

/* cos/sin for one token: forward = attention * R(theta); inverse = R(-theta) /
 * attention; shift = R(theta) with no magnitude. */
void rope_token_cos_sin_(const rope_plan_ *plan, long double pos, int inverse, bool unit, float *c, float *s) {
    if (plan->mode == POSENC_MODE_GGML) { /* ggml's cache; inverse = ggml's backward (sin_sign -1) / a^2 */
        rope_ggml_cos_sin_(&plan->ggml, plan->pairs, pos, !unit, inverse ? -1.0f : 1.0f, c, s);
        if (inverse && !unit && plan->attention != 1.0) {
            double a2 = plan->attention * plan->attention;
            for (int32_t k = 0; k < plan->pairs; k++) {
                c[k] = (float)((double)c[k] / a2);
                s[k] = (float)((double)s[k] / a2);
            }
        }
        return;
    }
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

