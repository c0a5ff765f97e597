/* analysis_words.c: the sentences of `posenc diff` and `posenc signal`. The
 * library returns codes and numbers (posenc_finding, posenc_preset,
 * posenc_signal_verdict); the tool words them here, into growable buffers, so
 * no sentence is ever cut. docs/analysis.md lists what each one says. */
#include "cli.h"

#include <math.h>
#include <stdio.h>

static void word_base(cli_buffer *b, const posenc_sinusoid_fit *f) {
    if (f->base_is_round) cli_buffer_printf(b, "%g", f->base);
    else if (isfinite(f->base)) cli_buffer_printf(b, "~%.6g (estimated)", f->base);
    else cli_buffer_puts(b, "unknown");
}

/* ", frequencies x 0.25, angles float32, ..." for what sets a fit apart. */
static void word_fit_extras(cli_buffer *b, const posenc_sinusoid_fit *f) {
    if (f->scale != 1 && isfinite(f->scale)) cli_buffer_printf(b, ", frequencies x %g", f->scale);
    if (f->formation != POSENC_ANGLE_EXACT)
        cli_buffer_printf(b, ", angles %s", posenc_angle_formation_name(f->formation));
    if (f->geometric_error >= 1e-2) cli_buffer_puts(b, ", frequencies not geometric (per-frequency scaling?)");
}

void cli_word_preset(cli_buffer *b, const posenc_sinusoid_fit *f, posenc_preset preset) {
    const char *conv = cli_freqs_name(f->freqs);
    long long start = f->start_is_integer && isfinite(f->start) && fabs(f->start) < 9.0e15 ? (long long)nearbyint(f->start) : 0;
    switch (preset) {
    case POSENC_PRESET_NONE: return;
    case POSENC_PRESET_ROPE:
        cli_buffer_printf(b, "%s rotation (%s), %s frequencies base ",
                          f->layout == POSENC_LAYOUT_HALF ? "half-split" : "interleaved",
                          f->layout == POSENC_LAYOUT_HALF ? "HF Llama/NeoX rotate_half, ggml NEOX"
                                                          : "GPT-J, RoFormer, Meta LLaMA, ggml NORMAL",
                          conv);
        word_base(b, f);
        cli_buffer_printf(b, ", positions from %.6g, %d pairs%s", f->start, f->pairs,
                          f->amplitude != 1 && fabs(f->amplitude - 1) > 1e-3 ? ", scaled" : "");
        break;
    case POSENC_PRESET_FAIRSEQ:
        cli_buffer_printf(b, "the fairseq convention with padding_idx=%lld (t2t frequencies base ", start - 1);
        word_base(b, f);
        cli_buffer_printf(b, ", [sin|cos], first token at position %lld)", start);
        break;
    case POSENC_PRESET_FAIRSEQ_EMBEDDING:
        cli_buffer_printf(b, "the fairseq get_embedding table with padding_idx=%lld (row %lld zeroed; t2t frequencies base ",
                          (long long)f->first_zero_row, (long long)f->first_zero_row);
        word_base(b, f);
        cli_buffer_printf(b, ", [sin|cos]; real tokens start at row %lld)", (long long)f->first_zero_row + 1);
        break;
    case POSENC_PRESET_T2T:
        cli_buffer_puts(b, "the tensor2tensor / fairseq table (t2t frequencies base ");
        word_base(b, f);
        cli_buffer_puts(b, ", [sin|cos], from position 0)");
        break;
    case POSENC_PRESET_TUTORIAL:
        cli_buffer_puts(b, "the PyTorch tutorial / keras convention (vaswani frequencies base ");
        word_base(b, f);
        cli_buffer_printf(b, ", interleaved sin/cos, from position %.6g)", f->start);
        break;
    case POSENC_PRESET_VASWANI_HALF:
        cli_buffer_puts(b, "a [sin|cos] table with vaswani frequencies base ");
        word_base(b, f);
        cli_buffer_printf(b, " (HF Marian/RoFormer, GPT-J create_sinusoidal_positions), from position %.6g", f->start);
        break;
    case POSENC_PRESET_OTHER:
        cli_buffer_printf(b, "a %s %s table (%s frequencies base ", f->layout == POSENC_LAYOUT_HALF ? "concatenated" : "interleaved",
                          f->cos_first ? "cos-first" : "sin-first", conv);
        word_base(b, f);
        cli_buffer_printf(b, "%s), from position %.6g", f->cos_first ? "; cos-first as diffusers flip_sin_to_cos" : "",
                          f->start);
        break;
    }
    word_fit_extras(b, f);
}

static const char *layout_words(posenc_layout l, int rope) {
    if (rope)
        return l == POSENC_LAYOUT_HALF ? "half-split pairs (k, k+K) (HF Llama/NeoX, ggml NEOX)"
                                       : "interleaved pairs (2k, 2k+1) (GPT-J, ggml NORMAL)";
    return l == POSENC_LAYOUT_HALF ? "concatenated [sin|cos] (t2t, fairseq)" : "interleaved sin/cos (tutorial, keras)";
}

