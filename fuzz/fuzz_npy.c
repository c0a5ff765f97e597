/* fuzz_npy.c: posenc_npy_parse on arbitrary bytes.
 * Promises checked: never a crash or an out-of-bounds read; on success the
 * array is self-consistent (count = product of shape, data present and within
 * the byte limit) and its every element can be read; on failure nothing is
 * allocated and err names the problem; parsing is deterministic. */
#include "fuzz_common.h"

#define NPY_FUZZ_LIMIT ((size_t)1 << 20) /* keep allocations small under the fuzzer */

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    posenc_error err = {0};
    posenc_array a;
    posenc_status st = posenc_npy_parse(data, size, NPY_FUZZ_LIMIT, &a, &err);
    if (st != POSENC_OK) {
        fuzz_require_error(st, &err);
        FUZZ_REQUIRE(a.data == NULL && a.count == 0, "failed parse left data behind");
        return 0;
    }
    FUZZ_REQUIRE(a.ndim >= 0 && a.ndim <= POSENC_MAX_DIMS, "ndim %d", a.ndim);
    size_t item = posenc_dtype_size(a.dtype), count = 1;
    FUZZ_REQUIRE(item > 0, "unknown dtype %d accepted", (int)a.dtype);
    for (int i = 0; i < a.ndim; i++) count *= a.shape[i];
    FUZZ_REQUIRE(count == a.count, "count %zu != product of shape %zu", a.count, count);
    FUZZ_REQUIRE(a.data != NULL, "no data");
    FUZZ_REQUIRE(a.count * item <= NPY_FUZZ_LIMIT, "%zu bytes over the limit", a.count * item);
    FUZZ_REQUIRE(a.count * item <= size, "more data bytes than the file holds");
    /* the data must be the file's last count*item bytes, verbatim */
    FUZZ_REQUIRE(memcmp(a.data, data + size - a.count * item, a.count * item) == 0,
                 "data differs from the file's payload");
    posenc_array wide;
    st = posenc_array_to_f64(&a, &wide, &err);
    FUZZ_REQUIRE(st == POSENC_OK && wide.count == a.count, "to_f64: %s", err.message);
    posenc_array_free(&wide);
    /* determinism: a second parse gives the same array */
    posenc_array b;
    st = posenc_npy_parse(data, size, NPY_FUZZ_LIMIT, &b, &err);
    FUZZ_REQUIRE(st == POSENC_OK && b.dtype == a.dtype && b.ndim == a.ndim && b.count == a.count &&
                     memcmp(b.shape, a.shape, sizeof a.shape) == 0 &&
                     memcmp(b.data, a.data, a.count * item) == 0,
                 "second parse differs");
    posenc_array_free(&b);
    posenc_array_free(&a);
    posenc_array_free(&a); /* freeing twice is documented as fine */
    return 0;
}
