/* analysis_precision.c: `posenc precision`: what a low-precision dtype does to
 * integer positions, RoPE/sinusoid angles, tables and attention logits
 * (conventions.md section 12; user-needs B1/B2). Everything is measured by
 * direct computation against extended-precision angles, never estimated. */
#include "analysis_internal.h"

#include <stdlib.h>
#include <string.h>

double posenc_round_to_dtype(double v, posenc_dtype dtype) {
    int bits, emin;
    double max, overflow;
    switch (dtype) {
    case POSENC_DTYPE_F32: return (double)(float)v; /* the C conversion rounds to nearest even */
    case POSENC_DTYPE_F16: bits = 11, emin = -14, max = 65504.0, overflow = 65520.0; break;
    case POSENC_DTYPE_BF16:
        bits = 8, emin = -126, max = 0x1.fep127, overflow = 0x1.ffp127;
        break;
    default: return v;
    }
    if (!isfinite(v) || v == 0) return v;
    if (fabs(v) >= overflow) return copysign(INFINITY, v);
    int e = ilogb(v);
    if (e < emin) e = emin; /* subnormal range: fixed quantum */
    double quantum = ldexp(1.0, e - (bits - 1));
    double r = nearbyint(v / quantum) * quantum; /* exact scaling; ties to even */
    if (fabs(r) > max) return copysign(INFINITY, v);
    return r;
}

void posenc_precision_report_free(posenc_precision_report *r) {
    if (!r) return;
    free(r->frequencies);
    free(r->angle_error);
    memset(r, 0, sizeof *r);
}

/* The angle of pair k at position p when positions, frequencies and the
 * product are each rounded to dtype (HF before PR #29285 under autocast,
 * keras mixed precision, lucidrains with bf16 inputs). */
static double formed_angle(double p, double w, posenc_dtype dt) {
    return posenc_round_to_dtype(posenc_round_to_dtype(p, dt) * posenc_round_to_dtype(w, dt), dt);
}

static double exact_angle(int64_t p, double w) { return (double)((long double)p * (long double)w); }

/* Distance on the circle between two angles (what sin/cos can see). */
static double circle_error(double a, double b) {
    if (!isfinite(a) || !isfinite(b)) return INFINITY;
    double d = a - b;
    return fabs(d) <= 3.14159 ? fabs(d) : fabs(posenc_wrap_angle_(d));
}

/* Worst logit error for unit q/k at position p (k at 0): the operator norm of
 * R(formed) - R(exact) is 2|sin(err/2)|, so the worst unit q/k puts all its
 * weight in the worst pair. */
static double logit_error_angle(int64_t p, const double *w, int32_t K, posenc_dtype dt) {
    double worst = 0;
    for (int32_t k = 0; k < K; k++) {
        double e = circle_error(formed_angle((double)p, w[k], dt), exact_angle(p, w[k]));
        double l = isfinite(e) ? 2 * fabs(sin(e / 2)) : 2;
        if (l > worst) worst = l;
    }
    return worst;
}

static double logit_error_table(int64_t p, const double *w, int32_t K, posenc_dtype dt) {
    double worst = 0;
    for (int32_t k = 0; k < K; k++) {
        long double th = (long double)p * (long double)w[k];
        double c = (double)cosl(th), s = (double)sinl(th);
        double l = hypot(posenc_round_to_dtype(c, dt) - c, posenc_round_to_dtype(s, dt) - s);
        if (l > worst) worst = l;
    }
    return worst;
}

/* Round an exact product of two dtype values (<= 22 significant bits, so
 * exact in float32 while p < 2^24) through the float32 bit conversions; the
 * general routine otherwise. Same result, several times faster. */
static double round_product(double v, posenc_dtype dt, int64_t p) {
    if (p >= ((int64_t)1 << 24) || dt == POSENC_DTYPE_F32) return posenc_round_to_dtype(v, dt);
    return dt == POSENC_DTYPE_BF16 ? (double)posenc_round_to_bf16((float)v) : (double)posenc_round_to_f16((float)v);
}

