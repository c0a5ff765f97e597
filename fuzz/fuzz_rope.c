/* fuzz_rope.c: the RoPE entry points with every knob drawn from the fuzz
 * input: posenc_rope_check, posenc_rope_frequencies, posenc_rope_table_f32/
 * f64, posenc_rope_apply_f32/f16/bf16 and posenc_rope_shift_f32 over strided
 * views, posenc_mrope_pair_map / posenc_mrope_apply_f32, and
 * posenc_mrope_position_ids. The payload (head of the input) supplies LongRoPE
 * factor lists, positions and the vectors to rotate.
 * Promises checked: a result or a status, never a crash, UB or hang; buffers
 * are exactly as large as stated (ASan sees any overrun); a rotation changes
 * only channels [0, R) of the heads in its view, every other element of x is
 * bit-identical afterwards; frequencies and attention factors are finite and
 * positive; cos/sin are finite and bounded by the attention factor; every
 * result is deterministic (computed twice, compared bit for bit). */
#include "fuzz_common.h"
#include "fuzz_data.h"
#include "fuzz_rope_params.h"

#include <math.h>

#define ROPE_FUZZ_MAX_X 8192 /* elements of x, so one input runs in milliseconds */

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    return 0;
}

static void check_frequencies(const posenc_rope_params *p, int64_t seq_len, int32_t pairs, fuzz_data *f,
                              double *attention) {
    posenc_error err;
    size_t cap = (size_t)pairs - (size_t)fuzz_range_u64(f, 0, 1);
    double *w1 = malloc(sizeof *w1 * (cap ? cap : 1)), *w2 = malloc(sizeof *w2 * (cap ? cap : 1));
    double a1 = NAN, a2 = NAN;
    posenc_status s1 = posenc_rope_frequencies(p, seq_len, w1, cap, &a1, &err);
    posenc_status s2 = posenc_rope_frequencies(p, seq_len, w2, cap, fuzz_bool(f) ? &a2 : NULL, NULL);
    FUZZ_REQUIRE(s1 == s2, "frequencies status %d then %d", (int)s1, (int)s2);
    if (s1 == POSENC_OK) {
        FUZZ_REQUIRE(cap >= (size_t)pairs, "short frequency buffer accepted");
        FUZZ_REQUIRE(isfinite(a1) && a1 > 0, "attention factor %g", a1);
        for (int32_t k = 0; k < pairs; k++)
            FUZZ_REQUIRE(isfinite(w1[k]) && w1[k] >= 0 && w1[k] == w2[k], "inv_freq[%d] = %g / %g", k, w1[k], w2[k]);
        FUZZ_REQUIRE(a1 == *attention, "attention factor %g, with a full buffer %g", a1, *attention);
    } else {
        fuzz_require_error(s1, &err);
    }
    free(w1);
    free(w2);
}

static void check_tables(const posenc_rope_params *p, int64_t seq_len, int32_t pairs, double attention,
                         fuzz_data *f) {
    posenc_error err;
    size_t count = (size_t)fuzz_range_u64(f, 0, 32);
    int kind = (int)fuzz_range_u64(f, 0, 2);
    int64_t *ids = NULL;
    double *values = NULL;
    posenc_positions pos;
    if (kind == 0) {
        pos = posenc_positions_range(fuzz_int_edgy(f, -2, 1 << 20), count);
    } else if (kind == 1) {
        ids = (int64_t *)payload_doubles(f, count);
        pos = posenc_positions_ids(ids, count);
    } else {
        values = payload_doubles(f, count);
        pos = posenc_positions_values(values, count);
    }
    size_t need = count * (size_t)pairs;
    size_t cap = need - (need && fuzz_range_u64(f, 0, 7) == 0 ? 1 : 0);
    int fold = fuzz_bool(f);
    float *c1 = malloc(sizeof *c1 * (cap ? cap : 1)), *s1 = malloc(sizeof *s1 * (cap ? cap : 1));
    float *c2 = malloc(sizeof *c2 * (cap ? cap : 1)), *s2 = malloc(sizeof *s2 * (cap ? cap : 1));
    double *cd = malloc(sizeof *cd * (cap ? cap : 1)), *sd = malloc(sizeof *sd * (cap ? cap : 1));
    posenc_status st = posenc_rope_table_f32(p, seq_len, &pos, fold, c1, s1, cap, &err);
    posenc_status st2 = posenc_rope_table_f32(p, seq_len, &pos, fold, c2, s2, cap, NULL);
    posenc_status std = posenc_rope_table_f64(p, seq_len, &pos, fold, cd, sd, cap, NULL);
    FUZZ_REQUIRE(st == st2 && st == std, "table status %d / %d / f64 %d", (int)st, (int)st2, (int)std);
    if (st == POSENC_OK) {
        double bound = (fold ? attention : 1.0) * (1 + 1e-6) + 1e-30;
        FUZZ_REQUIRE(cap >= need, "short table buffer accepted");
        FUZZ_REQUIRE(isfinite(attention), "tables computed where the frequencies failed");
        FUZZ_REQUIRE(memcmp(c1, c2, need * sizeof *c1) == 0 && memcmp(s1, s2, need * sizeof *s1) == 0,
                     "cos/sin tables not deterministic");
        for (size_t i = 0; i < need; i++)
            FUZZ_REQUIRE(isfinite(c1[i]) && isfinite(s1[i]) && fabs(c1[i]) <= bound && fabs(s1[i]) <= bound &&
                             fabs(cd[i]) <= bound && fabs(sd[i]) <= bound,
                         "table entry %zu: cos %g sin %g (f64 %g %g), bound %g", i, c1[i], s1[i], cd[i], sd[i],
                         bound);
    } else {
        fuzz_require_error(st, &err);
    }
    free(c1), free(s1), free(c2), free(s2), free(cd), free(sd);
    free(ids);
    free(values);
}

