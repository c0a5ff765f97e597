/*
 * posenc.h: Transformer positional encodings, computed exactly.
 *
 * One flat C11 API. Every function:
 *   - returns a posenc_status (POSENC_OK == 0 on success);
 *   - takes an optional `posenc_error *err` as its last argument (may be NULL);
 *     on failure it receives the status and a human message that names the bad
 *     value, e.g. "dim must be even for layout=interleaved, got 65";
 *   - writes into caller-owned buffers whose size the caller states
 *     (`out_count`, in elements) and can query first, or into objects from an
 *     explicit create/free pair (free accepts NULL);
 *   - never aborts, exits or prints on bad input, and touches no global mutable
 *     state, so every function is safe to call from several threads at once.
 *
 * Families, in the order they appear below:
 *   0. status codes and errors        5. relative encodings and biases (ALiBi, T5, Shaw, XL)
 *   1. common types, dtype helpers    6. learned tables, composition, reference attention
 *   2. sinusoidal tables and baselines 7. analysis (health, precision, diff)
 *   3. arrays and .npy / CSV files     8. model configuration import
 *   4. RoPE                            9. kernels, threads and dispatch
 *
 * Units: positions are token indices (integers unless stated), angles are
 * radians, frequencies are radians per position, wavelengths are positions.
 * Tables are row-major: [positions][channels] unless stated.
 */
#ifndef POSENC_H
#define POSENC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(POSENC_BUILD_SHARED)
#define POSENC_API __declspec(dllexport)
#elif defined(__GNUC__)
#define POSENC_API __attribute__((visibility("default")))
#else
#define POSENC_API
#endif

#define POSENC_VERSION_MAJOR 0
#define POSENC_VERSION_MINOR 1
#define POSENC_VERSION_PATCH 0
#define POSENC_VERSION_STRING "0.1.0"

/* Version of the library actually linked (compare with POSENC_VERSION_STRING). */
POSENC_API const char *posenc_version(void);

/* ========================================================================
 * 0. Status codes and errors
 * ======================================================================== */

/* Values are pinned: they never change between releases. */
typedef enum posenc_status {
    POSENC_OK = 0,
    POSENC_ERR_INVALID_ARGUMENT = 1, /* a parameter is out of its domain (message names it) */
    POSENC_ERR_OUT_OF_MEMORY = 2,    /* an allocation failed */
    POSENC_ERR_BUFFER_TOO_SMALL = 3, /* out_count is less than the size query returns */
    POSENC_ERR_SIZE_OVERFLOW = 4,    /* a size product (len x dim, ...) overflows size_t */
    POSENC_ERR_LIMIT = 5,            /* larger than the documented/configured maximum */
    POSENC_ERR_IO = 6,               /* a file could not be opened, read, written or renamed */
    POSENC_ERR_FORMAT = 7,           /* a file or document is malformed or truncated */
    POSENC_ERR_UNSUPPORTED = 8,      /* well-formed but not supported (dtype, order, version) */
    POSENC_ERR_OUT_OF_RANGE = 9,     /* a position or index lies outside a table */
    POSENC_ERR_NULL_POINTER = 10     /* a required pointer argument is NULL */
} posenc_status;

#define POSENC_ERROR_MESSAGE_SIZE 256

/* Per-call error detail, owned by the caller (usually on its stack). */
typedef struct posenc_error {
    posenc_status status;
    char message[POSENC_ERROR_MESSAGE_SIZE];
} posenc_error;

/* Static, generic text for a status code ("invalid argument", ...); never NULL. */
POSENC_API const char *posenc_strerror(posenc_status status);

/* ========================================================================
 * 1. Common types and dtype helpers
 * ======================================================================== */

/* Element types. Values are pinned. BF16 data in memory is the upper 16 bits
 * of an IEEE float32 (round-to-nearest-even when converting). */
typedef enum posenc_dtype {
    POSENC_DTYPE_F32 = 0,
    POSENC_DTYPE_F64 = 1,
    POSENC_DTYPE_F16 = 2,
    POSENC_DTYPE_BF16 = 3,
    POSENC_DTYPE_I32 = 4,
    POSENC_DTYPE_I64 = 5,
    POSENC_DTYPE_U8 = 6,
    POSENC_DTYPE_U16 = 7
} posenc_dtype;