typedef struct {
    uint64_t hash;
    int64_t p;
} row_hash;

static int compare_hash(const void *a, const void *b) {
    const row_hash *x = a, *y = b;
    if (x->hash != y->hash) return x->hash < y->hash ? -1 : 1;
    return x->p < y->p ? -1 : x->p > y->p ? 1 : 0;
}

/* Double-precision angles are ample here: the values are then rounded to at
 * most 24 bits, so an error of p * 2^-53 flips a rounding only at a tie. */
static void table_row(int64_t p, const double *w, int32_t K, posenc_dtype dt, double *row) {
    for (int32_t k = 0; k < K; k++) {
        double th = (double)p * w[k];
        row[2 * k] = posenc_round_to_dtype(sin(th), dt);
        row[2 * k + 1] = posenc_round_to_dtype(cos(th), dt);
    }
}

static uint64_t hash_row(const double *row, int32_t n) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a over the values' bytes */
    for (int32_t i = 0; i < n; i++) {
        unsigned char b[8];
        double v = row[i] == 0 ? 0.0 : row[i]; /* -0 == +0 */
        memcpy(b, &v, 8);
        for (int j = 0; j < 8; j++) h = (h ^ b[j]) * 1099511628211ull;
    }
    return h;
}

/* First position whose dtype-stored table row equals an earlier row. */
static posenc_status table_collision(const double *w, int32_t K, posenc_dtype dt, int64_t limit,
                                     posenc_precision_report *r, posenc_error *err) {
    size_t n = (size_t)limit + 1;
    row_hash *hs = malloc(n * sizeof(row_hash));
    double *ra = malloc(4 * (size_t)K * sizeof(double)), *rb = ra ? ra + 2 * K : NULL;
    if (!hs || !ra) {
        free(hs), free(ra);
        return posenc_fail_(err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %zu row hashes", n);
    }
    for (size_t i = 0; i < n; i++) {
        table_row((int64_t)i, w, K, dt, ra);
        hs[i].hash = hash_row(ra, 2 * K), hs[i].p = (int64_t)i;
    }
    qsort(hs, n, sizeof(row_hash), compare_hash);
    for (size_t i = 1; i < n; i++) {
        if (hs[i].hash != hs[i - 1].hash) continue;
        /* verify (hashes can collide) against every earlier row in the run */
        for (size_t j = i; j-- > 0 && hs[j].hash == hs[i].hash;) {
            table_row(hs[i].p, w, K, dt, ra);
            table_row(hs[j].p, w, K, dt, rb);
            if (memcmp(ra, rb, 2 * (size_t)K * sizeof(double)) == 0 &&
                (r->first_table_collision < 0 || hs[i].p < r->first_table_collision)) {
                r->first_table_collision = hs[i].p, r->table_collision_with = hs[j].p;
            }
        }
    }
    free(hs), free(ra);
    return posenc_ok_(err);
}

posenc_status posenc_precision_audit(const posenc_sinusoid_params *params, posenc_dtype dtype, int64_t max_pos,
                                     posenc_precision_report *r, posenc_error *err) {
    RETURN_IF_NULL(params, err);
    RETURN_IF_NULL(r, err);
    memset(r, 0, sizeof *r);
    RETURN_ERROR_IF(dtype != POSENC_DTYPE_F32 && dtype != POSENC_DTYPE_F16 && dtype != POSENC_DTYPE_BF16, err,
                    POSENC_ERR_INVALID_ARGUMENT, "dtype must be f32, f16 or bf16, got %s", posenc_dtype_name(dtype));
    RETURN_ERROR_IF(max_pos < 1 || max_pos > ((int64_t)1 << 31), err, POSENC_ERR_INVALID_ARGUMENT,
                    "max_pos must be in [1, 2^31], got %lld", (long long)max_pos);
    int32_t K;
    FORWARD_IF_ERROR(posenc_sinusoid_check(params, &K, err));
    /* one angle per (position, pair): keep a single call to about a minute */
    RETURN_ERROR_IF((double)(max_pos + 1) * K > 0x1p32, err, POSENC_ERR_LIMIT,
                    "max_pos x pairs = %lld x %d exceeds 2^32 angle evaluations; lower max_pos",
                    (long long)max_pos, K);
    r->dtype = dtype, r->max_pos = max_pos, r->pairs = K;
    r->frequencies = malloc((size_t)K * sizeof(double));
    r->angle_error = calloc((size_t)K, sizeof(double));
    if (!r->frequencies || !r->angle_error) {
        posenc_precision_report_free(r);
        return posenc_fail_(err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %d pairs", K);
    }
    posenc_status st = posenc_sinusoid_frequencies_f64(params, r->frequencies, (size_t)K, err);
    if (st != POSENC_OK) {
        posenc_precision_report_free(r);
        return st;
    }
    const double *w = r->frequencies;
    int bits = dtype == POSENC_DTYPE_F32 ? 24 : dtype == POSENC_DTYPE_F16 ? 11 : 8;
    int64_t inexact = ((int64_t)1 << bits) + 1;
    r->first_inexact_position = inexact <= max_pos ? inexact : -1;
    r->first_inexact_rounds_to = posenc_round_to_dtype((double)inexact, dtype);
    r->first_overflow_position = dtype == POSENC_DTYPE_F16 && max_pos >= 65520 ? 65520 : -1;
    /* bands, in increasing order, each ending at or before max_pos */
    static const int64_t ends[] = {256, 2048, 65504, 131072, 1000000};
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++)
        if (ends[i] < max_pos) r->bands[r->band_count++].max_position = ends[i];
    r->bands[r->band_count++].max_position = max_pos;
    /* one pass over positions: angle errors per pair, cumulative per band, and
     * collisions of the formed angle vectors (formed angles are monotone in p,
     * so equal vectors are consecutive positions) */
    r->first_angle_collision = r->angle_collision_with = -1;
    double running = 0;
    int band = 0;
    double *prev = malloc(2 * (size_t)K * sizeof(double)), *wd = prev ? prev + K : NULL;
    if (!prev) {
        posenc_precision_report_free(r);
        return posenc_fail_(err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %d pairs", K);
    }
    for (int32_t k = 0; k < K; k++) wd[k] = posenc_round_to_dtype(w[k], dtype);
    for (int64_t p = 0; p <= max_pos; p++) {
        bool same_as_previous = p > 0;
        double pd = posenc_round_to_dtype((double)p, dtype);
        for (int32_t k = 0; k < K; k++) {
            double f = round_product(pd * wd[k], dtype, p); /* = formed_angle(p, w[k]) */
            double e = circle_error(f, exact_angle(p, w[k]));
            if (e > r->angle_error[k]) r->angle_error[k] = e;
            if (e > running) running = e;
            if (same_as_previous) same_as_previous = f == prev[k];
            prev[k] = f;
        }
        if (same_as_previous && r->first_angle_collision < 0) r->first_angle_collision = p, r->angle_collision_with = p - 1;
        while (band < r->band_count && r->bands[band].max_position == p) r->bands[band++].angle_error = running;
    }
    free(prev);
    for (int b = 0; b < r->band_count; b++) {
        int64_t end = r->bands[b].max_position;
        r->bands[b].positions_exact = inexact > end && (dtype != POSENC_DTYPE_F16 || end < 65520);
        r->bands[b].logit_error = logit_error_angle(end, w, K, dtype);
    }
    r->logit_error_angle = logit_error_angle(max_pos, w, K, dtype);
    r->logit_error_table = logit_error_table(max_pos, w, K, dtype);
    r->first_table_collision = r->table_collision_with = -1;
    r->table_search_limit = max_pos < ((int64_t)1 << 18) ? max_pos : ((int64_t)1 << 18);
    st = table_collision(w, K, dtype, r->table_search_limit, r, err);
    if (st != POSENC_OK) {
        posenc_precision_report_free(r);
        return st;
    }
    return posenc_ok_(err);
}
