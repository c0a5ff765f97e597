/* bench_identify.c: `posenc bench --only identify` -- the time posenc_rope_identify
 * takes on a [rows, 128] cos/sin cache (issue 24: a [131072, 128] cache in seconds,
 * not minutes), in the layouts engines keep: HF cos + sin, vLLM cat(cos, sin), HF cos
 * alone (the one-function fit), and a rotated q with its input (4 heads). One thread. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double seconds_since(const struct timespec *t0) {
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0->tv_nsec);
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

enum { FORM_HF_BOTH, FORM_VLLM, FORM_HF_COS, FORM_ROTATION, FORMS };

/* One timed identify of `form`; false (with the message printed) on failure. */
static bool time_form(int form, const posenc_array *hc, const posenc_array *hs, const posenc_array *vl,
                      const posenc_array *x, const posenc_array *y, double *secs, double *cpu,
                      posenc_rope_identity *keep) {
    posenc_error err = {0};
    posenc_rope_identity id;
    posenc_rope_rotation rot;
    memset(&rot, 0, sizeof rot);
    struct timespec t0, c0, c1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    posenc_status st;
    if (form == FORM_ROTATION) {
        st = posenc_rope_rotation_cache(x, y, &rot, &err);
        if (st == POSENC_OK) st = posenc_rope_identify(&rot.cos, &rot.sin, POSENC_CACHE_PLAIN, &id, &err);
    } else {
        st = posenc_rope_identify(form == FORM_VLLM ? vl : hc, form == FORM_HF_BOTH ? hs : NULL, POSENC_CACHE_AUTO,
                                  &id, &err);
    }
    *secs = seconds_since(&t0);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    *cpu = (double)(c1.tv_sec - c0.tv_sec) + 1e-9 * (double)(c1.tv_nsec - c0.tv_nsec);
    posenc_rope_rotation_free(&rot);
    if (st != POSENC_OK) {
        cli_fail("bench", EXIT_RUNTIME, NULL, "identify: %s", err.message);
        return false;
    }
    *keep = id;
    return true;
}

int cli_bench_identify(size_t rows) {
    enum { R = 128, K = R / 2, HEADS = 4 };
    posenc_rope_params p;
    posenc_rope_params_default(&p, R);
    p.base = 1000000, p.scaling = POSENC_ROPE_YARN, p.factor = 4, p.original_max_position = 32768;
    p.mode = POSENC_MODE_TORCH_COMPAT; /* Qwen2.5's YaRN in HF's float32 steps */
    posenc_error err = {0};
    posenc_array hc = {0}, hs = {0}, vl = {0}, x = {0}, y = {0};
    size_t shape[2] = {rows, R}, xshape[3] = {rows, HEADS, R};
    float *c = malloc(sizeof *c * rows * K), *s = malloc(sizeof *s * rows * K);
    int rc = EXIT_OK;
    if (!c || !s || posenc_array_create(&hc, POSENC_DTYPE_F32, 2, shape, 0, &err) != POSENC_OK ||
        posenc_array_create(&hs, POSENC_DTYPE_F32, 2, shape, 0, &err) != POSENC_OK ||
        posenc_array_create(&vl, POSENC_DTYPE_F32, 2, shape, 0, &err) != POSENC_OK ||
        posenc_array_create(&x, POSENC_DTYPE_F32, 3, xshape, 0, &err) != POSENC_OK ||
        posenc_array_create(&y, POSENC_DTYPE_F32, 3, xshape, 0, &err) != POSENC_OK) {
        rc = cli_fail("bench", EXIT_RUNTIME, NULL, "identify: cannot allocate [%zu, %d] caches", rows, R);
        goto done;
    }
    posenc_positions pos = posenc_positions_range(0, rows);
    if (posenc_rope_table_f32(&p, (int64_t)rows, &pos, 1, c, s, rows * K, &err) != POSENC_OK) {
        rc = cli_fail_status("bench", &err);
        goto done;
    }
    float *fc = hc.data, *fs = hs.data, *fv = vl.data, *fx = x.data, *fy = y.data;
    uint64_t state = 0x9e3779b97f4a7c15u;
    for (size_t t = 0; t < rows; t++) {
        for (int k = 0; k < K; k++) {
            float cv = c[t * K + (size_t)k], sv = s[t * K + (size_t)k];
            fc[t * R + (size_t)k] = fc[t * R + K + (size_t)k] = cv;
            fs[t * R + (size_t)k] = fs[t * R + K + (size_t)k] = sv;
            fv[t * R + (size_t)k] = cv, fv[t * R + K + (size_t)k] = sv;
        }
        for (int h = 0; h < HEADS; h++) { /* x uniform in [-1, 1); y = HF's q*cos + rotate_half(q)*sin */
            float *xr = fx + (t * HEADS + (size_t)h) * R, *yr = fy + (t * HEADS + (size_t)h) * R;
            for (int i = 0; i < R; i++) {
                state = state * 6364136223846793005u + 1442695040888963407u;
                xr[i] = (float)((double)(state >> 11) * 0x1p-52 - 1.0);
            }
            for (int k = 0; k < K; k++) {
                float cv = c[t * K + (size_t)k], sv = s[t * K + (size_t)k], a = xr[k], b = xr[k + K];
                yr[k] = a * cv - b * sv;
                yr[k + K] = b * cv + a * sv;
            }
        }
    }
    static const char *const labels[FORMS] = {"HF cos + sin [T, 128] x2", "vLLM cos_sin_cache [T, 128]",
                                              "HF cos alone [T, 128]", "rotated q + input [T, 4, 128] x2"};
    printf("Identify: posenc_rope_identify on a [%zu, %d] Qwen2.5 YaRN cache (factor 4, base 1e6,\n"
           "HF float32), one thread, 3 runs each (the fit, then regenerating the table in all three\n"
           "arithmetics); the rotation row adds recovering cos/sin from x and R(x), 4 heads. CPU s: the\n"
           "process's CPU time of the fastest run (wall time grows on a shared machine, CPU time less so).\n\n"
           "| input | min s | median s | CPU s | fitted | residual (hf-f32) |\n|---|---|---|---|---|---|\n",
           rows, R);
    fflush(stdout);
    for (int f = 0; f < FORMS && rc == EXIT_OK; f++) {
        double t[3], cpu[3], cpu_min = INFINITY;
        posenc_rope_identity id;
        for (int r = 0; r < 3 && rc == EXIT_OK; r++) {
            if (!time_form(f, &hc, &hs, &vl, &x, &y, &t[r], &cpu[r], &id)) rc = EXIT_RUNTIME;
            else if (r < 2) posenc_rope_identity_free(&id);
            if (rc == EXIT_OK && cpu[r] < cpu_min) cpu_min = cpu[r];
        }
        if (rc != EXIT_OK) break;
        qsort(t, 3, sizeof t[0], cmp_d);
        printf("| %s | %.2f | %.2f | %.2f | %s factor %g base %g, %s | %zu differ, max %lld ULP |\n", labels[f], t[0],
               t[1], cpu_min,
               posenc_rope_scaling_name(id.params.scaling), id.params.factor, id.params.base,
               posenc_rope_arith_name(id.arith), id.differ[POSENC_ARITH_HF_F32],
               (long long)id.max_ulp[POSENC_ARITH_HF_F32]);
        fflush(stdout);
        posenc_rope_identity_free(&id);
    }
    printf("\n");
done:
    free(c), free(s);
    posenc_array_free(&hc), posenc_array_free(&hs), posenc_array_free(&vl), posenc_array_free(&x),
        posenc_array_free(&y);
    return rc;
}