/* Apply (or shift, or M-RoPE) to a payload-filled buffer; check untouched elements. */
static void check_apply(const posenc_rope_params *p, int64_t seq_len, int32_t rotary, fuzz_data *f) {
    posenc_error err;
    posenc_rope_view view;
    view.tokens = (size_t)fuzz_range_u64(f, 0, 6);
    view.heads = (size_t)fuzz_range_u64(f, 0, 4);
    int32_t d = p->head_dim > 0 ? p->head_dim : 0;
    if (fuzz_bool(f)) {
        view = posenc_rope_view_contiguous(view.tokens, view.heads, p->head_dim);
    } else {
        view.head_stride = (size_t)fuzz_int_edgy(f, 0, 2 * (int64_t)d + 2);
        view.row_stride = (size_t)fuzz_int_edgy(f, 0, 4 * (2 * (int64_t)d + 2));
    }
    size_t x_count = (size_t)fuzz_range_u64(f, 0, ROPE_FUZZ_MAX_X);
    int dtype = (int)fuzz_range_u64(f, 0, 4); /* f32, f16, bf16, shift, mrope */
    int inverse = fuzz_bool(f);
    posenc_layout layout = (posenc_layout)fuzz_range_i64(f, -1, 2);
    int64_t *positions = NULL;
    posenc_mrope_sections sec;
    memset(&sec, 0, sizeof sec);
    if (dtype == 4) {
        sec.kind = (posenc_mrope_kind)fuzz_range_i64(f, -1, 3);
        sec.axes = (int32_t)fuzz_range_i64(f, -1, 5);
        for (int i = 0; i < POSENC_MROPE_MAX_AXES; i++) sec.sizes[i] = (int32_t)fuzz_int_edgy(f, -1, 70);
    }
    size_t npos = view.tokens * (dtype == 4 ? (size_t)(sec.axes > 0 ? sec.axes : 1) : 1);
    if (fuzz_range_u64(f, 0, 3) != 0 || dtype >= 3) positions = (int64_t *)payload_doubles(f, npos);
    size_t item = dtype == 1 || dtype == 2 ? 2 : 4;
    unsigned char *x = malloc(x_count ? x_count * item : 1), *before = malloc(x_count ? x_count * item : 1);
    unsigned char *again = malloc(x_count ? x_count * item : 1);
    for (size_t i = 0; i < x_count * item; i++) x[i] = f->size ? f->data[i % f->size] : (unsigned char)i;
    memcpy(before, x, x_count * item);
    memcpy(again, x, x_count * item);
    posenc_status st, st2;
#define RUN(buf, e)                                                                                         \
    (dtype == 0   ? posenc_rope_apply_f32(p, seq_len, layout, &view, positions, inverse, (float *)(buf), x_count, e) \
     : dtype == 1 ? posenc_rope_apply_f16(p, seq_len, layout, &view, positions, inverse, (uint16_t *)(buf), x_count, e) \
     : dtype == 2 ? posenc_rope_apply_bf16(p, seq_len, layout, &view, positions, inverse, (uint16_t *)(buf), x_count, e) \
     : dtype == 3 ? posenc_rope_shift_f32(p, seq_len, layout, &view, positions, (float *)(buf), x_count, e)          \
                  : posenc_mrope_apply_f32(p, &sec, layout, &view, positions, inverse, (float *)(buf), x_count, e))
    st = RUN(x, &err);
    st2 = RUN(again, NULL);
#undef RUN
    FUZZ_REQUIRE(st == st2, "apply status %d then %d", (int)st, (int)st2);
    if (st == POSENC_ERR_NONFINITE) fuzz_require_error(st, &err); /* inf/NaN reported, x rotated all the same */
    if (st == POSENC_OK || st == POSENC_ERR_NONFINITE) {
        FUZZ_REQUIRE(memcmp(x, again, x_count * item) == 0, "rotation not deterministic");
        /* only channels [0, R) of each viewed head may change */
        unsigned char *may = calloc(x_count ? x_count : 1, 1);
        for (size_t t = 0; t < view.tokens; t++)
            for (size_t h = 0; h < view.heads; h++)
                for (int32_t c = 0; c < rotary; c++) {
                    size_t i = t * view.row_stride + h * view.head_stride + (size_t)c;
                    FUZZ_REQUIRE(i < x_count, "accepted view reaches element %zu of %zu", i, x_count);
                    may[i] = 1;
                }
        for (size_t i = 0; i < x_count; i++)
            FUZZ_REQUIRE(may[i] || memcmp(x + i * item, before + i * item, item) == 0,
                         "element %zu outside the rotated channels changed", i);
        free(may);
    } else {
        fuzz_require_error(st, &err);
    }
    free(x), free(before), free(again);
    free(positions);
}

