/* test_grid.c: multi-dimensional sinusoid tables (tatp22 goldens 1-D/2-D/3-D,
 * the third article's even split), grid position builders, and the
 * Transformer-XL relative sinusoid R against its formula and worked example. */
#include "check.h"

static double *grid_f64(int axes, const size_t *shape, int32_t ch, posenc_grid_split split,
                        posenc_mode mode, posenc_dtype dtype, size_t *n_out) {
    size_t n;
    posenc_error err = {0};
    if (posenc_grid_count(axes, shape, ch, &n, &err) != POSENC_OK) {
        printf("FAIL: grid count: %s\n", err.message);
        exit(EXIT_FAILURE);
    }
    void *buf = malloc(n * 8);
    double *out = malloc(n * 8);
    if (posenc_grid_table(axes, shape, ch, split, mode, dtype, buf, n, &err) != POSENC_OK) {
        printf("FAIL: grid table: %s\n", err.message);
        exit(EXIT_FAILURE);
    }
    for (size_t i = 0; i < n; i++) out[i] = dtype == POSENC_DTYPE_F32 ? ((float *)buf)[i] : ((double *)buf)[i];
    free(buf);
    *n_out = n;
    return out;
}

static int64_t max_ulp(const double *a, const double *b, size_t n, size_t *where) {
    int64_t worst = 0;
    *where = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t u = check_ulp_f32((float)a[i], (float)b[i]);
        if (u > worst) {
            worst = u;
            *where = i;
        }
    }
    return worst;
}

/* Direct formula for one grid cell, in long double: axis a owns channels [a c, (a+1) c). */
static double cell_formula(const size_t *x, int32_t c, int32_t ch) {
    int a = ch / c, j = ch % c, k = j / 2;
    long double w = powl(10000.0L, -(long double)(2 * k) / c);
    long double angle = (long double)x[a] * w;
    return (double)(j % 2 == 0 ? sinl(angle) : cosl(angle));
}

static void test_formula_and_split(void) {
    /* even split (third article, video): C = 12 over T x H x W = 3 x 4 x 5 -> 4 channels per axis */
    size_t shape[3] = {3, 4, 5}, n;
    int32_t c = 0;
    posenc_error err = {0};
    posenc_status st = posenc_grid_axis_channels(3, 12, POSENC_GRID_SPLIT_EVEN, &c, &err);
    CHECK(st == POSENC_OK && c == 4, "even split: 12 channels over 3 axes -> %d per axis (want 4)", c);
    double *t = grid_f64(3, shape, 12, POSENC_GRID_SPLIT_EVEN, POSENC_MODE_PRECISE, POSENC_DTYPE_F64, &n);
    double *want = malloc(n * 8);
    for (size_t i = 0; i < n; i++) {
        size_t cell = i / 12, x[3] = {cell / 20, (cell / 5) % 4, cell % 5};
        want[i] = cell_formula(x, 4, (int32_t)(i % 12));
    }
    /* long double formula vs long double table: both within 1e-18 of the truth */
    check_close("even split 3x4x5 C=12 vs direct formula (f64)", t, want, n, 12, 1e-15, 0);
    free(t);
    free(want);
    /* the article's example for the 1-D encoder used per axis: d=4, p=1 -> [0.84, 0.54, 0.01, 1.00] */
    size_t one[1] = {2};
    t = grid_f64(1, one, 4, POSENC_GRID_SPLIT_EVEN, POSENC_MODE_PRECISE, POSENC_DTYPE_F64, &n);
    double row1[4] = {sin(1.0), cos(1.0), sin(0.01), cos(0.01)};
    check_close("1-D grid d=4 row 1 = [sin 1, cos 1, sin .01, cos .01]", t + 4, row1, 4, 4, 1e-16, 0);
    free(t);
    /* conventions.md §10.1 worked example: 2D C=10 at (x,y)=(1,2), c=6 */
    size_t s2[2] = {2, 3};
    t = grid_f64(2, s2, 10, POSENC_GRID_SPLIT_TATP22, POSENC_MODE_PRECISE, POSENC_DTYPE_F64, &n);
    double ex[10] = {0.841470985, 0.540302306, 0.046399223, 0.998922976, 0.002154433,
                     0.999997679, 0.909297427, -0.416146837, 0.092698501, 0.995694224};
    check_close("conventions 10.1: 2D C=10 at (1,2) (9-digit worked numbers)", t + (1 * 3 + 2) * 10, ex, 10, 10, 6e-10, 0);
    free(t);
    /* bad splits name the value */
    CHECK(posenc_grid_axis_channels(3, 20, POSENC_GRID_SPLIT_EVEN, &c, &err) == POSENC_ERR_INVALID_ARGUMENT &&
              strstr(err.message, "multiple of 6") && strstr(err.message, "got 20"),
          "[L12] even split 20 over 3 axes rejected: \"%s\"", err.message);
    CHECK(posenc_grid_axis_channels(4, 20, POSENC_GRID_SPLIT_TATP22, &c, &err) == POSENC_ERR_INVALID_ARGUMENT &&
              strstr(err.message, "got 4"),
          "[L12] 4 axes rejected: \"%s\"", err.message);
    size_t zero[2] = {3, 0};
    CHECK(posenc_grid_count(2, zero, 8, &n, &err) == POSENC_ERR_INVALID_ARGUMENT && strstr(err.message, "axis 1"),
          "[L12] zero-size axis rejected: \"%s\"", err.message);
    size_t huge[3] = {1 << 24, 1 << 24, 1 << 24};
    CHECK(posenc_grid_count(3, huge, 1 << 20, &n, &err) == POSENC_ERR_SIZE_OVERFLOW,
          "2^72 x 2^20 cells overflow detected: \"%s\"", err.message);
    float small[4];
    CHECK(posenc_grid_table(2, s2, 10, POSENC_GRID_SPLIT_TATP22, POSENC_MODE_PRECISE, POSENC_DTYPE_F32, small, 4,
                            &err) == POSENC_ERR_BUFFER_TOO_SMALL,
          "small buffer rejected: \"%s\"", err.message);

    /* position builder: 2 x 3 -> (0,0) (0,1) (0,2) (1,0) (1,1) (1,2) */
    int64_t pos[12], want_pos[12] = {0, 0, 0, 1, 0, 2, 1, 0, 1, 1, 1, 2};
    CHECK(posenc_grid_positions(2, s2, pos, 12, &err) == POSENC_OK && memcmp(pos, want_pos, sizeof pos) == 0,
          "grid positions 2x3 in row-major order");
}

