/* model_words.c: reading a model for the commands that take --config (with
 * --assume FAMILY), and saying which layers carry which position encoding:
 * runs of equal layers folded in words, every layer in JSON. */
#include "cli.h"

#include <math.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_read_model(const char *command, const cli_args *a, posenc_model *out) {
    posenc_config_options options = {cli_has(a, "assume") ? cli_string(a, "assume", "") : NULL};
    posenc_error err = {0};
    if (posenc_model_read(cli_string(a, "config", ""), 0, &options, out, &err) != POSENC_OK) {
        /* INVALID_ARGUMENT is the typed --assume (a usage error) only when the message is about it: values
           read from the file that fail the RoPE check are the file's fault (docs/errors.md H6, exit 1) */
        bool assume_bad = err.status == POSENC_ERR_INVALID_ARGUMENT && options.assume_family &&
                          strncmp(err.message, "assume_family", 13) == 0;
        return cli_fail(command, assume_bad ? EXIT_USAGE : EXIT_RUNTIME,
                        assume_bad ? "--assume takes a family of posenc's table (docs/rope.md)" : NULL, "%s",
                        err.message);
    }
    if (out->assumed && !out->config.family[0])
        cli_note(command, "warning: the config names no model_type or architectures: read as HF's generic "
                          "rope keys, layout half ASSUMED (--assume FAMILY to choose)");
    else if (out->assumed) /* the name comes from the file: escaped as every message is */
        cli_note(command, "note: '%s' read as the '%s' family on purpose (--assume): assumed, not known",
                 out->config.architecture, out->assumed_family);
    return EXIT_OK;
}

int cli_read_rope_config(const char *command, const cli_args *a, posenc_model_config *out) {
    posenc_model m;
    int rc = cli_read_model(command, a, &m);
    if (rc != EXIT_OK) return rc;
    if (m.rope_count == 0) {
        char what[160];
        cli_model_layer_words(&m, 0, what, sizeof what);
        rc = cli_fail(command, EXIT_RUNTIME, "posenc rope explain --config FILE lists its layers",
                      "%s: '%s' has no RoPE layer (%s)", cli_string(a, "config", ""), m.config.architecture, what);
        posenc_model_free(&m);
        return rc;
    }
    *out = m.config;
    m.config.factor_storage = NULL; /* moved into *out */
    posenc_model_free(&m);
    return EXIT_OK;
}

/* When the runtime resizes a ViT-style image table (posenc_model.patch_resize). */
static const char *resize_words(int32_t resize) {
    return resize == 0   ? "never"
           : resize == 2 ? "by default"
           : resize == 3 ? "interpolate_pos_encoding, else first rows"
                         : "interpolate_pos_encoding";
}

static const char *layout_words(posenc_layout layout) {
    return layout == POSENC_LAYOUT_INTERLEAVED ? "interleaved" : "half";
}

/* Layer i's T5 block inside its stack (a decoder layer counts from the first decoder layer). */
static int32_t t5_block(const posenc_model *m, int32_t i) {
    int32_t first = 0;
    while (first < i && strcmp(m->layers[first].kind, m->layers[i].kind) != 0) first++;
    return i - first;
}

/* m->t5_tensor with {stack} = the layer's kind and {block} = `block` (-1: the letter N, for words). */
static void t5_table_name(const posenc_model *m, int32_t i, int32_t block, char *buf, size_t size) {
    size_t n = 0;
    buf[0] = '\0';
    for (const char *p = m->t5_tensor; *p && n + 1 < size;) {
        int w = 0;
        if (strncmp(p, "{stack}", 7) == 0) {
            w = snprintf(buf + n, size - n, "%s", m->layers[i].kind);
            p += 7;
        } else if (strncmp(p, "{block}", 7) == 0) {
            w = block < 0 ? snprintf(buf + n, size - n, "N") : snprintf(buf + n, size - n, "%d", block);
            p += 7;
        } else {
            buf[n] = *p++;
            buf[n + 1] = '\0';
            w = 1;
        }
        if (w < 0) break;
        n += (size_t)w < size - n ? (size_t)w : size - n - 1;
    }
}

