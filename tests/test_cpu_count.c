/* test_cpu_count.c: posenc_cpu_count counts the cores this process may use,
 * not every online core (the default thread count of every exec and of the
 * lab; one thread per online core on a one-core quota made the lab's spinning
 * pool 5x slower: docs/kernels.md).
 *   - affinity: the process pins itself to one CPU before the first call (the
 *     count is read once per process), then posenc_cpu_count() must be 1 and
 *     an exec with threads 0 must resolve to 1 thread; on a one-CPU machine
 *     the check is skipped, as it could not fail there;
 *   - quota: posenc_cpu_quota_ on cgroup files written here (v2 cpu.max "max",
 *     "QUOTA PERIOD" rounding up, garbage; v1 quota -1, a quota, a missing file).
 * White-box: src/common/kernels.h. */
#define _GNU_SOURCE /* sched_setaffinity */
#include "check.h"
#include "../src/common/kernels.h"

#include <sched.h>
#include <unistd.h>

static const char *write_file(const char *dir, const char *name, const char *text) {
    static char paths[8][600];
    static int next = 0;
    char *p = paths[next++ % 8];
    snprintf(p, 600, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
    return p;
}

static void check_quota(void) {
    char dir[400];
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/posenc-cpu-count-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        CHECK(0, "cannot make a temporary folder");
        return;
    }
    static const struct {
        const char *cpu_max;
        long want;
    } v2[] = {{"max 100000\n", 0}, {"100000 100000\n", 1}, {"150000 100000\n", 2}, {"50000 100000\n", 1},
              {"400000 100000\n", 4}, {"nonsense\n", 0}, {"\n", 0}};
    for (size_t i = 0; i < sizeof v2 / sizeof v2[0]; i++) {
        const char *path = write_file(dir, "cpu.max", v2[i].cpu_max);
        long got = posenc_cpu_quota_(path, NULL, NULL);
        CHECK(got == v2[i].want, "cgroup v2 cpu.max \"%.*s\" -> %ld cores (want %ld; 0 = no limit)",
              (int)strcspn(v2[i].cpu_max, "\n"), v2[i].cpu_max, got, v2[i].want);
    }
    static const struct {
        const char *quota, *period;
        long want;
    } v1[] = {{"-1\n", "100000\n", 0}, {"200000\n", "100000\n", 2}, {"250000\n", "100000\n", 3}, {"x\n", "100000\n", 0}};
    char missing[600];
    snprintf(missing, sizeof missing, "%s/no-cpu.max", dir);
    for (size_t i = 0; i < sizeof v1 / sizeof v1[0]; i++) {
        const char *q = write_file(dir, "cpu.cfs_quota_us", v1[i].quota);
        const char *per = write_file(dir, "cpu.cfs_period_us", v1[i].period);
        long got = posenc_cpu_quota_(missing, q, per);
        CHECK(got == v1[i].want, "cgroup v1 quota %.*s, period %.*s -> %ld cores (want %ld)",
              (int)strcspn(v1[i].quota, "\n"), v1[i].quota, (int)strcspn(v1[i].period, "\n"), v1[i].period, got,
              v1[i].want);
    }
    CHECK(posenc_cpu_quota_(missing, missing, missing) == 0, "no cgroup files: no limit (0)");
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0, "temporary folder removed");
}

static void check_affinity(void) {
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    if (online < 2 || sched_getaffinity(0, sizeof set, &set) != 0 || CPU_COUNT(&set) < 2) {
        printf("  skip  affinity: this process may run on one CPU only, where the check cannot fail\n");
        return;
    }
    int first = 0;
    while (!CPU_ISSET(first, &set)) first++;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) {
        printf("  skip  affinity: sched_setaffinity refused\n");
        return;
    }
    posenc_exec exec, resolved;
    posenc_exec_default(&exec);
    posenc_error err;
    posenc_status st = posenc_exec_resolve(&exec, &resolved, &err);
    CHECK(posenc_cpu_count() == 1 && st == POSENC_OK && resolved.threads == 1,
          "pinned to CPU %d of %ld online: posenc_cpu_count() = %d, default exec threads = %d (want 1, 1)", first,
          online, (int)posenc_cpu_count(), st == POSENC_OK ? (int)resolved.threads : -1);
}

int main(void) {
    if (getenv("POSENC_THREADS")) unsetenv("POSENC_THREADS"); /* the default count is what is checked */
    check_affinity(); /* first: the count is read once per process */
    check_quota();
    return check_finish();
}
