/* rope_peers.c: the C half of bench/rope_peers.py (issue 43), built as a shared
 * library (`cmake --build build --target posenc_rope_peers`) that the Python
 * driver loads with ctypes, so posenc, ggml's CPU rope, the memory ceilings and
 * HF's apply_rotary_pos_emb on torch all run in one process, in alternating
 * rounds on the same shapes.
 *
 * One case = q [tokens][q_heads][dim] and k [tokens][kv_heads][dim] in place,
 * f32/bf16/f16, interleaved or half-split, positions pos0..pos0+tokens-1,
 * base 10000, on `threads` threads (each side's pool made once per case).
 * Every timing function runs `calls` back-to-back applications and returns ms
 * per call (the caller takes the best of its rounds).
 *
 * The ceilings (rp_ceiling) move the same bytes as the kernel under test, over
 * the kernel's own q and k buffers, on as many threads: the in-place
 * read-modify-write (every 32-bit word + 0, read + write, so the bits never
 * change whatever the dtype), with regular stores, regular stores plus a write
 * prefetch 8 KiB ahead (what the RoPE kernels do), and non-temporal stores; and
 * a copy of q and k into a second buffer (regular and non-temporal stores).
 * Kind 5 is the old ceiling of posenc bench (x *= 1 as the shipped build
 * compiles it), f32 only, timed beside them. The driver takes a row's ceiling
 * as the fastest in-place pass of all (kind 5 included where it runs): no
 * kernel that reads and writes the same bytes can move them faster.
 *
 * ggml is compiled in when CMake was given a checkout (-DPOSENC_GGML_DIR,
 * cmake/ggml.cmake); without it rp_ggml returns -2. ggml's CPU rope has no
 * bf16 (ggml_compute_forward_rope aborts on it): rp_ggml returns -3 there. */
#define _GNU_SOURCE
#include "posenc.h"
#include "bench_timing.h"

#if RP_HAVE_GGML
#include "ggml-cpu.h"
#include "ggml.h"
#endif

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#define RP_API __attribute__((visibility("default")))

enum { RP_F32 = 0, RP_BF16 = 1, RP_F16 = 2 };
enum { RP_RMW = 0, RP_RMW_PREFETCH = 1, RP_RMW_NT = 2, RP_COPY = 3, RP_COPY_NT = 4, RP_OLD = 5, RP_KINDS = 6 };

typedef struct rp_case {
    int dtype, layout, tokens, qh, kh, dim, threads;
    long long pos0;
    size_t qn, kn, elem;     /* values in q, k; bytes per value */
    char *q, *k, *copy;      /* copy: qbytes + kbytes, the copy ceilings' destination */
    int64_t *ids;            /* pos0.. (NULL when pos0 == 0: the range route) */
    posenc_rope_params params;
    posenc_rope_plan *plan;
    posenc_exec exec;
    int flip;                /* decode: alternate forward / inverse so values stay the input's */
#if RP_HAVE_GGML
    struct ggml_context *gctx;
    struct ggml_cgraph *graph;
    struct ggml_cplan gplan;
    struct ggml_threadpool *gpool;
    struct ggml_tensor *gq, *gk;
#endif
} rp_case;

/* the ctypes interface (bench/rope_peers.py declares the same signatures) */
RP_API const char *rp_info(void);
RP_API rp_case *rp_new(int dtype, int layout, int tokens, int qh, int kh, int dim, long long pos0, int threads);
RP_API void rp_free(rp_case *c);
RP_API void *rp_data(rp_case *c, int which);
RP_API double rp_bytes(const rp_case *c);
RP_API double rp_posenc(rp_case *c, int calls);
RP_API double rp_ggml(rp_case *c, int calls);
RP_API long long rp_ggml_check(rp_case *c, double *worst);
RP_API double rp_ceiling(rp_case *c, int kind, int calls);

static size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

