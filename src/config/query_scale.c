/* query_scale.c: the position-dependent query scale of posenc_model (Llama 4's attention temperature, Ministral 3's
 * get_llama_4_attn_scale): scale(p) = 1 + beta * ln(1 + floor((p + shift) / divisor)). */
#include "config_internal.h"

#include <math.h>

const char *posenc_query_scale_layers_name(posenc_query_scale_layers layers) {
    switch (layers) {
    case POSENC_QUERY_SCALE_NONE: return "none";
    case POSENC_QUERY_SCALE_ALL: return "all";
    case POSENC_QUERY_SCALE_NOPE: return "nope";
    }
    return "?";
}

posenc_status posenc_query_scale_f64(const posenc_query_scale *qs, const int64_t *positions, size_t count,
                                     double *out, posenc_error *err) {
    RETURN_IF_NULL(qs, err);
    RETURN_ERROR_IF(count > 0 && !positions, err, POSENC_ERR_NULL_POINTER, "positions must not be NULL");
    RETURN_ERROR_IF(count > 0 && !out, err, POSENC_ERR_NULL_POINTER, "out must not be NULL");
    if (qs->layers == POSENC_QUERY_SCALE_NONE) {
        for (size_t i = 0; i < count; i++) out[i] = 1.0;
        return posenc_ok_(err);
    }
    RETURN_ERROR_IF(qs->layers != POSENC_QUERY_SCALE_ALL && qs->layers != POSENC_QUERY_SCALE_NOPE, err,
                    POSENC_ERR_INVALID_ARGUMENT, "query scale layers %d is not NONE, ALL or NOPE", (int)qs->layers);
    RETURN_ERROR_IF(!isfinite(qs->beta), err, POSENC_ERR_INVALID_ARGUMENT, "query scale beta %g is not finite",
                    qs->beta);
    RETURN_ERROR_IF(qs->divisor <= 0, err, POSENC_ERR_INVALID_ARGUMENT, "query scale divisor %lld must be > 0",
                    (long long)qs->divisor);
    for (size_t i = 0; i < count; i++) {
        int64_t p = positions[i];
        RETURN_ERROR_IF((qs->shift > 0 && p > INT64_MAX - qs->shift) || (qs->shift < 0 && p < INT64_MIN - qs->shift),
                        err, POSENC_ERR_INVALID_ARGUMENT, "position %lld + shift %lld overflows int64", (long long)p,
                        (long long)qs->shift);
        int64_t q = p + qs->shift;
        RETURN_ERROR_IF(q < 0, err, POSENC_ERR_INVALID_ARGUMENT,
                        "position %lld + shift %lld is negative: ln(1 + floor(%lld / %lld)) is not finite",
                        (long long)p, (long long)qs->shift, (long long)q, (long long)qs->divisor);
        /* exact floor of a non-negative quotient; a volatile product so no compiler fuses it into an fma (the
         * documented value is two roundings: the product, then the sum) */
        volatile double product = qs->beta * log1p((double)(q / qs->divisor));
        out[i] = 1.0 + product;
    }
    return posenc_ok_(err);
}
