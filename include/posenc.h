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
 *     state (two CPU facts, the F16C flag and the online core count, are read
 *     once and cached), so every function is safe to call from several threads
 *     at once.
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
 *
 * Names: posenc_<family>_<what>[_<dtype>][_exec].
 *   <family> is the thing made or acted on (sinusoid, rope, alibi, t5, shaw,
 *     learned, grid, compose, array, npy, health, signal, diff, precision,
 *     sinusoid_fit, model_config, threadpool, exec, ...); <what> is the
 *     product or the verb (table, bias, apply, read, analyze, detect, check).
 *   _<dtype> (_f32, _f64, _i32, ...) names the element type of the caller's
 *     buffers when the dtype is not a parameter.
 *   _exec marks the variant of a function that takes a posenc_exec (threads,
 *     kernel path, pool); it comes last: posenc_alibi_bias_f32 and
 *     posenc_alibi_bias_f32_exec compute the same bits.
 *   A result struct posenc_<type> that the library fills with allocations is
 *     released by posenc_<type>_free (free accepts NULL and zeroed structs);
 *     parameter structs are filled by posenc_<family>_params_default or
 *     _options_default.
 *   The dtype helpers of family 1 are named by what they convert
 *   (posenc_f32_to_f16, posenc_round_to_bf16).
 *
 * Stable and experimental (before 1.0): a declaration on a line after
 * POSENC_EXPERIMENTAL, and the structs only it uses, may change or go in any
 * 0.x release (the soname carries major.minor, so such a change is a new
 * soname); everything else is the stable API, changed only with a deprecation
 * first. Define POSENC_WARN_EXPERIMENTAL before including this header to get a
 * compiler warning at each use of an experimental function.
 */
#ifndef POSENC_H
#define POSENC_H

#include <signal.h> /* sig_atomic_t */
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

/* Tags an experimental function (see the top of this file). */
#if defined(POSENC_WARN_EXPERIMENTAL) && defined(__GNUC__)
#define POSENC_EXPERIMENTAL __attribute__((deprecated("experimental posenc API: may change in any 0.x release")))
#else
#define POSENC_EXPERIMENTAL
#endif

#define POSENC_VERSION_MAJOR 0
#define POSENC_VERSION_MINOR 3
#define POSENC_VERSION_PATCH 1
#define POSENC_VERSION_STRING "0.3.1"

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
    POSENC_ERR_NULL_POINTER = 10,    /* a required pointer argument is NULL */
    POSENC_ERR_NONFINITE = 11        /* a result would be NaN or infinite (overflow of the dtype) */
} posenc_status;

#define POSENC_ERROR_MESSAGE_SIZE 256

/* Per-call error detail, owned by the caller (usually on its stack). */
typedef struct posenc_error {
    posenc_status status;
    char message[POSENC_ERROR_MESSAGE_SIZE];
} posenc_error;

/* Static, generic text for a status code ("invalid argument", ...); never NULL. */
POSENC_API const char *posenc_strerror(posenc_status status);

/* Which elementwise exp/sin/cos POSENC_MODE_TORCH_COMPAT reproduces in this
 * process: *name = "mkl-vml" when the environment variable POSENC_TORCH_MKL
 * names a shared library exporting MKL's vmsExp/vmsSin/vmsCos/vmdExp/vmdSin/
 * vmdCos/vmsLn (vmsLn: DeBERTa's log buckets, section 5.3b; a torch built with MKL: torch's lib/libtorch_cpu.so, or libmkl_rt.so.2
 * of the mkl wheel), loaded once per process; *name = "sleef" when it is unset
 * (a torch built without MKL). *library = that path, or NULL. Either pointer
 * may be NULL. Errors: POSENC_ERR_UNSUPPORTED when POSENC_TORCH_MKL is set but
 * cannot be loaded or lacks a function (the message names the path): torch-compat
 * work would then run SLEEF's math, not the torch asked for, so callers that
 * set the variable check here first (the posenc tool does, for --torch-compat). */
POSENC_API posenc_status posenc_torch_math(const char **name, const char **library, posenc_error *err);

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
     * peers. pow runs as torch's CPU kernels run it (SLEEF's powf in the
     * kernel build torch picks on this CPU: AVX2, DEFAULT, or AVX512 when
     * ATEN_CPU_CAPABILITY=avx512; that variable is read as torch reads it, and
     * torch's vector blocks, docs/sinusoidal.md). exp/sin/cos depend on how
     * torch was built: a torch with Intel MKL (every x86-64 wheel on PyPI,
     * torch 2.13 included) runs them through MKL's VML, which posenc calls
     * when the environment variable POSENC_TORCH_MKL names a library that
     * exports it (torch's own lib/libtorch_cpu.so, or the mkl wheel's
     * libmkl_rt.so.2); unset, posenc computes them as a torch without MKL
     * does (SLEEF: Debian's python3-torch, aarch64 wheels). The two differ by
     * 1 ULP in about 1-2% of values (posenc_torch_math says which one this
     * process runs). The angle's rounding error grows like p * 2^-24, so at long
     * positions this mode is *less* accurate, exactly as the peer is. */
    POSENC_MODE_TORCH_COMPAT = 1,
    /* RoPE only (other families refuse it): ggml's CPU RoPE bit for bit
     * (ggml_rope_ext, modes NORMAL = POSENC_LAYOUT_INTERLEAVED and NEOX =
     * POSENC_LAYOUT_HALF; checked against ggml d99724f2 = v0.21.0, built with
     * FMA). Every step in float32: theta_scale = powf(base, -2/R); the angle
     * of pair k at position p is the chain (float)p * theta_scale * ... (k
     * rounded multiplications, not a power); divided by the pair's freq
     * factor; YaRN ramp between floorf/ceilf correction dims, mixed with one
     * fused multiply-add; cosf/sinf (libm) times mscale; the rotation
     * fma(x0, c, -(x1 s)), fma(x0, s, x1 c). Section 4 says how each scaling
     * maps onto ggml's knobs. Multi-axis RoPE refuses it. */
    POSENC_MODE_GGML = 2
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

/* Allocate a zeroed array. max_bytes 0 means POSENC_DEFAULT_MAX_BYTES. Arrays
 * of 4 MiB or more are 2 MiB-aligned and advised MADV_HUGEPAGE (Linux), which
 * cuts first-touch page faults ~20x on VMs where they are slow. */
POSENC_API posenc_status posenc_array_create(posenc_array *array, posenc_dtype dtype, int ndim,
                                             const size_t *shape, size_t max_bytes,
                                             posenc_error *err);
/* Release data and zero the struct; NULL and already-freed arrays are fine. */
POSENC_API void posenc_array_free(posenc_array *array);
/* Convert any numeric array to a new float64 array (for analysis). */
POSENC_API posenc_status posenc_array_to_f64(const posenc_array *in, posenc_array *out,
                                             posenc_error *err);

/* POSENC_OK when every element is finite (integer arrays always are); else
 * POSENC_ERR_NONFINITE whose message names `what`, the first bad cell (its
 * row and column for rank >= 2) and its value, e.g.
 * "rotated q: cell [3, 17] is inf". */
POSENC_API posenc_status posenc_array_check_finite(const posenc_array *array, const char *what,
                                                   posenc_error *err);

/* Parse a complete .npy file image (format 1.0, 2.0 or 3.0; dtypes <f4 <f8
 * <f2 <i4 <i8 |u1 <u2; C order). Fortran order, big-endian data, object or
 * structured dtypes give POSENC_ERR_UNSUPPORTED; a bad magic, header or a
 * data size that disagrees with the shape gives POSENC_ERR_FORMAT; a shape
 * claiming more than max_bytes (0 = default) gives POSENC_ERR_LIMIT before
 * anything is allocated. */
POSENC_API posenc_status posenc_npy_parse(const void *bytes, size_t size, size_t max_bytes,
                                          posenc_array *out, posenc_error *err);
/* Read and parse a .npy file (mapped, so the data is copied once; a FIFO,
 * device or folder is refused with POSENC_ERR_IO without blocking). Parse
 * errors are prefixed with the path. */
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
 * it. Files larger than max_bytes (0 = default) give POSENC_ERR_LIMIT; anything
 * but a regular file gives POSENC_ERR_IO "is not a regular file" (checked with
 * fstat after an O_NONBLOCK open, so a FIFO never blocks). */
POSENC_EXPERIMENTAL
POSENC_API posenc_status posenc_file_read_all(const char *path, size_t max_bytes, void **out_bytes,
                                              size_t *out_size, posenc_error *err);
/* Write `count` buffers to path atomically (temporary file, fsync, rename). */
POSENC_EXPERIMENTAL
POSENC_API posenc_status posenc_file_write_atomic(const char *path, const void *const *parts,
                                                  const size_t *part_sizes, size_t count,
                                                  posenc_error *err);

/* How every writer above treats its output path:
 *  - Atomic: the bytes go to a file without a name (Linux O_TMPFILE in the
 *    output's folder) that is linked into place only when complete and synced,
 *    so a failure or any signal, SIGKILL included, leaves nothing behind and an
 *    existing output keeps its old bytes (replacing one, the finished file is
 *    linked under a temporary name and renamed over it in the next call).
 *    Where the file system lacks O_TMPFILE
 *    the file is named ".posenc-<12 random characters>.tmp" in the output's
 *    folder while it is written (the name stays within NAME_MAX for any legal
 *    output name); a program removes it on a signal with the two calls below. (The environment
 *    variable POSENC_NO_TMPFILE=1 forces this path, for tests.)
 *  - Permissions: a new file gets 0666 minus the umask; a replaced file keeps
 *    its permission bits (not its owner, when another user owned it).
 *  - Symbolic links: writing to a link writes through it, replacing the file it
 *    points to (atomically, in that file's folder); the link stays a link.
 *  - Hard links: the output is a new file renamed over the old name, so other
 *    names of the old file keep the old bytes (as cp --remove-destination or an
 *    editor's atomic save).
 *  - An existing output that is not a regular file (a device, FIFO or folder)
 *    is refused with POSENC_ERR_IO instead of being replaced. */
#define POSENC_TEMP_SLOTS 8
#define POSENC_TEMP_PATH_SIZE (4096 + 64)
/* Names of the temporary files being written right now, for a signal handler.
 * The library's only process-wide mutable state: a handler receives no
 * argument, so it must find the names without one. Slots are claimed with
 * atomic operations, so several threads may write at once. */
typedef struct posenc_temp_files {
    volatile sig_atomic_t state[POSENC_TEMP_SLOTS]; /* 2 = path[i] may exist and is to be removed */
    char path[POSENC_TEMP_SLOTS][POSENC_TEMP_PATH_SIZE];
} posenc_temp_files;
/* Register caller-owned storage (zeroed here) once, before any write and before
 * starting threads; NULL unregisters. The storage must outlive every write. */
POSENC_EXPERIMENTAL
POSENC_API void posenc_temp_files_register(posenc_temp_files *files);
/* Remove every temporary file recorded in files. Async-signal-safe (only
 * unlink(2)): call it from a SIGINT/SIGTERM/SIGHUP handler, then re-raise. */
POSENC_EXPERIMENTAL
POSENC_API void posenc_temp_files_remove(posenc_temp_files *files);

/* ========================================================================
 * 4. RoPE
 * ======================================================================== */
/* RoPE rotates each pair of channels (a, b) of a query or key vector by the
 * angle p * w_k (p = the token's position, w_k = the pair's inverse frequency):
 *     a' = a cos(p w_k) - b sin(p w_k)        b' = b cos(p w_k) + a sin(p w_k)
 * so that q(m) . k(n) depends on m - n only. R = rotary_dim channels (R <= D =
 * head_dim, R even) are rotated, K = R/2 pairs; channels R..D-1 pass through
 * untouched (bit-identical). Which channels form pair k is the layout
 * (posenc_layout above), shown for head_dim 8 with rotary_dim 4
 * (c = rotated as the first member of a pair, s = second, 0 = pass-through):
 *
 *   POSENC_LAYOUT_INTERLEAVED  [cscs0000]  pair k = (2k, 2k+1)
 *       GPT-J, RoFormer, Meta's original LLaMA, DeepSeek-V3, ggml NORMAL (mode 0)
 *   POSENC_LAYOUT_HALF         [ccss0000]  pair k = (k, k + R/2)
 *       GPT-NeoX, HF Llama/Mistral/Qwen (rotate_half), ggml NEOX (mode 2)
 *
 * The two are the same math up to a channel permutation of the weights:
 * llama.cpp's HF->GGUF converter permutes W_q/W_k rows per head (head 8:
 * [0,4,1,5,2,6,3,7]) so that INTERLEAVED on the converted model equals HF's
 * HALF on the original. Feeding one layout's weights to the other is the most
 * common RoPE bug: outputs stay finite and plausible, but attention is wrong.
 *
 * Frequencies (HF transformers' ROPE_INIT_FUNCTIONS semantics, R = rotary_dim,
 * default w_k = base^(-2k/R), k = 0..K-1):
 *   NONE      w_k; attention factor 1.
 *   LINEAR    w_k / factor (position interpolation); attention 1.
 *   NTK       static NTK-aware: base' = base * factor^(R/(R-2)); attention 1.
 *   DYNAMIC   dynamic NTK, as a pure function of seq_len (no hidden cache):
 *             L = max(seq_len, max_position), base' = base *
 *             (factor*L/max_position - (factor-1))^(R/(R-2)); attention 1.
 *             seq_len <= max_position gives the plain frequencies.
 *   YARN      ramp between w_k (pairs below `low`) and w_k/factor (pairs above
 *             `high`), low/high = R ln(L0/(2 pi beta)) / (2 ln base) for
 *             beta_fast/beta_slow (floored/ceiled when truncate), L0 =
 *             original_max_position. Attention factor: attention_factor if
 *             > 0; else if mscale > 0 and mscale_all_dim > 0:
 *             m(factor, mscale)/m(factor, mscale_all_dim); else m(factor, 1),
 *             m(s, c) = 1 if s <= 1 else 0.1 c ln(s) + 1.
 *             ggml/llama.cpp: freq_scale = 1/factor, ext_factor = 1 (0 turns
 *             the ramp off = LINEAR), n_ctx_orig = L0, same beta_fast/slow;
 *             ggml multiplies cos/sin by attn_factor * (1 + 0.1 ln factor), so
 *             our attention factor A corresponds to ggml attn_factor =
 *             A / (1 + 0.1 ln factor) (llama.cpp passes exactly that).
 *   LONGROPE  w_k / ext_k, ext = long_factors or short_factors (K entries
 *             each), chosen by `longrope_select`: BY_SEQ_LEN takes long iff
 *             seq_len > original_max_position (HF's rule, applied to the whole
 *             sequence), or pinned SHORT / LONG. Attention: attention_factor
 *             if > 0, else 1 if factor <= 1, else sqrt(1 + ln factor / ln L0).
 *             (Phi-3 configs: factor = max_position / original_max_position;
 *             the config importer derives it.)
 *   LLAMA3    Llama 3.1: wavelength l_k = 2 pi / w_k; l_k < L0/high_freq_factor:
 *             kept; l_k > L0/low_freq_factor: w_k / factor; between: blend
 *             (1-s) w_k/factor + s w_k, s = (L0/l_k - low)/(high - low).
 *
 * Precision. POSENC_MODE_PRECISE: frequencies in long double (the double
 * inv_freq output is rounded once from them); angles p * w_k in long double,
 * reduced mod 2 pi in long double, then cos/sin in double: f32 cos/sin within
 * 1 ULP of the correctly rounded value of the stated formula for positions
 * below 2^24 (tests/py/test_rope_mpmath.py measures 0 ULP on 4096 values).
 * POSENC_MODE_TORCH_COMPAT: HF's float32 steps (inv = 1/f32pow(base,
 * f32(2k)/f32(R)), scheme arithmetic in float32, angle = f32(w) * f32(p),
 * cos/sin in torch's own kernel blocks over HF's [positions x R] table, times
 * the f32 attention factor): HF's inv_freq and cos/sin tables bit for bit
 * (measured against torch at 4096 positions, docs/rope.md); rotated outputs
 * bit for bit when R/2 is a multiple of torch's vector width (8; 16 with
 * ATEN_CPU_CAPABILITY=avx512), else within 4 * 2^-24 * (|x_k| + |x_k+R/2|).
 * Its angle error grows like p * 2^-24 rad.
 * POSENC_MODE_GGML: ggml/llama.cpp's CPU bits (posenc_mode). The scalings map
 * onto ggml_rope_ext's knobs as llama.cpp sets them: freq_base = (float)base
 * (NTK: the NTK base'); LINEAR and YARN: freq_scale = 1.0f / (float)factor;
 * YARN: ext_factor 1, n_ctx_orig = L0, beta_fast/slow, and attn_factor 1 when
 * the attention factor is derived (ggml's own 1 + 0.1 logf(factor) then gives
 * it), else A / that magnitude; LLAMA3: freq_factors = llama.cpp's rope_freqs
 * tensor as its converter computes it (float32 torch steps from HF's float32
 * inv_freq: 1, factor, or 1 / ((1 - smooth) / factor + smooth)), LONGROPE:
 * freq_factors = the chosen list, attn_factor = A.
 * DYNAMIC and YaRN truncate = 0 have no ggml form and are refused. The
 * frequencies reported (posenc_rope_frequencies) are ggml's float32 angles at
 * position 1; the attention factor is ggml's mscale. Apply's inverse is
 * ggml's backward (sin negated) divided by mscale^2; shift uses mscale 1. */

typedef enum posenc_rope_scaling {
    POSENC_ROPE_NONE = 0,     /* HF "default" */
    POSENC_ROPE_LINEAR = 1,
    POSENC_ROPE_NTK = 2,
    POSENC_ROPE_DYNAMIC = 3,
    POSENC_ROPE_YARN = 4,
    POSENC_ROPE_LONGROPE = 5,
    POSENC_ROPE_LLAMA3 = 6
} posenc_rope_scaling;

/* Which LongRoPE factor list is used. */
typedef enum posenc_rope_longrope_select {
    POSENC_LONGROPE_BY_SEQ_LEN = 0, /* long iff seq_len > original_max_position (HF) */
    POSENC_LONGROPE_SHORT = 1,
    POSENC_LONGROPE_LONG = 2
} posenc_rope_longrope_select;

/* Every RoPE knob. Initialise with posenc_rope_params_default, then set what
 * differs. Fields a scheme does not use are ignored by it. */
typedef struct posenc_rope_params {
    int32_t head_dim;              /* D, channels per head, >= 2 */
    int32_t rotary_dim;            /* R, even, <= D; 0 = (int)(D * partial_rotary_factor) */
    double partial_rotary_factor;  /* in (0, 1], used when rotary_dim == 0; default 1 */
    double base;                   /* rope_theta, finite, > 1. Default 10000 */
    posenc_rope_scaling scaling;   /* default NONE */
    double factor;                 /* scaling factor s, finite, > 0; >= 1 for NTK, DYNAMIC,
                                      YARN, LLAMA3. Default 1 */
    int64_t original_max_position; /* L0, the trained context: required by YARN, LLAMA3 and
                                      LONGROPE; 0 = unset */
    int64_t max_position;          /* max_position_embeddings: required by DYNAMIC; 0 = unset */
    double beta_fast, beta_slow;   /* YARN rotation counts, beta_fast >= beta_slow > 0.
                                      Defaults 32, 1 */
    double mscale, mscale_all_dim; /* YARN (DeepSeek) magnitude knobs; 0 = unset */
    double attention_factor;       /* explicit cos/sin magnitude (YARN, LONGROPE); 0 = derive */
    int truncate;                  /* YARN: floor/ceil low/high (HF default 1) */
    double low_freq_factor;        /* LLAMA3, default 1 */
    double high_freq_factor;       /* LLAMA3, default 4; must be > low_freq_factor */
    const double *short_factors;   /* LONGROPE: R/2 entries each (caller-owned) */
    const double *long_factors;
    size_t factors_count;          /* entries in each list */
    posenc_rope_longrope_select longrope_select; /* default BY_SEQ_LEN */
    posenc_mode mode;              /* PRECISE (default), TORCH_COMPAT or GGML */
} posenc_rope_params;

/* Defaults: rotary_dim 0 (= whole head), partial 1, base 10000, NONE, factor
 * 1, beta 32/1, truncate 1, low/high freq factors 1/4, PRECISE. */
POSENC_API void posenc_rope_params_default(posenc_rope_params *params, int32_t head_dim);

/* Validate params (messages name the bad value) and return the effective
 * rotary dim R (may be NULL). */
POSENC_API posenc_status posenc_rope_check(const posenc_rope_params *params, int32_t *out_rotary_dim,
                                           posenc_error *err);

/* Scheme names: "none", "linear", "ntk", "dynamic", "yarn", "longrope",
 * "llama3" (parse also accepts HF's "default"); NULL/"?" when unknown. */
POSENC_API const char *posenc_rope_scaling_name(posenc_rope_scaling scaling);
POSENC_API posenc_status posenc_rope_scaling_parse(const char *name, posenc_rope_scaling *out,
                                                   posenc_error *err);

/* The R/2 inverse frequencies (radians per position) and the attention factor
 * (cos/sin magnitude; may be NULL) for a sequence of seq_len tokens (used by
 * DYNAMIC and LONGROPE BY_SEQ_LEN; 0 = "not known" = the trained length).
 * In TORCH_COMPAT mode the values are HF's float32 numbers widened to double. */
POSENC_API posenc_status posenc_rope_frequencies(const posenc_rope_params *params, int64_t seq_len,
                                                 double *inv_freq, size_t out_count,
                                                 double *attention_factor, posenc_error *err);

/* cos/sin tables, each [positions->count][R/2] row-major (one value per pair;
 * HF's [T, R] duplicated layout is cos[t][k mod R/2]). Positions (range, ids or
 * real values) must lie in [0, 2^53). fold_attention != 0
 * multiplies both by the attention factor (HF's tables); 0 leaves them unit
 * magnitude (then apply the factor yourself, e.g. to the softmax scale).
 * out_count is the capacity of each of cos and sin. Speed: in PRECISE mode a
 * range of positions runs the threaded recurrence of posenc_rope_apply_exec
 * (section 9; the f32 table then holds exactly the cos/sin that apply uses, the
 * f64 table comes from a double-double rotation per row, ~1e-25 off before
 * rounding); ids, real positions and TORCH_COMPAT are evaluated per element. */
POSENC_API posenc_status posenc_rope_table_f32(const posenc_rope_params *params, int64_t seq_len,
                                               const posenc_positions *positions, int fold_attention,
                                               float *cos_out, float *sin_out, size_t out_count,
                                               posenc_error *err);
POSENC_API posenc_status posenc_rope_table_f64(const posenc_rope_params *params, int64_t seq_len,
                                               const posenc_positions *positions, int fold_attention,
                                               double *cos_out, double *sin_out, size_t out_count,
                                               posenc_error *err);

/* Where the vectors to rotate live: token t, head h starts at element
 * t * row_stride + h * head_stride of the buffer (strides in elements, so a Q
 * or K slice inside a fused QKV row works: row_stride = (Hq + 2 Hkv) * D).
 * Views whose heads or tokens would overlap are refused. Contiguous [T][H][D]:
 * row_stride = H*D, head_stride = D. The apply functions also take x_count,
 * the elements available from x, and refuse views that reach past it. */
typedef struct posenc_rope_view {
    size_t tokens;
    size_t heads;
    size_t row_stride;
    size_t head_stride;
} posenc_rope_view;

/* Contiguous [tokens][heads][head_dim]. */
POSENC_API posenc_rope_view posenc_rope_view_contiguous(size_t tokens, size_t heads, int32_t head_dim);

/* Rotate x in place: token t uses position positions[t] (int64, any sign:
 * packed sequences, left padding and cache offsets are the caller's choice;
 * NULL = 0, 1, ..., tokens-1). cos/sin per (token, pair) are computed once in
 * double (PRECISE) or HF's float32 (TORCH_COMPAT), multiplied by the
 * attention factor, rounded to f32 and reused across heads (PRECISE: the
 * correctly rounded f32 for integer positions with |p w| < 2^40, values next
 * to a rounding midpoint included, so a token's cos/sin are the same whatever
 * call or token range computes them; docs/rope.md); the rotation is
 * computed in f32 as a*c - b*s, b*c + a*s (HF's order), then stored in the
 * data's dtype (f16/bf16 round to nearest even). inverse != 0 rotates by the
 * opposite angle (and divides by the attention factor), undoing a forward
 * call up to rounding. Channels R..D-1 are not touched.
 * Non-finite results: when a rotated value is inf or NaN once stored in the
 * data's dtype (its input already held inf/NaN, or the rotation overflowed:
 * f16 beyond 65504, f32/bf16 beyond ~3.4e38, e.g. from a large attention
 * factor), the call returns POSENC_ERR_NONFINITE and err names the first such
 * value in (token, head, channel) order, its position, the value and why:
 *   "rotated value at token 3 (position 3), head 0, channel 17 is inf: the
 *    rotation scaled by the attention factor 100000 overflows f16 (largest
 *    finite 65504)"
 *   "... is nan: the input of token 3 already holds inf or NaN"
 * The rotation still runs to the end: x then holds every rotated value, the
 * non-finite ones included, bit for bit what it holds after a successful
 * call (channels R..D-1 untouched and not checked); in a token whose input
 * held inf/NaN every NaN result is one positive quiet NaN (f32 0x7fc00000,
 * f16 0x7e00, bf16 0x7fc0), so the bytes are the same on every path. There is no flag to allow
 * non-finite results: a caller that accepts them treats this status as
 * success. Shift and multi-axis apply (below) and posenc_rope_apply_exec
 * report the same way. The check rides on values the kernels hold in
 * registers (same bits, same speed on AVX2/AVX-512; see docs/benchmarks.md);
 * only the error path reads the first bad token back. */
POSENC_API posenc_status posenc_rope_apply_f32(const posenc_rope_params *params, int64_t seq_len,
                                               posenc_layout layout, const posenc_rope_view *view,
                                               const int64_t *positions, int inverse, float *x, size_t x_count,
                                               posenc_error *err);
/* Same on IEEE half / bfloat16 bits (computed in f32). */
POSENC_API posenc_status posenc_rope_apply_f16(const posenc_rope_params *params, int64_t seq_len,
                                               posenc_layout layout, const posenc_rope_view *view,
                                               const int64_t *positions, int inverse, uint16_t *x, size_t x_count,
                                               posenc_error *err);
POSENC_API posenc_status posenc_rope_apply_bf16(const posenc_rope_params *params, int64_t seq_len,
                                                posenc_layout layout, const posenc_rope_view *view,
                                                const int64_t *positions, int inverse, uint16_t *x, size_t x_count,
                                                posenc_error *err);

/* Re-rotate cached keys by delta positions (KV-cache shift after evicting or
 * inserting tokens): rotate(p) then shift(delta) equals rotate(p + delta)
 * within rounding. The attention factor is NOT applied again (a pure
 * rotation). Equivalent to llama.cpp's K-shift. */
POSENC_API posenc_status posenc_rope_shift_f32(const posenc_rope_params *params, int64_t seq_len,
                                               posenc_layout layout, const posenc_rope_view *view,
                                               const int64_t *deltas, float *x, size_t x_count,
                                               posenc_error *err);

/* Multi-axis RoPE. Each pair k of the R/2 pairs takes its position from one
 * axis (positions are [axes][tokens]):
 *   POSENC_MROPE_SECTIONS     contiguous sections (Qwen2-VL / Qwen2.5-VL M-RoPE,
 *       ggml MROPE): pairs [0,s0) axis 0 (t), [s0,s0+s1) axis 1 (h), ... The
 *       frequency is the global w_k of the 1-D RoPE (not restarted).
 *   POSENC_MROPE_INTERLEAVED  Qwen3-VL (HF): axis 1 for k%3==1 and k < 3*s1,
 *       axis 2 for k%3==2 and k < 3*s2, axis 0 otherwise. Global w_k.
 *       (ggml IMROPE differs for leftover pairs: it sends them to a 4th stream.)
 *   POSENC_MROPE_AXIAL        2-D/N-D axial (Qwen2-VL vision tower, ggml VISION):
 *       section a is a 1-D RoPE of its own over 2*s_a channels: pair j of the
 *       section has w = base^(-2j/(2 s_a)) (frequencies restart per section;
 *       the scheme in params applies within each section).
 * sections: `axes` counts s_0..s_{axes-1} (axes <= 4), sum == R/2.
 * With every axis holding the same position, SECTIONS and INTERLEAVED equal 1-D RoPE.
 * POSENC_MODE_GGML reproduces ggml_rope_multi (CPU): SECTIONS = ggml MROPE (pairs past
 * s0+s1+s2 read a 4th stream, e), INTERLEAVED = ggml IMROPE (h where k%3==1 and k < 3 s1,
 * w where k%3==2 and k < 3 s2, t where k%3==0 and k < 3 s0, else the 4th stream e: give 4
 * axes when such pairs exist, else INVALID_ARGUMENT naming the first); one float32 theta
 * chain per stream, layout HALF only (ggml rotates NEOX pairs); AXIAL (ggml VISION) is
 * UNSUPPORTED. Tested bit for bit against a reference written from ggml's CPU code
 * (tests/test_rope_ggml_mrope.c). */
typedef enum posenc_mrope_kind {
    POSENC_MROPE_SECTIONS = 0,
    POSENC_MROPE_INTERLEAVED = 1,
    POSENC_MROPE_AXIAL = 2
} posenc_mrope_kind;

#define POSENC_MROPE_MAX_AXES 4
typedef struct posenc_mrope_sections {
    posenc_mrope_kind kind;
    int32_t axes;
    int32_t sizes[POSENC_MROPE_MAX_AXES];
} posenc_mrope_sections;

/* The axis (0..axes-1) and inverse frequency of each of the R/2 pairs. */
POSENC_EXPERIMENTAL
POSENC_API posenc_status posenc_mrope_pair_map(const posenc_rope_params *params,
                                               const posenc_mrope_sections *sections,
                                               int32_t *axis_of_pair, double *inv_freq,
                                               size_t out_count, posenc_error *err);
/* Rotate x in place; positions is [sections->axes][view->tokens] row-major. */
POSENC_EXPERIMENTAL
POSENC_API posenc_status posenc_mrope_apply_f32(const posenc_rope_params *params,
                                                const posenc_mrope_sections *sections,
                                                posenc_layout layout, const posenc_rope_view *view,
                                                const int64_t *positions, int inverse, float *x, size_t x_count,
                                                posenc_error *err);

/* One piece of a multimodal sequence: `length` text tokens (grid_* ignored),
 * or an image/video grid of grid_t x grid_h x grid_w tokens (already divided
 * by the spatial merge size; length ignored). */
typedef struct posenc_mrope_segment {
    int is_grid;
    int64_t length;
    int64_t grid_t, grid_h, grid_w;
} posenc_mrope_segment;

/* Qwen2-VL get_rope_index position ids, out is [3][total] (t, h, w rows):
 * text token i of a run starting at s gets (s+i, s+i, s+i); a grid starting
 * at s gets (s+ti, s+hi, s+wi) in t-major, then h, then w order; the next
 * segment starts at 1 + the largest id so far. *out_total = tokens (may be
 * NULL); out_count >= 3 * total (query with out == NULL, out_count 0). */
POSENC_EXPERIMENTAL
POSENC_API posenc_status posenc_mrope_position_ids(const posenc_mrope_segment *segments,
                                                   size_t segment_count, int64_t *out,
                                                   size_t out_count, size_t *out_total,
                                                   posenc_error *err);

/* ---- 4b. Which RoPE is this? Identify a cos/sin cache (rope_identify.c) ----
 * Reads a cache as engines keep it and fits, from the values alone, the
 * layout, rotary dim R, position offset, magnitude, base, scaling scheme and
 * parameters, the grid the values lie on (f32 / bf16 / f16) and the
 * arithmetic that produced them, each arithmetic with its residual in ULPs of
 * that grid (the table regenerated by posenc_rope_table_f32 in that mode,
 * rounded to the grid, compared value by value; for a VLLM-layout cache the
 * float32 steps run torch's cos/sin over vLLM's [T, R/2] freqs, as its
 * _compute_cos_sin_cache does, not HF's [T, R] emb: the vector blocks differ
 * when R/2 is not a multiple of torch's vector width). */
typedef enum posenc_rope_cache_layout {
    POSENC_CACHE_AUTO = 0,  /* decide from the values (input only) */
    POSENC_CACHE_HF = 1,    /* [T, R]: pair k's value at k and k + R/2 (HF emb.cos() / emb.sin()) */
    POSENC_CACHE_VLLM = 2,  /* [T, R] = cat(cos [T, R/2], sin [T, R/2]) (vLLM cos_sin_cache) */
    POSENC_CACHE_GGML = 3,  /* [T, R]: (cos, sin) of pair k at 2k, 2k + 1 (ggml's per-token cache) */
    POSENC_CACHE_PLAIN = 4  /* [T, R/2]: one value per pair */
} posenc_rope_cache_layout;

/* The arithmetic a cache was computed in (index into the residual arrays). */
typedef enum posenc_rope_arith {
    POSENC_ARITH_EXACT = 0,   /* correctly rounded (POSENC_MODE_PRECISE) */
    POSENC_ARITH_HF_F32 = 1,  /* HF transformers' float32 steps (POSENC_MODE_TORCH_COMPAT) */
    POSENC_ARITH_GGML_F32 = 2 /* ggml's float32 theta chain (POSENC_MODE_GGML) */
} posenc_rope_arith;
#define POSENC_ROPE_ARITHS 3

/* What the data cannot tell apart (posenc_rope_identity.ambiguous bits). */
#define POSENC_IDENTIFY_NTK_IS_BASE 1u    /* NTK / dynamic NTK (factor s, base b) is plain RoPE with
                                             base b * s^(R/(R-2)): only that base is fitted */
#define POSENC_IDENTIFY_YARN_CONTEXT 2u   /* YaRN: only the ramp ends low/high (pairs) are seen;
                                             they fix L0/beta_fast and L0/beta_slow to ranges
                                             (yarn_context_lo/hi give L0 for betas 32/1) */
#define POSENC_IDENTIFY_LLAMA3_BANDS 4u   /* Llama 3: only the band edges L0/low, L0/high (in
                                             wavelengths, ranges) are seen (L0 given for 1/4) */
