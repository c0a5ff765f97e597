/* cmd_rope_compare.c: `posenc rope compare A B`: do two model descriptions (HF
 * config.json, GGUF, or a folder holding one) give the same RoPE, layer by
 * layer? Both are read with posenc_model_read; every layer's scheme, attention
 * window, rotated channels, layout and M-RoPE sections are compared, and the
 * inverse frequencies and attention factor are computed by the library
 * (posenc_rope_frequencies, precise mode for both sides, so the runtimes'
 * float32 arithmetic is not what differs) and compared in float32 ULPs. How the
 * files state the RoPE (a Llama 3 scaling dict, or llama.cpp's rope_freqs
 * divisors) is a note when the numbers agree, the explanation when they do not.
 * Exit 0 "same RoPE", 1 different (each difference with the layers it touches),
 * 2 usage. */
#define _POSIX_C_SOURCE 200809L /* opendir, stat */
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CMD "rope compare"
#define PI 3.14159265358979323846

/* Numbers agree within this many float32 ULPs. GGUF stores every RoPE number as
 * float32 (freq_base, scaling factor), and llama.cpp's converter computes the
 * Llama 3 rope_freqs divisors in float32 (a chain of about five float32
 * operations from the float32 inverse frequency: a few ULPs of rounding, which
 * HF's own float32 computation has too). Measured: Llama 3.1 8B's config.json
 * against its converted GGUF, 2 ULPs at pair 33 (tests/py/test_rope_compare.py);
 * a change made on purpose as small as rope_theta 500000 -> 500001 moves pairs
 * 11-63 by 5 to 37 ULPs (found). */
#define COMPARE_TOLERANCE_ULPS 4.0

static const cli_option compare_options[] = {
    {"seq-len", "L", "compare at this sequence length only (default: the trained length, 0, and the longer "
                     "context of the two; dynamic NTK and LongRoPE depend on it)"},
    {"json", NULL, "print the comparison as one JSON object (keys in docs/rope.md)"},
    {"assume-a", "FAMILY", "read A's unknown model_type / GGUF architecture as this family, on purpose"},
    {"assume-b", "FAMILY", "the same for B"},
    {NULL, NULL, NULL}};

/* ---- reading --------------------------------------------------------------- */

/* The model file an argument names: the file itself, or in a folder its
 * config.json, else its one .gguf file (several: refused, naming them). */
static int model_path(const char *arg, char *out, size_t size) {
    struct stat st;
    if (stat(arg, &st) != 0) return cli_fail(CMD, EXIT_RUNTIME, NULL, "cannot open %s: %s", arg, strerror(errno));
    if (!S_ISDIR(st.st_mode)) {
        if ((size_t)snprintf(out, size, "%s", arg) >= size)
            return cli_fail(CMD, EXIT_USAGE, NULL, "path too long: %s", arg);
        return EXIT_OK;
    }
    if ((size_t)snprintf(out, size, "%s/config.json", arg) >= size)
        return cli_fail(CMD, EXIT_USAGE, NULL, "path too long: %s", arg);
    if (stat(out, &st) == 0 && S_ISREG(st.st_mode)) return EXIT_OK;
    DIR *d = opendir(arg);
    if (!d) return cli_fail(CMD, EXIT_RUNTIME, NULL, "cannot open %s: %s", arg, strerror(errno));
    int found = 0;
    char names[256] = "";
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 5, ".gguf") != 0) continue;
        if (found++ == 0 && (size_t)snprintf(out, size, "%s/%s", arg, e->d_name) >= size) found = -1000;
        if (strlen(names) + n + 3 < sizeof names) {
            if (names[0]) strcat(names, ", ");
            strcat(names, e->d_name);
        }
    }
    closedir(d);
    if (found == 1) return EXIT_OK;
    if (found == 0)
        return cli_fail(CMD, EXIT_RUNTIME, "name the file: A.json or A.gguf",
                        "%s is a folder with neither a config.json nor a .gguf file", arg);
    if (found < 0) return cli_fail(CMD, EXIT_USAGE, NULL, "path too long in %s", arg);
    return cli_fail(CMD, EXIT_USAGE, "name the file to compare", "%s holds %d .gguf files (%s): which one is meant "
                    "would be a guess", arg, found, names);
}

typedef struct {
    char path[4096];
    posenc_model m;
    int32_t layers;             /* compared layers: layer_count, or 1 when the file states none */
    posenc_model_layer one;     /* that one layer */
} side;

static int read_side(const char *arg, const char *assume, const char *flag, side *s) {
    memset(s, 0, sizeof *s);
    int rc = model_path(arg, s->path, sizeof s->path);
    if (rc != EXIT_OK) return rc;
    posenc_error err = {0};
    posenc_config_options options = {assume};
    if (posenc_model_read(s->path, 0, &options, &s->m, &err) != POSENC_OK) {
        /* the library's advice names --assume; this command has one flag per side */
        bool assume_bad = err.status == POSENC_ERR_INVALID_ARGUMENT && assume && strncmp(err.message, "assume_family", 13) == 0;
        char hint[64];
        snprintf(hint, sizeof hint, "%s FAMILY reads it as a known family on purpose", flag);
        return cli_fail(CMD, assume_bad ? EXIT_USAGE : EXIT_RUNTIME,
                        assume_bad || err.status == POSENC_ERR_UNSUPPORTED ? hint : NULL, "%s", err.message);
    }
    if (s->m.assumed)
        cli_note(CMD, "note: %s read as the '%s' family on purpose (%s): assumed, not known", s->path,
                 s->m.assumed_family[0] ? s->m.assumed_family : "generic", flag);
    s->layers = s->m.layer_count > 0 ? s->m.layer_count : 1;
    s->one.scheme = s->m.rope_count > 0 ? POSENC_LAYER_ROPE : POSENC_LAYER_NOPE;
    s->one.rope = s->m.rope_count > 0 ? 0 : -1;
    snprintf(s->one.kind, sizeof s->one.kind, "attention");
    return EXIT_OK;
}

static const posenc_model_layer *layer_of(const side *s, int32_t i) {
    return s->m.layer_count > 0 ? &s->m.layers[i] : &s->one;
}

/* ---- what differs ---------------------------------------------------------- */

