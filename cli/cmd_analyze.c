/* cmd_analyze.c: `posenc analyze`: health statistics of a position table
 * read from .npy / .safetensors, or generated from the usual table flags. */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cli_option analyze_options[] = {
    {"tensor", "NAME", "tensor of a .safetensors file, e.g. wpe.weight"},
    {"cos", "C.npy", "analyze RoPE cos/sin caches ([T, D], HF LlamaRotaryEmbedding output) instead of a table"},
    {"sin", "S.npy", "... the matching sin cache"},
    {"len", "N", "generate the table instead: number of positions"},
    {"dim", "D", "... channels per position"},
    {"base", "B", "... frequency base, default 10000"},
    {"freqs", "CONV", "... " CLI_FREQS_NAMES "; default vaswani"},
    {"layout", "L", "... " CLI_LAYOUT_NAMES "; default interleaved"},
    {"start", "S", "... first position, default 0"},
    {"odd", "POLICY", "... odd dim: " CLI_ODD_NAMES "; default error"},
    {"max-offset", "K", "similarity vs distance for offsets 0..K (default min(rows-1, 128))"},
    {"json", NULL, "machine-readable output (keys in docs/analysis.md)"},
    {"max-bytes", "N", "refuse inputs larger than N bytes (default 4 GiB; env POSENC_MAX_BYTES)"},
    {NULL, NULL, NULL}};

static void analyze_help(void) {
    printf("usage: posenc analyze TABLE.npy | MODEL.safetensors --tensor NAME | --len N --dim D [table flags] [--json]\n\n"
           "Health of a position table: min/max/mean|x|, per-position variance and norm, per-channel dominant\n"
           "frequency and wavelength, the closest pair of positions, mean dot/cosine vs offset, the fitted\n"
           "sinusoid model, and the rotation linearity residual max_p ||M(k)PE(p) - PE(p+k)|| per pair.\n\n");
    cli_print_options(analyze_options);
    printf("\nexamples:\n  posenc analyze pe.npy\n  posenc analyze model.safetensors --tensor wpe.weight --json\n"
           "  posenc analyze --len 512 --dim 64 --freqs t2t --layout half\n"
           "  posenc analyze --cos cos.npy --sin sin.npy     # RoPE caches: base, start, attention scaling\n");
}

/* Generate the table described by the flags (float64) and its frequencies. */
static int generate(const cli_args *a, posenc_array *out, double **freqs, size_t *nfreqs, posenc_layout *layout) {
    int32_t dim = 0;
    int64_t len = 0, start = 0;
    if (!cli_int32(a, "dim", 1, 1 << 20, &dim) || !cli_int64(a, "len", 1, INT64_MAX, &len) ||
        !cli_int64(a, "start", 0, INT64_MAX, &start))
        return EXIT_USAGE;
    if (!cli_has(a, "dim") || !cli_has(a, "len"))
        return cli_fail("analyze", EXIT_USAGE, "posenc analyze --len 512 --dim 64", "give a table file, or --len and --dim");
    posenc_sinusoid_params p;
    posenc_sinusoid_params_default(&p, dim);
    if (!cli_double(a, "base", &p.base) || !cli_get_freqs(a, "freqs", &p.freqs) ||
        !cli_get_layout(a, "layout", &p.layout) || !cli_get_odd(a, "odd", &p.odd))
        return EXIT_USAGE;
    posenc_error err = {0};
    int32_t pairs;
    size_t count;
    if (posenc_sinusoid_check(&p, &pairs, &err) != POSENC_OK || posenc_table_count((size_t)len, dim, &count, &err) != POSENC_OK)
        return cli_fail_status("analyze", &err);
    size_t shape[2] = {(size_t)len, (size_t)dim};
    if (posenc_array_create(out, POSENC_DTYPE_F64, 2, shape, cli_max_bytes(a), &err) != POSENC_OK)
        return cli_fail("analyze", EXIT_USAGE, "lower --len/--dim, or raise --max-bytes", "%s", err.message);
    posenc_positions pos = posenc_positions_range(start, (size_t)len);
    *freqs = malloc((size_t)pairs * sizeof(double));
    if (!*freqs) return cli_fail("analyze", EXIT_RUNTIME, NULL, "out of memory");
    if (posenc_sinusoid_table_f64(&p, &pos, out->data, count, &err) != POSENC_OK ||
        posenc_sinusoid_frequencies_f64(&p, *freqs, (size_t)pairs, &err) != POSENC_OK)
        return cli_fail_status("analyze", &err);
    *nfreqs = (size_t)pairs;
    *layout = p.layout;
    return EXIT_OK;
}

