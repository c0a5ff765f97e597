/* config_family.c: the model-family table. For each HF model_type: what its
 * config class fills in for absent keys (the class defaults), how its
 * runtime rotates (layout, which channels), and its per-layer-type variants.
 * For each GGUF architecture: the rope type llama.cpp gives it and the rules
 * its loader applies. Values read from transformers' configuration_*.py /
 * modeling_*.py and llama.cpp's llama-model.cpp / convert_hf_to_gguf.py;
 * docs/rope.md lists them. */
#include "config_internal.h"

#include <stdint.h>
#include <string.h>

#define I POSENC_LAYOUT_INTERLEAVED
#define H POSENC_LAYOUT_HALF

/* model_type, alias, class stem, layout, theta, max_pos, hidden, heads, head_dim,
 * layers, partial, flags, local_theta, sliding_window, sliding_pattern, table.
 * Rows after mistral3: issue 23 (layer lists, non-RoPE families); each checked
 * against transformers' configuration_/modeling_<model>.py (docs/rope.md). */
static const config_family families[] = {
    {"llama", NULL, "Llama", H, 10000, 2048, 4096, 32, 0, 32, 0, 0, 0, 0, 0, NULL},
    {"mistral", NULL, "Mistral", H, 10000, 131072, 4096, 32, 0, 32, 0, 0, 0, 0, 0, NULL},
    {"mixtral", NULL, "Mixtral", H, 1e6, 131072, 4096, 32, 0, 32, 0, 0, 0, 0, 0, NULL},
    {"qwen2", NULL, "Qwen2", H, 10000, 32768, 4096, 32, 0, 32, 0, 0, 0, 0, 0, NULL},
    {"qwen2_moe", NULL, "Qwen2Moe", H, 10000, 32768, 2048, 16, 0, 24, 0, 0, 0, 0, 0, NULL},
    {"qwen2_vl", "qwen2_vl_text", "Qwen2VL", H, 1e6, 32768, 8192, 64, 0, 80, 0, FAMILY_MROPE, 0, 0, 0, NULL},
    {"qwen2_5_vl", "qwen2_5_vl_text", "Qwen2_5_VL", H, 1e6, 32768, 8192, 64, 0, 80, 0, FAMILY_MROPE, 0, 0, 0, NULL},
    /* Qwen3VLTextConfig / Qwen3VLMoeTextConfig (transformers 4.57 signatures: rope_theta 5e6; head_dim 128 /
     * hidden // heads); interleaved M-RoPE, mrope_section default [24, 20, 20] */
    {"qwen3_vl", "qwen3_vl_text", "Qwen3VL", H, 5e6, 128000, 4096, 32, 128, 32, 0,
     FAMILY_MROPE | FAMILY_MROPE_INTERLEAVED | FAMILY_NESTED_TEXT, 0, 0, 0, NULL},
    {"qwen3_vl_moe", "qwen3_vl_moe_text", "Qwen3VLMoe", H, 5e6, 128000, 2048, 16, 0, 24, 0,
     FAMILY_MROPE | FAMILY_MROPE_INTERLEAVED | FAMILY_NESTED_TEXT, 0, 0, 0, NULL},
    {"qwen3", NULL, "Qwen3", H, 10000, 32768, 4096, 32, 128, 32, 0, 0, 0, 0, 0, NULL},
    {"qwen3_moe", NULL, "Qwen3Moe", H, 10000, 32768, 2048, 32, 0, 24, 0, 0, 0, 0, 0, NULL}, /* no head_dim field */
    {"phi", NULL, "Phi", H, 10000, 2048, 2048, 32, 0, 24, 0.5, FAMILY_READS_PARTIAL, 0, 0, 0, NULL},
    {"phi3", NULL, "Phi3", H, 10000, 4096, 3072, 32, 0, 32, 0, FAMILY_READS_PARTIAL, 0, 0, 0, NULL},
    {"phimoe", NULL, "PhiMoE", H, 1e6, 131072, 4096, 32, 0, 32, 0, FAMILY_PHIMOE_MSCALE, 0, 0, 0, NULL},
    {"gemma", NULL, "Gemma", H, 10000, 8192, 3072, 16, 256, 28, 0, 0, 0, 0, 0, NULL},
    {"gemma2", NULL, "Gemma2", H, 10000, 8192, 2304, 8, 256, 26, 0, FAMILY_GEMMA2_LAYERS, 0, 4096, 2, NULL},
    {"gemma3_text", "gemma3", "Gemma3", H, 1e6, 131072, 2304, 8, 256, 26, 0, FAMILY_GEMMA3_LAYERS, 10000, 4096, 6, NULL},
    {"gpt_neox", NULL, "GPTNeoX", H, 10000, 2048, 6144, 64, 0, 44, 0.25, FAMILY_NEOX_KEYS | FAMILY_READS_PARTIAL, 0, 0, 0, NULL},
    {"gptj", NULL, "GPTJ", I, 10000, 2048, 4096, 16, 0, 28, 0, FAMILY_FIXED_BASE, 0, 0, 0, NULL},
    {"falcon", "RefinedWeb", "Falcon", H, 10000, 2048, 4544, 71, 0, 32, 0, FAMILY_ALIBI_KEY, 0, 0, 0, NULL},
    {"stablelm", NULL, "StableLm", H, 10000, 4096, 2560, 32, 0, 32, 0.25, FAMILY_READS_PARTIAL, 0, 0, 0, NULL},
    {"internlm2", NULL, "InternLM2", H, 10000, 2048, 4096, 32, 0, 32, 0, 0, 0, 0, 0, NULL},
    {"glm", NULL, "Glm", I, 10000, 131072, 4096, 32, 128, 40, 0.5, FAMILY_READS_PARTIAL, 0, 0, 0, NULL},
    {"glm4", NULL, "Glm4", I, 10000, 131072, 4096, 32, 128, 40, 0.5, FAMILY_READS_PARTIAL, 0, 0, 0, NULL},
    {"chatglm", NULL, "ChatGLM", I, 10000, 2048, 4096, 32, 0, 28, 0, FAMILY_CHATGLM, 0, 0, 0, NULL},
    {"deepseek_v2", NULL, "DeepseekV2", I, 10000, 2048, 4096, 32, 0, 32, 0, FAMILY_MLA, 0, 0, 0, NULL},
    {"deepseek_v3", NULL, "DeepseekV3", I, 10000, 4096, 7168, 128, 0, 61, 0, FAMILY_MLA | FAMILY_ROPE_INTERLEAVE_KEY, 0, 0,
     0, NULL},
    /* DeepSeek-V3 copies in transformers 5.18 (MLA, rope_interleave); MiniCPM3: MLA, always the half split */
    {"glm4_moe_lite", NULL, "Glm4MoeLite", I, 10000, 202752, 2048, 20, 0, 47, 0,
     FAMILY_MLA | FAMILY_ROPE_INTERLEAVE_KEY | FAMILY_MLA_DIMS_REQUIRED, 0, 0, 0, NULL},
    {"youtu", NULL, "Youtu", I, 10000, 131072, 2048, 16, 0, 32, 0, FAMILY_MLA | FAMILY_ROPE_INTERLEAVE_KEY, 0, 0, 0, NULL},
    {"axk1", NULL, "AXK1", I, 10000, 32768, 7168, 64, 0, 61, 0, FAMILY_MLA | FAMILY_ROPE_INTERLEAVE_KEY, 0, 0, 0, NULL},
    /* Kimi K2 (remote code: auto_map configuration_deepseek.DeepseekV3Config / modeling_deepseek.py, DeepSeek-V3's
     * own files): DeepSeek-V3's MLA RoPE; defaults = that DeepseekV3Config's (as deepseek_v3's row); checked by
     * tests/oracle/test_oracle_hf.py with transformers 5.18's DeepseekV3 on the Kimi keys */
    {"kimi_k2", NULL, "DeepseekV3", I, 10000, 4096, 7168, 128, 0, 61, 0,
     FAMILY_MLA | FAMILY_ROPE_INTERLEAVE_KEY | FAMILY_REMOTE_ARCH, 0, 0, 0, NULL},
    {"minicpm3", NULL, "MiniCPM3", H, 10000, 32768, 2560, 40, 0, 62, 0, FAMILY_MLA | FAMILY_MLA_DIMS_REQUIRED, 0, 0, 0,
     NULL},
    {"olmo", NULL, "Olmo", H, 10000, 2048, 4096, 32, 0, 32, 0, 0, 0, 0, 0, NULL},
    {"olmo2", NULL, "Olmo2", H, 10000, 2048, 4096, 32, 0, 32, 0, 0, 0, 0, 0, NULL},
    /* OLMo 3 (Olmo3Config, transformers 5.18): layer i slides iff (i + 1) % 4 != 0; rope_parameters per layer
     * type: the scaling goes to full_attention only, sliding_attention is default RoPE at its own rope_theta,
     * else default_theta 500000 (rope_theta is popped for full_attention first, so a 4.x file's rope_theta
     * never reaches the sliding layers) */
    {"olmo3", NULL, "Olmo3", H, 500000, 2048, 4096, 32, 0, 32, 0, FAMILY_GEMMA3_LAYERS, 500000, 4096, 4, NULL},
    {"cohere", NULL, "Cohere", I, 10000, 8192, 8192, 64, 0, 40, 0, 0, 0, 0, 0, NULL},
    {"starcoder2", NULL, "Starcoder2", H, 10000, 4096, 3072, 24, 0, 30, 0, 0, 0, 0, 0, NULL},
    {"granite", NULL, "Granite", H, 10000, 2048, 4096, 32, 0, 32, 0, 0, 0, 0, 0, NULL},
    {"persimmon", NULL, "Persimmon", H, 25000, 16384, 4096, 64, 0, 36, 0.5, FAMILY_READS_PARTIAL, 0, 0, 0, NULL},
    {"mistral3", NULL, "Mistral3", H, 10000, 131072, 4096, 32, 0, 32, 0, 0, 0, 0, 0, NULL},
    /* rope every layer, llama-like: one row each (class defaults from transformers 5.18's configuration_*.py),
     * verified by tests/oracle/test_oracle_hf.py */
    {"seed_oss", NULL, "SeedOss", H, 10000, 524288, 4096, 80, 128, 64, 0, 0, 0, 0, 0, NULL},
    {"granitemoe", NULL, "GraniteMoe", H, 10000, 2048, 4096, 32, 0, 32, 0, 0, 0, 0, 0, NULL},
    {"nemotron", NULL, "Nemotron", H, 10000, 4096, 6144, 48, 128, 32, 0.5, FAMILY_READS_PARTIAL, 0, 0, 0, NULL},
    {"arcee", NULL, "Arcee", H, 10000, 4096, 2560, 32, 80, 32, 0, 0, 0, 0, 0, NULL},
    {"bitnet", NULL, "BitNet", H, 500000, 2048, 2560, 20, 0, 30, 0, 0, 0, 0, 0, NULL},
    {"glm4_moe", NULL, "Glm4Moe", H, 10000, 131072, 4096, 96, 0, 46, 0.5, FAMILY_READS_PARTIAL, 0, 0, 0, NULL},
    {"diffllama", NULL, "DiffLlama", H, 10000, 2048, 2048, 32, 64, 16, 0, 0, 0, 0, 0, NULL},
    /* gpt-oss: sliding (even) and full (odd) layers, one yarn RoPE in both; half split of the head */
    {"gpt_oss", NULL, "GptOss", H, 150000, 131072, 2880, 64, 64, 36, 0, FAMILY_GEMMA2_LAYERS | FAMILY_DEFAULT_SCALING, 0,
     128, 2, NULL},
    {"doge", NULL, "Doge", H, 10000, 2048, 1024, 8, 0, 32, 0, 0, 0, 0, 0, NULL},
    {"flex_olmo", NULL, "FlexOlmo", H, 500000, 4096, 4096, 32, 0, 32, 0, 0, 0, 0, 0, NULL},
    /* Granite-SWA: RoPE base per layer (layer_rope_theta, 0 = NoPE); full iff i % 4 == 0, the others slide (128) */
    {"granite_swa", NULL, "GraniteSWA", H, 10000, 8192, 2560, 20, 0, 24, 0, FAMILY_LAYER_THETA, 0, 128, 4, NULL},
    {"granitemoe_swa", NULL, "GraniteMoeSWA", H, 10000, 2048, 4096, 32, 0, 32, 0, FAMILY_LAYER_THETA, 0, 128, 4, NULL},
    {"granitemoeshared", NULL, "GraniteMoeShared", H, 10000, 2048, 4096, 32, 0, 32, 0, 0, 0, 0, 0, NULL},
    {"jais2", NULL, "Jais2", H, 10000, 8192, 3328, 26, 128, 32, 0, 0, 0, 0, 0, NULL},
    {"nanochat", NULL, "NanoChat", H, 10000, 2048, 768, 6, 0, 12, 0, 0, 0, 0, 0, NULL},
    {"olmoe", NULL, "Olmoe", H, 10000, 4096, 2048, 16, 0, 16, 0, 0, 0, 0, 0, NULL},
    {"vaultgemma", NULL, "VaultGemma", H, 10000, 8192, 2304, 8, 256, 26, 0, FAMILY_GEMMA2_LAYERS, 0, 4096, 2, NULL},
    /* Apertus: llama-like; ApertusConfig's built-in rope dict is llama3 x8 at theta 12e6 */
    {"apertus", NULL, "Apertus", H, 12e6, 65536, 4096, 32, 0, 32, 0, FAMILY_DEFAULT_SCALING, 0, 0, 0, NULL},
    {"aria_text", NULL, "AriaText", H, 10000, 2048, 4096, 32, 128, 32, 0, 0, 0, 0, 0, NULL},
    /* transformers 5.18 families, llama-like rotary class and rotate_half (layer_types, where present, only
     * choose the attention mask: every layer rotates with the one RoPE) */
    {"hyperclovax", NULL, "HyperCLOVAX", H, 10000, 2048, 4096, 32, 128, 32, 0, 0, 0, 0, 0, NULL},
    {"solar_open", NULL, "SolarOpen", H, 1e6, 131072, 4096, 64, 128, 48, 0, FAMILY_READS_PARTIAL, 0, 0, 0, NULL},
    /* MiniMax-M2: legacy rotary_dim -> partial_rotary_factor = rotary_dim / head_dim (MiniMaxM2Config) */
    {"minimax_m2", NULL, "MiniMaxM2", H, 5e6, 196608, 3072, 48, 128, 62, 0, FAMILY_READS_PARTIAL, 0, 0, 0, NULL},
    {"hy_v3", NULL, "HYV3", H, 11158840, 131072, 4096, 64, 128, 80, 0, 0, 0, 0, 0, NULL},
    {"ministral", NULL, "Ministral", H, 10000, 131072, 4096, 32, 0, 32, 0, 0, 0, 0, 0, NULL},
    /* Ministral 3: Mistral's layers plus get_llama_4_attn_scale on the query of every layer; Ministral3Config builds
     * its own yarn x16 dict (with llama_4_scaling_beta 0.1) when none is given: such a file is refused */
    {"ministral3", NULL, "Ministral3", H, 1e6, 262144, 4096, 32, 128, 34, 0,
     FAMILY_DEFAULT_SCALING | FAMILY_LLAMA4_ATTN_SCALE, 0, 0, 0, NULL},
    {"gpt_neox_japanese", NULL, "GPTNeoXJapanese", H, 10000, 2048, 2560, 32, 0, 32, 0, FAMILY_NEOX_KEYS | FAMILY_READS_PARTIAL, 0, 0, 0, NULL},
    /* CSM: the backbone (the top-level keys, llama-like, head_dim default hidden // heads); its depth decoder runs over
     * codebook positions and is read from depth_decoder_config as csm_depth_decoder_model */
    {"csm", NULL, "Csm", H, 500000, 2048, 2048, 32, 0, 16, 0, 0, 0, 0, 0, NULL},
    /* Moshi: the temporal transformer (top-level keys) rotates in every layer (sliding_window is stored on the layers
     * but no mask uses it); the depth decoder (moshi_depth) is built with use_rope=False */
    {"moshi", NULL, "Moshi", H, 10000, 3000, 4096, 32, 0, 32, 0, 0, 0, 0, 0, NULL},
    {"csm_depth_decoder_model", NULL, "CsmDepthDecoder", H, 500000, 33, 1024, 8, 128, 4, 0, 0, 0, 0, 0, NULL},
    /* OpenAI privacy filter: gpt-oss's RoPE (yarn x32 built in, one cos/sin per pair) on interleaved pairs */
    {"openai_privacy_filter", NULL, "OpenAIPrivacyFilter", I, 150000, 131072, 640, 14, 64, 8, 0, FAMILY_DEFAULT_SCALING, 0,
     0, 0, NULL},
    {"dots1", NULL, "Dots1", H, 10000, 2048, 4608, 32, 0, 62, 0, 0, 0, 0, 0, NULL},
    /* HRM-Text: two stacks (L_module, H_module) of num_layers_per_stack layers, rope in every one (head_dim 128) */
    {"hrm_text", NULL, "HrmText", H, 10000, 2048, 1536, 12, 128, 16, 0, 0, 0, 0, 0, NULL},
    /* Evolla: its llama text model (the top-level keys) rotates in every layer's self-attention; the protein adapters
     * (cross-attention to the SaProt encoder's features) carry no positions; default_theta 500000 */
    {"evolla", NULL, "Evolla", H, 500000, 8192, 4096, 32, 0, 32, 0, 0, 0, 0, 0, NULL},
    {"emu3_text_model", NULL, "Emu3Text", H, 1e6, 9216, 4096, 32, 0, 32, 0, 0, 0, 0, 0, NULL},
    /* JetMoE: head = kv_channels (default 128); num_attention_heads = num_key_value_heads * num_experts_per_tok
     * (JetMoeConfig.__post_init__: 16 * 2) */
    {"jetmoe", NULL, "JetMoe", H, 10000, 4096, 2048, 32, 128, 12, 0, FAMILY_KV_CHANNELS_HEAD, 0, 0, 0, NULL},
    /* Dia: encoder then decoder stack, RoPE in every self-attention (defaults: the encoder_config's, 12 layers, head 128;
     * the decoder_config must give the same RoPE keys), cross-attention none */
    {"dia", NULL, "Dia", H, 10000, 1024, 1024, 16, 128, 12, 0, 0, 0, 0, 0, NULL},
    /* T5Gemma: the same two stacks, each Gemma-2-like (layer_types, else sliding at even i, window 4096; one RoPE) */
    {"t5gemma", NULL, "T5Gemma", H, 10000, 8192, 2304, 8, 256, 26, 0, 0, 0, 4096, 2, NULL},
    /* encoders with RoPE in every layer (bidirectional; positions as in a decoder) */
    /* ModernBERT: full layers i % 3 == 0 at global_rope_theta 160000, the others local_rope_theta 10000 with a
     * window of local_attention (128) // 2 (ModernBertConfig, transformers 5.18) */
    {"modernbert", NULL, "ModernBert", H, 160000, 8192, 768, 12, 0, 22, 0, FAMILY_GEMMA3_LAYERS | FAMILY_LEADING_FULL,
     10000, 64, 3, NULL},
    {"eurobert", NULL, "EuroBert", H, 10000, 8192, 768, 12, 64, 12, 0, 0, 0, 0, 0, NULL},
    {"gte", NULL, "Gte", H, 160000, 8192, 768, 12, 0, 12, 0, 0, 0, 0, 0, NULL},
    {"esmc", NULL, "Esmc", H, 10000, 2048, 2560, 40, 64, 80, 0, 0, 0, 0, 0, NULL},
    {"nomic_bert", NULL, "NomicBert", H, 1000, 2048, 768, 12, 64, 12, 0, 0, 0, 0, 0, NULL},
    /* CWM: CwmConfig's built-in rope dict is llama3 x16 at theta 1e6 */
    {"cwm", NULL, "Cwm", H, 1e6, 131072, 6144, 48, 128, 64, 0, FAMILY_DEFAULT_SCALING, 0, 0, 0, NULL},
    /* NoPE layers: SmolLM3 and Llama 4 (no_rope_layers; Llama 4 rotates as complex pairs) */
    {"smollm3", NULL, "SmolLM3", H, 2e6, 32768, 2048, 16, 0, 36, 0, FAMILY_NOPE_LIST, 0, 0, 0, NULL},
    {"llama4_text", "llama4", "Llama4", I, 500000, 131072, 5120, 40, 128, 48, 0, FAMILY_NOPE_LIST | FAMILY_NOPE_TEMPERATURE,
     0, 8192, 0, NULL},
    /* RoPE in the sliding layers only (Cohere2 interleaves like Cohere) */
    {"cohere2", NULL, "Cohere2", I, 10000, 8192, 8192, 64, 0, 40, 0, FAMILY_GLOBAL_NOPE, 0, 4096, 4, NULL},
    /* Cohere2-MoE: Cohere2's sliding-only RoPE, plus the dense-MLP prefix layers (first_k_dense_replace) when
     * prefix_dense_sliding_window_pattern is 1; head_dim a field (128) */
    {"cohere2_moe", NULL, "Cohere2Moe", I, 10000, 8192, 8192, 64, 128, 40, 0, FAMILY_DENSE_PREFIX_ROPE, 0, 4096, 4,
     NULL},
    {"exaone4", NULL, "Exaone4", H, 10000, 2048, 4096, 32, 0, 32, 0, FAMILY_GLOBAL_NOPE | FAMILY_WINDOWLESS_ROPE, 0,
     4096, 4, NULL},
    {"exaone_moe", NULL, "ExaoneMoe", H, 10000, 2048, 4096, 32, 0, 32, 0, FAMILY_GLOBAL_NOPE | FAMILY_WINDOWLESS_ROPE, 0,
     4096, 4, NULL},
    /* Qwen3-Next: gated DeltaNet (linear attention) layers, a full attention layer every 4th */
    {"qwen3_next", NULL, "Qwen3Next", H, 10000, 32768, 2048, 16, 256, 48, 0.25, FAMILY_LINEAR_LAYERS | FAMILY_READS_PARTIAL, 0, 0, 4, NULL},
    /* LFM2: short-convolution layers and full attention layers (full_attn_idxs / layer_types) */
    {"lfm2", NULL, "Lfm2", H, 1e6, 128000, 2560, 32, 0, 32, 0, FAMILY_CONV_LAYERS, 0, 0, 0, NULL},
    /* Llama 3.2 Vision's text model: self-attention layers RoPE, cross-attention layers none */
    {"mllama_text_model", NULL, "MllamaText", H, 500000, 131072, 4096, 32, 0, 40, 0, FAMILY_CROSS_LAYERS, 0, 0, 0, NULL},
    /* Gemma-3n: full layers rope_theta, sliding layers rope_local_base_freq */
    {"gemma3n_text", "gemma3n", "Gemma3n", H, 1e6, 32768, 2048, 8, 256, 35, 0, FAMILY_GEMMA3_LAYERS, 10000, 512, 5, NULL},
    /* interleaved pairs (rotate_every_two / repeat_interleave) */
    {"ernie4_5", NULL, "Ernie4_5", I, 500000, 131072, 1024, 16, 128, 18, 0, 0, 0, 0, 0, NULL},
    {"ernie4_5_moe", NULL, "Ernie4_5_Moe", I, 500000, 131072, 2560, 20, 128, 28, 0, 0, 0, 0, 0, NULL},
    {"helium", NULL, "Helium", I, 100000, 4096, 2560, 20, 128, 24, 0, 0, 0, 0, 0, NULL},
    {"codegen", NULL, "CodeGen", I, 10000, 2048, 4096, 16, 0, 28, 0, FAMILY_FIXED_BASE, 0, 0, 0, NULL},
    /* keys in unusual places */
    {"dbrx", NULL, "Dbrx", H, 10000, 2048, 2048, 16, 0, 24, 0, FAMILY_ATTN_CONFIG_THETA, 0, 0, 0, NULL},
    {"hunyuan_v1_dense", NULL, "HunYuanDenseV1", H, 10000, 2048, 4096, 32, 0, 32, 0, FAMILY_DYNAMIC_ALPHA, 0, 0, 0, NULL},
    {"hunyuan_v1_moe", NULL, "HunYuanMoEV1", H, 10000, 2048, 4096, 32, 0, 32, 0, FAMILY_DYNAMIC_ALPHA, 0, 0, 0, NULL},
    /* no RoPE: ALiBi, Mamba hybrids, learned tables, T5 buckets */
    {"bloom", NULL, "Bloom", H, 0, 0, 64, 8, 0, 2, 0, FAMILY_ALIBI, 0, 0, 0, NULL},
    {"mpt", NULL, "Mpt", H, 0, 2048, 2048, 16, 0, 24, 0, FAMILY_MPT, 0, 0, 0, NULL},
    {"baichuan", NULL, "Baichuan", H, 10000, 4096, 4096, 32, 0, 32, 0, FAMILY_BAICHUAN, 0, 0, 0, NULL},
    {"nemotron_h", NULL, "NemotronH", H, 0, 4096, 4096, 32, 0, 52, 0, FAMILY_PATTERN_NOPE, 0, 0, 0, NULL},
    {"jamba", NULL, "Jamba", H, 0, 262144, 4096, 32, 0, 32, 0, FAMILY_JAMBA, 0, 0, 0, NULL},
    /* Bamba: mamba2 layers, attention (RoPE on half the head: partial 0.5 hard-coded) at attn_layer_indices */
    {"bamba", NULL, "Bamba", H, 10000, 262144, 4096, 32, 0, 32, 0.5, FAMILY_ATTN_INDICES | FAMILY_READS_PARTIAL, 0, 0, 0, NULL},
    /* Falcon-H1: every layer runs mamba2 and attention in parallel; the attention rotates the whole head (llama-like;
     * key_multiplier scales k before the rotation, no position effect) */
    {"falcon_h1", NULL, "FalconH1", H, 10000, 8192, 4096, 32, 0, 32, 0, 0, 0, 0, 0, NULL},
    /* Zamba2: mamba2 layers and hybrid layers (shared attention, RoPE iff use_mem_rope, head 2 * hidden // heads) */
    {"zamba2", NULL, "Zamba2", H, 10000, 4096, 2560, 32, 0, 54, 0, FAMILY_ZAMBA2, 0, 0, 0, NULL},
    /* RecurrentGemma: block_types cycled; attention blocks RoPE on half the head (partial default 0.5), local window */
    {"recurrent_gemma", NULL, "RecurrentGemma", H, 10000, 0, 2560, 10, 0, 26, 0.5, FAMILY_ATTN_INDICES | FAMILY_READS_PARTIAL, 0, 2048, 0,
     NULL},
    {"granitemoehybrid", NULL, "GraniteMoeHybrid", H, 10000, 2048, 4096, 32, 0, 32, 0, FAMILY_MAMBA_HYBRID, 0, 0, 0, NULL},
    {"gpt2", NULL, "GPT2", H, 0, 1024, 768, 12, 0, 12, 0, FAMILY_LEARNED, 0, 0, 0, "transformer.wpe.weight"},
    {"opt", NULL, "OPT", H, 0, 2048, 768, 12, 0, 12, 0, FAMILY_LEARNED | FAMILY_OPT_OFFSET, 0, 0, 0,
     "model.decoder.embed_positions.weight"},
    /* BERT-style encoders: a learned absolute table, positions 0.. (BertEmbeddings' position_ids buffer) */
    {"bert", NULL, "Bert", H, 0, 512, 768, 12, 0, 12, 0, FAMILY_LEARNED, 0, 0, 0, "bert.embeddings.position_embeddings.weight"},
    {"electra", NULL, "Electra", H, 0, 512, 256, 4, 0, 12, 0, FAMILY_LEARNED, 0, 0, 0,
     "electra.embeddings.position_embeddings.weight"},
    /* RoBERTa-style: rows from pad_token_id + 1 */
    {"roberta", NULL, "Roberta", H, 0, 512, 768, 12, 0, 12, 0, FAMILY_LEARNED | FAMILY_PAD_OFFSET, 0, 0, 0,
     "roberta.embeddings.position_embeddings.weight"},
    {"xlm-roberta", NULL, "XLMRoberta", H, 0, 512, 768, 12, 0, 12, 0, FAMILY_LEARNED | FAMILY_PAD_OFFSET, 0, 0, 0,
     "roberta.embeddings.position_embeddings.weight"},
    {"camembert", NULL, "Camembert", H, 0, 512, 768, 12, 0, 12, 0, FAMILY_LEARNED | FAMILY_PAD_OFFSET, 0, 0, 0,
     "roberta.embeddings.position_embeddings.weight"},
    /* more learned absolute tables (transformers 5.18 defaults; the tensor under the checkpoint's base_model_prefix) */
    {"data2vec-text", NULL, "Data2VecText", H, 0, 512, 768, 12, 0, 12, 0, FAMILY_LEARNED | FAMILY_PAD_OFFSET, 0, 0, 0,
     "data2vec_text.embeddings.position_embeddings.weight"},
    {"roberta-prelayernorm", NULL, "RobertaPreLayerNorm", H, 0, 512, 768, 12, 0, 12, 0, FAMILY_LEARNED | FAMILY_PAD_OFFSET, 0, 0, 0,
     "roberta_prelayernorm.embeddings.position_embeddings.weight"},
    {"xlm-roberta-xl", NULL, "XLMRobertaXL", H, 0, 514, 2560, 32, 0, 36, 0, FAMILY_LEARNED | FAMILY_PAD_OFFSET, 0, 0, 0,
     "roberta.embeddings.position_embeddings.weight"},
    {"megatron-bert", NULL, "MegatronBert", H, 0, 512, 1024, 16, 0, 24, 0, FAMILY_LEARNED, 0, 0, 0,
     "bert.embeddings.position_embeddings.weight"},
    {"rembert", NULL, "RemBert", H, 0, 512, 1152, 18, 0, 32, 0, FAMILY_LEARNED, 0, 0, 0,
     "rembert.embeddings.position_embeddings.weight"},
    {"mobilebert", NULL, "MobileBert", H, 0, 512, 512, 4, 0, 24, 0, FAMILY_LEARNED, 0, 0, 0,
     "mobilebert.embeddings.position_embeddings.weight"},
    {"ernie", NULL, "Ernie", H, 0, 512, 768, 12, 0, 12, 0, FAMILY_LEARNED, 0, 0, 0,
     "ernie.embeddings.position_embeddings.weight"},
    {"splinter", NULL, "Splinter", H, 0, 512, 768, 12, 0, 12, 0, FAMILY_LEARNED, 0, 0, 0,
     "splinter.embeddings.position_embeddings.weight"},
    {"distilbert", NULL, "DistilBert", H, 0, 512, 768, 12, 0, 6, 0, FAMILY_LEARNED, 0, 0, 0,
     "distilbert.embeddings.position_embeddings.weight"},
    {"gpt_bigcode", NULL, "GPTBigCode", H, 0, 1024, 768, 12, 0, 12, 0, FAMILY_LEARNED, 0, 0, 0,
     "transformer.wpe.weight"},
    {"biogpt", NULL, "BioGpt", H, 0, 1024, 1024, 16, 0, 24, 0, FAMILY_LEARNED | FAMILY_OPT_OFFSET, 0, 0, 0,
     "biogpt.embed_positions.weight"},
    {"gpt_neo", NULL, "GPTNeo", H, 0, 2048, 2048, 16, 0, 24, 0, FAMILY_LEARNED, 0, 0, 0, "transformer.wpe.weight"},
    {"openai-gpt", NULL, "OpenAIGPT", H, 0, 512, 768, 12, 0, 12, 0, FAMILY_LEARNED, 0, 0, 0,
     "transformer.positions_embed.weight"},
    {"big_bird", NULL, "BigBird", H, 0, 4096, 768, 12, 0, 12, 0, FAMILY_LEARNED, 0, 0, 0,
     "bert.embeddings.position_embeddings.weight"},
    {"convbert", NULL, "ConvBert", H, 0, 512, 768, 12, 0, 12, 0, FAMILY_LEARNED, 0, 0, 0,
     "convbert.embeddings.position_embeddings.weight"},
    {"roc_bert", NULL, "RoCBert", H, 0, 512, 768, 12, 0, 12, 0, FAMILY_LEARNED, 0, 0, 0,
     "roc_bert.embeddings.position_embeddings.weight"},
    {"nystromformer", NULL, "Nystromformer", H, 0, 510, 768, 12, 0, 12, 0, FAMILY_LEARNED | FAMILY_OPT_OFFSET, 0, 0, 0,
     "nystromformer.embeddings.position_embeddings.weight"},
    {"yoso", NULL, "Yoso", H, 0, 4096, 768, 12, 0, 12, 0, FAMILY_LEARNED | FAMILY_OPT_OFFSET, 0, 0, 0,
     "yoso.embeddings.position_embeddings.weight"},
    {"ibert", NULL, "IBert", H, 0, 512, 768, 12, 0, 12, 0, FAMILY_LEARNED | FAMILY_PAD_OFFSET, 0, 0, 0,
     "ibert.embeddings.position_embeddings.weight"},
    {"xlm", NULL, "XLM", H, 0, 512, 2048, 16, 0, 12, 0, FAMILY_LEARNED, 0, 0, 0,
     "transformer.position_embeddings.weight"},
    {"flaubert", NULL, "Flaubert", H, 0, 512, 2048, 16, 0, 12, 0, FAMILY_LEARNED, 0, 0, 0,
     "transformer.position_embeddings.weight"},
    /* Whisper (WhisperConfig, transformers 5.18): encoder sinusoid + decoder learned table (FAMILY_SINUSOID_ENCODER);
     * the table names under WhisperForConditionalGeneration's base_model_prefix "model" */
    {"whisper", NULL, "Whisper", H, 0, 0, 384, 6, 0, 0, 0, FAMILY_SINUSOID_ENCODER, 0, 0, 0,
     "model.decoder.embed_positions.weight"},
    /* Whisper-encoder copies (FAMILY_AUDIO_ENCODER_TABLE: the reader holds the class defaults); the table as the
     * standalone encoder's state dict names it */
    {"qwen2_audio_encoder", NULL, "Qwen2AudioEncoder", H, 0, 0, 0, 0, 0, 0, 0, FAMILY_AUDIO_ENCODER_TABLE, 0,
     0, 0, "embed_positions.weight"},
    {"audioflamingo3_encoder", NULL, "AudioFlamingo3Encoder", H, 0, 0, 0, 0, 0, 0, 0,
     FAMILY_AUDIO_ENCODER_TABLE, 0, 0, 0, "embed_positions.weight"},
    {"voxtral_encoder", NULL, "VoxtralEncoder", H, 0, 0, 0, 0, 0, 0, 0, FAMILY_AUDIO_ENCODER_TABLE, 0, 0, 0,
     "embed_positions.weight"},
    /* wav2vec2-style speech encoders (FAMILY_CONV_POSITION: a learned convolution added to the encoder's input; its
     * keys in config_hf_conv.c's table); hidden / heads / layers class defaults; the module under each
     * *PreTrainedModel's base_model_prefix */
    {"wav2vec2", NULL, "Wav2Vec2", H, 0, 0, 768, 12, 0, 12, 0, FAMILY_CONV_POSITION, 0, 0, 0,
     "wav2vec2.encoder.pos_conv_embed"},
    {"hubert", NULL, "Hubert", H, 0, 0, 768, 12, 0, 12, 0, FAMILY_CONV_POSITION, 0, 0, 0, "hubert.encoder.pos_conv_embed"},
    {"unispeech", NULL, "UniSpeech", H, 0, 0, 768, 12, 0, 12, 0, FAMILY_CONV_POSITION, 0, 0, 0,
     "unispeech.encoder.pos_conv_embed"},
    {"unispeech-sat", NULL, "UniSpeechSat", H, 0, 0, 768, 12, 0, 12, 0, FAMILY_CONV_POSITION, 0, 0, 0,
     "unispeech_sat.encoder.pos_conv_embed"},
    {"data2vec-audio", NULL, "Data2VecAudio", H, 0, 0, 768, 12, 0, 12, 0, FAMILY_CONV_POSITION, 0, 0, 0,
     "data2vec_audio.encoder.pos_conv_embed"},
    {"sew", NULL, "SEW", H, 0, 0, 768, 12, 0, 12, 0, FAMILY_CONV_POSITION, 0, 0, 0, "sew.encoder.pos_conv_embed"},
    {"wavlm", NULL, "WavLM", H, 0, 0, 768, 12, 0, 12, 0, FAMILY_CONV_POSITION, 0, 0, 0, "wavlm.encoder.pos_conv_embed"},
    /* the conformers: read only to refuse by position_embeddings_type (config_hf_conv.c) */
    {"wav2vec2-conformer", NULL, "Wav2Vec2Conformer", H, 0, 0, 768, 12, 0, 12, 0, FAMILY_CONV_POSITION, 0, 0, 0,
     "wav2vec2_conformer.encoder.pos_conv_embed"},
    {"wav2vec2-bert", NULL, "Wav2Vec2Bert", H, 0, 0, 1024, 16, 0, 24, 0, FAMILY_CONV_POSITION, 0, 0, 0, ""},
    {"t5", NULL, "T5", H, 0, 0, 512, 8, 0, 6, 0, FAMILY_T5, 0, 0, 0, NULL},
    /* T5 copies (issue 39; class defaults d_model, num_heads, num_layers from transformers 5.18's configuration_*.py),
     * verified by tests/oracle/test_oracle_hf.py (t5): the same buckets, a table in block 0 of each stack (mT5,
     * Switch Transformers, Pop2Piano) or in every block (UMT5, FAMILY_T5_EVERY_LAYER) */
    {"mt5", NULL, "MT5", H, 0, 0, 512, 6, 0, 8, 0, FAMILY_T5, 0, 0, 0, NULL},
    {"switch_transformers", NULL, "SwitchTransformers", H, 0, 0, 768, 12, 0, 12, 0, FAMILY_T5, 0, 0, 0, NULL},
    {"pop2piano", NULL, "Pop2Piano", H, 0, 0, 512, 8, 0, 6, 0, FAMILY_T5, 0, 0, 0, NULL},
    {"umt5", NULL, "UMT5", H, 0, 0, 512, 6, 0, 8, 0, FAMILY_T5 | FAMILY_T5_EVERY_LAYER, 0, 0, 0, NULL},
    /* DeBERTa v1 and v2/v3 (DebertaConfig / DebertaV2Config, transformers 5.18: relative_attention false,
     * position_biased_input true, max_position_embeddings 512); the absolute table under base_model_prefix "deberta" */
    {"deberta", NULL, "Deberta", H, 0, 512, 768, 12, 0, 12, 0, FAMILY_DEBERTA, 0, 0, 0,
     "deberta.embeddings.position_embeddings.weight"},
    {"deberta-v2", NULL, "DebertaV2", H, 0, 512, 1536, 24, 0, 24, 0, FAMILY_DEBERTA | FAMILY_DEBERTA_V2, 0, 0, 0,
     "deberta.embeddings.position_embeddings.weight"},
    /* single-stack text models whose only positions are a learned absolute table (transformers 5.18 config class
     * defaults; the tensor under the checkpoint's base_model_prefix; rows as each embeddings module looks them up) */
    {"albert", NULL, "Albert", H, 0, 512, 4096, 64, 0, 12, 0, FAMILY_LEARNED, 0, 0, 0,
     "albert.embeddings.position_embeddings.weight"},
    {"bert-generation", NULL, "BertGeneration", H, 0, 512, 1024, 16, 0, 24, 0, FAMILY_LEARNED, 0, 0, 0,
     "bert.embeddings.position_embeddings.weight"},
    {"squeezebert", NULL, "SqueezeBert", H, 0, 512, 768, 12, 0, 12, 0, FAMILY_LEARNED, 0, 0, 0,
     "transformer.embeddings.position_embeddings.weight"},
    /* MraEmbeddings: position_ids = arange + 2 in a table of max_position_embeddings + 2 rows */
    {"mra", NULL, "Mra", H, 0, 512, 768, 12, 0, 12, 0, FAMILY_LEARNED | FAMILY_OPT_OFFSET, 0, 0, 0,
     "mra.embeddings.position_embeddings.weight"},
    /* Longformer, X-MOD: RoBERTa's create_position_ids_from_input_ids (rows from pad_token_id + 1) */
    {"longformer", NULL, "Longformer", H, 0, 512, 768, 12, 0, 12, 0, FAMILY_LEARNED | FAMILY_PAD_OFFSET, 0, 0, 0,
     "longformer.embeddings.position_embeddings.weight"},
    {"xmod", NULL, "Xmod", H, 0, 512, 768, 12, 0, 12, 0, FAMILY_LEARNED | FAMILY_PAD_OFFSET, 0, 0, 0,
     "roberta.embeddings.position_embeddings.weight"},
    /* the text towers of CLIP-style models: embeddings.position_embedding, rows 0.. (position_ids buffer) */
    {"clip_text_model", NULL, "CLIPText", H, 0, 77, 512, 8, 0, 12, 0, FAMILY_LEARNED, 0, 0, 0,
     "text_model.embeddings.position_embedding.weight"},
    {"siglip_text_model", NULL, "SiglipText", H, 0, 64, 768, 12, 0, 12, 0, FAMILY_LEARNED, 0, 0, 0,
     "text_model.embeddings.position_embedding.weight"},
    {"siglip2_text_model", NULL, "Siglip2Text", H, 0, 64, 768, 12, 0, 12, 0, FAMILY_LEARNED, 0, 0, 0,
     "text_model.embeddings.position_embedding.weight"},
    {"xclip_text_model", NULL, "XCLIPText", H, 0, 77, 512, 8, 0, 12, 0, FAMILY_LEARNED, 0, 0, 0,
     "text_model.embeddings.position_embedding.weight"},
    /* ViT-style vision encoders (FAMILY_VISION_PATCH): one learned table over [CLS.., patches]; class defaults
     * hidden / heads / layers from each *Config (image_size, patch_size: config_hf_layers.c's vision table) */
    {"vit", NULL, "ViT", H, 0, 0, 768, 12, 0, 12, 0, FAMILY_VISION_PATCH, 0, 0, 0, "vit.embeddings.position_embeddings"},
    {"deit", NULL, "DeiT", H, 0, 0, 768, 12, 0, 12, 0, FAMILY_VISION_PATCH, 0, 0, 0,
     "deit.embeddings.position_embeddings"},
    {"vit_msn", NULL, "ViTMSN", H, 0, 0, 768, 12, 0, 12, 0, FAMILY_VISION_PATCH, 0, 0, 0,
     "vit.embeddings.position_embeddings"},
    {"ijepa", NULL, "IJepa", H, 0, 0, 768, 12, 0, 12, 0, FAMILY_VISION_PATCH, 0, 0, 0,
     "ijepa.embeddings.position_embeddings"},
    {"dinov2", NULL, "Dinov2", H, 0, 0, 768, 12, 0, 12, 0, FAMILY_VISION_PATCH, 0, 0, 0,
     "dinov2.embeddings.position_embeddings"},
    {"dinov2_with_registers", NULL, "Dinov2WithRegisters", H, 0, 0, 768, 12, 0, 12, 0, FAMILY_VISION_PATCH, 0, 0, 0,
     "dinov2_with_registers.embeddings.position_embeddings"},
    {"clip_vision_model", NULL, "CLIPVision", H, 0, 0, 768, 12, 0, 12, 0, FAMILY_VISION_PATCH, 0, 0, 0,
     "vision_model.embeddings.position_embedding.weight"},
    {"metaclip_2_vision_model", NULL, "MetaClip2Vision", H, 0, 0, 768, 12, 0, 12, 0, FAMILY_VISION_PATCH, 0, 0, 0,
     "vision_model.embeddings.position_embedding.weight"},
    {"xclip_vision_model", NULL, "XCLIPVision", H, 0, 0, 768, 12, 0, 12, 0, FAMILY_VISION_PATCH, 0, 0, 0,
     "vision_model.embeddings.position_embedding.weight"},
    {"owlvit_vision_model", NULL, "OwlViTVision", H, 0, 0, 768, 12, 0, 12, 0, FAMILY_VISION_PATCH, 0, 0, 0,
     "vision_model.embeddings.position_embedding.weight"},
    {"owlv2_vision_model", NULL, "Owlv2Vision", H, 0, 0, 768, 12, 0, 12, 0, FAMILY_VISION_PATCH, 0, 0, 0,
     "vision_model.embeddings.position_embedding.weight"},
    {"siglip_vision_model", NULL, "SiglipVision", H, 0, 0, 768, 12, 0, 12, 0, FAMILY_VISION_PATCH, 0, 0, 0,
     "vision_model.embeddings.position_embedding.weight"},
    {"chinese_clip_vision_model", NULL, "ChineseCLIPVision", H, 0, 0, 768, 12, 0, 12, 0, FAMILY_VISION_PATCH, 0, 0, 0,
     "vision_model.embeddings.position_embedding.weight"},
    {"git_vision_model", NULL, "GitVision", H, 0, 0, 768, 12, 0, 12, 0, FAMILY_VISION_PATCH, 0, 0, 0,
     "vision_model.embeddings.position_embedding.weight"},
    {"kosmos_2_vision_model", NULL, "Kosmos2Vision", H, 0, 0, 1024, 16, 0, 24, 0, FAMILY_VISION_PATCH, 0, 0, 0,
     "vision_model.model.embeddings.position_embedding.weight"},
    {"clipseg_vision_model", NULL, "CLIPSegVision", H, 0, 0, 768, 12, 0, 12, 0, FAMILY_VISION_PATCH, 0, 0, 0,
     "vision_model.embeddings.position_embedding.weight"},
    {"blip_vision_model", NULL, "BlipVision", H, 0, 0, 768, 12, 0, 12, 0, FAMILY_VISION_PATCH, 0, 0, 0,
     "vision_model.embeddings.position_embedding"},
    {"blip_2_vision_model", NULL, "Blip2Vision", H, 0, 0, 1408, 16, 0, 39, 0, FAMILY_VISION_PATCH, 0, 0, 0,
     "vision_model.embeddings.position_embedding"},
    {"instructblip_vision_model", NULL, "InstructBlipVision", H, 0, 0, 1408, 16, 0, 39, 0, FAMILY_VISION_PATCH, 0, 0, 0,
     "vision_model.embeddings.position_embedding"},
    {"instructblipvideo_vision_model", NULL, "InstructBlipVideoVision", H, 0, 0, 1408, 16, 0, 39, 0, FAMILY_VISION_PATCH, 0, 0, 0,
     "vision_model.embeddings.position_embedding"},
    {"aimv2_vision_model", NULL, "Aimv2Vision", H, 0, 0, 1024, 8, 0, 24, 0, FAMILY_VISION_PATCH, 0, 0, 0,
     "vision_model.embeddings.position_embedding.weight"},
    {"tipsv2_vision_model", NULL, "Tipsv2Vision", H, 0, 0, 768, 12, 0, 12, 0, FAMILY_VISION_PATCH, 0, 0, 0,
     "vision_model.embeddings.position_embeddings"},
    /* windowed 2D relative bias (FAMILY_WINDOW_RELATIVE): stages and defaults in config_hf_window.c's table; the
     * tensor is the absolute table use_absolute_embeddings / use_absolute_position_embeddings adds */
    {"swin", NULL, "Swin", H, 0, 0, 96, 3, 0, 12, 0, FAMILY_WINDOW_RELATIVE, 0, 0, 0, "swin.embeddings.position_embeddings"},
    {"donut-swin", NULL, "DonutSwin", H, 0, 0, 96, 3, 0, 12, 0, FAMILY_WINDOW_RELATIVE, 0, 0, 0,
     "embeddings.position_embeddings"},
    {"maskformer-swin", NULL, "MaskFormerSwin", H, 0, 0, 96, 3, 0, 12, 0, FAMILY_WINDOW_RELATIVE, 0, 0, 0,
     "model.embeddings.position_embeddings"},
    {"swinv2", NULL, "Swinv2", H, 0, 0, 96, 3, 0, 12, 0, FAMILY_WINDOW_RELATIVE, 0, 0, 0,
     "swinv2.embeddings.position_embeddings"},
    {"swin2sr", NULL, "Swin2SR", H, 0, 0, 180, 6, 0, 36, 0, FAMILY_WINDOW_RELATIVE, 0, 0, 0,
     "swin2sr.embeddings.position_embeddings"},
    {"beit", NULL, "Beit", H, 0, 0, 768, 12, 0, 12, 0, FAMILY_WINDOW_RELATIVE, 0, 0, 0, "beit.embeddings.position_embeddings"},
    {"data2vec-vision", NULL, "Data2VecVision", H, 0, 0, 768, 12, 0, 12, 0, FAMILY_WINDOW_RELATIVE, 0, 0, 0,
     "data2vec_vision.embeddings.position_embeddings"},
    {"levit", NULL, "Levit", H, 0, 0, 128, 4, 0, 14, 0, FAMILY_WINDOW_RELATIVE, 0, 0, 0, ""},
    /* 2-D RoPE vision encoders (FAMILY_ROPE_2D): class defaults hidden (Qwen2-VL: embed_dim), heads, layers (depth);
     * per-type keys and order in config_hf_rope2d.c */
    {"pixtral", NULL, "PixtralVision", H, 10000, 0, 1024, 16, 0, 24, 0, FAMILY_ROPE_2D, 0, 0, 0, NULL},
    {"qwen2_vl_vision", NULL, "Qwen2VLVision", H, 10000, 0, 1280, 16, 0, 32, 0, FAMILY_ROPE_2D, 0, 0, 0, NULL},
    {"qwen2_5_vl_vision", NULL, "Qwen2_5_VLVision", H, 10000, 0, 3584, 16, 0, 32, 0, FAMILY_ROPE_2D, 0, 0, 0, NULL},
    {"qwen3_vl_vision", NULL, "Qwen3VLVision", H, 10000, 0, 1152, 16, 0, 27, 0, FAMILY_ROPE_2D, 0, 0, 0, NULL},
    {"qwen3_vl_moe_vision", NULL, "Qwen3VLMoeVision", H, 10000, 0, 1152, 16, 0, 27, 0, FAMILY_ROPE_2D, 0, 0, 0, NULL},
    {"glm4v_vision", NULL, "Glm4vVision", H, 10000, 0, 1536, 12, 0, 24, 0, FAMILY_ROPE_2D, 0, 0, 0, NULL},
    {"glm4v_moe_vision", NULL, "Glm4vMoeVision", H, 10000, 0, 1536, 12, 0, 24, 0, FAMILY_ROPE_2D, 0, 0, 0, NULL},
    {"paddleocr_vl_vision", NULL, "PaddleOCRVision", H, 10000, 0, 1152, 16, 0, 27, 0, FAMILY_ROPE_2D, 0, 0, 0, NULL},
    {"video_llama_3_vision", NULL, "VideoLlama3Vision", H, 10000, 0, 768, 12, 0, 12, 0, FAMILY_ROPE_2D, 0, 0, 0, NULL},
    /* "mlcd" is MLCDVisionConfig's other spelling (CONFIG_MAPPING_NAMES lists both) */
    {"mlcd_vision_model", "mlcd", "MLCDVision", H, 10000, 0, 1664, 16, 0, 48, 0, FAMILY_ROPE_2D, 0, 0, 0, NULL},
    {"dinov3_vit", NULL, "DINOv3ViT", H, 100, 0, 384, 6, 0, 12, 0, FAMILY_ROPE_2D, 0, 0, 0, NULL},
    /* DETR-style detection / segmentation models (FAMILY_SINE_2D): DETR's fixed 2D sine table over the feature map,
     * the parameters per type in config_hf_sine2d.c */
    {"detr", NULL, "Detr", H, 0, 0, 256, 8, 0, 0, 0, FAMILY_SINE_2D, 0, 0, 0, NULL},
    {"conditional_detr", NULL, "ConditionalDetr", H, 0, 0, 256, 8, 0, 0, 0, FAMILY_SINE_2D, 0, 0, 0, NULL},
    {"table-transformer", NULL, "TableTransformer", H, 0, 0, 256, 8, 0, 0, 0, FAMILY_SINE_2D, 0, 0, 0, NULL},
    {"dab-detr", NULL, "DabDetr", H, 0, 0, 256, 8, 0, 0, 0, FAMILY_SINE_2D, 0, 0, 0, NULL},
    {"deformable_detr", NULL, "DeformableDetr", H, 0, 0, 256, 8, 0, 0, 0, FAMILY_SINE_2D, 0, 0, 0, NULL},
    {"maskformer", NULL, "MaskFormer", H, 0, 0, 256, 8, 0, 0, 0, FAMILY_SINE_2D, 0, 0, 0, NULL},
    {"mask2former", NULL, "Mask2Former", H, 0, 0, 256, 8, 0, 0, 0, FAMILY_SINE_2D, 0, 0, 0, NULL},
    {"rt_detr", NULL, "RTDetr", H, 0, 0, 256, 8, 0, 0, 0, FAMILY_SINE_2D, 0, 0, 0, NULL},
    {"rt_detr_v2", NULL, "RTDetrV2", H, 0, 0, 256, 8, 0, 0, 0, FAMILY_SINE_2D, 0, 0, 0, NULL},
    {"d_fine", NULL, "DFine", H, 0, 0, 256, 8, 0, 0, 0, FAMILY_SINE_2D, 0, 0, 0, NULL},
    {"imagegpt", NULL, "ImageGPT", H, 0, 1024, 512, 8, 0, 24, 0, FAMILY_LEARNED, 0, 0, 0, "transformer.wpe.weight"},
    /* GPT-SW3: transformers maps the model type to GPT2Config and GPT-2's code */
    {"gpt-sw3", NULL, "GPT2", H, 0, 1024, 768, 12, 0, 12, 0, FAMILY_LEARNED, 0, 0, 0, "transformer.wpe.weight"},
    /* FNet: Fourier mixing layers, no attention heads; the table is added before the first */
    {"fnet", NULL, "FNet", H, 0, 512, 768, 0, 0, 12, 0, FAMILY_LEARNED, 0, 0, 0,
     "fnet.embeddings.position_embeddings.weight"},
    /* ESM: ESM-1b's learned table (rows from pad_token_id + 1) or ESM-2's RoPE, as position_embedding_type says */
    {"esm", NULL, "Esm", H, 10000, 1026, 768, 12, 0, 12, 0, FAMILY_ESM_POSITION_TYPE | FAMILY_PAD_OFFSET, 0, 0, 0,
     "esm.embeddings.position_embeddings.weight"},
    /* RoFormer: interleaved pairs of the whole head, base 10000 (its float64 sinusoid table), positions from 0 */
    {"roformer", NULL, "RoFormer", I, 10000, 1536, 768, 12, 0, 12, 0, FAMILY_ROFORMER, 0, 0, 0, NULL},
    /* text decoders and encoders with RoPE read through an existing layer rule (class defaults from transformers
     * 5.18's configuration_*.py; each verified by tests/oracle/test_oracle_hf.py) */
    /* Chameleon: llama-like (rotate_half); the VQ image tokens are ordinary sequence positions */
    {"chameleon", NULL, "Chameleon", H, 10000, 4096, 4096, 32, 0, 32, 0, 0, 0, 0, 0, NULL},
    /* LFM2-MoE: LFM2's conv / full_attention layers, layer_types required */
    {"lfm2_moe", NULL, "Lfm2Moe", H, 1e6, 128000, 2048, 32, 0, 32, 0, FAMILY_CONV_LAYERS | FAMILY_TYPES_REQUIRED, 0, 0, 0,
     NULL},
    /* OLMo-Hybrid: gated DeltaNet layers none, full attention layers (every 4th) RoPE */
    {"olmo_hybrid", NULL, "OlmoHybrid", H, 10000, 65536, 3840, 30, 0, 32, 0, FAMILY_LINEAR_LAYERS | FAMILY_OLMO_HYBRID, 0,
     0, 4, NULL},
    /* ModernBERT's causal decoder: ModernBERT's layer rule, bases and window (ModernBertDecoderConfig) */
    {"modernbert-decoder", NULL, "ModernBertDecoder", H, 160000, 8192, 768, 12, 0, 22, 0,
     FAMILY_GEMMA3_LAYERS | FAMILY_LEADING_FULL, 10000, 64, 3, NULL},
    /* Jina embeddings v3: an XLM-R encoder without a position table, RoPE at default_theta 20000 in every layer */
    {"jina_embeddings_v3", NULL, "JinaEmbeddingsV3", H, 20000, 8194, 1024, 16, 0, 24, 0, 0, 0, 0, 0, NULL},
    /* per-layer-type rope dicts, each with its own rope_theta and partial_rotary_factor (FAMILY_TYPE_ROPE_DICTS);
     * theta / local_theta: the class's built-in dicts (said in docs, not used: a file without them is refused) */
    {"mellum", NULL, "Mellum", H, 500000, 131072, 2304, 32, 128, 28, 0, FAMILY_GEMMA3_LAYERS | FAMILY_TYPE_ROPE_DICTS | FAMILY_READS_PARTIAL,
     10000, 1024, 0, NULL},
    {"laguna", NULL, "Laguna", H, 500000, 131072, 2048, 48, 128, 40, 0, FAMILY_GEMMA3_LAYERS | FAMILY_TYPE_ROPE_DICTS | FAMILY_READS_PARTIAL,
     10000, 512, 0, NULL},
    /* MiMo-V2-Flash: partial .get default 0.334 (64 of the 192 q/k channels); layer_types required (its default
     * rule: full at layer 0 and every 6th) */
    {"mimo_v2_flash", NULL, "MiMoV2Flash", H, 5e6, 131072, 4096, 64, 192, 48, 0.334,
     FAMILY_GEMMA3_LAYERS | FAMILY_TYPE_ROPE_DICTS | FAMILY_TYPES_REQUIRED | FAMILY_READS_PARTIAL, 10000, 128, 0, NULL},
    /* AFMoE: RoPE in the sliding (local) layers only, the full layers (every global_attn_every_n_layers-th) NoPE */
    {"afmoe", NULL, "Afmoe", H, 10000, 16384, 2048, 16, 128, 32, 0, FAMILY_GLOBAL_NOPE | FAMILY_KIND_ROPE, 0, 1024, 4,
     NULL},
    /* encoder-decoder models with a learned table in each stack (FAMILY_LEARNED_ENC_DEC; class defaults from
     * transformers 5.18's configuration_*.py: d_model, max_position_embeddings, encoder_layers), verified by
     * tests/oracle/test_oracle_hf.py */
    {"bart", NULL, "Bart", H, 0, 1024, 1024, 16, 0, 12, 0, FAMILY_LEARNED_ENC_DEC | FAMILY_OPT_OFFSET, 0, 0, 0,
     "model.encoder.embed_positions.weight"},
    {"mbart", NULL, "MBart", H, 0, 1024, 1024, 16, 0, 12, 0, FAMILY_LEARNED_ENC_DEC | FAMILY_OPT_OFFSET, 0, 0, 0,
     "model.encoder.embed_positions.weight"},
    {"mvp", NULL, "Mvp", H, 0, 1024, 1024, 16, 0, 12, 0, FAMILY_LEARNED_ENC_DEC | FAMILY_OPT_OFFSET, 0, 0, 0,
     "model.encoder.embed_positions.weight"},
    {"plbart", NULL, "PLBart", H, 0, 1024, 768, 12, 0, 6, 0, FAMILY_LEARNED_ENC_DEC | FAMILY_OPT_OFFSET, 0, 0, 0,
     "model.encoder.embed_positions.weight"},
    {"blenderbot", NULL, "Blenderbot", H, 0, 128, 2560, 32, 0, 2, 0, FAMILY_LEARNED_ENC_DEC, 0, 0, 0,
     "model.encoder.embed_positions.weight"},
    {"blenderbot-small", NULL, "BlenderbotSmall", H, 0, 512, 512, 16, 0, 8, 0, FAMILY_LEARNED_ENC_DEC, 0, 0, 0,
     "model.encoder.embed_positions.weight"},
    /* M-RoPE text models, read alone or as their composite's text_config (transformers 5.18 configuration_ /
     * modeling_<model>.py; tests/oracle/test_oracle_hf.py runs each with 3-axis ids). GLM-4.1V and GLM-OCR
     * rotate interleaved pairs (repeat_interleave + rotate_half_llm), the others half split; contiguous
     * sections m[i % 3] except Qwen3.5 (Qwen3-VL's interleave); Qwen3.5: linear_attention layers carry none */
    {"glm4v", "glm4v_text", "Glm4v", I, 10000, 32768, 4096, 32, 0, 40, 0, FAMILY_MROPE | FAMILY_NESTED_TEXT | FAMILY_READS_PARTIAL, 0, 0, 0,
     NULL},
    {"glm4v_moe", "glm4v_moe_text", "Glm4vMoe", H, 10000, 65536, 4096, 96, 0, 46, 0.5, FAMILY_MROPE | FAMILY_NESTED_TEXT | FAMILY_READS_PARTIAL,
     0, 0, 0, NULL},
    {"glm_ocr", "glm_ocr_text", "GlmOcr", I, 10000, 131072, 1024, 16, 0, 16, 0, FAMILY_MROPE | FAMILY_NESTED_TEXT | FAMILY_READS_PARTIAL, 0, 0,
     0, NULL},
    {"glm_image", "glm_image_text", "GlmImage", H, 10000, 131072, 4096, 32, 0, 40, 0, FAMILY_MROPE | FAMILY_NESTED_TEXT | FAMILY_READS_PARTIAL,
     0, 0, 0, NULL},
    {"paddleocr_vl", "paddleocr_vl_text", "PaddleOCRVL", H, 500000, 131072, 1024, 16, 128, 18, 0,
     FAMILY_MROPE | FAMILY_NESTED_TEXT, 0, 0, 0, NULL},
    {"qwen3_5", "qwen3_5_text", "Qwen3_5", H, 10000, 32768, 4096, 16, 256, 32, 0.25,
     FAMILY_MROPE | FAMILY_MROPE_INTERLEAVED | FAMILY_LINEAR_LAYERS | FAMILY_NESTED_TEXT | FAMILY_READS_PARTIAL, 0, 0, 4, NULL},
    {"qwen3_5_moe", "qwen3_5_moe_text", "Qwen3_5Moe", H, 10000, 32768, 2048, 16, 256, 40, 0.25,
     FAMILY_MROPE | FAMILY_MROPE_INTERLEAVED | FAMILY_LINEAR_LAYERS | FAMILY_NESTED_TEXT | FAMILY_READS_PARTIAL, 0, 0, 4, NULL},
    /* fixed sinusoid tables (issue 39; class defaults from transformers 5.18's configuration_*.py), verified by
     * tests/oracle/test_oracle_hf.py: Marian / Pegasus a float64 table per stack (FAMILY_SINUSOID_ENC_DEC);
     * fairseq-style float32 tables, rows from pad_token_id + 1 (FAMILY_SINUSOID_FAIRSEQ: non-persistent buffers,
     * `weights`); XGLM one stack, rows + 2 */
    {"marian", NULL, "Marian", H, 0, 1024, 1024, 16, 0, 12, 0, FAMILY_SINUSOID_ENC_DEC, 0, 0, 0,
     "model.encoder.embed_positions.weight"},
    {"pegasus", NULL, "Pegasus", H, 0, 1024, 1024, 16, 0, 12, 0, FAMILY_SINUSOID_ENC_DEC, 0, 0, 0,
     "model.encoder.embed_positions.weight"},
    {"m2m_100", NULL, "M2M100", H, 0, 1024, 1024, 16, 0, 12, 0, FAMILY_SINUSOID_ENC_DEC | FAMILY_SINUSOID_FAIRSEQ, 0,
     0, 0, "model.encoder.embed_positions.weights"},
    {"nllb-moe", NULL, "NllbMoe", H, 0, 1024, 1024, 16, 0, 12, 0, FAMILY_SINUSOID_ENC_DEC | FAMILY_SINUSOID_FAIRSEQ, 0,
     0, 0, "model.encoder.embed_positions.weights"},
    /* Pegasus-X: both stacks compute t2t [sin | cos] rows for their positions (arange + past) in every forward: no
     * tensor, no row limit (max_position_embeddings unused) */
    {"pegasus_x", NULL, "PegasusX", H, 0, 16384, 1024, 16, 0, 16, 0, FAMILY_SINUSOID_ENC_DEC, 0, 0, 0, ""},
    /* FSMT: fairseq's table as M2M-100's, max_position_embeddings + pad_token_id + 1 rows (an nn.Embedding weight);
     * with a cache its make_positions adds the past length to padding tokens too (row pad + past, not the zero row):
     * posenc_model describes the uncached rule */
    {"fsmt", NULL, "FSMT", H, 0, 1024, 1024, 16, 0, 12, 0, FAMILY_SINUSOID_ENC_DEC | FAMILY_SINUSOID_FAIRSEQ, 0, 0, 0,
     "model.encoder.embed_positions.weight"},
    /* Speech2Text: max_source_positions (6000) / max_target_positions (1024) rows, 12 encoder / 6 decoder layers */
    {"speech_to_text", NULL, "Speech2Text", H, 0, 0, 256, 4, 0, 12, 0,
     FAMILY_SINUSOID_ENC_DEC | FAMILY_SINUSOID_FAIRSEQ, 0, 0, 0, "model.encoder.embed_positions.weights"},
    {"xglm", NULL, "XGLM", H, 0, 2048, 1024, 16, 0, 24, 0, FAMILY_SINUSOID_FAIRSEQ | FAMILY_SINUSOID_OFFSET2, 0, 0, 0,
     "model.embed_positions.weights"},
};

