/* config_hf.c: RoPE settings from a Hugging Face config.json (cJSON), read
 * the way transformers' config classes read it (config_family.c has the
 * per-family defaults and rules).
 *
 * Every key is type-checked: a present key of the wrong JSON type is an
 * error naming the key (a silently ignored "rope_theta": "1e6" would give
 * wrong frequencies), JSON null counts as absent (HF writes "rope_scaling":
 * null). A key written twice in an object: the last one wins, as in Python's
 * json module, with a warning. cJSON itself refuses nesting deeper than
 * CJSON_NESTING_LIMIT. */
#define _POSIX_C_SOURCE 200809L /* strnlen */
#include "config_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HF_MAX_FACTORS 65536

#define item hf_item_

static void note_default(hf_reader *h, const char *key, double value) {
    char text[64];
    snprintf(text, sizeof text, "%s=%.10g", key, value);
    config_note_(h->out->defaults_used, sizeof h->out->defaults_used, text);
}

static posenc_status scaling_of(hf_reader *h, const cJSON *rope, posenc_model_config *out, posenc_rope_params *p,
                                bool main, posenc_error *err) {
    const cJSON *t = hf_use_(h, rope, "rope_type");
    const char *key = "rope_type";
    if (!t) {
        t = hf_use_(h, rope, "type");
        key = "type";
    }
    if (!t) return POSENC_OK; /* no type: HF treats it as default */
    RETURN_ERROR_IF(!cJSON_IsString(t), err, POSENC_ERR_FORMAT, "config.json: rope '%s' must be a string", key);
    const char *name = t->valuestring;
    if (main)
        RETURN_ERROR_IF(!config_copy_name_(out->scaling_name, sizeof out->scaling_name, name, strlen(name)), err,
                        POSENC_ERR_FORMAT, "config.json: rope %s is too long (%zu characters)", key, strlen(name));
    if (strcmp(name, "su") == 0) name = "longrope";   /* Phi-3's old name */
    if (strcmp(name, "mrope") == 0) name = "default"; /* Qwen2-VL: sections, no rescaling */
    posenc_error inner = {0};
    if (strcmp(name, "ntk") == 0 || posenc_rope_scaling_parse(name, &p->scaling, &inner) != POSENC_OK)
        return posenc_fail_(err, POSENC_ERR_UNSUPPORTED,
                            "config.json: rope '%s' is '%.32s', an unknown RoPE scaling type (known: default, linear, "
                            "dynamic, yarn, longrope, llama3; su, mrope)", key, name);
    return POSENC_OK;
}

static posenc_status factor_list(const cJSON *rope, const char *key, double **dst, size_t *count,
                                 posenc_error *err) {
    const cJSON *a = item(rope, key);
    *dst = NULL;
    *count = 0;
    if (!a) return POSENC_OK;
    RETURN_ERROR_IF(!cJSON_IsArray(a), err, POSENC_ERR_FORMAT, "config.json: rope '%s' must be an array of numbers", key);
    int n = cJSON_GetArraySize(a);
    RETURN_ERROR_IF(n > HF_MAX_FACTORS, err, POSENC_ERR_LIMIT, "config.json: rope '%s' has %d entries (limit %d)", key,
                    n, HF_MAX_FACTORS);
    double *v = malloc(sizeof *v * (size_t)(n > 0 ? n : 1));
    RETURN_ERROR_IF(!v, err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %d factors", n);
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, a) {
        if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble)) {
            free(v);
            return posenc_fail_(err, POSENC_ERR_FORMAT, "config.json: rope '%s'[%d] must be a finite number", key, i);
        }
        v[i++] = e->valuedouble;
    }
    *dst = v;
    *count = (size_t)n;
    return POSENC_OK;
}

