/* torch_vec.c: see torch_vec.h. Compiled without ISA flags: it picks torch's
 * build for this CPU and calls that build's vector blocks (torch_vec_avx2.c,
 * torch_vec_avx512.c) or glibc per element (DEFAULT). */
#include "torch_vec.h"
#include "torch_vml.h"
#include "torch_math.h"

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

/* torch 2.x (2.13 checked) picks AVX512 by default where the CPU has it; 1.13 made it
 * opt-in (reproduce 1.13 with ATEN_CPU_CAPABILITY=avx2). */
torch_cpu_capability_ torch_cpu_capability_get_(void) {
    const char *env = getenv("ATEN_CPU_CAPABILITY"); /* read only, as torch reads it */
    if (env && strcmp(env, "default") == 0) return TORCH_CPU_DEFAULT;
    if (env && strcmp(env, "avx2") == 0 && cpu_has_avx2()) return TORCH_CPU_AVX2;
    if (cpu_has_avx512()) return TORCH_CPU_AVX512;
    return cpu_has_avx2() ? TORCH_CPU_AVX2 : TORCH_CPU_DEFAULT;
}

#else
torch_cpu_capability_ torch_cpu_capability_get_(void) { return TORCH_CPU_DEFAULT; }
#endif

size_t torch_vec_lanes_(torch_cpu_capability_ cap) { return cap == TORCH_CPU_AVX512 ? 16 : 8; }

/* DEFAULT: Vectorized<float>'s map(std::exp) etc., i.e. glibc per element */
/* A torch with MKL (POSENC_TORCH_MKL, torch_vml.h) runs exp/sin/cos through VML whatever
 * its kernel build; a set but unusable POSENC_TORCH_MKL falls back to SLEEF here and is
 * refused by posenc_torch_math_check before any torch-compat work. */
static const torch_vml_ *vml_usable(void) {
    const torch_vml_ *v = torch_vml_get_();
    return v && !v->problem ? v : NULL;
}

void torch_exp_f32_(torch_cpu_capability_ cap, const float *x, float *out, size_t n) {
    const torch_vml_ *vml = vml_usable();
    if (vml) {
        torch_vml_map_f32_(vml->exp_f32, x, out, n);
        return;
    }
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
    const torch_vml_ *vml = vml_usable();
    if (vml) {
        torch_vml_map_f32_(vml->cos_f32, x, c, count);
        torch_vml_map_f32_(vml->sin_f32, x, s, count);
        return;
    }
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
    const torch_vml_ *vml = vml_usable();
    if (vml) {
        torch_vml_map_f64_(vml->exp_f64, x, out, n);
        return;
    }
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
    const torch_vml_ *vml = vml_usable();
    if (vml) {
        torch_vml_map_f64_(vml->cos_f64, x, c, count);
        torch_vml_map_f64_(vml->sin_f64, x, s, count);
        return;
    }
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

/* One element through VML (a torch with MKL), else SLEEF's scalar stand-in; which: 0 sin, 1 cos, 2 exp */
static float vml_or_sleef(int which, float (*sleef)(float), float x) {
    const torch_vml_ *vml = vml_usable();
    if (!vml) return sleef(x);
    float r;
    (which == 0 ? vml->sin_f32 : which == 1 ? vml->cos_f32 : vml->exp_f32)(1, &x, &r, TORCH_VML_MODE);
    return r;
}

float torch_vml_sinf_(float x) { return vml_or_sleef(0, Sleef_sinf1_u10purecfma, x); }
float torch_vml_cosf_(float x) { return vml_or_sleef(1, Sleef_cosf1_u10purecfma, x); }
float torch_vml_expf_(float x) { return vml_or_sleef(2, Sleef_expf1_u10purecfma, x); }
