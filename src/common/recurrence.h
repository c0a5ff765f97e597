/* recurrence.h: the anchored (sin, cos) recurrence behind the fast sinusoid
 * tables (sinusoidal.c) and RoPE cos/sin (rope_fast.c), written once.
 *
 * For consecutive positions p0, p0 + 1, ... and frequencies w_k: a run starts
 * from the double-double (sin, cos)(p0 w_k) (sincos_dd.h, ~1e-25 off); every
 * POSENC_RECURRENCE_ANCHOR positions that double-double anchor is rotated by
 * ANCHOR * w_k (~1e-31 per step); positions in between come from a rotation in
 * double by w_k started at the anchor rounded to double:
 *   s' = s*cos(w) + c*sin(w),  c' = c*cos(w) - s*sin(w)   (no FMA: same bits everywhere)
 * which drifts < ANCHOR * 2.3e-16 before the next anchor. Callers cut their
 * rows in blocks (their thread grain) and start each block afresh, so values
 * never depend on the thread count. */
#ifndef POSENC_RECURRENCE_H
#define POSENC_RECURRENCE_H

#include "sincos_dd.h"

/* Positions between double-double anchors. */
#define POSENC_RECURRENCE_ANCHOR 64

/* What every worker shares: the frequencies and the two rotations. */
typedef struct {
    posenc_kernel_path path;
    size_t pairs;
    double *mem;                     /* owns the arrays below */
    const double *w_hi, *w_lo;       /* w_k as double-doubles */
    posenc_dd_sincos_ anchor_step;   /* (sin, cos)(ANCHOR * w_k) */
    posenc_dd_sincos_ step;          /* (sin, cos)(w_k); the double steps use its hi parts */
} posenc_recurrence_;

/* One worker's running values, in memory the caller provides
 * (posenc_recurrence_state_doubles_ doubles per worker). */
typedef struct {
    posenc_dd_sincos_ anchor; /* the double-double (sin, cos) of the last anchor */
    double *run_s, *run_c;    /* the double (sin, cos) of the current position */
} posenc_recurrence_state_;

/* Frequencies w[0..pairs) on a kernel path, for runs of at most longest_run
 * positions (SIZE_MAX: any); free with posenc_recurrence_free_. The steps a
 * run that short never takes are not computed (each is a double-double sincos
 * of every pair, ~1.2 us for 64: a one-token call needs neither) and hold NaN. */
posenc_status posenc_recurrence_init_(posenc_recurrence_ *rec, const long double *w, size_t pairs,
                                      posenc_kernel_path path, size_t longest_run, posenc_error *err);
void posenc_recurrence_free_(posenc_recurrence_ *rec);

size_t posenc_recurrence_state_doubles_(size_t pairs);
posenc_recurrence_state_ posenc_recurrence_state_in_(size_t pairs, double *mem);

/* Start a run at `position` (an integer, |p| < 2^53, |p w| < 2^40): anchor and
 * run = (sin, cos)(position * w). */
void posenc_recurrence_start_(const posenc_recurrence_ *rec, posenc_recurrence_state_ *state, double position);
/* A run of one position: run = (sin, cos)(position * w) in double
 * (posenc_sincos_run_, within POSENC_RUN_ERROR), the anchor left unset: no
 * next or next_anchor may follow before the next start. */
void posenc_recurrence_start_alone_(const posenc_recurrence_ *rec, posenc_recurrence_state_ *state,
                                    double position);
/* The next anchor, ANCHOR positions after the last one; run = anchor. */
void posenc_recurrence_next_anchor_(const posenc_recurrence_ *rec, posenc_recurrence_state_ *state);
/* The next position in double: the run rotated by one step. */
void posenc_recurrence_next_(const posenc_recurrence_ *rec, posenc_recurrence_state_ *state);
/* The next position in double-double: the anchor rotated by one step (~1e-25
 * per step; for f64 tables, which need more than the double run). */
void posenc_recurrence_next_dd_(const posenc_recurrence_ *rec, posenc_recurrence_state_ *state);


/* run = the anchor rounded to double: after a kernel computed the anchor itself
 * (posenc_sinusoid_rows_side_avx512_), in place of start or next_anchor. */
void posenc_recurrence_use_anchor_(const posenc_recurrence_ *rec, posenc_recurrence_state_ *state);

/* A side job for the AVX-512 sinusoid kernel: the anchor the rows after these
 * need, computed while it writes them. by != NULL: anchor = anchor rotated by
 * `by` (next_anchor's bits); by == NULL: anchor = (sin, cos)(position * w)
 * (start's bits). */
typedef struct {
    const posenc_dd_sincos_ *anchor;
    const posenc_dd_sincos_ *by;
    const double *w_hi, *w_lo;
    double position;
} posenc_sinusoid_side_;
/* posenc_sinusoid_rows_avx512_ plus the side job, for the streaming f32 route
 * (pairs % 32 == 0) and whole chunks (rows >= 64); false (nothing done) for
 * other tables. */
bool posenc_sinusoid_rows_side_avx512_(const posenc_sinusoid_rows_ *plan, double *run_s, double *run_c, void *out,
                                       size_t rows, const posenc_sinusoid_side_ *side);
#endif
