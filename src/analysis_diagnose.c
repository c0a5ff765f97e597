/* analysis_diagnose.c: the model-level half of `posenc diff`: fit a sinusoid
 * (or, given the unrotated input, a RoPE rotation) to each side, name the
 * preset each side matches, and turn every parameter that differs into a
 * finding. Each fit is itself checked against its table (pair norms, and
 * angles within the noise of the detected angle formation), so when both
 * fits hold, the differing parameters account for the whole difference. */
#include "analysis_diff_internal.h"

#include <stdio.h>
#include <string.h>

static void base_text(const posenc_sinusoid_fit *f, char *out, size_t size) {
    if (f->base_is_round) snprintf(out, size, "%g", f->base);
    else if (isfinite(f->base)) snprintf(out, size, "~%.6g (estimated)", f->base);
    else snprintf(out, size, "unknown");
}

void posenc_describe_fit_(const posenc_sinusoid_fit *f, int rope, char *out, size_t size) {
    out[0] = '\0';
    if (!f->found) return;
    char base[64], extra[160] = "";
    base_text(f, base, sizeof base);
    size_t n = 0;
    if (f->scale != 1 && isfinite(f->scale))
        n += (size_t)snprintf(extra + n, sizeof extra - n, ", frequencies x %g", f->scale);
    if (f->formation != POSENC_ANGLE_EXACT)
        n += (size_t)snprintf(extra + n, sizeof extra - n, ", angles %s", posenc_angle_formation_name(f->formation));
    if (f->geometric_error >= 1e-2)
        snprintf(extra + n, sizeof extra - n, ", frequencies not geometric (per-frequency scaling?)");
    const char *conv = f->freqs == POSENC_FREQS_T2T ? "t2t" : "vaswani";
    if (rope) {
        snprintf(out, size, "%s rotation (%s), %s frequencies base %s, positions from %.6g, %d pairs%s%s",
                 f->layout == POSENC_LAYOUT_HALF ? "half-split" : "interleaved",
                 f->layout == POSENC_LAYOUT_HALF ? "HF Llama/NeoX rotate_half, ggml NEOX"
                                                 : "GPT-J, RoFormer, Meta LLaMA, ggml NORMAL",
                 conv, base, f->start, f->pairs, f->amplitude != 1 && fabs(f->amplitude - 1) > 1e-3 ? ", scaled" : "",
                 extra);
        return;
    }
    const char *order = f->cos_first ? "cos-first" : "sin-first";
    /* a fitted start can be any double (fuzz_analysis: -4e32); name a padding
     * index only for integers a table can actually start at */
    bool start_ok = f->start_is_integer && isfinite(f->start) && fabs(f->start) < 9.0e15;
    long long start = start_ok ? (long long)nearbyint(f->start) : 0;
    if (f->freqs == POSENC_FREQS_T2T && f->layout == POSENC_LAYOUT_HALF && !f->cos_first && start_ok) {
        if (start >= 1)
            snprintf(out, size, "the fairseq convention with padding_idx=%lld (t2t frequencies base %s, [sin|cos], "
                     "first token at position %lld)%s", start - 1, base, start, extra);
        else if (f->zero_rows && f->first_zero_row >= 0)
            snprintf(out, size, "the fairseq get_embedding table with padding_idx=%lld (row %lld zeroed; t2t "
                     "frequencies base %s, [sin|cos]; real tokens start at row %lld)%s",
                     (long long)f->first_zero_row, (long long)f->first_zero_row, base,
                     (long long)f->first_zero_row + 1, extra);
        else
            snprintf(out, size, "the tensor2tensor / fairseq table (t2t frequencies base %s, [sin|cos], from "
                     "position 0)%s", base, extra);
        return;
    }
    if (f->freqs == POSENC_FREQS_VASWANI && f->layout == POSENC_LAYOUT_INTERLEAVED && !f->cos_first)
        snprintf(out, size, "the PyTorch tutorial / keras convention (vaswani frequencies base %s, interleaved "
                 "sin/cos, from position %.6g)%s", base, f->start, extra);
    else if (f->freqs == POSENC_FREQS_VASWANI && f->layout == POSENC_LAYOUT_HALF && !f->cos_first)
        snprintf(out, size, "a [sin|cos] table with vaswani frequencies base %s (HF Marian/RoFormer, GPT-J "
                 "create_sinusoidal_positions), from position %.6g%s", base, f->start, extra);
    else
        snprintf(out, size, "a %s %s table (%s frequencies base %s%s), from position %.6g%s",
                 f->layout == POSENC_LAYOUT_HALF ? "concatenated" : "interleaved", order, conv, base,
                 f->cos_first ? "; cos-first as diffusers flip_sin_to_cos" : "", f->start, extra);
}

