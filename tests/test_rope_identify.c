/* test_rope_identify.c: posenc_rope_identify on caches made in ggml's
 * arithmetic (POSENC_MODE_GGML, checked against ggml itself in
 * test_rope_ggml.c) and in exact arithmetic, in ggml's interleaved and
 * vLLM's cat(cos, sin) layouts: scheme, parameters, offset and arithmetic
 * must come back, ggml's theta chain must be told from HF's power (the planted
 * "ggml theta accumulation vs HF power" deviation), and bad caches are refused
 * by name. HF-made caches (torch) are tested in tests/py/test_rope_identify.py. */
#include "check.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#define T 2048
#define R 128
#define K (R / 2)

static float cbuf[T * K], sbuf[T * K], cache[T * R];

/* A cache of params at positions start.. in `layout` (GGML: (c, s) per pair; VLLM: cat). */
static posenc_array make_cache(const posenc_rope_params *p, int64_t start, posenc_rope_cache_layout layout) {
    posenc_positions pos = posenc_positions_range(start, T);
    posenc_error err = {0};
    if (posenc_rope_table_f32(p, 0, &pos, 1, cbuf, sbuf, T * K, &err) != POSENC_OK) {
        printf("FAIL: table: %s\n", err.message);
        exit(EXIT_FAILURE);
    }
    for (int t = 0; t < T; t++)
        for (int k = 0; k < K; k++) {
            if (layout == POSENC_CACHE_GGML) {
                cache[t * R + 2 * k] = cbuf[t * K + k];
                cache[t * R + 2 * k + 1] = sbuf[t * K + k];
            } else {
                cache[t * R + k] = cbuf[t * K + k];
                cache[t * R + K + k] = sbuf[t * K + k];
            }
        }
    posenc_array a = {POSENC_DTYPE_F32, 2, {T, R}, (size_t)T * R, cache};
    return a;
}

static void expect(const char *label, const posenc_rope_params *made, int64_t start, posenc_rope_cache_layout layout,
                   posenc_rope_arith arith) {
    posenc_array a = make_cache(made, start, layout);
    posenc_rope_identity id;
    posenc_error err = {0};
    posenc_status st = posenc_rope_identify(&a, NULL, POSENC_CACHE_AUTO, &id, &err);
    CHECK(st == POSENC_OK, "%s: identify: %s", label, err.message);
    if (st != POSENC_OK) return;
    const posenc_rope_params *p = &id.params;
    bool params_ok = p->scaling == made->scaling && fabs(p->base - made->base) < 1e-9 * made->base &&
                     (made->scaling == POSENC_ROPE_NONE || p->factor == made->factor) &&
                     (made->scaling != POSENC_ROPE_YARN && made->scaling != POSENC_ROPE_LLAMA3
                          ? true
                          : p->original_max_position == made->original_max_position);
    CHECK(id.layout == layout && id.rotary_dim == R && id.offset == start && params_ok,
          "%s: layout %s, R %d, offset %lld, %s base %g factor %g L0 %lld", label,
          posenc_rope_cache_layout_name(id.layout), id.rotary_dim, (long long)id.offset,
          posenc_rope_scaling_name(p->scaling), p->base, p->factor, (long long)p->original_max_position);
    CHECK(id.arith == arith && id.differ[arith] == 0 && id.grid == POSENC_DTYPE_F32,
          "%s: arithmetic %s bit for bit (exact: %zu differ, max %lld; hf-f32: %zu, max %lld; ggml-f32: %zu, max %lld)",
          label, posenc_rope_arith_name(id.arith), id.differ[0], (long long)id.max_ulp[0], id.differ[1],
          (long long)id.max_ulp[1], id.differ[2], (long long)id.max_ulp[2]);
    /* the other arithmetics are told apart: they miss values */
    for (int x = 0; x < POSENC_ROPE_ARITHS; x++)
        if (x != (int)arith)
            CHECK(id.differ[x] > 0, "%s: %s is told apart (%zu values differ)", label,
                  posenc_rope_arith_name((posenc_rope_arith)x), id.differ[x]);
    posenc_rope_identity_free(&id);
}

static posenc_rope_params params(posenc_rope_scaling s, double base, double factor, int64_t l0, posenc_mode mode) {
    posenc_rope_params p;
    posenc_rope_params_default(&p, R);
    p.scaling = s;
    p.base = base;
    p.factor = factor;
    p.original_max_position = l0;
    p.mode = mode;
    return p;
}

