/* fuzz_identify.c: posenc_rope_identify's numeric path (issue 40), not its file
 * parsing. The input draws a table: either a genuine RoPE cache (base, rotary
 * dim, offset, scaling drawn; posenc_rope_table_f32 in a drawn arithmetic) in a
 * drawn layout (hf, vllm, ggml, plain, with or without the sin partner), then a
 * drawn damage (none, one value, a column, noise, swapped halves, a pass-through
 * tail), or raw doubles from the payload; stored as f32, f64, f16 or bf16; and
 * identified with the layout auto or forced.
 * Promises checked: a result or a status, never a crash, UB or hang; a result
 * has 2 <= R <= 2 x width, a finite base > 1 and magnitude, positions that fit
 * the table, and passes its own gate: posenc_rope_identity_pair_residual accepts
 * it; the same input identified twice gives the same answer bit for bit; an
 * undamaged f32 table of one turning pair or more that identify accepts is
 * named with the base it was made with (within 2e-4, the fit's snapping); the
 * comparison against the table's own parameters (posenc_rope_identity_compare)
 * returns a result or a named status, with known departure kinds. */
#include "fuzz_common.h"
#include "fuzz_data.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define ID_MAX_ROWS 96
#define ID_MAX_WIDTH 64

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    return 0;
}

