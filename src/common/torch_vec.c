/* torch_vec.c: see torch_vec.h. Compiled without ISA flags: it picks torch's
 * build for this CPU and calls that build's vector blocks (torch_vec_avx2.c,
 * torch_vec_avx512.c) or glibc per element (DEFAULT). */
#include "torch_vec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TORCH_VEC_X86 1
static bool cpu_has_avx2(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

/* torch 1.13's AVX512 test: AVX512 VL, BW, DQ and FMA */
static bool cpu_has_avx512(void) {
    return cpu_has_avx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq");
}

torch_cpu_capability_ torch_cpu_capability_get_(void) {
    const char *env = getenv("ATEN_CPU_CAPABILITY"); /* read only, as torch reads it */
    if (env && strcmp(env, "default") == 0) return TORCH_CPU_DEFAULT;
    if (env && strcmp(env, "avx512") == 0 && cpu_has_avx512()) return TORCH_CPU_AVX512;
    return cpu_has_avx2() ? TORCH_CPU_AVX2 : TORCH_CPU_DEFAULT;
}

#else
torch_cpu_capability_ torch_cpu_capability_get_(void) { return TORCH_CPU_DEFAULT; }
#endif

size_t torch_vec_lanes_(torch_cpu_capability_ cap) { return cap == TORCH_CPU_AVX512 ? 16 : 8; }

/* DEFAULT: Vectorized<float>'s map(std::exp) etc., i.e. glibc per element */
void torch_exp_f32_(torch_cpu_capability_ cap, const float *x, float *out, size_t n) {
#ifdef TORCH_VEC_X86
    if (cap == TORCH_CPU_AVX2) {
        torch_exp_f32_avx2_(x, out, n);
        return;
    }
    if (cap == TORCH_CPU_AVX512) {
        torch_exp_f32_avx512_(x, out, n);
        return;
    }
#endif
    (void)cap;
    for (size_t i = 0; i < n; i++) out[i] = expf(x[i]);
}

void torch_pow_base_f32_(torch_cpu_capability_ cap, float base, const float *x, float *out, size_t n) {
    size_t i = 0;
#ifdef TORCH_VEC_X86
    if (cap == TORCH_CPU_AVX2) i = torch_pow_base_f32_avx2_(base, x, out, n);
    if (cap == TORCH_CPU_AVX512) i = torch_pow_base_f32_avx512_(base, x, out, n);
#endif
    (void)cap;
    for (; i < n; i++) out[i] = powf(base, x[i]);
}

void torch_cos_sin_block_(torch_cpu_capability_ cap, const float *x, size_t count, float *c, float *s) {
#ifdef TORCH_VEC_X86
    if (cap == TORCH_CPU_AVX2) {
        torch_cos_sin_block_avx2_(x, count, c, s);
        return;
    }
    if (cap == TORCH_CPU_AVX512) {
        torch_cos_sin_block_avx512_(x, count, c, s);
        return;
    }
#endif
    (void)cap;
    for (size_t i = 0; i < count; i++) {
        c[i] = cosf(x[i]);
        s[i] = sinf(x[i]);
    }
}

size_t torch_vec_lanes_f64_(torch_cpu_capability_ cap) { return cap == TORCH_CPU_AVX512 ? 8 : 4; }

void torch_exp_f64_(torch_cpu_capability_ cap, const double *x, double *out, size_t n) {
#ifdef TORCH_VEC_X86
    if (cap == TORCH_CPU_AVX2 || cap == TORCH_CPU_AVX512) {
        size_t lanes = torch_vec_lanes_f64_(cap);
        for (size_t i = 0; i < n; i += lanes) {
            size_t count = n - i < lanes ? n - i : lanes;
            if (cap == TORCH_CPU_AVX2) torch_exp_block_f64_avx2_(x + i, count, out + i);
            else torch_exp_block_f64_avx512_(x + i, count, out + i);
        }
        return;
    }
#endif
    (void)cap;
    for (size_t i = 0; i < n; i++) out[i] = exp(x[i]);
}

void torch_cos_sin_block_f64_(torch_cpu_capability_ cap, const double *x, size_t count, double *c, double *s) {
#ifdef TORCH_VEC_X86
    if (cap == TORCH_CPU_AVX2) {
        torch_cos_sin_block_f64_avx2_(x, count, c, s);
        return;
    }
    if (cap == TORCH_CPU_AVX512) {
        torch_cos_sin_block_f64_avx512_(x, count, c, s);
        return;
    }
#endif
    (void)cap;
    for (size_t i = 0; i < count; i++) {
        c[i] = cos(x[i]);
        s[i] = sin(x[i]);
    }
}