static void test_errors(void) {
    posenc_rope_identity id;
    posenc_error err = {0};
    float bad[3 * 4] = {1, 0, 1, 0, 0.5f, 0.8f, 0.5f, 0.8f, NAN, 0, 0, 0};
    posenc_array a = {POSENC_DTYPE_F32, 2, {3, 4}, 12, bad};
    CHECK_STATUS(posenc_rope_identify(&a, NULL, POSENC_CACHE_AUTO, &id, &err), POSENC_ERR_INVALID_ARGUMENT);
    CHECK(strstr(err.message, "[2, 0]") && strstr(err.message, "nan"), "[P20] non-finite value named: %s", err.message);
    posenc_array two = {POSENC_DTYPE_F32, 2, {2, 4}, 8, bad};
    CHECK_STATUS(posenc_rope_identify(&two, NULL, POSENC_CACHE_AUTO, &id, &err), POSENC_ERR_INVALID_ARGUMENT);
    CHECK(strstr(err.message, "2 positions") != NULL, "[P21] too few rows named: %s", err.message);
    posenc_array r3 = {POSENC_DTYPE_F32, 3, {2, 3, 2}, 12, bad};
    CHECK_STATUS(posenc_rope_identify(&r3, NULL, POSENC_CACHE_AUTO, &id, &err), POSENC_ERR_INVALID_ARGUMENT);
    CHECK(strstr(err.message, "rank 3") != NULL, "rank named: %s", err.message);
    int32_t ints[12] = {0};
    posenc_array ai = {POSENC_DTYPE_I32, 2, {3, 4}, 12, ints};
    CHECK_STATUS(posenc_rope_identify(&ai, NULL, POSENC_CACHE_AUTO, &id, &err), POSENC_ERR_INVALID_ARGUMENT);
    CHECK(strstr(err.message, "i32") != NULL, "dtype named: %s", err.message);
    posenc_rope_params p = params(POSENC_ROPE_NONE, 10000, 1, 0, POSENC_MODE_GGML);
    posenc_array c = make_cache(&p, 0, POSENC_CACHE_GGML);
    posenc_array narrow = {POSENC_DTYPE_F32, 2, {T, R / 2}, (size_t)T * R / 2, cache};
    CHECK_STATUS(posenc_rope_identify(&c, &narrow, POSENC_CACHE_AUTO, &id, &err), POSENC_ERR_INVALID_ARGUMENT);
    CHECK(strstr(err.message, "sin table is") != NULL, "sin shape named: %s", err.message);
    int64_t ulp;
    size_t differ;
    posenc_rope_params_default(&p, 64);
    CHECK_STATUS(posenc_rope_cache_residual(&c, NULL, POSENC_CACHE_GGML, 0, 0, &p, &ulp, &differ, &err),
                 POSENC_ERR_INVALID_ARGUMENT);
    CHECK(strstr(err.message, "rotary dim 128") && strstr(err.message, "give 64"), "[P22] rotary dims named: %s",
          err.message);
}

/* Fewer rows than pairs (37 x 64, positions 1000..): once overran a per-row
 * buffer with the per-pair magnitudes (found by valgrind). */
static void test_short(void) {
    enum { ROWS = 37 };
    posenc_rope_params p = params(POSENC_ROPE_YARN, 10000, 4, 4096, POSENC_MODE_TORCH_COMPAT);
    posenc_positions pos = posenc_positions_range(1000, ROWS);
    posenc_error err = {0};
    static float c[ROWS * K], s[ROWS * K];
    CHECK_STATUS(posenc_rope_table_f32(&p, 0, &pos, 1, c, s, ROWS * K, &err), POSENC_OK);
    posenc_array ca = {POSENC_DTYPE_F32, 2, {ROWS, K}, (size_t)ROWS * K, c};
    posenc_array sa = {POSENC_DTYPE_F32, 2, {ROWS, K}, (size_t)ROWS * K, s};
    posenc_rope_identity id;
    CHECK_STATUS(posenc_rope_identify(&ca, &sa, POSENC_CACHE_PLAIN, &id, &err), POSENC_OK);
    CHECK(id.offset == 1000 && id.params.scaling == POSENC_ROPE_YARN && id.params.factor == 4 &&
              id.arith == POSENC_ARITH_HF_F32 && id.differ[POSENC_ARITH_HF_F32] == 0,
          "37 rows from position 1000, plain cos + sin: offset %lld, %s factor %g, %s, %zu differ",
          (long long)id.offset, posenc_rope_scaling_name(id.params.scaling), id.params.factor,
          posenc_rope_arith_name(id.arith), id.differ[POSENC_ARITH_HF_F32]);
    posenc_rope_identity_free(&id);
    /* every column the same cos(t): no frequency falls with the pair index */
    for (int t = 0; t < ROWS; t++)
        for (int k = 0; k < K; k++) c[t * K + k] = (float)cos((double)t);
    CHECK_STATUS(posenc_rope_identify(&ca, NULL, POSENC_CACHE_AUTO, &id, &err), POSENC_ERR_INVALID_ARGUMENT);
    CHECK(strstr(err.message, "do not fall") != NULL, "[P21] equal frequencies refused: %s", err.message);
}

