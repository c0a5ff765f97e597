"""An output that is one of the inputs (issue 26 item 2): every command that takes
-o refuses, before reading or writing anything, when -o names the same file (same
device and inode: the same name, a hard link or a symbolic link) as any input,
with exit 2 and a message naming both; the input keeps its bytes. `lab train
--resume CKPT -o CKPT` (continue a checkpoint in place) stays allowed (tested in
lab/tests/test_lab_cli.py); `bias` and `rope explain` read no input file that -o
could name. A file name holding a newline is printed escaped."""
import os

import numpy as np

from common import Checks, run, tmpdir

c = Checks()
d = tmpdir()


def fresh(name, data):
    path = os.path.join(d, name)
    if os.path.lexists(path):
        os.remove(path)
    with open(path, "wb") as f:
        f.write(data)
    return path


np.save(os.path.join(d, "ref.npy"), np.arange(8, dtype=np.int64))
NPY = open(os.path.join(d, "ref.npy"), "rb").read()
np.save(os.path.join(d, "ref2.npy"), np.zeros((4, 8), dtype=np.float32))
TABLE = open(os.path.join(d, "ref2.npy"), "rb").read()
LINE = b'{"id":"tiny:rope:s1","experiment":"tiny","label":"rope"}\n'
TEXT = b"hello world\n" * 100

# (command words with {IN} for the input and {OUT} for the output, file name, bytes)
CASES = [
    (["table", "--positions", "{IN}", "--dim", "4", "-o", "{OUT}"], "p.npy", NPY),
    (["table", "--kind", "learned", "--table", "{IN}", "--len", "4", "-o", "{OUT}"], "t.npy", TABLE),
    (["table", "--kind", "learned", "--input-ids", "{IN}", "--table", "x.npy", "-o", "{OUT}"], "ids.npy", NPY),
    (["rope", "apply", "--in", "{IN}", "-o", "{OUT}"], "x.npy", TABLE),
    (["rope", "apply", "--in", "x.npy", "--positions", "{IN}", "-o", "{OUT}"], "p.npy", NPY),
    (["rope", "freqs", "--dim", "8", "--scaling", "longrope", "--short-factors", "{IN}", "-o", "{OUT}"], "f.npy", NPY),
    (["rope", "freqs", "--config", "{IN}", "-o", "{OUT}"], "config.npy", b'{"model_type": "llama"}'),
    (["compose", "--tokens", "{IN}", "--ids", "ids.npy", "-o", "{OUT}"], "tok.npy", TABLE),
    (["compose", "--tokens", "tok.npy", "--pe", "{IN}", "-o", "{OUT}"], "pe.npy", TABLE),
    (["plot", "heatmap", "{IN}", "-o", "{OUT}"], "t.png", TABLE),
    (["plot", "heatmap", "--config", "{IN}", "-o", "{OUT}"], "c.svg", b"{}"),
    (["report", "--lab", "{IN}", "-o", "{OUT}"], "r.html", LINE),
    (["report", "{IN}", "-o", "{OUT}"], "t.html", TABLE),
    (["lab", "train", "--text", "{IN}", "--steps", "1", "-o", "{OUT}"], "corpus.txt", TEXT),
    (["lab", "train", "--init", "{IN}", "--text", "c.txt", "-o", "{OUT}"], "ck.safetensors", b"x" * 64),
    (["lab", "run", "tiny", "--resume", "--text", "{IN}", "-o", "{OUT}"], "corpus.txt", TEXT),
    (["lab", "run", "tiny", "--resume", "c.txt", "{IN}", "-o", "{OUT}"], "corpus.txt", TEXT),
    (["lab", "merge", "a.jsonl", "{IN}", "-o", "{OUT}"], "r.jsonl", LINE),
    (["lab", "claims", "{IN}", "-o", "{OUT}"], "r.jsonl", LINE),
    (["lab", "plot", "{IN}", "-o", "{OUT}"], "r.svg", LINE),
]

for words, name, data in CASES:
    label = " ".join(words[:2])
    # the same name, a hard link and a symbolic link all name the same file
    for how in ("same name", "hard link", "symbolic link"):
        src = fresh(name, data)
        out = src
        if how != "same name":
            out = os.path.join(d, "other-" + name)
            if os.path.lexists(out):
                os.remove(out)
            (os.link if how == "hard link" else os.symlink)(src, out)
        args = [w.replace("{IN}", src).replace("{OUT}", out) for w in words]
        rc, so, se = run(*args, cwd=d)
        kept = open(src, "rb").read() == data
        c.check(rc == 2 and "are the same file" in se and src in se and kept,
                f"[C16] {label} ... {' '.join(words[2:])} ({how}): exit {rc}, input kept {kept}: {se.strip().splitlines()[0] if se.strip() else ''}")

# outputs that are not inputs are still written
src = fresh("p.npy", NPY)
rc, so, se = run("table", "--positions", src, "--dim", "4", "-o", os.path.join(d, "table-out.npy"))
c.check(rc == 0 and open(src, "rb").read() == NPY, "table --positions P -o another file: written (exit %d)" % rc)

# the default output of lab run (lab-NAME.jsonl in the current folder) and report (report.html)
fresh("lab-tiny.jsonl", TEXT)
rc, so, se = run("lab", "run", "tiny", "--resume", "--text", "lab-tiny.jsonl", cwd=d)
c.check(rc == 2 and "are the same file" in se and open(os.path.join(d, "lab-tiny.jsonl"), "rb").read() == TEXT,
        "lab run tiny --text lab-tiny.jsonl (the default output): refused, exit %d" % rc)
fresh("report.html", LINE)
rc, so, se = run("report", "--lab", "report.html", cwd=d)
c.check(rc == 2 and "are the same file" in se and open(os.path.join(d, "report.html"), "rb").read() == LINE,
        "report --lab report.html (the default output): refused, exit %d" % rc)

# a file name with a newline and an escape sequence is printed escaped, on one line
rc, so, se = run("table", "--positions", "evil\nposenc table: wrote x\x1b[31m.npy", "--dim", "4", "-o", "-")
lines = se.strip().splitlines()
c.check(rc != 0 and len(lines) == 1 and "evil\\nposenc table: wrote x\\x1b[31m.npy" in lines[0] and "\x1b" not in se,
        "[C17] a name with a newline and ESC is printed escaped on one line: %r" % se.strip())
# ... and in the notes of a successful run ("wrote NAME"), for a table, a picture and a report
evil = os.path.join(d, "t\nposenc table: wrote fake\x1b[2J.npy")
for args in (["table", "--len", "2", "--dim", "2", "-o", evil], ["plot", "heatmap", evil, "-o", evil[:-4] + ".svg"],
             ["report", evil, "-o", evil[:-4] + ".html"]):
    rc, so, se = run(*args)
    notes = [x for x in se.splitlines() if "wrote" in x]
    c.check(rc == 0 and len(notes) == 1 and "\\n" in notes[0] and "\x1b" not in se + so,
            "%s: the note naming a file with a newline and ESC is one escaped line: %r" % (args[0], notes[0] if notes else se))
c.finish()
