/* cli.h: shared pieces of the posenc tool (argument parsing, output files).
 * The tool includes only posenc.h from the library. */
#ifndef POSENC_CLI_H
#define POSENC_CLI_H

#include "posenc.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exit codes (documented in docs/errors.md and `posenc --help`). */
enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_USAGE = 2 };

/* ---- option parsing ---------------------------------------------------- */

typedef struct {
    const char *name;  /* long name without dashes, e.g. "len"; "o" for -o */
    const char *value; /* metavariable if it takes a value ("N"), NULL for a flag */
    const char *help;
} cli_option;

#define CLI_MAX_OPTIONS 64
#define CLI_MAX_POSITIONAL 8

typedef struct {
    const char *command;          /* e.g. "table", for messages */
    const cli_option *options;    /* terminated by {NULL} */
    const char *values[CLI_MAX_OPTIONS];
    bool seen[CLI_MAX_OPTIONS];
    const char *positional[CLI_MAX_POSITIONAL];
    int positional_count;
    bool help;
} cli_args;

/* Parse argv (after the command words). Returns EXIT_OK, or EXIT_USAGE after
 * printing the error and a hint. --help / -h set args->help. */
int cli_parse(cli_args *args, const char *command, const cli_option *options, int argc,
              char **argv, int max_positional);
void cli_print_options(const cli_option *options);

bool cli_has(const cli_args *args, const char *name);
/* A peer's shell command line into out (vsnprintf of fmt, which quotes the
 * interpreter and script as '%s'): false when either holds a single quote
 * (it would end the quoting) or the line does not fit. */
