/* config_internal.h: shared by the config.json and GGUF readers. Not installed. */
#ifndef POSENC_CONFIG_INTERNAL_H
#define POSENC_CONFIG_INTERNAL_H

#include "../common/internal.h"

#include <stdio.h>

/* Family flags */
enum {
    FAMILY_MLA = 1u << 0,            /* DeepSeek MLA: qk_rope_head_dim rotated, last in the head;
                                        softmax uses qk_nope + qk_rope and mscale_all_dim^2 */
    FAMILY_GEMMA2_LAYERS = 1u << 1,  /* alternating sliding/full layers, one RoPE */
    FAMILY_GEMMA3_LAYERS = 1u << 2,  /* every Nth layer full (rope_theta + scaling), others
                                        sliding (rope_local_base_freq, unscaled) */
    FAMILY_CHATGLM = 1u << 3,        /* head = kv_channels, rotates its first half, base x rope_ratio */
    FAMILY_PHIMOE_MSCALE = 1u << 4,  /* longrope magnitude from short_mscale / long_mscale */
    FAMILY_MROPE = 1u << 5,          /* mrope_section in the rope dict */
    FAMILY_FIXED_BASE = 1u << 6,     /* GPT-J: base 10000 hard-coded */
    FAMILY_ALIBI_KEY = 1u << 7,      /* Falcon: "alibi": true means ALiBi, not RoPE */
    FAMILY_NOPE_LIST = 1u << 8,      /* SmolLM3, Llama 4: no_rope_layers[i] (1 = RoPE), default
                                        NoPE where (i+1) % no_rope_layer_interval == 0 */
    FAMILY_GLOBAL_NOPE = 1u << 9,    /* Cohere2 (always), EXAONE 4 (with a sliding window): RoPE in
                                        the sliding layers only, the full layers are NoPE */
    FAMILY_LINEAR_LAYERS = 1u << 10, /* Qwen3-Next: linear_attention layers carry no positions */
    FAMILY_ALIBI = 1u << 11,         /* BLOOM: ALiBi in every layer */
    FAMILY_MPT = 1u << 12,           /* MPT: attn_config.alibi / alibi_bias_max */
    FAMILY_BAICHUAN = 1u << 13,      /* Baichuan: 40 layers (13B) ALiBi, else RoPE */
    FAMILY_JAMBA = 1u << 14,         /* attention every attn_layer_period at attn_layer_offset, NoPE */
    FAMILY_MAMBA_HYBRID = 1u << 15,  /* Granite-4.0-H: layer_types mamba/attention, position_embedding_type */
    FAMILY_LEARNED = 1u << 16,       /* learned absolute table (GPT-2 wpe, OPT embed_positions +2) */
    FAMILY_T5 = 1u << 17,            /* T5 relative buckets */
    FAMILY_ATTN_CONFIG_THETA = 1u << 18, /* DBRX: rope_theta inside attn_config */
    FAMILY_DYNAMIC_ALPHA = 1u << 19, /* Hunyuan: rope dict alpha: base = theta * alpha^(d/(d-2)) */
    FAMILY_OPT_OFFSET = 1u << 20,    /* OPT: learned table rows = position + 2 */
    FAMILY_GENERIC = 1u << 21,       /* no model_type and no class at all: HF's modeling_rope_utils keys
                                        (no class defaults), layout half ASSUMED (said so) */
    FAMILY_MROPE_INTERLEAVED = 1u << 22, /* Qwen3-VL: apply_interleaved_mrope (h at k%3==1 < 3 s1, w at
                                        k%3==2 < 3 s2, t elsewhere), sections default 24/20/20 */
    FAMILY_NESTED_TEXT = 1u << 23,   /* the composite model_type reads text_config only (Qwen3VLConfig:
                                        top-level keys never reach the text model); none: refused */
    FAMILY_DEFAULT_SCALING = 1u << 24, /* the config class fills in a scaled rope dict when none is given
                                        (gpt-oss: yarn x32): a file without one is refused, not read plain */
    FAMILY_WINDOWLESS_ROPE = 1u << 25, /* with FAMILY_GLOBAL_NOPE: sliding_window null rotates every layer
                                        (EXAONE 4 / EXAONE-MoE: `sliding_window is None or is_sliding`) */
    FAMILY_ROPE_INTERLEAVE_KEY = 1u << 26, /* DeepSeek-V3 copies: interleaved iff rope_interleave (default true),
                                        else HF's apply_rotary_pos_emb (half split) */
    FAMILY_MLA_DIMS_REQUIRED = 1u << 27, /* with FAMILY_MLA: the config class's qk_rope / qk_nope defaults are not
                                        DeepSeek's 64 / 128, so a file without both keys is refused, not guessed */
    FAMILY_NEOX_KEYS = 1u << 28, /* GPT-NeoX(-Japanese): the config class maps rotary_emb_base -> rope_theta and
                                        rotary_pct -> partial_rotary_factor; every other class ignores both keys */
    FAMILY_CONV_LAYERS = 1u << 29, /* LFM2: layer_types full_attention / conv, else full_attn_idxs (default: every
                                        layer attends); the short-convolution layers carry no positions */
    FAMILY_CROSS_LAYERS = 1u << 30 /* Mllama text: the layers in cross_attention_layers (default 3, 8, .., 38)
                                        attend to the image without positions; the others self-attend with RoPE */
};
/* Bits 31 and up are macros (an enum constant must fit an int); config_family.flags is 64 bits wide. */
/* with FAMILY_LEARNED: RoBERTa's rows = position + pad_token_id + 1 (fairseq's make_positions; pad_token_id
 * default 1) in a table of max_position_embeddings rows */
