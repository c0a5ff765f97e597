/* test_npy.c: .npy reader/writer: round trips, numpy-written goldens, and
 * malformed input (each must give a status, never a crash). */
#define _POSIX_C_SOURCE 200809L /* setenv, mkfifo */
#include "check.h"

#include <fcntl.h>
#if defined(__GLIBC__)
#include <malloc.h> /* mallopt */
#endif
#include <sys/stat.h>
#include <unistd.h>

/* The signal-cleanup registry (posenc_temp_files): a named temporary is
 * recorded while it is written and released afterwards; _remove unlinks what
 * is recorded. A FIFO input is refused without blocking. */
static void temp_files_and_inputs(void) {
    static posenc_temp_files files;
    posenc_error err = {0};
    posenc_array a;
    size_t shape[2] = {2, 3};
    posenc_array_create(&a, POSENC_DTYPE_F32, 2, shape, 0, &err);
    posenc_temp_files_register(&files);
    setenv("POSENC_NO_TMPFILE", "1", 1);
    CHECK(posenc_npy_write("test_npy_named.npy", &a, &err) == POSENC_OK, "named-temporary write (%s)", err.message);
    int busy = 0;
    for (int i = 0; i < POSENC_TEMP_SLOTS; i++) busy += files.state[i] != 0;
    CHECK(busy == 0, "every registry slot is free after the write (%d busy)", busy);
    unsetenv("POSENC_NO_TMPFILE");
    /* a recorded name is removed by posenc_temp_files_remove (what the signal handler calls) */
    FILE *fp = fopen("test_npy_orphan.tmp", "wb");
    if (fp) fclose(fp);
    snprintf(files.path[3], sizeof files.path[3], "test_npy_orphan.tmp");
    files.state[3] = 2;
    posenc_temp_files_remove(&files);
    CHECK(access("test_npy_orphan.tmp", F_OK) != 0, "posenc_temp_files_remove unlinks a recorded temporary");
    files.state[3] = 0;
    posenc_temp_files_register(NULL);
    /* a FIFO: O_NONBLOCK open + fstat refuse it at once */
    unlink("test_npy_fifo.npy");
    CHECK(mkfifo("test_npy_fifo.npy", 0600) == 0, "mkfifo");
    posenc_array from_fifo;
    posenc_status st = posenc_npy_read("test_npy_fifo.npy", 0, &from_fifo, &err);
    CHECK(st == POSENC_ERR_IO && strstr(err.message, "is not a regular file"), "FIFO refused: \"%s\"", err.message);
    void *bytes = NULL;
    size_t size = 0;
    st = posenc_file_read_all("test_npy_fifo.npy", 0, &bytes, &size, &err);
    CHECK(st == POSENC_ERR_IO && bytes == NULL, "posenc_file_read_all refuses the FIFO: \"%s\"", err.message);
    unlink("test_npy_fifo.npy");
    unlink("test_npy_named.npy");
    posenc_array_free(&a);
}

/* posenc_array_create zeroes big arrays on several threads (src/io/io.c): every
 * byte is zero, also when the allocator hands back the memory of a freed array
 * that was filled with 0xff, for sizes on and off the 2 MiB pieces, and with
 * POSENC_THREADS forcing 2 workers. glibc serves these sizes with fresh (zero)
 * mmap pages, which would hide a missed piece, so the test raises the mmap
 * threshold: round 1 then gets round 0's dirty heap memory back (printed). */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZER_MALLOC 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZER_MALLOC 1
#endif
#if defined(__GLIBC__) && !defined(SANITIZER_MALLOC)
#define GLIBC_MALLOC 1 /* mallopt below holds: round 1 must get round 0's memory back */
#endif

