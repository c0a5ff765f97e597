#!/usr/bin/env python3
"""Loading lab checkpoints (issue 26 items 11 and 12): the safetensors header is
parsed once, not once per tensor (a 24 MiB header: lab eval's CPU time stays within
a few times that of `posenc analyze`, which parses it once; before, ~18x); a
config field given twice, or a non-finite one (used by the scheme or not: --init
would copy it into a model that uses it), is refused naming the file; a field out
of range that --init brings into use names the checkpoint and exits 1; lab eval on
an empty or 1-byte text names the file and the bytes needed and exits 1."""
import json
import os
import struct
import subprocess
import sys
import tempfile

BIN = os.environ.get("POSENC_BIN", "posenc")
SMALL = ["--layers", "1", "--d-model", "32", "--heads", "2", "--context", "32", "--batch", "2", "--threads", "1"]
results = []


def check(ok, what):
    results.append(bool(ok))
    print("%-4s %s" % ("ok" if ok else "FAIL", what), flush=True)


def run(args):
    p = subprocess.run([BIN] + args, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def cpu_seconds(args):
    p = subprocess.Popen([BIN] + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    err = p.stderr.read().decode()
    p.stderr.close()
    return os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime, err


def header_of(path):
    b = open(path, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    return b[8:8 + n].decode(), b[8 + n:]


def write_with_header(path, header, data):
    header += " " * (-len(header) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header)) + header.encode() + data)


def edit_config(src, dst, old, new):
    h, data = header_of(src)
    assert old in h, old
    write_with_header(dst, h.rstrip(" ").replace(old, new, 1), data)


with tempfile.TemporaryDirectory(prefix="posenc-lab-ckpt-") as d:
    text = os.path.join(d, "t.txt")
    with open(text, "w") as f:
        f.write("lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 200)
    ck = os.path.join(d, "ck.safetensors")
    rc, out = run(["lab", "train", "--scheme", "learned", "--text", text, "--steps", "2", "-o", ck] + SMALL)
    assert rc == 0, out

    # 11. a 24 MiB header of empty junk tensors: parsed once
    h, data = header_of(ck)
    parts = [h.rstrip(" ")[:-1]]
    size, k = len(parts[0]), 0
    while size < 24 << 20:
        e = ',"junk%09d":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}' % k
        parts.append(e)
        size += len(e)
        k += 1
    big = os.path.join(d, "big.safetensors")
    write_with_header(big, "".join(parts) + "}", data)
    rc1, t_eval, err = cpu_seconds(["lab", "eval", "--checkpoint", big, "--text", text, "--threads", "1"])
    rc2, t_analyze, _ = cpu_seconds(["analyze", big, "--tensor", "wpe"])
    check(rc1 == 0 and rc2 == 0 and t_eval <= 5 * t_analyze + 1,
          "lab eval on a 24 MiB header: %.2f s CPU, analyze (one parse) %.2f s: within 5x + 1 s (exit %d, %d)" %
          (t_eval, t_analyze, rc1, rc2))

    # 12. a field given twice; non-finite fields, used or not
    bad = os.path.join(d, "bad.safetensors")
    for old, new, says in (("layers=1", "layers=1 layers=1", "'layers' is given twice"),
                           ("seed=1", "seed=1 seed=2", "'seed' is given twice"),
                           ("rope_base=10000", "rope_base=nan", "'rope_base=nan' is not a finite number"),
                           ("alibi_max_bias=8", "alibi_max_bias=1e400", "'alibi_max_bias=1e400' is not a finite number"),
                           ("learned_sigma=0.02", "learned_sigma=inf", "is not a finite number"),
                           # issue 40 case 11: strtod's hex float, 0x2710 = 10000, is not read as a number
                           ("rope_base=10000", "rope_base=0x2710", "'rope_base=0x2710' is not a decimal number")):
        edit_config(ck, bad, old, new)
        for cmd in (["lab", "eval", "--checkpoint", bad, "--text", text],
                    ["lab", "train", "--init", bad, "--text", text, "--steps", "1", "-o", os.path.join(d, "o.safetensors")]):
            rc, out = run(cmd)
            check(rc == 1 and says in out and "bad.safetensors" in out and not os.path.exists(os.path.join(d, "o.safetensors")),
                  "[K1] %s with %s: exit %d: %s" % (" ".join(cmd[:2]), new, rc, out.strip().splitlines()[0]))

    # a field the learned scheme leaves unused, out of range, that --init --scheme rope brings into use
    edit_config(ck, bad, "rope_base=10000", "rope_base=-5")
    rc, out = run(["lab", "eval", "--checkpoint", bad, "--text", text])
    check(rc == 0, "lab eval of a learned checkpoint with an unused rope_base=-5: evaluated (exit %d)" % rc)
    rc, out = run(["lab", "train", "--init", bad, "--scheme", "rope", "--text", text, "--steps", "1", "-o", os.path.join(d, "o.safetensors")])
    check(rc == 1 and "bad.safetensors" in out and "-5" in out and "see --help" not in out,
          "[K2] --init with a field out of range once used: names the checkpoint, exit %d: %s" % (rc, out.strip().splitlines()[0]))
    rc, out = run(["lab", "train", "--init", ck, "--scheme", "rope", "--rope-base", "-5", "--text", text, "--steps", "1",
                   "-o", os.path.join(d, "o.safetensors")])
    check(rc == 2 and "-5" in out, "the same value from a flag stays a usage error: exit %d" % rc)

    # lab eval on an empty or a 1-byte text
    for content in (b"", b"a"):
        short = os.path.join(d, "short.txt")
        with open(short, "wb") as f:
            f.write(content)
        rc, out = run(["lab", "eval", "--checkpoint", ck, "--text", short])
        check(rc == 1 and "short.txt holds %d bytes" % len(content) in out and "33" in out and "see --help" not in out,
              "[K3] lab eval on a %d-byte text: exit %d: %s" % (len(content), rc, out.strip().splitlines()[0]))

print("%d passed, %d failed" % (sum(results), len(results) - sum(results)))
sys.exit(0 if all(results) else 1)