#define FAMILY_PAD_OFFSET ((uint64_t)1 << 31)
/* NemotronH: layer kinds (and their count: num_hidden_layers is ignored) from layers_block_type / layer_types /
 * hybrid_override_pattern; no layer, attention included, carries positions */
#define FAMILY_PATTERN_NOPE ((uint64_t)1 << 32)
/* with FAMILY_GEMMA3_LAYERS, ModernBERT's rule: layer i is full iff i % global_attn_every_n_layers == 0 (the
 * first layer of each group, not Gemma's last); full layers global_rope_theta, local layers local_rope_theta and
 * a window of local_attention // 2 (HF's sliding_window property); a 4.x rope_scaling goes to both kinds */
#define FAMILY_LEADING_FULL ((uint64_t)1 << 33)
/* Whisper's two stacks: encoder_layers with a fixed sinusoidal table of max_source_positions rows (T2T frequencies,
 * [sin | cos] halves: modeling_whisper.py's sinusoids()), then decoder_layers with a learned table of
 * max_target_positions rows (position_ids = arange + past: offset 0) */
#define FAMILY_SINUSOID_ENCODER ((uint64_t)1 << 34)
/* ESM (EsmModel, transformers 5.18): position_embedding_type chooses. "absolute" (the class default): a learned
 * table read as FAMILY_LEARNED | FAMILY_PAD_OFFSET, except that pad_token_id has no default (EsmConfig: None);
 * "rotary": RoPE on every layer (rotate_half) at top-level rope_theta, positions arange(seq) from 0, any rope dict
 * ignored by EsmRotaryEmbedding (so refused); any other value: neither, refused by name. A high bit, clear of the
 * next ones other rows take. */
#define FAMILY_ESM_POSITION_TYPE ((uint64_t)1 << 48)
/* RoFormer (RoFormerSelfAttention, transformers 5.18): every self-attention layer rotates interleaved pairs of the
 * whole head (hidden_size // num_attention_heads) with a sinusoid table built in float64 at base 10000, positions
 * from 0. The code reads no rope key: rope_theta, a rope dict, partial_rotary_factor, rotary_dim or head_dim in the
 * file are refused (ignored there), as is rotary_value true (V rotated too: no posenc field for it). */
#define FAMILY_ROFORMER ((uint64_t)1 << 49)
/* with FAMILY_CONV_LAYERS (LFM2-MoE): layer_types is the only source of the layer kinds (Lfm2MoeConfig has no
 * full_attn_idxs and no default: HF cannot build the model without the list), so a file without it is refused */
