/* args.c: a small table-driven long-option parser with typed, checked getters. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int find_option(const cli_option *options, const char *name, size_t len) {
    for (int i = 0; options[i].name; i++)
        if (strlen(options[i].name) == len && strncmp(options[i].name, name, len) == 0) return i;
    return -1;
}

/* A positive decimal byte count without sign, suffix or overflow. */
static bool parse_byte_count(const char *v, size_t *out) {
    if (*v < '0' || *v > '9') return false;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (errno || *end != '\0' || x == 0 || x > SIZE_MAX) return false;
    if (out) *out = (size_t)x;
    return true;
}

int cli_parse(cli_args *args, const char *command, const cli_option *options, int argc,
              char **argv, int max_positional) {
    memset(args, 0, sizeof *args);
    args->command = command;
    args->options = options;
    bool only_positional = false;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!only_positional && strcmp(a, "--") == 0) {
            only_positional = true;
            continue;
        }
        if (!only_positional && (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)) {
            args->help = true;
            continue;
        }
        bool is_option = !only_positional && a[0] == '-' && a[1] != '\0' && strcmp(a, "-") != 0 &&
                         !(a[1] >= '0' && a[1] <= '9');
        if (!is_option) {
            if (args->positional_count >= max_positional || args->positional_count >= CLI_MAX_POSITIONAL)
                return cli_fail(command, EXIT_USAGE, "see --help", "unexpected argument '%s'", a);
            args->positional[args->positional_count++] = a;
            continue;
        }
        const char *name = a + (a[1] == '-' ? 2 : 1);
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        int k = find_option(options, name, len);
        if (k < 0)
            return cli_fail(command, EXIT_USAGE, "see the options with --help",
                            "unknown option '%.*s'", (int)(len + (size_t)(name - a)), a);
        if (options[k].value) {
            const char *v = eq ? eq + 1 : NULL;
            if (!v) {
                if (i + 1 >= argc)
                    return cli_fail(command, EXIT_USAGE, NULL, "option '%s' needs a value (%s)", a,
                                    options[k].value);
                v = argv[++i];
            }
            args->values[k] = v;
        } else if (eq) {
            return cli_fail(command, EXIT_USAGE, NULL, "option '--%s' takes no value",
                            options[k].name);
        }
        args->seen[k] = true;
    }
    /* A size limit that does not parse must not silently become the default
     * (strtoull alone would also wrap "-1" to 2^64-1): refuse it here, once, for
     * every command that takes --max-bytes. */
    if (find_option(options, "max-bytes", 9) >= 0) {
        const char *v = cli_string(args, "max-bytes", NULL), *from = "--max-bytes";
        if (!v && getenv("POSENC_MAX_BYTES")) {
            v = getenv("POSENC_MAX_BYTES");
            from = "POSENC_MAX_BYTES";
        }
        if (v && !parse_byte_count(v, NULL))
            return cli_fail(command, EXIT_USAGE, NULL,
                            "%s must be a positive whole number of bytes, got '%s'", from, v);
    }
    /* An output that is one of the inputs would be replaced before (or while) it
     * is read: checked here, once, for every command that takes -o. */
    int out = find_option(options, "o", 1);
    if (out >= 0 && args->values[out] && !args->help) return cli_refuse_same_file(args, args->values[out]);
    return EXIT_OK;
}

/* Options whose file is meant to be the output too: `lab train --resume CKPT -o
 * CKPT` continues a checkpoint in place (it is read whole before the first write). */
static const char *const may_name_output[] = {"resume", NULL};

int cli_refuse_same_file(const cli_args *args, const char *out) {
    struct stat o, in;
    /* stdout, or an output that does not exist yet, cannot be an input */
    if (strcmp(out, "-") == 0 || stat(out, &o) != 0 || !S_ISREG(o.st_mode)) return EXIT_OK;
    for (int i = 0; args->options[i].name; i++) {
        const char *v = args->values[i];
        bool allowed = strcmp(args->options[i].name, "o") == 0;
        for (int k = 0; may_name_output[k] && !allowed; k++) allowed = strcmp(args->options[i].name, may_name_output[k]) == 0;
        if (allowed || !v || stat(v, &in) != 0 || in.st_dev != o.st_dev || in.st_ino != o.st_ino) continue;
        return cli_fail(args->command, EXIT_USAGE, "write the output to another file",
                        "-o %s and --%s %s are the same file: writing it would destroy the input", out,
                        args->options[i].name, v);
    }
    for (int i = 0; i < args->positional_count; i++) {
        const char *v = args->positional[i];
        if (stat(v, &in) != 0 || in.st_dev != o.st_dev || in.st_ino != o.st_ino) continue;
        return cli_fail(args->command, EXIT_USAGE, "write the output to another file",
                        "-o %s and the input %s are the same file: writing it would destroy the input", out, v);
    }
    return EXIT_OK;
}

