/* fuzz_rope_params.h: the RoPE parameter draw shared by fuzz_rope.c and
 * fuzz_rope_exec.c (every knob of posenc_rope_params from the fuzz input's
 * tail, LongRoPE factor lists and positions from its head). */
#ifndef POSENC_FUZZ_ROPE_PARAMS_H
#define POSENC_FUZZ_ROPE_PARAMS_H

#include "fuzz_common.h"
#include "fuzz_data.h"

/* payload bytes as n doubles (zeros past the end) */
static inline double *payload_doubles(fuzz_data *f, size_t n) {
    double *v = calloc(n ? n : 1, sizeof *v);
    if (!v) return NULL;
    size_t avail = f->size / sizeof *v;
    memcpy(v, f->data, (n < avail ? n : avail) * sizeof *v);
    return v;
}

static inline void make_params(fuzz_data *f, posenc_rope_params *p, double *factors, size_t factors_cap) {
    posenc_rope_params_default(p, (int32_t)fuzz_int_edgy(f, -2, 260));
    if (fuzz_bool(f)) p->rotary_dim = (int32_t)fuzz_int_edgy(f, -2, 262);
    if (fuzz_bool(f)) p->partial_rotary_factor = fuzz_double(f, 1.0);
    if (fuzz_bool(f)) p->base = fuzz_double(f, 1e6);
    p->scaling = (posenc_rope_scaling)fuzz_range_i64(f, -1, 7);
    if (fuzz_bool(f)) p->factor = fuzz_double(f, 64.0);
    if (fuzz_bool(f)) p->original_max_position = fuzz_int_edgy(f, -1, 1 << 17);
    if (fuzz_bool(f)) p->max_position = fuzz_int_edgy(f, -1, 1 << 18);
    if (fuzz_bool(f)) {
        p->beta_fast = fuzz_double(f, 64.0);
        p->beta_slow = fuzz_double(f, 64.0);
    }
    if (fuzz_bool(f)) {
        p->mscale = fuzz_double(f, 4.0);
        p->mscale_all_dim = fuzz_double(f, 4.0);
    }
    if (fuzz_bool(f)) p->attention_factor = fuzz_double(f, 4.0);
    p->truncate = (int)fuzz_range_i64(f, -1, 2);
    if (fuzz_bool(f)) {
        p->low_freq_factor = fuzz_double(f, 8.0);
        p->high_freq_factor = fuzz_double(f, 8.0);
    }
    unsigned lists = (unsigned)fuzz_range_u64(f, 0, 3);
    size_t count = (size_t)fuzz_range_u64(f, 0, factors_cap / 2);
    p->factors_count = count;
    p->short_factors = lists & 1 ? factors : NULL;
    p->long_factors = lists & 2 ? factors + factors_cap / 2 : NULL;
    p->longrope_select = (posenc_rope_longrope_select)fuzz_range_i64(f, -1, 3);
    p->mode = (posenc_mode)fuzz_range_i64(f, -1, 2);
}

/* The draw both targets start with, in this order: the factor lists (from the
 * payload), the parameters, seq_len. free(*factors) when done. */
static inline void draw_rope_call(fuzz_data *f, posenc_rope_params *p, double **factors, int64_t *seq_len) {
    enum { FACTORS_CAP = 2 * 140 };
    *factors = payload_doubles(f, FACTORS_CAP);
    make_params(f, p, *factors, FACTORS_CAP);
    *seq_len = fuzz_int_edgy(f, -2, 1 << 18);
}

#endif
