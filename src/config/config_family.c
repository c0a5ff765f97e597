/* config_family.c: the model-family table. For each HF model_type: what its
 * config class fills in for absent keys (the class defaults), how its
 * runtime rotates (layout, which channels), and its per-layer-type variants.
 * For each GGUF architecture: the rope type llama.cpp gives it and the rules
 * its loader applies. Values read from transformers' configuration_*.py /
 * modeling_*.py and llama.cpp's llama-model.cpp / convert_hf_to_gguf.py;
 * docs/rope.md lists them. */
#include "config_internal.h"

#include <string.h>

#define I POSENC_LAYOUT_INTERLEAVED
#define H POSENC_LAYOUT_HALF

/* model_type, alias, class stem, layout, theta, max_pos, hidden, heads, head_dim,
 * layers, partial, flags, local_theta, sliding_window, sliding_pattern */
static const config_family families[] = {
    {"llama", NULL, "Llama", H, 10000, 2048, 4096, 32, 0, 32, 0, 0, 0, 0, 0},
    {"mistral", NULL, "Mistral", H, 10000, 131072, 4096, 32, 0, 32, 0, 0, 0, 0, 0},
    {"mixtral", NULL, "Mixtral", H, 1e6, 131072, 4096, 32, 0, 32, 0, 0, 0, 0, 0},
    {"qwen2", NULL, "Qwen2", H, 10000, 32768, 4096, 32, 0, 32, 0, 0, 0, 0, 0},
    {"qwen2_moe", NULL, "Qwen2Moe", H, 10000, 32768, 2048, 16, 0, 24, 0, 0, 0, 0, 0},
    {"qwen2_vl", "qwen2_vl_text", "Qwen2VL", H, 1e6, 32768, 8192, 64, 0, 80, 0, FAMILY_MROPE, 0, 0, 0},
    {"qwen2_5_vl", "qwen2_5_vl_text", "Qwen2_5_VL", H, 1e6, 32768, 8192, 64, 0, 80, 0, FAMILY_MROPE, 0, 0, 0},
    {"qwen3", NULL, "Qwen3", H, 10000, 32768, 4096, 32, 128, 32, 0, 0, 0, 0, 0},
    {"qwen3_moe", NULL, "Qwen3Moe", H, 10000, 32768, 2048, 32, 128, 24, 0, 0, 0, 0, 0},
    {"phi", NULL, "Phi", H, 10000, 2048, 2048, 32, 0, 24, 0.5, 0, 0, 0, 0},
    {"phi3", NULL, "Phi3", H, 10000, 4096, 3072, 32, 0, 32, 0, 0, 0, 0, 0},
    {"phimoe", NULL, "PhiMoE", H, 1e6, 131072, 4096, 32, 0, 32, 0, FAMILY_PHIMOE_MSCALE, 0, 0, 0},
    {"gemma", NULL, "Gemma", H, 10000, 8192, 3072, 16, 256, 28, 0, 0, 0, 0, 0},
    {"gemma2", NULL, "Gemma2", H, 10000, 8192, 2304, 8, 256, 26, 0, FAMILY_GEMMA2_LAYERS, 0, 4096, 2},
    {"gemma3_text", "gemma3", "Gemma3", H, 1e6, 131072, 2304, 8, 256, 26, 0, FAMILY_GEMMA3_LAYERS, 10000, 4096, 6},
    {"gpt_neox", NULL, "GPTNeoX", H, 10000, 2048, 6144, 64, 0, 44, 0.25, 0, 0, 0, 0},
    {"gptj", NULL, "GPTJ", I, 10000, 2048, 4096, 16, 0, 28, 0, FAMILY_FIXED_BASE, 0, 0, 0},
    {"falcon", "RefinedWeb", "Falcon", H, 10000, 2048, 4544, 71, 0, 32, 0, FAMILY_ALIBI_KEY, 0, 0, 0},
    {"stablelm", NULL, "StableLm", H, 10000, 4096, 2560, 32, 0, 32, 0.25, 0, 0, 0, 0},
    {"internlm2", NULL, "InternLM2", H, 10000, 2048, 4096, 32, 0, 32, 0, 0, 0, 0, 0},
    {"glm", NULL, "Glm", I, 10000, 131072, 4096, 32, 128, 40, 0.5, 0, 0, 0, 0},
    {"glm4", NULL, "Glm4", I, 10000, 131072, 4096, 32, 128, 40, 0.5, 0, 0, 0, 0},
    {"chatglm", NULL, "ChatGLM", I, 10000, 2048, 4096, 32, 0, 28, 0, FAMILY_CHATGLM, 0, 0, 0},
    {"deepseek_v2", NULL, "DeepseekV2", I, 10000, 2048, 5120, 128, 0, 60, 0, FAMILY_MLA, 0, 0, 0},
    {"deepseek_v3", NULL, "DeepseekV3", I, 10000, 4096, 7168, 128, 0, 61, 0, FAMILY_MLA, 0, 0, 0},
    {"olmo", NULL, "Olmo", H, 10000, 2048, 4096, 32, 0, 32, 0, 0, 0, 0, 0},
    {"olmo2", NULL, "Olmo2", H, 10000, 2048, 4096, 32, 0, 32, 0, 0, 0, 0, 0},
    {"cohere", NULL, "Cohere", I, 10000, 8192, 8192, 64, 0, 40, 0, 0, 0, 0, 0},
    {"starcoder2", NULL, "Starcoder2", H, 10000, 4096, 3072, 24, 0, 30, 0, 0, 0, 0, 0},
    {"granite", NULL, "Granite", H, 10000, 2048, 4096, 32, 0, 32, 0, 0, 0, 0, 0},
    {"persimmon", NULL, "Persimmon", H, 25000, 16384, 4096, 64, 0, 36, 0.5, 0, 0, 0, 0},
    {"mistral3", NULL, "Mistral3", H, 10000, 131072, 4096, 32, 0, 32, 0, 0, 0, 0, 0},
};

