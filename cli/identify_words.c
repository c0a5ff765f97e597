/* identify_words.c: the sentences of `posenc rope identify --config`. The
 * library compares (posenc_rope_identity_compare: kinds and numbers); the tool
 * words each departure here, one sentence per departure. The Python package
 * words the same kinds the same way (python/posenc/identify.py, _departure_words;
 * python/tests/test_identify_same.py holds the two to each other). */
#include "cli.h"

#include <math.h>
#include <stdio.h>

const char *cli_identify_arith_words(posenc_rope_arith a) {
    return a == POSENC_ARITH_HF_F32 ? "HF's float32 arithmetic"
           : a == POSENC_ARITH_GGML_F32 ? "ggml's float32 arithmetic"
                                         : "exact arithmetic";
}

/* How the cache's fit names an arithmetic ("exact (correctly rounded) arithmetic", ...). */
static const char *fit_arith_words(posenc_rope_arith a) {
    return a == POSENC_ARITH_HF_F32 ? "HF transformers' float32 arithmetic"
           : a == POSENC_ARITH_GGML_F32 ? "ggml's float32 arithmetic (theta *= theta_scale per pair)"
                                         : "exact (correctly rounded) arithmetic";
}

static const char *grid_name(posenc_dtype g) {
    return g == POSENC_DTYPE_BF16 ? "bf16" : g == POSENC_DTYPE_F16 ? "f16" : "f32";
}

static void scheme_text(cli_buffer *b, const posenc_rope_params *p) {
    switch (p->scaling) {
    case POSENC_ROPE_LINEAR: cli_buffer_printf(b, "linear interpolation (factor %g)", p->factor); break;
    case POSENC_ROPE_YARN:
        cli_buffer_printf(b, "YaRN (factor %g, original context %lld)", p->factor, (long long)p->original_max_position);
        break;
    case POSENC_ROPE_LLAMA3:
        cli_buffer_printf(b, "llama3 bands (factor %g, original context %lld, low/high %g/%g)", p->factor,
                          (long long)p->original_max_position, p->low_freq_factor, p->high_freq_factor);
        break;
    case POSENC_ROPE_NONE: cli_buffer_puts(b, "no scaling"); break;
    default: cli_buffer_printf(b, "%s (factor %g)", posenc_rope_scaling_name(p->scaling), p->factor); break;
    }
}

static void word_magnitude(cli_buffer *b, const posenc_rope_departure *d, const posenc_rope_params *cfg) {
    cli_buffer_printf(b, "magnitude %.6g where the config's %s gives %.6g", d->got, posenc_rope_scaling_name(cfg->scaling),
                      d->want);
    double ms = cfg->mscale, ma = cfg->mscale_all_dim, s = cfg->factor;
    static const char *const deepseek[] = {
        "YaRN's default 0.1 ln(factor) + 1: the config's mscale/mscale_all_dim were ignored",
        "m(factor, mscale) alone: the division by m(factor, mscale_all_dim) was dropped",
        "m(factor, mscale_all_dim): the softmax's share was put on cos/sin", "1: DeepSeek's mscale ratio was dropped"};
    switch ((posenc_rope_magnitude_reading)d->reading) {
    case POSENC_MAGNITUDE_DROPPED: cli_buffer_puts(b, ": the attention factor was dropped"); break;
    case POSENC_MAGNITUDE_ADDED: cli_buffer_puts(b, ": an attention factor the config does not give was applied"); break;
    case POSENC_MAGNITUDE_OTHER: cli_buffer_puts(b, ": a different attention factor was applied"); break;
    case POSENC_MAGNITUDE_MSCALE_NONE:
        cli_buffer_printf(b, ": DeepSeek's mscale: the config's mscale %g / mscale_all_dim %g give %.6g, the cache's "
                             "magnitude is none of its readings (default YaRN %.6g, m(s, mscale) %.6g, m(s, "
                             "mscale_all_dim) %.6g)",
                          ms, ma, d->want, d->alt[0], d->alt[1], d->alt[2]);
        break;
    default:
        cli_buffer_printf(b, ": DeepSeek's mscale: the config's mscale %g / mscale_all_dim %g give m(%g, %g) / m(%g, %g) = "
                             "%.6g; the cache's is %s",
                          ms, ma, s, ms, s, ma, d->want, deepseek[d->reading - POSENC_MAGNITUDE_YARN_DEFAULT]);
        break;
    }
    cli_buffer_printf(b, " (shows at pair 0, position %lld)", (long long)d->position);
}

