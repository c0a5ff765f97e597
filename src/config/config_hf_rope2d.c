/* config_hf_rope2d.c: FAMILY_ROPE_2D, vision encoders that rotate each patch by its (row, column) in the image's
 * patch grid (posenc.h section 4c), read the way each one's modeling_<model>.py (transformers 5.18) builds its
 * rotary embedding. One row per model type: a new type is a row here, a family row, an oracle case and a coverage
 * row. */
#include "config_internal.h"

#include <stdio.h>
#include <string.h>

enum {
    ROPE2D_WINDOWS = 1,        /* Qwen2.5-VL: window attention (window_size, fullatt_block_indexes) */
    ROPE2D_MERGE_PER_IMAGE = 2, /* VideoLLaMA3: forward(merge_sizes=...) orders the patches, not the config */
    ROPE2D_DINOV3 = 4           /* top-level rope_theta only; CLS + num_register_tokens unrotated before the patches */
};

typedef struct {
    const char *model_type;
    posenc_rope2d_kind kind;
    const char *layers_key, *hidden_key, *heads_key; /* the keys the config class names them by */
    int32_t merge;           /* spatial_merge_size default (the patch order); 0 = raster, no key read */
    int64_t patch_size;      /* patch_size default */
    bool head_dim_key;       /* the rotary class reads head_dim (getattr(config, "head_dim", None) or ...) */
    int32_t flags;           /* ROPE2D_* */
    const char *table;       /* posenc_model.rope2d_table: a learned table resized per image, or NULL */
    const char *lead_tensor; /* posenc_model.rope2d_lead_tensor: one lead token's learned angles, or NULL */
} rope2d_type;

static const rope2d_type types[] = {
    /* PixtralVisionRotaryEmbedding: head_dim = hidden_size // num_attention_heads (__post_init__ overwrites a given
     * head_dim); patches in raster order per image (meshgrid "ij", flatten) */
    {"pixtral", POSENC_ROPE2D_PIXTRAL, "num_hidden_layers", "hidden_size", "num_attention_heads", 0, 16, false, 0, NULL,
     NULL},
    /* Qwen2VLVisionRotaryEmbedding over head_dim // 2 (head_dim: getattr, else embed_dim // num_heads);
     * get_vision_position_ids: spatial_merge_size windows (hidden_size is the merger's output width) */
    {"qwen2_vl_vision", POSENC_ROPE2D_AXIAL, "depth", "embed_dim", "num_heads", 2, 14, true, 0, NULL, NULL},
    /* the same rotary; then permute_input_for_window_attn reorders blocks by get_vision_window_index */
    {"qwen2_5_vl_vision", POSENC_ROPE2D_AXIAL, "depth", "hidden_size", "num_heads", 2, 14, true, ROPE2D_WINDOWS, NULL,
     NULL},
    /* the same rotary; fast_pos_embed_interpolate adds pos_embed, bilinear to each grid */
    {"qwen3_vl_vision", POSENC_ROPE2D_AXIAL, "depth", "hidden_size", "num_heads", 2, 16, true, 0, "pos_embed.weight",
     NULL},
    {"qwen3_vl_moe_vision", POSENC_ROPE2D_AXIAL, "depth", "hidden_size", "num_heads", 2, 16, true, 0,
     "pos_embed.weight", NULL},
    /* the same rotary; Glm4vVisionEmbeddings adds position_embedding, bicubic grid_sample to each grid */
    {"glm4v_vision", POSENC_ROPE2D_AXIAL, "depth", "hidden_size", "num_heads", 2, 14, true, 0,
     "embeddings.position_embedding.weight", NULL},
    {"glm4v_moe_vision", POSENC_ROPE2D_AXIAL, "depth", "hidden_size", "num_heads", 2, 14, true, 0,
     "embeddings.position_embedding.weight", NULL},
    /* the same rotary; get_vision_position_ids(grid_thw, 1): raster whatever spatial_merge_size says; the embeddings
     * add position_embedding, bilinear to each grid */
    {"paddleocr_vl_vision", POSENC_ROPE2D_AXIAL, "num_hidden_layers", "hidden_size", "num_attention_heads", 0, 14, true,
     0, "vision_model.embeddings.position_embedding.weight", NULL},
    /* the same rotary; the merge size of each image comes with forward(merge_sizes=...) */
    {"video_llama_3_vision", POSENC_ROPE2D_AXIAL, "num_hidden_layers", "hidden_size", "num_attention_heads", 0, 16,
     true, ROPE2D_MERGE_PER_IMAGE, NULL, NULL},
    /* MLCDRotaryEmbedding (the same axial halves), raster patches after the CLS token, which rotates by
     * cat(class_pos_emb, class_pos_emb): learned angles */
    {"mlcd_vision_model", POSENC_ROPE2D_AXIAL, "num_hidden_layers", "hidden_size", "num_attention_heads", 0, 14, true,
     0, NULL, "class_pos_emb"},
    /* DINOv3ViTRopePositionEmbedding: head_dim = hidden_size // num_attention_heads, config.rope_theta (no rope dict);
     * pos_embed_shift / jitter / rescale act in training only (self.training), so eval is the plain grid */
    {"dinov3_vit", POSENC_ROPE2D_DINOV3, "num_hidden_layers", "hidden_size", "num_attention_heads", 0, 16, false,
     ROPE2D_DINOV3, NULL, NULL},
};

