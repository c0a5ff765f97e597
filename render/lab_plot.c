/* lab_plot.c: the pictures of `posenc lab plot` and the report's "Measured here":
 * metric vs evaluation length (log x, one line per configuration, min-max band over
 * seeds) or training curves, as SVG or PNG (the command: cli/lab/cmd_lab_plot.c). */
#include "render.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SERIES 48
#define DASH_STYLES 5 /* x 10 palette colours >= MAX_SERIES */
_Static_assert(DASH_STYLES * 10 >= MAX_SERIES, "every series needs its own colour and dash");
#define MAX_POINTS 64

typedef struct {
    char name[96];
    double x[MAX_POINTS], lo[MAX_POINTS], hi[MAX_POINTS], sum[MAX_POINTS];
    int n[MAX_POINTS], count;
} series;

/* false when the series already has MAX_POINTS distinct x values (the caller refuses:
 * a point left out silently would draw a wrong line) */
static bool add_point(series *s, double x, double y) {
    int i = 0;
    while (i < s->count && s->x[i] != x) i++;
    if (i == s->count) {
        if (s->count == MAX_POINTS) return false;
        s->count++;
        s->x[i] = x, s->lo[i] = y, s->hi[i] = y, s->sum[i] = 0, s->n[i] = 0;
    }
    if (y < s->lo[i]) s->lo[i] = y;
    if (y > s->hi[i]) s->hi[i] = y;
    s->sum[i] += y;
    s->n[i]++;
    return true;
}

static series *find_series(series *all, int *count, const char *name) {
    for (int i = 0; i < *count; i++)
        if (strcmp(all[i].name, name) == 0) return &all[i];
    if (*count == MAX_SERIES) return NULL;
    series *s = &all[(*count)++];
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    return s;
}

static void sort_points(series *s) {
    for (int i = 1; i < s->count; i++)
        for (int j = i; j > 0 && s->x[j - 1] > s->x[j]; j--) {
            double t;
            int k;
#define SWAP(a) (t = a[j], a[j] = a[j - 1], a[j - 1] = t)
            SWAP(s->x), SWAP(s->lo), SWAP(s->hi), SWAP(s->sum);
#undef SWAP
            k = s->n[j], s->n[j] = s->n[j - 1], s->n[j - 1] = k;
        }
}

static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                      "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

static void draw(cli_buffer *b, series *all, int count, const char *title, const char *xlabel, const char *ylabel, bool log_x) {
    const double W = 760, H = 440, L = 70, R = 190, T = 40, B = 50;
    double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
    for (int s = 0; s < count; s++)
        for (int i = 0; i < all[s].count; i++) {
            double x = log_x ? log2(all[s].x[i]) : all[s].x[i];
            x0 = fmin(x0, x), x1 = fmax(x1, x), y0 = fmin(y0, all[s].lo[i]), y1 = fmax(y1, all[s].hi[i]);
        }
    if (!(x1 > x0)) x1 = x0 + 1;
    if (!(y1 > y0)) y1 = y0 + 1;
    double pad = 0.05 * (y1 - y0);
    y0 -= pad, y1 += pad;
#define PX(v) (L + ((log_x ? log2(v) : (v)) - x0) / (x1 - x0) * (W - L - R))
#define PY(v) (H - B - ((v) - y0) / (y1 - y0) * (H - T - B))
    cli_buffer_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"12\">\n", W, H, W, H);
    cli_buffer_printf(b, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n<text x=\"%.0f\" y=\"22\" font-size=\"15\">", L);
    cli_buffer_escape(b, title);
    cli_buffer_printf(b, "</text>\n<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" stroke=\"#444\"/>\n", L, T, W - L - R, H - T - B);
    for (int k = 0; k <= 5; k++) {
        double v = y0 + (y1 - y0) * k / 5;
        cli_buffer_printf(b, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.3g</text>\n",
                          L, W - R, PY(v), PY(v), L - 6, PY(v) + 4, v);
    }
    if (count > 0)
        for (int i = 0; i < all[0].count; i++)
            cli_buffer_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n", PX(all[0].x[i]), H - B + 16, all[0].x[i]);
    cli_buffer_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", L + (W - L - R) / 2, H - 12);
    cli_buffer_escape(b, xlabel);
    cli_buffer_printf(b, "</text>\n<text transform=\"translate(16 %.1f) rotate(-90)\" text-anchor=\"middle\">", T + (H - T - B) / 2);
    cli_buffer_escape(b, ylabel);
    cli_buffer_puts(b, "</text>\n");
    for (int s = 0; s < count; s++) {
        const series *e = &all[s];
        const char *color = palette[s % 10];
        cli_buffer_printf(b, "<polygon fill=\"%s\" fill-opacity=\"0.15\" stroke=\"none\" points=\"", color);
        for (int i = 0; i < e->count; i++) cli_buffer_printf(b, "%.1f,%.1f ", PX(e->x[i]), PY(e->hi[i]));
        for (int i = e->count - 1; i >= 0; i--) cli_buffer_printf(b, "%.1f,%.1f ", PX(e->x[i]), PY(e->lo[i]));
        /* series 10-19, 20-29, ... share colours with 0-9: dashed, dotted, dash-dot, long
           dashes (five styles x ten colours: each of the MAX_SERIES distinct) */
        static const char *const dashes[DASH_STYLES] = {"", " stroke-dasharray=\"7 4\"", " stroke-dasharray=\"2 3\"",
                                                        " stroke-dasharray=\"7 3 2 3\"", " stroke-dasharray=\"14 4\""};
        const char *dash = dashes[s / 10];
        cli_buffer_printf(b, "\"/>\n<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"", color, dash);
        for (int i = 0; i < e->count; i++) cli_buffer_printf(b, "%.1f,%.1f ", PX(e->x[i]), PY(e->sum[i] / e->n[i]));
        cli_buffer_printf(b, "\"/>\n<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.0f\" y2=\"%.0f\" stroke=\"%s\" stroke-width=\"3\"%s/><text x=\"%.0f\" y=\"%.0f\">",
                          W - R + 12, W - R + 32, T + 10 + 18.0 * s, T + 10 + 18.0 * s, color, dash, W - R + 38, T + 14 + 18.0 * s);
        cli_buffer_escape(b, e->name);
        cli_buffer_puts(b, "</text>\n");
    }
#undef PX
#undef PY
    cli_buffer_puts(b, "</svg>\n");
}