void cli_model_layer_words(const posenc_model *m, int32_t i, char *buf, size_t size) {
    if (i < 0 || i >= m->layer_count) {
        snprintf(buf, size, "no layer list");
        return;
    }
    const posenc_model_layer *l = &m->layers[i];
    switch (l->scheme) {
    case POSENC_LAYER_ROPE: {
        const posenc_model_rope *r = &m->ropes[l->rope];
        const posenc_rope_params *p = &r->params;
        int n = snprintf(buf, size, "RoPE base %.10g, %s, %d of %d channels", p->base,
                         layout_words(r->layout) , r->rotary_dim, r->attention_head_dim);
        if (n >= 0 && (size_t)n < size && p->scaling != POSENC_ROPE_NONE)
            n += snprintf(buf + n, size - (size_t)n, ", %s x%.6g", posenc_rope_scaling_name(p->scaling), p->factor);
        if (n >= 0 && (size_t)n < size && r->dynamic_alpha > 0)
            n += snprintf(buf + n, size - (size_t)n, " (rope_theta x alpha %.6g^(d/(d-2)))", r->dynamic_alpha);
        if (n >= 0 && (size_t)n < size && strcmp(l->kind, "attention") != 0)
            n += snprintf(buf + n, size - (size_t)n, " (%s%s)", l->kind, l->sliding_window > 0 ? ", windowed" : "");
        if (n >= 0 && (size_t)n < size && cli_model_query_scale_on(m, i))
            n += snprintf(buf + n, size - (size_t)n, ", query scaled by position");
        break;
    }
    case POSENC_LAYER_CONV_POSITION: /* kept under 256 characters: the explain summary's buffer */
        snprintf(buf, size, "learned conv positions %s added to the input: %d x Conv1d(kernel %d, groups %d%s, pad %d"
                 "%s), %s, %s", m->conv_pos_tensor, m->conv_pos_layers, m->conv_pos_kernel, m->conv_pos_groups,
                 m->conv_pos_stride > 1 ? ", strided" : "", m->conv_pos_padding,
                 m->conv_pos_trim ? ", last frame dropped" : "",
                 m->conv_pos_norm == 1 ? "input batch norm" : m->conv_pos_norm == 2 ? "layer norm" : "weight norm",
                 m->conv_pos_activation);
        if (m->wavlm_num_buckets > 0) { /* WavLM: summarised, the explain buffer is short */
            size_t n = strlen(buf);
            if (n < size)
                snprintf(buf + n, size - n, "; + gated WavLM buckets (%d, %d)", m->wavlm_num_buckets,
                         m->wavlm_max_distance);
        }
        break;
    case POSENC_LAYER_NOPE:
        snprintf(buf, size, "no position encoding (%s)%s",
                 strcmp(l->kind, "mamba") == 0              ? "mamba: no attention"
                 : strcmp(l->kind, "linear_attention") == 0 ? "linear attention: no positions"
                                                            : "NoPE attention",
                 cli_model_query_scale_on(m, i) ? ", query scaled by position" : "");
        break;
    case POSENC_LAYER_ALIBI:
        snprintf(buf, size, "ALiBi, %d heads, max bias %g, slopes %.6g .. %.6g%s", m->alibi_heads, m->alibi_max_bias,
                 m->alibi_heads ? m->alibi_slopes[0] : 0.0, m->alibi_heads ? m->alibi_slopes[m->alibi_heads - 1] : 0.0,
                 m->alibi_before_scale ? ", added before the 1/sqrt(head_dim) scale (effective slopes / sqrt(d))"
                                       : "");
        break;
    case POSENC_LAYER_LEARNED: {
        bool own = m->decoder_learned_size > 0 && strcmp(l->kind, "decoder") == 0; /* BART: the decoder's table */
        if (m->patch_grid_height > 0) { /* ViT-style: rows over [prefix tokens, patches] at the config's size */
            snprintf(buf, size, "learned image table %s (%lld rows: %d lead + %lldx%lld patches, raster%s), at "
                     "image_size %lld only (resize, bicubic: %s)", m->learned_tensor,
                     (long long)m->learned_size, m->patch_prefix_rows, (long long)m->patch_grid_height,
                     (long long)m->patch_grid_width, m->patch_prefix_plain > 0 ? "; registers: no row" : "",
                     (long long)m->patch_image_size, resize_words(m->patch_resize));
            break;
        }
        snprintf(buf, size, "learned absolute table %s (%lld rows, row = position + %lld), added %s",
                 own ? m->decoder_learned_tensor : m->learned_tensor,
                 (long long)(own ? m->decoder_learned_size : m->learned_size),
                 (long long)(own ? m->decoder_learned_offset : m->learned_offset),
                 strcmp(l->kind, "decoder") == 0   ? "to the decoder's input"
                 : strcmp(l->kind, "encoder") == 0 ? "to the encoder's input"
                                                   : "before layer 0");
        break;
    }
    case POSENC_LAYER_SINUSOIDAL: {
        bool own = m->decoder_sinusoid_size > 0 && strcmp(l->kind, "decoder") == 0; /* Marian: the decoder's table */
        if (m->sinusoid_size == 0) { /* Pegasus-X: computed per forward pass */
            snprintf(buf, size, "fixed sinusoid (%d channels, %s frequencies base %g, %s%s), computed for each "
                     "position in every forward pass (no stored table, no row limit), added %s", m->sinusoid.dim,
                     m->sinusoid.freqs == POSENC_FREQS_T2T ? "t2t" : "vaswani", m->sinusoid.base,
                     m->sinusoid.layout == POSENC_LAYOUT_HALF ? "[sin | cos] halves" : "interleaved sin, cos",
                     m->sinusoid.mode == POSENC_MODE_TORCH_COMPAT ? ", torch float32" : "",
                     strcmp(l->kind, "decoder") == 0 ? "to the decoder's input" : "to the encoder's input");
            break;
        }
        int n = snprintf(buf, size, "fixed sinusoidal table %s (%lld rows x %d, %s frequencies base %g, %s%s, "
                         "row = position + %lld%s), added %s",
                         own ? m->decoder_sinusoid_tensor : m->sinusoid_tensor,
                         (long long)(own ? m->decoder_sinusoid_size : m->sinusoid_size), m->sinusoid.dim,
                         m->sinusoid.freqs == POSENC_FREQS_T2T ? "t2t" : "vaswani", m->sinusoid.base,
                         m->sinusoid.layout == POSENC_LAYOUT_HALF ? "[sin | cos] halves" : "interleaved sin, cos",
                         m->sinusoid.mode == POSENC_MODE_TORCH_COMPAT ? ", torch float32" : "",
                         (long long)(own ? m->decoder_sinusoid_offset : m->sinusoid_offset),
                         m->sinusoid_grows ? ", grown on demand" : "",
                         strcmp(l->kind, "encoder") == 0   ? "to the encoder's input"
                         : strcmp(l->kind, "decoder") == 0 ? "to the decoder's input"
                                                           : "before layer 0");
        if (n >= 0 && (size_t)n < size && m->sinusoid_zero_row >= 0)
            snprintf(buf + n, size - (size_t)n, "; row %lld is zero%s", (long long)m->sinusoid_zero_row,
                     m->sinusoid_skips_padding ? " (padding tokens read it; positions count the others)" : "");
        break;
    }
    case POSENC_LAYER_T5: {
        int n = snprintf(buf, size, "T5 relative buckets (%d buckets, max distance %d, %s)", m->t5.num_buckets,
                         m->t5.max_distance, strcmp(l->kind, "encoder") == 0 ? "bidirectional: encoder" : "causal: decoder");
        char table[128];
        t5_table_name(m, i, m->t5_bias_every_layer ? -1 : 0, table, sizeof table);
        if (n >= 0 && (size_t)n < size && table[0])
            snprintf(buf + n, size - (size_t)n, m->t5_bias_every_layer ? ", each block its own table %s (N = block)"
                                                                       : ", one table for the stack: %s (block 0 "
                                                                         "computes the bias, later blocks reuse it)",
                     table);
        break;
    }
    case POSENC_LAYER_WINDOW_RELATIVE: { /* kept under 256 characters: the explain summary's buffer */
        int32_t st = cli_model_window_stage(m, i);
        const posenc_window_stage *w = &m->window_stages[st < 0 ? 0 : st];
        int n = snprintf(buf, size, "2D relative bias in %dx%d windows%s (stage %d, %d heads, %lld rows%s%s)",
                         w->window_height, w->window_width, m->window_cls ? " + CLS" : "", st, w->heads,
                         (long long)w->table_rows,
                         m->window_continuous ? " from an MLP over log-spaced coordinates" : "",
                         m->window_shared && !m->window_per_layer ? ", one table shared by every layer"
                         : m->window_shared ? ", plus a shared table" : "");
        if (n >= 0 && (size_t)n < size && m->window_abs_offsets)
            n += w->query_stride ? snprintf(buf + n, size - (size_t)n, ", rows by (|dy|, |dx|), queries on every "
                                            "%d patches (subsample)", w->query_stride)
                                 : snprintf(buf + n, size - (size_t)n, ", rows by (|dy|, |dx|)");
        if (n >= 0 && (size_t)n < size && strcmp(l->kind, "shifted_window") == 0)
            n += snprintf(buf + n, size - (size_t)n, ", windows shifted by %d", w->shift);
        if (n >= 0 && (size_t)n < size && m->window_absolute)
            snprintf(buf + n, size - (size_t)n, "; + absolute %s (%lld rows)", m->learned_tensor,
                     (long long)m->learned_size);
        break;
    }
    case POSENC_LAYER_SINE_2D: { /* kept under 256 characters: the explain summary's buffer */
        const posenc_sine2d_params *p = &m->sine2d;
        if (p->layout == POSENC_SINE2D_RTDETR) {
            snprintf(buf, size, "RT-DETR 2D sine ([H*W][%d], rows y*W+x, [sin y | cos y | sin x | cos x] of %d "
                     "frequencies, temperature %g, positions 0.., float64) added to q, k", 2 * p->num_pos_feats,
                     p->num_pos_feats / 2, p->temperature_y);
            break;
        }
        int n = snprintf(buf, size, "DETR 2D sine (%d channels a side, y then x, sin/cos interleaved, temperature "
                         "%g/%g, %s / (side + %g) x %.9g%s) added to %s", p->num_pos_feats, p->temperature_y,
                         p->temperature_x, p->offset != 0.0 ? "(positions - 0.5)" : "positions", p->eps, p->scale,
                         p->exponent_by_product ? ", exponent k2 x (2/F)" : "",
                         strcmp(l->kind, "encoder") == 0          ? "encoder queries (keys)"
                         : strcmp(l->kind, "scaled_encoder") == 0 ? "encoder q, k x a learned per-token scale"
                                                                  : "cross-attention keys");
        if (n >= 0 && (size_t)n < size && m->sine2d_levels > 0 && strcmp(l->kind, "encoder") == 0)
            snprintf(buf + n, size - (size_t)n, " + %s[level] (%d levels)", m->sine2d_level_tensor, m->sine2d_levels);
        break;
    }
    case POSENC_LAYER_DEBERTA: { /* kept under 256 characters: the explain summary's buffer */
        const char *terms = m->deberta_c2p && m->deberta_p2c ? "c2p + p2c" : m->deberta_c2p ? "c2p" : "p2c";
        int n = m->deberta.position_buckets > 0
                    ? snprintf(buf, size, "DeBERTa %s: r = query - key, %d log buckets (max relative %d), rows "
                               "clamp(bucket + %d) of %s (%d rows)", terms, m->deberta.position_buckets,
                               m->deberta.max_relative_positions, m->deberta_span, m->deberta_tensor,
                               2 * m->deberta_span)
                    : snprintf(buf, size, "DeBERTa %s: r = query - key, no buckets, rows clamp(r + %d) of %s (%d rows)",
                               terms, m->deberta_span, m->deberta_tensor, 2 * m->deberta_span);
        if (n >= 0 && (size_t)n < size && m->deberta_absolute)
            snprintf(buf + n, size - (size_t)n, "; + absolute %s (%lld rows)", m->learned_tensor,
                     (long long)m->learned_size);
        break;
    }
    case POSENC_LAYER_ROPE_2D: {
        const posenc_rope2d_params *r = &m->rope2d;
        int n = snprintf(buf, size, "2-D RoPE by patch (row, column), %s frequencies, base %.10g, all %d channels, "
                         "%lld-pixel patches", r->kind == POSENC_ROPE2D_PIXTRAL ? "alternating (Pixtral)"
                                               : r->kind == POSENC_ROPE2D_DINOV3 ? "axial halves on [-1, 1] centres (DINOv3)"
                                                                               : "axial halves (Qwen2-VL)",
                         r->base, r->head_dim, (long long)m->rope2d_patch_size);
        if (n >= 0 && (size_t)n < size)
            n += m->rope2d_merge_per_image
                     ? snprintf(buf + n, size - (size_t)n, ", merge windows given per image at run time")
                 : r->merge > 1 ? snprintf(buf + n, size - (size_t)n, ", patches in %dx%d merge windows", r->merge, r->merge)
                                : snprintf(buf + n, size - (size_t)n, ", raster order");
        if (n >= 0 && (size_t)n < size && r->window > 0)
            n += snprintf(buf + n, size - (size_t)n, " in windows of %dx%d", r->window, r->window);
        if (n >= 0 && (size_t)n < size && m->rope2d_lead > 0)
            n += snprintf(buf + n, size - (size_t)n, "; %d lead token(s) at learned angles %s", m->rope2d_lead,
                          m->rope2d_lead_tensor);
        if (n >= 0 && (size_t)n < size && m->rope2d_plain > 0)
            n += snprintf(buf + n, size - (size_t)n, "; %d lead token(s) not rotated", m->rope2d_plain);
        if (n >= 0 && (size_t)n < size && strcmp(l->kind, "attention") != 0)
            n += snprintf(buf + n, size - (size_t)n, " (%s)", l->kind);
        if (n >= 0 && (size_t)n < size && m->rope2d_table[0])
            snprintf(buf + n, size - (size_t)n, "; + learned table %s resized per image (not described)", m->rope2d_table);
        break;
    }
    }
}

