/* config_hf_conv.c: FAMILY_CONV_POSITION, the wav2vec2-style speech encoders whose only position information is a
 * learned convolution of the features added to the encoder's input (transformers 5.18's
 * *PositionalConvEmbedding). One row per model type: which keys build the convolution and their class defaults,
 * read off configuration_<m>.py / modeling_<m>.py; posenc.h (conv_pos_*) says what the fields mean. */
#include "config_internal.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    const char *model_type;
    const char *kernel_key;  /* the Conv1d's kernel_size */
    int32_t kernel;          /* its class default */
    const char *layers_key;  /* stacked conv layers (data2vec-audio); NULL: one */
    int32_t layers;
    int32_t groups;          /* num_conv_pos_embedding_groups default */
    const char *stride_key;  /* the conv's stride (SEW: squeeze_factor, also the input's pooling); NULL: 1 */
    int32_t stride;
    int32_t norm;            /* posenc_model.conv_pos_norm: 0 weight norm, 2 LayerNorm per layer */
    int32_t batch_norm_key;  /* 1: conv_pos_batch_norm true switches weight norm for an input BatchNorm (HuBERT) */
    int32_t kind;            /* CONV_PLAIN; CONV_WAVLM: WavLM's gated relative bias too (num_buckets 320,
                                max_bucket_distance 800); CONV_CONFORMER: refused by position_embeddings_type */
} conv_position;

enum { CONV_PLAIN = 0, CONV_WAVLM = 1, CONV_CONFORMER = 2 };

static const conv_position conv_positions[] = {
    {"wav2vec2", "num_conv_pos_embeddings", 128, NULL, 1, 16, NULL, 1, 0, 0, 0},
    {"hubert", "num_conv_pos_embeddings", 128, NULL, 1, 16, NULL, 1, 0, 1, 0},
    {"unispeech", "num_conv_pos_embeddings", 128, NULL, 1, 16, NULL, 1, 0, 0, 0},
    {"unispeech-sat", "num_conv_pos_embeddings", 128, NULL, 1, 16, NULL, 1, 0, 0, 0},
    /* Data2VecAudioPositionalConvEmbedding: num_conv_pos_embeddings counts LAYERS here (default 5), each a conv of
     * conv_pos_kernel_size (19), then a LayerNorm without affine, then the activation; no weight norm */
    {"data2vec-audio", "conv_pos_kernel_size", 19, "num_conv_pos_embeddings", 5, 16, NULL, 1, 2, 0, 0},
    /* SEWPositionalConvEmbedding: the conv strides by squeeze_factor; SEWEncoder pools its input by the same */
    {"sew", "num_conv_pos_embeddings", 128, NULL, 1, 16, "squeeze_factor", 2, 0, 0, 0},
    /* WavLMPositionalConvEmbedding is wav2vec2's; WavLMAttention adds the gated bucket bias (posenc.h: wavlm_*) */
    {"wavlm", "num_conv_pos_embeddings", 128, NULL, 1, 16, NULL, 1, 0, 0, CONV_WAVLM},
    /* the conformers: refused whatever position_embeddings_type says (conformer_refusal) */
    {"wav2vec2-conformer", "num_conv_pos_embeddings", 128, NULL, 1, 16, NULL, 1, 0, 0, CONV_CONFORMER},
    {"wav2vec2-bert", NULL, 0, NULL, 1, 0, NULL, 1, 0, 0, CONV_CONFORMER},
};

/* An integer key >= 1 with its class default noted when absent. */
static posenc_status conv_int(hf_reader *h, const cJSON *cfg, const char *key, int32_t fallback, int32_t *out) {
    const cJSON *v = hf_member_(cfg, key);
    RETURN_ERROR_IF(v && !cJSON_IsNumber(v), h->err, POSENC_ERR_FORMAT,
                    "config.json: '%s' must be an integer (%s's convolutional position embedding)", key,
                    h->family->model_type);
    int64_t got = fallback;
    bool has = false;
    FORWARD_IF_ERROR(hf_count_(h, cfg, "", key, (int64_t)1 << 20, &got, &has));
    if (!has) {
        char text[64];
        snprintf(text, sizeof text, "%s=%d", key, (int)fallback);
        config_note_(h->out->defaults_used, sizeof h->out->defaults_used, text);
    }
    RETURN_ERROR_IF(got < 1, h->err, POSENC_ERR_FORMAT, "config.json: '%s' %lld must be >= 1 (the module "
                    "cannot be built with it)", key, (long long)got);
    *out = (int32_t)got;
    return POSENC_OK;
}

