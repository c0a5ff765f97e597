/* analysis_diagnose.c: the model-level half of `posenc diff`: fit a sinusoid
 * (or, given the unrotated input, a RoPE rotation) to each side, name the
 * preset each side matches, and turn every parameter that differs into a
 * finding (codes and numbers: the tool words them). Each fit is itself checked against its table (pair norms, and
 * angles within the noise of the detected angle formation), so when both
 * fits hold, the differing parameters account for the whole difference. */
#include "analysis_diff_internal.h"

#include <string.h>

posenc_preset posenc_sinusoid_fit_preset(const posenc_sinusoid_fit *f, int rope) {
    if (!f || !f->found) return POSENC_PRESET_NONE;
    if (rope) return POSENC_PRESET_ROPE;
    /* a fitted start can be any double (fuzz_analysis: -4e32); name a padding
     * index only for integers a table can actually start at */
    bool start_ok = f->start_is_integer && isfinite(f->start) && fabs(f->start) < 9.0e15;
    if (f->freqs == POSENC_FREQS_T2T && f->layout == POSENC_LAYOUT_HALF && !f->cos_first && start_ok) {
        if (nearbyint(f->start) >= 1) return POSENC_PRESET_FAIRSEQ;
        if (f->zero_rows && f->first_zero_row >= 0) return POSENC_PRESET_FAIRSEQ_EMBEDDING;
        return POSENC_PRESET_T2T;
    }
    if (f->freqs == POSENC_FREQS_VASWANI && !f->cos_first)
        return f->layout == POSENC_LAYOUT_INTERLEAVED ? POSENC_PRESET_TUTORIAL : POSENC_PRESET_VASWANI_HALF;
    return POSENC_PRESET_OTHER;
}

/* Add a finding from the fits: a and b are A's and B's side of the parameter. */
static posenc_finding *add_fitted(posenc_diff_report *r, posenc_finding_kind kind, double value, double a, double b) {
    posenc_finding *f = posenc_diff_add_(r, kind, value);
    if (f) f->from_fit = 1, f->a = a, f->b = b;
    return f;
}

static void compare_fits(posenc_diff_report *r, int rope) {
    const posenc_sinusoid_fit *a = &r->fit_a, *b = &r->fit_b;
    if (a->layout != b->layout && !posenc_diff_has_(r, POSENC_FINDING_LAYOUT))
        add_fitted(r, POSENC_FINDING_LAYOUT, (double)b->layout, (double)a->layout, (double)b->layout);
    if (!rope && a->cos_first != b->cos_first && !posenc_diff_has_(r, POSENC_FINDING_SIN_COS_SWAPPED))
        add_fitted(r, POSENC_FINDING_SIN_COS_SWAPPED, b->cos_first, a->cos_first, b->cos_first);
    if (a->base_is_round && b->base_is_round) {
        if (a->freqs != b->freqs)
            add_fitted(r, POSENC_FINDING_FREQ_CONVENTION, (double)b->freqs, (double)a->freqs, (double)b->freqs);
        if (fabs(a->base / b->base - 1) > 1e-6) add_fitted(r, POSENC_FINDING_BASE, b->base, a->base, b->base);
    } else if (a->pairs == b->pairs && a->frequencies && b->frequencies) {
        double worst = 0;
        for (int32_t k = 0; k < a->pairs; k++) {
            double rel = fabs(b->frequencies[k] / a->frequencies[k] - 1);
            if (!(rel <= worst)) worst = rel;
        }
        posenc_finding *f = worst > 1e-3 ? add_fitted(r, POSENC_FINDING_BASE, b->base, a->base, b->base) : NULL;
        if (f) f->evidence = worst;
    }
    if (isfinite(a->scale) && isfinite(b->scale) && fabs(b->scale / a->scale - 1) > 1e-3)
        add_fitted(r, POSENC_FINDING_FREQ_SCALE, b->scale / a->scale, a->scale, b->scale);
    if (a->start_is_integer && b->start_is_integer && nearbyint(a->start) != nearbyint(b->start) &&
        !posenc_diff_has_(r, POSENC_FINDING_OFFSET))
        add_fitted(r, POSENC_FINDING_OFFSET, nearbyint(b->start) - nearbyint(a->start), nearbyint(a->start),
                   nearbyint(b->start));
    if (fabs(b->amplitude / a->amplitude - 1) > 1e-3)
        add_fitted(r, POSENC_FINDING_AMPLITUDE, b->amplitude / a->amplitude, a->amplitude, b->amplitude);
    if (a->zero_rows != b->zero_rows && !posenc_diff_has_(r, POSENC_FINDING_PADDING_ROWS))
        add_fitted(r, POSENC_FINDING_PADDING_ROWS, (double)(a->zero_rows ? a->first_zero_row : b->first_zero_row),
                   (double)a->zero_rows, (double)b->zero_rows);
    /* RoPE: float32 application keeps pair norms within ~2^-22; much more means the
     * rotation itself (or its output) ran in a lower precision, not the angles */
    double na = a->pair_norm_error, nb = b->pair_norm_error, floor32 = 64 * 0x1p-24;
    if (rope && fmax(na, nb) > floor32 && fmax(na, nb) > 4 * fmin(na, nb)) {
        posenc_finding *f = add_fitted(r, POSENC_FINDING_APPLY_PRECISION, nb, na, nb);
        if (f) f->side = nb > na, f->evidence = fmax(na, nb);
    }
    /* a shared formation is not a difference, unless nothing else is left to explain it */
    bool only_precision = r->finding_count == 0;
    /* within a few noise floors "exact" and "float32" cannot be told apart */
    bool measurable = fmax(a->angle_error, b->angle_error) > 4 * fmax(a->noise, b->noise);
    if ((a->formation != b->formation && measurable) || (only_precision && a->formation != POSENC_ANGLE_EXACT)) {
        posenc_finding *f = add_fitted(r, POSENC_FINDING_ANGLE_PRECISION, (double)b->formation, (double)a->formation,
                                       (double)b->formation);
        if (f) f->evidence = fmax(a->angle_error, b->angle_error);
    }
}

