/* bench_peer.c: one timing of a peer (NumPy, PyTorch) from bench/peers.py, for
 * `posenc bench`'s kernel rows (cmd_bench.c) and its decode rows (bench_decode.c). */
#define _POSIX_C_SOURCE 200809L /* popen, pclose */
#include "cli.h"

#include <stdio.h>
#include <string.h>

double cli_bench_run_peer(const char *python, const char *script, const char *workload, int threads, int reps,
                          char *why, size_t why_size) {
    char cmd[4096];
    /* numpy's OpenBLAS ignores these for sin/cos, but peer-baselines.md ran without them */
    if (!cli_shell_command(cmd, sizeof cmd, python, script,
                           "env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS=%d '%s' '%s' %s %d %d 2>&1",
                           threads, python, script, workload, threads, reps)) {
        snprintf(why, why_size, "the interpreter or script path holds a single quote or is too long");
        return -1;
    }
    FILE *f = popen(cmd, "r");
    if (!f) {
        snprintf(why, why_size, "cannot start %s", python);
        return -1;
    }
    char line[512] = "";
    double ms = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "median_ms %lf", &ms) == 1) break;
    int rc = pclose(f);
    if (ms < 0) {
        line[strcspn(line, "\n")] = '\0';
        snprintf(why, why_size, "%s", rc == 0 ? line : "peer failed");
    }
    return ms;
}