typedef enum {
    D_LAYERS, D_START, D_SOFTMAX, D_SCHEME, D_WINDOW, D_ROTARY, D_HEAD, D_LAYOUT, D_MROPE, D_FREQS, D_ATTENTION,
    D_ALIBI, D_LEARNED, D_T5, D_SINUSOID, D_DEBERTA, D_BASE, D_SCALING, D_FACTOR, D_ORIGINAL, D_YARN, D_LLAMA3, D_LISTS, D_QSCALE,
    D_CONV, D_ROPE2D, D_KINDS
} aspect;

static const char *const aspect_names[D_KINDS] = {
    "layer count", "position start", "softmax scale", "position scheme", "attention window", "rotary dim", "head channels",
    "layout", "M-RoPE sections", "inverse frequencies", "attention factor", "ALiBi", "learned table",
    "T5 buckets", "sinusoidal table", "DeBERTa relative positions", "base (rope_theta)", "scaling type", "scaling factor",
    "original context", "YaRN parameters", "Llama 3 parameters", "LongRoPE / per-pair factor lists", "query scale",
    "convolutional positions", "2-D RoPE"};

typedef struct {
    bool seen;
    bool counted;          /* a difference (exit 1), else a note */
    int32_t first_layer;   /* -1: the whole model */
    uint8_t *layers;       /* touched layers (count of the longer side) */
    char a[160], b[160];   /* the two values at the first layer */
    char detail[320];      /* numbers: ULPs, pairs, the logit change; notes: why it is not a difference */
    double max_ulps, logit_change;
    int32_t first_pair, logit_pair;
    int64_t logit_distance, at_length;
} finding;

typedef struct {
    finding f[D_KINDS];
    int32_t layer_slots;
    double max_ulps;       /* largest frequency / attention-factor difference seen, within the tolerance or not */
    int32_t max_ulps_pair, max_ulps_layer; /* where (pair -1: the attention factor) */
} findings;

static void mark(findings *fs, aspect k, bool counted, int32_t layer, const char *a, const char *b,
                 const char *detail) {
    finding *f = &fs->f[k];
    if (!f->seen) {
        f->seen = true;
        f->counted = counted;
        f->first_layer = layer;
        snprintf(f->a, sizeof f->a, "%s", a);
        snprintf(f->b, sizeof f->b, "%s", b);
        snprintf(f->detail, sizeof f->detail, "%s", detail ? detail : "");
    }
    f->counted |= counted;
    if (layer >= 0 && layer < fs->layer_slots && f->layers) f->layers[layer] = 1;
}

/* float32 ULPs between two doubles rounded to float32 (the runtimes' precision) */
static double ulps_f32(double a, double b) {
    float x = (float)a, y = (float)b;
    if (x == y) return 0;
    if (!isfinite(x) || !isfinite(y)) return INFINITY;
    int32_t ix, iy;
    memcpy(&ix, &x, sizeof ix);
    memcpy(&iy, &y, sizeof iy);
    int64_t ox = ix >= 0 ? ix : -(int64_t)(ix & 0x7fffffff), oy = iy >= 0 ? iy : -(int64_t)(iy & 0x7fffffff);
    return fabs((double)(ox - oy));
}

/* The largest change of q.k for unit q, k in one pair's plane over distances 0..ctx:
 * |x e^{i wa d} - y e^{i wb d}| with x, y the squared attention factors, largest where
 * (wa - wb) d is nearest an odd multiple of pi (cos decreasing up to pi/|wa - wb|). */
static double logit_change(double wa, double wb, double x, double y, int64_t ctx, int64_t *at) {
    double dw = fabs(wa - wb), best = -1;
    int64_t cand[4] = {0, ctx, ctx, ctx};
    if (dw > 0 && PI / dw < (double)ctx) {
        cand[2] = (int64_t)floor(PI / dw);
        cand[3] = cand[2] + 1 <= ctx ? cand[2] + 1 : cand[2];
    }
    for (int i = 0; i < 4; i++) {
        double c = cos(dw * (double)cand[i]), v = sqrt(fmax(0.0, x * x + y * y - 2 * x * y * c));
        if (v > best) best = v, *at = cand[i];
    }
    return best;
}

/* Both sides' RoPE variants ra / rb compared once (cached per pair). */
typedef struct {
    bool done, freq_diff, att_diff;
    double max_ulps, att_ulps, logit, att_a, att_b, wa, wb;
    int32_t first_pair, last_pair, worst_pair, logit_pair;
    int64_t at_length, logit_distance;
} numeric;

static int compare_numbers(const posenc_model_rope *ra, const posenc_model_rope *rb, const int64_t *lengths,
                           int nlengths, int64_t ctx, numeric *out) {
    memset(out, 0, sizeof *out);
    out->done = true;
    out->first_pair = -1;
    int32_t pa = ra->rotary_dim / 2, pb = rb->rotary_dim / 2, pairs = pa < pb ? pa : pb;
    double *wa = malloc(sizeof(double) * (size_t)(pa + pb + 2)), *wb = wa ? wa + pa + 1 : NULL;
    if (!wa) return cli_fail(CMD, EXIT_RUNTIME, NULL, "out of memory");
    for (int l = 0; l < nlengths; l++) {
        posenc_rope_params a = ra->params, b = rb->params;
        a.mode = b.mode = POSENC_MODE_PRECISE; /* the description, not the runtime's arithmetic */
        double att_a = 1, att_b = 1;
        posenc_error err = {0};
        if (posenc_rope_frequencies(&a, lengths[l], wa, (size_t)pa, &att_a, &err) != POSENC_OK ||
            posenc_rope_frequencies(&b, lengths[l], wb, (size_t)pb, &att_b, &err) != POSENC_OK) {
            free(wa);
            return cli_fail(CMD, EXIT_RUNTIME, NULL, "computing the frequencies: %s", err.message);
        }
        for (int32_t k = 0; k < pairs; k++) {
            double u = ulps_f32(wa[k], wb[k]);
            if (u > COMPARE_TOLERANCE_ULPS) {
                if (out->first_pair < 0 || k < out->first_pair) out->first_pair = k;
                if (k > out->last_pair) out->last_pair = k;
                out->freq_diff = true;
            }
            if (u > out->max_ulps) {
                out->max_ulps = u, out->worst_pair = k, out->at_length = lengths[l];
                out->wa = wa[k], out->wb = wb[k];
            }
        }
        double au = ulps_f32(att_a, att_b);
        if (au > out->att_ulps || l == 0) out->att_ulps = au, out->att_a = att_a, out->att_b = att_b;
        out->att_diff |= au > COMPARE_TOLERANCE_ULPS;
        if (out->freq_diff || out->att_diff) /* what it does to attention: the largest change of a unit q.k */
            for (int32_t k = 0; k < pairs; k++) {
                int64_t at = 0;
                double c = logit_change(wa[k], wb[k], att_a * att_a, att_b * att_b, ctx, &at);
                if (c > out->logit) out->logit = c, out->logit_pair = k, out->logit_distance = at;
            }
    }
    free(wa);
    return EXIT_OK;
}

