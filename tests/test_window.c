/* test_window.c: the windowed 2D relative position bias (posenc_window_*, posenc.h 5.3c).
 * Index: properties over every window up to 12 x 12 (the offset's row is unique per (dy, dx), the diagonal reads
 * the centre row, index(i, j) + index(j, i) = rows - 1, every row is read), the 2 x 2 matrix of the Swin paper's
 * code, and BEiT's three cls rows. Coordinates: the values transformers 5.18 / torch 2.13 give for window 8 and
 * for window 12 pretrained at 8 (hex, tolerance 0 ULP: the same float32 steps), odd symmetry, and a long double
 * evaluation of the real formula within 2 ULPs (four float32 roundings, each half an ULP at most, on values of the
 * same binade). */
#include "check.h"

#include <stdbool.h>

static void test_index_properties(void) {
    static int64_t m[145 * 145];
    int bad = 0;
    for (int32_t h = 1; h <= 12; h++)
        for (int32_t w = 1; w <= 12; w++) {
            posenc_error e = {0};
            int64_t n = (int64_t)h * w, rows = posenc_window_table_rows(h, w, 0);
            if (posenc_window_relative_index_i64(h, w, 0, m, sizeof m / sizeof m[0], &e) != POSENC_OK) {
                bad++;
                continue;
            }
            static unsigned char seen[23 * 23];
            memset(seen, 0, sizeof seen);
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = 0; j < n; j++) {
                    int64_t v = m[i * n + j];
                    if (v < 0 || v >= rows) { bad++; continue; }
                    seen[v] = 1;
                    if (v + m[j * n + i] != rows - 1) bad++;
                    if (i == j && v != (rows - 1) / 2) bad++;
                    /* the same offset, the same row: compare with the pair shifted to start at (0, 0) */
                    int64_t dy = i / w - j / w, dx = i % w - j % w;
                    if (dy >= 0 && dx >= 0 && m[(dy * w + dx) * n] != v) bad++;
                }
            for (int64_t r = 0; r < rows; r++)
                if (!seen[r]) bad++;
            /* BEiT's: the patch block is Swin's, then the three cls rows */
            static int64_t c[146 * 146];
            if (posenc_window_relative_index_i64(h, w, 1, c, sizeof c / sizeof c[0], &e) != POSENC_OK) {
                bad++;
                continue;
            }
            for (int64_t i = 0; i <= n; i++)
                for (int64_t j = 0; j <= n; j++) {
                    int64_t want = i == 0 && j == 0 ? rows + 2 : i == 0 ? rows : j == 0 ? rows + 1
                                                                                : m[(i - 1) * n + j - 1];
                    if (c[i * (n + 1) + j] != want) bad++;
                }
            if (posenc_window_table_rows(h, w, 1) != rows + 3) bad++;
        }
    CHECK(bad == 0, "index of every window 1..12 x 1..12 (and + cls): %d bad entries", bad);
    int64_t two[16];
    static const int64_t want2[16] = {4, 3, 1, 0, 5, 4, 2, 1, 7, 6, 4, 3, 8, 7, 5, 4};
    posenc_window_relative_index_i64(2, 2, 0, two, 16, NULL);
    CHECK(memcmp(two, want2, sizeof two) == 0, "2 x 2 window: {4,3,1,0, 5,4,2,1, 7,6,4,3, 8,7,5,4}");
    CHECK(posenc_window_table_rows(7, 7, 0) == 169 && posenc_window_table_rows(14, 14, 1) == 732,
          "rows: Swin 7x7 169, BEiT 14x14 732");
}

static long double real_coord(int d, int div) {
    long double t = div > 0 ? (long double)d / div : (long double)d;
    t *= 8;
    long double s = t > 0 ? 1 : t < 0 ? -1 : 0;
    return s * log2l(fabsl(t) + 1) / 3;
}

