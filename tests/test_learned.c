/* test_learned.c: learned absolute tables (seeded initializer, gather, backward,
 * RoBERTa positions, resize), the hybrid table, the learnable frequency scale,
 * token + position composition and the first article's §5.2 signal check. */
#include "check.h"

static void test_init(void) {
    enum { ROWS = 1000, DIM = 1000 };
    size_t n = (size_t)ROWS * DIM;
    float *a = malloc(n * 4), *b = malloc(n * 4);
    posenc_error err = {0};
    posenc_learned_init_f32(42, 0.02, POSENC_NO_PADDING, ROWS, DIM, a, n, &err);
    posenc_learned_init_f32(42, 0.02, POSENC_NO_PADDING, ROWS, DIM, b, n, &err);
    size_t shape_ab[2] = {ROWS, DIM};
    check_same("same seed 42 -> same table", a, b, n, CHECK_F32, shape_ab, 2);
    posenc_learned_init_f32(43, 0.02, POSENC_NO_PADDING, ROWS, DIM, b, n, &err);
    size_t same = 0;
    for (size_t i = 0; i < n; i++) same += a[i] == b[i];
    CHECK(same < 10, "seed 43 differs from seed 42: %zu of %zu values equal (< 10)", same, n);
    /* counter-based: a [3 x 7] table is the first 21 values of any larger one */
    float small[21];
    posenc_learned_init_f32(42, 0.02, POSENC_NO_PADDING, 3, 7, small, 21, &err);
    check_same("[3x7] table == first 21 values of the [1000x1000] one (counter-based)", small, a,
               sizeof small / sizeof small[0], CHECK_F32, NULL, 0);
    /* moments of 10^6 N(0, 0.02^2) draws. Standard errors: mean sigma/sqrt(N) = 2e-5,
     * std sigma/sqrt(2N) = 1.41e-5, P(|z|<1) sqrt(p(1-p)/N) = 4.7e-4. Tolerance 5 standard
     * errors each: a correct generator fails with probability < 1e-6 (and never for this seed). */
    double sum = 0, sum2 = 0;
    size_t inside = 0;
    for (size_t i = 0; i < n; i++) {
        sum += a[i];
        sum2 += (double)a[i] * a[i];
        inside += fabs(a[i]) < 0.02;
    }
    double mean = sum / n, sd = sqrt(sum2 / n - mean * mean), frac = (double)inside / n;
    CHECK(fabs(mean) < 1e-4, "mean of 10^6 draws %.3g (|.| < 1e-4 = 5 std errors)", mean);
    CHECK(fabs(sd - 0.02) < 7.1e-5, "std of 10^6 draws %.6f (0.02 +- 7.1e-5 = 5 std errors)", sd);
    CHECK(fabs(frac - 0.682689) < 2.4e-3, "fraction within 1 sigma %.5f (0.68269 +- 2.4e-3, normal shape)", frac);
    /* sigma 0 gives zeros; padding row zeroed */
    posenc_learned_init_f32(7, 0.02, 1, 3, 7, small, 21, &err);
    int zero_row = 1;
    for (int c = 0; c < 7; c++) zero_row &= small[7 + c] == 0.0f;
    CHECK(zero_row && small[0] != 0, "padding_idx 1: row 1 is zero, row 0 is not");
    CHECK(posenc_learned_init_f32(7, NAN, -1, 3, 7, small, 21, &err) == POSENC_ERR_INVALID_ARGUMENT &&
              strstr(err.message, "nan"),
          "[L5] sigma NaN rejected: \"%s\"", err.message);
    CHECK(posenc_learned_init_f32(7, 0.02, 3, 3, 7, small, 21, &err) == POSENC_ERR_OUT_OF_RANGE &&
              strstr(err.message, "got 3"),
          "[L6] padding_idx 3 of 3 rows rejected: \"%s\"", err.message);
    CHECK(posenc_learned_init_f32(7, 0.02, -1, 3, 7, small, 20, &err) == POSENC_ERR_BUFFER_TOO_SMALL,
          "small buffer rejected: \"%s\"", err.message);
    free(a);
    free(b);
}

