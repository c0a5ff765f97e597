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
 * Precision. POSENC_MODE_PRECISE: frequencies in long double, rounded once to
 * double; angles p * w_k in long double, sin/cos via sinl/cosl: cos/sin are
 * within 1 ULP (f32) of the exactly rounded value of the stated formula.
 * POSENC_MODE_TORCH_COMPAT: HF's float32 steps (inv = 1/f32pow(base,
 * f32(2k)/f32(R)), scheme arithmetic in float32, angle = f32(w) * f32(p),
 * torch's SLEEF cosf/sinf in its AVX2 8-lane blocks, times the f32 attention
 * factor): HF's inv_freq, cos/sin tables and rotated outputs bit for bit
 * (measured on all HF goldens; cos/sin need an AVX2 CPU and R/2 a multiple of
 * 8, else they may be 1 ULP off). Its angle error grows like p * 2^-24 rad. */

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
    double beta_fast, beta_slow;   /* YARN rotation counts, beta_fast > beta_slow > 0.
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
    posenc_mode mode;              /* PRECISE (default) or TORCH_COMPAT */
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
 * out_count is the capacity of each of cos and sin. */
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
 * attention factor, rounded to f32 and reused across heads; the rotation is
 * computed in f32 as a*c - b*s, b*c + a*s (HF's order), then stored in the
 * data's dtype (f16/bf16 round to nearest even). inverse != 0 rotates by the
 * opposite angle (and divides by the attention factor), undoing a forward
 * call up to rounding. Channels R..D-1 are not touched. */
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
 * With every axis holding the same position, SECTIONS and INTERLEAVED equal 1-D RoPE. */
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
POSENC_API posenc_status posenc_mrope_pair_map(const posenc_rope_params *params,
                                               const posenc_mrope_sections *sections,
                                               int32_t *axis_of_pair, double *inv_freq,
                                               size_t out_count, posenc_error *err);
/* Rotate x in place; positions is [sections->axes][view->tokens] row-major. */
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
POSENC_API posenc_status posenc_mrope_position_ids(const posenc_mrope_segment *segments,
                                                   size_t segment_count, int64_t *out,
                                                   size_t out_count, size_t *out_total,
                                                   posenc_error *err);

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
/* Read a model's RoPE settings from its Hugging Face config.json (parsed with
 * cJSON) or from a GGUF file's header key/value section (tensors are never
 * read; every length is bounds-checked before anything is allocated).
 *
 * config.json keys used: rope_theta (or GPT-NeoX's rotary_emb_base); rope_scaling or rope_parameters (per
 * layer-type dicts: "full_attention" or the first one), with `type` or
 * `rope_type` ("default", "linear", "dynamic", "yarn", "longrope", "llama3";
 * "su"/"mrope" also accepted as their HF aliases) and factor,
 * original_max_position_embeddings, beta_fast, beta_slow, mscale,
 * mscale_all_dim, attention_factor, truncate, low_freq_factor,
 * high_freq_factor, short_factor, long_factor; head_dim, else hidden_size /
 * num_attention_heads (DeepSeek: qk_rope_head_dim); partial_rotary_factor,
 * rotary_pct (GPT-NeoX) or rotary_dim (GPT-J); max_position_embeddings;
 * top-level original_max_position_embeddings (Phi-3: LongRoPE factor =
 * max_position_embeddings / it); text_config when the top level has no
 * rope_theta/hidden_size (multimodal models). L0 for YARN is the rope dict's
 * original_max_position_embeddings, else max_position_embeddings; an explicit
 * factor is kept (HF v5 semantics).
 *
 * GGUF keys used (v2 and v3, little-endian): general.architecture, then
 * <arch>.rope.freq_base, .rope.dimension_count, .rope.scaling.type,
 * .rope.scaling.factor (or the older .rope.scale_linear),
 * .rope.scaling.original_context_length, .rope.scaling.attn_factor,
 * .rope.scaling.yarn_beta_fast/_slow, .rope.scaling.yarn_log_multiplier
 * (= 0.1 * mscale_all_dim), .context_length, .attention.key_length,
 * .attention.head_count, .embedding_length. */

/* Things a config gets wrong that still parse (bit flags in ->warnings). */
enum {
    POSENC_CONFIG_WARN_NO_THETA = 1u << 0,         /* rope_theta missing: default 10000 used */
    POSENC_CONFIG_WARN_NO_ORIGINAL = 1u << 1,      /* scaling without an original context */
    POSENC_CONFIG_WARN_FACTOR_MISMATCH = 1u << 2,  /* factor x original != max positions */
    POSENC_CONFIG_WARN_ODD_PASSTHROUGH = 1u << 3,  /* head_dim - rotary_dim is odd */
    POSENC_CONFIG_WARN_FREQ_TENSOR = 1u << 4,      /* GGUF has a rope_freqs tensor (per-pair
                                                      factors, e.g. Llama 3.1) that is not read */
    POSENC_CONFIG_WARN_NO_MAX_POSITION = 1u << 5   /* max position embeddings missing */
};

typedef enum posenc_config_format {
    POSENC_CONFIG_HF_JSON = 0,
    POSENC_CONFIG_GGUF = 1
} posenc_config_format;

typedef struct posenc_model_config {
    posenc_config_format format;
    char architecture[64];          /* model_type / general.architecture ("" if absent) */
    char scaling_name[32];          /* scaling type as written ("" if none) */
    int32_t num_attention_heads;    /* 0 if absent */
    int32_t hidden_size;            /* 0 if absent */
    int64_t max_position_embeddings;/* 0 if absent */
    posenc_layout layout;           /* the layout this architecture's runtime uses */
    int layout_known;               /* 0: architecture not in the built-in list (HALF assumed) */
    double softmax_scale_factor;    /* extra multiplier on 1/sqrt(d_qk): DeepSeek's
                                       m(factor, mscale_all_dim)^2; 1 otherwise */
    unsigned warnings;              /* POSENC_CONFIG_WARN_* */
    posenc_rope_params rope;        /* ready for the RoPE functions; its factor lists point
                                       into factor_storage */
    double *factor_storage;         /* owned (short list, then long list) */
} posenc_model_config;

/* Parse config.json text (size bytes, need not be NUL-terminated). */
POSENC_API posenc_status posenc_config_parse_hf_json(const char *text, size_t size,
                                                     posenc_model_config *out, posenc_error *err);
/* Parse the header of a GGUF image held in memory (size may cover only the
 * header: a truncated tensor section is fine, a truncated key/value is not). */
POSENC_API posenc_status posenc_config_parse_gguf(const void *bytes, size_t size,
                                                  posenc_model_config *out, posenc_error *err);
/* Read a file: GGUF if it starts with "GGUF" (only the header is read, from
 * disk, piece by piece), else config.json (at most max_bytes, 0 = 64 MiB). */
POSENC_API posenc_status posenc_config_read(const char *path, size_t max_bytes,
                                            posenc_model_config *out, posenc_error *err);
/* Release what a parse/read allocated; NULL and zeroed structs are fine. */
POSENC_API void posenc_config_free(posenc_model_config *config);

/* @@CONFIG@@ */

/* ========================================================================
 * 9. Kernels, threads and dispatch
 * ======================================================================== */
/* @@KERNELS@@ */

#ifdef __cplusplus
}
#endif
#endif /* POSENC_H */
