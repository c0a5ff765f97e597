/* config_hf_layers.c: which position scheme each layer of a config.json model
 * has, decided as the model's own code decides (transformers'
 * configuration_<m>.py and modeling_<m>.py; the rule of each family is
 * quoted next to it), and the list of position keys posenc did not use. */
#include "config_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define member hf_member_ /* null and absent differ for Cohere2's sliding_window */

/* The i-th string of a per-layer list; the list must have exactly `layers` entries. */
static posenc_status string_list(hf_reader *h, const cJSON *list, const char *key, int64_t layers) {
    RETURN_ERROR_IF(!cJSON_IsArray(list), h->err, POSENC_ERR_FORMAT, "config.json: '%s' must be an array of strings",
                    key);
    int n = cJSON_GetArraySize(list);
    RETURN_ERROR_IF(n != layers, h->err, POSENC_ERR_FORMAT,
                    "config.json: '%s' has %d entries for %lld layers (HF requires one per layer)", key, n,
                    (long long)layers);
    const cJSON *e;
    cJSON_ArrayForEach(e, list) RETURN_ERROR_IF(!cJSON_IsString(e), h->err, POSENC_ERR_FORMAT,
                                                "config.json: '%s' must be an array of strings", key);
    return POSENC_OK;
}

/* A sliding/full layer_types list: each word exactly "sliding_attention" or "full_attention"
 * (HF's layer_type_validation refuses unknown words; a miscased one is not read as full). */
static posenc_status sliding_full_list(hf_reader *h, const cJSON *list, int64_t layers) {
    FORWARD_IF_ERROR(string_list(h, list, "layer_types", layers));
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, list) {
        RETURN_ERROR_IF(strcmp(e->valuestring, "sliding_attention") != 0 && strcmp(e->valuestring, "full_attention") != 0,
                        h->err, POSENC_ERR_UNSUPPORTED,
                        "config.json: layer_types[%d] is '%.32s' (known for this model: sliding_attention, "
                        "full_attention; HF refuses other words)",
                        i, e->valuestring);
        i++;
    }
    return POSENC_OK;
}

static const char *list_at(const cJSON *list, int64_t i) {
    const cJSON *e = cJSON_GetArrayItem(list, (int)i);
    return e && cJSON_IsString(e) ? e->valuestring : "";
}

static posenc_status window_of(hf_reader *h, const cJSON *cfg, int64_t fallback, int64_t *window) {
    bool has = false;
    *window = fallback;
    FORWARD_IF_ERROR(hf_count_(h, cfg, "", "sliding_window", (int64_t)1 << 53, window, &has));
    if (!has && member(cfg, "sliding_window")) *window = 0; /* null: no sliding window */
    return POSENC_OK;
}

/* Gemma-2/3/3n: layer_types, else full iff (i + 1) % sliding_window_pattern == 0; ropes[0] full, [1] sliding. */
static posenc_status gemma_layers(hf_reader *h, const cJSON *cfg, int64_t layers) {
    posenc_model *m = h->model;
    const cJSON *types = hf_use_(h, cfg, "layer_types");
    int64_t pattern = h->family->sliding_pattern;
    bool has = false, leading = (h->family->flags & FAMILY_LEADING_FULL) != 0;
    if (h->family->flags & FAMILY_TYPE_ROPE_DICTS) {
        /* no pattern key: layer_types, else every layer full (sliding_pattern 0) */
    } else if (leading) {
        FORWARD_IF_ERROR(hf_count_(h, cfg, "", "global_attn_every_n_layers", 1 << 20, &pattern, &has));
    } else {
        FORWARD_IF_ERROR(hf_count_(h, cfg, "", "sliding_window_pattern", 1 << 20, &pattern, &has));
        if (!has) FORWARD_IF_ERROR(hf_count_(h, cfg, "", "_sliding_window_pattern", 1 << 20, &pattern, &has));
    }
    RETURN_ERROR_IF(has && pattern == 0 && !types, h->err, POSENC_ERR_FORMAT,
                    "config.json: '%s' is 0: HF's layer kinds take %s %% 0 and raise (give a pattern > 0 or "
                    "layer_types)", leading ? "global_attn_every_n_layers" : "sliding_window_pattern",
                    leading ? "i" : "(i + 1)");
    if (types) FORWARD_IF_ERROR(sliding_full_list(h, types, layers));
    int64_t window = m->config.layer_type_count > 1 ? m->config.layer_types[1].sliding_window : 0;
    for (int64_t i = 0; i < layers; i++) {
        bool sliding = types ? strcmp(list_at(types, i), "sliding_attention") == 0
                             : pattern > 0 && (leading ? i % pattern : (i + 1) % pattern) != 0;
        config_layer_set_(m, i, POSENC_LAYER_ROPE, sliding ? 1 : 0, sliding ? "sliding_attention" : "full_attention",
                          sliding ? window : 0);
    }
    return POSENC_OK;
}

/* SmolLM3 / Llama 4: use_rope = no_rope_layers[layer_idx]; default
 * int((layer_idx + 1) % no_rope_layer_interval != 0) (Llama 4 also for an empty list). */
static posenc_status nope_list_layers(hf_reader *h, const cJSON *cfg, int64_t layers) {
    posenc_model *m = h->model;
    const cJSON *list = hf_use_(h, cfg, "no_rope_layers");
    int64_t interval = 4;
    bool has = false;
    FORWARD_IF_ERROR(hf_count_(h, cfg, "", "no_rope_layer_interval", 1 << 20, &interval, &has));
    RETURN_ERROR_IF(interval == 0, h->err, POSENC_ERR_FORMAT, "config.json: 'no_rope_layer_interval' must be > 0");
    bool llama4 = strcmp(h->family->model_type, "llama4_text") == 0;
    if (list) {
        RETURN_ERROR_IF(!cJSON_IsArray(list), h->err, POSENC_ERR_FORMAT,
                        "config.json: 'no_rope_layers' must be an array of 0/1");
        int n = cJSON_GetArraySize(list);
        if (n == 0 && llama4) list = NULL; /* Llama4TextConfig: `no_rope_layers if no_rope_layers else default` */
        else
            RETURN_ERROR_IF(n < layers, h->err, POSENC_ERR_FORMAT,
                            "config.json: 'no_rope_layers' has %d entries for %lld layers (one per layer needed)", n,
                            (long long)layers);
    }
    for (int64_t i = 0; i < layers; i++) {
        bool rope = (i + 1) % interval != 0;
        if (list) {
            const cJSON *e = cJSON_GetArrayItem(list, (int)i);
            RETURN_ERROR_IF(!(cJSON_IsBool(e) || (cJSON_IsNumber(e) && (e->valuedouble == 0 || e->valuedouble == 1))),
                            h->err, POSENC_ERR_FORMAT, "config.json: 'no_rope_layers'[%lld] must be 0 or 1 (1 = RoPE)",
                            (long long)i);
            rope = cJSON_IsTrue(e) || (cJSON_IsNumber(e) && e->valuedouble == 1);
        }
        config_layer_set_(m, i, rope ? POSENC_LAYER_ROPE : POSENC_LAYER_NOPE, 0, "attention", 0);
    }
    return POSENC_OK;
}

/* Cohere2: apply RoPE iff the layer's sliding_window is not None (sliding layers);
 * EXAONE 4: iff config.sliding_window is None or the layer slides. */
static posenc_status global_nope_layers(hf_reader *h, const cJSON *cfg, int64_t layers) {
    posenc_model *m = h->model;
    const config_family *f = h->family;
    int64_t window = 0;
    FORWARD_IF_ERROR(window_of(h, cfg, f->sliding_window, &window));
    bool exaone = (f->flags & FAMILY_WINDOWLESS_ROPE) != 0, by_kind = (f->flags & FAMILY_KIND_ROPE) != 0;
    const char *pattern_key = by_kind ? "global_attn_every_n_layers" : "sliding_window_pattern";
    const cJSON *types = hf_use_(h, cfg, "layer_types");
    const cJSON *pat = hf_use_(h, cfg, pattern_key);
    if (types) FORWARD_IF_ERROR(sliding_full_list(h, types, layers));
    /* AFMoE rotates by layer kind (is_local_attention), but its sliding layers cannot run without a window */
    RETURN_ERROR_IF(by_kind && window == 0, h->err, POSENC_ERR_UNSUPPORTED,
                    "config.json: 'sliding_window' is null: %s's sliding layers need a window (HF cannot build the "
                    "model: TypeError in its sliding-window mask)", f->model_type);
    int64_t every = f->sliding_pattern;
    /* Exaone4Config.__post_init__ sets the pattern to 0 when sliding_window is None and then
     * computes (i + 1) % 0 for the default layer_types: HF cannot load such a config */
    RETURN_ERROR_IF(exaone && window == 0 && !types, h->err, POSENC_ERR_UNSUPPORTED,
                    "config.json: 'sliding_window' is null and there is no 'layer_types': HF's %sConfig "
                    "then computes (i + 1) %% 0 for the layer kinds and cannot load it (give layer_types)",
                    f->class_stem);
    if (!types && pat && window != 0) {
        /* Exaone4Config.__post_init__ computes (i + 1) % sliding_window_pattern: a string such as "LLLG"
         * (its docstring's form) raises there, so without layer_types it is refused, not interpreted */
        if (cJSON_IsString(pat)) {
            return posenc_fail_(h->err, POSENC_ERR_UNSUPPORTED,
                                "config.json: '%s' is the string '%.16s' and there is no "
                                "'layer_types': HF's config class cannot read that either (it needs an integer)",
                                pattern_key, pat->valuestring);
        } else {
            bool has = false;
            FORWARD_IF_ERROR(hf_count_(h, cfg, "", pattern_key, 1 << 20, &every, &has));
            RETURN_ERROR_IF(has && every == 0, h->err, POSENC_ERR_FORMAT,
                            "config.json: '%s' is 0: HF's layer kinds take (i + 1) %% 0 and "
                            "raise (give a pattern > 0 or layer_types)", pattern_key);
        }
    }
    for (int64_t i = 0; i < layers; i++) {
        bool sliding;
        if (types) sliding = strcmp(list_at(types, i), "sliding_attention") == 0;
        else sliding = every > 0 && (i + 1) % every != 0;
        if (window == 0) sliding = false; /* sliding_window None: no layer slides */
        /* EXAONE 4 without a window rotates every layer; Cohere2 then rotates none */
        bool rope = exaone ? (window == 0 || sliding) : sliding;
        config_layer_set_(m, i, rope ? POSENC_LAYER_ROPE : POSENC_LAYER_NOPE, 0,
                          sliding ? "sliding_attention" : "full_attention", sliding ? window : 0);
    }
    return POSENC_OK;
}

