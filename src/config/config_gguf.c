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
#include "../io/io_internal.h"

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

/* Keys we use, by the part after "<arch>." (docs/rope.md says what each means). */
enum { K_FREQ_BASE, K_FREQ_BASE_SWA, K_DIM_COUNT, K_DIM_SECTIONS, K_SCALING_TYPE, K_FACTOR, K_SCALE_LINEAR,
       K_ORIG_CTX, K_ATTN_FACTOR, K_BETA_FAST, K_BETA_SLOW, K_LOG_MUL, K_EXT_FACTOR, K_YARN_ATTN_FACTOR, K_CTX,
       K_KEY_LENGTH, K_KEY_LENGTH_MLA, K_HEAD_COUNT, K_EMBED, K_BLOCKS, K_SLIDING_WINDOW, K_MAX_ALIBI, K_FINETUNED,
       K_TEMP_SCALE, K_KNOWN };
static const char *const known_suffix[K_KNOWN] = {
    "rope.freq_base", "rope.freq_base_swa", "rope.dimension_count", "rope.dimension_sections", "rope.scaling.type",
    "rope.scaling.factor", "rope.scale_linear", "rope.scaling.original_context_length", "rope.scaling.attn_factor",
    "rope.scaling.yarn_beta_fast", "rope.scaling.yarn_beta_slow", "rope.scaling.yarn_log_multiplier",
    "rope.scaling.yarn_ext_factor", "rope.scaling.yarn_attn_factor", "context_length", "attention.key_length",
    "attention.key_length_mla", "attention.head_count", "embedding_length", "block_count",
    "attention.sliding_window", "attention.max_alibi_bias", "rope.scaling.finetuned",
    "attention.temperature_scale"};

#define GGUF_MAX_ROPE_TENSOR 65536u /* elements of a rope_freqs / rope_factors tensor */
enum { T_FREQS, T_LONG, T_SHORT, T_KINDS };
static const char *const rope_tensor_name[T_KINDS] = {"rope_freqs.weight", "rope_factors_long.weight",
                                                      "rope_factors_short.weight"};

typedef struct {
    bool present;
    char prefix[64];
    double number;
    char text[GGUF_MAX_KEPT_STRING];
    int32_t ints[4]; /* K_DIM_SECTIONS */
} kv_value;

typedef struct {
    bool found;
    uint32_t type;
    uint64_t elements, offset;
} rope_tensor;

typedef struct {
    kv_value v[K_KNOWN];
    bool has_arch;
    uint64_t alignment;
    bool data_known;    /* every tensor info was read, so data_start is right */
    uint64_t data_start;
    rope_tensor tensors[T_KINDS];
    double *values[T_KINDS]; /* read tensor data (owned until moved into the config) */
} gguf_found;

/* Keys seen, as two independent 64-bit hashes (a false duplicate needs a
 * 128-bit collision); grows by doubling, so memory follows the key count. */
typedef struct {
    uint64_t *slots; /* pairs; (0,0) = empty */
    size_t capacity, used;
} key_set;

static void hash_key(const char *key, uint64_t *a, uint64_t *b) {
    uint64_t h1 = 1469598103934665603ull, h2 = 0x9e3779b97f4a7c15ull;
    for (const unsigned char *c = (const unsigned char *)key; *c; c++) {
        h1 = (h1 ^ *c) * 1099511628211ull;
        h2 = (h2 + *c + 1) * 0xff51afd7ed558ccdull;
        h2 ^= h2 >> 29;
    }
    *a = h1 | 1; /* never (0,0) */
    *b = h2;
}

