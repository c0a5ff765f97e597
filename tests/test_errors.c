/* test_errors.c: one check per library row of docs/errors.md (the [ID] in each
 * line is the row). Every bad input must give the documented status and a
 * message naming the bad value; nothing may crash or allocate on the way.
 * The CLI rows (exit codes) are in tests/py/test_errors_cli.py, which also
 * checks that every row of the document has a test. */
#define _POSIX_C_SOURCE 200809L
#include "check.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* Under ASan or TSan an impossible allocation must come back as NULL (row A4),
 * as it does without them, instead of aborting the test. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }
const char *__tsan_default_options(void);
const char *__tsan_default_options(void) { return "allocator_may_return_null=1"; }

static int cases;

/* Check one row: status and a message fragment. */
static void expect(const char *row, posenc_status got, const posenc_error *err, posenc_status want,
                   const char *fragment) {
    cases++;
    int ok = got == want && err->status == want && strstr(err->message, fragment) != NULL;
    CHECK(ok, "[%s] %s (want %s): \"%s\"", row, posenc_strerror(got), posenc_strerror(want), err->message);
}

static void params_rows(void) {
    posenc_error e;
    posenc_sinusoid_params p;
    float out[256];
    posenc_positions r4 = posenc_positions_range(0, 4);
#define TABLE(params, pos, n) posenc_sinusoid_table_f32((params), (pos), out, (n), &e)
    posenc_sinusoid_params_default(&p, 8);
    expect("P1", TABLE(NULL, &r4, 64), &e, POSENC_ERR_NULL_POINTER, "params must not be NULL");
    expect("P1", TABLE(&p, NULL, 64), &e, POSENC_ERR_NULL_POINTER, "positions must not be NULL");
    expect("P1", posenc_sinusoid_table_f32(&p, &r4, NULL, 64, &e), &e, POSENC_ERR_NULL_POINTER,
           "out must not be NULL");
    posenc_sinusoid_params_default(&p, 0);
    expect("P2", TABLE(&p, &r4, 64), &e, POSENC_ERR_INVALID_ARGUMENT, "dim must be > 0, got 0");
    posenc_sinusoid_params_default(&p, (1 << 30) + 2);
    expect("P3", posenc_sinusoid_check(&p, NULL, &e), &e, POSENC_ERR_LIMIT, "dim must be <= 2^30, got 1073741826");
    const double bad_base[] = {0.0, 1.0, -2.0, NAN, INFINITY};
    const char *bad_text[] = {"got 0", "got 1", "got -2", "got nan", "got inf"};
    for (int i = 0; i < 5; i++) {
        posenc_sinusoid_params_default(&p, 8);
        p.base = bad_base[i];
        expect("P4", TABLE(&p, &r4, 64), &e, POSENC_ERR_INVALID_ARGUMENT, bad_text[i]);
    }
    posenc_sinusoid_params_default(&p, 64);
    p.base = 1e-300; /* w_31 = 1e300^(62/64): far past float32 */
    expect("P5", TABLE(&p, &r4, 4 * 64), &e, POSENC_ERR_INVALID_ARGUMENT, "beyond float32 range");
    {   /* torch-compat: w fits float32 but p * w does not (fuzz_table's finding) */
        posenc_sinusoid_params q;
        posenc_sinusoid_params_default(&q, 68);
        q.base = 3.6e-36; /* w_33 = base^(-66/68) ~ 2.6e34 */
        q.mode = POSENC_MODE_TORCH_COMPAT;
        posenc_positions far = posenc_positions_range(65531, 2), near = posenc_positions_range(0, 2);
        static float t68[2 * 68];
        expect("P17", posenc_sinusoid_table_f32(&q, &far, t68, 2 * 68, &e), &e, POSENC_ERR_INVALID_ARGUMENT,
               "overflows float32 at position 65532");
        q.mode = POSENC_MODE_PRECISE; /* the long double angle does not overflow */
        int ok = posenc_sinusoid_table_f32(&q, &far, t68, 2 * 68, &e) == POSENC_OK;
        for (int i = 0; ok && i < 2 * 68; i++) ok = isfinite(t68[i]);
        q.mode = POSENC_MODE_TORCH_COMPAT;
        ok = ok && posenc_sinusoid_table_f32(&q, &near, t68, 2 * 68, &e) == POSENC_OK;
        CHECK(ok, "[P17] same base: precise mode at 65531 and torch-compat at positions 0-1 are finite tables");
    }
    p.base = 0.5; /* w_31 = 2^(62/64) ~ 1.96: fine */
    int finite = TABLE(&p, &r4, 4 * 64) == POSENC_OK;
    for (int i = 0; finite && i < 4 * 64; i++) finite = isfinite(out[i]);
    CHECK(finite, "[P5] base 0.5 with dim 64 (top frequency 2^(62/64)) is still accepted, all values finite");
    posenc_sinusoid_params_default(&p, 8);
    p.layout = (posenc_layout)7;
    expect("P6", TABLE(&p, &r4, 64), &e, POSENC_ERR_INVALID_ARGUMENT, "unknown layout 7");
    posenc_sinusoid_params_default(&p, 8);
    p.freqs = (posenc_freqs)-1;
    expect("P6", TABLE(&p, &r4, 64), &e, POSENC_ERR_INVALID_ARGUMENT, "unknown frequency convention -1");
    posenc_sinusoid_params_default(&p, 8);
    p.mode = (posenc_mode)5;
    expect("P6", TABLE(&p, &r4, 64), &e, POSENC_ERR_INVALID_ARGUMENT, "unknown mode 5");
    posenc_sinusoid_params_default(&p, 9);
    p.odd = (posenc_odd_policy)9;
    expect("P6", TABLE(&p, &r4, 64), &e, POSENC_ERR_INVALID_ARGUMENT, "unknown odd-dim policy 9");
    expect("P6", posenc_baseline_table((posenc_table_kind)0, 4, &r4, POSENC_DTYPE_F32, out, 64, &e), &e,
           POSENC_ERR_INVALID_ARGUMENT, "baseline kind must be index or normalized, got 0");
    posenc_sinusoid_params_default(&p, 65);
    expect("P7", TABLE(&p, &r4, 64), &e, POSENC_ERR_INVALID_ARGUMENT, "dim must be even for layout=interleaved, got 65");
    posenc_sinusoid_params_default(&p, 1);
    p.odd = POSENC_ODD_PAD;
    expect("P8", TABLE(&p, &r4, 64), &e, POSENC_ERR_INVALID_ARGUMENT, "dim must be >= 2 for odd=pad");
    posenc_sinusoid_params_default(&p, 8);
    posenc_positions none = posenc_positions_range(0, 0);
    expect("P9", TABLE(&p, &none, 64), &e, POSENC_ERR_INVALID_ARGUMENT, "number of positions must be > 0, got 0");
    int64_t ids[3] = {0, -5, 2};
    double values[3] = {0.5, NAN, 1.0};
    posenc_positions both = posenc_positions_ids(ids, 3);
    both.values = values;
    expect("P10", TABLE(&p, &both, 64), &e, POSENC_ERR_INVALID_ARGUMENT, "not both");
    posenc_positions neg = posenc_positions_ids(ids, 3);
    expect("P11", TABLE(&p, &neg, 64), &e, POSENC_ERR_INVALID_ARGUMENT, "position 1 must be in [0, 2^53), got -5");
    ids[1] = (int64_t)1 << 53;
    expect("P11", TABLE(&p, &neg, 64), &e, POSENC_ERR_INVALID_ARGUMENT, "got 9007199254740992");
    posenc_positions nan_pos = posenc_positions_values(values, 3);
    expect("P12", TABLE(&p, &nan_pos, 64), &e, POSENC_ERR_INVALID_ARGUMENT, "position 1 must be finite");
    values[1] = -0.5;
    expect("P12", TABLE(&p, &nan_pos, 64), &e, POSENC_ERR_INVALID_ARGUMENT, "got -0.5");
    posenc_positions before0 = posenc_positions_range(-1, 2);
    expect("P13", TABLE(&p, &before0, 64), &e, POSENC_ERR_INVALID_ARGUMENT, "start position must be >= 0, got -1");
    posenc_positions past = posenc_positions_range(((int64_t)1 << 53) - 1, 2);
    expect("P13", TABLE(&p, &past, 64), &e, POSENC_ERR_INVALID_ARGUMENT, "run past 2^53");
    expect("P14", posenc_sinusoid_table(&p, &r4, POSENC_DTYPE_I32, out, 64, &e), &e, POSENC_ERR_INVALID_ARGUMENT,
           "table dtype must be f32, f64, f16 or bf16, got i32");
    expect("P15", TABLE(&p, &r4, 31), &e, POSENC_ERR_BUFFER_TOO_SMALL, "output holds 31 elements, table [4 x 8] needs 32");
    double w[3];
    expect("P15", posenc_sinusoid_frequencies_f64(&p, w, 3, &e), &e, POSENC_ERR_BUFFER_TOO_SMALL,
           "frequency buffer holds 3 values, need 4");
    size_t count;
    expect("P16", posenc_table_count((size_t)1 << 62, 1 << 20, &count, &e), &e, POSENC_ERR_SIZE_OVERFLOW,
           "len x dim = 4611686018427387904 x 1048576 overflows size_t");
#undef TABLE
}

