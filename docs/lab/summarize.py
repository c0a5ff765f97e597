#!/usr/bin/env python3
"""The measured tables of docs/lab-experiments.md from the raw result lines:
mean over seeds (min-max) per configuration and length, and for
length-generalization the mean reciprocal rank (MRR) of Kazemnejad et al. 2023
per seed. Usage, from the repository root:

    python3 docs/lab/summarize.py docs/lab/article-claims-quick.jsonl
    python3 docs/lab/summarize.py docs/lab/integration-quick.jsonl
    python3 docs/lab/summarize.py docs/lab/length-generalization-quick.jsonl

Text runs of the shared-target protocol add: the sliding view after
a slash, the mean standard error over the target spans at L, the unigram level
of the targets, the variants and fine-tunes of context-extension, the passkey
task, and the attention diagnostics (entropy and distance, mean over heads, at
L and 4L). The verdicts come from `posenc lab claims`, not from here.

MRR here: per seed and task, the five schemes are ranked by their mean exact-match
accuracy over the sizes past training (n > max trained n: 9 and 12 at the quick
size); tied schemes share the mean of the reciprocal ranks of the places they
tie for (so a task where every scheme scores 0 gives every scheme the same
0.457); MRR = mean over the five tasks. The paper ranks its schemes the same way
over its tasks and scratchpad settings, on larger models that reach near-perfect
accuracy in distribution."""
import json
import sys
from collections import OrderedDict, defaultdict


def load(path):
    runs = []
    with open(path) as f:
        for line in f:
            if line.endswith("\n"):
                runs.append(json.loads(line))
    return runs


def cell(values, fmt):
    if not values:
        return "-"
    mean = sum(values) / len(values)
    if len(values) == 1:
        return fmt % mean
    return (fmt + " (" + fmt + "-" + fmt + ")") % (mean, min(values), max(values))


def by_label(runs):
    out = OrderedDict()
    for r in runs:
        out.setdefault(r["label"], []).append(r)
    return out


def metric(r, length, key, variant="plain", phase="trained"):
    for e in r["evals"]:
        if e["phase"] == phase and e["variant"] == variant and e["length"] == length and key in e:
            return e[key]
    return None


def both(rs, n, variant="plain", phase="trained"):
    v = [x for x in (metric(r, n, "bpb", variant, phase) for r in rs) if x is not None]
    sl = [x for x in (metric(r, n, "bpb_sliding", variant, phase) for r in rs) if x is not None]
    return cell(v, "%.3f") + (" / %.3f" % (sum(sl) / len(sl)) if sl else "")


def text_table(runs, lengths, extra_grad=False):
    head = "| configuration | " + " | ".join("L=%d" % lengths[0] if i == 0 else "%d" % n for i, n in enumerate(lengths))
    head += " | train s |" + (" pos-group grad norm, last logged |" if extra_grad else "")
    print(head)
    print("|" + "---|" * (len(lengths) + 2 + (1 if extra_grad else 0)))
    for label, rs in by_label(runs).items():
        cells = []
        for n in lengths:
            cells.append(both(rs, n))
        line = "| %s | %s | %s |" % (label, " | ".join(cells), cell([r["train_seconds"] for r in rs], "%.0f"))
        if extra_grad:
            line += " %s |" % cell([r["grad_norms"][-1]["pos"] for r in rs], "%.3g")
        print(line + "  <!-- %d seeds -->" % len(rs))


def protocol_tables(runs, lengths):
    shared = [r for r in runs if "protocol" in r]
    if not shared:
        return
    p = shared[0]["protocol"]
    L = shared[0]["train_length"]
    se = [metric(r, L, "bpb_se") if metric(r, L, "bpb_se") is not None else metric(r, L, "bpb_se", "none") for r in shared]
    se = [x for x in se if x is not None]
    print()
    print("<!-- protocol %s: %d spans x %d target bytes (lead %d) of %d validation bytes; unigram level %s bpb; "
          "mean standard error over the spans at L %.3f bpb -->" %
          (p["name"], p["docs"], p["span"], p["lead"], p["valid_bytes"], cell([r["unigram_bpb"] for r in shared], "%.3f"),
           sum(se) / max(len(se), 1)))
    variants = []
    for r in shared:
        for e in r["evals"]:
            key = (e["variant"], e["phase"])
            if key not in variants:
                variants.append(key)
    if len(variants) > 1:
        print()
        print("| variant | " + " | ".join("%d" % n for n in lengths) + " |")
        print("|" + "---|" * (len(lengths) + 1))
        for v, ph in variants:
            print("| %s%s | %s |" % (v, " +ft" if ph != "trained" else "", " | ".join(both(shared, n, v, ph) for n in lengths)))
    pk = [n for n in lengths if any(metric(r, n, "passkey_bits", v, ph) is not None for r in shared for v, ph in variants)]
    if pk:
        print()
        print("| passkey: bits per digit (accuracy) | " + " | ".join("%d" % n for n in pk) + " |")
        print("|" + "---|" * (len(pk) + 1))
        for label, rs in by_label(shared).items():
            for v, ph in variants:
                cells = []
                for n in pk:
                    b = [x for x in (metric(r, n, "passkey_bits", v, ph) for r in rs) if x is not None]
                    a = [x for x in (metric(r, n, "passkey_accuracy", v, ph) for r in rs) if x is not None]
                    cells.append("%s (%.2f)" % (cell(b, "%.2f"), sum(a) / len(a)) if b else "-")
                name = label + ("" if v == "plain" else " " + v) + (" +ft" if ph != "trained" else "")
                print("| %s | %s |" % (name, " | ".join(cells)))
    if any("attention" in r for r in shared):
        print()
        print("| attention (mean over heads; mean (min-max) over seeds) | entropy at L | at 4L | distance at L | at 4L |")
        print("|---|---|---|---|---|")
        for label, rs in by_label(shared).items():
            cols = []
            for key in ("entropy", "distance"):
                for k in (0, 1):
                    vals = []
                    for r in rs:
                        a = r.get("attention", [])
                        if len(a) > k:
                            flat = [x for row in a[k][key] for x in row]
                            vals.append(sum(flat) / len(flat))
                    cols.append(cell(vals, "%.2f"))
            print("| %s | %s |" % (label, " | ".join(cols)))


