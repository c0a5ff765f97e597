/* cmd_lab.c: `posenc lab train|eval|bench`: the training lab (lab/lab.h,
 * docs/lab.md) driven from the command line. Parsing, files and words here;
 * the model, the schemes and the optimizer live in lab/. */
#define _GNU_SOURCE /* popen, getrusage under -std=c11 */
#include "cli.h"
#include "experiments.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

static const cli_option model_options[] = {
    {"scheme", "S", "position scheme: none sinusoidal learned rope alibi t5 shaw concat half-concat hybrid freq-scale gru sparse index normalized"},
    {"shaw-clip", "K", "shaw: clip distance (tables of 2K+1 rows), default 16"},
    {"text", "FILE", "training text (bytes); required"},
    {"o", "CKPT", "checkpoint to write (.safetensors), atomically, at the end and every --checkpoint-every steps"},
    {"resume", "CKPT", "continue from this checkpoint (same configuration), bit-identically"},
    {"steps", "N", "total optimizer steps, default 200"},
    {"batch", "B", "sequences per step, default 16"},
    {"lr", "X", "peak learning rate, default 1e-3"},
    {"warmup", "N", "warmup steps, default 20"},
    {"weight-decay", "X", "AdamW decoupled weight decay, default 0.1"},
    {"clip", "X", "gradient-norm clip (0 = off), default 1"},
    {"checkpoint-every", "N", "also write the checkpoint every N steps"},
    {"log-every", "N", "print a line every N steps, default 10"},
    {"layers", "N", "default 4"},
    {"d-model", "N", "default 128"},
    {"heads", "N", "default 4"},
    {"d-ff", "N", "default 4 x d-model"},
    {"context", "T", "training length (and learned table rows), default 128"},
    {"vocab", "V", "vocabulary (256 bytes + task tokens), default 256"},
    {"untied", NULL, "separate output matrix (default: tied to the token embedding)"},
    {"seed", "N", "default 1"},
    {"threads", "N", "worker threads (results do not depend on it), default: all cores"},
    {"token-scale", NULL, "sinusoidal: multiply token embeddings by sqrt(d_model)"},
    {"learned-sigma", "X", "learned/hybrid init N(0, X), default 0.02"},
    {"past-end", "P", "learned/hybrid past the table: refuse (default) | clamp"},
    {"rope-layout", "L", "half (default) | interleaved"},
    {"rotary-dim", "R", "rope: rotate only the first R channels of each head"},
    {"rope-base", "B", "default 10000"},
    {"alibi-max-bias", "B", "default 8"},
    {"t5-buckets", "N", "default 32"},
    {"t5-max-distance", "N", "default 128"},
    {"pe-dim", "N", "concat: sinusoid channels (default d-model)"},
    {"hybrid-learned-dim", "N", "hybrid: learned channels (default d-model/2)"},
    {"sparse-keep", "X", "sparse: probability a channel is kept, default 0.1"},
    {"random-positions", "N", "train on sorted random subsets of [0, N) (Ruoss et al. 2023)"},
    {"init", "CKPT", "start from this checkpoint's weights and configuration (a fine-tune); the flags given change the configuration (e.g. --context 256 --rope-scaling linear --rope-factor 2); AdamW state and step start at 0"},
    {"rope-scaling", "S", "rope: train with this scaling: none (default) | linear | ntk | dynamic | yarn | llama3; in the forward and backward, saved in the checkpoint, used by lab eval by default (dynamic at a fixed training length = NTK at the base the dynamic formula gives for that length)"},
    {"rope-factor", "F", "scaling factor s (default 1)"},
    {"rope-original-max", "L0", "the context the scaling extends (original_max_position; dynamic: max_position); default: --init's original context, else --context"},
    {"rope-beta-fast", "X", "yarn: ramp rotations, default 32"},
    {"rope-beta-slow", "X", "yarn: default 1"},
    {"rope-attention-factor", "X", "yarn: cos/sin magnitude (default 0 = 0.1 ln s + 1)"},
    {"rope-low-freq-factor", "X", "llama3: default 1"},
    {"rope-high-freq-factor", "X", "llama3: default 4"},
    {NULL, NULL, NULL}};

static const cli_option eval_options[] = {
    {"checkpoint", "CKPT", "model to evaluate; required"},
    {"text", "FILE", "evaluation text; required"},
    {"len", "T", "evaluation length (default: the training context)"},
    {"offset", "P", "first position (default 0)"},
    {"batch", "B", "windows per forward pass, default 4"},
    {"max-windows", "N", "evaluate at most N non-overlapping windows"},
    {"rope-scaling", "S", "none | linear | ntk | dynamic | yarn | llama3 | longrope (default: the checkpoint's own, as trained; none = off)"},
    {"longrope-factors", "F.npy", "longrope: rotary_dim/2 per-pair factors (1-D .npy)"},
    {"rope-factor", "F", "scaling factor (default: the checkpoint's, 1 when trained without scaling)"},
    {"past-end", "P", "learned tables past their end: refuse | clamp (default: as trained)"},
    {"threads", "N", "worker threads"},
    {"json", NULL, "print one JSON object"},
    {"context-use", NULL, "score fixed target bytes with exactly c bytes of context, c = 1, 2, 4 .. 16 x the training "
                          "context (and L), and report the effective context (the smallest c within 0.01 bpb of the best)"},
    {"spans", "N", "--context-use: target spans of 16L bytes spread over the text (default 8)"},
    {"stride", "K", "--context-use: score every K-th byte of each span (default 8)"},
    {NULL, NULL, NULL}};

static int read_text(const char *path, uint8_t **bytes, size_t *size) {
    posenc_error err = {0};
    void *data = NULL;
    if (posenc_file_read_all(path, 0, &data, size, &err) != POSENC_OK) return cli_fail_status("lab", &err);
    *bytes = data;
    return EXIT_OK;
}

static bool parse_past_end(const cli_args *a, posenc_past_end *out) {
    static const char *const names[] = {"refuse", "clamp", NULL};
    int i = *out == POSENC_PAST_END_CLAMP ? 1 : 0;
    if (!cli_choice(a, "past-end", names, &i)) return false;
    *out = i == 1 ? POSENC_PAST_END_CLAMP : POSENC_PAST_END_ERROR;
    return true;
}

