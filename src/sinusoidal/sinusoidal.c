/* sinusoidal.c: the "Attention Is All You Need" table in every layout in use,
 * plus the index/normalized baselines of the first source article.
 *
 * Precise mode: frequencies in long double (64-bit mantissa on x86-64, 113-bit
 * on aarch64). Explicit positions: angles in long double, sin/cos through
 * sinl/cosl which range-reduce exactly, then one rounding to the output dtype.
 * Contiguous position ranges use a rotation recurrence in double, re-anchored
 * from double-double values every 64 rows (recurrence.h; see
 * fill_precise_range); its drift (< 64 * 2.3e-16 absolute) is far below half
 * an f32 ULP for any value above 2^-20.
 *
 * Torch-compat mode: the exact float32 operation order of the PyTorch tutorial
 * (vaswani) and fairseq (t2t): w = exp(f32(c_k) * f32(-ln(base)/den)),
 * angle = f32(p) * w, then sin/cos, with exp/sin/cos from SLEEF's 1-ULP
 * float32 functions, which are what torch's vectorized CPU kernels call
 * (glibc's expf differs from them by 1 ULP for 5 of 32 frequencies at d=64,
 * which becomes ~16 ULP of sin by position 50). */
#include "../common/f32_angle.h"
#include "../common/kernels.h"
#include "../common/recurrence.h"

#include "../common/torch_vec.h"
#include <stdlib.h>
#include <string.h>


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
    /* Python computes -ln(base)/den in double; torch casts that scalar to float32
     * and multiplies arange(0, d, step) (cast to float32) by it, then exp. */
    float scale = (float)(-log(params->base) / den);
    for (int32_t k = 0; k < shape->pairs; k++) w[k] = (float)(k * step) * scale;
    torch_exp_f32_(torch_cpu_capability_get_(), w, w, (size_t)shape->pairs);
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

/* ---- precise mode, contiguous positions: blocks, anchors, rotations ---------
 * Rows are cut in blocks of SINUSOID_BLOCK starting at table row 0 (the thread
 * grain, so the split never changes a value); each block runs the anchored
 * recurrence of recurrence.h from its first position, and the rows between
 * anchors come from the double rotation, vectorized across pairs by the rows
 * kernels (kernels.h). */
#define SINUSOID_BLOCK 1024
/* Outputs at least this large go out with streaming stores (they do not fit in
 * a cache anyway, and streaming avoids reading each line before writing it). */
#define SINUSOID_STREAM_BYTES ((size_t)16 << 20)
/* Per-worker stage for unaligned outputs: stays in L2 between compute and copy. */
#define SINUSOID_STAGE_BYTES ((size_t)256 << 10)

typedef struct {
    const table_job *job;
    const posenc_recurrence_ *rec;
    posenc_sinusoid_rows_ plan;           /* steps (sin w_k, cos w_k) in double: rec's */
    posenc_sinusoid_rows_fn_ rows_fn;     /* NULL: odd dims / f16 / bf16, stored per element */
    double *scratch;                      /* per worker: posenc_recurrence_state_doubles_ */
    /* Large output not 64-byte aligned (e.g. calloc'd): rows are computed into a
     * per-worker cache-resident stage and streamed out by an alignment-aware copy. */
    char *stage;                          /* NULL: write rows directly */
    size_t stage_bytes, stage_rows;
    void (*copy)(float *dst, const float *src, size_t n);
    bool side_kernel; /* the AVX-512 streaming kernel makes the next anchor as it writes (side job) */
} precise_range_ctx;

