/* test_rope_config.c: model configuration import. config.json fixtures for
 * six real model families (values copied from their published configs),
 * GGUF headers built here byte by byte, and malformed / hostile inputs
 * (every truncation of a valid GGUF, huge lengths and counts, nested
 * arrays, deep JSON nesting). */
#include "check.h"

#include <pthread.h>
#include <stdbool.h>

static posenc_model_config parse_json(const char *text, posenc_status want, const char *label) {
    posenc_model_config c;
    posenc_error err = {0};
    posenc_status st = posenc_config_parse_hf_json(text, strlen(text), &c, &err);
    CHECK(st == want, "%s: %s%s%s", label, posenc_strerror(st), err.message[0] ? ": " : "", err.message);
    return c;
}

static double inv_at(const posenc_rope_params *p, int k, double *att) {
    double inv[512];
    posenc_error err = {0};
    if (posenc_rope_frequencies(p, 0, inv, 512, att, &err) != POSENC_OK) {
        printf("FAIL: frequencies: %s\n", err.message);
        exit(EXIT_FAILURE);
    }
    return inv[k];
}

static void test_models(void) {
    double att;
    posenc_model_config c = parse_json(
        "{\"architectures\":[\"LlamaForCausalLM\"],\"model_type\":\"llama\",\"hidden_size\":4096,"
        "\"num_attention_heads\":32,\"num_key_value_heads\":8,\"max_position_embeddings\":131072,"
        "\"rope_theta\":500000.0,\"rope_scaling\":{\"factor\":8.0,\"low_freq_factor\":1.0,\"high_freq_factor\":4.0,"
        "\"original_max_position_embeddings\":8192,\"rope_type\":\"llama3\"}}",
        POSENC_OK, "Llama 3.1 8B config.json");
    double k29 = inv_at(&c.rope, 29, &att);
    CHECK(c.rope.scaling == POSENC_ROPE_LLAMA3 && c.rope.head_dim == 128 && c.rope.base == 500000 &&
              c.rope.factor == 8 && c.rope.original_max_position == 8192 && c.layout == POSENC_LAYOUT_HALF &&
              fabs(k29 - 2.166570764e-03) < 1e-11 && att == 1.0,
          "  llama3 f8 L0 8192, head 128, half split; inv_29 = %.9e (conventions 2.166570764e-03)", k29);
    CHECK(c.warnings == POSENC_CONFIG_WARN_FACTOR_MISMATCH, "  warns factor 8 x 8192 != 131072 (warnings 0x%x)", c.warnings);
    posenc_model_config_free(&c);

    c = parse_json("{\"model_type\":\"mistral\",\"hidden_size\":4096,\"num_attention_heads\":32,\"head_dim\":128,"
                   "\"max_position_embeddings\":32768,\"rope_theta\":1000000.0,\"rope_scaling\":null}",
                   POSENC_OK, "Mistral 7B v0.3 config.json");
    CHECK(c.rope.scaling == POSENC_ROPE_NONE && c.rope.base == 1e6 && c.rope.head_dim == 128 && c.warnings == 0 &&
              fabs(inv_at(&c.rope, 1, &att) - pow(1e6, -2.0 / 128)) < 1e-17,
          "  theta 1e6, no scaling, no warnings (0x%x)", c.warnings);
    posenc_model_config_free(&c);

    c = parse_json("{\"model_type\":\"qwen2\",\"hidden_size\":3584,\"num_attention_heads\":28,"
                   "\"max_position_embeddings\":32768,\"rope_theta\":1000000.0,"
                   "\"rope_scaling\":{\"factor\":4.0,\"original_max_position_embeddings\":32768,\"type\":\"yarn\"}}",
                   POSENC_OK, "Qwen2.5 7B (yarn) config.json");
    inv_at(&c.rope, 0, &att);
    CHECK(c.rope.scaling == POSENC_ROPE_YARN && c.rope.head_dim == 128 && c.rope.original_max_position == 32768 &&
              c.rope.factor == 4 && fabs(att - 1.138629436111989) < 1e-15 && c.rope.truncate == 1,
          "  yarn f4 L0 32768 head 128, attention %.15f (0.1 ln 4 + 1)", att);
    posenc_model_config_free(&c);

    char phi[8192];
    int n = snprintf(phi, sizeof phi,
                     "{\"model_type\":\"phi3\",\"hidden_size\":3072,\"num_attention_heads\":32,"
                     "\"max_position_embeddings\":131072,\"original_max_position_embeddings\":4096,"
                     "\"rope_theta\":10000.0,\"rope_scaling\":{\"type\":\"longrope\",\"short_factor\":[");
    for (int i = 0; i < 48; i++) n += snprintf(phi + n, sizeof phi - (size_t)n, "%s%.2f", i ? "," : "", 1.0 + 0.01 * i);
    n += snprintf(phi + n, sizeof phi - (size_t)n, "],\"long_factor\":[");
    for (int i = 0; i < 48; i++) n += snprintf(phi + n, sizeof phi - (size_t)n, "%s%.2f", i ? "," : "", 1.0 + 0.5 * i);
    snprintf(phi + n, sizeof phi - (size_t)n, "]}}");
    c = parse_json(phi, POSENC_OK, "Phi-3 mini 128k (longrope) config.json");
    double short_inv = inv_at(&c.rope, 47, &att);
    CHECK(c.rope.scaling == POSENC_ROPE_LONGROPE && c.rope.head_dim == 96 && c.rope.factors_count == 48 &&
              c.rope.factor == 32 && c.rope.original_max_position == 4096 &&
              fabs(att - sqrt(1 + log(32.0) / log(4096.0))) < 1e-15 &&
              fabs(short_inv - pow(1e4, -94.0 / 96) / 1.47) < 1e-18,
          "  longrope 48 pairs, factor 131072/4096 = %g, attention %.9f, short inv_47 %.6e", c.rope.factor, att, short_inv);
    posenc_model_config_free(&c);

    c = parse_json("{\"model_type\":\"deepseek_v3\",\"hidden_size\":7168,\"num_attention_heads\":128,"
                   "\"qk_rope_head_dim\":64,\"qk_nope_head_dim\":128,\"max_position_embeddings\":163840,"
                   "\"rope_theta\":10000,\"rope_scaling\":{\"beta_fast\":32,\"beta_slow\":1,\"factor\":40,"
                   "\"mscale\":1.0,\"mscale_all_dim\":1.0,\"original_max_position_embeddings\":4096,\"type\":\"yarn\"}}",
                   POSENC_OK, "DeepSeek-V3 (yarn + mscale) config.json");
    inv_at(&c.rope, 0, &att);
    double mscale = 0.1 * log(40.0) + 1;
    /* manifest deepseek_v3_apply_rotary_v3default: mla_softmax_scale = 192^-0.5 * mscale^2 = 0.1352337788608801 */
    CHECK(c.rope.head_dim == 64 && att == 1.0 && fabs(c.softmax_scale_factor - mscale * mscale) < 1e-15 &&
              fabs(pow(192, -0.5) * c.softmax_scale_factor - 0.1352337788608801) < 1e-15 &&
              c.layout == POSENC_LAYOUT_INTERLEAVED && c.warnings == 0,
          "  rope dim 64, cos/sin factor %.3f, softmax factor %.6f (192^-0.5 x it = DeepSeek's 0.135233779), interleaved",
          att, c.softmax_scale_factor);
    const char *dir = check_golden_dir();
    if (dir) { /* imported config -> table == DeepSeek's own freqs_cis (rows 0..36) */
        posenc_array shape;
        double *want = check_load_golden(dir, "deepseek_v3_freqs_cis_v3default", &shape);
        float cs[37 * 32], sn[37 * 32];
        posenc_positions pos = posenc_positions_range(0, 37);
        posenc_error err = {0};
        posenc_rope_table_f32(&c.rope, 0, &pos, 0, cs, sn, 37 * 32, &err);
        double got[37 * 32 * 2]; /* the golden's [37][32][cos, sin] layout */
        for (int i = 0; i < 37 * 32; i++) got[2 * i] = cs[i], got[2 * i + 1] = sn[i];
        size_t dims[3] = {37, 32, 2};
        check_near("  table from the imported config vs deepseek_v3_freqs_cis_v3default, tol 1e-5 (float32 peer angles, "
                   "README)", got, want, 37 * 32 * 2, dims, 3, 1e-5, 0);
        free(want);
    }
    posenc_model_config_free(&c);

    c = parse_json("{\"model_type\":\"gpt_neox\",\"hidden_size\":6144,\"num_attention_heads\":64,\"rotary_pct\":0.25,"
                   "\"rotary_emb_base\":10000,\"max_position_embeddings\":2048}",
                   POSENC_OK, "GPT-NeoX 20B (partial 0.25) config.json");
    int32_t r = 0;
    posenc_rope_check(&c.rope, &r, NULL);
    CHECK(c.rope.head_dim == 96 && r == 24 && c.rope.base == 10000 && !(c.warnings & POSENC_CONFIG_WARN_NO_THETA),
          "  head 96, rotary 24 (int(96 x 0.25)), base from rotary_emb_base (warnings 0x%x)", c.warnings);
    posenc_model_config_free(&c);

    /* no generic reading since issue 23: a family fills the absent theta and says so */
    c = parse_json("{\"model_type\":\"llama\",\"hidden_size\":4160,\"num_attention_heads\":64,\"rotary_dim\":64}",
                   POSENC_OK, "odd head 65 with rotary 64, no theta");
    CHECK((c.warnings & POSENC_CONFIG_WARN_ODD_PASSTHROUGH) && strstr(c.defaults_used, "rope_theta=10000") &&
              strstr(c.defaults_used, "max_position_embeddings=2048"),
          "  warns: odd pass-through; theta and max positions from the class defaults (%s)", c.defaults_used);
    posenc_model_config_free(&c);
    c = parse_json("{\"model_type\":\"qwen2_vl\",\"text_config\":{\"hidden_size\":1536,\"num_attention_heads\":12,"
                   "\"rope_theta\":1000000,\"max_position_embeddings\":32768,"
                   "\"rope_scaling\":{\"type\":\"mrope\",\"mrope_section\":[16,24,24]}}}",
                   POSENC_OK, "Qwen2-VL (text_config, mrope)");
    CHECK(c.rope.head_dim == 128 && c.rope.base == 1e6 && c.rope.scaling == POSENC_ROPE_NONE,
          "  text_config read: head 128, theta 1e6, mrope = no rescaling");
    posenc_model_config_free(&c);
    {   /* Qwen3-VL: the composite reads text_config (its top-level rope_theta is not HF's), interleaved M-RoPE;
         * the model's rope maps pairs as HF's apply_interleaved_mrope: h at 1,4,..,58, w at 2,5,..,59, t else */
        const char *q3 = "{\"model_type\":\"qwen3_vl\",\"rope_theta\":10000,\"text_config\":{\"model_type\":"
                         "\"qwen3_vl_text\",\"hidden_size\":4096,\"num_attention_heads\":32,\"head_dim\":128,"
                         "\"rope_theta\":5000000,\"rope_scaling\":{\"mrope_interleaved\":true,\"mrope_section\":[24,20,20],"
                         "\"rope_type\":\"default\"}}}";
        c = parse_json(q3, POSENC_OK, "Qwen3-VL (text_config, interleaved mrope)");
        CHECK(c.rope.head_dim == 128 && c.rope.base == 5e6 && c.mrope_interleaved == 1 && c.mrope_sections[0] == 24 &&
                  c.mrope_sections[1] == 20 && c.mrope_sections[2] == 20 && strcmp(c.family, "qwen3_vl") == 0,
              "  text_config read: head 128, theta 5e6 (not the top level's 1e4), sections 24/20/20 interleaved");
        posenc_model_config_free(&c);
        posenc_model m;
        posenc_error err = {0};
        int32_t axis[64];
        double inv[64];
        bool mapped = posenc_model_parse_hf_json(q3, strlen(q3), NULL, &m, &err) == POSENC_OK &&
                      m.ropes[0].mrope.kind == POSENC_MROPE_INTERLEAVED && m.ropes[0].mrope.axes == 3 &&
                      posenc_mrope_pair_map(&m.ropes[0].params, &m.ropes[0].mrope, axis, inv, 64, &err) == POSENC_OK;
        int counts[3] = {0, 0, 0};
        for (int k = 0; mapped && k < 64; k++) counts[axis[k]]++;
        CHECK(mapped && axis[1] == 1 && axis[58] == 1 && axis[2] == 2 && axis[59] == 2 && axis[60] == 0 &&
                  axis[61] == 0 && axis[62] == 0 && axis[63] == 0 && counts[0] == 24 && counts[1] == 20 && counts[2] == 20,
              "  model rope: interleaved, h at 1..58 step 3, w at 2..59 step 3, leftover 61-62 on t (24/20/20 pairs) %s",
              err.message);
        if (mapped) posenc_model_free(&m);
    }
    c = parse_json("{\"model_type\":\"llama\",\"hidden_size\":512,\"num_attention_heads\":8,\"rope_parameters\":{\"full_attention\":"
                   "{\"rope_type\":\"linear\",\"factor\":2.0,\"rope_theta\":20000},\"sliding_attention\":"
                   "{\"rope_type\":\"default\",\"rope_theta\":10000}}}",
                   POSENC_OK, "rope_parameters per layer type (HF 2025)");
    CHECK(c.rope.scaling == POSENC_ROPE_LINEAR && c.rope.factor == 2 && c.rope.base == 20000,
          "  full_attention dict used: linear f2, theta 20000");
    posenc_model_config_free(&c);
}

