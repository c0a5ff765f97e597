/* analysis_diff.c: `posenc diff`: element statistics between two tables and
 * the row/channel-level hypotheses (transposed, prefix, position offset,
 * padding rows, channel permutation). The model-level diagnosis (layout,
 * pair order, frequencies, base, angle formation, presets) is in
 * analysis_diagnose.c. */
#include "analysis_diff_internal.h"

#include <stdlib.h>
#include <string.h>

void posenc_diff_report_free(posenc_diff_report *r) {
    if (!r) return;
    posenc_sinusoid_fit_free(&r->fit_a);
    posenc_sinusoid_fit_free(&r->fit_b);
    free(r->channel_max_abs);
    memset(r, 0, sizeof *r);
}

/* Order-preserving map of a float32 onto integers, for ULP distances. */
static int64_t ordered_f32(float x) {
    int32_t i;
    memcpy(&i, &x, 4);
    return i < 0 ? (int64_t)INT32_MIN - i : i;
}

static int ulp_bucket(double a, double b) {
    if (!isfinite(a) || !isfinite(b)) return (isnan(a) && isnan(b)) || (a == b) ? 0 : 7;
    int64_t d = ordered_f32((float)a) - ordered_f32((float)b);
    if (d < 0) d = -d;
    return d == 0 ? 0 : d == 1 ? 1 : d < 4 ? 2 : d < 16 ? 3 : d < 256 ? 4 : d < 65536 ? 5 : 6;
}

static bool row_is_zero(const posenc_f64_table_ *t, size_t r) {
    for (size_t c = 0; c < t->cols; c++)
        if (posenc_table_at_(t, r * t->cols + c) != 0) return false;
    return true;
}

/* Position bands of the report: ends 256, 2048, 65504, 131072, 10^6 below the
 * number of positions, then all positions. */
static void setup_bands(posenc_diff_report *r, int64_t positions) {
    static const int64_t ends[] = {256, 2048, 65504, 131072, 1000000};
    r->band_count = 0;
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++)
        if (ends[i] < positions) r->band_end[r->band_count++] = ends[i];
    r->band_end[r->band_count++] = positions;
}

static void element_stats(const posenc_f64_table_ *a, const posenc_f64_table_ *b, size_t rows_per_position,
                          posenc_diff_report *r) {
    double tol = r->tolerance, sum_abs = 0, sum_rel = 0;
    setup_bands(r, (int64_t)(a->rows / rows_per_position));
    r->first_beyond_row = r->first_beyond_channel = r->divergence_onset = r->max_abs_row = r->max_abs_channel = -1;
    for (size_t i = 0; i < a->rows; i++) {
        double row_max = 0;
        for (size_t c = 0; c < a->cols; c++) {
            double x = posenc_table_at_(a, i * a->cols + c), y = posenc_table_at_(b, i * b->cols + c);
            r->nonfinite_a += !isfinite(x);
            r->nonfinite_b += !isfinite(y);
            r->ulp_histogram[ulp_bucket(x, y)]++;
            double d = fabs(x - y);
            if (isnan(x) && isnan(y)) d = 0;
            else if (x == y) d = 0; /* equal infinities */
            else if (!isfinite(d)) d = INFINITY;
            double m = fmax(fabs(x), fabs(y));
            double rel = d == 0 ? 0 : isfinite(m) && m > 0 ? d / m : INFINITY;
            if (d > r->max_abs || r->max_abs_row < 0) r->max_abs = d, r->max_abs_row = (int64_t)i, r->max_abs_channel = (int64_t)c;
            if (rel > r->max_rel) r->max_rel = rel;
            sum_abs += d, sum_rel += rel;
            if (d > tol && r->first_beyond_row < 0) r->first_beyond_row = (int64_t)i, r->first_beyond_channel = (int64_t)c;
            if (d > row_max) row_max = d;
            if (r->channel_max_abs && d > r->channel_max_abs[c]) r->channel_max_abs[c] = d;
            r->compared++;
        }
        int64_t pos = (int64_t)(i / rows_per_position);
        for (int bnd = 0; bnd < r->band_count; bnd++)
            if (pos < r->band_end[bnd] && row_max > r->band_max_abs[bnd]) r->band_max_abs[bnd] = row_max;
        if (row_max > tol && r->divergence_onset < 0) r->divergence_onset = (int64_t)i;
    }
    r->mean_abs = r->compared ? sum_abs / (double)r->compared : 0;
    r->mean_rel = r->compared ? sum_rel / (double)r->compared : 0;
}

/* max |A[r+k] - B[r]| over rows present in both (all-zero rows skipped);
 * INFINITY if fewer than `need` rows overlap. */
static double shifted_diff(const posenc_f64_table_ *a, const posenc_f64_table_ *b, long k, size_t need) {
    double worst = 0;
    size_t n = 0;
    for (size_t rb = 0; rb < b->rows; rb++) {
        long ra = (long)rb + k;
        if (ra < 0 || (size_t)ra >= a->rows) continue;
        if (row_is_zero(a, (size_t)ra) || row_is_zero(b, rb)) continue;
        for (size_t c = 0; c < a->cols; c++) {
            double d = fabs(posenc_table_at_(a, (size_t)ra * a->cols + c) - posenc_table_at_(b, rb * b->cols + c));
            if (!(d <= worst)) worst = d;
        }
        n++;
    }
    return n >= need ? worst : INFINITY;
}

