/* test_lab_protocol.c: issue 28's evaluation protocol and statistics
 * (docs/lab-experiments.md, "Evaluation protocol" and "Verdicts"): the shared
 * targets (every length and view scores the same bytes once, with the stated
 * minimum context), per-span losses against the model's own loss, the claim
 * intervals and verdict rules on known data, the unigram level, the pystdlib
 * corpus (deterministic order, refusals), the passkey generator (with an oracle
 * that must retrieve every key) and the attention statistics on known patterns.
 * Seconds; prints evidence and a count. */
#define _DEFAULT_SOURCE /* mkdtemp, symlink */
#include "experiments.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lab_check.h"

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Every view at every length scores exactly the set's target bytes, each once, with
 * context >= the view's stated minimum (and <= the length). */
static void test_shared_targets(void) {
    posenc_error err = {0};
    lab_target_set set;
    size_t size = 60000;
    uint8_t *bytes = malloc(size);
    for (size_t i = 0; i < size; i++) bytes[i] = (uint8_t)(i * 7);
    CHECK(lab_target_set_make(size, 8, 256, 256, &set, &err) == POSENC_OK, "set: %s", err.message);
    int spread_ok = set.offsets[0] == 256 && set.offsets[7] + 256 + 1 <= size && set.offsets[7] > size / 2;
    for (int j = 1; j < 8; j++) spread_ok &= set.offsets[j] >= set.offsets[j - 1] + 256;
    CHECK(spread_ok, "8 spans of 256, apart, spread over the %zu bytes: first %zu, last %zu", size, set.offsets[0],
          set.offsets[7]);
    CHECK(lab_target_set_make(2000, 8, 256, 256, &set, &err) == POSENC_ERR_INVALID_ARGUMENT && strstr(err.message, "too short"),
          "a short validation text is refused: %s", err.message);
    lab_target_set_make(size, 8, 256, 256, &set, &err);
    size_t total = (size_t)set.docs * (size_t)set.span;
    int64_t *want = malloc(sizeof(int64_t) * total), *got = malloc(sizeof(int64_t) * total);
    int32_t *ctx = malloc(sizeof(int32_t) * total);
    for (int j = 0, k = 0; j < set.docs; j++)
        for (int32_t t = 0; t < set.span; t++) want[k++] = (int64_t)(set.offsets[j] + (size_t)t);
    int cases = 0, bad = 0;
    for (int32_t n = 16; n <= 256; n *= 2)
        for (int view = 0; view < 2; view++) {
            lab_view_result r;
            for (size_t k = 0; k < total; k++) got[k] = -1, ctx[k] = -1;
            posenc_status st = lab_eval_view(NULL, NULL, bytes, size, &set, n, (lab_view)view, &r, got, ctx, &err);
            qsort(got, total, sizeof *got, cmp_i64);
            int same = st == POSENC_OK && memcmp(got, want, sizeof(int64_t) * total) == 0;
            int32_t lo = 1 << 30, hi = 0;
            for (size_t k = 0; k < total; k++) lo = ctx[k] < lo ? ctx[k] : lo, hi = ctx[k] > hi ? ctx[k] : hi;
            int32_t min = lab_view_min_context((lab_view)view, n);
            int ok = same && lo >= min && hi <= n && lo == (view ? n - n / 4 + 1 : 1) && hi == n;
            bad += !ok;
            cases++;
            if (!ok) printf("  n %d view %d: same %d, context %d..%d (min %d)\n", n, view, same, lo, hi, min);
        }
    CHECK(bad == 0, "%d (length, view) cases score the same %zu target bytes once each, context within [min, n]", cases,
          total);
    printf("shared targets: %d cases x %zu bytes; sliding at 256: context >= %d\n", cases, total,
           lab_view_min_context(LAB_VIEW_SLIDING, 256));
    lab_view_result r;
    CHECK(lab_eval_view(NULL, NULL, bytes, size, &set, 512, LAB_VIEW_WINDOWS, &r, NULL, NULL, &err) == POSENC_ERR_INVALID_ARGUMENT,
          "a length beyond the kept context is refused: %s", err.message);
    CHECK(lab_eval_view(NULL, NULL, bytes, size, &set, 48, LAB_VIEW_WINDOWS, &r, NULL, NULL, &err) == POSENC_ERR_INVALID_ARGUMENT,
          "a length that does not tile the span is refused: %s", err.message);
    free(want), free(got), free(ctx), free(bytes);
}