static void words_g(char *buf, size_t size, double v) { snprintf(buf, size, "%.9g", v); }

/* The ways a RoPE can be stated (notes when the numbers agree). */
static void compare_fields(findings *fs, int32_t layer, const posenc_model_rope *ra, const posenc_model_rope *rb,
                           bool counted) {
    const posenc_rope_params *a = &ra->params, *b = &rb->params;
    char x[160], y[160];
#define SAME(u, v) (ulps_f32((u), (v)) <= COMPARE_TOLERANCE_ULPS) /* as the numbers are compared */
    if (!SAME(a->base, b->base)) {
        words_g(x, sizeof x, a->base), words_g(y, sizeof y, b->base);
        mark(fs, D_BASE, counted, layer, x, y, NULL);
    }
    bool divisors_a = a->scaling == POSENC_ROPE_LONGROPE && a->longrope_select == POSENC_LONGROPE_SHORT &&
                      a->attention_factor == 1.0,
         divisors_b = b->scaling == POSENC_ROPE_LONGROPE && b->longrope_select == POSENC_LONGROPE_SHORT &&
                      b->attention_factor == 1.0;
    if (a->scaling != b->scaling || divisors_a != divisors_b) {
        snprintf(x, sizeof x, "%s", divisors_a ? "per-pair divisors (GGUF rope_freqs)" : posenc_rope_scaling_name(a->scaling));
        snprintf(y, sizeof y, "%s", divisors_b ? "per-pair divisors (GGUF rope_freqs)" : posenc_rope_scaling_name(b->scaling));
        mark(fs, D_SCALING, counted, layer, x, y, NULL);
        return; /* the parameters of two schemes do not line up */
    }
    if (a->scaling != POSENC_ROPE_NONE && !divisors_a && !SAME(a->factor, b->factor)) {
        words_g(x, sizeof x, a->factor), words_g(y, sizeof y, b->factor);
        mark(fs, D_FACTOR, counted, layer, x, y, NULL);
    }
    if ((a->scaling == POSENC_ROPE_YARN || a->scaling == POSENC_ROPE_LLAMA3 ||
         (a->scaling == POSENC_ROPE_LONGROPE && !divisors_a)) &&
        a->original_max_position != b->original_max_position) {
        snprintf(x, sizeof x, "%lld", (long long)a->original_max_position);
        snprintf(y, sizeof y, "%lld", (long long)b->original_max_position);
        mark(fs, D_ORIGINAL, counted, layer, x, y, NULL);
    }
    if (a->scaling == POSENC_ROPE_YARN &&
        (!SAME(a->beta_fast, b->beta_fast) || !SAME(a->beta_slow, b->beta_slow) || !SAME(a->mscale, b->mscale) ||
         !SAME(a->mscale_all_dim, b->mscale_all_dim) || !SAME(a->attention_factor, b->attention_factor) ||
         a->truncate != b->truncate)) {
        snprintf(x, sizeof x, "beta_fast %.9g, beta_slow %.9g, mscale %.9g, mscale_all_dim %.9g, attention_factor %.9g, "
                 "truncate %d", a->beta_fast, a->beta_slow, a->mscale, a->mscale_all_dim, a->attention_factor, a->truncate);
        snprintf(y, sizeof y, "beta_fast %.9g, beta_slow %.9g, mscale %.9g, mscale_all_dim %.9g, attention_factor %.9g, "
                 "truncate %d", b->beta_fast, b->beta_slow, b->mscale, b->mscale_all_dim, b->attention_factor, b->truncate);
        mark(fs, D_YARN, counted, layer, x, y, NULL);
    }
    if (a->scaling == POSENC_ROPE_LLAMA3 &&
        (!SAME(a->low_freq_factor, b->low_freq_factor) || !SAME(a->high_freq_factor, b->high_freq_factor))) {
        snprintf(x, sizeof x, "low_freq_factor %g, high_freq_factor %g", a->low_freq_factor, a->high_freq_factor);
        snprintf(y, sizeof y, "low_freq_factor %g, high_freq_factor %g", b->low_freq_factor, b->high_freq_factor);
        mark(fs, D_LLAMA3, counted, layer, x, y, NULL);
    }
    if (a->scaling == POSENC_ROPE_LONGROPE) {
        size_t n = a->factors_count < b->factors_count ? a->factors_count : b->factors_count;
        size_t first = a->factors_count == b->factors_count ? SIZE_MAX : n;
        for (size_t k = 0; k < n && first == SIZE_MAX; k++)
            if (!SAME(a->short_factors[k], b->short_factors[k]) || !SAME(a->long_factors[k], b->long_factors[k])) first = k;
        if (first != SIZE_MAX) {
            snprintf(x, sizeof x, "%zu entries", a->factors_count);
            snprintf(y, sizeof y, "%zu entries", b->factors_count);
            char d[96];
            snprintf(d, sizeof d, "first differing entry %zu", first);
            mark(fs, D_LISTS, counted, layer, x, y, d);
        }
    }
#undef SAME
}

static void scheme_words(const side *s, const posenc_model_layer *l, char *buf, size_t size) {
    if (l->scheme == POSENC_LAYER_NOPE) snprintf(buf, size, "no position encoding (%s)", l->kind);
    else snprintf(buf, size, "%s", posenc_layer_scheme_name(l->scheme));
    (void)s;
}

