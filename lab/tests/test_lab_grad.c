/* test_lab_grad.c: every op's backward against central finite differences,
 * and every position scheme's whole-model gradient likewise.
 *
 * The ops compute in float32 (that is what trains); each check perturbs one
 * float32 input by +-h, evaluates a scalar loss L = sum(out * R) accumulated in
 * double (R fixed random), and compares (L+ - L-)/2h with the analytic
 * gradient. Error = max |fd - analytic| / max |analytic| over the checked
 * entries of that tensor. The float32 rounding of the op's outputs bounds the
 * attainable agreement at ~eps32 |L| / h: with h = 1e-2 on O(1) inputs that is
 * ~1e-5 to 1e-4 (measured: ops <= 4e-5, whole models <= 1.3e-3 with the loss
 * scaled by 1000), so ops must agree to 1e-3 and whole models to 1e-2. The tight oracle is test_lab_torch (float64
 * torch, agreement ~5e-7); this test localizes a wrong backward to one op. */
#include "lab_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;

static float frand(uint64_t *s) {
    *s = lab_splitmix64(*s);
    return (float)((double)(*s >> 11) * 0x1.0p-53 * 2.0 - 1.0);
}

static void fill(float *x, size_t n, uint64_t seed, float scale) {
    for (size_t i = 0; i < n; i++) x[i] = frand(&seed) * scale;
}

typedef double (*loss_fn)(void *ctx);

/* Compare fd and analytic gradient on up to 48 entries spread over x. */
static void fd_check(const char *what, const char *tensor, float *x, size_t n, const float *grad, loss_fn f, void *ctx,
                     float h, double tol) {
    size_t stride = n > 48 ? n / 48 : 1;
    double max_err = 0, scale = 0;
    for (size_t i = 0; i < n; i++) scale = fabs(grad[i]) > scale ? fabs(grad[i]) : scale;
    for (size_t i = 0; i < n; i += stride) {
        float keep = x[i];
        x[i] = keep + h;
        double lp = f(ctx);
        x[i] = keep - h;
        double lm = f(ctx);
        x[i] = keep;
        double fd = (lp - lm) / (2.0 * (double)h);
        double e = fabs(fd - grad[i]);
        max_err = e > max_err ? e : max_err;
    }
    double rel = scale > 0 ? max_err / scale : max_err;
    int ok = rel <= tol && isfinite(rel) && scale > 0;
    printf("%-4s %-28s %-26s max rel err %.2e (grad scale %.2e, tol %.0e)\n", ok ? "ok" : "FAIL", what, tensor, rel, scale, tol);
    ok ? passed++ : failed++;
}

static double dot_double(const float *a, const float *b, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += (double)a[i] * b[i];
    return s;
}

/* ---- matmul ---- */
typedef struct {
    float *inp, *w, *b, *out, *R;
    size_t n;
    int32_t in, od;
} mm_t;
static double mm_loss(void *c_) {
    mm_t *c = c_;
    lab_matmul_forward(NULL, c->out, c->inp, c->w, c->b, c->n, c->in, c->od);
    return dot_double(c->out, c->R, c->n * (size_t)c->od);
}
static void test_matmul(lab_pool *pool) {
    mm_t c = {.n = 37, .in = 24, .od = 70};
    size_t ni = c.n * (size_t)c.in, nw = (size_t)c.od * (size_t)c.in, no = c.n * (size_t)c.od;
    float *buf = calloc(2 * (ni + nw + (size_t)c.od) + 2 * no, sizeof(float));
    c.inp = buf;
    c.w = c.inp + ni;
    c.b = c.w + nw;
    c.out = c.b + c.od;
    c.R = c.out + no;
    float *dinp = c.R + no, *dw = dinp + ni, *db = dw + nw;
    fill(c.inp, ni, 1, 1);
    fill(c.w, nw, 2, 0.5f);
    fill(c.b, (size_t)c.od, 3, 0.5f);
    fill(c.R, no, 4, 1);
    lab_matmul_backward(pool, dinp, dw, db, c.R, c.inp, c.w, c.n, c.in, c.od);
    fd_check("matmul", "input", c.inp, ni, dinp, mm_loss, &c, 1e-2f, 1e-3);
    fd_check("matmul", "weight", c.w, nw, dw, mm_loss, &c, 1e-2f, 1e-3);
    fd_check("matmul", "bias", c.b, (size_t)c.od, db, mm_loss, &c, 1e-2f, 1e-3);
    free(buf);
}