static void array_rows(void) {
    posenc_error e;
    posenc_array a;
    size_t shape[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    expect("A1", posenc_array_create(&a, POSENC_DTYPE_F32, 9, shape, 0, &e), &e, POSENC_ERR_INVALID_ARGUMENT,
           "array rank must be in [0, 8], got 9");
    expect("A2", posenc_array_create(&a, (posenc_dtype)42, 1, shape, 0, &e), &e, POSENC_ERR_INVALID_ARGUMENT,
           "unknown dtype 42");
    size_t big[2] = {1000, 1000};
    expect("A3", posenc_array_create(&a, POSENC_DTYPE_F32, 2, big, 1000, &e), &e, POSENC_ERR_LIMIT,
           "array of 4000000 bytes exceeds the limit of 1000 bytes");
    size_t huge[1] = {(size_t)1 << 60}; /* 8 EiB: no machine has it */
    expect("A4", posenc_array_create(&a, POSENC_DTYPE_F64, 1, huge, SIZE_MAX, &e), &e, POSENC_ERR_OUT_OF_MEMORY,
           "cannot allocate 9223372036854775808 bytes");
    size_t s3[3] = {2, 2, 2};
    posenc_array_create(&a, POSENC_DTYPE_F32, 3, s3, 0, &e);
    expect("A5", posenc_csv_write("test_errors_never.csv", &a, &e), &e, POSENC_ERR_INVALID_ARGUMENT,
           "CSV output needs a 1-D or 2-D array, got rank 3");
    posenc_array_free(&a);
    CHECK(access("test_errors_never.csv", F_OK) != 0, "[A5] nothing written for the refused CSV");
}

static void npy_rows(void) {
    posenc_error e;
    posenc_array a;
    expect("N1", posenc_npy_parse("hello world", 11, 0, &a, &e), &e, POSENC_ERR_FORMAT, "missing \\x93NUMPY magic");
    expect("N1", posenc_npy_parse("\x93NUMPY", 6, 0, &a, &e), &e, POSENC_ERR_FORMAT, "not a .npy file");
    unsigned char pre[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', 9, 0, 0, 0, 0, 0};
    expect("N2", posenc_npy_parse(pre, sizeof pre, 0, &a, &e), &e, POSENC_ERR_UNSUPPORTED,
           ".npy format version 9.0 not supported");
    pre[6] = 1;
    pre[8] = 0xff;
    pre[9] = 0xff;
    expect("N3", posenc_npy_parse(pre, sizeof pre, 0, &a, &e), &e, POSENC_ERR_FORMAT,
           "header length 65535 runs past the end of the 12-byte file");
    const struct {
        const char *dict;
        size_t bytes;
        const char *row;
        posenc_status want;
        const char *fragment;
    } rows[] = {
        {"not a dict", 0, "N4", POSENC_ERR_FORMAT, ".npy header is not a dict"},
        {"{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }", 8, "N4", POSENC_ERR_FORMAT,
         "fortran_order must be True or False"},
        {"{'descr': '<f4', 'shape': (2,), }", 8, "N4", POSENC_ERR_FORMAT, ".npy header lacks fortran_order"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}", 8, "N4", POSENC_ERR_FORMAT,
         "unexpected key 'extra'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': 2, }", 8, "N4", POSENC_ERR_FORMAT,
         "shape must be a tuple"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", 8, "N4", POSENC_ERR_FORMAT,
         "shape entries must be non-negative integers"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,", 8, "N4", POSENC_ERR_FORMAT, ""},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }", 4, "N5",
         POSENC_ERR_UNSUPPORTED, "more than 8 dimensions"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999,), }", 8, "N6",
         POSENC_ERR_SIZE_OVERFLOW, "a shape entry overflows size_t"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4), }", 8, "N6",
         POSENC_ERR_SIZE_OVERFLOW, ".npy element count"},
        {"{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8, "N7", POSENC_ERR_UNSUPPORTED,
         "'>f4' is big-endian; convert with arr.astype('<f4')"},
        {"{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", 16, "N8", POSENC_ERR_UNSUPPORTED,
         ".npy dtype '<c8' is not supported"},
        {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", 8, "N8", POSENC_ERR_UNSUPPORTED,
         "no structured dtypes"},
        {"{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 16, "N9", POSENC_ERR_UNSUPPORTED,
         "Fortran order"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000000,), }", 8, "N10", POSENC_ERR_LIMIT,
         ".npy data of 4000000000000000 bytes exceeds the limit of 4294967296 bytes"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 8, "N11", POSENC_ERR_FORMAT,
         "needs 12 data bytes but the file has 8 (truncated)"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 8, "N11", POSENC_ERR_FORMAT,
         "needs 4 data bytes but the file has 8 (trailing bytes)"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        posenc_status st = check_npy_parse_dict(rows[i].dict, rows[i].bytes, &a, &e);
        expect(rows[i].row, st, &e, rows[i].want, rows[i].fragment);
        CHECK(a.data == NULL, "[%s] nothing allocated for the refused file", rows[i].row);
        posenc_array_free(&a);
    }
}

