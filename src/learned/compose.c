/* compose.c: token embedding + position encoding, the two ways the source
 * articles combine them ("add", and "concat" followed by a linear projection),
 * and the first article's §5.2 check that a position signal was added at all. */
#include "../common/internal.h"

#include <stdlib.h>
#include <string.h>

static posenc_status check_ids(const int64_t *ids, size_t count, size_t vocab, posenc_error *err) {
    RETURN_IF_NULL(ids, err);
    RETURN_ERROR_IF(count == 0, err, POSENC_ERR_INVALID_ARGUMENT,
                    "number of tokens must be > 0, got 0");
    RETURN_ERROR_IF(vocab == 0, err, POSENC_ERR_INVALID_ARGUMENT, "vocab must be > 0, got 0");
    for (size_t i = 0; i < count; i++)
        RETURN_ERROR_IF(ids[i] < 0 || (uint64_t)ids[i] >= vocab, err, POSENC_ERR_OUT_OF_RANGE,
                        "token id %lld at index %zu is outside the vocabulary [0, %zu)",
                        (long long)ids[i], i, vocab);
    return POSENC_OK;
}

static posenc_status check_scale(double token_scale, posenc_error *err) {
    RETURN_ERROR_IF(!isfinite(token_scale), err, POSENC_ERR_INVALID_ARGUMENT,
                    "token_scale must be finite, got %g", token_scale);
    return POSENC_OK;
}

posenc_status posenc_compose_add_f32(const float *token_table, size_t vocab, int32_t dim,
                                     const int64_t *ids, size_t count, double token_scale,
                                     const float *pe, float *out, size_t out_count,
                                     posenc_error *err) {
    RETURN_IF_NULL(token_table, err);
    RETURN_IF_NULL(pe, err);
    RETURN_IF_NULL(out, err);
    RETURN_ERROR_IF(dim <= 0, err, POSENC_ERR_INVALID_ARGUMENT, "dim must be > 0, got %d", dim);
    FORWARD_IF_ERROR(check_scale(token_scale, err));
    FORWARD_IF_ERROR(check_ids(ids, count, vocab, err));
    size_t need;
    FORWARD_IF_ERROR(posenc_checked_count_(count, (size_t)dim, "tokens x dim", &need, err));
    RETURN_ERROR_IF(out_count < need, err, POSENC_ERR_BUFFER_TOO_SMALL,
                    "output holds %zu elements, [%zu x %d] needs %zu", out_count, count, dim, need);
    size_t d = (size_t)dim;
    for (size_t i = 0; i < count; i++) {
        const float *tok = token_table + (size_t)ids[i] * d;
        for (size_t c = 0; c < d; c++)
            out[i * d + c] = (float)((double)tok[c] * token_scale + (double)pe[i * d + c]);
    }
    return posenc_ok_(err);
}

