"""`posenc table`, `--help`, `--version`: every flag, exit codes, messages, and no
output file left behind by a failed run."""
import os

import numpy as np

from common import Checks, run, tmpdir


def main():
    t = Checks()
    d = tmpdir()
    out = os.path.join(d, "pe.npy")

    rc, so, _ = run("--version")
    t.check(rc == 0 and so.startswith("posenc 0."), f"--version: {so.strip()}")
    rc, so, _ = run("--help")
    t.check(rc == 0 and "table" in so and "exit codes" in so, "--help lists commands and exit codes")
    rc, so, _ = run("table", "--help")
    t.check(rc == 0 and all(f in so for f in ["--kind", "--len", "--dim", "--base", "--freqs", "--layout", "--start",
                                              "--positions", "--odd", "--dtype", "--precise", "--torch-compat"]),
            "table --help documents every flag")
    rc, _, se = run()
    t.check(rc == 2 and "usage" in se, "no command: exit 2 with usage")
    rc, _, se = run("frobnicate")
    t.check(rc == 2 and "unknown command 'frobnicate'" in se, f"unknown command: exit 2 ({se.strip().splitlines()[0]})")

    # the default table is the PyTorch tutorial's
    rc, _, se = run("table", "--len", 50, "--dim", 64, "-o", out)
    pe = np.load(out)
    t.check(rc == 0 and pe.shape == (50, 64) and pe.dtype == np.float32 and "wrote" in se,
            f"table --len 50 --dim 64 -> [50,64] f32 ({se.strip()})")
    p = np.arange(50)[:, None]
    w = 10000.0 ** (-np.arange(0, 64, 2) / 64)
    ref = np.zeros((50, 64))
    ref[:, 0::2], ref[:, 1::2] = np.sin(p * w), np.cos(p * w)
    t.check(np.abs(pe - ref).max() < 6e-8, f"values = float64 formula rounded (max diff {np.abs(pe - ref).max():.2e} < 6e-8)")

    # fairseq convention with padding_idx=1: t2t freqs, half layout, start 2
    rc, _, _ = run("table", "--len", 4, "--dim", 8, "--freqs", "t2t", "--layout", "half", "--start", 2, "-o", out)
    row2 = [0.9092974268, 0.09269850078, 0.004308856047, 1.999999987e-04, -0.4161468365, 0.9956942241, 0.9999907168, 0.9999999800]
    t.check(rc == 0 and np.allclose(np.load(out)[0], row2, atol=1e-7), "fairseq row 2 (conventions.md section 3) from --start 2")
    rc, _, _ = run("table", "--len", 2, "--dim", 7, "--freqs", "t2t", "--layout", "half", "--odd", "pad", "-o", out)
    d7 = [0.8414709848, 0.009999833334, 9.999999983e-05, 0.5403023059, 0.9999500004, 0.9999999950, 0]
    t.check(rc == 0 and np.allclose(np.load(out)[1], d7, atol=1e-7), "t2t d=7 --odd pad: trailing zero channel")
    rc, _, _ = run("table", "--len", 2, "--dim", 15, "--odd", "round_up", "-o", out)
    t.check(rc == 0 and np.load(out).shape == (2, 15), "--odd round_up keeps 15 channels")
    for alias, want in (("neox", "half"), ("gptj", "interleaved")):
        run("table", "--len", 3, "--dim", 8, "--layout", alias, "-o", out)
        a = np.load(out)
        run("table", "--len", 3, "--dim", 8, "--layout", want, "-o", out)
        t.check(np.array_equal(a, np.load(out)), f"--layout {alias} is {want}")
    rc, _, _ = run("table", "--len", 3, "--dim", 8, "--base", 100, "-o", out)
    t.check(rc == 0 and abs(np.load(out)[1, 3] - np.cos(100 ** -0.25)) < 1e-7,
            f"--base 100: pair 1 at p=1 is cos(100^(-2/8)) = {np.load(out)[1, 3]:.7f}")

    # dtypes
    for dt, npdt in (("f64", np.float64), ("f16", np.float16), ("bf16", np.float32), ("bf16-bits", np.uint16)):
        rc, _, _ = run("table", "--len", 300, "--dim", 16, "--dtype", dt, "-o", out)
        a = np.load(out)
        t.check(rc == 0 and a.dtype == npdt, f"--dtype {dt} -> {a.dtype}")
    rc, _, _ = run("table", "--len", 300, "--dim", 16, "--dtype", "bf16", "-o", out)
    a = np.load(out)
    bits = a.view(np.uint32)
    t.check(np.all(bits & 0xFFFF == 0), "--dtype bf16 values are exact bf16 numbers (low 16 bits zero)")

    # positions files
    pos = os.path.join(d, "pos.npy")
    np.save(pos, np.array([5, 0, 1000000], dtype=np.int64))
    rc, _, _ = run("table", "--dim", 8, "--positions", pos, "-o", out)
    a = np.load(out)
    t.check(rc == 0 and a.shape == (3, 8) and abs(a[2, 0] - np.sin(1e6)) < 1e-7, "--positions int64, incl. 10^6")
    np.save(pos, np.array([0.5, 2.25]))
    rc, _, _ = run("table", "--dim", 8, "--positions", pos, "-o", out)
    t.check(rc == 0 and abs(np.load(out)[1, 0] - np.sin(2.25)) < 1e-7, "--positions float64 (interpolated positions)")
    # range path (recurrence) near 2^24 agrees with explicit positions there
    np.save(pos, np.arange(2**24 - 40, 2**24 - 1, dtype=np.int64))
    run("table", "--dim", 64, "--positions", pos, "-o", out)
    a = np.load(out)
    run("table", "--dim", 64, "--start", 2**24 - 40, "--len", 39, "-o", out)
    t.check(np.array_equal(a, np.load(out)), "--start range near 2^24 == explicit positions (bit-identical f32)")

    # CSV and stdout
    csv = os.path.join(d, "pe.csv")
    rc, _, _ = run("table", "--len", 3, "--dim", 4, "-o", csv)
    lines = open(csv).read().splitlines()
    t.check(rc == 0 and len(lines) == 3 and lines[0] == "0,1,0,1", f"CSV output: {lines[:1]}")
    rc, so, _ = run("table", "--kind", "index", "--len", 3, "--dim", 2, "-o", "-")
    t.check(rc == 0 and so.splitlines() == ["0,0", "1,1", "2,2"], "--kind index to stdout")
    rc, so, _ = run("table", "--kind", "normalized", "--len", 3, "--dim", 2, "-o", "-")
    t.check(rc == 0 and so.splitlines() == ["0,0", "0.5,0.5", "1,1"], "--kind normalized to stdout")
    rc, so, _ = run("table", "--len", 2, "--dim", 4, "--torch-compat", "-o", "-")
    t.check(rc == 0 and so.splitlines()[1].startswith("0.841470957"), "--torch-compat runs")

    # bad input: message naming the value, exit code, nothing written
    bad = [
        (["--len", 4, "--dim", 0], 2, "--dim must be > 0, got 0"),
        (["--len", 0, "--dim", 4], 2, "--len must be > 0, got 0"),
        (["--len", -3, "--dim", 4], 2, "--len must be > 0, got -3"),
        (["--len", 4, "--dim", 65], 2, "dim must be even for layout=interleaved, got 65"),
        (["--len", 4, "--dim", 65, "--layout", "half"], 2, "dim must be even for layout=half, got 65"),
        (["--len", 4, "--dim", 8, "--base", 0], 2, "base must be finite, > 0 and != 1, got 0"),
        (["--len", 4, "--dim", 8, "--base", 1], 2, "got 1"),
        (["--len", 4, "--dim", 8, "--base", -2], 2, "got -2"),
        (["--len", 4, "--dim", 8, "--base", "nan"], 2, "--base must be a finite number, got 'nan'"),
        (["--len", 4, "--dim", 8, "--base", "inf"], 2, "got 'inf'"),
        (["--len", 4, "--dim", 8, "--kind", "wavelet"], 2, "unknown --kind 'wavelet'"),
        (["--len", 4, "--dim", 8, "--layout", "diagonal"], 2, "unknown --layout 'diagonal'"),
        (["--len", 4, "--dim", 8, "--dtype", "f8"], 2, "unknown --dtype 'f8'"),
        (["--len", 4, "--dim", 8, "--freqs", "paper"], 2, "unknown --freqs 'paper'"),
        (["--len", 4, "--dim", 8, "--start", -1], 2, "--start must be >= 0, got -1"),
        (["--len", "4x", "--dim", 8], 2, "--len must be a whole number"),
        (["--len", 4, "--dim", 8, "--bogus"], 2, "unknown option '--bogus'"),
        (["--len", 4, "--dim", 8, "--precise", "--torch-compat"], 2, "not both"),
        (["--len", 2**40, "--dim", 2**20], 2, "exceeds the limit"),
        (["--len", 2**62, "--dim", 2**20], 2, "overflows"),
        (["--len", 1000, "--dim", 1000, "--max-bytes", 1000], 2, "exceeds the limit of 1000 bytes"),
        (["--dim", 8], 2, "--len is required"),
        (["--len", 4], 2, "--dim is required"),
    ]
    for args, want_rc, want_msg in bad:
        if os.path.exists(out):
            os.remove(out)
        rc, _, se = run("table", *args, "-o", out)
        t.check(rc == want_rc and want_msg in se and not os.path.exists(out),
                f"table {' '.join(map(str, args))}: exit {rc}, '{se.strip().splitlines()[0] if se.strip() else ''}'")
    # malformed positions files
    np.save(pos, np.zeros((2, 2), dtype=np.int64))
    rc, _, se = run("table", "--dim", 8, "--positions", pos, "-o", out)
    t.check(rc == 2 and "must be a non-empty 1-D array, got rank 2" in se and not os.path.exists(out), "positions of rank 2 refused")
    np.save(pos, np.zeros(3, dtype=np.uint8))
    rc, _, se = run("table", "--dim", 8, "--positions", pos, "-o", out)
    t.check(rc == 2 and "dtype u8" in se, f"positions of dtype u8 refused: {se.strip().splitlines()[0]}")
    np.save(pos, np.array([1, -5], dtype=np.int64))
    rc, _, se = run("table", "--dim", 8, "--positions", pos, "-o", out)
    t.check(rc == 2 and "got -5" in se and not os.path.exists(out), "negative position refused")
    np.save(pos, np.arange(100, dtype=np.int64))
    whole = open(pos, "rb").read()
    with open(pos, "wb") as f:
        f.write(whole[:-50])
    rc, _, se = run("table", "--dim", 8, "--positions", pos, "-o", out)
    t.check(rc == 1 and "truncated" in se and not os.path.exists(out), f"truncated .npy: exit 1, {se.strip().splitlines()[0]}")
    rc, _, se = run("table", "--dim", 8, "--positions", os.path.join(d, "missing.npy"), "-o", out)
    t.check(rc == 1 and "cannot open" in se, "missing positions file: exit 1")
    rc, _, se = run("table", "--len", 4, "--dim", 8, "-o", "/nonexistent/dir/pe.npy")
    t.check(rc == 1 and "cannot create /nonexistent/dir/pe.npy" in se, "unwritable output: exit 1")
    rc, _, se = run("table", "--len", 4, "--dim", 8, "-o", os.path.join(d, "pe.txt"))
    t.check(rc == 2 and "cannot tell the output format" in se, "unknown output extension: exit 2")
    # an existing output survives a failed run untouched, and no temp files remain
    np.save(out, np.arange(3))
    before = open(out, "rb").read()
    run("table", "--len", 4, "--dim", 65, "-o", out)
    t.check(open(out, "rb").read() == before, "failed run leaves an existing output untouched")
    t.check(not [f for f in os.listdir(d) if ".tmp." in f], "no temporary files left in the output folder")
    t.finish()


if __name__ == "__main__":
    main()