#define FAMILY_TYPES_REQUIRED ((uint64_t)1 << 35)
/* with FAMILY_LINEAR_LAYERS, OLMo-Hybrid's rule (OlmoHybridConfig.__post_init__): full iff i % 4 == 3 (no
 * full_attention_interval key), the last layer full when that leaves none; a rope dict whose rope_theta is null
 * builds no rotary embedding at all (OlmoHybridModel: the released checkpoints), so every layer is NoPE */
#define FAMILY_OLMO_HYBRID ((uint64_t)1 << 36)
/* with FAMILY_GEMMA3_LAYERS (Mellum, Laguna, MiMo-V2-Flash): rope_parameters holds a full_attention and a
 * sliding_attention dict, each with its own rope_theta and partial_rotary_factor (absent: the family's partial, else
 * 1: the rotary class's .get default); the config class drops top-level rope keys (convert_rope_params_to_dict
 * returns them unread) and builds its own dicts when none are given, so both cases are refused, never guessed;
 * no sliding_window_pattern: layer_types, else every layer full */
#define FAMILY_TYPE_ROPE_DICTS ((uint64_t)1 << 37)
/* with FAMILY_GLOBAL_NOPE (AFMoE): the pattern key is global_attn_every_n_layers (full iff (i + 1) % n == 0); a null
 * sliding_window is refused (HF's sliding layers cannot run without one) */
#define FAMILY_KIND_ROPE ((uint64_t)1 << 38)
/* BART-like encoder-decoder: encoder_layers with the learned table `table` (model.encoder.embed_positions), then
 * decoder_layers with the decoder's own table (model.decoder.embed_positions), each max_position_embeddings
 * (+ 2 with FAMILY_OPT_OFFSET: BartLearnedPositionalEmbedding's offset) rows; position_ids = arange + past in
 * both stacks (no padding-dependent ids) */
#define FAMILY_LEARNED_ENC_DEC ((uint64_t)1 << 39)
/* Ministral 3 (modeling_ministral3.py, transformers 5.18): every layer multiplies the rotated query by
 * get_llama_4_attn_scale(position_ids, rope_parameters.llama_4_scaling_beta,
 * rope_parameters.original_max_position_embeddings) = 1 + beta * ln(1 + floor(pos / original)); both keys must be in
 * the rope dict (HF's .get gives None otherwise and the forward cannot run): refused without them */
#define FAMILY_LLAMA4_ATTN_SCALE ((uint64_t)1 << 40)
/* Llama 4 text (Llama4TextAttention): with attn_temperature_tuning (default true) the NoPE layers multiply the query by
 * log1p(floor((pos + 1) / floor_scale)) * attn_scale + 1 (defaults 8192, 0.1; pos = cache position arange + past) */
#define FAMILY_NOPE_TEMPERATURE ((uint64_t)1 << 41)
/* a remote-code model_type whose published config.json runs DeepSeek-V3's own modeling_deepseek.py (Kimi K2):
 * read as deepseek_v3 only when architectures[0] is "<class_stem>ForCausalLM" (that code's class); else refused
 * naming 'architectures'. That code interleaves always (q/k permute before rotate_half), so a rope_interleave
 * other than true (which transformers' DeepseekV3 would honour) is refused naming the key */
#define FAMILY_REMOTE_ARCH ((uint64_t)1 << 44)
/* Marian, Pegasus (and with FAMILY_SINUSOID_FAIRSEQ: M2M-100, NLLB-MoE, Speech2Text): encoder_layers then
 * decoder_layers, each stack adding its own fixed sinusoid table (model.encoder / model.decoder.embed_positions).
 * Alone: MarianSinusoidalPositionalEmbedding.create_weight: numpy float64 pos / 10000^(2(j//2)/d), [sin | cos]
 * halves rounded once to float32 (vaswani frequencies, half layout, precise mode), rows = arange + past,
 * max_position_embeddings rows; an odd d_model puts ceil(d/2) sines before the cosines at exponent 2k/d, which no
 * posenc odd policy gives: refused by name. */
/* Qwen2-Audio, AudioFlamingo3, Voxtral audio encoders (transformers 5.18): one encoder stack that adds all
 * max_source_positions rows of embed_positions, an nn.Embedding frozen but not built by the code (no sinusoids()
 * call: its values are whatever the checkpoint holds), so read as a learned table; layers/width under either the
 * whisper names (encoder_layers, d_model) or hidden_size / num_hidden_layers (the classes' attribute_map) */