/* Append printf-style text to buf (cut at its size). */
static void add(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add(char *buf, size_t size, const char *fmt, ...) {
    size_t used = strlen(buf);
    if (used + 1 >= size) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, size - used, fmt, ap);
    va_end(ap);
}

/* "0-2, 4-6, ..., 32-34" for the layers whose words equal want; *count = how many layers. */
static void runs_text(const posenc_model *m, const char *want, char *buf, size_t size, int32_t *count) {
    char words[256];
    int32_t runs = 0, total = 0, i = 0, last_start = -1, last_end = -1;
    while (i < m->layer_count) {
        cli_model_layer_words(m, i, words, sizeof words);
        if (strcmp(words, want) != 0) {
            i++;
            continue;
        }
        int32_t e = i;
        while (e + 1 < m->layer_count) {
            cli_model_layer_words(m, e + 1, words, sizeof words);
            if (strcmp(words, want) != 0) break;
            e++;
        }
        if (++runs <= 4) {
            add(buf, size, "%s%d", runs > 1 ? ", " : "", i);
            if (e > i) add(buf, size, "-%d", e);
        }
        total += e - i + 1;
        last_start = i;
        last_end = e;
        i = e + 1;
    }
    if (runs > 4) {
        add(buf, size, ", ..., %d", last_start);
        if (last_end > last_start) add(buf, size, "-%d", last_end);
    }
    *count = total;
}

