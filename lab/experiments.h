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
    uint8_t *tune_train, *dev; /* the tuning split (issue 42 item 4, own allocations): dev = the blocks
                                  LAB_DEV_BLOCK of every 10 (inside train), tune_train = train without
                                  them; no byte of either is in valid, where the test targets lie */
    size_t tune_train_size, dev_size;
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
/* The long-document corpus (`--corpus pystdlib`): every *.py file under root (default
 * LAB_PYSTDLIB_DIR; depth first, names in bytewise order; __pycache__, site-packages,
 * dist-packages and the top-level test/ and idlelib/ skipped, symbolic links not
 * followed) and then every regular file of licenses (default LAB_LICENSES_DIR). A
 * missing directory, or no .py file, is refused with a message naming it. Source
 * files whose names recur over thousands of bytes: context pays. */
#define LAB_PYSTDLIB_DIR "/usr/lib/python3.11"
#define LAB_LICENSES_DIR "/usr/share/common-licenses"
posenc_status lab_corpus_load_pystdlib(const char *root, const char *licenses, size_t min_bytes, lab_corpus *out,
                                       posenc_error *err);
/* Deterministic split: blocks of LAB_SPLIT_BLOCK bytes, every 10th block (index
 * % 10 == 9) goes to validation, the rest to training; depends only on the bytes.
 * The tuning split of the same blocks: index % 10 == LAB_DEV_BLOCK is dev, the others
 * but 9 tune_train (a corpus with no dev block gets an empty dev: tuning refuses it). */
#define LAB_SPLIT_BLOCK 4096
#define LAB_DEV_BLOCK 4
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
 *   lookup   K1 v1 .. Kn vn SEP Q1 a1 .. Qm am END   (issue 42 item 5: associative recall inside L;
 *            Ki = LAB_LOOKUP_KEY letters, n distinct keys of 26^3 = 17,576, vi one digit; the m =
 *            min(n, LAB_LOOKUP_QUERIES) queries Qj are distinct keys of the pairs, uniform among
 *            them, aj = the value of Qj. Only the aj are answer tokens (the query keys are
 *            random, END is implied by the count), so a lookup example scores m answers, and
 *            the pair a query asks for lies anywhere from 5 to ~4n + 4m tokens back: the
 *            distance grows with the length. n <= LAB_LOOKUP_MAX_N.)
 */
typedef enum lab_task { LAB_TASK_COPY = 0, LAB_TASK_REVERSE, LAB_TASK_SORT, LAB_TASK_ADDITION, LAB_TASK_RECALL,
                        LAB_TASK_LOOKUP, LAB_TASK_COUNT_ } lab_task;
/* The tasks the length-generalization plan trains (lookup has its own plan, "lookup") */
#define LAB_TASK_LENGTH_GENERALIZATION 5
#define LAB_LOOKUP_KEY 3
#define LAB_LOOKUP_QUERIES 4
#define LAB_LOOKUP_MAX_N 1024
/* The lookup plan's budget (docs/lab-experiments.md "Lookup": what this machine could run;
 * no model reached 90% at L within it, so the plan is sized to be run longer, not a verdict) */
#define LAB_LOOKUP_STEPS 3000
#define LAB_LOOKUP_QUICK_STEPS 1500
#define LAB_LOOKUP_BATCH 32
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
/* Is token t of an example (length len, answer_start start) an answer token, one that
 * training predicts and scoring reads? Every token from start on, except lookup's query
 * keys and END (lookup: start + (LAB_LOOKUP_KEY + 1) j). */
int lab_task_is_answer(lab_task task, int32_t t, int32_t start, int32_t len);
/* The largest n whose example fits `tokens` inputs (lab_task_length(n) - 1 <= tokens; 0: none). */
int32_t lab_task_fit(lab_task task, int32_t tokens);
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
/* The same, and (answer_bits, may be NULL) the mean bits per answer token (-log2 of its
 * probability). Lookup's accuracy is per query (each query is one lookup: its value digit
 * is the argmax), over examples x min(n, LAB_LOOKUP_QUERIES) queries; the other tasks'
 * per example (every answer token and END). */