static posenc_status count_or_default(hf_reader *h, const cJSON *cfg, const char *key, int64_t fallback,
                                      int64_t *out) {
    bool has = false;
    *out = fallback;
    FORWARD_IF_ERROR(hf_count_(h, cfg, "", key, (int64_t)1 << 30, out, &has));
    if (!has) {
        char text[64];
        snprintf(text, sizeof text, "%s=%lld", key, (long long)fallback);
        config_note_(h->out->defaults_used, sizeof h->out->defaults_used, text);
    }
    return POSENC_OK;
}

/* rope_parameters (5.x) or top-level rope_theta (4.x, which the config class moves into rope_parameters with
 * rope_type "axial"): the base; any other rope_type is refused (the rotary classes raise on it). */
static posenc_status rope2d_base(hf_reader *h, const cJSON *cfg, double *base) {
    const config_family *f = h->family;
    const cJSON *d = hf_use_(h, cfg, "rope_parameters");
    RETURN_ERROR_IF(d && !cJSON_IsObject(d), h->err, POSENC_ERR_FORMAT,
                    "config.json: 'rope_parameters' must be an object");
    RETURN_ERROR_IF(hf_item_(cfg, "rope_scaling"), h->err, POSENC_ERR_UNSUPPORTED,
                    "config.json: 'rope_scaling' in a %s config: its 2-D rotary class takes rope_theta alone (rope_type "
                    "axial, no scaling); posenc does not guess what the file meant", f->model_type);
    const cJSON *src = d ? d : cfg;
    if (d) {
        const cJSON *t = hf_use_(h, d, "rope_type");
        RETURN_ERROR_IF(t && (!cJSON_IsString(t) || strcmp(t->valuestring, "axial") != 0), h->err,
                        POSENC_ERR_UNSUPPORTED,
                        "config.json: rope_parameters.rope_type '%.32s' in a %s config: %sRotaryEmbedding supports only "
                        "'axial' (it raises ValueError)", cJSON_IsString(t) ? t->valuestring : "?", f->model_type,
                        f->class_stem);
    }
    bool has = false;
    *base = f->theta;
    FORWARD_IF_ERROR(hf_number_(h, src, d ? "rope_parameters." : "", "rope_theta", base, &has));
    if (!has) {
        char text[48];
        snprintf(text, sizeof text, "rope_theta=%.10g", f->theta);
        config_note_(h->out->defaults_used, sizeof h->out->defaults_used, text);
    }
    return POSENC_OK;
}

/* Qwen2.5-VL: the blocks listed in fullatt_block_indexes (default [7, 15, 23, 31]) attend over the whole image,
 * the others within their window (cu_window_seqlens); the rotation is the same in both. */
