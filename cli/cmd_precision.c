/* cmd_precision.c: `posenc precision` (dtype audit) and `posenc signal`
 * (was a position signal added to the token embeddings?). */
#include "cli.h"

#include <stdio.h>
#include <string.h>

static const cli_option precision_options[] = {
    {"dtype", "T", "the dtype audited, required: " CLI_DTYPE_NAMES " (audits: bf16, f16, f32)"},
    {"max-pos", "N", "audit positions 0..N, required (1..2^31)"},
    {"dim", "D", "channels (head_dim for RoPE), default 128"},
    {"base", "B", "frequency base, default 10000 (RoPE theta)"},
    {"freqs", "CONV", CLI_FREQS_NAMES "; default vaswani (sinusoid and RoPE)"},
    {"json", NULL, "machine-readable output (keys in docs/analysis.md)"},
    {NULL, NULL, NULL}};

static void precision_help(void) {
    printf("usage: posenc precision --dtype bf16|f16|f32 --max-pos N [--dim D] [--base B] [--freqs CONV] [--json]\n\n"
           "What a low-precision dtype does to an encoding: the first integer position it cannot hold, the first\n"
           "collision of two positions' angles (angles formed in the dtype) and of two table rows (exact angles,\n"
           "sin/cos stored in the dtype), the worst angle error per frequency pair, the worst attention-logit\n"
           "error for unit q/k at the max position, and a table by position band (256, 2048, 65504, 131072, 1e6).\n\n");
    cli_print_options(precision_options);
    printf("\nexample:\n  posenc precision --dtype bf16 --max-pos 131072 --dim 128 --base 500000\n");
}

static void print_json(const posenc_precision_report *r) {
    printf("{\"dtype\":\"%s\",\"max_pos\":%lld,\"pairs\":%d,\"first_inexact_position\":%lld,\"first_inexact_rounds_to\":",
           posenc_dtype_name(r->dtype), (long long)r->max_pos, r->pairs, (long long)r->first_inexact_position);
    cli_json_number(r->first_inexact_rounds_to);
    printf(",\"first_overflow_position\":%lld,\"first_angle_collision\":%lld,\"angle_collision_with\":%lld,"
           "\"first_table_collision\":%lld,\"table_collision_with\":%lld,\"table_search_limit\":%lld,\"frequencies\":",
           (long long)r->first_overflow_position, (long long)r->first_angle_collision, (long long)r->angle_collision_with,
           (long long)r->first_table_collision, (long long)r->table_collision_with, (long long)r->table_search_limit);
    cli_json_numbers(r->frequencies, (size_t)r->pairs);
    printf(",\"angle_error\":");
    cli_json_numbers(r->angle_error, (size_t)r->pairs);
    printf(",\"logit_error_angle\":");
    cli_json_number(r->logit_error_angle);
    printf(",\"logit_error_table\":");
    cli_json_number(r->logit_error_table);
    printf(",\"bands\":[");
    for (int b = 0; b < r->band_count; b++) {
        printf("%s{\"max_position\":%lld,\"positions_exact\":%s,\"angle_error\":", b ? "," : "",
               (long long)r->bands[b].max_position, r->bands[b].positions_exact ? "true" : "false");
        cli_json_number(r->bands[b].angle_error);
        printf(",\"logit_error\":");
        cli_json_number(r->bands[b].logit_error);
        printf("}");
    }
    printf("]}\n");
}

