/* claims.c: the articles' claims against measured runs (issue 28's rules,
 * docs/lab-experiments.md "Verdicts"). A claim compares two quantities paired by
 * seed (same seed, same target bytes): r = a / b against the claim's threshold
 * (a < threshold x b). Over the seeds: the mean of r and a 95% interval, t with
 * n - 1 degrees of freedom times sqrt(seed variance / n + target-sampling
 * variance), the latter the mean over seeds of the jackknife variance of r over
 * the target spans (both runs' per-span values; 0 for older lines without them).
 * Verdict: supported when the whole interval is below the threshold,
 * contradicted when it is above it, inconclusive otherwise, with fewer than
 * LAB_CLAIM_MIN_SEEDS seeds, or when either run of a bits-per-byte row learned no
 * more than the byte unigram on the same targets (within LAB_UNIGRAM_FRACTION of it). */
#include "experiments.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double lab_t975(int df) {
    static const double t[] = {0,      12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                               2.201,  2.179,  2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080,
                               2.074,  2.069,  2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
    if (df < 1) return INFINITY;
    if (df <= 30) return t[df];
    return 1.96 + 2.4 / df; /* within 0.002 of the exact quantile above 30 */
}

void lab_claim_interval(const double *ratio, const double *se_doc, int n, double *mean, double *lo, double *hi) {
    double m = 0, var = 0, doc = 0;
    for (int i = 0; i < n; i++) m += ratio[i] / n;
    for (int i = 0; i < n; i++) var += (ratio[i] - m) * (ratio[i] - m);
    for (int i = 0; i < n; i++) doc += (se_doc ? se_doc[i] * se_doc[i] : 0) / n;
    double se = n > 1 ? sqrt(var / (n - 1) / n + doc) : INFINITY;
    double half = lab_t975(n - 1) * se;
    *mean = m;
    *lo = n > 1 ? m - half : -INFINITY;
    *hi = n > 1 ? m + half : INFINITY;
}

const char *lab_claim_verdict(int seeds, double lo, double hi, double threshold, int unigram_level) {
    if (seeds == 0) return "inconclusive (not measured)";
    if (unigram_level) return "inconclusive (a run is at the unigram level)";
    if (seeds < LAB_CLAIM_MIN_SEEDS) return "inconclusive (fewer than 5 seeds)";
    if (hi < threshold) return "supported";
    if (lo > threshold) return "contradicted";
    return "inconclusive (interval spans the threshold)";
}

/* Metric of run (label, seed) at length multiple k of its training length. */
/* skip < 0: the metric's value; skip >= 0: the mean of its per-span values without
 * span `skip` (NaN when the row has none). */
static double metric_at(const cJSON *run, const char *metric, double multiple, const char *variant, const char *want_phase,
                        int skip) {
    /* a line read from a file may lack the field or hold another type: no evidence then */
    const cJSON *train_length = cJSON_GetObjectItem(run, "train_length");
    if (!cJSON_IsNumber(train_length) || !(train_length->valuedouble > 0)) return NAN;
    double L = train_length->valuedouble;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(run, "evals")) {
        const cJSON *v = cJSON_GetObjectItem(e, metric), *len = cJSON_GetObjectItem(e, "length");
        const cJSON *var = cJSON_GetObjectItem(e, "variant"), *phase = cJSON_GetObjectItem(e, "phase");
        if (cJSON_IsNumber(v) && cJSON_IsNumber(len) && fabs(len->valuedouble - multiple * L) < 0.5 &&
            cJSON_IsString(var) && strcmp(var->valuestring, variant) == 0 && cJSON_IsString(phase) &&
            strcmp(phase->valuestring, want_phase ? want_phase : "trained") == 0) {
            if (skip < 0) return v->valuedouble;
            char name[64];
            snprintf(name, sizeof name, "%s_docs", metric);
            const cJSON *docs = cJSON_GetObjectItem(e, name), *d;
            double sum = 0;
            int count = 0, at = 0;
            cJSON_ArrayForEach(d, docs) {
                if (!cJSON_IsNumber(d)) return NAN;
                if (at++ != skip) sum += d->valuedouble, count++;
            }
            return count > 0 && skip < at ? sum / count : NAN;
        }
    }
    return NAN;
}