/* issue 40: the residual gate and the one-rotation check refuse what no RoPE explains;
 * a full-width HF cache of a partial rotary is R with the rest passed through. */
static float gate_c[512 * 128], gate_s[512 * 128];
static void test_gate(void) {
    posenc_rope_identity id;
    posenc_error err = {0};
    uint64_t x = 40;
    for (int i = 0; i < 512 * 128; i++) { /* uniform [0, 1): the RandomState(0).rand stand-in */
        x = x * 6364136223846793005u + 1442695040888963407u;
        gate_c[i] = (float)((double)(x >> 11) / 9007199254740992.0);
    }
    posenc_array rnd = {POSENC_DTYPE_F32, 2, {512, 128}, 512 * 128, gate_c};
    CHECK_STATUS(posenc_rope_identify(&rnd, NULL, POSENC_CACHE_AUTO, &id, &err), POSENC_ERR_INVALID_ARGUMENT);
    CHECK(strstr(err.message, "not a RoPE cache") != NULL, "[case 2] random refused (the Python test has the issue's own table): %s",
          err.message);
    /* HF cos (base 1e4) with an HF sin of base 5e5: no one rotation */
    posenc_rope_params a = params(POSENC_ROPE_NONE, 10000, 1, 0, POSENC_MODE_TORCH_COMPAT), b = a;
    b.base = 500000;
    posenc_positions pos = posenc_positions_range(0, 512);
    static float c1[512 * 64], s1[512 * 64], c2[512 * 64], s2[512 * 64];
    CHECK_STATUS(posenc_rope_table_f32(&a, 0, &pos, 1, c1, s1, 512 * 64, &err), POSENC_OK);
    CHECK_STATUS(posenc_rope_table_f32(&b, 0, &pos, 1, c2, s2, 512 * 64, &err), POSENC_OK);
    for (int t = 0; t < 512; t++)
        for (int k = 0; k < 128; k++) gate_c[t * 128 + k] = c1[t * 64 + k % 64], gate_s[t * 128 + k] = s2[t * 64 + k % 64];
    posenc_array ca = {POSENC_DTYPE_F32, 2, {512, 128}, 512 * 128, gate_c}, sa = ca;
    sa.data = gate_s;
    CHECK_STATUS(posenc_rope_identify(&ca, &sa, POSENC_CACHE_AUTO, &id, &err), POSENC_ERR_INVALID_ARGUMENT);
    CHECK(strstr(err.message, "no one rotation") != NULL, "[case 4] mixed bases refused: %s", err.message);
    /* the same cos with its own sin: fine; forced into the vLLM layout: refused */
    for (int t = 0; t < 512; t++)
        for (int k = 0; k < 128; k++) gate_s[t * 128 + k] = s1[t * 64 + k % 64];
    CHECK_STATUS(posenc_rope_identify(&ca, &sa, POSENC_CACHE_AUTO, &id, &err), POSENC_OK);
    CHECK(id.params.base == 10000 && id.differ[POSENC_ARITH_HF_F32] == 0, "one base: 10000 bit for bit (base %g)",
          id.params.base);
    posenc_rope_identity_free(&id);
    CHECK_STATUS(posenc_rope_identify(&ca, NULL, POSENC_CACHE_VLLM, &id, &err), POSENC_ERR_INVALID_ARGUMENT);
    CHECK(err.message[0] != 0, "[case 3] forced vllm layout refused: %s", err.message);
    /* partial rotary: 32 of 128 channels rotate */
    posenc_rope_params q = params(POSENC_ROPE_NONE, 10000, 1, 0, POSENC_MODE_TORCH_COMPAT);
    q.head_dim = 32, q.rotary_dim = 32;
    CHECK_STATUS(posenc_rope_table_f32(&q, 0, &pos, 1, c1, s1, 512 * 16, &err), POSENC_OK);
    for (int t = 0; t < 512; t++)
        for (int k = 0; k < 128; k++) {
            gate_c[t * 128 + k] = k < 32 ? c1[t * 16 + k % 16] : 1.0f;
            gate_s[t * 128 + k] = k < 32 ? s1[t * 16 + k % 16] : 0.0f;
        }
    CHECK_STATUS(posenc_rope_identify(&ca, &sa, POSENC_CACHE_AUTO, &id, &err), POSENC_OK);
    CHECK(id.rotary_dim == 32 && id.passthrough == 96 && id.params.base == 10000 &&
              id.differ[POSENC_ARITH_HF_F32] == 0,
          "[case 5] partial rotary: R %d, %d passed through, base %g", id.rotary_dim, id.passthrough, id.params.base);
    int64_t resid = -1;
    size_t differ = 1;
    CHECK_STATUS(posenc_rope_cache_residual(&ca, &sa, POSENC_CACHE_HF, 0, 0, &q, &resid, &differ, &err), POSENC_OK);
    CHECK(resid == 0 && differ == 0, "[case 5] the config's R 32 compares on the rotated channels (%s)", err.message);
    posenc_rope_identity_free(&id);
}

