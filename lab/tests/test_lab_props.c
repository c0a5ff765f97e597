/* test_lab_props.c: properties of the lab model and engine:
 *   - bit-identical training for 1, 2 and 3 threads;
 *   - no position signal + bidirectional attention -> permutation-equivariant;
 *   - RoPE / ALiBi / T5 logits the same at offsets 0 and 1000 (sinusoidal not);
 *   - a learned table past its end refuses or clamps as configured;
 *   - checkpoint round trip and bit-identical resume; every RoPE scaling at eval;
 *   - a RoPE scaling trained into the model (config): used by training, kept by
 *     checkpoints, the default at evaluation, overridable; fine-tune weight copy;
 *   - bad input: clear errors naming the value, nothing half-written;
 *   - a non-finite loss stops training, naming the step and tensor. */
#define _POSIX_C_SOURCE 200809L
#include "lab_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int passed, failed;
#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (cond) {                                                                                                    \
            passed++;                                                                                                  \
            printf("ok   ");                                                                                           \
        } else {                                                                                                       \
            failed++;                                                                                                  \
            printf("FAIL ");                                                                                           \
        }                                                                                                              \
        printf(__VA_ARGS__);                                                                                           \
        printf("\n");                                                                                                  \
    } while (0)

static uint8_t text[20000];
static lab_byte_source source = {text, sizeof text};

static lab_model *make(const char *cfg_text, int32_t threads) {
    lab_config cfg;
    posenc_error err = {0};
    lab_model *m = NULL;
    char full[1024];
    snprintf(full, sizeof full, "layers=2 d_model=32 heads=4 d_ff=64 context=32 seed=5 %s", cfg_text);
    if (lab_config_parse_text(full, &cfg, &err) || lab_model_create(&cfg, threads, &m, &err)) {
        printf("cannot make '%s': %s\n", full, err.message);
        exit(1);
    }
    return m;
}

static void train(lab_model *m, int64_t steps, double *last_loss) {
    lab_train_options o;
    lab_train_options_default(&o);
    o.steps = steps;
    o.batch = 4;
    o.warmup = 2;
    posenc_error err = {0};
    if (lab_train(m, &o, lab_byte_batch, &source, NULL, NULL, &err)) {
        printf("train failed: %s\n", err.message);
        exit(1);
    }
    if (last_loss) {
        int32_t tok[4 * 32], tgt[4 * 32];
        lab_byte_batch(&source, 999, 4, 32, 1, tok, tgt, &err);
        lab_forward(m, tok, tgt, NULL, 4, 32, NULL, 0, NULL, last_loss, &err);
    }
}

static int same_params(lab_model *a, lab_model *b) {
    return lab_model_param_count(a) == lab_model_param_count(b) &&
           memcmp(lab_params(a), lab_params(b), lab_model_param_count(a) * sizeof(float)) == 0;
}

static void test_threads(void) {
    const char *schemes[] = {"scheme=none", "scheme=rope", "scheme=t5", "scheme=learned", "scheme=gru", "scheme=alibi", "scheme=shaw shaw_clip=4"};
    for (size_t s = 0; s < sizeof schemes / sizeof *schemes; s++) {
        lab_model *m1 = make(schemes[s], 1), *m2 = make(schemes[s], 2), *m3 = make(schemes[s], 3);
        double l1, l2, l3;
        train(m1, 3, &l1);
        train(m2, 3, &l2);
        train(m3, 3, &l3);
        CHECK(same_params(m1, m2) && same_params(m1, m3) && l1 == l2 && l1 == l3,
              "%-16s 3 steps: weights and loss bit-identical for 1, 2, 3 threads (loss %.9g %.9g %.9g)", schemes[s], l1, l2, l3);
        lab_model_free(m1);
        lab_model_free(m2);
        lab_model_free(m3);
    }
}

