/* test_sine2d.c: DETR's 2D sine table (posenc_sine2d_*, posenc.h 6f).
 * PRECISE against the formula evaluated here in long double (sinl/cosl/powl, independent of the library's double
 * path): tolerance 1 ULP (the library rounds a double sin/cos once to float32; the double's own error, ~1e-16
 * relative, moves the float32 only next to a rounding midpoint). TORCH_COMPAT against values transformers 5.18's
 * DetrSinePositionEmbedding / DeformableDetrSinePositionEmbedding (torch 2.13 CPU, 1 thread) returned for F = 4 on
 * a 2 x 3 map: tolerance 1 ULP, because ctest runs without POSENC_TORCH_MKL (SLEEF's sin/cos, which differ from
 * the wheel's MKL by 1 ULP in ~1-2% of values); the oracle checks the bits with MKL. */
#include "check.h"

#include <float.h>

typedef struct {
    int c, y, x;
    float v;
} known;

/* DetrSinePositionEmbedding(4, normalize=True)(Size([1, 8, 2, 3])) */
static const known detr_values[] = {{0, 0, 0, 1.34308868e-06f}, {1, 1, 2, 1.0f},          {2, 1, 0, 0.0627904907f},
                                    {3, 0, 1, 0.999506533f},     {4, 0, 2, -1.73250305e-06f}, {5, 1, 1, -0.500001132f},
                                    {6, 1, 2, 0.0627904981f},    {7, 0, 0, 0.999780655f}};
/* the same with DeformableDetrSinePositionEmbedding (positions - 0.5) */
static const known deform_values[] = {{0, 0, 0, 1.0f},         {1, 1, 2, -1.89542379e-06f}, {2, 1, 0, 0.0471064337f},
                                      {3, 0, 1, 0.999876618f}, {4, 0, 2, -0.866026163f},    {5, 1, 1, -1.0f},
                                      {6, 1, 2, 0.052335944f}, {7, 0, 0, 0.999945164f}};

static long double reference(const posenc_sine2d_params *p, int c, int64_t y, int64_t x, int64_t h, int64_t w) {
    int f = p->num_pos_feats, axis_x = c >= f, k = c % f;
    int64_t i = axis_x ? x : y, n = axis_x ? w : h;
    long double pos = (long double)(i + 1);
    if (p->normalize)
        pos = (pos - (long double)p->offset) / ((long double)n + (long double)p->eps) * (long double)p->scale;
    long double d = powl((long double)(axis_x ? p->temperature_x : p->temperature_y), (long double)(2 * (k / 2)) / f);
    return (k & 1) ? cosl(pos / d) : sinl(pos / d);
}

static void test_precise(void) {
    int64_t shapes[][2] = {{1, 1}, {2, 3}, {7, 5}, {40, 33}};
    posenc_sine2d_params cases[4];
    posenc_sine2d_params_default(&cases[0], 128);
    posenc_sine2d_params_default(&cases[1], 16);
    cases[1].offset = 0.5;
    posenc_sine2d_params_default(&cases[2], 64);
    cases[2].temperature_y = 20.0;
    cases[2].temperature_x = 7.5;
    cases[2].scale = 1.5;
    posenc_sine2d_params_default(&cases[3], 8);
    cases[3].normalize = 0;
    for (int ci = 0; ci < 4; ci++)
        for (int si = 0; si < 4; si++) {
            const posenc_sine2d_params *p = &cases[ci];
            int64_t h = shapes[si][0], w = shapes[si][1];
            size_t n = (size_t)(2 * p->num_pos_feats * h * w);
            float *out = malloc(n * sizeof *out);
            posenc_error err = {0};
            posenc_status s = posenc_sine2d_table_f32(p, h, w, out, n, &err);
            int64_t worst = 0, bounded = 1;
            for (int c = 0; c < 2 * p->num_pos_feats && s == POSENC_OK; c++)
                for (int64_t y = 0; y < h; y++)
                    for (int64_t x = 0; x < w; x++) {
                        float got = out[((size_t)c * (size_t)h + (size_t)y) * (size_t)w + (size_t)x];
                        int64_t u = check_ulp_f32(got, (float)reference(p, c, y, x, h, w));
                        if (u > worst) worst = u;
                        if (!(fabsf(got) <= 1.0f)) bounded = 0;
                    }
            CHECK(s == POSENC_OK && worst <= 1 && bounded,
                  "precise F=%d T=%g/%g normalize=%d offset %g, %lldx%lld: worst %lld ULP vs long double (tol 1), "
                  "|v| <= 1: %d", p->num_pos_feats, p->temperature_y, p->temperature_x, p->normalize, p->offset,
                  (long long)h, (long long)w, (long long)worst, bounded);
            free(out);
        }
}

