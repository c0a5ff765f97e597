/* protocol.c: the lab's one evaluation protocol (issue 28, docs/lab-experiments.md
 * "Evaluation protocol"): a fixed set of target bytes spread over the whole
 * validation split, scored by every method at every length in two views
 * (non-overlapping windows; sliding windows with >= 3n/4 of context), with
 * per-document losses (standard errors), a loss-by-context curve, the unigram
 * level on the same targets; the passkey retrieval task; attention diagnostics. */
#include "experiments.h"
#include "lab_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

posenc_status lab_target_set_make(size_t valid_size, int docs, int32_t span, int32_t lead, lab_target_set *out,
                                  posenc_error *err) {
    if (!out) return lab_exp_fail(err, POSENC_ERR_NULL_POINTER, "target set is NULL");
    memset(out, 0, sizeof *out);
    if (docs < 1 || docs > LAB_MAX_DOCS)
        return lab_exp_fail(err, POSENC_ERR_INVALID_ARGUMENT, "target documents %d outside 1..%d", docs, LAB_MAX_DOCS);
    if (span < 1 || lead < 1)
        return lab_exp_fail(err, POSENC_ERR_INVALID_ARGUMENT, "target span %d and lead %d must be >= 1", span, lead);
    /* every span needs its lead before it and one spare byte after (a window's last target) */
    size_t need = (size_t)lead + (size_t)docs * (size_t)span + 1;
    if (valid_size < need)
        return lab_exp_fail(err, POSENC_ERR_INVALID_ARGUMENT,
                            "validation text of %zu bytes is too short for %d target spans of %d bytes with %d bytes of "
                            "context before each (needs %zu)",
                            valid_size, docs, span, lead, need);
    size_t room = valid_size - 1 - (size_t)lead - (size_t)span; /* last possible first-target index - lead */
    out->docs = docs;
    out->span = span;
    out->lead = lead;
    for (int j = 0; j < docs; j++)
        out->offsets[j] = (size_t)lead + (docs > 1 ? room / (size_t)(docs - 1) * (size_t)j : 0);
    /* the even spacing keeps spans apart when room >= (docs - 1) span, which need guarantees */
    return POSENC_OK;
}

int32_t lab_view_min_context(lab_view view, int32_t n) {
    if (view == LAB_VIEW_SLIDING) {
        int32_t r = n / 4 > 0 ? n / 4 : 1;
        return n - r + 1;
    }
    return 1;
}

/* Window w (first token index into bytes) and first scored in-window position of window k
 * of document j at length n in a view. Returns the number of windows of a document. */
static int32_t view_windows(const lab_target_set *set, int32_t n, lab_view view) {
    if (view == LAB_VIEW_SLIDING) {
        int32_t r = n / 4 > 0 ? n / 4 : 1;
        return set->span / r;
    }
    return set->span / n;
}
static void view_window(const lab_target_set *set, int j, int32_t k, int32_t n, lab_view view, size_t *start,
                        int32_t *first) {
    size_t o = set->offsets[j];
    if (view == LAB_VIEW_SLIDING) {
        int32_t r = n / 4 > 0 ? n / 4 : 1;
        size_t last_target = o + (size_t)(k + 1) * (size_t)r - 1;
        *start = last_target - (size_t)n; /* targets start+1 .. start+n; the last r are scored */
        *first = n - r;
    } else {
        *start = o - 1 + (size_t)k * (size_t)n; /* targets o + k n .. o + k n + n - 1 */
        *first = 0;
    }
}

#define VIEW_BATCH 8