/* layer_rope_theta: `layers` finite numbers (GraniteSWAConfig: list[float | int]). */
static posenc_status layer_theta_list(hf_reader *h, const cJSON *list, int64_t layers) {
    RETURN_ERROR_IF(!cJSON_IsArray(list), h->err, POSENC_ERR_FORMAT,
                    "config.json: 'layer_rope_theta' must be an array of numbers (one RoPE base per layer, 0 = NoPE)");
    int n = cJSON_GetArraySize(list), i = 0;
    RETURN_ERROR_IF(n != layers, h->err, POSENC_ERR_FORMAT,
                    "config.json: 'layer_rope_theta' has %d entries for %lld layers (HF indexes it per layer)", n,
                    (long long)layers);
    const cJSON *e;
    cJSON_ArrayForEach(e, list) {
        RETURN_ERROR_IF(!cJSON_IsNumber(e) || !isfinite(e->valuedouble) || e->valuedouble < 0, h->err,
                        POSENC_ERR_FORMAT, "config.json: layer_rope_theta[%d] must be a number >= 0 (0 = NoPE)", i);
        i++;
    }
    return POSENC_OK;
}

posenc_status hf_layer_theta_base_(hf_reader *h, const cJSON *cfg, int64_t layers, double *base) {
    const cJSON *list = hf_use_(h, cfg, "layer_rope_theta");
    if (!list) return POSENC_OK; /* GraniteSWAConfig: [rope_theta] * num_hidden_layers */
    FORWARD_IF_ERROR(layer_theta_list(h, list, layers));
    double one = 0;
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, list) {
        double t = e->valuedouble;
        RETURN_ERROR_IF(t != 0 && one != 0 && t != one, h->err, POSENC_ERR_UNSUPPORTED,
                        "config.json: 'layer_rope_theta' gives layer %d the RoPE base %.17g and an earlier layer %.17g: "
                        "%s builds one rotary embedding per distinct base, and posenc's model holds one base for "
                        "all rotating layers of a kind; not read", i, t, one, h->family->model_type);
        if (t != 0) one = t;
        i++;
    }
    if (one != 0) *base = one;
    return POSENC_OK;
}

/* Granite-SWA: layer kinds from layer_types, else full iff i % pattern == 0; RoPE iff layer_rope_theta[i] != 0. */
static posenc_status layer_theta_layers(hf_reader *h, const cJSON *cfg, int64_t layers) {
    posenc_model *m = h->model;
    const config_family *f = h->family;
    int64_t window = 0;
    FORWARD_IF_ERROR(window_of(h, cfg, f->sliding_window, &window));
    const cJSON *types = hf_use_(h, cfg, "layer_types"), *thetas = hf_use_(h, cfg, "layer_rope_theta");
    if (types) FORWARD_IF_ERROR(sliding_full_list(h, types, layers));
    for (int64_t i = 0; i < layers; i++) {
        bool sliding = types ? strcmp(list_at(types, i), "sliding_attention") == 0 : i % f->sliding_pattern != 0;
        RETURN_ERROR_IF(sliding && window == 0, h->err, POSENC_ERR_UNSUPPORTED,
                        "config.json: 'sliding_window' is null and layer %lld slides: HF cannot run %s's sliding "
                        "layers without a window (TypeError in its sliding-window mask)", (long long)i, f->model_type);
        const cJSON *t = thetas ? cJSON_GetArrayItem(thetas, (int)i) : NULL;
        bool rope = !t || t->valuedouble != 0; /* `theta if theta else None` */
        config_layer_set_(m, i, rope ? POSENC_LAYER_ROPE : POSENC_LAYER_NOPE, 0,
                          sliding ? "sliding_attention" : "full_attention", sliding ? window : 0);
    }
    return POSENC_OK;
}

/* Cohere2-MoE: sliding layers rotate, and the dense-MLP prefix layers too when its pattern is 1 (force_rope). */
static posenc_status dense_prefix_layers(hf_reader *h, const cJSON *cfg, int64_t layers) {
    posenc_model *m = h->model;
    const config_family *f = h->family;
    int64_t window = 0, k = 0, prefix_every = 1, every = f->sliding_pattern;
    bool has = false;
    FORWARD_IF_ERROR(window_of(h, cfg, f->sliding_window, &window));
    FORWARD_IF_ERROR(hf_count_(h, cfg, "", "first_k_dense_replace", layers, &k, &has));
    FORWARD_IF_ERROR(hf_count_(h, cfg, "", "prefix_dense_sliding_window_pattern", 1 << 20, &prefix_every, &has));
    FORWARD_IF_ERROR(hf_count_(h, cfg, "", "sliding_window_pattern", 1 << 20, &every, &has));
    const cJSON *types = hf_use_(h, cfg, "layer_types"), *mlp = hf_use_(h, cfg, "mlp_layer_types");
    if (types) FORWARD_IF_ERROR(sliding_full_list(h, types, layers));
    if (mlp) FORWARD_IF_ERROR(string_list(h, mlp, "mlp_layer_types", layers));
    RETURN_ERROR_IF(!types && ((k > 0 && prefix_every == 0) || (layers > k && every == 0)), h->err, POSENC_ERR_FORMAT,
                    "config.json: a sliding-window pattern of 0 and no 'layer_types': HF's layer kinds take "
                    "(i + 1) %% 0 and raise");
    for (int64_t i = 0; i < layers; i++) {
        bool sliding = types ? strcmp(list_at(types, i), "sliding_attention") == 0
                       : i < k ? (i + 1) % prefix_every != 0 : (i - k + 1) % every != 0;
        bool dense = mlp ? strcmp(list_at(mlp, i), "dense") == 0 : i < k;
        RETURN_ERROR_IF(sliding && window == 0, h->err, POSENC_ERR_UNSUPPORTED,
                        "config.json: 'sliding_window' is null and layer %lld slides: HF cannot run %s's sliding "
                        "layers without a window", (long long)i, f->model_type);
        bool rope = sliding || (dense && prefix_every == 1); /* `sliding_window is not None or force_rope` */
        config_layer_set_(m, i, rope ? POSENC_LAYER_ROPE : POSENC_LAYER_NOPE, 0,
                          sliding ? "sliding_attention" : "full_attention", sliding ? window : 0);
    }
    return POSENC_OK;
}

/* Bamba: layers_block_type[i] = "full_attention" if i in attn_layer_indices else "linear_attention" (mamba2). */
/* RecurrentGemma: (block_types * 100)[:layers]; "attention" blocks rotate in a local window, "recurrent" ones none. */
static posenc_status block_type_layers(hf_reader *h, const cJSON *cfg, int64_t layers) {
    posenc_model *m = h->model;
    const char *wkey = "attention_window_size";
    int64_t window = 2048;
    bool has = false;
    FORWARD_IF_ERROR(hf_count_(h, cfg, "", wkey, (int64_t)1 << 53, &window, &has));
    if (!has) FORWARD_IF_ERROR(hf_count_(h, cfg, "", wkey = "sliding_window", (int64_t)1 << 53, &window, &has));
    const cJSON *types = hf_use_(h, cfg, "block_types");
    RETURN_ERROR_IF(types && (!cJSON_IsArray(types) || cJSON_GetArraySize(types) == 0), h->err, POSENC_ERR_FORMAT,
                    "config.json: 'block_types' must be a non-empty array of strings");
    int n = types ? cJSON_GetArraySize(types) : 3;
    RETURN_ERROR_IF(layers > 100LL * n, h->err, POSENC_ERR_UNSUPPORTED,
                    "config.json: %lld layers but block_types * 100 gives %d kinds (HF's layers_block_type cuts there)",
                    (long long)layers, 100 * n);
    for (int64_t i = 0; i < layers; i++) {
        const char *t = types ? list_at(types, i % n) : (i % 3 == 2 ? "attention" : "recurrent");
        bool attn = strcmp(t, "attention") == 0;
        RETURN_ERROR_IF(!attn && strcmp(t, "recurrent") != 0, h->err, POSENC_ERR_UNSUPPORTED,
                        "config.json: block_types[%lld] is '%.32s' (known: recurrent, attention)", (long long)(i % n), t);
        config_layer_set_(m, i, attn ? POSENC_LAYER_ROPE : POSENC_LAYER_NOPE, 0, t, attn ? window : 0);
    }
    return POSENC_OK;
}

static posenc_status attn_index_layers(hf_reader *h, const cJSON *cfg, int64_t layers, bool rope) {
    posenc_model *m = h->model;
    if (strcmp(h->family->model_type, "recurrent_gemma") == 0) return block_type_layers(h, cfg, layers);
    const cJSON *list = hf_use_(h, cfg, "attn_layer_indices");
    RETURN_ERROR_IF(list && !cJSON_IsArray(list), h->err, POSENC_ERR_FORMAT,
                    "config.json: 'attn_layer_indices' must be an array of layer indices");
    for (int64_t i = 0; i < layers; i++) config_layer_set_(m, i, POSENC_LAYER_NOPE, -1, "linear_attention", 0);
    const cJSON *e;
    int k = 0;
    cJSON_ArrayForEach(e, list) {
        RETURN_ERROR_IF(!cJSON_IsNumber(e) || e->valuedouble != floor(e->valuedouble), h->err, POSENC_ERR_FORMAT,
                        "config.json: attn_layer_indices[%d] must be an integer", k);
        double i = e->valuedouble; /* an index outside 0..layers-1 matches no layer (HF: `i in attn_layer_indices`) */
        if (i >= 0 && i < (double)layers)
            config_layer_set_(m, (int64_t)i, rope ? POSENC_LAYER_ROPE : POSENC_LAYER_NOPE, 0, "full_attention", 0);
        k++;
    }
    return POSENC_OK;
}

