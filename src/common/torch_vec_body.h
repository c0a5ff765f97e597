/* torch_vec_body.h: torch's vector blocks (torch_vec.h), written once.
 * Included by torch_vec_avx2.c and torch_vec_avx512.c, which are compiled for
 * their ISA (so sleef.h declares SLEEF's functions and every compiler passes
 * vectors in registers: a target attribute on a declaration is not enough for
 * clang, which then passed __m256 arguments on the stack and SLEEF's powf read
 * garbage) and define this macro layer first:
 *   TV_SUFFIX(name)  the exported name of a block function
 *   TV_LANES, TV_LANES_D  floats / doubles per vector
 *   TV_PS, TV_PD  the vector types; TV_LOAD_PS/TV_STORE_PS/TV_LOAD_PD/TV_STORE_PD,
 *   TV_SET1_PS; TV_EXPF TV_POWF TV_SINF TV_COSF TV_EXPD TV_SIND TV_COSD: SLEEF u10. */
#include <string.h>

/* One vector of `count` lanes, zero beyond (torch's Vectorized::loadu(ptr, count)). */
static void load_partial_f32(float *buf, const float *x, size_t count) {
    memset(buf, 0, sizeof(float) * TV_LANES);
    memcpy(buf, x, sizeof(float) * count);
}

void TV_SUFFIX(torch_exp_f32)(const float *x, float *out, size_t n) {
    size_t i = 0;
    for (; i + TV_LANES <= n; i += TV_LANES) TV_STORE_PS(out + i, TV_EXPF(TV_LOAD_PS(x + i)));
    if (i < n) {
        float buf[TV_LANES];
        load_partial_f32(buf, x + i, n - i);
        TV_STORE_PS(buf, TV_EXPF(TV_LOAD_PS(buf)));
        memcpy(out + i, buf, sizeof(float) * (n - i));
    }
}

/* vectorized_loop: two vectors per step; returns how many it did (the caller
 * runs the scalar op on the rest) */
size_t TV_SUFFIX(torch_pow_base_f32)(float base, const float *x, float *out, size_t n) {
    TV_PS b = TV_SET1_PS(base);
    size_t i = 0;
    for (; i + 2 * TV_LANES <= n; i += 2 * TV_LANES) {
        TV_PS lo = TV_POWF(b, TV_LOAD_PS(x + i));
        TV_PS hi = TV_POWF(b, TV_LOAD_PS(x + i + TV_LANES));
        TV_STORE_PS(out + i, lo);
        TV_STORE_PS(out + i + TV_LANES, hi);
    }
    return i;
}

void TV_SUFFIX(torch_cos_sin_block)(const float *x, size_t count, float *c, float *s) {
    float buf[TV_LANES], cb[TV_LANES], sb[TV_LANES];
    load_partial_f32(buf, x, count);
    TV_PS v = TV_LOAD_PS(buf);
    TV_STORE_PS(cb, TV_COSF(v));
    TV_STORE_PS(sb, TV_SINF(v));
    memcpy(c, cb, sizeof(float) * count);
    memcpy(s, sb, sizeof(float) * count);
}

/* float64: one vector per call, zero-padded like the float path */
void TV_SUFFIX(torch_exp_block_f64)(const double *x, size_t count, double *out) {
    double buf[TV_LANES_D] = {0};
    memcpy(buf, x, sizeof(double) * count);
    TV_STORE_PD(buf, TV_EXPD(TV_LOAD_PD(buf)));
    memcpy(out, buf, sizeof(double) * count);
}

void TV_SUFFIX(torch_cos_sin_block_f64)(const double *x, size_t count, double *c, double *s) {
    double buf[TV_LANES_D] = {0}, cb[TV_LANES_D], sb[TV_LANES_D];
    memcpy(buf, x, sizeof(double) * count);
    TV_PD v = TV_LOAD_PD(buf);
    TV_STORE_PD(cb, TV_COSD(v));
    TV_STORE_PD(sb, TV_SIND(v));
    memcpy(c, cb, sizeof(double) * count);
    memcpy(s, sb, sizeof(double) * count);
}