#define POSENC_IDENTIFY_ARITH 8u          /* several arithmetics reproduce the cache equally */
#define POSENC_IDENTIFY_COS_OR_SIN 16u    /* one table without a partner: cos vs sin was decided
                                             by the offset fit (has_sin) */
#define POSENC_IDENTIFY_NOT_EXACT 32u     /* no candidate reproduces the values bit for bit */
#define POSENC_IDENTIFY_ONE_PAIR 64u      /* R = 2: pair 0's frequency is 1 whatever the base */
#define POSENC_IDENTIFY_LONGROPE_BASE 128u /* per-pair factors (LongRoPE-like, no switch): only
                                             w_k = base^(-2k/R) / f_k shows, so the base and a
                                             smooth factor list trade off; the base reported is the
                                             largest common RoPE base (1e4, 1e5, 5e5, 1e6, 5e6, ...)
                                             at or below the leading-pair fit (rising factors make
                                             that fit an upper bound) */

typedef struct posenc_rope_identity {
    posenc_rope_cache_layout layout;
    int has_cos, has_sin;        /* which functions the data held (a one-table input: one) */
    int32_t rotary_dim;          /* R */
    int64_t rows;                /* T positions */
    int64_t offset;              /* position of the first row (integer fit) */
    double magnitude;            /* fitted cos/sin magnitude (attention factor), median */
    posenc_rope_params params;   /* the best candidate: base, scaling and its parameters,
                                    attention_factor (0 = the scheme's own), mode = the best
                                    arithmetic; head_dim = R; factor lists point into
                                    pair_factor (LONGROPE-like profiles) */
    double *inv_freq;            /* [R/2] measured radians per position (phase slope) */
    double *pair_factor;         /* [R/2] w_k(base) / measured w_k: 1 = unscaled pair */
    double profile_residual;     /* max |relative| misfit of pair_factor to the scheme */
    int32_t ramp_first, ramp_last; /* pairs strictly between kept and scaled (-1: none) */
    double yarn_low, yarn_high;  /* YaRN ramp ends (pair units) */
    double yarn_context_lo, yarn_context_hi; /* L0 range consistent with betas 32 / 1 */
    double llama3_wave_lo, llama3_wave_hi;   /* Llama 3: edges L0/high, L0/low (wavelengths) */
    double ntk_base, ntk_factor; /* when the base is b0 * s^(R/(R-2)) for a round b0 and s (an NTK
                                    base change): b0 and s; 0 otherwise */
    posenc_dtype grid;           /* f32, bf16 or f16: the values all lie on this grid */
    posenc_rope_arith arith;     /* best arithmetic (= params.mode) */
    int64_t max_ulp[POSENC_ROPE_ARITHS];  /* per arithmetic: max |difference| over all values in
                                              ULPs of the grid at [0.5, 1) (f32 2^-24, bf16 2^-8,
                                              f16 2^-11: a cos/sin's ULP near its peak; the ULP
                                              of a value near 0 would count an angle error in
                                              thousands); -1 = refused (ggml: dynamic NTK) */
    size_t differ[POSENC_ROPE_ARITHS];    /* values that differ at all */
    size_t values;               /* values compared per arithmetic */
    unsigned ambiguous;          /* POSENC_IDENTIFY_* bits */
    /* LongRoPE's short/long switch inside one cache (vLLM's Phi-3 cache: short
     * factors for positions < L0, long ones from L0 on; HF instead takes the
     * long factors for every position of a sequence longer than L0). When the
     * phase slopes change at one row: params.scaling = LONGROPE,
     * short_factors = pair_factor (before), long_factors = long_pair_factor
     * (after), original_max_position = switch_position, and the residuals
     * regenerate each side with its own list. */
    int64_t switch_position;     /* row offset + first row read with the long factors; 0 = no switch */
    int64_t long_offset;         /* position that row holds: switch_position (one run of positions,
                                    an engine switching per position) or 0 (vLLM's long_short_cache =
                                    cat(short cache [L0 rows], long cache from position 0)) */
    double *long_pair_factor;    /* [R/2] w_k(base) / measured w_k after the switch (NULL: none) */
    double long_magnitude;       /* magnitude after the switch (0: none) */
    int32_t passthrough;         /* trailing channels holding cos 1 (sin 0) at every row: the
                                    pass-through channels of a partial rotary kept in a
                                    full-width cache (the fit covers the first W - passthrough) */
} posenc_rope_identity;

/* Identify `table` ([T, W] or with leading size-1 dims; f32, f64, f16 or
 * bf16): cos or sin of one layout above, or an HF / plain cos table with its
 * sin partner in `sin_table` (same shape; NULL when absent). layout: AUTO or
 * the layout to assume. T >= 3. Fills *out (free with
 * posenc_rope_identity_free). Errors: INVALID_ARGUMENT naming a shape, dtype
 * or value that no RoPE cache has (a non-finite value and its [row, column],
 * fewer than 3 rows, no pair that turns over the rows, frequencies that do not
 * fall with the pair index, a sin table of another shape, cos and sin that are
 * no one rotation (cos^2 + sin^2 not one magnitude per row), and any table the
 * best fit leaves a value of further off than the grid and float32 angles
 * allow: 4 grid units + 8 f32 ULPs of the value's angle, scaled by the
 * magnitude; pairs that never turn excepted). A success is a fit that explains
 * every value that closely. Speed: a [131072, 128]
 * cache takes 3-5 s on one core (CPU 2.9-3.4 s), all three arithmetics included
 * (docs/rope.md; posenc bench --only identify). */
POSENC_EXPERIMENTAL
POSENC_API posenc_status posenc_rope_identify(const posenc_array *table, const posenc_array *sin_table,
                                              posenc_rope_cache_layout layout, posenc_rope_identity *out,
                                              posenc_error *err);
POSENC_EXPERIMENTAL
POSENC_API void posenc_rope_identity_free(posenc_rope_identity *identity);
/* How far a cache is from the table `params` prescribe (in params->mode's
 * arithmetic) at positions offset, offset + 1, ...: max |difference| in the
 * residual units above and the count of values that differ at all, after
 * rounding the prescribed table to the cache's grid. layout must be stated
 * (not AUTO); table_is_sin says a one-function table holds sin. The rotary
 * dim of params must be the cache's (else INVALID_ARGUMENT naming both). */
POSENC_EXPERIMENTAL
POSENC_API posenc_status posenc_rope_cache_residual(const posenc_array *table, const posenc_array *sin_table,
                                                    posenc_rope_cache_layout layout, int table_is_sin,
                                                    int64_t offset, const posenc_rope_params *params,
                                                    int64_t *max_ulp, size_t *differ, posenc_error *err);
/* Each pair's max |difference| (residual units above) between the cache that
 * produced `identity` (same arrays) and the table its fit regenerates in
 * `arith` (LongRoPE switch: each side with its own list): pair_max_ulp[k] for
 * k < R/2 (pair_count >= R/2, else BUFFER_TOO_SMALL). For pictures of where a
 * fit departs (posenc report --identify). */
POSENC_EXPERIMENTAL
POSENC_API posenc_status posenc_rope_identity_pair_residual(const posenc_array *table, const posenc_array *sin_table,
                                                            const posenc_rope_identity *identity,
                                                            posenc_rope_arith arith, int64_t *pair_max_ulp,
                                                            size_t pair_count, posenc_error *err);

/* Where a cache departs from a model's config (posenc_rope_identity_compare).
 * Each departure is a kind with its numbers; the tool and the Python package
 * word them (cli/identify_words.c, python/posenc/identify.py). Positions are
 * token positions, pairs are indices 0..R/2-1, frequencies are radians per
 * position, residuals are in the ULP units of posenc_rope_identity.max_ulp. */
typedef enum posenc_rope_departure_kind {
    POSENC_DEPART_ROTARY_DIM = 1,   /* the cache rotates got (R) channels, the config want
                                       (its rotary dim); config_position = its head_dim */
    POSENC_DEPART_DYNAMIC_LENGTH,   /* the config's dynamic NTK held at one sequence length
                                       (one table built for it): position = that length, got =
                                       the base at that length, max_ulp/differ = that table in
                                       HF's float32 arithmetic against the cache; want = the
                                       config's base, config_position = its max_position;
                                       reading 1 = vLLM's length (max_position x factor) */
    POSENC_DEPART_OFFSET,           /* row 0 holds position `position`, not 0 */
    POSENC_DEPART_MAGNITUDE,        /* magnitude got where the config's scheme gives want;
                                       reading: posenc_rope_magnitude_reading; alt[0..2] =
                                       YaRN's m(s, 1), m(s, mscale), m(s, mscale_all_dim) with
                                       m(s, M) = 0.1 M ln s + 1 (DeepSeek readings only);
                                       position = the first row's position */
    POSENC_DEPART_LONGROPE_LIST,    /* which LongRoPE list the cache holds at every position:
                                       reading: posenc_rope_longrope_list_reading;
                                       config_position = the original context */
    POSENC_DEPART_SWITCH_SCHEME,    /* the cache switches short -> long factors at `position`,
                                       the config is not LongRoPE */
    POSENC_DEPART_SWITCH_AT,        /* the cache switches at `position`, the config's original
                                       context is config_position; reading 1 = the long rows
                                       restart at position 0 (vLLM's long_short_cache) */
    POSENC_DEPART_SWITCH_FACTORS,   /* side 0 short / 1 long list against the config's: first =
                                       the first pair departing by more than the fit's noise
                                       (-1: none), worst = largest relative departure */
    POSENC_DEPART_FREQUENCIES,      /* pairs first..last depart from the config's frequencies by
                                       up to worst (relative); side 1: the cache follows another
                                       scheme (identity.params), 0: the config's scheme with
                                       other parameters; shows_at = the first position where
                                       pair `first` is off by a grid step */
    POSENC_DEPART_IMROPE_STILL,     /* pairs first..last hold angle 0 at every row where the
                                       config turns them (got = pair first's frequency): the
                                       4th position stream of ggml's IMROPE; sections[0..2] =
                                       the config's t/h/w sections; differ = values that still
                                       differ with those pairs put back (ggml's float32) */
    POSENC_DEPART_IMROPE_RESIDUAL,  /* with those pairs put back, differ values still differ
                                       by up to max_ulp (follows IMROPE_STILL) */
    POSENC_DEPART_GRID,             /* the cache is rounded to the identity's 16-bit grid: the
                                       config's float32 table differs by up to max_ulp */
    POSENC_DEPART_UNEXPLAINED       /* frequencies and magnitude agree, no arithmetic
                                       reproduces every value: closest `arith`, differ values
                                       off by up to max_ulp */
} posenc_rope_departure_kind;

typedef enum posenc_rope_magnitude_reading {
    POSENC_MAGNITUDE_DROPPED = 0,        /* 1 where the config gives an attention factor */
    POSENC_MAGNITUDE_ADDED = 1,          /* a factor where the config gives 1 */
    POSENC_MAGNITUDE_OTHER = 2,          /* another factor */
    POSENC_MAGNITUDE_YARN_DEFAULT = 3,   /* DeepSeek config, cache m(s, 1): mscale keys ignored */
    POSENC_MAGNITUDE_MSCALE_ONLY = 4,    /* m(s, mscale): the division by m(s, mscale_all_dim) dropped */
    POSENC_MAGNITUDE_MSCALE_ALL_DIM = 5, /* m(s, mscale_all_dim): the softmax's share put on cos/sin */
    POSENC_MAGNITUDE_RATIO_DROPPED = 6,  /* 1: DeepSeek's mscale ratio dropped */
    POSENC_MAGNITUDE_MSCALE_NONE = 7     /* DeepSeek config, none of the readings above */
} posenc_rope_magnitude_reading;

typedef enum posenc_rope_longrope_list_reading {
    POSENC_LONGROPE_LIST_LONG_VLLM = 0,    /* long factors at every position, vLLM layout */
    POSENC_LONGROPE_LIST_LONG_CONTEXT = 1, /* long factors at every position (llama.cpp's n_ctx rule) */
    POSENC_LONGROPE_LIST_SHORT_PAST = 2    /* short factors past the original context */
} posenc_rope_longrope_list_reading;

typedef struct posenc_rope_departure {
    posenc_rope_departure_kind kind;
    int32_t first, last;        /* pairs (FREQUENCIES, IMROPE_*; SWITCH_FACTORS: first) */
    int32_t side;               /* SWITCH_FACTORS: 0 short, 1 long; FREQUENCIES: 1 = another scheme */
    int32_t reading;            /* MAGNITUDE, LONGROPE_LIST, SWITCH_AT, DYNAMIC_LENGTH: see above */
    int32_t sections[3];        /* IMROPE_STILL */
    int64_t position;           /* the cache's position (offset, switch, length, first row) */
    int64_t config_position;    /* the config's (original context, max_position, head_dim) */
    double got, want;           /* the cache's and the config's value of the departing quantity */
    double worst;               /* largest relative departure (FREQUENCIES, SWITCH_FACTORS) */
    double shows_at;            /* FREQUENCIES: first position where it shows */
    double alt[3];              /* MAGNITUDE: the mscale readings */
    int64_t max_ulp;            /* residual that goes with it (-1: none) */
    size_t differ;
    posenc_rope_arith arith;    /* UNEXPLAINED: the closest arithmetic */
} posenc_rope_departure;

#define POSENC_ROPE_MAX_DEPARTURES 16
typedef struct posenc_rope_comparison {
    int matches;                /* the config's table explains every value: bit for bit, or (a
                                   16-bit cache) to within one step of its grid */
    int bit_for_bit;            /* matches with no value differing */
    posenc_rope_arith arith;    /* when matches: the arithmetic (the first bit for bit one; else
                                   the one within a step with the fewest values differing) */
    int64_t max_ulp[POSENC_ROPE_ARITHS]; /* the config's table in each arithmetic against the cache
                                            (-1: that arithmetic cannot express it, or the rotary
                                            dims differ) */
    size_t differ[POSENC_ROPE_ARITHS];
    int32_t rotary_dim;         /* the config's R */
    double magnitude;           /* the config's attention factor */
    posenc_rope_params config;  /* the config's params as compared (LongRoPE without a switch:
                                   the list the cache holds; factor lists point into the
                                   caller's config) */
    int32_t departure_count;    /* entries in departures, in the order found */
    int32_t departures_dropped; /* departures found past POSENC_ROPE_MAX_DEPARTURES (not stored) */
    posenc_rope_departure departures[POSENC_ROPE_MAX_DEPARTURES];
} posenc_rope_comparison;