static void print_text(const posenc_precision_report *r) {
    const char *dt = posenc_dtype_name(r->dtype);
    printf("precision audit: %s, positions 0..%lld, %d frequency pairs\n\n", dt, (long long)r->max_pos, r->pairs);
    if (r->first_inexact_position >= 0)
        printf("first position not exact in %s:   %lld (becomes %.17g)\n", dt, (long long)r->first_inexact_position,
               r->first_inexact_rounds_to);
    else
        printf("every position up to %lld is exact in %s\n", (long long)r->max_pos, dt);
    if (r->first_overflow_position >= 0) printf("first position that overflows to inf: %lld\n", (long long)r->first_overflow_position);
    if (r->first_angle_collision >= 0)
        printf("angles formed in %s: position %lld gets the same angles as %lld\n", dt,
               (long long)r->first_angle_collision, (long long)r->angle_collision_with);
    else
        printf("angles formed in %s: no two positions collide up to %lld\n", dt, (long long)r->max_pos);
    if (r->first_table_collision >= 0)
        printf("sin/cos stored in %s: row %lld equals row %lld\n", dt, (long long)r->first_table_collision,
               (long long)r->table_collision_with);
    else
        printf("sin/cos stored in %s: all rows distinct up to %lld\n", dt, (long long)r->table_search_limit);
    printf("worst logit error, unit q/k, q at %lld: %.4g (angles formed in %s), %.4g (tables stored in %s)\n\n",
           (long long)r->max_pos, r->logit_error_angle, dt, r->logit_error_table, dt);
    printf("pair  frequency      wavelength     worst angle error (rad, angle formed in %s)\n", dt);
    int32_t step = r->pairs > 16 ? r->pairs / 8 : 1;
    for (int32_t k = 0; k < r->pairs; k += step)
        printf("%4d  %-13.6g  %-13.6g  %.4g\n", k, r->frequencies[k], 6.283185307179586 / r->frequencies[k], r->angle_error[k]);
    if (step > 1)
        printf("%4d  %-13.6g  %-13.6g  %.4g\n", r->pairs - 1, r->frequencies[r->pairs - 1],
               6.283185307179586 / r->frequencies[r->pairs - 1], r->angle_error[r->pairs - 1]);
    printf("\npositions up to   exact   worst angle error   worst logit error\n");
    for (int b = 0; b < r->band_count; b++)
        printf("%-16lld  %-6s  %-18.4g  %.4g\n", (long long)r->bands[b].max_position,
               r->bands[b].positions_exact ? "yes" : "no", r->bands[b].angle_error, r->bands[b].logit_error);
}

int cmd_precision(int argc, char **argv) {
    cli_args a;
    int rc = cli_parse(&a, "precision", precision_options, argc, argv, 0);
    if (rc != EXIT_OK) return rc;
    if (a.help) {
        precision_help();
        return EXIT_OK;
    }
    cli_dtype_choice dtype;
    cli_dtype_default(&dtype);
    int64_t max_pos = 0;
    int32_t dim = 128;
    if (!cli_get_dtype(&a, "dtype", &dtype) || !cli_int64(&a, "max-pos", 1, (int64_t)1 << 31, &max_pos) ||
        !cli_int32(&a, "dim", 2, 1 << 16, &dim))
        return EXIT_USAGE;
    if (!cli_has(&a, "dtype") || !cli_has(&a, "max-pos"))
        return cli_fail("precision", EXIT_USAGE, "posenc precision --dtype bf16 --max-pos 131072", "--dtype and --max-pos are required");
    posenc_sinusoid_params p;
    posenc_sinusoid_params_default(&p, dim);
    if (!cli_double(&a, "base", &p.base) || !cli_get_freqs(&a, "freqs", &p.freqs)) return EXIT_USAGE;
    p.odd = POSENC_ODD_PAD;
    if (dtype.compute == POSENC_DTYPE_F64)
        return cli_fail("precision", EXIT_USAGE, "audit bf16, f16 or f32",
                        "--dtype f64 has nothing to audit: float64 is the reference the audit compares against");
    posenc_precision_report r;
    posenc_error err = {0};
    if (posenc_precision_audit(&p, dtype.compute, max_pos, &r, &err) != POSENC_OK) {
        if (err.status == POSENC_ERR_LIMIT) /* the request is too large: a usage error */
            return cli_fail("precision", EXIT_USAGE, "lower --max-pos or --dim", "%s", err.message);
        return cli_fail_status("precision", &err);
    }
    if (cli_has(&a, "json")) print_json(&r);
    else print_text(&r);
    posenc_precision_report_free(&r);
    return EXIT_OK;
}

