/* config_hf_keys.c: reading config.json keys the way HF's config classes do:
 * a key by any of its spellings, type-checked (a present key of the wrong JSON
 * type is an error naming it; null counts as absent), and remembered as used
 * so the keys a reader did not use can be listed. config_hf.c (the families'
 * settings) and config_hf_layers.c (per-layer rules) both read through it. */
#include "config_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const cJSON *hf_item_(const cJSON *obj, const char *key) {
    const cJSON *found = NULL, *c;
    if (!cJSON_IsObject(obj)) return NULL;
    cJSON_ArrayForEach(c, obj) if (c->string && strcmp(c->string, key) == 0) found = c;
    return found && !cJSON_IsNull(found) ? found : NULL;
}

const cJSON *hf_member_(const cJSON *obj, const char *key) {
    const cJSON *found = NULL, *c;
    if (!cJSON_IsObject(obj)) return NULL;
    cJSON_ArrayForEach(c, obj) if (c->string && strcmp(c->string, key) == 0) found = c;
    return found;
}

void hf_mark_(hf_reader *h, const cJSON *v) {
    if (v && h->used_count < HF_MAX_USED) h->used[h->used_count++] = v;
}

const cJSON *hf_use_(hf_reader *h, const cJSON *obj, const char *key) {
    const cJSON *v = hf_item_(obj, key);
    hf_mark_(h, v);
    return v;
}

static int compare_names(const void *a, const void *b) {
    return strcmp((*(const cJSON *const *)a)->string, (*(const cJSON *const *)b)->string);
}

/* Note the first key written twice in obj (sorted, so n log n for hostile objects). */
posenc_status hf_note_duplicates_(const cJSON *obj, const char *where, hf_reader *h) {
    if (!cJSON_IsObject(obj) || h->out->duplicate_key[0]) return POSENC_OK;
    size_t n = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, obj) n++;
    if (n < 2) return POSENC_OK;
    const cJSON **names = malloc(sizeof *names * n);
    RETURN_ERROR_IF(!names, h->err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %zu key pointers", n);
    size_t i = 0;
    cJSON_ArrayForEach(c, obj) names[i++] = c;
    qsort(names, n, sizeof *names, compare_names);
    for (i = 1; i < n; i++)
        if (strcmp(names[i - 1]->string, names[i]->string) == 0) {
            snprintf(h->out->duplicate_key, sizeof h->out->duplicate_key, "%s%.40s", where, names[i]->string);
            h->out->warnings |= POSENC_CONFIG_WARN_DUPLICATE_KEY;
            break;
        }
    free(names);
    return POSENC_OK;
}

/* The first of several spellings present (HF attribute maps); *used names it. */
const cJSON *hf_first_of_(const cJSON *obj, const char *const *names, const char **used) {
    for (int i = 0; names[i]; i++) {
        const cJSON *v = hf_item_(obj, names[i]);
        if (v) {
            if (used) *used = names[i];
            return v;
        }
    }
    return NULL;
}

posenc_status hf_as_number_(const cJSON *v, const char *where, const char *key, double *out, posenc_error *err) {
    RETURN_ERROR_IF(!cJSON_IsNumber(v) || !isfinite(v->valuedouble), err, POSENC_ERR_FORMAT,
                    "config.json: %s'%s' must be a finite number", where, key);
    *out = v->valuedouble;
    return POSENC_OK;
}

posenc_status hf_as_count_(const cJSON *v, const char *where, const char *key, int64_t max, int64_t *out,
                              posenc_error *err) {
    double d = 0;
    FORWARD_IF_ERROR(hf_as_number_(v, where, key, &d, err));
    RETURN_ERROR_IF(d != floor(d) || d < 0 || d > (double)max, err, POSENC_ERR_FORMAT,
                    "config.json: %s'%s' must be an integer in [0, %lld], got %g", where, key, (long long)max, d);
    *out = (int64_t)d;
    return POSENC_OK;
}

/* A number under any of names; *present says whether one was there. */
posenc_status hf_number_of_(hf_reader *h, const cJSON *obj, const char *where, const char *const *names,
                               double *out, bool *present) {
    const char *used = NULL;
    const cJSON *v = hf_first_of_(obj, names, &used);
    *present = v != NULL;
    if (!v) return POSENC_OK;
    hf_mark_(h, v);
    config_note_(h->out->keys_used, sizeof h->out->keys_used, used);
    return hf_as_number_(v, where, used, out, h->err);
}

posenc_status hf_count_of_(hf_reader *h, const cJSON *obj, const char *where, const char *const *names,
                              int64_t max, int64_t *out, bool *present) {
    const char *used = NULL;
    const cJSON *v = hf_first_of_(obj, names, &used);
    *present = v != NULL;
    if (!v) return POSENC_OK;
    hf_mark_(h, v);
    config_note_(h->out->keys_used, sizeof h->out->keys_used, used);
    return hf_as_count_(v, where, used, max, out, h->err);
}

posenc_status hf_count_(hf_reader *h, const cJSON *obj, const char *where, const char *key, int64_t max,
                        int64_t *out, bool *present) {
    const char *names[] = {key, NULL};
    return hf_count_of_(h, obj, where, names, max, out, present);
}

posenc_status hf_number_(hf_reader *h, const cJSON *obj, const char *where, const char *key, double *out,
                         bool *present) {
    const char *names[] = {key, NULL};
    return hf_number_of_(h, obj, where, names, out, present);
}