static lab_model *tiny_model(lab_scheme scheme) {
    lab_config c;
    lab_config_default(&c);
    c.layers = 2, c.d_model = 16, c.heads = 2, c.d_ff = 32, c.context = 16, c.scheme = scheme;
    if (scheme == LAB_POS_LEARNED) c.learned_past_end = POSENC_PAST_END_CLAMP;
    lab_model *m = NULL;
    posenc_error err = {0};
    if (lab_model_create(&c, 1, &m, &err) != POSENC_OK) printf("model: %s\n", err.message);
    return m;
}

/* The windows view's per-span loss is the model's own mean loss over the same windows. */
static void test_view_loss(void) {
    posenc_error err = {0};
    size_t size = 20000;
    uint8_t *bytes = malloc(size);
    for (size_t i = 0; i < size; i++) bytes[i] = (uint8_t)("the cat sat on the mat. "[i % 24] + (i % 97 == 0));
    lab_target_set set;
    lab_target_set_make(size, 4, 64, 64, &set, &err);
    lab_model *m = tiny_model(LAB_POS_ROPE);
    lab_eval_options ev;
    lab_eval_options_default(&ev);
    ev.seq_len = 32;
    lab_view_result r;
    posenc_status st = lab_eval_view(m, &ev, bytes, size, &set, 32, LAB_VIEW_WINDOWS, &r, NULL, NULL, &err);
    /* span 2: windows at offsets[2] - 1 and + 31, every target scored */
    int32_t tok[64], tgt[64];
    for (int b = 0; b < 2; b++)
        for (int t = 0; t < 32; t++) {
            size_t w = set.offsets[2] - 1 + (size_t)b * 32;
            tok[b * 32 + t] = bytes[w + (size_t)t];
            tgt[b * 32 + t] = bytes[w + (size_t)t + 1];
        }
    double loss = 0;
    lab_forward(m, tok, tgt, NULL, 2, 32, &ev, 0, NULL, &loss, &err);
    double mean = 0, sq = 0;
    for (int j = 0; j < 4; j++) mean += r.doc_loss[j] / 4;
    for (int j = 0; j < 4; j++) sq += (r.doc_loss[j] - mean) * (r.doc_loss[j] - mean);
    /* float32 logits, log-softmax in double here and in the op: 1e-5 covers their rounding */
    CHECK(st == POSENC_OK && fabs(r.doc_loss[2] - loss) < 1e-5 && fabs(r.loss - mean) < 1e-12 &&
              fabs(r.se - sqrt(sq / 3 / 4)) < 1e-12,
          "span 2 loss %.7f = the forward's %.7f; mean %.6f, se %.6f", r.doc_loss[2], loss, r.loss, r.se);
    int buckets = 0;
    for (int b = 0; b < LAB_POSITION_BUCKETS; b++) buckets += isfinite(r.position_loss[b]);
    CHECK(buckets == LAB_POSITION_BUCKETS, "loss by context: %d of 16 buckets filled at n 32", buckets);
    printf("view loss: span 2 %.6f vs forward %.6f (|d| %.1e); se over 4 spans %.4f\n", r.doc_loss[2], loss,
           fabs(r.doc_loss[2] - loss), r.se);
    /* the unigram of a text holding each byte value equally: log 256 per byte on any target */
    uint8_t *uni = malloc(256 * 100);
    for (int i = 0; i < 256 * 100; i++) uni[i] = (uint8_t)i;
    double doc[LAB_MAX_DOCS];
    lab_unigram_doc_loss(uni, 256 * 100, bytes, &set, doc);
    CHECK(fabs(doc[0] - log(256.0)) < 1e-12 && fabs(doc[3] - log(256.0)) < 1e-12, "uniform unigram: %.12f = log 256",
          doc[0]);
    /* attention diagnostics of a model: entropy within [0, log n], distances within [0, n) */
    double ent[4], dist[4];
    st = lab_attention_diagnostics(m, &ev, bytes, size, &set, 32, ent, dist, &err);
    int ok = st == POSENC_OK;
    for (int k = 0; k < 4; k++) ok &= ent[k] >= 0 && ent[k] <= log(32.0) + 1e-9 && dist[k] >= 0 && dist[k] < 32;
    CHECK(ok, "diagnostics of an untrained model: entropy %.3f (<= log 32 = %.3f), distance %.2f: %s", ent[0], log(32.0),
          dist[0], err.message);
    lab_model_free(m);
    free(uni), free(bytes);
}