static void test_random_positions(void) {
    const char *schemes[] = {"scheme=learned random_positions=256", "scheme=rope random_positions=256",
                             "scheme=t5 random_positions=256"};
    for (size_t s = 0; s < sizeof schemes / sizeof *schemes; s++) {
        lab_model *m1 = make(schemes[s], 1), *m2 = make(schemes[s], 2);
        double l1, l2;
        train(m1, 3, &l1);
        train(m2, 3, &l2);
        CHECK(same_params(m1, m2) && l1 == l2 && isfinite(l1), "%-36s trains (sorted random subsets of [0, 256)), bit-identical on 1 and 2 threads",
              schemes[s]);
        lab_model_free(m1);
        lab_model_free(m2);
    }
    int64_t pos[32], pos2[32];
    lab_random_positions(9, 4, 1, 256, 32, pos);
    lab_random_positions(9, 4, 2, 256, 32, pos2);
    int sorted = 1;
    for (int i = 1; i < 32; i++) sorted &= pos[i] > pos[i - 1];
    CHECK(sorted && pos[0] >= 0 && pos[31] < 256 && memcmp(pos, pos2, sizeof pos) != 0,
          "random positions: strictly increasing in [0, 256), differ per sequence (%lld .. %lld)", (long long)pos[0], (long long)pos[31]);
}

static void test_permutation(void) {
    lab_model *m = make("scheme=none causal=0 init_sigma=0.2", 2);
    int32_t tok[32], perm_tok[32], perm[32];
    for (int i = 0; i < 32; i++) {
        tok[i] = (i * 53 + 7) % 256;
        perm[i] = (i * 13 + 5) % 32; /* 13 is coprime to 32: a permutation */
    }
    for (int i = 0; i < 32; i++) perm_tok[i] = tok[perm[i]];
    float *a = malloc(32 * 256 * sizeof(float)), *b = malloc(32 * 256 * sizeof(float));
    posenc_error err = {0};
    lab_forward(m, tok, NULL, NULL, 1, 32, NULL, 0, a, NULL, &err);
    lab_forward(m, perm_tok, NULL, NULL, 1, 32, NULL, 0, b, NULL, &err);
    double d = 0;
    for (int i = 0; i < 32; i++)
        for (int v = 0; v < 256; v++) d = fmax(d, fabs(a[perm[i] * 256 + v] - b[i * 256 + v]));
    CHECK(d < 1e-5, "NoPE bidirectional: logits(permuted tokens) = permuted logits, max diff %.2e (rounding of reordered sums)", d);
    lab_model_free(m);
    m = make("scheme=sinusoidal causal=0 init_sigma=0.2", 2);
    lab_forward(m, tok, NULL, NULL, 1, 32, NULL, 0, a, NULL, &err);
    lab_forward(m, perm_tok, NULL, NULL, 1, 32, NULL, 0, b, NULL, &err);
    d = 0;
    for (int i = 0; i < 32; i++)
        for (int v = 0; v < 256; v++) d = fmax(d, fabs(a[perm[i] * 256 + v] - b[i * 256 + v]));
    CHECK(d > 1e-3, "sinusoidal bidirectional is NOT permutation-equivariant (control), max diff %.2e", d);
    lab_model_free(m);
    free(a);
    free(b);
}