/* Bytes per element (0 for an unknown dtype). */
POSENC_API size_t posenc_dtype_size(posenc_dtype dtype);
/* Short name: "f32", "f64", "f16", "bf16", "i32", "i64", "u8", "u16"; "?" if unknown. */
POSENC_API const char *posenc_dtype_name(posenc_dtype dtype);

/* Scalar conversions, round-to-nearest-even, NaN preserved, overflow to inf. */
POSENC_API uint16_t posenc_f32_to_f16(float value);
POSENC_API float posenc_f16_to_f32(uint16_t bits);
POSENC_API uint16_t posenc_f32_to_bf16(float value);
POSENC_API float posenc_bf16_to_f32(uint16_t bits);
/* Round a float32 to the nearest bf16 / f16 value and return it as float32
 * (what a value "looks like" after a trip through that dtype). */
POSENC_API float posenc_round_to_bf16(float value);
POSENC_API float posenc_round_to_f16(float value);

/* Pair layouts, shared by additive tables and rotations (K = number of pairs):
 *
 *   POSENC_LAYOUT_INTERLEAVED  pair k at channels (2k, 2k+1)
 *       additive table: [s0 c0 s1 c1 s2 c2 ...]     (PyTorch tutorial, keras, tatp22)
 *       rotation:       [x0 y0 x1 y1 ...]           (GPT-J, RoFormer, Meta LLaMA, ggml NORMAL)
 *   POSENC_LAYOUT_HALF         pair k at channels (k, k+K)
 *       additive table: [s0 s1 ... s(K-1) c0 c1 ... c(K-1)]  (tensor2tensor, fairseq, Marian)
 *       rotation:       [x0 x1 ... y0 y1 ...]       (GPT-NeoX, HF Llama rotate_half, ggml NEOX)
 */
typedef enum posenc_layout {
    POSENC_LAYOUT_INTERLEAVED = 0,
    POSENC_LAYOUT_HALF = 1
} posenc_layout;

/* How a computation is carried out. */
typedef enum posenc_mode {
    /* Angles formed in extended precision (x87 long double or better) with full
     * range reduction; every float32 output is within 1 ULP of the correctly
     * rounded true value for integer positions up to 2^24. */
    POSENC_MODE_PRECISE = 0,
    /* Reproduces PyTorch's float32 arithmetic step by step (float32 frequencies,
     * float32 angle p*w, float32 sin/cos) so that outputs match PyTorch-based
     * peers. The angle's rounding error grows like p * 2^-24, so at long
     * positions this mode is *less* accurate, exactly as the peer is. */
    POSENC_MODE_TORCH_COMPAT = 1
} posenc_mode;

/* A list of positions: either a range start, start+1, ..., start+count-1
 * (ids == NULL and values == NULL), or explicit integer ids, or explicit
 * real-valued positions (interpolated positions). At most one of ids/values. */
typedef struct posenc_positions {
    size_t count;
    int64_t start;
    const int64_t *ids;
    const double *values;
} posenc_positions;

/* Convenience constructors (no allocation). */
POSENC_API posenc_positions posenc_positions_range(int64_t start, size_t count);
POSENC_API posenc_positions posenc_positions_ids(const int64_t *ids, size_t count);
POSENC_API posenc_positions posenc_positions_values(const double *values, size_t count);

/* ========================================================================
 * 2. Sinusoidal tables ("Attention Is All You Need") and naive baselines
 * ======================================================================== */

/* Frequency conventions for K pairs:
 *   VASWANI  w_k = base^(-2k/d)              PyTorch tutorial, keras, HF, the paper
 *   T2T      w_k = base^(-k/(floor(d/2)-1))  tensor2tensor, fairseq (last w is exactly 1/base)
 * d is the encoded dim (dim, or dim+1 under POSENC_ODD_ROUND_UP). */
typedef enum posenc_freqs {
    POSENC_FREQS_VASWANI = 0,
    POSENC_FREQS_T2T = 1
} posenc_freqs;

