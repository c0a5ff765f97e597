/* fuzz_cli.c: the whole `posenc` command line (dispatch, option parser, typed
 * getters, every command) with argv carved from the fuzz input.
 *
 * Input format: arguments separated by single NUL bytes; if the input holds
 * two NULs in a row, the bytes after them become the file "p.npy" (so
 * `--positions p.npy` and other file inputs see fuzzed contents).
 *
 * Safety: each run happens inside a private temporary folder that is emptied
 * afterwards; '/' in any argument becomes '_' so no path can leave it (and
 * ".tmp." and ".posenc-" become "_tmp." and "_posenc-" so such names always
 * mean a stray temporary file);
 * --max-bytes is dropped and POSENC_MAX_BYTES is set to 256 KiB so no run can
 * allocate or compute a huge table; stdout/stderr of the tool go to /dev/null
 * (sanitizer reports still reach file descriptor 2). `posenc bench` is skipped
 * (it runs timing loops and Python peers). Run libFuzzer with an
 * absolute -artifact_prefix, as .ci/run does, since the working folder moves.
 *
 * Promises checked: no crash, leak or UB; the exit code is 0, 1 or 2; a
 * failed run leaves no output file and no temporary file, and never changes
 * the input file p.npy. */
#include "fuzz_common.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

int posenc_cli_main(int argc, char **argv);

#define CLI_FUZZ_MAX_ARGS 64

static char work_dir[256];

static void remove_work_dir(void) {
    if (work_dir[0]) rmdir(work_dir); /* empty after every run */
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    const char *tmp = getenv("TMPDIR");
    snprintf(work_dir, sizeof work_dir, "%s/posenc-fuzz-cli-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(work_dir)) {
        perror("fuzz_cli: mkdtemp");
        abort();
    }
    atexit(remove_work_dir);
    setenv("POSENC_MAX_BYTES", "262144", 1);
    /* the tool's messages are not the fuzzer's business; glibc lets us repoint them */
    FILE *null_out = fopen("/dev/null", "w");
    if (null_out) {
        stdout = null_out;
        stderr = null_out;
    }
    return 0;
}

/* Remove every entry of the work folder; report whether a temporary file was among them. */
static int empty_work_dir(const char *keep, int *stray_temp, int *other_files) {
    DIR *d = opendir(".");
    if (!d) return -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (strstr(e->d_name, ".tmp.") || strncmp(e->d_name, ".posenc-", 8) == 0) *stray_temp = 1;
        else if (!keep || strcmp(e->d_name, keep) != 0) *other_files = 1;
        if (unlink(e->d_name) != 0) rmdir(e->d_name);
    }
    closedir(d);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!work_dir[0]) LLVMFuzzerInitialize(NULL, NULL);
    char *buf = malloc(size + 1);
    if (!buf) return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    /* split off the file payload at the first double NUL */
    size_t args_len = size, file_at = size;
    for (size_t i = 0; i + 1 < size; i++)
        if (buf[i] == '\0' && buf[i + 1] == '\0') {
            args_len = i;
            file_at = i + 2;
            break;
        }
    char *argv[CLI_FUZZ_MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = "posenc";
    for (size_t i = 0; i < args_len && argc < CLI_FUZZ_MAX_ARGS + 1;) {
        char *a = buf + i;
        size_t n = strlen(a);
        i += n + 1;
        for (char *c = a; *c; c++)
            if (*c == '/') *c = '_';
        /* so that any name holding ".tmp." is a writer's temporary file */
        for (char *t = strstr(a, ".tmp."); t; t = strstr(t, ".tmp.")) *t = '_';
        for (char *t = strstr(a, ".posenc-"); t; t = strstr(t, ".posenc-")) *t = '_';
        if (strstr(a, "max-bytes")) continue;
        argv[argc++] = a;
    }
    argv[argc] = NULL;
    /* `bench` times kernels for seconds and starts Python peers: not fuzzable */
    if (argc > 1 && strcmp(argv[1], "bench") == 0) {
        free(buf);
        return 0;
    }

    int home = open(".", O_RDONLY | O_DIRECTORY);
    if (home < 0 || chdir(work_dir) != 0) abort();
    int have_file = args_len < size;
    if (have_file) {
        FILE *fp = fopen("p.npy", "wb");
        if (!fp) abort();
        fwrite(buf + file_at, 1, size - file_at, fp);
        fclose(fp);
    }
    int rc = posenc_cli_main(argc, argv);
    fflush(stdout);
    FUZZ_REQUIRE(rc == 0 || rc == 1 || rc == 2, "exit code %d", rc);
    if (rc != 0 && have_file) { /* the input must be intact after a failed run */
        FILE *fp = fopen("p.npy", "rb");
        FUZZ_REQUIRE(fp != NULL, "a failed run removed its input file");
        size_t n = size - file_at;
        char *back = malloc(n + 1);
        size_t got = back ? fread(back, 1, n + 1, fp) : 0;
        fclose(fp);
        FUZZ_REQUIRE(!back || (got == n && memcmp(back, buf + file_at, n) == 0), "a failed run changed p.npy");
        free(back);
    }
    int stray_temp = 0, other_files = 0;
    empty_work_dir(have_file ? "p.npy" : NULL, &stray_temp, &other_files);
    FUZZ_REQUIRE(!stray_temp, "a temporary file was left behind (exit %d)", rc);
    FUZZ_REQUIRE(rc == 0 || !other_files, "a failed run (exit %d) left an output file", rc);
    if (fchdir(home) != 0) abort();
    close(home);
    free(buf);
    return 0;
}
