/* config_layers.c: building a posenc_model, the pieces every reader fills it
 * with (the layer list, RoPE variants, ALiBi slopes) and its release. Below
 * config_hf.c, config_hf_layers.c and config_gguf.c; it calls none of them. */
#include "config_internal.h"

#include <stdlib.h>
#include <string.h>

const char *posenc_layer_scheme_name(posenc_layer_scheme scheme) {
    switch (scheme) {
    case POSENC_LAYER_NOPE: return "nope";
    case POSENC_LAYER_ROPE: return "rope";
    case POSENC_LAYER_ALIBI: return "alibi";
    case POSENC_LAYER_LEARNED: return "learned";
    case POSENC_LAYER_T5: return "t5";
    case POSENC_LAYER_SINUSOIDAL: return "sinusoidal";
    case POSENC_LAYER_DEBERTA: return "deberta";
    case POSENC_LAYER_WINDOW_RELATIVE: return "window_relative";
    case POSENC_LAYER_CONV_POSITION: return "conv_position";
    case POSENC_LAYER_ROPE_2D: return "rope_2d";
    case POSENC_LAYER_SINE_2D: return "sine_2d";
    }
    return "?";
}

void config_model_init_(posenc_model *m, posenc_config_format format) {
    memset(m, 0, sizeof *m);
    config_init_(&m->config, format);
    posenc_t5_params_default(&m->t5);
    m->sinusoid_zero_row = -1; /* no zeroed row unless a fairseq-style table says so */
}

posenc_status config_layers_alloc_(posenc_model *m, int64_t count, posenc_error *err) {
    RETURN_ERROR_IF(count < 0 || count > POSENC_MODEL_MAX_LAYERS, err, POSENC_ERR_LIMIT,
                    "the model has %lld layers (posenc lists at most %d)", (long long)count, POSENC_MODEL_MAX_LAYERS);
    free(m->layers);
    m->layers = NULL;
    m->layer_count = 0;
    if (count == 0) return POSENC_OK;
    m->layers = calloc((size_t)count, sizeof *m->layers);
    RETURN_ERROR_IF(!m->layers, err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %lld layers", (long long)count);
    m->layer_count = (int32_t)count;
    for (int64_t i = 0; i < count; i++) config_layer_set_(m, i, POSENC_LAYER_NOPE, -1, "attention", 0);
    return POSENC_OK;
}

void config_layer_set_(posenc_model *m, int64_t i, posenc_layer_scheme scheme, int32_t rope, const char *kind,
                       int64_t window) {
    if (i < 0 || i >= m->layer_count) return;
    posenc_model_layer *l = &m->layers[i];
    l->scheme = scheme;
    l->rope = scheme == POSENC_LAYER_ROPE ? rope : -1;
    config_copy_name_(l->kind, sizeof l->kind, kind, strlen(kind) < sizeof l->kind ? strlen(kind) : sizeof l->kind - 1);
    l->sliding_window = window;
}

static void rope_variant(posenc_model *m, int32_t i, const char *name, const posenc_rope_params *p) {
    posenc_model_rope *r = &m->ropes[i];
    const posenc_model_config *c = &m->config;
    memset(r, 0, sizeof *r);
    config_copy_name_(r->name, sizeof r->name, name, strlen(name) < sizeof r->name ? strlen(name) : sizeof r->name - 1);
    r->params = *p;
    r->layout = c->layout;
    posenc_rope_check(p, &r->rotary_dim, NULL);
    r->attention_head_dim = c->attention_head_dim > 0 ? c->attention_head_dim : p->head_dim;
    r->rotary_offset = c->rotary_offset;
    /* every section up to the last nonzero one: HF splits by all of them, so a zero
     * in the middle gives its axis no pairs and keeps the axes after it */
    int32_t axes = 0;
    for (int k = 0; k < 4; k++)
        if (c->mrope_sections[k] > 0) axes = k + 1;
    for (int k = 0; k < axes; k++) r->mrope.sizes[k] = c->mrope_sections[k];
    r->mrope.axes = axes;
    r->mrope.kind = c->mrope_interleaved ? POSENC_MROPE_INTERLEAVED : POSENC_MROPE_SECTIONS;
}

void config_ropes_from_config_(posenc_model *m) {
    const posenc_model_config *c = &m->config;
    if (c->layer_type_count > 0) {
        for (int32_t i = 0; i < c->layer_type_count && i < POSENC_MODEL_MAX_ROPES; i++)
            rope_variant(m, i, c->layer_types[i].name, i == 0 ? &c->rope : &c->layer_types[i].rope);
        m->rope_count = c->layer_type_count < POSENC_MODEL_MAX_ROPES ? c->layer_type_count : POSENC_MODEL_MAX_ROPES;
    } else {
        rope_variant(m, 0, "rope", &c->rope);
        m->rope_count = 1;
    }
}

posenc_status config_alibi_(posenc_model *m, int64_t heads, double max_bias, const char *source, posenc_error *err) {
    RETURN_ERROR_IF(heads <= 0 || heads > (1 << 20), err, POSENC_ERR_FORMAT,
                    "%s: ALiBi needs the number of attention heads (got %lld)", source, (long long)heads);
    free(m->alibi_slopes);
    m->alibi_slopes = malloc(sizeof(double) * (size_t)heads);
    RETURN_ERROR_IF(!m->alibi_slopes, err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %lld ALiBi slopes",
                    (long long)heads);
    posenc_error inner = {0};
    if (posenc_alibi_slopes_f64((int32_t)heads, max_bias, 0, 0, POSENC_MODE_PRECISE, m->alibi_slopes, (size_t)heads,
                                &inner) != POSENC_OK)
        return posenc_fail_(err, POSENC_ERR_FORMAT, "%s: ALiBi: %s", source, inner.message);
    m->alibi_heads = (int32_t)heads;
    m->alibi_max_bias = max_bias;
    return POSENC_OK;
}

void posenc_model_free(posenc_model *model) {
    if (!model) return;
    posenc_model_config_free(&model->config);
    free(model->layers);
    free(model->alibi_slopes);
    model->layers = NULL;
    model->alibi_slopes = NULL;
    model->layer_count = 0;
    model->alibi_heads = 0;
    for (int i = 0; i < POSENC_MODEL_MAX_ROPES; i++) {
        model->ropes[i].params.short_factors = model->ropes[i].params.long_factors = NULL;
        model->ropes[i].params.factors_count = 0;
    }
    model->rope_count = 0;
}