static void test_gather_backward(void) {
    enum { ROWS = 16, DIM = 5, N = 9 };
    float table[ROWS * DIM], out[N * DIM];
    posenc_error err = {0};
    posenc_learned_init_f32(1, 1.0, POSENC_NO_PADDING, ROWS, DIM, table, ROWS * DIM, &err);
    int64_t pos[N] = {0, 3, 3, 15, 7, 1, 1, 3, 2};
    posenc_learned_gather_f32(table, ROWS, DIM, pos, N, POSENC_PAST_END_ERROR, out, N * DIM, &err);
    float direct[N * DIM];
    for (int i = 0; i < N; i++)
        for (int c = 0; c < DIM; c++) direct[i * DIM + c] = table[pos[i] * DIM + c];
    size_t gather_shape[2] = {N, DIM};
    check_same("gather == direct loop out[i][c] = table[pos[i]][c]", out, direct, N * DIM, CHECK_F32, gather_shape, 2);

    int64_t past[3] = {2, 16, 40};
    for (int i = 0; i < N * DIM; i++) out[i] = -7.0f;
    posenc_status st = posenc_learned_gather_f32(table, ROWS, DIM, past, 3, POSENC_PAST_END_ERROR, out, N * DIM, &err);
    CHECK(st == POSENC_ERR_OUT_OF_RANGE && strstr(err.message, "position 1 is 16") && strstr(err.message, "16 rows") &&
              out[0] == -7.0f,
          "[L1] past the end under error: \"%s\", output untouched", err.message);
    posenc_learned_gather_f32(table, ROWS, DIM, past, 3, POSENC_PAST_END_CLAMP, out, N * DIM, &err);
    CHECK(memcmp(out + DIM, table + 15 * DIM, DIM * 4) == 0 && memcmp(out + 2 * DIM, table + 15 * DIM, DIM * 4) == 0,
          "past the end under clamp: positions 16 and 40 read row 15");
    int64_t neg[1] = {-1};
    CHECK(posenc_learned_gather_f32(table, ROWS, DIM, neg, 1, POSENC_PAST_END_CLAMP, out, N * DIM, &err) ==
              POSENC_ERR_OUT_OF_RANGE && strstr(err.message, "got -1"),
          "[L2] negative position rejected even under clamp: \"%s\"", err.message);

    /* backward: scatter-add vs a direct loop; repeated positions accumulate */
    float grad_out[N * DIM], grad[ROWS * DIM] = {0}, want[ROWS * DIM] = {0};
    posenc_learned_init_f32(2, 1.0, POSENC_NO_PADDING, N, DIM, grad_out, N * DIM, &err);
    posenc_learned_backward_f32(grad_out, pos, N, DIM, POSENC_PAST_END_ERROR, POSENC_NO_PADDING, grad, ROWS, &err);
    for (int i = 0; i < N; i++)
        for (int c = 0; c < DIM; c++) want[pos[i] * DIM + c] += grad_out[i * DIM + c];
    check_same("backward == direct loop grad[pos[i]] += g[i] (float32, same order)", grad, want,
               sizeof grad / sizeof grad[0], CHECK_F32, NULL, 0);
    double row3 = (double)grad_out[1 * DIM] + grad_out[2 * DIM] + grad_out[7 * DIM];
    CHECK(fabs(grad[3 * DIM] - row3) < 1e-6, "row 3 (used 3 times) holds the sum %.7f of its 3 gradients (%.7f)",
          grad[3 * DIM], row3);
    /* padding row 1 receives nothing */
    float grad_pad[ROWS * DIM] = {0};
    posenc_learned_backward_f32(grad_out, pos, N, DIM, POSENC_PAST_END_ERROR, 1, grad_pad, ROWS, &err);
    double pad_abs = 0;
    for (int c = 0; c < DIM; c++) pad_abs += fabs(grad_pad[DIM + c]);
    CHECK(pad_abs == 0 && grad_pad[0] == grad[0], "padding_idx 1: row 1 gets no gradient (sum |g| = %g), row 0 does", pad_abs);
    float before = grad[0];
    st = posenc_learned_backward_f32(grad_out, past, 3, DIM, POSENC_PAST_END_ERROR, -1, grad, ROWS, &err);
    CHECK(st == POSENC_ERR_OUT_OF_RANGE && grad[2 * DIM] == want[2 * DIM] && grad[0] == before,
          "backward past the end: \"%s\", nothing added", err.message);
}

