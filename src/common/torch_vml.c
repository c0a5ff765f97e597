/* torch_vml.c: see torch_vml.h. The one process-wide state is the table of
 * function pointers filled once under pthread_once and never changed after:
 * loading a library is a process-level act, as torch's own MKL is. */
#include "torch_vml.h"

#include "internal.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>

static pthread_once_t vml_once = PTHREAD_ONCE_INIT;
static torch_vml_ vml_table;
static const torch_vml_ *vml_loaded;

static void vml_load(void) {
    const char *path = getenv("POSENC_TORCH_MKL");
    if (!path || !*path) return;
    vml_table.path = path;
    vml_loaded = &vml_table;
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        vml_table.problem = "cannot be loaded (dlopen failed)";
        return;
    }
    /* dlsym returns void *; POSIX guarantees the conversion to a function pointer */
    void *f[7] = {dlsym(lib, "vmsExp"), dlsym(lib, "vmsSin"), dlsym(lib, "vmsCos"),
                  dlsym(lib, "vmdExp"), dlsym(lib, "vmdSin"), dlsym(lib, "vmdCos"), dlsym(lib, "vmsLn")};
    for (int i = 0; i < 7; i++)
        if (!f[i]) {
            vml_table.problem = "does not export MKL's vmsExp/vmsSin/vmsCos/vmdExp/vmdSin/vmdCos/vmsLn";
            return;
        }
    *(void **)&vml_table.ln_f32 = f[6];
    *(void **)&vml_table.exp_f32 = f[0];
    *(void **)&vml_table.sin_f32 = f[1];
    *(void **)&vml_table.cos_f32 = f[2];
    *(void **)&vml_table.exp_f64 = f[3];
    *(void **)&vml_table.sin_f64 = f[4];
    *(void **)&vml_table.cos_f64 = f[5];
}

const torch_vml_ *torch_vml_get_(void) {
    pthread_once(&vml_once, vml_load);
    return vml_loaded;
}

/* ATen splits sizes above MKL's 32-bit count into INT_MAX chunks; so do these */
void torch_vml_map_f32_(void (*f)(int, const float *, float *, long long), const float *x, float *out, size_t n) {
    for (size_t i = 0; i < n; i += (size_t)INT_MAX)
        f((int)(n - i < (size_t)INT_MAX ? n - i : (size_t)INT_MAX), x + i, out + i, TORCH_VML_MODE);
}

void torch_vml_map_f64_(void (*f)(int, const double *, double *, long long), const double *x, double *out,
                        size_t n) {
    for (size_t i = 0; i < n; i += (size_t)INT_MAX)
        f((int)(n - i < (size_t)INT_MAX ? n - i : (size_t)INT_MAX), x + i, out + i, TORCH_VML_MODE);
}

posenc_status posenc_torch_math(const char **name, const char **library, posenc_error *err) {
    const torch_vml_ *v = torch_vml_get_();
    if (name) *name = v ? "mkl-vml" : "sleef";
    if (library) *library = v ? v->path : NULL;
    if (v && v->problem)
        return posenc_fail_(err, POSENC_ERR_UNSUPPORTED,
                            "POSENC_TORCH_MKL=%s %s; torch-compat needs MKL's vector math there (torch's "
                            "lib/libtorch_cpu.so or the mkl wheel's libmkl_rt.so.2), or unset it for a torch built "
                            "without MKL",
                            v->path, v->problem);
    return POSENC_OK;
}
