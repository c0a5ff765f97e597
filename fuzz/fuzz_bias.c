/* fuzz_bias.c: the family-5 entry points with parameters drawn from the fuzz
 * input: ALiBi slopes (f64/f32), dense bias and single rows, key positions
 * from a padding mask; T5 check, single buckets, bucket matrices (i32/i64) and
 * the gathered bias; Shaw relative indices and gathers. Positions are ranges or
 * payload ids/values, as in fuzz_table.
 * Promises checked: a result or a status, never a crash, UB or hang; exact-size
 * buffers (ASan sees overruns); slopes finite and > 0; every T5 bucket in
 * [0, num_buckets) and equal to the single-bucket function; Shaw indices in
 * [0, 2 clip]; determinism (computed twice, compared). */
#include "fuzz_common.h"
#include "fuzz_data.h"

#include <math.h>

#define BIAS_FUZZ_MAX 4096 /* output elements */

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    return 0;
}

typedef struct {
    posenc_positions pos;
    void *owned;
} fuzz_pos;

static void make_pos(fuzz_data *f, fuzz_pos *p) {
    unsigned kind = (unsigned)fuzz_range_u64(f, 0, 3);
    size_t count = (size_t)fuzz_range_u64(f, 0, 24);
    p->owned = NULL;
    if (kind <= 1) {
        p->pos = posenc_positions_range(fuzz_int_edgy(f, -2, 1 << 16), count);
        return;
    }
    p->owned = calloc(count ? count : 1, 8);
    if (p->owned) memcpy(p->owned, f->data, (count < f->size / 8 ? count : f->size / 8) * 8);
    p->pos = kind == 2 ? posenc_positions_ids(p->owned, count) : posenc_positions_values(p->owned, count);
}

static void *alloc_out(size_t n, size_t item) { return malloc(n ? n * item : 1); }

static size_t shrink(fuzz_data *f, size_t need) {
    return need - (need && fuzz_range_u64(f, 0, 7) == 0 ? 1 : 0);
}

