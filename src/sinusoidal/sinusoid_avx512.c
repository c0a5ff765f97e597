/* sinusoid_avx512.c: AVX-512 build of posenc_sinusoid_rows_scalar_ (8 pairs per
 * vector). Compiled with -mavx512f/bw/dq/vl -ffp-contract=off: the rotation uses
 * separate multiplies and adds, exactly as the scalar code, so the bits match. */
#include "../common/recurrence.h"

#if defined(__AVX512F__)
#include <immintrin.h>

typedef __m512d vec;
#define V_SET(x) _mm512_set1_pd(x)
#define V_FMA(a, b, c) _mm512_fmadd_pd((a), (b), (c))
#define V_ROUND(x) _mm512_roundscale_pd((x), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#include "../common/dd_lanes.h"

/* pairs k..k+7 of the side job's anchor: rotated by `by` (posenc_rotate_dd_'s
 * bits) or started at `position` (posenc_sincos_dd_'s bits) */
static void side_anchor8(const posenc_sinusoid_side_ *side, size_t k) {
    const posenc_dd_sincos_ *anchor = side->anchor, *by = side->by;
    vec sh, sl, ch, cl;
    if (by)
        rotate_dd_lanes(_mm512_loadu_pd(anchor->s_hi + k), _mm512_loadu_pd(anchor->s_lo + k),
                        _mm512_loadu_pd(anchor->c_hi + k), _mm512_loadu_pd(anchor->c_lo + k),
                        _mm512_loadu_pd(by->s_hi + k), _mm512_loadu_pd(by->s_lo + k),
                        _mm512_loadu_pd(by->c_hi + k), _mm512_loadu_pd(by->c_lo + k), &sh, &sl, &ch, &cl);
    else
        sincos_lanes(V_SET(side->position), _mm512_loadu_pd(side->w_hi + k), _mm512_loadu_pd(side->w_lo + k), &sh,
                     &sl, &ch, &cl);
    _mm512_storeu_pd(anchor->s_hi + k, sh);
    _mm512_storeu_pd(anchor->s_lo + k, sl);
    _mm512_storeu_pd(anchor->c_hi + k, ch);
    _mm512_storeu_pd(anchor->c_lo + k, cl);
}

static inline void rotate8(const posenc_sinusoid_rows_ *plan, int32_t k, __m512d *s, __m512d *c) {
    __m512d ss = _mm512_loadu_pd(plan->step_s + k), sc = _mm512_loadu_pd(plan->step_c + k);
    __m512d ns = _mm512_add_pd(_mm512_mul_pd(*s, sc), _mm512_mul_pd(*c, ss));
    __m512d nc = _mm512_sub_pd(_mm512_mul_pd(*c, sc), _mm512_mul_pd(*s, ss));
    *s = ns;
    *c = nc;
}

/* Stored f64 values only (the run keeps its bits): see posenc_clamp_unit_. */
static inline __m512d clamp_unit8(__m512d v) {
    return _mm512_min_pd(_mm512_max_pd(v, _mm512_set1_pd(-1.0)), _mm512_set1_pd(1.0));
}

static inline void store_ps512(float *p, __m512 v, bool stream) {
    if (stream) _mm512_stream_ps(p, v);
    else _mm512_storeu_ps(p, v);
}
static inline void store_ps256(float *p, __m256 v, bool stream) {
    if (stream) _mm256_stream_ps(p, v);
    else _mm256_storeu_ps(p, v);
}
static inline void store_pd512(double *p, __m512d v, bool stream) {
    if (stream) _mm512_stream_pd(p, v);
    else _mm512_storeu_pd(p, v);
}