static void test_statistics(void) {
    double mean, lo, hi;
    const double r5[] = {1, 2, 3, 4, 5};
    lab_claim_interval(r5, NULL, 5, &mean, &lo, &hi);
    /* mean 3, sd sqrt(2.5), se sqrt(0.5), t(4) = 2.776: 3 -+ 1.96293 */
    double half = 2.776 * sqrt(0.5);
    CHECK(fabs(mean - 3) < 1e-12 && fabs(lo - (3 - half)) < 1e-12 && fabs(hi - (3 + half)) < 1e-12,
          "known data: mean %.6f [%.6f, %.6f], want 3 [%.6f, %.6f]", mean, lo, hi, 3 - half, 3 + half);
    CHECK(strcmp(lab_claim_verdict(10, lo, hi, 1.0, 0), "contradicted") == 0 &&
              strcmp(lab_claim_verdict(10, lo, hi, 6.0, 0), "supported") == 0 &&
              strncmp(lab_claim_verdict(10, lo, hi, 3.0, 0), "inconclusive", 12) == 0,
          "the interval decides: above 1 contradicted, below 6 supported, across 3 inconclusive");
    /* seeds agree exactly, but the targets' own error is there: 1 -+ t(4) 0.01 */
    const double ones[] = {1, 1, 1, 1, 1}, se[] = {0.01, 0.01, 0.01, 0.01, 0.01};
    lab_claim_interval(ones, se, 5, &mean, &lo, &hi);
    CHECK(fabs(lo - (1 - 0.02776)) < 1e-12 && fabs(hi - (1 + 0.02776)) < 1e-12,
          "target-sampling error widens the interval: [%.5f, %.5f]", lo, hi);
    CHECK(strncmp(lab_claim_verdict(10, lo, hi, 1.02, 0), "inconclusive", 12) == 0 &&
              strcmp(lab_claim_verdict(10, lo, hi, 1.05, 0), "supported") == 0,
          "an interval that cannot clear 1.02 is inconclusive; 1.05 is cleared");
    const double close[] = {0.90, 0.92, 0.91, 0.93, 0.90};
    lab_claim_interval(close, NULL, 5, &mean, &lo, &hi);
    CHECK(strcmp(lab_claim_verdict(10, lo, hi, 1.0, 0), "supported") == 0 &&
              strstr(lab_claim_verdict(10, lo, hi, 1.0, 1), "unigram") != NULL &&
              strstr(lab_claim_verdict(9, lo, hi, 1.0, 0), "fewer than 10") != NULL &&
              strstr(lab_claim_verdict(0, lo, hi, 1.0, 0), "not measured") != NULL,
          "a clear interval is supported, but not with a unigram-level run, 4 seeds, or none");
    lab_claim_interval(close, NULL, 1, &mean, &lo, &hi);
    CHECK(isinf(lo) && isinf(hi), "one seed: no interval");
    CHECK(fabs(lab_t975(1) - 12.706) < 1e-9 && fabs(lab_t975(30) - 2.042) < 1e-9 && fabs(lab_t975(60) - 2.000) < 0.002,
          "t quantiles: %.3f %.3f %.4f", lab_t975(1), lab_t975(30), lab_t975(60));
    printf("statistics: known intervals, the threshold rule, the seed and unigram rules\n");
}

static void put_file(const char *path, char fill, size_t size) {
    FILE *f = fopen(path, "wb");
    for (size_t i = 0; i < size; i++) fputc(i % 64 == 63 ? '\n' : fill, f);
    fclose(f);
}

