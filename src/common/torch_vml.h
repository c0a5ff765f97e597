/* torch_vml.h: the vector math that torch builds linked with Intel MKL use for
 * elementwise float32/float64 exp, sin and cos (and float32 log).
 *
 * A torch built with MKL (every x86-64 wheel on PyPI, torch 2.13 included)
 * runs torch.exp/sin/cos on CPU tensors through MKL's VML: vm[sd]Exp, vm[sd]Sin,
 * vm[sd]Cos with mode VML_HA | VML_FTZDAZ_OFF | VML_ERRMODE_IGNORE (ATen's
 * vml.h). Those results are MKL's, not SLEEF's: about 1-2% of float32 cos/sin
 * values at 4096 x 128 RoPE positions differ by 1 ULP from a build without
 * MKL (tests/py/test_torch_hf_live.py). Each element's result depends on that
 * element alone (measured: whole arrays, single elements and blocks of 13 give
 * the same bits; 1 and 2 torch threads too), so no block structure matters.
 * torch.pow(scalar, tensor) does not go through VML (SLEEF's powf, unchanged).
 *
 * MKL is closed source, so posenc calls it rather than re-deriving it: the
 * library named by the environment variable POSENC_TORCH_MKL (a path to any
 * shared library exporting vmsExp/vmsSin/vmsCos/vmdExp/vmdSin/vmdCos: torch's
 * own lib/libtorch_cpu.so, or the `mkl` wheel's libmkl_rt.so.2) is loaded
 * once per process. Unset: torch-compat computes as a torch without MKL
 * (SLEEF; Debian's python3-torch, aarch64 wheels). */
#ifndef POSENC_TORCH_VML_H
#define POSENC_TORCH_VML_H

#include <stddef.h>

typedef struct torch_vml_ {
    void (*exp_f32)(int n, const float *a, float *r, long long mode);
    void (*sin_f32)(int n, const float *a, float *r, long long mode);
    void (*cos_f32)(int n, const float *a, float *r, long long mode);
    void (*exp_f64)(int n, const double *a, double *r, long long mode);
    void (*sin_f64)(int n, const double *a, double *r, long long mode);
    void (*cos_f64)(int n, const double *a, double *r, long long mode);
    void (*ln_f32)(int n, const float *a, float *r, long long mode); /* torch.log (DeBERTa's log buckets) */
    const char *path; /* the library loaded (POSENC_TORCH_MKL) */
    const char *problem; /* NULL when loaded; else why not (path unset: NULL table) */
} torch_vml_;

/* The VML of POSENC_TORCH_MKL, loaded on first use (thread-safe, once per
 * process; read-only afterwards). NULL when the variable is unset or empty.
 * When it is set but the library cannot be loaded or lacks a function, the
 * table has problem set and its function pointers NULL. */
const torch_vml_ *torch_vml_get_(void);

/* ATen's mode: VML_HA | VML_FTZDAZ_OFF | VML_ERRMODE_IGNORE */
#define TORCH_VML_MODE 0x00140102LL

/* out[i] = f(x[i]) for i < n through one VML function, in chunks that fit MKL's
 * 32-bit count (as ATen splits sizes above INT_MAX). */
void torch_vml_map_f32_(void (*f)(int, const float *, float *, long long), const float *x, float *out, size_t n);
void torch_vml_map_f64_(void (*f)(int, const double *, double *, long long), const double *x, double *out,
                        size_t n);

#endif
