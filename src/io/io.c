/* io.c: arrays, .npy parsing/writing, CSV, whole-file reads and atomic writes.
 * Parsers never trust sizes in a file: every length is checked against the
 * bytes actually present and against a caller-given allocation ceiling. */
#define _GNU_SOURCE /* O_TMPFILE, madvise, MADV_HUGEPAGE */
#include "../common/internal.h"
#include "../common/kernels.h" /* posenc_parallel_for_: zeroing big arrays on every core */
#include "io_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
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

/* The first touch of each page is the expensive part (the kernel clears it),
 * so big arrays are zeroed by as many threads as posenc_parallel_for_ gives
 * (2 MiB pieces): the faults are taken on every core at once. Measured on the
 * 2-vCPU VM, 64 MiB: see docs/kernels.md, "Two threads". */
#define ARRAY_PARALLEL_MIN ((size_t)16 << 20)

static void zero_range(void *base, size_t worker, size_t begin, size_t end) {
    (void)worker;
    memset((char *)base + begin, 0, end - begin);
}

static void zero_pages(void *p, size_t bytes) {
    posenc_exec_run_ run;
    if (bytes < ARRAY_PARALLEL_MIN || posenc_exec_run_resolve_(NULL, &run, NULL) != POSENC_OK) {
        memset(p, 0, bytes);
        return;
    }
    posenc_parallel_for_(&run, posenc_threads_for_bytes_(&run, bytes), bytes, ARRAY_HUGE_ALIGN, zero_range, p);
}

