/* test_rope_ggml_mrope.c: posenc_mrope_apply_f32 in POSENC_MODE_GGML (ggml_rope_multi's
 * MROPE and IMROPE) against a reference written here from the facts of ggml's CPU code
 * (ggml-cpu/ops.cpp, the multi-axis cache; read, not copied): four float32 theta chains
 * (t, h, w, e), each started at (float)p of its stream and multiplied by
 * powf(base, -2/R) after every pair; pair k's sector = k % (s0 + s1 + s2 + s3) picks the
 * chain (MROPE: contiguous sections then e; IMROPE: h where sector % 3 == 1 and
 * sector < 3 s1, w where % 3 == 2 and < 3 s2, t where % 3 == 0 and < 3 s0, else e); then
 * rope_yarn (theta / ff extrapolated, freq_scale times it interpolated, mixed over the
 * ramp of pair k between the floor/ceil correction dims, cosf/sinf times mscale =
 * attn (1 + 0.1 logf(1 / freq_scale))) and the NEOX rotation of (k, k + R/2), its first
 * product fused as GCC contracts ggml's C++ (the form ggml's 1-D goldens match, rope_apply.c).
 * Tolerance: none (same libm, float32 steps). No ggml M-RoPE goldens exist in
 * tests/golden, so the link to ggml itself is the 1-D case: with every stream at the same
 * position MROPE and IMROPE equal ggml NEOX, which test_rope_ggml.c checks bit for bit
 * against ggml's own output; that equality is checked here too. */
#include "check.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define T 29
#define H 2
#define D 128
#define K (D / 2)

static float x0[T * H * D];

/* ggml.c's YaRN correction dim, in float32 */
static float corr(float n_rot, float base, int n_ctx) {
    return (float)D * logf((float)n_ctx / (n_rot * 2.0f * 3.14159265358979323846f)) / (2.0f * logf(base));
}

static void reference(float *x, const int64_t *pos, int axes, const int sec[4], bool imrope, float base,
                      float freq_scale, bool yarn, int n_ctx) {
    float theta_scale = powf(base, -2.0f / (float)D);
    float lo = 0, hi = 0, mscale = 1.0f;
    if (yarn) {
        lo = fmaxf(0.0f, floorf(corr(32.0f, base, n_ctx)));
        hi = fminf((float)(D - 1), ceilf(corr(1.0f, base, n_ctx)));
        mscale *= fmaf(0.1f, logf(1.0f / freq_scale), 1.0f);
    }
    int dims = sec[0] + sec[1] + sec[2] + sec[3];
    for (int t = 0; t < T; t++) {
        float chain[4];
        for (int a = 0; a < 4; a++) chain[a] = (float)(a < axes ? pos[a * T + t] : 0);
        float c[K], s[K];
        for (int k = 0; k < K; k++) {
            int sector = k % dims, a;
            if (imrope)
                a = sector % 3 == 1 && sector < 3 * sec[1]   ? 1
                    : sector % 3 == 2 && sector < 3 * sec[2] ? 2
                    : sector % 3 == 0 && sector < 3 * sec[0] ? 0
                                                             : 3;
            else
                a = sector < sec[0] ? 0 : sector < sec[0] + sec[1] ? 1 : sector < sec[0] + sec[1] + sec[2] ? 2 : 3;
            float extrap = chain[a], th = freq_scale * extrap;
            if (yarn) {
                float y = ((float)k - lo) / fmaxf(0.001f, hi - lo);
                float mix = 1.0f - fminf(1.0f, fmaxf(0.0f, y));
                th = fmaf(th, 1.0f - mix, extrap * mix);
            }
            c[k] = cosf(th) * mscale;
            s[k] = sinf(th) * mscale;
            for (int b = 0; b < 4; b++) chain[b] *= theta_scale;
        }
        for (int h = 0; h < H; h++) {
            float *v = x + (t * H + h) * D;
            for (int k = 0; k < K; k++) {
                float a0 = v[k], a1 = v[k + K];
                v[k] = fmaf(a0, c[k], -(a1 * s[k]));
                v[k + K] = fmaf(a0, s[k], a1 * c[k]);
            }
        }
    }
}