/* Target spans of a row (0 when it has no per-span values). */
static int docs_of(const cJSON *run, const char *metric) {
    const cJSON *e;
    char name[64];
    snprintf(name, sizeof name, "%s_docs", metric);
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(run, "evals")) {
        const cJSON *d = cJSON_GetObjectItem(e, name);
        if (cJSON_IsArray(d)) return cJSON_GetArraySize(d);
    }
    return 0;
}

typedef struct {
    const char *experiment, *label, *metric, *variant;
    double multiple;
    int ratio_to_L; /* 1: value / value at L */
    const char *phase; /* NULL = "trained"; "finetuned" = after the variant's fine-tune */
} quantity;

/* A run-level measurement, not per length: "position_memory.FIELD" (experiments.c). */
#define RUN_FIELD "position_memory."

static double quantity_of(const cJSON *run, const quantity *q, int skip) {
    if (strncmp(q->metric, RUN_FIELD, strlen(RUN_FIELD)) == 0) {
        const cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(run, "position_memory"), q->metric + strlen(RUN_FIELD));
        return cJSON_IsNumber(v) ? v->valuedouble : NAN;
    }
    double v = metric_at(run, q->metric, q->multiple, q->variant, q->phase, skip);
    return q->ratio_to_L ? v / metric_at(run, q->metric, 1, q->variant, q->phase, skip) : v;
}

static const cJSON *find_run(const cJSON *runs, const char *experiment, const char *label, double seed) {
    const cJSON *r;
    cJSON_ArrayForEach(r, runs) {
        const cJSON *e = cJSON_GetObjectItem(r, "experiment"), *l = cJSON_GetObjectItem(r, "label"),
                    *s = cJSON_GetObjectItem(r, "seed");
        /* the README's "demo" and the end-to-end test's "tiny" runs answer the extrapolate claims */
        bool same_experiment =
            cJSON_IsString(e) && (strcmp(e->valuestring, experiment) == 0 ||
                                  (strcmp(experiment, "extrapolate") == 0 && (strcmp(e->valuestring, "tiny") == 0 ||
                                                                              strcmp(e->valuestring, "demo") == 0)) ||
                                  (strcmp(experiment, "context-extension") == 0 && strcmp(e->valuestring, "tiny-extension") == 0));
        if (same_experiment && cJSON_IsString(l) && cJSON_IsNumber(s) &&
            strcmp(l->valuestring, label) == 0 && s->valuedouble == seed)
            return r;
    }
    return NULL;
}

typedef struct {
    const char *source, *claim;
    quantity a, b; /* claim: a < b * factor (lower is better for bpb) */
    double factor;
    const char *evidence_unit;
    int about_training; /* 1: the claim is that the second does not train (the unigram rule does not apply) */
} claim;

static void describe(const quantity *q, char *out, size_t size) {
    if (strncmp(q->metric, RUN_FIELD, strlen(RUN_FIELD)) == 0) {
        snprintf(out, size, "%s %s", q->label, q->metric + strlen(RUN_FIELD));
        return;
    }
    const char *variant = strcmp(q->variant, "plain") ? q->variant : "";
    const char *ft = q->phase && strcmp(q->phase, "finetuned") == 0 ? " +ft" : "";
    if (q->ratio_to_L)
        snprintf(out, size, "%s%s%s%s %s(%gL)/%s(L)", q->label, *variant ? " " : "", variant, ft, q->metric, q->multiple,
                 q->metric);
    else snprintf(out, size, "%s%s%s%s %s(%gL)", q->label, *variant ? " " : "", variant, ft, q->metric, q->multiple);
}

/* Does this run sit at the unigram level: bits per byte at L (windows view, as trained,
 * the quantity's variant, else "plain") above (1 - LAB_UNIGRAM_FRACTION) x its own
 * unigram_bpb on the same targets? -1: not known (older lines). */
static int unigram_level(const cJSON *run, const quantity *q) {
    const cJSON *u = cJSON_GetObjectItem(run, "unigram_bpb");
    double at_L = metric_at(run, "bpb", 1, q->variant, NULL, -1);
    if (!isfinite(at_L)) at_L = metric_at(run, "bpb", 1, "plain", NULL, -1);
    if (!cJSON_IsNumber(u) || !isfinite(at_L)) return -1;
    return at_L > (1 - LAB_UNIGRAM_FRACTION) * u->valuedouble;
}

/* The paired ratio of one seed and its jackknife standard error over the target spans
 * (0 when either run lacks per-span values or they differ in count). */
