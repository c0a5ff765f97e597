/* cmd_rope_identify.c: `posenc rope identify CACHE.npy` -- which RoPE made
 * this cos/sin cache (posenc_rope_identify), in words or --json, and with
 * --config where it departs from what a model's config prescribes. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "cli.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const cli_option identify_options[] = {
    {"sin", "S.npy", "the sin table beside an HF / plain cos table (same shape)"},
    {"input", "X.npy", "with --rotated: the unrotated q/k, [T, D] or [T, H, D]"},
    {"rotated", "Y.npy", "with --input: R(x), the same shape; the cache is recovered from the rotation"},
    {"layout", "L", "auto (default) | hf | vllm | ggml | plain: the cache layout to assume"},
    {"bf16", NULL, "the cache is uint16 holding bfloat16 bits"},
    {"config", "FILE", "a model's config.json or .gguf: say where the cache departs from it"},
    {"json", NULL, "print the result as JSON"},
    {"max-bytes", "N", "refuse inputs larger than N bytes (default 4 GiB)"},
    {NULL, NULL, NULL}};

int cli_rope_identify_against(const posenc_rope_identity *id, const posenc_model_config *c, const posenc_array *cache,
                              const posenc_array *sin_table, bool json);

static const char *const layout_choices[] = {"auto", "hf", "vllm", "ggml", "plain", NULL};

static const char *arith_words(posenc_rope_arith a) {
    return a == POSENC_ARITH_HF_F32 ? "HF transformers' float32 arithmetic"
           : a == POSENC_ARITH_GGML_F32 ? "ggml's float32 arithmetic (theta *= theta_scale per pair)"
                                         : "exact (correctly rounded) arithmetic";
}

static const char *layout_words(posenc_rope_cache_layout l) {
    switch (l) {
    case POSENC_CACHE_HF: return "HF [T, R], each pair's value in both halves";
    case POSENC_CACHE_VLLM: return "vLLM cos_sin_cache [T, R] = cat(cos, sin)";
    case POSENC_CACHE_GGML: return "ggml per-pair (cos, sin) interleaved";
    default: return "plain [T, R/2], one value per pair";
    }
}

static const char *grid_words(posenc_dtype g) {
    return g == POSENC_DTYPE_BF16 ? "bf16" : g == POSENC_DTYPE_F16 ? "f16" : "f32";
}

static int read_cache(const char *path, bool bf16, size_t max_bytes, posenc_array *out) {
    int rc = cli_read_table("rope identify", path, NULL, max_bytes, out);
    if (rc != EXIT_OK || !bf16) return rc;
    if (out->dtype != POSENC_DTYPE_U16) {
        posenc_array_free(out);
        return cli_fail("rope identify", EXIT_USAGE, NULL, "--bf16: %s must hold uint16 bits", path);
    }
    out->dtype = POSENC_DTYPE_BF16; /* same size, the bits are bfloat16 */
    return EXIT_OK;
}

static void print_scheme(const posenc_rope_identity *id) {
    const posenc_rope_params *p = &id->params;
    printf("scaling: %s", posenc_rope_scaling_name(p->scaling));
    switch (p->scaling) {
    case POSENC_ROPE_LINEAR: printf(", factor %g (every pair's frequency / %g)", p->factor, p->factor); break;
    case POSENC_ROPE_YARN:
        printf(", factor %g; ramp pairs %d..%d (low %g, high %g); original context %lld with beta_fast 32 / "
               "beta_slow 1 (L0 from %.0f to %.0f fits)",
               p->factor, id->ramp_first, id->ramp_last, id->yarn_low, id->yarn_high,
               (long long)p->original_max_position, id->yarn_context_lo, id->yarn_context_hi);
        break;
    case POSENC_ROPE_LLAMA3:
        printf(", factor %g; pairs %d..%d blend; kept below wavelength %.1f, divided above %.1f: original "
               "context %lld with low/high freq factors 1/4",
               p->factor, id->ramp_first, id->ramp_last, id->llama3_wave_lo, id->llama3_wave_hi,
               (long long)p->original_max_position);
        break;
    case POSENC_ROPE_LONGROPE:
        printf(" (per-pair factors, listed with --json)");
        if (id->switch_position > 0)
            printf("; short factors for rows before %lld, long factors from row %lld on (long factor of the last "
                   "pair %.4g, short %.4g), %s",
                   (long long)id->switch_position, (long long)id->switch_position,
                   id->long_pair_factor[id->rotary_dim / 2 - 1], id->pair_factor[id->rotary_dim / 2 - 1],
                   id->long_offset == 0 ? "the long rows restarting at position 0: vLLM's long_short_cache = "
                                          "cat(short cache, long cache)"
                                        : "one run of positions: the factors switch per position");
        break;
    default: break;
    }
    printf("\n");
}

