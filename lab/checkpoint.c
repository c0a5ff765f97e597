#define _POSIX_C_SOURCE 200809L
/* checkpoint.c: safetensors checkpoints. Layout: every parameter tensor under
 * its name (docs/lab.md lists them), then the AdamW moments as
 * "adam.m.<name>" / "adam.v.<name>", all F32 little-endian; __metadata__ holds
 * format "posenc-lab", the posenc version, the model config as key=value text
 * and the optimizer step. Written with posenc_file_write_atomic (temporary
 * file, fsync, rename), read with the library's safetensors parser; a load
 * fills temporary buffers and commits only when every tensor checked out. */
#include "lab_internal.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *buf;
    size_t len, cap;
    int oom;
} text;

static void put(text *t, const char *s) {
    size_t n = strlen(s);
    if (t->len + n + 1 > t->cap) {
        size_t cap = (t->cap + n + 1) * 2;
        char *nb = realloc(t->buf, cap);
        if (!nb) {
            t->oom = 1;
            return;
        }
        t->buf = nb;
        t->cap = cap;
    }
    memcpy(t->buf + t->len, s, n + 1);
    t->len += n;
}

static void put_tensor(text *t, const char *prefix, const lab_tensor_info *info, size_t begin) {
    char tmp[512];
    snprintf(tmp, sizeof tmp, ",\"%s%s\":{\"dtype\":\"F32\",\"shape\":[", prefix, info->name);
    put(t, tmp);
    for (int d = 0; d < info->ndim; d++) {
        snprintf(tmp, sizeof tmp, "%s%zu", d ? "," : "", info->shape[d]);
        put(t, tmp);
    }
    snprintf(tmp, sizeof tmp, "],\"data_offsets\":[%zu,%zu]}", begin, begin + info->count * sizeof(float));
    put(t, tmp);
}

posenc_status lab_checkpoint_save(const lab_model *m, const char *path, posenc_error *err) {
    if (!path) return lab_fail(err, POSENC_ERR_NULL_POINTER, "checkpoint path is NULL");
    char cfg[2048], tmp[2600];
    lab_config_format(&m->cfg, cfg, sizeof cfg);
    text t = {0};
    snprintf(tmp, sizeof tmp,
             "{\"__metadata__\":{\"format\":\"posenc-lab\",\"posenc_version\":\"%s\",\"config\":\"%s\",\"step\":\"%lld\"}",
             posenc_version(), cfg, (long long)m->step);
    put(&t, tmp);
    size_t bytes = m->param_count * sizeof(float);
    const char *prefixes[3] = {"", "adam.m.", "adam.v."};
    for (int p = 0; p < 3; p++)
        for (size_t i = 0; i < m->tensor_count; i++)
            put_tensor(&t, prefixes[p], &m->order[i]->info, (size_t)p * bytes + m->order[i]->offset * sizeof(float));
    put(&t, "}");
    while (!t.oom && t.len % 8 != 0) put(&t, " "); /* data aligned to 8 bytes */
    if (t.oom) {
        free(t.buf);
        return lab_fail(err, POSENC_ERR_OUT_OF_MEMORY, "out of memory writing the checkpoint header");
    }
    uint8_t len8[8];
    uint64_t n = t.len;
    for (int i = 0; i < 8; i++) len8[i] = (uint8_t)(n >> (8 * i));
    const void *parts[5] = {len8, t.buf, m->params, m->adam_m, m->adam_v};
    size_t sizes[5] = {8, t.len, bytes, bytes, bytes};
    posenc_status st = posenc_file_write_atomic(path, parts, sizes, 5, err);
    free(t.buf);
    return st;
}

/* err's message prefixed with "PATH: WHAT" (the checkpoint it is about); returns st. */
static posenc_status prefix_error(posenc_error *err, posenc_status st, const char *path, const char *what) {
    if (err) {
        char msg[POSENC_ERROR_MESSAGE_SIZE];
        snprintf(msg, sizeof msg, "%s", err->message);
        lab_fail(err, st, "%s: %s%s", path, what, msg);
    }
    return st;
}