static const char *permutation_words(posenc_permutation p) {
    switch (p) {
    case POSENC_PERMUTATION_TO_HALF: return "interleaved -> half-split (the RoPE Q/K weight conversion, HF convert_llama_weights)";
    case POSENC_PERMUTATION_TO_INTERLEAVED: return "half-split -> interleaved (llama.cpp's Q/K row permutation)";
    case POSENC_PERMUTATION_SWAP_PAIRS: return "swap within each interleaved pair (sin/cos swapped)";
    case POSENC_PERMUTATION_SWAP_HALVES: return "swap of the two halves (sin/cos swapped, [cos|sin])";
    default: return "a general channel permutation";
    }
}

static const char *freqs_words(double freqs) {
    return (int)freqs == POSENC_FREQS_T2T ? "t2t base^(-k/(K-1)) (tensor2tensor, fairseq)"
                                          : "vaswani base^(-2k/d) (paper, tutorial, RoPE)";
}

void cli_word_finding(cli_buffer *b, const posenc_diff_report *r, const posenc_finding *f) {
    const posenc_sinusoid_fit *fa = &r->fit_a, *fb = &r->fit_b;
    const char *side = f->side ? "B" : "A", *other = f->side ? "A" : "B";
    switch (f->kind) {
    case POSENC_FINDING_AGREE:
        cli_buffer_printf(b, "A and B agree within %.3g (max |A-B| %.3g)", f->evidence, f->value);
        break;
    case POSENC_FINDING_TRANSPOSED:
        cli_buffer_printf(b, "B is A transposed ([%zu x %zu] vs [%zu x %zu]; max |A^T - B| %.3g): positions and channels "
                          "are swapped", r->rows_a, r->cols_a, r->rows_b, r->cols_b, f->evidence);
        break;
    case POSENC_FINDING_PREFIX:
        cli_buffer_printf(b, "%s (%zu rows) is a prefix of %s (%zu rows): the first %zu positions agree (max diff %.3g)",
                          side, f->count, other, f->side ? r->rows_a : r->rows_b, f->count, f->evidence);
        break;
    case POSENC_FINDING_OFFSET:
        if (f->from_fit)
            cli_buffer_printf(b, "position offset by %+.0f: A's first row is position %.0f, B's is %.0f%s", f->value, f->a,
                              f->b, !r->rope && f->value > 0 ? " (padding_idx+1 is the fairseq/RoBERTa start)" : "");
        else
            cli_buffer_printf(b, "position offset by %.0f: B row r equals A row r%+.0f (max diff %.3g)%s", f->value, f->value,
                              f->evidence, f->value > 0 ? "; an offset of padding_idx+1 is the fairseq/RoBERTa convention" : "");
        break;
    case POSENC_FINDING_PADDING_ROWS:
        if (f->from_fit)
            cli_buffer_printf(b, "padding rows: A has %.0f all-zero row(s), B has %.0f (a zeroed padding_idx row)", f->a, f->b);
        else
            cli_buffer_printf(b, "%s has %zu all-zero row(s) (first: row %.0f) where %s has values; every other row agrees "
                              "(max diff %.3g): a zeroed padding row (fairseq padding_idx=%.0f; real tokens then start at "
                              "position %.0f)", side, f->count, f->value, other, f->evidence, f->value, f->value + 1);
        break;
    case POSENC_FINDING_LAYOUT:
        if (f->from_fit)
            cli_buffer_printf(b, "layout: A uses %s, B uses %s", layout_words((posenc_layout)f->a, r->rope),
                              layout_words((posenc_layout)f->b, r->rope));
        else
            cli_buffer_printf(b, "layout: B is A with its channels reordered %s",
                              f->permutation == POSENC_PERMUTATION_TO_HALF
                                  ? "from interleaved sin/cos to concatenated [sin|cos]"
                                  : "from concatenated [sin|cos] to interleaved sin/cos");
        break;
    case POSENC_FINDING_SIN_COS_SWAPPED:
        if (f->from_fit)
            cli_buffer_printf(b, "sin/cos swapped: A puts %s first in each pair, B puts %s first", f->a ? "cos" : "sin",
                              f->b ? "cos" : "sin");
        else
            cli_buffer_printf(b, "sin/cos swapped: B is A with %s", permutation_words(f->permutation));
        break;
    case POSENC_FINDING_PERMUTATION:
        cli_buffer_printf(b, "B equals A up to a per-head channel permutation (%zu head(s) of %zu channels): %s", f->count,
                          f->width, permutation_words(f->permutation));
        break;
    case POSENC_FINDING_FREQ_CONVENTION:
        cli_buffer_printf(b, "frequency convention: A is %s, B is %s", freqs_words(f->a), freqs_words(f->b));
        if (fa->pairs > 0 && fb->pairs > 0 && fa->frequencies && fb->frequencies)
            cli_buffer_printf(b, " (d=%d: last frequency %.3g vs %.3g)", 2 * fa->pairs, fa->frequencies[fa->pairs - 1],
                              fb->frequencies[fb->pairs - 1]);
        break;
    case POSENC_FINDING_BASE:
        if (fa->base_is_round && fb->base_is_round) {
            cli_buffer_printf(b, "different base: A uses %g, B uses %g", f->a, f->b);
        } else {
            cli_buffer_printf(b, "frequencies differ by up to %.3g relative: A base ", f->evidence);
            word_base(b, fa);
            cli_buffer_puts(b, ", B base ");
            word_base(b, fb);
            if (fa->geometric_error >= 1e-2 || fb->geometric_error >= 1e-2)
                cli_buffer_puts(b, " (not geometric: per-frequency scaling such as YaRN or llama3)");
        }
        break;
    case POSENC_FINDING_FREQ_SCALE:
        cli_buffer_printf(b, "frequencies scaled: B = A x %.6g (linear position interpolation by %.6g)", f->value,
                          1 / f->value);
        break;
    case POSENC_FINDING_AMPLITUDE:
        cli_buffer_printf(b, "amplitude: B = A x %.6g (%s)", f->value,
                          r->rope ? "attention scaling folded into the rotation, e.g. YaRN mscale" : "a scaled table");
        break;
    case POSENC_FINDING_APPLY_PRECISION:
        cli_buffer_printf(b, "rotation precision: pair norms of %s are off by up to %.3g (the other: %.3g); the angles agree "
                          "within that noise, so the rotation was applied or stored in lower precision (bf16 ~ 4e-3, "
                          "f16 ~ 5e-4), not formed differently", side, f->side ? f->b : f->a, f->side ? f->a : f->b);
        break;
    case POSENC_FINDING_ANGLE_PRECISION: {
        posenc_angle_formation a = (posenc_angle_formation)f->a, bb = (posenc_angle_formation)f->b;
        cli_buffer_printf(b, "angle formation: A %s (max angle error %.3g rad), B %s (max angle error %.3g rad)",
                          posenc_angle_formation_name(a), fa->angle_error, posenc_angle_formation_name(bb), fb->angle_error);
        /* the only finding: nothing but rounding separates the two */
        if (r->finding_count == 1 && a <= POSENC_ANGLE_F32 && bb <= POSENC_ANGLE_F32)
            cli_buffer_puts(b, "; the difference is float32 angle rounding growing with position, not a convention bug");
        break;
    }
    }
}