static void file_rows(void) {
    posenc_error e;
    posenc_array a;
    void *bytes;
    size_t size;
    expect("F1", posenc_npy_read("/nonexistent/x.npy", 0, &a, &e), &e, POSENC_ERR_IO,
           "cannot open /nonexistent/x.npy: No such file or directory");
    expect("F2", posenc_file_read_all(".", 0, &bytes, &size, &e), &e, POSENC_ERR_IO, ". is not a regular file");
    FILE *fp = fopen("test_errors_big.bin", "wb");
    for (int i = 0; fp && i < 100; i++) fputc(i, fp);
    if (fp) fclose(fp);
    expect("F3", posenc_file_read_all("test_errors_big.bin", 99, &bytes, &size, &e), &e, POSENC_ERR_LIMIT,
           "test_errors_big.bin is 100 bytes, over the limit of 99");
    remove("test_errors_big.bin");
    size_t shape[1] = {4};
    posenc_array_create(&a, POSENC_DTYPE_F32, 1, shape, 0, &e);
    expect("F4", posenc_npy_write("/nonexistent/dir/out.npy", &a, &e), &e, POSENC_ERR_IO,
           "cannot create /nonexistent/dir/out.npy");
    /* F5: a write that fails after the data went out: a 4-byte file-size limit
     * (SIGXFSZ ignored, as the tool does) makes the flush fail with EFBIG. */
    const void *parts[1] = {"0123456789"};
    size_t sizes[1] = {10};
    struct rlimit old_limit, tiny;
    CHECK(getrlimit(RLIMIT_FSIZE, &old_limit) == 0, "[F5] read the file-size limit");
    tiny = old_limit;
    tiny.rlim_cur = 4;
    void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
    CHECK(setrlimit(RLIMIT_FSIZE, &tiny) == 0, "[F5] set a 4-byte file-size limit");
    expect("F5", posenc_file_write_atomic("test_errors_f5.npy", parts, sizes, 1, &e), &e, POSENC_ERR_IO,
           "cannot write test_errors_f5.npy: File too large");
    setrlimit(RLIMIT_FSIZE, &old_limit);
    signal(SIGXFSZ, old_handler);
    struct stat st;
    CHECK(stat("test_errors_f5.npy", &st) != 0, "[F5] no partial output after the failed write");
    /* F7: an existing output that is not a regular file is refused, not replaced */
    mkdir("test_errors_dir.npy", 0755);
    expect("F7", posenc_file_write_atomic("test_errors_dir.npy", parts, sizes, 1, &e), &e, POSENC_ERR_IO,
           "cannot replace test_errors_dir.npy: it is not a regular file");
    CHECK(stat("test_errors_dir.npy", &st) == 0 && S_ISDIR(st.st_mode), "[F7] the existing folder is untouched");
    rmdir("test_errors_dir.npy");
    expect("F6", posenc_npy_write("", &a, &e), &e, POSENC_ERR_INVALID_ARGUMENT, "output path is empty or too long");
    char long_path[5000];
    memset(long_path, 'x', sizeof long_path - 1);
    long_path[sizeof long_path - 1] = '\0';
    expect("F6", posenc_npy_write(long_path, &a, &e), &e, POSENC_ERR_INVALID_ARGUMENT, "too long");
    posenc_array_free(&a);
}

