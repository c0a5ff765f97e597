/* config_hf_window.c: FAMILY_WINDOW_RELATIVE, the vision models whose attention adds a learned 2D relative bias
 * inside a window of patches (posenc_model.window_*, posenc.h 5.3c): Swin and its copies, SwinV2, Swin2SR, BEiT.
 * One row per model type; what each builds is read off its modeling file in transformers 5.18. */
#include "config_internal.h"

#include <string.h>

typedef enum {
    WIN_SWIN,      /* SwinLayer.set_shift_and_window_size: at run time a stage whose side is <= window_size gets
                      shift 0; a smaller side shrinks the window below its table, and the forward fails */
    WIN_MASKFORMER, /* MaskFormerSwinLayer: always window_size, pads the feature map, never clamps */
    WIN_V2,        /* Swinv2Layer._compute_window_shift at build time, stage side grid // 2^s (height only) */
    WIN_SR,        /* Swin2SR: the same rule, every stage at the full grid (no patch merging) */
    WIN_BEIT,      /* one window over the whole grid + CLS (BeitRelativePositionBias) */
    WIN_LEVIT      /* attention over the whole grid, (|dy|, |dx|) rows; subsample attention between stages */
} window_kind;

typedef struct {
    const char *model_type;
    window_kind kind;
    int64_t image_size, patch_size, window_size; /* the config class defaults */
    int32_t stages;                              /* default depths / num_heads: stages x depth, stages x heads */
    const int32_t *depths, *heads;
    int absolute_works; /* use_absolute_embeddings builds a table the forward can add (Swin: num_patches rows;
                           Donut, MaskFormer, SwinV2, Swin2SR build num_patches + 1 rows for num_patches tokens) */
} window_row;

static const int32_t swin_depths[] = {2, 2, 6, 2}, swin_heads[] = {3, 6, 12, 24};
static const int32_t sr_depths[] = {6, 6, 6, 6, 6, 6}, sr_heads[] = {6, 6, 6, 6, 6, 6};
static const int32_t levit_depths[] = {4, 4, 4}, levit_heads[] = {4, 8, 12}, levit_hidden[] = {128, 256, 384},
                     levit_key_dim[] = {16, 16, 16};

static const window_row window_rows[] = {
    {"swin", WIN_SWIN, 224, 4, 7, 4, swin_depths, swin_heads, 1},
    {"donut-swin", WIN_SWIN, 224, 4, 7, 4, swin_depths, swin_heads, 0},
    {"maskformer-swin", WIN_MASKFORMER, 224, 4, 7, 4, swin_depths, swin_heads, 0},
    {"swinv2", WIN_V2, 224, 4, 7, 4, swin_depths, swin_heads, 0},
    {"swin2sr", WIN_SR, 64, 1, 8, 6, sr_depths, sr_heads, 0},
    {"beit", WIN_BEIT, 224, 16, 0, 0, NULL, NULL, 1},
    {"data2vec-vision", WIN_BEIT, 224, 16, 0, 0, NULL, NULL, 1},
    {"levit", WIN_LEVIT, 224, 16, 0, 3, levit_depths, levit_heads, 0},
};

static void note_default(hf_reader *h, const char *key, long long value) {
    char text[64];
    snprintf(text, sizeof text, "%s=%lld", key, value);
    config_note_(h->out->defaults_used, sizeof h->out->defaults_used, text);
}