static void fill(char *p, size_t n, size_t elem, uint32_t seed) {
    uint32_t rng = seed;
    for (size_t i = 0; i < n; i++) {
        rng = rng * 1664525u + 1013904223u;
        float v = (float)((rng >> 8) & 0xffff) / 16384.0f - 2.0f; /* [-2, 2), exact in every dtype's f32 */
        if (elem == 4) memcpy(p + 4 * i, &v, 4);
        else {
            uint16_t h = seed & 1 ? posenc_f32_to_bf16(v) : posenc_f32_to_f16(v);
            memcpy(p + 2 * i, &h, 2);
        }
    }
}

static posenc_dtype pdtype(int d) {
    return d == RP_BF16 ? POSENC_DTYPE_BF16 : d == RP_F16 ? POSENC_DTYPE_F16 : POSENC_DTYPE_F32;
}

RP_API const char *rp_info(void) {
    static char info[256]; /* written once per call from one thread: the driver's */
    snprintf(info, sizeof info, "posenc %s, ggml %s", posenc_version(),
#if RP_HAVE_GGML
             "d99724f2 (or the checkout given to CMake)"
#else
             "not built"
#endif
    );
    return info;
}

/* layout: 0 interleaved (ggml NORMAL), 1 half-split (ggml NEOX). NULL on failure. */
RP_API rp_case *rp_new(int dtype, int layout, int tokens, int qh, int kh, int dim, long long pos0, int threads) {
    rp_case *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    *c = (rp_case){.dtype = dtype, .layout = layout, .tokens = tokens, .qh = qh, .kh = kh, .dim = dim,
                   .threads = threads, .pos0 = pos0};
    c->elem = dtype == RP_F32 ? 4 : 2;
    c->qn = (size_t)tokens * qh * dim;
    c->kn = (size_t)tokens * kh * dim;
    size_t qb = round_up(c->qn * c->elem + 1, 4096), kb = round_up(c->kn * c->elem + 1, 4096); /* never 0 */
    c->q = bench_alloc_huge(qb);
    c->k = bench_alloc_huge(kb);
    c->copy = bench_alloc_huge(qb + kb);
    if (!c->q || !c->k || !c->copy) goto fail;
    memset(c->q, 0, qb);
    memset(c->k, 0, kb);
    memset(c->copy, 0, qb + kb);
    fill(c->q, c->qn, c->elem, dtype == RP_BF16 ? 3u : 2u);
    fill(c->k, c->kn, c->elem, dtype == RP_BF16 ? 5u : 4u);
    if (pos0 != 0) {
        if (!(c->ids = malloc((size_t)tokens * sizeof *c->ids))) goto fail;
        for (int t = 0; t < tokens; t++) c->ids[t] = pos0 + t;
    }
    posenc_rope_params_default(&c->params, dim);
    posenc_error err = {0};
    posenc_exec_default(&c->exec);
    c->exec.threads = threads;
    if (posenc_rope_plan_create(&c->params, 0, &c->plan, &err) != POSENC_OK) goto fail;
    if (threads > 1 && posenc_threadpool_create(threads, &c->exec.pool, &err) != POSENC_OK) goto fail;
#if RP_HAVE_GGML
    if (dtype != RP_BF16) {
        enum ggml_type gt = dtype == RP_F16 ? GGML_TYPE_F16 : GGML_TYPE_F32;
        size_t bytes = (c->qn + c->kn) * c->elem + (size_t)tokens * 4 + (16u << 20);
        struct ggml_init_params ip = {bytes, NULL, false};
        if (!(c->gctx = ggml_init(ip))) goto fail;
        /* ggml's ne order [dim, heads, tokens]: the same memory as [tokens][heads][dim] */
        c->gq = ggml_new_tensor_3d(c->gctx, gt, dim, qh, tokens);
        c->gk = ggml_new_tensor_3d(c->gctx, gt, dim, kh, tokens);
        struct ggml_tensor *pos = ggml_new_tensor_1d(c->gctx, GGML_TYPE_I32, tokens);
        for (int t = 0; t < tokens; t++) ((int32_t *)pos->data)[t] = (int32_t)(pos0 + t);
        memcpy(c->gq->data, c->q, c->qn * c->elem);
        memcpy(c->gk->data, c->k, c->kn * c->elem);
        int mode = layout ? GGML_ROPE_TYPE_NEOX : GGML_ROPE_TYPE_NORMAL;
        struct ggml_tensor *oq = ggml_rope_ext_inplace(c->gctx, c->gq, pos, NULL, dim, mode, 0, 10000.0f, 1.0f,
                                                       0.0f, 1.0f, 0.0f, 0.0f);
        struct ggml_tensor *ok = ggml_rope_ext_inplace(c->gctx, c->gk, pos, NULL, dim, mode, 0, 10000.0f, 1.0f,
                                                       0.0f, 1.0f, 0.0f, 0.0f);
        c->graph = ggml_new_graph(c->gctx);
        ggml_build_forward_expand(c->graph, oq);
        ggml_build_forward_expand(c->graph, ok);
        struct ggml_threadpool_params tp = ggml_threadpool_params_default(threads);
        if (!(c->gpool = ggml_threadpool_new(&tp))) goto fail;
        c->gplan = ggml_graph_plan(c->graph, threads, c->gpool);
        c->gplan.work_data = c->gplan.work_size ? malloc(c->gplan.work_size) : NULL;
        if (c->gplan.work_size && !c->gplan.work_data) goto fail;
        ggml_threadpool_pause(c->gpool); /* its threads poll after a graph: asleep while others run */
    }
#endif
    return c;
fail:
    rp_free(c);
    return NULL;
}