static posenc_status longrope_lists(const cJSON *rope, posenc_model_config *out, posenc_rope_params *p,
                                    posenc_error *err) {
    RETURN_ERROR_IF(out->factor_storage, err, POSENC_ERR_UNSUPPORTED,
                    "config.json: longrope lists in more than one layer type are not supported");
    double *s = NULL, *l = NULL;
    size_t ns = 0, nl = 0;
    FORWARD_IF_ERROR(factor_list(rope, "short_factor", &s, &ns, err));
    posenc_status st = factor_list(rope, "long_factor", &l, &nl, err);
    if (st == POSENC_OK && (!s || !l))
        st = posenc_fail_(err, POSENC_ERR_FORMAT, "config.json: longrope needs both short_factor and long_factor");
    if (st == POSENC_OK && ns != nl)
        st = posenc_fail_(err, POSENC_ERR_FORMAT,
                          "config.json: short_factor has %zu entries but long_factor has %zu", ns, nl);
    if (st == POSENC_OK) {
        out->factor_storage = malloc(sizeof(double) * (ns + nl > 0 ? ns + nl : 1));
        if (!out->factor_storage) st = posenc_fail_(err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate factors");
    }
    if (st == POSENC_OK) {
        if (ns) memcpy(out->factor_storage, s, ns * sizeof(double));
        if (nl) memcpy(out->factor_storage + ns, l, nl * sizeof(double));
        p->short_factors = out->factor_storage;
        p->long_factors = out->factor_storage + ns;
        p->factors_count = ns;
    }
    free(s);
    free(l);
    return st;
}

/* The scaling knobs of one rope dict into p; *given gets POSENC_ROPE_GIVEN_*. */
static posenc_status read_rope_dict(hf_reader *h, const cJSON *rope, posenc_rope_params *p, unsigned *given,
                                    bool main) {
    posenc_model_config *out = h->out;
    posenc_error *err = h->err;
    FORWARD_IF_ERROR(hf_note_duplicates_(rope, "rope.", h));
    FORWARD_IF_ERROR(scaling_of(h, rope, out, p, main, err));
    static const char *const factor_k[] = {"factor", NULL}, *const bf_k[] = {"beta_fast", NULL},
                             *const bs_k[] = {"beta_slow", NULL}, *const ms_k[] = {"mscale", NULL},
                             *const msa_k[] = {"mscale_all_dim", NULL}, *const af_k[] = {"attention_factor", NULL},
                             *const lf_k[] = {"low_freq_factor", NULL}, *const hf_k[] = {"high_freq_factor", NULL},
                             *const orig_k[] = {"original_max_position_embeddings", NULL};
    bool has = false;
    double v = 0;
    FORWARD_IF_ERROR(hf_number_of_(h, rope, "rope ", factor_k, &p->factor, &has));
    if (has) *given |= POSENC_ROPE_GIVEN_FACTOR;
    FORWARD_IF_ERROR(hf_number_of_(h, rope, "rope ", bf_k, &v, &has));
    if (has && v != 0) p->beta_fast = v; /* HF: `or 32` */
    FORWARD_IF_ERROR(hf_number_of_(h, rope, "rope ", bs_k, &v, &has));
    if (has && v != 0) p->beta_slow = v;
    FORWARD_IF_ERROR(hf_number_of_(h, rope, "rope ", ms_k, &p->mscale, &has));
    FORWARD_IF_ERROR(hf_number_of_(h, rope, "rope ", msa_k, &p->mscale_all_dim, &has));
    FORWARD_IF_ERROR(hf_number_of_(h, rope, "rope ", af_k, &p->attention_factor, &has));
    FORWARD_IF_ERROR(hf_number_of_(h, rope, "rope ", lf_k, &p->low_freq_factor, &has));
    FORWARD_IF_ERROR(hf_number_of_(h, rope, "rope ", hf_k, &p->high_freq_factor, &has));
    int64_t orig = 0;
    FORWARD_IF_ERROR(hf_count_of_(h, rope, "rope ", orig_k, (int64_t)1 << 53, &orig, &has));
    if (has) {
        p->original_max_position = orig;
        *given |= POSENC_ROPE_GIVEN_ORIGINAL;
    }
    const cJSON *tr = hf_use_(h, rope, "truncate");
    if (tr) {
        RETURN_ERROR_IF(!cJSON_IsBool(tr), err, POSENC_ERR_FORMAT, "config.json: rope 'truncate' must be true or false");
        p->truncate = cJSON_IsTrue(tr);
    }
    if (p->scaling == POSENC_ROPE_LONGROPE) {
        hf_use_(h, rope, "short_factor");
        hf_use_(h, rope, "long_factor");
        FORWARD_IF_ERROR(longrope_lists(rope, out, p, err));
    }
    if (main && h->family && (h->family->flags & FAMILY_MROPE_INTERLEAVED)) {
        /* HF's Qwen3VLTextRotaryEmbedding interleaves always and never reads mrope_interleaved: a false
         * there says the author meant contiguous sections, which HF would not do; refused, not guessed */
        const cJSON *il = hf_use_(h, rope, "mrope_interleaved");
        RETURN_ERROR_IF(il && !cJSON_IsBool(il), err, POSENC_ERR_FORMAT,
                        "config.json: rope 'mrope_interleaved' must be true or false");
        RETURN_ERROR_IF(il && !cJSON_IsTrue(il), err, POSENC_ERR_UNSUPPORTED,
                        "config.json: rope 'mrope_interleaved' is false, but %s's rotary embedding (HF "
                        "apply_interleaved_mrope) interleaves the sections whatever this key says; posenc does not "
                        "guess which was meant", h->family->model_type);
    }
    if (main && (h->family && (h->family->flags & FAMILY_MROPE))) {
        const cJSON *sec = hf_use_(h, rope, "mrope_section");
        if (sec) {
            RETURN_ERROR_IF(!cJSON_IsArray(sec) || cJSON_GetArraySize(sec) > 4, err, POSENC_ERR_FORMAT,
                            "config.json: rope 'mrope_section' must be an array of at most 4 integers");
            int i = 0;
            const cJSON *e;
            cJSON_ArrayForEach(e, sec) {
                int64_t s = 0;
                FORWARD_IF_ERROR(hf_as_count_(e, "rope ", "mrope_section", 1 << 20, &s, err));
                out->mrope_sections[i++] = (int32_t)s;
            }
        }
    }
    if (h->family && (h->family->flags & FAMILY_PHIMOE_MSCALE) && p->scaling == POSENC_ROPE_LONGROPE) {
        static const char *const sm_k[] = {"short_mscale", NULL}, *const lm_k[] = {"long_mscale", NULL};
        double sm = 0, lm = 0;
        bool hs = false, hl = false;
        FORWARD_IF_ERROR(hf_number_of_(h, rope, "rope ", sm_k, &sm, &hs));
        FORWARD_IF_ERROR(hf_number_of_(h, rope, "rope ", lm_k, &lm, &hl));
        RETURN_ERROR_IF(hs && hl && sm != lm, err, POSENC_ERR_UNSUPPORTED,
                        "config.json: rope 'short_mscale' %g and 'long_mscale' %g differ; posenc holds one magnitude",
                        sm, lm);
        if (hs || hl) p->attention_factor = hl ? lm : sm; /* PhiMoE multiplies cos/sin by it */
        /* transformers 5.18's PhimoeRotaryEmbedding calls the longrope init without seq_len, so it rotates with
         * short_factor at every length; 4.x (and the model's own code) switch to long_factor past the original
         * context, as posenc does: said, not hidden */
        bool same = p->short_factors && p->long_factors && p->factors_count > 0;
        for (size_t k = 0; same && k < p->factors_count; k++) same = p->short_factors[k] == p->long_factors[k];
        if (!same) h->model->config.warnings |= POSENC_CONFIG_WARN_TRANSFORMERS_DIVERGES;
    }
    return POSENC_OK;
}

/* rope_parameters (late-2025 HF) or rope_scaling; per-layer-type dicts allowed. */
static posenc_status rope_dicts(const cJSON *cfg, const cJSON **main, const cJSON **local, posenc_error *err) {
    *main = *local = NULL;
    const cJSON *d = item(cfg, "rope_parameters");
    const char *name = "rope_parameters";
    if (!d) {
        d = item(cfg, "rope_scaling");
        name = "rope_scaling";
    }
    if (!d) return POSENC_OK;
    RETURN_ERROR_IF(!cJSON_IsObject(d), err, POSENC_ERR_FORMAT, "config.json: '%s' must be an object or null", name);
    const cJSON *full = item(d, "full_attention"), *sliding = item(d, "sliding_attention");
    if (cJSON_IsObject(full) || cJSON_IsObject(sliding)) {
        *main = cJSON_IsObject(full) ? full : NULL;
        *local = cJSON_IsObject(sliding) ? sliding : NULL;
        return POSENC_OK;
    }
    *main = d;
    return POSENC_OK;
}

static const char *const hidden_k[] = {"hidden_size", "n_embd", "d_model", NULL};
static const char *const heads_k[] = {"num_attention_heads", "n_head", "num_heads", "n_heads", NULL};
static const char *const layers_k[] = {"num_hidden_layers", "n_layer", "num_layers", "n_layers", NULL};
static const char *const maxpos_k[] = {"max_position_embeddings", "n_positions", "seq_length", "max_sequence_length",
                                       "max_seq_len", NULL};
/* the NeoX spellings (and, for a config without a model_type, any spelling) are read only where the config
 * class reads them: transformers 5.18 pops rotary_emb_base / rotary_pct in GPT-NeoX(-Japanese) alone, and a
 * Llama config carrying them runs with rope_theta's default and full rotation */
static const char *const theta_k[] = {"rope_theta", "rotary_emb_base", "rope_embedding_base", NULL};
static const char *const partial_k[] = {"partial_rotary_factor", "rotary_pct", NULL};
static const char *const theta_only_k[] = {"rope_theta", NULL};
static const char *const partial_only_k[] = {"partial_rotary_factor", NULL};
static const char *const headdim_k[] = {"head_dim", NULL};
static const char *const kvch_k[] = {"kv_channels", NULL};
static const char *const rotary_k[] = {"rotary_dim", NULL};
static const char *const ratio_k[] = {"rope_ratio", NULL};
static const char *const qkrope_k[] = {"qk_rope_head_dim", NULL};
static const char *const qknope_k[] = {"qk_nope_head_dim", NULL};
static const char *const top_orig_k[] = {"original_max_position_embeddings", NULL};
static const char *const local_theta_k[] = {"rope_local_base_freq", NULL};
static const char *const window_k[] = {"sliding_window", NULL};
static const char *const pattern_k[] = {"sliding_window_pattern", "_sliding_window_pattern", NULL};
/* FAMILY_LEADING_FULL (ModernBERT's 4.x spellings, which ModernBertConfig still maps) */
static const char *const global_theta_k[] = {"global_rope_theta", NULL};
static const char *const leading_local_theta_k[] = {"local_rope_theta", NULL};
static const char *const leading_pattern_k[] = {"global_attn_every_n_layers", NULL};
static const char *const local_attention_k[] = {"local_attention", NULL};

static posenc_status find_named_family(const cJSON *root, const cJSON *cfg, hf_reader *h);

/* The mrope_section each M-RoPE rotary class falls back to (its rope_parameters.get(..., default)). */
static const struct {
    const char *family;
    int32_t sections[3];
} mrope_defaults[] = {
    {"qwen2_vl", {16, 24, 24}}, {"qwen2_5_vl", {16, 24, 24}}, {"qwen3_vl", {24, 20, 20}}, {"qwen3_vl_moe", {24, 20, 20}},
    {"glm4v", {8, 12, 12}}, {"glm4v_moe", {8, 12, 12}}, {"glm_ocr", {8, 12, 12}}, {"glm_image", {8, 12, 12}},
    {"paddleocr_vl", {16, 24, 24}}, {"qwen3_5", {11, 11, 10}}, {"qwen3_5_moe", {11, 11, 10}},
};

/* M-RoPE sections: the config's, else the rotary class's default; they must cover the rotated pairs
 * (contiguous: HF's freq.split fails otherwise; interleaved: HF's slices would silently cut short ones
 * past the head). A 4th contiguous section HF sends to axis t (m[i % 3]); posenc's 4th axis is its own. */
static posenc_status mrope_sections(hf_reader *h, const posenc_rope_params *p) {
    posenc_model_config *out = h->out;
    const char *name = h->family->model_type;
    bool interleaved = (h->family->flags & FAMILY_MROPE_INTERLEAVED) != 0;
    if (out->mrope_sections[0] == 0 && out->mrope_sections[1] == 0 && out->mrope_sections[2] == 0 &&
        out->mrope_sections[3] == 0) {
        size_t i = 0, n = sizeof mrope_defaults / sizeof mrope_defaults[0];
        while (i < n && strcmp(mrope_defaults[i].family, name) != 0) i++;
        RETURN_ERROR_IF(i == n, h->err, POSENC_ERR_UNSUPPORTED,
                        "config.json: %s is M-RoPE but gives no rope 'mrope_section'; posenc does not guess its "
                        "sections", name);
        char note[64];
        for (int k = 0; k < 3; k++) out->mrope_sections[k] = mrope_defaults[i].sections[k];
        snprintf(note, sizeof note, "mrope_section=[%d, %d, %d]", out->mrope_sections[0], out->mrope_sections[1],
                 out->mrope_sections[2]);
        config_note_(out->defaults_used, sizeof out->defaults_used, note);
    }
    RETURN_ERROR_IF(!interleaved && out->mrope_sections[3] != 0, h->err, POSENC_ERR_UNSUPPORTED,
                    "config.json: rope 'mrope_section' has 4 entries; %s's rotary class sends the 4th to axis t "
                    "(m[i %% 3]), posenc's multi-axis RoPE gives it a 4th axis; refused, not guessed", name);
    out->mrope_interleaved = interleaved;
    int32_t r = 0;
    posenc_error inner = {0};
    if (posenc_rope_check(p, &r, &inner) != POSENC_OK) return POSENC_OK; /* said by the resolve below */
    int64_t sum = 0;
    for (int i = 0; i < 4; i++) sum += out->mrope_sections[i];
    RETURN_ERROR_IF(sum != r / 2, h->err, POSENC_ERR_FORMAT,
                    "config.json: rope 'mrope_section' [%d, %d, %d] adds up to %lld pairs, the rotated head has %d "
                    "(head_dim %d)", out->mrope_sections[0], out->mrope_sections[1], out->mrope_sections[2],
                    (long long)sum, r / 2, p->head_dim);
    return POSENC_OK;
}

/* The position-related keys of obj, comma-separated (for the refusal message). */
static void position_keys(const cJSON *obj, char *buf, size_t size) {
    const cJSON *c;
    buf[0] = '\0';
    cJSON_ArrayForEach(c, obj) if (c->string && hf_position_key_(c->string)) config_note_(buf, size, c->string);
}

/* Which model family: model_type of the object read, of the root, or the first architectures entry;
 * the one assumed on purpose; else refused by name. */
static posenc_status find_family(const cJSON *root, const cJSON *cfg, const posenc_config_options *options,
                                 hf_reader *h) {
    posenc_model_config *out = h->out;
    FORWARD_IF_ERROR(find_named_family(root, cfg, h));
    const char *assume = options ? options->assume_family : NULL;
    char close[96] = "", keys[120] = "";
    position_keys(cfg, keys, sizeof keys);
    if (assume) {
        const config_family *a = config_family_find_(assume);
        config_closest_families_(assume, false, close, sizeof close);
        RETURN_ERROR_IF(!a, h->err, POSENC_ERR_INVALID_ARGUMENT,
                        "assume_family '%.40s' is not a model family posenc knows (closest: %s)", assume, close);
        h->family = a;
        h->model->assumed = 1;
        config_copy_name_(h->model->assumed_family, sizeof h->model->assumed_family, a->model_type,
                          strlen(a->model_type));
        out->warnings |= POSENC_CONFIG_WARN_UNKNOWN_FAMILY;
        return POSENC_OK;
    }
    if (h->family) return POSENC_OK;
    if (!out->architecture[0]) {
        /* a bare dict of HF rope keys (modeling_rope_utils' own inputs): read as such, and said to be
         * assumed (the layout above all), never passed off as a known model */
        h->family = config_family_generic_();
        h->model->assumed = 1;
        config_copy_name_(h->model->assumed_family, sizeof h->model->assumed_family, "generic", 7);
        out->warnings |= POSENC_CONFIG_WARN_UNKNOWN_FAMILY;
        return POSENC_OK;
    }
    const config_refusal *why = config_refusal_find_(out->architecture);
    RETURN_ERROR_IF(why, h->err, POSENC_ERR_UNSUPPORTED, "config.json: model_type '%s' refused: %s", why->model_type,
                    why->reason);
    config_closest_families_(out->architecture, false, close, sizeof close);
    return posenc_fail_(h->err, POSENC_ERR_UNSUPPORTED,
                        "config.json: model_type '%.40s' is not a model family posenc knows (position keys: %.80s; "
                        "closest: %s); read it as one on purpose with --assume FAMILY",
                        out->architecture, keys[0] ? keys : "none", close);
}

/* FAMILY_REMOTE_ARCH (Kimi K2): the remote code is DeepSeek-V3's only when architectures[0] names its class;
 * that code always interleaves, so rope_interleave must be absent or true. */
static posenc_status remote_arch(hf_reader *h, const cJSON *root, const cJSON *cfg) {
    const config_family *f = h->family;
    char want[64];
    snprintf(want, sizeof want, "%sForCausalLM", f->class_stem);
    const cJSON *arch = item(cfg, "architectures");
    if (!arch) arch = item(root, "architectures");
    const cJSON *first = cJSON_IsArray(arch) ? cJSON_GetArrayItem(arch, 0) : NULL;
    RETURN_ERROR_IF(!cJSON_IsString(first) || strcmp(first->valuestring, want) != 0, h->err, POSENC_ERR_UNSUPPORTED,
                    "config.json: model_type '%s' is remote code; posenc reads it as %s's %s only with 'architectures' "
                    "[\"%s\"] (its published config.json), got %.60s", f->model_type, f->class_stem, want, want,
                    cJSON_IsString(first) ? first->valuestring : arch ? "another value" : "none");
    const cJSON *ri = item(cfg, "rope_interleave");
    RETURN_ERROR_IF(ri && !cJSON_IsTrue(ri), h->err, POSENC_ERR_UNSUPPORTED,
                    "config.json: model_type '%s': 'rope_interleave' is not true, but its remote modeling code "
                    "always rotates interleaved pairs (transformers' %s would not): posenc does not pick one",
                    f->model_type, f->class_stem);
    return POSENC_OK;
}

/* model_type of the object read, of the root, or the first architectures entry. */
static posenc_status find_named_family(const cJSON *root, const cJSON *cfg, hf_reader *h) {
    posenc_model_config *out = h->out;
    const cJSON *mt = item(cfg, "model_type");
    if (!mt) mt = item(root, "model_type");
    if (mt) {
        RETURN_ERROR_IF(!cJSON_IsString(mt), h->err, POSENC_ERR_FORMAT, "config.json: 'model_type' must be a string");
        RETURN_ERROR_IF(!config_copy_name_(out->architecture, sizeof out->architecture, mt->valuestring,
                                           strlen(mt->valuestring)),
                        h->err, POSENC_ERR_FORMAT, "config.json: model_type is too long (%zu characters)",
                        strlen(mt->valuestring));
        h->family = config_family_find_(out->architecture);
        return POSENC_OK; /* a model_type names the family; no guessing from the class name */
    }
    const cJSON *arch = item(cfg, "architectures");
    if (!arch) arch = item(root, "architectures");
    if (arch) {
        RETURN_ERROR_IF(!cJSON_IsArray(arch), h->err, POSENC_ERR_FORMAT,
                        "config.json: 'architectures' must be an array of strings");
        const cJSON *first = cJSON_GetArrayItem(arch, 0);
        if (cJSON_IsString(first)) {
            h->family = config_family_from_class_(first->valuestring);
            if (!out->architecture[0])
                RETURN_ERROR_IF(!config_copy_name_(out->architecture, sizeof out->architecture, first->valuestring,
                                                   strlen(first->valuestring)),
                                h->err, POSENC_ERR_FORMAT, "config.json: architectures[0] is too long (%zu characters)",
                                strlen(first->valuestring));
        }
    }
    return POSENC_OK;
}

/* Gemma-2/3: the layer kinds, from layer_types or the sliding_window_pattern. */
static posenc_status layer_kinds(hf_reader *h, const cJSON *cfg, const cJSON *local_dict, int64_t layers) {
    posenc_model_config *out = h->out;
    const config_family *f = h->family;
    int64_t window = f->sliding_window, pattern = f->sliding_pattern, local_count = 0, full_count = 0;
    bool has = false, leading = (f->flags & FAMILY_LEADING_FULL) != 0;
    if (leading) { /* HF: sliding_window = local_attention // 2 (the half window each side) */
        int64_t local_attention = 2 * window;
        FORWARD_IF_ERROR(hf_count_of_(h, cfg, "", local_attention_k, (int64_t)1 << 53, &local_attention, &has));
        window = local_attention / 2;
    } else {
        FORWARD_IF_ERROR(hf_count_of_(h, cfg, "", window_k, (int64_t)1 << 53, &window, &has));
    }
    has = false; /* from here: whether a pattern was given */
    if (!(f->flags & FAMILY_TYPE_ROPE_DICTS)) /* those classes have no pattern key */
        FORWARD_IF_ERROR(hf_count_of_(h, cfg, "", leading ? leading_pattern_k : pattern_k, 1 << 20, &pattern, &has));
    const cJSON *types = hf_use_(h, cfg, "layer_types");
    if (types) {
        RETURN_ERROR_IF(!cJSON_IsArray(types), h->err, POSENC_ERR_FORMAT,
                        "config.json: 'layer_types' must be an array of strings");
        const cJSON *e;
        cJSON_ArrayForEach(e, types) {
            RETURN_ERROR_IF(!cJSON_IsString(e), h->err, POSENC_ERR_FORMAT,
                            "config.json: 'layer_types' must be an array of strings");
            if (strcmp(e->valuestring, "sliding_attention") == 0) local_count++;
            else if (strcmp(e->valuestring, "full_attention") == 0) full_count++;
            else /* HF's layer_type_validation refuses it; a miscased word is not full attention */
                return posenc_fail_(h->err, POSENC_ERR_UNSUPPORTED,
                                    "config.json: layer_types[%lld] is '%.32s' (known for this model: "
                                    "sliding_attention, full_attention; HF refuses other words)",
                                    (long long)(local_count + full_count), e->valuestring);
        }
    } else if (has && pattern == 0) {
        return posenc_fail_(h->err, POSENC_ERR_FORMAT,
                            "config.json: '%s' is 0: HF's layer kinds take %s %% 0 and raise (give a pattern > 0 or "
                            "layer_types)", leading ? "global_attn_every_n_layers" : "sliding_window_pattern",
                            leading ? "i" : "(i + 1)");
    } else if (layers > 0 && pattern > 0) { /* HF: layer i slides iff (i + 1) % pattern != 0 (leading: i % pattern) */
        full_count = leading ? (layers + pattern - 1) / pattern : layers / pattern;
        local_count = layers - full_count;
    }
    out->layer_type_count = 2;
    posenc_config_layer_type *g = &out->layer_types[0], *l = &out->layer_types[1];
    snprintf(g->name, sizeof g->name, "full_attention");
    snprintf(l->name, sizeof l->name, "sliding_attention");
    g->layers = (int32_t)full_count;
    l->layers = (int32_t)local_count;
    l->sliding_window = window;
    l->rope = out->rope; /* Gemma-2: the same RoPE in both kinds */
    if (f->flags & FAMILY_GEMMA3_LAYERS) {
        posenc_rope_params *p = &l->rope;
        if (!leading || local_dict) { /* ModernBERT: a 4.x rope_scaling is copied into both kinds */
            p->scaling = POSENC_ROPE_NONE;
            p->factor = 1.0;
            p->short_factors = p->long_factors = NULL;
            p->factors_count = 0;
            p->attention_factor = 0;
        }
        bool has_local = false;
        RETURN_ERROR_IF((f->flags & FAMILY_TYPE_ROPE_DICTS) && !local_dict && local_count > 0, h->err,
                        POSENC_ERR_UNSUPPORTED,
                        "config.json: %lld sliding_attention layers and no rope_parameters.sliding_attention dict "
                        "(HF's %s rotary class indexes it and raises)", (long long)local_count, f->model_type);
        if (local_dict) {
            static const char *const rt_k[] = {"rope_theta", NULL};
            unsigned given = 0;
            FORWARD_IF_ERROR(read_rope_dict(h, local_dict, p, &given, false));
            FORWARD_IF_ERROR(hf_number_of_(h, local_dict, "rope sliding_attention ", rt_k, &p->base, &has_local));
            if (!(f->flags & (FAMILY_READS_PARTIAL | FAMILY_GENERIC))) { /* as for the top-level factor */
                static const char *const pk[] = {"partial_rotary_factor", NULL};
                double local_partial = 1.0;
                bool has_local_partial = false;
                FORWARD_IF_ERROR(hf_number_of_(h, local_dict, "rope sliding_attention ", pk, &local_partial,
                                               &has_local_partial));
                RETURN_ERROR_IF(has_local_partial && local_partial != 1.0, h->err, POSENC_ERR_UNSUPPORTED,
                                "config.json: rope_parameters.sliding_attention 'partial_rotary_factor' %g: "
                                "transformers 5.18's %s rotary class does not read it (it rotates the whole head); "
                                "posenc does not pick one: drop the key if the whole head rotates",
                                local_partial, f->class_stem);
            }
            if (f->flags & FAMILY_TYPE_ROPE_DICTS) { /* its own partial_rotary_factor, .get default */
                static const char *const pk[] = {"partial_rotary_factor", NULL};
                bool has_partial = false;
                p->partial_rotary_factor = f->partial > 0 ? f->partial : 1.0;
                FORWARD_IF_ERROR(hf_number_of_(h, local_dict, "rope sliding_attention ", pk, &p->partial_rotary_factor,
                                               &has_partial));
                p->rotary_dim = 0; /* from the head and this factor (resolved below) */
                RETURN_ERROR_IF(!has_local, h->err, POSENC_ERR_UNSUPPORTED,
                                "config.json: rope_parameters.sliding_attention has no rope_theta (HF's %s rotary "
                                "class indexes it and raises)", f->model_type);
            }
            posenc_error inner = {0};
            if (posenc_rope_resolve(p, given, NULL, &inner) != POSENC_OK)
                return posenc_fail_(h->err, inner.status, "config.json: sliding_attention rope: %s", inner.message);
        }
        if (!has_local)
            FORWARD_IF_ERROR(hf_number_of_(h, cfg, "", leading ? leading_local_theta_k : local_theta_k, &p->base,
                                           &has_local));
        if (!has_local && leading && !local_dict) { /* null: 4.x gave these layers global_rope_theta, 5.18 raises */
            const cJSON *c;
            cJSON_ArrayForEach(c, cfg) RETURN_ERROR_IF(c->string && strcmp(c->string, "local_rope_theta") == 0,
                                                       h->err, POSENC_ERR_UNSUPPORTED,
                                                       "config.json: 'local_rope_theta' is null: transformers 4.x "
                                                       "rotates the local layers at global_rope_theta, 5.18 cannot "
                                                       "build the model; posenc does not choose");
        }
        if (!has_local) {
            p->base = f->local_theta;
            note_default(h, leading ? "local_rope_theta" : "rope_local_base_freq", f->local_theta);
        }
    }
    return POSENC_OK;
}

/* FAMILY_TYPE_ROPE_DICTS: the rope_parameters dicts per layer type are the only RoPE keys the model reads. */
static posenc_status type_rope_dicts(hf_reader *h, const cJSON *cfg) {
    static const char *const ignored[] = {"rope_theta", "partial_rotary_factor", "rope_scaling"};
    const config_family *f = h->family;
    for (size_t i = 0; i < sizeof ignored / sizeof ignored[0]; i++)
        RETURN_ERROR_IF(item(cfg, ignored[i]), h->err, POSENC_ERR_UNSUPPORTED,
                        "config.json: top-level '%s' in a %s config: %sConfig drops it unread (only "
                        "rope_parameters.full_attention / .sliding_attention reach the model); posenc does not "
                        "guess which the file means", ignored[i], f->model_type, f->class_stem);
    const cJSON *d = item(cfg, "rope_parameters"), *full = d ? item(d, "full_attention") : NULL;
    RETURN_ERROR_IF(!cJSON_IsObject(full), h->err, POSENC_ERR_UNSUPPORTED,
                    "config.json: a %s config without rope_parameters.full_attention: %sConfig then builds its own "
                    "per-layer-type dicts (or indexes a missing one and raises), which posenc does not copy; give "
                    "rope_parameters with full_attention and sliding_attention", f->model_type, f->class_stem);
    RETURN_ERROR_IF(!item(full, "rope_theta"), h->err, POSENC_ERR_UNSUPPORTED,
                    "config.json: rope_parameters.full_attention has no rope_theta (HF's %s rotary class indexes it "
                    "and raises)", f->model_type);
    return POSENC_OK;
}

/* Does this model have no RoPE layer at all? (decided as the model's own code decides) */
static posenc_status rope_free_model(hf_reader *h, const cJSON *cfg, bool *rope_free) {
    const config_family *f = h->family;
    *rope_free = (f->flags & FAMILY_NO_ROPE) != 0;
    if (f->flags & FAMILY_ALIBI_KEY) { /* Falcon: "alibi": true replaces RoPE */
        const cJSON *alibi = hf_use_(h, cfg, "alibi");
        RETURN_ERROR_IF(alibi && !cJSON_IsBool(alibi), h->err, POSENC_ERR_FORMAT,
                        "config.json: 'alibi' must be true or false");
        *rope_free = cJSON_IsTrue(alibi);
    }
    if (f->flags & FAMILY_MPT) { /* HF's MptModel always adds ALiBi; the original code has a learned table */
        const cJSON *ac = hf_use_(h, cfg, "attn_config"), *alibi = ac ? hf_use_(h, ac, "alibi") : NULL;
        RETURN_ERROR_IF(alibi && !cJSON_IsBool(alibi), h->err, POSENC_ERR_FORMAT,
                        "config.json: 'attn_config.alibi' must be true or false");
        RETURN_ERROR_IF(alibi && !cJSON_IsTrue(alibi), h->err, POSENC_ERR_UNSUPPORTED,
                        "config.json: MPT with attn_config.alibi false uses the original code's learned table, "
                        "which HF's MptModel does not implement (it always adds ALiBi); posenc does not guess");
        *rope_free = true;
    }
    if (f->flags & FAMILY_BAICHUAN) { /* llama.cpp (and the two model codes): 40 layers = 13B = ALiBi */
        int64_t layers = 0;
        bool has = false;
        static const char *const lk[] = {"num_hidden_layers", NULL};
        FORWARD_IF_ERROR(hf_count_of_(h, cfg, "", lk, (int64_t)1 << 30, &layers, &has));
        *rope_free = has && layers == 40;
    }
    if (f->flags & FAMILY_OLMO_HYBRID) { /* OlmoHybridModel: rotary_emb only if rope_parameters.get("rope_theta") */
        const cJSON *d = item(cfg, "rope_parameters"), *c, *theta = NULL;
        if (!cJSON_IsObject(d)) d = cfg; /* 4.x: a top-level rope_theta */
        cJSON_ArrayForEach(c, d) if (c->string && strcmp(c->string, "rope_theta") == 0) theta = c;
        *rope_free = theta && cJSON_IsNull(theta); /* null, not absent: absent is the default 10000 */
    }
    if (f->flags & FAMILY_MAMBA_HYBRID) { /* Granite-4.0-H: position_embedding_type "rope" or not */
        const cJSON *t = hf_use_(h, cfg, "position_embedding_type");
        RETURN_ERROR_IF(t && !cJSON_IsString(t), h->err, POSENC_ERR_FORMAT,
                        "config.json: 'position_embedding_type' must be a string");
        RETURN_ERROR_IF(t && strcmp(t->valuestring, "rope") != 0 && strcmp(t->valuestring, "nope") != 0, h->err,
                        POSENC_ERR_UNSUPPORTED,
                        "config.json: position_embedding_type '%.32s' is not one posenc knows (rope, nope)",
                        t->valuestring);
        *rope_free = !t || strcmp(t->valuestring, "rope") != 0;
    }
    if (f->flags & FAMILY_ESM_POSITION_TYPE) { /* EsmEmbeddings / EsmModel: "absolute" or "rotary" */
        const cJSON *t = hf_use_(h, cfg, "position_embedding_type");
        if (!t) t = hf_member_(cfg, "position_embedding_type"); /* null: absent to hf_use_, not to EsmConfig */
        RETURN_ERROR_IF(t && !cJSON_IsString(t) && !cJSON_IsNull(t), h->err, POSENC_ERR_FORMAT,
                        "config.json: 'position_embedding_type' must be a string");
        const char *type = cJSON_IsString(t) ? t->valuestring : "absolute"; /* absent: EsmConfig's default */
        RETURN_ERROR_IF(cJSON_IsNull(t), h->err, POSENC_ERR_UNSUPPORTED,
                        "config.json: position_embedding_type null: %s then adds no table and no rotation (only "
                        "'absolute' and 'rotary' carry positions); posenc does not guess", f->model_type);
        RETURN_ERROR_IF(strcmp(type, "absolute") != 0 && strcmp(type, "rotary") != 0, h->err, POSENC_ERR_UNSUPPORTED,
                        "config.json: position_embedding_type '%.32s' is not one %s implements (absolute, rotary): "
                        "transformers 5.18 would run it with no positions at all; posenc does not guess",
                        type, f->model_type);
        static const char *const dicts[] = {"rope_scaling", "rope_parameters"};
        for (size_t i = 0; i < 2; i++) {
            const cJSON *d = item(cfg, dicts[i]);
            RETURN_ERROR_IF(d && !cJSON_IsNull(d), h->err, POSENC_ERR_UNSUPPORTED,
                            "config.json: '%s' in a %s config: EsmRotaryEmbedding rotates with top-level rope_theta "
                            "alone and ignores it; posenc does not guess which the file meant",
                            dicts[i], f->model_type);
        }
        *rope_free = strcmp(type, "rotary") != 0;
    }
    if (f->flags & FAMILY_ROFORMER) {
        const cJSON *v = hf_use_(h, cfg, "rotary_value");
        RETURN_ERROR_IF(v && !cJSON_IsBool(v), h->err, POSENC_ERR_FORMAT,
                        "config.json: 'rotary_value' must be true or false");
        RETURN_ERROR_IF(cJSON_IsTrue(v), h->err, POSENC_ERR_UNSUPPORTED,
                        "config.json: rotary_value true: %s rotates the values as well as q and k "
                        "(apply_rotary_position_embeddings), which posenc's model has no field for", f->model_type);
        static const char *const ignored[] = {"rope_theta", "rope_scaling", "rope_parameters", "partial_rotary_factor",
                                              "rotary_dim", "head_dim"};
        for (size_t i = 0; i < sizeof ignored / sizeof ignored[0]; i++)
            RETURN_ERROR_IF(item(cfg, ignored[i]), h->err, POSENC_ERR_UNSUPPORTED,
                            "config.json: '%s' in a %s config: its sinusoid table hard-codes base 10000 over "
                            "hidden_size // num_attention_heads channels and ignores it; posenc does not guess which "
                            "the file meant", ignored[i], f->model_type);
    }
    return POSENC_OK;
}

/* Dia (DiaModel) and T5Gemma (T5GemmaModel), transformers 5.18: an encoder stack and a decoder stack, each with its
 * own rotary embedding built from its own sub-config (Dia: encoder_config / decoder_config; T5Gemma: encoder /
 * decoder), positions 0.. in each stack. posenc reads the encoder's RoPE and lists both stacks with it, so the
 * decoder's sub-config must give the same RoPE keys (else refused naming the key); without either sub-config HF
 * builds its class defaults, which posenc does not copy (refused). */
static posenc_status dia_stacks(hf_reader *h, const cJSON *root, const cJSON **cfg) {
    bool dia = strcmp(h->family->model_type, "dia") == 0;
    const char *ek = dia ? "encoder_config" : "encoder", *dk = dia ? "decoder_config" : "decoder";
    const cJSON *enc = hf_use_(h, root, ek), *dec = hf_use_(h, root, dk);
    RETURN_ERROR_IF(!cJSON_IsObject(enc) || !cJSON_IsObject(dec), h->err, POSENC_ERR_UNSUPPORTED,
                    "config.json: a %s config without %s and %s objects: HF then builds its class-default stacks, "
                    "which posenc does not copy; give both", h->family->model_type, ek, dk);
    static const char *const same[] = {"rope_parameters", "rope_scaling", "rope_theta", "partial_rotary_factor",
                                       "head_dim"};
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        const cJSON *a = item(enc, same[i]), *b = item(dec, same[i]);
        RETURN_ERROR_IF((a || b) && !(a && b && cJSON_Compare(a, b, true)), h->err, POSENC_ERR_UNSUPPORTED,
                        "config.json: %s's %s and %s give different '%s': each stack rotates with its own, and "
                        "posenc lists both stacks with one RoPE; not read", h->family->model_type, ek, dk, same[i]);
        hf_mark_(h, b);
    }
    h->decoder = dec;
    *cfg = enc;
    return POSENC_OK;
}