/* ---- posenc signal ---- */

static const cli_option signal_options[] = {
    {"json", NULL, "machine-readable output (keys in docs/analysis.md)"},
    {"max-bytes", "N", "refuse inputs larger than N bytes (default 4 GiB; env POSENC_MAX_BYTES)"},
    {NULL, NULL, NULL}};

int cmd_signal(int argc, char **argv) {
    cli_args a;
    int rc = cli_parse(&a, "signal", signal_options, argc, argv, 2);
    if (rc != EXIT_OK) return rc;
    if (a.help) {
        printf("usage: posenc signal TOKENS.npy INPUTS.npy [--json]\n\n"
               "TOKENS holds the token embeddings of a sequence ([T, D]) or a batch ([B, T, D]); INPUTS the model's\n"
               "input embeddings for the same tokens (a batch: the scale is fitted within each position, across\n"
               "the sequences). Reports whether a position signal was added, the token scale (1 or sqrt(d)),\n"
               "the signal's strength, and whether it is sinusoidal (with its fitted convention) or learned.\n\n");
        cli_print_options(signal_options);
        return EXIT_OK;
    }
    if (a.positional_count != 2)
        return cli_fail("signal", EXIT_USAGE, "posenc signal TOKENS.npy INPUTS.npy", "give two files, got %d", a.positional_count);
    posenc_array t = {0}, x = {0};
    if ((rc = cli_read_table("signal", a.positional[0], NULL, cli_max_bytes(&a), &t)) != EXIT_OK) return rc;
    if ((rc = cli_read_table("signal", a.positional[1], NULL, cli_max_bytes(&a), &x)) != EXIT_OK) {
        posenc_array_free(&t);
        return rc;
    }
    posenc_signal_report r;
    posenc_error err = {0};
    cli_buffer words = {0};
    if (posenc_signal_detect(&t, &x, &r, &err) != POSENC_OK) {
        rc = cli_fail_status("signal", &err);
    } else if (cli_word_signal(&words, &r), words.failed) {
        rc = cli_fail("signal", EXIT_RUNTIME, NULL, "out of memory");
    } else if (cli_has(&a, "json")) {
        printf("{\"present\":%s,\"token_scale\":", r.present ? "true" : "false");
        cli_json_number(r.token_scale);
        printf(",\"scale_is_sqrt_dim\":%s,\"signal_rms\":", r.scale_is_sqrt_dim ? "true" : "false");
        cli_json_number(r.signal_rms);
        printf(",\"signal_row_spread\":");
        cli_json_number(r.signal_row_spread);
        printf(",\"relative_residual\":");
        cli_json_number(r.relative_residual);
        printf(",\"sequences\":%zu,\"positions\":%zu,\"sequence_spread\":", r.sequences, r.positions);
        cli_json_number(r.sequence_spread);
        printf(",\"sinusoidal\":%s,\"fit\":", r.sinusoidal ? "true" : "false");
        cli_print_fit_json(&r.fit);
        printf(",\"verdict_code\":%d,\"verdict\":", (int)r.verdict);
        cli_json_string(cli_words(&words));
        printf("}\n");
    } else {
        printf("position signal present: %s\ntoken scale %.6g%s\nsignal rms %.6g (relative to inputs %.3g), "
               "row spread %.3g\n", r.present ? "yes" : "no", r.token_scale, r.scale_is_sqrt_dim ? " (sqrt(d))" : "",
               r.signal_rms, r.relative_residual, r.signal_row_spread);
        if (r.sequences > 1)
            printf("%zu sequences of %zu positions; the signal differs between them by %.3g of its rms\n", r.sequences,
                   r.positions, r.sequence_spread);
        if (r.present && r.verdict != POSENC_SIGNAL_PER_SEQUENCE) cli_print_fit_text("signal", &r.fit);
        printf("\n%s\n", cli_words(&words));
    }
    cli_buffer_free(&words);
    posenc_signal_report_free(&r);
    posenc_array_free(&t);
    posenc_array_free(&x);
    return rc;
}
