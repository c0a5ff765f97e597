"""Nothing lost: a run that fails midway (the output write hits a file-size
limit, EFBIG, as a full disk would; or the input cannot be read) leaves no
partial output and no temporary file, and an existing output file keeps its
old bytes. Every case also checks the exit code (1: runtime/I-O) and that the
message names the file and the reason.

Issue 13 adds: every catchable terminating signal, and SIGKILL where the file
system has O_TMPFILE, delivered while the output is being written leaves
nothing; the same with the named-temporary fallback (POSENC_NO_TMPFILE=1);
permissions (umask for new files, mode kept on replace), symbolic and hard
links, a 249-character output name."""
import os
import resource
import signal
import stat
import subprocess
import time

import numpy as np

from common import BIN, VALGRIND, Checks, run, tmpdir, under_valgrind

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


def temp_fd_open(pid, folder):
    """True once pid holds a file open in folder: an unnamed O_TMPFILE ('folder/#123
    (deleted)') or a named temporary."""
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith(folder + "/"):  # any file being written there
                return True
    except OSError:
        pass
    return False


def interrupt_write(t, d, sig, named):
    """Start a 164 MB table, freeze it (SIGSTOP) once its output file is open and the
    final name does not exist yet, send sig, let it run (SIGCONT): it must die of sig
    and leave the folder empty."""
    out = os.path.join(d, "big.npy")
    env = dict(os.environ, POSENC_NO_TMPFILE="1" if named else "0")
    label = f"{signal.Signals(sig).name} ({'named temporary' if named else 'O_TMPFILE'})"
    for attempt in range(3):
        p = subprocess.Popen([BIN, "table", "--len", str(40000 * (attempt + 1)), "--dim", "1024", "-o", out],
                             env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        caught = False
        deadline = time.time() + 20
        while p.poll() is None and time.time() < deadline:
            if temp_fd_open(p.pid, d):
                os.kill(p.pid, signal.SIGSTOP)
                caught = not os.path.exists(out) and temp_fd_open(p.pid, d)
                os.kill(p.pid, sig)
                os.kill(p.pid, signal.SIGCONT)
                break
        p.wait()
        p.stderr.close()
        if caught:
            break
        if os.path.exists(out):
            os.remove(out)
    left = leftovers(d, set())
    t.check(caught and p.returncode == -sig and left == [],
            f"{label} during the write: died of the signal (exit {p.returncode}), folder holds {left}")
    for f in left:
        os.remove(os.path.join(d, f))


def signals(t):
    d = tmpdir()
    probe = True
    try:
        os.close(os.open(d, os.O_TMPFILE | os.O_WRONLY, 0o600))
    except OSError:
        probe = False
    fatal = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGALRM,
             signal.SIGUSR1, signal.SIGUSR2, signal.SIGXCPU]
    for sig in fatal:
        interrupt_write(t, d, sig, named=True)
    if probe:
        for sig in fatal + [signal.SIGKILL]:
            interrupt_write(t, d, sig, named=False)
    else:
        print("  note: this file system has no O_TMPFILE; SIGKILL can leave the named temporary")
    # SIGPIPE is ignored (a closed stdout becomes a write error): the run completes
    out = os.path.join(d, "big.npy")
    p = subprocess.Popen([BIN, "table", "--len", "40000", "--dim", "1024", "-o", out], stderr=subprocess.DEVNULL)
    while p.poll() is None and not temp_fd_open(p.pid, d):
        pass
    if p.poll() is None:
        os.kill(p.pid, signal.SIGPIPE)
    p.wait()
    t.check(p.returncode == 0 and leftovers(d, {"big.npy"}) == [] and os.path.getsize(out) == 40000 * 1024 * 4 + 128,
            f"SIGPIPE during the write is ignored: exit {p.returncode}, complete output, nothing else ({os.listdir(d)})")
    os.remove(out)


def permissions_and_links(t):
    d = tmpdir()
    out = os.path.join(d, "pe.npy")
    small = ["table", "--len", 3, "--dim", 4]

    def run_umask(mask, *args):
        return subprocess.run([BIN, *map(str, args)], capture_output=True, text=True,
                              preexec_fn=lambda: os.umask(mask)).returncode

    for named in (False, True):
        how = "named temporary" if named else "O_TMPFILE"
        env_named = "1" if named else "0"
        os.environ["POSENC_NO_TMPFILE"] = env_named
        for mask, want in ((0o022, 0o644), (0o077, 0o600), (0o002, 0o664)):
            if os.path.exists(out):
                os.remove(out)
            rc = run_umask(mask, *small, "-o", out)
            mode = stat.S_IMODE(os.stat(out).st_mode)
            t.check(rc == 0 and mode == want, f"{how}: new file under umask {mask:03o} has mode {mode:03o} (want {want:03o})")
        os.chmod(out, 0o640)
        rc = run_umask(0o022, *small, "-o", out)
        mode = stat.S_IMODE(os.stat(out).st_mode)
        t.check(rc == 0 and mode == 0o640, f"{how}: a replaced file keeps its mode 640, got {mode:03o}")
        # a symbolic link is written through: the target is replaced, the link stays
        os.remove(out)
        os.mkdir(os.path.join(d, "real"))
        target = os.path.join(d, "real", "target.npy")
        np.save(target, np.arange(2))
        os.chmod(target, 0o600)
        os.symlink(os.path.join("real", "target.npy"), out)
        rc = run_umask(0o022, *small, "-o", out)
        ok = rc == 0 and os.path.islink(out) and np.load(target).shape == (3, 4)
        t.check(ok and stat.S_IMODE(os.stat(target).st_mode) == 0o600 and sorted(os.listdir(os.path.join(d, "real"))) == ["target.npy"],
                f"{how}: -o through a relative symlink replaces its target (mode kept), the link stays a link")
        # a dangling link: the file it names is created
        os.remove(target)
        rc = run_umask(0o022, *small, "-o", out)
        t.check(rc == 0 and os.path.islink(out) and np.load(target).shape == (3, 4),
                f"{how}: -o through a dangling symlink creates the file it names (exit {rc})")
        os.remove(out)
        os.remove(target)
        os.rmdir(os.path.join(d, "real"))
        # a hard link: the output name gets a new file, the other name keeps the old bytes
        np.save(out, np.arange(5))
        other = os.path.join(d, "other.npy")
        os.link(out, other)
        rc = run_umask(0o022, *small, "-o", out)
        t.check(rc == 0 and np.load(out).shape == (3, 4) and np.load(other).shape == (5,),
                f"{how}: replacing a hard-linked output breaks the link; the other name keeps the old table")
        os.remove(other)
        # the longest legal name (NAME_MAX 255: 249 characters + '.npy' = 253)
        long_out = os.path.join(d, "x" * 249 + ".npy")
        rc, _, se = run(*small, "-o", long_out)
        t.check(rc == 0 and os.path.exists(long_out), f"{how}: a {len(os.path.basename(long_out))}-character output name is written (exit {rc}) {se.strip()[:80]}")
        os.remove(long_out)
        # a name over NAME_MAX fails, and the message keeps its reason
        too_long = os.path.join(d, "y" * 300 + ".npy")
        rc, _, se = run(*small, "-o", too_long)
        t.check(rc == 1 and se.rstrip().endswith("File name too long"), f"[F9] {how}: a 304-character name fails with the reason: '...{se.strip()[-60:]}'")
        t.check(leftovers(d, {"pe.npy"}) == [], f"{how}: nothing else in the folder: {leftovers(d, {'pe.npy'})}")
        os.remove(out)
    os.environ.pop("POSENC_NO_TMPFILE", None)
    # an existing output that is not a regular file is refused (as root, rename would replace it)
    fifo = os.path.join(d, "f.npy")
    os.mkfifo(fifo)
    rc, _, se = run(*small, "-o", fifo)
    t.check(rc == 1 and "it is not a regular file" in se and stat.S_ISFIFO(os.stat(fifo).st_mode),
            f"[F7] -o naming a FIFO is refused and the FIFO stays: exit {rc}")


def main():
    t = Checks()
    signals(t)
    permissions_and_links(t)
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
