/* cli.h: the commands of the posenc tool (argument parsing, output files, words).
 * The commands include only posenc.h from the library, and the drawing library
 * (render/render.h, which brings the tool's floor base/base.h: exit codes, cli_fail and
 * cli_note, the byte buffer, the progress line, the enums' names, lab result files)
 * by their public headers. */
#ifndef POSENC_CLI_H
#define POSENC_CLI_H

#include "posenc.h"
#include "render.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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
/* The interpreter a peer script runs in when --python is not given: $POSENC_PYTHON (the
 * test environment, scripts/venv), else "python3" from PATH. */
const char *cli_default_python(void);
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
/* RoPE scaling names through posenc_rope_scaling_parse (HF's "default" = none). */
bool cli_get_scaling(const cli_args *args, const char *name, posenc_rope_scaling *out);
/* --precise / --torch-compat (both given is an error). */
/* false (after printing why) when POSENC_TORCH_MKL is set but unusable (posenc_torch_math) */
bool cli_torch_math_usable(const char *command);
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

/* Refuse (EXIT_USAGE, message naming both) an output path that is the same file
 * (device and inode) as any option value or positional argument of args, except
 * options meant to name it (lab train --resume). cli_parse calls it for -o; a
 * command with a default output calls it for that. EXIT_OK otherwise. */
int cli_refuse_same_file(const cli_args *args, const char *out);

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
int cmd_rope_compare(int argc, char **argv);  /* posenc rope compare A B (cmd_rope_compare.c) */
int cmd_bias(int argc, char **argv);
/* `posenc bench --only identify` (cli/bench_identify.c): identify timed on [rows, 128] caches */
int cli_bench_identify(size_t rows);
/* `posenc bench --only decode` (cli/bench_decode.c): one decoding step's RoPE, per call, unplanned
 * and planned, against HF's step in PyTorch (peers: false skips it) */
int cli_bench_decode(int reps, bool peers, const char *python, const char *script);
/* One peer timing from bench/peers.py: its median ms, or -1 with why filled (cli/cmd_bench.c). */
double cli_bench_run_peer(const char *python, const char *script, const char *workload, int threads, int reps,
                          char *why, size_t why_size);
/* posenc lab (cli/lab/cmd_lab.c); cmd_lab_bench is `posenc bench --only lab` */
int cmd_lab(int argc, char **argv);
/* posenc lab run|plan|merge|plot|claims (cli/lab/cmd_lab_run.c, cmd_lab_plot.c); -1 for another word */
int cmd_lab_experiments(int argc, char **argv);
int cmd_lab_plot(int argc, char **argv);
int cmd_lab_bench(const char *threads_list, const char *models, int reps, bool torch, const char *python,
                  const char *script, bool growth);
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
/* Whether layer i multiplies its query by the model's position-dependent scale (posenc_model.query_scale), and that
 * scale in words ("" when the model has none). */
bool cli_model_query_scale_on(const posenc_model *m, int32_t i);
void cli_model_query_scale_words(const posenc_model *m, char *buf, size_t size);
/* The window stage (posenc_model.window_stages) layer i belongs to, -1 when it is in none. */
int32_t cli_model_window_stage(const posenc_model *m, int32_t i);
#define CLI_ASSUME_OPTION \
    {"assume", "FAMILY", "read an unknown model_type / GGUF architecture as this family, on purpose (said as assumed)"}

void cli_json_string(const char *s);
void cli_json_number(double v); /* null for NaN/inf */
void cli_json_numbers(const double *v, size_t n);
void cli_print_fit_json(const posenc_sinusoid_fit *fit);
void cli_print_fit_text(const char *label, const posenc_sinusoid_fit *fit);
/* The words of the analysis results (cli/analysis_words.c), appended to a
 * growable buffer so nothing is cut; cli_words(b) is the text ("" if none). */
void cli_word_preset(cli_buffer *b, const posenc_sinusoid_fit *fit, posenc_preset preset);
void cli_word_finding(cli_buffer *b, const posenc_diff_report *r, const posenc_finding *f);
void cli_word_diff_summary(cli_buffer *b, const posenc_diff_report *r);
void cli_word_signal(cli_buffer *b, const posenc_signal_report *r);
/* One departure of a cache from a config (identify_words.c), and the words for the
 * arithmetic a config matches in ("HF's float32 arithmetic", ...). */
void cli_word_departure(cli_buffer *b, const posenc_rope_departure *d, const posenc_rope_identity *id,
                        const posenc_rope_comparison *cmp);
const char *cli_identify_arith_words(posenc_rope_arith a);
const char *cli_words(const cli_buffer *b);
void cli_words_clear(cli_buffer *b); /* empty it for the next sentence (keeps the memory) */

/* ---- RoPE flags (cli/rope_options.c) and the tables `plot` and `report` draw, from
 * their flags (cli/table_args.c; the tables are computed by render/render_source.c) ---- */
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

int cmd_plot(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_bench(int argc, char **argv);

#endif
