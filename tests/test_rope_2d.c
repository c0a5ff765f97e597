/* test_rope_2d.c: posenc_rope2d_* (2-D RoPE over a patch grid) by its properties:
 * a one-row grid is 1-D RoPE on the column frequencies (Pixtral: the odd ones of a D-channel RoPE; axial: a
 * D/2-channel RoPE) with the row pairs at angle 0; the axial kind is symmetric under transposing the grid; the
 * merge order is a permutation of the grid in m x m windows; torch-compat stays near precise; bad values are
 * refused naming them. Tolerances: 0 ULP between precise tables (both round the exact cos/sin of an integer
 * position once); torch-compat vs precise 2^-24 (2 p + 2) absolute (float32 w and p w roundings, p <= 15).
 * The bit-for-bit link to transformers is tests/oracle/test_oracle_hf.py rope_2d. */
#include "check.h"

#include <stdint.h>

#define MAXN 4096

static float c2[MAXN * 64], s2[MAXN * 64], c1[MAXN * 64], s1[MAXN * 64];

static int64_t ulp_key(float x) {
    int32_t i;
    memcpy(&i, &x, sizeof i);
    return i < 0 ? -(int64_t)(i & 0x7fffffff) : i;
}

static int64_t ulp(float a, float b) {
    int64_t d = ulp_key(a) - ulp_key(b);
    return d < 0 ? -d : d;
}

/* one-row grid vs 1-D RoPE: Pixtral column pair j = 1-D pair 2j + 1 (D channels); axial = 1-D pair j (D/2) */
static void one_row(posenc_rope2d_kind kind, int32_t d, double base, int64_t cols) {
    posenc_rope2d_params p;
    posenc_rope2d_params_default(&p, d);
    p.kind = kind;
    p.base = base;
    posenc_error err = {0};
    int32_t q = d / 4;
    CHECK(posenc_rope2d_table_f32(&p, 1, cols, c2, s2, sizeof c2 / sizeof c2[0], &err) == POSENC_OK, "%s 1x%lld table (%s)",
          posenc_rope2d_kind_name(kind), (long long)cols, err.message);
    posenc_rope_params r;
    posenc_rope_params_default(&r, kind == POSENC_ROPE2D_PIXTRAL ? d : d / 2);
    r.base = base;
    int64_t ids[MAXN];
    for (int64_t c = 0; c < cols; c++) ids[c] = c;
    posenc_positions pos = posenc_positions_ids(ids, (size_t)cols);
    int32_t pairs1 = r.head_dim / 2;
    CHECK(posenc_rope_table_f32(&r, 0, &pos, 1, c1, s1, sizeof c1 / sizeof c1[0], &err) == POSENC_OK, "1-D table");
    int64_t worst = 0, row_bad = 0;
    for (int64_t c = 0; c < cols; c++)
        for (int32_t j = 0; j < q; j++) {
            int32_t k1 = kind == POSENC_ROPE2D_PIXTRAL ? 2 * j + 1 : j;
            int64_t e = ulp(c2[c * (d / 2) + q + j], c1[c * pairs1 + k1]);
            int64_t f = ulp(s2[c * (d / 2) + q + j], s1[c * pairs1 + k1]);
            worst = e > worst ? e : worst;
            worst = f > worst ? f : worst;
            row_bad += c2[c * (d / 2) + j] != 1.0f || s2[c * (d / 2) + j] != 0.0f; /* row 0: angle 0 */
        }
    CHECK(worst == 0 && row_bad == 0, "%s D=%d base %g, 1x%lld grid: column pairs = 1-D RoPE (max %lld ULP, tol 0), "
          "row pairs cos 1 sin 0 (%lld differ)", posenc_rope2d_kind_name(kind), d, base, (long long)cols,
          (long long)worst, (long long)row_bad);
}

