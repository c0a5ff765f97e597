/* cpu.c: what the machine offers: which kernel paths the CPU runs
 * (cpuid) and how many cores are online. The lowest piece of the execution
 * layer: exec.c and threadpool.c both ask it, it asks neither. */
#include "kernels.h"

#include <stdatomic.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif
#include <unistd.h>

#if defined(__x86_64__) && defined(__GNUC__)
/* F16C (f16 RoPE) and AVX512_BF16 (the bf16 RoPE kernel's rounding) are
 * asked through cpuid because clang 14's __builtin_cpu_supports does not know
 * "f16c" (and GCC 12's answers 0 on an F16C CPU). CPUID traps to the
 * hypervisor in a VM: ~11 us per call here, a third of a small table's time
 * when every call asked (perf, 8 x 1024 table). So the answer is cached: one
 * of the library's two statics (the other is the online core count, below), a
 * fact of the CPU that every thread computes identically, so a racing first
 * write stores the same value (an atomic, so the race is defined). */
enum { CPU_F16C = 1, CPU_AVX512BF16 = 2, CPU_ASKED = 4 };
static int cpu_features(void) {
    static _Atomic int known = 0; /* 0: not asked yet; else CPU_ASKED | what the CPU has */
    int v = atomic_load_explicit(&known, memory_order_relaxed);
    if (v == 0) {
        unsigned eax, ebx, ecx = 0, edx;
        v = CPU_ASKED;
        if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C)) v |= CPU_F16C;
        /* leaf 7, sub-leaf 1, EAX bit 5 */
        if (__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) && (eax & (1u << 5))) v |= CPU_AVX512BF16;
        atomic_store_explicit(&known, v, memory_order_relaxed);
    }
    return v;
}
static bool cpu_has_f16c(void) { return (cpu_features() & CPU_F16C) != 0; }
#endif

int posenc_kernel_path_supported(posenc_kernel_path path) {
    switch (path) {
    case POSENC_PATH_AUTO:
    case POSENC_PATH_SCALAR: return 1;
#if defined(__x86_64__) && defined(__GNUC__)
    case POSENC_PATH_AVX2: {
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && cpu_has_f16c();
    }
    case POSENC_PATH_AVX512:
        __builtin_cpu_init();
        return posenc_kernel_path_supported(POSENC_PATH_AVX2) &&
               __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
#endif
    default: return 0;
    }
}

bool posenc_cpu_has_avx512bf16_(void) {
#if defined(__x86_64__) && defined(__GNUC__)
    return posenc_kernel_path_supported(POSENC_PATH_AVX512) && (cpu_features() & CPU_AVX512BF16) != 0;
#else
    return false;
#endif
}

/* sysconf(_SC_NPROCESSORS_ONLN) opens and reads /sys/devices/system/cpu/online
 * on glibc: 6.1 us per call here, on every call that runs on the default
 * thread count. Read once per process and cached like cpu_has_f16c (a racing
 * first write stores the same value). */
int32_t posenc_cpu_count(void) {
    static _Atomic int32_t known = 0; /* 0: not read yet */
    int32_t v = atomic_load_explicit(&known, memory_order_relaxed);
    if (v == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        v = n < 1 ? 1 : n > POSENC_MAX_THREADS ? POSENC_MAX_THREADS : (int32_t)n;
        atomic_store_explicit(&known, v, memory_order_relaxed);
    }
    return v;
}