static void window_words(int64_t w, char *buf, size_t size) {
    if (w > 0) snprintf(buf, size, "sliding window %lld", (long long)w);
    else snprintf(buf, size, "whole context");
}

static void mrope_words(const posenc_mrope_sections *m, char *buf, size_t size) {
    if (m->axes == 0) {
        snprintf(buf, size, "none (1-D RoPE)");
        return;
    }
    int n = snprintf(buf, size, "%s [", m->kind == POSENC_MROPE_INTERLEAVED ? "interleaved" : "sections");
    for (int32_t i = 0; i < m->axes && n > 0 && (size_t)n < size; i++)
        n += snprintf(buf + n, size - (size_t)n, i ? ", %d" : "%d", m->sizes[i]);
    if (n > 0 && (size_t)n < size) snprintf(buf + n, size - (size_t)n, "]");
}

/* ---- the comparison ---------------------------------------------------------- */

typedef struct {
    side a, b;
    findings fs;
    int64_t lengths[2];
    int nlengths;
    int64_t ctx;
    bool cross_format;
} comparison;

/* The position-dependent query scale of layer i (Ministral 3, Llama 4's NoPE layers): on or off, beta (GGUF stores
 * it as float32: compared in float32 ULPs), divisor and shift exactly. */
static void query_scale_words(const side *s, int32_t i, char *buf, size_t size) {
    const posenc_query_scale *q = &s->m.query_scale;
    if (!cli_model_query_scale_on(&s->m, i)) snprintf(buf, size, "none");
    else snprintf(buf, size, "1 + %.9g ln(1 + floor((pos + %lld) / %lld))", q->beta, (long long)q->shift,
                  (long long)q->divisor);
}

static void query_scale_compare(findings *fs, const side *A, const side *B, int32_t i) {
    bool on_a = cli_model_query_scale_on(&A->m, i), on_b = cli_model_query_scale_on(&B->m, i);
    const posenc_query_scale *qa = &A->m.query_scale, *qb = &B->m.query_scale;
    if (on_a == on_b && (!on_a || (qa->divisor == qb->divisor && qa->shift == qb->shift &&
                                   ulps_f32(qa->beta, qb->beta) <= COMPARE_TOLERANCE_ULPS)))
        return;
    char x[160], y[160];
    query_scale_words(A, i, x, sizeof x), query_scale_words(B, i, y, sizeof y);
    mark(fs, D_QSCALE, true, i, x, y, "the factor q is multiplied by at each position (attention temperature): "
                                      "the logits differ past the divisor");
}

