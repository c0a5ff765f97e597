/* config_internal.h: shared by the config.json and GGUF readers. Not installed. */
#ifndef POSENC_CONFIG_INTERNAL_H
#define POSENC_CONFIG_INTERNAL_H

#include "internal.h"

/* Reset *out to an empty config with RoPE defaults. */
void config_init_(posenc_model_config *out, posenc_config_format format);
/* Fill layout/layout_known from the architecture name. */
void config_set_layout_(posenc_model_config *out);
/* Warnings that depend only on the final numbers, then posenc_rope_check. */
posenc_status config_finish_(posenc_model_config *out, const char *source, posenc_error *err);
/* Copy a name into a fixed buffer; false if it does not fit. */
bool config_copy_name_(char *dst, size_t size, const char *src, size_t len);

#endif
