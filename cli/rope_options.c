/* rope_options.c: the one list of RoPE frequency flags (CLI_ROPE_SCALING_OPTIONS
 * in cli.h), parsed the same way for `rope freqs`, `rope apply`, `report` and
 * `plot`: each flag sets one field of posenc_rope_params and records that it
 * was stated, so posenc_rope_resolve derives the rest exactly as it does for
 * a config file. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const scaling_flags[] = {
    "scaling", "factor", "original-max", "beta-fast", "beta-slow", "mscale", "mscale-all-dim", "attention-factor",
    "no-truncate", "low-freq-factor", "high-freq-factor", "short-factors", "long-factors", "longrope", "rotary-dim",
    "partial", "torch-compat", "precise", "mode", NULL};
static const char *const mode_choices[] = {"precise", "torch-compat", "ggml", NULL};
static const char *const longrope_choices[] = {"by-seq-len", "short", "long", NULL};

const char *cli_rope_scaling_flag_given(const cli_args *args, const char *const *except) {
    for (int i = 0; scaling_flags[i]; i++) {
        bool skip = false;
        for (int j = 0; except && except[j]; j++) skip = skip || strcmp(except[j], scaling_flags[i]) == 0;
        if (!skip && cli_has(args, scaling_flags[i])) return scaling_flags[i];
    }
    return NULL;
}

void cli_rope_scaling_free(cli_rope_scaling *q) {
    free(q->short_list);
    free(q->long_list);
    q->short_list = q->long_list = NULL;
}

static int read_factor_list(const char *cmd, const char *path, double **out, size_t *count) {
    posenc_error err = {0};
    posenc_array a, f;
    if (posenc_npy_read(path, 0, &a, &err) != POSENC_OK) return cli_fail_status(cmd, &err);
    int rc = EXIT_OK;
    if (a.ndim != 1 || (a.dtype != POSENC_DTYPE_F32 && a.dtype != POSENC_DTYPE_F64)) {
        rc = cli_fail(cmd, EXIT_USAGE, "np.save(path, np.array(factors, dtype=np.float64))",
                      "factor list %s must be a 1-D float32/float64 array, got rank %d %s", path, a.ndim,
                      posenc_dtype_name(a.dtype));
    } else if (posenc_array_to_f64(&a, &f, &err) != POSENC_OK) {
        rc = cli_fail_status(cmd, &err);
    } else {
        *out = f.data;
        *count = f.count;
    }
    posenc_array_free(&a);
    return rc;
}

int cli_rope_scaling_parse(const char *cmd, const cli_args *a, cli_rope_scaling *q) {
    posenc_rope_params *p = &q->params;
    int select = -1;
    posenc_rope_scaling chosen = p->scaling;
    int64_t orig = p->original_max_position, rotary = p->rotary_dim;
    if (!cli_get_scaling(a, "scaling", &chosen) || !cli_double(a, "factor", &p->factor) ||
        !cli_int64(a, "original-max", INT64_MIN, INT64_MAX, &orig) || !cli_double(a, "beta-fast", &p->beta_fast) ||
        !cli_double(a, "beta-slow", &p->beta_slow) || !cli_double(a, "mscale", &p->mscale) ||
        !cli_double(a, "mscale-all-dim", &p->mscale_all_dim) || !cli_double(a, "attention-factor", &p->attention_factor) ||
        !cli_double(a, "low-freq-factor", &p->low_freq_factor) || !cli_double(a, "high-freq-factor", &p->high_freq_factor) ||
        !cli_choice(a, "longrope", longrope_choices, &select) || !cli_int64(a, "rotary-dim", INT32_MIN, INT32_MAX, &rotary) ||
        !cli_double(a, "partial", &p->partial_rotary_factor))
        return EXIT_USAGE;
    if (cli_has(a, "original-max") && orig <= 0)
        return cli_fail(cmd, EXIT_USAGE, NULL, "--original-max must be > 0, got %lld", (long long)orig);
    if (cli_has(a, "rotary-dim") && rotary <= 0)
        return cli_fail(cmd, EXIT_USAGE, NULL, "--rotary-dim must be > 0, got %lld", (long long)rotary);
    if (cli_has(a, "rotary-dim") && cli_has(a, "partial"))
        return cli_fail(cmd, EXIT_USAGE, NULL, "give --rotary-dim or --partial, not both");
    if (cli_has(a, "partial")) rotary = 0;
    p->original_max_position = orig;
    p->rotary_dim = (int32_t)rotary;
    if (cli_has(a, "scaling")) {
        if (chosen != p->scaling && p->scaling == POSENC_ROPE_LONGROPE && !cli_has(a, "short-factors")) {
            p->short_factors = p->long_factors = NULL;
            p->factors_count = 0;
        }
        p->scaling = chosen;
    }
    if (select >= 0) p->longrope_select = (posenc_rope_longrope_select)select;
    if (cli_has(a, "no-truncate")) p->truncate = 0;
    if (!cli_get_mode(a, &p->mode)) return EXIT_USAGE;
    int mode = -1;
    if (!cli_choice(a, "mode", mode_choices, &mode)) return EXIT_USAGE;
    if (mode >= 0 && (cli_has(a, "precise") || cli_has(a, "torch-compat")))
        return cli_fail(cmd, EXIT_USAGE, NULL, "give --mode or --precise/--torch-compat, not both");
    if (mode >= 0) /* the choices are listed in posenc_mode's order */
        p->mode = mode == 2 ? POSENC_MODE_GGML : mode == 1 ? POSENC_MODE_TORCH_COMPAT : POSENC_MODE_PRECISE;
    if (mode == 1 && !cli_torch_math_usable(cmd)) return EXIT_RUNTIME;
    if (p->scaling == POSENC_ROPE_NONE && cli_has(a, "factor"))
        return cli_fail(cmd, EXIT_USAGE, "add --scaling linear|ntk|dynamic|yarn|longrope|llama3",
                        "--factor %g has no effect with --scaling none", p->factor);
    if (cli_has(a, "factor")) q->given = (q->given | POSENC_ROPE_GIVEN_FACTOR) & ~POSENC_ROPE_GIVEN_CONTEXT_RATIO;
    if (cli_has(a, "original-max")) q->given |= POSENC_ROPE_GIVEN_ORIGINAL;
    if (cli_has(a, "short-factors") != cli_has(a, "long-factors"))
        return cli_fail(cmd, EXIT_USAGE, NULL, "give both --short-factors and --long-factors");
    if (cli_has(a, "short-factors")) {
        size_t ns = 0, nl = 0;
        int rc = read_factor_list(cmd, cli_string(a, "short-factors", ""), &q->short_list, &ns);
        if (rc == EXIT_OK) rc = read_factor_list(cmd, cli_string(a, "long-factors", ""), &q->long_list, &nl);
        if (rc != EXIT_OK) return rc;
        if (ns != nl)
            return cli_fail(cmd, EXIT_USAGE, NULL, "--short-factors has %zu entries but --long-factors has %zu", ns, nl);
        p->short_factors = q->short_list;
        p->long_factors = q->long_list;
        p->factors_count = ns;
    }
    return EXIT_OK;
}
