/* messages.c: the tool's messages on stderr ("posenc CMD: message", a hint line),
 * shared by the commands (cli/) and the drawing library (render/). */
#include "base.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* Bytes of the UTF-8 character at c that may go to a terminal as they are: 0 for
 * a byte that starts no valid character (Latin-1 text, a cut sequence, overlong
 * forms, surrogates) and for C1 controls U+0080..U+009F (U+009B is a CSI on some
 * terminals), which are then escaped byte by byte. */
static int printable_utf8(const unsigned char *c) {
    int n = (*c & 0xE0) == 0xC0 ? 2 : (*c & 0xF0) == 0xE0 ? 3 : (*c & 0xF8) == 0xF0 ? 4 : 0;
    unsigned cp = n == 2 ? *c & 0x1Fu : n == 3 ? *c & 0x0Fu : *c & 0x07u;
    for (int k = 1; k < n; k++) {
        if ((c[k] & 0xC0) != 0x80) return 0; /* also stops at the terminating NUL */
        cp = cp << 6 | (c[k] & 0x3Fu);
    }
    static const unsigned least[5] = {0, 0, 0xA0, 0x800, 0x10000}; /* 0xA0: C1 controls escaped */
    return n && cp >= least[n] && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF) ? n : 0;
}

void cli_put_escaped(FILE *f, const char *text) {
    for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
        int n;
        if (*c == '\n') fputs("\\n", f);
        else if (*c == '\t') fputs("\\t", f);
        else if (*c < 0x20 || *c == 0x7f) fprintf(f, "\\x%02x", *c);
        else if (*c < 0x80) fputc(*c, f);
        else if ((n = printable_utf8(c)) > 0) fwrite(c, 1, (size_t)n, f), c += n - 1;
        else fprintf(f, "\\x%02x", *c); /* a name from a file that is not UTF-8: never raw bytes */
    }
}

/* "posenc CMD: message" on stderr, the message escaped. Every message is one
 * line: a file name holding a newline or an escape sequence (they are legal in
 * names) is printed escaped, so it can neither fake a log line nor drive the
 * terminal. */
static void say(const char *command, const char *fmt, va_list args) {
    char stack[1024], *text = stack;
    va_list again;
    va_copy(again, args);
    int n = vsnprintf(stack, sizeof stack, fmt, args);
    if (n >= (int)sizeof stack && (text = malloc((size_t)n + 1)) != NULL) vsnprintf(text, (size_t)n + 1, fmt, again);
    va_end(again);
    if (!text) text = stack; /* out of memory: the message cut at its first 1023 bytes */
    fprintf(stderr, "posenc %s: ", command);
    cli_put_escaped(stderr, n < 0 ? fmt : text);
    fputc('\n', stderr);
    if (text != stack) free(text);
}

void cli_note(const char *command, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    say(command, fmt, args);
    va_end(args);
}

int cli_fail(const char *command, int code, const char *hint, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    say(command, fmt, args);
    va_end(args);
    if (hint) {
        fputs("hint: ", stderr);
        cli_put_escaped(stderr, hint);
        fputc('\n', stderr);
    }
    return code;
}

int cli_fail_status(const char *command, const posenc_error *err) {
    /* The library's message names the value and the reason; its generic status
     * text would only repeat it, or contradict it ("No such file or directory
     * (input/output error)"), so it is printed only when there is no message. */
    const char *message = err->message[0] ? err->message : posenc_strerror(err->status);
    switch (err->status) {
    case POSENC_ERR_INVALID_ARGUMENT:
        return cli_fail(command, EXIT_USAGE, "see --help for the accepted values", "%s", message);
    case POSENC_ERR_NONFINITE: /* the options asked for values the dtype cannot hold */
        return cli_fail(command, EXIT_USAGE, "choose smaller parameters or a wider --dtype", "%s", message);
    case POSENC_ERR_OUT_OF_MEMORY:
        return cli_fail(command, EXIT_RUNTIME, "free memory, or ask for a smaller output", "%s", message);
    default: return cli_fail(command, EXIT_RUNTIME, NULL, "%s", message);
    }
}

int cli_fail_allocation(const char *command, const posenc_error *err, const char *limit_hint) {
    if (err->status == POSENC_ERR_LIMIT || err->status == POSENC_ERR_SIZE_OVERFLOW)
        return cli_fail(command, EXIT_USAGE, limit_hint, "%s", err->message); /* sizes come from options */
    return cli_fail_status(command, err);
}