typedef struct {
    int64_t log_every;
    double started;
    int32_t tokens_per_step;
} log_ctx;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* lab train's one piece of process state (as lab run's): Ctrl-C / SIGTERM ask training to stop
 * after the step in progress, so that what was trained is kept (-o) or the user is told it
 * was not; a handler can only set a flag. Holds the signal's number for the 128 + N exit. */
static volatile sig_atomic_t train_stop = 0;
static void on_train_interrupt(int sig) { train_stop = sig; }

static int on_step(void *ctx_, const lab_step_report *r) {
    log_ctx *c = ctx_;
    if (train_stop) return 1;
    if (r->step % c->log_every == 0 || r->step == 1) {
        printf("step %6lld  loss %.4f  bpb %.4f  lr %.2e  |g| %.3f  [", (long long)r->step, r->loss, r->loss / log(2.0),
               r->lr, r->grad_norm);
        for (int g = 0; g < LAB_GROUPS; g++) printf("%s%s %.3g", g ? " " : "", lab_group_name(g), r->group_norms[g]);
        printf("]  %.0f tok/s\n", (double)c->tokens_per_step * (double)r->step / (now_s() - c->started));
        fflush(stdout);
    }
    return 0;
}

/* The model configuration from the flags, on top of *cfg (defaults, or --init's). */
static int train_config(const cli_args *a, lab_config *cfg_out) {
    lab_config cfg = *cfg_out;
    posenc_error err = {0};
    if (cli_has(a, "scheme") && lab_scheme_parse(cli_string(a, "scheme", ""), &cfg.scheme, &err) != POSENC_OK)
        return cli_fail_status("lab train", &err);
    int64_t seed = (int64_t)cfg.seed, random_positions = cfg.random_positions;
    int32_t rope_layout_i = cfg.rope_layout == POSENC_LAYOUT_INTERLEAVED ? 1 : 0;
    bool ok = cli_int32(a, "layers", 0, 1 << 30, &cfg.layers) && cli_int32(a, "d-model", -(1 << 30), 1 << 30, &cfg.d_model) &&
              cli_int32(a, "heads", -(1 << 30), 1 << 30, &cfg.heads) && cli_int32(a, "context", -(1 << 30), 1 << 30, &cfg.context) &&
              cli_int32(a, "vocab", 0, 1 << 30, &cfg.vocab) && cli_int64(a, "seed", 0, INT64_MAX, &seed) &&
              cli_double(a, "learned-sigma", &cfg.learned_sigma) && parse_past_end(a, &cfg.learned_past_end) &&
              cli_int32(a, "rotary-dim", 0, 1 << 20, &cfg.rope_rotary_dim) && cli_double(a, "rope-base", &cfg.rope_base) &&
              cli_double(a, "alibi-max-bias", &cfg.alibi_max_bias) && cli_int32(a, "t5-buckets", 0, 1 << 20, &cfg.t5_buckets) &&
              cli_int32(a, "t5-max-distance", 0, 1 << 30, &cfg.t5_max_distance) && cli_int32(a, "pe-dim", 0, 1 << 20, &cfg.pe_dim) &&
              cli_int32(a, "hybrid-learned-dim", 0, 1 << 20, &cfg.hybrid_learned_dim) && cli_int32(a, "shaw-clip", 0, 1 << 20, &cfg.shaw_clip) &&
              cli_double(a, "sparse-keep", &cfg.sparse_keep) && cli_int64(a, "random-positions", 0, INT64_MAX, &random_positions) &&
              cli_get_scaling(a, "rope-scaling", &cfg.rope_scaling) && cli_double(a, "rope-factor", &cfg.rope_factor) &&
              cli_int32(a, "rope-original-max", 1, 65536, &cfg.rope_original_context) &&
              cli_double(a, "rope-beta-fast", &cfg.rope_beta_fast) && cli_double(a, "rope-beta-slow", &cfg.rope_beta_slow) &&
              cli_double(a, "rope-attention-factor", &cfg.rope_attention_factor) &&
              cli_double(a, "rope-low-freq-factor", &cfg.rope_low_freq_factor) &&
              cli_double(a, "rope-high-freq-factor", &cfg.rope_high_freq_factor);
    static const char *const layouts[] = {"half", "interleaved", NULL};
    if (!ok || !cli_choice(a, "rope-layout", layouts, &rope_layout_i)) return EXIT_USAGE;
    if (cli_has(a, "d-model")) cfg.d_ff = 4 * cfg.d_model;
    if (!cli_int32(a, "d-ff", -(1 << 30), 1 << 30, &cfg.d_ff)) return EXIT_USAGE;
    if (cli_has(a, "rope-factor") && cfg.rope_scaling == POSENC_ROPE_NONE)
        return cli_fail("lab train", EXIT_USAGE, "add --rope-scaling linear|ntk|dynamic|yarn|llama3",
                        "--rope-factor %g has no effect with --rope-scaling none", cfg.rope_factor);
    cfg.rope_layout = rope_layout_i == 1 ? POSENC_LAYOUT_INTERLEAVED : POSENC_LAYOUT_HALF;
    cfg.seed = (uint64_t)seed;
    cfg.random_positions = random_positions;
    if (cli_has(a, "token-scale")) cfg.token_scale_sqrt_d = 1;
    if (cli_has(a, "untied") || cfg.scheme == LAB_POS_HALF_CONCAT) cfg.tied = 0;
    *cfg_out = cfg;
    return EXIT_OK;
}

