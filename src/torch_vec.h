/* torch_vec.h: torch's AVX2 sin/cos on 8-lane blocks.
 *
 * SLEEF's vector sinf/cosf pick their range reduction per VECTOR: if any lane
 * has |x| >= 125 the whole vector takes the Payne-Hanek path, whose result for
 * the small lanes can differ by 1 ULP from the per-element (scalar) choice.
 * torch 1.13 (CPU capability AVX2) evaluates a contiguous float tensor in
 * blocks of 8 lanes, so reproducing its bits needs the same blocks: HF's
 * [T, R] cos/sin table puts pairs 8j..8j+7 of one position in one block when
 * R/2 is a multiple of 8. */
#ifndef POSENC_TORCH_VEC_H
#define POSENC_TORCH_VEC_H

#include <stdbool.h>

/* c[i] = cos(x[i]), s[i] = sin(x[i]) for 8 lanes exactly as torch's AVX2
 * kernels. Returns false (and writes nothing) when the CPU lacks AVX2+FMA. */
bool torch_cos_sin_block8_(const float *x, float *c, float *s);

#endif