/* Compare the cache that produced `identity` (the same table / sin_table given
 * to posenc_rope_identify, or a rotation's cos/sin) against a model's RoPE
 * `config` (posenc_model_config.rope): the config's table in each arithmetic
 * regenerated and compared value by value, then each way the cache departs
 * (kinds above). imrope: the model's interleaved M-RoPE sections (kind
 * POSENC_MROPE_INTERLEAVED, sizes[0..2] = t/h/w) or NULL. Fills *out (no
 * allocation; nothing to free). Errors: INVALID_ARGUMENT for a config that
 * fails posenc_rope_check (its message), NULL arguments; OUT_OF_MEMORY. */
POSENC_EXPERIMENTAL
POSENC_API posenc_status posenc_rope_identity_compare(const posenc_rope_identity *identity,
                                                      const posenc_array *table, const posenc_array *sin_table,
                                                      const posenc_rope_params *config,
                                                      const posenc_mrope_sections *imrope,
                                                      posenc_rope_comparison *out, posenc_error *err);
/* "rotary_dim", "dynamic_length", "offset", "magnitude", "longrope_list",
 * "switch_scheme", "switch_at", "switch_factors", "frequencies", "imrope_still",
 * "imrope_residual", "grid", "unexplained" ("?" otherwise). */
POSENC_EXPERIMENTAL
POSENC_API const char *posenc_rope_departure_kind_name(posenc_rope_departure_kind kind);

/* Pairs that never turn (measured frequency 0) where the fit turns them, while
 * every other pair is the fit bit for bit in its best arithmetic: a position
 * stream held at 0 for those pairs (ggml's IMROPE takes the pairs past 3 x its
 * sections from a 4th stream, which llama.cpp sets to 0 for text tokens).
 * first..last: those pairs (-1: none, also for a fit with no value differing,
 * a LongRoPE switch or one pair); max_ulp: their largest residual (units of
 * posenc_rope_identity.max_ulp); fit_inv_freq: the fit's radians per
 * position at pair `first`. table / sin_table: the arrays that produced
 * `identity`. Errors: those of posenc_rope_identity_pair_residual. */
typedef struct posenc_rope_still_pairs {
    int32_t first, last;
    int64_t max_ulp;
    double fit_inv_freq;
} posenc_rope_still_pairs;
POSENC_EXPERIMENTAL
POSENC_API posenc_status posenc_rope_identity_still_pairs(const posenc_array *table, const posenc_array *sin_table,
                                                          const posenc_rope_identity *identity,
                                                          posenc_rope_still_pairs *out, posenc_error *err);

/* Rotated q with its input: x and y = R(x), [T, D] or [T, H, D] (same shape;
 * f32, f64, f16 or bf16), recover the cache that rotated it. Channels where y
 * equals x at every position and head pass through; the others must be one
 * contiguous run [rotary_offset, rotary_offset + R) (partial rotary: HF's
 * first R, DeepSeek's last R). Inside it the pairing is found: (2j, 2j + 1)
 * interleaved or (j, j + R/2) half, whichever keeps every pair's norm ratio
 * |y|/|x| constant. Per pair and position the 2-D rotation (c, s) with
 * y = [c -s; s c] x is the least-squares fit over the heads:
 *   c = sum(a a' + b b') / sum(a^2 + b^2),  s = sum(a b' - b a') / sum(a^2 + b^2),
 * rounded to f32 into cos/sin [T, R/2]: feed them to posenc_rope_identify as
 * POSENC_CACHE_PLAIN with sin. Errors (INVALID_ARGUMENT, named): shapes that
 * differ, a non-finite value and its index, fewer than 3 positions, no channel
 * that rotates, rotated channels that are not contiguous or odd in number, a
 * pair that is zero in every head at one position (the rotation cannot be
 * seen), and y that is no rotation of x (norm ratio spread above 1e-3 for
 * f32 / 3e-2 for 16-bit inputs, or heads that disagree by as much: the
 * first such pair and position is named). */
typedef struct posenc_rope_rotation {
    posenc_layout layout;      /* pairing inside the rotated channels */
    int32_t head_dim;          /* D: the last axis of x */
    int32_t rotary_offset;     /* first rotated channel */
    int32_t rotary_dim;        /* R: rotated channels; the other D - R pass through unchanged */
    int64_t rows;              /* T positions */
    int64_t heads;             /* H (1 for [T, D]) */
    double max_norm_misfit;    /* max relative departure of |y|/|x| from the median (a rotation: ~1e-7) */
    double max_head_misfit;    /* max least-squares residual over heads, relative to |y| */
    posenc_array cos, sin;     /* [T, R/2] f32, owned (posenc_rope_rotation_free) */
} posenc_rope_rotation;
POSENC_EXPERIMENTAL
POSENC_API posenc_status posenc_rope_rotation_cache(const posenc_array *x, const posenc_array *y,
                                                    posenc_rope_rotation *out, posenc_error *err);
POSENC_EXPERIMENTAL
POSENC_API void posenc_rope_rotation_free(posenc_rope_rotation *rotation);

/* "hf", "vllm", "ggml", "plain" ("auto"); "exact", "hf-f32", "ggml-f32". */
POSENC_API const char *posenc_rope_cache_layout_name(posenc_rope_cache_layout layout);
POSENC_API const char *posenc_rope_arith_name(posenc_rope_arith arith);

/* ---- 4c. 2-D RoPE over an image's patch grid (rope_2d.c) ----
 * Vision encoders that rotate each patch's query/key by its (row, column) in
 * the patch grid: every pair k of the D/2 pairs (HF rotate_half: channels k,
 * k + D/2; HF's cos/sin are cat(c, c) over D channels) takes its position
 * from one axis, row (0) or column (1), with an inverse frequency w_k:
 *   POSENC_ROPE2D_PIXTRAL  Pixtral (PixtralVisionRotaryEmbedding, transformers
 *       5.18): the 1-D frequencies of a D-channel RoPE, f_i = base^(-2i/D),
 *       i < D/2, alternate between the axes: pair k < D/4 is the row at
 *       f_{2k}, pair D/4 + j the column at f_{2j+1}.
 *   POSENC_ROPE2D_AXIAL    Qwen2-VL's vision tower and its copies
 *       (Qwen2VLVisionRotaryEmbedding over head_dim / 2): each axis is a 1-D
 *       RoPE of its own over D/2 channels, w = base^(-2j/(D/2)): pair k < D/4
 *       is the row at w_k, pair D/4 + j the column at w_j.
 *   POSENC_ROPE2D_DINOV3   DINOv3 (DINOv3ViTRopePositionEmbedding, eval: no
 *       coordinate augmentation): the axial frequencies w_j = base^(-4j/D),
 *       j < D/4, on each patch centre's normalized coordinate instead of its
 *       index: row i of `rows` sits at y = (2i + 1) / rows - 1 in [-1, 1]
 *       (columns alike), angle = 2 pi y w_j. posenc_rope2d_pair_map reports
 *       w_j (no 2 pi); positions are still the (row, column) indices.
 *       head_dim must give torch.arange(0, 1, 4 / D) D/4 entries (D = 196
 *       gives 50: refused); merge 1, window 0 only.
 * The patch order is the runtime's token order inside one image of `rows` x
 * `cols` patches: merge 1 = raster (token t = r * cols + c); merge m > 1 =
 * Qwen2-VL's spatial-merge windows: m x m blocks in raster order, the patches
 * of a block in raster order inside it (rows and cols multiples of m);
 * window w > 0 (Qwen2.5-VL's window attention, get_vision_window_index) then
 * moves whole m x m blocks into window order: windows of w x w blocks in
 * raster order (those of the last row / column cut short), the blocks of a
 * window in raster order (the runtime permutes its finished cos/sin rows so;
 * the values do not change). Every kind rotates all D channels, magnitude 1.
 * Modes: PRECISE (long double frequencies and angles, f32 within 1 ULP of the
 * exact value) and TORCH_COMPAT (HF's float32 steps: inv_freq = 1 / f32pow(
 * base, f32(2i)/f32(n)) (DINOv3: the exponent f32(j * (4 / D)), as
 * torch.arange), angle = f32(position) * inv, cos/sin by torch's
 * vector kernel over the tensor HF runs them on: Pixtral's [N, 2, D/2],
 * Qwen2-VL's [N, 2, D/4], DINOv3's [N, D] (tile(2) of [N, 2 * D/4]; the
 * angle f32(f32(y * f32(2 pi)) * w), y by float32 steps), N = rows * cols,
 * the image alone in the sequence);
 * GGML is refused (POSENC_ERR_UNSUPPORTED: ggml's vision RoPE is another
 * arithmetic). */
typedef enum posenc_rope2d_kind {
    POSENC_ROPE2D_PIXTRAL = 0,
    POSENC_ROPE2D_AXIAL = 1,
    POSENC_ROPE2D_DINOV3 = 2
} posenc_rope2d_kind;

typedef struct posenc_rope2d_params {
    posenc_rope2d_kind kind;
    int32_t head_dim;  /* D: channels of the head, all rotated; a multiple of 4, 4..65536 */
    double base;       /* rope_theta, finite, > 1 */
    int32_t merge;     /* patch order: 1 raster; m in 2..1024: m x m windows (spatial_merge_size) */
    posenc_mode mode;  /* PRECISE (default) or TORCH_COMPAT */
    int32_t window;    /* 0: none; w in 1..2^20: blocks in windows of w x w blocks (Qwen2.5-VL) */
} posenc_rope2d_params;

/* kind PIXTRAL, base 10000, merge 1, window 0, PRECISE. */
POSENC_EXPERIMENTAL
POSENC_API void posenc_rope2d_params_default(posenc_rope2d_params *params, int32_t head_dim);
/* "pixtral", "axial", "dinov3"; "?" if unknown. */
POSENC_EXPERIMENTAL
POSENC_API const char *posenc_rope2d_kind_name(posenc_rope2d_kind kind);
/* Validate params; POSENC_ERR_INVALID_ARGUMENT names the bad value (an unknown
 * kind, head_dim not a multiple of 4 or out of range, base not finite or
 * <= 1, merge or window out of range; DINOv3: a head_dim whose arange is not
 * D/4 long, merge or window set), POSENC_ERR_UNSUPPORTED for GGML mode. */
POSENC_EXPERIMENTAL
POSENC_API posenc_status posenc_rope2d_check(const posenc_rope2d_params *params, posenc_error *err);
/* The axis (0 row, 1 column) and inverse frequency (radians per patch; in
 * TORCH_COMPAT HF's float32 value) of each of the D/2 pairs; out_count >= D/2.
 * Either output may be NULL. */
POSENC_EXPERIMENTAL
POSENC_API posenc_status posenc_rope2d_pair_map(const posenc_rope2d_params *params, int32_t *axis_of_pair,
                                                double *inv_freq, size_t out_count, posenc_error *err);
/* The (row, column) of each token of a rows x cols grid in the runtime's
 * order: out is [rows * cols][2]; out_count >= 2 * rows * cols. rows and
 * cols in 1..2^20, multiples of merge (else INVALID_ARGUMENT naming them). */
POSENC_EXPERIMENTAL
POSENC_API posenc_status posenc_rope2d_positions(const posenc_rope2d_params *params, int64_t rows, int64_t cols,
                                                 int64_t *out, size_t out_count, posenc_error *err);
/* cos/sin tables, each [rows * cols][D/2] row-major, token order as
 * posenc_rope2d_positions: cos[t][k] = cos(pos_axis(k)(t) * w_k) (DINOv3:
 * cos(2 pi y w_k), y the patch centre's coordinate; HF's [N, D] table is
 * cos[t][k mod D/2]). out_count (the capacity of each) >=
 * rows * cols * D/2 (else POSENC_ERR_BUFFER_TOO_SMALL, as for the other two).
 * Errors as above, POSENC_ERR_NULL_POINTER for a NULL
 * pointer, POSENC_ERR_OUT_OF_MEMORY. */
POSENC_EXPERIMENTAL
POSENC_API posenc_status posenc_rope2d_table_f32(const posenc_rope2d_params *params, int64_t rows, int64_t cols,
                                                 float *cos_out, float *sin_out, size_t out_count,
                                                 posenc_error *err);

/* ========================================================================
 * 5. Relative encodings and attention biases
 * ======================================================================== */
/* ---- 5.1 ALiBi (Press et al.; BLOOM, MPT, ggml/llama.cpp) -------------------
 *
 * Each head h adds slope_h x (distance) to its attention logits; no embedding.
 * Slopes, for a model with T heads (the schedule) and bias strength B
 * (max_bias; 8 in the paper, BLOOM, MPT and every ALiBi GGUF):
 *
 *   c = 2^floor(log2 T)                      (largest power of two <= T)
 *   slope_h = 2^(-B (h+1) / c)               for h <  c
 *   slope_h = 2^(-B (2(h-c)+1) / (2c))       for h >= c   (odd steps of the 2c schedule)
 *
 *   T=8 : 1/2 1/4 ... 1/256       T=6 : 1/4 1/16 1/64 1/256 | 2^-1 2^-3
 *
 * The original code, BLOOM's build_alibi_tensor, MPT's gen_slopes and ggml's
 * soft_max_ext all produce this schedule (tests/test_alibi.c checks them).
 * Tensor parallelism: a rank holding heads [head_offset, head_offset+heads)
 * of a T-head model asks for exactly that slice.
 *
 * Bias forms, query position i, key position j, slope m:
 *
 *   CAUSAL     m (j - i)    <= 0 for visible keys (j <= i); the entries with
 *                           j > i are positive and MUST be masked by the caller
 *                           (this function writes no -inf).
 *   SYMMETRIC  -m |i - j|   ggml/llama.cpp's form, usable without a causal mask.
 *
 * Equivalent variants: the original code and BLOOM add m j, MPT and keras-hub
 * add m (j - (L-1)); per query row these differ from m (j - i) by a constant,
 * and softmax(z + c) = softmax(z), so all agree under causal masking (they do
 * NOT agree with SYMMETRIC for bidirectional attention). BLOOM's m j is the
 * CAUSAL form with query position 0 and key positions from
 * posenc_alibi_key_positions_from_mask.
 *
 *          keys j ->             CAUSAL (m = 1/2, i = 3)     SYMMETRIC
 *   q i=3  [0 1 2 3 4]           [-1.5 -1 -0.5 0 | +0.5]     [-1.5 -1 -0.5 0 -0.5]
 */
typedef enum posenc_alibi_form {
    POSENC_ALIBI_CAUSAL = 0,   /* m (j - i); mask j > i yourself */
    POSENC_ALIBI_SYMMETRIC = 1 /* -m |i - j| */
} posenc_alibi_form;

/* Slopes of heads [head_offset, head_offset + heads) of a total_heads-head
 * model (total_heads 0 means total_heads = heads, head_offset must then be 0).
 * max_bias is B above: finite and > 0 (ggml's "0 disables ALiBi" is a switch,
 * not a schedule). out[0 .. heads-1]; out_count >= heads.
 *   POSENC_MODE_PRECISE: exponents are exact rationals and 2^x is evaluated in
 *     long double and rounded once, so slopes are correctly rounded (exact when
 *     B (h+1)/c is an integer, e.g. every head of a power-of-two model, B = 8).
 *   POSENC_MODE_TORCH_COMPAT: BLOOM's build_alibi_tensor bit for bit: a float32
 *     base f32(2^(-B/c)) (extras f32(2^(-B/2c))) raised to integer powers with
 *     torch's float32 pow. The rounded base's error grows with the power k
 *     (<= k/2 + 1 ULP from PRECISE; measured 5 ULP at 20 heads, 6 at 32);
 *     ggml's powf schedule is the same construction and lands within 1 ULP
 *     of this mode.
 * Errors: heads <= 0, head_offset < 0, head_offset + heads > total_heads,
 * max_bias not finite or <= 0, out_count too small. */
POSENC_API posenc_status posenc_alibi_slopes_f64(int32_t heads, double max_bias,
                                                 int32_t head_offset, int32_t total_heads,
                                                 posenc_mode mode,
                                                 double *out, size_t out_count,
                                                 posenc_error *err);
POSENC_API posenc_status posenc_alibi_slopes_f32(int32_t heads, double max_bias,
                                                 int32_t head_offset, int32_t total_heads,
                                                 posenc_mode mode,
                                                 float *out, size_t out_count, posenc_error *err);

/* Dense bias out[h][a][b] (shape [heads, Lq, Lk], Lq = queries->count,
 * Lk = keys->count) for query position i = queries[a], key position
 * j = keys[b], slope m = slopes[h], in the given form. Positions may be any
 * posenc_positions (ranges give cached decoding: queries start at the cache
 * length). m (j - i) is formed in long double and rounded once to f32 (exact
 * product for |j - i| < 2^40). out_count >= heads * Lq * Lk.
 * Errors: heads <= 0, a slope not finite, bad positions, size overflow. */
POSENC_API posenc_status posenc_alibi_bias_f32(const float *slopes, int32_t heads,
                                               posenc_alibi_form form,
                                               const posenc_positions *queries,
                                               const posenc_positions *keys, float *out,
                                               size_t out_count, posenc_error *err);

/* One row of the bias without materializing [heads, Lq, Lk]: out[b] =
 * bias(slope, query_position, keys[b]) for b < keys->count, exactly the values
 * posenc_alibi_bias_f32 writes in that row. query_position must be finite. */
POSENC_API posenc_status posenc_alibi_bias_row_f32(float slope, posenc_alibi_form form,
                                                   double query_position,
                                                   const posenc_positions *keys, float *out,
                                                   size_t out_count, posenc_error *err);

/* BLOOM's key positions under padding: out[t] = (mask[0] + ... + mask[t] - 1) x mask[t],
 * so padded slots get 0 and the first real token 0, e.g. mask [0,0,1,1,1] ->
 * [0,0,0,1,2]. mask values must be 0 or 1. out_count >= len. */
POSENC_API posenc_status posenc_alibi_key_positions_from_mask(const int64_t *mask, size_t len,
                                                              int64_t *out, size_t out_count,
                                                              posenc_error *err);

/* ---- 5.2 T5 relative position buckets (HF T5Attention, mesh-tensorflow) -----
 *
 * r = key position - query position (memory - context). With nb = num_buckets
 * (halved when bidirectional: nb = num_buckets/2, keys after the query add nb):
 *
 *   bidirectional:  ret = (r > 0) ? nb : 0,  n = |r|
 *   unidirectional: ret = 0,                 n = max(-r, 0)   (future keys -> bucket 0)
 *   max_exact = nb/2
 *   bucket = ret + n                                                  if n < max_exact
 *          = ret + min(nb-1, max_exact + trunc(ln(n/max_exact) / ln(max_distance/max_exact)
 *                                              x (nb - max_exact)))   otherwise
 *
 *   r (32 buckets, 128) : -1000 -128 -64 -16 -8 -7 -1  0  1  7  8 16 64 128 1000
 *   bidirectional       :    15   15  14  10  8  7  1  0 17 23 24 26 30  31   31
 *   unidirectional      :    31   31  26  16  8  7  1  0  0  0  0  0  0   0    0
 *
 * The logarithmic branch is evaluated in float32 in HF's exact operation order
 * (f32(n)/max_exact, float32 log as PyTorch's CPU kernel computes it, divided
 * by f32(ln(max_distance/max_exact)), times nb - max_exact, truncated), so the
 * buckets are those of the reference, including at exact bucket boundaries.
 * Checked parameter domain (what we chose where the reference misbehaves):
 *   num_buckets >= 2 (>= 4 when bidirectional): below that max_exact is 0 and
 *     the reference divides by zero (NaN/garbage buckets);
 *   num_buckets even when bidirectional: HF halves an odd count with //, so
 *     bucket num_buckets-1 is never used -- we reject instead of silently
 *     wasting a table row;
 *   max_distance > max_exact (ln(max_distance/max_exact) <= 0 is a division by
 *     zero or reverses the buckets).
 * T5 itself: encoder bidirectional, decoder unidirectional, 32 buckets, 128. */
typedef struct posenc_t5_params {
    int32_t num_buckets;  /* default 32 */
    int32_t max_distance; /* default 128 */
    int32_t bidirectional; /* 1 (default, encoder) or 0 (decoder self-attention) */
} posenc_t5_params;

POSENC_API void posenc_t5_params_default(posenc_t5_params *params);
/* Check params against the domain above; messages name the bad value. */
POSENC_API posenc_status posenc_t5_check(const posenc_t5_params *params, posenc_error *err);
/* Bucket of one relative position r = key - query (any int64 with |r| < 2^62). */
POSENC_API posenc_status posenc_t5_bucket(const posenc_t5_params *params,
                                          int64_t relative_position, int32_t *out_bucket,
                                          posenc_error *err);
/* Bucket matrix out[a][b] = bucket(keys[b] - queries[a]), shape [Lq, Lk].
 * HF compute_bias(Lq, Lk): queries = range(0, Lq), keys = range(0, Lk);
 * cached decoding: queries = range(cache_len, Lq); cross-attention uses the
 * encoder's key positions. Positions must be integers (no real values).
 * out_count >= Lq * Lk. */
POSENC_API posenc_status posenc_t5_bucket_matrix_i32(const posenc_t5_params *params,
                                                     const posenc_positions *queries,
                                                     const posenc_positions *keys,
                                                     int32_t *out, size_t out_count,
                                                     posenc_error *err);
POSENC_API posenc_status posenc_t5_bucket_matrix_i64(const posenc_t5_params *params,
                                                     const posenc_positions *queries,
                                                     const posenc_positions *keys,
                                                     int64_t *out, size_t out_count,
                                                     posenc_error *err);
/* T5 bias: out[h][a][b] = table[bucket(keys[b] - queries[a])][h], i.e. the
 * [num_buckets, heads] nn.Embedding weight of layer 0 gathered to
 * [heads, Lq, Lk] (HF compute_bias without the leading batch axis).
 * out_count >= heads * Lq * Lk. T5 adds this to unscaled q.k logits. */
POSENC_API posenc_status posenc_t5_bias_f32(const posenc_t5_params *params, const float *table,
                                            int32_t heads, const posenc_positions *queries,
                                            const posenc_positions *keys, float *out,
                                            size_t out_count, posenc_error *err);

/* ---- 5.2b WavLM relative position buckets (HF WavLMAttention) ---------------
 *
 * WavLM's _relative_positions_bucket is T5's bidirectional bucket (5.2) with one
 * difference in the logarithmic branch: max_exact is added to the float32 value
 * BEFORE the truncation, (max_exact + x).to(long) with x = log(n / max_exact) /
 * ln(max_distance / max_exact) x (nb - max_exact) in float32, where T5 adds it
 * after (max_exact + trunc(x)). The float32 sum rounds, so where x lies within half
 * an ulp of (max_exact + x) below an integer, WavLM's bucket is one more than T5's:
 * num_buckets 1000, max_distance 100000: r = 11568 gives 910 (T5: 909), r = -54928
 * gives 475 (T5: 474) (transformers 5.18's own function). Always bidirectional; the
 * config keys are num_buckets (default 320) and max_bucket_distance (800).
 * r = key position - query position; the bucket reads row `bucket` of layer 0's
 * rel_attn_embed [num_buckets, heads]. params: posenc_t5_params with bidirectional 1
 * (0 is refused: WavLM has no causal form), the rest checked as posenc_t5_check.
 * Errors: as posenc_t5_bucket; POSENC_ERR_INVALID_ARGUMENT for bidirectional 0. */
POSENC_EXPERIMENTAL
POSENC_API posenc_status posenc_wavlm_bucket(const posenc_t5_params *params, int64_t relative_position,
                                             int32_t *out_bucket, posenc_error *err);
/* out[a][b] = posenc_wavlm_bucket(b - a) for a < query_len, b < key_len (row-major
 * [query_len, key_len], HF compute_bias(query_length, key_length) without a cache).
 * Errors: as posenc_wavlm_bucket; NULL out; POSENC_ERR_INVALID_ARGUMENT for query_len
 * or key_len outside 1..2^31; POSENC_ERR_SIZE_OVERFLOW when their product overflows
 * size_t; POSENC_ERR_BUFFER_TOO_SMALL when out_count < query_len x key_len. */
POSENC_EXPERIMENTAL
POSENC_API posenc_status posenc_wavlm_bucket_matrix_i64(const posenc_t5_params *params, int64_t query_len,
                                                        int64_t key_len, int64_t *out, size_t out_count,
                                                        posenc_error *err);