static int lab_train_cmd(int argc, char **argv) {
    cli_args a;
    int rc = cli_parse(&a, "lab train", model_options, argc, argv, 0);
    if (rc != EXIT_OK) return rc;
    if (a.help) {
        printf("usage: posenc lab train --scheme S --text FILE -o CKPT [options]\n\n"
               "Train the lab's byte-level decoder on FILE with position scheme S (docs/lab.md).\n\n");
        cli_print_options(model_options);
        return EXIT_OK;
    }
    if (!cli_has(&a, "text")) return cli_fail("lab train", EXIT_USAGE, "posenc lab train --help", "--text FILE is required");
    lab_config cfg;
    lab_config_default(&cfg);
    posenc_error err = {0};
    lab_model *init = NULL;
    int32_t threads = 0;
    if (!cli_int32(&a, "threads", 0, POSENC_MAX_THREADS, &threads)) return EXIT_USAGE;
    lab_train_options opt;
    lab_train_options_default(&opt);
    opt.steps = 200;
    int64_t log_every = 10;
    if (!cli_int64(&a, "steps", 0, INT64_MAX, &opt.steps) || !cli_int32(&a, "batch", -(1 << 30), 1 << 30, &opt.batch) ||
        !cli_double(&a, "lr", &opt.lr) || !cli_int64(&a, "warmup", 0, INT64_MAX, &opt.warmup) ||
        !cli_double(&a, "weight-decay", &opt.weight_decay) || !cli_double(&a, "clip", &opt.clip) ||
        !cli_int64(&a, "checkpoint-every", 0, INT64_MAX, &opt.checkpoint_every) ||
        !cli_int64(&a, "log-every", 1, INT64_MAX, &log_every))
        return EXIT_USAGE;
    opt.checkpoint_path = cli_has(&a, "o") ? cli_string(&a, "o", "") : NULL;
    if (lab_train_options_check(&opt, &err) != POSENC_OK) return cli_fail_status("lab train", &err);
    if (cli_has(&a, "init") && cli_has(&a, "resume"))
        return cli_fail("lab train", EXIT_USAGE, NULL, "--init starts a new run from a checkpoint's weights; --resume continues one: give one");
    uint8_t *text = NULL;
    size_t size = 0;
    if ((rc = read_text(cli_string(&a, "text", ""), &text, &size)) != EXIT_OK) return rc;
    /* from here on: init and text are freed on every path */
    if (cli_has(&a, "init")) {
        if (lab_checkpoint_load(cli_string(&a, "init", ""), threads, &init, &err) != POSENC_OK) {
            free(text);
            return cli_fail_status("lab train", &err);
        }
        cfg = *lab_model_config(init);
        if (cfg.scheme == LAB_POS_ROPE && cfg.rope_original_context == 0) cfg.rope_original_context = cfg.context;
    }
    rc = train_config(&a, &cfg);
    if (rc == EXIT_OK && lab_config_check(&cfg, &err) != POSENC_OK) {
        /* with --init, a value out of range may come from the checkpoint (a field its
           own scheme left unused, now used): when the flags alone over the defaults
           pass, the checkpoint is what is wrong, and it is named (a file error, 1) */
        lab_config flags_only;
        lab_config_default(&flags_only);
        posenc_error ignored = {0};
        if (init && train_config(&a, &flags_only) == EXIT_OK && lab_config_check(&flags_only, &ignored) == POSENC_OK)
            rc = cli_fail("lab train", EXIT_RUNTIME, "give the flag for that field, or --init from another checkpoint",
                          "--init %s: its configuration, with the flags given, is out of range: %s",
                          cli_string(&a, "init", ""), err.message);
        else
            rc = cli_fail_status("lab train", &err);
    }
    if (rc != EXIT_OK) {
        lab_model_free(init);
        free(text);
        return rc;
    }
    lab_model *m = NULL;
    posenc_status st = lab_model_create(&cfg, threads, &m, &err);
    if (!st && cli_has(&a, "resume")) st = lab_checkpoint_load_into(m, cli_string(&a, "resume", ""), &err);
    if (!st && init) st = lab_model_copy_weights(m, init, &err);
    lab_model_free(init);
    if (st) {
        free(text);
        lab_model_free(m);
        return cli_fail_status("lab train", &err);
    }
    if (cli_has(&a, "init")) {
        fputs("posenc lab train: weights from ", stdout);
        cli_put_escaped(stdout, cli_string(&a, "init", ""));
        fputc('\n', stdout);
    }
    char cfg_text[2048];
    lab_config_format(&cfg, cfg_text, sizeof cfg_text);
    printf("posenc lab train: %zu parameters, %zu activation bytes per step, %lld steps from step %lld\nconfig: %s\n",
           lab_model_param_count(m), lab_activation_bytes(&cfg, opt.batch, cfg.context), (long long)opt.steps,
           (long long)lab_model_step(m), cfg_text);
    lab_byte_source src = {text, size};
    log_ctx lc = {log_every, now_s(), opt.batch * cfg.context};
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_train_interrupt;
    /* a signal the parent ignores stays ignored (background jobs, nohup) */
    bool set_int = sigaction(SIGINT, NULL, &old_int) == 0 && old_int.sa_handler != SIG_IGN;
    bool set_term = sigaction(SIGTERM, NULL, &old_term) == 0 && old_term.sa_handler != SIG_IGN;
    if (set_int) sigaction(SIGINT, &sa, NULL);
    if (set_term) sigaction(SIGTERM, &sa, NULL);
    st = lab_train(m, &opt, lab_byte_batch, &src, on_step, &lc, &err);
    if (set_int) sigaction(SIGINT, &old_int, NULL);
    if (set_term) sigaction(SIGTERM, &old_term, NULL);
    free(text);
    if (!st && train_stop) { /* lab_train stopped after the step in progress and saved to -o */
        int sig = train_stop;
        if (opt.checkpoint_path)
            cli_note("lab train", "interrupted after step %lld of %lld: wrote %s (step %lld), resume with --resume %s",
                     (long long)lab_model_step(m), (long long)opt.steps, opt.checkpoint_path,
                     (long long)lab_model_step(m), opt.checkpoint_path);
        else
            cli_note("lab train", "interrupted after step %lld of %lld: nothing kept (no -o was given, so the %lld "
                     "trained steps are lost)",
                     (long long)lab_model_step(m), (long long)opt.steps, (long long)lab_model_step(m));
        lab_model_free(m);
        return 128 + sig;
    }
    if (st) {
        lab_model_free(m);
        return cli_fail(
            "lab train", EXIT_RUNTIME, opt.checkpoint_path ? "the last checkpoint written (if any) is unchanged" : NULL, "%s",
            err.message);
    }
    if (opt.checkpoint_path) printf("wrote %s (step %lld)\n", opt.checkpoint_path, (long long)lab_model_step(m));
    lab_model_free(m);
    return EXIT_OK;
}