const config_family *config_family_find_(const char *model_type) {
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
        if (strcmp(families[i].model_type, model_type) == 0 ||
            (families[i].alias && strcmp(families[i].alias, model_type) == 0))
            return &families[i];
    return NULL;
}

/* Model types refused with the reason posenc cannot read them (the others it does not know are refused by name
 * with their position keys). */
static const config_refusal refusals[] = {
    /* fixed sinusoid tables posenc cannot reproduce (tests/oracle/test_oracle_hf.py sinusoid_refused shows each) */
    {"ctrl", "its float32 table takes w_k = 1 / torch.pow(10000, 2k/d) (a pow then a reciprocal), which neither of posenc's "
             "sinusoid modes forms: precise is off by many ulp at long positions, torch-compat forms w_k another way"},
    {"musicgen", "its decoder's fixed sinusoid table is [cos | sin] halves (MusicgenSinusoidalPositionalEmbedding): no "
                 "posenc layout puts the cosines first"},
    {"musicgen_decoder", "its fixed sinusoid table is [cos | sin] halves (MusicgenSinusoidalPositionalEmbedding): no "
                         "posenc layout puts the cosines first"},
    {"musicgen_melody", "its decoder's fixed sinusoid table is [cos | sin] halves: no posenc layout puts the cosines "
                        "first"},
    /* detection / segmentation models beside FAMILY_SINE_2D's (tests/oracle/test_oracle_hf.py sine2d) */
    {"grounding-dino", "besides its 2D sine image table, the text backbone (text_config: BERT) adds a learned absolute "
                       "table and the encoder's text layers add a 1D sine of the text positions "
                       "(get_text_position_embeddings); posenc's model describes one sine table, not the text paths"},
    {"mm-grounding-dino", "besides its 2D sine image table, the text backbone (text_config: BERT) adds a learned "
                          "absolute table and the encoder's text layers add a 1D sine of the text positions "
                          "(get_text_position_embeddings); posenc's model describes one sine table, not the text "
                          "paths"},
    {"oneformer", "its 2D sine table goes to three modules (pixel decoder, transformer decoder and the query "
                  "transformer's query_dec_layers over the mask features), and its text encoder adds a learned "
                  "positional_embedding; posenc's model does not describe the query transformer or the text path"},
    {"omdet-turbo", "its hybrid encoder's 2D sine table (build_2d_sincos_position_embedding) is laid out x-major "
                    "(rows x * H + y, [sin x | cos x | sin y | cos y], float32), which no posenc sine2d layout gives, "
                    "and its language backbone (text_config: CLIP text) adds a learned table"},
    /* audio + text composites: two position paths (tests/oracle/test_oracle_hf.py audio_encoder_tables) */
    {"qwen2_audio", "two position paths: the audio encoder adds its learned embed_positions table, the qwen2 text "
                    "model rotates with RoPE; posenc reads one of them per config: give audio_config "
                    "(qwen2_audio_encoder) or text_config as its own config.json"},
    {"audioflamingo3", "two position paths: the audio encoder adds its learned embed_positions table, the qwen2 text "
                       "model rotates with RoPE; posenc reads one of them per config: give audio_config "
                       "(audioflamingo3_encoder) or text_config as its own config.json"},
    {"voxtral", "two position paths: the audio encoder adds its learned embed_positions table, the llama text model "
                "rotates with RoPE; posenc reads one of them per config: give audio_config (voxtral_encoder) or "
                "text_config as its own config.json"},
    {"qwen2_5_omni_audio_encoder", "its fixed sinusoid table (SinusoidsPositionEmbedding) restarts at row 0 in every "
                                   "chunk of n_window * 2 input frames (chunk_and_pad_features): posenc has no "
                                   "per-chunk row rule"},
    {"musicgen_melody_decoder", "its fixed sinusoid table is [cos | sin] halves: no posenc layout puts the cosines "
                                "first"},
    /* T5 buckets posenc cannot describe alone (tests/oracle/test_oracle_hf.py t5 shows each) */
    {"longt5", "its encoder attends in local blocks of local_radius + 1 tokens (transient-global adds a second bias over "
               "block summaries): posenc's layers cannot describe that"},
    {"udop", "its encoder adds a 2D layout bias from the token bounding boxes (relative_bias_args horizontal / "
             "vertical) to the T5 buckets: posenc has no scheme for box positions"},
    /* modeling_diffusion_gemma.py: DiffusionGemmaTextRotaryEmbedding builds the full_attention layers' inv_freq with
     * rope_type 'proportional' (DiffusionGemmaTextConfig's built-in dict, Gemma 4's), over a per-layer-type head dim */
    {"diffusion_gemma", "its full_attention layers rotate with rope_type 'proportional' (the config class's built-in "
                        "dict, over a per-layer-type head dim), which posenc does not implement"},
    /* modeling_blt.py: BltModel.forward runs its global transformer over patches, position_ids arange(num_patches),
     * where patch_lengths come from the entropy patcher run on the bytes themselves */
    {"blt", "its global transformer rotates at patch positions 0..num_patches-1, and the patches (patch_lengths) come "
            "from an entropy patcher run on the input bytes: positions depend on the content, no posenc field for it"},
};

