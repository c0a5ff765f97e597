/* internal.h: private helpers shared by the library's source files. Not installed. */
#ifndef POSENC_INTERNAL_H
#define POSENC_INTERNAL_H

#include "posenc.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define POSENC_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define POSENC_PRINTF(fmt, args)
#endif

/* Record status + formatted message in err (if non-NULL) and return status. */
posenc_status posenc_fail_(posenc_error *err, posenc_status status, const char *fmt, ...)
    POSENC_PRINTF(3, 4);
/* Mark err as success (status OK, empty message) and return POSENC_OK. */
posenc_status posenc_ok_(posenc_error *err);

/* Return from the current function with `status` and a message when cond holds. */
#define RETURN_ERROR_IF(cond, err, status, ...)                                  \
    do {                                                                         \
        if (cond) return posenc_fail_((err), (status), __VA_ARGS__);             \
    } while (0)
#define RETURN_IF_NULL(ptr, err)                                                 \
    RETURN_ERROR_IF((ptr) == NULL, err, POSENC_ERR_NULL_POINTER, "%s must not be NULL", #ptr)
/* Propagate a non-OK status (the callee already filled err). */
#define FORWARD_IF_ERROR(expr)                                                   \
    do {                                                                         \
        posenc_status forward_status_ = (expr);                                  \
        if (forward_status_ != POSENC_OK) return forward_status_;                \
    } while (0)

/* a*b with overflow detection; returns false on overflow. */
static inline bool posenc_mul_size_(size_t a, size_t b, size_t *out) {
    if (a != 0 && b > SIZE_MAX / a) return false;
    *out = a * b;
    return true;
}

/* Checked multiplication that fills err on overflow, naming what was multiplied. */
posenc_status posenc_checked_count_(size_t a, size_t b, const char *what, size_t *out,
                                    posenc_error *err);
/* Check a positions struct: not NULL, and every position exact and >= 0 (the rule below). */
posenc_status posenc_check_positions_(const posenc_positions *positions, posenc_error *err);
/* The one rule for positions (docs/errors.md P11): a position is exact in a
 * double, |p| < 2^53; absolute tables also need p >= 0 (posenc_check_positions_),
 * RoPE accepts either sign (shift deltas, left padding). */
posenc_status posenc_check_signed_positions_(const int64_t *positions, size_t count, posenc_error *err);
/* Position r of a positions list, as a long double (exact for integers < 2^63). */
static inline long double posenc_position_at_(const posenc_positions *pos, size_t r) {
    if (pos->ids) return (long double)pos->ids[r];
    if (pos->values) return (long double)pos->values[r];
    return (long double)pos->start + (long double)r;
}
/* Store a double into element i of a buffer of the given dtype (f32/f64/f16/bf16). */
void posenc_store_real_(void *out, posenc_dtype dtype, size_t i, double value);

/* After storing `value` at element i of a [.., dim] buffer: POSENC_ERR_NONFINITE
 * naming the cell, `what` and the dtype's largest finite value when the stored
 * element overflowed to inf (f16 above 65504, f32/bf16 above 3.4e38). */
posenc_status posenc_check_stored_(const void *out, posenc_dtype dtype, size_t i, size_t dim, double value,
                                   const char *what, posenc_error *err);

static inline bool posenc_is_finite_(double x) { return isfinite(x) != 0; }

#endif