#define FAMILY_AUDIO_ENCODER_TABLE ((uint64_t)1 << 59)
#define FAMILY_SINUSOID_ENC_DEC ((uint64_t)1 << 46)
/* DETR-style detection / segmentation models (issue 39): every encoder / decoder layer reads DETR's fixed 2D sine
 * table (posenc_model.sine2d), its parameters per model type in config_hf_sine2d.c's table */
#define FAMILY_SINE_2D ((uint64_t)1 << 45)
/* fairseq's get_embedding (M2M100SinusoidalPositionalEmbedding and copies): torch float32 exp(k * -ln(10000) /
 * (d/2 - 1)) (t2t frequencies, torch-compat), [sin | cos] plus a zero channel for an odd d (POSENC_ODD_PAD), row
 * padding_idx zeroed, rows = padding_idx + 1 + the count of non-padding tokens before (+ past), a table of
 * max_position_embeddings + 2 rows rebuilt longer when needed; pad_token_id required */
#define FAMILY_SINUSOID_FAIRSEQ ((uint64_t)1 << 47)
/* with FAMILY_SINUSOID_FAIRSEQ, XGLM: one decoder stack (num_layers), rows = position_ids + 2 whatever
 * pad_token_id is (row pad_token_id still zeroed), pad_token_id may be null */
#define FAMILY_SINUSOID_OFFSET2 ((uint64_t)1 << 50)

/* DeBERTa (DebertaConfig / modeling_deberta.py, transformers 5.18): relative_attention (class default false) adds the
 * c2p / p2c terms of pos_att_type ("c2p|p2c" or a list) over rel_embeddings with max_relative_positions (< 1:
 * max_position_embeddings); position_biased_input (default true) adds the learned absolute table `table` at rows
 * 0..; relative false = that table alone (LEARNED); neither = no positions at all, refused */
#define FAMILY_DEBERTA ((uint64_t)1 << 42)
/* with FAMILY_DEBERTA, DeBERTa-v2/v3 (modeling_deberta_v2.py): also position_buckets (getattr default -1: none; v3
 * 256, log buckets), share_att_key and norm_rel_ebd, which v1's code never reads */
#define FAMILY_DEBERTA_V2 ((uint64_t)1 << 43)
/* with FAMILY_T5, UMT5 (modeling_umt5.py, transformers 5.18): every self-attention layer of both stacks builds its
 * own relative_attention_bias table (UMT5LayerSelfAttention: has_relative_attention_bias=True), where T5 builds one
 * in block 0 of each stack and the later blocks reuse the bias it computed */
#define FAMILY_T5_EVERY_LAYER ((uint64_t)1 << 61)
/* ViT-style vision encoders (ViTEmbeddings, CLIPVisionEmbeddings and copies, transformers 5.18): one learned table
 * `table` over [leading tokens (CLS...), patches in raster order], added to the embeddings before layer 0, at the
 * config's integer image_size / patch_size (posenc_model.patch_*); per-type defaults and token layout in
 * config_hf_layers.c's vision table */
#define FAMILY_VISION_PATCH ((uint64_t)1 << 56)
/* The family's rotary class reads partial_rotary_factor (transformers 5.18: its compute_default_rope_parameters
 * takes int(head_dim * factor) and its attention rotates that many channels). Without it a factor other than 1 is
 * refused by name: most rotary classes (Llama's and its copies) never read it and rotate the whole head, their
 * scaled inits (linear, YaRN, ...) do read it and the forward pass then raises, and other runtimes (vLLM) rotate
 * the fraction; tests/oracle/test_oracle_hf.py's partial_factor sweep holds every family to what its run does. */
#define FAMILY_READS_PARTIAL ((uint64_t)1 << 62)
/* Windowed 2D relative position bias (Swin, Donut-Swin, MaskFormer-Swin, SwinV2, Swin2SR, BEiT, Data2Vec-Vision;
 * transformers 5.18): every attention layer adds a learned per-head bias read at the relative offset of two patches
 * in its window (posenc_model.window_*); per-type defaults and rules in config_hf_window.c's table. The config class
 * lists stages (depths, num_heads), so the generic counts are not read. */