/* ---- 5.3 Shaw et al. relative positions (tensor2tensor) ---------------------
 *
 * idx[a][b] = clip(j - i, -k, k) + k  in [0, 2k],  i = queries[a], j = keys[b].
 * Rows of two learned [2k+1, depth] tables (a_K for keys, a_V for values) are
 * gathered by idx: logits_ij = q_i.k_j + q_i.a_K[idx_ij], and the output adds
 * sum_j w_ij a_V[idx_ij].
 *
 *   k=2, L=5 (queries = keys = 0..4)      k=2, Lq=2, Lk=5 (t2t: queries are the
 *   [[2 3 4 4 4]                          LAST Lq key positions, i.e. 3, 4)
 *    [1 2 3 4 4]                          [[0 0 1 2 3]
 *    [0 1 2 3 4]                           [0 0 0 1 2]]
 *    [0 0 1 2 3]
 *    [0 0 0 1 2]]
 *
 * For tensor2tensor's unequal lengths pass queries = range(Lk - Lq, Lq); its
 * decoding cache (one query at Lk - 1) is queries = range(Lk - 1, 1).
 * (HF BERT relative_key is the opposite sign without clipping; not this.) */

/* Index matrix [Lq, Lk] as above. clip >= 0 (clip 0 maps everything to 0);
 * integer positions only. out_count >= Lq * Lk. */
POSENC_API posenc_status posenc_shaw_relative_indices_i32(int32_t clip,
                                                          const posenc_positions *queries,
                                                          const posenc_positions *keys,
                                                          int32_t *out, size_t out_count,
                                                          posenc_error *err);
/* Gather rows of a [2*clip+1, depth] table (a_K or a_V): out[t][:] =
 * table[indices[t]][:] for t < count, out shape [count, depth]. Every index
 * must lie in [0, 2*clip] (POSENC_ERR_OUT_OF_RANGE names the first that does
 * not). out_count >= count * depth. */
POSENC_API posenc_status posenc_shaw_gather_f32(const int32_t *indices, size_t count,
                                                int32_t clip, const float *table,
                                                int32_t depth, float *out, size_t out_count,
                                                posenc_error *err);

/* ---- 5.3b DeBERTa relative positions (HF DisentangledSelfAttention) ---------
 *
 * DeBERTa (v1, "deberta") and DeBERTa-v2/v3 ("deberta-v2") add content-to-
 * position (c2p) and position-to-content (p2c) terms whose position vectors are
 * rows of one learned relative table rel_embeddings [2 * span, hidden] shared by
 * all layers. Note the sign: DeBERTa's relative position is r = query - key
 * (build_relative_position: q_ids[:, None] - k_ids[None, :]), the opposite of T5.
 *
 *   bucket(r) = r                                              if buckets == 0 or |r| <= mid
 *             = sign(r) x (ceil(ln(|r| / mid) / ln((max_rel - 1) / mid)
 *                            x (mid - 1)) + mid)               otherwise,   mid = buckets / 2
 *   span      = buckets if buckets > 0 else max_rel              (HF pos_ebd_size / att_span)
 *   c2p(r)    = clamp(bucket(r) + span, 0, 2 span - 1)    HF c2p_pos: query i, key j reads row c2p(i - j)
 *   p2c(r)    = clamp(-bucket(r) + span, 0, 2 span - 1)   HF p2c_pos: gathered key-major, so the p2c term of
 *                                                         query i, key j reads row p2c(j - i) (= c2p(i - j))
 *
 *   DeBERTa-v3 (buckets 256, max_rel 512):
 *     r       0    1  128  129  200  511  512  1000  65317  1000000     -1  -200  -1000
 *     bucket  0    1  128  129  169  255  256   317    700      951     -1  -169   -317
 *     c2p   256  257  384  385  425  511  511   511    511      511    255    87      0
 *     p2c   256  255  128  127   87    1    0     0      0        0    257   425    511
 *
 * The log branch (make_log_bucket_position) is evaluated in float32 in HF's
 * operation order: f32(|r|) / f32(mid), float32 log (SLEEF's 1-ULP logf, which
 * equals torch's on every distance tested), divided by float32 log of
 * f32((max_rel - 1) / mid), times f32(mid - 1), ceil, + f32(mid). The float32
 * log is torch's: MKL's vmsLn when POSENC_TORCH_MKL names a library exporting it
 * (as torch-compat, section 1: a torch with MKL, every x86-64 wheel), else
 * SLEEF's 1-ULP logf (a torch without MKL); the two differ by 1 ULP on about 1%
 * of inputs, which moves the v3 bucket at |r| = 403269 and 485369 (both past
 * the clamp: the c2p / p2c rows are the same). Exact real
 * arithmetic gives a bucket one higher at the distances where the true quotient
 * lies just above an integer and float32 rounds it down to it, or one lower where
 * float32 lands just above (v3: 33 distances up to 2^20, the first |r| = 65317:
 * 572.0000212 in real arithmetic, bucket 701; 572 in float32, bucket 700); posenc
 * returns the framework's value there (tests/test_deberta.c lists them).
 *
 * The rows are those of the FULL rel_embeddings table, for self-attention
 * (Lq = Lk = L, positions 0..L-1). DeBERTa v1 gathers from a slice of rows
 * [max_rel - s, max_rel + s), s = min(L, max_rel), at clamp(r + s, 0, 2s - 1):
 * the same full-table row as c2p above with buckets 0 (checked by the oracle).
 * Checked domain (what we chose where the reference misbehaves):
 *   max_relative_positions >= 1 and <= 2^30 (the config's value < 1 means
 *     max_position_embeddings: resolve it first);
 *   position_buckets 0 (none) or 2 .. 65536: 1 divides by mid = 0 (HF raises
 *     ZeroDivisionError); negative is the config's "none" (pass 0);
 *   with buckets: max_rel - 1 > mid (else ln((max_rel - 1)/mid) <= 0: a division
 *     by zero or buckets that shrink with distance);
 *   |r| < 2^62. */
typedef struct posenc_deberta_params {
    int32_t position_buckets;       /* 0: no log buckets (v1, v2 without position_buckets); v3: 256 */
    int32_t max_relative_positions; /* >= 1, already resolved; v3: 512 */
} posenc_deberta_params;

/* Check params against the domain above; messages name the bad value. */
POSENC_API posenc_status posenc_deberta_check(const posenc_deberta_params *params, posenc_error *err);
/* The attention span (half the relative table's rows): buckets if > 0, else
 * max_relative_positions; 0 for NULL. */
POSENC_API int32_t posenc_deberta_span(const posenc_deberta_params *params);
/* bucket(r), r = query - key, |r| < 2^62. */
POSENC_API posenc_status posenc_deberta_bucket(const posenc_deberta_params *params, int64_t relative_position,
                                               int64_t *out_bucket, posenc_error *err);
/* The rows of the full rel_embeddings table the c2p and p2c terms read for
 * r = query - key (either output pointer may be NULL, not both). */
POSENC_API posenc_status posenc_deberta_index(const posenc_deberta_params *params, int64_t relative_position,
                                              int32_t *out_c2p, int32_t *out_p2c, posenc_error *err);

typedef enum posenc_deberta_output {
    POSENC_DEBERTA_RELATIVE = 0, /* bucket(q - k): HF build_relative_position's matrix */
    POSENC_DEBERTA_C2P = 1,      /* c2p rows */
    POSENC_DEBERTA_P2C = 2       /* p2c(i - j): HF's p2c_pos tensor (the term of query i, key j reads [j][i]) */
} posenc_deberta_output;

/* Matrix out[i][j] of `what` for queries 0..query_len-1 and keys
 * 0..key_len-1 (r = i - j), shape [query_len, key_len], both lengths in
 * 1..2^31. out_count >= query_len * key_len. */
POSENC_API posenc_status posenc_deberta_matrix_i64(const posenc_deberta_params *params, posenc_deberta_output what,
                                                   int64_t query_len, int64_t key_len, int64_t *out,
                                                   size_t out_count, posenc_error *err);

/* ---- 5.3c Windowed 2D relative position bias (Swin, BEiT, SwinV2) ----------
 *
 * Attention inside a window of Wh x Ww patches (Swin: window_size; BEiT: the
 * whole patch grid) adds, for query patch i and key patch j (raster order in
 * the window, i = y * Ww + x), the learned row index(i, j) of a per-head table
 * of (2Wh - 1)(2Ww - 1) rows (one row per 2D offset):
 *
 *   index(i, j) = (yi - yj + Wh - 1) * (2Ww - 1) + (xi - xj + Ww - 1)
 *
 * (HF SwinRelativePositionBias._create_relative_position_index and copies;
 * Swin-V1's paper, eq. 4). BEiT's variant has a leading CLS token: the index
 * matrix is (Wh Ww + 1)^2, patch entries [1 + i][1 + j] as above, and three
 * more rows after the (2Wh - 1)(2Ww - 1) offsets, R = that count:
 *   [0][j >= 1] = R (cls to token), [i >= 1][0] = R + 1 (token to cls),
 *   [0][0] = R + 2 (cls to cls); the table has R + 3 rows
 * (BeitRelativePositionBias.generate_relative_position_index).
 * Wh, Ww: 1..POSENC_WINDOW_MAX (4096); errors name the bad side. */
#define POSENC_WINDOW_MAX 4096

/* Rows of the learned table: (2Wh - 1)(2Ww - 1), + 3 with cls != 0; 0 for a
 * side outside 1..POSENC_WINDOW_MAX. */
POSENC_API int64_t posenc_window_table_rows(int32_t window_height, int32_t window_width, int cls);

/* The index matrix above into out[N][N], row = query, column = key, N = Wh Ww
 * (+ 1 with cls: the CLS token first), int64 as torch builds it. out_count >=
 * N * N (else POSENC_ERR_BUFFER_TOO_SMALL naming both). Errors:
 * NULL_POINTER (out), INVALID_ARGUMENT for a side outside 1..4096 or N * N
 * over 2^31 (naming the side / the product). */
POSENC_API posenc_status posenc_window_relative_index_i64(int32_t window_height, int32_t window_width, int cls,
                                                          int64_t *out, size_t out_count, posenc_error *err);

/* LeViT's attention bias index (HF LevitAttention / LevitAttentionSubsample
 * attention_bias_idxs): queries on every stride-th patch of an R x R grid
 * (resolution_out = (R - 1) / stride + 1 a side; stride 1: every patch, the
 * plain attention), keys on every patch; query (a, b), key (c, d) read row
 *   |a stride - c| R + |b stride - d|
 * of a per-head table of R^2 rows (absolute offsets: left and right share a
 * row; HF numbers the offsets in first-seen order, which is this). out is
 * [resolution_out^2, R^2], row = query. Errors: INVALID_ARGUMENT for R outside
 * 1..POSENC_WINDOW_MAX, stride < 1 or > R, resolution_out != (R - 1) / stride
 * + 1, or a matrix over 2^31 entries (each naming the value);
 * BUFFER_TOO_SMALL; NULL_POINTER. */
POSENC_API posenc_status posenc_window_abs_index_i64(int32_t resolution, int32_t resolution_out, int32_t stride,
                                                     int64_t *out, size_t out_count, posenc_error *err);

/* SwinV2's continuous position bias input (Liu et al. 2022, "log-spaced
 * coordinates"; HF Swinv2SelfAttention.create_coords_table_and_index, also
 * Swin2SR): for each offset (dy, dx), dy in -(Wh-1)..Wh-1 (rows), dx in
 * -(Ww-1)..Ww-1 (columns), out[(dy + Wh - 1) * (2Ww - 1) + (dx + Ww - 1)][0..1]
 * = (f(dy, Ph), f(dx, Pw)), shape [(2Wh - 1)(2Ww - 1), 2], float32, where
 *   t = d / (P - 1)   with P = the pretrained side (pretrained_height /
 *                     _width > 0), else the window's own side when Wh > 1
 *                     (both sides then divide, as HF tests only Wh), else no
 *                     division;
 *   t = t * 8;  f = sign(t) * log2(|t| + 1) / 3   (log2(8) = 3)
 * every step rounded to float32 as torch does (float32 division, | | + 1 in
 * float32, log2 of that float correctly rounded, / 3 in float32). A learned
 * MLP maps each pair to the heads' bias rows, read at
 * posenc_window_relative_index_i64 (no cls). pretrained sides: 0 (none) or
 * 2..POSENC_WINDOW_MAX (1 would divide by zero: refused naming it); a
 * pretrained_height > 0 with pretrained_width 0 (or the reverse) is refused.
 * out_count >= 2 (2Wh - 1)(2Ww - 1). */
POSENC_API posenc_status posenc_window_log_coords_f32(int32_t window_height, int32_t window_width,
                                                      int32_t pretrained_height, int32_t pretrained_width,
                                                      float *out, size_t out_count, posenc_error *err);

/* ---- 5.4 Reference attention ------------------------------------------------
 *
 * Multi-head scaled dot-product attention, written for clarity, not speed: the
 * in-repo oracle for fast kernels and the place where each scheme is shown
 * acting where it acts.
 *
 *   inputs  q [heads, Lq, d], k [heads, Lk, d], v [heads, Lk, d]   (f32)
 *   output  out [heads, Lq, d], optional weights [heads, Lq, Lk]   (f32)
 *
 *   logits[h][a][b] = scale * dot(q'[h][a], k'[h][b])               (q', k': after RoPE)
 *                   + scale * dot(q[h][a], a_K[idx_ab])             (SHAW; t2t scales both)
 *                   + bias[h][a][b]                                 (ALIBI, T5, logit_bias)
 *   causal: key b is masked (weight exactly 0) when its position > query a's
 *   weights = softmax over b;  out[h][a] = sum_b w (v[h][b] + a_V[idx_ab]  (SHAW))
 *
 * Where each scheme acts:
 *   NONE   no position signal inside attention; absolute encodings
 *          (sinusoidal, learned) are added to the inputs beforehand.
 *   ROPE   rotates q and k by their positions with posenc_rope_apply_f32
 *          (config->rope, config->rope_layout; seq_len = key_start + key_len
 *          for DYNAMIC / LONGROPE), i.e. in f32 exactly as the RoPE family
 *          does it; everything after the rotation is in double.
 *   ALIBI  adds slope_h x (form) to the logits.
 *   T5     adds table[bucket(j - i)][h] to the logits (use scale = 1 as T5).
 *   SHAW   adds key and value embeddings gathered by clipped distance.
 *
 * Dot products, softmax and weighted sums are accumulated in double and
 * rounded once to f32, so the oracle is more accurate than any f32 kernel it
 * checks. A causal row with no visible key is an error, not NaN. */
typedef enum posenc_attention_scheme {
    POSENC_ATTENTION_NONE = 0,
    POSENC_ATTENTION_ROPE = 1,
    POSENC_ATTENTION_ALIBI = 2,
    POSENC_ATTENTION_T5 = 3,
    POSENC_ATTENTION_SHAW = 4
} posenc_attention_scheme;

typedef struct posenc_attention_config {
    int32_t heads;        /* >= 1 */
    int32_t head_dim;     /* d >= 1 */
    size_t query_len;     /* Lq >= 1 */
    size_t key_len;       /* Lk >= 1 */
    int64_t query_start;  /* query a has position query_start + a (>= 0) */
    int64_t key_start;    /* key b has position key_start + b (>= 0) */
    int32_t causal;       /* 1: mask keys whose position is after the query's */
    double scale;         /* logit scale, finite > 0; default 1/sqrt(head_dim) */
    posenc_attention_scheme scheme;
    const float *logit_bias; /* optional [heads, Lq, Lk] added to the logits (any scheme) */
    /* ALIBI */
    const float *alibi_slopes;  /* [heads] */
    posenc_alibi_form alibi_form;
    /* T5 */
    posenc_t5_params t5;
    const float *t5_table;      /* [num_buckets, heads] */
    /* SHAW */
    int32_t shaw_clip;          /* k >= 0 */
    const float *shaw_key_table;   /* [2k+1, head_dim] (a_K) */
    const float *shaw_value_table; /* [2k+1, head_dim] (a_V), may be NULL */
    /* ROPE */
    posenc_rope_params rope;    /* any scaling / partial rotary; rope.head_dim must equal
                                   head_dim. Default posenc_rope_params_default(head_dim) */
    posenc_layout rope_layout;  /* default HALF (GPT-NeoX / HF Llama) */
} posenc_attention_config;

/* Defaults: causal 0, scale 1/sqrt(head_dim), scheme NONE, starts 0, ALiBi
 * form CAUSAL, T5 defaults, RoPE defaults (base 10000, whole head, HALF). */
POSENC_API void posenc_attention_config_default(posenc_attention_config *config,
                                                int32_t heads, int32_t head_dim,
                                                size_t query_len, size_t key_len);
/* Run the reference attention. out_count >= heads*Lq*d; weights may be NULL,
 * else weights_count >= heads*Lq*Lk. Errors name the bad field (heads <= 0,
 * query_len 0, a missing table for the chosen scheme, ...). */
POSENC_API posenc_status posenc_attention_reference_f32(const posenc_attention_config *config,
                                                        const float *q, const float *k,
                                                        const float *v, float *out,
                                                        size_t out_count, float *weights,
                                                        size_t weights_count,
                                                        posenc_error *err);

/* ========================================================================
 * 6. Learned tables, multi-dimensional tables, composition, reference attention
 * ======================================================================== */
/* ---- 6a. Learned absolute tables (BERT, GPT-2, RoBERTa) --------------------
 *
 * A learned table is a plain float32 [rows][dim] row-major array (rows =
 * max_position_embeddings); the caller owns it (posenc_learned_read /
 * posenc_learned_write load and save it as .npy).
 *
 * Reproducible initializer (posenc_learned_init_f32). Anyone can rebuild a
 * table from (seed, sigma) with this recipe (tests/py/test_cli_learned.py does,
 * in numpy, byte for byte):
 *
 *   splitmix64(x):  x += 0x9E3779B97F4A7C15
 *                   x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
 *                   x = (x ^ (x >> 27)) * 0x94D049BB133111EB
 *                   return x ^ (x >> 31)                       (uint64, wrapping)
 *   draw n (n = 0, 1, 2, ...):  u_n = ((splitmix64(seed + n * 0x9E3779B97F4A7C15) >> 11) + 0.5) * 2^-53
 *                               (uniform in (0, 1), never 0 or 1)
 *   element pair j (flat row-major index 2j and 2j+1), Box-Muller in double:
 *       r = sqrt(-2 ln u_{2j}),  t = 2 pi u_{2j+1}
 *       table[2j]   = float32(sigma * r * cos(t))
 *       table[2j+1] = float32(sigma * r * sin(t))       (dropped if 2j+1 == rows*dim)
 *   then the padding row (if any) is set to 0, as nn.Embedding(padding_idx) does.
 *
 * The draws are counter-based (element i needs no earlier state), so a table
 * is the same whatever the thread count. The integer part is exact everywhere;
 * the float32 values are rounded from double log/sqrt/sin/cos, so a libm whose
 * double log/sin/cos differ from glibc's by 1 ULP changes a float32 only when the
 * double lands within 2^-52 relative of a float32 rounding midpoint (about one
 * value in 2^28).
 */
#define POSENC_LEARNED_SIGMA_DEFAULT 0.02 /* HF initializer_range (BERT, GPT-2, RoBERTa) */
#define POSENC_NO_PADDING (-1)            /* padding_idx value meaning "no padding row" */

/* Fill table[rows][dim] with N(0, sigma^2) draws from `seed` (recipe above);
 * row padding_idx (0 <= padding_idx < rows, or POSENC_NO_PADDING) is zeroed.
 * sigma must be finite and >= 0. out_count >= rows*dim. */
POSENC_API posenc_status posenc_learned_init_f32(uint64_t seed, double sigma, int64_t padding_idx,
                                                 size_t rows, int32_t dim, float *table,
                                                 size_t out_count, posenc_error *err);

/* Load a learned table from .npy: a non-empty 2-D float array (<f4, or <f8 / <f2
 * converted to float32, rounding once); out becomes [rows][dim] F32 (free with
 * posenc_array_free). A valid .npy of another rank or an integer dtype gives
 * POSENC_ERR_INVALID_ARGUMENT (not a table), more than 2^31-1 columns
 * POSENC_ERR_LIMIT, a malformed file the errors of posenc_npy_read; the message
 * names the file and what it holds. max_bytes as posenc_npy_read. */
POSENC_API posenc_status posenc_learned_read(const char *path, size_t max_bytes, posenc_array *out,
                                             posenc_error *err);
/* Save table[rows][dim] as a float32 .npy, atomically (posenc_npy_write). */
POSENC_API posenc_status posenc_learned_write(const char *path, const float *table, size_t rows,
                                              int32_t dim, posenc_error *err);

/* What a gather or scatter does with a position >= rows. */
typedef enum posenc_past_end {
    POSENC_PAST_END_ERROR = 0,  /* POSENC_ERR_OUT_OF_RANGE naming the position (default) */
    POSENC_PAST_END_CLAMP = 1,  /* use the last row, rows-1 */
    POSENC_PAST_END_RESIZE = 2  /* caller resizes first (posenc_learned_resize_f32) to
                                   max position + 1 rows; gather/backward treat it as ERROR */
} posenc_past_end;

/* Forward: out[i][:] = table[positions[i]][:] for i < count (out is [count][dim]).
 * Positions must be >= 0 (else POSENC_ERR_OUT_OF_RANGE); past-the-end ones
 * follow `policy`. Bit-exact copies. */
POSENC_API posenc_status posenc_learned_gather_f32(const float *table, size_t rows, int32_t dim,
                                                   const int64_t *positions, size_t count,
                                                   posenc_past_end policy, float *out,
                                                   size_t out_count, posenc_error *err);

/* Backward of the gather: grad_table[positions[i]][:] += grad_out[i][:], in
 * order i = 0, 1, ... in float32 (so equal to the obvious loop bit for bit).
 * grad_table is [rows][dim] and is accumulated into, not cleared. The row
 * padding_idx receives no gradient (nn.Embedding semantics; POSENC_NO_PADDING: none). Policy as gather
 * (CLAMP sends past-the-end gradients to row rows-1, matching a clamped forward).
 * Every position is checked before anything is added. */
POSENC_EXPERIMENTAL
POSENC_API posenc_status posenc_learned_backward_f32(const float *grad_out, const int64_t *positions,
                                                     size_t count, int32_t dim,
                                                     posenc_past_end policy, int64_t padding_idx,
                                                     float *grad_table, size_t rows,
                                                     posenc_error *err);

/* RoBERTa / fairseq positions from token ids (HF create_position_ids_from_input_ids):
 *   m = mask ? mask[i] != 0 : ids[i] != pad_id
 *   out[b][t] = (cumsum_{s<=t} m[b][s] + past_length) * m[b][t] + pad_id
 * ids, mask and out are [batch][seq]; mask may be NULL. Real tokens get pad_id+1,
 * pad_id+2, ... (left padding handled), pads get pad_id, whose table row is zero.
 * Example: ids [0, 31414, 232, 2, 1, 1], pad_id 1 -> [2, 3, 4, 5, 1, 1].
 * pad_id >= 0 and past_length >= 0 (else POSENC_ERR_INVALID_ARGUMENT). */
POSENC_API posenc_status posenc_positions_from_input_ids(const int64_t *ids, const uint8_t *mask,
                                                         size_t batch, size_t seq, int64_t pad_id,
                                                         int64_t past_length, int64_t *out,
                                                         size_t out_count, posenc_error *err);

/* Resize a learned table to new_rows by linear interpolation, leaving a prefix
 * of `keep` special rows (RoBERTa: keep = padding_idx + 1 = 2; ViT: 1 for
 * [CLS]) untouched. The body (rows keep..rows-1, n = rows-keep rows) is
 * resampled to m = new_rows-keep rows with both endpoints kept exactly
 * (align_corners): new body row j reads source coordinate x = j*(n-1)/(m-1),
 *   out[keep+j] = a + f*(b - a),  a = in[keep+floor(x)], b = in[keep+floor(x)+1], f = x-floor(x),
 * with x taken as an exact fraction and the blend in double, rounded once (so
 * the endpoints j = 0 and j = m-1 copy rows exactly). m == 1 copies the first
 * body row; n == 1 repeats it. Needs keep < rows and keep < new_rows, both row
 * counts <= 2^31, out != table. out is [new_rows][dim]. */
POSENC_API posenc_status posenc_learned_resize_f32(const float *table, size_t rows, int32_t dim,
                                                   size_t keep, float *out, size_t new_rows,
                                                   size_t out_count, posenc_error *err);

/* ---- 6b. Hybrid table and learnable frequency scale (third source article §5.1)
 *
 * Hybrid: "low dims learned, high dims fixed". Row r of out ([count][params->dim]):
 *   out[r][c] = learned[pos_r][c]               for c <  learned_dim
 *   out[r][c] = sinusoid(params, pos_r)[c]      for c >= learned_dim
 * i.e. the full-width sinusoid table with its first learned_dim channels (the
 * high-frequency pairs in the interleaved layout) replaced by a learned table
 * [learned_rows][learned_dim]. 0 <= learned_dim <= params->dim; positions must
 * be integer (range or ids); past-the-end positions of the learned part follow
 * `policy` (ERROR or CLAMP). */
