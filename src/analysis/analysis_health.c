/* analysis_health.c: `posenc analyze`: the health statistics of a position
 * table (second source article's checks): value range, per-position variance
 * and norm, per-channel dominant frequency, uniqueness, similarity vs
 * distance, and the rotation (relative-position) linearity check. */
#include "analysis_internal.h"

#include <stdlib.h>
#include <string.h>

#define TWO_PI 6.283185307179586476925286766559

void posenc_health_free(posenc_health *h) {
    if (!h) return;
    free(h->row_variance);
    free(h->row_norm);
    free(h->channel_frequency);
    free(h->channel_wavelength);
    free(h->mean_dot);
    free(h->mean_cosine);
    free(h->linearity_residual);
    posenc_sinusoid_fit_free(&h->fit);
    memset(h, 0, sizeof *h);
}

/* In-place iterative radix-2 FFT (n a power of two); tw[j] = exp(-2 pi i j/n), j < n/2. */
static void fft(double *re, double *im, size_t n, const double *tw_re, const double *tw_im) {
    for (size_t i = 1, j = 0; i < n; i++) {
        size_t bit = n >> 1;
        for (; j & bit; bit >>= 1) j ^= bit;
        j ^= bit;
        if (i < j) {
            double t = re[i]; re[i] = re[j]; re[j] = t;
            t = im[i]; im[i] = im[j]; im[j] = t;
        }
    }
    for (size_t len = 2; len <= n; len <<= 1) {
        size_t stride = n / len;
        for (size_t i = 0; i < n; i += len)
            for (size_t k = 0; k < len / 2; k++) {
                double wr = tw_re[k * stride], wi = tw_im[k * stride];
                size_t u = i + k, v = i + k + len / 2;
                double xr = re[v] * wr - im[v] * wi, xi = re[v] * wi + im[v] * wr;
                re[v] = re[u] - xr, im[v] = im[u] - xi;
                re[u] += xr, im[u] += xi;
            }
    }
}

/* Dominant frequency of each channel: peak of the zero-padded spectrum (4x
 * oversampled) with parabolic refinement. A peak at bin < 2*pad (less than
 * one cycle over the rows) cannot be resolved: reported as 0 / infinite wavelength. */
