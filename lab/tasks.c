/* tasks.c: synthetic length-generalization tasks and the lookup (associative
 * recall) task (formats in experiments.h), and their exact-match accuracy. */
#include "experiments.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const task_names[] = {"copy", "reverse", "sort", "addition", "recall", "lookup"};

const char *lab_task_name(lab_task task) {
    return (unsigned)task < LAB_TASK_COUNT_ ? task_names[task] : NULL;
}

posenc_status lab_task_parse(const char *name, lab_task *out, posenc_error *err) {
    for (int i = 0; name && i < LAB_TASK_COUNT_; i++)
        if (strcmp(name, task_names[i]) == 0) {
            *out = (lab_task)i;
            return POSENC_OK;
        }
    return lab_exp_fail(err, POSENC_ERR_INVALID_ARGUMENT, "unknown task '%s' (copy reverse sort addition recall lookup)",
                        name ? name : "(null)");
}

int32_t lab_task_length(lab_task task, int32_t n) {
    switch (task) {
    case LAB_TASK_ADDITION: return 2 * n + 1 + 1 + (n + 1) + 1;
    case LAB_TASK_RECALL: return 2 * n + 1 + 2 + 1;
    case LAB_TASK_LOOKUP: return (LAB_LOOKUP_KEY + 1) * (n + (n < LAB_LOOKUP_QUERIES ? n : LAB_LOOKUP_QUERIES)) + 2;
    default: return 2 * n + 2;
    }
}

int32_t lab_task_fit(lab_task task, int32_t tokens) {
    int32_t n = 0;
    while (n < 4096 && lab_task_length(task, n + 1) - 1 <= tokens) n++;
    return task == LAB_TASK_LOOKUP && n > LAB_LOOKUP_MAX_N ? LAB_LOOKUP_MAX_N : n;
}

int lab_task_is_answer(lab_task task, int32_t t, int32_t start, int32_t len) {
    if (t < start || t >= len) return 0;
    if (task != LAB_TASK_LOOKUP) return 1;
    /* the query keys are random letters and END follows the m-th answer: neither is
       something a model learns by looking back, so neither is trained or scored */
    return t < len - 1 && (t - start) % (LAB_LOOKUP_KEY + 1) == 0;
}

static uint64_t mix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