const config_refusal *config_refusal_find_(const char *model_type) {
    for (size_t i = 0; i < sizeof refusals / sizeof refusals[0]; i++)
        if (refusals[i].model_type && strcmp(refusals[i].model_type, model_type) == 0) return &refusals[i];
    return NULL;
}

/* Composite model types read through their text_config. PaliGemma: modeling_paligemma.py builds
 * position_ids = arange(seq) + past + 1 ("Paligemma positions are 1-indexed"). */
static const config_wrapper wrappers[] = {
    {"paligemma", 1},
    /* Mllama: the image enters through cross-attention, not as tokens; MllamaTextModel counts text positions from 0
     * (position_ids = arange(seq) + past_seen_tokens) */
    {"mllama", 0},
    /* Image / audio features inserted as ordinary tokens of the text model's sequence: the text model counts
     * positions 0.. over the merged sequence (measured by the oracle's composite cases, image in the input) */
    {"llava", 0},
    {"vipllava", 0},
    {"video_llava", 0},
    {"aya_vision", 0},
    {"cohere2_vision", 0},
    {"deepseek_vl", 0},
    {"got_ocr2", 0},
    {"internvl", 0},
    {"llava_next", 0},
    {"llava_next_video", 0},
    {"llava_onevision", 0},
    {"lighton_ocr", 0},
    {"idefics3", 0},
    {"smolvlm", 0},
    {"shieldgemma2", 0}, /* builds Gemma3ForConditionalGeneration on its own config */
    /* M-RoPE composites whose text_config is another family's text type */
    {"glm46v", 0},
    /* EXAONE 4.5: Exaone4_5_Model.forward hands its exaone4 text model position_ids = arange(seq) + past over the
     * merged sequence (the 2D RoPE is the vision tower's own) */
    {"exaone4_5", 0},
    /* Emu3: the VQ-VAE's image codes, mapped to BPE ids, replace the image placeholders; Emu3Model hands its
     * emu3_text_model no position_ids, so it counts 0.. over the merged sequence */
    {"emu3", 0},
};

