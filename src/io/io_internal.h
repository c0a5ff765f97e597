/* io_internal.h: atomic file writing and bounded file reading shared by the
 * library's writers and parsers. */
#ifndef POSENC_IO_INTERNAL_H
#define POSENC_IO_INTERNAL_H

#include "posenc.h"

#include <stdbool.h>
#include <stdio.h>

/* A file being written. Where the file system supports it (Linux O_TMPFILE)
 * it has no name until commit links it into place, so no signal, SIGKILL
 * included, can leave it behind; elsewhere it lives under a short hidden name
 * in the output's folder, recorded for posenc_temp_files_remove. */
typedef struct {
    FILE *stream;
    bool unnamed;             /* O_TMPFILE: temp_path is empty until commit */
    bool keep_mode;           /* replacing a file: give the new one its mode */
    unsigned mode;            /* the replaced file's permission bits */
    int slot;                 /* posenc_temp_files slot holding temp_path, or -1 */
    char temp_path[4096 + 64];
    char final_path[4096];    /* the output after following symbolic links */
} posenc_atomic_file;

posenc_status posenc_atomic_open_(const char *path, posenc_atomic_file *f, posenc_error *err);
/* flush, fsync, link or rename into place; on any failure nothing is left. */
posenc_status posenc_atomic_commit_(posenc_atomic_file *f, posenc_error *err);
void posenc_atomic_abort_(posenc_atomic_file *f);

/* A whole input file mapped read-only (or empty). Opened with O_NONBLOCK and
 * checked with fstat first, so a FIFO or device is refused instead of blocking. */
typedef struct {
    const unsigned char *bytes;
    size_t size;
    void *mapping; /* NULL for an empty file */
} posenc_mapped_file;
/* Map path; files larger than max_bytes give POSENC_ERR_LIMIT. */
posenc_status posenc_map_file_(const char *path, size_t max_bytes, posenc_mapped_file *m,
                               posenc_error *err);
void posenc_unmap_file_(posenc_mapped_file *m);
/* Open path for reading as a FILE*, refusing anything but a regular file
 * without blocking on it; *size is its length in bytes. */
posenc_status posenc_open_regular_(const char *path, FILE **out, unsigned long long *size,
                                   posenc_error *err);
/* path shortened to at most ~120 characters ("...tail") so that messages keep
 * their reason inside POSENC_ERROR_MESSAGE_SIZE. */
const char *posenc_short_path_(const char *path, char *buf, size_t cap);

/* element i of any numeric array as a double */
double posenc_array_get_f64_(const posenc_array *a, size_t i);

#endif
