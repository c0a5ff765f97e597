#!/usr/bin/env python3
"""The lookup task (issue 42 item 5) through the CLI: `lab run tiny-lookup` trains two
schemes at L = 32 and scores them at the pair counts that fill L and 2L (accuracy per
query in [0, 1], bits per answer token, the example's tokens); the plan `lookup` runs 6
schemes x 3 seeds at L = 64 and 1L..16L; `lab plot --metric accuracy|answer_bits` draws
the rows, `lab claims` reads the file without claiming anything from it, and the
length-generalization plan does not take the new task. Prints evidence and
"N passed, N failed"."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

POSENC = os.path.abspath(os.environ.get("POSENC_BIN", "build/posenc"))
passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL", what)


def run(*args):
    return subprocess.run([POSENC, *args], capture_output=True, text=True,
                          env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))


def fit(tokens, key=3, queries=4):
    """The most pairs whose example (pairs, SEP, min(n, queries) queries, END) fits `tokens` inputs."""
    n = 0
    while (key + 1) * ((n + 1) + min(n + 1, queries)) + 2 - 1 <= tokens:
        n += 1
    return n


def run_all(tmp):
    ids = run("lab", "plan", "lookup", "--ids").stdout.split()
    check(len(ids) == 18 and all(i.startswith("lookup:lookup-") for i in ids),
          "lookup plan: 6 schemes x 3 seeds, got %d: %s" % (len(ids), ids[:3]))
    lg = run("lab", "plan", "length-generalization", "--ids").stdout.split()
    check(len(lg) == 75 and not any("lookup" in i for i in lg), "length-generalization keeps its 5 tasks: %d runs" % len(lg))
    out = os.path.join(tmp, "lookup.jsonl")
    p = run("lab", "run", "tiny-lookup", "-o", out)
    check(p.returncode == 0, "lab run tiny-lookup: %s" % p.stderr[-400:])
    if p.returncode:
        return
    rows = [json.loads(line) for line in open(out)]
    check({r["scheme"] for r in rows} == {"rope", "alibi"} and all(r["data"] == "lookup" for r in rows),
          "tiny-lookup: rope and alibi on lookup: %s" % [(r["scheme"], r["data"]) for r in rows])
    for r in rows:
        ev = r["evals"]
        check([e["length"] for e in ev] == [fit(32), fit(64)] and [e["tokens"] for e in ev] ==
              [4 * (n + min(n, 4)) + 1 for n in (fit(32), fit(64))],
              "%s: pairs %s (want %d, %d) in %s tokens" % (r["id"], [e["length"] for e in ev], fit(32), fit(64),
                                                          [e["tokens"] for e in ev]))
        check(all(0 <= e["accuracy"] <= 1 and 0 < e["answer_bits"] < 12 for e in ev),
              "%s: accuracy and answer bits in range: %s" % (r["id"], ev))
        check(r["train_length"] == 32 and "protocol" not in r, "%s: a task run at L 32, no text protocol" % r["id"])
    print("tiny-lookup: %s" % [(r["scheme"], [(e["length"], e["tokens"], round(e["accuracy"], 3),
                                               round(e["answer_bits"], 2)) for e in r["evals"]]) for r in rows])
    for metric in ("accuracy", "answer_bits"):
        svg = os.path.join(tmp, metric + ".svg")
        p = run("lab", "plot", out, "--metric", metric, "-o", svg)
        check(p.returncode == 0 and os.path.exists(svg), "plot --metric %s: %s" % (metric, p.stderr.strip()))
        if p.returncode == 0:
            text = "".join(ET.parse(svg).getroot().itertext())
            check("lookup-rope" in text and "lookup-alibi" in text, "plot %s names both series" % metric)
            check(metric != "answer_bits" or "bits per answer token" in text, "answer_bits axis named")
    p = run("lab", "claims", out)
    check(p.returncode == 0 and "|" in p.stdout, "lab claims reads a lookup file: %s" % p.stderr.strip())


def main():
    tmp = tempfile.mkdtemp(prefix="posenc-lab-lookup-")
    try:
        run_all(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