/* What one picture shows: the series (mean, min, max per x) and its words. */
typedef struct {
    series *all;
    int count;
    bool curve;
    char title[160];
    const char *xlabel, *ylabel;
} lab_plot;

static void lab_plot_free(lab_plot *p) {
    free(p->all);
    p->all = NULL;
}

/* The plot of runs (as cli_lab_read_results gives them; path names them in
 * messages) into *out (EXIT_* code, message printed). */
static int load_plot(const char *command, const struct cJSON *runs, const char *path, const char *only, const char *metric,
                     lab_plot *out) {
    memset(out, 0, sizeof *out);
    bool curve = strcmp(metric, "curve") == 0, by_context = strcmp(metric, "by_context") == 0;
    bool context = strcmp(metric, "context") == 0;
    bool heads = strcmp(metric, "entropy") == 0 || strcmp(metric, "distance") == 0;
    if (!curve && !by_context && !context && !heads && strcmp(metric, "bpb") && strcmp(metric, "bpb_sliding") &&
        strcmp(metric, "accuracy") && strcmp(metric, "answer_bits") && strcmp(metric, "passkey_accuracy") &&
        strcmp(metric, "passkey_bits"))
        return cli_fail(command, EXIT_USAGE, NULL,
                        "--metric must be bpb, bpb_sliding, accuracy, answer_bits, passkey_accuracy, passkey_bits, curve, "
                        "by_context, context, entropy or distance, got '%s'", metric);
    series *all = calloc(MAX_SERIES, sizeof *all);
    if (!all) return cli_fail(command, EXIT_RUNTIME, NULL, "out of memory reading %s", path);
    int count = 0, index = 0;
    const cJSON *run;
    cJSON_ArrayForEach(run, runs) {
        index++;
        /* as merge and claims do: a run needs only its id; without a label it is
           drawn under its id, without an experiment it matches no --experiment */
        const cJSON *label = cJSON_GetObjectItem(run, "label"), *exp = cJSON_GetObjectItem(run, "experiment");
        if (!cJSON_IsString(label)) label = cJSON_GetObjectItem(run, "id");
        if (only && (!cJSON_IsString(exp) || strcmp(only, exp->valuestring) != 0)) continue;
        const cJSON *e;
        if (curve) {
            series *s = find_series(all, &count, label->valuestring);
            if (!s) goto too_many_series;
            cJSON_ArrayForEach(e, cJSON_GetObjectItem(run, "curve")) {
                const cJSON *x = cJSON_GetObjectItem(e, "step"), *y = cJSON_GetObjectItem(e, "bpb");
                if (cJSON_IsNumber(x) && cJSON_IsNumber(y) && !add_point(s, x->valuedouble, y->valuedouble)) goto too_many_points;
            }
        } else if (heads) { /* x = head number, layer by layer (1-based); one line per length */
            cJSON_ArrayForEach(e, cJSON_GetObjectItem(run, "attention")) {
                const cJSON *len = cJSON_GetObjectItem(e, "length"), *layer;
                if (!cJSON_IsNumber(len)) continue;
                char name[96];
                snprintf(name, sizeof name, "%s @%g", label->valuestring, len->valuedouble);
                series *s = find_series(all, &count, name);
                if (!s) goto too_many_series;
                int k = 0;
                cJSON_ArrayForEach(layer, cJSON_GetObjectItem(e, metric)) {
                    const cJSON *h;
                    cJSON_ArrayForEach(h, layer) {
                        k++;
                        if (cJSON_IsNumber(h) && !add_point(s, k, h->valuedouble)) goto too_many_points;
                    }
                }
            }
        } else if (context) { /* the context-use curve: bpb of the same targets at exactly c bytes of context */
            const cJSON *cu = cJSON_GetObjectItem(run, "context_use"), *c;
            series *s = find_series(all, &count, label->valuestring);
            if (!s) goto too_many_series;
            int at = 0;
            cJSON_ArrayForEach(c, cJSON_GetObjectItem(cu, "c")) {
                const cJSON *y = cJSON_GetArrayItem(cJSON_GetObjectItem(cu, "bpb"), at++);
                if (cJSON_IsNumber(c) && c->valuedouble > 0 && cJSON_IsNumber(y) && !add_point(s, c->valuedouble, y->valuedouble))
                    goto too_many_points;
            }
        } else if (by_context) { /* the row at the run's longest length; x = the bucket's mean context */
            double longest = 0;
            cJSON_ArrayForEach(e, cJSON_GetObjectItem(run, "evals")) {
                const cJSON *len = cJSON_GetObjectItem(e, "length");
                if (cJSON_IsNumber(len) && cJSON_IsArray(cJSON_GetObjectItem(e, "bpb_by_context")) && len->valuedouble > longest)
                    longest = len->valuedouble;
            }
            cJSON_ArrayForEach(e, cJSON_GetObjectItem(run, "evals")) {
                const cJSON *len = cJSON_GetObjectItem(e, "length"), *v = cJSON_GetObjectItem(e, "variant"),
                            *ph = cJSON_GetObjectItem(e, "phase"), *curve_at = cJSON_GetObjectItem(e, "bpb_by_context"), *y;
                if (!cJSON_IsNumber(len) || len->valuedouble != longest || !cJSON_IsString(v) || !cJSON_IsString(ph) ||
                    !cJSON_IsArray(curve_at))
                    continue;
                char name[96];
                snprintf(name, sizeof name, "%s%s%s%s @%g", label->valuestring, strcmp(v->valuestring, "plain") ? " " : "",
                         strcmp(v->valuestring, "plain") ? v->valuestring : "", strcmp(ph->valuestring, "trained") ? " +ft" : "",
                         longest);
                series *s = find_series(all, &count, name);
                if (!s) goto too_many_series;
                int buckets = cJSON_GetArraySize(curve_at), b = 0;
                cJSON_ArrayForEach(y, curve_at) {
                    /* contexts (b n / B, (b + 1) n / B] bytes: the mean is their midpoint */
                    double x = ((double)b + 0.5) * longest / buckets + 0.5;
                    b++;
                    if (cJSON_IsNumber(y) && !add_point(s, x, y->valuedouble)) goto too_many_points;
                }
            }
        } else {
            cJSON_ArrayForEach(e, cJSON_GetObjectItem(run, "evals")) {
                const cJSON *y = cJSON_GetObjectItem(e, metric), *v = cJSON_GetObjectItem(e, "variant"),
                            *ph = cJSON_GetObjectItem(e, "phase"), *len = cJSON_GetObjectItem(e, "length");
                if (!cJSON_IsNumber(y) || !cJSON_IsString(v) || !cJSON_IsString(ph) || !cJSON_IsNumber(len)) continue;
                if (!(len->valuedouble > 0)) continue; /* a log axis */
                const char *variant = v->valuestring, *phase = ph->valuestring;
                char name[96];
                snprintf(name, sizeof name, "%s%s%s%s", label->valuestring, strcmp(variant, "plain") ? " " : "",
                         strcmp(variant, "plain") ? variant : "", strcmp(phase, "trained") ? " +ft" : "");
                series *s = find_series(all, &count, name);
                if (!s) goto too_many_series;
                if (!add_point(s, len->valuedouble, y->valuedouble)) goto too_many_points;
            }
        }
    }
    /* a curve series with no points (a run without a curve) draws nothing */
    int kept = 0;
    for (int s = 0; s < count; s++)
        if (all[s].count > 0) all[kept++] = all[s];
    count = kept;
    if (count == 0) {
        free(all);
        return cli_fail(command, EXIT_USAGE, NULL, "no runs with metric %s in %s", metric, path);
    }
    for (int s = 0; s < count; s++) sort_points(&all[s]);
    out->all = all;
    out->count = count;
    out->curve = curve || heads; /* a linear x axis */
    /* the words of the metric, and the length the runs trained at when they share one
       (the x axis is read against it: extrapolation starts past it) */
    const char *words = context                              ? "bits per byte against context (same targets)"
                        : strcmp(metric, "bpb") == 0           ? "bits per byte (bpb)"
                        : strcmp(metric, "bpb_sliding") == 0 ? "bits per byte, sliding window (bpb_sliding)"
                                                             : metric;
    double trained = -1;
    cJSON_ArrayForEach(run, runs) {
        const cJSON *exp = cJSON_GetObjectItem(run, "experiment"), *tl = cJSON_GetObjectItem(run, "train_length");
        if (only && (!cJSON_IsString(exp) || strcmp(only, exp->valuestring) != 0)) continue;
        if (!cJSON_IsNumber(tl) || (trained >= 0 && tl->valuedouble != trained)) {
            trained = -2; /* unknown or mixed: not said */
            break;
        }
        trained = tl->valuedouble;
    }
    char at[48] = "";
    if (trained > 0 && !curve && !heads) snprintf(at, sizeof at, ", trained at %g bytes", trained);
    snprintf(out->title, sizeof out->title, "posenc lab: %s%s%s%s (line: mean over seeds; band: min-max)",
             only ? only : "", only ? ": " : "", words, at);
    out->xlabel = curve ? "training step"
                : heads ? "head (layer by layer, 1-based)"
                : by_context ? "context before the target, bytes (log scale)"
                : context ? "context c: exactly c bytes before each fixed target (log scale)"
                : strcmp(metric, "accuracy") == 0 || strcmp(metric, "answer_bits") == 0
                    ? "task size n, input symbols (lookup: pairs) (log scale)"
                                                  : "evaluation length (log scale)";
    out->ylabel = strcmp(metric, "accuracy") == 0 || strcmp(metric, "passkey_accuracy") == 0 ? "exact-match accuracy"
                  : strcmp(metric, "passkey_bits") == 0 ? "bits per passkey digit"
                  : strcmp(metric, "answer_bits") == 0 ? "bits per answer token"
                  : strcmp(metric, "entropy") == 0 ? "attention entropy, nats"
                  : strcmp(metric, "distance") == 0 ? "mean attention distance, bytes"
                                                    : "bits per byte";
    return EXIT_OK;
too_many_series: /* a line left out silently would be a wrong picture: refuse by name */
    free(all);
    return cli_fail(command, EXIT_USAGE, "draw one experiment at a time: --experiment NAME",
                    "%s has more than %d configurations to draw as lines (one picture holds at most %d)", path,
                    MAX_SERIES, MAX_SERIES);
too_many_points:
    free(all);
    return cli_fail(command, EXIT_USAGE, "lab run records at most 50 curve points and 8 lengths a run",
                    "%s: a configuration has more than %d distinct %s (one line holds at most %d)", path, MAX_POINTS,
                    curve ? "training steps" : "lengths", MAX_POINTS);
}

