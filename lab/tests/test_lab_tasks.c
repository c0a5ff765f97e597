/* test_lab_tasks.c: the synthetic task generators (answers checked by
 * recomputing them from the input: reverse of reverse, sums, sortedness,
 * recall) and the corpus split's determinism. Prints evidence and a count. */
#include "experiments.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab_check.h"

static int cmp_int32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static void test_task(lab_task task) {
    int32_t buf[256], again[256];
    int bad = 0, examples = 0;
    if (task == LAB_TASK_LOOKUP) return; /* its own test (test_lookup): lengths past 256 */
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

/* lookup (issue 42 item 5): deterministic per seed and index, different across seeds;
 * keys distinct and LAB_LOOKUP_KEY letters, values digits, every query a key of the
 * pairs asked once, its answer recovered from the input by searching the pairs; only
 * the answers are targets; the sizes that fill L .. 16L. */
static void test_lookup(void) {
    enum { CAP = (LAB_LOOKUP_KEY + 1) * (LAB_LOOKUP_MAX_N + LAB_LOOKUP_QUERIES) + 2 };
    static int32_t buf[CAP], again[CAP], other[CAP];
    const int P = LAB_LOOKUP_KEY + 1; /* tokens a pair */
    static const int32_t sizes[] = {1, 2, 3, 4, 5, 11, 27, 59, 123, 251, 1019, LAB_LOOKUP_MAX_N};
    int bad = 0, examples = 0, differ = 0, far = 0;
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
        for (uint64_t index = 0; index < 40; index++, examples++) {
            int32_t n = sizes[si], start = -1, start2 = -1, start3 = -1;
            int32_t len = lab_task_example(LAB_TASK_LOOKUP, n, 7, index, buf, CAP, &start);
            int32_t len2 = lab_task_example(LAB_TASK_LOOKUP, n, 7, index, again, CAP, &start2);
            int32_t len3 = lab_task_example(LAB_TASK_LOOKUP, n, 8, index, other, CAP, &start3);
            int32_t m = n < LAB_LOOKUP_QUERIES ? n : LAB_LOOKUP_QUERIES;
            if (len != lab_task_length(LAB_TASK_LOOKUP, n) || len != P * (n + m) + 2 || len != len2 || start != start2 ||
                memcmp(buf, again, sizeof(int32_t) * (size_t)len) || buf[len - 1] != LAB_TOK_END ||
                buf[P * n] != LAB_TOK_SEP || start != P * n + 1 + LAB_LOOKUP_KEY || len3 != len) {
                bad++;
                continue;
            }
            differ += memcmp(buf, other, sizeof(int32_t) * (size_t)len) != 0;
            int ok = 1;
            for (int32_t i = 0; i < n; i++) {
                for (int j = 0; j < LAB_LOOKUP_KEY; j++) ok &= buf[P * i + j] >= 'a' && buf[P * i + j] <= 'z';
                ok &= buf[P * i + LAB_LOOKUP_KEY] >= '0' && buf[P * i + LAB_LOOKUP_KEY] <= '9';
            }
            /* distinct keys: sort the codes, no two equal (n up to 1024: O(n log n) by qsort) */
            static int32_t codes[LAB_LOOKUP_MAX_N];
            for (int32_t i = 0; i < n; i++) {
                codes[i] = 0;
                for (int j = 0; j < LAB_LOOKUP_KEY; j++) codes[i] = codes[i] * 26 + (buf[P * i + j] - 'a');
            }
            qsort(codes, (size_t)n, sizeof *codes, cmp_int32);
            for (int32_t i = 1; i < n; i++) ok &= codes[i] != codes[i - 1];
            int32_t asked[LAB_LOOKUP_QUERIES];
            for (int32_t q = 0; q < m; q++) {
                const int32_t *query = buf + P * n + 1 + P * q;
                int hits = 0;
                for (int32_t i = 0; i < n; i++)
                    if (!memcmp(buf + P * i, query, sizeof(int32_t) * LAB_LOOKUP_KEY)) {
                        hits++;
                        asked[q] = i;
                        ok &= query[LAB_LOOKUP_KEY] == buf[P * i + LAB_LOOKUP_KEY]; /* the answer is its value */
                        far |= (int)(P * n + 1 + P * q + LAB_LOOKUP_KEY - (P * i + LAB_LOOKUP_KEY) > 4 * 64);
                    }
                ok &= hits == 1;
                for (int32_t r = 0; r < q; r++) ok &= asked[r] != asked[q]; /* no query repeats */
            }
            /* the targets: exactly the m answer digits */
            int answers = 0;
            for (int32_t t = 0; t < len; t++)
                if (lab_task_is_answer(LAB_TASK_LOOKUP, t, start, len)) {
                    answers++;
                    ok &= t > P * n && (t - (P * n + 1)) % P == LAB_LOOKUP_KEY && buf[t] >= '0' && buf[t] <= '9';
                }
            ok &= answers == m;
            bad += !ok;
        }
    printf("lookup   %d examples (40 per n, n = 1 .. %d), %d wrong, %d of %d differ under another seed, "
           "an answer more than 256 tokens from its pair: %s\n",
           examples, LAB_LOOKUP_MAX_N, bad, differ, examples, far ? "yes" : "no");
    CHECK(bad == 0, "lookup: %d of %d examples wrong", bad, examples);
    CHECK(differ >= examples - 12, "lookup: only %d of %d examples change with the seed", differ, examples);
    CHECK(far, "lookup: no query is asked far from its pair");
    int32_t cap_short[8], st = 0;
    CHECK(lab_task_example(LAB_TASK_LOOKUP, LAB_LOOKUP_MAX_N + 1, 7, 0, buf, CAP, &st) == -1,
          "lookup with n %d > LAB_LOOKUP_MAX_N must be refused", LAB_LOOKUP_MAX_N + 1);
    CHECK(lab_task_example(LAB_TASK_LOOKUP, 3, 7, 0, cap_short, 8, &st) == -1, "lookup into a short buffer must fail");
    /* the sizes the plan scores: the most pairs whose example fits L .. 16L inputs */
    static const int32_t L[] = {64, 128, 256, 512, 1024}, want[] = {11, 27, 59, 123, 251};
    for (int i = 0; i < 5; i++) {
        int32_t n = lab_task_fit(LAB_TASK_LOOKUP, L[i]);
        CHECK(n == want[i] && lab_task_length(LAB_TASK_LOOKUP, n) - 1 <= L[i] &&
                  lab_task_length(LAB_TASK_LOOKUP, n + 1) - 1 > L[i],
              "lab_task_fit(lookup, %d) = %d, want %d", L[i], n, want[i]);
    }
    /* a batch trains on the answers only: the position before each query's value predicts it;
       no pair token, query key, END or padding is a target */
    lab_task_source src = {LAB_TASK_LOOKUP, 11};
    int32_t tokens[4 * 64], targets[4 * 64];
    posenc_error err = {0};
    CHECK(lab_task_batch(&src, 5, 4, 64, 3, tokens, targets, &err) == POSENC_OK, "lookup batch: %s", err.message);
    int targeted = 0, misplaced = 0, rows_ok = 0;
    for (int b = 0; b < 4; b++) {
        const int32_t *tok = tokens + 64 * b, *tg = targets + 64 * b;
        int sep = -1, row = 0;
        for (int t = 0; t < 64 && sep < 0; t++)
            if (tok[t] == LAB_TOK_SEP) sep = t;
        int32_t n = sep / (LAB_LOOKUP_KEY + 1), m = n < LAB_LOOKUP_QUERIES ? n : LAB_LOOKUP_QUERIES;
        for (int t = 0; t < 64; t++) {
            int q = (t - sep - LAB_LOOKUP_KEY) / (LAB_LOOKUP_KEY + 1);
            int due = sep >= 0 && t >= sep + LAB_LOOKUP_KEY && (t - sep - LAB_LOOKUP_KEY) % (LAB_LOOKUP_KEY + 1) == 0 && q < m;
            misplaced += (tg[t] >= 0) != due || (due && tg[t] != tok[t + 1]);
            row += tg[t] >= 0;
        }
        rows_ok += sep > 0 && row == m;
        targeted += row;
    }
    CHECK(misplaced == 0 && rows_ok == 4, "lookup batch: %d targets misplaced, %d of 4 rows with m answer targets",
          misplaced, rows_ok);
    printf("lookup fits: n = 11, 27, 59, 123, 251 at 64 .. 1024 tokens; a batch of 4 trains on %d answer tokens, "
           "each where the query's value is predicted\n", targeted);
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

/* The tuning split (issue 42 item 4) of a corpus of 25 blocks of xorshift bytes (no
 * 64-byte piece repeats): every block lands in exactly one of valid (9), dev
 * (LAB_DEV_BLOCK) and tune_train (the rest), in order; so dev, where tuning scores,
 * and valid, where every test target lies, share no byte of the corpus. */
static void test_dev_split(void) {
    size_t size = 100000;
    lab_corpus c = {0};
    c.bytes = malloc(size), c.size = size;
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < size; i++) x ^= x << 13, x ^= x >> 7, x ^= x << 17, c.bytes[i] = (uint8_t)(x >> 32);
    posenc_error err = {0};
    CHECK(lab_corpus_split(&c, &err) == POSENC_OK, "split: %s", err.message);
    size_t at_valid = 0, at_dev = 0, at_tune = 0, blocks = 0, misplaced = 0;
    for (size_t start = 0, block = 0; start < size; start += LAB_SPLIT_BLOCK, block++, blocks++) {
        size_t n = size - start < LAB_SPLIT_BLOCK ? size - start : LAB_SPLIT_BLOCK;
        const uint8_t *from = c.bytes + start;
        if (block % 10 == 9) misplaced += memcmp(c.valid + at_valid, from, n) != 0, at_valid += n;
        else if (block % 10 == LAB_DEV_BLOCK) misplaced += memcmp(c.dev + at_dev, from, n) != 0, at_dev += n;
        else misplaced += memcmp(c.tune_train + at_tune, from, n) != 0, at_tune += n;
    }
    CHECK(misplaced == 0 && at_valid == c.valid_size && at_dev == c.dev_size && at_tune == c.tune_train_size &&
              c.dev_size > 0 && c.dev_size + c.tune_train_size == c.train_size,
          "tuning split: %zu blocks misplaced; dev %zu, tune_train %zu, valid %zu of %zu bytes", misplaced, c.dev_size,
          c.tune_train_size, c.valid_size, size);
    /* the dev blocks' bytes are not in the validation split: no 64-byte piece of dev occurs in valid
       (the pseudo-random corpus repeats none), while a piece of valid itself is found */
    size_t found = 0;
    for (size_t off = 0; off + 64 <= c.dev_size; off += 509)
        for (size_t v = 0; v + 64 <= c.valid_size; v++) found += memcmp(c.dev + off, c.valid + v, 64) == 0;
    int self = 0;
    for (size_t v = 0; v + 64 <= c.valid_size && !self; v++) self = memcmp(c.valid + 1000, c.valid + v, 64) == 0;
    CHECK(found == 0 && self, "dev pieces found in valid: %zu (the search finds valid's own piece: %d)", found, self);
    printf("tuning split: dev %zu bytes (block %d of 10), tune_train %zu, no dev piece in valid, all %zu blocks in place\n",
           c.dev_size, LAB_DEV_BLOCK, c.tune_train_size, blocks);
    lab_corpus_free(&c);
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
    test_lookup();
    test_batch();
    test_split();
    test_dev_split();
    lab_task task;
    CHECK(lab_task_parse("reverse", &task, NULL) == POSENC_OK && task == LAB_TASK_REVERSE, "parse reverse");
    CHECK(lab_task_parse("multiply", &task, NULL) != POSENC_OK, "parse multiply must fail");
    CHECK(lab_task_parse("lookup", &task, NULL) == POSENC_OK && task == LAB_TASK_LOOKUP, "parse lookup");
    LAB_CHECK_FINISH();
}
