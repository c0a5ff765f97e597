/* config_gguf.c: RoPE settings from a GGUF header (v2/v3, little-endian) and
 * posenc_config_read (GGUF or config.json by magic).
 *
 * Only the key/value section (and the tensor names, to spot a rope_freqs
 * tensor) is read: from memory, or from disk piece by piece with seeks over
 * values we do not need, so a 40 GB model costs a few reads. Every length is
 * checked against the bytes that remain before it is used; nothing is
 * allocated from a size found in the file. */
#define _POSIX_C_SOURCE 200809L /* fseeko, fileno, strnlen */
#include "config_internal.h"
#include "io_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#define GGUF_MAX_KV ((uint64_t)1 << 20)
#define GGUF_MAX_TENSORS ((uint64_t)1 << 24)
#define GGUF_MAX_KEY 65535u
#define GGUF_MAX_KEPT_STRING 256u

enum { T_U8, T_I8, T_U16, T_I16, T_U32, T_I32, T_F32, T_BOOL, T_STRING, T_ARRAY, T_U64, T_I64, T_F64, T_COUNT };
static const uint8_t type_size[T_COUNT] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};

typedef struct {
    const uint8_t *mem; /* memory image, or NULL for a file */
    FILE *file;
    uint64_t size;      /* bytes available */
    uint64_t pos;
} reader;

static posenc_status rd(reader *r, void *dst, uint64_t n, const char *what, posenc_error *err) {
    RETURN_ERROR_IF(n > r->size - r->pos, err, POSENC_ERR_FORMAT,
                    "GGUF truncated: %s needs %llu bytes at offset %llu, the file has %llu", what,
                    (unsigned long long)n, (unsigned long long)r->pos, (unsigned long long)r->size);
    if (r->mem) memcpy(dst, r->mem + r->pos, (size_t)n);
    else RETURN_ERROR_IF(fread(dst, 1, (size_t)n, r->file) != n, err, POSENC_ERR_IO, "GGUF read failed at offset %llu",
                         (unsigned long long)r->pos);
    r->pos += n;
    return POSENC_OK;
}

static posenc_status skip(reader *r, uint64_t n, const char *what, posenc_error *err) {
    RETURN_ERROR_IF(n > r->size - r->pos, err, POSENC_ERR_FORMAT,
                    "GGUF truncated or hostile: %s claims %llu bytes at offset %llu, only %llu remain", what,
                    (unsigned long long)n, (unsigned long long)r->pos, (unsigned long long)(r->size - r->pos));
    if (!r->mem) RETURN_ERROR_IF(fseeko(r->file, (off_t)(r->pos + n), SEEK_SET) != 0, err, POSENC_ERR_IO,
                                 "GGUF seek failed at offset %llu", (unsigned long long)r->pos);
    r->pos += n;
    return POSENC_OK;
}

static posenc_status rd_u32(reader *r, uint32_t *v, const char *what, posenc_error *err) {
    uint8_t b[4];
    FORWARD_IF_ERROR(rd(r, b, 4, what, err));
    *v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    return POSENC_OK;
}

static posenc_status rd_u64(reader *r, uint64_t *v, const char *what, posenc_error *err) {
    uint32_t lo, hi;
    FORWARD_IF_ERROR(rd_u32(r, &lo, what, err));
    FORWARD_IF_ERROR(rd_u32(r, &hi, what, err));
    *v = (uint64_t)hi << 32 | lo;
    return POSENC_OK;
}

/* Keys we use, by the part after "<arch>.". */
enum { K_FREQ_BASE, K_DIM_COUNT, K_SCALING_TYPE, K_FACTOR, K_SCALE_LINEAR, K_ORIG_CTX, K_ATTN_FACTOR, K_BETA_FAST,
       K_BETA_SLOW, K_LOG_MUL, K_CTX, K_KEY_LENGTH, K_HEAD_COUNT, K_EMBED, K_KNOWN };