static void test_tatp22(const char *dir) {
    const struct { const char *name; int axes; size_t shape[3]; int32_t ch; } cases[] = {
        {"tatp22_pe1d_len10_ch16", 1, {10, 0, 0}, 16}, {"tatp22_pe1d_len10_ch15", 1, {10, 0, 0}, 15},
        {"tatp22_pe2d_6x5_ch12", 2, {6, 5, 0}, 12},    {"tatp22_pe2d_6x5_ch10", 2, {6, 5, 0}, 10},
        {"tatp22_pe3d_4x3x2_ch18", 3, {4, 3, 2}, 18},  {"tatp22_pe3d_4x3x2_ch20", 3, {4, 3, 2}, 20}};
    for (int i = 0; i < 6; i++) {
        posenc_array shape;
        double *g = check_load_golden(dir, cases[i].name, &shape);
        size_t n, where;
        double *ours = grid_f64(cases[i].axes, cases[i].shape, cases[i].ch, POSENC_GRID_SPLIT_TATP22,
                                POSENC_MODE_TORCH_COMPAT, POSENC_DTYPE_F32, &n);
        CHECK(n == shape.count, "%s: %zu elements (golden %zu)", cases[i].name, n, shape.count);
        int64_t u = max_ulp(ours, g, n, &where);
        CHECK(u == 0, "%s torch-compat: max %lld ULP at %zu (tol 0: tatp22's float32 steps, SLEEF powf/sinf/cosf)",
              cases[i].name, (long long)u, where);
        free(ours);
        /* precise vs torch float32: positions < 10, so torch's angle x*inv carries <= 2 roundings
         * of 2^-24 relative (inv and the product): |err| <= 10 * 2^-23 ~ 1.2e-6, plus 1 ULP of sin */
        ours = grid_f64(cases[i].axes, cases[i].shape, cases[i].ch, POSENC_GRID_SPLIT_TATP22, POSENC_MODE_PRECISE,
                        POSENC_DTYPE_F32, &n);
        check_close(cases[i].name, ours, g, n, (size_t)cases[i].ch, 2e-6, 0);
        free(ours);
        posenc_array_free(&shape);
    }
}

