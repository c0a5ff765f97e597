/* json_internal.h: the one way the library parses JSON (config.json, safetensors headers). */
#ifndef POSENC_JSON_INTERNAL_H
#define POSENC_JSON_INTERNAL_H

#include <cjson/cJSON.h>
#include <stddef.h>

/* Parse size bytes of text (need not be NUL-terminated) with cJSON. On failure
 * returns NULL and, if error_at is non-NULL, points it near the error. Parses
 * are serialised: cJSON records its last error in a static variable, the only
 * shared state the library touches, so concurrent callers would race on it. */
cJSON *posenc_json_parse_(const char *text, size_t size, const char **error_at);

#endif