static void print_text(const char *path, const posenc_array *a, const posenc_rope_identity *id, double secs) {
    printf("%s: [%lld rows] %s, layout: %s\n", path, (long long)id->rows, posenc_dtype_name(a->dtype),
           layout_words(id->layout));
    printf("holds: %s; rotary dim %d (%d pairs); ", id->has_cos && id->has_sin ? "cos and sin" : id->has_sin ? "sin" : "cos",
           id->rotary_dim, id->rotary_dim / 2);
    if (id->passthrough > 0)
        printf("channels %d..%d pass through (cos 1%s at every row: a partial rotary in a full-width cache); ",
               id->rotary_dim, id->rotary_dim + id->passthrough - 1, id->has_sin ? ", sin 0" : "");
    if (id->switch_position > 0 && id->long_offset != id->switch_position)
        printf("positions %lld..%lld, then %lld..%lld\n", (long long)id->offset, (long long)(id->switch_position - 1),
               (long long)id->long_offset, (long long)(id->long_offset + id->offset + id->rows - id->switch_position - 1));
    else
        printf("positions %lld..%lld\n", (long long)id->offset, (long long)(id->offset + id->rows - 1));
    printf("base: %.10g", id->params.base);
    if (id->ntk_factor > 0)
        printf(" = %g * %g^(R/(R-2)): an NTK base change by factor %g of base %g", id->ntk_base, id->ntk_factor,
               id->ntk_factor, id->ntk_base);
    printf("\n");
    print_scheme(id);
    printf("magnitude: %.6g%s\n", id->magnitude,
           id->params.attention_factor > 0 ? " (stated explicitly: not the scheme's own)" : " (the scheme's own)");
    printf("values on the %s grid; profile misfit %.2g\n", grid_words(id->grid), id->profile_residual);
    for (int k = 0; k < POSENC_ROPE_ARITHS; k++) {
        posenc_rope_arith ar = (posenc_rope_arith)k;
        if (id->max_ulp[k] < 0) printf("  %-9s cannot express this scaling\n", posenc_rope_arith_name(ar));
        else if (!id->differ[k]) printf("  %-9s bit for bit (%zu values)%s\n", posenc_rope_arith_name(ar), id->values,
                                        ar == id->arith ? "  <- best" : "");
        else printf("  %-9s %zu of %zu values differ, at most %lld ULP%s\n", posenc_rope_arith_name(ar), id->differ[k],
                    id->values, (long long)id->max_ulp[k], ar == id->arith ? "  <- best" : "");
    }
    printf("arithmetic: %s%s%s\n", arith_words(id->arith),
           id->arith == POSENC_ARITH_HF_F32 && id->layout == POSENC_CACHE_VLLM
               ? " (torch's cos/sin run over vLLM's [T, R/2] freqs, as its _compute_cos_sin_cache does)"
               : "",
           id->differ[id->arith] ? " (closest; none reproduces every value)" : "");
    unsigned amb = id->ambiguous;
    if (amb & (POSENC_IDENTIFY_NTK_IS_BASE | POSENC_IDENTIFY_YARN_CONTEXT | POSENC_IDENTIFY_LLAMA3_BANDS |
               POSENC_IDENTIFY_ARITH | POSENC_IDENTIFY_COS_OR_SIN | POSENC_IDENTIFY_ONE_PAIR |
               POSENC_IDENTIFY_LONGROPE_BASE))
        printf("the data cannot tell apart:\n");
    if (amb & POSENC_IDENTIFY_NTK_IS_BASE)
        printf("  - NTK / dynamic NTK with factor s from plain RoPE with base %g = base * s^(R/(R-2))\n",
               id->params.base);
    if (amb & POSENC_IDENTIFY_YARN_CONTEXT)
        printf("  - YaRN's original context from beta_fast/beta_slow: only L0/beta_fast and L0/beta_slow show "
               "(through the ramp ends)\n");
    if (amb & POSENC_IDENTIFY_LLAMA3_BANDS)
        printf("  - Llama 3's original context from low/high_freq_factor: only L0/low and L0/high show\n");
    if (amb & POSENC_IDENTIFY_ARITH) printf("  - the arithmetics marked bit for bit above\n");
    if (amb & POSENC_IDENTIFY_LONGROPE_BASE)
        printf("  - the base from the per-pair factors: only base^(-2k/R) / f_k shows (base %g is the largest common "
               "RoPE base at or below the leading pairs' fit)\n",
               id->params.base);
    if (amb & POSENC_IDENTIFY_ONE_PAIR) printf("  - the base: one pair turns at 1 radian per position whatever it is\n");
    if (amb & POSENC_IDENTIFY_COS_OR_SIN)
        printf("  - cos from sin by the values alone: decided by the offset that fits (give --sin to be sure)\n");
    printf("fit time: %.2f s\n", secs);
}

static void print_json(const char *path, const posenc_rope_identity *id, double secs, bool newline) {
    const posenc_rope_params *p = &id->params;
    printf("{\"file\": ");
    cli_json_string(path);
    printf(", \"layout\": \"%s\", \"has_cos\": %s, \"has_sin\": %s, \"rotary_dim\": %d, \"rows\": %lld, "
           "\"offset\": %lld, ",
           posenc_rope_cache_layout_name(id->layout), id->has_cos ? "true" : "false", id->has_sin ? "true" : "false",
           id->rotary_dim, (long long)id->rows, (long long)id->offset);
    printf("\"passthrough\": %d, \"magnitude\": ", id->passthrough);
    cli_json_number(id->magnitude);
    printf(", \"base\": ");
    cli_json_number(p->base);
    printf(", \"ntk_base\": ");
    cli_json_number(id->ntk_base);
    printf(", \"ntk_factor\": ");
    cli_json_number(id->ntk_factor);
    printf(", \"scaling\": \"%s\", \"factor\": ", posenc_rope_scaling_name(p->scaling));
    cli_json_number(p->factor);
    printf(", \"original_max_position\": %lld, \"attention_factor\": ", (long long)p->original_max_position);
    cli_json_number(p->attention_factor);
    printf(", \"ramp_pairs\": [%d, %d], \"yarn_low\": ", id->ramp_first, id->ramp_last);
    cli_json_number(id->yarn_low);
    printf(", \"yarn_high\": ");
    cli_json_number(id->yarn_high);
    printf(", \"yarn_context_range\": [");
    cli_json_number(id->yarn_context_lo);
    printf(", ");
    cli_json_number(id->yarn_context_hi);
    printf("], \"llama3_wavelength_edges\": [");
    cli_json_number(id->llama3_wave_lo);
    printf(", ");
    cli_json_number(id->llama3_wave_hi);
    printf("], \"grid\": \"%s\", \"arithmetic\": \"%s\", \"residual\": {", grid_words(id->grid),
           posenc_rope_arith_name(id->arith));
    for (int k = 0; k < POSENC_ROPE_ARITHS; k++)
        printf("%s\"%s\": {\"max_ulp\": %lld, \"differ\": %zu}", k ? ", " : "",
               posenc_rope_arith_name((posenc_rope_arith)k), (long long)id->max_ulp[k], id->differ[k]);
    printf("}, \"values\": %zu, \"profile_residual\": ", id->values);
    cli_json_number(id->profile_residual);
    printf(", \"ambiguous\": [");
    static const char *const amb[] = {"ntk_is_base", "yarn_context", "llama3_bands", "arithmetic", "cos_or_sin",
                                      "not_exact", "one_pair", "longrope_base"};
    int n = 0;
    for (int b = 0; b < (int)(sizeof amb / sizeof amb[0]); b++)
        if (id->ambiguous & (1u << b)) printf("%s\"%s\"", n++ ? ", " : "", amb[b]);
    printf("], \"pair_factor\": ");
    cli_json_numbers(id->pair_factor, (size_t)id->rotary_dim / 2);
    printf(", \"inv_freq\": ");
    cli_json_numbers(id->inv_freq, (size_t)id->rotary_dim / 2);
    printf(", \"switch_position\": %lld, \"long_offset\": %lld, \"long_magnitude\": ", (long long)id->switch_position,
           (long long)id->long_offset);
    cli_json_number(id->long_magnitude);
    printf(", \"long_pair_factor\": ");
    if (id->long_pair_factor) cli_json_numbers(id->long_pair_factor, (size_t)id->rotary_dim / 2);
    else printf("null");
    printf(", \"seconds\": ");
    cli_json_number(secs);
    printf(newline ? "}\n" : "}");
}

