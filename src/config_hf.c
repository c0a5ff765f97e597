/* config_hf.c: RoPE settings from a Hugging Face config.json (cJSON).
 *
 * Every key is type-checked: a present key of the wrong JSON type is an
 * error naming the key (a silently ignored "rope_theta": "1e6" would give
 * wrong frequencies), JSON null counts as absent (HF writes "rope_scaling":
 * null). cJSON itself refuses nesting deeper than CJSON_NESTING_LIMIT. */
#include "config_internal.h"

#include "json_internal.h"

#include <stdlib.h>
#include <string.h>

#define HF_MAX_FACTORS 65536

typedef struct {
    const cJSON *cfg;  /* the model (or text_config) object */
    const cJSON *rope; /* rope_scaling / rope_parameters, or NULL */
    posenc_error *err;
} hf_doc;

static const cJSON *item(const cJSON *obj, const char *key) {
    const cJSON *v = obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
    return v && !cJSON_IsNull(v) ? v : NULL;
}

/* *present = key exists; the value must be a finite number. */
static posenc_status get_number(const cJSON *obj, const char *where, const char *key, double *out, bool *present,
                                posenc_error *err) {
    const cJSON *v = item(obj, key);
    if (present) *present = v != NULL;
    if (!v) return POSENC_OK;
    RETURN_ERROR_IF(!cJSON_IsNumber(v) || !isfinite(v->valuedouble), err, POSENC_ERR_FORMAT,
                    "config.json: %s'%s' must be a finite number", where, key);
    *out = v->valuedouble;
    return POSENC_OK;
}

static posenc_status get_count(const cJSON *obj, const char *where, const char *key, int64_t max, int64_t *out,
                               bool *present, posenc_error *err) {
    double v = 0;
    bool here = false;
    FORWARD_IF_ERROR(get_number(obj, where, key, &v, &here, err));
    if (present) *present = here;
    if (!here) return POSENC_OK;
    RETURN_ERROR_IF(v != floor(v) || v < 0 || v > (double)max, err, POSENC_ERR_FORMAT,
                    "config.json: %s'%s' must be an integer in [0, %lld], got %g", where, key, (long long)max, v);
    *out = (int64_t)v;
    return POSENC_OK;
}

/* rope_parameters may hold one dict per layer type (late-2025 HF). */
static const cJSON *rope_dict(const cJSON *cfg, posenc_error *err, posenc_status *st) {
    *st = POSENC_OK;
    const cJSON *d = item(cfg, "rope_parameters");
    const char *name = "rope_parameters";
    if (!d) {
        d = item(cfg, "rope_scaling");
        name = "rope_scaling";
    }
    if (!d) return NULL;
    if (!cJSON_IsObject(d)) {
        *st = posenc_fail_(err, POSENC_ERR_FORMAT, "config.json: '%s' must be an object or null", name);
        return NULL;
    }
    if (item(d, "rope_type") || item(d, "type") || item(d, "rope_theta") || item(d, "factor")) return d;
    const cJSON *full = item(d, "full_attention");
    if (cJSON_IsObject(full)) return full;
    const cJSON *c;
    cJSON_ArrayForEach(c, d) if (cJSON_IsObject(c)) return c;
    return d;
}

static posenc_status scaling_of(const cJSON *rope, posenc_model_config *out, posenc_error *err) {
    const cJSON *t = item(rope, "rope_type");
    const char *key = "rope_type";
    if (!t) {
        t = item(rope, "type");
        key = "type";
    }
    if (!t) return POSENC_OK; /* no type: HF treats it as default */
    RETURN_ERROR_IF(!cJSON_IsString(t), err, POSENC_ERR_FORMAT, "config.json: rope '%s' must be a string", key);
    const char *name = t->valuestring;
    RETURN_ERROR_IF(!config_copy_name_(out->scaling_name, sizeof out->scaling_name, name, strlen(name)), err,
                    POSENC_ERR_FORMAT, "config.json: rope %s is too long (%zu characters)", key, strlen(name));
    if (strcmp(name, "su") == 0) name = "longrope";       /* Phi-3's old name */
    if (strcmp(name, "mrope") == 0) name = "default";     /* Qwen2-VL: sections, no rescaling */
    posenc_error inner = {0};
    if (posenc_rope_scaling_parse(name, &out->rope.scaling, &inner) != POSENC_OK)
        return posenc_fail_(err, POSENC_ERR_UNSUPPORTED,
                            "config.json: unknown RoPE scaling type '%.32s' (known: default, linear, dynamic, yarn, "
                            "longrope, llama3)", name);
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

static posenc_status longrope_lists(const cJSON *rope, posenc_model_config *out, posenc_error *err) {
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
        out->rope.short_factors = out->factor_storage;
        out->rope.long_factors = out->factor_storage + ns;
        out->rope.factors_count = ns;
    }
    free(s);
    free(l);
    return st;
}

