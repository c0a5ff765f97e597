/* fuzz_common.h: what every posenc fuzz target shares: the libFuzzer entry
 * point prototype and FUZZ_REQUIRE, which turns a broken promise (a silently
 * wrong result, an inconsistent status, nondeterminism) into an abort so that
 * libFuzzer and the replay driver report it like a crash. */
#ifndef POSENC_FUZZ_COMMON_H
#define POSENC_FUZZ_COMMON_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "posenc.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* Straight to file descriptor 2: fuzz_cli points the stdio streams at /dev/null. */
#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static inline void fuzz_say(const char *fmt, ...) {
    char line[1024];
    va_list args;
    va_start(args, fmt);
    int n = vsnprintf(line, sizeof line, fmt, args);
    va_end(args);
    if (n > 0) (void)!write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

/* A geometry attribute of an SVG (x, y, d, points, width, ...) whose value holds
 * "nan" or "inf": a coordinate computed from a bad range. Text and names (a label
 * may well say "nan") are not looked at. */
static inline int fuzz_svg_bad_geometry(const char *svg, size_t len) {
    static const char *const names[] = {" x=\"", " y=\"", " x1=\"", " y1=\"", " x2=\"", " y2=\"", " d=\"", " points=\"",
                                        " width=\"", " height=\"", " cx=\"", " cy=\"", " r=\"", " transform=\"",
                                        " viewBox=\"", NULL};
    for (size_t i = 0; svg && i < len; i++)
        for (int k = 0; names[k]; k++) {
            size_t n = strlen(names[k]);
            if (i + n > len || memcmp(svg + i, names[k], n) != 0) continue;
            for (size_t j = i + n; j < len && svg[j] != '"'; j++)
                if (j + 3 <= len && ((svg[j] | 0x20) == 'n' || (svg[j] | 0x20) == 'i') &&
                    ((memcmp(svg + j, "nan", 3) == 0) || memcmp(svg + j, "inf", 3) == 0 || memcmp(svg + j, "NaN", 3) == 0))
                    return 1;
        }
    return 0;
}

#define FUZZ_REQUIRE(cond, ...)                                                    \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fuzz_say("%s:%d: FUZZ_REQUIRE(%s) failed: ", __FILE__, __LINE__, #cond); \
            fuzz_say(__VA_ARGS__);                                                 \
            fuzz_say("\n");                                                        \
            abort();                                                               \
        }                                                                          \
    } while (0)

/* Every failed call must leave a status and a non-empty, terminated message
 * in err that agree with the returned status. */
static inline void fuzz_require_error(posenc_status st, const posenc_error *err) {
    FUZZ_REQUIRE(st != POSENC_OK, "expected a failure");
    FUZZ_REQUIRE(err->status == st, "err.status %d != returned %d", (int)err->status, (int)st);
    FUZZ_REQUIRE(memchr(err->message, '\0', sizeof err->message) != NULL, "message unterminated");
    FUZZ_REQUIRE(err->message[0] != '\0', "empty message for status %d", (int)st);
}

#endif
