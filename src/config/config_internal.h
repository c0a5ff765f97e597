/* config_internal.h: shared by the config.json and GGUF readers. Not installed. */
#ifndef POSENC_CONFIG_INTERNAL_H
#define POSENC_CONFIG_INTERNAL_H

#include "../common/internal.h"

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
    FAMILY_ALIBI_KEY = 1u << 7       /* Falcon: "alibi": true means no RoPE */
};

typedef struct {
    const char *model_type;
    const char *alias;        /* another model_type spelling (text_config of a VL model), or NULL */
    const char *class_stem;   /* HF class name prefix: "Llama" of LlamaForCausalLM */
    posenc_layout layout;     /* the HF runtime's rotation */
    double theta;             /* class default rope_theta */
    int64_t max_position;     /* class default max_position_embeddings */
    int32_t hidden, heads, head_dim, layers; /* class defaults (0 = none: hidden / heads) */
    double partial;           /* class default partial_rotary_factor (0 = 1) */
    unsigned flags;           /* FAMILY_* */
    double local_theta;       /* FAMILY_GEMMA3_LAYERS: rope_local_base_freq default */
    int32_t sliding_window;   /* class default sliding window of the local layers */
    int32_t sliding_pattern;  /* every Nth layer is full attention */
} config_family;

const config_family *config_family_find_(const char *model_type);
const config_family *config_family_from_class_(const char *class_name);
size_t config_family_count_(void);
const config_family *config_family_at_(size_t i);

enum {
    GGUF_ARCH_DEEPSEEK2 = 1u << 0,    /* mscale = mscale_all_dim; MLA; softmax mscale^2 */
    GGUF_ARCH_RAW_LOG_MUL = 1u << 1,  /* yarn_log_multiplier stored as mscale_all_dim (no 0.1) */
    GGUF_ARCH_GEMMA2 = 1u << 2,       /* alternating sliding/full layers */
    GGUF_ARCH_GEMMA3 = 1u << 3,       /* sliding layers use rope.freq_base_swa, unscaled */
    GGUF_ARCH_MROPE = 1u << 4         /* rope.dimension_sections */
};

typedef struct {
    const char *name;
    posenc_layout layout;
    unsigned flags;
} gguf_arch;

const gguf_arch *config_gguf_arch_find_(const char *name);

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

#endif
