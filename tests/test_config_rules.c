/* test_config_rules.c: the rules of issue 12 that the family fixtures do not
 * reach: GGUF rope tensors (rope_freqs.weight, rope_factors_long/short.weight)
 * written here with their data, llama.cpp's per-architecture rules (deepseek2,
 * mistral3, gemma3), duplicate keys (GGUF refused, config.json last wins with
 * a warning), bad input naming the key, and posenc_rope_resolve giving the
 * flags the same derivations as the config path. */
#include "check.h"

#include "gguf_writer.h"

static void header(gguf_buf *b, uint64_t tensors, uint64_t kvs) { gguf_header(b, 3, tensors, kvs); }
static void tensor(gguf_buf *b, const char *name, uint64_t count, uint32_t type, uint64_t offset) {
    str(b, name);
    u32(b, 1);
    u64(b, count);
    u32(b, type);
    u64(b, offset);
}
static void data_f32(gguf_buf *b, const float *v, size_t n) {
    while (b->n % 32) put(b, "", 1);
    put(b, v, 4 * n);
}

static double inv_k(const posenc_rope_params *p, int64_t seq_len, int k, double *att) {
    double inv[256];
    posenc_error err = {0};
    if (posenc_rope_frequencies(p, seq_len, inv, 256, att, &err) != POSENC_OK) {
        printf("FAIL: frequencies: %s\n", err.message);
        return NAN;
    }
    return inv[k];
}

/* Phi-3 mini 128k GGUF: no scaling type, attn_factor, two 48-entry factor tensors */
static void phi3_gguf(gguf_buf *b, uint32_t long_type, uint64_t long_count, uint64_t long_offset) {
    header(b, 2, 7);
    kv_str(b, "general.architecture", "phi3");
    kv_f32(b, "phi3.rope.freq_base", 10000.0f);
    kv_u32(b, "phi3.rope.dimension_count", 96);
    kv_u32(b, "phi3.context_length", 131072);
    kv_u32(b, "phi3.rope.scaling.original_context_length", 4096);
    kv_f32(b, "phi3.rope.scaling.attn_factor", 1.19023807f);
    kv_u32(b, "phi3.attention.head_count", 32);
    tensor(b, "rope_factors_long.weight", long_count, long_type, long_offset);
    tensor(b, "rope_factors_short.weight", 48, 0, 256);
    float longs[64], shorts[48];
    for (int k = 0; k < 64; k++) longs[k] = 1.0f + 0.5f * (float)k;
    for (int k = 0; k < 48; k++) shorts[k] = 1.0f + 0.01f * (float)k;
    data_f32(b, longs, 64);
    size_t data = b->n - 256;
    b->n = data + 256;
    put(b, shorts, sizeof shorts);
}

