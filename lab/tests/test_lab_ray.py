"""Issue 42: a lab plan on Ray (scripts/lab_ray.py), and the same plan in one process and with a
GNU parallel-style pool (xargs -P 2 over `posenc lab plan`'s commands, then `lab merge`).

Checks: on a local 2-CPU Ray started by the driver, `tiny --seeds 2` (6 runs) ends with every plan
id in the results file exactly once; a second call runs nothing and leaves the file byte for byte;
after a run's line is removed (a run lost), a third call runs exactly that run; each run's
evaluations are identical (bit for bit: the lab is deterministic) to the one-process run and to the
parallel-then-merge run; a bad plan name fails with lab plan's message. Nothing is left in TMPDIR
(Ray's session folder is inside the test's own temporary folder)."""
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

POSENC = os.environ["POSENC_BIN"]
HERE = os.path.dirname(os.path.abspath(__file__))
DRIVER = os.path.join(HERE, "..", "..", "scripts", "lab_ray.py")
failures = 0


def check(cond, what):
    global failures
    print(("ok   " if cond else "FAIL ") + what)
    failures += 0 if cond else 1


def lines(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def evals_by_id(path):
    return {r["id"]: json.dumps([r["evals"], r.get("context_use"), r["curve"]], sort_keys=True) for r in lines(path)}


def driver(tmp, out, *extra):
    env = dict(os.environ, POSENC_BIN=POSENC)
    # Ray's socket paths must fit AF_UNIX's 107 bytes: a short folder of its own under /tmp,
    # not under TMPDIR (CI's private TMPDIR makes them too long), removed after each run
    ray_tmp = tempfile.mkdtemp(prefix="r", dir="/tmp")
    try:
        return subprocess.run([sys.executable, DRIVER, "tiny", "--seeds", "2", "--num-cpus", "2", "--ray-temp-dir",
                               ray_tmp, "-o", out] + list(extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=env)
    finally:
        shutil.rmtree(ray_tmp, ignore_errors=True)


def run_all(tmp):
    rng = random.Random(1)
    words = "the a of to and in is it that was for on with as his he they at be this from have or by one had".split()
    text = os.path.join(tmp, "text.txt")
    with open(text, "w") as f:
        while f.tell() < 200_000:
            f.write(" ".join(rng.choice(words) for _ in range(rng.randint(4, 14))).capitalize() + ".\n")
    plan = subprocess.run([POSENC, "lab", "plan", "tiny", "--seeds", "2", "--ids"], stdout=subprocess.PIPE, text=True)
    ids = plan.stdout.split()
    check(plan.returncode == 0 and len(ids) == 6 and len(set(ids)) == 6, "lab plan --ids: 6 distinct ids: %s" % ids)

    out = os.path.join(tmp, "ray.jsonl")
    p = driver(tmp, out, "--text", text)
    kept = [r["id"] for r in lines(out)] if os.path.exists(out) else []
    check(p.returncode == 0 and sorted(kept) == sorted(ids),
          "Ray (local, 2 CPUs): every run kept once: %s (exit %d) %s" % (kept, p.returncode, p.stderr[-400:]))
    check("[6/6]" in p.stderr and "holds 6 of the plan's 6 runs" in p.stderr, "progress, one line a run: %s" % p.stderr[-300:])

    before = open(out, "rb").read()
    p = driver(tmp, out, "--text", text)
    check(p.returncode == 0 and "6 already in" in p.stderr and "0 to run" in p.stderr and open(out, "rb").read() == before,
          "resume: nothing to run, the file unchanged: %s" % p.stderr.strip()[-200:])

    # a lost run (its line removed): the next call runs it, and only it
    rows = open(out, encoding="utf-8").read().splitlines(True)
    with open(out, "w", encoding="utf-8") as f:
        f.writelines(rows[:2] + rows[3:])
    lost = json.loads(rows[2])["id"]
    p = driver(tmp, out, "--text", text)
    kept = [r["id"] for r in lines(out)]
    check(p.returncode == 0 and "1 to run" in p.stderr and ("%s done" % lost) in p.stderr and sorted(kept) == sorted(ids),
          "resume after a lost run: %s run again, every id once: %s" % (lost, p.stderr.strip()[-200:]))

    # the same plan in one process ...
    one = os.path.join(tmp, "one.jsonl")
    p = subprocess.run([POSENC, "lab", "run", "tiny", "--seeds", "2", "--text", text, "-o", one],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    check(p.returncode == 0 and evals_by_id(one) == evals_by_id(out),
          "one process: the same 6 runs, evaluations and curves bit for bit (exit %d)" % p.returncode)

    # ... and as lab plan's commands on a pool of 2 (what GNU parallel does with them), then lab merge
    cmds = subprocess.run([POSENC, "lab", "plan", "tiny", "--seeds", "2", "--text", text], stdout=subprocess.PIPE,
                          text=True).stdout
    work = os.path.join(tmp, "pool")
    os.makedirs(os.path.join(work, "results"))
    bindir = os.path.join(tmp, "bin")
    os.makedirs(bindir)
    os.symlink(POSENC, os.path.join(bindir, "posenc"))
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""))
    p = subprocess.run(["xargs", "-P", "2", "-I", "{}", "sh", "-c", "{}"], input=cmds, cwd=work, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    parts = sorted(os.path.join(work, "results", n) for n in os.listdir(os.path.join(work, "results")))
    merged = os.path.join(tmp, "merged.jsonl")
    m = subprocess.run([POSENC, "lab", "merge", "-o", merged] + parts, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    check(p.returncode == 0 and m.returncode == 0 and len(parts) == 6 and evals_by_id(merged) == evals_by_id(out),
          "plan commands on a pool of 2 + lab merge: the same 6 runs bit for bit (%d files) %s" % (len(parts), p.stderr[-200:]))

    p = subprocess.run([sys.executable, DRIVER, "no-such-experiment", "-o", os.path.join(tmp, "x.jsonl")],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ, POSENC_BIN=POSENC))
    check(p.returncode == 2 and "unknown experiment 'no-such-experiment'" in p.stderr and
          not os.path.exists(os.path.join(tmp, "x.jsonl")), "a bad plan name: lab plan's message, exit 2, no file")


def main():
    tmp = tempfile.mkdtemp(prefix="posenc-lab-ray-")
    try:
        run_all(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d failed" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