static void test_bad_json(void) {
    static const struct {
        const char *text;
        posenc_status want;
        const char *needle;
    } cases[] = {
        {"{\"model_type\":\"llama\",\"hidden_size\":512,\"num_attention_heads\":8,\"rope_scaling\":{\"type\":\"ntk-by-parts\",\"factor\":2}}",
         POSENC_ERR_UNSUPPORTED, "ntk-by-parts"},
        {"{\"model_type\":\"llama\",\"hidden_size\":512,\"num_attention_heads\":8,\"rope_theta\":\"1e6\"}", POSENC_ERR_FORMAT, "rope_theta"},
        {"{\"model_type\":\"llama\",\"hidden_size\":512,\"num_attention_heads\":8,\"rope_theta\":1e4", POSENC_ERR_FORMAT, "not valid JSON"},
        {"[1,2,3]", POSENC_ERR_FORMAT, "JSON object"},
        {"{\"model_type\":\"llama\",\"hidden_size\":0,\"rope_theta\":10000}", POSENC_ERR_FORMAT, "head_dim"},
        {"{\"model_type\":\"llama\",\"hidden_size\":512,\"num_attention_heads\":8,\"rope_scaling\":{\"type\":\"linear\",\"factor\":0}}",
         POSENC_ERR_INVALID_ARGUMENT, "factor"},
        {"{\"model_type\":\"llama\",\"hidden_size\":512,\"num_attention_heads\":8,\"rope_scaling\":{\"type\":\"linear\",\"factor\":-2}}",
         POSENC_ERR_INVALID_ARGUMENT, "got -2"},
        {"{\"model_type\":\"llama\",\"hidden_size\":512,\"num_attention_heads\":8,\"rope_scaling\":{\"type\":\"yarn\",\"factor\":0.5,"
         "\"original_max_position_embeddings\":4096}}", POSENC_ERR_INVALID_ARGUMENT, ">= 1"},
        {"{\"model_type\":\"llama\",\"hidden_size\":512,\"num_attention_heads\":8,\"rope_scaling\":{\"type\":\"yarn\",\"factor\":4,"
         "\"beta_fast\":1,\"beta_slow\":32,\"original_max_position_embeddings\":4096}}", POSENC_ERR_INVALID_ARGUMENT,
         "beta_fast"},
        {"{\"model_type\":\"llama\",\"hidden_size\":512,\"num_attention_heads\":8,\"rope_scaling\":{\"rope_type\":\"llama3\",\"factor\":8}}",
         POSENC_ERR_INVALID_ARGUMENT, "original_max_position"},
        {"{\"model_type\":\"llama\",\"hidden_size\":512,\"num_attention_heads\":8,\"max_position_embeddings\":8192,"
         "\"original_max_position_embeddings\":4096,\"rope_scaling\":{\"type\":\"longrope\","
         "\"short_factor\":[1,1,1],\"long_factor\":[1,1,1]}}", POSENC_ERR_INVALID_ARGUMENT, "got 3"},
        {"{\"model_type\":\"llama\",\"hidden_size\":512,\"num_attention_heads\":8,\"rope_scaling\":{\"type\":\"longrope\","
         "\"short_factor\":[1,\"x\"],\"long_factor\":[1,1]}}", POSENC_ERR_FORMAT, "short_factor'[1]"},
        {"{\"model_type\":\"phi3\",\"hidden_size\":512,\"num_attention_heads\":8,\"partial_rotary_factor\":0.3}", POSENC_ERR_INVALID_ARGUMENT,
         "got 19"},
        /* Llama's rotary class never reads the factor (HF rotates the whole head, vLLM the fraction): refused */
        {"{\"model_type\":\"llama\",\"hidden_size\":512,\"num_attention_heads\":8,\"partial_rotary_factor\":0.5}", POSENC_ERR_UNSUPPORTED,
         "Llama rotary class does not read it"},
        {"{\"model_type\":\"llama\",\"head_dim\":64,\"rotary_dim\":80}", POSENC_ERR_INVALID_ARGUMENT, "got 80"},
        {"{\"model_type\":\"llama\",\"hidden_size\":1e300,\"num_attention_heads\":8}", POSENC_ERR_FORMAT, "hidden_size"},
        {"{\"model_type\":\"llama\",\"hidden_size\":512,\"num_attention_heads\":8,\"rope_scaling\":[1]}", POSENC_ERR_FORMAT, "rope_scaling"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        posenc_model_config c;
        posenc_error err = {0};
        posenc_status st = posenc_config_parse_hf_json(cases[i].text, strlen(cases[i].text), &c, &err);
        CHECK(st == cases[i].want && strstr(err.message, cases[i].needle),
              "bad config.json rejected [%s]: %s", posenc_strerror(st), err.message);
        posenc_model_config_free(&c);
    }
    /* deep nesting and a huge factor list */
    size_t depth = 5000;
    char *deep = malloc(2 * depth + 64);
    size_t n = (size_t)sprintf(deep, "{\"a\":");
    for (size_t i = 0; i < depth; i++) deep[n++] = '[';
    for (size_t i = 0; i < depth; i++) deep[n++] = ']';
    strcpy(deep + n, "}");
    posenc_model_config c;
    posenc_error err = {0};
    posenc_status st = posenc_config_parse_hf_json(deep, strlen(deep), &c, &err);
    CHECK(st == POSENC_ERR_FORMAT, "5000-deep nested arrays rejected: %s", err.message);
    free(deep);
    size_t big = 70000 * 2 + 200;
    char *list = malloc(2 * big);
    n = (size_t)sprintf(list, "{\"model_type\":\"llama\",\"hidden_size\":512,\"num_attention_heads\":8,\"rope_scaling\":{\"type\":\"longrope\",\"short_factor\":[");
    for (int i = 0; i < 70000; i++) n += (size_t)sprintf(list + n, "%s1", i ? "," : "");
    strcpy(list + n, "],\"long_factor\":[1]}}");
    st = posenc_config_parse_hf_json(list, strlen(list), &c, &err);
    CHECK(st == POSENC_ERR_LIMIT, "70000-entry factor list refused: %s", err.message);
    free(list);
}

/* ---- GGUF built by hand ---- */
#include "gguf_writer.h"

static void header(gguf_buf *b, uint32_t version, uint64_t tensors, uint64_t kvs) {
    gguf_header(b, version, tensors, kvs);
}

/* A Llama 3.1 GGUF header: vocabulary array to skip, rope_freqs tensor info. */
static void llama_gguf(gguf_buf *b) {
    header(b, 3, 2, 8);
    kv_str(b, "general.architecture", "llama");
    str(b, "tokenizer.ggml.tokens");
    u32(b, 9);
    u32(b, 8);
    u64(b, 3);
    str(b, "<s>");
    str(b, "hello");
    str(b, "</s>");
    kv_f32(b, "llama.rope.freq_base", 500000.0f);
    kv_u32(b, "llama.rope.dimension_count", 128);
    kv_u32(b, "llama.context_length", 131072);
    kv_u32(b, "llama.attention.head_count", 32);
    kv_u32(b, "llama.embedding_length", 4096);
    str(b, "tokenizer.ggml.scores"); /* f32 array */
    u32(b, 9);
    u32(b, 6);
    u64(b, 3);
    for (int i = 0; i < 3; i++) u32(b, 0);
    str(b, "token_embd.weight"); /* tensor infos */
    u32(b, 2);
    u64(b, 4096);
    u64(b, 128256);
    u32(b, 0);
    u64(b, 0);
    str(b, "rope_freqs.weight");
    u32(b, 1);
    u64(b, 64);
    u32(b, 0);
    u64(b, 0);
    while (b->n % 32) put(b, "", 1); /* data section: aligned to 32 */
    for (int k = 0; k < 64; k++) { /* Llama 3.1's divisors: 1 .. 8 */
        float v = k < 29 ? 1.0f : k > 34 ? 8.0f : 1.0f + (float)(k - 28);
        put(b, &v, 4);
    }
}

static void test_gguf(void) {
    gguf_buf *b = malloc(sizeof *b);
    posenc_model_config c;
    posenc_error err = {0};
    llama_gguf(b);
    posenc_status st = posenc_config_parse_gguf(b->buf, b->n, &c, &err);
    CHECK(st == POSENC_OK && c.rope.base == 500000 && c.rope.head_dim == 128 && c.rope.rotary_dim == 128 &&
              c.max_position_embeddings == 131072 && c.layout == POSENC_LAYOUT_INTERLEAVED &&
              (c.warnings & POSENC_CONFIG_WARN_FREQ_TENSOR) && strcmp(c.architecture, "llama") == 0,
          "Llama GGUF header: theta 5e5, head 128, ctx 131072, NORMAL (interleaved), rope_freqs tensor applied (%s)",
          err.message);
    posenc_model_config_free(&c);
    /* every truncation inside the key/value section fails cleanly; past it, parsing succeeds */
    size_t data_end = b->n, bad = 0, tensors_start = 0;
    for (size_t i = 0; i + 17 < b->n; i++)
        if (memcmp(b->buf + i, "token_embd.weight", 17) == 0) tensors_start = i - 8;
    size_t infos_stop = tensors_start + (8 + 17 + 4 + 16 + 4 + 8) + (8 + 17 + 4 + 8 + 4 + 8);
    for (size_t cut = 0; cut < b->n; cut++) {
        posenc_error e2 = {0};
        st = posenc_config_parse_gguf(b->buf, cut, &c, &e2);
        /* inside the key/values: FORMAT; inside the tensor infos: the header alone is fine (no tensor
         * seen completely); once rope_freqs is listed its data must be there */
        posenc_status want = cut < tensors_start ? POSENC_ERR_FORMAT : cut < infos_stop ? POSENC_OK
                             : cut < data_end ? POSENC_ERR_FORMAT : POSENC_OK;
        if (st != want) bad++;
        posenc_model_config_free(&c);
    }
    CHECK(bad == 0, "all %zu truncations: FORMAT inside the key/values (< %zu), OK inside the tensor infos (< %zu), "
          "FORMAT before the rope_freqs data ends (%zu wrong)", b->n, tensors_start, infos_stop, bad);
    /* write it and read through posenc_config_read (file path, piece by piece) */
    const char *path = "test_rope_config_fixture.gguf";
    const void *parts[1] = {b->buf};
    size_t sizes[1] = {b->n};
    posenc_file_write_atomic(path, parts, sizes, 1, &err);
    st = posenc_config_read(path, 0, &c, &err);
    CHECK(st == POSENC_OK && c.format == POSENC_CONFIG_GGUF && c.rope.base == 500000 && c.rope.factors_count == 64 &&
              c.rope.long_factors[63] == 8.0,
          "posenc_config_read on a .gguf file: rope_freqs.weight read from disk (%s)", err.message);
    posenc_model_config_free(&c);
    remove(path);

    header(b, 3, 0, 7);
    kv_str(b, "general.architecture", "qwen2");
    kv_f32(b, "qwen2.rope.freq_base", 1e6f);
    kv_u32(b, "qwen2.attention.head_count", 28);
    kv_u32(b, "qwen2.embedding_length", 3584);
    kv_str(b, "qwen2.rope.scaling.type", "yarn");
    kv_f32(b, "qwen2.rope.scaling.factor", 4.0f);
    kv_u32(b, "qwen2.rope.scaling.original_context_length", 32768);
    st = posenc_config_parse_gguf(b->buf, b->n, &c, &err);
    double att = 0;
    if (st == POSENC_OK) inv_at(&c.rope, 0, &att);
    CHECK(st == POSENC_OK && c.rope.scaling == POSENC_ROPE_YARN && c.rope.head_dim == 128 && c.rope.factor == 4 &&
              c.rope.original_max_position == 32768 && c.layout == POSENC_LAYOUT_HALF && fabs(att - 1.138629436) < 1e-9 &&
              (c.warnings & POSENC_CONFIG_WARN_NO_MAX_POSITION),
          "Qwen2 yarn GGUF: head 3584/28, factor 4, L0 32768, NEOX, attention %.9f (%s)", att, err.message);

    header(b, 3, 0, 7);
    kv_str(b, "general.architecture", "deepseek2");
    kv_u32(b, "deepseek2.rope.dimension_count", 64);
    kv_f32(b, "deepseek2.rope.freq_base", 10000.0f);
    kv_str(b, "deepseek2.rope.scaling.type", "yarn");
    kv_f32(b, "deepseek2.rope.scaling.factor", 40.0f);
    kv_u32(b, "deepseek2.rope.scaling.original_context_length", 4096);
    kv_f32(b, "deepseek2.rope.scaling.yarn_log_multiplier", 0.1f);
    st = posenc_config_parse_gguf(b->buf, b->n, &c, &err);
    CHECK(st == POSENC_OK && fabs(c.rope.mscale_all_dim - 1.0) < 1e-6 && c.rope.head_dim == 64 &&
              fabs(c.softmax_scale_factor - pow(0.1 * log(40.0) + 1, 2)) < 1e-6,
          "DeepSeek-V3 GGUF: yarn_log_multiplier 0.1 -> mscale_all_dim %.6f, softmax factor %.6f (%s)", c.rope.mscale_all_dim,
          c.softmax_scale_factor, err.message);

    /* hostile headers: nothing is allocated from these sizes */
    struct {
        const char *what;
        posenc_status want;
        const char *needle;
    } hostile[8] = {{"huge key length", POSENC_ERR_FORMAT, "key of"},
                    {"huge string value", POSENC_ERR_FORMAT, "claims"},
                    {"huge key count", POSENC_ERR_FORMAT, "key/value pairs"},
                    {"nested arrays", POSENC_ERR_FORMAT, "nested"},
                    {"huge array count", POSENC_ERR_FORMAT, "array elements"},
                    {"unknown value type", POSENC_ERR_FORMAT, "unknown value type 99"},
                    {"version 1", POSENC_ERR_UNSUPPORTED, "version 1"},
                    {"unknown scaling type", POSENC_ERR_UNSUPPORTED, "dynamic-ntk"}};
    for (int i = 0; i < 8; i++) {
        header(b, i == 6 ? 1 : 3, 0, i == 2 ? (uint64_t)1 << 40 : 2);
        kv_str(b, "general.architecture", "llama");
        switch (i) {
        case 0:
            u64(b, (uint64_t)1 << 40);
            break;
        case 1:
            str(b, "general.name");
            u32(b, 8);
            u64(b, UINT64_MAX - 3);
            break;
        case 3:
            str(b, "x.y");
            u32(b, 9);
            u32(b, 9);
            u64(b, 1);
            break;
        case 4:
            str(b, "x.y");
            u32(b, 9);
            u32(b, 12);
            u64(b, (uint64_t)1 << 61);
            break;
        case 5:
            str(b, "x.y");
            u32(b, 99);
            break;
        case 7:
            kv_str(b, "llama.rope.scaling.type", "dynamic-ntk");
            kv_u32(b, "llama.attention.key_length", 128);
            b->buf[16] = 3; /* kv count 3 */
            break;
        default:
            kv_u32(b, "llama.attention.key_length", 128);
        }
        posenc_error e2 = {0};
        st = posenc_config_parse_gguf(b->buf, b->n, &c, &e2);
        CHECK(st == hostile[i].want && strstr(e2.message, hostile[i].needle), "hostile GGUF (%s) rejected [%s]: %s",
              hostile[i].what, posenc_strerror(st), e2.message);
    }
    /* a config.json file through posenc_config_read */
    const char *json = "{\"model_type\":\"llama\",\"hidden_size\":512,\"num_attention_heads\":8,\"rope_theta\":1e4}";
    const char *jpath = "test_rope_config_fixture.json";
    const void *jp[1] = {json};
    size_t js[1] = {strlen(json)};
    posenc_file_write_atomic(jpath, jp, js, 1, &err);
    st = posenc_config_read(jpath, 0, &c, &err);
    CHECK(st == POSENC_OK && c.format == POSENC_CONFIG_HF_JSON && c.rope.head_dim == 64,
          "posenc_config_read on config.json (%s)", err.message);
    st = posenc_config_read(jpath, 10, &c, &err);
    CHECK(st == POSENC_ERR_LIMIT, "config.json larger than max_bytes refused: %s", err.message);
    remove(jpath);
    st = posenc_config_read("does-not-exist.json", 0, &c, &err);
    CHECK(st == POSENC_ERR_IO && strstr(err.message, "does-not-exist.json"), "missing file: %s", err.message);
    posenc_model_config_free(NULL);
    free(b);
}

/* Parses from several threads at once, results checked (TSan-clean under
 * -DPOSENC_TSAN=ON). cJSON's static error record lives in the uninstrumented
 * system library, so TSan cannot see races there: config_hf.c serialises the
 * parse call because cJSON's source writes that record on every parse. */
static void *parse_many(void *arg) {
    int *bad = arg;
    const char *good = "{\"model_type\":\"llama\",\"hidden_size\":4096,\"num_attention_heads\":32,\"rope_theta\":500000,"
                       "\"max_position_embeddings\":8192}";
    const char *broken = "{\"model_type\":\"llama\",\"hidden_size\":4096,";
    for (int i = 0; i < 300; i++) {
        posenc_model_config c;
        posenc_error err = {0};
        const char *text = i % 2 ? broken : good;
        posenc_status st = posenc_config_parse_hf_json(text, strlen(text), &c, &err);
        if (i % 2 ? st != POSENC_ERR_FORMAT : (st != POSENC_OK || c.rope.head_dim != 128 || c.rope.base != 500000)) (*bad)++;
        posenc_model_config_free(&c);
    }
    return NULL;
}

static void test_threads(void) {
    pthread_t th[4];
    int bad[4] = {0, 0, 0, 0};
    for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, parse_many, &bad[i]);
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    CHECK(bad[0] + bad[1] + bad[2] + bad[3] == 0, "4 threads x 300 parses (good and broken JSON): %d wrong results",
          bad[0] + bad[1] + bad[2] + bad[3]);
}

int main(void) {
    test_threads();
    test_models();
    test_bad_json();
    test_gguf();
    return check_finish();
}
