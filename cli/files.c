/* files.c: the tool's file output and positions input. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* CSV on stdout, with the digits of posenc_csv_write: %.17g for f64 and %.9g
 * for the narrower floats (each round-trips exactly), integers as integers.
 * Stops at the first failed write (a full disk, a closed pipe). */
static int write_csv_stdout(const char *command, const posenc_array *array) {
    size_t cols = array->ndim >= 2 ? array->shape[array->ndim - 1] : 1;
    bool integer = array->dtype == POSENC_DTYPE_I32 || array->dtype == POSENC_DTYPE_I64 ||
                   array->dtype == POSENC_DTYPE_U8 || array->dtype == POSENC_DTYPE_U16;
    const char *fmt = array->dtype == POSENC_DTYPE_F64 ? "%.17g%c" : "%.9g%c";
    posenc_array f64 = {0};
    posenc_error err = {0};
    if (array->dtype != POSENC_DTYPE_I64 && posenc_array_to_f64(array, &f64, &err) != POSENC_OK)
        return cli_fail_status(command, &err);
    for (size_t i = 0; i < array->count && !ferror(stdout); i++) {
        char sep = (i + 1) % cols ? ',' : '\n';
        if (array->dtype == POSENC_DTYPE_I64) printf("%lld%c", (long long)((const int64_t *)array->data)[i], sep);
        else if (integer) printf("%.0f%c", ((double *)f64.data)[i], sep);
        else printf(fmt, ((double *)f64.data)[i], sep);
    }
    posenc_array_free(&f64);
    if (fflush(stdout) != 0 || ferror(stdout))
        return cli_fail(command, EXIT_RUNTIME, NULL, "cannot write standard output: %s", strerror(errno));
    return EXIT_OK;
}

int cli_write_array(const char *command, const char *path, const posenc_array *array) {
    posenc_error err = {0};
    posenc_status st;
    if (strcmp(path, "-") == 0) return write_csv_stdout(command, array);
    if (ends_with(path, ".npy")) st = posenc_npy_write(path, array, &err);
    else if (ends_with(path, ".csv")) st = posenc_csv_write(path, array, &err);
    else
        return cli_fail(command, EXIT_USAGE, "name the output OUT.npy or OUT.csv, or - for stdout",
                        "cannot tell the output format of '%s'", path);
    if (st != POSENC_OK) return cli_fail_status(command, &err);
    return EXIT_OK;
}

int cli_read_positions(const char *command, const char *path, int64_t **ids, double **values,
                       size_t *count) {
    posenc_error err = {0};
    posenc_array a;
    *ids = NULL;
    *values = NULL;
    if (posenc_npy_read(path, 0, &a, &err) != POSENC_OK) return cli_fail_status(command, &err);
    int rc = EXIT_OK;
    if (a.ndim != 1 || a.count == 0) {
        rc = cli_fail(command, EXIT_USAGE, "save a 1-D array: np.save(path, np.arange(n))",
                      "positions file %s must be a non-empty 1-D array, got rank %d with %zu "
                      "elements", path, a.ndim, a.count);
    } else if (a.dtype == POSENC_DTYPE_I64 || a.dtype == POSENC_DTYPE_I32) {
        *ids = malloc(sizeof **ids * a.count);
        if (!*ids) rc = cli_fail(command, EXIT_RUNTIME, NULL, "out of memory");
        for (size_t i = 0; *ids && i < a.count; i++)
            (*ids)[i] = a.dtype == POSENC_DTYPE_I64 ? ((int64_t *)a.data)[i] : ((int32_t *)a.data)[i];
    } else if (a.dtype == POSENC_DTYPE_F64 || a.dtype == POSENC_DTYPE_F32) {
        *values = malloc(sizeof **values * a.count);
        if (!*values) rc = cli_fail(command, EXIT_RUNTIME, NULL, "out of memory");
        for (size_t i = 0; *values && i < a.count; i++)
            (*values)[i] = a.dtype == POSENC_DTYPE_F64 ? ((double *)a.data)[i] : ((float *)a.data)[i];
    } else {
        rc = cli_fail(command, EXIT_USAGE, "use int64/int32 for integer or float64/float32 for real positions",
                      "positions file %s has dtype %s", path, posenc_dtype_name(a.dtype));
    }
    *count = a.count;
    posenc_array_free(&a);
    return rc;
}
