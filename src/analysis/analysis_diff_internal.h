/* analysis_diff_internal.h: pieces of `posenc diff`. analysis_diff.c calls
 * analysis_diagnose.c (the model-level diagnosis); both add findings through
 * analysis_findings.c. */
#ifndef POSENC_ANALYSIS_DIFF_INTERNAL_H
#define POSENC_ANALYSIS_DIFF_INTERNAL_H

#include "analysis_internal.h"

/* analysis_findings.c. Append a finding with its headline value (the other fields zero); returns it
 * for the caller to fill, or NULL when the list is full. */
posenc_finding *posenc_diff_add_(posenc_diff_report *r, posenc_finding_kind kind, double value);
bool posenc_diff_has_(const posenc_diff_report *r, posenc_finding_kind kind);

/* analysis_diagnose.c. Fit both sides (tables, or RoPE outputs when o->input is set), name their
 * presets and add the model-level findings. */
posenc_status posenc_diagnose_models_(const posenc_array *a, const posenc_array *b,
                                      const posenc_f64_table_ *ta, const posenc_f64_table_ *tb,
                                      const posenc_diff_options *o, posenc_diff_report *r,
                                      posenc_error *err);
/* Decide `explained`. */
void posenc_diff_summarize_(posenc_diff_report *r);

#endif
