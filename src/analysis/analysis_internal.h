/* analysis_internal.h: helpers shared by the analysis family (health, fit,
 * precision, diff, signal). Not installed. */
#ifndef POSENC_ANALYSIS_INTERNAL_H
#define POSENC_ANALYSIS_INTERNAL_H

#include "../common/internal.h"

/* A numeric array viewed as [rows][cols] (cols = last axis) and read as
 * float64 in place: no copy, so the analysis of a big table needs little more
 * memory than the table itself (docs/analysis.md, "Memory"). */
typedef struct {
    size_t rows, cols;
    const posenc_array *array;
    const double *f64; /* the data when the array is float64, else NULL */
    const float *f32;  /* the data when it is float32, else NULL */
} posenc_f64_table_;

/* View any numeric array; ndim 0 is rejected, ndim 1 is one row. Nothing to free. */
posenc_status posenc_f64_table_from_array_(const posenc_array *a, const char *what,
                                           posenc_f64_table_ *out, posenc_error *err);
/* A view of a caller-owned float64 buffer (array is filled in and must outlive the view). */
void posenc_f64_table_of_(const double *data, size_t rows, size_t cols, posenc_array *array,
                          posenc_f64_table_ *out);
double posenc_array_get_f64_(const posenc_array *a, size_t i);
/* Element i (row-major) as float64. */
static inline double posenc_table_at_(const posenc_f64_table_ *t, size_t i) {
    return t->f64 ? t->f64[i] : t->f32 ? (double)t->f32[i] : posenc_array_get_f64_(t->array, i);
}
/* Row r as float64: a pointer into the data for float64 arrays, else converted into scratch[cols]. */
const double *posenc_table_row_(const posenc_f64_table_ *t, size_t r, double *scratch);

/* Elements [first, first + count) of a numeric array as float64, without a
 * copy of the whole array (the analysis reads big inputs a row at a time). */
void posenc_read_f64_(const posenc_array *a, size_t first, size_t count, double *out);

/* Angle difference wrapped into [-pi, pi] (remainder by 2 pi is exact). Inline
 * here, beside the other helpers every analysis file uses, so the fit and the
 * precision report need not call into each other for it. */
static inline double posenc_wrap_angle_(double a) {
    return remainder(a, 6.283185307179586476925286766559);
}

/* Angle noise floor (radians) of sin/cos values stored in dtype. */
double posenc_angle_noise_for_dtype_(posenc_dtype dtype);

/* Fit frequencies, start, base and angle formation to angles theta[rows][pairs]
 * (radians, any branch), using only rows with valid[r] != 0. Fills the angle
 * fields of fit (frequencies is allocated here); layout/amplitude fields are
 * left to the caller. fit->found is set to 1 on success, 0 when there are
 * too few valid rows. */
posenc_status posenc_fit_angles_(const double *theta, const unsigned char *valid, size_t rows,
                                 size_t pairs, double noise, posenc_sinusoid_fit *fit,
                                 posenc_error *err);

/* Fit the additive model to a table; see posenc_sinusoid_fit_table. */
posenc_status posenc_fit_table_f64_(const posenc_f64_table_ *t, double noise, posenc_sinusoid_fit *fit,
                                    posenc_error *err);

/* Exact model frequencies of a fit with a round base (scale * base^...); false if none. */
bool posenc_fit_model_frequencies_(const posenc_sinusoid_fit *fit, double *out);

#endif
