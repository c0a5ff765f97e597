/* test_analysis.c: the analysis family through the library API: dtype
 * rounding facts of conventions.md section 12, the precision audit against a
 * brute-force recomputation, the safetensors parser on in-memory images
 * (valid and hostile), model fits of generated tables, and argument errors. */
#include "check.h"

#include <stdint.h>

/* Reference bf16/f16 rounding through the float32 bit conversions (an
 * independent path from posenc_round_to_dtype's scaling arithmetic). */
static double ref_round(double v, posenc_dtype dt) {
    if (dt == POSENC_DTYPE_BF16) return posenc_round_to_bf16((float)v);
    if (dt == POSENC_DTYPE_F16) return posenc_round_to_f16((float)v);
    return (float)v;
}

static void test_rounding_facts(void) {
    struct { double in, want; posenc_dtype dt; } facts[] = {
        {257, 256, POSENC_DTYPE_BF16},   {301, 300, POSENC_DTYPE_BF16},   {4097, 4096, POSENC_DTYPE_BF16},
        {15962, 15936, POSENC_DTYPE_BF16}, {65519, 65536, POSENC_DTYPE_BF16}, {256, 256, POSENC_DTYPE_BF16},
        {2049, 2048, POSENC_DTYPE_F16},  {4097, 4096, POSENC_DTYPE_F16},  {15962, 15960, POSENC_DTYPE_F16},
        {65504, 65504, POSENC_DTYPE_F16}, {65519, 65504, POSENC_DTYPE_F16}, {65520, INFINITY, POSENC_DTYPE_F16},
        {16777217, 16777216, POSENC_DTYPE_F32}};
    for (size_t i = 0; i < sizeof facts / sizeof facts[0]; i++) {
        double got = posenc_round_to_dtype(facts[i].in, facts[i].dt);
        CHECK(got == facts[i].want, "%s(%.0f) = %.17g (conventions.md 12.2: %.17g)", posenc_dtype_name(facts[i].dt),
              facts[i].in, got, facts[i].want);
    }
    /* cos through bf16 positions: 4097 -> 4096 (section 12.2: 0.9348 vs 0.8040) */
    double c_exact = cos(4097.0), c_bf16 = cos(posenc_round_to_dtype(4097, POSENC_DTYPE_BF16));
    CHECK(fabs(c_exact - 0.9348) < 5e-5 && fabs(c_bf16 - 0.8040) < 5e-5, "cos(4097) %.4f exact, %.4f via bf16", c_exact, c_bf16);
    /* every integer and a sweep of reals: the two rounding paths agree (inputs
     * exact in float32, so the reference has no double rounding) */
    int64_t bad = 0;
    for (int d = 0; d < 2; d++) {
        posenc_dtype dt = d ? POSENC_DTYPE_F16 : POSENC_DTYPE_BF16;
        for (int64_t p = 0; p <= 70000; p++) bad += posenc_round_to_dtype((double)p, dt) != ref_round((double)p, dt);
        for (int i = -2000; i < 2000; i++) {
            float v = (float)ldexp(1.0 + i / 4096.0, i / 100);
            bad += posenc_round_to_dtype(v, dt) != ref_round(v, dt);
        }
    }
    CHECK(bad == 0, "posenc_round_to_dtype == float32 bit conversions on 0..70000 and 4000 reals (bf16, f16): %lld differ",
          (long long)bad);
}