/* An integer or an [h, w] pair (the classes' `x if isinstance(x, Iterable) else (x, x)`); pair_ok 0: integer only. */
static posenc_status side_pair(hf_reader *h, const cJSON *cfg, const char *key, int64_t fallback, bool pair_ok,
                               int64_t out[2]) {
    const cJSON *v = hf_use_(h, cfg, key);
    out[0] = out[1] = fallback;
    if (!v) {
        note_default(h, key, (long long)fallback);
    } else if (cJSON_IsArray(v)) {
        RETURN_ERROR_IF(!pair_ok, h->err, POSENC_ERR_UNSUPPORTED,
                        "config.json: '%s' is a list: %s divides by it as one integer (the forward fails on a pair)",
                        key, h->family->model_type);
        RETURN_ERROR_IF(cJSON_GetArraySize(v) != 2, h->err, POSENC_ERR_FORMAT,
                        "config.json: '%s' must be an integer or [height, width], got %d entries", key,
                        cJSON_GetArraySize(v));
        for (int i = 0; i < 2; i++)
            FORWARD_IF_ERROR(hf_as_count_(cJSON_GetArrayItem(v, i), "", key, (int64_t)1 << 30, &out[i], h->err));
    } else {
        FORWARD_IF_ERROR(hf_as_count_(v, "", key, (int64_t)1 << 30, &out[0], h->err));
        out[1] = out[0];
    }
    RETURN_ERROR_IF(out[0] < 1 || out[1] < 1, h->err, POSENC_ERR_FORMAT, "config.json: '%s' %lld x %lld must be >= 1",
                    key, (long long)out[0], (long long)out[1]);
    return POSENC_OK;
}

/* A list of positive integers (depths, num_heads, pretrained_window_sizes); absent: the default list. */
static posenc_status int_list(hf_reader *h, const cJSON *cfg, const char *key, const int32_t *fallback, int32_t n,
                              int32_t min, int32_t *out, int32_t *count) {
    const cJSON *v = hf_use_(h, cfg, key);
    if (!v || cJSON_IsNull(v)) {
        for (int32_t i = 0; i < n; i++) out[i] = fallback ? fallback[i] : 0;
        *count = n;
        char text[64];
        snprintf(text, sizeof text, "%s=default", key);
        config_note_(h->out->defaults_used, sizeof h->out->defaults_used, text);
        return POSENC_OK;
    }
    RETURN_ERROR_IF(!cJSON_IsArray(v), h->err, POSENC_ERR_FORMAT, "config.json: '%s' must be a list of integers",
                    key);
    int size = cJSON_GetArraySize(v);
    RETURN_ERROR_IF(size < 1 || size > POSENC_MODEL_MAX_STAGES, h->err, POSENC_ERR_UNSUPPORTED,
                    "config.json: '%s' has %d entries: posenc reads 1..%d stages", key, size, POSENC_MODEL_MAX_STAGES);
    for (int i = 0; i < size; i++) {
        int64_t x = 0;
        FORWARD_IF_ERROR(hf_as_count_(cJSON_GetArrayItem(v, i), "", key, 1 << 20, &x, h->err));
        RETURN_ERROR_IF(x < min, h->err, POSENC_ERR_FORMAT, "config.json: '%s'[%d] is %lld, must be >= %d", key, i,
                        (long long)x, (int)min);
        out[i] = (int32_t)x;
    }
    *count = size;
    return POSENC_OK;
}

static posenc_status flag(hf_reader *h, const cJSON *cfg, const char *key, bool *out) {
    const cJSON *v = hf_use_(h, cfg, key);
    *out = false;
    if (!v) return POSENC_OK;
    RETURN_ERROR_IF(!cJSON_IsBool(v), h->err, POSENC_ERR_FORMAT, "config.json: '%s' must be true or false", key);
    *out = cJSON_IsTrue(v);
    return POSENC_OK;
}

/* The learned absolute table over the patches (and BEiT's CLS), as a ViT-style image table (posenc.h patch_*). */
static void absolute_table(posenc_model *m, const config_family *f, const int64_t image[2], const int64_t patch[2],
                           int32_t cls) {
    m->window_absolute = 1;
    m->patch_image_size = image[0];
    m->patch_size = patch[0];
    m->patch_grid_height = image[0] / patch[0];
    m->patch_grid_width = image[1] / patch[1];
    m->patch_prefix_rows = cls;
    m->patch_resize = 1; /* bicubic with interpolate_pos_encoding=True, else the table as it is */
    config_copy_name_(m->learned_tensor, sizeof m->learned_tensor, f->table, strlen(f->table));
    m->learned_offset = 0;
    m->learned_size = cls + m->patch_grid_height * m->patch_grid_width;
}