static void rope_rows(void) {
    posenc_error e;
    posenc_rope_params p;
    double w[64], attention;
    posenc_rope_params_default(&p, 1);
    expect("R1", posenc_rope_check(&p, NULL, &e), &e, POSENC_ERR_INVALID_ARGUMENT, "head_dim must be >= 2, got 1");
    posenc_rope_params_default(&p, 64);
    p.rotary_dim = 63;
    expect("R2", posenc_rope_check(&p, NULL, &e), &e, POSENC_ERR_INVALID_ARGUMENT, "rotary_dim must be even and >= 2");
    p.rotary_dim = 0;
    p.partial_rotary_factor = 1.5;
    expect("R2", posenc_rope_check(&p, NULL, &e), &e, POSENC_ERR_INVALID_ARGUMENT,
           "partial_rotary_factor must be in (0, 1], got 1.5");
    posenc_rope_params_default(&p, 64);
    p.base = 1.0;
    expect("R3", posenc_rope_check(&p, NULL, &e), &e, POSENC_ERR_INVALID_ARGUMENT,
           "base (rope_theta) must be finite and > 1, got 1");
    posenc_rope_params_default(&p, 64);
    p.scaling = (posenc_rope_scaling)9;
    expect("R4", posenc_rope_check(&p, NULL, &e), &e, POSENC_ERR_INVALID_ARGUMENT, "unknown RoPE scaling 9");
    posenc_rope_params_default(&p, 64);
    p.scaling = POSENC_ROPE_NTK;
    p.factor = 0.5;
    expect("R5", posenc_rope_check(&p, NULL, &e), &e, POSENC_ERR_INVALID_ARGUMENT, "factor must be >= 1 for scaling=ntk");
    p.factor = NAN;
    expect("R5", posenc_rope_check(&p, NULL, &e), &e, POSENC_ERR_INVALID_ARGUMENT, "factor must be finite and > 0");
    posenc_rope_params_default(&p, 64);
    p.scaling = POSENC_ROPE_YARN;
    p.factor = 4;
    expect("R6", posenc_rope_check(&p, NULL, &e), &e, POSENC_ERR_INVALID_ARGUMENT,
           "scaling=yarn needs original_max_position (the trained context) > 0, got 0");
    p.original_max_position = 4096;
    p.beta_fast = 1;
    p.beta_slow = 32;
    expect("R7", posenc_rope_check(&p, NULL, &e), &e, POSENC_ERR_INVALID_ARGUMENT, "beta_fast must be >= beta_slow");
    posenc_rope_params_default(&p, 64);
    p.scaling = POSENC_ROPE_LONGROPE;
    p.original_max_position = 4096;
    double factors[31] = {0};
    p.short_factors = p.long_factors = factors;
    p.factors_count = 31;
    expect("R8", posenc_rope_check(&p, NULL, &e), &e, POSENC_ERR_INVALID_ARGUMENT,
           "longrope factor lists must have rotary_dim/2 = 32 entries, got 31");
    posenc_rope_params_default(&p, 64);
    p.scaling = POSENC_ROPE_LLAMA3;
    p.factor = 8;
    p.original_max_position = 8192;
    p.low_freq_factor = 4;
    p.high_freq_factor = 1;
    expect("R9", posenc_rope_check(&p, NULL, &e), &e, POSENC_ERR_INVALID_ARGUMENT,
           "high_freq_factor must be >= low_freq_factor, got high=1 low=4");
    posenc_rope_params_default(&p, 64);
    p.scaling = POSENC_ROPE_NTK;
    p.factor = 1e300; /* base' = base * factor^(64/62) = inf: every knob valid, the product not */
    expect("R10", posenc_rope_frequencies(&p, 0, w, 64, &attention, &e), &e, POSENC_ERR_INVALID_ARGUMENT,
           "gives inverse frequency");
    posenc_rope_params_default(&p, 64);
    p.scaling = POSENC_ROPE_YARN;
    p.factor = 4;
    p.original_max_position = 4096;
    p.attention_factor = 1e297;
    expect("R10", posenc_rope_frequencies(&p, 0, w, 64, &attention, &e), &e, POSENC_ERR_INVALID_ARGUMENT,
           "gives attention factor 1e+297 (must be > 0 and <= 1e30)");
    posenc_rope_params_default(&p, 8);
    float x[64] = {0};
    posenc_rope_view v = posenc_rope_view_contiguous(2, 2, 8);
    v.head_stride = 4;
    expect("R11", posenc_rope_apply_f32(&p, 0, POSENC_LAYOUT_HALF, &v, NULL, 0, x, 64, &e), &e,
           POSENC_ERR_INVALID_ARGUMENT, "head_stride must be >= head_dim (8) so heads do not overlap, got 4");
    v = posenc_rope_view_contiguous(4, 2, 8);
    expect("R11", posenc_rope_apply_f32(&p, 0, POSENC_LAYOUT_HALF, &v, NULL, 0, x, 63, &e), &e,
           POSENC_ERR_BUFFER_TOO_SMALL, "the view reaches element 64 but x_count is 63");
    expect("R12", posenc_rope_frequencies(&p, -1, w, 64, NULL, &e), &e, POSENC_ERR_INVALID_ARGUMENT,
           "seq_len must be >= 0, got -1");
}