void cli_model_layers_text(const posenc_model *m, char *buf, size_t size) {
    buf[0] = '\0';
    if (m->layer_count == 0) {
        add(buf, size, "the config states no layer count\n");
        return;
    }
    char words[256], seen[8][256];
    int nseen = 0;
    for (int32_t i = 0; i < m->layer_count; i++) {
        cli_model_layer_words(m, i, words, sizeof words);
        bool done = false;
        for (int k = 0; k < nseen && !done; k++) done = strcmp(seen[k], words) == 0;
        if (done) continue;
        if (nseen < 8) memcpy(seen[nseen++], words, sizeof words);
        int32_t count = 0;
        char runs[160] = "";
        runs_text(m, words, runs, sizeof runs, &count);
        add(buf, size, "layer%s %s: %s [%d layer%s]\n", count > 1 ? "s" : "", runs, words, count, count == 1 ? "" : "s");
    }
}

int32_t cli_model_window_stage(const posenc_model *m, int32_t i) {
    for (int32_t s = 0, first = 0; s < m->window_stage_count && s < POSENC_MODEL_MAX_STAGES; s++) {
        first += m->window_stages[s].depth;
        if (i < first) return s;
    }
    return -1;
}

bool cli_model_query_scale_on(const posenc_model *m, int32_t i) {
    const posenc_query_scale *q = &m->query_scale;
    if (q->layers == POSENC_QUERY_SCALE_NONE || i < 0 || i >= m->layer_count) return false;
    const posenc_model_layer *l = &m->layers[i];
    /* attention layers only: mamba, conv and linear-attention blocks have no softmax query to scale */
    bool attention = strstr(l->kind, "attention") && strcmp(l->kind, "linear_attention") != 0;
    if (q->layers == POSENC_QUERY_SCALE_ALL) return attention;
    return attention && l->scheme == POSENC_LAYER_NOPE;
}

