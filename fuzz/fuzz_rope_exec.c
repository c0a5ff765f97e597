/* fuzz_rope_exec.c: posenc_rope_apply_exec and a RoPE plan
 * (posenc_rope_plan_create + posenc_rope_plan_apply) against the plain entry
 * points (posenc_rope_apply_f32/_f16/_bf16) on the same input (issue 14.1: the
 * exec entry point once skipped the torch-compat angle check and returned
 * success with NaNs where the plain one refused). The plan is made with the
 * call's params and seq_len; when params are refused, create must refuse them
 * with the plain call's status and message (and leave *out NULL).
 * Promises checked: both return the same status and the same message; on
 * success, or on POSENC_ERR_NONFINITE (inf/NaN results: x is rotated all the
 * same), both buffers are equal bit for bit, whatever kernel path, thread
 * count or pool exec asks for (the plain call runs on the defaults); on any
 * other failure neither buffer changed. Views go up to 1500 tokens so the token
 * blocks of 512 and the thread split are exercised; positions are NULL, ids
 * from the payload, or runs of consecutive ids (the anchored recurrence). */
#include "fuzz_rope_params.h"

#define EXEC_FUZZ_MAX_X 65536 /* elements of x */

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    return 0;
}

/* positions: 0 NULL, 1 payload ids, 2 runs of consecutive ids from a start */
static int64_t *draw_positions(fuzz_data *f, size_t tokens) {
    int kind = (int)fuzz_range_u64(f, 0, 2);
    if (kind == 0 || tokens == 0) return NULL;
    if (kind == 1) return (int64_t *)payload_doubles(f, tokens);
    int64_t start = fuzz_int_edgy(f, -2, 1 << 20);
    size_t run = (size_t)fuzz_range_u64(f, 1, 600);
    int64_t *ids = malloc(sizeof *ids * tokens);
    for (size_t t = 0; t < tokens && ids; t++) /* a new run every `run` tokens, 1000 apart */
        ids[t] = (int64_t)((uint64_t)start + t + 1000 * (t / run)); /* unsigned: wraps, never UB */
    return ids;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_data f = fuzz_data_make(data, size);
    posenc_rope_params p;
    double *factors;
    int64_t seq_len;
    draw_rope_call(&f, &p, &factors, &seq_len);
    posenc_rope_view view;
    view.tokens = (size_t)fuzz_range_u64(&f, 0, 1500);
    view.heads = (size_t)fuzz_range_u64(&f, 0, 4);
    int32_t d = p.head_dim > 0 ? p.head_dim : 0;
    if (fuzz_bool(&f)) {
        view = posenc_rope_view_contiguous(view.tokens, view.heads, p.head_dim);
    } else {
        view.head_stride = (size_t)fuzz_int_edgy(&f, 0, 2 * (int64_t)d + 2);
        view.row_stride = (size_t)fuzz_int_edgy(&f, 0, 4 * (2 * (int64_t)d + 2));
    }
    size_t x_count = (size_t)fuzz_range_u64(&f, 0, EXEC_FUZZ_MAX_X);
    int dtype_index = (int)fuzz_range_u64(&f, 0, 2);
    int inverse = fuzz_bool(&f);
    posenc_layout layout = (posenc_layout)fuzz_range_i64(&f, -1, 2);
    posenc_exec exec;
    posenc_exec_default(&exec);
    exec.path = (posenc_kernel_path)fuzz_range_u64(&f, POSENC_PATH_SCALAR, POSENC_PATH_AVX512);
    if (!posenc_kernel_path_supported(exec.path)) exec.path = POSENC_PATH_SCALAR;
    exec.threads = (int32_t)fuzz_range_u64(&f, 1, 4);
    posenc_threadpool *pool = NULL;
    if (fuzz_bool(&f) && posenc_threadpool_create(exec.threads, &pool, NULL) == POSENC_OK) exec.pool = pool;
    int64_t *positions = draw_positions(&f, view.tokens);

    static const posenc_dtype dtypes[3] = {POSENC_DTYPE_F32, POSENC_DTYPE_F16, POSENC_DTYPE_BF16};
    size_t item = dtype_index == 0 ? 4 : 2, bytes = x_count * item;
    unsigned char *before = malloc(bytes ? bytes : 1), *plain = malloc(bytes ? bytes : 1),
                  *viaexec = malloc(bytes ? bytes : 1), *viaplan = malloc(bytes ? bytes : 1);
    for (size_t i = 0; i < bytes; i++) before[i] = f.size ? f.data[i % f.size] : (unsigned char)i;
    memcpy(plain, before, bytes);
    memcpy(viaexec, before, bytes);
    memcpy(viaplan, before, bytes);
    posenc_error e1, e2, e3;
    posenc_status s1 =
        dtype_index == 0 ? posenc_rope_apply_f32(&p, seq_len, layout, &view, positions, inverse, (float *)plain, x_count, &e1)
        : dtype_index == 1
            ? posenc_rope_apply_f16(&p, seq_len, layout, &view, positions, inverse, (uint16_t *)plain, x_count, &e1)
            : posenc_rope_apply_bf16(&p, seq_len, layout, &view, positions, inverse, (uint16_t *)plain, x_count, &e1);
    posenc_status s2 = posenc_rope_apply_exec(&p, seq_len, layout, &view, positions, inverse, dtypes[dtype_index],
                                              viaexec, x_count, &exec, &e2);
    posenc_rope_plan *plan = NULL;
    posenc_status s3 = posenc_rope_plan_create(&p, seq_len, &plan, &e3);
    FUZZ_REQUIRE((s3 == POSENC_OK) == (plan != NULL), "plan create status %d with plan %p", (int)s3, (void *)plan);
    if (s3 == POSENC_OK)
        s3 = posenc_rope_plan_apply(plan, layout, &view, positions, inverse, dtypes[dtype_index], viaplan, x_count,
                                    &exec, &e3);
    posenc_rope_plan_free(plan);
    FUZZ_REQUIRE(s3 == s2, "exec status %d (%s), plan status %d (%s)", (int)s2, s2 ? e2.message : "ok", (int)s3,
                 s3 ? e3.message : "ok");
    if (s3 != POSENC_OK)
        FUZZ_REQUIRE(strcmp(e2.message, e3.message) == 0, "exec / plan messages differ: '%s' / '%s'", e2.message,
                     e3.message);
    FUZZ_REQUIRE(s1 == s2, "plain status %d (%s), exec on %s x%d status %d (%s)", (int)s1,
                 s1 ? e1.message : "ok", posenc_kernel_path_name(exec.path), (int)exec.threads, (int)s2,
                 s2 ? e2.message : "ok");
    if (s1 == POSENC_ERR_NONFINITE) { /* reported, but x is rotated: the same cell named, the same bits */
        fuzz_require_error(s1, &e1);
        FUZZ_REQUIRE(strcmp(e1.message, e2.message) == 0, "messages differ: '%s' / '%s'", e1.message, e2.message);
    }
    if (s1 == POSENC_OK || s1 == POSENC_ERR_NONFINITE) {
        for (size_t i = 0; i < bytes; i++)
            FUZZ_REQUIRE(plain[i] == viaexec[i] && viaexec[i] == viaplan[i],
                         "byte %zu: plain %02x, exec on %s x%d %02x, plan %02x", i, plain[i],
                         posenc_kernel_path_name(exec.path), (int)exec.threads, viaexec[i], viaplan[i]);
    } else {
        fuzz_require_error(s1, &e1);
        fuzz_require_error(s2, &e2);
        FUZZ_REQUIRE(strcmp(e1.message, e2.message) == 0, "messages differ: '%s' / '%s'", e1.message, e2.message);
        FUZZ_REQUIRE(memcmp(plain, before, bytes) == 0 && memcmp(viaexec, before, bytes) == 0 &&
                         memcmp(viaplan, before, bytes) == 0,
                     "a refused call changed x");
    }
    posenc_threadpool_free(pool);
    free(before), free(plain), free(viaexec), free(viaplan);
    free(positions);
    free(factors);
    return 0;
}
