/* test_attention.c: the reference attention. Hand-computed cases, scheme paths
 * against the dense bias generators, ggml soft_max_ext goldens (ALiBi causal
 * and the slope probe), permutation equivariance without a position signal
 * (and its absence with each scheme), shift invariance of RoPE / ALiBi / T5 /
 * Shaw (all positions + 1000), and rejected configurations. */
#include "check.h"

enum { H = 2, L = 12, D = 8 };

/* the goldens' input formula, as a deterministic "random" tensor [heads, len, dim] */
static void formula(float *x, int heads, int len, int dim, double phase) {
    for (int h = 0; h < heads; h++)
        for (int t = 0; t < len; t++)
            for (int d = 0; d < dim; d++)
                x[(h * len + t) * dim + d] =
                    (float)(sin(0.37 * t + 1.3 * h + 0.11 * d + phase) * (1 + 0.01 * d));
}

static void run_attention(const posenc_attention_config *c, const float *q, const float *k, const float *v,
                          float *out, float *w) {
    posenc_error e;
    size_t n_out = (size_t)c->heads * c->query_len * (size_t)c->head_dim;
    size_t n_w = (size_t)c->heads * c->query_len * c->key_len;
    if (posenc_attention_reference_f32(c, q, k, v, out, n_out, w, n_w, &e) != POSENC_OK) {
        printf("FAIL: attention: %s\n", e.message);
        exit(EXIT_FAILURE);
    }
}

static double max_abs_diff(const float *a, const float *b, size_t n) {
    double m = 0;
    for (size_t i = 0; i < n; i++) m = fmax(m, fabs((double)a[i] - (double)b[i]));
    return m;
}

static void test_hand_cases(void) {
    float q[4] = {1, 0, 0, 1}, k[4] = {1, 0, 0, 1}, v[4] = {1, 2, 3, 4}, out[4], w[4];
    posenc_attention_config c;
    posenc_attention_config_default(&c, 1, 2, 2, 2);
    c.scale = 1.0;
    run_attention(&c, q, k, v, out, w);
    double e1 = exp(1.0), w0 = e1 / (e1 + 1), w1 = 1 / (e1 + 1);
    double want[4] = {w0 * 1 + w1 * 3, w0 * 2 + w1 * 4, w1 * 1 + w0 * 3, w1 * 2 + w0 * 4};
    double got[4] = {out[0], out[1], out[2], out[3]};
    /* one f32 rounding of an exact double result: half an ULP, 6e-8 relative */
    check_close("2 tokens, d=2, bidirectional: out = softmax([1,0]) V", got, want, 4, 2, 0, 6e-8);
    c.causal = 1;
    run_attention(&c, q, k, v, out, w);
    CHECK(out[0] == 1 && out[1] == 2 && w[0] == 1 && w[1] == 0, "causal: query 0 sees only key 0 (weights [%g %g], out [%g %g])",
          (double)w[0], (double)w[1], (double)out[0], (double)out[1]);

    /* RoPE: q = k = [1, 0]; query at 3, keys 0..3 -> logits cos((3 - j) w0), w0 = 1 */
    float qr[2] = {1, 0}, kr[8] = {1, 0, 1, 0, 1, 0, 1, 0}, vr[8] = {1, 0, 0, 1, 2, 0, 0, 2}, o2[2], w4[4];
    posenc_attention_config_default(&c, 1, 2, 1, 4);
    c.scheme = POSENC_ATTENTION_ROPE;
    c.scale = 1.0;
    c.query_start = 3;
    run_attention(&c, qr, kr, vr, o2, w4);
    double z = 0, p[4], wg[4];
    for (int j = 0; j < 4; j++) z += p[j] = exp(cos(3.0 - j));
    for (int j = 0; j < 4; j++) p[j] /= z, wg[j] = w4[j];
    check_close("RoPE d=2: weights = softmax(cos(i - j)), i=3, j=0..3", wg, p, 4, 4, 0, 6e-8);
}