int32_t lab_task_example(lab_task task, int32_t n, uint64_t seed, uint64_t index, int32_t *out, int32_t cap,
                         int32_t *answer_start) {
    int32_t len = lab_task_length(task, n);
    if (n < 1 || len > cap || (task == LAB_TASK_RECALL && n > 26) || (task == LAB_TASK_LOOKUP && n > LAB_LOOKUP_MAX_N) ||
        (unsigned)task >= LAB_TASK_COUNT_)
        return -1;
    uint64_t state = mix64(seed ^ mix64(index * 0x100000001b3ULL + (uint64_t)n) ^ ((uint64_t)task << 56));
#define NEXT() (state = mix64(state))
    int32_t k = 0;
    if (task == LAB_TASK_ADDITION) {
        int32_t *a = out, *b = out + n + 1;
        for (int32_t i = 0; i < n; i++) a[i] = '0' + (int32_t)(NEXT() % 10);
        out[n] = '+';
        for (int32_t i = 0; i < n; i++) b[i] = '0' + (int32_t)(NEXT() % 10);
        k = 2 * n + 1;
        out[k++] = LAB_TOK_SEP;
        *answer_start = k;
        int carry = 0;
        for (int32_t i = n - 1; i >= 0; i--) { /* least significant digit first */
            int s = (a[i] - '0') + (b[i] - '0') + carry;
            out[k++] = '0' + s % 10;
            carry = s / 10;
        }
        out[k++] = '0' + carry;
    } else if (task == LAB_TASK_LOOKUP) {
        /* n distinct keys of 26^K (a bitmap of the codes drawn: rejection keeps them
           uniform and distinct, so every query has exactly one answer), one digit each */
        enum { CODES = 26 * 26 * 26 };
        uint8_t used[CODES / 8 + 1];
        memset(used, 0, sizeof used);
        for (int32_t i = 0; i < n; i++) {
            uint32_t code;
            do code = (uint32_t)(NEXT() % CODES);
            while (used[code / 8] & (1u << (code % 8)));
            used[code / 8] |= (uint8_t)(1u << (code % 8));
            for (int j = LAB_LOOKUP_KEY - 1; j >= 0; j--, code /= 26) out[k + j] = 'a' + (int32_t)(code % 26);
            k += LAB_LOOKUP_KEY;
            out[k++] = '0' + (int32_t)(NEXT() % 10);
        }
        out[k++] = LAB_TOK_SEP;
        int32_t m = n < LAB_LOOKUP_QUERIES ? n : LAB_LOOKUP_QUERIES, asked[LAB_LOOKUP_QUERIES];
        for (int32_t q = 0; q < m; q++) {
            int fresh; /* distinct queries: a repeated one could be answered from the earlier answer */
            do {
                asked[q] = (int32_t)(NEXT() % (uint64_t)n);
                fresh = 1;
                for (int32_t r = 0; r < q; r++) fresh &= asked[r] != asked[q];
            } while (!fresh);
            const int32_t *pair = out + (size_t)asked[q] * (LAB_LOOKUP_KEY + 1);
            for (int j = 0; j < LAB_LOOKUP_KEY; j++) out[k++] = pair[j];
            if (q == 0) *answer_start = k;
            out[k++] = pair[LAB_LOOKUP_KEY];
        }
    } else if (task == LAB_TASK_RECALL) {
        int32_t keys[26];
        for (int i = 0; i < 26; i++) keys[i] = 'a' + i;
        for (int i = 25; i > 0; i--) { /* Fisher-Yates: distinct keys */
            int j = (int)(NEXT() % (uint64_t)(i + 1));
            int32_t t = keys[i];
            keys[i] = keys[j];
            keys[j] = t;
        }
        for (int32_t i = 0; i < n; i++) {
            out[k++] = keys[i];
            out[k++] = '0' + (int32_t)(NEXT() % 10);
        }
        int32_t q = (int32_t)(NEXT() % (uint64_t)n);
        out[k++] = LAB_TOK_SEP;
        out[k++] = out[2 * q];
        *answer_start = k;
        out[k++] = out[2 * q + 1];
    } else {
        for (int32_t i = 0; i < n; i++) out[i] = 'a' + (int32_t)(NEXT() % 26);
        out[n] = LAB_TOK_SEP;
        k = n + 1;
        *answer_start = k;
        for (int32_t i = 0; i < n; i++) out[k + i] = task == LAB_TASK_REVERSE ? out[n - 1 - i] : out[i];
        if (task == LAB_TASK_SORT) { /* counting sort of letters */
            int counts[26] = {0};
            for (int32_t i = 0; i < n; i++) counts[out[i] - 'a']++;
            int32_t w = k;
            for (int c = 0; c < 26; c++)
                for (int r = 0; r < counts[c]; r++) out[w++] = 'a' + c;
        }
        k += n;
    }
#undef NEXT
    out[k++] = LAB_TOK_END;
    return k == len ? len : -1;
}

/* One padded row: tokens, targets on the answer (and END) only. */
static int fill_row(lab_task task, int32_t n, uint64_t seed, uint64_t index, int32_t seq_len, int32_t *tokens,
                    int32_t *targets) {
    int32_t example[(LAB_LOOKUP_KEY + 1) * (LAB_LOOKUP_MAX_N + LAB_LOOKUP_QUERIES) + 8], start = 0;
    int32_t len = lab_task_example(task, n, seed, index, example, (int32_t)(sizeof example / sizeof *example), &start);
    if (len < 0 || len > seq_len + 1) return -1;
    for (int32_t t = 0; t < seq_len; t++) {
        tokens[t] = t < len ? example[t] : LAB_TOK_PAD;
        targets[t] = lab_task_is_answer(task, t + 1, start, len) ? example[t + 1] : -1;
    }
    return 0;
}