posenc_status lab_eval_view(lab_model *m, const lab_eval_options *eval, const uint8_t *bytes, size_t size,
                            const lab_target_set *set, int32_t n, lab_view view, lab_view_result *out,
                            int64_t *scored_index, int32_t *scored_context, posenc_error *err) {
    if (!bytes || !set || !out) return lab_exp_fail(err, POSENC_ERR_NULL_POINTER, "evaluation input is NULL");
    memset(out, 0, sizeof *out);
    int32_t r = view == LAB_VIEW_SLIDING ? (n / 4 > 0 ? n / 4 : 1) : n;
    if (n < 1 || set->span % r != 0 || (view == LAB_VIEW_WINDOWS && set->span % n != 0))
        return lab_exp_fail(err, POSENC_ERR_INVALID_ARGUMENT,
                            "length %d does not tile the target span %d (the span must be a multiple of the length and "
                            "of its sliding stride)", n, set->span);
    if (n > set->lead)
        return lab_exp_fail(err, POSENC_ERR_INVALID_ARGUMENT,
                            "length %d needs %d bytes of context before each target span; the target set keeps %d", n, n,
                            set->lead);
    for (int j = 0; j < set->docs; j++)
        if (set->offsets[j] < (size_t)set->lead || set->offsets[j] + (size_t)set->span + 1 > size)
            return lab_exp_fail(err, POSENC_ERR_INVALID_ARGUMENT, "target span %d at %zu lies outside the %zu-byte text", j,
                                set->offsets[j], size);
    int32_t V = m ? lab_model_config(m)->vocab : 256;
    size_t wins = (size_t)view_windows(set, n, view);
    int32_t *tok = malloc(sizeof(int32_t) * 2 * VIEW_BATCH * (size_t)n);
    float *logits = m ? malloc(sizeof(float) * VIEW_BATCH * (size_t)n * (size_t)V) : NULL;
    double bucket_sum[LAB_POSITION_BUCKETS] = {0};
    int64_t bucket_count[LAB_POSITION_BUCKETS] = {0};
    if (!tok || (m && !logits)) {
        free(tok);
        free(logits);
        return lab_exp_fail(err, POSENC_ERR_OUT_OF_MEMORY, "out of memory for evaluation windows of %d", n);
    }
    int32_t *tgt = tok + VIEW_BATCH * (size_t)n;
    posenc_status st = POSENC_OK;
    size_t scored = 0;
    double total_docs = 0, total_sq = 0;
    for (int j = 0; j < set->docs && st == POSENC_OK; j++) {
        double doc_sum = 0;
        for (size_t k0 = 0; k0 < wins && st == POSENC_OK; k0 += VIEW_BATCH) {
            int32_t nb = (int32_t)(wins - k0 < VIEW_BATCH ? wins - k0 : VIEW_BATCH);
            size_t starts[VIEW_BATCH];
            int32_t firsts[VIEW_BATCH];
            for (int32_t b = 0; b < nb; b++) {
                view_window(set, j, (int32_t)(k0 + (size_t)b), n, view, &starts[b], &firsts[b]);
                for (int32_t t = 0; t < n; t++) {
                    tok[(size_t)b * n + t] = bytes[starts[b] + (size_t)t];
                    tgt[(size_t)b * n + t] = t >= firsts[b] ? bytes[starts[b] + (size_t)t + 1] : -1;
                }
            }
            double loss = 0;
            if (m) st = lab_forward(m, tok, tgt, NULL, nb, n, eval, 0, logits, &loss, err);
            for (int32_t b = 0; b < nb && st == POSENC_OK; b++)
                for (int32_t t = firsts[b]; t < n; t++) {
                    size_t index = starts[b] + (size_t)t + 1;
                    int32_t context = t + 1;
                    if (scored_index) scored_index[scored] = (int64_t)index;
                    if (scored_context) scored_context[scored] = context;
                    scored++;
                    if (!m) continue;
                    const float *row = logits + ((size_t)b * n + (size_t)t) * (size_t)V;
                    double mx = row[0];
                    for (int32_t v = 1; v < V; v++) mx = row[v] > mx ? row[v] : mx;
                    double z = 0;
                    for (int32_t v = 0; v < V; v++) z += exp((double)row[v] - mx);
                    double nll = mx + log(z) - (double)row[tgt[(size_t)b * n + t]];
                    doc_sum += nll;
                    int bucket = (int)((int64_t)(context - 1) * LAB_POSITION_BUCKETS / n);
                    bucket_sum[bucket] += nll;
                    bucket_count[bucket]++;
                }
        }
        out->doc_loss[j] = doc_sum / (double)set->span;
        total_docs += out->doc_loss[j];
    }
    free(tok);
    free(logits);
    if (st != POSENC_OK) return st;
    out->loss = total_docs / set->docs;
    for (int j = 0; j < set->docs; j++) total_sq += (out->doc_loss[j] - out->loss) * (out->doc_loss[j] - out->loss);
    out->se = set->docs > 1 ? sqrt(total_sq / (set->docs - 1) / set->docs) : 0;
    for (int b = 0; b < LAB_POSITION_BUCKETS; b++) out->position_loss[b] = bucket_count[b] ? bucket_sum[b] / (double)bucket_count[b] : NAN;
    return POSENC_OK;
}