/* WavLM's num_buckets / max_bucket_distance (class defaults 320 / 800), checked as posenc_wavlm_bucket checks them:
 * outside that domain transformers' own buckets divide by zero or never fill a row, so posenc refuses naming both */
static posenc_status wavlm_bias(hf_reader *h, const cJSON *cfg) {
    posenc_model *m = h->model;
    int32_t buckets = 0, distance = 0;
    FORWARD_IF_ERROR(conv_int(h, cfg, "num_buckets", 320, &buckets));
    FORWARD_IF_ERROR(conv_int(h, cfg, "max_bucket_distance", 800, &distance));
    posenc_t5_params p = {buckets, distance, 1};
    posenc_error inner = {0};
    int32_t probe = 0;
    if (posenc_wavlm_bucket(&p, 0, &probe, &inner) != POSENC_OK)
        return posenc_fail_(h->err, POSENC_ERR_UNSUPPORTED, "config.json: %s num_buckets %d, max_bucket_distance %d: "
                            "%s", h->family->model_type, (int)buckets, (int)distance, inner.message);
    m->wavlm_num_buckets = buckets;
    m->wavlm_max_distance = distance;
    static const char table[] = "wavlm.encoder.layers.0.attention.rel_attn_embed.weight"; /* layer 0 owns it */
    config_copy_name_(m->wavlm_tensor, sizeof m->wavlm_tensor, table, strlen(table));
    return POSENC_OK;
}

/* Wav2Vec2-Conformer and Wav2Vec2-BERT (transformers 5.18): what their attention does with positions, by
 * position_embeddings_type (class defaults "relative" / "relative_key"), none of which posenc's schemes describe. The
 * conformer builds pos_conv_embed but Wav2Vec2ConformerEncoder.forward never calls it (tests/oracle: conv_refused). */
static posenc_status conformer_refusal(hf_reader *h, const cJSON *cfg) {
    const char *type = h->family->model_type;
    bool bert = strcmp(type, "wav2vec2-bert") == 0;
    const cJSON *v = hf_member_(cfg, "position_embeddings_type");
    RETURN_ERROR_IF(v && !cJSON_IsString(v) && !cJSON_IsNull(v), h->err, POSENC_ERR_FORMAT,
                    "config.json: 'position_embeddings_type' must be a string or null");
    const char *kind = !v ? (bert ? "relative_key" : "relative") : cJSON_IsNull(v) ? "null" : v->valuestring;
    const char *why =
        strcmp(kind, "rotary") == 0 ? "it rotates the layer's input before linear_q / linear_k, not q and k"
        : strcmp(kind, "relative") == 0 ? "Transformer-XL relative attention (linear_pos, pos_bias_u/v, rel_shift)"
        : strcmp(kind, "relative_key") == 0 ? "rows clamp(k - q, -left_max, right_max), an asymmetric Shaw clip"
                                            : "no positions in the attention, only the conformer's depthwise convs";
    return posenc_fail_(h->err, POSENC_ERR_UNSUPPORTED, "config.json: %s position_embeddings_type %.32s: %s, no posenc "
                        "scheme%s", type, kind, why, bert ? "" : " (pos_conv_embed is built, never called)");
}

