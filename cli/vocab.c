/* vocab.c: the tool's choice vocabularies, written once. Every command that
 * takes --layout, --freqs, --odd, --dtype, --scaling or --precise/--torch-compat
 * reads it through these getters, so a name accepted by one command is accepted
 * by all, and each name maps straight to the library's enum (never by index).
 * The layout, frequency and odd-dim words live in base/vocab_words.c, where the
 * pictures and the report read their canonical names too. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

/* Output dtypes of table commands. "bf16" computes in bfloat16 and ships the
 * values widened to float32 (numpy has no bfloat16); "bf16-bits" keeps the raw
 * 16-bit patterns (<u2). */
static const struct {
    const char *name;
    cli_dtype_choice choice;
} dtype_words[] = {{"f32", {POSENC_DTYPE_F32, false, "f32"}},
                   {"f64", {POSENC_DTYPE_F64, false, "f64"}},
                   {"f16", {POSENC_DTYPE_F16, false, "f16"}},
                   {"bf16", {POSENC_DTYPE_BF16, true, "bf16"}},
                   {"bf16-bits", {POSENC_DTYPE_BF16, false, "bf16-bits"}},
                   {NULL, {POSENC_DTYPE_F32, false, NULL}}};

static void refuse(const cli_args *a, const char *name, const char *value, const char *const *names, size_t count) {
    char list[256] = "";
    for (size_t i = 0; i < count; i++) {
        strncat(list, names[i], sizeof list - strlen(list) - 1);
        if (i + 1 < count) strncat(list, "|", sizeof list - strlen(list) - 1);
    }
    cli_fail(a->command, EXIT_USAGE, NULL, "unknown --%s '%s' (choose %s)", name, value, list);
}

static bool lookup(const cli_args *a, const char *name, const cli_vocab_word *words, int *out) {
    const char *v = cli_string(a, name, NULL);
    if (!v) return true;
    const char *names[16];
    size_t n = 0;
    for (; words[n].name; n++) {
        if (strcmp(v, words[n].name) == 0) {
            *out = words[n].value;
            return true;
        }
        names[n] = words[n].name;
    }
    refuse(a, name, v, names, n);
    return false;
}

bool cli_get_layout(const cli_args *a, const char *name, posenc_layout *out) {
    int v = (int)*out;
    if (!lookup(a, name, cli_layout_words, &v)) return false;
    *out = (posenc_layout)v;
    return true;
}

bool cli_get_freqs(const cli_args *a, const char *name, posenc_freqs *out) {
    int v = (int)*out;
    if (!lookup(a, name, cli_freqs_words, &v)) return false;
    *out = (posenc_freqs)v;
    return true;
}

bool cli_get_odd(const cli_args *a, const char *name, posenc_odd_policy *out) {
    int v = (int)*out;
    if (!lookup(a, name, cli_odd_words, &v)) return false;
    *out = (posenc_odd_policy)v;
    return true;
}

void cli_dtype_default(cli_dtype_choice *out) { *out = dtype_words[0].choice; }

bool cli_get_dtype(const cli_args *a, const char *name, cli_dtype_choice *out) {
    const char *v = cli_string(a, name, NULL);
    if (!v) return true;
    const char *names[8];
    size_t n = 0;
    for (; dtype_words[n].name; n++) {
        if (strcmp(v, dtype_words[n].name) == 0) {
            *out = dtype_words[n].choice;
            return true;
        }
        names[n] = dtype_words[n].name;
    }
    refuse(a, name, v, names, n);
    return false;
}

int cli_widen_bf16(const char *command, const cli_dtype_choice *dtype, posenc_array *table) {
    if (!dtype->widen_bf16 || table->dtype != POSENC_DTYPE_BF16) return EXIT_OK;
    posenc_array wide;
    posenc_error err = {0};
    if (posenc_array_create(&wide, POSENC_DTYPE_F32, table->ndim, table->shape, (size_t)-1, &err) != POSENC_OK)
        return cli_fail_status(command, &err);
    for (size_t i = 0; i < table->count; i++)
        ((float *)wide.data)[i] = posenc_bf16_to_f32(((const uint16_t *)table->data)[i]);
    posenc_array_free(table);
    *table = wide;
    return EXIT_OK;
}

bool cli_get_mode(const cli_args *a, posenc_mode *out) {
    if (cli_has(a, "precise") && cli_has(a, "torch-compat")) {
        cli_fail(a->command, EXIT_USAGE, NULL, "give --precise or --torch-compat, not both");
        return false;
    }
    if (cli_has(a, "torch-compat")) {
        if (!cli_torch_math_usable(a->command)) return false;
        *out = POSENC_MODE_TORCH_COMPAT;
    } else if (cli_has(a, "precise")) *out = POSENC_MODE_PRECISE;
    return true;
}

bool cli_torch_math_usable(const char *command) {
    posenc_error err = {0};
    if (posenc_torch_math(NULL, NULL, &err) == POSENC_OK) return true;
    cli_fail_status(command, &err);
    return false;
}

bool cli_get_scaling(const cli_args *a, const char *name, posenc_rope_scaling *out) {
    const char *v = cli_string(a, name, NULL);
    if (!v) return true;
    posenc_error err = {0};
    if (posenc_rope_scaling_parse(v, out, &err) == POSENC_OK) return true;
    /* the names come from the library, so a new scheme needs no edit here */
    const char *names[POSENC_ROPE_LLAMA3 + 2];
    size_t n = 0;
    for (int s = 0; s <= POSENC_ROPE_LLAMA3; s++) {
        const char *word = posenc_rope_scaling_name((posenc_rope_scaling)s);
        if (word) names[n++] = word;
    }
    names[n++] = "default";
    refuse(a, name, v, names, n);
    return false;
}
