"""`posenc bias alibi|t5|shaw`: every flag, values against the formulas and the
peer goldens, exit codes, messages naming the bad value, and nothing written
by a failed run."""
import json
import os

import numpy as np

from common import GOLDEN, Checks, require_golden, run, tmpdir


def main():
    t = Checks()
    d = tmpdir()
    out = os.path.join(d, "bias.npy")

    rc, so, _ = run("--help")
    t.check(rc == 0 and "bias" in so, "posenc --help lists bias")
    rc, so, _ = run("bias", "--help")
    t.check(rc == 0 and all(k in so for k in ("alibi", "t5", "deberta", "shaw")), "bias --help lists alibi, t5, deberta, shaw")
    flags = {"alibi": ["--heads", "--len", "--max-bias", "--form", "--json", "--torch-compat", "-o"],
             "t5": ["--len", "--key-len", "--buckets", "--max-distance", "--unidirectional", "-o"],
             "shaw": ["--len", "--clip", "-o"],
             "deberta": ["--len", "--key-len", "--buckets", "--max-relative", "--output", "-o"]}
    for kind, fl in flags.items():
        rc, so, _ = run("bias", kind, "--help")
        t.check(rc == 0 and all(f in so for f in fl), f"bias {kind} --help documents {' '.join(fl)}")

    # ---- alibi ----
    rc, so, se = run("bias", "alibi", "--heads", 12, "--len", 64, "--json", "-o", out)
    a = np.load(out)
    js = json.loads(so)
    slopes = np.array(js["slopes"], dtype=np.float32)
    want12 = np.float32([2.0 ** -(h + 1) for h in range(8)] + [2.0 ** -(h + 0.5) for h in range(4)])
    t.check(rc == 0 and a.shape == (12, 64, 64) and a.dtype == np.float32 and "wrote" in se,
            f"alibi --heads 12 --len 64 -> [12,64,64] f32 ({se.strip()})")
    t.check(js["heads"] == 12 and js["max_bias"] == 8 and np.array_equal(slopes, want12),
            f"--json slopes = 2^-1..2^-8, 2^-0.5..2^-3.5 (correctly rounded): {js['slopes'][8:10]}")
    ij = np.arange(64)[None, :] - np.arange(64)[:, None]
    t.check(np.array_equal(a, slopes[:, None, None] * ij[None].astype(np.float32)),
            "causal form: out[h,i,j] == f32(m_h * (j - i)) bit for bit")
    # BLOOM golden row: bias[h, 0, :] for query 0 is slope * key position
    bloom = os.path.join(GOLDEN, "hf_bloom_alibi_nhead12_len64.npy")
    if require_golden():
        g = np.load(bloom)
        rc, so, _ = run("bias", "alibi", "--heads", 12, "--len", 64, "--torch-compat", "--json", "-o", out)
        a = np.load(out)
        diff = np.abs(a[:, 0, :] - g[:, 0, :]).max()
        t.check(rc == 0 and diff == 0, f"--torch-compat row 0 == BLOOM build_alibi_tensor n=12 (max diff {diff})")
        bs = np.load(os.path.join(GOLDEN, "hf_bloom_alibi_slopes_nhead32.npy"))
        rc, so, _ = run("bias", "alibi", "--heads", 32, "--len", 1, "--torch-compat", "--json")
        ours = np.array(json.loads(so)["slopes"], dtype=np.float32)
        t.check(rc == 0 and np.array_equal(ours, bs), "--torch-compat --json slopes == BLOOM's 32-head slopes bit for bit")
        rc, so, _ = run("bias", "alibi", "--heads", 32, "--len", 1, "--json")
        ours = np.array(json.loads(so)["slopes"], dtype=np.float32)
        ulp = np.abs(ours.view(np.int32).astype(np.int64) - bs.view(np.int32)).max()
        t.check(rc == 0 and 0 < ulp <= 9, f"default (precise) 32-head slopes differ from BLOOM by {ulp} ULP (BLOOM powers a rounded base; tol 9)")
    rc, _, _ = run("bias", "alibi", "--heads", 12, "--len", 64, "--form", "causal", "-o", out)
    t.check(rc == 0 and np.array_equal(np.load(out), slopes[:, None, None] * ij[None].astype(np.float32)),
            "--form causal is the default form")
    rc, so, _ = run("bias", "alibi", "--heads", 6, "--len", 5, "--form", "symmetric", "-o", out)
    a = np.load(out)
    s6 = np.float32([0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125])
    t.check(rc == 0 and np.array_equal(a, -s6[:, None, None] * np.abs(ij[:5, :5])[None].astype(np.float32)),
            "--form symmetric: -m|i-j| with the 6-head slopes [1/4 1/16 1/64 1/256 1/2 1/8]")
    rc, so, _ = run("bias", "alibi", "--heads", 4, "--len", 2, "--max-bias", 16, "--json", "-o", out)
    t.check(rc == 0 and np.array_equal(np.float32(json.loads(so)["slopes"]), np.float32([2.0**-4, 2.0**-8, 2.0**-12, 2.0**-16])),
            f"--max-bias 16, 4 heads: slopes 2^-4, 2^-8, 2^-12, 2^-16 ({json.loads(so)['slopes']})")
    rc, so, _ = run("bias", "alibi", "--heads", 2, "--len", 2, "--json")
    t.check(rc == 0 and json.loads(so)["slopes"] == [0.0625, 0.00390625], "--json without -o prints slopes and writes nothing")
    rc, so, _ = run("bias", "alibi", "--heads", 1, "--len", 3, "-o", "-")
    t.check(rc == 0 and so.splitlines() == ["0,0.00390625,0.0078125", "-0.00390625,0,0.00390625", "-0.0078125,-0.00390625,0"],
            "alibi -o - writes CSV to stdout (1 head: slope 2^-8)")

    # ---- t5 ----
    rc, _, se = run("bias", "t5", "--len", 64, "-o", out)
    a = np.load(out)
    t.check(rc == 0 and a.shape == (64, 64) and a.dtype == np.int64, f"t5 --len 64 -> [64,64] int64 ({se.strip()})")
    for bidir in (1, 0):
        g = os.path.join(GOLDEN, f"hf_t5_bucket_grid64_bidir{bidir}.npy")
        if not os.path.exists(g):
            continue
        extra = [] if bidir else ["--unidirectional"]
        rc, _, _ = run("bias", "t5", "--len", 64, *extra, "-o", out)
        n = int((np.load(out) != np.load(g)).sum())
        t.check(rc == 0 and n == 0, f"t5 {'bidirectional' if bidir else '--unidirectional'} == HF grid golden ({n} of 4096 differ)")
        line = np.load(os.path.join(GOLDEN, f"hf_t5_bucket_line_m300_p300_bidir{bidir}.npy"))
        # r = key - query: [1, 301] gives r = 0..300, [301, 1] gives r = 0..-300
        run("bias", "t5", "--len", 1, "--key-len", 301, *extra, "-o", out)
        pos = np.load(out)[0]
        run("bias", "t5", "--len", 301, "--key-len", 1, *extra, "-o", out)
        neg = np.load(out)[:, 0]
        ours = np.concatenate([neg[::-1], pos[1:]])
        n = int((ours != line).sum())
        t.check(n == 0, f"t5 {'bidirectional' if bidir else 'unidirectional'} r=-300..300 via --key-len == HF line golden ({n} of 601 differ)")
    rc, _, _ = run("bias", "t5", "--len", 3, "--key-len", 5, "-o", out)
    a = np.load(out)
    t.check(rc == 0 and a.shape == (3, 5) and a.tolist()[0] == [0, 17, 18, 19, 20] and a[2, 0] == 2,
            f"--key-len 5: [3,5], row 0 = {a.tolist()[0]} (r = key - query > 0 -> 16 + n)")
    rc, _, _ = run("bias", "t5", "--len", 300, "--buckets", 16, "--max-distance", 64, "-o", out)
    a = np.load(out)
    t.check(rc == 0 and a.max() == 15 and a[0, 4] == 8 + 4 and a[299, 0] == 7,
            f"--buckets 16 --max-distance 64: max bucket {a.max()}, bucket(+4) = {a[0, 4]}, bucket(-299) = {a[299, 0]}")
    rc, _, _ = run("bias", "t5", "--len", 4, "--buckets", 33, "--unidirectional", "-o", out)
    t.check(rc == 0, "--buckets 33 --unidirectional accepted (odd is fine one-way)")

    # ---- deberta (posenc.h 5.3b; the framework comparison is tests/oracle/test_oracle_hf.py) ----
    rc, _, se = run("bias", "deberta", "--len", 1, "--key-len", 1001, "--buckets", 256, "-o", out)
    a = np.load(out) if rc == 0 else np.zeros((1, 1001), np.int64)
    t.check(rc == 0 and a.dtype == np.int64 and a.shape == (1, 1001) and
            [int(a[0, k]) for k in (0, 1, 128, 129, 200, 511, 512, 1000)] == [0, -1, -128, -129, -169, -255, -256, -317],
            f"deberta v3 (256, 512) r = 0..-1000: the worked buckets of posenc.h ({se.strip()})")
    rc, _, _ = run("bias", "deberta", "--len", 3, "--key-len", 2, "--buckets", 256, "--output", "c2p", "-o", out)
    t.check(rc == 0 and np.load(out).tolist() == [[256, 255], [257, 256], [258, 257]], "deberta --output c2p [3, 2]")
    rc, _, _ = run("bias", "deberta", "--len", 40, "--max-relative", 16, "--output", "p2c", "-o", out)
    ref = np.clip(16 - (np.arange(40)[:, None] - np.arange(40)[None, :]), 0, 31)
    t.check(rc == 0 and np.array_equal(np.load(out), ref), "deberta unbucketed p2c == clip(16 - (i - j), 0, 31)")

    # ---- shaw ----
    rc, _, se = run("bias", "shaw", "--len", 5, "--clip", 2, "-o", out)
    a = np.load(out)
    t.check(rc == 0 and a.dtype == np.int32 and a.tolist() == [[2, 3, 4, 4, 4], [1, 2, 3, 4, 4], [0, 1, 2, 3, 4], [0, 0, 1, 2, 3], [0, 0, 0, 1, 2]],
            f"shaw --len 5 --clip 2 == conventions 8.2 matrix, int32 ({se.strip()})")
    rc, _, _ = run("bias", "shaw", "--len", 100, "--clip", 16, "-o", out)
    ref = np.clip(np.arange(100)[None, :] - np.arange(100)[:, None], -16, 16) + 16
    t.check(rc == 0 and np.array_equal(np.load(out), ref), "shaw --len 100 --clip 16 == np.clip(j-i, -16, 16) + 16")
    rc, _, _ = run("bias", "shaw", "--len", 3, "--clip", 0, "-o", out)
    t.check(rc == 0 and not np.load(out).any(), "--clip 0: all zeros")

    # ---- bad input: message naming the value, exit code 2, nothing written ----
    bad = [
        (["alibi", "--heads", 0, "--len", 4], "--heads must be > 0, got 0"),
        (["alibi", "--heads", -2, "--len", 4], "--heads must be > 0, got -2"),
        (["alibi", "--heads", 4, "--len", 0], "--len must be > 0, got 0"),
        (["alibi", "--heads", 4, "--len", -1], "--len must be > 0, got -1"),
        (["alibi", "--len", 4], "--heads is required"),
        (["alibi", "--heads", 4], "--len is required"),
        (["alibi", "--heads", 4, "--len", 4, "--max-bias", 0], "max_bias must be finite and > 0, got 0"),
        (["alibi", "--heads", 4, "--len", 4, "--max-bias", -8], "got -8"),
        (["alibi", "--heads", 4, "--len", 4, "--max-bias", "nan"], "--max-bias must be a finite number, got 'nan'"),
        (["alibi", "--heads", 4, "--len", 4, "--form", "diagonal"], "unknown --form 'diagonal'"),
        (["alibi", "--heads", 4, "--len", 4, "--heads-typo", 3], "unknown option '--heads-typo'"),
        (["alibi", "--heads", 4096, "--len", 4096], "exceeds the limit"),
        (["alibi", "--heads", 2**31, "--len", 4], "--heads must be <= 2147483647"),
        (["alibi", "--heads", 4, "--len", 2**40], "overflows"),
        (["t5", "--len", 0], "--len must be > 0, got 0"),
        (["t5", "--len", 4, "--key-len", 0], "--key-len must be > 0, got 0"),
        (["t5", "--len", 4, "--key-len", -7], "--key-len must be > 0, got -7"),
        (["t5", "--len", 4, "--buckets", 1, "--unidirectional"], "num_buckets must be >= 2, got 1"),
        (["t5", "--len", 4, "--buckets", 2], "num_buckets must be >= 4 when bidirectional, got 2"),
        (["t5", "--len", 4, "--buckets", 33], "num_buckets must be even when bidirectional, got 33"),
        (["t5", "--len", 4, "--max-distance", 0], "max_distance must be > 0, got 0"),
        (["t5", "--len", 4, "--max-distance", -3], "max_distance must be > 0, got -3"),
        (["t5", "--len", 4, "--max-distance", 8], "max_distance must be > max_exact = 8"),
        (["t5", "--len", 4, "--max-distance", 16, "--unidirectional"], "max_distance must be > max_exact = 16"),
        (["t5", "--len", 4, "--buckets", "many"], "--buckets must be a whole number"),
        (["t5", "--key-len", 4], "--len is required"),
        (["deberta", "--len", 4, "--buckets", 1], "position_buckets must be 0 (none) or 2..65536, got 1"),
        (["deberta", "--len", 4, "--max-relative", 0], "max_relative_positions must be in 1..2^30, got 0"),
        (["deberta", "--len", 4, "--buckets", 256, "--max-relative", 100], "must exceed position_buckets / 2 + 1 = 129"),
        (["deberta", "--len", 4, "--output", "p2p"], "unknown --output 'p2p'"),
        (["deberta", "--len", 0], "--len must be > 0, got 0"),
        (["shaw", "--len", 4, "--clip", -1], "--clip must be >= 0, got -1"),
        (["shaw", "--len", 0, "--clip", 2], "--len must be > 0, got 0"),
        (["shaw", "--len", 4], "--clip is required"),
        (["shaw", "--len", 4, "--clip", 2**31], "--clip must be <= 2^30"),
        (["shaw", "--len", 100, "--clip", 2, "--max-bytes", 1000], "exceeds the limit of 1000 bytes"),
        (["shaw", "--len", 2**33, "--clip", 2], "overflows"),
        (["rotary", "--len", 4], "unknown bias kind 'rotary'"),
    ]
    for args, want in bad:
        if os.path.exists(out):
            os.remove(out)
        rc, _, se = run("bias", *args, "-o", out)
        first = se.strip().splitlines()[0] if se.strip() else ""
        t.check(rc == 2 and want in se and not os.path.exists(out), f"bias {' '.join(map(str, args))}: exit {rc}, '{first}'")
    rc, _, se = run("bias", "alibi", "--heads", 2, "--len", 2)
    t.check(rc == 2 and "-o OUT.npy|OUT.csv is required" in se, "alibi without -o or --json: exit 2")
    rc, _, se = run("bias")
    t.check(rc == 2 and "usage" in se, "bias without a kind: exit 2 with usage")
    rc, so, se = run("bias", "alibi", "--heads", 4, "--len", 4, "--json", "-o", "/nonexistent/dir/x.npy")
    t.check(rc == 1 and so == "", "alibi --json with an unwritable output: exit 1, no slopes printed")
    rc, _, se = run("bias", "shaw", "--len", 4, "--clip", 1, "-o", "/nonexistent/dir/x.npy")
    t.check(rc == 1 and "cannot create" in se, f"unwritable output: exit 1 ({se.strip().splitlines()[0]})")
    # an existing output survives a failed run untouched; no temporary files left
    np.save(out, np.arange(3))
    before = open(out, "rb").read()
    run("bias", "t5", "--len", 4, "--buckets", 33, "-o", out)
    t.check(open(out, "rb").read() == before, "failed run leaves an existing output untouched")
    t.check(not [f for f in os.listdir(d) if ".tmp." in f], "no temporary files left in the output folder")
    t.finish()


if __name__ == "__main__":
    main()
