/* cmd_rope_identify.c: `posenc rope identify CACHE.npy` -- which RoPE made
 * this cos/sin cache (posenc_rope_identify), in words or --json, and with
 * --config where it departs from what a model's config prescribes. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "cli.h"

#include <math.h>
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

/* Pairs held at angle 0 where the fit turns them (posenc_rope_identity_still_pairs), in words;
 * text mode, nothing printed when there are none. */
static void print_still_pairs(const posenc_array *cache, const posenc_array *sin_table, const posenc_rope_identity *id) {
    posenc_rope_still_pairs sp;
    posenc_error e = {0};
    if (posenc_rope_identity_still_pairs(cache, sin_table, id, &sp, &e) != POSENC_OK || sp.first < 0) return;
    printf("still pairs: %d-%d hold angle 0 at every row (measured frequency 0, up to %lld ULP off) where the "
           "fit turns them (%.3g rad per position); every other pair is bit for bit in %s: a position stream held "
           "at 0 for those pairs (ggml's IMROPE takes the pairs past 3 x its sections from a 4th stream, which "
           "llama.cpp sets to 0 for text tokens)\n",
           sp.first, sp.last, (long long)sp.max_ulp, sp.fit_inv_freq, arith_words(id->arith));
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

/* The library compares (posenc_rope_identity_compare); the sentences are
 * cli_word_departure's (identify_words.c). */
int cli_rope_identify_against(const posenc_rope_identity *id, const posenc_model_config *c, const posenc_array *cache,
                              const posenc_array *sin_table, bool json) {
    posenc_error err = {0};
    posenc_rope_comparison cmp;
    posenc_mrope_sections im = {.kind = POSENC_MROPE_INTERLEAVED, .axes = 3};
    for (int i = 0; i < 3; i++) im.sizes[i] = c->mrope_sections[i];
    if (posenc_rope_identity_compare(id, cache, sin_table, &c->rope, c->mrope_interleaved ? &im : NULL, &cmp, &err) !=
        POSENC_OK)
        return cli_fail_status("rope identify", &err);
    const char *match = cmp.matches ? cli_identify_arith_words(cmp.arith) : NULL;
    cli_buffer b = {0};
    if (json) {
        printf("{\"matches\": %s, \"bit_for_bit\": %s, \"arithmetic\": ", match ? "true" : "false",
               cmp.bit_for_bit ? "true" : "false");
        if (match) cli_json_string(match);
        else printf("null");
        printf(", \"residual\": {");
        for (int a = 0; a < POSENC_ROPE_ARITHS; a++)
            printf("%s\"%s\": {\"max_ulp\": %lld, \"differ\": %zu}", a ? ", " : "",
                   posenc_rope_arith_name((posenc_rope_arith)a), (long long)cmp.max_ulp[a], cmp.differ[a]);
        printf("}, \"departures\": [");
        for (int i = 0; i < cmp.departure_count; i++) {
            cli_words_clear(&b);
            cli_word_departure(&b, &cmp.departures[i], id, &cmp);
            if (i) printf(", ");
            cli_json_string(cli_words(&b));
        }
        printf("], \"departure_kinds\": [");
        for (int i = 0; i < cmp.departure_count; i++)
            printf("%s\"%s\"", i ? ", " : "", posenc_rope_departure_kind_name(cmp.departures[i].kind));
        printf("], \"departures_dropped\": %d}}\n", (int)cmp.departures_dropped);
    } else {
        printf("against the config (%s):\n", c->architecture[0] ? c->architecture : "model");
        if (match && !cmp.bit_for_bit)
            printf("  matches the config in %s, rounded to %s, to within one step of that grid (%zu of %zu values one "
                   "step off: values on a rounding boundary, where another engine's float32 rounds the other way)\n",
                   match, grid_words(id->grid), cmp.differ[cmp.arith], id->values);
        else if (match)
            printf("  matches the config bit for bit in %s%s%s\n", match, id->grid != POSENC_DTYPE_F32 ? ", rounded to " : "",
                   id->grid != POSENC_DTYPE_F32 ? grid_words(id->grid) : "");
        for (int i = 0; i < cmp.departure_count; i++) {
            cli_words_clear(&b);
            cli_word_departure(&b, &cmp.departures[i], id, &cmp);
            printf("  - %s\n", cli_words(&b));
        }
        if (cmp.departures_dropped > 0) printf("  (%d more departures not listed)\n", (int)cmp.departures_dropped);
    }
    bool failed = b.failed;
    cli_buffer_free(&b);
    return failed ? cli_fail("rope identify", EXIT_RUNTIME, NULL, "out of memory wording the departures") : EXIT_OK;
}
