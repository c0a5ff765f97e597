/* lab_check.h: the pass/fail counter of the lab's small C tests (test_lab_tasks,
 * test_lab_protocol): CHECK(cond, fmt, ...) prints the failures with their line;
 * main ends with LAB_CHECK_FINISH(). One copy per test program (static). */
#ifndef LAB_CHECK_H
#define LAB_CHECK_H

#include <stdio.h>

static int passed, failed;
#define CHECK(cond, ...)                                \
    do {                                                \
        if (cond) passed++;                             \
        else {                                          \
            failed++;                                   \
            printf("FAIL %s:%d: ", __FILE__, __LINE__); \
            printf(__VA_ARGS__);                        \
            printf("\n");                               \
        }                                               \
    } while (0)
#define LAB_CHECK_FINISH()                               \
    do {                                                 \
        printf("%d passed, %d failed\n", passed, failed); \
        return failed ? 1 : 0;                           \
    } while (0)

#endif