/* Zamba2: "hybrid" layers run the shared attention (RoPE iff use_mem_rope), "linear_attention" layers mamba2 only. */
static posenc_status zamba2_layers(hf_reader *h, const cJSON *cfg, int64_t layers) {
    posenc_model *m = h->model;
    const char *key = "layers_block_type";
    const cJSON *types = hf_use_(h, cfg, key);
    if (!types) types = hf_use_(h, cfg, key = "layer_types"); /* Zamba2Config.attribute_map */
    const cJSON *mem = hf_use_(h, cfg, "use_mem_rope");
    RETURN_ERROR_IF(mem && !cJSON_IsBool(mem), h->err, POSENC_ERR_FORMAT, "config.json: 'use_mem_rope' must be true or false");
    bool rope = cJSON_IsTrue(mem);
    if (types) FORWARD_IF_ERROR(string_list(h, types, key, layers));
    RETURN_ERROR_IF(!types && layers != 54, h->err, POSENC_ERR_UNSUPPORTED,
                    "config.json: a zamba2 config of %lld layers without 'layers_block_type': Zamba2Config's default "
                    "list has 54 entries, which posenc does not stretch or cut; give layers_block_type", (long long)layers);
    for (int64_t i = 0; i < layers; i++) {
        bool hybrid;
        if (types) {
            const char *t = list_at(types, i);
            hybrid = strcmp(t, "hybrid") == 0;
            RETURN_ERROR_IF(!hybrid && strcmp(t, "linear_attention") != 0 && strcmp(t, "mamba") != 0, h->err,
                            POSENC_ERR_UNSUPPORTED, "config.json: %s[%lld] is '%.32s' (known: hybrid, linear_attention, "
                            "mamba)", key, (long long)i, t);
        } else { /* Zamba2Config's default: [L] + ([L]*5 + [H])*7 + [L]*4 + [H] + [L]*3 + [H] + [L]*2 */
            hybrid = (i >= 1 && i <= 42 && i % 6 == 0) || i == 47 || i == 51;
        }
        config_layer_set_(m, i, hybrid && rope ? POSENC_LAYER_ROPE : POSENC_LAYER_NOPE, 0,
                          hybrid ? "hybrid" : "linear_attention", 0);
    }
    return POSENC_OK;
}

/* Dia / T5Gemma: the encoder's num_hidden_layers, then the decoder's, every self-attention RoPE (one rope). Dia:
 * every layer full (defaults 12 + 18). T5Gemma: each stack's layer_types, else sliding iff (i + 1) % 2 (Gemma 2's
 * alternation), sliding layers with the stack's sliding_window (default 4096; the encoder's window is bidirectional). */
static posenc_status stack_kinds(hf_reader *h, const cJSON *stack, const char *where, int64_t count, int64_t start,
                                 const char *kind) {
    posenc_model *m = h->model;
    bool dia = strcmp(h->family->model_type, "dia") == 0;
    int64_t window = 0;
    const cJSON *types = NULL;
    if (!dia) {
        bool has = false;
        window = h->family->sliding_window;
        FORWARD_IF_ERROR(hf_count_(h, stack, where, "sliding_window", (int64_t)1 << 53, &window, &has));
        if (!has && member(stack, "sliding_window")) window = 0;
        types = hf_use_(h, stack, "layer_types");
        if (types) FORWARD_IF_ERROR(sliding_full_list(h, types, count));
    }
    for (int64_t i = 0; i < count; i++) {
        bool sliding = !dia && (types ? strcmp(list_at(types, i), "sliding_attention") == 0
                                      : (i + 1) % h->family->sliding_pattern != 0);
        RETURN_ERROR_IF(sliding && window == 0, h->err, POSENC_ERR_UNSUPPORTED,
                        "config.json: %ssliding_window is null and layer %lld slides: posenc does not read a sliding "
                        "layer without a window", where, (long long)i);
        config_layer_set_(m, start + i, POSENC_LAYER_ROPE, 0, kind, sliding ? window : 0);
    }
    return POSENC_OK;
}

static posenc_status dia_layers(hf_reader *h, const cJSON *cfg, int64_t enc_layers) {
    bool dia = strcmp(h->family->model_type, "dia") == 0;
    int64_t dec_layers = dia ? 18 : 26;
    bool has = false;
    const char *where = dia ? "decoder_config." : "decoder.";
    FORWARD_IF_ERROR(hf_count_(h, h->decoder, where, "num_hidden_layers", POSENC_MODEL_MAX_LAYERS, &dec_layers, &has));
    FORWARD_IF_ERROR(config_layers_alloc_(h->model, enc_layers + dec_layers, h->err));
    FORWARD_IF_ERROR(stack_kinds(h, cfg, dia ? "encoder_config." : "encoder.", enc_layers, 0, "encoder"));
    return stack_kinds(h, h->decoder, where, dec_layers, enc_layers, "decoder");
}

/* HRM-Text (HrmTextModel): two stacks of num_layers_per_stack layers, L_module then H_module, each layer run
 * H_cycles * (L_cycles + 1) times per forward with the one rotary embedding (positions 0..). HrmTextConfig rewrites
 * num_hidden_layers to the inflated slot count and keeps the real count in num_layers_per_stack; a file without that
 * key holds the real per-stack count in num_hidden_layers. posenc lists each physical layer once. */
static posenc_status hrm_layers(hf_reader *h, const cJSON *cfg) {
    posenc_model *m = h->model;
    int64_t per_stack = h->out->num_hidden_layers;
    bool has = false;
    FORWARD_IF_ERROR(hf_count_(h, cfg, "", "num_layers_per_stack", POSENC_MODEL_MAX_LAYERS, &per_stack, &has));
    FORWARD_IF_ERROR(config_layers_alloc_(m, 2 * per_stack, h->err));
    for (int64_t i = 0; i < 2 * per_stack; i++)
        config_layer_set_(m, i, POSENC_LAYER_ROPE, 0, i < per_stack ? "L_module" : "H_module", 0);
    return POSENC_OK;
}

/* Qwen3-Next: layer_types, else "linear_attention" if (i + 1) % full_attention_interval else "full_attention";
 * only full attention layers rotate (the gated DeltaNet layers have no positions). */
static posenc_status linear_layers(hf_reader *h, const cJSON *cfg, int64_t layers, bool rope) {
    posenc_model *m = h->model;
    const cJSON *types = hf_use_(h, cfg, "layer_types");
    int64_t interval = h->family->sliding_pattern;
    bool has = false, olmo = (h->family->flags & FAMILY_OLMO_HYBRID) != 0;
    if (!olmo) /* OlmoHybridConfig has no such key: its pattern is fixed at every 4th layer */
        FORWARD_IF_ERROR(hf_count_(h, cfg, "", "full_attention_interval", 1 << 20, &interval, &has));
    RETURN_ERROR_IF(interval == 0, h->err, POSENC_ERR_FORMAT, "config.json: 'full_attention_interval' must be > 0");
    if (types) FORWARD_IF_ERROR(string_list(h, types, "layer_types", layers));
    for (int64_t i = 0; i < layers; i++) {
        /* OLMo-Hybrid: "Ensure at least one full attention layer for small num_hidden_layers" (the last) */
        bool last_full = olmo && layers < interval && i == layers - 1;
        const char *t = types ? list_at(types, i)
                              : (i + 1) % interval && !last_full ? "linear_attention" : "full_attention";
        RETURN_ERROR_IF(strcmp(t, "linear_attention") != 0 && strcmp(t, "full_attention") != 0, h->err,
                        POSENC_ERR_UNSUPPORTED, "config.json: layer_types[%lld] is '%.32s' (known: linear_attention, "
                        "full_attention)", (long long)i, t);
        bool full = strcmp(t, "full_attention") == 0;
        config_layer_set_(m, i, full && rope ? POSENC_LAYER_ROPE : POSENC_LAYER_NOPE, 0, t, 0);
    }
    return POSENC_OK;
}

/* Granite-4.0-H: layer_types "mamba" / "attention"; attention layers rotate iff
 * position_embedding_type is "rope". */
static posenc_status mamba_hybrid_layers(hf_reader *h, const cJSON *cfg, int64_t layers, bool rope) {
    posenc_model *m = h->model;
    const cJSON *types = hf_use_(h, cfg, "layer_types");
    const char *key = "layer_types";
    if (!types) types = hf_use_(h, cfg, key = "layers_block_type");
    if (types) FORWARD_IF_ERROR(string_list(h, types, key, layers));
    for (int64_t i = 0; i < layers; i++) {
        const char *t = types ? list_at(types, i) : "mamba"; /* GraniteMoeHybridConfig: default every layer mamba */
        RETURN_ERROR_IF(strcmp(t, "mamba") != 0 && strcmp(t, "attention") != 0, h->err, POSENC_ERR_UNSUPPORTED,
                        "config.json: %s[%lld] is '%.32s' (known: mamba, attention)", key, (long long)i, t);
        bool attn = strcmp(t, "attention") == 0;
        config_layer_set_(m, i, attn && rope ? POSENC_LAYER_ROPE : POSENC_LAYER_NOPE, 0, t, 0);
    }
    return POSENC_OK;
}

/* LFM2 (Lfm2Config.__post_init__): layer_types as given, else "full_attention" for the indices in full_attn_idxs
 * (default: all layers) and "conv" elsewhere; only full attention layers rotate. */
