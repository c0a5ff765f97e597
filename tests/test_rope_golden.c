/* test_rope_golden.c: RoPE against every RoPE golden in tests/golden:
 * HF inv_freq + attention factor (all 60 cases, parameters read from
 * manifest.json), HF cos/sin tables, HF NeoX and GPT-J applied outputs, all 24
 * ggml_rope files and the DeepSeek-V3 reference files.
 *
 * Tolerances (conventions.md section 12, golden README):
 *  - TORCH_COMPAT vs HF: 0 ULP expected for inv_freq/cos/sin/outputs: we repeat
 *    HF's float32 steps with torch's own SLEEF functions; any ULP is a defect.
 *  - PRECISE vs HF inv_freq: rtol 2e-6. HF rounds the exponent 2k/d to f32
 *    (relative error 2^-25 of e * ln(base) <= 13.2 * 3e-8 = 4e-7) plus ~3
 *    float32 roundings (pow, reciprocal, scheme op: 3 * 6e-8) and the YaRN
 *    blend (2 more) -> < 1e-6; 2e-6 leaves a factor 2.
 *  - PRECISE vs float32 peers (cos/sin, applied outputs): the peer's angle
 *    p*w is a float32 product, off by up to p*w*2^-24 plus the w error above
 *    (~4e-7 relative): |x| <= 1.63 gives ~3e-6 near p = 36 and ~1e-4 near
 *    p = 1036 (README: "atol 1e-5 near 0, 2e-4 near 1000").
 *  - ggml forms theta by repeated float32 multiplication (theta *= scale): its
 *    error is 1.1e-4 rad at p = 1000 (section 12), times |x| <= 1.63 ->
 *    1.8e-4; the same 1e-5 / 2e-4 tolerances. */
#include "check.h"

#include <cjson/cJSON.h>

#define T 37
#define H 3
#define D 64

static const char *dir;
/* torch's bits for sin/cos need its AVX2 blocks (src/common/torch_vec.h); without
 * AVX2 the scalar SLEEF path may differ by 1 ULP in cos/sin (2 after a rotation) */
static int64_t trig_ulp;
static float input_x[T * H * D];
static cJSON *manifest;

static cJSON *entry_for(const char *file) {
    cJSON *entries = cJSON_GetObjectItem(manifest, "entries"), *e;
    cJSON_ArrayForEach(e, entries) {
        cJSON *f = cJSON_GetObjectItem(e, "file");
        if (cJSON_IsString(f) && strcmp(f->valuestring, file) == 0) return e;
    }
    return NULL;
}

static double num(const cJSON *obj, const char *key, double fallback) {
    const cJSON *v = cJSON_GetObjectItem(obj, key);
    return cJSON_IsNumber(v) ? v->valuedouble : fallback;
}

static void die(const char *what, const posenc_error *err) {
    printf("FAIL: %s: %s\n", what, err->message);
    exit(EXIT_FAILURE);
}

/* got and want rounded to float32 within max_ulp ULP (check_ulp_within). */
static void check_ulps(const char *label, const double *got, const double *want, size_t n, int64_t max_ulp) {
    float *g = malloc(sizeof *g * (n ? n : 1)), *w = malloc(sizeof *w * (n ? n : 1));
    if (!g || !w) {
        free(g), free(w);
        CHECK(0, "%s: out of memory for the comparison", label);
        return;
    }
    for (size_t i = 0; i < n; i++) g[i] = (float)got[i], w[i] = (float)want[i];
    check_ulp_within(label, g, w, n, NULL, 0, max_ulp);
    free(g), free(w);
}

/* Params from a manifest HF config (modeling_rope_utils ~v4.47 semantics:
 * yarn L0 = max_position_embeddings, mscale keys ignored; longrope factor =
 * max/original when the config has a top-level original). */