/* A safetensors image: 8-byte length, header text, data bytes. */
static size_t st_image(unsigned char *buf, const char *header, size_t data_bytes) {
    size_t n = strlen(header);
    for (int i = 0; i < 8; i++) buf[i] = (unsigned char)((uint64_t)n >> (8 * i));
    memcpy(buf + 8, header, n);
    memset(buf + 8 + n, 0, data_bytes);
    return 8 + n + data_bytes;
}

static void safetensors_rows(void) {
    posenc_error e;
    posenc_array a;
    unsigned char buf[1024];
    expect("S1", posenc_safetensors_parse("abc", 3, "w", 0, &a, &e), &e, POSENC_ERR_FORMAT,
           "safetensors file is 3 bytes, shorter than its 8-byte header length");
    size_t n = st_image(buf, "{}", 0);
    buf[0] = 200;
    expect("S2", posenc_safetensors_parse(buf, n, "w", 0, &a, &e), &e, POSENC_ERR_FORMAT,
           "safetensors header length 200 is larger than the 2 bytes after it");
    /* a 100 MiB + 1 header is refused from its length alone (the buffer is zero pages) */
    size_t big = ((size_t)100 << 20) + 16;
    unsigned char *huge = calloc(big, 1);
    if (huge) {
        uint64_t len = ((uint64_t)100 << 20) + 1;
        for (int i = 0; i < 8; i++) huge[i] = (unsigned char)(len >> (8 * i));
        expect("S3", posenc_safetensors_parse(huge, big, "w", 0, &a, &e), &e, POSENC_ERR_LIMIT,
               "exceeds the 100 MiB limit");
        free(huge);
    }
    const struct {
        const char *header;
        size_t data;
        const char *row;
        posenc_status want;
        const char *fragment;
    } rows[] = {
        {"{\"w\": ", 0, "S4", POSENC_ERR_FORMAT, "safetensors header is not valid JSON"},
        {"[1, 2]", 0, "S4", POSENC_ERR_FORMAT, "safetensors header is not a JSON object"},
        {"{\"w\": {\"dtype\": \"F32\"}}", 0, "S5", POSENC_ERR_FORMAT,
         "needs string dtype, array shape and array data_offsets"},
        {"{\"w\": {\"dtype\": \"C64\", \"shape\": [1], \"data_offsets\": [0, 8]}}", 8, "S6",
         POSENC_ERR_UNSUPPORTED, "unsupported dtype 'C64'"},
        {"{\"w\": {\"dtype\": \"U8\", \"shape\": [1,1,1,1,1,1,1,1,1], \"data_offsets\": [0, 1]}}", 1, "S7",
         POSENC_ERR_UNSUPPORTED, "has 9 dims, more than 8"},
        {"{\"w\": {\"dtype\": \"F32\", \"shape\": [-1], \"data_offsets\": [0, 4]}}", 4, "S8",
         POSENC_ERR_FORMAT, "shape[0] is not a non-negative integer"},
        {"{\"w\": {\"dtype\": \"F32\", \"shape\": [4294967296, 4294967296], \"data_offsets\": [0, 4]}}", 4,
         "S8", POSENC_ERR_FORMAT, "overflows size_t"},
        {"{\"w\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [0, 16]}}", 8, "S9",
         POSENC_ERR_FORMAT, "data_offsets [0, 16] lie outside the 8-byte data buffer"},
        {"{\"w\": {\"dtype\": \"F32\", \"shape\": [3], \"data_offsets\": [0, 8]}}", 8, "S9",
         POSENC_ERR_FORMAT, "has 8 data bytes but its shape and dtype need 12"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]}, "
         "\"w\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [4, 12]}}", 12, "S10",
         POSENC_ERR_FORMAT, "overlap"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]}}", 8, "S11",
         POSENC_ERR_OUT_OF_RANGE, "no tensor 'w' in the safetensors file (it has: a)"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        n = st_image(buf, rows[i].header, rows[i].data);
        posenc_status st = posenc_safetensors_parse(buf, n, "w", 0, &a, &e);
        expect(rows[i].row, st, &e, rows[i].want, rows[i].fragment);
        CHECK(a.data == NULL, "[%s] nothing allocated for the refused file", rows[i].row);
    }
    n = st_image(buf, "{\"w\": {\"dtype\": \"F32\", \"shape\": [64], \"data_offsets\": [0, 256]}}", 256);
    expect("S12", posenc_safetensors_parse(buf, n, "w", 100, &a, &e), &e, POSENC_ERR_LIMIT,
           "array of 256 bytes exceeds the limit of 100 bytes");
}