posenc_status hf_conv_position_layers_(hf_reader *h, const cJSON *cfg) {
    posenc_model *m = h->model;
    const config_family *f = h->family;
    const conv_position *c = NULL;
    for (size_t i = 0; i < sizeof conv_positions / sizeof conv_positions[0] && !c; i++)
        if (strcmp(conv_positions[i].model_type, f->model_type) == 0) c = &conv_positions[i];
    RETURN_ERROR_IF(!c, h->err, POSENC_ERR_UNSUPPORTED, "config.json: %s has no convolutional position row",
                    f->model_type);
    if (c->kind == CONV_CONFORMER) return conformer_refusal(h, cfg);
    int32_t kernel = 0, groups = 0, layers = 1, stride = 1;
    FORWARD_IF_ERROR(conv_int(h, cfg, c->kernel_key, c->kernel, &kernel));
    FORWARD_IF_ERROR(conv_int(h, cfg, "num_conv_pos_embedding_groups", c->groups, &groups));
    if (c->layers_key) FORWARD_IF_ERROR(conv_int(h, cfg, c->layers_key, c->layers, &layers));
    if (c->stride_key) FORWARD_IF_ERROR(conv_int(h, cfg, c->stride_key, c->stride, &stride));
    int64_t hidden = h->out->hidden_size;
    RETURN_ERROR_IF(hidden < 1, h->err, POSENC_ERR_FORMAT, "config.json: hidden_size %lld must be >= 1",
                    (long long)hidden);
    /* torch's Conv1d raises unless in_channels (hidden_size) is a multiple of groups: the model cannot be built */
    RETURN_ERROR_IF(hidden % groups != 0, h->err, POSENC_ERR_FORMAT,
                    "config.json: hidden_size %lld is not a multiple of num_conv_pos_embedding_groups %d (torch's "
                    "Conv1d refuses the grouped convolution)", (long long)hidden, (int)groups);
    int32_t norm = c->norm;
    if (c->batch_norm_key) {
        const cJSON *bn = hf_use_(h, cfg, "conv_pos_batch_norm");
        RETURN_ERROR_IF(bn && !cJSON_IsBool(bn), h->err, POSENC_ERR_FORMAT,
                        "config.json: 'conv_pos_batch_norm' must be true or false");
        if (cJSON_IsTrue(bn)) norm = 1; /* HubertPositionalConvEmbedding: BatchNorm1d first, no weight norm */
    }
    const cJSON *act = hf_use_(h, cfg, "feat_extract_activation");
    RETURN_ERROR_IF(act && !cJSON_IsString(act), h->err, POSENC_ERR_FORMAT,
                    "config.json: 'feat_extract_activation' must be a string (an ACT2FN name: \"gelu\")");
    const char *activation = act ? act->valuestring : "gelu";
    RETURN_ERROR_IF(!config_copy_name_(m->conv_pos_activation, sizeof m->conv_pos_activation, activation,
                                       strlen(activation)),
                    h->err, POSENC_ERR_FORMAT, "config.json: 'feat_extract_activation' \"%.40s...\" is longer than "
                    "posenc's %zu characters", activation, sizeof m->conv_pos_activation - 1);
    int64_t count = h->out->num_hidden_layers;
    RETURN_ERROR_IF(count < 1, h->err, POSENC_ERR_FORMAT, "config.json: num_hidden_layers %lld must be >= 1",
                    (long long)count);
    FORWARD_IF_ERROR(config_layers_alloc_(m, count, h->err));
    m->rope_count = 0;
    m->conv_pos_kernel = kernel;
    m->conv_pos_groups = groups;
    m->conv_pos_layers = layers;
    m->conv_pos_padding = kernel / 2;             /* nn.Conv1d(padding=kernel // 2) */
    m->conv_pos_trim = kernel % 2 == 0 ? 1 : 0;   /* *SamePadLayer: num_pad_remove = 1 for an even kernel */
    m->conv_pos_stride = stride;
    m->conv_pos_norm = norm;
    config_copy_name_(m->conv_pos_tensor, sizeof m->conv_pos_tensor, f->table, strlen(f->table));
    if (c->kind == CONV_WAVLM) FORWARD_IF_ERROR(wavlm_bias(h, cfg));
    for (int64_t i = 0; i < count; i++) config_layer_set_(m, i, POSENC_LAYER_CONV_POSITION, -1, "encoder", 0);
    return POSENC_OK;
}