static void test_gguf_tensors(void) {
    gguf_buf *b = malloc(sizeof *b);
    posenc_model_config c;
    posenc_error err = {0};
    double att = 0;
    phi3_gguf(b, 0, 48, 0);
    posenc_status st = posenc_config_parse_gguf(b->buf, b->n, &c, &err);
    double short47 = st == POSENC_OK ? inv_k(&c.rope, 0, 47, &att) : 0;
    double long47 = st == POSENC_OK ? inv_k(&c.rope, 5000, 47, NULL) : 0;
    double want_s = pow(1e4, -94.0 / 96) / (double)(1.0f + 0.47f), want_l = pow(1e4, -94.0 / 96) / 24.5;
    CHECK(st == POSENC_OK && c.rope.scaling == POSENC_ROPE_LONGROPE && c.rope.factor == 32 &&
              fabs(short47 / want_s - 1) < 1e-15 && fabs(long47 / want_l - 1) < 1e-15 &&
              fabs(att - (double)1.19023807f) < 1e-15 && c.layout == POSENC_LAYOUT_HALF,
          "Phi-3 GGUF: rope_factors_short/long read from the data section: inv_47 short %.9e (rel err %.1e), long "
          "%.9e at seq 5000 (rel err %.1e), factor %g, magnitude %.9f (%s)", short47, fabs(short47 / want_s - 1),
          long47, fabs(long47 / want_l - 1), c.rope.factor, att, err.message);
    posenc_model_config_free(&c);
    static const struct {
        uint32_t type;
        uint64_t count, offset;
        size_t cut;
        const char *needle;
    } bad[] = {{1, 48, 0, 0, "must be F32"},
               {0, 47, 0, 0, "has 47 entries; rotary dim 96 needs 48"},
               {0, 48, 16, 0, "not a multiple of the alignment"},
               {0, 48, 1 << 20, 0, "outside the file"},
               {0, 48, 0, 200, "outside the file"},
               {0, 70000, 0, 0, "at most 65536"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        phi3_gguf(b, bad[i].type, bad[i].count, bad[i].offset);
        posenc_error e2 = {0};
        st = posenc_config_parse_gguf(b->buf, bad[i].cut ? b->n - bad[i].cut : b->n, &c, &e2);
        CHECK(st == POSENC_ERR_FORMAT && strstr(e2.message, bad[i].needle) && strstr(e2.message, "rope_factors_"),
              "bad rope tensor refused, naming it: %s", e2.message);
        posenc_model_config_free(&c);
    }
    /* Llama 3.1: rope_freqs.weight = per-pair divisors, magnitude 1 at every length */
    header(b, 1, 4);
    kv_str(b, "general.architecture", "llama");
    kv_f32(b, "llama.rope.freq_base", 500000.0f);
    kv_u32(b, "llama.rope.dimension_count", 128);
    kv_u32(b, "llama.context_length", 131072);
    tensor(b, "rope_freqs.weight", 64, 0, 0);
    float div[64];
    for (int k = 0; k < 64; k++) div[k] = k < 29 ? 1.0f : k > 34 ? 8.0f : 1.0f / (float)(1.0 - (k - 28) / 7.0 * 0.875);
    data_f32(b, div, 64);
    st = posenc_config_parse_gguf(b->buf, b->n, &c, &err);
    double w63 = st == POSENC_OK ? inv_k(&c.rope, 200000, 63, &att) : 0, want63 = pow(5e5, -126.0 / 128) / 8;
    CHECK(st == POSENC_OK && fabs(w63 / want63 - 1) < 1e-15 && att == 1.0 && (c.warnings & POSENC_CONFIG_WARN_FREQ_TENSOR),
          "Llama 3.1 GGUF: rope_freqs.weight applied, inv_63 = %.9e (base^(-126/128)/8, rel err %.1e), magnitude %g at "
          "seq 200000 (%s)", w63, fabs(w63 / want63 - 1), att, err.message);
    posenc_model_config_free(&c);
    free(b);
}

static void test_gguf_arch_rules(void) {
    gguf_buf *b = malloc(sizeof *b);
    posenc_model_config c;
    posenc_error err = {0};
    double att = 0;
    /* DeepSeek-V2-Lite (MLA, key_length 576 = kv_lora_rank 512 + rope 64) */
    header(b, 0, 10);
    kv_str(b, "general.architecture", "deepseek2");
    kv_f32(b, "deepseek2.rope.freq_base", 10000.0f);
    kv_u32(b, "deepseek2.rope.dimension_count", 64);
    kv_u32(b, "deepseek2.attention.key_length", 576);
    kv_u32(b, "deepseek2.attention.key_length_mla", 192);
    kv_u32(b, "deepseek2.context_length", 163840);
    kv_str(b, "deepseek2.rope.scaling.type", "yarn");
    kv_f32(b, "deepseek2.rope.scaling.factor", 40.0f);
    kv_u32(b, "deepseek2.rope.scaling.original_context_length", 4096);
    kv_f32(b, "deepseek2.rope.scaling.yarn_log_multiplier", 0.0707f);
    posenc_status st = posenc_config_parse_gguf(b->buf, b->n, &c, &err);
    if (st == POSENC_OK) inv_k(&c.rope, 0, 0, &att);
    double m = 0.1 * ((double)0.0707f / 0.1) * log(40.0) + 1;
    CHECK(st == POSENC_OK && fabs(att - 1.0) < 1e-15 && fabs(c.softmax_scale_factor - m * m) < 1e-12 &&
              c.rope.head_dim == 64 && c.rotary_offset == 512 && c.attention_head_dim == 576 && c.softmax_head_dim == 192 &&
              c.layout == POSENC_LAYOUT_INTERLEAVED,
          "DeepSeek-V2-Lite GGUF: magnitude %.15g (HF and llama.cpp: 1), softmax 1/sqrt(%d) x %.9f, rotated channels "
          "%d..%d of %d (the last 64) (%s)", att, c.softmax_head_dim, c.softmax_scale_factor, c.rotary_offset,
          c.rotary_offset + 63, c.attention_head_dim, err.message);
    posenc_model_config_free(&c);
    /* Ministral 3: mistral3 stores mscale_all_dim itself as the multiplier */
    header(b, 0, 8);
    kv_str(b, "general.architecture", "mistral3");
    kv_f32(b, "mistral3.rope.freq_base", 1e9f);
    kv_u32(b, "mistral3.rope.dimension_count", 128);
    kv_u32(b, "mistral3.context_length", 262144);
    kv_str(b, "mistral3.rope.scaling.type", "yarn");
    kv_f32(b, "mistral3.rope.scaling.factor", 16.0f);
    kv_u32(b, "mistral3.rope.scaling.original_context_length", 16384);
    kv_f32(b, "mistral3.rope.scaling.yarn_log_multiplier", 1.0f);
    st = posenc_config_parse_gguf(b->buf, b->n, &c, &err);
    if (st == POSENC_OK) inv_k(&c.rope, 0, 0, &att);
    CHECK(st == POSENC_OK && fabs(att - 1.0) < 1e-15 && c.softmax_scale_factor == 1.0,
          "Ministral-3 GGUF: magnitude %.15g, softmax factor %g (HF: 1 and 1) (%s)", att, c.softmax_scale_factor,
          err.message);
    posenc_model_config_free(&c);
    /* Gemma 3: freq_base_swa for the sliding layers, every 6th layer global */
    header(b, 0, 8);
    kv_str(b, "general.architecture", "gemma3");
    kv_f32(b, "gemma3.rope.freq_base", 1e6f);
    kv_f32(b, "gemma3.rope.freq_base_swa", 1e4f);
    kv_u32(b, "gemma3.attention.key_length", 128);
    kv_u32(b, "gemma3.block_count", 62);
    kv_u32(b, "gemma3.attention.sliding_window", 1024);
    kv_str(b, "gemma3.rope.scaling.type", "linear");
    kv_f32(b, "gemma3.rope.scaling.factor", 8.0f);
    st = posenc_config_parse_gguf(b->buf, b->n, &c, &err);
    CHECK(st == POSENC_OK && c.layer_type_count == 2 && c.layer_types[0].layers == 10 && c.layer_types[1].layers == 52 &&
              c.layer_types[0].rope.base == 1e6 && c.layer_types[0].rope.scaling == POSENC_ROPE_LINEAR &&
              c.layer_types[1].rope.base == 1e4 && c.layer_types[1].rope.scaling == POSENC_ROPE_NONE &&
              c.layer_types[1].sliding_window == 1024,
          "Gemma-3-27B GGUF: %d global layers (base 1e6, linear x8), %d sliding (freq_base_swa 1e4, unscaled, window "
          "%lld) (%s)", c.layer_types[0].layers, c.layer_types[1].layers, (long long)c.layer_types[1].sliding_window,
          err.message);
    posenc_model_config_free(&c);
    /* an original context past int64 (any numeric type is read): refused like context_length,
     * never converted (was undefined: 3e38 -> int64) */
    header(b, 0, 4);
    kv_str(b, "general.architecture", "llama");
    kv_u32(b, "llama.attention.key_length", 128);
    kv_str(b, "llama.rope.scaling.type", "yarn");
    kv_f32(b, "llama.rope.scaling.original_context_length", 3e38f);
    st = posenc_config_parse_gguf(b->buf, b->n, &c, &err);
    CHECK(st == POSENC_ERR_FORMAT && strstr(err.message, "llama.rope.scaling.original_context_length has an out-of-range value 3"),
          "GGUF original_context_length 3e38 refused: %s", err.message);
    if (st == POSENC_OK) posenc_model_config_free(&c);
    /* a key twice: refused, as ggml does */
    header(b, 0, 3);
    kv_str(b, "general.architecture", "llama");
    kv_f32(b, "llama.rope.freq_base", 1e4f);
    kv_f32(b, "llama.rope.freq_base", 5e5f);
    st = posenc_config_parse_gguf(b->buf, b->n, &c, &err);
    CHECK(st == POSENC_ERR_FORMAT && strstr(err.message, "llama.rope.freq_base") && strstr(err.message, "twice"),
          "GGUF with a duplicate key refused: %s", err.message);
    posenc_model_config_free(&c);
    header(b, 0, 3);
    kv_str(b, "general.architecture", "qwen2");
    kv_u32(b, "qwen2.attention.key_length", 128);
    kv_str(b, "qwen2.rope.scaling.type", "wobbly");
    st = posenc_config_parse_gguf(b->buf, b->n, &c, &err);
    CHECK(st == POSENC_ERR_UNSUPPORTED && strstr(err.message, "qwen2.rope.scaling.type") && strstr(err.message, "wobbly"),
          "unknown GGUF scaling type refused naming the key: %s", err.message);
    posenc_model_config_free(&c);
    free(b);
}

static void test_json_rules(void) {
    posenc_model_config c;
    posenc_error err = {0};
    const char *dup = "{\"model_type\":\"llama\",\"hidden_size\":4096,\"num_attention_heads\":32,"
                      "\"rope_theta\":10000,\"rope_theta\":500000}";
    posenc_status st = posenc_config_parse_hf_json(dup, strlen(dup), &c, &err);
    CHECK(st == POSENC_OK && c.rope.base == 500000 && (c.warnings & POSENC_CONFIG_WARN_DUPLICATE_KEY) &&
              strcmp(c.duplicate_key, "rope_theta") == 0,
          "config.json duplicate key: the last wins (base %g, as Python's json), warning names '%s'", c.rope.base,
          c.duplicate_key);
    posenc_model_config_free(&c);
    /* issue 23: an unknown model_type is refused by name, never read generically */
    const char *unknown = "{\"model_type\":\"mystery_lm\",\"hidden_size\":1024,\"num_attention_heads\":8,\"rope_theta\":2e5}";
    posenc_error eu = {0};
    st = posenc_config_parse_hf_json(unknown, strlen(unknown), &c, &eu);
    CHECK(st == POSENC_ERR_UNSUPPORTED && strstr(eu.message, "'mystery_lm'") && strstr(eu.message, "rope_theta") &&
              strstr(eu.message, "closest:"),
          "unknown model_type refused by name with its position keys and the closest families: %s", eu.message);
    posenc_model_config_free(&c);
    posenc_model mm;
    posenc_config_options assume = {"llama"};
    st = posenc_model_parse_hf_json(unknown, strlen(unknown), &assume, &mm, &err);
    CHECK(st == POSENC_OK && mm.assumed && strcmp(mm.assumed_family, "llama") == 0 &&
              (mm.config.warnings & POSENC_CONFIG_WARN_UNKNOWN_FAMILY) && strstr(mm.config.keys_used, "rope_theta") &&
              mm.config.rope.base == 2e5 && mm.layer_count == 32 && mm.layers[31].scheme == POSENC_LAYER_ROPE,
          "--assume llama: read on purpose, assumed, keys read listed (%s), 32 RoPE layers", mm.config.keys_used);
    posenc_model_free(&mm);
    posenc_config_options bogus = {"lama"};
    eu = (posenc_error){0};
    st = posenc_model_parse_hf_json(unknown, strlen(unknown), &bogus, &mm, &eu);
    CHECK(st == POSENC_ERR_INVALID_ARGUMENT && strstr(eu.message, "'lama'") && strstr(eu.message, "llama"),
          "assume_family not in the table: refused with the closest names: %s", eu.message);
    posenc_model_free(&mm);
    const char *nameless = "{\"hidden_size\":1024,\"num_attention_heads\":8,\"rope_theta\":2e5}";
    eu = (posenc_error){0};
    st = posenc_model_parse_hf_json(nameless, strlen(nameless), NULL, &mm, &eu);
    CHECK(st == POSENC_OK && mm.assumed && strcmp(mm.assumed_family, "generic") == 0 && !mm.config.layout_known &&
              (mm.config.warnings & POSENC_CONFIG_WARN_UNKNOWN_FAMILY),
          "no model_type, no class: HF's generic rope keys, marked assumed 'generic' (never silent)");
    posenc_model_free(&mm);
    /* issue 26 item 9: a NUL would cut the name short */
    const char *nul = "{\"model_type\":\"lla\\u0000ma\",\"hidden_size\":1024,\"num_attention_heads\":8}";
    eu = (posenc_error){0};
    st = posenc_config_parse_hf_json(nul, strlen(nul), &c, &eu);
    CHECK(st == POSENC_ERR_FORMAT && strstr(eu.message, "NUL"), "model_type with \\u0000 refused: %s", eu.message);
    const char *escaped = "{\"model_type\":\"llama\",\"note\":\"a\\\\u0000\",\"hidden_size\":1024,\"num_attention_heads\":8}";
    st = posenc_config_parse_hf_json(escaped, strlen(escaped), &c, &err);
    CHECK(st == POSENC_OK, "an escaped backslash before u0000 is text, not a NUL: accepted");
    posenc_model_config_free(&c);
    static const struct {
        const char *text, *needle;
    } bad[] = {
        {"{\"model_type\":\"llama\",\"hidden_size\":4096,\"num_attention_heads\":32,\"rope_theta\":1e4,"
         "\"rope_parameters\":{\"rope_type\":\"default\",\"rope_theta\":5e5}}", "'rope_theta' 10000 contradicts"},
        {"{\"model_type\":\"phi\",\"hidden_size\":2560,\"num_attention_heads\":32,\"rotary_dim\":16,"
         "\"partial_rotary_factor\":0.4}", "'rotary_dim' 16 contradicts 'partial_rotary_factor'"},
        /* int(head_dim * 1e300) would be an undefined conversion in C: compared in double */
        {"{\"model_type\":\"gpt_neox\",\"hidden_size\":256,\"num_attention_heads\":4,\"rotary_dim\":16,"
         "\"partial_rotary_factor\":1e300}", "'partial_rotary_factor' 1e+300 (head 64 -> 6.4e+301)"},
        {"{\"model_type\":\"phi3\",\"hidden_size\":3072,\"num_attention_heads\":32,\"max_position_embeddings\":131072,"
         "\"original_max_position_embeddings\":4096,\"rope_scaling\":{\"type\":\"longrope\","
         "\"original_max_position_embeddings\":8192,\"short_factor\":[1],\"long_factor\":[1]}}",
         "'original_max_position_embeddings' 4096 contradicts"},
        {"{\"model_type\":\"qwen2\",\"hidden_size\":4096,\"num_attention_heads\":32,\"rope_scaling\":{\"rope_type\":"
         "\"ntk-by-parts\",\"factor\":2}}", "rope 'rope_type' is 'ntk-by-parts'"},
        {"{\"model_type\":\"falcon\",\"hidden_size\":4544,\"n_head\":71,\"alibi\":true}", "'alibi' is true"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        posenc_error e2 = {0};
        st = posenc_config_parse_hf_json(bad[i].text, strlen(bad[i].text), &c, &e2);
        CHECK(st != POSENC_OK && strstr(e2.message, bad[i].needle), "bad config.json refused: %s", e2.message);
        posenc_model_config_free(&c);
    }
    /* Gemma: head_dim x heads != hidden_size is legal */
    const char *gemma = "{\"model_type\":\"gemma\",\"hidden_size\":3072,\"num_attention_heads\":16,\"head_dim\":256}";
    st = posenc_config_parse_hf_json(gemma, strlen(gemma), &c, &err);
    CHECK(st == POSENC_OK && c.rope.head_dim == 256, "Gemma-7B: head_dim 256 x 16 heads != hidden 3072 accepted");
    posenc_model_config_free(&c);
}

/* The flags' derivation is the config's: posenc_rope_resolve. */
static void test_resolve(void) {
    posenc_rope_params p;
    posenc_rope_params_default(&p, 96);
    double shorts[48], longs[48];
    for (int k = 0; k < 48; k++) shorts[k] = longs[k] = 1.0;
    p.scaling = POSENC_ROPE_LONGROPE;
    p.short_factors = shorts;
    p.long_factors = longs;
    p.factors_count = 48;
    p.original_max_position = 4096;
    p.max_position = 131072;
    posenc_error err = {0};
    double att = 0;
    posenc_status st = posenc_rope_resolve(&p, POSENC_ROPE_GIVEN_ORIGINAL, NULL, &err);
    if (st == POSENC_OK) inv_k(&p, 0, 0, &att);
    CHECK(st == POSENC_OK && p.factor == 32 && fabs(att - 1.1902380714238083) < 1e-15,
          "longrope --original-max 4096 --max-pos 131072: factor %g, attention %.10f (HF 32, 1.1902380714)", p.factor, att);
    posenc_rope_params_default(&p, 128);
    p.scaling = POSENC_ROPE_YARN;
    p.factor = 4;
    p.max_position = 32768;
    unsigned warnings = 0;
    st = posenc_rope_resolve(&p, POSENC_ROPE_GIVEN_FACTOR, &warnings, &err);
    CHECK(st == POSENC_OK && p.original_max_position == 32768 && (warnings & POSENC_CONFIG_WARN_NO_ORIGINAL),
          "yarn --factor 4 --max-pos 32768 without --original-max: L0 falls back to 32768 (%s)", err.message);
    posenc_rope_params_default(&p, 128);
    p.scaling = POSENC_ROPE_LINEAR;
    st = posenc_rope_resolve(&p, 0, NULL, &err);
    CHECK(st == POSENC_ERR_INVALID_ARGUMENT && strstr(err.message, "has no factor"), "linear without a factor: %s",
          err.message);
}


/* issue 23: llama.cpp's per-layer rules and refusals on tensor-less GGUF headers. */
static void small_gguf(gguf_buf *b, const char *arch, uint32_t blocks, int swa0) {
    char k[96];
    header(b, 0, swa0 ? 7 : 6);
    kv_str(b, "general.architecture", arch);
#define KEY(s) (snprintf(k, sizeof k, "%s.%s", arch, s), k)
    kv_u32(b, KEY("block_count"), blocks);
    kv_u32(b, KEY("context_length"), 2048);
    kv_u32(b, KEY("embedding_length"), 512);
    kv_u32(b, KEY("attention.head_count"), 8);
    kv_f32(b, KEY("rope.freq_base"), 10000.0f);
    if (swa0) kv_u32(b, KEY("attention.sliding_window"), 0);
#undef KEY
}

static void test_gguf_layers(void) {
    gguf_buf *b = malloc(sizeof *b);
    posenc_model m;
    posenc_error err = {0};
    small_gguf(b, "smollm3", 8, 0);
    posenc_status st = posenc_model_parse_gguf(b->buf, b->n, NULL, &m, &err);
    CHECK(st == POSENC_OK && m.layer_count == 8 && m.config.layout == POSENC_LAYOUT_INTERLEAVED &&
              m.layers[2].scheme == POSENC_LAYER_ROPE && m.layers[3].scheme == POSENC_LAYER_NOPE &&
              m.layers[7].scheme == POSENC_LAYER_NOPE && m.layers[4].scheme == POSENC_LAYER_ROPE,
          "smollm3 GGUF: NORM (interleaved), NoPE at layers 3 and 7 (n_no_rope_layer_step 4) (%s)", err.message);
    posenc_model_free(&m);
    small_gguf(b, "llama4", 8, 1);
    st = posenc_model_parse_gguf(b->buf, b->n, NULL, &m, &err);
    CHECK(st == POSENC_OK && m.layer_count == 8 && m.layers[3].scheme == POSENC_LAYER_ROPE,
          "llama4 GGUF with attention.sliding_window 0: RoPE in every layer (n_no_rope_layer_step = n_layer)");
    posenc_model_free(&m);
    small_gguf(b, "ernie4_5", 4, 0);
    st = posenc_model_parse_gguf(b->buf, b->n, NULL, &m, &err);
    CHECK(st == POSENC_OK && m.config.layout == POSENC_LAYOUT_INTERLEAVED && m.layers[3].scheme == POSENC_LAYER_ROPE,
          "ernie4_5 GGUF: NORM (interleaved), RoPE everywhere");
    posenc_model_free(&m);
    { /* glm4 with M-RoPE sections (llama.cpp then rotates it as MROPE): refused, not read interleaved */
        char k[96];
        header(b, 0, 7);
        kv_str(b, "general.architecture", "glm4");
        kv_u32(b, "glm4.block_count", 4);
        kv_u32(b, "glm4.context_length", 2048);
        kv_u32(b, "glm4.embedding_length", 512);
        kv_u32(b, "glm4.attention.head_count", 8);
        kv_f32(b, "glm4.rope.freq_base", 10000.0f);
        snprintf(k, sizeof k, "glm4.rope.dimension_sections");
        str(b, k);
        u32(b, 9 /* array */);
        u32(b, 5 /* int32 */);
        u64(b, 4);
        const uint32_t sections[4] = {8, 12, 12, 0};
        for (int i = 0; i < 4; i++) u32(b, sections[i]);
        posenc_error eg = {0};
        st = posenc_model_parse_gguf(b->buf, b->n, NULL, &m, &eg);
        CHECK(st == POSENC_ERR_UNSUPPORTED && strstr(eg.message, "rope.dimension_sections") &&
                  strstr(eg.message, "glm4"),
              "[G12] glm4 GGUF with M-RoPE sections refused by name, not read as interleaved RoPE: %s", eg.message);
        posenc_model_free(&m);
    }
    small_gguf(b, "bloom", 4, 0);
    st = posenc_model_parse_gguf(b->buf, b->n, NULL, &m, &err);
    CHECK(st == POSENC_OK && m.rope_count == 0 && m.layers[0].scheme == POSENC_LAYER_ALIBI && m.alibi_heads == 8 &&
              m.alibi_slopes[0] == 0.5 && m.alibi_slopes[7] == 1.0 / 256,
          "bloom GGUF: ALiBi in every layer, 8 heads, slopes 1/2 .. 1/256 from posenc's ALiBi (%s)", err.message);
    posenc_model_free(&m);
    posenc_model_config c;
    posenc_error e2 = {0};
    st = posenc_config_parse_gguf(b->buf, b->n, &c, &e2);
    CHECK(st == POSENC_ERR_UNSUPPORTED && strstr(e2.message, "no RoPE layer"), "bloom GGUF through the one-RoPE API: "
          "refused by scheme: %s", e2.message);
    small_gguf(b, "baichuan", 40, 0);
    st = posenc_model_parse_gguf(b->buf, b->n, NULL, &m, &err);
    CHECK(st == POSENC_OK && m.rope_count == 0 && m.layers[39].scheme == POSENC_LAYER_ALIBI,
          "baichuan GGUF with 40 blocks (13B): ALiBi");
    posenc_model_free(&m);
    small_gguf(b, "cohere2", 8, 0);
    st = posenc_model_parse_gguf(b->buf, b->n, NULL, &m, &err);
    CHECK(st == POSENC_OK && m.layers[2].scheme == POSENC_LAYER_ROPE && m.layers[3].scheme == POSENC_LAYER_NOPE,
          "cohere2 GGUF: RoPE in the SWA layers, none in layer 3");
    posenc_model_free(&m);
    small_gguf(b, "starcoder", 4, 0);
    e2 = (posenc_error){0};
    st = posenc_model_parse_gguf(b->buf, b->n, NULL, &m, &e2);
    CHECK(st == POSENC_ERR_UNSUPPORTED && strstr(e2.message, "'starcoder'") && strstr(e2.message, "closest:"),
          "unknown GGUF architecture refused by name: %s", e2.message);
    posenc_config_options o = {"llama"};
    st = posenc_model_parse_gguf(b->buf, b->n, &o, &m, &err);
    CHECK(st == POSENC_OK && m.assumed && strcmp(m.assumed_family, "llama") == 0 && m.config.rope.base == 10000,
          "--assume llama on the GGUF: read on purpose, assumed");
    posenc_model_free(&m);
    header(b, 0, 1);
    str(b, "general.architecture");
    u32(b, 8);
    u64(b, 5);
    put(b, "lla\0a", 5);
    e2 = (posenc_error){0};
    st = posenc_model_parse_gguf(b->buf, b->n, NULL, &m, &e2);
    CHECK(st == POSENC_ERR_FORMAT && strstr(e2.message, "NUL"), "[G11] GGUF architecture with a NUL byte refused: %s",
          e2.message);
    free(b);
}

/* issue 23: config.json layer rules that need no fixture file. */
static void test_json_layers(void) {
    posenc_model m;
    posenc_error err = {0};
    const char *smol = "{\"model_type\":\"smollm3\",\"num_hidden_layers\":8,\"no_rope_layer_interval\":4}";
    posenc_status st = posenc_model_parse_hf_json(smol, strlen(smol), NULL, &m, &err);
    CHECK(st == POSENC_OK && m.layer_count == 8 && m.layers[3].scheme == POSENC_LAYER_NOPE &&
              m.layers[4].scheme == POSENC_LAYER_ROPE && m.config.rope.base == 2e6,
          "SmolLM3: NoPE where (i+1) %% 4 == 0, base 2e6 class default (%s)", err.message);
    posenc_model_free(&m);
    const char *short_list = "{\"model_type\":\"smollm3\",\"num_hidden_layers\":8,\"no_rope_layers\":[1,1,1]}";
    posenc_error e2 = {0};
    st = posenc_model_parse_hf_json(short_list, strlen(short_list), NULL, &m, &e2);
    CHECK(st == POSENC_ERR_FORMAT && strstr(e2.message, "3 entries for 8 layers"), "[H11] short no_rope_layers refused: %s",
          e2.message);
    const char *flat = "{\"model_type\":\"llama\",\"max_position_embeddings\":131072,\"rope_scaling\":{\"rope_type\":"
                       "\"llama3\",\"factor\":16,\"low_freq_factor\":1,\"high_freq_factor\":1,"
                       "\"original_max_position_embeddings\":8192}}";
    st = posenc_model_parse_hf_json(flat, strlen(flat), NULL, &m, &err);
    CHECK(st == POSENC_OK && (m.config.warnings & POSENC_CONFIG_WARN_LLAMA3_FLAT),
          "llama3 with low_freq_factor == high_freq_factor: accepted with a warning (HF only warns) (%s)", err.message);
    if (st == POSENC_OK) {
        double w[64], w0[64];
        posenc_rope_params plain = m.config.rope;
        plain.scaling = POSENC_ROPE_NONE;
        posenc_rope_frequencies(&m.config.rope, 0, w, 64, NULL, &err);
        posenc_rope_frequencies(&plain, 0, w0, 64, NULL, &err);
        int kept = 0, divided = 0;
        for (int k = 0; k < 64; k++) {
            kept += w[k] == w0[k];
            divided += w[k] == w0[k] / 16;
        }
        CHECK(kept + divided == 64, "  every pair kept (%d) or divided by 16 (%d): no blend band", kept, divided);
    }
    posenc_model_free(&m);
    const char *hunyuan = "{\"model_type\":\"hunyuan_v1_dense\",\"hidden_size\":4096,\"num_attention_heads\":32,"
                          "\"head_dim\":128,\"rope_theta\":10000,\"rope_scaling\":{\"type\":\"dynamic\",\"alpha\":1000,"
                          "\"factor\":1}}";
    st = posenc_model_parse_hf_json(hunyuan, strlen(hunyuan), NULL, &m, &err);
    CHECK(st == POSENC_OK && m.config.rope.base == 10000.0 * pow(1000.0, 128.0 / 126.0) &&
              m.config.rope.scaling == POSENC_ROPE_NONE && m.ropes[0].dynamic_alpha == 1000,
          "Hunyuan alpha: base = theta * alpha^(d/(d-2)) = %.17g, static", m.config.rope.base);
    posenc_model_free(&m);
    const char *dbrx = "{\"model_type\":\"dbrx\",\"d_model\":6144,\"n_heads\":48,\"attn_config\":{\"rope_theta\":500000}}";
    st = posenc_model_parse_hf_json(dbrx, strlen(dbrx), NULL, &m, &err);
    CHECK(st == POSENC_OK && m.config.rope.base == 500000 && !strstr(m.config.defaults_used, "rope_theta"),
          "DBRX: rope_theta from attn_config (%s)", m.config.defaults_used);
    posenc_model_free(&m);
    const char *mpt = "{\"model_type\":\"mpt\",\"n_heads\":32,\"n_layers\":4,\"attn_config\":{\"alibi\":true,"
                      "\"alibi_bias_max\":16,\"rope_theta\":1}}";
    st = posenc_model_parse_hf_json(mpt, strlen(mpt), NULL, &m, &err);
    CHECK(st == POSENC_OK && m.rope_count == 0 && m.alibi_max_bias == 16 && fabs(m.alibi_slopes[0] - sqrt(0.5)) <= 1.2e-16 &&
              strstr(m.unused_keys, "attn_config.rope_theta"),
          "MPT: ALiBi with alibi_bias_max 16 (slope 0 = 2^-16/32), unused key listed: %s", m.unused_keys);
    posenc_model_free(&m);
    const char *falcon = "{\"model_type\":\"falcon\",\"hidden_size\":4544,\"num_attention_heads\":8,"
                         "\"num_hidden_layers\":2,\"alibi\":true}";
    st = posenc_model_parse_hf_json(falcon, strlen(falcon), NULL, &m, &err);
    CHECK(st == POSENC_OK && m.alibi_before_scale && m.alibi_slopes[0] == 0.5 && m.layers[1].scheme == POSENC_LAYER_ALIBI,
          "Falcon alibi: ALiBi layers, the bias added before the 1/sqrt(d) scale (modeling_falcon.py)");
    posenc_model_free(&m);
    const char *gptj = "{\"model_type\":\"gptj\",\"n_embd\":4096,\"n_head\":16}";
    st = posenc_model_parse_hf_json(gptj, strlen(gptj), NULL, &m, &err);
    CHECK(st == POSENC_OK && m.ropes[0].rotary_dim == 64 && strstr(m.config.defaults_used, "rotary_dim=64"),
          "GPT-J without rotary_dim: GPTJConfig's default 64 (%s)", m.config.defaults_used);
    posenc_model_free(&m);
    const char *dsv3 = "{\"model_type\":\"deepseek_v3\",\"rope_interleave\":false}";
    st = posenc_model_parse_hf_json(dsv3, strlen(dsv3), NULL, &m, &err);
    CHECK(st == POSENC_OK && m.config.layout == POSENC_LAYOUT_HALF && m.ropes[0].layout == POSENC_LAYOUT_HALF,
          "DeepSeek-V3 with rope_interleave false: half split (%s)", err.message);
    posenc_model_free(&m);
    const char *q3m = "{\"model_type\":\"qwen3_moe\"}";
    st = posenc_model_parse_hf_json(q3m, strlen(q3m), NULL, &m, &err);
    CHECK(st == POSENC_OK && m.config.rope.head_dim == 64, "Qwen3-MoE defaults: head 2048/32 = 64 (no head_dim field)");
    posenc_model_free(&m);
    const char *exa_str = "{\"model_type\":\"exaone4\",\"num_hidden_layers\":4,\"sliding_window_pattern\":\"LLLG\"}";
    posenc_error e3 = {0};
    st = posenc_model_parse_hf_json(exa_str, strlen(exa_str), NULL, &m, &e3);
    CHECK(st == POSENC_ERR_UNSUPPORTED && strstr(e3.message, "LLLG"), "[H11] EXAONE 4 string pattern without "
          "layer_types refused (HF's class cannot read it): %s", e3.message);
    const char *m3 = "{\"model_type\":\"mistral3\",\"hidden_size\":4096,\"num_attention_heads\":32,\"rope_theta\":1e6}";
    e3 = (posenc_error){0};
    st = posenc_model_parse_hf_json(m3, strlen(m3), NULL, &m, &e3);
    CHECK(st == POSENC_ERR_UNSUPPORTED && strstr(e3.message, "text_config"),
          "[H12] mistral3 without text_config refused (HF would use rope_theta 1e9, not the file's): %s", e3.message);
    const char *exa = "{\"model_type\":\"exaone4\",\"num_hidden_layers\":4,\"sliding_window\":null,"
                      "\"layer_types\":[\"full_attention\",\"full_attention\",\"full_attention\",\"full_attention\"]}";
    st = posenc_model_parse_hf_json(exa, strlen(exa), NULL, &m, &err);
    CHECK(st == POSENC_OK && m.layers[3].scheme == POSENC_LAYER_ROPE, "EXAONE 4 without a window: RoPE everywhere");
    posenc_model_free(&m);
    /* without layer_types HF's Exaone4Config computes (i + 1) % 0: it cannot load this config */
    const char *exa0 = "{\"model_type\":\"exaone4\",\"num_hidden_layers\":4,\"sliding_window\":null}";
    e3 = (posenc_error){0};
    st = posenc_model_parse_hf_json(exa0, strlen(exa0), NULL, &m, &e3);
    CHECK(st == POSENC_ERR_UNSUPPORTED && strstr(e3.message, "'sliding_window' is null"),
          "EXAONE 4 with sliding_window null and no layer_types refused (HF raises ZeroDivisionError): %s",
          e3.message);
}

/* issue 40, cases 6-8: per-layer words and sizes read strictly, one rule for both readers. */
static void test_strict_words_and_sizes(void) {
    posenc_model m;
    static const char *const gemma3 = "{\"model_type\":\"gemma3_text\",\"num_hidden_layers\":2,\"layer_types\":"
                                      "[\"sliding_attention\",\"%s\"]}";
    static const char *const cohere2 = "{\"model_type\":\"cohere2\",\"num_hidden_layers\":2,\"sliding_window\":"
                                       "4096,\"layer_types\":[\"sliding_attention\",\"%s\"]}";
    static const char *const words[] = {"Sliding_Attention", "global", "bogus", "full_attention "};
    for (int fam = 0; fam < 2; fam++)
        for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
            char text[400];
            snprintf(text, sizeof text, fam ? cohere2 : gemma3, words[i]);
            posenc_error e = {0};
            posenc_status st = posenc_model_parse_hf_json(text, strlen(text), NULL, &m, &e);
            CHECK(st == POSENC_ERR_UNSUPPORTED && strstr(e.message, "layer_types[1]") && strstr(e.message, words[i]),
                  "[H11] %s layer_types word '%s' refused by name, not read as full attention / NoPE: %s",
                  fam ? "cohere2" : "gemma3_text", words[i], e.message);
            if (st == POSENC_OK) posenc_model_free(&m);
        }
    static const char *const zero[] = {
        "{\"model_type\":\"gemma3_text\",\"num_hidden_layers\":6,\"sliding_window_pattern\":0}",
        "{\"model_type\":\"gemma2\",\"num_hidden_layers\":6,\"sliding_window_pattern\":0}",
        "{\"model_type\":\"cohere2\",\"num_hidden_layers\":6,\"sliding_window\":4096,\"sliding_window_pattern\":0}"};
    for (size_t i = 0; i < sizeof zero / sizeof zero[0]; i++) {
        posenc_error e = {0};
        posenc_status st = posenc_model_parse_hf_json(zero[i], strlen(zero[i]), NULL, &m, &e);
        CHECK(st == POSENC_ERR_FORMAT && strstr(e.message, "'sliding_window_pattern' is 0"),
              "sliding_window_pattern 0 refused (HF raises on (i + 1) %% 0): %s", e.message);
        if (st == POSENC_OK) posenc_model_free(&m);
    }
    /* GGUF sizes: config.json's counts are integers in [0, 2^30], the layer list at most
     * POSENC_MODEL_MAX_LAYERS; rope.dimension_count rotates at least a pair */
    gguf_buf *b = malloc(sizeof *b);
    small_gguf(b, "llama", 0xffffffffu, 0);
    posenc_error e = {0};
    posenc_status st = posenc_model_parse_gguf(b->buf, b->n, NULL, &m, &e);
    CHECK(st == POSENC_ERR_FORMAT && strstr(e.message, "block_count is 4294967295"),
          "[G14] GGUF block_count 0xffffffff refused by name, not read as 0 layers: %s", e.message);
    if (st == POSENC_OK) posenc_model_free(&m);
    static const uint32_t dims[] = {0, 1, 0xffffffffu};
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++) {
        char k[96];
        header(b, 0, 7);
        kv_str(b, "general.architecture", "llama");
        kv_u32(b, "llama.block_count", 4);
        kv_u32(b, "llama.context_length", 2048);
        kv_u32(b, "llama.embedding_length", 4096);
        kv_u32(b, "llama.attention.head_count", 32);
        kv_f32(b, "llama.rope.freq_base", 10000.0f);
        snprintf(k, sizeof k, "llama.rope.dimension_count");
        kv_u32(b, k, dims[i]);
        posenc_error e2 = {0};
        st = posenc_model_parse_gguf(b->buf, b->n, NULL, &m, &e2);
        CHECK(st == POSENC_ERR_FORMAT && strstr(e2.message, "rope.dimension_count is"),
              "[G14] GGUF rope.dimension_count %u refused by name, not replaced by the head's 128: %s", dims[i], e2.message);
        if (st == POSENC_OK) posenc_model_free(&m);
    }
    free(b);
}