static posenc_status conv_layers(hf_reader *h, const cJSON *cfg, int64_t layers) {
    posenc_model *m = h->model;
    bool required = (h->family->flags & FAMILY_TYPES_REQUIRED) != 0;
    const cJSON *types = hf_use_(h, cfg, "layer_types"), *idx = required ? NULL : hf_use_(h, cfg, "full_attn_idxs");
    if (types) FORWARD_IF_ERROR(string_list(h, types, "layer_types", layers));
    RETURN_ERROR_IF(idx && !types && !cJSON_IsArray(idx), h->err, POSENC_ERR_FORMAT,
                    "config.json: 'full_attn_idxs' must be an array of layer indices");
    for (int64_t i = 0; i < layers; i++) {
        bool full = !idx || types;
        if (idx && !types) {
            const cJSON *e;
            cJSON_ArrayForEach(e, idx) {
                RETURN_ERROR_IF(!cJSON_IsNumber(e) || e->valuedouble != (double)(int64_t)e->valuedouble, h->err,
                                POSENC_ERR_FORMAT, "config.json: 'full_attn_idxs' must hold integer layer indices");
                if ((int64_t)e->valuedouble == i) full = true;
            }
        }
        const char *t = types ? list_at(types, i) : full ? "full_attention" : "conv";
        RETURN_ERROR_IF(strcmp(t, "conv") != 0 && strcmp(t, "full_attention") != 0, h->err, POSENC_ERR_UNSUPPORTED,
                        "config.json: layer_types[%lld] is '%.32s' (known: conv, full_attention)", (long long)i, t);
        full = strcmp(t, "full_attention") == 0;
        config_layer_set_(m, i, full ? POSENC_LAYER_ROPE : POSENC_LAYER_NOPE, 0, t, 0);
    }
    return POSENC_OK;
}

/* Mllama text (MllamaTextConfig.__post_init__: cross_attention_layers default [3, 8, 13, ..., 38]): listed layers
 * are cross-attention layers (keys and values from the image, no rotary); the others self-attend with RoPE. */
static posenc_status cross_layers(hf_reader *h, const cJSON *cfg, int64_t layers) {
    static const int64_t fallback[] = {3, 8, 13, 18, 23, 28, 33, 38};
    const cJSON *list = hf_use_(h, cfg, "cross_attention_layers");
    RETURN_ERROR_IF(list && !cJSON_IsArray(list), h->err, POSENC_ERR_FORMAT,
                    "config.json: 'cross_attention_layers' must be an array of layer indices");
    const cJSON *e;
    if (list)
        cJSON_ArrayForEach(e, list) RETURN_ERROR_IF(!cJSON_IsNumber(e) || e->valuedouble != floor(e->valuedouble),
                                                    h->err, POSENC_ERR_FORMAT,
                                                    "config.json: 'cross_attention_layers' must hold integer layer "
                                                    "indices");
    for (int64_t i = 0; i < layers; i++) {
        bool cross = false;
        if (list) {
            cJSON_ArrayForEach(e, list) if ((int64_t)e->valuedouble == i) cross = true;
        } else {
            for (size_t k = 0; k < sizeof fallback / sizeof fallback[0]; k++) cross = cross || fallback[k] == i;
        }
        config_layer_set_(h->model, i, cross ? POSENC_LAYER_NOPE : POSENC_LAYER_ROPE, 0,
                          cross ? "cross_attention" : "self_attention", 0);
    }
    return POSENC_OK;
}

/* NemotronH (NemotronHConfig.__post_init__): layers_block_type (config.json may say layer_types), else
 * hybrid_override_pattern (M mamba -> linear_attention, * full_attention, - mlp, E moe), else its 4-layer default;
 * the list's length is the layer count (num_hidden_layers is ignored). No block adds positions: the attention
 * mixer never receives a rotary embedding. */
static posenc_status pattern_nope_layers(hf_reader *h, const cJSON *cfg) {
    static const char *const kinds[][2] = {{"linear_attention", "linear_attention"}, {"mamba", "linear_attention"},
                                           {"full_attention", "full_attention"},     {"attention", "full_attention"},
                                           {"moe", "moe"},                           {"mlp", "mlp"}};
    static const char *const fallback[] = {"linear_attention", "moe", "full_attention", "mlp"};
    const char *key = "layers_block_type";
    const cJSON *list = hf_use_(h, cfg, key);
    if (!list) list = hf_use_(h, cfg, key = "layer_types");
    const cJSON *pattern = list ? NULL : hf_use_(h, cfg, "hybrid_override_pattern");
    RETURN_ERROR_IF(list && !cJSON_IsArray(list), h->err, POSENC_ERR_FORMAT, "config.json: '%s' must be an array of "
                    "strings", key);
    RETURN_ERROR_IF(pattern && !cJSON_IsString(pattern), h->err, POSENC_ERR_FORMAT,
                    "config.json: 'hybrid_override_pattern' must be a string such as \"M-M*-\"");
    int64_t n = list ? cJSON_GetArraySize(list) : pattern ? (int64_t)strlen(pattern->valuestring) : 4;
    RETURN_ERROR_IF(n <= 0 || n > (1 << 20), h->err, POSENC_ERR_FORMAT, "config.json: %lld layers in '%s'",
                    (long long)n, list ? key : pattern ? "hybrid_override_pattern" : "layers_block_type");
    h->out->num_hidden_layers = (int32_t)n;
    FORWARD_IF_ERROR(config_layers_alloc_(h->model, n, h->err));
    for (int64_t i = 0; i < n; i++) {
        const char *kind = NULL;
        if (list) {
            const cJSON *e = cJSON_GetArrayItem(list, (int)i);
            RETURN_ERROR_IF(!cJSON_IsString(e), h->err, POSENC_ERR_FORMAT, "config.json: '%s' must be an array of "
                            "strings", key);
            for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
                if (strcmp(e->valuestring, kinds[k][0]) == 0) kind = kinds[k][1];
            RETURN_ERROR_IF(!kind, h->err, POSENC_ERR_UNSUPPORTED, "config.json: %s[%lld] is '%.32s' (known: "
                            "linear_attention/mamba, full_attention/attention, moe, mlp)", key, (long long)i,
                            e->valuestring);
        } else if (pattern) {
            char c = pattern->valuestring[i];
            kind = c == 'M' ? "linear_attention" : c == '*' ? "full_attention" : c == '-' ? "mlp" : c == 'E' ? "moe" : NULL;
            RETURN_ERROR_IF(!kind, h->err, POSENC_ERR_UNSUPPORTED, "config.json: hybrid_override_pattern[%lld] is "
                            "'%c' (known: M, *, -, E)", (long long)i, c);
        } else {
            kind = fallback[i];
        }
        config_layer_set_(h->model, i, POSENC_LAYER_NOPE, -1, kind, 0);
    }
    return POSENC_OK;
}

/* Jamba: "attention" if i % attn_layer_period == attn_layer_offset else "mamba"; no positions anywhere. */
static posenc_status jamba_layers(hf_reader *h, const cJSON *cfg, int64_t layers) {
    int64_t period = 8, offset = 4;
    bool has = false;
    FORWARD_IF_ERROR(hf_count_(h, cfg, "", "attn_layer_period", 1 << 20, &period, &has));
    FORWARD_IF_ERROR(hf_count_(h, cfg, "", "attn_layer_offset", 1 << 20, &offset, &has));
    RETURN_ERROR_IF(period == 0, h->err, POSENC_ERR_FORMAT, "config.json: 'attn_layer_period' must be > 0");
    for (int64_t i = 0; i < layers; i++)
        config_layer_set_(h->model, i, POSENC_LAYER_NOPE, -1, i % period == offset ? "attention" : "mamba", 0);
    return POSENC_OK;
}

/* T5: num_layers encoder blocks (bidirectional buckets), num_decoder_layers decoder blocks (causal). */
static posenc_status t5_layers(hf_reader *h, const cJSON *cfg) {
    posenc_model *m = h->model;
    int64_t enc = m->config.num_hidden_layers, dec = enc, buckets = 32, distance = 128;
    bool has = false;
    FORWARD_IF_ERROR(hf_count_(h, cfg, "", "num_decoder_layers", 1 << 20, &dec, &has));
    if (!has) dec = enc; /* T5Config: num_decoder_layers defaults to num_layers */
    FORWARD_IF_ERROR(hf_count_(h, cfg, "", "relative_attention_num_buckets", 1 << 20, &buckets, &has));
    FORWARD_IF_ERROR(hf_count_(h, cfg, "", "relative_attention_max_distance", 1 << 30, &distance, &has));
    m->t5.num_buckets = (int32_t)buckets;
    m->t5.max_distance = (int32_t)distance;
    m->t5.bidirectional = 1;
    posenc_error inner = {0};
    if (posenc_t5_check(&m->t5, &inner) != POSENC_OK)
        return posenc_fail_(h->err, POSENC_ERR_FORMAT, "config.json: T5 buckets: %s", inner.message);
    /* the checkpoint names of T5ForConditionalGeneration and its copies (T5Block layer[0] = the self-attention) */
    static const char tensor[] = "{stack}.block.{block}.layer.0.SelfAttention.relative_attention_bias.weight";
    m->t5_bias_every_layer = (h->family->flags & FAMILY_T5_EVERY_LAYER) ? 1 : 0;
    config_copy_name_(m->t5_tensor, sizeof m->t5_tensor, tensor, sizeof tensor - 1);
    FORWARD_IF_ERROR(config_layers_alloc_(m, enc + dec, h->err));
    for (int64_t i = 0; i < enc + dec; i++)
        config_layer_set_(m, i, POSENC_LAYER_T5, -1, i < enc ? "encoder" : "decoder", 0);
    return POSENC_OK;
}

/* Whisper: the encoder adds sinusoids(max_source_positions, d_model) (log-timescale step ln(10000) / (d/2 - 1),
 * then [sin | cos]: posenc's T2T frequencies in the half layout) to all its input frames; the decoder looks up
 * rows position_ids = arange(T) + past of a learned max_target_positions-row table. */