posenc_status posenc_compose_concat_f32(const float *token_table, size_t vocab, int32_t token_dim,
                                        const int64_t *ids, size_t count, double token_scale,
                                        const float *pe, int32_t pe_dim, const float *projection,
                                        size_t projection_rows, int32_t out_dim, float *out,
                                        size_t out_count, posenc_error *err) {
    RETURN_IF_NULL(token_table, err);
    RETURN_IF_NULL(pe, err);
    RETURN_IF_NULL(out, err);
    RETURN_ERROR_IF(token_dim <= 0 || pe_dim <= 0, err, POSENC_ERR_INVALID_ARGUMENT,
                    "token_dim and pe_dim must be > 0, got %d and %d", token_dim, pe_dim);
    FORWARD_IF_ERROR(check_scale(token_scale, err));
    size_t in_dim = (size_t)token_dim + (size_t)pe_dim;
    if (projection) {
        RETURN_ERROR_IF(projection_rows != in_dim, err, POSENC_ERR_INVALID_ARGUMENT,
                        "projection has %zu rows, but token_dim + pe_dim = %d + %d = %zu",
                        projection_rows, token_dim, pe_dim, in_dim);
        RETURN_ERROR_IF(out_dim <= 0, err, POSENC_ERR_INVALID_ARGUMENT,
                        "out_dim must be > 0, got %d", out_dim);
    } else {
        RETURN_ERROR_IF((size_t)out_dim != in_dim, err, POSENC_ERR_INVALID_ARGUMENT,
                        "without a projection out_dim must be token_dim + pe_dim = %zu, got %d",
                        in_dim, out_dim);
    }
    FORWARD_IF_ERROR(check_ids(ids, count, vocab, err));
    size_t need;
    FORWARD_IF_ERROR(posenc_checked_count_(count, (size_t)out_dim, "tokens x out_dim", &need, err));
    RETURN_ERROR_IF(out_count < need, err, POSENC_ERR_BUFFER_TOO_SMALL,
                    "output holds %zu elements, [%zu x %d] needs %zu", out_count, count, out_dim,
                    need);
    double *x = malloc(sizeof *x * in_dim);
    RETURN_ERROR_IF(!x, err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %zu values", in_dim);
    size_t td = (size_t)token_dim, pd = (size_t)pe_dim, od = (size_t)out_dim;
    for (size_t i = 0; i < count; i++) {
        const float *tok = token_table + (size_t)ids[i] * td;
        for (size_t c = 0; c < td; c++) x[c] = (double)tok[c] * token_scale;
        for (size_t c = 0; c < pd; c++) x[td + c] = pe[i * pd + c];
        for (size_t o = 0; o < od; o++) {
            if (!projection) {
                out[i * od + o] = (float)x[o];
                continue;
            }
            double acc = 0;
            for (size_t c = 0; c < in_dim; c++) acc += x[c] * (double)projection[c * od + o];
            out[i * od + o] = (float)acc;
        }
    }
    free(x);
    return posenc_ok_(err);
}

static double row_max_diff(const float *a, const float *b, size_t d) {
    double worst = 0;
    for (size_t c = 0; c < d; c++) {
        double diff = fabs((double)a[c] - (double)b[c]);
        if (isnan(diff)) return INFINITY; /* NaN anywhere: treat as different, loudly */
        if (diff > worst) worst = diff;
    }
    return worst;
}

/* (id, position) pairs sorted by id then position: equal ids become neighbours */
typedef struct {
    int64_t id;
    size_t pos;
} id_pos;

static int compare_id_pos(const void *pa, const void *pb) {
    const id_pos *a = pa, *b = pb;
    if (a->id != b->id) return a->id < b->id ? -1 : 1;
    return a->pos < b->pos ? -1 : (a->pos > b->pos);
}

posenc_status posenc_compose_check_signal_f32(const float *batch, size_t batch_count, size_t seq,
                                              int32_t dim, const int64_t *ids, double atol,
                                              posenc_first_last_report *report, posenc_error *err) {
    RETURN_IF_NULL(batch, err);
    RETURN_IF_NULL(report, err);
    RETURN_ERROR_IF(batch_count == 0 || seq < 2, err, POSENC_ERR_INVALID_ARGUMENT,
                    "need batch >= 1 and seq >= 2 to compare first and last tokens, got %zu x %zu",
                    batch_count, seq);
    RETURN_ERROR_IF(dim <= 0, err, POSENC_ERR_INVALID_ARGUMENT, "dim must be > 0, got %d", dim);
    RETURN_ERROR_IF(!isfinite(atol) || atol < 0, err, POSENC_ERR_INVALID_ARGUMENT,
                    "atol must be finite and >= 0, got %g", atol);
    size_t n, cells;
    FORWARD_IF_ERROR(posenc_checked_count_(batch_count, seq, "batch x seq", &cells, err));
    FORWARD_IF_ERROR(posenc_checked_count_(cells, (size_t)dim, "batch x seq x dim", &n, err));
    id_pos *order = ids ? malloc(sizeof *order * seq) : NULL;
    RETURN_ERROR_IF(ids && !order, err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %zu pairs", seq);
    memset(report, 0, sizeof *report);
    report->sequences = batch_count;
    report->first_last_min_diff = INFINITY;
    size_t d = (size_t)dim;
    for (size_t b = 0; b < batch_count; b++) {
        const float *s = batch + b * seq * d;
        double diff = row_max_diff(s, s + (seq - 1) * d, d);
        if (diff < report->first_last_min_diff) report->first_last_min_diff = diff;
        if (!(diff > atol)) report->first_last_identical++;
        if (!ids) continue;
        for (size_t t = 0; t < seq; t++) order[t] = (id_pos){ids[b * seq + t], t};
        qsort(order, seq, sizeof *order, compare_id_pos);
        for (size_t t = 1; t < seq; t++) {
            if (order[t].id != order[t - 1].id || order[t].id < 0) continue;
            report->same_id_pairs++;
            if (!(row_max_diff(s + order[t].pos * d, s + order[t - 1].pos * d, d) > atol))
                report->same_id_identical++;
        }
    }
    free(order);
    report->position_signal = report->first_last_identical == 0 && report->same_id_identical == 0;
    return posenc_ok_(err);
}
