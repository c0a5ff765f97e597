#!/usr/bin/env python3
"""Fair tuning (issue 42 item 4) end to end: `lab run tiny-tune` scores only the dev
split (its rows carry dev_bpb and no test-target number; the dev blocks, recomputed
here from the text, are disjoint from the validation blocks where the test targets
lie), `lab run tiny --tuned FILE` takes each scheme's learning rate with the lowest
mean dev_bpb, and the choice reads only the tuning rows' dev_bpb: a planted test-target
bpb, a non-tuning row and a row of another model that would win are all ignored. A
scheme with no tuning rows is refused by name; --resume refuses to mix lrs under one id.
Prints evidence and "N passed, N failed"."""
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

POSENC = os.path.abspath(os.environ.get("POSENC_BIN", "build/posenc"))
BLOCK, DEV_BLOCK = 4096, 4  # LAB_SPLIT_BLOCK, LAB_DEV_BLOCK (lab/experiments.h)
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


def rows(path):
    return [json.loads(line) for line in open(path)]


def run_all(tmp):
    rng = random.Random(3)
    words = "the a of to and in is it that was for on with as his he they at be this from have or by one had".split()
    text = os.path.join(tmp, "text.txt")
    with open(text, "w") as f:
        while f.tell() < 200_000:
            f.write(" ".join(rng.choice(words) for _ in range(rng.randint(4, 14))).capitalize() + ".\n")
    data = open(text, "rb").read() + b"\n"  # lab_corpus_load ends each file with a newline
    blocks = [data[i:i + BLOCK] for i in range(0, len(data), BLOCK)]
    dev = b"".join(b for k, b in enumerate(blocks) if k % 10 == DEV_BLOCK)
    valid_ids = {k for k in range(len(blocks)) if k % 10 == 9}
    dev_ids = {k for k in range(len(blocks)) if k % 10 == DEV_BLOCK}
    check(dev_ids and valid_ids and not dev_ids & valid_ids, "dev blocks %s and validation blocks %s are disjoint"
          % (sorted(dev_ids), sorted(valid_ids)))

    tune = os.path.join(tmp, "tune.jsonl")
    p = run("lab", "run", "tiny-tune", "--seeds", "1", "--text", text, "-o", tune)
    check(p.returncode == 0, "lab run tiny-tune: %s" % p.stderr[-400:])
    if p.returncode:
        return
    t = rows(tune)
    check(len(t) == 12, "tiny-tune: 3 schemes x 4 learning rates, got %d rows" % len(t))
    leaked = [r["id"] for r in t if any(k in r for k in ("protocol", "context_use", "unigram_bpb", "attention")) or r["evals"]]
    check(not leaked, "tuning rows read nothing of the validation split: %s" % leaked)
    check(all(r["dev"]["bytes"] == len(dev) and r["dev"]["block"] == DEV_BLOCK for r in t),
          "dev = blocks %d of 10: %d bytes (rows say %s)" % (DEV_BLOCK, len(dev), {r["dev"]["bytes"] for r in t}))
    train_bytes = len(data) - sum(len(blocks[k]) for k in valid_ids) - len(dev)
    check(all(r["dev"]["tune_train_bytes"] == train_bytes for r in t), "tuning trains on train minus dev: %d bytes" % train_bytes)
    lrs = {}
    for r in t:
        lrs.setdefault(r["scheme"], set()).add(r["lr"])
    check(all(v == {0.001, 0.002, 0.004, 0.008} for v in lrs.values()), "lr x 1/2, 1, 2, 4 of 2e-3: %s" % lrs)
    print("tiny-tune: %d rows, dev %d bytes (blocks %s), dev_bpb %s" % (
        len(t), len(dev), sorted(dev_ids)[:3], sorted(round(r["dev_bpb"], 3) for r in t)[:4]))

    # the real choice: lowest mean dev_bpb per scheme
    want = {}
    for r in t:
        if r["scheme"] not in want or r["dev_bpb"] < want[r["scheme"]][1]:
            want[r["scheme"]] = (r["lr"], r["dev_bpb"])
    out = os.path.join(tmp, "tuned.jsonl")
    p = run("lab", "run", "tiny", "--seeds", "1", "--text", text, "--tuned", tune, "-o", out)
    check(p.returncode == 0, "lab run tiny --tuned: %s" % p.stderr[-400:])
    if p.returncode == 0:
        for r in rows(out):
            w = want[r["scheme"]]
            check(r["lr"] == w[0] and abs(r["tuned"]["dev_bpb"] - w[1]) < 1e-9 and r["tuned"]["candidates"] == 4
                  and r["tuned"]["from"] == "tune.jsonl",
                  "%s: lr %s (tuned %s), want %s" % (r["id"], r["lr"], r.get("tuned"), w))
        print("tuned: %s" % {s: w[0] for s, w in want.items()})

    # planted: dev_bpb picks lr 0.002 for every scheme; a test-target bpb, a non-tuning row
    # and a tuning row of another model (context 32) all point elsewhere and must be ignored
    crafted = os.path.join(tmp, "crafted.jsonl")
    with open(crafted, "w") as f:
        for r in t:
            r = dict(r)
            r["dev_bpb"] = 1.0 if r["lr"] == 0.002 else 5.0
            if r["lr"] == 0.008:
                r["bpb"] = 0.01
                r["evals"] = [{"phase": "trained", "variant": "plain", "length": 16, "bpb": 0.01, "bpb_sliding": 0.01}]
            f.write(json.dumps(r) + "\n")
            if r["lr"] == 0.004:
                other = dict(r, id=r["id"] + "-x", experiment="tiny", dev_bpb=0.0)  # not a tuning row
                f.write(json.dumps(other) + "\n")
                bigger = dict(r, id=r["id"] + "-L32", dev_bpb=0.0, config=r["config"].replace("context=16 ", "context=32 "))
                check(bigger["config"] != r["config"], "the planted row's config names another context")
                f.write(json.dumps(bigger) + "\n")
    out2 = os.path.join(tmp, "crafted-run.jsonl")
    p = run("lab", "run", "tiny", "--seeds", "1", "--text", text, "--tuned", crafted, "-o", out2)
    check(p.returncode == 0, "lab run tiny --tuned crafted: %s" % p.stderr[-400:])
    if p.returncode == 0:
        got = {r["scheme"]: r["lr"] for r in rows(out2)}
        check(got == {"sinusoidal": 0.002, "alibi": 0.002, "learned": 0.002},
              "the choice reads only dev_bpb of tuning rows of the same model: %s" % got)

    # a scheme without tuning rows is refused by name, and nothing is written
    partial = os.path.join(tmp, "partial.jsonl")
    with open(partial, "w") as f:
        for r in t:
            if r["scheme"] != "alibi":
                f.write(json.dumps(r) + "\n")
    out3 = os.path.join(tmp, "partial-run.jsonl")
    p = run("lab", "run", "tiny", "--seeds", "1", "--text", text, "--tuned", partial, "-o", out3)
    check(p.returncode == 2 and "scheme alibi" in p.stderr and not os.path.exists(out3),
          "a scheme with no tuning rows refused: %s" % p.stderr.strip())
    p = run("lab", "plan", "tiny", "--seeds", "1", "--tuned", partial)
    check(p.returncode == 2 and "scheme alibi" in p.stderr, "lab plan refuses it too: %s" % p.stderr.strip())
    p = run("lab", "plan", "tiny", "--seeds", "1", "--tuned", tune)
    check(p.returncode == 0 and p.stdout.count("--tuned '%s'" % tune) == 3, "lab plan passes --tuned on: %s" % p.stdout[:200])
    # --resume without the tuning would keep tuned rows under the untuned plan's ids
    if os.path.exists(out):
        p = run("lab", "run", "tiny", "--seeds", "1", "--text", text, "-o", out, "--resume")
        check(p.returncode == 2 and "trained at lr" in p.stderr, "resume mixing lrs refused: %s" % p.stderr.strip())


def main():
    tmp = tempfile.mkdtemp(prefix="posenc-lab-tuning-")
    try:
        run_all(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