static void test_precision_bruteforce(void) {
    posenc_sinusoid_params p;
    posenc_sinusoid_params_default(&p, 8);
    p.base = 500000;
    posenc_dtype dts[] = {POSENC_DTYPE_BF16, POSENC_DTYPE_F16, POSENC_DTYPE_F32};
    for (int d = 0; d < 3; d++) {
        posenc_precision_report r;
        posenc_error err = {0};
        int64_t n = 3000;
        CHECK_STATUS(posenc_precision_audit(&p, dts[d], n, &r, &err), POSENC_OK);
        double w[4], worst_diff = 0;
        posenc_sinusoid_frequencies_f64(&p, w, 4, NULL);
        for (int k = 0; k < 4; k++) {
            double worst = 0;
            for (int64_t q = 0; q <= n; q++) {
                double f = ref_round(ref_round((double)q, dts[d]) * ref_round(w[k], dts[d]), dts[d]);
                double e = fabs(remainder(f - (double)q * w[k], 6.283185307179586476925));
                if (e > worst) worst = e;
            }
            if (fabs(worst - r.angle_error[k]) > worst_diff) worst_diff = fabs(worst - r.angle_error[k]);
        }
        /* 1e-12: the reference forms p*w in double, the library in long double */
        CHECK(worst_diff < 1e-12, "%s audit 0..%lld: per-pair angle error = brute force (max diff %.2g, tol 1e-12); "
              "pair 0 error %.4g rad", posenc_dtype_name(dts[d]), (long long)n, worst_diff, r.angle_error[0]);
        posenc_precision_report_free(&r);
    }
    posenc_precision_report r;
    posenc_error err = {0};
    CHECK_STATUS(posenc_precision_audit(&p, POSENC_DTYPE_F64, 10, &r, &err), POSENC_ERR_INVALID_ARGUMENT);
    CHECK(strstr(err.message, "f64") != NULL, "f64 audit rejected naming it: %s", err.message);
    CHECK_STATUS(posenc_precision_audit(&p, POSENC_DTYPE_BF16, 0, &r, NULL), POSENC_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(posenc_precision_audit(NULL, POSENC_DTYPE_BF16, 10, &r, NULL), POSENC_ERR_NULL_POINTER);
    posenc_precision_report_free(NULL);
}

/* Build a safetensors image: header text + data. */
static size_t image(unsigned char *buf, const char *header, const void *data, size_t data_size, uint64_t claimed) {
    size_t n = strlen(header);
    uint64_t len = claimed ? claimed : n;
    for (int i = 0; i < 8; i++) buf[i] = (unsigned char)(len >> (8 * i));
    memcpy(buf + 8, header, n);
    memcpy(buf + 8 + n, data, data_size);
    return 8 + n + data_size;
}

static void test_safetensors(void) {
    unsigned char buf[1024];
    float f[6] = {1, 2, 3, 4, 5, 6};
    uint16_t h[2] = {0x3C00, 0xC000}; /* f16 1.0, -2.0 */
    unsigned char data[32];
    memcpy(data, f, 24);
    memcpy(data + 24, h, 4);
    size_t n = image(buf, "{\"__metadata__\":{\"a\":\"b\"},\"x\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]},"
                          "\"y\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[24,28]}}", data, 28, 0);
    posenc_array a;
    posenc_error err = {0};
    CHECK_STATUS(posenc_safetensors_parse(buf, n, "x", 0, &a, &err), POSENC_OK);
    CHECK(a.dtype == POSENC_DTYPE_F32 && a.ndim == 2 && a.shape[0] == 2 && a.shape[1] == 3 && ((float *)a.data)[5] == 6,
          "F32 tensor x: [%zu,%zu], last value %g", a.shape[0], a.shape[1], (double)((float *)a.data)[5]);
    posenc_array_free(&a);
    CHECK_STATUS(posenc_safetensors_parse(buf, n, "y", 0, &a, &err), POSENC_OK);
    CHECK(a.dtype == POSENC_DTYPE_F16 && posenc_f16_to_f32(((uint16_t *)a.data)[1]) == -2.0f, "F16 tensor y[1] = -2");
    posenc_array_free(&a);
    char names[64];
    CHECK_STATUS(posenc_safetensors_list(buf, n, names, sizeof names, &err), POSENC_OK);
    CHECK(strcmp(names, "x, y") == 0, "list: '%s'", names);
    CHECK_STATUS(posenc_safetensors_parse(buf, n, "x", 8, &a, &err), POSENC_ERR_LIMIT);
    struct { const char *header; size_t data; uint64_t claimed; posenc_status want; const char *what; } bad[] = {
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]}}", 24, 4096, POSENC_ERR_FORMAT, "length > file"},
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]},\"z\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[20,24]}}", 24, 0, POSENC_ERR_FORMAT, "overlap"},
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[-4,20]}}", 24, 0, POSENC_ERR_FORMAT, "negative offset"},
        {"{\"x\":{\"dtype\":\"I4\",\"shape\":[2,3],\"data_offsets\":[0,24]}}", 24, 0, POSENC_ERR_UNSUPPORTED, "unknown dtype"},
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[2,3.5],\"data_offsets\":[0,24]}}", 24, 0, POSENC_ERR_FORMAT, "fractional shape"},
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,28]}}", 24, 0, POSENC_ERR_FORMAT, "past the data"},
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[2,3]}}", 24, 0, POSENC_ERR_FORMAT, "no offsets"},
        {"{\"x\":", 0, 0, POSENC_ERR_FORMAT, "truncated JSON"},
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]}}", 24, 0, POSENC_ERR_OUT_OF_RANGE, "missing name"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        n = image(buf, bad[i].header, data, bad[i].data, bad[i].claimed);
        posenc_status st = posenc_safetensors_parse(buf, n, i == 8 ? "nope" : "x", 0, &a, &err);
        CHECK(st == bad[i].want && a.data == NULL, "hostile safetensors (%s) -> %s: %s", bad[i].what, posenc_strerror(st),
              err.message);
    }
    CHECK_STATUS(posenc_safetensors_parse(buf, 5, "x", 0, &a, &err), POSENC_ERR_FORMAT);
    /* mutations of a valid image (byte changes, truncations): never a crash
     * (the ASan build checks memory), and a success always yields exactly the
     * declared bytes inside the image */
    n = image(buf, "{\"x\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]},"
                   "\"y\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[24,28]}}", data, 28, 0);
    uint64_t state = 12345;
    int ok = 0, rejected = 0, inconsistent = 0;
    for (int iter = 0; iter < 20000; iter++) {
        unsigned char m[1024];
        memcpy(m, buf, n);
        size_t len = n;
        for (int k = 0; k < 1 + iter % 3; k++) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            size_t at = (size_t)(state >> 33) % n;
            static const unsigned char interesting[] = {'0', '9', '-', '"', '[', ']', '{', '}', ',', 0, 0xff, '1', 'e'};
            m[at] = (state >> 20) & 1 ? interesting[(state >> 24) % sizeof interesting] : (unsigned char)(state >> 40);
        }
        if (iter % 7 == 0) len = (size_t)(state >> 45) % (n + 1);
        posenc_status st = posenc_safetensors_parse(m, len, iter % 2 ? "x" : "y", 0, &a, NULL);
        if (st == POSENC_OK) {
            ok++;
            inconsistent += a.count * posenc_dtype_size(a.dtype) > len;
            posenc_array_free(&a);
        } else {
            rejected++;
            inconsistent += a.data != NULL;
        }
    }
    CHECK(inconsistent == 0 && ok > 0 && rejected > 0, "20000 mutated images: %d parsed, %d rejected, %d inconsistent",
          ok, rejected, inconsistent);
    CHECK_STATUS(posenc_safetensors_parse(NULL, 5, "x", 0, &a, &err), POSENC_ERR_NULL_POINTER);

    /* parse_many (issue 26 item 11: the header once for many tensors) agrees with
     * parse name by name, on the valid image and on 20000 mutations of it: same
     * status, same bytes; a duplicated name resolves as parse does (the last) */
    const char *both[2] = {"x", "y"};
    posenc_array many[2];
    CHECK_STATUS(posenc_safetensors_parse_many(buf, n, both, 2, 0, many, &err), POSENC_OK);
    CHECK(many[0].count == 6 && ((float *)many[0].data)[5] == 6 && many[1].dtype == POSENC_DTYPE_F16,
          "parse_many x and y: %zu values, last %g", many[0].count, (double)((float *)many[0].data)[5]);
    posenc_array_free(&many[0]), posenc_array_free(&many[1]);
    const char *missing[2] = {"x", "nope"};
    CHECK(posenc_safetensors_parse_many(buf, n, missing, 2, 0, many, &err) == POSENC_ERR_OUT_OF_RANGE && many[0].data == NULL &&
              many[1].data == NULL && strstr(err.message, "'nope'"),
          "parse_many with a missing name: OUT_OF_RANGE, every output released: %s", err.message);
    int disagree = 0;
    state = 777;
    for (int iter = 0; iter < 20000; iter++) {
        unsigned char m[1024];
        memcpy(m, buf, n);
        for (int k = 0; k < 1 + iter % 3; k++) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            m[(size_t)(state >> 33) % n] = (unsigned char)(state >> 40);
        }
        posenc_status st_many = posenc_safetensors_parse_many(m, n, both, 2, 0, many, NULL), st_one = POSENC_OK;
        posenc_array one[2] = {{0}, {0}};
        for (int k = 0; k < 2 && st_one == POSENC_OK; k++) st_one = posenc_safetensors_parse(m, n, both[k], 0, &one[k], NULL);
        if ((st_many == POSENC_OK) != (st_one == POSENC_OK)) disagree++;
        else if (st_many == POSENC_OK)
            for (int k = 0; k < 2; k++)
                disagree += one[k].count != many[k].count || one[k].dtype != many[k].dtype ||
                            memcmp(one[k].data, many[k].data, one[k].count * posenc_dtype_size(one[k].dtype)) != 0;
        for (int k = 0; k < 2; k++) posenc_array_free(&one[k]), posenc_array_free(&many[k]);
    }
    CHECK(disagree == 0, "parse_many vs parse on 20000 mutated images: %d disagreements", disagree);
    n = image(buf, "{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                   "\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", data, 8, 0);
    CHECK_STATUS(posenc_safetensors_parse(buf, n, "x", 0, &a, &err), POSENC_OK);
    CHECK_STATUS(posenc_safetensors_parse_many(buf, n, both, 1, 0, many, &err), POSENC_OK);
    CHECK(((float *)a.data)[0] == ((float *)many[0].data)[0], "a name given twice: parse and parse_many take the same one (%g)",
          (double)((float *)a.data)[0]);
    posenc_array_free(&a), posenc_array_free(&many[0]);
}

