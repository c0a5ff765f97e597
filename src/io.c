/* io.c: arrays, .npy parsing/writing, CSV, whole-file reads and atomic writes.
 * Parsers never trust sizes in a file: every length is checked against the
 * bytes actually present and against a caller-given allocation ceiling. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* madvise, MADV_HUGEPAGE */
#include "internal.h"
#include "io_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static size_t effective_limit(size_t max_bytes) {
    return max_bytes ? max_bytes : POSENC_DEFAULT_MAX_BYTES;
}

/* Arrays of 4 MiB or more: 2 MiB-aligned, MADV_HUGEPAGE, zeroed by memset. On
 * this project's VM a 4 KiB first-touch fault costs ~13 us, so a 256 MiB table
 * written into calloc'd memory took 880 ms, and 40-70 ms this way (one fault
 * per 2 MiB; the memset is the single extra pass). The data is also 64-byte
 * aligned, which the streaming-store kernels want. Freed by free() like the rest. */
#define ARRAY_HUGE_MIN ((size_t)4 << 20)
#define ARRAY_HUGE_ALIGN ((size_t)2 << 20)

static void *alloc_zeroed(size_t bytes) {
#if defined(MADV_HUGEPAGE)
    if (bytes >= ARRAY_HUGE_MIN) {
        void *p = NULL;
        if (posix_memalign(&p, ARRAY_HUGE_ALIGN, bytes) != 0) return NULL;
        (void)madvise(p, bytes, MADV_HUGEPAGE); /* advice only: without THP it is ignored */
        memset(p, 0, bytes);
        return p;
    }
#endif
    return calloc(bytes ? bytes : 1, 1);
}

posenc_status posenc_array_create(posenc_array *array, posenc_dtype dtype, int ndim,
                                  const size_t *shape, size_t max_bytes, posenc_error *err) {
    RETURN_IF_NULL(array, err);
    memset(array, 0, sizeof *array);
    RETURN_ERROR_IF(ndim < 0 || ndim > POSENC_MAX_DIMS, err, POSENC_ERR_INVALID_ARGUMENT,
                    "array rank must be in [0, %d], got %d", POSENC_MAX_DIMS, ndim);
    RETURN_ERROR_IF(ndim > 0 && !shape, err, POSENC_ERR_NULL_POINTER, "shape must not be NULL");
    size_t item = posenc_dtype_size(dtype);
    RETURN_ERROR_IF(item == 0, err, POSENC_ERR_INVALID_ARGUMENT, "unknown dtype %d", (int)dtype);
    size_t count = 1, bytes;
    for (int i = 0; i < ndim; i++)
        FORWARD_IF_ERROR(posenc_checked_count_(count, shape[i], "array element count", &count, err));
    FORWARD_IF_ERROR(posenc_checked_count_(count, item, "array bytes", &bytes, err));
    RETURN_ERROR_IF(bytes > effective_limit(max_bytes), err, POSENC_ERR_LIMIT,
                    "array of %zu bytes exceeds the limit of %zu bytes", bytes,
                    effective_limit(max_bytes));
    void *data = alloc_zeroed(bytes);
    RETURN_ERROR_IF(!data, err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes", bytes);
    array->dtype = dtype;
    array->ndim = ndim;
    for (int i = 0; i < ndim; i++) array->shape[i] = shape[i];
    array->count = count;
    array->data = data;
    return posenc_ok_(err);
}

void posenc_array_free(posenc_array *array) {
    if (!array) return;
    free(array->data);
    memset(array, 0, sizeof *array);
}

double posenc_array_get_f64_(const posenc_array *a, size_t i) {
    switch (a->dtype) {
    case POSENC_DTYPE_F32: return ((const float *)a->data)[i];
    case POSENC_DTYPE_F64: return ((const double *)a->data)[i];
    case POSENC_DTYPE_F16: return posenc_f16_to_f32(((const uint16_t *)a->data)[i]);
    case POSENC_DTYPE_BF16: return posenc_bf16_to_f32(((const uint16_t *)a->data)[i]);
    case POSENC_DTYPE_I32: return ((const int32_t *)a->data)[i];
    case POSENC_DTYPE_I64: return (double)((const int64_t *)a->data)[i];
    case POSENC_DTYPE_U8: return ((const uint8_t *)a->data)[i];
    case POSENC_DTYPE_U16: return ((const uint16_t *)a->data)[i];
    }
    return NAN;
}

posenc_status posenc_array_to_f64(const posenc_array *in, posenc_array *out, posenc_error *err) {
    RETURN_IF_NULL(in, err);
    RETURN_IF_NULL(out, err);
    FORWARD_IF_ERROR(posenc_array_create(out, POSENC_DTYPE_F64, in->ndim, in->shape,
                                         (size_t)-1, err));
    double *dst = out->data;
    for (size_t i = 0; i < in->count; i++) dst[i] = posenc_array_get_f64_(in, i);
    return posenc_ok_(err);
}

/* ---------------------------------------------------------------- .npy --- */

typedef struct {
    const char *p, *end;
} cursor;

static void skip_spaces(cursor *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static bool take_char(cursor *c, char ch) {
    skip_spaces(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return true;
    }
    return false;
}

/* A quoted Python string into buf (truncation is an error). */
static bool take_string(cursor *c, char *buf, size_t cap) {
    skip_spaces(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return false;
    char quote = *c->p++;
    size_t n = 0;
    while (c->p < c->end && *c->p != quote) {
        if (n + 1 >= cap) return false;
        buf[n++] = *c->p++;
    }
    if (c->p >= c->end) return false;
    c->p++;
    buf[n] = '\0';
    return true;
}

static bool take_word(cursor *c, const char *word) {
    skip_spaces(c);
    size_t n = strlen(word);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n) != 0) return false;
    c->p += n;
    return true;
}

static posenc_status parse_shape(cursor *c, posenc_array *out, posenc_error *err) {
    RETURN_ERROR_IF(!take_char(c, '('), err, POSENC_ERR_FORMAT, ".npy header: shape must be a tuple");
    int ndim = 0;
    skip_spaces(c);
    while (!take_char(c, ')')) {
        RETURN_ERROR_IF(ndim >= POSENC_MAX_DIMS, err, POSENC_ERR_UNSUPPORTED,
                        ".npy header: more than %d dimensions", POSENC_MAX_DIMS);
        skip_spaces(c);
        RETURN_ERROR_IF(c->p >= c->end || *c->p < '0' || *c->p > '9', err, POSENC_ERR_FORMAT,
                        ".npy header: shape entries must be non-negative integers");
        size_t v = 0;
        while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
            size_t digit = (size_t)(*c->p - '0');
            RETURN_ERROR_IF(v > (SIZE_MAX - digit) / 10, err, POSENC_ERR_SIZE_OVERFLOW,
                            ".npy header: a shape entry overflows size_t");
            v = v * 10 + digit;
            c->p++;
        }
        if (take_char(c, 'L')) { /* Python 2 long suffix */
        }
        out->shape[ndim++] = v;
        if (!take_char(c, ',')) {
            RETURN_ERROR_IF(!take_char(c, ')'), err, POSENC_ERR_FORMAT,
                            ".npy header: malformed shape tuple");
            break;
        }
    }
    out->ndim = ndim;
    return POSENC_OK;
}