static void test_offsets(void) {
    const char *schemes[][2] = {{"scheme=rope init_sigma=0.2", "1e-4"}, {"scheme=rope rope_layout=0 rope_rotary_dim=4 init_sigma=0.2", "1e-4"},
                                {"scheme=alibi init_sigma=0.2", "0"}, {"scheme=t5 init_sigma=0.2", "0"},
                                {"scheme=sinusoidal init_sigma=0.2", "control"}};
    int32_t tok[2 * 32];
    for (int i = 0; i < 64; i++) tok[i] = (i * 71 + 1) % 256;
    float *a = malloc(64 * 256 * sizeof(float)), *b = malloc(64 * 256 * sizeof(float));
    for (size_t s = 0; s < sizeof schemes / sizeof *schemes; s++) {
        lab_model *m = make(schemes[s][0], 2);
        lab_eval_options ev;
        lab_eval_options_default(&ev);
        posenc_error err = {0};
        lab_forward(m, tok, NULL, NULL, 2, 32, &ev, 0, a, NULL, &err);
        ev.position_offset = 1000;
        lab_forward(m, tok, NULL, NULL, 2, 32, &ev, 0, b, NULL, &err);
        double d = 0;
        for (int i = 0; i < 64 * 256; i++) d = fmax(d, fabs(a[i] - b[i]));
        if (strcmp(schemes[s][1], "control") == 0)
            CHECK(d > 1e-3, "%-40s offset 0 vs 1000 differ (control), max diff %.2e", schemes[s][0], d);
        else
            CHECK(d <= atof(schemes[s][1]), "%-40s offset 0 vs 1000: max logit diff %.2e (tol %s: %s)", schemes[s][0], d,
                  schemes[s][1], atof(schemes[s][1]) == 0 ? "biases depend on j - i only, exactly" : "f32 cos/sin at 1000 vs 0");
        lab_model_free(m);
    }
    free(a);
    free(b);
}

static void test_learned_past_end(void) {
    lab_model *m = make("scheme=learned learned_sigma=0.5", 1);
    int32_t tok[40];
    for (int i = 0; i < 40; i++) tok[i] = i * 3;
    posenc_error err = {0};
    lab_eval_options ev;
    lab_eval_options_default(&ev);
    posenc_status st = lab_forward(m, tok, NULL, NULL, 1, 40, &ev, 0, NULL, NULL, &err);
    CHECK(st == POSENC_ERR_OUT_OF_RANGE && strstr(err.message, "32"), "learned refuse past its 32 rows: %s", err.message);
    ev.learned_past_end_override = POSENC_PAST_END_CLAMP;
    float *a = malloc(40 * 256 * sizeof(float)), *b = malloc(40 * 256 * sizeof(float));
    st = lab_forward(m, tok, NULL, NULL, 1, 40, &ev, 0, a, NULL, &err);
    int64_t pos[40];
    for (int i = 0; i < 40; i++) pos[i] = i < 31 ? i : 31;
    lab_forward(m, tok, NULL, pos, 1, 40, &ev, 0, b, NULL, &err);
    CHECK(st == POSENC_OK && memcmp(a, b, 40 * 256 * sizeof(float)) == 0,
          "learned clamp: positions 32..39 evaluate exactly as position 31");
    free(a);
    free(b);
    lab_model_free(m);
}