/* The counts of a model without RoPE (ALiBi heads, learned table size, layer count). */
static posenc_status read_counts(hf_reader *h, const cJSON *cfg) {
    posenc_model_config *out = h->out;
    const config_family *f = h->family;
    const int64_t dim_max = (int64_t)1 << 30, pos_max = (int64_t)1 << 53;
    int64_t hidden = 0, heads = 0, layers = 0, max_pos = 0;
    bool has_hidden, has_heads, has_layers, has_max;
    FORWARD_IF_ERROR(hf_count_of_(h, cfg, "", hidden_k, dim_max, &hidden, &has_hidden));
    FORWARD_IF_ERROR(hf_count_of_(h, cfg, "", heads_k, dim_max, &heads, &has_heads));
    FORWARD_IF_ERROR(hf_count_of_(h, cfg, "", layers_k, dim_max, &layers, &has_layers));
    FORWARD_IF_ERROR(hf_count_of_(h, cfg, "", maxpos_k, pos_max, &max_pos, &has_max));
    if (!has_hidden && f->hidden) note_default(h, "hidden_size", (double)(hidden = f->hidden));
    if (!has_heads && f->heads) note_default(h, "num_attention_heads", (double)(heads = f->heads));
    if (!has_layers && f->layers) note_default(h, "num_hidden_layers", (double)(layers = f->layers));
    if (!has_max && f->max_position) note_default(h, "max_position_embeddings", (double)(max_pos = f->max_position));
    out->hidden_size = (int32_t)hidden;
    out->num_attention_heads = (int32_t)heads;
    out->num_hidden_layers = (int32_t)layers;
    out->max_position_embeddings = max_pos;
    return POSENC_OK;
}

