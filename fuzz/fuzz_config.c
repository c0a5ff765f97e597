/* fuzz_config.c: model configuration import on arbitrary bytes: the input is
 * parsed both as config.json text (posenc_config_parse_hf_json) and as a GGUF
 * header image (posenc_config_parse_gguf); whatever imports is then handed to
 * the RoPE functions it is meant for (check, frequencies, one table row).
 * Promises checked: never a crash, out-of-bounds read, leak or hang, and
 * nothing allocated from a size the file claims (a GGUF claiming 2^60 keys or
 * a 2^60-byte string is refused up front; libFuzzer's malloc limit would
 * report it otherwise); a failed import leaves a config posenc_model_config_free
 * accepts; an import that succeeds yields parameters posenc_rope_check accepts,
 * and its frequencies are a result or a status; parsing is deterministic.
 * Also: the rotated channels lie inside the head (rotary_offset + head_dim <=
 * attention_head_dim), every layer kind passes posenc_rope_check, factor
 * lists read from GGUF rope tensors are finite and > 0, and every name
 * buffer (family, duplicate_key, keys_used, defaults_used) is terminated.
 * The per-layer reading (posenc_model_parse_*, with and without assume_family)
 * keeps its layer list consistent (parse_model below). */
#include "fuzz_common.h"

#include <math.h>

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    return 0;
}

static void use_config(const posenc_model_config *c) {
    posenc_error err;
    int32_t r = 0;
    posenc_status st = posenc_rope_check(&c->rope, &r, &err);
    FUZZ_REQUIRE(st == POSENC_OK, "imported config fails posenc_rope_check: %s", err.message);
    FUZZ_REQUIRE(memchr(c->architecture, '\0', sizeof c->architecture) && memchr(c->scaling_name, '\0', sizeof c->scaling_name),
                 "unterminated names");
    FUZZ_REQUIRE(memchr(c->family, '\0', sizeof c->family) && memchr(c->duplicate_key, '\0', sizeof c->duplicate_key) &&
                     memchr(c->keys_used, '\0', sizeof c->keys_used) && memchr(c->defaults_used, '\0', sizeof c->defaults_used),
                 "unterminated family/key lists");
    FUZZ_REQUIRE(c->rotary_offset >= 0 && c->rotary_offset + c->rope.head_dim <= c->attention_head_dim,
                 "rotated channels %d..+%d outside a head of %d", c->rotary_offset, c->rope.head_dim, c->attention_head_dim);
    FUZZ_REQUIRE(c->layer_type_count >= 0 && c->layer_type_count <= POSENC_CONFIG_MAX_LAYER_TYPES, "layer kinds %d",
                 c->layer_type_count);
    for (int i = 0; i < c->layer_type_count; i++) {
        st = posenc_rope_check(&c->layer_types[i].rope, NULL, &err);
        FUZZ_REQUIRE(st == POSENC_OK, "layer kind %d fails posenc_rope_check: %s", i, err.message);
    }
    for (size_t k = 0; k < c->rope.factors_count; k++)
        FUZZ_REQUIRE(isfinite(c->rope.short_factors[k]) && isfinite(c->rope.long_factors[k]), "factor %zu not finite", k);
    if (r / 2 > 4096) return;
    double *w = malloc(sizeof *w * (size_t)(r / 2)), attention = 0;
    st = posenc_rope_frequencies(&c->rope, c->rope.max_position, w, (size_t)(r / 2), &attention, &err);
    if (st == POSENC_OK) {
        for (int32_t k = 0; k < r / 2; k++) FUZZ_REQUIRE(isfinite(w[k]) && w[k] >= 0, "inv_freq[%d] = %g", k, w[k]);
        float cs[4096], sn[4096];
        posenc_positions p = posenc_positions_range(0, 1);
        st = posenc_rope_table_f32(&c->rope, 0, &p, 1, cs, sn, 4096, &err);
        if (st != POSENC_OK) fuzz_require_error(st, &err);
    } else {
        fuzz_require_error(st, &err);
    }
    free(w);
}