/* Fits of generated tables: every convention parameter recovered. */
static void test_fits(void) {
    struct { posenc_freqs freqs; posenc_layout layout; double base; int64_t start; int32_t dim; } cases[] = {
        {POSENC_FREQS_VASWANI, POSENC_LAYOUT_INTERLEAVED, 10000, 0, 64}, {POSENC_FREQS_T2T, POSENC_LAYOUT_HALF, 10000, 2, 64},
        {POSENC_FREQS_VASWANI, POSENC_LAYOUT_HALF, 500000, 1000, 128}, {POSENC_FREQS_T2T, POSENC_LAYOUT_INTERLEAVED, 500, 7, 16},
        {POSENC_FREQS_T2T, POSENC_LAYOUT_HALF, 10000, 0, 65}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        posenc_sinusoid_params p;
        posenc_sinusoid_params_default(&p, cases[i].dim);
        p.freqs = cases[i].freqs, p.layout = cases[i].layout, p.base = cases[i].base, p.odd = POSENC_ODD_PAD;
        size_t shape[2] = {40, (size_t)cases[i].dim};
        posenc_array t;
        posenc_array_create(&t, POSENC_DTYPE_F32, 2, shape, 0, NULL);
        posenc_positions pos = posenc_positions_range(cases[i].start, 40);
        posenc_sinusoid_table_f32(&p, &pos, t.data, t.count, NULL);
        posenc_sinusoid_fit f;
        posenc_error err = {0};
        CHECK_STATUS(posenc_sinusoid_fit_table(&t, 0, &f, &err), POSENC_OK);
        CHECK(f.found && f.freqs == cases[i].freqs && f.layout == cases[i].layout && f.base == cases[i].base &&
                  f.start == (double)cases[i].start && f.formation == POSENC_ANGLE_EXACT && f.extra_channels == cases[i].dim % 2,
              "fit d=%d %s/%s base %g start %lld: got %s/%s base %g start %g, angles %s (err %.2g)", cases[i].dim,
              cases[i].freqs ? "t2t" : "vaswani", cases[i].layout ? "half" : "interleaved", cases[i].base,
              (long long)cases[i].start, f.freqs ? "t2t" : "vaswani", f.layout ? "half" : "interleaved", f.base, f.start,
              posenc_angle_formation_name(f.formation), f.angle_error);
        posenc_sinusoid_fit_free(&f);
        posenc_array_free(&t);
    }
    posenc_sinusoid_fit_free(NULL);
    posenc_health_free(NULL);
    posenc_diff_report_free(NULL);
    posenc_signal_report_free(NULL);
}