/* true if key was already in the set */
static posenc_status key_set_add(key_set *s, const char *key, bool *seen, posenc_error *err) {
    if (2 * (s->used + 1) > s->capacity) {
        size_t cap = s->capacity ? s->capacity * 2 : 64;
        uint64_t *slots = calloc(cap * 2, sizeof *slots);
        RETURN_ERROR_IF(!slots, err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate the GGUF key set (%zu keys)", s->used);
        for (size_t i = 0; i < s->capacity; i++) {
            if (!s->slots[2 * i]) continue;
            size_t j = (size_t)s->slots[2 * i] & (cap - 1);
            while (slots[2 * j]) j = (j + 1) & (cap - 1);
            slots[2 * j] = s->slots[2 * i];
            slots[2 * j + 1] = s->slots[2 * i + 1];
        }
        free(s->slots);
        s->slots = slots;
        s->capacity = cap;
    }
    uint64_t a, b;
    hash_key(key, &a, &b);
    size_t j = (size_t)a & (s->capacity - 1);
    while (s->slots[2 * j]) {
        if (s->slots[2 * j] == a && s->slots[2 * j + 1] == b) {
            *seen = true;
            return POSENC_OK;
        }
        j = (j + 1) & (s->capacity - 1);
    }
    s->slots[2 * j] = a;
    s->slots[2 * j + 1] = b;
    s->used++;
    *seen = false;
    return POSENC_OK;
}

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
            /* a NUL inside would silently shorten the name (issue 26) */
            RETURN_ERROR_IF(strlen(kept->text) != len, err, POSENC_ERR_FORMAT,
                            "GGUF key '%.64s' holds a NUL byte at character %zu of its %llu-byte string", key,
                            strlen(kept->text), (unsigned long long)len);
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
        if (kept) { /* rope.dimension_sections: up to 4 integers */
            RETURN_ERROR_IF((elem != T_I32 && elem != T_U32) || count > 4, err, POSENC_ERR_FORMAT,
                            "GGUF key '%.64s' must be an array of at most 4 int32, has %llu of type %u", key,
                            (unsigned long long)count, elem);
            for (uint64_t i = 0; i < count; i++) {
                uint8_t b[4];
                FORWARD_IF_ERROR(rd(r, b, 4, "an array element", err));
                double v = scalar_value(elem, b);
                RETURN_ERROR_IF(v < 0 || v > (double)(1 << 20), err, POSENC_ERR_FORMAT,
                                "GGUF key '%.64s'[%llu] is %.0f, not a pair count in [0, 2^20]", key,
                                (unsigned long long)i, v);
                kept->ints[i] = (int32_t)v;
            }
            kept->present = true;
            return POSENC_OK;
        }
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

static posenc_status read_at(reader *r, uint64_t offset, void *dst, uint64_t n, const char *what,
                             posenc_error *err) {
    RETURN_ERROR_IF(offset > r->size || n > r->size - offset, err, POSENC_ERR_FORMAT,
                    "GGUF %s lies outside the file (bytes %llu..%llu, the file has %llu)", what,
                    (unsigned long long)offset, (unsigned long long)(offset + n), (unsigned long long)r->size);
    if (!r->mem) RETURN_ERROR_IF(fseeko(r->file, (off_t)offset, SEEK_SET) != 0, err, POSENC_ERR_IO,
                                 "GGUF seek failed at offset %llu", (unsigned long long)offset);
    r->pos = offset;
    return rd(r, dst, n, what, err);
}

/* One tensor info; a rope tensor is remembered. false in *ok = truncated (ends the scan). */
static posenc_status tensor_info(reader *r, char *key, gguf_found *f, bool *ok, posenc_error *err) {
    posenc_error quiet = {0};
    uint32_t n_dims, type;
    uint64_t ne[8], offset, elements = 1;
    *ok = false;
    if (read_string_key(r, key, &quiet) != POSENC_OK || rd_u32(r, &n_dims, "dims", &quiet) != POSENC_OK) return POSENC_OK;
    int kind = -1;
    for (int t = 0; t < T_KINDS; t++)
        if (strcmp(key, rope_tensor_name[t]) == 0) kind = t;
    RETURN_ERROR_IF(n_dims > 4 || (kind >= 0 && n_dims == 0), err, POSENC_ERR_FORMAT,
                    "GGUF tensor '%.64s' has %u dimensions (1..4)", key, n_dims);
    for (uint32_t d = 0; d < n_dims; d++) {
        if (rd_u64(r, &ne[d], "a tensor shape", &quiet) != POSENC_OK) return POSENC_OK;
        if (kind >= 0) {
            RETURN_ERROR_IF(ne[d] == 0 || ne[d] > GGUF_MAX_ROPE_TENSOR || elements * ne[d] > GGUF_MAX_ROPE_TENSOR, err,
                            POSENC_ERR_FORMAT, "GGUF tensor '%s' has a shape dimension %llu (at most %u elements "
                            "in all)", key, (unsigned long long)ne[d], GGUF_MAX_ROPE_TENSOR);
            elements *= ne[d];
        }
    }
    if (rd_u32(r, &type, "a tensor type", &quiet) != POSENC_OK || rd_u64(r, &offset, "a tensor offset", &quiet) != POSENC_OK)
        return POSENC_OK;
    if (kind >= 0) {
        rope_tensor *t = &f->tensors[kind];
        RETURN_ERROR_IF(t->found, err, POSENC_ERR_FORMAT, "GGUF has tensor '%s' twice", key);
        RETURN_ERROR_IF(type != 0, err, POSENC_ERR_FORMAT,
                        "GGUF tensor '%s' has ggml type %u; rope tensors must be F32 (type 0)", key, type);
        *t = (rope_tensor){true, type, elements, offset};
    }
    *ok = true;
    return POSENC_OK;
}

/* A key about positions that posenc does not read ("<arch>.rope.scaling.foo", "...alibi..."). */
static bool position_key(const char *suffix) {
    static const char *const words[] = {"rope", "rotary", "position", "alibi", "swa", "sliding", "pos_"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strstr(suffix, words[i])) return true;
    return false;
}

static posenc_status scan(reader *r, posenc_model *m, gguf_found *f, posenc_error *err) {
    posenc_model_config *out = &m->config;
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
    key_set seen_keys = {0};
    f->alignment = 32; /* GGUF_DEFAULT_ALIGNMENT */
    posenc_status st = POSENC_OK;
    for (uint64_t i = 0; st == POSENC_OK && i < n_kv; i++) {
        uint32_t type;
        bool seen = false;
        st = read_string_key(r, key, err);
        if (st == POSENC_OK) st = key_set_add(&seen_keys, key, &seen, err);
        if (st == POSENC_OK && seen)
            st = posenc_fail_(err, POSENC_ERR_FORMAT, "GGUF has the key '%.64s' twice (ggml refuses such files)", key);
        if (st == POSENC_OK) st = rd_u32(r, &type, "a value type", err);
        if (st != POSENC_OK) break;
        kv_value *kept = NULL, arch = {0}, align = {0};
        if (strcmp(key, "general.architecture") == 0) {
            if (type != T_STRING) {
                st = posenc_fail_(err, POSENC_ERR_FORMAT, "GGUF general.architecture must be a string, has type %u", type);
                break;
            }
            kept = &arch;
        } else if (strcmp(key, "general.alignment") == 0) {
            if (type != T_U32) {
                st = posenc_fail_(err, POSENC_ERR_FORMAT, "GGUF general.alignment must be a uint32, has type %u", type);
                break;
            }
            kept = &align;
        } else {
            const char *dot = strchr(key, '.');
            for (int k = 0; dot && k < K_KNOWN; k++)
                if (strcmp(dot + 1, known_suffix[k]) == 0 && (size_t)(dot - key) < sizeof f->v[k].prefix) {
                    kept = &f->v[k];
                    config_copy_name_(kept->prefix, sizeof kept->prefix, key, (size_t)(dot - key));
                    bool want_string = k == K_SCALING_TYPE, want_array = k == K_DIM_SECTIONS;
                    if ((type == T_STRING) != want_string || (type == T_ARRAY) != want_array) {
                        st = posenc_fail_(err, POSENC_ERR_FORMAT, "GGUF key '%.64s' has the wrong type %u", key, type);
                        kept = NULL;
                    }
                    break;
                }
            if (!kept && dot && strncmp(key, "general.", 8) != 0 && strncmp(key, "tokenizer.", 10) != 0 &&
                position_key(dot + 1))
                config_note_(m->unused_keys, sizeof m->unused_keys, key);
        }
        if (st == POSENC_OK) st = value(r, type, key, kept, err);
        if (st == POSENC_OK && kept == &arch) {
            if (!config_copy_name_(out->architecture, sizeof out->architecture, arch.text, strlen(arch.text)))
                st = posenc_fail_(err, POSENC_ERR_FORMAT, "GGUF general.architecture is too long");
            f->has_arch = true;
        }
        if (st == POSENC_OK && kept == &align) {
            uint64_t a = (uint64_t)align.number;
            if (a == 0 || (a & (a - 1)) != 0)
                st = posenc_fail_(err, POSENC_ERR_FORMAT, "GGUF general.alignment %llu is not a power of two",
                                  (unsigned long long)a);
            f->alignment = a;
        }
    }
    free(seen_keys.slots);
    /* tensor infos: only the rope tensors matter; a short read ends the scan
     * (a header-only image), and then the data section is unknown */
    uint64_t i = 0;
    for (bool ok = true; st == POSENC_OK && ok && i < n_tensors; i += ok)
        st = tensor_info(r, key, f, &ok, err);
    free(key);
    if (st == POSENC_OK && i == n_tensors) {
        uint64_t pad = (f->alignment - r->pos % f->alignment) % f->alignment;
        f->data_known = pad <= UINT64_MAX - r->pos;
        f->data_start = r->pos + pad;
    }
    for (int t = 0; st == POSENC_OK && t < T_KINDS; t++) {
        rope_tensor *rt = &f->tensors[t];
        if (!rt->found) continue;
        RETURN_ERROR_IF(!f->data_known, err, POSENC_ERR_FORMAT,
                        "GGUF tensor '%s': the tensor list is truncated, so its data cannot be located",
                        rope_tensor_name[t]);
        RETURN_ERROR_IF(rt->offset % f->alignment != 0, err, POSENC_ERR_FORMAT,
                        "GGUF tensor '%s' has offset %llu, not a multiple of the alignment %llu", rope_tensor_name[t],
                        (unsigned long long)rt->offset, (unsigned long long)f->alignment);
        RETURN_ERROR_IF(rt->offset > UINT64_MAX - f->data_start, err, POSENC_ERR_FORMAT,
                        "GGUF tensor '%s' has offset %llu, outside the file", rope_tensor_name[t],
                        (unsigned long long)rt->offset);
        float *data = malloc(sizeof(float) * rt->elements);
        f->values[t] = malloc(sizeof(double) * rt->elements);
        if (!data || !f->values[t]) st = posenc_fail_(err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate a rope tensor");
        char what[64];
        snprintf(what, sizeof what, "tensor '%s'", rope_tensor_name[t]);
        if (st == POSENC_OK)
            st = read_at(r, f->data_start + rt->offset, data, rt->elements * sizeof(float), what, err);
        for (uint64_t e = 0; st == POSENC_OK && e < rt->elements; e++) {
            uint8_t *b = (uint8_t *)(data + e);
            double v = scalar_value(T_F32, b); /* the file is little-endian */
            if (!(isfinite(v) && v > 0))
                st = posenc_fail_(err, POSENC_ERR_FORMAT, "GGUF tensor '%s'[%llu] is %g; factors must be finite and > 0",
                                  rope_tensor_name[t], (unsigned long long)e, v);
            f->values[t][e] = v;
        }
        free(data);
    }
    return st;
}

/* The family: general.architecture, or the one assumed on purpose; an unknown one is refused by name. */
static posenc_status gguf_family(gguf_found *f, const posenc_config_options *options, posenc_model *m,
                                 const gguf_arch **found, posenc_error *err) {
    posenc_model_config *out = &m->config;
    RETURN_ERROR_IF(!f->has_arch, err, POSENC_ERR_FORMAT, "GGUF has no general.architecture key");
    const kv_value *v = f->v;
    const gguf_arch *arch = config_gguf_arch_find_(out->architecture);
    const char *assume = options ? options->assume_family : NULL;
    char keys[160] = "", close[96] = "";
#define HAS(k) (v[k].present && strcmp(v[k].prefix, out->architecture) == 0)
    for (int k = 0; k < K_KNOWN; k++)
        if (HAS(k)) config_note_(keys, sizeof keys, known_suffix[k]);
    if (assume) {
        const gguf_arch *a = config_gguf_arch_find_(assume);
        config_closest_families_(assume, true, close, sizeof close);
        RETURN_ERROR_IF(!a, err, POSENC_ERR_INVALID_ARGUMENT,
                        "assume_family '%.40s' is not a GGUF architecture posenc knows (closest: %s)", assume, close);
        m->assumed = 1;
        config_copy_name_(m->assumed_family, sizeof m->assumed_family, a->name, strlen(a->name));
        out->warnings |= POSENC_CONFIG_WARN_UNKNOWN_FAMILY;
        config_copy_name_(out->keys_used, sizeof out->keys_used, keys, strlen(keys));
        arch = a;
    }
    if (!arch) {
        config_closest_families_(out->architecture, true, close, sizeof close);
        return posenc_fail_(err, POSENC_ERR_UNSUPPORTED,
                            "GGUF general.architecture '%.40s' is not an architecture posenc knows (keys: "
                            "%.60s; closest: %s); read it as one on purpose with --assume ARCH",
                            out->architecture, keys[0] ? keys : "none", close);
    }
    out->layout = arch->layout;
    out->layout_known = 1;
    config_copy_name_(out->family, sizeof out->family, arch->name, strlen(arch->name));
    *found = arch;
#undef HAS
    return POSENC_OK;
}

/* Size fields under one rule with config.json's counts: an integer in [0, 2^30] (the layer
 * list then refuses more than POSENC_MODEL_MAX_LAYERS, as it does for config.json), and a
 * rope.dimension_count of at least 2 (a RoPE rotates a pair); a value outside is refused by
 * name, never read as 0 (absent) or replaced by the head size. */
static posenc_status check_sizes(const gguf_found *f, const posenc_model_config *out, posenc_error *err) {
    static const int keys[] = {K_HEAD_COUNT, K_EMBED, K_BLOCKS, K_KEY_LENGTH, K_DIM_COUNT};
    const kv_value *v = f->v;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        int k = keys[i];
        if (!v[k].present || strcmp(v[k].prefix, out->architecture) != 0) continue;
        double x = v[k].number;
        RETURN_ERROR_IF(!(x >= 0 && x <= (double)(1 << 30) && x == floor(x)), err, POSENC_ERR_FORMAT,
                        "GGUF %s.%s is %.0f: a size must be an integer in [0, %d] (the rule config.json's counts "
                        "follow)",
                        out->architecture, known_suffix[k], x, 1 << 30);
        RETURN_ERROR_IF(k == K_DIM_COUNT && x < 2, err, POSENC_ERR_FORMAT,
                        "GGUF %s.rope.dimension_count is %.0f: a RoPE rotates at least one pair (2 channels)",
                        out->architecture, x);
    }
    return POSENC_OK;
}

static posenc_status apply_found(gguf_found *f, const gguf_arch *arch, posenc_model_config *out, posenc_error *err) {
    const kv_value *v = f->v;
    unsigned flags = arch->flags;
    /* a file's keys carry its own architecture's prefix, also when read as another family */
#define HAS(k) (v[k].present && strcmp(v[k].prefix, out->architecture) == 0)
    posenc_rope_params *p = &out->rope;
    if (HAS(K_FREQ_BASE)) p->base = v[K_FREQ_BASE].number;
    else out->warnings |= POSENC_CONFIG_WARN_NO_THETA;
    const double dim_max = (double)(1 << 30);
    for (int k = K_FREQ_BASE; k < K_KNOWN; k++)
        if (HAS(k) && k != K_SCALING_TYPE && k != K_DIM_SECTIONS &&
            (!isfinite(v[k].number) || v[k].number < 0 || ((k >= K_CTX || k == K_ORIG_CTX) && v[k].number > dim_max * 8192)))
            return posenc_fail_(err, POSENC_ERR_FORMAT, "GGUF %s.%s has an out-of-range value %g", out->architecture,
                                known_suffix[k], v[k].number);
    out->max_position_embeddings = HAS(K_CTX) ? (int64_t)v[K_CTX].number : 0;
    out->num_attention_heads = HAS(K_HEAD_COUNT) && v[K_HEAD_COUNT].number <= dim_max ? (int32_t)v[K_HEAD_COUNT].number : 0;
    out->hidden_size = HAS(K_EMBED) && v[K_EMBED].number <= dim_max ? (int32_t)v[K_EMBED].number : 0;
    out->num_hidden_layers = HAS(K_BLOCKS) && v[K_BLOCKS].number <= dim_max ? (int32_t)v[K_BLOCKS].number : 0;
    if (HAS(K_KEY_LENGTH) && v[K_KEY_LENGTH].number <= dim_max) p->head_dim = (int32_t)v[K_KEY_LENGTH].number;
    else if (out->num_attention_heads > 0 && out->hidden_size > 0) p->head_dim = out->hidden_size / out->num_attention_heads;
    out->attention_head_dim = p->head_dim;
    if (HAS(K_DIM_COUNT) && v[K_DIM_COUNT].number <= dim_max) {
        p->rotary_dim = (int32_t)v[K_DIM_COUNT].number;
        if (p->head_dim == 0) p->head_dim = out->attention_head_dim = p->rotary_dim;
        RETURN_ERROR_IF(p->rotary_dim > p->head_dim, err, POSENC_ERR_FORMAT,
                        "GGUF %s.rope.dimension_count %d is larger than the head (%s.attention.key_length %d)",
                        out->architecture, p->rotary_dim, out->architecture, p->head_dim);
        /* llama.cpp's load_hparams refuses these files ("invalid n_rot"): never read a partial rotation */
        RETURN_ERROR_IF((flags & GGUF_ARCH_FULL_ROT) && p->rotary_dim != p->head_dim, err, POSENC_ERR_FORMAT,
                        "GGUF %s.rope.dimension_count %d differs from the head (%d): llama.cpp refuses %s files "
                        "whose rotation is not the whole head (invalid n_rot)",
                        out->architecture, p->rotary_dim, p->head_dim, out->architecture);
    }
    RETURN_ERROR_IF(p->head_dim == 0, err, POSENC_ERR_FORMAT,
                    "GGUF has no %s.attention.key_length, rope.dimension_count or embedding_length/head_count",
                    out->architecture);
    if ((flags & GGUF_ARCH_DEEPSEEK2) && p->rotary_dim > 0 && p->rotary_dim < p->head_dim) {
        /* MLA: the head is [nope | rope] (576 = kv_lora_rank 512 + 64 when absorbed): rotated channels last */
        out->rotary_offset = p->head_dim - p->rotary_dim;
        p->head_dim = p->rotary_dim;
        p->rotary_dim = 0;
        /* bounded like every other length (a larger uint32 would not fit the int: found by fuzz_config) */
        out->softmax_head_dim = HAS(K_KEY_LENGTH_MLA) && v[K_KEY_LENGTH_MLA].number <= dim_max
                                    ? (int32_t)v[K_KEY_LENGTH_MLA].number
                                    : out->attention_head_dim;
    }
    if (HAS(K_DIM_SECTIONS)) {
        int32_t pairs = 0;
        for (int i = 0; i < 4; i++) pairs += (int32_t)v[K_DIM_SECTIONS].ints[i];
        /* llama.cpp rotates glm4 / glm4moe with M-RoPE when the file carries sections (its
         * vision variants); posenc reads M-RoPE only where the architecture always has it */
        RETURN_ERROR_IF(pairs > 0 && !(flags & GGUF_ARCH_MROPE), err, POSENC_ERR_UNSUPPORTED,
                        "GGUF %s carries rope.dimension_sections (M-RoPE, %d pairs in sections): posenc reads "
                        "M-RoPE sections only for qwen2vl, qwen25vl, qwen3vl, qwen3vlmoe; it does not guess how %s "
                        "uses them",
                        out->architecture, pairs, out->architecture);
        for (int i = 0; i < 4; i++) out->mrope_sections[i] = v[K_DIM_SECTIONS].ints[i];
        out->mrope_interleaved = (flags & GGUF_ARCH_IMROPE) != 0; /* qwen3vl: LLAMA_ROPE_TYPE_IMROPE */
    }
    /* llama.cpp's qwen3vl loader requires the sections (get_key_or_arr(..., true)) */
    RETURN_ERROR_IF((flags & GGUF_ARCH_IMROPE) && !out->mrope_sections[0] && !out->mrope_sections[1] &&
                        !out->mrope_sections[2],
                    err, POSENC_ERR_FORMAT, "GGUF %s has no %s.rope.dimension_sections: llama.cpp refuses to load it "
                    "(IMROPE needs the sections)", out->architecture, out->architecture);
    p->max_position = out->max_position_embeddings;
    const char *type = HAS(K_SCALING_TYPE) ? v[K_SCALING_TYPE].text : HAS(K_SCALE_LINEAR) ? "linear" : "none";
    config_copy_name_(out->scaling_name, sizeof out->scaling_name, type, strnlen(type, sizeof out->scaling_name - 1));
    if (strcmp(type, "none") == 0) p->scaling = POSENC_ROPE_NONE;
    else if (strcmp(type, "linear") == 0) p->scaling = POSENC_ROPE_LINEAR;
    else if (strcmp(type, "yarn") == 0) p->scaling = POSENC_ROPE_YARN;
    else if (strcmp(type, "longrope") == 0) p->scaling = POSENC_ROPE_LONGROPE;
    else
        return posenc_fail_(err, POSENC_ERR_UNSUPPORTED,
                            "GGUF %s.rope.scaling.type is '%.32s', an unknown RoPE scaling type (known: none, linear, "
                            "yarn, longrope)", out->architecture, type);
    unsigned given = 0;
    if (HAS(K_FACTOR)) p->factor = v[K_FACTOR].number, given |= POSENC_ROPE_GIVEN_FACTOR;
    else if (HAS(K_SCALE_LINEAR)) p->factor = v[K_SCALE_LINEAR].number, given |= POSENC_ROPE_GIVEN_FACTOR;
    if (p->scaling != POSENC_ROPE_NONE && HAS(K_FACTOR) && v[K_FACTOR].number == 0) given &= ~POSENC_ROPE_GIVEN_FACTOR;
    if (HAS(K_ORIG_CTX) && v[K_ORIG_CTX].number > 0)
        p->original_max_position = (int64_t)v[K_ORIG_CTX].number, given |= POSENC_ROPE_GIVEN_ORIGINAL;
    bool freqs = f->tensors[T_FREQS].found, lists = f->tensors[T_LONG].found || f->tensors[T_SHORT].found;
    RETURN_ERROR_IF(lists && !(f->tensors[T_LONG].found && f->tensors[T_SHORT].found), err, POSENC_ERR_FORMAT,
                    "GGUF has %s but not %s", f->tensors[T_LONG].found ? "rope_factors_long.weight" : "rope_factors_short.weight",
                    f->tensors[T_LONG].found ? "rope_factors_short.weight" : "rope_factors_long.weight");
    RETURN_ERROR_IF(freqs && lists, err, POSENC_ERR_FORMAT,
                    "GGUF has both rope_freqs.weight and rope_factors_long/short.weight");
    RETURN_ERROR_IF(lists && p->scaling != POSENC_ROPE_NONE && p->scaling != POSENC_ROPE_LONGROPE, err,
                    POSENC_ERR_UNSUPPORTED, "GGUF has rope_factors_long/short.weight with %s.rope.scaling.type '%s'",
                    out->architecture, type);
    RETURN_ERROR_IF(freqs && p->scaling != POSENC_ROPE_NONE, err, POSENC_ERR_UNSUPPORTED,
                    "GGUF has rope_freqs.weight together with %s.rope.scaling.type '%s'; posenc applies the per-pair "
                    "divisors only to unscaled RoPE", out->architecture, type);
    int32_t r = 0;
    if (p->scaling == POSENC_ROPE_LONGROPE && !lists)
        return posenc_fail_(err, POSENC_ERR_FORMAT,
                            "GGUF %s.rope.scaling.type is 'longrope' but the rope_factors_long/short.weight tensors "
                            "are missing", out->architecture);
    if (freqs || lists) {
        posenc_rope_params probe = *p;
        probe.scaling = POSENC_ROPE_NONE;
        FORWARD_IF_ERROR(posenc_rope_check(&probe, &r, err));
        int kinds[2] = {freqs ? T_FREQS : T_SHORT, freqs ? T_FREQS : T_LONG};
        for (int i = 0; i < 2; i++)
            RETURN_ERROR_IF(f->tensors[kinds[i]].elements != (uint64_t)(r / 2), err, POSENC_ERR_FORMAT,
                            "GGUF tensor '%s' has %llu entries; rotary dim %d needs %d (one per pair)",
                            rope_tensor_name[kinds[i]], (unsigned long long)f->tensors[kinds[i]].elements, r, r / 2);
        out->factor_storage = malloc(sizeof(double) * (size_t)r);
        RETURN_ERROR_IF(!out->factor_storage, err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate rope factors");
        memcpy(out->factor_storage, f->values[kinds[0]], sizeof(double) * (size_t)(r / 2));
        memcpy(out->factor_storage + r / 2, f->values[kinds[1]], sizeof(double) * (size_t)(r / 2));
        p->short_factors = out->factor_storage;
        p->long_factors = out->factor_storage + r / 2;
        p->factors_count = (size_t)(r / 2);
        p->scaling = POSENC_ROPE_LONGROPE;
        if (freqs) { /* llama.cpp's Llama 3.1: theta_k / rope_freqs[k] at every length, magnitude 1 */
            out->warnings |= POSENC_CONFIG_WARN_FREQ_TENSOR;
            p->factor = 1.0;
            p->attention_factor = 1.0;
            p->longrope_select = POSENC_LONGROPE_SHORT;
            p->original_max_position = out->max_position_embeddings > 0 ? out->max_position_embeddings : 1;
            given = POSENC_ROPE_GIVEN_FACTOR | POSENC_ROPE_GIVEN_ORIGINAL;
        } else { /* Phi-3: factor = context / original, magnitude = rope.scaling.attn_factor if written */
            config_copy_name_(out->scaling_name, sizeof out->scaling_name, "(rope_factors tensors)", 22);
            if (HAS(K_ATTN_FACTOR) && v[K_ATTN_FACTOR].number > 0) p->attention_factor = v[K_ATTN_FACTOR].number;
            if (given & POSENC_ROPE_GIVEN_ORIGINAL) given |= POSENC_ROPE_GIVEN_CONTEXT_RATIO;
        }
    }
    if (p->scaling == POSENC_ROPE_YARN) {
        if (HAS(K_BETA_FAST) && v[K_BETA_FAST].number != 0) p->beta_fast = v[K_BETA_FAST].number;
        if (HAS(K_BETA_SLOW) && v[K_BETA_SLOW].number != 0) p->beta_slow = v[K_BETA_SLOW].number;
        RETURN_ERROR_IF(HAS(K_EXT_FACTOR) && v[K_EXT_FACTOR].number != 1.0, err, POSENC_ERR_UNSUPPORTED,
                        "GGUF %s.rope.scaling.yarn_ext_factor is %g; posenc's YaRN is the full ramp (1)",
                        out->architecture, v[K_EXT_FACTOR].number);
        if (HAS(K_LOG_MUL) && v[K_LOG_MUL].number > 0) {
            /* the converter writes 0.1 * mscale_all_dim; mistral3 writes mscale_all_dim itself */
            p->mscale_all_dim = (flags & GGUF_ARCH_RAW_LOG_MUL) ? v[K_LOG_MUL].number : v[K_LOG_MUL].number / 0.1;
            /* llama.cpp assumes mscale 1, except deepseek2 (mscale = mscale_all_dim); Ministral 3 has both 1 */
            p->mscale = (flags & (GGUF_ARCH_DEEPSEEK2 | GGUF_ARCH_RAW_LOG_MUL)) ? p->mscale_all_dim : 1.0;
        }
    }
    out->rope_given = given;
#undef HAS
    return POSENC_OK;
}

/* llama.cpp's set_swa_pattern(n) per arch: gemma2 2, gemma3 6, olmo2 (OLMo 3) 4. */
static int32_t swa_pattern(unsigned flags) {
    return (flags & GGUF_ARCH_GEMMA3) ? 6 : (flags & GGUF_ARCH_GEMMA2) ? 2 : 4;
}

/* After resolving: the YaRN magnitude keys (they scale the derived value), layer kinds, softmax. */
static posenc_status apply_after(const gguf_found *f, const gguf_arch *arch, posenc_model_config *out,
                                 posenc_error *err) {
    const kv_value *v = f->v;
    unsigned flags = arch->flags;
    posenc_rope_params *p = &out->rope;
#define HAS(k) (v[k].present && strcmp(v[k].prefix, out->architecture) == 0)
    if (p->scaling == POSENC_ROPE_YARN && (HAS(K_YARN_ATTN_FACTOR) || HAS(K_ATTN_FACTOR))) {
        double derived = 1.0;
        int32_t r = 0;
        FORWARD_IF_ERROR(posenc_rope_check(p, &r, err));
        double *inv = malloc(sizeof *inv * (size_t)(r / 2 > 0 ? r / 2 : 1));
        RETURN_ERROR_IF(!inv, err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %d frequencies", r / 2);
        posenc_status st = posenc_rope_frequencies(p, 0, inv, (size_t)(r / 2), &derived, err);
        free(inv);
        FORWARD_IF_ERROR(st);
        /* ggml multiplies its attn_factor by (1 + 0.1 ln factor) itself */
        if (HAS(K_YARN_ATTN_FACTOR) && v[K_YARN_ATTN_FACTOR].number > 0)
            derived = v[K_YARN_ATTN_FACTOR].number * (1.0 + 0.1 * log(p->factor));
        if (HAS(K_ATTN_FACTOR) && v[K_ATTN_FACTOR].number > 0) derived *= v[K_ATTN_FACTOR].number;
        p->attention_factor = derived;
    }
    if ((flags & GGUF_ARCH_DEEPSEEK2) && p->scaling == POSENC_ROPE_YARN && p->mscale_all_dim > 0) {
        double m = p->factor <= 1.0 ? 1.0 : 0.1 * p->mscale_all_dim * log(p->factor) + 1.0;
        out->softmax_scale_factor = m * m;
    }
    /* llama.cpp's load_hparams: gemma2 always sets its SWA pattern; gemma3 and olmo2 only when
     * attention.sliding_window > 0 (else every layer is full attention with the file's scaling) */
    bool window = HAS(K_SLIDING_WINDOW) && v[K_SLIDING_WINDOW].number > 0;
    bool olmo_swa = (flags & GGUF_ARCH_OLMO2_SWA) && window;
    if ((flags & GGUF_ARCH_GEMMA2) || ((flags & GGUF_ARCH_GEMMA3) && window) || olmo_swa) {
        /* llama.cpp: layer i is full attention iff (i + 1) % pattern == 0 */
        int32_t pattern = swa_pattern(flags), layers = out->num_hidden_layers;
        int32_t local = layers - layers / pattern;
        out->layer_type_count = 2;
        posenc_config_layer_type *g = &out->layer_types[0], *l = &out->layer_types[1];
        snprintf(g->name, sizeof g->name, "full_attention");
        snprintf(l->name, sizeof l->name, "sliding_attention");
        g->layers = layers - local;
        l->layers = local;
        g->rope = *p;
        l->rope = *p;
        /* without the key, llama.cpp's loader keeps its own default (gemma2: 4096) */
        l->sliding_window = HAS(K_SLIDING_WINDOW) ? (int64_t)v[K_SLIDING_WINDOW].number : arch->swa_default;
        if (flags & GGUF_ARCH_GEMMA3) {
            l->rope.scaling = POSENC_ROPE_NONE;
            l->rope.factor = 1.0;
            l->rope.attention_factor = 0;
            l->rope.short_factors = l->rope.long_factors = NULL;
            l->rope.factors_count = 0;
            l->rope.base = HAS(K_FREQ_BASE_SWA) ? v[K_FREQ_BASE_SWA].number : 10000.0;
            FORWARD_IF_ERROR(posenc_rope_check(&l->rope, NULL, err));
        }
        if (olmo_swa) {
            /* llama.cpp's olmo2 graph (src/models/olmo2.cpp): the SWA layers call ggml_rope_ext with
             * freq_base, freq_scale 1, ext_factor 0, attn_factor 1: plain RoPE at the file's base
             * (rope.freq_base_swa is loaded but that graph does not use it) */
            l->rope.scaling = POSENC_ROPE_NONE;
            l->rope.factor = 1.0;
            l->rope.attention_factor = 0;
            l->rope.short_factors = l->rope.long_factors = NULL;
            l->rope.factors_count = 0;
            FORWARD_IF_ERROR(posenc_rope_check(&l->rope, NULL, err));
        }
    }
#undef HAS
    return POSENC_OK;
}

/* llama.cpp's attention temperature (llm_graph_input_attn_temp: q x (log(floor((pos + offset) / floor_scale) + 1) *
 * scale + 1)), per llama_model::load_hparams: mistral3 reads attention.temperature_scale (0 = off) with floor_scale =
 * n_ctx_orig_yarn (rope.scaling.original_context_length, else context_length; 0 is an error there), offset 0, on every
 * layer; llama4 hard-codes 0.1f, 8192, offset 1 on its NoPE layers unless attention.sliding_window is 0 (then no NoPE
 * layer and no temperature). Any other architecture carrying the key is refused: how its graph uses it is not
 * known here. */
static posenc_status gguf_query_scale(const gguf_found *f, const gguf_arch *arch, posenc_model *m, posenc_error *err) {
    const kv_value *v = f->v;
    posenc_model_config *out = &m->config;
#define HAS(k) (v[k].present && strcmp(v[k].prefix, out->architecture) == 0)
    posenc_query_scale *qs = &m->query_scale;
    bool mistral3 = strcmp(arch->name, "mistral3") == 0, llama4 = strcmp(arch->name, "llama4") == 0;
    RETURN_ERROR_IF(HAS(K_TEMP_SCALE) && v[K_TEMP_SCALE].number != 0 && !mistral3, err, POSENC_ERR_UNSUPPORTED,
                    "GGUF %s.attention.temperature_scale %g: a position-dependent query scale posenc reads for "
                    "mistral3 only (how llama.cpp's %s graph applies it is not known here)", out->architecture,
                    v[K_TEMP_SCALE].number, arch->name);
    if (mistral3 && HAS(K_TEMP_SCALE) && v[K_TEMP_SCALE].number != 0) {
        int64_t floor_scale = HAS(K_ORIG_CTX) ? (int64_t)v[K_ORIG_CTX].number : HAS(K_CTX) ? (int64_t)v[K_CTX].number : 0;
        RETURN_ERROR_IF(floor_scale <= 0, err, POSENC_ERR_FORMAT,
                        "GGUF %s.attention.temperature_scale needs rope.scaling.original_context_length or "
                        "context_length (llama.cpp: invalid n_ctx_orig_yarn for attention temperature scaling)",
                        out->architecture);
        qs->layers = POSENC_QUERY_SCALE_ALL;
        qs->beta = v[K_TEMP_SCALE].number;
        qs->divisor = floor_scale;
        qs->shift = 0;
    }
    bool window_off = HAS(K_SLIDING_WINDOW) && v[K_SLIDING_WINDOW].number == 0;
    if (llama4 && !window_off) {
        qs->layers = POSENC_QUERY_SCALE_NOPE;
        qs->beta = (double)0.1f; /* llama.cpp's float constant, as its graph uses it */
        qs->divisor = 8192;
        qs->shift = 1;
    }
#undef HAS
    return POSENC_OK;
}

/* llama.cpp's per-layer rules: which layers rotate, which are ALiBi. */
static posenc_status gguf_layers(const gguf_found *f, const gguf_arch *arch, posenc_model *m, posenc_error *err) {
    const kv_value *v = f->v;
    posenc_model_config *out = &m->config;
    int32_t layers = out->num_hidden_layers;
#define HAS(k) (v[k].present && strcmp(v[k].prefix, out->architecture) == 0)
    FORWARD_IF_ERROR(config_layers_alloc_(m, layers, err));
    bool alibi = (arch->flags & GGUF_ARCH_ALIBI) || ((arch->flags & GGUF_ARCH_BAICHUAN) && layers == 40);
    if (alibi) {
        /* llama.cpp: bloom/baichuan-13B use 8; mpt reads attention.max_alibi_bias */
        double bias = HAS(K_MAX_ALIBI) && v[K_MAX_ALIBI].number > 0 ? v[K_MAX_ALIBI].number : 8.0;
        FORWARD_IF_ERROR(config_alibi_(m, out->num_attention_heads, bias, "GGUF", err));
        for (int32_t i = 0; i < layers; i++) config_layer_set_(m, i, POSENC_LAYER_ALIBI, -1, "attention", 0);
        m->rope_count = 0;
        return POSENC_OK;
    }
    config_ropes_from_config_(m);
    int64_t window = HAS(K_SLIDING_WINDOW) ? (int64_t)v[K_SLIDING_WINDOW].number : 0;
    /* granite's graph (llm_build_granite) rotates only when rope.scaling.finetuned, default true */
    bool rope_off = (arch->flags & GGUF_ARCH_ROPE_SWITCH) && HAS(K_FINETUNED) && v[K_FINETUNED].number == 0;
    for (int32_t i = 0; i < layers; i++) {
        if (rope_off) {
            config_layer_set_(m, i, POSENC_LAYER_NOPE, 0, "attention", 0);
        } else if (out->layer_type_count == 2) { /* gemma2/3, olmo2 SWA: full iff (i + 1) % pattern == 0 */
            int32_t pattern = swa_pattern(arch->flags);
            bool full = (i + 1) % pattern == 0;
            config_layer_set_(m, i, POSENC_LAYER_ROPE, full ? 0 : 1, full ? "full_attention" : "sliding_attention",
                              full ? 0 : out->layer_types[1].sliding_window);
        } else if (arch->flags & GGUF_ARCH_NOPE_STEP) {
            /* llama4 with attention.sliding_window 0: n_no_rope_layer_step = n_layer (RoPE everywhere) */
            bool every = strcmp(arch->name, "llama4") == 0 && HAS(K_SLIDING_WINDOW) && window == 0;
            bool rope = every || (i + 1) % 4 != 0;
            config_layer_set_(m, i, rope ? POSENC_LAYER_ROPE : POSENC_LAYER_NOPE, 0, "attention", 0);
        } else if (arch->flags & GGUF_ARCH_SWA_ROPE_ONLY) { /* cohere2: set_swa_pattern(4) */
            bool swa = (i + 1) % 4 != 0;
            config_layer_set_(m, i, swa ? POSENC_LAYER_ROPE : POSENC_LAYER_NOPE, 0,
                              swa ? "sliding_attention" : "full_attention", swa ? window : 0);
        } else {
            config_layer_set_(m, i, POSENC_LAYER_ROPE, 0, "attention", 0);
        }
    }
    FORWARD_IF_ERROR(gguf_query_scale(f, arch, m, err));
#undef HAS
    return POSENC_OK;
}

static posenc_status parse_reader(reader *r, const posenc_config_options *options, posenc_model *m,
                                  posenc_error *err) {
    posenc_model_config *out = &m->config;
    gguf_found *f = calloc(1, sizeof *f);
    RETURN_ERROR_IF(!f, err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate the GGUF scan state");
    const gguf_arch *arch = NULL;
    posenc_status st = scan(r, m, f, err);
    if (st == POSENC_OK) st = gguf_family(f, options, m, &arch, err);
    bool alibi = arch && ((arch->flags & GGUF_ARCH_ALIBI) ||
                          ((arch->flags & GGUF_ARCH_BAICHUAN) && f->v[K_BLOCKS].present &&
                           strcmp(f->v[K_BLOCKS].prefix, out->architecture) == 0 && f->v[K_BLOCKS].number == 40));
    if (st == POSENC_OK) st = check_sizes(f, out, err);
    if (alibi && st == POSENC_OK) { /* no RoPE keys to read: the counts only */
        const kv_value *v = f->v;
#define HAS(k) (v[k].present && strcmp(v[k].prefix, out->architecture) == 0)
        const double dim_max = (double)(1 << 30);
        out->num_attention_heads = HAS(K_HEAD_COUNT) && v[K_HEAD_COUNT].number <= dim_max ? (int32_t)v[K_HEAD_COUNT].number : 0;
        out->hidden_size = HAS(K_EMBED) && v[K_EMBED].number <= dim_max ? (int32_t)v[K_EMBED].number : 0;
        out->num_hidden_layers = HAS(K_BLOCKS) && v[K_BLOCKS].number <= dim_max ? (int32_t)v[K_BLOCKS].number : 0;
        out->max_position_embeddings = HAS(K_CTX) && v[K_CTX].number <= dim_max * 8192 ? (int64_t)v[K_CTX].number : 0;
#undef HAS
    } else {
        if (st == POSENC_OK) st = apply_found(f, arch, out, err);
        if (st == POSENC_OK) st = config_finish_(out, "GGUF", err);
        if (st == POSENC_OK) st = apply_after(f, arch, out, err);
    }
    if (st == POSENC_OK) st = gguf_layers(f, arch, m, err);
    if (st == POSENC_OK && m->unused_keys[0]) out->warnings |= POSENC_CONFIG_WARN_UNUSED_KEYS;
    for (int t = 0; t < T_KINDS; t++) free(f->values[t]);
    free(f);
    return st;
}

posenc_status config_gguf_parse_(const void *bytes, size_t size, FILE *file, const posenc_config_options *options,
                                 posenc_model *out, posenc_error *err) {
    reader r = {bytes, file, size, 0};
    return parse_reader(&r, options, out, err);
}
