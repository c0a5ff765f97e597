/* torch_vec.c: see torch_vec.h. Compiled without ISA flags: only the
 * functions marked with a target attribute use AVX2 / AVX-512, and they run
 * only when torch_cpu_capability_get_ chose that build for this CPU. */
#include "torch_vec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TORCH_VEC_X86 1
#include <immintrin.h>

/* libsleef exports these always; sleef.h declares them only when the
 * including file is compiled for the ISA, so we declare them. */
#define AVX2 __attribute__((target("avx2,fma")))
#define AVX512 __attribute__((target("avx512f,avx2,fma")))
AVX2 __m256 Sleef_expf8_u10avx2(__m256);
AVX2 __m256 Sleef_sinf8_u10avx2(__m256);
AVX2 __m256 Sleef_cosf8_u10avx2(__m256);
AVX2 __m256 Sleef_powf8_u10avx2(__m256, __m256);
AVX512 __m512 Sleef_expf16_u10avx512f(__m512);
AVX512 __m512 Sleef_sinf16_u10avx512f(__m512);
AVX512 __m512 Sleef_cosf16_u10avx512f(__m512);
AVX512 __m512 Sleef_powf16_u10avx512f(__m512, __m512);

AVX2 __m256d Sleef_expd4_u10avx2(__m256d);
AVX2 __m256d Sleef_sind4_u10avx2(__m256d);
AVX2 __m256d Sleef_cosd4_u10avx2(__m256d);
AVX512 __m512d Sleef_expd8_u10avx512f(__m512d);
AVX512 __m512d Sleef_sind8_u10avx512f(__m512d);
AVX512 __m512d Sleef_cosd8_u10avx512f(__m512d);

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

/* One vector of `count` lanes, zero beyond (torch's Vectorized::loadu(ptr, count)). */
#define LOAD_PARTIAL(lanes, buf, x, count)                                                         \
    do {                                                                                           \
        memset(buf, 0, sizeof(float) * (lanes));                                                   \
        memcpy(buf, x, sizeof(float) * (count));                                                   \
    } while (0)

AVX2 static void exp_avx2(const float *x, float *out, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, Sleef_expf8_u10avx2(_mm256_loadu_ps(x + i)));
    if (i < n) {
        float buf[8];
        LOAD_PARTIAL(8, buf, x + i, n - i);
        _mm256_storeu_ps(buf, Sleef_expf8_u10avx2(_mm256_loadu_ps(buf)));
        memcpy(out + i, buf, sizeof(float) * (n - i));
    }
}

AVX512 static void exp_avx512(const float *x, float *out, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(out + i, Sleef_expf16_u10avx512f(_mm512_loadu_ps(x + i)));
    if (i < n) {
        float buf[16];
        LOAD_PARTIAL(16, buf, x + i, n - i);
        _mm512_storeu_ps(buf, Sleef_expf16_u10avx512f(_mm512_loadu_ps(buf)));
        memcpy(out + i, buf, sizeof(float) * (n - i));
    }
}

/* vectorized_loop: two vectors per step, then the scalar op on the rest */
AVX2 static size_t pow_avx2(float base, const float *x, float *out, size_t n) {
    __m256 b = _mm256_set1_ps(base);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256 lo = Sleef_powf8_u10avx2(b, _mm256_loadu_ps(x + i));
        __m256 hi = Sleef_powf8_u10avx2(b, _mm256_loadu_ps(x + i + 8));
        _mm256_storeu_ps(out + i, lo);
        _mm256_storeu_ps(out + i + 8, hi);
    }
    return i;
}

AVX512 static size_t pow_avx512(float base, const float *x, float *out, size_t n) {
    __m512 b = _mm512_set1_ps(base);
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m512 lo = Sleef_powf16_u10avx512f(b, _mm512_loadu_ps(x + i));
        __m512 hi = Sleef_powf16_u10avx512f(b, _mm512_loadu_ps(x + i + 16));
        _mm512_storeu_ps(out + i, lo);
        _mm512_storeu_ps(out + i + 16, hi);
    }
    return i;
}

AVX2 static void cos_sin_avx2(const float *x, size_t count, float *c, float *s) {
    float buf[8], cb[8], sb[8];
    LOAD_PARTIAL(8, buf, x, count);
    __m256 v = _mm256_loadu_ps(buf);
    _mm256_storeu_ps(cb, Sleef_cosf8_u10avx2(v));
    _mm256_storeu_ps(sb, Sleef_sinf8_u10avx2(v));
    memcpy(c, cb, sizeof(float) * count);
    memcpy(s, sb, sizeof(float) * count);
}

