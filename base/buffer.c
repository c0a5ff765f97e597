/* buffer.c: the growable byte buffer that PNG, SVG and HTML bodies are
 * built in, so every picture is written with one atomic write (no partial file). */
#include "base.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool reserve(cli_buffer *b, size_t extra) {
    if (b->failed) return false;
    if (extra > SIZE_MAX - b->len - 1) return b->failed = true, false;
    size_t need = b->len + extra + 1; /* keep room for a terminating NUL */
    if (need <= b->cap) return true;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    char *p = realloc(b->data, cap);
    if (!p) return b->failed = true, false;
    b->data = p;
    b->cap = cap;
    return true;
}

void cli_buffer_append(cli_buffer *b, const void *bytes, size_t n) {
    if (!reserve(b, n)) return;
    memcpy(b->data + b->len, bytes, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void cli_buffer_puts(cli_buffer *b, const char *text) { cli_buffer_append(b, text, strlen(text)); }

void cli_buffer_printf(cli_buffer *b, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    char small[512];
    int n = vsnprintf(small, sizeof small, fmt, args);
    va_end(args);
    if (n < 0) {
        b->failed = true;
        return;
    }
    if ((size_t)n < sizeof small) {
        cli_buffer_append(b, small, (size_t)n);
        return;
    }
    if (!reserve(b, (size_t)n)) return;
    va_start(args, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, args);
    va_end(args);
    b->len += (size_t)n;
}

size_t cli_utf8_length(const char *text) {
    const unsigned char *p = (const unsigned char *)text;
    if (p[0] < 0x80) return 1;
    size_t n = p[0] >= 0xC2 && p[0] < 0xE0 ? 2 : p[0] >= 0xE0 && p[0] < 0xF0 ? 3 : p[0] >= 0xF0 && p[0] <= 0xF4 ? 4 : 0;
    for (size_t i = 1; i < n; i++) /* a NUL (0x00) is no continuation byte: never read past it */
        if ((p[i] & 0xC0) != 0x80) return 0;
    /* overlong forms, UTF-16 surrogates, code points past U+10FFFF */
    if ((p[0] == 0xE0 && p[1] < 0xA0) || (p[0] == 0xED && p[1] >= 0xA0) || (p[0] == 0xF0 && p[1] < 0x90) ||
        (p[0] == 0xF4 && p[1] >= 0x90))
        return 0;
    return n;
}

void cli_buffer_escape(cli_buffer *b, const char *text) {
    for (const char *p = text; *p;) {
        size_t n = cli_utf8_length(p);
        unsigned char c = (unsigned char)*p;
        /* bytes that are not UTF-8 (a Latin-1 file name, a label cut mid-character) or
           control characters XML forbids would make the whole SVG/HTML unreadable */
        if (n == 0 || (c < 0x20 && c != '\t' && c != '\n' && c != '\r')) cli_buffer_puts(b, "\xEF\xBF\xBD"); /* U+FFFD */
        else if (c == '<') cli_buffer_puts(b, "&lt;");
        else if (c == '>') cli_buffer_puts(b, "&gt;");
        else if (c == '&') cli_buffer_puts(b, "&amp;");
        else if (c == '"') cli_buffer_puts(b, "&quot;");
        else cli_buffer_append(b, p, n);
        p += n ? n : 1;
    }
}

void cli_buffer_base64(cli_buffer *b, const void *bytes, size_t n) {
    static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char *s = bytes;
    if (!reserve(b, (n + 2) / 3 * 4)) return;
    char *o = b->data + b->len;
    size_t i = 0;
    for (; i + 2 < n; i += 3) {
        unsigned v = (unsigned)s[i] << 16 | (unsigned)s[i + 1] << 8 | s[i + 2];
        *o++ = digits[v >> 18], *o++ = digits[v >> 12 & 63], *o++ = digits[v >> 6 & 63], *o++ = digits[v & 63];
    }
    if (i < n) {
        unsigned v = (unsigned)s[i] << 16 | (i + 1 < n ? (unsigned)s[i + 1] << 8 : 0u);
        *o++ = digits[v >> 18], *o++ = digits[v >> 12 & 63];
        *o++ = i + 1 < n ? digits[v >> 6 & 63] : '=';
        *o++ = '=';
    }
    b->len = (size_t)(o - b->data);
    b->data[b->len] = '\0';
}

void cli_buffer_free(cli_buffer *b) {
    free(b->data);
    memset(b, 0, sizeof *b);
}

int cli_buffer_write(const char *command, const char *path, const cli_buffer *b) {
    if (b->failed) return cli_fail(command, EXIT_RUNTIME, NULL, "out of memory while drawing %s", path);
    const void *parts[1] = {b->data ? (const void *)b->data : (const void *)""};
    size_t sizes[1] = {b->len};
    posenc_error err = {0};
    if (posenc_file_write_atomic(path, parts, sizes, 1, &err) != POSENC_OK) return cli_fail_status(command, &err);
    return EXIT_OK;
}

bool cli_path_ends_with(const char *path, const char *suffix) {
    size_t n = strlen(path), m = strlen(suffix);
    if (n < m) return false;
    for (size_t i = 0; i < m; i++) {
        char c = path[n - m + i];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != suffix[i]) return false;
    }
    return true;
}