POSENC_EXPERIMENTAL
POSENC_API posenc_status posenc_hybrid_table_f32(const float *learned, size_t learned_rows,
                                                 int32_t learned_dim,
                                                 const posenc_sinusoid_params *params,
                                                 const posenc_positions *positions,
                                                 posenc_past_end policy, float *out,
                                                 size_t out_count, posenc_error *err);

/* Learnable frequency scale s (the article's adaptive_position_encoding: angle
 * rates w_k multiplied by a trainable scalar): the sinusoid table of params at
 * angles p * (s * w_k), i.e. the table at real positions s*p. s finite, > 0. */
POSENC_EXPERIMENTAL
POSENC_API posenc_status posenc_freq_scale_table_f32(const posenc_sinusoid_params *params,
                                                     double scale,
                                                     const posenc_positions *positions,
                                                     float *out, size_t out_count,
                                                     posenc_error *err);
/* Gradient of a loss L with respect to s, given dL/dtable grad_out ([count][dim],
 * same layout as the table):
 *   dL/ds = sum_r sum_k p_r w_k ( g[r][sin_k] cos(s p_r w_k) - g[r][cos_k] sin(s p_r w_k) )
 * accumulated in long double; *out_grad receives it. Precise mode only. */
POSENC_EXPERIMENTAL
POSENC_API posenc_status posenc_freq_scale_gradient(const posenc_sinusoid_params *params,
                                                    double scale,
                                                    const posenc_positions *positions,
                                                    const float *grad_out, size_t grad_count,
                                                    double *out_grad, posenc_error *err);

/* ---- 6c. Transformer-XL relative sinusoid R (conventions.md §9) ------------
 *
 * R is [klen][dim], row r encodes relative distance pos_r = klen-1-r
 * (descending, so the last row is distance 0), optionally clamped:
 * pos_r = min(pos_r, clamp_len) when clamp_len >= 0; clamp_len < 0: no clamp
 * (XL's own code skips the clamp for clamp_len <= 0; pass -1 for that).
 *   R[r] = [ sin(pos_r w_0) ... sin(pos_r w_{K-1}) | cos(pos_r w_0) ... cos(pos_r w_{K-1}) ]
 *   w_k = 10000^(-2k/dim), K = dim/2 (dim even).
 * PRECISE: extended-precision angles, <= 1 ULP. TORCH_COMPAT: XL's float32
 * steps: inv_k = 1/powf(10000, f32(2k)/dim), angle = f32(pos) * inv_k, SLEEF sin/cos. */
POSENC_API posenc_status posenc_xl_relative_table(int32_t dim, size_t klen, int64_t clamp_len,
                                                  posenc_mode mode, posenc_dtype dtype, void *out,
                                                  size_t out_count, posenc_error *err);

/* ---- 6d. Multi-dimensional sinusoid tables (images H x W, video T x H x W) --
 *
 * A grid of axes n = 1, 2 or 3 with sizes shape[0..n-1] (each 1..2^24, so
 * positions are exact in float32), channels C in 1..2^28; out is
 * [shape[0]]...[shape[n-1]][channels], channels last, row-major. Cell
 * (x0, x1, x2) = [ emb_c(x0) | emb_c(x1) | emb_c(x2) ], each emb_c an
 * interleaved sin/cos vector of c channels [sin(x w_0), cos(x w_0), sin(x w_1), ...]
 * with w_k = 10000^(-2k/c) (the per-axis c, not the total), positions 0-based.
 *
 *   POSENC_GRID_SPLIT_TATP22  tatp22/multidim-positional-encoding: c = 2*ceil(C/(2n)),
 *                             so n*c >= C, and the surplus is cut from the END (the
 *                             last axis loses channels first). Any C >= 1.
 *       C=10, n=2: c=6, channels [x: 0..5 | y: 6..9 (y's last pair dropped)]
 *   POSENC_GRID_SPLIT_EVEN    third source article (video_position_encoding): c = C/n
 *                             exactly; C must be a multiple of 2n (every axis gets
 *                             whole sin/cos pairs), else POSENC_ERR_INVALID_ARGUMENT.
 *       C=12, n=3: [t: 0..3 | h: 4..7 | w: 8..11]
 *
 * PRECISE: extended precision, <= 1 ULP. TORCH_COMPAT: tatp22's float32 torch steps
 * inv_k = 1/powf(10000, f32(2k)/c), angle = f32(x)*inv_k, SLEEF sin/cos. */
typedef enum posenc_grid_split {
    POSENC_GRID_SPLIT_TATP22 = 0,
    POSENC_GRID_SPLIT_EVEN = 1
} posenc_grid_split;

/* Channels per axis c for (axes, channels, split), checking the split's rule. */
POSENC_API posenc_status posenc_grid_axis_channels(int axes, int32_t channels,
                                                   posenc_grid_split split, int32_t *out_c,
                                                   posenc_error *err);
/* Elements of the grid table (product of shape times channels, overflow-checked). */
POSENC_API posenc_status posenc_grid_count(int axes, const size_t *shape, int32_t channels,
                                           size_t *out_count, posenc_error *err);
/* The grid table; dtype F32, F64, F16 or BF16. */
POSENC_API posenc_status posenc_grid_table(int axes, const size_t *shape, int32_t channels,
                                           posenc_grid_split split, posenc_mode mode,
                                           posenc_dtype dtype, void *out, size_t out_count,
                                           posenc_error *err);
/* Grid position builder: the cell coordinates in row-major order, out is
 * [cells][axes] int64 (cell (x0,x1,x2) -> x0, x1, x2), e.g. 2x3 ->
 * (0,0) (0,1) (0,2) (1,0) (1,1) (1,2). Use one column as positions for a
 * per-axis 1-D table, or feed them to a RoPE axis. */
POSENC_API posenc_status posenc_grid_positions(int axes, const size_t *shape, int64_t *out,
                                               size_t out_count, posenc_error *err);

/* ---- 6e. Token + position composition (first and second source articles) ---
 *
 * add:    out[i] = token_table[ids[i]] * token_scale + pe[i]
 *         (token_scale = sqrt(dim) as in "Attention Is All You Need" §3.4;
 *          1 for BERT/GPT-2, which add without scaling)
 * concat: out[i] = concat(token_table[ids[i]] * token_scale, pe[i]) @ projection
 *         with projection [token_dim + pe_dim][out_dim] row-major, or, when
 *         projection is NULL, the plain concatenation (out_dim = token_dim + pe_dim).
 * ids index a [vocab][token_dim] table; an id < 0 or >= vocab gives
 * POSENC_ERR_OUT_OF_RANGE naming the id and where it is. pe is [count][pe_dim]
 * (one PE row per token, e.g. from posenc_learned_gather_f32). Sums and dot
 * products in double, each output rounded once to float32. */
POSENC_API posenc_status posenc_compose_add_f32(const float *token_table, size_t vocab, int32_t dim,
                                                const int64_t *ids, size_t count,
                                                double token_scale, const float *pe,
                                                float *out, size_t out_count, posenc_error *err);
POSENC_API posenc_status posenc_compose_concat_f32(const float *token_table, size_t vocab,
                                                   int32_t token_dim, const int64_t *ids,
                                                   size_t count, double token_scale,
                                                   const float *pe, int32_t pe_dim,
                                                   const float *projection, size_t projection_rows,
                                                   int32_t out_dim, float *out, size_t out_count,
                                                   posenc_error *err);

/* First source article §5.2: "print the input to the first layer and compare
 * the first and the last token's vectors; if they are identical the position
 * encoding was not added". For a composed batch [batch][seq][dim]:
 *   - first vs last: per sequence, max_c |x[0][c] - x[seq-1][c]|;
 *   - with ids ([batch][seq], may be NULL): every token is also compared with the
 *     previous occurrence of the same id in its sequence. Equal ids at different
 *     positions must give different vectors when a position signal is present;
 *     this is decisive, whereas first/last may differ just because the tokens do.
 * A pair "differs" when its max abs difference exceeds atol (>= 0). Ids < 0 are
 * skipped: mark padding that way, since RoBERTa-style pads share one position
 * (and so one vector) by design. */
typedef struct posenc_first_last_report {
    size_t sequences;             /* batch */
    size_t first_last_identical;  /* sequences whose first and last vectors do not differ */
    double first_last_min_diff;   /* smallest per-sequence first/last max abs diff */
    size_t same_id_pairs;         /* same-id pairs compared (0 without ids) */
    size_t same_id_identical;     /* ... of which did not differ */
    int position_signal;          /* 1: every compared pair differs; 0: some pair is identical */
} posenc_first_last_report;
POSENC_EXPERIMENTAL
POSENC_API posenc_status posenc_compose_check_signal_f32(const float *batch, size_t batch_count,
                                                         size_t seq, int32_t dim,
                                                         const int64_t *ids, double atol,
                                                         posenc_first_last_report *report,
                                                         posenc_error *err);

/* ---- 6f. DETR's 2D sine table (detection / segmentation feature maps) -------
 *
 * The fixed position table DETR-style models add to an H x W feature map
 * (transformers' *SinePositionEmbedding: DETR, Conditional DETR, DAB-DETR,
 * Deformable DETR, Table Transformer, MaskFormer, Mask2Former),
 * for an image without padding (pixel_mask all ones). out is channel-first
 * [2F][H][W] float32 (the framework's [batch, 2F, H, W] for one image), F =
 * num_pos_feats channels per axis: channels 0..F-1 carry the row (y) axis,
 * F..2F-1 the column (x) axis (POSENC_SINE2D_DETR, the only layout). For row
 * y in 0..H-1 and column x in 0..W-1:
 *
 *   p_y = y + 1, p_x = x + 1                                   (normalize 0)
 *   p_y = (y + 1 - offset) / (H + eps) * scale                 (normalize 1)
 *   p_x = (x + 1 - offset) / (W + eps) * scale
 *   d_k = T^(2 floor(k/2) / F), k = 0..F-1  (T = temperature_y for the y
 *         channels, temperature_x for the x channels)
 *   out[k][y][x]     = sin(p_y / d_k) for even k, cos(p_y / d_k) for odd k
 *   out[F + k][y][x] = the same with p_x and temperature_x
 *
 * so each axis interleaves sin, cos pairs sharing one frequency. Units: p is
 * in pixels of the feature map (normalize 0) or radians of [0, scale]
 * (normalize 1, eps pushes the last position just under scale).
 *
 * PRECISE: p and d_k in double, one float32 rounding of sin/cos computed in
 * double: within 1 ULP of the formula's float32 (positions < 2^24).
 * TORCH_COMPAT: the framework's float32 steps: p = f32 arange (1..H), minus
 * f32(offset), divided by f32(H) + f32(eps), times f32(scale); the exponent
 * f32(2 floor(k/2)) / f32(F) (exponent_by_product 0) or f32(2 floor(k/2)) *
 * f32(2 / F) (exponent_by_product 1: DAB-DETR's in-place mul_), d_k =
 * torch.pow(f32(T), exponent) as torch's CPU kernel computes it over the F
 * elements, p / d_k in float32, and torch's float32 sin / cos (MKL's VML when
 * POSENC_TORCH_MKL names it, else SLEEF's 1-ULP functions per element: a
 * torch without MKL gives the same bits except in vector blocks holding an
 * angle >= 125, which needs normalize 0 and a side >= 125).
 *
 * POSENC_SINE2D_RTDETR (RT-DETR, RT-DETR v2, D-FINE: build_2d_sinusoidal_position_embedding): out is
 * [H*W][2F], row r = y * W + x (raster order, as the flattened feature map), positions 0-based and not
 * normalized (p_y = y, p_x = x; normalize must be 0), Q = F/2 frequencies w_j = T^(-j/Q) (the same
 * frequencies as DETR's pairs), each axis in halves: channels [sin(p_y w_0..w_{Q-1}) | cos(p_y w) |
 * sin(p_x w) | cos(p_x w)]. The framework computes it in float64 and rounds once to float32, which
 * PRECISE reproduces (double pow / sin / cos, then float32): only TORCH_COMPAT's float32 steps do not
 * exist for this layout, so that mode is refused (POSENC_ERR_INVALID_ARGUMENT).
 *
 * Checked domain: num_pos_feats even, 2..2^20 (the framework's stack of the
 * even and odd channels needs as many of each); temperatures finite and > 0;
 * normalize 0 or 1; with normalize 1: scale finite, eps finite and >= 0,
 * offset finite and in [0, 1); H, W in 1..2^24 (exact float32 positions),
 * 2F*H*W <= out_count. Errors name the value: POSENC_ERR_INVALID_ARGUMENT (domain),
 * POSENC_ERR_NULL_POINTER, POSENC_ERR_SIZE_OVERFLOW (2F*H*W), POSENC_ERR_BUFFER_TOO_SMALL
 * (out_count), POSENC_ERR_NONFINITE (a temperature below ~1e-31 overflows an angle:
 * NaN sines; the table is then garbage), POSENC_ERR_OUT_OF_MEMORY. */
typedef enum posenc_sine2d_layout {
    POSENC_SINE2D_DETR = 0,  /* [2F][H][W]: y channels then x channels, each interleaved sin, cos */
    POSENC_SINE2D_RTDETR = 1 /* [H*W][2F]: see below */
} posenc_sine2d_layout;

typedef struct posenc_sine2d_params {
    int32_t num_pos_feats;        /* F, channels per axis (the model's d_model // 2) */
    double temperature_y;         /* T of the row axis (DETR 10000; DAB-DETR temperature_height) */
    double temperature_x;         /* T of the column axis (DAB-DETR temperature_width) */
    int32_t normalize;            /* 1: positions scaled into [0, scale] (DETR layout); 0: 1..H (RTDETR: 0..H-1) */
    double offset;                /* subtracted before normalizing: 0 (DETR), 0.5 (Deformable DETR) */
    double eps;                   /* 1e-6 in every model above */
    double scale;                 /* 2 pi unless the config says otherwise */
    int32_t exponent_by_product;  /* TORCH_COMPAT only: 1 = DAB-DETR's k2 * (2/F), 0 = 2*k2 / F */
    posenc_sine2d_layout layout;
    posenc_mode mode;             /* PRECISE or TORCH_COMPAT */
} posenc_sine2d_params;

/* DETR's defaults for F channels per axis: temperatures 10000, normalize 1,
 * offset 0, eps 1e-6, scale 2 pi, quotient exponent, layout DETR, PRECISE. */
POSENC_API void posenc_sine2d_params_default(posenc_sine2d_params *params, int32_t num_pos_feats);
/* Check params against the domain above; messages name the bad value. */
POSENC_API posenc_status posenc_sine2d_check(const posenc_sine2d_params *params, posenc_error *err);
/* The table for an H x W map: out[2F][H][W], out_count >= 2F*H*W (overflow-checked). */
POSENC_API posenc_status posenc_sine2d_table_f32(const posenc_sine2d_params *params, int64_t height, int64_t width,
                                                 float *out, size_t out_count, posenc_error *err);

/* ========================================================================
 * 7. Analysis: health, precision audit, diff
 * ======================================================================== */
/* Tables given to the analysis functions are any posenc_array of a real or
 * integer dtype; the last axis is the channel axis and every leading axis is
 * flattened into rows ([T,H,D] -> T*H rows of D, except where heads matter).
 * Non-finite values never crash an analysis: they are counted, located and
 * left out of the statistics. */

/* ---- 7a. safetensors (the project's own reader) ----
 * File layout: 8-byte little-endian header length N, N bytes of JSON
 * {"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, ...,
 *  "__metadata__": {...}}, then the data buffer; offsets are relative to it.
 * Nothing in the file is trusted: N must fit the file, every tensor must have
 * a known dtype (F64 F32 F16 BF16 I64 I32 U16 U8), non-negative integer
 * shape and offsets, end - begin == product(shape) * itemsize, end within the
 * data buffer, and no two tensors may overlap. Malformed -> POSENC_ERR_FORMAT,
 * unknown dtype -> POSENC_ERR_UNSUPPORTED, tensor absent -> POSENC_ERR_OUT_OF_RANGE
 * (the message lists the first names present), larger than max_bytes
 * (0 = POSENC_DEFAULT_MAX_BYTES) -> POSENC_ERR_LIMIT. */
POSENC_API posenc_status posenc_safetensors_parse(const void *bytes, size_t size,
                                                  const char *tensor_name, size_t max_bytes,
                                                  posenc_array *out, posenc_error *err);
/* Several tensors of one safetensors image at once: the header is parsed and
 * checked (as posenc_safetensors_parse does) once, then each of names[0..count)
 * is copied into outs[i] (each bounded by max_bytes). Parsing per tensor costs the
 * whole header each time: a 99 MiB header read 150 times took 51 s. On any error
 * every outs[i] is released and zeroed; the error names the tensor as above. */
POSENC_EXPERIMENTAL
POSENC_API posenc_status posenc_safetensors_parse_many(const void *bytes, size_t size, const char *const *names,
                                                       size_t count, size_t max_bytes, posenc_array *outs,
                                                       posenc_error *err);
/* Read one tensor of a .safetensors file. The file is mapped (mmap), not read:
 * a checkpoint of any size works and costs only its header and the named
 * tensor's pages; max_bytes bounds that tensor, not the file. A FIFO, device
 * or folder is refused (POSENC_ERR_IO) without blocking. */
POSENC_API posenc_status posenc_safetensors_read(const char *path, const char *tensor_name,
                                                 size_t max_bytes, posenc_array *out,
                                                 posenc_error *err);
/* Names of the tensors in a safetensors image, comma-separated into out
 * (truncated with "..." when longer than out_size - 1 characters). */
POSENC_API posenc_status posenc_safetensors_list(const void *bytes, size_t size, char *out,
                                                 size_t out_size, posenc_error *err);

/* ---- 7b. sinusoid / angle model fitted to data ----
 * How an angle p*w was formed, from the most to the least precise. */
typedef enum posenc_angle_formation {
    POSENC_ANGLE_EXACT = 0,   /* within the storage noise of the exact angle */
    POSENC_ANGLE_F32 = 1,     /* relative angle error of a float32 product (<= 64 * 2^-24) */
    POSENC_ANGLE_F16 = 2,     /* ... of an IEEE half product (<= 4 * 2^-11) */
    POSENC_ANGLE_BF16 = 3,    /* ... of a bfloat16 product (<= 4 * 2^-8) */
    POSENC_ANGLE_UNKNOWN = 4  /* larger, or not measurable */
} posenc_angle_formation;

/* Short name: "exact", "float32", "float16", "bfloat16", "unknown". */
POSENC_EXPERIMENTAL
POSENC_API const char *posenc_angle_formation_name(posenc_angle_formation formation);

/* What a table (or a set of rotation angles) looks like, estimated from the
 * data alone. Filled by posenc_sinusoid_fit_table / posenc_sinusoid_fit_rope_angles;
 * release with posenc_sinusoid_fit_free. All frequencies in radians/position. */
typedef struct posenc_sinusoid_fit {
    int found;                 /* 1: every non-zero row is K (sin, cos) pairs of one amplitude */
    posenc_layout layout;      /* pairing of the channels (for RoPE: of the rotation) */
    int cos_first;             /* additive tables: 1 if each pair is (cos, sin) */
    int32_t pairs;             /* K */
    int32_t extra_channels;    /* channels after the 2K paired ones (odd-dim zero pad, pass-through) */
    double amplitude;          /* pair norm (1 for plain tables; attention scale for RoPE) */
    double pair_norm_error;    /* max |pair norm - amplitude| / amplitude over valid rows */
    size_t zero_rows;          /* all-zero rows (fairseq padding rows), excluded from the fit */
    int64_t first_zero_row;    /* -1 if none */
    double start;              /* estimated position of row 0 */
    int start_is_integer;      /* start within 0.01 of an integer */
    double *frequencies;       /* [pairs] frequencies estimated per pair (least squares) */
    double ratio;              /* geometric fit w_k = scale * ratio^k */
    double scale;              /* w_0 of the geometric fit (1 unless interpolated) */
    double geometric_error;    /* max relative deviation of w_k from the geometric fit */
    double base_vaswani;       /* base if w_k = scale * base^(-2k/d), d = 2K */
    double base_t2t;           /* base if w_k = scale * base^(-k/(K-1)) */
    posenc_freqs freqs;        /* the convention whose base is "round" (see docs/analysis.md) */
    double base;               /* that convention's base */
    int base_is_round;         /* 1 if base is within 1e-4 relative of m * 10^e, m in 1..99 */
    double angle_error;        /* max |angle - exact model angle| (radians, wrapped) */
    double angle_relative_error; /* max (|error| - noise) / |angle| */
    double noise;              /* angle noise floor assumed from the storage dtype */
    posenc_angle_formation formation;
} posenc_sinusoid_fit;

/* Fit the additive sinusoid model to a table (rows = positions, last axis =
 * channels). Tries both layouts and both pair orders; found = 0 (not an error)
 * when no pairing gives unit-norm pairs within 1e-2. noise: angle noise floor
 * in radians, 0 = derived from table->dtype (f32 2^-22, f64 1e-12, f16 2^-9,
 * bf16 2^-6). */
POSENC_EXPERIMENTAL
POSENC_API posenc_status posenc_sinusoid_fit_table(const posenc_array *table, double noise,
                                                   posenc_sinusoid_fit *out, posenc_error *err);
/* Recover RoPE rotation angles from an input x and its rotated output y
 * ([T, D] or [T, H, D], same shape): detects the rotated channel count
 * (trailing unchanged channels are pass-through), the layout (the pairing that
 * preserves pair norms), the amplitude (attention scaling), and fits the angles
 * per position like posenc_sinusoid_fit_table. */
POSENC_EXPERIMENTAL
POSENC_API posenc_status posenc_sinusoid_fit_rope_angles(const posenc_array *x, const posenc_array *y,
                                                         posenc_sinusoid_fit *out, posenc_error *err);
POSENC_EXPERIMENTAL
POSENC_API void posenc_sinusoid_fit_free(posenc_sinusoid_fit *fit);

/* RoPE cos/sin caches ([T, D] each, as HF LlamaRotaryEmbedding returns them)
 * as a [T, 2K] table [sin(k=0..K-1) | cos(k=0..K-1)] (half layout, float64)
 * that the fit and health functions understand. The caches may repeat each
 * angle in both halves ([c0..cK-1, c0..cK-1], HF rotate_half: *out_repeat =
 * POSENC_LAYOUT_HALF), on both channels of a pair ([c0 c0 c1 c1 ..], GPT-J /
 * lucidrains: POSENC_LAYOUT_INTERLEAVED), or not at all (K = D, *out_repeat =
 * -1). Attention scaling folded into the caches shows up as the fit's amplitude. */
POSENC_EXPERIMENTAL
POSENC_API posenc_status posenc_rope_cache_to_table(const posenc_array *cos, const posenc_array *sin,
                                                    posenc_array *out, int *out_repeat,
                                                    posenc_error *err);

/* ---- 7c. health of a table (`posenc analyze`) ---- */
#define POSENC_HEALTH_OFFSETS 4 /* linearity offsets checked: 1, 2, 10, 100 (those < rows) */

typedef struct posenc_health_options {
    size_t max_offset;     /* similarity-vs-distance offsets 0..max_offset; 0 = min(rows-1, 128) */
    size_t max_rows_pairs; /* closest-pair search covers the first N rows; 0 = 2048 */
    /* Known frequencies for the linearity check ([pairs], NULL = use the fitted ones)
     * and the layout they pair; used when the table was generated from flags. */
    const double *frequencies;
    size_t frequency_count;
    posenc_layout layout;
    int cos_first;
} posenc_health_options;