static const char *const known_suffix[K_KNOWN] = {
    "rope.freq_base", "rope.dimension_count", "rope.scaling.type", "rope.scaling.factor", "rope.scale_linear",
    "rope.scaling.original_context_length", "rope.scaling.attn_factor", "rope.scaling.yarn_beta_fast",
    "rope.scaling.yarn_beta_slow", "rope.scaling.yarn_log_multiplier", "context_length", "attention.key_length",
    "attention.head_count", "embedding_length"};

typedef struct {
    bool present;
    char prefix[64];
    double number;
    char text[GGUF_MAX_KEPT_STRING];
} kv_value;

typedef struct {
    kv_value v[K_KNOWN];
    bool has_arch;
    bool freq_tensor;
} gguf_found;

static double scalar_value(uint32_t type, const uint8_t *b) {
    uint64_t u = 0;
    for (int i = type_size[type] - 1; i >= 0; i--) u = u << 8 | b[i];
    switch (type) {
    case T_U8: case T_U16: case T_U32: case T_U64: case T_BOOL: return (double)u;
    case T_I8: return (double)(int8_t)u;
    case T_I16: return (double)(int16_t)u;
    case T_I32: return (double)(int32_t)(uint32_t)u;
    case T_I64: return (double)(int64_t)u;
    case T_F32: { uint32_t w = (uint32_t)u; float f; memcpy(&f, &w, 4); return f; }
    default: { double d; memcpy(&d, &u, 8); return d; }
    }
}

/* Read (kept = true) or skip one value of `type`. */
static posenc_status value(reader *r, uint32_t type, const char *key, kv_value *kept, posenc_error *err) {
    RETURN_ERROR_IF(type >= T_COUNT, err, POSENC_ERR_FORMAT, "GGUF key '%.64s' has unknown value type %u", key, type);
    if (type == T_STRING) {
        uint64_t len;
        FORWARD_IF_ERROR(rd_u64(r, &len, "a string length", err));
        if (kept && len < GGUF_MAX_KEPT_STRING) {
            FORWARD_IF_ERROR(rd(r, kept->text, len, "a string", err));
            kept->text[len] = '\0';
            kept->present = true;
            return POSENC_OK;
        }
        RETURN_ERROR_IF(kept, err, POSENC_ERR_FORMAT, "GGUF key '%.64s' holds a %llu-byte string (limit %u)", key,
                        (unsigned long long)len, GGUF_MAX_KEPT_STRING - 1);
        return skip(r, len, "a string", err);
    }
    if (type == T_ARRAY) {
        uint32_t elem;
        uint64_t count;
        FORWARD_IF_ERROR(rd_u32(r, &elem, "an array type", err));
        FORWARD_IF_ERROR(rd_u64(r, &count, "an array length", err));
        RETURN_ERROR_IF(elem >= T_COUNT, err, POSENC_ERR_FORMAT, "GGUF key '%.64s': unknown array element type %u", key, elem);
        RETURN_ERROR_IF(elem == T_ARRAY, err, POSENC_ERR_FORMAT, "GGUF key '%.64s': nested arrays are not allowed", key);
        if (elem == T_STRING) {
            RETURN_ERROR_IF(count > (r->size - r->pos) / 8, err, POSENC_ERR_FORMAT,
                            "GGUF key '%.64s' claims %llu strings, more than the file can hold", key,
                            (unsigned long long)count);
            for (uint64_t i = 0; i < count; i++) FORWARD_IF_ERROR(value(r, T_STRING, key, NULL, err));
            return POSENC_OK;
        }
        RETURN_ERROR_IF(count > (r->size - r->pos) / type_size[elem], err, POSENC_ERR_FORMAT,
                        "GGUF key '%.64s' claims %llu array elements, more than the file can hold", key,
                        (unsigned long long)count);
        return skip(r, count * type_size[elem], "an array", err);
    }
    uint8_t b[8];
    FORWARD_IF_ERROR(rd(r, b, type_size[type], "a value", err));
    if (kept) {
        kept->number = scalar_value(type, b);
        kept->present = true;
    }
    return POSENC_OK;
}

