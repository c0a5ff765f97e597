/* experiments.h: the lab's experiments (issue 16, docs/lab.md "Experiments"):
 * text corpus, synthetic tasks, the experiment plans, one run as one JSON
 * line, and the claims table. Built on lab.h (and cJSON for the result lines). */
#ifndef POSENC_LAB_EXPERIMENTS_H
#define POSENC_LAB_EXPERIMENTS_H

#include "lab.h"

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

/* ---- text corpus (corpus.c) ---- */
typedef struct lab_corpus {
    uint8_t *bytes;           /* all text, files joined by "\n" */
    size_t size;
    uint8_t *train, *valid;   /* the split (own allocations) */
    size_t train_size, valid_size;
    int files;
    char hash[17];            /* identity of the bytes: FNV-1a 64 as 16 hex digits (lab_corpus_split sets it);
                                 each text run's result line carries it with the size, so that
                                 lab run --resume refuses to mix corpora */
} lab_corpus;
/* Directory of the default corpus (Debian's `fortunes`, installed by scripts/deps). */
#define LAB_CORPUS_DEFAULT_DIR "/usr/share/games/fortunes"
/* Read paths (count > 0) or, with count == 0, every plain-text file of the
 * default corpus directory (sorted names, *.dat and *.u8 skipped). Fails when
 * fewer than min_bytes were read. Then splits with lab_corpus_split. */
posenc_status lab_corpus_load(const char *const *paths, int count, size_t min_bytes, lab_corpus *out,
                              posenc_error *err);
/* Deterministic split: blocks of LAB_SPLIT_BLOCK bytes, every 10th block (index
 * % 10 == 9) goes to validation, the rest to training; depends only on the bytes. */
#define LAB_SPLIT_BLOCK 4096
posenc_status lab_corpus_split(lab_corpus *corpus, posenc_error *err);
void lab_corpus_free(lab_corpus *corpus);

/* ---- synthetic tasks (tasks.c; Kazemnejad et al. 2023, Ruoss et al. 2023) ----
 * Token ids: input symbols are bytes ('a'..'z' or '0'..'9'); LAB_TOK_SEP ends
 * the input, LAB_TOK_END the answer, LAB_TOK_PAD fills the rest. Formats:
 *   copy     x1..xn SEP x1..xn END            (letters)
 *   reverse  x1..xn SEP xn..x1 END
 *   sort     x1..xn SEP sorted(x) END
 *   addition a1..an + b1..bn SEP s END        (n digits each, most significant first;
 *            s = a+b as n+1 digits, least significant first, as in the length-generalization
 *            literature: the carry then flows left to right)
 *   recall   k1 v1 .. kn vn SEP kq vq END       (distinct letter keys, digit values, n <= 26)
 */
typedef enum lab_task { LAB_TASK_COPY = 0, LAB_TASK_REVERSE, LAB_TASK_SORT, LAB_TASK_ADDITION, LAB_TASK_RECALL, LAB_TASK_COUNT_ } lab_task;
#define LAB_TOK_SEP 256
#define LAB_TOK_END 257
#define LAB_TOK_PAD 258
#define LAB_TASK_VOCAB 259
const char *lab_task_name(lab_task task);
posenc_status lab_task_parse(const char *name, lab_task *out, posenc_error *err);
/* Tokens of one example with n input symbols (the sequence length for n). */
int32_t lab_task_length(lab_task task, int32_t n);
/* Write example `index` of size n (a pure function of seed, n, index) into out[cap];
 * *answer_start = index of the first answer token. Returns the length, or -1 when cap is short. */
int32_t lab_task_example(lab_task task, int32_t n, uint64_t seed, uint64_t index, int32_t *out, int32_t cap,
                         int32_t *answer_start);
/* lab_batch_fn context: n uniform in [1, max_n], padded to seq_len; loss only on the answer. */
typedef struct lab_task_source {
    lab_task task;
    int32_t max_n;
} lab_task_source;
posenc_status lab_task_batch(void *ctx, int64_t step, int32_t batch, int32_t seq_len, uint64_t seed,
                             int32_t *tokens, int32_t *targets, posenc_error *err);