static int compare(comparison *c) {
    side *A = &c->a, *B = &c->b;
    findings *fs = &c->fs;
    int32_t n = A->layers > B->layers ? A->layers : B->layers, common = A->layers < B->layers ? A->layers : B->layers;
    fs->layer_slots = n;
    for (int k = 0; k < D_KINDS; k++) {
        fs->f[k].layers = calloc((size_t)n, 1);
        if (!fs->f[k].layers) return cli_fail(CMD, EXIT_RUNTIME, NULL, "out of memory");
    }
    char x[160], y[160];
    if (A->m.layer_count != B->m.layer_count && A->m.layer_count > 0 && B->m.layer_count > 0) {
        snprintf(x, sizeof x, "%d", A->m.layer_count), snprintf(y, sizeof y, "%d", B->m.layer_count);
        mark(fs, D_LAYERS, true, -1, x, y, "only the layers both have are compared");
    }
    if (A->m.position_start != B->m.position_start) {
        snprintf(x, sizeof x, "%lld", (long long)A->m.position_start);
        snprintf(y, sizeof y, "%lld", (long long)B->m.position_start);
        mark(fs, D_START, true, -1, x, y, "the first token's position id (RoPE logits depend on distances only, "
                                         "absolute tables and caches on it)");
    }
    if (A->m.rope_count > 0 && B->m.rope_count > 0) { /* DeepSeek's mscale_all_dim: on the logits, not cos/sin */
        const posenc_model_config *ca = &A->m.config, *cb = &B->m.config;
        int32_t da = ca->softmax_head_dim > 0 ? ca->softmax_head_dim : A->m.ropes[0].attention_head_dim,
                db = cb->softmax_head_dim > 0 ? cb->softmax_head_dim : B->m.ropes[0].attention_head_dim;
        double sa = (ca->softmax_scale_factor > 0 ? ca->softmax_scale_factor : 1.0) / sqrt((double)da),
               sb = (cb->softmax_scale_factor > 0 ? cb->softmax_scale_factor : 1.0) / sqrt((double)db);
        if (ulps_f32(sa, sb) > COMPARE_TOLERANCE_ULPS) {
            snprintf(x, sizeof x, "%.9g (x%.9g / sqrt(%d))", sa, ca->softmax_scale_factor, da);
            snprintf(y, sizeof y, "%.9g (x%.9g / sqrt(%d))", sb, cb->softmax_scale_factor, db);
            mark(fs, D_SOFTMAX, true, -1, x, y, "the 1/sqrt(d) scale of q.k and its multiplier (DeepSeek: mscale_all_dim)");
        }
    }
    numeric cache[POSENC_MODEL_MAX_ROPES][POSENC_MODEL_MAX_ROPES];
    memset(cache, 0, sizeof cache);
    for (int32_t i = 0; i < common; i++) {
        const posenc_model_layer *la = layer_of(A, i), *lb = layer_of(B, i);
        if (la->scheme != lb->scheme) {
            scheme_words(A, la, x, sizeof x), scheme_words(B, lb, y, sizeof y);
            mark(fs, D_SCHEME, true, i, x, y, NULL);
            continue;
        }
        if (la->sliding_window != lb->sliding_window) {
            window_words(la->sliding_window, x, sizeof x), window_words(lb->sliding_window, y, sizeof y);
            mark(fs, D_WINDOW, true, i, x, y, "which keys a query sees, not how positions rotate");
        }
        query_scale_compare(fs, A, B, i);
        if (la->scheme == POSENC_LAYER_ALIBI) {
            bool same = A->m.alibi_heads == B->m.alibi_heads && A->m.alibi_before_scale == B->m.alibi_before_scale;
            for (int32_t h = 0; same && h < A->m.alibi_heads; h++)
                same = (float)A->m.alibi_slopes[h] == (float)B->m.alibi_slopes[h];
            if (!same) {
                snprintf(x, sizeof x, "%d heads, max bias %g%s", A->m.alibi_heads, A->m.alibi_max_bias,
                         A->m.alibi_before_scale ? ", before the 1/sqrt(d) scale" : "");
                snprintf(y, sizeof y, "%d heads, max bias %g%s", B->m.alibi_heads, B->m.alibi_max_bias,
                         B->m.alibi_before_scale ? ", before the 1/sqrt(d) scale" : "");
                mark(fs, D_ALIBI, true, i, x, y, NULL);
            }
        } else if (la->scheme == POSENC_LAYER_LEARNED) {
            /* BART: a decoder layer reads the decoder's own table */
            bool da = A->m.decoder_learned_size > 0 && strcmp(la->kind, "decoder") == 0;
            bool db = B->m.decoder_learned_size > 0 && strcmp(lb->kind, "decoder") == 0;
            int64_t oa = da ? A->m.decoder_learned_offset : A->m.learned_offset;
            int64_t sa = da ? A->m.decoder_learned_size : A->m.learned_size;
            int64_t ob = db ? B->m.decoder_learned_offset : B->m.learned_offset;
            int64_t sb = db ? B->m.decoder_learned_size : B->m.learned_size;
            if (oa != ob || sa != sb) {
                snprintf(x, sizeof x, "%lld rows, row = position + %lld", (long long)sa, (long long)oa);
                snprintf(y, sizeof y, "%lld rows, row = position + %lld", (long long)sb, (long long)ob);
                mark(fs, D_LEARNED, true, i, x, y, NULL);
            }
        } else if (la->scheme == POSENC_LAYER_SINUSOIDAL) {
            const posenc_sinusoid_params *sa = &A->m.sinusoid, *sb = &B->m.sinusoid;
            /* Marian: a decoder layer reads the decoder's own table (rows, offset) */
            bool da = A->m.decoder_sinusoid_size > 0 && strcmp(la->kind, "decoder") == 0;
            bool db = B->m.decoder_sinusoid_size > 0 && strcmp(lb->kind, "decoder") == 0;
            int64_t ra = da ? A->m.decoder_sinusoid_size : A->m.sinusoid_size;
            int64_t rb = db ? B->m.decoder_sinusoid_size : B->m.sinusoid_size;
            int64_t oa = da ? A->m.decoder_sinusoid_offset : A->m.sinusoid_offset;
            int64_t ob = db ? B->m.decoder_sinusoid_offset : B->m.sinusoid_offset;
            if (sa->dim != sb->dim || sa->base != sb->base || sa->freqs != sb->freqs || sa->layout != sb->layout ||
                sa->odd != sb->odd || sa->mode != sb->mode || ra != rb || oa != ob ||
                A->m.sinusoid_zero_row != B->m.sinusoid_zero_row ||
                A->m.sinusoid_skips_padding != B->m.sinusoid_skips_padding) {
                snprintf(x, sizeof x, "sinusoid %lld rows x %d, base %g, %s, row = position + %lld%s", (long long)ra,
                         sa->dim, sa->base, sa->freqs == POSENC_FREQS_T2T ? "t2t" : "vaswani", (long long)oa,
                         A->m.sinusoid_skips_padding ? " (padding skipped)" : "");
                snprintf(y, sizeof y, "sinusoid %lld rows x %d, base %g, %s, row = position + %lld%s", (long long)rb,
                         sb->dim, sb->base, sb->freqs == POSENC_FREQS_T2T ? "t2t" : "vaswani", (long long)ob,
                         B->m.sinusoid_skips_padding ? " (padding skipped)" : "");
                mark(fs, D_SINUSOID, true, i, x, y, NULL);
            }
        } else if (la->scheme == POSENC_LAYER_T5) {
            if (A->m.t5.num_buckets != B->m.t5.num_buckets || A->m.t5.max_distance != B->m.t5.max_distance) {
                snprintf(x, sizeof x, "%d buckets, max distance %d", A->m.t5.num_buckets, A->m.t5.max_distance);
                snprintf(y, sizeof y, "%d buckets, max distance %d", B->m.t5.num_buckets, B->m.t5.max_distance);
                mark(fs, D_T5, true, i, x, y, NULL);
            }
        } else if (la->scheme == POSENC_LAYER_DEBERTA) {
            const posenc_model *ma = &A->m, *mb = &B->m;
            if (ma->deberta.position_buckets != mb->deberta.position_buckets ||
                ma->deberta.max_relative_positions != mb->deberta.max_relative_positions ||
                ma->deberta_c2p != mb->deberta_c2p || ma->deberta_p2c != mb->deberta_p2c ||
                ma->deberta_absolute != mb->deberta_absolute ||
                (ma->deberta_absolute && ma->learned_size != mb->learned_size)) {
                snprintf(x, sizeof x, "%d buckets, max relative %d, %s%s%s%s", ma->deberta.position_buckets,
                         ma->deberta.max_relative_positions, ma->deberta_c2p ? "c2p" : "",
                         ma->deberta_c2p && ma->deberta_p2c ? "+" : "", ma->deberta_p2c ? "p2c" : "",
                         ma->deberta_absolute ? ", + absolute table" : "");
                snprintf(y, sizeof y, "%d buckets, max relative %d, %s%s%s%s", mb->deberta.position_buckets,
                         mb->deberta.max_relative_positions, mb->deberta_c2p ? "c2p" : "",
                         mb->deberta_c2p && mb->deberta_p2c ? "+" : "", mb->deberta_p2c ? "p2c" : "",
                         mb->deberta_absolute ? ", + absolute table" : "");
                mark(fs, D_DEBERTA, true, i, x, y, NULL);
            }
        } else if (la->scheme == POSENC_LAYER_CONV_POSITION) { /* wav2vec2-style: the conv's shape, WavLM's buckets */
            const posenc_model *ma = &A->m, *mb = &B->m;
            if (ma->conv_pos_kernel != mb->conv_pos_kernel || ma->conv_pos_groups != mb->conv_pos_groups ||
                ma->conv_pos_layers != mb->conv_pos_layers || ma->conv_pos_stride != mb->conv_pos_stride ||
                ma->conv_pos_norm != mb->conv_pos_norm ||
                strcmp(ma->conv_pos_activation, mb->conv_pos_activation) != 0 ||
                ma->wavlm_num_buckets != mb->wavlm_num_buckets || ma->wavlm_max_distance != mb->wavlm_max_distance) {
                snprintf(x, sizeof x, "%d x kernel %d, groups %d, stride %d, norm %d, %s; buckets %d/%d",
                         ma->conv_pos_layers, ma->conv_pos_kernel, ma->conv_pos_groups, ma->conv_pos_stride,
                         ma->conv_pos_norm, ma->conv_pos_activation, ma->wavlm_num_buckets, ma->wavlm_max_distance);
                snprintf(y, sizeof y, "%d x kernel %d, groups %d, stride %d, norm %d, %s; buckets %d/%d",
                         mb->conv_pos_layers, mb->conv_pos_kernel, mb->conv_pos_groups, mb->conv_pos_stride,
                         mb->conv_pos_norm, mb->conv_pos_activation, mb->wavlm_num_buckets, mb->wavlm_max_distance);
                mark(fs, D_CONV, true, i, x, y, NULL);
            }
        } else if (la->scheme == POSENC_LAYER_ROPE_2D) {
            const posenc_rope2d_params *pa = &A->m.rope2d, *pb = &B->m.rope2d;
            if (pa->kind != pb->kind || pa->head_dim != pb->head_dim || pa->base != pb->base ||
                pa->merge != pb->merge || pa->window != pb->window ||
                A->m.rope2d_patch_size != B->m.rope2d_patch_size || A->m.rope2d_lead != B->m.rope2d_lead ||
                A->m.rope2d_merge_per_image != B->m.rope2d_merge_per_image || A->m.rope2d_plain != B->m.rope2d_plain ||
                strcmp(A->m.rope2d_table, B->m.rope2d_table) != 0) {
                snprintf(x, sizeof x, "%s, %d channels, base %g, merge %d, patch %lld", posenc_rope2d_kind_name(pa->kind),
                         pa->head_dim, pa->base, pa->merge, (long long)A->m.rope2d_patch_size);
                snprintf(y, sizeof y, "%s, %d channels, base %g, merge %d, patch %lld", posenc_rope2d_kind_name(pb->kind),
                         pb->head_dim, pb->base, pb->merge, (long long)B->m.rope2d_patch_size);
                mark(fs, D_ROPE2D, true, i, x, y, NULL);
            }
        }
        if (la->scheme != POSENC_LAYER_ROPE || la->rope < 0 || lb->rope < 0) continue;
        const posenc_model_rope *ra = &A->m.ropes[la->rope], *rb = &B->m.ropes[lb->rope];
        if (ra->rotary_dim != rb->rotary_dim) {
            snprintf(x, sizeof x, "%d of %d channels", ra->rotary_dim, ra->attention_head_dim);
            snprintf(y, sizeof y, "%d of %d channels", rb->rotary_dim, rb->attention_head_dim);
            mark(fs, D_ROTARY, true, i, x, y, "pairs past the shorter one are not compared");
        }
        if (ra->attention_head_dim != rb->attention_head_dim || ra->rotary_offset != rb->rotary_offset) {
            snprintf(x, sizeof x, "head %d, rotated from channel %d", ra->attention_head_dim, ra->rotary_offset);
            snprintf(y, sizeof y, "head %d, rotated from channel %d", rb->attention_head_dim, rb->rotary_offset);
            /* across formats the head is held differently (DeepSeek MLA: HF 192, GGUF 576 with the
               rope channels last in both): the rotated channels are what count */
            mark(fs, D_HEAD, !c->cross_format, i, x, y,
                 c->cross_format ? "each runtime holds the head its own way (MLA: HF qk_nope + qk_rope, GGUF "
                                   "kv_lora_rank + rope); the rotated channels are compared above" : NULL);
        }
        if (ra->layout != rb->layout) {
            snprintf(x, sizeof x, "%s", cli_layout_name(ra->layout));
            snprintf(y, sizeof y, "%s", cli_layout_name(rb->layout));
            /* llama.cpp's converter permutes the q/k rows of the architectures it runs with the NORM
               (interleaved) rotation, so HF's rotate_half pairs are the same channels there */
            mark(fs, D_LAYOUT, !c->cross_format, i, x, y,
                 c->cross_format ? "each runtime's own pairing: llama.cpp's converter permutes the q/k weights "
                                   "to match it, so the same channels rotate together" : NULL);
        }
        if (memcmp(&ra->mrope, &rb->mrope, sizeof ra->mrope) != 0 &&
            (ra->mrope.axes != rb->mrope.axes || ra->mrope.kind != rb->mrope.kind ||
             memcmp(ra->mrope.sizes, rb->mrope.sizes, sizeof ra->mrope.sizes) != 0)) {
            mrope_words(&ra->mrope, x, sizeof x), mrope_words(&rb->mrope, y, sizeof y);
            mark(fs, D_MROPE, true, i, x, y, NULL);
        }
        numeric *nu = &cache[la->rope][lb->rope];
        if (!nu->done) {
            int rc = compare_numbers(ra, rb, c->lengths, c->nlengths, c->ctx, nu);
            if (rc != EXIT_OK) return rc;
        }
        if (nu->max_ulps > fs->max_ulps) fs->max_ulps = nu->max_ulps, fs->max_ulps_pair = nu->worst_pair, fs->max_ulps_layer = i;
        if (nu->att_ulps > fs->max_ulps) fs->max_ulps = nu->att_ulps, fs->max_ulps_pair = -1, fs->max_ulps_layer = i;
        if (nu->freq_diff) {
            snprintf(x, sizeof x, "%.9g", nu->wa), snprintf(y, sizeof y, "%.9g", nu->wb);
            char d[320];
            snprintf(d, sizeof d, "pairs %d-%d differ, by up to %.3g float32 ULP (pair %d: A %.9g, B %.9g rad/position, "
                     "at length %lld)", nu->first_pair, nu->last_pair, nu->max_ulps, nu->worst_pair, nu->wa, nu->wb,
                     (long long)nu->at_length);
            mark(fs, D_FREQS, true, i, x, y, d);
        }
        if (nu->att_diff) {
            snprintf(x, sizeof x, "%.9g", nu->att_a), snprintf(y, sizeof y, "%.9g", nu->att_b);
            mark(fs, D_ATTENTION, true, i, x, y, "the cos/sin magnitude (YaRN / LongRoPE)");
        }
        finding *ff = &fs->f[nu->freq_diff ? D_FREQS : D_ATTENTION];
        if ((nu->freq_diff || nu->att_diff) && nu->logit > ff->logit_change) {
            ff->logit_change = nu->logit, ff->logit_pair = nu->logit_pair, ff->logit_distance = nu->logit_distance;
            ff->max_ulps = nu->freq_diff ? nu->max_ulps : nu->att_ulps, ff->first_pair = nu->first_pair;
            ff->at_length = nu->at_length;
        }
        if (nu->freq_diff) fs->f[D_FREQS].max_ulps = fmax(fs->f[D_FREQS].max_ulps, nu->max_ulps);
        compare_fields(fs, i, ra, rb, false);
    }
    /* a field stated differently is a difference where the numbers differ too (it explains them) */
    bool numbers = fs->f[D_FREQS].seen || fs->f[D_ATTENTION].seen;
    for (int k = D_BASE; k < D_KINDS; k++)
        if (fs->f[k].seen && numbers) fs->f[k].counted = true;
    return EXIT_OK;
}