#define FAMILY_WINDOW_RELATIVE ((uint64_t)1 << 57)
/* wav2vec2-style speech encoders (transformers 5.18's *PositionalConvEmbedding: wav2vec2, HuBERT, UniSpeech(-SAT),
 * data2vec-audio, SEW, WavLM (+ its gated bucket bias)): a learned grouped Conv1d of the features added to the encoder's input, no position index;
 * every layer CONV_POSITION (posenc_model.conv_pos_*), per-type keys in config_hf_conv.c's table. Wav2Vec2-Conformer
 * and Wav2Vec2-BERT rows are there to be refused by position_embeddings_type (no posenc scheme for any of them) */
#define FAMILY_CONV_POSITION ((uint64_t)1 << 58)
/* Vision encoders with a 2-D RoPE by patch row and column (PixtralVisionRotaryEmbedding, Qwen2VLVisionRotaryEmbedding
 * and copies, transformers 5.18): every layer POSENC_LAYER_ROPE_2D (posenc_model.rope2d); per-type keys, kinds and
 * refusals in config_hf_rope2d.c's table */
#define FAMILY_ROPE_2D ((uint64_t)1 << 60)
/* JetMoE (JetMoeConfig, transformers 5.18): the attention head is kv_channels (attribute_map head_dim -> kv_channels,
 * default 128), not hidden_size // num_attention_heads; the rotary class rotates all of it. A file with both keys:
 * head_dim wins (JetMoeConfig(head_dim=8, kv_channels=16).kv_channels is 8, either order). */
#define FAMILY_KV_CHANNELS_HEAD ((uint64_t)1 << 51)
/* Granite-SWA / GraniteMoE-SWA (transformers 5.18): layer_rope_theta[i] is layer i's RoPE base, 0 = NoPE (the model
 * builds one rotary embedding per distinct non-zero value, each the rope dict with that rope_theta; absent: rope_theta
 * in every layer). posenc's model holds one base per layer kind, so a list with two or more distinct non-zero values
 * is refused naming the key; one value is the base of every rotating layer. Layer kinds: layer_types, else full iff
 * i % sliding_window_pattern (family row: 4) == 0, the sliding ones with sliding_window (the window changes the mask
 * only: every layer with a non-zero theta rotates). */
#define FAMILY_LAYER_THETA ((uint64_t)1 << 52)
/* Cohere2-MoE (Cohere2MoeConfig / Cohere2MoeAttention, transformers 5.18): interleaved RoPE in a layer iff it slides
 * (layer_types; else the first first_k_dense_replace layers full iff (i + 1) % prefix_dense_sliding_window_pattern
 * == 0, the rest full iff (i + 1 - k) % sliding_window_pattern == 0) or it is a dense-MLP layer (mlp_layer_types;
 * else i < first_k_dense_replace) while prefix_dense_sliding_window_pattern is 1 (force_rope); head_dim is a field
 * (default 128); sliding_window null is refused (HF cannot run a sliding layer without one), and so is a rope_scaling
 * key (the config class keeps it beside rope_parameters; the rotary class never applies it). */
#define FAMILY_DENSE_PREFIX_ROPE ((uint64_t)1 << 53)
/* Bamba (BambaConfig / BambaModel, transformers 5.18): attention ("full_attention") in the layers listed in
 * attn_layer_indices, mamba2 ("linear_attention", no positions) elsewhere (absent: every layer mamba); BambaConfig
 * passes partial_rotary_factor 0.5 to its rope standardisation over any top-level value, so only the rope dict's own
 * partial_rotary_factor changes it (a top-level value other than 0.5 is refused: the file and the run disagree).
 * RecurrentGemma (the same bit, its rows told apart by model_type): the kinds are block_types cycled over the layers
 * ((block_types * 100)[:num_hidden_layers], default recurrent, recurrent, attention); "attention" blocks rotate
 * (partial_rotary_factor as given, default 0.5) within attention_window_size (alias sliding_window, default 2048),
 * "recurrent" blocks (RG-LRU) carry no positions; head_dim = hidden_size // num_attention_heads always (a different
 * head_dim in the file is refused: the config class overwrites it); a rope_type other than default is refused (its
 * rotary class raises). */