static double jackknife_se(const cJSON *ra, const cJSON *rb, const claim *c) {
    int da = docs_of(ra, c->a.metric), db = docs_of(rb, c->b.metric);
    if (da < 2 || da != db || strncmp(c->a.metric, RUN_FIELD, strlen(RUN_FIELD)) == 0) return 0;
    double r[LAB_MAX_DOCS], mean = 0, sq = 0;
    if (da > LAB_MAX_DOCS) return 0;
    for (int j = 0; j < da; j++) {
        r[j] = quantity_of(ra, &c->a, j) / quantity_of(rb, &c->b, j);
        if (!isfinite(r[j])) return 0;
        mean += r[j] / da;
    }
    for (int j = 0; j < da; j++) sq += (r[j] - mean) * (r[j] - mean);
    return sqrt((double)(da - 1) / da * sq);
}

/* Append the claim's row if these runs measured it (measured) or did not (!measured), so
 * the table shows what the runs say before what they leave for other experiments; false
 * when out of memory (the table would silently lack it). */
static bool row(cJSON *runs_c, const claim *c, bool measured, lab_claims_count *count, char **buf, size_t *len,
                size_t *cap) {
    const cJSON *runs = runs_c;
    int seeds = 0, at_unigram = 0;
    double ratio[100], se_doc[100];
    double lo_a = INFINITY, hi_a = -INFINITY, lo_b = INFINITY, hi_b = -INFINITY, lo_ratio = INFINITY, hi_ratio = -INFINITY;
    double ua = 0, ub = 0;
    int ka = 0, kb = 0;
    for (int seed = 1; seed <= 100; seed++) {
        const cJSON *ra = find_run(runs, c->a.experiment, c->a.label, seed);
        const cJSON *rb = find_run(runs, c->b.experiment, c->b.label, seed);
        if (!ra || !rb) continue;
        double a = quantity_of(ra, &c->a, -1), b = quantity_of(rb, &c->b, -1);
        if (!isfinite(a) || !isfinite(b) || b == 0) continue;
        ratio[seeds] = a / b;
        se_doc[seeds] = jackknife_se(ra, rb, c);
        seeds++;
        lo_a = fmin(lo_a, a), hi_a = fmax(hi_a, a), lo_b = fmin(lo_b, b), hi_b = fmax(hi_b, b);
        lo_ratio = fmin(lo_ratio, a / b), hi_ratio = fmax(hi_ratio, a / b);
        if (strncmp(c->a.metric, RUN_FIELD, strlen(RUN_FIELD)) != 0 && !c->about_training) {
            int la = unigram_level(ra, &c->a), lb = unigram_level(rb, &c->b);
            if (la >= 0) ua += la, ka++;
            if (lb >= 0) ub += lb, kb++;
        }
    }
    if ((seeds > 0) != measured) return true;
    /* a side is at the unigram level when most of its seeds are */
    at_unigram = (ka > 0 && 2 * ua > ka) || (kb > 0 && 2 * ub > kb);
    double mean = NAN, lo = NAN, hi = NAN;
    if (seeds > 0) lab_claim_interval(ratio, se_doc, seeds, &mean, &lo, &hi);
    const char *verdict = lab_claim_verdict(seeds, lo, hi, c->factor, at_unigram);
    count->rows++;
    count->measured += seeds > 0;
    count->supported += strcmp(verdict, "supported") == 0;
    count->contradicted += strcmp(verdict, "contradicted") == 0;
    char line[1400], interval[200];
    int n;
    if (seeds > 1)
        snprintf(interval, sizeof interval, "paired ratio first/second = %.4f, 95%% CI [%.4f, %.4f]", mean, lo, hi);
    else if (seeds == 1)
        snprintf(interval, sizeof interval, "paired ratio first/second = %.4f (one seed: no interval)", mean);
    if (seeds == 0) { /* what would measure it: the experiment (once when both sides share it) and its schemes */
        char need[300];
        bool one_run = strcmp(c->a.experiment, c->b.experiment) == 0 && strcmp(c->a.label, c->b.label) == 0;
        if (one_run) snprintf(need, sizeof need, "%s runs of `posenc lab run %s`", c->a.label, c->a.experiment);
        else if (strcmp(c->a.experiment, c->b.experiment) == 0)
            snprintf(need, sizeof need, "%s and %s runs of `posenc lab run %s`", c->a.label, c->b.label, c->a.experiment);
        else
            snprintf(need, sizeof need, "%s runs of `posenc lab run %s` and %s runs of `posenc lab run %s`", c->a.label,
                     c->a.experiment, c->b.label, c->b.experiment);
        n = snprintf(line, sizeof line, "| %s | %s | not in these runs: needs %s evaluated at these lengths | %s |\n", c->source, c->claim, need,
                     verdict);
    }
    else {
        char qa[128], qb[128];
        describe(&c->a, qa, sizeof qa);
        describe(&c->b, qb, sizeof qb);
        if (c->evidence_unit) /* bytes: whole numbers, and the saving a / b - 1 */
            n = snprintf(line, sizeof line,
                         "| %s | %s | %s = %.0f..%.0f %s; %s = %.0f..%.0f %s (%.1f..%.1f%% less); %s; claim holds if the ratio < %.2f; %d seed%s | %s |\n",
                         c->source, c->claim, qa, lo_a, hi_a, c->evidence_unit, qb, lo_b, hi_b, c->evidence_unit,
                         100 * (1 - hi_ratio), 100 * (1 - lo_ratio), interval, c->factor, seeds, seeds == 1 ? "" : "s", verdict);
        else
            n = snprintf(line, sizeof line, "| %s | %s | %s = %.3f..%.3f; %s = %.3f..%.3f; %s; claim holds if the ratio < %.2f; %d seed%s | %s |\n",
                         c->source, c->claim, qa, lo_a, hi_a, qb, lo_b, hi_b, interval, c->factor, seeds,
                         seeds == 1 ? "" : "s", verdict);
    }
    if (n < 0) return false;
    if ((size_t)n >= sizeof line) n = (int)sizeof line - 1; /* snprintf cut it: append what it wrote */
    if (*len + (size_t)n + 1 > *cap) {
        size_t want = (*len + (size_t)n + 1) * 2;
        char *grown = realloc(*buf, want);
        if (!grown) return false;
        *buf = grown, *cap = want;
    }
    memcpy(*buf + *len, line, (size_t)n + 1);
    *len += (size_t)n;
    return true;
}