static posenc_status beit_layers(hf_reader *h, const cJSON *cfg, const window_row *row, const int64_t image[2],
                                 const int64_t patch[2]) {
    posenc_model *m = h->model;
    bool absolute = false, relative = false, shared = false, has = false;
    FORWARD_IF_ERROR(flag(h, cfg, "use_absolute_position_embeddings", &absolute));
    FORWARD_IF_ERROR(flag(h, cfg, "use_relative_position_bias", &relative));
    FORWARD_IF_ERROR(flag(h, cfg, "use_shared_relative_position_bias", &shared));
    int64_t layers = 12, heads = 12, hidden = 768;
    FORWARD_IF_ERROR(hf_count_(h, cfg, "", "num_hidden_layers", POSENC_MODEL_MAX_LAYERS, &layers, &has));
    if (!has) note_default(h, "num_hidden_layers", layers);
    FORWARD_IF_ERROR(hf_count_(h, cfg, "", "num_attention_heads", 1 << 20, &heads, &has));
    if (!has) note_default(h, "num_attention_heads", heads);
    FORWARD_IF_ERROR(hf_count_(h, cfg, "", "hidden_size", (int64_t)1 << 30, &hidden, &has));
    RETURN_ERROR_IF(layers < 1 || heads < 1, h->err, POSENC_ERR_FORMAT,
                    "config.json: num_hidden_layers %lld and num_attention_heads %lld must be >= 1", (long long)layers,
                    (long long)heads);
    int64_t gh = image[0] / patch[0], gw = image[1] / patch[1];
    RETURN_ERROR_IF(gh < 1 || gw < 1 || gh > POSENC_WINDOW_MAX || gw > POSENC_WINDOW_MAX, h->err, POSENC_ERR_FORMAT,
                    "config.json: image_size %lld x %lld / patch_size %lld gives a %lld x %lld patch grid (1..%d a "
                    "side)", (long long)image[0], (long long)image[1], (long long)patch[0], (long long)gh,
                    (long long)gw, POSENC_WINDOW_MAX);
    h->out->num_hidden_layers = (int32_t)layers;
    h->out->num_attention_heads = (int32_t)heads;
    h->out->hidden_size = (int32_t)hidden;
    FORWARD_IF_ERROR(config_layers_alloc_(m, layers, h->err));
    m->rope_count = 0;
    if (absolute) absolute_table(m, h->family, image, patch, 1);
    if (!relative && !shared) { /* the absolute table alone (LEARNED), or no positions at all */
        m->window_absolute = 0;
        for (int64_t i = 0; i < layers; i++)
            config_layer_set_(m, i, absolute ? POSENC_LAYER_LEARNED : POSENC_LAYER_NOPE, -1, "attention", 0);
        return POSENC_OK;
    }
    (void)row;
    posenc_window_stage *s = &m->window_stages[0];
    m->window_stage_count = 1;
    s->depth = (int32_t)layers;
    s->heads = (int32_t)heads;
    s->resolution_height = s->window_height = (int32_t)gh;
    s->resolution_width = s->window_width = (int32_t)gw;
    s->table_rows = posenc_window_table_rows(s->window_height, s->window_width, 1);
    m->window_cls = 1;
    m->window_shared = shared;
    m->window_per_layer = relative;
    for (int64_t i = 0; i < layers; i++) config_layer_set_(m, i, POSENC_LAYER_WINDOW_RELATIVE, -1, "attention", 0);
    return POSENC_OK;
}

/* LeViT (LevitModel, transformers 5.18): image_size // patch_size patches a side (the four stride convolutions must
 * give the same, else the forward fails); per stage depths[s] attention layers over the whole grid (heads
 * num_attention_heads[s]), then, where down_ops[s] is a "Subsample", one subsample attention whose queries sit on
 * every stride-th patch (LevitConfig's default: ["Subsample", key_dim[0], hidden_sizes[s] // key_dim[0], 4, 2, 2]
 * between stages). */