static void alibi(fuzz_data *f) {
    posenc_error err;
    int32_t heads = (int32_t)fuzz_int_edgy(f, -1, 70);
    double max_bias = fuzz_bool(f) ? 8.0 : fuzz_double(f, 16.0);
    int32_t offset = (int32_t)fuzz_int_edgy(f, -1, 8), total = (int32_t)fuzz_int_edgy(f, -1, 80);
    posenc_mode mode = (posenc_mode)fuzz_range_i64(f, -1, 2);
    size_t cap = heads > 0 && heads <= 1024 ? shrink(f, (size_t)heads) : 16;
    double *s64 = alloc_out(cap, 8);
    float *s32 = alloc_out(cap, 4), *s32b = alloc_out(cap, 4);
    posenc_status a = posenc_alibi_slopes_f64(heads, max_bias, offset, total, mode, s64, cap, &err);
    posenc_status b = posenc_alibi_slopes_f32(heads, max_bias, offset, total, mode, s32, cap, NULL);
    posenc_status c = posenc_alibi_slopes_f32(heads, max_bias, offset, total, mode, s32b, cap, NULL);
    FUZZ_REQUIRE(b == c, "f32 slopes status %d then %d", (int)b, (int)c);
    if (a == POSENC_OK && b != POSENC_OK) { /* only a slope below float32's range may split them */
        double smallest = INFINITY;
        for (int32_t h = 0; h < heads; h++) smallest = s64[h] < smallest ? s64[h] : smallest;
        FUZZ_REQUIRE(b == POSENC_ERR_INVALID_ARGUMENT && smallest < 1e-44,
                     "f64 slopes fine (smallest %g) but f32 gives status %d", smallest, (int)b);
        b = POSENC_OK;
    }
    FUZZ_REQUIRE(a == b, "slopes status f64 %d, f32 %d", (int)a, (int)b);
    if (a == POSENC_OK) {
        FUZZ_REQUIRE(heads > 0 && cap >= (size_t)heads, "slopes accepted heads %d cap %zu", heads, cap);
        for (int32_t h = 0; h < heads; h++)
            FUZZ_REQUIRE(isfinite(s64[h]) && s64[h] > 0, "f64 slope %d = %g", h, s64[h]);
        if (c == POSENC_OK) {
            FUZZ_REQUIRE(memcmp(s32, s32b, (size_t)heads * 4) == 0, "slopes not deterministic");
            for (int32_t h = 0; h < heads; h++)
                FUZZ_REQUIRE(isfinite(s32[h]) && s32[h] > 0, "f32 slope %d = %g", h, (double)s32[h]);
        }
    } else {
        fuzz_require_error(a, &err);
    }
    /* dense bias with slopes from the payload or the schedule */
    int32_t bh = (int32_t)fuzz_int_edgy(f, -1, 8);
    float slopes[8];
    for (int i = 0; i < 8; i++) {
        uint32_t bits = (uint32_t)fuzz_bits(f, 4);
        memcpy(&slopes[i], &bits, 4);
        if (fuzz_bool(f)) slopes[i] = 0.5f / (float)(i + 1);
    }
    posenc_alibi_form form = (posenc_alibi_form)fuzz_range_i64(f, -1, 2);
    fuzz_pos q, k;
    make_pos(f, &q);
    make_pos(f, &k);
    size_t need = bh > 0 && bh <= 8 ? (size_t)bh * q.pos.count * k.pos.count : 0;
    if (need <= BIAS_FUZZ_MAX) {
        size_t n = bh > 8 ? 0 : shrink(f, need);
        float *o1 = alloc_out(n, 4), *o2 = alloc_out(n, 4);
        posenc_status s1 = posenc_alibi_bias_f32(slopes, bh > 8 ? 8 : bh, form, &q.pos, &k.pos, o1, n, &err);
        posenc_status s2 = posenc_alibi_bias_f32(slopes, bh > 8 ? 8 : bh, form, &q.pos, &k.pos, o2, n, NULL);
        FUZZ_REQUIRE(s1 == s2, "bias status %d then %d", (int)s1, (int)s2);
        if (s1 == POSENC_OK) FUZZ_REQUIRE(memcmp(o1, o2, need * 4) == 0, "bias not deterministic");
        else fuzz_require_error(s1, &err);
        free(o1), free(o2);
    }
    size_t n = shrink(f, k.pos.count);
    float *row = alloc_out(n, 4);
    double qp = fuzz_double(f, 1e6);
    posenc_status s = posenc_alibi_bias_row_f32(slopes[0], form, qp, &k.pos, row, n, &err);
    if (s != POSENC_OK) fuzz_require_error(s, &err);
    free(row);
    /* key positions from a mask: values 0/1 usually, anything sometimes */
    size_t len = (size_t)fuzz_range_u64(f, 0, 32);
    int64_t mask[32], out[32];
    for (size_t i = 0; i < len; i++) mask[i] = fuzz_range_u64(f, 0, 15) == 0 ? fuzz_int_edgy(f, -2, 3) : fuzz_bool(f);
    s = posenc_alibi_key_positions_from_mask(mask, len, out, shrink(f, len), &err);
    if (s == POSENC_OK) {
        int64_t run = 0;
        for (size_t i = 0; i < len; i++) {
            run += mask[i];
            FUZZ_REQUIRE(out[i] == (run - 1) * mask[i], "key position %zu = %lld", i, (long long)out[i]);
        }
    } else {
        fuzz_require_error(s, &err);
    }
    free(s64), free(s32), free(s32b), free(q.owned), free(k.owned);
}