posenc_status lab_task_score(lab_model *model, lab_task task, int32_t n, int32_t examples, uint64_t seed,
                             const lab_eval_options *eval, double *accuracy, double *answer_bits, posenc_error *err);

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
    int sliding;                  /* also the sliding view of the shared targets */
    int eval_docs;                /* text: target spans of the shared protocol (span = lead = 16 x context) */
    int32_t passkey;              /* text: passkey examples per length (0 = none; lengths >= LAB_PASSKEY_MIN_LENGTH) */
    int diagnostics;              /* text: attention entropy and distance per layer and head at L and 4L */
    int32_t context_stride;       /* text, > 0: context use (lab_eval_context) on every context_stride-th
                                     target byte, c = 1 .. 16L; the run's "context_use" */
    int tune;                     /* text, 1: a tuning run (issue 42 item 4): trains on the corpus's
                                     tune_train and scores only its dev split ("dev_bpb"); no test
                                     target is read */
    int task;                     /* -1: text; else lab_task */
    int32_t task_max_n;           /* trained sizes 1..task_max_n */
    struct {                      /* set by lab_tuning_apply (candidates 0: not tuned) */
        char source[96];          /* the tuning file's name */
        int candidates, seeds;    /* (lr, base) pairs compared; seeds of the chosen one */
        double dev_bpb;           /* its mean dev bpb */
    } tuned;
} lab_run_spec;
extern const char *const lab_experiment_names[]; /* NULL-terminated */
/* The runs of experiment `name` (*out from malloc, free() it). */
posenc_status lab_experiment_plan(const char *name, int quick, int seeds, lab_run_spec **out, size_t *count,
                                  posenc_error *err);
/* Fair tuning (issue 42 item 4): the tune plans sweep each scheme's learning rate at
 * these multiples of the shared one (RoPE also at LAB_TUNE_BASES), scoring the windows
 * view at L on LAB_TUNE_DEV_SPANS spans of 4L bytes of the dev split. */
#define LAB_TUNE_LR_COUNT 4
extern const double lab_tune_lr_scale[LAB_TUNE_LR_COUNT]; /* 0.5, 1, 2, 4 */
#define LAB_TUNE_BASE_COUNT 3
extern const double lab_tune_rope_base[LAB_TUNE_BASE_COUNT]; /* 500, 1e4, 5e5 */
#define LAB_TUNE_DEV_SPANS 16
/* The choice: for every text run of the plan (not a tuning run), the tuning rows
 * (experiment "tune*", a dev_bpb) of its scheme whose config is the run's but for seed,
 * learning rate and RoPE base; grouped by (lr, rope_base), the lowest mean dev_bpb over
 * seeds wins, and the run takes its lr (and base). Reads nothing but those rows'
 * experiment, scheme, config, lr, rope_base and dev_bpb. A run with no such rows is
 * refused by name (a half-tuned plan would compare tuned against untuned schemes).
 * Each chosen run's `tuned` gets what was chosen from (for its result line). */
struct cJSON;
posenc_status lab_tuning_apply(const struct cJSON *tuning, const char *source, lab_run_spec *runs, size_t count,
                               posenc_error *err);
/* The protocol's span (= lead) for a training length: 16 x context, the longest length any experiment evaluates. */
#define LAB_TARGET_SPAN_MULTIPLE 16
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

/* The earlier protocol's sliding evaluation (the experiments now use lab_eval_view's
 * shared targets): windows of seq_len advancing by stride, scoring only the
 * last `stride` targets of each window (all of the first one); at most max_tokens scored. */
posenc_status lab_eval_sliding(lab_model *model, const lab_eval_options *eval, const uint8_t *bytes, size_t size,
                               int32_t stride, int64_t max_tokens, double *loss_out, posenc_error *err);

/* ---- the evaluation protocol (protocol.c; docs/lab-experiments.md, "Evaluation protocol") ----
 * One set of target bytes for every method, length and view: `docs` spans of `span`
 * bytes (span = the longest length evaluated, 16L), evenly spread over the whole
 * validation split, each with `lead` bytes of text before it (lead >= every length),
 * so every window of every length lies inside the validation text. Depends only
 * on the validation size and the three numbers. */
#define LAB_PROTOCOL_NAME "shared-targets-v1"
#define LAB_MAX_DOCS 64
typedef struct lab_target_set {
    int docs;
    int32_t span, lead;
    size_t offsets[LAB_MAX_DOCS]; /* index of each span's first target byte in the validation text */
} lab_target_set;
posenc_status lab_target_set_make(size_t valid_size, int docs, int32_t span, int32_t lead, lab_target_set *out,
                                  posenc_error *err);