/* What was seen, named: a GPT-J repeat_interleave cache names its layout (it was "not a RoPE
 * cache in the plain layout"); a one-table cos read backwards or negated names the reversed rows
 * or the sign (they were "cannot be regenerated in any arithmetic"). */
static void test_seen(void) {
    posenc_rope_identity id;
    posenc_error err = {0};
    posenc_rope_params a = params(POSENC_ROPE_NONE, 10000, 1, 0, POSENC_MODE_TORCH_COMPAT);
    posenc_positions pos = posenc_positions_range(0, 512);
    static float c1[512 * 64], s1[512 * 64];
    CHECK_STATUS(posenc_rope_table_f32(&a, 0, &pos, 1, c1, s1, 512 * 64, &err), POSENC_OK);
    for (int t = 0; t < 512; t++)
        for (int k = 0; k < 128; k++) gate_c[t * 128 + k] = c1[t * 64 + k / 2], gate_s[t * 128 + k] = s1[t * 64 + k / 2];
    posenc_array ca = {POSENC_DTYPE_F32, 2, {512, 128}, 512 * 128, gate_c}, sa = ca;
    sa.data = gate_s;
    CHECK_STATUS(posenc_rope_identify(&ca, NULL, POSENC_CACHE_AUTO, &id, &err), POSENC_ERR_INVALID_ARGUMENT);
    CHECK(strstr(err.message, "GPT-J repeat_interleave") != NULL, "GPT-J cos named: %s", err.message);
    CHECK_STATUS(posenc_rope_identify(&ca, &sa, POSENC_CACHE_AUTO, &id, &err), POSENC_ERR_INVALID_ARGUMENT);
    CHECK(strstr(err.message, "GPT-J repeat_interleave") != NULL, "GPT-J cos + sin named: %s", err.message);
    posenc_array plain = {POSENC_DTYPE_F32, 2, {512, 64}, 512 * 64, gate_c};
    for (int t = 0; t < 512; t++)
        for (int k = 0; k < 64; k++) gate_c[t * 64 + k] = c1[(511 - t) * 64 + k];
    CHECK_STATUS(posenc_rope_identify(&plain, NULL, POSENC_CACHE_AUTO, &id, &err), POSENC_ERR_INVALID_ARGUMENT);
    CHECK(strstr(err.message, "rows in reverse order") != NULL, "cos rows reversed named: %s", err.message);
    for (int i = 0; i < 512 * 64; i++) gate_c[i] = -c1[i];
    CHECK_STATUS(posenc_rope_identify(&plain, NULL, POSENC_CACHE_AUTO, &id, &err), POSENC_ERR_INVALID_ARGUMENT);
    CHECK(strstr(err.message, "negated") != NULL, "negated cos named: %s", err.message);
}

/* The residual unit of a bf16 cache is bf16's step for values in [0.5, 1), 2^-8 (7 stored
 * mantissa bits: 2^-(7+1)); it was 2^-9, so one step off counted 2 "ULPs". A bf16 HF cache with
 * one value in [0.5, 1) moved to its bf16 neighbour (in both halves: one value of the cache) is
 * 1 unit off. */
