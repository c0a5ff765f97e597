"""docs/errors.md through the tool: every CLI row (C*) and the exit code of every
library row the tool can reach, each printed with its [ID]; a failed run must
leave no output file. Ends by checking that every row ID in docs/errors.md is
exercised by some test (this file, tests/test_errors.c, or another test that
prints the [ID])."""
import glob
import json
import os
import re
import resource
import signal
import struct
import subprocess

import numpy as np

from common import BIN, Checks, run, tmpdir

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def npy_raw(header, data=b""):
    h = header.encode("latin1")
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h + data


def run_stdout(args, stdout, preexec=None, timeout=60):
    p = subprocess.run([BIN, *map(str, args)], stdout=stdout, stderr=subprocess.PIPE, text=True,
                       preexec_fn=preexec, timeout=timeout)
    return p.returncode, p.stderr


def stdout_failures(t, d):
    """Issue 13 item 3: every command's stdout is checked to the final flush/close."""
    a, b = os.path.join(d, "a.npy"), os.path.join(d, "b.npy")
    run("table", "--len", 64, "--dim", 16, "-o", a)
    run("table", "--len", 64, "--dim", 16, "--base", 500, "-o", b)
    cfg = os.path.join(d, "config.json")
    with open(cfg, "w") as f:
        f.write('{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "rope_theta": 500000.0,'
                ' "max_position_embeddings": 131072, "rope_scaling": {"rope_type": "llama3", "factor": 8.0,'
                ' "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}}')
    commands = {
        "diff --json": ["diff", a, b, "--json"],
        "analyze": ["analyze", a],
        "analyze --json": ["analyze", a, "--json"],
        "rope explain": ["rope", "explain", "--config", cfg],
        "rope freqs --json": ["rope", "freqs", "--json", "--dim", 64],
        "precision": ["precision", "--dtype", "f16", "--max-pos", 4096, "--dim", 16],
        "table -o - (CSV)": ["table", "--len", 64, "--dim", 16, "-o", "-"],
        "--help": ["--help"],
    }
    full_ok = True
    for name, args in commands.items():
        # 1. /dev/full: every write fails with ENOSPC
        with open("/dev/full", "w") as full:
            rc, se = run_stdout(args, full)
        t.check(rc == 1 and "No space left on device" in se,
                f"[F8] {name} > /dev/full: exit {rc}, '{se.strip().splitlines()[-1] if se.strip() else ''}'")
        full_ok = full_ok and rc == 1
        # 2. `ulimit -f 1` (1024 bytes) with stdout in a file: EFBIG (SIGXFSZ is ignored)
        path = os.path.join(d, "stdout.txt")
        with open(path, "w") as f:
            rc, se = run_stdout(args, f, preexec=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024)))
        size = os.path.getsize(path)
        os.remove(path)
        if size < 1024:
            t.check(rc == 0, f"[F8] {name}: {size} bytes fit under ulimit -f 1 (exit {rc})")
        else:
            t.check(rc == 1 and "File too large" in se, f"[F8] {name} under ulimit -f 1: exit {rc} after {size} bytes")
        # 3. a pipe whose reader has gone: EPIPE (SIGPIPE is ignored)
        r, w = os.pipe()
        os.close(r)
        with os.fdopen(w, "w") as pipe_w:
            rc, se = run_stdout(args, pipe_w)
        t.check(rc == 1 and "Broken pipe" in se, f"[F8] {name} into a closed pipe: exit {rc}")


