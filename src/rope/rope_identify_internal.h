/* rope_identify_internal.h: the pieces "which RoPE is this?" shares between its files
 * (posenc.h 4b). Layered one way: rope_identify.c (the entry point: the steps in order)
 * -> rope_identify_profile.c (step 3: the scheme from the profile) and rope_identify_score.c
 * (candidates regenerated and scored in ULPs, the gate, the public residual functions)
 * -> rope_identify_fit.c (per-pair slope, phase and magnitude, the
 * offset, the profile's base, LongRoPE's switch row) and rope_identify_values.c (the values,
 * their grid, the layout tests). rope_identify_compare.c (against a config) uses only the
 * public functions. Not installed. */
#ifndef POSENC_ROPE_IDENTIFY_INTERNAL_H
#define POSENC_ROPE_IDENTIFY_INTERNAL_H

#include "rope_internal.h"

#define TWO_PI 6.283185307179586
#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* ---- the values and their grid (rope_identify_values.c) ---- */
typedef struct {
    size_t rows, width;
    double *v; /* [rows][width] */
} grid2d;

/* Drop the last p columns in place. */
void rope_id_drop_tail_(grid2d *g, size_t p);
/* The narrowest grid (f32 / bf16 / f16) every value lies on. */
posenc_dtype rope_id_find_grid_(posenc_dtype dtype, const double *v, size_t n);
/* The absolute rounding a value may carry and still be the same RoPE (the gate's grid part). */
double rope_id_grid_slack_(posenc_dtype grid);
/* The residual unit: the grid's step for values in [0.5, 1). */
double rope_id_grid_unit_(posenc_dtype grid);
/* Column k equals column k + W/2 at every row (HF's emb = cat(freqs, freqs)). */
bool rope_id_halves_equal_(const grid2d *g);
/* a as finite doubles [rows, width] (leading size-1 dims dropped); errors name `what`. */
posenc_status rope_id_load_2d_(const posenc_array *a, const char *what, grid2d *g, posenc_error *err);
/* Columns 2k and 2k + 1 equal at every row, some column changing (GPT-J repeat_interleave). */
bool rope_id_neighbours_equal_(const grid2d *g);
/* c^2 + s^2 of every pair (interleaved or cat) within tol of the first row's. */
bool rope_id_norm_constant_(const grid2d *g, bool interleaved, double tol);
/* f rounded to the grid. */
float rope_id_on_grid_(posenc_dtype grid, float f);
/* Trailing columns holding cos 1 (and sin 0 when s is given) at every row. */
size_t rope_id_passthrough_tail_(const grid2d *c, const grid2d *s);

/* ---- fits (rope_identify_fit.c) ---- */
typedef struct {
    int32_t pairs, r;
    const double *w;
    const bool *ok;
    const double *sig; /* expected relative error of each w_k */
} profile_in;

/* The row where every pair's phase slope changes at once (LongRoPE short -> long), or 0. */
size_t rope_id_find_switch_(const double *pc, const double *ps, size_t T, int32_t K, const double *w, const double *phi,
                            double *phase, double *vote);
/* Base and global scale from the leading pairs that stay on one line. */
void rope_id_fit_base_(const profile_in *p, double *base, double *w0);
/* The integer offset that best explains each reliable pair's phase; the misfit. */
double rope_id_fit_offset_(const double *w, const double *phi, const bool *ok, int32_t pairs, double shift,
                           int64_t *out);
/* Least-squares line over rows [a, b) of y: slope and value at row 0. */
void rope_id_fit_segment_(const double *y, size_t a, size_t b, double *slope, double *at0);
/* One pair from cos and sin: slope, phase (unwrapped atan2, fitted line), magnitude. */
void rope_id_pair_from_both_(const double *c, const double *s, size_t n, double *phase_buf, double *w, double *phi,
                             double *mag);
/* One pair from one function A cos(w t + phi): w, phi, A. */
void rope_id_pair_from_one_(const double *f, size_t n, double *w, double *phi, double *mag);
/* A power of two (or multiple of 1024) in [lo, hi], else fallback. */
double rope_id_pow2_in_(double lo, double hi, double fallback);
/* x snapped to a round number within rel, else x. */
double rope_id_snap_round_(double x, double rel);
/* Unwrapped atan2 phase of one pair. */
void rope_id_unwrapped_phase_(const double *c, const double *s, size_t n, double *out);
/* x - 2 pi n into (-pi, pi]. */
double rope_id_wrap_pi_(double x);

/* ---- the scheme from the profile (rope_identify_profile.c) ---- */
/* Step 3: the scaling and its parameters into *params (base snapped; *base_io the base the
 * factors are measured against, moved to a common base for per-pair factors), and out's
 * pair_factor (and long_pair_factor), ramp, YaRN / Llama 3 edges, switch_position, ambiguous
 * bits and profile_residual. w, ok, rho: each pair's measured slope, reliability and expected
 * relative error; wl: the slopes after a LongRoPE switch at row t_switch (0: none); first,
 * last: the first and last reliable pair. */
void rope_id_profile_scheme_(posenc_rope_identity *out, posenc_rope_params *params, double *base_io, const double *w,
                             const bool *ok, const double *rho, const double *wl, int32_t K, bool two, size_t t_switch,
                             int32_t first, int32_t last);

/* ---- candidates and their ULPs (rope_identify_score.c) ---- */
typedef struct {
    const double *cos_v, *sin_v; /* [T][K] per pair (either may be NULL) */
    size_t rows;
    int32_t pairs;
    int64_t offset;
    posenc_dtype grid;
    const int64_t *ids; /* positions of the rows (NULL: offset, offset + 1, ...) */
    int torch_copies;   /* the table torch's cos/sin ran over (TORCH_COMPAT): 2 = HF's emb
                           [T, R]; 1 = vLLM's freqs [T, R/2] (its blocks differ when R/2 is
                           not a multiple of torch's vector width) */
    const double *still; /* measured w per pair (NULL: none): pairs measured at exactly 0 never
                            turn (a position stream held at 0) and are left out of the gate */
} target;

typedef struct { /* values beyond gate_bound: count, and the worst one (in bounds) */
    size_t over;
    size_t worst_row;
    int32_t worst_pair;
    double worst_ratio;
} gate_result;

/* The round candidate near p (factor, context, scheme, NTK base) that reproduces the most values. */
posenc_rope_params rope_id_refine_(const target *tg, posenc_rope_params p, const double *pair_factor, int32_t K,
                                   double raw_base, float *cbuf, float *sbuf, double *ntk_base0, double *ntk_factor);
/* Max ULP and count of differing values of params in `mode` against tg; false if refused. */
bool rope_id_score_(const target *tg, posenc_rope_params params, posenc_mode mode, float *cbuf, float *sbuf,
                    int64_t *max_ulp, size_t *differ);
/* rope_id_score_, and each pair's max ULP (pair_ulp, raised) and the gate (both may be NULL). */
bool rope_id_score_pairs_(const target *tg, posenc_rope_params params, posenc_mode mode, float *cbuf, float *sbuf,
                          int64_t *max_ulp, size_t *differ, int64_t *pair_ulp, gate_result *gate);

#endif
