/* test_rope_props.c: RoPE properties (relative-position invariance up to
 * 10^6, pass-through bits, inverse, delta re-rotation, layout permutation,
 * f16/bf16, multi-axis), worked numbers from conventions.md sections 5/6, and
 * every bad-parameter case with its message. */
#include "check.h"

#include <stdbool.h>

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static float rnd(void) { /* xorshift64*, uniform in [-1, 1) */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (float)((double)((rng_state * 2685821657736338717ull) >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static posenc_rope_params params(int32_t head_dim) {
    posenc_rope_params p;
    posenc_rope_params_default(&p, head_dim);
    return p;
}

static void must(posenc_status st, const posenc_error *err, const char *what) {
    if (st != POSENC_OK) {
        printf("FAIL: %s: %s\n", what, err->message);
        exit(EXIT_FAILURE);
    }
}

static void rotate(const posenc_rope_params *p, posenc_layout layout, float *x, size_t tokens, size_t heads,
                   const int64_t *pos, int inverse) {
    posenc_rope_view v = posenc_rope_view_contiguous(tokens, heads, p->head_dim);
    posenc_error err = {0};
    must(posenc_rope_apply_f32(p, 0, layout, &v, pos, inverse, x, tokens * heads * (size_t)p->head_dim, &err), &err,
         "apply");
}

static double dot(const float *a, const float *b, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) s += (double)a[i] * b[i];
    return s;
}

/* q(m).k(n) depends on m - n only: shift both positions by s up to 10^6. */
static void test_relative(void) {
    enum { Dm = 128 };
    float q0[Dm], k0[Dm];
    for (int i = 0; i < Dm; i++) {
        q0[i] = rnd();
        k0[i] = rnd();
    }
    double norm = sqrt(dot(q0, q0, Dm) * dot(k0, k0, Dm));
    for (int layout = 0; layout < 2; layout++)
        for (int mode = 0; mode < 2; mode++) {
            posenc_rope_params p = params(Dm);
            p.mode = mode ? POSENC_MODE_TORCH_COMPAT : POSENC_MODE_PRECISE;
            const int64_t shifts[] = {0, 1, 1000, 100000, 1000000};
            double ref = 0, worst = 0, dots[5], refs[5];
            for (int d = 0; d < 5; d++) {
                int64_t m = 7 + shifts[d], n = 3 + shifts[d];
                float q[Dm], k[Dm];
                memcpy(q, q0, sizeof q);
                memcpy(k, k0, sizeof k);
                rotate(&p, (posenc_layout)layout, q, 1, 1, &m, 0);
                rotate(&p, (posenc_layout)layout, k, 1, 1, &n, 0);
                double s = dot(q, k, Dm);
                if (d == 0) ref = s;
                if (fabs(s - ref) > worst) worst = fabs(s - ref);
                dots[d] = s;
            }
            for (int d = 0; d < 5; d++) refs[d] = ref;
            /* precise: each rotated value is within ~1 f32 ULP + the f32 cos/sin rounding,
             * so the dot product moves by < 128 * 2 * 2^-24 * |q||k| ~ 1.5e-5 |q||k|.
             * torch-compat: the float32 angle is off by up to p*w*2^-24 = 0.06 rad at
             * p = 10^6: shown for contrast, must exceed the precise error. */
            if (!mode) {
                char label[120];
                snprintf(label, sizeof label, "q.k at shifts 0,1,1e3,1e5,1e6 == shift 0 (precise, %s), tol 1.5e-5*|q||k|",
                         layout ? "half" : "interleaved");
                check_near(label, dots, refs, 5, NULL, 0, 1.5e-5 * norm, 0);
            } else
                CHECK(worst > 1.5e-5 * norm,
                      "torch-compat loses it at 1e6 (%s): max change %.3g (float32 angle error, as HF)",
                      layout ? "half" : "interleaved", worst);
        }
}

/* Partial rotary: channels R..D-1 keep their exact bits (NaN payloads too) in
 * f32, f16 and bf16, and a fused-QKV row keeps its V part. */
static void test_pass_through(void) {
    enum { Tn = 5, Hn = 2, Dm = 64, R = 16 };
    posenc_rope_params p = params(Dm);
    p.rotary_dim = R;
    float x[Tn * Hn * Dm], before[Tn * Hn * Dm];
    for (int i = 0; i < Tn * Hn * Dm; i++) x[i] = rnd() * 100;
    uint32_t nan_bits = 0x7fc12345u;
    memcpy(&x[R + 3], &nan_bits, 4);
    memcpy(before, x, sizeof x);
    int64_t pos[Tn] = {0, 5, -3, 1000000, 42};
    rotate(&p, POSENC_LAYOUT_HALF, x, Tn, Hn, pos, 0);
    enum { PASS = Tn * Hn * (Dm - R), ROT = Tn * Hn * R };
    size_t pass_shape[2] = {Tn * Hn, Dm - R}, rot_shape[2] = {Tn * Hn, R}; /* [token x head][channel - R or channel] */
    float got_pass[PASS], want_pass[PASS];
    size_t changed_rot = 0;
    for (int i = 0, j = 0; i < Tn * Hn * Dm; i++) {
        if (i % Dm >= R) got_pass[j] = x[i], want_pass[j++] = before[i];
        else changed_rot += memcmp(&x[i], &before[i], 4) != 0;
    }
    check_same("f32 pass-through channels bit-identical", got_pass, want_pass, PASS, CHECK_F32, pass_shape, 2);
    CHECK(changed_rot > 0, "f32 rotated channels changed (%zu)", changed_rot);
    uint16_t h[Tn * Hn * Dm], hb[Tn * Hn * Dm];
    for (int kind = 0; kind < 2; kind++) {
        for (int i = 0; i < Tn * Hn * Dm; i++) h[i] = kind ? posenc_f32_to_bf16(before[i]) : posenc_f32_to_f16(before[i] / 100);
        h[R + 5] = kind ? 0x7fc1 : 0x7e01; /* NaN payloads */
        memcpy(hb, h, sizeof h);
        posenc_rope_view v = posenc_rope_view_contiguous(Tn, Hn, Dm);
        posenc_error err = {0};
        must(kind ? posenc_rope_apply_bf16(&p, 0, POSENC_LAYOUT_INTERLEAVED, &v, pos, 0, h, Tn * Hn * Dm, &err)
                  : posenc_rope_apply_f16(&p, 0, POSENC_LAYOUT_INTERLEAVED, &v, pos, 0, h, Tn * Hn * Dm, &err),
             &err, "apply16");
        uint16_t got16[PASS], want16[PASS];
        for (int i = 0, j = 0; i < Tn * Hn * Dm; i++)
            if (i % Dm >= R) got16[j] = h[i], want16[j++] = hb[i];
        check_same(kind ? "bf16 pass-through channels bit-identical" : "f16 pass-through channels bit-identical", got16,
                   want16, PASS, kind ? CHECK_BF16 : CHECK_F16, pass_shape, 2);
        /* rotated channels: exactly the f32 rotation of the widened input, rounded once */
        float wide[Tn * Hn * Dm];
        for (int i = 0; i < Tn * Hn * Dm; i++) wide[i] = kind ? posenc_bf16_to_f32(hb[i]) : posenc_f16_to_f32(hb[i]);
        rotate(&p, POSENC_LAYOUT_INTERLEAVED, wide, Tn, Hn, pos, 0);
        uint16_t got_rot[ROT], want_rot[ROT];
        for (int i = 0, j = 0; i < Tn * Hn * Dm; i++)
            if (i % Dm < R) got_rot[j] = h[i], want_rot[j++] = kind ? posenc_f32_to_bf16(wide[i]) : posenc_f32_to_f16(wide[i]);
        check_same(kind ? "bf16 rotated channels = f32 rotation rounded once"
                        : "f16 rotated channels = f32 rotation rounded once",
                   got_rot, want_rot, ROT, kind ? CHECK_BF16 : CHECK_F16, rot_shape, 2);
    }
    /* fused QKV row [Q: 2 heads | K: 1 head | V: 1 head], rotate K only via strides */
    enum { ROW = 4 * Dm };
    float qkv[Tn * ROW], qkv0[Tn * ROW];
    for (int i = 0; i < Tn * ROW; i++) qkv[i] = qkv0[i] = rnd();
    posenc_rope_params full = params(Dm);
    posenc_rope_view kv = {Tn, 1, ROW, Dm};
    posenc_error err = {0};
    must(posenc_rope_apply_f32(&full, 0, POSENC_LAYOUT_HALF, &kv, NULL, 0, qkv + 2 * Dm, Tn * ROW - 2 * Dm, &err), &err,
         "qkv");
    float ref[Tn * Dm], want[Tn * ROW];
    for (int t = 0; t < Tn; t++) memcpy(ref + t * Dm, qkv0 + t * ROW + 2 * Dm, Dm * 4);
    rotate(&full, POSENC_LAYOUT_HALF, ref, Tn, 1, NULL, 0);
    memcpy(want, qkv0, sizeof want); /* Q and V untouched, K = the contiguous result */
    for (int t = 0; t < Tn; t++) memcpy(want + t * ROW + 2 * Dm, ref + t * Dm, Dm * 4);
    size_t qkv_shape[2] = {Tn, ROW};
    check_same("strided K view in a fused QKV row: Q and V untouched, K = contiguous result", qkv, want, Tn * ROW,
               CHECK_F32, qkv_shape, 2);
}

static void test_inverse_and_shift(void) {
    enum { Tn = 9, Hn = 2, Dm = 64 };
    float x0[Tn * Hn * Dm];
    for (int i = 0; i < Tn * Hn * Dm; i++) x0[i] = rnd();
    int64_t pos[Tn] = {0, 1, 2, 17, 4095, 4096, 100000, -7, 65536};
    for (int scheme = 0; scheme < 2; scheme++)
        for (int mode = 0; mode < 2; mode++) {
            posenc_rope_params p = params(Dm);
            p.mode = mode ? POSENC_MODE_TORCH_COMPAT : POSENC_MODE_PRECISE;
            if (scheme) { /* attention factor 1.1386 must be undone too */
                p.scaling = POSENC_ROPE_YARN;
                p.factor = 4;
                p.original_max_position = 4096;
            }
            float x[Tn * Hn * Dm];
            memcpy(x, x0, sizeof x);
            rotate(&p, POSENC_LAYOUT_HALF, x, Tn, Hn, pos, 0);
            rotate(&p, POSENC_LAYOUT_HALF, x, Tn, Hn, pos, 1);
            /* two f32 rotations: each output has <= ~3 roundings of |x| <= 1.5: 4 * 2^-24 * 1.5 * 2 */
            char label[120];
            snprintf(label, sizeof label, "apply then inverse returns the input (%s, %s), tol 4e-7",
                     scheme ? "yarn A=1.14" : "none", mode ? "torch-compat" : "precise");
            size_t shape[3] = {Tn, Hn, Dm};
            check_near_f32(label, x, x0, Tn * Hn * Dm, shape, 3, 4e-7, 0);
        }
    /* delta re-rotation: rotate(p) then shift(d) ~ rotate(p + d) */
    posenc_rope_params p = params(Dm);
    p.scaling = POSENC_ROPE_YARN; /* the shift must not apply the factor again */
    p.factor = 4;
    p.original_max_position = 4096;
    float a[Tn * Hn * Dm], b[Tn * Hn * Dm];
    memcpy(a, x0, sizeof a);
    memcpy(b, x0, sizeof b);
    int64_t delta[Tn] = {5, -1, 1000, 3, -4000, 1, 7, 7, -65536}, sum[Tn];
    for (int t = 0; t < Tn; t++) sum[t] = pos[t] + delta[t];
    rotate(&p, POSENC_LAYOUT_INTERLEAVED, a, Tn, Hn, pos, 0);
    posenc_rope_view v = posenc_rope_view_contiguous(Tn, Hn, Dm);
    posenc_error err = {0};
    must(posenc_rope_shift_f32(&p, 0, POSENC_LAYOUT_INTERLEAVED, &v, delta, a, Tn * Hn * Dm, &err), &err, "shift");
    rotate(&p, POSENC_LAYOUT_INTERLEAVED, b, Tn, Hn, sum, 0);
    size_t shape[3] = {Tn, Hn, Dm};
    check_near_f32("rotate(p) then shift(delta) = rotate(p+delta) (yarn A=1.14), tol 6e-7 (two f32 rotations of "
                   "|x|*A <= 1.7)", a, b, Tn * Hn * Dm, shape, 3, 6e-7, 0);
}

/* llama.cpp's HF->GGUF permutation: interleaved on permuted rows == half. */
static void test_permutation(void) {
    enum { Tn = 6, Hn = 2, Dm = 64 };
    for (int rd = 32; rd <= 64; rd += 32) {
        posenc_rope_params p = params(Dm);
        p.rotary_dim = rd;
        float x[Tn * Hn * Dm], y[Tn * Hn * Dm];
        for (int i = 0; i < Tn * Hn * Dm; i++) x[i] = rnd();
        for (int th = 0; th < Tn * Hn; th++) { /* y[2k] = x[k], y[2k+1] = x[k + R/2] within the rotary slice */
            float *xs = x + th * Dm, *ys = y + th * Dm;
            for (int k = 0; k < rd / 2; k++) {
                ys[2 * k] = xs[k];
                ys[2 * k + 1] = xs[k + rd / 2];
            }
            for (int c = rd; c < Dm; c++) ys[c] = xs[c];
        }
        int64_t pos[Tn] = {0, 1, 9, 300, 5000, 123456};
        rotate(&p, POSENC_LAYOUT_HALF, x, Tn, Hn, pos, 0);
        rotate(&p, POSENC_LAYOUT_INTERLEAVED, y, Tn, Hn, pos, 0);
        float y_back[Tn * Hn * Dm]; /* y permuted back to the half layout */
        memcpy(y_back, y, sizeof y_back);
        for (int th = 0; th < Tn * Hn; th++)
            for (int k = 0; k < rd / 2; k++) {
                y_back[th * Dm + k] = y[th * Dm + 2 * k];
                y_back[th * Dm + k + rd / 2] = y[th * Dm + 2 * k + 1];
            }
        char label[96];
        snprintf(label, sizeof label, "interleaved on row-permuted q == half split (rotary %d)", rd);
        size_t shape[3] = {Tn, Hn, Dm};
        check_same(label, y_back, x, Tn * Hn * Dm, CHECK_F32, shape, 3);
    }
}

/* conventions.md section 5.5 / 6.3 worked example: d=8, base 1e4, p=1, x=[1..8]. */
static void test_worked_examples(void) {
    const double half[8] = {-3.667052618, 1.391007831, 2.929851168, 3.991998001, 3.542982514, 6.169691825, 7.029649503, 8.003995999};
    const double inter[8] = {-1.142639664, 1.922075597, 2.585678829, 4.279516911, 4.939751002, 6.049699169, 6.991996501, 8.006995999};
    const double part_half[8] = {-1.984110649, 1.959900667, 2.462377902, 4.019799668, 5, 6, 7, 8};
    const double part_inter[8] = {-1.142639664, 1.922075597, 2.959850668, 4.029799502, 5, 6, 7, 8};
    const double *want[4] = {half, inter, part_half, part_inter};
    const char *names[4] = {"half", "interleaved", "half rotary 4", "interleaved rotary 4"};
    for (int c = 0; c < 4; c++) {
        posenc_rope_params p = params(8);
        if (c >= 2) p.rotary_dim = 4;
        float x[8];
        double got[8];
        for (int i = 0; i < 8; i++) x[i] = (float)(i + 1);
        int64_t one = 1;
        rotate(&p, c % 2 ? POSENC_LAYOUT_INTERLEAVED : POSENC_LAYOUT_HALF, x, 1, 1, &one, 0);
        for (int i = 0; i < 8; i++) got[i] = x[i];
        char label[100];
        snprintf(label, sizeof label, "conventions 5.5/6.3 d=8 p=1 %s", names[c]);
        check_close(label, got, want[c], 8, 8, 5e-9, 5e-7); /* f32 result vs 10 printed digits */
    }
    /* 5.6 yarn dim 128 factor 4 L0 4096 */
    posenc_rope_params p = params(128);
    p.scaling = POSENC_ROPE_YARN;
    p.factor = 4;
    p.original_max_position = 4096;
    double inv[64], att;
    posenc_error err = {0};
    must(posenc_rope_frequencies(&p, 0, inv, 64, &att, &err), &err, "yarn");
    const int ks[] = {0, 20, 21, 33, 45, 46, 63};
    const double yv[] = {1.0, 5.623413252e-02, 4.729203850e-02, 5.412277021e-03, 4.294025890e-04, 3.333803580e-04, 2.886954962e-05};
    double got[7];
    for (int i = 0; i < 7; i++) got[i] = inv[ks[i]];
    check_close("conventions 5.6 yarn d128 f4 L0 4096 inv_k (k=0,20,21,33,45,46,63)", got, yv, 7, 7, 0, 5e-9);
    CHECK(fabs(att - 1.138629436) < 1e-9, "yarn attention factor %.10f (want 1.138629436)", att);
    p.truncate = 0;
    must(posenc_rope_frequencies(&p, 0, inv, 64, &att, &err), &err, "yarn");
    double nt[2] = {inv[21], inv[45]}, ntw[2] = {4.861255519e-02, 3.862708049e-04};
    check_close("conventions 5.6 yarn truncate=False inv_21, inv_45", nt, ntw, 2, 2, 0, 5e-9);
    /* llama3 dim 128 theta 5e5 factor 8 */
    p = params(128);
    p.base = 500000;
    p.scaling = POSENC_ROPE_LLAMA3;
    p.factor = 8;
    p.original_max_position = 8192;
    must(posenc_rope_frequencies(&p, 0, inv, 64, &att, &err), &err, "llama3");
    double l3[5] = {inv[28], inv[29], inv[34], inv[35], inv[63]};
    const double l3w[5] = {3.211445995e-03, 2.166570764e-03, 1.785078128e-04, 9.556212354e-05, 3.068925989e-07};
    check_close("conventions 5.6 llama3 d128 f8 (k=28,29,34,35,63)", l3, l3w, 5, 5, 0, 5e-9);
    /* dynamic dim 8 factor 2 max 2048, L=4096 */
    p = params(8);
    p.scaling = POSENC_ROPE_DYNAMIC;
    p.factor = 2;
    p.max_position = 2048;
    must(posenc_rope_frequencies(&p, 4096, inv, 4, &att, &err), &err, "dynamic");
    const double dw[4] = {1, 0.0693361274, 0.00480749857, 0.000333333333};
    check_close("conventions 5.6 dynamic d8 f2 max 2048 seq 4096", inv, dw, 4, 4, 0, 5e-9);
    must(posenc_rope_frequencies(&p, 1000, inv, 4, &att, &err), &err, "dynamic");
    const double dd[4] = {1, 0.1, 0.01, 0.001};
    check_close("dynamic at seq_len <= max_position is the plain RoPE", inv, dd, 4, 4, 0, 1e-15);
    /* longrope dim 8 */
    const double sf[4] = {1, 1.1, 1.2, 1.3}, lf[4] = {1, 2, 3, 4};
    p = params(8);
    p.scaling = POSENC_ROPE_LONGROPE;
    p.factor = 32;
    p.original_max_position = 4096;
    p.short_factors = sf;
    p.long_factors = lf;
    p.factors_count = 4;
    must(posenc_rope_frequencies(&p, 0, inv, 4, &att, &err), &err, "longrope");
    const double sw[4] = {1, 0.0909090909, 0.00833333333, 0.000769230769};
    check_close("conventions 5.6 longrope short (seq_len unknown)", inv, sw, 4, 4, 0, 5e-9);
    CHECK(fabs(att - 1.19023807) < 1e-8, "longrope attention %.9f (want 1.19023807)", att);
    must(posenc_rope_frequencies(&p, 4097, inv, 4, &att, &err), &err, "longrope");
    const double lw[4] = {1, 0.05, 0.00333333333, 0.00025};
    check_close("conventions 5.6 longrope long (seq_len 4097 > 4096)", inv, lw, 4, 4, 0, 5e-9);
    p.longrope_select = POSENC_LONGROPE_SHORT;
    must(posenc_rope_frequencies(&p, 100000, inv, 4, &att, &err), &err, "longrope");
    check_close("longrope pinned short ignores seq_len", inv, sw, 4, 4, 0, 5e-9);
    /* ntk static: base' = base * f^(d/(d-2)) */
    p = params(8);
    p.scaling = POSENC_ROPE_NTK;
    p.factor = 2;
    must(posenc_rope_frequencies(&p, 0, inv, 4, &att, &err), &err, "ntk");
    const double nw[4] = {1, 0.0793700526, 0.00629960525, 0.0005};
    check_close("conventions 4.2 HF-style NTK base*s^(R/(R-2)) d8 s2", inv, nw, 4, 4, 0, 5e-9);
}

static void test_multi_axis(void) {
    enum { Tn = 5, Hn = 2, Dm = 128 };
    float x0[Tn * Hn * Dm];
    for (int i = 0; i < Tn * Hn * Dm; i++) x0[i] = rnd();
    int64_t pos1[Tn] = {0, 3, 77, 1000, 50000}, pos3[3 * Tn];
    for (int a = 0; a < 3; a++)
        for (int t = 0; t < Tn; t++) pos3[a * Tn + t] = pos1[t];
    posenc_mrope_sections secs[2] = {{POSENC_MROPE_SECTIONS, 3, {16, 24, 24, 0}},
                                     {POSENC_MROPE_INTERLEAVED, 3, {24, 20, 20, 0}}};
    for (int s = 0; s < 2; s++)
        for (int layout = 0; layout < 2; layout++) {
            posenc_rope_params p = params(Dm);
            float a[Tn * Hn * Dm], b[Tn * Hn * Dm];
            memcpy(a, x0, sizeof a);
            memcpy(b, x0, sizeof b);
            posenc_rope_view v = posenc_rope_view_contiguous(Tn, Hn, Dm);
            posenc_error err = {0};
            must(posenc_mrope_apply_f32(&p, &secs[s], (posenc_layout)layout, &v, pos3, 0, a, sizeof a / 4, &err), &err, "mrope");
            rotate(&p, (posenc_layout)layout, b, Tn, Hn, pos1, 0);
            char label[96];
            snprintf(label, sizeof label, "%s M-RoPE with t=h=w equals 1-D RoPE (%s)",
                     s ? "interleaved (Qwen3-VL)" : "sectioned (Qwen2-VL)", layout ? "half" : "interleaved");
            size_t shape[3] = {Tn, Hn, Dm};
            check_same(label, a, b, Tn * Hn * Dm, CHECK_F32, shape, 3);
        }
    /* distinct axes: inverse undoes apply; axial 2-D matches a direct evaluation */
    int64_t thw3[3 * Tn] = {0, 1, 2, 3, 4, 7, 7, 9, 0, 100, 5, 6, 1000, 2, 3};
    for (int s = 0; s < 2; s++) {
        posenc_rope_params p = params(Dm);
        float a[Tn * Hn * Dm];
        memcpy(a, x0, sizeof a);
        posenc_rope_view v = posenc_rope_view_contiguous(Tn, Hn, Dm);
        posenc_error err = {0};
        must(posenc_mrope_apply_f32(&p, &secs[s], POSENC_LAYOUT_HALF, &v, thw3, 0, a, sizeof a / 4, &err), &err, "mrope");
        must(posenc_mrope_apply_f32(&p, &secs[s], POSENC_LAYOUT_HALF, &v, thw3, 1, a, sizeof a / 4, &err), &err, "mrope inv");
        size_t shape[3] = {Tn, Hn, Dm};
        check_near_f32(s ? "interleaved M-RoPE apply then inverse (distinct t,h,w), tol 4e-7"
                         : "sectioned M-RoPE apply then inverse (distinct t,h,w), tol 4e-7",
                       a, x0, Tn * Hn * Dm, shape, 3, 4e-7, 0);
    }
    {
        posenc_rope_params p = params(16);
        posenc_mrope_sections ax = {POSENC_MROPE_AXIAL, 2, {4, 4, 0, 0}};
        float a[16], x16[16];
        for (int i = 0; i < 16; i++) a[i] = x16[i] = rnd();
        int64_t hw[2] = {3, 11}; /* one token: h = 3, w = 11 */
        posenc_rope_view v = posenc_rope_view_contiguous(1, 1, 16);
        posenc_error err = {0};
        must(posenc_mrope_apply_f32(&p, &ax, POSENC_LAYOUT_HALF, &v, hw, 0, a, 16, &err), &err, "axial");
        double got[16], direct[16];
        for (int k = 0; k < 8; k++) { /* pair (k, k+8): h for k < 4, w after; w_j = 1e4^(-2j/8) */
            double angle = (double)hw[k / 4] * pow(1e4, -2.0 * (k % 4) / 8);
            direct[k] = x16[k] * cos(angle) - x16[k + 8] * sin(angle);
            direct[k + 8] = x16[k + 8] * cos(angle) + x16[k] * sin(angle);
            got[k] = a[k], got[k + 8] = a[k + 8];
        }
        check_near("axial 2-D (Qwen2-VL vision, head 16) = direct formula, tol 3e-7 (f32 rotation)", got, direct, 16,
                   NULL, 0, 3e-7, 0);
    }
    /* conventions 10.3 example: head 16, sections [2,3,3], (t,h,w) = (5,2,3) */
    posenc_rope_params p = params(16);
    posenc_mrope_sections sec = {POSENC_MROPE_SECTIONS, 3, {2, 3, 3, 0}};
    int32_t axis[8];
    double inv[8];
    posenc_error err = {0};
    must(posenc_mrope_pair_map(&p, &sec, axis, inv, 8, &err), &err, "pair map");
    const int64_t thw[3] = {5, 2, 3};
    double angle[8];
    for (int k = 0; k < 8; k++) angle[k] = (double)thw[axis[k]] * inv[k];
    const double want[8] = {5, 1.58113883, 0.2, 0.0632455532, 0.02, 0.00948683298, 0.003, 0.000948683298};
    check_close("conventions 10.3 M-RoPE angles head 16 [2,3,3] (5,2,3)", angle, want, 8, 8, 0, 5e-9);
    /* Qwen3-VL [24,20,20]: (THW)x20 then TTTT */
    p = params(128);
    posenc_mrope_sections q3 = {POSENC_MROPE_INTERLEAVED, 3, {24, 20, 20, 0}};
    int32_t ax[64];
    double inv64[64];
    must(posenc_mrope_pair_map(&p, &q3, ax, inv64, 64, &err), &err, "pair map");
    size_t bad = 0;
    for (int k = 0; k < 64; k++) bad += ax[k] != (k < 60 ? k % 3 : 0);
    CHECK(bad == 0, "Qwen3-VL [24,20,20] axis pattern (THW)x20 then TTTT (%zu wrong)", bad);
    /* axial 2-D (Qwen2-VL vision, head 16): pair j < 4 uses h with w = 1e4^(-2j/8), j >= 4 uses w */
    p = params(16);
    posenc_mrope_sections ax2 = {POSENC_MROPE_AXIAL, 2, {4, 4, 0, 0}};
    must(posenc_mrope_pair_map(&p, &ax2, axis, inv, 8, &err), &err, "axial");
    bad = 0;
    for (int k = 0; k < 8; k++) bad += axis[k] != k / 4 || fabs(inv[k] - pow(1e4, -2.0 * (k % 4) / 8)) > 1e-16;
    CHECK(bad == 0, "axial 2-D: frequencies restart per section, base^(-2j/(2 s_a)) (%zu wrong)", bad);
    /* position ids: text 3, image 2x3x4 (t,h,w), text 2 */
    posenc_mrope_segment segs[3] = {{0, 3, 0, 0, 0}, {1, 0, 2, 3, 4}, {0, 2, 0, 0, 0}};
    size_t total = 0;
    must(posenc_mrope_position_ids(segs, 3, NULL, 0, &total, &err), &err, "size query");
    int64_t ids[3 * 29];
    must(posenc_mrope_position_ids(segs, 3, ids, sizeof ids / 8, &total, &err), &err, "ids");
    CHECK(total == 29 && ids[0] == 0 && ids[2] == 2 && ids[3] == 3 && ids[29 + 3] == 3 && ids[58 + 3] == 3 &&
              ids[3 + 23] == 4 && ids[29 + 3 + 23] == 5 && ids[58 + 3 + 23] == 6 && ids[27] == 7 && ids[29 + 28] == 8,
          "Qwen2-VL position ids: text 0..2, grid from 3 (last t,h,w = 4,5,6), text resumes at 7 (total %zu)", total);
}

/* Issue 14.1: every apply entry point runs the same checks. torch-compat with
 * linear factor 1e-35 makes w_0 = 1e35, so the float32 angle p*w overflows from
 * position ~3400: with 20,000 tokens each entry point must refuse (the exec
 * entry point once returned success with 33,194 NaNs) and leave x untouched;
 * with 3,000 tokens each must succeed with the same bits as posenc_rope_apply_f32. */
static size_t count_changed(const void *a, const void *b, size_t bytes) {
    size_t n = 0;
    for (size_t i = 0; i < bytes; i++) n += ((const unsigned char *)a)[i] != ((const unsigned char *)b)[i];
    return n;
}

static void test_torch_angle_every_entry(void) {
    enum { D = 8, H = 1, T = 20000 };
    posenc_rope_params p = params(D);
    p.mode = POSENC_MODE_TORCH_COMPAT;
    p.scaling = POSENC_ROPE_LINEAR;
    p.factor = 1e-35;
    size_t n = (size_t)T * H * D;
    float *x0 = malloc(n * sizeof *x0), *x = malloc(n * sizeof *x), *ref = malloc(n * sizeof *ref);
    uint16_t *h0 = malloc(n * 2), *h = malloc(n * 2);
    int64_t *ids = malloc(sizeof *ids * T * 3);
    for (size_t i = 0; i < n; i++) {
        x0[i] = rnd();
        h0[i] = posenc_f32_to_bf16(x0[i]);
    }
    posenc_mrope_sections sec = {POSENC_MROPE_SECTIONS, 3, {2, 1, 1, 0}};
    const posenc_dtype dtypes[3] = {POSENC_DTYPE_F32, POSENC_DTYPE_F16, POSENC_DTYPE_BF16};
    const size_t token_counts[2] = {T, 3000};
    for (int ok_case = 0; ok_case < 2; ok_case++) {
        posenc_rope_view v = posenc_rope_view_contiguous(token_counts[ok_case], H, D);
        for (size_t t = 0; t < 3 * v.tokens; t++) ids[t] = (int64_t)(t % v.tokens); /* [3 axes][tokens] */
        posenc_status want = ok_case ? POSENC_OK : POSENC_ERR_INVALID_ARGUMENT;
        posenc_error err = {0};
        memcpy(ref, x0, n * sizeof *x);
        posenc_status st = posenc_rope_apply_f32(&p, 0, POSENC_LAYOUT_HALF, &v, NULL, 0, ref, n, &err);
        CHECK(st == want && (ok_case || strstr(err.message, "overflows float32")),
              "%zu tokens: posenc_rope_apply_f32 -> %s [%s]", v.tokens, posenc_strerror(st), err.message);
        for (int e = 0; e < 9; e++) { /* apply_f16, _bf16, _shift, _exec x 3 dtypes, explicit ids, mrope, exec avx path */
            bool wide = e == 2 || e == 3 || e == 6 || e == 7 || e == 8;
            memcpy(x, x0, n * sizeof *x);
            memcpy(h, h0, n * 2);
            const char *name = "?";
            posenc_exec ex;
            posenc_exec_default(&ex);
            ex.threads = 2;
            switch (e) {
            case 0: name = "posenc_rope_apply_f16"; st = posenc_rope_apply_f16(&p, 0, POSENC_LAYOUT_HALF, &v, NULL, 0, h, n, &err); break;
            case 1: name = "posenc_rope_apply_bf16"; st = posenc_rope_apply_bf16(&p, 0, POSENC_LAYOUT_HALF, &v, NULL, 0, h, n, &err); break;
            case 2: name = "posenc_rope_shift_f32"; st = posenc_rope_shift_f32(&p, 0, POSENC_LAYOUT_HALF, &v, ids, x, n, &err); break;
            case 3: name = "posenc_rope_apply_exec f32"; st = posenc_rope_apply_exec(&p, 0, POSENC_LAYOUT_HALF, &v, NULL, 0, dtypes[0], x, n, &ex, &err); break;
            case 4: name = "posenc_rope_apply_exec f16"; st = posenc_rope_apply_exec(&p, 0, POSENC_LAYOUT_HALF, &v, NULL, 0, dtypes[1], h, n, &ex, &err); break;
            case 5: name = "posenc_rope_apply_exec bf16"; st = posenc_rope_apply_exec(&p, 0, POSENC_LAYOUT_HALF, &v, NULL, 0, dtypes[2], h, n, &ex, &err); break;
            case 6: name = "posenc_rope_apply_exec f32 ids"; st = posenc_rope_apply_exec(&p, 0, POSENC_LAYOUT_HALF, &v, ids, 0, dtypes[0], x, n, NULL, &err); break;
            case 7: name = "posenc_mrope_apply_f32"; st = posenc_mrope_apply_f32(&p, &sec, POSENC_LAYOUT_HALF, &v, ids, 0, x, n, &err); break;
            default: name = "posenc_rope_apply_exec f32 scalar x1"; ex.path = POSENC_PATH_SCALAR; ex.threads = 1;
                st = posenc_rope_apply_exec(&p, 0, POSENC_LAYOUT_HALF, &v, NULL, 0, dtypes[0], x, n, &ex, &err); break;
            }
            size_t changed = wide ? count_changed(x, x0, n * sizeof *x) : count_changed(h, h0, n * 2);
            bool good = st == want && (ok_case ? changed > 0 : strstr(err.message, "overflows float32") && changed == 0);
            /* the accepted case: same bits as the plain f32 apply where the computation is the same */
            if (ok_case && (e == 3 || e == 6 || e == 8)) good = good && count_changed(x, ref, n * sizeof *x) == 0;
            CHECK(good, "%zu tokens: %s -> %s, %zu bytes changed [%s]", v.tokens, name, posenc_strerror(st), changed,
                  st == POSENC_OK ? "ok" : err.message);
        }
        /* tables over the same positions */
        posenc_positions pos = {token_counts[ok_case], 0, NULL, NULL};
        float *c = malloc(sizeof *c * token_counts[ok_case] * D / 2), *s = malloc(sizeof *s * token_counts[ok_case] * D / 2);
        st = posenc_rope_table_f32(&p, 0, &pos, 1, c, s, token_counts[ok_case] * D / 2, &err);
        CHECK(st == want, "%zu tokens: posenc_rope_table_f32 -> %s [%s]", v.tokens, posenc_strerror(st),
              st == POSENC_OK ? "ok" : err.message);
        free(c);
        free(s);
    }
    free(x0);
    free(x);
    free(ref);
    free(h0);
    free(h);
    free(ids);
}

#define EXPECT_ERROR(st, want_status, needle)                                                                   \
    do {                                                                                                        \
        posenc_status s_ = (st);                                                                                \
        CHECK(s_ == (want_status) && strstr(err.message, needle) != NULL, "rejects: %s [%s]", err.message, \
              posenc_strerror(s_));                                                                             \
    } while (0)

static void test_errors(void) {
    posenc_error err = {0};
    double inv[64];
    posenc_rope_params p = params(64);
    p.rotary_dim = 33;
    EXPECT_ERROR(posenc_rope_frequencies(&p, 0, inv, 64, NULL, &err), POSENC_ERR_INVALID_ARGUMENT, "got 33");
    p.rotary_dim = 66;
    EXPECT_ERROR(posenc_rope_frequencies(&p, 0, inv, 64, NULL, &err), POSENC_ERR_INVALID_ARGUMENT, "got 66");
    p = params(64);
    p.partial_rotary_factor = 0.25 + 1.0 / 64; /* int(64 * 0.265625) = 17: odd */
    EXPECT_ERROR(posenc_rope_frequencies(&p, 0, inv, 64, NULL, &err), POSENC_ERR_INVALID_ARGUMENT, "got 17");
    const double bad_factors[] = {0.0, -1.0, NAN, INFINITY};
    for (int i = 0; i < 4; i++) {
        p = params(64);
        p.scaling = POSENC_ROPE_LINEAR;
        p.factor = bad_factors[i];
        EXPECT_ERROR(posenc_rope_frequencies(&p, 0, inv, 64, NULL, &err), POSENC_ERR_INVALID_ARGUMENT, "factor");
    }
    p = params(64);
    p.scaling = POSENC_ROPE_YARN;
    p.factor = 0.5;
    p.original_max_position = 4096;
    EXPECT_ERROR(posenc_rope_frequencies(&p, 0, inv, 64, NULL, &err), POSENC_ERR_INVALID_ARGUMENT, "got 0.5");
    p.factor = 4;
    p.beta_fast = 1;
    p.beta_slow = 32;
    EXPECT_ERROR(posenc_rope_frequencies(&p, 0, inv, 64, NULL, &err), POSENC_ERR_INVALID_ARGUMENT, "beta_fast=1");
    p = params(64);
    p.scaling = POSENC_ROPE_YARN;
    p.factor = 4;
    EXPECT_ERROR(posenc_rope_frequencies(&p, 0, inv, 64, NULL, &err), POSENC_ERR_INVALID_ARGUMENT, "original_max_position");
    p.scaling = POSENC_ROPE_LLAMA3;
    EXPECT_ERROR(posenc_rope_frequencies(&p, 0, inv, 64, NULL, &err), POSENC_ERR_INVALID_ARGUMENT, "original_max_position");
    p.scaling = POSENC_ROPE_DYNAMIC;
    EXPECT_ERROR(posenc_rope_frequencies(&p, 0, inv, 64, NULL, &err), POSENC_ERR_INVALID_ARGUMENT, "max_position");
    double f31[31];
    for (int i = 0; i < 31; i++) f31[i] = 1;
    p = params(64);
    p.scaling = POSENC_ROPE_LONGROPE;
    p.original_max_position = 4096;
    p.short_factors = p.long_factors = f31;
    p.factors_count = 31;
    EXPECT_ERROR(posenc_rope_frequencies(&p, 0, inv, 64, NULL, &err), POSENC_ERR_INVALID_ARGUMENT, "got 31");
    p = params(64);
    p.base = NAN;
    EXPECT_ERROR(posenc_rope_frequencies(&p, 0, inv, 64, NULL, &err), POSENC_ERR_INVALID_ARGUMENT, "base");
    p = params(64);
    EXPECT_ERROR(posenc_rope_frequencies(&p, 0, inv, 31, NULL, &err), POSENC_ERR_BUFFER_TOO_SMALL, "32");
    posenc_rope_scaling sc;
    EXPECT_ERROR(posenc_rope_scaling_parse("ntk-by-parts", &sc, &err), POSENC_ERR_INVALID_ARGUMENT, "ntk-by-parts");
    p.scaling = POSENC_ROPE_LLAMA3;
    p.factor = 8;
    p.original_max_position = 8192;
    p.low_freq_factor = 4;
    p.high_freq_factor = 1;
    EXPECT_ERROR(posenc_rope_frequencies(&p, 0, inv, 64, NULL, &err), POSENC_ERR_INVALID_ARGUMENT, "high_freq_factor");
    /* views */
    p = params(64);
    float x[4 * 64];
    posenc_rope_view v = {2, 2, 64, 32};
    EXPECT_ERROR(posenc_rope_apply_f32(&p, 0, POSENC_LAYOUT_HALF, &v, NULL, 0, x, 256, &err), POSENC_ERR_INVALID_ARGUMENT,
                 "head_stride");
    v = (posenc_rope_view){2, 2, 100, 64};
    EXPECT_ERROR(posenc_rope_apply_f32(&p, 0, POSENC_LAYOUT_HALF, &v, NULL, 0, x, 256, &err), POSENC_ERR_INVALID_ARGUMENT,
                 "row_stride");
    v = posenc_rope_view_contiguous(3, 2, 64);
    EXPECT_ERROR(posenc_rope_apply_f32(&p, 0, POSENC_LAYOUT_HALF, &v, NULL, 0, x, 256, &err), POSENC_ERR_BUFFER_TOO_SMALL,
                 "384");
    v = (posenc_rope_view){SIZE_MAX / 2, 1, 64, 64};
    posenc_status st = posenc_rope_apply_f32(&p, 0, POSENC_LAYOUT_HALF, &v, NULL, 0, x, 256, &err);
    CHECK(st == POSENC_ERR_SIZE_OVERFLOW || st == POSENC_ERR_BUFFER_TOO_SMALL, "huge view refused: %s", err.message);
    EXPECT_ERROR(posenc_rope_apply_f32(NULL, 0, POSENC_LAYOUT_HALF, &v, NULL, 0, x, 256, &err), POSENC_ERR_NULL_POINTER,
                 "params");
    posenc_mrope_sections sec = {POSENC_MROPE_SECTIONS, 3, {16, 8, 7, 0}};
    int32_t axis[32];
    EXPECT_ERROR(posenc_mrope_pair_map(&p, &sec, axis, inv, 32, &err), POSENC_ERR_INVALID_ARGUMENT, "got 31");
}

int main(void) {
    test_relative();
    test_pass_through();
    test_inverse_and_shift();
    test_permutation();
    test_worked_examples();
    test_multi_axis();
    test_errors();
    test_torch_angle_every_entry();
    return check_finish();
}
