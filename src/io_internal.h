/* io_internal.h: atomic file writing shared by the library's writers. */
#ifndef POSENC_IO_INTERNAL_H
#define POSENC_IO_INTERNAL_H

#include "posenc.h"

#include <stdio.h>

/* A file being written under a temporary name beside its final path. */
typedef struct {
    FILE *stream;
    char temp_path[4096 + 16];
    char final_path[4096];
} posenc_atomic_file;

posenc_status posenc_atomic_open_(const char *path, posenc_atomic_file *f, posenc_error *err);
/* flush, fsync, close, rename; on any failure the temporary file is removed. */
posenc_status posenc_atomic_commit_(posenc_atomic_file *f, posenc_error *err);
void posenc_atomic_abort_(posenc_atomic_file *f);
/* element i of any numeric array as a double */
double posenc_array_get_f64_(const posenc_array *a, size_t i);

#endif
