/* cli.h: shared pieces of the posenc tool (argument parsing, output files).
 * The tool includes only posenc.h from the library. */
#ifndef POSENC_CLI_H
#define POSENC_CLI_H

#include "posenc.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Exit codes (documented in docs/errors.md and `posenc --help`). */
enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_USAGE = 2 };

/* ---- option parsing ---------------------------------------------------- */

typedef struct {
    const char *name;  /* long name without dashes, e.g. "len"; "o" for -o */
    const char *value; /* metavariable if it takes a value ("N"), NULL for a flag */
    const char *help;
} cli_option;

#define CLI_MAX_OPTIONS 64
#define CLI_MAX_POSITIONAL 8

typedef struct {
    const char *command;          /* e.g. "table", for messages */
    const cli_option *options;    /* terminated by {NULL} */
    const char *values[CLI_MAX_OPTIONS];
    bool seen[CLI_MAX_OPTIONS];
    const char *positional[CLI_MAX_POSITIONAL];
    int positional_count;
    bool help;
} cli_args;

/* Parse argv (after the command words). Returns EXIT_OK, or EXIT_USAGE after
 * printing the error and a hint. --help / -h set args->help. */
int cli_parse(cli_args *args, const char *command, const cli_option *options, int argc,
              char **argv, int max_positional);
void cli_print_options(const cli_option *options);

bool cli_has(const cli_args *args, const char *name);
const char *cli_string(const cli_args *args, const char *name, const char *fallback);
/* Typed getters: on a bad value they print "posenc CMD: --name must be ..., got 'x'"
 * and return false (the caller exits with EXIT_USAGE). Absent options keep *out. */
bool cli_int64(const cli_args *args, const char *name, int64_t min, int64_t max, int64_t *out);
bool cli_int32(const cli_args *args, const char *name, int32_t min, int32_t max, int32_t *out);
bool cli_double(const cli_args *args, const char *name, double *out);
/* Choose one of `choices` (NULL-terminated); *out = index. */
bool cli_choice(const cli_args *args, const char *name, const char *const *choices, int *out);

/* Print "posenc CMD: message" (+ "hint: ..." if hint) to stderr and return code. */
int cli_fail(const char *command, int code, const char *hint, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* Report a library error: message to stderr, EXIT_USAGE for argument errors
 * (invalid argument), EXIT_RUNTIME otherwise. */
int cli_fail_status(const char *command, const posenc_error *err);

/* ---- files ------------------------------------------------------------- */

/* Write to OUT.npy or OUT.csv (by extension); "-" writes CSV to stdout. */
int cli_write_array(const char *command, const char *path, const posenc_array *array);
/* Read a positions .npy: 1-D i64/i32 (integer) or f64/f32 (real). Exactly one
 * of *ids / *values is set (malloc'd). */
int cli_read_positions(const char *command, const char *path, int64_t **ids, double **values,
                       size_t *count);
/* Size ceiling for outputs: --max-bytes flag, else POSENC_MAX_BYTES env, else default. */
size_t cli_max_bytes(const cli_args *args);

/* ---- commands ---------------------------------------------------------- */
int cmd_table(int argc, char **argv);
int cmd_rope(int argc, char **argv);         /* posenc rope freqs|apply|explain */
int cmd_rope_explain(int argc, char **argv); /* posenc rope explain (cmd_rope_explain.c) */
/* @@CLI_COMMANDS_ROPE@@ */
/* */
/* */
/* @@CLI_COMMANDS_BIAS@@ */
/* */
/* */
/* @@CLI_COMMANDS_LEARNED@@ */
/* */
/* */
/* @@CLI_COMMANDS_ANALYSIS@@ */
/* */
/* */
/* @@CLI_COMMANDS_RENDER@@ */
/* */
/* */
/* @@CLI_COMMANDS_KERNELS@@ */
/* */
/* */
/* @@CLI_COMMANDS_FUZZ@@ */
/* */
/* */

#endif