static void big_arrays_are_zero(void) {
    const size_t sizes[] = {((size_t)16 << 20) + 4, ((size_t)30 << 20) + 64};
#if defined(__GLIBC__)
    mallopt(M_MMAP_THRESHOLD, 32 << 20); /* the largest glibc accepts on 64-bit */
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
    const char *threads_before = getenv("POSENC_THREADS");
    char saved[32] = "";
    if (threads_before) snprintf(saved, sizeof saved, "%s", threads_before);
    setenv("POSENC_THREADS", "2", 1);
    for (int i = 0; i < 2; i++) {
        void *previous = NULL;
        for (int round = 0; round < 2; round++) {
            posenc_array a;
            size_t shape[1] = {sizes[i] / 4};
            posenc_status st = posenc_array_create(&a, POSENC_DTYPE_F32, 1, shape, 0, NULL);
            size_t nonzero = 0, first = 0;
            for (size_t b = 0; st == POSENC_OK && b < sizes[i]; b++)
                if (((unsigned char *)a.data)[b] && !nonzero++) first = b;
            CHECK(st == POSENC_OK && nonzero == 0,
                  "array of %zu bytes (round %d%s) is zero: %zu nonzero bytes, first at %zu", sizes[i], round,
                  round == 0 ? "" : a.data == previous ? ", the dirty memory of round 0" : ", new memory", nonzero,
                  first);
#if defined(GLIBC_MALLOC)
            /* without the dirty memory this check could not catch a missed piece */
            if (round == 1)
                CHECK(a.data == previous, "round 1 of %zu bytes reuses round 0's dirty memory (%p, %p)", sizes[i],
                      a.data, previous);
#endif
            previous = a.data;
            if (st == POSENC_OK) memset(a.data, 0xff, sizes[i]); /* dirty, for the next round's reuse */
            posenc_array_free(&a);
        }
    }
    if (threads_before) setenv("POSENC_THREADS", saved, 1);
    else unsetenv("POSENC_THREADS");
#if defined(__GLIBC__)
    mallopt(M_MMAP_THRESHOLD, 128 * 1024); /* glibc's defaults again */
    mallopt(M_TRIM_THRESHOLD, 128 * 1024);
#endif
}

