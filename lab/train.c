#define _POSIX_C_SOURCE 200809L
/* train.c: AdamW, the learning-rate schedule, gradient norms, the training
 * loop with its non-finite guard, byte batches and evaluation. */
#include "lab_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void lab_train_options_default(lab_train_options *o) {
    memset(o, 0, sizeof *o);
    o->steps = 100;
    o->batch = 16;
    o->lr = 1e-3;
    o->min_lr_ratio = 0.1;
    o->warmup = 20;
    o->beta1 = 0.9;
    o->beta2 = 0.95;
    o->eps = 1e-8;
    o->weight_decay = 0.1;
    o->clip = 1.0;
}

posenc_status lab_train_options_check(const lab_train_options *o, posenc_error *err) {
    const posenc_status bad = POSENC_ERR_INVALID_ARGUMENT;
    if (o->steps < 0) return lab_fail(err, bad, "steps must be >= 0, got %lld", (long long)o->steps);
    if (o->batch < 1 || o->batch > 4096) return lab_fail(err, bad, "batch must be in 1..4096, got %d", o->batch);
    if (!(o->lr >= 0 && isfinite(o->lr))) return lab_fail(err, bad, "learning rate must be finite and >= 0, got %g", o->lr);
    if (!(o->min_lr_ratio >= 0 && o->min_lr_ratio <= 1))
        return lab_fail(err, bad, "min_lr_ratio must be in [0, 1], got %g", o->min_lr_ratio);
    if (o->warmup < 0) return lab_fail(err, bad, "warmup must be >= 0, got %lld", (long long)o->warmup);
    if (!(o->beta1 >= 0 && o->beta1 < 1)) return lab_fail(err, bad, "beta1 must be in [0, 1), got %g", o->beta1);
    if (!(o->beta2 >= 0 && o->beta2 < 1)) return lab_fail(err, bad, "beta2 must be in [0, 1), got %g", o->beta2);
    if (!(o->eps > 0 && isfinite(o->eps))) return lab_fail(err, bad, "eps must be finite and > 0, got %g", o->eps);
    if (!(o->weight_decay >= 0 && isfinite(o->weight_decay)))
        return lab_fail(err, bad, "weight decay must be finite and >= 0, got %g", o->weight_decay);
    if (!(o->clip >= 0 && isfinite(o->clip))) return lab_fail(err, bad, "clip must be finite and >= 0, got %g", o->clip);
    if (o->checkpoint_every < 0) return lab_fail(err, bad, "checkpoint_every must be >= 0, got %lld", (long long)o->checkpoint_every);
    return POSENC_OK;
}

double lab_lr_at(const lab_train_options *o, int64_t step) {
    if (o->warmup > 0 && step < o->warmup) return o->lr * (double)(step + 1) / (double)o->warmup;
    int64_t span = o->steps - o->warmup;
    if (span <= 1) return o->lr;
    double progress = (double)(step - o->warmup) / (double)(span - 1);
    if (progress > 1) progress = 1;
    double min_lr = o->lr * o->min_lr_ratio;
    return min_lr + 0.5 * (o->lr - min_lr) * (1.0 + cos(3.14159265358979323846 * progress));
}

static int group_index(const char *g) {
    for (int i = 0; i < LAB_GROUPS; i++)
        if (strcmp(g, lab_group_name(i)) == 0) return i;
    return 0;
}

void lab_group_grad_norms(const lab_model *m, double out[LAB_GROUPS]) {
    double sq[LAB_GROUPS] = {0};
    for (size_t t = 0; t < m->tensor_count; t++) {
        const lab_tensor_slot *s = m->order[t];
        const float *g = m->grads + s->offset;
        double sum = 0.0;
        for (size_t i = 0; i < s->info.count; i++) sum += (double)g[i] * g[i];
        sq[group_index(s->info.group)] += sum;
    }
    for (int i = 0; i < LAB_GROUPS; i++) out[i] = sqrt(sq[i]);
}

/* First tensor holding a non-finite value in `base` (params or grads), or NULL. */
static const char *first_non_finite(const lab_model *m, const float *base) {
    for (size_t t = 0; t < m->tensor_count; t++) {
        const lab_tensor_slot *s = m->order[t];
        for (size_t i = 0; i < s->info.count; i++)
            if (!isfinite(base[s->offset + i])) return s->info.name;
    }
    return NULL;
}

