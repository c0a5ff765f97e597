/* report_identify.c: `posenc report --identify CACHE.npy [--sin S.npy]`: the "Which RoPE
 * is this?" section -- what posenc_rope_identify fitted, in words, and two pictures drawn
 * with the chart code (cli_chart_svg): each pair's residual against the fit regenerated
 * in each arithmetic (posenc_rope_identity_pair_residual) and the per-pair factor profile
 * that names the scaling. The hook in report.c is one line of its section table. */
#include "render.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *layout_text(posenc_rope_cache_layout l) {
    switch (l) {
    case POSENC_CACHE_HF: return "HF [T, R], each pair's value in both halves";
    case POSENC_CACHE_VLLM: return "vLLM cos_sin_cache [T, R] = cat(cos, sin)";
    case POSENC_CACHE_GGML: return "ggml per-pair (cos, sin) interleaved";
    default: return "plain [T, R/2], one value per pair";
    }
}

static void item(cli_buffer *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void item(cli_buffer *b, const char *fmt, ...) {
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    cli_buffer_puts(b, "<li>");
    cli_buffer_escape(b, text);
    cli_buffer_puts(b, "</li>\n");
}

static void words(cli_buffer *b, const char *path, const posenc_rope_identity *id) {
    const posenc_rope_params *p = &id->params;
    cli_buffer_puts(b, "<ul class=\"identify\">\n");
    item(b, "%s: [%lld rows], layout %s; holds %s; rotary dim %d (%d pairs); positions %lld..%lld", path,
         (long long)id->rows, layout_text(id->layout),
         id->has_cos && id->has_sin ? "cos and sin" : id->has_sin ? "sin" : "cos", id->rotary_dim, id->rotary_dim / 2,
         (long long)id->offset, (long long)(id->offset + id->rows - 1));
    char scheme[400] = "";
    switch (p->scaling) {
    case POSENC_ROPE_LINEAR: snprintf(scheme, sizeof scheme, ", factor %g", p->factor); break;
    case POSENC_ROPE_YARN:
        snprintf(scheme, sizeof scheme, ", factor %g, ramp pairs %d..%d, original context %lld (betas 32/1)",
                 p->factor, id->ramp_first, id->ramp_last, (long long)p->original_max_position);
        break;
    case POSENC_ROPE_LLAMA3:
        snprintf(scheme, sizeof scheme, ", factor %g, pairs %d..%d blend, original context %lld (low/high 1/4)",
                 p->factor, id->ramp_first, id->ramp_last, (long long)p->original_max_position);
        break;
    case POSENC_ROPE_LONGROPE:
        if (id->switch_position > 0)
            snprintf(scheme, sizeof scheme, ", per-pair factors: short before row %lld, long from it (long rows %s)",
                     (long long)id->switch_position,
                     id->long_offset == 0 ? "restart at position 0: vLLM's long_short_cache" : "continue the positions");
        else snprintf(scheme, sizeof scheme, ", per-pair factors (the profile below)");
        break;
    default: break;
    }
    item(b, "base %.10g; scaling %s%s; magnitude %.6g (%s)", p->base, posenc_rope_scaling_name(p->scaling), scheme,
         id->magnitude, p->attention_factor > 0 ? "stated explicitly: not the scheme's own" : "the scheme's own");
    for (int a = 0; a < POSENC_ROPE_ARITHS; a++) {
        const char *name = posenc_rope_arith_name((posenc_rope_arith)a), *best = a == (int)id->arith ? " (best)" : "";
        if (id->max_ulp[a] < 0) item(b, "%s: cannot express this scaling", name);
        else if (!id->differ[a]) item(b, "%s: bit for bit (%zu values)%s", name, id->values, best);
        else item(b, "%s: %zu of %zu values differ, at most %lld ULP%s", name, id->differ[a], id->values,
                  (long long)id->max_ulp[a], best);
    }
    if (id->ambiguous & POSENC_IDENTIFY_NTK_IS_BASE)
        item(b, "the data cannot tell NTK / dynamic NTK with factor s from plain RoPE with base %g = base * s^(R/(R-2))",
             p->base);
    if (id->ambiguous & POSENC_IDENTIFY_YARN_CONTEXT)
        item(b, "the data cannot tell YaRN's original context from beta_fast/beta_slow (L0 from %.0f to %.0f fits)",
             id->yarn_context_lo, id->yarn_context_hi);
    if (id->ambiguous & POSENC_IDENTIFY_LLAMA3_BANDS)
        item(b, "the data cannot tell Llama 3's original context from low/high_freq_factor");
    if (id->ambiguous & POSENC_IDENTIFY_COS_OR_SIN)
        item(b, "cos or sin was decided by the offset that fits (give --sin to be sure)");
    cli_buffer_puts(b, "</ul>\n");
}

static void figure(cli_buffer *html, const cli_buffer *svg, const char *caption) {
    cli_buffer_puts(html, "<figure>");
    cli_buffer_append(html, svg->data, svg->len);
    cli_buffer_puts(html, "<figcaption>");
    cli_buffer_escape(html, caption);
    cli_buffer_puts(html, "</figcaption></figure>\n");
}

int cli_identify_report_section(const char *command, const char *path, const char *sin_path, int layout,
                                cli_buffer *html) {
    posenc_array cache = {0}, sin_t = {0};
    int rc = cli_read_table(command, path, NULL, 0, &cache);
    if (rc == EXIT_OK && sin_path) rc = cli_read_table(command, sin_path, NULL, 0, &sin_t);
    if (rc != EXIT_OK) {
        posenc_array_free(&cache);
        return rc;
    }
    posenc_error err = {0};
    posenc_rope_identity id;
    if (posenc_rope_identify(&cache, sin_path ? &sin_t : NULL, (posenc_rope_cache_layout)layout, &id, &err) !=
        POSENC_OK) {
        posenc_array_free(&cache);
        posenc_array_free(&sin_t);
        return cli_fail(command, EXIT_USAGE, NULL, "--identify %s: %s", path, err.message);
    }
    size_t K = (size_t)id.rotary_dim / 2;
    double *x = malloc(sizeof *x * K), *y = malloc(sizeof *y * K * POSENC_ROPE_ARITHS), *f = malloc(sizeof *f * K * 2);
    int64_t *ulp = malloc(sizeof *ulp * K);
    if (!x || !y || !f || !ulp) rc = cli_fail(command, EXIT_RUNTIME, NULL, "out of memory for %zu pairs", K);
    cli_series series[POSENC_ROPE_ARITHS];
    size_t ns = 0;
    for (int a = 0; a < POSENC_ROPE_ARITHS && rc == EXIT_OK; a++) {
        if (id.max_ulp[a] < 0) continue;
        if (posenc_rope_identity_pair_residual(&cache, sin_path ? &sin_t : NULL, &id, (posenc_rope_arith)a, ulp, K,
                                               &err) != POSENC_OK) {
            rc = cli_fail_status(command, &err);
            break;
        }
        for (size_t k = 0; k < K; k++) y[ns * K + k] = 1.0 + (double)ulp[k]; /* log axis: 1 = bit for bit */
        series[ns] = (cli_series){posenc_rope_arith_name((posenc_rope_arith)a), x, y + ns * K, K};
        ns++;
    }
    if (rc == EXIT_OK) {
        for (size_t k = 0; k < K; k++) x[k] = (double)k;
        cli_buffer_puts(html, "<section id=\"identify\">\n<h2>Which RoPE is this?</h2>\n"
                              "<p class=\"look\"><b>What to look at:</b> what <code>posenc rope identify</code> fitted "
                              "from the cache's values alone, then where each arithmetic's regenerated table departs "
                              "from it, pair by pair: the fitted arithmetic lies on 1 (bit for bit) where the fit is "
                              "exact; a pair standing out is where the cache differs from every candidate.</p>\n");
        words(html, path, &id);
        cli_buffer svg = {0};
        char sub[200];
        snprintf(sub, sizeof sub, "%lld rows; residual unit: the grid's ULP at [0.5, 1)", (long long)id.rows);
        cli_chart chart = {.title = "Residual per pair: the cache against its fit regenerated in each arithmetic",
                           .subtitle = sub, .xlabel = "pair k", .ylabel = "1 + max |difference| (ULP)",
                           .series = series, .series_count = ns, .log_y = true};
        rc = cli_chart_svg(command, &chart, &svg);
        if (rc == EXIT_OK)
            figure(html, &svg, "Each line: one arithmetic (exact = correctly rounded, hf-f32 = HF transformers' "
                               "float32 steps, ggml-f32 = ggml's theta chain); 1 on the log axis = every value of "
                               "that pair reproduced bit for bit.");
        cli_buffer_free(&svg);
        if (rc == EXIT_OK) {
            cli_series fs[2] = {{"w(base) / measured w (short side)", x, f, K}, {"long side", x, f + K, K}};
            for (size_t k = 0; k < K; k++) {
                f[k] = id.pair_factor[k];
                f[K + k] = id.long_pair_factor ? id.long_pair_factor[k] : NAN;
            }
            if (!id.long_pair_factor) fs[0].name = "w(base) / measured w";
            char fsub[200];
            snprintf(fsub, sizeof fsub, "base %.10g: flat 1 = unscaled, flat f = linear, 1 rising to f = YaRN / Llama 3",
                     id.params.base);
            cli_chart fc = {.title = "Per-pair factor: the profile that names the scaling", .subtitle = fsub,
                            .xlabel = "pair k", .ylabel = "factor", .series = fs,
                            .series_count = id.long_pair_factor ? 2 : 1};
            rc = cli_chart_svg(command, &fc, &svg);
            if (rc == EXIT_OK)
                figure(html, &svg, "The measured frequency of each pair against base^(-2k/R): the scheme's "
                                   "signature (LongRoPE with a switch: both lists).");
            cli_buffer_free(&svg);
        }
        cli_buffer_puts(html, "</section>\n");
    }
    free(x), free(y), free(f), free(ulp);
    posenc_rope_identity_free(&id);
    posenc_array_free(&cache);
    posenc_array_free(&sin_t);
    return rc;
}