static const char *layout_words(posenc_layout l, int rope) {
    if (rope)
        return l == POSENC_LAYOUT_HALF ? "half-split pairs (k, k+K) (HF Llama/NeoX, ggml NEOX)"
                                       : "interleaved pairs (2k, 2k+1) (GPT-J, ggml NORMAL)";
    return l == POSENC_LAYOUT_HALF ? "concatenated [sin|cos] (t2t, fairseq)" : "interleaved sin/cos (tutorial, keras)";
}

static void compare_fits(posenc_diff_report *r, int rope) {
    const posenc_sinusoid_fit *a = &r->fit_a, *b = &r->fit_b;
    if (a->layout != b->layout && !posenc_diff_has_(r, POSENC_FINDING_LAYOUT))
        posenc_diff_add_(r, POSENC_FINDING_LAYOUT, (double)b->layout, "layout: A uses %s, B uses %s",
                         layout_words(a->layout, rope), layout_words(b->layout, rope));
    if (!rope && a->cos_first != b->cos_first && !posenc_diff_has_(r, POSENC_FINDING_SIN_COS_SWAPPED))
        posenc_diff_add_(r, POSENC_FINDING_SIN_COS_SWAPPED, b->cos_first,
                         "sin/cos swapped: A puts %s first in each pair, B puts %s first", a->cos_first ? "cos" : "sin",
                         b->cos_first ? "cos" : "sin");
    if (a->base_is_round && b->base_is_round) {
        if (a->freqs != b->freqs)
            posenc_diff_add_(r, POSENC_FINDING_FREQ_CONVENTION, (double)b->freqs,
                             "frequency convention: A is %s, B is %s (d=%d: last frequency %.3g vs %.3g)",
                             a->freqs == POSENC_FREQS_T2T ? "t2t base^(-k/(K-1)) (tensor2tensor, fairseq)"
                                                          : "vaswani base^(-2k/d) (paper, tutorial, RoPE)",
                             b->freqs == POSENC_FREQS_T2T ? "t2t base^(-k/(K-1)) (tensor2tensor, fairseq)"
                                                          : "vaswani base^(-2k/d) (paper, tutorial, RoPE)",
                             2 * a->pairs, a->frequencies[a->pairs - 1], b->frequencies[b->pairs - 1]);
        if (fabs(a->base / b->base - 1) > 1e-6)
            posenc_diff_add_(r, POSENC_FINDING_BASE, b->base, "different base: A uses %g, B uses %g", a->base, b->base);
    } else if (a->pairs == b->pairs && a->frequencies && b->frequencies) {
        double worst = 0;
        for (int32_t k = 0; k < a->pairs; k++) {
            double rel = fabs(b->frequencies[k] / a->frequencies[k] - 1);
            if (!(rel <= worst)) worst = rel;
        }
        if (worst > 1e-3) {
            char ba[64], bb[64];
            base_text(a, ba, sizeof ba);
            base_text(b, bb, sizeof bb);
            posenc_diff_add_(r, POSENC_FINDING_BASE, b->base,
                             "frequencies differ by up to %.3g relative: A base %s, B base %s%s", worst, ba, bb,
                             b->geometric_error >= 1e-2 || a->geometric_error >= 1e-2
                                 ? " (not geometric: per-frequency scaling such as YaRN or llama3)" : "");
        }
    }
    if (isfinite(a->scale) && isfinite(b->scale) && fabs(b->scale / a->scale - 1) > 1e-3)
        posenc_diff_add_(r, POSENC_FINDING_FREQ_SCALE, b->scale / a->scale,
                         "frequencies scaled: B = A x %.6g (linear position interpolation by %.6g)", b->scale / a->scale,
                         a->scale / b->scale);
    if (a->start_is_integer && b->start_is_integer && nearbyint(a->start) != nearbyint(b->start) &&
        !posenc_diff_has_(r, POSENC_FINDING_OFFSET)) {
        double k = nearbyint(b->start) - nearbyint(a->start);
        posenc_diff_add_(r, POSENC_FINDING_OFFSET, k, "position offset by %+.0f: A's first row is position %.0f, B's "
                         "is %.0f%s", k, nearbyint(a->start), nearbyint(b->start),
                         !rope && k > 0 ? " (padding_idx+1 is the fairseq/RoBERTa start)" : "");
    }
    if (fabs(b->amplitude / a->amplitude - 1) > 1e-3)
        posenc_diff_add_(r, POSENC_FINDING_AMPLITUDE, b->amplitude / a->amplitude,
                         "amplitude: B = A x %.6g (%s)", b->amplitude / a->amplitude,
                         rope ? "attention scaling folded into the rotation, e.g. YaRN mscale" : "a scaled table");
    if (a->zero_rows != b->zero_rows && !posenc_diff_has_(r, POSENC_FINDING_PADDING_ROWS))
        posenc_diff_add_(r, POSENC_FINDING_PADDING_ROWS, (double)(a->zero_rows ? a->first_zero_row : b->first_zero_row),
                         "padding rows: A has %zu all-zero row(s), B has %zu (a zeroed padding_idx row)", a->zero_rows,
                         b->zero_rows);
    /* RoPE: float32 application keeps pair norms within ~2^-22; much more means the
     * rotation itself (or its output) ran in a lower precision, not the angles */
    double na = a->pair_norm_error, nb = b->pair_norm_error, floor32 = 64 * 0x1p-24;
    if (rope && fmax(na, nb) > floor32 && fmax(na, nb) > 4 * fmin(na, nb))
        posenc_diff_add_(r, POSENC_FINDING_APPLY_PRECISION, nb,
                         "rotation precision: pair norms of %s are off by up to %.3g (the other: %.3g); the angles agree "
                         "within that noise, so the rotation was applied or stored in lower precision (bf16 ~ 4e-3, "
                         "f16 ~ 5e-4), not formed differently", nb > na ? "B" : "A", fmax(na, nb), fmin(na, nb));
    /* a shared formation is not a difference, unless nothing else is left to explain it */
    bool only_precision = r->finding_count == 0;
    /* within a few noise floors "exact" and "float32" cannot be told apart */
    bool measurable = fmax(a->angle_error, b->angle_error) > 4 * fmax(a->noise, b->noise);
    if ((a->formation != b->formation && measurable) || (only_precision && a->formation != POSENC_ANGLE_EXACT)) {
        posenc_diff_add_(r, POSENC_FINDING_ANGLE_PRECISION, (double)b->formation,
                         "angle formation: A %s (max angle error %.3g rad), B %s (max angle error %.3g rad)%s",
                         posenc_angle_formation_name(a->formation), a->angle_error,
                         posenc_angle_formation_name(b->formation), b->angle_error,
                         only_precision && a->formation <= POSENC_ANGLE_F32 && b->formation <= POSENC_ANGLE_F32
                             ? "; the difference is float32 angle rounding growing with position, not a convention bug"
                             : "");
    }
}

