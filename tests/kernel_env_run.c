/* kernel_env_run.c: `kernel_env_run PATH THREADS PROGRAM [ARGS...]` runs PROGRAM
 * with POSENC_KERNEL_PATH=PATH and POSENC_THREADS=THREADS, so one build's tests
 * cover every kernel path and thread count. Exits 77 (ctest: skipped) when this
 * CPU cannot run PATH, 2 on bad arguments. */
#define _GNU_SOURCE /* setenv, execvp */
#include "posenc.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: kernel_env_run PATH THREADS PROGRAM [ARGS...]\n");
        return 2;
    }
    posenc_kernel_path path;
    posenc_error err = {0};
    if (posenc_kernel_path_parse(argv[1], &path, &err) != POSENC_OK) {
        fprintf(stderr, "kernel_env_run: %s\n", err.message);
        return 2;
    }
    if (!posenc_kernel_path_supported(path)) {
        printf("SKIP: kernel path %s is not supported on this CPU\n", argv[1]);
        return 77;
    }
    setenv("POSENC_KERNEL_PATH", argv[1], 1);
    setenv("POSENC_THREADS", argv[2], 1);
    printf("kernel path %s, %s threads\n", argv[1], argv[2]);
    fflush(stdout);
    execvp(argv[3], argv + 3);
    perror("kernel_env_run: exec");
    return 2;
}
