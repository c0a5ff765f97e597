/* rope_rotation.c: the cos/sin cache behind a rotated q (posenc_rope_rotation_cache,
 * posenc.h 4b). Given x and y = R(x), find the channels that pass through, the
 * pairing inside the rotated run, and per pair and position the 2-D rotation
 * (least squares over the heads); the result is a plain [T, R/2] cos/sin pair
 * for posenc_rope_identify. Calls nothing of rope_identify.c. */
#include "rope_internal.h"

#include <stdlib.h>
#include <string.h>

void posenc_rope_rotation_free(posenc_rope_rotation *r) {
    if (!r) return;
    posenc_array_free(&r->cos);
    posenc_array_free(&r->sin);
    memset(r, 0, sizeof *r);
}

typedef struct {
    size_t rows, heads, dim;
    double *v; /* [rows][heads][dim] */
} tensor3;

static posenc_status load_3d(const posenc_array *a, const char *what, tensor3 *t, posenc_error *err) {
    RETURN_ERROR_IF(a->dtype != POSENC_DTYPE_F32 && a->dtype != POSENC_DTYPE_F64 && a->dtype != POSENC_DTYPE_F16 &&
                        a->dtype != POSENC_DTYPE_BF16,
                    err, POSENC_ERR_INVALID_ARGUMENT, "%s must be f32, f64, f16 or bf16, got %s", what,
                    posenc_dtype_name(a->dtype));
    int first = 0;
    while (a->ndim - first > 3 && a->shape[first] == 1) first++;
    int rank = a->ndim - first;
    RETURN_ERROR_IF(rank != 2 && rank != 3, err, POSENC_ERR_INVALID_ARGUMENT,
                    "%s must be [positions, channels] or [positions, heads, channels], got rank %d", what, a->ndim);
    t->rows = a->shape[first];
    t->heads = rank == 3 ? a->shape[first + 1] : 1;
    t->dim = a->shape[a->ndim - 1];
    RETURN_ERROR_IF(t->rows < 3, err, POSENC_ERR_INVALID_ARGUMENT, "%s has %zu positions; at least 3 are needed", what,
                    t->rows);
    RETURN_ERROR_IF(t->heads < 1 || t->dim < 2, err, POSENC_ERR_INVALID_ARGUMENT,
                    "%s has %zu heads of %zu channels; a rotation needs at least one head of 2", what, t->heads,
                    t->dim);
    posenc_array f;
    FORWARD_IF_ERROR(posenc_array_to_f64(a, &f, err));
    t->v = f.data;
    for (size_t i = 0; i < f.count; i++)
        if (!isfinite(t->v[i])) {
            double bad = t->v[i];
            free(t->v);
            t->v = NULL;
            size_t c = i % t->dim, h = i / t->dim % t->heads, row = i / t->dim / t->heads;
            if (rank == 3)
                return posenc_fail_(err, POSENC_ERR_INVALID_ARGUMENT, "%s value at [%zu, %zu, %zu] is %g", what, row,
                                    h, c, bad);
            return posenc_fail_(err, POSENC_ERR_INVALID_ARGUMENT, "%s value at [%zu, %zu] is %g", what, row, c, bad);
        }
    return POSENC_OK;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Channels of pair j inside the rotated run [o, o + R). */
static void pair_channels(posenc_layout layout, size_t o, size_t R, size_t j, size_t *ca, size_t *cb) {
    if (layout == POSENC_LAYOUT_HALF) *ca = o + j, *cb = o + j + R / 2;
    else *ca = o + 2 * j, *cb = o + 2 * j + 1;
}

/* Worst relative departure of |y|/|x| from its median over every (t, h, pair)
 * with x nonzero; *where_t / *where_j name the worst. */
static double norm_misfit(const tensor3 *x, const tensor3 *y, posenc_layout layout, size_t o, size_t R, double stop,
                          double *median_out, size_t *where_t, size_t *where_j) {
    size_t K = R / 2, T = x->rows, H = x->heads, D = x->dim;
    /* median from up to 4096 samples spread over the data */
    size_t total = T * H * K, step = total > 4096 ? total / 4096 : 1, m = 0;
    double *sample = malloc(sizeof *sample * 4097);
    if (!sample) return INFINITY;
    for (size_t i = 0; i < total && m < 4097; i += step) {
        size_t j = i % K, h = i / K % H, t = i / K / H, ca, cb;
        pair_channels(layout, o, R, j, &ca, &cb);
        const double *xr = x->v + (t * H + h) * D, *yr = y->v + (t * H + h) * D;
        double nx = hypot(xr[ca], xr[cb]);
        if (nx > 0) sample[m++] = hypot(yr[ca], yr[cb]) / nx;
    }
    double med = 1;
    if (m) {
        qsort(sample, m, sizeof *sample, cmp_double);
        med = sample[m / 2];
    }
    free(sample);
    *median_out = med;
    double worst = 0;
    *where_t = *where_j = 0;
    if (!(med > 0)) return INFINITY;
    double med2 = med * med;
    for (size_t t = 0; t < T && worst <= stop; t++)
        for (size_t h = 0; h < H; h++) {
            const double *xr = x->v + (t * H + h) * D, *yr = y->v + (t * H + h) * D;
            for (size_t j = 0; j < K; j++) {
                size_t ca, cb;
                pair_channels(layout, o, R, j, &ca, &cb);
                double nx2 = xr[ca] * xr[ca] + xr[cb] * xr[cb];
                if (!(nx2 > 0)) continue;
                /* the error of a rounded |y| is relative to the pair's own size; a pair far
                 * below the head's scale is still exact in floating point */
                double d = fabs(sqrt((yr[ca] * yr[ca] + yr[cb] * yr[cb]) / (nx2 * med2)) - 1);
                if (d > worst) worst = d, *where_t = t, *where_j = j;
            }
        }
    return worst;
}

static posenc_status rotation(const posenc_array *xa, const posenc_array *ya, posenc_rope_rotation *out, tensor3 *x,
                              tensor3 *y, posenc_error *err) {
    FORWARD_IF_ERROR(load_3d(xa, "input", x, err));
    FORWARD_IF_ERROR(load_3d(ya, "rotated", y, err));
    RETURN_ERROR_IF(x->rows != y->rows || x->heads != y->heads || x->dim != y->dim, err, POSENC_ERR_INVALID_ARGUMENT,
                    "the rotated tensor is [%zu, %zu, %zu] (positions, heads, channels) but the input is [%zu, %zu, "
                    "%zu]: y = R(x) has x's shape",
                    y->rows, y->heads, y->dim, x->rows, x->heads, x->dim);
    size_t T = x->rows, H = x->heads, D = x->dim;
    RETURN_ERROR_IF(D > POSENC_ROPE_MAX_HEAD_DIM, err, POSENC_ERR_INVALID_ARGUMENT,
                    "%zu channels per head is more than any RoPE head (at most %d)", D, POSENC_ROPE_MAX_HEAD_DIM);
    /* pass-through channels: y == x everywhere */
    bool rotated[POSENC_ROPE_MAX_HEAD_DIM];
    size_t lo = D, hi = 0;
    for (size_t c = 0; c < D; c++) rotated[c] = false;
    for (size_t i = 0; i < T * H * D; i++) /* one pass, row-major */
        if (x->v[i] != y->v[i]) rotated[i % D] = true;
    for (size_t c = 0; c < D; c++)
        if (rotated[c]) {
            if (lo == D) lo = c;
            hi = c;
        }
    RETURN_ERROR_IF(lo == D, err, POSENC_ERR_INVALID_ARGUMENT,
                    "the rotated tensor equals the input in every channel: nothing was rotated");
    for (size_t c = lo; c <= hi; c++)
        RETURN_ERROR_IF(!rotated[c], err, POSENC_ERR_INVALID_ARGUMENT,
                        "channel %zu passes through unchanged between rotated channels %zu and %zu: the rotated "
                        "channels of a RoPE head are one contiguous run",
                        c, lo, hi);
    size_t R = hi - lo + 1, K = R / 2;
    RETURN_ERROR_IF(R % 2, err, POSENC_ERR_INVALID_ARGUMENT,
                    "channels %zu..%zu rotate: %zu channels, an odd count cannot be pairs", lo, hi, R);
    bool narrow = xa->dtype == POSENC_DTYPE_F16 || xa->dtype == POSENC_DTYPE_BF16 || ya->dtype == POSENC_DTYPE_F16 ||
                  ya->dtype == POSENC_DTYPE_BF16;
    double tol = narrow ? 3e-2 : 1e-3;
    /* the pairing that keeps every norm ratio */
    double med_h = 1, med_i = 1;
    size_t th, jh, ti, ji;
    /* a pairing that is off by more than 10x the tolerance stops early (only the better one is reported) */
    double mis_h = norm_misfit(x, y, POSENC_LAYOUT_HALF, lo, R, 10 * tol, &med_h, &th, &jh);
    double mis_i = R == 2 ? INFINITY : norm_misfit(x, y, POSENC_LAYOUT_INTERLEAVED, lo, R, 10 * tol, &med_i, &ti, &ji);
    posenc_layout layout = mis_i < mis_h ? POSENC_LAYOUT_INTERLEAVED : POSENC_LAYOUT_HALF;
    double mis = fmin(mis_h, mis_i);
    size_t wt = layout == POSENC_LAYOUT_HALF ? th : ti, wj = layout == POSENC_LAYOUT_HALF ? jh : ji;
    RETURN_ERROR_IF(!(mis <= tol), err, POSENC_ERR_INVALID_ARGUMENT,
                    "y is no rotation of x: in channels %zu..%zu neither pairing (half: (j, j + %zu), interleaved: "
                    "(2j, 2j + 1)) keeps |y| / |x| constant (at best off by %.3g at position %zu, pair %zu; a "
                    "rotation keeps it within %g)",
                    lo, hi, K, mis, wt, wj, tol);
    size_t shape[2] = {T, K};
    FORWARD_IF_ERROR(posenc_array_create(&out->cos, POSENC_DTYPE_F32, 2, shape, 0, err));
    FORWARD_IF_ERROR(posenc_array_create(&out->sin, POSENC_DTYPE_F32, 2, shape, 0, err));
    float *cs = out->cos.data, *sn = out->sin.data;
    double worst_head = 0;
    for (size_t t = 0; t < T; t++)
        for (size_t j = 0; j < K; j++) {
            size_t ca, cb;
            pair_channels(layout, lo, R, j, &ca, &cb);
            double n2 = 0, dc = 0, ds = 0, yy = 0;
            for (size_t h = 0; h < H; h++) {
                const double *xr = x->v + (t * H + h) * D, *yr = y->v + (t * H + h) * D;
                double a = xr[ca], b = xr[cb], a2 = yr[ca], b2 = yr[cb];
                n2 += a * a + b * b;
                dc += a * a2 + b * b2;
                ds += a * b2 - b * a2;
                yy += a2 * a2 + b2 * b2;
            }
            RETURN_ERROR_IF(!(n2 > 0), err, POSENC_ERR_INVALID_ARGUMENT,
                            "the input is zero in pair %zu (channels %zu, %zu) at position %zu in every head: the "
                            "rotation there cannot be seen",
                            j, ca, cb, t);
            double c = dc / n2, s = ds / n2;
            if (H > 1 && yy > 0) { /* do the heads agree on one rotation? */
                double res = 0;
                for (size_t h = 0; h < H; h++) {
                    const double *xr = x->v + (t * H + h) * D, *yr = y->v + (t * H + h) * D;
                    double a = xr[ca], b = xr[cb];
                    double ea = yr[ca] - (c * a - s * b), eb = yr[cb] - (s * a + c * b);
                    res += ea * ea + eb * eb;
                }
                double rel = sqrt(res / yy);
                RETURN_ERROR_IF(!(rel <= tol), err, POSENC_ERR_INVALID_ARGUMENT,
                                "y is no rotation of x: the heads disagree on the rotation of pair %zu at position %zu "
                                "(least-squares residual %.3g of |y|; one rotation per position fits within %g)",
                                j, t, rel, tol);
                if (rel > worst_head) worst_head = rel;
            }
            cs[t * K + j] = (float)c;
            sn[t * K + j] = (float)s;
        }
    out->layout = layout;
    out->head_dim = (int32_t)D;
    out->rotary_offset = (int32_t)lo;
    out->rotary_dim = (int32_t)R;
    out->rows = (int64_t)T;
    out->heads = (int64_t)H;
    out->max_norm_misfit = mis;
    out->max_head_misfit = worst_head;
    return POSENC_OK;
}

posenc_status posenc_rope_rotation_cache(const posenc_array *x, const posenc_array *y, posenc_rope_rotation *out,
                                         posenc_error *err) {
    RETURN_IF_NULL(x, err);
    RETURN_IF_NULL(y, err);
    RETURN_IF_NULL(out, err);
    memset(out, 0, sizeof *out);
    tensor3 tx = {0, 0, 0, NULL}, ty = {0, 0, 0, NULL};
    posenc_status st = rotation(x, y, out, &tx, &ty, err);
    free(tx.v);
    free(ty.v);
    if (st != POSENC_OK) {
        posenc_rope_rotation_free(out);
        return st;
    }
    return posenc_ok_(err);
}
