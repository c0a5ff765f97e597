/* test_lab_tasks.c: the synthetic task generators (answers checked by
 * recomputing them from the input: reverse of reverse, sums, sortedness,
 * recall) and the corpus split's determinism. Prints evidence and a count. */
#include "experiments.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab_check.h"

static void test_task(lab_task task) {
    int32_t buf[256], again[256];
    int bad = 0, examples = 0;
    for (int32_t n = 1; n <= (task == LAB_TASK_RECALL ? 26 : 40); n++)
        for (uint64_t index = 0; index < 50; index++, examples++) {
            int32_t start = -1, start2 = -1;
            int32_t len = lab_task_example(task, n, 7, index, buf, 256, &start);
            int32_t len2 = lab_task_example(task, n, 7, index, again, 256, &start2);
            if (len != lab_task_length(task, n) || len != len2 || start != start2 || memcmp(buf, again, sizeof(int32_t) * (size_t)len) ||
                buf[len - 1] != LAB_TOK_END || buf[start - 1] != (task == LAB_TASK_RECALL ? buf[start - 1] : LAB_TOK_SEP)) {
                bad++;
                continue;
            }
            const int32_t *in = buf, *ans = buf + start;
            int ok = 1;
            if (task == LAB_TASK_COPY)
                for (int32_t i = 0; i < n; i++) ok &= ans[i] == in[i];
            if (task == LAB_TASK_REVERSE) /* reversing the answer gives the input back */
                for (int32_t i = 0; i < n; i++) ok &= ans[n - 1 - i] == in[i];
            if (task == LAB_TASK_SORT) {
                int counts[26] = {0};
                for (int32_t i = 0; i < n; i++) counts[in[i] - 'a']++, counts[ans[i] - 'a']--;
                for (int32_t i = 1; i < n; i++) ok &= ans[i - 1] <= ans[i];
                for (int c = 0; c < 26; c++) ok &= counts[c] == 0;
            }
            if (task == LAB_TASK_ADDITION && n <= 15) { /* fits in 64 bits: compare with integer addition */
                unsigned long long a = 0, b = 0, s = 0, scale = 1;
                for (int32_t i = 0; i < n; i++) a = a * 10 + (unsigned)(in[i] - '0'), b = b * 10 + (unsigned)(in[n + 1 + i] - '0');
                for (int32_t i = 0; i <= n; i++, scale *= 10) s += (unsigned long long)(ans[i] - '0') * scale;
                ok &= in[n] == '+' && s == a + b;
            }
            if (task == LAB_TASK_RECALL) {
                int32_t key = buf[start - 1], hits = 0;
                for (int32_t i = 0; i < n; i++) {
                    if (in[2 * i] == key) hits++, ok &= ans[0] == in[2 * i + 1];
                    for (int32_t j = 0; j < i; j++) ok &= in[2 * i] != in[2 * j]; /* distinct keys */
                }
                ok &= hits == 1 && buf[start - 2] == LAB_TOK_SEP;
            }
            bad += !ok;
        }
    printf("%-8s %d examples (50 per n), %d wrong\n", lab_task_name(task), examples, bad);
    CHECK(bad == 0, "%s: %d of %d examples wrong", lab_task_name(task), bad, examples);
}

static void test_batch(void) {
    lab_task_source src = {LAB_TASK_ADDITION, 5};
    int32_t tokens[4 * 18], targets[4 * 18]; /* addition n 5: 19 tokens, 18 inputs */
    posenc_error err = {0};
    CHECK(lab_task_batch(&src, 3, 4, 18, 1, tokens, targets, &err) == POSENC_OK, "batch: %s", err.message);
    int answer_targets = 0;
    for (int i = 0; i < 4 * 18; i++) answer_targets += targets[i] >= 0;
    CHECK(answer_targets >= 4 * 3, "batch has %d answer targets", answer_targets);
    CHECK(lab_task_batch(&src, 3, 4, 8, 1, tokens, targets, &err) != POSENC_OK, "a context too short for n 5 must fail");
    printf("batch: %d answer targets; too-short context refused: \"%s\"\n", answer_targets, err.message);
}

static void test_split(void) {
    size_t size = 100000;
    lab_corpus a = {0}, b = {0};
    a.bytes = malloc(size), b.bytes = malloc(size);
    for (size_t i = 0; i < size; i++) a.bytes[i] = b.bytes[i] = (uint8_t)(i * 2654435761u >> 13);
    a.size = b.size = size;
    posenc_error err = {0};
    CHECK(lab_corpus_split(&a, &err) == POSENC_OK && lab_corpus_split(&b, &err) == POSENC_OK, "split: %s", err.message);
    CHECK(a.train_size == b.train_size && a.valid_size == b.valid_size && !memcmp(a.train, b.train, a.train_size) &&
              !memcmp(a.valid, b.valid, a.valid_size),
          "two splits of the same bytes differ");
    CHECK(a.train_size + a.valid_size == size, "split loses bytes: %zu + %zu != %zu", a.train_size, a.valid_size, size);
    /* block 9 (bytes 36864..40959) is the first validation block */
    CHECK(a.valid_size >= LAB_SPLIT_BLOCK && !memcmp(a.valid, a.bytes + 9 * LAB_SPLIT_BLOCK, LAB_SPLIT_BLOCK),
          "validation does not start with block 9");
    CHECK(!memcmp(a.train + 9 * LAB_SPLIT_BLOCK, a.bytes + 10 * LAB_SPLIT_BLOCK, LAB_SPLIT_BLOCK), "training skips block 9");
    printf("split of %zu bytes: train %zu, validation %zu, identical twice\n", size, a.train_size, a.valid_size);
    lab_corpus_free(&a);
    lab_corpus_free(&b);
    lab_corpus small = {0};
    small.bytes = calloc(1000, 1), small.size = 1000;
    CHECK(lab_corpus_split(&small, &err) != POSENC_OK, "a 1000-byte corpus has no validation block: must fail");
    printf("small corpus refused: \"%s\"\n", err.message);
    lab_corpus_free(&small);
}

int main(void) {
    for (int t = 0; t < LAB_TASK_COUNT_; t++) test_task((lab_task)t);
    test_batch();
    test_split();
    lab_task task;
    CHECK(lab_task_parse("reverse", &task, NULL) == POSENC_OK && task == LAB_TASK_REVERSE, "parse reverse");
    CHECK(lab_task_parse("multiply", &task, NULL) != POSENC_OK, "parse multiply must fail");
    LAB_CHECK_FINISH();
}