int cli_lab_plot_svg(const char *command, const struct cJSON *runs, const char *path, const char *only, const char *metric,
                     cli_buffer *out) {
    lab_plot p;
    int rc = load_plot(command, runs, path, only, metric, &p);
    if (rc != EXIT_OK) return rc;
    draw(out, p.all, p.count, p.title, p.xlabel, p.ylabel, !p.curve);
    lab_plot_free(&p);
    return out->failed ? cli_fail(command, EXIT_RUNTIME, NULL, "out of memory drawing %s", path) : EXIT_OK;
}

int cli_lab_plot_png(const char *command, const struct cJSON *runs, const char *path, const char *only, const char *metric,
                     cli_buffer *out) {
    lab_plot p;
    int rc = load_plot(command, runs, path, only, metric, &p);
    if (rc != EXIT_OK) return rc;
    double *mean = malloc(sizeof *mean * MAX_POINTS * (size_t)p.count);
    cli_band_series *list = calloc((size_t)p.count, sizeof *list);
    if (!mean || !list) {
        free(mean);
        free(list);
        lab_plot_free(&p);
        return cli_fail(command, EXIT_RUNTIME, NULL, "out of memory drawing %s", path);
    }
    for (int s = 0; s < p.count; s++) {
        const series *e = &p.all[s];
        double *m = mean + (size_t)s * MAX_POINTS;
        for (int i = 0; i < e->count; i++) m[i] = e->sum[i] / e->n[i];
        list[s] = (cli_band_series){e->name, palette[s % 10], e->x, m, e->lo, e->hi, (size_t)e->count, s / 10};
    }
    cli_band_chart chart = {p.title, p.xlabel, p.ylabel, list, (size_t)p.count, !p.curve, 0, 0};
    rc = cli_band_chart_png(command, &chart, out);
    free(mean);
    free(list);
    lab_plot_free(&p);
    return rc;
}