/* The query scale the family's attention applies (posenc_model.query_scale), from the keys its modeling code reads. */
static posenc_status query_scale(hf_reader *h, const cJSON *cfg, const cJSON *rope) {
    const config_family *f = h->family;
    posenc_query_scale *qs = &h->model->query_scale;
    posenc_error *err = h->err;
    if (f->flags & FAMILY_LLAMA4_ATTN_SCALE) {
        /* Ministral3Attention: rope_parameters.get("llama_4_scaling_beta") and .get("original_max_position_embeddings")
         * on the dict as the config holds it (a 4.x rope_scaling becomes that dict; a top-level
         * llama_4_scaling_beta stays outside it and is never read) */
        double beta = 0;
        int64_t original = 0;
        bool has_beta = false, has_orig = false;
        if (rope) FORWARD_IF_ERROR(hf_number_(h, rope, "rope ", "llama_4_scaling_beta", &beta, &has_beta));
        if (rope)
            FORWARD_IF_ERROR(hf_count_(h, rope, "rope ", "original_max_position_embeddings", (int64_t)1 << 53,
                                       &original, &has_orig));
        RETURN_ERROR_IF(!has_beta, err, POSENC_ERR_UNSUPPORTED,
                        "config.json: a %s config whose rope dict has no 'llama_4_scaling_beta': its attention "
                        "multiplies q by get_llama_4_attn_scale(pos, rope_parameters['llama_4_scaling_beta'], ...), "
                        "which cannot run without it%s", f->model_type,
                        hf_item_(cfg, "llama_4_scaling_beta") ? " (a top-level one is not read there)" : "");
        RETURN_ERROR_IF(!has_orig || original == 0, err, POSENC_ERR_UNSUPPORTED,
                        "config.json: a %s config whose rope dict has no 'original_max_position_embeddings' (or 0): "
                        "get_llama_4_attn_scale divides the position by rope_parameters['original_max_position_"
                        "embeddings'], which HF takes from the dict alone", f->model_type);
        qs->layers = POSENC_QUERY_SCALE_ALL;
        qs->beta = beta;
        qs->divisor = original;
        qs->shift = 0;
    }
    if (f->flags & FAMILY_NOPE_TEMPERATURE) {
        /* Llama4TextAttention: `if self.attn_temperature_tuning and not self.use_rope` (class default true) */
        const cJSON *tuning = hf_use_(h, cfg, "attn_temperature_tuning");
        /* a number (the released Llama 4 Scout / Maverick config.json: 4) is read as transformers 4.x's forward reads
         * it, by truth value (5.18's strict config class refuses anything but a bool while loading) */
        RETURN_ERROR_IF(tuning && !cJSON_IsBool(tuning) && !cJSON_IsNumber(tuning), err, POSENC_ERR_FORMAT,
                        "config.json: 'attn_temperature_tuning' must be true or false (or a number, read by its "
                        "truth value as transformers 4.x did)");
        bool on = !tuning || cJSON_IsTrue(tuning) || (cJSON_IsNumber(tuning) && tuning->valuedouble != 0);
        double scale = 0.1;
        int64_t floor_scale = 8192;
        bool has_scale = false, has_floor = false;
        FORWARD_IF_ERROR(hf_number_(h, cfg, "", "attn_scale", &scale, &has_scale));
        FORWARD_IF_ERROR(hf_count_(h, cfg, "", "floor_scale", (int64_t)1 << 53, &floor_scale, &has_floor));
        if (!on) return POSENC_OK; /* the two keys are read, and unused by HF too */
        RETURN_ERROR_IF(floor_scale == 0, err, POSENC_ERR_UNSUPPORTED,
                        "config.json: 'floor_scale' 0 with attn_temperature_tuning: HF divides the position by it "
                        "(an infinite scale); posenc refuses it");
        if (!tuning) note_default(h, "attn_temperature_tuning", 1);
        if (!has_scale) note_default(h, "attn_scale", scale);
        if (!has_floor) note_default(h, "floor_scale", (double)floor_scale);
        qs->layers = POSENC_QUERY_SCALE_NOPE;
        qs->beta = scale;
        qs->divisor = floor_scale;
        qs->shift = 1;
    }
    return POSENC_OK;
}

