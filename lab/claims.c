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
#define STR_(x) #x
#define STR(x) STR_(x)
    if (seeds < LAB_CLAIM_MIN_SEEDS) return "inconclusive (fewer than " STR(LAB_CLAIM_MIN_SEEDS) " seeds)";
    if (hi < threshold) return "supported";
    if (lo > threshold) return "contradicted";
    return "inconclusive (interval spans the threshold)";
}

/* Regularized incomplete beta I_x(a, b) by its continued fraction (modified Lentz),
 * on the side where it converges fast; |error| < 1e-12 for the t tail below. */
static double beta_cf(double a, double b, double x) {
    const double tiny = 1e-300;
    double c = 1, d = 1 - (a + b) * x / (a + 1);
    d = fabs(d) < tiny ? tiny : d;
    d = 1 / d;
    double h = d;
    for (int m = 1; m <= 300; m++) {
        double m2 = 2.0 * m, aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
        d = 1 + aa * d, d = fabs(d) < tiny ? tiny : d, c = 1 + aa / c, c = fabs(c) < tiny ? tiny : c, d = 1 / d, h *= d * c;
        aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
        d = 1 + aa * d, d = fabs(d) < tiny ? tiny : d, c = 1 + aa / c, c = fabs(c) < tiny ? tiny : c, d = 1 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1) < 1e-15) break;
    }
    return h;
}
static double incomplete_beta(double a, double b, double x) {
    if (x <= 0) return 0;
    if (x >= 1) return 1;
    double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
    if (x < (a + 1) / (a + b + 2)) return front * beta_cf(a, b, x) / a;
    return 1 - front * beta_cf(b, a, 1 - x) / b;
}

double lab_t_two_sided_p(double t, int df) {
    if (df < 1 || isnan(t)) return NAN;
    if (isinf(t)) return 0;
    /* P(|T| > |t|) = I_{df / (df + t^2)}(df / 2, 1 / 2) */
    return incomplete_beta(df / 2.0, 0.5, df / (df + t * t));
}

double lab_claim_p(const double *ratio, const double *se_doc, int n, double threshold) {
    if (n < 2) return NAN;
    double m = 0, var = 0, doc = 0;
    for (int i = 0; i < n; i++) m += ratio[i] / n;
    for (int i = 0; i < n; i++) var += (ratio[i] - m) * (ratio[i] - m);
    for (int i = 0; i < n; i++) doc += (se_doc ? se_doc[i] * se_doc[i] : 0) / n;
    double se = sqrt(var / (n - 1) / n + doc);
    if (se == 0) return m == threshold ? 1 : 0; /* no spread (a deterministic quantity): exact */
    return lab_t_two_sided_p((m - threshold) / se, n - 1);
}

void lab_holm(const double *p, int n, double *adjusted) {
    /* order the finite p-values; the i-th smallest (0-based) of m gets max over j <= i of (m - j) p_(j), capped at 1 */
    int m = 0;
    for (int i = 0; i < n; i++) {
        adjusted[i] = NAN;
        m += isfinite(p[i]);
    }
    double running = 0;
    for (int rank = 0; rank < m; rank++) {
        int pick = -1; /* the smallest p not yet adjusted (ties: the first) */
        for (int i = 0; i < n; i++)
            if (isfinite(p[i]) && isnan(adjusted[i]) && (pick < 0 || p[i] < p[pick])) pick = i;
        double v = (m - rank) * p[pick];
        running = fmax(running, v > 1 ? 1 : v);
        adjusted[pick] = running;
    }
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
    if (strcmp(metric, "bpb_context") == 0) { /* the context-use curve (experiments.c): c = multiple x L */
        const cJSON *cu = cJSON_GetObjectItem(run, "context_use"), *c;
        int at = 0;
        cJSON_ArrayForEach(c, cJSON_GetObjectItem(cu, "c")) {
            if (cJSON_IsNumber(c) && fabs(c->valuedouble - multiple * L) < 0.5) {
                if (skip < 0) {
                    const cJSON *v = cJSON_GetArrayItem(cJSON_GetObjectItem(cu, "bpb"), at);
                    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
                }
                const cJSON *docs = cJSON_GetArrayItem(cJSON_GetObjectItem(cu, "bpb_docs"), at), *d;
                double sum = 0;
                int count = 0, k = 0;
                cJSON_ArrayForEach(d, docs) {
                    if (!cJSON_IsNumber(d)) return NAN;
                    if (k++ != skip) sum += d->valuedouble, count++;
                }
                return count > 0 && skip < k ? sum / count : NAN;
            }
            at++;
        }
        return NAN;
    }
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
    if (strcmp(metric, "bpb_context") == 0) {
        const cJSON *first = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(run, "context_use"), "bpb_docs"), 0);
        return cJSON_IsArray(first) ? cJSON_GetArraySize(first) : 0;
    }
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
                                                                              strcmp(e->valuestring, "demo") == 0 ||
                                                                              strncmp(e->valuestring, "headline", 8) == 0)) ||
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
    int waive_b; /* the unigram rule for the second quantity: 0 applies (at L and the compared length);
                    1 waived (the claim is that it does not train); 2 at L only (the claim is that it degrades) */
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