/* The first field of key=value text given twice (its key in out, returns 1), or 0. A
 * checkpoint's config is written with each field once: a second one means an
 * edited file, and which of the two counts would be a guess. (The text parser
 * itself lets a later field override, which the lab's tests build configs with.) */
static int duplicated_field(const char *config_text, char *out, size_t size) {
    for (const char *a = config_text; *a; a += strcspn(a, " "), a += strspn(a, " ")) {
        size_t ka = strcspn(a, "= ");
        for (const char *b = a + strcspn(a, " "); *b; b += strcspn(b, " ")) {
            b += strspn(b, " ");
            size_t kb = strcspn(b, "= ");
            if (*b && ka == kb && strncmp(a, b, ka) == 0) {
                snprintf(out, size, "%.*s", (int)(ka < 40 ? ka : 40), a);
                return 1;
            }
        }
    }
    return 0;
}

/* Metadata of a checkpoint image: config text and step; *data_bytes = bytes after the header. */
static posenc_status read_metadata(const char *path, const uint8_t *bytes, size_t size, lab_config *cfg, int64_t *step,
                                   size_t *data_bytes, posenc_error *err) {
    if (size < 8) return lab_fail(err, POSENC_ERR_FORMAT, "%s: %zu bytes is too short for a safetensors file", path, size);
    uint64_t n = 0;
    for (int i = 0; i < 8; i++) n |= (uint64_t)bytes[i] << (8 * i);
    if (n > size - 8) return lab_fail(err, POSENC_ERR_FORMAT, "%s: header length %" PRIu64 " runs past the end of the file (%zu bytes): truncated?", path, n, size);
    *data_bytes = size - 8 - (size_t)n;
    cJSON *root = cJSON_ParseWithLength((const char *)bytes + 8, (size_t)n);
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return lab_fail(err, POSENC_ERR_FORMAT, "%s: the safetensors header is not a JSON object", path);
    }
    posenc_status st = POSENC_OK;
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(root, "__metadata__");
    cJSON *format = cJSON_IsObject(meta) ? cJSON_GetObjectItemCaseSensitive(meta, "format") : NULL;
    cJSON *config = cJSON_IsObject(meta) ? cJSON_GetObjectItemCaseSensitive(meta, "config") : NULL;
    cJSON *stp = cJSON_IsObject(meta) ? cJSON_GetObjectItemCaseSensitive(meta, "step") : NULL;
    if (!cJSON_IsObject(meta)) {
        st = lab_fail(err, POSENC_ERR_FORMAT, "%s: not a posenc lab checkpoint (no __metadata__ object)", path);
    } else if (!cJSON_IsString(format) || strcmp(format->valuestring, "posenc-lab") != 0) {
        st = lab_fail(err, POSENC_ERR_FORMAT, "%s: not a posenc lab checkpoint (__metadata__.format is not \"posenc-lab\")", path);
    } else if (!cJSON_IsString(config)) {
        st = lab_fail(err, POSENC_ERR_FORMAT, "%s: __metadata__.config is missing or not a string", path);
    } else if (!cJSON_IsString(stp)) {
        st = lab_fail(err, POSENC_ERR_FORMAT, "%s: __metadata__.step is missing or not a string", path);
    } else {
        char dup[48];
        /* (a text over 2 KiB is refused by the parser below: the quadratic scan stays small) */
        if (strlen(config->valuestring) < 2048 && duplicated_field(config->valuestring, dup, sizeof dup))
            st = lab_fail(err, POSENC_ERR_FORMAT, "%s: __metadata__.config: config field '%s' is given twice", path, dup);
        else if (lab_config_parse_text(config->valuestring, cfg, err) != POSENC_OK)
            st = prefix_error(err, POSENC_ERR_FORMAT, path, "__metadata__.config: ");
        char *end = NULL;
        errno = 0;
        long long s = strtoll(stp->valuestring, &end, 10);
        if (!st && (end == stp->valuestring || *end || errno == ERANGE || s < 0))
            st = lab_fail(err, POSENC_ERR_FORMAT, "%s: __metadata__.step '%.40s' is not an integer >= 0", path, stp->valuestring);
        *step = s;
    }
    cJSON_Delete(root);
    return st;
}