/* Rows [r, r + rows) from the anchor values in run_s/run_c. */
static void fill_anchor_rows(const precise_range_ctx *ctx, size_t worker, double *run_s, double *run_c,
                             size_t r, size_t rows) {
    const table_job *job = ctx->job;
    const int32_t pairs = job->shape.pairs;
    size_t row_bytes = (size_t)job->params->dim * posenc_dtype_size(job->dtype);
    if (ctx->rows_fn && !ctx->stage) {
        ctx->rows_fn(&ctx->plan, run_s, run_c, (char *)job->out + r * row_bytes, rows);
        return;
    }
    if (ctx->rows_fn) {
        char *stage = ctx->stage + worker * ctx->stage_bytes;
        for (size_t i = 0; i < rows; i += ctx->stage_rows) {
            size_t n = rows - i < ctx->stage_rows ? rows - i : ctx->stage_rows;
            if (i > 0) posenc_rotate_run_(ctx->plan.step_s, ctx->plan.step_c, run_s, run_c, 0, (size_t)pairs);
            ctx->rows_fn(&ctx->plan, run_s, run_c, stage, n);
            ctx->copy((float *)((char *)job->out + (r + i) * row_bytes), (const float *)stage,
                      n * row_bytes / sizeof(float));
        }
        return;
    }
    for (size_t i = 0; i < rows; i++) {
        if (i > 0) posenc_rotate_run_(ctx->plan.step_s, ctx->plan.step_c, run_s, run_c, 0, (size_t)pairs);
        for (int32_t k = 0; k < pairs; k++)
            store_pair(job, r + i, k, posenc_clamp_unit_(run_s[k]), posenc_clamp_unit_(run_c[k]));
    }
}

static void precise_range_worker(void *vctx, size_t worker, size_t begin, size_t end) {
    const precise_range_ctx *ctx = vctx;
    const table_job *job = ctx->job;
    const size_t P = (size_t)job->shape.pairs;
    posenc_recurrence_state_ state =
        posenc_recurrence_state_in_(P, ctx->scratch + posenc_recurrence_state_doubles_(P) * worker);
    const size_t row_bytes = (size_t)job->params->dim * posenc_dtype_size(job->dtype);
    bool ready = false; /* state.anchor already holds the next chunk's or block's anchor (the kernel made it) */
    for (size_t b = begin; b < end; b += SINUSOID_BLOCK) {
        size_t block_end = b + SINUSOID_BLOCK < end ? b + SINUSOID_BLOCK : end;
        double p0 = (double)job->positions->start + (double)b; /* exact: |p| < 2^53 checked */
        if (ready) posenc_recurrence_use_anchor_(ctx->rec, &state);
        else posenc_recurrence_start_(ctx->rec, &state, p0);
        for (size_t r = b; r < block_end; r += POSENC_RECURRENCE_ANCHOR) {
            if (r != b) {
                if (ready) posenc_recurrence_use_anchor_(ctx->rec, &state);
                else posenc_recurrence_next_anchor_(ctx->rec, &state);
            }
            size_t rows = block_end - r < POSENC_RECURRENCE_ANCHOR ? block_end - r : POSENC_RECURRENCE_ANCHOR;
            posenc_sinusoid_side_ side = {&state.anchor, &ctx->rec->anchor_step, ctx->rec->w_hi, ctx->rec->w_lo,
                                          (double)job->positions->start + (double)block_end};
            if (r + POSENC_RECURRENCE_ANCHOR >= block_end) side.by = NULL; /* the next block's start, if any */
            ready = ctx->side_kernel && (side.by || block_end < end) &&
                    posenc_sinusoid_rows_side_avx512_(&ctx->plan, state.run_s, state.run_c,
                                                      (char *)job->out + r * row_bytes, rows, &side);
            if (!ready) fill_anchor_rows(ctx, worker, state.run_s, state.run_c, r, rows);
        }
    }
    if (ctx->stage) posenc_store_fence_();
}

/* Whether the anchors' double-double path covers this range (else per-element sinl/cosl). */
static bool range_fits_dd(const posenc_positions *positions, const long double *w, int32_t pairs) {
    long double first = (long double)positions->start;
    long double last = first + (long double)(positions->count - 1);
    return posenc_sincos_dd_covers_(fmaxl(fabsl(first), fabsl(last)), w, (size_t)pairs);
}

/* The rows kernel and output route for a table of `bytes` over `threads`
 * workers: vector rows kernels for whole-pair f32/f64 tables, streaming stores
 * for big aligned outputs, a cache-resident stage for big unaligned ones. */