static void bias_rows(void) {
    posenc_error e;
    double s64[8];
    float s32[8], out[64];
    expect("B1", posenc_alibi_slopes_f64(0, 8.0, 0, 0, POSENC_MODE_PRECISE, s64, 8, &e), &e,
           POSENC_ERR_INVALID_ARGUMENT, "heads");
    expect("B3", posenc_alibi_slopes_f64(4, 8.0, 6, 8, POSENC_MODE_PRECISE, s64, 8, &e), &e,
           POSENC_ERR_INVALID_ARGUMENT, "8");
    expect("B2", posenc_alibi_slopes_f64(4, NAN, 0, 0, POSENC_MODE_PRECISE, s64, 8, &e), &e,
           POSENC_ERR_INVALID_ARGUMENT, "max_bias must be finite and > 0, got nan");
    expect("B20", posenc_alibi_slopes_f64(4, 5000.0, 0, 0, POSENC_MODE_PRECISE, s64, 8, &e), &e,
           POSENC_ERR_INVALID_ARGUMENT, "max_bias 5000 makes the slope of head 0 underflow to 0");
    expect("B20", posenc_alibi_slopes_f32(4, 300.0, 0, 0, POSENC_MODE_TORCH_COMPAT, s32, 8, &e), &e,
           POSENC_ERR_INVALID_ARGUMENT, "underflow to 0");
    posenc_positions r4 = posenc_positions_range(0, 4);
    float bad_slopes[2] = {0.5f, INFINITY};
    expect("B5", posenc_alibi_bias_f32(bad_slopes, 2, POSENC_ALIBI_CAUSAL, &r4, &r4, out, 64, &e), &e,
           POSENC_ERR_INVALID_ARGUMENT, "inf");
    expect("B4", posenc_alibi_bias_f32(bad_slopes, 1, (posenc_alibi_form)3, &r4, &r4, out, 64, &e), &e,
           POSENC_ERR_INVALID_ARGUMENT, "ALiBi form must be CAUSAL (0) or SYMMETRIC (1), got 3");
    int64_t mask[3] = {0, 2, 1}, kp[3];
    expect("B6", posenc_alibi_key_positions_from_mask(mask, 3, kp, 3, &e), &e, POSENC_ERR_INVALID_ARGUMENT, "2");
    posenc_t5_params t5;
    posenc_t5_params_default(&t5);
    t5.num_buckets = 31;
    expect("B8", posenc_t5_check(&t5, &e), &e, POSENC_ERR_INVALID_ARGUMENT, "31");
    posenc_t5_params_default(&t5);
    t5.max_distance = 8;
    expect("B9", posenc_t5_check(&t5, &e), &e, POSENC_ERR_INVALID_ARGUMENT, "8");
    posenc_t5_params_default(&t5);
    double reals[2] = {0.5, 1.5};
    posenc_positions rv = posenc_positions_values(reals, 2);
    int32_t idx[64];
    expect("B11", posenc_t5_bucket_matrix_i32(&t5, &rv, &r4, idx, 64, &e), &e, POSENC_ERR_INVALID_ARGUMENT, "");
    expect("B11", posenc_shaw_relative_indices_i32(2, &r4, &rv, idx, 64, &e), &e, POSENC_ERR_INVALID_ARGUMENT, "");
    expect("B13", posenc_shaw_relative_indices_i32(-1, &r4, &r4, idx, 64, &e), &e, POSENC_ERR_INVALID_ARGUMENT,
           "clip k must be >= 0, got -1");
    expect("B21", posenc_shaw_relative_indices_i32(1 << 30, &r4, &r4, idx, 64, &e), &e, POSENC_ERR_LIMIT,
           "clip k must be < 2^30, got 1073741824");
    int32_t gather_idx[2] = {0, 5};
    float table[5 * 2] = {0};
    expect("B14", posenc_shaw_gather_f32(gather_idx, 2, 2, table, 2, out, 64, &e), &e, POSENC_ERR_OUT_OF_RANGE,
           "index 1 must be in [0, 2k] = [0, 4], got 5");
}

/* A GGUF v3 preamble claiming n_tensors / n_kv, then `body`. */
static size_t gguf_image(unsigned char *buf, uint32_t version, uint64_t n_kv, const void *body, size_t body_size) {
    memcpy(buf, "GGUF", 4);
    for (int i = 0; i < 4; i++) buf[4 + i] = (unsigned char)(version >> (8 * i));
    memset(buf + 8, 0, 8);
    for (int i = 0; i < 8; i++) buf[16 + i] = (unsigned char)(n_kv >> (8 * i));
    memcpy(buf + 24, body, body_size);
    return 24 + body_size;
}