static double short_f[64], long_f[64];
static posenc_rope_params params_from_hf(const cJSON *config, const char *rope_type, int64_t *seq_len) {
    posenc_rope_params p;
    int32_t head_dim = (int32_t)num(config, "head_dim", 0);
    posenc_rope_params_default(&p, head_dim);
    p.base = num(config, "rope_theta", 10000);
    p.partial_rotary_factor = num(config, "partial_rotary_factor", 1.0);
    int64_t max_pos = (int64_t)num(config, "max_position_embeddings", 0);
    p.max_position = max_pos;
    const cJSON *rs = cJSON_GetObjectItem(config, "rope_scaling");
    posenc_error err = {0};
    if (posenc_rope_scaling_parse(rope_type, &p.scaling, &err) != POSENC_OK) die("scaling", &err);
    if (cJSON_IsObject(rs)) {
        p.factor = num(rs, "factor", 1.0);
        p.beta_fast = num(rs, "beta_fast", 32);
        p.beta_slow = num(rs, "beta_slow", 1);
        p.attention_factor = num(rs, "attention_factor", 0);
        p.low_freq_factor = num(rs, "low_freq_factor", 1);
        p.high_freq_factor = num(rs, "high_freq_factor", 4);
        p.original_max_position = (int64_t)num(rs, "original_max_position_embeddings", 0);
        const cJSON *sf = cJSON_GetObjectItem(rs, "short_factor"), *lf = cJSON_GetObjectItem(rs, "long_factor");
        if (cJSON_IsArray(sf) && cJSON_IsArray(lf)) {
            int n = cJSON_GetArraySize(sf);
            for (int i = 0; i < n && i < 64; i++) {
                short_f[i] = cJSON_GetArrayItem(sf, i)->valuedouble;
                long_f[i] = cJSON_GetArrayItem(lf, i)->valuedouble;
            }
            p.short_factors = short_f;
            p.long_factors = long_f;
            p.factors_count = (size_t)n;
        }
    }
    if (p.scaling == POSENC_ROPE_YARN) p.original_max_position = max_pos;
    if (p.scaling == POSENC_ROPE_LONGROPE) {
        int64_t orig = (int64_t)num(config, "original_max_position_embeddings", 0);
        if (orig > 0) {
            p.original_max_position = orig;
            p.factor = (double)max_pos / (double)orig;
        } else {
            p.original_max_position = max_pos;
        }
    }
    *seq_len = 0;
    return p;
}

static double max_rel_diff(const double *a, const double *b, size_t n) {
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        double r = fabs(a[i] - b[i]) / fabs(b[i]);
        if (r > worst) worst = r;
    }
    return worst;
}

static void test_inv_freq(void) {
    cJSON *entries = cJSON_GetObjectItem(manifest, "entries"), *e;
    int cases = 0;
    double worst_rel = 0;
    const char *worst_file = "";
    cJSON_ArrayForEach(e, entries) {
        const char *file = cJSON_GetObjectItem(e, "file")->valuestring;
        if (strncmp(file, "hf_rope_invfreq_", 16) != 0) continue;
        cJSON *params = cJSON_GetObjectItem(e, "params");
        cJSON *config = cJSON_GetObjectItem(params, "config");
        const char *type = cJSON_GetObjectItem(params, "rope_type")->valuestring;
        int64_t seq_len = 0;
        posenc_rope_params p = params_from_hf(config, type, &seq_len);
        seq_len = (int64_t)num(params, "seq_len", 0);
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(strlen(file) - 4), file);
        posenc_array shape;
        double *want = check_load_golden(dir, name, &shape);
        double got[64], att = 0, got_precise[64], att_precise = 0;
        posenc_error err = {0};
        p.mode = POSENC_MODE_TORCH_COMPAT;
        if (posenc_rope_frequencies(&p, seq_len, got, 64, &att, &err) != POSENC_OK) die(file, &err);
        p.mode = POSENC_MODE_PRECISE;
        if (posenc_rope_frequencies(&p, seq_len, got_precise, 64, &att_precise, &err) != POSENC_OK) die(file, &err);
        char label[300];
        snprintf(label, sizeof label, "%s torch-compat", name + 16);
        check_ulps(label, got, want, shape.count, 0);
        double rel = max_rel_diff(got_precise, want, shape.count);
        if (rel > worst_rel) {
            worst_rel = rel;
            worst_file = file;
        }
        snprintf(label, sizeof label, "%s precise", name + 16);
        check_near(label, got_precise, want, shape.count, NULL, 0, 0.0, 2e-6); /* rel diff <= 2e-6 */
        double want_att = num(e, "attention_factor", NAN);
        CHECK(fabs(att - want_att) <= 1e-15 * want_att && att == att_precise,
              "%-58s attention factor %.17g vs manifest %.17g; tol 1e-15 rel", label, att, want_att);
        posenc_array_free(&shape);
        cases++;
    }
    CHECK(cases == 60, "inv_freq golden cases found: %d (want 60); worst precise rel diff %.3g (%s)", cases,
          worst_rel, worst_file);
}