static void print_json(const posenc_health *h) {
    printf("{\"rows\":%zu,\"channels\":%zu,\"nonfinite\":%zu,\"first_nonfinite\":", h->rows, h->channels, h->nonfinite);
    if (h->nonfinite) printf("[%lld,%lld]", (long long)h->first_nonfinite_row, (long long)h->first_nonfinite_channel);
    else printf("null");
    printf(",\"min\":");
    cli_json_number(h->min);
    printf(",\"max\":");
    cli_json_number(h->max);
    printf(",\"mean_abs\":");
    cli_json_number(h->mean_abs);
    printf(",\"row_norm\":");
    cli_json_numbers(h->row_norm, h->rows);
    printf(",\"row_variance\":");
    cli_json_numbers(h->row_variance, h->rows);
    printf(",\"channel_frequency\":");
    cli_json_numbers(h->channel_frequency, h->channels);
    printf(",\"channel_wavelength\":");
    cli_json_numbers(h->channel_wavelength, h->channels);
    printf(",\"closest_pair\":{\"a\":%zu,\"b\":%zu,\"distance\":", h->closest_a, h->closest_b);
    cli_json_number(h->closest_distance);
    printf(",\"rows_searched\":%zu},\"mean_dot\":", h->uniqueness_rows);
    cli_json_numbers(h->mean_dot, h->offsets);
    printf(",\"mean_cosine\":");
    cli_json_numbers(h->mean_cosine, h->offsets);
    printf(",\"fit\":");
    cli_print_fit_json(&h->fit);
    printf(",\"linearity\":");
    if (!h->linearity_available) {
        printf("null}\n");
        return;
    }
    printf("{\"offsets\":[");
    int first = 1;
    for (int j = 0; j < POSENC_HEALTH_OFFSETS; j++)
        if (h->linearity_offsets[j]) printf("%s%zu", first ? "" : ",", h->linearity_offsets[j]), first = 0;
    printf("],\"worst\":");
    cli_json_number(h->linearity_worst);
    printf(",\"residual\":[");
    for (size_t k = 0; k < h->linearity_pairs; k++) {
        printf("%s[", k ? "," : "");
        first = 1;
        for (int j = 0; j < POSENC_HEALTH_OFFSETS; j++)
            if (h->linearity_offsets[j]) {
                if (!first) putchar(',');
                cli_json_number(h->linearity_residual[k * POSENC_HEALTH_OFFSETS + (size_t)j]);
                first = 0;
            }
        printf("]");
    }
    printf("]}}\n");
}

static void print_text(const char *what, const posenc_health *h) {
    printf("%s: %zu positions x %zu channels\n\n", what, h->rows, h->channels);
    if (h->nonfinite)
        printf("WARNING: %zu non-finite value(s) (NaN/inf), first at position %lld channel %lld; left out below\n\n",
               h->nonfinite, (long long)h->first_nonfinite_row, (long long)h->first_nonfinite_channel);
    printf("min %.6g   max %.6g   mean|x| %.6g\n", h->min, h->max, h->mean_abs);
    printf("per-position norm      min %.6g  max %.6g\n", h->norm_min, h->norm_max);
    printf("per-position variance  min %.6g  max %.6g\n", h->variance_min, h->variance_max);
    printf("closest pair of positions: %zu and %zu, distance %.6g%s\n\n", h->closest_a, h->closest_b,
           h->closest_distance, h->uniqueness_rows < h->rows ? " (first rows only)" : "");
    printf("offset   mean dot      mean cosine\n");
    for (size_t k = 0; k < h->offsets; k = k < 2 ? k + 1 : k * 2)
        printf("%6zu   %-12.6g  %.6f\n", k, h->mean_dot[k], h->mean_cosine[k]);
    printf("\nchannel  dominant frequency  wavelength (positions)\n");
    size_t show = h->channels <= 16 ? h->channels : 8;
    for (size_t c = 0; c < h->channels; c++) {
        if (c == show && h->channels > 16) {
            printf("  ...    (all channels with --json)\n");
            c = h->channels - 4;
        }
        if (h->channel_frequency[c] > 0) printf("%7zu  %-18.6g  %.6g\n", c, h->channel_frequency[c], h->channel_wavelength[c]);
        else printf("%7zu  %-18s  > %zu (longer than the table)\n", c, "-", h->rows);
    }
    printf("\n");
    cli_print_fit_text("sinusoid model", &h->fit);
    if (h->linearity_available) {
        printf("\nrelative-position linearity: max_p ||M(k) PE(p) - PE(p+k)|| (rotation by w*k)\npair  ");
        for (int j = 0; j < POSENC_HEALTH_OFFSETS; j++)
            if (h->linearity_offsets[j]) printf("   k=%-8zu", h->linearity_offsets[j]);
        printf("\n");
        for (size_t k = 0; k < h->linearity_pairs; k++) {
            if (h->linearity_pairs > 16 && k == 8) {
                printf("  ...\n");
                k = h->linearity_pairs - 4;
            }
            printf("%4zu  ", k);
            for (int j = 0; j < POSENC_HEALTH_OFFSETS; j++)
                if (h->linearity_offsets[j]) printf("   %-10.3g", h->linearity_residual[k * POSENC_HEALTH_OFFSETS + (size_t)j]);
            printf("\n");
        }
        printf("worst residual %.3g\n", h->linearity_worst);
    } else {
        printf("\nrelative-position linearity: not applicable (no sin/cos pair structure)\n");
    }
}