int main(void) {
    one_row(POSENC_ROPE2D_PIXTRAL, 64, 10000, 200);
    one_row(POSENC_ROPE2D_PIXTRAL, 24, 500, 33);
    one_row(POSENC_ROPE2D_AXIAL, 80, 10000, 200);
    one_row(POSENC_ROPE2D_AXIAL, 24, 100, 33);

    /* axial: transposing the grid swaps the row and column halves (same frequencies on both axes) */
    posenc_rope2d_params p;
    posenc_error err = {0};
    posenc_rope2d_params_default(&p, 32);
    p.kind = POSENC_ROPE2D_AXIAL;
    int64_t R = 7, C = 11, bad = 0;
    posenc_rope2d_table_f32(&p, R, C, c2, s2, sizeof c2 / sizeof c2[0], &err);
    posenc_rope2d_table_f32(&p, C, R, c1, s1, sizeof c1 / sizeof c1[0], &err);
    for (int64_t r = 0; r < R; r++)
        for (int64_t c = 0; c < C; c++)
            for (int k = 0; k < 16; k++) {
                size_t a = (size_t)(r * C + c) * 16 + (size_t)k, b = (size_t)(c * R + r) * 16 + (size_t)((k + 8) % 16);
                bad += c2[a] != c1[b] || s2[a] != s1[b];
            }
    CHECK(bad == 0, "axial 7x11 vs 11x7: row and column halves swap exactly (%lld differ)", (long long)bad);

    /* Pixtral: the row pairs at (r, 0) are 1-D RoPE's even pairs at r */
    posenc_rope2d_params_default(&p, 32);
    posenc_rope2d_table_f32(&p, 9, 1, c2, s2, sizeof c2 / sizeof c2[0], &err);
    posenc_rope_params r1;
    posenc_rope_params_default(&r1, 32);
    int64_t ids[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
    posenc_positions pos = posenc_positions_ids(ids, 9);
    posenc_rope_table_f32(&r1, 0, &pos, 1, c1, s1, sizeof c1 / sizeof c1[0], &err);
    bad = 0;
    for (int t = 0; t < 9; t++)
        for (int j = 0; j < 8; j++) bad += c2[t * 16 + j] != c1[t * 16 + 2 * j] || s2[t * 16 + j] != s1[t * 16 + 2 * j];
    CHECK(bad == 0, "pixtral 9x1: row pair j = 1-D pair 2j exactly (%lld differ)", (long long)bad);

    /* merge 2 on 4 x 6: windows of 2 x 2 in raster order, every patch once */
    int64_t xy[2 * 24], seen[24] = {0};
    posenc_rope2d_params_default(&p, 32);
    p.kind = POSENC_ROPE2D_AXIAL;
    p.merge = 2;
    CHECK(posenc_rope2d_positions(&p, 4, 6, xy, 48, &err) == POSENC_OK, "merge 2 positions");
    bad = 0;
    for (int t = 0; t < 24; t++) seen[xy[2 * t] * 6 + xy[2 * t + 1]]++;
    for (int t = 0; t < 24; t++) bad += seen[t] != 1;
    static const int64_t head[12] = {0, 0, 0, 1, 1, 0, 1, 1, 0, 2, 0, 3}; /* block (0,0) then (0,1) */
    for (int i = 0; i < 12; i++) bad += xy[i] != head[i];
    CHECK(bad == 0, "merge 2, 4x6: a permutation of the grid, window (0,0) = (0,0) (0,1) (1,0) (1,1), then (0,2)");

    /* torch-compat near precise */
    for (int kind = 0; kind < 2; kind++) {
        posenc_rope2d_params_default(&p, 24);
        p.kind = (posenc_rope2d_kind)kind;
        posenc_rope2d_table_f32(&p, 16, 12, c1, s1, sizeof c1 / sizeof c1[0], &err);
        p.mode = POSENC_MODE_TORCH_COMPAT;
        CHECK(posenc_rope2d_table_f32(&p, 16, 12, c2, s2, sizeof c2 / sizeof c2[0], &err) == POSENC_OK,
              "torch-compat table");
        double worst = 0, tol = ldexp(2 * 15 + 2, -24);
        for (int i = 0; i < 16 * 12 * 12; i++) {
            worst = fmax(worst, fabs((double)c1[i] - c2[i]));
            worst = fmax(worst, fabs((double)s1[i] - s2[i]));
        }
        CHECK(worst <= tol, "%s 16x12 torch-compat vs precise: max |diff| %.3g <= %.3g",
              posenc_rope2d_kind_name(p.kind), worst, tol);
    }

    /* DINOv3: one patch in the middle of an odd grid sits at coordinate 0 (cos 1, sin 0 on its axis) */
    posenc_rope2d_params_default(&p, 32);
    p.kind = POSENC_ROPE2D_DINOV3;
    p.base = 100;
    CHECK(posenc_rope2d_table_f32(&p, 5, 3, c1, s1, sizeof c1 / sizeof c1[0], &err) == POSENC_OK, "dinov3 5x3 table");
    bad = 0;
    for (int k = 0; k < 8; k++) bad += c1[(2 * 3 + 1) * 16 + k] != 1.0f || s1[(2 * 3 + 1) * 16 + k] != 0.0f;
    for (int k = 8; k < 16; k++) bad += c1[(0 * 3 + 1) * 16 + k] != 1.0f || s1[(0 * 3 + 1) * 16 + k] != 0.0f;
    /* mirror patches: cos even, sin odd in the coordinate */
    for (int k = 0; k < 8; k++) bad += c1[0 * 16 + k] != c1[(4 * 3) * 16 + k] || s1[0 * 16 + k] != -s1[(4 * 3) * 16 + k];
    CHECK(bad == 0, "dinov3 5x3: the centre row / column at angle 0, mirrored rows cos equal, sin opposite");
    posenc_rope2d_params_default(&p, 196);
    p.kind = POSENC_ROPE2D_DINOV3;
    CHECK(posenc_rope2d_check(&p, &err) == POSENC_ERR_INVALID_ARGUMENT && strstr(err.message, "196"),
          "dinov3 head_dim 196 (50 arange entries) refused naming it: %s", err.message);

    /* refusals name the value */
    posenc_rope2d_params_default(&p, 18);
    CHECK(posenc_rope2d_check(&p, &err) == POSENC_ERR_INVALID_ARGUMENT && strstr(err.message, "18"),
          "head_dim 18 refused naming it: %s", err.message);
    posenc_rope2d_params_default(&p, 32);
    p.base = 1.0;
    CHECK(posenc_rope2d_check(&p, &err) == POSENC_ERR_INVALID_ARGUMENT && strstr(err.message, "base 1"),
          "base 1 refused: %s", err.message);
    posenc_rope2d_params_default(&p, 32);
    p.merge = 2;
    CHECK(posenc_rope2d_table_f32(&p, 3, 4, c1, s1, sizeof c1 / sizeof c1[0], &err) == POSENC_ERR_INVALID_ARGUMENT &&
          strstr(err.message, "3 x 4"), "3x4 grid with merge 2 refused: %s", err.message);
    posenc_rope2d_params_default(&p, 32);
    p.mode = POSENC_MODE_GGML;
    CHECK(posenc_rope2d_check(&p, &err) == POSENC_ERR_UNSUPPORTED, "ggml mode refused: %s", err.message);
    posenc_rope2d_params_default(&p, 32);
    CHECK(posenc_rope2d_table_f32(&p, 2, 2, c1, s1, 63, &err) == POSENC_ERR_BUFFER_TOO_SMALL,
          "out_count 63 < 64 refused: %s", err.message);
    CHECK(posenc_rope2d_table_f32(&p, 0, 2, c1, s1, 64, &err) == POSENC_ERR_INVALID_ARGUMENT &&
          strstr(err.message, "rows 0"), "rows 0 refused: %s", err.message);
    return check_finish();
}