/* scheme path == NONE + the dense generator as logit_bias, bit for bit */
static void test_paths(void) {
    float q[H * L * D], k[H * L * D], v[H * L * D], o1[H * L * D], o2[H * L * D], w1[H * L * L], w2[H * L * L];
    formula(q, H, L, D, 0.0), formula(k, H, L, D, 0.5), formula(v, H, L, D, 1.0);
    float slopes[H], bias[H * L * L];
    posenc_alibi_slopes_f32(H, 8.0, 0, 0, POSENC_MODE_PRECISE, slopes, H, NULL);
    posenc_positions pos = posenc_positions_range(0, L);
    posenc_attention_config c;
    for (int form = 0; form < 2; form++) {
        posenc_attention_config_default(&c, H, D, L, L);
        c.causal = form == 0;
        c.scheme = POSENC_ATTENTION_ALIBI;
        c.alibi_slopes = slopes;
        c.alibi_form = (posenc_alibi_form)form;
        run_attention(&c, q, k, v, o1, w1);
        posenc_alibi_bias_f32(slopes, H, (posenc_alibi_form)form, &pos, &pos, bias, H * L * L, NULL);
        posenc_attention_config_default(&c, H, D, L, L);
        c.causal = form == 0;
        c.logit_bias = bias;
        run_attention(&c, q, k, v, o2, w2);
        check_same(form ? "ALIBI symmetric path == NONE + posenc_alibi_bias_f32 as logit_bias: outputs"
                        : "ALIBI causal path == NONE + posenc_alibi_bias_f32 as logit_bias: outputs",
                   o1, o2, sizeof o1 / sizeof o1[0], CHECK_F32, NULL, 0);
        check_same(form ? "ALIBI symmetric path: attention weights" : "ALIBI causal path: attention weights", w1, w2,
                   sizeof w1 / sizeof w1[0], CHECK_F32, NULL, 0);
    }
    float table[32 * H];
    for (int b = 0; b < 32; b++)
        for (int h = 0; h < H; h++) table[b * H + h] = (float)sin(0.7 * b + h);
    posenc_attention_config_default(&c, H, D, L, L);
    c.scheme = POSENC_ATTENTION_T5;
    c.t5_table = table;
    c.scale = 1.0;
    run_attention(&c, q, k, v, o1, w1);
    posenc_t5_bias_f32(&c.t5, table, H, &pos, &pos, bias, H * L * L, NULL);
    posenc_attention_config_default(&c, H, D, L, L);
    c.scale = 1.0;
    c.logit_bias = bias;
    run_attention(&c, q, k, v, o2, w2);
    check_same("T5 path == NONE + posenc_t5_bias_f32 as logit_bias: outputs", o1, o2, sizeof o1 / sizeof o1[0], CHECK_F32,
               NULL, 0);
    check_same("T5 path: attention weights", w1, w2, sizeof w1 / sizeof w1[0], CHECK_F32, NULL, 0);

    /* Shaw against a direct double loop of tensor2tensor's formula */
    enum { K = 3 };
    float aK[(2 * K + 1) * D], aV[(2 * K + 1) * D];
    for (int r = 0; r < 2 * K + 1; r++)
        for (int d = 0; d < D; d++) aK[r * D + d] = (float)cos(0.3 * r + 0.2 * d), aV[r * D + d] = (float)sin(0.5 * r - 0.1 * d);
    posenc_attention_config_default(&c, H, D, L, L);
    c.scheme = POSENC_ATTENTION_SHAW;
    c.shaw_clip = K;
    c.shaw_key_table = aK;
    c.shaw_value_table = aV;
    c.causal = 1;
    run_attention(&c, q, k, v, o1, w1);
    double want[H * L * D], got[H * L * D];
    for (int h = 0; h < H; h++)
        for (int i = 0; i < L; i++) {
            double lg[L], z = 0, mx = -INFINITY;
            for (int j = 0; j <= i; j++) {
                int idx = (j - i < -K ? -K : j - i > K ? K : j - i) + K;
                double s = 0;
                for (int d = 0; d < D; d++) s += q[(h * L + i) * D + d] * ((double)k[(h * L + j) * D + d] + aK[idx * D + d]);
                lg[j] = s / sqrt((double)D);
                mx = fmax(mx, lg[j]);
            }
            for (int j = 0; j <= i; j++) z += lg[j] = exp(lg[j] - mx);
            for (int d = 0; d < D; d++) {
                double acc = 0;
                for (int j = 0; j <= i; j++) {
                    int idx = (j - i < -K ? -K : j - i > K ? K : j - i) + K;
                    acc += lg[j] / z * ((double)v[(h * L + j) * D + d] + aV[idx * D + d]);
                }
                want[(h * L + i) * D + d] = acc;
                got[(h * L + i) * D + d] = o1[(h * L + i) * D + d];
            }
        }
    /* both in double with a different summation order, then one f32 rounding: |out| < 3 */
    check_close("SHAW causal (k=3) vs direct t2t formula loop", got, want, H * L * D, D, 4e-7, 0);
}

