/* config_hf_sine2d.c: FAMILY_SINE_2D, the DETR-style detection / segmentation models (issue 39). One row per
 * model type says which config keys transformers 5.18's modeling_<type>.py feeds its *SinePositionEmbedding, and
 * which stacks add the table (posenc.h: posenc_model.sine2d*). A new type is a row here, its config_family.c row,
 * its oracle case and its coverage row. */
#include "config_internal.h"

#include <math.h>
#include <string.h>

typedef struct {
    const char *model_type;
    const char *sub;          /* the sub-config holding width and layers (MaskFormer: decoder_config), or NULL */
    const char *width_key;    /* F = width // 2 */
    const char *width_alias;  /* the attribute_map spelling HF also accepts, or NULL */
    int64_t width;            /* the config class default */
    const char *same_key;     /* a second width that builds a second table (Mask2Former's hidden_dim), or NULL */
    const char *type_key;     /* position_embedding_type ("sine" / "learned"), or NULL: the sine is unconditional */
    const char *temp_y_key, *temp_x_key; /* per-axis temperatures read from the config, or NULL: temperature */
    double temperature;       /* the default (or the hard-coded value when no key) */
    const char *scale_key;    /* a scale key (null: 2 pi), or NULL: 2 pi */
    double offset;            /* Deformable DETR's y - 0.5 */
    int32_t by_product;       /* DAB-DETR's exponent k2 * (2 / F) */
    const char *enc_key;      /* encoder layers adding the table to q and k, or NULL */
    int64_t enc;
    const char *dec_key;      /* decoder layers adding it to the cross-attention keys, or NULL */
    int64_t dec;
    int32_t dec_minus;        /* Mask2Former: decoder_layers - 1 layers (the first stage is the queries alone) */
    const char *levels_key;   /* num_feature_levels with a learned level table, or NULL: `levels` fixed */
    int64_t levels;
    const char *module;       /* where the framework computes the table */
    const char *level_tensor;
    posenc_sine2d_layout layout; /* RTDETR: the hybrid encoder's AIFI layers (below) */
    const char *enc_kind;     /* the encoder layers' kind: "encoder", or "scaled_encoder" (DAB-DETR, below) */
} sine2d_row;