bool cli_shell_command(char *out, size_t size, const char *python, const char *script, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/* Is `name` one of the comma-separated items of `list`? (NULL list: every name is.) */
bool cli_list_has(const char *list, const char *name);
const char *cli_string(const cli_args *args, const char *name, const char *fallback);
/* Typed getters: on a bad value they print "posenc CMD: --name must be ..., got 'x'"
 * and return false (the caller exits with EXIT_USAGE). Absent options keep *out. */
bool cli_int64(const cli_args *args, const char *name, int64_t min, int64_t max, int64_t *out);
bool cli_int32(const cli_args *args, const char *name, int32_t min, int32_t max, int32_t *out);
bool cli_double(const cli_args *args, const char *name, double *out);
/* Choose one of `choices` (NULL-terminated); *out = index. */
bool cli_choice(const cli_args *args, const char *name, const char *const *choices, int *out);

/* ---- choice vocabularies (cli/vocab.c): one table per vocabulary, used by
 * every command. The getters keep *out when the flag is absent (each command
 * keeps its own default) and print "unknown --NAME 'x' (choose a|b|...)"
 * (the caller exits EXIT_USAGE) on a name outside the vocabulary. ---- */
#define CLI_LAYOUT_NAMES "interleaved | half | neox (= half) | gptj (= interleaved)"
#define CLI_FREQS_NAMES "vaswani (base^(-2k/d)) | t2t (base^(-k/(d/2-1)), fairseq)"
#define CLI_ODD_NAMES "error | pad (zero last channel) | round_up (tatp22)"
#define CLI_DTYPE_NAMES "f32 | f64 | f16 | bf16 (bf16-rounded values stored as f32) | bf16-bits (<u2)"
bool cli_get_layout(const cli_args *args, const char *name, posenc_layout *out);
bool cli_get_freqs(const cli_args *args, const char *name, posenc_freqs *out);
bool cli_get_odd(const cli_args *args, const char *name, posenc_odd_policy *out);
/* Canonical names of the enums ("interleaved", "half"; "vaswani", "t2t"; "error", "pad", "round_up"). */
const char *cli_layout_name(posenc_layout layout);
const char *cli_freqs_name(posenc_freqs freqs);
const char *cli_odd_name(posenc_odd_policy odd);
/* RoPE scaling names through posenc_rope_scaling_parse (HF's "default" = none). */
bool cli_get_scaling(const cli_args *args, const char *name, posenc_rope_scaling *out);
/* --precise / --torch-compat (both given is an error). */
bool cli_get_mode(const cli_args *args, posenc_mode *out);
/* An output dtype: what the library computes in, and whether bf16 values are
 * widened to float32 for the file (numpy cannot read bfloat16). */
typedef struct {
    posenc_dtype compute;
    bool widen_bf16;
    const char *name; /* the name given ("f32" by default) */
} cli_dtype_choice;
void cli_dtype_default(cli_dtype_choice *out); /* f32 */
bool cli_get_dtype(const cli_args *args, const char *name, cli_dtype_choice *out);
/* Replace a computed bf16 table by float32 holding the same values when the
 * choice asks for it (else leave it); EXIT_* code. */
int cli_widen_bf16(const char *command, const cli_dtype_choice *dtype, posenc_array *table);

/* Print "posenc CMD: message" (+ "hint: ..." if hint) to stderr and return code. */
int cli_fail(const char *command, int code, const char *hint, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* Print text with newlines, tabs and other control bytes escaped (\n, \t, \xHH):
 * for file names, which may hold them, in one-line messages. */
void cli_put_escaped(FILE *f, const char *text);
/* A note on stderr, "posenc CMD: message", escaped as cli_fail's messages are. */
void cli_note(const char *command, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Refuse (EXIT_USAGE, message naming both) an output path that is the same file
 * (device and inode) as any option value or positional argument of args, except
 * options meant to name it (lab train --resume). cli_parse calls it for -o; a
 * command with a default output calls it for that. EXIT_OK otherwise. */
int cli_refuse_same_file(const cli_args *args, const char *out);
/* Report a library error: message to stderr, EXIT_USAGE for argument errors
 * (invalid argument), EXIT_RUNTIME otherwise. */
int cli_fail_status(const char *command, const posenc_error *err);
/* Report a failed allocation of an output whose size came from options: over
 * --max-bytes or size_t is a usage error (2) with limit_hint; out of memory is
 * a runtime error (1) that does not suggest raising the limit. */
int cli_fail_allocation(const char *command, const posenc_error *err, const char *limit_hint);

/* ---- files ------------------------------------------------------------- */

/* Write to OUT.npy or OUT.csv (by extension); "-" writes CSV to stdout. */
int cli_write_array(const char *command, const char *path, const posenc_array *array);
/* Read a positions .npy: 1-D i64/i32 (integer) or f64/f32 (real). Exactly one
 * of *ids / *values is set (malloc'd). */
int cli_read_positions(const char *command, const char *path, int64_t **ids, double **values,
                       size_t *count);
/* Size ceiling for outputs: --max-bytes flag, else POSENC_MAX_BYTES env, else default. */
size_t cli_max_bytes(const cli_args *args);

/* ---- commands ---------------------------------------------------------- */
int cmd_table(int argc, char **argv);
int cmd_rope(int argc, char **argv);         /* posenc rope freqs|apply|explain */
int cmd_rope_explain(int argc, char **argv); /* posenc rope explain (cmd_rope_explain.c) */
int cmd_rope_identify(int argc, char **argv); /* posenc rope identify (cmd_rope_identify.c) */
int cmd_bias(int argc, char **argv);
/* `posenc bench --only identify` (cli/bench_identify.c): identify timed on [rows, 128] caches */
int cli_bench_identify(size_t rows);
/* posenc lab (cli/cmd_lab.c); cmd_lab_bench is `posenc bench --only lab` */
int cmd_lab(int argc, char **argv);
/* posenc lab run|plan|merge|plot|claims (cli/cmd_lab_run.c, cmd_lab_plot.c); -1 for another word */
int cmd_lab_experiments(int argc, char **argv);
int cmd_lab_plot(int argc, char **argv);
int cmd_lab_bench(const char *threads_list, const char *models, int reps, bool torch, const char *python,
                  const char *script);
/* `posenc table --kind learned|xl|2d|3d|hybrid` (cli/table_kinds.c), called by cmd_table
 * with the parsed arguments; `posenc compose` (cli/cmd_compose.c). */
int cmd_table_kind(const cli_args *args, const char *kind);
/* The one check of which flags a table kind reads (cli/table_kinds.c): an
 * unknown kind, a flag the kind does not read, or a missing -o is a usage error. */
int cli_table_kind_check(const cli_args *args, const char *kind);
int cmd_compose(int argc, char **argv);
/* analysis commands (cli/analysis_common.c, cmd_analyze.c, cmd_diff.c, cmd_precision.c) */
int cmd_analyze(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_precision(int argc, char **argv);
int cmd_signal(int argc, char **argv);
/* Read a table: .npy, or tensor `tensor` of a .safetensors file; empty -> exit 1. */
int cli_read_table(const char *command, const char *path, const char *tensor, size_t max_bytes,
                   posenc_array *out);
/* ---- models (model_words.c) ------------------------------------------------ */
/* posenc_model_read of --config with --assume FAMILY; prints the error, EXIT_* code. */
int cli_read_model(const char *command, const cli_args *args, posenc_model *out);
/* The same, for commands that need one RoPE: a model without RoPE layers is refused (exit 1). */
int cli_read_rope_config(const char *command, const cli_args *args, posenc_model_config *out);
/* Layer i's position scheme in words (equal words = equal layers). */
void cli_model_layer_words(const posenc_model *m, int32_t i, char *buf, size_t size);
/* "layers 0-2, 4-6, ...: RoPE ..." runs of equal layers, folded (one line each). */
void cli_model_print_layers(const posenc_model *m);
void cli_model_layers_text(const posenc_model *m, char *buf, size_t size);
/* Warning `index` (0..8) in words, "" when it does not apply. */
void cli_model_warning_words(const posenc_model *m, int index, char *buf, size_t size);
/* The model as one JSON object (docs/rope.md). */
int cli_model_print_json(const posenc_model *m, int64_t seq_len);
#define CLI_ASSUME_OPTION \
    {"assume", "FAMILY", "read an unknown model_type / GGUF architecture as this family, on purpose (said as assumed)"}

void cli_json_string(const char *s);
void cli_json_number(double v); /* null for NaN/inf */
void cli_json_numbers(const double *v, size_t n);
void cli_print_fit_json(const posenc_sinusoid_fit *fit);
void cli_print_fit_text(const char *label, const posenc_sinusoid_fit *fit);
/* The words of the analysis results (cli/analysis_words.c), appended to a
 * growable buffer so nothing is cut; cli_words(b) is the text ("" if none). */
typedef struct cli_buffer cli_buffer;
void cli_word_preset(cli_buffer *b, const posenc_sinusoid_fit *fit, posenc_preset preset);
void cli_word_finding(cli_buffer *b, const posenc_diff_report *r, const posenc_finding *f);
void cli_word_diff_summary(cli_buffer *b, const posenc_diff_report *r);
void cli_word_signal(cli_buffer *b, const posenc_signal_report *r);
const char *cli_words(const cli_buffer *b);
void cli_words_clear(cli_buffer *b); /* empty it for the next sentence (keeps the memory) */
/* ---- progress on a terminal (cli/progress.c) ---- */
/* A progress line with the time left, on stderr only when stderr is a terminal
 * (nothing otherwise). Units are any measure of work (weights allowed); step with
 * the units done before the next piece starts, at the start of a stdout line. */
typedef struct {
    const char *command;
    double total, start;
    bool enabled, drawn;
} cli_progress;
void cli_progress_begin(cli_progress *p, const char *command, double total_units);
void cli_progress_step(cli_progress *p, double done_units, const char *label);
void cli_progress_end(cli_progress *p); /* erase the line */

/* ---- rendering (render family: cli/render_*.c, charts.c, report*.c) ----- */

/* Growable byte buffer for PNG/SVG/HTML bodies; `failed` latches on an
 * allocation failure so callers check once at the end. */
struct cli_buffer {
    char *data;
    size_t len, cap;
    bool failed;
};
void cli_buffer_append(cli_buffer *b, const void *bytes, size_t n);
void cli_buffer_puts(cli_buffer *b, const char *text);
void cli_buffer_printf(cli_buffer *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* XML/HTML-escaped text; bytes that are not UTF-8 and control characters XML forbids
 * become U+FFFD, so a picture or page stays readable whatever a name holds. */
void cli_buffer_escape(cli_buffer *b, const char *text);
/* Bytes of the valid UTF-8 sequence at text (1-4; 1 for ASCII and NUL), 0 when none starts there. */
size_t cli_utf8_length(const char *text);
void cli_buffer_base64(cli_buffer *b, const void *bytes, size_t n);
void cli_buffer_free(cli_buffer *b);
/* Write the buffer to path atomically (temp + rename); EXIT_* code. */
int cli_buffer_write(const char *command, const char *path, const cli_buffer *b);
bool cli_path_ends_with(const char *path, const char *suffix);

/* Colormaps: RdBu (diverging, red < 0 < blue, drawn centered on 0) and viridis. */
typedef enum { CLI_CMAP_RDBU = 0, CLI_CMAP_VIRIDIS = 1 } cli_colormap;
extern const char *const cli_colormap_names[]; /* {"rdbu", "viridis", NULL} */
/* t in [0,1] (clamped) -> rgb; the color for a non-finite value is cli_nonfinite_rgb. */
void cli_colormap_rgb(cli_colormap map, double t, unsigned char rgb[3]);
extern const unsigned char cli_nonfinite_rgb[3];

/* A borrowed row-major grid of doubles: rows x cols (positions x channels). */
typedef struct {
    const double *values;
    size_t rows, cols;
} cli_grid;

/* A grid averaged down in blocks of row_block x col_block cells (owned). */
typedef struct {
    double *values;
    size_t rows, cols, row_block, col_block;
    double vmin, vmax;     /* finite range of the reduced values */
    size_t nonfinite;      /* reduced cells holding NaN/inf (drawn in cli_nonfinite_rgb) */
} cli_reduced;
/* Average blocks so the result fits max_rows x max_cols; a block with any
 * non-finite value stays non-finite (so bad values stay visible). EXIT_* code;
 * an empty grid or one with no finite value is an error (message printed). */
int cli_grid_reduce(const char *command, const cli_grid *grid, size_t max_rows, size_t max_cols,
                    cli_reduced *out);
void cli_reduced_free(cli_reduced *r);
/* Say on stderr when a picture shows block averages rather than cells. */
void cli_report_reduction(const char *command, const char *what, const cli_grid *grid,
                          const cli_reduced *r);

typedef struct {
    cli_colormap colormap;
    bool has_range;        /* use vmin/vmax instead of the data range */
    double vmin, vmax;
    bool colorbar;         /* add a colorbar strip on the right */
    int cell_pixels;       /* >= 1: pixels per cell side (0 = choose) */
} cli_heatmap_style;

/* Color range for a style: RdBu is symmetric about 0 (+-max|v|), viridis spans min..max. */
void cli_heatmap_range(const cli_heatmap_style *style, const cli_reduced *r, double *lo, double *hi);
/* Where v lies in [lo, hi] as 0..1, without overflow for any finite lo < hi
 * (+-1.7e308); 0.5 when the range is empty (a constant table is drawn in the middle). */
double cli_unit(double v, double lo, double hi);
/* Encode a heat map (cells, optional colorbar) as PNG bytes into *png. The
 * tEXt chunks record the title, the value range and any reduction. */
int cli_heatmap_png(const char *command, const cli_reduced *r, const cli_heatmap_style *style,
                    const char *title, cli_buffer *png);
/* The cells (and colorbar strip when style->colorbar) as packed RGB rows (malloc'd). */
int cli_heatmap_cells_rgb(const char *command, const cli_reduced *r, const cli_heatmap_style *style,
                          unsigned char **rgb, int *width, int *height);
/* Encode RGB rows as a heat-map PNG with tEXt chunks (title, range, reduction and,
 * when layout_note is not NULL, a "Layout" chunk saying where the cells are). */
int cli_heatmap_encode(const char *command, const cli_reduced *r, const cli_heatmap_style *style, const char *title,
                       const unsigned char *rgb, int width, int height, int cell_pixels, const char *layout_note,
                       cli_buffer *png);

/* ---- SVG charts (cli/render_svg.c) ---- */
/* The ticks of an axis on a grid of `step`: k x step for the integers k with
 * lo - step*1e-9 <= k x step <= hi + step*1e-9, increasing, at most max (and at most
 * 4 x CLI_MAX_TICKS candidates looked at). Counted with an integer, so a step below
 * the values' precision ends (with the distinct ticks) instead of looping forever;
 * 0 for a non-finite lo, hi or step. */
#define CLI_MAX_TICKS 64
size_t cli_axis_ticks(double lo, double hi, double step, double *ticks, size_t max);
typedef struct {
    const char *name;
    const double *x, *y;
    size_t count;
} cli_series;
typedef struct {
    double x0, x1;
    const char *label;
    int tone; /* 0 kept (green), 1 blended (amber), 2 interpolated (red) */
} cli_band;
typedef struct {
    double value;
    const char *label;
} cli_mark;
typedef struct {
    const char *title, *subtitle, *xlabel, *ylabel;
    const cli_series *series;
    size_t series_count;
    const cli_band *bands;
    size_t band_count;
    const cli_mark *xmarks, *ymarks; /* dashed reference lines */
    size_t xmark_count, ymark_count;
    bool log_x, log_y;
    int width, height; /* 0 = 760 x 420 */
} cli_chart;
/* Line chart with axes, ticks, labels, legend and title, as a standalone SVG. */
int cli_chart_svg(const char *command, const cli_chart *chart, cli_buffer *out);

typedef struct {
    const char *title, *subtitle, *xlabel, *ylabel;
    double x_first, y_first; /* label of the first column/row (e.g. key/query 0) */
} cli_axes_text;
/* Heat map with axes and a colorbar: the cells are an embedded PNG. */
int cli_heatmap_svg(const char *command, const cli_reduced *r, const cli_heatmap_style *style,
                    const cli_axes_text *text, cli_buffer *out);
/* Heat map PNG a person can read alone: title, subtitle, axes with tick labels
 * and names, and a colorbar with numbers (text drawn with cairo); the cells keep
 * their exact colormap pixels. The "Layout" tEXt chunk says where they are. */
int cli_heatmap_png_figure(const char *command, const cli_reduced *r, const cli_heatmap_style *style,
                           const cli_axes_text *text, cli_buffer *png);
/* Line chart with a shaded band per series (posenc lab plot: mean line, min-max
 * band over seeds), drawn with cairo: title, frame, grid, tick labels (log x at
 * the data's x values, or a nice linear step), axis names and a legend. */
typedef struct {
    const char *name;
    const char *color;             /* "#rrggbb" */
    const double *x, *mid, *lo, *hi; /* count points each, x ascending */
    size_t count;
    int dash;                      /* 0 solid, 1 dashed, 2 dotted, 3 dash-dot, 4 long dashes: tells apart
                                      series that share a colour */
} cli_band_series;
typedef struct {
    const char *title, *xlabel, *ylabel;
    const cli_band_series *series;
    size_t series_count;
    bool log_x;                    /* log2 axis; x must be > 0 */
    int width, height;             /* 0 = 900 x 520 */
} cli_band_chart;
int cli_band_chart_png(const char *command, const cli_band_chart *chart, cli_buffer *png);
/* Encode packed RGB rows as a PNG with Title, Description and Software tEXt chunks. */
int cli_png_encode_rgb(const char *command, const unsigned char *rgb, int width, int height, const char *title,
                       const char *description, cli_buffer *png);
/* 3-D surface z = grid[row][col] as a projected, painter-sorted mesh. */
int cli_surface_svg(const char *command, const cli_reduced *r, cli_colormap map,
                    const cli_axes_text *text, cli_buffer *out);

/* ---- tables to draw (cli/render_source.c) and chart builders (cli/charts.c) ---- */
typedef struct {
    char name[64];        /* "sinusoidal", "index", ..., or the file name */
    char about[200];      /* one line: how it was made */
    double *values;       /* rows x cols, owned */
    size_t rows, cols;
    int64_t first_position;
    double *frequencies;  /* per pair (radians/position) when known, else NULL */
    size_t pairs;
    posenc_layout layout;
    bool is_rope;         /* a cos|sin table of RoPE angles */
    /* RoPE settings (is_rope): what the scaling-bands chart needs */
    int32_t rope_head_dim;
    double rope_base, rope_factor;
    posenc_rope_scaling rope_scaling;
    int64_t rope_original_max;
    /* --config: the model's (scaled) frequencies at its longest context, for the
     * long-range chart; NULL when the config gives no context length */
    double *rope_long_frequencies; /* pairs entries, owned */
    int64_t rope_long_context;     /* max_position_embeddings, else factor x L0 */
    bool has_sinusoid;    /* made from sinusoid_params (precision audits use them) */
    posenc_sinusoid_params sinusoid;
    char layers[1024];    /* --config: which layers carry which encoding, one folded run per line */
} cli_table;
void cli_table_free(cli_table *t);
/* The one list of RoPE frequency flags, shared by `rope freqs`, `rope apply`,
 * `report` and `plot` (parsed by cli/rope_options.c). */
#define CLI_ROPE_SCALING_OPTIONS                                                                                \
    {"scaling", "S", "rope: none | linear | ntk | dynamic | yarn | longrope | llama3 (default none)"},          \
    {"factor", "F", "rope: scaling factor; yarn/llama3/longrope default max-pos / original-max"},              \
    {"original-max", "N", "rope: trained context L0 (yarn: default max-pos; longrope; llama3 requires it)"},   \
    {"beta-fast", "X", "rope yarn: rotations of the last kept pair, default 32"},                              \
    {"beta-slow", "X", "rope yarn: rotations of the first interpolated pair, default 1"},                      \
    {"mscale", "X", "rope yarn (DeepSeek): mscale"},                                                           \
    {"mscale-all-dim", "X", "rope yarn (DeepSeek): mscale_all_dim"},                                           \
    {"attention-factor", "X", "rope: explicit cos/sin magnitude (yarn, longrope)"},                           \
    {"no-truncate", NULL, "rope yarn: do not floor/ceil the correction range (HF truncate=False)"},           \
    {"low-freq-factor", "X", "rope llama3, default 1"},                                                        \
    {"high-freq-factor", "X", "rope llama3, default 4"},                                                       \
    {"short-factors", "F.npy", "rope longrope: short factor list (rotary_dim/2 floats)"},                      \
    {"long-factors", "F.npy", "rope longrope: long factor list (rotary_dim/2 floats)"},                        \
    {"longrope", "SEL", "rope longrope list: by-seq-len (default: long iff seq-len > original-max) | short | long"}, \
    {"rotary-dim", "R", "rope: rotate only R channels (partial rotary), even, <= dim"},                        \
    {"partial", "F", "rope: partial_rotary_factor, rotary dim = int(dim * F)"},                                \
    {"torch-compat", NULL, "rope: HF's float32 arithmetic (bit-identical to transformers on CPU)"},            \
    {"precise", NULL, "rope: long double formulas rounded once (default)"},                                   \
    {"mode", "M", "rope arithmetic: precise (default) | torch-compat | ggml (ggml CPU's float32 bits)"}
typedef struct {
    posenc_rope_params params; /* start from defaults or a config; the flags override */
    unsigned given;            /* POSENC_ROPE_GIVEN_* (for posenc_rope_resolve) */
    double *short_list, *long_list;
} cli_rope_scaling;
/* Apply the CLI_ROPE_SCALING_OPTIONS present in args over q->params. */
int cli_rope_scaling_parse(const char *command, const cli_args *args, cli_rope_scaling *q);
void cli_rope_scaling_free(cli_rope_scaling *q);
/* The first CLI_ROPE_SCALING_OPTIONS flag given that is not in except (NULL-terminated, may be NULL), or NULL. */
const char *cli_rope_scaling_flag_given(const cli_args *args, const char *const *except);

/* The encoding flags shared by `plot` and `report` (see CLI_TABLE_OPTIONS). */
#define CLI_TABLE_OPTIONS                                                                          \
    {"kind", "KIND", "sinusoidal (default) | rope | learned | index | normalized"},                \
    {"config", "FILE", "a model's config.json or .gguf: draw its RoPE (head_dim, theta, scaling)"}, \
    CLI_ASSUME_OPTION,                                                                             \
    {"len", "N", "positions (rows), default 128"},                                                 \
    {"dim", "D", "channels per position, default 64"},                                             \
    {"base", "B", "frequency base, default 10000"},                                                \
    {"freqs", "CONV", CLI_FREQS_NAMES "; default vaswani"},                                          \
    {"layout", "L", CLI_LAYOUT_NAMES "; default interleaved"},                                      \
    {"start", "S", "first position, default 0"},                                                  \
    CLI_ROPE_SCALING_OPTIONS,                                                                      \
    {"seed", "N", "learned: seed of the N(0, sigma^2) initializer, default 0"},                   \
    {"sigma", "S", "learned: standard deviation, default 0.02 (BERT/GPT-2 initializer_range)"}
/* Build the table named by the encoding flags, or read positional TABLE.npy (2-D). */
int cli_table_from_args(const char *command, const cli_args *args, cli_table *t);
/* Compute one named kind at len x dim with default parameters (for the report). */
int cli_table_make(const char *command, const char *kind, int64_t len, int32_t dim, cli_table *t);

int cli_draw_heatmap(const char *command, const cli_table *t, const cli_heatmap_style *style, bool svg,
                     size_t max_cells, cli_buffer *out);
int cli_draw_surface(const char *command, const cli_table *t, cli_colormap map, cli_buffer *out);
/* Values across channels for the chosen rows (table row indices). */
int cli_draw_curves(const char *command, const cli_table *t, const size_t *rows, size_t count, cli_buffer *out);
int cli_draw_spectrum(const char *command, const cli_table *t, cli_buffer *out);
/* Mean cosine similarity of rows p and p+k against distance k, one series per table. */
int cli_draw_similarity(const char *command, const cli_table *const *tables, size_t count, cli_buffer *out);
/* Per-position variance across channels (norm = false) or L2 norm (norm = true). */
int cli_draw_row_stat(const char *command, const cli_table *const *tables, size_t count, bool norm,
                      cli_buffer *out);
/* Parse "0,10,50" into table row indices (positions minus first_position). */
int cli_parse_rows(const char *command, const char *list, const cli_table *t, size_t *rows, size_t max,
                   size_t *count);

/* ---- attention biases, RoPE scaling and precision pictures (cli/charts_extra.c) ---- */
typedef struct {
    int scheme;             /* 0 ALiBi, 1 T5 buckets */
    int32_t heads, head;    /* ALiBi: head count (slope schedule) and the head drawn */
    double max_bias;        /* ALiBi B, default 8 */
    bool symmetric;         /* ALiBi -m|i-j| (ggml) instead of causal m(j-i) with j > i masked */
    int64_t len;            /* queries = keys = 0..len-1 */
    posenc_t5_params t5;
} cli_bias_request;
void cli_bias_request_default(cli_bias_request *q);
/* The [len x len] bias of one head (ALiBi; masked keys are NaN, drawn grey) or
 * the T5 bucket matrix, as a drawable table. */
int cli_bias_table(const char *command, const cli_bias_request *q, cli_table *t);
/* ALiBi: bias against distance for every head; T5: bucket against relative position. */
int cli_draw_bias_profile(const char *command, const cli_bias_request *q, cli_buffer *out);
/* Frequency multiplier of every RoPE pair under linear/NTK/YaRN/Llama-3 scaling,
 * against the pair's wavelength, with the kept/blended/interpolated bands of `scaling`
 * and the trained and extended context lengths marked. */
/* A --config table's RoPE over its whole context (0 .. rope_long_context, sampled):
 * cos(p w) of three pairs around the trained context, scaled and unscaled. */
int cli_draw_rope_long(const char *command, const cli_table *t, cli_buffer *out);
int cli_draw_rope_bands(const char *command, int32_t head_dim, double base, posenc_rope_scaling scaling,
                        double factor, int64_t original_max, cli_buffer *out);
/* Precision audit (posenc_precision_audit) for f32, f16 and bf16: worst angle
 * error per pair as a chart (svg may be NULL) and the findings as an HTML table
 * (html may be NULL). */
int cli_draw_precision(const char *command, const posenc_sinusoid_params *params, int64_t max_pos, cli_buffer *svg,
                       cli_buffer *html);

/* ---- the HTML report (cli/report.c) ---- */
typedef struct {
    const cli_table *const *tables; /* what the report compares (first = the main one) */
    size_t count;
    int colormap;                   /* -1: rdbu for signed tables, viridis for non-negative */
    const char *command_line;       /* shown in the footer */
    bool default_comparison;        /* run with no flags: explain the comparison */
    const char *const *lab_results; /* lab result files for the "Measured here" section (may be 0) */
    size_t lab_count;
    bool lab_found;                 /* found at the default place: files with no runs are skipped */
    const char *identify, *identify_sin; /* --identify CACHE [--sin S]: the "Which RoPE" section */
    int identify_layout;                 /* posenc_rope_cache_layout */
} cli_report_request;
/* The "Which RoPE is this?" <section> (cli/report_identify.c) for a cos/sin cache. */
int cli_identify_report_section(const char *command, const char *path, const char *sin_path, int layout,
                                cli_buffer *html);
/* Build the whole self-contained page (pictures, tables, data, script) into *html. */
int cli_report_html(const char *command, const cli_report_request *req, cli_buffer *html);
struct cJSON;
/* SVG of lab results (runs as cli_lab_read_results returns them; path names them
 * in messages): metric vs length or training curves. */
int cli_lab_plot_svg(const char *command, const struct cJSON *runs, const char *path, const char *experiment,
                     const char *metric, cli_buffer *out);
/* The same picture as a PNG (cli_band_chart_png). */
int cli_lab_plot_png(const char *command, const struct cJSON *runs, const char *path, const char *experiment,
                     const char *metric, cli_buffer *out);
/* posenc report [--lab RESULTS]: the "Measured here" <section> (cli/report_lab.c)
 * from lab result files; found: they came from the default place, so a file with
 * no runs is skipped with a note instead of failing. */
int cli_lab_report_section(const char *command, const char *const *paths, size_t count, bool found, cli_buffer *html);
/* The default place of lab results: the files `posenc lab run NAME` writes without
 * -o, lab-NAME.jsonl in the current folder, for each experiment NAME in order.
 * Writes the names of those that exist into names[0..max) and returns how many. */
#define CLI_LAB_MAX_RESULTS 8
size_t cli_lab_default_results(char names[][64], size_t max);
/* Lab result files (cli/lab_results.c, docs/lab.md "Result files"): one JSON object
 * with an id per line, read a line at a time. A line that is not such an object, a
 * number that is not finite or beyond 1e15, a negative bpb or an accuracy outside
 * [0, 1] fails the read naming the file, line and field; a last line without its
 * newline (an unfinished write) is ignored with a note; out of memory is said as such.
 * fn receives each run (owned: keep or cJSON_Delete it) and its line's text. */
typedef int (*cli_lab_line_fn)(void *ctx, struct cJSON *run, const char *line, size_t len, const char *path,
                               long line_no);
int cli_lab_each_result(const char *command, const char *path, bool missing_ok, cli_lab_line_fn fn, void *ctx);
/* All runs of the files as a cJSON array (NULL on error, message printed); missing_ok
 * skips files that do not exist. Each run keeps its fields but "grad_norms", "curve"
 * (unless keep has CLI_LAB_KEEP_CURVE) and "position_table" (kept in the first run
 * with scheme learned and the first of any scheme): memory is one line being read
 * plus a few KiB a run, not the file. */
#define CLI_LAB_KEEP_CURVE 1u
struct cJSON *cli_lab_read_results(const char *command, const char *const *paths, int count, bool missing_ok,
                                   unsigned keep);

int cmd_plot(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_bench(int argc, char **argv);

#endif
