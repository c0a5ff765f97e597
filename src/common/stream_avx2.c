/* stream_avx2.c: copy floats with non-temporal 32-byte stores (AVX2), for
 * outputs far larger than the caches; bytes are copied unchanged. Also the
 * store fence that follows streaming stores (sfence is SSE, in every x86-64). */
#include "kernels.h"

#if defined(__AVX2__)
#include <immintrin.h>

void posenc_stream_copy_f32_avx2_(float *dst, const float *src, size_t n) {
    size_t i = 0;
    for (; i < n && ((uintptr_t)(dst + i) & 31) != 0; i++) dst[i] = src[i];
    for (; i + 8 <= n; i += 8) _mm256_stream_ps(dst + i, _mm256_loadu_ps(src + i));
    for (; i < n; i++) dst[i] = src[i];
}

void posenc_store_fence_(void) { _mm_sfence(); }
#else
#include <string.h>
/* Built without the ISA flags (not x86-64): never selected (posenc_kernel_path_supported). */
void posenc_stream_copy_f32_avx2_(float *dst, const float *src, size_t n) { memcpy(dst, src, n * sizeof *dst); }
void posenc_store_fence_(void) {}
#endif