#define FAMILY_ATTN_INDICES ((uint64_t)1 << 54)
/* Zamba2 (Zamba2Config / Zamba2Model, transformers 5.18): layers_block_type (alias layer_types; legacy "mamba" read as
 * "linear_attention") says "hybrid" (a shared attention block, then mamba2) or "linear_attention" (mamba2 only, no
 * positions); default: the class's 54-layer list. The shared attention rotates iff use_mem_rope (default false: every
 * layer NoPE), over attention_head_dim = 2 * hidden_size // num_attention_heads (computed: a head_dim or
 * attention_head_dim in the file that differs is refused, the config class overwrites it). */
#define FAMILY_ZAMBA2 ((uint64_t)1 << 55)

/* Families whose layers carry no RoPE at all (the RoPE reader is skipped). */
#define FAMILY_NO_ROPE \
    (FAMILY_ALIBI | FAMILY_JAMBA | FAMILY_LEARNED | FAMILY_T5 | FAMILY_PATTERN_NOPE | FAMILY_SINUSOID_ENCODER | \
     FAMILY_LEARNED_ENC_DEC | FAMILY_SINUSOID_ENC_DEC | FAMILY_SINUSOID_FAIRSEQ | FAMILY_DEBERTA | \
     FAMILY_AUDIO_ENCODER_TABLE | FAMILY_VISION_PATCH | FAMILY_WINDOW_RELATIVE | FAMILY_CONV_POSITION | FAMILY_ROPE_2D | \
     FAMILY_SINE_2D)

typedef struct {
    const char *model_type;
    const char *alias;        /* another model_type spelling (text_config of a VL model), or NULL */
    const char *class_stem;   /* HF class name prefix: "Llama" of LlamaForCausalLM */
    posenc_layout layout;     /* the HF runtime's rotation */
    double theta;             /* class default rope_theta */
    int64_t max_position;     /* class default max_position_embeddings */
    int32_t hidden, heads, head_dim, layers; /* class defaults (0 = none: hidden / heads) */
    double partial;           /* class default partial_rotary_factor (0 = 1) */
    uint64_t flags;           /* FAMILY_* */
    double local_theta;       /* FAMILY_GEMMA3_LAYERS: rope_local_base_freq default */
    int32_t sliding_window;   /* class default sliding window of the local layers */
    int32_t sliding_pattern;  /* every Nth layer is full attention */
    const char *table;        /* FAMILY_LEARNED: the tensor holding the table */
} config_family;

/* Up to n names of families closest to name (edit distance, shared class stem),
 * comma-separated into buf; GGUF architectures when gguf. */
void config_closest_families_(const char *name, bool gguf, char *buf, size_t size);

const config_family *config_family_find_(const char *model_type);
const config_family *config_family_from_class_(const char *class_name);
/* The reading of a config that names no model at all (marked assumed "generic"). */
const config_family *config_family_generic_(void);
size_t config_family_count_(void);
const config_family *config_family_at_(size_t i);

/* A model_type posenc knows and refuses, and why (checked before the family table's "not known"). */
typedef struct {
    const char *model_type;
    const char *reason;
} config_refusal;
const config_refusal *config_refusal_find_(const char *model_type);

/* A composite model_type whose text model posenc reads from text_config (the inner model_type
 * picks the family), and what the wrapper changes about positions. */
typedef struct {
    const char *model_type;
    int64_t position_start; /* position id of the first token (PaliGemma: 1) */
} config_wrapper;
const config_wrapper *config_wrapper_find_(const char *model_type);

