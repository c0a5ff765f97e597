/* fuzz_analysis.c: the family-7 analyses on arrays built from the fuzz input
 * (any dtype, rank 1-3, small shapes, payload bytes as data, so NaN, inf,
 * subnormals and huge values all occur): posenc_health_analyze (with and
 * without known frequencies), posenc_sinusoid_fit_table, posenc_sinusoid_fit_rope_angles,
 * posenc_diff_tables, posenc_signal_detect, posenc_precision_audit
 * and posenc_round_to_dtype. Often the first array is a real sinusoid table
 * (so the fitters get past their first checks) with payload noise added.
 * Promises checked: a result or a status, never a crash, leak, UB or hang;
 * the reports' free functions accept what they were given; analyze_table is
 * deterministic; round_to_dtype agrees with the scalar converters. */
#include "fuzz_common.h"
#include "fuzz_data.h"

#include <math.h>

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    return 0;
}

static int make_array(fuzz_data *f, posenc_array *a, int sinusoid) {
    posenc_dtype dtype = sinusoid ? POSENC_DTYPE_F32 : (posenc_dtype)fuzz_range_u64(f, 0, 7);
    int ndim = (int)fuzz_range_u64(f, 1, 3);
    size_t shape[3];
    for (int i = 0; i < 3; i++) shape[i] = (size_t)fuzz_range_u64(f, 0, i == ndim - 1 ? 34 : 40);
    if (ndim == 3) shape[1] = shape[1] % 4;
    posenc_error err;
    if (posenc_array_create(a, dtype, ndim, shape, 1 << 20, &err) != POSENC_OK) return 0;
    size_t bytes = a->count * posenc_dtype_size(dtype);
    if (sinusoid && ndim >= 2 && shape[ndim - 1] % 2 == 0 && shape[ndim - 1] > 0) {
        posenc_sinusoid_params p;
        posenc_sinusoid_params_default(&p, (int32_t)shape[ndim - 1]);
        p.layout = (posenc_layout)fuzz_range_u64(f, 0, 1);
        p.freqs = (posenc_freqs)fuzz_range_u64(f, 0, 1);
        posenc_positions pos = posenc_positions_range(fuzz_int_edgy(f, 0, 100), a->count / shape[ndim - 1]);
        if (posenc_sinusoid_table_f32(&p, &pos, a->data, a->count, NULL) != POSENC_OK) memset(a->data, 0, bytes);
        /* a few payload bytes overwrite the table: noise, NaN, spikes */
        size_t edits = (size_t)fuzz_range_u64(f, 0, 3);
        for (size_t i = 0; i < edits && f->size >= 4 && bytes >= 4; i++) {
            size_t at = (size_t)fuzz_range_u64(f, 0, bytes / 4 - 1) * 4;
            memcpy((unsigned char *)a->data + at, f->data, 4);
        }
    } else {
        for (size_t i = 0; i < bytes; i++) ((unsigned char *)a->data)[i] = f->size ? f->data[i % f->size] : 0;
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_data f = fuzz_data_make(data, size);
    posenc_error err;
    posenc_array a, b;
    if (!make_array(&f, &a, fuzz_bool(&f))) return 0;
    if (!make_array(&f, &b, fuzz_bool(&f))) {
        posenc_array_free(&a);
        return 0;
    }
    /* health, twice */
    posenc_health_options opt;
    memset(&opt, 0, sizeof opt);
    double freqs[40];
    int with_opt = fuzz_bool(&f);
    if (with_opt) {
        opt.max_offset = (size_t)fuzz_int_edgy(&f, 0, 200);
        opt.max_rows_pairs = (size_t)fuzz_int_edgy(&f, 0, 100);
        opt.frequency_count = (size_t)fuzz_range_u64(&f, 0, 40);
        for (size_t i = 0; i < opt.frequency_count; i++) freqs[i] = fuzz_double(&f, 2.0);
        opt.frequencies = fuzz_bool(&f) ? freqs : NULL;
        opt.layout = (posenc_layout)fuzz_range_i64(&f, -1, 2);
        opt.cos_first = (int)fuzz_range_i64(&f, -1, 1);
    }
    /* reports start as garbage: every call must leave its report freeable, on
     * success and on failure alike (callers free unconditionally) */
    posenc_health h1, h2;
    memset(&h1, 0xA5, sizeof h1);
    memset(&h2, 0xA5, sizeof h2);
    posenc_status s1 = posenc_health_analyze(&a, with_opt ? &opt : NULL, &h1, &err);
    posenc_status s2 = posenc_health_analyze(&a, with_opt ? &opt : NULL, &h2, NULL);
    FUZZ_REQUIRE(s1 == s2, "analyze status %d then %d", (int)s1, (int)s2);
    if (s1 == POSENC_OK) {
        FUZZ_REQUIRE(h1.rows == h2.rows && h1.channels == h2.channels && h1.nonfinite == h2.nonfinite &&
                         memcmp(&h1.min, &h2.min, sizeof h1.min) == 0 &&
                         memcmp(&h1.closest_distance, &h2.closest_distance, sizeof(double)) == 0,
                     "analyze not deterministic");
    } else {
        fuzz_require_error(s1, &err);
    }
    posenc_health_free(&h1);
    posenc_health_free(&h2);
    posenc_health_free(&h1); /* a second free is harmless */
    /* fits */
    posenc_sinusoid_fit fit;
    memset(&fit, 0xA5, sizeof fit);
    posenc_status s = posenc_sinusoid_fit_table(&a, fuzz_double(&f, 0.01), &fit, &err);
    if (s != POSENC_OK) fuzz_require_error(s, &err);
    posenc_sinusoid_fit_free(&fit);
    memset(&fit, 0xA5, sizeof fit);
    s = posenc_sinusoid_fit_rope_angles(&a, &b, &fit, &err);
    if (s != POSENC_OK) fuzz_require_error(s, &err);
    posenc_sinusoid_fit_free(&fit);
    /* diff and signal detection */
    posenc_diff_options dopt;
    memset(&dopt, 0, sizeof dopt);
    dopt.tolerance = fuzz_bool(&f) ? 0 : fuzz_double(&f, 1.0);
    dopt.heads = (size_t)fuzz_int_edgy(&f, 0, 5);
    dopt.max_offset = (size_t)fuzz_int_edgy(&f, 0, 80);
    dopt.input = fuzz_bool(&f) ? &b : NULL;
    posenc_diff_report dr;
    memset(&dr, 0xA5, sizeof dr);
    s = posenc_diff_tables(&a, fuzz_bool(&f) ? &a : &b, fuzz_bool(&f) ? &dopt : NULL, &dr, &err);
    if (s != POSENC_OK) fuzz_require_error(s, &err);
    posenc_diff_report_free(&dr);
    posenc_signal_report sr;
    memset(&sr, 0xA5, sizeof sr);
    s = posenc_signal_detect(&b, &a, &sr, &err);
    if (s != POSENC_OK) fuzz_require_error(s, &err);
    posenc_signal_report_free(&sr);
    /* precision audit: small, bounded cost */
    posenc_sinusoid_params p;
    /* dim stays small: the audit costs O(max_pos x pairs) by design (dim 2^30 = 4 GiB, minutes) */
    posenc_sinusoid_params_default(&p, (int32_t)fuzz_range_i64(&f, -2, 64));
    posenc_precision_report pr;
    posenc_dtype pd = (posenc_dtype)fuzz_range_i64(&f, -1, 8);
    int64_t max_pos = fuzz_int_edgy(&f, -1, 600);
    if (max_pos <= 1000) {
        memset(&pr, 0xA5, sizeof pr);
        s = posenc_precision_audit(&p, pd, max_pos, &pr, &err);
        if (s != POSENC_OK) fuzz_require_error(s, &err);
        posenc_precision_report_free(&pr);
    }
    /* round_to_dtype agrees with the converters */
    for (int i = 0; i < 4; i++) {
        uint64_t bits = fuzz_bits(&f, 8);
        double v;
        memcpy(&v, &bits, 8);
        double r64 = posenc_round_to_dtype(v, POSENC_DTYPE_F64);
        FUZZ_REQUIRE(memcmp(&r64, &v, 8) == 0 || (isnan(r64) && isnan(v)), "round_to_dtype f64 changed %a", v);
        double r32 = posenc_round_to_dtype(v, POSENC_DTYPE_F32);
        float want = (float)v;
        FUZZ_REQUIRE(r32 == (double)want || (isnan(r32) && isnan(want)), "round_to_dtype f32(%a) = %a, want %a", v,
                     r32, (double)want);
        double r16 = posenc_round_to_dtype(v, POSENC_DTYPE_F16);
        FUZZ_REQUIRE(isnan(v) ? isnan(r16) : (double)posenc_round_to_f16((float)r16) == r16,
                     "round_to_dtype f16(%a) = %a is not an f16 value", v, r16);
        double rb = posenc_round_to_dtype(v, POSENC_DTYPE_BF16);
        FUZZ_REQUIRE(isnan(v) ? isnan(rb) : (double)posenc_round_to_bf16((float)rb) == rb,
                     "round_to_dtype bf16(%a) = %a is not a bf16 value", v, rb);
    }
    posenc_array_free(&a);
    posenc_array_free(&b);
    return 0;
}