/* What to do with an odd dim. */
typedef enum posenc_odd_policy {
    POSENC_ODD_ERROR = 0,   /* reject (PyTorch tutorial behaviour) */
    POSENC_ODD_PAD = 1,     /* floor(d/2) pairs plus one trailing zero channel (t2t, fairseq) */
    POSENC_ODD_ROUND_UP = 2 /* compute with d+1 channels, keep the first d (tatp22) */
} posenc_odd_policy;

/* Kinds of 1-D additive table. */
typedef enum posenc_table_kind {
    POSENC_KIND_SINUSOIDAL = 0,
    POSENC_KIND_INDEX = 1,     /* every channel holds the position value p (article baseline) */
    POSENC_KIND_NORMALIZED = 2 /* every channel holds p/(len-1); 0 when len == 1 */
} posenc_table_kind;

typedef struct posenc_sinusoid_params {
    int32_t dim;             /* channels per position, >= 1 */
    double base;             /* > 0, != 1, finite. Default 10000 */
    posenc_freqs freqs;      /* default VASWANI */
    posenc_layout layout;    /* default INTERLEAVED */
    posenc_odd_policy odd;   /* default ERROR */
    posenc_mode mode;        /* default PRECISE */
} posenc_sinusoid_params;

/* Fill *params with the defaults above for the given dim. */
POSENC_API void posenc_sinusoid_params_default(posenc_sinusoid_params *params, int32_t dim);

/* Check params; on success *out_pairs receives the number of sin/cos pairs K. */
POSENC_API posenc_status posenc_sinusoid_check(const posenc_sinusoid_params *params,
                                               int32_t *out_pairs, posenc_error *err);

/* The K angular frequencies w_k (radians per position) in double precision,
 * computed in extended precision and rounded once. out_count >= K. */
POSENC_API posenc_status posenc_sinusoid_frequencies_f64(const posenc_sinusoid_params *params,
                                                         double *out, size_t out_count,
                                                         posenc_error *err);

/* Number of elements of a [positions->count x dim] table (checks overflow). */
POSENC_API posenc_status posenc_table_count(size_t positions, int32_t dim, size_t *out_count,
                                            posenc_error *err);

/* Sinusoidal table, out is [positions->count][params->dim], row-major.
 * Row r holds the encoding of position positions[r]:
 *   interleaved: out[r][2k] = sin(p w_k), out[r][2k+1] = cos(p w_k)
 *   half:        out[r][k]  = sin(p w_k), out[r][K+k]  = cos(p w_k)
 * Integer positions must be >= 0 and < 2^53; real positions finite and >= 0.
 * out_count must be >= count*dim (else POSENC_ERR_BUFFER_TOO_SMALL). */
POSENC_API posenc_status posenc_sinusoid_table_f32(const posenc_sinusoid_params *params,
                                                   const posenc_positions *positions,
                                                   float *out, size_t out_count,
                                                   posenc_error *err);
POSENC_API posenc_status posenc_sinusoid_table_f64(const posenc_sinusoid_params *params,
                                                   const posenc_positions *positions,
                                                   double *out, size_t out_count,
                                                   posenc_error *err);
/* Any storage dtype: F32, F64, F16 (IEEE half bits) or BF16 (bfloat16 bits).
 * Values are computed as for _f64 then rounded once to the target dtype
 * (in TORCH_COMPAT mode: computed in float32, then rounded, as torch's .half()). */
POSENC_API posenc_status posenc_sinusoid_table(const posenc_sinusoid_params *params,
                                               const posenc_positions *positions,
                                               posenc_dtype dtype, void *out,
                                               size_t out_count, posenc_error *err);

/* Baseline tables (first source article, section 2): INDEX puts the position
 * value p in every channel; NORMALIZED puts p/(len-1) (len = positions->count,
 * so the last row is 1). Shapes and dtypes as posenc_sinusoid_table. */
POSENC_API posenc_status posenc_baseline_table(posenc_table_kind kind, int32_t dim,
                                               const posenc_positions *positions,
                                               posenc_dtype dtype, void *out,
                                               size_t out_count, posenc_error *err);

/* ========================================================================
 * 3. Arrays and files (.npy, CSV)
 * ======================================================================== */

#define POSENC_MAX_DIMS 8
/* Default ceiling on the bytes of any array a reader allocates or a CLI
 * command produces: 4 GiB. Callers pass their own limit (0 = this default). */