static posenc_status parse_model(const cJSON *root, const posenc_config_options *options, posenc_model *m,
                                 posenc_error *err) {
    posenc_model_config *out = &m->config;
    RETURN_ERROR_IF(!cJSON_IsObject(root), err, POSENC_ERR_FORMAT, "config.json: the document must be a JSON object");
    hf_reader h;
    memset(&h, 0, sizeof h);
    h.model = m;
    h.out = out;
    h.err = err;
    const cJSON *cfg = root;
    const cJSON *text = item(root, "text_config");
    if (!item(root, "rope_theta") && !item(root, "hidden_size") && cJSON_IsObject(text)) cfg = text;
    /* Qwen3VLConfig builds its text model from text_config alone (none: the built-in defaults): a
     * composite model_type reads text_config whatever the top level holds, and is refused without one */
    const cJSON *root_mt = item(root, "model_type");
    const config_family *root_f = cJSON_IsString(root_mt) ? config_family_find_(root_mt->valuestring) : NULL;
    /* a refused model type is refused for its reason before any wrapper rule (DiffusionGemma holds a text_config;
     * Voxtral & co.: two position paths) */
    const config_refusal *why = cJSON_IsString(root_mt) ? config_refusal_find_(root_mt->valuestring) : NULL;
    RETURN_ERROR_IF(why && !(options && options->assume_family), err, POSENC_ERR_UNSUPPORTED,
                    "config.json: model_type '%s' refused: %s", why->model_type, why->reason);
    if (root_f && (root_f->flags & FAMILY_NESTED_TEXT) && strcmp(root_mt->valuestring, root_f->model_type) == 0) {
        char keys[120] = "";
        if (!cJSON_IsObject(text)) position_keys(root, keys, sizeof keys);
        RETURN_ERROR_IF(keys[0], err, POSENC_ERR_UNSUPPORTED,
                        "config.json: a %s config without text_config but with top-level position keys (%.80s): HF "
                        "builds its text model from text_config alone (none: the class defaults) and never reads "
                        "them; give the text_config", root_f->model_type, keys);
        cfg = cJSON_IsObject(text) ? text : root; /* no keys at all: the class defaults, as HF */
    }
    /* A composite model (an outer model_type around a text_config) can move positions: image tokens,
     * offsets (PaliGemma counts from 1), M-RoPE. Reading it as its inner family is a guess unless the
     * outer type is in a table: refused by name (--assume reads the text model on purpose). */
    const cJSON *text_mt = cJSON_IsObject(text) ? item(text, "model_type") : NULL;
    /* A listed wrapper without text_config (or without its model_type): HF builds its class default text
     * model (LlavaConfig: LlamaConfig(), Idefics3Config: a llama of its own sizes...), which posenc does not copy */
    RETURN_ERROR_IF(cJSON_IsString(root_mt) && !root_f && config_wrapper_find_(root_mt->valuestring) &&
                        !cJSON_IsString(text_mt) && !(options && options->assume_family),
                    err, POSENC_ERR_UNSUPPORTED,
                    "config.json: a %.40s config without text_config or its model_type: HF then builds the class's "
                    "default text model, which posenc does not copy; give the text_config with its model_type",
                    root_mt->valuestring);
    if (cJSON_IsString(root_mt) && cJSON_IsString(text_mt) && !root_f &&
        strcmp(root_mt->valuestring, text_mt->valuestring) != 0) {
        const config_wrapper *w = config_wrapper_find_(root_mt->valuestring);
        RETURN_ERROR_IF(!w && !(options && options->assume_family), err, POSENC_ERR_UNSUPPORTED,
                        "config.json: model_type '%.40s' wraps a text_config of model_type '%.40s': posenc does not "
                        "know how '%.40s' places positions around its text model (image tokens, offsets, M-RoPE), "
                        "so it is not read as '%.40s'; read the text model on purpose with --assume %.40s",
                        root_mt->valuestring, text_mt->valuestring, root_mt->valuestring, text_mt->valuestring,
                        text_mt->valuestring);
        if (w) {
            cfg = text; /* the wrapper's own config class reads text_config only */
            m->position_start = w->position_start;
        }
    }
    FORWARD_IF_ERROR(hf_note_duplicates_(root, "", &h));
    if (cfg != root) FORWARD_IF_ERROR(hf_note_duplicates_(cfg, "text_config.", &h));
    FORWARD_IF_ERROR(find_family(root, cfg, options, &h));
    const config_family *f = h.family;
    if ((strcmp(f->model_type, "dia") == 0 || strcmp(f->model_type, "t5gemma") == 0) && !m->assumed)
        FORWARD_IF_ERROR(dia_stacks(&h, root, &cfg));
    bool generic = (f->flags & FAMILY_GENERIC) != 0;
    if (!generic) config_copy_name_(out->family, sizeof out->family, f->model_type, strlen(f->model_type));
    out->layout = f->layout;
    out->layout_known = !generic;
    /* Mistral3Config without text_config builds its own MistralConfig (rope_theta 1e9, hidden 5120, 40
     * layers) and never reads top-level RoPE keys: which one a file means is a guess, so refuse */
    RETURN_ERROR_IF(strcmp(f->model_type, "mistral3") == 0 && !cJSON_IsObject(text), err, POSENC_ERR_UNSUPPORTED,
                    "config.json: a mistral3 config without text_config: HF uses its built-in text model "
                    "(rope_theta 1e9, hidden 5120) and ignores top-level RoPE keys; give the text_config");
    if (f->flags & FAMILY_REMOTE_ARCH) FORWARD_IF_ERROR(remote_arch(&h, root, cfg));
    if (f->flags & FAMILY_TYPE_ROPE_DICTS) FORWARD_IF_ERROR(type_rope_dicts(&h, cfg));
    bool rope_free = false;
    FORWARD_IF_ERROR(rope_free_model(&h, cfg, &rope_free));
    if (rope_free) {
        if (!(f->flags & FAMILY_WINDOW_RELATIVE)) /* Swin's num_heads is a list per stage: read there */
            FORWARD_IF_ERROR(read_counts(&h, cfg));
        FORWARD_IF_ERROR(hf_layers_(&h, cfg, true));
        hf_unused_keys_(&h, cfg, "", false);
        if (!m->assumed) out->keys_used[0] = '\0';
        return POSENC_OK;
    }
    /* Cohere2MoeConfig keeps rope_scaling as a field of its own beside rope_parameters: transformers 5.18's rotary
     * class never applies it, while the key says the model was scaled; which one a file means is not guessed */
    RETURN_ERROR_IF((f->flags & FAMILY_DENSE_PREFIX_ROPE) && item(cfg, "rope_scaling"), err, POSENC_ERR_UNSUPPORTED,
                    "config.json: '%s' gives 'rope_scaling': %sConfig keeps it apart from rope_parameters and "
                    "transformers 5.18 rotates without it (default RoPE); put the scaling in rope_parameters or drop it",
                    f->model_type, f->class_stem);
    const cJSON *rope = NULL, *local_rope = NULL;
    FORWARD_IF_ERROR(rope_dicts(cfg, &rope, &local_rope, err));
    RETURN_ERROR_IF((f->flags & FAMILY_DEFAULT_SCALING) && !rope, err, POSENC_ERR_UNSUPPORTED,
                    "config.json: a %s config without rope_parameters / rope_scaling: its config class then uses "
                    "its own built-in scaled RoPE, which posenc does not copy; give the rope dict", f->model_type);
    if (!hf_use_(&h, cfg, "rope_parameters")) hf_use_(&h, cfg, "rope_scaling"); /* the one read */
    posenc_rope_params *p = &out->rope;
    const int64_t dim_max = (int64_t)1 << 30, pos_max = (int64_t)1 << 53;
    int64_t hidden = 0, heads = 0, layers = 0, max_pos = 0, head_dim = 0, rotary_dim = 0, top_orig = 0;
    bool has_hidden, has_heads, has_layers, has_max, has_head_dim, has_rotary, has_top_orig, has_theta, has_partial;
    FORWARD_IF_ERROR(hf_count_of_(&h, cfg, "", hidden_k, dim_max, &hidden, &has_hidden));
    FORWARD_IF_ERROR(hf_count_of_(&h, cfg, "", heads_k, dim_max, &heads, &has_heads));
    FORWARD_IF_ERROR(hf_count_of_(&h, cfg, "", layers_k, dim_max, &layers, &has_layers));
    FORWARD_IF_ERROR(hf_count_of_(&h, cfg, "", maxpos_k, pos_max, &max_pos, &has_max));
    FORWARD_IF_ERROR(hf_count_of_(&h, cfg, "", headdim_k, dim_max, &head_dim, &has_head_dim));
    FORWARD_IF_ERROR(hf_count_of_(&h, cfg, "", rotary_k, dim_max, &rotary_dim, &has_rotary));
    FORWARD_IF_ERROR(hf_count_of_(&h, cfg, "", top_orig_k, pos_max, &top_orig, &has_top_orig));
    if (f && !has_hidden && f->hidden) note_default(&h, "hidden_size", hidden = f->hidden);
    if (f && !has_heads && f->heads) note_default(&h, "num_attention_heads", heads = f->heads);
    if (f && !has_layers && f->layers) layers = f->layers;
    if (f && !has_max && f->max_position) note_default(&h, "max_position_embeddings", (double)(max_pos = f->max_position));
    if (strcmp(f->model_type, "cohere2") == 0 && has_head_dim) /* Cohere2Config: head_dim = hidden // heads, always */
        has_head_dim = false;
    if (f && !has_head_dim && f->head_dim && !(f->flags & FAMILY_CHATGLM) &&
        !((f->flags & FAMILY_KV_CHANNELS_HEAD) && item(cfg, "kv_channels"))) {
        head_dim = f->head_dim;
        has_head_dim = true;
        note_default(&h, "head_dim", (double)head_dim);
    }
    /* theta: top level, else the rope dict; both given must agree */
    double top_theta = 0, dict_theta = 0;
    bool has_dict_theta = false;
    static const char *const rt_k[] = {"rope_theta", NULL};
    bool neox_keys = generic || (f->flags & FAMILY_NEOX_KEYS);
    FORWARD_IF_ERROR(hf_number_of_(&h, cfg, "", neox_keys ? theta_k : theta_only_k, &top_theta, &has_theta));
    if (!has_theta && (f->flags & FAMILY_ATTN_CONFIG_THETA)) { /* DBRX: attn_config.rope_theta */
        const cJSON *ac = hf_use_(&h, cfg, "attn_config");
        RETURN_ERROR_IF(ac && !cJSON_IsObject(ac), err, POSENC_ERR_FORMAT, "config.json: 'attn_config' must be an object");
        if (ac) FORWARD_IF_ERROR(hf_number_of_(&h, ac, "attn_config.", rt_k, &top_theta, &has_theta));
        /* transformers 5.18's DbrxConfig never reads it (rope_parameters default 10000): the checkpoint, 4.x's
         * DbrxAttention and other runtimes do; posenc follows the model and says so */
        if (has_theta && top_theta != 10000.0) out->warnings |= POSENC_CONFIG_WARN_TRANSFORMERS_DIVERGES;
    }
    if (rope) FORWARD_IF_ERROR(hf_number_of_(&h, rope, "rope ", rt_k, &dict_theta, &has_dict_theta));
    RETURN_ERROR_IF(has_theta && has_dict_theta && top_theta != dict_theta, err, POSENC_ERR_FORMAT,
                    "config.json: 'rope_theta' %.17g contradicts the rope dict's 'rope_theta' %.17g", top_theta,
                    dict_theta);
    if (!has_theta && (f->flags & FAMILY_LEADING_FULL)) /* ModernBERT: the full layers' base */
        FORWARD_IF_ERROR(hf_number_of_(&h, cfg, "", global_theta_k, &top_theta, &has_theta));
    if (has_theta) p->base = top_theta;
    else if (has_dict_theta) p->base = dict_theta, has_theta = true;
    else if (generic) out->warnings |= POSENC_CONFIG_WARN_NO_THETA;
    else if (!(f->flags & FAMILY_FIXED_BASE)) note_default(&h, "rope_theta", p->base = f->theta);
    if (f && (f->flags & FAMILY_FIXED_BASE)) {
        RETURN_ERROR_IF(has_theta && p->base != 10000.0, err, POSENC_ERR_FORMAT,
                        "config.json: '%s' hard-codes RoPE base 10000 but the config says rope_theta %g",
                        f->model_type, p->base);
        p->base = 10000.0;
    }
    if (f->flags & FAMILY_LAYER_THETA) FORWARD_IF_ERROR(hf_layer_theta_base_(&h, cfg, layers, &p->base));
    FORWARD_IF_ERROR(hf_number_of_(&h, cfg, "", neox_keys ? partial_k : partial_only_k, &p->partial_rotary_factor,
                                   &has_partial));
    bool block_types = f && (f->flags & FAMILY_ATTN_INDICES) && strcmp(f->model_type, "recurrent_gemma") == 0;
    if (f && (f->flags & FAMILY_ATTN_INDICES) && !block_types) { /* Bamba: the top-level value is replaced by 0.5 */
        RETURN_ERROR_IF(has_partial && p->partial_rotary_factor != 0.5, err, POSENC_ERR_UNSUPPORTED,
                        "config.json: 'partial_rotary_factor' %g: %sConfig overwrites the top-level value with 0.5 "
                        "(only rope_parameters' own partial_rotary_factor counts); the file and the run disagree",
                        p->partial_rotary_factor, f->class_stem);
        has_partial = false;
    }
    if (rope) {
        /* transformers 5.18 rotates with the rope dict's factor (modeling_rope_utils reads
         * rope_parameters.get("partial_rotary_factor")); Qwen3.5's config class writes a top-level 0.25 beside
         * it: two different factors are refused by name, not one picked */
        static const char *const pk[] = {"partial_rotary_factor", NULL};
        double inner = 0;
        bool has_inner = false;
        FORWARD_IF_ERROR(hf_number_of_(&h, rope, "rope ", pk, &inner, &has_inner));
        RETURN_ERROR_IF(has_partial && has_inner && inner != p->partial_rotary_factor, err, POSENC_ERR_UNSUPPORTED,
                        "config.json: top-level 'partial_rotary_factor' %g and the rope dict's %g differ "
                        "(transformers 5.18 rotates with the rope dict's; a reader of the top-level key rotates "
                        "with the other); posenc does not pick one", p->partial_rotary_factor, inner);
        if (has_inner) p->partial_rotary_factor = inner, has_partial = true;
    }
    /* a factor the family's rotary class never reads: HF rotates the whole head (or raises, scaled), vLLM the
     * fraction; refused by name below (after the rope dict, whose own errors come first), neither applied nor
     * dropped (FAMILY_READS_PARTIAL) */
    const bool partial_unread =
        has_partial && p->partial_rotary_factor != 1.0 && !generic && !(f->flags & FAMILY_READS_PARTIAL);
    const double partial_given = p->partial_rotary_factor;
    if (!has_partial && f && f->partial > 0) {
        p->partial_rotary_factor = f->partial;
        note_default(&h, "partial_rotary_factor", f->partial);
    }
    out->hidden_size = (int32_t)hidden;
    out->num_attention_heads = (int32_t)heads;
    out->num_hidden_layers = (int32_t)layers;
    out->max_position_embeddings = max_pos;
    if (f && (f->flags & FAMILY_CHATGLM)) { /* head = kv_channels; RotaryEmbedding(kv_channels // 2) */
        int64_t kv = 0;
        bool has_kv = false;
        FORWARD_IF_ERROR(hf_count_of_(&h, cfg, "", kvch_k, dim_max, &kv, &has_kv));
        if (has_kv) head_dim = kv, has_head_dim = true;
        double ratio = 1.0;
        bool has_ratio = false;
        FORWARD_IF_ERROR(hf_number_of_(&h, cfg, "", ratio_k, &ratio, &has_ratio));
        RETURN_ERROR_IF(!(ratio > 0), err, POSENC_ERR_FORMAT, "config.json: 'rope_ratio' must be > 0, got %g", ratio);
        p->base *= ratio;
    }
    if (f->flags & FAMILY_KV_CHANNELS_HEAD) { /* JetMoE: head = kv_channels (its attribute_map alias head_dim) */
        int64_t kv = 0;
        bool has_kv = false;
        FORWARD_IF_ERROR(hf_count_of_(&h, cfg, "", kvch_k, dim_max, &kv, &has_kv));
        if (has_kv && !item(cfg, "head_dim")) head_dim = kv, has_head_dim = true; /* both: head_dim wins, as in HF */
    }
    if (f->flags & FAMILY_ZAMBA2) { /* Zamba2Config: attention_head_dim = 2 * hidden_size // num_attention_heads */
        RETURN_ERROR_IF(hidden <= 0 || heads <= 0, err, POSENC_ERR_FORMAT,
                        "config.json: %s needs hidden_size and num_attention_heads > 0 (got %lld, %lld)", f->model_type,
                        (long long)hidden, (long long)heads);
        static const char *const zk[] = {"attention_head_dim", NULL};
        int64_t given_dim = 0;
        bool has_given = false;
        FORWARD_IF_ERROR(hf_count_of_(&h, cfg, "", zk, dim_max, &given_dim, &has_given));
        int64_t computed = 2 * hidden / heads;
        RETURN_ERROR_IF((has_given && given_dim != computed) || (item(cfg, "head_dim") && head_dim != computed), err,
                        POSENC_ERR_UNSUPPORTED,
                        "config.json: '%s' %lld in a %s config: %sConfig overwrites it with 2 * hidden_size // "
                        "num_attention_heads = %lld; the file and the run disagree",
                        has_given && given_dim != computed ? "attention_head_dim" : "head_dim",
                        (long long)(has_given && given_dim != computed ? given_dim : head_dim), f->model_type,
                        f->class_stem, (long long)computed);
        head_dim = computed;
        has_head_dim = true;
    }
    if (block_types) { /* RecurrentGemmaConfig.__post_init__: head_dim = hidden_size // num_attention_heads */
        RETURN_ERROR_IF(hidden <= 0 || heads <= 0, err, POSENC_ERR_FORMAT,
                        "config.json: %s needs hidden_size and num_attention_heads > 0 (got %lld, %lld)", f->model_type,
                        (long long)hidden, (long long)heads);
        RETURN_ERROR_IF(item(cfg, "head_dim") && head_dim != hidden / heads, err, POSENC_ERR_UNSUPPORTED,
                        "config.json: 'head_dim' %lld in a %s config: %sConfig overwrites it with hidden_size // "
                        "num_attention_heads = %lld; the file and the run disagree", (long long)head_dim,
                        f->model_type, f->class_stem, (long long)(hidden / heads));
        head_dim = hidden / heads;
        has_head_dim = true;
    }
    if (!has_head_dim) {
        RETURN_ERROR_IF(hidden <= 0 || heads <= 0, err, POSENC_ERR_FORMAT,
                        "config.json: no head_dim, and hidden_size/num_attention_heads are missing or 0 "
                        "(hidden_size %lld, num_attention_heads %lld)", (long long)hidden, (long long)heads);
        head_dim = hidden / heads; /* HF: integer division */
    }
    RETURN_ERROR_IF(head_dim < 2, err, POSENC_ERR_FORMAT, "config.json: head_dim must be >= 2, got %lld",
                    (long long)head_dim);
    p->head_dim = (int32_t)head_dim;
    out->attention_head_dim = (int32_t)head_dim;
    if (f && (f->flags & FAMILY_CHATGLM)) p->rotary_dim = (int32_t)(head_dim / 2);
    if (!has_rotary && (f->flags & FAMILY_FIXED_BASE) && !has_partial) {
        /* GPTJConfig / CodeGenConfig: rotary_dim defaults to 64 (an explicit null: the whole head) */
        bool null_given = false;
        const cJSON *c;
        cJSON_ArrayForEach(c, cfg) if (c->string && strcmp(c->string, "rotary_dim") == 0) null_given = true;
        if (!null_given && head_dim >= 64) {
            rotary_dim = 64;
            has_rotary = true;
            note_default(&h, "rotary_dim", 64);
        }
    }
    if (has_rotary) {
        /* HF: int(head_dim * partial_rotary_factor); compared in double, since a
         * factor like 1e300 would make the integer conversion undefined */
        double implied = trunc((double)head_dim * p->partial_rotary_factor);
        RETURN_ERROR_IF(has_partial && implied != (double)rotary_dim, err, POSENC_ERR_FORMAT,
                        "config.json: 'rotary_dim' %lld contradicts 'partial_rotary_factor' %g (head %lld -> %.15g)",
                        (long long)rotary_dim, p->partial_rotary_factor, (long long)head_dim, implied);
        p->rotary_dim = (int32_t)rotary_dim;
    }
    if (f->flags & FAMILY_ROPE_INTERLEAVE_KEY) { /* DeepseekV3 and copies: interleaved iff rope_interleave (default true) */
        const cJSON *ri = hf_use_(&h, cfg, "rope_interleave");
        RETURN_ERROR_IF(ri && !cJSON_IsBool(ri), err, POSENC_ERR_FORMAT,
                        "config.json: 'rope_interleave' must be true or false");
        if (ri && !cJSON_IsTrue(ri)) out->layout = POSENC_LAYOUT_HALF;
    }
    if (f && (f->flags & FAMILY_MLA)) { /* q/k head = [nope | rope]: the rotated channels are the last */
        int64_t rope_dim = 64, nope_dim = 128;
        bool has_r = false, has_n = false;
        FORWARD_IF_ERROR(hf_count_of_(&h, cfg, "", qkrope_k, dim_max, &rope_dim, &has_r));
        FORWARD_IF_ERROR(hf_count_of_(&h, cfg, "", qknope_k, dim_max, &nope_dim, &has_n));
        RETURN_ERROR_IF((f->flags & FAMILY_MLA_DIMS_REQUIRED) && (!has_r || !has_n), err, POSENC_ERR_UNSUPPORTED,
                        "config.json: a %s config without qk_rope_head_dim and qk_nope_head_dim: its config class "
                        "defaults are not DeepSeek's 64 / 128 and posenc does not copy them; give both keys",
                        f->model_type);
        if (!has_r) note_default(&h, "qk_rope_head_dim", (double)rope_dim);
        if (!has_n) note_default(&h, "qk_nope_head_dim", (double)nope_dim);
        RETURN_ERROR_IF(rope_dim < 2, err, POSENC_ERR_FORMAT, "config.json: 'qk_rope_head_dim' must be >= 2, got %lld",
                        (long long)rope_dim);
        p->head_dim = (int32_t)rope_dim;
        p->rotary_dim = 0;
        p->partial_rotary_factor = 1.0;
        out->attention_head_dim = (int32_t)(nope_dim + rope_dim);
        out->rotary_offset = (int32_t)nope_dim;
        out->softmax_head_dim = out->attention_head_dim;
    }
    p->max_position = max_pos;
    unsigned given = 0;
    if (rope) FORWARD_IF_ERROR(read_rope_dict(&h, rope, p, &given, true));
    RETURN_ERROR_IF(partial_unread, err, POSENC_ERR_UNSUPPORTED,
                    "config.json: 'partial_rotary_factor' %g: transformers 5.18's %s rotary class does not read it "
                    "(it rotates the whole head, and raises with a scaled rope_type), while other runtimes rotate "
                    "that fraction; posenc does not pick one: drop the key if the whole head rotates",
                    partial_given, f->class_stem);
    /* RecurrentGemmaRotaryEmbedding raises for any rope_type but default: HF cannot build such a model */
    RETURN_ERROR_IF(block_types && p->scaling != POSENC_ROPE_NONE, err, POSENC_ERR_UNSUPPORTED,
                    "config.json: rope_type '%s' in a %s config: its rotary class supports default RoPE only (HF "
                    "raises ValueError building the model)", posenc_rope_scaling_name(p->scaling), f->model_type);
    if (f->flags & FAMILY_MROPE) FORWARD_IF_ERROR(mrope_sections(&h, p));
    if (p->scaling == POSENC_ROPE_LONGROPE && has_top_orig) { /* Phi-3: factor := max / original */
        RETURN_ERROR_IF((given & POSENC_ROPE_GIVEN_ORIGINAL) && p->original_max_position != top_orig, err,
                        POSENC_ERR_FORMAT,
                        "config.json: 'original_max_position_embeddings' %lld contradicts the rope dict's %lld",
                        (long long)top_orig, (long long)p->original_max_position);
        p->original_max_position = top_orig;
        given |= POSENC_ROPE_GIVEN_ORIGINAL | POSENC_ROPE_GIVEN_CONTEXT_RATIO;
    } else if (has_top_orig && !(given & POSENC_ROPE_GIVEN_ORIGINAL) &&
               (p->scaling == POSENC_ROPE_YARN || p->scaling == POSENC_ROPE_LLAMA3)) {
        p->original_max_position = top_orig;
        given |= POSENC_ROPE_GIVEN_ORIGINAL;
    }
    double alpha = 0;
    if ((f->flags & FAMILY_DYNAMIC_ALPHA) && rope && p->scaling == POSENC_ROPE_DYNAMIC) {
        /* Hunyuan's DynamicNTKAlphaRotary: a static base theta * alpha^(d/(d-2)), no rescaling */
        static const char *const alpha_k[] = {"alpha", NULL};
        bool has_alpha = false;
        FORWARD_IF_ERROR(hf_number_of_(&h, rope, "rope ", alpha_k, &alpha, &has_alpha));
        if (has_alpha && alpha != 0) { /* HF: `rope_parameters.get("alpha")` is truthy */
            RETURN_ERROR_IF(!(alpha > 0) || p->head_dim <= 2, err, POSENC_ERR_FORMAT,
                            "config.json: rope 'alpha' %g needs alpha > 0 and head_dim > 2 (head_dim %d)", alpha,
                            p->head_dim);
            double d = (double)p->head_dim;
            p->base = p->base * pow(alpha, d / (d - 2.0)); /* Python: rope_theta * alpha ** (dim / (dim - 2)) */
            RETURN_ERROR_IF(!isfinite(p->base), err, POSENC_ERR_FORMAT,
                            "config.json: rope 'alpha' %g makes the base theta * alpha^(d/(d-2)) overflow", alpha);
            p->scaling = POSENC_ROPE_NONE;
            p->factor = 1.0;
            given = 0;
        } else {
            alpha = 0;
        }
    }
    FORWARD_IF_ERROR(query_scale(&h, cfg, rope));
    out->rope_given = given;
    if (!(out->warnings & POSENC_CONFIG_WARN_UNKNOWN_FAMILY)) out->keys_used[0] = '\0';
    if (f && (f->flags & (FAMILY_GEMMA2_LAYERS | FAMILY_GEMMA3_LAYERS))) {
        posenc_error inner = {0};
        if (posenc_rope_resolve(p, given, NULL, &inner) != POSENC_OK) /* the local copy starts from it */
            return posenc_fail_(err, inner.status, "config.json: %s", inner.message);
        FORWARD_IF_ERROR(layer_kinds(&h, cfg, local_rope, layers));
    }
    FORWARD_IF_ERROR(config_finish_(out, "config.json", err));
    if (f && (f->flags & FAMILY_MLA) && p->scaling == POSENC_ROPE_YARN && p->mscale_all_dim > 0.0) {
        double ms = p->factor <= 1.0 ? 1.0 : 0.1 * p->mscale_all_dim * log(p->factor) + 1.0;
        out->softmax_scale_factor = ms * ms; /* DeepSeek-V2/V3: softmax_scale = qk_head_dim^-0.5 * mscale^2 */
    }
    if (p->scaling == POSENC_ROPE_LLAMA3 && p->low_freq_factor == p->high_freq_factor)
        out->warnings |= POSENC_CONFIG_WARN_LLAMA3_FLAT;
    config_ropes_from_config_(m);
    m->ropes[0].dynamic_alpha = alpha;
    FORWARD_IF_ERROR(hf_layers_(&h, cfg, false));
    hf_unused_keys_(&h, cfg, "", false);
    /* Qwen3-VL: position keys beside text_config never reach HF's text model: listed, not read */
    if (cfg != root && (f->flags & FAMILY_NESTED_TEXT)) hf_unused_keys_(&h, root, "top-level ", false);
    if (rope) hf_unused_keys_(&h, rope, item(cfg, "rope_parameters") ? "rope_parameters." : "rope_scaling.", true);
    if (local_rope) hf_unused_keys_(&h, local_rope, "rope.sliding_attention.", true);
    return POSENC_OK;
}