static void store(posenc_array *a, posenc_dtype dt, const double *v, size_t rows, size_t width) {
    size_t shape[2] = {rows, width};
    posenc_error err;
    if (posenc_array_create(a, dt, 2, shape, 0, &err) != POSENC_OK) return;
    for (size_t i = 0; i < rows * width; i++) {
        float f = (float)v[i];
        switch (dt) {
        case POSENC_DTYPE_F64: ((double *)a->data)[i] = v[i]; break;
        case POSENC_DTYPE_F16: ((uint16_t *)a->data)[i] = posenc_f32_to_f16(f); break;
        case POSENC_DTYPE_BF16: ((uint16_t *)a->data)[i] = posenc_f32_to_bf16(f); break;
        default: ((float *)a->data)[i] = f; break;
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_data f = fuzz_data_make(data, size);
    size_t rows = (size_t)fuzz_range_u64(&f, 0, ID_MAX_ROWS);
    int32_t pairs = (int32_t)fuzz_range_u64(&f, 1, ID_MAX_WIDTH / 2);
    int form = (int)fuzz_range_u64(&f, 0, 4); /* hf, hf + sin, vllm, ggml, plain + sin */
    static const posenc_dtype dts[4] = {POSENC_DTYPE_F32, POSENC_DTYPE_F64, POSENC_DTYPE_F16, POSENC_DTYPE_BF16};
    posenc_dtype dt = dts[fuzz_range_u64(&f, 0, 3)];
    int genuine = (int)fuzz_range_u64(&f, 0, 3) != 0; /* mostly real caches: the deep paths */
    int damage = genuine ? (int)fuzz_range_u64(&f, 0, 5) : 0;
    posenc_rope_cache_layout forced = (posenc_rope_cache_layout)(fuzz_bool(&f) ? 0 : fuzz_range_u64(&f, 1, 4));
    static const double bases[6] = {10000, 500000, 1e6, 100, 2, 1e8};
    double base = bases[fuzz_range_u64(&f, 0, 5)];
    int64_t offset = fuzz_range_i64(&f, 0, 5000);
    int mode = (int)fuzz_range_u64(&f, 0, 2);
    double factor = fuzz_bool(&f) ? 1.0 : (double)fuzz_range_u64(&f, 2, 16);
    size_t width = form == 4 ? (size_t)pairs : 2 * (size_t)pairs;
    if (damage == 5) width += (size_t)fuzz_range_u64(&f, 1, 8); /* a pass-through tail */
    double *c = calloc(rows * width + 1, sizeof *c), *s = calloc(rows * width + 1, sizeof *s);
    float *cf = malloc(sizeof *cf * (rows * (size_t)pairs + 1)), *sf = malloc(sizeof *sf * (rows * (size_t)pairs + 1));
    if (!c || !s || !cf || !sf) goto done;
    bool made = false;
    posenc_rope_params p; /* the table's own parameters: the config identify's comparison reads */
    posenc_rope_params_default(&p, 2 * pairs);
    if (genuine && rows > 0) {
        p.base = base;
        p.mode = mode == 0 ? POSENC_MODE_PRECISE : mode == 1 ? POSENC_MODE_TORCH_COMPAT : POSENC_MODE_GGML;
        if (factor > 1) p.scaling = POSENC_ROPE_LINEAR, p.factor = factor;
        posenc_positions pos = posenc_positions_range(offset, rows);
        posenc_error e;
        made = posenc_rope_table_f32(&p, offset + (int64_t)rows, &pos, 1, cf, sf, rows * (size_t)pairs, &e) == POSENC_OK;
    }
    for (size_t t = 0; t < rows; t++)
        for (size_t j = 0; j < width; j++) {
            size_t k = form == 4 ? j : form == 3 ? j / 2 : j % (size_t)pairs;
            double cv = 1, sv = 0;
            if (made && k < (size_t)pairs && j < (form == 4 ? (size_t)pairs : 2 * (size_t)pairs)) {
                cv = cf[t * (size_t)pairs + k], sv = sf[t * (size_t)pairs + k];
            } else if (!made) {
                cv = fuzz_double(&f, 1.0), sv = fuzz_double(&f, 1.0);
            }
            switch (form) {
            case 2: c[t * width + j] = j < (size_t)pairs ? cv : sv; break; /* vllm */
            case 3: c[t * width + j] = j % 2 ? sv : cv; break;            /* ggml */
            default: c[t * width + j] = cv, s[t * width + j] = sv; break;
            }
        }
    if (damage && rows > 0 && width > 0) {
        size_t at = (size_t)fuzz_range_u64(&f, 0, rows * width - 1);
        double amount = fuzz_double(&f, 0.5);
        if (damage == 1) c[at] += amount;
        if (damage == 2)
            for (size_t t = 0; t < rows; t++) c[t * width + at % width] = amount;
        if (damage == 3)
            for (size_t i = 0; i < rows * width; i++) c[i] += amount * ((double)((i * 2654435761u) % 1000) / 1000 - 0.5);
        if (damage == 4)
            for (size_t i = 0; i < rows * width; i++) {
                double tmp = c[i];
                c[i] = s[i], s[i] = tmp;
            }
    }
    posenc_array ca = {0}, sa = {0};
    bool with_sin = form == 1 || form == 4;
    store(&ca, dt, c, rows, width);
    if (with_sin) store(&sa, dt, s, rows, width);
    if (!ca.data && rows * width > 0) goto arrays;
    posenc_rope_identity id1, id2;
    posenc_error e1, e2;
    posenc_status s1 = posenc_rope_identify(&ca, with_sin ? &sa : NULL, forced, &id1, &e1);
    posenc_status s2 = posenc_rope_identify(&ca, with_sin ? &sa : NULL, forced, &id2, &e2);
    FUZZ_REQUIRE(s1 == s2, "identify status %d then %d", (int)s1, (int)s2);
    if (s1 == POSENC_OK) {
        FUZZ_REQUIRE(id1.rotary_dim >= 2 && (size_t)id1.rotary_dim <= 2 * width && id1.rows == (int64_t)rows,
                     "rotary dim %d of a [%zu, %zu] table", id1.rotary_dim, rows, width);
        FUZZ_REQUIRE(isfinite(id1.params.base) && id1.params.base > 1 && isfinite(id1.magnitude), "base %g magnitude %g",
                     id1.params.base, id1.magnitude);
        FUZZ_REQUIRE(memcmp(&id1.params.base, &id2.params.base, sizeof(double)) == 0 && id1.offset == id2.offset &&
                         id1.params.scaling == id2.params.scaling && id1.rotary_dim == id2.rotary_dim,
                     "two runs differ: base %.17g / %.17g", id1.params.base, id2.params.base);
        int64_t *ulp = calloc((size_t)id1.rotary_dim / 2, sizeof *ulp);
        posenc_error e3;
        FUZZ_REQUIRE(ulp && posenc_rope_identity_pair_residual(&ca, with_sin ? &sa : NULL, &id1, id1.arith, ulp,
                                                               (size_t)id1.rotary_dim / 2, &e3) == POSENC_OK,
                     "an accepted fit is not re-scored: %s", e3.message);
        free(ulp);
        /* against a config (the table's own parameters): a comparison or a status, each
         * departure a known kind, at most POSENC_ROPE_MAX_DEPARTURES kept */
        posenc_rope_comparison cmp;
        posenc_error e4;
        posenc_status s4 = posenc_rope_identity_compare(&id1, &ca, with_sin ? &sa : NULL, &p, NULL, &cmp, &e4);
        FUZZ_REQUIRE(s4 == POSENC_OK || e4.message[0], "compare failed (%d) with no message", (int)s4);
        if (s4 == POSENC_OK) {
            FUZZ_REQUIRE(cmp.departure_count >= 0 && cmp.departure_count <= POSENC_ROPE_MAX_DEPARTURES &&
                             cmp.departures_dropped >= 0,
                         "%d departures kept, %d dropped", (int)cmp.departure_count, (int)cmp.departures_dropped);
            for (int32_t i = 0; i < cmp.departure_count; i++)
                FUZZ_REQUIRE(strcmp(posenc_rope_departure_kind_name(cmp.departures[i].kind), "?") != 0,
                             "departure %d has kind %d", (int)i, (int)cmp.departures[i].kind);
        }
        if (made && !damage && dt == POSENC_DTYPE_F32 && factor == 1 && forced == POSENC_CACHE_AUTO &&
            id1.params.scaling == POSENC_ROPE_NONE && id1.rotary_dim == 2 * pairs && pairs > 1)
            FUZZ_REQUIRE(fabs(id1.params.base / base - 1) < 2e-4, "undamaged base %g named %.10g", base,
                         id1.params.base);
        posenc_rope_identity_free(&id1);
        posenc_rope_identity_free(&id2);
    }
arrays:
    posenc_array_free(&ca);
    posenc_array_free(&sa);
done:
    free(c);
    free(s);
    free(cf);
    free(sf);
    return 0;
}