void lab_unigram_doc_loss(const uint8_t *train, size_t train_size, const uint8_t *valid, const lab_target_set *set,
                          double *doc_loss) {
    double count[256];
    for (int b = 0; b < 256; b++) count[b] = 1; /* add-one: every byte possible */
    for (size_t i = 0; i < train_size; i++) count[train[i]] += 1;
    double total = 256 + (double)train_size;
    for (int j = 0; j < set->docs; j++) {
        double s = 0;
        for (int32_t t = 0; t < set->span; t++) s -= log(count[valid[set->offsets[j] + (size_t)t]] / total);
        doc_loss[j] = s / set->span;
    }
}

/* ---- passkey retrieval ---- */
static const char passkey_query[] = "\npasskey = '";

static uint64_t pk_mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

int32_t lab_passkey_example(const uint8_t *filler, size_t filler_size, int32_t n, uint64_t seed, uint64_t index,
                            uint8_t *out, int32_t *needle_at, int32_t *answer_start) {
    int32_t q = (int32_t)strlen(passkey_query), needle = q + LAB_PASSKEY_DIGITS + 2; /* query digits '\n */
    int32_t total = n + 1, answer = total - LAB_PASSKEY_DIGITS;
    if (n < LAB_PASSKEY_MIN_LENGTH || !filler || filler_size < (size_t)total + 1) return -1;
    uint64_t h = pk_mix(seed ^ pk_mix(index ^ 0x9a55ce7ULL));
    char digits[LAB_PASSKEY_DIGITS + 1];
    for (int d = 0; d < LAB_PASSKEY_DIGITS; d++) digits[d] = (char)('0' + pk_mix(h + (uint64_t)d + 1) % 10);
    digits[LAB_PASSKEY_DIGITS] = 0;
    size_t from = pk_mix(h ^ 0xf111e7ULL) % (filler_size - (size_t)total);
    memcpy(out, filler + from, (size_t)total);
    /* the filler must not hold the query's text: a stray "passkey = '" would be a second needle */
    for (int32_t t = 0; t + 7 <= total; t++)
        if (memcmp(out + t, "passkey", 7) == 0) out[t] = 'P';
    int32_t last_needle = answer - q - needle; /* the needle ends before the query starts */
    int32_t at = (int32_t)(pk_mix(h ^ 0xdeb7ULL) % (uint64_t)(last_needle + 1));
    memcpy(out + at, passkey_query, (size_t)q);
    memcpy(out + at + q, digits, LAB_PASSKEY_DIGITS);
    out[at + q + LAB_PASSKEY_DIGITS] = '\'';
    out[at + q + LAB_PASSKEY_DIGITS + 1] = '\n';
    memcpy(out + answer - q, passkey_query, (size_t)q);
    memcpy(out + answer, digits, LAB_PASSKEY_DIGITS);
    if (needle_at) *needle_at = at;
    if (answer_start) *answer_start = answer;
    return total;
}