/* ---- layernorm ---- */
typedef struct {
    float *inp, *w, *b, *out, *mean, *rstd, *R;
    size_t n;
    int32_t c;
} ln_t;
static double ln_loss(void *c_) {
    ln_t *c = c_;
    lab_layernorm_forward(NULL, c->out, c->mean, c->rstd, c->inp, c->w, c->b, c->n, c->c);
    return dot_double(c->out, c->R, c->n * (size_t)c->c);
}
static void test_layernorm(lab_pool *pool) {
    ln_t c = {.n = 9, .c = 40};
    size_t nx = c.n * (size_t)c.c;
    float *buf = calloc(5 * nx + 4 * (size_t)c.c + 2 * c.n, sizeof(float));
    c.inp = buf;
    c.out = c.inp + nx;
    c.R = c.out + nx;
    float *dinp = c.R + nx;
    c.w = dinp + nx;
    c.b = c.w + c.c;
    float *dw = c.b + c.c, *db = dw + c.c;
    c.mean = db + c.c;
    c.rstd = c.mean + c.n;
    fill(c.inp, nx, 5, 2);
    fill(c.w, (size_t)c.c, 6, 1);
    fill(c.b, (size_t)c.c, 7, 1);
    fill(c.R, nx, 8, 1);
    ln_loss(&c);
    lab_layernorm_backward(pool, dinp, dw, db, c.R, c.inp, c.w, c.mean, c.rstd, c.n, c.c);
    fd_check("layernorm", "input", c.inp, nx, dinp, ln_loss, &c, 1e-2f, 1e-3);
    fd_check("layernorm", "weight", c.w, (size_t)c.c, dw, ln_loss, &c, 1e-2f, 1e-3);
    fd_check("layernorm", "bias", c.b, (size_t)c.c, db, ln_loss, &c, 1e-2f, 1e-3);
    free(buf);
}

/* ---- gelu ---- */
typedef struct {
    float *inp, *out, *R;
    size_t n;
} gelu_t;
static double gelu_loss(void *c_) {
    gelu_t *c = c_;
    lab_gelu_forward(NULL, c->out, NULL, c->inp, c->n);
    return dot_double(c->out, c->R, c->n);
}
/* The one-loop form GELU had before it was split into passes (ops.c): the
 * passes must give its exact bits, or results stop reproducing between
 * versions of the passes. (Checked once on all 2^32 floats when the saturation
 * selects were dropped, with glibc's expf then: 0 differ; this keeps a sample,
 * the saturation boundary and the specials. Since issue 43 both sides take the
 * lab's own e^x, lab_exp_fast, checked below.) */
static float gelu_one_loop(float x, float *t_out) {
    float u = 0.7978845608028654f * (x + 0.044715f * x * x * x);
    float t = u > 15.0f ? 1.0f : u < -15.0f ? -1.0f : 1.0f - 2.0f / (lab_exp_fast(2.0f * u) + 1.0f);
    *t_out = t;
    return 0.5f * x * (1.0f + t);
}

/* The lab's e^x (ops.c exp_fast, GELU and the softmaxes) against e^x in double,
 * rounded: at most 2 ulp on a dense sweep of [-87, 88] (the Taylor series' own
 * error is < 1e-8 relative; the rest is float rounding in Horner's steps), exact
 * at 0, NaN kept, and below -87 a tiny positive value (the softmaxes need only
 * "negligible next to 1"). An error of 3 ulp or more fails. */