static void config_rows(void) {
    posenc_error e;
    posenc_model_config c;
    const char *json[][4] = {
        {"H1", "{\"model_type\": ", "config.json: not valid JSON", "F"},
        {"H1", "[1, 2]", "config.json: the document must be a JSON object", "F"},
        {"H2", "{\"model_type\": \"llama\", \"hidden_size\": 64, \"num_attention_heads\": 2, \"rope_theta\": \"1e6\"}",
         "config.json: 'rope_theta' must be a finite number", "F"},
        {"H3", "{\"model_type\": \"llama\", \"hidden_size\": -64, \"num_attention_heads\": 2}",
         "'hidden_size' must be an integer in [0, ", "F"},
        {"H4", "{\"model_type\": \"llama\", \"hidden_size\": 64, \"num_attention_heads\": 2, \"rope_scaling\": "
               "{\"type\": \"wobbly\", \"factor\": 2}}", "wobbly", "U"},
        {"H5", "{\"model_type\": \"llama\", \"hidden_size\": 64, \"num_attention_heads\": 2, \"rope_scaling\": "
               "{\"type\": \"linear\"}}", "config.json: rope scaling 'linear' has no factor", "F"},
        {"H6", "{\"model_type\": \"llama\", \"hidden_size\": 64, \"num_attention_heads\": 2, \"rope_scaling\": "
               "{\"type\": \"linear\", \"factor\": 0}}", "factor must be finite and > 0", "I"},
    };
    for (size_t i = 0; i < sizeof json / sizeof json[0]; i++) {
        posenc_status want = json[i][3][0] == 'F' ? POSENC_ERR_FORMAT
                             : json[i][3][0] == 'U' ? POSENC_ERR_UNSUPPORTED : POSENC_ERR_INVALID_ARGUMENT;
        posenc_status st = posenc_config_parse_hf_json(json[i][1], strlen(json[i][1]), &c, &e);
        expect(json[i][0], st, &e, want, json[i][2]);
        posenc_model_config_free(&c);
    }
    /* H13: what a file that is not JSON is (the old message guessed "truncated, or nested deeper") */
    static const char utf16[] = "\xff\xfe{\0\"\0m\0\"\0:\0";
    static const char utf16_plain[] = "{\0\"\0m\0\"\0}\0";
    const char *texts[][2] = {
        {"{\"model_type\": \"llama\", // Llama 3\n\"hidden_size\": 64}", "holds a comment ('//' at byte 24)"},
        {"{\"model_type\": \"llama\" /* x */}", "holds a comment ('/*' at byte 23)"},
        {"{\"model_type\": \"lla", "ends inside a string (truncated? 19 bytes)"},
        {"{\"model_type\": [\"llama\",", "ends inside an object or list"},
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        expect("H13", posenc_config_parse_hf_json(texts[i][0], strlen(texts[i][0]), &c, &e), &e, POSENC_ERR_FORMAT,
               texts[i][1]);
        posenc_model_config_free(&c);
    }
    expect("H13", posenc_config_parse_hf_json(utf16, sizeof utf16 - 1, &c, &e), &e, POSENC_ERR_FORMAT,
           "config.json is UTF-16 (it starts with a UTF-16 byte-order mark)");
    posenc_model_config_free(&c);
    expect("H13", posenc_config_parse_hf_json(utf16_plain, sizeof utf16_plain - 1, &c, &e), &e, POSENC_ERR_FORMAT,
           "config.json is UTF-16 (NUL bytes between its characters)");
    posenc_model_config_free(&c);
    static const char trailing_nul[] = "{\"model_type\": \"llama\"}\0";
    expect("H13", posenc_config_parse_hf_json(trailing_nul, sizeof trailing_nul - 1, &c, &e), &e, POSENC_ERR_FORMAT,
           "config.json holds a NUL byte at byte 23");
    posenc_model_config_free(&c);
    unsigned char buf[256];
    expect("G1", posenc_config_parse_gguf("GGUX\3\0\0\0", 8, &c, &e), &e, POSENC_ERR_FORMAT,
           "not a GGUF file (magic is not 'GGUF')");
    posenc_model_config_free(&c);
    size_t n = gguf_image(buf, 7, 0, "", 0);
    expect("G2", posenc_config_parse_gguf(buf, n, &c, &e), &e, POSENC_ERR_UNSUPPORTED,
           "GGUF version 7 is not supported (2 and 3 are)");
    posenc_model_config_free(&c);
    n = gguf_image(buf, 3, (uint64_t)1 << 60, "", 0);
    expect("G3", posenc_config_parse_gguf(buf, n, &c, &e), &e, POSENC_ERR_FORMAT,
           "GGUF claims 1152921504606846976 key/value pairs: more than the file can hold");
    posenc_model_config_free(&c);
    /* key "a.b", type string, length 2^60 */
    unsigned char body[64] = {3, 0, 0, 0, 0, 0, 0, 0, 'a', '.', 'b', 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10};
    n = gguf_image(buf, 3, 1, body, 32);
    expect("G4", posenc_config_parse_gguf(buf, n, &c, &e), &e, POSENC_ERR_FORMAT, "claims 1152921504606846976 bytes");
    posenc_model_config_free(&c);
    body[11] = 99; /* unknown value type */
    n = gguf_image(buf, 3, 1, body, 32);
    expect("G5", posenc_config_parse_gguf(buf, n, &c, &e), &e, POSENC_ERR_FORMAT, "GGUF key 'a.b' has unknown value type 99");
    posenc_model_config_free(&c);
    unsigned char arch[64] = {20, 0, 0, 0, 0, 0, 0, 0, 'g', 'e', 'n', 'e', 'r', 'a', 'l', '.', 'a', 'r', 'c', 'h', 'i',
                              't', 'e', 'c', 't', 'u', 'r', 'e', 4, 0, 0, 0, 1, 0, 0, 0};
    n = gguf_image(buf, 3, 1, arch, 40);
    expect("G6", posenc_config_parse_gguf(buf, n, &c, &e), &e, POSENC_ERR_FORMAT,
           "GGUF general.architecture must be a string, has type 4");
    posenc_model_config_free(&c);
    n = gguf_image(buf, 3, 0, "", 0);
    expect("G7", posenc_config_parse_gguf(buf, n, &c, &e), &e, POSENC_ERR_FORMAT, "GGUF has no general.architecture key");
    posenc_model_config_free(&c);
    n = gguf_image(buf, 3, 1, arch, 30);
    expect("G8", posenc_config_parse_gguf(buf, n, &c, &e), &e, POSENC_ERR_FORMAT, "GGUF truncated");
    posenc_model_config_free(&c);
}

