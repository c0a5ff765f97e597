/* analysis_findings.c: the list of findings a diff report carries. The one
 * piece analysis_diff.c (element-level hypotheses) and analysis_diagnose.c
 * (model-level diagnosis) both write to, so neither calls the other for it. */
#include "analysis_diff_internal.h"

#include <string.h>

static const char *const finding_keys[] = {
    "agree", "offset", "layout", "sin_cos_swapped", "freq_convention", "base", "freq_scale",
    "angle_precision", "transposed", "prefix", "permutation", "padding_rows", "amplitude", "apply_precision"};

posenc_finding *posenc_diff_add_(posenc_diff_report *r, posenc_finding_kind kind, double value) {
    if (r->finding_count >= POSENC_DIFF_MAX_FINDINGS) return NULL;
    posenc_finding *f = &r->findings[r->finding_count++];
    memset(f, 0, sizeof *f);
    f->kind = kind;
    f->key = finding_keys[kind];
    f->value = value;
    return f;
}

bool posenc_diff_has_(const posenc_diff_report *r, posenc_finding_kind kind) {
    for (int i = 0; i < r->finding_count; i++)
        if (r->findings[i].kind == kind) return true;
    return false;
}