static void test_exp_fast(void) {
    int worst = 0;
    float worst_x = 0.0f;
    size_t n = 0;
    for (double xd = -87.0; xd <= 88.0; xd += 1.0 / 4096.0 + 1e-9, n++) {
        float x = (float)xd, got = lab_exp_fast(x), want = (float)exp((double)x);
        int32_t a, b;
        memcpy(&a, &got, 4);
        memcpy(&b, &want, 4);
        int ulp = a > b ? a - b : b - a;
        if (ulp > worst) {
            worst = ulp;
            worst_x = x;
        }
    }
    int ok = worst <= 2 && lab_exp_fast(0.0f) == 1.0f && isnan(lab_exp_fast(NAN)) && lab_exp_fast(-200.0f) >= 0.0f &&
             lab_exp_fast(-200.0f) < 1e-37f && lab_exp_fast(88.0f) == lab_exp_fast(100.0f);
    printf("%s exp_fast: worst %d ulp (x %.9g) over %zu points of [-87, 88]; e^0 = 1, NaN kept, clamps\n",
           ok ? "ok  " : "FAIL", worst, (double)worst_x, n);
    ok ? passed++ : failed++;
}

static void test_gelu_bits(lab_pool *pool) {
    size_t n = 40000; /* several ELEM_BLOCK tasks and a partial piece */
    float *x = malloc(6 * n * sizeof(float));
    float *out = x + n, *t = out + n, *out2 = t + n, *re = out2 + n, *dx = re + n;
    fill(x, n, 21, 8); /* |x| < 8 reaches the |u| > 15 saturation */
    const float special[] = {0.0f, -0.0f, 1e-30f, -1e-30f, 20.0f, -20.0f, 9.0f, -9.0f, 1e20f, -1e20f,
                             INFINITY, -INFINITY, NAN, 3.4e38f, -3.4e38f};
    for (size_t k = 0; k < 10000; k++) { /* dense around |u| = 15, where the one-loop form saturated */
        x[20000 + 2 * k] = 6.3f + 0.4f * (float)k / 10000.0f;
        x[20001 + 2 * k] = -x[20000 + 2 * k];
    }
    for (size_t i = 0; i < sizeof special / sizeof special[0]; i++) x[i * 997] = special[i];
    lab_gelu_forward(pool, out, t, x, n);
    lab_gelu_forward(pool, out2, NULL, x, n);
    lab_gelu_recompute(pool, re, x, t, n);
    size_t bad = 0, first = n;
    for (size_t i = 0; i < n; i++) {
        float tw, want = gelu_one_loop(x[i], &tw);
        int same = memcmp(&want, &out[i], 4) == 0 && memcmp(&tw, &t[i], 4) == 0 && memcmp(&want, &out2[i], 4) == 0 &&
                   memcmp(&want, &re[i], 4) == 0;
        if (!same && bad++ == 0) first = i;
    }
    printf("gelu passes vs one loop: %zu of %zu differ in any bit (forward, tanh, recompute)\n", bad, n);
    if (bad) printf("FAIL first at %zu: x %.9g out %.9g\n", first, (double)x[first], (double)out[first]);
    bad ? failed++ : passed++;
    /* backward: the stored tanh gives the one-loop derivative's bits */
    lab_gelu_backward(pool, dx, x, t, out, n);
    bad = 0;
    for (size_t i = 0; i < n; i++) {
        float tw;
        (void)gelu_one_loop(x[i], &tw);
        float sech2 = 1.0f - tw * tw;
        float grad = 0.5f * (1.0f + tw) + 0.5f * x[i] * sech2 * 0.7978845608028654f * (1.0f + 3.0f * 0.044715f * x[i] * x[i]);
        float want = grad * out[i];
        if (memcmp(&want, &dx[i], 4) != 0) bad++;
    }
    printf("gelu backward vs one loop: %zu of %zu differ\n", bad, n);
    bad ? failed++ : passed++;
    free(x);
}