static posenc_status sinusoid_encoder_layers(hf_reader *h, const cJSON *cfg) {
    posenc_model *m = h->model;
    int64_t enc = 4, dec = 4, d_model = 384, source = 1500, target = 448; /* WhisperConfig defaults */
    bool has = false;
    FORWARD_IF_ERROR(hf_count_(h, cfg, "", "encoder_layers", 1 << 20, &enc, &has));
    FORWARD_IF_ERROR(hf_count_(h, cfg, "", "decoder_layers", 1 << 20, &dec, &has));
    FORWARD_IF_ERROR(hf_count_(h, cfg, "", "d_model", 1 << 30, &d_model, &has));
    FORWARD_IF_ERROR(hf_count_(h, cfg, "", "max_source_positions", (int64_t)1 << 40, &source, &has));
    FORWARD_IF_ERROR(hf_count_(h, cfg, "", "max_target_positions", (int64_t)1 << 40, &target, &has));
    /* sinusoids() raises on an odd width; d_model 2 would divide by d/2 - 1 = 0 */
    RETURN_ERROR_IF(d_model % 2 != 0 || d_model < 4, h->err, POSENC_ERR_FORMAT,
                    "config.json: 'd_model' %lld: the encoder's sinusoids need an even width >= 4", (long long)d_model);
    RETURN_ERROR_IF(source < 1 || target < 1, h->err, POSENC_ERR_FORMAT,
                    "config.json: max_source_positions %lld / max_target_positions %lld must be >= 1",
                    (long long)source, (long long)target);
    posenc_sinusoid_params_default(&m->sinusoid, (int32_t)d_model);
    m->sinusoid.freqs = POSENC_FREQS_T2T;
    m->sinusoid.layout = POSENC_LAYOUT_HALF;
    m->sinusoid.mode = POSENC_MODE_TORCH_COMPAT; /* sinusoids() runs in torch float32 */
    m->sinusoid_size = source;
    static const char enc_table[] = "model.encoder.embed_positions.weight";
    config_copy_name_(m->sinusoid_tensor, sizeof m->sinusoid_tensor, enc_table, strlen(enc_table));
    config_copy_name_(m->learned_tensor, sizeof m->learned_tensor, h->family->table, strlen(h->family->table));
    m->learned_offset = 0;
    m->learned_size = target;
    m->config.hidden_size = (int32_t)d_model;
    m->config.num_hidden_layers = (int32_t)enc;
    FORWARD_IF_ERROR(config_layers_alloc_(m, enc + dec, h->err));
    for (int64_t i = 0; i < enc + dec; i++)
        config_layer_set_(m, i, i < enc ? POSENC_LAYER_SINUSOIDAL : POSENC_LAYER_LEARNED, -1,
                          i < enc ? "encoder" : "decoder", 0);
    return POSENC_OK;
}

/* Qwen2-Audio / AudioFlamingo3 / Voxtral encoders: hidden_states = conv(features) + embed_positions.weight, all
 * max_source_positions rows (the input must have exactly that many frames, or the forward raises). */
static posenc_status audio_encoder_table_layers(hf_reader *h, const cJSON *cfg) {
    posenc_model *m = h->model;
    const config_family *f = h->family;
    int64_t layers = 32, d_model = 1280, heads = 20, source = 1500; /* the three config classes' defaults */
    bool has = false;
    /* each class stores one name and maps the other (attribute_map); a file holds one of them */
    FORWARD_IF_ERROR(hf_count_(h, cfg, "", "encoder_layers", 1 << 20, &layers, &has));
    FORWARD_IF_ERROR(hf_count_(h, cfg, "", "num_hidden_layers", 1 << 20, &layers, &has));
    FORWARD_IF_ERROR(hf_count_(h, cfg, "", "d_model", 1 << 30, &d_model, &has));
    FORWARD_IF_ERROR(hf_count_(h, cfg, "", "hidden_size", 1 << 30, &d_model, &has));
    FORWARD_IF_ERROR(hf_count_(h, cfg, "", "encoder_attention_heads", 1 << 20, &heads, &has));
    FORWARD_IF_ERROR(hf_count_(h, cfg, "", "num_attention_heads", 1 << 20, &heads, &has));
    FORWARD_IF_ERROR(hf_count_(h, cfg, "", "max_source_positions", (int64_t)1 << 40, &source, &has));
    RETURN_ERROR_IF(source < 1, h->err, POSENC_ERR_FORMAT,
                    "config.json: max_source_positions %lld: the encoder's table needs >= 1 row", (long long)source);
    config_copy_name_(m->learned_tensor, sizeof m->learned_tensor, f->table, strlen(f->table));
    m->learned_offset = 0;
    m->learned_size = source;
    m->config.hidden_size = (int32_t)d_model;
    m->config.num_hidden_layers = (int32_t)layers;
    m->config.num_attention_heads = (int32_t)heads;
    m->config.max_position_embeddings = source;
    FORWARD_IF_ERROR(config_layers_alloc_(m, layers, h->err));
    for (int64_t i = 0; i < layers; i++) config_layer_set_(m, i, POSENC_LAYER_LEARNED, -1, "encoder", 0);
    return POSENC_OK;
}

/* BART, mBART, MVP, PLBart, Blenderbot(-Small): each stack adds its own learned table, looked up at rows
 * arange(T) + past (+ 2 where the class is BartLearnedPositionalEmbedding-like); the encoder's layers come first. */
static posenc_status learned_enc_dec_layers(hf_reader *h, const cJSON *cfg) {
    posenc_model *m = h->model;
    const config_family *f = h->family;
    /* class defaults: the row's layers for both stacks, except BlenderbotConfig (2 encoder, 24 decoder layers) */
    int64_t enc = f->layers, dec = strcmp(f->model_type, "blenderbot") == 0 ? 24 : f->layers;
    int64_t d_model = f->hidden, rows = f->max_position;
    bool has = false;
    FORWARD_IF_ERROR(hf_count_(h, cfg, "", "encoder_layers", 1 << 20, &enc, &has));
    FORWARD_IF_ERROR(hf_count_(h, cfg, "", "decoder_layers", 1 << 20, &dec, &has));
    FORWARD_IF_ERROR(hf_count_(h, cfg, "", "d_model", 1 << 30, &d_model, &has));
    FORWARD_IF_ERROR(hf_count_(h, cfg, "", "max_position_embeddings", (int64_t)1 << 40, &rows, &has));
    RETURN_ERROR_IF(rows < 1, h->err, POSENC_ERR_FORMAT,
                    "config.json: max_position_embeddings %lld: a learned position table needs >= 1 row",
                    (long long)rows);
    int64_t offset = (f->flags & FAMILY_OPT_OFFSET) ? 2 : 0;
    static const char dec_table[] = "model.decoder.embed_positions.weight";
    config_copy_name_(m->learned_tensor, sizeof m->learned_tensor, f->table, strlen(f->table));
    config_copy_name_(m->decoder_learned_tensor, sizeof m->decoder_learned_tensor, dec_table, strlen(dec_table));
    m->learned_offset = m->decoder_learned_offset = offset;
    m->learned_size = m->decoder_learned_size = rows + offset;
    m->config.hidden_size = (int32_t)d_model;
    m->config.num_hidden_layers = (int32_t)enc;
    m->config.max_position_embeddings = rows;
    FORWARD_IF_ERROR(config_layers_alloc_(m, enc + dec, h->err));
    for (int64_t i = 0; i < enc + dec; i++)
        config_layer_set_(m, i, POSENC_LAYER_LEARNED, -1, i < enc ? "encoder" : "decoder", 0);
    return POSENC_OK;
}

/* Fixed sinusoid tables in each stack (Marian, Pegasus; fairseq-style M2M-100, NLLB-MoE, Speech2Text) or in XGLM's
 * one stack: config_internal.h's FAMILY_SINUSOID_* say how each builds its table and which rows it reads. */