static void test_corpus(void) {
    posenc_error err = {0};
    lab_corpus c, again;
    CHECK(lab_corpus_load_pystdlib("/nonexistent/python3.11", NULL, 0, &c, &err) == POSENC_ERR_IO &&
              strstr(err.message, "/nonexistent/python3.11") && strstr(err.message, "missing"),
          "missing standard library refused, named: %s", err.message);
    char dir[] = "/tmp/posenc-pystdlib-XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp");
        return;
    }
    char p[512], lic[600];
    snprintf(p, sizeof p, "%s/lib", dir), mkdir(p, 0700);
    snprintf(p, sizeof p, "%s/lib/sub", dir), mkdir(p, 0700);
    snprintf(p, sizeof p, "%s/lib/__pycache__", dir), mkdir(p, 0700);
    snprintf(lic, sizeof lic, "%s/licenses", dir), mkdir(lic, 0700);
    snprintf(p, sizeof p, "%s/lib/b.py", dir), put_file(p, 'b', 20000);
    snprintf(p, sizeof p, "%s/lib/a.py", dir), put_file(p, 'a', 20000);
    snprintf(p, sizeof p, "%s/lib/sub/c.py", dir), put_file(p, 'c', 20000);
    snprintf(p, sizeof p, "%s/lib/sub/notes.txt", dir), put_file(p, 'x', 100);
    snprintf(p, sizeof p, "%s/lib/__pycache__/z.py", dir), put_file(p, 'z', 100);
    snprintf(p, sizeof p, "%s/licenses/MIT", dir), put_file(p, 'm', 1000);
    char lib[520];
    snprintf(lib, sizeof lib, "%s/lib", dir);
    CHECK(lab_corpus_load_pystdlib(lib, "/nonexistent/licenses", 0, &c, &err) == POSENC_ERR_IO &&
              strstr(err.message, "/nonexistent/licenses"),
          "missing license texts refused, named: %s", err.message);
    posenc_status st = lab_corpus_load_pystdlib(lib, lic, 0, &c, &err);
    posenc_status st2 = lab_corpus_load_pystdlib(lib, lic, 0, &again, &err);
    /* a.py, b.py, sub/c.py (depth first, bytewise), then the licenses; no .txt, no __pycache__ */
    int order = st == POSENC_OK && c.files == 4 && c.size == 3 * 20001 + 1001 && c.bytes[0] == 'a' && c.bytes[20001] == 'b' &&
                c.bytes[40002] == 'c' && c.bytes[60003] == 'm';
    CHECK(order, "order a, b, sub/c, licenses: %d files, %zu bytes: %s", c.files, c.size, err.message);
    CHECK(st2 == POSENC_OK && strcmp(c.hash, again.hash) == 0 && c.size == again.size, "deterministic: hash %s twice",
          c.hash);
    lab_corpus_free(&c), lab_corpus_free(&again);
    snprintf(p, sizeof p, "%s/lib/a.py", dir), unlink(p);
    snprintf(p, sizeof p, "%s/lib/b.py", dir), unlink(p);
    snprintf(p, sizeof p, "%s/lib/sub/c.py", dir), unlink(p);
    CHECK(lab_corpus_load_pystdlib(lib, lic, 0, &c, &err) == POSENC_ERR_IO && strstr(err.message, "no .py file"),
          "a library without .py files is refused: %s", err.message);
    snprintf(p, sizeof p, "rm -rf '%s'", dir);
    if (system(p) != 0) printf("note: could not remove %s\n", dir);
    struct stat sb;
    if (stat(LAB_PYSTDLIB_DIR, &sb) == 0 && stat(LAB_LICENSES_DIR, &sb) == 0) {
        st = lab_corpus_load_pystdlib(NULL, NULL, (size_t)2 << 20, &c, &err);
        CHECK(st == POSENC_OK && c.size > ((size_t)2 << 20) && c.files > 100, "this machine's pystdlib: %zu bytes, %d files, %s",
              c.size, c.files, c.hash);
        printf("pystdlib here: %zu bytes from %d files, hash %s\n", c.size, c.files, c.hash);
        lab_corpus_free(&c);
    } else printf("pystdlib: %s or %s absent here; the real-corpus check is skipped\n", LAB_PYSTDLIB_DIR, LAB_LICENSES_DIR);
}