posenc_status posenc_diagnose_models_(const posenc_array *a, const posenc_array *b, const posenc_f64_table_ *ta,
                                      const posenc_f64_table_ *tb, const posenc_diff_options *o,
                                      posenc_diff_report *r, posenc_error *err) {
    int rope = o->input != NULL;
    if (rope) {
        FORWARD_IF_ERROR(posenc_sinusoid_fit_rope_angles(o->input, a, &r->fit_a, err));
        FORWARD_IF_ERROR(posenc_sinusoid_fit_rope_angles(o->input, b, &r->fit_b, err));
    } else {
        FORWARD_IF_ERROR(posenc_fit_table_f64_(ta, posenc_angle_noise_for_dtype_(a->dtype),
                                               &r->fit_a, err));
        FORWARD_IF_ERROR(posenc_fit_table_f64_(tb, posenc_angle_noise_for_dtype_(b->dtype),
                                               &r->fit_b, err));
    }
    r->preset_a = posenc_sinusoid_fit_preset(&r->fit_a, rope);
    r->preset_b = posenc_sinusoid_fit_preset(&r->fit_b, rope);
    if (r->fit_a.found && r->fit_b.found && !posenc_diff_has_(r, POSENC_FINDING_AGREE)) compare_fits(r, rope);
    return posenc_ok_(err);
}

void posenc_diff_summarize_(posenc_diff_report *r) {
    static const posenc_finding_kind exact_tests[] = {POSENC_FINDING_AGREE, POSENC_FINDING_TRANSPOSED,
                                                      POSENC_FINDING_PREFIX, POSENC_FINDING_PADDING_ROWS,
                                                      POSENC_FINDING_PERMUTATION};
    r->explained = 0;
    for (size_t i = 0; i < sizeof exact_tests / sizeof exact_tests[0]; i++)
        if (posenc_diff_has_(r, exact_tests[i])) r->explained = 1;
    /* a row-shift offset is an exact test too; a fitted-start offset is not by itself */
    bool fits_hold = r->fit_a.found && r->fit_b.found && r->fit_a.formation != POSENC_ANGLE_UNKNOWN &&
                     r->fit_b.formation != POSENC_ANGLE_UNKNOWN;
    if (r->finding_count > 0 && (fits_hold || posenc_diff_has_(r, POSENC_FINDING_OFFSET))) r->explained = 1;
}