/* The two views of the same targets at length n:
 *   windows  non-overlapping windows of n tiling each span: a target's context is 1..n bytes
 *   sliding  windows of n advancing by n/4, scoring the last n/4: every target has >= n - n/4 + 1 bytes */
typedef enum lab_view { LAB_VIEW_WINDOWS = 0, LAB_VIEW_SLIDING = 1 } lab_view;
int32_t lab_view_min_context(lab_view view, int32_t n);
#define LAB_POSITION_BUCKETS 16
typedef struct lab_view_result {
    double doc_loss[LAB_MAX_DOCS]; /* mean nats per target byte of each span ("document") */
    double loss, se;               /* mean over the spans and its standard error over them */
    double position_loss[LAB_POSITION_BUCKETS]; /* mean nats by context: bucket (context - 1) * 16 / n (NaN: none) */
} lab_view_result;
/* Score every target byte of the set once at length n in the view. model NULL: only
 * lists the scored bytes (tests). scored_index / scored_context (may be NULL; room for
 * docs x span): each scored target's index into bytes and its context in bytes. */
posenc_status lab_eval_view(lab_model *model, const lab_eval_options *eval, const uint8_t *bytes, size_t size,
                            const lab_target_set *set, int32_t n, lab_view view, lab_view_result *out,
                            int64_t *scored_index, int32_t *scored_context, posenc_error *err);
/* Per-span loss (nats) of the training split's byte unigram (add-one) on the targets:
 * the level a model that learned no context reaches. */
void lab_unigram_doc_loss(const uint8_t *train, size_t train_size, const uint8_t *valid, const lab_target_set *set,
                          double *doc_loss);

/* Context use (issue 42, docs/lab-experiments.md "Context use"): the same target bytes
 * (every `stride`-th byte of each span of the set) scored with EXACTLY c bytes of
 * context before each, for each c of an ascending list: a curve bpb(c) on fixed
 * targets, so that "the model uses c bytes" is read off one curve, not off a view
 * that also changes which bytes have how much context. */
#define LAB_CONTEXT_MAX 24
/* The margin that defines effective context: the smallest c whose bpb is within it of the best */
#define LAB_CONTEXT_MARGIN_BPB 0.01
typedef struct lab_context_result {
    int count, docs;
    int32_t stride;
    int64_t targets;                             /* scored bytes per context (docs x ceil(span / stride)) */
    int32_t c[LAB_CONTEXT_MAX];
    double loss[LAB_CONTEXT_MAX];                /* mean nats per target (mean over spans) */
    double doc_loss[LAB_CONTEXT_MAX][LAB_MAX_DOCS];
} lab_context_result;
/* The contexts of a run: 1, 2, 4, ... up to longest, with L and longest added when they
 * are not powers of two (ascending; returns the count, <= LAB_CONTEXT_MAX). */
int lab_context_grid(int32_t L, int32_t longest, int32_t *out);
/* The smallest c <= upto whose bpb is within margin of the best bpb over c <= upto (-1: none). */
int32_t lab_effective_context(const int32_t *c, const double *bpb, int count, int32_t upto, double margin);
/* Score the set's targets (model NULL: only checks the arguments) at each context;
 * every c must be <= set->lead. The eval options' seq_len and batch are set per context. */
posenc_status lab_eval_context(lab_model *model, const lab_eval_options *eval, const uint8_t *bytes, size_t size,
                               const lab_target_set *set, int32_t stride, const int32_t *contexts, int count,
                               lab_context_result *out, posenc_error *err);

/* Passkey retrieval (Mohtashami & Jaggi 2023, in bytes): n + 1 bytes of filler text
 * (a pure function of seed and index; any "passkey" in it is defaced) with the needle
 * "\npasskey = 'DDDDD'\n" at a uniform depth and the query "\npasskey = '" at the end,
 * followed by the 5 digits. Returns n + 1 (or -1 when n < LAB_PASSKEY_MIN_LENGTH or the
 * filler is shorter than n + 2); *answer_start = index of the first digit (n + 1 - 5). */
#define LAB_PASSKEY_DIGITS 5
#define LAB_PASSKEY_MIN_LENGTH 40
int32_t lab_passkey_example(const uint8_t *filler, size_t filler_size, int32_t n, uint64_t seed, uint64_t index,
                            uint8_t *out, int32_t *needle_at, int32_t *answer_start);