/* A backslash-u0000 escape inside a string would cut a name short in cJSON's C string
 * (issue 26): refuse the document, naming the byte. An escape is a backslash
 * preceded by an even number of backslashes. */
static posenc_status refuse_nul_escape(const char *text, size_t size, posenc_error *err) {
    for (size_t i = 0; i + 6 <= size; i++) {
        if (text[i] != '\\') continue;
        size_t run = 0;
        while (i + run < size && text[i + run] == '\\') run++;
        size_t last = i + run - 1; /* the escaping backslash, if run is odd */
        if (run % 2 == 1 && last + 6 <= size && text[last + 1] == 'u' && memcmp(text + last + 2, "0000", 4) == 0)
            return posenc_fail_(err, POSENC_ERR_FORMAT,
                                "config.json: a string holds a NUL character (\\u0000 at byte %zu); posenc refuses "
                                "names that would be cut short there", last);
        i += run - 1;
    }
    return POSENC_OK;
}

/* JSON text is UTF-8 (RFC 8259), and HF opens config.json as UTF-8
 * (encoding="utf-8": a Latin-1 byte raises UnicodeDecodeError). A name with
 * such a byte would also reach the terminal raw, so the file is refused here,
 * the byte and its place named (escaped). Overlong forms, surrogates and code
 * points past U+10FFFF are invalid too (Python's decoder refuses them). */