static posenc_status levit_layers(hf_reader *h, const cJSON *cfg, const window_row *row, const int64_t image[2],
                                  const int64_t patch[2]) {
    posenc_model *m = h->model;
    RETURN_ERROR_IF(image[0] != image[1] || patch[0] != patch[1], h->err, POSENC_ERR_UNSUPPORTED,
                    "config.json: image_size %lld x %lld / patch_size %lld x %lld: levit builds a square grid of "
                    "image_size // patch_size; a pair is not read", (long long)image[0], (long long)image[1],
                    (long long)patch[0], (long long)patch[1]);
    int32_t depths[POSENC_MODEL_MAX_STAGES], heads[POSENC_MODEL_MAX_STAGES], hidden[POSENC_MODEL_MAX_STAGES],
        key_dim[POSENC_MODEL_MAX_STAGES], nd = 0, nh = 0, nhid = 0, nk = 0;
    FORWARD_IF_ERROR(int_list(h, cfg, "depths", row->depths, row->stages, 1, depths, &nd));
    FORWARD_IF_ERROR(int_list(h, cfg, "num_attention_heads", row->heads, row->stages, 1, heads, &nh));
    FORWARD_IF_ERROR(int_list(h, cfg, "hidden_sizes", levit_hidden, 3, 1, hidden, &nhid));
    FORWARD_IF_ERROR(int_list(h, cfg, "key_dim", levit_key_dim, 3, 1, key_dim, &nk));
    RETURN_ERROR_IF(nh < nd || nhid < nd || nk < 1, h->err, POSENC_ERR_FORMAT,
                    "config.json: 'depths' has %d stages, 'num_attention_heads' %d and 'hidden_sizes' %d entries: "
                    "each stage needs its own", (int)nd, (int)nh, (int)nhid);
    /* the patch embedding: four convolutions (kernel_size, stride, padding); the layers are built for
     * image_size // patch_size, so another output size breaks the forward */
    int64_t kernel = 3, conv_stride = 2, pad = 1, n = image[0];
    bool has = false;
    FORWARD_IF_ERROR(hf_count_(h, cfg, "", "kernel_size", 1 << 20, &kernel, &has));
    FORWARD_IF_ERROR(hf_count_(h, cfg, "", "stride", 1 << 20, &conv_stride, &has));
    FORWARD_IF_ERROR(hf_count_(h, cfg, "", "padding", 1 << 20, &pad, &has));
    RETURN_ERROR_IF(conv_stride < 1, h->err, POSENC_ERR_FORMAT, "config.json: 'stride' must be >= 1");
    for (int i = 0; i < 4 && n > 0; i++) n = n + 2 * pad >= kernel ? (n + 2 * pad - kernel) / conv_stride + 1 : 0;
    int64_t r = image[0] / patch[0];
    RETURN_ERROR_IF(n != r || r < 1 || r > POSENC_WINDOW_MAX, h->err, POSENC_ERR_UNSUPPORTED,
                    "config.json: image_size %lld: the patch convolutions give %lld x %lld patches but levit builds "
                    "its attention for image_size // patch_size = %lld; its forward fails; not read",
                    (long long)image[0], (long long)n, (long long)n, (long long)r);
    /* down_ops: the file's list wins over the class's (LevitConfig sets the given keys after building its own);
     * LevitModel appends [""] and reads down_ops[stage] for every stage: [kind, key_dim, heads, attention_ratio,
     * mlp_ratio, stride], kind "Subsample" adding the subsample attention */
    int32_t sub_heads[POSENC_MODEL_MAX_STAGES], sub_stride[POSENC_MODEL_MAX_STAGES];
    const cJSON *ops = hf_use_(h, cfg, "down_ops");
    RETURN_ERROR_IF(ops && !cJSON_IsArray(ops), h->err, POSENC_ERR_FORMAT, "config.json: 'down_ops' must be a list");
    int n_ops = ops ? cJSON_GetArraySize(ops) : nd - 1;
    RETURN_ERROR_IF(n_ops < nd - 1, h->err, POSENC_ERR_FORMAT,
                    "config.json: 'down_ops' has %d entries for %d stages: LevitModel reads one per stage but the last "
                    "and fails", n_ops, (int)nd);
    for (int32_t s = 0; s < nd; s++) {
        sub_heads[s] = sub_stride[s] = 0;
        if (!ops) { /* the class default: between stages only */
            if (s + 1 < nd) {
                sub_heads[s] = hidden[s] / key_dim[0];
                sub_stride[s] = 2;
            }
            continue;
        }
        if (s >= n_ops) continue; /* the appended [""] */
        const cJSON *op = cJSON_GetArrayItem(ops, s), *kind = cJSON_GetArrayItem(op, 0);
        if (!cJSON_IsString(kind) || strcmp(kind->valuestring, "Subsample") != 0) continue;
        RETURN_ERROR_IF(cJSON_GetArraySize(op) < 6, h->err, POSENC_ERR_FORMAT,
                        "config.json: 'down_ops'[%d] is a Subsample with %d entries, needs 6 (kind, key_dim, heads, "
                        "attention_ratio, mlp_ratio, stride)", (int)s, cJSON_GetArraySize(op));
        int64_t hd = 0, st = 0;
        FORWARD_IF_ERROR(hf_as_count_(cJSON_GetArrayItem(op, 2), "down_ops[].", "heads", 1 << 20, &hd, h->err));
        FORWARD_IF_ERROR(hf_as_count_(cJSON_GetArrayItem(op, 5), "down_ops[].", "stride", 1 << 20, &st, h->err));
        sub_heads[s] = (int32_t)hd;
        sub_stride[s] = (int32_t)st;
    }
    int32_t stages = 0;
    int64_t total = 0;
    for (int32_t s = 0; s < nd; s++) {
        RETURN_ERROR_IF(stages >= POSENC_MODEL_MAX_STAGES, h->err, POSENC_ERR_UNSUPPORTED,
                        "config.json: %d stages and their subsample layers: posenc reads up to %d", (int)nd,
                        POSENC_MODEL_MAX_STAGES);
        posenc_window_stage *st = &m->window_stages[stages++];
        st->depth = depths[s];
        st->heads = heads[s];
        st->resolution_height = st->resolution_width = st->window_height = st->window_width = (int32_t)r;
        st->table_rows = r * r;
        total += depths[s];
        if (sub_stride[s] > 0) { /* down_ops[s]: the subsample attention */
            RETURN_ERROR_IF(stages >= POSENC_MODEL_MAX_STAGES, h->err, POSENC_ERR_UNSUPPORTED,
                            "config.json: %d stages and their subsample layers: posenc reads up to %d", (int)nd,
                            POSENC_MODEL_MAX_STAGES);
            RETURN_ERROR_IF(sub_heads[s] < 1 || sub_stride[s] > r, h->err, POSENC_ERR_FORMAT,
                            "config.json: down_ops[%d]: %d heads, stride %d over %lld patches (needs >= 1 head, "
                            "stride <= the grid)", (int)s, (int)sub_heads[s], (int)sub_stride[s], (long long)r);
            posenc_window_stage *sub = &m->window_stages[stages++];
            sub->depth = 1;
            sub->heads = sub_heads[s];
            sub->resolution_height = sub->resolution_width = sub->window_height = sub->window_width = (int32_t)r;
            sub->table_rows = r * r;
            sub->query_stride = sub_stride[s];
            r = (r - 1) / sub_stride[s] + 1;
            total++;
        }
    }
    h->out->num_hidden_layers = (int32_t)total;
    h->out->num_attention_heads = heads[0];
    h->out->hidden_size = hidden[0];
    FORWARD_IF_ERROR(config_layers_alloc_(m, total, h->err));
    m->rope_count = 0;
    m->window_stage_count = stages;
    m->window_abs_offsets = 1;
    m->window_per_layer = 1;
    int64_t i = 0;
    for (int32_t s = 0; s < stages; s++)
        for (int32_t b = 0; b < m->window_stages[s].depth; b++, i++)
            config_layer_set_(m, i, POSENC_LAYER_WINDOW_RELATIVE, -1,
                              m->window_stages[s].query_stride ? "subsample_attention" : "attention", 0);
    return POSENC_OK;
}