static void test_roberta_positions(void) {
    int64_t ids[6] = {0, 31414, 232, 2, 1, 1}, out[6], want[6] = {2, 3, 4, 5, 1, 1};
    posenc_error err = {0};
    posenc_positions_from_input_ids(ids, NULL, 1, 6, 1, 0, out, 6, &err);
    CHECK(memcmp(out, want, sizeof out) == 0, "RoBERTa [0,31414,232,2,1,1] pad 1 -> [%lld,%lld,%lld,%lld,%lld,%lld]",
          (long long)out[0], (long long)out[1], (long long)out[2], (long long)out[3], (long long)out[4], (long long)out[5]);
    /* conventions §3: left padding [[5,6,7,1,1],[1,1,5,6,7]] -> [[2,3,4,1,1],[1,1,2,3,4]] */
    int64_t ids2[10] = {5, 6, 7, 1, 1, 1, 1, 5, 6, 7}, out2[10], want2[10] = {2, 3, 4, 1, 1, 1, 1, 2, 3, 4};
    posenc_positions_from_input_ids(ids2, NULL, 2, 5, 1, 0, out2, 10, &err);
    check_same("fairseq make_positions, right and left padding (conventions §3)", out2, want2,
               sizeof out2 / sizeof out2[0], CHECK_I64, NULL, 0);
    /* explicit mask wins over ids; past_length shifts real tokens only */
    uint8_t mask[6] = {1, 1, 1, 1, 0, 0};
    int64_t ids3[6] = {1, 1, 9, 9, 9, 9}, want3[6] = {12, 13, 14, 15, 1, 1};
    posenc_positions_from_input_ids(ids3, mask, 1, 6, 1, 10, out, 6, &err);
    check_same("mask given + past_length 10 -> [12,13,14,15,1,1]", out, want3, sizeof out / sizeof out[0], CHECK_I64,
               NULL, 0);
    CHECK(posenc_positions_from_input_ids(ids, NULL, 1, 6, -1, 0, out, 6, &err) == POSENC_ERR_INVALID_ARGUMENT &&
              strstr(err.message, "got -1"),
          "[L8] pad_id -1 rejected: \"%s\"", err.message);
    CHECK(posenc_positions_from_input_ids(ids, NULL, 1, 6, 1, 0, out, 5, &err) == POSENC_ERR_BUFFER_TOO_SMALL,
          "small buffer rejected: \"%s\"", err.message);
}

static void test_resize(void) {
    enum { ROWS = 10, DIM = 3, KEEP = 2, NEW = 24 };
    float table[ROWS * DIM], out[NEW * DIM];
    posenc_error err = {0};
    posenc_learned_init_f32(5, 0.02, POSENC_NO_PADDING, ROWS, DIM, table, ROWS * DIM, &err);
    CHECK(posenc_learned_resize_f32(table, ROWS, DIM, KEEP, out, NEW, NEW * DIM, &err) == POSENC_OK,
          "resize 10 -> 24 rows keeping 2 (%s)", err.message[0] ? err.message : "ok");
    size_t keep_shape[2] = {KEEP, DIM};
    check_same("prefix rows 0,1 (RoBERTa pad+1 specials) copied", out, table, KEEP * DIM, CHECK_F32, keep_shape, 2);
    CHECK(memcmp(out + KEEP * DIM, table + KEEP * DIM, DIM * 4) == 0 &&
              memcmp(out + (NEW - 1) * DIM, table + (ROWS - 1) * DIM, DIM * 4) == 0,
          "body endpoints kept exactly: new row 2 == old row 2, new row 23 == old row 9");
    /* every new row against the formula in double: x = j*7/21 = j/3 */
    double got[(NEW - KEEP) * DIM], want[(NEW - KEEP) * DIM];
    for (int j = 0; j < NEW - KEEP; j++) {
        double x = j / 3.0;
        int lo = (int)floor(x), hi = lo + 1 < ROWS - KEEP ? lo + 1 : lo;
        double f = x - lo;
        for (int c = 0; c < DIM; c++) {
            double a = table[(KEEP + lo) * DIM + c], b = table[(KEEP + hi) * DIM + c];
            want[j * DIM + c] = a + f * (b - a);
            got[j * DIM + c] = out[(KEEP + j) * DIM + c];
        }
    }
    /* one float32 rounding of values |v| < 0.1: half an ULP <= 3.7e-9 */
    check_close("resized body vs lerp formula (x = j*(n-1)/(m-1))", got, want, (NEW - KEEP) * DIM, DIM, 3.8e-9, 0);
    /* shrinking 10 -> 6 also keeps endpoints */
    float shrunk[6 * DIM];
    posenc_learned_resize_f32(table, ROWS, DIM, KEEP, shrunk, 6, 6 * DIM, &err);
    CHECK(memcmp(shrunk + 5 * DIM, table + 9 * DIM, DIM * 4) == 0 && memcmp(shrunk, table, 3 * DIM * 4) == 0,
          "shrink 10 -> 6: prefix and both endpoints kept");
    CHECK(posenc_learned_resize_f32(table, ROWS, DIM, 10, out, NEW, NEW * DIM, &err) == POSENC_ERR_INVALID_ARGUMENT &&
              strstr(err.message, "got 10"),
          "[L7] keep 10 of 10 rows rejected: \"%s\"", err.message);
    CHECK(posenc_learned_resize_f32(table, ROWS, DIM, 2, out, 2, NEW * DIM, &err) == POSENC_ERR_INVALID_ARGUMENT &&
              strstr(err.message, "got 2"),
          "[L7] new rows 2 with keep 2 rejected: \"%s\"", err.message);
}

