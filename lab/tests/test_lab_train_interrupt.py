#!/usr/bin/env python3
"""issue 40 case 10: Ctrl-C (or SIGTERM) during `lab train` before the first
--checkpoint-every boundary keeps what was trained: with -o, a checkpoint of the
steps done (loadable: --resume continues from it) and a note naming it; without
-o, a note that the steps are lost. Exit 128 + the signal, as a shell reports it.
Before this, the process died at once (exit 130, no checkpoint, no word)."""
import os
import shutil
import signal
import subprocess
import sys
import tempfile

BIN = os.environ.get("POSENC_BIN", "posenc")
SMALL = ["--layers", "1", "--d-model", "32", "--heads", "2", "--context", "32", "--batch", "2", "--threads", "1"]
failed = 0


def check(ok, what):
    global failed
    print(("  ok   " if ok else "  FAIL ") + what, flush=True)
    failed += not ok


def interrupt(args, sig):
    """Start lab train, wait for its first logged step (--log-every 1), send sig."""
    p = subprocess.Popen([BIN] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for line in p.stdout:
        if line.startswith("step"):
            break
    p.send_signal(sig)
    out, err = p.communicate(timeout=120)
    return p.returncode, err


def main():
    d = tempfile.mkdtemp(prefix="posenc-test-")
    try:
        text = os.path.join(d, "t.txt")
        with open(text, "w") as f:
            f.write("the quick brown fox jumps over the lazy dog. " * 400)
        ck = os.path.join(d, "ck.safetensors")
        base = ["lab", "train", "--text", text, "--steps", "1000000", "--checkpoint-every", "1000000",
                "--log-every", "1"] + SMALL
        rc, err = interrupt(base + ["-o", ck], signal.SIGINT)
        check(rc == 130 and os.path.exists(ck) and "interrupted after step" in err and "ck.safetensors" in err,
              f"Ctrl-C before the first checkpoint with -o: exit {rc}, checkpoint kept and named: {err.strip()[-160:]}")
        if os.path.exists(ck):
            p = subprocess.run([BIN, "lab", "train", "--text", text, "--steps", "0", "--resume", ck] + SMALL,
                               capture_output=True, text=True)
            check(p.returncode == 0 or "step" in p.stdout, f"the kept checkpoint loads with --resume: {p.returncode} "
                  f"{p.stderr.strip()[-120:]}")
        rc, err = interrupt(base, signal.SIGTERM)
        check(rc == 128 + signal.SIGTERM and "nothing kept" in err,
              f"SIGTERM without -o: exit {rc}, says the steps are lost: {err.strip()[-160:]}")
        check(sorted(os.listdir(d)) == ["ck.safetensors", "t.txt"], f"no temporary file left: {sorted(os.listdir(d))}")
    finally:
        shutil.rmtree(d, ignore_errors=True)
    print(f"{'FAILED' if failed else 'passed'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
