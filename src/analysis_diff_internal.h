/* analysis_diff_internal.h: pieces shared by analysis_diff.c and analysis_diagnose.c. */
#ifndef POSENC_ANALYSIS_DIFF_INTERNAL_H
#define POSENC_ANALYSIS_DIFF_INTERNAL_H

#include "analysis_internal.h"

/* Append a finding (ignored when the list is full); returns it or NULL. */
posenc_finding *posenc_diff_add_(posenc_diff_report *r, posenc_finding_kind kind, double value,
                                 const char *fmt, ...) POSENC_PRINTF(4, 5);
bool posenc_diff_has_(const posenc_diff_report *r, posenc_finding_kind kind);

/* Fit both sides (tables, or RoPE outputs when o->input is set), name their
 * presets and add the model-level findings. */
posenc_status posenc_diagnose_models_(const posenc_array *a, const posenc_array *b,
                                      const posenc_f64_table_ *ta, const posenc_f64_table_ *tb,
                                      const posenc_diff_options *o, posenc_diff_report *r,
                                      posenc_error *err);
/* Decide `explained` and write the one-paragraph summary. */
void posenc_diff_summarize_(posenc_diff_report *r);
/* Human name of a fitted model ("PyTorch tutorial ..."); "" if not found. */
void posenc_describe_fit_(const posenc_sinusoid_fit *fit, int rope, char *out, size_t size);

#endif