static void test_hybrid_and_scale(void) {
    enum { ROWS = 20, LD = 6, D = 16, N = 12 };
    float learned[ROWS * LD], out[N * D], sin_table[N * D];
    posenc_error err = {0};
    posenc_learned_init_f32(3, 0.02, POSENC_NO_PADDING, ROWS, LD, learned, ROWS * LD, &err);
    posenc_sinusoid_params p;
    posenc_sinusoid_params_default(&p, D);
    posenc_positions pos = posenc_positions_range(4, N);
    posenc_hybrid_table_f32(learned, ROWS, LD, &p, &pos, POSENC_PAST_END_ERROR, out, N * D, &err);
    posenc_sinusoid_table_f32(&p, &pos, sin_table, N * D, &err);
    int ok_low = 1, ok_high = 1;
    for (int r = 0; r < N; r++)
        for (int c = 0; c < D; c++) {
            if (c < LD) ok_low &= out[r * D + c] == learned[(4 + r) * LD + c];
            else ok_high &= out[r * D + c] == sin_table[r * D + c];
        }
    CHECK(ok_low && ok_high, "hybrid: channels 0..5 = learned[p], channels 6..15 = sinusoid(p), exactly");
    pos = posenc_positions_range(10, N); /* positions 10..21, table has 20 rows */
    CHECK(posenc_hybrid_table_f32(learned, ROWS, LD, &p, &pos, POSENC_PAST_END_ERROR, out, N * D, &err) ==
              POSENC_ERR_OUT_OF_RANGE && strstr(err.message, "is 20"),
          "[L1] hybrid past the learned rows: \"%s\"", err.message);
    CHECK(posenc_hybrid_table_f32(learned, ROWS, 17, &p, &pos, POSENC_PAST_END_ERROR, out, N * D, &err) ==
              POSENC_ERR_INVALID_ARGUMENT && strstr(err.message, "got 17"),
          "hybrid learned_dim 17 > dim 16 rejected: \"%s\"", err.message);

    /* frequency scale s: the table at angles p * s * w_k */
    double s = 0.75;
    pos = posenc_positions_range(0, N);
    posenc_freq_scale_table_f32(&p, s, &pos, out, N * D, &err);
    double got[N * D], want[N * D];
    for (int r = 0; r < N; r++)
        for (int k = 0; k < D / 2; k++) {
            long double a = (long double)r * s * powl(10000.0L, -2.0L * k / D);
            want[r * D + 2 * k] = (double)sinl(a);
            want[r * D + 2 * k + 1] = (double)cosl(a);
            got[r * D + 2 * k] = out[r * D + 2 * k];
            got[r * D + 2 * k + 1] = out[r * D + 2 * k + 1];
        }
    check_close("freq scale 0.75 table vs sin/cos(p*s*w) (float32: half ULP 3e-8)", got, want, N * D, D, 6e-8, 0);
    /* gradient vs a central difference of L(s) = sum g * table(s), computed in f64 */
    float g[N * D];
    posenc_learned_init_f32(9, 1.0, POSENC_NO_PADDING, N, D, g, N * D, &err);
    double grad = 0, h = 1e-5, lp = 0, lm = 0;
    posenc_freq_scale_gradient(&p, s, &pos, g, N * D, &grad, &err);
    double vals[N], tab[N * D];
    for (int side = 0; side < 2; side++) {
        double ss = side ? s - h : s + h, L = 0;
        for (int r = 0; r < N; r++) vals[r] = ss * r;
        posenc_positions vp = posenc_positions_values(vals, N);
        posenc_sinusoid_table_f64(&p, &vp, tab, N * D, &err);
        for (int i = 0; i < N * D; i++) L += g[i] * tab[i];
        if (side) lm = L;
        else lp = L;
    }
    double fd = (lp - lm) / (2 * h);
    /* central difference error: h^2/6 * L''' (|L'''| <= sum |g| p^3 w^3 ~ 1e4) ~ 2e-7, rounding 1e-16/h ~ 1e-11 */
    CHECK(fabs(grad - fd) < 1e-6 * (1 + fabs(fd)), "dL/ds = %.10f vs central difference %.10f (diff %.2g, tol 1e-6 rel)",
          grad, fd, fabs(grad - fd));
    CHECK(posenc_freq_scale_table_f32(&p, -1.0, &pos, out, N * D, &err) == POSENC_ERR_INVALID_ARGUMENT &&
              strstr(err.message, "got -1"),
          "[L14] scale -1 rejected: \"%s\"", err.message);
}