/* AdamW's update, element-wise, so it runs as tasks of ADAMW_BLOCK elements of
 * one tensor on any thread with the same bits. */
#define ADAMW_BLOCK 16384
typedef struct {
    lab_model *m;
    float clip_coef, b1, b2, eps, step_size, bc2_sqrt, decay;
} adamw_ctx;

static void adamw_task(void *ctx_, size_t task, int32_t thread) {
    (void)thread;
    const adamw_ctx *c = ctx_;
    lab_model *m = c->m;
    const lab_tensor_slot *s = NULL;
    for (size_t t = 0; t < m->tensor_count; t++) { /* the task's tensor: ~30 tensors, cheap next to a block */
        size_t pieces = (m->order[t]->info.count + ADAMW_BLOCK - 1) / ADAMW_BLOCK;
        if (task < pieces) {
            s = m->order[t];
            break;
        }
        task -= pieces;
    }
    size_t i0 = task * ADAMW_BLOCK, i1 = s->info.count < i0 + ADAMW_BLOCK ? s->info.count : i0 + ADAMW_BLOCK;
    float decay = s->info.decay ? c->decay : 1.0f, b1 = c->b1, b2 = c->b2, clip_coef = c->clip_coef;
    float *restrict p = m->params + s->offset, *restrict g = m->grads + s->offset;
    float *restrict mm = m->adam_m + s->offset, *restrict vv = m->adam_v + s->offset;
    for (size_t i = i0; i < i1; i++) { /* torch.optim.AdamW's arithmetic */
        float gi = g[i] * clip_coef;
        float pi = p[i] * decay;
        float mi = mm[i] * b1 + (1.0f - b1) * gi;
        float vi = vv[i] * b2 + (1.0f - b2) * gi * gi;
        mm[i] = mi;
        vv[i] = vi;
        float denom = sqrtf(vi) / c->bc2_sqrt + c->eps;
        p[i] = pi - c->step_size * mi / denom;
    }
}

posenc_status lab_adamw_step(lab_model *m, const lab_train_options *o, double lr, double *grad_norm_out,
                             posenc_error *err) {
    if (!(lr >= 0 && isfinite(lr))) return lab_fail(err, POSENC_ERR_INVALID_ARGUMENT, "learning rate must be finite and >= 0, got %g", lr);
    double sq = 0.0;
    LAB_PHASE(m, LAB_PH_GRAD_NORM, for (size_t i = 0; i < m->param_count; i++) sq += (double)m->grads[i] * m->grads[i]);
    double norm = sqrt(sq);
    if (grad_norm_out) *grad_norm_out = norm;
    if (!isfinite(norm)) {
        const char *bad = first_non_finite(m, m->grads);
        return lab_fail(err, POSENC_ERR_INVALID_ARGUMENT, "step %lld: gradient norm is %g; first non-finite gradient in tensor '%s'",
                        (long long)m->step + 1, norm, bad ? bad : "?");
    }
    float clip_coef = 1.0f;
    if (o->clip > 0 && norm > o->clip) clip_coef = (float)(o->clip / (norm + 1e-6)); /* torch clip_grad_norm_ */
    m->step++;
    double bc1 = 1.0 - pow(o->beta1, (double)m->step), bc2 = 1.0 - pow(o->beta2, (double)m->step);
    adamw_ctx c = {.m = m, .clip_coef = clip_coef, .b1 = (float)o->beta1, .b2 = (float)o->beta2, .eps = (float)o->eps,
                   .step_size = (float)(lr / bc1), .bc2_sqrt = (float)sqrt(bc2),
                   .decay = (float)(1.0 - lr * o->weight_decay)};
    size_t tasks = 0;
    for (size_t t = 0; t < m->tensor_count; t++) tasks += (m->order[t]->info.count + ADAMW_BLOCK - 1) / ADAMW_BLOCK;
    LAB_PHASE(m, LAB_PH_ADAMW, lab_pool_run(m->pool, tasks, adamw_task, &c));
    return POSENC_OK;
}

