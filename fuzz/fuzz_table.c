/* fuzz_table.c: the family-2 compute entry points with every parameter drawn
 * from the fuzz input: posenc_sinusoid_check, posenc_sinusoid_frequencies_f64,
 * posenc_table_count, posenc_sinusoid_table(_f32/_f64) and
 * posenc_baseline_table, over range / integer-id / real-valued positions, any
 * dtype value, and output buffers that may be too small.
 * Promises checked: a result or a status, never a crash, UB or hang; no write
 * past out_count elements (the buffer is exactly that big, ASan watches);
 * successful sinusoid values are finite and in [-1, 1]; baseline values are
 * p (index) or p/(count-1) (normalized), rounded to the dtype; frequencies are finite
 * and positive; every result is deterministic (computed twice, the second time
 * on a fuzzed kernel path and thread count, compared bit for bit); a
 * sinusoid plan (posenc_sinusoid_plan_*) over the same input either is
 * refused with a status or gives the same status and bytes as the table. */
#include "fuzz_common.h"
#include "fuzz_data.h"

#include <math.h>

/* Cap on table elements so one input runs in milliseconds under ASan. */
#define TABLE_FUZZ_MAX_ELEMENTS 4096

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    return 0;
}

static double element_at(const void *buf, posenc_dtype dtype, size_t i) {
    switch (dtype) {
    case POSENC_DTYPE_F32: return ((const float *)buf)[i];
    case POSENC_DTYPE_F64: return ((const double *)buf)[i];
    case POSENC_DTYPE_F16: return posenc_f16_to_f32(((const uint16_t *)buf)[i]);
    case POSENC_DTYPE_BF16: return posenc_bf16_to_f32(((const uint16_t *)buf)[i]);
    default: return NAN;
    }
}

/* Positions: a range, or ids / values read from the head of the input. */
typedef struct {
    posenc_positions pos;
    int64_t *ids;
    double *values;
} fuzz_positions;

static void make_positions(fuzz_data *f, fuzz_positions *p) {
    memset(p, 0, sizeof *p);
    unsigned kind = (unsigned)fuzz_range_u64(f, 0, 3);
    size_t count = (size_t)fuzz_range_u64(f, 0, 64);
    if (kind == 0 || kind == 3) {
        p->pos = posenc_positions_range(fuzz_int_edgy(f, -4, 1 << 20), count);
        return;
    }
    /* the payload (head of the input) supplies the explicit positions */
    size_t avail = f->size / 8;
    if (count > avail) count = avail;
    if (kind == 1) {
        p->ids = malloc(sizeof *p->ids * (count ? count : 1));
        if (p->ids) memcpy(p->ids, f->data, count * 8);
        p->pos = posenc_positions_ids(p->ids, count);
    } else {
        p->values = malloc(sizeof *p->values * (count ? count : 1));
        if (p->values) memcpy(p->values, f->data, count * 8);
        p->pos = posenc_positions_values(p->values, count);
    }
    if (fuzz_range_u64(f, 0, 15) == 0) { /* both set: must be refused */
        if (p->ids) p->pos.values = (const double *)(const void *)p->ids;
        else p->pos.ids = (const int64_t *)(const void *)p->values;
    }
}