/* --input X --rotated Y: recover the cache from the rotation, then identify it. */
static int identify_rotation(cli_args *a) {
    bool bf16 = cli_has(a, "bf16");
    int64_t max_bytes = 0;
    if (!cli_int64(a, "max-bytes", 1, INT64_MAX, &max_bytes)) return EXIT_USAGE;
    const char *xp = cli_string(a, "input", ""), *yp = cli_string(a, "rotated", "");
    posenc_array x = {0}, y = {0};
    posenc_model_config cfg;
    memset(&cfg, 0, sizeof cfg);
    posenc_rope_rotation rot;
    memset(&rot, 0, sizeof rot);
    posenc_rope_identity id;
    memset(&id, 0, sizeof id);
    posenc_error err = {0};
    int rc = read_cache(xp, bf16, (size_t)max_bytes, &x);
    if (rc == EXIT_OK) rc = read_cache(yp, bf16, (size_t)max_bytes, &y);
    if (rc == EXIT_OK && cli_has(a, "config")) {
        if (posenc_config_read(cli_string(a, "config", ""), 0, &cfg, &err) != POSENC_OK)
            rc = cli_fail("rope identify", EXIT_RUNTIME, NULL, "%s", err.message);
    }
    if (rc != EXIT_OK) goto done;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    posenc_status st = posenc_rope_rotation_cache(&x, &y, &rot, &err);
    if (st != POSENC_OK) {
        rc = cli_fail("rope identify", st == POSENC_ERR_OUT_OF_MEMORY ? EXIT_RUNTIME : EXIT_USAGE, NULL,
                      "%s / %s: %s", xp, yp, err.message);
        goto done;
    }
    st = posenc_rope_identify(&rot.cos, &rot.sin, POSENC_CACHE_PLAIN, &id, &err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    if (st != POSENC_OK) {
        rc = cli_fail("rope identify", st == POSENC_ERR_OUT_OF_MEMORY ? EXIT_RUNTIME : EXIT_USAGE, NULL,
                      "%s: the rotation's cos/sin are no RoPE cache: %s", yp, err.message);
        goto done;
    }
    bool json = cli_has(a, "json"), have_cfg = cli_has(a, "config");
    const char *pairing = rot.layout == POSENC_LAYOUT_HALF ? "half" : "interleaved";
    if (json) {
        printf("{\"rotation\": {\"input\": ");
        cli_json_string(xp);
        printf(", \"rotated\": ");
        cli_json_string(yp);
        printf(", \"layout\": \"%s\", \"head_dim\": %d, \"rotary_offset\": %d, \"rotary_dim\": %d, \"heads\": %lld, "
               "\"passthrough\": %d, \"max_norm_misfit\": ",
               pairing, rot.head_dim, rot.rotary_offset, rot.rotary_dim, (long long)rot.heads,
               rot.head_dim - rot.rotary_dim);
        cli_json_number(rot.max_norm_misfit);
        printf(", \"max_head_misfit\": ");
        cli_json_number(rot.max_head_misfit);
        printf("}, \"identity\": ");
        print_json(yp, &id, secs, false);
        if (!have_cfg) printf("}\n");
        else printf(", \"config\": ");
    } else {
        printf("%s = R(%s): [%lld positions, %lld head%s, %d channels]\n", yp, xp, (long long)rot.rows,
               (long long)rot.heads, rot.heads == 1 ? "" : "s", rot.head_dim);
        printf("rotated channels %d..%d (rotary dim %d, %s pairs: %s)", rot.rotary_offset,
               rot.rotary_offset + rot.rotary_dim - 1, rot.rotary_dim, pairing,
               rot.layout == POSENC_LAYOUT_HALF ? "(j, j + R/2), HF rotate_half" : "(2j, 2j + 1), GPT-J / ggml NORMAL");
        if (rot.rotary_dim < rot.head_dim)
            printf("; %d channels pass through unchanged (partial rotary, the rotated run %s)",
                   rot.head_dim - rot.rotary_dim,
                   rot.rotary_offset == 0 ? "first, as HF's partial_rotary_factor"
                   : rot.rotary_offset + rot.rotary_dim == rot.head_dim ? "last, as DeepSeek's qk_rope_head_dim"
                                                                          : "in the middle");
        printf("\nrotation: |y|/|x| constant within %.2g, heads agree within %.2g; cos/sin per pair and position "
               "by least squares over the heads, rounded to f32 (residuals below include the apply's rounding)\n",
               rot.max_norm_misfit, rot.max_head_misfit);
        print_text(yp, &rot.cos, &id, secs);
    }
    if (have_cfg && !json) { /* where the rotated channels sit, against the model's head */
        const char *cfg_pairing = cfg.layout == POSENC_LAYOUT_HALF ? "half" : "interleaved";
        int32_t cfg_r = 0;
        posenc_error e2 = {0};
        if (posenc_rope_check(&cfg.rope, &cfg_r, &e2) != POSENC_OK) cfg_r = 0;
        if (cfg.layout_known && cfg.layout != rot.layout)
            printf("placement: %s pairs where the config's %s family rotates %s pairs (a weight permutation, or "
                   "another engine's layout)\n",
                   pairing, cfg.family, cfg_pairing);
        if (cfg.attention_head_dim > 0 && cfg.attention_head_dim != rot.head_dim)
            printf("placement: the head has %d channels, the config's %d\n", rot.head_dim, cfg.attention_head_dim);
        else if (cfg_r == rot.rotary_dim && cfg.rotary_offset != rot.rotary_offset)
            printf("placement: rotated channels start at %d, the config's at %d\n", rot.rotary_offset,
                   cfg.rotary_offset);
        else if (cfg_r == rot.rotary_dim)
            printf("placement: channels %d..%d rotate, as the config says\n", rot.rotary_offset,
                   rot.rotary_offset + rot.rotary_dim - 1);
    }
    if (have_cfg) rc = cli_rope_identify_against(&id, &cfg, &rot.cos, &rot.sin, json);
done:
    posenc_rope_identity_free(&id);
    posenc_rope_rotation_free(&rot);
    posenc_model_config_free(&cfg);
    posenc_array_free(&x);
    posenc_array_free(&y);
    return rc;
}

/* Pairs that do not turn at all (measured frequency 0) where the fit's scheme turns them,
 * while every other pair is bit for bit in the best arithmetic: a position stream held at 0
 * for those pairs (ggml's IMROPE sends the pairs past 3 x its sections to a 4th stream, which
 * llama.cpp sets to 0 for text tokens). Text mode; nothing is printed otherwise. */
static void print_still_pairs(const posenc_array *cache, const posenc_array *sin_table, const posenc_rope_identity *id) {
    int32_t K = id->rotary_dim / 2;
    if (!id->differ[id->arith] || id->switch_position > 0 || K < 2) return;
    int64_t *ulp = calloc((size_t)K, sizeof *ulp);
    double *w = malloc(sizeof *w * (size_t)K), att = 1;
    posenc_error e = {0};
    posenc_rope_params q = id->params;
    if (!ulp || !w || posenc_rope_identity_pair_residual(cache, sin_table, id, id->arith, ulp, (size_t)K, &e) != POSENC_OK ||
        posenc_rope_frequencies(&q, 0, w, (size_t)K, &att, &e) != POSENC_OK) {
        free(ulp);
        free(w);
        return;
    }
    int32_t first = -1, last = -1, still = 0, other = 0;
    int64_t worst = 0;
    for (int32_t k = 0; k < K; k++) {
        if (!ulp[k]) continue;
        if (id->inv_freq[k] == 0 && w[k] > 0) {
            if (first < 0) first = k;
            last = k, still++, worst = ulp[k] > worst ? ulp[k] : worst;
        } else {
            other++;
        }
    }
    if (still && !other)
        printf("still pairs: %d-%d hold angle 0 at every row (measured frequency 0, up to %lld ULP off) where the "
               "fit turns them (%.3g rad per position); every other pair is bit for bit in %s: a position stream held "
               "at 0 for those pairs (ggml's IMROPE takes the pairs past 3 x its sections from a 4th stream, which "
               "llama.cpp sets to 0 for text tokens)\n",
               first, last, (long long)worst, w[first], arith_words(id->arith));
    free(ulp);
    free(w);
}

int cmd_rope_identify(int argc, char **argv) {
    cli_args a;
    int rc = cli_parse(&a, "rope identify", identify_options, argc, argv, 1);
    if (rc != EXIT_OK) return rc;
    if (a.help) {
        printf("usage: posenc rope identify CACHE.npy [--sin S.npy] [--layout L] [--bf16] [--config FILE] [--json]\n"
               "       posenc rope identify --input X.npy --rotated Y.npy [--bf16] [--config FILE] [--json]\n\n"
               "Which RoPE made this cos/sin cache? Fits the layout, rotary dim, offset, base, scaling and its\n"
               "parameters, the cache's rounding and the arithmetic (exact, HF float32, ggml float32), each with\n"
               "its residual in ULPs, and says what the data cannot tell apart.\n\n");
        cli_print_options(identify_options);
        return EXIT_OK;
    }
    bool from_rotation = cli_has(&a, "input") || cli_has(&a, "rotated");
    if (from_rotation) {
        if (!cli_has(&a, "input") || !cli_has(&a, "rotated"))
            return cli_fail("rope identify", EXIT_USAGE, "posenc rope identify --input x.npy --rotated y.npy",
                            "--%s needs --%s: the rotation is seen from both", cli_has(&a, "input") ? "input" : "rotated",
                            cli_has(&a, "input") ? "rotated" : "input");
        if (a.positional_count || cli_has(&a, "sin") || cli_has(&a, "layout"))
            return cli_fail("rope identify", EXIT_USAGE, NULL,
                            "--input/--rotated replace the cache file: give no %s",
                            a.positional_count ? "CACHE.npy" : cli_has(&a, "sin") ? "--sin" : "--layout");
        return identify_rotation(&a);
    }
    if (a.positional_count != 1)
        return cli_fail("rope identify", EXIT_USAGE, "posenc rope identify cache.npy", "give one cache file, got %d",
                        a.positional_count);
    int layout = 0;
    int64_t max_bytes = 0;
    if (!cli_choice(&a, "layout", layout_choices, &layout) ||
        !cli_int64(&a, "max-bytes", 1, INT64_MAX, &max_bytes))
        return EXIT_USAGE;
    posenc_array cache = {0}, sin_t = {0};
    posenc_model_config cfg;
    memset(&cfg, 0, sizeof cfg);
    bool bf16 = cli_has(&a, "bf16"), have_cfg = false;
    if ((rc = read_cache(a.positional[0], bf16, (size_t)max_bytes, &cache)) != EXIT_OK) return rc;
    if (cli_has(&a, "sin") && (rc = read_cache(cli_string(&a, "sin", ""), bf16, (size_t)max_bytes, &sin_t)) != EXIT_OK)
        goto done;
    posenc_error err = {0};
    if (cli_has(&a, "config")) {
        if (posenc_config_read(cli_string(&a, "config", ""), 0, &cfg, &err) != POSENC_OK) {
            rc = cli_fail("rope identify", EXIT_RUNTIME, NULL, "%s", err.message);
            goto done;
        }
        have_cfg = true;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    posenc_rope_identity id;
    posenc_status st = posenc_rope_identify(&cache, cli_has(&a, "sin") ? &sin_t : NULL,
                                            (posenc_rope_cache_layout)layout, &id, &err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    if (st != POSENC_OK) {
        rc = cli_fail("rope identify", st == POSENC_ERR_OUT_OF_MEMORY ? EXIT_RUNTIME : EXIT_USAGE, NULL, "%s: %s",
                      a.positional[0], err.message);
        goto done;
    }
    if (!have_cfg) {
        if (cli_has(&a, "json")) print_json(a.positional[0], &id, secs, true);
        else print_text(a.positional[0], &cache, &id, secs);
        if (!cli_has(&a, "json")) print_still_pairs(&cache, cli_has(&a, "sin") ? &sin_t : NULL, &id);
    } else {
        if (!cli_has(&a, "json")) {
            print_text(a.positional[0], &cache, &id, secs);
            print_still_pairs(&cache, cli_has(&a, "sin") ? &sin_t : NULL, &id);
        }
        else {
            printf("{\"identity\": ");
            print_json(a.positional[0], &id, secs, false);
            printf(", \"config\": ");
        }
        rc = cli_rope_identify_against(&id, &cfg, &cache, cli_has(&a, "sin") ? &sin_t : NULL, cli_has(&a, "json"));
    }
    posenc_rope_identity_free(&id);
done:
    posenc_model_config_free(&cfg);
    posenc_array_free(&cache);
    posenc_array_free(&sin_t);
    return rc;
}

/* ---- against the model's config ------------------------------------------ */

/* One departure sentence, kept for text and JSON. */
typedef struct {
    char text[8][600];
    int n;
} departures;

static void add(departures *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(departures *d, const char *fmt, ...) {
    if (d->n >= 8) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->text[d->n++], sizeof d->text[0], fmt, ap);
    va_end(ap);
}

static void scheme_text(char *out, size_t size, const posenc_rope_params *p) {
    switch (p->scaling) {
    case POSENC_ROPE_LINEAR: snprintf(out, size, "linear interpolation (factor %g)", p->factor); break;
    case POSENC_ROPE_YARN:
        snprintf(out, size, "YaRN (factor %g, original context %lld)", p->factor, (long long)p->original_max_position);
        break;
    case POSENC_ROPE_LLAMA3:
        snprintf(out, size, "llama3 bands (factor %g, original context %lld, low/high %g/%g)", p->factor,
                 (long long)p->original_max_position, p->low_freq_factor, p->high_freq_factor);
        break;
    case POSENC_ROPE_NONE: snprintf(out, size, "no scaling"); break;
    default: snprintf(out, size, "%s (factor %g)", posenc_rope_scaling_name(p->scaling), p->factor); break;
    }
}

/* YaRN's m(s, M) = 0.1 M ln s + 1 (1 for s <= 1): HF's get_mscale */
static double get_mscale(double s, double m) { return s <= 1 ? 1.0 : 0.1 * m * log(s) + 1.0; }

/* DeepSeek's magnitude is m(s, mscale) / m(s, mscale_all_dim) (mscale_all_dim's part goes to the
 * softmax scale): name the reading an engine took instead, when the measured magnitude is one. */
static void mscale_words(const posenc_rope_params *cfg, double got, double want, double tol, char *why, size_t size) {
    if (cfg->scaling != POSENC_ROPE_YARN || !(cfg->mscale > 0 || cfg->mscale_all_dim > 0)) return;
    double s = cfg->factor, ms = cfg->mscale, ma = cfg->mscale_all_dim;
    struct {
        double v;
        const char *text;
    } readings[] = {
        {get_mscale(s, 1), "YaRN's default 0.1 ln(factor) + 1: the config's mscale/mscale_all_dim were ignored"},
        {get_mscale(s, ms), "m(factor, mscale) alone: the division by m(factor, mscale_all_dim) was dropped"},
        {get_mscale(s, ma), "m(factor, mscale_all_dim): the softmax's share was put on cos/sin"},
        {1.0, "1: DeepSeek's mscale ratio was dropped"},
    };
    for (size_t i = 0; i < sizeof readings / sizeof readings[0]; i++)
        if (fabs(got - readings[i].v) <= tol * readings[i].v) {
            snprintf(why, size,
                     ": DeepSeek's mscale: the config's mscale %g / mscale_all_dim %g give m(%g, %g) / m(%g, %g) = %.6g; "
                     "the cache's is %s",
                     ms, ma, s, ms, s, ma, want, readings[i].text);
            return;
        }
    snprintf(why, size, ": DeepSeek's mscale: the config's mscale %g / mscale_all_dim %g give %.6g, the cache's "
                        "magnitude is none of its readings (default YaRN %.6g, m(s, mscale) %.6g, m(s, mscale_all_dim) %.6g)",
             ms, ma, want, get_mscale(s, 1), get_mscale(s, ms), get_mscale(s, ma));
}

/* A cache whose slopes change at one row (LongRoPE short -> long) against the config. */
static void switch_words(departures *d, const posenc_rope_identity *id, const posenc_rope_params *cfg) {
    long long at = (long long)id->switch_position;
    if (cfg->scaling != POSENC_ROPE_LONGROPE) {
        char s[120];
        scheme_text(s, sizeof s, cfg);
        add(d, "the cache switches frequencies at position %lld (LongRoPE short/long factors), the config says %s "
               "(shows at row %lld)", at, s, at);
        return;
    }
    long long l0 = (long long)cfg->original_max_position;
    if (at != l0)
        add(d, "switches from short to long factors at %lld where HF switches at %lld (the config's original context: "
               "HF takes the long factors for every position once a sequence is longer than %lld; shows at row %lld)",
            at, l0, l0, at < l0 ? at : l0);
    else
        add(d, "switches from short to long factors at position %lld, the config's original context%s; HF instead takes "
               "the long factors for every position of a sequence longer than %lld, so for such a sequence rows 0..%lld "
               "differ from HF's",
            at, id->long_offset == 0 ? " (vLLM's long_short_cache: the long rows restart at position 0)" : "", l0,
            at - 1);
    /* the lists themselves against the config's */
    int32_t K = id->rotary_dim / 2;
    for (int side = 0; side < 2 && cfg->factors_count == (size_t)K; side++) {
        const double *got = side ? id->long_pair_factor : id->pair_factor;
        const double *want = side ? cfg->long_factors : cfg->short_factors;
        if (!got || !want) continue;
        double worst = 0;
        int32_t first = -1;
        for (int32_t k = 0; k < K; k++) {
            /* the fit's noise: float32 inv_freq rounding (~1e-7) plus the phase noise of a slow pair */
            double span = (double)(side ? id->rows - (id->switch_position - id->offset) : id->switch_position - id->offset);
            double noise = 1e-6 + 8 * 0x1p-24 / fmax(id->inv_freq[k] * span, 1e-30);
            double rel = fabs(got[k] / want[k] - 1);
            if (rel > 1e-4 + noise) {
                if (first < 0) first = k;
                worst = fmax(worst, rel);
            }
        }
        if (first >= 0)
            add(d, "the %s factors depart from the config's from pair %d on (by up to %.3g%%)", side ? "long" : "short",
                first, 100 * worst);
        else
            add(d, "the %s factors are the config's (every pair within %s)", side ? "long" : "short",
                "the fit's noise, ~1e-6");
    }
}

/* Qwen3-VL (interleaved M-RoPE) read from llama.cpp's cache: the pairs no t/h/w section claims under
 * ggml's IMROPE rule (t at k%3==0 < 3 s0, h at k%3==1 < 3 s1, w at k%3==2 < 3 s2) come from a 4th
 * stream, 0 for text tokens, where HF's apply_interleaved_mrope keeps them on t (the token's position).
 * When exactly those pairs hold angle 0 at every row and the cache with them put back to the config's
 * values is the config bit for bit in ggml's arithmetic, say so (true), naming the pairs. */
static bool imrope_words(departures *d, const posenc_rope_identity *id, const posenc_model_config *c,
                         const posenc_array *cache, const posenc_array *sin_table, const posenc_rope_params *cfg,
                         int32_t r) {
    if (!c->mrope_interleaved || sin_table || id->layout != POSENC_CACHE_GGML || cache->dtype != POSENC_DTYPE_F32 ||
        cache->ndim != 2 || cache->shape[1] != (size_t)r || id->rotary_dim != r || r < 2)
        return false;
    const int32_t K = r / 2, *s = c->mrope_sections;
    const int64_t T = (int64_t)cache->shape[0];
    const float *v = cache->data;
    int32_t first = -1, last = -1, count = 0;
    bool still = true, runs = true;
    for (int32_t k = 0; k < K; k++) {
        bool claimed = (k % 3 == 0 && k < 3 * (int64_t)s[0]) || (k % 3 == 1 && k < 3 * (int64_t)s[1]) ||
                       (k % 3 == 2 && k < 3 * (int64_t)s[2]);
        if (claimed) continue;
        if (last >= 0 && k != last + 1) runs = false;
        if (first < 0) first = k;
        last = k, count++;
        for (int64_t t = 0; t < T && still; t++) still = v[t * r + 2 * k] == 1.0f && v[t * r + 2 * k + 1] == 0.0f;
    }
    if (!count || !still || T < 2) return false;
    /* the cache with those pairs put back to the config's ggml values */
    posenc_rope_params q = *cfg;
    q.mode = POSENC_MODE_GGML;
    size_t n = (size_t)T * (size_t)K;
    float *cs = malloc(sizeof *cs * n), *sn = malloc(sizeof *sn * n);
    posenc_array patched = {0};
    posenc_error e = {0};
    bool ok = cs && sn && posenc_array_create(&patched, POSENC_DTYPE_F32, 2, cache->shape, 0, &e) == POSENC_OK &&
              posenc_rope_table_f32(&q, T, &(posenc_positions){.count = (size_t)T, .start = 0}, 1, cs, sn, n, &e) ==
                  POSENC_OK;
    int64_t ulp = -1;
    size_t differ = 1;
    if (ok) {
        float *pv = patched.data;
        memcpy(pv, v, sizeof *pv * cache->count);
        for (int32_t k = first; k <= last; k++)
            for (int64_t t = 0; t < T; t++) pv[t * r + 2 * k] = cs[t * K + k], pv[t * r + 2 * k + 1] = sn[t * K + k];
        ok = posenc_rope_cache_residual(&patched, NULL, POSENC_CACHE_GGML, 0, 0, &q, &ulp, &differ, &e) == POSENC_OK;
    }
    posenc_array_free(&patched);
    free(cs);
    free(sn);
    if (!ok || !runs) return false;
    double w = 0, att = 1;
    double *wk = malloc(sizeof *wk * (size_t)K);
    if (wk && posenc_rope_frequencies(cfg, 0, wk, (size_t)K, &att, &e) == POSENC_OK) w = wk[first];
    free(wk);
    add(d, "pairs %d-%d hold angle 0 at every row where the config, as HF reads it, turns them (%.3g rad per position "
           "at pair %d): HF's apply_interleaved_mrope keeps the pairs past the interleaved sections (t/h/w %d/%d/%d, "
           "h and w up to pair %lld) on t, the token's position for text; llama.cpp's IMROPE takes them from a 4th "
           "position stream, 0 for text tokens (shows at pair %d, position 1)%s",
        first, last, w, first, s[0], s[1], s[2], 3 * (long long)(s[1] > s[2] ? s[1] : s[2]) - 1, first,
        differ == 0 ? "; every other pair is the config's bit for bit in ggml's float32 arithmetic" : "");
    if (differ != 0)
        add(d, "with pairs %d-%d put back, %zu values still differ from the config in ggml's float32 arithmetic (up to "
               "%lld ULP)", first, last, differ, (long long)ulp);
    return true;
}

int cli_rope_identify_against(const posenc_rope_identity *id, const posenc_model_config *c, const posenc_array *cache,
                              const posenc_array *sin_table, bool json) {
    posenc_rope_params cfg = c->rope;
    int32_t r = 0;
    posenc_error err = {0};
    if (posenc_rope_check(&cfg, &r, &err) != POSENC_OK) return cli_fail_status("rope identify", &err);
    departures d = {.n = 0};
    const char *match = NULL;
    int within = -1; /* match within one grid step (not bit for bit): that arithmetic */
    int64_t ulp[POSENC_ROPE_ARITHS] = {-1, -1, -1};
    size_t differ[POSENC_ROPE_ARITHS] = {0, 0, 0};
    /* LongRoPE without a switch inside the cache: HF picks the list by the sequence's length
     * (long past the original context), llama.cpp by its context size (long when n_ctx exceeds
     * it, at every position): compare against the list the cache holds, and say which */
    const char *list_note = NULL;
    if (r == id->rotary_dim && cfg.scaling == POSENC_ROPE_LONGROPE && cfg.longrope_select == POSENC_LONGROPE_BY_SEQ_LEN &&
        id->switch_position == 0 && cfg.short_factors && cfg.long_factors) {
        int32_t K = r / 2;
        double *w = malloc(sizeof *w * (size_t)K), att, worst[2] = {INFINITY, INFINITY};
        for (int side = 0; w && side < 2; side++) {
            posenc_rope_params q = cfg;
            q.longrope_select = side ? POSENC_LONGROPE_LONG : POSENC_LONGROPE_SHORT;
            posenc_error e = {0};
            if (posenc_rope_frequencies(&q, 0, w, (size_t)K, &att, &e) != POSENC_OK) continue;
            worst[side] = 0;
            for (int32_t k = 0; k < K; k++)
                if (id->inv_freq[k] > 0) worst[side] = fmax(worst[side], fabs(id->inv_freq[k] / w[k] - 1));
        }
        free(w);
        bool hf_long = id->rows + id->offset > cfg.original_max_position;
        int side = worst[1] < worst[0];
        if (isfinite(worst[side])) {
            cfg.longrope_select = side ? POSENC_LONGROPE_LONG : POSENC_LONGROPE_SHORT;
            if (side != hf_long)
                list_note = side && id->layout == POSENC_CACHE_VLLM
                                ? "holds the config's long factors at every position: vLLM's choice when "
                                  "max_model_len exceeds the original context (its long_short_cos_sin_cache keeps "
                                  "both lists; every position then reads the long half); HF takes the long factors "
                                  "only for a sequence longer than the original context, so for a sequence this "
                                  "short HF's table holds the short ones"
                            : side ? "holds the config's long factors at every position: llama.cpp's choice when its "
                                   "context n_ctx exceeds the original context (it picks one list per context); HF "
                                   "takes the long factors only for a sequence longer than the original context, so "
                                   "for a sequence this short HF's table holds the short ones"
                                 : "holds the config's short factors for positions past the original context: HF "
                                   "and llama.cpp would take the long ones there";
        }
    }
    if (r != id->rotary_dim) {
        add(&d, "rotary dim %d where the config gives %d (head_dim %d): %s", id->rotary_dim, r, cfg.head_dim,
            id->rotary_dim < r ? "a partial rotary the config does not state" : "the cache rotates more channels");
    } else {
        static const posenc_mode modes[POSENC_ROPE_ARITHS] = {POSENC_MODE_PRECISE, POSENC_MODE_TORCH_COMPAT,
                                                              POSENC_MODE_GGML};
        static const char *const words[POSENC_ROPE_ARITHS] = {"exact arithmetic", "HF's float32 arithmetic",
                                                              "ggml's float32 arithmetic"};
        for (int a = 0; a < POSENC_ROPE_ARITHS; a++) {
            posenc_rope_params q = cfg;
            q.mode = modes[a];
            posenc_error e = {0};
            if (posenc_rope_cache_residual(cache, sin_table, id->layout, id->has_sin && !id->has_cos, 0, &q, &ulp[a],
                                           &differ[a], &e) != POSENC_OK)
                ulp[a] = -1;
            else if (!differ[a] && !match) match = words[a];
        }
        /* a 16-bit cache that the config's table reproduces to within one step of the grid: the
         * values that differ sit on a rounding boundary (the engine's float32 and ours round to
         * neighbours). The config then explains every value, and the fit's frequencies, which a
         * one-table half-precision profile measures percents off, back no departure. */
        if (!match && id->grid != POSENC_DTYPE_F32) {
            /* one step of the grid in the residual's units: f16's step at [0.5, 1) is its unit 2^-11;
             * bf16's is 2^-8, two of its 2^-9 units */
            int64_t step = id->grid == POSENC_DTYPE_BF16 ? 2 : 1;
            int wa = -1;
            for (int a = 0; a < POSENC_ROPE_ARITHS; a++)
                if (ulp[a] >= 0 && ulp[a] <= step && (wa < 0 || differ[a] < differ[wa])) wa = a;
            if (wa >= 0) match = words[wa], within = wa;
        }
        /* dynamic NTK fixed at one length: an engine that builds one table for its longest
         * sequence (vLLM: once, at max_position x factor) holds the config's NTK base at that
         * length at every position, where HF recomputes the base per sequence (and keeps the
         * plain base up to max_position tokens). Solve the length from the fitted base and
         * regenerate the table at that length in HF's float32 arithmetic. */
        bool dyn_len = false;
        if (!match && cfg.scaling == POSENC_ROPE_DYNAMIC && cfg.max_position > 0 && cfg.factor > 1 &&
            id->params.scaling == POSENC_ROPE_NONE && id->offset == 0 && id->params.base > cfg.base * (1 + 1e-6)) {
            double L0 = (double)cfg.max_position;
            double len = L0 * (pow(id->params.base / cfg.base, (r - 2.0) / r) + cfg.factor - 1) / cfg.factor;
            long long li = llround(len);
            /* HF's (and vLLM's) double steps: base * (factor * L / L0 - (factor - 1)) ** (R / (R - 2)) */
            double b2 = cfg.base * pow(cfg.factor * (double)li / L0 - (cfg.factor - 1), (double)r / (r - 2.0));
            posenc_rope_params q = cfg;
            q.scaling = POSENC_ROPE_NONE;
            q.factor = 1;
            q.base = b2;
            q.mode = POSENC_MODE_TORCH_COMPAT;
            int64_t u = -1;
            size_t dn = 0;
            posenc_error e = {0};
            if (li > cfg.max_position && fabs(len - (double)li) < 0.5 &&
                posenc_rope_cache_residual(cache, sin_table, id->layout, id->has_sin && !id->has_cos, 0, &q, &u, &dn,
                                           &e) == POSENC_OK) {
                char that[160];
                if (dn == 0) snprintf(that, sizeof that, "the cache is that table bit for bit in HF's float32 "
                                                         "arithmetic at that length");
                else snprintf(that, sizeof that, "that table in HF's float32 arithmetic: %zu values differ by up to "
                                                 "%lld ULP", dn, (long long)u);
                add(&d,
                    "holds the config's dynamic NTK at sequence length %lld (base %.10g at every position, from "
                    "position 0; %s): one table built for that length%s; HF recomputes the base per sequence and "
                    "keeps base %g up to %lld tokens (first visible at pair 1, position 1)",
                    li, b2, that,
                    id->layout == POSENC_CACHE_VLLM && li == llround(L0 * cfg.factor)
                        ? ", as vLLM builds its dynamic-NTK cache once, at max_position x factor"
                        : "",
                    cfg.base, (long long)cfg.max_position);
                dyn_len = true;
            }
        }
        /* the config's own frequencies and magnitude (precise), against the measured ones */
        int32_t K = r / 2;
        double *w = malloc(sizeof *w * (size_t)K), att = 1;
        if (!w || posenc_rope_frequencies(&cfg, id->rows + id->offset, w, (size_t)K, &att, &err) != POSENC_OK) {
            free(w);
            return cli_fail_status("rope identify", &err);
        }
        if (id->offset != 0)
            add(&d, "positions start at %lld: row 0 holds position %lld, the model's first token is position 0 "
                    "(shows at pair 0, row 0)",
                (long long)id->offset, (long long)id->offset);
        double mtol = id->grid == POSENC_DTYPE_F32 ? 2e-6 : 8e-3;
        if (!match && fabs(id->magnitude - att) > mtol * att) {
            char why[300];
            snprintf(why, sizeof why, "%s",
                     fabs(id->magnitude - 1) <= mtol && att != 1 ? ": the attention factor was dropped"
                     : fabs(att - 1) <= mtol ? ": an attention factor the config does not give was applied"
                                             : ": a different attention factor was applied");
            mscale_words(&cfg, id->magnitude, att, mtol, why, sizeof why);
            add(&d, "magnitude %.6g where the config's %s gives %.6g%s (shows at pair 0, position %lld)", id->magnitude,
                posenc_rope_scaling_name(cfg.scaling), att, why, (long long)id->offset);
        }
        if (list_note) add(&d, "%s (original context %lld)", list_note, (long long)cfg.original_max_position);
        if (id->switch_position > 0) { /* LongRoPE's short/long switch inside the cache */
            switch_words(&d, id, &cfg);
            free(w);
            goto words;
        }
        /* frequencies: runs of pairs whose measured w departs from the config's */
        int32_t run0 = -1;
        double worst = 0;
        char cache_s[120], cfg_s[120];
        scheme_text(cache_s, sizeof cache_s, &id->params);
        scheme_text(cfg_s, sizeof cfg_s, &cfg);
        double unit = id->grid == POSENC_DTYPE_BF16 ? 0x1p-9 : id->grid == POSENC_DTYPE_F16 ? 0x1p-11 : 0x1p-24;
        for (int32_t k = 0; k <= K && !match && !dyn_len; k++) {
            double rel = k < K && id->inv_freq[k] > 0 ? fabs(id->inv_freq[k] / w[k] - 1) : 0;
            /* the fit's noise: the grid's step over the angle the pair turns through the rows */
            double noise = k < K ? 8 * unit / fmax(id->inv_freq[k] * (double)id->rows, 1e-30) : 0;
            bool off = k < K && isfinite(id->pair_factor[k]) && rel > 1e-4 + noise;
            if (off && run0 < 0) run0 = k, worst = 0;
            if (off) worst = fmax(worst, rel);
            if (!off && run0 >= 0) {
                double dw = fabs(id->inv_freq[run0] - w[run0]);
                double p_show = dw > 0 ? ceil(unit / (dw * fmax(id->magnitude, 1e-30))) : 0;
                bool scheme_differs = id->params.scaling != cfg.scaling;
                add(&d, "pairs %d-%d", run0, k - 1); /* the sentence is written below */
                if (!scheme_differs) { /* same scheme, other parameters */
                    snprintf(d.text[d.n - 1], sizeof d.text[0],
                             "pairs %d-%d depart from the config's %s frequencies by up to %.3g%% (the cache fits "
                             "%s, base %g; first visible at pair %d, position %.0f)",
                             run0, k - 1, cfg_s, worst * 100, cache_s, id->params.base, run0,
                             (double)id->offset + p_show);
                } else {
                    snprintf(d.text[d.n - 1], sizeof d.text[0],
                             "pairs %d-%d follow %s, the config says %s (frequencies off by up to %.3g%%; first "
                             "visible at pair %d, position %.0f)",
                             run0, k - 1, cache_s, cfg_s, worst * 100, run0, (double)id->offset + p_show);
                }
                run0 = -1;
            }
        }
        free(w);
        if (!match) imrope_words(&d, id, c, cache, sin_table, &cfg, r);
    words:
        if (id->grid != POSENC_DTYPE_F32 && !match)
            add(&d, "the cache is rounded to %s (the config's table in float32 differs by up to %lld of its ULPs)",
                grid_words(id->grid), (long long)(ulp[1] >= 0 ? ulp[1] : ulp[0]));
        if (!match && d.n == 0) {
            int best = -1;
            for (int a = 0; a < POSENC_ROPE_ARITHS; a++)
                if (ulp[a] >= 0 && (best < 0 || differ[a] < differ[best])) best = a;
            if (best >= 0)
                add(&d, "frequencies and magnitude agree with the config, but no arithmetic reproduces every value: "
                        "closest %s, %zu values differ by up to %lld ULP; the cache itself fits %s",
                    words[best], differ[best], (long long)ulp[best], arith_words(id->arith));
        }
    }
    if (json) {
        printf("{\"matches\": %s, \"bit_for_bit\": %s, \"arithmetic\": ", match ? "true" : "false",
               match && within < 0 ? "true" : "false");
        if (match) cli_json_string(match);
        else printf("null");
        printf(", \"residual\": {");
        for (int a = 0; a < POSENC_ROPE_ARITHS; a++)
            printf("%s\"%s\": {\"max_ulp\": %lld, \"differ\": %zu}", a ? ", " : "",
                   posenc_rope_arith_name((posenc_rope_arith)a), (long long)ulp[a], differ[a]);
        printf("}, \"departures\": [");
        for (int i = 0; i < d.n; i++) {
            if (i) printf(", ");
            cli_json_string(d.text[i]);
        }
        printf("]}}\n");
        return EXIT_OK;
    }
    printf("against the config (%s):\n", c->architecture[0] ? c->architecture : "model");
    if (match && within >= 0)
        printf("  matches the config in %s, rounded to %s, to within one step of that grid (%zu of %zu values one "
               "step off: values on a rounding boundary, where another engine's float32 rounds the other way)\n",
               match, grid_words(id->grid), differ[within], id->values);
    else if (match)
        printf("  matches the config bit for bit in %s%s%s\n", match, id->grid != POSENC_DTYPE_F32 ? ", rounded to " : "",
               id->grid != POSENC_DTYPE_F32 ? grid_words(id->grid) : "");
    for (int i = 0; i < d.n; i++) printf("  - %s\n", d.text[i]);
    return EXIT_OK;
}