posenc_status lab_passkey_eval(lab_model *m, const lab_eval_options *eval, const uint8_t *filler, size_t filler_size,
                               int32_t n, int32_t examples, uint64_t seed, double *accuracy, double *digit_bits,
                               posenc_error *err) {
    if (n < LAB_PASSKEY_MIN_LENGTH || examples < 1)
        return lab_exp_fail(err, POSENC_ERR_INVALID_ARGUMENT, "passkey: length %d (>= %d) and %d examples (>= 1)", n,
                            LAB_PASSKEY_MIN_LENGTH, examples);
    int32_t V = lab_model_config(m)->vocab;
    uint8_t *seq = malloc((size_t)n + 1);
    int32_t *tok = malloc(sizeof(int32_t) * 2 * (size_t)n);
    float *logits = malloc(sizeof(float) * (size_t)n * (size_t)V);
    if (!seq || !tok || !logits) {
        free(seq), free(tok), free(logits);
        return lab_exp_fail(err, POSENC_ERR_OUT_OF_MEMORY, "out of memory for passkey examples of %d", n);
    }
    int32_t *tgt = tok + n;
    posenc_status st = POSENC_OK;
    int64_t correct = 0;
    double bits = 0;
    for (int32_t e = 0; e < examples && st == POSENC_OK; e++) {
        int32_t answer = 0;
        if (lab_passkey_example(filler, filler_size, n, seed, (uint64_t)e, seq, NULL, &answer) < 0) {
            st = lab_exp_fail(err, POSENC_ERR_INVALID_ARGUMENT, "passkey: %zu filler bytes are too few for length %d",
                              filler_size, n);
            break;
        }
        for (int32_t t = 0; t < n; t++) {
            tok[t] = seq[t];
            tgt[t] = t + 1 >= answer ? seq[t + 1] : -1;
        }
        double loss = 0;
        st = lab_forward(m, tok, tgt, NULL, 1, n, eval, 0, logits, &loss, err);
        int ok = 1;
        for (int32_t t = answer - 1; t < n && st == POSENC_OK; t++) {
            const float *row = logits + (size_t)t * (size_t)V;
            int32_t best = 0;
            double mx = row[0], z = 0;
            for (int32_t v = 1; v < V; v++)
                if (row[v] > row[best]) best = v;
            mx = row[best];
            for (int32_t v = 0; v < V; v++) z += exp((double)row[v] - mx);
            bits += (mx + log(z) - (double)row[tgt[t]]) / log(2.0);
            ok &= best == tgt[t];
        }
        correct += ok;
    }
    free(seq), free(tok), free(logits);
    if (st != POSENC_OK) return st;
    *accuracy = (double)correct / examples;
    *digit_bits = bits / ((double)examples * LAB_PASSKEY_DIGITS);
    return POSENC_OK;
}

/* ---- attention diagnostics ---- */
void lab_attention_head_stats(const float *p, int32_t T, int causal, double *entropy, double *distance) {
    double es = 0, ds = 0;
    for (int32_t i = 0; i < T; i++) {
        const float *row = p + (size_t)i * (size_t)T;
        int32_t keys = causal ? i + 1 : T;
        double e = 0, d = 0;
        for (int32_t j = 0; j < keys; j++) {
            double w = row[j];
            if (w > 0) e -= w * log(w);
            d += w * fabs((double)(i - j));
        }
        es += e, ds += d;
    }
    *entropy = es / T;
    *distance = ds / T;
}