static void test_passkey(void) {
    size_t fsize = 50000;
    uint8_t *filler = malloc(fsize);
    for (size_t i = 0; i < fsize; i++) filler[i] = (uint8_t)("def f(x):\n    return x + 1\n# passkey here\n"[i % 43]);
    int bad = 0, oracle = 0, count = 0, digit_count[10] = {0};
    int32_t shallow = 0, deep = 0;
    uint8_t seq[1100], seq2[1100];
    for (int32_t n = 40; n <= 1024; n *= 2)
        for (uint64_t e = 0; e < 100; e++) {
            int32_t at = -1, ans = -1, at2 = -1, ans2 = -1;
            int32_t len = lab_passkey_example(filler, fsize, n, 3, e, seq, &at, &ans);
            int32_t len2 = lab_passkey_example(filler, fsize, n, 3, e, seq2, &at2, &ans2);
            count++;
            if (len != n + 1 || len2 != len || at != at2 || memcmp(seq, seq2, (size_t)len) || ans != n + 1 - 5) {
                bad++;
                continue;
            }
            /* the needle lies whole before the query; the answer's digits equal the needle's */
            if (at < 0 || at + 19 > ans - 12 || memcmp(seq + at, "\npasskey = '", 12) || memcmp(seq + at + 12, seq + ans, 5) ||
                memcmp(seq + ans - 12, "\npasskey = '", 12))
                bad++;
            for (int d = 0; d < 5; d++) digit_count[seq[ans + d] - '0'] += seq[ans + d] >= '0' && seq[ans + d] <= '9';
            /* oracle: the last "passkey = '" before the query holds the answer (no other in the filler) */
            int32_t found = -1, hits = 0;
            for (int32_t t = 0; t + 11 <= ans - 12; t++)
                if (memcmp(seq + t, "passkey = '", 11) == 0) found = t, hits++;
            oracle += hits == 1 && found >= 0 && memcmp(seq + found + 11, seq + ans, 5) == 0;
            int32_t room = ans - 12 - 19;
            shallow += at < room / 4, deep += at > 3 * room / 4;
        }
    int spread = 1;
    for (int d = 0; d < 10; d++) spread &= digit_count[d] > count * 5 / 20 && digit_count[d] < count * 5 * 3 / 20;
    CHECK(bad == 0, "%d examples (n 40..640): exact length, deterministic, needle before the query, answer = needle (%d bad)",
          count, bad);
    CHECK(oracle == count, "the oracle (find the one earlier key) retrieves %d of %d", oracle, count);
    CHECK(spread && shallow > count / 8 && deep > count / 8, "digits uniform-ish (%d..%d each), needle depths spread (%d shallow, %d deep)",
          digit_count[0], digit_count[9], shallow, deep);
    CHECK(lab_passkey_example(filler, fsize, 39, 3, 0, seq, NULL, NULL) == -1 &&
              lab_passkey_example(filler, 100, 128, 3, 0, seq, NULL, NULL) == -1,
          "too short a length or filler is refused");
    /* an untrained model: a measurement, not a crash; chance is 3.32 bits per digit */
    lab_model *m = tiny_model(LAB_POS_ALIBI);
    lab_eval_options ev;
    lab_eval_options_default(&ev);
    double acc = -1, bits = -1;
    posenc_error err = {0};
    posenc_status st = lab_passkey_eval(m, &ev, filler, fsize, 64, 8, 1, &acc, &bits, &err);
    CHECK(st == POSENC_OK && acc >= 0 && acc <= 1 && bits > 0 && isfinite(bits), "untrained passkey: accuracy %.2f, %.2f bits/digit: %s",
          acc, bits, err.message);
    printf("passkey: %d examples, oracle %d/%d, untrained model %.2f bits/digit (chance 3.32 for a model that knows digits)\n",
           count, oracle, count, bits);
    lab_model_free(m);
    free(filler);
}

static void test_attention_stats(void) {
    enum { T = 8 };
    float p[T * T];
    double e, d, want_d = 0, want_e = 0;
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++) p[i * T + j] = 1.0f / T, want_d += fabs((double)(i - j)) / T / T;
    lab_attention_head_stats(p, T, 0, &e, &d);
    CHECK(fabs(e - log((double)T)) < 1e-6 && fabs(d - want_d) < 1e-6, "uniform over %d keys: entropy %.7f = log %d, distance %.6f (want %.6f)",
          T, e, T, d, want_d);
    memset(p, 0, sizeof p);
    for (int i = 0; i < T; i++)
        for (int j = 0; j <= i; j++) p[i * T + j] = 1.0f / (float)(i + 1);
    for (int i = 0; i < T; i++) want_e += log(i + 1.0) / T;
    lab_attention_head_stats(p, T, 1, &e, &d);
    CHECK(fabs(e - want_e) < 1e-6 && fabs(d - 1.75) < 1e-6, "causal uniform: entropy %.6f (mean log(i+1) %.6f), distance %.4f = 7/4",
          e, want_e, d);
    memset(p, 0, sizeof p);
    for (int i = 0; i < T; i++) p[i * T + (i >= 3 ? i - 3 : 0)] = 1;
    lab_attention_head_stats(p, T, 1, &e, &d);
    CHECK(fabs(e) < 1e-12 && fabs(d - 18.0 / 8) < 1e-12, "one key 3 back: entropy %.3g, distance %.4f = (0+1+2+3x5)/8", e, d);
    printf("attention stats: uniform log n, causal mean log(i+1), a fixed 3-back pattern 2.25\n");
}

