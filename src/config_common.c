/* config_common.c: what the config.json and GGUF readers share: defaults,
 * the architecture -> rotation layout table and the final checks. */
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

/* Architectures whose runtime rotates interleaved pairs (2k, 2k+1). GGUF:
 * llama.cpp's LLAMA_ROPE_TYPE_NORM list (LLaMA-family GGUFs were row-permuted
 * by the converter); HF: model classes that rotate interleaved. */
static const char *const interleaved_archs[] = {
    "llama", "llama4", "deci", "baichuan", "starcoder", "internlm2", "minicpm", "xverse", "command-r", "cohere2",
    "olmo", "arctic", "deepseek", "deepseek2", "plm", "chatglm", "glm4", "granite", "granitemoe", "chameleon",
    "bailingmoe", "mistral3",
    /* HF model_type values */
    "gptj", "codegen", "cohere", "deepseek_v2", "deepseek_v3", NULL};
/* Architectures that rotate half-split pairs (k, k + R/2). */
static const char *const half_archs[] = {
    "falcon", "grok", "dbrx", "bert", "nomic-bert", "stablelm", "bitnet", "qwen", "qwen2", "qwen2moe", "qwen2vl",
    "qwen3", "qwen3moe", "olmo2", "olmoe", "phi2", "phi3", "phimoe", "plamo", "gemma", "gemma2", "gemma3",
    "starcoder2", "openelm", "gptneox", "codeshell", "orion", "nemotron", "exaone", "minicpm3",
    /* HF model_type values (HF Llama & co. use rotate_half) */
    "mistral", "mixtral", "qwen2_moe", "qwen2_vl", "qwen2_5_vl", "qwen3_moe", "phi", "gpt_neox", "persimmon",
    "olmo2", "granite", "stablelm", "starcoder2", "gemma3_text", NULL};

void config_set_layout_(posenc_model_config *out) {
    /* HF "llama" is half split, GGUF "llama" interleaved: the format decides */
    if (strcmp(out->architecture, "llama") == 0 || strcmp(out->architecture, "granite") == 0 ||
        strcmp(out->architecture, "olmo") == 0) {
        out->layout = out->format == POSENC_CONFIG_GGUF ? POSENC_LAYOUT_INTERLEAVED : POSENC_LAYOUT_HALF;
        out->layout_known = 1;
        return;
    }
    for (int i = 0; interleaved_archs[i]; i++)
        if (strcmp(out->architecture, interleaved_archs[i]) == 0) {
            out->layout = POSENC_LAYOUT_INTERLEAVED;
            out->layout_known = 1;
            return;
        }
    for (int i = 0; half_archs[i]; i++)
        if (strcmp(out->architecture, half_archs[i]) == 0) {
            out->layout = POSENC_LAYOUT_HALF;
            out->layout_known = 1;
            return;
        }
    out->layout = POSENC_LAYOUT_HALF;
    out->layout_known = 0;
}

posenc_status config_finish_(posenc_model_config *out, const char *source, posenc_error *err) {
    posenc_rope_params *p = &out->rope;
    config_set_layout_(out);
    if (out->max_position_embeddings <= 0) out->warnings |= POSENC_CONFIG_WARN_NO_MAX_POSITION;
    if (p->scaling != POSENC_ROPE_NONE && p->scaling != POSENC_ROPE_NTK && p->original_max_position > 0 &&
        out->max_position_embeddings > 0 && isfinite(p->factor) &&
        fabs(p->factor * (double)p->original_max_position - (double)out->max_position_embeddings) > 0.5)
        out->warnings |= POSENC_CONFIG_WARN_FACTOR_MISMATCH;
    int32_t r = 0;
    posenc_status st = posenc_rope_check(p, &r, err);
    if (st != POSENC_OK) {
        posenc_error inner = err ? *err : (posenc_error){0};
        return posenc_fail_(err, st, "%s: %s", source, inner.message);
    }
    if ((p->head_dim - r) % 2 != 0) out->warnings |= POSENC_CONFIG_WARN_ODD_PASSTHROUGH;
    if (p->scaling == POSENC_ROPE_YARN && p->mscale_all_dim > 0.0) {
        double m = p->factor <= 1.0 ? 1.0 : 0.1 * p->mscale_all_dim * log(p->factor) + 1.0;
        out->softmax_scale_factor = m * m; /* DeepSeek-V2/V3 MLA softmax scale */
    }
    return posenc_ok_(err);
}

void posenc_config_free(posenc_model_config *config) {
    if (!config) return;
    free(config->factor_storage);
    config->factor_storage = NULL;
    config->rope.short_factors = NULL;
    config->rope.long_factors = NULL;
    config->rope.factors_count = 0;
}
