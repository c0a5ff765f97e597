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
POSENC_API posenc_status posenc_hybrid_table_f32(const float *learned, size_t learned_rows,
                                                 int32_t learned_dim,
                                                 const posenc_sinusoid_params *params,
                                                 const posenc_positions *positions,
                                                 posenc_past_end policy, float *out,
                                                 size_t out_count, posenc_error *err);

/* Learnable frequency scale s (the article's adaptive_position_encoding: angle
 * rates w_k multiplied by a trainable scalar): the sinusoid table of params at
 * angles p * (s * w_k), i.e. the table at real positions s*p. s finite, > 0. */
POSENC_API posenc_status posenc_freq_scale_table_f32(const posenc_sinusoid_params *params,
                                                     double scale,
                                                     const posenc_positions *positions,
                                                     float *out, size_t out_count,
                                                     posenc_error *err);
/* Gradient of a loss L with respect to s, given dL/dtable grad_out ([count][dim],
 * same layout as the table):
 *   dL/ds = sum_r sum_k p_r w_k ( g[r][sin_k] cos(s p_r w_k) - g[r][cos_k] sin(s p_r w_k) )
 * accumulated in long double; *out_grad receives it. Precise mode only. */
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
typedef struct posenc_signal_report {
    size_t sequences;             /* batch */
    size_t first_last_identical;  /* sequences whose first and last vectors do not differ */
    double first_last_min_diff;   /* smallest per-sequence first/last max abs diff */
    size_t same_id_pairs;         /* same-id pairs compared (0 without ids) */
    size_t same_id_identical;     /* ... of which did not differ */
    int position_signal;          /* 1: every compared pair differs; 0: some pair is identical */
} posenc_signal_report;
POSENC_API posenc_status posenc_check_position_signal_f32(const float *batch, size_t batch_count,
                                                          size_t seq, int32_t dim,
                                                          const int64_t *ids, double atol,
                                                          posenc_signal_report *report,
                                                          posenc_error *err);
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
/* @@KERNELS@@ */

#ifdef __cplusplus
}
#endif
#endif /* POSENC_H */