/* Teacher-forced: accuracy = share of examples whose 5 digits are all the argmax (= greedy
 * decoding); digit_bits = mean bits per digit (chance: log2 10 = 3.32). */
posenc_status lab_passkey_eval(lab_model *model, const lab_eval_options *eval, const uint8_t *filler,
                               size_t filler_size, int32_t n, int32_t examples, uint64_t seed, double *accuracy,
                               double *digit_bits, posenc_error *err);

/* Attention diagnostics: one head's probabilities p [T][T] (row = query i): the mean over
 * rows of the entropy -sum p log p (nats) and of the mean distance sum_j p_ij |i - j|. */
void lab_attention_head_stats(const float *p, int32_t T, int causal, double *entropy, double *distance);
/* Both per (layer, head) ([layers][heads] arrays), averaged over the windows of length n
 * that end at the first LAB_DIAGNOSTIC_WINDOWS target spans' ends. */
#define LAB_DIAGNOSTIC_WINDOWS 4
posenc_status lab_attention_diagnostics(lab_model *model, const lab_eval_options *eval, const uint8_t *bytes,
                                        size_t size, const lab_target_set *set, int32_t n, double *entropy,
                                        double *distance, posenc_error *err);

/* ---- claims (claims.c): runs = cJSON array of run objects ---- */
struct cJSON;
/* Markdown table of the articles' claims with evidence and verdicts (*out from malloc). */
#define LAB_CLAIM_MIN_SEEDS 10
/* The family-wise error rate the Holm adjustment holds across all tested claims */
#define LAB_CLAIM_ALPHA 0.05
/* A run whose bits per byte at L are within this fraction of the unigram level of its
 * targets (above 0.95 x unigram_bpb) learned next to nothing from context: the trained
 * quick-size schemes sit 20-35% below it, an embedding that drowned its tokens ~3% */
#define LAB_UNIGRAM_FRACTION 0.05
/* t quantile 0.975 with df degrees of freedom (INFINITY for df < 1). */
double lab_t975(int df);
/* Mean of n paired ratios and the 95% interval: mean -+ t975(n-1) sqrt(var/n + mean(se_doc^2))
 * (se_doc may be NULL: 0); n < 2 gives -inf..inf. */
void lab_claim_interval(const double *ratio, const double *se_doc, int n, double *mean, double *lo, double *hi);
/* The rule: "supported" when hi < threshold, "contradicted" when lo > threshold, else
 * "inconclusive (...)"; also inconclusive with no seeds, fewer than LAB_CLAIM_MIN_SEEDS,
 * or a run at the unigram level. */
const char *lab_claim_verdict(int seeds, double lo, double hi, double threshold, int unigram_level);
/* How a claims table came out: rows in all, rows these runs measured, and of
 * those how many were supported or contradicted (the rest inconclusive). */
typedef struct {
    int rows, measured, supported, contradicted;
    int tested; /* the family the Holm adjustment counts */
} lab_claims_count;
/* The claims table (markdown, measured rows first) of these runs into *out (free
 * it); count (may be NULL) gets its tally. */
posenc_status lab_claims_markdown(const struct cJSON *runs, char **out, lab_claims_count *count, posenc_error *err);
/* The same, or with list != 0 the claim list itself (runs unused): number, source, claim,
 * the two quantities, the threshold and the gates of each (docs/lab-experiments.md). */
posenc_status lab_claims_table(const struct cJSON *runs, int list, char **out, lab_claims_count *count, posenc_error *err);
/* Two-sided p of Student's t with df degrees of freedom: P(|T| > |t|) (NaN for df < 1). */
double lab_t_two_sided_p(double t, int df);
/* The p of a claim's paired ratios against its threshold: two-sided t test with n - 1
 * degrees of freedom and lab_claim_interval's standard error (NaN for n < 2; a spread of
 * 0 gives 0, or 1 when the mean is the threshold). */
double lab_claim_p(const double *ratio, const double *se_doc, int n, double threshold);
/* Holm's step-down adjustment of the finite p[i] (NaN entries are not in the family and
 * stay NaN in adjusted): the k-th smallest of m becomes max_{j<=k} min(1, (m - j + 1) p_(j)). */
void lab_holm(const double *p, int n, double *adjusted);

/* Shared by the experiment files: fill err (status + printf message), return status. */
posenc_status lab_exp_fail(posenc_error *err, posenc_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif
