/* torch_math.h: the float32 elementary functions PyTorch's CPU kernels use.
 *
 * torch's vectorized exp/sin/cos/pow call SLEEF's 1-ULP functions in their
 * FMA-using vector variants (AVX2/AVX-512). SLEEF's scalar "purecfma" build is
 * the same algorithm with the same fused operations, so it returns the same
 * bits on any machine (checked against the PyTorch goldens: with glibc expf,
 * or SLEEF's non-FMA scalar build, some frequencies differ by 1 ULP, which
 * grows to hundreds of ULP of sin by position 64). libsleef exports these
 * always; sleef.h declares them only under FP_FAST_FMA, so we declare them.
 *
 * These are per-element stand-ins: they equal torch's AVX2 results except
 * where torch's vector blocks change the bits (sin/cos blocks holding an
 * angle >= 125, pow's scalar tail) and on CPUs where torch runs another
 * kernel build. Exact torch-compat paths use torch_vec.h, which reproduces
 * the blocks and picks the build torch picks. */
#ifndef POSENC_TORCH_MATH_H
#define POSENC_TORCH_MATH_H

float Sleef_expf1_u10purecfma(float);
float Sleef_sinf1_u10purecfma(float);
float Sleef_cosf1_u10purecfma(float);
float Sleef_powf1_u10purecfma(float, float);

/* exp/sin/cos through MKL's VML when POSENC_TORCH_MKL names it (torch_vml.h: a torch
 * built with MKL), else SLEEF's (torch_vec.c) */
float torch_vml_expf_(float x);
float torch_vml_sinf_(float x);
float torch_vml_cosf_(float x);
static inline float torch_expf(float x) { return torch_vml_expf_(x); }
static inline float torch_sinf(float x) { return torch_vml_sinf_(x); }
static inline float torch_cosf(float x) { return torch_vml_cosf_(x); }
static inline float torch_powf(float x, float y) { return Sleef_powf1_u10purecfma(x, y); }

#endif