static posenc_rope_params params(float base, double factor, bool yarn) {
    posenc_rope_params p;
    posenc_rope_params_default(&p, D);
    p.base = base;
    p.mode = POSENC_MODE_GGML;
    if (factor > 1) {
        p.scaling = yarn ? POSENC_ROPE_YARN : POSENC_ROPE_LINEAR;
        p.factor = factor;
        p.original_max_position = 4096;
    }
    return p;
}

static void compare(const char *label, posenc_mrope_kind kind, int axes, const int sec[4], const int64_t *pos,
                    float base, double factor, bool yarn) {
    static float got[T * H * D], want[T * H * D];
    memcpy(got, x0, sizeof got);
    memcpy(want, x0, sizeof want);
    posenc_rope_params p = params(base, factor, yarn);
    posenc_mrope_sections ms = {kind, axes, {sec[0], sec[1], sec[2], sec[3]}};
    posenc_rope_view v = posenc_rope_view_contiguous(T, H, D);
    posenc_error err = {0};
    posenc_status st = posenc_mrope_apply_f32(&p, &ms, POSENC_LAYOUT_HALF, &v, pos, 0, got, T * H * D, &err);
    CHECK(st == POSENC_OK, "%s: apply: %s", label, err.message);
    reference(want, pos, axes, sec, kind == POSENC_MROPE_INTERLEAVED, base, factor > 1 ? (float)(1.0 / factor) : 1.0f,
              yarn, 4096);
    int differ = 0;
    for (int i = 0; i < T * H * D; i++) differ += memcmp(&got[i], &want[i], sizeof got[i]) != 0;
    CHECK(differ == 0, "%s: bit for bit with the reference written from ggml's multi-axis cache (%d of %d differ)",
          label, differ, T * H * D);
}