static void rows_ctx_setup(precise_range_ctx *ctx, const table_job *job, posenc_kernel_path path, size_t bytes,
                           int32_t threads) {
    const int32_t pairs = job->shape.pairs;
    size_t rows = job->positions->count;
    bool clean = job->params->dim == 2 * pairs &&
                 (job->dtype == POSENC_DTYPE_F32 || job->dtype == POSENC_DTYPE_F64);
    if (!clean) return;
    ctx->rows_fn = path == POSENC_PATH_AVX512 ? posenc_sinusoid_rows_avx512_
                   : path == POSENC_PATH_AVX2 ? posenc_sinusoid_rows_avx2_
                                              : posenc_sinusoid_rows_scalar_;
    /* streaming stores need every vector store aligned: rows of 16k floats/doubles */
    bool big = path != POSENC_PATH_SCALAR && bytes >= SINUSOID_STREAM_BYTES;
    ctx->plan.stream = big && pairs % 8 == 0 && ((uintptr_t)job->out % 64) == 0;
    ctx->side_kernel = ctx->plan.stream && path == POSENC_PATH_AVX512;
    size_t row_bytes = bytes / rows;
    if (big && !ctx->plan.stream && row_bytes <= SINUSOID_STAGE_BYTES) {
        ctx->stage_rows = SINUSOID_STAGE_BYTES / row_bytes;
        if (ctx->stage_rows > POSENC_RECURRENCE_ANCHOR) ctx->stage_rows = POSENC_RECURRENCE_ANCHOR;
        ctx->stage_bytes = (ctx->stage_rows * row_bytes + 63) / 64 * 64;
        ctx->stage = aligned_alloc(64, ctx->stage_bytes * (size_t)threads);
        ctx->copy = path == POSENC_PATH_AVX512 ? posenc_stream_copy_f32_avx512_ : posenc_stream_copy_f32_avx2_;
        /* without the stage the rows are written directly with ordinary stores */
    }
}