const config_wrapper *config_wrapper_find_(const char *model_type) {
    for (size_t i = 0; i < sizeof wrappers / sizeof wrappers[0]; i++)
        if (strcmp(wrappers[i].model_type, model_type) == 0) return &wrappers[i];
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

const config_family *config_family_generic_(void) {
    static const config_family generic = {"generic", NULL, "", H, 10000, 0, 0, 0, 0, 0, 0, FAMILY_GENERIC, 0, 0, 0,
                                          NULL};
    return &generic;
}

size_t config_family_count_(void) { return sizeof families / sizeof families[0]; }
const config_family *config_family_at_(size_t i) {
    return i < sizeof families / sizeof families[0] ? &families[i] : NULL;
}

/* GGUF: llama.cpp's rope type per architecture (LLAMA_ROPE_TYPE_NORM =
 * interleaved; NEOX / MROPE = half split; the converter row-permuted the
 * NORM models' q/k weights), the loader's special rules and its default sliding window.
 * tests/py/test_gguf_llama_cpp.py checks every row, layer by layer, against llama.cpp's
 * source (tests/fixtures/llama_cpp/rope_per_arch.tsv); an arch added here goes into its READ. */
static const gguf_arch gguf_archs[] = {
    {"llama", I, GGUF_ARCH_FULL_ROT, 0}, {"llama4", I, GGUF_ARCH_NOPE_STEP, 0}, {"deci", I, GGUF_ARCH_FULL_ROT, 0},
    {"baichuan", I, GGUF_ARCH_BAICHUAN, 0},
    {"internlm2", I, 0, 0}, {"minicpm", I, 0, 0}, {"xverse", I, 0, 0}, {"command-r", I, 0, 0},
    {"cohere2", I, GGUF_ARCH_SWA_ROPE_ONLY, 0},
    {"olmo", I, 0, 0}, {"arctic", I, 0, 0}, {"deepseek", I, 0, 0}, {"deepseek2", I, GGUF_ARCH_DEEPSEEK2, 0},
    {"plm", I, 0, 0}, {"chatglm", I, 0, 0}, {"glm4", I, 0, 0}, {"granite", I, GGUF_ARCH_ROPE_SWITCH, 0},
    {"granitemoe", I, GGUF_ARCH_ROPE_SWITCH, 0},
    {"chameleon", I, 0, 0}, {"bailingmoe", I, 0, 0}, {"mistral3", I, GGUF_ARCH_RAW_LOG_MUL, 0},
    {"falcon", H, GGUF_ARCH_FULL_ROT, 0}, {"grok", H, 0, 0}, {"dbrx", H, 0, 0}, {"nomic-bert", H, 0, 0},
    {"stablelm", H, 0, 0}, {"bitnet", H, 0, 0}, {"qwen", H, 0, 0}, {"qwen2", H, 0, 0}, {"qwen2moe", H, 0, 0},
    {"qwen2vl", H, GGUF_ARCH_MROPE, 0}, {"qwen25vl", H, GGUF_ARCH_MROPE, 0}, {"qwen3", H, 0, 0},
    {"qwen3moe", H, 0, 0},
    {"qwen3vl", H, GGUF_ARCH_MROPE | GGUF_ARCH_IMROPE, 0}, {"qwen3vlmoe", H, GGUF_ARCH_MROPE | GGUF_ARCH_IMROPE, 0},
    {"olmo2", H, GGUF_ARCH_OLMO2_SWA, 0}, {"olmoe", H, 0, 0}, {"phi2", H, 0, 0}, {"phi3", H, 0, 0},
    {"phimoe", H, 0, 0}, {"plamo", H, 0, 0},
    {"gemma", H, 0, 0}, {"gemma2", H, GGUF_ARCH_GEMMA2, 4096}, {"gemma3", H, GGUF_ARCH_GEMMA3, 0},
    {"starcoder2", H, 0, 0},
    {"openelm", H, 0, 0}, {"gptneox", H, 0, 0}, {"codeshell", H, 0, 0}, {"orion", H, 0, 0}, {"nemotron", H, 0, 0},
    {"exaone", H, 0, 0}, {"minicpm3", H, 0, 0},
    /* issue 23: llama_model_rope_type NORM, NoPE every 4th layer (n_no_rope_layer_step = 4) */
    {"smollm3", I, GGUF_ARCH_NOPE_STEP, 0}, {"ernie4_5", I, 0, 0}, {"ernie4_5-moe", I, 0, 0},
    /* LLAMA_ROPE_TYPE_NONE, ALiBi in the graph (f_max_alibi_bias) */
    {"bloom", H, GGUF_ARCH_ALIBI, 0}, {"mpt", H, GGUF_ARCH_ALIBI, 0}};

const gguf_arch *config_gguf_arch_find_(const char *name) {
    for (size_t i = 0; i < sizeof gguf_archs / sizeof gguf_archs[0]; i++)
        if (strcmp(gguf_archs[i].name, name) == 0) return &gguf_archs[i];
    return NULL;
}

const char *posenc_config_family_name(posenc_config_format format, size_t i) {
    if (format == POSENC_CONFIG_GGUF) return i < sizeof gguf_archs / sizeof gguf_archs[0] ? gguf_archs[i].name : NULL;
    return i < sizeof families / sizeof families[0] ? families[i].model_type : NULL;
}

/* Levenshtein distance of two short names (longer names are cut at 63). */
static size_t edit_distance(const char *a, const char *b) {
    size_t n = strlen(a), m = strlen(b), row[64];
    if (n > 63) n = 63;
    if (m > 63) m = 63;
    for (size_t j = 0; j <= m; j++) row[j] = j;
    for (size_t i = 1; i <= n; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= m; j++) {
            size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            diag = up;
            row[j] = best;
        }
    }
    return row[m];
}

