/* cmd_rope_explain.c: `posenc rope explain`: a model's RoPE in plain words:
 * effective frequencies and wavelengths, magnitude factors, which pairs are
 * kept / blended / interpolated against the trained and extended context,
 * and warnings for suspicious configs. */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cli_option explain_options[] = {
    {"config", "FILE", "config.json or model.gguf (required)"},
    CLI_ASSUME_OPTION,
    {"json", NULL, "print the model as one JSON object: every layer's scheme (keys in docs/rope.md)"},
    {"seq-len", "L", "sequence length for dynamic NTK / longrope (default: the trained length)"},
    {"pairs", NULL, "also print every pair (frequency, wavelength, scale)"},
    {NULL, NULL, NULL}};

/* kept = unscaled frequency, interpolated = divided by the factor, blended =
 * in between (YaRN ramp, Llama 3 smoothing); other schemes "rescaled". */
static const char *band_of(double ratio, double factor, bool blends) {
    if (fabs(ratio - 1.0) <= 1e-9) return "kept";
    if (factor > 0 && fabs(ratio * factor - 1.0) <= 1e-9) return "interpolated";
    return blends ? "blended" : "rescaled";
}

/* Print runs of consecutive pairs that share a band. */
static void print_bands(const double *w, const double *w0, int32_t pairs, double factor, bool blends, int64_t trained,
                        int64_t extended) {
    const double two_pi = 6.283185307179586;
    int32_t k = 0;
    while (k < pairs) {
        const char *band = band_of(w[k] / w0[k], factor, blends);
        int32_t e = k;
        while (e + 1 < pairs && strcmp(band_of(w[e + 1] / w0[e + 1], factor, blends), band) == 0) e++;
        printf("  pairs %3d-%-3d %-12s wavelength %.4g .. %.4g positions, scale x%.4g .. x%.4g\n", k, e, band,
               two_pi / w[k], two_pi / w[e], w[k] / w0[k], w[e] / w0[e]);
        k = e + 1;
    }
    int32_t full_trained = 0, full_extended = 0;
    for (k = 0; k < pairs; k++) {
        if (trained > 0 && two_pi / w0[k] <= (double)trained) full_trained++;
        if (extended > 0 && two_pi / w[k] <= (double)extended) full_extended++;
    }
    if (trained > 0)
        printf("  %d of %d pairs complete a full turn within the trained context (%lld); the other %d only ever saw "
               "part of a period there\n", full_trained, pairs, (long long)trained, pairs - full_trained);
    if (extended > 0 && extended != trained)
        printf("  %d of %d pairs complete a full turn within the extended context (%lld) with the scaled frequencies\n",
               full_extended, pairs, (long long)extended);
}