static posenc_status refuse_non_utf8(const char *text, size_t size, posenc_error *err) {
    const unsigned char *u = (const unsigned char *)text;
    for (size_t i = 0; i < size;) {
        unsigned c = u[i];
        size_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
        bool ok = n > 0 && i + n <= size;
        unsigned cp = n == 1 ? c : n == 2 ? c & 0x1F : n == 3 ? c & 0x0F : c & 0x07;
        for (size_t k = 1; ok && k < n; k++) {
            ok = (u[i + k] & 0xC0) == 0x80;
            cp = cp << 6 | (u[i + k] & 0x3F);
        }
        if (ok && n > 1) {
            static const unsigned least[5] = {0, 0, 0x80, 0x800, 0x10000};
            ok = cp >= least[n] && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
        }
        if (!ok) {
            size_t line = 1;
            for (size_t k = 0; k < i; k++) line += text[k] == '\n';
            return posenc_fail_(err, POSENC_ERR_FORMAT, "config.json is not UTF-8 text: byte 0x%02X at byte %zu "
                                "(line %zu) is no UTF-8 character; JSON configs are UTF-8 (HF reads them so); "
                                "re-encode it, e.g. iconv -f LATIN1 -t UTF-8", c, i, line);
        }
        i += n;
    }
    return POSENC_OK;
}