/* mistral3 / another arch with attention.temperature_scale (and rope.scaling.original_context_length when orig > 0). */
static void temperature_gguf(gguf_buf *b, const char *arch, float scale, uint32_t orig) {
    char k[96];
    header(b, 0, orig ? 8 : 7);
    kv_str(b, "general.architecture", arch);
#define KEY(s) (snprintf(k, sizeof k, "%s.%s", arch, s), k)
    kv_u32(b, KEY("block_count"), 4);
    kv_u32(b, KEY("context_length"), 2048);
    kv_u32(b, KEY("embedding_length"), 512);
    kv_u32(b, KEY("attention.head_count"), 8);
    kv_f32(b, KEY("rope.freq_base"), 10000.0f);
    kv_f32(b, KEY("attention.temperature_scale"), scale);
    if (orig) kv_u32(b, KEY("rope.scaling.original_context_length"), orig);
#undef KEY
}

/* posenc_query_scale_f64 and the readers that fill posenc_model.query_scale. */
static void test_query_scale(void) {
    posenc_error err = {0};
    double out[8];
    /* NONE: 1 everywhere, the other fields unchecked */
    posenc_query_scale none = {POSENC_QUERY_SCALE_NONE, NAN, 0, 0};
    int64_t p0[3] = {0, 1000000, -5};
    CHECK(posenc_query_scale_f64(&none, p0, 3, out, &err) == POSENC_OK && out[0] == 1.0 && out[1] == 1.0 &&
              out[2] == 1.0, "query scale NONE: 1 at every position (%s)", err.message);
    /* Ministral 3's form: exactly 1 below the divisor, constant inside each block, a step at each multiple */
    posenc_query_scale m3 = {POSENC_QUERY_SCALE_ALL, 0.1, 64, 0};
    int64_t p1[8] = {0, 63, 64, 127, 128, 191, 192, 64 * 15 - 1};
    CHECK(posenc_query_scale_f64(&m3, p1, 8, out, &err) == POSENC_OK, "query scale ALL: computed (%s)", err.message);
    CHECK(out[0] == 1.0 && out[1] == 1.0, "query scale: exactly 1 at positions 0 and 63 (< divisor 64): %.17g %.17g",
          out[0], out[1]);
    CHECK(out[2] == out[3] && out[4] == out[5] && out[2] < out[4] && out[4] < out[6],
          "query scale: constant within a block of 64, rising at each multiple (%.17g %.17g %.17g)", out[2], out[4],
          out[6]);
    /* ln 2 and ln 16 are known to far more digits than a double holds: within 1 ulp of the rounded exact values */
    CHECK(fabs(out[2] - (1.0 + 0.1 * 0.69314718055994530942)) <= 2.3e-16 &&
              fabs(out[7] - (1.0 + 0.1 * 2.7080502011022100660)) <= 2.3e-16,
          "query scale: 1 + 0.1 ln 2 at 64 (%.17g), 1 + 0.1 ln 15 at 959 (%.17g), within 1 ulp", out[2], out[7]);
    /* Llama 4's form: shift 1 moves every step one position earlier */
    posenc_query_scale l4 = {POSENC_QUERY_SCALE_NOPE, 0.1, 64, 1};
    double shifted[8];
    CHECK(posenc_query_scale_f64(&l4, p1, 8, shifted, &err) == POSENC_OK && shifted[0] == 1.0 && shifted[1] == out[2] &&
              shifted[3] == out[4] && shifted[5] == out[6],
          "query scale shift 1: position 63 has position 64's scale, 127 has 128's, 191 has 192's (%s)", err.message);
    CHECK(fabs(shifted[7] - (1.0 + 0.1 * 2.7725887222397812377)) <= 2.3e-16,
          "query scale shift 1: position 959 -> floor(960 / 64) = 15: 1 + 0.1 ln 16 (%.17g)", shifted[7]);
    /* beta 0: 1 everywhere */
    posenc_query_scale zero = {POSENC_QUERY_SCALE_ALL, 0.0, 64, 0};
    CHECK(posenc_query_scale_f64(&zero, p1, 8, out, &err) == POSENC_OK && out[7] == 1.0, "query scale beta 0: 1");
    /* errors name the value */
    posenc_query_scale bad = m3;
    bad.divisor = 0;
    CHECK(posenc_query_scale_f64(&bad, p1, 1, out, &err) == POSENC_ERR_INVALID_ARGUMENT && strstr(err.message, "divisor 0"),
          "query scale divisor 0 refused: %s", err.message);
    bad = m3, bad.beta = NAN;
    CHECK(posenc_query_scale_f64(&bad, p1, 1, out, &err) == POSENC_ERR_INVALID_ARGUMENT && strstr(err.message, "beta"),
          "query scale beta NaN refused: %s", err.message);
    bad = m3, bad.layers = (posenc_query_scale_layers)7;
    CHECK(posenc_query_scale_f64(&bad, p1, 1, out, &err) == POSENC_ERR_INVALID_ARGUMENT && strstr(err.message, "7"),
          "query scale layers 7 refused: %s", err.message);
    int64_t neg = -1, big = INT64_MAX;
    CHECK(posenc_query_scale_f64(&m3, &neg, 1, out, &err) == POSENC_ERR_INVALID_ARGUMENT && strstr(err.message, "-1"),
          "query scale position -1 refused: %s", err.message);
    CHECK(posenc_query_scale_f64(&l4, &big, 1, out, &err) == POSENC_ERR_INVALID_ARGUMENT && strstr(err.message, "overflows"),
          "query scale position INT64_MAX + shift 1 refused: %s", err.message);
    CHECK(posenc_query_scale_f64(NULL, p1, 1, out, &err) == POSENC_ERR_NULL_POINTER &&
              posenc_query_scale_f64(&m3, NULL, 1, out, &err) == POSENC_ERR_NULL_POINTER &&
              posenc_query_scale_f64(&m3, p1, 0, NULL, &err) == POSENC_OK,
          "query scale: NULL arguments refused (count 0: nothing read or written)");
    CHECK(strcmp(posenc_query_scale_layers_name(POSENC_QUERY_SCALE_NOPE), "nope") == 0 &&
              strcmp(posenc_query_scale_layers_name((posenc_query_scale_layers)9), "?") == 0, "query scale layer names");

    /* GGUF (llama.cpp's load_hparams): llama4 hard-codes 0.1f / 8192 / offset 1 on its NoPE layers unless
     * attention.sliding_window is 0; mistral3 reads attention.temperature_scale with floor n_ctx_orig_yarn */
    gguf_buf *b = malloc(sizeof *b);
    posenc_model m;
    small_gguf(b, "llama4", 8, 0);
    posenc_status st = posenc_model_parse_gguf(b->buf, b->n, NULL, &m, &err);
    CHECK(st == POSENC_OK && m.query_scale.layers == POSENC_QUERY_SCALE_NOPE && m.query_scale.beta == (double)0.1f &&
              m.query_scale.divisor == 8192 && m.query_scale.shift == 1,
          "llama4 GGUF: NoPE layers scaled, 0.1f, 8192, offset 1 (%s)", err.message);
    posenc_model_free(&m);
    small_gguf(b, "llama4", 8, 1);
    st = posenc_model_parse_gguf(b->buf, b->n, NULL, &m, &err);
    CHECK(st == POSENC_OK && m.query_scale.layers == POSENC_QUERY_SCALE_NONE,
          "llama4 GGUF with attention.sliding_window 0: no NoPE layer, no temperature");
    posenc_model_free(&m);
    temperature_gguf(b, "mistral3", 0.1f, 16384);
    st = posenc_model_parse_gguf(b->buf, b->n, NULL, &m, &err);
    CHECK(st == POSENC_OK && m.query_scale.layers == POSENC_QUERY_SCALE_ALL && m.query_scale.beta == (double)0.1f &&
              m.query_scale.divisor == 16384 && m.query_scale.shift == 0,
          "mistral3 GGUF: every layer, temperature_scale 0.1, floor rope.scaling.original_context_length (%s)",
          err.message);
    posenc_model_free(&m);
    temperature_gguf(b, "mistral3", 0.25f, 0);
    st = posenc_model_parse_gguf(b->buf, b->n, NULL, &m, &err);
    CHECK(st == POSENC_OK && m.query_scale.divisor == 2048 && m.query_scale.beta == 0.25,
          "mistral3 GGUF without an original context: floor = context_length (n_ctx_orig_yarn = n_ctx_train) (%s)",
          err.message);
    posenc_model_free(&m);
    temperature_gguf(b, "mistral3", 0.0f, 0);
    st = posenc_model_parse_gguf(b->buf, b->n, NULL, &m, &err);
    CHECK(st == POSENC_OK && m.query_scale.layers == POSENC_QUERY_SCALE_NONE, "mistral3 GGUF temperature_scale 0: off");
    posenc_model_free(&m);
    temperature_gguf(b, "llama", 0.1f, 0);
    st = posenc_model_parse_gguf(b->buf, b->n, NULL, &m, &err);
    CHECK(st == POSENC_ERR_UNSUPPORTED && strstr(err.message, "llama.attention.temperature_scale"),
          "llama GGUF with attention.temperature_scale: refused by name (%s)", err.message);
    posenc_model_free(&m);
    free(b);

    /* config.json: Llama 4's attn_temperature_tuning false / a number; Ministral 3 without its beta */
    const char *off = "{\"model_type\":\"llama4_text\",\"num_hidden_layers\":4,\"attn_temperature_tuning\":false}";
    st = posenc_model_parse_hf_json(off, strlen(off), NULL, &m, &err);
    CHECK(st == POSENC_OK && m.query_scale.layers == POSENC_QUERY_SCALE_NONE, "llama4_text tuning false: no scale");
    posenc_model_free(&m);
    const char *four = "{\"model_type\":\"llama4_text\",\"num_hidden_layers\":4,\"attn_temperature_tuning\":4,"
                       "\"floor_scale\":100,\"attn_scale\":0.5}";
    st = posenc_model_parse_hf_json(four, strlen(four), NULL, &m, &err);
    CHECK(st == POSENC_OK && m.query_scale.layers == POSENC_QUERY_SCALE_NOPE && m.query_scale.divisor == 100 &&
              m.query_scale.beta == 0.5 && m.query_scale.shift == 1,
          "llama4_text tuning 4 (the released Scout file): on, floor_scale 100, attn_scale 0.5 (%s)", err.message);
    posenc_model_free(&m);
    const char *frac = "{\"model_type\":\"llama4_text\",\"num_hidden_layers\":4,\"floor_scale\":8.5}";
    st = posenc_model_parse_hf_json(frac, strlen(frac), NULL, &m, &err);
    CHECK(st != POSENC_OK && strstr(err.message, "floor_scale"), "llama4_text floor_scale 8.5 refused: %s", err.message);
    posenc_model_free(&m);
    const char *nobeta = "{\"model_type\":\"ministral3\",\"llama_4_scaling_beta\":0.1,\"rope_parameters\":{\"rope_type\":"
                         "\"yarn\",\"factor\":16.0,\"original_max_position_embeddings\":16384}}";
    st = posenc_model_parse_hf_json(nobeta, strlen(nobeta), NULL, &m, &err);
    CHECK(st == POSENC_ERR_UNSUPPORTED && strstr(err.message, "llama_4_scaling_beta") && strstr(err.message, "top-level"),
          "ministral3 with a top-level beta only: refused by name (%s)", err.message);
    posenc_model_free(&m);
}

int main(void) {
    test_strict_words_and_sizes();
    test_query_scale();
    test_gguf_layers();
    test_json_layers();
    test_gguf_tensors();
    test_gguf_arch_rules();
    test_json_rules();
    test_resolve();
    return check_finish();
}