static const sine2d_row rows[] = {
    /* DetrModel: DetrSinePositionEmbedding(d_model // 2, normalize=True), temperature 10000 fixed */
    {"detr", NULL, "d_model", "hidden_size", 256, NULL, "position_embedding_type", NULL, NULL, 10000.0, NULL, 0.0, 0,
     "encoder_layers", 6, "decoder_layers", 6, 0, NULL, 0, "model.position_embedding", NULL, POSENC_SINE2D_DETR, "encoder"},
    {"conditional_detr", NULL, "d_model", "hidden_size", 256, NULL, "position_embedding_type", NULL, NULL, 10000.0,
     NULL, 0.0, 0, "encoder_layers", 6, "decoder_layers", 6, 0, NULL, 0, "model.position_embedding", NULL, POSENC_SINE2D_DETR, "encoder"},
    /* build_position_encoding: TableTransformerSinePositionEmbedding(d_model // 2, normalize=True) in the backbone */
    {"table-transformer", NULL, "d_model", "hidden_size", 256, NULL, "position_embedding_type", NULL, NULL, 10000.0,
     NULL, 0.0, 0, "encoder_layers", 6, "decoder_layers", 6, 0, NULL, 0, "model.backbone.position_embedding", NULL, POSENC_SINE2D_DETR, "encoder"},
    /* DabDetrSinePositionEmbedding(config): hidden_size / 2, temperature_height / _width, always normalized with
     * sine_position_embedding_scale (None: 2 pi), exponent dim // 2 then mul_(2 / embedding_dim); DabDetrEncoder
     * hands each layer the table times query_scale(hidden_states) (a learned MLP of that layer's input): kind
     * "scaled_encoder", the table before that product */
    {"dab-detr", NULL, "hidden_size", NULL, 256, NULL, NULL, "temperature_height", "temperature_width", 20.0,
     "sine_position_embedding_scale", 0.0, 1, "encoder_layers", 6, "decoder_layers", 6, 0, NULL, 0,
     "model.backbone.position_embedding", NULL, POSENC_SINE2D_DETR, "scaled_encoder"},
    /* DeformableDetrSinePositionEmbedding: (y - 0.5) / (H + eps) * scale; the decoder's deformable cross-attention
     * samples the memory at reference points and adds no sine table; each level adds row `level` of level_embed */
    {"deformable_detr", NULL, "d_model", "hidden_size", 256, NULL, "position_embedding_type", NULL, NULL, 10000.0,
     NULL, 0.5, 0, "encoder_layers", 6, NULL, 0, 0, "num_feature_levels", 4, "model.position_embedding",
     "model.level_embed", POSENC_SINE2D_DETR, "encoder"},
    /* MaskFormerTransformerModule: MaskFormerSinePositionEmbedding(decoder_config.hidden_size // 2, normalize=True)
     * for its DETR decoder (no encoder); decoder_config.position_embedding_type is never read there */
    {"maskformer", "decoder_config", "d_model", "hidden_size", 256, NULL, NULL, NULL, NULL, 10000.0, NULL, 0.0, 0,
     NULL, 0, "decoder_layers", 6, 0, NULL, 0, "model.transformer_module.position_embedder", NULL, POSENC_SINE2D_DETR, "encoder"},
    /* Mask2Former: the pixel decoder's deformable encoder adds Mask2FormerSinePositionEmbedding(feature_size // 2)
     * + row `level` of its level_embed (3 levels, hard-coded) to q; the masked-attention decoder (decoder_layers - 1
     * layers) adds one built from hidden_dim // 2 to its cross-attention keys (its own level_embed goes to the
     * features, not the positions) */
    {"mask2former", NULL, "feature_size", NULL, 256, "hidden_dim", NULL, NULL, NULL, 10000.0, NULL, 0.0, 0,
     "encoder_layers", 6, "decoder_layers", 10, 1, NULL, 3, "model.pixel_level_module.decoder.position_embedding",
     "model.pixel_level_module.decoder.level_embed", POSENC_SINE2D_DETR, "encoder"},
    /* RT-DETR, RT-DETR v2, D-FINE: build_2d_sinusoidal_position_embedding(encoder_hidden_dim,
     * positional_encoding_temperature) in float64, added to q and k of the encoder_layers of each AIFI layer (one per
     * entry of encode_proj_layers, on that feature level); the decoder's deformable attention adds none; eval_size
     * set: no table at inference (refused) */
    {"rt_detr", NULL, "encoder_hidden_dim", NULL, 256, NULL, NULL, "positional_encoding_temperature",
     "positional_encoding_temperature", 10000.0, NULL, 0.0, 0, "encoder_layers", 1, NULL, 0, 0, NULL, 0,
     "model.encoder.aifi.0.position_embedding", NULL, POSENC_SINE2D_RTDETR, "encoder"},
    {"rt_detr_v2", NULL, "encoder_hidden_dim", NULL, 256, NULL, NULL, "positional_encoding_temperature",
     "positional_encoding_temperature", 10000.0, NULL, 0.0, 0, "encoder_layers", 1, NULL, 0, 0, NULL, 0,
     "model.encoder.aifi.0.position_embedding", NULL, POSENC_SINE2D_RTDETR, "encoder"},
    {"d_fine", NULL, "encoder_hidden_dim", NULL, 256, NULL, NULL, "positional_encoding_temperature",
     "positional_encoding_temperature", 10000.0, NULL, 0.0, 0, "encoder_layers", 1, NULL, 0, 0, NULL, 0,
     "model.encoder.aifi.0.position_embedding", NULL, POSENC_SINE2D_RTDETR, "encoder"},
};

static posenc_status count_key(hf_reader *h, const cJSON *cfg, const char *where, const char *key, int64_t fallback,
                               int64_t *out) {
    bool has = false;
    *out = fallback;
    FORWARD_IF_ERROR(hf_count_(h, cfg, where, key, (int64_t)1 << 30, out, &has));
    if (!has) {
        char text[96];
        snprintf(text, sizeof text, "%s%s=%lld", where, key, (long long)fallback);
        config_note_(h->out->defaults_used, sizeof h->out->defaults_used, text);
    }
    return POSENC_OK;
}

