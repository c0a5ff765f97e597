/* sinusoidal.c: the "Attention Is All You Need" table in every layout in use,
 * plus the index/normalized baselines of the first source article.
 *
 * Precise mode: frequencies and angles in long double (64-bit mantissa on
 * x86-64, 113-bit on aarch64), sin/cos through sinl/cosl which range-reduce
 * exactly, then one rounding to the output dtype. Contiguous position ranges
 * use a rotation recurrence in double, re-anchored from the long double path
 * every POSENC_SINUSOID_ANCHOR rows; its drift (< anchor * 4e-16 absolute) is
 * far below half an f32 ULP for any value above 2^-20.
 *
 * Torch-compat mode: the exact float32 operation order of the PyTorch tutorial
 * (vaswani) and fairseq (t2t): w = exp(f32(c_k) * f32(-ln(base)/den)),
 * angle = f32(p) * w, then sin/cos, with exp/sin/cos from SLEEF's 1-ULP
 * float32 functions, which are what torch's vectorized CPU kernels call
 * (glibc's expf differs from them by 1 ULP for 5 of 32 frequencies at d=64,
 * which becomes ~16 ULP of sin by position 50). */
#include "internal.h"

#include "torch_math.h"
#include <stdlib.h>
#include <string.h>

#define POSENC_SINUSOID_ANCHOR 32

void posenc_sinusoid_params_default(posenc_sinusoid_params *params, int32_t dim) {
    if (!params) return;
    params->dim = dim;
    params->base = 10000.0;
    params->freqs = POSENC_FREQS_VASWANI;
    params->layout = POSENC_LAYOUT_INTERLEAVED;
    params->odd = POSENC_ODD_ERROR;
    params->mode = POSENC_MODE_PRECISE;
}

static const char *layout_name(posenc_layout layout) {
    return layout == POSENC_LAYOUT_HALF ? "half" : "interleaved";
}

/* Geometry of a table: K pairs computed over `encoded_dim` channels. */
typedef struct {
    int32_t pairs;       /* K */
    int32_t encoded_dim; /* denominator d in the vaswani exponent */
} sinusoid_shape;

static void exponent_terms(const posenc_sinusoid_params *params, const sinusoid_shape *shape,
                           int *step, int *den);

static posenc_status check_params(const posenc_sinusoid_params *params, sinusoid_shape *shape,
                                  posenc_error *err) {
    RETURN_IF_NULL(params, err);
    int32_t d = params->dim;
    RETURN_ERROR_IF(d <= 0, err, POSENC_ERR_INVALID_ARGUMENT, "dim must be > 0, got %d", d);
    RETURN_ERROR_IF(d > (1 << 30), err, POSENC_ERR_LIMIT, "dim must be <= 2^30, got %d", d);
    RETURN_ERROR_IF(!isfinite(params->base) || params->base <= 0.0 || params->base == 1.0, err,
                    POSENC_ERR_INVALID_ARGUMENT, "base must be finite, > 0 and != 1, got %g",
                    params->base);
    RETURN_ERROR_IF(params->freqs != POSENC_FREQS_VASWANI && params->freqs != POSENC_FREQS_T2T,
                    err, POSENC_ERR_INVALID_ARGUMENT, "unknown frequency convention %d",
                    (int)params->freqs);
    RETURN_ERROR_IF(params->layout != POSENC_LAYOUT_INTERLEAVED &&
                        params->layout != POSENC_LAYOUT_HALF,
                    err, POSENC_ERR_INVALID_ARGUMENT, "unknown layout %d", (int)params->layout);
    RETURN_ERROR_IF(params->mode != POSENC_MODE_PRECISE && params->mode != POSENC_MODE_TORCH_COMPAT,
                    err, POSENC_ERR_INVALID_ARGUMENT, "unknown mode %d", (int)params->mode);
    if (d % 2 == 1) {
        switch (params->odd) {
        case POSENC_ODD_ERROR:
            return posenc_fail_(err, POSENC_ERR_INVALID_ARGUMENT,
                                "dim must be even for layout=%s, got %d (odd=pad appends a zero "
                                "channel, odd=round_up computes %d and drops the last)",
                                layout_name(params->layout), d, d + 1);
        case POSENC_ODD_PAD:
            RETURN_ERROR_IF(d == 1, err, POSENC_ERR_INVALID_ARGUMENT,
                            "dim must be >= 2 for odd=pad (no sin/cos pair fits in 1), got 1");
            shape->pairs = d / 2;
            shape->encoded_dim = d - 1;
            break;
        case POSENC_ODD_ROUND_UP:
            shape->pairs = (d + 1) / 2;
            shape->encoded_dim = d + 1;
            break;
        default:
            return posenc_fail_(err, POSENC_ERR_INVALID_ARGUMENT, "unknown odd-dim policy %d",
                                (int)params->odd);
        }
    } else {
        shape->pairs = d / 2;
        shape->encoded_dim = d;
    }
    /* A base below 1 makes w_k = base^(-k*step/den) grow with k; past e^88 the
     * top frequency overflows float32 (torch mode gives inf, and sin(p*inf) is
     * NaN in every mode), so the table would silently hold NaN. Found by fuzz_table. */
    int step, den;
    exponent_terms(params, shape, &step, &den);
    double top = -log(params->base) * (double)(shape->pairs - 1) * step / den;
    RETURN_ERROR_IF(top > 88.0, err, POSENC_ERR_INVALID_ARGUMENT,
                    "base %g makes the highest frequency e^%.4g, beyond float32 range (e^88); "
                    "use a base closer to 1 or above 1", params->base, top);
    return POSENC_OK;
}