#define Q(exp, label, metric, mult, ratio) {exp, label, metric, "plain", mult, ratio, NULL}
#define QV(variant, mult) {"context-extension", "rope", "bpb", variant, mult, 0, NULL}
#define QM(field) {"article-claims", "sparse", RUN_FIELD field, "plain", 1, 0, NULL}
#define QF(variant, mult) {"context-extension", "rope", "bpb", variant, mult, 0, "finetuned"}

posenc_status lab_claims_markdown(const struct cJSON *runs, char **out, lab_claims_count *count, posenc_error *err) {
    static const claim claims[] = {
        {"ALiBi paper (Press et al. 2022) Table 2", "ALiBi stays flat past L (bpb at 8L within 5% of L)",
         Q("extrapolate", "alibi", "bpb", 8, 1), Q("extrapolate", "alibi", "bpb", 1, 1), 1.05, NULL, 0},
        {"ALiBi paper (Press et al. 2022) Table 2", "sinusoidal degrades past L (bpb at 2L more than 5% above L)",
         Q("extrapolate", "sinusoidal", "bpb", 1, 1), Q("extrapolate", "sinusoidal", "bpb", 2, 1), 1 / 1.05, NULL, 0},
        {"ALiBi paper (Press et al. 2022) Table 2", "rotary degrades more slowly than sinusoidal (at 4L)",
         Q("extrapolate", "rope", "bpb", 4, 1), Q("extrapolate", "sinusoidal", "bpb", 4, 1), 1, NULL, 0},
        {"ALiBi paper (Press et al. 2022) Table 2", "T5 bias extrapolates better than rotary (at 4L)", Q("extrapolate", "t5", "bpb", 4, 1),
         Q("extrapolate", "rope", "bpb", 4, 1), 1, NULL, 0},
        {"ALiBi paper (Press et al. 2022) Table 2", "ALiBi beats sinusoidal past L (at 2L)", Q("extrapolate", "alibi", "bpb", 2, 0),
         Q("extrapolate", "sinusoidal", "bpb", 2, 0), 1, NULL, 0},
        {"ALiBi paper (Press et al. 2022) Table 2", "ALiBi beats sinusoidal at 16L", Q("extrapolate", "alibi", "bpb", 16, 0),
         Q("extrapolate", "sinusoidal", "bpb", 16, 0), 1, NULL, 0},
        {"ALiBi paper (Press et al. 2022) Table 2", "ALiBi uses longer inputs (bpb at 16L below L on the same targets)",
         Q("extrapolate", "alibi", "bpb", 16, 0), Q("extrapolate", "alibi", "bpb", 1, 0), 1, NULL, 0},
        {"ALiBi paper (Press et al. 2022) section 5 (sliding window)", "ALiBi holds under sliding-window evaluation too (8L within 5% of L)",
         Q("extrapolate", "alibi", "bpb_sliding", 8, 1), Q("extrapolate", "alibi", "bpb_sliding", 1, 1), 1.05, NULL, 0},
        {"Chen et al. 2023 (PI)", "position interpolation beats no scaling at 4L without fine-tuning", QV("linear", 4),
         QV("none", 4), 1, NULL, 0},
        {"Peng et al. 2023 (YaRN)", "YaRN beats PI at 2L without fine-tuning", QV("yarn", 2), QV("linear", 2), 1, NULL, 0},
        {"Peng et al. 2023 (YaRN)", "NTK-aware scaling beats PI at 2L without fine-tuning", QV("ntk", 2), QV("linear", 2), 1, NULL, 0},
        {"Chen et al. 2023 (PI)", "a short fine-tune at 2L with PI recovers PI (at 2L, vs PI without fine-tuning)",
         QF("linear", 2), QV("linear", 2), 1, NULL, 0},
        {"Chen et al. 2023 (PI)", "PI + fine-tune is no worse at 2L than the model at L (the longer context is usable)",
         QF("linear", 2), QV("none", 1), 1, NULL, 0},
        /* issue 28: context extension judged on using the longer context. On the shared
           targets the windows view at 2L gives every target more context than at L, so a
           model that uses it scores lower at 2L than the unscaled model at L */
        {"Chen et al. 2023 (PI)", "PI without fine-tuning uses the longer context (bpb at 2L below the model's at L)",
         QV("linear", 2), QV("none", 1), 1, NULL, 0},
        {"bloc97 2023 (NTK-aware)", "NTK-aware scaling without fine-tuning uses the longer context (2L below L)", QV("ntk", 2),
         QV("none", 1), 1, NULL, 0},
        {"Peng et al. 2023 (YaRN)", "YaRN without fine-tuning uses the longer context (2L below L)", QV("yarn", 2),
         QV("none", 1), 1, NULL, 0},
        {"Meta 2024 (Llama 3 scaling)", "Llama 3 scaling without fine-tuning uses the longer context (2L below L)",
         QV("llama3", 2), QV("none", 1), 1, NULL, 0},
        {"bloc97 2023 (NTK-aware)", "NTK-aware scaling + fine-tune uses the longer context (2L below L)", QF("ntk", 2),
         QV("none", 1), 1, NULL, 0},
        {"Peng et al. 2023 (YaRN)", "YaRN + fine-tune uses the longer context (2L below L)", QF("yarn", 2), QV("none", 1), 1,
         NULL, 0},
        {"Meta 2024 (Llama 3 scaling)", "Llama 3 scaling + fine-tune uses the longer context (2L below L)", QF("llama3", 2),
         QV("none", 1), 1, NULL, 0},
        {"Chen et al. 2023 (PI)", "PI + fine-tune beats plain fine-tuning without scaling (at 4L, past the fine-tune length)",
         QF("linear", 4), QF("none", 4), 1, NULL, 0},
        {"Peng et al. 2023 (YaRN)", "YaRN + fine-tune beats PI + fine-tune (at 2L)", QF("yarn", 2), QF("linear", 2), 1, NULL, 0},
        {"source article 000, section 4.2", "fixed sinusoids suit extrapolation better than learned tables (at 4L)",
         Q("extrapolate", "sinusoidal", "bpb", 4, 0), Q("extrapolate", "learned", "bpb", 4, 0), 1, NULL, 0},
        {"source article 000, section 4.2", "learned tables do slightly better in distribution (at L)",
         Q("extrapolate", "learned", "bpb", 1, 0), Q("extrapolate", "sinusoidal", "bpb", 1, 0), 1, NULL, 0},
        {"Kazemnejad et al. 2023", "NoPE extrapolates better than sinusoidal (at 4L)", Q("extrapolate", "none", "bpb", 4, 0),
         Q("extrapolate", "sinusoidal", "bpb", 4, 0), 1, NULL, 0},
        {"source article 004, section 8.2", "sparse encoding keeps > 90% of the performance (bpb within 10% of sinusoidal at L)",
         Q("article-claims", "sparse", "bpb", 1, 0), Q("article-claims", "sinusoidal", "bpb", 1, 0), 1.10, NULL, 0},
        /* the memory half: the article's sentence follows the code of the encoding function,
           so its "memory" is the encoding's (the table); the second row asks what that is worth
           for the whole training step (docs/lab-experiments.md) */
        {"source article 004, section 8.2", "sparse encoding: the position table needs 60-70% (here: at least 60%) less memory than the dense table (cheapest layout)",
         QM("sparse_bytes"), QM("dense_bytes"), 0.40, "bytes", 0},
        {"source article 004, section 8.2", "the same in TensorFlow's own sparse tensor (the article's framework; int64 COO indices)",
         QM("coo64_bytes"), QM("dense_bytes"), 0.40, "bytes", 0},
        {"source article 004, section 8.2", "sparse encoding: the whole training step (parameters, gradients, AdamW, activations, table) needs at least 60% less memory",
         QM("training_bytes_sparse"), QM("training_bytes"), 0.40, "bytes", 0},
        {"source article 000, section 2", "the index baseline is worse than sinusoidal (at L)", Q("article-claims", "sinusoidal", "bpb", 1, 0),
         Q("article-claims", "index", "bpb", 1, 0), 1, NULL, 0},
        {"source article 000, section 2", "the normalized baseline is worse than sinusoidal past L (at 2L)",
         Q("article-claims", "sinusoidal", "bpb", 2, 0), Q("article-claims", "normalized", "bpb", 2, 0), 1, NULL, 0},
        {"source article 004, section 5.1", "hybrid (learned + fixed) is no worse than sinusoidal at L",
         Q("article-claims", "hybrid", "bpb", 1, 0), Q("article-claims", "sinusoidal", "bpb", 1, 0), 1.01, NULL, 0},
        {"source article 004, section 8.1", "the GRU encoding beats plain sinusoidal at L", Q("article-claims", "gru", "bpb", 1, 0),
         Q("article-claims", "sinusoidal", "bpb", 1, 0), 1, NULL, 0},
        /* the claim is that sigma 1 fails to train: a sigma-1 run at the unigram level is its evidence */
        {"source article 000, section 5.2", "init sigma 0.02 trains better than sigma 1", Q("integration", "learned-sigma0.02", "bpb", 1, 0),
         Q("integration", "learned-sigma1", "bpb", 1, 0), 1, NULL, 1},
        {"source article 004, section 3", "concat beats add for a small (character-level) model", Q("integration", "concat-proj-d64", "bpb", 1, 0),
         Q("integration", "add-d64", "bpb", 1, 0), 1, NULL, 0},
        {"source article 004, section 3", "... also against the add that trains (token x sqrt(d)), d 64 at L",
         Q("integration", "concat-proj-d64", "bpb", 1, 0), Q("integration", "add-sqrt-d-d64", "bpb", 1, 0), 1, NULL, 0},
        {"source article 004, section 3", "... also against the add that trains (token x sqrt(d)), d 128 at L",
         Q("integration", "concat-proj-d128", "bpb", 1, 0), Q("integration", "add-sqrt-d-d128", "bpb", 1, 0), 1, NULL, 0},
    };
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    if (!buf) return lab_exp_fail(err, POSENC_ERR_OUT_OF_MEMORY, "out of memory for the claims table");
    len = (size_t)snprintf(buf, cap, "| source | claim | measured (bits per byte unless bytes; min..max over seeds; paired ratio with its 95%% interval over seeds and target spans) | verdict at this scale (rules: docs/lab-experiments.md) |\n|---|---|---|---|\n");
    lab_claims_count tally = {0, 0, 0, 0};
    for (int measured = 1; measured >= 0; measured--)
        for (size_t i = 0; i < sizeof claims / sizeof *claims; i++)
            if (!row((cJSON *)runs, &claims[i], measured, &tally, &buf, &len, &cap)) {
                free(buf);
                return lab_exp_fail(err, POSENC_ERR_OUT_OF_MEMORY, "out of memory for the claims table");
            }
    *out = buf;
    if (count) *count = tally;
    return POSENC_OK;
}
