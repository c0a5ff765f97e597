/* progress.c: one self-updating progress line on stderr for long commands
 * ("posenc bench: 5/14 RoPE ... 36%  elapsed 0:41  left ~1:13"), drawn only when
 * stderr is a terminal, so logs, pipes and tests see nothing. The line is redrawn
 * in place (carriage return + erase to end of line) and erased at the end; callers
 * step it where their stdout is at the start of a line, so the two never mix. */
#define _POSIX_C_SOURCE 200809L /* isatty, fileno, clock_gettime under -std=c11 */
#include "base.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double seconds_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void format_duration(char *out, size_t n, double seconds) {
    long s = seconds < 0 ? 0 : (long)(seconds + 0.5);
    if (s >= 3600) snprintf(out, n, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
    else snprintf(out, n, "%ld:%02ld", s / 60, s % 60);
}

void cli_progress_begin(cli_progress *p, const char *command, double total_units) {
    memset(p, 0, sizeof *p);
    p->command = command;
    p->total = total_units > 0 ? total_units : 1;
    p->enabled = isatty(fileno(stderr)) == 1;
    p->start = seconds_now();
}

void cli_progress_step(cli_progress *p, double done_units, const char *label) {
    if (!p->enabled) return;
    double elapsed = seconds_now() - p->start, fraction = done_units / p->total;
    if (fraction < 0) fraction = 0;
    if (fraction > 1) fraction = 1;
    char spent[24], left[32] = "left: estimating";
    format_duration(spent, sizeof spent, elapsed);
    if (fraction > 0 && elapsed > 0.5) { /* the rate so far, assumed for the rest */
        char eta[24];
        format_duration(eta, sizeof eta, elapsed / fraction * (1 - fraction));
        snprintf(left, sizeof left, "ETA %s", eta);
    }
    /* keep the line inside 100 columns: the label is cut, never the numbers */
    fprintf(stderr, "\r\033[Kposenc %s: %3.0f%%  %s  elapsed %s  %.50s\r", p->command, fraction * 100, left, spent,
            label ? label : "");
    fflush(stderr);
    p->drawn = true;
}

void cli_progress_end(cli_progress *p) {
    if (p->enabled && p->drawn) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    p->drawn = false;
}