/* The config's tensors (parameters and both moments, float32) must fit in the
 * bytes the file holds: checked before a model of that size is allocated. */
static posenc_status check_size(const char *path, const lab_config *cfg, size_t data_bytes, posenc_error *err) {
    size_t n = lab_config_param_count(cfg);
    if (n == SIZE_MAX) return lab_fail(err, POSENC_ERR_OUT_OF_MEMORY, "out of memory loading %s", path);
    if (n > data_bytes / (3 * sizeof(float)))
        return lab_fail(err, POSENC_ERR_FORMAT,
                        "%s: __metadata__.config describes %zu parameters (%zu bytes with the AdamW moments) but the "
                        "file holds %zu bytes of tensor data: truncated or not this model's checkpoint",
                        path, n, n <= SIZE_MAX / 12 ? n * 12 : SIZE_MAX, data_bytes);
    return POSENC_OK;
}

/* First differing config field, for the mismatch message. */
static void config_difference(const lab_config *a, const lab_config *b, char *out, size_t size) {
    char ta[2048], tb[2048];
    lab_config_format(a, ta, sizeof ta);
    lab_config_format(b, tb, sizeof tb);
    char *sa = NULL, *sb = NULL;
    for (char *x = strtok_r(ta, " ", &sa), *y = strtok_r(tb, " ", &sb); x && y;
         x = strtok_r(NULL, " ", &sa), y = strtok_r(NULL, " ", &sb))
        if (strcmp(x, y) != 0) {
            snprintf(out, size, "file has %s, model has %s", x, y);
            return;
        }
    snprintf(out, size, "configs differ");
}

static void shape_text(int ndim, const size_t *shape, char *out, size_t size) {
    size_t n = (size_t)snprintf(out, size, "[");
    for (int d = 0; d < ndim && n < size; d++) n += (size_t)snprintf(out + n, size - n, "%s%zu", d ? ", " : "", shape[d]);
    if (n < size) snprintf(out + n, size - n, "]");
}

static posenc_status load_image(lab_model *m, const char *path, const uint8_t *bytes, size_t size, posenc_error *err) {
    lab_config cfg;
    int64_t step = 0;
    size_t data_bytes = 0;
    posenc_status st = read_metadata(path, bytes, size, &cfg, &step, &data_bytes, err);
    if (st) return st;
    char a[2048], b[2048];
    lab_config_format(&cfg, a, sizeof a);
    lab_config_format(&m->cfg, b, sizeof b);
    if (strcmp(a, b) != 0) {
        char diff[600];
        config_difference(&cfg, &m->cfg, diff, sizeof diff);
        return lab_fail(err, POSENC_ERR_INVALID_ARGUMENT, "%s: checkpoint is for another configuration (%s)", path, diff);
    }
    size_t n = m->param_count, count = 3 * m->tensor_count;
    float *staged = malloc(3 * n * sizeof(float));
    /* every tensor in one pass over the header (parsed once, not once per tensor) */
    char(*names)[512] = malloc(count * sizeof *names);
    const char **name_list = malloc(count * sizeof *name_list);
    posenc_array *arrays = calloc(count, sizeof *arrays);
    if (!staged || !names || !name_list || !arrays) {
        free(staged), free(names), free(name_list), free(arrays);
        return lab_fail(err, POSENC_ERR_OUT_OF_MEMORY, "out of memory loading %s", path);
    }
    const char *prefixes[3] = {"", "adam.m.", "adam.v."};
    for (int p = 0; p < 3; p++)
        for (size_t i = 0; i < m->tensor_count; i++) {
            size_t k = (size_t)p * m->tensor_count + i;
            snprintf(names[k], sizeof names[k], "%s%s", prefixes[p], m->order[i]->info.name);
            name_list[k] = names[k];
        }
    st = posenc_safetensors_parse_many(bytes, size, name_list, count, 0, arrays, err);
    if (st) prefix_error(err, st, path, "");
    for (int p = 0; p < 3 && !st; p++)
        for (size_t i = 0; i < m->tensor_count && !st; i++) {
            const lab_tensor_info *info = &m->order[i]->info;
            const char *name = names[(size_t)p * m->tensor_count + i];
            const posenc_array arr = arrays[(size_t)p * m->tensor_count + i];
            int same = arr.dtype == POSENC_DTYPE_F32 && arr.ndim == info->ndim;
            for (int d = 0; same && d < info->ndim; d++) same = arr.shape[d] == info->shape[d];
            if (!same) {
                char got[160], want[160];
                shape_text(arr.ndim, arr.shape, got, sizeof got);
                shape_text(info->ndim, info->shape, want, sizeof want);
                st = lab_fail(err, POSENC_ERR_FORMAT, "%s: tensor '%s' is %s %s, expected F32 %s", path, name,
                              posenc_dtype_name(arr.dtype), got, want);
            }
            else
                memcpy(staged + (size_t)p * n + m->order[i]->offset, arr.data, info->count * sizeof(float));
            /* a NaN or inf weight, or a negative second moment (its square root is the step's divisor),
             * would only surface as a NaN loss steps later */
            const float *v = staged + (size_t)p * n + m->order[i]->offset;
            for (size_t k = 0; !st && k < info->count; k++)
                if (!isfinite(v[k]) || (p == 2 && v[k] < 0))
                    st = lab_fail(err, POSENC_ERR_FORMAT, "%s: tensor '%s' element %zu is %g (%s)", path, name, k,
                                  (double)v[k], p == 2 ? "second moments must be finite and >= 0" : "values must be finite");
        }
    for (size_t k = 0; k < count; k++) posenc_array_free(&arrays[k]);
    free(arrays), free(name_list), free(names);
    if (!st) {
        memcpy(m->params, staged, n * sizeof(float));
        memcpy(m->adam_m, staged + n, n * sizeof(float));
        memcpy(m->adam_v, staged + 2 * n, n * sizeof(float));
        m->step = step;
    }
    free(staged);
    return st;
}