int cmd_analyze(int argc, char **argv) {
    cli_args a;
    int rc = cli_parse(&a, "analyze", analyze_options, argc, argv, 1);
    if (rc != EXIT_OK) return rc;
    if (a.help) {
        analyze_help();
        return EXIT_OK;
    }
    int64_t max_offset = 0;
    if (!cli_int64(&a, "max-offset", 1, 1 << 20, &max_offset)) return EXIT_USAGE;
    posenc_array table = {0};
    posenc_health_options opt = {0};
    opt.max_offset = (size_t)max_offset;
    double *freqs = NULL;
    const char *what = "generated table";
    if (cli_has(&a, "cos") || cli_has(&a, "sin")) {
        if (!cli_has(&a, "cos") || !cli_has(&a, "sin") || a.positional_count)
            return cli_fail("analyze", EXIT_USAGE, NULL, "give both --cos and --sin, and no table file");
        posenc_array c = {0}, s = {0};
        size_t limit = cli_max_bytes(&a);
        if ((rc = cli_read_table("analyze", cli_string(&a, "cos", ""), NULL, limit, &c)) != EXIT_OK) return rc;
        if ((rc = cli_read_table("analyze", cli_string(&a, "sin", ""), NULL, limit, &s)) != EXIT_OK) {
            posenc_array_free(&c);
            return rc;
        }
        posenc_error e = {0};
        int repeat = -1;
        posenc_status st = posenc_rope_cache_to_table(&c, &s, &table, &repeat, &e);
        posenc_array_free(&c);
        posenc_array_free(&s);
        if (st != POSENC_OK) return cli_fail_status("analyze", &e);
        what = repeat == POSENC_LAYOUT_HALF ? "RoPE caches (angles repeated in both halves: HF rotate_half)"
               : repeat == POSENC_LAYOUT_INTERLEAVED ? "RoPE caches (angles repeated per pair: GPT-J/lucidrains)"
                                                     : "RoPE caches (one column per angle)";
    } else if (a.positional_count == 1) {
        if (cli_has(&a, "len") || cli_has(&a, "dim"))
            return cli_fail("analyze", EXIT_USAGE, NULL, "give a table file or --len/--dim, not both");
        what = a.positional[0];
        if ((rc = cli_read_table("analyze", what, cli_string(&a, "tensor", NULL), cli_max_bytes(&a), &table)) != EXIT_OK)
            return rc;
    } else if ((rc = generate(&a, &table, &freqs, &opt.frequency_count, &opt.layout)) != EXIT_OK) {
        posenc_array_free(&table);
        free(freqs);
        return rc;
    }
    opt.frequencies = freqs;
    posenc_health h;
    posenc_error err = {0};
    if (posenc_health_analyze(&table, &opt, &h, &err) != POSENC_OK) {
        rc = cli_fail_status("analyze", &err);
    } else {
        if (cli_has(&a, "json")) print_json(&h);
        else print_text(what, &h);
        posenc_health_free(&h);
    }
    posenc_array_free(&table);
    free(freqs);
    return rc;
}