/* "0-2, 4, 7-31" */
static void layer_ranges(const finding *f, int32_t n, char *buf, size_t size) {
    buf[0] = '\0';
    size_t used = 0;
    for (int32_t i = 0; i < n; i++) {
        if (!f->layers[i]) continue;
        if (used + 32 >= size) { /* the JSON lists every layer; the words stop here, saying so */
            snprintf(buf + used, size - used, ", ...");
            return;
        }
        int32_t e = i;
        while (e + 1 < n && f->layers[e + 1]) e++;
        used += (size_t)snprintf(buf + used, size - used, used ? ", %d" : "%d", i);
        if (e > i) used += (size_t)snprintf(buf + used, size - used, "-%d", e);
        i = e;
    }
    if (!buf[0]) snprintf(buf, size, "the whole model");
}

static int layer_count_of(const finding *f, int32_t n) {
    int c = 0;
    for (int32_t i = 0; i < n; i++) c += f->layers[i];
    return c;
}

static const char *format_name(const posenc_model *m) {
    return m->config.format == POSENC_CONFIG_GGUF ? "GGUF" : "HF config.json";
}

static void print_side(const char *tag, const side *s) {
    printf("%s: ", tag);
    cli_put_escaped(stdout, s->path);
    printf(" (%s, ", format_name(&s->m));
    cli_put_escaped(stdout, s->m.config.architecture[0] ? s->m.config.architecture : "no model_type");
    printf(", %d layer%s)\n", s->layers, s->layers == 1 ? "" : "s");
}