static const char *const list_words[] = {
    ("holds the config's long factors at every position: vLLM's choice when max_model_len exceeds the original "
     "context (its long_short_cos_sin_cache keeps both lists; every position then reads the long half); HF takes the "
     "long factors only for a sequence longer than the original context, so for a sequence this short HF's table "
     "holds the short ones"),
    ("holds the config's long factors at every position: llama.cpp's choice when its context n_ctx exceeds the "
     "original context (it picks one list per context); HF takes the long factors only for a sequence longer than "
     "the original context, so for a sequence this short HF's table holds the short ones"),
    ("holds the config's short factors for positions past the original context: HF and llama.cpp would take the long "
     "ones there")};

void cli_word_departure(cli_buffer *b, const posenc_rope_departure *d, const posenc_rope_identity *id,
                        const posenc_rope_comparison *cmp) {
    const posenc_rope_params *cfg = &cmp->config;
    switch (d->kind) {
    case POSENC_DEPART_ROTARY_DIM:
        cli_buffer_printf(b, "rotary dim %d where the config gives %d (head_dim %d): %s", (int)d->got, (int)d->want,
                          (int)d->config_position,
                          d->got < d->want ? "a partial rotary the config does not state" : "the cache rotates more channels");
        break;
    case POSENC_DEPART_DYNAMIC_LENGTH:
        cli_buffer_printf(b, "holds the config's dynamic NTK at sequence length %lld (base %.10g at every position, from "
                             "position 0; ", (long long)d->position, d->got);
        if (d->differ == 0)
            cli_buffer_puts(b, "the cache is that table bit for bit in HF's float32 arithmetic at that length");
        else
            cli_buffer_printf(b, "that table in HF's float32 arithmetic: %zu values differ by up to %lld ULP", d->differ,
                              (long long)d->max_ulp);
        cli_buffer_printf(b, "): one table built for that length%s; HF recomputes the base per sequence and keeps base %g "
                             "up to %lld tokens (first visible at pair 1, position 1)",
                          d->reading ? ", as vLLM builds its dynamic-NTK cache once, at max_position x factor" : "",
                          d->want, (long long)d->config_position);
        break;
    case POSENC_DEPART_OFFSET:
        cli_buffer_printf(b, "positions start at %lld: row 0 holds position %lld, the model's first token is position 0 "
                             "(shows at pair 0, row 0)", (long long)d->position, (long long)d->position);
        break;
    case POSENC_DEPART_MAGNITUDE: word_magnitude(b, d, cfg); break;
    case POSENC_DEPART_LONGROPE_LIST:
        cli_buffer_printf(b, "%s (original context %lld)", list_words[d->reading % 3], (long long)d->config_position);
        break;
    case POSENC_DEPART_SWITCH_SCHEME:
        cli_buffer_printf(b, "the cache switches frequencies at position %lld (LongRoPE short/long factors), the config "
                             "says ", (long long)d->position);
        scheme_text(b, cfg);
        cli_buffer_printf(b, " (shows at row %lld)", (long long)d->position);
        break;
    case POSENC_DEPART_SWITCH_AT: {
        long long at = (long long)d->position, l0 = (long long)d->config_position;
        if (at != l0)
            cli_buffer_printf(b, "switches from short to long factors at %lld where HF switches at %lld (the config's "
                                 "original context: HF takes the long factors for every position once a sequence is "
                                 "longer than %lld; shows at row %lld)", at, l0, l0, at < l0 ? at : l0);
        else
            cli_buffer_printf(b, "switches from short to long factors at position %lld, the config's original context%s; "
                                 "HF instead takes the long factors for every position of a sequence longer than %lld, "
                                 "so for such a sequence rows 0..%lld differ from HF's",
                              at, d->reading ? " (vLLM's long_short_cache: the long rows restart at position 0)" : "", l0,
                              at - 1);
        break;
    }
    case POSENC_DEPART_SWITCH_FACTORS:
        if (d->first >= 0)
            cli_buffer_printf(b, "the %s factors depart from the config's from pair %d on (by up to %.3g%%)",
                              d->side ? "long" : "short", d->first, 100 * d->worst);
        else
            cli_buffer_printf(b, "the %s factors are the config's (every pair within the fit's noise, ~1e-6)",
                              d->side ? "long" : "short");
        break;
    case POSENC_DEPART_FREQUENCIES:
        if (!d->side) { /* same scheme, other parameters */
            cli_buffer_printf(b, "pairs %d-%d depart from the config's ", d->first, d->last);
            scheme_text(b, cfg);
            cli_buffer_printf(b, " frequencies by up to %.3g%% (the cache fits ", d->worst * 100);
            scheme_text(b, &id->params);
            cli_buffer_printf(b, ", base %g; first visible at pair %d, position %.0f)", id->params.base, d->first,
                              d->shows_at);
        } else {
            cli_buffer_printf(b, "pairs %d-%d follow ", d->first, d->last);
            scheme_text(b, &id->params);
            cli_buffer_puts(b, ", the config says ");
            scheme_text(b, cfg);
            cli_buffer_printf(b, " (frequencies off by up to %.3g%%; first visible at pair %d, position %.0f)",
                              d->worst * 100, d->first, d->shows_at);
        }
        break;
    case POSENC_DEPART_IMROPE_STILL:
        cli_buffer_printf(b, "pairs %d-%d hold angle 0 at every row where the config, as HF reads it, turns them (%.3g rad "
                             "per position at pair %d): HF's apply_interleaved_mrope keeps the pairs past the interleaved "
                             "sections (t/h/w %d/%d/%d, h and w up to pair %lld) on t, the token's position for text; "
                             "llama.cpp's IMROPE takes them from a 4th position stream, 0 for text tokens (shows at pair "
                             "%d, position 1)%s",
                          d->first, d->last, d->got, d->first, d->sections[0], d->sections[1], d->sections[2],
                          3 * (long long)(d->sections[1] > d->sections[2] ? d->sections[1] : d->sections[2]) - 1, d->first,
                          d->differ == 0 ? "; every other pair is the config's bit for bit in ggml's float32 arithmetic"
                                         : "");
        break;
    case POSENC_DEPART_IMROPE_RESIDUAL:
        cli_buffer_printf(b, "with pairs %d-%d put back, %zu values still differ from the config in ggml's float32 "
                             "arithmetic (up to %lld ULP)", d->first, d->last, d->differ, (long long)d->max_ulp);
        break;
    case POSENC_DEPART_GRID:
        cli_buffer_printf(b, "the cache is rounded to %s (the config's table in float32 differs by up to %lld of its ULPs)",
                          grid_name(id->grid), (long long)d->max_ulp);
        break;
    case POSENC_DEPART_UNEXPLAINED:
        cli_buffer_printf(b, "frequencies and magnitude agree with the config, but no arithmetic reproduces every value: "
                             "closest %s, %zu values differ by up to %lld ULP; the cache itself fits %s",
                          cli_identify_arith_words(d->arith), d->differ, (long long)d->max_ulp, fit_arith_words(id->arith));
        break;
    default: cli_buffer_printf(b, "departure %d", (int)d->kind); break;
    }
}