AVX512 static void cos_sin_avx512(const float *x, size_t count, float *c, float *s) {
    float buf[16], cb[16], sb[16];
    LOAD_PARTIAL(16, buf, x, count);
    __m512 v = _mm512_loadu_ps(buf);
    _mm512_storeu_ps(cb, Sleef_cosf16_u10avx512f(v));
    _mm512_storeu_ps(sb, Sleef_sinf16_u10avx512f(v));
    memcpy(c, cb, sizeof(float) * count);
    memcpy(s, sb, sizeof(float) * count);
}

/* float64: one vector (4 or 8 lanes) per call, zero-padded like the float path */
AVX2 static void exp_block_f64_avx2(const double *x, size_t count, double *out) {
    double buf[4] = {0};
    memcpy(buf, x, sizeof(double) * count);
    _mm256_storeu_pd(buf, Sleef_expd4_u10avx2(_mm256_loadu_pd(buf)));
    memcpy(out, buf, sizeof(double) * count);
}

AVX512 static void exp_block_f64_avx512(const double *x, size_t count, double *out) {
    double buf[8] = {0};
    memcpy(buf, x, sizeof(double) * count);
    _mm512_storeu_pd(buf, Sleef_expd8_u10avx512f(_mm512_loadu_pd(buf)));
    memcpy(out, buf, sizeof(double) * count);
}

AVX2 static void cos_sin_f64_avx2(const double *x, size_t count, double *c, double *s) {
    double buf[4] = {0}, cb[4], sb[4];
    memcpy(buf, x, sizeof(double) * count);
    __m256d v = _mm256_loadu_pd(buf);
    _mm256_storeu_pd(cb, Sleef_cosd4_u10avx2(v));
    _mm256_storeu_pd(sb, Sleef_sind4_u10avx2(v));
    memcpy(c, cb, sizeof(double) * count);
    memcpy(s, sb, sizeof(double) * count);
}

AVX512 static void cos_sin_f64_avx512(const double *x, size_t count, double *c, double *s) {
    double buf[8] = {0}, cb[8], sb[8];
    memcpy(buf, x, sizeof(double) * count);
    __m512d v = _mm512_loadu_pd(buf);
    _mm512_storeu_pd(cb, Sleef_cosd8_u10avx512f(v));
    _mm512_storeu_pd(sb, Sleef_sind8_u10avx512f(v));
    memcpy(c, cb, sizeof(double) * count);
    memcpy(s, sb, sizeof(double) * count);
}
#else
torch_cpu_capability_ torch_cpu_capability_get_(void) { return TORCH_CPU_DEFAULT; }
#endif

size_t torch_vec_lanes_(torch_cpu_capability_ cap) { return cap == TORCH_CPU_AVX512 ? 16 : 8; }

/* DEFAULT: Vectorized<float>'s map(std::exp) etc., i.e. glibc per element */
void torch_exp_f32_(torch_cpu_capability_ cap, const float *x, float *out, size_t n) {
#ifdef TORCH_VEC_X86
    if (cap == TORCH_CPU_AVX2) {
        exp_avx2(x, out, n);
        return;
    }
    if (cap == TORCH_CPU_AVX512) {
        exp_avx512(x, out, n);
        return;
    }
#endif
    (void)cap;
    for (size_t i = 0; i < n; i++) out[i] = expf(x[i]);
}

void torch_pow_base_f32_(torch_cpu_capability_ cap, float base, const float *x, float *out, size_t n) {
    size_t i = 0;
#ifdef TORCH_VEC_X86
    if (cap == TORCH_CPU_AVX2) i = pow_avx2(base, x, out, n);
    if (cap == TORCH_CPU_AVX512) i = pow_avx512(base, x, out, n);
#endif
    (void)cap;
    for (; i < n; i++) out[i] = powf(base, x[i]);
}

void torch_cos_sin_block_(torch_cpu_capability_ cap, const float *x, size_t count, float *c, float *s) {
#ifdef TORCH_VEC_X86
    if (cap == TORCH_CPU_AVX2) {
        cos_sin_avx2(x, count, c, s);
        return;
    }
    if (cap == TORCH_CPU_AVX512) {
        cos_sin_avx512(x, count, c, s);
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
            if (cap == TORCH_CPU_AVX2) exp_block_f64_avx2(x + i, count, out + i);
            else exp_block_f64_avx512(x + i, count, out + i);
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
        cos_sin_f64_avx2(x, count, c, s);
        return;
    }
    if (cap == TORCH_CPU_AVX512) {
        cos_sin_f64_avx512(x, count, c, s);
        return;
    }
#endif
    (void)cap;
    for (size_t i = 0; i < count; i++) {
        c[i] = cos(x[i]);
        s[i] = sin(x[i]);
    }
}