static posenc_status fill_precise_range(const table_job *job, const long double *w,
                                        const posenc_exec_run_ *run, posenc_error *err) {
    const int32_t pairs = job->shape.pairs;
    const size_t P = (size_t)pairs;
    size_t rows = job->positions->count, bytes = rows * (size_t)job->params->dim *
                                                     posenc_dtype_size(job->dtype);
    int32_t threads = posenc_threads_for_bytes_(run, bytes);
    const posenc_exec *exec = &run->exec;
    size_t blocks = (rows + SINUSOID_BLOCK - 1) / SINUSOID_BLOCK;
    if ((size_t)threads > blocks) threads = (int32_t)blocks;
    posenc_recurrence_ rec;
    FORWARD_IF_ERROR(posenc_recurrence_init_(&rec, w, P, exec->path, SIZE_MAX, err));
    double *mem = malloc(sizeof(double) * posenc_recurrence_state_doubles_(P) * (size_t)threads);
    if (!mem) {
        posenc_recurrence_free_(&rec);
        return posenc_fail_(err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate scratch for %d pairs", pairs);
    }
    /* the rows use the step's hi parts: (sin, cos)(w_k) rounded to double */
    precise_range_ctx ctx = {job, &rec, {pairs, job->params->layout, job->dtype, false, rec.step.s_hi, rec.step.c_hi},
                             NULL, mem, NULL, 0, 0, NULL, false};
    rows_ctx_setup(&ctx, job, exec->path, bytes, threads);
    posenc_parallel_for_(run, threads, rows, SINUSOID_BLOCK, precise_range_worker, &ctx);
    free(ctx.stage);
    free(mem);
    posenc_recurrence_free_(&rec);
    return POSENC_OK;
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

/* ---- plans (posenc_sinusoid_plan_*): what does not depend on the output ---
 * A plan holds the frequencies, the recurrence's steps and the (sin, cos)
 * every 64-row chunk starts from: the anchors fill_precise_range's blocks
 * reach, computed the same way (a double-double start per block of
 * SINUSOID_BLOCK rows, then one double-double rotation per chunk), so a
 * planned table has the same bits. A run then only computes rows, cut in
 * 64-row chunks any worker can take. */
struct posenc_sinusoid_plan {
    posenc_sinusoid_params params;
    sinusoid_shape shape;
    posenc_positions positions; /* a range: start, count */
    posenc_recurrence_ rec;
    size_t chunks;              /* ceil(count / POSENC_RECURRENCE_ANCHOR) */
    double *anchor_s, *anchor_c; /* [chunks][pairs] */
};

typedef struct {
    posenc_sinusoid_plan *plan;
    double *scratch; /* posenc_recurrence_state_doubles_ per worker */
} plan_anchor_job;

static void plan_anchor_worker(void *vjob, size_t worker, size_t begin, size_t end) {
    const plan_anchor_job *job = vjob;
    posenc_sinusoid_plan *plan = job->plan;
    const size_t P = (size_t)plan->shape.pairs;
    posenc_recurrence_state_ state =
        posenc_recurrence_state_in_(P, job->scratch + posenc_recurrence_state_doubles_(P) * worker);
    for (size_t b = begin; b < end; b += SINUSOID_BLOCK) {
        size_t block_end = b + SINUSOID_BLOCK < end ? b + SINUSOID_BLOCK : end;
        posenc_recurrence_start_(&plan->rec, &state, (double)plan->positions.start + (double)b);
        for (size_t r = b; r < block_end; r += POSENC_RECURRENCE_ANCHOR) {
            if (r != b) posenc_recurrence_next_anchor_(&plan->rec, &state);
            size_t chunk = r / POSENC_RECURRENCE_ANCHOR;
            memcpy(plan->anchor_s + chunk * P, state.run_s, P * sizeof(double));
            memcpy(plan->anchor_c + chunk * P, state.run_c, P * sizeof(double));
        }
    }
}

void posenc_sinusoid_plan_free(posenc_sinusoid_plan *plan) {
    if (!plan) return;
    posenc_recurrence_free_(&plan->rec);
    free(plan->anchor_s);
    free(plan->anchor_c);
    free(plan);
}

posenc_status posenc_sinusoid_plan_create(const posenc_sinusoid_params *params, const posenc_positions *positions,
                                          const posenc_exec *exec, posenc_sinusoid_plan **out, posenc_error *err) {
    RETURN_IF_NULL(out, err);
    *out = NULL;
    sinusoid_shape shape = {0, 0};
    FORWARD_IF_ERROR(check_params(params, &shape, err));
    FORWARD_IF_ERROR(posenc_check_positions_(positions, err));
    RETURN_ERROR_IF(params->mode != POSENC_MODE_PRECISE, err, POSENC_ERR_UNSUPPORTED,
                    "a sinusoid plan serves precise mode; torch-compat tables are computed per element "
                    "(posenc_sinusoid_table_exec)");
    RETURN_ERROR_IF(positions->ids || positions->values, err, POSENC_ERR_UNSUPPORTED,
                    "a sinusoid plan serves a range of positions (start, count); %s are evaluated per element "
                    "(posenc_sinusoid_table_exec)", positions->ids ? "ids" : "real-valued positions");
    posenc_exec_run_ run;
    FORWARD_IF_ERROR(posenc_exec_run_resolve_(exec, &run, err));
    const size_t P = (size_t)shape.pairs;
    long double *w = malloc(sizeof *w * (P ? P : 1));
    posenc_sinusoid_plan *plan = calloc(1, sizeof *plan);
    if (!w || !plan) {
        free(w);
        free(plan);
        return posenc_fail_(err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate a sinusoid plan for %d pairs", shape.pairs);
    }
    frequencies_precise(params, &shape, w);
    if (positions->count && !range_fits_dd(positions, w, shape.pairs)) {
        free(w);
        free(plan);
        return posenc_fail_(err, POSENC_ERR_UNSUPPORTED,
                            "positions %lld..%lld reach angles beyond the recurrence (|p| < 2^53 and |p w| < 2^40): "
                            "such tables are evaluated per element (posenc_sinusoid_table_exec)",
                            (long long)positions->start, (long long)positions->start + (long long)positions->count - 1);
    }
    *plan = (posenc_sinusoid_plan){*params, shape, posenc_positions_range(positions->start, positions->count),
                                   {POSENC_PATH_SCALAR, 0, NULL, NULL, NULL, {NULL, NULL, NULL, NULL}, {NULL, NULL, NULL, NULL}},
                                   (positions->count + POSENC_RECURRENCE_ANCHOR - 1) / POSENC_RECURRENCE_ANCHOR, NULL, NULL};
    posenc_status st = posenc_recurrence_init_(&plan->rec, w, P, run.exec.path, SIZE_MAX, err);
    free(w);
    if (st != POSENC_OK) {
        free(plan);
        return st;
    }
    size_t blocks = (positions->count + SINUSOID_BLOCK - 1) / SINUSOID_BLOCK;
    int32_t threads = run.exec.threads < (int32_t)blocks ? run.exec.threads : (int32_t)(blocks ? blocks : 1);
    plan_anchor_job job = {plan, malloc(sizeof(double) * posenc_recurrence_state_doubles_(P) * (size_t)threads)};
    if (P && plan->chunks > SIZE_MAX / sizeof(double) / P) {
        free(job.scratch);
        posenc_sinusoid_plan_free(plan);
        return posenc_fail_(err, POSENC_ERR_SIZE_OVERFLOW, "the anchors of %zu rows x %zu pairs overflow size_t",
                            positions->count, P);
    }
    size_t anchors = plan->chunks * P > 0 ? plan->chunks * P : 1;
    plan->anchor_s = malloc(sizeof(double) * anchors);
    plan->anchor_c = malloc(sizeof(double) * anchors);
    if (!job.scratch || !plan->anchor_s || !plan->anchor_c) {
        free(job.scratch);
        posenc_sinusoid_plan_free(plan);
        return posenc_fail_(err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate the anchors of %zu rows x %zu pairs",
                            positions->count, P);
    }
    if (positions->count) posenc_parallel_for_(&run, threads, positions->count, SINUSOID_BLOCK, plan_anchor_worker, &job);
    free(job.scratch);
    *out = plan;
    return posenc_ok_(err);
}

typedef struct {
    const posenc_sinusoid_plan *plan;
    precise_range_ctx ctx;
} plan_rows_job;

static void plan_rows_worker(void *vjob, size_t worker, size_t begin, size_t end) {
    const plan_rows_job *job = vjob;
    const posenc_sinusoid_plan *plan = job->plan;
    const size_t P = (size_t)plan->shape.pairs;
    double *run_s = job->ctx.scratch + 2 * P * worker, *run_c = run_s + P;
    for (size_t r = begin; r < end; r += POSENC_RECURRENCE_ANCHOR) {
        size_t chunk = r / POSENC_RECURRENCE_ANCHOR;
        size_t rows = end - r < POSENC_RECURRENCE_ANCHOR ? end - r : POSENC_RECURRENCE_ANCHOR;
        memcpy(run_s, plan->anchor_s + chunk * P, P * sizeof(double));
        memcpy(run_c, plan->anchor_c + chunk * P, P * sizeof(double));
        fill_anchor_rows(&job->ctx, worker, run_s, run_c, r, rows);
    }
    if (job->ctx.stage) posenc_store_fence_();
}

posenc_status posenc_sinusoid_plan_table(const posenc_sinusoid_plan *plan, posenc_dtype dtype, void *out,
                                         size_t out_count, const posenc_exec *exec, posenc_error *err) {
    RETURN_IF_NULL(plan, err);
    const posenc_sinusoid_params *params = &plan->params;
    FORWARD_IF_ERROR(check_table_output(&plan->positions, params->dim, dtype, out, out_count, err));
    posenc_exec_run_ run;
    FORWARD_IF_ERROR(posenc_exec_run_resolve_(exec, &run, err));
    const size_t rows = plan->positions.count, P = (size_t)plan->shape.pairs;
    if (params->odd == POSENC_ODD_PAD && params->dim % 2 == 1)
        for (size_t r = 0; r < rows; r++) posenc_store_real_(out, dtype, r * (size_t)params->dim + (size_t)params->dim - 1, 0.0);
    if (rows == 0) return posenc_ok_(err);
    table_job table = {params, plan->shape, &plan->positions, dtype, out};
    size_t bytes = rows * (size_t)params->dim * posenc_dtype_size(dtype);
    int32_t threads = posenc_threads_for_bytes_(&run, bytes);
    if ((size_t)threads > plan->chunks) threads = (int32_t)plan->chunks;
    plan_rows_job job = {plan, {&table, &plan->rec,
                                {plan->shape.pairs, params->layout, dtype, false, plan->rec.step.s_hi, plan->rec.step.c_hi},
                                NULL, malloc(sizeof(double) * 2 * (P ? P : 1) * (size_t)threads), NULL, 0, 0, NULL, false}};
    RETURN_ERROR_IF(!job.ctx.scratch, err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate scratch for %zu pairs", P);
    rows_ctx_setup(&job.ctx, &table, run.exec.path, bytes, threads);
    posenc_parallel_for_(&run, threads, rows, POSENC_RECURRENCE_ANCHOR, plan_rows_worker, &job);
    free(job.ctx.stage);
    free(job.ctx.scratch);
    return posenc_ok_(err);
}

/* ---- direct evaluation per element (explicit positions, torch-compat) ---- */

typedef struct {
    const table_job *job;
    const void *w; /* long double (precise), float (torch f32) or double (torch f64) */
    torch_cpu_capability_ cap; /* torch f32: the kernel build torch runs here */
} direct_ctx;

static void precise_direct_worker(void *vctx, size_t worker, size_t begin, size_t end) {
    const direct_ctx *ctx = vctx;
    const long double *w = ctx->w;
    (void)worker;
    for (size_t r = begin; r < end; r++) {
        long double p = posenc_position_at_(ctx->job->positions, r);
        for (int32_t k = 0; k < ctx->job->shape.pairs; k++) {
            long double angle = p * w[k];
            store_pair(ctx->job, r, k, (double)sinl(angle), (double)cosl(angle));
        }
    }
}

/* torch evaluates sin and cos of the whole [rows x pairs] float32 angle tensor
 * (position * div_term) in vector blocks counted from its first element, and
 * a block's lanes share one range-reduction choice (torch_vec.h). So each
 * block is rebuilt whole, lanes of neighbouring rows included, and only this
 * worker's rows are stored. Rows are the positions in the order given: for
 * 0..L-1 that is torch's table of length L. */
static float torch_angle(const table_job *job, const float *w, size_t flat) {
    size_t pairs = (size_t)job->shape.pairs;
    float p = (float)posenc_position_at_(job->positions, flat / pairs); /* position.float() */
    return p * w[flat % pairs];
}

static void torch_f32_worker(void *vctx, size_t worker, size_t begin, size_t end) {
    const direct_ctx *ctx = vctx;
    const table_job *job = ctx->job;
    const float *w = ctx->w;
    const size_t pairs = (size_t)job->shape.pairs, lanes = torch_vec_lanes_(ctx->cap);
    const size_t n = job->positions->count * pairs, first = begin * pairs, last = end * pairs;
    (void)worker;
    for (size_t b = first - first % lanes; b < last; b += lanes) {
        size_t count = n - b < lanes ? n - b : lanes;
        float x[TORCH_VEC_MAX_LANES], c[TORCH_VEC_MAX_LANES], s[TORCH_VEC_MAX_LANES];
        for (size_t i = 0; i < count; i++) x[i] = torch_angle(job, w, b + i);
        torch_cos_sin_block_(ctx->cap, x, count, c, s);
        for (size_t i = 0; i < count; i++) {
            size_t f = b + i;
            if (f >= first && f < last)
                store_pair(job, f / pairs, (int32_t)(f % pairs), (double)s[i], (double)c[i]);
        }
    }
}

/* torch with default dtype float64 (the tutorial's arange * float and zeros
 * are then float64): the same steps and blocks in double, SLEEF's double
 * functions on 4 (8) lanes. */
static void frequencies_torch_f64(const posenc_sinusoid_params *params, const sinusoid_shape *shape,
                                  double *w) {
    int step, den;
    exponent_terms(params, shape, &step, &den);
    double scale = -log(params->base) / den;
    for (int32_t k = 0; k < shape->pairs; k++) w[k] = (double)(k * step) * scale;
    torch_exp_f64_(torch_cpu_capability_get_(), w, w, (size_t)shape->pairs);
}

static void torch_f64_worker(void *vctx, size_t worker, size_t begin, size_t end) {
    const direct_ctx *ctx = vctx;
    const table_job *job = ctx->job;
    const double *w = ctx->w;
    const size_t pairs = (size_t)job->shape.pairs, lanes = torch_vec_lanes_f64_(ctx->cap);
    const size_t n = job->positions->count * pairs, first = begin * pairs, last = end * pairs;
    (void)worker;
    for (size_t b = first - first % lanes; b < last; b += lanes) {
        size_t count = n - b < lanes ? n - b : lanes;
        double x[TORCH_VEC_MAX_LANES], c[TORCH_VEC_MAX_LANES], s[TORCH_VEC_MAX_LANES];
        for (size_t i = 0; i < count; i++)
            x[i] = (double)posenc_position_at_(job->positions, (b + i) / pairs) * w[(b + i) % pairs];
        torch_cos_sin_block_f64_(ctx->cap, x, count, c, s);
        for (size_t i = 0; i < count; i++) {
            size_t f = b + i;
            if (f >= first && f < last) store_pair(job, f / pairs, (int32_t)(f % pairs), s[i], c[i]);
        }
    }
}

static void run_direct(const table_job *job, const void *w, posenc_range_fn_ fn,
                       const posenc_exec_run_ *run) {
    direct_ctx ctx = {job, w, torch_cpu_capability_get_()};
    /* direct evaluation costs ~100 ns per element: threads pay off from ~64 KiB */
    size_t work = job->positions->count * (size_t)job->params->dim * 4;
    posenc_parallel_for_(run, posenc_threads_for_bytes_(run, work), job->positions->count, 16,
                         fn, &ctx);
}

/* torch-compat forms the angle f32(p) * f32(w) in float32; past FLT_MAX it is inf
 * and sin/cos are NaN. A base below 1 gives w up to e^88, so p = 65531 is enough
 * (found by fuzz_table). Refused by the guard RoPE uses too (f32_angle.h). */
static posenc_status check_torch_angle(const posenc_positions *positions, const float *w, int32_t pairs,
                                       posenc_error *err) {
    float w_max = 0.0f;
    for (int32_t k = 0; k < pairs; k++) w_max = fmaxf(w_max, fabsf(w[k]));
    long double p_max = 0.0L;
    for (size_t r = 0; r < positions->count; r++) p_max = fmaxl(p_max, fabsl(posenc_position_at_(positions, r)));
    return posenc_check_f32_angle_(p_max, w_max, "frequency", "use the precise mode or a base above 1", err);
}


posenc_status posenc_sinusoid_table_exec(const posenc_sinusoid_params *params,
                                         const posenc_positions *positions, posenc_dtype dtype,
                                         void *out, size_t out_count, const posenc_exec *exec,
                                         posenc_error *err) {
    table_job job = {params, {0, 0}, positions, dtype, out};
    FORWARD_IF_ERROR(check_params(params, &job.shape, err));
    FORWARD_IF_ERROR(check_table_output(positions, params->dim, dtype, out, out_count, err));
    posenc_exec_run_ run;
    FORWARD_IF_ERROR(posenc_exec_run_resolve_(exec, &run, err));
    if (params->odd == POSENC_ODD_PAD && params->dim % 2 == 1)
        for (size_t r = 0; r < positions->count; r++)
            posenc_store_real_(out, dtype, r * (size_t)params->dim + (size_t)params->dim - 1, 0.0);

    /* long double is at least as wide as float and double, so one buffer serves all */
    long double *w = malloc(sizeof *w * (size_t)job.shape.pairs);
    RETURN_ERROR_IF(!w, err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %d frequencies",
                    job.shape.pairs);
    posenc_status st = POSENC_OK;
    /* f64 torch-compat = torch.set_default_dtype(torch.float64). fairseq asks
     * for dtype=torch.float explicitly, so its table stays float32 (widened). */
    if (params->mode == POSENC_MODE_TORCH_COMPAT && dtype == POSENC_DTYPE_F64 &&
        params->freqs != POSENC_FREQS_T2T) {
        frequencies_torch_f64(params, &job.shape, (double *)w);
        run_direct(&job, w, torch_f64_worker, &run);
    } else if (params->mode == POSENC_MODE_TORCH_COMPAT) {
        frequencies_torch(params, &job.shape, (float *)w);
        st = check_torch_angle(positions, (const float *)w, job.shape.pairs, err);
        if (st == POSENC_OK) run_direct(&job, w, torch_f32_worker, &run);
    } else {
        frequencies_precise(params, &job.shape, w);
        if (positions->ids == NULL && positions->values == NULL &&
            range_fits_dd(positions, w, job.shape.pairs))
            st = fill_precise_range(&job, w, &run, err);
        else
            run_direct(&job, w, precise_direct_worker, &run);
    }
    free(w);
    return st == POSENC_OK ? posenc_ok_(err) : st;
}

posenc_status posenc_sinusoid_table(const posenc_sinusoid_params *params,
                                    const posenc_positions *positions, posenc_dtype dtype,
                                    void *out, size_t out_count, posenc_error *err) {
    return posenc_sinusoid_table_exec(params, positions, dtype, out, out_count, NULL, err);
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
        FORWARD_IF_ERROR(posenc_check_stored_(out, dtype, r * (size_t)dim, (size_t)dim, v, "position", err));
    }
    return posenc_ok_(err);
}