static void test_checkpoints(void) {
    const char *path = "lab_props_ckpt.safetensors";
    /* straight 6 steps vs 3 + save + load into a fresh model + 3 */
    lab_model *a = make("scheme=learned", 2), *b = make("scheme=learned", 2);
    double la, lb;
    train(a, 6, &la);
    train(b, 3, NULL);
    posenc_error err = {0};
    posenc_status st = lab_checkpoint_save(b, path, &err);
    lab_model_free(b);
    lab_model *c = NULL;
    if (!st) st = lab_checkpoint_load(path, 1, &c, &err);
    CHECK(st == POSENC_OK && c && lab_model_step(c) == 3, "checkpoint save/load: step %lld %s", c ? (long long)lab_model_step(c) : -1LL, err.message);
    if (!c) return;
    train(c, 6, &lb);
    CHECK(same_params(a, c) && la == lb, "resume after 3 of 6 steps: weights and loss bit-identical (%.9g vs %.9g)", la, lb);
    /* another configuration */
    lab_model *d = make("scheme=learned d_ff=48", 1);
    st = lab_checkpoint_load_into(d, path, &err);
    CHECK(st == POSENC_ERR_INVALID_ARGUMENT && strstr(err.message, "d_ff=64"), "checkpoint from another config refused: %s", err.message);
    lab_model_free(d);
    /* truncated: refused, model untouched */
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *bytes = malloc((size_t)size);
    if (fread(bytes, 1, (size_t)size, f) != (size_t)size) size = 0;
    fclose(f);
    f = fopen("lab_props_trunc.safetensors", "wb");
    fwrite(bytes, 1, (size_t)size - 1000, f);
    fclose(f);
    float *before = malloc(lab_model_param_count(c) * sizeof(float));
    memcpy(before, lab_params(c), lab_model_param_count(c) * sizeof(float));
    st = lab_checkpoint_load_into(c, "lab_props_trunc.safetensors", &err);
    CHECK(st == POSENC_ERR_FORMAT && memcmp(before, lab_params(c), lab_model_param_count(c) * sizeof(float)) == 0,
          "truncated checkpoint refused, model unchanged: %s", err.message);
    free(before);
    free(bytes);
    /* the learned table is readable by the library's safetensors reader (posenc analyze --tensor wpe) */
    posenc_array arr;
    memset(&arr, 0, sizeof arr);
    st = posenc_safetensors_read(path, "wpe", 0, &arr, &err);
    CHECK(st == POSENC_OK && arr.ndim == 2 && arr.shape[0] == 32 && arr.shape[1] == 32, "posenc_safetensors_read(wpe): [%zu, %zu]",
          arr.shape[0], arr.shape[1]);
    posenc_array_free(&arr);
    lab_model_free(a);
    lab_model_free(c);
    remove(path);
    remove("lab_props_trunc.safetensors");
}

static void test_rope_scalings(void) {
    lab_model *m = make("scheme=rope", 2);
    train(m, 2, NULL);
    const posenc_rope_scaling s[] = {POSENC_ROPE_NONE, POSENC_ROPE_LINEAR, POSENC_ROPE_NTK, POSENC_ROPE_DYNAMIC,
                                     POSENC_ROPE_YARN, POSENC_ROPE_LLAMA3, POSENC_ROPE_LONGROPE};
    double factors[4] = {1.0, 1.5, 2.0, 4.0};
    for (size_t i = 0; i < sizeof s / sizeof *s; i++) {
        lab_eval_options ev;
        lab_eval_options_default(&ev);
        ev.seq_len = 128;
        ev.batch = 2;
        ev.max_windows = 2;
        ev.rope_scaling = s[i];
        ev.rope_factor = 4;
        ev.rope_longrope_factors = factors;
        double loss = NAN;
        posenc_error err = {0};
        posenc_status st = lab_eval_bytes(m, &ev, text, sizeof text, &loss, &err);
        CHECK(st == POSENC_OK && isfinite(loss), "eval at 4x context with rope scaling %-8s factor 4: loss %.4f %s",
              posenc_rope_scaling_name(s[i]), loss, err.message);
    }
    lab_model_free(m);
}

/* Mean loss of eval options over the first windows of the text. */
static double eval_loss(lab_model *m, posenc_rope_scaling scaling, double factor, int32_t len) {
    lab_eval_options ev;
    lab_eval_options_default(&ev);
    if ((int)scaling != -2) ev.rope_scaling = scaling; /* -2: leave the default (as trained) */
    ev.rope_factor = factor;
    ev.seq_len = len;
    ev.batch = 2;
    ev.max_windows = 4;
    double loss = NAN;
    posenc_error err = {0};
    if (lab_eval_bytes(m, &ev, text, sizeof text, &loss, &err)) printf("eval failed: %s\n", err.message);
    return loss;
}

