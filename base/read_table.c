/* read_table.c: a table from a .npy file or one tensor of a .safetensors file, for
 * the analysis commands, `rope identify` and anything that draws a cache. */
#include "base.h"

#include <stdbool.h>
#include <string.h>

static bool has_suffix(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

int cli_read_table(const char *command, const char *path, const char *tensor, size_t max_bytes,
                   posenc_array *out) {
    posenc_error err = {0};
    posenc_status st;
    if (has_suffix(path, ".safetensors")) {
        if (!tensor)
            return cli_fail(command, EXIT_USAGE, "e.g. --tensor wpe.weight (GPT-2's position table)",
                            "%s is a safetensors file: name the tensor with --tensor NAME", path);
        st = posenc_safetensors_read(path, tensor, max_bytes, out, &err);
    } else {
        if (tensor)
            return cli_fail(command, EXIT_USAGE, NULL, "--tensor applies to .safetensors files, not %s", path);
        st = posenc_npy_read(path, max_bytes, out, &err);
    }
    if (st != POSENC_OK) {
        /* a malformed file is a runtime error (exit 1), even where the library says "invalid" */
        if (strstr(err.message, path)) return cli_fail(command, EXIT_RUNTIME, NULL, "%s", err.message);
        return cli_fail(command, EXIT_RUNTIME, NULL, "%s: %s", path, err.message);
    }
    if (out->count == 0 || out->ndim == 0) {
        int nd = out->ndim;
        posenc_array_free(out);
        return cli_fail(command, EXIT_RUNTIME, "a table needs at least one position and one channel",
                        "%s is empty (rank %d, 0 elements or a scalar)", path, nd);
    }
    return EXIT_OK;
}