static void check_position_ids(fuzz_data *f) {
    posenc_mrope_segment seg[4];
    size_t n = (size_t)fuzz_range_u64(f, 0, 4);
    for (size_t i = 0; i < n; i++) {
        seg[i].is_grid = fuzz_bool(f);
        seg[i].length = fuzz_int_edgy(f, -1, 20);
        seg[i].grid_t = fuzz_int_edgy(f, -1, 4);
        seg[i].grid_h = fuzz_int_edgy(f, -1, 6);
        seg[i].grid_w = fuzz_int_edgy(f, -1, 6);
    }
    posenc_error err;
    size_t total = 0;
    posenc_status st = posenc_mrope_position_ids(n ? seg : NULL, n, NULL, 0, &total, &err);
    if (st != POSENC_OK) {
        fuzz_require_error(st, &err);
        return;
    }
    if (total > 4096) return;
    size_t cap = 3 * total;
    int64_t *ids = malloc(sizeof *ids * (cap ? cap : 1));
    size_t total2 = 0;
    st = posenc_mrope_position_ids(n ? seg : NULL, n, ids, cap, &total2, &err);
    FUZZ_REQUIRE(st == POSENC_OK && total2 == total, "position ids: query said %zu, fill gave %zu (%s)", total,
                 total2, err.message);
    for (size_t i = 0; i < cap; i++) FUZZ_REQUIRE(ids[i] >= 0, "negative position id %lld", (long long)ids[i]);
    free(ids);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_data f = fuzz_data_make(data, size);
    posenc_rope_params p;
    double *factors;
    int64_t seq_len;
    draw_rope_call(&f, &p, &factors, &seq_len);
#ifdef FUZZ_ROPE_DEBUG /* cc -DFUZZ_ROPE_DEBUG ... to see what a reproducer asks for */
    fuzz_say("head_dim %d rotary %d partial %g base %g scaling %d factor %g L0 %lld max_pos %lld beta %g/%g "
             "mscale %g/%g attn %g truncate %d lf/hf %g/%g factors %zu short %d long %d select %d mode %d seq %lld\n",
             p.head_dim, p.rotary_dim, p.partial_rotary_factor, p.base, (int)p.scaling, p.factor,
             (long long)p.original_max_position, (long long)p.max_position, p.beta_fast, p.beta_slow, p.mscale,
             p.mscale_all_dim, p.attention_factor, p.truncate, p.low_freq_factor, p.high_freq_factor,
             p.factors_count, p.short_factors != NULL, p.long_factors != NULL, (int)p.longrope_select,
             (int)p.mode, (long long)seq_len);
    for (size_t i = 0; i < p.factors_count && i < 8; i++)
        fuzz_say("  factor %zu: short %g long %g\n", i, p.short_factors ? p.short_factors[i] : 0.0,
                 p.long_factors ? p.long_factors[i] : 0.0);
#endif
    posenc_error err;
    int32_t rotary = -1;
    posenc_status st = posenc_rope_check(&p, &rotary, &err);
    if (st == POSENC_OK) {
        FUZZ_REQUIRE(rotary >= 2 && rotary % 2 == 0 && rotary <= p.head_dim, "rotary %d for head_dim %d", rotary,
                     p.head_dim);
        double attention = NAN;
        if (rotary <= 2048) {
            /* the attention factor bounds the folded tables: ask with a full-size buffer */
            double *w = malloc(sizeof *w * (size_t)(rotary / 2));
            if (posenc_rope_frequencies(&p, seq_len, w, (size_t)(rotary / 2), &attention, NULL) != POSENC_OK)
                attention = NAN;
            free(w);
            check_frequencies(&p, seq_len, rotary / 2, &f, &attention);
            check_tables(&p, seq_len, rotary / 2, attention, &f);
            check_apply(&p, seq_len, rotary, &f);
        }
    } else {
        fuzz_require_error(st, &err);
        if (fuzz_bool(&f)) check_apply(&p, seq_len, 0, &f); /* bad params: apply must refuse too */
    }
    check_position_ids(&f);
    free(factors);
    return 0;
}
