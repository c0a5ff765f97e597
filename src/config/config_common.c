/* config_common.c: what the config.json and GGUF readers share: defaults, the
 * one RoPE derivation (posenc_rope_resolve, also used by the CLI flags) and
 * the final checks. */
#include "config_internal.h"

#include <stdlib.h>
#include <string.h>

void config_init_(posenc_model_config *out, posenc_config_format format) {
    memset(out, 0, sizeof *out);
    out->format = format;
    out->layout = POSENC_LAYOUT_HALF;
    out->softmax_scale_factor = 1.0;
    posenc_rope_params_default(&out->rope, 0);
}

bool config_copy_name_(char *dst, size_t size, const char *src, size_t len) {
    if (len >= size) return false;
    memcpy(dst, src, len);
    dst[len] = '\0';
    return true;
}

void config_note_(char *list, size_t size, const char *name) {
    size_t used = strlen(list), n = strlen(name), sep = used ? 2 : 0;
    if (used + sep + n + 1 > size) return;
    if (sep) memcpy(list + used, ", ", 2);
    memcpy(list + used + sep, name, n + 1);
}

posenc_status posenc_rope_resolve(posenc_rope_params *p, unsigned given, unsigned *warnings, posenc_error *err) {
    return config_resolve_(p, given, warnings, POSENC_ERR_INVALID_ARGUMENT, err);
}

posenc_status config_resolve_(posenc_rope_params *p, unsigned given, unsigned *warnings, posenc_status missing,
                              posenc_error *err) {
    RETURN_IF_NULL(p, err);
    const char *name = posenc_rope_scaling_name(p->scaling);
    bool has_factor = given & POSENC_ROPE_GIVEN_FACTOR, has_orig = given & POSENC_ROPE_GIVEN_ORIGINAL;
    int64_t max_pos = p->max_position;
    unsigned w = 0;
    switch (p->scaling) {
    case POSENC_ROPE_NONE:
        p->factor = 1.0;
        break;
    case POSENC_ROPE_LINEAR:
    case POSENC_ROPE_NTK:
    case POSENC_ROPE_DYNAMIC:
        RETURN_ERROR_IF(!has_factor, err, missing, "rope scaling '%s' has no factor", name);
        break;
    case POSENC_ROPE_YARN:
    case POSENC_ROPE_LLAMA3:
        if (!has_orig || p->original_max_position <= 0) {
            /* HF's yarn falls back to max_position_embeddings; llama3 requires the key */
            RETURN_ERROR_IF(p->scaling == POSENC_ROPE_LLAMA3 || max_pos <= 0, err, POSENC_ERR_INVALID_ARGUMENT,
                            "rope scaling '%s' needs original_max_position_embeddings%s", name,
                            p->scaling == POSENC_ROPE_YARN ? " (or max_position_embeddings to stand for it)" : "");
            p->original_max_position = max_pos;
            w |= POSENC_CONFIG_WARN_NO_ORIGINAL;
        }
        if (!has_factor) {
            RETURN_ERROR_IF(max_pos <= 0, err, missing,
                            "rope scaling '%s' needs a factor (or max_position_embeddings to derive it as "
                            "max_position_embeddings / original_max_position_embeddings)", name);
            p->factor = (double)max_pos / (double)p->original_max_position;
        }
        break;
    case POSENC_ROPE_LONGROPE:
        if (!has_orig || p->original_max_position <= 0) {
            RETURN_ERROR_IF(max_pos <= 0, err, POSENC_ERR_INVALID_ARGUMENT,
                            "rope scaling 'longrope' needs original_max_position_embeddings or "
                            "max_position_embeddings");
            p->original_max_position = max_pos;
            w |= POSENC_CONFIG_WARN_NO_ORIGINAL;
            if (!has_factor) p->factor = 1.0;
        } else if ((!has_factor || (given & POSENC_ROPE_GIVEN_CONTEXT_RATIO)) && max_pos > 0) {
            p->factor = (double)max_pos / (double)p->original_max_position; /* Phi-3: the context ratio */
        } else if (!has_factor) {
            p->factor = 1.0;
        }
        break;
    }
    if (p->scaling != POSENC_ROPE_NONE && p->scaling != POSENC_ROPE_NTK && p->scaling != POSENC_ROPE_DYNAMIC &&
        p->original_max_position > 0 && max_pos > 0 && isfinite(p->factor) &&
        fabs(p->factor * (double)p->original_max_position - (double)max_pos) > 0.5)
        w |= POSENC_CONFIG_WARN_FACTOR_MISMATCH;
    FORWARD_IF_ERROR(posenc_rope_check(p, NULL, err));
    if (warnings) *warnings |= w;
    return posenc_ok_(err);
}

posenc_status config_finish_(posenc_model_config *out, const char *source, posenc_error *err) {
    posenc_rope_params *p = &out->rope;
    if (out->max_position_embeddings <= 0) out->warnings |= POSENC_CONFIG_WARN_NO_MAX_POSITION;
    posenc_error inner = {0};
    if (config_resolve_(p, out->rope_given, &out->warnings, POSENC_ERR_FORMAT, &inner) != POSENC_OK)
        return posenc_fail_(err, inner.status, "%s: %s", source, inner.message);
    int32_t r = 0;
    posenc_rope_check(p, &r, NULL);
    if ((p->head_dim - r) % 2 != 0) out->warnings |= POSENC_CONFIG_WARN_ODD_PASSTHROUGH;
    if (out->attention_head_dim <= 0) out->attention_head_dim = p->head_dim;
    if (out->softmax_head_dim <= 0) out->softmax_head_dim = out->attention_head_dim;
    RETURN_ERROR_IF(out->rotary_offset < 0 || out->rotary_offset + p->head_dim > out->attention_head_dim, err,
                    POSENC_ERR_FORMAT, "%s: the rotated channels %d..%d do not fit a head of %d channels", source,
                    out->rotary_offset, out->rotary_offset + p->head_dim - 1, out->attention_head_dim);
    if (out->layer_type_count > 0) out->layer_types[0].rope = *p;
    for (int32_t i = 1; i < out->layer_type_count; i++) {
        if (posenc_rope_check(&out->layer_types[i].rope, NULL, &inner) != POSENC_OK)
            return posenc_fail_(err, inner.status, "%s: %s layers: %s", source, out->layer_types[i].name,
                                inner.message);
    }
    return posenc_ok_(err);
}

void posenc_model_config_free(posenc_model_config *config) {
    if (!config) return;
    free(config->factor_storage);
    config->factor_storage = NULL;
    config->rope.short_factors = NULL;
    config->rope.long_factors = NULL;
    config->rope.factors_count = 0;
    for (int i = 0; i < POSENC_CONFIG_MAX_LAYER_TYPES; i++) {
        config->layer_types[i].rope.short_factors = NULL;
        config->layer_types[i].rope.long_factors = NULL;
        config->layer_types[i].rope.factors_count = 0;
    }
}
