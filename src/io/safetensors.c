/* safetensors.c: the project's own bounds-checked .safetensors reader.
 * Layout: u64 little-endian header length N | N bytes of JSON | data buffer.
 * Every number in the header is checked against the bytes actually present;
 * the JSON is parsed by cJSON from a NUL-terminated copy (never in place). */
#include "../common/internal.h"

#include "io_internal.h"
#include "../common/json_internal.h"

#include <stdlib.h>
#include <string.h>

/* The header is JSON text; 100 MiB is the format's own documented ceiling. */
#define HEADER_MAX ((uint64_t)100 << 20)

typedef struct {
    const char *name;
    posenc_dtype dtype;
} st_dtype;

static const st_dtype dtypes[] = {{"F64", POSENC_DTYPE_F64}, {"F32", POSENC_DTYPE_F32},
                                  {"F16", POSENC_DTYPE_F16}, {"BF16", POSENC_DTYPE_BF16},
                                  {"I64", POSENC_DTYPE_I64}, {"I32", POSENC_DTYPE_I32},
                                  {"U16", POSENC_DTYPE_U16}, {"U8", POSENC_DTYPE_U8}};

typedef struct {
    uint64_t begin, end;
    const char *name;
} span;

static int compare_spans(const void *a, const void *b) {
    const span *x = a, *y = b;
    return x->begin < y->begin ? -1 : x->begin > y->begin ? 1 : 0;
}

/* A JSON number that is a non-negative integer below 2^53 (exact in a double). */
static bool get_count(const cJSON *item, uint64_t *out) {
    if (!cJSON_IsNumber(item)) return false;
    double v = item->valuedouble;
    if (!(v >= 0) || v > 9007199254740992.0 || v != floor(v)) return false;
    *out = (uint64_t)v;
    return true;
}

/* Parse the header into a cJSON object; data and data_size locate the buffer. */
static posenc_status parse_header(const void *bytes, size_t size, cJSON **root, const uint8_t **data,
                                  uint64_t *data_size, posenc_error *err) {
    RETURN_IF_NULL(bytes, err);
    RETURN_ERROR_IF(size < 8, err, POSENC_ERR_FORMAT,
                    "safetensors file is %zu bytes, shorter than its 8-byte header length", size);
    const uint8_t *b = bytes;
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--) n = (n << 8) | b[i];
    RETURN_ERROR_IF(n > size - 8, err, POSENC_ERR_FORMAT,
                    "safetensors header length %llu is larger than the %zu bytes after it",
                    (unsigned long long)n, size - 8);
    RETURN_ERROR_IF(n > HEADER_MAX, err, POSENC_ERR_LIMIT,
                    "safetensors header length %llu exceeds the 100 MiB limit", (unsigned long long)n);
    RETURN_ERROR_IF(n < 2, err, POSENC_ERR_FORMAT, "safetensors header length %llu is too short for JSON",
                    (unsigned long long)n);
    char *text = malloc((size_t)n + 1);
    RETURN_ERROR_IF(!text, err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate a %llu-byte header",
                    (unsigned long long)n);
    memcpy(text, b + 8, (size_t)n);
    text[n] = '\0';
    if (memchr(text, '\0', (size_t)n)) {
        free(text);
        return posenc_fail_(err, POSENC_ERR_FORMAT, "safetensors header contains a NUL byte");
    }
    *root = posenc_json_parse_(text, (size_t)n, NULL);
    free(text);
    RETURN_ERROR_IF(!*root, err, POSENC_ERR_FORMAT, "safetensors header is not valid JSON");
    if (!cJSON_IsObject(*root)) {
        cJSON_Delete(*root);
        *root = NULL;
        return posenc_fail_(err, POSENC_ERR_FORMAT, "safetensors header is not a JSON object");
    }
    *data = b + 8 + n;
    *data_size = size - 8 - n;
    return posenc_ok_(err);
}