posenc_status lab_byte_batch(void *ctx, int64_t step, int32_t B, int32_t T, uint64_t seed, int32_t *tokens,
                             int32_t *targets, posenc_error *err) {
    const lab_byte_source *src = ctx;
    if (!src || !src->bytes || src->size < (size_t)T + 1)
        return lab_fail(err, POSENC_ERR_INVALID_ARGUMENT, "the training text has %zu bytes; length %d needs at least %d",
                        src ? src->size : 0, T, T + 1);
    size_t span = src->size - (size_t)T;
    for (int32_t b = 0; b < B; b++) {
        uint64_t h = lab_splitmix64(lab_splitmix64(seed + 0x1234567ull) ^ ((uint64_t)step * 0x100000001B3ull + (uint64_t)b));
        size_t off = (size_t)(h % span);
        for (int32_t t = 0; t < T; t++) {
            tokens[(size_t)b * (size_t)T + (size_t)t] = src->bytes[off + (size_t)t];
            targets[(size_t)b * (size_t)T + (size_t)t] = src->bytes[off + (size_t)t + 1];
        }
    }
    return POSENC_OK;
}

posenc_status lab_train(lab_model *m, const lab_train_options *o, lab_batch_fn next_batch, void *batch_ctx,
                        lab_step_fn on_step, void *step_ctx, posenc_error *err) {
    posenc_status st = lab_train_options_check(o, err);
    if (st) return st;
    if (!next_batch) return lab_fail(err, POSENC_ERR_NULL_POINTER, "next_batch is NULL");
    const lab_config *c = &m->cfg;
    int32_t B = o->batch, T = c->context;
    size_t BT = (size_t)B * (size_t)T;
    int32_t *tokens = malloc(BT * sizeof(int32_t)), *targets = malloc(BT * sizeof(int32_t));
    int64_t *pos = c->random_positions > 0 ? malloc(BT * sizeof(int64_t)) : NULL;
    float *backup = malloc(m->param_count * sizeof(float) * 3);
    if (!tokens || !targets || (c->random_positions > 0 && !pos) || !backup) {
        st = lab_fail(err, POSENC_ERR_OUT_OF_MEMORY, "out of memory for a batch of %d x %d", B, T);
        goto done;
    }
    while (m->step < o->steps) {
        int64_t step = m->step;
        if ((st = next_batch(batch_ctx, step, B, T, c->seed, tokens, targets, err)) != POSENC_OK) goto done;
        if (pos)
            for (int32_t b = 0; b < B; b++)
                lab_random_positions(c->seed, step, b, c->random_positions, T, pos + (size_t)b * (size_t)T);
        double loss = 0.0;
        lab_zero_grad(m);
        if ((st = lab_forward(m, tokens, targets, pos, B, T, NULL, 1, NULL, &loss, err)) != POSENC_OK) goto done;
        if (!isfinite(loss)) {
            const char *bad = first_non_finite(m, m->params);
            st = lab_fail(err, POSENC_ERR_INVALID_ARGUMENT,
                          "step %lld: loss is %g; first non-finite tensor: %s; parameters left as after step %lld",
                          (long long)step + 1, loss, bad ? bad : "(none in the parameters: activations overflowed)",
                          (long long)step);
            goto done;
        }
        if ((st = lab_backward(m, err)) != POSENC_OK) goto done;
        lab_step_report rep;
        memset(&rep, 0, sizeof rep);
        lab_group_grad_norms(m, rep.group_norms);
        rep.lr = lab_lr_at(o, step);
        /* keep the pre-step state: a non-finite update is rolled back */
        memcpy(backup, m->params, m->param_count * sizeof(float));
        memcpy(backup + m->param_count, m->adam_m, m->param_count * sizeof(float));
        memcpy(backup + 2 * m->param_count, m->adam_v, m->param_count * sizeof(float));
        if ((st = lab_adamw_step(m, o, rep.lr, &rep.grad_norm, err)) != POSENC_OK) goto done;
        const char *bad = first_non_finite(m, m->params);
        if (bad) {
            memcpy(m->params, backup, m->param_count * sizeof(float));
            memcpy(m->adam_m, backup + m->param_count, m->param_count * sizeof(float));
            memcpy(m->adam_v, backup + 2 * m->param_count, m->param_count * sizeof(float));
            m->step--;
            st = lab_fail(err, POSENC_ERR_INVALID_ARGUMENT, "step %lld: the update made tensor '%s' non-finite; rolled back",
                          (long long)step + 1, bad);
            goto done;
        }
        rep.step = m->step;
        rep.loss = loss;
        if (o->checkpoint_path && o->checkpoint_every > 0 && m->step % o->checkpoint_every == 0 && m->step < o->steps &&
            (st = lab_checkpoint_save(m, o->checkpoint_path, err)) != POSENC_OK)
            goto done;
        if (on_step && on_step(step_ctx, &rep)) break;
    }
    if (o->checkpoint_path) st = lab_checkpoint_save(m, o->checkpoint_path, err);
done:
    free(tokens);
    free(targets);
    free(pos);
    free(backup);
    return st;
}