/* Large f32 tables (streaming stores, pairs % 32 == 0): 8G pairs at a time
 * down all rows of the chunk, so (sin, cos) stay in registers; each row then
 * gets 32G contiguous bytes per store group (full lines for the non-temporal
 * stores). G = 8 where the pairs allow (64 at a time), else 4: each row's
 * rotation waits for the row before (a product, then a sum), and 2G
 * independent chains per row hide that wait better than G (rotation alone,
 * 8192 x 512 pairs: 0.79-0.90 ms with G = 4, 0.56 with G = 8, one thread).
 * With a side job, the group's pairs of the next chunk's or block's anchor are
 * computed right after its rows, while their streaming stores drain, where
 * passes of their own between chunks cost 14% of an unplanned table (perf: 8%
 * rotations, 6% block starts). Inside the row loop they cost more than they
 * saved: the registers they take made the rows spill. */
static inline __attribute__((always_inline)) void rows_f32_column_group(const posenc_sinusoid_rows_ *plan,
                                                                        double *run_s, double *run_c, float *out,
                                                                        size_t rows, size_t k, const int G,
                                                                        const posenc_sinusoid_side_ *side) {
    const size_t P = (size_t)plan->pairs, dim = 2 * P;
    const bool half = plan->layout == POSENC_LAYOUT_HALF;
    /* s0 c0 s1 c1 ...: lanes 0-7 of the first operand with lanes 0-7 of the second (16-23) */
    const __m512i pick_s_c = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    __m512d sv[8], cv[8];
    for (int j = 0; j < G; j++) {
        sv[j] = _mm512_loadu_pd(run_s + k + 8 * (size_t)j);
        cv[j] = _mm512_loadu_pd(run_c + k + 8 * (size_t)j);
    }
    for (size_t r = 0; r < rows; r++) {
        float *row = out + r * dim;
        if (half) /* two groups of 8 pairs make a line of sines and one of cosines */
            for (int j = 0; j < G; j += 2) {
                if (r > 0) {
                    rotate8(plan, (int32_t)(k + 8 * (size_t)j), &sv[j], &cv[j]);
                    rotate8(plan, (int32_t)(k + 8 * (size_t)j + 8), &sv[j + 1], &cv[j + 1]);
                }
                _mm512_stream_ps(row + k + 8 * (size_t)j,
                                 _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(sv[j])),
                                                    _mm512_cvtpd_ps(sv[j + 1]), 1));
                _mm512_stream_ps(row + P + k + 8 * (size_t)j,
                                 _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(cv[j])),
                                                    _mm512_cvtpd_ps(cv[j + 1]), 1));
            }
        else
            for (int j = 0; j < G; j++) {
                if (r > 0) rotate8(plan, (int32_t)(k + 8 * (size_t)j), &sv[j], &cv[j]);
                __m512 both = _mm512_permutex2var_ps(_mm512_castps256_ps512(_mm512_cvtpd_ps(sv[j])), pick_s_c,
                                                     _mm512_castps256_ps512(_mm512_cvtpd_ps(cv[j])));
                _mm512_stream_ps(row + 2 * k + 16 * (size_t)j, both);
            }
    }
    for (int j = 0; j < G; j++) {
        _mm512_storeu_pd(run_s + k + 8 * (size_t)j, sv[j]);
        _mm512_storeu_pd(run_c + k + 8 * (size_t)j, cv[j]);
    }
    if (side)
        for (int j = 0; j < G; j++) side_anchor8(side, k + 8 * (size_t)j);
}

static void rows_f32_columns(const posenc_sinusoid_rows_ *plan, double *run_s, double *run_c, float *out,
                             size_t rows) {
    const size_t P = (size_t)plan->pairs;
    size_t k = 0;
    for (; k + 64 <= P; k += 64) rows_f32_column_group(plan, run_s, run_c, out, rows, k, 8, NULL);
    for (; k < P; k += 32) rows_f32_column_group(plan, run_s, run_c, out, rows, k, 4, NULL);
    _mm_sfence();
}

