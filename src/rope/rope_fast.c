/* rope_fast.c: the threaded, vectorized driver behind every in-place RoPE
 * apply (rope.c validates, then calls rope_apply_fast_).
 *
 * cos/sin per (token, pair) are computed once per token and reused across its
 * heads. In precise mode they come from the rotation scheme of the sinusoid
 * fast path: tokens are cut in blocks of ROPE_BLOCK starting at the call's
 * first token (the thread grain, so the split never changes a value); a block,
 * or a run of consecutive positions (a token whose position does not follow
 * its predecessor's starts one), starts from the double-double (sin, cos) of
 * its first position (recurrence.h), every 64 tokens that double-double is
 * rotated by ANCHOR*w_k, and the tokens in between by a double rotation by w_k
 * (drift < 64 * 2.3e-16); a value that lands that close to a float midpoint is
 * rounded again from double-doubles (round_near_ties). Positions beyond the
 * recurrence (|p| >= 2^53, |p w| >= 2^40) and the TORCH_COMPAT and GGML modes
 * take rope_token_cos_sin_ (rope_cos_sin.c) per token. The cos/sin code is the same
 * on every path; the rotation kernel is picked once per call (rope_kernels.h:
 * scalar rope_apply.c, or rope_avx2.c / rope_avx512.c) and all give the same
 * bits, so results do not depend on the path or the thread count.
 *
 * Non-finite results (POSENC_ERR_NONFINITE): each kernel call reports whether
 * the token's inputs or stored results hold inf/NaN (rope_kernels.h); each
 * worker keeps its first such token, and only then does the error path read
 * that token back to name the first bad cell. The rotation always runs to the
 * end, so x is the same whether or not the call reports. */
#include "../common/kernels.h"
#include "rope_fast.h"
#include "rope_kernels.h"
#include "../common/recurrence.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROPE_BLOCK 512

/* ---- the anchored cos/sin recurrence (contiguous positions, precise mode) ---- */

/* Whether the double-double anchors cover positions up to `most` in magnitude
 * (else the per-token long double path). */
static bool recurrence_fits(const rope_plan_ *plan, long double most) {
    return posenc_sincos_dd_covers_top_(most, plan->inv_abs_max);
}

/* After posenc_run_to_f32_ said some value of the token at position p may be
 * misrounded (its double within the recurrence's error of a float midpoint):
 * those pairs again from double-doubles, correctly rounded, so a token's
 * cos/sin never depend on where its call or run began (a few pairs in a
 * million; each ~0.2 us). */
static void round_near_ties(const posenc_recurrence_ *rec, double p, const double *run_s, const double *run_c,
                            double scale_s, double scale_c, float *s, float *c) {
    if (p == 0.0) return; /* (sin, cos) = (0, 1) exactly: an anchor's, already right */
    const double e = posenc_run_error_(scale_s, scale_c);
    for (size_t k = 0; k < rec->pairs; k++)
        if (posenc_f32_near_tie_(run_s[k] * scale_s, e) || posenc_f32_near_tie_(run_c[k] * scale_c, e))
            posenc_sincos_f32_exact_(p, rec->w_hi[k], rec->w_lo[k], scale_s, scale_c, s + k, c + k);
}

/* The token `offset` places into a run of consecutive positions starting at
 * start_position, called for offset = 0, 1, ... in order: leaves its double
 * (sin, cos) in state->run_s / run_c. Runs restart at every block boundary, so
 * the values never depend on threads. */
static void recurrence_token(const posenc_recurrence_ *rec, posenc_recurrence_state_ *state, double start_position,
                             size_t offset) {
    if (offset == 0) posenc_recurrence_start_(rec, state, start_position);
    else if (offset % POSENC_RECURRENCE_ANCHOR == 0) posenc_recurrence_next_anchor_(rec, state);
    else posenc_recurrence_next_(rec, state);
}

/* Multi-axis RoPE in precise mode: the pairs in axis order (order[begin[a] ..
 * begin[a + 1]) are axis a's), with their frequencies as double-doubles in that
 * order, so each axis is one vector call at its own position. */
typedef struct {
    int32_t axes;
    size_t begin[POSENC_MROPE_MAX_AXES + 1];
    int32_t *order;       /* [pairs] */
    double *w_hi, *w_lo;  /* [pairs], in pair order */
    double *gw_hi, *gw_lo; /* [pairs], in axis order */
} rope_axis_groups;

