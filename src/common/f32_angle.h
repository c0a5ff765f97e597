/* f32_angle.h: the one guard for torch-compat's float32 angles (sinusoid
 * tables, RoPE tables and every RoPE apply). Not installed. */
#ifndef POSENC_F32_ANGLE_H
#define POSENC_F32_ANGLE_H

#include "internal.h"

#include <float.h>

/* torch-compat forms the angle f32(p) * f32(w) in float32, as torch does; past
 * FLT_MAX it is inf and cos/sin are NaN. Refuse that instead of returning NaN
 * (found by fuzz_rope and fuzz_table). The product is formed in double (exact
 * for two floats), so the test is conservative by at most half a float ULP.
 * `frequency_word` names w in the message ("frequency", "inverse frequency"),
 * `hint` says what to do instead. */
static inline posenc_status posenc_check_f32_angle_(long double max_abs_position, float max_abs_frequency,
                                                    const char *frequency_word, const char *hint,
                                                    posenc_error *err) {
    double angle = (double)(float)max_abs_position * (double)max_abs_frequency;
    RETURN_ERROR_IF(!(angle <= FLT_MAX), err, POSENC_ERR_INVALID_ARGUMENT,
                    "torch-compat angle p*w = %g overflows float32 at position %.0Lf (%s %g); %s", angle,
                    max_abs_position, frequency_word, (double)max_abs_frequency, hint);
    return POSENC_OK;
}

#endif