posenc_status hf_window_layers_(hf_reader *h, const cJSON *cfg) {
    posenc_model *m = h->model;
    const config_family *f = h->family;
    const window_row *row = NULL;
    for (size_t i = 0; i < sizeof window_rows / sizeof window_rows[0] && !row; i++)
        if (strcmp(window_rows[i].model_type, f->model_type) == 0) row = &window_rows[i];
    RETURN_ERROR_IF(!row, h->err, POSENC_ERR_UNSUPPORTED, "config.json: %s has no window row", f->model_type);
    int64_t image[2], patch[2];
    FORWARD_IF_ERROR(side_pair(h, cfg, "image_size", row->image_size, true, image));
    FORWARD_IF_ERROR(side_pair(h, cfg, "patch_size", row->patch_size, row->kind != WIN_BEIT, patch));
    if (row->kind == WIN_BEIT) return beit_layers(h, cfg, row, image, patch);
    if (row->kind == WIN_LEVIT) return levit_layers(h, cfg, row, image, patch);

    int64_t window = row->window_size;
    bool has = false, absolute = false;
    const cJSON *wv = hf_member_(cfg, "window_size");
    RETURN_ERROR_IF(wv && !cJSON_IsNumber(wv), h->err, POSENC_ERR_UNSUPPORTED,
                    "config.json: 'window_size' is not an integer: %s builds square windows of one integer side",
                    f->model_type);
    FORWARD_IF_ERROR(hf_count_(h, cfg, "", "window_size", POSENC_WINDOW_MAX, &window, &has));
    if (!has) note_default(h, "window_size", window);
    RETURN_ERROR_IF(window < 1, h->err, POSENC_ERR_FORMAT, "config.json: 'window_size' %lld must be >= 1",
                    (long long)window);
    int32_t depths[POSENC_MODEL_MAX_STAGES], heads[POSENC_MODEL_MAX_STAGES], nd = 0, nh = 0;
    FORWARD_IF_ERROR(int_list(h, cfg, "depths", row->depths, row->stages, 1, depths, &nd));
    FORWARD_IF_ERROR(int_list(h, cfg, "num_heads", row->heads, row->stages, 1, heads, &nh));
    /* the encoder reads num_heads[stage] for each stage of depths: extra entries are unused, too few fail */
    RETURN_ERROR_IF(nh < nd, h->err, POSENC_ERR_FORMAT,
                    "config.json: 'depths' has %d stages and 'num_heads' only %d entries: each stage needs its heads",
                    (int)nd, (int)nh);
    /* SwinV2: Swinv2Encoder reads pretrained_window_sizes[stage] (null: the class default, zeros); 0 = divide the
     * coordinates by the window's own side - 1, else by pretrained - 1 (1: a division by zero) */
    int32_t pretrained[POSENC_MODEL_MAX_STAGES] = {0}, np_ = 0;
    if (row->kind == WIN_V2) {
        FORWARD_IF_ERROR(int_list(h, cfg, "pretrained_window_sizes", NULL, nd, 0, pretrained, &np_));
        RETURN_ERROR_IF(np_ < nd, h->err, POSENC_ERR_FORMAT,
                        "config.json: 'pretrained_window_sizes' has %d entries for %d stages: Swinv2Encoder reads one "
                        "per stage and fails", (int)np_, (int)nd);
        for (int32_t s = 0; s < nd; s++)
            RETURN_ERROR_IF(pretrained[s] == 1 || pretrained[s] > POSENC_WINDOW_MAX, h->err, POSENC_ERR_UNSUPPORTED,
                            "config.json: 'pretrained_window_sizes'[%d] is %d: the coordinates divide by "
                            "pretrained - 1 (0 = none, else 2..%d)", (int)s, (int)pretrained[s], POSENC_WINDOW_MAX);
    }
    FORWARD_IF_ERROR(flag(h, cfg, "use_absolute_embeddings", &absolute));
    RETURN_ERROR_IF(absolute && !row->absolute_works, h->err, POSENC_ERR_UNSUPPORTED,
                    "config.json: use_absolute_embeddings true: %s builds a table of num_patches + 1 rows and adds "
                    "it to the num_patches patch tokens, which transformers 5.18's forward cannot do (a shape "
                    "error); not read", f->model_type);
    int64_t embed = 96;
    FORWARD_IF_ERROR(hf_count_(h, cfg, "", "embed_dim", (int64_t)1 << 30, &embed, &has));
    /* the patch grid the first stage sees: SwinPatchEmbeddings pads the image to whole patches at run time
     * (ceil); SwinV2 / Swin2SR build their layers for the grid image_size // patch_size (floor) */
    int64_t rh, rw;
    if (row->kind == WIN_SWIN || row->kind == WIN_MASKFORMER) {
        rh = (image[0] + patch[0] - 1) / patch[0];
        rw = (image[1] + patch[1] - 1) / patch[1];
    } else {
        rh = image[0] / patch[0];
        rw = image[1] / patch[1];
    }
    int64_t total = 0;
    for (int32_t s = 0; s < nd; s++) {
        posenc_window_stage *st = &m->window_stages[s];
        RETURN_ERROR_IF(rh < 1 || rw < 1, h->err, POSENC_ERR_FORMAT,
                        "config.json: image_size %lld x %lld leaves stage %d no patch (%lld x %lld): %s cannot "
                        "build it", (long long)image[0], (long long)image[1], (int)s, (long long)rh, (long long)rw,
                        f->model_type);
        int64_t win = window, shift = window / 2;
        if (row->kind == WIN_SWIN) {
            int64_t side = rh < rw ? rh : rw;
            RETURN_ERROR_IF(side < window, h->err, POSENC_ERR_UNSUPPORTED,
                            "config.json: window_size %lld is larger than stage %d's %lld x %lld patches: %s then "
                            "shrinks the window below its %lld x %lld bias table and its forward fails; not read",
                            (long long)window, (int)s, (long long)rh, (long long)rw, f->model_type,
                            (long long)window, (long long)window);
            if (side <= window) shift = 0;
        } else if (row->kind == WIN_SR) {
            /* Swin2SRModel pads the image to whole windows before the layers built for the unpadded grid */
            RETURN_ERROR_IF(rh < window || rw < window || image[0] % window || image[1] % window, h->err,
                            POSENC_ERR_UNSUPPORTED,
                            "config.json: image_size %lld x %lld is not whole windows of window_size %lld: swin2sr "
                            "builds its layers for the %lld x %lld patch grid but pads the image to whole windows at "
                            "run time, and its forward fails; not read", (long long)image[0], (long long)image[1],
                            (long long)window, (long long)rh, (long long)rw);
            if (rh <= window) shift = 0;
        } else if (row->kind == WIN_V2) {
            win = rh < window ? rh : window;
            if (rh <= win) shift = 0;
        }
        st->depth = depths[s];
        st->heads = heads[s];
        st->resolution_height = (int32_t)rh;
        st->resolution_width = (int32_t)rw;
        st->window_height = st->window_width = (int32_t)win;
        st->shift = (int32_t)shift;
        st->pretrained_window = pretrained[s];
        st->table_rows = posenc_window_table_rows((int32_t)win, (int32_t)win, 0);
        total += depths[s];
        if (row->kind == WIN_SWIN || row->kind == WIN_MASKFORMER) { /* patch merging: pad to even, halve */
            rh = (rh + 1) / 2;
            rw = (rw + 1) / 2;
        } else if (row->kind == WIN_V2) { /* Swinv2Encoder: grid // 2^s */
            rh = image[0] / patch[0] >> (s + 1);
            rw = image[1] / patch[1] >> (s + 1);
        }
    }
    RETURN_ERROR_IF(total > POSENC_MODEL_MAX_LAYERS, h->err, POSENC_ERR_LIMIT,
                    "config.json: depths add up to %lld layers (over %d)", (long long)total, POSENC_MODEL_MAX_LAYERS);
    h->out->num_hidden_layers = (int32_t)total;
    h->out->num_attention_heads = heads[0];
    h->out->hidden_size = (int32_t)embed;
    FORWARD_IF_ERROR(config_layers_alloc_(m, total, h->err));
    m->rope_count = 0;
    m->window_stage_count = nd;
    m->window_continuous = row->kind == WIN_V2 || row->kind == WIN_SR;
    m->window_per_layer = 1;
    if (absolute) {
        int64_t grid_image[2] = {image[0], image[1]};
        absolute_table(m, f, grid_image, patch, 0);
    }
    int64_t i = 0;
    for (int32_t s = 0; s < nd; s++)
        for (int32_t b = 0; b < depths[s]; b++, i++)
            config_layer_set_(m, i, POSENC_LAYER_WINDOW_RELATIVE, -1,
                              b % 2 == 1 && m->window_stages[s].shift > 0 ? "shifted_window" : "window", 0);
    return POSENC_OK;
}
