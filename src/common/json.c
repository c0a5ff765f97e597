/* json.c: serialised cJSON parsing (see json_internal.h for why). */
#include "json_internal.h"

#include <pthread.h>

static pthread_mutex_t cjson_parse_lock = PTHREAD_MUTEX_INITIALIZER;

cJSON *posenc_json_parse_(const char *text, size_t size, const char **error_at) {
    const char *end = NULL;
    pthread_mutex_lock(&cjson_parse_lock);
    cJSON *root = cJSON_ParseWithLengthOpts(text, size, &end, 0);
    pthread_mutex_unlock(&cjson_parse_lock);
    if (error_at) *error_at = end;
    return root;
}