posenc_status posenc_sinusoid_check(const posenc_sinusoid_params *params, int32_t *out_pairs,
                                    posenc_error *err) {
    sinusoid_shape shape = {0, 0};
    FORWARD_IF_ERROR(check_params(params, &shape, err));
    if (out_pairs) *out_pairs = shape.pairs;
    return posenc_ok_(err);
}

/* Exponent denominator and numerator step: w_k = base^(-k * step / den). */
static void exponent_terms(const posenc_sinusoid_params *params, const sinusoid_shape *shape,
                           int *step, int *den) {
    if (params->freqs == POSENC_FREQS_T2T) {
        *step = 1;
        *den = shape->pairs > 1 ? shape->pairs - 1 : 1; /* t2t's max(K-1, 1) guard */
    } else {
        *step = 2;
        *den = shape->encoded_dim;
    }
}

static void frequencies_precise(const posenc_sinusoid_params *params, const sinusoid_shape *shape,
                                long double *w) {
    int step, den;
    exponent_terms(params, shape, &step, &den);
    long double log_base = logl((long double)params->base);
    for (int32_t k = 0; k < shape->pairs; k++)
        w[k] = expl(-((long double)k * step / den) * log_base);
}

static void frequencies_torch(const posenc_sinusoid_params *params, const sinusoid_shape *shape,
                              float *w) {
    int step, den;
    exponent_terms(params, shape, &step, &den);
    /* Python computes -ln(base)/den in double; torch casts that scalar to float32. */
    float scale = (float)(-log(params->base) / den);
    for (int32_t k = 0; k < shape->pairs; k++) w[k] = torch_expf((float)(k * step) * scale);
}

posenc_status posenc_sinusoid_frequencies_f64(const posenc_sinusoid_params *params, double *out,
                                              size_t out_count, posenc_error *err) {
    sinusoid_shape shape = {0, 0};
    FORWARD_IF_ERROR(check_params(params, &shape, err));
    RETURN_IF_NULL(out, err);
    RETURN_ERROR_IF(out_count < (size_t)shape.pairs, err, POSENC_ERR_BUFFER_TOO_SMALL,
                    "frequency buffer holds %zu values, need %d", out_count, shape.pairs);
    long double *w = malloc(sizeof *w * (size_t)shape.pairs);
    RETURN_ERROR_IF(!w, err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %d frequencies",
                    shape.pairs);
    if (params->mode == POSENC_MODE_TORCH_COMPAT) {
        float *wf = (float *)w;
        frequencies_torch(params, &shape, wf);
        for (int32_t k = shape.pairs - 1; k >= 0; k--) out[k] = wf[k];
    } else {
        frequencies_precise(params, &shape, w);
        for (int32_t k = 0; k < shape.pairs; k++) out[k] = (double)w[k];
    }
    free(w);
    return posenc_ok_(err);
}