posenc_status lab_attention_diagnostics(lab_model *m, const lab_eval_options *eval, const uint8_t *bytes, size_t size,
                                        const lab_target_set *set, int32_t n, double *entropy, double *distance,
                                        posenc_error *err) {
    const lab_config *c = lab_model_config(m);
    int32_t L = c->layers, H = c->heads;
    if (n > set->lead)
        return lab_exp_fail(err, POSENC_ERR_INVALID_ARGUMENT, "diagnostics at length %d need %d bytes before each target span",
                            n, n);
    int32_t *tok = malloc(sizeof(int32_t) * 2 * (size_t)n);
    if (!tok) return lab_exp_fail(err, POSENC_ERR_OUT_OF_MEMORY, "out of memory for diagnostics at %d", n);
    int32_t *tgt = tok + n;
    for (int32_t k = 0; k < L * H; k++) entropy[k] = distance[k] = 0;
    posenc_status st = POSENC_OK;
    int docs = set->docs < LAB_DIAGNOSTIC_WINDOWS ? set->docs : LAB_DIAGNOSTIC_WINDOWS;
    for (int j = 0; j < docs && st == POSENC_OK; j++) {
        size_t start = set->offsets[j] + (size_t)set->span - 1 - (size_t)n; /* the window ending at the span's end */
        if (start + (size_t)n + 1 > size) {
            st = lab_exp_fail(err, POSENC_ERR_INVALID_ARGUMENT, "diagnostic window past the text");
            break;
        }
        for (int32_t t = 0; t < n; t++) tok[t] = bytes[start + (size_t)t], tgt[t] = bytes[start + (size_t)t + 1];
        double loss = 0;
        st = lab_forward(m, tok, tgt, NULL, 1, n, eval, 1, NULL, &loss, err); /* keeps the attention probabilities */
        for (int32_t l = 0; l < L && st == POSENC_OK; l++)
            for (int32_t h = 0; h < H; h++) {
                const float *p = m->acts.att + (size_t)l * m->acts.layer_stride_att + (size_t)h * (size_t)n * (size_t)n;
                double e = 0, d = 0;
                lab_attention_head_stats(p, n, c->causal, &e, &d);
                entropy[l * H + h] += e / docs;
                distance[l * H + h] += d / docs;
            }
    }
    m->have_forward = 0; /* no backward of this forward */
    free(tok);
    return st;
}

/* ---- context use (issue 42) ---- */
int lab_context_grid(int32_t L, int32_t longest, int32_t *out) {
    int n = 0;
    if (L < 1 || longest < 1) return 0;
    for (int64_t c = 1; c <= longest && n < LAB_CONTEXT_MAX - 2; c *= 2) out[n++] = (int32_t)c;
    /* L and the longest length themselves, when they are not powers of two (kept in order) */
    int32_t extra[2] = {L, longest};
    for (int e = 0; e < 2; e++) {
        if (extra[e] > longest) continue;
        int at = 0, seen = 0;
        while (at < n && out[at] < extra[e]) at++;
        seen = at < n && out[at] == extra[e];
        if (seen || n >= LAB_CONTEXT_MAX) continue;
        memmove(out + at + 1, out + at, sizeof *out * (size_t)(n - at));
        out[at] = extra[e];
        n++;
    }
    return n;
}

int32_t lab_effective_context(const int32_t *c, const double *bpb, int count, int32_t upto, double margin) {
    double best = INFINITY;
    for (int i = 0; i < count; i++)
        if (c[i] <= upto && isfinite(bpb[i]) && bpb[i] < best) best = bpb[i];
    if (!isfinite(best)) return -1;
    for (int i = 0; i < count; i++) /* c is ascending: the first within the margin is the smallest */
        if (c[i] <= upto && isfinite(bpb[i]) && bpb[i] <= best + margin) return c[i];
    return -1;
}