static void test_gelu(lab_pool *pool) {
    gelu_t c = {.n = 300};
    float *buf = calloc(5 * c.n, sizeof(float));
    c.inp = buf;
    c.out = buf + c.n;
    c.R = c.out + c.n;
    float *d = c.R + c.n, *t = d + c.n;
    fill(c.inp, c.n, 9, 4);
    fill(c.R, c.n, 10, 1);
    lab_gelu_forward(pool, c.out, t, c.inp, c.n);
    lab_gelu_backward(pool, d, c.inp, t, c.R, c.n);
    fd_check("gelu (tanh)", "input", c.inp, c.n, d, gelu_loss, &c, 1e-2f, 1e-3);
    free(buf);
    test_exp_fast();
    test_gelu_bits(pool);
}

/* ---- softmax cross entropy ---- */
typedef struct {
    float *logits, *probs;
    int32_t *targets;
    size_t n;
    int32_t v;
} xe_t;
static double xe_loss(void *c_) {
    xe_t *c = c_;
    size_t valid;
    return lab_softmax_xent_forward(NULL, c->probs, c->logits, c->targets, c->n, c->v, &valid);
}
static void test_xent(lab_pool *pool) {
    xe_t c = {.n = 6, .v = 30};
    int32_t targets[6] = {3, 29, -1, 0, 7, 7};
    c.targets = targets;
    float *buf = calloc(3 * c.n * (size_t)c.v, sizeof(float));
    c.logits = buf;
    c.probs = buf + c.n * (size_t)c.v;
    float *d = c.probs + c.n * (size_t)c.v;
    fill(c.logits, c.n * (size_t)c.v, 11, 3);
    size_t valid;
    lab_softmax_xent_forward(pool, d, c.logits, targets, c.n, c.v, &valid);
    lab_softmax_xent_backward(pool, d, d, targets, c.n, c.v, valid, 1.0f);
    fd_check("softmax+cross-entropy", "logits", c.logits, c.n * (size_t)c.v, d, xe_loss, &c, 1e-2f, 1e-3);
    free(buf);
}

/* ---- attention (none / alibi / t5; causal and bidirectional) ---- */
typedef struct {
    lab_attention_args a;
    float *qkv, *atty, *att, *R, *t5;
} at_t;
static double at_loss(void *c_) {
    at_t *c = c_;
    lab_attention_forward(NULL, &c->a, c->atty, c->att, c->qkv);
    return dot_double(c->atty, c->R, (size_t)c->a.B * (size_t)c->a.T * (size_t)c->a.C);
}
static void test_attention(lab_pool *pool, const char *label, int bias, int causal) {
    at_t c;
    memset(&c, 0, sizeof c);
    int32_t B = 2, T = 7, C = 12, H = 3, NB = 8;
    c.a.B = B;
    c.a.T = T;
    c.a.C = C;
    c.a.H = H;
    c.a.causal = causal;
    size_t BT = (size_t)B * (size_t)T;
    int64_t pos[14];
    for (int i = 0; i < 14; i++) pos[i] = (i % T) * 2 + (i / T) * 5; /* spaced, offset positions */
    float slopes[3];
    int32_t buckets[2 * 7 * 7];
    float *buf = calloc(BT * 3 * (size_t)C * 2 + BT * (size_t)C * 2 + (size_t)B * H * T * T + (size_t)NB * H * 2 +
                            (size_t)B * H * NB + 4 * ((size_t)T * T + T),
                        sizeof(float));
    c.qkv = buf;
    float *dqkv = c.qkv + BT * 3 * C;
    c.atty = dqkv + BT * 3 * C;
    c.R = c.atty + BT * C;
    c.att = c.R + BT * C;
    c.t5 = c.att + (size_t)B * H * T * T;
    float *dt5 = c.t5 + (size_t)NB * H, *partial = dt5 + (size_t)NB * H;
    c.a.scratch = partial + (size_t)B * H * NB;
    c.a.scratch_per_thread = (size_t)T * T + T;
    c.a.pos = pos;
    if (bias == 1) {
        posenc_alibi_slopes_f32(H, 8.0, 0, 0, POSENC_MODE_PRECISE, slopes, 3, NULL);
        c.a.alibi_slopes = slopes;
    } else if (bias == 2) {
        posenc_t5_params tp = {NB, 10, causal ? 0 : 1};
        for (int b = 0; b < B; b++) {
            posenc_positions p = posenc_positions_ids(pos + b * T, (size_t)T);
            posenc_t5_bucket_matrix_i32(&tp, &p, &p, buckets + b * T * T, (size_t)T * T, NULL);
        }
        c.a.t5_table = c.t5;
        c.a.buckets = buckets;
        c.a.t5_buckets = NB;
        fill(c.t5, (size_t)NB * H, 12, 1);
    }
    fill(c.qkv, BT * 3 * C, 13, 1.5f);
    fill(c.R, BT * C, 14, 1);
    at_loss(&c);
    lab_attention_backward(pool, &c.a, dqkv, bias == 2 ? partial : NULL, NULL, c.R, c.att, c.qkv);
    char what[64];
    snprintf(what, sizeof what, "attention %s%s", label, causal ? "" : " bidir");
    float *q_only = calloc(BT * 3 * C, sizeof(float));
    fd_check(what, "qkv", c.qkv, BT * 3 * C, dqkv, at_loss, &c, 1e-2f, 1e-3);
    if (bias == 2) {
        for (int task = 0; task < B * H; task++)
            for (int k = 0; k < NB; k++) dt5[k * H + task % H] += partial[task * NB + k];
        fd_check(what, "t5 table", c.t5, (size_t)NB * H, dt5, at_loss, &c, 1e-2f, 1e-3);
    }
    free(q_only);
    free(buf);
}

