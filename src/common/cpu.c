/* cpu.c: what the machine offers: which kernel paths the CPU runs
 * (cpuid) and how many cores this process may use. The lowest piece of the execution
 * layer: exec.c and threadpool.c both ask it, it asks neither. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "kernels.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
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

long posenc_cpu_quota_(const char *cpu_max_path, const char *quota_path, const char *period_path) {
    char text[128] = "";
    FILE *f = cpu_max_path ? fopen(cpu_max_path, "r") : NULL;
    if (f) { /* cgroup v2 cpu.max: "max 100000" (no limit) or "QUOTA PERIOD" in us */
        bool read = fgets(text, sizeof text, f) != NULL;
        fclose(f);
        long long quota = 0, period = 0;
        if (!read || sscanf(text, "%lld %lld", &quota, &period) != 2 || quota <= 0 || period <= 0) return 0;
        return (long)((quota + period - 1) / period);
    }
    long long value[2] = {0, 0}; /* cgroup v1: cpu.cfs_quota_us (-1: no limit), cpu.cfs_period_us */
    const char *paths[2] = {quota_path, period_path};
    for (int i = 0; i < 2; i++) {
        f = paths[i] ? fopen(paths[i], "r") : NULL;
        if (!f) return 0;
        bool read = fgets(text, sizeof text, f) != NULL;
        fclose(f);
        if (!read || sscanf(text, "%lld", &value[i]) != 1) return 0;
    }
    if (value[0] <= 0 || value[1] <= 0) return 0;
    return (long)((value[0] + value[1] - 1) / value[1]);
}

/* The cores this process may use: the online ones, fewer when its affinity
 * mask (taskset, a container's cpuset) or its cgroup's CPU quota (docker
 * --cpus, Kubernetes limits) allows fewer. Counting every online core there
 * started one thread per host core on a quota of one or two: the lab's pool,
 * whose workers spin briefly between jobs, took 44 s instead of 8.6 s for the
 * README's `lab run demo` under `taskset -c 0` on this 2-core VM, and a
 * container on a large host would start dozens. sysconf and the files cost
 * microseconds (sysconf alone 6.1 us here), on every call that runs on the
 * default thread count: read once per process and cached like cpu_has_f16c
 * (a racing first write stores the same value). */
int32_t posenc_cpu_count(void) {
    static _Atomic int32_t known = 0; /* 0: not read yet */
    int32_t v = atomic_load_explicit(&known, memory_order_relaxed);
    if (v == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
#if defined(__linux__)
        cpu_set_t set;
        if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0 && CPU_COUNT(&set) < n)
            n = CPU_COUNT(&set);
        long quota = posenc_cpu_quota_("/sys/fs/cgroup/cpu.max", "/sys/fs/cgroup/cpu/cpu.cfs_quota_us",
                                       "/sys/fs/cgroup/cpu/cpu.cfs_period_us");
        if (quota > 0 && quota < n) n = quota;
#endif
        v = n < 1 ? 1 : n > POSENC_MAX_THREADS ? POSENC_MAX_THREADS : (int32_t)n;
        atomic_store_explicit(&known, v, memory_order_relaxed);
    }
    return v;
}

