/* t5_bucket.c: one T5 relative position bucket (HF _relative_position_bucket)
 * and the parameter checks. t5_buckets.c (matrices, the bias gather) and
 * bias_fast.c (the threaded bias) build on it.
 *
 * Why float32 and SLEEF: HF computes the logarithmic branch as
 *   max_exact + (torch.log(n.float() / max_exact) / math.log(max_distance / max_exact)
 *                * (num_buckets - max_exact)).to(torch.long)
 * on float32 tensors: the Python double divisor and the integer factor are
 * cast to float32 by type promotion, and torch's CPU log is SLEEF's 1-ULP
 * float32 log (Sleef_logf8_u10; its scalar purecfma twin returns the same
 * bits). Truncation makes every rounding step visible exactly when a value
 * lands on a bucket boundary (n = 16, 32, 64 for the T5 defaults), so we copy
 * the operation order instead of using double: with glibc's float64 log,
 * (1000 buckets, 100000, unidirectional) r = -19975 gives 847 where HF gives
 * 848 (tests/test_t5.c). */
#include "bias_internal.h"
#include "../common/kernels.h"

#include <stdlib.h>

/* Exported by libsleef, declared by sleef.h only under FP_FAST_FMA. */
float Sleef_logf1_u10purecfma(float);

void posenc_t5_params_default(posenc_t5_params *params) {
    if (!params) return;
    params->num_buckets = 32;
    params->max_distance = 128;
    params->bidirectional = 1;
}

posenc_status posenc_t5_check(const posenc_t5_params *params, posenc_error *err) {
    RETURN_IF_NULL(params, err);
    int32_t nb = params->num_buckets;
    RETURN_ERROR_IF(params->bidirectional != 0 && params->bidirectional != 1, err,
                    POSENC_ERR_INVALID_ARGUMENT, "bidirectional must be 0 or 1, got %d",
                    params->bidirectional);
    if (params->bidirectional) {
        RETURN_ERROR_IF(nb < 4, err, POSENC_ERR_INVALID_ARGUMENT,
                        "num_buckets must be >= 4 when bidirectional, got %d (each direction "
                        "needs an exact bucket; the reference divides by zero)", nb);
        RETURN_ERROR_IF(nb % 2 != 0, err, POSENC_ERR_INVALID_ARGUMENT,
                        "num_buckets must be even when bidirectional, got %d (the reference "
                        "uses %d per direction and never fills bucket %d)", nb, nb / 2, nb - 1);
    } else {
        RETURN_ERROR_IF(nb < 2, err, POSENC_ERR_INVALID_ARGUMENT,
                        "num_buckets must be >= 2, got %d (the reference divides by zero)", nb);
    }
    int32_t half = params->bidirectional ? nb / 2 : nb;
    int32_t max_exact = half / 2;
    RETURN_ERROR_IF(params->max_distance <= 0, err, POSENC_ERR_INVALID_ARGUMENT,
                    "max_distance must be > 0, got %d", params->max_distance);
    RETURN_ERROR_IF(params->max_distance <= max_exact, err, POSENC_ERR_INVALID_ARGUMENT,
                    "max_distance must be > max_exact = %d (num_buckets %d%s), got %d", max_exact,
                    nb, params->bidirectional ? ", bidirectional" : "", params->max_distance);
    return POSENC_OK;
}

/* The bucket of r for checked params (HF _relative_position_bucket). */
int32_t posenc_t5_bucket_of_(const posenc_t5_params *p, int64_t r) {
    int32_t nb = p->num_buckets;
    int32_t ret = 0;
    int64_t n;
    if (p->bidirectional) {
        nb /= 2;
        if (r > 0) ret += nb;
        n = r < 0 ? -r : r;
    } else {
        n = r < 0 ? -r : 0;
    }
    int32_t max_exact = nb / 2;
    if (n < max_exact) return ret + (int32_t)n;
    /* float32 steps, in HF's order (see the file comment) */
    float ratio = (float)n / (float)max_exact;
    float divisor = (float)log((double)p->max_distance / (double)max_exact);
    float scaled = Sleef_logf1_u10purecfma(ratio) / divisor * (float)(nb - max_exact);
    /* Past the last bucket before converting: with max_distance just above
     * max_exact and many buckets, scaled can exceed 2^63 (fuzz_bias), where the
     * conversion is undefined (torch's x86 cast gives INT64_MIN, a negative bucket). */
    if ((double)scaled >= (double)(nb - 1 - max_exact)) return ret + nb - 1; /* both exact in double */
    int64_t large = (int64_t)max_exact + (int64_t)scaled; /* truncation toward zero */
    return ret + (int32_t)large;
}

posenc_status posenc_t5_bucket(const posenc_t5_params *params, int64_t relative_position,
                               int32_t *out_bucket, posenc_error *err) {
    RETURN_IF_NULL(out_bucket, err);
    FORWARD_IF_ERROR(posenc_t5_check(params, err));
    const int64_t limit = (int64_t)1 << 62;
    RETURN_ERROR_IF(relative_position <= -limit || relative_position >= limit, err,
                    POSENC_ERR_INVALID_ARGUMENT,
                    "relative_position must satisfy |r| < 2^62, got %lld",
                    (long long)relative_position);
    *out_bucket = posenc_t5_bucket_of_(params, relative_position);
    return posenc_ok_(err);
}