enum {
    GGUF_ARCH_DEEPSEEK2 = 1u << 0,    /* mscale = mscale_all_dim; MLA; softmax mscale^2 */
    GGUF_ARCH_RAW_LOG_MUL = 1u << 1,  /* yarn_log_multiplier stored as mscale_all_dim (no 0.1) */
    GGUF_ARCH_GEMMA2 = 1u << 2,       /* alternating sliding/full layers */
    GGUF_ARCH_GEMMA3 = 1u << 3,       /* sliding layers use rope.freq_base_swa, unscaled */
    GGUF_ARCH_MROPE = 1u << 4,        /* rope.dimension_sections */
    GGUF_ARCH_NOPE_STEP = 1u << 5,    /* smollm3, llama4: NoPE where (il + 1) % 4 == 0 (llama4: not
                                         when attention.sliding_window is 0) */
    GGUF_ARCH_SWA_ROPE_ONLY = 1u << 6,/* cohere2: SWA pattern 4, RoPE in the SWA layers only */
    GGUF_ARCH_ALIBI = 1u << 7,        /* bloom, mpt: ALiBi, no RoPE */
    GGUF_ARCH_BAICHUAN = 1u << 8,     /* baichuan: 40 layers (13B) ALiBi, else RoPE */
    GGUF_ARCH_IMROPE = 1u << 9,       /* LLAMA_ROPE_TYPE_IMROPE: the sections interleave (qwen3vl) */
    GGUF_ARCH_OLMO2_SWA = 1u << 10,   /* olmo2 with attention.sliding_window > 0 (OLMo 3): SWA pattern 4, the
                                         SWA layers rotate with freq_scale 1, ext_factor 0, attn_factor 1
                                         (plain RoPE, no YaRN), the full layers with the file's scaling */
    GGUF_ARCH_ROPE_SWITCH = 1u << 11, /* granite, granitemoe: rope.scaling.finetuned false = no RoPE on
                                         any layer (llama.cpp's llm_build_granite: use_rope) */
    GGUF_ARCH_FULL_ROT = 1u << 12     /* llama, deci, falcon: rope.dimension_count must equal the head
                                         (llama.cpp refuses the file otherwise: "invalid n_rot") */
};

typedef struct {
    const char *name;
    posenc_layout layout;
    unsigned flags;
    int64_t swa_default; /* the sliding window llama.cpp's loader assumes when the file has none (0: none) */
} gguf_arch;

const gguf_arch *config_gguf_arch_find_(const char *name);

/* The model parsers (config_hf.c, config_gguf.c) fill a posenc_model. */
posenc_status config_hf_parse_(const char *text, size_t size, const posenc_config_options *options,
                               posenc_model *out, posenc_error *err);
posenc_status config_gguf_parse_(const void *bytes, size_t size, FILE *file, const posenc_config_options *options,
                                 posenc_model *out, posenc_error *err);
/* Reset *m: an empty model around an empty config. */
void config_model_init_(posenc_model *m, posenc_config_format format);
/* Allocate m->layers (count entries, all NOPE "attention"); count 0 is fine. */
posenc_status config_layers_alloc_(posenc_model *m, int64_t count, posenc_error *err);
/* Set layer i: scheme, rope variant (-1 if not ROPE), kind, window. */
void config_layer_set_(posenc_model *m, int64_t i, posenc_layer_scheme scheme, int32_t rope, const char *kind,
                       int64_t window);
/* ropes[0] from config.rope/layout/head dims; ropes[1..] from the layer kinds. */
void config_ropes_from_config_(posenc_model *m);
/* ALiBi slopes of heads heads with bias max_bias (posenc_alibi_slopes_f64, precise). */
posenc_status config_alibi_(posenc_model *m, int64_t heads, double max_bias, const char *source, posenc_error *err);

/* Reset *out to an empty config with RoPE defaults. */
void config_init_(posenc_model_config *out, posenc_config_format format);
/* Warnings that depend only on the final numbers, the layer-type copies, the
 * softmax factor; then posenc_rope_resolve on every variant. */
posenc_status config_finish_(posenc_model_config *out, const char *source, posenc_error *err);
/* posenc_rope_resolve with the status for a missing factor chosen (a file: FORMAT). */
posenc_status config_resolve_(posenc_rope_params *p, unsigned given, unsigned *warnings, posenc_status missing,
                              posenc_error *err);
/* Copy a name into a fixed buffer; false if it does not fit. */
bool config_copy_name_(char *dst, size_t size, const char *src, size_t len);
/* Append ", name" to a comma-separated list held in a fixed buffer (dropped if full). */
void config_note_(char *list, size_t size, const char *name);

/* ---- config.json reading, shared by config_hf.c and config_hf_layers.c ---- */
#include "../common/json_internal.h"