/* lab eval --context-use (issue 42): the protocol's context curve on this text. */
static int context_use(cli_args *a, lab_model *m, const lab_eval_options *ev, const uint8_t *text, size_t size) {
    int32_t spans = 8, stride = 8, L = lab_model_config(m)->context;
    if (!cli_int32(a, "spans", 1, LAB_MAX_DOCS, &spans) || !cli_int32(a, "stride", 1, 1 << 20, &stride)) return EXIT_USAGE;
    int32_t longest = LAB_TARGET_SPAN_MULTIPLE * L;
    posenc_error err = {0};
    lab_target_set set;
    if (lab_target_set_make(size, spans, longest, longest, &set, &err) != POSENC_OK) return cli_fail_status("lab eval", &err);
    int32_t grid[LAB_CONTEXT_MAX];
    int count = lab_context_grid(L, longest, grid);
    lab_context_result *r = malloc(sizeof *r);
    if (!r) return cli_fail("lab eval", EXIT_RUNTIME, NULL, "out of memory");
    if (lab_eval_context(m, ev, text, size, &set, stride, grid, count, r, &err) != POSENC_OK) {
        free(r);
        return cli_fail_status("lab eval", &err);
    }
    double bpb[LAB_CONTEXT_MAX];
    for (int i = 0; i < count; i++) bpb[i] = r->loss[i] / log(2.0);
    int32_t eff = lab_effective_context(grid, bpb, count, longest, LAB_CONTEXT_MARGIN_BPB);
    int32_t eff_L = lab_effective_context(grid, bpb, count, L, LAB_CONTEXT_MARGIN_BPB);
    if (cli_has(a, "json")) {
        printf("{\"train_length\": %d, \"targets\": %lld, \"margin_bpb\": %g, \"c\": [", L, (long long)r->targets,
               LAB_CONTEXT_MARGIN_BPB);
        for (int i = 0; i < count; i++) printf("%s%d", i ? ", " : "", grid[i]);
        printf("], \"bpb\": [");
        for (int i = 0; i < count; i++) printf("%s%.9g", i ? ", " : "", bpb[i]);
        printf("], \"effective_context\": %d, \"effective_context_within_L\": %d, \"gains_at_L\": %s}\n", eff, eff_L,
               eff_L == L ? "true" : "false");
    } else {
        printf("context use: %lld target bytes (%d spans, every %d-th byte), each scored with exactly c bytes before it\n",
               (long long)r->targets, spans, stride);
        for (int i = 0; i < count; i++) printf("  c = %6d  bpb %.4f%s\n", grid[i], bpb[i], grid[i] == L ? "  (= L)" : "");
        printf("effective context (smallest c within %.2f bpb of the best): %d bytes; within c <= L: %d; %s at L\n",
               LAB_CONTEXT_MARGIN_BPB, eff, eff_L, eff_L == L ? "still gains" : "no longer gains");
    }
    free(r);
    return EXIT_OK;
}

static int lab_eval_cmd(int argc, char **argv) {
    cli_args a;
    int rc = cli_parse(&a, "lab eval", eval_options, argc, argv, 0);
    if (rc != EXIT_OK) return rc;
    if (a.help) {
        printf("usage: posenc lab eval --checkpoint CKPT --text FILE [--len T] [--rope-scaling S --rope-factor F]\n\n"
               "Mean loss (nats/byte) and bits per byte over non-overlapping windows of T+1 bytes.\n\n");
        cli_print_options(eval_options);
        return EXIT_OK;
    }
    if (!cli_has(&a, "checkpoint") || !cli_has(&a, "text"))
        return cli_fail("lab eval", EXIT_USAGE, "posenc lab eval --help", "--checkpoint and --text are required");
    lab_eval_options ev;
    lab_eval_options_default(&ev);
    int32_t threads = 0;
    posenc_error err = {0};
    posenc_past_end pe = POSENC_PAST_END_ERROR;
    if (!cli_int32(&a, "len", 1, 65536, &ev.seq_len) || !cli_int64(&a, "offset", 0, (int64_t)1 << 40, &ev.position_offset) ||
        !cli_int32(&a, "batch", 1, 4096, &ev.batch) || !cli_int32(&a, "max-windows", 0, 1 << 30, &ev.max_windows) ||
        !cli_double(&a, "rope-factor", &ev.rope_factor) || !cli_int32(&a, "threads", 0, POSENC_MAX_THREADS, &threads) ||
        !parse_past_end(&a, &pe))
        return EXIT_USAGE;
    if (cli_has(&a, "past-end")) ev.learned_past_end_override = pe;
    if (cli_has(&a, "rope-scaling") && posenc_rope_scaling_parse(cli_string(&a, "rope-scaling", ""), &ev.rope_scaling, &err))
        return cli_fail_status("lab eval", &err);
    int64_t *factor_ids = NULL;
    double *factors = NULL;
    size_t factor_count = 0;
    if (cli_has(&a, "longrope-factors")) {
        if ((rc = cli_read_positions("lab eval", cli_string(&a, "longrope-factors", ""), &factor_ids, &factors,
                                     &factor_count)) != EXIT_OK)
            return rc;
        if (factor_ids) { /* an integer .npy: widen */
            factors = malloc(sizeof(double) * factor_count);
            for (size_t i = 0; factors && i < factor_count; i++) factors[i] = (double)factor_ids[i];
            free(factor_ids);
            if (!factors) return cli_fail("lab eval", EXIT_RUNTIME, NULL, "out of memory");
        }
        ev.rope_longrope_factors = factors;
    }
    lab_model *m = NULL;
    if (lab_checkpoint_load(cli_string(&a, "checkpoint", ""), threads, &m, &err) != POSENC_OK) {
        free(factors);
        return cli_fail_status("lab eval", &err);
    }
    if (factors) {
        const lab_config *mc = lab_model_config(m);
        size_t want = (size_t)(mc->rope_rotary_dim ? mc->rope_rotary_dim : mc->d_model / mc->heads) / 2;
        if (factor_count != want) {
            lab_model_free(m);
            free(factors);
            return cli_fail("lab eval", EXIT_USAGE, NULL, "--longrope-factors must hold rotary_dim/2 = %zu values, got %zu",
                            want, factor_count);
        }
    }
    uint8_t *text = NULL;
    size_t size = 0;
    if ((rc = read_text(cli_string(&a, "text", ""), &text, &size)) != EXIT_OK) {
        lab_model_free(m);
        free(factors);
        return rc;
    }
    int32_t want = ev.seq_len ? ev.seq_len : lab_model_config(m)->context;
    if (size < (size_t)want + 1) { /* the file's content, not an option, is short: name it */
        free(text);
        lab_model_free(m);
        free(factors);
        return cli_fail("lab eval", EXIT_RUNTIME, "give a longer text, or a smaller --len",
                        "%s holds %zu bytes: evaluating at length %d needs at least %d (each window's %d bytes and the "
                        "byte after them)", cli_string(&a, "text", ""), size, want, want + 1, want);
    }
    if (cli_has(&a, "context-use")) {
        rc = context_use(&a, m, &ev, text, size);
        free(text);
        free(factors);
        lab_model_free(m);
        return rc;
    }
    double loss = 0;
    posenc_status st = lab_eval_bytes(m, &ev, text, size, &loss, &err);
    free(text);
    const lab_config *mc = lab_model_config(m);
    int32_t len = ev.seq_len ? ev.seq_len : mc->context;
    char rope_json[160] = "", rope_text[160] = "";
    posenc_rope_params rp;
    if (!st && mc->scheme == LAB_POS_ROPE && lab_rope_params(mc, &ev, &rp, NULL) == POSENC_OK) {
        const char *how = ev.rope_scaling == LAB_ROPE_AS_TRAINED ? "as trained" : "--rope-scaling";
        double f = rp.scaling == POSENC_ROPE_NONE ? 1.0 : rp.factor;
        snprintf(rope_json, sizeof rope_json, ", \"rope_scaling\": \"%s\", \"rope_factor\": %.9g",
                 posenc_rope_scaling_name(rp.scaling), f);
        snprintf(rope_text, sizeof rope_text, "  (rope scaling %s factor %g, %s)", posenc_rope_scaling_name(rp.scaling), f, how);
    }
    free(factors); /* after lab_rope_params: ev.rope_longrope_factors points into it */
    lab_model_free(m);
    if (st) return cli_fail_status("lab eval", &err);
    if (cli_has(&a, "json"))
        printf("{\"len\": %d, \"offset\": %lld, \"loss\": %.9g, \"bpb\": %.9g%s}\n", len, (long long)ev.position_offset, loss,
               loss / log(2.0), rope_json);
    else
        printf("len %d  offset %lld  loss %.4f nats/byte  %.4f bits/byte%s\n", len, (long long)ev.position_offset, loss,
               loss / log(2.0), rope_text);
    return EXIT_OK;
}