int main(void) {
    temp_files_and_inputs();
    big_arrays_are_zero();
    posenc_error err = {0};
    posenc_array a, b;
    size_t shape[2] = {3, 5};
    const posenc_dtype types[] = {POSENC_DTYPE_F32, POSENC_DTYPE_F64, POSENC_DTYPE_F16,
                                  POSENC_DTYPE_I32, POSENC_DTYPE_I64, POSENC_DTYPE_U8};
    for (int t = 0; t < 6; t++) {
        posenc_array_create(&a, types[t], 2, shape, 0, &err);
        for (size_t i = 0; i < a.count * posenc_dtype_size(a.dtype); i++) ((unsigned char *)a.data)[i] = (unsigned char)(i * 7 + 1);
        posenc_status st = posenc_npy_write("test_npy_roundtrip.npy", &a, &err);
        st = st == POSENC_OK ? posenc_npy_read("test_npy_roundtrip.npy", 0, &b, &err) : st;
        CHECK(st == POSENC_OK && b.dtype == a.dtype && b.ndim == 2 && b.shape[0] == 3 && b.shape[1] == 5 &&
                  memcmp(a.data, b.data, a.count * posenc_dtype_size(a.dtype)) == 0,
              "round trip %s [3,5] (%s)", posenc_dtype_name(types[t]), err.message);
        posenc_array_free(&a);
        posenc_array_free(&b);
    }
    remove("test_npy_roundtrip.npy");
    /* 1-D and 0-D shapes as numpy spells them */
    CHECK(check_npy_parse_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", 16, &a, &err) == POSENC_OK &&
              a.ndim == 1 && a.shape[0] == 4, "parse 1-D (4,)");
    posenc_array_free(&a);
    CHECK(check_npy_parse_dict("{'descr': '<f8', 'fortran_order': False, 'shape': (), }", 8, &a, &err) == POSENC_OK &&
              a.ndim == 0 && a.count == 1, "parse 0-D ()");
    posenc_array_free(&a);
    struct { const char *dict; size_t bytes; posenc_status want; const char *what; } bad[] = {
        {"{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8, POSENC_ERR_UNSUPPORTED, "big-endian"},
        {"{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 16, POSENC_ERR_UNSUPPORTED, "Fortran order"},
        {"{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", 16, POSENC_ERR_UNSUPPORTED, "complex dtype"},
        {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", 8, POSENC_ERR_UNSUPPORTED, "structured dtype"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 8, POSENC_ERR_FORMAT, "truncated data"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 8, POSENC_ERR_FORMAT, "trailing data"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000000,), }", 8, POSENC_ERR_LIMIT, "10^15 elements refused before allocating"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999,), }", 8, POSENC_ERR_SIZE_OVERFLOW, "shape entry overflows"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4), }", 8, POSENC_ERR_SIZE_OVERFLOW, "shape product overflows"},
        {"{'descr': '<f4', 'shape': (2,), }", 8, POSENC_ERR_FORMAT, "missing fortran_order"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,", 8, POSENC_ERR_FORMAT, "unterminated header"},
        {"{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }", 8, POSENC_ERR_FORMAT, "bad boolean"},
        {"not a dict", 8, POSENC_ERR_FORMAT, "header not a dict"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }", 4, POSENC_ERR_UNSUPPORTED, "9 dimensions"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        posenc_status st = check_npy_parse_dict(bad[i].dict, bad[i].bytes, &a, &err);
        CHECK(st == bad[i].want && a.data == NULL, "%s -> %s: \"%s\"", bad[i].what, posenc_strerror(st), err.message);
        posenc_array_free(&a);
    }
    unsigned char tiny[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0xff, 0xff, 0, 0};
    CHECK(posenc_npy_parse(tiny, sizeof tiny, 0, &a, &err) == POSENC_ERR_FORMAT, "header length past EOF: \"%s\"", err.message);
    CHECK(posenc_npy_parse("hello world", 11, 0, &a, &err) == POSENC_ERR_FORMAT, "bad magic: \"%s\"", err.message);
    tiny[6] = 9;
    CHECK(posenc_npy_parse(tiny, sizeof tiny, 0, &a, &err) == POSENC_ERR_UNSUPPORTED, "version 9: \"%s\"", err.message);
    CHECK(posenc_npy_read("/nonexistent/x.npy", 0, &a, &err) == POSENC_ERR_IO, "missing file: \"%s\"", err.message);
    /* the writer refuses an unwritable folder and leaves nothing behind */
    posenc_array_create(&a, POSENC_DTYPE_F32, 2, shape, 0, &err);
    CHECK(posenc_npy_write("/nonexistent/out.npy", &a, &err) == POSENC_ERR_IO, "unwritable path: \"%s\"", err.message);
    CHECK(posenc_csv_write("test_npy.csv", &a, &err) == POSENC_OK, "CSV writes");
    posenc_array_free(&a);
    void *bytes;
    size_t size;
    CHECK(posenc_file_read_all("test_npy.csv", 0, &bytes, &size, &err) == POSENC_OK && size == 30 &&
              memcmp(bytes, "0,0,0,0,0\n", 10) == 0, "CSV content: 3 lines of 5 zeros (%zu bytes)", size);
    free(bytes);
    remove("test_npy.csv");
    /* goldens written by numpy.save parse with the right shape */
    const char *dir = check_golden_dir();
    if (dir) {
        char path[4096];
        snprintf(path, sizeof path, "%s/input_formula_T37_H3_D64.npy", dir);
        CHECK(posenc_npy_read(path, 0, &a, &err) == POSENC_OK && a.ndim == 3 && a.shape[0] == 37 &&
                  a.shape[1] == 3 && a.shape[2] == 64 && a.dtype == POSENC_DTYPE_F32,
              "golden input_formula [37,3,64] f32 (%s)", err.message);
        static float want[37 * 3 * 64];
        for (int t = 0; t < 37; t++)
            for (int h = 0; h < 3; h++)
                for (int d = 0; d < 64; d++)
                    want[(t * 3 + h) * 64 + d] = (float)(sin(0.37 * t + 1.3 * h + 0.11 * d) * (1 + 0.01 * d));
        size_t formula_shape[3] = {37, 3, 64};
        if (a.data) check_same("golden input_formula == the documented formula", a.data, want, 37 * 3 * 64, CHECK_F32,
                               formula_shape, 3);
        posenc_array_free(&a);
        snprintf(path, sizeof path, "%s/hf_t5_bucket_grid64_bidir1.npy", dir);
        CHECK(posenc_npy_read(path, 0, &a, &err) == POSENC_OK && a.dtype == POSENC_DTYPE_I64 && a.count == 4096,
              "golden int64 [64,64] reads (%s)", err.message);
        posenc_array_free(&a);
    }
    return check_finish();
}