static void test_compose(void) {
    enum { V = 7, D = 8, N = 5, PD = 4, OD = 3 };
    float tokens[V * D], pe[N * D], out[N * D];
    posenc_error err = {0};
    posenc_learned_init_f32(11, 1.0, POSENC_NO_PADDING, V, D, tokens, V * D, &err);
    posenc_sinusoid_params p;
    posenc_sinusoid_params_default(&p, D);
    posenc_positions pos = posenc_positions_range(0, N);
    posenc_sinusoid_table_f32(&p, &pos, pe, N * D, &err);
    int64_t ids[N] = {3, 1, 4, 1, 3};
    double scale = sqrt((double)D);
    posenc_compose_add_f32(tokens, V, D, ids, N, scale, pe, out, N * D, &err);
    double got[N * D], want[N * D];
    for (int i = 0; i < N * D; i++) {
        got[i] = out[i];
        want[i] = (double)tokens[ids[i / D] * D + i % D] * scale + pe[i];
    }
    /* the sum is formed in double and rounded once: half an f32 ULP of |v| < 16 is 9.6e-7 */
    check_close("add: token*sqrt(d) + PE vs direct formula", got, want, N * D, D, 9.6e-7, 0);

    /* concat + projection [D + PD][OD] */
    float pe4[N * PD], proj[(D + PD) * OD], cat[N * OD];
    posenc_learned_init_f32(12, 1.0, POSENC_NO_PADDING, N, PD, pe4, N * PD, &err);
    posenc_learned_init_f32(13, 0.1, POSENC_NO_PADDING, D + PD, OD, proj, (D + PD) * OD, &err);
    CHECK(posenc_compose_concat_f32(tokens, V, D, ids, N, 1.0, pe4, PD, proj, D + PD, OD, cat, N * OD, &err) == POSENC_OK,
          "concat + projection computed (%s)", err.message[0] ? err.message : "ok");
    double gotc[N * OD], wantc[N * OD];
    for (int i = 0; i < N; i++)
        for (int o = 0; o < OD; o++) {
            double acc = 0;
            for (int c = 0; c < D; c++) acc += (double)tokens[ids[i] * D + c] * proj[c * OD + o];
            for (int c = 0; c < PD; c++) acc += (double)pe4[i * PD + c] * proj[(D + c) * OD + o];
            gotc[i * OD + o] = cat[i * OD + o];
            wantc[i * OD + o] = acc;
        }
    /* double accumulation of 12 terms, one float32 rounding of |v| < 4: 2.4e-7 */
    check_close("concat + linear projection vs direct matmul", gotc, wantc, N * OD, OD, 2.4e-7, 0);
    float plain[N * (D + PD)];
    posenc_compose_concat_f32(tokens, V, D, ids, N, 1.0, pe4, PD, NULL, 0, D + PD, plain, N * (D + PD), &err);
    CHECK(memcmp(plain, tokens + 3 * D, D * 4) == 0 && memcmp(plain + D, pe4, PD * 4) == 0,
          "concat without projection: [token | pe] per row");

    int64_t bad[N] = {3, 1, 7, 1, 3};
    CHECK(posenc_compose_add_f32(tokens, V, D, bad, N, scale, pe, out, N * D, &err) == POSENC_ERR_OUT_OF_RANGE &&
              strstr(err.message, "token id 7 at index 2") && strstr(err.message, "[0, 7)"),
          "[L3] token id out of range: \"%s\"", err.message);
    CHECK(posenc_compose_concat_f32(tokens, V, D, ids, N, 1.0, pe4, PD, proj, D + PD + 1, OD, cat, N * OD, &err) ==
              POSENC_ERR_INVALID_ARGUMENT && strstr(err.message, "13 rows") && strstr(err.message, "8 + 4 = 12"),
          "[L4] projection rows != token_dim + pe_dim: \"%s\"", err.message);
    CHECK(posenc_compose_concat_f32(tokens, V, D, ids, N, 1.0, pe4, PD, NULL, 0, 10, plain, N * (D + PD), &err) ==
              POSENC_ERR_INVALID_ARGUMENT && strstr(err.message, "got 10"),
          "plain concat with out_dim != 12: \"%s\"", err.message);

    /* §5.2 check. Batch of 2 sequences; first and last token ids equal (3 ... 3) */
    posenc_first_last_report rep;
    posenc_compose_add_f32(tokens, V, D, ids, N, scale, pe, out, N * D, &err);
    posenc_compose_check_signal_f32(out, 1, N, D, ids, 0.0, &rep, &err);
    CHECK(rep.position_signal == 1 && rep.first_last_identical == 0 && rep.same_id_pairs == 2 && rep.same_id_identical == 0,
          "with PE: signal present (first/last min diff %.3g, %zu same-id pairs, %zu identical)", rep.first_last_min_diff,
          rep.same_id_pairs, rep.same_id_identical);
    float zero_pe[N * D] = {0};
    posenc_compose_add_f32(tokens, V, D, ids, N, scale, zero_pe, out, N * D, &err);
    posenc_compose_check_signal_f32(out, 1, N, D, ids, 0.0, &rep, &err);
    CHECK(rep.position_signal == 0 && rep.first_last_identical == 1 && rep.same_id_identical == 2,
          "PE forgotten: signal absent (first/last diff %.3g, %zu of %zu same-id pairs identical)", rep.first_last_min_diff,
          rep.same_id_identical, rep.same_id_pairs);
    /* first/last tokens differ, so only the same-id test can see the missing PE */
    int64_t ids2[N] = {2, 1, 4, 1, 3};
    posenc_compose_add_f32(tokens, V, D, ids2, N, scale, zero_pe, out, N * D, &err);
    posenc_compose_check_signal_f32(out, 1, N, D, ids2, 0.0, &rep, &err);
    CHECK(rep.position_signal == 0 && rep.first_last_identical == 0 && rep.same_id_identical == 1,
          "PE forgotten, first/last tokens differ: first/last says 'differs' (%.3g) but same-id pair (1,1) is identical",
          rep.first_last_min_diff);
    CHECK(posenc_compose_check_signal_f32(out, 1, 1, D, NULL, 0.0, &rep, &err) == POSENC_ERR_INVALID_ARGUMENT &&
              strstr(err.message, "1 x 1"),
          "[L16] seq 1 rejected: \"%s\"", err.message);
}