posenc_status lab_eval_bytes(lab_model *m, const lab_eval_options *o, const uint8_t *bytes, size_t size,
                             double *loss_out, posenc_error *err) {
    lab_eval_options def;
    lab_eval_options_default(&def);
    if (!o) o = &def;
    int32_t T = o->seq_len > 0 ? o->seq_len : m->cfg.context;
    int32_t B = o->batch > 0 ? o->batch : 1;
    size_t windows = size > (size_t)T ? (size - 1) / (size_t)T : 0;
    if (windows == 0) return lab_fail(err, POSENC_ERR_INVALID_ARGUMENT, "evaluation text of %zu bytes is shorter than length %d + 1", size, T);
    if (o->max_windows > 0 && (size_t)o->max_windows < windows) windows = (size_t)o->max_windows;
    size_t BT = (size_t)B * (size_t)T;
    int32_t *tok = malloc(BT * sizeof(int32_t)), *tgt = malloc(BT * sizeof(int32_t));
    if (!tok || !tgt) {
        free(tok);
        free(tgt);
        return lab_fail(err, POSENC_ERR_OUT_OF_MEMORY, "out of memory");
    }
    double total = 0.0;
    size_t counted = 0;
    posenc_status st = POSENC_OK;
    for (size_t w0 = 0; w0 < windows && !st; w0 += (size_t)B) {
        int32_t nb = (int32_t)((windows - w0) < (size_t)B ? windows - w0 : (size_t)B);
        for (int32_t b = 0; b < nb; b++)
            for (int32_t t = 0; t < T; t++) {
                size_t off = (w0 + (size_t)b) * (size_t)T + (size_t)t;
                tok[(size_t)b * (size_t)T + (size_t)t] = bytes[off];
                tgt[(size_t)b * (size_t)T + (size_t)t] = bytes[off + 1];
            }
        double loss = 0.0;
        st = lab_forward(m, tok, tgt, NULL, nb, T, o, 0, NULL, &loss, err);
        total += loss * (double)nb * (double)T;
        counted += (size_t)nb * (size_t)T;
    }
    free(tok);
    free(tgt);
    if (!st) *loss_out = total / (double)counted;
    return st;
}

double lab_step_flops(const lab_config *c, int32_t B, int32_t T) {
    double BT = (double)B * T, C = c->d_model, F = c->d_ff, V = c->vocab, L = c->layers;
    double matmul = BT * (3 * C * C + C * C + 2 * C * F) * L + BT * C * V; /* multiply-adds, forward */
    double attn = L * B * (double)c->heads * T * T * (C / c->heads) * 2;     /* QK^T and PV, forward */
    return 2.0 * 3.0 * (matmul + attn); /* 2 FLOPs per multiply-add; backward = 2x forward */
}

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double lab_sgemm_gflops(int n, int reps) {
    if (lab_blas_load(NULL) != POSENC_OK) return 0.0;
    size_t nn = (size_t)n * (size_t)n;
    float *a = malloc(nn * sizeof(float)), *b = malloc(nn * sizeof(float)), *c = malloc(nn * sizeof(float));
    double *times = malloc(sizeof(double) * (size_t)(reps > 0 ? reps : 1));
    double result = 0.0;
    if (a && b && c && times && reps > 0) {
        for (size_t i = 0; i < nn; i++) {
            a[i] = (float)((i * 7) % 13) * 0.01f;
            b[i] = (float)((i * 5) % 11) * 0.01f;
        }
        lab_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
        for (int r = 0; r < reps; r++) {
            double t0 = now_seconds();
            lab_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
            times[r] = now_seconds() - t0;
        }
        qsort(times, (size_t)reps, sizeof(double), cmp_double);
        result = 2.0 * (double)n * (double)n * (double)n / times[reps / 2] * 1e-9;
    }
    free(a);
    free(b);
    free(c);
    free(times);
    return result;
}