static posenc_status axis_groups_make(const rope_plan_ *plan, const int32_t *axis, int32_t axes,
                                      rope_axis_groups *g, posenc_error *err) {
    const size_t P = (size_t)plan->pairs;
    memset(g, 0, sizeof *g);
    g->axes = axes;
    g->order = malloc(sizeof *g->order * (P ? P : 1));
    g->w_hi = malloc(sizeof(double) * 4 * (P ? P : 1));
    if (!g->order || !g->w_hi) {
        free(g->order);
        free(g->w_hi);
        return posenc_fail_(err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate the axis groups of %zu pairs", P);
    }
    g->w_lo = g->w_hi + P;
    g->gw_hi = g->w_lo + P;
    g->gw_lo = g->gw_hi + P;
    posenc_split_dd_(plan->inv, P, g->w_hi, g->w_lo);
    size_t n = 0;
    for (int32_t a = 0; a < axes; a++) {
        g->begin[a] = n;
        for (size_t k = 0; k < P; k++)
            if (axis[k] == a) {
                g->gw_hi[n] = g->w_hi[k];
                g->gw_lo[n] = g->w_lo[k];
                g->order[n++] = (int32_t)k;
            }
    }
    g->begin[axes] = n;
    return POSENC_OK;
}

static void axis_groups_free(rope_axis_groups *g) {
    free(g->order);
    free(g->w_hi);
}

/* The f32 cos/sin of one multi-axis token: each axis' pairs at that axis'
 * position (pos[a]), in double by one vector call (posenc_sincos_run_, within
 * POSENC_RUN_ERROR), times scale_s / scale_c, then rounded with the near-tie
 * check; a value that close to a float midpoint is rounded again from
 * double-doubles. Correctly rounded, as rope_cos_sin_f32_'s per-pair long
 * double evaluation it replaces. The inverse takes +pos and a negative scale_s,
 * as the 1-D routes do, so sin at position 0 is -0 there too (the long double
 * evaluation gave +0). ds, dc: scratch of pairs doubles each; run_s, run_c
 * likewise. */
static void axis_token_cos_sin(const rope_axis_groups *g, posenc_kernel_path path, size_t P, const double *pos,
                               double scale_s, double scale_c, double *ds, double *dc, double *run_s,
                               double *run_c, float *c, float *s) {
    for (int32_t a = 0; a < g->axes; a++) {
        size_t b = g->begin[a], n = g->begin[a + 1] - b;
        if (n) posenc_sincos_run_(path, n, pos[a], g->gw_hi + b, g->gw_lo + b, ds + b, dc + b);
    }
    for (size_t i = 0; i < P; i++) {
        run_s[g->order[i]] = ds[i];
        run_c[g->order[i]] = dc[i];
    }
    if (!posenc_run_to_f32_(path, P, run_s, run_c, scale_s, scale_c, s, c)) return;
    const double e = posenc_run_error_(scale_s, scale_c);
    for (int32_t a = 0; a < g->axes; a++)
        for (size_t i = g->begin[a]; i < g->begin[a + 1]; i++) {
            size_t k = (size_t)g->order[i];
            if (pos[a] != 0.0 &&
                (posenc_f32_near_tie_(run_s[k] * scale_s, e) || posenc_f32_near_tie_(run_c[k] * scale_c, e)))
                posenc_sincos_f32_exact_(pos[a], g->w_hi[k], g->w_lo[k], scale_s, scale_c, s + k, c + k);
        }
}

typedef struct {
    const rope_plan_ *plan;
    posenc_layout layout;
    const posenc_rope_view *view;
    const int64_t *positions;
    int inverse;
    bool unit;
    rope_data_kind_ kind;
    void *x;
    posenc_kernel_path path;
    rope_rotate_fn_ rotate;         /* picked once per call (pick_kernel) */
    const int32_t *mrope_axis;      /* multi-axis RoPE: the axis of each pair; positions are
                                       [axes][tokens] (NULL: 1-D) */
    const posenc_mrope_sections *mrope; /* with mrope_axis: the sections (kind, axes) */
    const rope_axis_groups *groups; /* precise multi-axis RoPE whose positions the double-double
                                       reduction covers: pairs grouped by axis (else NULL) */
    bool recur;                     /* contiguous positions in precise mode */
    double scale_c, scale_s;        /* cos/sin multipliers (inverse: 1/a and -1/a) */
    uint32_t big_bits;              /* f32 inputs above these |bits| may overflow (rope_kernels.h) */
    posenc_recurrence_ rec;         /* when recur */
    char *scratch;                  /* per worker, worker_bytes each */
    size_t worker_bytes;
    struct rope_bad_token *bad;     /* per worker: its first token with a non-finite value */
} rope_job;

/* The first token a worker saw with inf/NaN (token == SIZE_MAX: none) and the
 * kernel's flags for it (ROPE_BAD_INPUT / ROPE_BAD_OUTPUT). */
typedef struct rope_bad_token {
    size_t token;
    unsigned flags;
} rope_bad_token;

/* The kernel of a path and dtype, chosen once per call. */
static rope_rotate_fn_ pick_kernel(posenc_kernel_path path, rope_data_kind_ kind) {
    static const rope_rotate_fn_ kernels[3][3] = {
        {rope_rotate_token_f32_, rope_rotate_token_f16_, rope_rotate_token_bf16_},
        {rope_rotate_token_f32_avx2_, rope_rotate_token_f16_avx2_, rope_rotate_token_bf16_avx2_},
        {rope_rotate_token_f32_avx512_, rope_rotate_token_f16_avx512_, rope_rotate_token_bf16_avx512_}};
    int p = path == POSENC_PATH_AVX512 ? 2 : path == POSENC_PATH_AVX2 ? 1 : 0;
    if (p == 2 && kind == ROPE_DATA_BF16 && posenc_cpu_has_avx512bf16_()) return rope_rotate_token_bf16_avx512bf16_;
    return kernels[p][kind];
}

static unsigned rotate_token(const rope_job *job, void *row, const float *c, const float *s, float *scratch) {
    const posenc_rope_view *v = job->view;
    return job->rotate(row, v->heads, v->head_stride, job->plan->pairs, job->layout, c, s, scratch, job->big_bits);
}

static float stored_value(const rope_job *job, const char *head, size_t channel) {
    if (job->kind == ROPE_DATA_F32) return ((const float *)head)[channel];
    uint16_t u = ((const uint16_t *)head)[channel];
    return job->kind == ROPE_DATA_F16 ? posenc_f16_to_f32(u) : posenc_bf16_to_f32(u);
}

/* The first rotated value of token t (heads in order, channels 0..R-1) that is
 * inf/NaN: its head and channel, or false when all are finite (rare paths:
 * huge f32 inputs that may overflow, and the error report). */
static bool first_nonfinite(const rope_job *job, size_t t, size_t *head, size_t *channel) {
    const posenc_rope_view *v = job->view;
    const size_t elem = job->kind == ROPE_DATA_F32 ? 4 : 2;
    const char *row = (const char *)job->x + t * v->row_stride * elem;
    for (size_t h = 0; h < v->heads; h++)
        for (size_t c = 0; c < 2 * (size_t)job->plan->pairs; c++)
            if (!isfinite(stored_value(job, row + h * v->head_stride * elem, c))) {
                *head = h;
                *channel = c;
                return true;
            }
    return false;
}

/* NaN results of a token whose input held inf/NaN, made one positive quiet
 * NaN of the data's dtype (f32 0x7fc00000, f16 0x7e00, bf16 0x7fc0). Which
 * input NaN a product or sum passes on, and its sign, depend on the operand
 * order the compiler picked, and a commutative add may be swapped (clang's
 * AVX2 and AVX-512 builds of the same line passed on different payloads and
 * signs: fuzz_rope_exec); one pattern keeps every path's bytes equal. Rare
 * (non-finite input), so a scalar pass over the token's rotated channels. */
static void canonical_nans(const rope_job *job, size_t t) {
    const posenc_rope_view *v = job->view;
    const size_t channels = 2 * (size_t)job->plan->pairs;
    if (job->kind == ROPE_DATA_F32) {
        char *row = (char *)job->x + t * v->row_stride * 4;
        for (size_t h = 0; h < v->heads; h++) {
            uint32_t *head = (uint32_t *)(void *)(row + h * v->head_stride * 4);
            for (size_t c = 0; c < channels; c++)
                if ((head[c] & 0x7fffffffu) > 0x7f800000u) head[c] = 0x7fc00000u;
        }
        return;
    }
    const bool f16 = job->kind == ROPE_DATA_F16;
    const uint16_t inf = f16 ? 0x7c00u : 0x7f80u, nan = f16 ? 0x7e00u : 0x7fc0u;
    uint16_t *row = (uint16_t *)job->x + t * v->row_stride;
    for (size_t h = 0; h < v->heads; h++) {
        uint16_t *head = row + h * v->head_stride;
        for (size_t c = 0; c < channels; c++)
            if ((head[c] & 0x7fffu) > inf) head[c] = nan;
    }
}

static void rope_worker(void *vjob, size_t worker, size_t begin, size_t end) {
    const rope_job *job = vjob;
    const int32_t pairs = job->plan->pairs;
    const size_t P = (size_t)pairs;
    double *mem = (double *)(job->scratch + worker * job->worker_bytes);
    posenc_recurrence_state_ state = posenc_recurrence_state_in_(P, mem);
    float *c = (float *)(mem + posenc_recurrence_state_doubles_(P)), *s = c + P, *scratch = s + P; /* 4 * pairs */
    size_t elem = job->kind == ROPE_DATA_F32 ? 4 : 2;
    rope_bad_token bad = {SIZE_MAX, 0};
    for (size_t b = begin; b < end; b += ROPE_BLOCK) {
        size_t block_end = b + ROPE_BLOCK < end ? b + ROPE_BLOCK : end;
        size_t run_start = b; /* recur: the token where the current run of consecutive positions began */
        for (size_t t = b; t < block_end; t++) {
            if (job->recur) {
                const int64_t *ids = job->positions;
                if (ids && t > b && ids[t] != ids[t - 1] + 1) run_start = t; /* |ids| < 2^53: no overflow */
                double start = ids ? (double)ids[run_start] : (double)run_start;
                /* a run of one (a decoding token, an id of a continuous batch): no anchor to step from */
                bool alone = t == run_start && (t + 1 == block_end || (ids && ids[t + 1] != ids[t] + 1));
                if (alone) posenc_recurrence_start_alone_(&job->rec, &state, start);
                else recurrence_token(&job->rec, &state, start, t - run_start);
                if (posenc_run_to_f32_(job->path, P, state.run_s, state.run_c, job->scale_s, job->scale_c, s, c))
                    round_near_ties(&job->rec, start + (double)(t - run_start), state.run_s, state.run_c,
                                    job->scale_s, job->scale_c, s, c);
            } else if (job->mrope_axis && job->plan->mode == POSENC_MODE_TORCH_COMPAT &&
                       job->mrope->kind != POSENC_MROPE_AXIAL) {
                long double pos[POSENC_MROPE_MAX_AXES] = {0, 0, 0, 0};
                for (int32_t a = 0; a < job->mrope->axes; a++) {
                    pos[a] = (long double)job->positions[(size_t)a * job->view->tokens + t];
                    if (job->inverse) pos[a] = -pos[a];
                }
                rope_torch_mrope_cos_sin_(job->plan->inv, pairs, job->mrope_axis,
                                          job->mrope->kind == POSENC_MROPE_INTERLEAVED, pos, job->scale_c, c, s,
                                          scratch);
            } else if (job->groups) {
                double pos[POSENC_MROPE_MAX_AXES] = {0, 0, 0, 0};
                for (int32_t a = 0; a < job->groups->axes; a++)
                    pos[a] = (double)job->positions[(size_t)a * job->view->tokens + t];
                axis_token_cos_sin(job->groups, job->path, P, pos, job->scale_s, job->scale_c, state.anchor.s_hi,
                                   state.anchor.c_hi, state.run_s, state.run_c, c, s);
            } else if (job->mrope_axis) { /* exactly posenc_mrope_apply_f32's per-pair cos/sin */
                for (int32_t k = 0; k < pairs; k++) {
                    long double pos = (long double)job->positions[(size_t)job->mrope_axis[k] * job->view->tokens + t];
                    rope_cos_sin_f32_(job->plan->mode, job->plan->inv + k, 1, job->inverse ? -pos : pos,
                                      job->scale_c, c + k, s + k);
                }
            } else {
                long double pos = job->positions ? (long double)job->positions[t] : (long double)t;
                rope_token_cos_sin_(job->plan, pos, job->inverse, job->unit, c, s);
            }
            unsigned flags = rotate_token(job, (char *)job->x + t * job->view->row_stride * elem, c, s, scratch);
            size_t head, channel;
            if (flags == ROPE_MAYBE_OVERFLOW) flags = first_nonfinite(job, t, &head, &channel) ? ROPE_BAD_OUTPUT : 0u;
            if (flags & ROPE_BAD_INPUT) canonical_nans(job, t);
            if (flags && bad.token == SIZE_MAX) bad = (rope_bad_token){t, flags};
        }
    }
    /* a worker runs several pieces (posenc_parallel_for_): keep its smallest bad token */
    if (bad.token < job->bad[worker].token) job->bad[worker] = bad;
}

/* ---- the error path: name the first non-finite rotated value --------------- */

/* POSENC_ERR_NONFINITE naming the first rotated channel of `token` (heads in
 * order, channels 0..R-1) that holds inf/NaN, and why: the token's input
 * already held inf/NaN (a non-finite input makes both values of its pair
 * non-finite, so a pair with one finite value overflowed), or the rotation
 * times the cos/sin magnitude overflowed the dtype. */
static posenc_status report_nonfinite(const rope_job *job, rope_bad_token bad, posenc_error *err) {
    const posenc_rope_view *v = job->view;
    const size_t P = (size_t)job->plan->pairs, elem = job->kind == ROPE_DATA_F32 ? 4 : 2;
    const char *row = (const char *)job->x + bad.token * v->row_stride * elem;
    size_t head, channel;
    if (!first_nonfinite(job, bad.token, &head, &channel))
        return POSENC_OK; /* unreachable: a flagged token holds a non-finite value */
    const char *h = row + head * v->head_stride * elem;
    float value = stored_value(job, h, channel);
    size_t other = job->layout == POSENC_LAYOUT_HALF ? (channel + P) % (2 * P) : channel ^ 1;
    float partner = stored_value(job, h, other);
    const char *dtype = job->kind == ROPE_DATA_F32 ? "f32" : job->kind == ROPE_DATA_F16 ? "f16" : "bf16";
    const char *text = isnan(value) ? "nan" : value > 0 ? "inf" : "-inf";
    char where[96];
    if (job->mrope_axis) snprintf(where, sizeof where, "token %zu", bad.token);
    else
        snprintf(where, sizeof where, "token %zu (%s %lld)", bad.token, job->unit ? "delta" : "position",
                 job->positions ? (long long)job->positions[bad.token] : (long long)bad.token);
    double largest = job->kind == ROPE_DATA_F32 ? 3.4028234663852886e38
                     : job->kind == ROPE_DATA_F16 ? 65504.0 : 3.3895313892515355e38;
    double magnitude = job->unit ? 1.0 : job->inverse ? 1.0 / job->plan->attention : job->plan->attention;
    char scale[64] = "";
    if (!job->unit)
        snprintf(scale, sizeof scale, " scaled by %sthe attention factor %g", job->inverse ? "1 / " : "",
                 job->plan->attention);
    if ((bad.flags & ROPE_BAD_INPUT) && !isfinite(partner)) {
        /* 16-bit data: the flag means an f32 result was inf/NaN, an input for
         * sure only when finite inputs cannot overflow f32 (rope_kernels.h) */
        double f32_max = 3.4028234663852886e38, reach = f32_max / (2.0 * magnitude);
        if (job->kind == ROPE_DATA_F32 || largest < reach)
            return posenc_fail_(err, POSENC_ERR_NONFINITE,
                                "rotated value at %s, head %zu, channel %zu is %s: the input of token %zu already "
                                "holds inf or NaN", where, head, channel, text, bad.token);
        return posenc_fail_(err, POSENC_ERR_NONFINITE,
                            "rotated value at %s, head %zu, channel %zu is %s: the input of token %zu holds inf or "
                            "NaN, or values above %.2g that overflow f32 once%s", where, head, channel, text,
                            bad.token, reach, scale[0] ? scale : " rotated");
    }
    return posenc_fail_(err, POSENC_ERR_NONFINITE,
                        "rotated value at %s, head %zu, channel %zu is %s: the rotation%s overflows %s "
                        "(largest finite %g)", where, head, channel, text, scale, dtype, largest);
}

/* The largest |bits| of an input, in the data's format, whose rotation cannot
 * overflow it (rope_kernels.h): |a c - b s| <= 2 max(|a|, |b|) |c|, so inputs up
 * to limit / (2.01 m) are safe (2.01: cos/sin x m rounded to f32; f16/bf16 limit:
 * the value that rounds to inf). Rounded down: a smaller bound only costs a
 * look at more results. */
static uint32_t reach_bits(rope_data_kind_ kind, double m) {
    double limit = kind == ROPE_DATA_F32 ? 3.4028234663852886e38 : kind == ROPE_DATA_F16 ? 65520.0 : 3.3961775292304957e38;
    double reach = limit / (2.01 * m);
    uint32_t most = kind == ROPE_DATA_F32 ? ROPE_FINITE_BITS_F32 : kind == ROPE_DATA_F16 ? 0x7bffu : 0x7f7fu;
    float r = (float)reach;
    if (!(reach < limit) || !(r < 3.4028234663852886e38f)) return most;
    uint32_t bits;
    memcpy(&bits, &r, sizeof bits);
    if (kind == ROPE_DATA_F32) return bits - 1;
    uint32_t b16 = kind == ROPE_DATA_F16 ? posenc_f32_to_f16(r) : bits >> 16;
    while (b16 > 0 && (kind == ROPE_DATA_F16 ? posenc_f16_to_f32((uint16_t)b16) : posenc_bf16_to_f32((uint16_t)b16)) > r)
        b16--;
    return b16 < most ? b16 : most;
}

/* ready: a plan's recurrence (its steps made once, on any path: same bits), or
 * NULL to make one for this call. */
static posenc_status apply_fast(const rope_plan_ *plan, const posenc_recurrence_ *ready, const int32_t *mrope_axis,
                                const posenc_mrope_sections *mrope, posenc_layout layout,
                                const posenc_rope_view *view, const int64_t *positions, int inverse, bool unit,
                                rope_data_kind_ kind, void *x, const posenc_exec *exec, posenc_error *err) {
    posenc_exec_run_ run;
    FORWARD_IF_ERROR(posenc_exec_run_resolve_(exec, &run, err));
    if (view->tokens == 0) return POSENC_OK;
    const size_t P = (size_t)plan->pairs;
    rope_bad_token bad[POSENC_MAX_THREADS];
    rope_job job = {plan, layout, view, positions, inverse, unit, kind, x, run.exec.path,
                    pick_kernel(run.exec.path, kind), mrope_axis, mrope, NULL, false, 1, 1,
                    ROPE_FINITE_BITS_F32,
                    {POSENC_PATH_SCALAR, 0, NULL, NULL, NULL, {NULL, NULL, NULL, NULL}, {NULL, NULL, NULL, NULL}},
                    NULL, 0, bad};
    /* In precise mode the recurrence serves every call whose positions it covers
     * (|p| < 2^53, |p w| < 2^40): a run of consecutive positions steps from the
     * double-double anchor of its first token, and a token alone (a decoding
     * token, an id of a continuous batch) is a run of one, evaluated in double
     * after the double-double reduction (posenc_recurrence_start_alone_, ~0.25 us
     * at 64 pairs, where the per-pair long double evaluation of rope_cos_sin.c,
     * which serves what the recurrence does not cover, takes ~2.2 us). All round
     * correctly, so the route never changes a value; it depends on the positions
     * only, never on path or threads. */
    if (plan->mode == POSENC_MODE_GGML) { /* ggml's fused rotation, scalar on every path */
        static const rope_rotate_fn_ ggml_kernels[3] = {rope_rotate_token_ggml_f32_, rope_rotate_token_ggml_f16_,
                                                        rope_rotate_token_ggml_bf16_};
        job.rotate = ggml_kernels[kind];
    }
    job.recur = plan->mode == POSENC_MODE_PRECISE && !mrope_axis;
    /* runs restart at every block; scattered ids make runs of one, which need no step */
    size_t longest = view->tokens < ROPE_BLOCK ? view->tokens : ROPE_BLOCK;
    if (job.recur && positions) {
        long double most = 0;
        size_t length = 0, longest_run = 0;
        for (size_t t = 0; t < view->tokens; t++) {
            most = fmaxl(most, fabsl((long double)positions[t]));
            length = t > 0 && positions[t] == positions[t - 1] + 1 ? length + 1 : 1; /* |ids| < 2^53: no overflow */
            if (length > longest_run) longest_run = length;
        }
        job.recur = recurrence_fits(plan, most);
        if (longest_run < longest) longest = longest_run;
    } else if (job.recur) {
        job.recur = recurrence_fits(plan, (long double)(view->tokens - 1));
    }
    if (job.recur && ready) {
        job.rec = *ready; /* borrowed: its arrays stay the plan's */
        job.rec.path = run.exec.path;
        job.rec.mem = NULL;
    } else if (job.recur) {
        FORWARD_IF_ERROR(posenc_recurrence_init_(&job.rec, plan->inv, P, run.exec.path, longest, err));
    }
    rope_axis_groups groups;
    if (mrope_axis && plan->mode == POSENC_MODE_PRECISE) { /* one vector call per axis, where it reaches */
        long double most = 0;
        for (size_t i = 0; i < (size_t)mrope->axes * view->tokens; i++)
            most = fmaxl(most, fabsl((long double)positions[i]));
        if (recurrence_fits(plan, most)) {
            FORWARD_IF_ERROR(axis_groups_make(plan, mrope_axis, mrope->axes, &groups, err)); /* no recurrence here */
            job.groups = &groups;
        }
    }
    double a = unit ? 1.0 : plan->attention;
    job.scale_c = inverse ? 1.0 / a : a;
    job.scale_s = inverse ? -1.0 / a : a; /* sin(-x) = -sin(x) exactly */
    job.big_bits = reach_bits(kind, fabs(job.scale_c));
    size_t bytes = view->tokens * view->heads * 2 * P * (kind == ROPE_DATA_F32 ? 4 : 2);
    int32_t threads = posenc_threads_for_bytes_(&run, bytes);
    size_t blocks = (view->tokens + ROPE_BLOCK - 1) / ROPE_BLOCK;
    if ((size_t)threads > blocks && job.recur) threads = (int32_t)blocks;
    /* per worker: recurrence state, c, s, the kernels' scratch (f32 x 6P) */
    job.worker_bytes = posenc_recurrence_state_doubles_(P) * sizeof(double) + 6 * sizeof(float) * P + 64;
    job.worker_bytes = (job.worker_bytes + 63) / 64 * 64;
    job.scratch = malloc(job.worker_bytes * (size_t)threads);
    if (!job.scratch) {
        posenc_recurrence_free_(&job.rec);
        if (job.groups) axis_groups_free(&groups);
        return posenc_fail_(err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate RoPE scratch for %zu pairs", P);
    }
    for (int32_t w = 0; w < threads; w++) bad[w] = (rope_bad_token){SIZE_MAX, 0};
    posenc_parallel_for_(&run, threads, view->tokens, job.recur ? ROPE_BLOCK : 16, rope_worker, &job);
    free(job.scratch);
    posenc_recurrence_free_(&job.rec);
    if (job.groups) axis_groups_free(&groups);
    rope_bad_token first = {SIZE_MAX, 0}; /* the smallest token over the workers is the first */
    for (int32_t w = 0; w < threads; w++)
        if (bad[w].token < first.token) first = bad[w];
    return first.token == SIZE_MAX ? POSENC_OK : report_nonfinite(&job, first, err);
}

posenc_status rope_apply_fast_(const rope_plan_ *plan, const posenc_recurrence_ *ready, posenc_layout layout,
                               const posenc_rope_view *view, const int64_t *positions, int inverse, bool unit,
                               rope_data_kind_ kind, void *x, const posenc_exec *exec, posenc_error *err) {
    return apply_fast(plan, ready, NULL, NULL, layout, view, positions, inverse, unit, kind, x, exec, err);
}

posenc_status rope_recurrence_for_plan_(const rope_plan_ *plan, posenc_recurrence_ *rec, posenc_error *err) {
    posenc_exec_run_ run;
    FORWARD_IF_ERROR(posenc_exec_run_resolve_(NULL, &run, err));
    return posenc_recurrence_init_(rec, plan->inv, (size_t)plan->pairs, run.exec.path, SIZE_MAX, err);
}

posenc_status rope_apply_mrope_fast_(const rope_plan_ *plan, const int32_t *axis,
                                     const posenc_mrope_sections *sections, posenc_layout layout,
                                     const posenc_rope_view *view, const int64_t *positions, int inverse, float *x,
                                     posenc_error *err) {
    return apply_fast(plan, NULL, axis, sections, layout, view, positions, inverse, false, ROPE_DATA_F32, x, NULL,
                      err);
}

/* ---- cos/sin tables over a range of positions ------------------------------ */

typedef struct {
    const posenc_recurrence_ *rec;
    double first; /* position of row 0 */
    double scale;
    bool wide;
    void *cos_out, *sin_out;
    double *state; /* posenc_recurrence_state_doubles_ per worker */
} table_job;

/* f32: the recurrence's doubles times scale, rounded once (the values apply uses).
 * f64: a double-double rotation by w_k per row from each block start (~1e-25
 * off), so the doubles stay as accurate as sinl/cosl would make them. */
static void table_worker(void *vjob, size_t worker, size_t begin, size_t end) {
    const table_job *job = vjob;
    const posenc_recurrence_ *rec = job->rec;
    const size_t P = rec->pairs;
    posenc_recurrence_state_ state =
        posenc_recurrence_state_in_(P, job->state + posenc_recurrence_state_doubles_(P) * worker);
    for (size_t b = begin; b < end; b += ROPE_BLOCK) {
        size_t block_end = b + ROPE_BLOCK < end ? b + ROPE_BLOCK : end;
        for (size_t t = b; t < block_end; t++) {
            if (!job->wide) {
                recurrence_token(rec, &state, job->first + (double)b, t - b);
                float *c = (float *)job->cos_out + t * P, *s = (float *)job->sin_out + t * P;
                if (posenc_run_to_f32_(rec->path, P, state.run_s, state.run_c, job->scale, job->scale, s, c))
                    round_near_ties(rec, job->first + (double)t, state.run_s, state.run_c, job->scale, job->scale, s,
                                    c);
                continue;
            }
            if (t == b) posenc_recurrence_start_(rec, &state, job->first + (double)b);
            else posenc_recurrence_next_dd_(rec, &state);
            const posenc_dd_sincos_ *a = &state.anchor;
            double *c = (double *)job->cos_out + t * P, *s = (double *)job->sin_out + t * P;
            for (size_t k = 0; k < P; k++) {
                c[k] = a->c_hi[k] * job->scale + a->c_lo[k] * job->scale;
                s[k] = a->s_hi[k] * job->scale + a->s_lo[k] * job->scale;
            }
        }
    }
}

bool rope_table_fast_applies_(const rope_plan_ *plan, const posenc_positions *positions) {
    long double first = (long double)positions->start;
    long double last = first + (long double)(positions->count ? positions->count - 1 : 0);
    return plan->mode == POSENC_MODE_PRECISE && !positions->ids && !positions->values &&
           recurrence_fits(plan, fmaxl(fabsl(first), fabsl(last)));
}

posenc_status rope_table_fast_(const rope_plan_ *plan, const posenc_positions *positions, double scale, bool wide,
                               void *cos_out, void *sin_out, posenc_error *err) {
    posenc_exec_run_ run;
    FORWARD_IF_ERROR(posenc_exec_run_resolve_(NULL, &run, err));
    if (positions->count == 0) return POSENC_OK;
    const size_t P = (size_t)plan->pairs;
    posenc_recurrence_ rec;
    size_t longest = positions->count < ROPE_BLOCK ? positions->count : ROPE_BLOCK; /* runs restart per block */
    FORWARD_IF_ERROR(posenc_recurrence_init_(&rec, plan->inv, P, run.exec.path, longest, err));
    size_t bytes = 2 * positions->count * P * (wide ? 8 : 4);
    int32_t threads = posenc_threads_for_bytes_(&run, bytes);
    size_t blocks = (positions->count + ROPE_BLOCK - 1) / ROPE_BLOCK;
    if ((size_t)threads > blocks) threads = (int32_t)blocks;
    table_job job = {&rec, (double)positions->start, scale, wide, cos_out, sin_out, malloc(sizeof(double) * posenc_recurrence_state_doubles_(P) * (size_t)threads)};
    if (!job.state) {
        posenc_recurrence_free_(&rec);
        return posenc_fail_(err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate RoPE table scratch for %zu pairs", P);
    }
    posenc_parallel_for_(&run, threads, positions->count, ROPE_BLOCK, table_worker, &job);
    free(job.state);
    posenc_recurrence_free_(&rec);
    return POSENC_OK;
}
