/* bench_decode.c: `posenc bench --only decode` -- the RoPE of one decoding
 * step, per call: a few tokens' q rotated in place, where the per-call set-up
 * (checking params, the long double frequencies, the first cos/sin) is most of
 * the cost. Unplanned (posenc_rope_apply_exec) and planned
 * (posenc_rope_plan_apply, the set-up made once) side by side, one thread, and
 * HF's step in PyTorch from bench/peers.py: LlamaRotaryEmbedding.forward (cos/sin
 * from the position ids) + apply_rotary_pos_emb on q, timed the same way. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { HEADS = 32, DIM = 128, MAX_TOKENS = 32, MAX_REPS = 64 };

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e6 * (double)t.tv_sec + 1e-3 * (double)t.tv_nsec;
}

static int compare_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct {
    const char *name;
    posenc_dtype dtype;
    size_t tokens;       /* 1: one sequence; more: that many sequences, one token each */
    const char *peer;    /* peers.py workload */
} decode_case;

/* The median over reps of the mean time of one call (us), each rep calling
 * `calls` times; false (message printed) when a call fails. */
static bool time_calls(const decode_case *c, const posenc_rope_params *p, const posenc_rope_plan *plan, void *q,
                       const int64_t *ids, int reps, int calls, double *us) {
    posenc_rope_view v = posenc_rope_view_contiguous(c->tokens, HEADS, DIM);
    posenc_exec exec;
    posenc_exec_default(&exec);
    exec.threads = 1;
    posenc_error err = {0};
    double t[MAX_REPS];
    for (int r = -1; r < reps; r++) { /* r == -1: warm-up */
        double t0 = now_us();
        for (int k = 0; k < calls; k++) {
            /* each call rotates q back and forth, so its values stay the input's */
            posenc_status st =
                plan ? posenc_rope_plan_apply(plan, POSENC_LAYOUT_HALF, &v, ids, k & 1, c->dtype, q,
                                              c->tokens * HEADS * DIM, &exec, &err)
                     : posenc_rope_apply_exec(p, 0, POSENC_LAYOUT_HALF, &v, ids, k & 1, c->dtype, q,
                                              c->tokens * HEADS * DIM, &exec, &err);
            if (st != POSENC_OK) {
                cli_fail("bench", EXIT_RUNTIME, NULL, "decode %s: %s", c->name, err.message);
                return false;
            }
        }
        if (r >= 0) t[r] = (now_us() - t0) / calls;
    }
    qsort(t, (size_t)reps, sizeof t[0], compare_double);
    *us = t[reps / 2];
    return true;
}

int cli_bench_decode(int reps, bool peers, const char *python, const char *script) {
    static const decode_case cases[] = {
        {"1 token, q[1x32x128] f32, position 4095", POSENC_DTYPE_F32, 1, "rope_decode_torch_hf_f32_1"},
        {"1 token, q[1x32x128] bf16, position 4095", POSENC_DTYPE_BF16, 1, "rope_decode_torch_hf_bf16_1"},
        {"32 sequences x 1 token, q[32x32x128] f32, scattered positions", POSENC_DTYPE_F32, 32,
         "rope_decode_torch_hf_f32_32"},
    };
    if (reps > MAX_REPS) reps = MAX_REPS;
    posenc_rope_params p;
    posenc_rope_params_default(&p, DIM);
    posenc_error err = {0};
    posenc_rope_plan *plan = NULL;
    if (posenc_rope_plan_create(&p, 0, &plan, &err) != POSENC_OK) return cli_fail_status("bench", &err);
    float *q = calloc((size_t)MAX_TOKENS * HEADS * DIM, sizeof *q);
    if (!q) {
        posenc_rope_plan_free(plan);
        return cli_fail("bench", EXIT_RUNTIME, NULL, "cannot allocate q");
    }
    /* the sequences of a continuous batch sit at unrelated positions: no run of consecutive ids */
    int64_t ids[MAX_TOKENS];
    for (int t = 0; t < MAX_TOKENS; t++) ids[t] = t == 0 ? 4095 : (int64_t)((t * 7919) % 8000) + 17;
    printf("RoPE of one decoding step, base 10000, head_dim 128, 32 heads, half-split layout, one thread:\n"
           "us per call (median of %d runs of the mean over many calls). planned = posenc_rope_plan_apply\n"
           "(the checked params, frequencies and recurrence steps made once); unplanned = posenc_rope_apply_exec.\n"
           "peer = HF's step in PyTorch (LlamaRotaryEmbedding.forward for the position ids, then\n"
           "apply_rotary_pos_emb on q), per call, in the same interpreter loop.\n\n"
           "| decode step | unplanned us | planned us | planned speedup | peer | peer us | posenc planned speedup |\n"
           "|---|---|---|---|---|---|---|\n",
           reps);
    int rc = EXIT_OK;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0] && rc == EXIT_OK; i++) {
        const decode_case *c = &cases[i];
        for (size_t k = 0; k < (size_t)MAX_TOKENS * HEADS * DIM; k++) { /* values in [-1, 1] */
            float v = (float)(k % 17) * 0.125f - 1.0f;
            if (c->dtype == POSENC_DTYPE_F32) q[k] = v;
            else ((uint16_t *)q)[k] = posenc_f32_to_bf16(v);
        }
        double unplanned, planned;
        if (!time_calls(c, &p, NULL, q, ids, reps, 2000, &unplanned) ||
            !time_calls(c, &p, plan, q, ids, reps, 2000, &planned)) {
            rc = EXIT_RUNTIME;
            break;
        }
        printf("| %s | %.2f | %.2f | %.1fx |", c->name, unplanned, planned, unplanned / planned);
        char why[256] = "";
        double peer_ms = peers ? cli_bench_run_peer(python, script, c->peer, 1, reps, why, sizeof why) : -1;
        if (!peers) printf(" | | |\n");
        else if (peer_ms < 0) printf(" %s | skipped: %s | |\n", c->peer, why);
        else printf(" %s | %.1f | %.1fx |\n", c->peer, 1e3 * peer_ms, 1e3 * peer_ms / planned);
        fflush(stdout);
    }
    printf("\n");
    free(q);
    posenc_rope_plan_free(plan);
    return rc;
}
