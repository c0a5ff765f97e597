/* fuzz_lab_checkpoint.c: the lab's checkpoint loader (lab/checkpoint.c,
 * lab_checkpoint_load_memory) on arbitrary bytes: a safetensors header whose
 * __metadata__ carries the model config as text, then the parameters and both
 * AdamW moments. Promises checked: never a crash, out-of-bounds read, UB or
 * leak; no allocation sized by a claim the bytes do not back (libFuzzer's
 * -rss_limit_mb and ASan's allocation limit catch one); on failure *out is
 * NULL and err names the problem; on success the config passes
 * lab_config_check, every tensor's values are the file's bytes for that name
 * (finite; second moments >= 0), and a second load gives the same bits. */
#include "fuzz_common.h"
#include "lab.h"

#include <math.h>

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    return 0;
}

static void require_tensor(const uint8_t *data, size_t size, const char *prefix, const lab_tensor_info *info,
                           const float *values, int second_moment) {
    char name[512];
    snprintf(name, sizeof name, "%s%s", prefix, info->name);
    posenc_array a;
    memset(&a, 0, sizeof a);
    posenc_error err = {0};
    posenc_status st = posenc_safetensors_parse(data, size, name, 0, &a, &err);
    FUZZ_REQUIRE(st == POSENC_OK && a.dtype == POSENC_DTYPE_F32 && a.count == info->count,
                 "loaded tensor %s does not parse back (%s)", name, err.message);
    FUZZ_REQUIRE(!values || memcmp(a.data, values, info->count * sizeof(float)) == 0, "tensor %s differs from the file",
                 name);
    const float *file = a.data;
    for (size_t k = 0; k < info->count; k++)
        FUZZ_REQUIRE(isfinite(file[k]) && (!second_moment || file[k] >= 0), "accepted tensor %s element %zu is %g", name,
                     k, (double)file[k]);
    posenc_array_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    posenc_error err = {0};
    lab_model *m = (lab_model *)&err; /* must be overwritten with NULL on failure */
    posenc_status st = lab_checkpoint_load_memory(data, size, "fuzz.safetensors", 1, &m, &err);
    if (st != POSENC_OK) {
        fuzz_require_error(st, &err);
        FUZZ_REQUIRE(m == NULL, "failed load handed out a model");
        return 0;
    }
    FUZZ_REQUIRE(m != NULL, "success without a model");
    posenc_error check = {0};
    FUZZ_REQUIRE(lab_config_check(lab_model_config(m), &check) == POSENC_OK, "loaded config fails its check: %s",
                 check.message);
    FUZZ_REQUIRE(lab_model_step(m) >= 0, "negative step %lld", (long long)lab_model_step(m));
    /* the parameters equal the file's (through the public tensor table); the
     * moments, which the API does not expose, are checked in the file */
    for (size_t i = 0; i < lab_tensor_count(m); i++) {
        float *p = NULL, *g = NULL;
        const lab_tensor_info *info = lab_tensor(m, i, &p, &g);
        FUZZ_REQUIRE(info && p, "tensor %zu missing", i);
        require_tensor(data, size, "", info, p, 0);
        require_tensor(data, size, "adam.m.", info, NULL, 0);
        require_tensor(data, size, "adam.v.", info, NULL, 1);
    }
    lab_model *again = NULL;
    st = lab_checkpoint_load_memory(data, size, "fuzz.safetensors", 1, &again, NULL);
    FUZZ_REQUIRE(st == POSENC_OK && again && lab_model_param_count(again) == lab_model_param_count(m) &&
                     memcmp(lab_params(again), lab_params(m), lab_model_param_count(m) * sizeof(float)) == 0 &&
                     lab_model_step(again) == lab_model_step(m),
                 "second load differs");
    lab_model_free(again);
    lab_model_free(m);
    return 0;
}