/* A tutorial table [rows x dim] from position start, float32. */
static posenc_array tutorial_table(size_t rows, int32_t dim, int64_t start) {
    posenc_sinusoid_params p;
    posenc_sinusoid_params_default(&p, dim);
    size_t shape[2] = {rows, (size_t)dim};
    posenc_array t;
    posenc_array_create(&t, POSENC_DTYPE_F32, 2, shape, 0, NULL);
    posenc_positions pos = posenc_positions_range(start, rows);
    posenc_sinusoid_table_f32(&p, &pos, t.data, t.count, NULL);
    return t;
}

/* The most-similar pair of posenc_health_analyze against a brute-force search. */
static void test_max_cosine(void) {
    posenc_array t = tutorial_table(60, 16, 0);
    const float *v = t.data;
    double best = -2;
    size_t ba = 0, bb = 0;
    for (size_t i = 0; i < 60; i++)
        for (size_t j = i + 1; j < 60; j++) {
            double d = 0, ni = 0, nj = 0;
            for (size_t c = 0; c < 16; c++) d += (double)v[i * 16 + c] * v[j * 16 + c], ni += (double)v[i * 16 + c] * v[i * 16 + c],
                                            nj += (double)v[j * 16 + c] * v[j * 16 + c];
            if (d / sqrt(ni * nj) > best) best = d / sqrt(ni * nj), ba = i, bb = j;
        }
    posenc_health h;
    posenc_error err = {0};
    CHECK_STATUS(posenc_health_analyze(&t, NULL, &h, &err), POSENC_OK);
    CHECK(fabs(h.max_cosine - best) < 1e-12 && h.most_similar_a == ba && h.most_similar_b == bb,
          "max cosine %.15g at rows (%zu, %zu) == brute force %.15g at (%zu, %zu) (tol 1e-12: summation order)",
          h.max_cosine, h.most_similar_a, h.most_similar_b, best, ba, bb);
    posenc_health_free(&h);
    posenc_array_free(&t);
}