static void print_text(const comparison *c, int counted, int notes) {
    print_side("A", &c->a);
    print_side("B", &c->b);
    printf("compared at sequence length%s ", c->nlengths > 1 ? "s" : "");
    for (int l = 0; l < c->nlengths; l++)
        printf(c->lengths[l] ? "%s%lld" : "%s%lld (the trained length)", l ? " and " : "", (long long)c->lengths[l]);
    printf("; numbers in float32 ULPs, tolerance %g (GGUF stores them as float32)\n", COMPARE_TOLERANCE_ULPS);
    int32_t n = c->fs.layer_slots;
    char ranges[512];
    if (counted == 0) {
        printf("same RoPE: every compared layer has the same position scheme, rotated channels, inverse frequencies "
               "and attention factor");
        if (c->fs.max_ulps > 0 && c->fs.max_ulps_pair >= 0)
            printf(" (largest difference %g ULP, pair %d of layer %d)", c->fs.max_ulps, c->fs.max_ulps_pair,
                   c->fs.max_ulps_layer);
        else if (c->fs.max_ulps > 0)
            printf(" (largest difference %g ULP, the attention factor of layer %d)", c->fs.max_ulps, c->fs.max_ulps_layer);
        printf("\n");
    } else {
        printf("RoPE differs: %d difference%s\n", counted, counted == 1 ? "" : "s");
        int k2 = 0;
        for (int k = 0; k < D_KINDS; k++) {
            const finding *f = &c->fs.f[k];
            if (!f->seen || !f->counted) continue;
            layer_ranges(f, n, ranges, sizeof ranges);
            printf("  %d. %s: A ", ++k2, aspect_names[k]);
            cli_put_escaped(stdout, f->a);
            printf(", B ");
            cli_put_escaped(stdout, f->b);
            if (f->first_layer >= 0)
                printf(" (layers %s: %d of %d; first layer %d)", ranges, layer_count_of(f, n), n, f->first_layer);
            else printf(" (the whole model)");
            printf("\n");
            if (f->detail[0]) printf("     %s\n", f->detail);
            if ((k == D_FREQS || k == D_ATTENTION) && f->logit_change > 0)
                printf("     largest change of a unit q.k logit up to distance %lld: %.4g (pair %d, distance %lld)\n",
                       (long long)c->ctx, f->logit_change, f->logit_pair, (long long)f->logit_distance);
        }
    }
    if (notes) {
        printf("notes (not differences):\n");
        for (int k = 0; k < D_KINDS; k++) {
            const finding *f = &c->fs.f[k];
            if (!f->seen || f->counted) continue;
            layer_ranges(f, n, ranges, sizeof ranges);
            printf("  %s stated differently: A ", aspect_names[k]);
            cli_put_escaped(stdout, f->a);
            printf(", B ");
            cli_put_escaped(stdout, f->b);
            printf(" (layers %s)%s%s\n", ranges, f->detail[0] ? ": " : "", f->detail);
            if (k >= D_BASE) printf("    the inverse frequencies and attention factor agree within the tolerance\n");
        }
    }
}

static void json_side(const side *s) {
    printf("{\"path\": ");
    cli_json_string(s->path);
    printf(", \"format\": \"%s\", \"architecture\": ", s->m.config.format == POSENC_CONFIG_GGUF ? "gguf" : "hf_json");
    cli_json_string(s->m.config.architecture);
    printf(", \"assumed_family\": ");
    if (s->m.assumed) cli_json_string(s->m.assumed_family[0] ? s->m.assumed_family : "generic");
    else printf("null");
    printf(", \"layers\": %d, \"position_start\": %lld}", s->layers, (long long)s->m.position_start);
}

