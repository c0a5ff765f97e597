/* config_model.c: the public entry points of model import (posenc.h section
 * 8.1): parse config.json or GGUF bytes, read a file (GGUF piece by piece from
 * disk, else config.json), and posenc_config_* kept as the one-RoPE view of the
 * same reading. It calls the readers (config_hf.c, config_gguf.c); they fill the
 * model through config_layers.c. */
#include "config_internal.h"
#include "../io/io_internal.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

posenc_status posenc_model_parse_hf_json(const char *text, size_t size, const posenc_config_options *options,
                                         posenc_model *out, posenc_error *err) {
    RETURN_IF_NULL(out, err);
    config_model_init_(out, POSENC_CONFIG_HF_JSON);
    RETURN_IF_NULL(text, err);
    posenc_status st = config_hf_parse_(text, size, options, out, err);
    if (st != POSENC_OK) posenc_model_free(out);
    return st;
}

posenc_status posenc_model_parse_gguf(const void *bytes, size_t size, const posenc_config_options *options,
                                      posenc_model *out, posenc_error *err) {
    RETURN_IF_NULL(out, err);
    config_model_init_(out, POSENC_CONFIG_GGUF);
    RETURN_IF_NULL(bytes, err);
    posenc_status st = config_gguf_parse_(bytes, size, NULL, options, out, err);
    if (st != POSENC_OK) posenc_model_free(out);
    return st;
}

/* The one-RoPE view: the model's config, refused when no layer has RoPE. */
static posenc_status to_config(posenc_model *m, posenc_status st, const char *source, posenc_model_config *out,
                               posenc_error *err) {
    config_init_(out, m->config.format);
    if (st != POSENC_OK) return st;
    if (m->rope_count == 0) {
        posenc_layer_scheme s = m->layer_count > 0 ? m->layers[0].scheme : POSENC_LAYER_NOPE;
        const char *what = s == POSENC_LAYER_ALIBI ? (strcmp(m->config.family, "falcon") == 0
                                                          ? "'alibi' is true: ALiBi biases in every layer"
                                                          : "ALiBi biases in every layer")
                           : s == POSENC_LAYER_LEARNED ? "a learned absolute position table"
                           : s == POSENC_LAYER_T5      ? "T5 relative position buckets"
                           : s == POSENC_LAYER_DEBERTA ? "DeBERTa relative positions (c2p / p2c)"
                           : s == POSENC_LAYER_WINDOW_RELATIVE ? "a learned 2D relative bias inside windows of patches"
                           : s == POSENC_LAYER_CONV_POSITION ? "a learned convolutional position embedding"
                           : s == POSENC_LAYER_SINUSOIDAL && m->decoder_sinusoid_size > 0
                               ? "a fixed sinusoidal table in each stack"
                           : s == POSENC_LAYER_SINUSOIDAL && m->learned_size > 0
                               ? "a fixed sinusoidal table in the encoder, a learned one in the decoder"
                           : s == POSENC_LAYER_SINUSOIDAL ? "a fixed sinusoidal table"
                                                       : "no position encoding in any layer";
        posenc_fail_(err, POSENC_ERR_UNSUPPORTED,
                     "%s: '%s' has no RoPE layer (%s); posenc rope explain --config and posenc_model_read list its "
                     "layers", source, m->config.architecture, what);
        posenc_model_free(m);
        return POSENC_ERR_UNSUPPORTED;
    }
    *out = m->config;
    m->config.factor_storage = NULL; /* moved into *out */
    posenc_model_free(m);
    return POSENC_OK;
}

posenc_status posenc_config_parse_hf_json(const char *text, size_t size, posenc_model_config *out,
                                          posenc_error *err) {
    RETURN_IF_NULL(out, err);
    posenc_model m;
    posenc_status st = posenc_model_parse_hf_json(text, size, NULL, &m, err);
    return to_config(&m, st, "config.json", out, err);
}

posenc_status posenc_config_parse_gguf(const void *bytes, size_t size, posenc_model_config *out, posenc_error *err) {
    RETURN_IF_NULL(out, err);
    posenc_model m;
    posenc_status st = posenc_model_parse_gguf(bytes, size, NULL, &m, err);
    return to_config(&m, st, "GGUF", out, err);
}