void cli_model_query_scale_words(const posenc_model *m, char *buf, size_t size) {
    const posenc_query_scale *q = &m->query_scale;
    buf[0] = '\0';
    if (q->layers == POSENC_QUERY_SCALE_NONE) return;
    int32_t on = 0;
    for (int32_t i = 0; i < m->layer_count; i++) on += cli_model_query_scale_on(m, i);
    char pos[48];
    if (q->shift) snprintf(pos, sizeof pos, "(pos %s %lld)", q->shift > 0 ? "+" : "-", (long long)llabs(q->shift));
    else snprintf(pos, sizeof pos, "pos");
    snprintf(buf, size, "query scale (attention temperature): q x (1 + %.9g x ln(1 + floor(%s / %lld))) on %s "
             "(%d of %d layers); exactly 1 below position %lld, %.6g from there", q->beta, pos,
             (long long)q->divisor,
             q->layers == POSENC_QUERY_SCALE_ALL ? "every attention layer" : "the NoPE attention layers only", on,
             m->layer_count, (long long)(q->divisor - q->shift), 1.0 + q->beta * log(2.0));
}

void cli_model_print_layers(const posenc_model *m) {
    char text[4096];
    cli_model_layers_text(m, text, sizeof text);
    printf("layers (%d):\n", m->layer_count);
    if (m->position_start != 0) /* PaliGemma: its forward counts positions from 1 */
        printf("  positions start at %lld (the first token's position id)\n", (long long)m->position_start);
    char qs[320];
    cli_model_query_scale_words(m, qs, sizeof qs);
    if (qs[0]) printf("  %s\n", qs);
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        printf("  %.*s\n", (int)n, line);
        line += n + (end != NULL);
    }
}

/* One JSON string array from a comma-separated list. */
static void json_list(const char *list) {
    printf("[");
    const char *s = list;
    bool first = true;
    while (s && *s) {
        const char *e = strstr(s, ", ");
        size_t n = e ? (size_t)(e - s) : strlen(s);
        char item[160];
        snprintf(item, sizeof item, "%.*s", (int)(n < sizeof item ? n : sizeof item - 1), s);
        printf("%s", first ? "" : ", ");
        cli_json_string(item);
        first = false;
        s = e ? e + 2 : NULL;
    }
    printf("]");
}

void cli_model_warning_words(const posenc_model *m, int index, char *buf, size_t size) {
    const posenc_model_config *c = &m->config;
    const posenc_rope_params *p = &c->rope;
    buf[0] = '\0';
    switch (index) {
    case 0:
        if (m->assumed && !c->family[0])
            snprintf(buf, size, "no model_type or architectures: read as HF's generic rope keys; layout half assumed");
        else if (m->assumed)
            snprintf(buf, size, "'%s' is not a family posenc knows: read as '%s' on purpose (--assume); assumed",
                     c->architecture, m->assumed_family);
        break;
    case 1:
        if (c->warnings & POSENC_CONFIG_WARN_LLAMA3_FLAT)
            snprintf(buf, size, "llama3 scaling with low_freq_factor == high_freq_factor (%g): no blend band (HF only "
                                "warns: accepted)", p->low_freq_factor);
        break;
    case 2:
        if (m->unused_keys[0]) snprintf(buf, size, "position keys posenc does not use: %s", m->unused_keys);
        break;
    case 3:
        if (c->warnings & POSENC_CONFIG_WARN_DUPLICATE_KEY)
            snprintf(buf, size, "'%s' is written more than once; the last value is used (as Python's json does)",
                     c->duplicate_key);
        break;
    case 4:
        if ((c->warnings & POSENC_CONFIG_WARN_NO_THETA) && m->rope_count > 0)
            snprintf(buf, size, "rope_theta is missing; 10000 assumed");
        break;
    case 5:
        if ((c->warnings & POSENC_CONFIG_WARN_NO_ORIGINAL) && m->rope_count > 0)
            snprintf(buf, size, "%s scaling without an original (trained) context length",
                     posenc_rope_scaling_name(p->scaling));
        break;
    case 6:
        if ((c->warnings & POSENC_CONFIG_WARN_FACTOR_MISMATCH) && m->rope_count > 0)
            snprintf(buf, size, "factor %.10g x original context %lld != max positions %lld", p->factor,
                     (long long)p->original_max_position, (long long)c->max_position_embeddings);
        break;
    case 7:
        if ((c->warnings & POSENC_CONFIG_WARN_ODD_PASSTHROUGH) && m->rope_count > 0)
            snprintf(buf, size, "partial rotary leaves an odd number of pass-through channels");
        break;
    case 8:
        if (c->warnings & POSENC_CONFIG_WARN_NO_MAX_POSITION) snprintf(buf, size, "max position embeddings is missing");
        break;
    case 9:
        if ((c->warnings & POSENC_CONFIG_WARN_TRANSFORMERS_DIVERGES) && strcmp(c->family, "phimoe") == 0)
            snprintf(buf, size, "longrope past the original context (%lld) rotates with long_factor, as transformers "
                                "4.x and the model's code do; transformers 5.18's PhimoeRotaryEmbedding keeps "
                                "short_factor at every length", (long long)p->original_max_position);
        else if (c->warnings & POSENC_CONFIG_WARN_TRANSFORMERS_DIVERGES)
            snprintf(buf, size, "attn_config.rope_theta %.17g is the checkpoint's base (transformers 4.x reads it); "
                                "transformers 5.18's DbrxConfig drops it and rotates with 10000",
                     p->base);
        break;
    default:
        break;
    }
}

