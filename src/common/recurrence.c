/* recurrence.c: the anchored (sin, cos) recurrence (recurrence.h). The
 * double-double anchors and the double step run on the kernel path
 * (sincos_dd.h), with the same bits on every path. */
#include "recurrence.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* per worker: anchor (double-double sin and cos: 4 arrays), run_s, run_c */
#define STATE_ARRAYS 6

posenc_status posenc_recurrence_init_(posenc_recurrence_ *rec, const long double *w, size_t pairs,
                                      posenc_kernel_path path, size_t longest_run, posenc_error *err) {
    const size_t P = pairs;
    double *d = malloc(sizeof(double) * 10 * (P ? P : 1)); /* w_hi, w_lo, anchor_step (4), step (4) */
    RETURN_ERROR_IF(!d, err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate the recurrence for %zu pairs", P);
    *rec = (posenc_recurrence_){path, P, d, d, d + P, {d + 2 * P, d + 3 * P, d + 4 * P, d + 5 * P},
                                {d + 6 * P, d + 7 * P, d + 8 * P, d + 9 * P}};
    posenc_split_dd_(w, P, d, d + P);
    for (size_t i = 2 * P; i < 10 * P; i++) d[i] = NAN; /* a step not computed below */
    if (longest_run > POSENC_RECURRENCE_ANCHOR)
        posenc_sincos_dd_(path, P, POSENC_RECURRENCE_ANCHOR, rec->w_hi, rec->w_lo, &rec->anchor_step);
    if (longest_run > 1) posenc_sincos_dd_(path, P, 1.0, rec->w_hi, rec->w_lo, &rec->step);
    return POSENC_OK;
}

void posenc_recurrence_free_(posenc_recurrence_ *rec) {
    free(rec->mem);
    rec->mem = NULL;
}

size_t posenc_recurrence_state_doubles_(size_t pairs) { return STATE_ARRAYS * pairs; }

posenc_recurrence_state_ posenc_recurrence_state_in_(size_t pairs, double *mem) {
    const size_t P = pairs;
    return (posenc_recurrence_state_){{mem, mem + P, mem + 2 * P, mem + 3 * P}, mem + 4 * P, mem + 5 * P};
}

static void run_from_anchor(const posenc_recurrence_ *rec, posenc_recurrence_state_ *state) {
    memcpy(state->run_s, state->anchor.s_hi, rec->pairs * sizeof(double)); /* hi = the dd rounded to double */
    memcpy(state->run_c, state->anchor.c_hi, rec->pairs * sizeof(double));
}

void posenc_recurrence_start_(const posenc_recurrence_ *rec, posenc_recurrence_state_ *state, double position) {
    posenc_sincos_dd_(rec->path, rec->pairs, position, rec->w_hi, rec->w_lo, &state->anchor);
    run_from_anchor(rec, state);
}

void posenc_recurrence_start_alone_(const posenc_recurrence_ *rec, posenc_recurrence_state_ *state,
                                    double position) {
    posenc_sincos_run_(rec->path, rec->pairs, position, rec->w_hi, rec->w_lo, state->run_s, state->run_c);
}

void posenc_recurrence_next_anchor_(const posenc_recurrence_ *rec, posenc_recurrence_state_ *state) {
    posenc_rotate_dd_(rec->path, rec->pairs, &state->anchor, &rec->anchor_step);
    run_from_anchor(rec, state);
}

void posenc_recurrence_use_anchor_(const posenc_recurrence_ *rec, posenc_recurrence_state_ *state) {
    run_from_anchor(rec, state);
}

void posenc_recurrence_next_(const posenc_recurrence_ *rec, posenc_recurrence_state_ *state) {
    posenc_rotate_run_path_(rec->path, rec->pairs, rec->step.s_hi, rec->step.c_hi, state->run_s, state->run_c);
}

void posenc_recurrence_next_dd_(const posenc_recurrence_ *rec, posenc_recurrence_state_ *state) {
    posenc_rotate_dd_(rec->path, rec->pairs, &state->anchor, &rec->step);
}