int main(void) {
    for (int i = 0; i < T * H * D; i++) x0[i] = (float)sin(0.37 * i + 0.1) * (1.0f + (float)(i % 7) / 8.0f);
    int64_t pos[4 * T], same[4 * T];
    for (int t = 0; t < T; t++) { /* a text run, then a 2 x 3 x 4 image grid (Qwen2-VL's get_rope_index) */
        int64_t p = t < 5 ? t : 5 + (t - 5) / 12;
        pos[t] = p;
        pos[T + t] = t < 5 ? t : 5 + (t - 5) / 4 % 3;
        pos[2 * T + t] = t < 5 ? t : 5 + (t - 5) % 4;
        pos[3 * T + t] = t < 5 ? t : 1000 + t; /* an extra stream (ggml's e) */
        for (int a = 0; a < 4; a++) same[a * T + t] = 3000 + t;
    }
    const int qwen2vl[4] = {16, 24, 24, 0}, qwen3vl[4] = {24, 20, 20, 0}, four[4] = {16, 16, 16, 16};
    compare("MROPE Qwen2-VL sections 16/24/24, base 1e6", POSENC_MROPE_SECTIONS, 3, qwen2vl, pos, 1000000.0f, 1, false);
    compare("MROPE 4 streams 16/16/16/16, linear 4", POSENC_MROPE_SECTIONS, 4, four, pos, 10000.0f, 4, false);
    compare("MROPE Qwen2-VL sections, YaRN 4", POSENC_MROPE_SECTIONS, 3, qwen2vl, pos, 1000000.0f, 4, true);
    compare("IMROPE Qwen3-VL 24/20/20 + e stream", POSENC_MROPE_INTERLEAVED, 4, qwen3vl, pos, 5000000.0f, 1, false);
    compare("IMROPE Qwen3-VL, YaRN 4", POSENC_MROPE_INTERLEAVED, 4, qwen3vl, pos, 5000000.0f, 4, true);
    /* every stream at one position: ggml NEOX (1-D, bit for bit with ggml's own output in test_rope_ggml.c) */
    for (int kind = 0; kind < 2; kind++) {
        static float multi[T * H * D], one[T * H * D];
        memcpy(multi, x0, sizeof multi);
        memcpy(one, x0, sizeof one);
        posenc_rope_params p = params(1000000.0f, 4, true);
        posenc_mrope_sections ms = {kind ? POSENC_MROPE_INTERLEAVED : POSENC_MROPE_SECTIONS, 4,
                                    {kind ? 24 : 16, kind ? 20 : 24, kind ? 20 : 24, 0}};
        posenc_rope_view v = posenc_rope_view_contiguous(T, H, D);
        posenc_error err = {0};
        CHECK(posenc_mrope_apply_f32(&p, &ms, POSENC_LAYOUT_HALF, &v, same, 0, multi, T * H * D, &err) == POSENC_OK &&
                  posenc_rope_apply_f32(&p, 0, POSENC_LAYOUT_HALF, &v, same, 0, one, T * H * D, &err) == POSENC_OK,
              "equal streams: %s", err.message);
        CHECK(memcmp(multi, one, sizeof one) == 0, "%s with every stream at one position equals ggml NEOX bit for bit",
              kind ? "IMROPE" : "MROPE");
    }
    /* refused by name */
    posenc_rope_params p = params(10000.0f, 1, false);
    posenc_rope_view v = posenc_rope_view_contiguous(T, H, D);
    static float buf[T * H * D];
    posenc_error err = {0};
    posenc_mrope_sections three = {POSENC_MROPE_INTERLEAVED, 3, {24, 20, 20, 0}};
    CHECK(posenc_mrope_apply_f32(&p, &three, POSENC_LAYOUT_HALF, &v, pos, 0, buf, T * H * D, &err) ==
                  POSENC_ERR_INVALID_ARGUMENT &&
              strstr(err.message, "pair 61 reads ggml's position stream 3 (e)"),
          "IMROPE with 3 streams and leftover pairs refused: %s", err.message);
    posenc_mrope_sections sec3 = {POSENC_MROPE_SECTIONS, 3, {16, 24, 24, 0}};
    CHECK(posenc_mrope_apply_f32(&p, &sec3, POSENC_LAYOUT_INTERLEAVED, &v, pos, 0, buf, T * H * D, &err) ==
                  POSENC_ERR_INVALID_ARGUMENT &&
              strstr(err.message, "give layout half"),
          "interleaved layout refused: %s", err.message);
    posenc_mrope_sections axial = {POSENC_MROPE_AXIAL, 2, {32, 32, 0, 0}};
    CHECK(posenc_mrope_apply_f32(&p, &axial, POSENC_LAYOUT_HALF, &v, pos, 0, buf, T * H * D, &err) ==
                  POSENC_ERR_UNSUPPORTED &&
              strstr(err.message, "VISION"),
          "axial refused: %s", err.message);
    /* a non-finite input is named, after the rotation ran to the end */
    posenc_mrope_sections sec4 = {POSENC_MROPE_SECTIONS, 3, {16, 24, 24, 0}};
    memcpy(buf, x0, sizeof buf);
    buf[(3 * H + 1) * D + 5] = NAN;
    CHECK(posenc_mrope_apply_f32(&p, &sec4, POSENC_LAYOUT_HALF, &v, pos, 0, buf, T * H * D, &err) ==
                  POSENC_ERR_NONFINITE &&
              strstr(err.message, "token 3, head 1, channel 5 is nan: the input of token 3 already holds"),
          "a NaN input named: %s", err.message);
    uint32_t bits;
    memcpy(&bits, &buf[(3 * H + 1) * D + 5], sizeof bits);
    CHECK(bits == 0x7fc00000u, "the NaN result is the one positive quiet NaN (0x%08x)", (unsigned)bits);
    return check_finish();
}
