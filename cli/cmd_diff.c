/* cmd_diff.c: `posenc diff A B`: compare two tables (or two RoPE outputs
 * given their common input) and print the statistics and the diagnosis. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cli_option diff_options[] = {
    {"tol", "X", "absolute tolerance, default 1e-5"},
    {"input", "X.npy", "the unrotated RoPE input: A and B are then rotated outputs R(x), [T,D] or [T,H,D]"},
    {"heads", "H", "2-D tables hold H heads side by side ([T, H*D]): check per-head channel permutations"},
    {"max-offset", "K", "position offsets tried, default min(64, rows/2)"},
    {"tensor", "NAME", "tensor to read from .safetensors inputs"},
    {"json", NULL, "machine-readable output (keys in docs/analysis.md)"},
    {"fail-on-diff", NULL, "exit 3 when A and B differ beyond --tol (default: exit 0 after a comparison)"},
    {"max-bytes", "N", "refuse inputs larger than N bytes (default 4 GiB; env POSENC_MAX_BYTES)"},
    {NULL, NULL, NULL}};

static void diff_help(void) {
    printf("usage: posenc diff A.npy B.npy [--tol X] [--input X.npy] [--json]\n\n"
           "Compare two position tables: max/mean absolute and relative error, a float32 ULP histogram,\n"
           "the first (position, channel) beyond tolerance and the divergence onset; then test hypotheses\n"
           "(offset, layout, sin/cos order, frequency convention, base, angle precision, transposed, prefix,\n"
           "padding rows, per-head permutation) and name those that explain the difference.\n\n");
    cli_print_options(diff_options);
    printf("\nexamples:\n"
           "  posenc diff tutorial.npy fairseq.npy\n"
           "  posenc diff hf_neox_q.npy ggml_neox_q.npy --input x.npy --tol 1e-5\n"
           "exit: 0 compared (even if different, unless --fail-on-diff: 3), 1 unreadable file, 2 usage or\n"
           "shapes that no relation explains\n");
}

static const char *const ulp_labels[POSENC_ULP_BUCKETS] = {"0", "1", "2-3", "4-15", "16-255", "256-65535",
                                                             ">=65536", "non-finite"};

static void print_json(const posenc_diff_report *r) {
    printf("{\"shapes_equal\":%s,\"shape_a\":[%zu,%zu],\"shape_b\":[%zu,%zu],\"tolerance\":", r->shapes_equal ? "true" : "false",
           r->rows_a, r->cols_a, r->rows_b, r->cols_b);
    cli_json_number(r->tolerance);
    if (r->shapes_equal) {
        printf(",\"compared\":%zu,\"max_abs\":", r->compared);
        cli_json_number(r->max_abs);
        printf(",\"max_abs_at\":[%lld,%lld],\"mean_abs\":", (long long)r->max_abs_row, (long long)r->max_abs_channel);
        cli_json_number(r->mean_abs);
        printf(",\"max_rel\":");
        cli_json_number(r->max_rel);
        printf(",\"mean_rel\":");
        cli_json_number(r->mean_rel);
        printf(",\"ulp_histogram\":{");
        for (int i = 0; i < POSENC_ULP_BUCKETS; i++) printf("%s\"%s\":%zu", i ? "," : "", ulp_labels[i], r->ulp_histogram[i]);
        printf("},\"nonfinite_a\":%zu,\"nonfinite_b\":%zu,\"first_beyond_tol\":", r->nonfinite_a, r->nonfinite_b);
        if (r->first_beyond_row >= 0) printf("[%lld,%lld]", (long long)r->first_beyond_row, (long long)r->first_beyond_channel);
        else printf("null");
        printf(",\"divergence_onset\":");
        if (r->divergence_onset >= 0) printf("%lld", (long long)r->divergence_onset);
        else printf("null");
        printf(",\"channel_max_abs\":");
        cli_json_numbers(r->channel_max_abs, r->cols_a);
        printf(",\"bands\":[");
        for (int b = 0; b < r->band_count; b++) {
            printf("%s{\"end\":%lld,\"max_abs\":", b ? "," : "", (long long)r->band_end[b]);
            cli_json_number(r->band_max_abs[b]);
            printf("}");
        }
        printf("]");
    }
    printf(",\"fit_a\":");
    cli_print_fit_json(&r->fit_a);
    printf(",\"fit_b\":");
    cli_print_fit_json(&r->fit_b);
    cli_buffer words = {0};
    printf(",\"preset_a\":");
    cli_word_preset(&words, &r->fit_a, r->preset_a);
    cli_json_string(cli_words(&words));
    printf(",\"preset_b\":");
    cli_words_clear(&words);
    cli_word_preset(&words, &r->fit_b, r->preset_b);
    cli_json_string(cli_words(&words));
    printf(",\"findings\":[");
    for (int i = 0; i < r->finding_count; i++) {
        const posenc_finding *f = &r->findings[i];
        printf("%s{\"key\":", i ? "," : "");
        cli_json_string(f->key);
        printf(",\"value\":");
        cli_json_number(f->value);
        printf(",\"a\":");
        cli_json_number(f->a);
        printf(",\"b\":");
        cli_json_number(f->b);
        printf(",\"evidence\":");
        cli_json_number(f->evidence);
        printf(",\"from_fit\":%s,\"text\":", f->from_fit ? "true" : "false");
        cli_words_clear(&words);
        cli_word_finding(&words, r, f);
        cli_json_string(cli_words(&words));
        printf("}");
    }
    printf("],\"explained\":%s,\"summary\":", r->explained ? "true" : "false");
    cli_words_clear(&words);
    cli_word_diff_summary(&words, r);
    cli_json_string(cli_words(&words));
    printf("}\n");
    cli_buffer_free(&words);
}

static void print_text(const char *pa, const char *pb, const posenc_diff_report *r) {
    printf("A: %s [%zu x %zu]\nB: %s [%zu x %zu]\n", pa, r->rows_a, r->cols_a, pb, r->rows_b, r->cols_b);
    if (r->shapes_equal) {
        printf("\nmax |A-B|   %.6g at (position %lld, channel %lld)\n", r->max_abs, (long long)r->max_abs_row,
               (long long)r->max_abs_channel);
        printf("mean |A-B|  %.6g\nmax rel     %.6g   (|A-B| / max(|A|,|B|))\nmean rel    %.6g\n", r->mean_abs,
               r->max_rel, r->mean_rel);
        printf("tolerance   %.3g\n", r->tolerance);
        if (r->first_beyond_row >= 0)
            printf("first beyond tolerance: position %lld, channel %lld\ndivergence onset: position %lld\n",
                   (long long)r->first_beyond_row, (long long)r->first_beyond_channel, (long long)r->divergence_onset);
        else
            printf("every element within tolerance\n");
        if (r->nonfinite_a || r->nonfinite_b)
            printf("non-finite values: A %zu, B %zu\n", r->nonfinite_a, r->nonfinite_b);
        printf("\npositions below   max |A-B|\n");
        for (int b = 0; b < r->band_count; b++) printf("  %-15lld %.6g\n", (long long)r->band_end[b], r->band_max_abs[b]);
        size_t worst = 0;
        for (size_t c = 1; c < r->cols_a; c++)
            if (r->channel_max_abs[c] > r->channel_max_abs[worst]) worst = c;
        printf("worst channel: %zu (max |A-B| %.6g; all channels with --json)\n", worst, r->channel_max_abs[worst]);
        printf("\nfloat32 ULP distance   count\n");
        for (int i = 0; i < POSENC_ULP_BUCKETS; i++)
            if (r->ulp_histogram[i]) printf("  %-20s %zu\n", ulp_labels[i], r->ulp_histogram[i]);
    } else {
        printf("\nshapes differ: A [%zu x %zu], B [%zu x %zu]\n", r->rows_a, r->cols_a, r->rows_b, r->cols_b);
    }
    printf("\nmodels fitted to the data:\n");
    cli_print_fit_text("A", &r->fit_a);
    cli_print_fit_text("B", &r->fit_b);
    printf("\nDIAGNOSIS\n");
    cli_buffer words = {0};
    for (int i = 0; i < r->finding_count; i++) {
        cli_words_clear(&words);
        cli_word_finding(&words, r, &r->findings[i]);
        printf("  [%s] %s\n", r->findings[i].key, cli_words(&words));
    }
    if (!r->finding_count) printf("  (no finding)\n");
    cli_words_clear(&words);
    cli_word_diff_summary(&words, r);
    printf("\n%s\n", cli_words(&words));
    cli_buffer_free(&words);
}

int cmd_diff(int argc, char **argv) {
    cli_args a;
    int rc = cli_parse(&a, "diff", diff_options, argc, argv, 2);
    if (rc != EXIT_OK) return rc;
    if (a.help) {
        diff_help();
        return EXIT_OK;
    }
    if (a.positional_count != 2)
        return cli_fail("diff", EXIT_USAGE, "posenc diff A.npy B.npy", "give two tables, got %d", a.positional_count);
    posenc_diff_options o = {0};
    int64_t heads = 0, max_offset = 0;
    if (!cli_double(&a, "tol", &o.tolerance) || !cli_int64(&a, "heads", 1, 1 << 20, &heads) ||
        !cli_int64(&a, "max-offset", 1, 1 << 20, &max_offset))
        return EXIT_USAGE;
    if (cli_has(&a, "tol") && !(o.tolerance > 0))
        return cli_fail("diff", EXIT_USAGE, NULL, "--tol must be > 0, got %g", o.tolerance);
    o.heads = (size_t)heads, o.max_offset = (size_t)max_offset;
    size_t limit = cli_max_bytes(&a);
    const char *tensor = cli_string(&a, "tensor", NULL);
    posenc_array ta = {0}, tb = {0}, tx = {0};
    if ((rc = cli_read_table("diff", a.positional[0], tensor, limit, &ta)) != EXIT_OK) return rc;
    if ((rc = cli_read_table("diff", a.positional[1], tensor, limit, &tb)) != EXIT_OK) goto done;
    if (cli_has(&a, "input")) {
        if ((rc = cli_read_table("diff", cli_string(&a, "input", ""), NULL, limit, &tx)) != EXIT_OK) goto done;
        o.input = &tx;
    }
    posenc_diff_report r;
    posenc_error err = {0};
    if (posenc_diff_tables(&ta, &tb, &o, &r, &err) != POSENC_OK) {
        rc = cli_fail_status("diff", &err);
        goto done;
    }
    if (cli_has(&a, "json")) print_json(&r);
    else print_text(a.positional[0], a.positional[1], &r);
    bool differs = !(r.shapes_equal && r.first_beyond_row < 0 && r.nonfinite_a == r.nonfinite_b);
    rc = cli_has(&a, "fail-on-diff") && differs ? 3 : EXIT_OK;
    posenc_diff_report_free(&r);
done:
    posenc_array_free(&ta);
    posenc_array_free(&tb);
    posenc_array_free(&tx);
    return rc;
}