static posenc_status window_kinds(hf_reader *h, const cJSON *cfg, int64_t layers) {
    posenc_model *m = h->model;
    static const int64_t fallback[] = {7, 15, 23, 31};
    for (int64_t i = 0; i < layers; i++) config_layer_set_(m, i, POSENC_LAYER_ROPE_2D, -1, "window_attention", 0);
    const cJSON *list = hf_use_(h, cfg, "fullatt_block_indexes");
    RETURN_ERROR_IF(list && !cJSON_IsArray(list), h->err, POSENC_ERR_FORMAT,
                    "config.json: 'fullatt_block_indexes' must be a list of layer indices");
    if (!list) {
        config_note_(h->out->defaults_used, sizeof h->out->defaults_used, "fullatt_block_indexes=[7, 15, 23, 31]");
        for (size_t k = 0; k < 4; k++)
            if (fallback[k] < layers) config_layer_set_(m, fallback[k], POSENC_LAYER_ROPE_2D, -1, "full_attention", 0);
        return POSENC_OK;
    }
    const cJSON *c;
    cJSON_ArrayForEach(c, list) {
        int64_t i = 0;
        FORWARD_IF_ERROR(hf_as_count_(c, "", "fullatt_block_indexes", (int64_t)1 << 30, &i, h->err));
        if (i < layers) config_layer_set_(m, i, POSENC_LAYER_ROPE_2D, -1, "full_attention", 0); /* HF: never matched */
    }
    return POSENC_OK;
}