static posenc_status sinusoid_stacks_layers(hf_reader *h, const cJSON *cfg) {
    posenc_model *m = h->model;
    const config_family *f = h->family;
    const bool fairseq = (f->flags & FAMILY_SINUSOID_FAIRSEQ) != 0, two = (f->flags & FAMILY_SINUSOID_ENC_DEC) != 0;
    const bool s2t = strcmp(f->model_type, "speech_to_text") == 0, xglm = (f->flags & FAMILY_SINUSOID_OFFSET2) != 0;
    /* PegasusXSinusoidalPositionalEmbedding: no table, the rows of position_ids computed in each forward */
    const bool live = strcmp(f->model_type, "pegasus_x") == 0;
    /* class defaults: the row's, except Speech2TextConfig (6 decoder layers, 6000 / 1024 source / target rows) */
    int64_t enc = f->layers, dec = s2t ? 6 : f->layers, d_model = f->hidden;
    int64_t enc_rows = s2t ? 6000 : f->max_position, dec_rows = s2t ? 1024 : f->max_position;
    bool has = false;
    if (two) {
        FORWARD_IF_ERROR(hf_count_(h, cfg, "", "encoder_layers", 1 << 20, &enc, &has));
        FORWARD_IF_ERROR(hf_count_(h, cfg, "", "decoder_layers", 1 << 20, &dec, &has));
    } else {
        FORWARD_IF_ERROR(hf_count_(h, cfg, "", "num_layers", 1 << 20, &enc, &has));
        dec = 0;
    }
    FORWARD_IF_ERROR(hf_count_(h, cfg, "", "d_model", 1 << 30, &d_model, &has));
    if (s2t) {
        FORWARD_IF_ERROR(hf_count_(h, cfg, "", "max_source_positions", (int64_t)1 << 40, &enc_rows, &has));
        FORWARD_IF_ERROR(hf_count_(h, cfg, "", "max_target_positions", (int64_t)1 << 40, &dec_rows, &has));
    } else if (!live) {
        FORWARD_IF_ERROR(hf_count_(h, cfg, "", "max_position_embeddings", (int64_t)1 << 40, &enc_rows, &has));
        dec_rows = enc_rows;
    }
    RETURN_ERROR_IF(!live && (enc_rows < 1 || dec_rows < 1), h->err, POSENC_ERR_FORMAT,
                    "config.json: %s %lld: a sinusoid position table needs >= 1 row",
                    s2t ? (enc_rows < 1 ? "max_source_positions" : "max_target_positions") : "max_position_embeddings",
                    (long long)(enc_rows < 1 ? enc_rows : dec_rows));
    posenc_sinusoid_params_default(&m->sinusoid, (int32_t)(d_model > 0 ? d_model : 1));
    m->sinusoid.layout = POSENC_LAYOUT_HALF;
    int64_t offset = 0, extra = 0;
    if (live) {
        /* t2t frequencies exp(k * -ln(10000) / (d/2 - 1)) in the input's dtype (float32), [sin | cos] into a d-wide
         * zero tensor: an odd d fails there (d/2 + 1 columns for d/2 cosines), d 2 divides by zero */
        RETURN_ERROR_IF(d_model % 2 != 0 || d_model < 4, h->err, POSENC_ERR_FORMAT,
                        "config.json: 'd_model' %lld: %s's sinusoid needs an even width >= 4 (it cannot run otherwise)",
                        (long long)d_model, f->model_type);
        m->sinusoid.freqs = POSENC_FREQS_T2T;
        m->sinusoid.mode = POSENC_MODE_TORCH_COMPAT;
        enc_rows = dec_rows = 0; /* no stored table, no row limit */
    } else if (!fairseq) {
        /* create_weight: out[:, :ceil(d/2)] = sin at exponents 2k/d, then floor(d/2) cosines */
        RETURN_ERROR_IF(d_model % 2 != 0 || d_model < 2, h->err, POSENC_ERR_UNSUPPORTED,
                        "config.json: 'd_model' %lld: %s's sinusoid table with an odd (or zero) width puts ceil(d/2) "
                        "sines at exponents 2k/d before the cosines, which no posenc odd-width policy gives",
                        (long long)d_model, f->model_type);
        m->sinusoid.mode = POSENC_MODE_PRECISE; /* numpy float64, rounded once to float32 */
    } else {
        /* get_embedding: ln(10000) / (half_dim - 1) */
        RETURN_ERROR_IF(d_model < 4, h->err, POSENC_ERR_FORMAT,
                        "config.json: 'd_model' %lld: %s's sinusoid divides by d/2 - 1, so it needs a width >= 4",
                        (long long)d_model, f->model_type);
        m->sinusoid.freqs = POSENC_FREQS_T2T;
        m->sinusoid.odd = POSENC_ODD_PAD;
        m->sinusoid.mode = POSENC_MODE_TORCH_COMPAT; /* torch float32 */
        int64_t pad = 1; /* M2M100Config, NllbMoeConfig, Speech2TextConfig, XGLMConfig: pad_token_id = 1 */
        FORWARD_IF_ERROR(hf_count_(h, cfg, "", "pad_token_id", (int64_t)1 << 30, &pad, &has));
        bool null_pad = !has && member(cfg, "pad_token_id");
        RETURN_ERROR_IF(null_pad && !xglm, h->err, POSENC_ERR_UNSUPPORTED,
                        "config.json: 'pad_token_id' is null: %s numbers positions from padding_idx + 1 "
                        "(create_position_ids_from_input_ids) and cannot run without one", f->model_type);
        /* Speech2TextEncoder looks its rows up from the padding mask (0 = a real frame) as if it were token ids */
        RETURN_ERROR_IF(s2t && pad == 0, h->err, POSENC_ERR_UNSUPPORTED,
                        "config.json: 'pad_token_id' 0 in a speech_to_text config: its encoder numbers frames from a "
                        "padding mask whose real frames are 0 = padding_idx, so every frame reads the zeroed row; "
                        "posenc does not describe that as positions");
        /* self.offset: max_position_embeddings + 2 rows; FSMT's table is max_position_embeddings + padding_idx + 1 */
        extra = strcmp(f->model_type, "fsmt") == 0 ? pad + 1 : 2;
        offset = xglm ? 2 : pad + 1;
        m->sinusoid_zero_row = null_pad ? -1 : pad;
        m->sinusoid_grows = 1;
        m->sinusoid_skips_padding = !xglm; /* XGLM: position_ids = arange + past */
        RETURN_ERROR_IF(!null_pad && pad >= (enc_rows < dec_rows ? enc_rows : dec_rows) + extra, h->err,
                        POSENC_ERR_FORMAT,
                        "config.json: pad_token_id %lld is past the %lld rows of %s's position table (it zeroes row "
                        "padding_idx when it builds it)", (long long)pad,
                        (long long)((enc_rows < dec_rows ? enc_rows : dec_rows) + extra), f->model_type);
    }
    m->sinusoid_size = enc_rows + extra;
    m->sinusoid_offset = offset;
    if (!live) config_copy_name_(m->sinusoid_tensor, sizeof m->sinusoid_tensor, f->table, strlen(f->table));
    if (two && !live) {
        /* the encoder's name with decoder: a buffer `weights` (fairseq-style modules) or an nn.Embedding `weight` */
        size_t n = strlen(f->table);
        const char *dec_table = n > 8 && strcmp(f->table + n - 8, ".weights") == 0
                                    ? "model.decoder.embed_positions.weights"
                                    : "model.decoder.embed_positions.weight";
        config_copy_name_(m->decoder_sinusoid_tensor, sizeof m->decoder_sinusoid_tensor, dec_table, strlen(dec_table));
        m->decoder_sinusoid_size = dec_rows + extra;
        m->decoder_sinusoid_offset = offset;
    }
    m->config.hidden_size = (int32_t)d_model;
    m->config.num_hidden_layers = (int32_t)enc;
    if (!s2t && !live) m->config.max_position_embeddings = enc_rows;
    FORWARD_IF_ERROR(config_layers_alloc_(m, enc + dec, h->err));
    for (int64_t i = 0; i < enc + dec; i++)
        config_layer_set_(m, i, POSENC_LAYER_SINUSOIDAL, -1, !two ? "attention" : i < enc ? "encoder" : "decoder", 0);
    return POSENC_OK;
}

/* A true/false key of a DeBERTa config (absent: the class default). null and numbers are refused: HF would take
 * their truthiness, posenc does not guess what the file meant. */
static posenc_status deberta_bool(hf_reader *h, const cJSON *cfg, const char *key, bool *value) {
    const cJSON *v = hf_use_(h, cfg, key);
    if (!v) v = member(cfg, key);
    if (!v) return POSENC_OK;
    RETURN_ERROR_IF(!cJSON_IsBool(v), h->err, POSENC_ERR_FORMAT, "config.json: '%s' must be true or false", key);
    *value = cJSON_IsTrue(v);
    return POSENC_OK;
}

/* An integer DeBERTa key that may be negative (max_relative_positions, position_buckets: -1 = the class's "none"). */
static posenc_status deberta_int(hf_reader *h, const cJSON *cfg, const char *key, int64_t *value) {
    const cJSON *v = hf_use_(h, cfg, key);
    if (!v) return POSENC_OK;
    RETURN_ERROR_IF(!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || fabs(v->valuedouble) > 1e9,
                    h->err, POSENC_ERR_FORMAT, "config.json: '%s' must be an integer (|value| <= 1e9)", key);
    *value = (int64_t)v->valuedouble;
    return POSENC_OK;
}

/* One pos_att_type word: "c2p" or "p2c" set its flag; anything else (the original code's "p2p", a repeat, "") is
 * refused: HF computes no term for it, yet DeBERTa v1 counts every entry in its scale sqrt(d x (1 + len)). */
static posenc_status deberta_term(hf_reader *h, const char *word, size_t n) {
    posenc_model *m = h->model;
    int32_t *flag = n == 3 && strncmp(word, "c2p", 3) == 0 ? &m->deberta_c2p
                    : n == 3 && strncmp(word, "p2c", 3) == 0 ? &m->deberta_p2c
                                                             : NULL;
    RETURN_ERROR_IF(!flag, h->err, POSENC_ERR_UNSUPPORTED,
                    "config.json: pos_att_type entry '%.*s' is not c2p or p2c: transformers computes no term for it "
                    "(DeBERTa v1 still counts it in its score scale); posenc does not guess", (int)(n > 32 ? 32 : n),
                    word);
    RETURN_ERROR_IF(*flag, h->err, POSENC_ERR_UNSUPPORTED,
                    "config.json: pos_att_type names '%.3s' twice (DeBERTa v1 counts it twice in its score scale)", word);
    *flag = 1;
    return POSENC_OK;
}

/* DeBERTa v1 / v2 / v3 (modeling_deberta.py, modeling_deberta_v2.py): every encoder layer adds c2p / p2c over one
 * shared rel_embeddings table when relative_attention; position_biased_input adds the absolute table first. */