static void parse_twice(const uint8_t *data, size_t size, int gguf) {
    posenc_model_config a, b;
    posenc_error err;
    memset(&a, 0xA5, sizeof a); /* garbage in: the parser must initialise what free looks at */
    memset(&b, 0xA5, sizeof b);
    posenc_status s1 = gguf ? posenc_config_parse_gguf(data, size, &a, &err)
                            : posenc_config_parse_hf_json((const char *)data, size, &a, &err);
    posenc_status s2 = gguf ? posenc_config_parse_gguf(data, size, &b, NULL)
                            : posenc_config_parse_hf_json((const char *)data, size, &b, NULL);
    FUZZ_REQUIRE(s1 == s2, "%s import status %d then %d", gguf ? "GGUF" : "JSON", (int)s1, (int)s2);
    if (s1 == POSENC_OK) {
        FUZZ_REQUIRE(strcmp(a.architecture, b.architecture) == 0 && a.rope.head_dim == b.rope.head_dim &&
                         memcmp(&a.rope.base, &b.rope.base, sizeof(double)) == 0 && a.rope.scaling == b.rope.scaling &&
                         a.layer_type_count == b.layer_type_count && a.rotary_offset == b.rotary_offset &&
                         a.rope.factors_count == b.rope.factors_count && a.warnings == b.warnings,
                     "import not deterministic");
        use_config(&a);
    } else {
        fuzz_require_error(s1, &err);
    }
    posenc_model_config_free(&a);
    posenc_model_config_free(&b);
    posenc_model_config_free(&a); /* freeing twice is fine */
}

/* The layer list (issue 23): every layer names a scheme, a RoPE layer a variant that exists, ALiBi
 * slopes are finite and in (0, 1], names and key lists are terminated; with and without --assume. */
static void parse_model(const uint8_t *data, size_t size, int gguf, const char *assume) {
    posenc_model m;
    posenc_error err;
    posenc_config_options o = {assume};
    memset(&m, 0xA5, sizeof m);
    posenc_status st = gguf ? posenc_model_parse_gguf(data, size, &o, &m, &err)
                            : posenc_model_parse_hf_json((const char *)data, size, &o, &m, &err);
    if (st == POSENC_OK) {
        FUZZ_REQUIRE(m.layer_count >= 0 && m.layer_count <= POSENC_MODEL_MAX_LAYERS && (m.layer_count == 0 || m.layers),
                     "layer count %d", m.layer_count);
        FUZZ_REQUIRE(m.rope_count >= 0 && m.rope_count <= POSENC_MODEL_MAX_ROPES, "rope count %d", m.rope_count);
        for (int32_t i = 0; i < m.layer_count; i++) {
            const posenc_model_layer *l = &m.layers[i];
            FUZZ_REQUIRE((l->scheme >= POSENC_LAYER_NOPE && l->scheme <= POSENC_LAYER_SINUSOIDAL) ||
                             l->scheme == POSENC_LAYER_CONV_POSITION, "layer %d scheme %d", i,
                         (int)l->scheme);
            FUZZ_REQUIRE(l->scheme != POSENC_LAYER_ROPE || (l->rope >= 0 && l->rope < m.rope_count),
                         "layer %d points at RoPE variant %d of %d", i, l->rope, m.rope_count);
            FUZZ_REQUIRE(memchr(l->kind, '\0', sizeof l->kind) != NULL, "layer %d kind unterminated", i);
            FUZZ_REQUIRE(l->scheme != POSENC_LAYER_ALIBI || m.alibi_heads > 0, "ALiBi layer %d without slopes", i);
        }
        for (int32_t h = 0; h < m.alibi_heads; h++)
            FUZZ_REQUIRE(isfinite(m.alibi_slopes[h]) && m.alibi_slopes[h] > 0 && m.alibi_slopes[h] <= 1,
                         "slope %d = %g", h, m.alibi_slopes[h]);
        for (int32_t r = 0; r < m.rope_count; r++)
            FUZZ_REQUIRE(posenc_rope_check(&m.ropes[r].params, NULL, &err) == POSENC_OK, "variant %d: %s", r, err.message);
        FUZZ_REQUIRE(memchr(m.unused_keys, '\0', sizeof m.unused_keys) &&
                         memchr(m.assumed_family, '\0', sizeof m.assumed_family) &&
                         memchr(m.learned_tensor, '\0', sizeof m.learned_tensor),
                     "unterminated model names");
    } else {
        fuzz_require_error(st, &err);
    }
    posenc_model_free(&m);
    posenc_model_free(&m); /* freeing twice is fine */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    parse_twice(data, size, 0);
    parse_twice(data, size, 1);
    parse_model(data, size, 0, NULL);
    parse_model(data, size, 1, NULL);
    parse_model(data, size, 0, "llama");
    parse_model(data, size, 1, "llama");
    return 0;
}