static posenc_status temperature_key(hf_reader *h, const cJSON *cfg, const char *key, double fallback, double *out) {
    bool has = false;
    *out = fallback;
    if (!key) return POSENC_OK;
    FORWARD_IF_ERROR(hf_number_(h, cfg, "", key, out, &has));
    RETURN_ERROR_IF(has && !(*out > 0.0), h->err, POSENC_ERR_FORMAT, "config.json: '%s' %g must be > 0", key, *out);
    return POSENC_OK;
}

posenc_status hf_sine2d_layers_(hf_reader *h, const cJSON *root) {
    posenc_model *m = h->model;
    const config_family *f = h->family;
    const sine2d_row *r = NULL;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0] && !r; i++)
        if (strcmp(rows[i].model_type, f->model_type) == 0) r = &rows[i];
    RETURN_ERROR_IF(!r, h->err, POSENC_ERR_UNSUPPORTED, "config.json: %s has no 2D sine row", f->model_type);
    const cJSON *cfg = root;
    char where[32] = "";
    if (r->sub) {
        const cJSON *sub = hf_use_(h, root, r->sub);
        RETURN_ERROR_IF(sub && !cJSON_IsObject(sub), h->err, POSENC_ERR_UNSUPPORTED,
                        "config.json: '%s' is not an object: posenc reads %s's sine table from its keys only",
                        r->sub, f->model_type);
        if (sub) { /* absent: the class builds its default sub-config (the row's defaults) */
            cfg = sub;
            snprintf(where, sizeof where, "%s.", r->sub);
        }
    }
    if (r->type_key) {
        const cJSON *t = hf_use_(h, cfg, r->type_key);
        RETURN_ERROR_IF(t && !cJSON_IsString(t), h->err, POSENC_ERR_FORMAT, "config.json: '%s' must be a string",
                        r->type_key);
        RETURN_ERROR_IF(t && strcmp(t->valuestring, "sine") != 0, h->err, POSENC_ERR_UNSUPPORTED,
                        "config.json: %s '%.32s': %s then adds a learned 2D table (row and column embeddings) or "
                        "fails; posenc reads its fixed sine table only", r->type_key, t->valuestring, f->model_type);
    }
    int64_t width = r->width;
    const char *wkey = r->width_key;
    if (!hf_item_(cfg, wkey) && r->width_alias && hf_item_(cfg, r->width_alias)) wkey = r->width_alias;
    FORWARD_IF_ERROR(count_key(h, cfg, where, wkey, r->width, &width));
    RETURN_ERROR_IF(width < 4 || width % 4 != 0, h->err, POSENC_ERR_UNSUPPORTED,
                    "config.json: %s%s %lld: the sine table takes %s // 2 channels per axis in sin, cos pairs, so "
                    "posenc reads a multiple of 4 only (the framework's table then has another width)", where,
                    wkey, (long long)width, wkey);
    if (r->same_key) { /* two tables of one shape only: posenc_model holds one */
        int64_t other = r->width;
        FORWARD_IF_ERROR(count_key(h, cfg, where, r->same_key, r->width, &other));
        RETURN_ERROR_IF(other != width, h->err, POSENC_ERR_UNSUPPORTED,
                        "config.json: %s %lld and %s %lld differ: %s builds one sine table from each (encoder and "
                        "decoder), and posenc's model holds one; not read", wkey, (long long)width, r->same_key,
                        (long long)other, f->model_type);
    }
    posenc_sine2d_params *p = &m->sine2d;
    posenc_sine2d_params_default(p, (int32_t)(width / 2));
    p->mode = POSENC_MODE_TORCH_COMPAT; /* built in float32 by torch */
    p->offset = r->offset;
    p->exponent_by_product = r->by_product;
    FORWARD_IF_ERROR(temperature_key(h, root, r->temp_y_key, r->temperature, &p->temperature_y));
    FORWARD_IF_ERROR(temperature_key(h, root, r->temp_x_key, r->temperature, &p->temperature_x));
    if (!r->temp_y_key) p->temperature_y = p->temperature_x = r->temperature;
    if (r->scale_key) {
        bool has = false;
        FORWARD_IF_ERROR(hf_number_(h, root, "", r->scale_key, &p->scale, &has));
        if (!has) p->scale = 2.0 * 3.14159265358979323846;
    }
    int64_t aifi = 1; /* RT-DETR: AIFI layers, one per encode_proj_layers entry */
    if (r->layout == POSENC_SINE2D_RTDETR) {
        p->layout = POSENC_SINE2D_RTDETR;
        p->normalize = 0;
        p->mode = POSENC_MODE_PRECISE; /* float64 in the framework, rounded once */
        const cJSON *e = hf_use_(h, cfg, "eval_size");
        RETURN_ERROR_IF(e && !cJSON_IsNull(e), h->err, POSENC_ERR_UNSUPPORTED,
                        "config.json: eval_size set: %s's AIFI layers then add no position table at inference "
                        "(self.training or eval_size is None) but one in training; posenc does not pick a mode",
                        f->model_type);
        const cJSON *proj = hf_use_(h, cfg, "encode_proj_layers");
        RETURN_ERROR_IF(proj && !cJSON_IsArray(proj), h->err, POSENC_ERR_FORMAT,
                        "config.json: 'encode_proj_layers' must be a list");
        if (proj) aifi = cJSON_GetArraySize(proj);
        else config_note_(h->out->defaults_used, sizeof h->out->defaults_used, "encode_proj_layers=[2]");
    }
    posenc_error inner = {0};
    if (posenc_sine2d_check(p, &inner) != POSENC_OK)
        return posenc_fail_(h->err, POSENC_ERR_FORMAT, "config.json: %s: %s", f->model_type, inner.message);
    int64_t enc = 0, dec = 0, levels = 0;
    if (r->enc_key) FORWARD_IF_ERROR(count_key(h, cfg, where, r->enc_key, r->enc, &enc));
    enc *= aifi;
    if (r->dec_key) FORWARD_IF_ERROR(count_key(h, cfg, where, r->dec_key, r->dec, &dec));
    RETURN_ERROR_IF(r->dec_minus && dec < r->dec_minus + 1, h->err, POSENC_ERR_FORMAT,
                    "config.json: %s %lld: %s runs %s - %d layers, so it needs at least %d", r->dec_key,
                    (long long)dec, f->model_type, r->dec_key, (int)r->dec_minus, (int)r->dec_minus + 1);
    dec -= r->dec_minus;
    levels = r->levels;
    if (r->levels_key) {
        FORWARD_IF_ERROR(count_key(h, root, "", r->levels_key, r->levels, &levels));
        RETURN_ERROR_IF(levels < 1, h->err, POSENC_ERR_FORMAT, "config.json: '%s' %lld must be >= 1", r->levels_key,
                        (long long)levels);
    }
    RETURN_ERROR_IF(enc + dec < 1, h->err, POSENC_ERR_FORMAT,
                    "config.json: %s has no layer (%s%s %lld, %s%s %lld)", f->model_type, where,
                    r->enc_key ? r->enc_key : "encoder_layers", (long long)enc, where,
                    r->dec_key ? r->dec_key : "decoder_layers", (long long)dec);
    FORWARD_IF_ERROR(config_layers_alloc_(m, enc + dec, h->err));
    m->rope_count = 0;
    h->out->num_hidden_layers = (int32_t)(enc + dec);
    h->out->hidden_size = (int32_t)width;
    for (int64_t i = 0; i < enc; i++) config_layer_set_(m, i, POSENC_LAYER_SINE_2D, -1, r->enc_kind, 0);
    for (int64_t i = 0; i < dec; i++) config_layer_set_(m, enc + i, POSENC_LAYER_SINE_2D, -1, "decoder", 0);
    config_copy_name_(m->sine2d_module, sizeof m->sine2d_module, r->module, strlen(r->module));
    m->sine2d_levels = (int32_t)levels;
    if (r->level_tensor)
        config_copy_name_(m->sine2d_level_tensor, sizeof m->sine2d_level_tensor, r->level_tensor,
                          strlen(r->level_tensor));
    return POSENC_OK;
}