/* Channel of the sine (cosine = +1 or +K) of pair k; -1 if dropped (round_up). */
static inline void pair_channels(posenc_layout layout, int32_t k, int32_t pairs, int32_t dim,
                                 int32_t *sin_ch, int32_t *cos_ch) {
    int32_t s = layout == POSENC_LAYOUT_HALF ? k : 2 * k;
    int32_t c = layout == POSENC_LAYOUT_HALF ? pairs + k : 2 * k + 1;
    *sin_ch = s < dim ? s : -1;
    *cos_ch = c < dim ? c : -1;
}

typedef struct {
    const posenc_sinusoid_params *params;
    sinusoid_shape shape;
    const posenc_positions *positions;
    posenc_dtype dtype;
    void *out;
} table_job;

static inline void store_pair(const table_job *job, size_t row, int32_t k, double s, double c) {
    int32_t sc, cc;
    pair_channels(job->params->layout, k, job->shape.pairs, job->params->dim, &sc, &cc);
    size_t base = row * (size_t)job->params->dim;
    if (sc >= 0) posenc_store_real_(job->out, job->dtype, base + (size_t)sc, s);
    if (cc >= 0) posenc_store_real_(job->out, job->dtype, base + (size_t)cc, c);
}

static void fill_precise(const table_job *job, const long double *w) {
    const posenc_positions *pos = job->positions;
    int32_t pairs = job->shape.pairs;
    bool contiguous = pos->ids == NULL && pos->values == NULL;
    double *step_cos = NULL, *step_sin = NULL, *run_sin = NULL, *run_cos = NULL;
    if (contiguous && pos->count > 1) {
        step_cos = malloc(sizeof(double) * 4 * (size_t)pairs);
        if (step_cos) {
            step_sin = step_cos + pairs;
            run_sin = step_sin + pairs;
            run_cos = run_sin + pairs;
            for (int32_t k = 0; k < pairs; k++) {
                step_cos[k] = (double)cosl(w[k]);
                step_sin[k] = (double)sinl(w[k]);
            }
        }
    }
    for (size_t r = 0; r < pos->count; r++) {
        if (step_cos && r % POSENC_SINUSOID_ANCHOR != 0) {
            /* rotate the previous row's (sin, cos) by w_k: (p-1) -> p */
            for (int32_t k = 0; k < pairs; k++) {
                double s = run_sin[k] * step_cos[k] + run_cos[k] * step_sin[k];
                double c = run_cos[k] * step_cos[k] - run_sin[k] * step_sin[k];
                run_sin[k] = s;
                run_cos[k] = c;
                store_pair(job, r, k, s, c);
            }
            continue;
        }
        long double p = posenc_position_at_(pos, r);
        for (int32_t k = 0; k < pairs; k++) {
            long double angle = p * w[k];
            double s = (double)sinl(angle), c = (double)cosl(angle);
            if (step_cos) {
                run_sin[k] = s;
                run_cos[k] = c;
            }
            store_pair(job, r, k, s, c);
        }
    }
    free(step_cos);
}

static void fill_torch_f32(const table_job *job, const float *w) {
    const posenc_positions *pos = job->positions;
    for (size_t r = 0; r < pos->count; r++) {
        float p = (float)posenc_position_at_(pos, r);
        for (int32_t k = 0; k < job->shape.pairs; k++) {
            float angle = p * w[k];
            store_pair(job, r, k, (double)torch_sinf(angle), (double)torch_cosf(angle));
        }
    }
}

/* torch with default dtype float64: the same steps in double. */
static void fill_torch_f64(const table_job *job) {
    int step, den;
    exponent_terms(job->params, &job->shape, &step, &den);
    double scale = -log(job->params->base) / den;
    const posenc_positions *pos = job->positions;
    for (size_t r = 0; r < pos->count; r++) {
        double p = (double)posenc_position_at_(pos, r);
        for (int32_t k = 0; k < job->shape.pairs; k++) {
            double angle = p * exp((double)(k * step) * scale);
            store_pair(job, r, k, sin(angle), cos(angle));
        }
    }
}