/* Does this run sit at the unigram level: bits per byte above (1 - LAB_UNIGRAM_FRACTION)
 * x its own unigram_bpb on the same targets, at L (windows view, as trained, the
 * quantity's variant, else "plain") or at the length the quantity compares (its metric
 * there and at L: every view and every context scores the same targets, issue 42)?
 * at_length 0: only L is checked (the claim is that this side degrades past L).
 * -1: not known (older lines). */
static int unigram_level(const cJSON *run, const quantity *q, int at_length) {
    const cJSON *u = cJSON_GetObjectItem(run, "unigram_bpb");
    double at_L = metric_at(run, "bpb", 1, q->variant, NULL, -1);
    if (!isfinite(at_L)) at_L = metric_at(run, "bpb", 1, "plain", NULL, -1);
    if (!cJSON_IsNumber(u) || !isfinite(at_L)) return -1;
    double level = (1 - LAB_UNIGRAM_FRACTION) * u->valuedouble;
    int at = at_L > level;
    if (at_length && strncmp(q->metric, RUN_FIELD, strlen(RUN_FIELD)) != 0) {
        double there = metric_at(run, q->metric, q->multiple, q->variant, q->phase, -1);
        double base = metric_at(run, q->metric, 1, q->variant, q->phase, -1);
        at |= (isfinite(there) && there > level) || (isfinite(base) && base > level);
    }
    return at;
}

/* Does this run still gain from context at L (its context_use, experiments.c)? 1, 0, or
 * -1 when the line has no context curve. */
static int gains_at_L(const cJSON *run) {
    const cJSON *g = cJSON_GetObjectItem(cJSON_GetObjectItem(run, "context_use"), "gains_at_L");
    return cJSON_IsBool(g) ? cJSON_IsTrue(g) : -1;
}

/* The change a quantity measures, in bits per byte: its value at the multiple, less its
 * value at L when it is a ratio to L (NaN for run-level fields). */