posenc_status lab_checkpoint_load_into(lab_model *m, const char *path, posenc_error *err) {
    if (!m || !path) return lab_fail(err, POSENC_ERR_NULL_POINTER, "model or path is NULL");
    void *bytes = NULL;
    size_t size = 0;
    posenc_status st = posenc_file_read_all(path, 0, &bytes, &size, err);
    if (st) return st;
    st = load_image(m, path, bytes, size, err);
    free(bytes);
    return st;
}

posenc_status lab_checkpoint_load_memory(const void *bytes, size_t size, const char *name, int32_t threads,
                                         lab_model **out, posenc_error *err) {
    if (!out) return lab_fail(err, POSENC_ERR_NULL_POINTER, "out is NULL");
    *out = NULL;
    if (!bytes && size) return lab_fail(err, POSENC_ERR_NULL_POINTER, "checkpoint bytes are NULL");
    if (!name) name = "checkpoint";
    lab_config cfg;
    int64_t step = 0;
    size_t data_bytes = 0;
    lab_model *m = NULL;
    posenc_status st;
    if ((st = read_metadata(name, bytes ? bytes : (const void *)"", size, &cfg, &step, &data_bytes, err)) == POSENC_OK &&
        (st = check_size(name, &cfg, data_bytes, err)) == POSENC_OK &&
        (st = lab_model_create(&cfg, threads, &m, err)) == POSENC_OK &&
        (st = load_image(m, name, bytes, size, err)) != POSENC_OK) {
        lab_model_free(m);
        m = NULL;
    }
    *out = m;
    return st;
}

posenc_status lab_checkpoint_load(const char *path, int32_t threads, lab_model **out, posenc_error *err) {
    if (!out) return lab_fail(err, POSENC_ERR_NULL_POINTER, "out is NULL");
    *out = NULL;
    if (!path) return lab_fail(err, POSENC_ERR_NULL_POINTER, "checkpoint path is NULL");
    void *bytes = NULL;
    size_t size = 0;
    posenc_status st = posenc_file_read_all(path, 0, &bytes, &size, err);
    if (st) return st;
    st = lab_checkpoint_load_memory(bytes, size, path, threads, out, err);
    free(bytes);
    return st;
}
