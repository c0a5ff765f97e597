/* rope_fast.h: the RoPE driver (rope_fast.c): threads, the cos/sin of each
 * token (anchored recurrence or rope_cos_sin.c) and the kernel picked once per
 * call (rope_kernels.h). Called by the entry points (rope.c, rope_multi.c).
 * Not installed. */
#ifndef POSENC_ROPE_FAST_H
#define POSENC_ROPE_FAST_H

#include "rope_internal.h"
#include "../common/recurrence.h"

typedef enum { ROPE_DATA_F32, ROPE_DATA_F16, ROPE_DATA_BF16 } rope_data_kind_;

/* Rotate view (already validated) in place on the path/threads of exec (NULL =
 * defaults and environment). positions NULL = 0..tokens-1. ready: the
 * recurrence of a posenc_rope_plan (rope_recurrence_for_plan_), or NULL to
 * make what the call needs (precise mode). */
posenc_status rope_apply_fast_(const rope_plan_ *plan, const posenc_recurrence_ *ready, posenc_layout layout,
                               const posenc_rope_view *view, const int64_t *positions, int inverse, bool unit,
                               rope_data_kind_ kind, void *x, const posenc_exec *exec, posenc_error *err);
/* The recurrence a precise-mode posenc_rope_plan keeps: every step, for runs
 * of any length (made on the default path; the steps have the same bits on
 * every path). Free with posenc_recurrence_free_. */
posenc_status rope_recurrence_for_plan_(const rope_plan_ *plan, posenc_recurrence_ *rec, posenc_error *err);

/* Multi-axis RoPE (rope_multi.c validates): plan->inv holds each pair's
 * frequency, axis[k] its axis, positions is [axes][view->tokens]; per pair
 * cos/sin of +-position * inv times attention (1/attention inverse; TORCH_COMPAT
 * SECTIONS / INTERLEAVED: HF's blocks, rope_torch_mrope_cos_sin_), then the
 * same vector kernels and threads as rope_apply_fast_ (default exec). */
posenc_status rope_apply_mrope_fast_(const rope_plan_ *plan, const int32_t *axis,
                                     const posenc_mrope_sections *sections, posenc_layout layout,
                                     const posenc_rope_view *view, const int64_t *positions, int inverse, float *x,
                                     posenc_error *err);

/* cos/sin tables ([count][pairs] each, times scale) for a range of positions in
 * precise mode by the anchored recurrence, threaded; applies when
 * rope_table_fast_applies_ says so (range positions whose |p| < 2^53 and
 * |p w| < 2^40). f32 (wide = false) tables hold exactly the cos/sin that
 * rope_apply_fast_ uses for the same positions. */
bool rope_table_fast_applies_(const rope_plan_ *plan, const posenc_positions *positions);
posenc_status rope_table_fast_(const rope_plan_ *plan, const posenc_positions *positions, double scale, bool wide,
                               void *cos_out, void *sin_out, posenc_error *err);

#endif