static posenc_status check_table_output(const posenc_positions *positions, int32_t dim,
                                        posenc_dtype dtype, const void *out, size_t out_count,
                                        posenc_error *err) {
    FORWARD_IF_ERROR(posenc_check_positions_(positions, err));
    RETURN_IF_NULL(out, err);
    RETURN_ERROR_IF(dtype != POSENC_DTYPE_F32 && dtype != POSENC_DTYPE_F64 &&
                        dtype != POSENC_DTYPE_F16 && dtype != POSENC_DTYPE_BF16,
                    err, POSENC_ERR_INVALID_ARGUMENT,
                    "table dtype must be f32, f64, f16 or bf16, got %s", posenc_dtype_name(dtype));
    size_t need;
    FORWARD_IF_ERROR(posenc_table_count(positions->count, dim, &need, err));
    RETURN_ERROR_IF(out_count < need, err, POSENC_ERR_BUFFER_TOO_SMALL,
                    "output holds %zu elements, table [%zu x %d] needs %zu", out_count,
                    positions->count, dim, need);
    return POSENC_OK;
}

posenc_status posenc_sinusoid_table(const posenc_sinusoid_params *params,
                                    const posenc_positions *positions, posenc_dtype dtype,
                                    void *out, size_t out_count, posenc_error *err) {
    table_job job = {params, {0, 0}, positions, dtype, out};
    FORWARD_IF_ERROR(check_params(params, &job.shape, err));
    FORWARD_IF_ERROR(check_table_output(positions, params->dim, dtype, out, out_count, err));
    if (params->odd == POSENC_ODD_PAD && params->dim % 2 == 1)
        for (size_t r = 0; r < positions->count; r++)
            posenc_store_real_(out, dtype, r * (size_t)params->dim + (size_t)params->dim - 1, 0.0);

    if (params->mode == POSENC_MODE_TORCH_COMPAT && dtype == POSENC_DTYPE_F64) {
        fill_torch_f64(&job);
        return posenc_ok_(err);
    }
    /* long double is at least as wide as float, so one buffer serves both modes */
    long double *w = malloc(sizeof *w * (size_t)job.shape.pairs);
    RETURN_ERROR_IF(!w, err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %d frequencies",
                    job.shape.pairs);
    if (params->mode == POSENC_MODE_TORCH_COMPAT) {
        frequencies_torch(params, &job.shape, (float *)w);
        fill_torch_f32(&job, (const float *)w);
    } else {
        frequencies_precise(params, &job.shape, w);
        fill_precise(&job, w);
    }
    free(w);
    return posenc_ok_(err);
}

posenc_status posenc_sinusoid_table_f32(const posenc_sinusoid_params *params,
                                        const posenc_positions *positions, float *out,
                                        size_t out_count, posenc_error *err) {
    return posenc_sinusoid_table(params, positions, POSENC_DTYPE_F32, out, out_count, err);
}

posenc_status posenc_sinusoid_table_f64(const posenc_sinusoid_params *params,
                                        const posenc_positions *positions, double *out,
                                        size_t out_count, posenc_error *err) {
    return posenc_sinusoid_table(params, positions, POSENC_DTYPE_F64, out, out_count, err);
}

posenc_status posenc_baseline_table(posenc_table_kind kind, int32_t dim,
                                    const posenc_positions *positions, posenc_dtype dtype,
                                    void *out, size_t out_count, posenc_error *err) {
    RETURN_ERROR_IF(kind != POSENC_KIND_INDEX && kind != POSENC_KIND_NORMALIZED, err,
                    POSENC_ERR_INVALID_ARGUMENT,
                    "baseline kind must be index or normalized, got %d", (int)kind);
    RETURN_ERROR_IF(dim <= 0, err, POSENC_ERR_INVALID_ARGUMENT, "dim must be > 0, got %d", dim);
    FORWARD_IF_ERROR(check_table_output(positions, dim, dtype, out, out_count, err));
    double denom = positions->count > 1 ? (double)(positions->count - 1) : 1.0;
    for (size_t r = 0; r < positions->count; r++) {
        double p = (double)posenc_position_at_(positions, r);
        double v = kind == POSENC_KIND_INDEX ? p : (positions->count > 1 ? p / denom : 0.0);
        for (int32_t c = 0; c < dim; c++)
            posenc_store_real_(out, dtype, r * (size_t)dim + (size_t)c, v);
    }
    return posenc_ok_(err);
}