#define POSENC_DEFAULT_MAX_BYTES ((size_t)4 << 30)

/* An n-dimensional C-order array that owns its data (free with posenc_array_free). */
typedef struct posenc_array {
    posenc_dtype dtype;
    int ndim;                       /* 0..POSENC_MAX_DIMS */
    size_t shape[POSENC_MAX_DIMS];
    size_t count;                   /* product of shape (1 for ndim == 0) */
    void *data;                     /* count * posenc_dtype_size(dtype) bytes */
} posenc_array;

/* Allocate a zeroed array. max_bytes 0 means POSENC_DEFAULT_MAX_BYTES. */
POSENC_API posenc_status posenc_array_create(posenc_array *array, posenc_dtype dtype, int ndim,
                                             const size_t *shape, size_t max_bytes,
                                             posenc_error *err);
/* Release data and zero the struct; NULL and already-freed arrays are fine. */
POSENC_API void posenc_array_free(posenc_array *array);
/* Convert any numeric array to a new float64 array (for analysis). */
POSENC_API posenc_status posenc_array_to_f64(const posenc_array *in, posenc_array *out,
                                             posenc_error *err);

/* Parse a complete .npy file image (format 1.0, 2.0 or 3.0; dtypes <f4 <f8
 * <f2 <i4 <i8 |u1 <u2; C order). Fortran order, big-endian data, object or
 * structured dtypes give POSENC_ERR_UNSUPPORTED; a bad magic, header or a
 * data size that disagrees with the shape gives POSENC_ERR_FORMAT; a shape
 * claiming more than max_bytes (0 = default) gives POSENC_ERR_LIMIT before
 * anything is allocated. */
POSENC_API posenc_status posenc_npy_parse(const void *bytes, size_t size, size_t max_bytes,
                                          posenc_array *out, posenc_error *err);
/* Read and parse a .npy file. */
POSENC_API posenc_status posenc_npy_read(const char *path, size_t max_bytes, posenc_array *out,
                                         posenc_error *err);
/* Write an array as .npy (format 1.0, or 2.0 when the header needs it).
 * BF16 arrays are written as <u2 (numpy has no bfloat16). The file is written
 * to a temporary name in the same folder and renamed, so a failure never
 * leaves a partial file and an existing file is replaced only on success. */
POSENC_API posenc_status posenc_npy_write(const char *path, const posenc_array *array,
                                          posenc_error *err);
/* Write a 1-D or 2-D array as CSV (one row per line, %.9g for f32, %.17g for
 * f64; f16/bf16 printed as their float value). Atomic as posenc_npy_write. */
POSENC_API posenc_status posenc_csv_write(const char *path, const posenc_array *array,
                                          posenc_error *err);
/* Read a whole file into memory (for parsers): *out_bytes from malloc, free()
 * it. Files larger than max_bytes (0 = default) give POSENC_ERR_LIMIT. */
POSENC_API posenc_status posenc_file_read_all(const char *path, size_t max_bytes, void **out_bytes,
                                              size_t *out_size, posenc_error *err);
/* Write `count` buffers to path atomically (temporary file, fsync, rename). */
POSENC_API posenc_status posenc_file_write_atomic(const char *path, const void *const *parts,
                                                  const size_t *part_sizes, size_t count,
                                                  posenc_error *err);

/* ========================================================================
 * 4. RoPE
 * ======================================================================== */
/* @@ROPE@@ */

/* ========================================================================
 * 5. Relative encodings and attention biases
 * ======================================================================== */
/* @@BIAS@@ */

/* ========================================================================
 * 6. Learned tables, multi-dimensional tables, composition, reference attention
 * ======================================================================== */
/* @@LEARNED@@ */

/* ========================================================================
 * 7. Analysis: health, precision audit, diff
 * ======================================================================== */
/* @@ANALYSIS@@ */

/* ========================================================================
 * 8. Model configuration import (HF config.json, GGUF header)
 * ======================================================================== */
/* @@CONFIG@@ */

/* ========================================================================
 * 9. Kernels, threads and dispatch
 * ======================================================================== */