posenc_status posenc_diagnose_models_(const posenc_array *a, const posenc_array *b, const posenc_f64_table_ *ta,
                                      const posenc_f64_table_ *tb, const posenc_diff_options *o,
                                      posenc_diff_report *r, posenc_error *err) {
    int rope = o->input != NULL;
    if (rope) {
        FORWARD_IF_ERROR(posenc_fit_rope_angles(o->input, a, &r->fit_a, err));
        FORWARD_IF_ERROR(posenc_fit_rope_angles(o->input, b, &r->fit_b, err));
    } else {
        FORWARD_IF_ERROR(posenc_fit_table_f64_(ta->data, ta->rows, ta->cols, posenc_angle_noise_for_dtype_(a->dtype),
                                               &r->fit_a, err));
        FORWARD_IF_ERROR(posenc_fit_table_f64_(tb->data, tb->rows, tb->cols, posenc_angle_noise_for_dtype_(b->dtype),
                                               &r->fit_b, err));
    }
    posenc_describe_fit_(&r->fit_a, rope, r->preset_a, sizeof r->preset_a);
    posenc_describe_fit_(&r->fit_b, rope, r->preset_b, sizeof r->preset_b);
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
    size_t n = 0, cap = sizeof r->summary;
    r->summary[0] = '\0';
    if (r->preset_a[0] && n < cap) n += (size_t)snprintf(r->summary + n, cap - n, "A is %s. ", r->preset_a);
    if (r->preset_b[0] && n < cap) n += (size_t)snprintf(r->summary + n, cap - n, "B is %s. ", r->preset_b);
    if (n < cap) {
        if (r->finding_count == 0)
            n += (size_t)snprintf(r->summary + n, cap - n, "No hypothesis explains the difference.");
        else
            n += (size_t)snprintf(r->summary + n, cap - n, "%s: ", r->explained ? "Explained by" : "Candidates (not a full explanation)");
    }
    for (int i = 0; i < r->finding_count && n < cap; i++)
        n += (size_t)snprintf(r->summary + n, cap - n, "%s%s", i ? ", " : "", r->findings[i].key);
    if (r->finding_count && n < cap) snprintf(r->summary + n, cap - n, ".");
}