static void row_hypotheses(const posenc_f64_table_ *a, const posenc_f64_table_ *b, const posenc_diff_options *o,
                           posenc_diff_report *r) {
    double tol = r->tolerance;
    /* transposed */
    if (a->rows == b->cols && a->cols == b->rows && a->rows > 1 && a->cols > 1) {
        double worst = 0;
        for (size_t i = 0; i < a->rows; i++)
            for (size_t c = 0; c < a->cols; c++) {
                double d = fabs(posenc_table_at_(a, i * a->cols + c) - posenc_table_at_(b, c * b->cols + i));
                if (!(d <= worst)) worst = d;
            }
        posenc_finding *f = worst <= tol ? posenc_diff_add_(r, POSENC_FINDING_TRANSPOSED, worst) : NULL;
        if (f) f->evidence = worst;
    }
    if (a->cols != b->cols) return;
    /* prefix */
    if (a->rows != b->rows) {
        const posenc_f64_table_ *s = a->rows < b->rows ? a : b, *l = a->rows < b->rows ? b : a;
        double worst = 0;
        for (size_t i = 0; i < s->rows * s->cols; i++) {
            double d = fabs(posenc_table_at_(s, i) - posenc_table_at_(l, i));
            if (!(d <= worst)) worst = d;
        }
        posenc_finding *f = worst <= tol ? posenc_diff_add_(r, POSENC_FINDING_PREFIX, (double)s->rows) : NULL;
        if (f) f->side = s == b, f->count = s->rows, f->evidence = worst;
    }
    /* position offset: B row r = A row r + k */
    size_t minrows = a->rows < b->rows ? a->rows : b->rows;
    long maxk = o->max_offset ? (long)o->max_offset : (long)(minrows / 2 < 64 ? minrows / 2 : 64);
    /* no offset beyond the row count can match; a huge max_offset looped for
     * minutes (and SIZE_MAX became -1): found by fuzz_analysis */
    if (o->max_offset > minrows) maxk = (long)minrows;
    size_t need = minrows / 2 > 3 ? minrows / 2 : 3;
    if (need > minrows) need = minrows;
    long best_k = 0;
    double best = INFINITY;
    for (long k = -maxk; k <= maxk && !posenc_diff_has_(r, POSENC_FINDING_PREFIX); k++) {
        if (k == 0) continue;
        double d = shifted_diff(a, b, k, need);
        if (d < best) best = d, best_k = k;
    }
    posenc_finding *f = best <= tol ? posenc_diff_add_(r, POSENC_FINDING_OFFSET, (double)best_k) : NULL;
    if (f) f->evidence = best;
    if (a->rows != b->rows) return;
    /* padding rows: rows zeroed in one table only, the rest equal */
    size_t za = 0, zb = 0;
    long first = -1;
    double rest = 0;
    for (size_t i = 0; i < a->rows; i++) {
        bool ia = row_is_zero(a, i), ib = row_is_zero(b, i);
        if (ia != ib) {
            za += ia, zb += ib;
            if (first < 0) first = (long)i;
            continue;
        }
        for (size_t c = 0; c < a->cols; c++) {
            double d = fabs(posenc_table_at_(a, i * a->cols + c) - posenc_table_at_(b, i * b->cols + c));
            if (!(d <= rest)) rest = d;
        }
    }
    f = first >= 0 && rest <= tol ? posenc_diff_add_(r, POSENC_FINDING_PADDING_ROWS, (double)first) : NULL;
    if (f) f->side = za == 0, f->count = za ? za : zb, f->evidence = rest;
}

