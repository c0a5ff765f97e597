/* torch_vec.h: torch 1.13's CPU float32 kernels for exp, pow, sin and cos,
 * reproduced to the bit, block structure included.
 *
 * torch builds each elementwise kernel several times (DEFAULT, AVX2, AVX512)
 * and picks one per process (at::get_cpu_capability). 1.13 picks AVX2 when
 * the CPU has AVX2 and FMA, else DEFAULT; AVX512 only when the environment
 * says ATEN_CPU_CAPABILITY=avx512 (opt-in in 1.13). What each build computes:
 *
 *   DEFAULT: Vectorized<float> is a plain array; exp/sin/cos/pow map glibc's
 *            expf/sinf/cosf/powf over the elements.
 *   AVX2:    SLEEF's 1-ULP AVX2 functions on 8-lane vectors;
 *   AVX512:  SLEEF's 1-ULP AVX-512 functions on 16-lane vectors.
 *
 * and how it walks a contiguous tensor of n elements:
 *
 *   exp, sin, cos (vml::v##op -> vec::map): whole vectors from element 0;
 *       the last partial vector is loaded zero-padded and still goes
 *       through the vector function.
 *   pow(scalar tensor, tensor) (cpu_kernel_vec -> vectorized_loop): pairs of
 *       vectors (16 elements on AVX2, 32 on AVX512) from element 0; the
 *       remaining n mod 16 (32) elements go through scalar std::pow = powf.
 *
 * The lanes of one vector are not independent: SLEEF's sinf/cosf take the
 * Payne-Hanek range reduction for the WHOLE vector when any lane has
 * |x| >= 125, and for the small lanes that can differ by 1 ULP from the
 * Cody-Waite result they would get otherwise. So cos/sin of an element depend
 * on the other elements of its block, and this module reproduces them per
 * block (torch_cos_sin_block_).
 *
 * Threads: sin/cos split a tensor over at::parallel_for (grain 2048) into
 * chunks of ceil(n / T) elements, each walked as above, so torch's own bits
 * depend on its thread count T whenever a chunk boundary is not a multiple of
 * the vector width. Every function here reproduces torch.set_num_threads(1)
 * (docs/sinusoidal.md, "torch-compat"). */
#ifndef POSENC_TORCH_VEC_H
#define POSENC_TORCH_VEC_H

#include <stdbool.h>
#include <stddef.h>

typedef enum {
    TORCH_CPU_DEFAULT = 0,
    TORCH_CPU_AVX2 = 1,
    TORCH_CPU_AVX512 = 2
} torch_cpu_capability_;

/* The capability torch 2.x picks in this process: ATEN_CPU_CAPABILITY
 * (default | avx2 | avx512; a value this CPU cannot run falls back to the
 * best it can, where torch would crash), else AVX512 if the CPU has AVX-512
 * F/VL/BW/DQ and FMA, else AVX2 if it has AVX2+FMA, else DEFAULT (torch 1.13
 * picked AVX2 over AVX512 unless told: ATEN_CPU_CAPABILITY=avx2 reproduces it).
 * DEFAULT on every non-x86-64 build (not checked against torch). */
torch_cpu_capability_ torch_cpu_capability_get_(void);

/* Floats per vector: 8 (DEFAULT's array also holds 8), 8, 16. */
size_t torch_vec_lanes_(torch_cpu_capability_ cap);

/* out[i] = exp(x[i]), i < n, as torch.exp on a contiguous float32 tensor.
 * out may equal x. */
void torch_exp_f32_(torch_cpu_capability_ cap, const float *x, float *out, size_t n);

/* out[i] = base ** x[i], i < n, as torch.pow(torch.tensor(base), x) (what
 * Python's `base ** tensor` runs). out may equal x. */
void torch_pow_base_f32_(torch_cpu_capability_ cap, float base, const float *x, float *out, size_t n);

/* cos and sin of one vector block: x holds `count` (1..lanes) elements, the
 * rest of the vector is zero as in torch's partial load. Writes count values
 * to c and s. */
void torch_cos_sin_block_(torch_cpu_capability_ cap, const float *x, size_t count, float *c, float *s);

/* The same for float64 tensors (torch.set_default_dtype(torch.float64)):
 * SLEEF's 1-ULP double functions on 4 (AVX2) or 8 (AVX512) lanes, glibc's
 * exp/sin/cos on DEFAULT; vec::map's blocks as above. */
size_t torch_vec_lanes_f64_(torch_cpu_capability_ cap);
void torch_exp_f64_(torch_cpu_capability_ cap, const double *x, double *out, size_t n);
void torch_cos_sin_block_f64_(torch_cpu_capability_ cap, const double *x, size_t count, double *c, double *s);

/* Max vector width in floats, for callers' block buffers. */
#define TORCH_VEC_MAX_LANES 16


/* The vector blocks, one per ISA (torch_vec_avx2.c, torch_vec_avx512.c, from
 * torch_vec_body.h); called only after the capability check. */
void torch_exp_f32_avx2_(const float *x, float *out, size_t n);
size_t torch_pow_base_f32_avx2_(float base, const float *x, float *out, size_t n);
void torch_cos_sin_block_avx2_(const float *x, size_t count, float *c, float *s);
void torch_exp_block_f64_avx2_(const double *x, size_t count, double *out);
void torch_cos_sin_block_f64_avx2_(const double *x, size_t count, double *c, double *s);
void torch_exp_f32_avx512_(const float *x, float *out, size_t n);
size_t torch_pow_base_f32_avx512_(float base, const float *x, float *out, size_t n);
void torch_cos_sin_block_avx512_(const float *x, size_t count, float *c, float *s);
void torch_exp_block_f64_avx512_(const double *x, size_t count, double *out);
void torch_cos_sin_block_f64_avx512_(const double *x, size_t count, double *c, double *s);

#endif