static void *alloc_zeroed(size_t bytes) {
#if defined(MADV_HUGEPAGE)
    if (bytes >= ARRAY_HUGE_MIN) {
        void *p = NULL;
        if (posix_memalign(&p, ARRAY_HUGE_ALIGN, bytes) != 0) return NULL;
        (void)madvise(p, bytes, MADV_HUGEPAGE); /* advice only: without THP it is ignored */
        zero_pages(p, bytes);
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

posenc_status posenc_array_check_finite(const posenc_array *array, const char *what, posenc_error *err) {
    RETURN_IF_NULL(array, err);
    if (array->dtype != POSENC_DTYPE_F32 && array->dtype != POSENC_DTYPE_F64 && array->dtype != POSENC_DTYPE_F16 &&
        array->dtype != POSENC_DTYPE_BF16)
        return posenc_ok_(err);
    RETURN_ERROR_IF(array->count && !array->data, err, POSENC_ERR_NULL_POINTER, "array data must not be NULL");
    for (size_t i = 0; i < array->count; i++) {
        double v = posenc_array_get_f64_(array, i);
        if (isfinite(v)) continue;
        char cell[POSENC_MAX_DIMS * 22 + 4] = "";
        size_t used = 0, rest = i;
        size_t index[POSENC_MAX_DIMS] = {0};
        for (int k = array->ndim - 1; k >= 0; k--) {
            index[k] = array->shape[k] ? rest % array->shape[k] : 0;
            rest = array->shape[k] ? rest / array->shape[k] : 0;
        }
        for (int k = 0; k < array->ndim; k++)
            used += (size_t)snprintf(cell + used, sizeof cell - used, "%s%zu", k ? ", " : "", index[k]);
        return posenc_fail_(err, POSENC_ERR_NONFINITE, "%s: cell [%s] is %s (overflows %s)", what ? what : "array",
                            array->ndim ? cell : "0", isnan(v) ? "nan" : v > 0 ? "inf" : "-inf",
                            posenc_dtype_name(array->dtype));
    }
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
    /* mapped, not read: the data is copied once, from the page cache into the array
     * (the header may add up to 4 GiB, but a file larger than data limit + 1 MiB is refused) */
    posenc_mapped_file m;
    size_t limit = effective_limit(max_bytes);
    FORWARD_IF_ERROR(posenc_map_file_(path, limit > SIZE_MAX - (1u << 20) ? SIZE_MAX : limit + (1u << 20), &m, err));
    posenc_status st = posenc_npy_parse(m.bytes, m.size, max_bytes, out, err);
    posenc_unmap_file_(&m);
    if (st != POSENC_OK && err) {
        char detail[POSENC_ERROR_MESSAGE_SIZE], sp[128];
        memcpy(detail, err->message, sizeof detail);
        posenc_fail_(err, st, "%s: %s", posenc_short_path_(path, sp, sizeof sp), detail);
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

/* The one piece of process-wide mutable state in the library: where a program
 * that handles signals keeps the names of temporary files (see
 * posenc_temp_files_register in posenc.h). A signal handler cannot be handed
 * an argument, so the storage it reads must be reachable without one; it is
 * registered once at start-up and only its slots change afterwards. */
static posenc_temp_files *volatile registered_temp_files;

enum { SLOT_FREE = 0, SLOT_CLAIMED = 1, SLOT_ARMED = 2 };

void posenc_temp_files_register(posenc_temp_files *files) {
    if (files) memset((void *)files, 0, sizeof *files);
    registered_temp_files = files;
}

void posenc_temp_files_remove(posenc_temp_files *files) {
    if (!files) return;
    /* async-signal-safe: reads flags and calls unlink(2) only */
    for (int i = 0; i < POSENC_TEMP_SLOTS; i++)
        if (files->state[i] == SLOT_ARMED) unlink(files->path[i]);
}

/* Claim a slot (lock-free, so any thread may write at once) and record name;
 * -1 when nothing is registered or every slot is busy. */
static int temp_slot_arm(const char *name) {
    posenc_temp_files *files = registered_temp_files;
    if (!files || strlen(name) >= POSENC_TEMP_PATH_SIZE) return -1;
    for (int i = 0; i < POSENC_TEMP_SLOTS; i++) {
        sig_atomic_t expected = SLOT_FREE;
        if (__atomic_compare_exchange_n(&files->state[i], &expected, SLOT_CLAIMED, false,
                                        __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
            memcpy(files->path[i], name, strlen(name) + 1);
            __atomic_store_n(&files->state[i], SLOT_ARMED, __ATOMIC_SEQ_CST);
            return i;
        }
    }
    return -1;
}

static void temp_slot_release(int slot) {
    posenc_temp_files *files = registered_temp_files;
    if (files && slot >= 0) __atomic_store_n(&files->state[slot], SLOT_FREE, __ATOMIC_SEQ_CST);
}

const char *posenc_short_path_(const char *path, char *buf, size_t cap) {
    size_t n = strlen(path), keep = cap > 124 ? 120 : cap - 4;
    if (n <= keep) return path;
    snprintf(buf, cap, "...%s", path + n - (keep - 3));
    return buf;
}

/* Follow symbolic links from path to the file they name (which may not exist
 * yet), so that writing "through" a link replaces its target, not the link. */
static posenc_status resolve_links(const char *path, char *out, size_t cap, posenc_error *err) {
    char sp[128];
    RETURN_ERROR_IF(strlen(path) >= cap, err, POSENC_ERR_INVALID_ARGUMENT,
                    "output path is empty or too long (%zu characters)", strlen(path));
    memcpy(out, path, strlen(path) + 1);
    for (int hops = 0;; hops++) {
        struct stat st;
        if (lstat(out, &st) != 0 || !S_ISLNK(st.st_mode)) return POSENC_OK;
        RETURN_ERROR_IF(hops >= 40, err, POSENC_ERR_IO, "cannot create %s: too many levels of symbolic links",
                        posenc_short_path_(path, sp, sizeof sp));
        char target[4096];
        ssize_t n = readlink(out, target, sizeof target - 1);
        RETURN_ERROR_IF(n < 0, err, POSENC_ERR_IO, "cannot read the link %s: %s",
                        posenc_short_path_(out, sp, sizeof sp), strerror(errno));
        target[n] = '\0';
        const char *slash = strrchr(out, '/');
        if (target[0] == '/' || !slash) {
            RETURN_ERROR_IF((size_t)n >= cap, err, POSENC_ERR_INVALID_ARGUMENT, "output path is too long");
            memcpy(out, target, (size_t)n + 1);
        } else {
            size_t dir = (size_t)(slash - out) + 1;
            RETURN_ERROR_IF(dir + (size_t)n >= cap, err, POSENC_ERR_INVALID_ARGUMENT, "output path is too long");
            memcpy(out + dir, target, (size_t)n + 1);
        }
    }
}

/* A short name beside final_path: ".posenc-<12 random>.tmp", which keeps within
 * NAME_MAX whatever the output's own name is. */
static bool temp_name(const char *final_path, unsigned attempt, const void *salt, char *out, size_t cap) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ ((uint64_t)getpid() << 40) ^
                 (uint64_t)(uintptr_t)salt ^ (0x9e3779b97f4a7c15ull * (attempt + 1));
    x ^= x >> 30, x *= 0xbf58476d1ce4e5b9ull, x ^= x >> 27, x *= 0x94d049bb133111ebull, x ^= x >> 31;
    char rnd[13];
    for (int i = 0; i < 12; i++, x /= 36) rnd[i] = "0123456789abcdefghijklmnopqrstuvwxyz"[x % 36];
    rnd[12] = '\0';
    const char *slash = strrchr(final_path, '/');
    int dir = slash ? (int)(slash - final_path) + 1 : 0;
    int n = snprintf(out, cap, "%.*s.posenc-%s.tmp", dir, final_path, rnd);
    return n > 0 && (size_t)n < cap;
}

static void folder_of(const char *path, char *out, size_t cap) {
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(out, cap, ".");
    else if (slash == path) snprintf(out, cap, "/");
    else snprintf(out, cap, "%.*s", (int)(slash - path), path);
}

posenc_status posenc_atomic_open_(const char *path, posenc_atomic_file *f, posenc_error *err) {
    RETURN_IF_NULL(f, err);
    memset(f, 0, sizeof *f);
    f->slot = -1;
    RETURN_IF_NULL(path, err);
    char sp[128];
    RETURN_ERROR_IF(path[0] == '\0' || strlen(path) >= sizeof f->final_path, err, POSENC_ERR_INVALID_ARGUMENT,
                    "output path is empty or too long (%zu characters)", strlen(path));
    FORWARD_IF_ERROR(resolve_links(path, f->final_path, sizeof f->final_path, err));
    struct stat old;
    if (stat(f->final_path, &old) == 0) {
        /* rename() would replace a device or FIFO (as root, /dev/null itself) */
        RETURN_ERROR_IF(!S_ISREG(old.st_mode), err, POSENC_ERR_IO,
                        "cannot replace %s: it is not a regular file", posenc_short_path_(path, sp, sizeof sp));
        f->keep_mode = true;
        f->mode = (unsigned)(old.st_mode & 07777);
    }
    int fd = -1;
#if defined(O_TMPFILE)
    char folder[4096];
    folder_of(f->final_path, folder, sizeof folder);
    /* linking the unnamed file needs /proc/self/fd (or CAP_DAC_READ_SEARCH) */
    /* POSENC_NO_TMPFILE=1 takes the named path as on a file system without O_TMPFILE (tests) */
    const char *named = getenv("POSENC_NO_TMPFILE");
    if ((!named || strcmp(named, "1") != 0) && access("/proc/self/fd", X_OK) == 0)
        fd = open(folder, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
    f->unnamed = fd >= 0;
#endif
    for (unsigned attempt = 0; fd < 0 && attempt < 100; attempt++) {
        RETURN_ERROR_IF(!temp_name(f->final_path, attempt, f, f->temp_path, sizeof f->temp_path), err,
                        POSENC_ERR_INVALID_ARGUMENT, "output path is too long");
        f->slot = temp_slot_arm(f->temp_path); /* armed before it exists: no window */
        fd = open(f->temp_path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0666); /* mode: 0666 & ~umask */
        if (fd < 0) {
            int e = errno;
            temp_slot_release(f->slot);
            f->slot = -1;
            if (e == EEXIST) continue;
            f->temp_path[0] = '\0';
            return posenc_fail_(err, POSENC_ERR_IO, "cannot create %s: %s", posenc_short_path_(path, sp, sizeof sp),
                                strerror(e));
        }
    }
    RETURN_ERROR_IF(fd < 0, err, POSENC_ERR_IO, "cannot create %s: no free temporary name",
                    posenc_short_path_(path, sp, sizeof sp));
    if (f->keep_mode) (void)fchmod(fd, (mode_t)f->mode);
    f->stream = fdopen(fd, "wb");
    if (!f->stream) {
        int e = errno;
        close(fd);
        posenc_atomic_abort_(f);
        return posenc_fail_(err, POSENC_ERR_IO, "cannot open %s: %s", posenc_short_path_(path, sp, sizeof sp),
                            strerror(e));
    }
    return POSENC_OK;
}

void posenc_atomic_abort_(posenc_atomic_file *f) {
    if (f->stream) fclose(f->stream);
    f->stream = NULL;
    if (f->temp_path[0]) unlink(f->temp_path);
    f->temp_path[0] = '\0';
    temp_slot_release(f->slot);
    f->slot = -1;
}

#if defined(O_TMPFILE)
/* Link the unnamed file into place. A new output gets its final name
 * directly (linkat fails rather than replace, so this is atomic and no name
 * ever exists for a partial file); an existing output cannot be replaced by
 * linkat, so the file gets a temporary name beside it (recorded for the
 * signal handler) and the caller renames it over the output at once.
 * *in_place tells which happened. */
static int link_unnamed(posenc_atomic_file *f, bool *in_place) {
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fileno(f->stream));
    *in_place = false;
    if (linkat(AT_FDCWD, proc, AT_FDCWD, f->final_path, AT_SYMLINK_FOLLOW) == 0) {
        *in_place = true;
        return 0;
    }
    if (errno != EEXIST) return errno;
    for (unsigned attempt = 0; attempt < 100; attempt++) {
        if (!temp_name(f->final_path, attempt, f, f->temp_path, sizeof f->temp_path)) return ENAMETOOLONG;
        f->slot = temp_slot_arm(f->temp_path);
        if (linkat(AT_FDCWD, proc, AT_FDCWD, f->temp_path, AT_SYMLINK_FOLLOW) == 0) return 0;
        int e = errno;
        temp_slot_release(f->slot);
        f->slot = -1;
        f->temp_path[0] = '\0';
        if (e != EEXIST) return e;
    }
    return EEXIST;
}
#endif

posenc_status posenc_atomic_commit_(posenc_atomic_file *f, posenc_error *err) {
    char sp[128];
    int failed = ferror(f->stream) || fflush(f->stream) != 0 || fsync(fileno(f->stream)) != 0;
    int e = failed ? errno : 0;
    bool in_place = false;
#if defined(O_TMPFILE)
    if (!failed && f->unnamed && (e = link_unnamed(f, &in_place)) != 0) failed = 1;
#endif
    if (fclose(f->stream) != 0 && !failed) {
        failed = 1;
        e = errno;
        if (in_place) unlink(f->final_path); /* linked but the close failed: take it back */
    }
    f->stream = NULL;
    if (!failed && !in_place && rename(f->temp_path, f->final_path) != 0) {
        failed = 1;
        e = errno;
    }
    if (failed) {
        posenc_atomic_abort_(f);
        return posenc_fail_(err, POSENC_ERR_IO, "cannot write %s: %s",
                            posenc_short_path_(f->final_path, sp, sizeof sp), e ? strerror(e) : "write error");
    }
    f->temp_path[0] = '\0'; /* renamed: nothing to remove any more */
    temp_slot_release(f->slot);
    f->slot = -1;
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
            char sp[128];
            posenc_atomic_abort_(&f);
            return posenc_fail_(err, POSENC_ERR_IO, "cannot write %s: %s",
                                posenc_short_path_(f.final_path, sp, sizeof sp), strerror(e));
        }
    }
    FORWARD_IF_ERROR(posenc_atomic_commit_(&f, err));
    return posenc_ok_(err);
}

/* ------------------------------------------------------------------ input --- */

/* open(O_NONBLOCK) cannot block on a FIFO with no writer; fstat then tells a
 * regular file from anything else before a single read is attempted. */
static posenc_status open_regular(const char *path, int *out_fd, unsigned long long *size, posenc_error *err) {
    char sp[128];
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    RETURN_ERROR_IF(fd < 0, err, POSENC_ERR_IO, "cannot open %s: %s", posenc_short_path_(path, sp, sizeof sp),
                    strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return posenc_fail_(err, POSENC_ERR_IO, "%s is not a regular file", posenc_short_path_(path, sp, sizeof sp));
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0) (void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    *out_fd = fd;
    *size = (unsigned long long)st.st_size;
    return POSENC_OK;
}

posenc_status posenc_open_regular_(const char *path, FILE **out, unsigned long long *size, posenc_error *err) {
    RETURN_IF_NULL(path, err);
    int fd = -1;
    FORWARD_IF_ERROR(open_regular(path, &fd, size, err));
    *out = fdopen(fd, "rb");
    if (!*out) {
        int e = errno;
        close(fd);
        char sp[128];
        return posenc_fail_(err, POSENC_ERR_IO, "cannot open %s: %s", posenc_short_path_(path, sp, sizeof sp),
                            strerror(e));
    }
    return POSENC_OK;
}

posenc_status posenc_map_file_(const char *path, size_t max_bytes, posenc_mapped_file *m, posenc_error *err) {
    RETURN_IF_NULL(m, err);
    memset(m, 0, sizeof *m);
    RETURN_IF_NULL(path, err);
    char sp[128];
    int fd = -1;
    unsigned long long size;
    FORWARD_IF_ERROR(open_regular(path, &fd, &size, err));
    if (size > effective_limit(max_bytes) || size > SIZE_MAX) {
        close(fd);
        return posenc_fail_(err, POSENC_ERR_LIMIT, "%s is %llu bytes, over the limit of %zu",
                            posenc_short_path_(path, sp, sizeof sp), size, effective_limit(max_bytes));
    }
    if (size == 0) {
        close(fd);
        m->bytes = (const unsigned char *)"";
        return posenc_ok_(err);
    }
    void *p = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
    int e = errno;
    close(fd);
    RETURN_ERROR_IF(p == MAP_FAILED, err, POSENC_ERR_IO, "cannot map %s: %s", posenc_short_path_(path, sp, sizeof sp),
                    strerror(e));
    m->mapping = p;
    m->bytes = p;
    m->size = (size_t)size;
    return posenc_ok_(err);
}

void posenc_unmap_file_(posenc_mapped_file *m) {
    if (m && m->mapping) munmap(m->mapping, m->size);
    if (m) memset(m, 0, sizeof *m);
}

posenc_status posenc_file_read_all(const char *path, size_t max_bytes, void **out_bytes,
                                   size_t *out_size, posenc_error *err) {
    RETURN_IF_NULL(path, err);
    RETURN_IF_NULL(out_bytes, err);
    RETURN_IF_NULL(out_size, err);
    *out_bytes = NULL;
    *out_size = 0;
    char sp[128];
    int fd = -1;
    unsigned long long size;
    FORWARD_IF_ERROR(open_regular(path, &fd, &size, err));
    if (size > effective_limit(max_bytes) || size > SIZE_MAX) {
        close(fd);
        return posenc_fail_(err, POSENC_ERR_LIMIT, "%s is %llu bytes, over the limit of %zu",
                            posenc_short_path_(path, sp, sizeof sp), size, effective_limit(max_bytes));
    }
    unsigned char *buf = malloc(size ? (size_t)size : 1);
    if (!buf) {
        close(fd);
        return posenc_fail_(err, POSENC_ERR_OUT_OF_MEMORY, "cannot allocate %llu bytes to read %s", size,
                            posenc_short_path_(path, sp, sizeof sp));
    }
    size_t got = 0;
    int e = 0;
    while (got < (size_t)size) {
        ssize_t n = read(fd, buf + got, (size_t)size - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            e = n < 0 ? errno : 0;
            break;
        }
        got += (size_t)n;
    }
    close(fd);
    if (got != (size_t)size) {
        free(buf);
        return posenc_fail_(err, POSENC_ERR_IO, "cannot read %s: %s (got %zu of %llu bytes)",
                            posenc_short_path_(path, sp, sizeof sp), e ? strerror(e) : "file shrank", got, size);
    }
    *out_bytes = buf;
    *out_size = (size_t)size;
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
