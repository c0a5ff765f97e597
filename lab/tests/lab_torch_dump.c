/* lab_torch_dump.c: writes what tests/test_lab_torch.py compares against
 * PyTorch: the initial checkpoint, one batch's logits, loss and every
 * gradient, and the losses of 10 AdamW steps on byte batches.
 * usage: lab_torch_dump OUTDIR SCHEME [key=value config overrides...] */
#include "lab_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const posenc_error *err) {
    fprintf(stderr, "lab_torch_dump: %s\n", err->message);
    return 1;
}

static int write_f32(const char *dir, const char *name, const float *data, size_t n0, size_t n1, posenc_error *err) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.npy", dir, name);
    posenc_array a;
    size_t shape[2] = {n0, n1};
    if (posenc_array_create(&a, POSENC_DTYPE_F32, n1 ? 2 : 1, shape, 0, err)) return 1;
    memcpy(a.data, data, a.count * sizeof(float));
    int rc = posenc_npy_write(path, &a, err) != POSENC_OK;
    posenc_array_free(&a);
    return rc;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: lab_torch_dump OUTDIR SCHEME [key=value ...]\n");
        return 2;
    }
    const char *dir = argv[1];
    posenc_error err = {0};
    /* small but complete: 2 layers, 4 heads of 8, T 16, batch 3 */
    char text[2048];
    snprintf(text, sizeof text, "vocab=256 layers=2 d_model=32 heads=4 d_ff=64 context=16 seed=7 scheme=%s", argv[2]);
    for (int i = 3; i < argc; i++) {
        strncat(text, " ", sizeof text - strlen(text) - 1);
        strncat(text, argv[i], sizeof text - strlen(text) - 1);
    }
    lab_config cfg;
    if (lab_config_parse_text(text, &cfg, &err)) return fail(&err);
    lab_model *m = NULL;
    if (lab_model_create(&cfg, 2, &m, &err)) return fail(&err);
    char path[1024];
    snprintf(path, sizeof path, "%s/init.safetensors", dir);
    if (lab_checkpoint_save(m, path, &err)) return fail(&err);
    enum { B = 3, STEPS = 10 };
    int32_t T = cfg.context;
    uint8_t stream[4096];
    for (size_t i = 0; i < sizeof stream; i++) stream[i] = (uint8_t)((i * 37 + (i / 7) * 11 + (i * i) % 13) % 256);
    lab_byte_source src = {stream, sizeof stream};
    int32_t tok[B * 64], tgt[B * 64];
    float toks_f[STEPS * B * 64], tgts_f[STEPS * B * 64], losses[STEPS];
    float *logits = malloc(sizeof(float) * B * (size_t)T * (size_t)cfg.vocab);
    if (!logits) return 1;
    lab_train_options opt;
    lab_train_options_default(&opt);
    opt.steps = STEPS;
    opt.warmup = 3;
    opt.lr = 3e-3;
    for (int s = 0; s < STEPS; s++) {
        if (lab_byte_batch(&src, s, B, T, cfg.seed, tok, tgt, &err)) return fail(&err);
        for (int i = 0; i < B * T; i++) {
            toks_f[s * B * T + i] = (float)tok[i];
            tgts_f[s * B * T + i] = (float)tgt[i];
        }
        if (s == 2) tgt[5] = -1; /* an ignored target once */
        tgts_f[s * B * T + 5] = s == 2 ? -1.0f : tgts_f[s * B * T + 5];
        double loss = 0;
        lab_zero_grad(m);
        if (lab_forward(m, tok, tgt, NULL, B, T, NULL, 1, s == 0 ? logits : NULL, &loss, &err)) return fail(&err);
        if (lab_backward(m, &err)) return fail(&err);
        losses[s] = (float)loss;
        if (s == 0) {
            if (write_f32(dir, "logits", logits, (size_t)B * (size_t)T, (size_t)cfg.vocab, &err)) return fail(&err);
            for (size_t i = 0; i < lab_tensor_count(m); i++) {
                float *p, *g;
                const lab_tensor_info *info = lab_tensor(m, i, &p, &g);
                char name[300];
                snprintf(name, sizeof name, "grad.%s", info->name);
                if (write_f32(dir, name, g, info->count, 0, &err)) return fail(&err);
            }
        }
        if (lab_adamw_step(m, &opt, lab_lr_at(&opt, s), NULL, &err)) return fail(&err);
    }
    if (write_f32(dir, "tokens", toks_f, STEPS, (size_t)B * (size_t)T, &err) ||
        write_f32(dir, "targets", tgts_f, STEPS, (size_t)B * (size_t)T, &err) ||
        write_f32(dir, "losses", losses, STEPS, 0, &err))
        return fail(&err);
    snprintf(path, sizeof path, "%s/final.safetensors", dir);
    if (lab_checkpoint_save(m, path, &err)) return fail(&err);
    free(logits);
    lab_model_free(m);
    return 0;
}
