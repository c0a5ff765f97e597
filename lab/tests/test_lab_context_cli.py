"""Issue 42: `posenc lab eval --context-use` on a checkpoint: the grid c = 1 .. 16L, the JSON and text
forms agree, the effective context is the smallest c within 0.01 bpb of the best, and bad input is
refused by name (spans out of range, a text too short for the spans) with nothing left behind."""
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

POSENC = os.environ["POSENC_BIN"]
failures = 0


def check(cond, what):
    global failures
    print(("ok   " if cond else "FAIL ") + what)
    failures += 0 if cond else 1


def run(*args):
    return subprocess.run([POSENC] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def run_all(tmp):
    rng = random.Random(3)
    words = "the a of to and in is it that was for on with as his he they at be this from have".split()
    text = os.path.join(tmp, "t.txt")
    with open(text, "w") as f:
        while f.tell() < 120_000:
            f.write(" ".join(rng.choice(words) for _ in range(rng.randint(4, 12))) + ".\n")
    ckpt = os.path.join(tmp, "m.safetensors")
    p = run("lab", "train", "--scheme", "alibi", "--layers", "1", "--d-model", "16", "--heads", "2", "--d-ff", "32",
            "--context", "16", "--steps", "30", "--text", text, "-o", ckpt)
    check(p.returncode == 0, "train a tiny model: %s" % p.stderr[-200:])
    p = run("lab", "eval", "--checkpoint", ckpt, "--text", text, "--context-use", "--spans", "4", "--stride", "16", "--json")
    j = json.loads(p.stdout) if p.returncode == 0 else {}
    c, bpb = j.get("c", []), j.get("bpb", [])
    ok = c == [1, 2, 4, 8, 16, 32, 64, 128, 256] and len(bpb) == 9 and j.get("targets") == 4 * 256 // 16
    if ok:
        want = next(x for x, b in zip(c, bpb) if b <= min(bpb) + 0.01)
        want_L = next(x for x, b in zip(c, bpb) if x <= 16 and b <= min(bpb[:5]) + 0.01)
        ok = j["effective_context"] == want and j["effective_context_within_L"] == want_L and j["gains_at_L"] == (want_L == 16)
    check(ok, "--json: grid 1..256, 64 targets, effective context by the rule: %s" % p.stdout.strip()[-300:])
    t = run("lab", "eval", "--checkpoint", ckpt, "--text", text, "--context-use", "--spans", "4", "--stride", "16")
    check(t.returncode == 0 and ("effective context (smallest c within 0.01 bpb of the best): %d bytes" % j.get("effective_context", -1))
          in t.stdout and ("c =    256  bpb %.4f" % bpb[-1] if bpb else "?") in t.stdout, "text form agrees: %s" % t.stdout[-200:])
    bad = run("lab", "eval", "--checkpoint", ckpt, "--text", text, "--context-use", "--spans", "0")
    check(bad.returncode == 2 and "spans" in bad.stderr, "--spans 0 refused: %s" % bad.stderr.strip()[:120])
    short = os.path.join(tmp, "short.txt")
    with open(short, "w") as f:
        f.write("x" * 1000)
    bad = run("lab", "eval", "--checkpoint", ckpt, "--text", short, "--context-use")
    check(bad.returncode != 0 and "1000 bytes is too short" in bad.stderr, "a short text refused by size: %s" % bad.stderr.strip()[:160])


def main():
    tmp = tempfile.mkdtemp(prefix="posenc-lab-context-")
    try:
        run_all(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d failed" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