static void test_bf16_unit(void) {
    posenc_error err = {0};
    posenc_rope_params a = params(POSENC_ROPE_NONE, 10000, 1, 0, POSENC_MODE_TORCH_COMPAT);
    posenc_positions pos = posenc_positions_range(0, 512);
    static float c1[512 * 64], s1[512 * 64];
    static uint16_t hc[512 * 128], hs[512 * 128];
    CHECK_STATUS(posenc_rope_table_f32(&a, 0, &pos, 1, c1, s1, 512 * 64, &err), POSENC_OK);
    for (int t = 0; t < 512; t++)
        for (int k = 0; k < 128; k++)
            hc[t * 128 + k] = posenc_f32_to_bf16(c1[t * 64 + k % 64]), hs[t * 128 + k] = posenc_f32_to_bf16(s1[t * 64 + k % 64]);
    posenc_array ca = {POSENC_DTYPE_BF16, 2, {512, 128}, 512 * 128, hc}, sa = ca;
    sa.data = hs;
    int64_t ulp = -1;
    size_t differ = 0;
    CHECK_STATUS(posenc_rope_cache_residual(&ca, &sa, POSENC_CACHE_HF, 0, 0, &a, &ulp, &differ, &err), POSENC_OK);
    CHECK(ulp == 0 && differ == 0, "bf16 HF cache: bit for bit (%lld ULP, %zu differ)", (long long)ulp, differ);
    /* row 1, pair 0: cos(1) = 0.5403 in [0.5, 1), in both halves */
    float v = posenc_bf16_to_f32(hc[128]);
    CHECK(v >= 0.5f && v < 1.0f, "cos(1) in [0.5, 1): %g", v);
    hc[128] = hc[128 + 64] = (uint16_t)(hc[128] + 1); /* the next bf16 up */
    CHECK(posenc_bf16_to_f32(hc[128]) - v == 0x1p-8f, "bf16's step at [0.5, 1) is 2^-8: %g",
          (double)(posenc_bf16_to_f32(hc[128]) - v));
    CHECK_STATUS(posenc_rope_cache_residual(&ca, &sa, POSENC_CACHE_HF, 0, 0, &a, &ulp, &differ, &err), POSENC_OK);
    CHECK(ulp == 1 && differ == 1, "one bf16 step at [0.5, 1) is 1 unit: %lld ULP, %zu differ", (long long)ulp, differ);
}

int main(void) {
    test_seen();
    test_bf16_unit();
    test_gate();
    test_short();
    posenc_rope_params p = params(POSENC_ROPE_NONE, 10000, 1, 0, POSENC_MODE_GGML);
    expect("ggml plain, base 10000", &p, 0, POSENC_CACHE_GGML, POSENC_ARITH_GGML_F32);
    p = params(POSENC_ROPE_LINEAR, 10000, 4, 0, POSENC_MODE_GGML);
    expect("ggml linear 4", &p, 0, POSENC_CACHE_GGML, POSENC_ARITH_GGML_F32);
    p = params(POSENC_ROPE_YARN, 10000, 4, 4096, POSENC_MODE_GGML);
    expect("ggml yarn 4, L0 4096", &p, 0, POSENC_CACHE_GGML, POSENC_ARITH_GGML_F32);
    p = params(POSENC_ROPE_LLAMA3, 500000, 8, 8192, POSENC_MODE_GGML);
    expect("ggml llama3 8, L0 8192, base 5e5", &p, 0, POSENC_CACHE_GGML, POSENC_ARITH_GGML_F32);
    p = params(POSENC_ROPE_NONE, 1000000, 1, 0, POSENC_MODE_GGML);
    expect("ggml plain base 1e6 from position 1", &p, 1, POSENC_CACHE_GGML, POSENC_ARITH_GGML_F32);
    p = params(POSENC_ROPE_YARN, 10000, 4, 4096, POSENC_MODE_PRECISE);
    expect("exact yarn in vLLM layout", &p, 0, POSENC_CACHE_VLLM, POSENC_ARITH_EXACT);
    p = params(POSENC_ROPE_LINEAR, 10000, 2, 0, POSENC_MODE_TORCH_COMPAT);
    expect("HF-f32 linear 2 in vLLM layout, from position 7", &p, 7, POSENC_CACHE_VLLM, POSENC_ARITH_HF_F32);
    test_errors();
    return check_finish();
}
