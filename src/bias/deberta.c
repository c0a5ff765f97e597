/* deberta.c: DeBERTa's relative positions (HF make_log_bucket_position,
 * build_relative_position and the c2p / p2c clamps of DisentangledSelfAttention).
 *
 * Why float32 and torch's log (MKL's or SLEEF's, torch_logf below): HF evaluates the log branch on
 * float32 tensors (abs_pos / mid is a true division of an int64 tensor, so
 * float32; torch.tensor((max_position - 1) / mid) is a float32 0-dim tensor, in
 * TorchScript too), and ceil makes every rounding visible where the real
 * quotient lies within float32 rounding of an integer (v3, 256/512: 33 of the
 * distances up to 2^20 differ from real arithmetic, the first at 65317). Copying the float32 steps gives torch's buckets there. */
#include "bias_internal.h"
#include "../common/torch_vml.h"

#include <math.h>

/* Exported by libsleef, declared by sleef.h only under FP_FAST_FMA. */
float Sleef_logf1_u10purecfma(float);

#define DEBERTA_MAX_BUCKETS 65536
#define DEBERTA_MAX_RELATIVE (1 << 30)

posenc_status posenc_deberta_check(const posenc_deberta_params *params, posenc_error *err) {
    RETURN_IF_NULL(params, err);
    int32_t b = params->position_buckets, m = params->max_relative_positions;
    RETURN_ERROR_IF(m < 1 || m > DEBERTA_MAX_RELATIVE, err, POSENC_ERR_INVALID_ARGUMENT,
                    "max_relative_positions must be in 1..2^30, got %d (a config's value < 1 means "
                    "max_position_embeddings: resolve it first)", m);
    RETURN_ERROR_IF(b < 0, err, POSENC_ERR_INVALID_ARGUMENT,
                    "position_buckets must be 0 (none) or 2..%d, got %d (pass 0 for the config's -1)",
                    DEBERTA_MAX_BUCKETS, b);
    RETURN_ERROR_IF(b == 1 || b > DEBERTA_MAX_BUCKETS, err, POSENC_ERR_INVALID_ARGUMENT,
                    "position_buckets must be 0 (none) or 2..%d, got %d%s", DEBERTA_MAX_BUCKETS, b,
                    b == 1 ? " (mid = 0: the reference divides by zero)" : "");
    RETURN_ERROR_IF(b > 0 && m - 1 <= b / 2, err, POSENC_ERR_INVALID_ARGUMENT,
                    "max_relative_positions must exceed position_buckets / 2 + 1 = %d, got %d (ln((max - 1) / mid) "
                    "<= 0: the reference divides by zero or its buckets shrink with distance)", b / 2 + 1, m);
    return POSENC_OK;
}

int32_t posenc_deberta_span(const posenc_deberta_params *params) {
    if (!params) return 0;
    return params->position_buckets > 0 ? params->position_buckets : params->max_relative_positions;
}

/* torch.log of one float32: MKL's vmsLn where POSENC_TORCH_MKL names torch's MKL (as torch with MKL computes it:
 * it differs from SLEEF by 1 ULP on about 1% of the ratios, moving v3 buckets at 403269 and 485369), else SLEEF's
 * (a torch without MKL). An unusable POSENC_TORCH_MKL falls back to SLEEF (posenc_torch_math reports it). */
static float torch_logf(const torch_vml_ *vml, float x) {
    if (!vml || vml->problem) return Sleef_logf1_u10purecfma(x);
    float y = 0;
    vml->ln_f32(1, &x, &y, TORCH_VML_MODE);
    return y;
}

/* bucket(r) for checked params, in HF's float32 order (see the file comment). */
static int64_t bucket_of(const posenc_deberta_params *p, int64_t r) {
    int32_t b = p->position_buckets;
    if (b <= 0) return r;
    int64_t mid = b / 2, a = r < 0 ? -r : r;
    if (a <= mid) return r; /* torch.where(abs_pos <= mid, relative_pos, ...) */
    const torch_vml_ *vml = torch_vml_get_();
    float ratio = (float)a / (float)mid;
    float divisor = torch_logf(vml, (float)((double)(p->max_relative_positions - 1) / (double)mid));
    float scaled = torch_logf(vml, ratio) / divisor * (float)(mid - 1);
    float log_pos = ceilf(scaled) + (float)mid; /* a float32 sum, as torch adds mid to the float tensor */
    return r < 0 ? -(int64_t)log_pos : (int64_t)log_pos;
}