typedef struct posenc_health {
    size_t rows, channels;
    size_t nonfinite;            /* NaN/inf values (left out of everything below) */
    int64_t first_nonfinite_row, first_nonfinite_channel; /* -1 if none */
    double min, max, mean_abs;
    double *row_variance;        /* [rows] variance over channels of each position */
    double *row_norm;            /* [rows] L2 norm of each position */
    double norm_min, norm_max, variance_min, variance_max;
    double *channel_frequency;   /* [channels] dominant frequency (rad/position), 0 if none */
    double *channel_wavelength;  /* [channels] 2*pi/frequency; INFINITY when longer than the rows */
    size_t closest_a, closest_b; /* closest pair of distinct positions (rows) ... */
    double closest_distance;     /* ... and their Euclidean distance */
    size_t uniqueness_rows;      /* rows searched for the closest pair */
    size_t most_similar_a, most_similar_b; /* the two distinct positions (of those rows) most alike by
                                              direction: largest cosine similarity ... */
    double max_cosine;           /* ... and that cosine (NaN when fewer than two non-zero rows) */
    size_t offsets;              /* entries of the two arrays below: offsets 0..offsets-1 */
    double *mean_dot;            /* [offsets] mean over p of PE(p).PE(p+k) */
    double *mean_cosine;         /* [offsets] mean cosine similarity at offset k */
    posenc_sinusoid_fit fit;     /* the fitted sinusoid model (fit.found = 0 if none) */
    int linearity_available;     /* 1 when fitted or known frequencies exist */
    size_t linearity_offsets[POSENC_HEALTH_OFFSETS]; /* offsets used (0 = unused slot) */
    size_t linearity_pairs;      /* K */
    /* [linearity_pairs * POSENC_HEALTH_OFFSETS]: max over p of ||M(k)PE(p) - PE(p+k)||
     * for pair i at offset slot j (index i*POSENC_HEALTH_OFFSETS + j) */
    double *linearity_residual;
    double linearity_worst;      /* max of the above */
} posenc_health;

/* Compute every statistic above. options may be NULL (defaults). Empty
 * tables (0 rows or 0 channels) give POSENC_ERR_INVALID_ARGUMENT naming the
 * shape. Release with posenc_health_free. */
POSENC_EXPERIMENTAL
POSENC_API posenc_status posenc_health_analyze(const posenc_array *table,
                                               const posenc_health_options *options,
                                               posenc_health *out, posenc_error *err);
POSENC_EXPERIMENTAL
POSENC_API void posenc_health_free(posenc_health *health);

/* ---- 7d. precision audit (`posenc precision`) ---- */
#define POSENC_PRECISION_BANDS 6 /* 256, 2048, 65504, 131072, 10^6, max_pos */

typedef struct posenc_precision_band {
    int64_t max_position;   /* band covers positions 0..max_position (<= max_pos) */
    int positions_exact;    /* every integer position in the band is exact in the dtype */
    double angle_error;     /* worst |angle formed in dtype - exact| over the band, all pairs (rad, wrapped) */
    double logit_error;     /* worst logit error, unit q/k, q at max_position, k at 0 */
} posenc_precision_band;

typedef struct posenc_precision_report {
    posenc_dtype dtype;             /* F32, F16 or BF16 */
    int64_t max_pos;
    int32_t pairs;
    int64_t first_inexact_position; /* smallest integer p not exact in dtype; -1 if > max_pos */
    double first_inexact_rounds_to; /* what that position becomes (4097 -> 4096 in bf16) */
    int64_t first_overflow_position;/* smallest p that becomes inf (f16: 65520); -1 if none <= max_pos */
    /* Angles formed in dtype: dtype(dtype(p) * dtype(w_k)). First position whose
     * angle vector equals that of an earlier position, and that position; -1 if none. */
    int64_t first_angle_collision, angle_collision_with;
    /* Exact angles, sin/cos stored in dtype: first position whose whole table row
     * equals an earlier one (searched up to table_search_limit); -1 if none. */
    int64_t first_table_collision, table_collision_with, table_search_limit;
    double *frequencies;            /* [pairs] exact w_k */
    double *angle_error;            /* [pairs] worst wrapped angle error over 0..max_pos */
    double logit_error_angle;       /* at max_pos: angles formed in dtype, exact cos/sin */
    double logit_error_table;       /* at max_pos: exact angles, cos/sin stored in dtype */
    int band_count;
    posenc_precision_band bands[POSENC_PRECISION_BANDS];
} posenc_precision_report;

/* Audit what dtype does to the encoding `params` (frequencies, dim) for integer
 * positions 0..max_pos (1 <= max_pos <= 2^31). dtype must be F32, F16 or BF16.
 * Cost: O(max_pos * pairs); more than 2^32 angle evaluations give POSENC_ERR_LIMIT.
 * Release with posenc_precision_report_free. */
POSENC_EXPERIMENTAL
POSENC_API posenc_status posenc_precision_audit(const posenc_sinusoid_params *params,
                                                posenc_dtype dtype, int64_t max_pos,
                                                posenc_precision_report *out, posenc_error *err);
POSENC_EXPERIMENTAL
POSENC_API void posenc_precision_report_free(posenc_precision_report *report);
/* Round a double to the nearest value of dtype (F64, F32, F16, BF16), ties to
 * even, overflow to inf (f16 above 65504 + half a step), subnormals kept. */
POSENC_API double posenc_round_to_dtype(double value, posenc_dtype dtype);

/* ---- 7e. diff and diagnosis (`posenc diff`) ---- */
typedef enum posenc_finding_kind {
    POSENC_FINDING_AGREE = 0,           /* equal within tolerance */
    POSENC_FINDING_OFFSET = 1,          /* B row r = A row r + k (value = k) */
    POSENC_FINDING_LAYOUT = 2,          /* interleaved vs half pairing */
    POSENC_FINDING_SIN_COS_SWAPPED = 3,
    POSENC_FINDING_FREQ_CONVENTION = 4, /* vaswani vs t2t */
    POSENC_FINDING_BASE = 5,            /* different base (value = B's estimated base) */
    POSENC_FINDING_FREQ_SCALE = 6,      /* frequencies scaled (linear interpolation; value = B/A) */
    POSENC_FINDING_ANGLE_PRECISION = 7, /* angles formed in a lower precision */
    POSENC_FINDING_TRANSPOSED = 8,
    POSENC_FINDING_PREFIX = 9,          /* the shorter table is the start of the longer */
    POSENC_FINDING_PERMUTATION = 10,    /* equal up to a (per-head) channel permutation */
    POSENC_FINDING_PADDING_ROWS = 11,   /* rows zeroed in one table only (padding_idx) */
    POSENC_FINDING_AMPLITUDE = 12,      /* scaled by a constant (value = B/A) */
    POSENC_FINDING_APPLY_PRECISION = 13 /* RoPE: same angles, rotation applied/stored in lower precision */
} posenc_finding_kind;

#define POSENC_DIFF_MAX_FINDINGS 16

/* How B's channels are A's channels reordered (findings made by matching
 * channels: LAYOUT, SIN_COS_SWAPPED, PERMUTATION). */
typedef enum posenc_permutation {
    POSENC_PERMUTATION_NONE = 0,            /* the finding is not a channel permutation */
    POSENC_PERMUTATION_TO_HALF = 1,         /* interleaved -> half-split (HF convert_llama_weights) */
    POSENC_PERMUTATION_TO_INTERLEAVED = 2,  /* half-split -> interleaved (llama.cpp's Q/K permutation) */
    POSENC_PERMUTATION_SWAP_PAIRS = 3,      /* swap within each interleaved pair */
    POSENC_PERMUTATION_SWAP_HALVES = 4,     /* swap of the two halves ([cos|sin]) */
    POSENC_PERMUTATION_GENERAL = 5          /* any other permutation */
} posenc_permutation;

/* One finding: codes and numbers, no words (the tool words them; docs/analysis.md
 * lists the sentences). `from_fit` says where it comes from: 0 = an exact test on
 * the rows/channels (it holds within the tolerance), 1 = the fitted models of A
 * and B (report->fit_a/fit_b) differ in that parameter. Per kind:
 *   AGREE            value = max|A-B|, evidence = the tolerance
 *   OFFSET           value = k (B row r = A row r + k). Exact: evidence = worst
 *                    |A[r+k] - B[r]|. Fitted: a, b = the fitted start positions
 *   LAYOUT           exact: permutation TO_HALF (value 1) or TO_INTERLEAVED (0).
 *                    fitted: a, b = the posenc_layout of A and B (value = b)
 *   SIN_COS_SWAPPED  exact: permutation SWAP_PAIRS or SWAP_HALVES (value 1).
 *                    fitted: a, b = cos_first of A and B (value = b)
 *   FREQ_CONVENTION  a, b = the posenc_freqs of A and B (value = b)
 *   BASE             a, b = the fitted bases (value = b); when neither base is
 *                    round, evidence = the worst relative frequency difference
 *   FREQ_SCALE       value = B's frequency scale / A's; a, b = the fitted scales
 *   ANGLE_PRECISION  a, b = the posenc_angle_formation of A and B (value = b);
 *                    evidence = the larger fitted angle error (radians)
 *   TRANSPOSED       value = evidence = worst |A^T - B|
 *   PREFIX           side = the shorter table (0 A, 1 B), count = its rows (= value),
 *                    evidence = worst difference over those rows
 *   PERMUTATION      count = heads (= value), width = channels per head,
 *                    permutation = which one (GENERAL when none of the named)
 *   PADDING_ROWS     value = first all-zero row. Exact: side = the table with
 *                    them, count = how many, evidence = worst difference
 *                    elsewhere. Fitted: a, b = zero rows of A and B
 *   AMPLITUDE        value = B's amplitude / A's; a, b = the fitted amplitudes
 *   APPLY_PRECISION  side = the table with the larger pair-norm error; a, b =
 *                    the pair-norm errors of A and B (value = b) */
typedef struct posenc_finding {
    posenc_finding_kind kind;
    const char *key;                /* stable name, e.g. "offset", "layout" (docs/analysis.md) */
    double value;                   /* the headline number (above) */
    double a, b;                    /* the parameter on A's and B's side, where the kind has one */
    double evidence;                /* the measurement that supports it (above) */
    int from_fit;                   /* 1: from the fitted models; 0: an exact row/channel test */
    int side;                       /* 0 = A, 1 = B, for findings about one table */
    size_t count, width;
    posenc_permutation permutation;
} posenc_finding;

/* Which published convention a fitted model matches (`posenc diff`, `posenc signal`). */
typedef enum posenc_preset {
    POSENC_PRESET_NONE = 0,              /* no model fits */
    POSENC_PRESET_ROPE = 1,              /* a RoPE rotation: the fit's layout names it (half = HF/NeoX) */
    POSENC_PRESET_FAIRSEQ = 2,           /* t2t, [sin|cos], integer start s >= 1: padding_idx = s - 1 */
    POSENC_PRESET_FAIRSEQ_EMBEDDING = 3, /* t2t, [sin|cos], from 0, a zeroed padding row (get_embedding) */
    POSENC_PRESET_T2T = 4,               /* t2t, [sin|cos], from 0 (tensor2tensor / fairseq, no padding) */
    POSENC_PRESET_TUTORIAL = 5,          /* vaswani, interleaved sin/cos (PyTorch tutorial, keras) */
    POSENC_PRESET_VASWANI_HALF = 6,      /* vaswani, [sin|cos] (HF Marian/RoFormer, GPT-J sinusoids) */
    POSENC_PRESET_OTHER = 7              /* another pairing/order (cos-first: diffusers flip_sin_to_cos) */
} posenc_preset;

/* The preset a fit matches (rope: the fit came from posenc_sinusoid_fit_rope_angles). */
POSENC_EXPERIMENTAL
POSENC_API posenc_preset posenc_sinusoid_fit_preset(const posenc_sinusoid_fit *fit, int rope);

#define POSENC_ULP_BUCKETS 8 /* 0, 1, 2-3, 4-15, 16-255, 256-65535, >= 65536, non-finite */

typedef struct posenc_diff_options {
    double tolerance;          /* absolute; 0 = 1e-6 */
    const posenc_array *input; /* optional unrotated RoPE input x: A and B are then R(x) outputs */
    size_t heads;              /* per-head permutation check: 0 = from a 3-D shape [T,H,D] */
    size_t max_offset;         /* position offsets tried, 0 = min(64, rows/2) */
} posenc_diff_options;

typedef struct posenc_diff_report {
    int shapes_equal;
    size_t rows_a, cols_a, rows_b, cols_b; /* as flattened tables */
    /* element statistics (only when shapes_equal) */
    size_t compared;
    double max_abs, mean_abs, max_rel, mean_rel; /* rel = |a-b| / max(|a|,|b|); 0 if both 0 */
    int64_t max_abs_row, max_abs_channel;
    size_t ulp_histogram[POSENC_ULP_BUCKETS]; /* float32 ULP distance between A and B */
    size_t nonfinite_a, nonfinite_b;
    int64_t first_beyond_row, first_beyond_channel; /* first element with |a-b| > tol; -1 */
    int64_t divergence_onset;  /* first row whose max |a-b| exceeds tol; -1 if none */
    double tolerance;
    double *channel_max_abs;   /* [cols] worst |a-b| per channel (NULL unless shapes_equal) */
    /* worst |a-b| per position band: positions < 256, 2048, 65504, 131072, 10^6, all
     * (a position is the first axis: row / (rows per position) for [T,H,D]) */
    int band_count;
    int64_t band_end[POSENC_PRECISION_BANDS];
    double band_max_abs[POSENC_PRECISION_BANDS];
    /* diagnosis */
    int rope;                 /* 1 when compared as RoPE outputs (options->input given) */
    posenc_sinusoid_fit fit_a, fit_b;
    posenc_preset preset_a, preset_b;
    int finding_count;
    posenc_finding findings[POSENC_DIFF_MAX_FINDINGS];
    int explained;            /* 1 if the findings account for every difference */
} posenc_diff_report;

/* Compare two tables and diagnose the difference. Shapes may differ (prefix,
 * transposed and offset are tested); when they differ and no relation explains
 * it the result is POSENC_ERR_INVALID_ARGUMENT whose message names both shapes.
 * options may be NULL. Release with posenc_diff_report_free. */
POSENC_EXPERIMENTAL
POSENC_API posenc_status posenc_diff_tables(const posenc_array *a, const posenc_array *b,
                                            const posenc_diff_options *options,
                                            posenc_diff_report *out, posenc_error *err);
POSENC_EXPERIMENTAL
POSENC_API void posenc_diff_report_free(posenc_diff_report *report);

/* ---- 7f. is a position signal present? (`posenc signal`) ---- */
typedef enum posenc_signal_verdict {
    POSENC_SIGNAL_NONE = 0,       /* inputs = token_scale x tokens: nothing added (RoPE/ALiBi/NoPE models) */
    POSENC_SIGNAL_CONSTANT = 1,   /* the same vector added at every position: no position dependence */
    POSENC_SIGNAL_SINUSOIDAL = 2, /* a signal that fits the sinusoid model (fit, preset) */
    POSENC_SIGNAL_LEARNED = 3,    /* position-dependent, no sin/cos pair structure */
    POSENC_SIGNAL_PER_SEQUENCE = 4 /* batches only: the added term differs between the sequences
                                     (e.g. padded positions); reported, not fitted */
} posenc_signal_verdict;

typedef struct posenc_signal_report {
    posenc_signal_verdict verdict;
    int present;               /* 1 if the inputs differ from scale*tokens by a position-dependent term */
    size_t sequences, positions; /* B and T of [B, T, D] inputs (B = 1 for [T, D]) */
    double token_scale;        /* least-squares a in inputs = a*tokens + S (sqrt(d) in the tutorial) */
    int scale_is_sqrt_dim;     /* a within 1% of sqrt(channels) */
    double signal_rms;         /* root mean square of S */
    double signal_row_spread;  /* rms of S minus its mean row, over rms of S (0 = constant) */
    double relative_residual;  /* rms(inputs - a*tokens) / rms(inputs) */
    double sequence_spread;    /* B > 1: rms of S minus its mean over the sequences, over rms of S
                                  (0 = the same S(t) in every sequence) */
    int sinusoidal;            /* S / amplitude fits the sinusoid model */
    posenc_sinusoid_fit fit;   /* the fit on S (on the mean over sequences for B > 1) */
    posenc_preset preset;      /* the convention the fit matches (POSENC_PRESET_NONE if none) */
} posenc_signal_report;

/* tokens and inputs: same shape, [T, D] (one sequence) or [B, T, D] (B
 * sequences of the same T positions; a [1, T, D] batch of one matches a [T, D]
 * partner; row (b, t) of inputs is the model input
 * for the token whose embedding is row (b, t) of tokens). With B >= 2 the token
 * scale is estimated within each position (across sequences), so a signal that
 * happens to correlate with the tokens does not bias it, and S(t) is the mean
 * over sequences. Higher ranks are POSENC_ERR_INVALID_ARGUMENT. Memory: one
 * float64 [T, D] buffer (plus the fit's), never a copy of the inputs. */
POSENC_EXPERIMENTAL
POSENC_API posenc_status posenc_signal_detect(const posenc_array *tokens,
                                              const posenc_array *inputs,
                                              posenc_signal_report *out,
                                              posenc_error *err);
POSENC_EXPERIMENTAL
POSENC_API void posenc_signal_report_free(posenc_signal_report *report);

/* ========================================================================
 * 8. Model configuration import (HF config.json, GGUF header)
 * ======================================================================== */
/* Read a model's RoPE settings from its Hugging Face config.json (parsed with
 * cJSON) or from a GGUF file (the key/value section, plus the small rope
 * tensors rope_freqs.weight / rope_factors_long|short.weight; every other
 * tensor is left unread; every length and offset is bounds-checked before
 * anything is allocated or read).
 *
 * config.json is read the way Hugging Face's config classes read it: a
 * built-in table of model families (docs/rope.md lists them: llama, mistral,
 * qwen2*, qwen3*, phi*, gemma*, gpt_neox, gptj, falcon, glm, chatglm,
 * deepseek_v2/v3, ...) supplies each class's defaults for absent keys, its
 * legacy attribute names (n_embd, n_head, n_positions, n_layer, rotary_dim,
 * rotary_pct, rotary_emb_base, kv_channels, seq_length, rope_ratio, ...), the
 * rotation layout and which channels of a head are rotated (MLA: the last
 * qk_rope_head_dim), and per-layer-type variants (Gemma-2/3 sliding vs full
 * attention layers). The model_type comes from the object, or else from
 * architectures[0] ("LlamaForCausalLM" -> llama); multimodal configs use
 * text_config. An unknown model_type is refused by name (see 8.1; the
 * posenc_model functions take an assume_family option). A model without any
 * RoPE layer (ALiBi, learned table, T5, NoPE) is refused here with
 * POSENC_ERR_UNSUPPORTED naming its scheme: posenc_model_read lists its
 * layers.
 * rope_scaling and rope_parameters (flat, or one dict per layer type) are
 * both read; `type` and `rope_type` are aliases ("su" = longrope, "mrope" =
 * default with sections). A key written twice: the last one wins (Python's
 * json) and POSENC_CONFIG_WARN_DUPLICATE_KEY names it in duplicate_key.
 *
 * GGUF (v2 and v3, little-endian): general.architecture, general.alignment,
 * and every <arch>.rope.* key llama.cpp's converter writes (docs/rope.md has
 * the list), with llama.cpp's per-architecture rules (deepseek2: mscale =
 * mscale_all_dim = yarn_log_multiplier / 0.1; mistral3: the multiplier is
 * stored without the 0.1; rope_freqs.weight = per-pair frequency divisors;
 * rope_factors_long/short = LongRoPE lists). A key written twice is an error
 * (as in ggml's reader).
 *
 * Both then go through posenc_rope_resolve, the same derivation the CLI's
 * flags use. */

/* Things a config gets wrong that still parse (bit flags in ->warnings). */
enum {
    POSENC_CONFIG_WARN_NO_THETA = 1u << 0,         /* rope_theta missing: the class default used */
    POSENC_CONFIG_WARN_NO_ORIGINAL = 1u << 1,      /* scaling without an original context */
    POSENC_CONFIG_WARN_FACTOR_MISMATCH = 1u << 2,  /* factor x original != max positions */
    POSENC_CONFIG_WARN_ODD_PASSTHROUGH = 1u << 3,  /* head_dim - rotary_dim is odd */
    POSENC_CONFIG_WARN_FREQ_TENSOR = 1u << 4,      /* GGUF rope_freqs tensor applied (per-pair
                                                      divisors, e.g. Llama 3.1) */
    POSENC_CONFIG_WARN_NO_MAX_POSITION = 1u << 5,  /* max position embeddings missing */
    POSENC_CONFIG_WARN_UNKNOWN_FAMILY = 1u << 6,   /* model_type not in the family table: read as
                                                      the family named by --assume / options
                                                      (never without it: unknown is refused) */
    POSENC_CONFIG_WARN_DUPLICATE_KEY = 1u << 7,    /* config.json key given twice (last kept) */
    POSENC_CONFIG_WARN_LLAMA3_FLAT = 1u << 8,      /* llama3 scaling with low_freq_factor ==
                                                      high_freq_factor (Llama 4 Scout): no blend
                                                      band; HF only warns, so does posenc */
    POSENC_CONFIG_WARN_UNUSED_KEYS = 1u << 9,      /* position-related keys posenc does not use
                                                      (posenc_model.unused_keys names them) */
    POSENC_CONFIG_WARN_TRANSFORMERS_DIVERGES = 1u << 10 /* transformers 5.18 reads this file differently
                                                      from the runtime the checkpoint was made for,
                                                      and posenc follows that runtime (DBRX's
                                                      attn_config.rope_theta: 5.18's DbrxConfig drops
                                                      it and rotates with 10000; PhiMoE's longrope:
                                                      5.18 never switches to long_factor; 4.x and the
                                                      models' own code do) */
};

typedef enum posenc_config_format {
    POSENC_CONFIG_HF_JSON = 0,
    POSENC_CONFIG_GGUF = 1
} posenc_config_format;

/* Which fields of a posenc_rope_params were stated (by a file or a flag)
 * rather than defaulted: posenc_rope_resolve derives only the others. */
enum {
    POSENC_ROPE_GIVEN_FACTOR = 1u << 0,        /* factor */
    POSENC_ROPE_GIVEN_ORIGINAL = 1u << 1,      /* original_max_position */
    POSENC_ROPE_GIVEN_CONTEXT_RATIO = 1u << 2  /* LONGROPE: factor := max_position /
                                                  original_max_position even if a factor
                                                  is given (HF's Phi-3 rule) */
};

/* The one derivation of a model's RoPE settings, used by the config readers
 * and by the CLI flags (HF's rules): YARN: original_max_position falls back to
 * max_position (warning NO_ORIGINAL), factor = max_position / original when
 * not given; LLAMA3: needs original_max_position, factor as YARN; LONGROPE:
 * factor = max_position / original when both are known and the factor was not
 * given (or CONTEXT_RATIO), original falls back to max_position; LINEAR, NTK,
 * DYNAMIC need a factor; NONE forces factor 1. *warnings (may be NULL) gets
 * POSENC_CONFIG_WARN_* bits ORed in. Then posenc_rope_check. */
POSENC_EXPERIMENTAL
POSENC_API posenc_status posenc_rope_resolve(posenc_rope_params *params, unsigned given, unsigned *warnings,
                                             posenc_error *err);

/* One kind of attention layer and the RoPE it uses (Gemma-3: full attention
 * with rope_theta 1e6 and the model's scaling; sliding attention with
 * rope_local_base_freq 1e4 unscaled). */
#define POSENC_CONFIG_MAX_LAYER_TYPES 4
typedef struct posenc_config_layer_type {
    char name[32];                  /* "full_attention", "sliding_attention" */
    int32_t layers;                 /* layers of this type (0 = unknown) */
    int64_t sliding_window;         /* attention window of these layers, 0 = whole context */
    posenc_rope_params rope;        /* factor lists point into the config's storage */
} posenc_config_layer_type;

