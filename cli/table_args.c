/* table_args.c: which table `plot` and `report` draw, from their flags: a table
 * file, a model's --config, or the encoding flags (CLI_TABLE_OPTIONS). The tables
 * themselves are computed by the drawing library (render/render_source.c). */
#include "cli.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A model's RoPE, as its config.json or GGUF header describes it. */
static int table_from_config(const char *command, const cli_args *a, cli_table *t) {
    const char *model_flags[] = {"kind", "dim", "base", "freqs", "layout", "scaling", "factor", "original-max", "seed",
                                 "sigma"};
    const char *rope_flag = cli_rope_scaling_flag_given(a, NULL);
    for (size_t i = 0; i < sizeof model_flags / sizeof *model_flags + 1; i++) {
        const char *flag = i < sizeof model_flags / sizeof *model_flags ? model_flags[i] : rope_flag;
        if (flag && cli_has(a, flag))
            return cli_fail(command, EXIT_USAGE, "--config sets the RoPE; --len and --start choose the positions",
                            "--%s cannot be combined with --config", flag);
    }
    int64_t len = 128, start = 0;
    if (!cli_int64(a, "len", 1, INT64_MAX, &len) || !cli_int64(a, "start", 0, INT64_MAX, &start)) return EXIT_USAGE;
    const char *path = cli_string(a, "config", "");
    posenc_model model;
    int read = cli_read_model(command, a, &model);
    if (read != EXIT_OK) return read;
    if (model.rope_count == 0) { /* ALiBi, learned, T5, NoPE: draw what the model has */
        int rc = cli_table_from_model(command, &model, len, start, path, t);
        if (rc == EXIT_OK) cli_model_layers_text(&model, t->layers, sizeof t->layers);
        posenc_model_free(&model);
        return rc;
    }
    posenc_model_config cfg = model.config;
    model.config.factor_storage = NULL; /* moved into cfg */
    char layers[sizeof t->layers];
    cli_model_layers_text(&model, layers, sizeof layers);
    posenc_model_free(&model);
    int rc = cli_table_rope(command, len, start, &cfg.rope, t);
    if (rc == EXIT_OK) memcpy(t->layers, layers, sizeof layers);
    if (rc == EXIT_OK) {
        const char *base = strrchr(path, '/');
        snprintf(t->name, sizeof t->name, "rope (%.48s)", cfg.architecture[0] ? cfg.architecture : "model");
        snprintf(t->about, sizeof t->about,
                 "RoPE of %s: head_dim %d, theta %g, scaling %s factor %g (L0 %lld), %lld positions from %lld, cos|sin",
                 base ? base + 1 : path, cfg.rope.head_dim, cfg.rope.base, posenc_rope_scaling_name(cfg.rope.scaling),
                 cfg.rope.factor, (long long)cfg.rope.original_max_position, (long long)len, (long long)start);
        /* the frequencies at the longest context the model claims (dynamic schemes
         * depend on it), so the report can show where the scaling acts */
        int64_t longest = cfg.rope.max_position;
        if (longest <= 0 && cfg.rope.original_max_position > 0 && cfg.rope.factor >= 1 &&
            cfg.rope.factor * (double)cfg.rope.original_max_position < 9e15)
            longest = (int64_t)(cfg.rope.factor * (double)cfg.rope.original_max_position);
        if (longest > 1 && t->pairs > 0) {
            t->rope_long_frequencies = malloc(sizeof(double) * t->pairs);
            posenc_error ferr = {0};
            if (t->rope_long_frequencies &&
                posenc_rope_frequencies(&cfg.rope, longest, t->rope_long_frequencies, t->pairs, NULL, &ferr) == POSENC_OK)
                t->rope_long_context = longest;
            else
                free(t->rope_long_frequencies), t->rope_long_frequencies = NULL;
        }
        if (cfg.warnings)
            cli_note(command, "%s: the config has warnings (see posenc rope explain --config %s)", path, path);
    }
    posenc_model_config_free(&cfg);
    return rc;
}