static double delta_bpb(const cJSON *run, const quantity *q) {
    if (strncmp(q->metric, RUN_FIELD, strlen(RUN_FIELD)) == 0) return NAN;
    double v = metric_at(run, q->metric, q->multiple, q->variant, q->phase, -1);
    return q->ratio_to_L ? v - metric_at(run, q->metric, 1, q->variant, q->phase, -1) : v;
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

/* Is this claim about behaviour past the training length (either side at a multiple > 1)? */
static bool past_L(const claim *c) {
    bool field = strncmp(c->a.metric, RUN_FIELD, strlen(RUN_FIELD)) == 0;
    return !field && (c->a.multiple > 1 || c->b.multiple > 1);
}

/* What the runs say about one claim, before the multiplicity adjustment. */
typedef struct {
    int seeds;
    bool at_unigram;
    int no_gain_at_L; /* 1: a side's model does not gain from context at L; -1: not measured; 0: it does */
    double mean, lo, hi, p, p_holm;
    int effects;
    double effect, effect_lo, effect_hi; /* first - second, bits per byte, over the seeds */
    double lo_a, hi_a, lo_b, hi_b, lo_ratio, hi_ratio;
    bool tested; /* in the family the adjustment counts */
} claim_stats;

static void measure(const cJSON *runs, const claim *c, claim_stats *out) {
    double ratio[100], se_doc[100], effect[100];
    memset(out, 0, sizeof *out);
    out->lo_a = out->lo_b = out->lo_ratio = INFINITY;
    out->hi_a = out->hi_b = out->hi_ratio = -INFINITY;
    out->mean = out->lo = out->hi = out->p = out->p_holm = NAN;
    double ua = 0, ub = 0, ga = 0, gb = 0;
    int ka = 0, kb = 0, na = 0, nb = 0, seeds = 0, effects = 0;
    bool field = strncmp(c->a.metric, RUN_FIELD, strlen(RUN_FIELD)) == 0;
    for (int seed = 1; seed <= 100; seed++) {
        const cJSON *ra = find_run(runs, c->a.experiment, c->a.label, seed);
        const cJSON *rb = find_run(runs, c->b.experiment, c->b.label, seed);
        if (!ra || !rb) continue;
        double a = quantity_of(ra, &c->a, -1), b = quantity_of(rb, &c->b, -1);
        if (!isfinite(a) || !isfinite(b) || b == 0) continue;
        ratio[seeds] = a / b;
        se_doc[seeds] = jackknife_se(ra, rb, c);
        seeds++;
        out->lo_a = fmin(out->lo_a, a), out->hi_a = fmax(out->hi_a, a);
        out->lo_b = fmin(out->lo_b, b), out->hi_b = fmax(out->hi_b, b);
        out->lo_ratio = fmin(out->lo_ratio, a / b), out->hi_ratio = fmax(out->hi_ratio, a / b);
        double e = delta_bpb(ra, &c->a) - delta_bpb(rb, &c->b);
        if (isfinite(e)) effect[effects++] = e;
        if (!field) {
            int la = unigram_level(ra, &c->a, 1), lb = c->waive_b == 1 ? -1 : unigram_level(rb, &c->b, c->waive_b != 2);
            if (la >= 0) ua += la, ka++;
            if (lb >= 0) ub += lb, kb++;
        }
        if (past_L(c)) {
            int g1 = gains_at_L(ra), g2 = gains_at_L(rb);
            if (g1 >= 0) ga += g1, na++;
            if (g2 >= 0) gb += g2, nb++;
        }
    }
    out->seeds = seeds;
    /* a side is at the unigram level (or does not gain at L) when most of its seeds are (do not) */
    out->at_unigram = (ka > 0 && 2 * ua > ka) || (kb > 0 && 2 * ub > kb);
    out->no_gain_at_L = !past_L(c) || seeds == 0 ? 0 : (na == 0 || nb == 0) ? -1 : (2 * ga < na || 2 * gb < nb);
    if (seeds > 0) lab_claim_interval(ratio, se_doc, seeds, &out->mean, &out->lo, &out->hi);
    out->p = lab_claim_p(ratio, se_doc, seeds, c->factor);
    out->effects = effects;
    if (effects > 0) {
        double m = 0, var = 0;
        for (int i = 0; i < effects; i++) m += effect[i] / effects;
        for (int i = 0; i < effects; i++) var += (effect[i] - m) * (effect[i] - m);
        double half = effects > 1 ? lab_t975(effects - 1) * sqrt(var / (effects - 1) / effects) : INFINITY;
        out->effect = m, out->effect_lo = m - half, out->effect_hi = m + half;
    }
    out->tested = seeds >= LAB_CLAIM_MIN_SEEDS && !out->at_unigram && out->no_gain_at_L == 0 && isfinite(out->p);
}

/* The verdict after the adjustment (docs/lab-experiments.md "Verdicts"). */
static const char *final_verdict(const claim_stats *st, const claim *c, char *buf, size_t size) {
    const char *base = lab_claim_verdict(st->seeds, st->lo, st->hi, c->factor, st->at_unigram);
    if (st->seeds == 0 || st->at_unigram || st->seeds < LAB_CLAIM_MIN_SEEDS) return base;
    if (st->no_gain_at_L == -1) return "inconclusive (context use at L not measured: a past-L claim needs it)";
    if (st->no_gain_at_L == 1) return "inconclusive (a model does not gain from context at L: nothing to extrapolate)";
    if (!(st->p_holm < LAB_CLAIM_ALPHA)) {
        snprintf(buf, size, "inconclusive (Holm-adjusted p = %.3g)", st->p_holm);
        return buf;
    }
    return st->mean < c->factor ? "supported" : "contradicted";
}

/* Append the claim's row if these runs measured it (measured) or did not (!measured), so
 * the table shows what the runs say before what they leave for other experiments; false
 * when out of memory (the table would silently lack it). */
static bool row(const claim *c, const claim_stats *st, int family, bool measured, lab_claims_count *count, char **buf,
                size_t *len, size_t *cap) {
    int seeds = st->seeds;
    if ((seeds > 0) != measured) return true;
    char why[96];
    const char *verdict = final_verdict(st, c, why, sizeof why);
    count->rows++;
    count->measured += seeds > 0;
    count->supported += strcmp(verdict, "supported") == 0;
    count->contradicted += strcmp(verdict, "contradicted") == 0;
    char line[1800], interval[200], effect[160] = "", test[120] = "";
    int n;
    if (seeds > 1)
        snprintf(interval, sizeof interval, "paired ratio first/second = %.4f, 95%% CI [%.4f, %.4f]", st->mean, st->lo, st->hi);
    else if (seeds == 1)
        snprintf(interval, sizeof interval, "paired ratio first/second = %.4f (one seed: no interval)", st->mean);
    if (st->effects > 1)
        snprintf(effect, sizeof effect, "; effect first - second = %+.4f bpb, 95%% CI [%+.4f, %+.4f]", st->effect,
                 st->effect_lo, st->effect_hi);
    if (st->tested) snprintf(test, sizeof test, "; p = %.2g, Holm-adjusted over %d claims p = %.2g", st->p, family, st->p_holm);
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
                         "| %s | %s | %s = %.0f..%.0f %s; %s = %.0f..%.0f %s (%.1f..%.1f%% less); %s%s; claim holds if the ratio < %.2f; %d seed%s | %s |\n",
                         c->source, c->claim, qa, st->lo_a, st->hi_a, c->evidence_unit, qb, st->lo_b, st->hi_b,
                         c->evidence_unit, 100 * (1 - st->hi_ratio), 100 * (1 - st->lo_ratio), interval, test, c->factor,
                         seeds, seeds == 1 ? "" : "s", verdict);
        else
            n = snprintf(line, sizeof line, "| %s | %s | %s = %.3f..%.3f; %s = %.3f..%.3f; %s%s%s; claim holds if the ratio < %.2f; %d seed%s | %s |\n",
                         c->source, c->claim, qa, st->lo_a, st->hi_a, qb, st->lo_b, st->hi_b, interval, effect, test,
                         c->factor, seeds, seeds == 1 ? "" : "s", verdict);
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
#define QS(variant, mult) {"context-extension", "rope", "bpb_sliding", variant, mult, 0, NULL}
#define QFS(variant, mult) {"context-extension", "rope", "bpb_sliding", variant, mult, 0, "finetuned"}

/* The claim list itself (lab claims --list; docs/lab-experiments.md "The claim list",
 * fixed before the runs): one markdown row per claim with its quantities, threshold
 * and which rules gate it. */
static posenc_status claims_list(const claim *claims, size_t n, char **out, posenc_error *err) {
    size_t cap = 512 + n * 600, len = 0;
    char *buf = malloc(cap);
    if (!buf) return lab_exp_fail(err, POSENC_ERR_OUT_OF_MEMORY, "out of memory for the claim list");
    len += (size_t)snprintf(buf + len, cap - len, "| # | source | claim | first | second | holds if first/second < | gates |\n|---|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < n; i++) {
        char qa[128], qb[128];
        describe(&claims[i].a, qa, sizeof qa);
        describe(&claims[i].b, qb, sizeof qb);
        bool field = strncmp(claims[i].a.metric, RUN_FIELD, strlen(RUN_FIELD)) == 0;
        const char *unigram = field ? "none (bytes)"
                              : claims[i].waive_b == 1 ? "unigram (first only)"
                              : claims[i].waive_b == 2 ? "unigram (second at L only)"
                                                       : "unigram (both, every compared length)";
        len += (size_t)snprintf(buf + len, cap - len, "| %zu | %s | %s | %s | %s | %.4g | %s%s |\n", i + 1, claims[i].source,
                                claims[i].claim, qa, qb, claims[i].factor, unigram,
                                past_L(&claims[i]) ? "; gains at L" : "");
    }
    *out = buf;
    return POSENC_OK;
}

posenc_status lab_claims_markdown(const struct cJSON *runs, char **out, lab_claims_count *count, posenc_error *err) {
    return lab_claims_table(runs, 0, out, count, err);
}

posenc_status lab_claims_table(const struct cJSON *runs, int list, char **out, lab_claims_count *count, posenc_error *err) {
    static const claim claims[] = {
        {"ALiBi paper (Press et al. 2022) Table 2", "ALiBi stays flat past L (bpb at 8L within 5% of L)",
         Q("extrapolate", "alibi", "bpb", 8, 1), Q("extrapolate", "alibi", "bpb", 1, 1), 1.05, NULL, 0},
        {"ALiBi paper (Press et al. 2022) Table 2", "sinusoidal degrades past L (bpb at 2L more than 5% above L)",
         Q("extrapolate", "sinusoidal", "bpb", 1, 1), Q("extrapolate", "sinusoidal", "bpb", 2, 1), 1 / 1.05, NULL, 2},
        {"ALiBi paper (Press et al. 2022) Table 2", "rotary degrades more slowly than sinusoidal (at 4L)",
         Q("extrapolate", "rope", "bpb", 4, 1), Q("extrapolate", "sinusoidal", "bpb", 4, 1), 1, NULL, 2},
        {"ALiBi paper (Press et al. 2022) Table 2", "T5 bias extrapolates better than rotary (at 4L)", Q("extrapolate", "t5", "bpb", 4, 1),
         Q("extrapolate", "rope", "bpb", 4, 1), 1, NULL, 0},
        {"ALiBi paper (Press et al. 2022) Table 2", "ALiBi beats sinusoidal past L (at 2L)", Q("extrapolate", "alibi", "bpb", 2, 0),
         Q("extrapolate", "sinusoidal", "bpb", 2, 0), 1, NULL, 0},
        {"ALiBi paper (Press et al. 2022) Table 2", "ALiBi beats sinusoidal at 16L", Q("extrapolate", "alibi", "bpb", 16, 0),
         Q("extrapolate", "sinusoidal", "bpb", 16, 0), 1, NULL, 0},
        {"ALiBi paper (Press et al. 2022) Table 2", "ALiBi uses longer inputs (the same targets with exactly 16L bytes of context score below exactly L: no gain = ratio 1)",
         Q("extrapolate", "alibi", "bpb_context", 16, 0), Q("extrapolate", "alibi", "bpb_context", 1, 0), 1, NULL, 0},
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
        {"Chen et al. 2023 (PI)", "PI without fine-tuning uses the longer context (sliding view: 2L below the model's L; no gain = ratio 1)",
         QS("linear", 2), QS("none", 1), 1, NULL, 0},
        {"bloc97 2023 (NTK-aware)", "NTK-aware scaling without fine-tuning uses the longer context (sliding view, 2L below L)", QS("ntk", 2),
         QS("none", 1), 1, NULL, 0},
        {"Peng et al. 2023 (YaRN)", "YaRN without fine-tuning uses the longer context (sliding view, 2L below L)", QS("yarn", 2),
         QS("none", 1), 1, NULL, 0},
        {"Meta 2024 (Llama 3 scaling)", "Llama 3 scaling without fine-tuning uses the longer context (sliding view, 2L below L)",
         QS("llama3", 2), QS("none", 1), 1, NULL, 0},
        {"bloc97 2023 (NTK-aware)", "NTK-aware scaling + fine-tune uses the longer context (sliding view, 2L below L)", QFS("ntk", 2),
         QS("none", 1), 1, NULL, 0},
        {"Peng et al. 2023 (YaRN)", "YaRN + fine-tune uses the longer context (sliding view, 2L below L)", QFS("yarn", 2), QS("none", 1), 1,
         NULL, 0},
        {"Meta 2024 (Llama 3 scaling)", "Llama 3 scaling + fine-tune uses the longer context (sliding view, 2L below L)", QFS("llama3", 2),
         QS("none", 1), 1, NULL, 0},
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
         QM("sparse_bytes_expected"), QM("dense_bytes"), 0.40, "bytes", 0},
        {"source article 004, section 8.2", "the same in TensorFlow's own sparse tensor (the article's framework; int64 COO indices)",
         QM("coo64_bytes_expected"), QM("dense_bytes"), 0.40, "bytes", 0},
        {"source article 004, section 8.2", "sparse encoding: the whole training step (parameters, gradients, AdamW, activations, table) needs at least 60% less memory",
         QM("training_bytes_sparse_expected"), QM("training_bytes"), 0.40, "bytes", 0},
        {"source article 000, section 2", "the index baseline is worse than sinusoidal (at L)", Q("article-claims", "sinusoidal", "bpb", 1, 0),
         Q("article-claims", "index", "bpb", 1, 0), 1, NULL, 0},
        {"source article 000, section 2", "the normalized baseline is worse than sinusoidal past L (at 2L)",
         Q("article-claims", "sinusoidal", "bpb", 2, 0), Q("article-claims", "normalized", "bpb", 2, 0), 1, NULL, 2},
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
    size_t n_claims = sizeof claims / sizeof *claims;
    if (list) return claims_list(claims, n_claims, out, err);
    claim_stats stats[sizeof claims / sizeof *claims];
    double p[sizeof claims / sizeof *claims], adjusted[sizeof claims / sizeof *claims];
    int family = 0;
    for (size_t i = 0; i < n_claims; i++) {
        measure(runs, &claims[i], &stats[i]);
        p[i] = stats[i].tested ? stats[i].p : NAN;
        family += stats[i].tested;
    }
    /* Holm over every claim that reached the test (measured with enough seeds, no run at
       the unigram level, every past-L model gaining at L): family-wise error <= 5% */
    lab_holm(p, (int)n_claims, adjusted);
    for (size_t i = 0; i < n_claims; i++) stats[i].p_holm = adjusted[i];
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    if (!buf) return lab_exp_fail(err, POSENC_ERR_OUT_OF_MEMORY, "out of memory for the claims table");
    len = (size_t)snprintf(buf, cap, "| source | claim | measured (bits per byte unless bytes; min..max over seeds; paired ratio with its 95%% interval over seeds and target spans; effect in bits per byte; p and Holm-adjusted p) | verdict at this scale (rules: docs/lab-experiments.md) |\n|---|---|---|---|\n");
    lab_claims_count tally = {0, 0, 0, 0, family};
    for (int measured = 1; measured >= 0; measured--)
        for (size_t i = 0; i < n_claims; i++)
            if (!row(&claims[i], &stats[i], family, measured, &tally, &buf, &len, &cap)) {
                free(buf);
                return lab_exp_fail(err, POSENC_ERR_OUT_OF_MEMORY, "out of memory for the claims table");
            }
    *out = buf;
    if (count) *count = tally;
    return POSENC_OK;
}