/* issue 42: the context curve scores target x from exactly the c bytes before it (one
 * forward of that window, its last position), the grid, effective context, and refusals. */
static void test_context_use(void) {
    posenc_error err = {0};
    size_t size = 20000;
    uint8_t *bytes = malloc(size);
    for (size_t i = 0; i < size; i++) bytes[i] = (uint8_t)("the cat sat on the mat. "[i % 24] + (i % 97 == 0));
    lab_target_set set;
    lab_target_set_make(size, 4, 64, 64, &set, &err);
    lab_model *m = tiny_model(LAB_POS_ROPE);
    lab_eval_options ev;
    lab_eval_options_default(&ev);
    int32_t grid[LAB_CONTEXT_MAX];
    int n = lab_context_grid(16, 64, grid);
    CHECK(n == 7 && grid[0] == 1 && grid[4] == 16 && grid[6] == 64, "grid 1..64 at L 16: %d values, last %d", n, grid[n - 1]);
    int32_t odd[LAB_CONTEXT_MAX];
    int k = lab_context_grid(48, 768, odd); /* L and 16L added when not powers of two */
    bool has48 = false, asc = true;
    for (int i = 0; i < k; i++) has48 |= odd[i] == 48, asc &= i == 0 || odd[i] > odd[i - 1];
    CHECK(has48 && asc && odd[k - 1] == 768, "grid at L 48: has 48, ascending, ends at 768 (%d values)", k);
    lab_context_result *r = malloc(sizeof *r);
    posenc_status st = lab_eval_context(m, &ev, bytes, size, &set, 16, grid, n, r, &err);
    /* span 1's 3rd scored byte (x = offsets[1] + 2 x 16) at c = 8: its own forward */
    size_t x = set.offsets[1] + 32;
    int32_t tok[8], tgt[8];
    for (int t = 0; t < 8; t++) tok[t] = bytes[x - 8 + (size_t)t], tgt[t] = t == 7 ? bytes[x] : -1;
    double one = 0;
    lab_forward(m, tok, tgt, NULL, 1, 8, &ev, 0, NULL, &one, &err);
    /* span 1 at c = 8 is the mean of its 4 scored bytes: recompute all four */
    double sum = 0;
    for (int b = 0; b < 4; b++) {
        size_t xb = set.offsets[1] + (size_t)b * 16;
        for (int t = 0; t < 8; t++) tok[t] = bytes[xb - 8 + (size_t)t], tgt[t] = t == 7 ? bytes[xb] : -1;
        double l = 0;
        lab_forward(m, tok, tgt, NULL, 1, 8, &ev, 0, NULL, &l, &err);
        sum += l;
    }
    /* float32 logits, log-softmax in double: 1e-5 covers their rounding */
    CHECK(st == POSENC_OK && r->targets == 16 && r->c[3] == 8 && fabs(r->doc_loss[3][1] - sum / 4) < 1e-5 && isfinite(one),
          "c = 8, span 1: %.7f = the four windows' forwards %.7f (%lld targets)", r->doc_loss[3][1], sum / 4,
          (long long)r->targets);
    printf("context use: c = 8 span 1 %.6f vs forwards %.6f\n", r->doc_loss[3][1], sum / 4);
    /* effective context: the smallest c within the margin of the best (over c <= upto) */
    int32_t c[] = {1, 2, 4, 8, 16, 32};
    double bpb[] = {4.0, 3.5, 3.2, 3.195, 3.19, 3.30};
    CHECK(lab_effective_context(c, bpb, 6, 32, 0.01) == 8 && lab_effective_context(c, bpb, 6, 4, 0.01) == 4 &&
              lab_effective_context(c, bpb, 6, 32, 0.001) == 16 && lab_effective_context(c, bpb, 6, 32, 1.0) == 1,
          "effective context 8 (margin 0.01), 4 within c <= 4, 16 (margin 0.001), 1 (margin 1)");
    int32_t bad[] = {8, 4};
    CHECK(lab_eval_context(m, &ev, bytes, size, &set, 16, bad, 2, r, &err) == POSENC_ERR_INVALID_ARGUMENT &&
              strstr(err.message, "ascend"), "descending contexts refused: %s", err.message);
    int32_t far[] = {128};
    CHECK(lab_eval_context(m, &ev, bytes, size, &set, 16, far, 1, r, &err) == POSENC_ERR_INVALID_ARGUMENT &&
              strstr(err.message, "128"), "a context past the lead refused by value: %s", err.message);
    free(r);
    lab_model_free(m);
    free(bytes);
}

