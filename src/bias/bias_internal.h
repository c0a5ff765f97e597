/* bias_internal.h: private helpers shared by the relative-position files
 * (alibi.c, t5_bucket.c, t5_buckets.c, bias_fast.c, shaw.c, attention_reference.c). Not installed. */
#ifndef POSENC_BIAS_INTERNAL_H
#define POSENC_BIAS_INTERNAL_H

#include "../common/internal.h"

/* posenc_check_positions_ with the list named in the message ("query", "key"):
 * an empty list reads "query length must be > 0, got 0". */
static inline posenc_status posenc_check_named_positions_(const posenc_positions *positions,
                                                          const char *name, bool integers_only,
                                                          posenc_error *err) {
    RETURN_ERROR_IF(positions == NULL, err, POSENC_ERR_NULL_POINTER, "%s positions must not be NULL",
                    name);
    RETURN_ERROR_IF(positions->count == 0, err, POSENC_ERR_INVALID_ARGUMENT,
                    "%s length must be > 0, got 0", name);
    RETURN_ERROR_IF(integers_only && positions->values != NULL, err, POSENC_ERR_INVALID_ARGUMENT,
                    "%s positions must be integers here (got real-valued positions)", name);
    return posenc_check_positions_(positions, err);
}

/* Integer position r of a list already checked as integer (< 2^53). */
static inline int64_t posenc_integer_position_at_(const posenc_positions *positions, size_t r) {
    return positions->ids ? positions->ids[r] : positions->start + (int64_t)r;
}

/* Number of elements of a [a x b x c] tensor, or SIZE_OVERFLOW naming `what`. */
static inline posenc_status posenc_count3_(size_t a, size_t b, size_t c, const char *what,
                                           size_t *out, posenc_error *err) {
    size_t ab = 0;
    if (!posenc_mul_size_(a, b, &ab) || !posenc_mul_size_(ab, c, out))
        return posenc_fail_(err, POSENC_ERR_SIZE_OVERFLOW, "%s = %zu x %zu x %zu overflows size_t",
                            what, a, b, c);
    return POSENC_OK;
}

/* The T5 bucket of relative position r for params already checked
 * (t5_bucket.c; posenc_t5_bucket is the checked public form). */
int32_t posenc_t5_bucket_of_(const posenc_t5_params *params, int64_t r);

#endif