/* Every fast kernel exists in three builds of the same arithmetic: portable
 * scalar C, AVX2 (+FMA) and AVX-512 (F, BW, DQ, VL). The best one the
 * CPU supports is probed at run time (cpuid); nothing is compiled with
 * -march=native. Paths produce the same bits for a given call unless a
 * function's comment says otherwise, and results never depend on the number
 * of threads (work is split on fixed block boundaries, each block starting
 * from exactly computed values).
 *
 * Execution options are passed explicitly per call (there is no global
 * setting). Two environment variables, read on every call that leaves the
 * choice open, let tests and benchmarks steer existing entry points:
 *   POSENC_KERNEL_PATH = scalar | avx2 | avx512 | auto   (path == AUTO only)
 *   POSENC_THREADS     = N >= 1                          (threads == 0 only)
 * An explicit thread count is an upper bound (small outputs use fewer threads,
 * at least 256 KiB each); POSENC_THREADS splits every job into exactly N parts
 * where the job allows it, so tests exercise the split even on small tables. */
typedef enum posenc_kernel_path {
    POSENC_PATH_AUTO = 0,   /* best supported, or POSENC_KERNEL_PATH when set */
    POSENC_PATH_SCALAR = 1, /* portable C, always available */
    POSENC_PATH_AVX2 = 2,   /* x86-64 AVX2 + FMA */
    POSENC_PATH_AVX512 = 3  /* x86-64 AVX-512 F/BW/DQ/VL */
} posenc_kernel_path;

#define POSENC_MAX_THREADS 256

/* How one call executes. Initialise with posenc_exec_default. */
typedef struct posenc_exec {
    int32_t threads;         /* worker threads 1..POSENC_MAX_THREADS; 0 = POSENC_THREADS if
                                set, else the machine's online cores. Small jobs use fewer. */
    posenc_kernel_path path; /* AUTO, or force one path (POSENC_ERR_UNSUPPORTED if the CPU
                                or this build lacks it) */
} posenc_exec;

/* threads = 0, path = AUTO. */
POSENC_API void posenc_exec_default(posenc_exec *exec);
/* "auto", "scalar", "avx2", "avx512"; "?" if unknown. */
POSENC_API const char *posenc_kernel_path_name(posenc_kernel_path path);
/* Parse one of the names above into *out (POSENC_ERR_INVALID_ARGUMENT names the text). */
POSENC_API posenc_status posenc_kernel_path_parse(const char *name, posenc_kernel_path *out,
                                                  posenc_error *err);
/* 1 if this CPU and build can run `path` (AUTO and SCALAR always), else 0. */
POSENC_API int posenc_kernel_path_supported(posenc_kernel_path path);
/* Online CPU cores (>= 1). */
POSENC_API int32_t posenc_cpu_count(void);
/* Resolve exec (NULL = defaults) against the environment and the CPU: *out gets a
 * concrete path and thread count >= 1. Errors: unknown path or bad POSENC_KERNEL_PATH /
 * POSENC_THREADS text (INVALID_ARGUMENT), forced path not supported (UNSUPPORTED),
 * threads outside 0..POSENC_MAX_THREADS (INVALID_ARGUMENT). */
POSENC_API posenc_status posenc_exec_resolve(const posenc_exec *exec, posenc_exec *out,
                                             posenc_error *err);

/* posenc_sinusoid_table with explicit execution options (exec may be NULL).
 * Precise mode on a contiguous range of positions runs the fast path: rows are cut
 * in blocks of 2048, each block starts from sinl/cosl of its first position, an
 * anchor every 64 rows is advanced by an extended-precision rotation, and the rows
 * between anchors by a double-precision rotation (vectorized across pairs, same
 * operations on every path, so every path gives the same bits). The recurrence adds
 * < 64 * 2.3e-16 absolute to the double values, below half an f32 ULP for any
 * |value| > 2^-20. Explicit positions and torch-compat mode are evaluated directly
 * per element (threaded). Large f32/f64 outputs are written with streaming stores. */
POSENC_API posenc_status posenc_sinusoid_table_exec(const posenc_sinusoid_params *params,
                                                    const posenc_positions *positions,
                                                    posenc_dtype dtype, void *out,
                                                    size_t out_count, const posenc_exec *exec,
                                                    posenc_error *err);
/* @@KERNELS@@ */

#ifdef __cplusplus
}
#endif
#endif /* POSENC_H */