static void t5_and_shaw(fuzz_data *f) {
    posenc_error err;
    posenc_t5_params p;
    posenc_t5_params_default(&p);
    if (fuzz_bool(f)) p.num_buckets = (int32_t)fuzz_int_edgy(f, -1, 300);
    if (fuzz_bool(f)) p.max_distance = (int32_t)fuzz_int_edgy(f, -1, 2000);
    if (fuzz_bool(f)) p.bidirectional = (int32_t)fuzz_range_i64(f, -1, 2);
    posenc_status ok = posenc_t5_check(&p, &err);
    if (ok != POSENC_OK) fuzz_require_error(ok, &err);
    int64_t r = fuzz_int_edgy(f, -5000, 5000);
    int32_t bucket = -1;
    posenc_status s = posenc_t5_bucket(&p, r, &bucket, &err);
    if (s == POSENC_OK) FUZZ_REQUIRE(ok == POSENC_OK && bucket >= 0 && bucket < p.num_buckets, "bucket %d of %d for r=%lld",
                                     bucket, p.num_buckets, (long long)r);
    else fuzz_require_error(s, &err);
    fuzz_pos q, k;
    make_pos(f, &q);
    make_pos(f, &k);
    size_t need = q.pos.count * k.pos.count;
    size_t n = shrink(f, need);
    int32_t *m32 = alloc_out(n, 4);
    int64_t *m64 = alloc_out(n, 8);
    posenc_status s1 = posenc_t5_bucket_matrix_i32(&p, &q.pos, &k.pos, m32, n, &err);
    posenc_status s2 = posenc_t5_bucket_matrix_i64(&p, &q.pos, &k.pos, m64, n, NULL);
    FUZZ_REQUIRE(s1 == s2, "bucket matrix i32 %d, i64 %d", (int)s1, (int)s2);
    if (s1 == POSENC_OK) {
        for (size_t a = 0; a < q.pos.count; a++)
            for (size_t b = 0; b < k.pos.count; b++) {
                size_t i = a * k.pos.count + b;
                FUZZ_REQUIRE(m32[i] >= 0 && m32[i] < p.num_buckets && m64[i] == m32[i], "matrix bucket %d / %lld",
                             m32[i], (long long)m64[i]);
                int64_t qa = q.pos.ids ? q.pos.ids[a] : q.pos.start + (int64_t)a;
                int64_t kb = k.pos.ids ? k.pos.ids[b] : k.pos.start + (int64_t)b;
                int32_t one;
                FUZZ_REQUIRE(posenc_t5_bucket(&p, kb - qa, &one, NULL) == POSENC_OK && one == m32[i],
                             "matrix bucket %d != single bucket %d for r=%lld", m32[i], one, (long long)(kb - qa));
            }
    } else {
        fuzz_require_error(s1, &err);
    }
    /* gathered T5 bias from a table of payload floats */
    int32_t heads = (int32_t)fuzz_int_edgy(f, -1, 4);
    if (ok == POSENC_OK && heads > 0 && heads <= 4 && p.num_buckets <= 512 && need * (size_t)heads <= BIAS_FUZZ_MAX) {
        float *table = calloc((size_t)p.num_buckets * (size_t)heads, 4);
        size_t nb = shrink(f, need * (size_t)heads);
        float *o = alloc_out(nb, 4);
        s = posenc_t5_bias_f32(&p, table, heads, &q.pos, &k.pos, o, nb, &err);
        if (s != POSENC_OK) fuzz_require_error(s, &err);
        free(table), free(o);
    }
    /* Shaw */
    int32_t clip = (int32_t)fuzz_int_edgy(f, -1, 40);
    n = shrink(f, need);
    int32_t *idx = alloc_out(n, 4);
    s = posenc_shaw_relative_indices_i32(clip, &q.pos, &k.pos, idx, n, &err);
    if (s == POSENC_OK) {
        for (size_t i = 0; i < need; i++)
            FUZZ_REQUIRE(idx[i] >= 0 && (int64_t)idx[i] <= 2 * (int64_t)clip, "shaw index %d for clip %d", idx[i], clip);
        int32_t depth = (int32_t)fuzz_int_edgy(f, -1, 8);
        if (clip >= 0 && clip <= 1000 && depth > 0 && depth <= 8 && need * (size_t)depth <= BIAS_FUZZ_MAX) {
            float *table = calloc((size_t)(2 * clip + 1) * (size_t)depth, 4);
            if (need && fuzz_bool(f)) idx[fuzz_range_u64(f, 0, need - 1)] = (int32_t)fuzz_int_edgy(f, -3, 90);
            size_t ng = shrink(f, need * (size_t)depth);
            float *o = alloc_out(ng, 4);
            s = posenc_shaw_gather_f32(idx, need, clip, table, depth, o, ng, &err);
            if (s != POSENC_OK) fuzz_require_error(s, &err);
            free(table), free(o);
        }
    } else {
        fuzz_require_error(s, &err);
    }
    free(idx), free(m32), free(m64), free(q.owned), free(k.owned);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_data f = fuzz_data_make(data, size);
    if (fuzz_bool(&f)) alibi(&f);
    else t5_and_shaw(&f);
    return 0;
}