/* Why text is not JSON, in words a user can act on: the encodings and habits
 * that produce such files (UTF-16, a NUL byte, a commented config), then
 * truncation and nesting, else the position. */
static posenc_status not_json(const char *text, size_t size, size_t at, posenc_error *err) {
    const unsigned char *u = (const unsigned char *)text;
    if ((size >= 2 && ((u[0] == 0xFF && u[1] == 0xFE) || (u[0] == 0xFE && u[1] == 0xFF))) ||
        (size >= 2 && (u[0] == 0 || u[1] == 0)))
        return posenc_fail_(err, POSENC_ERR_FORMAT, "config.json is UTF-16 (%s): JSON configs are UTF-8; convert it, "
                                                    "e.g. iconv -f UTF-16 -t UTF-8",
                            u[0] == 0xFF || u[0] == 0xFE ? "it starts with a UTF-16 byte-order mark" : "NUL bytes between "
                                                                                                 "its characters");
    /* outside strings: a comment, NaN / Infinity (Python's json.dumps writes them for float('nan') / inf;
       JSON has no such values), and the deepest nesting */
    bool in_string = false;
    int depth = 0, deepest = 0;
    size_t str_start = 0, key_start = 0, key_len = 0;
    for (size_t i = 0; i < size; i++) {
        char c = text[i];
        if (in_string) {
            if (c == '\\') i++;
            else if (c == '"') {
                in_string = false;
                size_t j = i + 1; /* a string followed by ':' is a key: the one a bad value belongs to */
                while (j < size && (text[j] == ' ' || text[j] == '\t' || text[j] == '\n' || text[j] == '\r')) j++;
                if (j < size && text[j] == ':') key_start = str_start, key_len = i - str_start;
            }
            continue;
        }
        const char *word = size - i >= 3 && memcmp(text + i, "NaN", 3) == 0        ? "NaN"
                           : size - i >= 8 && memcmp(text + i, "Infinity", 8) == 0 ? "Infinity"
                                                                                    : NULL;
        if (word) {
            bool negative = i > 0 && text[i - 1] == '-';
            if (key_len == 0)
                return posenc_fail_(err, POSENC_ERR_FORMAT, "config.json: %s%s at byte %zu is not JSON (Python's "
                                    "json.dumps writes it for a float that is not finite; JSON has no such value)",
                                    negative ? "-" : "", word, i - negative);
            return posenc_fail_(err, POSENC_ERR_FORMAT, "config.json: '%.*s' is %s%s (byte %zu), which is not JSON "
                                "(Python's json.dumps writes it for a float that is not finite); give a finite number",
                                key_len > 64 ? 64 : (int)key_len, text + key_start, negative ? "-" : "", word,
                                i - negative);
        }
        if (c == '"') in_string = true, str_start = i + 1;
        else if (c == '{' || c == '[') deepest = ++depth > deepest ? depth : deepest;
        else if (c == '}' || c == ']') depth--;
        else if (c == '/' && i + 1 < size && (text[i + 1] == '/' || text[i + 1] == '*'))
            return posenc_fail_(err, POSENC_ERR_FORMAT, "config.json holds a comment ('%c%c' at byte %zu): JSON has "
                                                        "no comments (Python's json refuses them too)", c, text[i + 1], i);
    }
    const char *nul = memchr(text, 0, size);
    if (nul)
        return posenc_fail_(err, POSENC_ERR_FORMAT, "config.json holds a NUL byte at byte %zu: not JSON text",
                            (size_t)(nul - text));
    if (deepest > CJSON_NESTING_LIMIT)
        return posenc_fail_(err, POSENC_ERR_FORMAT, "config.json: not valid JSON here: nested %d levels deep, more "
                                                    "than the %d posenc reads", deepest, CJSON_NESTING_LIMIT);
    if (depth > 0 || in_string)
        return posenc_fail_(err, POSENC_ERR_FORMAT, "config.json: not valid JSON: it ends inside %s (truncated? "
                                                    "%zu bytes)", in_string ? "a string" : "an object or list", size);
    return posenc_fail_(err, POSENC_ERR_FORMAT, "config.json: not valid JSON (error near byte %zu of %zu)", at, size);
}

posenc_status config_hf_parse_(const char *text, size_t size, const posenc_config_options *options,
                               posenc_model *out, posenc_error *err) {
    FORWARD_IF_ERROR(refuse_nul_escape(text, size, err));
    /* a raw NUL byte is never JSON text (UTF-16 files are full of them); the parser would stop there */
    if (memchr(text, 0, size)) return not_json(text, size, 0, err);
    FORWARD_IF_ERROR(refuse_non_utf8(text, size, err));
    const char *end = NULL;
    cJSON *root = posenc_json_parse_(text, size, &end);
    if (!root) return not_json(text, size, end && end >= text && end <= text + size ? (size_t)(end - text) : 0, err);
    posenc_status st = parse_model(root, options, out, err);
    if (st == POSENC_OK && out->unused_keys[0]) out->config.warnings |= POSENC_CONFIG_WARN_UNUSED_KEYS;
    cJSON_Delete(root);
    return st;
}
