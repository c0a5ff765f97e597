/* profile.c: the lab step's per-phase timer (posenc lab bench --profile). Its own file: the model's passes
 * (model.c) and the training loop (train.c) both record into it, and neither calls the other for it. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "lab_internal.h"

#include <string.h>
#include <time.h>

static const char *const phase_names[LAB_PH_COUNT] = {
    "fwd encode (tokens + positions)", "fwd ln1", "fwd qkv matmul", "fwd rope", "fwd attention", "fwd proj matmul + residual",
    "fwd ln2", "fwd fc matmul", "fwd gelu", "fwd fcproj matmul + residual", "fwd ln_f", "fwd head matmul",
    "fwd softmax + xent", "bwd softmax + xent", "bwd head matmul", "bwd ln_f", "bwd gelu recompute",
    "bwd fcproj matmul", "bwd gelu", "bwd fc matmul", "bwd ln2", "bwd proj matmul", "bwd attention", "bwd rope",
    "bwd qkv matmul", "bwd ln1", "bwd encode", "opt grad norm", "opt adamw"};

lab_prof_mark lab_prof_now(void) {
    struct timespec c, w;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c); /* every thread of the pool, spinning included */
    clock_gettime(CLOCK_MONOTONIC, &w);
    return (lab_prof_mark){(double)c.tv_sec + 1e-9 * (double)c.tv_nsec, (double)w.tv_sec + 1e-9 * (double)w.tv_nsec};
}

void lab_prof_add(lab_profile *p, int phase, lab_prof_mark since) {
    lab_prof_mark t = lab_prof_now();
    p->cpu[phase] += t.cpu - since.cpu;
    p->wall[phase] += t.wall - since.wall;
    p->calls[phase]++;
}

void lab_model_profile(lab_model *m, int on) {
    memset(&m->prof, 0, sizeof m->prof);
    m->prof.on = on ? 1 : 0;
}

int lab_profile_phase(const lab_model *m, int phase, const char **name, double *cpu_s, double *wall_s, int64_t *calls) {
    if (phase < 0 || phase >= LAB_PH_COUNT) return 0;
    if (name) *name = phase_names[phase];
    if (cpu_s) *cpu_s = m->prof.cpu[phase];
    if (wall_s) *wall_s = m->prof.wall[phase];
    if (calls) *calls = m->prof.calls[phase];
    return 1;
}