static void test_ggml_goldens(const char *dir) {
    int heads_list[3] = {8, 12, 32};
    for (int t = 0; t < 3; t++) {
        int nh = heads_list[t];
        char name[128], label[160];
        /* causal: softmax(0.125 * a + slope * (-|q-k|)), a[h,q,k] = formula; q one-hot so q.k = a */
        enum { N = 16 };
        float *qq = calloc((size_t)nh * N * N, 4), *kk = malloc((size_t)nh * N * N * 4), *vv = calloc((size_t)nh * N * N, 4);
        float *out = malloc((size_t)nh * N * N * 4), *w = malloc((size_t)nh * N * N * 4), slopes[32];
        for (int h = 0; h < nh; h++)
            for (int a = 0; a < N; a++) {
                qq[(h * N + a) * N + a] = 1.0f;
                for (int b = 0; b < N; b++) /* k[h][b][a] = a_scores[h][a][b] */
                    kk[(h * N + b) * N + a] = (float)(sin(0.37 * a + 1.3 * h + 0.11 * b) * (1 + 0.01 * b));
            }
        /* ggml raises a rounded f32 base to integer powers (powf): the TORCH_COMPAT
         * construction, within 1 ULP of ggml's slopes (test_alibi.c). PRECISE slopes
         * differ by up to 8 ULP at 32 heads, which the probe's logits up to
         * slope * 4096 amplify to ~2e-6 relative in exp(). */
        posenc_alibi_slopes_f32(nh, 8.0, 0, 0, POSENC_MODE_TORCH_COMPAT, slopes, 32, NULL);
        posenc_attention_config c;
        posenc_attention_config_default(&c, nh, N, N, N);
        c.scale = 0.125;
        c.causal = 1;
        c.scheme = POSENC_ATTENTION_ALIBI;
        c.alibi_form = POSENC_ALIBI_SYMMETRIC;
        c.alibi_slopes = slopes;
        run_attention(&c, qq, kk, vv, out, w);
        snprintf(name, sizeof name, "ggml_softmax_alibi_causal_nhead%d", nh);
        double *want = check_load_golden(dir, name, NULL);
        double *got = malloc((size_t)nh * N * N * 8);
        for (int i = 0; i < nh * N * N; i++) got[i] = w[i];
        snprintf(label, sizeof label, "ggml soft_max_ext ALiBi causal n=%d [n,16,16] via reference attention", nh);
        /* ggml: float32 logits, its own f32 exp and a float sum over <= 16 terms;
         * ours: double, one rounding. 2.4e-7 absolute = 4 f32 ULP of a weight in [0.5, 1) */
        check_close(label, got, want, (size_t)nh * N * N, N, 2.4e-7, 0);
        free(want);

        /* probe: zero scores, logit bias slope * [0, 2^q] */
        snprintf(name, sizeof name, "ggml_softmax_alibi_probe_nhead%d", nh);
        want = check_load_golden(dir, name, NULL);
        float z1[32 * 13] = {0}, z2[32 * 2] = {0}, bias[32 * 13 * 2], o[32 * 13], wp[32 * 13 * 2];
        for (int h = 0; h < nh; h++)
            for (int r = 0; r < 13; r++) bias[(h * 13 + r) * 2] = 0, bias[(h * 13 + r) * 2 + 1] = slopes[h] * ldexpf(1.0f, r);
        posenc_attention_config_default(&c, nh, 1, 13, 2);
        c.scale = 1.0;
        c.logit_bias = bias;
        run_attention(&c, z1, z2, z2, o, wp);
        /* Per element: our slope may differ from ggml's by 1 ULP (SLEEF vs glibc
         * powf), and exp(x) turns a relative error e of x = slope * 2^q into
         * |x| e of the result; ggml's f32 exp and division add a few ULP more.
         * Tolerance: |ref| * (|x| * 2^-23 + 8 * 2^-24). */
        double worst_ratio = 0, worst_rel = 0;
        int where = 0;
        for (int i = 0; i < nh * 26; i++) {
            int h = i / 26, r = (i / 2) % 13;
            double x = (double)slopes[h] * ldexp(1.0, r), ref = want[i];
            double tol = fabs(ref) * (x * 0x1p-23 + 8 * 0x1p-24) + 1e-45;
            double ratio = fabs((double)wp[i] - ref) / tol;
            if (ratio > worst_ratio) worst_ratio = ratio, where = i;
            if (ref > 1e-37) worst_rel = fmax(worst_rel, fabs((double)wp[i] - ref) / ref);
        }
        CHECK(worst_ratio <= 1, "ggml soft_max_ext probe n=%d [n,13,2] (slope*[0,2^q]): max rel diff %.3g, worst at [%d] = %.3g of its tolerance |ref|(|x| 2^-23 + 8 2^-24)",
              nh, worst_rel, where, worst_ratio);
        free(want);
        free(got), free(qq), free(kk), free(vv), free(out), free(w);
    }
}