posenc_status posenc_config_read(const char *path, size_t max_bytes, posenc_model_config *out, posenc_error *err) {
    RETURN_IF_NULL(out, err);
    posenc_model m;
    posenc_status st = posenc_model_read(path, max_bytes, NULL, &m, err);
    return to_config(&m, st, path ? path : "config", out, err);
}

/* The parsers see bytes, not a file, and call what they read "config.json" or
 * "GGUF"; a file named otherwise (or a config.json among many) is then hard to
 * find from the message, so a read puts the path in: "config.json: ..." becomes
 * "PATH: ...", and "GGUF ..." becomes "PATH: GGUF ...". Where the whole path
 * would cut the reason short (messages hold 255 bytes), the file name alone is
 * used instead: the reason is worth more than the folders. */
static void append(char *dst, size_t size, const char *src) { /* strlcat, cut at size - 1 */
    size_t used = strlen(dst), n = strlen(src);
    if (n > size - 1 - used) n = size - 1 - used;
    memcpy(dst + used, src, n);
    dst[used + n] = '\0';
}

static void name_the_file(const char *path, const char *said, posenc_error *err) {
    if (!err || !path) return;
    size_t n = strlen(said);
    if (strncmp(err->message, said, n) != 0) return; /* e.g. assume_family, a file that cannot be read */
    bool replace = strcmp(said, "config.json") == 0;
    char rest[POSENC_ERROR_MESSAGE_SIZE] = "";
    append(rest, sizeof rest, replace ? "" : ": ");
    append(rest, sizeof rest, err->message + (replace ? n : 0));
    const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    size_t room = sizeof err->message - 1 - strlen(rest);
    if (strlen(path) > room && strlen(name) > room && strlen(name) > n)
        return; /* even the file name would cut the reason short: the message stays as the parser said it */
    err->message[0] = '\0';
    append(err->message, sizeof err->message, strlen(path) <= room ? path : name);
    append(err->message, sizeof err->message, rest);
}

posenc_status posenc_model_read(const char *path, size_t max_bytes, const posenc_config_options *options,
                                posenc_model *out, posenc_error *err) {
    RETURN_IF_NULL(out, err);
    config_model_init_(out, POSENC_CONFIG_HF_JSON);
    RETURN_IF_NULL(path, err);
    FILE *file;
    unsigned long long file_size;
    /* refuses a FIFO or device without blocking on it */
    FORWARD_IF_ERROR(posenc_open_regular_(path, &file, &file_size, err));
    char magic[4] = {0};
    size_t got = fread(magic, 1, 4, file);
    size_t path_len = strlen(path);
    bool named_gguf = path_len >= 5 && strcmp(path + path_len - 5, ".gguf") == 0;
    if (file_size == 0 || (named_gguf && (got < 4 || memcmp(magic, "GGUF", 4) != 0))) {
        fclose(file);
        return posenc_fail_(err, POSENC_ERR_FORMAT, file_size == 0 ? "%s is empty: neither a GGUF file nor a config.json"
                                                                   : "%s is not a GGUF file (it does not start with 'GGUF')",
                            path);
    }
    if (got == 4 && memcmp(magic, "GGUF", 4) == 0) {
        rewind(file);
        config_model_init_(out, POSENC_CONFIG_GGUF);
        posenc_status st = config_gguf_parse_(NULL, (size_t)file_size, file, options, out, err);
        fclose(file);
        if (st != POSENC_OK) {
            posenc_model_free(out);
            name_the_file(path, "GGUF", err);
        }
        return st;
    }
    fclose(file);
    void *bytes = NULL;
    size_t size = 0;
    FORWARD_IF_ERROR(posenc_file_read_all(path, max_bytes ? max_bytes : (size_t)64 << 20, &bytes, &size, err));
    posenc_status st = posenc_model_parse_hf_json(bytes, size, options, out, err);
    free(bytes);
    if (st != POSENC_OK) name_the_file(path, "config.json", err);
    return st;
}