static void test_trained_scaling(void) {
    const char *path = "lab_props_scaled.safetensors";
    const posenc_rope_scaling keep = (posenc_rope_scaling)-2;
    /* the PI procedure: a model trained at 32 fine-tuned at 64 with yarn x2 (original context 32) */
    lab_model *base = make("scheme=rope", 2);
    train(base, 3, NULL);
    lab_model *ft = make("scheme=rope context=64 rope_scaling=yarn rope_factor=2 rope_original_context=32", 2);
    posenc_error err = {0};
    posenc_status st = lab_model_copy_weights(ft, base, &err);
    CHECK(st == POSENC_OK && memcmp(lab_params(ft), lab_params(base), lab_model_param_count(ft) * sizeof(float)) == 0 &&
              lab_model_step(ft) == 0,
          "lab_model_copy_weights: context 32 -> 64 rope, every tensor copied, step 0 %s", err.message);
    /* training applies the scaling: the same steps without it give other weights */
    lab_model *plain = make("scheme=rope context=64 rope_original_context=32", 2);
    lab_model_copy_weights(plain, base, &err);
    train(ft, 3, NULL);
    train(plain, 3, NULL);
    CHECK(!same_params(ft, plain), "training with yarn x2 changes the weights differently from training without scaling");
    /* evaluation: the config's scaling by default = the explicit override with the same values, != none */
    double as_trained = eval_loss(ft, keep, 0, 64), explicit_yarn = eval_loss(ft, POSENC_ROPE_YARN, 2, 64),
           none = eval_loss(ft, POSENC_ROPE_NONE, 0, 64);
    CHECK(as_trained == explicit_yarn && as_trained != none && isfinite(none),
          "eval default = as trained (yarn x2): %.9g == explicit yarn x2 %.9g, != none %.9g", as_trained, explicit_yarn, none);
    posenc_rope_params p;
    lab_rope_params(lab_model_config(ft), NULL, &p, &err);
    double af = 0, inv[4];
    posenc_rope_frequencies(&p, 64, inv, 4, &af, &err);
    CHECK(p.scaling == POSENC_ROPE_YARN && p.factor == 2 && p.original_max_position == 32 && fabs(af - (0.1 * log(2.0) + 1)) < 1e-12,
          "lab_rope_params: yarn factor %g original %lld attention factor %.6f (0.1 ln 2 + 1)", p.factor,
          (long long)p.original_max_position, af);
    /* checkpoint round trip keeps the scaling, and the loaded model evaluates bit-identically */
    st = lab_checkpoint_save(ft, path, &err);
    lab_model *back = NULL;
    if (!st) st = lab_checkpoint_load(path, 1, &back, &err);
    char ta[2048] = "", tb[2048] = "";
    lab_config_format(lab_model_config(ft), ta, sizeof ta);
    if (back) lab_config_format(lab_model_config(back), tb, sizeof tb);
    CHECK(st == POSENC_OK && strcmp(ta, tb) == 0 && strstr(tb, "rope_scaling=yarn rope_factor=2 rope_original_context=32"),
          "checkpoint round trip keeps the scaling: %s", strstr(tb, "rope_scaling") ? strstr(tb, "rope_scaling") : err.message);
    double loaded = back ? eval_loss(back, keep, 0, 64) : NAN;
    CHECK(loaded == as_trained, "loaded checkpoint evaluates as trained by default: %.9g vs %.9g", loaded, as_trained);
    /* resuming needs the same scaling */
    lab_model *other = make("scheme=rope context=64 rope_scaling=linear rope_factor=2 rope_original_context=32", 1);
    st = lab_checkpoint_load_into(other, path, &err);
    CHECK(st == POSENC_ERR_INVALID_ARGUMENT && strstr(err.message, "rope_scaling=yarn"), "resume with another scaling refused: %s",
          err.message);
    lab_model_free(other);
    /* every trainable scaling trains (forward + backward) to a finite loss */
    const char *kinds[] = {"linear", "ntk", "dynamic", "yarn rope_attention_factor=1.25", "llama3"};
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
        char cfg[256];
        snprintf(cfg, sizeof cfg, "scheme=rope context=64 rope_original_context=32 rope_factor=2 rope_scaling=%s", kinds[i]);
        lab_model *k = make(cfg, 1);
        lab_model_copy_weights(k, base, &err);
        double loss = NAN;
        train(k, 2, &loss);
        CHECK(isfinite(loss), "train with rope_scaling=%s x2: loss %.4f", kinds[i], loss);
        lab_model_free(k);
    }
    /* a table sized by the context cannot be copied */
    lab_model *l32 = make("scheme=learned", 1), *l64 = make("scheme=learned context=64", 1);
    st = lab_model_copy_weights(l64, l32, &err);
    CHECK(st == POSENC_ERR_INVALID_ARGUMENT && strstr(err.message, "wpe"), "copy of a learned table across contexts refused: %s",
          err.message);
    lab_model_free(l32);
    lab_model_free(l64);
    lab_model_free(back);
    lab_model_free(plain);
    lab_model_free(ft);
    lab_model_free(base);
    remove(path);
}