/* scheme setups shared by the permutation and shift tests */
typedef struct {
    float slopes[H], t5_table[32 * H], aK[9 * D], aV[9 * D];
} scheme_data;

static void setup(posenc_attention_config *c, posenc_attention_scheme s, scheme_data *sd, int causal) {
    posenc_attention_config_default(c, H, D, L, L);
    c->causal = causal;
    c->scheme = s;
    posenc_alibi_slopes_f32(H, 8.0, 0, 0, POSENC_MODE_PRECISE, sd->slopes, H, NULL);
    for (int b = 0; b < 32; b++)
        for (int h = 0; h < H; h++) sd->t5_table[b * H + h] = (float)sin(0.7 * b + h);
    for (int r = 0; r < 9; r++)
        for (int d = 0; d < D; d++) sd->aK[r * D + d] = (float)cos(0.3 * r + 0.2 * d), sd->aV[r * D + d] = (float)sin(0.5 * r - 0.1 * d);
    c->alibi_slopes = sd->slopes;
    c->alibi_form = causal ? POSENC_ALIBI_CAUSAL : POSENC_ALIBI_SYMMETRIC;
    c->t5_table = sd->t5_table;
    c->t5.bidirectional = !causal;
    c->shaw_clip = 4;
    c->shaw_key_table = sd->aK;
    c->shaw_value_table = sd->aV;
}

static const char *scheme_name(posenc_attention_scheme s) {
    static const char *names[] = {"NONE", "ROPE", "ALIBI", "T5", "SHAW"};
    return names[s];
}

static void permute(const float *x, float *y, const int *perm) {
    for (int h = 0; h < H; h++)
        for (int t = 0; t < L; t++) memcpy(y + (h * L + t) * D, x + (h * L + perm[t]) * D, D * sizeof(float));
}