bool posenc_sinusoid_rows_side_avx512_(const posenc_sinusoid_rows_ *plan, double *run_s, double *run_c, void *out,
                                       size_t rows, const posenc_sinusoid_side_ *side) {
    const size_t P = (size_t)plan->pairs;
    if (!(plan->stream && plan->dtype == POSENC_DTYPE_F32 && P % 32 == 0 && rows >= 64)) return false;
    size_t k = 0;
    for (; k + 64 <= P; k += 64) rows_f32_column_group(plan, run_s, run_c, out, rows, k, 8, side);
    for (; k < P; k += 32) rows_f32_column_group(plan, run_s, run_c, out, rows, k, 4, side);
    _mm_sfence();
    return true;
}

void posenc_sinusoid_rows_avx512_(const posenc_sinusoid_rows_ *plan, double *run_s,
                                  double *run_c, void *out, size_t rows) {
    if (plan->stream && plan->dtype == POSENC_DTYPE_F32 && plan->pairs % 32 == 0) {
        rows_f32_columns(plan, run_s, run_c, out, rows);
        return;
    }
    const int32_t pairs = plan->pairs, vec_pairs = pairs & ~7;
    const bool half = plan->layout == POSENC_LAYOUT_HALF, stream = plan->stream;
    const size_t dim = 2 * (size_t)pairs;
    const __m512i interleave_ps = _mm512_setr_epi32(0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15);
    const __m512i lo_pd = _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11);
    const __m512i hi_pd = _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15);
    for (size_t r = 0; r < rows; r++) {
        for (int32_t k = 0; k < vec_pairs; k += 8) {
            __m512d s = _mm512_loadu_pd(run_s + k), c = _mm512_loadu_pd(run_c + k);
            if (r > 0) {
                rotate8(plan, k, &s, &c);
                _mm512_storeu_pd(run_s + k, s);
                _mm512_storeu_pd(run_c + k, c);
            }
            if (plan->dtype == POSENC_DTYPE_F32) {
                float *row = (float *)out + r * dim;
                __m256 fs = _mm512_cvtpd_ps(s), fc = _mm512_cvtpd_ps(c);
                if (half) {
                    store_ps256(row + k, fs, stream);
                    store_ps256(row + pairs + k, fc, stream);
                } else {
                    __m512 both = _mm512_insertf32x8(_mm512_castps256_ps512(fs), fc, 1);
                    store_ps512(row + 2 * k, _mm512_permutexvar_ps(interleave_ps, both), stream);
                }
            } else {
                double *row = (double *)out + r * dim;
                s = clamp_unit8(s);
                c = clamp_unit8(c);
                if (half) {
                    store_pd512(row + k, s, stream);
                    store_pd512(row + pairs + k, c, stream);
                } else {
                    store_pd512(row + 2 * k, _mm512_permutex2var_pd(s, lo_pd, c), stream);
                    store_pd512(row + 2 * k + 8, _mm512_permutex2var_pd(s, hi_pd, c), stream);
                }
            }
        }
        /* leftover pairs in the scalar file: GCC would fuse them into FMA here */
        if (vec_pairs < pairs) posenc_sinusoid_row_tail_(plan, run_s, run_c, out, r, vec_pairs);
    }
    if (stream) _mm_sfence();
}
#else
/* Built without the ISA flags (not x86-64): never selected, see posenc_kernel_path_supported. */
bool posenc_sinusoid_rows_side_avx512_(const posenc_sinusoid_rows_ *plan, double *run_s, double *run_c, void *out,
                                       size_t rows, const posenc_sinusoid_side_ *side) {
    (void)plan, (void)run_s, (void)run_c, (void)out, (void)rows, (void)side;
    return false;
}
void posenc_sinusoid_rows_avx512_(const posenc_sinusoid_rows_ *plan, double *run_s, double *run_c, void *out,
        size_t rows) {
    posenc_sinusoid_rows_scalar_(plan, run_s, run_c, out, rows);
}
#endif
