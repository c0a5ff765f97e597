/* rope_avx512.c: the AVX-512 build of rope_rotate_body.h, 16 channels per
 * vector. Compiled with -mavx512f/bw/dq/vl -ffp-contract=off: products and sums
 * round separately, as in the scalar reference (rope_apply.c), so every path
 * gives the same bits. */
#include "rope_kernels.h"

#define ROPE_ISA avx512 /* the kernels are rope_rotate_token_{f32,f16,bf16}_avx512_ */
#include "rope_avx512_vectors.h"
#include "rope_rotate_body.h"