/* ---- GRU ---- */
typedef struct {
    float *x, *h0, *wih, *whh, *bih, *bhh, *h, *gi, *gh, *r, *z, *n, *R;
    int32_t B, T, C;
} gru_t;
static double gru_loss(void *c_) {
    gru_t *c = c_;
    lab_gru_forward(c->h, c->gi, c->gh, c->r, c->z, c->n, c->x, c->h0, c->wih, c->whh, c->bih, c->bhh, c->B, c->T, c->C);
    double s = 0;
    for (int b = 0; b < c->B; b++)
        for (int t = 0; t < c->T; t++)
            for (int k = 0; k < c->C; k++)
                s += (double)c->h[((size_t)b * (c->T + 1) + t + 1) * c->C + k] * c->R[((size_t)b * c->T + t) * c->C + k];
    return s;
}
static void test_gru(void) {
    gru_t c = {.B = 2, .T = 5, .C = 6};
    size_t BT = 10, C = 6, C3 = 18;
    float *buf = calloc(BT * C * 3 + 2 * C * 2 + 2 * C3 * C * 2 + 2 * C3 * 2 + 2 * (BT + 2) * C + 2 * BT * C3 + 3 * BT * C,
                        sizeof(float));
    float *p = buf;
    c.x = p; p += BT * C;
    float *dx = p; p += BT * C;
    c.R = p; p += BT * C;
    c.h0 = p; p += 2 * C;
    float *dh0 = p; p += 2 * C;
    c.wih = p; p += C3 * C;
    float *dwih = p; p += C3 * C;
    c.whh = p; p += C3 * C;
    float *dwhh = p; p += C3 * C;
    c.bih = p; p += C3;
    float *dbih = p; p += C3;
    c.bhh = p; p += C3;
    float *dbhh = p; p += C3;
    c.h = p; p += (BT + 2) * C;
    c.gi = p; p += BT * C3;
    c.gh = p; p += BT * C3;
    c.r = p; p += BT * C;
    c.z = p; p += BT * C;
    c.n = p;
    fill(c.x, BT * C, 15, 1);
    fill(c.h0, 2 * C, 16, 1);
    fill(c.wih, C3 * C, 17, 0.5f);
    fill(c.whh, C3 * C, 18, 0.5f);
    fill(c.bih, C3, 19, 0.3f);
    fill(c.bhh, C3, 20, 0.3f);
    fill(c.R, BT * C, 21, 1);
    gru_loss(&c);
    lab_gru_backward(dx, dh0, dwih, dwhh, dbih, dbhh, c.R, c.h, c.gi, c.gh, c.r, c.z, c.n, c.x, c.wih, c.whh, 2, 5, 6);
    fd_check("gru", "input", c.x, BT * C, dx, gru_loss, &c, 1e-2f, 1e-3);
    fd_check("gru", "h0", c.h0, 2 * C, dh0, gru_loss, &c, 1e-2f, 1e-3);
    fd_check("gru", "weight_ih", c.wih, C3 * C, dwih, gru_loss, &c, 1e-2f, 1e-3);
    fd_check("gru", "weight_hh", c.whh, C3 * C, dwhh, gru_loss, &c, 1e-2f, 1e-3);
    fd_check("gru", "bias_ih", c.bih, C3, dbih, gru_loss, &c, 1e-2f, 1e-3);
    fd_check("gru", "bias_hh", c.bhh, C3, dbhh, gru_loss, &c, 1e-2f, 1e-3);
    free(buf);
}