static int64_t clamp_row(int64_t v, int32_t span) {
    return v < 0 ? 0 : v > 2 * (int64_t)span - 1 ? 2 * (int64_t)span - 1 : v;
}

static posenc_status check_r(int64_t r, posenc_error *err) {
    const int64_t limit = (int64_t)1 << 62;
    RETURN_ERROR_IF(r <= -limit || r >= limit, err, POSENC_ERR_INVALID_ARGUMENT,
                    "relative_position must satisfy |r| < 2^62, got %lld", (long long)r);
    return POSENC_OK;
}

posenc_status posenc_deberta_bucket(const posenc_deberta_params *params, int64_t relative_position,
                                    int64_t *out_bucket, posenc_error *err) {
    RETURN_IF_NULL(out_bucket, err);
    FORWARD_IF_ERROR(posenc_deberta_check(params, err));
    FORWARD_IF_ERROR(check_r(relative_position, err));
    *out_bucket = bucket_of(params, relative_position);
    return posenc_ok_(err);
}

posenc_status posenc_deberta_index(const posenc_deberta_params *params, int64_t relative_position,
                                   int32_t *out_c2p, int32_t *out_p2c, posenc_error *err) {
    RETURN_ERROR_IF(!out_c2p && !out_p2c, err, POSENC_ERR_NULL_POINTER, "out_c2p and out_p2c must not both be NULL");
    FORWARD_IF_ERROR(posenc_deberta_check(params, err));
    FORWARD_IF_ERROR(check_r(relative_position, err));
    int64_t bucket = bucket_of(params, relative_position);
    int32_t span = posenc_deberta_span(params);
    if (out_c2p) *out_c2p = (int32_t)clamp_row(bucket + span, span);
    if (out_p2c) *out_p2c = (int32_t)clamp_row(-bucket + span, span);
    return posenc_ok_(err);
}

posenc_status posenc_deberta_matrix_i64(const posenc_deberta_params *params, posenc_deberta_output what,
                                        int64_t query_len, int64_t key_len, int64_t *out, size_t out_count,
                                        posenc_error *err) {
    RETURN_IF_NULL(out, err);
    FORWARD_IF_ERROR(posenc_deberta_check(params, err));
    RETURN_ERROR_IF(what != POSENC_DEBERTA_RELATIVE && what != POSENC_DEBERTA_C2P && what != POSENC_DEBERTA_P2C, err,
                    POSENC_ERR_INVALID_ARGUMENT, "what must be RELATIVE, C2P or P2C, got %d", (int)what);
    const int64_t max_len = (int64_t)1 << 31;
    RETURN_ERROR_IF(query_len < 1 || query_len > max_len, err, POSENC_ERR_INVALID_ARGUMENT,
                    "query_len must be in 1..2^31, got %lld", (long long)query_len);
    RETURN_ERROR_IF(key_len < 1 || key_len > max_len, err, POSENC_ERR_INVALID_ARGUMENT,
                    "key_len must be in 1..2^31, got %lld", (long long)key_len);
    size_t need = 0;
    FORWARD_IF_ERROR(posenc_count3_((size_t)query_len, (size_t)key_len, 1, "query_len x key_len", &need, err));
    RETURN_ERROR_IF(out_count < need, err, POSENC_ERR_BUFFER_TOO_SMALL,
                    "out_count %zu < query_len x key_len = %zu", out_count, need);
    int32_t span = posenc_deberta_span(params);
    for (int64_t i = 0; i < query_len; i++)
        for (int64_t j = 0; j < key_len; j++) {
            int64_t bucket = bucket_of(params, i - j);
            out[i * key_len + j] = what == POSENC_DEBERTA_RELATIVE ? bucket
                                   : what == POSENC_DEBERTA_C2P    ? clamp_row(bucket + span, span)
                                                                   : clamp_row(-bucket + span, span);
        }
    return posenc_ok_(err);
}