/* Findings are codes and numbers: a table shifted by 2 rows and one from a
 * fitted start; presets are codes. */
static void test_structured_findings(void) {
    posenc_array a = tutorial_table(40, 16, 0), b = tutorial_table(40, 16, 2);
    posenc_diff_report r;
    posenc_error err = {0};
    CHECK_STATUS(posenc_diff_tables(&a, &b, NULL, &r, &err), POSENC_OK);
    const posenc_finding *f = r.finding_count ? &r.findings[0] : NULL;
    CHECK(f && f->kind == POSENC_FINDING_OFFSET && f->value == 2 && !f->from_fit && f->evidence <= r.tolerance &&
              strcmp(f->key, "offset") == 0,
          "tutorial vs tutorial from 2: first finding %s value %g from_fit %d evidence %.3g (tol %.3g)",
          f ? f->key : "none", f ? f->value : 0, f ? f->from_fit : -1, f ? f->evidence : 0, r.tolerance);
    CHECK(r.preset_a == POSENC_PRESET_TUTORIAL && r.preset_b == POSENC_PRESET_TUTORIAL && r.explained && !r.rope,
          "presets A %d, B %d (tutorial = %d), explained %d", (int)r.preset_a, (int)r.preset_b, POSENC_PRESET_TUTORIAL,
          r.explained);
    posenc_diff_report_free(&r);
    posenc_array_free(&b);
    /* half layout: the channel test finds the permutation and says which */
    posenc_sinusoid_params p;
    posenc_sinusoid_params_default(&p, 16);
    p.layout = POSENC_LAYOUT_HALF;
    b = tutorial_table(40, 16, 0);
    posenc_positions pos = posenc_positions_range(0, 40);
    posenc_sinusoid_table_f32(&p, &pos, b.data, b.count, NULL);
    CHECK_STATUS(posenc_diff_tables(&a, &b, NULL, &r, &err), POSENC_OK);
    f = r.finding_count ? &r.findings[0] : NULL;
    CHECK(f && f->kind == POSENC_FINDING_LAYOUT && f->permutation == POSENC_PERMUTATION_TO_HALF && !f->from_fit,
          "interleaved vs half: %s, permutation %d (to half = %d)", f ? f->key : "none", f ? (int)f->permutation : -1,
          POSENC_PERMUTATION_TO_HALF);
    CHECK(posenc_sinusoid_fit_preset(&r.fit_b, 0) == POSENC_PRESET_VASWANI_HALF && posenc_sinusoid_fit_preset(&r.fit_b, 1) == POSENC_PRESET_ROPE &&
              posenc_sinusoid_fit_preset(NULL, 0) == POSENC_PRESET_NONE,
          "posenc_sinusoid_fit_preset: half vaswani table %d, as RoPE %d, NULL %d", (int)posenc_sinusoid_fit_preset(&r.fit_b, 0),
          (int)posenc_sinusoid_fit_preset(&r.fit_b, 1), (int)posenc_sinusoid_fit_preset(NULL, 0));
    posenc_diff_report_free(&r);
    posenc_array_free(&a);
    posenc_array_free(&b);
}

static void test_arguments(void) {
    posenc_array empty = {0};
    size_t shape[2] = {0, 8};
    posenc_array_create(&empty, POSENC_DTYPE_F32, 2, shape, 0, NULL);
    posenc_health h;
    posenc_error err = {0};
    CHECK_STATUS(posenc_health_analyze(&empty, NULL, &h, &err), POSENC_ERR_INVALID_ARGUMENT);
    CHECK(strstr(err.message, "empty") != NULL, "empty table: %s", err.message);
    posenc_diff_report r;
    posenc_diff_options o = {.tolerance = NAN};
    CHECK_STATUS(posenc_diff_tables(&empty, &empty, &o, &r, &err), POSENC_ERR_INVALID_ARGUMENT);
    CHECK(strstr(err.message, "nan") != NULL, "NaN tolerance named: %s", err.message);
    CHECK_STATUS(posenc_health_analyze(NULL, NULL, &h, NULL), POSENC_ERR_NULL_POINTER);
    posenc_array_free(&empty);
}

int main(void) {
    test_rounding_facts();
    test_precision_bruteforce();
    test_safetensors();
    test_fits();
    test_max_cosine();
    test_structured_findings();
    test_arguments();
    return check_finish();
}