def fifo_inputs(t, d):
    """Issue 13 item 2: a FIFO (or any non-regular file) as any input is refused at once."""
    fifo = os.path.join(d, "f.npy")
    os.mkfifo(fifo)
    gg = os.path.join(d, "f.gguf")
    os.mkfifo(gg)
    out = os.path.join(d, "out.npy")
    a = os.path.join(d, "a.npy")
    run("table", "--len", 8, "--dim", 8, "-o", a)
    cases = {
        "analyze": ["analyze", fifo],
        "analyze --tensor": ["analyze", os.path.join(d, "f.safetensors"), "--tensor", "w"],
        "diff": ["diff", a, fifo],
        "table --positions": ["table", "--dim", 8, "--positions", fifo, "-o", out],
        "rope explain --config": ["rope", "explain", "--config", gg],
        "rope explain --config (json name)": ["rope", "explain", "--config", fifo],
        "rope apply --in": ["rope", "apply", "--in", fifo, "--dim", 8, "-o", out],
        "rope apply --positions": ["rope", "apply", "--in", a, "--positions", fifo, "-o", out],
        "plot TABLE": ["plot", "heatmap", fifo, "-o", os.path.join(d, "x.png")],
    }
    os.mkfifo(os.path.join(d, "f.safetensors"))
    for name, args in cases.items():
        try:
            rc, se = run_stdout(args, subprocess.DEVNULL, timeout=10)
        except subprocess.TimeoutExpired:
            rc, se = "hung", ""
        t.check(rc == 1 and "is not a regular file" in se and not os.path.exists(out),
                f"[F2] {name} with a FIFO: exit {rc}: '{se.strip().splitlines()[0] if se.strip() else ''}'")


def write_safetensors(path, entries, total_size=None):
    """entries: name -> (dtype, shape, begin, end); the data buffer is sparse (a hole)
    up to total_size; returns the data offset."""
    header = json.dumps({k: {"dtype": v[0], "shape": v[1], "data_offsets": [v[2], v[3]]}
                         for k, v in entries.items()}).encode()
    header += b" " * (-len(header) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header)) + header)
        if total_size:
            f.truncate(total_size)
    return 8 + len(header)