static void test_permutation(void) {
    int perm[L] = {5, 2, 9, 0, 11, 7, 1, 3, 10, 4, 8, 6};
    float x[H * L * D], xp[H * L * D], o[H * L * D], op[H * L * D], po[H * L * D], w[H * L * L];
    formula(x, H, L, D, 0.2);
    permute(x, xp, perm);
    scheme_data sd;
    posenc_attention_config c;
    /* bidirectional self-attention with q = k = v = x (identity projections) */
    for (int s = 0; s <= 4; s++) {
        setup(&c, (posenc_attention_scheme)s, &sd, 0);
        run_attention(&c, x, x, x, o, w);
        run_attention(&c, xp, xp, xp, op, w);
        permute(o, po, perm);
        double diff = max_abs_diff(op, po, H * L * D);
        if (s == 0)
            /* same math in another summation order: <= 2 ULP of |out| < 1.1 */
            CHECK(diff <= 2.5e-7, "NONE: attention(permuted tokens) == permuted attention(tokens): max diff %.3g (tol 2.5e-7, rounding)", diff);
        else
            CHECK(diff > 1e-3, "%s: permuting tokens does NOT permute outputs: max diff %.3g (> 1e-3, the position signal)", scheme_name((posenc_attention_scheme)s), diff);
    }
    /* absolute: sinusoid added to the inputs (by slot), then plain attention */
    posenc_sinusoid_params sp;
    posenc_sinusoid_params_default(&sp, D);
    posenc_positions pos = posenc_positions_range(0, L);
    float pe[L * D], xa[H * L * D], xpa[H * L * D];
    posenc_sinusoid_table_f32(&sp, &pos, pe, L * D, NULL);
    for (int h = 0; h < H; h++)
        for (int i = 0; i < L * D; i++) xa[h * L * D + i] = x[h * L * D + i] + pe[i], xpa[h * L * D + i] = xp[h * L * D + i] + pe[i];
    setup(&c, POSENC_ATTENTION_NONE, &sd, 0);
    run_attention(&c, xa, xa, xa, o, w);
    run_attention(&c, xpa, xpa, xpa, op, w);
    permute(o, po, perm);
    double diff = max_abs_diff(op, po, H * L * D);
    CHECK(diff > 1e-3, "absolute (sinusoid added to inputs): permuting tokens does NOT permute outputs: max diff %.3g (> 1e-3)", diff);
}

static void test_shift(void) {
    float q[H * L * D], k[H * L * D], v[H * L * D], o0[H * L * D], o1[H * L * D], w0[H * L * L], w1[H * L * L];
    formula(q, H, L, D, 0.0), formula(k, H, L, D, 0.5), formula(v, H, L, D, 1.0);
    scheme_data sd;
    posenc_attention_config c;
    for (int causal = 0; causal < 2; causal++)
        for (int s = 1; s <= 4; s++) {
            for (int layout = 0; layout < (s == 1 ? 2 : 1); layout++) {
                setup(&c, (posenc_attention_scheme)s, &sd, causal);
                c.rope_layout = (posenc_layout)layout;
                if (layout == 0) c.rope.rotary_dim = D / 2; /* partial rotary on the interleaved run */
                run_attention(&c, q, k, v, o0, w0);
                c.query_start = c.key_start = 1000;
                run_attention(&c, q, k, v, o1, w1);
                double dw = max_abs_diff(w0, w1, H * L * L), dout = max_abs_diff(o0, o1, H * L * D);
                const char *what = s != 1 ? "" : layout == 0 ? " (interleaved, rope_dims 4 of 8)" : " (half)";
                if (s == 1)
                    /* q.k after rotation by i vs i+1000: angle rounding ~1e-16, then f32: <= 2 ULP */
                    CHECK(dw <= 2.4e-7 && dout <= 4.8e-7, "%s%s %s: positions +1000 change weights by %.3g, outputs by %.3g (tol 2.4e-7 / 4.8e-7)",
                          scheme_name((posenc_attention_scheme)s), what, causal ? "causal" : "bidirectional", dw, dout);
                else
                    CHECK(dw == 0 && dout == 0, "%s %s: positions +1000 give bit-identical weights and outputs",
                          scheme_name((posenc_attention_scheme)s), causal ? "causal" : "bidirectional");
            }
        }
    /* RoPE layouts: interleaved inputs == the same pairs moved to the half split */
    float qh[H * L * D], kh[H * L * D], wi[H * L * L], wh[H * L * L];
    for (int r = 0; r < H * L; r++)
        for (int p = 0; p < D / 2; p++) {
            qh[r * D + p] = q[r * D + 2 * p], qh[r * D + D / 2 + p] = q[r * D + 2 * p + 1];
            kh[r * D + p] = k[r * D + 2 * p], kh[r * D + D / 2 + p] = k[r * D + 2 * p + 1];
        }
    setup(&c, POSENC_ATTENTION_ROPE, &sd, 1);
    c.rope_layout = POSENC_LAYOUT_INTERLEAVED;
    c.query_start = c.key_start = 37;
    run_attention(&c, q, k, v, o0, wi);
    c.rope_layout = POSENC_LAYOUT_HALF;
    run_attention(&c, qh, kh, v, o1, wh);
    double dl = max_abs_diff(wi, wh, H * L * L);
    /* same products in another channel order: <= 2 ULP of a weight */
    CHECK(dl <= 2.4e-7, "RoPE interleaved == half split with channels regrouped: max weight diff %.3g (tol 2.4e-7)", dl);

}

