"""Issue 13.10: analyze, diff and signal work in bounded memory. Each command's
peak resident set (os.wait4's ru_maxrss, in KiB on Linux) on 67-134 MB of float32
inputs must stay under 2 x the input bytes + 48 MiB. Why that bound: the input
itself is held once (1x); the fit's angle array is rows x dim/2 float64 (1x
the float32 input); the rest is O(rows) statistics, an O(rows) spectrum
(<= 16 MiB here), 2048 rows for the closest-pair search and the program itself.
Before the fix the library copied every input to float64 (2x each) and health
copied it again: analyze took ~5x, diff ~3.5x, signal ~4x. RSS counts touched
pages, so it repeats within a few MiB from run to run."""
import os
import shutil
import subprocess

import sys

from common import BIN, Checks, tmpdir

ROWS, DIM = 65536, 256  # 67 MB of float32 per file (diff, signal: 134 MB); ~20 s of CPU
SLACK = 48 << 20


def peak_rss(*args):
    p = subprocess.Popen([BIN, *map(str, args)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    err = p.stderr.read().decode()
    p.stderr.close()
    return p.returncode, usage.ru_maxrss * 1024, err


def main():
    t = Checks()
    d = tmpdir()
    try:
        P = lambda n: os.path.join(d, n)
        subprocess.run([BIN, "table", "--len", str(ROWS), "--dim", str(DIM), "-o", P("a.npy")], check=True, capture_output=True)
        subprocess.run([BIN, "table", "--len", str(ROWS), "--dim", str(DIM), "--start", "1", "-o", P("b.npy")], check=True,
                       capture_output=True)
        # made in a child: ru_maxrss of a forked child counts the parent's pages, so this process stays small
        subprocess.run([sys.executable, "-c", "import numpy as np, sys; d = sys.argv[1]; "
                        f"t = np.random.default_rng(0).standard_normal(({ROWS}, {DIM})).astype(np.float32); "
                        "np.save(d + '/tok.npy', t); np.save(d + '/inp.npy', t * np.float32(16) + np.load(d + '/a.npy'))", d],
                       check=True)
        size = os.path.getsize(P("a.npy"))
        runs = [("analyze", size, ["analyze", P("a.npy"), "--max-offset", 1]),
                ("diff", 2 * size, ["diff", P("a.npy"), P("b.npy"), "--max-offset", 1]),
                ("signal", 2 * size, ["signal", P("tok.npy"), P("inp.npy")])]
        for name, input_bytes, argv in runs:
            rc, peak, err = peak_rss(*argv)
            bound = 2 * input_bytes + SLACK
            t.check(rc == 0 and peak <= bound, f"{name}: peak RSS {peak / 2**20:.0f} MiB for {input_bytes / 2**20:.0f} MiB of "
                    f"input = {peak / input_bytes:.2f}x (bound 2x + 48 MiB = {bound / 2**20:.0f} MiB){err.strip()[:80]}")
    finally:
        shutil.rmtree(d, ignore_errors=True)
    t.finish()


if __name__ == "__main__":
    main()