static void test_coords(void) {
    /* torch 2.13: window 8 (divide by 7), dx of offsets 0..7; window 12 pretrained 8 (divide by 7), dx 8..11 */
    static const float w8[8] = {0x0p+0f, 0x1.774ee2p-2f, 0x1.24e63ap-1f, 0x1.6e64f0p-1f,
                                0x1.a6eb8ap-1f, 0x1.d4dc7ap-1f, 0x1.fb9040p-1f, 0x1.0e8012p+0f};
    static const float w12[4] = {0x1.1d37acp+0f, 0x1.2a5c96p+0f, 0x1.363ca6p+0f, 0x1.411116p+0f};
    static float out[2 * 47 * 47];
    posenc_error e = {0};
    CHECK_STATUS(posenc_window_log_coords_f32(8, 8, 0, 0, out, sizeof out / sizeof out[0], &e), POSENC_OK);
    int64_t worst = 0;
    for (int k = 0; k < 8; k++) { /* row dy = -7 (the first), dx = k: entry 7 + k, column 1 */
        int64_t u = check_ulp_f32(out[2 * (7 + k) + 1], w8[k]);
        worst = u > worst ? u : worst;
    }
    CHECK(worst == 0, "window 8: the eight torch values, worst %lld ULP (tolerance 0)", (long long)worst);
    CHECK_STATUS(posenc_window_log_coords_f32(12, 12, 8, 8, out, sizeof out / sizeof out[0], &e), POSENC_OK);
    worst = 0;
    for (int k = 0; k < 4; k++) {
        int64_t u = check_ulp_f32(out[2 * (11 + 8 + k) + 1], w12[k]);
        worst = u > worst ? u : worst;
    }
    CHECK(worst == 0, "window 12 pretrained 8: the four torch values past 7, worst %lld ULP (tolerance 0)",
          (long long)worst);
    int bad = 0;
    int64_t far = 0;
    for (int32_t h = 1; h <= 24; h++)
        for (int32_t w = (h > 1 ? 2 : 1); w <= 24; w += 3)
            for (int32_t p = 0; p <= 16; p += 8) {
                int32_t pp = p;
                if (posenc_window_log_coords_f32(h, w, pp, pp, out, sizeof out / sizeof out[0], &e) != POSENC_OK) {
                    bad++;
                    continue;
                }
                int64_t rows = posenc_window_table_rows(h, w, 0), r = 0;
                int dh = pp ? pp - 1 : h > 1 ? h - 1 : 0, dw = pp ? pp - 1 : h > 1 ? w - 1 : 0;
                for (int dy = -(h - 1); dy < h; dy++)
                    for (int dx = -(w - 1); dx < w; dx++, r++) {
                        float a = out[2 * r], b = out[2 * r + 1];
                        if (a != -out[2 * (rows - 1 - r)] || b != -out[2 * (rows - 1 - r) + 1]) bad++;
                        int64_t ua = check_ulp_f32(a, (float)real_coord(dy, dh));
                        int64_t ub = check_ulp_f32(b, (float)real_coord(dx, dw));
                        far = ua > far ? ua : far;
                        far = ub > far ? ub : far;
                    }
            }
    CHECK(bad == 0 && far <= 2, "windows 1..24 (pretrained 0, 8, 16): odd symmetry (%d bad), the real formula "
          "within %lld ULP (tolerance 2)", bad, (long long)far);
}