/* Validate one tensor entry; on success fill dtype, shape and its byte span. */
static posenc_status check_entry(const cJSON *e, uint64_t data_size, posenc_dtype *dtype, int *ndim,
                                 size_t *shape, span *sp, posenc_error *err) {
    const char *name = e->string;
    RETURN_ERROR_IF(!cJSON_IsObject(e), err, POSENC_ERR_FORMAT, "safetensors tensor '%s' is not an object", name);
    const cJSON *jd = cJSON_GetObjectItemCaseSensitive(e, "dtype");
    const cJSON *js = cJSON_GetObjectItemCaseSensitive(e, "shape");
    const cJSON *jo = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
    RETURN_ERROR_IF(!cJSON_IsString(jd) || !cJSON_IsArray(js) || !cJSON_IsArray(jo), err, POSENC_ERR_FORMAT,
                    "safetensors tensor '%s' needs string dtype, array shape and array data_offsets", name);
    bool known = false;
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (strcmp(jd->valuestring, dtypes[i].name) == 0) *dtype = dtypes[i].dtype, known = true;
    RETURN_ERROR_IF(!known, err, POSENC_ERR_UNSUPPORTED,
                    "safetensors tensor '%s' has unsupported dtype '%.32s' (supported: F64 F32 F16 BF16 I64 I32 U16 U8)",
                    name, jd->valuestring);
    int nd = cJSON_GetArraySize(js);
    RETURN_ERROR_IF(nd > POSENC_MAX_DIMS, err, POSENC_ERR_UNSUPPORTED,
                    "safetensors tensor '%s' has %d dims, more than %d", name, nd, POSENC_MAX_DIMS);
    size_t count = 1;
    for (int i = 0; i < nd; i++) {
        uint64_t v;
        RETURN_ERROR_IF(!get_count(cJSON_GetArrayItem(js, i), &v) || v > SIZE_MAX, err, POSENC_ERR_FORMAT,
                        "safetensors tensor '%s' shape[%d] is not a non-negative integer", name, i);
        shape[i] = (size_t)v;
        RETURN_ERROR_IF(!posenc_mul_size_(count, shape[i], &count), err, POSENC_ERR_FORMAT,
                        "safetensors tensor '%s' shape overflows size_t", name);
    }
    size_t bytes;
    RETURN_ERROR_IF(!posenc_mul_size_(count, posenc_dtype_size(*dtype), &bytes), err, POSENC_ERR_FORMAT,
                    "safetensors tensor '%s' byte size overflows size_t", name);
    uint64_t begin, end;
    RETURN_ERROR_IF(cJSON_GetArraySize(jo) != 2 || !get_count(cJSON_GetArrayItem(jo, 0), &begin) ||
                        !get_count(cJSON_GetArrayItem(jo, 1), &end),
                    err, POSENC_ERR_FORMAT,
                    "safetensors tensor '%s' data_offsets must be two non-negative integers", name);
    RETURN_ERROR_IF(begin > end || end > data_size, err, POSENC_ERR_FORMAT,
                    "safetensors tensor '%s' data_offsets [%llu, %llu] lie outside the %llu-byte data buffer",
                    name, (unsigned long long)begin, (unsigned long long)end, (unsigned long long)data_size);
    RETURN_ERROR_IF(end - begin != bytes, err, POSENC_ERR_FORMAT,
                    "safetensors tensor '%s' has %llu data bytes but its shape and dtype need %zu", name,
                    (unsigned long long)(end - begin), bytes);
    *ndim = nd;
    sp->begin = begin, sp->end = end, sp->name = name;
    return posenc_ok_(err);
}

