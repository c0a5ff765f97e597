/* analysis_common.c: pieces shared by the analysis commands (analyze, diff,
 * precision, signal): JSON output helpers (stable keys are documented in
 * docs/analysis.md). Reading a table is base/read_table.c. */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void cli_json_string(const char *s) {
    putchar('"');
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c < 0x20 || c == 0x7f) printf("\\u%04x", c);
        else if (c < 0x80) putchar(c);
        else { /* a string from a file may not be UTF-8: JSON output must be, so a byte that starts no
                  valid character is written as the code point of the same value (Latin-1's reading) */
            int n = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
            unsigned cp = n == 2 ? c & 0x1Fu : n == 3 ? c & 0x0Fu : c & 0x07u;
            int k = 1;
            for (; k < n && ((unsigned char)s[k] & 0xC0) == 0x80; k++) cp = cp << 6 | ((unsigned char)s[k] & 0x3Fu);
            static const unsigned least[5] = {0, 0, 0x80, 0x800, 0x10000};
            if (n && k == n && cp >= least[n] && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF)) {
                fwrite(s, 1, (size_t)n, stdout);
                s += n - 1;
            } else {
                printf("\\u%04x", c);
            }
        }
    }
    putchar('"');
}

void cli_json_number(double v) {
    if (isfinite(v)) printf("%.17g", v); /* round-trips a double exactly */
    else printf("null"); /* JSON has no NaN/inf; the docs say null means "not available" */
}

void cli_json_numbers(const double *v, size_t n) {
    putchar('[');
    for (size_t i = 0; i < n; i++) {
        if (i) putchar(',');
        cli_json_number(v[i]);
    }
    putchar(']');
}

void cli_print_fit_json(const posenc_sinusoid_fit *f) {
    printf("{\"found\":%s", f->found ? "true" : "false");
    if (f->found) {
        printf(",\"layout\":\"%s\",\"cos_first\":%s,\"pairs\":%d,\"extra_channels\":%d,\"amplitude\":",
               cli_layout_name(f->layout), f->cos_first ? "true" : "false", f->pairs,
               f->extra_channels);
        cli_json_number(f->amplitude);
        printf(",\"pair_norm_error\":");
        cli_json_number(f->pair_norm_error);
        printf(",\"zero_rows\":%zu,\"first_zero_row\":%lld,\"start\":", f->zero_rows, (long long)f->first_zero_row);
        cli_json_number(f->start);
        printf(",\"start_is_integer\":%s,\"frequencies\":", f->start_is_integer ? "true" : "false");
        cli_json_numbers(f->frequencies, (size_t)f->pairs);
        printf(",\"scale\":");
        cli_json_number(f->scale);
        printf(",\"geometric_error\":");
        cli_json_number(f->geometric_error);
        printf(",\"freqs\":\"%s\",\"base\":", cli_freqs_name(f->freqs));
        cli_json_number(f->base);
        printf(",\"base_is_round\":%s,\"base_vaswani\":", f->base_is_round ? "true" : "false");
        cli_json_number(f->base_vaswani);
        printf(",\"base_t2t\":");
        cli_json_number(f->base_t2t);
        printf(",\"angle_error\":");
        cli_json_number(f->angle_error);
        printf(",\"angle_relative_error\":");
        cli_json_number(f->angle_relative_error);
        printf(",\"formation\":\"%s\"", posenc_angle_formation_name(f->formation));
    }
    putchar('}');
}

void cli_print_fit_text(const char *label, const posenc_sinusoid_fit *f) {
    if (!f->found) {
        printf("%s: no sinusoid model fits (no unit-norm sin/cos pairs whose angles grow linearly with position)\n", label);
        return;
    }
    printf("%s: %s layout, %s first, %d pairs, amplitude %.6g (pair-norm spread %.2g)\n", label,
           f->layout == POSENC_LAYOUT_HALF ? "half ([sin|cos])" : "interleaved", f->cos_first ? "cos" : "sin",
           f->pairs, f->amplitude, f->pair_norm_error);
    printf("  start position %.6g%s, frequencies geometric ratio %.9g (max deviation %.2g), scale %.6g\n", f->start,
           f->start_is_integer ? "" : " (not an integer)", f->ratio, f->geometric_error, f->scale);
    printf("  base %.9g as %s%s (vaswani reading %.6g, t2t reading %.6g)\n", f->base,
           cli_freqs_name(f->freqs), f->base_is_round ? "" : " (not round: estimated)",
           f->base_vaswani, f->base_t2t);
    printf("  angles: %s (max error %.3g rad vs the exact model, relative %.3g, noise floor %.2g)\n",
           posenc_angle_formation_name(f->formation), f->angle_error, f->angle_relative_error, f->noise);
    if (f->zero_rows) printf("  %zu all-zero row(s), first at row %lld (padding)\n", f->zero_rows, (long long)f->first_zero_row);
}