/* issue 13: non-finite results (V), one rule for positions (R13), hybrid (L17) with no learned channel */
static void issue13_rows(void) {
    posenc_error e;
    float small[32];
    expect("V1", posenc_learned_init_f32(0, 1e40, POSENC_NO_PADDING, 4, 8, small, 32, &e), &e, POSENC_ERR_NONFINITE,
           "cell [0, 0] = sigma x draw = 1e+40");
    CHECK(posenc_learned_init_f32(0, 1e30, POSENC_NO_PADDING, 4, 8, small, 32, &e) == POSENC_OK,
          "[V1] sigma 1e30 still fits float32");
    size_t n = (size_t)70000 * 2;
    uint16_t *half = malloc(sizeof *half * n);
    posenc_positions r70k = posenc_positions_range(0, 70000);
    expect("V2", posenc_baseline_table(POSENC_KIND_INDEX, 2, &r70k, POSENC_DTYPE_F16, half, n, &e), &e,
           POSENC_ERR_NONFINITE, "cell [65520, 0]: position 65520 overflows f16 (largest finite 65504)");
    posenc_positions r65k = posenc_positions_range(0, 65504 + 1);
    CHECK(posenc_baseline_table(POSENC_KIND_INDEX, 2, &r65k, POSENC_DTYPE_F16, half, n, &e) == POSENC_OK,
          "[V2] index positions up to 65504 fit float16");
    free(half);
    float cells[6] = {0, 1, 2, 3, 4, 5};
    cells[5] = INFINITY;
    posenc_array a = {POSENC_DTYPE_F32, 2, {2, 3}, 6, cells};
    expect("V3", posenc_array_check_finite(&a, "rotated output", &e), &e, POSENC_ERR_NONFINITE,
           "rotated output: cell [1, 2] is inf");
    cells[5] = 5;
    CHECK(posenc_array_check_finite(&a, "x", &e) == POSENC_OK, "[V3] a finite array passes");
    /* R13: RoPE positions take either sign but must be exact in a double */
    posenc_rope_params p;
    posenc_rope_params_default(&p, 8);
    float x[16] = {0};
    int64_t pos[2] = {3, (int64_t)1 << 62};
    posenc_rope_view view = {2, 1, 8, 8};
    expect("R13", posenc_rope_apply_f32(&p, 0, POSENC_LAYOUT_HALF, &view, pos, 0, x, 16, &e), &e,
           POSENC_ERR_INVALID_ARGUMENT, "position 1 must be in (-2^53, 2^53), got 4611686018427387904");
    pos[1] = -((int64_t)1 << 53);
    expect("R13", posenc_rope_apply_f32(&p, 0, POSENC_LAYOUT_HALF, &view, pos, 0, x, 16, &e), &e,
           POSENC_ERR_INVALID_ARGUMENT, "position 1 must be in (-2^53, 2^53)");
    pos[1] = -((int64_t)1 << 53) + 1;
    CHECK(posenc_rope_apply_f32(&p, 0, POSENC_LAYOUT_HALF, &view, pos, 0, x, 16, &e) == POSENC_OK,
          "[R13] position -(2^53 - 1) is accepted");
    /* hybrid with learned_dim 0: no learned rows at all (was an offset applied to NULL, UBSan) */
    posenc_sinusoid_params sp;
    posenc_sinusoid_params_default(&sp, 8);
    posenc_positions r4 = posenc_positions_range(0, 4);
    float hybrid[32], plain[32];
    posenc_status st = posenc_hybrid_table_f32(NULL, 0, 0, &sp, &r4, POSENC_PAST_END_ERROR, hybrid, 32, &e);
    posenc_sinusoid_table_f32(&sp, &r4, plain, 32, &e);
    CHECK(st == POSENC_OK && memcmp(hybrid, plain, sizeof plain) == 0,
          "[L17] hybrid with learned_dim 0 and no learned table is the sinusoid table");
}

int main(void) {
    params_rows();
    array_rows();
    npy_rows();
    file_rows();
    rope_rows();
    safetensors_rows();
    bias_rows();
    config_rows();
    issue13_rows();
    printf("%d bad-input cases checked against docs/errors.md\n", cases);
    return check_finish();
}