static void test_files(void) {
    enum { ROWS = 6, DIM = 5 };
    float table[ROWS * DIM];
    posenc_error err = {0};
    posenc_learned_init_f32(21, 0.02, 1, ROWS, DIM, table, ROWS * DIM, &err);
    const char *path = "test_learned_table.npy"; /* in the test's working folder, like test_npy */
    posenc_array back = {0};
    CHECK(posenc_learned_write(path, table, ROWS, DIM, &err) == POSENC_OK &&
              posenc_learned_read(path, 0, &back, &err) == POSENC_OK && back.ndim == 2 && back.shape[0] == ROWS &&
              back.shape[1] == DIM && back.dtype == POSENC_DTYPE_F32 && memcmp(back.data, table, sizeof table) == 0,
          "write then read a [6 x 5] table: same shape, same bytes (%s)", err.message[0] ? err.message : "ok");
    posenc_array_free(&back);
    /* an f64 [2 x 3] file is converted; an int or 1-D file is not a table */
    double d64[6] = {0.1, -0.2, 0.3, 1e-3, 2.5, -7};
    size_t shape[2] = {2, 3};
    posenc_array a = {0};
    posenc_array_create(&a, POSENC_DTYPE_F64, 2, shape, 0, &err);
    memcpy(a.data, d64, sizeof d64);
    posenc_npy_write(path, &a, &err);
    posenc_status st = posenc_learned_read(path, 0, &back, &err);
    float first = st == POSENC_OK ? ((float *)back.data)[0] : 0.0f;
    CHECK(st == POSENC_OK && first == 0.1f && ((float *)back.data)[5] == -7.0f,
          "f64 table read as float32, rounded once (0.1 -> %.9g)", first);
    posenc_array_free(&back);
    a.ndim = 1;
    a.shape[0] = 6;
    posenc_npy_write(path, &a, &err);
    CHECK(posenc_learned_read(path, 0, &back, &err) == POSENC_ERR_INVALID_ARGUMENT && strstr(err.message, "rank 1"),
          "[L9] 1-D file is not a table: \"%s\"", err.message);
    posenc_array_free(&a);
    posenc_array_create(&a, POSENC_DTYPE_I64, 2, shape, 0, &err);
    posenc_npy_write(path, &a, &err);
    CHECK(posenc_learned_read(path, 0, &back, &err) == POSENC_ERR_INVALID_ARGUMENT && strstr(err.message, "i64"),
          "int64 file is not a table: \"%s\"", err.message);
    posenc_array_free(&a);
    remove(path);
}