typedef struct posenc_model_config {
    posenc_config_format format;
    char architecture[64];          /* model_type / general.architecture ("" if absent) */
    char family[32];                /* the family-table entry used ("" = a config naming no model:
                                       HF's generic rope keys, marked assumed) */
    char scaling_name[32];          /* scaling type as written ("" if none) */
    int32_t num_attention_heads;    /* 0 if absent */
    int32_t hidden_size;            /* 0 if absent */
    int32_t num_hidden_layers;      /* 0 if absent */
    int64_t max_position_embeddings;/* 0 if absent */
    posenc_layout layout;           /* the layout this architecture's runtime uses */
    int layout_known;               /* 0: architecture not in the built-in list (HALF assumed) */
    int32_t attention_head_dim;     /* channels of one q/k head as the runtime holds it
                                       (DeepSeek MLA: qk_nope + qk_rope = 192; GGUF MLA 576) */
    int32_t rotary_offset;          /* first rotated channel in that head: 0, or for MLA
                                       attention_head_dim - rope.head_dim (the rotated
                                       channels are the last ones) */
    int32_t softmax_head_dim;       /* d of the 1/sqrt(d) softmax scale (DeepSeek: 192) */
    double softmax_scale_factor;    /* extra multiplier on 1/sqrt(softmax_head_dim): DeepSeek's
                                       m(factor, mscale_all_dim)^2; 1 otherwise */
    int32_t mrope_sections[4];      /* Qwen2-VL M-RoPE sections (pairs per axis), 0 = none */
    int32_t mrope_interleaved;      /* 1: the sections interleave (Qwen3-VL: HF's
                                       apply_interleaved_mrope; GGUF IMROPE), 0: contiguous */
    unsigned warnings;              /* POSENC_CONFIG_WARN_* */
    unsigned rope_given;            /* POSENC_ROPE_GIVEN_* of `rope`, for re-resolving */
    char duplicate_key[64];         /* WARN_DUPLICATE_KEY: the (first) key given twice */
    char keys_used[256];            /* WARN_UNKNOWN_FAMILY: the keys read, comma-separated */
    char defaults_used[256];        /* absent keys filled from the family's class defaults,
                                       e.g. "rope_theta=1000000, head_dim=256" ("" = none) */
    posenc_rope_params rope;        /* the main (full attention) RoPE, ready for the RoPE
                                       functions; its factor lists point into factor_storage */
    int32_t layer_type_count;       /* 0: one kind of layer; else entries in layer_types
                                       ([0] is the same as `rope`) */
    posenc_config_layer_type layer_types[POSENC_CONFIG_MAX_LAYER_TYPES];
    double *factor_storage;         /* owned (short list, then long list) */
} posenc_model_config;

/* Parse config.json text (size bytes, need not be NUL-terminated). */
POSENC_EXPERIMENTAL
POSENC_API posenc_status posenc_config_parse_hf_json(const char *text, size_t size,
                                                     posenc_model_config *out, posenc_error *err);
/* Parse a GGUF image held in memory (size may cover only the header when the
 * file has no rope tensors: a truncated tensor section is fine, a truncated
 * key/value is not; a rope tensor outside the image is an error). */
POSENC_EXPERIMENTAL
POSENC_API posenc_status posenc_config_parse_gguf(const void *bytes, size_t size,
                                                  posenc_model_config *out, posenc_error *err);
/* Read a file: GGUF if it starts with "GGUF" (the header and the rope tensors
 * only, from disk, piece by piece), else config.json (at most max_bytes, 0 =
 * 64 MiB). */
POSENC_EXPERIMENTAL
POSENC_API posenc_status posenc_config_read(const char *path, size_t max_bytes,
                                            posenc_model_config *out, posenc_error *err);
/* Release what a parse/read allocated; NULL and zeroed structs are fine. */
POSENC_EXPERIMENTAL
POSENC_API void posenc_model_config_free(posenc_model_config *config);

/* ---- 8.1 A model as a list of layers -------------------------------------
 *
 * posenc_model_config above holds one RoPE (plus Gemma's layer kinds). A model
 * is more: each of its num_hidden_layers layers has its own position scheme.
 * posenc_model_read / posenc_model_parse_* fill one posenc_model: the config
 * above (unchanged meaning, its `rope` = the first RoPE variant) plus one
 * entry per layer:
 *
 *   ROPE     rotary: ropes[layer.rope] holds its params, layout, rotated
 *            channels and M-RoPE sections. Llama-style models: every layer;
 *            Gemma-2/3/3n: full vs sliding variants (two bases); SmolLM3 /
 *            Llama 4: no_rope_layers[i] == 1 (default: NoPE every 4th layer,
 *            (i+1) % no_rope_layer_interval == 0); Cohere2 and EXAONE 4 (with a
 *            sliding window): the sliding layers only; Qwen3-Next: the
 *            full_attention layers only.
 *   NOPE     no position encoding in this layer: a NoPE attention layer, or a
 *            layer without attention positions (mamba, linear attention:
 *            layer.kind says which). Jamba, Granite-4.0-H (position_embedding_type
 *            "nope") have no positions in any layer.
 *   ALIBI    linear biases: alibi_heads slopes from posenc_alibi_slopes_f64 (the
 *            library's own ALiBi schedule, section 5) with alibi_max_bias
 *            (BLOOM, MPT attn_config.alibi / alibi_bias_max, Falcon alibi,
 *            Baichuan-13B).
 *   LEARNED  a learned absolute table added to the token embeddings before
 *            layer 0 (GPT-2 "wpe", OPT "embed_positions" with offset 2: row =
 *            position + learned_offset, learned_size rows). Every layer is
 *            marked LEARNED: it sees the positions only through its input.
 *            Two stacks with a table each (BART): the encoder's in learned_*,
 *            the decoder's in decoder_learned_*.
 *   T5       relative buckets (t5: num_buckets, max_distance; bidirectional in
 *            the encoder layers, not in the decoder's self-attention), one
 *            bias table shared by the layers of each stack, or one per layer
 *            (UMT5: t5_bias_every_layer; t5_tensor names each table).
 *   SINUSOIDAL a fixed sinusoid table added to a stack's input (sinusoid,
 *            sinusoid_*: params, tensor, rows = position + offset; the
 *            decoder's own table in decoder_sinusoid_*).
 *   DEBERTA  DeBERTa's disentangled relative attention (deberta*: buckets,
 *            max relative positions, span, c2p / p2c; section 5.3b), with the
 *            learned absolute table too where position_biased_input is true
 *            (deberta_absolute, learned_*). relative_attention false: LEARNED
 *            (the absolute table only); neither: refused (no positions at all).
 *
 * An unknown model_type (config.json; also an architectures[0] class with no
 * family) or GGUF general.architecture is refused (POSENC_ERR_UNSUPPORTED),
 * the message naming it, the position-related keys found and the closest
 * known families ("... is not a model family posenc knows; position keys
 * found: rope_theta, max_position_embeddings; closest: llama, olmo, ..."):
 * never a silent guess. options->assume_family reads it as that family on
 * purpose (assumed = 1; POSENC_CONFIG_WARN_UNKNOWN_FAMILY; keys_used lists
 * what was read). A config naming no model at all (no model_type, no
 * architectures: a bare dict of HF rope keys) is read with HF's generic rules
 * (modeling_rope_utils, layout half) and is marked assumed too, assumed_family
 * "generic". A name holding a NUL (\u0000 in config.json, a NUL byte in a
 * GGUF string) is refused (POSENC_ERR_FORMAT) rather than truncated. */

typedef struct posenc_config_options {
    const char *assume_family;  /* NULL: refuse unknown models; else a model_type of the
                                   family table (config.json) or a GGUF architecture
                                   (posenc_config_family_name lists them) */
} posenc_config_options;

typedef enum posenc_layer_scheme {
    POSENC_LAYER_NOPE = 0,
    POSENC_LAYER_ROPE = 1,
    POSENC_LAYER_ALIBI = 2,
    POSENC_LAYER_LEARNED = 3,
    POSENC_LAYER_T5 = 4,
    POSENC_LAYER_SINUSOIDAL = 5, /* a fixed sinusoidal table added to the stack's input (Whisper's encoder; both
                                    stacks of Marian, Pegasus, M2M-100, NLLB-MoE, Speech2Text; XGLM) */
    POSENC_LAYER_DEBERTA = 6,    /* DeBERTa's disentangled relative attention (posenc_model.deberta*) */
    POSENC_LAYER_SINE_2D = 7,    /* DETR's fixed 2D sine table over the feature map (posenc_model.sine2d*) */
    POSENC_LAYER_WINDOW_RELATIVE = 8, /* a learned 2D relative bias inside a window of patches (Swin, SwinV2,
                                         Swin2SR, BEiT, LeViT: posenc_model.window_*; section 5.3c) */
    POSENC_LAYER_CONV_POSITION = 9,   /* a learned convolution of the features added to the encoder's input (wav2vec2
                                         and its kin: posenc_model.conv_pos_*) */
    POSENC_LAYER_ROPE_2D = 10         /* 2-D RoPE by patch row and column (vision encoders; posenc_model.rope2d) */
} posenc_layer_scheme;

/* "nope", "rope", "alibi", "learned", "t5", "sinusoidal", "deberta", "sine_2d", "window_relative", "conv_position",
 * "rope_2d"; "?" if unknown. */
POSENC_EXPERIMENTAL
POSENC_API const char *posenc_layer_scheme_name(posenc_layer_scheme scheme);

#define POSENC_MODEL_MAX_ROPES 4
typedef struct posenc_model_rope {
    char name[32];                  /* "rope", "full_attention", "sliding_attention" */
    posenc_rope_params params;      /* resolved; factor lists point into config.factor_storage */
    posenc_layout layout;           /* the runtime's pairing for these layers */
    int32_t rotary_dim;             /* R: rotated channels */
    int32_t attention_head_dim;     /* channels of the q/k head */
    int32_t rotary_offset;          /* first rotated channel (MLA: the last R channels) */
    posenc_mrope_sections mrope;    /* axes 0: plain 1-D RoPE */
    double dynamic_alpha;           /* Hunyuan: base = rope_theta * alpha^(d/(d-2)) already
                                       in params.base; 0 = none */
} posenc_model_rope;

typedef struct posenc_model_layer {
    posenc_layer_scheme scheme;
    int32_t rope;                   /* ROPE: index into ropes; else -1 */
    char kind[24];                  /* "attention", "full_attention", "sliding_attention",
                                       "linear_attention", "mamba", "encoder", "decoder" */
    int64_t sliding_window;         /* attention window, 0 = whole context */
} posenc_model_layer;

/* A position-dependent query scale ("attention temperature"): some runtimes
 * multiply each query vector by a factor that grows with its position, after
 * any rotation and before q.k (a per-token scalar, so it commutes with RoPE):
 *
 *   scale(p) = 1 + beta * ln(1 + floor((p + shift) / divisor))
 *
 * with p the token's position (0-based), floor the integer floor division.
 * scale is exactly 1 while p + shift < divisor, so short contexts are
 * unchanged. Which layers carry it:
 *   POSENC_QUERY_SCALE_ALL   every attention layer. Ministral 3 (HF
 *                            get_llama_4_attn_scale on position_ids: beta =
 *                            rope_parameters.llama_4_scaling_beta, divisor =
 *                            rope_parameters.original_max_position_embeddings,
 *                            shift 0; llama.cpp mistral3:
 *                            attention.temperature_scale, divisor its YaRN
 *                            original context).
 *   POSENC_QUERY_SCALE_NOPE  the NoPE attention layers only (layers whose
 *                            scheme is POSENC_LAYER_NOPE). Llama 4 with
 *                            attn_temperature_tuning (HF's Llama4TextAttention,
 *                            on the cache positions arange(seq) + past: beta =
 *                            attn_scale, divisor = floor_scale, shift 1;
 *                            llama.cpp llama4: 0.1, 8192, offset 1).
 * HF computes it in float32 (the quotient too, so positions past 2^24 can
 * floor differently there); posenc_query_scale_f64 is the exact-integer
 * floor and double arithmetic. */
typedef enum posenc_query_scale_layers {
    POSENC_QUERY_SCALE_NONE = 0, /* no query scale: every factor is 1 */
    POSENC_QUERY_SCALE_ALL = 1,  /* every attention layer */
    POSENC_QUERY_SCALE_NOPE = 2  /* the NoPE attention layers only */
} posenc_query_scale_layers;

typedef struct posenc_query_scale {
    posenc_query_scale_layers layers; /* which layers (NONE: the other fields are 0) */
    double beta;                      /* the log's multiplier (finite) */
    int64_t divisor;                  /* length the position is divided by (> 0) */
    int64_t shift;                    /* added to the position before the division */
} posenc_query_scale;

/* "none", "all", "nope"; "?" if unknown. */
POSENC_EXPERIMENTAL
POSENC_API const char *posenc_query_scale_layers_name(posenc_query_scale_layers layers);

/* out[i] = scale(positions[i]) as above, for i < count, in double: the floor
 * is exact integer division, then 1 + beta * log1p(k) (k >= 0), the product
 * not fused with the sum. layers NONE gives 1 everywhere (the other fields
 * unchecked). Errors: POSENC_ERR_NULL_POINTER for qs NULL, positions or out
 * NULL with count > 0; POSENC_ERR_INVALID_ARGUMENT (naming the value) for
 * beta not finite, divisor <= 0,
 * an unknown layers value, a position + shift that overflows int64 or is
 * negative (ln(1 + floor) of a negative quotient is -inf or NaN). */
POSENC_EXPERIMENTAL
POSENC_API posenc_status posenc_query_scale_f64(const posenc_query_scale *qs, const int64_t *positions, size_t count,
                                                double *out, posenc_error *err);

#define POSENC_MODEL_MAX_STAGES 8 /* stages of a windowed vision model (Swin: 4, Swin2SR: 6) */
/* One stage of a windowed vision model (posenc_model.window_stages, WINDOW_RELATIVE). */
typedef struct posenc_window_stage {
    int32_t depth;              /* layers (blocks) in the stage */
    int32_t heads;              /* attention heads: the table's columns */
    int32_t resolution_height;  /* patches a side the stage's layers see (at the config's image_size) */
    int32_t resolution_width;
    int32_t window_height;      /* the window its layers attend in and their tables are built for */
    int32_t window_width;
    int32_t shift;              /* the cyclic shift of its odd layers, 0 = none */
    int32_t pretrained_window;  /* SwinV2: the coordinates' divisor side (pretrained_window_sizes), 0 none */
    int64_t table_rows;         /* learned bias rows per head: posenc_window_table_rows(window, window_cls);
                                   LeViT: window_height^2 */
    int32_t query_stride;       /* LeViT subsample attention: queries on every query_stride-th patch of the window
                                   (posenc_window_abs_index_i64); 0: queries are the keys */
} posenc_window_stage;

#define POSENC_MODEL_MAX_LAYERS 65536
typedef struct posenc_model {
    posenc_model_config config;     /* as posenc_config_read fills it (rope = ropes[0]) */
    int assumed;                    /* 1: read as assumed_family on purpose */
    char assumed_family[32];
    int32_t rope_count;             /* variants in ropes (0: no RoPE layer) */
    posenc_model_rope ropes[POSENC_MODEL_MAX_ROPES];
    int32_t alibi_heads;            /* ALIBI: heads and slopes (owned, alibi_heads entries) */
    double alibi_max_bias;
    double *alibi_slopes;
    int alibi_before_scale;         /* 1: the bias is added to q.k BEFORE the 1/sqrt(head_dim) scale
                                       (HF Falcon): the effective slopes are alibi_slopes / sqrt(head_dim);
                                       0: added to the scaled scores (BLOOM, MPT, Baichuan) */
    char learned_tensor[64];        /* LEARNED: the table's tensor name */
    int64_t learned_offset;         /* row = position + offset (OPT: 2) */
    int64_t learned_size;           /* rows of the table */
    posenc_t5_params t5;            /* T5: buckets and distance (bidirectional: per layer kind) */
    int32_t layer_count;            /* entries in layers (0: the config states no layer count) */
    posenc_model_layer *layers;     /* owned */
    char unused_keys[512];          /* position-related keys present but not used, comma-separated */
    int64_t position_start;         /* the position id the runtime gives the first token: 0, or 1 for
                                       PaliGemma (its forward counts positions from 1) */
    /* SINUSOIDAL: the fixed table (posenc_sinusoid_table with these params, rows 0..sinusoid_size-1) that the
     * runtime adds to its stack's input, and the checkpoint tensor holding it. Whisper: T2T frequencies,
     * [sin | cos] halves (POSENC_LAYOUT_HALF), base 10000, dim d_model, max_source_positions rows, all of
     * them added (the encoder's input is exactly that long). A model with two stacks (encoder-decoder) lists
     * the encoder's layers first (kind "encoder"), then the decoder's (kind "decoder"), as T5 does. */
    posenc_sinusoid_params sinusoid;
    char sinusoid_tensor[64];
    int64_t sinusoid_size;
    /* LEARNED in an encoder-decoder model whose two stacks each own a table (BART, mBART, Blenderbot: never
     * shared): the decoder's table (row = position + decoder_learned_offset). The layers of kind "decoder" read it,
     * the others learned_*. decoder_learned_size 0 (every other model, Whisper included): every LEARNED layer
     * reads learned_*. */
    char decoder_learned_tensor[64];
    int64_t decoder_learned_offset;
    int64_t decoder_learned_size;
    /* The position-dependent query scale the runtime applies (see posenc_query_scale above; layers NONE: none).
     * Its layers say which of `layers` carry it: ALL = every attention layer, NOPE = those whose scheme is
     * POSENC_LAYER_NOPE and kind an attention kind. posenc's RoPE functions do not apply it: q x scale(p) is the
     * caller's (posenc_query_scale_f64). */
    posenc_query_scale query_scale;
    /* SINUSOIDAL beyond Whisper. The table's values are always posenc_sinusoid_table(sinusoid, row) for
     * row 0..size-1 (a row is its own position in the formula); these say which rows the runtime reads:
     *   row = position + sinusoid_offset (the encoder's, or the only stack's, table). Whisper, Marian, Pegasus: 0;
     *   fairseq-style tables (M2M-100, NLLB-MoE, Speech2Text): pad_token_id + 1, where "position" counts the
     *   non-padding tokens before this one (+ the cached length), and a padding token reads row sinusoid_zero_row;
     *   XGLM: 2 (position_ids + 2, whatever pad_token_id is: its padding tokens get no special row).
     * sinusoid_skips_padding: 1 where "position" counts the non-padding tokens only and a padding token reads
     *   sinusoid_zero_row (fairseq's create_position_ids_from_input_ids); 0: position = index + past.
     * sinusoid_zero_row: -1 none; else the row the runtime sets to all zeros (fairseq's padding_idx =
     *   pad_token_id; for XGLM with pad_token_id >= 2 that row is position pad_token_id - 2 of real tokens).
     * sinusoid_grows: 1 when the runtime rebuilds a longer table (same formula) once a position needs a row past
     *   sinusoid_size (fairseq's make_weights), so sizes are the initial rows, not a limit; 0: past it is an error.
     * sinusoid.mode says how the runtime computes the values: POSENC_MODE_TORCH_COMPAT for torch float32 tables
     *   (Whisper, fairseq-style: bit for bit in that mode), POSENC_MODE_PRECISE for numpy float64 tables rounded
     *   once to float32 (Marian, Pegasus: within 1 ulp in precise mode, tests/oracle/test_oracle_hf.py).
     * sinusoid_tensor "" and sinusoid_size 0: no table is stored; the runtime computes the rows of the positions it
     *   needs in each forward pass, without a limit (Pegasus-X, both stacks: decoder_sinusoid_size 0 too).
     * decoder_sinusoid_*: an encoder-decoder whose two stacks each own a fixed table (Marian, Pegasus, M2M-100,
     *   NLLB-MoE, Speech2Text), same params as `sinusoid`: the layers of kind "decoder" read this one (its rows
     *   position + decoder_sinusoid_offset; the same zero row and growth), the others sinusoid_*.
     *   decoder_sinusoid_size 0: every SINUSOIDAL layer reads sinusoid_* (Whisper: its decoder is LEARNED). */
    int64_t sinusoid_offset;
    int64_t sinusoid_zero_row;
    int32_t sinusoid_grows;
    int32_t sinusoid_skips_padding;
    char decoder_sinusoid_tensor[64];
    int64_t decoder_sinusoid_offset;
    int64_t decoder_sinusoid_size;
    /* DEBERTA (DeBERTa v1 "deberta", v2/v3 "deberta-v2", relative_attention true): every encoder layer adds the c2p
     * and/or p2c terms of section 5.3b, reading rows of one relative table (deberta_tensor, 2 x deberta_span rows,
     * shared by the layers) at posenc_deberta_index of r = query - key. deberta.max_relative_positions is resolved
     * (the config's value < 1 means max_position_embeddings); deberta.position_buckets 0 = none. */
    posenc_deberta_params deberta;
    int32_t deberta_span;           /* posenc_deberta_span(&deberta): the table has 2 x span rows */
    int32_t deberta_c2p;            /* 1: pos_att_type holds "c2p" (content -> position) */
    int32_t deberta_p2c;            /* 1: pos_att_type holds "p2c" (position -> content) */
    int32_t deberta_share_att_key;  /* 1: v2 share_att_key: the position terms reuse query_proj / key_proj */
    int32_t deberta_norm_rel_ebd;   /* 1: v2 norm_rel_ebd "layer_norm": the table passes a LayerNorm first */
    int32_t deberta_absolute;       /* 1: position_biased_input: the learned absolute table learned_* (rows = positions
                                       0.., learned_size rows) is ALSO added to the input before layer 0 */
    char deberta_tensor[64];        /* "deberta.encoder.rel_embeddings.weight" */
    /* T5: which self-attention layers own a bias table (num_buckets rows x heads, row = posenc_t5_bucket of
     * key - query, bidirectional in the encoder's layers only; the decoder's cross-attention has no bias).
     * t5_bias_every_layer 0 (T5, mT5, Switch Transformers, Pop2Piano): block 0 of each stack owns the table and
     * computes the bias, the stack's later blocks add that same bias; 1 (UMT5): every block of both stacks owns its
     * own table. t5_tensor: the checkpoint tensor of a layer's table, with "{stack}" = the layer's kind ("encoder" /
     * "decoder") and "{block}" = the block index inside its stack (the layer's index minus the encoder's layer
     * count for a decoder layer), replaced by 0 where t5_bias_every_layer is 0:
     * "{stack}.block.{block}.layer.0.SelfAttention.relative_attention_bias.weight". "" for other schemes. */
    int32_t t5_bias_every_layer;
    char t5_tensor[96];
    /* LEARNED over an image (ViT-style vision encoders: ViT, DeiT, ViT-MSN, I-JEPA, DINOv2 (with registers), the
     * vision towers of CLIP, Chinese-CLIP, CLIPSeg, MetaCLIP 2, X-CLIP, OWL-ViT, OWLv2, SigLIP, GIT, Kosmos-2, BLIP,
     * BLIP-2, InstructBLIP(Video), AIMv2 (not native), TIPSv2). patch_grid_height 0: not an image model
     * (the other patch_* fields are 0). Else the image (square: patch_image_size pixels a side, the config's
     * image_size) is cut into patch_grid_height x patch_grid_width patches of patch_size pixels (image_size //
     * patch_size a side) and the runtime's sequence before layer 0 is
     *   [patch_prefix_rows leading tokens (CLS; DeiT: CLS, distillation; SigLIP, I-JEPA: none)]
     *   [patch_prefix_plain tokens with NO position row (DINOv2 with registers, TIPSv2: the register tokens)]
     *   [the patches in raster order: patch p = y * patch_grid_width + x, y the patch row from the top]
     * Token t < patch_prefix_rows reads row t of the learned table learned_*; patch p reads row
     * patch_prefix_rows + p; the plain tokens read none. learned_size = patch_prefix_rows + grid_h * grid_w,
     * learned_offset 0 (a "position" here is that row). This describes the table at the config's image_size
     * only: an image of another size makes the runtime resize the patch rows (bicubic, F.interpolate), which
     * posenc does not describe. patch_resize says when: 0 = never (AIMv2: another size is an error); 1 = only with
     * forward(interpolate_pos_encoding=True), an error otherwise; 2 = by default (DINOv2, TIPSv2: always, for any
     * image size other than the table's or a non-square image; CLIPSeg: interpolate_pos_encoding defaults true);
     * 3 = BLIP, BLIP-2, InstructBLIP(Video): with interpolate_pos_encoding=True, else the table's first rows are
     * added as they are (a smaller image reads rows 0..n-1 unchanged, a larger one is an error). */
    int64_t patch_image_size;
    int64_t patch_size;
    int64_t patch_grid_height;
    int64_t patch_grid_width;
    int32_t patch_prefix_rows;
    int32_t patch_prefix_plain;
    int32_t patch_resize;
    /* WINDOW_RELATIVE (Swin, Donut-Swin, MaskFormer-Swin, SwinV2, Swin2SR, BEiT, Data2Vec-Vision, LeViT; 5.18):
     * each attention layer adds to q.k, for query patch i and key patch j of its window, a per-head bias read from
     * a learned table at row posenc_window_relative_index_i64(window_height, window_width, window_cls)[i][j]
     * (section 5.3c). The layers are grouped in window_stage_count stages (BEiT: one); layers are listed stage by
     * stage, window_stages[s].depth of them each, kind "window" (even blocks) or "shifted_window" (odd blocks whose
     * windows the runtime rolls by the stage's shift before partitioning; 0 where the stage fits in one window);
 * BEiT's layers are kind "attention". Refused by name: a Swin / Donut-Swin stage, or Swin2SR's grid, smaller than
 * window_size (the run's windows no longer match its tables and it fails), a SwinV2 pretrained_window_sizes entry of
 * 1 or a list shorter than the stages, use_absolute_embeddings true in
 * Donut-Swin, MaskFormer-Swin, SwinV2, Swin2SR (a num_patches + 1 row table for num_patches tokens: the forward
 * fails), a list window_size, more than POSENC_MODEL_MAX_STAGES stages.
     * Everything describes the model at the config's image_size (its patch grid image_size // patch_size).
     *   Swin, Donut-Swin, MaskFormer-Swin: a table of (2W - 1)^2 rows per layer, W = window_size in every stage.
     *   SwinV2, Swin2SR (window_continuous 1): no stored table: an MLP maps posenc_window_log_coords_f32(W, W, P, P)
     *     (P = the stage's pretrained window, 0 none) to the (2W - 1)^2 rows; W = min(stage resolution, window_size).
     *   BEiT, Data2Vec-Vision (window_cls 1): one window over the whole patch grid plus the CLS token, (2Wh - 1)
     *     (2Ww - 1) + 3 rows; each layer its own table (use_relative_position_bias), and/or one table in the
     *     encoder added in every layer (window_shared: use_shared_relative_position_bias).
     * window_absolute 1: a learned absolute table is also added to the patch embeddings before layer 0: learned_*
     * with patch_* over [patch_prefix_rows CLS rows, the patches in raster order] (Swin: no CLS; BEiT: CLS). */
    int32_t window_stage_count;     /* 0: not a windowed model */
    posenc_window_stage window_stages[POSENC_MODEL_MAX_STAGES];
    int32_t window_cls;             /* 1: BEiT's CLS entries (3 more rows) */
    int32_t window_continuous;      /* 1: SwinV2 / Swin2SR: the rows come from an MLP over log-spaced coordinates */
    int32_t window_absolute;        /* 1: the learned absolute table learned_* / patch_* is added too */
    int32_t window_shared;          /* 1: BEiT: one table in the encoder, its bias added in every layer */
    int32_t window_per_layer;       /* 1: each layer owns a table (Swin-family always; BEiT use_relative_position_bias) */
    int32_t window_abs_offsets;     /* 1: LeViT: the rows are posenc_window_abs_index_i64's (|dy|, |dx|) over the whole
                                       grid; its stages alternate attention (kind "attention", query_stride 0) and one
                                       "subsample_attention" layer (query_stride > 0, the next stage's grid the query
                                       grid) */
    /* CONV_POSITION (wav2vec2, HuBERT, UniSpeech, UniSpeech-SAT, data2vec-audio, SEW, WavLM; transformers 5.18's
     * *PositionalConvEmbedding): the encoder computes P = conv_position(X) from its own input features X [T, hidden]
     * and adds it, X + P, before layer 0 (before the encoder's LayerNorm, or with do_stable_layer_norm before the
     * first layer's); every encoder layer is listed CONV_POSITION. There is no position index anywhere: order enters
     * only through the convolution's kernel, whose weights are the checkpoint's (nothing for posenc to compute).
     * conv_position is conv_pos_layers repeats (data2vec-audio: num_conv_pos_embeddings; else 1) of
     *   y = Conv1d(hidden -> hidden, kernel conv_pos_kernel, groups conv_pos_groups, stride conv_pos_stride,
     *              zero padding conv_pos_padding frames on each side) over the time axis,
     *   then drop the last conv_pos_trim frames (1 for an even kernel: "same" length; 0 for an odd one),
     *   then conv_pos_norm, then the activation conv_pos_activation (the config's feat_extract_activation, "gelu").
     * conv_pos_norm: 0 = the conv weight is weight-normed (weight_norm dim=2: g * v / |v| per kernel tap);
     *   1 = BatchNorm1d over the channels of the INPUT before the conv, no weight norm (HuBERT conv_pos_batch_norm);
     *   2 = LayerNorm without affine over the channels after the conv and trim, before the activation, no weight
     *   norm (data2vec-audio, each layer).
     * conv_pos_stride > 1 (SEW: squeeze_factor): the input is also average-pooled by conv_pos_stride
     *   (AvgPool1d(s, s)) and the sum is pooled + P over the shorter of the two lengths; the layers run on T / s
     *   frames, and the encoder upsamples afterwards.
     * conv_pos_tensor: the module's checkpoint prefix ("encoder.pos_conv_embed"; the conv under ".conv", data2vec's
     *   under ".layers.N.conv"). conv_pos_layers 0: not a CONV_POSITION model (the other conv_pos_* are 0 / ""). */
    int32_t conv_pos_kernel;
    int32_t conv_pos_groups;
    int32_t conv_pos_layers;
    int32_t conv_pos_padding;
    int32_t conv_pos_trim;
    int32_t conv_pos_stride;
    int32_t conv_pos_norm;
    char conv_pos_activation[32];
    char conv_pos_tensor[64];
    /* WavLM (CONV_POSITION layers that ALSO add a gated relative position bias; wavlm_num_buckets 0: none). Layer 0's
     * attention owns rel_attn_embed [wavlm_num_buckets, heads] (wavlm_tensor) and computes the bias
     * B[h][q][k] = rel_attn_embed[posenc_wavlm_bucket(k - q)][h] (5.2b: num_buckets, max_bucket_distance), and every
     * layer (0 included) adds g[h][q] x B[h][q][k] to its scaled q.k logits, g = a x (b x c[h] - 1) + 2 with a, b the
     * sigmoids of the layer's own gru_rel_pos_linear of the query token's features and c its gru_rel_pos_const: a
     * gate computed from the content, which posenc does not compute (the buckets and the ungated B are posenc's). */
    int32_t wavlm_num_buckets;
    int32_t wavlm_max_distance;
    char wavlm_tensor[96];
    /* ROPE_2D (vision encoders whose every attention layer rotates each patch by its (row, column) in the image's
     * patch grid: Pixtral, the vision towers of Qwen2-VL and its copies): the rotation (section 4c) of every such
     * layer, over that image's own grid (height / rope2d_patch_size rows, width / rope2d_patch_size columns: no
     * table, no size limit), in the token order rope2d.merge gives. rope2d.mode is PRECISE as read; set
     * TORCH_COMPAT to reproduce the runtime's float32 bits. rope2d.head_dim 0: no ROPE_2D layer. */
    posenc_rope2d_params rope2d;
    int64_t rope2d_patch_size;      /* pixels a patch side (the config's patch_size) */
    /* rope2d_merge_per_image 1: the runtime takes the merge size with each image at run time (VideoLLaMA3's
     * forward(merge_sizes=...)), not from the config: rope2d.merge is 1 as read and the caller sets it per image. */
    int32_t rope2d_merge_per_image;
    /* rope2d_lead tokens come before the patches (MLCD: the CLS token) and rotate by learned angles, the checkpoint
     * tensor rope2d_lead_tensor (D/2 angles, HF's cos(cat(a, a))): values posenc cannot compute, named here. */
    int32_t rope2d_lead;
    char rope2d_lead_tensor[64];
    /* A learned position table the runtime ALSO adds to the patch embeddings before layer 0, resized to each image's
     * grid by interpolation (Qwen3-VL: bilinear over pos_embed; GLM-4V: bicubic grid_sample; PaddleOCR-VL:
     * bilinear): posenc does not describe its values; "" = none. */
    char rope2d_table[64];
    /* rope2d_plain tokens come before the patches (after the rope2d_lead ones) and are not rotated at all (DINOv3:
     * CLS and the num_register_tokens registers: its apply function rotates the last rows * cols tokens only). */
    int32_t rope2d_plain;
    /* SINE_2D (DETR-style detection / segmentation models: DETR, Conditional DETR, DAB-DETR, Deformable DETR, Table
     * Transformer, MaskFormer, Mask2Former; RT-DETR, RT-DETR v2, D-FINE in the RTDETR layout, added to q and k of the
     * hybrid encoder's AIFI layers; the convolutional or Swin backbone's own positions are not described).
     * sine2d: the table posenc_sine2d_table_f32 computes for a feature map of H x W
     * (mode TORCH_COMPAT: the framework builds it in float32), for an image without padding; the runtime adds it
     * (flattened to [H*W][2F]) to the queries of every "encoder" layer's self-attention (and to its keys where it
     * attends densely: not in the deformable encoders of Deformable DETR and Mask2Former, which sample at offsets
     * computed from the query) and to the keys of every "decoder" layer's cross-attention (the encoder's output).
     * A "scaled_encoder" layer (DAB-DETR) adds the table times a per-token, per-channel scale that a learned MLP
     * computes from the layer's input (DabDetrEncoder.query_scale): posenc gives the table, not that product. H x W is the backbone's feature map, which no
     * config key gives: the caller passes it. sine2d_module: where the framework computes it (Mask2Former: also
     * model.transformer_module.position_embedder, same parameters). sine2d_levels > 0 (Deformable DETR,
     * Mask2Former's pixel decoder): the encoder's input stacks that many maps, each with its own sine table plus row
     * `level` of the learned table sine2d_level_tensor ([levels][2F]); 0: one map, no level table (""). */
    posenc_sine2d_params sine2d;
    char sine2d_module[64];
    int32_t sine2d_levels;
    char sine2d_level_tensor[64];
} posenc_model;