static void test_torch(void) {
    for (int which = 0; which < 2; which++) {
        posenc_sine2d_params p;
        posenc_sine2d_params_default(&p, 4);
        p.mode = POSENC_MODE_TORCH_COMPAT;
        p.offset = which ? 0.5 : 0.0;
        const known *k = which ? deform_values : detr_values;
        float out[8 * 2 * 3];
        posenc_error err = {0};
        posenc_status s = posenc_sine2d_table_f32(&p, 2, 3, out, 48, &err);
        int64_t worst = 0;
        for (int i = 0; i < 8; i++) {
            int64_t u = check_ulp_f32(out[(k[i].c * 2 + k[i].y) * 3 + k[i].x], k[i].v);
            if (u > worst) worst = u;
        }
        CHECK(s == POSENC_OK && worst <= 1, "torch-compat %s, F=4 on 2x3: worst %lld ULP vs transformers (tol 1)",
              which ? "Deformable DETR" : "DETR", (long long)worst);
        /* the precise value differs from torch's by far more than an ULP next to a zero of sin (float32 angle
         * error ~ 2^-24 x 2 pi): this check fails if the mode were ignored */
        p.mode = POSENC_MODE_PRECISE;
        float precise[48];
        posenc_sine2d_table_f32(&p, 2, 3, precise, 48, &err);
        int at = which ? (1 * 2 + 1) * 3 + 2 : 0; /* DETR: sin channel 0 at (0, 0); Deformable: cos 1 at (1, 2) */
        CHECK(check_ulp_f32(precise[at], out[at]) > 1000,
              "%s element %d (next to a zero): precise %.9g, torch-compat %.9g differ (float32 steps)",
              which ? "Deformable DETR" : "DETR", at, precise[at], out[at]);
    }
}

static void test_layout(void) {
    posenc_sine2d_params p;
    posenc_sine2d_params_default(&p, 6);
    float out[12 * 4 * 5];
    posenc_error err = {0};
    CHECK_STATUS(posenc_sine2d_table_f32(&p, 4, 5, out, sizeof out / sizeof out[0], &err), POSENC_OK);
    int y_const = 1, x_const = 1;
    for (int c = 0; c < 12; c++)
        for (int y = 0; y < 4; y++)
            for (int x = 0; x < 5; x++) {
                float v = out[(c * 4 + y) * 5 + x];
                if (c < 6 && v != out[(c * 4 + y) * 5]) y_const = 0;  /* y channels: the same along a row */
                if (c >= 6 && v != out[(c * 4) * 5 + x]) x_const = 0; /* x channels: the same down a column */
            }
    CHECK(y_const && x_const, "channels 0..F-1 depend on y only, F..2F-1 on x only");
    /* channel 0 / 1 at the last row: sin / cos of scale * H / (H + eps) ~ 2 pi: ~0 and ~1 */
    CHECK(fabsf(out[(0 * 4 + 3) * 5]) < 1e-4f && fabsf(out[(1 * 4 + 3) * 5] - 1.0f) < 1e-6f,
          "last row: sin ~ 0 (%g), cos ~ 1 (%g)", out[(0 * 4 + 3) * 5], out[(1 * 4 + 3) * 5]);
}

