/* ggml_rope.c: posenc's in-place RoPE against ggml's CPU rope in one process
 * (issue 29). Same q [4096 tokens x 32 heads x 128] f32, positions 0..4095,
 * base 10000; ggml's NORMAL (interleaved pairs) and NEOX (half-split) against
 * posenc's interleaved and half-split layouts, 1 and 2 threads, each on a
 * thread pool made once (posenc_threadpool, ggml_threadpool), repetitions
 * alternating between the two so the machine's drift hits both alike.
 * Before timing it checks that posenc's POSENC_MODE_GGML output equals ggml's
 * bit for bit, and prints how far posenc's precise mode is from ggml's
 * (ggml's float32 theta recurrence drifts; posenc's precise mode is within
 * 1 f32 ULP of the exact angle's cos/sin).
 *
 * Built only when CMake is given a ggml checkout: -DPOSENC_GGML_DIR=/path/to/ggml
 * (tested with ggml d99724f2); `cmake --build build --target bench_ggml` runs it
 * (and says how to enable it when no checkout was given). */
#define _GNU_SOURCE
#include "posenc.h"
#include "bench_timing.h"

#include "ggml-cpu.h"
#include "ggml.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TOKENS = 4096, HEADS = 32, DIM = 128 };

typedef struct {
    struct ggml_context *ctx;
    struct ggml_cgraph *graph;
    struct ggml_tensor *q;
    struct ggml_cplan plan;
    struct ggml_threadpool *pool;
} ggml_case;

/* q [DIM, HEADS, TOKENS] (ggml's ne order: the same memory as posenc's
 * [TOKENS][HEADS][DIM]), rotated in place by positions 0..TOKENS-1. */
static int ggml_case_make(ggml_case *g, int mode, int threads) {
    size_t bytes = (size_t)TOKENS * HEADS * DIM * sizeof(float) + TOKENS * sizeof(int32_t) + (16u << 20);
    struct ggml_init_params params = {bytes, NULL, false};
    g->ctx = ggml_init(params);
    if (!g->ctx) return -1;
    g->q = ggml_new_tensor_3d(g->ctx, GGML_TYPE_F32, DIM, HEADS, TOKENS);
    struct ggml_tensor *pos = ggml_new_tensor_1d(g->ctx, GGML_TYPE_I32, TOKENS);
    for (int t = 0; t < TOKENS; t++) ((int32_t *)pos->data)[t] = t;
    struct ggml_tensor *out =
        ggml_rope_ext_inplace(g->ctx, g->q, pos, NULL, DIM, mode, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f);
    g->graph = ggml_new_graph(g->ctx);
    ggml_build_forward_expand(g->graph, out);
    struct ggml_threadpool_params tp = ggml_threadpool_params_default(threads);
    g->pool = ggml_threadpool_new(&tp);
    g->plan = ggml_graph_plan(g->graph, threads, g->pool);
    g->plan.work_data = g->plan.work_size ? malloc(g->plan.work_size) : NULL;
    return g->pool && (!g->plan.work_size || g->plan.work_data) ? 0 : -1;
}

static void ggml_case_free(ggml_case *g) {
    free(g->plan.work_data);
    ggml_threadpool_free(g->pool);
    ggml_free(g->ctx);
}