static posenc_status parse_model(const cJSON *root, posenc_model_config *out, posenc_error *err) {
    RETURN_ERROR_IF(!cJSON_IsObject(root), err, POSENC_ERR_FORMAT, "config.json: the document must be a JSON object");
    const cJSON *cfg = root;
    const cJSON *text = item(root, "text_config");
    if (!item(root, "rope_theta") && !item(root, "hidden_size") && cJSON_IsObject(text)) cfg = text;
    const cJSON *mt = item(cfg, "model_type");
    if (!mt) mt = item(root, "model_type");
    if (mt) {
        RETURN_ERROR_IF(!cJSON_IsString(mt), err, POSENC_ERR_FORMAT, "config.json: 'model_type' must be a string");
        RETURN_ERROR_IF(!config_copy_name_(out->architecture, sizeof out->architecture, mt->valuestring,
                                           strlen(mt->valuestring)),
                        err, POSENC_ERR_FORMAT, "config.json: model_type is too long (%zu characters)",
                        strlen(mt->valuestring));
    }
    posenc_status st;
    const cJSON *rope = rope_dict(cfg, err, &st);
    FORWARD_IF_ERROR(st);
    posenc_rope_params *p = &out->rope;
    const int64_t dim_max = (int64_t)1 << 30, pos_max = (int64_t)1 << 53;
    int64_t hidden = 0, heads = 0, head_dim = 0, max_pos = 0, top_orig = 0, rope_orig = 0, rotary_dim = 0;
    bool has_head_dim = false, has_top_orig = false, has_rope_orig = false, has_rotary_dim = false, has_theta = false;
    FORWARD_IF_ERROR(get_count(cfg, "", "hidden_size", dim_max, &hidden, NULL, err));
    FORWARD_IF_ERROR(get_count(cfg, "", "num_attention_heads", dim_max, &heads, NULL, err));
    FORWARD_IF_ERROR(get_count(cfg, "", "qk_rope_head_dim", dim_max, &head_dim, &has_head_dim, err));
    if (!has_head_dim) FORWARD_IF_ERROR(get_count(cfg, "", "head_dim", dim_max, &head_dim, &has_head_dim, err));
    FORWARD_IF_ERROR(get_count(cfg, "", "max_position_embeddings", pos_max, &max_pos, NULL, err));
    FORWARD_IF_ERROR(get_count(cfg, "", "original_max_position_embeddings", pos_max, &top_orig, &has_top_orig, err));
    FORWARD_IF_ERROR(get_count(cfg, "", "rotary_dim", dim_max, &rotary_dim, &has_rotary_dim, err));
    FORWARD_IF_ERROR(get_number(cfg, "", "rope_theta", &p->base, &has_theta, err));
    if (!has_theta && rope) FORWARD_IF_ERROR(get_number(rope, "rope ", "rope_theta", &p->base, &has_theta, err));
    if (!has_theta) /* GPT-NeoX's older name */
        FORWARD_IF_ERROR(get_number(cfg, "", "rotary_emb_base", &p->base, &has_theta, err));
    if (!has_theta) out->warnings |= POSENC_CONFIG_WARN_NO_THETA;
    bool has_partial = false;
    FORWARD_IF_ERROR(get_number(cfg, "", "partial_rotary_factor", &p->partial_rotary_factor, &has_partial, err));
    if (!has_partial && rope)
        FORWARD_IF_ERROR(get_number(rope, "rope ", "partial_rotary_factor", &p->partial_rotary_factor, &has_partial, err));
    if (!has_partial) FORWARD_IF_ERROR(get_number(cfg, "", "rotary_pct", &p->partial_rotary_factor, &has_partial, err));
    out->hidden_size = (int32_t)hidden;
    out->num_attention_heads = (int32_t)heads;
    out->max_position_embeddings = max_pos;
    if (!has_head_dim) {
        RETURN_ERROR_IF(hidden <= 0 || heads <= 0, err, POSENC_ERR_FORMAT,
                        "config.json: no head_dim, and hidden_size/num_attention_heads are missing or 0 "
                        "(hidden_size %lld, num_attention_heads %lld)", (long long)hidden, (long long)heads);
        head_dim = hidden / heads; /* HF: integer division */
    }
    p->head_dim = (int32_t)head_dim;
    if (has_rotary_dim) p->rotary_dim = (int32_t)rotary_dim;
    p->max_position = max_pos;
    if (rope) {
        FORWARD_IF_ERROR(scaling_of(rope, out, err));
        bool has_factor = false, has_beta = false;
        double beta = 0;
        FORWARD_IF_ERROR(get_number(rope, "rope ", "factor", &p->factor, &has_factor, err));
        FORWARD_IF_ERROR(get_number(rope, "rope ", "beta_fast", &beta, &has_beta, err));
        if (has_beta && beta != 0) p->beta_fast = beta; /* HF: `or 32` */
        FORWARD_IF_ERROR(get_number(rope, "rope ", "beta_slow", &beta, &has_beta, err));
        if (has_beta && beta != 0) p->beta_slow = beta;
        FORWARD_IF_ERROR(get_number(rope, "rope ", "mscale", &p->mscale, NULL, err));
        FORWARD_IF_ERROR(get_number(rope, "rope ", "mscale_all_dim", &p->mscale_all_dim, NULL, err));
        FORWARD_IF_ERROR(get_number(rope, "rope ", "attention_factor", &p->attention_factor, NULL, err));
        FORWARD_IF_ERROR(get_number(rope, "rope ", "low_freq_factor", &p->low_freq_factor, NULL, err));
        FORWARD_IF_ERROR(get_number(rope, "rope ", "high_freq_factor", &p->high_freq_factor, NULL, err));
        FORWARD_IF_ERROR(get_count(rope, "rope ", "original_max_position_embeddings", pos_max, &rope_orig,
                                   &has_rope_orig, err));
        const cJSON *tr = item(rope, "truncate");
        if (tr) {
            RETURN_ERROR_IF(!cJSON_IsBool(tr), err, POSENC_ERR_FORMAT, "config.json: rope 'truncate' must be true or false");
            p->truncate = cJSON_IsTrue(tr);
        }
        if (p->scaling == POSENC_ROPE_LONGROPE) FORWARD_IF_ERROR(longrope_lists(rope, out, err));
        int64_t orig = has_rope_orig ? rope_orig : has_top_orig ? top_orig : 0;
        switch (p->scaling) {
        case POSENC_ROPE_YARN:
        case POSENC_ROPE_LLAMA3:
            if (!orig) {
                out->warnings |= POSENC_CONFIG_WARN_NO_ORIGINAL;
                if (p->scaling == POSENC_ROPE_YARN) orig = max_pos; /* HF falls back to max_position_embeddings */
            }
            p->original_max_position = orig;
            if (!has_factor && orig > 0 && max_pos > 0) p->factor = (double)max_pos / (double)orig;
            RETURN_ERROR_IF(!has_factor && !(orig > 0 && max_pos > 0), err, POSENC_ERR_FORMAT,
                            "config.json: rope scaling '%s' has no factor", out->scaling_name);
            break;
        case POSENC_ROPE_LONGROPE:
            if (has_top_orig) { /* Phi-3: the factor is the context ratio */
                p->original_max_position = top_orig;
                if (top_orig > 0 && max_pos > 0) p->factor = (double)max_pos / (double)top_orig;
            } else if (has_rope_orig) {
                p->original_max_position = rope_orig;
                if (!has_factor && rope_orig > 0 && max_pos > 0) p->factor = (double)max_pos / (double)rope_orig;
            } else {
                out->warnings |= POSENC_CONFIG_WARN_NO_ORIGINAL;
                p->original_max_position = max_pos;
            }
            break;
        case POSENC_ROPE_LINEAR:
        case POSENC_ROPE_DYNAMIC:
        case POSENC_ROPE_NTK:
            p->original_max_position = orig;
            RETURN_ERROR_IF(!has_factor, err, POSENC_ERR_FORMAT, "config.json: rope scaling '%s' has no factor",
                            out->scaling_name);
            break;
        default:
            break;
        }
    }
    return config_finish_(out, "config.json", err);
}

posenc_status posenc_config_parse_hf_json(const char *text, size_t size, posenc_model_config *out,
                                          posenc_error *err) {
    RETURN_IF_NULL(out, err);
    config_init_(out, POSENC_CONFIG_HF_JSON);
    RETURN_IF_NULL(text, err);
    const char *end = NULL;
    cJSON *root = posenc_json_parse_(text, size, &end);
    if (!root) {
        size_t at = end && end >= text && end <= text + size ? (size_t)(end - text) : 0;
        return posenc_fail_(err, POSENC_ERR_FORMAT,
                            "config.json: not valid JSON (error near byte %zu of %zu; truncated, or nested deeper "
                            "than %d levels?)", at, size, CJSON_NESTING_LIMIT);
    }
    posenc_status st = parse_model(root, out, err);
    cJSON_Delete(root);
    if (st != POSENC_OK) posenc_config_free(out);
    return st;
}