RP_API void rp_free(rp_case *c) {
    if (!c) return;
#if RP_HAVE_GGML
    if (c->gpool) {
        ggml_threadpool_resume(c->gpool);
        ggml_threadpool_free(c->gpool);
    }
    if (c->gplan.work_data) free(c->gplan.work_data);
    if (c->gctx) ggml_free(c->gctx);
#endif
    posenc_threadpool_free(c->exec.pool);
    posenc_rope_plan_free(c->plan);
    free(c->ids);
    free(c->q);
    free(c->k);
    free(c->copy);
    free(c);
}

/* the case's q (which 0) or k (which 1) buffer: the driver hands the same
 * input to the torch peers and compares their results with posenc's */
RP_API void *rp_data(rp_case *c, int which) { return which ? c->k : c->q; }

/* bytes one application moves: q and k read and written */
RP_API double rp_bytes(const rp_case *c) { return 2.0 * (double)(c->qn + c->kn) * (double)c->elem; }

static int posenc_once(rp_case *c, int inverse, posenc_mode mode) {
    posenc_error err = {0};
    posenc_layout layout = c->layout ? POSENC_LAYOUT_HALF : POSENC_LAYOUT_INTERLEAVED;
    posenc_rope_view vq = posenc_rope_view_contiguous((size_t)c->tokens, (size_t)c->qh, c->dim);
    posenc_rope_view vk = posenc_rope_view_contiguous((size_t)c->tokens, (size_t)c->kh, c->dim);
    posenc_status st;
    if (mode == POSENC_MODE_PRECISE) {
        st = posenc_rope_plan_apply(c->plan, layout, &vq, c->ids, inverse, pdtype(c->dtype), c->q, c->qn, &c->exec,
                                    &err);
        if (st == POSENC_OK)
            st = posenc_rope_plan_apply(c->plan, layout, &vk, c->ids, inverse, pdtype(c->dtype), c->k, c->kn,
                                        &c->exec, &err);
    } else {
        posenc_rope_params p = c->params;
        p.mode = mode;
        st = posenc_rope_apply_exec(&p, 0, layout, &vq, c->ids, inverse, pdtype(c->dtype), c->q, c->qn, &c->exec,
                                    &err);
        if (st == POSENC_OK)
            st = posenc_rope_apply_exec(&p, 0, layout, &vk, c->ids, inverse, pdtype(c->dtype), c->k, c->kn,
                                        &c->exec, &err);
    }
    if (st != POSENC_OK) fprintf(stderr, "rope_peers: posenc: %s\n", err.message);
    return st == POSENC_OK ? 0 : -1;
}

/* ms per call of posenc (planned, precise mode) on q then k; -1 on error.
 * Calls alternate forward and inverse (a decoding loop's values stay bounded;
 * the inverse is the same kernel and traffic). */
