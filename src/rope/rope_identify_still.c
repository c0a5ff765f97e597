/* rope_identify_still.c: pairs that never turn where the fit turns them
 * (posenc_rope_identity_still_pairs, posenc.h 4b): while every other pair is
 * the fit bit for bit, a position stream held at 0 for those pairs (ggml's
 * IMROPE sends the pairs past 3 x its sections to a 4th stream, which
 * llama.cpp sets to 0 for text tokens). Public functions only; nothing calls
 * back. */
#include "rope_internal.h"

#include <stdlib.h>
#include <string.h>

posenc_status posenc_rope_identity_still_pairs(const posenc_array *table, const posenc_array *sin_table,
                                               const posenc_rope_identity *id, posenc_rope_still_pairs *out,
                                               posenc_error *err) {
    RETURN_IF_NULL(out, err);
    memset(out, 0, sizeof *out);
    out->first = out->last = -1;
    RETURN_IF_NULL(table, err);
    RETURN_IF_NULL(id, err);
    int32_t K = id->rotary_dim / 2;
    if (!id->differ[id->arith] || id->switch_position > 0 || K < 2 || !id->inv_freq) return posenc_ok_(err);
    int64_t *ulp = calloc((size_t)K, sizeof *ulp);
    double *w = malloc(sizeof *w * (size_t)K), att = 1;
    if (!ulp || !w) {
        free(ulp), free(w);
        return posenc_fail_(err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %d pairs", K);
    }
    posenc_rope_params q = id->params;
    posenc_status st = posenc_rope_identity_pair_residual(table, sin_table, id, id->arith, ulp, (size_t)K, err);
    if (st == POSENC_OK) st = posenc_rope_frequencies(&q, 0, w, (size_t)K, &att, err);
    if (st != POSENC_OK) {
        free(ulp), free(w);
        return st;
    }
    int32_t first = -1, last = -1, other = 0;
    int64_t worst = 0;
    for (int32_t k = 0; k < K; k++) {
        if (!ulp[k]) continue;
        if (id->inv_freq[k] == 0 && w[k] > 0) {
            if (first < 0) first = k;
            last = k, worst = ulp[k] > worst ? ulp[k] : worst;
        } else {
            other++;
        }
    }
    if (first >= 0 && !other) out->first = first, out->last = last, out->max_ulp = worst, out->fit_inv_freq = w[first];
    free(ulp), free(w);
    return posenc_ok_(err);
}