/* Check every entry and that no two overlap; return the entry named `want` (or NULL). */
static posenc_status check_all(const cJSON *root, uint64_t data_size, const char *want, const cJSON **found,
                               posenc_error *err) {
    int n = cJSON_GetArraySize(root);
    span *spans = malloc(((size_t)n + 1) * sizeof(span));
    RETURN_ERROR_IF(!spans, err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %d tensor spans", n);
    size_t m = 0;
    *found = NULL;
    posenc_status st = POSENC_OK;
    for (const cJSON *e = root->child; e; e = e->next) {
        if (!e->string) continue;
        if (strcmp(e->string, "__metadata__") == 0) continue;
        posenc_dtype dt;
        int nd;
        size_t shape[POSENC_MAX_DIMS];
        st = check_entry(e, data_size, &dt, &nd, shape, &spans[m], err);
        if (st != POSENC_OK) break;
        if (spans[m].end > spans[m].begin) m++; /* empty tensors occupy nothing */
        if (want && strcmp(e->string, want) == 0) *found = e;
    }
    if (st == POSENC_OK) {
        qsort(spans, m, sizeof(span), compare_spans);
        for (size_t i = 1; i < m; i++)
            if (spans[i].begin < spans[i - 1].end) {
                st = posenc_fail_(err, POSENC_ERR_FORMAT,
                                  "safetensors tensors '%s' [%llu, %llu) and '%s' [%llu, %llu) overlap",
                                  spans[i - 1].name, (unsigned long long)spans[i - 1].begin,
                                  (unsigned long long)spans[i - 1].end, spans[i].name,
                                  (unsigned long long)spans[i].begin, (unsigned long long)spans[i].end);
                break;
            }
    }
    free(spans);
    return st;
}

posenc_status posenc_safetensors_list(const void *bytes, size_t size, char *out, size_t out_size,
                                      posenc_error *err) {
    RETURN_IF_NULL(out, err);
    RETURN_ERROR_IF(out_size < 4, err, POSENC_ERR_BUFFER_TOO_SMALL, "out_size must be >= 4, got %zu", out_size);
    out[0] = '\0';
    cJSON *root;
    const uint8_t *data;
    uint64_t data_size;
    FORWARD_IF_ERROR(parse_header(bytes, size, &root, &data, &data_size, err));
    size_t used = 0;
    for (const cJSON *e = root->child; e; e = e->next) {
        if (!e->string || strcmp(e->string, "__metadata__") == 0) continue;
        size_t len = strlen(e->string) + (used ? 2 : 0);
        if (used + len + 4 > out_size) {
            memcpy(out + used, "...", 4);
            break;
        }
        if (used) memcpy(out + used, ", ", 2), used += 2, len -= 2;
        memcpy(out + used, e->string, len);
        used += len;
        out[used] = '\0';
    }
    cJSON_Delete(root);
    return posenc_ok_(err);
}

posenc_status posenc_safetensors_parse(const void *bytes, size_t size, const char *tensor_name,
                                       size_t max_bytes, posenc_array *out, posenc_error *err) {
    RETURN_IF_NULL(out, err);
    RETURN_IF_NULL(tensor_name, err);
    memset(out, 0, sizeof *out);
    cJSON *root;
    const uint8_t *data;
    uint64_t data_size;
    FORWARD_IF_ERROR(parse_header(bytes, size, &root, &data, &data_size, err));
    const cJSON *e = NULL;
    posenc_status st = check_all(root, data_size, tensor_name, &e, err);
    if (st == POSENC_OK && !e) {
        char names[160];
        posenc_safetensors_list(bytes, size, names, sizeof names, NULL);
        st = posenc_fail_(err, POSENC_ERR_OUT_OF_RANGE, "no tensor '%.64s' in the safetensors file (it has: %s)",
                          tensor_name, names[0] ? names : "no tensors");
    }
    if (st == POSENC_OK) {
        posenc_dtype dt;
        int nd;
        size_t shape[POSENC_MAX_DIMS];
        span sp;
        st = check_entry(e, data_size, &dt, &nd, shape, &sp, err);
        if (st == POSENC_OK) st = posenc_array_create(out, dt, nd, shape, max_bytes, err);
        if (st == POSENC_OK) memcpy(out->data, data + sp.begin, (size_t)(sp.end - sp.begin));
    }
    cJSON_Delete(root);
    return st == POSENC_OK ? posenc_ok_(err) : st;
}

/* Entries sorted by name, and by position among equal names (the last one wins,
 * as in posenc_safetensors_parse's scan). */
typedef struct {
    const cJSON *e;
    size_t at;
} named_entry;

static int compare_named(const void *a, const void *b) {
    const named_entry *x = a, *y = b;
    int c = strcmp(x->e->string, y->e->string);
    return c ? c : (x->at > y->at) - (x->at < y->at);
}

static const named_entry *find_named(const named_entry *index, size_t n, const char *name) {
    size_t lo = 0, hi = n; /* first entry > name, then step back: the last equal one */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(index[mid].e->string, name) <= 0) lo = mid + 1;
        else hi = mid;
    }
    return lo > 0 && strcmp(index[lo - 1].e->string, name) == 0 ? &index[lo - 1] : NULL;
}

