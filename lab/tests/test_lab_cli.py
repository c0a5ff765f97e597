#!/usr/bin/env python3
"""posenc lab train / eval from the command line: checkpoints written and read,
resume byte-identical, a trained learned table handed to `posenc analyze`,
every RoPE scaling at evaluation, a fine-tune WITH a RoPE scaling (--init,
--rope-scaling) that lab eval then uses by default, and bad input refused with
the value named and nothing written."""
import ctypes
import json
import os
import re
import subprocess
import sys
import tempfile

BIN = os.environ.get("POSENC_BIN", "posenc")
SMALL = ["--layers", "1", "--d-model", "32", "--heads", "2", "--context", "32", "--batch", "2", "--threads", "1"]
results = []


def run(args):
    p = subprocess.run([BIN] + args, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def check(ok, what):
    results.append(bool(ok))
    print("%-4s %s" % ("ok" if ok else "FAIL", what))


def main():
    with tempfile.TemporaryDirectory() as d:
        text = os.path.join(d, "text.txt")
        with open(text, "w") as f:
            for i in range(3000):
                f.write("line %d: the quick brown fox jumps over the lazy dog %d times.\n" % (i, i * 7 % 13))
        ck = os.path.join(d, "learned.safetensors")
        rc, out = run(["lab", "train", "--scheme", "learned", "--text", text, "--steps", "4", "-o", ck] + SMALL)
        check(rc == 0 and os.path.exists(ck), "train learned 4 steps -> checkpoint (rc %d)" % rc)
        rc, out = run(["lab", "eval", "--checkpoint", ck, "--text", text, "--max-windows", "4", "--json"])
        loss = json.loads(out)["loss"] if rc == 0 else float("nan")
        check(rc == 0 and 3 < loss < 6, "eval at the training length: loss %.4f" % loss)
        rc, out = run(["lab", "eval", "--checkpoint", ck, "--text", text, "--len", "64", "--max-windows", "2"])
        check(rc != 0 and "position 32" in out, "eval past the learned table refuses: " + out.strip().splitlines()[-1])
        rc, out = run(["lab", "eval", "--checkpoint", ck, "--text", text, "--len", "64", "--max-windows", "2", "--past-end", "clamp"])
        check(rc == 0, "eval past the learned table with --past-end clamp: " + out.strip())
        rc, out = run(["analyze", ck, "--tensor", "wpe", "--json"])
        check(rc == 0 and out.strip().startswith("{"), "posenc analyze CKPT --tensor wpe reads the trained table (rc %d)" % rc)
        # resume: 2 + 2 steps == 4 steps, byte for byte
        half = os.path.join(d, "half.safetensors")
        rc1, _ = run(["lab", "train", "--scheme", "learned", "--text", text, "--steps", "2", "-o", half] + SMALL)
        rc2, out = run(["lab", "train", "--scheme", "learned", "--text", text, "--steps", "4", "--resume", half, "-o", half] + SMALL)
        same = open(half, "rb").read() == open(ck, "rb").read()
        check(rc1 == 0 and rc2 == 0 and same, "2 steps + resume to 4 == 4 steps straight, checkpoint byte-identical")
        # the BLAS choice (lab/blas.c): an unknown POSENC_LAB_BLAS is refused naming the choices; oneDNN,
        # where Debian's libdnnl2 is installed, is the one the bench names and trains with the same bits
        # on 1 and 2 threads (its bits may differ from OpenBLAS's: runs do not mix libraries)
        env = dict(os.environ, POSENC_LAB_BLAS="bogus")
        p = subprocess.run([BIN, "lab", "train", "--scheme", "none", "--text", text, "--steps", "1", "-o",
                            os.path.join(d, "bogus.safetensors")] + SMALL, capture_output=True, text=True, env=env)
        check(p.returncode != 0 and "openblas or onednn" in p.stderr,
              "POSENC_LAB_BLAS=bogus is refused naming the choices: " + p.stderr.strip().splitlines()[0])
        p = subprocess.run([BIN, "lab", "bench", "--profile", "--models", "small", "--threads", "1", "--reps", "1"],
                           capture_output=True, text=True)
        check(p.returncode == 0 and "sgemm from libopenblas.so.0" in p.stdout and "| fwd gelu | 2 |" in p.stdout,
              "lab bench --profile names OpenBLAS by default and profiles the phases (rc %d)" % p.returncode)
        have_dnnl = False
        for name in ("libdnnl.so.2", "libdnnl.so.3"):
            try:
                ctypes.CDLL(name)
                have_dnnl = True
            except OSError:
                pass
        if have_dnnl:
            dnnl = dict(os.environ, POSENC_LAB_BLAS="onednn")
            p = subprocess.run([BIN, "lab", "bench", "--profile", "--models", "small", "--threads", "1", "--reps", "1"],
                               capture_output=True, text=True, env=dnnl)
            named = p.returncode == 0 and "sgemm from libdnnl.so." in p.stdout
            why = "" if named else "bench rc %d: %s" % (p.returncode, (p.stderr or p.stdout).strip()[:600])
            outs = []
            for threads in ("1", "2"):
                path = os.path.join(d, "dnnl%s.safetensors" % threads)
                p = subprocess.run([BIN, "lab", "train", "--scheme", "rope", "--text", text, "--steps", "3", "-o", path,
                                    "--threads", threads] + SMALL[:-2], capture_output=True, text=True, env=dnnl)
                outs.append(open(path, "rb").read() if p.returncode == 0 else None)
                if p.returncode != 0:
                    why += " train --threads %s rc %d: %s" % (threads, p.returncode, p.stderr.strip()[-300:])
            check(named and outs[0] is not None and outs[0] == outs[1],
                  "POSENC_LAB_BLAS=onednn: the bench names libdnnl.so.N; 1 and 2 threads train byte-identically "
                  + why)
        else:
            print("skip POSENC_LAB_BLAS=onednn (no libdnnl.so.2 or .3 here)")
        # every scheme trains from the command line and evaluates past its training length where it can
        for scheme in ("none", "sinusoidal", "learned", "rope", "alibi", "t5", "shaw", "concat", "half-concat",
                       "hybrid", "freq-scale", "gru", "sparse", "index", "normalized"):
            path = os.path.join(d, scheme + ".safetensors")
            extra = ["--random-positions", "64"] if scheme == "sinusoidal" else []
            rc, out = run(["lab", "train", "--scheme", scheme, "--text", text, "--steps", "2", "-o", path] + SMALL + extra)
            rc2, out2 = run(["lab", "eval", "--checkpoint", path, "--text", text, "--max-windows", "2", "--json",
                             "--len", "32" if scheme in ("learned", "hybrid") else "48"])
            check(rc == 0 and rc2 == 0 and "loss" in out2, "train + eval --scheme %s%s: %s" %
                  (scheme, " (random positions)" if extra else "", out2.strip() if rc2 == 0 else (out + out2).strip()[-200:]))
        # RoPE and every scaling at evaluation
        rope = os.path.join(d, "rope.safetensors")
        rc, _ = run(["lab", "train", "--scheme", "rope", "--text", text, "--steps", "2", "-o", rope] + SMALL)
        for s in ("none", "linear", "ntk", "dynamic", "yarn", "llama3"):
            rc, out = run(["lab", "eval", "--checkpoint", rope, "--text", text, "--len", "128", "--max-windows", "2",
                           "--rope-scaling", s, "--rope-factor", "4", "--json"])
            check(rc == 0 and "loss" in out, "rope eval at 4x context with --rope-scaling %s: %s" % (s, out.strip()))
        import numpy as np  # noqa: E402 (Debian's numpy, only here)
        lf = os.path.join(d, "long.npy")
        np.save(lf, np.array([1.0, 1.5, 2.0, 4.0, 4.0, 6.0, 8.0, 8.0]))  # head dim 16 -> 8 pairs
        rc, out = run(["lab", "eval", "--checkpoint", rope, "--text", text, "--len", "128", "--max-windows", "2",
                       "--rope-scaling", "longrope", "--rope-factor", "4", "--longrope-factors", lf, "--json"])
        check(rc == 0 and "loss" in out, "rope eval with --rope-scaling longrope and a factor list: %s" % out.strip())
        np.save(lf, np.array([1.0, 2.0]))
        rc, out = run(["lab", "eval", "--checkpoint", rope, "--text", text, "--rope-scaling", "longrope", "--longrope-factors", lf])
        check(rc == 2 and "8" in out, "longrope factor list of the wrong length refused: " + out.strip().splitlines()[-1])
        # fine-tune with the scaling (Chen et al.'s PI procedure): --init from the context-32 model, context 64,
        # --rope-scaling; the checkpoint keeps it and lab eval uses it unless told otherwise
        for s, extra in (("linear", []), ("yarn", ["--rope-beta-fast", "16", "--rope-attention-factor", "1.1"]),
                         ("dynamic", []), ("ntk", []), ("llama3", ["--rope-low-freq-factor", "1", "--rope-high-freq-factor", "2"])):
            ft = os.path.join(d, "ft-%s.safetensors" % s)
            rc, out = run(["lab", "train", "--init", rope, "--text", text, "--steps", "2", "--context", "64", "--batch", "2",
                           "--threads", "1", "--rope-scaling", s, "--rope-factor", "2", "-o", ft] + extra)
            cfg_line = [l for l in out.splitlines() if l.startswith("config:")]
            check(rc == 0 and cfg_line and ("rope_scaling=%s rope_factor=2 rope_original_context=32" % s) in cfg_line[0]
                  and "context=64" in cfg_line[0] and "layers=1" in cfg_line[0],
                  "train --init CKPT --context 64 --rope-scaling %s --rope-factor 2: the config keeps the init's model "
                  "(layers=1), original context 32 (rc %d)" % (s, rc))
            rc, out = run(["lab", "eval", "--checkpoint", ft, "--text", text, "--max-windows", "2", "--json"])
            rc2, out2 = run(["lab", "eval", "--checkpoint", ft, "--text", text, "--max-windows", "2", "--json",
                             "--rope-scaling", s, "--rope-factor", "2"])
            rc3, out3 = run(["lab", "eval", "--checkpoint", ft, "--text", text, "--max-windows", "2", "--json",
                             "--rope-scaling", "none"])
            j, j2, j3 = [json.loads(o) if r == 0 else {} for r, o in ((rc, out), (rc2, out2), (rc3, out3))]
            check(j.get("rope_scaling") == s and j.get("rope_factor") == 2 and j.get("loss") == j2.get("loss")
                  and j3.get("rope_scaling") == "none" and j3.get("loss") != j.get("loss"),
                  "lab eval of the %s fine-tune: as trained by default (%s) == explicit; --rope-scaling none differs (%s)"
                  % (s, out.strip(), j3.get("loss")))
        rc, out = run(["lab", "eval", "--checkpoint", os.path.join(d, "ft-linear.safetensors"), "--text", text,
                       "--max-windows", "2"])
        check(rc == 0 and "rope scaling linear factor 2, as trained" in out, "lab eval prints the scaling: " + out.strip())
        for extra, needle in ((["--rope-scaling", "longrope", "--rope-factor", "2"], "evaluation option"),
                              (["--rope-factor", "2"], "--rope-scaling none"),
                              (["--resume", rope], "give one")):
            bad = os.path.join(d, "bad-ft.safetensors")
            rc, out = run(["lab", "train", "--init", rope, "--text", text, "--steps", "1", "--context", "64", "-o", bad] + extra)
            check(rc == 2 and needle in out and not os.path.exists(bad),
                  "train --init %s -> rc %d: %s" % (" ".join(extra), rc, out.strip().splitlines()[0] if out.strip() else ""))
        rc, out = run(["lab", "train", "--scheme", "alibi", "--text", text, "--steps", "1", "--rope-scaling", "linear",
                       "--rope-factor", "2", "-o", os.path.join(d, "bad-alibi.safetensors")] + SMALL)
        check(rc == 2 and "needs scheme rope" in out, "--rope-scaling with --scheme alibi refused: " + out.strip().splitlines()[0])
        # bad input: named value, usage exit code, nothing written
        bad_out = os.path.join(d, "never.safetensors")
        cases = [
            (["--scheme", "bogus"], "bogus"),
            (["--scheme", "none", "--d-model", "30", "--heads", "4"], "30"),
            (["--scheme", "rope", "--d-model", "36", "--heads", "4"], "head dim 9"),
            (["--scheme", "none", "--context", "0"], "got 0"),
            (["--scheme", "none", "--lr", "nan"], "nan"),
        ]
        for extra, needle in cases:
            rc, out = run(["lab", "train", "--text", text, "--steps", "1", "-o", bad_out] + extra)
            check(rc == 2 and needle in out and not os.path.exists(bad_out),
                  "train %s -> rc %d: %s" % (" ".join(extra), rc, out.strip().splitlines()[0] if out.strip() else ""))
        other = os.path.join(d, "other.safetensors")
        rc, out = run(["lab", "train", "--scheme", "learned", "--text", text, "--steps", "1", "--resume", ck, "-o", other,
                       "--layers", "2", "--d-model", "32", "--heads", "2", "--context", "32", "--batch", "2"])
        check(rc != 0 and "layers=1" in out and not os.path.exists(other), "resume from another configuration refused: " +
              out.strip().splitlines()[0])
        trunc = os.path.join(d, "trunc.safetensors")
        with open(trunc, "wb") as f:
            f.write(open(ck, "rb").read()[:-500])
        rc, out = run(["lab", "eval", "--checkpoint", trunc, "--text", text])
        check(rc == 1 and "trunc.safetensors" in out and "truncated" in out, "truncated checkpoint refused: " + out.strip().splitlines()[-1])
        # the benchmark runs (speed itself is measured by hand, docs/benchmarks.md): torch's eager and
        # compiled rows come back from the subprocess, the best names its mode and thread count (at most
        # the row's), and the ratio is C over it; unknown model names are refused
        rc, out = run(["lab", "bench", "--models", "small", "--threads", "1,2", "--reps", "5"])
        rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in out.splitlines()
                if line.startswith("| small")]
        ok = rc == 0 and len(rows) == 2 and all(len(r) == 14 for r in rows)
        for r in rows if ok else []:
            c_ms, eager, compiled = float(r[4].split()[0]), float(r[9].split()[0]), float(r[10].split()[0])
            best = re.match(r"([0-9.]+) \((eager|compile), ([0-9]+)\)$", r[11])
            ok = ok and c_ms > 0 and eager > 0 and compiled > 0 and best is not None and \
                int(best.group(3)) <= int(r[3]) and float(best.group(1)) <= min(eager, compiled) and \
                abs(float(r[12].strip("*")) - c_ms / float(best.group(1))) < 0.01 + 0.01 * c_ms / float(best.group(1))
        check(ok, "lab bench --models small: C and torch (eager, compiled, best) rows at 1 and 2 threads (%s)" %
              ("; ".join(" ".join(r[3:13]) for r in rows) if rows else out.strip()[-300:]))
        rc, out = run(["lab", "bench", "--models", "small", "--threads", "1", "--reps", "5", "--python",
                       os.path.join(d, "no-such-python")])
        check(rc == 0 and "torch did not run" in out and "no-such-python" in out and "| - |" in out,
              "lab bench without a working torch: C row, torch '-', and why: " + out.strip().splitlines()[-1])
        rc, out = run(["lab", "bench", "--models", "small", "--threads", "1", "--reps", "5", "--python",
                       "/nowhere/it's; touch %s/injected #" % d])
        check(rc == 0 and "single quote" in out and not os.path.exists(os.path.join(d, "injected")),
              "lab bench with a quote in --python: refused, nothing run: " + out.strip().splitlines()[-1])
        rc, out = run(["lab", "bench", "--models", "small,huge"])
        check(rc == 2 and "huge" in out, "lab bench --models with an unknown model refused")
        leftovers = [n for n in os.listdir(d) if n.startswith(".") or ".tmp" in n]
        check(not leftovers, "no temporary files left behind (%s)" % leftovers)
    failed = results.count(False)
    print("%d passed, %d failed" % (len(results) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