void cli_word_diff_summary(cli_buffer *b, const posenc_diff_report *r) {
    if (r->preset_a != POSENC_PRESET_NONE) {
        cli_buffer_puts(b, "A is ");
        cli_word_preset(b, &r->fit_a, r->preset_a);
        cli_buffer_puts(b, ". ");
    }
    if (r->preset_b != POSENC_PRESET_NONE) {
        cli_buffer_puts(b, "B is ");
        cli_word_preset(b, &r->fit_b, r->preset_b);
        cli_buffer_puts(b, ". ");
    }
    if (r->finding_count == 0) {
        cli_buffer_puts(b, "No hypothesis explains the difference.");
        return;
    }
    cli_buffer_puts(b, r->explained ? "Explained by: " : "Candidates (not a full explanation): ");
    for (int i = 0; i < r->finding_count; i++) cli_buffer_printf(b, "%s%s", i ? ", " : "", r->findings[i].key);
    cli_buffer_puts(b, ".");
}

void cli_word_signal(cli_buffer *b, const posenc_signal_report *r) {
    switch (r->verdict) {
    case POSENC_SIGNAL_NONE:
        cli_buffer_printf(b, "no position signal: inputs = %.6g x tokens (relative residual %.2g); RoPE/ALiBi/NoPE models "
                          "add nothing at the input", r->token_scale, r->relative_residual);
        return;
    case POSENC_SIGNAL_CONSTANT:
        cli_buffer_printf(b, "a constant vector (rms %.3g) was added to every position: no position dependence", r->signal_rms);
        break;
    case POSENC_SIGNAL_SINUSOIDAL:
        cli_buffer_printf(b, "a sinusoidal position signal of amplitude %.4g was added: ", r->fit.amplitude);
        cli_word_preset(b, &r->fit, r->preset);
        break;
    case POSENC_SIGNAL_LEARNED:
        cli_buffer_printf(b, "a learned-looking position signal (rms %.4g, no sin/cos pair structure) was added", r->signal_rms);
        break;
    case POSENC_SIGNAL_PER_SEQUENCE:
        cli_buffer_printf(b, "a position-dependent signal (rms %.4g) that differs between the %zu sequences (spread %.3g "
                          "of its rms; padded or shifted positions?) was added", r->signal_rms, r->sequences,
                          r->sequence_spread);
        break;
    }
    cli_buffer_printf(b, "; tokens scaled by %.6g%s", r->token_scale,
                      r->scale_is_sqrt_dim ? " = sqrt(d), as in the tutorial" : "");
    if (r->sequences > 1) cli_buffer_printf(b, " (%zu sequences of %zu positions)", r->sequences, r->positions);
}

const char *cli_words(const cli_buffer *b) { return b->failed ? "(out of memory)" : b->data ? b->data : ""; }

void cli_words_clear(cli_buffer *b) {
    b->len = 0;
    if (b->data) b->data[0] = '\0';
}