def issue13_cli(t, d):
    """Non-finite results (V), positions (R13), hybrid (L17), CSV digits (C15), big
    checkpoints (S13), messages (F1, G9, A6, C7)."""
    out = os.path.join(d, "out.npy")
    # V1/V2/V4: refused with the first bad cell, exit 2, no output
    cases = [
        ("V1", ["table", "--kind", "learned", "--sigma", "1e40", "--len", 4, "--dim", 8, "-o", out],
         "cell [0, 0] = sigma x draw = 1e+40"),
        ("V2", ["table", "--kind", "index", "--len", 70000, "--dim", 2, "--dtype", "f16", "-o", out],
         "cell [65520, 0]: position 65520 overflows f16 (largest finite 65504)"),
    ]
    q16 = os.path.join(d, "q16.npy")
    np.save(q16, (np.random.RandomState(0).randn(4, 2, 16) * 2).astype(np.float16))
    cases.append(("V4", ["rope", "apply", "--in", q16, "--scaling", "yarn", "--factor", 4, "--original-max", 4096,
                         "--attention-factor", "1e5", "-o", out],
                  "rotated value at token 0 (position 0), head 0, channel 0 is inf: the rotation scaled by the "
                  "attention factor 100000 overflows f16 (largest finite 65504)"))
    qnan = os.path.join(d, "qnan.npy")  # an input that already holds NaN is named as the cause
    xn = np.ones((4, 2, 16), np.float32)
    xn[2, 1, 5] = np.nan
    np.save(qnan, xn)
    cases.append(("V4", ["rope", "apply", "--in", qnan, "-o", out],
                  "rotated value at token 2 (position 2), head 1, channel 5 is nan: the input of token 2 already "
                  "holds inf or NaN"))
    for row, args, fragment in cases:
        if os.path.exists(out):
            os.remove(out)
        rc, _, se = run(*args)
        t.check(rc == 2 and fragment in se and not os.path.exists(out), f"[{row}] exit {rc}, no output: '{se.strip().splitlines()[0] if se.strip() else ''}'")
    rc, _, _ = run("rope", "apply", "--in", q16, "--scaling", "yarn", "--factor", 4, "--original-max", 4096,
                   "--attention-factor", "2", "-o", out)
    t.check(rc == 0 and np.isfinite(np.load(out).astype(np.float32)).all(), f"[V4] attention factor 2 on f16 still works (exit {rc})")
    # --allow-nonfinite writes the complete rotation, inf included (the library rotates every value either way)
    rc, _, se = run("rope", "apply", "--in", q16, "--scaling", "yarn", "--factor", 4, "--original-max", 4096,
                    "--attention-factor", "1e5", "--allow-nonfinite", "-o", out)
    y = np.load(out).astype(np.float32) if rc == 0 else None
    t.check(rc == 0 and np.isinf(y).sum() > 0 and np.isfinite(y).sum() > 0,
            f"[V4] --allow-nonfinite writes the rotation with its infs (exit {rc}, "
            f"{None if y is None else int(np.isinf(y).sum())} inf of {None if y is None else y.size}) {se.strip()}")
    # R13: RoPE positions follow the one rule |p| < 2^53
    q32, pos = os.path.join(d, "q32.npy"), os.path.join(d, "pos.npy")
    np.save(q32, np.ones((2, 8), np.float32))
    for bad in (2**62, 2**53, -2**53):
        np.save(pos, np.array([0, bad], np.int64))
        rc, _, se = run("rope", "apply", "--in", q32, "--positions", pos, "-o", out)
        t.check(rc == 2 and f"position 1 must be in (-2^53, 2^53), got {bad}" in se, f"[R13] rope apply --positions with {bad}: exit {rc}")
    np.save(pos, np.array([0, 2**53 - 1], np.int64))
    rc, _, _ = run("rope", "apply", "--in", q32, "--positions", pos, "-o", out)
    t.check(rc == 0, f"[R13] position 2^53 - 1 is accepted (exit {rc})")
    rc, _, se = run("rope", "apply", "--in", q32, "--start", 2**60, "-o", out)
    t.check(rc == 2 and "must be in (-2^53, 2^53)" in se, f"[R13] rope apply --start 2^60: exit {rc}")
    # L17: hybrid with no learned channel (was UB under UBSan: offset applied to NULL)
    rc, _, se = run("table", "--kind", "hybrid", "--learned-dim", 0, "--len", 4, "--dim", 8, "-o", out)
    plain = os.path.join(d, "plain.npy")
    run("table", "--len", 4, "--dim", 8, "-o", plain)
    t.check(rc == 0 and np.array_equal(np.load(out), np.load(plain)), f"[L17] hybrid --learned-dim 0 equals the sinusoid table (exit {rc}) {se.strip()[:80]}")
    # C15: CSV on stdout has the digits of a .csv file and round-trips exactly
    for dtype in ("f64", "f32"):
        npy, csv = os.path.join(d, "t.npy"), os.path.join(d, "t.csv")
        run("table", "--len", 50, "--dim", 16, "--dtype", dtype, "--base", 7777.7, "-o", npy)
        run("table", "--len", 50, "--dim", 16, "--dtype", dtype, "--base", 7777.7, "-o", csv)
        rc, so, _ = run("table", "--len", 50, "--dim", 16, "--dtype", dtype, "--base", 7777.7, "-o", "-")
        want = np.load(npy)
        back = np.array([[float(v) for v in line.split(",")] for line in so.strip().splitlines()]).astype(want.dtype)
        mismatches = int((back != want).sum())
        t.check(rc == 0 and so == open(csv).read() and mismatches == 0,
                f"[C15] {dtype}: CSV on stdout equals the .csv file and parses back to the .npy bits ({mismatches} cells differ)")
    # S13: a sparse 5 GiB safetensors, the tensor named near the end: only it is read
    st = os.path.join(d, "big.safetensors")
    big = 5 << 30
    n_big = (big - 4096) // 4
    entries = {"huge": ("F32", [n_big], 0, n_big * 4), "wpe": ("F32", [4, 8], n_big * 4, n_big * 4 + 128)}
    data_at = write_safetensors(st, entries)
    values = np.arange(32, dtype=np.float32).reshape(4, 8) / 7
    with open(st, "r+b") as f:
        f.truncate(data_at + n_big * 4 + 128)
        f.seek(data_at + n_big * 4)
        f.write(values.tobytes())
    size = os.path.getsize(st)
    rc, so, se = run("analyze", st, "--tensor", "wpe", "--json")
    t.check(rc == 0 and '"rows": 4' in so.replace(" ", "").replace('"rows":4', '"rows": 4'),
            f"[S13] analyze --tensor wpe of a {size / 2**30:.1f} GiB sparse safetensors: exit {rc} {se.strip()[:100]}")
    rc, _, se = run("analyze", st, "--tensor", "huge")
    t.check(rc == 1 and "exceeds the limit" in se, f"[S13] the 5 GiB tensor itself is still refused by the size limit: exit {rc}")
    entries["wpe"] = ("F32", [8, 8], n_big * 4, n_big * 4 + 256)  # runs 128 bytes past the end of the file
    write_safetensors(st, entries, total_size=size)
    rc, _, se = run("analyze", st, "--tensor", "wpe")
    t.check(rc == 1 and "lie outside the" in se, f"[S13] bounds still checked in the mapped file: exit {rc}: '{se.strip()[-90:]}'")
    os.remove(st)
    # R1: a size typed as an option over its limit is a usage error (2), not 1
    rc, _, se = run("rope", "freqs", "--dim", 100000)
    t.check(rc == 2 and "head_dim must be <= 65536, got 100000" in se, f"[R1] rope freqs --dim 100000: exit {rc}")
    # issue 13 item 14: `report --help` names every encoding the default report draws
    rc, so, _ = run("report", "--help")
    names = ("sinusoidal", "RoPE", "learned", "index", "normalized", "ALiBi", "T5")
    t.check(rc == 0 and all(n in so.split("-h, --help")[0].split("\n\n")[1] for n in names),
            f"report --help describes the default report with all of {names}")
    # F1: no generic status text after the reason, the path once
    missing = os.path.join(d, "missing.npy")
    rc, _, se = run("analyze", missing)
    first = se.strip().splitlines()[0]
    t.check(rc == 1 and first.endswith("No such file or directory") and first.count(missing) == 1,
            f"[F1] missing input: '{first}'")
    # G9: an empty .gguf is called empty, not "config.json: not valid JSON"
    gg = os.path.join(d, "empty.gguf")
    open(gg, "wb").close()
    rc, _, se = run("rope", "explain", "--config", gg)
    t.check(rc == 1 and "is empty" in se and "JSON" not in se, f"[G9] empty .gguf: exit {rc}: '{se.strip()}'")
    with open(gg, "wb") as f:
        f.write(b'{"model_type": "llama"}')
    rc, _, se = run("rope", "explain", "--config", gg)
    t.check(rc == 1 and "is not a GGUF file" in se, f"[G9] a .gguf that is JSON inside: exit {rc}: '{se.strip()}'")
    # A6: out of memory is a runtime error, and does not suggest raising --max-bytes
    def small_memory():
        resource.setrlimit(resource.RLIMIT_AS, (256 << 20, 256 << 20))
    p = subprocess.run([BIN, "table", "--len", "200000", "--dim", "1024", "--max-bytes", str(4 << 30), "-o", out],
                       capture_output=True, text=True, preexec_fn=small_memory)
    if "AddressSanitizer" in p.stderr:  # ASan reserves terabytes of address space: no RLIMIT_AS under it
        print("  note: [A6] not judged under AddressSanitizer (it cannot run with a 256 MiB address-space limit)")
    else:
        t.check(p.returncode == 1 and "max-bytes" not in p.stderr and "cannot allocate" in p.stderr,
                f"[A6] out of memory: exit {p.returncode}: '{p.stderr.strip()}'")
    # the masked half of a causal ALiBi picture is not called NaN or inf
    rc, _, se = run("plot", "bias", "-o", os.path.join(d, "b.png"))
    t.check(rc == 0 and "NaN or inf" not in se and "masked" in se, f"causal ALiBi plot: '{se.strip().splitlines()[0]}'")