static posenc_status deberta_layers(hf_reader *h, const cJSON *cfg) {
    posenc_model *m = h->model;
    const config_family *f = h->family;
    bool v2 = (f->flags & FAMILY_DEBERTA_V2) != 0, relative = false, biased = true, share = false;
    int64_t max_rel = -1, buckets = -1, max_pos = h->out->max_position_embeddings, layers = h->out->num_hidden_layers;
    FORWARD_IF_ERROR(deberta_bool(h, cfg, "relative_attention", &relative));
    FORWARD_IF_ERROR(deberta_bool(h, cfg, "position_biased_input", &biased));
    RETURN_ERROR_IF(!relative && !biased, h->err, POSENC_ERR_UNSUPPORTED,
                    "config.json: relative_attention and position_biased_input are both false: %s then has no "
                    "position information at all (no relative terms, no absolute table); posenc does not read it as "
                    "a position encoding", f->model_type);
    RETURN_ERROR_IF(max_pos < 1 && biased, h->err, POSENC_ERR_FORMAT,
                    "config.json: max_position_embeddings %lld: the absolute table needs >= 1 row", (long long)max_pos);
    if (biased) { /* DebertaEmbeddings: position_embeddings(position_ids = arange(seq)), max_position_embeddings rows */
        config_copy_name_(m->learned_tensor, sizeof m->learned_tensor, f->table, strlen(f->table));
        m->learned_offset = 0;
        m->learned_size = max_pos;
    }
    FORWARD_IF_ERROR(config_layers_alloc_(m, layers, h->err));
    if (!relative) { /* the absolute table alone, as BERT */
        for (int64_t i = 0; i < layers; i++) config_layer_set_(m, i, POSENC_LAYER_LEARNED, -1, "attention", 0);
        return POSENC_OK;
    }
    const cJSON *types = hf_use_(h, cfg, "pos_att_type");
    if (cJSON_IsString(types)) { /* __post_init__: [x.strip() for x in pos_att_type.lower().split("|")] */
        char low[128];
        size_t n = strlen(types->valuestring);
        RETURN_ERROR_IF(n >= sizeof low, h->err, POSENC_ERR_FORMAT, "config.json: 'pos_att_type' is too long");
        for (size_t i = 0; i <= n; i++) {
            char c = types->valuestring[i];
            low[i] = c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
        }
        for (const char *w = low;;) {
            const char *bar = strchr(w, '|'), *end = bar ? bar : w + strlen(w);
            while (w < end && (*w == ' ' || *w == '\t')) w++;
            while (end > w && (end[-1] == ' ' || end[-1] == '\t')) end--;
            FORWARD_IF_ERROR(deberta_term(h, w, (size_t)(end - w)));
            if (!bar) break;
            w = bar + 1;
        }
    } else if (cJSON_IsArray(types)) { /* a list is kept as written (no lower / strip) */
        const cJSON *e;
        cJSON_ArrayForEach(e, types) {
            RETURN_ERROR_IF(!cJSON_IsString(e), h->err, POSENC_ERR_FORMAT,
                            "config.json: 'pos_att_type' must be a string (\"c2p|p2c\") or a list of strings");
            FORWARD_IF_ERROR(deberta_term(h, e->valuestring, strlen(e->valuestring)));
        }
    } else {
        RETURN_ERROR_IF(types, h->err, POSENC_ERR_FORMAT,
                        "config.json: 'pos_att_type' must be a string (\"c2p|p2c\") or a list of strings");
    }
    RETURN_ERROR_IF(!m->deberta_c2p && !m->deberta_p2c, h->err, POSENC_ERR_UNSUPPORTED,
                    "config.json: relative_attention is true but pos_att_type names neither c2p nor p2c: %s builds "
                    "rel_embeddings and adds no term from it; posenc does not guess", f->model_type);
    FORWARD_IF_ERROR(deberta_int(h, cfg, "max_relative_positions", &max_rel));
    if (max_rel < 1) max_rel = max_pos; /* DisentangledSelfAttention: < 1 means max_position_embeddings */
    if (v2) { /* v1's code never reads these three */
        FORWARD_IF_ERROR(deberta_int(h, cfg, "position_buckets", &buckets));
        FORWARD_IF_ERROR(deberta_bool(h, cfg, "share_att_key", &share));
        const cJSON *norm = hf_use_(h, cfg, "norm_rel_ebd");
        RETURN_ERROR_IF(norm && !cJSON_IsString(norm), h->err, POSENC_ERR_FORMAT,
                        "config.json: 'norm_rel_ebd' must be a string (\"none\", \"layer_norm\")");
        m->deberta_norm_rel_ebd = norm && strstr(norm->valuestring, "layer_norm") != NULL; /* words split at '|' */
        m->deberta_share_att_key = share;
        /* DebertaV2Encoder: conv_kernel_size > 0 adds a ConvLayer (a 1-D convolution over neighbouring tokens) after
         * layer 0 (DeBERTa-v2 xlarge / xxlarge): order-aware mixing posenc has no field for; said, not hidden */
        const cJSON *conv = hf_item_(cfg, "conv_kernel_size");
        if (cJSON_IsNumber(conv) && conv->valuedouble > 0)
            config_note_(m->unused_keys, sizeof m->unused_keys, "conv_kernel_size");
    }
    RETURN_ERROR_IF(max_rel < 1 || max_rel > (1 << 30), h->err, POSENC_ERR_FORMAT,
                    "config.json: max_relative_positions %lld (after max_position_embeddings for < 1) must be in "
                    "1..2^30", (long long)max_rel);
    m->deberta.position_buckets = buckets > 0 ? (int32_t)(buckets > (1 << 30) ? (1 << 30) : buckets) : 0;
    m->deberta.max_relative_positions = (int32_t)max_rel;
    posenc_error inner = {0};
    if (posenc_deberta_check(&m->deberta, &inner) != POSENC_OK)
        return posenc_fail_(h->err, POSENC_ERR_FORMAT, "config.json: DeBERTa position_buckets %lld, "
                            "max_relative_positions %lld: %s", (long long)buckets, (long long)max_rel, inner.message);
    m->deberta_span = posenc_deberta_span(&m->deberta);
    m->deberta_absolute = biased;
    static const char rel_table[] = "deberta.encoder.rel_embeddings.weight";
    config_copy_name_(m->deberta_tensor, sizeof m->deberta_tensor, rel_table, strlen(rel_table));
    for (int64_t i = 0; i < layers; i++) config_layer_set_(m, i, POSENC_LAYER_DEBERTA, -1, "attention", 0);
    return POSENC_OK;
}

/* FAMILY_VISION_PATCH rows: each *Config's image_size / patch_size defaults, the leading tokens that read a row,
 * and when the runtime resizes the table (posenc_model.patch_resize), read off modeling_<model>.py (5.18) */
typedef struct {
    const char *model_type;
    int64_t image_size, patch_size;
    int32_t prefix_rows; /* CLS (ViTEmbeddings, CLIPVisionEmbeddings' class_embedding); DeiT + distillation */
    int32_t registers;   /* num_register_tokens default (DINOv2 with registers 4, TIPSv2 1), inserted after CLS */
    int32_t resize;      /* posenc_model.patch_resize: 0 never (AIMv2), 1 interpolate_pos_encoding=True only, 2 by
                            default (DINOv2 always, CLIPSeg's flag defaults True), 3 BLIP (else the first rows) */
} vision_patch;

static const vision_patch vision_patches[] = {
    {"vit", 224, 16, 1, 0, 1},
    {"deit", 224, 16, 2, 0, 1},
    {"vit_msn", 224, 16, 1, 0, 1},
    {"ijepa", 224, 16, 0, 0, 1},
    {"dinov2", 224, 14, 1, 0, 2},
    {"dinov2_with_registers", 224, 16, 1, 4, 2},
    {"clip_vision_model", 224, 32, 1, 0, 1},
    {"metaclip_2_vision_model", 224, 32, 1, 0, 1},
    {"xclip_vision_model", 224, 32, 1, 0, 1},
    {"owlvit_vision_model", 768, 32, 1, 0, 1},
    {"owlv2_vision_model", 768, 16, 1, 0, 1},
    {"siglip_vision_model", 224, 16, 0, 0, 1},
    {"chinese_clip_vision_model", 224, 32, 1, 0, 1},
    {"git_vision_model", 224, 16, 1, 0, 1},
    {"kosmos_2_vision_model", 224, 14, 1, 0, 1},
    {"clipseg_vision_model", 224, 32, 1, 0, 2},
    {"blip_vision_model", 384, 16, 1, 0, 3},
    {"blip_2_vision_model", 224, 14, 1, 0, 3},
    {"instructblip_vision_model", 224, 14, 1, 0, 3},
    {"instructblipvideo_vision_model", 224, 14, 1, 0, 3},
    {"aimv2_vision_model", 224, 14, 0, 0, 0},
    {"tipsv2_vision_model", 448, 14, 1, 1, 2},
};

/* A square image side or patch side: an integer (a list is refused: posenc reads square integer sizes only). */
static posenc_status vision_side(hf_reader *h, const cJSON *cfg, const char *key, int64_t fallback, int64_t *out) {
    const cJSON *v = hf_member_(cfg, key);
    RETURN_ERROR_IF(v && !cJSON_IsNumber(v), h->err, POSENC_ERR_UNSUPPORTED,
                    "config.json: '%s' is not an integer (a list or pair?): posenc reads a %s image table for a "
                    "square integer %s only", key, h->family->model_type, key);
    bool has = false;
    *out = fallback;
    FORWARD_IF_ERROR(hf_count_(h, cfg, "", key, (int64_t)1 << 30, out, &has));
    if (!has) {
        char text[64];
        snprintf(text, sizeof text, "%s=%lld", key, (long long)fallback);
        config_note_(h->out->defaults_used, sizeof h->out->defaults_used, text);
    }
    RETURN_ERROR_IF(*out < 1, h->err, POSENC_ERR_FORMAT, "config.json: '%s' %lld must be >= 1", key,
                    (long long)*out);
    return POSENC_OK;
}

/* ViT-style encoders: every layer LEARNED, the table's rows over [prefix tokens, patches] (posenc.h: patch_*). */
static posenc_status vision_patch_layers(hf_reader *h, const cJSON *cfg) {
    posenc_model *m = h->model;
    const config_family *f = h->family;
    const vision_patch *v = NULL;
    for (size_t i = 0; i < sizeof vision_patches / sizeof vision_patches[0] && !v; i++)
        if (strcmp(vision_patches[i].model_type, f->model_type) == 0) v = &vision_patches[i];
    RETURN_ERROR_IF(!v, h->err, POSENC_ERR_UNSUPPORTED, "config.json: %s has no vision patch row", f->model_type);
    int64_t image = 0, patch = 0, registers = v->registers;
    FORWARD_IF_ERROR(vision_side(h, cfg, "image_size", v->image_size, &image));
    FORWARD_IF_ERROR(vision_side(h, cfg, "patch_size", v->patch_size, &patch));
    RETURN_ERROR_IF(patch > image, h->err, POSENC_ERR_FORMAT,
                    "config.json: patch_size %lld is larger than image_size %lld: no patch fits", (long long)patch,
                    (long long)image);
    if (v->registers) {
        bool has = false;
        FORWARD_IF_ERROR(hf_count_(h, cfg, "", "num_register_tokens", (int64_t)1 << 20, &registers, &has));
        if (!has) {
            char text[48];
            snprintf(text, sizeof text, "num_register_tokens=%d", (int)v->registers);
            config_note_(h->out->defaults_used, sizeof h->out->defaults_used, text);
        }
    }
    if (strcmp(f->model_type, "aimv2_vision_model") == 0) { /* Aimv2VisionEmbeddings: is_native builds no table */
        const cJSON *native = hf_use_(h, cfg, "is_native");
        RETURN_ERROR_IF(native && !cJSON_IsBool(native), h->err, POSENC_ERR_FORMAT,
                        "config.json: 'is_native' must be true or false");
        RETURN_ERROR_IF(cJSON_IsTrue(native), h->err, POSENC_ERR_UNSUPPORTED,
                        "config.json: is_native true: aimv2_vision_model then adds a fixed 2D sin-cos table built "
                        "for each image's own patch grid (build_2d_sinusoidal_position_embedding, halves swapped), "
                        "not its learned table; posenc does not describe it");
    }
    int64_t side = image / patch; /* a stride-patch_size convolution: floor */
    RETURN_ERROR_IF(side > (int64_t)1 << 20, h->err, POSENC_ERR_FORMAT,
                    "config.json: image_size %lld / patch_size %lld gives %lld patches a side (over 2^20)",
                    (long long)image, (long long)patch, (long long)side);
    int64_t layers = h->out->num_hidden_layers;
    RETURN_ERROR_IF(layers < 1, h->err, POSENC_ERR_FORMAT, "config.json: num_hidden_layers %lld must be >= 1",
                    (long long)layers);
    FORWARD_IF_ERROR(config_layers_alloc_(m, layers, h->err));
    m->rope_count = 0;
    m->patch_image_size = image;
    m->patch_size = patch;
    m->patch_grid_height = m->patch_grid_width = side;
    m->patch_prefix_rows = v->prefix_rows;
    m->patch_prefix_plain = (int32_t)registers;
    m->patch_resize = v->resize;
    config_copy_name_(m->learned_tensor, sizeof m->learned_tensor, f->table, strlen(f->table));
    m->learned_offset = 0;
    m->learned_size = v->prefix_rows + side * side;
    for (int64_t i = 0; i < layers; i++) config_layer_set_(m, i, POSENC_LAYER_LEARNED, -1, "attention", 0);
    return POSENC_OK;
}

