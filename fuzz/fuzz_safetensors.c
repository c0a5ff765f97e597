/* fuzz_safetensors.c: posenc_safetensors_parse and posenc_safetensors_list on
 * arbitrary bytes. The tensor asked for is, by the input's last byte, the
 * first name the file lists, a name carved from the input, or a fixed one.
 * Promises checked: never a crash or out-of-bounds read (the header JSON and
 * every offset come from the input); on success the array is self-consistent,
 * within the byte limit, and its bytes are a slice of the file's data buffer;
 * on failure nothing is allocated and err names the problem; the listing is a
 * terminated string within out_size; parsing is deterministic. */
#include "fuzz_common.h"
#include "fuzz_data.h"

#define ST_FUZZ_LIMIT ((size_t)1 << 20)

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    posenc_error err = {0};
    fuzz_data f = fuzz_data_make(data, size);
    unsigned how = (unsigned)fuzz_bits(&f, 1) % 3;
    size_t list_size = (size_t)fuzz_range_u64(&f, 0, 200);
    /* list_size may be below the documented minimum of 4: that is a status */
    char *list = malloc(list_size ? list_size : 1);
    posenc_status st = posenc_safetensors_list(data, size, list, list_size, &err);
    if (st == POSENC_OK) {
        FUZZ_REQUIRE(list_size >= 4 && memchr(list, '\0', list_size) != NULL, "listing not terminated");
    } else {
        fuzz_require_error(st, &err);
    }
    char name[128] = "weight";
    if (how == 0 && st == POSENC_OK) { /* the first listed name (may be cut at ", ") */
        snprintf(name, sizeof name, "%s", list);
        char *comma = strstr(name, ", ");
        if (comma) *comma = '\0';
    } else if (how == 1) { /* a short name from the input's tail */
        size_t n = (size_t)fuzz_range_u64(&f, 0, 16);
        for (size_t i = 0; i < n; i++) name[i] = (char)(fuzz_bits(&f, 1) | 1); /* never NUL */
        name[n] = '\0';
    }
    free(list);

    /* parse the whole input (the carved tail is part of the file too) */
    posenc_array a;
    st = posenc_safetensors_parse(data, size, name, ST_FUZZ_LIMIT, &a, &err);
    if (st != POSENC_OK) {
        fuzz_require_error(st, &err);
        FUZZ_REQUIRE(a.data == NULL && a.count == 0, "failed parse left data behind");
        return 0;
    }
    size_t item = posenc_dtype_size(a.dtype), count = 1;
    FUZZ_REQUIRE(item > 0 && a.ndim >= 0 && a.ndim <= POSENC_MAX_DIMS, "dtype %d ndim %d", (int)a.dtype, a.ndim);
    for (int i = 0; i < a.ndim; i++) count *= a.shape[i];
    FUZZ_REQUIRE(count == a.count && a.data != NULL, "count %zu != product %zu", a.count, count);
    FUZZ_REQUIRE(a.count * item <= ST_FUZZ_LIMIT, "over the byte limit");
    uint64_t header = 0;
    for (int i = 7; i >= 0; i--) header = (header << 8) | data[i];
    FUZZ_REQUIRE(size >= 8 && header <= size - 8 && a.count * item <= size - 8 - header,
                 "tensor larger than the data buffer");
    if (a.count) { /* its bytes occur in the data buffer */
        const uint8_t *buf = data + 8 + header, *end = data + size;
        int found = 0;
        for (const uint8_t *p = buf; !found && p + a.count * item <= end; p++)
            found = memcmp(p, a.data, a.count * item) == 0;
        FUZZ_REQUIRE(found, "tensor bytes are not a slice of the data buffer");
    }
    posenc_array b;
    st = posenc_safetensors_parse(data, size, name, ST_FUZZ_LIMIT, &b, NULL);
    FUZZ_REQUIRE(st == POSENC_OK && b.count == a.count && b.dtype == a.dtype &&
                     memcmp(b.data, a.data, a.count * item) == 0,
                 "second parse differs");
    posenc_array_free(&b);
    posenc_array_free(&a);
    return 0;
}
