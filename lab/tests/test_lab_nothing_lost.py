#!/usr/bin/env python3
"""Nothing lost in the lab's files: a lab run interrupted (Ctrl-C, SIGTERM) or
hitting a full disk (RLIMIT_FSIZE: the write fails with EFBIG, as on a full
disk) leaves its results file as it was after the last finished run, whole
lines only, or no file at all; lab train's checkpoint, lab plot's picture and
lab claims' table likewise: the old bytes stay, no temporary file is left,
the exit code says what happened and the message names the file. A Ctrl-C
amid lab train's checkpoint writes leaves a whole checkpoint."""
import hashlib
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile

BIN = os.environ.get("POSENC_BIN", "posenc")
SMALL = ["--layers", "1", "--d-model", "32", "--heads", "2", "--context", "32", "--batch", "2", "--threads", "1"]
results = []


def check(ok, what):
    results.append(bool(ok))
    print("%-4s %s" % ("ok" if ok else "FAIL", what))


def run(args, fsize=None):
    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    p = subprocess.run([BIN] + args, capture_output=True, text=True, preexec_fn=limit if fsize else None)
    return p.returncode, p.stdout + p.stderr


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def others(d, keep):
    return sorted(n for n in os.listdir(d) if n not in keep)


def interrupt_lab_run(args, sig):
    """Start `posenc lab run ...`, wait until it has loaded its corpus and started
    training (the first run of extrapolate --quick trains for seconds), then
    send sig. Returns (exit code, stderr)."""
    p = subprocess.Popen([BIN] + args, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    seen = []
    for line in p.stderr:
        seen.append(line)
        if "bytes from" in line:  # the corpus is loaded; training starts now
            break
    p.send_signal(sig)
    rest = p.stderr.read()
    p.wait()
    return p.returncode, "".join(seen) + rest


def whole_lines(path):
    with open(path, "rb") as f:
        data = f.read()
    if data and not data.endswith(b"\n"):
        return False
    try:
        [json.loads(line) for line in data.decode().splitlines()]
    except ValueError:
        return False
    return True


def main():
    with tempfile.TemporaryDirectory() as d:
        slow = ["lab", "run", "extrapolate", "--quick", "--threads", "1"]
        # Ctrl-C during the first run of a new file: nothing finished, so no file
        out = os.path.join(d, "new.jsonl")
        rc, err = interrupt_lab_run(slow + ["-o", out], signal.SIGINT)
        check(rc == 130 and "interrupted before the first run finished; " + out + " was not created" in err and
              others(d, set()) == [],
              "lab run, Ctrl-C in its first run: exit %d, no results file and says so, nothing else (%s)" % (rc, os.listdir(d)))

        # a results file from an earlier session (--resume): Ctrl-C or SIGTERM mid-run keeps its bytes
        kept = os.path.join(d, "kept.jsonl")
        rc, err = run(["lab", "run", "tiny", "--only", "tiny:sinusoidal:s1", "--threads", "1", "-o", kept])
        before = digest(kept)
        for sig, want in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
            rc, err = interrupt_lab_run(slow + ["--resume", "-o", kept], sig)
            check(rc == want and digest(kept) == before and whole_lines(kept) and others(d, {"kept.jsonl"}) == [] and
                  "kept.jsonl keeps every finished run (0 from this invocation" in err,
                  "lab run --resume, %s mid-run: exit %d, the results file keeps its bytes, nothing else" %
                  (signal.Signals(sig).name, rc))

        # full disk: the first write of a new file fails -> exit 1, message, no file, no temporary
        full = os.path.join(d, "full.jsonl")
        rc, err = run(["lab", "run", "tiny", "--only", "tiny:sinusoidal:s1", "--threads", "1", "-o", full], fsize=4096)
        check(rc == 1 and "full.jsonl" in err and not os.path.exists(full) and others(d, {"kept.jsonl"}) == [],
              "lab run on a full disk, new file: exit %d, nothing written: %s" % (rc, err.strip().splitlines()[-1]))
        # ... and an existing file keeps its finished runs, byte for byte
        rc, err = run(["lab", "run", "tiny", "--resume", "--threads", "1", "-o", kept],
                      fsize=os.path.getsize(kept) + 100)
        check(rc == 1 and "kept.jsonl" in err and digest(kept) == before and others(d, {"kept.jsonl"}) == [],
              "lab run --resume on a full disk: exit %d, the file keeps its bytes: %s" % (rc, err.strip().splitlines()[-1]))
        # the same file then resumes normally
        rc, err = run(["lab", "run", "tiny", "--resume", "--threads", "1", "-o", kept])
        ids = [json.loads(line)["id"] for line in open(kept)]
        check(rc == 0 and len(ids) == 9 and len(set(ids)) == 9 and whole_lines(kept),
              "lab run --resume afterwards completes the experiment: %d runs, each once" % len(ids))

        # a results file whose last line is unfinished (a crash of another writer): every reader
        # ignores that line the same way, and lab run --resume drops it instead of completing it
        cut = os.path.join(d, "cut.jsonl")
        lines = open(kept).read().splitlines(keepends=True)
        with open(cut, "w") as f:
            f.write("".join(lines[:3]) + lines[3][:200])
        for cmd, out in ((["lab", "plot", cut], "cut.svg"), (["lab", "plot", cut], "cut.png"),
                         (["lab", "claims", cut], "cut.md"), (["report", "--lab", cut], "cut.html")):
            rc, err = run(cmd + ["-o", os.path.join(d, out)])
            check(rc == 0 and "has no newline: ignored" in err, "%s on a file with an unfinished last line: exit %d, "
                  "the line ignored with a note" % (" ".join(cmd[:2]), rc))
            os.remove(os.path.join(d, out))
        rc, err = run(["lab", "run", "tiny", "--resume", "--threads", "1", "-o", cut])
        ids = [json.loads(line)["id"] for line in open(cut)]
        check(rc == 0 and whole_lines(cut) and len(ids) == 9 and len(set(ids)) == 9,
              "lab run --resume after an unfinished line: %d whole lines, each run once" % len(ids))
        os.remove(cut)

        # lab train: the checkpoint on a full disk
        text = os.path.join(d, "text.txt")
        with open(text, "w") as f:
            f.write("the quick brown fox jumps over the lazy dog. " * 400)
        ck = os.path.join(d, "ck.safetensors")
        rc, err = run(["lab", "train", "--scheme", "learned", "--text", text, "--steps", "2", "-o", ck] + SMALL,
                      fsize=4096)
        check(rc == 1 and "ck.safetensors" in err and not os.path.exists(ck) and others(d, {"kept.jsonl", "text.txt"}) == [],
              "lab train on a full disk: exit %d, no checkpoint, no temporary: %s" % (rc, err.strip().splitlines()[-1]))
        rc, err = run(["lab", "train", "--scheme", "learned", "--text", text, "--steps", "2", "-o", ck] + SMALL)
        ck_before = digest(ck)
        rc, err = run(["lab", "train", "--scheme", "learned", "--text", text, "--steps", "4", "-o", ck] + SMALL,
                      fsize=4096)
        check(rc == 1 and digest(ck) == ck_before and others(d, {"kept.jsonl", "text.txt", "ck.safetensors"}) == [],
              "lab train on a full disk over an existing checkpoint: exit %d, the old checkpoint stays" % rc)

        # Ctrl-C while lab train writes a checkpoint every step: the process dies of the signal
        # (nothing to finish), the checkpoint on disk is a whole one, no temporary is left
        p = subprocess.Popen([BIN, "lab", "train", "--scheme", "learned", "--text", text, "--steps", "100000",
                              "--checkpoint-every", "1", "--log-every", "1", "-o", ck] + SMALL,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        lines = 0
        for line in p.stdout:
            lines += line.startswith("step")
            if lines >= 20:  # well into the loop of writes
                break
        p.send_signal(signal.SIGINT)
        p.communicate()
        rc_eval, out = run(["lab", "eval", "--checkpoint", ck, "--text", text, "--max-windows", "2", "--json"])
        check(p.returncode == -signal.SIGINT and rc_eval == 0 and others(d, {"kept.jsonl", "text.txt", "ck.safetensors"}) == [],
              "lab train, Ctrl-C amid checkpoint writes: died of SIGINT, the checkpoint loads (%s), nothing else" %
              out.strip()[:60])

        # lab plot, lab claims and lab merge: the picture, the table, the merged results
        for cmd, name in ((["lab", "plot", kept], "plot.svg"), (["lab", "plot", kept], "plot.png"),
                          (["lab", "claims", kept], "claims.md"), (["lab", "merge", kept], "merged.jsonl")):
            path = os.path.join(d, name)
            rc, err = run(cmd + ["-o", path], fsize=512)
            check(rc == 1 and name in err and not os.path.exists(path) and
                  others(d, {"kept.jsonl", "text.txt", "ck.safetensors"}) == [],
                  "lab %s -o %s on a full disk: exit %d, nothing left: %s" % (cmd[1], name, rc,
                                                                          err.strip().splitlines()[-1] if err.strip() else ""))
    failed = results.count(False)
    print("%d passed, %d failed" % (len(results) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