void cli_print_options(const cli_option *options) {
    for (int i = 0; options[i].name; i++) {
        char left[64];
        const char *dash = strlen(options[i].name) == 1 ? "-" : "--";
        if (options[i].value)
            snprintf(left, sizeof left, "%s%s %s", dash, options[i].name, options[i].value);
        else
            snprintf(left, sizeof left, "%s%s", dash, options[i].name);
        printf("  %-26s %s\n", left, options[i].help);
    }
    printf("  %-26s %s\n", "-h, --help", "show this help");
}

static int index_of(const cli_args *args, const char *name) {
    return find_option(args->options, name, strlen(name));
}

bool cli_has(const cli_args *args, const char *name) {
    int k = index_of(args, name);
    return k >= 0 && args->seen[k];
}

bool cli_shell_command(char *out, size_t size, const char *python, const char *script, const char *fmt, ...) {
    if (strchr(python, '\'') || strchr(script, '\'')) return false; /* they go inside '...' */
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out, size, fmt, ap);
    va_end(ap);
    return n >= 0 && (size_t)n < size;
}

bool cli_list_has(const char *list, const char *name) {
    if (!list) return true;
    size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)) != NULL; p += n)
        if ((p == list || p[-1] == ',') && (p[n] == '\0' || p[n] == ',')) return true;
    return false;
}

const char *cli_string(const cli_args *args, const char *name, const char *fallback) {
    int k = index_of(args, name);
    return k >= 0 && args->values[k] ? args->values[k] : fallback;
}

const char *cli_default_python(void) {
    const char *env = getenv("POSENC_PYTHON");
    return env && *env ? env : "python3";
}

bool cli_int64(const cli_args *args, const char *name, int64_t min, int64_t max, int64_t *out) {
    const char *v = cli_string(args, name, NULL);
    if (!v) return true;
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (end == v || *end != '\0') {
        cli_fail(args->command, EXIT_USAGE, strpbrk(v, ".eE") ? "write the number out in digits, e.g. 1000 for 1e3" : NULL,
                 "--%s must be a whole number, got '%s'", name, v);
        return false;
    }
    if (errno || x < min || x > max) {
        /* a range whose lower end is the type's own minimum says nothing useful */
        if (min == INT64_MIN || min == INT32_MIN)
            cli_fail(args->command, EXIT_USAGE, NULL, "--%s must be at most %lld, got '%s'", name,
                     (long long)max, v);
        else
            cli_fail(args->command, EXIT_USAGE, NULL, "--%s must be an integer in [%lld, %lld], got '%s'", name,
                     (long long)min, (long long)max, v);
        return false;
    }
    *out = x;
    return true;
}

bool cli_int32(const cli_args *args, const char *name, int32_t min, int32_t max, int32_t *out) {
    int64_t x = *out;
    if (!cli_int64(args, name, min, max, &x)) return false;
    *out = (int32_t)x;
    return true;
}

bool cli_double(const cli_args *args, const char *name, double *out) {
    const char *v = cli_string(args, name, NULL);
    if (!v) return true;
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (end == v || *end != '\0' || errno == ERANGE || !isfinite(x)) {
        cli_fail(args->command, EXIT_USAGE, NULL, "--%s must be a finite number, got '%s'", name, v);
        return false;
    }
    *out = x;
    return true;
}

bool cli_choice(const cli_args *args, const char *name, const char *const *choices, int *out) {
    const char *v = cli_string(args, name, NULL);
    if (!v) return true;
    for (int i = 0; choices[i]; i++)
        if (strcmp(v, choices[i]) == 0) {
            *out = i;
            return true;
        }
    char list[256] = "";
    for (int i = 0; choices[i]; i++) {
        strncat(list, choices[i], sizeof list - strlen(list) - 1);
        if (choices[i + 1]) strncat(list, "|", sizeof list - strlen(list) - 1);
    }
    cli_fail(args->command, EXIT_USAGE, NULL, "unknown --%s '%s' (choose %s)", name, v, list);
    return false;
}

size_t cli_max_bytes(const cli_args *args) {
    const char *v = cli_string(args, "max-bytes", NULL);
    if (!v) v = getenv("POSENC_MAX_BYTES");
    size_t x;
    if (v && parse_byte_count(v, &x)) return x; /* cli_parse already refused bad values */
    return POSENC_DEFAULT_MAX_BYTES;
}