/* RT-DETR layout against its formula in long double: rows y * W + x, [sin y | cos y | sin x | cos x] halves of Q. */
static void test_rtdetr(void) {
    posenc_sine2d_params p;
    posenc_sine2d_params_default(&p, 32);
    p.layout = POSENC_SINE2D_RTDETR;
    p.normalize = 0;
    p.temperature_x = 300.0;
    int64_t h = 9, w = 13;
    int q = 16;
    float *out = malloc((size_t)(64 * h * w) * sizeof *out);
    posenc_error err = {0};
    posenc_status s = posenc_sine2d_table_f32(&p, h, w, out, (size_t)(64 * h * w), &err);
    int64_t worst = 0;
    for (int64_t y = 0; y < h && s == POSENC_OK; y++)
        for (int64_t x = 0; x < w; x++)
            for (int c = 0; c < 64; c++) {
                int axis = c / 32, j = c % q;
                long double pos = axis ? (long double)x : (long double)y;
                long double a = pos / powl(axis ? 300.0L : 10000.0L, (long double)j / q);
                long double want = (c % 32) < q ? sinl(a) : cosl(a);
                int64_t u = check_ulp_f32(out[(y * w + x) * 64 + c], (float)want);
                if (u > worst) worst = u;
            }
    CHECK(s == POSENC_OK && worst <= 1, "RT-DETR layout F=32 T=10000/300 on 9x13: worst %lld ULP vs long double "
          "(tol 1)", (long long)worst);
    CHECK(out[0] == 0.0f && out[q] == 1.0f, "RT-DETR row 0: sin 0 = 0, cos 0 = 1 (0-based positions)");
    free(out);
    float small[64];
    p.normalize = 1;
    CHECK_STATUS(posenc_sine2d_table_f32(&p, 1, 1, small, 64, &err), POSENC_ERR_INVALID_ARGUMENT);
    CHECK(strstr(err.message, "normalize 1") != NULL, "RT-DETR normalize named: %s", err.message);
    p.normalize = 0;
    p.mode = POSENC_MODE_TORCH_COMPAT;
    CHECK_STATUS(posenc_sine2d_table_f32(&p, 1, 1, small, 64, &err), POSENC_ERR_INVALID_ARGUMENT);
    CHECK(strstr(err.message, "TORCH_COMPAT") != NULL, "RT-DETR torch-compat named: %s", err.message);
}

static void test_errors(void) {
    posenc_sine2d_params p;
    posenc_sine2d_params_default(&p, 4);
    float out[64];
    posenc_error err = {0};
    CHECK_STATUS(posenc_sine2d_table_f32(&p, 0, 3, out, 64, &err), POSENC_ERR_INVALID_ARGUMENT);
    CHECK(strstr(err.message, "height 0") != NULL, "zero height named: %s", err.message);
    CHECK_STATUS(posenc_sine2d_table_f32(&p, 2, 0, out, 64, &err), POSENC_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(posenc_sine2d_table_f32(&p, 2, 3, out, 47, &err), POSENC_ERR_BUFFER_TOO_SMALL);
    CHECK(strstr(err.message, "out_count 47") != NULL, "short buffer named: %s", err.message);
    CHECK_STATUS(posenc_sine2d_table_f32(&p, 2, 3, NULL, 64, &err), POSENC_ERR_NULL_POINTER);
    CHECK_STATUS(posenc_sine2d_table_f32(&p, (int64_t)1 << 24, (int64_t)1 << 24, out, 64, &err),
                 POSENC_ERR_BUFFER_TOO_SMALL);
    p.num_pos_feats = 5;
    CHECK_STATUS(posenc_sine2d_check(&p, &err), POSENC_ERR_INVALID_ARGUMENT);
    CHECK(strstr(err.message, "num_pos_feats 5") != NULL, "odd F named: %s", err.message);
    p.num_pos_feats = 4;
    p.temperature_x = NAN;
    CHECK_STATUS(posenc_sine2d_check(&p, &err), POSENC_ERR_INVALID_ARGUMENT);
    CHECK(strstr(err.message, "temperature_x nan") != NULL, "NaN temperature named: %s", err.message);
    p.temperature_x = 10000.0;
    p.scale = INFINITY;
    CHECK_STATUS(posenc_sine2d_check(&p, &err), POSENC_ERR_INVALID_ARGUMENT);
    p.scale = 1.0;
    p.offset = 1.0;
    CHECK_STATUS(posenc_sine2d_check(&p, &err), POSENC_ERR_INVALID_ARGUMENT);
    CHECK(strstr(err.message, "offset 1") != NULL, "offset named: %s", err.message);
    p.offset = 0.0;
    p.temperature_y = 1e-300; /* float32 0: d_k = 0, the angle y / d is inf: refused, never NaN out */
    p.mode = POSENC_MODE_TORCH_COMPAT;
    CHECK_STATUS(posenc_sine2d_table_f32(&p, 2, 3, out, 64, &err), POSENC_ERR_NONFINITE);
    CHECK(strstr(err.message, "temperature_y") != NULL, "overflowing temperature named: %s", err.message);
    p.temperature_y = 10000.0;
    p.mode = (posenc_mode)2;
    CHECK_STATUS(posenc_sine2d_check(&p, &err), POSENC_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(posenc_sine2d_check(NULL, &err), POSENC_ERR_NULL_POINTER);
}

int main(void) {
    test_precise();
    test_torch();
    test_layout();
    test_rtdetr();
    test_errors();
    return check_finish();
}