def main():
    t = Checks()
    d = tmpdir()
    out = os.path.join(d, "pe.npy")
    pos = os.path.join(d, "p.npy")
    cases = 0

    def expect(row, args, want_rc, fragment, env=None):
        nonlocal cases
        cases += 1
        if os.path.exists(out):
            os.remove(out)
        rc, _, se = run(*args, env=env)
        first = se.strip().splitlines()[0] if se.strip() else ""
        t.check(rc == want_rc and fragment in se and not os.path.exists(out),
                f"[{row}] exit {rc} (want {want_rc}), no output: '{first}'")

    table = ["table", "--len", 4, "--dim", 8, "-o", out]
    # command line rows
    expect("C1", [], 2, "usage")
    expect("C2", ["frobnicate"], 2, "hint: posenc --help lists the commands")
    expect("C3", [*table, "--bogus"], 2, "unknown option '--bogus'")
    expect("C4", ["table", "--dim", 8, "-o", out, "--len"], 2, "option '--len' needs a value (N)")
    expect("C5", [*table, "--precise=1"], 2, "option '--precise' takes no value")
    expect("C6", [*table, "extra"], 2, "unexpected argument 'extra'")
    expect("C7", ["table", "--len", "4x", "--dim", 8, "-o", out], 2, "--len must be a whole number, got '4x'")
    expect("C7", ["table", "--len", 4, "--dim", 2**31, "-o", out], 2, "--dim must be at most 2147483647, got '2147483648'")
    # issue 13: an exponent is not a whole number, and the message shows no range from INT64_MIN
    expect("C7", ["table", "--len", "1e3", "--dim", 8, "-o", out], 2, "--len must be a whole number, got '1e3'\nhint: write the number out in digits")
    rc, _, se = run("table", "--len", "1e3", "--dim", 8, "-o", out)
    t.check("-9223372036854775808" not in se, f"[C7] no range starting at INT64_MIN: '{se.strip()}'")
    expect("C8", [*table, "--base", "nan"], 2, "--base must be a finite number, got 'nan'")
    expect("C8", [*table, "--base", "1e999"], 2, "--base must be a finite number, got '1e999'")
    # issue 40 case 11: strtod's hex float ("0x10" = 16) is not read as a number
    expect("C8", [*table, "--base", "0x10"], 2, "--base must be a decimal number, got the hex '0x10'")
    expect("C9", [*table, "--kind", "wavelet"], 2, "unknown --kind 'wavelet' (choose sinusoidal|index|normalized|")
    expect("C10", ["table", "--len", 4, "-o", out], 2, "--dim is required")
    expect("C10", ["table", "--len", 4, "--dim", 8], 2, "-o OUT.npy|OUT.csv is required")
    expect("C11", [*table, "--precise", "--torch-compat"], 2, "not both")
    expect("C11", ["table", "--len", 4, "--dim", 8, "--positions", pos, "-o", out], 2, "give --positions, or --len/--start, not both")
    expect("C12", ["table", "--len", 4, "--dim", 8, "-o", os.path.join(d, "pe.txt")], 2, "hint: name the output OUT.npy or OUT.csv")
    np.save(pos, np.zeros((2, 2), dtype=np.int64))
    expect("C13", ["table", "--dim", 8, "--positions", pos, "-o", out], 2, "must be a non-empty 1-D array, got rank 2 with 4 elements")
    np.save(pos, np.zeros(0, dtype=np.int64))
    expect("C13", ["table", "--dim", 8, "--positions", pos, "-o", out], 2, "got rank 1 with 0 elements")
    np.save(pos, np.zeros(3, dtype=np.uint16))
    expect("C13", ["table", "--dim", 8, "--positions", pos, "-o", out], 2, "has dtype u16")
    for bad in ["abc", "0", "-1", "12k", "99999999999999999999999", ""]:
        expect("C14", [*table, "--max-bytes", bad], 2, f"--max-bytes must be a positive whole number of bytes, got '{bad}'")
    env = dict(os.environ, POSENC_MAX_BYTES="lots")
    expect("C14", table, 2, "POSENC_MAX_BYTES must be a positive whole number of bytes, got 'lots'", env=env)
    env = dict(os.environ, POSENC_MAX_BYTES="100")
    expect("C14", table, 2, "exceeds the limit of 100 bytes", env=env)  # a valid env limit applies
    rc, _, _ = run(*table, env=dict(os.environ, POSENC_MAX_BYTES="128"))
    t.check(rc == 0 and os.path.exists(out), "[C14] POSENC_MAX_BYTES=128 admits a 4x8 f32 table (128 bytes)")
    cases += 1

    # library rows as the tool reports them
    expect("P2", ["table", "--len", 4, "--dim", 0, "-o", out], 2, "--dim must be > 0, got 0")
    expect("P3", ["table", "--len", 1, "--dim", 2**30 + 2, "-o", out], 2, "exceeds the limit")
    expect("P4", [*table, "--base", 1], 2, "base must be finite, > 0 and != 1, got 1")
    expect("P5", ["table", "--len", 4, "--dim", 64, "--base", "1e-300", "-o", out], 2, "beyond float32 range")
    expect("P6", [*table, "--layout", "diagonal"], 2, "unknown --layout 'diagonal'")
    expect("P7", ["table", "--len", 4, "--dim", 65, "-o", out], 2, "dim must be even for layout=interleaved, got 65")
    expect("P8", ["table", "--len", 4, "--dim", 1, "--odd", "pad", "-o", out], 2, "dim must be >= 2 for odd=pad")
    expect("P9", ["table", "--len", 0, "--dim", 8, "-o", out], 2, "--len must be > 0, got 0")
    np.save(pos, np.array([3, 2**53], dtype=np.int64))
    expect("P11", ["table", "--dim", 8, "--positions", pos, "-o", out], 2, "position 1 must be in [0, 2^53), got 9007199254740992")
    for bad, text in ((np.nan, "got nan"), (np.inf, "got inf"), (-1.5, "got -1.5")):
        np.save(pos, np.array([0.5, bad]))
        expect("P12", ["table", "--dim", 8, "--positions", pos, "-o", out], 2, text)
    expect("P13", ["table", "--len", 4, "--dim", 8, "--start", -1, "-o", out], 2, "--start must be >= 0, got -1")
    expect("P13", ["table", "--len", 2, "--dim", 8, "--start", 2**53 - 1, "-o", out], 2, "run past 2^53")
    expect("P16", ["table", "--len", 2**62, "--dim", 2**20, "-o", out], 2, "overflows size_t")
    expect("A3", ["table", "--len", 1000, "--dim", 1000, "--max-bytes", 1000, "-o", out], 2, "hint: lower --len/--dim, or raise --max-bytes")

    # .npy rows through --positions: exit 1, message prefixed with the path
    bad_npy = {
        "N1": (b"hello world, not numpy", "missing \\x93NUMPY magic"),
        "N2": (b"\x93NUMPY\x09\x00\x00\x00\x00\x00", ".npy format version 9.0 not supported"),
        "N3": (b"\x93NUMPY\x01\x00\xff\xff\x00\x00", "runs past the end of the 12-byte file"),
        "N4": (npy_raw("{'descr': '<i8', 'shape': (1,), }", b"\0" * 8), ".npy header lacks fortran_order"),
        "N5": (npy_raw("{'descr': '<i8', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }", b"\0" * 8), "more than 8 dimensions"),
        "N6": (npy_raw("{'descr': '<i8', 'fortran_order': False, 'shape': (99999999999999999999,), }"), "overflows size_t"),
        "N7": (npy_raw("{'descr': '>i8', 'fortran_order': False, 'shape': (1,), }", b"\0" * 8), "is big-endian"),
        "N8": (npy_raw("{'descr': '<c16', 'fortran_order': False, 'shape': (1,), }", b"\0" * 16), "'<c16' is not supported"),
        "N9": (npy_raw("{'descr': '<i8', 'fortran_order': True, 'shape': (2, 2), }", b"\0" * 32), "Fortran order"),
        "N10": (npy_raw("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000000,), }", b"\0" * 8),
                "exceeds the limit of 4294967296 bytes"),
        "N11": (npy_raw("{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }", b"\0" * 16), "(truncated)"),
    }
    for row, (data, fragment) in bad_npy.items():
        with open(pos, "wb") as f:
            f.write(data)
        expect(row, ["table", "--dim", 8, "--positions", pos, "-o", out], 1, fragment)
    expect("F1", ["table", "--dim", 8, "--positions", os.path.join(d, "missing.npy"), "-o", out], 1, "cannot open")
    expect("F2", ["table", "--dim", 8, "--positions", d, "-o", out], 1, "is not a regular file")
    expect("F4", ["table", "--len", 4, "--dim", 8, "-o", "/nonexistent/dir/pe.npy"], 1, "cannot create /nonexistent/dir/pe.npy")
    expect("F6", ["table", "--len", 4, "--dim", 8, "-o", os.path.join(d, "x" * 5000 + ".npy")], 2, "output path is empty or too long")
    # F9: a long path that fails keeps its reason (the path is shortened in the message, not the reason cut)
    deep = "/nonexistent/" + "a" * 200 + "/b" * 1500 + "/pe.npy"
    rc, _, se = run("table", "--len", 4, "--dim", 8, "-o", deep)
    t.check(rc == 1 and se.strip().endswith("No such file or directory") and "cannot create ..." in se,
            f"[F9] a {len(deep)}-character path that cannot be created: '{se.strip()[:60]}...{se.strip()[-40:]}'")
    expect("B20", ["bias", "alibi", "--heads", 4, "--len", 4, "--max-bias", 5000, "-o", out], 2,
           "max_bias 5000 makes the slope of head 0 underflow to 0")
    expect("B8", ["bias", "t5", "--buckets", 31, "--len", 4, "-o", out], 2, "num_buckets must be even when bidirectional, got 31")
    expect("B21", ["bias", "shaw", "--clip", 2**30, "--len", 4, "-o", out], 1, "clip k must be < 2^30, got 1073741824")
    cfg = os.path.join(d, "config.json")
    with open(cfg, "w") as f:
        f.write('{"model_type": "llama", "hidden_size": 64, "num_attention_heads": 2, "rope_theta": "1e6"}')
    expect("H2", ["rope", "explain", "--config", cfg], 1, "config.json: 'rope_theta' must be a finite number")
    gg = os.path.join(d, "m.gguf")
    with open(gg, "wb") as f:
        f.write(b"GGUF" + struct.pack("<IQQ", 3, 0, 1 << 60))
    expect("G3", ["rope", "explain", "--config", gg], 1, "GGUF claims 1152921504606846976 key/value pairs")
    st = os.path.join(d, "m.safetensors")
    with open(st, "wb") as f:
        f.write(struct.pack("<Q", 2) + b"[]")
    expect("S4", ["analyze", st, "--tensor", "w"], 1, "safetensors header is not a JSON object")
    with open(st, "wb") as f:
        h = b'{"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}'
        f.write(struct.pack("<Q", len(h)) + h + bytes(8))
    expect("S11", ["analyze", st, "--tensor", "w"], 1, "no tensor 'w' in the safetensors file (it has: a)")
    t.check(not [f for f in os.listdir(d) if ".tmp." in f or f.startswith(".posenc-")], "no temporary file left by any of the runs above")
    issue13_cli(t, tmpdir())
    stdout_failures(t, tmpdir())
    fifo_inputs(t, tmpdir())
    print(f"{cases} bad-input cases run through the tool")

    # every row of docs/errors.md has a test that names it
    doc = open(os.path.join(ROOT, "docs", "errors.md")).read()
    rows = re.findall(r"^\| ([A-Z]+[0-9]+) \|", doc, flags=re.M)
    sources = ""
    for path in (glob.glob(os.path.join(ROOT, "tests", "*.c")) + glob.glob(os.path.join(HERE, "*.py")) +
                 glob.glob(os.path.join(ROOT, "lab", "tests", "*.py"))):
        sources += open(path, encoding="utf-8", errors="replace").read()
    missing = [r for r in rows if f'"{r}"' not in sources and f"[{r}]" not in sources]
    t.check(len(rows) >= 40 and not missing, f"docs/errors.md: {len(rows)} rows, each tested (untested: {missing})")
    t.finish()


if __name__ == "__main__":
    main()