/* The rotation the attention applies to q, read back through the softmax and
 * compared with HF GPT-NeoX's apply_rotary_pos_emb golden: head c of a 64-head
 * call holds the query x[t,h,:] at position t and two keys, e_c at position 0
 * (angle 0: unrotated) and 0 at position 1, so logits are [q'_c, 0] and
 * q'_c = ln(w0 / w1). */
static void test_rope_golden(const char *dir) {
    enum { T = 37, NH = 3, HD = 64 };
    double *x = check_load_golden(dir, "input_formula_T37_H3_D64", NULL);
    double *want = check_load_golden(dir, "hf_neox_apply_q_default_hd64_base10000_pos0", NULL);
    static float q[HD * HD], k[HD * 2 * HD], v[HD * 2 * HD], out[HD * HD], w[HD * 2];
    static double got[T * NH * HD];
    memset(k, 0, sizeof k), memset(v, 0, sizeof v);
    for (int c = 0; c < HD; c++) k[(c * 2 + 0) * HD + c] = 1.0f;
    posenc_attention_config cfg;
    posenc_attention_config_default(&cfg, HD, HD, 1, 2);
    cfg.scheme = POSENC_ATTENTION_ROPE;
    cfg.rope_layout = POSENC_LAYOUT_HALF;
    cfg.scale = 1.0;
    for (int t = 0; t < T; t++)
        for (int h = 0; h < NH; h++) {
            for (int c = 0; c < HD; c++)
                for (int d = 0; d < HD; d++) q[c * HD + d] = (float)x[(t * NH + h) * HD + d];
            cfg.query_start = t;
            run_attention(&cfg, q, k, v, out, w);
            for (int c = 0; c < HD; c++) got[(t * NH + h) * HD + c] = log((double)w[c * 2] / (double)w[c * 2 + 1]);
        }
    /* golden README: HF vs float64 <= 1.7e-6 at positions 0..36; reading q'
     * back through two f32 weights adds <= 4 f32 ULP of ln(w0/w1) (~5e-7) */
    check_close("attention's RoPE on q == HF NeoX apply_rotary_pos_emb (pos 0..36)", got, want, T * NH * HD, HD, 3e-6, 0);
    free(x), free(want);
}

static void expect(const posenc_attention_config *c, posenc_status want, const char *needle, const char *what) {
    static float buf[4096];
    posenc_error e;
    posenc_status st = posenc_attention_reference_f32(c, buf, buf, buf, buf + 2048, 1024, NULL, 0, &e);
    CHECK(st == want && strstr(e.message, needle) != NULL, "%s -> %s: \"%s\"", what, posenc_strerror(st), e.message);
}

