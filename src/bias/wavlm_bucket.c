/* wavlm_bucket.c: WavLM's relative position buckets (HF WavLMAttention._relative_positions_bucket, posenc.h 5.2b).
 *
 * Why not posenc_t5_bucket: WavLM writes the logarithmic branch as
 *   (max_exact + torch.log(n.float() / max_exact) / math.log(max_distance / max_exact) * (nb - max_exact)).to(long)
 * so the float32 value x is first added to max_exact (a float32 sum that rounds) and only then truncated; T5 truncates
 * x and adds after. The steps before the sum are T5's (float32 ratio, SLEEF's 1-ULP float32 log as torch's CPU kernel,
 * the double divisor rounded to float32), so this file repeats them and differs only in that sum. */
#include "bias_internal.h"
#include "../common/kernels.h"

/* Exported by libsleef, declared by sleef.h only under FP_FAST_FMA. */
float Sleef_logf1_u10purecfma(float);

static posenc_status wavlm_check(const posenc_t5_params *params, posenc_error *err) {
    RETURN_IF_NULL(params, err);
    RETURN_ERROR_IF(params->bidirectional != 1, err, POSENC_ERR_INVALID_ARGUMENT,
                    "WavLM buckets are bidirectional only: bidirectional must be 1, got %d", params->bidirectional);
    return posenc_t5_check(params, err);
}

/* The bucket of r for checked params. */
static int32_t wavlm_bucket_of(const posenc_t5_params *p, int64_t r) {
    int32_t nb = p->num_buckets / 2;
    int32_t ret = r > 0 ? nb : 0;
    int64_t n = r < 0 ? -r : r;
    int32_t max_exact = nb / 2;
    if (n < max_exact) return ret + (int32_t)n;
    float ratio = (float)n / (float)max_exact;
    float divisor = (float)log((double)p->max_distance / (double)max_exact);
    float scaled = Sleef_logf1_u10purecfma(ratio) / divisor * (float)(nb - max_exact);
    float sum = (float)max_exact + scaled; /* the float32 sum WavLM truncates (T5 truncates scaled alone) */
    /* past the last bucket before converting (a huge float has no int64: torch's x86 cast gives INT64_MIN) */
    if ((double)sum >= (double)(nb - 1)) return ret + nb - 1;
    return ret + (int32_t)(int64_t)sum; /* truncation toward zero; sum >= max_exact > 0 */
}

posenc_status posenc_wavlm_bucket(const posenc_t5_params *params, int64_t relative_position, int32_t *out_bucket,
                                  posenc_error *err) {
    RETURN_IF_NULL(out_bucket, err);
    FORWARD_IF_ERROR(wavlm_check(params, err));
    const int64_t limit = (int64_t)1 << 62;
    RETURN_ERROR_IF(relative_position <= -limit || relative_position >= limit, err, POSENC_ERR_INVALID_ARGUMENT,
                    "relative_position must satisfy |r| < 2^62, got %lld", (long long)relative_position);
    *out_bucket = wavlm_bucket_of(params, relative_position);
    return posenc_ok_(err);
}

posenc_status posenc_wavlm_bucket_matrix_i64(const posenc_t5_params *params, int64_t query_len, int64_t key_len,
                                             int64_t *out, size_t out_count, posenc_error *err) {
    RETURN_IF_NULL(out, err);
    FORWARD_IF_ERROR(wavlm_check(params, err));
    const int64_t most = (int64_t)1 << 31;
    RETURN_ERROR_IF(query_len < 1 || query_len > most, err, POSENC_ERR_INVALID_ARGUMENT,
                    "query_len must be in 1..2^31, got %lld", (long long)query_len);
    RETURN_ERROR_IF(key_len < 1 || key_len > most, err, POSENC_ERR_INVALID_ARGUMENT,
                    "key_len must be in 1..2^31, got %lld", (long long)key_len);
    RETURN_ERROR_IF((uint64_t)query_len > SIZE_MAX / (uint64_t)key_len, err, POSENC_ERR_SIZE_OVERFLOW,
                    "query_len %lld x key_len %lld overflows size_t", (long long)query_len, (long long)key_len);
    size_t need = (size_t)query_len * (size_t)key_len;
    RETURN_ERROR_IF(out_count < need, err, POSENC_ERR_BUFFER_TOO_SMALL,
                    "out_count %zu is too small: query_len %lld x key_len %lld needs %zu", out_count,
                    (long long)query_len, (long long)key_len, need);
    for (int64_t a = 0; a < query_len; a++)
        for (int64_t b = 0; b < key_len; b++) out[a * key_len + b] = wavlm_bucket_of(params, b - a);
    return posenc_ok_(err);
}