posenc_status lab_eval_context(lab_model *m, const lab_eval_options *eval, const uint8_t *bytes, size_t size,
                               const lab_target_set *set, int32_t stride, const int32_t *contexts, int count,
                               lab_context_result *out, posenc_error *err) {
    if (!bytes || !set || !contexts || !out) return lab_exp_fail(err, POSENC_ERR_NULL_POINTER, "context evaluation input is NULL");
    memset(out, 0, sizeof *out);
    if (count < 1 || count > LAB_CONTEXT_MAX)
        return lab_exp_fail(err, POSENC_ERR_INVALID_ARGUMENT, "context evaluation: %d contexts outside 1..%d", count,
                            LAB_CONTEXT_MAX);
    if (stride < 1 || stride > set->span)
        return lab_exp_fail(err, POSENC_ERR_INVALID_ARGUMENT, "context evaluation: stride %d outside 1..%d (the span)",
                            stride, set->span);
    for (int i = 0; i < count; i++) {
        if (contexts[i] < 1 || contexts[i] > set->lead)
            return lab_exp_fail(err, POSENC_ERR_INVALID_ARGUMENT,
                                "context %d outside 1..%d (the bytes the target set keeps before each span)", contexts[i],
                                set->lead);
        if (i > 0 && contexts[i] <= contexts[i - 1])
            return lab_exp_fail(err, POSENC_ERR_INVALID_ARGUMENT, "contexts must ascend: %d after %d", contexts[i],
                                contexts[i - 1]);
    }
    for (int j = 0; j < set->docs; j++)
        if (set->offsets[j] < (size_t)set->lead || set->offsets[j] + (size_t)set->span > size)
            return lab_exp_fail(err, POSENC_ERR_INVALID_ARGUMENT, "target span %d at %zu lies outside the %zu-byte text", j,
                                set->offsets[j], size);
    int32_t per_doc = (set->span + stride - 1) / stride, V = m ? lab_model_config(m)->vocab : 256;
    int32_t longest = contexts[count - 1];
    /* about 8192 tokens a forward pass: many short windows, or one long one */
    int32_t cap = 8192 / longest > 1 ? 8192 / longest : 1;
    if (cap > 256) cap = 256;
    int32_t *tok = malloc(sizeof(int32_t) * 2 * (size_t)cap * (size_t)longest);
    float *logits = m ? malloc(sizeof(float) * (size_t)cap * (size_t)longest * (size_t)V) : NULL;
    if (!tok || (m && !logits)) {
        free(tok);
        free(logits);
        return lab_exp_fail(err, POSENC_ERR_OUT_OF_MEMORY, "out of memory for context windows of %d", longest);
    }
    int32_t *tgt = tok + (size_t)cap * (size_t)longest;
    posenc_status st = POSENC_OK;
    out->count = count;
    out->docs = set->docs;
    out->stride = stride;
    out->targets = (int64_t)per_doc * set->docs;
    for (int i = 0; i < count && st == POSENC_OK; i++) {
        int32_t c = contexts[i];
        int32_t b_cap = 8192 / c > 1 ? 8192 / c : 1;
        if (b_cap > cap) b_cap = cap;
        out->c[i] = c;
        double total = 0;
        for (int j = 0; j < set->docs && st == POSENC_OK; j++) {
            double doc_sum = 0;
            for (int32_t k0 = 0; k0 < per_doc && st == POSENC_OK; k0 += b_cap) {
                int32_t nb = per_doc - k0 < b_cap ? per_doc - k0 : b_cap;
                for (int32_t b = 0; b < nb; b++) {
                    /* target byte at index x is predicted from exactly the c bytes x-c .. x-1 */
                    size_t x = set->offsets[j] + (size_t)(k0 + b) * (size_t)stride;
                    for (int32_t t = 0; t < c; t++) {
                        tok[(size_t)b * c + t] = bytes[x - (size_t)c + (size_t)t];
                        tgt[(size_t)b * c + t] = t == c - 1 ? bytes[x] : -1;
                    }
                }
                if (!m) continue;
                lab_eval_options ev = *eval;
                ev.seq_len = c;
                ev.batch = nb;
                double loss = 0;
                st = lab_forward(m, tok, tgt, NULL, nb, c, &ev, 0, logits, &loss, err);
                for (int32_t b = 0; b < nb && st == POSENC_OK; b++) {
                    const float *row = logits + ((size_t)b * c + (size_t)(c - 1)) * (size_t)V;
                    double mx = row[0], z = 0;
                    for (int32_t v = 1; v < V; v++) mx = row[v] > mx ? row[v] : mx;
                    for (int32_t v = 0; v < V; v++) z += exp((double)row[v] - mx);
                    doc_sum += mx + log(z) - (double)row[tgt[(size_t)b * c + (c - 1)]];
                }
            }
            out->doc_loss[i][j] = doc_sum / per_doc;
            total += out->doc_loss[i][j];
        }
        out->loss[i] = total / set->docs;
    }
    free(tok);
    free(logits);
    return st;
}
