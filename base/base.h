/* base.h: the floor of the posenc tool, shared by the drawing library (render/)
 * and the commands (cli/): exit codes, messages on stderr, a growable byte buffer
 * written atomically, the progress line, the canonical names of the library's
 * enums, and the lab result file reader. It uses posenc.h (and cJSON) only and
 * includes nothing from render/ or cli/ (docs/architecture.md). */
#ifndef POSENC_BASE_H
#define POSENC_BASE_H

#include "posenc.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exit codes (documented in docs/errors.md and `posenc --help`). */
enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_USAGE = 2 };

/* ---- messages (base/messages.c) ---- */
/* Print "posenc CMD: message" (+ "hint: ..." if hint) to stderr and return code. */
int cli_fail(const char *command, int code, const char *hint, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* Print text with newlines, tabs and other control bytes escaped (\n, \t, \xHH),
 * and every byte that is not part of a valid UTF-8 character (or is a C1 control)
 * as \xHH: for file names and strings read from files, which may hold them, in
 * one-line messages. */
void cli_put_escaped(FILE *f, const char *text);
/* A note on stderr, "posenc CMD: message", escaped as cli_fail's messages are. */
void cli_note(const char *command, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Report a library error: message to stderr, EXIT_USAGE for argument errors
 * (invalid argument), EXIT_RUNTIME otherwise. */
int cli_fail_status(const char *command, const posenc_error *err);
/* Report a failed allocation of an output whose size came from options: over
 * --max-bytes or size_t is a usage error (2) with limit_hint; out of memory is
 * a runtime error (1) that does not suggest raising the limit. */
int cli_fail_allocation(const char *command, const posenc_error *err, const char *limit_hint);

/* ---- canonical names of the library's enums (base/vocab_words.c; cli/vocab.c
 * parses the same words from flags, so each name is written once) ---- */
typedef struct {
    const char *name;
    int value;
} cli_vocab_word;
/* {name, enum value} lists ending in {NULL, 0}; the first name of a value is its canonical one. */
extern const cli_vocab_word cli_layout_words[], cli_freqs_words[], cli_odd_words[];
/* Canonical names of the enums ("interleaved", "half"; "vaswani", "t2t"; "error", "pad", "round_up"). */
const char *cli_layout_name(posenc_layout layout);
const char *cli_freqs_name(posenc_freqs freqs);
const char *cli_odd_name(posenc_odd_policy odd);

/* ---- progress on a terminal (base/progress.c) ---- */
/* A progress line with the time left, on stderr only when stderr is a terminal
 * (nothing otherwise). Units are any measure of work (weights allowed); step with
 * the units done before the next piece starts, at the start of a stdout line. */
typedef struct {
    const char *command;
    double total, start;
    bool enabled, drawn;
} cli_progress;
void cli_progress_begin(cli_progress *p, const char *command, double total_units);
void cli_progress_step(cli_progress *p, double done_units, const char *label);
void cli_progress_end(cli_progress *p); /* erase the line */

/* ---- bytes (base/buffer.c) ---- */
typedef struct cli_buffer cli_buffer;
/* Growable byte buffer for PNG/SVG/HTML bodies; `failed` latches on an
 * allocation failure so callers check once at the end. */
struct cli_buffer {
    char *data;
    size_t len, cap;
    bool failed;
};
void cli_buffer_append(cli_buffer *b, const void *bytes, size_t n);
void cli_buffer_puts(cli_buffer *b, const char *text);
void cli_buffer_printf(cli_buffer *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* XML/HTML-escaped text; bytes that are not UTF-8 and control characters XML forbids
 * become U+FFFD, so a picture or page stays readable whatever a name holds. */
void cli_buffer_escape(cli_buffer *b, const char *text);
/* Bytes of the valid UTF-8 sequence at text (1-4; 1 for ASCII and NUL), 0 when none starts there. */
size_t cli_utf8_length(const char *text);
void cli_buffer_base64(cli_buffer *b, const void *bytes, size_t n);
void cli_buffer_free(cli_buffer *b);
/* Write the buffer to path atomically (temp + rename); EXIT_* code. */
int cli_buffer_write(const char *command, const char *path, const cli_buffer *b);
bool cli_path_ends_with(const char *path, const char *suffix);

/* ---- tables (base/read_table.c) ---- */
/* Read a table (analysis commands, rope identify): .npy, or tensor `tensor` of a .safetensors file; empty -> exit 1. */
int cli_read_table(const char *command, const char *path, const char *tensor, size_t max_bytes,
                   posenc_array *out);

/* ---- lab result files ---- */
struct cJSON;
/* Lab result files (base/lab_results.c, docs/lab.md "Result files"): one JSON object
 * with an id per line, read a line at a time. A line that is not such an object, a
 * number that is not finite or beyond 1e15, a negative bpb or an accuracy outside
 * [0, 1] fails the read naming the file, line and field; a last line without its
 * newline (an unfinished write) is ignored with a note; out of memory is said as such.
 * fn receives each run (owned: keep or cJSON_Delete it) and its line's text. */
typedef int (*cli_lab_line_fn)(void *ctx, struct cJSON *run, const char *line, size_t len, const char *path,
                               long line_no);
int cli_lab_each_result(const char *command, const char *path, bool missing_ok, cli_lab_line_fn fn, void *ctx);
/* All runs of the files as a cJSON array (NULL on error, message printed); missing_ok
 * skips files that do not exist. Each run keeps its fields but "grad_norms", "curve"
 * (unless keep has CLI_LAB_KEEP_CURVE) and "position_table" (kept in the first run
 * with scheme learned and the first of any scheme): memory is one line being read
 * plus a few KiB a run, not the file. */
#define CLI_LAB_KEEP_CURVE 1u
struct cJSON *cli_lab_read_results(const char *command, const char *const *paths, int count, bool missing_ok,
                                   unsigned keep);
/* cli_lab_read_results for the commands that draw on every file they are given (lab
 * claims, lab plot): a file that holds no run (empty, blank lines, or only an
 * unfinished last line) is refused as well, with cli_lab_no_runs, rather than read as
 * "nothing measured". EXIT_* code; *out gets the runs on EXIT_OK, else NULL. */
int cli_lab_read_runs(const char *command, const char *const *paths, int count, unsigned keep, struct cJSON **out);
/* "FILE holds no lab runs" + the hint that lab run writes one; returns EXIT_USAGE. */
int cli_lab_no_runs(const char *command, const char *path);

#endif