/* ---- RoPE op with a scaling trained into the model (lab_rope_qk, the path
 * training takes): y = A R(p) x on q and k, identity on v; backward = the
 * library's inverse rotation times A^2. The loss sum(y * R) is accumulated in
 * double; the op is linear, so the central difference is exact up to the f32
 * rounding of y. ---- */
typedef struct {
    lab_model *m;
    float *x, *y, *R;
    size_t n;
} rope_t;
/* A one-thread model from a config text, or NULL with the failure counted. */
static lab_model *model_from_text(const char *text, const char *what) {
    lab_config cfg;
    posenc_error err = {0};
    lab_model *m = NULL;
    if (lab_config_parse_text(text, &cfg, &err) || lab_model_create(&cfg, 1, &m, &err)) {
        printf("FAIL %s: %s\n", what, err.message);
        failed++;
        return NULL;
    }
    return m;
}

static double rope_loss(void *c_) {
    rope_t *c = c_;
    memcpy(c->y, c->x, c->n * sizeof(float));
    lab_rope_qk(c->m, &c->m->acts, c->y, 0, NULL);
    return dot_double(c->y, c->R, c->n);
}
static void test_rope_op(const char *scaling) {
    char text[512];
    snprintf(text, sizeof text,
             "layers=1 d_model=16 heads=2 d_ff=32 context=12 seed=3 scheme=rope rope_original_context=4 rope_factor=3 %s", scaling);
    posenc_error err = {0};
    lab_model *m = model_from_text(text, scaling);
    if (!m) return;
    int32_t tok[2 * 12], tgt[2 * 12];
    for (int i = 0; i < 24; i++) tok[i] = tgt[i] = i;
    double loss;
    lab_forward(m, tok, tgt, NULL, 2, 12, NULL, 1, NULL, &loss, &err); /* sets the acts: positions, params, A */
    rope_t c = {.m = m, .n = (size_t)24 * 3 * 16};
    float *buf = calloc(4 * c.n, sizeof(float));
    c.x = buf;
    c.y = c.x + c.n;
    c.R = c.y + c.n;
    float *g = c.R + c.n;
    fill(c.x, c.n, 31, 1);
    fill(c.R, c.n, 32, 1);
    memcpy(g, c.R, c.n * sizeof(float));
    lab_rope_qk(m, &m->acts, g, 1, &err); /* dL/dx = (A R)^T R_loss */
    char what[96];
    snprintf(what, sizeof what, "rope op %s (A %.4f)", scaling, m->acts.rope_attention_factor);
    fd_check(what, "qkv", c.x, c.n, g, rope_loss, &c, 1e-2f, 1e-3);
    free(buf);
    lab_model_free(m);
}