/* issue 42: the t tail and Holm's adjustment against hand-computed values. */
static void test_multiplicity(void) {
    /* t quantiles (tables): P(|T| > 12.706 | df 1) = 0.05, 2.776 | 4 = 0.05, 3.250 | 9 = 0.01; t = 0 gives 1 */
    double p1 = lab_t_two_sided_p(12.706, 1), p4 = lab_t_two_sided_p(2.776, 4), p9 = lab_t_two_sided_p(3.250, 9);
    /* df 1 is Cauchy: P(|T| > 1) = 1/2 exactly; the tables give 3-4 digits: 1e-4 */
    CHECK(fabs(p1 - 0.05) < 1e-4 && fabs(p4 - 0.05) < 1e-4 && fabs(p9 - 0.01) < 1e-4 &&
              fabs(lab_t_two_sided_p(1.0, 1) - 0.5) < 1e-12 && lab_t_two_sided_p(0, 5) == 1 &&
              isnan(lab_t_two_sided_p(1, 0)),
          "t tails: %.6f %.6f %.6f", p1, p4, p9);
    /* Holm by hand: p = .01 .04 .03 .005 (m 4): sorted .005 .01 .03 .04 -> 4x.005 = .02, 3x.01 = .03,
       2x.03 = .06, max(.06, 1x.04) = .06; a NaN is outside the family */
    double p[] = {0.01, 0.04, 0.03, NAN, 0.005}, adj[5];
    lab_holm(p, 5, adj);
    CHECK(fabs(adj[4] - 0.02) < 1e-15 && fabs(adj[0] - 0.03) < 1e-15 && fabs(adj[2] - 0.06) < 1e-15 &&
              fabs(adj[1] - 0.06) < 1e-15 && isnan(adj[3]),
          "Holm: %.3f %.3f %.3f %.3f (want .03 .06 .06 .02)", adj[0], adj[1], adj[2], adj[4]);
    double big[] = {0.3, 0.5}, badj[2];
    lab_holm(big, 2, badj);
    CHECK(badj[0] == 0.6 && badj[1] == 0.6, "Holm caps and keeps order: %.2f %.2f (want .6 .6)", badj[0], badj[1]);
    /* a claim's p: 5 ratios 0.99 +- 0.01 against 1: t = -0.01 / (0.01 sqrt(2.5)/sqrt(5)...) by hand below */
    double r[] = {0.98, 0.99, 1.00, 0.98, 1.00}; /* mean 0.99, sd 0.01, se 0.01/sqrt 5 */
    double t = (0.99 - 1.0) / (0.01 / sqrt(5.0));
    CHECK(fabs(lab_claim_p(r, NULL, 5, 1.0) - lab_t_two_sided_p(t, 4)) < 1e-12 && lab_claim_p(r, NULL, 1, 1.0) != 0 &&
              isnan(lab_claim_p(r, NULL, 1, 1.0)),
          "claim p = t test of the mean ratio: %.5f", lab_claim_p(r, NULL, 5, 1.0));
    double same[] = {0.5, 0.5, 0.5};
    CHECK(lab_claim_p(same, NULL, 3, 0.4) == 0 && lab_claim_p(same, NULL, 3, 0.5) == 1, "no spread: exact p");
}

int main(void) {
    test_shared_targets();
    test_context_use();
    test_multiplicity();
    test_view_loss();
    test_statistics();
    test_corpus();
    test_passkey();
    test_attention_stats();
    LAB_CHECK_FINISH();
}