/* Exact-match accuracy of greedy decoding on `examples` examples of size n. One
 * teacher-forced forward pass: greedy decoding reproduces the answer exactly iff
 * the argmax at every answer position equals the answer token (each prefix it
 * would feed is then the true one), so this equals autoregressive greedy decoding. */
posenc_status lab_task_accuracy(lab_model *model, lab_task task, int32_t n, int32_t examples, uint64_t seed,
                                const lab_eval_options *eval, double *accuracy, posenc_error *err);

/* ---- experiments (experiments.c) ---- */
#define LAB_MAX_LENGTHS 8
#define LAB_MAX_VARIANTS 8
typedef struct lab_eval_variant {
    char label[24];               /* "plain", "linear", "yarn", ... */
    posenc_rope_scaling scaling;  /* factor = eval length / training length */
} lab_eval_variant;
#define LAB_FINETUNE_MULTIPLE 2
typedef struct lab_run_spec {
    char experiment[32];
    char label[48];               /* e.g. "rope", "concat-d128", "sigma=0.2" */
    char id[112];                 /* experiment:label:sSEED, unique in a plan */
    lab_config config;
    lab_train_options train;
    int32_t lengths[LAB_MAX_LENGTHS]; /* evaluation lengths (text) or task sizes n */
    int length_count;
    lab_eval_variant variants[LAB_MAX_VARIANTS];
    int variant_count;
    int64_t finetune_steps;       /* > 0 (text): per variant, fine-tune at LAB_FINETUNE_MULTIPLE x
                                     context WITH the variant's RoPE scaling (factor = the multiple,
                                     original context = L) and evaluate that variant again */
    int64_t eval_tokens;          /* scored tokens per (length, method) */
    int sliding;                  /* also sliding-window evaluation */
    int task;                     /* -1: text; else lab_task */
    int32_t task_max_n;           /* trained sizes 1..task_max_n */
} lab_run_spec;
extern const char *const lab_experiment_names[]; /* NULL-terminated */
/* The runs of experiment `name` (*out from malloc, free() it). */
posenc_status lab_experiment_plan(const char *name, int quick, int seeds, lab_run_spec **out, size_t *count,
                                  posenc_error *err);
typedef struct lab_run_progress {
    void (*on_step)(void *ctx, int64_t step, int64_t steps, double loss);
    void *ctx;
    volatile sig_atomic_t *stop; /* set (by a signal handler) to stop; the run then fails with POSENC_ERR_LIMIT */
} lab_run_progress;
/* Optimizer steps of one run: training plus every variant's fine-tune (for progress). */
int64_t lab_run_total_steps(const lab_run_spec *spec);
/* Train and evaluate one run; *json_out (malloc) = one JSON object, no newline.
 * A run with a learned position table (learned, hybrid) also carries it as trained:
 * "position_table": {"tensor": "wpe", "shape": [rows, cols], "values": [...]}
 * (6 significant digits; left out above LAB_RESULT_TABLE_MAX values). */
#define LAB_RESULT_TABLE_MAX ((size_t)1 << 18)
posenc_status lab_run_execute(const lab_run_spec *spec, const lab_corpus *corpus, int32_t threads,
                              const lab_run_progress *progress, char **json_out, posenc_error *err);

/* Sliding-window bits: windows of seq_len advancing by stride, scoring only the
 * last `stride` targets of each window (all of the first one); at most max_tokens scored. */
posenc_status lab_eval_sliding(lab_model *model, const lab_eval_options *eval, const uint8_t *bytes, size_t size,
                               int32_t stride, int64_t max_tokens, double *loss_out, posenc_error *err);

/* ---- claims (claims.c): runs = cJSON array of run objects ---- */
struct cJSON;
/* Markdown table of the articles' claims with evidence and verdicts (*out from malloc). */
posenc_status lab_claims_markdown(const struct cJSON *runs, char **out, posenc_error *err);

/* Shared by the experiment files: fill err (status + printf message), return status. */
posenc_status lab_exp_fail(posenc_error *err, posenc_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif
