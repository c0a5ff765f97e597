"""Long commands show a progress line with the time left on stderr when stderr is a
terminal, and print nothing extra otherwise. Each command runs twice: once with stderr
on a pseudo-terminal (Python's pty module; stdout stays a pipe, as in
`posenc bench > bench.md`), once with stderr a pipe. Uses a short bench (one RoPE group,
1 thread, no peers, 16 MiB bandwidth buffers) and a report."""
import os
import pty
import re
import shutil
import subprocess
import tempfile

from common import BIN, Checks


def run_with_tty_stderr(args, cwd):
    """Run with stderr on a pty; return (exit code, stdout, everything written to the terminal)."""
    master, slave = pty.openpty()
    p = subprocess.Popen([BIN, *args], stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL, cwd=cwd)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    out = p.stdout.read()
    p.wait()
    os.close(master)
    return p.returncode, out.decode(), b"".join(chunks).decode(errors="replace")


def main():
    t = Checks()
    d = tempfile.mkdtemp(prefix="posenc-progress-")
    try:
        bench = ["bench", "--only", "rope", "--threads", "1", "--no-peers", "--reps", "5", "--mem-mib", "16"]
        report = ["report", "-o", os.path.join(d, "r.html")]
        for name, args, label in (("bench", bench, "RoPE in place"), ("report", report, "Heat maps")):
            rc, out, term = run_with_tty_stderr(args, d)
            lines = [x for x in term.split("\r") if f"posenc {name}:" in x and "%" in x]
            pct = [int(m.group(1)) for x in lines for m in [re.search(r"(\d+)%", x)] if m]
            t.check(rc == 0 and len(lines) >= 3 and label in term and pct == sorted(pct) and pct[0] == 0,
                    f"{name}, stderr a terminal: {len(lines)} progress redraws, percentages {pct[:12]}, label '{label}' shown")
            t.check("elapsed" in term and term.count("\x1b[K") == len(lines) + 1,
                    f"{name}: each redraw is '\\r\\e[K... elapsed ...' ({term.count(chr(27) + '[K')} erases for "
                    f"{len(lines)} redraws + 1: the line is erased at the end)")
            t.check("\r" not in out and "ETA" not in out and "elapsed" not in out,
                    f"{name}: stdout (a pipe) carries no progress ({len(out)} bytes of output)")
            p = subprocess.run([BIN, *args], capture_output=True, text=True, cwd=d)
            t.check(p.returncode == 0 and "\r" not in p.stderr and "\x1b" not in p.stderr and "elapsed" not in p.stderr
                    and "%" not in p.stderr,
                    f"{name}, stderr a pipe: no progress at all (stderr: {p.stderr.strip()[:80]!r})")
        # a long enough run shows a real ETA (not only 'estimating', which lasts 0.5 s): 40 reps of
        # 256 MiB bandwidth and 6 RoPE rows take ~2.5 s after the line starts on an idle machine
        # (5 reps took < 0.5 s there, so the ETA never showed and the check failed when idle)
        rc, out, term = run_with_tty_stderr(bench[:-4] + ["--reps", "40", "--mem-mib", "256"], d)
        t.check(rc == 0 and re.search(r"ETA \d+:\d\d", term), "bench (256 MiB buffers): an 'ETA m:ss' appears once the rate is known"
                + (f" ({re.search(r'ETA [0-9:]+', term).group(0)})" if re.search(r"ETA [0-9:]+", term) else ""))
    finally:
        shutil.rmtree(d, ignore_errors=True)
    t.finish()


if __name__ == "__main__":
    main()
