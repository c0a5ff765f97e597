/* test_shaw.c: Shaw et al. (tensor2tensor) clipped relative indices, equal and
 * unequal lengths as conventions.md section 8.2 shows them, the table gather,
 * shift invariance and rejected inputs. */
#include "check.h"

static void expect(posenc_status st, posenc_status want, const posenc_error *e, const char *needle, const char *what) {
    CHECK(st == want && strstr(e->message, needle) != NULL, "%s -> %s: \"%s\"", what, posenc_strerror(st), e->message);
}

int main(void) {
    int32_t idx[64];
    posenc_positions p5 = posenc_positions_range(0, 5);
    posenc_shaw_relative_indices_i32(2, &p5, &p5, idx, 64, NULL);
    int32_t want_sq[25] = {2, 3, 4, 4, 4, 1, 2, 3, 4, 4, 0, 1, 2, 3, 4, 0, 0, 1, 2, 3, 0, 0, 0, 1, 2};
    size_t sq_shape[2] = {5, 5};
    check_same("k=2, L=5: conventions 8.2 matrix", idx, want_sq, 25, CHECK_I32, sq_shape, 2);
    /* t2t unequal lengths: queries are the last Lq key positions */
    posenc_positions q2 = posenc_positions_range(3, 2);
    posenc_shaw_relative_indices_i32(2, &q2, &p5, idx, 64, NULL);
    int32_t want_un[10] = {0, 0, 1, 2, 3, 0, 0, 0, 1, 2};
    size_t un_shape[2] = {2, 5};
    check_same("k=2, Lq=2, Lk=5 (queries 3,4): [[0 0 1 2 3] [0 0 0 1 2]]", idx, want_un, 10, CHECK_I32, un_shape, 2);
    /* t2t decoding cache: one query at Lk-1 -> clip([-Lk+1 .. 0]) + k */
    posenc_positions qd = posenc_positions_range(4, 1);
    posenc_shaw_relative_indices_i32(3, &qd, &p5, idx, 64, NULL);
    int32_t want_dec[5] = {0, 0, 1, 2, 3};
    check_same("decoding (k=3, query 4, keys 0..4): [0 0 1 2 3]", idx, want_dec, 5, CHECK_I32, NULL, 0);
    /* clip 0: everything maps to row 0 */
    posenc_shaw_relative_indices_i32(0, &p5, &p5, idx, 64, NULL);
    static const int32_t zeros[25];
    check_same("clip 0 maps every pair to index 0", idx, zeros, 25, CHECK_I32, sq_shape, 2);
    /* generic property and shift invariance on a larger grid */
    enum { L = 40, K = 7 };
    static int32_t a[L * L], s[L * L];
    posenc_positions pl = posenc_positions_range(0, L), ps = posenc_positions_range(1000, L);
    posenc_shaw_relative_indices_i32(K, &pl, &pl, a, L * L, NULL);
    posenc_shaw_relative_indices_i32(K, &ps, &ps, s, L * L, NULL);
    static int32_t want[L * L];
    for (int i = 0; i < L; i++)
        for (int j = 0; j < L; j++) {
            int d = j - i < -K ? -K : j - i > K ? K : j - i;
            want[i * L + j] = d + K;
        }
    size_t l_shape[2] = {L, L};
    check_same("L=40, k=7: idx = clip(j-i, -7, 7) + 7", a, want, L * L, CHECK_I32, l_shape, 2);
    check_same("positions +1000 give an identical index matrix", s, a, L * L, CHECK_I32, l_shape, 2);

    /* gather against a direct loop: table[r][c] = 10 r + c */
    float table[(2 * K + 1) * 3], out[L * L * 3];
    for (int r = 0; r < 2 * K + 1; r++)
        for (int c = 0; c < 3; c++) table[r * 3 + c] = (float)(10 * r + c);
    posenc_shaw_gather_f32(a, L * L, K, table, 3, out, L * L * 3, NULL);
    static float direct[L * L * 3];
    for (int t = 0; t < L * L; t++)
        for (int c = 0; c < 3; c++) direct[t * 3 + c] = table[a[t] * 3 + c];
    size_t gather_shape[3] = {L, L, 3};
    check_same("gather of a [15, 3] table by the [40, 40] indices == direct loop", out, direct, L * L * 3, CHECK_F32,
               gather_shape, 3);

    posenc_error e;
    int32_t badidx[3] = {0, 15, 1};
    expect(posenc_shaw_relative_indices_i32(-1, &p5, &p5, idx, 64, &e), POSENC_ERR_INVALID_ARGUMENT, &e, "clip k must be >= 0, got -1", "[B13] clip -1");
    posenc_positions p0 = posenc_positions_range(0, 0);
    expect(posenc_shaw_relative_indices_i32(2, &p0, &p5, idx, 64, &e), POSENC_ERR_INVALID_ARGUMENT, &e, "query length must be > 0, got 0", "query length 0");
    expect(posenc_shaw_relative_indices_i32(2, &p5, &p0, idx, 64, &e), POSENC_ERR_INVALID_ARGUMENT, &e, "key length must be > 0, got 0", "key length 0");
    expect(posenc_shaw_relative_indices_i32(2, &p5, &p5, idx, 24, &e), POSENC_ERR_BUFFER_TOO_SMALL, &e, "needs 25", "small buffer");
    expect(posenc_shaw_gather_f32(badidx, 3, K, table, 3, out, 9, &e), POSENC_ERR_OUT_OF_RANGE, &e, "index 1 must be in [0, 2k] = [0, 14], got 15", "[B14] index past 2k");
    expect(posenc_shaw_gather_f32(a, 3, -2, table, 3, out, 9, &e), POSENC_ERR_INVALID_ARGUMENT, &e, "got -2", "gather clip -2");
    /* one clip check (check_clip) behind both entry points: the same status and message from each */
    expect(posenc_shaw_gather_f32(a, 3, 1 << 30, table, 3, out, 9, &e), POSENC_ERR_LIMIT, &e, "clip k must be < 2^30, got 1073741824", "gather clip 2^30");
    expect(posenc_shaw_relative_indices_i32(1 << 30, &p5, &p5, idx, 64, &e), POSENC_ERR_LIMIT, &e, "clip k must be < 2^30, got 1073741824", "indices clip 2^30");
    expect(posenc_shaw_gather_f32(a, 3, K, table, 0, out, 9, &e), POSENC_ERR_INVALID_ARGUMENT, &e, "depth must be > 0, got 0", "depth 0");
    expect(posenc_shaw_gather_f32(a, 3, K, table, 3, out, 8, &e), POSENC_ERR_BUFFER_TOO_SMALL, &e, "needs 9", "gather buffer");
    return check_finish();
}