static posenc_status channel_frequencies(const posenc_f64_table_ *t, size_t rows, size_t cols, posenc_health *h,
                                         posenc_error *err) {
    size_t n = 1;
    while (n < 4 * rows && n < ((size_t)1 << 22)) n <<= 1;
    size_t pad = n / rows ? n / rows : 1;
    double *re = malloc(n * sizeof(double)), *im = malloc(n * sizeof(double)), *mag = malloc(n * sizeof(double));
    double *tw = malloc(n * sizeof(double)); /* twiddles once for every channel: [re | im] */
    if (!re || !im || !mag || !tw) {
        free(re), free(im), free(mag), free(tw);
        return posenc_fail_(err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate a %zu-point spectrum", n);
    }
    for (size_t j = 0; j < n / 2; j++) tw[j] = cos(-TWO_PI * (double)j / (double)n), tw[n / 2 + j] = sin(-TWO_PI * (double)j / (double)n);
    for (size_t c = 0; c < cols; c++) {
        double mean = 0;
        size_t m = rows < n ? rows : n;
        for (size_t r = 0; r < m; r++) mean += isfinite(posenc_table_at_(t, r * cols + c)) ? posenc_table_at_(t, r * cols + c) : 0;
        mean /= (double)m;
        for (size_t i = 0; i < n; i++) {
            double v = i < m ? posenc_table_at_(t, i * cols + c) : mean;
            re[i] = isfinite(v) ? v - mean : 0;
            im[i] = 0;
        }
        fft(re, im, n, tw, tw + n / 2);
        size_t best = 0;
        for (size_t i = 0; i <= n / 2; i++) {
            mag[i] = hypot(re[i], im[i]);
            if (i > 0 && mag[i] > mag[best]) best = i;
        }
        double freq = 0;
        if (best >= 2 * pad && mag[best] > 0) {
            double delta = 0;
            if (best + 1 <= n / 2) {
                double a = mag[best - 1], b = mag[best], cc = mag[best + 1], den = a - 2 * b + cc;
                if (den != 0) delta = 0.5 * (a - cc) / den;
            }
            freq = TWO_PI * ((double)best + delta) / (double)n;
        }
        h->channel_frequency[c] = freq;
        h->channel_wavelength[c] = freq > 0 ? TWO_PI / freq : INFINITY;
    }
    free(re), free(im), free(mag), free(tw);
    return posenc_ok_(err);
}

static double finite_or_zero(double v) { return isfinite(v) ? v : 0; }

/* Dot product and squared distance with four partial sums (for ILP). */
static double dot4(const double *a, const double *b, size_t n) {
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t c = 0;
    for (; c + 4 <= n; c += 4) s0 += a[c] * b[c], s1 += a[c + 1] * b[c + 1], s2 += a[c + 2] * b[c + 2], s3 += a[c + 3] * b[c + 3];
    for (; c < n; c++) s0 += a[c] * b[c];
    return (s0 + s1) + (s2 + s3);
}

static double sum_sq_diff(const double *a, const double *b, size_t n) {
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t c = 0;
    for (; c + 4 <= n; c += 4) {
        double d0 = a[c] - b[c], d1 = a[c + 1] - b[c + 1], d2 = a[c + 2] - b[c + 2], d3 = a[c + 3] - b[c + 3];
        s0 += d0 * d0, s1 += d1 * d1, s2 += d2 * d2, s3 += d3 * d3;
    }
    for (; c < n; c++) s0 += (a[c] - b[c]) * (a[c] - b[c]);
    return (s0 + s1) + (s2 + s3);
}

/* max over p of ||M(delta)PE(p) - PE(p+delta)|| for one pair, M the 2x2
 * rotation that advances (sin, cos) by delta = w*offset. */
static double linearity(const posenc_f64_table_ *t, size_t rows, size_t cols, size_t a, size_t b, int cos_first,
                        double w, size_t offset) {
    double c = cos(w * (double)offset), s = sin(w * (double)offset), worst = 0;
    for (size_t p = 0; p + offset < rows; p++) {
        double u = posenc_table_at_(t, p * cols + a), v = posenc_table_at_(t, p * cols + b);
        double sn = cos_first ? v : u, cs = cos_first ? u : v;
        double ps = sn * c + cs * s, pc = cs * c - sn * s; /* sin(x+d), cos(x+d) */
        double ts = cos_first ? posenc_table_at_(t, (p + offset) * cols + b) : posenc_table_at_(t, (p + offset) * cols + a);
        double tc = cos_first ? posenc_table_at_(t, (p + offset) * cols + a) : posenc_table_at_(t, (p + offset) * cols + b);
        double e = hypot(ps - ts, pc - tc);
        if (!(e <= worst)) worst = e;
    }
    return worst;
}

posenc_status posenc_health_analyze(const posenc_array *table, const posenc_health_options *options,
                                    posenc_health *h, posenc_error *err) {
    RETURN_IF_NULL(h, err);
    memset(h, 0, sizeof *h);
    h->fit.first_zero_row = -1;
    posenc_health_options opt = {0};
    if (options) opt = *options;
    posenc_f64_table_ tab;
    FORWARD_IF_ERROR(posenc_f64_table_from_array_(table, "table", &tab, err));
    size_t rows = tab.rows, cols = tab.cols;
    const posenc_f64_table_ *t = &tab;
    h->rows = rows, h->channels = cols;
    h->first_nonfinite_row = h->first_nonfinite_channel = -1;
    size_t offsets = opt.max_offset ? opt.max_offset + 1 : (rows - 1 < 128 ? rows - 1 : 128) + 1;
    if (offsets > rows) offsets = rows;
    h->offsets = offsets;
    h->row_variance = calloc(rows, sizeof(double));
    h->row_norm = calloc(rows, sizeof(double));
    h->channel_frequency = calloc(cols, sizeof(double));
    h->channel_wavelength = calloc(cols, sizeof(double));
    h->mean_dot = calloc(offsets, sizeof(double));
    h->mean_cosine = calloc(offsets, sizeof(double));
    if (!h->row_variance || !h->row_norm || !h->channel_frequency || !h->channel_wavelength ||
        !h->mean_dot || !h->mean_cosine) {
        posenc_health_free(h);
        return posenc_fail_(err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate statistics for [%zu x %zu]", rows, cols);
    }
    /* value range and per-position statistics (finite values only) */
    h->min = INFINITY, h->max = -INFINITY;
    double sum_abs = 0;
    size_t nfinite = 0;
    h->norm_min = h->variance_min = INFINITY;
    h->norm_max = h->variance_max = -INFINITY;
    for (size_t r = 0; r < rows; r++) {
        double s = 0, s2 = 0;
        size_t n = 0;
        for (size_t c = 0; c < cols; c++) {
            double v = posenc_table_at_(t, r * cols + c);
            if (!isfinite(v)) {
                if (h->nonfinite++ == 0) h->first_nonfinite_row = (int64_t)r, h->first_nonfinite_channel = (int64_t)c;
                continue;
            }
            if (v < h->min) h->min = v;
            if (v > h->max) h->max = v;
            sum_abs += fabs(v), s += v, s2 += v * v, n++;
        }
        nfinite += n;
        double mean = n ? s / (double)n : 0;
        h->row_variance[r] = n ? s2 / (double)n - mean * mean : NAN;
        if (h->row_variance[r] < 0) h->row_variance[r] = 0;
        h->row_norm[r] = sqrt(s2);
        if (h->row_norm[r] < h->norm_min) h->norm_min = h->row_norm[r];
        if (h->row_norm[r] > h->norm_max) h->norm_max = h->row_norm[r];
        if (h->row_variance[r] < h->variance_min) h->variance_min = h->row_variance[r];
        if (h->row_variance[r] > h->variance_max) h->variance_max = h->row_variance[r];
    }
    h->mean_abs = nfinite ? sum_abs / (double)nfinite : NAN;
    if (!nfinite) h->min = h->max = NAN;
    posenc_status st = channel_frequencies(t, rows, cols, h, err);
    /* uniqueness and similarity read rows with non-finite values zeroed, so the
     * inner loops are plain (four partial sums: no FP reassociation flags).
     * Memory: the first urows rows, a ring of `offsets` rows and the row norms,
     * never a copy of the table. */
    size_t urows = opt.max_rows_pairs ? opt.max_rows_pairs : 2048; /* O(urows^2 cols) */
    if (urows > rows) urows = rows;
    size_t ring_rows = offsets + 1;
    double *norm2 = st == POSENC_OK ? malloc(rows * sizeof(double)) : NULL;
    double *head = norm2 ? malloc(urows * cols * sizeof(double)) : NULL;
    double *ring = head ? malloc(ring_rows * cols * sizeof(double)) : NULL;
    if (st == POSENC_OK && !ring) st = posenc_fail_(err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate row buffers for [%zu x %zu]", rows, cols);
    for (size_t p = 0; ring && p < rows; p++) {
        double *row = p < urows ? head + p * cols : ring;
        posenc_read_f64_(table, p * cols, cols, row);
        for (size_t c = 0; c < cols; c++) row[c] = finite_or_zero(row[c]);
        norm2[p] = dot4(row, row, cols);
    }
    /* uniqueness: the closest pair of distinct positions, and the pair most alike by direction */
    h->uniqueness_rows = urows;
    h->closest_distance = INFINITY;
    h->max_cosine = -INFINITY;
    for (size_t i = 0; ring && i < urows; i++)
        for (size_t j = i + 1; j < urows; j++) {
            const double *ri = head + i * cols, *rj = head + j * cols;
            double d2 = sum_sq_diff(ri, rj, cols);
            if (d2 < h->closest_distance) h->closest_distance = d2, h->closest_a = i, h->closest_b = j;
            if (norm2[i] > 0 && norm2[j] > 0) {
                double cosine = dot4(ri, rj, cols) / sqrt(norm2[i] * norm2[j]);
                if (cosine > h->max_cosine) h->max_cosine = cosine, h->most_similar_a = i, h->most_similar_b = j;
            }
        }
    h->closest_distance = sqrt(h->closest_distance);
    if (h->max_cosine == -INFINITY) h->max_cosine = NAN;
    /* similarity vs distance: row q lives in ring slot q % ring_rows; rows p..p+offsets-1 are loaded */
    double *sum_dot = ring ? calloc(2 * offsets, sizeof(double)) : NULL, *sum_cos = sum_dot ? sum_dot + offsets : NULL;
    if (ring && !sum_dot) st = posenc_fail_(err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %zu sums", offsets);
    for (size_t q = 0; sum_dot && q < rows; q++) {
        double *row = ring + (q % ring_rows) * cols;
        posenc_read_f64_(table, q * cols, cols, row);
        for (size_t c = 0; c < cols; c++) row[c] = finite_or_zero(row[c]);
        /* pair row q with the rows k before it, k < offsets */
        for (size_t k = 0; k < offsets && k <= q; k++) {
            size_t p = q - k;
            double dot = dot4(ring + (p % ring_rows) * cols, row, cols), na = norm2[p], nb = norm2[q];
            sum_dot[k] += dot;
            sum_cos[k] += (na > 0 && nb > 0) ? dot / sqrt(na * nb) : 0;
        }
    }
    for (size_t k = 0; sum_dot && k < offsets; k++) {
        size_t n = rows - k;
        h->mean_dot[k] = n ? sum_dot[k] / (double)n : NAN;
        h->mean_cosine[k] = n ? sum_cos[k] / (double)n : NAN;
    }
    free(sum_dot);
    free(norm2);
    free(head);
    free(ring);
    /* the sinusoid model, then the rotation linearity check with known or fitted frequencies */
    if (st == POSENC_OK)
        st = posenc_fit_table_f64_(t, posenc_angle_noise_for_dtype_(table->dtype), &h->fit, err);
    const double *w = NULL;
    size_t pairs = 0;
    posenc_layout layout = opt.layout;
    int cos_first = opt.cos_first;
    if (opt.frequencies && opt.frequency_count) {
        w = opt.frequencies, pairs = opt.frequency_count;
        if (2 * pairs > cols) pairs = cols / 2;
    } else if (h->fit.found) {
        w = h->fit.frequencies, pairs = (size_t)h->fit.pairs, layout = h->fit.layout, cos_first = h->fit.cos_first;
    }
    static const size_t offset_list[POSENC_HEALTH_OFFSETS] = {1, 2, 10, 100};
    if (st == POSENC_OK && w && pairs) {
        h->linearity_residual = calloc(pairs * POSENC_HEALTH_OFFSETS, sizeof(double));
        if (!h->linearity_residual) st = posenc_fail_(err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate residuals");
    }
    if (st == POSENC_OK && h->linearity_residual) {
        h->linearity_available = 1;
        h->linearity_pairs = pairs;
        for (size_t j = 0; j < POSENC_HEALTH_OFFSETS; j++)
            h->linearity_offsets[j] = offset_list[j] < rows ? offset_list[j] : 0;
        for (size_t k = 0; k < pairs; k++) {
            size_t a = layout == POSENC_LAYOUT_HALF ? k : 2 * k, b = layout == POSENC_LAYOUT_HALF ? k + pairs : 2 * k + 1;
            for (size_t j = 0; j < POSENC_HEALTH_OFFSETS; j++) {
                if (!h->linearity_offsets[j]) continue;
                double e = linearity(t, rows, cols, a, b, cos_first, w[k], h->linearity_offsets[j]);
                h->linearity_residual[k * POSENC_HEALTH_OFFSETS + j] = e;
                if (!(e <= h->linearity_worst)) h->linearity_worst = e;
            }
        }
    }
    if (st != POSENC_OK) {
        posenc_health_free(h);
        return st;
    }
    return posenc_ok_(err);
}