static void test_errors(void) {
    posenc_attention_config c;
    float one = 1;
    posenc_attention_config_default(&c, 0, 4, 2, 2);
    expect(&c, POSENC_ERR_INVALID_ARGUMENT, "heads must be > 0, got 0", "heads 0");
    posenc_attention_config_default(&c, 1, 0, 2, 2);
    expect(&c, POSENC_ERR_INVALID_ARGUMENT, "head_dim must be > 0, got 0", "head_dim 0");
    posenc_attention_config_default(&c, 1, 4, 0, 2);
    expect(&c, POSENC_ERR_INVALID_ARGUMENT, "query length must be > 0, got 0", "query length 0");
    posenc_attention_config_default(&c, 1, 4, 2, 0);
    expect(&c, POSENC_ERR_INVALID_ARGUMENT, "key length must be > 0, got 0", "key length 0");
    posenc_attention_config_default(&c, 1, 4, 2, 2);
    c.causal = 1, c.query_start = 3, c.key_start = 5;
    expect(&c, POSENC_ERR_INVALID_ARGUMENT, "query position 3 sees no key (keys start at 5)", "[B15] causal row with no key");
    posenc_attention_config_default(&c, 1, 4, 2, 2);
    c.query_start = -1;
    expect(&c, POSENC_ERR_INVALID_ARGUMENT, "got -1", "negative query start");
    posenc_attention_config_default(&c, 1, 4, 2, 2);
    c.scale = NAN;
    expect(&c, POSENC_ERR_INVALID_ARGUMENT, "scale must be finite and > 0, got nan", "[B17] scale NaN");
    c.scale = 1, c.scheme = POSENC_ATTENTION_ALIBI;
    expect(&c, POSENC_ERR_NULL_POINTER, "scheme ALIBI needs alibi_slopes", "ALiBi without slopes");
    c.scheme = POSENC_ATTENTION_T5;
    expect(&c, POSENC_ERR_NULL_POINTER, "scheme T5 needs t5_table", "[B16] T5 without table");
    c.t5_table = &one, c.t5.num_buckets = 7;
    expect(&c, POSENC_ERR_INVALID_ARGUMENT, "num_buckets must be even when bidirectional, got 7", "T5 odd buckets");
    c.scheme = POSENC_ATTENTION_SHAW, c.shaw_clip = -2;
    expect(&c, POSENC_ERR_INVALID_ARGUMENT, "shaw_clip k must be >= 0, got -2", "Shaw clip -2");
    c.shaw_clip = 2;
    expect(&c, POSENC_ERR_NULL_POINTER, "scheme SHAW needs shaw_key_table", "Shaw without table");
    c.scheme = POSENC_ATTENTION_ROPE, c.rope.rotary_dim = 3;
    expect(&c, POSENC_ERR_INVALID_ARGUMENT, "got 3", "rope rotary_dim 3");
    c.rope.rotary_dim = 0, c.rope.base = 1;
    expect(&c, POSENC_ERR_INVALID_ARGUMENT, "got 1", "rope base 1");
    c.rope.base = 10000, c.rope.head_dim = 8;
    expect(&c, POSENC_ERR_INVALID_ARGUMENT, "rope.head_dim must equal head_dim = 4, got 8", "[B18] rope head_dim mismatch");
    c.rope.head_dim = 4, c.rope_layout = (posenc_layout)3;
    expect(&c, POSENC_ERR_INVALID_ARGUMENT, "rope_layout must be INTERLEAVED (0) or HALF (1), got 3", "rope layout 3");
    c.scheme = (posenc_attention_scheme)9;
    expect(&c, POSENC_ERR_INVALID_ARGUMENT, "unknown attention scheme 9", "unknown scheme");
    posenc_attention_config_default(&c, 4, 64, 8, 8);
    expect(&c, POSENC_ERR_BUFFER_TOO_SMALL, "needs 2048", "output too small");
    posenc_attention_config_default(&c, 1 << 20, 1 << 20, (size_t)1 << 40, (size_t)1 << 40);
    expect(&c, POSENC_ERR_SIZE_OVERFLOW, "overflows", "size overflow");
}

int main(void) {
    test_hand_cases();
    test_paths();
    test_permutation();
    test_shift();
    test_errors();
    const char *dir = check_golden_dir();
    test_ggml_goldens(dir);
    test_rope_golden(dir);
    return check_finish();
}