int cli_table_from_args(const char *command, const cli_args *a, cli_table *t) {
    memset(t, 0, sizeof *t);
    if (a->positional_count > 0) {
        const char *flags[] = {"kind", "len", "dim", "base", "freqs", "layout", "start",
                               "scaling", "factor", "original-max", "seed", "sigma", "config"};
        const char *rope_flag = cli_rope_scaling_flag_given(a, NULL);
        for (size_t i = 0; i < sizeof flags / sizeof *flags + 1; i++) {
            const char *flag = i < sizeof flags / sizeof *flags ? flags[i] : rope_flag;
            if (flag && cli_has(a, flag))
                return cli_fail(command, EXIT_USAGE, NULL, "give a table file or --%s and the other encoding flags, not both",
                                flag);
        }
        return cli_table_read(command, a->positional[0], cli_max_bytes(a), t);
    }
    if (cli_has(a, "config")) return table_from_config(command, a, t);
    int kind = 0;
    int64_t len = 128, start = 0;
    int32_t dim = 64;
    posenc_sinusoid_params p;
    posenc_sinusoid_params_default(&p, 1);
    if (!cli_choice(a, "kind", cli_table_kind_names, &kind) || !cli_get_freqs(a, "freqs", &p.freqs) ||
        !cli_get_layout(a, "layout", &p.layout) || !cli_int64(a, "len", 1, INT64_MAX, &len) ||
        !cli_int32(a, "dim", 1, INT32_MAX, &dim) || !cli_int64(a, "start", 0, INT64_MAX, &start))
        return EXIT_USAGE;
    /* a flag another kind would ignore is an error, never silently dropped */
    static const struct { const char *flag; int kind; } owned[] = {
        {"scaling", CLI_TABLE_ROPE}, {"factor", CLI_TABLE_ROPE}, {"original-max", CLI_TABLE_ROPE}, {"seed", CLI_TABLE_LEARNED},
        {"sigma", CLI_TABLE_LEARNED}, {"freqs", CLI_TABLE_SINUSOIDAL}, {"layout", CLI_TABLE_SINUSOIDAL}};
    for (size_t i = 0; i < sizeof owned / sizeof *owned; i++)
        if (cli_has(a, owned[i].flag) && owned[i].kind != kind)
            return cli_fail(command, EXIT_USAGE, NULL, "--%s applies to --kind %s, not %s", owned[i].flag,
                            cli_table_kind_names[owned[i].kind], cli_table_kind_names[kind]);
    if (cli_rope_scaling_flag_given(a, NULL) && kind != CLI_TABLE_ROPE)
        return cli_fail(command, EXIT_USAGE, NULL, "--%s applies to --kind rope, not %s", cli_rope_scaling_flag_given(a, NULL),
                        cli_table_kind_names[kind]);
    if (kind == CLI_TABLE_LEARNED) {
        int64_t seed = 0;
        double sigma = POSENC_LEARNED_SIGMA_DEFAULT;
        if (!cli_int64(a, "seed", 0, INT64_MAX, &seed) || !cli_double(a, "sigma", &sigma)) return EXIT_USAGE;
        if (cli_has(a, "base") || cli_has(a, "start"))
            return cli_fail(command, EXIT_USAGE, NULL, "--base and --start do not apply to --kind learned");
        return cli_table_learned(command, len, dim, (uint64_t)seed, sigma, t);
    }
    if (kind == CLI_TABLE_ROPE) {
        /* the RoPE flags of `rope freqs` (one list, one parser); a bare --scaling draws with
         * factor 4 (llama3: 8) and trained context 8192, stated as if given */
        cli_rope_scaling q = {0};
        posenc_rope_params *rp = &q.params;
        posenc_rope_params_default(rp, dim);
        posenc_error err = {0};
        if (!cli_double(a, "base", &rp->base)) return EXIT_USAGE;
        int rc = cli_rope_scaling_parse(command, a, &q);
        if (rc == EXIT_OK && rp->scaling != POSENC_ROPE_NONE) {
            if (!(q.given & POSENC_ROPE_GIVEN_FACTOR)) rp->factor = rp->scaling == POSENC_ROPE_LLAMA3 ? 8 : 4;
            if (!(q.given & POSENC_ROPE_GIVEN_ORIGINAL)) rp->original_max_position = 8192;
            if (rp->scaling == POSENC_ROPE_DYNAMIC) rp->max_position = rp->original_max_position;
            q.given |= POSENC_ROPE_GIVEN_FACTOR | POSENC_ROPE_GIVEN_ORIGINAL;
        }
        if (rc == EXIT_OK && posenc_rope_resolve(rp, q.given, NULL, &err) != POSENC_OK) rc = cli_fail_status(command, &err);
        if (rc == EXIT_OK) rc = cli_table_rope(command, len, start, rp, t);
        cli_rope_scaling_free(&q);
        return rc;
    }
    p.dim = dim;
    if (!cli_double(a, "base", &p.base)) return EXIT_USAGE;
    return cli_table_compute(command, kind, len, &p, start, t);
}
