/* status.c: status strings, per-call error messages, version. */
#include "internal.h"

#include <stdio.h>
#include <string.h>

const char *posenc_version(void) { return POSENC_VERSION_STRING; }

const char *posenc_strerror(posenc_status status) {
    switch (status) {
    case POSENC_OK: return "success";
    case POSENC_ERR_INVALID_ARGUMENT: return "invalid argument";
    case POSENC_ERR_OUT_OF_MEMORY: return "out of memory";
    case POSENC_ERR_BUFFER_TOO_SMALL: return "output buffer too small";
    case POSENC_ERR_SIZE_OVERFLOW: return "size overflow";
    case POSENC_ERR_LIMIT: return "size limit exceeded";
    case POSENC_ERR_IO: return "input/output error";
    case POSENC_ERR_FORMAT: return "malformed input";
    case POSENC_ERR_UNSUPPORTED: return "unsupported input";
    case POSENC_ERR_OUT_OF_RANGE: return "index out of range";
    case POSENC_ERR_NULL_POINTER: return "null pointer argument";
    case POSENC_ERR_NONFINITE: return "result not finite";
    }
    return "unknown status";
}

posenc_status posenc_fail_(posenc_error *err, posenc_status status, const char *fmt, ...) {
    if (err) {
        err->status = status;
        va_list args;
        va_start(args, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, args);
        va_end(args);
    }
    return status;
}

posenc_status posenc_ok_(posenc_error *err) {
    if (err) {
        err->status = POSENC_OK;
        err->message[0] = '\0';
    }
    return POSENC_OK;
}

posenc_status posenc_checked_count_(size_t a, size_t b, const char *what, size_t *out,
                                    posenc_error *err) {
    RETURN_ERROR_IF(!posenc_mul_size_(a, b, out), err, POSENC_ERR_SIZE_OVERFLOW,
                    "%s = %zu x %zu overflows size_t", what, a, b);
    return POSENC_OK;
}

posenc_status posenc_check_positions_(const posenc_positions *positions, posenc_error *err) {
    RETURN_IF_NULL(positions, err);
    RETURN_ERROR_IF(positions->count == 0, err, POSENC_ERR_INVALID_ARGUMENT,
                    "number of positions must be > 0, got 0");
    RETURN_ERROR_IF(positions->ids && positions->values, err, POSENC_ERR_INVALID_ARGUMENT,
                    "give integer ids or real values for positions, not both");
    if (positions->ids) {
        for (size_t i = 0; i < positions->count; i++) {
            int64_t p = positions->ids[i];
            RETURN_ERROR_IF(p < 0 || p >= ((int64_t)1 << 53), err, POSENC_ERR_INVALID_ARGUMENT,
                            "position %zu must be in [0, 2^53), got %lld", i, (long long)p);
        }
    } else if (positions->values) {
        for (size_t i = 0; i < positions->count; i++) {
            double p = positions->values[i];
            RETURN_ERROR_IF(!isfinite(p) || p < 0.0 || p >= 9007199254740992.0, err,
                            POSENC_ERR_INVALID_ARGUMENT,
                            "position %zu must be finite and in [0, 2^53), got %g", i, p);
        }
    } else {
        RETURN_ERROR_IF(positions->start < 0, err, POSENC_ERR_INVALID_ARGUMENT,
                        "start position must be >= 0, got %lld", (long long)positions->start);
        RETURN_ERROR_IF((uint64_t)positions->start + positions->count > ((uint64_t)1 << 53), err,
                        POSENC_ERR_INVALID_ARGUMENT,
                        "positions start=%lld count=%zu run past 2^53",
                        (long long)positions->start, positions->count);
    }
    return POSENC_OK;
}

posenc_status posenc_check_signed_positions_(const int64_t *positions, size_t count, posenc_error *err) {
    for (size_t i = 0; positions && i < count; i++) {
        int64_t p = positions[i];
        RETURN_ERROR_IF(p <= -((int64_t)1 << 53) || p >= ((int64_t)1 << 53), err, POSENC_ERR_INVALID_ARGUMENT,
                        "position %zu must be in (-2^53, 2^53), got %lld", i, (long long)p);
    }
    return POSENC_OK;
}

posenc_positions posenc_positions_range(int64_t start, size_t count) {
    posenc_positions p = {count, start, NULL, NULL};
    return p;
}
posenc_positions posenc_positions_ids(const int64_t *ids, size_t count) {
    posenc_positions p = {count, 0, ids, NULL};
    return p;
}
posenc_positions posenc_positions_values(const double *values, size_t count) {
    posenc_positions p = {count, 0, NULL, values};
    return p;
}

posenc_status posenc_table_count(size_t positions, int32_t dim, size_t *out_count,
                                 posenc_error *err) {
    RETURN_IF_NULL(out_count, err);
    RETURN_ERROR_IF(dim <= 0, err, POSENC_ERR_INVALID_ARGUMENT, "dim must be > 0, got %d", dim);
    RETURN_ERROR_IF(positions == 0, err, POSENC_ERR_INVALID_ARGUMENT,
                    "number of positions must be > 0, got 0");
    FORWARD_IF_ERROR(posenc_checked_count_(positions, (size_t)dim, "len x dim", out_count, err));
    return posenc_ok_(err);
}
