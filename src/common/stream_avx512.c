/* stream_avx512.c: copy floats with non-temporal 64-byte stores (AVX-512), for
 * outputs far larger than the caches; bytes are copied unchanged. */
#include "kernels.h"

#if defined(__AVX512F__)
#include <immintrin.h>

void posenc_stream_copy_f32_avx512_(float *dst, const float *src, size_t n) {
    size_t i = 0;
    for (; i < n && ((uintptr_t)(dst + i) & 63) != 0; i++) dst[i] = src[i];
    for (; i + 16 <= n; i += 16) _mm512_stream_ps(dst + i, _mm512_loadu_ps(src + i));
    for (; i < n; i++) dst[i] = src[i];
}
#else
#include <string.h>
/* Built without the ISA flags (not x86-64): never selected (posenc_kernel_path_supported). */
void posenc_stream_copy_f32_avx512_(float *dst, const float *src, size_t n) { memcpy(dst, src, n * sizeof *dst); }
#endif
