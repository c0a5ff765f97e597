/* dtype.c: element sizes, names, and f16/bf16 conversions (round-to-nearest-even). */
#include "internal.h"

#include <string.h>

size_t posenc_dtype_size(posenc_dtype dtype) {
    switch (dtype) {
    case POSENC_DTYPE_F32: return 4;
    case POSENC_DTYPE_F64: return 8;
    case POSENC_DTYPE_F16: return 2;
    case POSENC_DTYPE_BF16: return 2;
    case POSENC_DTYPE_I32: return 4;
    case POSENC_DTYPE_I64: return 8;
    case POSENC_DTYPE_U8: return 1;
    case POSENC_DTYPE_U16: return 2;
    }
    return 0;
}

const char *posenc_dtype_name(posenc_dtype dtype) {
    switch (dtype) {
    case POSENC_DTYPE_F32: return "f32";
    case POSENC_DTYPE_F64: return "f64";
    case POSENC_DTYPE_F16: return "f16";
    case POSENC_DTYPE_BF16: return "bf16";
    case POSENC_DTYPE_I32: return "i32";
    case POSENC_DTYPE_I64: return "i64";
    case POSENC_DTYPE_U8: return "u8";
    case POSENC_DTYPE_U16: return "u16";
    }
    return "?";
}

static uint32_t float_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}
static float bits_float(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

uint16_t posenc_f32_to_bf16(float value) {
    uint32_t u = float_bits(value);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u); /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u); /* round to nearest, ties to even */
    return (uint16_t)(u >> 16);
}

float posenc_bf16_to_f32(uint16_t bits) { return bits_float((uint32_t)bits << 16); }

uint16_t posenc_f32_to_f16(float value) {
    uint32_t u = float_bits(value);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t abs = u & 0x7fffffffu;
    if (abs > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);          /* NaN */
    if (abs >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);         /* >= 65520: inf */
    if (abs < 0x38800000u) {                                           /* below 2^-14: subnormal */
        /* value * 2^24 rounded to an integer is the subnormal mantissa; the
         * float add performs the round-to-nearest-even for us. */
        float scaled = bits_float(abs) + 0.5f; /* 0.5 = 2^-1: aligns the ulp of 2^-24 */
        return (uint16_t)(sign | (uint16_t)(float_bits(scaled) - 0x3f000000u));
    }
    uint32_t mant_odd = (abs >> 13) & 1u;
    abs += 0xc8000fffu + mant_odd; /* re-bias exponent (-112 << 23) and round */
    return (uint16_t)(sign | (uint16_t)(abs >> 13));
}

float posenc_f16_to_f32(uint16_t bits) {
    uint32_t sign = (uint32_t)(bits & 0x8000u) << 16;
    uint32_t exp = (bits >> 10) & 0x1fu;
    uint32_t mant = bits & 0x3ffu;
    if (exp == 0x1f) return bits_float(sign | 0x7f800000u | (mant << 13));
    if (exp == 0) {
        float f = (float)mant * 5.9604644775390625e-8f; /* 2^-24 */
        return sign ? -f : f;
    }
    return bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
}

float posenc_round_to_bf16(float value) { return posenc_bf16_to_f32(posenc_f32_to_bf16(value)); }
float posenc_round_to_f16(float value) { return posenc_f16_to_f32(posenc_f32_to_f16(value)); }

void posenc_store_real_(void *out, posenc_dtype dtype, size_t i, double value) {
    switch (dtype) {
    case POSENC_DTYPE_F32: ((float *)out)[i] = (float)value; break;
    case POSENC_DTYPE_F64: ((double *)out)[i] = value; break;
    /* f16/bf16 via float: double->float->half can double-round, but only when the
     * double lies within 2^-29 relative of a half-way point; documented as "rounded
     * once through float32", which is also what torch's .half() does. */
    case POSENC_DTYPE_F16: ((uint16_t *)out)[i] = posenc_f32_to_f16((float)value); break;
    case POSENC_DTYPE_BF16: ((uint16_t *)out)[i] = posenc_f32_to_bf16((float)value); break;
    default: break;
    }
}

posenc_status posenc_check_stored_(const void *out, posenc_dtype dtype, size_t i, size_t dim, double value,
                                   const char *what, posenc_error *err) {
    double stored = value, largest = 1.7976931348623157e308;
    switch (dtype) {
    case POSENC_DTYPE_F32: stored = ((const float *)out)[i], largest = 3.4028234663852886e38; break;
    case POSENC_DTYPE_F16: stored = posenc_f16_to_f32(((const uint16_t *)out)[i]), largest = 65504; break;
    case POSENC_DTYPE_BF16: stored = posenc_bf16_to_f32(((const uint16_t *)out)[i]), largest = 3.3895313892515355e38; break;
    default: break;
    }
    if (isfinite(stored) || !isfinite(value)) return POSENC_OK;
    return posenc_fail_(err, POSENC_ERR_NONFINITE,
                        "cell [%zu, %zu]: %s %.17g overflows %s (largest finite %g); use a wider dtype", i / dim,
                        i % dim, what, value, posenc_dtype_name(dtype), largest);
}