static void test_bad_input(void) {
    const char *bad[][2] = {{"scheme=bogus", "bogus"}, {"d_model=30 heads=4", "30"}, {"scheme=rope rope_rotary_dim=3", "got 3"},
                            {"context=0", "got 0"}, {"d_model=36 heads=4 scheme=rope", "9"},
                            {"scheme=rope rope_scaling=longrope rope_factor=2", "evaluation option"},
                            {"scheme=alibi rope_scaling=linear rope_factor=2", "needs scheme rope"},
                            {"scheme=rope rope_scaling=ntk rope_factor=0.5", "0.5"},
                            {"scheme=rope rope_scaling=yarn rope_factor=2 rope_beta_fast=1 rope_beta_slow=2", "beta_fast"},
                            {"scheme=rope rope_scaling=bogus", "bogus"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        lab_config cfg;
        posenc_error err = {0};
        char full[256];
        snprintf(full, sizeof full, "layers=1 %s", bad[i][0]);
        posenc_status st = lab_config_parse_text(full, &cfg, &err);
        if (!st) {
            lab_model *m = NULL;
            st = lab_model_create(&cfg, 1, &m, &err);
            lab_model_free(m);
        }
        CHECK(st != POSENC_OK && strstr(err.message, bad[i][1]), "%-32s -> %s", bad[i][0], err.message);
    }
    lab_train_options o;
    lab_train_options_default(&o);
    o.lr = NAN;
    posenc_error err = {0};
    CHECK(lab_train_options_check(&o, &err) == POSENC_ERR_INVALID_ARGUMENT && strstr(err.message, "nan"), "NaN lr -> %s", err.message);
}

static void test_nan_stop(void) {
    const char *path = "lab_props_nan.safetensors";
    lab_model *m = make("scheme=learned", 1);
    lab_train_options o;
    lab_train_options_default(&o);
    o.steps = 2;
    o.batch = 2;
    o.checkpoint_path = path;
    posenc_error err = {0};
    lab_train(m, &o, lab_byte_batch, &source, NULL, NULL, &err);
    struct stat before, after;
    stat(path, &before);
    lab_params(m)[lab_model_param_count(m) / 2] = NAN; /* inside some tensor */
    o.steps = 4;
    posenc_status st = lab_train(m, &o, lab_byte_batch, &source, NULL, NULL, &err);
    stat(path, &after);
    CHECK(st != POSENC_OK && strstr(err.message, "step 3") && strstr(err.message, "blocks.") && before.st_mtime == after.st_mtime &&
              before.st_size == after.st_size,
          "NaN parameter: stops, names step and tensor, last checkpoint kept: %s", err.message);
    lab_model_free(m);
    remove(path);
}

/* The memory half of 004 section 8.2: lab_position_table_memory counts the
 * nonzeros of the table the forward pass really adds (read back from the
 * activations), and the layouts' sizes follow from those counts. */
static void test_position_memory(void) {
    posenc_error err = {0};
    for (int seed = 1; seed <= 3; seed++) { /* the article-claims --quick size: d 64, L 64 */
        char cfg[128];
        snprintf(cfg, sizeof cfg, "d_model=64 d_ff=256 context=64 scheme=sparse seed=%d", seed);
        lab_model *m = make(cfg, 1);
        int32_t tok[64], tgt[64];
        lab_byte_batch(&source, 0, 1, 64, 1, tok, tgt, &err);
        double loss = 0;
        posenc_status st = lab_forward(m, tok, tgt, NULL, 1, 64, NULL, 0, NULL, &loss, &err);
        int64_t nz = 0, kept = 0, kept_even = 0;
        for (size_t i = 0; st == POSENC_OK && i < 64 * 64; i++) nz += m->acts.pe[i] != 0.0f;
        for (int k = 0; k < 64; k++) kept += m->sparse_mask[k] != 0, kept_even += k % 2 == 0 && m->sparse_mask[k] != 0;
        lab_table_memory t;
        st = st ? st : lab_position_table_memory(m, 64, &t, &err);
        CHECK(st == POSENC_OK && t.rows == 64 && t.cols == 64 && t.nonzeros == nz && t.kept_channels == kept &&
                  nz == 64 * kept - kept_even && t.dense_bytes == 64 * 64 * 4 &&
                  t.csr_bytes == (size_t)nz * 8 + 65 * 4 && t.bitmask_bytes == 64 * 8 + (size_t)nz * 4 &&
                  t.columns_bytes == (size_t)kept * 4 + 64 * (size_t)kept * 4 && t.coo64_bytes == (size_t)nz * 20 + 16,
              "sparse seed %d: %lld of 64 channels kept, %lld nonzeros (= the forward's, = 64 x kept - kept sin(0) channels); "
              "dense %zu, csr %zu, bitmask %zu, columns %zu, tf coo %zu bytes %s", seed, (long long)kept, (long long)t.nonzeros,
              t.dense_bytes, t.csr_bytes, t.bitmask_bytes, t.columns_bytes, t.coo64_bytes, err.message);
        lab_model_free(m);
    }
    lab_model *m = make("scheme=sinusoidal", 1);
    lab_table_memory t;
    posenc_status st = lab_position_table_memory(m, 32, &t, &err);
    const lab_config *c = lab_model_config(m);
    size_t BT = 4 * 32, want = 16 * lab_model_param_count(m) + lab_activation_bytes(c, 4, 32) +
                               BT * (5 * 32 + 2 * 64) * sizeof(float) + 32 * 32 * sizeof(float);
    CHECK(st == POSENC_OK && t.nonzeros == 32 * 32 - 16 && t.kept_channels == 32 && t.columns_bytes == t.dense_bytes + 32 * 4 &&
              lab_training_memory_bytes(m, 4, 32) == want,
          "sinusoidal [32, 32]: %lld nonzeros (only sin(0) is 0), training step %zu bytes (= 16 x params + activations + "
          "backward buffers + table)", (long long)t.nonzeros, lab_training_memory_bytes(m, 4, 32));
    lab_model_free(m);
    m = make("scheme=learned", 1);
    st = lab_position_table_memory(m, 32, &t, &err);
    CHECK(st == POSENC_OK && t.cols == 0, "learned (a parameter, no fixed table): cols 0");
    lab_model_free(m);
}

int main(void) {
    for (size_t i = 0; i < sizeof text; i++) text[i] = (uint8_t)("the quick brown fox jumps over the lazy dog. "[i % 45] + (i / 45) % 3);
    test_threads();
    test_random_positions();
    test_permutation();
    test_offsets();
    test_learned_past_end();
    test_checkpoints();
    test_rope_scalings();
    test_trained_scaling();
    test_bad_input();
    test_nan_stop();
    test_position_memory();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