static posenc_status posenc_run(posenc_layout layout, posenc_mode mode, float *x, const posenc_exec *exec,
                                posenc_error *err) {
    posenc_rope_params p;
    posenc_rope_params_default(&p, DIM);
    p.mode = mode;
    posenc_rope_view v = posenc_rope_view_contiguous(TOKENS, HEADS, DIM);
    return posenc_rope_apply_exec(&p, 0, layout, &v, NULL, 0, POSENC_DTYPE_F32, x, (size_t)TOKENS * HEADS * DIM,
                                  exec, err);
}

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 15;
    if (reps < 3 || reps > 1000) reps = 15;
    const size_t n = (size_t)TOKENS * HEADS * DIM;
    float *x0 = malloc(n * sizeof(float)), *mine = malloc(n * sizeof(float));
    if (!x0 || !mine) return 1;
    uint32_t rng = 1;
    for (size_t i = 0; i < n; i++) {
        rng = rng * 1664525u + 1013904223u;
        x0[i] = (float)((rng >> 8) & 0xffff) / 16384.0f - 2.0f;
    }
    printf("posenc vs ggml (%s), q[%d tokens x %d heads x %d] f32 in place, positions 0..%d, base 10000;\n"
           "median (min) ms of %d alternating repetitions; ratio = ggml ms / posenc ms (> 1: posenc faster)\n\n",
           "d99724f2 or the checkout given", TOKENS, HEADS, DIM, TOKENS - 1, reps);
    printf("| layout | threads | ggml == posenc --mode ggml | precise vs ggml max abs | ggml ms | posenc ms | ratio |\n"
           "|---|---|---|---|---|---|---|\n");
    for (int li = 0; li < 2; li++)
        for (int threads = 1; threads <= 2; threads++) {
            posenc_layout layout = li ? POSENC_LAYOUT_HALF : POSENC_LAYOUT_INTERLEAVED;
            int mode = li ? GGML_ROPE_TYPE_NEOX : GGML_ROPE_TYPE_NORMAL;
            ggml_case g;
            posenc_exec exec;
            posenc_exec_default(&exec);
            exec.threads = threads;
            posenc_error err = {0};
            if (ggml_case_make(&g, mode, threads) != 0 ||
                posenc_threadpool_create(threads, &exec.pool, &err) != POSENC_OK) {
                fprintf(stderr, "bench_ggml: cannot set up %d threads: %s\n", threads, err.message);
                return 1;
            }
            float *theirs = g.q->data;
            /* bits: one application each from the same input */
            memcpy(theirs, x0, n * sizeof(float));
            memcpy(mine, x0, n * sizeof(float));
            ggml_graph_compute(g.graph, &g.plan);
            if (posenc_run(layout, POSENC_MODE_GGML, mine, &exec, &err) != POSENC_OK) {
                fprintf(stderr, "bench_ggml: %s\n", err.message);
                return 1;
            }
            size_t differ = 0;
            for (size_t i = 0; i < n; i++) differ += memcmp(&mine[i], &theirs[i], sizeof(float)) != 0;
            memcpy(mine, x0, n * sizeof(float));
            posenc_run(layout, POSENC_MODE_PRECISE, mine, &exec, &err);
            double worst = 0;
            for (size_t i = 0; i < n; i++) worst = fmax(worst, fabs((double)mine[i] - (double)theirs[i]));
            /* time: alternate, same data (a rotation keeps it finite) */
            double tg[1000], tp[1000];
            for (int i = -2; i < reps; i++) {
                /* each side's pool sleeps while the other runs: ggml's threads poll after a graph
                 * (and would take the cores posenc's threads need) unless paused */
                ggml_threadpool_resume(g.pool);
                double t0 = bench_now_ms();
                ggml_graph_compute(g.graph, &g.plan);
                double t1 = bench_now_ms();
                ggml_threadpool_pause(g.pool);
                double t2 = bench_now_ms();
                posenc_run(layout, POSENC_MODE_PRECISE, mine, &exec, &err);
                double t3 = bench_now_ms();
                if (i >= 0) tg[i] = t1 - t0, tp[i] = t3 - t2;
            }
            ggml_threadpool_resume(g.pool);
            qsort(tg, (size_t)reps, sizeof tg[0], bench_compare_double);
            qsort(tp, (size_t)reps, sizeof tp[0], bench_compare_double);
            char bits[64];
            if (differ) snprintf(bits, sizeof bits, "%zu of %zu values differ", differ, n);
            else snprintf(bits, sizeof bits, "bit for bit");
            printf("| %s (%s) | %d | %s | %.3g | %.2f (%.2f) | %.2f (%.2f) | %.2f |\n",
                   li ? "half-split" : "interleaved", li ? "NEOX" : "NORMAL", threads, bits, worst, tg[reps / 2],
                   tg[0], tp[reps / 2], tp[0], tg[reps / 2] / tp[reps / 2]);
            fflush(stdout);
            posenc_threadpool_free(exec.pool);
            ggml_case_free(&g);
        }
    free(x0);
    free(mine);
    return 0;
}