/* Channel permutation within blocks of `width` channels (one block per head). */
static void permutation_hypothesis(const posenc_f64_table_ *a, const posenc_f64_table_ *b, size_t heads,
                                   bool per_head, posenc_diff_report *r) {
    size_t cols = a->cols;
    if (a->rows != b->rows || a->cols != b->cols || cols < 2) return;
    if (heads == 0 || cols % heads) heads = 1;
    size_t width = cols / heads;
    if (width > 1024) return; /* O(width^2 rows) per head: keep it bounded */
    size_t *perm = malloc(cols * sizeof(size_t));
    unsigned char *used = calloc(cols, 1);
    bool ok = perm && used;
    for (size_t j = 0; ok && j < cols; j++) {
        size_t block = j / width * width;
        ok = false;
        for (size_t i = block; i < block + width && !ok; i++) {
            if (used[i]) continue;
            bool same = true;
            for (size_t t = 0; t < a->rows && same; t++)
                same = fabs(posenc_table_at_(a, t * cols + i) - posenc_table_at_(b, t * cols + j)) <= r->tolerance;
            if (same) perm[j] = i, used[i] = 1, ok = true;
        }
    }
    if (ok) {
        bool identity = true, to_half = width % 2 == 0, to_inter = width % 2 == 0, swap_i = to_half, swap_h = to_half;
        size_t K = width / 2;
        for (size_t j = 0; j < cols; j++) {
            size_t l = j % width, src = perm[j] % width;
            identity &= src == l;
            if (width % 2 == 0) {
                /* B half from A interleaved: B[k] = A[2k], B[K+k] = A[2k+1] */
                to_half &= src == (l < K ? 2 * l : 2 * (l - K) + 1);
                to_inter &= src == (l % 2 ? l / 2 + K : l / 2);
                swap_i &= src == (l ^ 1);
                swap_h &= src == (l < K ? l + K : l - K);
            }
        }
        posenc_permutation what = to_half    ? POSENC_PERMUTATION_TO_HALF
                                  : to_inter ? POSENC_PERMUTATION_TO_INTERLEAVED
                                  : swap_i   ? POSENC_PERMUTATION_SWAP_PAIRS
                                  : swap_h   ? POSENC_PERMUTATION_SWAP_HALVES
                                             : POSENC_PERMUTATION_GENERAL;
        posenc_finding *f = NULL;
        /* On an additive table these permutations are conventions of their own */
        if (!identity && !per_head && (to_half || to_inter))
            f = posenc_diff_add_(r, POSENC_FINDING_LAYOUT, to_half ? 1 : 0);
        else if (!identity && !per_head && (swap_i || swap_h))
            f = posenc_diff_add_(r, POSENC_FINDING_SIN_COS_SWAPPED, 1);
        else if (!identity)
            f = posenc_diff_add_(r, POSENC_FINDING_PERMUTATION, (double)heads);
        if (f) f->permutation = what, f->count = heads, f->width = width;
    }
    free(perm);
    free(used);
}

posenc_status posenc_diff_tables(const posenc_array *a, const posenc_array *b, const posenc_diff_options *options,
                                 posenc_diff_report *out, posenc_error *err) {
    RETURN_IF_NULL(a, err);
    RETURN_IF_NULL(b, err);
    RETURN_IF_NULL(out, err);
    memset(out, 0, sizeof *out);
    out->fit_a.first_zero_row = out->fit_b.first_zero_row = -1;
    posenc_diff_options o = {0};
    if (options) o = *options;
    RETURN_ERROR_IF(!(o.tolerance >= 0) || !isfinite(o.tolerance), err, POSENC_ERR_INVALID_ARGUMENT,
                    "tolerance must be finite and >= 0, got %g", o.tolerance);
    out->tolerance = o.tolerance > 0 ? o.tolerance : 1e-5;
    out->rope = o.input != NULL;
    posenc_f64_table_ ta, tb;
    FORWARD_IF_ERROR(posenc_f64_table_from_array_(a, "table A", &ta, err));
    posenc_status st = posenc_f64_table_from_array_(b, "table B", &tb, err);
    if (st != POSENC_OK) {
        return st;
    }
    out->rows_a = ta.rows, out->cols_a = ta.cols, out->rows_b = tb.rows, out->cols_b = tb.cols;
    out->shapes_equal = ta.rows == tb.rows && ta.cols == tb.cols;
    out->first_beyond_row = out->first_beyond_channel = out->divergence_onset = -1;
    if (out->shapes_equal) {
        out->channel_max_abs = calloc(ta.cols, sizeof(double));
        if (!out->channel_max_abs) {
            return posenc_fail_(err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %zu channel errors", ta.cols);
        }
        size_t per = a->ndim >= 2 && a->shape[0] > 0 ? ta.rows / a->shape[0] : 1;
        element_stats(&ta, &tb, per ? per : 1, out);
    }
    if (out->shapes_equal && out->max_abs <= out->tolerance && out->nonfinite_a == out->nonfinite_b) {
        posenc_finding *f = posenc_diff_add_(out, POSENC_FINDING_AGREE, out->max_abs);
        if (f) f->evidence = out->tolerance;
    } else {
        row_hypotheses(&ta, &tb, &o, out);
        /* a [T,H,D] array is already flattened to rows of one head each, so
         * only a 2-D [T, H*D] table needs heads from the options */
        permutation_hypothesis(&ta, &tb, a->ndim == 3 ? 1 : o.heads, a->ndim == 3 || o.heads > 1 || o.input, out);
    }
    st = posenc_diagnose_models_(a, b, &ta, &tb, &o, out, err);
    if (st == POSENC_OK) posenc_diff_summarize_(out);
    bool related = out->shapes_equal || posenc_diff_has_(out, POSENC_FINDING_TRANSPOSED) ||
                   posenc_diff_has_(out, POSENC_FINDING_PREFIX) || posenc_diff_has_(out, POSENC_FINDING_OFFSET);
    if (st == POSENC_OK && !related)
        st = posenc_fail_(err, POSENC_ERR_INVALID_ARGUMENT,
                          "shapes do not match: A is [%zu x %zu], B is [%zu x %zu] (rows x channels), and B is "
                          "not A transposed, a prefix, or A shifted by a position offset",
                          ta.rows, ta.cols, tb.rows, tb.cols);
    if (st != POSENC_OK) {
        posenc_diff_report_free(out);
        return st;
    }
    return posenc_ok_(err);
}