/* ---- benchmark ---- */
static int cmp_d(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double cpu_s(void) { /* process CPU time: robust to other processes sharing the cores */
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double peak_rss_mib(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

typedef struct {
    const char *name;
    int32_t layers, d_model, heads, context, batch;
} bench_model;

static const bench_model bench_models[] = {
    {"small", 2, 64, 2, 64, 16}, {"default", 4, 128, 4, 128, 16}, {"large", 6, 256, 8, 256, 8}, {NULL, 0, 0, 0, 0, 0}};

/* Median step time (seconds) of the C model; the same batch every step. */
static int time_c_step(const bench_model *bm, int32_t threads, int reps, double *median, double *cpu_median,
                       posenc_error *err) {
    lab_config cfg;
    lab_config_default(&cfg);
    cfg.layers = bm->layers;
    cfg.d_model = bm->d_model;
    cfg.heads = bm->heads;
    cfg.d_ff = 4 * bm->d_model;
    cfg.context = bm->context;
    lab_model *m = NULL;
    if (lab_model_create(&cfg, threads, &m, err) != POSENC_OK) return -1;
    size_t bt = (size_t)bm->batch * (size_t)bm->context;
    int32_t *tok = malloc(bt * sizeof(int32_t)), *tgt = malloc(bt * sizeof(int32_t));
    double *t = malloc(sizeof(double) * (size_t)reps), *ct = malloc(sizeof(double) * (size_t)reps);
    int rc = tok && tgt && t && ct ? 0 : -1;
    for (size_t i = 0; i < bt && !rc; i++) {
        tok[i] = (int32_t)((i * 31 + 7) % 256);
        tgt[i] = (int32_t)((i * 17 + 3) % 256);
    }
    lab_train_options opt;
    lab_train_options_default(&opt);
    for (int r = -1; r < reps && !rc; r++) { /* one warm-up */
        double t0 = now_s(), c0 = cpu_s(), loss = 0;
        lab_zero_grad(m);
        if (lab_forward(m, tok, tgt, NULL, bm->batch, bm->context, NULL, 1, NULL, &loss, err) ||
            lab_backward(m, err) || lab_adamw_step(m, &opt, 1e-4, NULL, err))
            rc = -1;
        if (r >= 0) {
            t[r] = now_s() - t0;
            ct[r] = cpu_s() - c0;
        }
    }
    if (!rc) {
        qsort(t, (size_t)reps, sizeof(double), cmp_d);
        qsort(ct, (size_t)reps, sizeof(double), cmp_d);
        *median = t[reps / 2];
        *cpu_median = ct[reps / 2];
    }
    free(ct);
    free(tok);
    free(tgt);
    free(t);
    lab_model_free(m);
    return rc;
}

/* Torch's step for one model, every mode (eager, torch.compile) at every thread
 * count in `threads` (bench/lab_torch_bench.py runs them in one process and
 * prints "result MODE THREADS step_ms cpu_ms compile_s best_ms"). glibc's malloc
 * is told to keep freed memory: torch allocates every step's tensors afresh, and
 * returning them to the kernel made each step fault its pages in again (a third of
 * torch's step here, where a page fault costs a VM exit); jemalloc/tcmalloc, the
 * usual advice for torch on CPU, do the same. Returns how many results were read
 * (0: torch did not run, why says why). */
typedef struct {
    char mode[16];
    int threads;
    double ms, cpu_ms, compile_s;
} torch_result;

static int torch_steps(const char *python, const char *script, const bench_model *bm, const char *threads_list,
                       int reps, torch_result *out, int max, char *why, size_t why_size) {
    char cmd[2048];
    if (!cli_shell_command(cmd, sizeof cmd, python, script,
                           "env MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=1073741824 "
                           "MALLOC_TOP_PAD_=268435456 '%s' '%s' --layers %d --d-model %d --heads %d --context %d "
                           "--batch %d --threads %s --reps %d 2>&1",
                           python, script, bm->layers, bm->d_model, bm->heads, bm->context, bm->batch, threads_list,
                           reps)) {
        snprintf(why, why_size, "the interpreter or script path holds a single quote or is too long");
        return 0;
    }
    FILE *p = popen(cmd, "r");
    if (!p) {
        snprintf(why, why_size, "cannot start %s", python);
        return 0;
    }
    char line[512], last[512] = "";
    int n = 0;
    while (fgets(line, sizeof line, p)) {
        torch_result r;
        if (n < max && sscanf(line, "result %15s %d %lf %lf %lf", r.mode, &r.threads, &r.ms, &r.cpu_ms, &r.compile_s) == 5 &&
            r.ms > 0)
            out[n++] = r;
        line[strcspn(line, "\n")] = '\0';
        if (line[0]) snprintf(last, sizeof last, "%s", line);
    }
    int status = pclose(p);
    if (n == 0) /* the interpreter's last words say why: no torch, no script, ... */
        snprintf(why, why_size, "%s (%s %s, exit status %d)", last[0] ? last : "no result line", python, script,
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return n;
}

/* torch's best at `threads`: the fastest result of any mode at any thread count <= threads */
static const torch_result *torch_best(const torch_result *r, int n, int threads) {
    const torch_result *best = NULL;
    for (int i = 0; i < n; i++)
        if (r[i].threads <= threads && (!best || r[i].ms < best->ms)) best = &r[i];
    return best;
}

/* the fastest result of one mode at exactly `threads` */
static const torch_result *torch_mode(const torch_result *r, int n, const char *mode, int threads) {
    const torch_result *best = NULL;
    for (int i = 0; i < n; i++)
        if (r[i].threads == threads && strcmp(r[i].mode, mode) == 0 && (!best || r[i].ms < best->ms)) best = &r[i];
    return best;
}

/* How the C step's cost grows (issue 4 of issue 43): the default model (4 layers,
 * batch 16) at context 32..1024 (width 128), then at width 64..512 (context 128;
 * heads = width / 32, d_ff = 4 x width). ms/step, us per token, GFLOP/s and the
 * share of the sgemm peak: linear in T where only the matmuls grow, T^2 where the
 * attention's [T, T] scores dominate; width grows matmul work as C^2. */
static int lab_bench_growth(const int *threads, int nthreads, int reps) {
    printf("| sweep | context T | width C | threads | ms/step | us/token | GFLOP/step | GFLOP/s | %% of sgemm x threads |\n"
           "|---|---|---|---|---|---|---|---|---|\n");
    for (int sweep = 0; sweep < 2; sweep++)
        for (int v = sweep ? 64 : 32; v <= (sweep ? 512 : 1024); v *= 2)
            for (int t = 0; t < nthreads; t++) {
                bench_model bm = {"growth", 4, sweep ? v : 128, sweep ? v / 32 : 4, sweep ? 128 : v, 16};
                posenc_error err = {0};
                double sec = 0, cpu = 0, peak = lab_sgemm_gflops(512, 5);
                if (time_c_step(&bm, threads[t], reps, &sec, &cpu, &err) != 0) return cli_fail_status("bench", &err);
                double after = lab_sgemm_gflops(512, 5);
                if (after > peak) peak = after;
                lab_config cfg;
                lab_config_default(&cfg);
                cfg.layers = bm.layers;
                cfg.d_model = bm.d_model;
                cfg.heads = bm.heads;
                cfg.d_ff = 4 * bm.d_model;
                cfg.context = bm.context;
                double flops = lab_step_flops(&cfg, bm.batch, bm.context);
                printf("| %s | %d | %d | %d | %.2f | %.2f | %.3f | %.1f | %.0f%% |\n", sweep ? "width" : "context",
                       bm.context, bm.d_model, threads[t], sec * 1e3, sec * 1e6 / ((double)bm.batch * bm.context),
                       flops * 1e-9, flops / sec * 1e-9, 100.0 * flops / sec * 1e-9 / (peak * threads[t]));
                fflush(stdout);
            }
    printf("\nbatch 16, 4 layers; heads = C / 32 in the width sweep (head dim 32, as the default model); median of the steps;\n"
           "%% of sgemm: against the lab's sgemm (OpenBLAS, or oneDNN under POSENC_LAB_BLAS=onednn) 512^3 on 1 thread just before and after the row, the better.\n");
    return EXIT_OK;
}

/* Where a step's time goes (issue 43): every phase of the step (lab_model_profile),
 * CPU ms per step (the process's: all pool threads, their spinning included) and wall
 * ms, over `reps` steps after one warm-up, for each listed model and thread count. */
static int lab_bench_profile(const char *models, const char *threads_list, int reps) {
    for (const bench_model *bm = bench_models; bm->name; bm++) {
        if (models && !cli_list_has(models, bm->name)) continue;
        for (const char *tp = threads_list; *tp;) {
            char *end = NULL;
            long threads = strtol(tp, &end, 10);
            if (end == tp || threads < 1 || threads > 64)
                return cli_fail("bench", EXIT_USAGE, "e.g. --threads 1,2", "--threads must list counts in 1..64, got '%s'",
                                threads_list);
            tp = *end == ',' ? end + 1 : end;
            lab_config cfg;
            lab_config_default(&cfg);
            cfg.layers = bm->layers;
            cfg.d_model = bm->d_model;
            cfg.heads = bm->heads;
            cfg.d_ff = 4 * bm->d_model;
            cfg.context = bm->context;
            posenc_error err = {0};
            lab_model *m = NULL;
            if (lab_model_create(&cfg, (int32_t)threads, &m, &err) != POSENC_OK) return cli_fail_status("bench", &err);
            size_t bt = (size_t)bm->batch * (size_t)bm->context;
            int32_t *tok = malloc(bt * sizeof(int32_t)), *tgt = malloc(bt * sizeof(int32_t));
            int rc = tok && tgt ? 0 : -1;
            for (size_t i = 0; i < bt && !rc; i++) {
                tok[i] = (int32_t)((i * 31 + 7) % 256);
                tgt[i] = (int32_t)((i * 17 + 3) % 256);
            }
            lab_train_options opt;
            lab_train_options_default(&opt);
            double c0 = 0, w0 = 0;
            for (int r = -1; r < reps && !rc; r++) {
                if (r == 0) { /* after the warm-up */
                    lab_model_profile(m, 1);
                    c0 = cpu_s();
                    w0 = now_s();
                }
                double loss = 0;
                lab_zero_grad(m);
                if (lab_forward(m, tok, tgt, NULL, bm->batch, bm->context, NULL, 1, NULL, &loss, &err) ||
                    lab_backward(m, &err) || lab_adamw_step(m, &opt, 1e-4, NULL, &err))
                    rc = -1;
            }
            double step_cpu = (cpu_s() - c0) / reps, step_wall = (now_s() - w0) / reps;
            free(tok);
            free(tgt);
            if (rc) {
                lab_model_free(m);
                return cli_fail_status("bench", &err);
            }
            printf("\n%s model (%d layers, C %d, %d heads, B x T %d x %d), %ld thread(s), sgemm from %s: step %.2f cpu ms, "
                   "%.2f wall ms (mean of %d)\n\n| phase | calls/step | cpu ms/step | %% of step cpu | wall ms/step |\n|---|---|---|---|---|\n",
                   bm->name, bm->layers, bm->d_model, bm->heads, bm->batch, bm->context, threads, lab_blas_library(),
                   step_cpu * 1e3, step_wall * 1e3, reps);
            double sum_cpu = 0, sum_wall = 0;
            const char *name;
            double pc, pw;
            int64_t calls;
            for (int ph = 0; lab_profile_phase(m, ph, &name, &pc, &pw, &calls); ph++) {
                if (!calls) continue;
                sum_cpu += pc;
                sum_wall += pw;
                printf("| %s | %.0f | %.3f | %.1f%% | %.3f |\n", name, (double)calls / reps, pc / reps * 1e3,
                       100.0 * pc / reps / step_cpu, pw / reps * 1e3);
            }
            printf("| (outside the phases: zero_grad, checks, batch copy) | - | %.3f | %.1f%% | %.3f |\n",
                   (step_cpu - sum_cpu / reps) * 1e3, 100.0 * (1.0 - sum_cpu / reps / step_cpu),
                   (step_wall - sum_wall / reps) * 1e3);
            fflush(stdout);
            lab_model_free(m);
        }
    }
    return EXIT_OK;
}

int cmd_lab_bench(const char *threads_list, const char *models, int reps, bool torch, const char *python,
                  const char *script, bool growth) {
    for (const char *p = models; p; ) { /* every listed name must be a model */
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        bool known = false;
        for (const bench_model *bm = bench_models; bm->name; bm++)
            known |= strlen(bm->name) == n && strncmp(p, bm->name, n) == 0;
        if (!known)
            return cli_fail("bench", EXIT_USAGE, "e.g. --models small,default", "--models must list small, default or large, got '%s'",
                            models);
        p = comma ? comma + 1 : NULL;
    }
    int threads[8], nthreads = 0;
    for (const char *p = threads_list; *p && nthreads < 8;) {
        char *end = NULL;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > 64)
            return cli_fail("bench", EXIT_USAGE, "e.g. --threads 1,2", "--threads must list counts in 1..64, got '%s'", threads_list);
        threads[nthreads++] = (int)v;
        p = *end == ',' ? end + 1 : end;
    }
    double sgemm = lab_sgemm_gflops(512, 7);
    printf("posenc lab bench %s: training step (forward + backward + AdamW) of the lab model, median of %d after 1 warm-up\n"
           "sgemm 512^3 on 1 thread (%s), measured now: %.1f GFLOP/s\n\n",
           posenc_version(), reps, lab_blas_library() ? lab_blas_library() : "no BLAS", sgemm);
    if (growth) return lab_bench_growth(threads, nthreads, reps);
    printf("| model | params | B x T | threads | C ms/step (cpu ms) | C tokens/s | C GFLOP/s | sgemm GFLOP/s beside it | "
           "%% of sgemm x threads | torch eager ms (cpu ms) | torch compiled ms (cpu ms) | torch best: ms (mode, threads) | "
           "C / torch best | peak RSS MiB |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    char torch_why[600] = ""; /* the first torch failure, said after the table */
    char compile_s[600] = "";  /* compile times, said after the table */
    for (const bench_model *bm = bench_models; bm->name; bm++) {
        if (!cli_list_has(models, bm->name)) continue;
        torch_result tr[32];
        int ntr = 0;
        if (torch) {
            char why[600] = "";
            ntr = torch_steps(python, script, bm, threads_list, reps, tr, 32, why, sizeof why);
            if (!ntr && !torch_why[0]) snprintf(torch_why, sizeof torch_why, "%s", why);
            for (int i = 0; i < ntr; i++)
                if (strcmp(tr[i].mode, "compile") == 0) {
                    size_t len = strlen(compile_s);
                    snprintf(compile_s + len, sizeof compile_s - len, "%s%s %d thread(s) %.0f s", len ? ", " : "",
                             bm->name, tr[i].threads, tr[i].compile_s);
                }
        }
        for (int t = 0; t < nthreads; t++) {
            posenc_error err = {0};
            double sec = 0, cpu = 0;
            /* the sgemm peak beside this row (the better of just before and just after): on a shared
             * machine one figure taken at the start can be half or twice what the row got */
            double peak = lab_sgemm_gflops(512, 5);
            if (time_c_step(bm, threads[t], reps, &sec, &cpu, &err) != 0) return cli_fail_status("bench", &err);
            double after = lab_sgemm_gflops(512, 5);
            if (after > peak) peak = after;
            lab_config cfg;
            lab_config_default(&cfg);
            cfg.layers = bm->layers;
            cfg.d_model = bm->d_model;
            cfg.heads = bm->heads;
            cfg.d_ff = 4 * bm->d_model;
            cfg.context = bm->context;
            lab_model *m = NULL;
            size_t params = 0;
            if (lab_model_create(&cfg, 1, &m, &err) == POSENC_OK) params = lab_model_param_count(m);
            lab_model_free(m);
            double tokens = (double)bm->batch * bm->context, gflops = lab_step_flops(&cfg, bm->batch, bm->context) / sec * 1e-9;
            printf("| %s | %zu | %d x %d | %d | %.1f (%.1f) | %.0f | %.1f | %.1f | %.0f%% | ", bm->name, params, bm->batch,
                   bm->context, threads[t], sec * 1e3, cpu * 1e3, tokens / sec, gflops, peak,
                   100.0 * gflops / (peak * threads[t]));
            const torch_result *eager = torch_mode(tr, ntr, "eager", threads[t]),
                               *compiled = torch_mode(tr, ntr, "compile", threads[t]),
                               *best = torch_best(tr, ntr, threads[t]);
            if (eager) printf("%.1f (%.1f) | ", eager->ms, eager->cpu_ms);
            else printf("- | ");
            if (compiled) printf("%.1f (%.1f) | ", compiled->ms, compiled->cpu_ms);
            else printf("- | ");
            if (best) printf("%.1f (%s, %d) | **%.2f** | ", best->ms, best->mode, best->threads, sec * 1e3 / best->ms);
            else printf("- | - | ");
            printf("%.0f |\n", peak_rss_mib());
            fflush(stdout);
        }
    }
    printf("\nms/step: wall-clock median; (cpu ms): the process's CPU time per step, less sensitive to other load.\n"
           "GFLOP/s counts 2 x 3 x the multiply-adds of matmuls and attention (forward + 2x for backward; lab_step_flops); \"sgemm beside\n"
           "it\": the lab's sgemm 512^3 on 1 thread just before and just after the row's C steps, the better; peak RSS is the\n"
           "process's (C only; torch runs in its own process, bench/lab_torch_bench.py). Torch: the same model, data and AdamW,\n"
           "attention through F.scaled_dot_product_attention(is_causal=True), AdamW fused; eager and torch.compile (inductor) at\n"
           "torch.set_num_threads(n) for every n listed; \"torch best\" at n threads = the fastest of both modes at any listed\n"
           "count <= n; C / torch best < 1: posenc is faster (goal <= 0.5). glibc malloc keeps freed memory for torch.\n"
           "Rerun on a quiet machine: posenc bench --only lab\n");
    if (compile_s[0]) printf("\ntorch.compile's first step (not timed): %s\n", compile_s);
    if (torch_why[0]) printf("\ntorch did not run: %s\n", torch_why);
    return EXIT_OK;
}

static const cli_option bench_options[] = {
    {"threads", "LIST", "comma list of thread counts, default 1,2"},
    {"models", "LIST", "comma list of small, default, large (default all three)"},
    {"reps", "N", "timed steps per measurement (median), default 7"},
    {"no-torch", NULL, "skip the PyTorch comparison"},
    {"growth", NULL, "instead: the C step against context length (32..1024) and width (64..512)"},
    {"profile", NULL, "instead: where the C step's time goes, phase by phase (cpu and wall ms per step)"},
    {"python", "EXE", "interpreter with torch 2.13, default $POSENC_PYTHON, else python3"},
    {"script", "FILE", "torch script, default the source tree's bench/lab_torch_bench.py"},
    {NULL, NULL, NULL}};

#ifndef POSENC_LAB_TORCH_BENCH
#define POSENC_LAB_TORCH_BENCH "bench/lab_torch_bench.py"
#endif

static int lab_bench_cmd(int argc, char **argv) {
    cli_args a;
    int rc = cli_parse(&a, "lab bench", bench_options, argc, argv, 0);
    if (rc != EXIT_OK) return rc;
    if (a.help) {
        printf("usage: posenc lab bench [--threads 1,2] [--models LIST] [--reps N] [--no-torch] [--growth | --profile]\n\n");
        cli_print_options(bench_options);
        return EXIT_OK;
    }
    int32_t reps = 7;
    if (!cli_int32(&a, "reps", 1, 1000, &reps)) return EXIT_USAGE;
    if (cli_has(&a, "profile"))
        return lab_bench_profile(cli_has(&a, "models") ? cli_string(&a, "models", "") : NULL, cli_string(&a, "threads", "1,2"),
                                 reps);
    return cmd_lab_bench(cli_string(&a, "threads", "1,2"), cli_has(&a, "models") ? cli_string(&a, "models", "") : NULL,
                         reps, !cli_has(&a, "no-torch"), cli_string(&a, "python", cli_default_python()),
                         cli_string(&a, "script", POSENC_LAB_TORCH_BENCH), cli_has(&a, "growth"));
}

int cmd_lab(int argc, char **argv) {
    if (argc < 1 || strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0) {
        printf("usage: posenc lab train|eval|bench [options]   (posenc lab SUBCOMMAND --help)\n\n"
               "  train  train the byte-level decoder with a position scheme, write a checkpoint\n"
               "  eval   loss / bits per byte at any length, with any RoPE scaling\n"
               "  bench  time a training step against PyTorch on the CPU\n"
               "  run / plan / merge / plot / claims   the experiments (docs/lab.md, Experiments)\n");
        return argc < 1 ? EXIT_USAGE : EXIT_OK;
    }
    if (strcmp(argv[0], "train") == 0) return lab_train_cmd(argc - 1, argv + 1);
    if (strcmp(argv[0], "eval") == 0) return lab_eval_cmd(argc - 1, argv + 1);
    if (strcmp(argv[0], "bench") == 0) return lab_bench_cmd(argc - 1, argv + 1);
    int experiments_rc = cmd_lab_experiments(argc, argv); /* run plan merge plot claims (cmd_lab_run.c) */
    if (experiments_rc >= 0) return experiments_rc;
    return cli_fail("lab", EXIT_USAGE, "posenc lab --help", "unknown subcommand '%s' (train, eval, bench, run, plan, merge, plot, claims)", argv[0]);
}
