/* regression_driver.c: replays files through a fuzz target without libFuzzer
 * (zstd's regression_driver). Arguments are files or folders (folders are
 * read non-recursively, in sorted order). Exits non-zero when a folder is
 * missing or empty, so a lost corpus cannot pass silently; a target that
 * finds a broken promise aborts, which fails the test. */
#include "fuzz_common.h"

#include <dirent.h>
#include <sys/stat.h>

static int replay_file(const char *path) {
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        fuzz_say("replay: cannot open %s\n", path);
        return -1;
    }
    size_t cap = 1 << 12, size = 0;
    unsigned char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + size, 1, cap - size, fp)) > 0) {
        size += got;
        if (size == cap) {
            unsigned char *bigger = realloc(buf, cap * 2);
            if (!bigger) break;
            buf = bigger;
            cap *= 2;
        }
    }
    fclose(fp);
    if (!buf) return -1;
    /* an exact-size copy, so ASan sees reads past the input's end */
    unsigned char *exact = malloc(size ? size : 1);
    if (!exact) {
        free(buf);
        return -1;
    }
    memcpy(exact, buf, size);
    free(buf);
    LLVMFuzzerTestOneInput(exact, size);
    free(exact);
    return 0;
}

static int compare_names(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv) {
    FILE *report = stdout; /* a target may repoint stdout/stderr at /dev/null */
    FILE *problems = stderr;
    LLVMFuzzerInitialize(&argc, &argv);
    int total = 0, bad = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(problems, "replay: %s does not exist\n", argv[i]);
            bad++;
            continue;
        }
        if (!S_ISDIR(st.st_mode)) {
            bad += replay_file(argv[i]) != 0;
            total++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        char **names = NULL;
        size_t n = 0;
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.') continue;
            char **more = realloc(names, sizeof *names * (n + 1));
            if (!more) break;
            names = more;
            names[n++] = strdup(e->d_name);
        }
        if (d) closedir(d);
        qsort(names, n, sizeof *names, compare_names);
        for (size_t k = 0; k < n; k++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[i], names[k]);
            bad += replay_file(path) != 0;
            free(names[k]);
        }
        free(names);
        if (n == 0) {
            fprintf(problems, "replay: %s is empty\n", argv[i]);
            bad++;
        }
        fprintf(report, "replayed %zu inputs from %s\n", n, argv[i]);
        total += (int)n;
    }
    fprintf(report, "%d inputs replayed, %d problems (a broken promise aborts instead)\n", total, bad);
    return bad ? 1 : 0;
}