/* Read / parse a model (as posenc_config_read / _parse_hf_json / _parse_gguf;
 * options may be NULL). On failure *out is empty (free is still fine). */
POSENC_EXPERIMENTAL
POSENC_API posenc_status posenc_model_read(const char *path, size_t max_bytes, const posenc_config_options *options,
                                           posenc_model *out, posenc_error *err);
POSENC_EXPERIMENTAL
POSENC_API posenc_status posenc_model_parse_hf_json(const char *text, size_t size,
                                                    const posenc_config_options *options, posenc_model *out,
                                                    posenc_error *err);
POSENC_EXPERIMENTAL
POSENC_API posenc_status posenc_model_parse_gguf(const void *bytes, size_t size, const posenc_config_options *options,
                                                 posenc_model *out, posenc_error *err);
/* Release what a read/parse allocated; NULL and zeroed structs are fine. */
POSENC_EXPERIMENTAL
POSENC_API void posenc_model_free(posenc_model *model);

/* The families posenc knows: i-th name of the config.json family table
 * (format POSENC_CONFIG_HF_JSON) or of the GGUF architecture table; NULL past
 * the end. */
POSENC_EXPERIMENTAL
POSENC_API const char *posenc_config_family_name(posenc_config_format format, size_t i);

/* ========================================================================
 * 9. Kernels, threads and dispatch
 * ======================================================================== */
/* Every fast kernel exists in three builds of the same arithmetic: portable
 * scalar C, AVX2 (+FMA, F16C) and AVX-512 (F, BW, DQ, VL). The best one the
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
    POSENC_PATH_AVX2 = 2,   /* x86-64 AVX2 + FMA + F16C */
    POSENC_PATH_AVX512 = 3  /* x86-64 AVX-512 F/BW/DQ/VL */
} posenc_kernel_path;

#define POSENC_MAX_THREADS 256

/* A set of worker threads kept alive between calls (ggml's threadpool idea).
 * Without one, each threaded call starts and joins its own threads, which
 * costs ~50-80 us per call on a 2-vCPU VM (measured: docs/benchmarks.md); a
 * caller making many calls (an inference loop, a benchmark) creates one pool
 * and puts it in posenc_exec.pool. Calls that share a pool take turns (a
 * mutex); results never depend on whether a pool is used. After a job the
 * workers poll for a moment (~80 us here) before sleeping (so back-to-back calls find them
 * awake); an idle pool uses no CPU. Not to be used from inside a posenc work
 * function (none of the library's do). */
typedef struct posenc_threadpool posenc_threadpool;

/* Start a pool of `threads` workers in all, the calling thread included (so
 * threads - 1 helper threads; 0 = the usable cores, posenc_cpu_count), 1..
 * POSENC_MAX_THREADS. *out receives the pool; free it with
 * posenc_threadpool_free. Errors: threads out of range (INVALID_ARGUMENT), out
 * of memory or threads that cannot be started (OUT_OF_MEMORY; nothing is
 * left running). */
POSENC_API posenc_status posenc_threadpool_create(int32_t threads, posenc_threadpool **out,
                                                  posenc_error *err);
/* Stop and join the helper threads, free the pool. NULL is a no-op. The pool
 * must not be in use by another call. */
POSENC_API void posenc_threadpool_free(posenc_threadpool *pool);
/* Workers in the pool, the caller's thread included (0 for NULL). */
POSENC_API int32_t posenc_threadpool_size(const posenc_threadpool *pool);

/* Where the time of one threaded call went (docs/kernels.md, "Two threads"):
 * point posenc_exec.trace at a caller-owned struct and the call's parallel
 * loop fills it (the last loop, for the few calls that run more than one).
 * Times are CLOCK_MONOTONIC nanoseconds. Workers (0 = the calling thread)
 * claim pieces of the rows until none is left, so a late or slow worker does
 * fewer rows. For worker i: start_ns[i] - submit_ns is its start latency
 * (thread start or pool wake-up), end_ns[i] - start_ns[i] its work (claiming
 * and running its pieces), done_ns - end_ns[i] its wait for the slowest, and
 * items[i] the rows it did (0 if the others took every piece). Only the first
 * POSENC_TRACE_MAX_CHUNKS workers are recorded. Tracing costs two clock reads
 * per worker; results are unchanged. */
#define POSENC_TRACE_MAX_CHUNKS 16
typedef struct posenc_exec_trace {
    int32_t chunks;  /* workers the loop ran on (= threads used) */
    int32_t pooled;  /* 1: ran on posenc_exec.pool; 0: threads started for the call */
    int64_t submit_ns, done_ns;
    int64_t start_ns[POSENC_TRACE_MAX_CHUNKS], end_ns[POSENC_TRACE_MAX_CHUNKS];
    size_t items[POSENC_TRACE_MAX_CHUNKS]; /* rows/tokens each worker did */
} posenc_exec_trace;

/* How one call executes. Initialise with posenc_exec_default. */
typedef struct posenc_exec {
    int32_t threads;         /* worker threads 1..POSENC_MAX_THREADS; 0 = POSENC_THREADS if
                                set, else the pool's size if pool is set, else the
                                usable cores (posenc_cpu_count). Small jobs use fewer. */
    posenc_kernel_path path; /* AUTO, or force one path (POSENC_ERR_UNSUPPORTED if the CPU
                                or this build lacks it) */
    posenc_threadpool *pool; /* NULL: start threads per call; else run on the pool's workers
                                (at most its size, whatever threads says) */
    posenc_exec_trace *trace; /* NULL, or filled with the call's per-thread timeline */
} posenc_exec;

/* threads = 0, path = AUTO, pool = NULL, trace = NULL. */
POSENC_API void posenc_exec_default(posenc_exec *exec);
/* "auto", "scalar", "avx2", "avx512"; "?" if unknown. */
POSENC_API const char *posenc_kernel_path_name(posenc_kernel_path path);
/* Parse one of the names above into *out (POSENC_ERR_INVALID_ARGUMENT names the text). */
POSENC_API posenc_status posenc_kernel_path_parse(const char *name, posenc_kernel_path *out,
                                                  posenc_error *err);
/* 1 if this CPU and build can run `path` (AUTO and SCALAR always), else 0. */
POSENC_API int posenc_kernel_path_supported(posenc_kernel_path path);
/* The CPU cores this process may use (>= 1, at most POSENC_MAX_THREADS): the
 * online cores, fewer when the process's affinity mask (taskset, a cpuset) or
 * its cgroup's CPU quota (cgroup v2 cpu.max or v1 cfs quota: docker --cpus,
 * Kubernetes limits; rounded up to whole cores) allows fewer. Read once per
 * process. The default thread count of every exec and of the lab. */
POSENC_API int32_t posenc_cpu_count(void);
/* Resolve exec (NULL = defaults) against the environment and the CPU: *out gets a
 * concrete path and thread count >= 1. Errors: unknown path or bad POSENC_KERNEL_PATH /
 * POSENC_THREADS text (INVALID_ARGUMENT), forced path not supported (UNSUPPORTED),
 * threads outside 0..POSENC_MAX_THREADS (INVALID_ARGUMENT). */
POSENC_API posenc_status posenc_exec_resolve(const posenc_exec *exec, posenc_exec *out,
                                             posenc_error *err);

/* posenc_sinusoid_table with explicit execution options (exec may be NULL).
 * Precise mode on a contiguous range of positions runs the fast path: rows are cut
 * in blocks of 1024, each block starts from the double-double (~106-bit) sin/cos
 * of its first position, an anchor every 64 rows is advanced by a double-double
 * rotation, and the rows between anchors by a double-precision rotation
 * (vectorized across pairs, same operations on every path, so every path and
 * thread count gives the same bits). Ranges reaching |p| >= 2^53 or |p w| >= 2^40
 * are evaluated per element with sinl/cosl. The recurrence adds
 * < 64 * 2.3e-16 absolute to the double values, below half an f32 ULP for any
 * |value| > 2^-20. Explicit positions and torch-compat mode are evaluated directly
 * per element (threaded). Large f32/f64 outputs are written with streaming stores.
 * Fresh buffers: the first write to each page of a new allocation is a page
 * fault (~13 us per 4 KiB page on this project's VM: an 8192 x 1024 f32 table
 * into fresh malloc memory took 88 ms, 20x the compute). The kernels' threads
 * each write their own rows, so those faults are already spread over the
 * threads; what removes them is (1) reusing the buffer across calls, or (2) a
 * 2 MiB-aligned buffer advised madvise(MADV_HUGEPAGE) before the first write
 * (one fault per 2 MiB: 4.0 ms for that table), which posenc_array_create does
 * for arrays of 4 MiB or more. A caller that cannot do either can pre-fault
 * its buffer in its own worker threads before timing-critical calls. */
POSENC_API posenc_status posenc_sinusoid_table_exec(const posenc_sinusoid_params *params,
                                                    const posenc_positions *positions,
                                                    posenc_dtype dtype, void *out,
                                                    size_t out_count, const posenc_exec *exec,
                                                    posenc_error *err);
/* A sinusoid plan: the part of posenc_sinusoid_table_exec that does not depend
 * on the output, done once for calls that repeat the same table (an inference
 * or training loop that rebuilds it, a benchmark): the frequencies, the
 * recurrence's steps and the double-double (sin, cos) every 64-row chunk starts
 * from (16 bytes per pair per 64 rows: 1 MiB for 8192 x 1024). A planned table
 * has the same bits as posenc_sinusoid_table_exec on every path and thread count,
 * and spreads its rows over the threads in 64-row chunks (not 1024-row blocks),
 * so a late worker costs less. For precise mode over a range of positions
 * (positions_range) that the recurrence covers (|p| < 2^53, |p w| < 2^40); other
 * tables are refused with POSENC_ERR_UNSUPPORTED naming why (use
 * posenc_sinusoid_table_exec for them). exec (may be NULL) runs the anchors; the
 * plan may then be used with any exec. Free with posenc_sinusoid_plan_free; a
 * plan is read-only once made, so several threads may use one at once. */
typedef struct posenc_sinusoid_plan posenc_sinusoid_plan;
POSENC_API posenc_status posenc_sinusoid_plan_create(const posenc_sinusoid_params *params,
                                                     const posenc_positions *positions,
                                                     const posenc_exec *exec,
                                                     posenc_sinusoid_plan **out, posenc_error *err);
/* The plan's table [count x dim] in dtype (f32, f64, f16, bf16) into out
 * (out_count >= count x dim, else BUFFER_TOO_SMALL). */
POSENC_API posenc_status posenc_sinusoid_plan_table(const posenc_sinusoid_plan *plan, posenc_dtype dtype,
                                                    void *out, size_t out_count,
                                                    const posenc_exec *exec, posenc_error *err);
/* NULL is a no-op. */
POSENC_API void posenc_sinusoid_plan_free(posenc_sinusoid_plan *plan);
/* posenc_rope_apply_f32/_f16/_bf16 (section 4) with the data dtype as a
 * parameter (F32, F16 or BF16 bits) and explicit execution options (exec may be
 * NULL). All apply functions (plain, shift, exec, multi-axis) run the same
 * checks with the same messages (views, layout, the torch-compat float32
 * angle) and share one driver: tokens are split across threads
 * in blocks of 512, cos/sin are computed once per (token, pair) and reused for
 * every head, and the rotation runs 8 (AVX2) or 16 (AVX-512) channels at a time
 * for both layouts and every dtype (bf16 by bit shifts, f16 by F16C). In
 * precise mode cos/sin come from the sinusoid fast path's anchored rotation,
 * restarted at each run of consecutive ids (a lone id is a run of one,
 * evaluated in double after a double-double reduction), for |p| < 2^53 and
 * |p w| < 2^40; other positions are evaluated per pair in long double. All
 * give the correctly rounded floats, so a token's values never depend on how
 * calls are cut.
 * The same values on every path and thread count, so results are
 * bit-identical across them, and so is a POSENC_ERR_NONFINITE report (the
 * first bad cell, section 4). */
POSENC_API posenc_status posenc_rope_apply_exec(const posenc_rope_params *params, int64_t seq_len,
                                                posenc_layout layout, const posenc_rope_view *view,
                                                const int64_t *positions, int inverse,
                                                posenc_dtype dtype, void *x, size_t x_count,
                                                const posenc_exec *exec, posenc_error *err);
/* A RoPE plan: the part of posenc_rope_apply_exec that depends on params and
 * seq_len alone, done once for calls that repeat one configuration. A
 * decoding loop rotates one token's q and k per layer per step; unplanned, each
 * such call re-checks params and recomputes the frequencies (in long double,
 * ~5 us at 64 pairs) for ~0.3 us of rotation. The plan
 * keeps the checked params, the frequencies and, in precise mode, the
 * double-double steps of the cos/sin recurrence (16 doubles per pair).
 * seq_len matters only under dynamic NTK, whose base follows it: make a new
 * plan when it changes there. A plan is read-only once made, so several
 * threads may apply one at once. Errors: those of posenc_rope_check (params),
 * OUT_OF_MEMORY. On failure *out is NULL. */
typedef struct posenc_rope_plan posenc_rope_plan;
POSENC_API posenc_status posenc_rope_plan_create(const posenc_rope_params *params, int64_t seq_len,
                                                 posenc_rope_plan **out, posenc_error *err);
/* posenc_rope_apply_exec(params, seq_len, layout, view, positions, inverse,
 * dtype, x, x_count, exec) for the plan's params and seq_len: the same checks
 * and messages, and the same bits on every path and thread count. Only the
 * set-up is saved; each call still computes its tokens' cos/sin (a token
 * alone ~0.25 us at 64 pairs; one decoding token of 32 heads x 128 takes
 * ~0.7-0.9 us in all, against ~6 us unplanned: docs/benchmarks.md). Errors:
 * apply_exec's, and NULL_POINTER for a NULL plan. */
POSENC_API posenc_status posenc_rope_plan_apply(const posenc_rope_plan *plan, posenc_layout layout,
                                                const posenc_rope_view *view, const int64_t *positions,
                                                int inverse, posenc_dtype dtype, void *x, size_t x_count,
                                                const posenc_exec *exec, posenc_error *err);
/* NULL is a no-op. */
POSENC_API void posenc_rope_plan_free(posenc_rope_plan *plan);
/* posenc_alibi_bias_f32 / posenc_t5_bias_f32 (section 5) with explicit
 * execution options (exec may be NULL). When queries and keys are both ranges
 * (the usual prefill and cached decoding) each head's [Lq, Lk] plane depends on
 * k - q only: one vector of Lq + Lk - 1 values per head is computed with the
 * reference formula and rows are copied out of it (threads over rows, streaming
 * stores on AVX2/AVX-512), bit-identical to the element-by-element definition. */
POSENC_API posenc_status posenc_alibi_bias_f32_exec(const float *slopes, int32_t heads,
                                                    posenc_alibi_form form,
                                                    const posenc_positions *queries,
                                                    const posenc_positions *keys, float *out,
                                                    size_t out_count, const posenc_exec *exec,
                                                    posenc_error *err);
POSENC_API posenc_status posenc_t5_bias_f32_exec(const posenc_t5_params *params, const float *table,
                                                 int32_t heads, const posenc_positions *queries,
                                                 const posenc_positions *keys, float *out,
                                                 size_t out_count, const posenc_exec *exec,
                                                 posenc_error *err);

#ifdef __cplusplus
}
#endif
#endif /* POSENC_H */