static void test_errors(void) {
    int64_t m[16];
    float f[64];
    posenc_error e = {0};
    CHECK(posenc_window_relative_index_i64(0, 2, 0, m, 16, &e) == POSENC_ERR_INVALID_ARGUMENT &&
          strstr(e.message, "window_height") && strstr(e.message, "got 0"), "window_height 0: %s", e.message);
    CHECK(posenc_window_relative_index_i64(2, 5000, 0, m, 16, &e) == POSENC_ERR_INVALID_ARGUMENT &&
          strstr(e.message, "window_width") && strstr(e.message, "5000"), "window_width 5000: %s", e.message);
    CHECK(posenc_window_relative_index_i64(2, 2, 1, m, 16, &e) == POSENC_ERR_BUFFER_TOO_SMALL &&
          strstr(e.message, "16") && strstr(e.message, "5 x 5"), "cls 2x2 into 16: %s", e.message);
    CHECK(posenc_window_relative_index_i64(2, 2, 0, NULL, 16, &e) == POSENC_ERR_NULL_POINTER, "NULL out: %s",
          e.message);
    CHECK(posenc_window_relative_index_i64(300, 300, 0, m, 16, &e) == POSENC_ERR_INVALID_ARGUMENT &&
          strstr(e.message, "300 x 300"), "300 x 300 over 2^31: %s", e.message);
    CHECK(posenc_window_log_coords_f32(4, 4, 1, 1, f, 64, &e) == POSENC_ERR_INVALID_ARGUMENT &&
          strstr(e.message, "pretrained_height") && strstr(e.message, "got 1"), "pretrained 1: %s", e.message);
    CHECK(posenc_window_log_coords_f32(4, 4, 8, 0, f, 64, &e) == POSENC_ERR_INVALID_ARGUMENT &&
          strstr(e.message, "8") && strstr(e.message, "both"), "pretrained 8 x 0: %s", e.message);
    CHECK(posenc_window_log_coords_f32(4, 1, 0, 0, f, 64, &e) == POSENC_ERR_INVALID_ARGUMENT &&
          strstr(e.message, "window_width 1"), "window 4 x 1: %s", e.message);
    CHECK(posenc_window_log_coords_f32(4, 4, 0, 0, f, 97, &e) == POSENC_ERR_BUFFER_TOO_SMALL &&
          strstr(e.message, "49 x 2"), "coords 4x4 into 97: %s", e.message);
    CHECK(posenc_window_table_rows(0, 3, 0) == 0 && posenc_window_table_rows(3, 4097, 1) == 0,
          "table rows of a bad side: 0");
}

/* LeViT: the first-seen numbering of (|dy|, |dx|) in HF's loops, recomputed here by its definition (a dictionary of
 * offsets in the order the query-major, key-minor loops meet them), against posenc's closed form */
static void test_abs_index(void) {
    static int64_t m[64 * 64];
    int bad = 0;
    for (int32_t r = 1; r <= 8; r++)
        for (int32_t s = 1; s <= r; s++) {
            int32_t ro = (r - 1) / s + 1;
            posenc_error e = {0};
            if (posenc_window_abs_index_i64(r, ro, s, m, sizeof m / sizeof m[0], &e) != POSENC_OK) {
                bad++;
                continue;
            }
            static int seen[64][64];
            for (int i = 0; i < 64; i++)
                for (int j = 0; j < 64; j++) seen[i][j] = -1;
            int next = 0;
            for (int q = 0; q < ro * ro; q++)
                for (int k = 0; k < r * r; k++) {
                    int dy = abs(q / ro * s - k / r), dx = abs(q % ro * s - k % r);
                    if (seen[dy][dx] < 0) seen[dy][dx] = next++;
                    if (m[q * r * r + k] != seen[dy][dx]) bad++;
                }
            if (next != r * r) bad++;
        }
    CHECK(bad == 0, "LeViT index, grids 1..8, every stride: first-seen numbering of (|dy|, |dx|), %d bad", bad);
    posenc_error e = {0};
    CHECK(posenc_window_abs_index_i64(4, 3, 2, m, 64, &e) == POSENC_ERR_INVALID_ARGUMENT && strstr(e.message, "= 2") &&
              strstr(e.message, "got 3"), "resolution_out 3 for 4 / 2: %s", e.message);
    CHECK(posenc_window_abs_index_i64(4, 1, 5, m, 64, &e) == POSENC_ERR_INVALID_ARGUMENT && strstr(e.message, "got 5"),
          "stride 5 over 4: %s", e.message);
    CHECK(posenc_window_abs_index_i64(4, 4, 1, m, 255, &e) == POSENC_ERR_BUFFER_TOO_SMALL && strstr(e.message, "255"),
          "16 x 16 into 255: %s", e.message);
}

int main(void) {
    test_abs_index();
    test_index_properties();
    test_coords();
    test_errors();
    return check_finish();
}
