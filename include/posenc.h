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
POSENC_API const char *posenc_angle_formation_name(posenc_angle_formation formation);

/* What a table (or a set of rotation angles) looks like, estimated from the
 * data alone. Filled by posenc_fit_sinusoid_table / posenc_fit_rope_angles;
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
POSENC_API posenc_status posenc_fit_sinusoid_table(const posenc_array *table, double noise,
                                                   posenc_sinusoid_fit *out, posenc_error *err);
/* Recover RoPE rotation angles from an input x and its rotated output y
 * ([T, D] or [T, H, D], same shape): detects the rotated channel count
 * (trailing unchanged channels are pass-through), the layout (the pairing that
 * preserves pair norms), the amplitude (attention scaling), and fits the angles
 * per position like posenc_fit_sinusoid_table. */
POSENC_API posenc_status posenc_fit_rope_angles(const posenc_array *x, const posenc_array *y,
                                                posenc_sinusoid_fit *out, posenc_error *err);
POSENC_API void posenc_sinusoid_fit_free(posenc_sinusoid_fit *fit);

/* RoPE cos/sin caches ([T, D] each, as HF LlamaRotaryEmbedding returns them)
 * as a [T, 2K] table [sin(k=0..K-1) | cos(k=0..K-1)] (half layout, float64)
 * that the fit and health functions understand. The caches may repeat each
 * angle in both halves ([c0..cK-1, c0..cK-1], HF rotate_half: *out_repeat =
 * POSENC_LAYOUT_HALF), on both channels of a pair ([c0 c0 c1 c1 ..], GPT-J /
 * lucidrains: POSENC_LAYOUT_INTERLEAVED), or not at all (K = D, *out_repeat =
 * -1). Attention scaling folded into the caches shows up as the fit's amplitude. */
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
POSENC_API posenc_status posenc_analyze_table(const posenc_array *table,
                                              const posenc_health_options *options,
                                              posenc_health *out, posenc_error *err);
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
POSENC_API posenc_status posenc_precision_audit(const posenc_sinusoid_params *params,
                                                posenc_dtype dtype, int64_t max_pos,
                                                posenc_precision_report *out, posenc_error *err);
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
#define POSENC_DIFF_TEXT 320

typedef struct posenc_finding {
    posenc_finding_kind kind;
    const char *key;                /* stable name, e.g. "offset", "layout" (docs/analysis.md) */
    double value;
    char text[POSENC_DIFF_TEXT];    /* one sentence, e.g. "B = A shifted by 2 positions ..." */
} posenc_finding;

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
    posenc_sinusoid_fit fit_a, fit_b;
    char preset_a[POSENC_DIFF_TEXT], preset_b[POSENC_DIFF_TEXT]; /* "" if none */
    int finding_count;
    posenc_finding findings[POSENC_DIFF_MAX_FINDINGS];
    int explained;            /* 1 if the findings account for every difference */
    char summary[2 * POSENC_DIFF_TEXT];
} posenc_diff_report;

/* Compare two tables and diagnose the difference. Shapes may differ (prefix,
 * transposed and offset are tested); when they differ and no relation explains
 * it the result is POSENC_ERR_INVALID_ARGUMENT whose message names both shapes.
 * options may be NULL. Release with posenc_diff_report_free. */
POSENC_API posenc_status posenc_diff_tables(const posenc_array *a, const posenc_array *b,
                                            const posenc_diff_options *options,
                                            posenc_diff_report *out, posenc_error *err);
POSENC_API void posenc_diff_report_free(posenc_diff_report *report);

/* ---- 7f. is a position signal present? (`posenc signal`) ---- */
typedef struct posenc_signal_report {
    int present;               /* 1 if the inputs differ from scale*tokens by a position-dependent term */
    double token_scale;        /* least-squares a in inputs = a*tokens + S (sqrt(d) in the tutorial) */
    int scale_is_sqrt_dim;     /* a within 1% of sqrt(channels) */
    double signal_rms;         /* root mean square of S */
    double signal_row_spread;  /* rms of S minus its mean row, over rms of S (0 = constant) */
    double relative_residual;  /* rms(inputs - a*tokens) / rms(inputs) */
    int sinusoidal;            /* S / amplitude fits the sinusoid model */
    posenc_sinusoid_fit fit;   /* the fit on S */
    char verdict[POSENC_DIFF_TEXT];
} posenc_signal_report;

/* tokens and inputs: same shape [T, D] (or [.., T, D]); row t of inputs is the
 * model input for the token whose embedding is row t of tokens. */
POSENC_API posenc_status posenc_detect_position_signal(const posenc_array *tokens,
                                                       const posenc_array *inputs,
                                                       posenc_signal_report *out,
                                                       posenc_error *err);
POSENC_API void posenc_signal_report_free(posenc_signal_report *report);
/* @@ANALYSIS@@ */

/* ========================================================================
 * 8. Model configuration import (HF config.json, GGUF header)
 * ======================================================================== */
/* @@CONFIG@@ */

/* ========================================================================
 * 9. Kernels, threads and dispatch
 * ======================================================================== */
/* @@KERNELS@@ */

#ifdef __cplusplus
}
#endif
#endif /* POSENC_H */