posenc_status hf_rope2d_layers_(hf_reader *h, const cJSON *cfg) {
    posenc_model *m = h->model;
    const config_family *f = h->family;
    const rope2d_type *v = NULL;
    for (size_t i = 0; i < sizeof types / sizeof types[0] && !v; i++)
        if (strcmp(types[i].model_type, f->model_type) == 0) v = &types[i];
    RETURN_ERROR_IF(!v, h->err, POSENC_ERR_UNSUPPORTED, "config.json: %s has no 2-D RoPE row", f->model_type);
    int64_t layers = 0, hidden = 0, heads = 0, merge = 1, patch = 0;
    h->out->defaults_used[0] = '\0'; /* the generic counts' notes: this type names its own keys */
    FORWARD_IF_ERROR(count_or_default(h, cfg, v->layers_key, f->layers, &layers));
    FORWARD_IF_ERROR(count_or_default(h, cfg, v->hidden_key, f->hidden, &hidden));
    FORWARD_IF_ERROR(count_or_default(h, cfg, v->heads_key, f->heads, &heads));
    FORWARD_IF_ERROR(count_or_default(h, cfg, "patch_size", v->patch_size, &patch));
    if (v->merge) FORWARD_IF_ERROR(count_or_default(h, cfg, "spatial_merge_size", v->merge, &merge));
    RETURN_ERROR_IF(layers < 1, h->err, POSENC_ERR_FORMAT, "config.json: %s %lld must be >= 1", v->layers_key,
                    (long long)layers);
    RETURN_ERROR_IF(heads < 1 || hidden < heads, h->err, POSENC_ERR_FORMAT,
                    "config.json: %s %lld over %s %lld heads leaves no channel", v->hidden_key, (long long)hidden,
                    v->heads_key, (long long)heads);
    RETURN_ERROR_IF(patch < 1, h->err, POSENC_ERR_FORMAT, "config.json: patch_size %lld must be >= 1",
                    (long long)patch);
    int64_t head_dim = hidden / heads; /* the attention's own split */
    if (v->head_dim_key) { /* the rotary class would take head_dim, the attention splits hidden / heads */
        int64_t given = 0;
        bool has = false;
        FORWARD_IF_ERROR(hf_count_(h, cfg, "", "head_dim", (int64_t)1 << 30, &given, &has));
        RETURN_ERROR_IF(has && given != head_dim, h->err, POSENC_ERR_UNSUPPORTED,
                        "config.json: head_dim %lld in a %s config: its rotary embedding takes it while the attention "
                        "heads are %s / %s = %lld channels; posenc does not read a rotation of another width",
                        (long long)given, f->model_type, v->hidden_key, v->heads_key, (long long)head_dim);
    }
    int64_t window = 0;
    if (v->flags & ROPE2D_WINDOWS) { /* vit_merger_window_size = window_size // spatial_merge_size // patch_size */
        int64_t size = 0;
        FORWARD_IF_ERROR(count_or_default(h, cfg, "window_size", 112, &size));
        window = merge > 0 ? size / merge / patch : 0;
        RETURN_ERROR_IF(window < 1, h->err, POSENC_ERR_UNSUPPORTED,
                        "config.json: window_size %lld // spatial_merge_size %lld // patch_size %lld is 0: %s's window "
                        "index divides by it (ZeroDivisionError)", (long long)size, (long long)merge, (long long)patch,
                        f->model_type);
    }
    posenc_rope2d_params *r = &m->rope2d;
    posenc_rope2d_params_default(r, (int32_t)(head_dim > (1 << 20) ? (1 << 20) : head_dim));
    r->kind = v->kind;
    r->merge = (int32_t)(merge > (1 << 20) ? (1 << 20) : merge);
    r->window = (int32_t)(window > (1 << 20) ? (1 << 20) : window);
    if (v->flags & ROPE2D_DINOV3) { /* DINOv3ViTConfig keeps rope_theta as a plain field; no rope dict is read */
        static const char *const dicts[] = {"rope_parameters", "rope_scaling"};
        for (size_t i = 0; i < 2; i++)
            RETURN_ERROR_IF(hf_item_(cfg, dicts[i]), h->err, POSENC_ERR_UNSUPPORTED,
                            "config.json: '%s' in a %s config: its rotary class reads rope_theta alone; posenc does not "
                            "guess which the file meant", dicts[i], f->model_type);
        bool has = false;
        r->base = f->theta;
        FORWARD_IF_ERROR(hf_number_(h, cfg, "", "rope_theta", &r->base, &has));
        if (!has) config_note_(h->out->defaults_used, sizeof h->out->defaults_used, "rope_theta=100");
        int64_t registers = 0;
        FORWARD_IF_ERROR(count_or_default(h, cfg, "num_register_tokens", 0, &registers));
        m->rope2d_plain = (int32_t)(1 + (registers > (1 << 20) ? (1 << 20) : registers)); /* CLS + registers */
    } else {
        FORWARD_IF_ERROR(rope2d_base(h, cfg, &r->base));
    }
    posenc_error inner = {0};
    if (posenc_rope2d_check(r, &inner) != POSENC_OK)
        return posenc_fail_(h->err, POSENC_ERR_UNSUPPORTED, "config.json: %s's 2-D RoPE (%s %lld / %s %lld heads, "
                            "rope_theta %g, spatial_merge_size %lld): %s", f->model_type, v->hidden_key,
                            (long long)hidden, v->heads_key, (long long)heads, r->base, (long long)merge,
                            inner.message);
    m->rope2d_patch_size = patch;
    h->out->hidden_size = (int32_t)hidden;
    h->out->num_attention_heads = (int32_t)heads;
    h->out->num_hidden_layers = (int32_t)layers;
    h->out->attention_head_dim = (int32_t)head_dim;
    m->rope2d_merge_per_image = (v->flags & ROPE2D_MERGE_PER_IMAGE) != 0;
    if (v->table) config_copy_name_(m->rope2d_table, sizeof m->rope2d_table, v->table, strlen(v->table));
    if (v->lead_tensor) {
        m->rope2d_lead = 1;
        config_copy_name_(m->rope2d_lead_tensor, sizeof m->rope2d_lead_tensor, v->lead_tensor, strlen(v->lead_tensor));
    }
    FORWARD_IF_ERROR(config_layers_alloc_(m, layers, h->err));
    m->rope_count = 0;
    for (int64_t i = 0; i < layers; i++) config_layer_set_(m, i, POSENC_LAYER_ROPE_2D, -1, "attention", 0);
    if (v->flags & ROPE2D_WINDOWS) return window_kinds(h, cfg, layers);
    return POSENC_OK;
}