int cmd_rope_explain(int argc, char **argv) {
    cli_args a;
    int rc = cli_parse(&a, "rope explain", explain_options, argc, argv, 0);
    if (rc != EXIT_OK) return rc;
    if (a.help) {
        printf("usage: posenc rope explain --config config.json|model.gguf [--assume FAMILY] [--seq-len L] [--pairs] "
               "[--json]\n\n"
               "Explain a model's position encoding layer by layer (RoPE in plain words, NoPE, ALiBi, learned, "
               "T5).\n\n");
        cli_print_options(explain_options);
        return EXIT_OK;
    }
    if (!cli_has(&a, "config"))
        return cli_fail("rope explain", EXIT_USAGE, "e.g. --config config.json", "--config FILE is required");
    int64_t seq_len = 0;
    if (!cli_int64(&a, "seq-len", 0, INT64_MAX, &seq_len)) return EXIT_USAGE;
    posenc_model model;
    posenc_error err = {0};
    const char *path = cli_string(&a, "config", "");
    rc = cli_read_model("rope explain", &a, &model);
    if (rc != EXIT_OK) return rc;
    if (cli_has(&a, "json")) {
        rc = cli_model_print_json(&model, seq_len);
        posenc_model_free(&model);
        return rc;
    }
    const posenc_model_config c = model.config;
    if (model.rope_count == 0) { /* ALiBi, learned, T5, NoPE: the layers say it all */
        printf("%s (%s)\n", path, c.format == POSENC_CONFIG_GGUF ? "GGUF header" : "HF config.json");
        printf("architecture: ");
        cli_put_escaped(stdout, c.architecture); /* from the file: no raw bytes to the terminal */
        printf(" -- read with posenc's '%s' family rules%s\n", c.family,
               model.assumed ? " (ASSUMED on purpose: --assume)" : "");
        if (c.defaults_used[0]) printf("class defaults used for absent keys (as HF's config class does): %s\n", c.defaults_used);
        printf(model.rope2d.head_dim > 0 ? "no 1-D RoPE: the layers rotate by patch row and column (2-D RoPE)\n"
                                         : "no RoPE in any layer\n");
        cli_model_print_layers(&model);
        int warnings = 0;
        for (int k = 0; k < 10; k++) {
            char words[512];
            cli_model_warning_words(&model, k, words, sizeof words);
            if (words[0]) printf("warning %d: %s\n", ++warnings, words);
        }
        if (!warnings) printf("no warnings\n");
        posenc_model_free(&model);
        return EXIT_OK;
    }
    const posenc_rope_params *p = &c.rope;
    int32_t r = 0;
    posenc_rope_check(p, &r, NULL);
    int32_t pairs = r / 2;
    double *w = malloc(sizeof *w * (size_t)pairs * 2), *w0 = w ? w + pairs : NULL, att = 1.0;
    posenc_rope_params plain = *p;
    plain.scaling = POSENC_ROPE_NONE;
    if (!w || posenc_rope_frequencies(p, seq_len, w, (size_t)pairs, &att, &err) != POSENC_OK ||
        posenc_rope_frequencies(&plain, 0, w0, (size_t)pairs, NULL, &err) != POSENC_OK) {
        free(w);
        posenc_model_free(&model);
        return cli_fail_status("rope explain", &err);
    }
    printf("%s (%s)\n", path, c.format == POSENC_CONFIG_GGUF ? "GGUF header" : "HF config.json");
    printf("architecture: ");
    cli_put_escaped(stdout, c.architecture[0] ? c.architecture : "(not stated: no model_type or architectures)");
    if (!c.family[0]) printf(" -- no family named: read as HF's generic rope keys, layout ASSUMED (keys read: %s)",
                             c.keys_used[0] ? c.keys_used : "none");
    else printf(" -- read with posenc's '%s' family rules", c.family);
    if (model.assumed && c.family[0])
        printf(" (ASSUMED on purpose: --assume; keys read: %s)", c.keys_used[0] ? c.keys_used : "none");
    printf("\n");
    if (c.defaults_used[0]) printf("class defaults used for absent keys (as HF's config class does): %s\n", c.defaults_used);
    int32_t head = c.attention_head_dim > 0 ? c.attention_head_dim : p->head_dim;
    int32_t first = c.rotary_offset, last = c.rotary_offset + r - 1;
    printf("head: %d channels; rotated: channels %d..%d (%d pairs", head, first, last, pairs);
    if (first > 0) printf(", the LAST %d channels of the head: the first %d pass through (DeepSeek MLA: [nope | rope])", r, first);
    else if (r < head) printf("; channels %d..%d pass through unrotated: partial rotary", r, head - 1);
    printf(")\nlayout: %s%s\n",
           c.layout == POSENC_LAYOUT_HALF ? "half split, pairs (k, k+R/2) (GPT-NeoX / HF rotate_half / ggml NEOX)"
                                          : "interleaved, pairs (2k, 2k+1) (GPT-J / Meta LLaMA / ggml NORMAL)",
           model.assumed ? " -- assumed with the family" : "");
    printf("base (rope_theta): %.10g%s\n", p->base, (c.warnings & POSENC_CONFIG_WARN_NO_THETA) ? " (default: not in the file)" : "");
    printf("scaling: %s", posenc_rope_scaling_name(p->scaling));
    if (c.warnings & POSENC_CONFIG_WARN_FREQ_TENSOR)
        printf(" -- the GGUF's rope_freqs.weight: per-pair frequency divisors (llama.cpp's form of Llama 3.1 scaling)");
    else if (c.scaling_name[0] == '(') printf(" -- the GGUF's rope_factors_long/short.weight tensors (Phi-3)");
    else if (c.scaling_name[0]) printf(" (written as '%s')", c.scaling_name);
    if (p->scaling != POSENC_ROPE_NONE) printf(", factor %.10g", p->factor);
    printf("\ncontext: trained %lld, max position embeddings %lld\n", (long long)p->original_max_position,
           (long long)c.max_position_embeddings);
    /* any section, not the first: [0, 32, 32] gives t no pairs and is still M-RoPE */
    const bool mrope = c.mrope_sections[0] > 0 || c.mrope_sections[1] > 0 || c.mrope_sections[2] > 0 ||
                       c.mrope_sections[3] > 0;
    if (mrope && !c.mrope_interleaved)
        printf("M-RoPE sections (pairs per t/h/w axis): %d, %d, %d%s\n", c.mrope_sections[0], c.mrope_sections[1],
               c.mrope_sections[2], " -- text tokens use one position on every axis, so the frequencies below hold");
    if (mrope && c.mrope_interleaved) {
        const int32_t *s = c.mrope_sections;
        int32_t left0 = -1, left1 = -1;
        for (int32_t k = 0; k < pairs; k++) /* pairs ggml's IMROPE leaves to its 4th stream (HF: on t) */
            if (!((k % 3 == 0 && k < 3 * (int64_t)s[0]) || (k % 3 == 1 && k < 3 * (int64_t)s[1]) ||
                  (k % 3 == 2 && k < 3 * (int64_t)s[2]))) {
                if (left0 < 0) left0 = k;
                left1 = k;
            }
        printf("M-RoPE sections (pairs per t/h/w axis): %d, %d, %d, interleaved (Qwen3-VL): h at pairs 1, 4, .. < %lld, "
               "w at 2, 5, .. < %lld, t at the others -- text tokens use one position on every axis, so the frequencies "
               "below hold\n", s[0], s[1], s[2], 3 * (long long)s[1], 3 * (long long)s[2]);
        if (left0 >= 0)
            printf("M-RoPE leftover pairs: %d-%d (past 3 x the sections): HF's apply_interleaved_mrope keeps them on t; "
                   "llama.cpp's IMROPE reads them from a 4th stream, 0 for text tokens (they never turn there)\n",
                   left0, left1);
    }
    printf("cos/sin magnitude (attention factor): %.10g -- scales q.k by its square, %.6g\n", att, att * att);
    int32_t dsoft = c.softmax_head_dim > 0 ? c.softmax_head_dim : head;
    printf("softmax scale: 1/sqrt(%d) x %.10g = %.10g%s\n", dsoft, c.softmax_scale_factor,
           c.softmax_scale_factor / sqrt((double)dsoft),
           c.softmax_scale_factor != 1.0 ? " (DeepSeek: qk_head_dim = qk_nope + qk_rope, times m(factor, mscale_all_dim)^2)" : "");
    for (int i = 0; i < c.layer_type_count; i++) {
        const posenc_config_layer_type *t = &c.layer_types[i];
        double tatt = 1.0, w0_t = 0;
        posenc_error terr = {0};
        int32_t tr = 0;
        posenc_rope_check(&t->rope, &tr, NULL);
        double *tw = malloc(sizeof *tw * (size_t)(tr / 2 > 0 ? tr / 2 : 1));
        if (tw && posenc_rope_frequencies(&t->rope, seq_len, tw, (size_t)(tr / 2), &tatt, &terr) == POSENC_OK)
            w0_t = tw[tr / 2 - 1];
        free(tw);
        printf("layer kind %d: %s, %d layers%s", i, t->name, t->layers, t->sliding_window > 0 ? "" : ", whole context");
        if (t->sliding_window > 0) printf(", window %lld", (long long)t->sliding_window);
        printf(": base %.10g, scaling %s", t->rope.base, posenc_rope_scaling_name(t->rope.scaling));
        if (t->rope.scaling != POSENC_ROPE_NONE) printf(" x%.6g", t->rope.factor);
        printf(", magnitude %.6g, slowest inv_freq %.6g\n", tatt, w0_t);
    }
    cli_model_print_layers(&model);
    printf("frequencies (the first RoPE): inv_freq %.6g (pair 0) .. %.6g (pair %d); wavelengths %.4g .. %.4g positions\n", w[0],
           w[pairs - 1], pairs - 1, 6.283185307179586 / w[0], 6.283185307179586 / w[pairs - 1]);
    int64_t trained = p->original_max_position > 0 ? p->original_max_position : c.max_position_embeddings;
    int64_t extended = c.max_position_embeddings;
    if (extended <= 0 && p->scaling != POSENC_ROPE_NONE && p->original_max_position > 0 && p->factor > 0 &&
        p->factor * (double)p->original_max_position < 0x1p62) /* else unknown: llround would overflow */
        extended = (int64_t)llround(p->factor * (double)p->original_max_position);
    bool blends = p->scaling == POSENC_ROPE_YARN || p->scaling == POSENC_ROPE_LLAMA3;
    printf("bands (against the unscaled RoPE with the same base):\n");
    print_bands(w, w0, pairs, p->scaling == POSENC_ROPE_NONE ? 0 : p->factor, blends, trained, extended);
    if (p->scaling == POSENC_ROPE_DYNAMIC)
        printf("  dynamic NTK depends on the sequence length: shown for seq_len %lld (use --seq-len)\n", (long long)seq_len);
    if (p->scaling == POSENC_ROPE_LONGROPE)
        printf("  longrope uses the %s factor list here (seq_len %lld vs trained %lld; HF switches the whole sequence)\n",
               p->longrope_select == POSENC_LONGROPE_LONG || (p->longrope_select == POSENC_LONGROPE_BY_SEQ_LEN &&
                                                              seq_len > p->original_max_position) ? "long" : "short",
               (long long)seq_len, (long long)p->original_max_position);
    if (cli_has(&a, "pairs")) {
        printf("pair  inv_freq                 wavelength      scale\n");
        for (int32_t k = 0; k < pairs; k++)
            printf("%4d  %.17g  %14.6g  %.9g\n", k, w[k], 6.283185307179586 / w[k], w[k] / w0[k]);
    }
    int warnings = 0;
    if (c.warnings & POSENC_CONFIG_WARN_NO_THETA)
        printf("warning %d: rope_theta is missing; 10000 assumed (Llama 3 uses 500000, Mistral/Qwen 1e6)\n", ++warnings);
    if (c.warnings & POSENC_CONFIG_WARN_NO_ORIGINAL)
        printf("warning %d: %s scaling without an original (trained) context length%s\n", ++warnings,
               posenc_rope_scaling_name(p->scaling),
               p->original_max_position > 0 ? "; max_position_embeddings used in its place" : "");
    if (c.warnings & POSENC_CONFIG_WARN_FACTOR_MISMATCH)
        printf("warning %d: factor %.10g x original context %lld = %.10g, but max positions is %lld\n", ++warnings,
               p->factor, (long long)p->original_max_position, p->factor * (double)p->original_max_position,
               (long long)c.max_position_embeddings);
    if (c.warnings & POSENC_CONFIG_WARN_ODD_PASSTHROUGH)
        printf("warning %d: partial rotary leaves an odd number of pass-through channels (%d)\n", ++warnings,
               p->head_dim - r);
    for (int k = 0; k < 10; k++) { /* assumed, llama3 flat, unused keys, transformers diverges */
        if (k == 3) k = 9;
        char words[512];
        cli_model_warning_words(&model, k, words, sizeof words);
        if (words[0]) printf("warning %d: %s\n", ++warnings, words);
    }
    if (c.warnings & POSENC_CONFIG_WARN_DUPLICATE_KEY)
        printf("warning %d: '%s' is written more than once; the last value is used (as Python's json does)\n",
               ++warnings, c.duplicate_key);
    if (c.warnings & POSENC_CONFIG_WARN_NO_MAX_POSITION)
        printf("warning %d: max position embeddings is missing\n", ++warnings);
    if (!warnings) printf("no warnings\n");
    free(w);
    posenc_model_free(&model);
    return EXIT_OK;
}