RP_API double rp_posenc(rp_case *c, int calls) {
    double t0 = bench_now_ms();
    for (int i = 0; i < calls; i++)
        if (posenc_once(c, (c->flip++) & 1, POSENC_MODE_PRECISE) != 0) return -1;
    return (bench_now_ms() - t0) / calls;
}

/* ms per call of ggml's graph (rope of q and of k, in place); -2 without ggml,
 * -3 for bf16 (ggml's CPU rope has none). */
RP_API double rp_ggml(rp_case *c, int calls) {
#if RP_HAVE_GGML
    if (!c->gpool) return -3;
    ggml_threadpool_resume(c->gpool);
    double t0 = bench_now_ms();
    for (int i = 0; i < calls; i++) ggml_graph_compute(c->graph, &c->gplan);
    double ms = (bench_now_ms() - t0) / calls;
    ggml_threadpool_pause(c->gpool);
    return ms;
#else
    (void)c, (void)calls;
    return -2;
#endif
}

/* How many values of posenc's POSENC_MODE_GGML output differ from ggml's (same
 * input), and the largest |posenc precise - ggml| in *worst; -2/-3 as rp_ggml.
 * Restores both sides' buffers to the input afterwards (up to rounding). */
RP_API long long rp_ggml_check(rp_case *c, double *worst) {
#if RP_HAVE_GGML
    if (!c->gpool) return -3;
    size_t qb = c->qn * c->elem, kb = c->kn * c->elem;
    memcpy(c->copy, c->q, qb);
    memcpy(c->copy + qb, c->k, kb);
    memcpy(c->gq->data, c->q, qb);
    memcpy(c->gk->data, c->k, kb);
    ggml_threadpool_resume(c->gpool);
    ggml_graph_compute(c->graph, &c->gplan);
    ggml_threadpool_pause(c->gpool);
    if (posenc_once(c, 0, POSENC_MODE_GGML) != 0) return -1;
    long long differ = 0;
    for (size_t i = 0; i < c->qn; i++) differ += memcmp(c->q + i * c->elem, (char *)c->gq->data + i * c->elem, c->elem) != 0;
    for (size_t i = 0; i < c->kn; i++) differ += memcmp(c->k + i * c->elem, (char *)c->gk->data + i * c->elem, c->elem) != 0;
    memcpy(c->q, c->copy, qb);
    memcpy(c->k, c->copy + qb, kb);
    if (posenc_once(c, 0, POSENC_MODE_PRECISE) != 0) return -1;
    double w = 0;
    for (size_t i = 0; i < c->qn + c->kn; i++) {
        const char *mine = i < c->qn ? c->q + i * c->elem : c->k + (i - c->qn) * c->elem;
        const char *theirs = i < c->qn ? (char *)c->gq->data + i * c->elem : (char *)c->gk->data + (i - c->qn) * c->elem;
        float a, b;
        if (c->elem == 4) memcpy(&a, mine, 4), memcpy(&b, theirs, 4);
        else {
            uint16_t x, y;
            memcpy(&x, mine, 2), memcpy(&y, theirs, 2);
            a = posenc_f16_to_f32(x), b = posenc_f16_to_f32(y);
        }
        double d = a > b ? (double)a - b : (double)b - a;
        if (d > w) w = d;
    }
    *worst = w;
    memcpy(c->q, c->copy, qb);
    memcpy(c->k, c->copy + qb, kb);
    memcpy(c->gq->data, c->copy, qb);
    memcpy(c->gk->data, c->copy + qb, kb);
    return differ;
#else
    (void)c, (void)worst;
    return -2;
#endif
}

/* ---- the ceilings: STREAM-style passes over the same bytes ---------------- */

/* Every 32-bit word + zero: read + write of the same bytes, bits unchanged for
 * any dtype (a float multiply by 1 would quiet a signalling NaN that two bf16
 * values can form). `zero` comes through a volatile so the add stays. */
static const volatile int32_t rp_zero = 0;