static void rope_json(const posenc_model_rope *r) {
    const posenc_rope_params *p = &r->params;
    printf("\"base\": ");
    cli_json_number(p->base);
    printf(", \"layout\": \"%s\", \"head_dim\": %d, \"rotary_dim\": %d, \"rotary_offset\": %d, \"scaling\": \"%s\", "
           "\"factor\": ", layout_words(r->layout), r->attention_head_dim, r->rotary_dim, r->rotary_offset,
           posenc_rope_scaling_name(p->scaling));
    cli_json_number(p->factor);
    printf(", \"original_max_position\": %lld", (long long)p->original_max_position);
    if (r->dynamic_alpha > 0) {
        printf(", \"dynamic_alpha\": ");
        cli_json_number(r->dynamic_alpha);
    }
    if (r->mrope.axes > 0) {
        printf(", \"mrope_sections\": [");
        for (int k = 0; k < r->mrope.axes; k++) printf("%s%d", k ? ", " : "", r->mrope.sizes[k]);
        printf("], \"mrope_interleaved\": %s", r->mrope.kind == POSENC_MROPE_INTERLEAVED ? "true" : "false");
    }
}

int cli_model_print_json(const posenc_model *m, int64_t seq_len) {
    const posenc_model_config *c = &m->config;
    printf("{\"architecture\": ");
    cli_json_string(c->architecture);
    printf(", \"family\": ");
    cli_json_string(c->family);
    printf(", \"format\": \"%s\", \"assumed\": %s, \"assumed_family\": ", c->format == POSENC_CONFIG_GGUF ? "gguf" : "hf_json",
           m->assumed ? "true" : "false");
    if (m->assumed) cli_json_string(m->assumed_family);
    else printf("null");
    printf(", \"layout\": ");
    if (m->rope_count > 0) printf("\"%s\"", layout_words(c->layout));
    else printf("null");
    printf(", \"num_hidden_layers\": %d, \"num_attention_heads\": %d, \"hidden_size\": %d, "
           "\"max_position_embeddings\": %lld",
           c->num_hidden_layers, c->num_attention_heads, c->hidden_size, (long long)c->max_position_embeddings);
    printf(", \"position_start\": %lld", (long long)m->position_start);
    printf(",\n \"ropes\": [");
    for (int32_t i = 0; i < m->rope_count; i++) {
        const posenc_model_rope *r = &m->ropes[i];
        int32_t pairs = r->rotary_dim / 2;
        double *w = malloc(sizeof *w * (size_t)(pairs > 0 ? pairs : 1)), att = 1.0;
        posenc_error err = {0};
        if (!w || posenc_rope_frequencies(&r->params, seq_len, w, (size_t)pairs, &att, &err) != POSENC_OK) {
            free(w);
            printf("]}\n");
            return cli_fail_status("rope explain", &err);
        }
        printf("%s{\"index\": %d, \"name\": ", i ? ", " : "", i);
        cli_json_string(r->name);
        printf(", ");
        rope_json(r);
        printf(", \"attention_factor\": ");
        cli_json_number(att);
        printf(", \"inv_freq\": ");
        cli_json_numbers(w, (size_t)pairs);
        printf("}");
        free(w);
    }
    printf("],\n \"alibi\": ");
    if (m->alibi_heads > 0) {
        printf("{\"heads\": %d, \"max_bias\": ", m->alibi_heads);
        cli_json_number(m->alibi_max_bias);
        printf(", \"slopes\": ");
        cli_json_numbers(m->alibi_slopes, (size_t)m->alibi_heads);
        printf(", \"before_softmax_scale\": %s}", m->alibi_before_scale ? "true" : "false");
    } else {
        printf("null");
    }
    printf(",\n \"query_scale\": ");
    if (m->query_scale.layers != POSENC_QUERY_SCALE_NONE) {
        printf("{\"layers\": \"%s\", \"beta\": ", posenc_query_scale_layers_name(m->query_scale.layers));
        cli_json_number(m->query_scale.beta);
        printf(", \"divisor\": %lld, \"shift\": %lld}", (long long)m->query_scale.divisor,
               (long long)m->query_scale.shift);
    } else {
        printf("null");
    }
    printf(",\n \"layers\": [");
    for (int32_t i = 0; i < m->layer_count; i++) {
        const posenc_model_layer *l = &m->layers[i];
        printf("%s\n  {\"index\": %d, \"scheme\": \"%s\", \"kind\": ", i ? "," : "", i, posenc_layer_scheme_name(l->scheme));
        cli_json_string(l->kind);
        printf(", \"sliding_window\": %lld", (long long)l->sliding_window);
        printf(", \"query_scale\": %s", cli_model_query_scale_on(m, i) ? "true" : "false");
        switch (l->scheme) {
        case POSENC_LAYER_ROPE:
            printf(", \"rope\": %d, ", l->rope);
            rope_json(&m->ropes[l->rope]);
            break;
        case POSENC_LAYER_ALIBI:
            printf(", \"heads\": %d, \"max_bias\": ", m->alibi_heads);
            cli_json_number(m->alibi_max_bias);
            printf(", \"slope\": ");
            cli_json_numbers(m->alibi_slopes, (size_t)m->alibi_heads);
            break;
        case POSENC_LAYER_LEARNED: {
            bool own = m->decoder_learned_size > 0 && strcmp(l->kind, "decoder") == 0; /* BART: the decoder's table */
            printf(", \"tensor\": ");
            cli_json_string(own ? m->decoder_learned_tensor : m->learned_tensor);
            printf(", \"offset\": %lld, \"size\": %lld", (long long)(own ? m->decoder_learned_offset : m->learned_offset),
                   (long long)(own ? m->decoder_learned_size : m->learned_size));
            if (m->patch_grid_height > 0)
                printf(", \"image\": {\"image_size\": %lld, \"patch_size\": %lld, \"grid_height\": %lld, "
                       "\"grid_width\": %lld, \"prefix_rows\": %d, \"prefix_plain\": %d, \"resize\": \"%s\"}",
                       (long long)m->patch_image_size, (long long)m->patch_size, (long long)m->patch_grid_height,
                       (long long)m->patch_grid_width, m->patch_prefix_rows, m->patch_prefix_plain,
                       resize_words(m->patch_resize));
            break;
        }
        case POSENC_LAYER_SINUSOIDAL: {
            bool own = m->decoder_sinusoid_size > 0 && strcmp(l->kind, "decoder") == 0; /* Marian: the decoder's table */
            printf(", \"tensor\": ");
            cli_json_string(own ? m->decoder_sinusoid_tensor : m->sinusoid_tensor);
            printf(", \"size\": %lld, \"offset\": %lld, \"dim\": %d, \"base\": ",
                   (long long)(own ? m->decoder_sinusoid_size : m->sinusoid_size),
                   (long long)(own ? m->decoder_sinusoid_offset : m->sinusoid_offset), m->sinusoid.dim);
            cli_json_number(m->sinusoid.base);
            printf(", \"freqs\": \"%s\", \"layout\": \"%s\"", m->sinusoid.freqs == POSENC_FREQS_T2T ? "t2t" : "vaswani",
                   m->sinusoid.layout == POSENC_LAYOUT_HALF ? "half" : "interleaved");
            printf(", \"odd\": \"%s\", \"mode\": \"%s\", \"zero_row\": %lld, \"grows\": %s",
                   m->sinusoid.odd == POSENC_ODD_PAD ? "pad" : m->sinusoid.odd == POSENC_ODD_ROUND_UP ? "round_up" : "error",
                   m->sinusoid.mode == POSENC_MODE_TORCH_COMPAT ? "torch_compat" : "precise",
                   (long long)m->sinusoid_zero_row, m->sinusoid_grows ? "true" : "false");
            printf(", \"skips_padding\": %s", m->sinusoid_skips_padding ? "true" : "false");
            break;
        }
        case POSENC_LAYER_T5: {
            printf(", \"num_buckets\": %d, \"max_distance\": %d, \"bidirectional\": %s", m->t5.num_buckets,
                   m->t5.max_distance, strcmp(l->kind, "encoder") == 0 ? "true" : "false");
            /* bias_table: the tensor whose rows this layer adds; own_table: this layer holds it (and computes) */
            int32_t block = t5_block(m, i);
            char table[128];
            t5_table_name(m, i, m->t5_bias_every_layer ? block : 0, table, sizeof table);
            printf(", \"bias_table\": ");
            cli_json_string(table);
            printf(", \"own_table\": %s", m->t5_bias_every_layer || block == 0 ? "true" : "false");
            break;
        }
        case POSENC_LAYER_WINDOW_RELATIVE: {
            int32_t st = cli_model_window_stage(m, i);
            const posenc_window_stage *w = &m->window_stages[st < 0 ? 0 : st];
            printf(", \"window\": {\"stage\": %d, \"height\": %d, \"width\": %d, \"heads\": %d, "
                   "\"resolution\": [%d, %d], \"shift\": %d, \"pretrained_window\": %d, \"table_rows\": %lld, "
                   "\"cls\": %s, \"continuous\": %s, \"shared\": %s, \"per_layer\": %s, \"absolute\": %s, "
                   "\"query_stride\": %d, \"abs_offsets\": %s}",
                   st, w->window_height, w->window_width, w->heads, w->resolution_height, w->resolution_width,
                   strcmp(l->kind, "shifted_window") == 0 ? w->shift : 0, w->pretrained_window,
                   (long long)w->table_rows, m->window_cls ? "true" : "false",
                   m->window_continuous ? "true" : "false", m->window_shared ? "true" : "false",
                   m->window_per_layer ? "true" : "false", m->window_absolute ? "true" : "false", w->query_stride,
                   m->window_abs_offsets ? "true" : "false");
            if (m->window_absolute) {
                printf(", \"tensor\": ");
                cli_json_string(m->learned_tensor);
                printf(", \"offset\": %lld, \"size\": %lld", (long long)m->learned_offset,
                       (long long)m->learned_size);
                printf(", \"image\": {\"image_size\": %lld, \"patch_size\": %lld, \"grid_height\": %lld, "
                       "\"grid_width\": %lld, \"prefix_rows\": %d, \"prefix_plain\": %d, \"resize\": \"%s\"}",
                       (long long)m->patch_image_size, (long long)m->patch_size, (long long)m->patch_grid_height,
                       (long long)m->patch_grid_width, m->patch_prefix_rows, m->patch_prefix_plain,
                       resize_words(m->patch_resize));
            }
            break;
        }
        case POSENC_LAYER_DEBERTA:
            printf(", \"position_buckets\": %d, \"max_relative_positions\": %d, \"span\": %d, \"c2p\": %s, "
                   "\"p2c\": %s, \"share_att_key\": %s, \"norm_rel_ebd\": %s, \"relative_tensor\": ",
                   m->deberta.position_buckets, m->deberta.max_relative_positions, m->deberta_span,
                   m->deberta_c2p ? "true" : "false", m->deberta_p2c ? "true" : "false",
                   m->deberta_share_att_key ? "true" : "false", m->deberta_norm_rel_ebd ? "true" : "false");
            cli_json_string(m->deberta_tensor);
            printf(", \"absolute\": %s", m->deberta_absolute ? "true" : "false");
            if (m->deberta_absolute) {
                printf(", \"tensor\": ");
                cli_json_string(m->learned_tensor);
                printf(", \"offset\": %lld, \"size\": %lld", (long long)m->learned_offset,
                       (long long)m->learned_size);
            }
            break;
        case POSENC_LAYER_CONV_POSITION:
            printf(", \"conv\": {\"kernel\": %d, \"groups\": %d, \"layers\": %d, \"padding\": %d, \"trim\": %d, "
                   "\"stride\": %d, \"norm\": \"%s\", \"activation\": ", m->conv_pos_kernel, m->conv_pos_groups,
                   m->conv_pos_layers, m->conv_pos_padding, m->conv_pos_trim, m->conv_pos_stride,
                   m->conv_pos_norm == 1 ? "batch" : m->conv_pos_norm == 2 ? "layer" : "weight");
            cli_json_string(m->conv_pos_activation);
            printf(", \"tensor\": ");
            cli_json_string(m->conv_pos_tensor);
            printf("}");
            if (m->wavlm_num_buckets > 0) { /* the bias table is layer 0's; every layer gates it by content */
                printf(", \"relative_bias\": {\"kind\": \"wavlm\", \"num_buckets\": %d, \"max_distance\": %d, "
                       "\"gated\": true, \"own_table\": %s, \"tensor\": ", m->wavlm_num_buckets,
                       m->wavlm_max_distance, i == 0 ? "true" : "false");
                cli_json_string(m->wavlm_tensor);
                printf("}");
            }
            break;
        case POSENC_LAYER_ROPE_2D:
            printf(", \"rope_2d\": {\"kind\": \"%s\", \"head_dim\": %d, \"base\": ",
                   posenc_rope2d_kind_name(m->rope2d.kind), m->rope2d.head_dim);
            cli_json_number(m->rope2d.base);
            printf(", \"merge\": %d, \"window\": %d, \"patch_size\": %lld, \"merge_per_image\": %s, \"lead\": %d, "
                   "\"lead_tensor\": ", m->rope2d.merge, m->rope2d.window, (long long)m->rope2d_patch_size,
                   m->rope2d_merge_per_image ? "true" : "false", m->rope2d_lead);
            cli_json_string(m->rope2d_lead_tensor);
            printf(", \"resized_table\": ");
            cli_json_string(m->rope2d_table);
            printf(", \"plain\": %d}", m->rope2d_plain);
            break;
        case POSENC_LAYER_SINE_2D: {
            const posenc_sine2d_params *p = &m->sine2d;
            printf(", \"sine2d\": {\"num_pos_feats\": %d, \"temperature_y\": ", p->num_pos_feats);
            cli_json_number(p->temperature_y);
            printf(", \"temperature_x\": ");
            cli_json_number(p->temperature_x);
            printf(", \"normalize\": %d, \"offset\": ", p->normalize);
            cli_json_number(p->offset);
            printf(", \"eps\": ");
            cli_json_number(p->eps);
            printf(", \"scale\": ");
            cli_json_number(p->scale);
            printf(", \"exponent_by_product\": %d, \"layout\": \"%s\", \"mode\": \"%s\", \"module\": ",
                   p->exponent_by_product, p->layout == POSENC_SINE2D_RTDETR ? "rtdetr" : "detr",
                   p->mode == POSENC_MODE_TORCH_COMPAT ? "torch_compat" : "precise");
            cli_json_string(m->sine2d_module);
            printf(", \"levels\": %d, \"level_tensor\": ", m->sine2d_levels);
            cli_json_string(m->sine2d_level_tensor);
            printf("}");
            break;
        }
        case POSENC_LAYER_NOPE:
            break;
        }
        printf("}");
    }
    printf("],\n \"unused_keys\": ");
    json_list(m->unused_keys);
    printf(", \"keys_used\": ");
    json_list(m->assumed ? c->keys_used : "");
    printf(", \"defaults_used\": ");
    json_list(c->defaults_used);
    printf(",\n \"warnings\": [");
    bool first = true;
    for (int k = 0; k < 10; k++) {
        char words[512];
        cli_model_warning_words(m, k, words, sizeof words);
        if (!words[0]) continue;
        printf("%s", first ? "" : ", ");
        cli_json_string(words);
        first = false;
    }
    printf("]}\n");
    return EXIT_OK;
}