posenc_status posenc_safetensors_parse_many(const void *bytes, size_t size, const char *const *names, size_t count,
                                            size_t max_bytes, posenc_array *outs, posenc_error *err) {
    RETURN_IF_NULL(outs, err);
    if (count) memset(outs, 0, count * sizeof *outs);
    RETURN_ERROR_IF(count && !names, err, POSENC_ERR_NULL_POINTER, "names is NULL");
    for (size_t i = 0; i < count; i++) RETURN_ERROR_IF(!names[i], err, POSENC_ERR_NULL_POINTER, "names[%zu] is NULL", i);
    cJSON *root;
    const uint8_t *data;
    uint64_t data_size;
    FORWARD_IF_ERROR(parse_header(bytes, size, &root, &data, &data_size, err));
    const cJSON *unused;
    posenc_status st = check_all(root, data_size, NULL, &unused, err); /* once, for every entry */
    size_t entries = 0;
    for (const cJSON *e = root->child; e; e = e->next) entries += e->string != NULL;
    named_entry *index = st == POSENC_OK ? malloc((entries + 1) * sizeof *index) : NULL;
    if (st == POSENC_OK && !index)
        st = posenc_fail_(err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate an index of %zu tensors", entries);
    if (st == POSENC_OK) {
        size_t k = 0;
        for (const cJSON *e = root->child; e; e = e->next)
            if (e->string) index[k].e = e, index[k].at = k, k++;
        qsort(index, entries, sizeof *index, compare_named);
    }
    for (size_t i = 0; i < count && st == POSENC_OK; i++) {
        const named_entry *found = find_named(index, entries, names[i]);
        if (!found || strcmp(names[i], "__metadata__") == 0) {
            char list[160];
            posenc_safetensors_list(bytes, size, list, sizeof list, NULL);
            st = posenc_fail_(err, POSENC_ERR_OUT_OF_RANGE, "no tensor '%.64s' in the safetensors file (it has: %s)",
                              names[i], list[0] ? list : "no tensors");
            break;
        }
        posenc_dtype dt;
        int nd;
        size_t shape[POSENC_MAX_DIMS];
        span sp;
        st = check_entry(found->e, data_size, &dt, &nd, shape, &sp, err);
        if (st == POSENC_OK) st = posenc_array_create(&outs[i], dt, nd, shape, max_bytes, err);
        if (st == POSENC_OK) memcpy(outs[i].data, data + sp.begin, (size_t)(sp.end - sp.begin));
    }
    free(index);
    cJSON_Delete(root);
    if (st != POSENC_OK)
        for (size_t i = 0; i < count; i++) posenc_array_free(&outs[i]);
    return st == POSENC_OK ? posenc_ok_(err) : st;
}

posenc_status posenc_safetensors_read(const char *path, const char *tensor_name, size_t max_bytes,
                                      posenc_array *out, posenc_error *err) {
    RETURN_IF_NULL(out, err);
    memset(out, 0, sizeof *out);
    RETURN_IF_NULL(path, err);
    /* Mapped, not read: a checkpoint of many GB costs only the pages of its
     * header and of the one tensor copied out (max_bytes bounds that tensor). A
     * mapping is limited by the address space, not by memory. */
    posenc_mapped_file m;
    FORWARD_IF_ERROR(posenc_map_file_(path, SIZE_MAX, &m, err));
    posenc_status st = posenc_safetensors_parse(m.bytes, m.size, tensor_name, max_bytes, out, err);
    posenc_unmap_file_(&m);
    return st;
}