#if defined(__x86_64__)
__attribute__((target("avx2,prfchw"))) static void rmw_avx2(char *p, size_t bytes, int kind) {
    __m256i z = _mm256_set1_epi32(rp_zero);
    size_t i = 0;
    if (kind == RP_RMW_NT) {
        for (; i + 128 <= bytes; i += 128) {
            __m256i a = _mm256_load_si256((const __m256i *)(const void *)(p + i));
            __m256i b = _mm256_load_si256((const __m256i *)(const void *)(p + i + 32));
            __m256i d = _mm256_load_si256((const __m256i *)(const void *)(p + i + 64));
            __m256i e = _mm256_load_si256((const __m256i *)(const void *)(p + i + 96));
            _mm256_stream_si256((__m256i *)(void *)(p + i), _mm256_add_epi32(a, z));
            _mm256_stream_si256((__m256i *)(void *)(p + i + 32), _mm256_add_epi32(b, z));
            _mm256_stream_si256((__m256i *)(void *)(p + i + 64), _mm256_add_epi32(d, z));
            _mm256_stream_si256((__m256i *)(void *)(p + i + 96), _mm256_add_epi32(e, z));
        }
        _mm_sfence();
    } else {
        for (; i + 128 <= bytes; i += 128) {
            if (kind == RP_RMW_PREFETCH) {
                __builtin_prefetch(p + i + 8192, 1, 3);
                __builtin_prefetch(p + i + 8192 + 64, 1, 3);
            }
            __m256i a = _mm256_load_si256((const __m256i *)(const void *)(p + i));
            __m256i b = _mm256_load_si256((const __m256i *)(const void *)(p + i + 32));
            __m256i d = _mm256_load_si256((const __m256i *)(const void *)(p + i + 64));
            __m256i e = _mm256_load_si256((const __m256i *)(const void *)(p + i + 96));
            _mm256_store_si256((__m256i *)(void *)(p + i), _mm256_add_epi32(a, z));
            _mm256_store_si256((__m256i *)(void *)(p + i + 32), _mm256_add_epi32(b, z));
            _mm256_store_si256((__m256i *)(void *)(p + i + 64), _mm256_add_epi32(d, z));
            _mm256_store_si256((__m256i *)(void *)(p + i + 96), _mm256_add_epi32(e, z));
        }
    }
    for (; i + 4 <= bytes; i += 4) { /* tail (chunks are 64-byte multiples but for the last) */
        int32_t v;
        memcpy(&v, p + i, 4);
        v += rp_zero;
        memcpy(p + i, &v, 4);
    }
}

__attribute__((target("avx2"))) static void copy_avx2(char *dst, const char *src, size_t bytes, int nt) {
    size_t i = 0;
    for (; i + 128 <= bytes; i += 128) {
        __m256i a = _mm256_load_si256((const __m256i *)(const void *)(src + i));
        __m256i b = _mm256_load_si256((const __m256i *)(const void *)(src + i + 32));
        __m256i d = _mm256_load_si256((const __m256i *)(const void *)(src + i + 64));
        __m256i e = _mm256_load_si256((const __m256i *)(const void *)(src + i + 96));
        if (nt) {
            _mm256_stream_si256((__m256i *)(void *)(dst + i), a);
            _mm256_stream_si256((__m256i *)(void *)(dst + i + 32), b);
            _mm256_stream_si256((__m256i *)(void *)(dst + i + 64), d);
            _mm256_stream_si256((__m256i *)(void *)(dst + i + 96), e);
        } else {
            _mm256_store_si256((__m256i *)(void *)(dst + i), a);
            _mm256_store_si256((__m256i *)(void *)(dst + i + 32), b);
            _mm256_store_si256((__m256i *)(void *)(dst + i + 64), d);
            _mm256_store_si256((__m256i *)(void *)(dst + i + 96), e);
        }
    }
    if (nt) _mm_sfence();
    memcpy(dst + i, src + i, bytes - i);
}
#endif

/* posenc bench's in-place ceiling before issue 43 (cli/cmd_bench.c scale_in_place),
 * kept to show in the same run why it read below the kernels: the shipped build has
 * no -march, so this is one 16-byte SSE multiply per 4 floats, no prefetch. f32 only
 * (x * 1 keeps every finite f32's bits). */