def reciprocal_ranks(scores):
    """scheme -> accuracy; ties share the mean reciprocal rank of their places."""
    order = sorted(scores, key=lambda s: -scores[s])
    rr, i = {}, 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and scores[order[j + 1]] == scores[order[i]]:
            j += 1
        share = sum(1.0 / (k + 1) for k in range(i, j + 1)) / (j - i + 1)
        for k in range(i, j + 1):
            rr[order[k]] = share
        i = j + 1
    return rr


def task_tables(runs):
    schemes = []
    for r in runs:
        if r["scheme"] not in schemes:
            schemes.append(r["scheme"])
    lengths = [e["length"] for e in runs[0]["evals"]]
    print("| task | scheme | " + " | ".join("n=%d" % n for n in lengths) + " |")
    print("|" + "---|" * (len(lengths) + 2))
    for label, rs in by_label(runs).items():
        task, scheme = rs[0]["data"], rs[0]["scheme"]
        cells = [cell([metric(r, n, "accuracy") for r in rs], "%.2f") for n in lengths]
        print("| %s | %s | %s |  <!-- %d seeds -->" % (task, scheme, " | ".join(cells), len(rs)))
    # MRR per seed over the sizes past training
    max_n = {}
    for r in runs:  # trained sizes 1..max_n: the in-distribution size is the 2nd evaluated length (n)
        max_n[r["data"]] = [e["length"] for e in r["evals"]][1]
    acc = defaultdict(dict)  # (seed, task) -> scheme -> mean OOD accuracy
    for r in runs:
        ood = [e["accuracy"] for e in r["evals"] if e["phase"] == "trained" and e["length"] > max_n[r["data"]]]
        acc[(r["seed"], r["data"])][r["scheme"]] = sum(ood) / len(ood)
    seeds = sorted({s for s, _ in acc})
    mrr = {s: {} for s in seeds}
    for seed in seeds:
        tasks = [t for (s, t) in acc if s == seed]
        total = defaultdict(float)
        for t in tasks:
            for scheme, rr in reciprocal_ranks(acc[(seed, t)]).items():
                total[scheme] += rr / len(tasks)
        mrr[seed] = total
    print()
    print("| scheme | MRR per seed (%s) | mean (min-max) | Kazemnejad et al. 2023 |" % ", ".join("s%d" % s for s in seeds))
    print("|---|---|---|---|")
    paper = {"none": 0.69, "t5": 0.55, "alibi": 0.50, "rope": 0.33, "sinusoidal": 0.22}
    for scheme in sorted(schemes, key=lambda x: -sum(mrr[s].get(x, 0) for s in seeds)):
        vals = [mrr[s].get(scheme, 0.0) for s in seeds]
        print("| %s | %s | %s | %s |" % (scheme, " / ".join("%.3f" % v for v in vals), cell(vals, "%.3f"),
                                         paper.get(scheme, "-")))
    for seed in seeds:
        ranking = sorted(schemes, key=lambda x: -mrr[seed].get(x, 0))
        text = ranking[0]
        for a, b in zip(ranking, ranking[1:]):  # "=" for a tie
            text += (" = " if abs(mrr[seed].get(a, 0) - mrr[seed].get(b, 0)) < 1e-9 else " > ") + b
        print("seed %d ranking: %s" % (seed, text))


def main():
    runs = load(sys.argv[1])
    versions = sorted({(r["seed"], r.get("posenc_version", "?")) for r in runs})
    print("<!-- %s: %d runs; (seed, posenc_version): %s -->" % (sys.argv[1], len(runs), versions))
    if runs[0]["data"] != "text":
        task_tables(runs)
        return
    exp = runs[0]["experiment"]
    lengths = sorted({e["length"] for r in runs for e in r["evals"]})
    if any(e["variant"] == "plain" for r in runs for e in r["evals"]):  # context-extension has only its variants
        text_table(runs, lengths, extra_grad=exp == "integration")
    protocol_tables(runs, lengths)
    mem = [r for r in runs if r["label"] == "sparse" and "position_memory" in r]
    for r in mem:
        pm = r["position_memory"]
        print("%s: table %d x %d, %d nonzeros, %d channels kept; dense %d B, csr %d B, bitmask %d B, columns %d B "
              "-> %s %d B (%.1f%% less); training step %d B -> %d B (%.2f%% less)" %
              (r["id"], pm["rows"], pm["cols"], pm["nonzeros"], pm["kept_channels"], pm["dense_bytes"], pm["csr_bytes"],
               pm["bitmask_bytes"], pm["columns_bytes"], pm["sparse_format"], pm["sparse_bytes"],
               100 * (1 - pm["sparse_bytes"] / pm["dense_bytes"]), pm["training_bytes"], pm["training_bytes_sparse"],
               100 * (1 - pm["training_bytes_sparse"] / pm["training_bytes"])))


if __name__ == "__main__":
    main()
