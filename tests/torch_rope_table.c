/* torch_rope_table.c: a test helper (not installed) that writes the
 * torch-compat RoPE cos/sin tables of posenc_rope_table_f32 to stdout, so
 * tests/py/test_torch_rope.py can compare them with torch itself (the tool has
 * no command that prints the tables).
 *
 *   torch_rope_table LEN HEAD_DIM ROTARY_DIM BASE SCALING FACTOR ORIGINAL_MAX MAX_POS SEQ_LEN
 *                    [LONGROPE_LONG_CSV LONGROPE_SHORT_CSV]
 *
 * Positions 0..LEN-1, attention factor folded in (HF's tables). Output: raw
 * little-endian float32, cos [LEN][R/2] then sin [LEN][R/2]. Exit 1 with the
 * library's message on an error, 2 on bad arguments. */
#include "posenc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "a,b,c" -> malloc'd doubles; *count set */
static double *parse_list(const char *text, size_t *count) {
    size_t n = 1;
    for (const char *c = text; *c; c++) n += *c == ',';
    double *v = malloc(sizeof *v * n);
    if (!v) return NULL;
    const char *c = text;
    for (size_t i = 0; i < n; i++) {
        char *end;
        v[i] = strtod(c, &end);
        c = *end == ',' ? end + 1 : end;
    }
    *count = n;
    return v;
}

int main(int argc, char **argv) {
    if (argc != 10 && argc != 12) {
        fprintf(stderr, "usage: torch_rope_table LEN HEAD_DIM ROTARY_DIM BASE SCALING FACTOR ORIGINAL_MAX "
                        "MAX_POS SEQ_LEN [LONG_CSV SHORT_CSV]\n");
        return 2;
    }
    size_t len = strtoull(argv[1], NULL, 10);
    posenc_rope_params p;
    posenc_error err = {0};
    posenc_rope_params_default(&p, atoi(argv[2]));
    p.rotary_dim = atoi(argv[3]);
    p.base = strtod(argv[4], NULL);
    if (posenc_rope_scaling_parse(argv[5], &p.scaling, &err) != POSENC_OK) {
        fprintf(stderr, "torch_rope_table: %s\n", err.message);
        return 2;
    }
    p.factor = strtod(argv[6], NULL);
    p.original_max_position = strtoll(argv[7], NULL, 10);
    p.max_position = strtoll(argv[8], NULL, 10);
    int64_t seq_len = strtoll(argv[9], NULL, 10);
    p.mode = POSENC_MODE_TORCH_COMPAT;
    double *long_f = NULL, *short_f = NULL;
    if (argc == 12) {
        size_t nl = 0, ns = 0;
        long_f = parse_list(argv[10], &nl);
        short_f = parse_list(argv[11], &ns);
        if (!long_f || !short_f || nl != ns) {
            fprintf(stderr, "torch_rope_table: bad factor lists\n");
            return 2;
        }
        p.long_factors = long_f;
        p.short_factors = short_f;
        p.factors_count = nl;
    }
    int32_t r = 0;
    int rc = 1;
    float *cs = NULL;
    if (posenc_rope_check(&p, &r, &err) == POSENC_OK) {
        size_t count = len * (size_t)(r / 2);
        cs = malloc(sizeof *cs * 2 * (count ? count : 1));
        posenc_positions pos = posenc_positions_range(0, len);
        if (cs && posenc_rope_table_f32(&p, seq_len, &pos, 1, cs, cs + count, count, &err) == POSENC_OK)
            rc = fwrite(cs, sizeof *cs, 2 * count, stdout) == 2 * count && fflush(stdout) == 0 ? 0 : 1;
        else if (!cs)
            fprintf(stderr, "torch_rope_table: out of memory\n");
    }
    if (rc && err.message[0]) fprintf(stderr, "torch_rope_table: %s\n", err.message);
    free(cs);
    free(long_f);
    free(short_f);
    return rc;
}