static void old_scale_in_place(float *x, size_t n) {
    static const volatile float one = 1.0f;
    const float f = one;
    for (size_t i = 0; i < n; i++) x[i] *= f;
}

static void rmw_pass(char *p, size_t bytes, int kind) {
    if (kind == RP_OLD) {
        old_scale_in_place((float *)(void *)p, bytes / 4);
        return;
    }
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx2")) {
        rmw_avx2(p, bytes, kind);
        return;
    }
#endif
    (void)kind;
    for (size_t i = 0; i + 4 <= bytes; i += 4) {
        int32_t v;
        memcpy(&v, p + i, 4);
        v += rp_zero;
        memcpy(p + i, &v, 4);
    }
}

static void copy_pass(char *dst, const char *src, size_t bytes, int nt) {
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx2")) {
        copy_avx2(dst, src, bytes, nt);
        return;
    }
#endif
    (void)nt;
    memcpy(dst, src, bytes);
}

typedef struct {
    rp_case *c;
    int kind, part, parts, calls;
    _Atomic int *go;
    double t0, t1;
} ceil_task;

/* [start, end) of part `part` of `bytes` split in `parts`, 64-byte aligned */
static void split(size_t bytes, int part, int parts, size_t *start, size_t *end) {
    size_t lines = bytes / 64, per = lines / (size_t)parts, extra = lines % (size_t)parts;
    *start = 64 * ((size_t)part * per + ((size_t)part < extra ? (size_t)part : extra));
    *end = *start + 64 * (per + ((size_t)part < extra));
    if (part == parts - 1) *end = bytes;
}

static void *ceil_worker(void *arg) {
    ceil_task *t = arg;
    rp_case *c = t->c;
    size_t qb = c->qn * c->elem, kb = c->kn * c->elem, qs, qe, ks, ke;
    split(qb, t->part, t->parts, &qs, &qe);
    split(kb, t->part, t->parts, &ks, &ke);
    while (!atomic_load(t->go)) sched_yield(); /* thread start-up is not timed */
    t->t0 = bench_now_ms();
    for (int r = 0; r < t->calls; r++) {
        if (t->kind == RP_COPY || t->kind == RP_COPY_NT) {
            copy_pass(c->copy + qs, c->q + qs, qe - qs, t->kind == RP_COPY_NT);
            copy_pass(c->copy + qb + ks, c->k + ks, ke - ks, t->kind == RP_COPY_NT);
        } else {
            rmw_pass(c->q + qs, qe - qs, t->kind);
            rmw_pass(c->k + ks, ke - ks, t->kind);
        }
    }
    t->t1 = bench_now_ms();
    return NULL;
}

/* ms per pass of ceiling `kind` over the case's q and k on its thread count:
 * from the first thread's start to the last one's end (threads started
 * beforehand, behind a barrier). -1 if a thread cannot start. */
RP_API double rp_ceiling(rp_case *c, int kind, int calls) {
    if (kind < 0 || kind >= RP_KINDS || calls < 1) return -1;
    if (kind == RP_OLD && c->dtype != RP_F32) return -2;
    ceil_task tasks[16];
    pthread_t ids[16];
    _Atomic int go = 0;
    int n = c->threads < 1 ? 1 : c->threads > 16 ? 16 : c->threads;
    for (int i = 0; i < n; i++) tasks[i] = (ceil_task){c, kind, i, n, calls, &go, 0, 0};
    int started = 1;
    while (started < n && pthread_create(&ids[started], NULL, ceil_worker, &tasks[started]) == 0) started++;
    atomic_store(&go, 1);
    ceil_worker(&tasks[0]);
    double first = tasks[0].t0, last = tasks[0].t1;
    for (int i = 1; i < started; i++) {
        pthread_join(ids[i], NULL);
        if (tasks[i].t0 < first) first = tasks[i].t0;
        if (tasks[i].t1 > last) last = tasks[i].t1;
    }
    return started < n ? -1 : (last - first) / calls;
}