/* Lower-case letters and digits only ("Qwen3-Next" and "qwen3_next" compare equal). */
static void squash(const char *src, char *dst, size_t size) {
    size_t n = 0;
    for (; *src && n + 1 < size; src++) {
        char c = *src;
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) dst[n++] = c;
    }
    dst[n] = '\0';
}

/* Distance with a shared stem counted as near: "qwen3_next_v2" is 1 from "qwen3_next". */
static size_t family_distance(const char *name, const char *candidate) {
    char a[64], b[64];
    squash(name, a, sizeof a);
    squash(candidate, b, sizeof b);
    size_t d = edit_distance(a, b), la = strlen(a), lb = strlen(b);
    if (lb >= 3 && la >= lb && strncmp(a, b, lb) == 0 && d > 1) d = 1 + (la - lb) / 4;
    if (la >= 3 && lb >= la && strncmp(a, b, la) == 0 && d > 1) d = 1 + (lb - la) / 4;
    return d;
}

void config_closest_families_(const char *name, bool gguf, char *buf, size_t size) {
    enum { BEST = 3 };
    const char *best[BEST] = {NULL, NULL, NULL};
    size_t best_d[BEST] = {SIZE_MAX, SIZE_MAX, SIZE_MAX};
    buf[0] = '\0';
    const char *cand;
    for (size_t i = 0; (cand = posenc_config_family_name(gguf ? POSENC_CONFIG_GGUF : POSENC_CONFIG_HF_JSON, i)); i++) {
        size_t d = family_distance(name, cand);
        if (!gguf && families[i].alias) {
            size_t da = family_distance(name, families[i].alias);
            if (da < d) d = da;
        }
        for (int k = 0; k < BEST; k++)
            if (d < best_d[k]) {
                for (int j = BEST - 1; j > k; j--) best[j] = best[j - 1], best_d[j] = best_d[j - 1];
                best[k] = cand;
                best_d[k] = d;
                break;
            }
    }
    for (int k = 0; k < BEST && best[k]; k++) config_note_(buf, size, best[k]);
}