/* HF LlamaRotaryEmbedding tables: [37, 64] with emb = cat(freqs, freqs). */
static void test_hf_tables(void) {
    static const struct {
        const char *suffix, *config_case;
        int64_t start, seq_len;
    } cases[] = {
        {"default_hd64_base10000_pos0", "hf_rope_invfreq_default_hd64_base10000.npy", 0, 0},
        {"linear_f4_hd64_base10000_pos0", "hf_rope_invfreq_linear_f4_hd64_base10000.npy", 0, 0},
        {"yarn_f4_hd64_base10000_pos0", "hf_rope_invfreq_yarn_f4_hd64_base10000.npy", 0, 0},
        {"llama3_f8_orig8192_hd64_base500000_pos1000", "hf_rope_invfreq_llama3_f8_orig8192_hd64_base500000.npy", 1000, 0},
        {"longrope_short_hd64_base10000_pos0", "hf_rope_invfreq_longrope_short_hd64_base10000.npy", 0, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cJSON *e = entry_for(cases[c].config_case);
        cJSON *params = cJSON_GetObjectItem(e, "params");
        int64_t seq_len;
        posenc_rope_params p = params_from_hf(cJSON_GetObjectItem(params, "config"),
                                              cJSON_GetObjectItem(params, "rope_type")->valuestring, &seq_len);
        char name[200];
        for (int which = 0; which < 2; which++) {
            snprintf(name, sizeof name, "hf_llama_rotary_%s_%s", which ? "sin" : "cos", cases[c].suffix);
            double *want = check_load_golden(dir, name, NULL);
            for (int mode = 0; mode < 2; mode++) {
                p.mode = mode ? POSENC_MODE_TORCH_COMPAT : POSENC_MODE_PRECISE;
                float cs[T * 32], sn[T * 32];
                double got[T * 64];
                posenc_positions pos = posenc_positions_range(cases[c].start, T);
                posenc_error err = {0};
                if (posenc_rope_table_f32(&p, cases[c].seq_len, &pos, 1, cs, sn, T * 32, &err) != POSENC_OK) die(name, &err);
                for (int t = 0; t < T; t++)
                    for (int k = 0; k < 64; k++) got[t * 64 + k] = (which ? sn : cs)[t * 32 + k % 32];
                char label[300];
                snprintf(label, sizeof label, "%s %s", name + 16, mode ? "torch-compat" : "precise");
                if (mode) check_ulps(label, got, want, T * 64, trig_ulp);
                else check_close(label, got, want, T * 64, 64, cases[c].start ? 2e-4 : 1e-5, 0);
            }
            free(want);
        }
    }
    /* dynamic NTK after HF's growth update: seq_len = 5037 is a 0-d tensor in
     * HF, so its base' is formed in float32 (here in double, then rounded once
     * to float32 for torch's pow); for this case both round to the same float32
     * base', so 0 ULP is expected (measured), cos/sin as the other tables. */
    posenc_rope_params p;
    posenc_rope_params_default(&p, 64);
    p.scaling = POSENC_ROPE_DYNAMIC;
    p.factor = 4;
    p.max_position = 4096;
    p.mode = POSENC_MODE_TORCH_COMPAT;
    double inv[32];
    posenc_error err = {0};
    if (posenc_rope_frequencies(&p, 5037, inv, 32, NULL, &err) != POSENC_OK) die("dynamic", &err);
    double *want = check_load_golden(dir, "hf_llama_rotary_invfreq_after_update_dynamic_f4_pos5000", NULL);
    check_ulps("dynamic f4 seq 5037 inv_freq (HF base' in float32)", inv, want, 32, 0);
    free(want);
    for (int which = 0; which < 2; which++) {
        float cs[T * 32], sn[T * 32];
        double got[T * 64];
        posenc_positions pos = posenc_positions_range(5000, T);
        if (posenc_rope_table_f32(&p, 5037, &pos, 1, cs, sn, T * 32, &err) != POSENC_OK) die("dynamic table", &err);
        for (int t = 0; t < T; t++)
            for (int k = 0; k < 64; k++) got[t * 64 + k] = (which ? sn : cs)[t * 32 + k % 32];
        want = check_load_golden(dir, which ? "hf_llama_rotary_sin_dynamic_f4_hd64_base10000_pos5000"
                                            : "hf_llama_rotary_cos_dynamic_f4_hd64_base10000_pos5000", NULL);
        check_ulps(which ? "dynamic sin pos5000 torch-compat" : "dynamic cos pos5000 torch-compat", got, want, T * 64,
                   trig_ulp);
        free(want);
    }
}

/* Apply to the formula input and compare with a golden [37,3,64]. */
static void check_apply(const char *golden, posenc_rope_params p, posenc_layout layout, int64_t start,
                        double atol_precise, int64_t ulp_torch) {
    double *want = check_load_golden(dir, golden, NULL);
    for (int mode = 0; mode < 2; mode++) {
        if (mode == 1 && ulp_torch < 0) continue;
        p.mode = mode ? POSENC_MODE_TORCH_COMPAT : POSENC_MODE_PRECISE;
        float x[T * H * D];
        memcpy(x, input_x, sizeof x);
        int64_t positions[T];
        for (int t = 0; t < T; t++) positions[t] = start + t;
        posenc_rope_view view = posenc_rope_view_contiguous(T, H, D);
        posenc_error err = {0};
        if (posenc_rope_apply_f32(&p, 0, layout, &view, positions, 0, x, T * H * D, &err) != POSENC_OK) die(golden, &err);
        double got[T * H * D];
        for (int i = 0; i < T * H * D; i++) got[i] = x[i];
        char label[300];
        snprintf(label, sizeof label, "%s %s", golden, mode ? "torch-compat" : "precise");
        if (mode) check_ulps(label, got, want, T * H * D, ulp_torch + 2 * trig_ulp);
        else check_close(label, got, want, T * H * D, D, atol_precise, 0);
    }
    free(want);
}

static void test_hf_apply(void) {
    static const struct {
        const char *file, *config_case;
        int64_t start;
    } cases[] = {
        {"hf_neox_apply_q_default_hd64_base10000_pos0", "hf_rope_invfreq_default_hd64_base10000.npy", 0},
        {"hf_neox_apply_q_default_hd64_base10000_pos1000", "hf_rope_invfreq_default_hd64_base10000.npy", 1000},
        {"hf_neox_apply_q_default_hd64_base500000_pos0", "hf_rope_invfreq_default_hd64_base500000.npy", 0},
        {"hf_neox_apply_q_llama3_f8_orig8192_hd64_base500000_pos1000",
         "hf_rope_invfreq_llama3_f8_orig8192_hd64_base500000.npy", 1000},
        {"hf_neox_apply_q_yarn_f4_hd64_base10000_pos0", "hf_rope_invfreq_yarn_f4_hd64_base10000.npy", 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cJSON *params = cJSON_GetObjectItem(entry_for(cases[c].config_case), "params");
        int64_t seq_len;
        posenc_rope_params p = params_from_hf(cJSON_GetObjectItem(params, "config"),
                                              cJSON_GetObjectItem(params, "rope_type")->valuestring, &seq_len);
        check_apply(cases[c].file, p, POSENC_LAYOUT_HALF, cases[c].start, cases[c].start ? 2e-4 : 1e-5, 0);
    }
    for (int rd = 32; rd <= 64; rd += 32)
        for (int start = 0; start <= 1000; start += 1000) {
            char file[100];
            snprintf(file, sizeof file, "hf_gptj_apply_q_rotarydim%d_pos%d", rd, start);
            posenc_rope_params p;
            posenc_rope_params_default(&p, D);
            p.rotary_dim = rd;
            check_apply(file, p, POSENC_LAYOUT_INTERLEAVED, start, start ? 2e-4 : 1e-5, 0);
        }
}

static void test_ggml(void) {
    static const char *const kinds[] = {"plain", "linear0.25", "yarn"};
    for (int mode = 0; mode < 2; mode++)
        for (int kind = 0; kind < 3; kind++)
            for (int nd = 32; nd <= 64; nd += 32)
                for (int start = 0; start <= 1000; start += 1000) {
                    char file[120];
                    snprintf(file, sizeof file, "ggml_rope_%s_%s_ndims%d_pos%d", mode ? "neox" : "normal", kinds[kind],
                             nd, start);
                    posenc_rope_params p;
                    posenc_rope_params_default(&p, D);
                    p.rotary_dim = nd; /* ggml n_dims */
                    if (kind == 1) {
                        p.scaling = POSENC_ROPE_LINEAR; /* freq_scale 0.25 */
                        p.factor = 4;
                    } else if (kind == 2) {
                        /* ext_factor 1, freq_scale 0.25, n_ctx_orig 4096, beta 32/1,
                         * attn_factor 1 -> net magnitude 1 + 0.1 ln 4 = our derived factor */
                        p.scaling = POSENC_ROPE_YARN;
                        p.factor = 4;
                        p.original_max_position = 4096;
                    }
                    /* ggml is not HF: torch-compat is informative only (tolerance as precise) */
                    check_apply(file, p, mode ? POSENC_LAYOUT_HALF : POSENC_LAYOUT_INTERLEAVED, start,
                                start ? 2e-4 : 1e-5, -1);
                }
}

static void test_deepseek(void) {
    /* freqs_cis [74][32][2] (cos, sin), rows 0..36 then 1000..1036, no magnitude */
    static const char *const tables[] = {"deepseek_v3_freqs_cis_v3default", "deepseek_v3_freqs_cis_mscale0.707",
                                         "deepseek_v3_freqs_cis_noyarn_maxseq4096"};
    static const char *const applies[] = {"deepseek_v3_apply_rotary_v3default_pos0",
                                          "deepseek_v3_apply_rotary_mscale0.707_pos0",
                                          "deepseek_v3_apply_rotary_noyarn_maxseq4096_pos0"};
    for (int c = 0; c < 3; c++) {
        posenc_rope_params p;
        posenc_rope_params_default(&p, 64);
        if (c < 2) { /* max_seq_len 16384 > original 4096: YaRN blend, factor 40 */
            p.scaling = POSENC_ROPE_YARN;
            p.factor = 40;
            p.original_max_position = 4096;
            p.attention_factor = 1.0; /* DeepSeek puts mscale into the softmax scale instead */
        }
        double *want = check_load_golden(dir, tables[c], NULL);
        int64_t ids[74];
        for (int i = 0; i < 74; i++) ids[i] = i < T ? i : 1000 + (i - T);
        for (int mode = 0; mode < 2; mode++) {
            p.mode = mode ? POSENC_MODE_TORCH_COMPAT : POSENC_MODE_PRECISE;
            float cs[74 * 32], sn[74 * 32];
            posenc_positions pos = posenc_positions_ids(ids, 74);
            posenc_error err = {0};
            if (posenc_rope_table_f32(&p, 0, &pos, 0, cs, sn, 74 * 32, &err) != POSENC_OK) die(tables[c], &err);
            double got[74 * 64], got_lo[T * 64], want_lo[T * 64];
            for (int i = 0; i < 74 * 32; i++) {
                got[2 * i] = cs[i];
                got[2 * i + 1] = sn[i];
            }
            memcpy(got_lo, got, sizeof got_lo);
            memcpy(want_lo, want, sizeof want_lo);
            char label[200];
            snprintf(label, sizeof label, "%s rows 0..36 %s", tables[c] + 12, mode ? "torch-compat" : "precise");
            check_close(label, got_lo, want_lo, T * 64, 64, 1e-5, 0);
            snprintf(label, sizeof label, "%s rows 1000.. %s", tables[c] + 12, mode ? "torch-compat" : "precise");
            check_close(label, got + T * 64, want + T * 64, T * 64, 64, 2e-4, 0);
        }
        free(want);
        check_apply(applies[c], p, POSENC_LAYOUT_INTERLEAVED, 0, 1e-5, -1);
    }
}

int main(void) {
    trig_ulp = (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) ? 0 : 1;
    printf("torch-compat trig tolerance: %lld ULP (AVX2+FMA %s)\n", (long long)trig_ulp, trig_ulp ? "absent" : "present");
    dir = check_golden_dir();
    char path[4096];
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    void *bytes;
    size_t size;
    posenc_error err = {0};
    if (posenc_file_read_all(path, 0, &bytes, &size, &err) != POSENC_OK) die("manifest", &err);
    manifest = cJSON_ParseWithLength(bytes, size);
    free(bytes);
    if (!manifest) {
        printf("FAIL: manifest.json does not parse\n");
        return EXIT_FAILURE;
    }
    posenc_array shape;
    double *x = check_load_golden(dir, "input_formula_T37_H3_D64", &shape);
    for (int i = 0; i < T * H * D; i++) input_x[i] = (float)x[i];
    /* the input is the documented formula (README): check it, so a changed file is caught */
    static float formula[T * H * D];
    for (int t = 0; t < T; t++)
        for (int h = 0; h < H; h++)
            for (int d = 0; d < D; d++)
                formula[(t * H + h) * D + d] = (float)(sin(0.37 * t + 1.3 * h + 0.11 * d) * (1 + 0.01 * d));
    size_t dims[3] = {T, H, D};
    check_same("input_formula_T37_H3_D64 equals the README formula", input_x, formula, (size_t)T * H * D, CHECK_F32,
               dims, 3);
    posenc_array_free(&shape);
    test_inv_freq();
    test_hf_tables();
    test_hf_apply();
    test_ggml();
    test_deepseek();
    cJSON_Delete(manifest);
    return check_finish();
}
