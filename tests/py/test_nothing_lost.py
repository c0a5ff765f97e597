"""Nothing lost: a run that fails midway (the output write hits a file-size
limit, EFBIG, as a full disk would; or the input cannot be read) leaves no
partial output and no temporary file, and an existing output file keeps its
old bytes. Every case also checks the exit code (1: runtime/I-O) and that the
message names the file and the reason."""
import os
import resource
import subprocess

import numpy as np

from common import BIN, VALGRIND, Checks, tmpdir, under_valgrind

LIMIT = 8192  # bytes the child may write per file: far below the tables written here


def run_limited(*args):
    """Run posenc with RLIMIT_FSIZE = LIMIT (like `ulimit -f 8`); the CLI ignores SIGXFSZ,
    so the write fails with EFBIG and the library must clean up."""
    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))
    wrap = VALGRIND if under_valgrind() else []
    p = subprocess.run([*wrap, BIN, *map(str, args)], capture_output=True, text=True, preexec_fn=limit)
    return p.returncode, p.stdout, p.stderr


def leftovers(d, keep):
    return sorted(f for f in os.listdir(d) if f not in keep)


def main():
    t = Checks()
    d = tmpdir()
    for ext in ("npy", "csv"):
        out = os.path.join(d, f"pe.{ext}")
        # 1. no previous file: nothing may appear
        rc, _, se = run_limited("table", "--len", 2000, "--dim", 64, "-o", out)
        first = se.strip().splitlines()[0] if se.strip() else ""
        t.check(rc == 1 and "cannot write" in se and out in se and "File too large" in se,
                f"{ext}: write past the file-size limit fails with exit {rc}: '{first}'")
        t.check(leftovers(d, set()) == [], f"{ext}: no partial output, no temporary file (folder: {leftovers(d, set())})")
        # 2. an existing output keeps its bytes
        np.save(os.path.join(d, "old.npy"), np.arange(7))
        os.replace(os.path.join(d, "old.npy"), out)
        before = open(out, "rb").read()
        rc, _, se = run_limited("table", "--len", 2000, "--dim", 64, "-o", out)
        t.check(rc == 1 and open(out, "rb").read() == before,
                f"{ext}: existing {len(before)}-byte output untouched after the failed write (exit {rc})")
        t.check(leftovers(d, {os.path.basename(out)}) == [], f"{ext}: no temporary file beside the kept output")
        # 3. the same command under the limit succeeds: the failure above was the limit
        rc, _, _ = run_limited("table", "--len", 2, "--dim", 4, "-o", out)
        t.check(rc == 0 and os.path.getsize(out) < LIMIT, f"{ext}: a small table under the same limit is written (exit {rc})")
        os.remove(out)

    # 4. a read error on the input (a folder where a positions file should be): nothing written
    out = os.path.join(d, "pe.npy")
    np.save(out, np.arange(3))
    before = open(out, "rb").read()
    pos_dir = os.path.join(d, "pos.npy")
    os.mkdir(pos_dir)
    rc, _, se = run_limited("table", "--dim", 8, "--positions", pos_dir, "-o", out)
    t.check(rc == 1 and "not a regular file" in se and open(out, "rb").read() == before,
            f"unreadable input: exit {rc}, output untouched: '{se.strip()}'")
    # 5. a truncated input discovered after the header: nothing written
    pos = os.path.join(d, "p.npy")
    np.save(pos, np.arange(1000, dtype=np.int64))
    whole = open(pos, "rb").read()
    open(pos, "wb").write(whole[: len(whole) // 2])
    rc, _, se = run_limited("table", "--dim", 8, "--positions", pos, "-o", out)
    t.check(rc == 1 and "truncated" in se and open(out, "rb").read() == before,
            f"truncated input: exit {rc}, output untouched")
    t.check(leftovers(d, {"pe.npy", "pos.npy", "p.npy"}) == [], f"no temporary files at the end: {os.listdir(d)}")
    t.finish()


if __name__ == "__main__":
    main()