/* fairseq's forward on a padded batch, rebuilt from this family's pieces: positions from
 * token ids (make_positions), a fairseq table (t2t, half, torch-compat) with the padding row
 * zeroed, and a gather. Bit-identical to the golden if both the positions and gather are right. */
static void test_fairseq_forward(const char *dir) {
    posenc_array shape;
    double *g = check_load_golden(dir, "fairseq_sinusoidal_forward_d64_pad1_tokens2x6", &shape);
    int64_t tokens[12] = {5, 6, 7, 8, 1, 1, 1, 1, 9, 10, 11, 12}, pos[12];
    posenc_error err = {0};
    posenc_positions_from_input_ids(tokens, NULL, 2, 6, 1, 0, pos, 12, &err);
    int64_t want_pos[12] = {2, 3, 4, 5, 1, 1, 1, 1, 2, 3, 4, 5};
    CHECK(memcmp(pos, want_pos, sizeof pos) == 0, "fairseq tokens [[5,6,7,8,1,1],[1,1,9,10,11,12]] -> positions "
                                                  "[[2,3,4,5,1,1],[1,1,2,3,4,5]]");
    posenc_sinusoid_params p;
    posenc_sinusoid_params_default(&p, 64);
    p.freqs = POSENC_FREQS_T2T;
    p.layout = POSENC_LAYOUT_HALF;
    p.mode = POSENC_MODE_TORCH_COMPAT;
    static float table[50 * 64], rows[12 * 64];
    posenc_positions range = posenc_positions_range(0, 50);
    posenc_sinusoid_table_f32(&p, &range, table, 50 * 64, &err);
    memset(table + 64, 0, 64 * sizeof(float)); /* padding_idx row */
    posenc_learned_gather_f32(table, 50, 64, pos, 12, POSENC_PAST_END_ERROR, rows, 12 * 64, &err);
    int64_t worst = 0;
    for (int i = 0; i < 12 * 64; i++) {
        int64_t u = check_ulp_f32(rows[i], (float)g[i]);
        if (u > worst) worst = u;
    }
    CHECK(shape.count == 12 * 64 && worst == 0,
          "fairseq forward golden via positions_from_input_ids + gather: max %lld ULP (tol 0: same table bits)",
          (long long)worst);
    posenc_array_free(&shape);
}

int main(void) {
    test_init();
    test_gather_backward();
    test_roberta_positions();
    test_resize();
    test_hybrid_and_scale();
    test_compose();
    test_files();
    const char *dir = check_golden_dir();
    test_fairseq_forward(dir);
    return check_finish();
}
