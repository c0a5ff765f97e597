/* vocab_words.c: the canonical names of the library's layout, frequency and odd-dim
 * enums, written once: the commands parse flags with these words (cli/vocab.c) and
 * every picture, report and message prints them from here. */
#include "base.h"

#include <stddef.h>

/* neox/gptj are the names RoPE users know for the same two pairings. */
const cli_vocab_word cli_layout_words[] = {{"interleaved", POSENC_LAYOUT_INTERLEAVED},
                                           {"half", POSENC_LAYOUT_HALF},
                                           {"neox", POSENC_LAYOUT_HALF},
                                           {"gptj", POSENC_LAYOUT_INTERLEAVED},
                                           {NULL, 0}};
const cli_vocab_word cli_freqs_words[] = {{"vaswani", POSENC_FREQS_VASWANI}, {"t2t", POSENC_FREQS_T2T}, {NULL, 0}};
const cli_vocab_word cli_odd_words[] = {{"error", POSENC_ODD_ERROR},
                                        {"pad", POSENC_ODD_PAD},
                                        {"round_up", POSENC_ODD_ROUND_UP},
                                        {NULL, 0}};

/* The canonical (first) name of an enum value in a vocabulary. */
static const char *name_of(const cli_vocab_word *words, int value) {
    for (size_t i = 0; words[i].name; i++)
        if (words[i].value == value) return words[i].name;
    return "?";
}

const char *cli_layout_name(posenc_layout layout) { return name_of(cli_layout_words, (int)layout); }
const char *cli_freqs_name(posenc_freqs freqs) { return name_of(cli_freqs_words, (int)freqs); }
const char *cli_odd_name(posenc_odd_policy odd) { return name_of(cli_odd_words, (int)odd); }