/* ---- every scheme, whole model: gradient of the loss w.r.t. each tensor ---- */
typedef struct {
    lab_model *m;
    int32_t tok[2 * 12], tgt[2 * 12];
} model_t;
static double model_loss(void *c_) {
    model_t *c = c_;
    double loss = 0;
    lab_forward(c->m, c->tok, c->tgt, NULL, 2, 12, NULL, 0, NULL, &loss, NULL);
    return loss * 1000.0; /* scaled so the f32 noise sits further below h */
}
static void test_scheme(const char *scheme, const char *extra) {
    char text[512];
    snprintf(text, sizeof text, "layers=1 d_model=16 heads=2 d_ff=32 context=12 seed=3 init_sigma=0.3 learned_sigma=0.3 scheme=%s %s",
             scheme, extra);
    posenc_error err = {0};
    lab_model *m = model_from_text(text, scheme);
    if (!m) return;
    model_t c = {.m = m};
    for (int i = 0; i < 24; i++) {
        c.tok[i] = (i * 41 + 3) % 256;
        c.tgt[i] = (i * 29 + 11) % 256;
    }
    double loss;
    lab_zero_grad(m);
    lab_forward(m, c.tok, c.tgt, NULL, 2, 12, NULL, 1, NULL, &loss, &err);
    lab_backward(m, &err);
    float *g = lab_grads(m);
    for (size_t i = 0; i < lab_model_param_count(m); i++) g[i] *= 1000.0f;
    char what[96];
    snprintf(what, sizeof what, "model %s %s", scheme, extra);
    for (size_t t = 0; t < lab_tensor_count(m); t++) {
        float *p, *gr;
        const lab_tensor_info *info = lab_tensor(m, t, &p, &gr);
        if (strcmp(info->group, "pos") != 0 && strcmp(info->name, "wte") != 0 && strcmp(info->name, "blocks.attn.qkv.weight") != 0)
            continue;
        fd_check(what, info->name, p, info->count, gr, model_loss, &c, 1e-2f, 1e-2);
    }
    lab_model_free(m);
}

int main(void) {
    lab_pool *pool = lab_pool_create(2);
    test_matmul(pool);
    test_layernorm(pool);
    test_gelu(pool);
    test_xent(pool);
    test_attention(pool, "plain", 0, 1);
    test_attention(pool, "plain", 0, 0);
    test_attention(pool, "alibi", 1, 1);
    test_attention(pool, "alibi", 1, 0);
    test_attention(pool, "t5", 2, 1);
    test_attention(pool, "t5", 2, 0);
    test_gru();
    lab_pool_free(pool);
    test_rope_op("rope_scaling=linear");
    test_rope_op("rope_scaling=yarn");
    test_rope_op("rope_scaling=yarn rope_attention_factor=1.5 rope_layout=1 rope_rotary_dim=4");
    const char *schemes[][2] = {{"none", ""}, {"sinusoidal", ""}, {"sinusoidal", "token_scale_sqrt_d=1"}, {"learned", ""},
                                {"rope", "rope_layout=1"}, {"rope", "rope_layout=0 rope_rotary_dim=4"}, {"alibi", ""},
                                {"t5", "t5_buckets=8 t5_max_distance=10"}, {"concat", "pe_dim=8"},
                                {"half-concat", "tied=0"}, {"hybrid", ""}, {"freq-scale", ""}, {"gru", ""},
                                {"sparse", "sparse_keep=0.5"}, {"index", ""}, {"normalized", ""}, {"none", "tied=0"},
                                {"shaw", "shaw_clip=3"}, {"shaw", "shaw_clip=3 causal=0"},
                                /* trained RoPE scalings (fine-tune at 12 of a model from context 4, factor 3) */
                                {"rope", "rope_scaling=linear rope_factor=3 rope_original_context=4"},
                                {"rope", "rope_scaling=yarn rope_factor=3 rope_original_context=4"},
                                {"rope", "rope_scaling=ntk rope_factor=3 rope_original_context=4"},
                                {"rope", "rope_scaling=dynamic rope_factor=3 rope_original_context=4"},
                                /* llama3 at original context 64: with 4 every band of head dim 8 is "low frequency" (= linear) */
                                {"rope", "rope_scaling=llama3 rope_factor=3 rope_original_context=64"}};
    for (size_t i = 0; i < sizeof schemes / sizeof schemes[0]; i++) test_scheme(schemes[i][0], schemes[i][1]);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