posenc_status hf_layers_(hf_reader *h, const cJSON *cfg, bool rope_free) {
    posenc_model *m = h->model;
    posenc_model_config *out = h->out;
    const config_family *f = h->family;
    if (f->flags & FAMILY_T5) return t5_layers(h, cfg);
    if (f->flags & FAMILY_DEBERTA) return deberta_layers(h, cfg);
    if (f->flags & FAMILY_VISION_PATCH) return vision_patch_layers(h, cfg);
    if (f->flags & FAMILY_WINDOW_RELATIVE) return hf_window_layers_(h, cfg);
    if (f->flags & FAMILY_CONV_POSITION) return hf_conv_position_layers_(h, cfg);
    if (f->flags & FAMILY_ROPE_2D) return hf_rope2d_layers_(h, cfg);
    if (f->flags & FAMILY_SINE_2D) return hf_sine2d_layers_(h, cfg);
    if (f->flags & FAMILY_SINUSOID_ENCODER) return sinusoid_encoder_layers(h, cfg);
    if (f->flags & FAMILY_LEARNED_ENC_DEC) return learned_enc_dec_layers(h, cfg);
    if (f->flags & FAMILY_AUDIO_ENCODER_TABLE) return audio_encoder_table_layers(h, cfg);
    if (f->flags & (FAMILY_SINUSOID_ENC_DEC | FAMILY_SINUSOID_FAIRSEQ)) return sinusoid_stacks_layers(h, cfg);
    if (f->flags & FAMILY_PATTERN_NOPE) return pattern_nope_layers(h, cfg);
    int64_t layers = out->num_hidden_layers;
    /* LFM2-MoE: no default at all (HF raises); MiMo-V2-Flash: a default rule posenc does not copy */
    RETURN_ERROR_IF((f->flags & FAMILY_TYPES_REQUIRED) && !hf_item_(cfg, "layer_types"), h->err,
                    POSENC_ERR_UNSUPPORTED,
                    "config.json: a %s config without 'layer_types': posenc reads this model's layer kinds from "
                    "layer_types only (%sConfig's own fallback is not copied); give layer_types", f->model_type,
                    f->class_stem);
    FORWARD_IF_ERROR(config_layers_alloc_(m, layers, h->err));
    if (rope_free) {
        m->rope_count = 0;
        if (f->flags & (FAMILY_LEARNED | FAMILY_ESM_POSITION_TYPE)) { /* ESM here: position_embedding_type absolute */
            m->learned_offset = (f->flags & FAMILY_OPT_OFFSET) ? 2 : 0; /* OPTLearnedPositionalEmbedding: +2 */
            m->learned_size = out->max_position_embeddings + m->learned_offset;
            if (f->flags & FAMILY_PAD_OFFSET) { /* create_position_ids_from_input_ids: cumsum(mask) + padding_idx */
                int64_t pad = 1;
                bool has = false;
                FORWARD_IF_ERROR(hf_count_(h, cfg, "", "pad_token_id", (int64_t)1 << 30, &pad, &has));
                RETURN_ERROR_IF(!has && (f->flags & FAMILY_ESM_POSITION_TYPE), h->err, POSENC_ERR_UNSUPPORTED,
                                "config.json: no 'pad_token_id': %s's config class default is None, and its absolute "
                                "table numbers positions from padding_idx + 1", f->model_type);
                RETURN_ERROR_IF(!has && member(cfg, "pad_token_id"), h->err, POSENC_ERR_UNSUPPORTED,
                                "config.json: 'pad_token_id' is null: %s numbers positions from padding_idx + 1 and "
                                "cannot run without one", f->model_type);
                m->learned_offset = (int32_t)(pad + 1);
                m->learned_size = out->max_position_embeddings; /* the table is max_position_embeddings rows */
                RETURN_ERROR_IF(m->learned_size <= m->learned_offset, h->err, POSENC_ERR_FORMAT,
                                "config.json: max_position_embeddings %lld leaves no position after the offset %d "
                                "(pad_token_id + 1)", (long long)m->learned_size, (int)m->learned_offset);
            }
            config_copy_name_(m->learned_tensor, sizeof m->learned_tensor, f->table, strlen(f->table));
            RETURN_ERROR_IF(out->max_position_embeddings <= 0, h->err, POSENC_ERR_FORMAT,
                            "config.json: a learned position table needs max_position_embeddings / n_positions");
            for (int64_t i = 0; i < layers; i++) config_layer_set_(m, i, POSENC_LAYER_LEARNED, -1, "attention", 0);
            return POSENC_OK;
        }
        if (f->flags & FAMILY_JAMBA) return jamba_layers(h, cfg, layers);
        if (f->flags & FAMILY_MAMBA_HYBRID) return mamba_hybrid_layers(h, cfg, layers, false);
        if (f->flags & FAMILY_LINEAR_LAYERS) return linear_layers(h, cfg, layers, false);
        double bias = 8.0; /* BLOOM, Falcon, Baichuan-13B: Press et al.'s 8 */
        if (f->flags & FAMILY_MPT) {
            const cJSON *ac = hf_use_(h, cfg, "attn_config");
            bool has = false;
            if (ac) FORWARD_IF_ERROR(hf_number_(h, ac, "attn_config.", "alibi_bias_max", &bias, &has));
        }
        FORWARD_IF_ERROR(config_alibi_(m, out->num_attention_heads, bias, "config.json", h->err));
        /* modeling_falcon.py: attention_logits = scores + alibi; attention_logits *= inv_norm_factor */
        m->alibi_before_scale = (f->flags & FAMILY_ALIBI_KEY) != 0;
        for (int64_t i = 0; i < layers; i++) config_layer_set_(m, i, POSENC_LAYER_ALIBI, -1, "attention", 0);
        return POSENC_OK;
    }
    if (f->flags & (FAMILY_GEMMA2_LAYERS | FAMILY_GEMMA3_LAYERS)) return gemma_layers(h, cfg, layers);
    if (f->flags & FAMILY_NOPE_LIST) return nope_list_layers(h, cfg, layers);
    if (f->flags & FAMILY_GLOBAL_NOPE) return global_nope_layers(h, cfg, layers);
    if (f->flags & FAMILY_LINEAR_LAYERS) return linear_layers(h, cfg, layers, true);
    if (f->flags & FAMILY_CONV_LAYERS) return conv_layers(h, cfg, layers);
    if (f->flags & FAMILY_CROSS_LAYERS) return cross_layers(h, cfg, layers);
    if (f->flags & FAMILY_MAMBA_HYBRID) return mamba_hybrid_layers(h, cfg, layers, true);
    if (f->flags & FAMILY_LAYER_THETA) return layer_theta_layers(h, cfg, layers);
    if (f->flags & FAMILY_DENSE_PREFIX_ROPE) return dense_prefix_layers(h, cfg, layers);
    if (f->flags & FAMILY_ATTN_INDICES) return attn_index_layers(h, cfg, layers, true);
    if (f->flags & FAMILY_ZAMBA2) return zamba2_layers(h, cfg, layers);
    if (strcmp(f->model_type, "hrm_text") == 0) return hrm_layers(h, cfg);
    if (h->decoder) return dia_layers(h, cfg, layers);
    for (int64_t i = 0; i < layers; i++) config_layer_set_(m, i, POSENC_LAYER_ROPE, 0, "attention", 0);
    return POSENC_OK;
}

bool hf_position_key_(const char *key) {
    static const char *const words[] = {"rope", "rotary", "position", "alibi", "theta", "sliding", "layer_types",
                                        "relative_attention", "n_positions", "seq_len", "seq_length", "partial",
                                        "attn_layer", "attention_interval", "pos_emb", "temperature", "floor_scale",
                                        "attn_scale", "chunk", "max_distance", "num_buckets", "mrope", "yarn",
                                        "original_max", "block_type", "window"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strstr(key, words[i])) return true;
    return false;
}

void hf_unused_keys_(hf_reader *h, const cJSON *obj, const char *prefix, bool all) {
    const cJSON *c;
    cJSON_ArrayForEach(c, obj) {
        if (!c->string || cJSON_IsNull(c)) continue;
        bool used = false;
        for (size_t i = 0; i < h->used_count && !used; i++) used = h->used[i] == c;
        if (used && cJSON_IsObject(c) && !all && strcmp(c->string, "attn_config") == 0) {
            hf_unused_keys_(h, c, "attn_config.", false); /* MPT / DBRX keep position keys in there */
            continue;
        }
        if (used || !(all || hf_position_key_(c->string))) continue;
        char name[96];
        snprintf(name, sizeof name, "%s%.60s", prefix, c->string);
        config_note_(h->model->unused_keys, sizeof h->model->unused_keys, name);
    }
}