static void test_xl(void) {
    /* conventions.md §9 worked example: d=8, klen=3, rows are distances 2, 1, 0 */
    double r[24];
    posenc_error err = {0};
    CHECK(posenc_xl_relative_table(8, 3, -1, POSENC_MODE_PRECISE, POSENC_DTYPE_F64, r, 24, &err) == POSENC_OK,
          "XL R d=8 klen=3 computed (%s)", err.message[0] ? err.message : "no error");
    double ex[24] = {0.9092974268, 0.1986693308, 0.01999866669, 0.001999998667, -0.4161468365, 0.9800665778,
                     0.9998000067, 0.9999980000, 0.8414709848, 0.09983341665, 0.009999833334, 0.0009999998333,
                     0.5403023059, 0.9950041653, 0.9999500004, 0.9999995000, 0, 0, 0, 0, 1, 1, 1, 1};
    check_close("XL R d=8 klen=3 = conventions §9 example (10 digits)", r, ex, 24, 8, 6e-11, 0);

    /* direct formula, klen 300, d 64, with and without clamp 100 */
    enum { K = 300, D = 64 };
    static double got[K * D], want[K * D];
    for (int clamp = 0; clamp < 2; clamp++) {
        int64_t clamp_len = clamp ? 100 : -1;
        posenc_xl_relative_table(D, K, clamp_len, POSENC_MODE_PRECISE, POSENC_DTYPE_F64, got, K * D, &err);
        for (int row = 0; row < K; row++) {
            long double p = K - 1 - row;
            if (clamp && p > 100) p = 100;
            for (int k = 0; k < D / 2; k++) {
                long double a = p * powl(10000.0L, -(long double)(2 * k) / D);
                want[row * D + k] = (double)sinl(a);
                want[row * D + D / 2 + k] = (double)cosl(a);
            }
        }
        /* both sides long double; table goes through the recurrence-free id path */
        check_close(clamp ? "XL R klen=300 d=64 clamp 100 vs direct formula" : "XL R klen=300 d=64 vs direct formula",
                    got, want, K * D, D, 1e-15, 0);
    }
    CHECK(got[0] == got[(K - 101) * D] && got[(K - 101) * D] != got[(K - 100) * D],
          "clamp 100: rows of distance >= 100 are equal, distance 99 differs");
    /* torch-compat: XL's float32 steps; against precise within the float32 angle error p * 2^-23 */
    static float tc[K * D];
    static double tcd[K * D];
    posenc_xl_relative_table(D, K, -1, POSENC_MODE_TORCH_COMPAT, POSENC_DTYPE_F32, tc, K * D, &err);
    posenc_xl_relative_table(D, K, -1, POSENC_MODE_PRECISE, POSENC_DTYPE_F64, got, K * D, &err);
    for (int i = 0; i < K * D; i++) tcd[i] = tc[i];
    check_close("XL R torch-compat vs precise (tol 299*2^-23+ULP: 2 float32 roundings of the angle)", tcd, got, K * D, D, 3.7e-5, 0);

    CHECK(posenc_xl_relative_table(7, 3, -1, POSENC_MODE_PRECISE, POSENC_DTYPE_F64, r, 24, &err) ==
                  POSENC_ERR_INVALID_ARGUMENT && strstr(err.message, "got 7"),
          "[L13] XL odd dim rejected: \"%s\"", err.message);
    CHECK(posenc_xl_relative_table(8, 0, -1, POSENC_MODE_PRECISE, POSENC_DTYPE_F64, r, 24, &err) ==
              POSENC_ERR_INVALID_ARGUMENT,
          "[L13] XL klen 0 rejected: \"%s\"", err.message);
    CHECK(posenc_xl_relative_table(8, 4, -1, POSENC_MODE_PRECISE, POSENC_DTYPE_F64, r, 24, &err) ==
              POSENC_ERR_BUFFER_TOO_SMALL,
          "XL small buffer rejected: \"%s\"", err.message);
}

int main(void) {
    test_formula_and_split();
    test_xl();
    const char *dir = check_golden_dir();
    test_tatp22(dir);
    return check_finish();
}