posenc_status lab_task_batch(void *ctx, int64_t step, int32_t batch, int32_t seq_len, uint64_t seed,
                             int32_t *tokens, int32_t *targets, posenc_error *err) {
    const lab_task_source *src = ctx;
    for (int32_t b = 0; b < batch; b++) {
        uint64_t index = (uint64_t)step * 4096u + (uint64_t)b;
        int32_t n = 1 + (int32_t)(mix64(seed ^ mix64(index + 0x5151)) % (uint64_t)src->max_n);
        if (fill_row(src->task, n, seed, index, seq_len, tokens + (size_t)b * seq_len, targets + (size_t)b * seq_len))
            return lab_exp_fail(err, POSENC_ERR_INVALID_ARGUMENT, "task %s with n %d needs %d tokens, the context is %d",
                                lab_task_name(src->task), n, lab_task_length(src->task, n), seq_len);
    }
    return POSENC_OK;
}

posenc_status lab_task_accuracy(lab_model *model, lab_task task, int32_t n, int32_t examples, uint64_t seed,
                                const lab_eval_options *eval, double *accuracy, posenc_error *err) {
    return lab_task_score(model, task, n, examples, seed, eval, accuracy, NULL, err);
}

posenc_status lab_task_score(lab_model *model, lab_task task, int32_t n, int32_t examples, uint64_t seed,
                             const lab_eval_options *eval, double *accuracy, double *answer_bits, posenc_error *err) {
    int32_t seq_len = lab_task_length(task, n) - 1, batch = 8;
    int32_t vocab = lab_model_config(model)->vocab;
    if (vocab < LAB_TASK_VOCAB)
        return lab_exp_fail(err, POSENC_ERR_INVALID_ARGUMENT, "tasks need vocab >= %d, the model has %d", LAB_TASK_VOCAB, vocab);
    int32_t *tokens = malloc(sizeof(int32_t) * 2 * (size_t)batch * (size_t)seq_len);
    float *logits = malloc(sizeof(float) * (size_t)batch * (size_t)seq_len * (size_t)vocab);
    if (!tokens || !logits) {
        free(tokens);
        free(logits);
        return lab_exp_fail(err, POSENC_ERR_OUT_OF_MEMORY, "out of memory for %d task examples of length %d", batch, seq_len);
    }
    int32_t *targets = tokens + (size_t)batch * seq_len;
    int64_t correct = 0, asked = 0, answers = 0;
    double nats = 0;
    posenc_status st = POSENC_OK;
    lab_eval_options ev = *eval;
    ev.seq_len = seq_len;
    for (int32_t done = 0; done < examples && st == POSENC_OK; done += batch) {
        int32_t rows = examples - done < batch ? examples - done : batch;
        for (int32_t b = 0; b < rows && st == POSENC_OK; b++)
            if (fill_row(task, n, seed ^ 0xe7a1ULL, (uint64_t)(done + b), seq_len, tokens + (size_t)b * seq_len,
                         targets + (size_t)b * seq_len))
                st = lab_exp_fail(err, POSENC_ERR_INVALID_ARGUMENT, "task %s has no examples of size n %d",
                                  lab_task_name(task) ? lab_task_name(task) : "(unknown)", n);
        if (st != POSENC_OK) break;
        double loss = 0;
        st = lab_forward(model, tokens, targets, NULL, rows, seq_len, &ev, 0, logits, &loss, err);
        for (int32_t b = 0; b < rows && st == POSENC_OK; b++) {
            int ok = 1;
            for (int32_t t = 0; t < seq_len; t++) {
                int32_t want = targets[(size_t)b * seq_len + t];
                if (want < 0) continue;
                const float *row = logits + ((size_t)b * seq_len + t) * (size_t)vocab;
                int32_t best = 0;
                for (int32_t v = 1; v < vocab; v++)
                    if (row[v] > row[best]) best = v;
                double sum = 0; /* log-softmax at the answer, from the row's maximum */
                for (int32_t v = 0; v < vocab; v++) sum += exp((double)row[v] - (double)row[best]);
                nats += log(sum) - ((double)row[want] - (double)row[best]);
                answers++;
                if (task == LAB_TASK_LOOKUP) correct += best == want, asked++; /* per query */
                else ok &= best == want;
            }
            if (task != LAB_TASK_LOOKUP) correct += ok, asked++;
        }
    }
    free(tokens);
    free(logits);
    if (st == POSENC_OK) {
        *accuracy = asked ? (double)correct / (double)asked : 0;
        if (answer_bits) *answer_bits = answers ? nats / (double)answers / log(2.0) : 0;
    }
    return st;
}