static posenc_status read_string_key(reader *r, char *key, posenc_error *err) {
    uint64_t len;
    FORWARD_IF_ERROR(rd_u64(r, &len, "a key length", err));
    RETURN_ERROR_IF(len > GGUF_MAX_KEY, err, POSENC_ERR_FORMAT, "GGUF key of %llu bytes at offset %llu (limit %u)",
                    (unsigned long long)len, (unsigned long long)r->pos, GGUF_MAX_KEY);
    FORWARD_IF_ERROR(rd(r, key, len, "a key", err));
    key[len] = '\0';
    RETURN_ERROR_IF(strlen(key) != len, err, POSENC_ERR_FORMAT, "GGUF key with a NUL byte at offset %llu",
                    (unsigned long long)r->pos);
    return POSENC_OK;
}

static posenc_status scan(reader *r, posenc_model_config *out, gguf_found *f, posenc_error *err) {
    char magic[4];
    FORWARD_IF_ERROR(rd(r, magic, 4, "the magic", err));
    RETURN_ERROR_IF(memcmp(magic, "GGUF", 4) != 0, err, POSENC_ERR_FORMAT, "not a GGUF file (magic is not 'GGUF')");
    uint32_t version;
    uint64_t n_tensors, n_kv;
    FORWARD_IF_ERROR(rd_u32(r, &version, "the version", err));
    RETURN_ERROR_IF(version != 2 && version != 3, err, POSENC_ERR_UNSUPPORTED,
                    "GGUF version %u is not supported (2 and 3 are)", version);
    FORWARD_IF_ERROR(rd_u64(r, &n_tensors, "the tensor count", err));
    FORWARD_IF_ERROR(rd_u64(r, &n_kv, "the key/value count", err));
    RETURN_ERROR_IF(n_kv > GGUF_MAX_KV || n_kv > (r->size - r->pos) / 13, err, POSENC_ERR_FORMAT,
                    "GGUF claims %llu key/value pairs: more than the file can hold (or the limit %llu)",
                    (unsigned long long)n_kv, (unsigned long long)GGUF_MAX_KV);
    RETURN_ERROR_IF(n_tensors > GGUF_MAX_TENSORS, err, POSENC_ERR_FORMAT, "GGUF claims %llu tensors (limit %llu)",
                    (unsigned long long)n_tensors, (unsigned long long)GGUF_MAX_TENSORS);
    char *key = malloc(GGUF_MAX_KEY + 1);
    RETURN_ERROR_IF(!key, err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate a key buffer");
    posenc_status st = POSENC_OK;
    for (uint64_t i = 0; st == POSENC_OK && i < n_kv; i++) {
        uint32_t type;
        st = read_string_key(r, key, err);
        if (st == POSENC_OK) st = rd_u32(r, &type, "a value type", err);
        if (st != POSENC_OK) break;
        kv_value *kept = NULL, arch = {0};
        if (strcmp(key, "general.architecture") == 0) {
            if (type != T_STRING) {
                st = posenc_fail_(err, POSENC_ERR_FORMAT, "GGUF general.architecture must be a string, has type %u", type);
                break;
            }
            kept = &arch;
        } else {
            const char *dot = strchr(key, '.');
            for (int k = 0; dot && k < K_KNOWN; k++)
                if (strcmp(dot + 1, known_suffix[k]) == 0 && (size_t)(dot - key) < sizeof f->v[k].prefix) {
                    kept = &f->v[k];
                    config_copy_name_(kept->prefix, sizeof kept->prefix, key, (size_t)(dot - key));
                    bool want_string = k == K_SCALING_TYPE;
                    if ((type == T_STRING) != want_string || type == T_ARRAY) {
                        st = posenc_fail_(err, POSENC_ERR_FORMAT, "GGUF key '%.64s' has the wrong type %u", key, type);
                        kept = NULL;
                    }
                    break;
                }
        }
        if (st == POSENC_OK) st = value(r, type, key, kept, err);
        if (st == POSENC_OK && kept == &arch) {
            if (!config_copy_name_(out->architecture, sizeof out->architecture, arch.text, strlen(arch.text)))
                st = posenc_fail_(err, POSENC_ERR_FORMAT, "GGUF general.architecture is too long");
            f->has_arch = true;
        }
    }
    /* tensor infos: only names matter (rope_freqs.weight); a short read ends the scan */
    for (uint64_t i = 0; st == POSENC_OK && i < n_tensors; i++) {
        posenc_error quiet = {0};
        uint32_t n_dims;
        if (read_string_key(r, key, &quiet) != POSENC_OK) break;
        if (strcmp(key, "rope_freqs.weight") == 0) f->freq_tensor = true;
        if (rd_u32(r, &n_dims, "dims", &quiet) != POSENC_OK || n_dims > 8 ||
            skip(r, (uint64_t)n_dims * 8 + 4 + 8, "a tensor info", &quiet) != POSENC_OK)
            break;
    }
    free(key);
    return st;
}

static posenc_status apply_found(const gguf_found *f, posenc_model_config *out, posenc_error *err) {
    RETURN_ERROR_IF(!f->has_arch, err, POSENC_ERR_FORMAT, "GGUF has no general.architecture key");
    const kv_value *v = f->v;
#define HAS(k) (v[k].present && strcmp(v[k].prefix, out->architecture) == 0)
    posenc_rope_params *p = &out->rope;
    if (HAS(K_FREQ_BASE)) p->base = v[K_FREQ_BASE].number;
    else out->warnings |= POSENC_CONFIG_WARN_NO_THETA;
    const double dim_max = (double)(1 << 30);
    for (int k = K_DIM_COUNT; k < K_KNOWN; k++)
        if (HAS(k) && k != K_SCALING_TYPE &&
            (!isfinite(v[k].number) || v[k].number < 0 || (k >= K_CTX && v[k].number > dim_max * 8192)))
            return posenc_fail_(err, POSENC_ERR_FORMAT, "GGUF %s.%s has an out-of-range value %g", out->architecture,
                                known_suffix[k], v[k].number);
    out->max_position_embeddings = HAS(K_CTX) ? (int64_t)v[K_CTX].number : 0;
    out->num_attention_heads = HAS(K_HEAD_COUNT) && v[K_HEAD_COUNT].number <= dim_max ? (int32_t)v[K_HEAD_COUNT].number : 0;
    out->hidden_size = HAS(K_EMBED) && v[K_EMBED].number <= dim_max ? (int32_t)v[K_EMBED].number : 0;
    if (HAS(K_KEY_LENGTH) && v[K_KEY_LENGTH].number <= dim_max) p->head_dim = (int32_t)v[K_KEY_LENGTH].number;
    else if (out->num_attention_heads > 0 && out->hidden_size > 0) p->head_dim = out->hidden_size / out->num_attention_heads;
    if (HAS(K_DIM_COUNT) && v[K_DIM_COUNT].number <= dim_max) {
        p->rotary_dim = (int32_t)v[K_DIM_COUNT].number;
        if (p->head_dim == 0) p->head_dim = p->rotary_dim;
    }
    RETURN_ERROR_IF(p->head_dim == 0, err, POSENC_ERR_FORMAT,
                    "GGUF has no %s.attention.key_length, rope.dimension_count or embedding_length/head_count",
                    out->architecture);
    p->max_position = out->max_position_embeddings;
    const char *type = HAS(K_SCALING_TYPE) ? v[K_SCALING_TYPE].text : HAS(K_SCALE_LINEAR) ? "linear" : "none";
    config_copy_name_(out->scaling_name, sizeof out->scaling_name, type, strnlen(type, sizeof out->scaling_name - 1));
    if (strcmp(type, "none") == 0) p->scaling = POSENC_ROPE_NONE;
    else if (strcmp(type, "linear") == 0) p->scaling = POSENC_ROPE_LINEAR;
    else if (strcmp(type, "yarn") == 0) p->scaling = POSENC_ROPE_YARN;
    else if (strcmp(type, "longrope") == 0) p->scaling = POSENC_ROPE_LONGROPE;
    else
        return posenc_fail_(err, POSENC_ERR_UNSUPPORTED,
                            "GGUF: unknown RoPE scaling type '%.32s' (known: none, linear, yarn, longrope)", type);
    if (HAS(K_FACTOR)) p->factor = v[K_FACTOR].number;
    else if (HAS(K_SCALE_LINEAR)) p->factor = v[K_SCALE_LINEAR].number;
    if (p->scaling == POSENC_ROPE_NONE) p->factor = 1.0;
    if (HAS(K_ORIG_CTX)) p->original_max_position = (int64_t)v[K_ORIG_CTX].number;
    if (p->scaling == POSENC_ROPE_YARN) {
        if (!HAS(K_ORIG_CTX)) { /* llama.cpp falls back to n_ctx_train */
            out->warnings |= POSENC_CONFIG_WARN_NO_ORIGINAL;
            p->original_max_position = out->max_position_embeddings;
        }
        if (HAS(K_BETA_FAST) && v[K_BETA_FAST].number != 0) p->beta_fast = v[K_BETA_FAST].number;
        if (HAS(K_BETA_SLOW) && v[K_BETA_SLOW].number != 0) p->beta_slow = v[K_BETA_SLOW].number;
        if (HAS(K_LOG_MUL) && v[K_LOG_MUL].number > 0) { /* converter: 0.1 * mscale_all_dim */
            p->mscale_all_dim = v[K_LOG_MUL].number / 0.1;
            p->mscale = 1.0;
        }
        if (HAS(K_ATTN_FACTOR) && v[K_ATTN_FACTOR].number > 0) p->attention_factor = v[K_ATTN_FACTOR].number;
    }
    if (p->scaling == POSENC_ROPE_LONGROPE)
        return posenc_fail_(err, POSENC_ERR_UNSUPPORTED,
                            "GGUF longrope keeps its factor lists in rope_factors_long/short tensors, which posenc "
                            "does not read; use the model's config.json");
#undef HAS
    if (f->freq_tensor) out->warnings |= POSENC_CONFIG_WARN_FREQ_TENSOR;
    return config_finish_(out, "GGUF", err);
}

static posenc_status parse_reader(reader *r, posenc_model_config *out, posenc_error *err) {
    config_init_(out, POSENC_CONFIG_GGUF);
    gguf_found *f = calloc(1, sizeof *f);
    RETURN_ERROR_IF(!f, err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate the GGUF scan state");
    posenc_status st = scan(r, out, f, err);
    if (st == POSENC_OK) st = apply_found(f, out, err);
    free(f);
    return st;
}

posenc_status posenc_config_parse_gguf(const void *bytes, size_t size, posenc_model_config *out, posenc_error *err) {
    RETURN_IF_NULL(out, err);
    config_init_(out, POSENC_CONFIG_GGUF);
    RETURN_IF_NULL(bytes, err);
    reader r = {bytes, NULL, size, 0};
    return parse_reader(&r, out, err);
}

posenc_status posenc_config_read(const char *path, size_t max_bytes, posenc_model_config *out, posenc_error *err) {
    RETURN_IF_NULL(out, err);
    config_init_(out, POSENC_CONFIG_HF_JSON);
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
        reader r = {NULL, file, (uint64_t)file_size, 0};
        posenc_status st = parse_reader(&r, out, err);
        fclose(file);
        return st;
    }
    fclose(file);
    void *bytes = NULL;
    size_t size = 0;
    FORWARD_IF_ERROR(posenc_file_read_all(path, max_bytes ? max_bytes : (size_t)64 << 20, &bytes, &size, err));
    posenc_status st = posenc_config_parse_hf_json(bytes, size, out, err);
    free(bytes);
    return st;
}