const config_family *config_family_find_(const char *model_type) {
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
        if (strcmp(families[i].model_type, model_type) == 0 ||
            (families[i].alias && strcmp(families[i].alias, model_type) == 0))
            return &families[i];
    return NULL;
}

/* "LlamaForCausalLM" -> llama: the class stem followed by For..., Model or LMHeadModel. */
const config_family *config_family_from_class_(const char *class_name) {
    const config_family *best = NULL;
    size_t best_len = 0;
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++) {
        size_t n = strlen(families[i].class_stem);
        if (strncmp(class_name, families[i].class_stem, n) != 0) continue;
        const char *rest = class_name + n;
        if ((strncmp(rest, "For", 3) == 0 || strcmp(rest, "Model") == 0 || strcmp(rest, "LMHeadModel") == 0) &&
            n > best_len) {
            best = &families[i];
            best_len = n;
        }
    }
    return best;
}

size_t config_family_count_(void) { return sizeof families / sizeof families[0]; }
const config_family *config_family_at_(size_t i) {
    return i < sizeof families / sizeof families[0] ? &families[i] : NULL;
}

/* GGUF: llama.cpp's rope type per architecture (LLAMA_ROPE_TYPE_NORM =
 * interleaved; NEOX / MROPE = half split; the converter row-permuted the
 * NORM models' q/k weights) and the loader's special rules. */
static const gguf_arch gguf_archs[] = {
    {"llama", I, 0}, {"llama4", I, 0}, {"deci", I, 0}, {"baichuan", I, 0}, {"starcoder", I, 0},
    {"internlm2", I, 0}, {"minicpm", I, 0}, {"xverse", I, 0}, {"command-r", I, 0}, {"cohere2", I, 0},
    {"olmo", I, 0}, {"arctic", I, 0}, {"deepseek", I, 0}, {"deepseek2", I, GGUF_ARCH_DEEPSEEK2},
    {"plm", I, 0}, {"chatglm", I, 0}, {"glm4", I, 0}, {"granite", I, 0}, {"granitemoe", I, 0},
    {"chameleon", I, 0}, {"bailingmoe", I, 0}, {"mistral3", I, GGUF_ARCH_RAW_LOG_MUL},
    {"falcon", H, 0}, {"grok", H, 0}, {"dbrx", H, 0}, {"bert", H, 0}, {"nomic-bert", H, 0},
    {"stablelm", H, 0}, {"bitnet", H, 0}, {"qwen", H, 0}, {"qwen2", H, 0}, {"qwen2moe", H, 0},
    {"qwen2vl", H, GGUF_ARCH_MROPE}, {"qwen25vl", H, GGUF_ARCH_MROPE}, {"qwen3", H, 0}, {"qwen3moe", H, 0},
    {"olmo2", H, 0}, {"olmoe", H, 0}, {"phi2", H, 0}, {"phi3", H, 0}, {"phimoe", H, 0}, {"plamo", H, 0},
    {"gemma", H, 0}, {"gemma2", H, GGUF_ARCH_GEMMA2}, {"gemma3", H, GGUF_ARCH_GEMMA3}, {"starcoder2", H, 0},
    {"openelm", H, 0}, {"gptneox", H, 0}, {"codeshell", H, 0}, {"orion", H, 0}, {"nemotron", H, 0},
    {"exaone", H, 0}, {"minicpm3", H, 0}};

const gguf_arch *config_gguf_arch_find_(const char *name) {
    for (size_t i = 0; i < sizeof gguf_archs / sizeof gguf_archs[0]; i++)
        if (strcmp(gguf_archs[i].name, name) == 0) return &gguf_archs[i];
    return NULL;
}