static posenc_status parse_descr(const char *descr, posenc_dtype *dtype, posenc_error *err) {
    static const struct {
        const char *code;
        posenc_dtype dtype;
    } known[] = {{"f4", POSENC_DTYPE_F32}, {"f8", POSENC_DTYPE_F64}, {"f2", POSENC_DTYPE_F16},
                 {"i4", POSENC_DTYPE_I32}, {"i8", POSENC_DTYPE_I64}, {"u1", POSENC_DTYPE_U8},
                 {"u2", POSENC_DTYPE_U16}};
    char order = descr[0];
    RETURN_ERROR_IF(order == '>', err, POSENC_ERR_UNSUPPORTED,
                    ".npy dtype '%s' is big-endian; convert with arr.astype('<%s')", descr,
                    descr + 1);
    if (order == '<' || order == '|' || order == '=') {
        for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
            if (strcmp(descr + 1, known[i].code) == 0) {
                *dtype = known[i].dtype;
                return POSENC_OK;
            }
    }
    return posenc_fail_(err, POSENC_ERR_UNSUPPORTED,
                        ".npy dtype '%s' is not supported (use <f4 <f8 <f2 <i4 <i8 |u1 <u2)",
                        descr);
}

posenc_status posenc_npy_parse(const void *bytes, size_t size, size_t max_bytes,
                               posenc_array *out, posenc_error *err) {
    RETURN_IF_NULL(out, err);
    memset(out, 0, sizeof *out);
    RETURN_IF_NULL(bytes, err);
    const unsigned char *b = bytes;
    RETURN_ERROR_IF(size < 10 || memcmp(b, "\x93NUMPY", 6) != 0, err, POSENC_ERR_FORMAT,
                    "not a .npy file (missing \\x93NUMPY magic)");
    unsigned major = b[6];
    size_t header_len, header_start;
    if (major == 1) {
        header_len = (size_t)b[8] | ((size_t)b[9] << 8);
        header_start = 10;
    } else if (major == 2 || major == 3) {
        RETURN_ERROR_IF(size < 12, err, POSENC_ERR_FORMAT, ".npy file truncated in its preamble");
        header_len = (size_t)b[8] | ((size_t)b[9] << 8) | ((size_t)b[10] << 16) |
                     ((size_t)b[11] << 24);
        header_start = 12;
    } else {
        return posenc_fail_(err, POSENC_ERR_UNSUPPORTED, ".npy format version %u.%u not supported",
                            major, (unsigned)b[7]);
    }
    RETURN_ERROR_IF(header_len > size - header_start, err, POSENC_ERR_FORMAT,
                    ".npy header length %zu runs past the end of the %zu-byte file", header_len,
                    size);
    cursor c = {(const char *)b + header_start, (const char *)b + header_start + header_len};
    char key[32], descr[32] = "";
    bool have_descr = false, have_order = false, have_shape = false, fortran = false;
    RETURN_ERROR_IF(!take_char(&c, '{'), err, POSENC_ERR_FORMAT, ".npy header is not a dict");
    while (!take_char(&c, '}')) {
        RETURN_ERROR_IF(!take_string(&c, key, sizeof key) || !take_char(&c, ':'), err,
                        POSENC_ERR_FORMAT, ".npy header: malformed key");
        if (strcmp(key, "descr") == 0) {
            RETURN_ERROR_IF(!take_string(&c, descr, sizeof descr), err, POSENC_ERR_UNSUPPORTED,
                            ".npy header: descr must be a simple type string (no structured dtypes)");
            have_descr = true;
        } else if (strcmp(key, "fortran_order") == 0) {
            if (take_word(&c, "True")) fortran = true;
            else RETURN_ERROR_IF(!take_word(&c, "False"), err, POSENC_ERR_FORMAT,
                                 ".npy header: fortran_order must be True or False");
            have_order = true;
        } else if (strcmp(key, "shape") == 0) {
            FORWARD_IF_ERROR(parse_shape(&c, out, err));
            have_shape = true;
        } else {
            return posenc_fail_(err, POSENC_ERR_FORMAT, ".npy header: unexpected key '%s'", key);
        }
        if (!take_char(&c, ',')) {
            RETURN_ERROR_IF(!take_char(&c, '}'), err, POSENC_ERR_FORMAT,
                            ".npy header: expected ',' or '}'");
            break;
        }
    }
    RETURN_ERROR_IF(!have_descr || !have_order || !have_shape, err, POSENC_ERR_FORMAT,
                    ".npy header lacks %s", !have_descr ? "descr" : !have_order ? "fortran_order"
                                                                                 : "shape");
    FORWARD_IF_ERROR(parse_descr(descr, &out->dtype, err));
    RETURN_ERROR_IF(fortran && out->ndim > 1, err, POSENC_ERR_UNSUPPORTED,
                    ".npy array is in Fortran order; save it with np.ascontiguousarray");
    size_t count = 1, data_bytes;
    for (int i = 0; i < out->ndim; i++)
        FORWARD_IF_ERROR(posenc_checked_count_(count, out->shape[i], ".npy element count", &count, err));
    FORWARD_IF_ERROR(posenc_checked_count_(count, posenc_dtype_size(out->dtype), ".npy data bytes",
                                           &data_bytes, err));
    RETURN_ERROR_IF(data_bytes > effective_limit(max_bytes), err, POSENC_ERR_LIMIT,
                    ".npy data of %zu bytes exceeds the limit of %zu bytes", data_bytes,
                    effective_limit(max_bytes));
    size_t available = size - header_start - header_len;
    RETURN_ERROR_IF(available != data_bytes, err, POSENC_ERR_FORMAT,
                    ".npy shape needs %zu data bytes but the file has %zu (%s)", data_bytes,
                    available, available < data_bytes ? "truncated" : "trailing bytes");
    void *data = malloc(data_bytes ? data_bytes : 1);
    RETURN_ERROR_IF(!data, err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes", data_bytes);
    memcpy(data, b + header_start + header_len, data_bytes);
    out->count = count;
    out->data = data;
    return posenc_ok_(err);
}

posenc_status posenc_npy_read(const char *path, size_t max_bytes, posenc_array *out,
                              posenc_error *err) {
    RETURN_IF_NULL(out, err);
    memset(out, 0, sizeof *out);
    void *bytes = NULL;
    size_t size = 0;
    /* the header may add up to 4 GiB, but a file larger than data limit + 1 MiB is refused */
    size_t limit = effective_limit(max_bytes);
    FORWARD_IF_ERROR(posenc_file_read_all(path, limit > SIZE_MAX - (1u << 20) ? SIZE_MAX
                                                                              : limit + (1u << 20),
                                          &bytes, &size, err));
    posenc_status st = posenc_npy_parse(bytes, size, max_bytes, out, err);
    free(bytes);
    if (st != POSENC_OK && err) {
        char detail[POSENC_ERROR_MESSAGE_SIZE];
        memcpy(detail, err->message, sizeof detail);
        posenc_fail_(err, st, "%s: %s", path, detail);
    }
    return st;
}

static const char *npy_descr(posenc_dtype dtype) {
    switch (dtype) {
    case POSENC_DTYPE_F32: return "<f4";
    case POSENC_DTYPE_F64: return "<f8";
    case POSENC_DTYPE_F16: return "<f2";
    case POSENC_DTYPE_BF16: return "<u2";
    case POSENC_DTYPE_I32: return "<i4";
    case POSENC_DTYPE_I64: return "<i8";
    case POSENC_DTYPE_U8: return "|u1";
    case POSENC_DTYPE_U16: return "<u2";
    }
    return NULL;
}

posenc_status posenc_npy_write(const char *path, const posenc_array *array, posenc_error *err) {
    RETURN_IF_NULL(array, err);
    const char *descr = npy_descr(array->dtype);
    RETURN_ERROR_IF(!descr, err, POSENC_ERR_INVALID_ARGUMENT, "unknown dtype %d", (int)array->dtype);
    RETURN_ERROR_IF(array->ndim < 0 || array->ndim > POSENC_MAX_DIMS, err,
                    POSENC_ERR_INVALID_ARGUMENT, "array rank %d out of range", array->ndim);
    char dict[512];
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (int i = 0; i < array->ndim; i++)
        n += snprintf(dict + n, sizeof dict - (size_t)n, "%zu,%s", array->shape[i],
                      i + 1 < array->ndim ? " " : "");
    if (array->ndim > 1) n--; /* numpy writes (3, 4) but (5,) */
    n += snprintf(dict + n, sizeof dict - (size_t)n, "), }");
    /* preamble + header padded with spaces and a final newline to a multiple of 64 */
    unsigned char header[600];
    size_t total = 10 + (size_t)n + 1;
    total = (total + 63) / 64 * 64;
    memcpy(header, "\x93NUMPY\x01\x00", 8);
    size_t hlen = total - 10;
    header[8] = (unsigned char)(hlen & 0xff);
    header[9] = (unsigned char)(hlen >> 8);
    memset(header + 10, ' ', hlen);
    memcpy(header + 10, dict, (size_t)n);
    header[total - 1] = '\n';
    size_t data_bytes = array->count * posenc_dtype_size(array->dtype);
    const void *parts[2] = {header, array->data};
    size_t sizes[2] = {total, data_bytes};
    return posenc_file_write_atomic(path, parts, sizes, 2, err);
}

/* ------------------------------------------------------------ atomic I/O --- */

posenc_status posenc_atomic_open_(const char *path, posenc_atomic_file *f, posenc_error *err) {
    RETURN_IF_NULL(path, err);
    memset(f, 0, sizeof *f);
    size_t len = strlen(path);
    RETURN_ERROR_IF(len == 0 || len + 16 > sizeof f->temp_path, err, POSENC_ERR_INVALID_ARGUMENT,
                    "output path is empty or too long");
    snprintf(f->temp_path, sizeof f->temp_path, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(f->temp_path);
    RETURN_ERROR_IF(fd < 0, err, POSENC_ERR_IO, "cannot create %s: %s", path, strerror(errno));
    (void)fchmod(fd, 0644);
    f->stream = fdopen(fd, "wb");
    if (!f->stream) {
        int e = errno;
        close(fd);
        unlink(f->temp_path);
        return posenc_fail_(err, POSENC_ERR_IO, "cannot open %s: %s", path, strerror(e));
    }
    snprintf(f->final_path, sizeof f->final_path, "%s", path);
    return POSENC_OK;
}

void posenc_atomic_abort_(posenc_atomic_file *f) {
    if (f->stream) fclose(f->stream);
    f->stream = NULL;
    if (f->temp_path[0]) unlink(f->temp_path);
    f->temp_path[0] = '\0';
}

posenc_status posenc_atomic_commit_(posenc_atomic_file *f, posenc_error *err) {
    int failed = ferror(f->stream) || fflush(f->stream) != 0 || fsync(fileno(f->stream)) != 0;
    int e = errno;
    if (fclose(f->stream) != 0 && !failed) {
        failed = 1;
        e = errno;
    }
    f->stream = NULL;
    if (!failed && rename(f->temp_path, f->final_path) != 0) {
        failed = 1;
        e = errno;
    }
    if (failed) {
        unlink(f->temp_path);
        return posenc_fail_(err, POSENC_ERR_IO, "cannot write %s: %s", f->final_path,
                            e ? strerror(e) : "write error");
    }
    return POSENC_OK;
}

posenc_status posenc_file_write_atomic(const char *path, const void *const *parts,
                                       const size_t *part_sizes, size_t count, posenc_error *err) {
    RETURN_ERROR_IF(count > 0 && (!parts || !part_sizes), err, POSENC_ERR_NULL_POINTER,
                    "parts must not be NULL");
    posenc_atomic_file f;
    FORWARD_IF_ERROR(posenc_atomic_open_(path, &f, err));
    for (size_t i = 0; i < count; i++) {
        if (part_sizes[i] && fwrite(parts[i], 1, part_sizes[i], f.stream) != part_sizes[i]) {
            int e = errno;
            posenc_atomic_abort_(&f);
            return posenc_fail_(err, POSENC_ERR_IO, "cannot write %s: %s", path, strerror(e));
        }
    }
    FORWARD_IF_ERROR(posenc_atomic_commit_(&f, err));
    return posenc_ok_(err);
}

posenc_status posenc_file_read_all(const char *path, size_t max_bytes, void **out_bytes,
                                   size_t *out_size, posenc_error *err) {
    RETURN_IF_NULL(path, err);
    RETURN_IF_NULL(out_bytes, err);
    RETURN_IF_NULL(out_size, err);
    *out_bytes = NULL;
    *out_size = 0;
    FILE *fp = fopen(path, "rb");
    RETURN_ERROR_IF(!fp, err, POSENC_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(fp), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(fp);
        return posenc_fail_(err, POSENC_ERR_IO, "%s is not a regular file", path);
    }
    size_t size = (size_t)st.st_size;
    if (size > effective_limit(max_bytes)) {
        fclose(fp);
        return posenc_fail_(err, POSENC_ERR_LIMIT, "%s is %zu bytes, over the limit of %zu", path,
                            size, effective_limit(max_bytes));
    }
    unsigned char *buf = malloc(size ? size : 1);
    if (!buf) {
        fclose(fp);
        return posenc_fail_(err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes", size);
    }
    size_t got = fread(buf, 1, size, fp);
    int bad = ferror(fp);
    fclose(fp);
    if (bad || got != size) {
        free(buf);
        return posenc_fail_(err, POSENC_ERR_IO, "cannot read %s (got %zu of %zu bytes)", path, got,
                            size);
    }
    *out_bytes = buf;
    *out_size = size;
    return posenc_ok_(err);
}

/* ------------------------------------------------------------------- CSV --- */

posenc_status posenc_csv_write(const char *path, const posenc_array *array, posenc_error *err) {
    RETURN_IF_NULL(array, err);
    RETURN_ERROR_IF(array->ndim < 1 || array->ndim > 2, err, POSENC_ERR_INVALID_ARGUMENT,
                    "CSV output needs a 1-D or 2-D array, got rank %d", array->ndim);
    size_t rows = array->ndim == 2 ? array->shape[0] : array->shape[0];
    size_t cols = array->ndim == 2 ? array->shape[1] : 1;
    posenc_atomic_file f;
    FORWARD_IF_ERROR(posenc_atomic_open_(path, &f, err));
    bool integer = array->dtype == POSENC_DTYPE_I32 || array->dtype == POSENC_DTYPE_I64 ||
                   array->dtype == POSENC_DTYPE_U8 || array->dtype == POSENC_DTYPE_U16;
    const char *fmt = array->dtype == POSENC_DTYPE_F64 ? "%.17g" : "%.9g";
    for (size_t r = 0; r < rows; r++) {
        for (size_t c = 0; c < cols; c++) {
            size_t i = r * cols + c;
            if (c) fputc(',', f.stream);
            if (array->dtype == POSENC_DTYPE_I64)
                fprintf(f.stream, "%lld", (long long)((const int64_t *)array->data)[i]);
            else if (integer)
                fprintf(f.stream, "%.0f", posenc_array_get_f64_(array, i));
            else
                fprintf(f.stream, fmt, posenc_array_get_f64_(array, i));
        }
        fputc('\n', f.stream);
    }
    FORWARD_IF_ERROR(posenc_atomic_commit_(&f, err));
    return posenc_ok_(err);
}