static void json_finding(const comparison *c, int k, const finding *f) {
    printf("{\"what\": ");
    cli_json_string(aspect_names[k]);
    printf(", \"a\": ");
    cli_json_string(f->a);
    printf(", \"b\": ");
    cli_json_string(f->b);
    printf(", \"first_layer\": ");
    if (f->first_layer >= 0) printf("%d", f->first_layer);
    else printf("null");
    printf(", \"layers\": [");
    bool first = true;
    for (int32_t i = 0; i < c->fs.layer_slots; i++)
        if (f->layers[i]) printf(first ? "%d" : ", %d", i), first = false;
    printf("], \"detail\": ");
    cli_json_string(f->detail);
    if (k == D_FREQS || k == D_ATTENTION) {
        printf(", \"max_ulps\": ");
        cli_json_number(f->max_ulps);
        printf(", \"first_pair\": %d, \"logit_change\": ", f->first_pair);
        cli_json_number(f->logit_change);
        printf(", \"logit_pair\": %d, \"logit_distance\": %lld", f->logit_pair, (long long)f->logit_distance);
    }
    printf("}");
}

static void print_json(const comparison *c, int counted) {
    printf("{\"a\": ");
    json_side(&c->a);
    printf(", \"b\": ");
    json_side(&c->b);
    printf(", \"same\": %s, \"tolerance_ulps\": %g, \"lengths\": [", counted ? "false" : "true", COMPARE_TOLERANCE_ULPS);
    for (int l = 0; l < c->nlengths; l++) printf(l ? ", %lld" : "%lld", (long long)c->lengths[l]);
    printf("], \"context\": %lld, \"max_ulps\": ", (long long)c->ctx);
    cli_json_number(c->fs.max_ulps);
    printf(", \"differences\": [");
    bool first = true;
    for (int k = 0; k < D_KINDS; k++)
        if (c->fs.f[k].seen && c->fs.f[k].counted) {
            if (!first) printf(", ");
            json_finding(c, k, &c->fs.f[k]);
            first = false;
        }
    printf("], \"notes\": [");
    first = true;
    for (int k = 0; k < D_KINDS; k++)
        if (c->fs.f[k].seen && !c->fs.f[k].counted) {
            if (!first) printf(", ");
            json_finding(c, k, &c->fs.f[k]);
            first = false;
        }
    printf("]}\n");
}

int cmd_rope_compare(int argc, char **argv) {
    cli_args a;
    int rc = cli_parse(&a, CMD, compare_options, argc, argv, 2);
    if (rc != EXIT_OK) return rc;
    if (a.help) {
        printf("usage: posenc rope compare A B [--seq-len L] [--json] [--assume-a FAMILY] [--assume-b FAMILY]\n\n"
               "Do two model descriptions give the same RoPE? A and B are each an HF config.json, a GGUF\n"
               "file, or a folder holding one. Layer by layer: position scheme (RoPE / NoPE / ALiBi /\n"
               "learned / T5), attention window, rotated channels, layout, M-RoPE sections, and the\n"
               "inverse frequencies and attention factor computed by posenc from each (float32 ULPs,\n"
               "tolerance 4: GGUF stores its numbers as float32), with the largest change of a unit\n"
               "q.k logit a frequency difference makes. How each file states the RoPE (base, scaling\n"
               "type and parameters) is listed too: as the cause where the numbers differ, as a note\n"
               "where they agree (a Llama 3 dict and llama.cpp's rope_freqs divisors give the same\n"
               "frequencies). Exit 0: same RoPE; 1: different (each difference named with its layers),\n"
               "or a file that cannot be read; 2: usage.\n\n");
        cli_print_options(compare_options);
        return EXIT_OK;
    }
    if (a.positional_count != 2)
        return cli_fail(CMD, EXIT_USAGE, "e.g. posenc rope compare config.json model.gguf",
                        "give two model files (config.json, .gguf, or a folder holding one), got %d",
                        a.positional_count);
    int64_t seq_len = -1;
    if (!cli_int64(&a, "seq-len", 0, INT64_MAX / 2, &seq_len)) return EXIT_USAGE;
    comparison *c = calloc(1, sizeof *c);
    if (!c) return cli_fail(CMD, EXIT_RUNTIME, NULL, "out of memory");
    rc = read_side(a.positional[0], cli_has(&a, "assume-a") ? cli_string(&a, "assume-a", "") : NULL, "--assume-a", &c->a);
    if (rc == EXIT_OK)
        rc = read_side(a.positional[1], cli_has(&a, "assume-b") ? cli_string(&a, "assume-b", "") : NULL, "--assume-b", &c->b);
    if (rc == EXIT_OK) {
        c->cross_format = c->a.m.config.format != c->b.m.config.format;
        int64_t ma = c->a.m.config.max_position_embeddings, mb = c->b.m.config.max_position_embeddings;
        c->ctx = seq_len > 0 ? seq_len : ma > mb ? ma : mb;
        if (c->ctx <= 0) c->ctx = 4096; /* neither states a context: a common one, said in the output */
        if (seq_len >= 0) c->lengths[0] = seq_len, c->nlengths = 1;
        else {
            c->lengths[0] = 0, c->lengths[1] = c->ctx, c->nlengths = 2;
        }
        rc = compare(c);
    }
    if (rc == EXIT_OK) {
        int counted = 0, notes = 0;
        for (int k = 0; k < D_KINDS; k++) {
            counted += c->fs.f[k].seen && c->fs.f[k].counted;
            notes += c->fs.f[k].seen && !c->fs.f[k].counted;
        }
        if (cli_has(&a, "json")) print_json(c, counted);
        else print_text(c, counted, notes);
        rc = counted ? EXIT_RUNTIME : EXIT_OK;
    }
    for (int k = 0; k < D_KINDS; k++) free(c->fs.f[k].layers);
    posenc_model_free(&c->a.m);
    posenc_model_free(&c->b.m);
    free(c);
    return rc;
}