#define HF_MAX_USED 256
typedef struct {
    posenc_model *model;
    posenc_model_config *out;
    const config_family *family;
    posenc_error *err;
    const cJSON *used[HF_MAX_USED]; /* members read (for the unused-key list) */
    size_t used_count;
    const cJSON *decoder; /* Dia: decoder_config (the encoder_config is the object read), else NULL */
} hf_reader;

/* ---- config_hf_keys.c: reading keys (config_hf.c and config_hf_layers.c both use it) */
/* The last member named key (Python's json keeps the last duplicate); JSON null = absent. */
const cJSON *hf_item_(const cJSON *obj, const char *key);
/* The member named key (the last one written), even when it is JSON null: where null and absent differ. */
const cJSON *hf_member_(const cJSON *obj, const char *key);
/* Remember v (may be NULL) as read, for the unused-key list. */
void hf_mark_(hf_reader *h, const cJSON *v);
/* Note the first key written twice in obj (WARN_DUPLICATE_KEY; `where` prefixes its name). */
posenc_status hf_note_duplicates_(const cJSON *obj, const char *where, hf_reader *h);
/* The first of several spellings present (HF attribute maps, NULL-terminated); *used names it. */
const cJSON *hf_first_of_(const cJSON *obj, const char *const *names, const char **used);
/* v as a finite number / an integer in [0, max], or FORMAT naming `where` + key. */
posenc_status hf_as_number_(const cJSON *v, const char *where, const char *key, double *out, posenc_error *err);
posenc_status hf_as_count_(const cJSON *v, const char *where, const char *key, int64_t max, int64_t *out,
                           posenc_error *err);
/* A number / an integer under any of names, noted in keys_used; *present says whether one was there. */
posenc_status hf_number_of_(hf_reader *h, const cJSON *obj, const char *where, const char *const *names,
                            double *out, bool *present);
posenc_status hf_count_of_(hf_reader *h, const cJSON *obj, const char *where, const char *const *names,
                           int64_t max, int64_t *out, bool *present);
/* The same, remembered as read. */
const cJSON *hf_use_(hf_reader *h, const cJSON *obj, const char *key);
/* An integer in [0, max] / a finite number under key; *present says whether it was there. */
posenc_status hf_count_(hf_reader *h, const cJSON *obj, const char *where, const char *key, int64_t max,
                        int64_t *out, bool *present);
posenc_status hf_number_(hf_reader *h, const cJSON *obj, const char *where, const char *key, double *out,
                         bool *present);
/* ---- config_hf_layers.c (called by config_hf.c) */
/* The per-layer list of a config.json model; rope_free: the
 * model has no RoPE layer (its RoPE settings were not read). */
posenc_status hf_layers_(hf_reader *h, const cJSON *cfg, bool rope_free);
/* ---- config_hf_window.c: FAMILY_WINDOW_RELATIVE's layers, stages and counts (called by hf_layers_) */
posenc_status hf_window_layers_(hf_reader *h, const cJSON *cfg);
/* ---- config_hf_rope2d.c (called by hf_layers_): FAMILY_ROPE_2D, every layer ROPE_2D */
posenc_status hf_rope2d_layers_(hf_reader *h, const cJSON *cfg);
/* FAMILY_LAYER_THETA: the one non-zero value of layer_rope_theta (a list of `layers` numbers) into *base (unchanged
 * when the list is absent or all zero); two distinct non-zero values are refused naming the key. */
posenc_status hf_layer_theta_base_(hf_reader *h, const cJSON *cfg, int64_t layers, double *base);
/* ---- config_hf_conv.c: FAMILY_CONV_POSITION's layers (every encoder layer CONV_POSITION, posenc_model.conv_pos_*) */
posenc_status hf_conv_position_layers_(hf_reader *h, const cJSON *cfg);
/* config_hf_sine2d.c: FAMILY_SINE_2D models (the table's parameters and the encoder / decoder layer lists) */
posenc_status hf_sine2d_layers_(hf_reader *h, const cJSON *cfg);
/* Keys of obj not read, into the model's unused_keys: the position-related ones, or all (a rope dict). */
void hf_unused_keys_(hf_reader *h, const cJSON *obj, const char *prefix, bool all);
/* Does a key name look like it is about positions? */
bool hf_position_key_(const char *key);

#endif