static void check_values(const posenc_positions *pos, int32_t dim, posenc_dtype dtype, const void *out,
                         int kind) {
    for (size_t r = 0; r < pos->count; r++)
        for (int32_t c = 0; c < dim; c++) {
            double v = element_at(out, dtype, r * (size_t)dim + (size_t)c);
            if (kind < 0) {
                FUZZ_REQUIRE(v >= -1.0 && v <= 1.0, "sinusoid value %g at [%zu,%d] outside [-1,1]", v, r, c);
            } else {
                double p = pos->ids ? (double)pos->ids[r] : pos->values ? pos->values[r]
                                                                        : (double)pos->start + (double)r;
                /* documented: index -> p; normalized -> p/(count-1), 0 for a single row */
                if (kind == POSENC_KIND_NORMALIZED) p = pos->count > 1 ? p / (double)(pos->count - 1) : 0.0;
                /* stored in the output dtype, so compare after the same rounding */
                double want = dtype == POSENC_DTYPE_F64   ? p
                              : dtype == POSENC_DTYPE_F32 ? (double)(float)p
                              : dtype == POSENC_DTYPE_F16 ? (double)posenc_f16_to_f32(posenc_f32_to_f16((float)p))
                                                          : (double)posenc_round_to_bf16((float)p);
                FUZZ_REQUIRE(v == want || (isinf(v) && isinf(want)), "baseline value %g != expected %g", v, p);
            }
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_data f = fuzz_data_make(data, size);
    posenc_error err = {0};
    posenc_sinusoid_params params;
    int32_t dim = (int32_t)fuzz_int_edgy(&f, -2, 130);
    posenc_sinusoid_params_default(&params, dim);
    if (fuzz_bool(&f)) params.base = fuzz_double(&f, 1e6);
    /* enum fields get any small int, including values that name nothing */
    params.freqs = (posenc_freqs)fuzz_range_i64(&f, -1, 2);
    params.layout = (posenc_layout)fuzz_range_i64(&f, -1, 2);
    params.odd = (posenc_odd_policy)fuzz_range_i64(&f, -1, 3);
    params.mode = (posenc_mode)fuzz_range_i64(&f, -1, 2);
    posenc_dtype dtype = (posenc_dtype)fuzz_range_i64(&f, -1, 8);
    int which = (int)fuzz_range_u64(&f, 0, 3); /* sinusoid, index, normalized, bad kind */
    fuzz_positions fp;
    make_positions(&f, &fp);
    const posenc_positions *pos = &fp.pos;

    /* params checks and frequencies */
    int32_t pairs = -1;
    posenc_status st = posenc_sinusoid_check(&params, &pairs, &err);
    if (st == POSENC_OK) {
        FUZZ_REQUIRE(pairs >= 1 && pairs <= (dim + 1) / 2, "pairs %d for dim %d", pairs, dim);
        if (pairs <= 4096) {
            size_t cap = (size_t)pairs - (size_t)fuzz_range_u64(&f, 0, 1);
            double *w = malloc(sizeof *w * (cap ? cap : 1));
            st = posenc_sinusoid_frequencies_f64(&params, w, cap, &err);
            if (st == POSENC_OK) {
                FUZZ_REQUIRE(cap >= (size_t)pairs, "frequencies accepted a short buffer");
                for (int32_t k = 0; k < pairs; k++)
                    FUZZ_REQUIRE(isfinite(w[k]) && w[k] >= 0.0, "frequency %d = %g", k, w[k]);
            } else {
                fuzz_require_error(st, &err);
            }
            free(w);
        }
    } else {
        fuzz_require_error(st, &err);
    }

    size_t need = 0;
    st = posenc_table_count(pos->count, dim, &need, &err);
    if (st != POSENC_OK) fuzz_require_error(st, &err);
    size_t item = posenc_dtype_size(dtype);
    if (st == POSENC_OK && need <= TABLE_FUZZ_MAX_ELEMENTS) {
        size_t out_count = need;
        unsigned shrink = (unsigned)fuzz_range_u64(&f, 0, 7);
        if (shrink == 1 && out_count > 0) out_count--;
        if (shrink == 2) out_count = 0;
        /* exactly out_count elements of the dtype (8 bytes each if unknown): an overrun is an ASan report */
        size_t bytes = out_count * (item ? item : 8);
        unsigned char *out1 = malloc(bytes ? bytes : 1), *out2 = malloc(bytes ? bytes : 1);
        void *o1 = shrink == 3 ? NULL : out1;
        posenc_status s1, s2;
        int kind = which == 0 ? -1 : which == 1 ? POSENC_KIND_INDEX : which == 2 ? POSENC_KIND_NORMALIZED : 7;
        if (which == 0) {
            if (dtype == POSENC_DTYPE_F32 && fuzz_bool(&f)) {
                s1 = posenc_sinusoid_table_f32(&params, pos, o1, out_count, &err);
            } else if (dtype == POSENC_DTYPE_F64 && fuzz_bool(&f)) {
                s1 = posenc_sinusoid_table_f64(&params, pos, o1, out_count, &err);
            } else {
                s1 = posenc_sinusoid_table(&params, pos, dtype, o1, out_count, &err);
            }
            /* the second run on a fuzzed kernel path and thread count: same status, same bits */
            posenc_exec exec;
            posenc_exec_default(&exec);
            exec.path = (posenc_kernel_path)fuzz_range_u64(&f, 0, 3);
            if (!posenc_kernel_path_supported(exec.path)) exec.path = POSENC_PATH_AUTO;
            exec.threads = (int32_t)fuzz_range_u64(&f, 0, 3);
            s2 = o1 ? posenc_sinusoid_table_exec(&params, pos, dtype, out2, out_count, &exec, NULL) : s1;
        } else {
            s1 = posenc_baseline_table((posenc_table_kind)kind, dim, pos, dtype, o1, out_count, &err);
            s2 = o1 ? posenc_baseline_table((posenc_table_kind)kind, dim, pos, dtype, out2, out_count, NULL) : s1;
        }
        FUZZ_REQUIRE(s1 == s2, "status not deterministic: %d then %d", (int)s1, (int)s2);
        if (which == 0 && o1) { /* the plan of the same table: refused, or the same status and bytes */
            posenc_sinusoid_plan *plan = NULL;
            posenc_error plan_err = {0};
            posenc_status sp = posenc_sinusoid_plan_create(&params, pos, NULL, &plan, &plan_err);
            if (sp == POSENC_OK) {
                FUZZ_REQUIRE(plan != NULL, "plan created but NULL");
                sp = posenc_sinusoid_plan_table(plan, dtype, out2, out_count, NULL, &plan_err);
                FUZZ_REQUIRE(sp == s1, "plan status %d, table status %d", (int)sp, (int)s1);
                if (sp == POSENC_OK) FUZZ_REQUIRE(memcmp(out1, out2, need * item) == 0, "plan's bytes differ from the table's");
                else fuzz_require_error(sp, &plan_err);
                posenc_sinusoid_plan_free(plan);
            } else {
                FUZZ_REQUIRE(plan == NULL, "refused plan left *out set");
                fuzz_require_error(sp, &plan_err);
            }
        }
        if (s1 == POSENC_OK) {
            FUZZ_REQUIRE(o1 && out_count >= need && item > 0, "accepted a bad output (count %zu, need %zu)",
                         out_count, need);
            FUZZ_REQUIRE(memcmp(out1, out2, need * item) == 0, "table not deterministic");
            check_values(pos, dim, dtype, out1, kind);
        } else {
            fuzz_require_error(s1, &err);
        }
        free(out1);
        free(out2);
    }
    /* NULL arguments are a status, never a crash */
    FUZZ_REQUIRE(posenc_sinusoid_table(NULL, pos, POSENC_DTYPE_F32, NULL, 0, &err) == POSENC_ERR_NULL_POINTER,
                 "NULL params");
    FUZZ_REQUIRE(posenc_sinusoid_table(&params, NULL, POSENC_DTYPE_F32, NULL, 0, NULL) != POSENC_OK, "NULL positions");
    free(fp.ids);
    free(fp.values);
    return 0;
}
